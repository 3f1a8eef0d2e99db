/* Tests for src/shard/idtab.c (the shard's _id -> entry table, which keeps no keys: a tag match
 * is confirmed through the caller's key_of): random ids of varied lengths (including empty and
 * binary ones) against a brute-force model, across several growths of the slot array; misses,
 * which must almost never read a key; entry order; the accounting pool holds only the slots and
 * returns to zero. Seeded; the seed is printed (SCRY_SEED replays). */
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

/* The keys the table's owner keeps (here: the test's arrays), and how many were read. */
typedef struct keys {
    char (*k)[64];
    size_t *len;
    uint32_t n;
    uint64_t reads;
} keys;

static sc_slice key_of(void *ctx, uint32_t e)
{
    keys *ks = ctx;
    ks->reads++;
    if (e >= ks->n)
        fail_msg("key_of(%u) of a table of %u entries", e, ks->n);
    return sc_slice_make(ks->k[e], ks->len[e]);
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
    keys ks = {calloc(n, 64), calloc(n, sizeof(size_t)), 0, 0};
    assert_non_null(ks.k);
    assert_non_null(ks.len);
    sc__idtab t;
    sc__idtab_init(&t, &test_pool);
    uint32_t e;
    assert_false(sc__idtab_get(&t, sc_slice_cstr("x"), key_of, &ks, &e));
    for (uint32_t i = 0; i < n; i++) {
        make_key(i, ks.k[i], &ks.len[i]);
        sc_slice k = sc_slice_make(ks.k[i], ks.len[i]);
        assert_false(sc__idtab_get(&t, k, key_of, &ks, &e));
        assert_int_equal(sc__idtab_add(&t, k, i + 1), SC_EINVAL); /* out of order */
        assert_int_equal(sc__idtab_add(&t, k, i), SC_OK);
        ks.n = i + 1;
        if (i % 997 == 0) /* everything so far is still found */
            for (uint32_t j = 0; j <= i; j += 7) {
                assert_true(sc__idtab_get(&t, sc_slice_make(ks.k[j], ks.len[j]), key_of, &ks, &e));
                assert_int_equal(e, j);
            }
    }
    assert_int_equal(t.len, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(sc__idtab_get(&t, sc_slice_make(ks.k[i], ks.len[i]), key_of, &ks, &e));
        assert_int_equal(e, i);
    }
    /* misses: present keys with the last byte changed or one byte added (every key ends with
     * a hex digit, so neither is a key); they end at a tag mismatch, not a key read (a false
     * 32-bit tag match is about one in 2^32 / probe length: a handful of reads would be a bug) */
    ks.reads = 0;
    uint32_t misses = 0;
    for (uint32_t i = 0; i < n; i += 13) {
        char other[80];
        memcpy(other, ks.k[i], ks.len[i]);
        other[ks.len[i] - 1] = 'z';
        assert_false(sc__idtab_get(&t, sc_slice_make(other, ks.len[i]), key_of, &ks, &e));
        memcpy(other, ks.k[i], ks.len[i]);
        other[ks.len[i]] = '!';
        assert_false(sc__idtab_get(&t, sc_slice_make(other, ks.len[i] + 1), key_of, &ks, &e));
        misses += 2;
    }
    printf("[idtab] %u misses read %llu keys\n", misses, (unsigned long long)ks.reads);
    assert_true(ks.reads <= 3);
    /* a hit reads one key, its own (a false match before it is as rare) */
    ks.reads = 0;
    for (uint32_t i = 0; i < n; i += 13)
        assert_true(sc__idtab_get(&t, sc_slice_make(ks.k[i], ks.len[i]), key_of, &ks, &e));
    assert_true(ks.reads <= (n + 12) / 13 + 3);
    /* the table is its slots only: 8 bytes each, no key bytes */
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), (int64_t)(t.cap * sizeof(uint64_t)));
    sc__idtab_fini(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    /* the empty key is a key like any other */
    sc__idtab_init(&t, &test_pool);
    ks.n = 1;
    ks.len[0] = 0;
    assert_int_equal(sc__idtab_add(&t, sc_slice_make("", 0), 0), SC_OK);
    assert_true(sc__idtab_get(&t, sc_slice_make("", 0), key_of, &ks, &e));
    assert_int_equal(e, 0);
    sc__idtab_fini(&t);
    free(ks.k);
    free(ks.len);
}

/* A small table is small (a node holds thousands of shards of a few ids) and holds no key
 * bytes however long the keys are. */
static void test_small(void **state)
{
    (void)state;
    static char k[1100][64];
    static size_t len[1100];
    keys ks = {k, len, 0, 0};
    sc__idtab t;
    sc__idtab_init(&t, &test_pool);
    for (uint32_t i = 0; i < 1100; i++) {
        /* 60-byte keys: the table's size must not depend on them */
        len[i] = (size_t)snprintf(k[i], sizeof k[i], "%056u-id", i);
        assert_int_equal(sc__idtab_add(&t, sc_slice_make(k[i], len[i]), i), SC_OK);
        ks.n = i + 1;
        if (i == 2)
            assert_true(sc_alloc_pool_bytes(&test_pool) <= 128);
    }
    assert_int_equal(t.cap, 2048); /* 1100 ids at most 3/4 full */
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 2048 * 8);
    uint32_t e;
    for (uint32_t i = 0; i < 1100; i++) {
        assert_true(sc__idtab_get(&t, sc_slice_make(k[i], len[i]), key_of, &ks, &e));
        assert_int_equal(e, i);
    }
    sc__idtab_fini(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
