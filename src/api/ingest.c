/* Ingest pipelines (see ingest.h): compiling a definition into processors, running them with
 * ignore_failure / on_failure, the simple `if` conditions (ctx.a.b == 'x', !=, null checks,
 * truthiness, && and ||), dotted field paths and {{field}} templates. Processor kinds are in
 * ingest_proc.c, grok and dissect in ingest_grok.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"
#include "base/clock.h"
#include "mapping/date.h"

struct sc_pipeline {
    sc__proc *procs;
    size_t n_procs;
    sc__proc *on_failure;
    size_t n_on_failure;
};

/* ---- errors, paths, templates ---- */

void sc__ingest_fail(sc_ingest_error *err, const char *type, const char *fmt, ...)
{
    err->type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof err->reason, fmt, ap);
    va_end(ap);
}

void sc__ingest_missing(sc_ingest_error *err, const char *field)
{
    sc__ingest_fail(err, "illegal_argument_exception",
                    "field [%.200s] not present as part of path [%.200s]", field, field);
}

const char *sc__ingest_str(const sc__proc *p, const char *key)
{
    return json_string_value(json_object_get(p->cfg, key));
}

static bool is_meta(const char *path)
{
    return !strcmp(path, "_index") || !strcmp(path, "_id") || !strcmp(path, "_routing") ||
           !strncmp(path, "_ingest.", 8);
}

/* The object holding the last segment of path and that segment (into buf). */
static json_t *parent_of(json_t *root, const char *path, bool create, char *last, size_t cap)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = root;
    char *seg = buf;
    for (char *dot = strchr(seg, '.'); dot; dot = strchr(seg, '.')) {
        *dot = '\0';
        json_t *next = json_object_get(cur, seg);
        if (!json_is_object(next)) {
            if (!create || (next && !json_is_null(next)))
                return NULL;
            next = json_object();
            /* Fails (freeing next) on a key that is not UTF-8. */
            if (!next || json_object_set_new(cur, seg, next) != 0)
                return NULL;
        }
        cur = next;
        seg = dot + 1;
    }
    snprintf(last, cap, "%s", seg);
    return json_is_object(cur) ? cur : NULL;
}

static const char *strip_source(const char *path)
{
    return !strncmp(path, "_source.", 8) ? path + 8 : path;
}

json_t *sc__ingest_get(sc_ingest_doc *doc, const char *path)
{
    path = strip_source(path);
    json_t *root = is_meta(path) ? doc->meta : doc->source;
    char last[256];
    json_t *parent = root ? parent_of(root, path, false, last, sizeof last) : NULL;
    return parent ? json_object_get(parent, last) : NULL;
}

bool sc__ingest_set(sc_ingest_doc *doc, const char *path, json_t *value)
{
    path = strip_source(path);
    json_t *root = is_meta(path) ? doc->meta : doc->source;
    char last[256];
    json_t *parent = root && value ? parent_of(root, path, true, last, sizeof last) : NULL;
    if (!parent || !*last) {
        json_decref(value);
        return false;
    }
    return json_object_set_new(parent, last, value) == 0;
}

bool sc__ingest_remove(sc_ingest_doc *doc, const char *path)
{
    path = strip_source(path);
    json_t *root = is_meta(path) ? doc->meta : doc->source;
    char last[256];
    json_t *parent = root ? parent_of(root, path, false, last, sizeof last) : NULL;
    return parent && json_object_del(parent, last) == 0;
}

/* The text of a scalar value for templates and string processors (into buf). */
static const char *scalar_text(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%.17g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false");
    else
        buf[0] = '\0';
    return buf;
}

json_t *sc__ingest_render(sc_ingest_doc *doc, const char *tmpl)
{
    char out[4096];
    size_t o = 0;
    for (const char *s = tmpl; *s && o + 1 < sizeof out;) {
        const char *open = strstr(s, "{{");
        if (!open) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", s);
            break;
        }
        size_t lit = (size_t)(open - s);
        if (lit >= sizeof out - o)
            lit = sizeof out - o - 1;
        memcpy(out + o, s, lit);
        o += lit;
        bool triple = open[2] == '{';
        const char *name = open + (triple ? 3 : 2);
        const char *close = strstr(name, triple ? "}}}" : "}}");
        if (!close) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", open);
            break;
        }
        char path[256];
        size_t nl = (size_t)(close - name);
        snprintf(path, sizeof path, "%.*s", (int)(nl < 255 ? nl : 255), name);
        char *p = path;
        while (*p == ' ')
            p++;
        for (char *e = p + strlen(p); e > p && e[-1] == ' ';)
            *--e = '\0';
        char buf[64];
        const json_t *v = sc__ingest_get(doc, p);
        o += (size_t)snprintf(out + o, sizeof out - o, "%s",
                              v ? scalar_text(v, buf, sizeof buf) : "");
        s = close + (triple ? 3 : 2);
        if (o >= sizeof out)
            o = sizeof out - 1;
    }
    out[o < sizeof out ? o : sizeof out - 1] = '\0';
    return json_string(out);
}

