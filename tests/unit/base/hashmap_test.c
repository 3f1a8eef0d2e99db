/* Tests for base/hashmap: a randomized run against a naive model (printed seed), copied vs
 * borrowed keys, empty and binary keys, growth, removal with backward shift, iteration, clear
 * and pool accounting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/alloc.h"
#include "base/hashmap.h"

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

static SC_ALLOC_POOL_DEFINE(test_pool, "test.hashmap");

static void test_basic(void **state)
{
    (void)state;
    sc_hashmap m;
    sc_hashmap_init(&m, &test_pool, 0);
    uint64_t v = 99;
    assert_false(sc_hashmap_get(&m, sc_slice_cstr("a"), &v));
    assert_null(sc_hashmap_find(&m, sc_slice_cstr("a")));
    assert_false(sc_hashmap_remove(&m, sc_slice_cstr("a"), NULL));
    assert_int_equal(sc_hashmap_put(&m, sc_slice_cstr("a"), 1), SC_OK);
    assert_int_equal(sc_hashmap_len(&m), 1);
    assert_true(sc_hashmap_get(&m, sc_slice_cstr("a"), &v));
    assert_int_equal(v, 1);
    assert_int_equal(sc_hashmap_put(&m, sc_slice_cstr("a"), 2), SC_OK);
    assert_int_equal(sc_hashmap_len(&m), 1);
    assert_true(sc_hashmap_get(&m, sc_slice_cstr("a"), &v));
    assert_int_equal(v, 2);
    /* Empty key and keys that differ only after a NUL byte are distinct keys. */
    assert_int_equal(sc_hashmap_put(&m, sc_slice_make(NULL, 0), 3), SC_OK);
    assert_int_equal(sc_hashmap_put(&m, sc_slice_make("x\0a", 3), 4), SC_OK);
    assert_int_equal(sc_hashmap_put(&m, sc_slice_make("x\0b", 3), 5), SC_OK);
    assert_int_equal(sc_hashmap_len(&m), 4);
    assert_true(sc_hashmap_get(&m, sc_slice_make("", 0), &v));
    assert_int_equal(v, 3);
    assert_true(sc_hashmap_get(&m, sc_slice_make("x\0b", 3), &v));
    assert_int_equal(v, 5);
    assert_false(sc_hashmap_get(&m, sc_slice_make("x", 1), NULL));
    /* upsert: inserted with 0, then found. */
    uint64_t *pv;
    bool inserted;
    assert_int_equal(sc_hashmap_upsert(&m, sc_slice_cstr("term"), &pv, &inserted), SC_OK);
    assert_true(inserted);
    assert_int_equal(*pv, 0);
    *pv += 7;
    assert_int_equal(sc_hashmap_upsert(&m, sc_slice_cstr("term"), &pv, &inserted), SC_OK);
    assert_false(inserted);
    assert_int_equal(*pv, 7);
    /* Pointer values. */
    int x;
    assert_int_equal(sc_hashmap_put_ptr(&m, sc_slice_cstr("ptr"), &x), SC_OK);
    assert_ptr_equal(sc_hashmap_get_ptr(&m, sc_slice_cstr("ptr")), &x);
    assert_null(sc_hashmap_get_ptr(&m, sc_slice_cstr("nope")));
    assert_true(sc_hashmap_remove(&m, sc_slice_cstr("a"), &v));
    assert_int_equal(v, 2);
    assert_false(sc_hashmap_get(&m, sc_slice_cstr("a"), NULL));
    assert_true(sc_alloc_pool_bytes(&test_pool) > 0);
    assert_int_equal((size_t)sc_alloc_pool_bytes(&test_pool), sc_hashmap_memory_bytes(&m));
    sc_hashmap_fini(&m);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
}

