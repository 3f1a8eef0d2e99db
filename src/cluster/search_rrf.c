/* Reciprocal rank fusion at the coordinator (rank.rrf and the rrf retriever): the shards'
 * snapshots are pinned once, each sub-search (a query or a kNN clause) runs its query phase
 * over them for its global top rrf_window, and a doc's score is the sum over the sub-searches
 * that rank it of 1 / (rank_constant + rank), ranks from 1 (Elasticsearch's formula). The
 * fused page is fetched from the same pinned snapshots. Totals: the largest sub-search total;
 * aggregations: over the first sub-search's matches (the query of `rank`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/search.h"

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
            st = sc__search_reduce_results(&subs[j], &qreqs[j], &resps[j], arena,
                                           j == 0 ? out : &part);
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
