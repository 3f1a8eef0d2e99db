/* POST /_bulk and /{index}/_bulk: NDJSON action/source pairs. Consecutive index/create/delete
 * items are written per index in one sc_index_write batch (one translog fsync per shard);
 * updates are applied one by one in order. A malformed line fails its item, not the request;
 * a body that is not NDJSON at all fails with 400. */
#include <stdio.h>
#include <string.h>

#include "api/bulk_parse.h"
#include "api/docs.h"
#include "api/forward.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/clock.h"
#include "cluster/node.h"
#include "cluster/ops.h"

typedef enum item_kind {
    IT_INDEX,
    IT_CREATE,
    IT_UPDATE,
    IT_DELETE,
    IT_BAD
} item_kind;

typedef struct bulk_item {
    item_kind kind;
    const char *op_name; /* "index", ... as it appears in the response */
    const char *index;   /* arena */
    sc_slice id;         /* arena */
    sc_slice routing;
    sc_slice source; /* borrowed from the body, or the pipelines' output in the arena */
    const char *pipeline; /* the action line's "pipeline" or NULL */
    int64_t if_seq_no, if_primary_term;
    sc_index *ix;              /* reference */
    const char *alias_routing; /* index_routing of the alias the item names (arena) or NULL */
    sc_doc_result r;
    /* An error of the action line found while parsing, applied once the source is read. */
    const char *pending_type, *pending_reason;
    /* Clustered: the item went to the node holding its primary (api/forward.h); its result is
     * that node's item object (new reference), written back as it came. */
    bool remote;
    sc_shard_location loc;
    json_t *remote_result;
    /* Retrying across a primary hand-over (api/forward.h): the item's kind before it ran, whether
     * it runs in this round, whether its id was generated here. */
    item_kind kind0;
    bool pending, auto_id;
} bulk_item;

static void item_error(bulk_item *it, int status, const char *type, const char *reason)
{
    it->kind = IT_BAD;
    it->r.status = status;
    it->r.result = NULL;
    sc_cluster_error_set(&it->r.err, status, type, "%s", reason);
}

/* Runs the ingest pipelines of index and create items and checks the rules of data streams:
 * a failing document fails its item, a dropped one answers noop; the other items go on. */
static void run_pipelines(sc_rest_req *req, bulk_item *items, size_t n)
{
    sc__api_ingest_cache cache = {0};
    const char *dflt = sc_rest_param_get(req, "pipeline");
    for (size_t i = 0; i < n; i++) {
        bulk_item *it = &items[i];
        sc_cluster_error err;
        if ((it->kind == IT_UPDATE || it->kind == IT_DELETE) && it->ix &&
            !sc__api_data_stream_write_ok(req, it->index, false, it->source, &err)) {
            it->kind = IT_BAD;
            it->r.status = err.status;
            it->r.result = NULL;
            it->r.err = err;
        }
        if ((it->kind != IT_INDEX && it->kind != IT_CREATE) || !it->ix)
            continue;
        sc__api_ingest_outcome o = sc__api_ingest(req, &cache, it->ix,
                                                  it->pipeline ? it->pipeline : dflt, it->id,
                                                  &it->source, &err);
        if (o == SC_API_INGEST_KEEP &&
            !sc__api_data_stream_write_ok(req, it->index, it->kind == IT_CREATE, it->source, &err))
            o = SC_API_INGEST_FAILED;
        if (o == SC_API_INGEST_FAILED) {
            it->kind = IT_BAD;
            it->r.status = err.status;
            it->r.result = NULL;
            it->r.err = err;
        } else if (o == SC_API_INGEST_DROPPED) {
            it->kind = IT_BAD;
            it->r = (sc_doc_result){.status = 200, .result = "noop", .version = -3, .seq_no = -2};
        }
    }
    sc__api_ingest_cache_fini(&cache);
}

