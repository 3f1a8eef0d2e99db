/* dense_vector sections (vecfield.h): the writer (quantiles, int8 codes, graph build), the
 * reader's structure checks, and a segment's kNN (graph, exact scan, filter fallback). */
#include "index/vecfield.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/internal.h"
#include "index/vec_kernels.h"

#define VEC_MAGIC "VEC2"    /* per-dimension int8 ranges (segment version 9) */
#define VEC_MAGIC_V1 "VEC1" /* one int8 range per section (version 8): codes ignored */
#define QMAX 127.0f         /* 7-bit codes, as Lucene's int8 quantizer */
#define QUANTILE_SAMPLE 25000u

static bool has_codes(sc_vec_index t)
{
    return t == SC_VEC_INDEX_INT8_HNSW || t == SC_VEC_INDEX_INT8_FLAT;
}

static bool has_graph(sc_vec_index t)
{
    return t == SC_VEC_INDEX_HNSW || t == SC_VEC_INDEX_INT8_HNSW;
}

float sc_vec_similarity(const sc_vec_params *p, const float *a, const float *b)
{
    const sc_vec_kernels *k = sc_vec_kernels_get(SC_VEC_IMPL_AUTO);
    return p->sim == SC_VEC_SIM_L2 ? -k->l2sq_f32(a, b, p->dims) : k->dot_f32(a, b, p->dims);
}

float sc_vec_score(const sc_vec_params *p, float sim)
{
    if (p->elem == SC_VEC_ELEM_BIT) /* hamming: (bits - distance) / bits */
        return ((float)p->dims + sim) / (float)p->dims;
    switch (p->sim) {
    case SC_VEC_SIM_L2: return 1.0f / (1.0f - sim);
    case SC_VEC_SIM_COSINE: return fmaxf((1.0f + sim) / 2.0f, 0.0f);
    case SC_VEC_SIM_DOT:
        if (p->elem == SC_VEC_ELEM_BYTE)
            return 0.5f + sim / ((float)p->dims * 32768.0f);
        return fmaxf((1.0f + sim) / 2.0f, 0.0f);
    case SC_VEC_SIM_MIP: return sim < 0 ? 1.0f / (1.0f - sim) : sim + 1.0f;
    }
    return 0;
}

bool sc_vec_similarity_ok(const sc_vec_params *p, float sim, float threshold)
{
    if (p->elem == SC_VEC_ELEM_BIT)
        return -sim <= threshold; /* a hamming distance */
    if (p->sim == SC_VEC_SIM_L2)
        return sqrtf(-sim) <= threshold;
    return sim >= threshold;
}

/* The vectors by ordinal: contiguous (vecs) or one pointer each (ptrs, e.g. into the mapped
 * inputs of a merge). */
typedef struct vsrc {
    const float *vecs;
    const float *const *ptrs;
    size_t dims;
} vsrc;

static inline const float *vat(const vsrc *s, uint32_t i)
{
    return s->ptrs ? s->ptrs[i] : s->vecs + (size_t)i * s->dims;
}

/* ---- quantization ---- */

/* The k-th smallest of v[0..n) (k < n), partially reordering v (Hoare's selection). O(n). */
static float select_kth(float *v, size_t n, size_t k)
{
    size_t l = 0, r = n - 1;
    while (l < r) {
        float pivot = v[l + (r - l) / 2];
        size_t i = l, j = r;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            r = j;
        else if (k >= i)
            l = i;
        else
            return v[k];
    }
    return v[k];
}

/* Per-dimension bounds: for each dimension, the quantiles at confidence max(1 - 1 / (dims +
 * 1), 0.999) of that dimension's values in an evenly strided sample of at most QUANTILE_SAMPLE
 * vectors (Lucene's default int8 interval, floored: at 32 dims Lucene's 0.97 cut recall@10
 * after rescoring from 0.962 to 0.948 in hnsw_test). One range per dimension instead of
 * Lucene's one per segment: with dims of 100x different spread a shared range leaves the
 * narrow dims a code or two (hnsw_test skewed sets: recall@10 0.45 -> 1.0). lo[d] is the
 * bottom, alpha[d] = (hi - lo) / 127 the step (0 for a constant dimension). */
