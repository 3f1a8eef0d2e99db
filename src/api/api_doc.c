/* Single-document endpoints: _doc (index/get/head/delete), _create, _source, _update, _mget.
 * Writes auto-create a missing index with default settings, as Elasticsearch does. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "api/docs.h"
#include "api/forward.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/clock.h"
#include "cluster/alias.h"
#include "cluster/datastream.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/ops.h"

sc_index *sc__api_index_for_doc(sc_rest_req *req, const char *name, bool write,
                                const char **routing, sc_cluster_error *err)
{
    sc_index *ix = NULL;
    const char *r = NULL;
    if (sc_node_index_for_doc(req->node, name, write, req->arena, &ix, &r, err) != SC_OK)
        ix = NULL;
    if (routing)
        *routing = r;
    return ix;
}

sc_index *sc__api_index_for_write(sc_rest_req *req, const char *name, const char **routing,
                                  sc_cluster_error *err)
{
    if (routing)
        *routing = NULL;
    sc_index *ix = sc__api_index_for_doc(req, name, true, routing, err);
    if (ix || strcmp(err->type, "index_not_found_exception") != 0)
        return ix;
    if (req->forwarded) {
        /* The coordinator created it (or found it in the metadata): never auto-create a local
         * one with other settings; wait for the placement to bring it here. */
        ix = sc__api_wait_index(req, name);
        if (!ix)
            sc_cluster_error_not_found(err, name);
        return ix;
    }
    /* Clustered: an index that etcd's metadata already has (created on another node a moment
     * ago) is waited for, never auto-created here as a local index with other settings. */
    int known = sc__api_meta_known(req, name);
    if (known != 0) {
        ix = known > 0 ? sc__api_wait_local_index(req, name) : NULL;
        if (!ix) {
            sc_cluster_error_set(err, 503, "unavailable_shards_exception",
                                 known > 0 ? "index [%s] exists in the cluster metadata but has "
                                             "not reached this node yet"
                                           : "cannot read the cluster metadata to auto-create "
                                             "index [%s]",
                                 name);
            return NULL;
        }
        sc_index_unref(ix);
        return sc__api_index_for_doc(req, name, true, routing, err);
    }
    sc_status st = sc_node_autocreate(req->node, name, err);
    if (st != SC_OK && st != SC_EEXIST)
        return NULL;
    ix = sc__api_index_for_doc(req, name, true, routing, err);
    /* clustered: the new index's metadata is in etcd before its first write goes anywhere */
    if (ix && st == SC_OK && !sc__api_wait_meta(req, ix->name, ix->uuid))
        sc_log(SC_LOG_WARN, "index", "metadata of auto-created [%s] not in etcd yet", ix->name);
    return ix;
}

/* The index a document operation without auto-creation addresses: an index or alias, else an
 * index that is still being placed or recovered (waited for, as sc__api_wait_index). */
static sc_index *doc_target(sc_rest_req *req, const char *name, bool write, const char **routing,
                            sc_cluster_error *err)
{
    sc_index *ix = sc__api_index_for_doc(req, name, write, routing, err);
    if (ix || strcmp(err->type, "index_not_found_exception") != 0)
        return ix;
    ix = sc__api_wait_index(req, name);
    if (!ix)
        sc_cluster_error_not_found(err, name);
    return ix;
}

/* The routing of a single-document request: ?routing, else the alias's index routing. */
static sc_slice doc_routing(sc_rest_req *req, const char *alias_routing)
{
    const char *routing = sc_rest_param_get(req, "routing");
    if (!routing)
        routing = alias_routing;
    return routing ? sc_slice_cstr(routing) : sc_slice_make(NULL, 0);
}

/* A random number for this process, drawn once (getrandom; the clock and pid if that fails):
 * the auto ids of two processes (two nodes, or one node restarted within a millisecond of
 * another's ids, or with its clock set back) differ in it. */
static pthread_once_t auto_id_once = PTHREAD_ONCE_INIT;
static uint32_t auto_id_nonce;

static void auto_id_nonce_init(void)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = (uint32_t)(sc_clock_now_ns() * 0x9E3779B97F4A7C15ull >> 32) ^ (uint32_t)getpid();
    auto_id_nonce = r;
}

