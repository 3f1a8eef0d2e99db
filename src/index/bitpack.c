/* Bit-packing of 128-value blocks (see bitpack.h for the 4-lane vertical layout). The scalar
 * code is the reference; the SSE4.1 kernel handles one lane-group of 4 values per step and the
 * AVX2 kernel two (8 values) with per-lane variable shifts. Each kernel is specialized per width
 * by constant propagation through an always-inline body; tables map width -> function and the
 * best implementation is picked once with __builtin_cpu_supports. */
#include "index/bitpack.h"

#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#include "index/internal.h"

unsigned sc_bitpack_width(const uint32_t *in, size_t n)
{
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= in[i];
    return acc ? 32u - (unsigned)__builtin_clz(acc) : 0u;
}

void sc_bitpack_pack(const uint32_t *in, unsigned width, uint8_t *out)
{
    if (width == 0)
        return;
    uint32_t words[4 * 32];
    memset(words, 0, (size_t)width * 16);
    uint32_t mask = width == 32 ? UINT32_MAX : (UINT32_C(1) << width) - 1;
    for (unsigned i = 0; i < SC_BITPACK_N; i++) {
        unsigned lane = i & 3, bit = (i >> 2) * width, wi = bit >> 5, sh = bit & 31;
        uint32_t v = in[i] & mask;
        words[wi * 4 + lane] |= v << sh;
        if (sh + width > 32)
            words[(wi + 1) * 4 + lane] |= v >> (32 - sh);
    }
    memcpy(out, words, (size_t)width * 16);
}

static void unpack_scalar(const uint8_t *in, unsigned width, uint32_t *out)
{
    if (width == 0) {
        memset(out, 0, SC_BITPACK_N * sizeof(uint32_t));
        return;
    }
    uint32_t mask = width == 32 ? UINT32_MAX : (UINT32_C(1) << width) - 1;
    for (unsigned i = 0; i < SC_BITPACK_N; i++) {
        unsigned lane = i & 3, bit = (i >> 2) * width, wi = bit >> 5, sh = bit & 31;
        uint32_t v = sc__ld32(in + 4 * (wi * 4 + lane)) >> sh;
        if (sh + width > 32)
            v |= sc__ld32(in + 4 * ((wi + 1) * 4 + lane)) << (32 - sh);
        out[i] = v & mask;
    }
}

static void gaps_scalar(const uint8_t *in, unsigned width, uint32_t first, uint32_t *out)
{
    unpack_scalar(in, width, out);
    out[0] = first;
    for (unsigned i = 1; i < SC_BITPACK_N; i++)
        out[i] = out[i - 1] + out[i] + 1;
}

static void psum_scalar(const uint8_t *in, unsigned width, uint32_t *out)
{
    unpack_scalar(in, width, out);
    for (unsigned i = 1; i < SC_BITPACK_N; i++)
        out[i] += out[i - 1];
}

/* ---- SSE4.1 ---- */

#define SSE __attribute__((target("sse4.1")))
#define AVX2 __attribute__((target("avx2")))

/* gaps: 0 plain values, 1 doc gaps (out[0] = first, out[i] = out[i-1] + v[i] + 1), 2 inclusive
 * prefix sums (out[i] = out[i-1] + v[i]) */
static inline __attribute__((always_inline)) SSE void
unpack_sse_body(const uint8_t *in, uint32_t *out, const unsigned b, const int gaps, uint32_t first)
{
    const __m128i *w = (const __m128i *)(const void *)in;
    const __m128i mask = _mm_set1_epi32(b == 32 ? -1 : (int)((UINT32_C(1) << b) - 1));
    const __m128i one = _mm_set1_epi32(1);
    __m128i carry = _mm_set1_epi32(0);
    /* fully unrolled so every shift and word index is an immediate for each width */
#pragma GCC unroll 32
    for (unsigned j = 0; j < 32; j++) {
        __m128i v;
        if (b == 0) {
            v = _mm_setzero_si128();
        } else {
            const unsigned bit = j * b, wi = bit >> 5, sh = bit & 31;
            v = _mm_srli_epi32(_mm_loadu_si128(w + wi), (int)sh);
            if (sh + b > 32)
                v = _mm_or_si128(v, _mm_slli_epi32(_mm_loadu_si128(w + wi + 1), (int)(32 - sh)));
            if (b < 32)
                v = _mm_and_si128(v, mask);
        }
        if (gaps) {
            if (j == 0 && gaps == 1) {
                /* out[0] must be `first`: seed the carry so that carry + v0 + 1 == first. */
                uint32_t v0 = (uint32_t)_mm_cvtsi128_si32(v);
                carry = _mm_set1_epi32((int)(first - 1 - v0));
            }
            /* local prefix sum first, so the loop-carried chain is a single add */
            if (gaps == 1)
                v = _mm_add_epi32(v, one);
            v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
            v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
            __m128i total = _mm_shuffle_epi32(v, 0xff);
            v = _mm_add_epi32(v, carry);
            carry = _mm_add_epi32(carry, total);
        }
        _mm_storeu_si128((__m128i *)(void *)out + j, v);
    }
}

