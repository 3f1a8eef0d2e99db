/* sc_hashmap: an open-addressing hash map (Robin Hood probing, backward-shift deletion) from
 * byte-string keys to 64-bit values (or pointers), hashed with xxh3. The hot structure behind
 * term buffers while indexing: a lookup is one hash, then probes over a flat slot array that
 * stores each key's full hash, so mismatching keys are almost never compared byte by byte.
 *
 * Keys are COPIED into the map by default (into chunked key storage owned by the map, so a
 * key's bytes never move and the sc_slice handed back by iteration stays valid until the map is
 * cleared or finalized). With SC_HASHMAP_BORROW_KEYS the map stores the caller's pointers and
 * the caller keeps the bytes alive and unchanged while they are in the map. Removing a copied
 * key does not reclaim its bytes until sc_hashmap_clear/fini.
 *
 * Memory is charged to an optional sc_alloc_pool. Not thread-safe: one writer, no concurrent
 * readers while writing. */
#ifndef SC_BASE_HASHMAP_H
#define SC_BASE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/slice.h"
#include "base/status.h"

enum {
    SC_HASHMAP_BORROW_KEYS = 1u << 0, /* store the caller's key pointers instead of copies */
};

typedef struct sc_hashmap_slot {
    uint64_t hash; /* 0 = empty slot; real hashes are forced non-zero */
    const uint8_t *key;
    size_t key_len;
    uint64_t value;
} sc_hashmap_slot;

typedef struct sc_hashmap_keychunk sc_hashmap_keychunk;

/* Caller-owned storage; fields are private. */
typedef struct sc_hashmap {
    sc_hashmap_slot *slots;
    size_t cap; /* power of two, or 0 before the first insert */
    size_t len;
    size_t grow_at; /* len that triggers doubling (load factor 0.8) */
    unsigned flags;
    sc_alloc_pool *pool;
    sc_hashmap_keychunk *keys; /* newest key chunk */
    size_t key_bytes;          /* bytes of key storage allocated */
} sc_hashmap;

/* xxh3-64 of the key as used by the map (never 0). */
uint64_t sc_hashmap_hash(sc_slice key);

/* Initializes an empty map; nothing is allocated until the first insert. `pool` (may be NULL:
 * the default pool) is charged for slots and key copies; `flags` is 0 or
 * SC_HASHMAP_BORROW_KEYS. */
void sc_hashmap_init(sc_hashmap *m, sc_alloc_pool *pool, unsigned flags);

/* Frees everything the map owns. The map may be reused after sc_hashmap_init. */
void sc_hashmap_fini(sc_hashmap *m);

/* Removes every entry and frees key storage, keeping the slot array for reuse. O(cap). */
void sc_hashmap_clear(sc_hashmap *m);

/* Makes room for `n` entries in total without further growth. SC_ENOMEM on failure (the map
 * is unchanged). */
sc_status sc_hashmap_reserve(sc_hashmap *m, size_t n) SC_MUST_USE;

/* Inserts key -> value or overwrites the value of an existing key. SC_ENOMEM leaves the map
 * unchanged. Amortized O(1). */
sc_status sc_hashmap_put(sc_hashmap *m, sc_slice key, uint64_t value) SC_MUST_USE;

/* The indexing hot path: finds key, inserting it with value 0 if missing, and returns a pointer
 * to its value in *value (valid until the next insert, remove or clear) and whether it was
 * inserted. SC_ENOMEM leaves the map unchanged. */
sc_status sc_hashmap_upsert(sc_hashmap *m, sc_slice key, uint64_t **value, bool *inserted)
    SC_MUST_USE;

/* As sc_hashmap_upsert with the hash already computed by sc_hashmap_hash. */
sc_status sc_hashmap_upsert_hashed(sc_hashmap *m, sc_slice key, uint64_t hash, uint64_t **value,
                                   bool *inserted) SC_MUST_USE;

/* Pointer to the value of key, or NULL if absent. Valid until the next insert/remove/clear. */
uint64_t *sc_hashmap_find(const sc_hashmap *m, sc_slice key);

/* true and *value (if value non-NULL) when key is present. */
bool sc_hashmap_get(const sc_hashmap *m, sc_slice key, uint64_t *value);

/* Removes key; true (and its value in *old_value if non-NULL) when it was present. */
bool sc_hashmap_remove(sc_hashmap *m, sc_slice key, uint64_t *old_value);

/* Pointer-valued conveniences over the same map. */
static inline sc_status sc_hashmap_put_ptr(sc_hashmap *m, sc_slice key, void *value)
{
    return sc_hashmap_put(m, key, (uint64_t)(uintptr_t)value);
}

static inline void *sc_hashmap_get_ptr(const sc_hashmap *m, sc_slice key)
{
    uint64_t *v = sc_hashmap_find(m, key);
    return v ? (void *)(uintptr_t)*v : NULL;
}

static inline size_t sc_hashmap_len(const sc_hashmap *m)
{
    return m->len;
}

/* Iteration in slot order (unspecified, not insertion order). Start with *pos = 0; each call
 * returns the next entry and advances *pos, or false at the end. The map must not be modified
 * during iteration, except that the value pointed to may be changed through sc_hashmap_find. */
bool sc_hashmap_next(const sc_hashmap *m, size_t *pos, sc_slice *key, uint64_t *value);

/* Bytes the map holds (slots + key storage), as charged to its pool. */
size_t sc_hashmap_memory_bytes(const sc_hashmap *m);

#endif