/* ---- conditions ---- */

typedef enum operand_kind {
    OP_FIELD,
    OP_VALUE
} operand_kind;

typedef struct operand {
    operand_kind kind;
    char path[128];
    json_t *value; /* OP_VALUE */
} operand;

typedef struct atom {
    bool negate;
    operand left, right;
    int cmp;       /* 0 truthiness of left, 1 ==, 2 != */
    bool and_next; /* joined to the next atom by && (else ||) */
} atom;

struct sc__cond {
    atom *atoms;
    size_t n;
};

static void cond_free(sc__cond *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        json_decref(c->atoms[i].left.value);
        json_decref(c->atoms[i].right.value);
    }
    free(c->atoms);
    free(c);
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return s;
}

/* Parses one operand; returns the position after it or NULL. */
static const char *parse_operand(const char *s, operand *o)
{
    s = skip_ws(s);
    if (!strncmp(s, "ctx", 3) && (s[3] == '.' || s[3] == '?')) {
        s += 3;
        size_t n = 0;
        while (*s == '.' || *s == '?' || *s == '_' || *s == '@' || (*s >= 'a' && *s <= 'z') ||
               (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) {
            if (*s != '?' && !(n == 0 && *s == '.') && n + 1 < sizeof o->path)
                o->path[n++] = *s;
            s++;
        }
        o->path[n] = '\0';
        o->kind = OP_FIELD;
        return n ? s : NULL;
    }
    o->kind = OP_VALUE;
    if (*s == '\'' || *s == '"') {
        char q = *s++;
        const char *e = strchr(s, q);
        if (!e)
            return NULL;
        o->value = json_stringn(s, (size_t)(e - s));
        return e + 1;
    }
    if (!strncmp(s, "null", 4)) {
        o->value = json_null();
        return s + 4;
    }
    if (!strncmp(s, "true", 4) || !strncmp(s, "false", 5)) {
        o->value = json_boolean(*s == 't');
        return s + (*s == 't' ? 4 : 5);
    }
    char *end;
    double d = strtod(s, &end);
    if (end == s)
        return NULL;
    bool integral = d >= -9.2e18 && d <= 9.2e18 && d == (double)(long long)d;
    o->value = integral ? json_integer((long long)d) : json_real(d);
    return end;
}

static sc_status cond_compile(const char *src, sc__cond **out, sc_ingest_error *err)
{
    sc__cond *c = calloc(1, sizeof *c);
    size_t cap = 0;
    const char *s = src;
    bool ok = c != NULL;
    while (ok) {
        if (c->n == cap) {
            cap = cap ? cap * 2 : 4;
            atom *a = realloc(c->atoms, cap * sizeof *a);
            if (!a) {
                ok = false;
                break;
            }
            c->atoms = a;
        }
        atom *a = &c->atoms[c->n];
        memset(a, 0, sizeof *a);
        s = skip_ws(s);
        if (*s == '!' && s[1] != '=') {
            a->negate = true;
            s++;
        }
        s = parse_operand(s, &a->left);
        c->n++;
        if (!s) {
            ok = false;
            break;
        }
        s = skip_ws(s);
        if (!strncmp(s, "==", 2) || !strncmp(s, "!=", 2)) {
            a->cmp = s[0] == '=' ? 1 : 2;
            s = parse_operand(s + 2, &a->right);
            if (!s) {
                ok = false;
                break;
            }
            s = skip_ws(s);
        }
        if (!*s || (*s == ';' && !*skip_ws(s + 1)))
            break;
        if (!strncmp(s, "&&", 2) || !strncmp(s, "||", 2)) {
            a->and_next = s[0] == '&';
            s += 2;
            continue;
        }
        ok = false;
    }
    if (!ok) {
        cond_free(c);
        sc__ingest_fail(err, "illegal_argument_exception",
                        "unsupported if condition [%.200s]: scry runs conditions of the form "
                        "ctx.field == 'value' (also !=, null, numbers, booleans, !, && and ||)",
                        src);
        return SC_EINVAL;
    }
    *out = c;
    return SC_OK;
}

static const json_t *operand_value(const operand *o, sc_ingest_doc *doc)
{
    return o->kind == OP_FIELD ? sc__ingest_get(doc, o->path) : o->value;
}

static bool values_equal(const json_t *a, const json_t *b)
{
    if (!a || json_is_null(a))
        return !b || json_is_null(b);
    if (!b)
        return false;
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

static bool atom_true(const atom *a, sc_ingest_doc *doc)
{
    const json_t *l = operand_value(&a->left, doc);
    bool r;
    if (a->cmp == 0)
        r = l && !json_is_null(l) && !json_is_false(l);
    else
        r = values_equal(l, operand_value(&a->right, doc)) == (a->cmp == 1);
    return a->negate ? !r : r;
}

/* || of &&-groups, left to right. */
static bool cond_true(const sc__cond *c, sc_ingest_doc *doc)
{
    bool any = false, group = true;
    for (size_t i = 0; i < c->n; i++) {
        group = group && atom_true(&c->atoms[i], doc);
        if (!c->atoms[i].and_next || i + 1 == c->n) {
            any = any || group;
            group = true;
        }
    }
    return any;
}

/* ---- compile ---- */

static sc_status compile_list(const json_t *arr, sc__proc **out, size_t *n, sc_ingest_error *err);

void sc__ingest_proc_fini(sc__proc *p)
{
    if (p->kind && p->kind->fini)
        p->kind->fini(p);
    cond_free(p->cond);
    for (size_t i = 0; i < p->n_on_failure; i++)
        sc__ingest_proc_fini(&p->on_failure[i]);
    free(p->on_failure);
    json_decref(p->cfg);
}

sc_status sc__ingest_proc_compile(const json_t *item, sc__proc *p, sc_ingest_error *err)
{
    const char *name;
    json_t *cfg;
    if (!json_is_object(item) || json_object_size(item) != 1) {
        sc__ingest_fail(err, "parse_exception", "a processor must be an object with one key");
        return SC_EINVAL;
    }
    json_object_foreach ((json_t *)item, name, cfg)
        break;
    snprintf(err->processor, sizeof err->processor, "%s", name);
    p->kind = sc__ingest_kind(name);
    if (!p->kind) {
        sc__ingest_fail(err, "parse_exception", "No processor type exists with name [%.64s]", name);
        return SC_EINVAL;
    }
    if (!json_is_object(cfg)) {
        sc__ingest_fail(err, "parse_exception", "[%s] processor config must be an object", name);
        return SC_EINVAL;
    }
    p->cfg = json_incref(cfg);
    p->field = sc__ingest_str(p, "field");
    p->target_field = sc__ingest_str(p, "target_field");
    p->ignore_missing = json_is_true(json_object_get(cfg, "ignore_missing"));
    p->ignore_failure = json_is_true(json_object_get(cfg, "ignore_failure"));
    if (p->kind->needs_field && !p->field) {
        sc__ingest_fail(err, "parse_exception", "[field] required property is missing");
        return SC_EINVAL;
    }
    const json_t *cond = json_object_get(cfg, "if");
    if (cond) {
        const char *src = json_is_string(cond) ? json_string_value(cond)
                                               : json_string_value(json_object_get(cond, "source"));
        if (!src) {
            sc__ingest_fail(err, "parse_exception", "[if] must be a string");
            return SC_EINVAL;
        }
        sc_status st = cond_compile(src, &p->cond, err);
        if (st != SC_OK)
            return st;
    }
    const json_t *of = json_object_get(cfg, "on_failure");
    if (of) {
        sc_status st = compile_list(of, &p->on_failure, &p->n_on_failure, err);
        if (st != SC_OK)
            return st;
    }
    return p->kind->init ? p->kind->init(p, err) : SC_OK;
}

static sc_status compile_list(const json_t *arr, sc__proc **out, size_t *n, sc_ingest_error *err)
{
    *out = NULL;
    *n = 0;
    if (!json_is_array(arr)) {
        sc__ingest_fail(err, "parse_exception", "[processors] must be an array");
        return SC_EINVAL;
    }
    size_t len = json_array_size(arr);
    if (!len)
        return SC_OK;
    sc__proc *ps = calloc(len, sizeof *ps);
    if (!ps)
        return SC_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        sc_status st = sc__ingest_proc_compile(json_array_get(arr, i), &ps[i], err);
        if (st != SC_OK) {
            for (size_t k = 0; k <= i; k++)
                sc__ingest_proc_fini(&ps[k]);
            free(ps);
            return st;
        }
    }
    *out = ps;
    *n = len;
    return SC_OK;
}

sc_status sc_pipeline_compile(const json_t *def, sc_pipeline **out, sc_ingest_error *err)
{
    *out = NULL;
    err->type = NULL;
    err->reason[0] = err->processor[0] = '\0';
    if (!json_is_object(def)) {
        sc__ingest_fail(err, "parse_exception", "a pipeline must be an object");
        return SC_EINVAL;
    }
    const json_t *procs = json_object_get(def, "processors");
    if (!procs) {
        sc__ingest_fail(err, "parse_exception", "[processors] required property is missing");
        return SC_EINVAL;
    }
    sc_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return SC_ENOMEM;
    sc_status st = compile_list(procs, &p->procs, &p->n_procs, err);
    const json_t *of = json_object_get(def, "on_failure");
    if (st == SC_OK && of)
        st = compile_list(of, &p->on_failure, &p->n_on_failure, err);
    if (st != SC_OK) {
        sc_pipeline_free(p);
        return st;
    }
    err->processor[0] = '\0';
    *out = p;
    return SC_OK;
}

void sc_pipeline_free(sc_pipeline *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_procs; i++)
        sc__ingest_proc_fini(&p->procs[i]);
    for (size_t i = 0; i < p->n_on_failure; i++)
        sc__ingest_proc_fini(&p->on_failure[i]);
    free(p->procs);
    free(p->on_failure);
    free(p);
}

