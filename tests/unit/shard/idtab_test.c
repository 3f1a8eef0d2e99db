/* Tests for src/shard/idtab.c (the shard's _id -> entry table, which keeps no keys: a tag match
 * is confirmed through the caller's key_of): random ids of varied lengths (including empty and
 * binary ones) against a brute-force model, across several growths of the slot array (by 1.5x,
 * to sizes that are not powers of two, kept between 1/2 and 3/4 full); misses,
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

#include "test_rng.h"

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
        /* growing by 1.5x keeps the slots more than half full once past the first 16 (so at
         * most 16 bytes per id) and at most 3/4 full */
        assert_true(t.cap == 16 || (size_t)t.len * 2 > t.cap);
        assert_true((size_t)t.len * 4 <= t.cap * 3);
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
    /* 1100 ids: the first size of the 1.5x sequence 16, 24, 36, ... (2053) at most 3/4 full */
    size_t want = 16;
    while (1100 * 4 > want * 3)
        want = sc__idtab_next_cap(want);
    assert_int_equal(want, 2053);
    assert_int_equal(t.cap, want);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), (int64_t)want * 8);
    uint32_t e;
    for (uint32_t i = 0; i < 1100; i++) {
        assert_true(sc__idtab_get(&t, sc_slice_make(k[i], len[i]), key_of, &ks, &e));
        assert_int_equal(e, i);
    }
    sc__idtab_fini(&t);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
}

/* sc__idtab_compact, as a refresh uses it: the entries kept (here every third) are renumbered
 * 0..n-1 in order and found under their new numbers, the others are gone, the slots shrink to
 * the kept ones, and adds go on from the new length; a bad numbering changes nothing. */
static void test_compact(void **state)
{
    (void)state;
    const uint32_t n = 3000;
    keys ks = {calloc(n, 64), calloc(n, sizeof(size_t)), 0, 0};
    assert_non_null(ks.k);
    assert_non_null(ks.len);
    rng = 12345;
    sc__idtab t;
    sc__idtab_init(&t, &test_pool);
    for (uint32_t i = 0; i < n; i++) {
        make_key(i, ks.k[i], &ks.len[i]);
        assert_int_equal(sc__idtab_add(&t, sc_slice_make(ks.k[i], ks.len[i]), i), SC_OK);
    }
    ks.n = n;
    uint32_t *renum = calloc(n, sizeof *renum);
    assert_non_null(renum);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        renum[i] = i % 3 == 0 ? kept++ : UINT32_MAX;
    renum[0] = kept; /* out of range: refused, nothing changed */
    size_t cap = t.cap;
    assert_int_equal(sc__idtab_compact(&t, renum, kept), SC_EINVAL);
    assert_int_equal(t.len, n);
    assert_int_equal(t.cap, cap);
    renum[0] = 0;
    assert_int_equal(sc__idtab_compact(&t, renum, kept), SC_OK);
    assert_int_equal(t.len, kept);
    assert_true(t.cap < cap && (size_t)kept * 4 <= t.cap * 3);
    /* key_of now sees the kept keys under their new numbers */
    keys kk = {calloc(kept + 1, 64), calloc(kept + 1, sizeof(size_t)), kept, 0};
    assert_non_null(kk.k);
    for (uint32_t i = 0; i < n; i++)
        if (renum[i] != UINT32_MAX) {
            memcpy(kk.k[renum[i]], ks.k[i], ks.len[i]);
            kk.len[renum[i]] = ks.len[i];
        }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e;
        bool found = sc__idtab_get(&t, sc_slice_make(ks.k[i], ks.len[i]), key_of, &kk, &e);
        assert_int_equal(found, i % 3 == 0);
        if (found)
            assert_int_equal(e, renum[i]);
    }
    /* adds go on from the new length */
    char extra[64];
    size_t extra_len;
    make_key(n + 1, extra, &extra_len);
    memcpy(kk.k[kept], extra, extra_len);
    kk.len[kept] = extra_len;
    kk.n = kept + 1;
    assert_int_equal(sc__idtab_add(&t, sc_slice_make(extra, extra_len), kept), SC_OK);
    uint32_t e;
    assert_true(sc__idtab_get(&t, sc_slice_make(extra, extra_len), key_of, &kk, &e));
    assert_int_equal(e, kept);
    /* nothing kept: the slots are freed */
    for (uint32_t i = 0; i <= kept; i++)
        renum[i] = UINT32_MAX;
    assert_int_equal(sc__idtab_compact(&t, renum, 0), SC_OK);
    assert_int_equal(t.cap, 0);
    assert_int_equal(sc_alloc_pool_bytes(&test_pool), 0);
    assert_false(sc__idtab_get(&t, sc_slice_make(extra, extra_len), key_of, &kk, &e));
    sc__idtab_fini(&t);
    free(renum);
    free(kk.k);
    free(kk.len);
    free(ks.k);
    free(ks.len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
