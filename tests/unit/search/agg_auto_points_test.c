/* auto_date_histogram counted from the BKD tree (search/agg_points.c, agg_auto_histo.c):
 * under match_all or a range on its own field, segments without deletes answer from their
 * points; the same query under constant_score visits the docs. Random rounds (seed printed,
 * SCRY_SEED reruns) over several segments, some with deletes, some sparse, values piled on
 * bucket edges, UTC, a fixed offset and a zone with daylight-saving changes, `buckets` 1 to
 * 600 and minimum_interval; both paths must give the same shard result, and both the
 * buckets of a brute-force model (the finest rung whose buckets fit, each live matching value
 * rounded). Half the rounds add a stats sub-aggregation (and in half of those a value_count,
 * which takes the pairs path instead of the fused one): then the fast path
 * chooses the rung from the trees before collecting (no deletes anywhere) and the model
 * also checks each bucket's sub-aggregation count, min and max. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

#define MAX_SEG 4
#define MAX_PER 3000
#define T0 INT64_C(1577836800000) /* 2020-01-01 */
#define DAY INT64_C(86400000)

static char dir[64];
static int segno;

/* America/New_York's 2020 changes (EDT from 2020-03-08 07:00 UTC, EST from 2020-11-01 06:00). */
static const int64_t ny_at[2] = {INT64_C(1583650800000), INT64_C(1604210400000)};
static const int32_t ny_off[2] = {-4 * 3600, -5 * 3600};

typedef struct mval {
    int64_t v;
    bool has, live;
} mval;

static int setup(void **state)
{
    (void)state;
    return fx_begin("aggauto", dir, sizeof dir);
}

static int teardown(void **state)
{
    (void)state;
    return fx_end(dir);
}

/* A value near a bucket edge of a random rung (at, one before, one after, or the bucket's
 * last ms) around x, in zone tz. */
static int64_t edge_value(int64_t x, const sc_agg_tz *tz)
{
    sc_agg_rounding r;
    sc_agg_auto_rung(below(15), tz, &r, NULL);
    int64_t b = sc_agg_round(&r, x);
    switch (below(4)) {
    case 0: return b;
    case 1: return b - 1;
    case 2: return b + 1;
    default: return sc_agg_round_next(&r, b) - 1;
    }
}

/* The model's rung: the finest from min_rung whose buckets from lo's to hi's fit in size. */
static uint32_t model_rung(const sc_agg_spec *spec, int64_t lo, int64_t hi)
{
    uint32_t i = spec->min_rung;
    for (; i + 1 < SC_AGG_AUTO_LADDER; i++) {
        sc_agg_rounding r;
        sc_agg_auto_rung(i, &spec->rounding.tz, &r, NULL);
        int64_t k = sc_agg_round(&r, lo), last = sc_agg_round(&r, hi);
        uint64_t n = 1;
        while (k < last && n <= spec->size) {
            k = sc_agg_round_next(&r, k);
            n++;
        }
        if (n <= spec->size)
            break;
    }
    return i;
}

