/* Chunked bump allocator with a budget; see arena.h. */
#include "base/arena.h"
#include "base/arena_debug.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(SC_ASAN) || defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct sc_arena_chunk {
    sc_arena_chunk *prev;
    size_t cap; /* usable bytes after the header */
    size_t used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_ALIGN 16
#define ARENA_DEFAULT_CHUNK (64 * 1024)

/* SCRY_ARENA_DEBUG, read once: a request makes several arenas and getenv walks the whole
 * environment each time. -1 = not read yet. */
static atomic_int debug_mode = -1;

static int debug_read(void)
{
    const char *dbg = getenv("SCRY_ARENA_DEBUG");
    int on = dbg && dbg[0] == '1';
    atomic_store_explicit(&debug_mode, on, memory_order_relaxed);
    return on;
}

void sc_arena_debug_reload(void)
{
    (void)debug_read();
}

void sc_arena_init(sc_arena *a, size_t budget_bytes)
{
    memset(a, 0, sizeof(*a));
    a->budget_bytes = budget_bytes;
    a->chunk_bytes = ARENA_DEFAULT_CHUNK;
    int on = atomic_load_explicit(&debug_mode, memory_order_relaxed);
    a->debug = (on < 0 ? debug_read() : on) != 0;
}

static void release_chunk(sc_arena_chunk *c)
{
    UNPOISON(c->data, c->cap);
    free(c);
}

/* Two chunks of the default size are kept per thread between arenas: a request's arena and
 * the shard query's scratch arena (cluster/search.c, run on the request's thread for a
 * one-shard search) then cost no malloc/free of 64 KiB (which took the malloc arena's lock
 * and, being that large, consolidated its fastbins on every free: 1-2 % of a cheap request's
 * CPU). So is one 4 KiB chunk, the size of a shard's result arena (cluster/search.c), which
 * every search on every shard takes. The thread's spares are freed when the thread exits. */
#define ARENA_SHARD_CHUNK 4096
/* And one large chunk (past the default size, up to BIG_SPARE_MAX): a request that needs a
 * segment-sized block (a range's bitset over 5M docs is 625 KB) got it from mmap, above
 * malloc's 256 KiB threshold, and paid a page fault for every 4 KiB of it and a munmap after
 * (a fifth of a filtered aggregation's CPU at 5M docs). The thread keeps the largest such
 * chunk it freed; a thread holds at most BIG_SPARE_MAX this way. */
#define BIG_SPARE_MAX ((size_t)2 << 20)
#define BIG_SLOT 3
#define SPARE_SLOTS 4 /* default size, 4 KiB, default size, large */
static pthread_key_t spare_key[SPARE_SLOTS];
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static bool spare_ready;

static void spare_destroy(void *p)
{
    release_chunk(p);
}

static void spare_init(void)
{
    spare_ready = true;
    for (int k = 0; k < SPARE_SLOTS; k++)
        spare_ready = spare_ready && pthread_key_create(&spare_key[k], spare_destroy) == 0;
}

/* The size of chunk each spare slot keeps. */
static const size_t spare_cap[SPARE_SLOTS] = {ARENA_DEFAULT_CHUNK, ARENA_SHARD_CHUNK,
                                              ARENA_DEFAULT_CHUNK, 0};

static bool is_big(size_t cap)
{
    return cap > ARENA_DEFAULT_CHUNK && cap <= BIG_SPARE_MAX;
}

/* A spare chunk of at least cap bytes (exactly cap but for the large one), or NULL. */
static sc_arena_chunk *spare_take(size_t cap)
{
    if (cap != ARENA_DEFAULT_CHUNK && cap != ARENA_SHARD_CHUNK && !is_big(cap))
        return NULL;
    (void)pthread_once(&spare_once, spare_init);
    if (!spare_ready)
        return NULL;
    if (is_big(cap)) {
        sc_arena_chunk *c = pthread_getspecific(spare_key[BIG_SLOT]);
        if (!c || c->cap < cap)
            return NULL;
        (void)pthread_setspecific(spare_key[BIG_SLOT], NULL);
        return c;
    }
    for (int k = 0; k < SPARE_SLOTS; k++) {
        if (spare_cap[k] != cap)
            continue;
        sc_arena_chunk *c = pthread_getspecific(spare_key[k]);
        if (c) {
            (void)pthread_setspecific(spare_key[k], NULL);
            return c;
        }
    }
    return NULL;
}

