/* Shared helpers of the index codec: sticky-status buffer appends, packed random-access
 * arrays, the checksumming file writer (temp + fsync + rename) and error records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/varint.h"
#include "index/internal.h"

void sc__buf_put(sc_buf *b, const void *data, size_t len, sc_status *st)
{
    if (*st != SC_OK)
        return;
    if (sc_vec_append(b, (const unsigned char *)data, len) != SC_OK)
        *st = SC_ENOMEM;
}

void sc__buf_u8(sc_buf *b, uint8_t v, sc_status *st)
{
    sc__buf_put(b, &v, 1, st);
}

void sc__buf_u16(sc_buf *b, uint16_t v, sc_status *st)
{
    uint8_t t[2];
    sc__st16(t, v);
    sc__buf_put(b, t, 2, st);
}

void sc__buf_u32(sc_buf *b, uint32_t v, sc_status *st)
{
    uint8_t t[4];
    sc__st32(t, v);
    sc__buf_put(b, t, 4, st);
}

void sc__buf_u64(sc_buf *b, uint64_t v, sc_status *st)
{
    uint8_t t[8];
    sc__st64(t, v);
    sc__buf_put(b, t, 8, st);
}

void sc__buf_varint(sc_buf *b, uint64_t v, sc_status *st)
{
    uint8_t t[SC_VARINT_MAX_BYTES];
    sc__buf_put(b, t, sc_varint_put(t, v), st);
}

unsigned sc__bits_for(uint64_t max_value)
{
    return max_value ? 64u - (unsigned)__builtin_clzll(max_value) : 0u;
}

size_t sc__packed_bytes(uint64_t n, unsigned bits)
{
    return (size_t)((n * bits + 7) / 8) + SC__PACK_PAD;
}

void sc__packed_put(sc_buf *b, const uint64_t *vals, uint64_t n, unsigned bits, sc_status *st)
{
    size_t nbytes = sc__packed_bytes(n, bits);
    if (*st != SC_OK)
        return;
    if (sc_vec_reserve(b, nbytes + 1) != SC_OK) {
        *st = SC_ENOMEM;
        return;
    }
    uint8_t *p = b->ptr + b->len;
    memset(p, 0, nbytes + 1);
    if (bits > 0) {
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = bits == 64 ? vals[i] : vals[i] & ((UINT64_C(1) << bits) - 1);
            uint64_t bitpos = i * bits;
            uint8_t *q = p + (bitpos >> 3);
            unsigned sh = (unsigned)(bitpos & 7);
            uint64_t lo = sc__ld64(q) | (v << sh);
            sc__st64(q, lo);
            if (sh + bits > 64)
                q[8] |= (uint8_t)(v >> (64 - sh));
        }
    }
    b->len += nbytes;
}

void sc__set_error(sc_index_error *err, const char *file, uint64_t offset, const char *msg)
{
    if (!err)
        return;
    snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
    err->offset = offset;
    snprintf(err->msg, sizeof(err->msg), "%s", msg);
}

sc_status sc__out_open(sc__out *o, const char *dir, const char *file_name)
{
    memset(o, 0, sizeof(*o));
    if ((size_t)snprintf(o->path, sizeof(o->path), "%s/%s", dir, file_name) >= sizeof(o->path))
        return SC_EINVAL;
    if ((size_t)snprintf(o->tmp_path, sizeof(o->tmp_path), "%s/.%s.tmp", dir, file_name) >=
        sizeof(o->tmp_path))
        return SC_EINVAL;
    o->ck = sc_checksum_new();
    if (!o->ck)
        return SC_ENOMEM;
    o->f = fopen(o->tmp_path, "wb");
    if (!o->f) {
        sc_checksum_free(o->ck);
        o->ck = NULL;
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);
    return SC_OK;
}

void sc__out_write(sc__out *o, const void *data, size_t len)
{
    if (o->st != SC_OK || len == 0)
        return;
    if (fwrite(data, 1, len, o->f) != len) {
        o->st = SC_EIO;
        return;
    }
    sc_checksum_update(o->ck, data, len);
    o->pos += len;
}

void sc__out_abort(sc__out *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
        unlink(o->tmp_path);
    }
    sc_checksum_free(o->ck);
    o->ck = NULL;
}

sc_status sc__out_finish(sc__out *o, const char *dir, uint64_t *checksum)
{
    uint64_t digest = o->ck ? sc_checksum_digest(o->ck) : 0;
    uint8_t t[8];
    sc__st64(t, digest);
    if (o->st == SC_OK && fwrite(t, 1, 8, o->f) != 8)
        o->st = SC_EIO;
    o->pos += 8;
    if (o->st == SC_OK && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0))
        o->st = SC_EIO;
    if (o->st != SC_OK) {
        sc_status st = o->st;
        sc__out_abort(o);
        return st;
    }
    fclose(o->f);
    o->f = NULL;
    sc_checksum_free(o->ck);
    o->ck = NULL;
    if (rename(o->tmp_path, o->path) != 0) {
        unlink(o->tmp_path);
        return SC_EIO;
    }
    if (checksum)
        *checksum = digest;
    return sc_dir_fsync(dir);
}
