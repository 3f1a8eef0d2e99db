/* sc_hll against exact counts (seed printed, SCRY_SEED reruns): MurmurHash3 x64_128 self-check,
 * the threshold -> precision mapping, near-exact counts below the switch, relative error within
 * the bound of docs/aggregations-sketches.md for cardinalities up to 10M at several precisions
 * (random 64-bit hashes added directly), merges of partial sketches equal to the sketch of all
 * values across modes, canonical encode/decode round trips, and corrupt bytes rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/hll.h"

#include "splitmix.h"

static int setup(void **state)
{
    (void)state;
    sm_seed("hll");
    return 0;
}

static sc_hll *new_hll(uint32_t p)
{
    sc_hll *h;
    assert_int_equal(sc_hll_new(p, NULL, NULL, &h), SC_OK);
    return h;
}

/* The bound asserted for one estimate: 6 standard errors (6 * 1.04/sqrt(m)). Measured
 * (docs/aggregations-sketches.md): RMS within 1.1 * 1.04/sqrt(m) for p >= 8, and no single
 * estimate past 5 standard errors in 20000 sketches per cardinality at p = 8. */
static double bound_for(uint32_t p)
{
    return 6 * 1.04 / sqrt((double)(1u << p));
}

static void test_murmur3(void **state)
{
    (void)state;
    uint64_t out[2];
    sc_murmur3_x64_128("", 0, 0, out);
    assert_true(out[0] == 0 && out[1] == 0);
    /* SMHasher's verification: hash keys {0}, {0,1}, ..., {0..254} with seed 256 - len, then
     * hash the concatenated 128-bit results with seed 0; the first 32 bits are 0x6384BA69. */
    uint8_t key[256], hashes[256 * 16];
    for (int i = 0; i < 256; i++) {
        key[i] = (uint8_t)i;
        sc_murmur3_x64_128(key, (size_t)i, (uint32_t)(256 - i), out);
        for (int b = 0; b < 8; b++) {
            hashes[i * 16 + b] = (uint8_t)(out[0] >> (8 * b));
            hashes[i * 16 + 8 + b] = (uint8_t)(out[1] >> (8 * b));
        }
    }
    sc_murmur3_x64_128(hashes, sizeof hashes, 0, out);
    assert_int_equal((uint32_t)out[0], 0x6384BA69u);
    assert_true(sc_hll_hash_bytes(sc_slice_cstr("a")) != sc_hll_hash_bytes(sc_slice_cstr("b")));
    assert_true(sc_hll_hash_u64(1) != sc_hll_hash_u64(2));
}

static void test_precision(void **state)
{
    (void)state;
    assert_int_equal(sc_hll_precision_for_threshold(3000), 14);
    assert_int_equal(sc_hll_precision_for_threshold(40000), 18);
    assert_int_equal(sc_hll_precision_for_threshold(1000000), 18);
    assert_int_equal(sc_hll_precision_for_threshold(100), 10);
    assert_int_equal(sc_hll_precision_for_threshold(0), 4);
    assert_int_equal(sc_hll_precision_for_threshold(-5), 4);
    sc_hll *h;
    assert_int_equal(sc_hll_new(3, NULL, NULL, &h), SC_EINVAL);
    assert_int_equal(sc_hll_new(19, NULL, NULL, &h), SC_EINVAL);
    h = new_hll(14);
    assert_int_equal(sc_hll_estimate(h), 0);
    assert_true(sc_hll_is_linear(h));
    sc_hll_free(h);
    sc_hll_free(NULL);
}

/* Below the switch: counts are exact, up to the rare shared 31-bit prefix (expected n^2/2^32,
 * corrected on average by the linear-counting estimate). Duplicates never count twice. */
static void test_exact_below_threshold(void **state)
{
    (void)state;
    static const uint32_t ps[] = {4, 8, 10, 14, 16, 18};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        uint32_t p = ps[k], lim = 3u << (p - 4);
        sc_hll *h = new_hll(p);
        uint64_t *vals = malloc(sizeof(uint64_t) * lim);
        for (uint32_t n = 0; n < lim; n++) {
            vals[n] = rnd();
            assert_int_equal(sc_hll_add(h, vals[n]), SC_OK);
            if (n % 3 == 0) /* a duplicate */
                assert_int_equal(sc_hll_add(h, vals[rnd() % (n + 1)]), SC_OK);
            uint64_t est = sc_hll_estimate(h);
            double tol = n < 3000 ? 1 : 3;
            if (fabs((double)est - (n + 1)) > tol)
                fail_msg("p=%u n=%u est=%llu", p, n + 1, (unsigned long long)est);
        }
        if (!sc_hll_is_linear(h))
            fail_msg("p=%u switched at %u values", p, lim);
        assert_true(sc_hll_mem_bytes(h) <= (1u << p) + 64);
        /* the switch comes with the next new encoding (later if two values shared a prefix) */
        int extra = 0;
        while (sc_hll_is_linear(h) && extra++ < 10)
            assert_int_equal(sc_hll_add(h, rnd()), SC_OK);
        assert_false(sc_hll_is_linear(h));
        assert_true(sc_hll_mem_bytes(h) <= (1u << p) + 64);
        free(vals);
        sc_hll_free(h);
    }
}