/* Parses one action line into it; returns false when the whole request must fail (errbuf). */
static bool parse_action(sc_rest_req *req, sc_slice line, size_t lineno, bulk_item *it,
                         char *errbuf, size_t errcap, bool *extra_keys)
{
    sc_bulk_action a;
    sc_status st = sc_bulk_parse_action(line, lineno, req->arena, &a, errbuf, errcap);
    if (st == SC_ENOMEM) {
        snprintf(errbuf, errcap, "[request] Data too large for the request budget");
        return false;
    }
    if (st != SC_OK)
        return false;
    static const item_kind kinds[] = {[SC_BULK_INDEX] = IT_INDEX,
                                      [SC_BULK_CREATE] = IT_CREATE,
                                      [SC_BULK_UPDATE] = IT_UPDATE,
                                      [SC_BULK_DELETE] = IT_DELETE};
    it->kind = kinds[a.op];
    it->op_name = a.op_name;
    it->index = a.index ? a.index : req->index;
    it->id = a.id;
    it->routing = a.routing;
    it->if_seq_no = a.if_seq_no;
    it->if_primary_term = a.if_primary_term;
    it->pipeline = a.pipeline;
    *extra_keys |= a.extra_key != NULL;
    if (a.item_error_type)
        it->pending_type = a.item_error_type, it->pending_reason = a.item_error_reason;
    return true;
}

/* Appends item it as one action line (and its source line) of a sub-bulk. */
static sc_status append_item(json_t *lines, const bulk_item *it)
{
    static const char *const ops[] = {[IT_INDEX] = "index",
                                      [IT_CREATE] = "create",
                                      [IT_UPDATE] = "update",
                                      [IT_DELETE] = "delete"};
    json_t *meta = json_object();
    /* the concrete index: the primary's node may not have seen a new alias or data stream
     * (its write index after a rollover) yet; alias routing is in it->routing already */
    json_object_set_new(meta, "_index", json_string(it->ix ? it->ix->name : it->index));
    json_object_set_new(meta, "_id", json_stringn((const char *)it->id.ptr, it->id.len));
    if (it->routing.len)
        json_object_set_new(meta, "routing",
                            json_stringn((const char *)it->routing.ptr, it->routing.len));
    if (it->if_seq_no >= 0) {
        json_object_set_new(meta, "if_seq_no", json_integer(it->if_seq_no));
        json_object_set_new(meta, "if_primary_term", json_integer(it->if_primary_term));
    }
    json_t *action = json_object();
    json_object_set_new(action, ops[it->kind], meta);
    json_array_append_new(lines, action);
    if (it->kind != IT_DELETE)
        json_array_append_new(lines, json_stringn((const char *)it->source.ptr, it->source.len));
    return SC_OK;
}

/* Sends the items of node `lead`'s primaries (from index lead on) as one sub-bulk. */
static void forward_group(sc_rest_req *req, bulk_item *items, size_t n, size_t lead, bool *done)
{
    json_t *lines = json_array();
    size_t *map = malloc(n * sizeof *map), nm = 0;
    for (size_t j = lead; map && j < n; j++)
        if (items[j].remote && items[j].pending && !done[j] &&
            strcmp(items[j].loc.node_id, items[lead].loc.node_id) == 0) {
            done[j] = true;
            map[nm++] = j;
            (void)append_item(lines, &items[j]);
        }
    sc_buf body = {0};
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *l = json_array_get(lines, i);
        char *t = json_is_string(l) ? NULL : json_dumps(l, JSON_COMPACT);
        const char *text = t ? t : json_string_value(l);
        size_t len = t ? strlen(t) : json_string_length(l);
        (void)!sc_vec_append(&body, text, len);
        (void)!sc_vec_push(&body, '\n');
        free(t);
    }
    int status = 0;
    json_t *r = NULL;
    sc_status st = map ? sc__api_forward_json(req, &items[lead].loc, "POST", "/_bulk",
                                              sc_slice_make(body.ptr, body.len), &status, &r)
                       : SC_ENOMEM;
    json_t *got = json_object_get(r, "items");
    for (size_t k = 0; k < nm; k++) {
        bulk_item *it = &items[map[k]];
        json_t *one = json_array_get(got, k);
        void *iter = json_is_object(one) ? json_object_iter(one) : NULL;
        if (st == SC_OK && iter)
            it->remote_result = json_incref(json_object_iter_value(iter));
        else
            item_error(it, 503, "node_not_connected_exception",
                       "cannot forward the item to the node holding its primary");
    }
    json_decref(r);
    json_decref(lines);
    sc_vec_free(&body);
    free(map);
}

/* Clustered: items whose primary is on another node go there, one sub-bulk per node. */
static void forward_items(sc_rest_req *req, bulk_item *items, size_t n)
{
    if (!sc_node_placement(req->node) || req->forwarded)
        return;
    for (size_t i = 0; i < n; i++) {
        bulk_item *it = &items[i];
        if (it->kind == IT_BAD || !it->pending)
            continue;
        sc_rest_resp tmp;
        sc_rest_resp_init(&tmp);
        if (!sc__api_locate(req, &tmp, it->ix, it->routing, it->id, &it->loc))
            item_error(it, 503, "unavailable_shards_exception", "primary shard is not active");
        else
            it->remote = !it->loc.local;
        sc_rest_resp_fini(&tmp);
    }
    bool *done = calloc(n ? n : 1, sizeof *done);
    for (size_t i = 0; done && i < n; i++)
        if (items[i].remote && items[i].pending && !done[i])
            forward_group(req, items, n, i, done);
    free(done);
}

