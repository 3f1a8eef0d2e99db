/* libFuzzer target for the persisted id table (sc__ids_decode, src/shard/ids.c) and the
 * in-memory id table it fills (src/shard/idtab.c). When the first byte is even the input gets
 * the magic in front and a correct checksum at the end, so the entry decoder is reached. Every
 * decoded id (a byte string: NUL bytes included) goes into an sc__idtab unless already there,
 * and must then be found again with exactly its bytes; the entry count is checked at the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "shard/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

SC_ALLOC_POOL_DEFINE(fuzz_pool, "fuzz.idtab");

typedef struct ctx {
    sc__idtab tab;
    uint32_t n;
} ctx;

static sc_status add(void *arg, const sc__ids_entry *e)
{
    ctx *c = arg;
    if (e->id.len && !e->id.ptr)
        abort();
    uint32_t found;
    if (sc__idtab_get(&c->tab, e->id, &found)) {
        if (!sc_slice_eq(sc__idtab_key(&c->tab, found), e->id))
            abort();
        return SC_OK; /* a duplicate: the shard refuses the file, the table is unchanged */
    }
    if (c->n >= 100000)
        return SC_ELIMIT;
    SC_TRY(sc__idtab_add(&c->tab, e->id, c->n));
    if (!sc__idtab_get(&c->tab, e->id, &found) || found != c->n)
        abort();
    c->n++;
    return SC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size + 24);
    if (!buf)
        return 0;
    size_t len = 0;
    bool fix = size && data[0] % 2 == 0;
    if (fix) {
        data++;
        size--;
        memcpy(buf, "SCIDS001", 8);
        len = 8;
    }
    memcpy(buf + len, data, size);
    len += size;
    if (fix) {
        uint64_t ck = sc_checksum(buf, len);
        for (int i = 0; i < 8; i++)
            buf[len + i] = (uint8_t)(ck >> (8 * i));
        len += 8;
    }
    ctx c = {.n = 0};
    sc__idtab_init(&c.tab, &fuzz_pool);
    sc_status st = sc__ids_decode(buf, len, add, &c);
    if (st != SC_OK && st != SC_ECORRUPT && st != SC_ELIMIT && st != SC_ENOMEM)
        abort();
    for (uint32_t i = 0; i < c.n; i++) {
        uint32_t e;
        sc_slice k = sc__idtab_key(&c.tab, i);
        if (!sc__idtab_get(&c.tab, k, &e) || e != i)
            abort();
    }
    sc__idtab_fini(&c.tab);
    free(buf);
    return 0;
}
