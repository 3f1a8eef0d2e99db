/* The vectors of one dense_vector field in one segment (docs/format.md, "Vectors"): the
 * section writer (raw floats, optional int8 codes with per-dimension quantile bounds, optional
 * HNSW graph) and its reader, plus the per-segment kNN: graph search (int8 codes rescored with
 * the raw floats), exact scan, and Lucene's filtered-search rule (exact when the filter
 * accepts at most num_candidates docs or when the graph visits more nodes than the filter
 * accepts). */
#ifndef SC_INDEX_VECFIELD_H
#define SC_INDEX_VECFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/doc.h"
#include "index/hnsw.h"
#include "index/segment.h"

#define SC_VEC_SECTION_HEADER 64
/* An int8 graph search collects at least this many times k candidates by quantized score
 * before rescoring them with the raw floats (Elasticsearch's default rescore oversample). */
#define SC_VEC_INT8_OVERSAMPLE 3u
/* The default width of the beam on HNSW level 1 for a search beam of ef and m links per node
 * (sc_hnsw_search_opts.upper_beam): half the beam, at most 2m. On 100k x 128 vectors
 * (docs/benchmarks.md, "level-1 beam") wider level-1 beams found the same neighbours for more
 * nodes scored (width 200 at ef 200: 1,661 nodes per query against 1,212 for width 16, recall
 * 0.998 both), narrower ones lost recall at small ef. */
#define SC_VEC_UPPER_BEAM(ef, m) ((ef) / 2 > 2 * (m) ? 2 * (m) : (ef) / 2 > 1 ? (ef) / 2 : 1u)

/* A read-only view of a field's vectors (the segment's mapped bytes or a builder's arrays). */
typedef struct sc_vec_field {
    sc_vec_params p;
    uint32_t n;           /* vectors (docs with a value) */
    const uint32_t *docs; /* ordinal -> doc, strictly increasing */
    const float *vecs;    /* n * dims */
    const int8_t *codes;  /* int8 types: n * dims codes 0..127, else NULL (also for the
                             version-1 sections of format 8, searched with the raw floats) */
    const float *corr;    /* with codes: |decoded vector|^2 per vector (l2_norm scoring) */
    const float *qlo;     /* with codes: per-dimension bottom of the range (dims floats) */
    const float *qalpha;  /* with codes: per-dimension step, decoded = qlo + qalpha * code */
    bool has_graph;
    sc_hnsw_graph graph;
} sc_vec_field;

/* Writes the section for n vectors (docs ascending, vecs n * dims) into out; seed (may be
 * NULL) is an existing graph of the same m over ordinals [seed_base, seed_base + seed->n),
 * whose vectors must be those ordinals' (a merge's largest input): the other vectors are
 * inserted into it instead of building from scratch. SC_ENOMEM, SC_EINVAL. */
sc_status sc_vec_section_write(const sc_vec_params *p, const uint32_t *docs, const float *vecs,
                               uint32_t n, const sc_hnsw_graph *seed, uint32_t seed_base,
                               sc_buf *out) SC_MUST_USE;

/* The same section written straight to a segment file (struct sc__out, index/internal.h):
 * the vectors contiguous in vecs, or, when vecs is NULL, one pointer per ordinal in ptrs (a
 * merge's vectors read in place from its mapped inputs, so they are not copied). *len gets the
 * section's length. Memory besides the inputs: the HNSW graph being built (hnsw.c's builder:
 * about 19 + 8 m bytes per vector, plus (1 + m) * 4 bytes per upper-level node) and
 * QUANTILE_SAMPLE floats for the int8 bounds; no copy of the vectors, codes or graph. */
struct sc__out;
sc_status sc__vec_section_stream(const sc_vec_params *p, const uint32_t *docs, const float *vecs,
                                 const float *const *ptrs, uint32_t n, const sc_hnsw_graph *seed,
                                 uint32_t seed_base, struct sc__out *o, uint64_t *len) SC_MUST_USE;

/* Parses and checks a section (bytes 4-aligned) of a segment with n_docs docs into *out
 * (a view borrowing bytes). SC_ECORRUPT with a short reason in *why. O(n m) (graph check). */
sc_status sc_vec_section_open(sc_slice bytes, uint32_t n_docs, sc_vec_field *out, const char **why)
    SC_MUST_USE;

/* The vectors of VECTOR field f of seg (validated at open, so this only lays out the view: O(1)
 * plus the dims quantization ranges, called per search). SC_ENOTFOUND when none. */
sc_status sc_segment_vectors(const sc_segment *seg, const sc_field_info *f, sc_vec_field *out)
    SC_MUST_USE;

/* The "higher is closer" similarity used everywhere: -squared distance for l2_norm, the dot
 * product otherwise (vectors and query are normalized for cosine). */
float sc_vec_similarity(const sc_vec_params *p, const float *a, const float *b);

/* Elasticsearch's _score for a similarity sc_vec_similarity returned. */
float sc_vec_score(const sc_vec_params *p, float sim);

/* Whether sim passes a knn `similarity` threshold given in Elasticsearch's raw units
 * (distance for l2_norm, cosine / dot product otherwise). */
bool sc_vec_similarity_ok(const sc_vec_params *p, float sim, float threshold);

/* What a kNN search of one segment needs. */
typedef struct sc_vec_knn_opts {
    const float *query;      /* dims floats, normalized for cosine */
    uint32_t k;              /* hits wanted */
    uint32_t num_candidates; /* graph beam (>= k) */
    const uint64_t *accept;  /* bitset over docs (filter and live docs), NULL = every doc */
    uint64_t n_accept;       /* docs set in accept (ignored when NULL) */
    bool force_exact;        /* always scan */
    uint64_t *n_scored;      /* optional out: graph nodes scored, added to (benchmarks) */
    int32_t upper_beam;      /* level-1 beam width (sc_hnsw_search_opts): 0 = the default,
                              * SC_VEC_UPPER_BEAM(ef, m); < 0 = none, the paper's greedy descent
                              * (benchmarks and tests compare the two) */
    float oversample;        /* int8 types, as Elasticsearch's rescore_vector.oversample (>= 1):
                              * the beam is max(num_candidates, ceil(k oversample)) and only the
                              * best ceil(k oversample) candidates by quantized score are
                              * rescored with the raw floats. 0 = scry's default: a beam of at
                              * least SC_VEC_INT8_OVERSAMPLE k, every candidate rescored */
} sc_vec_knn_opts;

/* The best min(k, matches) accepted docs of the field, best first: hits[i].ord is the DOC id,
 * hits[i].score the similarity (sc_vec_similarity units; exact, int8 candidates rescored).
 * hits needs room for max(SC_VEC_INT8_OVERSAMPLE * k, ceil(oversample * k),
 * num_candidates). *exact says whether a scan
 * answered. Scratch from a. SC_ENOMEM / SC_ELIMIT. */
sc_status sc_vec_knn(const sc_vec_field *vf, const sc_vec_knn_opts *o, sc_arena *a,
                     sc_hnsw_hit *hits, size_t *n_hits, bool *exact) SC_MUST_USE;

#endif
