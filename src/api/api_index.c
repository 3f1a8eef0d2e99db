/* Index administration endpoints: create/delete/exists/get, _mapping, _settings, _refresh,
 * _flush, _forcemerge, _stats, _segments, _close/_open. */
#include <stdio.h>
#include <string.h>

#include "api/forward.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/clock.h"
#include "cluster/alias.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/stats_remote.h"
#include "cluster/template.h"

/* Writes a cluster error as the ES envelope, with index fields when set. */
void sc__api_cluster_error(sc_rest_req *req, sc_rest_resp *resp, const sc_cluster_error *err)
{
    if (err->type && strcmp(err->type, "index_not_found_exception") == 0) {
        sc_rest_error_index_not_found(req, resp, err->index);
        return;
    }
    sc_rest_kv kv[2];
    size_t n = 0;
    if (err->index_uuid[0])
        kv[n++] = (sc_rest_kv){"index_uuid", err->index_uuid};
    if (err->index[0])
        kv[n++] = (sc_rest_kv){"index", err->index};
    sc_rest_error(req, resp, err->status ? err->status : 500, err->type ? err->type : "exception",
                  err->reason, kv, n);
}

bool sc__api_resolve(sc_rest_req *req, sc_rest_resp *resp, const char *expr, unsigned flags,
                     sc_index ***list, size_t *n)
{
    sc_cluster_error err;
    sc_status st =
        sc_node_resolve_ex(req->node, expr, flags | sc__api_expand_flags(req), list, n, &err);
    if (st == SC_ENOTFOUND) {
        sc_rest_error_index_not_found(req, resp, err.index);
        return false;
    }
    if (st == SC_ECLOSED || st == SC_EINVAL) {
        sc__api_cluster_error(req, resp, &err);
        return false;
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return false;
    }
    return true;
}


/* Starts a 200 answer {"acknowledged": true, "shards_acknowledged": true, ...} (left open). */
static void begin_shards_ack(sc_rest_req *req, sc_rest_resp *resp, sc_jsonw *w)
{
    sc_rest_json_begin(req, resp, 200, w);
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_bool(w, "acknowledged", true);
    sc_jsonw_kv_bool(w, "shards_acknowledged", true);
}

void sc_api_index_create(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    static const char *const allowed[] = {"settings", "mappings", "aliases", NULL};
    if (body) {
        const char *k;
        json_t *v;
        json_object_foreach (body, k, v) {
            bool ok = false;
            for (const char *const *a = allowed; *a; a++)
                ok |= strcmp(k, *a) == 0;
            if (!ok || !json_is_object(v)) {
                sc_rest_errorf(req, resp, 400, ok ? "parse_exception" : "parse_exception",
                               ok ? "[%s] must be an object" : "unknown key [%s] for create index",
                               k);
                json_decref(body);
                return;
            }
        }
    }
    json_t *settings = body ? json_object_get(body, "settings") : NULL;
    json_t *mappings = body ? json_object_get(body, "mappings") : NULL;
    /* Typed mappings ({"_doc": {...}}) are an ES 6 form; accept the single-type wrapper. */
    if (mappings && json_object_size(mappings) == 1 && json_object_get(mappings, "_doc") &&
        json_is_object(json_object_get(mappings, "_doc")))
        mappings = json_object_get(mappings, "_doc");
    sc_cluster_error err;
    sc_status st = sc_node_create_index_templated(req->node, req->index, settings, mappings,
                                                  json_object_get(body, "aliases"), &err);
    json_decref(body);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    /* Clustered: acknowledged once the metadata is in etcd, so that any node knows the index
     * (and never auto-creates one of its own) when the client's next request reaches it. */
    sc_index *made = sc_node_index(req->node, req->index);
    bool published = !made || sc__api_wait_meta(req, made->name, made->uuid);
    sc_index_unref(made);
    if (!published) {
        sc_rest_errorf(req, resp, 503, "process_cluster_event_timeout_exception",
                       "index [%s] was created but its metadata did not reach the cluster in time",
                       req->index);
        return;
    }
    sc_jsonw w;
    begin_shards_ack(req, resp, &w);
    sc_jsonw_kv_str(&w, "index", req->index);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_index_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, SC_NODE_RESOLVE_CLOSED | SC_NODE_RESOLVE_NO_ALIASES,
                    &list, &n))
        return;
    for (size_t i = 0; i < n; i++) {
        char stream[256];
        if (sc_index_stream_write_index(list[i], stream, sizeof stream)) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "index [%s] is the write index for data stream [%s] and cannot be "
                           "deleted",
                           list[i]->name, stream);
            sc_node_release(list, n);
            return;
        }
    }
    for (size_t i = 0; i < n; i++) {
        sc_cluster_error err;
        if (sc_node_delete_index(req->node, list[i]->name, &err) != SC_OK &&
            !strpbrk(req->index, "*?")) {
            sc_node_release(list, n);
            sc__api_cluster_error(req, resp, &err);
            return;
        }
    }
    sc_node_release(list, n);
    sc_rest_ack(req, resp);
}