static void dim_bounds(const sc_vec_params *p, const vsrc *src, uint32_t n, float *v, float *lo,
                       float *alpha)
{
    for (uint32_t d = 0; d < p->dims; d++)
        lo[d] = 0, alpha[d] = 0;
    if (n == 0)
        return;
    uint32_t ns = n < QUANTILE_SAMPLE ? n : QUANTILE_SAMPLE;
    double ci = 1.0 - 1.0 / ((double)p->dims + 1.0);
    if (ci < 0.999)
        ci = 0.999; /* low dims: clipping 1 / (dims + 1) of the values costs recall */
    size_t cut = (size_t)floor((double)ns * (1.0 - ci) / 2.0);
    for (uint32_t d = 0; d < p->dims; d++) {
        for (uint32_t i = 0; i < ns; i++) {
            uint64_t s = (uint64_t)i * n / ns;
            v[i] = vat(src, (uint32_t)s)[d];
        }
        float l = select_kth(v, ns, cut), h = select_kth(v, ns, ns - 1 - cut);
        lo[d] = l;
        alpha[d] = h > l ? (h - l) / QMAX : 0.0f;
    }
}

/* Codes of v (0..127, code = round((clamp(v) - lo) / alpha)) and the squared norm of the
 * decoded vector lo + alpha code, the correction l2_norm scoring needs. */
static float quantize(const sc_vec_params *p, const float *lo, const float *alpha, const float *v,
                      int8_t *q)
{
    double norm = 0;
    for (uint32_t i = 0; i < p->dims; i++) {
        int c = 0;
        if (alpha[i] > 0) {
            float x = (v[i] - lo[i]) / alpha[i];
            x = x < 0 ? 0 : x > QMAX ? QMAX : x;
            c = (int)lrintf(x);
        }
        q[i] = (int8_t)c;
        float dec = lo[i] + alpha[i] * (float)c;
        norm += (double)dec * dec;
    }
    return (float)norm;
}

/* ---- writing ---- */

/* Where a section goes: a buffer or straight to the segment file, with the section-relative
 * length kept for the 4-byte padding. */
typedef struct sink {
    sc_buf *buf;
    sc__out *o;
    uint64_t len;
    sc_status st;
} sink;

static void put(sink *k, const void *p, size_t len)
{
    if (k->buf)
        sc__buf_put(k->buf, p, len, &k->st);
    else
        sc__out_write(k->o, p, len);
    k->len += len;
}

static void pad4(sink *k)
{
    static const uint8_t z[4] = {0};
    if (k->len % 4)
        put(k, z, 4 - k->len % 4);
}

typedef struct pairctx {
    vsrc src;
    float (*f)(const float *a, const float *b, size_t n); /* the kernel, resolved once */
    float sign;                                           /* -1 for l2 (a distance) */
} pairctx;

static float pair_sim(const void *ctx, uint32_t a, uint32_t b)
{
    const pairctx *c = ctx;
    return c->sign * c->f(vat(&c->src, a), vat(&c->src, b), c->src.dims);
}

/* Builds the graph over the n vectors into *out (seeded as sc_vec_section_write says). */
static sc_status build_graph(const sc_vec_params *p, const vsrc *src, uint32_t n,
                             const sc_hnsw_graph *seed, uint32_t seed_base, pairctx *pc,
                             sc_hnsw_builder **out)
{
    const sc_vec_kernels *k = sc_vec_kernels_get(SC_VEC_IMPL_AUTO);
    bool l2 = p->sim == SC_VEC_SIM_L2;
    *pc = (pairctx){*src, l2 ? k->l2sq_f32 : k->dot_f32, l2 ? -1.0f : 1.0f};
    sc_hnsw_builder *b;
    SC_TRY(sc_hnsw_builder_new(n, p->m, p->ef_construction, 42, pair_sim, pc, &b));
    sc_status st = SC_OK;
    bool seeded = seed && seed->n && seed->m == p->m && (uint64_t)seed_base + seed->n <= n;
    if (seeded)
        st = sc_hnsw_builder_seed(b, seed, seed_base);
    for (uint32_t i = 0; i < n && st == SC_OK; i++)
        if (!seeded || i < seed_base || i >= seed_base + seed->n)
            st = sc_hnsw_builder_add(b, i);
    if (st != SC_OK) {
        sc_hnsw_builder_free(b);
        return st;
    }
    *out = b;
    return SC_OK;
}

