/* The persisted id table of a commit, `ids-<gen>.dat`: the deleted _ids (tombstones) with their
 * seq_no, primary term and version, so a reopened shard keeps a delete's versions; a live id's
 * versions are its segment doc's doc values and its doc is found in the segments' `_id` terms.
 * Files written before (every id, segment docs with their location) are read with their
 * segment entries checked against the segments and dropped.
 * Written as version 2 (docs/format.md, "Id table"); version 1 files stay readable:
 *   file2  := "SCIDS002" u64:n_entries u64:raw_len u64:comp_len zstd_frame(raw: entry2*)
 *             u64:xxh3(everything before)
 *   entry2 := varint:shared varint:suffix_len suffix zigzag:seq_no_delta varint:primary_term
 *             varint:version varint:segment zigzag:doc_delta
 *             (id = the previous entry's first `shared` bytes + suffix; seq_no and doc are
 *             deltas from the previous entry's, the first entry's from an empty id and 0)
 *   file1  := "SCIDS001" u64:n_entries entry1* u64:xxh3(everything before)
 *   entry1 := varint:id_len id zigzag:seq_no varint:primary_term varint:version
 *             varint:segment (index in the manifest + 1; 0 = tombstone) varint:doc */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "base/file.h"
#include "base/varint.h"
#include "shard/internal.h"

#define IDS_MAGIC "SCIDS002"
#define IDS_MAGIC_V1 "SCIDS001"
/* zstd level of the entry stream: on the real-text corpus of bench/index_size.sh (310k
 * line-number ids in load order, the best case) the table is 4.8 MB as version 1 and 10 KB as
 * version 2. Measured with the zstd tool on the same encoding of 310k random ids: 20-character
 * base64, 4.76 MB at level 1 (0.03 s) against 5.00 MB at level 3 (0.09 s); 32-digit hex, 5.37
 * against 5.79 MB: level 1 is both smaller and faster on ids. */
#define IDS_LEVEL 1

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

static size_t shared_prefix(sc_slice a, sc_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len, i = 0;
    while (i < n && a.ptr[i] == b.ptr[i])
        i++;
    return i;
}

/* The raw entry stream of version 2 (entry2 above) of the shard's table into b. */
static sc_status write_entries(sc_shard *s, sc_buf *b)
{
    sc_slice prev = sc_slice_make(NULL, 0);
    int64_t prev_seq = 0, prev_doc = 0;
    for (uint32_t val = 0; val < s->ids.len; val++) {
        sc_slice key = sc__entry_key(s, val);
        const sc__id_entry *e = &s->entries.ptr[val];
        if (!key.ptr)
            return SC_ECORRUPT; /* a location that names no key (cannot happen) */
        uint64_t segidx = 0;
        if (e->seg != SC__SEG_NONE) {
            for (size_t i = 0; i < s->slots.len; i++)
                if (s->slots.ptr[i]->uid == e->seg)
                    segidx = i + 1;
            if (!segidx)
                return SC_EINVAL; /* buffered entries must be refreshed before a commit */
        }
        sc__versions v;
        SC_TRY(sc__entry_versions(s, e, &v));
        int64_t doc = segidx ? (int64_t)e->doc : 0;
        size_t shared = shared_prefix(prev, key);
        SC_TRY(put_varint(b, shared));
        SC_TRY(put_varint(b, key.len - shared));
        SC_TRY(sc_vec_append(b, key.ptr + shared, key.len - shared));
        SC_TRY(put_varint(b, sc_zigzag_encode((int64_t)((uint64_t)v.seq_no - (uint64_t)prev_seq))));
        SC_TRY(put_varint(b, (uint64_t)v.primary_term));
        SC_TRY(put_varint(b, (uint64_t)v.version));
        SC_TRY(put_varint(b, segidx));
        SC_TRY(put_varint(b, sc_zigzag_encode(doc - prev_doc)));
        prev = key, prev_seq = v.seq_no, prev_doc = doc;
    }
    return SC_OK;
}

/* The whole version-2 file (file2 above) into out. */
static sc_status write_file(sc_shard *s, sc_buf *out)
{
    sc_buf raw = {0};
    sc_status st = write_entries(s, &raw);
    size_t bound = ZSTD_compressBound(raw.len);
    if (st == SC_OK) {
        st = sc_vec_append(out, (const uint8_t *)IDS_MAGIC, 8);
        if (st == SC_OK)
            st = put_u64(out, s->ids.len);
        if (st == SC_OK)
            st = put_u64(out, raw.len);
        if (st == SC_OK)
            st = put_u64(out, 0); /* comp_len, set below */
        if (st == SC_OK)
            st = sc_vec_reserve(out, bound + 8);
    }
    if (st == SC_OK) {
        size_t cl = ZSTD_compress(out->ptr + out->len, bound, raw.ptr, raw.len, IDS_LEVEL);
        if (ZSTD_isError(cl)) {
            st = SC_ENOMEM;
        } else {
            for (int i = 0; i < 8; i++)
                out->ptr[24 + i] = (uint8_t)((uint64_t)cl >> (8 * i));
            out->len += cl;
            st = put_u64(out, sc_checksum(out->ptr, out->len));
        }
    }
    sc_vec_free(&raw);
    return st;
}

sc_status sc__ids_write(sc_shard *s, uint64_t gen)
{
    sc_buf b = {0};
    sc_status st = write_file(s, &b);
    if (st == SC_OK) {
        char path[4096];
        ids_path(s, gen, path, sizeof(path));
        st = sc_file_write_atomic(path, b.ptr, b.len);
    }
    sc_vec_free(&b);
    return st;
}