/* Closes the top-level object of an answer, releases the resolved indices and sends it. */
static void json_end_release(sc_rest_req *req, sc_rest_resp *resp, sc_jsonw *w, sc_index **list,
                             size_t n)
{
    sc_jsonw_obj_end(w);
    sc_node_release(list, n);
    sc_rest_json_end(req, resp, w);
}

static void write_index_body(sc_jsonw *w, sc_index *ix, bool aliases, bool mappings, bool settings)
{
    if (aliases) {
        json_t *al = sc_index_aliases(ix);
        sc_jsonw_key(w, "aliases");
        sc__api_json_write(w, al);
        json_decref(al);
    }
    if (mappings) {
        sc_mapping *m = sc_index_mapping(ix);
        sc_jsonw_key(w, "mappings");
        sc_mapping_write(m, w);
        sc_mapping_unref(m);
    }
    if (settings) {
        sc_jsonw_key(w, "settings");
        sc__api_json_write(w, ix->settings_json);
    }
}

/* Answers {name: {aliases?, mappings?, settings?}} for the resolved indices and releases them. */
static void write_indices(sc_rest_req *req, sc_rest_resp *resp, sc_index **list, size_t n,
                          bool aliases, bool mappings, bool settings)
{
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    for (size_t i = 0; i < n; i++) {
        sc_jsonw_key(&w, list[i]->name);
        sc_jsonw_obj_begin(&w);
        write_index_body(&w, list[i], aliases, mappings, settings);
        sc_jsonw_obj_end(&w);
    }
    json_end_release(req, resp, &w, list, n);
}

void sc_api_index_get(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n))
        return;
    if (req->method == SC_REST_HEAD) {
        sc_node_release(list, n);
        sc_vec_clear(&resp->body);
        resp->status = n ? 200 : 404;
        return;
    }
    write_indices(req, resp, list, n, true, true, true);
}

/* GET of a part of the indices (closed ones included). */
static void get_indices(sc_rest_req *req, sc_rest_resp *resp, bool aliases, bool mappings,
                        bool settings)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n))
        return;
    write_indices(req, resp, list, n, aliases, mappings, settings);
}

void sc_api_get_mapping(sc_rest_req *req, sc_rest_resp *resp)
{
    get_indices(req, resp, false, true, false);
}

/* The JSON body (required) and the open indices of a PUT; false when it answered an error. */
static bool body_and_indices(sc_rest_req *req, sc_rest_resp *resp, json_t **body, sc_index ***list,
                             size_t *n)
{
    if (!sc__api_body_json(req, resp, true, body))
        return false;
    if (!sc__api_resolve(req, resp, req->index, 0, list, n)) {
        json_decref(*body);
        return false;
    }
    return true;
}

void sc_api_put_mapping(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    sc_index **list;
    size_t n;
    if (!body_and_indices(req, resp, &body, &list, &n))
        return;
    for (size_t i = 0; i < n; i++) {
        sc_cluster_error err;
        if (sc_index_put_mapping(list[i], body, &err) != SC_OK) {
            sc__api_cluster_error(req, resp, &err);
            sc_node_release(list, n);
            json_decref(body);
            return;
        }
    }
    sc_node_release(list, n);
    json_decref(body);
    sc_rest_ack(req, resp);
}

