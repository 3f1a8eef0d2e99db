/* Auto-generated document ids (sc__api_auto_id, src/api/api_doc.c): unique when many threads
 * ask at once (they used to collide when two threads read the sequence and the clock in
 * opposite order, which refused a few docs in a million of two concurrent _bulk requests as
 * version conflicts), 20 base64url characters, the first 8 the wall-clock milliseconds. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/docs.h"
#include "base/clock.h"

#define THREADS 4
#define PER_THREAD 250000

typedef struct id20 {
    char s[24];
} id20;

static id20 *ids;

static void *gen(void *arg)
{
    id20 *out = ids + (size_t)(uintptr_t)arg * PER_THREAD;
    for (size_t i = 0; i < PER_THREAD; i++)
        sc__api_auto_id(out[i].s);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    return memcmp(a, b, 20);
}

static void test_unique_across_threads(void **state)
{
    (void)state;
    size_t n = (size_t)THREADS * PER_THREAD;
    ids = calloc(n, sizeof *ids);
    assert_non_null(ids);
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, gen, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strlen(ids[i].s), 20);
        for (int k = 0; k < 20; k++)
            assert_non_null(strchr(alphabet, ids[i].s[k]));
    }
    qsort(ids, n, sizeof *ids, cmp);
    size_t dups = 0;
    for (size_t i = 1; i < n; i++)
        dups += memcmp(ids[i - 1].s, ids[i].s, 20) == 0;
    assert_int_equal(dups, 0);
    free(ids);
}

/* The first 8 characters are the wall-clock milliseconds when the id was made. */
static void test_time_prefix(void **state)
{
    (void)state;
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int64_t before = sc_clock_wall_ms();
    char a[24];
    sc__api_auto_id(a);
    int64_t after = sc_clock_wall_ms();
    uint64_t t = 0;
    for (int i = 0; i < 8; i++)
        t = t << 6 | (uint64_t)(strchr(alphabet, a[i]) - alphabet);
    assert_true((int64_t)t >= before && (int64_t)t <= after);
}

/* Characters 8..14 are a per-process sequence (42 bits), so ids are unique by construction:
 * each call's is one more than the one before it in the process. The old construction hashed
 * the sequence plus the monotonic clock there, which two threads could make equal (a timing
 * race too rare for test_unique_across_threads to hit reliably; this fails on it at once). */
static void test_sequence_part(void **state)
{
    (void)state;
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint64_t prev = 0;
    for (int k = 0; k < 1000; k++) {
        char a[24];
        sc__api_auto_id(a);
        uint64_t n = 0;
        for (int i = 8; i < 15; i++)
            n = n << 6 | (uint64_t)(strchr(alphabet, a[i]) - alphabet);
        if (k)
            assert_int_equal(n, prev + 1);
        prev = n;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unique_across_threads),
        cmocka_unit_test(test_time_prefix),
        cmocka_unit_test(test_sequence_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
