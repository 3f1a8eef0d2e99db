/* The global kNN phase of a hybrid search (top-level knn with a query; internal.h): each kNN
 * clause first runs alone over the pinned snapshots of every shard, as a kNN-only search
 * keeping its global top k, and the k-th best score becomes the clause's min_score, so in the
 * query phase that follows (on the same snapshots) each shard contributes only its part of
 * the global top k. Elasticsearch does the same in its DFS phase; the shards' graph searches
 * are deterministic on a pinned snapshot, so both runs see the same candidates. Across nodes
 * (sc__search_knn_global_dist) each clause is a kNN-only query phase of the data nodes, and
 * the floors travel with the query phase that follows; the two phases read each shard's
 * current snapshot (no pinning across nodes yet), so a refresh between them may shift the
 * global top k by the docs it adds. */
#include <math.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/search.h"
#include "cluster/search_internal.h"

sc_status sc__search_knn_global(sc_node *n, const sc_search_request *sr,
                                const sc_shard_snapshot *const *pins, sc_arena *arena)
{
    if (sr->n_indices == 0)
        return SC_OK;
    size_t n_clauses = sr->n_knn_global / sr->n_indices;
    for (size_t j = 0; j < n_clauses; j++) {
        sc_query *const *qs = &sr->knn_global[j * sr->n_indices];
        uint32_t k = qs[0]->u.knn.k;
        sc_search_request sub = *sr;
        sub.queries = (sc_query **)qs;
        sub.pinned = pins;
        sub.from = 0;
        sub.size = k;
        sub.sort = NULL, sub.n_sort = 0, sub.search_after = NULL;
        sub.collect = NULL;
        sub.n_rrf = 0;
        sub.n_knn_global = 0;
        sub.knn_cap = k;
        sub.count_only = false;
        sub.track_total_hits = 0;
        sc_shard_target *targets;
        size_t nt;
        SC_TRY(sc__search_build_targets(&sub, arena, &targets, &nt));
        sc_cancel_token local;
        sc_cancel_token *token = sr->task ? &sr->task->token : &local;
        if (!sr->task)
            sc_cancel_token_init(&local, 0);
        sc_node_query_request qreq = {
            .search = &sub, .targets = targets, .n_targets = nt, .k = k, .token = token};
        sc_node_query_response qresp;
        sc_status st = sc_node_query_phase(n, &qreq, arena, &qresp);
        if (st == SC_OK && qresp.n_top >= k && k > 0) {
            /* the node's top list is the global order (best first) */
            float floor = qresp.top[k - 1].score;
            for (size_t i = 0; i < sr->n_indices; i++)
                qs[i]->u.knn.min_score = floor;
        }
        sc_node_query_release(&qreq, &qresp);
        SC_TRY(st);
    }
    return SC_OK;
}

sc_status sc__search_knn_global_dist(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                                     float **floors)
{
    size_t n_clauses = sr->n_indices ? sr->n_knn_global / sr->n_indices : 0;
    *floors = sc_arena_calloc(arena, n_clauses + 1, sizeof **floors);
    if (!*floors)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (n_clauses != sr->n_knn_clauses)
        return SC_EINVAL; /* the API ships one JSON clause per kNN node group */
    for (size_t j = 0; j < n_clauses; j++) {
        sc_query *const *qs = &sr->knn_global[j * sr->n_indices];
        uint32_t k = qs[0]->u.knn.k;
        (*floors)[j] = NAN;
        if (!k)
            continue;
        /* clause j alone: no query, filters, aggregations or page features; size 0 (the
         * merged scores are all the phase needs: no fetch) */
        sc_search_request sub = *sr;
        sub.queries = (sc_query **)qs;
        sub.query_json = sc_slice_make(NULL, 0);
        sub.post_filter_json = sc_slice_make(NULL, 0);
        sub.aggs_json = sc_slice_make(NULL, 0);
        sub.alias_filter_json = NULL;
        sub.knn_clauses = &sr->knn_clauses[j];
        sub.n_knn_clauses = 1;
        sub.knn_floor = NULL;
        sub.from = 0;
        sub.size = 0;
        sub.sort = NULL, sub.n_sort = 0, sub.search_after = NULL;
        sub.collect = NULL;
        sub.n_rrf = 0;
        sub.n_knn_global = 0;
        sub.knn_cap = k;
        sub.count_only = false;
        sub.track_total_hits = 0;
        sub.rescore = NULL, sub.n_rescore = 0, sub.rescore_json = NULL;
        sub.collapse = NULL;
        sub.profile = false;
        sub.dfs = false;
        sc_shard_target *targets;
        size_t nt;
        SC_TRY(sc__search_build_targets(&sub, arena, &targets, &nt));
        sc_cancel_token local;
        sc_cancel_token *token = sr->task ? &sr->task->token : &local;
        uint64_t deadline =
            sr->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)sr->timeout_ms * 1000000 : 0;
        if (sr->task)
            token->deadline_ns = deadline;
        else
            sc_cancel_token_init(&local, deadline);
        sc_search_response part;
        memset(&part, 0, sizeof part);
        SC_TRY(sc__search_run_dist(n, &sub, targets, nt, k, deadline, token, false, NULL, arena,
                                   &part));
        (*floors)[j] = part.knn_kth_score;
        for (size_t i = 0; !isnan(part.knn_kth_score) && i < sr->n_indices; i++)
            qs[i]->u.knn.min_score = part.knn_kth_score;
    }
    return SC_OK;
}
