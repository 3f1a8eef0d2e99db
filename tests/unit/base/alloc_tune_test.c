/* sc_alloc_tune_server_heap with glibc's malloc: however many threads allocate at once, the
 * process gets at most four malloc arenas per core (glibc alone gives eight per core), and more
 * than one per core (the earlier setting, which made the HTTP workers share arenas with the
 * search and background threads). Arenas are counted in malloc_info's report, one <heap> each.
 * Its own binary: mallopt changes the whole process. Under ASan the sanitizer's allocator
 * replaces glibc's, so the arena count is checked in the other builds only. */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/alloc.h"

static pthread_barrier_t all_allocated, may_free;
static char *volatile held[1024]; /* the blocks escape, so the compiler keeps the mallocs */

static void *hold_block(void *arg)
{
    char *p = malloc(1000);
    if (p)
        memset(p, 1, 1000);
    held[(intptr_t)arg] = p;
    pthread_barrier_wait(&all_allocated);
    pthread_barrier_wait(&may_free);
    free(p);
    return NULL;
}

static int count_heaps(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    malloc_info(0, f);
    fclose(f);
    int n = 0;
    for (const char *s = buf; (s = strstr(s, "<heap nr=")) != NULL; s++)
        n++;
    free(buf);
    return n;
}

static void test_arenas_per_core(void **state)
{
    (void)state;
    unsetenv("SCRY_MALLOC_DEFAULTS");
    unsetenv("MALLOC_ARENA_MAX");
    unsetenv("GLIBC_TUNABLES");
    sc_alloc_tune_server_heap();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int n = (int)(8 * cores + 4);
    if (n > 1024)
        n = 1024;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    assert_non_null(t);
    pthread_barrier_init(&all_allocated, NULL, (unsigned)n + 1);
    pthread_barrier_init(&may_free, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hold_block, (void *)(intptr_t)i), 0);
    pthread_barrier_wait(&all_allocated);
    int heaps = count_heaps();
    pthread_barrier_wait(&may_free);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&all_allocated);
    pthread_barrier_destroy(&may_free);
    free(t);
    printf("cores %ld, threads %d, malloc arenas %d\n", cores, n, heaps);
#if !defined(SC_ASAN) && !defined(__SANITIZE_ADDRESS__)
    long cap = cores > 64 ? 256 : 4 * cores;
    assert_true(heaps <= cap);
    assert_true(heaps > cores);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arenas_per_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
