/* Range / numeric term(s) queries: points (BKD into a bitset) or a lazy doc-values scan,
 * chosen by cost. See range.h. */
#include "search/range.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- doc-values range iterator ---------------------------------------------------------- */

#define DV_STACK 16
#define RUN_SCAN_MAX 4096

typedef struct dv_iter {
    sc_doc_iter base;
    const sc_dv_numeric *dv;
    uint32_t n_docs;
    size_t n;
    const int64_t *lo, *hi;
    int64_t *buf; /* values of multi-valued docs beyond DV_STACK (arena) */
    uint32_t buf_cap;
    sc_arena *arena;
    float score;
    bool windowed; /* one value per doc and one range: scanned a window at a time */
} dv_iter;

/* Docs checked per window of the single-valued scan: the values of 128 consecutive docs are
 * read in one batch (sc_dv_numeric_get_single_batch) and compared in a tight loop, instead of
 * two calls per doc (count, then first value). */
#define DV_WINDOW 128

/* First doc in [d, n_docs) whose only value is in the range (windowed iterators), or n_docs. */
static uint32_t dv_scan_single(const dv_iter *x, uint32_t d)
{
    uint32_t docs[DV_WINDOW];
    int64_t vals[DV_WINDOW];
    uint64_t lo = (uint64_t)x->lo[0], width = (uint64_t)x->hi[0] - lo;
    while (d < x->n_docs) {
        uint32_t m = x->n_docs - d < DV_WINDOW ? x->n_docs - d : DV_WINDOW;
        for (uint32_t i = 0; i < m; i++)
            docs[i] = d + i;
        sc_dv_numeric_get_single_batch(x->dv, docs, m, vals);
        for (uint32_t i = 0; i < m; i++)
            if ((uint64_t)vals[i] - lo <= width) /* lo <= v <= hi in one unsigned compare */
                return d + i;
        d += m;
    }
    return x->n_docs;
}

static inline bool in_ranges(const dv_iter *x, int64_t v)
{
    for (size_t i = 0; i < x->n; i++)
        if (v >= x->lo[i] && v <= x->hi[i])
            return true;
    return false;
}

/* Does doc d have a value in one of the ranges? */
static bool dv_match(dv_iter *x, uint32_t d)
{
    uint32_t c = sc_dv_numeric_count(x->dv, d);
    if (c == 0)
        return false;
    if (c == 1) {
        int64_t v;
        return sc_dv_numeric_first(x->dv, d, &v) && in_ranges(x, v);
    }
    int64_t stack[DV_STACK], *vals = stack;
    if (c > DV_STACK) {
        if (c > x->buf_cap) {
            if (!x->arena) { /* count path: a temporary heap buffer */
                int64_t *tmp = malloc(sizeof(int64_t) * c);
                bool m = false;
                if (tmp) {
                    size_t got = sc_dv_numeric_get(x->dv, d, tmp, c);
                    for (size_t i = 0; i < got && !m; i++)
                        m = in_ranges(x, tmp[i]);
                }
                free(tmp);
                return m;
            }
            int64_t *nb = sc_arena_alloc(x->arena, sizeof(int64_t) * c);
            if (!nb)
                return false; /* arena exhausted: treated as no match (the arena reports its
                                 budget) */
            x->buf = nb;
            x->buf_cap = c;
        }
        vals = x->buf;
    }
    size_t got = sc_dv_numeric_get(x->dv, d, vals, c);
    for (size_t i = 0; i < got; i++)
        if (in_ranges(x, vals[i]))
            return true;
    return false;
}

/* First matching doc >= d, or END; positions the iterator. */
static uint32_t dv_from(sc_doc_iter *it, uint32_t d)
{
    dv_iter *x = (dv_iter *)it;
    it->positioned = true;
    if (x->windowed)
        d = d < x->n_docs ? dv_scan_single(x, d) : d;
    else
        while (d < x->n_docs && !dv_match(x, d))
            d++;
    return it->doc = d < x->n_docs ? d : SC_DOC_END;
}

static uint32_t dv_next(sc_doc_iter *it)
{
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    return dv_from(it, it->positioned ? it->doc + 1 : 0);
}

static uint32_t dv_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return dv_from(it, target);
}

static uint64_t dv_cost(const sc_doc_iter *it)
{
    return ((const dv_iter *)it)->n_docs;
}

