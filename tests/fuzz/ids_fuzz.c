/* libFuzzer target for the persisted id table (sc__ids_decode, src/shard/ids.c) and the
 * in-memory id table it fills (src/shard/idtab.c). The first byte picks how the rest is fed:
 * 0 as a version-1 file body (magic in front, a correct checksum at the end), 1 as a
 * version-2 entry stream of (second byte) entries (sc__ids_decode_entries), 2 as such a
 * stream compressed into a whole valid version-2 file, 3 as a file as it is. Every
 * decoded id (a byte string: NUL bytes included) goes into an sc__idtab unless already there
 * (the table keeps no keys: they are kept here, as the shard keeps them where the docs are),
 * and must then be found again with exactly its bytes; the entry count is checked at the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "base/file.h"
#include "shard/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

SC_ALLOC_POOL_DEFINE(fuzz_pool, "fuzz.idtab");

typedef struct ctx {
    sc__idtab tab;
    uint32_t n;
    sc_buf keys;              /* every entry's key, in entry order */
    SC_VEC(uint64_t) key_off; /* entry i's key at keys[key_off[i] .. key_off[i + 1]) */
} ctx;

static sc_slice key_of(void *arg, uint32_t e)
{
    ctx *c = arg;
    if (e >= c->n)
        abort(); /* the table names only entries it was given */
    if (!c->keys.ptr) /* every key so far empty: no buffer yet */
        return sc_slice_make(NULL, 0);
    return sc_slice_make(c->keys.ptr + c->key_off.ptr[e],
                         c->key_off.ptr[e + 1] - c->key_off.ptr[e]);
}

static sc_status add(void *arg, const sc__ids_entry *e)
{
    ctx *c = arg;
    if (e->id.len && !e->id.ptr)
        abort();
    uint32_t found;
    if (sc__idtab_get(&c->tab, e->id, key_of, c, &found)) {
        if (!sc_slice_eq(key_of(c, found), e->id))
            abort();
        return SC_OK; /* a duplicate: the shard refuses the file, the table is unchanged */
    }
    if (c->n >= 100000)
        return SC_ELIMIT;
    if (!c->key_off.len)
        SC_TRY(sc_vec_push(&c->key_off, 0));
    SC_TRY(sc_vec_reserve(&c->key_off, 1));
    SC_TRY(sc_vec_reserve(&c->keys, e->id.len));
    SC_TRY(sc__idtab_add(&c->tab, e->id, c->n));
    if (e->id.len)
        memcpy(c->keys.ptr + c->keys.len, e->id.ptr, e->id.len);
    c->keys.len += e->id.len;
    c->key_off.ptr[c->key_off.len++] = c->keys.len;
    c->n++;
    if (!sc__idtab_get(&c->tab, e->id, key_of, c, &found) || found != c->n - 1)
        abort();
    return SC_OK;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The bytes to decode as a file for modes 0, 2 and 3 (NULL: out of memory). */
static uint8_t *make_file(unsigned mode, uint64_t n_entries, const uint8_t *data, size_t size,
                          size_t *len)
{
    size_t bound = ZSTD_compressBound(size);
    uint8_t *buf = malloc(size + bound + 48);
    if (!buf)
        return NULL;
    size_t n = 0;
    if (mode == 0) {
        memcpy(buf, "SCIDS001", 8);
        memcpy(buf + 8, data, size);
        n = 8 + size;
    } else if (mode == 2) {
        size_t cl = ZSTD_compress(buf + 32, bound, data, size, 1);
        if (ZSTD_isError(cl)) {
            free(buf);
            return NULL;
        }
        memcpy(buf, "SCIDS002", 8);
        put64(buf + 8, n_entries);
        put64(buf + 16, size);
        put64(buf + 24, cl);
        n = 32 + cl;
    } else {
        memcpy(buf, data, size);
        *len = size;
        return buf;
    }
    put64(buf + n, sc_checksum(buf, n));
    *len = n + 8;
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned mode = data[0] % 4;
    uint64_t n_entries = data[1];
    data++, size--;
    ctx c = {.n = 0};
    int ret = 0;
    sc__idtab_init(&c.tab, &fuzz_pool);
    sc_status st;
    if (mode == 1) {
        st = sc__ids_decode_entries(data + 1, size - 1, n_entries, add, &c);
    } else {
        size_t len = 0;
        uint8_t *buf = mode == 2 ? make_file(mode, n_entries, data + 1, size - 1, &len)
                                 : make_file(mode, 0, data, size, &len);
        if (!buf)
            goto out;
        st = sc__ids_decode(buf, len, add, &c);
        free(buf);
    }
    if (st != SC_OK && st != SC_ECORRUPT && st != SC_ELIMIT && st != SC_ENOMEM)
        abort();
    for (uint32_t i = 0; i < c.n; i++) {
        uint32_t e;
        sc_slice k = key_of(&c, i);
        if (!sc__idtab_get(&c.tab, k, key_of, &c, &e) || e != i)
            abort();
    }
out:
    sc__idtab_fini(&c.tab);
    sc_vec_free(&c.keys);
    sc_vec_free(&c.key_off);
    return ret;
}
