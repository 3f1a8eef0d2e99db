/* Private to the ingest files (ingest.c: compile, run, conditions, field paths;
 * ingest_proc.c: processors; ingest_grok.c: grok and dissect patterns). */
#ifndef SC_API_INGEST_INTERNAL_H
#define SC_API_INGEST_INTERNAL_H

#include <regex.h>

#include "api/ingest.h"

typedef struct sc__proc sc__proc;
typedef struct sc__cond sc__cond;

/* One processor. cfg is its config object (a reference); compiled state per kind. */
struct sc__proc {
    const struct sc__proc_kind *kind;
    json_t *cfg;
    const char *field;        /* cfg "field" or NULL */
    const char *target_field; /* cfg "target_field" or NULL */
    bool ignore_missing, ignore_failure;
    sc__cond *cond;
    sc__proc *on_failure;
    size_t n_on_failure;
    void *state; /* compiled pattern etc., freed by kind->fini */
};

typedef struct sc__proc_kind {
    const char *name;
    /* Reads cfg into p (p->field etc. already set). SC_EINVAL with err. */
    sc_status (*init)(sc__proc *p, sc_ingest_error *err);
    sc_status (*run)(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err);
    void (*fini)(sc__proc *p);
    bool needs_field;
} sc__proc_kind;

/* The structured-text processors (ingest_text.c), foreach (ingest_foreach.c) and user_agent
 * (ingest_ua.c). */
extern const sc__proc_kind sc__ingest_kind_json, sc__ingest_kind_kv, sc__ingest_kind_pipeline;
extern const sc__proc_kind sc__ingest_kind_foreach, sc__ingest_kind_user_agent;
/* One processor (ingest.c): compiles item ({"kind": {...}}) into *p (zeroed by the caller;
 * release with sc__ingest_proc_fini, also after a failure), runs it with its if, on_failure
 * and ignore_failure. */
sc_status sc__ingest_proc_compile(const json_t *item, sc__proc *p, sc_ingest_error *err)
    SC_MUST_USE;
sc_status sc__ingest_proc_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
    SC_MUST_USE;
void sc__ingest_proc_fini(sc__proc *p);
/* Runs a pipeline inside another's run (ingest.c): its processors and on_failure, leaving the
 * _ingest metadata in place. */
sc_status sc__pipeline_run_nested(const sc_pipeline *p, sc_ingest_doc *doc, sc_ingest_error *err);
/* The processor kinds (ingest_proc.c and the two above), looked up by name; NULL when
 * unknown. */
const sc__proc_kind *sc__ingest_kind(const char *name);

/* Field access by dotted path in the document (ctx): "_index", "_id", "_routing" and
 * "_ingest.*" read the metadata; "_source.x" is "x". get: borrowed or NULL. set: creates
 * objects on the way (takes the value's reference, even on failure). remove: false when
 * absent. */
json_t *sc__ingest_get(sc_ingest_doc *doc, const char *path);
bool sc__ingest_set(sc_ingest_doc *doc, const char *path, json_t *value);
bool sc__ingest_remove(sc_ingest_doc *doc, const char *path);

/* Sets err (printf). */
void sc__ingest_fail(sc_ingest_error *err, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* err = "field [f] not present as part of path [f]". */
void sc__ingest_missing(sc_ingest_error *err, const char *field);
/* Renders {{field}} / {{{field}}} references of a template with the document's values (new
 * string reference). */
json_t *sc__ingest_render(sc_ingest_doc *doc, const char *tmpl);
/* A string config value (borrowed) or NULL. */
const char *sc__ingest_str(const sc__proc *p, const char *key);

/* Grok (ingest_grok.c): compiles patterns (with extra definitions, may be NULL) into a regex.
 * SC_EINVAL with err. */
typedef struct sc__grok sc__grok;
sc_status sc__grok_compile(const json_t *patterns, const json_t *definitions, sc__grok **out,
                           sc_ingest_error *err) SC_MUST_USE;
/* Matches text; on success sets the named captures in doc (typed per :int/:float...). false
 * when no pattern matches. */
bool sc__grok_match(const sc__grok *g, const char *text, sc_ingest_doc *doc);
void sc__grok_free(sc__grok *g);

/* Dissect (ingest_grok.c). */
typedef struct sc__dissect sc__dissect;
sc_status sc__dissect_compile(const char *pattern, const char *append_separator, sc__dissect **out,
                              sc_ingest_error *err) SC_MUST_USE;
bool sc__dissect_match(const sc__dissect *d, const char *text, sc_ingest_doc *doc);
void sc__dissect_free(sc__dissect *d);

/* Translates an Oniguruma-style regex fragment (\d, \s, (?:...), lazy quantifiers) into POSIX
 * extended syntax, appending to out (cap bytes); *n_groups counts capturing groups opened.
 * false when it does not fit. */
bool sc__ingest_regex_translate(const char *re, char *out, size_t cap, size_t *used, int *n_groups);
/* Whether compiling a POSIX pattern stays within a bounded size (nested or stacked
 * repetitions make glibc's regcomp exponential). */
bool sc__ingest_regex_cheap(const char *posix_re);

#endif