/* Register mode, one random stream per precision, checked at ~12 points per decade up to 10M
 * (at least 3M for the tightest precisions, where adding dominates the run time). */
static void test_error_bound(void **state)
{
    (void)state;
    static const uint32_t ps[] = {8, 10, 12, 14, 16, 18};
    uint64_t batch[1024];
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        uint32_t p = ps[k];
        sc_hll *h = new_hll(p);
        uint64_t n = 0, next = 1;
        double worst = 0, sum_sq = 0;
        int n_checks = 0;
        while (next <= 10000000) {
            while (n < next) {
                size_t b = next - n < 1024 ? (size_t)(next - n) : 1024;
                for (size_t i = 0; i < b; i++)
                    batch[i] = rnd();
                assert_int_equal(sc_hll_add_batch(h, batch, b), SC_OK);
                n += b;
            }
            double rel = ((double)sc_hll_estimate(h) - (double)n) / (double)n;
            if (n > (3u << (p - 4))) {
                sum_sq += rel * rel;
                n_checks++;
                if (fabs(rel) > worst)
                    worst = fabs(rel);
            }
            if (fabs(rel) > bound_for(p) && n > 1)
                fail_msg("p=%u n=%llu est=%llu rel=%.4f bound=%.4f", p, (unsigned long long)n,
                         (unsigned long long)sc_hll_estimate(h), rel, bound_for(p));
            next = next < 10 ? next + 1 : next + next / 5;
        }
        printf("# p=%u register-mode checks=%d rms=%.4f%% worst=%.4f%% (1.04/sqrt(m)=%.4f%%)\n", p,
               n_checks, 100 * sqrt(sum_sq / n_checks), 100 * worst,
               100 * 1.04 / sqrt((double)(1u << p)));
        sc_hll_free(h);
    }
}

static void assert_same(const sc_hll *a, const sc_hll *b)
{
    sc_buf x = {0}, y = {0};
    assert_int_equal(sc_hll_encode(a, &x), SC_OK);
    assert_int_equal(sc_hll_encode(b, &y), SC_OK);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.ptr, y.ptr, x.len);
    assert_int_equal(sc_hll_estimate(a), sc_hll_estimate(b));
    sc_vec_free(&x);
    sc_vec_free(&y);
}

/* Values split over k partial sketches (random sizes, overlapping) merged in any order equal the
 * sketch of all values, byte for byte, across linear and register modes. */
static void test_merge(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        uint32_t p = 4 + (uint32_t)(rnd() % 15);
        uint32_t lim = 3u << (p - 4);
        uint32_t n_vals = (uint32_t)(rnd() % (round % 2 ? lim * 3 : lim + 2)) + 1;
        uint32_t k = 1 + (uint32_t)(rnd() % 5);
        uint64_t *vals = malloc(sizeof(uint64_t) * n_vals);
        for (uint32_t i = 0; i < n_vals; i++)
            vals[i] = rnd();
        sc_hll *all = new_hll(p), *parts[5];
        for (uint32_t j = 0; j < k; j++)
            parts[j] = new_hll(p);
        assert_int_equal(sc_hll_add_batch(all, vals, n_vals), SC_OK);
        for (uint32_t i = 0; i < n_vals; i++) {
            assert_int_equal(sc_hll_add(parts[rnd() % k], vals[i]), SC_OK);
            if (rnd() % 4 == 0) /* the same value in another part too */
                assert_int_equal(sc_hll_add(parts[rnd() % k], vals[i]), SC_OK);
        }
        sc_hll *acc = new_hll(p);
        for (uint32_t j = 0; j < k; j++)
            assert_int_equal(sc_hll_merge(acc, parts[(j + (uint32_t)round) % k]), SC_OK);
        assert_same(acc, all);
        /* merge into a partial (register or linear dst) gives the same */
        for (uint32_t j = 1; j < k; j++)
            assert_int_equal(sc_hll_merge(parts[0], parts[j]), SC_OK);
        assert_same(parts[0], all);
        sc_hll *other = new_hll(p == 18 ? 17 : p + 1);
        assert_int_equal(sc_hll_merge(acc, other), SC_EINVAL);
        sc_hll_free(other);
        for (uint32_t j = 0; j < k; j++)
            sc_hll_free(parts[j]);
        sc_hll_free(acc);
        sc_hll_free(all);
        free(vals);
    }
}

