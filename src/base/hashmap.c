/* Robin Hood hash map over byte keys; see hashmap.h. Each slot keeps the key's full 64-bit hash,
 * so probes compare hashes first and a slot's probe distance is derived from its hash (no
 * separate distance byte). Lookups stop as soon as they reach a slot that is closer to its home
 * than the probe is to ours, so misses are short even at the 0.8 maximum load. */
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MIN_CAP 16
#define KEYCHUNK_BYTES (64 * 1024)

struct sc_hashmap_keychunk {
    sc_hashmap_keychunk *prev;
    size_t cap;
    size_t used;
    uint8_t data[];
};

uint64_t sc_hashmap_hash(sc_slice key)
{
    uint64_t h = XXH3_64bits(key.len ? (const void *)key.ptr : "", key.len);
    return h ? h : 1;
}

void sc_hashmap_init(sc_hashmap *m, sc_alloc_pool *pool, unsigned flags)
{
    memset(m, 0, sizeof(*m));
    m->pool = pool;
    m->flags = flags;
}

static void free_keys(sc_hashmap *m)
{
    sc_hashmap_keychunk *c = m->keys;
    while (c) {
        sc_hashmap_keychunk *p = c->prev;
        sc_alloc_free(m->pool, c);
        c = p;
    }
    m->keys = NULL;
    m->key_bytes = 0;
}

void sc_hashmap_fini(sc_hashmap *m)
{
    free_keys(m);
    sc_alloc_free(m->pool, m->slots);
    m->slots = NULL;
    m->cap = m->len = m->grow_at = 0;
}

void sc_hashmap_clear(sc_hashmap *m)
{
    free_keys(m);
    if (m->slots)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->len = 0;
}

static inline size_t dist_of(const sc_hashmap_slot *s, size_t i, size_t mask)
{
    return (i - (size_t)s->hash) & mask;
}

static inline bool key_eq(const sc_hashmap_slot *s, uint64_t hash, sc_slice key)
{
    return s->hash == hash && s->key_len == key.len &&
           (key.len == 0 || memcmp(s->key, key.ptr, key.len) == 0);
}

/* Places an entry known to be absent; used by rehash. */
static void place(sc_hashmap_slot *slots, size_t mask, sc_hashmap_slot e)
{
    size_t i = (size_t)e.hash & mask, d = 0;
    for (;;) {
        sc_hashmap_slot *s = &slots[i];
        if (s->hash == 0) {
            *s = e;
            return;
        }
        size_t sd = dist_of(s, i, mask);
        if (sd < d) {
            sc_hashmap_slot t = *s;
            *s = e;
            e = t;
            d = sd;
        }
        i = (i + 1) & mask;
        d++;
    }
}

static sc_status resize(sc_hashmap *m, size_t ncap)
{
    sc_hashmap_slot *ns = sc_alloc_calloc(m->pool, ncap, sizeof(*ns));
    if (!ns)
        return SC_ENOMEM;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].hash)
            place(ns, mask, m->slots[i]);
    sc_alloc_free(m->pool, m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->grow_at = ncap - ncap / 5;
    return SC_OK;
}

sc_status sc_hashmap_reserve(sc_hashmap *m, size_t n)
{
    size_t ncap = m->cap ? m->cap : MIN_CAP;
    while (ncap - ncap / 5 < n) {
        if (ncap > SIZE_MAX / 2 / sizeof(sc_hashmap_slot))
            return SC_ENOMEM;
        ncap *= 2;
    }
    return ncap == m->cap ? SC_OK : resize(m, ncap);
}

