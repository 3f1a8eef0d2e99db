/* The shard's in-memory _id -> entry table (internal.h, sc__idtab): open addressing with linear
 * probing over 8-byte slots (the high 32 bits of the key's xxh3 and the entry number + 1; the
 * probe starts from those 32 bits too, so growing never reads a key). The table keeps no keys:
 * a slot whose tag matches is confirmed by the caller's key_of, which reads the entry's key
 * where its doc is (a segment's _id doc values, the indexing buffer, the tombstone keys), so
 * a lookup of a new id mostly ends at a tag mismatch without reading any key. 8 / 0.75 bytes
 * per id at most (docs/benchmarks.md, "Keys of the id table where the docs are"). */
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

/* The first slot to probe for a key whose slot tag (the hash's high 32 bits) is tag. */
static size_t probe_start(uint32_t tag, size_t cap)
{
    uint64_t h = (uint64_t)tag * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

bool sc__idtab_get(const sc__idtab *t, sc_slice key, sc__idtab_key_fn key_of, void *ctx,
                   uint32_t *entry)
{
    if (!t->cap)
        return false;
    uint64_t hash = sc_hashmap_hash(key);
    uint32_t tag = (uint32_t)(hash >> 32);
    for (size_t i = probe_start(tag, t->cap);; i = (i + 1) & (t->cap - 1)) {
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
        i = (i + 1) & (cap - 1);
    slots[i] = v;
}

/* Tables start small: a node holds thousands of shards of a few documents each, and 1,024
 * slots up front were 8 KiB per shard (docs/benchmarks.md, Idle shards). */
#define MIN_SLOTS 16

static sc_status grow_slots(sc__idtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : MIN_SLOTS;
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

sc_status sc__idtab_add(sc__idtab *t, sc_slice key, uint32_t entry)
{
    if (entry != t->len || t->len >= UINT32_MAX - 1)
        return SC_EINVAL;
    if ((t->len + 1) * 4 > t->cap * 3)
        SC_TRY(grow_slots(t));
    uint64_t hash = sc_hashmap_hash(key);
    place(t->slots, t->cap, (uint64_t)(uint32_t)(hash >> 32) << 32 | ((uint64_t)entry + 1));
    t->len++;
    return SC_OK;
}