/* Checks shard result x against the live values of vals[0..n) in [qlo, qhi]. */
static void check_model(const sc_agg_result *x, const sc_agg_spec *spec, const mval *vals, size_t n,
                        int64_t qlo, int64_t qhi, unsigned long long seed, int round)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t n_in = 0;
    for (size_t i = 0; i < n; i++)
        if (vals[i].has && vals[i].live && vals[i].v >= qlo && vals[i].v <= qhi) {
            lo = vals[i].v < lo ? vals[i].v : lo;
            hi = vals[i].v > hi ? vals[i].v : hi;
            n_in++;
        }
    if (!n_in) {
        assert_int_equal(x->n_buckets, 0);
        return;
    }
    uint32_t rung = model_rung(spec, lo, hi);
    if (x->rung != rung)
        fail_msg("seed %llu round %d: rung %u, model %u (values %lld .. %lld, size %llu)", seed,
                 round, x->rung, rung, (long long)lo, (long long)hi,
                 (unsigned long long)spec->size);
    sc_agg_rounding r;
    sc_agg_auto_rung(rung, &spec->rounding.tz, &r, NULL);
    uint64_t *want = calloc(x->n_buckets + 1, sizeof *want);
    int64_t *wmin = malloc((x->n_buckets + 1) * sizeof *wmin);
    int64_t *wmax = malloc((x->n_buckets + 1) * sizeof *wmax);
    assert_true(want && wmin && wmax);
    for (size_t i = 0; i <= x->n_buckets; i++) {
        wmin[i] = INT64_MAX;
        wmax[i] = INT64_MIN;
    }
    for (size_t i = 0; i < n; i++) {
        if (!vals[i].has || !vals[i].live || vals[i].v < qlo || vals[i].v > qhi)
            continue;
        int64_t k = sc_agg_round(&r, vals[i].v);
        size_t a = 0, b = x->n_buckets;
        while (a < b) {
            size_t m = (a + b) / 2;
            if (x->buckets[m].key < k)
                a = m + 1;
            else
                b = m;
        }
        size_t w = a < x->n_buckets && x->buckets[a].key == k ? a : x->n_buckets;
        want[w]++;
        wmin[w] = vals[i].v < wmin[w] ? vals[i].v : wmin[w];
        wmax[w] = vals[i].v > wmax[w] ? vals[i].v : wmax[w];
    }
    if (want[x->n_buckets])
        fail_msg("seed %llu round %d: %llu values outside the keys", seed, round,
                 (unsigned long long)want[x->n_buckets]);
    for (size_t i = 0; i < x->n_buckets; i++)
        if (x->buckets[i].doc_count != want[i] || (i && x->buckets[i].key <= x->buckets[i - 1].key))
            fail_msg("seed %llu round %d: bucket %lld has %llu, model %llu", seed, round,
                     (long long)x->buckets[i].key, (unsigned long long)x->buckets[i].doc_count,
                     (unsigned long long)want[i]);
    /* sub-aggregations (stats, value_count on the field): each bucket's own values */
    for (size_t i = 0; spec->n_subs && i < x->n_buckets; i++) {
        const sc_agg_result *st = x->buckets[i].subs[0];
        const sc_agg_result *vc = spec->n_subs > 1 ? x->buckets[i].subs[1] : st;
        if (st->count != want[i] || vc->count != want[i] || st->min != (double)wmin[i] ||
            st->max != (double)wmax[i])
            fail_msg("seed %llu round %d: bucket %lld subs count %llu/%llu min %.0f max %.0f, "
                     "model %llu min %lld max %lld",
                     seed, round, (long long)x->buckets[i].key, (unsigned long long)st->count,
                     (unsigned long long)vc->count, st->min, st->max, (unsigned long long)want[i],
                     (long long)wmin[i], (long long)wmax[i]);
    }
    free(want);
    free(wmin);
    free(wmax);
}

/* Collects root with q over the segment views; the shard result. */
static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, sc_searcher_segment *view,
                              size_t n, const sc_query *q, uint64_t *total)
{
    return fx_agg_collect(a, root, view, n, q, 1, total);
}