static void dv_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    dv_iter *x = (dv_iter *)it;
    if (!it->positioned)
        dv_from(it, 0);
    uint32_t d = it->doc;
    if (d == SC_DOC_END)
        return;
    uint32_t to = upto < x->n_docs ? upto : x->n_docs;
    if (d < to) {
        sc_bitset_set(bs, d - base);
        for (d = d + 1; d < to; d++)
            if (dv_match(x, d))
                sc_bitset_set(bs, d - base);
    }
    dv_from(it, d);
}

static uint32_t dv_run_end(sc_doc_iter *it)
{
    dv_iter *x = (dv_iter *)it;
    uint32_t d = it->doc;
    if (d == SC_DOC_END)
        return SC_DOC_END;
    uint32_t lim = x->n_docs - d > RUN_SCAN_MAX ? d + RUN_SCAN_MAX : x->n_docs;
    uint32_t e = d + 1;
    while (e < lim && dv_match(x, e))
        e++;
    return e;
}

static size_t dv_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    dv_iter *x = (dv_iter *)it;
    size_t n = 0;
    uint32_t d = it->positioned ? (it->doc == SC_DOC_END ? x->n_docs : it->doc + 1) : 0;
    for (; n < max && d < x->n_docs; d++)
        if (x->windowed ? (d = dv_scan_single(x, d)) < x->n_docs : dv_match(x, d)) {
            docs[n] = d;
            if (freqs)
                freqs[n] = 1;
            n++;
        }
    it->positioned = true;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static float dv_score(sc_doc_iter *it)
{
    return ((dv_iter *)it)->score;
}

static float dv_max_score(sc_doc_iter *it, uint32_t upto)
{
    (void)upto;
    return ((dv_iter *)it)->score;
}

static uint32_t dv_shallow(sc_doc_iter *it, uint32_t target)
{
    (void)it;
    (void)target;
    return SC_DOC_END;
}

static size_t dv_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t n = dv_next_batch(it, docs, NULL, max);
    for (size_t i = 0; i < n; i++)
        scores[i] = ((dv_iter *)it)->score;
    return n;
}

static const sc_doc_iter_ops dv_ops = {
    "dv_range",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    dv_next,
    dv_advance,
    dv_cost,
    dv_into_bitset,
    dv_run_end,
    dv_next_batch,
    dv_score,
    dv_max_score,
    dv_shallow,
    sc_doc_iter_ignore_min_score,
    dv_score_batch,
};

static bool copy_ranges(sc_arena *a, const int64_t *lo, const int64_t *hi, size_t n, int64_t **olo,
                        int64_t **ohi)
{
    *olo = sc_arena_alloc(a, sizeof(int64_t) * (n ? n : 1));
    *ohi = sc_arena_alloc(a, sizeof(int64_t) * (n ? n : 1));
    if (!*olo || !*ohi)
        return false;
    if (n) {
        memcpy(*olo, lo, sizeof(int64_t) * n);
        memcpy(*ohi, hi, sizeof(int64_t) * n);
    }
    return true;
}

sc_doc_iter *sc_iter_dv_range(sc_arena *a, const sc_dv_numeric *dv, uint32_t n_docs,
                              const int64_t *lo, const int64_t *hi, size_t n, float score)
{
    dv_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    int64_t *l, *h;
    if (!copy_ranges(a, lo, hi, n, &l, &h))
        return NULL;
    x->base.ops = &dv_ops;
    x->dv = dv;
    x->n_docs = dv ? n_docs : 0;
    x->n = n;
    x->lo = l;
    x->hi = h;
    x->arena = a;
    x->score = score;
    x->windowed = dv && n == 1 && sc_dv_numeric_is_single(dv) && l[0] <= h[0];
    return &x->base;
}

/* ---- choice ----------------------------------------------------------------------------- */

static sc_status points_bitset(sc_arena *a, const sc_range_source *src, const int64_t *lo,
                               const int64_t *hi, size_t n, sc_bitset **out)
{
    uint32_t bits = src->n_docs > src->bkd->doc_bound ? src->n_docs : src->bkd->doc_bound;
    sc_bitset *bs = sc_arena_alloc(a, sizeof *bs);
    uint64_t *words = sc_arena_calloc(a, sc_bitset_words_for(bits) ? sc_bitset_words_for(bits) : 1,
                                      sizeof(uint64_t));
    if (!bs || !words)
        return SC_ENOMEM;
    bs->words = words;
    bs->n_bits = bits;
    for (size_t i = 0; i < n; i++)
        SC_TRY(sc_bkd_intersect(src->bkd, lo[i], hi[i], bs, 0, NULL));
    *out = bs;
    return SC_OK;
}

