/* Ingest pipelines: a pipeline definition ({"description", "processors": [...], "on_failure":
 * [...]}) compiled once into processors (regular expressions of grok, gsub and split built
 * at compile time), then run over documents (a JSON object changed in place). Processors: set,
 * remove, rename, lowercase, uppercase, trim, split, join, convert, date, append, gsub,
 * dissect, grok, json, kv, pipeline, drop, fail, foreach, user_agent; each with if (simple ctx
 * comparisons), ignore_failure, on_failure and, where Elasticsearch has it, ignore_missing. No
 * node: the fuzz target drives this file alone. Thread-safe: a compiled pipeline is immutable
 * and may run concurrently. */
#ifndef SC_API_INGEST_H
#define SC_API_INGEST_H

#include <jansson.h>
#include <stdbool.h>

#include "base/status.h"

typedef struct sc_pipeline sc_pipeline;

/* Why compiling or running failed: an Elasticsearch error type and reason, and the type of
 * the processor concerned ("" when none). */
typedef struct sc_ingest_error {
    const char *type;
    char reason[512];
    char processor[32];
} sc_ingest_error;

/* Compiles a pipeline definition. SC_EINVAL (err: parse_exception, or
 * illegal_argument_exception for an unsupported if condition) on a bad definition; SC_ENOMEM.
 * *out owned: sc_pipeline_free. Patterns are bounded (SC_INGEST_MAX_PATTERN bytes expanded). */
sc_status sc_pipeline_compile(const json_t *def, sc_pipeline **out, sc_ingest_error *err)
    SC_MUST_USE;
void sc_pipeline_free(sc_pipeline *p);

#define SC_INGEST_MAX_PATTERN 16384

/* The document a pipeline runs over: its _source (changed in place) and metadata
 * {"_index", "_id", "_routing"} (strings; changed in place too; may be NULL). */
typedef struct sc_ingest_doc {
    json_t *source;
    json_t *meta;
    bool dropped; /* a drop processor ran: the document is not indexed */
    /* The `pipeline` processor's lookup of another pipeline by name (NULL: that processor
     * fails); returns a compiled pipeline owned by the caller or NULL with err set. */
    const sc_pipeline *(*lookup)(void *ctx, const char *name, sc_ingest_error *err);
    void *lookup_ctx;
    int depth; /* pipelines calling pipelines: refused past 16 levels */
} sc_ingest_doc;

/* Runs the pipeline. SC_EINVAL when a processor failed and no on_failure handled it (err:
 * its type, reason and processor); SC_OK otherwise (doc->dropped may be set). */
sc_status sc_pipeline_run(const sc_pipeline *p, sc_ingest_doc *doc, sc_ingest_error *err)
    SC_MUST_USE;

#endif