static void test_auto_histo_points_vs_docs(void **state)
{
    (void)state;
    unsigned long long seed = (unsigned long long)rng;
    static const int64_t spans[] = {20000,    3 * 3600000LL, 2 * DAY,       20 * DAY,
                                    21 * DAY, 400 * DAY,     30 * 365 * DAY};
    static const uint64_t sizes[] = {1, 2, 5, 10, 20, 50, 200, 600};
    static mval vals[MAX_SEG * MAX_PER];
    for (int round = 0; round < 100; round++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *ah = fx_agg_spec(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "ah", "t", SC_AGG_V_DATE);
        ah->size = sizes[below(sizeof sizes / sizeof *sizes)];
        ah->min_rung = below(4) ? 0 : below(13);
        switch (below(3)) {
        case 0: break;
        case 1: ah->rounding.tz.base_offset_ms = 5 * 3600000 + 30 * 60000; break;
        default:
            ah->rounding.tz = (sc_agg_tz){
                .base_offset_ms = -5 * 3600000, .at_ms = ny_at, .offset_s = ny_off, .n_trans = 2};
        }
        fx_agg_add_sub(&a, root, ah);
        /* with sub-aggregations the points choose the rung before collecting (no deletes):
         * the docs go straight to the buckets and the subs instead of the record and replay
         * that the constant_score query takes */
        bool subs = below(2) == 0;
        if (subs) {
            fx_agg_add_sub(&a, ah, fx_agg_spec(&a, SC_AGG_STATS, "st", "t", SC_AGG_V_DATE));
            if (below(2)) /* not a fused metric: the pairs path */
                fx_agg_add_sub(&a, ah,
                               fx_agg_spec(&a, SC_AGG_VALUE_COUNT, "vc", "t", SC_AGG_V_DATE));
        }
        /* values: uniform over the span from a base (2020, around the March change, or before
         * 1970), half of them on bucket edges */
        int64_t span = spans[below(sizeof spans / sizeof *spans)];
        int64_t base = below(3) == 0 ? -T0 - 12345 : below(2) ? T0 : ny_at[0] - span / 2;
        size_t n_seg = 1 + below(MAX_SEG), n = 0;
        sc_segment *seg[MAX_SEG];
        sc_bitset bs[MAX_SEG];
        sc_searcher_segment view[MAX_SEG];
        for (size_t s = 0; s < n_seg; s++) {
            /* few values leave gaps where a range bound falls (the extent must be the
             * values', not the bounds clipped to the tree's) */
            uint32_t per = 1 + below(below(2) ? 40 : MAX_PER);
            bool sparse = below(4) == 0, deletes = below(subs ? 8 : 2) == 0;
            sc_segment_builder *b;
            assert_int_equal(sc_segment_builder_new(&b), SC_OK);
            for (uint32_t d = 0; d < per; d++) {
                mval *m = &vals[n + d];
                m->has = !sparse || below(3) != 0;
                int64_t x = base + (int64_t)(rnd() % (uint64_t)span);
                m->v = below(2) ? x : edge_value(x, &ah->rounding.tz);
                fx_tagged tg;
                sc_index_field f[3];
                size_t nf = fx_tagged_fields(&tg, segno, d, 0, f);
                if (m->has)
                    f[nf++] = fx_numeric("t", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m->v, 1);
                assert_int_equal(fx_add(b, tg.id, f, nf), 0);
            }
            bool live[MAX_PER];
            assert_int_equal(
                fx_segment_finish(b, dir, segno++, !deletes, 5, &seg[s], &bs[s], live, &view[s]),
                0);
            for (uint32_t d = 0; d < per; d++)
                vals[n + d].live = live[d];
            n += per;
        }
        /* the query: match_all, or a range on "t" whose bounds are random, beyond the values,
         * on a value or next to one, or on a bucket edge */
        for (int qk = 0; qk < 3; qk++) {
            int64_t qlo = INT64_MIN, qhi = INT64_MAX;
            if (qk) {
                int64_t p[2];
                for (int e = 0; e < 2; e++) {
                    int64_t x = base + (int64_t)(rnd() % (uint64_t)span);
                    switch (below(5)) {
                    case 0: p[e] = x; break;
                    case 1: p[e] = vals[below((uint32_t)n)].v + (int64_t)below(3) - 1; break;
                    case 2: p[e] = edge_value(x, &ah->rounding.tz); break;
                    case 3: p[e] = e ? base + span + (int64_t)below(1000) * DAY : base - 1; break;
                    default: p[e] = e ? base + span + 1 : base - (int64_t)below(1000) * DAY;
                    }
                }
                qlo = p[0] < p[1] ? p[0] : p[1];
                qhi = p[0] < p[1] ? p[1] : p[0];
            }
            sc_query *q =
                qk ? sc_query_range(&a, sc_slice_cstr("t"), &qlo, &qhi, 1) : sc_query_match_all(&a);
            uint64_t n_fast, n_slow;
            sc_agg_result *fast = collect(&a, root, view, n_seg, q, &n_fast);
            sc_agg_result *slow =
                collect(&a, root, view, n_seg, sc_query_constant_score(&a, q), &n_slow);
            assert_int_equal(n_fast, n_slow);
            const sc_agg_result *xf = fast->buckets[0].subs[0], *xs = slow->buckets[0].subs[0];
            check_model(xs, ah, vals, n, qlo, qhi, seed, round);
            check_model(xf, ah, vals, n, qlo, qhi, seed, round);
            if (!sc_agg_result_equal(fast, slow))
                fail_msg("seed %llu round %d query %d: points and docs differ", seed, round, qk);
            sc_agg_result *ff = fx_agg_final(&a, root, fast), *fs = fx_agg_final(&a, root, slow);
            assert_true(sc_agg_result_equal(ff, fs));
        }
        for (size_t s = 0; s < n_seg; s++) {
            sc_segment_unref(seg[s]);
            sc_bitset_fini(&bs[s]);
        }
        sc_arena_fini(&a);
    }
}

