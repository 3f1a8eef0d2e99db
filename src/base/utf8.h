/* UTF-8 encoding and strict validation, shared by the layers above (text, mapping, search).
 * Both work on raw bytes; neither allocates. */
#ifndef SC_BASE_UTF8_H
#define SC_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes cp (at most 0x10FFFF) as UTF-8 into out, which has room for 4 bytes; returns the byte
 * count (1..4). The caller keeps surrogates out when it needs well-formed output. */
static inline size_t sc_utf8_put(uint8_t *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length (1..4) of the well-formed UTF-8 sequence at p (p < end), or 0 when it is not one:
 * a stray continuation byte, an overlong form, a surrogate, a code point above 0x10FFFF, or a
 * sequence cut short by end. */
static inline int sc_utf8_valid_len(const uint8_t *p, const uint8_t *end)
{
    uint8_t c = p[0];
    int n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (end - p < n)
        return 0;
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

#endif
