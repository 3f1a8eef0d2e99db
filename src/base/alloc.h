/* sc_alloc: an accounting allocator. Long-lived memory is allocated from a named pool
 * ("index.terms", "search.arena", ...) whose current and peak bytes are tracked with atomics
 * and readable at any time, so stats endpoints can report exact memory per structure.
 * Pools are static descriptors (SC_ALLOC_POOL_DEFINE); each registers itself once, lock-free,
 * on first use, and sc_alloc_pool_next walks the registered pools. Thread-safe. */
#ifndef SC_BASE_ALLOC_H
#define SC_BASE_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct sc_alloc_pool sc_alloc_pool;

/* Treat as opaque; fields are public only so pools can be static. */
struct sc_alloc_pool {
    const char *name;            /* static string, e.g. "index.terms" */
    _Atomic int64_t cur_bytes;   /* bytes currently allocated (payload, not headers) */
    _Atomic int64_t peak_bytes;  /* high-water mark of cur_bytes */
    _Atomic uint64_t n_allocs;   /* successful malloc/calloc/realloc-from-NULL calls */
    _Atomic int registered;      /* 0 unregistered, 1 being registered, 2 in the list */
    sc_alloc_pool *_Atomic next; /* registration list link */
};

/* Defines a pool variable `var` named `name_str` (a string literal). Use at file scope:
 *     SC_ALLOC_POOL_DEFINE(sc_pool_index_terms, "index.terms");
 * Pools shared across files are declared `extern sc_alloc_pool var;` in a header. */
#define SC_ALLOC_POOL_DEFINE(var, name_str) sc_alloc_pool var = {.name = (name_str)}

/* A catch-all pool for allocations that name no pool ("other"). */
extern sc_alloc_pool sc_alloc_pool_default;

/* Allocates `size` bytes (aligned to 16) charged to `pool` (NULL = sc_alloc_pool_default).
 * Returns NULL when out of memory. size 0 returns a unique pointer. Free with sc_alloc_free
 * on the same pool. Thread-safe. */
void *sc_alloc_malloc(sc_alloc_pool *pool, size_t size);

/* As sc_alloc_malloc for n*size zeroed bytes; NULL on overflow or out of memory. */
void *sc_alloc_calloc(sc_alloc_pool *pool, size_t n, size_t size);

/* Resizes p (NULL = malloc) to `size` bytes; the pool is charged the difference. On failure
 * returns NULL and p is left valid and unchanged. p must come from the same pool. */
void *sc_alloc_realloc(sc_alloc_pool *pool, void *p, size_t size);

/* Frees p (NULL is a no-op) and credits its bytes back to `pool`. Freeing into a different
 * pool than the one that allocated aborts: it would corrupt both pools' numbers. */
void sc_alloc_free(sc_alloc_pool *pool, void *p);

/* The payload size of p as requested at allocation. */
size_t sc_alloc_size(const void *p);

/* Charges (delta > 0) or credits (delta < 0) memory obtained elsewhere (mmap, a library's own
 * allocations) to `pool`, so it shows in the pool's numbers. */
void sc_alloc_pool_add(sc_alloc_pool *pool, int64_t delta_bytes);

/* Registers a pool so iteration shows it before its first allocation. Idempotent. */
void sc_alloc_pool_register(sc_alloc_pool *pool);

/* Current and peak bytes of a pool; relaxed reads, safe from any thread. */
int64_t sc_alloc_pool_bytes(const sc_alloc_pool *pool);
int64_t sc_alloc_pool_peak_bytes(const sc_alloc_pool *pool);
uint64_t sc_alloc_pool_n_allocs(const sc_alloc_pool *pool);

/* Resets the peak to the current value (e.g. per benchmark phase). */
void sc_alloc_pool_reset_peak(sc_alloc_pool *pool);

/* Iterates registered pools: pass NULL to get the first, then the previous result; returns
 * NULL at the end. Order is most recently registered first. Safe concurrently with
 * registration (a pool registered during iteration may be missed). */
sc_alloc_pool *sc_alloc_pool_next(sc_alloc_pool *prev);

/* Finds a registered pool by name, or NULL. O(number of pools). */
sc_alloc_pool *sc_alloc_pool_find(const char *name);

/* Gives the heap's free memory back to the system (glibc's malloc_trim(0): free pages of
 * every arena, not only the top; a no-op with another libc). Call after large, short-lived
 * work: a segment write, a merge. Thread-safe; O(heap size). */
void sc_alloc_release_free(void);

/* Sets the heap up for a long-running server, before its threads start (glibc only; a no-op
 * elsewhere, and for each setting the environment already names through GLIBC_TUNABLES or
 * MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_): four malloc arenas per
 * core (glibc's default is eight per core, and the free chunks the bulk and merge threads leave
 * behind in each arena are never given back; with one per core the HTTP workers shared their
 * arenas with the search, refresh and merge threads, and four idle within the benchmark's
 * run-to-run spread of one), blocks of 256 KiB and more in their own
 * mappings (returned to the system when freed; glibc otherwise raises that threshold up to
 * 32 MiB as it sees large frees), and the heap's top trimmed past 1 MiB. The memory benchmark
 * (bench/merge_memory.sh) measures it: see docs/benchmarks.md. SCRY_MALLOC_DEFAULTS=1 in the
 * environment keeps glibc's defaults. */
void sc_alloc_tune_server_heap(void);

#endif
