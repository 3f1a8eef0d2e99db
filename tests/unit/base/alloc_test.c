/* Tests for base/alloc: exact current/peak accounting through malloc, calloc, realloc and
 * free; registration and iteration; external charges; concurrent updates from threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/alloc.h"

static SC_ALLOC_POOL_DEFINE(pool_a, "test.a");
static SC_ALLOC_POOL_DEFINE(pool_b, "test.b");
static SC_ALLOC_POOL_DEFINE(pool_threads, "test.threads");
static SC_ALLOC_POOL_DEFINE(pool_unused, "test.unused");

static void test_accounting(void **state)
{
    (void)state;
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 0);
    char *p = sc_alloc_malloc(&pool_a, 100);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, 1, 100);
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 100);
    assert_int_equal(sc_alloc_size(p), 100);
    int *z = sc_alloc_calloc(&pool_a, 10, sizeof(int));
    for (int i = 0; i < 10; i++)
        assert_int_equal(z[i], 0);
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 140);
    p = sc_alloc_realloc(&pool_a, p, 1000);
    assert_non_null(p);
    assert_int_equal(p[99], 1); /* contents kept */
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 1040);
    assert_int_equal(sc_alloc_pool_peak_bytes(&pool_a), 1040);
    p = sc_alloc_realloc(&pool_a, p, 10);
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 50);
    assert_int_equal(sc_alloc_pool_peak_bytes(&pool_a), 1040);
    sc_alloc_free(&pool_a, p);
    sc_alloc_free(&pool_a, z);
    sc_alloc_free(&pool_a, NULL);
    assert_int_equal(sc_alloc_pool_bytes(&pool_a), 0);
    assert_int_equal(sc_alloc_pool_peak_bytes(&pool_a), 1040);
    assert_int_equal(sc_alloc_pool_n_allocs(&pool_a), 2);
    sc_alloc_pool_reset_peak(&pool_a);
    assert_int_equal(sc_alloc_pool_peak_bytes(&pool_a), 0);
    /* realloc(NULL) allocates; size 0 gives a unique pointer. */
    void *q = sc_alloc_realloc(&pool_b, NULL, 8);
    void *e1 = sc_alloc_malloc(&pool_b, 0), *e2 = sc_alloc_malloc(&pool_b, 0);
    assert_non_null(e1);
    assert_ptr_not_equal(e1, e2);
    assert_int_equal(sc_alloc_pool_bytes(&pool_b), 8);
    sc_alloc_free(&pool_b, q);
    sc_alloc_free(&pool_b, e1);
    sc_alloc_free(&pool_b, e2);
    assert_int_equal(sc_alloc_pool_bytes(&pool_b), 0);
    /* Impossible sizes fail without charging. */
    assert_null(sc_alloc_malloc(&pool_b, SIZE_MAX - 4));
    assert_null(sc_alloc_calloc(&pool_b, SIZE_MAX / 2, 4));
    assert_int_equal(sc_alloc_pool_bytes(&pool_b), 0);
    /* NULL pool is the default pool. */
    void *d = sc_alloc_malloc(NULL, 64);
    assert_true(sc_alloc_pool_bytes(&sc_alloc_pool_default) >= 64);
    sc_alloc_free(NULL, d);
}

static void test_external_and_iteration(void **state)
{
    (void)state;
    sc_alloc_pool_add(&pool_b, 4096);
    assert_int_equal(sc_alloc_pool_bytes(&pool_b), 4096);
    sc_alloc_pool_add(&pool_b, -4096);
    assert_int_equal(sc_alloc_pool_bytes(&pool_b), 0);
    /* Unused pools are invisible until registered; registration is idempotent. */
    assert_null(sc_alloc_pool_find("test.unused"));
    sc_alloc_pool_register(&pool_unused);
    sc_alloc_pool_register(&pool_unused);
    assert_ptr_equal(sc_alloc_pool_find("test.unused"), &pool_unused);
    assert_ptr_equal(sc_alloc_pool_find("test.a"), &pool_a);
    assert_ptr_equal(sc_alloc_pool_find("other"), &sc_alloc_pool_default);
    assert_null(sc_alloc_pool_find("no.such.pool"));
    int n_unused = 0, n = 0;
    for (sc_alloc_pool *p = sc_alloc_pool_next(NULL); p; p = sc_alloc_pool_next(p)) {
        n++;
        n_unused += p == &pool_unused;
    }
    assert_int_equal(n_unused, 1);
    assert_true(n >= 4);
}

#define N_THREADS 4
#define N_ITERS 20000

static void *churn(void *arg)
{
    (void)arg;
    void *keep[8] = {0};
    for (int i = 0; i < N_ITERS; i++) {
        int slot = i % 8;
        sc_alloc_free(&pool_threads, keep[slot]);
        keep[slot] = sc_alloc_malloc(&pool_threads, (size_t)(i % 100) + 1);
        keep[slot] = sc_alloc_realloc(&pool_threads, keep[slot], (size_t)(i % 50) + 1);
    }
    for (int i = 0; i < 8; i++)
        sc_alloc_free(&pool_threads, keep[i]);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(sc_alloc_pool_bytes(&pool_threads), 0);
    assert_int_equal(sc_alloc_pool_n_allocs(&pool_threads), N_THREADS * N_ITERS);
    assert_true(sc_alloc_pool_peak_bytes(&pool_threads) > 0);
    assert_true(sc_alloc_pool_peak_bytes(&pool_threads) <= N_THREADS * 8 * 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accounting),
        cmocka_unit_test(test_external_and_iteration),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
