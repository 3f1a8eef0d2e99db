/* jansson's allocator with request-scoped arena trees (see json.h, sc_json_arena_begin): while a
 * thread's scope allocates, jansson's memory is bump-allocated from slabs of the scope's arena
 * and its frees are no-ops; everything else is malloc/free as before. Installed when the program
 * loads, before any jansson value exists, since a value must be freed by the allocator that
 * made it. */
#include "base/json.h"

#include <stdint.h>
#include <stdlib.h>

/* The first slab holds a cheap request's body tree (a 120-200 byte _search body makes 30-40
 * nodes of ~1.3-2 KiB, jansson's lexer buffer included); later slabs double up to 1 MiB. */
#define SLAB_FIRST_BYTES 2048
#define SLAB_MAX_BYTES ((size_t)1 << 20)
#define SLAB_MAX 16
/* Room left in the arena's budget for the arena's own chunk header, so that a slab never
 * trips the budget (the request breaker): past it, allocations go to malloc. */
#define SLAB_BUDGET_SLACK 256

typedef struct jscope {
    sc_arena *arena;    /* the open scope's arena; NULL when none is open */
    bool alloc;         /* allocations come from the arena */
    unsigned char *cur; /* bump pointer in the newest slab */
    unsigned char *end; /* end of the newest slab */
    size_t next_bytes;  /* size of the next slab */
    int n_slabs;        /* slabs handed out in this scope; frees inside them are no-ops */
    uintptr_t lo[SLAB_MAX];
    uintptr_t hi[SLAB_MAX];
} jscope;

static _Thread_local jscope tls;

static bool new_slab(size_t need)
{
    if (tls.n_slabs == SLAB_MAX)
        return false;
    size_t bytes = need > tls.next_bytes ? need : tls.next_bytes;
    sc_arena *a = tls.arena;
    if (a->budget_bytes &&
        (a->used_bytes > a->budget_bytes || a->budget_bytes - a->used_bytes < bytes ||
         a->budget_bytes - a->used_bytes - bytes < SLAB_BUDGET_SLACK))
        return false;
    unsigned char *s = sc_arena_alloc(a, bytes);
    if (!s)
        return false;
    tls.lo[tls.n_slabs] = (uintptr_t)s;
    tls.hi[tls.n_slabs] = (uintptr_t)s + bytes;
    tls.n_slabs++;
    tls.cur = s;
    tls.end = s + bytes;
    if (tls.next_bytes < SLAB_MAX_BYTES)
        tls.next_bytes *= 2;
    return true;
}

static void *json_arena_malloc(size_t size)
{
    if (!tls.alloc)
        return malloc(size);
    /* jansson's structures need no more than 8-byte alignment (pointers, size_t, double). */
    size_t need = (size + 7) & ~(size_t)7;
    if (need < size)
        return NULL;
    if (need == 0)
        need = 8;
    if ((size_t)(tls.end - tls.cur) < need && !new_slab(need))
        return malloc(need);
    void *p = tls.cur;
    tls.cur += need;
    return p;
}

static void json_arena_free(void *p)
{
    for (int i = 0; i < tls.n_slabs; i++)
        if ((uintptr_t)p >= tls.lo[i] && (uintptr_t)p < tls.hi[i])
            return;
    free(p);
}

__attribute__((constructor)) static void json_arena_install(void)
{
    json_set_alloc_funcs(json_arena_malloc, json_arena_free);
}

void sc_json_arena_begin(sc_json_arena_scope *s, sc_arena *a)
{
    s->open = false;
    if (!a || tls.arena)
        return;
    tls.arena = a;
    tls.alloc = true;
    tls.cur = tls.end = NULL;
    tls.next_bytes = SLAB_FIRST_BYTES;
    tls.n_slabs = 0;
    s->open = true;
}

void sc_json_arena_hold(sc_json_arena_scope *s)
{
    if (s->open)
        tls.alloc = false;
}

void sc_json_arena_end(sc_json_arena_scope *s)
{
    if (!s->open)
        return;
    tls.arena = NULL;
    tls.alloc = false;
    tls.cur = tls.end = NULL;
    tls.n_slabs = 0;
    s->open = false;
}