typedef struct bulk_ctx {
    sc_doc_write wa;
    sc_refresh_policy rp;
    sc_doc_write *writes;
    sc_doc_result *results;
    size_t *map;
} bulk_ctx;

/* Executes the pending items that are not remote on this node. Runs of consecutive non-update
 * items on the same index form one batch. Items another node wrote (clustered) and failed ones
 * do not end a run: with the primaries spread over the nodes, every other item of a bulk is
 * remote, and cutting the local items into runs of one or two cost one translog fsync each (a
 * 1,000-item bulk to a 6-shard index on 3 nodes took 1.3 s instead of 50 ms;
 * bench/cluster_reindex.py). */
static void run_local(sc_rest_req *req, bulk_item *items, size_t n, bulk_ctx *bc)
{
    size_t i = 0;
    while (i < n) {
        bulk_item *it = &items[i];
        if (it->kind == IT_BAD || it->remote || !it->pending) {
            i++;
            continue;
        }
        if (it->kind == IT_UPDATE) {
            json_error_t jerr;
            json_t *body = sc__api_json_loadb(it->source, &jerr);
            if (!json_is_object(body)) {
                json_decref(body);
                item_error(it, 400, "x_content_parse_exception", "malformed update body");
            } else {
                sc_status st = sc__api_update(req, it->ix, it->id, it->routing, body, &it->r);
                json_decref(body);
                if (st != SC_OK)
                    item_error(it, 500, "exception", sc_status_str(st));
            }
            i++;
            continue;
        }
        size_t nb = 0;
        sc_index *ix = it->ix;
        size_t j = i;
        while (j < n && (items[j].kind == IT_BAD || items[j].remote || !items[j].pending ||
                         (items[j].ix == ix && items[j].kind != IT_UPDATE))) {
            bulk_item *b = &items[j];
            if (b->kind == IT_BAD || b->remote || !b->pending) {
                j++;
                continue;
            }
            bc->writes[nb] = (sc_doc_write){.op = b->kind == IT_INDEX    ? SC_DOC_INDEX
                                                  : b->kind == IT_CREATE ? SC_DOC_CREATE
                                                                         : SC_DOC_DELETE,
                                            .id = b->id,
                                            .routing = b->routing,
                                            .source = b->source,
                                            .if_seq_no = b->if_seq_no,
                                            .if_primary_term = b->if_primary_term,
                                            .refresh = bc->rp != SC_REFRESH_NONE,
                                            .wait_active_set = bc->wa.wait_active_set,
                                            .wait_active = bc->wa.wait_active,
                                            .timeout_ms = bc->wa.timeout_ms,
                                            /* a generated id's first attempt (a retry runs
                                             * as IT_INDEX) */
                                            .new_id = b->auto_id && b->kind == IT_CREATE};
            bc->map[nb++] = j;
            j++;
        }
        uint64_t w0 = sc_clock_now_ns();
        sc_status st = sc_index_write(ix, bc->writes, nb, bc->results, req->arena);
        atomic_fetch_add(&ix->n_index_ops, nb);
        atomic_fetch_add(&ix->index_time_ns, sc_clock_now_ns() - w0);
        for (size_t k = 0; k < nb; k++) {
            if (st == SC_OK)
                items[bc->map[k]].r = bc->results[k];
            else
                item_error(&items[bc->map[k]], st == SC_ELIMIT ? 429 : 500,
                           st == SC_ELIMIT ? "es_rejected_execution_exception" : "exception",
                           sc_status_str(st));
        }
        i = j;
    }
}

/* The item's error type and reason when it failed (NULL type when it did not). */
static const char *item_failure(const bulk_item *it, const char **reason)
{
    if (it->remote_result) {
        json_t *e = json_object_get(it->remote_result, "error");
        *reason = json_string_value(json_object_get(e, "reason"));
        return e ? json_string_value(json_object_get(e, "type")) : NULL;
    }
    *reason = it->r.err.reason;
    return it->r.result ? NULL : it->r.err.type;
}

