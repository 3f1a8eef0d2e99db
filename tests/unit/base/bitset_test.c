/* Tests for base/bitset: random ranges across word boundaries against a naive bool-array model
 * (printed seed): set_range, count_range, next_set, foreach, to_array, word-window and/or/andnot;
 * sizes that are not multiples of 64, and the empty set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/bitset.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void seed_rng(const char *test)
{
    const char *env = getenv("SCRY_TEST_SEED");
    rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    printf("%s: seed %llu (rerun with SCRY_TEST_SEED)\n", test, (unsigned long long)rng_state);
}

typedef struct collect {
    size_t *out;
    size_t n;
    size_t stop_after;
} collect;

static int collect_fn(void *ctx, size_t i)
{
    collect *c = ctx;
    c->out[c->n++] = i;
    return c->n == c->stop_after ? 42 : 0;
}

static void check_against(const sc_bitset *b, const bool *model, size_t n_bits)
{
    /* Bits beyond n_bits stay zero. */
    size_t nw = sc_bitset_words_for(n_bits);
    if (n_bits % 64)
        assert_int_equal(b->words[nw - 1] >> (n_bits % 64), 0);
    size_t total = 0;
    for (size_t i = 0; i < n_bits; i++) {
        assert_int_equal(sc_bitset_test(b, i), model[i]);
        total += model[i];
    }
    assert_int_equal(sc_bitset_count(b), total);
    size_t *idx = malloc((n_bits + 1) * sizeof(size_t));
    uint32_t *arr = malloc((n_bits + 1) * sizeof(uint32_t));
    for (int k = 0; k < 30; k++) {
        size_t from = rnd() % (n_bits + 2), to = rnd() % (n_bits + 70);
        size_t want = 0, first = n_bits;
        for (size_t i = from; i < to && i < n_bits; i++) {
            want += model[i];
            if (model[i] && first == n_bits)
                first = i;
        }
        assert_int_equal(sc_bitset_count_range(b, from, to), want);
        size_t ns = sc_bitset_next_set(b, from);
        size_t model_next = n_bits;
        for (size_t i = from; i < n_bits; i++)
            if (model[i]) {
                model_next = i;
                break;
            }
        assert_int_equal(ns, model_next);
        size_t got = sc_bitset_to_array(b, from, to, 1000, arr);
        assert_int_equal(got, want);
        size_t j = 0;
        for (size_t i = from; i < to && i < n_bits; i++)
            if (model[i])
                assert_int_equal(arr[j++], i + 1000);
        collect c = {idx, 0, 0};
        assert_int_equal(sc_bitset_foreach(b, from, to, collect_fn, &c), 0);
        assert_int_equal(c.n, want);
        if (want >= 2) {
            collect c2 = {idx, 0, 2};
            assert_int_equal(sc_bitset_foreach(b, from, to, collect_fn, &c2), 42);
            assert_int_equal(c2.n, 2);
            assert_int_equal(idx[0], first);
        }
    }
    free(idx);
    free(arr);
}

static void test_against_model(void **state)
{
    (void)state;
    seed_rng("bitset model");
    size_t sizes[] = {1, 63, 64, 65, 127, 128, 129, 1000, 4096, 4097};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        sc_bitset a, b;
        assert_int_equal(sc_bitset_init(&a, n), SC_OK);
        assert_int_equal(sc_bitset_init(&b, n), SC_OK);
        bool *ma = calloc(n, 1), *mb = calloc(n, 1);
        for (int round = 0; round < 40; round++) {
            size_t from = rnd() % (n + 1), to = from + rnd() % (n + 66 - from);
            int op = (int)(rnd() % 6);
            if (op == 0) {
                sc_bitset_set_range(&a, from, to);
                for (size_t i = from; i < to && i < n; i++)
                    ma[i] = true;
            } else if (op == 1) {
                size_t i = rnd() % n;
                sc_bitset_set(&b, i);
                mb[i] = true;
                i = rnd() % n;
                sc_bitset_clear(&a, i);
                ma[i] = false;
                sc_bitset_set_range(&b, from, to);
                for (size_t k = from; k < to && k < n; k++)
                    mb[k] = true;
            } else {
                size_t nw = sc_bitset_words_for(n);
                size_t wf = rnd() % (nw + 1), wt = wf + rnd() % (nw + 1 - wf);
                for (size_t i = wf * 64; i < wt * 64 && i < n; i++) {
                    if (op == 2)
                        ma[i] = ma[i] && mb[i];
                    else if (op == 3)
                        ma[i] = ma[i] || mb[i];
                    else if (op == 4)
                        ma[i] = ma[i] && !mb[i];
                }
                if (op == 2)
                    sc_bitset_and_words(&a, &b, wf, wt);
                else if (op == 3)
                    sc_bitset_or_words(&a, &b, wf, wt);
                else if (op == 4)
                    sc_bitset_andnot_words(&a, &b, wf, wt);
                else {
                    sc_bitset_clear_all(&b);
                    memset(mb, 0, n);
                }
            }
            check_against(&a, ma, n);
            check_against(&b, mb, n);
        }
        free(ma);
        free(mb);
        sc_bitset_fini(&a);
        sc_bitset_fini(&b);
    }
}

static void test_popcount_words(void **state)
{
    (void)state;
    uint64_t w[70], x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < 70; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w[i] = i == 3 ? 0 : i == 4 ? ~0ull : x;
    }
    for (size_t n = 0; n <= 70; n++) {
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++)
            for (int b = 0; b < 64; b++)
                want += (w[i] >> b) & 1;
        assert_int_equal(sc_popcount_words(w, n), want);
    }
}

static void test_edges(void **state)
{
    (void)state;
    sc_bitset b;
    assert_int_equal(sc_bitset_init(&b, 0), SC_OK);
    assert_int_equal(sc_bitset_count(&b), 0);
    assert_int_equal(sc_bitset_next_set(&b, 0), 0);
    sc_bitset_set_range(&b, 0, 10);
    assert_int_equal(sc_bitset_count(&b), 0);
    sc_bitset_fini(&b);
    sc_bitset_fini(&b);
    assert_int_equal(sc_bitset_init(&b, 130), SC_OK);
    sc_bitset_set_range(&b, 0, 1000); /* clamped to n_bits */
    assert_int_equal(sc_bitset_count(&b), 130);
    assert_int_equal(b.words[2], 3);
    sc_bitset_set_range(&b, 50, 10); /* empty */
    assert_int_equal(sc_bitset_next_set(&b, 129), 129);
    assert_int_equal(sc_bitset_next_set(&b, 130), 130);
    assert_int_equal(sc_bitset_next_set(&b, 5000), 130);
    sc_bitset_clear_all(&b);
    assert_int_equal(sc_bitset_next_set(&b, 0), 130);
    sc_bitset_set(&b, 64);
    assert_int_equal(sc_bitset_next_set(&b, 0), 64);
    assert_int_equal(sc_bitset_next_set(&b, 65), 130);
    sc_bitset_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_popcount_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