void sc__api_auto_id(char out[24])
{
    /* 20 base64url characters, time-ordered like Elasticsearch's flake ids: 8 characters of
     * wall-clock milliseconds, 7 of a per-process sequence (42 bits: ids are unique within the
     * process by construction, whatever the clock does and however many threads ask at once),
     * 5 of the process's nonce (30 bits). The sequence used to be added to the monotonic clock,
     * so two threads reading the two in opposite order got the same id: under two concurrent
     * `_bulk` requests a few docs in a million were refused as version conflicts. */
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    static _Atomic uint64_t seq;
    (void)pthread_once(&auto_id_once, auto_id_nonce_init);
    uint64_t t = (uint64_t)sc_clock_wall_ms();
    uint64_t n = atomic_fetch_add(&seq, 1);
    for (int i = 0; i < 8; i++)
        out[i] = alphabet[(t >> (42 - 6 * i)) & 63];
    for (int i = 0; i < 7; i++)
        out[8 + i] = alphabet[(n >> (36 - 6 * i)) & 63];
    for (int i = 0; i < 5; i++)
        out[15 + i] = alphabet[(auto_id_nonce >> (24 - 6 * i)) & 63];
    out[20] = '\0';
}

bool sc__api_wait_active_params(sc_rest_req *req, sc_rest_resp *resp, sc_doc_write *w)
{
    const char *v = sc_rest_param_get(req, "wait_for_active_shards");
    if (v) {
        if (!sc_wait_active_parse(v, &w->wait_active)) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "failed to parse [wait_for_active_shards] value [%.64s]: expected "
                           "'all' or a non-negative integer",
                           v);
            return false;
        }
        w->wait_active_set = true;
    }
    const char *t = sc_rest_param_get(req, "timeout");
    int64_t ms;
    if (t && (!sc_time_parse_ms(t, &ms) || ms < 0 || ms > 3600000)) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "failed to parse setting [timeout] with value [%.64s] as a time value", t);
        return false;
    }
    if (t)
        w->timeout_ms = ms ? (uint32_t)ms : 1;
    return true;
}

sc_refresh_policy sc__api_refresh_param(const sc_rest_req *req)
{
    const char *r = sc_rest_param_get(req, "refresh");
    if (!r || !strcmp(r, "false"))
        return SC_REFRESH_NONE;
    if (!strcmp(r, "wait_for"))
        return SC_REFRESH_WAIT_FOR;
    return SC_REFRESH_TRUE;
}

void sc__api_write_result(sc_jsonw *w, const char *index, sc_slice id, const sc_index *ix,
                          const sc_doc_result *r, bool with_status)
{
    sc_jsonw_kv_str(w, "_index", index);
    sc_jsonw_key(w, "_id");
    sc_jsonw_strn(w, id);
    if (!r->result) {
        if (with_status)
            sc_jsonw_kv_int(w, "status", r->status);
        sc_jsonw_key(w, "error");
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "type", r->err.type ? r->err.type : "exception");
        sc_jsonw_kv_str(w, "reason", r->err.reason);
        if (r->err.cause_type) {
            sc_jsonw_key(w, "caused_by");
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "type", r->err.cause_type);
            sc_jsonw_kv_str(w, "reason", r->err.cause_reason);
            sc_jsonw_obj_end(w);
        }
        if (ix) {
            sc_jsonw_kv_str(w, "index_uuid", ix->uuid);
            char shard[16];
            snprintf(shard, sizeof shard, "%u", r->shard);
            sc_jsonw_kv_str(w, "shard", shard);
        }
        sc_jsonw_kv_str(w, "index", index);
        sc_jsonw_obj_end(w);
        return;
    }
    sc_jsonw_kv_int(w, "_version", r->version);
    sc_jsonw_kv_str(w, "result", r->result);
    sc_jsonw_key(w, "_shards");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", ix ? 1 + ix->settings.number_of_replicas : 1);
    sc_jsonw_kv_int(w, "successful", 1);
    sc_jsonw_kv_int(w, "failed", 0);
    sc_jsonw_obj_end(w);
    sc_jsonw_kv_int(w, "_seq_no", r->seq_no);
    sc_jsonw_kv_int(w, "_primary_term", r->primary_term);
    if (with_status)
        sc_jsonw_kv_int(w, "status", r->status);
}