/* ---- AVX2 ---- */

static inline __attribute__((always_inline)) AVX2 __m256i load2(const __m128i *a, const __m128i *b)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(a)), _mm_loadu_si128(b),
                                   1);
}

static inline __attribute__((always_inline)) AVX2 void
unpack_avx2_body(const uint8_t *in, uint32_t *out, const unsigned b, const int gaps, uint32_t first)
{
    const __m128i *w = (const __m128i *)(const void *)in;
    const __m256i mask = _mm256_set1_epi32(b == 32 ? -1 : (int)((UINT32_C(1) << b) - 1));
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i bcast3 = _mm256_set1_epi32(3);
    const __m256i last = _mm256_set1_epi32(7);
    __m256i carry = _mm256_setzero_si256();
#pragma GCC unroll 16
    for (unsigned j = 0; j < 32; j += 2) {
        __m256i v;
        if (b == 0) {
            v = _mm256_setzero_si256();
        } else {
            const unsigned bit0 = j * b, wi0 = bit0 >> 5, sh0 = bit0 & 31;
            const unsigned bit1 = (j + 1) * b, wi1 = bit1 >> 5, sh1 = bit1 & 31;
            const int st0 = sh0 + b > 32, st1 = sh1 + b > 32;
            v = _mm256_srlv_epi32(load2(w + wi0, w + wi1),
                                  _mm256_setr_epi32((int)sh0, (int)sh0, (int)sh0, (int)sh0,
                                                    (int)sh1, (int)sh1, (int)sh1, (int)sh1));
            if (st0 || st1) {
                /* A half that does not straddle reloads its own word and shifts it out (32). */
                const unsigned n0 = st0 ? wi0 + 1 : wi0, n1 = st1 ? wi1 + 1 : wi1;
                const int l0 = st0 ? (int)(32 - sh0) : 32, l1 = st1 ? (int)(32 - sh1) : 32;
                v = _mm256_or_si256(
                    v, _mm256_sllv_epi32(load2(w + n0, w + n1),
                                         _mm256_setr_epi32(l0, l0, l0, l0, l1, l1, l1, l1)));
            }
            if (b < 32)
                v = _mm256_and_si256(v, mask);
        }
        if (gaps) {
            if (j == 0 && gaps == 1) {
                uint32_t v0 = (uint32_t)_mm256_cvtsi256_si32(v);
                carry = _mm256_set1_epi32((int)(first - 1 - v0));
            }
            if (gaps == 1)
                v = _mm256_add_epi32(v, one);
            v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
            v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
            /* carry the low 128-bit half's total into the high half */
            __m256i lo3 = _mm256_permutevar8x32_epi32(v, bcast3);
            v = _mm256_add_epi32(v, _mm256_blend_epi32(_mm256_setzero_si256(), lo3, 0xf0));
            __m256i total = _mm256_permutevar8x32_epi32(v, last);
            v = _mm256_add_epi32(v, carry);
            carry = _mm256_add_epi32(carry, total);
        }
        _mm256_storeu_si256((__m256i *)(void *)out + j / 2, v);
    }
}

typedef void (*unpack_fn)(const uint8_t *in, uint32_t *out);
typedef void (*gaps_fn)(const uint8_t *in, uint32_t first, uint32_t *out);

/* clang-format off */
#define SC__WIDTHS(X)                                                                              \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)    \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)     \
    X(32)
/* clang-format on */

#define DEF_KERNELS(n)                                                                             \
    static SSE void unpack_sse_##n(const uint8_t *in, uint32_t *out)                               \
    {                                                                                              \
        unpack_sse_body(in, out, n, 0, 0);                                                         \
    }                                                                                              \
    static SSE void gaps_sse_##n(const uint8_t *in, uint32_t first, uint32_t *out)                 \
    {                                                                                              \
        unpack_sse_body(in, out, n, 1, first);                                                     \
    }                                                                                              \
    static AVX2 void unpack_avx2_##n(const uint8_t *in, uint32_t *out)                             \
    {                                                                                              \
        unpack_avx2_body(in, out, n, 0, 0);                                                        \
    }                                                                                              \
    static AVX2 void gaps_avx2_##n(const uint8_t *in, uint32_t first, uint32_t *out)               \
    {                                                                                              \
        unpack_avx2_body(in, out, n, 1, first);                                                    \
    }                                                                                              \
    static SSE void psum_sse_##n(const uint8_t *in, uint32_t *out)                                 \
    {                                                                                              \
        unpack_sse_body(in, out, n, 2, 0);                                                         \
    }                                                                                              \
    static AVX2 void psum_avx2_##n(const uint8_t *in, uint32_t *out)                               \
    {                                                                                              \
        unpack_avx2_body(in, out, n, 2, 0);                                                        \
    }
