/* Tests for base/arena: alignment, zero-size allocations, large allocations, budget exhausted
 * -> NULL with over_budget, mark/rewind (also across chunks), strndup, calloc overflow, and
 * debug mode (SCRY_ARENA_DEBUG=1: one malloc per allocation, same behaviour), and the per-thread
 * spare chunk (a finished arena's default-size chunk serves the thread's next arena; threads
 * that exit free theirs, which LeakSanitizer checks in the ASan build). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"
#include "base/arena_debug.h"

#ifdef SC_ASAN
#include <sanitizer/asan_interface.h>
#endif

static void basics(bool debug)
{
    if (debug)
        setenv("SCRY_ARENA_DEBUG", "1", 1);
    else
        unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload(); /* the variable is read once per process otherwise */
    sc_arena a;
    sc_arena_init(&a, 0);
    assert_int_equal(a.debug, debug);
    void *prev = NULL;
    for (size_t n = 0; n < 300; n++) {
        uint8_t *p = sc_arena_alloc(&a, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        assert_ptr_not_equal(p, prev);
        memset(p, (int)n, n);
        prev = p;
    }
    /* Larger than a chunk. */
    uint8_t *big = sc_arena_alloc(&a, 1 << 20);
    assert_non_null(big);
    memset(big, 0xab, 1 << 20);
    uint8_t *small = sc_arena_alloc(&a, 10);
    assert_non_null(small);
    memset(small, 1, 10);
    assert_int_equal(big[(1 << 20) - 1], 0xab);
    int *z = sc_arena_calloc(&a, 100, sizeof(int));
    for (int i = 0; i < 100; i++)
        assert_int_equal(z[i], 0);
    assert_null(sc_arena_calloc(&a, SIZE_MAX / 2, 4));
    assert_null(sc_arena_alloc(&a, SIZE_MAX - 3));
    char *s = sc_arena_strndup(&a, "hello world", 5);
    assert_string_equal(s, "hello");
    s = sc_arena_strndup(&a, NULL, 0);
    assert_string_equal(s, "");
    assert_false(a.over_budget);
    assert_true(a.peak_bytes >= a.used_bytes && a.used_bytes > (1 << 20));
    sc_arena_fini(&a);
    assert_int_equal(a.used_bytes, 0);
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
}

/* The variable is read once: changing it later has no effect until sc_arena_debug_reload. */
static void test_debug_read_once(void **state)
{
    (void)state;
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
    setenv("SCRY_ARENA_DEBUG", "1", 1);
    sc_arena a;
    sc_arena_init(&a, 0);
    assert_false(a.debug);
    sc_arena_fini(&a);
    sc_arena_debug_reload();
    sc_arena_init(&a, 0);
    assert_true(a.debug);
    assert_non_null(sc_arena_alloc(&a, 10));
    sc_arena_fini(&a);
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
}

static void test_basics(void **state)
{
    (void)state;
    basics(false);
}

static void test_basics_debug(void **state)
{
    (void)state;
    basics(true);
}

static void budget(bool debug)
{
    if (debug)
        setenv("SCRY_ARENA_DEBUG", "1", 1);
    sc_arena_debug_reload(); /* the variable is read once per process otherwise */
    sc_arena a;
    sc_arena_init(&a, 100000);
    size_t got = 0;
    for (;;) {
        void *p = sc_arena_alloc(&a, 1000);
        if (!p)
            break;
        got += 1000;
        assert_true(got <= 100000);
        assert_false(a.over_budget);
    }
    assert_true(got >= 50000); /* chunk overheads are charged, but most of it is usable */
    assert_true(a.over_budget);
    assert_true(a.used_bytes <= 100000);
    assert_null(sc_arena_alloc(&a, 1000));
    assert_null(sc_arena_alloc(&a, 1000000));
    assert_true(a.over_budget); /* sticky */
    sc_arena_fini(&a);
    /* A single allocation larger than the budget fails at once. */
    sc_arena_init(&a, 4096);
    assert_null(sc_arena_alloc(&a, 8192));
    assert_true(a.over_budget);
    sc_arena_fini(&a);
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
}

static void test_budget(void **state)
{
    (void)state;
    budget(false);
}

static void test_budget_debug(void **state)
{
    (void)state;
    budget(true);
}

