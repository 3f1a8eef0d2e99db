/* The shard-level query phase (shard_search.h): the search layer's top-k by score or by sort,
 * the total under track_total_hits, the optional collect hook, and typed results copied from the
 * query's scratch arena into the caller's result arena. The fetch phase is in shard_fetch.c. */
#include "shard/internal.h"
#include "shard/shard_search.h"

#include "base/clock.h"
#include "search/profile.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

void sc_shard_searcher_init(const sc_shard_snapshot *snap, sc_searcher_segment *segs,
                            sc_searcher *s)
{
    for (size_t i = 0; i < snap->n_segments; i++) {
        segs[i].seg = snap->segments[i].seg;
        segs[i].live = snap->segments[i].live;
        segs[i].n_deleted = snap->segments[i].live ? snap->segments[i].n_deleted : 0;
    }
    s->segs = segs;
    s->n_segs = snap->n_segments;
}

static void set_err(sc_shard_search_error *e, int status, const char *type, const char *reason)
{
    e->status = status;
    e->type = type;
    snprintf(e->reason, sizeof e->reason, "%s", reason);
}

/* The token's verdict after a pass: 1 cancelled, 2 timed out, 0 neither. */
static uint32_t token_fired(const sc_cancel_token *t)
{
    return t ? atomic_load_explicit(&((sc_cancel_token *)t)->fired, memory_order_relaxed) : 0;
}

/* Top k under the sort (search/sort.h), search_after applied by the collector. */
static sc_status run_sorted(const sc_shard_query_args *a, const sc_searcher *s,
                            sc_search_options *o, sc_arena *scratch, sc_arena *out,
                            sc_shard_query_result *res, sc_search_result *sr)
{
    sc_sorted_result so;
    sc_status st =
        sc_search_sorted(s, a->query, o, a->sort, a->n_sort, a->search_after, scratch, sr, &so);
    if (st != SC_OK || sr->cancelled)
        return st;
    res->total = so.total;
    res->total_gte = so.total_gte;
    res->max_score = so.max_score;
    size_t n = so.n_hits, ns = a->n_sort;
    res->docs = sc_arena_alloc(out, (n ? n : 1) * sizeof *res->docs);
    sc_sort_key *keys = sc_arena_alloc(out, (n ? n : 1) * ns * sizeof *keys);
    if (!res->docs || !keys)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const sc_sorted_hit *h = &so.hits[i];
        memcpy(keys + i * ns, h->values, ns * sizeof *keys);
        res->docs[i] = (sc_shard_top_doc){
            .doc = (uint32_t)h->global_doc, .score = h->score, .sort = keys + i * ns};
    }
    res->n_docs = n;
    return SC_OK;
}

/* Top k by score (ties by doc), or with k == 0 the exact count without scoring. */
static sc_status run_scored(const sc_shard_query_args *a, const sc_searcher *s,
                            sc_search_options *o, sc_arena *scratch, sc_arena *out,
                            sc_shard_query_result *res, sc_search_result *sr)
{
    sc_status st = a->k == 0 && a->track_total_hits != SC_TRACK_TOTAL_HITS_NONE
                       ? sc_search_count(s, a->query, o, scratch, sr)
                       : sc_search_execute(s, a->query, o, scratch, sr);
    if (st != SC_OK || sr->cancelled)
        return st;
    res->total = sr->total;
    res->total_gte = sr->total_gte;
    if (!sr->n_hits)
        return SC_OK;
    res->docs = sc_arena_alloc(out, sr->n_hits * sizeof *res->docs);
    if (!res->docs)
        return SC_ENOMEM;
    for (size_t i = 0; i < sr->n_hits; i++)
        res->docs[i] = (sc_shard_top_doc){
            .doc = (uint32_t)sr->hits[i].global_doc, .score = sr->hits[i].score, .sort = NULL};
    res->n_docs = sr->n_hits;
    return SC_OK;
}

/* The collect hook's pass; with k == 0 its count is the shard's total. */
static sc_status run_hook(const sc_shard_query_args *a, const sc_shard_snapshot *snap,
                          const sc_searcher *s, sc_arena *scratch, sc_arena *out,
                          sc_shard_query_result *res)
{
    sc_shard_collect_call call = {.snapshot = snap,
                                  .searcher = s,
                                  .query = a->query,
                                  .token = a->token,
                                  .scratch = scratch,
                                  .out = out,
                                  .counts_total =
                                      a->k == 0 && a->track_total_hits != SC_TRACK_TOTAL_HITS_NONE};
    uint64_t n = 0;
    sc_status st = a->collect->run(a->collect->ctx, &call, &res->agg_partial, &n, &res->err);
    if (st != SC_OK)
        return st;
    if (a->k == 0) {
        res->total = a->track_total_hits == SC_TRACK_TOTAL_HITS_NONE ? 0 : n;
        res->total_gte = false;
    }
    return SC_OK;
}

