/* Range / numeric terms iterators against a brute-force scan (seed printed, SCRY_SEED reruns):
 * a real segment with numeric doc values (0..3 values per doc, some docs with 40 values, values
 * with duplicates and INT64_MIN/MAX) and a BKD built from the same (value, doc) pairs; for
 * random sets of ranges, the points path, the doc-values path and the cost-based choice match
 * the model through next, advance, next_batch, into_bitset windows and run_end, with no
 * generic fallback used; counts with and without deletes and with an early-stop limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/range.h"

#include "fixture.h"

#define N_DOCS 3000
#define MAXV 40

static int64_t vals[N_DOCS][MAXV];
static uint32_t nvals[N_DOCS];
static sc_segment *seg;
static sc_dv_numeric dv;
static sc_buf bkd_bytes;
static sc_bkd bkd;
static sc_bitset live;
static char dir[64];

static int64_t rand_value(void)
{
    uint32_t r = below(20);
    if (r == 0)
        return INT64_MIN;
    if (r == 1)
        return INT64_MAX;
    if (r < 8)
        return (int64_t)below(100) - 50;
    return (int64_t)below(1000000) - 500000;
}

static int setup(void **state)
{
    (void)state;
    if (fx_begin("range", dir, sizeof dir) != 0)
        return -1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    SC_VEC(int64_t) pv = {0};
    SC_VEC(uint32_t) pd = {0};
    for (uint32_t d = 0; d < N_DOCS; d++) {
        uint32_t r = below(10);
        nvals[d] = r < 2 ? 0 : r < 7 ? 1 : r < 9 ? 2 + below(2) : MAXV;
        for (uint32_t i = 0; i < nvals[d]; i++) {
            vals[d][i] = rand_value();
            if (sc_vec_push(&pv, vals[d][i]) != SC_OK || sc_vec_push(&pd, d) != SC_OK)
                return -1;
        }
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        sc_index_token idt = {sc_slice_cstr(id), 0};
        sc_index_field f[2] = {fx_keyword("_id", 0, &idt, 1),
                               fx_numeric("n", SC_FIELD_DOCVALUES, vals[d], nvals[d])};
        if (fx_add(b, id, f, nvals[d] ? 2 : 1) != 0)
            return -1;
    }
    if (fx_write(b, dir, 0, &seg) != 0)
        return -1;
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("n"));
    if (!fi || sc_dv_numeric_open(seg, fi, &dv) != SC_OK)
        return -1;
    if (sc_bkd_write(pv.ptr, pd.ptr, pv.len, N_DOCS, 64, &bkd_bytes) != SC_OK ||
        sc_bkd_open(sc_slice_make(bkd_bytes.ptr, bkd_bytes.len), &bkd) != SC_OK)
        return -1;
    sc_vec_free(&pv);
    sc_vec_free(&pd);
    if (sc_bitset_init(&live, N_DOCS) != SC_OK)
        return -1;
    for (uint32_t d = 0; d < N_DOCS; d++)
        if (below(5))
            sc_bitset_set(&live, d);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    sc_vec_free(&bkd_bytes);
    sc_bitset_fini(&live);
    return fx_end(dir);
}

static bool model(uint32_t d, const int64_t *lo, const int64_t *hi, size_t n)
{
    for (uint32_t i = 0; i < nvals[d]; i++)
        for (size_t k = 0; k < n; k++)
            if (vals[d][i] >= lo[k] && vals[d][i] <= hi[k])
                return true;
    return false;
}

static int64_t pick(void)
{
    uint32_t r = below(8);
    if (r == 0)
        return INT64_MIN;
    if (r == 1)
        return INT64_MAX;
    if (r < 5) {
        uint32_t d = below(N_DOCS);
        if (nvals[d])
            return vals[d][below(nvals[d])];
    }
    return rand_value();
}

static sc_doc_iter *make(sc_arena *a, const sc_range_source *src, const int64_t *lo,
                         const int64_t *hi, size_t n, int way, sc_iter_stats *stats)
{
    sc_doc_iter *it;
    bool used;
    sc_range_strategy st = way == 0   ? SC_RANGE_POINTS
                           : way == 1 ? SC_RANGE_DOC_VALUES
                           : way == 3 ? SC_RANGE_POINTS_LIST
                                      : SC_RANGE_AUTO;
    uint64_t lead = way == 2 ? (below(2) ? UINT64_MAX : below(2000)) : UINT64_MAX;
    assert_int_equal(sc_range_iter(a, src, lo, hi, n, lead, 1.5f, st, &it, &used), SC_OK);
    if (way == 0 || way == 3)
        assert_true(used);
    if (way == 1)
        assert_false(used);
    sc_doc_iter_set_stats(it, stats);
    return it;
}

static void test_iterators_vs_model(void **state)
{
    (void)state;
    sc_range_source src = {&bkd, &dv, N_DOCS};
    uint32_t docs[N_DOCS + 1], freqs[N_DOCS + 1];
    for (int q = 0; q < 150; q++) {
        size_t n = 1 + below(3);
        int64_t lo[3], hi[3];
        for (size_t k = 0; k < n; k++) {
            lo[k] = pick();
            hi[k] = below(4) == 0 ? lo[k] : pick(); /* terms: [v, v] */
            if (lo[k] > hi[k] && below(6)) {
                int64_t x = lo[k];
                lo[k] = hi[k];
                hi[k] = x;
            }
        }
        uint32_t want[N_DOCS], nw = 0;
        for (uint32_t d = 0; d < N_DOCS; d++)
            if (model(d, lo, hi, n))
                want[nw++] = d;
        for (int way = 0; way < 4; way++) { /* points bitset, doc values, auto, points list */
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_iter_stats stats = {0};
            /* next */
            sc_doc_iter *it = make(&a, &src, lo, hi, n, way, &stats);
            uint32_t k = 0;
            for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END; d = sc_doc_iter_next(it)) {
                assert_true(k < nw);
                assert_int_equal(d, want[k]);
                assert_true(sc_doc_iter_score(it) == 1.5f);
                uint32_t re = sc_doc_iter_run_end(it);
                assert_true(re > d);
                for (uint32_t r = d; r < re; r++)
                    assert_true(model(r, lo, hi, n));
                k++;
            }
            assert_int_equal(k, nw);
            assert_int_equal(sc_doc_iter_next(it), SC_DOC_END);
            /* advance to random targets */
            it = make(&a, &src, lo, hi, n, way, &stats);
            uint32_t target = 0;
            for (;;) {
                target += 1 + below(200);
                uint32_t d = sc_doc_iter_advance(it, target);
                uint32_t exp = SC_DOC_END;
                for (uint32_t i = 0; i < nw; i++)
                    if (want[i] >= target) {
                        exp = want[i];
                        break;
                    }
                assert_int_equal(d, exp);
                if (d == SC_DOC_END)
                    break;
                target = d;
            }
            /* next_batch in random sizes, after one next */
            it = make(&a, &src, lo, hi, n, way, &stats);
            k = 0;
            if (nw) {
                assert_int_equal(sc_doc_iter_next(it), want[0]);
                k = 1;
            }
            for (;;) {
                size_t got = sc_doc_iter_next_batch(it, docs, freqs, 1 + below(300));
                if (!got)
                    break;
                for (size_t i = 0; i < got; i++, k++) {
                    assert_int_equal(docs[i], want[k]);
                    assert_int_equal(freqs[i], 1);
                }
            }
            assert_int_equal(k, nw);
            /* into_bitset over windows */
            it = make(&a, &src, lo, hi, n, way, &stats);
            sc_bitset bs;
            assert_int_equal(sc_bitset_init(&bs, N_DOCS), SC_OK);
            uint32_t w0 = 0;
            while (w0 < N_DOCS) {
                uint32_t w1 = w0 + 1 + below(700);
                if (w1 > N_DOCS)
                    w1 = N_DOCS;
                if (!it->positioned || (it->doc != SC_DOC_END && it->doc < w1))
                    sc_doc_iter_into_bitset(it, w1, &bs, 0);
                assert_true(it->doc >= w1 || it->doc == SC_DOC_END);
                w0 = w1;
            }
            assert_int_equal(sc_bitset_count(&bs), nw);
            for (uint32_t i = 0; i < nw; i++)
                assert_true(sc_bitset_test(&bs, want[i]));
            sc_bitset_fini(&bs);
            assert_int_equal(stats.fallback_into_bitset + stats.fallback_next_batch +
                                 stats.fallback_run_end + stats.fallback_score_batch,
                             0);
            sc_arena_fini(&a);
        }
        /* counts (single range) with and without deletes, with a limit */
        uint64_t c;
        bool exact;
        uint64_t want_all = 0, want_live = 0;
        for (uint32_t d = 0; d < N_DOCS; d++)
            if (model(d, lo, hi, 1)) {
                want_all++;
                want_live += sc_bitset_test(&live, d);
            }
        for (int p = 0; p < 2; p++) {
            sc_range_source s2 = {p ? &bkd : NULL, &dv, N_DOCS};
            assert_int_equal(sc_range_count(&s2, lo[0], hi[0], NULL, 0, &c, &exact), SC_OK);
            assert_int_equal(c, want_all);
            assert_true(exact);
            assert_int_equal(sc_range_count(&s2, lo[0], hi[0], &live, 0, &c, &exact), SC_OK);
            assert_int_equal(c, want_live);
            if (want_all > 3) {
                assert_int_equal(sc_range_count(&s2, lo[0], hi[0], NULL, 2, &c, &exact), SC_OK);
                assert_true(c <= want_all);
                if (exact)
                    assert_int_equal(c, want_all);
                else
                    assert_true(c >= 1);
            }
        }
    }
}