/* Reads if_seq_no / if_primary_term / routing URL parameters into a write. */
static bool write_params(sc_rest_req *req, sc_rest_resp *resp, sc_doc_write *w)
{
    bool ok = true;
    w->if_seq_no = sc_rest_param_int(req, "if_seq_no", -2, &ok);
    w->if_primary_term = sc_rest_param_int(req, "if_primary_term", 0, &ok);
    w->refresh = sc__api_refresh_param(req) != SC_REFRESH_NONE;
    if (!ok) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[if_seq_no] and [if_primary_term] must be integers", NULL, 0);
        return false;
    }
    const char *routing = sc_rest_param_get(req, "routing");
    w->routing = routing ? sc_slice_cstr(routing) : sc_slice_make(NULL, 0);
    return sc__api_wait_active_params(req, resp, w);
}

/* Clustered: forwards the request to the node holding the shard's primary. true when the caller
 * must execute it here; false when it was forwarded or failed (resp written). A generated id
 * travels in the path, as PUT _create, so the primary stores the id the shard was chosen by. */
static bool route_to_primary(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix, sc_slice routing,
                             sc_slice id, bool generated, bool retry)
{
    sc_shard_location loc;
    if (!sc__api_locate(req, resp, ix, routing, id, &loc))
        return false;
    if (loc.local)
        return true;
    char path[600];
    /* a retry of a generated id indexes (api/forward.h: an earlier attempt may have landed) */
    if (generated)
        snprintf(path, sizeof path, "/%s/%s/%.*s", ix->name, retry ? "_doc" : "_create",
                 (int)id.len, (const char *)id.ptr);
    sc__api_forward(req, resp, &loc, generated ? "PUT" : NULL, generated ? path : NULL, req->body);
    return false;
}

static void single_write(sc_rest_req *req, sc_rest_resp *resp, sc_doc_op op, sc_slice id)
{
    sc_doc_write w = {.op = op};
    if (!write_params(req, resp, &w))
        return;
    const char *op_type = sc_rest_param_get(req, "op_type");
    if (op_type && !strcmp(op_type, "create"))
        w.op = SC_DOC_CREATE;
    char auto_id[24];
    bool generated = !id.ptr;
    if (!id.ptr) {
        sc__api_auto_id(auto_id);
        id = sc_slice_cstr(auto_id);
        w.op = SC_DOC_CREATE;
    }
    if (id.len > 512) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "id [%.32s...] is too long, must be no longer than 512 bytes but was: %zu",
                       (const char *)id.ptr, id.len);
        return;
    }
    w.id = id;
    if (op != SC_DOC_DELETE) {
        json_t *body;
        if (!sc__api_body_json_doc(req, resp, true, &body))
            return;
        json_decref(body);
        w.source = req->body;
    }
    sc_cluster_error err;
    const char *alias_routing;
    sc_index *ix = op == SC_DOC_DELETE
                       ? doc_target(req, req->index, true, &alias_routing, &err)
                       : sc__api_index_for_write(req, req->index, &alias_routing, &err);
    if (!ix) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    w.routing = doc_routing(req, alias_routing);
    /* clustered: retried across a primary hand-over or promotion (api/forward.h) */
    uint64_t deadline = sc__api_write_deadline(req, sc_clock_now_ns());
    bool retry = false;
    sc_slice body = w.source;
