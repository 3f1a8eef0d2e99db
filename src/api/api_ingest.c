/* Ingest endpoints (PUT/GET/DELETE /_ingest/pipeline/{id}, POST /_ingest/pipeline[/{id}]/
 * _simulate) and the hook that runs pipelines over documents written by index, create and
 * bulk: the request's `pipeline` (or the action line's), else the index's
 * index.default_pipeline, then its index.final_pipeline. Pipelines are stored in the node's
 * metadata store and compiled once per request that uses them (ingest.c). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/docs.h"
#include "api/handlers.h"
#include "api/ingest.h"
#include "api/internal.h"
#include "cluster/meta_store.h"

void sc_api_pipeline_put(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    sc_pipeline *p;
    sc_ingest_error err;
    sc_status st = sc_pipeline_compile(body, &p, &err);
    if (st == SC_OK) {
        sc_pipeline_free(p);
        st = sc_meta_put(req->node, SC_META_PIPELINE, req->extra, body);
        if (st != SC_OK)
            sc_rest_error(req, resp, 500, "exception", "cannot store the pipeline", NULL, 0);
        else
            sc_rest_ack(req, resp);
    } else if (st == SC_ENOMEM) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
    } else {
        sc_rest_kv kv[] = {{"processor_type", err.processor}};
        sc_rest_error(req, resp, 400, err.type ? err.type : "parse_exception", err.reason, kv,
                      err.processor[0] ? 1 : 0);
    }
    json_decref(body);
}

void sc_api_pipeline_get(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *all = sc_meta_list(req->node, SC_META_PIPELINE);
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach (all, k, v) {
        bool hit = !req->extra || !strcmp(req->extra, "*");
        if (!hit) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", req->extra);
            char *save = NULL;
            for (char *t = strtok_r(buf, ",", &save); t && !hit; t = strtok_r(NULL, ",", &save))
                hit = fnmatch(t, k, 0) == 0;
        }
        if (hit)
            json_object_set(out, k, v);
    }
    json_decref(all);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, req->extra && !json_object_size(out) ? 404 : 200, &w);
    sc__api_json_write(&w, out);
    sc_rest_json_end(req, resp, &w);
    json_decref(out);
}

void sc_api_pipeline_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_status st = sc_meta_put(req->node, SC_META_PIPELINE, req->extra, NULL);
    if (st == SC_ENOTFOUND)
        sc_rest_errorf(req, resp, 404, "resource_not_found_exception", "pipeline [%s] is missing",
                       req->extra);
    else if (st != SC_OK)
        sc_rest_error(req, resp, 500, "exception", "cannot store the change", NULL, 0);
    else
        sc_rest_ack(req, resp);
}

static void write_error(sc_jsonw *w, const sc_ingest_error *err)
{
    sc_jsonw_key(w, "error");
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "root_cause");
    sc_jsonw_arr_begin(w);
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "type", err->type ? err->type : "exception");
    sc_jsonw_kv_str(w, "reason", err->reason);
    sc_jsonw_obj_end(w);
    sc_jsonw_arr_end(w);
    sc_jsonw_kv_str(w, "type", err->type ? err->type : "exception");
    sc_jsonw_kv_str(w, "reason", err->reason);
    if (err->processor[0]) {
        sc_jsonw_key(w, "header");
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "processor_type", err->processor);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_obj_end(w);
}

typedef struct lookup_ctx {
    sc_rest_req *req;
    sc__api_ingest_cache *cache;
} lookup_ctx;
static const sc_pipeline *lookup(void *vctx, const char *name, sc_ingest_error *ierr);

/* Runs p over every {"_index", "_id", "_routing", "_source"} of docs into the answer. */
static void simulate_docs(sc_rest_req *req, sc_rest_resp *resp, const sc_pipeline *p,
                          const json_t *docs)
{
    sc__api_ingest_cache cache = {0};
    lookup_ctx lctx = {.req = req, .cache = &cache};
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "docs");
    sc_jsonw_arr_begin(&w);
    size_t i;
    json_t *d;
    json_array_foreach (docs, i, d) {
        json_t *src = json_object_get(d, "_source");
        sc_ingest_doc doc = {.source = json_is_object(src) ? json_deep_copy(src) : json_object(),
                             .meta = json_pack("{s:s,s:s}", "_index",
                                               json_string_value(json_object_get(d, "_index"))
                                                   ? json_string_value(json_object_get(d, "_index"))
                                                   : "_index",
                                               "_id",
                                               json_string_value(json_object_get(d, "_id"))
                                                   ? json_string_value(json_object_get(d, "_id"))
                                                   : "_id")};
        doc.lookup = lookup;
        doc.lookup_ctx = &lctx;
        const json_t *routing = json_object_get(d, "_routing");
        if (json_is_string(routing))
            json_object_set(doc.meta, "_routing", (json_t *)routing);
        sc_ingest_error err;
        sc_status st = sc_pipeline_run(p, &doc, &err);
        sc_jsonw_obj_begin(&w);
        if (st != SC_OK) {
            write_error(&w, &err);
        } else if (doc.dropped) {
            sc_jsonw_key(&w, "doc");
            sc_jsonw_null(&w);
        } else {
            sc_jsonw_key(&w, "doc");
            sc_jsonw_obj_begin(&w);
            const char *k;
            json_t *v;
            json_object_foreach (doc.meta, k, v) {
                sc_jsonw_key(&w, k);
                sc__api_json_write(&w, v);
            }
            sc_jsonw_key(&w, "_source");
            sc__api_json_write(&w, doc.source);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_obj_end(&w);
        json_decref(doc.source);
        json_decref(doc.meta);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc__api_ingest_cache_fini(&cache);
}

void sc_api_pipeline_simulate(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    json_t *def = req->extra ? sc_meta_get(req->node, SC_META_PIPELINE, req->extra)
                             : json_incref(json_object_get(body, "pipeline"));
    const json_t *docs = json_object_get(body, "docs");
    if (!def || !json_is_array(docs)) {
        if (!def && req->extra)
            sc_rest_errorf(req, resp, 404, "resource_not_found_exception",
                           "pipeline [%s] is missing", req->extra);
        else
            sc_rest_error(req, resp, 400, "parse_exception",
                          !def ? "[pipeline] required property is missing"
                               : "[docs] required property is missing",
                          NULL, 0);
        json_decref(def);
        json_decref(body);
        return;
    }
    sc_pipeline *p;
    sc_ingest_error err;
    sc_status st = sc_pipeline_compile(def, &p, &err);
    json_decref(def);
    if (st != SC_OK) {
        sc_rest_error(req, resp, 400, err.type ? err.type : "parse_exception", err.reason, NULL, 0);
    } else {
        simulate_docs(req, resp, p, docs);
        sc_pipeline_free(p);
    }
    json_decref(body);
}

/* ---- the write hook ---- */

void sc__api_ingest_cache_fini(sc__api_ingest_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        sc_pipeline_free(c->compiled[i]);
        free(c->names[i]);
    }
    free(c->compiled);
    free(c->names);
    memset(c, 0, sizeof *c);
}

