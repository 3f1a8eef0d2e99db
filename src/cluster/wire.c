/* The transport's framing and body primitives (grammar in wire.h). Pure functions over
 * buffers: no sockets here, so the fuzz target (tests/fuzz/wire_fuzz.c) reaches every decoder. */
#include "cluster/wire.h"

#include <stdlib.h>
#include <string.h>

#include "base/varint.h"

static void put_le(uint8_t *out, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *in, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)in[i] << (8 * i);
    return v;
}

void sc_wire_header_put(const sc_wire_header *h, uint8_t out[SC_WIRE_HEADER_BYTES])
{
    memcpy(out, SC_WIRE_MAGIC, 4);
    out[4] = SC_WIRE_VERSION;
    out[5] = h->flags;
    put_le(out + 6, h->type, 2);
    put_le(out + 8, h->request_id, 8);
    put_le(out + 16, h->body_len, 4);
}

sc_status sc_wire_header_get(const uint8_t in[SC_WIRE_HEADER_BYTES], uint32_t max_body_bytes,
                             sc_wire_header *out)
{
    if (memcmp(in, SC_WIRE_MAGIC, 4) != 0 || in[4] != SC_WIRE_VERSION)
        return SC_ECORRUPT;
    if (in[5] & ~(SC_WIRE_FLAG_RESPONSE | SC_WIRE_FLAG_ERROR))
        return SC_ECORRUPT;
    /* an error is always a response */
    if ((in[5] & SC_WIRE_FLAG_ERROR) && !(in[5] & SC_WIRE_FLAG_RESPONSE))
        return SC_ECORRUPT;
    out->version = in[4];
    out->flags = in[5];
    out->type = (uint16_t)get_le(in + 6, 2);
    out->request_id = get_le(in + 8, 8);
    out->body_len = (uint32_t)get_le(in + 16, 4);
    return out->body_len > max_body_bytes ? SC_ELIMIT : SC_OK;
}

/* ---- writer ---- */

void sc_wire_buf_init(sc_wire_buf *b)
{
    memset(b, 0, sizeof *b);
}

void sc_wire_buf_fini(sc_wire_buf *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

sc_status sc_wire_buf_take(sc_wire_buf *b, uint8_t **out, size_t *len)
{
    if (b->st != SC_OK) {
        sc_wire_buf_fini(b);
        return b->st;
    }
    *out = b->ptr;
    *len = b->len;
    b->ptr = NULL;
    b->len = b->cap = 0;
    return SC_OK;
}

static uint8_t *reserve(sc_wire_buf *b, size_t n)
{
    if (b->st != SC_OK)
        return NULL;
    size_t limit = b->limit ? b->limit : SC_WIRE_DEFAULT_MAX_BODY_BYTES;
    if (n > limit - b->len || b->len > limit) {
        b->st = SC_ELIMIT;
        return NULL;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->ptr, cap);
        if (!p) {
            b->st = SC_ENOMEM;
            return NULL;
        }
        b->ptr = p;
        b->cap = cap;
    }
    uint8_t *at = b->ptr + b->len;
    b->len += n;
    return at;
}

void sc_wire_put_raw(sc_wire_buf *b, const void *p, size_t n)
{
    uint8_t *at = reserve(b, n);
    if (at && n)
        memcpy(at, p, n);
}

void sc_wire_put_u8(sc_wire_buf *b, uint8_t v)
{
    sc_wire_put_raw(b, &v, 1);
}

void sc_wire_put_u32le(sc_wire_buf *b, uint32_t v)
{
    uint8_t t[4];
    put_le(t, v, 4);
    sc_wire_put_raw(b, t, 4);
}

void sc_wire_put_uvar(sc_wire_buf *b, uint64_t v)
{
    uint8_t t[10];
    sc_wire_put_raw(b, t, sc_varint_put(t, v));
}

void sc_wire_put_svar(sc_wire_buf *b, int64_t v)
{
    sc_wire_put_uvar(b, sc_zigzag_encode(v));
}

void sc_wire_put_f32(sc_wire_buf *b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    sc_wire_put_u32le(b, bits);
}

