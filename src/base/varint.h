/* LEB128 varints (7 bits per byte, little-endian groups) and zigzag for signed values.
 * Decoders are bounds-checked: they never read past `end` and report truncated or overlong
 * input as SC_ECORRUPT. */
#ifndef SC_BASE_VARINT_H
#define SC_BASE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define SC_VARINT_MAX_BYTES 10

/* Writes v at out (room for SC_VARINT_MAX_BYTES), returns bytes written (1..10). */
size_t sc_varint_put(uint8_t *out, uint64_t v);

/* Number of bytes sc_varint_put would write for v. */
size_t sc_varint_len(uint64_t v);

/* Decodes one varint from [*p, end); advances *p. SC_ECORRUPT when truncated or longer than 10
 * bytes or overflowing 64 bits. */
sc_status sc_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out) SC_MUST_USE;

/* As sc_varint_get but fails with SC_ECORRUPT if the value exceeds UINT32_MAX. */
sc_status sc_varint_get32(const uint8_t **p, const uint8_t *end, uint32_t *out) SC_MUST_USE;

static inline uint64_t sc_zigzag_encode(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t sc_zigzag_decode(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
