/* Accounting allocator; see alloc.h. Every block carries a 16-byte header (payload size and
 * owning pool) in front of the pointer handed out, which keeps 16-byte alignment and lets free
 * and realloc credit the exact size. */
#include "base/alloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

SC_ALLOC_POOL_DEFINE(sc_alloc_pool_default, "other");

typedef struct header {
    size_t size;
    sc_alloc_pool *pool;
} header;

_Static_assert(sizeof(header) == 16, "header keeps 16-byte alignment");

/* Head of the registration list; only ever grows (pools are static and never unregistered). */
static sc_alloc_pool *_Atomic pools_head;

void sc_alloc_pool_register(sc_alloc_pool *pool)
{
    if (atomic_load_explicit(&pool->registered, memory_order_acquire) == 2)
        return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&pool->registered, &expected, 1)) {
        /* Another thread is registering it; it will be in the list momentarily. */
        return;
    }
    sc_alloc_pool *head = atomic_load_explicit(&pools_head, memory_order_acquire);
    do {
        atomic_store_explicit(&pool->next, head, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&pools_head, &head, pool, memory_order_release,
                                                    memory_order_acquire));
    atomic_store_explicit(&pool->registered, 2, memory_order_release);
}

static inline sc_alloc_pool *pick(sc_alloc_pool *pool)
{
    return pool ? pool : &sc_alloc_pool_default;
}

void sc_alloc_pool_add(sc_alloc_pool *pool, int64_t delta)
{
    pool = pick(pool);
    if (atomic_load_explicit(&pool->registered, memory_order_relaxed) != 2)
        sc_alloc_pool_register(pool);
    int64_t now = atomic_fetch_add_explicit(&pool->cur_bytes, delta, memory_order_relaxed) + delta;
    if (delta <= 0)
        return;
    int64_t peak = atomic_load_explicit(&pool->peak_bytes, memory_order_relaxed);
    while (now > peak &&
           !atomic_compare_exchange_weak_explicit(&pool->peak_bytes, &peak, now,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

static void *finish(sc_alloc_pool *pool, header *h, size_t size)
{
    if (!h)
        return NULL;
    h->size = size;
    h->pool = pool;
    sc_alloc_pool_add(pool, (int64_t)size);
    atomic_fetch_add_explicit(&pool->n_allocs, 1, memory_order_relaxed);
    return h + 1;
}

void *sc_alloc_malloc(sc_alloc_pool *pool, size_t size)
{
    if (size > SIZE_MAX - sizeof(header) || size > (size_t)INT64_MAX)
        return NULL;
    pool = pick(pool);
    return finish(pool, malloc(sizeof(header) + size), size);
}

void *sc_alloc_calloc(sc_alloc_pool *pool, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t total = n * size;
    if (total > SIZE_MAX - sizeof(header) || total > (size_t)INT64_MAX)
        return NULL;
    pool = pick(pool);
    return finish(pool, calloc(1, sizeof(header) + total), total);
}

static header *header_of(const void *p, sc_alloc_pool *pool)
{
    header *h = (header *)p - 1;
    if (h->pool != pool) {
        fprintf(stderr, "sc_alloc: block of pool \"%s\" released into pool \"%s\"\n",
                h->pool ? h->pool->name : "?", pool->name);
        abort();
    }
    return h;
}

void *sc_alloc_realloc(sc_alloc_pool *pool, void *p, size_t size)
{
    pool = pick(pool);
    if (!p)
        return sc_alloc_malloc(pool, size);
    if (size > SIZE_MAX - sizeof(header) || size > (size_t)INT64_MAX)
        return NULL;
    header *h = header_of(p, pool);
    size_t old = h->size;
    header *nh = realloc(h, sizeof(header) + size);
    if (!nh)
        return NULL;
    nh->size = size;
    sc_alloc_pool_add(pool, (int64_t)size - (int64_t)old);
    return nh + 1;
}

void sc_alloc_free(sc_alloc_pool *pool, void *p)
{
    if (!p)
        return;
    pool = pick(pool);
    header *h = header_of(p, pool);
    sc_alloc_pool_add(pool, -(int64_t)h->size);
    free(h);
}

size_t sc_alloc_size(const void *p)
{
    return ((const header *)p - 1)->size;
}

int64_t sc_alloc_pool_bytes(const sc_alloc_pool *pool)
{
    return atomic_load_explicit(&pick((sc_alloc_pool *)pool)->cur_bytes, memory_order_relaxed);
}

int64_t sc_alloc_pool_peak_bytes(const sc_alloc_pool *pool)
{
    return atomic_load_explicit(&pick((sc_alloc_pool *)pool)->peak_bytes, memory_order_relaxed);
}

uint64_t sc_alloc_pool_n_allocs(const sc_alloc_pool *pool)
{
    return atomic_load_explicit(&pick((sc_alloc_pool *)pool)->n_allocs, memory_order_relaxed);
}

void sc_alloc_pool_reset_peak(sc_alloc_pool *pool)
{
    pool = pick(pool);
    atomic_store_explicit(&pool->peak_bytes,
                          atomic_load_explicit(&pool->cur_bytes, memory_order_relaxed),
                          memory_order_relaxed);
}

sc_alloc_pool *sc_alloc_pool_next(sc_alloc_pool *prev)
{
    if (!prev)
        return atomic_load_explicit(&pools_head, memory_order_acquire);
    return atomic_load_explicit(&prev->next, memory_order_acquire);
}

sc_alloc_pool *sc_alloc_pool_find(const char *name)
{
    for (sc_alloc_pool *p = sc_alloc_pool_next(NULL); p; p = sc_alloc_pool_next(p))
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

#ifdef __GLIBC__
static bool env_names(const char *tunable, const char *var)
{
    const char *t = getenv("GLIBC_TUNABLES");
    return getenv(var) != NULL || (t && strstr(t, tunable) != NULL);
}
#endif

void sc_alloc_tune_server_heap(void)
{
#ifdef __GLIBC__
    const char *keep = getenv("SCRY_MALLOC_DEFAULTS");
    if (keep && *keep && strcmp(keep, "0") != 0)
        return; /* glibc's own defaults, for comparison */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!env_names("glibc.malloc.arena_max", "MALLOC_ARENA_MAX"))
        (void)mallopt(M_ARENA_MAX, cores < 1 ? 8 : cores > 64 ? 256 : 4 * (int)cores);
    if (!env_names("glibc.malloc.mmap_threshold", "MALLOC_MMAP_THRESHOLD_"))
        (void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    if (!env_names("glibc.malloc.trim_threshold", "MALLOC_TRIM_THRESHOLD_"))
        (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
}

void sc_alloc_release_free(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
