/* The int64 sums of the metric aggregations on integer fields (search/agg_metric.c): while the
 * absolute values taken so far add up to less than 2^53 they replace the compensated double
 * sum, then fall back to it. Every result must be bit for bit the compensated path's
 * (sc_agg_shard_options.compensated_sums): avg / sum / stats / extended_stats / value_count at
 * the top level, under terms on a keyword and on a long, and under a histogram (the fused
 * path), over four segments with deletes (one with multi-valued and missing values), for
 * small values (the int64 sums throughout; also checked against the exact integer sums),
 * values that cross 2^53 part way through (the fallback in the middle of a segment; there the
 * compensations are not all zero, so an int64 sum kept past 2^53 would show), values of 2^51
 * and more (the compensated sum from the first one), and a deterministic edge at 2^53.
 * scaled_float fields sum their stored integers (counts of 1 / factor) in int64 too, divided
 * once at the build: the correctly rounded sum of the indexed values, which the compensated
 * sum of value / factor is not (three docs of 0.05 give 0.15000000000000002 there, 0.15
 * here); checked per bucket against the exact integer totals, across shards, and on the
 * fallback (a multi-valued segment).
 * Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

#define N_SEG 4
#define PER_SEG 1500

static char dir[64];
static int seg_no; /* segment directories: one per built segment */

typedef struct built {
    sc_segment *segs[N_SEG];
    sc_bitset lives[N_SEG];
    sc_searcher_segment ss[N_SEG];
    int n;
} built;

static int setup(void **state)
{
    (void)state;
    return fx_begin("agg_intsum", dir, sizeof dir);
}

static int teardown(void **state)
{
    (void)state;
    return fx_end(dir);
}

/* A value of regime r in segment s: 0 small (-2..9); 1 below 2^20, and in segments 1-3 one in
 * 32 odd in [2^50, 2^51) (mostly positive: they pass 2^53 early in segment 1, after segment 0
 * went through the int64 sums, and then the sums lose bits); 3 as 1 with the large values
 * in the multi-valued segment 3 only (the per-value path crosses); 2 up to 2^52 (past the
 * int64 path's value limit from the first value). */
static int64_t value(int r, int s)
{
    if (r == 0)
        return (int64_t)below(12) - 2;
    if (r == 2)
        return (int64_t)(rnd() >> 12) * (below(2) ? 1 : -1);
    if (below(32) || s == 0 || (r == 3 && s != 3))
        return (int64_t)below(1u << 20);
    return (int64_t)(((INT64_C(1) << 50) | (int64_t)(rnd() >> 14)) | 1) * (below(8) ? 1 : -1);
}

/* Four segments of PER_SEG docs: "n" (long; one value a doc in segments 0-2, 0-2 values in
 * segment 3), "g" (long 0..4, one a doc), "k" (keyword k0..k4, one a doc); deletes in all but
 * the first. *exact: the sum of the live docs' "n" values (int64 wraps are not reached). */
static void build(built *b, int r, __int128 *exact)
{
    *exact = 0;
    b->n = N_SEG;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *sb;
        assert_int_equal(sc_segment_builder_new(&sb), SC_OK);
        int64_t(*nv)[2] = calloc(PER_SEG, sizeof *nv);
        uint32_t *nn = calloc(PER_SEG, sizeof *nn);
        assert_non_null(nv);
        assert_non_null(nn);
        for (uint32_t d = 0; d < PER_SEG; d++) {
            nn[d] = s < 3 ? 1 : below(3);
            for (uint32_t i = 0; i < nn[d]; i++)
                nv[d][i] = value(r, s);
            if (nn[d] == 2 && nv[d][0] > nv[d][1]) {
                int64_t t = nv[d][0];
                nv[d][0] = nv[d][1];
                nv[d][1] = t;
            }
            int64_t g = below(5);
            char kw[8];
            snprintf(kw, sizeof kw, "k%u", (unsigned)below(5));
            sc_index_token kt = {sc_slice_cstr(kw), 0};
            fx_tagged tg;
            sc_index_field f[5];
            size_t nf = fx_tagged_fields(&tg, seg_no, d, 0, f);
            if (nn[d])
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, nv[d], nn[d]);
            f[nf++] = fx_numeric("g", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &g, 1);
            f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, &kt, 1);
            assert_int_equal(fx_add(sb, tg.id, f, nf), 0);
        }
        bool live[PER_SEG];
        assert_int_equal(fx_segment_finish(sb, dir, seg_no++, s == 0, 9, &b->segs[s], &b->lives[s],
                                           live, &b->ss[s]),
                         0);
        for (uint32_t d = 0; d < PER_SEG; d++)
            for (uint32_t i = 0; live[d] && i < nn[d]; i++)
                *exact += nv[d][i];
        free(nv);
        free(nn);
    }
}

