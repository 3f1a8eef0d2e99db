/* LEB128 varint encoding and bounds-checked decoding. */
#include "base/varint.h"

size_t sc_varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

size_t sc_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

sc_status sc_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (q >= end)
            return SC_ECORRUPT;
        uint8_t b = *q++;
        if (shift == 63 && (b & 0x7e))
            return SC_ECORRUPT;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *out = v;
            return SC_OK;
        }
    }
    return SC_ECORRUPT;
}

sc_status sc_varint_get32(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
    const uint8_t *save = *p;
    uint64_t v;
    sc_status st = sc_varint_get(p, end, &v);
    if (st != SC_OK)
        return st;
    if (v > UINT32_MAX) {
        *p = save;
        return SC_ECORRUPT;
    }
    *out = (uint32_t)v;
    return SC_OK;
}
