/* Vector similarity kernels for dense_vector search: dot product, squared Euclidean distance
 * and cosine over float32 and int8 arrays, with an AVX2/FMA implementation picked at run time
 * (__builtin_cpu_supports) and a portable scalar one. Used by the HNSW graph (index/hnsw.h),
 * exact kNN scans and their tests. All functions are pure and thread-safe.
 * script_score's vector functions (cosineSimilarity, dotProduct, l1norm, l2norm, hamming; not
 * written yet, they belong to the script expression module) should call these kernels on a
 * doc's raw floats from sc_segment_vectors (index/vecfield.h: ordinal of a doc by binary
 * search in vf.docs), never the int8 codes, so their scores are exact. */
#ifndef SC_INDEX_VEC_KERNELS_H
#define SC_INDEX_VEC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef enum sc_vec_impl {
    SC_VEC_IMPL_SCALAR,
    SC_VEC_IMPL_AVX2, /* AVX2 + FMA */
    SC_VEC_IMPL_AUTO, /* the best the CPU supports, resolved once */
} sc_vec_impl;

/* One implementation's kernels. n is the number of elements (any n >= 0). Float results are
 * accumulated in float lanes (so they differ from a double loop by rounding only); int8 results
 * are exact 32-bit integers (n <= 2^17 keeps them from overflowing). */
typedef struct sc_vec_kernels {
    float (*dot_f32)(const float *a, const float *b, size_t n);
    float (*l2sq_f32)(const float *a, const float *b, size_t n);
    int32_t (*dot_i8)(const int8_t *a, const int8_t *b, size_t n);
    int32_t (*l2sq_i8)(const int8_t *a, const int8_t *b, size_t n);
    /* float query times int8 codes (asymmetric scoring of quantized vectors) */
    float (*dot_f32_i8)(const float *a, const int8_t *b, size_t n);
    /* 7-bit codes (every a[i] in 0..127, as the int8 quantizer writes them) times 16-bit
     * integers with |b[i]| <= 4095, n <= 4096 (so the sum fits in 32 bits): exact, 16 codes
     * per vpmaddwd on AVX2 (the int8 graph walk with a query quantized to 13 bits) */
    int32_t (*dot_u7_i16)(const int8_t *a, const int16_t *b, size_t n);
    /* dot_u7_i16 of m vectors at once: out[j] = dot_u7_i16(base + ords[j] * n, b, n) (the
     * vectors of a graph node's neighbours, rows of n codes). One call per expanded node instead
     * of one per neighbour; AVX2 scores four rows per pass, each 16-lane slice of b loaded once
     * for the four. */
    void (*dot_u7_i16_gather)(const int8_t *base, const uint32_t *ords, size_t m, const int16_t *b,
                              size_t n, int32_t *out);
} sc_vec_kernels;

/* True when the CPU can run impl (SCALAR and AUTO always). */
int sc_vec_impl_supported(sc_vec_impl impl);

/* The kernels of impl (AUTO: AVX2 when supported, else scalar); impl must be supported.
 * Returns a pointer to a static, immutable table. */
const sc_vec_kernels *sc_vec_kernels_get(sc_vec_impl impl);

/* Cosine similarity of a and b with the given kernels: dot / sqrt(|a|^2 |b|^2); 0 when either
 * is the zero vector. */
float sc_vec_cos_f32(const sc_vec_kernels *k, const float *a, const float *b, size_t n);
/* Cosine over int8 vectors, as above. */
float sc_vec_cos_i8(const sc_vec_kernels *k, const int8_t *a, const int8_t *b, size_t n);

#endif