again:;
    int64_t rev = sc__api_routing_rev(req);
    if (!route_to_primary(req, resp, ix, w.routing, w.id, generated, retry)) {
        if (sc__api_resp_retryable(resp, true) && !req->forwarded && sc_node_placement(req->node)) {
            if (sc__api_retry_wait(req, rev, deadline)) {
                retry = true;
                goto again;
            }
            char reason[600];
            sc__api_timeout_reason(req, ix->name,
                                   sc_index_route(ix, w.routing.len ? w.routing : w.id), reason,
                                   sizeof reason);
            sc_rest_error(req, resp, 503, "unavailable_shards_exception", reason, NULL, 0);
        }
        sc_index_unref(ix);
        return;
    }
    if (retry && generated)
        w.op = SC_DOC_INDEX; /* (a create to the data stream rules below, as sent) */
    /* the first attempt of an id generated here runs here: it cannot exist anywhere yet */
    w.new_id = generated && !retry;
    w.source = body;
    sc_doc_result r = {0};
    sc__api_ingest_outcome ing = SC_API_INGEST_KEEP;
    if (op == SC_DOC_DELETE &&
        !sc__api_data_stream_write_ok(req, req->index, false, w.source, &err)) {
        sc_index_unref(ix);
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    if (op != SC_DOC_DELETE) {
        sc__api_ingest_cache cache = {0};
        ing = sc__api_ingest(req, &cache, ix, sc_rest_param_get(req, "pipeline"), w.id,
                             &w.source, &err);
        sc__api_ingest_cache_fini(&cache);
        if (ing == SC_API_INGEST_KEEP &&
            !sc__api_data_stream_write_ok(
                req, req->index, w.op == SC_DOC_CREATE || (retry && generated), w.source, &err))
            ing = SC_API_INGEST_FAILED;
        if (ing == SC_API_INGEST_FAILED) {
            sc_index_unref(ix);
            sc__api_cluster_error(req, resp, &err);
            return;
        }
    }
    uint64_t t0 = sc_clock_now_ns();
    sc_status st = SC_OK;
    if (ing == SC_API_INGEST_DROPPED)
        r = (sc_doc_result){.status = 200, .result = "noop", .version = -3, .seq_no = -2};
    else
        st = sc_index_write(ix, &w, 1, &r, req->arena);
    atomic_fetch_add(&ix->n_index_ops, 1);
    atomic_fetch_add(&ix->index_time_ns, sc_clock_now_ns() - t0);
    if (st != SC_OK) {
        sc_index_unref(ix);
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    if (!r.result && !req->forwarded && sc_node_placement(req->node) &&
        sc__api_write_retryable(r.err.type, r.err.reason)) {
        if (sc__api_retry_wait(req, rev, deadline)) {
            retry = true;
            goto again;
        }
        sc__api_timeout_reason(req, ix->name, sc_index_route(ix, w.routing.len ? w.routing : w.id),
                               r.err.reason, sizeof r.err.reason);
        r.err.type = "unavailable_shards_exception";
        r.status = 503;
    }
    if (!r.result || (op == SC_DOC_DELETE && r.status == 404 && false)) {
        sc_rest_kv kv[] = {{"index_uuid", ix->uuid}, {"index", ix->name}};
        sc_rest_resp tmp;
        (void)tmp;
        sc_rest_error(req, resp, r.status, r.err.type ? r.err.type : "exception", r.err.reason, kv,
                      2);
        sc_index_unref(ix);
        return;
    }
    sc_index_refresh_after_write(ix, sc__api_refresh_param(req));
    sc_jsonw jw;
    sc_rest_json_begin(req, resp, r.status, &jw);
    sc_jsonw_obj_begin(&jw);
    sc__api_write_result(&jw, ix->name, w.id, ix, &r, false);
    sc_jsonw_obj_end(&jw);
    sc_rest_json_end(req, resp, &jw);
    sc_index_unref(ix);
}

void sc_api_doc_index(sc_rest_req *req, sc_rest_resp *resp)
{
    single_write(req, resp, SC_DOC_INDEX, req->id);
}

void sc_api_doc_create(sc_rest_req *req, sc_rest_resp *resp)
{
    single_write(req, resp, SC_DOC_CREATE, req->id);
}

void sc_api_doc_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    single_write(req, resp, SC_DOC_DELETE, req->id);
}

