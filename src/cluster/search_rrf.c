/* Reciprocal rank fusion at the coordinator (rank.rrf and the rrf retriever): the shards'
 * snapshots are pinned once, each sub-search (a query or a kNN clause) runs its query phase
 * over them for its global top rrf_window, and a doc's score is the sum over the sub-searches
 * that rank it of 1 / (rank_constant + rank), ranks from 1 (Elasticsearch's formula). The
 * fused page is fetched from the same pinned snapshots. Totals: the largest sub-search total;
 * aggregations: over the first sub-search's matches (the query of `rank`). Across nodes
 * (sc__search_run_rrf_dist) one query phase per data node runs every sub-search on the same
 * snapshots of its shards (the first as the search's query, the others with
 * sc_node_query_rrf_more) and answers each ranked list; the coordinator fuses them
 * (search_dist_reduce.c) and fetches the page from those snapshots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/search.h"
#include "cluster/search_internal.h"

typedef struct fused {
    uint32_t shard_ix, doc;
    float score;
} fused;

static int cmp_doc(const void *pa, const void *pb)
{
    const fused *a = pa, *b = pb;
    if (a->shard_ix != b->shard_ix)
        return a->shard_ix < b->shard_ix ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

static int cmp_score(const void *pa, const void *pb)
{
    const fused *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return cmp_doc(pa, pb);
}

sc_status sc__search_pin_all(const sc_search_request *sr, const sc_shard_snapshot ***pins,
                             size_t *n_pins)
{
    size_t n = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        n += sr->indices[i]->settings.number_of_shards;
    *n_pins = n;
    *pins = calloc(n ? n : 1, sizeof **pins);
    if (!*pins)
        return SC_ENOMEM;
    size_t p = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        for (uint32_t s = 0; s < sr->indices[i]->settings.number_of_shards; s++, p++)
            if (sr->indices[i]->shards && sr->indices[i]->shards[s])
                (*pins)[p] = sc_shard_searcher_acquire(sr->indices[i]->shards[s]);
    return SC_OK;
}

/* Sums the contributions of every sub-search's ranked hits into one list, best first. */
static sc_status fuse(const sc_search_request *sr, const sc_node_query_response *resps,
                      sc_arena *arena, fused **out, size_t *n_out)
{
    size_t total = 0;
    for (size_t j = 0; j < sr->n_rrf; j++)
        total += resps[j].n_top;
    fused *f = sc_arena_alloc(arena, (total + 1) * sizeof *f);
    if (!f)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t n = 0;
    for (size_t j = 0; j < sr->n_rrf; j++)
        for (size_t r = 0; r < resps[j].n_top && r < sr->rrf_window; r++)
            f[n++] = (fused){resps[j].top[r].shard_ix, resps[j].top[r].doc,
                             1.0f / (float)((double)sr->rrf_rank_constant + (double)(r + 1))};
    qsort(f, n, sizeof *f, cmp_doc);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && f[m - 1].shard_ix == f[i].shard_ix && f[m - 1].doc == f[i].doc)
            f[m - 1].score += f[i].score;
        else
            f[m++] = f[i];
    }
    qsort(f, m, sizeof *f, cmp_score);
    *out = f;
    *n_out = m;
    return SC_OK;
}

/* Runs sub-search j's query phase into *resp. */
static sc_status run_sub(sc_node *n, const sc_search_request *sr, size_t j,
                         const sc_shard_snapshot *const *pins, sc_node_query_request *qreq,
                         sc_search_request *sub, sc_arena *arena, sc_node_query_response *resp)
{
    *sub = *sr;
    sub->queries = (sc_query **)&sr->rrf_queries[j * sr->n_indices];
    sub->pinned = pins;
    sub->from = 0;
    sub->size = sr->rrf_window;
    sub->sort = NULL, sub->n_sort = 0, sub->search_after = NULL;
    sub->collect = j == 0 ? sr->collect : NULL; /* aggregations over the first sub-search */
    sub->n_rrf = 0;
    qreq->search = sub;
    qreq->k = sr->rrf_window;
    qreq->collect = sub->collect;
    return sc_node_query_phase(n, qreq, arena, resp);
}

