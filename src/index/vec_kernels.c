/* Similarity kernels (vec_kernels.h): scalar loops and AVX2/FMA versions. The AVX2 float
 * kernels keep two 8-lane accumulators (two FMAs in flight hide most of the 4-cycle latency);
 * the int8 ones sign-extend 16 bytes to 16-bit lanes and use vpmaddwd (pairs of products summed
 * into 32-bit lanes), which is exact for signed bytes. */
#include "index/vec_kernels.h"

#include <immintrin.h>
#include <math.h>
#include <stdatomic.h>

static float dot_f32_scalar(const float *a, const float *b, size_t n)
{
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static float l2sq_f32_scalar(const float *a, const float *b, size_t n)
{
    float s = 0;
    for (size_t i = 0; i < n; i++) {
        float d = a[i] - b[i];
        s += d * d;
    }
    return s;
}

static int32_t dot_i8_scalar(const int8_t *a, const int8_t *b, size_t n)
{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += (int32_t)a[i] * b[i];
    return s;
}

static int32_t l2sq_i8_scalar(const int8_t *a, const int8_t *b, size_t n)
{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t d = (int32_t)a[i] - b[i];
        s += d * d;
    }
    return s;
}

static float dot_f32_i8_scalar(const float *a, const int8_t *b, size_t n)
{
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * (float)b[i];
    return s;
}

static int32_t dot_u7_i16_scalar(const int8_t *a, const int16_t *b, size_t n)
{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += (int32_t)a[i] * b[i];
    return s;
}

static void dot_u7_i16_gather_scalar(const int8_t *base, const uint32_t *ords, size_t m,
                                     const int16_t *b, size_t n, int32_t *out)
{
    for (size_t j = 0; j < m; j++)
        out[j] = dot_u7_i16_scalar(base + (size_t)ords[j] * n, b, n);
}

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static float hsum256(__m256 v)
{
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}

AVX2 static int32_t hsum256i(__m256i v)
{
    __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xb1));
    return _mm_cvtsi128_si32(x);
}

AVX2 static float dot_f32_avx2(const float *a, const float *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    if (i + 8 <= n) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        i += 8;
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

AVX2 static float l2sq_f32_avx2(const float *a, const float *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        s1 = _mm256_fmadd_ps(d1, d1, s1);
    }
    if (i + 8 <= n) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        i += 8;
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) {
        float d = a[i] - b[i];
        s += d * d;
    }
    return s;
}

AVX2 static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, size_t n)
{
    __m256i s = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(x, y));
    }
    int32_t r = hsum256i(s);
    for (; i < n; i++)
        r += (int32_t)a[i] * b[i];
    return r;
}

AVX2 static int32_t l2sq_i8_avx2(const int8_t *a, const int8_t *b, size_t n)
{
    __m256i s = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256i d = _mm256_sub_epi16(x, y); /* |d| <= 255: fits in 16 bits */
        s = _mm256_add_epi32(s, _mm256_madd_epi16(d, d));
    }
    int32_t r = hsum256i(s);
    for (; i < n; i++) {
        int32_t d = (int32_t)a[i] - b[i];
        r += d * d;
    }
    return r;
}

/* 8 codes widened to 8 float lanes per FMA; two accumulators as in dot_f32_avx2. */
AVX2 static float dot_f32_i8_avx2(const float *a, const int8_t *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(b + i));
        __m256 y0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x));
        __m256 y1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(x, 8)));
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), y0, s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), y1, s1);
    }
    if (i + 8 <= n) {
        __m128i x = _mm_loadl_epi64((const __m128i *)(b + i));
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x)),
                             s0);
        i += 8;
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * (float)b[i];
    return s;
}

/* The codes zero-extended to 16-bit lanes, vpmaddwd with the 16-bit query: pairs of products
 * summed into 32-bit lanes (|sum| <= 127 * 4095 * 4096 < 2^31). 32 codes per step, two
 * accumulators. */
AVX2 static int32_t dot_u7_i16_avx2(const int8_t *a, const int16_t *b, size_t n)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i c0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i c1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + i + 16)));
        s0 = _mm256_add_epi32(s0,
                              _mm256_madd_epi16(c0, _mm256_loadu_si256((const __m256i *)(b + i))));
        s1 = _mm256_add_epi32(
            s1, _mm256_madd_epi16(c1, _mm256_loadu_si256((const __m256i *)(b + i + 16))));
    }
    if (i + 16 <= n) {
        __m256i c0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        s0 = _mm256_add_epi32(s0,
                              _mm256_madd_epi16(c0, _mm256_loadu_si256((const __m256i *)(b + i))));
        i += 16;
    }
    int32_t r = hsum256i(_mm256_add_epi32(s0, s1));
    for (; i < n; i++)
        r += (int32_t)a[i] * b[i];
    return r;
}