static void get_common(sc_rest_req *req, sc_rest_resp *resp, bool source_only)
{
    sc_cluster_error err;
    const char *alias_routing;
    sc_index *ix = doc_target(req, req->index, false, &alias_routing, &err);
    if (!ix) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    if (!route_to_primary(req, resp, ix, doc_routing(req, alias_routing), req->id, false, false)) {
        sc_index_unref(ix);
        return;
    }
    sc_doc_get g;
    sc_status st = sc_index_get(ix, req->id, doc_routing(req, alias_routing), req->arena, &g);
    if (st == SC_ECLOSED) {
        sc_cluster_error_closed(&err, ix);
        sc_index_unref(ix);
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    if (st == SC_EIO) {
        /* the shard the id routes to is not available (it failed to open) */
        sc_rest_errorf(req, resp, 503, "no_shard_available_action_exception",
                       "No shard available for [get [%s][%s]]", ix->name,
                       sc__api_printable(req, req->id));
        sc_index_unref(ix);
        return;
    }
    if (st != SC_OK) {
        sc_index_unref(ix);
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    if (req->method == SC_REST_HEAD) {
        sc_vec_clear(&resp->body);
        resp->status = g.found ? 200 : 404;
        sc_index_unref(ix);
        return;
    }
    if (source_only) {
        if (!g.found) {
            const char *shown = sc__api_printable(req, req->id);
            char reason[600];
            snprintf(reason, sizeof reason, "Document not found [%s]/[%s]", ix->name, shown);
            sc_rest_kv kv[] = {{"resource.type", "document"}, {"resource.id", shown}};
            sc_rest_error(req, resp, 404, "resource_not_found_exception", reason, kv, 2);
        } else {
            sc_vec_clear(&resp->body);
            resp->status = 200;
            (void)sc_vec_append(&resp->body, g.source.ptr, g.source.len);
        }
        sc_index_unref(ix);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, g.found ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "_index", ix->name);
    sc_jsonw_key(&w, "_id");
    sc_jsonw_strn(&w, req->id);
    if (g.found) {
        sc_jsonw_kv_int(&w, "_version", g.version);
        sc_jsonw_kv_int(&w, "_seq_no", g.seq_no);
        sc_jsonw_kv_int(&w, "_primary_term", g.primary_term);
    }
    sc_jsonw_kv_bool(&w, "found", g.found);
    if (g.found && sc_rest_param_bool(req, "_source", true)) {
        sc_jsonw_key(&w, "_source");
        sc_jsonw_raw(&w, g.source);
    }
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_index_unref(ix);
}

void sc_api_doc_get(sc_rest_req *req, sc_rest_resp *resp)
{
    get_common(req, resp, false);
}

void sc_api_doc_source(sc_rest_req *req, sc_rest_resp *resp)
{
    get_common(req, resp, true);
}

/* Deep merge of `patch` into `base` (objects merge recursively, everything else replaces).
 * Returns true if base changed. */
static bool merge_into(json_t *base, const json_t *patch)
{
    bool changed = false;
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)patch, k, v) {
        json_t *cur = json_object_get(base, k);
        if (cur && json_is_object(cur) && json_is_object(v)) {
            changed |= merge_into(cur, v);
        } else if (!cur || !json_equal(cur, v)) {
            json_object_set(base, k, v);
            changed = true;
        }
    }
    return changed;
}