/* ---- run ---- */

static sc_status run_list(const sc__proc *ps, size_t n, sc_ingest_doc *doc, sc_ingest_error *err);

/* Records the failure in _ingest.on_failure_* for the handlers. */
static void note_failure(sc_ingest_doc *doc, const sc__proc *p, const sc_ingest_error *err)
{
    if (!doc->meta)
        return;
    (void)sc__ingest_set(doc, "_ingest.on_failure_message", json_string(err->reason));
    (void)sc__ingest_set(doc, "_ingest.on_failure_processor_type", json_string(p->kind->name));
}

sc_status sc__ingest_proc_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    if (p->cond && !cond_true(p->cond, doc))
        return SC_OK;
    err->type = NULL; /* an earlier, ignored failure must not speak for this one */
    err->reason[0] = '\0';
    sc_status st = p->kind->run(p, doc, err);
    if (st == SC_OK || doc->dropped)
        return st;
    if (!err->type || !err->reason[0]) /* e.g. a result that cannot be written at its path */
        sc__ingest_fail(err, "illegal_argument_exception",
                        "[%s] processor could not write its result to [%.200s]", p->kind->name,
                        p->target_field ? p->target_field : p->field ? p->field : "");
    snprintf(err->processor, sizeof err->processor, "%s", p->kind->name);
    if (p->ignore_failure)
        return SC_OK;
    if (p->n_on_failure) {
        note_failure(doc, p, err);
        return run_list(p->on_failure, p->n_on_failure, doc, err);
    }
    return st;
}