static void test_copies_keys(void **state)
{
    (void)state;
    sc_hashmap m;
    sc_hashmap_init(&m, NULL, 0);
    char buf[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buf, sizeof(buf), "key-%d", i);
        assert_int_equal(sc_hashmap_put(&m, sc_slice_make(buf, (size_t)n), (uint64_t)i), SC_OK);
    }
    memset(buf, 'z', sizeof(buf)); /* the map must not depend on the caller's buffer */
    /* A key larger than the key chunk goes into its own chunk. */
    size_t big_len = 100000;
    char *big = malloc(big_len);
    memset(big, 'b', big_len);
    assert_int_equal(sc_hashmap_put(&m, sc_slice_make(big, big_len), 12345), SC_OK);
    memset(big, 'c', big_len);
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buf, sizeof(buf), "key-%d", i);
        uint64_t v;
        assert_true(sc_hashmap_get(&m, sc_slice_make(buf, (size_t)n), &v));
        assert_int_equal(v, (uint64_t)i);
    }
    memset(big, 'b', big_len);
    uint64_t v;
    assert_true(sc_hashmap_get(&m, sc_slice_make(big, big_len), &v));
    assert_int_equal(v, 12345);
    free(big);
    /* Iteration hands back the map's own key copies. */
    size_t pos = 0, seen = 0;
    sc_slice k;
    while (sc_hashmap_next(&m, &pos, &k, &v)) {
        if (k.len < 20) {
            int n = snprintf(buf, sizeof(buf), "key-%d", (int)v);
            assert_true(sc_slice_eq(k, sc_slice_make(buf, (size_t)n)));
        }
        seen++;
    }
    assert_int_equal(seen, 1001);
    sc_hashmap_fini(&m);
}

static void test_borrowed_keys(void **state)
{
    (void)state;
    static const char *words[] = {"alpha", "beta", "gamma", "delta", ""};
    sc_hashmap m;
    sc_hashmap_init(&m, NULL, SC_HASHMAP_BORROW_KEYS);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(sc_hashmap_put(&m, sc_slice_cstr(words[i]), i), SC_OK);
    assert_int_equal(sc_hashmap_memory_bytes(&m), m.cap * sizeof(sc_hashmap_slot));
    size_t pos = 0;
    sc_slice k;
    uint64_t v;
    while (sc_hashmap_next(&m, &pos, &k, &v)) {
        if (v < 4)
            assert_ptr_equal(k.ptr, words[v]); /* the very same bytes, not a copy */
    }
    sc_hashmap_fini(&m);
}

static void test_clear_and_reserve(void **state)
{
    (void)state;
    sc_hashmap m;
    sc_hashmap_init(&m, NULL, 0);
    assert_int_equal(sc_hashmap_reserve(&m, 1000), SC_OK);
    size_t cap = m.cap;
    assert_true(cap * 4 / 5 >= 1000);
    char buf[16];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buf, sizeof(buf), "%d", i);
        assert_int_equal(sc_hashmap_put(&m, sc_slice_make(buf, (size_t)n), 1), SC_OK);
    }
    assert_int_equal(m.cap, cap); /* reserve meant no growth */
    sc_hashmap_clear(&m);
    assert_int_equal(sc_hashmap_len(&m), 0);
    assert_false(sc_hashmap_get(&m, sc_slice_cstr("5"), NULL));
    size_t pos = 0;
    assert_false(sc_hashmap_next(&m, &pos, NULL, NULL));
    assert_int_equal(sc_hashmap_put(&m, sc_slice_cstr("5"), 6), SC_OK);
    assert_true(sc_hashmap_get(&m, sc_slice_cstr("5"), NULL));
    sc_hashmap_fini(&m);
    sc_hashmap_fini(&m); /* fini twice is harmless */
}

/* The model: a flat array of (key, value, live) searched linearly. Keys are drawn from a small
 * universe so puts overwrite and removes hit. */
#define UNIVERSE 3000

typedef struct model {
    char key[UNIVERSE][24];
    size_t len[UNIVERSE];
    uint64_t value[UNIVERSE];
    bool live[UNIVERSE];
} model;