void sc_api_get_settings(sc_rest_req *req, sc_rest_resp *resp)
{
    get_indices(req, resp, false, false, true);
}

void sc_api_put_settings(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    sc_index **list;
    size_t n;
    if (!body_and_indices(req, resp, &body, &list, &n))
        return;
    /* Dynamic settings scry applies at runtime: refresh_interval and max_result_window. */
    json_t *ixs = json_object_get(body, "index");
    json_t *src = json_is_object(ixs) ? ixs : body;
    const char *k;
    json_t *v;
    bool bad = false;
    json_object_foreach (src, k, v) {
        const char *key = strncmp(k, "index.", 6) == 0 ? k + 6 : k;
        if (strcmp(key, "number_of_shards") == 0) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "Can't update non dynamic settings [[index.number_of_shards]] for "
                           "open indices");
            bad = true;
            break;
        }
        int32_t wa;
        const json_t *wv = strcmp(key, "write.wait_for_active_shards") == 0 ? v
                           : strcmp(key, "write") == 0 && json_is_object(v)
                               ? json_object_get(v, "wait_for_active_shards")
                               : NULL;
        if (wv && !json_is_null(wv) &&
            !(json_is_string(wv) && sc_wait_active_parse(json_string_value(wv), &wa)) &&
            !(json_is_integer(wv) && json_integer_value(wv) >= 0 &&
              json_integer_value(wv) <= 1024)) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "failed to parse setting [index.write.wait_for_active_shards]: "
                           "expected 'all' or a non-negative integer");
            bad = true;
            break;
        }
        uint64_t b;
        if (strcmp(key, "translog.flush_threshold_size") == 0 && !json_is_null(v) &&
            (!sc_setting_parse_bytes(v, &b) || b < 128)) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "failed to parse setting [index.translog.flush_threshold_size]: "
                           "expected a byte size of at least 128b, e.g. 512mb");
            bad = true;
            break;
        }
    }
    if (!bad) {
        /* applied, persisted (meta.json) and, clustered, published to every node */
        for (size_t i = 0; i < n; i++)
            sc_index_update_settings(list[i], src);
        sc_rest_ack(req, resp);
    }
    sc_node_release(list, n);
    json_decref(body);
}

/* Elasticsearch's broadcast header: total counts every copy (replicas included), failed only
 * active copies that failed; an unassigned replica is neither successful nor failed. */
static void shards_header(sc_jsonw *w, uint32_t total, uint32_t active, uint32_t ok)
{
    sc_jsonw_key(w, "_shards");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", total);
    sc_jsonw_kv_int(w, "successful", ok);
    sc_jsonw_kv_int(w, "failed", active > ok ? active - ok : 0);
    sc_jsonw_obj_end(w);
}

/* A node holding copies of the indices, and its transport address. */
typedef struct bcast_peer {
    char node[SC_ALLOC_NODE_MAX];
} bcast_peer;

/* Clustered: op runs on the copies the routing assigns to this node and, unless the request
 * was forwarded here, the request itself goes to every other node holding a copy; the
 * `successful` counts of their answers are summed. total counts every copy slot, active the
 * copies assigned (a copy on a node that cannot be reached or fails counts as failed). */