static void unbuild(built *b)
{
    for (int s = 0; s < b->n; s++) {
        sc_segment_unref(b->segs[s]);
        sc_bitset_fini(&b->lives[s]);
    }
}

/* The metrics on "n" under p: avg, sum, stats, extended_stats, value_count. */
static void metrics(sc_arena *a, sc_agg_spec *p)
{
    fx_agg_add_sub(a, p, fx_agg_spec(a, SC_AGG_AVG, "avg", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, p, fx_agg_spec(a, SC_AGG_SUM, "sum", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, p, fx_agg_spec(a, SC_AGG_STATS, "stats", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, p, fx_agg_spec(a, SC_AGG_EXTENDED_STATS, "es", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, p, fx_agg_spec(a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
}

/* The request: the metrics at the top level, under terms on "k", under terms on "g", and an
 * avg and a stats under a histogram on "g" (alone: the fused histogram path). */
static sc_agg_spec *request(sc_arena *a)
{
    sc_agg_spec *root = fx_agg_spec(a, SC_AGG_ROOT, "", NULL, 0);
    metrics(a, root);
    sc_agg_spec *tk = fx_agg_spec(a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
    metrics(a, tk);
    fx_agg_add_sub(a, root, tk);
    sc_agg_spec *tg = fx_agg_spec(a, SC_AGG_TERMS, "tg", "g", SC_AGG_V_LONG);
    metrics(a, tg);
    fx_agg_add_sub(a, root, tg);
    sc_agg_spec *h = fx_agg_spec(a, SC_AGG_HISTOGRAM, "h", "g", SC_AGG_V_LONG);
    h->interval = 2;
    h->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    fx_agg_add_sub(a, h, fx_agg_spec(a, SC_AGG_AVG, "avg", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, h, fx_agg_spec(a, SC_AGG_STATS, "stats", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(a, root, h);
    return root;
}

static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, built *b, const sc_query *q,
                              bool compensated)
{
    sc_searcher s = {b->ss, (size_t)b->n};
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = {.n_shards = 1, .compensated_sums = compensated};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *r = NULL;
    sc_status st = sc_agg_collect_shard(root, &s, q, &o, &so, a, &r, &res, &err);
    if (st != SC_OK)
        fprintf(stderr, "collect: %s %s\n", sc_status_str(st), err.reason);
    assert_int_equal(st, SC_OK);
    return r;
}

/* Whether any metric result in r's tree has a compensation other than +0.0. */
static bool any_compensation(const sc_agg_result *r)
{
    uint64_t bits;
    memcpy(&bits, &r->sum_c, 8);
    if (bits)
        return true;
    for (size_t i = 0; i < r->n_buckets; i++)
        for (uint32_t j = 0; j < r->buckets[i].n_subs; j++)
            if (any_compensation(r->buckets[i].subs[j]))
                return true;
    return false;
}

static void test_int_sums_equal_compensated(void **state)
{
    (void)state;
    for (int r = 0; r < 4; r++) {
        built b;
        __int128 exact;
        build(&b, r, &exact);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = request(&a);
        int64_t glo = 1, ghi = 3;
        const sc_query *qs[2] = {sc_query_match_all(&a),
                                 sc_query_range(&a, sc_slice_cstr("g"), &glo, &ghi, 1)};
        for (int qi = 0; qi < 2; qi++) {
            sc_agg_result *fast = collect(&a, root, &b, qs[qi], false);
            sc_agg_result *comp = collect(&a, root, &b, qs[qi], true);
            if (!sc_agg_result_equal(fast, comp))
                fprintf(stderr, "regime %d query %d: the results differ\n", r, qi);
            assert_true(sc_agg_result_equal(fast, comp));
            /* and through the final reduce (avg's value) */
            assert_true(
                sc_agg_result_equal(fx_agg_final(&a, root, fast), fx_agg_final(&a, root, comp)));
            const sc_agg_result *sum = fast->buckets[0].subs[1];
            if (r == 0 && qi == 0) { /* exact integers throughout */
                assert_true(sum->sum == (double)(int64_t)exact);
                assert_false(any_compensation(fast));
            }
            if ((r == 1 || r == 3) && qi == 0) /* past 2^53: the compensations show */
                assert_true(any_compensation(comp) && fabs(sum->sum) > 0x1p53);
        }
        sc_arena_fini(&a);
        unbuild(&b);
    }
}

/* One single-valued segment of the values v[0..n) in "n" (no deletes), "g" = doc % 2; the
 * top-level sum and the sum under terms on "g", both paths. */
static void edge(const int64_t *v, size_t n, double want_sum, double want_c)
{
    built b = {.n = 1};
    sc_segment_builder *sb;
    assert_int_equal(sc_segment_builder_new(&sb), SC_OK);
    for (size_t d = 0; d < n; d++) {
        int64_t g = (int64_t)(d % 2);
        fx_tagged tg;
        sc_index_field f[4];
        size_t nf = fx_tagged_fields(&tg, seg_no, (uint32_t)d, 0, f);
        f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &v[d], 1);
        f[nf++] = fx_numeric("g", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &g, 1);
        assert_int_equal(fx_add(sb, tg.id, f, nf), 0);
    }
    bool live[16];
    assert_int_equal(
        fx_segment_finish(sb, dir, seg_no++, true, 9, &b.segs[0], &b.lives[0], live, &b.ss[0]), 0);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    fx_agg_add_sub(&a, root, fx_agg_spec(&a, SC_AGG_SUM, "sum", "n", SC_AGG_V_LONG));
    sc_agg_spec *tg = fx_agg_spec(&a, SC_AGG_TERMS, "tg", "g", SC_AGG_V_LONG);
    fx_agg_add_sub(&a, tg, fx_agg_spec(&a, SC_AGG_SUM, "sum", "n", SC_AGG_V_LONG));
    fx_agg_add_sub(&a, root, tg);
    sc_agg_result *fast = collect(&a, root, &b, sc_query_match_all(&a), false);
    sc_agg_result *comp = collect(&a, root, &b, sc_query_match_all(&a), true);
    assert_true(sc_agg_result_equal(fast, comp));
    const sc_agg_result *s = fast->buckets[0].subs[0];
    assert_true(s->sum == want_sum);
    assert_true(s->sum_c == want_c);
    sc_arena_fini(&a);
    unbuild(&b);
}

/* At 2^53: 7 x (2^50 + 1) then 2^50 + 2 adds up to 2^53 + 9, which a double cannot hold; the
 * compensated sum keeps 2^53 + 8 and a compensation of -1 (an int64 sum would give 2^53 + 8
 * and 0). Then 2^50 - 8 instead of the last value: 2^53 - 1, exact, compensation 0. */
static void test_int_sums_edge_2p53(void **state)
{
    (void)state;
    int64_t v[8];
    for (int i = 0; i < 7; i++)
        v[i] = (INT64_C(1) << 50) + 1;
    v[7] = (INT64_C(1) << 50) + 2;
    edge(v, 8, 0x1p53 + 8, -1);
    v[7] = (INT64_C(1) << 50) - 8;
    edge(v, 8, 0x1p53 - 1, 0);
}

/* ---- scaled_float: the exact sum of the stored integers, divided once ---- */

#define SC_SEGS 4
#define SC_PER 1200
#define SC_FACTOR 100.0

typedef struct scdoc {
    int64_t n[2]; /* "n": scaled_float x 100 (raw), 1 a doc (0-2 in a multi-valued segment) */
    uint32_t nn;
    int64_t g; /* "g": 0..4 */
    int k;     /* "k": k0..k4 */
    bool live;
} scdoc;

/* SC_SEGS segments of SC_PER docs, the last multi-valued when `multi` (else it is left out:
 * *n_segs = SC_SEGS - 1); raw values up to 10^8 (a million in dollars), one in 16 negative;
 * deletes in all but the first. */
static void build_scaled(built *b, scdoc (*docs)[SC_PER], bool multi)
{
    b->n = multi ? SC_SEGS : SC_SEGS - 1;
    for (int s = 0; s < b->n; s++) {
        sc_segment_builder *sb;
        assert_int_equal(sc_segment_builder_new(&sb), SC_OK);
        for (uint32_t d = 0; d < SC_PER; d++) {
            scdoc *x = &docs[s][d];
            x->nn = s == SC_SEGS - 1 ? below(3) : 1;
            for (uint32_t i = 0; i < x->nn; i++)
                x->n[i] =
                    (int64_t)(below(4) ? below(10000) : rnd() % 100000000) * (below(16) ? 1 : -1);
            if (x->nn == 2 && x->n[0] > x->n[1]) {
                int64_t t = x->n[0];
                x->n[0] = x->n[1];
                x->n[1] = t;
            }
            x->g = below(5);
            x->k = (int)below(5);
            char kw[8];
            snprintf(kw, sizeof kw, "k%d", x->k);
            sc_index_token kt = {sc_slice_cstr(kw), 0};
            fx_tagged tg;
            sc_index_field f[5];
            size_t nf = fx_tagged_fields(&tg, seg_no, d, 0, f);
            if (x->nn)
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, x->n, x->nn);
            f[nf++] = fx_numeric("g", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &x->g, 1);
            f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, &kt, 1);
            assert_int_equal(fx_add(sb, tg.id, f, nf), 0);
        }
        bool live[SC_PER];
        assert_int_equal(fx_segment_finish(sb, dir, seg_no++, s == 0, 9, &b->segs[s], &b->lives[s],
                                           live, &b->ss[s]),
                         0);
        for (uint32_t d = 0; d < SC_PER; d++)
            docs[s][d].live = live[d];
    }
}

static sc_agg_spec *scaled(sc_arena *a, sc_agg_kind kind, const char *name)
{
    sc_agg_spec *m = fx_agg_spec(a, kind, name, "n", SC_AGG_V_LONG);
    m->scaling_factor = SC_FACTOR;
    return m;
}

/* avg, sum, stats, value_count of the scaled "n" under p. */
static void scaled_metrics(sc_arena *a, sc_agg_spec *p)
{
    fx_agg_add_sub(a, p, scaled(a, SC_AGG_AVG, "avg"));
    fx_agg_add_sub(a, p, scaled(a, SC_AGG_SUM, "sum"));
    fx_agg_add_sub(a, p, scaled(a, SC_AGG_STATS, "stats"));
    fx_agg_add_sub(a, p, scaled(a, SC_AGG_VALUE_COUNT, "vc"));
}

/* The exact totals of a set of docs' values. */
typedef struct extot {
    int64_t sum, min, max;
    uint64_t count;
} extot;

static void extot_add(extot *t, int64_t v)
{
    if (!t->count || v < t->min)
        t->min = v;
    if (!t->count || v > t->max)
        t->max = v;
    t->count++;
    t->sum += v;
}

/* The four metrics of one bucket (subs[0..4)) against the exact totals: with `exact`, the sum
 * is the correctly rounded total / factor, bit for bit, with no compensation; otherwise
 * within `ulps` units in the last place of it. */
static void check_scaled(sc_agg_result *const *subs, const extot *t, bool exact, int ulps)
{
    double want = (double)t->sum / SC_FACTOR; /* t->sum is below 2^53: one rounding */
    for (int j = 0; j < 3; j++) {
        const sc_agg_result *r = subs[j];
        assert_int_equal(r->count, t->count);
        if (exact) {
            if (r->sum != want)
                fprintf(stderr, "sum %.17g, want %.17g (%lld / 100)\n", r->sum, want,
                        (long long)t->sum);
            assert_true(r->sum == want);
            assert_true(r->sum_c == 0);
        } else {
            double lo = want, hi = want;
            for (int u = 0; u < ulps; u++)
                lo = nextafter(lo, -INFINITY), hi = nextafter(hi, INFINITY);
            assert_true(r->sum >= lo && r->sum <= hi);
        }
    }
    assert_int_equal(subs[3]->count, t->count);
    if (t->count) { /* stats: min and max as value / factor */
        assert_true(subs[2]->min == (double)t->min / SC_FACTOR);
        assert_true(subs[2]->max == (double)t->max / SC_FACTOR);
    }
}

/* The bucket of a terms result with numeric key `key` or keyword key "k<key>" (NULL: none). */
static const sc_agg_bucket *bucket_of(const sc_agg_result *r, bool bytes, int64_t key)
{
    char kw[8];
    snprintf(kw, sizeof kw, "k%lld", (long long)key);
    for (size_t i = 0; i < r->n_buckets; i++)
        if (bytes ? sc_slice_cmp(r->buckets[i].bkey, sc_slice_cstr(kw)) == 0
                  : r->buckets[i].key == key)
            return &r->buckets[i];
    return NULL;
}

/* Checks a result of scaled_request against the docs of segments [s0, s1). */
static void check_scaled_result(const sc_agg_result *res, scdoc (*docs)[SC_PER], int s0, int s1,
                                bool exact, int ulps)
{
    extot all = {0}, byk[5] = {{0}}, byg[5] = {{0}}, byh[3] = {{0}};
    for (int s = s0; s < s1; s++)
        for (uint32_t d = 0; d < SC_PER; d++) {
            const scdoc *x = &docs[s][d];
            for (uint32_t i = 0; x->live && i < x->nn; i++) {
                extot_add(&all, x->n[i]);
                extot_add(&byk[x->k], x->n[i]);
                extot_add(&byg[x->g], x->n[i]);
                extot_add(&byh[x->g / 2], x->n[i]);
            }
        }
    sc_agg_result *const *top = res->buckets[0].subs;
    check_scaled(top, &all, exact, ulps);
    for (int t = 0; t < 3; t++) {
        const sc_agg_result *tr = top[4 + t];
        size_t nb = 0;
        for (int key = 0; key < 5; key++) {
            const extot *e = t == 0 ? &byk[key] : t == 1 ? &byg[key] : key < 3 ? &byh[key] : NULL;
            int64_t bk = t == 2 ? (int64_t)key * 2 : key;
            const sc_agg_bucket *bu = NULL;
            if (t == 2) {
                for (size_t i = 0; i < tr->n_buckets; i++)
                    if (tr->buckets[i].dkey == (double)bk)
                        bu = &tr->buckets[i];
            } else {
                bu = bucket_of(tr, t == 0, bk);
            }
            if (!e || !e->count)
                continue; /* no values there (a bucket of docs without one may exist) */
            assert_non_null(bu);
            nb++;
            check_scaled(bu->subs, e, exact, ulps);
        }
        assert_true(nb > 0);
    }
}

/* The scaled metrics at the top level, under terms on "k" and on "g", and under a histogram
 * on "g" of interval 2 (alone: the fused histogram path). */
static sc_agg_spec *scaled_request(sc_arena *a)
{
    sc_agg_spec *root = fx_agg_spec(a, SC_AGG_ROOT, "", NULL, 0);
    scaled_metrics(a, root);
    sc_agg_spec *tk = fx_agg_spec(a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
    scaled_metrics(a, tk);
    fx_agg_add_sub(a, root, tk);
    sc_agg_spec *tg = fx_agg_spec(a, SC_AGG_TERMS, "tg", "g", SC_AGG_V_LONG);
    scaled_metrics(a, tg);
    fx_agg_add_sub(a, root, tg);
    sc_agg_spec *h = fx_agg_spec(a, SC_AGG_HISTOGRAM, "h", "g", SC_AGG_V_LONG);
    h->interval = 2;
    h->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    scaled_metrics(a, h);
    fx_agg_add_sub(a, root, h);
    return root;
}

static void test_scaled_sums_exact(void **state)
{
    (void)state;
    scdoc(*docs)[SC_PER] = calloc(SC_SEGS, sizeof *docs);
    assert_non_null(docs);
    for (int multi = 0; multi < 2; multi++) {
        built b;
        build_scaled(&b, docs, multi);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = scaled_request(&a);
        /* one shard: exact while every segment is single-valued; the multi-valued segment
         * (read last) ends the int64 sums, the compensated sum carries on from the exact
         * partial totals */
        sc_agg_result *r = collect(&a, root, &b, sc_query_match_all(&a), false);
        check_scaled_result(r, docs, 0, b.n, !multi, 4);
        check_scaled_result(fx_agg_final(&a, root, r), docs, 0, b.n, !multi, 4);
        /* two shards (segment 0, the others), reduced: each partial exact, their sum one more
         * rounding */
        built b0 = b, b1 = b;
        b0.n = 1;
        memmove(b1.ss, b1.ss + 1, (size_t)(b.n - 1) * sizeof *b1.ss);
        b1.n = b.n - 1;
        sc_agg_result *parts[2] = {collect(&a, root, &b0, sc_query_match_all(&a), false),
                                   collect(&a, root, &b1, sc_query_match_all(&a), false)};
        check_scaled_result(parts[0], docs, 0, 1, true, 0);
        check_scaled_result(parts[1], docs, 1, b.n, !multi, 4);
        sc_agg_error err;
        sc_agg_result *red;
        assert_int_equal(sc_agg_reduce(root, parts, 2, true, 0, &a, &red, &err), SC_OK);
        check_scaled_result(red, docs, 0, b.n, false, 8);
        sc_arena_fini(&a);
        unbuild(&b);
    }
    free(docs);
}

/* Fixed cases where a compensated sum of value / 100 is not the sum of the values: three docs
 * of 0.05 (the compensated path: 0.15000000000000002) and 29 of 0.01 (0.29000000000000004),
 * at the top level and under terms. */
static void scaled_edge(int64_t raw, size_t n, double want)
{
    built b = {.n = 1};
    sc_segment_builder *sb;
    assert_int_equal(sc_segment_builder_new(&sb), SC_OK);
    for (size_t d = 0; d < n; d++) {
        int64_t g = 0;
        fx_tagged tg;
        sc_index_field f[4];
        size_t nf = fx_tagged_fields(&tg, seg_no, (uint32_t)d, 0, f);
        f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &raw, 1);
        f[nf++] = fx_numeric("g", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &g, 1);
        assert_int_equal(fx_add(sb, tg.id, f, nf), 0);
    }
    bool live[64];
    assert_int_equal(
        fx_segment_finish(sb, dir, seg_no++, true, 9, &b.segs[0], &b.lives[0], live, &b.ss[0]), 0);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    fx_agg_add_sub(&a, root, scaled(&a, SC_AGG_SUM, "sum"));
    sc_agg_spec *tg = fx_agg_spec(&a, SC_AGG_TERMS, "tg", "g", SC_AGG_V_LONG);
    fx_agg_add_sub(&a, tg, scaled(&a, SC_AGG_AVG, "avg"));
    fx_agg_add_sub(&a, root, tg);
    sc_agg_result *r = fx_agg_final(&a, root, collect(&a, root, &b, sc_query_match_all(&a), false));
    const sc_agg_result *s = r->buckets[0].subs[0];
    if (s->sum != want)
        fprintf(stderr, "%zu x %lld / 100: sum %.17g, want %.17g\n", n, (long long)raw, s->sum,
                want);
    assert_true(s->sum == want);
    const sc_agg_result *t = r->buckets[0].subs[1];
    assert_int_equal(t->n_buckets, 1);
    const sc_agg_result *av = t->buckets[0].subs[0];
    assert_true(av->sum == want);
    assert_int_equal(av->count, n);
    sc_arena_fini(&a);
    unbuild(&b);
}

static void test_scaled_sums_edge(void **state)
{
    (void)state;
    scaled_edge(5, 3, 0.15);
    scaled_edge(1, 29, 0.29);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_sums_equal_compensated),
        cmocka_unit_test(test_int_sums_edge_2p53),
        cmocka_unit_test(test_scaled_sums_exact),
        cmocka_unit_test(test_scaled_sums_edge),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