/* Round trips in both modes (re-encoding is byte-identical), then every truncation and many
 * random byte flips: SC_ECORRUPT or a sketch that re-encodes to exactly the flipped bytes. */
static void test_encode_decode(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {0, 1, 2, 50, 200, 3000, 5000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t p = s % 2 ? 10 : 8;
        sc_hll *h = new_hll(p);
        for (uint32_t i = 0; i < sizes[s]; i++)
            assert_int_equal(sc_hll_add(h, i % 7 == 0 ? (uint64_t)i << 60 : rnd()), SC_OK);
        sc_buf enc = {0}, again = {0};
        assert_int_equal(sc_hll_encode(h, &enc), SC_OK);
        sc_hll *d;
        assert_int_equal(sc_hll_decode(sc_slice_make(enc.ptr, enc.len), NULL, NULL, &d), SC_OK);
        assert_same(h, d);
        sc_hll_free(d);
        for (size_t cut = 0; cut < enc.len; cut++) {
            assert_int_equal(sc_hll_decode(sc_slice_make(enc.ptr, cut), NULL, NULL, &d),
                             SC_ECORRUPT);
            assert_null(d);
        }
        uint8_t *bytes = malloc(enc.len + 1);
        for (int f = 0; f < 300; f++) {
            memcpy(bytes, enc.ptr, enc.len);
            size_t at = rnd() % enc.len;
            bytes[at] ^= (uint8_t)(1u << (rnd() % 8));
            sc_status st = sc_hll_decode(sc_slice_make(bytes, enc.len), NULL, NULL, &d);
            if (st == SC_OK) {
                sc_vec_clear(&again);
                assert_int_equal(sc_hll_encode(d, &again), SC_OK);
                assert_int_equal(again.len, enc.len);
                assert_memory_equal(again.ptr, bytes, enc.len);
                (void)sc_hll_estimate(d);
                sc_hll_free(d);
            } else {
                assert_int_equal(st, SC_ECORRUPT);
            }
        }
        memcpy(bytes, enc.ptr, enc.len);
        bytes[enc.len] = 0;
        assert_int_equal(sc_hll_decode(sc_slice_make(bytes, enc.len + 1), NULL, NULL, &d),
                         SC_ECORRUPT);
        free(bytes);
        sc_vec_free(&enc);
        sc_vec_free(&again);
        sc_hll_free(h);
    }
}

/* A sketch in an arena equals the pooled one; a small budget gives SC_ELIMIT on growth and
 * leaves a valid sketch. */
static void test_arena(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_hll *h, *ref = new_hll(12);
    assert_int_equal(sc_hll_new(12, NULL, &a, &h), SC_OK);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = rnd();
        assert_int_equal(sc_hll_add(h, x), SC_OK);
        assert_int_equal(sc_hll_add(ref, x), SC_OK);
        if (i == 100 || i == 19999)
            assert_same(h, ref);
    }
    sc_buf enc = {0};
    assert_int_equal(sc_hll_encode(ref, &enc), SC_OK);
    sc_hll *d;
    assert_int_equal(sc_hll_decode(sc_slice_make(enc.ptr, enc.len), NULL, &a, &d), SC_OK);
    assert_same(d, ref);
    sc_hll_free(d); /* a no-op in an arena */
    sc_hll_free(h);
    sc_arena_fini(&a);
    sc_vec_free(&enc);
    sc_hll_free(ref);

    sc_arena_init(&a, 4096);
    assert_int_equal(sc_hll_new(14, NULL, &a, &h), SC_OK);
    sc_status st = SC_OK;
    uint32_t n = 0;
    while (st == SC_OK && n < 100000) {
        st = sc_hll_add(h, rnd());
        n += st == SC_OK;
    }
    assert_int_equal(st, SC_ELIMIT);
    assert_true(sc_hll_is_linear(h));
    assert_int_equal(sc_hll_estimate(h), n);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_murmur3),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_exact_below_threshold),
        cmocka_unit_test(test_error_bound),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_encode_decode),
        cmocka_unit_test(test_arena),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