static void fanout_cluster(sc_rest_req *req, sc_index **list, size_t n, sc_index_bcast op,
                           int64_t max_seg, uint32_t *total, uint32_t *active, uint32_t *good)
{
    sc_placement *p = sc_node_placement(req->node);
    sc_placement_snapshot *s = sc_placement_acquire(p);
    const char *me = sc_placement_local_id(s);
    bcast_peer *peers = NULL;
    size_t n_peers = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t ns = list[i]->settings.number_of_shards;
        *total += ns * (1 + list[i]->settings.number_of_replicas);
        bool *mine = sc_arena_calloc(req->arena, ns ? ns : 1, sizeof *mine);
        if (!mine)
            continue;
        for (uint32_t sh = 0; sh < ns; sh++) {
            const sc_shard_routing *r = sc_placement_shard(s, list[i]->name, sh);
            for (size_t c = 0; r && c < r->n_copies; c++) {
                const char *node = r->copies[c].node;
                (*active)++;
                if (!strcmp(node, me)) {
                    mine[sh] = true;
                    continue;
                }
                size_t k = 0;
                while (k < n_peers && strcmp(peers[k].node, node))
                    k++;
                if (k < n_peers)
                    continue;
                bcast_peer *grown = realloc(peers, (n_peers + 1) * sizeof *peers);
                if (!grown)
                    continue;
                peers = grown;
                snprintf(peers[n_peers++].node, sizeof peers->node, "%s", node);
            }
        }
        *good += sc_index_broadcast(list[i], op, max_seg, mine);
    }
    sc_shard_location *locs = calloc(n_peers ? n_peers : 1, sizeof *locs);
    for (size_t k = 0; locs && k < n_peers; k++) {
        snprintf(locs[k].node_id, sizeof locs[k].node_id, "%s", peers[k].node);
        locs[k].assigned =
            sc_placement_addr(s, peers[k].node, locs[k].host, sizeof locs[k].host, &locs[k].port);
    }
    sc_placement_release(s);
    for (size_t k = 0; locs && !req->forwarded && k < n_peers; k++) {
        int status = 0;
        json_t *r = NULL;
        if (locs[k].assigned &&
            sc__api_forward_json(req, &locs[k], NULL, NULL, req->body, &status, &r) == SC_OK &&
            status == 200) {
            json_int_t ok =
                json_integer_value(json_object_get(json_object_get(r, "_shards"), "successful"));
            *good += ok > 0 ? (uint32_t)ok : 0;
        } else {
            sc_log(SC_LOG_WARN, "index", "broadcast to node [%s] failed (status %d)",
                   locs[k].node_id, status);
        }
        json_decref(r);
    }
    free(locs);
    free(peers);
}

static void fanout(sc_rest_req *req, sc_rest_resp *resp, int op)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, 0, &list, &n))
        return;
    bool ok = true;
    int64_t max_seg = sc_rest_param_int(req, "max_num_segments", -1, &ok);
    if (!ok) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "failed to parse [max_num_segments]", NULL, 0);
        return;
    }
    uint32_t total = 0, active = 0, good = 0;
    if (sc_node_placement(req->node))
        fanout_cluster(req, list, n, (sc_index_bcast)op, max_seg, &total, &active, &good);
    for (size_t i = 0; !sc_node_placement(req->node) && i < n; i++) {
        uint32_t shards = list[i]->settings.number_of_shards;
        total += shards * (1 + list[i]->settings.number_of_replicas);
        /* one node: the primaries (not those still recovering); replicas stay unassigned */
        active += shards - sc_index_n_initializing_shards(list[i]);
        good += op == 0   ? sc_index_refresh(list[i])
                : op == 1 ? sc_index_flush(list[i])
                          : sc_index_forcemerge(list[i], max_seg);
    }
    sc_node_release(list, n);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    shards_header(&w, total, active, good);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_refresh(sc_rest_req *req, sc_rest_resp *resp)
{
    fanout(req, resp, 0);
}

void sc_api_flush(sc_rest_req *req, sc_rest_resp *resp)
{
    fanout(req, resp, 1);
}

void sc_api_forcemerge(sc_rest_req *req, sc_rest_resp *resp)
{
    fanout(req, resp, 2);
}