/* A range matching few docs gets its doc ids in a sorted array instead of a bitset over the
 * whole segment (Lucene's DocIdSetBuilder does the same below maxDoc / 128 matches): the
 * leaves are in value order, so the ones overlapping [lo, hi] are a run found by a binary
 * search over the leaf cells; each is decoded and its matching docs kept, then sorted and
 * deduplicated (a multi-valued doc may match twice). Measured (bench/topk_bench.c, 1M docs, a
 * one-hour date range of ~23 docs): 8.6 µs through the bitset (125 KB zeroed and scanned),
 * 2.1 µs this way. */
#define SPARSE_DIV 128

/* Sorts v[0, n) ascending: LSD radix by bytes over the bytes doc_bound needs (tmp has room
 * for n). qsort cost 12 µs for 548 docs here, the radix passes about 2 µs. */
static void sort_docs(uint32_t *v, uint32_t *tmp, size_t n, uint32_t doc_bound)
{
    uint32_t *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 32 && (shift == 0 || (doc_bound - 1) >> shift); shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[((src[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            cnt[b + 1] += cnt[b];
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 255]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, sizeof(uint32_t) * n);
}

sc_status sc_range_points_docs(sc_arena *a, const sc_bkd *t, const int64_t *lo, const int64_t *hi,
                               size_t n, uint64_t est, uint32_t **out, size_t *out_n)
{
    uint32_t ls = t->leaf_size;
    size_t cap = (size_t)est + 2 * ls; /* the estimate counts whole crossing leaves */
    uint32_t *docs = sc_arena_alloc(a, sizeof(uint32_t) * cap);
    uint32_t *ld = sc_arena_alloc(a, sizeof(uint32_t) * ls);
    int64_t *lv = sc_arena_alloc(a, sizeof(int64_t) * ls);
    if (!docs || !ld || !lv)
        return SC_ENOMEM;
    size_t m = 0;
    for (size_t r = 0; r < n; r++) {
        if (lo[r] > hi[r])
            continue;
        uint32_t j0, j1;
        sc_bkd_leaf_span(t, lo[r], hi[r], &j0, &j1);
        for (uint32_t j = j0; j < j1; j++) {
            uint32_t k;
            uint8_t kind;
            SC_TRY(sc_bkd_leaf_read(t, j, ld, lv, &k, &kind));
            if (m + k > cap) { /* more than estimated: grow (arena; the old block is dropped) */
                size_t ncap = (m + k) * 2;
                uint32_t *nd = sc_arena_alloc(a, sizeof(uint32_t) * ncap);
                if (!nd)
                    return SC_ENOMEM;
                memcpy(nd, docs, sizeof(uint32_t) * m);
                docs = nd;
                cap = ncap;
            }
            for (uint32_t i = 0; i < k; i++)
                if (lv[i] >= lo[r] && lv[i] <= hi[r])
                    docs[m++] = ld[i];
        }
    }
    uint32_t *tmp = sc_arena_alloc(a, sizeof(uint32_t) * (m ? m : 1));
    if (!tmp)
        return SC_ENOMEM;
    sort_docs(docs, tmp, m, t->doc_bound ? t->doc_bound : 1);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || docs[i] != docs[u - 1])
            docs[u++] = docs[i];
    *out = docs;
    *out_n = u;
    return SC_OK;
}

/* The docs[0, n) iterator with every score `score`. */
static sc_doc_iter *docs_iter(sc_arena *a, const uint32_t *docs, size_t n, float score)
{
    float *sc = sc_arena_alloc(a, sizeof(float) * (n ? n : 1));
    if (!sc)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sc[i] = score;
    return sc_iter_docs(a, docs, sc, n);
}

static uint64_t estimate(const sc_bkd *t, const int64_t *lo, const int64_t *hi, size_t n)
{
    uint64_t est = 0;
    for (size_t i = 0; i < n; i++)
        est += lo[i] <= hi[i] ? sc_bkd_estimate(t, lo[i], hi[i]) : 0;
    return est;
}

sc_status sc_range_iter(sc_arena *a, const sc_range_source *src, const int64_t *lo,
                        const int64_t *hi, size_t n, uint64_t lead_cost, float score,
                        sc_range_strategy strategy, sc_doc_iter **out, bool *used_points)
{
    bool points = src->bkd != NULL;
    if (src->bkd && src->dv) {
        if (strategy == SC_RANGE_DOC_VALUES) {
            points = false;
        } else if (strategy == SC_RANGE_AUTO && lead_cost != UINT64_MAX) {
            uint64_t est = 0;
            for (size_t i = 0; i < n; i++)
                est += sc_bkd_estimate(src->bkd, lo[i], hi[i]);
            points = !(est / 8 > lead_cost);
        }
    }
    if (used_points)
        *used_points = points;
    if (points) {
        uint64_t est = estimate(src->bkd, lo, hi, n);
        if (est < src->n_docs / SPARSE_DIV || strategy == SC_RANGE_POINTS_LIST) {
            uint32_t *docs;
            size_t m;
            SC_TRY(sc_range_points_docs(a, src->bkd, lo, hi, n, est, &docs, &m));
            *out = docs_iter(a, docs, m, score);
        } else {
            sc_bitset *bs;
            SC_TRY(points_bitset(a, src, lo, hi, n, &bs));
            *out = sc_iter_bitset(a, bs, src->n_docs, score);
        }
    } else {
        *out = sc_iter_dv_range(a, src->dv, src->n_docs, lo, hi, n, score);
    }
    return *out ? SC_OK : SC_ENOMEM;
}

sc_status sc_range_count(const sc_range_source *src, int64_t lo, int64_t hi, const sc_bitset *live,
                         uint64_t limit, uint64_t *count, bool *exact)
{
    *count = 0;
    if (exact)
        *exact = true;
    if (lo > hi)
        return SC_OK;
    if (src->bkd) {
        const sc_bkd *t = src->bkd;
        if (!live && sc_bkd_single_valued(t) && !limit)
            return sc_bkd_count(t, lo, hi, count);
        sc_bitset bs;
        uint32_t bits = src->n_docs > t->doc_bound ? src->n_docs : t->doc_bound;
        SC_TRY(sc_bitset_init(&bs, bits ? bits : 1));
        sc_bkd_stats st;
        sc_status s = sc_bkd_intersect(t, lo, hi, &bs, limit, &st);
        if (s == SC_OK) {
            size_t nw = sc_bitset_words_for(src->n_docs);
            if (live) {
                size_t lw = sc_bitset_words_for(live->n_bits);
                sc_bitset_and_words(&bs, live, 0, nw < lw ? nw : lw);
                if (lw < nw)
                    for (size_t w = lw; w < nw; w++)
                        bs.words[w] = 0;
            }
            *count = sc_bitset_count_range(&bs, 0, src->n_docs);
            if (exact)
                *exact = !st.terminated;
        }
        sc_bitset_fini(&bs);
        return s;
    }
    if (!src->dv)
        return SC_OK;
    int64_t l[1] = {lo}, h[1] = {hi};
    dv_iter x = {.dv = src->dv, .n_docs = src->n_docs, .n = 1, .lo = l, .hi = h};
    int64_t big[256];
    x.buf = big;
    x.buf_cap = 256;
    uint64_t c = 0;
    for (uint32_t d = 0; d < src->n_docs; d++) {
        if (live && (d >= live->n_bits || !sc_bitset_test(live, d)))
            continue;
        if (dv_match(&x, d)) {
            c++;
            if (limit && c >= limit) {
                if (exact)
                    *exact = d + 1 >= src->n_docs;
                break;
            }
        }
    }
    *count = c;
    return SC_OK;
}

sc_status sc_range_segment_iter(sc_arena *a, const sc_segment *seg, sc_slice field,
                                const int64_t *lo, const int64_t *hi, size_t n, uint64_t lead_cost,
                                uint64_t needed, float score, sc_doc_iter **out, char *err,
                                size_t err_cap)
{
    *out = NULL;
    const sc_field_info *f = sc_segment_field(seg, field);
    if (!f)
        return SC_OK;
    if (f->kind != SC_FIELD_NUMERIC) {
        if (err && err_cap)
            snprintf(err, err_cap, "field [%.*s] is not numeric: range needs a numeric field",
                     (int)field.len, (const char *)field.ptr);
        return SC_EINVAL;
    }
    sc_bkd *bkd = sc_arena_alloc(a, sizeof *bkd);
    sc_dv_numeric *dv = sc_arena_alloc(a, sizeof *dv);
    if (!bkd || !dv)
        return SC_ENOMEM;
    sc_range_source src = {NULL, NULL, sc_segment_n_docs(seg)};
    sc_status st = SC_ENOTFOUND;
    if (f->flags & SC_FIELD_POINTS)
        st = sc_segment_points(seg, f, bkd);
    if (st == SC_OK)
        src.bkd = bkd;
    else if (st != SC_ENOTFOUND)
        return st;
    st = sc_dv_numeric_open(seg, f, dv);
    if (st == SC_OK)
        src.dv = dv;
    else if (st != SC_ENOTFOUND)
        return st;
    if (!src.bkd && !src.dv)
        return SC_OK;
    sc_range_strategy strategy = SC_RANGE_AUTO;
    if (needed && src.bkd && src.dv && needed < src.n_docs) {
        uint64_t est = 0;
        for (size_t i = 0; i < n; i++)
            est += sc_bkd_estimate(src.bkd, lo[i], hi[i]);
        /* docs a scan checks to find `needed` matches at the estimated density */
        uint64_t scan = est ? needed * (uint64_t)src.n_docs / est : UINT64_MAX;
        if (est && scan < est / 4)
            strategy = SC_RANGE_DOC_VALUES;
    }
    return sc_range_iter(a, &src, lo, hi, n, lead_cost, score, strategy, out, NULL);
}

sc_status sc_range_segment_count(const sc_segment *seg, sc_slice field, int64_t lo, int64_t hi,
                                 uint64_t *count, bool *done)
{
    *count = 0;
    *done = false;
    const sc_field_info *f = sc_segment_field(seg, field);
    if (!f || f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS))
        return SC_OK;
    sc_bkd t;
    sc_status st = sc_segment_points(seg, f, &t);
    if (st == SC_ENOTFOUND)
        return SC_OK;
    if (st != SC_OK)
        return st;
    if (!sc_bkd_single_valued(&t))
        return SC_OK;
    if (lo <= hi)
        SC_TRY(sc_bkd_count(&t, lo, hi, count));
    *done = true;
    return SC_OK;
}