static void free_chunk(sc_arena_chunk *c)
{
    if (is_big(c->cap)) {
        (void)pthread_once(&spare_once, spare_init);
        sc_arena_chunk *old = spare_ready ? pthread_getspecific(spare_key[BIG_SLOT]) : NULL;
        if (spare_ready && (!old || old->cap < c->cap) &&
            pthread_setspecific(spare_key[BIG_SLOT], c) == 0) {
            POISON(c->data, c->cap);
            if (old)
                release_chunk(old);
            return;
        }
        release_chunk(c);
        return;
    }
    if (c->cap == ARENA_DEFAULT_CHUNK || c->cap == ARENA_SHARD_CHUNK) {
        (void)pthread_once(&spare_once, spare_init);
        for (int k = 0; spare_ready && k < SPARE_SLOTS; k++) {
            if (spare_cap[k] == c->cap && !pthread_getspecific(spare_key[k]) &&
                pthread_setspecific(spare_key[k], c) == 0) {
                POISON(c->data, c->cap);
                return;
            }
        }
    }
    release_chunk(c);
}

void sc_arena_fini(sc_arena *a)
{
    sc_arena_chunk *c = a->head;
    while (c) {
        sc_arena_chunk *p = c->prev;
        free_chunk(c);
        c = p;
    }
    a->head = NULL;
    a->used_bytes = 0;
}

static bool charge(sc_arena *a, size_t n)
{
    if (a->budget_bytes && (n > a->budget_bytes || a->used_bytes > a->budget_bytes - n)) {
        a->over_budget = true;
        return false;
    }
    a->used_bytes += n;
    if (a->used_bytes > a->peak_bytes)
        a->peak_bytes = a->used_bytes;
    return true;
}

static sc_arena_chunk *new_chunk(sc_arena *a, size_t cap)
{
    if (cap > SIZE_MAX - sizeof(sc_arena_chunk))
        return NULL;
    if (!charge(a, sizeof(sc_arena_chunk)))
        return NULL;
    sc_arena_chunk *c = a->debug && is_big(cap) ? NULL : spare_take(cap);
    if (c) {
        cap = c->cap; /* a large spare may be larger than asked */
    } else {
        c = malloc(sizeof(sc_arena_chunk) + cap);
        if (!c) {
            a->used_bytes -= sizeof(sc_arena_chunk);
            return NULL;
        }
    }
    c->cap = cap;
    c->used = 0;
    c->prev = a->head;
    POISON(c->data, cap);
    a->head = c;
    return c;
}

void *sc_arena_alloc(sc_arena *a, size_t size)
{
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded < size)
        return NULL;
    if (rounded == 0)
        rounded = ARENA_ALIGN;
    sc_arena_chunk *c = a->head;
    if (a->debug || !c || c->cap - c->used < rounded) {
        size_t cap = a->debug ? rounded : (rounded > a->chunk_bytes / 4 ? rounded : a->chunk_bytes);
        c = new_chunk(a, cap);
        if (!c)
            return NULL;
    }
    if (!charge(a, rounded))
        return NULL;
    void *p = c->data + c->used;
    c->used += rounded;
    UNPOISON(p, size ? size : 1);
    return p;
}

void *sc_arena_calloc(sc_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = sc_arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *sc_arena_strndup(sc_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = sc_arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = 0;
    return p;
}

sc_arena_mark sc_arena_mark_get(const sc_arena *a)
{
    sc_arena_mark m = {a->head, a->head ? a->head->used : 0, a->used_bytes};
    return m;
}

void sc_arena_rewind(sc_arena *a, sc_arena_mark m)
{
    while (a->head && a->head != m.chunk) {
        sc_arena_chunk *p = a->head->prev;
        free_chunk(a->head);
        a->head = p;
    }
    if (a->head) {
        POISON(a->head->data + m.chunk_used, a->head->cap - m.chunk_used);
        a->head->used = m.chunk_used;
    }
    a->used_bytes = m.used_bytes;
}
