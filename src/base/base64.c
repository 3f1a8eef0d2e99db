/* Base64 codec for the etcd JSON gateway (see base64.h). */
#include "base/base64.h"

#include <stdbool.h>

static const char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sc_base64_encode(const void *in, size_t n, char *out)
{
    const uint8_t *p = in;
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = k_alphabet[v >> 18];
        out[o++] = k_alphabet[(v >> 12) & 63];
        out[o++] = k_alphabet[(v >> 6) & 63];
        out[o++] = k_alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out[o++] = k_alphabet[v >> 18];
        out[o++] = k_alphabet[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out[o++] = k_alphabet[v >> 18];
        out[o++] = k_alphabet[(v >> 12) & 63];
        out[o++] = k_alphabet[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

/* The 6-bit value of c, or -1. */
static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

sc_status sc_base64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len)
{
    *out_len = 0;
    if (n % 4)
        return SC_EPARSE;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        bool last = i + 4 == n;
        int s[4];
        size_t pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = in[i + k];
            if (c == '=' && last && k >= 2) {
                s[k] = 0;
                pad++;
                continue;
            }
            if (pad) /* data after '=' */
                return SC_EPARSE;
            s[k] = sextet(c);
            if (s[k] < 0)
                return SC_EPARSE;
        }
        uint32_t v =
            (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 | (uint32_t)s[2] << 6 | (uint32_t)s[3];
        if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
            return SC_EPARSE;
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(v >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)v;
    }
    *out_len = o;
    return SC_OK;
}