SC__WIDTHS(DEF_KERNELS)

#define REF_UNPACK_SSE(n) unpack_sse_##n,
#define REF_GAPS_SSE(n) gaps_sse_##n,
#define REF_UNPACK_AVX2(n) unpack_avx2_##n,
#define REF_GAPS_AVX2(n) gaps_avx2_##n,
static const unpack_fn unpack_sse[33] = {SC__WIDTHS(REF_UNPACK_SSE)};
static const gaps_fn gaps_sse[33] = {SC__WIDTHS(REF_GAPS_SSE)};
static const unpack_fn unpack_avx2[33] = {SC__WIDTHS(REF_UNPACK_AVX2)};
static const gaps_fn gaps_avx2[33] = {SC__WIDTHS(REF_GAPS_AVX2)};
#define REF_PSUM_SSE(n) psum_sse_##n,
#define REF_PSUM_AVX2(n) psum_avx2_##n,
static const unpack_fn psum_sse[33] = {SC__WIDTHS(REF_PSUM_SSE)};
static const unpack_fn psum_avx2[33] = {SC__WIDTHS(REF_PSUM_AVX2)};

int sc_bitpack_supported(sc_bitpack_impl impl)
{
    switch (impl) {
    case SC_BITPACK_SCALAR:
    case SC_BITPACK_AUTO: return 1;
    case SC_BITPACK_SSE41: return __builtin_cpu_supports("sse4.1");
    case SC_BITPACK_AVX2: return __builtin_cpu_supports("avx2");
    }
    return 0;
}

const char *sc_bitpack_impl_name(sc_bitpack_impl impl)
{
    switch (impl) {
    case SC_BITPACK_SCALAR: return "scalar";
    case SC_BITPACK_SSE41: return "sse4.1";
    case SC_BITPACK_AVX2: return "avx2";
    case SC_BITPACK_AUTO: return "auto";
    }
    return "?";
}

static _Atomic int best_impl = -1;

static sc_bitpack_impl resolve(sc_bitpack_impl impl)
{
    if (impl == SC_BITPACK_AUTO) {
        int b = atomic_load_explicit(&best_impl, memory_order_relaxed);
        if (b < 0) {
            b = sc_bitpack_supported(SC_BITPACK_AVX2)    ? SC_BITPACK_AVX2
                : sc_bitpack_supported(SC_BITPACK_SSE41) ? SC_BITPACK_SSE41
                                                         : SC_BITPACK_SCALAR;
            atomic_store_explicit(&best_impl, b, memory_order_relaxed);
        }
        return (sc_bitpack_impl)b;
    }
    return sc_bitpack_supported(impl) ? impl : SC_BITPACK_SCALAR;
}

void sc_bitpack_unpack_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width, uint32_t *out)
{
    if (width > 32)
        width = 32;
    switch (resolve(impl)) {
    case SC_BITPACK_AVX2: unpack_avx2[width](in, out); return;
    case SC_BITPACK_SSE41: unpack_sse[width](in, out); return;
    default: unpack_scalar(in, width, out); return;
    }
}

void sc_bitpack_unpack_gaps_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width,
                                 uint32_t first, uint32_t *out)
{
    if (width > 32)
        width = 32;
    switch (resolve(impl)) {
    case SC_BITPACK_AVX2: gaps_avx2[width](in, first, out); return;
    case SC_BITPACK_SSE41: gaps_sse[width](in, first, out); return;
    default: gaps_scalar(in, width, first, out); return;
    }
}

void sc_bitpack_unpack(const uint8_t *in, unsigned width, uint32_t *out)
{
    sc_bitpack_unpack_with(SC_BITPACK_AUTO, in, width, out);
}

void sc_bitpack_unpack_gaps(const uint8_t *in, unsigned width, uint32_t first, uint32_t *out)
{
    sc_bitpack_unpack_gaps_with(SC_BITPACK_AUTO, in, width, first, out);
}

void sc_bitpack_unpack_psum_with(sc_bitpack_impl impl, const uint8_t *in, unsigned width,
                                 uint32_t *out)
{
    if (width > 32)
        width = 32;
    switch (resolve(impl)) {
    case SC_BITPACK_AVX2: psum_avx2[width](in, out); return;
    case SC_BITPACK_SSE41: psum_sse[width](in, out); return;
    default: psum_scalar(in, width, out); return;
    }
}

void sc_bitpack_unpack_psum(const uint8_t *in, unsigned width, uint32_t *out)
{
    sc_bitpack_unpack_psum_with(SC_BITPACK_AUTO, in, width, out);
}
