/* sc_arena: a chunked bump allocator with a byte budget, for per-request and per-batch memory.
 * Allocations are freed all at once (sc_arena_fini) or back to a mark (sc_arena_rewind).
 * Exceeding the budget fails the allocation (NULL / SC_ELIMIT), never the process. Released
 * chunks are poisoned under AddressSanitizer; SC_ARENA_DEBUG mode mallocs every allocation
 * separately so ASan sees each one's bounds. Not thread-safe: one arena per thread/request.
 * A thread keeps two released chunks of the default size (a request's arena and its shard
 * query's scratch), and one of 4 KiB (a shard's result arena), for its next arenas (freed when
 * the thread exits), so a short-lived arena per request costs no large malloc/free. */
#ifndef SC_BASE_ARENA_H
#define SC_BASE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

typedef struct sc_arena_chunk sc_arena_chunk;

typedef struct sc_arena {
    sc_arena_chunk *head;  /* newest chunk */
    size_t used_bytes;     /* bytes handed out and chunk overheads, counted against budget */
    size_t budget_bytes;   /* 0 = unlimited */
    size_t chunk_bytes;    /* default chunk size */
    size_t peak_bytes;
    bool debug;            /* one malloc per allocation */
    bool over_budget;      /* sticky: an allocation was refused for the budget */
} sc_arena;

typedef struct sc_arena_mark {
    sc_arena_chunk *chunk;
    size_t chunk_used;
    size_t used_bytes;
} sc_arena_mark;

/* Initializes an empty arena. budget_bytes 0 means unlimited. Debug mode is forced on when the
 * environment variable SCRY_ARENA_DEBUG=1 is set (read once per process: base/arena_debug.h). */
void sc_arena_init(sc_arena *a, size_t budget_bytes);

/* Frees every chunk. The arena may be reused after sc_arena_init. */
void sc_arena_fini(sc_arena *a);

/* Returns `size` bytes aligned to 16, or NULL when out of memory or over budget (then
 * a->over_budget is set if the budget was the reason). size 0 returns a valid unique pointer. */
void *sc_arena_alloc(sc_arena *a, size_t size);

/* As sc_arena_alloc, zero-filled. */
void *sc_arena_calloc(sc_arena *a, size_t n, size_t size);

/* Copies `len` bytes into the arena and appends a NUL. */
char *sc_arena_strndup(sc_arena *a, const char *s, size_t len);

/* Records the current position; sc_arena_rewind frees everything allocated after it. */
sc_arena_mark sc_arena_mark_get(const sc_arena *a);
void sc_arena_rewind(sc_arena *a, sc_arena_mark m);

#endif
