/* dfs_query_then_fetch's first phase (search.h): the term statistics of the query over every
 * target shard, summed, before the query phase scores with them. On one node the shards are
 * read directly; across nodes, one SC_MSG_NODE_DFS request per data node (the node's copy the
 * query phase will start on) answers with its shards' sums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/search_internal.h"
#include "cluster/search_wire.h"
#include "search/searcher.h"

sc_status sc_search_dfs_node(sc_node *n, const sc_search_request *sr,
                             const sc_shard_target *targets, size_t nt, sc_arena *arena,
                             sc_term_stats *out)
{
    (void)n;
    memset(out, 0, sizeof *out);
    for (size_t t = 0; t < nt; t++) {
        sc_index *ix = sr->indices[targets[t].index_i];
        if (!ix->shards || !ix->shards[targets[t].shard])
            continue; /* the query phase reports the shard */
        const sc_shard_snapshot *snap = sc_shard_searcher_acquire(ix->shards[targets[t].shard]);
        sc_searcher_segment *segs =
            malloc((snap->n_segments ? snap->n_segments : 1) * sizeof *segs);
        sc_status st = segs ? SC_OK : SC_ENOMEM;
        sc_term_stats one;
        if (st == SC_OK) {
            sc_searcher s;
            sc_shard_searcher_init(snap, segs, &s);
            st = sc_term_stats_collect(&s, sr->queries[targets[t].index_i], arena, &one);
        }
        if (st == SC_OK)
            st = sc_term_stats_add(out, &one, arena);
        free(segs);
        sc_shard_searcher_release(snap);
        SC_TRY(st);
    }
    return SC_OK;
}

/* One remote node's statistics, added into out; false when it could not answer. */
static bool dfs_remote(const sc_search_request *sr, sc_transport *t, const sc_shard_location *loc,
                       const sc_shard_target *targets, size_t nt, sc_arena *arena,
                       sc_term_stats *out)
{
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status st = sc__dist_encode_query(sr, targets, nt, 0, false, NULL, sr->timeout_ms, NULL, &b);
    uint8_t *resp = NULL;
    size_t len = 0;
    uint32_t tmo = sr->timeout_ms >= 0 ? (uint32_t)sr->timeout_ms + 1000 : 30000;
    if (st == SC_OK)
        st = sc_transport_request(t, loc->host, loc->port, SC_MSG_NODE_DFS,
                                  sc_slice_make(b.ptr, b.len), tmo, &resp, &len, NULL);
    sc_wire_buf_fini(&b);
    uint8_t *copy = st == SC_OK ? sc_arena_alloc(arena, len ? len : 1) : NULL;
    if (st == SC_OK && !copy)
        st = SC_ENOMEM;
    sc_term_stats got;
    if (st == SC_OK) {
        memcpy(copy, resp, len);
        st = sc_wire_term_stats_decode(copy, len, arena, &got);
    }
    if (st == SC_OK)
        st = sc_term_stats_add(out, &got, arena);
    free(resp);
    if (st != SC_OK)
        sc_log(SC_LOG_WARN, "search", "dfs phase on node [%s] failed: %s", loc->node_id,
               sc_status_str(st));
    return st == SC_OK;
}

sc_status sc__search_dfs_dist(sc_node *n, const sc_search_request *sr,
                              const sc_shard_target *targets, size_t nt, sc_arena *arena,
                              sc_term_stats *out)
{
    memset(out, 0, sizeof *out);
    sc_placement *p = sc_node_placement(n);
    sc_placement_snapshot *snap = sc_placement_acquire(p);
    sc_shard_location *loc = calloc(nt ? nt : 1, sizeof *loc);
    bool *done = calloc(nt ? nt : 1, sizeof *done);
    sc_shard_target *group = calloc(nt ? nt : 1, sizeof *group);
    sc_status st = loc && done && group ? SC_OK : SC_ENOMEM;
    for (size_t t = 0; st == SC_OK && t < nt; t++)
        if (!sc_placement_copy(snap, sr->indices[targets[t].index_i]->name, targets[t].shard, 0,
                               &loc[t]))
            done[t] = true; /* no copy: the query phase reports it */
    /* one request per node: its targets, in order */
    for (size_t t = 0; st == SC_OK && t < nt; t++) {
        if (done[t])
            continue;
        size_t m = 0;
        for (size_t u = t; u < nt; u++)
            if (!done[u] && strcmp(loc[u].node_id, loc[t].node_id) == 0) {
                group[m++] = targets[u];
                done[u] = u != t;
            }
        done[t] = true;
        if (loc[t].local) {
            sc_term_stats one;
            st = sc_search_dfs_node(n, sr, group, m, arena, &one);
            if (st == SC_OK)
                st = sc_term_stats_add(out, &one, arena);
        } else {
            (void)dfs_remote(sr, sc_placement_transport(p), &loc[t], group, m, arena, out);
        }
    }
    free(loc);
    free(done);
    free(group);
    sc_placement_release(snap);
    return st;
}
