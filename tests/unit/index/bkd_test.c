/* BKD tree: property tests against a brute-force scan (seeds printed, SCRY_SEED reruns):
 * random values with duplicates, extremes (INT64_MIN/MAX), all-equal leaves, doubles in the
 * sortable encoding (negative zero just below zero), multi-valued docs, random ranges, small
 * and default leaf sizes; intersect == brute force, count == brute force, estimate >= count,
 * early termination; every doc-id packing kind round-trips through the leaf reader; random
 * corruption never crashes (run under ASan) and is either rejected or read in bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/bkd.h"

typedef struct pts {
    int64_t *v;
    uint32_t *d;
    size_t n;
    uint32_t bound;
} pts;

static void pts_alloc(pts *p, size_t n, uint32_t bound)
{
    p->v = malloc((n ? n : 1) * sizeof(int64_t));
    p->d = malloc((n ? n : 1) * sizeof(uint32_t));
    assert_non_null(p->v);
    assert_non_null(p->d);
    p->n = n;
    p->bound = bound;
}

static void pts_free(pts *p)
{
    free(p->v);
    free(p->d);
}

static int64_t sortable_double(double x)
{
    int64_t bits;
    memcpy(&bits, &x, 8);
    return bits ^ ((bits >> 63) & INT64_MAX);
}

static int64_t rand_value(int dist)
{
    switch (dist) {
    case 0: /* narrow, many duplicates */ return (int64_t)t_below(50) - 25;
    case 1: { /* full range with extremes */
        uint32_t r = t_below(10);
        if (r == 0)
            return INT64_MIN;
        if (r == 1)
            return INT64_MAX;
        return (int64_t)t_rand();
    }
    case 2: /* all equal */ return 42;
    case 3: { /* doubles, incl. +-0 */
        static const double special[] = {0.0, -0.0, 1.5, -1.5, 1e300, -1e300, 5.0, 15.0};
        if (t_below(3) == 0)
            return sortable_double(special[t_below(8)]);
        return sortable_double(((double)(int64_t)t_rand()) / 1e9);
    }
    default: /* epoch millis-like dates */
        return 1600000000000LL + (int64_t)t_below(86400000u) * 1000;
    }
}

/* Random points: doc layout `docs` 0 sequential single-valued, 1 random multi-valued,
 * 2 sparse (huge bound), 3 dense subset. */
static void make_points(pts *p, size_t n, int dist, int docs)
{
    uint32_t bound = docs == 2 ? 20000000u : (uint32_t)(n + 1);
    pts_alloc(p, n, bound);
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++) {
        p->v[i] = rand_value(dist);
        switch (docs) {
        case 0: p->d[i] = (uint32_t)i; break;
        case 1: p->d[i] = t_below(bound); break;
        case 2: p->d[i] = t_below(bound); break;
        default:
            d += 1 + (t_below(4) == 0);
            if (d >= bound)
                d = bound - 1;
            p->d[i] = d;
            break;
        }
    }
}

static void build(const pts *p, uint32_t leaf, sc_buf *buf, sc_bkd *t)
{
    buf->len = 0;
    assert_int_equal(sc_bkd_write(p->v, p->d, p->n, p->bound, leaf, buf), SC_OK);
    assert_int_equal(sc_bkd_open(sc_slice_make(buf->ptr, buf->len), t), SC_OK);
}

