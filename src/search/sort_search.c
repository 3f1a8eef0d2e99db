/* sc_search_sorted: the shard-level driver of the field-sorted collector (sort.h) over the
 * query plan of search/internal.h. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "index/bkd.h"
#include "search/internal.h"
#include "search/sort.h"

/* The points of the first sort field in seg (numeric with points), else NULL. */
static const sc_bkd *first_field_points(const sc_segment *seg, const sc_sort_spec *spec,
                                        sc_bkd *storage)
{
    if (spec->kind != SC_SORT_BY_NUMERIC)
        return NULL;
    const sc_field_info *f = sc_segment_field(seg, spec->field);
    if (!f || f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS))
        return NULL;
    return sc_segment_points(seg, f, storage) == SC_OK ? storage : NULL;
}

sc_status sc_search_sorted(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                           const sc_sort_spec *specs, size_t n_specs,
                           const sc_sort_key *search_after, sc_arena *a, sc_search_result *res,
                           sc_sorted_result *out)
{
    memset(res, 0, sizeof *res);
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    sc__search_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.s = s;
    ctx.o = o;
    ctx.a = a;
    ctx.res = res;
    ctx.stats = o->stats;
    ctx.max_clause_count = o->max_clause_count ? o->max_clause_count : SC_QUERY_MAX_CLAUSE_COUNT;
    size_t k = o->from + o->size;
    if (k == 0 && o->track_total_hits == SC_TRACK_TOTAL_HITS_NONE)
        return SC_OK;
    bool scoring = false;
    for (size_t i = 0; i < n_specs; i++)
        scoring |= specs[i].kind == SC_SORT_BY_SCORE;
    scoring |= o->track_scores;
    sc__plan *plan;
    SC_TRY(sc__plan_build(&ctx, q, scoring, &plan));
    sc_sort_collector *c;
    sc_status st = sc_sort_collector_new(a, specs, n_specs, k ? k : 1, search_after, &c);
    if (st != SC_OK)
        return sc__search_fail(&ctx, st, "invalid sort (%zu fields, %zu hits)", n_specs, k);
    /* Points prune once the requested total is known: at once without a total; after
     * track + 1 counted docs for a bounded total (it is then reported as track, gte); never
     * for an exact total. */
    int64_t track = o->track_total_hits;
    bool count_all = track == SC_TRACK_TOTAL_HITS_ALL || track < 0;
    bool prune = !count_all && !o->track_scores; /* the best score is over every match */
    if (o->track_scores)
        sc_sort_collector_track_scores(c);
    if (track != SC_TRACK_TOTAL_HITS_NONE && prune)
        sc_sort_collector_prune_after(c, (uint64_t)track + 1);
    uint64_t base = 0;
    for (size_t si = 0; si < s->n_segs; si++) {
        const sc_searcher_segment *ss = &s->segs[si];
        uint32_t n_docs = sc_segment_n_docs(ss->seg);
        if (o->cancel && sc_cancel_token_check(o->cancel, true))
            break;
        sc_doc_iter *it;
        SC_TRY(sc__plan_iter(&ctx, plan, si, &it));
        if (it && ss->live && ss->n_deleted)
            it = sc_iter_live_docs(a, it, ss->live);
        if (it && o->cancel)
            it = sc_iter_cancel(a, it, o->cancel);
        if (it) {
            sc_doc_iter_set_stats(it, o->stats);
            sc_bkd pts;
            const sc_bkd *p = prune ? first_field_points(ss->seg, &specs[0], &pts) : NULL;
            st = sc_sort_collector_collect(c, ss->seg, (uint32_t)si, base, it, p);
            if (st != SC_OK)
                return sc__search_fail(&ctx, st, "sorting segment %zu failed: %s", si,
                                       sc_status_str(st));
        }
        base += n_docs;
    }
    sc_sorted_hit *hits;
    size_t n = sc_sort_collector_hits(c, &hits);
    if (k == 0)
        n = 0;
    out->stats = *sc_sort_collector_stats(c);
    out->max_score = sc_sort_collector_max_score(c);
    out->hits = n > o->from ? hits + o->from : hits;
    out->n_hits = n > o->from ? n - o->from : 0;
    if (track != SC_TRACK_TOTAL_HITS_NONE) {
        out->total_tracked = true;
        out->total = out->stats.collected;
        if (!count_all)
            sc_search_total_cap(track, &out->total, &out->total_gte);
    }
    if (o->cancel) {
        uint32_t f = atomic_load_explicit(&o->cancel->fired, memory_order_relaxed);
        res->cancelled = f == 1;
        res->timed_out = f == 2;
    }
    return SC_OK;
}