sc_status sc__api_update(sc_rest_req *req, sc_index *ix, sc_slice id, sc_slice routing,
                         const json_t *body, sc_doc_result *r)
{
    memset(r, 0, sizeof *r);
    const json_t *doc = json_object_get(body, "doc");
    const json_t *upsert = json_object_get(body, "upsert");
    bool doc_as_upsert = json_is_true(json_object_get(body, "doc_as_upsert"));
    if (json_object_get(body, "script")) {
        r->status = 400;
        sc_cluster_error_set(&r->err, 400, "illegal_argument_exception",
                             "scripted updates are not supported");
        return SC_OK;
    }
    if (doc && !json_is_object(doc)) {
        r->status = 400;
        sc_cluster_error_set(&r->err, 400, "illegal_argument_exception", "[doc] must be an object");
        return SC_OK;
    }
    if (!doc && !upsert) {
        r->status = 400;
        sc_cluster_error_set(&r->err, 400, "action_request_validation_exception",
                             "Validation Failed: 1: script or doc is missing;");
        return SC_OK;
    }
    if (atomic_load(&ix->closed)) {
        r->status = 400;
        sc_cluster_error_closed(&r->err, ix);
        return SC_OK;
    }
    for (int attempt = 0; attempt < 8; attempt++) {
        sc_doc_get g;
        SC_TRY(sc_index_get(ix, id, routing, req->arena, &g));
        json_t *newdoc = NULL;
        sc_doc_write w = {.op = SC_DOC_INDEX,
                          .id = id,
                          .routing = routing,
                          .if_seq_no = -2,
                          .refresh = sc__api_refresh_param(req) != SC_REFRESH_NONE};
        /* validated by the caller (update, bulk): a bad value leaves the defaults */
        const char *wv = sc_rest_param_get(req, "wait_for_active_shards");
        w.wait_active_set = wv && sc_wait_active_parse(wv, &w.wait_active);
        const char *tv = sc_rest_param_get(req, "timeout");
        int64_t tms;
        if (tv && sc_time_parse_ms(tv, &tms) && tms >= 0 && tms <= 3600000)
            w.timeout_ms = tms ? (uint32_t)tms : 1;
        if (!g.found) {
            if (upsert)
                newdoc = json_deep_copy(upsert);
            else if (doc_as_upsert)
                newdoc = json_deep_copy(doc);
            else {
                r->status = 404;
                sc_cluster_error_set(&r->err, 404, "document_missing_exception",
                                     "[%.*s]: document missing", (int)id.len, (const char *)id.ptr);
                return SC_OK;
            }
            w.op = SC_DOC_CREATE;
        } else {
            json_error_t jerr;
            newdoc = json_loadb((const char *)g.source.ptr, g.source.len, 0, &jerr);
            if (!json_is_object(newdoc)) {
                json_decref(newdoc);
                newdoc = json_object();
            }
            if (doc && !merge_into(newdoc, doc) &&
                !json_is_false(json_object_get(body, "detect_noop"))) {
                json_decref(newdoc);
                r->status = 200;
                r->result = "noop";
                r->version = g.version;
                r->seq_no = g.seq_no;
                r->primary_term = g.primary_term;
                return SC_OK;
            }
            w.if_seq_no = g.seq_no;
            w.if_primary_term = g.primary_term;
        }
        sc_buf src = {0};
        if (!newdoc || sc__api_json_encode(&src, newdoc) != SC_OK) {
            json_decref(newdoc);
            sc_vec_free(&src);
            return SC_ENOMEM;
        }
        json_decref(newdoc);
        char *copy = sc_arena_alloc(req->arena, src.len ? src.len : 1);
        if (!copy) {
            sc_vec_free(&src);
            return SC_ELIMIT;
        }
        memcpy(copy, src.ptr, src.len);
        w.source = sc_slice_make(copy, src.len);
        sc_vec_free(&src);
        SC_TRY(sc_index_write(ix, &w, 1, r, req->arena));
        if (r->status == 409 && attempt + 1 < 8)
            continue; /* a concurrent write won: re-read and re-apply */
        if (r->result && g.found) {
            r->result = "updated";
            r->status = 200;
        }
        return SC_OK;
    }
    return SC_OK;
}