static const uint8_t *copy_key(sc_hashmap *m, sc_slice key)
{
    if (m->flags & SC_HASHMAP_BORROW_KEYS)
        return key.ptr;
    if (key.len == 0)
        return (const uint8_t *)"";
    sc_hashmap_keychunk *c = m->keys;
    if (!c || c->cap - c->used < key.len) {
        size_t cap = key.len > KEYCHUNK_BYTES / 4 ? key.len : KEYCHUNK_BYTES;
        if (cap > SIZE_MAX - sizeof(*c))
            return NULL;
        c = sc_alloc_malloc(m->pool, sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        /* A big key gets its own chunk behind the current one, so the current chunk's free
         * space stays usable for the small keys that follow. */
        if (m->keys && cap != KEYCHUNK_BYTES) {
            c->prev = m->keys->prev;
            m->keys->prev = c;
        } else {
            c->prev = m->keys;
            m->keys = c;
        }
        m->key_bytes += sizeof(*c) + cap;
    }
    uint8_t *p = c->data + c->used;
    memcpy(p, key.ptr, key.len);
    c->used += key.len;
    return p;
}

uint64_t *sc_hashmap_find(const sc_hashmap *m, sc_slice key)
{
    if (m->len == 0)
        return NULL;
    uint64_t h = sc_hashmap_hash(key);
    size_t mask = m->cap - 1, i = (size_t)h & mask;
    for (size_t d = 0;; d++, i = (i + 1) & mask) {
        sc_hashmap_slot *s = &m->slots[i];
        if (s->hash == 0 || dist_of(s, i, mask) < d)
            return NULL;
        if (key_eq(s, h, key))
            return &s->value;
    }
}

bool sc_hashmap_get(const sc_hashmap *m, sc_slice key, uint64_t *value)
{
    uint64_t *v = sc_hashmap_find(m, key);
    if (v && value)
        *value = *v;
    return v != NULL;
}

sc_status sc_hashmap_upsert_hashed(sc_hashmap *m, sc_slice key, uint64_t h, uint64_t **value,
                                   bool *inserted)
{
    if (h == 0)
        h = 1; /* 0 marks empty slots; sc_hashmap_hash never returns it, a caller's hash might */
    if (m->len + 1 > m->grow_at) {
        uint64_t *v = sc_hashmap_find(m, key);
        if (v) {
            *value = v;
            *inserted = false;
            return SC_OK;
        }
        SC_TRY(resize(m, m->cap ? m->cap * 2 : MIN_CAP));
    }
    size_t mask = m->cap - 1, i = (size_t)h & mask, d = 0;
    /* Find the key or the slot where Robin Hood would insert it, in one pass. */
    for (;; d++, i = (i + 1) & mask) {
        sc_hashmap_slot *s = &m->slots[i];
        if (s->hash == 0)
            break;
        size_t sd = dist_of(s, i, mask);
        if (sd < d)
            break;
        if (key_eq(s, h, key)) {
            *value = &s->value;
            *inserted = false;
            return SC_OK;
        }
    }
    const uint8_t *kp = copy_key(m, key);
    if (!kp && key.len)
        return SC_ENOMEM;
    sc_hashmap_slot e = {h, kp, key.len, 0};
    sc_hashmap_slot *home = &m->slots[i];
    /* Shift the displaced run forward, Robin Hood style, starting at home. */
    for (;;) {
        sc_hashmap_slot *s = &m->slots[i];
        if (s->hash == 0) {
            *s = e;
            break;
        }
        size_t sd = dist_of(s, i, mask);
        if (sd < d) {
            sc_hashmap_slot t = *s;
            *s = e;
            e = t;
            d = sd;
        }
        i = (i + 1) & mask;
        d++;
    }
    m->len++;
    *value = &home->value;
    *inserted = true;
    return SC_OK;
}

sc_status sc_hashmap_upsert(sc_hashmap *m, sc_slice key, uint64_t **value, bool *inserted)
{
    return sc_hashmap_upsert_hashed(m, key, sc_hashmap_hash(key), value, inserted);
}

sc_status sc_hashmap_put(sc_hashmap *m, sc_slice key, uint64_t value)
{
    uint64_t *v;
    bool inserted;
    SC_TRY(sc_hashmap_upsert(m, key, &v, &inserted));
    *v = value;
    return SC_OK;
}

bool sc_hashmap_remove(sc_hashmap *m, sc_slice key, uint64_t *old_value)
{
    uint64_t *v = sc_hashmap_find(m, key);
    if (!v)
        return false;
    if (old_value)
        *old_value = *v;
    size_t mask = m->cap - 1;
    size_t i =
        (size_t)((sc_hashmap_slot *)((char *)v - offsetof(sc_hashmap_slot, value)) - m->slots);
    /* Backward-shift deletion: pull the following run back by one until an empty slot or an
     * entry already at its home. */
    for (;;) {
        size_t j = (i + 1) & mask;
        sc_hashmap_slot *n = &m->slots[j];
        if (n->hash == 0 || dist_of(n, j, mask) == 0)
            break;
        m->slots[i] = *n;
        i = j;
    }
    memset(&m->slots[i], 0, sizeof(m->slots[i]));
    m->len--;
    return true;
}

bool sc_hashmap_next(const sc_hashmap *m, size_t *pos, sc_slice *key, uint64_t *value)
{
    for (size_t i = *pos; i < m->cap; i++) {
        const sc_hashmap_slot *s = &m->slots[i];
        if (s->hash) {
            if (key)
                *key = sc_slice_make(s->key, s->key_len);
            if (value)
                *value = s->value;
            *pos = i + 1;
            return true;
        }
    }
    *pos = m->cap;
    return false;
}

size_t sc_hashmap_memory_bytes(const sc_hashmap *m)
{
    return m->cap * sizeof(sc_hashmap_slot) + m->key_bytes;
}