/* Runs the pending items (forwarding remote ones, then the local ones); on a clustered
 * coordinator, retries the items that failed for want of a primary (a hand-over, a promotion:
 * api/forward.h) against a newer routing until the deadline, then fails them with 503
 * unavailable_shards_exception. */
static void run_with_retries(sc_rest_req *req, bulk_item *items, size_t n, bulk_ctx *bc,
                             uint64_t deadline_ns)
{
    bool retrying = sc_node_placement(req->node) && !req->forwarded;
    for (;;) {
        int64_t rev = sc__api_routing_rev(req);
        forward_items(req, items, n);
        run_local(req, items, n, bc);
        bool again = false;
        for (size_t k = 0; k < n; k++) {
            const char *reason = NULL,
                       *type = items[k].pending ? item_failure(&items[k], &reason) : NULL;
            /* an update whose replication failed may have been applied: not run twice */
            if (type && items[k].kind0 == IT_UPDATE &&
                !strcmp(type, "replication_failed_exception"))
                type = NULL;
            items[k].pending = retrying && sc__api_write_retryable(type, reason);
            again |= items[k].pending;
        }
        if (!again)
            return;
        bool wait_ok = sc__api_retry_wait(req, rev, deadline_ns);
        for (size_t k = 0; k < n; k++) {
            bulk_item *it = &items[k];
            if (!it->pending)
                continue;
            json_decref(it->remote_result);
            it->remote_result = NULL;
            it->remote = false;
            if (!wait_ok) {
                char reason[600];
                sc__api_timeout_reason(
                    req, it->ix->name,
                    sc_index_route(it->ix, it->routing.len ? it->routing : it->id), reason,
                    sizeof reason);
                item_error(it, 503, "unavailable_shards_exception", reason);
                it->pending = false;
                continue;
            }
            /* a generated id is retried as an index operation, as Elasticsearch does: a first
             * attempt that reached a copy must not turn the retry into a version conflict */
            it->kind = it->auto_id ? IT_INDEX : it->kind0;
            memset(&it->r, 0, sizeof it->r);
        }
        if (!wait_ok)
            return;
    }
}