sc_status sc__search_run_rrf(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                             sc_search_response *out)
{
    sc_shard_target *targets;
    size_t nt, n_pins = 0;
    SC_TRY(sc__search_build_targets(sr, arena, &targets, &nt));
    const sc_shard_snapshot **own_pins = NULL;
    if (!sr->pinned)
        SC_TRY(sc__search_pin_all(sr, &own_pins, &n_pins));
    const sc_shard_snapshot *const *pins = sr->pinned ? sr->pinned : own_pins;
    uint64_t deadline =
        sr->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)sr->timeout_ms * 1000000 : 0;
    sc_cancel_token local_token;
    sc_cancel_token *token = sr->task ? &sr->task->token : &local_token;
    if (sr->task)
        token->deadline_ns = deadline;
    else
        sc_cancel_token_init(&local_token, deadline);
    sc_node_query_request *qreqs = sc_arena_calloc(arena, sr->n_rrf, sizeof *qreqs);
    sc_search_request *subs = sc_arena_calloc(arena, sr->n_rrf, sizeof *subs);
    sc_node_query_response *resps = sc_arena_calloc(arena, sr->n_rrf, sizeof *resps);
    sc_status st = qreqs && subs && resps ? SC_OK : SC_ENOMEM;
    size_t ran = 0;
    for (size_t j = 0; st == SC_OK && j < sr->n_rrf; j++, ran++) {
        qreqs[j] = (sc_node_query_request){
            .targets = targets, .n_targets = nt, .deadline_ns = deadline, .token = token};
        st = run_sub(n, sr, j, pins, &qreqs[j], &subs[j], arena, &resps[j]);
        sc_search_response part;
        memset(&part, 0, sizeof part);
        if (st == SC_OK)
            st = sc__search_reduce_results(&subs[j], &qreqs[j], &resps[j], sc_node_id(n),
                                           arena, j == 0 ? out : &part);
        if (st == SC_OK && j > 0 && part.total > out->total) {
            out->total = part.total;
            out->total_is_lower_bound = part.total_is_lower_bound;
        }
        out->timed_out |= part.timed_out;
    }
    fused *f = NULL;
    size_t nf = 0;
    if (st == SC_OK)
        st = fuse(sr, resps, arena, &f, &nf);
    out->max_score = NAN;
    if (st == SC_OK && nf) {
        out->max_score = f[0].score;
        /* the fused ranking becomes the first sub-search's top list for the fetch phase */
        sc_node_hit *top = sc_arena_alloc(arena, nf * sizeof *top);
        if (!top)
            st = SC_ENOMEM;
        for (size_t i = 0; top && i < nf; i++)
            top[i] = (sc_node_hit){.score = f[i].score, .shard_ix = f[i].shard_ix, .doc = f[i].doc};
        sc_node_query_response view = resps[0];
        view.top = top;
        view.n_top = nf;
        size_t from = sr->from < nf ? sr->from : nf;
        size_t nh = nf - from < sr->size ? nf - from : sr->size;
        if (st == SC_OK && nh)
            st = sc__search_fetch_hits(n, sr, &qreqs[0], &view, from, nh, arena, out);
    }
    for (size_t j = 0; j < ran; j++)
        sc_node_query_release(&qreqs[j], &resps[j]);
    for (size_t p = 0; p < n_pins; p++)
        if (own_pins[p])
            sc_shard_searcher_release(own_pins[p]);
    free(own_pins);
    return st;
}