/* The section: the graph is built first (the header holds its entry point), then everything
 * is written in order; the int8 codes are computed twice (corrections, then codes) so that
 * neither array is held. Memory besides the graph: a sample of QUANTILE_SAMPLE floats. */
static sc_status section_write(const sc_vec_params *p, const uint32_t *docs, const vsrc *src,
                               uint32_t n, const sc_hnsw_graph *seed, uint32_t seed_base, sink *k)
{
    sc_hnsw_builder *b = NULL;
    pairctx pc;
    sc_hnsw_graph g = {.max_level = -1};
    if (has_graph(p->type) && n > 0) {
        SC_TRY(build_graph(p, src, n, seed, seed_base, &pc, &b));
        sc_hnsw_builder_graph(b, n, &g);
    }
    uint8_t hdr[SC_VEC_SECTION_HEADER] = {0};
    memcpy(hdr, VEC_MAGIC, 4);
    sc__st32(hdr + 4, p->dims);
    sc__st32(hdr + 8, n);
    hdr[12] = (uint8_t)p->sim;
    hdr[13] = (uint8_t)p->elem;
    hdr[14] = (uint8_t)p->type;
    sc__st32(hdr + 16, p->m);
    sc__st32(hdr + 20, p->ef_construction);
    sc__st32(hdr + 28, UINT32_MAX); /* max_level -1: no graph */
    if (b) {
        sc__st32(hdr + 24, g.entry);
        sc__st32(hdr + 28, (uint32_t)g.max_level);
        sc__st32(hdr + 32, g.n_up);
    }
    put(k, hdr, sizeof(hdr));
    put(k, docs, (size_t)n * 4);
    if (!src->ptrs)
        put(k, src->vecs, (size_t)n * p->dims * 4);
    for (uint32_t i = 0; src->ptrs && i < n; i++)
        put(k, src->ptrs[i], (size_t)p->dims * 4);
    sc_status st = SC_OK;
    if (has_codes(p->type)) {
        float *lo = malloc((size_t)p->dims * 8);
        float *v =
            malloc(((size_t)(n < QUANTILE_SAMPLE ? n : QUANTILE_SAMPLE) + 1) * sizeof(float));
        int8_t *code = malloc((size_t)p->dims + 1);
        if (!lo || !v || !code)
            st = SC_ENOMEM;
        float *alpha = lo ? lo + p->dims : NULL;
        if (st == SC_OK)
            dim_bounds(p, src, n, v, lo, alpha);
        if (st == SC_OK) {
            put(k, lo, (size_t)p->dims * 8);
            for (uint32_t i = 0; i < n; i++) {
                float corr = quantize(p, lo, alpha, vat(src, i), code);
                put(k, &corr, 4);
            }
            for (uint32_t i = 0; i < n; i++) {
                (void)quantize(p, lo, alpha, vat(src, i), code);
                put(k, code, p->dims);
            }
            pad4(k);
        }
        free(lo);
        free(v);
        free(code);
    }
    if (b && st == SC_OK) {
        put(k, g.levels, n);
        pad4(k);
        put(k, g.l0, (size_t)n * (1 + 2 * (size_t)p->m) * 4);
        put(k, g.up_off, (size_t)n * 4);
        put(k, g.up, (size_t)g.n_up * (1 + p->m) * 4);
    }
    sc_hnsw_builder_free(b);
    if (st == SC_OK)
        st = k->buf ? k->st : k->o->st;
    return st;
}