/* Four rows per pass: each 16-lane slice of b is loaded once and multiplied into four
 * accumulators (four independent vpmaddwd chains), the four sums reduced together by three
 * vphaddd. The rows left over (m % 4) go through dot_u7_i16_avx2. */
AVX2 static void dot_u7_i16_gather_avx2(const int8_t *base, const uint32_t *ords, size_t m,
                                        const int16_t *b, size_t n, int32_t *out)
{
    size_t j = 0;
    for (; j + 4 <= m; j += 4) {
        const int8_t *a0 = base + (size_t)ords[j] * n, *a1 = base + (size_t)ords[j + 1] * n,
                     *a2 = base + (size_t)ords[j + 2] * n, *a3 = base + (size_t)ords[j + 3] * n;
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
        size_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(b + i));
#define U7_ROW(s, a)                                                                               \
    s = _mm256_add_epi32(                                                                          \
        s,                                                                                         \
        _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((a) + i))), q))
            U7_ROW(s0, a0);
            U7_ROW(s1, a1);
            U7_ROW(s2, a2);
            U7_ROW(s3, a3);
#undef U7_ROW
        }
        /* lanes of hadd(hadd(s0, s1), hadd(s2, s3)): the four rows' partial sums, per half */
        __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
        __m128i r = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        int32_t t[4];
        _mm_storeu_si128((__m128i *)t, r);
        for (; i < n; i++) {
            t[0] += (int32_t)a0[i] * b[i];
            t[1] += (int32_t)a1[i] * b[i];
            t[2] += (int32_t)a2[i] * b[i];
            t[3] += (int32_t)a3[i] * b[i];
        }
        out[j] = t[0], out[j + 1] = t[1], out[j + 2] = t[2], out[j + 3] = t[3];
    }
    for (; j < m; j++)
        out[j] = dot_u7_i16_avx2(base + (size_t)ords[j] * n, b, n);
}

static const sc_vec_kernels k_scalar = {
    dot_f32_scalar,    l2sq_f32_scalar,   dot_i8_scalar,           l2sq_i8_scalar,
    dot_f32_i8_scalar, dot_u7_i16_scalar, dot_u7_i16_gather_scalar};
static const sc_vec_kernels k_avx2 = {dot_f32_avx2,          l2sq_f32_avx2,   dot_i8_avx2,
                                      l2sq_i8_avx2,          dot_f32_i8_avx2, dot_u7_i16_avx2,
                                      dot_u7_i16_gather_avx2};

int sc_vec_impl_supported(sc_vec_impl impl)
{
    if (impl == SC_VEC_IMPL_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return impl == SC_VEC_IMPL_SCALAR || impl == SC_VEC_IMPL_AUTO;
}

static _Atomic int best = -1;

const sc_vec_kernels *sc_vec_kernels_get(sc_vec_impl impl)
{
    if (impl == SC_VEC_IMPL_AUTO) {
        int b = atomic_load_explicit(&best, memory_order_relaxed);
        if (b < 0) {
            b = sc_vec_impl_supported(SC_VEC_IMPL_AVX2) ? SC_VEC_IMPL_AVX2 : SC_VEC_IMPL_SCALAR;
            atomic_store_explicit(&best, b, memory_order_relaxed);
        }
        impl = (sc_vec_impl)b;
    }
    return impl == SC_VEC_IMPL_AVX2 ? &k_avx2 : &k_scalar;
}

float sc_vec_cos_f32(const sc_vec_kernels *k, const float *a, const float *b, size_t n)
{
    float aa = k->dot_f32(a, a, n), bb = k->dot_f32(b, b, n);
    if (!(aa > 0) || !(bb > 0))
        return 0;
    return k->dot_f32(a, b, n) / sqrtf(aa * bb);
}

float sc_vec_cos_i8(const sc_vec_kernels *k, const int8_t *a, const int8_t *b, size_t n)
{
    double aa = k->dot_i8(a, a, n), bb = k->dot_i8(b, b, n);
    if (!(aa > 0) || !(bb > 0))
        return 0;
    return (float)(k->dot_i8(a, b, n) / sqrt(aa * bb));
}