void sc_api_bulk(sc_rest_req *req, sc_rest_resp *resp)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_doc_write wa = {0}; /* wait_for_active_shards and timeout of every item */
    if (!sc__api_wait_active_params(req, resp, &wa))
        return;
    sc_slice rest = req->body;
    /* Items <= lines: size the array once instead of growing it (arena memory is not reused). */
    size_t cap = 1, n = 0;
    for (size_t i = 0; i < rest.len; i++)
        cap += rest.ptr[i] == '\n';
    bulk_item *items = sc_arena_alloc(req->arena, cap * sizeof *items);
    size_t lineno = 0;
    char errbuf[512];
    bool extra_keys = false;
    if (!items) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return;
    }
    while (rest.len) {
        sc_slice line = sc_bulk_next_line(&rest);
        lineno++;
        if (sc_bulk_blank(line))
            continue;
        if (n == cap) {
            bulk_item *bigger = sc_arena_alloc(req->arena, cap * 2 * sizeof *items);
            if (!bigger) {
                sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                              "[request] Data too large for the request budget", NULL, 0);
                goto out;
            }
            memcpy(bigger, items, n * sizeof *items);
            items = bigger;
            cap *= 2;
        }
        bulk_item *it = &items[n];
        memset(it, 0, sizeof *it);
        if (!parse_action(req, line, lineno, it, errbuf, sizeof errbuf, &extra_keys)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception", errbuf, NULL, 0);
            goto out;
        }
        n++;
        if (it->kind != IT_DELETE) {
            if (!rest.len) {
                sc_rest_error(req, resp, 400, "illegal_argument_exception",
                              "The bulk request must be terminated by a newline [\\n]", NULL, 0);
                goto out;
            }
            it->source = sc_bulk_next_line(&rest);
            lineno++;
        }
        if (it->pending_type) {
            item_error(it, 400, it->pending_type, it->pending_reason);
            continue;
        }
        if (!it->index) {
            item_error(it, 400, "action_request_validation_exception",
                       "Validation Failed: 1: index is missing;");
            continue;
        }
        if (it->kind == IT_DELETE || it->kind == IT_UPDATE) {
            if (!it->id.len) {
                item_error(it, 400, "action_request_validation_exception",
                           "Validation Failed: 1: id is missing;");
                continue;
            }
        }
        if (!it->id.len) {
            char *id = sc_arena_alloc(req->arena, 24);
            if (!id) {
                item_error(it, 429, "circuit_breaking_exception", "request budget exceeded");
                continue;
            }
            sc__api_auto_id(id);
            it->id = sc_slice_cstr(id);
            it->kind = IT_CREATE;
            it->auto_id = true;
        }
        if (it->id.len > 512) {
            item_error(it, 400, "illegal_argument_exception",
                       "id is too long, must be no longer than 512 bytes");
            continue;
        }
    }
    if (lineno > 0 && req->body.len && req->body.ptr[req->body.len - 1] != '\n') {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "The bulk request must be terminated by a newline [\\n]", NULL, 0);
        goto out;
    }
    /* Resolve indices (auto-create). */
    for (size_t i = 0; i < n; i++) {
        bulk_item *it = &items[i];
        if (it->kind == IT_BAD)
            continue;
        if (i > 0 && items[i - 1].ix && !strcmp(items[i - 1].index, it->index)) {
            it->ix = items[i - 1].ix;
            sc_index_ref(it->ix);
            it->alias_routing = items[i - 1].alias_routing;
            if (!it->routing.ptr && it->alias_routing)
                it->routing = sc_slice_cstr(it->alias_routing);
            continue;
        }
        sc_cluster_error err;
        const char *alias_routing;
        it->ix = it->kind == IT_DELETE
                     ? sc__api_index_for_doc(req, it->index, true, &alias_routing, &err)
                     : sc__api_index_for_write(req, it->index, &alias_routing, &err);
        it->alias_routing = it->ix ? alias_routing : NULL;
        if (it->ix && !it->routing.ptr && alias_routing)
            it->routing = sc_slice_cstr(alias_routing);
        if (!it->ix && it->kind == IT_DELETE && err.type &&
            !strcmp(err.type, "index_not_found_exception")) {
            it->ix = sc__api_wait_index(req, it->index); /* still being placed or recovered */
            if (!it->ix)
                sc_cluster_error_not_found(&err, it->index);
        }
        if (!it->ix) {
            it->kind = IT_BAD;
            it->r.status = err.status;
            it->r.err = err;
        }
    }
    run_pipelines(req, items, n);
    sc_refresh_policy rp = sc__api_refresh_param(req);
    sc_doc_write *writes = sc_arena_alloc(req->arena, (n ? n : 1) * sizeof *writes);
    sc_doc_result *results = sc_arena_alloc(req->arena, (n ? n : 1) * sizeof *results);
    size_t *map = sc_arena_alloc(req->arena, (n ? n : 1) * sizeof *map);
    if (!writes || !results || !map) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        goto out;
    }
    bulk_ctx bc = {wa, rp, writes, results, map};
    for (size_t k = 0; k < n; k++) {
        items[k].kind0 = items[k].kind;
        items[k].pending = items[k].kind != IT_BAD;
    }
    run_with_retries(req, items, n, &bc, sc__api_write_deadline(req, t0));
    /* Refresh policy, once per distinct index. */
    if (rp != SC_REFRESH_NONE)
        for (size_t k = 0; k < n; k++)
            if (items[k].ix && (k == 0 || items[k - 1].ix != items[k].ix))
                sc_index_refresh_after_write(items[k].ix, rp);
    bool errors = false;
    for (size_t k = 0; k < n; k++)
        errors |= items[k].remote_result ? json_object_get(items[k].remote_result, "error") != NULL
                                         : items[k].r.result == NULL;
    if (extra_keys)
        resp->warning = SC_BULK_EXTRA_KEYS_WARNING;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "took", (int64_t)((sc_clock_now_ns() - t0) / 1000000));
    sc_jsonw_kv_bool(&w, "errors", errors);
    sc_jsonw_key(&w, "items");
    sc_jsonw_arr_begin(&w);
    for (size_t k = 0; k < n; k++) {
        bulk_item *it = &items[k];
        sc_jsonw_obj_begin(&w);
        sc_jsonw_key(&w, it->op_name ? it->op_name : "index");
        if (it->remote_result) {
            sc__api_json_write(&w, it->remote_result);
        } else {
            sc_jsonw_obj_begin(&w);
            sc__api_write_result(&w, it->ix ? it->ix->name : it->index ? it->index : "", it->id,
                                 it->ix, &it->r, true);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
out:
    for (size_t k = 0; k < n; k++) {
        sc_index_unref(items[k].ix);
        json_decref(items[k].remote_result);
    }
}
