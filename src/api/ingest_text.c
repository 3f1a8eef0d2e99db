/* The ingest processors that parse structured text inside a field (see ingest.h): json (a JSON
 * document in a string) and kv (key=value pairs); and pipeline, which runs another one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"

/* The field's string, or NULL with err set unless ignore_missing (then *skip). */
static const char *field_text(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err,
                              bool *skip)
{
    *skip = false;
    const json_t *v = sc__ingest_get(doc, p->field);
    if (!v || json_is_null(v)) {
        if (p->ignore_missing)
            *skip = true;
        else
            sc__ingest_missing(err, p->field);
        return NULL;
    }
    if (!json_is_string(v)) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "field [%.200s] of type [%s] cannot be cast to [java.lang.String]",
                        p->field, json_is_number(v) ? "java.lang.Number" : "java.lang.Object");
        return NULL;
    }
    return json_string_value(v);
}

static sc_status json_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    const char *text = field_text(p, doc, err, &skip);
    if (!text)
        return skip ? SC_OK : SC_EINVAL;
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!v) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "cannot parse the JSON of [%.100s]: %.200s", p->field, jerr.text);
        return SC_EINVAL;
    }
    if (json_is_true(json_object_get(p->cfg, "add_to_root"))) {
        if (!json_is_object(v)) {
            json_decref(v);
            sc__ingest_fail(err, "illegal_argument_exception",
                            "cannot add non-map fields to root of document");
            return SC_EINVAL;
        }
        const char *k;
        json_t *x;
        json_object_foreach (v, k, x)
            json_object_set(doc->source, k, x);
        json_decref(v);
        return SC_OK;
    }
    return sc__ingest_set(doc, p->target_field ? p->target_field : p->field, v) ? SC_OK : SC_EINVAL;
}

static sc_status kv_init(sc__proc *p, sc_ingest_error *err)
{
    if (!sc__ingest_str(p, "field_split") || !sc__ingest_str(p, "value_split")) {
        sc__ingest_fail(err, "parse_exception", "[%s] required property is missing",
                        sc__ingest_str(p, "field_split") ? "value_split" : "field_split");
        return SC_EINVAL;
    }
    return SC_OK;
}

static bool listed(const json_t *list, const char *key)
{
    size_t i;
    json_t *x;
    json_array_foreach (list, i, x)
        if (json_is_string(x) && !strcmp(json_string_value(x), key))
            return true;
    return false;
}

/* Copies s[0..n) without the characters of `trim` at both ends into out. */
static void trimmed(const char *s, size_t n, const char *trim, char *out, size_t cap)
{
    while (n && trim && strchr(trim, *s))
        s++, n--;
    while (n && trim && strchr(trim, s[n - 1]))
        n--;
    snprintf(out, cap, "%.*s", (int)n, s);
}

/* Adds one key=value pair (the text of pair[0..n)) to the document. */
static void kv_pair(const sc__proc *p, sc_ingest_doc *doc, const char *pair, size_t n)
{
    const char *vs = sc__ingest_str(p, "value_split");
    const char *eq = NULL;
    for (size_t i = 0; i + strlen(vs) <= n && !eq; i++)
        if (!strncmp(pair + i, vs, strlen(vs)))
            eq = pair + i;
    if (!eq)
        return;
    char key[256], val[4096], path[512];
    trimmed(pair, (size_t)(eq - pair), sc__ingest_str(p, "trim_key"), key, sizeof key);
    const char *v = eq + strlen(vs);
    trimmed(v, n - (size_t)(v - pair), sc__ingest_str(p, "trim_value"), val, sizeof val);
    const json_t *inc = json_object_get(p->cfg, "include_keys");
    if (!key[0] || (inc && !listed(inc, key)) ||
        listed(json_object_get(p->cfg, "exclude_keys"), key))
        return;
    const char *prefix = sc__ingest_str(p, "prefix");
    snprintf(path, sizeof path, "%s%s%s%s", p->target_field ? p->target_field : "",
             p->target_field ? "." : "", prefix ? prefix : "", key);
    json_t *cur = sc__ingest_get(doc, path);
    if (cur && json_is_array(cur)) {
        json_array_append_new(cur, json_string(val));
    } else if (cur) {
        (void)sc__ingest_set(doc, path, json_pack("[O,s]", cur, val));
    } else {
        (void)sc__ingest_set(doc, path, json_string(val));
    }
}

static sc_status kv_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    const char *text = field_text(p, doc, err, &skip);
    if (!text)
        return skip ? SC_OK : SC_EINVAL;
    char *copy = strdup(text);
    if (!copy)
        return SC_ENOMEM;
    const char *fs = sc__ingest_str(p, "field_split");
    size_t fl = strlen(fs);
    /* field_split is a literal separator here (Elasticsearch takes a regex; the common
     * separators " ", "&", "," and "|" are the same either way). */
    for (char *s = copy; *s;) {
        char *end = fl ? strstr(s, fs) : NULL;
        size_t n = end ? (size_t)(end - s) : strlen(s);
        kv_pair(p, doc, s, n);
        s += n + (end ? fl : 0);
    }
    free(copy);
    return SC_OK;
}

static sc_status pipeline_init(sc__proc *p, sc_ingest_error *err)
{
    if (sc__ingest_str(p, "name"))
        return SC_OK;
    sc__ingest_fail(err, "parse_exception", "[name] required property is missing");
    return SC_EINVAL;
}

static sc_status pipeline_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const char *name = sc__ingest_str(p, "name");
    if (doc->depth >= 16) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "Cycle detected or pipelines nested too deep at [%.200s]", name);
        return SC_EINVAL;
    }
    const sc_pipeline *next = doc->lookup ? doc->lookup(doc->lookup_ctx, name, err) : NULL;
    if (!next) {
        if (!doc->lookup || !err->type)
            sc__ingest_fail(err, "illegal_argument_exception",
                            "Pipeline processor configured for non-existent pipeline [%.200s]",
                            name);
        return SC_EINVAL;
    }
    doc->depth++;
    sc_status st = sc__pipeline_run_nested(next, doc, err);
    doc->depth--;
    return st;
}

const sc__proc_kind sc__ingest_kind_pipeline = {"pipeline", pipeline_init, pipeline_run, NULL,
                                                false};
const sc__proc_kind sc__ingest_kind_json = {"json", NULL, json_run, NULL, true};
const sc__proc_kind sc__ingest_kind_kv = {"kv", kv_init, kv_run, NULL, true};