/* The compiled pipeline `name` (cached for the request); NULL with err when it does not
 * exist or does not compile. */
static const sc_pipeline *pipeline_for(sc_rest_req *req, sc__api_ingest_cache *c, const char *name,
                                       sc_cluster_error *err)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name))
            return c->compiled[i];
    json_t *def = sc_meta_get(req->node, SC_META_PIPELINE, name);
    if (!def) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "pipeline with id [%s] does not exist", name);
        return NULL;
    }
    sc_pipeline *p = NULL;
    sc_ingest_error ierr;
    sc_status st = sc_pipeline_compile(def, &p, &ierr);
    json_decref(def);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 400, ierr.type ? ierr.type : "parse_exception", "%s",
                             ierr.reason);
        return NULL;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        sc_pipeline **pc = realloc(c->compiled, cap * sizeof *pc);
        if (pc)
            c->compiled = pc;
        char **pn = pc ? realloc(c->names, cap * sizeof *pn) : NULL;
        if (pn)
            c->names = pn;
        if (!pc || !pn) {
            sc_pipeline_free(p);
            sc_cluster_error_set(err, 500, "exception", "out of memory");
            return NULL;
        }
        c->cap = cap;
    }
    c->compiled[c->n] = p;
    c->names[c->n] = strdup(name);
    if (!c->names[c->n]) {
        sc_pipeline_free(p);
        sc_cluster_error_set(err, 500, "exception", "out of memory");
        return NULL;
    }
    return c->compiled[c->n++];
}