sc_status sc_node_query_rrf_more(sc_node *n, const sc_node_query_request *req0,
                                 const sc_node_query_response *resp0, sc_query *const *queries,
                                 size_t n_more, sc_arena *arena, sc_node_ranked *out)
{
    const sc_search_request *sr = req0->search;
    size_t nt = req0->n_targets, n_pins = 0;
    for (size_t t = 0; t < nt; t++)
        if (req0->targets[t].pin_ix + (size_t)1 > n_pins)
            n_pins = req0->targets[t].pin_ix + (size_t)1;
    /* the first sub-search's snapshots, by pin_ix; only its successful, searched shards run */
    const sc_shard_snapshot **pins = sc_arena_calloc(arena, n_pins + 1, sizeof *pins);
    sc_shard_target *ok = sc_arena_calloc(arena, nt + 1, sizeof *ok);
    if (!pins || !ok)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t n_ok = 0;
    for (size_t t = 0; t < nt; t++) {
        const sc_node_shard_result *r = &resp0->results[t];
        if (r->st != SC_OK || r->skipped || !r->snapshot)
            continue;
        pins[req0->targets[t].pin_ix] = r->snapshot;
        ok[n_ok++] = req0->targets[t];
    }
    for (size_t m = 0; m < n_more; m++) {
        sc_search_request sub = *sr;
        sub.queries = (sc_query **)&queries[m * sr->n_indices];
        sub.pinned = pins;
        sub.collect = NULL;
        sub.sort = NULL, sub.n_sort = 0, sub.search_after = NULL;
        sub.rescore = NULL, sub.n_rescore = 0;
        sub.collapse = NULL;
        sub.profile = false;
        sc_node_query_request q = {.search = &sub,
                                   .targets = ok,
                                   .n_targets = n_ok,
                                   .k = req0->k,
                                   .deadline_ns = req0->deadline_ns,
                                   .token = req0->token,
                                   .dfs = req0->dfs};
        sc_node_query_response r;
        sc_status st = sc_node_query_phase(n, &q, arena, &r);
        memset(&out[m], 0, sizeof out[m]);
        if (st == SC_OK) {
            /* the hits outlive the response (no sort keys, no collapse keys to copy) */
            out[m].top = sc_arena_calloc(arena, r.n_top + 1, sizeof *out[m].top);
            if (!out[m].top)
                st = arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
            for (size_t i = 0; out[m].top && i < r.n_top; i++)
                out[m].top[i] = (sc_node_hit){
                    .score = r.top[i].score, .shard_ix = r.top[i].shard_ix, .doc = r.top[i].doc};
            out[m].n_top = out[m].top ? r.n_top : 0;
            for (size_t t = 0; t < n_ok; t++) {
                out[m].total += r.results[t].st == SC_OK ? r.results[t].total : 0;
                out[m].total_gte |= r.results[t].total_is_lower_bound;
            }
        }
        sc_node_query_release(&q, &r);
        SC_TRY(st);
    }
    return SC_OK;
}

sc_status sc__search_run_rrf_dist(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                                  sc_search_response *out)
{
    if (!sr->rrf_json || !sr->rrf_knn)
        return SC_EINVAL; /* the API ships every sub-search's JSON */
    /* the first sub-search is the search's query (its aggregations too); the others travel
     * with it and run on the same snapshots of each data node */
    sc_search_request s = *sr;
    s.queries = (sc_query **)sr->rrf_queries;
    s.query_json = sr->rrf_knn[0] ? sc_slice_make(NULL, 0) : sr->rrf_json[0];
    s.knn_clauses = sr->rrf_knn[0] ? &sr->rrf_json[0] : NULL;
    s.n_knn_clauses = sr->rrf_knn[0] ? 1 : 0;
    s.knn_floor = NULL;
    s.post_filter_json = sc_slice_make(NULL, 0); /* as on one node: the sub-searches alone */
    s.alias_filter_json = NULL;
    s.from = sr->from, s.size = sr->size;
    s.sort = NULL, s.n_sort = 0, s.search_after = NULL;
    s.dfs = false;
    sc_shard_target *targets;
    size_t nt;
    SC_TRY(sc__search_build_targets(&s, arena, &targets, &nt));
    uint64_t deadline =
        sr->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)sr->timeout_ms * 1000000 : 0;
    sc_cancel_token local;
    sc_cancel_token *token = sr->task ? &sr->task->token : &local;
    if (sr->task)
        token->deadline_ns = deadline;
    else
        sc_cancel_token_init(&local, deadline);
    /* no can_match: a shard the first sub-search cannot match may rank in another */
    return sc__search_run_dist(n, &s, targets, nt, sr->rrf_window, deadline, token, false, NULL,
                               arena, out);
}