sc_status sc_vec_section_write(const sc_vec_params *p, const uint32_t *docs, const float *vecs,
                               uint32_t n, const sc_hnsw_graph *seed, uint32_t seed_base,
                               sc_buf *out)
{
    sink k = {.buf = out};
    vsrc src = {.vecs = vecs, .dims = p->dims};
    return section_write(p, docs, &src, n, seed, seed_base, &k);
}

sc_status sc__vec_section_stream(const sc_vec_params *p, const uint32_t *docs, const float *vecs,
                                 const float *const *ptrs, uint32_t n, const sc_hnsw_graph *seed,
                                 uint32_t seed_base, sc__out *o, uint64_t *len)
{
    sink k = {.o = o};
    vsrc src = {.vecs = vecs, .ptrs = ptrs, .dims = p->dims};
    sc_status st = section_write(p, docs, &src, n, seed, seed_base, &k);
    *len = k.len;
    return st;
}

/* ---- reading ---- */

static sc_status bad(const char **why, const char *msg)
{
    *why = msg;
    return SC_ECORRUPT;
}

/* The section's layout into *out, its lengths and parameters checked. With deep also every
 * O(n) part: doc order, int8 codes, the graph's links (segment open does that once; a search
 * re-reading the section of an open segment skips it: at 1M x 128 the checks cost ~100 ms). */
static sc_status section_parse(sc_slice bytes, uint32_t n_docs, sc_vec_field *out, const char **why,
                               bool deep)
{
    memset(out, 0, sizeof(*out));
    const uint8_t *b = bytes.ptr;
    if (bytes.len < SC_VEC_SECTION_HEADER ||
        (memcmp(b, VEC_MAGIC, 4) != 0 && memcmp(b, VEC_MAGIC_V1, 4) != 0))
        return bad(why, "bad vector section header");
    bool v1 = memcmp(b, VEC_MAGIC_V1, 4) == 0;
    if (((uintptr_t)b & 3) != 0)
        return bad(why, "misaligned vector section");
    sc_vec_params *p = &out->p;
    p->dims = sc__ld32(b + 4);
    out->n = sc__ld32(b + 8);
    p->sim = (sc_vec_sim)b[12];
    p->elem = (sc_vec_elem)b[13];
    p->type = (sc_vec_index)b[14];
    p->m = sc__ld32(b + 16);
    p->ef_construction = sc__ld32(b + 20);
    if (b[12] > 3 || b[13] > 2 || b[14] > 3 || p->dims == 0 || p->dims > sc_vec_max_dims(p->elem) ||
        out->n > n_docs ||
        (p->elem == SC_VEC_ELEM_BIT && (p->sim != SC_VEC_SIM_L2 || has_codes(p->type))))
        return bad(why, "bad vector parameters");
    uint64_t n = out->n, d = p->dims, off = SC_VEC_SECTION_HEADER;
    uint64_t need = off + n * 4 + n * d * 4;
    if (has_codes(p->type)) {
        if (v1) {
            float lo, hi;
            memcpy(&lo, b + 36, 4);
            memcpy(&hi, b + 40, 4);
            if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
                return bad(why, "bad quantization bounds");
        }
        need += (v1 ? 0 : d * 8) + n * 4 + ((n * d + 3) & ~(uint64_t)3);
    }
    if (need > bytes.len)
        return bad(why, "vector section truncated");
    out->docs = (const uint32_t *)(b + off);
    off += n * 4;
    out->vecs = (const float *)(b + off);
    off += n * d * 4;
    for (uint64_t i = 0; deep && i < n; i++)
        if (out->docs[i] >= n_docs || (i && out->docs[i] <= out->docs[i - 1]))
            return bad(why, "vector docs not increasing");
    if (has_codes(p->type)) {
        if (!v1) {
            out->qlo = (const float *)(b + off);
            out->qalpha = out->qlo + d;
            off += d * 8;
            for (uint64_t i = 0; i < d; i++)
                if (!isfinite(out->qlo[i]) || !isfinite(out->qalpha[i]) || out->qalpha[i] < 0)
                    return bad(why, "bad quantization bounds");
        }
        out->corr = (const float *)(b + off);
        off += n * 4;
        out->codes = (const int8_t *)(b + off);
        off += (n * d + 3) & ~(uint64_t)3;
        for (uint64_t i = 0; deep && i < n * d; i++)
            if (out->codes[i] < 0)
                return bad(why, "bad int8 code");
        if (v1) /* one shared range: searched with the raw floats until a merge rewrites it */
            out->codes = NULL, out->corr = NULL;
    }
    int32_t max_level = (int32_t)sc__ld32(b + 28);
    if (!has_graph(p->type) || n == 0) {
        if (off != bytes.len)
            return bad(why, "vector section length mismatch");
        return SC_OK;
    }
    if (p->m < 2 || p->m > SC_HNSW_MAX_M)
        return bad(why, "bad hnsw m");
    sc_hnsw_graph *g = &out->graph;
    g->n = out->n;
    g->m = p->m;
    g->entry = sc__ld32(b + 24);
    g->max_level = max_level;
    g->n_up = sc__ld32(b + 32);
    uint64_t lv_bytes = (n + 3) & ~(uint64_t)3;
    uint64_t total = off + lv_bytes + n * (1 + 2 * (uint64_t)p->m) * 4 + n * 4 +
                     (uint64_t)g->n_up * (1 + p->m) * 4;
    if (total != bytes.len)
        return bad(why, "hnsw graph length mismatch");
    g->levels = b + off;
    off += lv_bytes;
    g->l0 = (const uint32_t *)(b + off);
    off += n * (1 + 2 * (uint64_t)p->m) * 4;
    g->up_off = (const uint32_t *)(b + off);
    off += n * 4;
    g->up = (const uint32_t *)(b + off);
    if (deep && !sc_hnsw_graph_valid(g))
        return bad(why, "bad hnsw graph");
    out->has_graph = true;
    return SC_OK;
}

