/* The query rescorer of a shard's query phase (shard_search.h: sc_shard_rescore), as
 * Elasticsearch's QueryRescorer: the window's docs are found again by _id under the rescore
 * query (one sc_search_execute restricted to them), their scores combined, the docs past the
 * window weighted, and the whole list re-sorted (score desc, then doc). */
#include <stdlib.h>
#include <string.h>

#include "index/docvalues.h"
#include "shard/internal.h"
#include "shard/shard_search.h"

/* The _id of shard-global doc `doc` from the `_id` sorted-set doc values. */
static bool doc_id(const sc_shard_snapshot *snap, uint32_t doc, sc_slice *id)
{
    for (size_t i = 0; i < snap->n_segments; i++) {
        const sc_shard_segment_view *v = &snap->segments[i];
        if (doc < v->doc_base || doc - v->doc_base >= v->n_docs)
            continue;
        const sc_field_info *fi = sc_segment_field(v->seg, sc_slice_cstr("_id"));
        sc_dv_sorted_set dv;
        uint64_t ord;
        if (!fi || fi->kind != SC_FIELD_KEYWORD ||
            sc_dv_sorted_set_open(v->seg, fi, &dv) != SC_OK ||
            sc_dv_sorted_set_ords(&dv, doc - (uint32_t)v->doc_base, &ord, 1) != 1)
            return false;
        *id = sc_dv_sorted_set_term(&dv, ord);
        return true;
    }
    return false;
}

static float combine(const sc_shard_rescore *r, float first, bool matched, float second)
{
    float a = first * r->query_weight;
    if (!matched)
        return a;
    float b = second * r->rescore_weight;
    switch (r->mode) {
    case SC_RESCORE_MULTIPLY: return a * b;
    case SC_RESCORE_AVG: return (a + b) / 2;
    case SC_RESCORE_MAX: return a > b ? a : b;
    case SC_RESCORE_MIN: return a < b ? a : b;
    default: return a + b;
    }
}

static int by_score(const void *x, const void *y)
{
    const sc_shard_top_doc *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

sc_status sc__shard_rescore(const sc_shard_rescore *r, const sc_shard_snapshot *snap,
                            const sc_searcher *s, sc_cancel_token *token, sc_arena *scratch,
                            sc_shard_query_result *res)
{
    size_t w = r->window_size < res->n_docs ? r->window_size : res->n_docs, n_ids = 0;
    if (w == 0)
        return SC_OK;
    sc_slice *ids = sc_arena_alloc(scratch, w * sizeof *ids);
    if (!ids)
        return scratch->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < w; i++)
        n_ids += doc_id(snap, res->docs[i].doc, &ids[n_ids]);
    sc_query *b = sc_query_bool(scratch), *only = sc_query_ids(scratch, ids, n_ids);
    if (!b || !only || sc_query_bool_add(scratch, b, SC_OCCUR_FILTER, only) != SC_OK ||
        sc_query_bool_add(scratch, b, SC_OCCUR_MUST, (sc_query *)r->query) != SC_OK)
        return scratch->over_budget ? SC_ELIMIT : SC_ENOMEM;
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = n_ids ? n_ids : 1;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
    o.cancel = token;
    sc_search_result sr;
    memset(&sr, 0, sizeof sr);
    SC_TRY(sc_search_execute(s, b, &o, scratch, &sr));
    for (size_t i = 0; i < res->n_docs; i++) {
        bool matched = false;
        float second = 0;
        for (size_t h = 0; i < w && h < sr.n_hits && !matched; h++)
            if (sr.hits[h].global_doc == res->docs[i].doc) {
                matched = true;
                second = sr.hits[h].score;
            }
        res->docs[i].score = combine(r, res->docs[i].score, matched, second);
    }
    qsort(res->docs, res->n_docs, sizeof *res->docs, by_score);
    return SC_OK;
}