/* Version 1: the entries after the 16-byte header, up to the checksum. */
static sc_status decode_v1(const uint8_t *data, size_t len,
                           sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx)
{
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

sc_status sc__ids_decode_entries(const uint8_t *raw, size_t len, uint64_t n,
                                 sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx)
{
    const uint8_t *p = raw, *end = raw + len;
    sc_buf id = {0};
    int64_t seq_no = 0, doc = 0;
    sc_status st = SC_OK;
    for (uint64_t i = 0; i < n && st == SC_OK; i++) {
        uint64_t shared, suffix, seq, term, ver, segidx, ddoc;
        if (sc_varint_get(&p, end, &shared) != SC_OK || shared > id.len ||
            sc_varint_get(&p, end, &suffix) != SC_OK || suffix > (uint64_t)(end - p)) {
            st = SC_ECORRUPT;
            break;
        }
        id.len = (size_t)shared;
        if (sc_vec_append(&id, p, (size_t)suffix) != SC_OK) {
            st = SC_ENOMEM;
            break;
        }
        p += suffix;
        if (sc_varint_get(&p, end, &seq) != SC_OK || sc_varint_get(&p, end, &term) != SC_OK ||
            sc_varint_get(&p, end, &ver) != SC_OK || sc_varint_get(&p, end, &segidx) != SC_OK ||
            sc_varint_get(&p, end, &ddoc) != SC_OK) {
            st = SC_ECORRUPT;
            break;
        }
        /* wrapping arithmetic: a corrupt delta gives a wrong value (range-checked by the
         * caller), never undefined behaviour */
        seq_no = (int64_t)((uint64_t)seq_no + (uint64_t)sc_zigzag_decode(seq));
        doc = (int64_t)((uint64_t)doc + (uint64_t)sc_zigzag_decode(ddoc));
        if (doc < 0) {
            st = SC_ECORRUPT;
            break;
        }
        sc__ids_entry e = {.id = sc_slice_make(id.ptr, id.len),
                           .seq_no = seq_no,
                           .primary_term = (int64_t)term,
                           .version = (int64_t)ver,
                           .segment = segidx,
                           .doc = (uint64_t)doc};
        st = fn(ctx, &e);
    }
    sc_vec_free(&id);
    if (st == SC_OK && p != end)
        st = SC_ECORRUPT;
    return st;
}

sc_status sc__ids_decode(const uint8_t *data, size_t len,
                         sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx)
{
    if (len < 24 || sc_checksum(data, len - 8) != get_u64(data + len - 8))
        return SC_ECORRUPT;
    if (memcmp(data, IDS_MAGIC_V1, 8) == 0)
        return decode_v1(data, len, fn, ctx);
    if (len < 40 || memcmp(data, IDS_MAGIC, 8) != 0)
        return SC_ECORRUPT;
    uint64_t n = get_u64(data + 8), raw_len = get_u64(data + 16), cl = get_u64(data + 24);
    /* the frame must fill the file and declare raw_len, which zstd can reach from cl bytes at
     * most 32768 x (its maximum expansion): checked before allocating */
    if (cl != len - 40 || raw_len > cl * 32768 + 1024 || raw_len > SIZE_MAX / 2 ||
        ZSTD_getFrameContentSize(data + 32, (size_t)cl) != raw_len)
        return SC_ECORRUPT;
    uint8_t *raw = malloc(raw_len ? (size_t)raw_len : 1);
    if (!raw)
        return SC_ENOMEM;
    size_t got = ZSTD_decompress(raw, (size_t)raw_len, data + 32, (size_t)cl);
    sc_status st = ZSTD_isError(got) || got != raw_len
                       ? SC_ECORRUPT
                       : sc__ids_decode_entries(raw, (size_t)raw_len, n, fn, ctx);
    free(raw);
    return st;
}

/* Adds one decoded entry to the shard's id table (sc__ids_read). */
static sc_status add_entry(void *ctx, const sc__ids_entry *d)
{
    sc_shard *s = ctx;
    if (d->segment > s->slots.len)
        return SC_ECORRUPT;
    if (d->segment) {
        /* a file written before the table kept only tombstones: a segment doc's entry must
         * name the doc the segment has under that id (checked), then it is left to the
         * segment's `_id` terms (its versions are the doc's doc values) */
        sc__slot *sl = s->slots.ptr[d->segment - 1];
        if (d->doc >= sl->n_docs || !sc_slice_eq(sc__slot_key(sl, (uint32_t)d->doc), d->id))
            return SC_ECORRUPT;
        return SC_OK;
    }
    uint32_t dup;
    if (sc__entry_find(s, d->id, &dup))
        return SC_ECORRUPT; /* an id listed twice */
    if (s->entries.len >= UINT32_MAX - 1 || sc_vec_reserve(&s->entries, 1) != SC_OK ||
        sc_vec_reserve(&s->tombs_free, 1) != SC_OK)
        return SC_ENOMEM;
    sc__id_entry e = {SC__SEG_NONE, 0};
    sc__versions v = {d->seq_no, d->primary_term, d->version};
    SC_TRY(sc__tomb_new(s, d->id, &v, &e.doc));
    if (sc__idtab_add(&s->ids, d->id, (uint32_t)s->entries.len) != SC_OK) {
        sc__shard_ignore(sc__tomb_free(s, e.doc));
        return SC_ENOMEM;
    }
    s->entries.ptr[s->entries.len++] = e;
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
