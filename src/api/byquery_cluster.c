/* _delete_by_query / _update_by_query in a cluster (byquery_cluster.h). A node holds only its
 * allocated copies and writes go to primaries, so the receiving node forwards the request
 * (SC_MSG_REST_FORWARD, itself included) to each node holding a primary of the resolved
 * indices; that node reads and writes its own primaries only, and the answers are summed as
 * one response (counts added, `took` the largest, failures concatenated). */
#include "api/byquery_cluster.h"

#include <stdio.h>
#include <string.h>

#include "api/forward.h"
#include "api/internal.h"
#include "cluster/node.h"
#include "cluster/placement.h"

#define MAX_NODES 256

static void merge_into(json_t *acc, const json_t *r)
{
    static const char *const sums[] = {"total",   "deleted",          "updated",
                                       "created", "batches",          "version_conflicts",
                                       "noops",   "throttled_millis", NULL};
    for (size_t i = 0; sums[i]; i++) {
        const json_t *v = json_object_get(r, sums[i]);
        if (json_is_integer(v))
            json_object_set_new(acc, sums[i],
                                json_integer(json_integer_value(json_object_get(acc, sums[i])) +
                                             json_integer_value(v)));
    }
    json_int_t took = json_integer_value(json_object_get(r, "took"));
    if (took > json_integer_value(json_object_get(acc, "took")))
        json_object_set_new(acc, "took", json_integer(took));
    if (json_is_true(json_object_get(r, "timed_out")))
        json_object_set_new(acc, "timed_out", json_true());
    const json_t *f = json_object_get(r, "failures");
    json_t *af = json_object_get(acc, "failures");
    if (json_is_array(f) && json_is_array(af))
        json_array_extend(af, (json_t *)f);
    const json_t *rr = json_object_get(r, "retries");
    json_t *ar = json_object_get(acc, "retries");
    const char *k;
    json_t *v;
    if (json_is_object(rr) && json_is_object(ar))
        json_object_foreach ((json_t *)rr, k, v)
            if (json_is_integer(v))
                json_object_set_new(ar, k,
                                    json_integer(json_integer_value(json_object_get(ar, k)) +
                                                 json_integer_value(v)));
}

bool sc__byquery_fanout(sc_rest_req *req, sc_rest_resp *resp, const char *source)
{
    sc_placement *p = sc_node_placement(req->node);
    if (!p || req->forwarded)
        return false;
    if (!sc_rest_param_bool(req, "wait_for_completion", true))
        return false; /* a task on this node, through the cluster (byquery_cluster_job.c) */
    sc_resolved res;
    sc_cluster_error err;
    if (sc_node_resolve_read(req->node, source, 0, &res, &err) != SC_OK)
        return false; /* the local run answers the error as on a single node */
    sc_placement_snapshot *s = sc_placement_acquire(p);
    sc_shard_location locs[MAX_NODES];
    size_t n = 0;
    bool missing = false;
    char what[300] = "";
    for (size_t i = 0; i < res.n && !missing; i++)
        for (uint32_t sh = 0; sh < res.list[i]->settings.number_of_shards; sh++) {
            sc_shard_location loc;
            sc_placement_primary(s, res.list[i]->name, sh, &loc);
            if (!loc.assigned) {
                missing = true;
                snprintf(what, sizeof what, "[%s][%u] primary shard is not active",
                         res.list[i]->name, sh);
                break;
            }
            size_t k = 0;
            while (k < n && strcmp(locs[k].node_id, loc.node_id))
                k++;
            if (k == n && n < MAX_NODES)
                locs[n++] = loc;
        }
    sc_placement_release(s);
    sc_resolved_fini(&res);
    if (missing) {
        sc_rest_error(req, resp, 503, "unavailable_shards_exception", what, NULL, 0);
        return true;
    }
    if (n == 0)
        return false;
    json_t *acc = NULL;
    int status = 200;
    json_t *error_body = NULL;
    for (size_t k = 0; k < n; k++) {
        if (locs[k].local) {
            /* this node: through the transport too, as a forwarded request (its own primaries) */
            sc_placement_snapshot *s2 = sc_placement_acquire(p);
            bool ok = sc_placement_addr(s2, locs[k].node_id, locs[k].host, sizeof locs[k].host,
                                        &locs[k].port);
            sc_placement_release(s2);
            if (!ok) {
                json_decref(acc);
                sc_rest_error(req, resp, 503, "node_not_connected_exception",
                              "this node has no transport address yet", NULL, 0);
                return true;
            }
            locs[k].local = false;
        }
        int st = 0;
        json_t *r = NULL;
        if (sc__api_forward_json(req, &locs[k], NULL, NULL, req->body, &st, &r) != SC_OK ||
            !json_is_object(r)) {
            json_decref(r);
            json_decref(acc);
            json_decref(error_body);
            sc_rest_errorf(req, resp, 502, "node_not_connected_exception",
                           "[%s] did not answer the by-query request", locs[k].node_id);
            return true;
        }
        if (json_object_get(r, "error")) { /* the node refused it: answer its error */
            if (!error_body) {
                error_body = r;
                status = st;
            } else {
                json_decref(r);
            }
            continue;
        }
        if (st != 200 && status == 200)
            status = st; /* e.g. a version conflict that aborted */
        if (!acc)
            acc = r;
        else {
            merge_into(acc, r);
            json_decref(r);
        }
    }
    json_t *out = error_body ? error_body : acc;
    if (error_body)
        json_decref(acc);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, status, &w);
    sc__api_json_write(&w, out);
    sc_rest_json_end(req, resp, &w);
    json_decref(out);
    return true;
}

bool sc__byquery_local_primaries(sc_rest_req *req, const sc_resolved *res, uint64_t ***out)
{
    *out = NULL;
    sc_placement *p = sc_node_placement(req->node);
    if (!p || !req->forwarded)
        return true;
    uint64_t **m = sc_arena_calloc(req->arena, res->n ? res->n : 1, sizeof *m);
    if (!m)
        return false;
    sc_placement_snapshot *s = sc_placement_acquire(p);
    bool ok = true;
    for (size_t i = 0; i < res->n && ok; i++) {
        uint32_t ns = res->list[i]->settings.number_of_shards;
        m[i] = sc_arena_calloc(req->arena, (ns + 63) / 64 ? (ns + 63) / 64 : 1, sizeof **m);
        ok = m[i] != NULL;
        for (uint32_t sh = 0; ok && sh < ns; sh++) {
            sc_shard_location loc;
            sc_placement_primary(s, res->list[i]->name, sh, &loc);
            if (loc.local)
                m[i][sh / 64] |= 1ull << (sh % 64);
        }
    }
    sc_placement_release(s);
    *out = m;
    return ok;
}