/* The case the random rounds rarely make: a deleted doc holds the segment's extreme value.
 * The points still have it (the tree does not know deletes), so choosing the rung from the
 * trees with a deleted extreme picks a coarser rung than the live values need: the points-first
 * path must not run on a segment with deletes. One segment of docs within a day, plus one doc
 * 400 days later that is deleted; match_all and a range holding both, with a stats
 * sub-aggregation (the path that chooses the rung before collecting). The finest rung that
 * fits the live values in 10 buckets is hours; with the deleted value it would be weeks. */
static void test_deleted_extreme_value(void **state)
{
    (void)state;
    enum { N = 200 };
    static mval vals[N + 1];
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *ah = fx_agg_spec(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "ah", "t", SC_AGG_V_DATE);
    ah->size = 10;
    fx_agg_add_sub(&a, root, ah);
    fx_agg_add_sub(&a, ah, fx_agg_spec(&a, SC_AGG_STATS, "st", "t", SC_AGG_V_DATE));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d <= N; d++) {
        mval *m = &vals[d];
        m->has = true;
        m->live = d != N;
        m->v = d == N ? T0 + 400 * DAY : T0 + (int64_t)d * 7 * 60000; /* every 7 minutes */
        fx_tagged tg;
        sc_index_field f[3];
        size_t nf = fx_tagged_fields(&tg, segno, d, 0, f);
        f[nf++] = fx_numeric("t", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m->v, 1);
        assert_int_equal(fx_add(b, tg.id, f, nf), 0);
    }
    sc_segment *seg;
    assert_int_equal(fx_write(b, dir, segno++, &seg), 0);
    sc_bitset bs;
    assert_int_equal(sc_bitset_init(&bs, N + 1), SC_OK);
    for (uint32_t d = 0; d < N; d++)
        sc_bitset_set(&bs, d);
    sc_searcher_segment view = fx_searcher_segment(seg, &bs, 1);
    for (int qk = 0; qk < 2; qk++) {
        int64_t qlo = qk ? T0 - DAY : INT64_MIN, qhi = qk ? T0 + 500 * DAY : INT64_MAX;
        sc_query *q =
            qk ? sc_query_range(&a, sc_slice_cstr("t"), &qlo, &qhi, 1) : sc_query_match_all(&a);
        uint64_t n_fast, n_slow;
        sc_agg_result *fast = collect(&a, root, &view, 1, q, &n_fast);
        sc_agg_result *slow = collect(&a, root, &view, 1, sc_query_constant_score(&a, q), &n_slow);
        assert_int_equal(n_fast, N);
        assert_int_equal(n_slow, N);
        check_model(fast->buckets[0].subs[0], ah, vals, N + 1, qlo, qhi, 0, qk);
        check_model(slow->buckets[0].subs[0], ah, vals, N + 1, qlo, qhi, 0, qk);
        assert_true(sc_agg_result_equal(fast, slow));
    }
    sc_segment_unref(seg);
    sc_bitset_fini(&bs);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_histo_points_vs_docs),
        cmocka_unit_test(test_deleted_extreme_value),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