sc_status sc_vec_section_open(sc_slice bytes, uint32_t n_docs, sc_vec_field *out, const char **why)
{
    return section_parse(bytes, n_docs, out, why, true);
}

sc_status sc_segment_vectors(const sc_segment *seg, const sc_field_info *f, sc_vec_field *out)
{
    if (f->kind != SC_FIELD_VECTOR || f->points_len == 0)
        return SC_ENOTFOUND;
    sc_slice all = sc__segment_bytes(seg);
    const char *why;
    /* the segment's open checked the whole section (sc_vec_section_open) */
    return section_parse(sc_slice_make(all.ptr + f->points_off, f->points_len),
                         sc_segment_n_docs(seg), out, &why, false);
}

/* ---- kNN ---- */

typedef struct qscorer {
    sc_hnsw_scorer base;
    const sc_vec_field *vf;
    const sc_vec_kernels *k;
    float (*f)(const float *a, const float *b, size_t n); /* l2sq or dot, resolved once */
    float sign;                                           /* -1 for l2 */
    const float *q;
    const int16_t *qi; /* int8: query * alpha per dimension, quantized: qi * qscale */
    float qscale;
    float qbase; /* int8: sum(query * lo) */
    float qnorm; /* int8: |query|^2 */
} qscorer;

static float score_f32(const sc_hnsw_scorer *s, uint32_t ord)
{
    const qscorer *c = (const qscorer *)s;
    size_t dims = c->vf->p.dims;
    return c->sign * c->f(c->q, c->vf->vecs + (size_t)ord * dims, dims);
}

/* The query against the decoded vector b' = lo + alpha code: q.b' = sum(q lo) + sum((q alpha)
 * code) and |q - b'|^2 = |q|^2 - 2 q.b' + |b'|^2 (corr). q alpha is itself quantized to 13-bit
 * integers (one scale per query: an error of 1 / 8,190 of the largest weight), so the
 * sum is an integer dot product (vpmaddwd: twice the lanes of a float one, no conversions);
 * the hits are rescored with the raw floats. */
static inline float i8_sim(const qscorer *c, int32_t code_dot, uint32_t ord)
{
    float dot = c->qbase + c->qscale * (float)code_dot;
    if (c->vf->p.sim == SC_VEC_SIM_L2)
        return 2.0f * dot - c->qnorm - c->vf->corr[ord];
    return dot;
}

