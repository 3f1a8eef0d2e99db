/* Field collapsing in a shard's query phase (shard_search.h: sc_shard_collapse): the top k
 * groups by their best doc's score. The top K docs by score are read and kept one per group;
 * when they hold fewer than k groups and more docs match, K grows fourfold and the search
 * runs again. Correct because a group's rank is its best doc's rank: the first k groups met
 * in score order are the top k. */
#include <string.h>

#include "index/docvalues.h"
#include "shard/internal.h"
#include "shard/shard_search.h"

/* The group key of shard-global doc `doc` (missing when it has no value). */
static void group_key(const sc_shard_collapse *c, const sc_shard_snapshot *snap, uint32_t doc,
                      sc_sort_key *k)
{
    memset(k, 0, sizeof *k);
    k->missing = true;
    for (size_t i = 0; i < snap->n_segments; i++) {
        const sc_shard_segment_view *v = &snap->segments[i];
        if (doc < v->doc_base || doc - v->doc_base >= v->n_docs)
            continue;
        uint32_t d = doc - (uint32_t)v->doc_base;
        const sc_field_info *fi = sc_segment_field(v->seg, sc_slice_cstr(c->field));
        if (!fi)
            return;
        if (c->numeric) {
            sc_dv_numeric dv;
            if (fi->kind == SC_FIELD_NUMERIC && sc_dv_numeric_open(v->seg, fi, &dv) == SC_OK &&
                sc_dv_numeric_first(&dv, d, &k->i))
                k->missing = false;
        } else {
            sc_dv_sorted_set dv;
            uint64_t ord;
            if (fi->kind == SC_FIELD_KEYWORD && sc_dv_sorted_set_open(v->seg, fi, &dv) == SC_OK &&
                sc_dv_sorted_set_ords(&dv, d, &ord, 1) == 1) {
                k->s = sc_dv_sorted_set_term(&dv, ord);
                k->missing = false;
            }
        }
        return;
    }
}

static bool same_key(const sc_shard_collapse *c, const sc_sort_key *a, const sc_sort_key *b)
{
    if (a->missing || b->missing)
        return a->missing == b->missing;
    return c->numeric ? a->i == b->i : sc_slice_eq(a->s, b->s);
}

/* Keeps the first doc of each group among hits, up to k groups, into res (from `out`). */
static sc_status keep_groups(const sc_shard_query_args *a, const sc_search_result *sr,
                             sc_arena *out, sc_shard_query_result *res)
{
    res->docs = sc_arena_alloc(out, (a->k ? a->k : 1) * sizeof *res->docs);
    sc_sort_key *keys = sc_arena_alloc(out, (a->k ? a->k : 1) * sizeof *keys);
    if (!res->docs || !keys)
        return out->over_budget ? SC_ELIMIT : SC_ENOMEM;
    res->n_docs = 0;
    for (size_t h = 0; h < sr->n_hits && res->n_docs < a->k; h++) {
        sc_sort_key k;
        group_key(a->collapse, a->snapshot, (uint32_t)sr->hits[h].global_doc, &k);
        bool seen = false;
        for (size_t g = 0; g < res->n_docs && !seen; g++) /* k is a page: small */
            seen = same_key(a->collapse, &keys[g], &k);
        if (seen)
            continue;
        keys[res->n_docs] = k;
        res->docs[res->n_docs] = (sc_shard_top_doc){.doc = (uint32_t)sr->hits[h].global_doc,
                                                    .score = sr->hits[h].score,
                                                    .collapse_key = &keys[res->n_docs]};
        res->n_docs++;
    }
    return SC_OK;
}

sc_status sc__shard_collapse_run(const sc_shard_query_args *a, const sc_searcher *s,
                                 sc_search_options *o, sc_arena *scratch, sc_arena *out,
                                 sc_shard_query_result *res, sc_search_result *sr)
{
    size_t want = a->k * 4 < 64 ? 64 : (size_t)a->k * 4;
    for (;;) {
        o->size = want;
        sc_arena_mark mark = sc_arena_mark_get(scratch);
        SC_TRY(sc_search_execute(s, a->query, o, scratch, sr));
        if (sr->cancelled)
            return SC_OK;
        res->total = sr->total;
        res->total_gte = sr->total_gte;
        SC_TRY(keep_groups(a, sr, out, res));
        bool more = sr->n_hits == want; /* fewer: every match was read */
        if (res->n_docs >= a->k || !more || want >= (size_t)1 << 30)
            return SC_OK;
        sc_arena_rewind(scratch, mark);
        want *= 4;
    }
}