static void test_missing_sources_and_bounds(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_range_source none = {NULL, NULL, N_DOCS};
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    sc_doc_iter *it;
    assert_int_equal(sc_range_iter(&a, &none, &lo, &hi, 1, UINT64_MAX, 1, SC_RANGE_AUTO, &it, NULL),
                     SC_OK);
    assert_int_equal(sc_doc_iter_next(it), SC_DOC_END);
    uint64_t c = 7;
    assert_int_equal(sc_range_count(&none, lo, hi, NULL, 0, &c, NULL), SC_OK);
    assert_int_equal(c, 0);
    /* the cost choice: a tiny lead picks doc values, no lead picks points */
    sc_range_source src = {&bkd, &dv, N_DOCS};
    bool used;
    assert_int_equal(sc_range_iter(&a, &src, &lo, &hi, 1, 3, 1, SC_RANGE_AUTO, &it, &used), SC_OK);
    assert_false(used);
    assert_int_equal(sc_range_iter(&a, &src, &lo, &hi, 1, UINT64_MAX, 1, SC_RANGE_AUTO, &it, &used),
                     SC_OK);
    assert_true(used);
    sc_arena_fini(&a);

    int64_t l, h;
    assert_true(sc_range_bounds(true, 5, true, true, 15, false, &l, &h));
    assert_int_equal(l, 5);
    assert_int_equal(h, 14);
    assert_false(sc_range_bounds(true, INT64_MAX, false, false, 0, false, &l, &h));
    assert_false(sc_range_bounds(false, 0, false, true, INT64_MIN, false, &l, &h));
    assert_true(sc_range_bounds(false, 0, false, false, 0, false, &l, &h));
    assert_int_equal(l, INT64_MIN);
    assert_int_equal(h, INT64_MAX);
    assert_false(sc_range_bounds(true, 3, false, true, 3, true, &l, &h));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iterators_vs_model),
        cmocka_unit_test(test_missing_sources_and_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