sc_status sc_range_segment_excluded(sc_arena *a, const sc_segment *seg, sc_slice field, int64_t lo,
                                    int64_t hi, uint32_t **out, size_t *n_out, bool *done)
{
    *out = NULL;
    *n_out = 0;
    *done = false;
    const sc_field_info *f = sc_segment_field(seg, field);
    if (!f || f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS) || lo > hi)
        return SC_OK;
    sc_bkd t;
    sc_status st = sc_segment_points(seg, f, &t);
    if (st == SC_ENOTFOUND)
        return SC_OK;
    if (st != SC_OK)
        return st;
    uint32_t n_docs = sc_segment_n_docs(seg);
    if (!sc_bkd_single_valued(&t) || sc_bkd_n_docs(&t) != n_docs || n_docs == 0)
        return SC_OK;
    if (lo <= sc_bkd_min(&t) && hi >= sc_bkd_max(&t)) {
        *done = true; /* every doc's one value is inside */
        return SC_OK;
    }
    int64_t xlo[2], xhi[2];
    size_t nx = 0;
    if (lo > INT64_MIN)
        xlo[nx] = INT64_MIN, xhi[nx++] = lo - 1;
    if (hi < INT64_MAX)
        xlo[nx] = hi + 1, xhi[nx++] = INT64_MAX;
    uint64_t est = 0;
    for (size_t i = 0; i < nx; i++)
        est += sc_bkd_estimate(&t, xlo[i], xhi[i]);
    if (est > n_docs / 16)
        return SC_OK;
    SC_TRY(sc_range_points_docs(a, &t, xlo, xhi, nx, est, out, n_out));
    *done = true;
    return SC_OK;
}