static sc_status run_list(const sc__proc *ps, size_t n, sc_ingest_doc *doc, sc_ingest_error *err)
{
    for (size_t i = 0; i < n && !doc->dropped; i++) {
        sc_status st = sc__ingest_proc_run(&ps[i], doc, err);
        if (st != SC_OK)
            return st;
    }
    return SC_OK;
}

sc_status sc__pipeline_run_nested(const sc_pipeline *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    sc_status st = run_list(p->procs, p->n_procs, doc, err);
    if (st != SC_OK && p->n_on_failure && !doc->dropped)
        st = run_list(p->on_failure, p->n_on_failure, doc, err);
    return st;
}

sc_status sc_pipeline_run(const sc_pipeline *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    err->type = NULL;
    err->reason[0] = err->processor[0] = '\0';
    if (doc->meta) {
        /* _ingest.timestamp: when the document went through the pipeline. */
        char now[64];
        size_t len = sc_date_format_iso(sc_clock_wall_ms(), now);
        now[len] = '\0';
        (void)sc__ingest_set(doc, "_ingest.timestamp", json_string(now));
    }
    sc_status st = run_list(p->procs, p->n_procs, doc, err);
    if (st != SC_OK && p->n_on_failure && !doc->dropped) {
        if (doc->meta) {
            (void)sc__ingest_set(doc, "_ingest.on_failure_message", json_string(err->reason));
            (void)sc__ingest_set(doc, "_ingest.on_failure_processor_type",
                                 json_string(err->processor));
        }
        st = run_list(p->on_failure, p->n_on_failure, doc, err);
    }
    if (doc->meta)
        json_object_del(doc->meta, "_ingest");
    return st;
}