static float score_i8(const sc_hnsw_scorer *s, uint32_t ord)
{
    const qscorer *c = (const qscorer *)s;
    const int8_t *v = c->vf->codes + (size_t)ord * c->vf->p.dims;
    return i8_sim(c, c->k->dot_u7_i16(v, c->qi, c->vf->p.dims), ord);
}

/* score_i8 over one expanded node's fresh neighbours: one gather-kernel call for all (four
 * rows per pass), then the per-vector terms. */
static void score_i8_many(const sc_hnsw_scorer *s, const uint32_t *ords, uint32_t n, float *out)
{
    const qscorer *c = (const qscorer *)s;
    int32_t dot[2 * SC_HNSW_MAX_M];
    c->k->dot_u7_i16_gather(c->vf->codes, ords, n, c->qi, c->vf->p.dims, dot);
    for (uint32_t j = 0; j < n; j++)
        out[j] = i8_sim(c, dot[j], ords[j]);
}

/* The first two cache lines of the vector (the adjacent-line prefetcher brings more). */
static void prefetch_f32(const sc_hnsw_scorer *s, uint32_t ord)
{
    const qscorer *c = (const qscorer *)s;
    const char *p = (const char *)(c->vf->vecs + (size_t)ord * c->vf->p.dims);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
}

static void prefetch_i8(const sc_hnsw_scorer *s, uint32_t ord)
{
    const qscorer *c = (const qscorer *)s;
    const char *p = (const char *)(c->vf->codes + (size_t)ord * c->vf->p.dims);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    /* l2_norm also reads the vector's correction: its own array, its own miss */
    if (c->vf->p.sim == SC_VEC_SIM_L2)
        __builtin_prefetch(c->vf->corr + ord);
}

/* Every cache line of a raw vector (rescoring reads all of it). */
#define RESCORE_AHEAD 4
static void prefetch_vec(const sc_vec_field *vf, uint32_t ord)
{
    const char *p = (const char *)(vf->vecs + (size_t)ord * vf->p.dims);
    size_t len = (size_t)vf->p.dims * sizeof(float);
    for (size_t off = 0; off < len; off += 64)
        __builtin_prefetch(p + off);
}