static const char *index_setting(const sc_index *ix, const char *key)
{
    return json_string_value(json_object_get(json_object_get(ix->settings_json, "index"), key));
}

/* The `pipeline` processor's lookup: the request's cache of compiled pipelines. */
static const sc_pipeline *lookup(void *vctx, const char *name, sc_ingest_error *ierr)
{
    lookup_ctx *l = vctx;
    sc_cluster_error err;
    const sc_pipeline *p = pipeline_for(l->req, l->cache, name, &err);
    if (!p) {
        ierr->type = "illegal_argument_exception";
        snprintf(ierr->reason, sizeof ierr->reason, "%s", err.reason);
    }
    return p;
}

/* Runs one pipeline over doc; false with err on failure. */
static bool run_one(sc_rest_req *req, sc__api_ingest_cache *c, const char *name, sc_ingest_doc *doc,
                    sc_cluster_error *err)
{
    const sc_pipeline *p = pipeline_for(req, c, name, err);
    if (!p)
        return false;
    sc_ingest_error ierr;
    if (sc_pipeline_run(p, doc, &ierr) == SC_OK)
        return true;
    sc_cluster_error_set(err, 400, ierr.type ? ierr.type : "illegal_argument_exception", "%s",
                         ierr.reason);
    return false;
}

sc__api_ingest_outcome sc__api_ingest(sc_rest_req *req, sc__api_ingest_cache *c, sc_index *ix,
                                      const char *pipeline, sc_slice id, sc_slice *source,
                                      sc_cluster_error *err)
{
    const char *first = pipeline ? pipeline : index_setting(ix, "default_pipeline");
    if (first && !strcmp(first, "_none"))
        first = NULL;
    const char *final = index_setting(ix, "final_pipeline");
    if (final && !strcmp(final, "_none"))
        final = NULL;
    if (!first && !final)
        return SC_API_INGEST_KEEP;
    json_error_t jerr;
    json_t *src = sc__api_json_loadb(*source, &jerr);
    if (!json_is_object(src)) {
        json_decref(src);
        return SC_API_INGEST_KEEP; /* the write reports the bad document */
    }
    lookup_ctx lctx = {.req = req, .cache = c};
    sc_ingest_doc doc = {.source = src,
                         .meta = json_pack("{s:s,s:s%}", "_index", ix->name, "_id",
                                           id.ptr ? (const char *)id.ptr : "", id.len),
                         .lookup = lookup,
                         .lookup_ctx = &lctx};
    bool ok = (!first || run_one(req, c, first, &doc, err)) &&
              (doc.dropped || !final || run_one(req, c, final, &doc, err));
    sc__api_ingest_outcome out = !ok           ? SC_API_INGEST_FAILED
                                 : doc.dropped ? SC_API_INGEST_DROPPED
                                               : SC_API_INGEST_KEEP;
    if (ok && !doc.dropped) {
        char *text = json_dumps(doc.source, JSON_COMPACT);
        char *copy = text ? sc_arena_strndup(req->arena, text, strlen(text)) : NULL;
        free(text);
        if (copy) {
            *source = sc_slice_make(copy, strlen(copy));
        } else {
            sc_cluster_error_set(err, 429, "circuit_breaking_exception",
                                 "[request] Data too large for the request budget");
            out = SC_API_INGEST_FAILED;
        }
    }
    json_decref(doc.source);
    json_decref(doc.meta);
    return out;
}
