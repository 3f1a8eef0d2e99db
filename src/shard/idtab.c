/* The shard's in-memory _id -> entry table (internal.h, sc__idtab): open addressing with linear
 * probing over 8-byte slots (the high 32 bits of the key's xxh3 and the entry number + 1; the
 * probe starts from those 32 bits too, so growing never reads a key), the keys themselves packed
 * once each in one byte array (varint length + bytes) found through one offset per block of
 * KEY_BLOCK entries. About 8 / 0.75 + key + 1 + 1 bytes per id, against ~64 + key for a general
 * sc_hashmap (32-byte slots). */
#include <string.h>

#include "base/hashmap.h"
#include "base/varint.h"
#include "shard/internal.h"

void sc__idtab_init(sc__idtab *t, sc_alloc_pool *pool)
{
    memset(t, 0, sizeof *t);
    t->pool = pool;
}

void sc__idtab_fini(sc__idtab *t)
{
    sc_alloc_free(t->pool, t->slots);
    sc_alloc_free(t->pool, t->key_off);
    sc_alloc_free(t->pool, t->keys);
    memset(t, 0, sizeof *t);
}

/* Entries per stored key offset: key_at skips at most KEY_BLOCK - 1 keys (a varint and a
 * pointer step each) and the offsets cost 8 / KEY_BLOCK bytes per id instead of 8. */
#define KEY_BLOCK 8

static sc_slice key_at(const sc__idtab *t, uint32_t entry)
{
    const uint8_t *p = t->keys + t->key_off[entry / KEY_BLOCK], *end = t->keys + t->keys_len;
    uint64_t len = 0;
    /* written by sc__idtab_add: always valid varints and lengths inside keys */
    for (uint32_t i = entry / KEY_BLOCK * KEY_BLOCK;; i++) {
        if (sc_varint_get(&p, end, &len) != SC_OK || len > (uint64_t)(end - p))
            return sc_slice_make(NULL, 0);
        if (i == entry)
            return sc_slice_make(p, (size_t)len);
        p += len;
    }
}

/* The first slot to probe for a key whose slot tag (the hash's high 32 bits) is tag. */
static size_t probe_start(uint32_t tag, size_t cap)
{
    uint64_t h = (uint64_t)tag * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

bool sc__idtab_get(const sc__idtab *t, sc_slice key, uint32_t *entry)
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
            if (sc_slice_eq(key_at(t, e), key)) {
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
 * slots and offsets up front were 17 KiB per shard (docs/benchmarks.md, Idle shards). */
#define MIN_SLOTS 16
#define MIN_ELEMS 16

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

static sc_status reserve(sc__idtab *t, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return SC_OK;
    size_t n = *cap ? *cap : MIN_ELEMS;
    while (n < need)
        n += n / 2 + MIN_ELEMS; /* 1.5x: large tables waste less than with doubling */
    void *q = sc_alloc_realloc(t->pool, *p, n * elem);
    if (!q)
        return SC_ENOMEM;
    *p = q;
    *cap = n;
    return SC_OK;
}

sc_status sc__idtab_add(sc__idtab *t, sc_slice key, uint32_t entry)
{
    if (entry != t->len || t->len >= UINT32_MAX - 1)
        return SC_EINVAL;
    if ((t->len + 1) * 4 > t->cap * 3)
        SC_TRY(grow_slots(t));
    void *kp = t->keys, *op = t->key_off;
    SC_TRY(reserve(t, &kp, &t->keys_cap, t->keys_len + key.len + SC_VARINT_MAX_BYTES, 1));
    t->keys = kp;
    SC_TRY(reserve(t, &op, &t->key_off_cap, t->len / KEY_BLOCK + 1, sizeof *t->key_off));
    t->key_off = op;
    if (t->len % KEY_BLOCK == 0)
        t->key_off[t->len / KEY_BLOCK] = t->keys_len;
    t->keys_len += sc_varint_put(t->keys + t->keys_len, key.len);
    if (key.len)
        memcpy(t->keys + t->keys_len, key.ptr, key.len);
    t->keys_len += key.len;
    uint64_t hash = sc_hashmap_hash(key);
    place(t->slots, t->cap, (uint64_t)(uint32_t)(hash >> 32) << 32 | ((uint64_t)entry + 1));
    t->len++;
    return SC_OK;
}

sc_slice sc__idtab_key(const sc__idtab *t, uint32_t entry)
{
    return key_at(t, entry);
}

/* Shrinks *p (elem-sized elements, capacity *cap) to len elements (at least one). */
static void shrink(sc__idtab *t, void **p, size_t *cap, size_t len, size_t elem)
{
    size_t n = len ? len : 1;
    if (!*p || n >= *cap)
        return;
    void *q = sc_alloc_realloc(t->pool, *p, n * elem);
    if (!q)
        return;
    *p = q;
    *cap = n;
}

void sc__idtab_compact(sc__idtab *t)
{
    void *kp = t->keys, *op = t->key_off;
    shrink(t, &kp, &t->keys_cap, t->keys_len, 1);
    t->keys = kp;
    shrink(t, &op, &t->key_off_cap, (t->len + KEY_BLOCK - 1) / KEY_BLOCK, sizeof *t->key_off);
    t->key_off = op;
}