static void check_range(const pts *p, const sc_bkd *t, int64_t lo, int64_t hi, sc_bitset *got,
                        sc_bitset *want)
{
    sc_bitset_clear_all(got);
    sc_bitset_clear_all(want);
    uint64_t want_pts = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] >= lo && p->v[i] <= hi) {
            sc_bitset_set(want, p->d[i]);
            want_pts++;
        }
    sc_bkd_stats st;
    assert_int_equal(sc_bkd_intersect(t, lo, hi, got, 0, &st), SC_OK);
    assert_false(st.terminated);
    assert_int_equal(st.points, want_pts);
    size_t nw = sc_bitset_words_for(p->bound);
    if (memcmp(got->words, want->words, nw * 8) != 0)
        fail_msg("range [%lld, %lld]: bitsets differ", (long long)lo, (long long)hi);
    uint64_t c;
    assert_int_equal(sc_bkd_count(t, lo, hi, &c), SC_OK);
    assert_int_equal(c, want_pts);
    assert_true(sc_bkd_estimate(t, lo, hi) >= want_pts);
    /* early termination: a subset of the answer with at least `limit` points */
    if (want_pts > 2) {
        uint64_t limit = 1 + t_below((uint32_t)want_pts - 1);
        sc_bitset_clear_all(got);
        assert_int_equal(sc_bkd_intersect(t, lo, hi, got, limit, &st), SC_OK);
        assert_true(st.points >= limit);
        assert_true(st.terminated || st.points == want_pts);
        uint64_t extra = 0;
        for (size_t w = 0; w < nw; w++)
            extra |= got->words[w] & ~want->words[w];
        assert_int_equal(extra, 0);
    }
}

static int64_t pick_bound(const pts *p)
{
    uint32_t r = t_below(6);
    if (r == 0)
        return INT64_MIN;
    if (r == 1)
        return INT64_MAX;
    if (r == 2 || !p->n)
        return (int64_t)t_rand();
    return (int64_t)((uint64_t)p->v[t_below((uint32_t)p->n)] + (uint64_t)t_below(3) - 1);
}

static void test_random_vs_brute(void **state)
{
    (void)state;
    t_seed("bkd_random");
    sc_buf buf = {0};
    static const uint32_t leaves[] = {1, 2, 3, 7, 16, 100, 512};
    for (int rep = 0; rep < 60; rep++) {
        pts p;
        size_t n = t_below(4) == 0 ? t_below(20) : t_below(6000);
        int dist = (int)t_below(5), docs = (int)t_below(4);
        make_points(&p, n, dist, docs);
        uint32_t leaf = leaves[t_below(7)];
        sc_bkd t;
        build(&p, leaf, &buf, &t);
        assert_int_equal(sc_bkd_n_points(&t), n);
        if (n) {
            int64_t mn = INT64_MAX, mx = INT64_MIN;
            for (size_t i = 0; i < n; i++) {
                mn = p.v[i] < mn ? p.v[i] : mn;
                mx = p.v[i] > mx ? p.v[i] : mx;
            }
            assert_int_equal(sc_bkd_min(&t), mn);
            assert_int_equal(sc_bkd_max(&t), mx);
        }
        sc_bitset got, want;
        assert_int_equal(sc_bitset_init(&got, p.bound), SC_OK);
        assert_int_equal(sc_bitset_init(&want, p.bound), SC_OK);
        /* distinct docs */
        for (size_t i = 0; i < n; i++)
            sc_bitset_set(&want, p.d[i]);
        assert_int_equal(sc_bkd_n_docs(&t), sc_bitset_count(&want));
        for (int q = 0; q < (docs == 2 ? 4 : 30); q++) {
            int64_t a = pick_bound(&p), b = pick_bound(&p);
            if (t_below(8) && a > b) {
                int64_t x = a;
                a = b;
                b = x;
            }
            check_range(&p, &t, a, b, &got, &want);
        }
        check_range(&p, &t, INT64_MIN, INT64_MAX, &got, &want);
        sc_bitset_fini(&got);
        sc_bitset_fini(&want);
        pts_free(&p);
    }
    sc_vec_free(&buf);
}