/* Whether finding the first k matches of [lo, hi] in doc order by a doc-values scan costs
 * less than intersecting the points into a bitset (every match's doc id decoded and set, then
 * the segment's words scanned). The scan checks about k * n_docs / est docs at the points'
 * estimated density. Measured (bench/topk_bench.c, 1M docs, one date per doc in random order):
 * a windowed doc-values check costs about 1.2 ns per doc, like setting one point's doc id
 * (1.2 ns per match), and the bitset adds about 0.5 ns per 64 docs (alloc, zero, scan), so
 * the scan wins when it checks fewer docs than est + n_docs / 128. Lucene's IndexOrDocValuesQuery
 * makes the same choice per segment, by the cost of what leads (here the number of hits wanted). */
static bool scan_pays(uint64_t k, uint64_t est, uint32_t n_docs)
{
    if (k == 0 || est == 0)
        return est != 0; /* nothing matches: either is free; no hits wanted: see the caller */
    uint64_t scan = k > est ? n_docs : (k * (uint64_t)n_docs + est - 1) / est;
    return scan < est + n_docs / 128;
}

sc_status sc_range_segment_bounded(sc_arena *a, const sc_segment *seg, sc_slice field, int64_t lo,
                                   int64_t hi, const sc_bitset *live, uint64_t limit, uint64_t k,
                                   float score, uint64_t *count, sc_doc_iter **hits,
                                   bool *used_points)
{
    *count = 0;
    *hits = NULL;
    if (used_points)
        *used_points = false;
    const sc_field_info *f = sc_segment_field(seg, field);
    if (!f || f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS))
        return SC_ENOTFOUND;
    sc_bkd *bkd = sc_arena_alloc(a, sizeof *bkd);
    sc_dv_numeric *dv = sc_arena_alloc(a, sizeof *dv);
    if (!bkd || !dv)
        return SC_ENOMEM;
    SC_TRY(sc_segment_points(seg, f, bkd));
    SC_TRY(sc_dv_numeric_open(seg, f, dv)); /* SC_ENOTFOUND without doc values */
    sc_range_source src = {bkd, dv, sc_segment_n_docs(seg)};
    if (lo > hi)
        return SC_OK;
    uint64_t est = sc_bkd_estimate(bkd, lo, hi);
    /* Live docs thin the matches a scan finds: count the deleted share in the density. */
    uint64_t k_scan = k;
    if (live && k && src.n_docs) {
        uint64_t n_live = sc_bitset_count_range(live, 0, src.n_docs);
        k_scan = n_live ? k * (uint64_t)src.n_docs / n_live : UINT64_MAX / 2;
    }
    /* The count up to `limit` intersects up to `limit` points anyway: when that is most of the
     * range, the points bitset answers the count and the hits at once. */
    bool points = !scan_pays(k_scan, est, src.n_docs) || (limit && limit >= est / 2);
    if (points && k == 0 && limit == 0)
        return SC_OK; /* neither hits nor a count asked for */
    if (points) {
        if (used_points)
            *used_points = true;
        if (est < src.n_docs / SPARSE_DIV) {
            uint32_t *docs;
            size_t m;
            SC_TRY(sc_range_points_docs(a, bkd, &lo, &hi, 1, est, &docs, &m));
            if (limit)
                for (size_t i = 0; i < m; i++)
                    *count += !live || (docs[i] < live->n_bits && sc_bitset_test(live, docs[i]));
            *hits = docs_iter(a, docs, m, score);
            return *hits ? SC_OK : SC_ENOMEM;
        }
        sc_bitset *bs;
        SC_TRY(points_bitset(a, &src, &lo, &hi, 1, &bs));
        if (live) {
            size_t nw = sc_bitset_words_for(src.n_docs);
            size_t lw = sc_bitset_words_for(live->n_bits);
            sc_bitset_and_words(bs, live, 0, nw < lw ? nw : lw);
            for (size_t w = lw; w < nw; w++)
                bs->words[w] = 0;
        }
        if (limit)
            *count = sc_bitset_count_range(bs, 0, src.n_docs);
        *hits = sc_iter_bitset(a, bs, src.n_docs, score);
        return *hits ? SC_OK : SC_ENOMEM;
    }
    if (limit)
        SC_TRY(sc_range_count(&src, lo, hi, live, limit, count, NULL));
    int64_t l[1] = {lo}, h[1] = {hi};
    *hits = sc_iter_dv_range(a, dv, src.n_docs, l, h, 1, score);
    return *hits ? SC_OK : SC_ENOMEM;
}

bool sc_range_bounds(bool has_lo, int64_t lo, bool lo_incl, bool has_hi, int64_t hi, bool hi_incl,
                     int64_t *out_lo, int64_t *out_hi)
{
    int64_t l = INT64_MIN, h = INT64_MAX;
    if (has_lo) {
        if (!lo_incl) {
            if (lo == INT64_MAX)
                return false;
            lo++;
        }
        l = lo;
    }
    if (has_hi) {
        if (!hi_incl) {
            if (hi == INT64_MIN)
                return false;
            hi--;
        }
        h = hi;
    }
    *out_lo = l;
    *out_hi = h;
    return l <= h;
}
