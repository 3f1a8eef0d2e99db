/* The shard's in-memory _id -> entry table (internal.h, sc__idtab) of the ids whose latest
 * operation is in the indexing buffer or a delete (a tombstone); an id whose doc is in a segment
 * is found in the segments' `_id` terms instead (idfilter.c). Open addressing with linear
 * probing over 8-byte slots (the high 32 bits of the key's xxh3 and the entry number + 1; the
 * probe starts from those 32 bits too, so growing never reads a key). The table keeps no keys:
 * a slot whose tag matches is confirmed by the caller's key_of, which reads the entry's key
 * where its doc is (a segment's _id doc values, the indexing buffer, the tombstone keys), so
 * a lookup of a new id mostly ends at a tag mismatch without reading any key. The slot array
 * grows by 1.5x (any size: the probe start is a multiply-shift range reduction, not a mask), so
 * it is 1/2 to 3/4 full: 10.7 to 16 bytes per id (docs/benchmarks.md, "The id table's slots
 * grown by 1.5x"). */
#include <string.h>

#include "base/hashmap.h"
#include "shard/internal.h"

void sc__idtab_init(sc__idtab *t, sc_alloc_pool *pool)
{
    memset(t, 0, sizeof *t);
    t->pool = pool;
}

void sc__idtab_fini(sc__idtab *t)
{
    sc_alloc_free(t->pool, t->slots);
    memset(t, 0, sizeof *t);
}

/* The first slot to probe for a key whose slot tag (the hash's high 32 bits) is tag: the mixed
 * tag as a fraction of 2^64 times cap (Lemire's multiply-shift range reduction), uniform over
 * any cap, where a mask needs a power of two. */
static size_t probe_start(uint32_t tag, size_t cap)
{
    uint64_t h = (uint64_t)tag * 0x9E3779B97F4A7C15ull;
    return (size_t)(((unsigned __int128)h * cap) >> 64);
}

/* The slot after i, wrapping at cap. */
static size_t probe_next(size_t i, size_t cap)
{
    return i + 1 == cap ? 0 : i + 1;
}

bool sc__idtab_get(const sc__idtab *t, sc_slice key, sc__idtab_key_fn key_of, void *ctx,
                   uint32_t *entry)
{
    if (!t->cap)
        return false;
    uint64_t hash = sc_hashmap_hash(key);
    uint32_t tag = (uint32_t)(hash >> 32);
    for (size_t i = probe_start(tag, t->cap);; i = probe_next(i, t->cap)) {
        uint64_t s = t->slots[i];
        if (!s)
            return false;
        if ((uint32_t)(s >> 32) == tag) {
            uint32_t e = (uint32_t)s - 1;
            if (sc_slice_eq(key_of(ctx, e), key)) {
                *entry = e;
                return true;
            }
        }
    }
}

/* Puts slot value v (tag << 32 | entry + 1) into slots. */
static void place(uint64_t *slots, size_t cap, uint64_t v)
{
    size_t i = probe_start((uint32_t)(v >> 32), cap);
    while (slots[i])
        i = probe_next(i, cap);
    slots[i] = v;
}

/* Tables start small: a node holds thousands of shards of a few documents each, and 1,024
 * slots up front were 8 KiB per shard (docs/benchmarks.md, Idle shards). */
#define MIN_SLOTS 16

size_t sc__idtab_next_cap(size_t cap)
{
    return cap ? cap + cap / 2 : MIN_SLOTS;
}

/* Grows by 1.5x rather than 2x: the array is 1/2 to 3/4 full instead of 3/8 to 3/4 (13 bytes
 * per id on average instead of 15, 16 at most instead of 21), and a growth holds 2.5 times the
 * old array for a moment instead of 3. */
static sc_status grow_slots(sc__idtab *t)
{
    size_t cap = sc__idtab_next_cap(t->cap);
    uint64_t *slots = sc_alloc_calloc(t->pool, cap, sizeof *slots);
    if (!slots)
        return SC_ENOMEM;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            place(slots, cap, t->slots[i]);
    sc_alloc_free(t->pool, t->slots);
    t->slots = slots;
    t->cap = cap;
    return SC_OK;
}

sc_status sc__idtab_reserve(sc__idtab *t)
{
    if (((size_t)t->len + 1) * 4 > t->cap * 3)
        return grow_slots(t);
    return SC_OK;
}

sc_status sc__idtab_add(sc__idtab *t, sc_slice key, uint32_t entry)
{
    if (entry != t->len || t->len >= UINT32_MAX - 1)
        return SC_EINVAL;
    if (((size_t)t->len + 1) * 4 > t->cap * 3)
        SC_TRY(grow_slots(t));
    uint64_t hash = sc_hashmap_hash(key);
    place(t->slots, t->cap, (uint64_t)(uint32_t)(hash >> 32) << 32 | ((uint64_t)entry + 1));
    t->len++;
    return SC_OK;
}

sc_status sc__idtab_compact(sc__idtab *t, const uint32_t *renum, uint32_t new_len)
{
    size_t cap = 0;
    while (new_len && (size_t)new_len * 4 > cap * 3)
        cap = sc__idtab_next_cap(cap);
    uint64_t *slots = NULL;
    if (cap && !(slots = sc_alloc_calloc(t->pool, cap, sizeof *slots)))
        return SC_ENOMEM;
    uint32_t n = 0;
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t v = t->slots[i];
        if (!v)
            continue;
        uint32_t e = renum[(uint32_t)v - 1];
        if (e == UINT32_MAX)
            continue;
        if (e >= new_len || n == new_len) { /* the caller's numbering is wrong: nothing changes */
            sc_alloc_free(t->pool, slots);
            return SC_EINVAL;
        }
        place(slots, cap, (v >> 32) << 32 | ((uint64_t)e + 1));
        n++;
    }
    if (n != new_len) {
        sc_alloc_free(t->pool, slots);
        return SC_EINVAL;
    }
    sc_alloc_free(t->pool, t->slots);
    t->slots = slots;
    t->cap = cap;
    t->len = new_len;
    return SC_OK;
}