static void test_negative_zero(void **state)
{
    (void)state;
    int64_t v[4] = {sortable_double(-0.0), sortable_double(0.0), sortable_double(-1.0),
                    sortable_double(1.0)};
    uint32_t d[4] = {0, 1, 2, 3};
    assert_true(v[0] < v[1]);
    assert_true(v[2] < v[0]);
    sc_buf buf = {0};
    sc_bkd t;
    assert_int_equal(sc_bkd_write(v, d, 4, 4, 0, &buf), SC_OK);
    assert_int_equal(sc_bkd_open(sc_slice_make(buf.ptr, buf.len), &t), SC_OK);
    uint64_t c;
    assert_int_equal(sc_bkd_count(&t, sortable_double(0.0), sortable_double(0.0), &c), SC_OK);
    assert_int_equal(c, 1); /* +0 only, like Lucene's DoublePoint */
    assert_int_equal(sc_bkd_count(&t, sortable_double(-0.0), sortable_double(0.0), &c), SC_OK);
    assert_int_equal(c, 2);
    assert_int_equal(sc_bkd_count(&t, sortable_double(-1.0), sortable_double(1.0), &c), SC_OK);
    assert_int_equal(c, 4);
    sc_vec_free(&buf);
}

/* Leaves crafted so every packing kind occurs; each leaf read back equals its points. */
static void test_every_packing_kind(void **state)
{
    (void)state;
    t_seed("bkd_kinds");
    const uint32_t L = 64;
    /* leaf 0: run; leaf 1: bitset (dense with gaps); leaf 2: D16; leaf 3: D24; leaf 4: D32;
     * leaf 5: D16 with duplicate docs (multi-valued) */
    size_t n = 6 * L;
    pts p;
    pts_alloc(&p, n, (1u << 24) + 10);
    for (uint32_t i = 0; i < L; i++) {
        p.d[i] = 1000 + i;
        p.d[L + i] = 5000 + 2 * i + (i % 3 == 0);
        p.d[2 * L + i] = 100000 + i * 900;
        p.d[3 * L + i] = 200000 + i * 200000;
        p.d[4 * L + i] = i == L - 1 ? (1u << 24) + 5 : 1 + i; /* span > 2^24: 32-bit */
        p.d[5 * L + i] = 50 + i / 2;
    }
    for (size_t i = 0; i < n; i++)
        p.v[i] = (int64_t)(i / L) * 1000000 + (int64_t)t_below(1000) * (i / L == 4 ? -7 : 13);
    /* keep the leaves' value ranges disjoint and ordered so leaf j holds group j */
    for (size_t i = 0; i < n; i++)
        p.v[i] = (int64_t)(i / L) * 100000000 + (p.v[i] % 1000000 + 1000000) % 1000000;
    sc_buf buf = {0};
    sc_bkd t;
    build(&p, L, &buf, &t);
    assert_int_equal(sc_bkd_n_leaves(&t), 6);
    static const uint8_t want_kind[6] = {SC_BKD_DOCS_RUN, SC_BKD_DOCS_BITSET, SC_BKD_DOCS_D16,
                                         SC_BKD_DOCS_D24, SC_BKD_DOCS_D32,    SC_BKD_DOCS_D16};
    uint32_t docs[64];
    int64_t vals[64];
    for (uint32_t j = 0; j < 6; j++) {
        uint32_t cnt;
        uint8_t kind;
        assert_int_equal(sc_bkd_leaf_read(&t, j, docs, vals, &cnt, &kind), SC_OK);
        assert_int_equal(cnt, L);
        assert_int_equal(kind, want_kind[j]);
        /* the multiset of (doc, value) pairs equals the group's */
        for (uint32_t i = 0; i < L; i++) {
            bool found = false;
            for (uint32_t k = 0; k < L && !found; k++)
                found = p.d[j * L + k] == docs[i] && p.v[j * L + k] == vals[i];
            assert_true(found);
            if (i)
                assert_true(docs[i] >= docs[i - 1]);
        }
    }
    sc_bitset got, want;
    assert_int_equal(sc_bitset_init(&got, p.bound), SC_OK);
    assert_int_equal(sc_bitset_init(&want, p.bound), SC_OK);
    for (int q = 0; q < 60; q++) {
        int64_t a = pick_bound(&p), b = pick_bound(&p);
        if (a > b) {
            int64_t x = a;
            a = b;
            b = x;
        }
        check_range(&p, &t, a, b, &got, &want);
    }
    sc_bitset_fini(&got);
    sc_bitset_fini(&want);
    sc_vec_free(&buf);
    pts_free(&p);
}

