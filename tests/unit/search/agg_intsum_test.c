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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_sums_equal_compensated),
        cmocka_unit_test(test_int_sums_edge_2p53),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
