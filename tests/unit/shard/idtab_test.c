/* Tests for src/shard/idtab.c (the shard's _id -> entry table): random ids of varied lengths
 * (including empty and binary ones) against a brute-force model, across several growths of the
 * slot array; misses; entry order; the accounting pool returns to zero. Seeded; the seed is
 * printed (SCRY_SEED replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shard/internal.h"

SC_ALLOC_POOL_DEFINE(test_pool, "test.idtab");

static uint64_t rng;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void make_key(uint32_t i, char *buf, size_t *len)
{
    /* unique per i: a random prefix, then i in hex */
    size_t n = next_rand() % 24;
    for (size_t k = 0; k < n; k++)
        buf[k] = (char)(next_rand() & 0xff);
    *len = n + (size_t)snprintf(buf + n, 32, "|%x", i);
}

static void test_model(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
    printf("[idtab] seed=%llu (rerun with SCRY_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    rng = seed | 1;
    const uint32_t n = 50000;
    char(*keys)[64] = calloc(n, 64);
    size_t *lens = calloc(n, sizeof *lens);
    assert_non_null(keys);
    assert_non_null(lens);
    sc__idtab t;
    sc__idtab_init(&t, &test_pool);
    uint32_t e;
    assert_false(sc__idtab_get(&t, sc_slice_cstr("x"), &e));
    for (uint32_t i = 0; i < n; i++) {
        make_key(i, keys[i], &lens[i]);
        sc_slice k = sc_slice_make(keys[i], lens[i]);
        assert_false(sc__idtab_get(&t, k, &e));
        assert_int_equal(sc__idtab_add(&t, k, i + 1), SC_EINVAL); /* out of order */
        assert_int_equal(sc__idtab_add(&t, k, i), SC_OK);
        if (i % 997 == 0) /* everything so far is still found */
            for (uint32_t j = 0; j <= i; j += 7) {
                assert_true(sc__idtab_get(&t, sc_slice_make(keys[j], lens[j]), &e));
                assert_int_equal(e, j);
            }
    }
    assert_int_equal(t.len, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(sc__idtab_get(&t, sc_slice_make(keys[i], lens[i]), &e));
        assert_int_equal(e, i);
        assert_true(sc_slice_eq(sc__idtab_key(&t, i), sc_slice_make(keys[i], lens[i])));
    }
    /* misses: present keys with the last byte changed or one byte added (every key ends with
     * a hex digit, so neither is a key) */
    for (uint32_t i = 0; i < n; i += 13) {
        char other[80];
        memcpy(other, keys[i], lens[i]);
        other[lens[i] - 1] = 'z';
        assert_false(sc__idtab_get(&t, sc_slice_make(other, lens[i]), &e));
        memcpy(other, keys[i], lens[i]);
        other[lens[i]] = '!';
        assert_false(sc__idtab_get(&t, sc_slice_make(other, lens[i] + 1), &e));
    }
    assert_true(sc_alloc_pool_bytes(&test_pool) > 0);
    sc__idtab_fini(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    /* the empty key is a key like any other */
    sc__idtab_init(&t, &test_pool);
    assert_int_equal(sc__idtab_add(&t, sc_slice_make("", 0), 0), SC_OK);
    assert_true(sc__idtab_get(&t, sc_slice_make("", 0), &e));
    assert_int_equal(e, 0);
    sc__idtab_fini(&t);
    free(keys);
    free(lens);
}

/* A small table is small (a node holds thousands of shards of a few ids), compacting gives
 * the spare capacity back, and a compacted table keeps every key and grows again. */
static void test_small_and_compact(void **state)
{
    (void)state;
    sc__idtab t;
    sc__idtab_init(&t, &test_pool);
    char key[32];
    for (uint32_t i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "id-%u", i);
        assert_int_equal(sc__idtab_add(&t, sc_slice_cstr(key), i), SC_OK);
    }
    assert_true(sc_alloc_pool_bytes(&test_pool) <= 512);
    for (uint32_t i = 3; i < 1000; i++) {
        snprintf(key, sizeof key, "id-%u", i);
        assert_int_equal(sc__idtab_add(&t, sc_slice_cstr(key), i), SC_OK);
    }
    int64_t before = sc_alloc_pool_bytes(&test_pool);
    sc__idtab_compact(&t);
    int64_t after = sc_alloc_pool_bytes(&test_pool);
    assert_true(after <= before);
    assert_int_equal(t.keys_cap, t.keys_len);
    assert_int_equal(t.key_off_cap, (t.len + 7) / 8); /* one offset per 8 keys (idtab.c) */
    for (uint32_t i = 1000; i < 1100; i++) {
        snprintf(key, sizeof key, "id-%u", i);
        assert_int_equal(sc__idtab_add(&t, sc_slice_cstr(key), i), SC_OK);
        if (i == 1000)
            sc__idtab_compact(&t); /* compacted between adds too */
    }
    uint32_t e;
    for (uint32_t i = 0; i < 1100; i++) {
        snprintf(key, sizeof key, "id-%u", i);
        assert_true(sc__idtab_get(&t, sc_slice_cstr(key), &e));
        assert_int_equal(e, i);
        assert_true(sc_slice_eq(sc__idtab_key(&t, i), sc_slice_cstr(key)));
    }
    sc__idtab_fini(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    /* an empty table compacts to nothing to give back */
    sc__idtab_init(&t, &test_pool);
    sc__idtab_compact(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    sc__idtab_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_small_and_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