static int cmp_hit(const void *a, const void *b)
{
    const sc_hnsw_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Exact scan of the accepted vectors: keeps the best k in a sorted window. */
static void exact(const sc_vec_field *vf, const sc_vec_knn_opts *o, qscorer *qs, sc_hnsw_hit *hits,
                  size_t *n_hits)
{
    size_t n = 0, k = o->k;
    for (uint32_t i = 0; i < vf->n; i++) {
        uint32_t d = vf->docs[i];
        if (o->accept && !((o->accept[d >> 6] >> (d & 63)) & 1))
            continue;
        float s = score_f32(&qs->base, i);
        if (n == k && !(s > hits[k - 1].score))
            continue;
        size_t j = n < k ? n++ : k - 1;
        while (j > 0 && hits[j - 1].score < s)
            hits[j] = hits[j - 1], j--;
        hits[j] = (sc_hnsw_hit){d, s};
    }
    *n_hits = n;
}

sc_status sc_vec_knn(const sc_vec_field *vf, const sc_vec_knn_opts *o, sc_arena *a,
                     sc_hnsw_hit *hits, size_t *n_hits, bool *was_exact)
{
    *n_hits = 0;
    *was_exact = false;
    if (vf->n == 0 || o->k == 0)
        return SC_OK;
    const sc_vec_kernels *kern = sc_vec_kernels_get(SC_VEC_IMPL_AUTO);
    bool l2 = vf->p.sim == SC_VEC_SIM_L2;
    qscorer qs = {.base = {.score = score_f32, .prefetch = prefetch_f32},
                  .vf = vf,
                  .k = kern,
                  .f = l2 ? kern->l2sq_f32 : kern->dot_f32,
                  .sign = l2 ? -1.0f : 1.0f,
                  .q = o->query};
    uint32_t ef = o->num_candidates > o->k ? o->num_candidates : o->k;
    size_t n_rescore = SIZE_MAX; /* the best this many candidates are rescored */
    if (vf->codes && o->oversample > 0) {
        double r = ceil((double)o->k * (o->oversample < 1 ? 1.0 : (double)o->oversample));
        n_rescore = r > 100000 ? 100000 : (size_t)r;
        if (ef < n_rescore)
            ef = (uint32_t)n_rescore;
    } else if (vf->codes && ef < (uint64_t)o->k * SC_VEC_INT8_OVERSAMPLE) {
        ef = o->k * SC_VEC_INT8_OVERSAMPLE;
    }
    /* Elasticsearch hands Lucene num_candidates as its k: a filter accepting at most that
     * many docs is answered exactly (the graph would visit at least as many) */
    bool graph = vf->has_graph && !o->force_exact && !(o->accept && o->n_accept <= ef);
    if (vf->codes && graph) {
        float *qw = sc_arena_alloc(a, (size_t)vf->p.dims * sizeof(float));
        int16_t *qi = sc_arena_alloc(a, (size_t)vf->p.dims * sizeof(int16_t));
        if (!qw || !qi)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        double base = 0, norm = 0;
        float top = 0;
        for (uint32_t i = 0; i < vf->p.dims; i++) {
            qw[i] = o->query[i] * vf->qalpha[i];
            top = fmaxf(top, fabsf(qw[i]));
            base += (double)o->query[i] * vf->qlo[i];
            norm += (double)o->query[i] * o->query[i];
        }
        float scale = top > 0 ? top / 4095.0f : 0.0f;
        for (uint32_t i = 0; i < vf->p.dims; i++)
            qi[i] = (int16_t)(scale > 0 ? lrintf(fminf(fmaxf(qw[i] / scale, -4095), 4095)) : 0);
        qs.qi = qi;
        qs.qscale = scale;
        qs.qbase = (float)base;
        qs.qnorm = (float)norm;
    }
    if (graph) {
        sc_hnsw_scorer gs = qs.base;
        if (vf->codes)
            gs = (sc_hnsw_scorer){
                .score = score_i8, .prefetch = prefetch_i8, .score_many = score_i8_many};
        qscorer qg = qs;
        qg.base = gs;
        sc_hnsw_search_opts so = {.ef = ef,
                                  .accept = o->accept,
                                  .ord_doc = vf->docs,
                                  .visit_limit = o->accept ? o->n_accept : 0,
                                  .upper_beam = o->upper_beam < 0 ? 0
                                                : o->upper_beam > 0
                                                    ? (uint32_t)o->upper_beam
                                                    : SC_VEC_UPPER_BEAM(ef, vf->p.m)};
        uint64_t visited;
        bool incomplete;
        SC_TRY(sc_hnsw_search(&vf->graph, &qg.base, &so, a, hits, n_hits, &visited, &incomplete));
        if (o->n_scored)
            *o->n_scored += visited;
        if (!incomplete) {
            /* rescore int8 candidates (best first) with the raw floats, which are rarely in
             * cache: each vector's lines prefetched RESCORE_AHEAD vectors ahead */
            if (vf->codes && *n_hits > n_rescore)
                *n_hits = n_rescore;
            if (vf->codes)
                for (size_t i = 0; i < *n_hits && i < RESCORE_AHEAD; i++)
                    prefetch_vec(vf, hits[i].ord);
            for (size_t i = 0; i < *n_hits; i++) {
                if (vf->codes) {
                    if (i + RESCORE_AHEAD < *n_hits)
                        prefetch_vec(vf, hits[i + RESCORE_AHEAD].ord);
                    hits[i].score = score_f32(&qs.base, hits[i].ord);
                }
                hits[i].ord = vf->docs[hits[i].ord];
            }
            if (vf->codes)
                qsort(hits, *n_hits, sizeof(*hits), cmp_hit);
            if (*n_hits > o->k)
                *n_hits = o->k;
            return SC_OK;
        }
    }
    *was_exact = true;
    exact(vf, o, &qs, hits, n_hits);
    return SC_OK;
}