static void rewind_(bool debug)
{
    if (debug)
        setenv("SCRY_ARENA_DEBUG", "1", 1);
    sc_arena_debug_reload(); /* the variable is read once per process otherwise */
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    /* Mark on an empty arena, rewind frees everything. */
    sc_arena_mark m0 = sc_arena_mark_get(&a);
    assert_non_null(sc_arena_alloc(&a, 100));
    sc_arena_rewind(&a, m0);
    assert_int_equal(a.used_bytes, 0);
    char *keep = sc_arena_strndup(&a, "keep me", 7);
    size_t used = a.used_bytes;
    sc_arena_mark m = sc_arena_mark_get(&a);
    /* Allocate across several chunks, then go back. */
    for (int i = 0; i < 200; i++)
        assert_non_null(sc_arena_alloc(&a, 3000));
    assert_true(a.used_bytes > used);
    char *gone = sc_arena_alloc(&a, 16);
    sc_arena_rewind(&a, m);
    assert_int_equal(a.used_bytes, used);
    assert_string_equal(keep, "keep me");
#ifdef SC_ASAN
    /* Rewound memory is poisoned (or freed) so stale pointers trip AddressSanitizer. */
    assert_true(__asan_address_is_poisoned(gone));
    assert_false(__asan_address_is_poisoned(keep));
#else
    (void)gone;
#endif
    /* The space is reusable after rewind: the same pattern fits again and again. */
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 200; i++)
            assert_non_null(sc_arena_alloc(&a, 3000));
        sc_arena_rewind(&a, m);
    }
    assert_false(a.over_budget);
    assert_string_equal(keep, "keep me");
    sc_arena_fini(&a);
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
}

static void test_rewind(void **state)
{
    (void)state;
    rewind_(false);
}

static void test_rewind_debug(void **state)
{
    (void)state;
    rewind_(true);
}

/* Large allocations interleaved with small ones must not strand the partly used chunk: 100
 * pairs of 20 KB + 100 B need about 2 MB, so they fit a 3 MB budget. */
static void test_big_small_interleave(void **state)
{
    (void)state;
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
    sc_arena a;
    sc_arena_init(&a, 3 << 20);
    sc_arena_mark m = sc_arena_mark_get(&a);
    for (int round = 0; round < 3; round++) {
        char *small[100];
        for (int i = 0; i < 100; i++) {
            char *big = sc_arena_alloc(&a, 20000);
            assert_non_null(big);
            memset(big, i, 20000);
            small[i] = sc_arena_alloc(&a, 100);
            assert_non_null(small[i]);
            memset(small[i], i, 100);
        }
        for (int i = 0; i < 100; i++)
            assert_int_equal(small[i][99], (char)i);
        assert_false(a.over_budget);
        assert_true(a.used_bytes < (size_t)(2100000 + 64 * 1024));
        sc_arena_rewind(&a, m);
        assert_int_equal(a.used_bytes, 0);
    }
    sc_arena_fini(&a);
}

/* A finished arena's first chunk is kept for the thread's next arena, even when a malloc of
 * the same size comes between (without the spare, that malloc takes the freed chunk); so are
 * the chunks of two arenas finished together. */
static void *spare_round(void *arg)
{
    (void)arg;
    for (int round = 0; round < 3; round++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        char *p1 = sc_arena_alloc(&a, 100);
        assert_non_null(p1);
        memset(p1, 7, 100);
        sc_arena_fini(&a);
        void *q = malloc(64 * 1024 + 64);
        assert_non_null(q);
        memset(q, 1, 64 * 1024 + 64);
        sc_arena_init(&a, 0);
        char *p2 = sc_arena_alloc(&a, 100);
        assert_ptr_equal(p2, p1);
        memset(p2, 9, 100);
        /* A second chunk of the default size while the first is in use: a fresh malloc. */
        char *big = sc_arena_alloc(&a, 60 * 1024);
        assert_non_null(big);
        memset(big, 3, 60 * 1024);
        assert_int_equal(p2[99], 9);
        free(q);
        sc_arena_fini(&a);
        /* Two arenas at once (a request's and its shard query's scratch), finished, then two
         * more with a malloc of the chunk size between: both chunks are reused. */
        sc_arena r, s;
        sc_arena_init(&r, 0);
        sc_arena_init(&s, 0);
        char *pr = sc_arena_alloc(&r, 100), *ps = sc_arena_alloc(&s, 100);
        assert_true(pr && ps && pr != ps);
        sc_arena_fini(&s);
        sc_arena_fini(&r);
        q = malloc(64 * 1024 + 64);
        assert_non_null(q);
        memset(q, 1, 64 * 1024 + 64);
        sc_arena_init(&r, 0);
        sc_arena_init(&s, 0);
        char *pr2 = sc_arena_alloc(&r, 100), *ps2 = sc_arena_alloc(&s, 100);
        assert_true((pr2 == pr && ps2 == ps) || (pr2 == ps && ps2 == pr));
        free(q);
        sc_arena_fini(&s);
        sc_arena_fini(&r);
    }
    return NULL;
}

static void test_spare_chunk(void **state)
{
    (void)state;
    unsetenv("SCRY_ARENA_DEBUG");
    sc_arena_debug_reload();
    spare_round(NULL);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, spare_round, NULL), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debug_read_once), cmocka_unit_test(test_basics),
        cmocka_unit_test(test_basics_debug),
        cmocka_unit_test(test_budget), cmocka_unit_test(test_budget_debug),
        cmocka_unit_test(test_rewind), cmocka_unit_test(test_rewind_debug),
        cmocka_unit_test(test_big_small_interleave), cmocka_unit_test(test_spare_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