static void test_empty_and_bad_args(void **state)
{
    (void)state;
    sc_buf buf = {0};
    sc_bkd t;
    assert_int_equal(sc_bkd_write(NULL, NULL, 0, 10, 0, &buf), SC_OK);
    assert_int_equal(sc_bkd_open(sc_slice_make(buf.ptr, buf.len), &t), SC_OK);
    uint64_t c = 9;
    assert_int_equal(sc_bkd_count(&t, INT64_MIN, INT64_MAX, &c), SC_OK);
    assert_int_equal(c, 0);
    sc_bitset bs;
    assert_int_equal(sc_bitset_init(&bs, 5), SC_OK);
    assert_int_equal(sc_bkd_intersect(&t, 0, 1, &bs, 0, NULL), SC_EINVAL); /* too small */
    sc_bitset_fini(&bs);
    int64_t v = 1;
    uint32_t d = 10;
    buf.len = 0;
    assert_int_equal(sc_bkd_write(&v, &d, 1, 10, 0, &buf), SC_EINVAL); /* doc >= bound */
    assert_int_equal(sc_bkd_open(sc_slice_make("BKD", 3), &t), SC_ECORRUPT);
    sc_vec_free(&buf);
}

static void test_corruption_never_crashes(void **state)
{
    (void)state;
    t_seed("bkd_corrupt");
    sc_buf buf = {0};
    for (int rep = 0; rep < 300; rep++) {
        pts p;
        make_points(&p, 1 + t_below(700), (int)t_below(5), (int)t_below(2) * 2 + 1); /* dense */
        buf.len = 0;
        assert_int_equal(sc_bkd_write(p.v, p.d, p.n, p.bound, 1 + t_below(64), &buf), SC_OK);
        size_t len = buf.len;
        if (t_below(3) == 0)
            len = t_below((uint32_t)len);
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf.ptr, len);
        int flips = (int)t_below(8);
        for (int f = 0; f < flips && len; f++)
            copy[t_below((uint32_t)len)] ^= (uint8_t)(1u << t_below(8));
        sc_bkd t;
        if (sc_bkd_open(sc_slice_make(copy, len), &t) == SC_OK) {
            sc_bitset bs;
            assert_int_equal(sc_bitset_init(&bs, t.doc_bound ? t.doc_bound : 1), SC_OK);
            sc_status st = sc_bkd_intersect(&t, pick_bound(&p), pick_bound(&p), &bs, 0, NULL);
            assert_true(st == SC_OK || st == SC_ECORRUPT);
            (void)!sc_bkd_intersect(&t, INT64_MIN, INT64_MAX, &bs, 0, NULL);
            uint64_t c;
            (void)!sc_bkd_count(&t, INT64_MIN, INT64_MAX, &c);
            (void)sc_bkd_estimate(&t, INT64_MIN, 0);
            uint32_t *docs = malloc(sizeof(uint32_t) * t.leaf_size);
            int64_t *vals = malloc(sizeof(int64_t) * t.leaf_size);
            for (uint32_t j = 0; j < sc_bkd_n_leaves(&t); j++) {
                uint32_t cnt;
                (void)!sc_bkd_leaf_read(&t, j, docs, vals, &cnt, NULL);
            }
            free(docs);
            free(vals);
            sc_bitset_fini(&bs);
        }
        free(copy);
        pts_free(&p);
    }
    sc_vec_free(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_brute),          cmocka_unit_test(test_negative_zero),
        cmocka_unit_test(test_every_packing_kind),       cmocka_unit_test(test_empty_and_bad_args),
        cmocka_unit_test(test_corruption_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