void sc_api_doc_update(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_doc_write wa = {0};
    if (!sc__api_wait_active_params(req, resp, &wa))
        return;
    json_t *body;
    if (!sc__api_body_json_doc(req, resp, true, &body))
        return;
    sc_cluster_error err;
    const char *alias_routing;
    sc_index *ix = sc__api_index_for_write(req, req->index, &alias_routing, &err);
    if (ix && !sc__api_data_stream_write_ok(req, req->index, false, req->body, &err)) {
        sc_index_unref(ix);
        ix = NULL;
    }
    if (!ix) {
        json_decref(body);
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    /* clustered: retried across a primary hand-over or promotion (api/forward.h), except after
     * a failed replication (the update may have been applied) */
    uint64_t deadline = sc__api_write_deadline(req, sc_clock_now_ns());
    sc_slice routing = doc_routing(req, alias_routing);
    bool retrying = !req->forwarded && sc_node_placement(req->node);
    sc_doc_result r;
    for (;;) {
        int64_t rev = sc__api_routing_rev(req);
        if (!route_to_primary(req, resp, ix, routing, req->id, false, false)) {
            if (retrying && sc__api_resp_retryable(resp, false)) {
                if (sc__api_retry_wait(req, rev, deadline))
                    continue;
                char reason[600];
                sc__api_timeout_reason(req, ix->name,
                                       sc_index_route(ix, routing.len ? routing : req->id), reason,
                                       sizeof reason);
                sc_rest_error(req, resp, 503, "unavailable_shards_exception", reason, NULL, 0);
            }
            json_decref(body);
            sc_index_unref(ix);
            return;
        }
        sc_status st = sc__api_update(req, ix, req->id, routing, body, &r);
        if (st != SC_OK) {
            json_decref(body);
            sc_index_unref(ix);
            sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
            return;
        }
        if (r.result || !retrying || !sc__api_write_retryable(r.err.type, r.err.reason) ||
            !strcmp(r.err.type, "replication_failed_exception"))
            break;
        if (!sc__api_retry_wait(req, rev, deadline)) {
            sc__api_timeout_reason(req, ix->name,
                                   sc_index_route(ix, routing.len ? routing : req->id),
                                   r.err.reason, sizeof r.err.reason);
            r.err.type = "unavailable_shards_exception";
            r.status = 503;
            break;
        }
    }
    json_decref(body);
    if (!r.result) {
        sc_rest_kv kv[] = {{"index_uuid", ix->uuid}, {"shard", "0"}, {"index", ix->name}};
        sc_rest_error(req, resp, r.status, r.err.type ? r.err.type : "exception", r.err.reason, kv,
                      3);
        sc_index_unref(ix);
        return;
    }
    sc_index_refresh_after_write(ix, sc__api_refresh_param(req));
    sc_jsonw jw;
    sc_rest_json_begin(req, resp, r.status, &jw);
    sc_jsonw_obj_begin(&jw);
    sc__api_write_result(&jw, ix->name, req->id, ix, &r, false);
    sc_jsonw_obj_end(&jw);
    sc_rest_json_end(req, resp, &jw);
    sc_index_unref(ix);
}

/* A JSON string as a byte string (it may hold NUL); {NULL, 0} when v is not a string. */
static sc_slice json_bytes(const json_t *v)
{
    return json_is_string(v) ? sc_slice_make(json_string_value(v), json_string_length(v))
                             : sc_slice_make(NULL, 0);
}

/* Clustered: when the first searchable copy of the document's shard (the primary first) is on
 * another node, asks that node (a forwarded `_mget` of this one document, `d` its entry or
 * NULL) and writes the members of its answer after `_index` and `_id`; true when handled here
 * (a copy elsewhere, or no copy at all). A node holds only its allocated copies. */
static bool mget_remote(sc_rest_req *req, sc_jsonw *w, sc_index *ix, const json_t *d, sc_slice id,
                        sc_slice routing)
{
    sc_placement *p = sc_node_placement(req->node);
    if (!p || req->forwarded)
        return false;
    sc_placement_snapshot *s = sc_placement_acquire(p);
    sc_shard_location loc;
    uint32_t shard = sc_index_route(ix, routing.len ? routing : id);
    bool have = sc_placement_copy(s, ix->name, shard, 0, &loc);
    sc_placement_release(s);
    if (have && loc.local)
        return false;
    json_t *one = d ? json_deep_copy(d) : json_object();
    json_t *out = NULL;
    int status = 0;
    sc_status st = SC_EIO;
    if (have && one) {
        json_object_set_new(one, "_index", json_string(ix->name));
        if (!d)
            json_object_set_new(one, "_id", json_stringn((const char *)id.ptr, id.len));
        if (routing.len) /* also an alias's index_routing */
            json_object_set_new(one, "routing",
                                json_stringn((const char *)routing.ptr, routing.len));
        json_t *body = json_pack("{s:[O]}", "docs", one);
        char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
        json_decref(body);
        if (text)
            st = sc__api_forward_json(req, &loc, "POST", "/_mget", sc_slice_cstr(text), &status,
                                      &out);
        free(text);
    }
    json_decref(one);
    const json_t *doc = json_array_get(json_object_get(out, "docs"), 0);
    if (st != SC_OK || status != 200 || !json_is_object(doc)) {
        sc_jsonw_key(w, "error");
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "type", "no_shard_available_action_exception");
        sc_jsonw_kv_str(w, "reason",
                        have ? "the node holding the document did not answer"
                             : "No shard available for the document");
        sc_jsonw_obj_end(w);
    } else {
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)doc, k, v) {
            if (!strcmp(k, "_index") || !strcmp(k, "_id"))
                continue;
            char *vt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (!vt)
                continue;
            sc_jsonw_key(w, k);
            sc_jsonw_raw(w, sc_slice_cstr(vt));
            free(vt);
        }
    }
    json_decref(out);
    sc_jsonw_obj_end(w);
    return true;
}