void sc_wire_put_f64(sc_wire_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint8_t t[8];
    put_le(t, bits, 8);
    sc_wire_put_raw(b, t, 8);
}

void sc_wire_put_bool(sc_wire_buf *b, bool v)
{
    sc_wire_put_u8(b, v ? 1 : 0);
}

void sc_wire_put_bytes(sc_wire_buf *b, const void *p, size_t n)
{
    sc_wire_put_uvar(b, n);
    sc_wire_put_raw(b, p, n);
}

void sc_wire_put_str(sc_wire_buf *b, const char *s)
{
    sc_wire_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

/* ---- reader ---- */

static const uint8_t *take(sc_wire_reader *r, size_t n)
{
    if (r->st != SC_OK)
        return NULL;
    if ((size_t)(r->end - r->p) < n) {
        r->st = SC_ECORRUPT;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

uint8_t sc_wire_get_u8(sc_wire_reader *r)
{
    const uint8_t *p = take(r, 1);
    return p ? p[0] : 0;
}

uint64_t sc_wire_get_uvar(sc_wire_reader *r)
{
    uint64_t v = 0;
    if (r->st != SC_OK)
        return 0;
    if (sc_varint_get(&r->p, r->end, &v) != SC_OK) {
        r->st = SC_ECORRUPT;
        return 0;
    }
    return v;
}

uint64_t sc_wire_get_uvar_max(sc_wire_reader *r, uint64_t max)
{
    uint64_t v = sc_wire_get_uvar(r);
    if (r->st == SC_OK && v > max) {
        r->st = SC_ECORRUPT;
        return 0;
    }
    return v;
}

int64_t sc_wire_get_svar(sc_wire_reader *r)
{
    return sc_zigzag_decode(sc_wire_get_uvar(r));
}

float sc_wire_get_f32(sc_wire_reader *r)
{
    const uint8_t *p = take(r, 4);
    uint32_t bits = p ? (uint32_t)get_le(p, 4) : 0;
    float v;
    memcpy(&v, &bits, 4);
    return v;
}

double sc_wire_get_f64(sc_wire_reader *r)
{
    const uint8_t *p = take(r, 8);
    uint64_t bits = p ? get_le(p, 8) : 0;
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

bool sc_wire_get_bool(sc_wire_reader *r)
{
    uint8_t v = sc_wire_get_u8(r);
    if (v > 1 && r->st == SC_OK)
        r->st = SC_ECORRUPT;
    return v == 1;
}

sc_slice sc_wire_get_bytes(sc_wire_reader *r)
{
    uint64_t n = sc_wire_get_uvar_max(r, (uint64_t)(r->end - r->p));
    const uint8_t *p = take(r, (size_t)n);
    return p ? sc_slice_make(p, (size_t)n) : sc_slice_make(NULL, 0);
}

sc_status sc_wire_reader_finish(const sc_wire_reader *r)
{
    if (r->st != SC_OK)
        return r->st;
    return r->p == r->end ? SC_OK : SC_ECORRUPT;
}

/* ---- error bodies ---- */

sc_status sc_wire_error_encode(sc_status st, const char *msg, sc_wire_buf *out)
{
    sc_wire_put_u8(out, (uint8_t)st);
    sc_wire_put_str(out, msg);
    return out->st;
}

sc_status sc_wire_error_decode(const uint8_t *p, size_t n, sc_status *remote, char *msg, size_t cap)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    uint8_t st = sc_wire_get_u8(&r);
    sc_slice m = sc_wire_get_bytes(&r);
    SC_TRY(sc_wire_reader_finish(&r));
    if (st == SC_OK || st >= SC_STATUS_COUNT_)
        return SC_ECORRUPT;
    *remote = (sc_status)st;
    if (cap) {
        size_t k = m.len < cap - 1 ? m.len : cap - 1;
        for (size_t i = 0; i < k; i++)
            msg[i] = (m.ptr[i] >= 0x20 && m.ptr[i] < 0x7f) ? (char)m.ptr[i] : '?';
        msg[k] = '\0';
    }
    return SC_OK;
}
