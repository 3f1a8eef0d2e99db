/* Tests for base/histogram: bucket geometry, exactness below 256, bounded relative error,
 * percentiles against a sorted brute-force model (random values, seed printed), merging, and
 * the statistics helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "base/histogram.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_buckets(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 256; v++) {
        size_t b = sc_histogram_bucket_of(v);
        assert_int_equal(b, v);
        assert_int_equal(sc_histogram_bucket_low(b), v);
        assert_int_equal(sc_histogram_bucket_high(b), v);
    }
    /* Buckets tile the value space with no gaps and no overlap. */
    for (size_t b = 0; b + 1 < SC_HISTOGRAM_BUCKETS; b++) {
        assert_true(sc_histogram_bucket_low(b) <= sc_histogram_bucket_high(b));
        assert_int_equal(sc_histogram_bucket_high(b) + 1, sc_histogram_bucket_low(b + 1));
    }
    assert_int_equal(sc_histogram_bucket_of(UINT64_MAX), SC_HISTOGRAM_BUCKETS - 1);
    assert_int_equal(sc_histogram_bucket_high(SC_HISTOGRAM_BUCKETS - 1), UINT64_MAX);
    /* Every value lands in a bucket whose bounds contain it, relative width <= 1/128. */
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rnd() >> (rnd() % 64);
        size_t b = sc_histogram_bucket_of(v);
        uint64_t lo = sc_histogram_bucket_low(b), hi = sc_histogram_bucket_high(b);
        assert_true(lo <= v && v <= hi);
        if (v >= 256)
            assert_true((double)(hi - lo) <= (double)lo / 128.0);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_percentiles_vs_model(void **state)
{
    (void)state;
    sc_histogram *h = malloc(sizeof(*h));
    assert_non_null(h);
    enum {
        N = 20000
    };
    uint64_t *vals = malloc(N * sizeof(*vals));
    assert_non_null(vals);
    for (int round = 0; round < 5; round++) {
        sc_histogram_init(h);
        size_t n = 1 + rnd() % N;
        for (size_t i = 0; i < n; i++) {
            /* log-uniform latencies from 1 us to ~17 s */
            vals[i] = (uint64_t)exp((double)(rnd() % 1000000) / 1000000.0 * 16.6);
            sc_histogram_record(h, vals[i]);
        }
        qsort(vals, n, sizeof(*vals), cmp_u64);
        assert_int_equal(h->n, n);
        assert_int_equal(h->min, vals[0]);
        assert_int_equal(h->max, vals[n - 1]);
        const double pcts[] = {1, 10, 50, 90, 99, 99.9};
        for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
            size_t rank = (size_t)ceil(pcts[k] / 100.0 * (double)n);
            uint64_t want = vals[rank ? rank - 1 : 0];
            uint64_t got = sc_histogram_percentile(h, pcts[k]);
            assert_true(got >= want);
            assert_true((double)got <= (double)want * (1.0 + 1.0 / 128.0) + 1.0);
        }
        assert_int_equal(sc_histogram_percentile(h, 0), vals[0]);
        assert_int_equal(sc_histogram_percentile(h, 100), vals[n - 1]);
    }
    free(vals);
    free(h);
}

static void test_exact_small_and_merge(void **state)
{
    (void)state;
    sc_histogram *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    sc_histogram_init(a);
    sc_histogram_init(b);
    assert_int_equal(sc_histogram_percentile(a, 50), 0);
    assert_true(sc_histogram_mean(a) == 0.0);
    for (uint64_t v = 1; v <= 100; v++)
        sc_histogram_record(v <= 50 ? a : b, v);
    sc_histogram_merge(a, b);
    assert_int_equal(a->n, 100);
    assert_int_equal(sc_histogram_percentile(a, 50), 50);
    assert_int_equal(sc_histogram_percentile(a, 90), 90);
    assert_int_equal(sc_histogram_percentile(a, 99), 99);
    assert_int_equal(sc_histogram_percentile(a, 99.5), 100);
    assert_true(fabs(sc_histogram_mean(a) - 50.5) < 1e-9);
    sc_histogram_record_n(b, 7, 0);
    assert_int_equal(b->n, 50);
    sc_histogram_init(b);
    sc_histogram_merge(a, b); /* merging an empty histogram changes nothing */
    assert_int_equal(a->min, 1);
    assert_int_equal(a->max, 100);
    free(a);
    free(b);
}

static void test_stats(void **state)
{
    (void)state;
    const double v[] = {4, 1, 3, 2};
    assert_true(sc_stats_mean(v, 4) == 2.5);
    assert_true(sc_stats_median(v, 4) == 2.5);
    assert_true(sc_stats_median(v, 3) == 3);
    assert_true(fabs(sc_stats_stddev(v, 4) - sqrt(5.0 / 3.0)) < 1e-12);
    assert_true(sc_stats_stddev(v, 1) == 0);
    assert_true(sc_stats_min(v, 4) == 1 && sc_stats_max(v, 4) == 4);
    assert_true(v[0] == 4); /* input untouched */
    const double g[] = {1, 4, 0, -2, 16};
    assert_true(fabs(sc_stats_geomean(g, 5) - 4.0) < 1e-12);
    assert_true(sc_stats_mean(NULL, 0) == 0 && sc_stats_median(NULL, 0) == 0);
    assert_true(sc_stats_geomean(NULL, 0) == 0);
}

int main(void)
{
    const char *env = getenv("SCRY_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("histogram_test seed=%llu (set SCRY_TEST_SEED to repeat)\n", (unsigned long long)seed);
    rng_state = seed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_percentiles_vs_model),
        cmocka_unit_test(test_exact_small_and_merge),
        cmocka_unit_test(test_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