void sc_api_mget(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    /* Ids and routing values are byte strings and may hold NUL; index names may not. */
    if (!sc__api_body_json_doc(req, resp, true, &body))
        return;
    json_t *docs = json_object_get(body, "docs");
    json_t *ids = json_object_get(body, "ids");
    if (!json_is_array(docs) && !json_is_array(ids)) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: no documents to get;", NULL, 0);
        return;
    }
    size_t n = json_is_array(docs) ? json_array_size(docs) : json_array_size(ids);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "docs");
    sc_jsonw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const char *index = req->index;
        sc_slice id = {0}, routing = {0};
        bool bad_index = false;
        if (json_is_array(docs)) {
            json_t *d = json_array_get(docs, i);
            json_t *ji = json_object_get(d, "_index");
            if (json_is_string(ji)) {
                index = json_string_value(ji);
                bad_index = strlen(index) != json_string_length(ji);
            }
            id = json_bytes(json_object_get(d, "_id"));
            routing = json_bytes(json_object_get(d, "routing"));
        } else {
            id = json_bytes(json_array_get(ids, i));
        }
        sc_jsonw_obj_begin(&w);
        if (!index || !id.ptr || bad_index) {
            sc_jsonw_kv_str(&w, "_index", index ? index : "");
            sc_jsonw_key(&w, "_id");
            sc_jsonw_strn(&w, id);
            sc_jsonw_key(&w, "error");
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "type",
                            bad_index ? "invalid_index_name_exception"
                                      : "illegal_argument_exception");
            sc_jsonw_kv_str(&w, "reason",
                            bad_index ? "Invalid index name, must not contain a NUL byte"
                            : index   ? "id is missing"
                                      : "index is missing");
            sc_jsonw_obj_end(&w);
            sc_jsonw_obj_end(&w);
            continue;
        }
        sc_cluster_error err;
        const char *alias_routing;
        sc_index *ix = sc__api_index_for_doc(req, index, false, &alias_routing, &err);
        if (!routing.ptr && alias_routing)
            routing = sc_slice_cstr(alias_routing);
        sc_jsonw_kv_str(&w, "_index", ix ? ix->name : index);
        sc_jsonw_key(&w, "_id");
        sc_jsonw_strn(&w, id);
        if (ix && !atomic_load(&ix->closed) &&
            mget_remote(req, &w, ix, json_is_array(docs) ? json_array_get(docs, i) : NULL, id,
                        routing)) {
            sc_index_unref(ix);
            continue;
        }
        sc_doc_get g = {0};
        sc_status gst = ix ? sc_index_get(ix, id, routing, req->arena, &g) : SC_ENOTFOUND;
        if (gst == SC_EIO) {
            sc_jsonw_key(&w, "error");
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "type", "no_shard_available_action_exception");
            sc_jsonw_kv_str(&w, "reason", "No shard available for the document");
            sc_jsonw_obj_end(&w);
            sc_jsonw_obj_end(&w);
            sc_index_unref(ix);
            continue;
        }
        if (gst != SC_OK) {
            if (ix && atomic_load(&ix->closed)) {
                sc_jsonw_key(&w, "error");
                sc_jsonw_obj_begin(&w);
                sc_jsonw_kv_str(&w, "type", "index_closed_exception");
                sc_jsonw_kv_str(&w, "reason", "closed");
                sc_jsonw_kv_str(&w, "index_uuid", ix->uuid);
                sc_jsonw_kv_str(&w, "index", ix->name);
                sc_jsonw_obj_end(&w);
                sc_jsonw_obj_end(&w);
                sc_index_unref(ix);
                continue;
            }
            if (!ix) {
                sc_jsonw_key(&w, "error");
                sc_jsonw_obj_begin(&w);
                sc_jsonw_kv_str(&w, "type", "index_not_found_exception");
                char reason[600];
                snprintf(reason, sizeof reason, "no such index [%s]", index);
                sc_jsonw_kv_str(&w, "reason", reason);
                sc_jsonw_kv_str(&w, "index", index);
                sc_jsonw_obj_end(&w);
                sc_jsonw_obj_end(&w);
                continue;
            }
            g.found = false;
        }
        if (g.found) {
            sc_jsonw_kv_int(&w, "_version", g.version);
            sc_jsonw_kv_int(&w, "_seq_no", g.seq_no);
            sc_jsonw_kv_int(&w, "_primary_term", g.primary_term);
        }
        sc_jsonw_kv_bool(&w, "found", g.found);
        if (g.found) {
            sc_jsonw_key(&w, "_source");
            sc_jsonw_raw(&w, g.source);
        }
        sc_jsonw_obj_end(&w);
        sc_index_unref(ix);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(body);
}
