/* The foreach ingest processor: runs one processor on every element of an array field (or
 * every value of an object field), the element being `_ingest._value` (and, for objects, its
 * key `_ingest._key`) while it runs; the element is then written back (a changed key renames
 * the member, as Elasticsearch 8 does). Nested foreach processors keep their own element. */
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"

static sc_status foreach_init(sc__proc *p, sc_ingest_error *err)
{
    const json_t *inner = json_object_get(p->cfg, "processor");
    if (!inner) {
        sc__ingest_fail(err, "parse_exception", "[processor] required property is missing");
        return SC_EINVAL;
    }
    sc__proc *in = calloc(1, sizeof *in);
    if (!in)
        return SC_ENOMEM;
    p->state = in;
    return sc__ingest_proc_compile(inner, in, err);
}

static void foreach_fini(sc__proc *p)
{
    if (!p->state)
        return;
    sc__ingest_proc_fini(p->state);
    free(p->state);
    p->state = NULL;
}

/* Runs the inner processor with _ingest._value = *v (and _ingest._key = key when set);
 * *v then holds the value it left (new reference; the old one released), *new_key the key. */
static sc_status run_one(const sc__proc *p, sc_ingest_doc *doc, json_t **v, const char *key,
                         json_t **new_key, sc_ingest_error *err)
{
    if (!sc__ingest_set(doc, "_ingest._value", *v) ||
        (key && !sc__ingest_set(doc, "_ingest._key", json_string(key)))) {
        *v = NULL;
        return SC_ENOMEM;
    }
    sc_status st = sc__ingest_proc_run(p->state, doc, err);
    json_t *out = sc__ingest_get(doc, "_ingest._value");
    *v = out ? json_incref(out) : json_null();
    if (key) {
        json_t *k = sc__ingest_get(doc, "_ingest._key");
        *new_key = json_is_string(k) ? json_incref(k) : json_string(key);
    }
    return st;
}

static sc_status over_array(const sc__proc *p, sc_ingest_doc *doc, json_t *arr,
                            sc_ingest_error *err)
{
    sc_status st = SC_OK;
    for (size_t i = 0; i < json_array_size(arr) && st == SC_OK && !doc->dropped; i++) {
        json_t *v = json_incref(json_array_get(arr, i));
        st = run_one(p, doc, &v, NULL, NULL, err);
        if (v)
            json_array_set_new(arr, i, v);
    }
    return st;
}

static sc_status over_object(const sc__proc *p, sc_ingest_doc *doc, json_t *obj,
                             sc_ingest_error *err)
{
    json_t *out = json_object();
    if (!out)
        return SC_ENOMEM;
    sc_status st = SC_OK;
    const char *key;
    json_t *val;
    json_object_foreach (obj, key, val) {
        json_t *v = json_incref(val), *nk = NULL;
        st = run_one(p, doc, &v, key, &nk, err);
        if (v && nk)
            json_object_set(out, json_string_value(nk), v);
        json_decref(v);
        json_decref(nk);
        if (st != SC_OK || doc->dropped)
            break;
    }
    if (st == SC_OK) {
        json_object_clear(obj);
        json_object_update(obj, out);
    }
    json_decref(out);
    return st;
}

static sc_status foreach_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    json_t *target = sc__ingest_get(doc, p->field);
    if (!target || json_is_null(target)) {
        if (p->ignore_missing)
            return SC_OK;
        sc__ingest_missing(err, p->field);
        return SC_EINVAL;
    }
    if (!json_is_array(target) && !json_is_object(target)) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "field [%.200s] of type [%s] cannot be cast to [java.util.List]", p->field,
                        json_is_string(target) ? "java.lang.String" : "java.lang.Object");
        return SC_EINVAL;
    }
    /* The element lives in the metadata: documents without one get it for the run. */
    json_t *own_meta = NULL;
    if (!doc->meta)
        doc->meta = own_meta = json_object();
    json_incref(target); /* the inner processor may replace the field itself */
    json_t *prev_v = sc__ingest_get(doc, "_ingest._value");
    json_t *prev_k = sc__ingest_get(doc, "_ingest._key");
    json_incref(prev_v);
    json_incref(prev_k);
    sc_status st = doc->meta ? (json_is_array(target) ? over_array(p, doc, target, err)
                                                      : over_object(p, doc, target, err))
                             : SC_ENOMEM;
    (void)sc__ingest_remove(doc, "_ingest._value");
    (void)sc__ingest_remove(doc, "_ingest._key");
    if (prev_v)
        (void)sc__ingest_set(doc, "_ingest._value", prev_v);
    if (prev_k)
        (void)sc__ingest_set(doc, "_ingest._key", prev_k);
    json_decref(target);
    if (own_meta) {
        doc->meta = NULL;
        json_decref(own_meta);
    }
    return st;
}

const sc__proc_kind sc__ingest_kind_foreach = {"foreach", foreach_init, foreach_run, foreach_fini,
                                               true};
