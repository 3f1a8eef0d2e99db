/* Bit-packing of blocks of 128 uint32 values at widths 0..32 in a 4-lane vertical layout
 * (value i lives in lane i%4 at bit (i/4)*width of that lane's 32-bit word stream; lane words
 * interleave), 16*width bytes per block. Explicit SSE4.1 and AVX2 kernels with runtime
 * dispatch and a scalar reference. Used by postings; public for tests and benchmarks. */
#ifndef SC_INDEX_BITPACK_H
#define SC_INDEX_BITPACK_H

#include <stddef.h>
#include <stdint.h>

#define SC_BITPACK_N 128

typedef enum sc_bitpack_impl {
    SC_BITPACK_SCALAR,
    SC_BITPACK_SSE41,
    SC_BITPACK_AVX2,
    SC_BITPACK_AUTO, /* the best the CPU supports */
} sc_bitpack_impl;

/* Bytes of a packed block of width bits. */
static inline size_t sc_bitpack_bytes(unsigned width)
{
    return (size_t)16 * width;
}

/* Value i (< 128) of a packed block of `width` (<= 32) bits, without unpacking the others. */
static inline uint32_t sc_bitpack_get(const uint8_t *in, unsigned width, unsigned i)
{
    if (width == 0)
        return 0;
    unsigned lane = i & 3, bit = (i >> 2) * width, wi = bit >> 5, sh = bit & 31;
    const uint8_t *w = in + 4 * (wi * 4 + lane);
    uint32_t v =
        ((uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24) >> sh;
    if (sh + width > 32) {
        const uint8_t *w2 = w + 16;
        v |=
            ((uint32_t)w2[0] | (uint32_t)w2[1] << 8 | (uint32_t)w2[2] << 16 | (uint32_t)w2[3] << 24)
            << (32 - sh);
    }
    return width == 32 ? v : v & ((UINT32_C(1) << width) - 1);
}

/* Smallest width that holds every value of in[0..n). */
unsigned sc_bitpack_width(const uint32_t *in, size_t n);

/* Packs in[0..128) (each < 2^width) into out (sc_bitpack_bytes(width) bytes). */
void sc_bitpack_pack(const uint32_t *in, unsigned width, uint8_t *out);

/* Unpacks 128 values of `width` bits from in (sc_bitpack_bytes(width) readable bytes). */
void sc_bitpack_unpack(const uint8_t *in, unsigned width, uint32_t *out);

/* Unpacks gaps v[0..128) and turns them into docs: out[0] = first, out[i] = out[i-1] + v[i] + 1
 * for i >= 1 (v[0] is ignored; the writer stores 0 there). */
void sc_bitpack_unpack_gaps(const uint8_t *in, unsigned width, uint32_t first, uint32_t *out);

/* Unpacks values v[0..128) and writes their inclusive prefix sums: out[i] = v[0] + ... + v[i]
 * (mod 2^32). Positions use it: a doc's positions are differences of two sums. */
void sc_bitpack_unpack_psum(const uint8_t *in, unsigned width, uint32_t *out);

/* The same with a chosen implementation (tests and benchmarks). An unsupported impl falls back
 * to scalar; sc_bitpack_supported tells which are real. */
void sc_bitpack_unpack_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width, uint32_t *out);
void sc_bitpack_unpack_gaps_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width,
                                 uint32_t first, uint32_t *out);
void sc_bitpack_unpack_psum_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width,
                                 uint32_t *out);
int sc_bitpack_supported(sc_bitpack_impl impl);
const char *sc_bitpack_impl_name(sc_bitpack_impl impl);

#endif