/* Fills res->err for a failed pass (unless the hook already did). */
static sc_status fail(sc_status st, const sc_arena *scratch, const char *why,
                      sc_shard_query_result *res)
{
    char reason[256];
    if (scratch->over_budget) {
        snprintf(reason, sizeof reason,
                 "[request] Data too large, data for [<query>] would be larger than the limit "
                 "of [%llu] reserved for it",
                 (unsigned long long)scratch->budget_bytes);
        set_err(&res->err, 429, "circuit_breaking_exception", reason);
        return SC_ELIMIT;
    }
    if (res->err.type)
        return st;
    bool bad_query = st == SC_EUNSUPPORTED || st == SC_EPARSE || st == SC_EINVAL;
    set_err(&res->err, st == SC_ELIMIT || bad_query ? 400 : 500,
            st == SC_ELIMIT ? "illegal_argument_exception"
            : bad_query     ? "query_shard_exception"
                            : "exception",
            why && why[0] ? why : sc_status_str(st));
    return st;
}

sc_status sc_shard_query_run(const sc_shard_query_args *a, sc_arena *scratch, sc_arena *out,
                             sc_shard_query_result *res)
{
    memset(res, 0, sizeof *res);
    res->max_score = NAN;
    const sc_shard_snapshot *snap = a->snapshot;
    sc_searcher_segment *segs =
        sc_arena_alloc(scratch, (snap->n_segments ? snap->n_segments : 1) * sizeof *segs);
    if (!segs)
        return fail(SC_ENOMEM, scratch, NULL, res);
    sc_searcher s;
    sc_shard_searcher_init(snap, segs, &s);
    if (a->terminate_after) {
        char why[256] = "";
        sc_status tst = sc__shard_terminate_after(a->query, a->terminate_after, a->token, segs,
                                                  &s, scratch, &res->terminated_early, why,
                                                  sizeof why);
        if (tst != SC_OK)
            return fail(tst, scratch, why, res);
    }
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = a->k;
    bool rescore = a->n_rescore && !a->n_sort && a->k > 0;
    for (size_t i = 0; rescore && i < a->n_rescore; i++)
        if (a->rescore[i].window_size > o.size)
            o.size = a->rescore[i].window_size; /* the window is rescored even past k */
    o.from = 0;
    o.track_total_hits = a->track_total_hits;
    o.cancel = a->token;
    o.dfs = a->dfs;
    o.track_scores = a->track_scores;
    sc_search_result sr;
    memset(&sr, 0, sizeof sr);
    sc_status st = SC_OK;
    bool hook = a->collect && a->collect->run;
    sc_search_profile prof;
    memset(&prof, 0, sizeof prof);
    if (a->profile)
        o.profile = &prof;
    uint64_t t0 = a->profile ? sc_clock_now_ns() : 0;
    if (!hook || a->k > 0) {
        prof.collector = a->n_sort && a->k > 0     ? "sorted"
                         : a->collapse && a->k > 0 ? "collapse"
                         : a->k > 0                ? "top_docs"
                                                   : "count";
        st = a->n_sort && a->k > 0     ? run_sorted(a, &s, &o, scratch, out, res, &sr)
             : a->collapse && a->k > 0 ? sc__shard_collapse_run(a, &s, &o, scratch, out, res, &sr)
                                       : run_scored(a, &s, &o, scratch, out, res, &sr);
        if (a->profile)
            prof.collector_ns = sc_clock_now_ns() - t0;
        if (st != SC_OK)
            return fail(st, scratch, sr.error, res);
        if (sr.cancelled)
            goto cancelled;
        for (size_t i = 0; rescore && i < a->n_rescore; i++) {
            st = sc__shard_rescore(&a->rescore[i], snap, &s, a->token, scratch, res);
            if (st != SC_OK)
                return fail(st, scratch, NULL, res);
        }
        if (res->n_docs > a->k)
            res->n_docs = a->k;
    }
    if (hook) {
        uint64_t h0 = a->profile ? sc_clock_now_ns() : 0;
        st = run_hook(a, snap, &s, scratch, out, res);
        if (st != SC_OK)
            return fail(st, scratch, NULL, res);
        if (a->profile) {
            prof.aggs_ns = sc_clock_now_ns() - h0;
            if (!prof.collector)
                prof.collector = "aggregations_only";
        }
    }
    if (a->profile && sc_search_profile_copy(out, &prof, &res->profile) != SC_OK)
        return fail(SC_ENOMEM, scratch, NULL, res);
    uint32_t fired = token_fired(a->token);
    if (fired == 1)
        goto cancelled;
    res->timed_out = fired == 2;
    sc_search_total_cap(a->track_total_hits, &res->total, &res->total_gte);
    return SC_OK;
cancelled:
    set_err(&res->err, 400, "task_cancelled_exception", "task cancelled");
    return SC_ECANCELLED;
}
