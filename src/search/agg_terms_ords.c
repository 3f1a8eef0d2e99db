/* The top-level keyword terms fast path (no sub-aggregations): per segment, the ordinal count
 * array (sc_dv_sorted_set_count_batch) is compacted at segment end into its non-zero
 * (ordinal, count) pairs, which are in term order; the shard build merges the segments' lists
 * by term (no hash table, no key copies: terms point into the mapped segments, which the
 * caller holds until the partial is encoded), sorts the merged (term, count) pairs by the
 * order and keeps shard_size of them. */
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

typedef struct seg_list {
    sc_dv_sorted_set ss;
    uint32_t *ords, *counts;
    size_t n;
} seg_list;

struct sc__agg_terms_fast {
    seg_list *segs;
    size_t n_segs, cap;
    uint64_t missing; /* docs without a value (counted under `missing` when set) */
};

typedef struct pair {
    sc_slice term;
    uint64_t count;
} pair;

sc_status sc__agg_terms_fast_seg_end(sc__agg_coll *c, sc__agg_terms_fast **fp,
                                     const sc_dv_sorted_set *ss, const uint32_t *counts)
{
    sc_arena *a = c->ctx->a;
    sc__agg_terms_fast *f = *fp;
    if (!f && !(f = *fp = sc_arena_calloc(a, 1, sizeof *f)))
        return sc__agg_oom(a);
    size_t n_ords = (size_t)sc_dv_sorted_set_n_ords(ss), nz = 0;
    f->missing += counts[0];
    /* min_doc_count 0 lists every term of the segment, matched or not (Elasticsearch) */
    bool all = c->spec->min_doc_count == 0;
    for (size_t o = 1; o <= n_ords; o++)
        nz += all || counts[o] != 0;
    if (!nz)
        return SC_OK;
    if (f->n_segs == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        seg_list *s = sc_arena_alloc(a, cap * sizeof *s);
        if (!s)
            return sc__agg_oom(a);
        if (f->n_segs)
            memcpy(s, f->segs, f->n_segs * sizeof *s);
        f->segs = s;
        f->cap = cap;
    }
    seg_list *l = &f->segs[f->n_segs++];
    l->ss = *ss;
    l->ords = sc_arena_alloc(a, nz * sizeof *l->ords);
    l->counts = sc_arena_alloc(a, nz * sizeof *l->counts);
    if (!l->ords || !l->counts)
        return sc__agg_oom(a);
    l->n = 0;
    for (size_t o = 1; o <= n_ords; o++)
        if (all || counts[o]) {
            l->ords[l->n] = (uint32_t)(o - 1);
            l->counts[l->n++] = counts[o];
        }
    return SC_OK;
}

static int cmp_pairs(const void *x, const void *y, void *ctx)
{
    const sc_agg_spec *spec = ctx;
    const pair *a = x, *b = y;
    int c = 0;
    if (spec->order.kind == SC_AGG_ORDER_COUNT)
        c = (a->count > b->count) - (a->count < b->count);
    else
        c = sc_slice_cmp(a->term, b->term);
    if (spec->order.desc)
        c = -c;
    return c ? c : sc_slice_cmp(a->term, b->term);
}

/* The best `cap` pairs by the order, as a heap whose root is the worst kept; what falls out
 * is summed into *other. */
typedef struct topn {
    pair *h;
    size_t n, cap;
    const sc_agg_spec *spec;
    uint64_t other;
} topn;

static void sift_down(topn *t, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < t->n && cmp_pairs(&t->h[l], &t->h[w], (void *)t->spec) > 0)
            w = l;
        if (r < t->n && cmp_pairs(&t->h[r], &t->h[w], (void *)t->spec) > 0)
            w = r;
        if (w == i)
            return;
        pair x = t->h[i];
        t->h[i] = t->h[w];
        t->h[w] = x;
        i = w;
    }
}

