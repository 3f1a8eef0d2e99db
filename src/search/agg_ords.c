/* (owner, key) -> bucket ordinal tables of the aggregation collectors (agg_internal.h):
 * open addressing with linear probing over a power-of-two slot array in the arena; ordinals
 * are dense (0, 1, ...) in insertion order with their owner, key and hash kept per ordinal,
 * so the table regrows by rehashing hashes only. */
#include <string.h>

#include "base/hashmap.h"
#include "search/agg_internal.h"

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* Doubles the slot array (or makes the first one) and reinserts every ordinal. */
static sc_status grow(sc_arena *a, sc__agg_ords *o)
{
    size_t cap = o->cap ? o->cap * 2 : 64;
    uint32_t *slots = sc_arena_calloc(a, cap, sizeof *slots);
    if (!slots)
        return sc__agg_oom(a);
    const uint64_t *h = o->hash.p;
    for (size_t i = 0; i < o->n; i++) {
        size_t j = h[i] & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    o->slots = slots;
    o->cap = cap;
    return SC_OK;
}

/* Appends ordinal n with its owner/key/hash at slot j. */
static sc_status append(sc_arena *a, sc__agg_ords *o, size_t j, uint32_t owner, int64_t key,
                        uint64_t h, uint32_t *ord)
{
    if (o->n >= UINT32_MAX - 1)
        return SC_ELIMIT;
    size_t n = o->n;
    SC_TRY(sc__agg_vec_ensure(a, &o->owner, n + 1, 0));
    SC_TRY(sc__agg_vec_ensure(a, &o->key, n + 1, 0));
    SC_TRY(sc__agg_vec_ensure(a, &o->hash, n + 1, 0));
    ((uint64_t *)o->owner.p)[n] = owner;
    ((int64_t *)o->key.p)[n] = key;
    ((uint64_t *)o->hash.p)[n] = h;
    o->slots[j] = (uint32_t)n + 1;
    o->n = n + 1;
    *ord = (uint32_t)n;
    return SC_OK;
}

sc_status sc__agg_ords_long(sc_arena *a, sc__agg_ords *o, uint32_t owner, int64_t key,
                            uint32_t *ord, bool *added)
{
    if ((o->n + 1) * 4 > o->cap * 3)
        SC_TRY(grow(a, o));
    uint64_t h = mix64((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15) ^ owner);
    size_t j = h & (o->cap - 1);
    const uint64_t *ow = o->owner.p;
    const int64_t *k = o->key.p;
    for (;;) {
        uint32_t s = o->slots[j];
        if (!s)
            break;
        if (k[s - 1] == key && ow[s - 1] == owner) {
            *ord = s - 1;
            *added = false;
            return SC_OK;
        }
        j = (j + 1) & (o->cap - 1);
    }
    *added = true;
    return append(a, o, j, owner, key, h, ord);
}

sc_status sc__agg_ords_bytes(sc_arena *a, sc__agg_ords *o, uint32_t owner, sc_slice key,
                             uint32_t *ord, bool *added)
{
    o->bytes = true;
    if ((o->n + 1) * 4 > o->cap * 3)
        SC_TRY(grow(a, o));
    uint64_t h = mix64(sc_hashmap_hash(key) ^ owner);
    size_t j = h & (o->cap - 1);
    for (;;) {
        uint32_t s = o->slots[j];
        if (!s)
            break;
        if (((const uint64_t *)o->hash.p)[s - 1] == h && sc__agg_ords_owner(o, s - 1) == owner &&
            sc_slice_eq(sc__agg_ords_bkey(o, s - 1), key)) {
            *ord = s - 1;
            *added = false;
            return SC_OK;
        }
        j = (j + 1) & (o->cap - 1);
    }
    /* key copies share 16 KiB blocks (arena allocations are 16-byte aligned: a block per key
     * would double the memory of short keys) */
    if (key.len > o->pool_left) {
        size_t sz = key.len > 4096 ? key.len : 16384;
        o->pool = sc_arena_alloc(a, sz);
        if (!o->pool)
            return sc__agg_oom(a);
        o->pool_left = sz;
    }
    uint8_t *copy = o->pool;
    o->pool += key.len;
    o->pool_left -= key.len;
    if (key.len)
        memcpy(copy, key.ptr, key.len);
    SC_TRY(append(a, o, j, owner, 0, h, ord));
    SC_TRY(sc__agg_vec_ensure(a, &o->bkey, 2 * o->n, 0));
    uint64_t *c = (uint64_t *)o->bkey.p + 2 * (size_t)*ord;
    c[0] = (uint64_t)(uintptr_t)copy;
    c[1] = key.len;
    *added = true;
    return SC_OK;
}

sc_status sc__agg_ords_group(sc_arena *a, const sc__agg_ords *o, uint32_t n_owners,
                             uint32_t **start_out, uint32_t **list_out)
{
    uint32_t *start = sc_arena_calloc(a, (size_t)n_owners + 2, sizeof *start);
    uint32_t *list = sc_arena_alloc(a, (o->n ? o->n : 1) * sizeof *list);
    if (!start || !list)
        return sc__agg_oom(a);
    for (size_t i = 0; i < o->n; i++) {
        uint32_t w = sc__agg_ords_owner(o, (uint32_t)i);
        if (w < n_owners)
            start[w + 1]++;
    }
    for (uint32_t w = 0; w < n_owners; w++)
        start[w + 1] += start[w];
    uint32_t *fill = sc_arena_alloc(a, ((size_t)n_owners + 1) * sizeof *fill);
    if (!fill)
        return sc__agg_oom(a);
    memcpy(fill, start, ((size_t)n_owners + 1) * sizeof *fill);
    for (size_t i = 0; i < o->n; i++) {
        uint32_t w = sc__agg_ords_owner(o, (uint32_t)i);
        if (w < n_owners)
            list[fill[w]++] = (uint32_t)i;
    }
    *start_out = start;
    *list_out = list;
    return SC_OK;
}