static void stats_block(sc_jsonw *w, const sc_index_stats *s)
{
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "docs");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "count", (int64_t)s->docs_count);
    sc_jsonw_kv_int(w, "deleted", (int64_t)s->docs_deleted);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "store");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "size_in_bytes", (int64_t)s->store_bytes);
    sc_jsonw_kv_int(w, "total_data_set_size_in_bytes", (int64_t)s->store_bytes);
    sc_jsonw_kv_int(w, "reserved_in_bytes", 0);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "indexing");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "index_total", (int64_t)s->index_total);
    sc_jsonw_kv_int(w, "index_time_in_millis", (int64_t)(s->index_time_ns / 1000000));
    sc_jsonw_kv_int(w, "index_current", 0);
    sc_jsonw_kv_int(w, "delete_total", (int64_t)s->delete_total);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "search");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "query_total", (int64_t)s->query_total);
    sc_jsonw_kv_int(w, "query_time_in_millis", (int64_t)(s->query_time_ns / 1000000));
    sc_jsonw_kv_int(w, "query_current", 0);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "merges");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "current", (int64_t)s->merges_current);
    sc_jsonw_kv_int(w, "current_docs", 0);
    sc_jsonw_kv_int(w, "total", (int64_t)s->merges_total);
    /* scry's own: bytes merges wrote to spill files under index.merge.memory */
    sc_jsonw_kv_int(w, "total_spilled_size_in_bytes", (int64_t)s->merges_spilled_bytes);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "refresh");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", (int64_t)s->refresh_total);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "flush");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", (int64_t)s->flush_total);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "segments");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "count", (int64_t)s->n_segments);
    sc_jsonw_kv_int(w, "memory_in_bytes", (int64_t)s->memory_bytes);
    sc_jsonw_kv_int(w, "index_writer_memory_in_bytes", (int64_t)s->memory_bytes);
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "translog");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "operations", (int64_t)s->translog_ops);
    sc_jsonw_kv_int(w, "size_in_bytes", (int64_t)s->translog_bytes);
    sc_jsonw_obj_end(w);
    sc_jsonw_obj_end(w);
}

void sc_api_stats(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, 0, &list, &n))
        return;
    sc_cluster_stats *per = sc_arena_calloc(req->arena, n ? n : 1, sizeof *per);
    if (!per) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    /* every number, the work counters too, from every copy wherever it lives */
    sc_cluster_index_stats(req->node, list, n, per);
    sc_index_stats all_pri = {0}, all = {0};
    uint32_t answered = 0, copies = 0;
    for (size_t i = 0; i < n; i++) {
        sc_index_stats_add(&all_pri, &per[i].primaries);
        sc_index_stats_add(&all, &per[i].total);
        answered += per[i].n_answered;
        copies += per[i].n_copies;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", copies);
    sc_jsonw_kv_int(&w, "successful", answered);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "_all");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "primaries");
    stats_block(&w, &all_pri);
    sc_jsonw_key(&w, "total");
    stats_block(&w, &all);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "indices");
    sc_jsonw_obj_begin(&w);
    for (size_t i = 0; i < n; i++) {
        sc_jsonw_key(&w, list[i]->name);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "uuid", list[i]->uuid);
        sc_jsonw_kv_str(&w, "health", list[i]->settings.number_of_replicas ? "yellow" : "green");
        sc_jsonw_kv_str(&w, "status", "open");
        sc_jsonw_key(&w, "primaries");
        stats_block(&w, &per[i].primaries);
        sc_jsonw_key(&w, "total");
        stats_block(&w, &per[i].total);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_obj_end(&w);
    json_end_release(req, resp, &w, list, n);
}

/* POST /{index}/_close and /_open. Closing flushes the shards; a closed index refuses searches
 * and writes (index_closed_exception) and wildcards skip it; the state survives restarts. */
static void set_closed(sc_rest_req *req, sc_rest_resp *resp, bool closed)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n))
        return;
    for (size_t i = 0; i < n; i++) {
        sc_cluster_error err;
        if (sc_index_set_closed(list[i], closed, &err) != SC_OK) {
            sc_node_release(list, n);
            sc__api_cluster_error(req, resp, &err);
            return;
        }
    }
    sc_jsonw w;
    begin_shards_ack(req, resp, &w);
    if (closed) {
        sc_jsonw_key(&w, "indices");
        sc_jsonw_obj_begin(&w);
        for (size_t i = 0; i < n; i++) {
            sc_jsonw_key(&w, list[i]->name);
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_bool(&w, "closed", true);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_obj_end(&w);
    }
    json_end_release(req, resp, &w, list, n);
}

void sc_api_index_close(sc_rest_req *req, sc_rest_resp *resp)
{
    set_closed(req, resp, true);
}

void sc_api_index_open(sc_rest_req *req, sc_rest_resp *resp)
{
    set_closed(req, resp, false);
}