static void offer(topn *t, pair p)
{
    if (!sc_agg_term_filter_bytes(t->spec->term_filter, p.term))
        return; /* excluded terms are not collected: not in sum_other either */
    if (t->n < t->cap) {
        size_t i = t->n++;
        t->h[i] = p;
        while (i && cmp_pairs(&t->h[(i - 1) / 2], &t->h[i], (void *)t->spec) < 0) {
            pair x = t->h[i];
            t->h[i] = t->h[(i - 1) / 2];
            t->h[(i - 1) / 2] = x;
            i = (i - 1) / 2;
        }
        return;
    }
    if (!t->cap || cmp_pairs(&p, &t->h[0], (void *)t->spec) >= 0) {
        t->other += p.count;
        return;
    }
    t->other += t->h[0].count;
    t->h[0] = p;
    sift_down(t, 0);
}

/* Merges the segments' lists by term, offering each (term, total count) to t. */
static sc_status merge(const sc__agg_terms_fast *f, const sc_agg_spec *spec, topn *t)
{
    size_t *pos = calloc(f->n_segs + 1, sizeof *pos);
    /* each segment's current term, read once per advance (the loop compares it at every step) */
    sc_slice *cur = calloc(f->n_segs + 1, sizeof *cur);
    if (!pos || !cur) {
        free(pos);
        free(cur);
        return SC_ENOMEM;
    }
    for (size_t s = 0; s < f->n_segs; s++)
        if (f->segs[s].n)
            cur[s] = sc_dv_sorted_set_term(&f->segs[s].ss, f->segs[s].ords[0]);
    bool missing_done = !spec->has_missing || !f->missing;
    for (;;) {
        sc_slice best = {0};
        bool any = false;
        for (size_t s = 0; s < f->n_segs; s++) {
            if (pos[s] >= f->segs[s].n)
                continue;
            if (!any || sc_slice_cmp(cur[s], best) < 0)
                best = cur[s];
            any = true;
        }
        if (!missing_done && (!any || sc_slice_cmp(spec->missing_bytes, best) < 0)) {
            offer(t, (pair){spec->missing_bytes, f->missing});
            missing_done = true;
            continue;
        }
        if (!any)
            break;
        uint64_t count = 0;
        for (size_t s = 0; s < f->n_segs; s++) {
            if (pos[s] >= f->segs[s].n || !sc_slice_eq(cur[s], best))
                continue;
            count += f->segs[s].counts[pos[s]++];
            if (pos[s] < f->segs[s].n)
                cur[s] = sc_dv_sorted_set_term(&f->segs[s].ss, f->segs[s].ords[pos[s]]);
        }
        if (!missing_done && sc_slice_eq(spec->missing_bytes, best)) {
            count += f->missing;
            missing_done = true;
        }
        offer(t, (pair){best.ptr ? best : sc_slice_make("", 0), count});
    }
    free(pos);
    free(cur);
    return SC_OK;
}

sc_status sc__agg_terms_fast_build(sc__agg_coll *c, const sc__agg_terms_fast *f,
                                   sc_agg_result **out)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    uint32_t shard_size = sc_agg_terms_shard_size(spec, c->ctx->so ? c->ctx->so->n_shards : 1);
    size_t distinct = 1;
    for (size_t s = 0; f && s < f->n_segs; s++)
        distinct += f->segs[s].n;
    topn t = {.cap = distinct < shard_size ? distinct : shard_size, .spec = spec};
    t.h = sc_arena_alloc(a, (t.cap ? t.cap : 1) * sizeof *t.h);
    if (!t.h)
        return sc__agg_oom(a);
    static const sc__agg_terms_fast none = {0};
    SC_TRY(merge(f ? f : &none, spec, &t));
    qsort_r(t.h, t.n, sizeof *t.h, cmp_pairs, (void *)spec);
    sc_agg_result *r = sc__agg_result_new(a, spec, t.n);
    if (!r)
        return sc__agg_oom(a);
    SC_TRY(sc__agg_count_buckets(c->ctx, t.n));
    for (size_t i = 0; i < t.n; i++) {
        r->buckets[i].bkey = t.h[i].term;
        r->buckets[i].doc_count = t.h[i].count;
    }
    r->sum_other = t.other;
    r->shard_size = shard_size;
    *out = r;
    return SC_OK;
}