static void check_all(const sc_hashmap *m, const model *md)
{
    size_t n_live = 0;
    for (size_t i = 0; i < UNIVERSE; i++) {
        uint64_t v = 0;
        bool got = sc_hashmap_get(m, sc_slice_make(md->key[i], md->len[i]), &v);
        assert_int_equal(got, md->live[i]);
        if (got)
            assert_int_equal(v, md->value[i]);
        n_live += md->live[i];
    }
    assert_int_equal(sc_hashmap_len(m), n_live);
    size_t pos = 0, n_iter = 0;
    sc_slice k;
    uint64_t v;
    while (sc_hashmap_next(m, &pos, &k, &v))
        n_iter++;
    assert_int_equal(n_iter, n_live);
}

static void test_against_model(void **state)
{
    (void)state;
    seed_rng("hashmap model");
    model *md = calloc(1, sizeof(*md));
    for (size_t i = 0; i < UNIVERSE; i++) {
        /* Varied lengths, including the empty key and shared prefixes. */
        size_t len = i == 0 ? 0 : 1 + rnd() % 20;
        for (size_t j = 0; j < len; j++)
            md->key[i][j] = (char)('a' + (i >> (j % 12)) % 26 + (j == len - 1 ? (char)(i % 7) : 0));
        snprintf(md->key[i] + (len > 6 ? len - 6 : 0), 7, "%06zu", i);
        md->len[i] = i == 0 ? 0 : strlen(md->key[i]);
    }
    for (int flags = 0; flags < 2; flags++) {
        memset(md->live, 0, sizeof(md->live));
        sc_hashmap m;
        sc_hashmap_init(&m, &test_pool, flags ? SC_HASHMAP_BORROW_KEYS : 0);
        for (int op = 0; op < 200000; op++) {
            size_t i = rnd() % UNIVERSE;
            sc_slice k = sc_slice_make(md->key[i], md->len[i]);
            switch (rnd() % 4) {
            case 0:
            case 1: {
                uint64_t v = rnd();
                assert_int_equal(sc_hashmap_put(&m, k, v), SC_OK);
                md->value[i] = v;
                md->live[i] = true;
                break;
            }
            case 2: {
                uint64_t old = 0;
                bool had = sc_hashmap_remove(&m, k, &old);
                assert_int_equal(had, md->live[i]);
                if (had)
                    assert_int_equal(old, md->value[i]);
                md->live[i] = false;
                break;
            }
            default: {
                uint64_t *pv;
                bool inserted;
                assert_int_equal(sc_hashmap_upsert(&m, k, &pv, &inserted), SC_OK);
                assert_int_equal(inserted, !md->live[i]);
                if (inserted)
                    md->value[i] = 0;
                assert_int_equal(*pv, md->value[i]);
                *pv += 1;
                md->value[i]++;
                md->live[i] = true;
            }
            }
            if (op % 20000 == 0)
                check_all(&m, md);
        }
        check_all(&m, md);
        /* Remove everything: the map must end empty with every probe chain intact. */
        for (size_t i = 0; i < UNIVERSE; i++) {
            bool had = sc_hashmap_remove(&m, sc_slice_make(md->key[i], md->len[i]), NULL);
            assert_int_equal(had, md->live[i]);
            md->live[i] = false;
        }
        check_all(&m, md);
        sc_hashmap_fini(&m);
    }
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    free(md);
}

static void test_many_keys(void **state)
{
    (void)state;
    sc_hashmap m;
    sc_hashmap_init(&m, NULL, 0);
    const uint32_t n = 300000;
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(sc_hashmap_put(&m, sc_slice_make(&i, sizeof(i)), i * 3ull), SC_OK);
    assert_int_equal(sc_hashmap_len(&m), n);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
        assert_true(sc_hashmap_get(&m, sc_slice_make(&i, sizeof(i)), &v));
        assert_int_equal(v, i * 3ull);
    }
    for (uint32_t i = n; i < n + 1000; i++)
        assert_false(sc_hashmap_get(&m, sc_slice_make(&i, sizeof(i)), NULL));
    assert_true(m.len <= m.grow_at && m.grow_at < m.cap);
    sc_hashmap_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),         cmocka_unit_test(test_copies_keys),
        cmocka_unit_test(test_borrowed_keys), cmocka_unit_test(test_clear_and_reserve),
        cmocka_unit_test(test_against_model), cmocka_unit_test(test_many_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
