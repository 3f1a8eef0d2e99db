/* The persisted id table of a commit, `ids-<gen>.dat`: every _id with its seq_no, primary
 * term, version and location, so a reopened shard knows versions without scanning segments.
 *   file  := "SCIDS001" u64:n_entries entry* u64:xxh3(everything before)
 *   entry := varint:id_len id zigzag:seq_no varint:primary_term varint:version
 *            varint:segment (index in the manifest + 1; 0 = tombstone) varint:doc */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/varint.h"
#include "shard/internal.h"

#define IDS_MAGIC "SCIDS001"

static void ids_path(const sc_shard *s, uint64_t gen, char *out, size_t cap)
{
    snprintf(out, cap, "%s/ids-%" PRIu64 ".dat", s->dir, gen);
}

static sc_status put_varint(sc_buf *b, uint64_t v)
{
    SC_TRY(sc_vec_reserve(b, SC_VARINT_MAX_BYTES));
    b->len += sc_varint_put(b->ptr + b->len, v);
    return SC_OK;
}

static sc_status put_u64(sc_buf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    return sc_vec_append(b, x, 8);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static sc_status write_entries(sc_shard *s, sc_buf *b)
{
    SC_TRY(sc_vec_append(b, (const uint8_t *)IDS_MAGIC, 8));
    SC_TRY(put_u64(b, s->ids.len));
    for (uint32_t val = 0; val < s->ids.len; val++) {
        sc_slice key = sc__idtab_key(&s->ids, val);
        const sc__id_entry *e = &s->entries.ptr[val];
        uint64_t segidx = 0;
        if (e->seg != SC__SEG_NONE) {
            for (size_t i = 0; i < s->slots.len; i++)
                if (s->slots.ptr[i]->uid == e->seg)
                    segidx = i + 1;
            if (!segidx)
                return SC_EINVAL; /* buffered entries must be refreshed before a commit */
        }
        SC_TRY(put_varint(b, key.len));
        SC_TRY(sc_vec_append(b, key.ptr, key.len));
        SC_TRY(put_varint(b, sc_zigzag_encode(e->seq_no)));
        SC_TRY(put_varint(b, (uint64_t)e->primary_term));
        SC_TRY(put_varint(b, (uint64_t)e->version));
        SC_TRY(put_varint(b, segidx));
        SC_TRY(put_varint(b, segidx ? e->doc : 0));
    }
    return put_u64(b, sc_checksum(b->ptr, b->len));
}

sc_status sc__ids_write(sc_shard *s, uint64_t gen)
{
    sc_buf b = {0};
    sc_status st = write_entries(s, &b);
    if (st == SC_OK) {
        char path[4096];
        ids_path(s, gen, path, sizeof(path));
        st = sc_file_write_atomic(path, b.ptr, b.len);
    }
    sc_vec_free(&b);
    return st;
}

sc_status sc__ids_decode(const uint8_t *data, size_t len,
                         sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx)
{
    if (len < 24 || memcmp(data, IDS_MAGIC, 8) != 0 ||
        sc_checksum(data, len - 8) != get_u64(data + len - 8))
        return SC_ECORRUPT;
    uint64_t n = get_u64(data + 8);
    const uint8_t *p = data + 16, *end = data + len - 8;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t idlen, seq, term, ver, segidx, doc;
        if (sc_varint_get(&p, end, &idlen) != SC_OK || idlen > (uint64_t)(end - p))
            return SC_ECORRUPT;
        sc__ids_entry e = {.id = sc_slice_make(p, idlen)};
        p += idlen;
        if (sc_varint_get(&p, end, &seq) != SC_OK || sc_varint_get(&p, end, &term) != SC_OK ||
            sc_varint_get(&p, end, &ver) != SC_OK || sc_varint_get(&p, end, &segidx) != SC_OK ||
            sc_varint_get(&p, end, &doc) != SC_OK)
            return SC_ECORRUPT;
        e.seq_no = sc_zigzag_decode(seq);
        e.primary_term = (int64_t)term;
        e.version = (int64_t)ver;
        e.segment = segidx;
        e.doc = doc;
        SC_TRY(fn(ctx, &e));
    }
    return p == end ? SC_OK : SC_ECORRUPT;
}

/* Adds one decoded entry to the shard's id table (sc__ids_read). */
static sc_status add_entry(void *ctx, const sc__ids_entry *d)
{
    sc_shard *s = ctx;
    if (d->segment > s->slots.len)
        return SC_ECORRUPT;
    sc__id_entry e = {d->seq_no, d->primary_term, d->version, SC__SEG_NONE, 0};
    if (d->segment) {
        sc__slot *sl = s->slots.ptr[d->segment - 1];
        if (d->doc >= sl->n_docs)
            return SC_ECORRUPT;
        e.seg = sl->uid;
        e.doc = (uint32_t)d->doc;
        sl->doc_entry[d->doc] = (uint32_t)s->entries.len;
    }
    uint32_t dup;
    if (sc__idtab_get(&s->ids, d->id, &dup))
        return SC_ECORRUPT; /* an id listed twice */
    if (sc__idtab_add(&s->ids, d->id, (uint32_t)s->entries.len) != SC_OK ||
        sc_vec_push(&s->entries, e) != SC_OK)
        return SC_ENOMEM;
    return SC_OK;
}

sc_status sc__ids_read(sc_shard *s, uint64_t gen)
{
    char path[4096];
    ids_path(s, gen, path, sizeof(path));
    uint8_t *data;
    size_t len;
    SC_TRY(sc_file_read_all(path, &data, &len));
    sc_status st = sc__ids_decode(data, len, add_entry, s);
    free(data);
    return st;
}

uint64_t sc__ids_file_bytes(const sc_shard *s)
{
    uint64_t total = 0;
    DIR *d = opendir(s->dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "ids-", 4) != 0 || l < 8 || strcmp(e->d_name + l - 4, ".dat") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) == 0)
            total += (uint64_t)sb.st_size;
    }
    closedir(d);
    return total;
}
