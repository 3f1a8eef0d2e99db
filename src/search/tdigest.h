/* sc_tdigest: the merging t-digest (Dunning) behind the `percentiles`, `percentile_ranks` and
 * `median_absolute_deviation` aggregations, shaped as Elasticsearch >= 8.9 uses it: every sample
 * is kept (exact, "sorting" phase) while the total weight is at most 20 * compression (2000 at
 * the default 100); past that the samples are replayed into a merging digest whose centroids are
 * bounded by the k1 scale function k(q) = compression / (2 pi) * asin(2q - 1) (each centroid spans
 * at most 1 in k), which keeps tails sharp. min and max are tracked exactly.
 *
 * Quantiles interpolate linearly between "knots": sample index 0 at min, each centroid's mean at
 * the index of its centre, total - 1 at max; in the exact phase this is numpy's default "linear"
 * percentile (index q * (n - 1)), as ES. cdf(x) is (weight below x + half the weight equal to x)
 * / total in the exact phase and the inverse of the knot map in the digest phase.
 * Measured errors are in docs/aggregations-sketches.md. Memory comes from an sc_arena
 * (aggregations) or an sc_alloc_pool. Not thread-safe (queries flush the buffer, so even reads need
 * exclusive access). */
#ifndef SC_SEARCH_TDIGEST_H
#define SC_SEARCH_TDIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

#define SC_TDIGEST_DEFAULT_COMPRESSION 100.0
#define SC_TDIGEST_MIN_COMPRESSION 1.0
#define SC_TDIGEST_MAX_COMPRESSION 100000.0
#define SC_TDIGEST_EXACT_FACTOR 20 /* exact while total weight <= 20 * compression */
#define SC_TDIGEST_ENCODING_VERSION 1

typedef struct sc_tdigest sc_tdigest;

/* Creates an empty digest with `compression` (SC_TDIGEST_MIN_COMPRESSION..MAX, not NaN). Its
 * memory comes from `arena` when not NULL (an aggregation's per-request memory: the budget
 * counts every block, replaced blocks stay until the arena is freed, sc_tdigest_free is a no-op),
 * else from `pool` (NULL = the "search.tdigest" pool). *out is owned by the caller: free with
 * sc_tdigest_free (pool) or with the arena. SC_EINVAL for a bad compression, SC_ELIMIT (arena
 * over budget), SC_ENOMEM. */
sc_status sc_tdigest_new(double compression, sc_alloc_pool *pool, sc_arena *arena, sc_tdigest **out)
    SC_MUST_USE;

/* Frees a digest; NULL is a no-op. */
void sc_tdigest_free(sc_tdigest *t);

/* Adds value x with integer weight w (w copies of x). SC_EINVAL when x is not finite or w is 0
 * (the digest is unchanged; callers skip such values), SC_ELIMIT when the total weight would
 * overflow 64 bits or the arena is over budget, SC_ENOMEM. Amortized O(log compression). */
sc_status sc_tdigest_add(sc_tdigest *t, double x, uint64_t w) SC_MUST_USE;

/* Adds n values of weight 1; stops at the first failure (a prefix has been added). */
sc_status sc_tdigest_add_batch(sc_tdigest *t, const double *xs, size_t n) SC_MUST_USE;

/* Merges src into dst at dst's compression (ES reduces merge into the digest of the larger
 * compression: the caller picks dst). Exact + exact stays exact while the total allows. src is
 * not modified. SC_ELIMIT on weight overflow or arena budget, SC_ENOMEM (dst unchanged). */
sc_status sc_tdigest_merge(sc_tdigest *dst, const sc_tdigest *src) SC_MUST_USE;

/* The value at quantile q in [0, 1] (clamped; q <= 0 is min, q >= 1 is max); NaN when empty or q
 * is NaN. Flushes the buffer first (O(buffer log buffer)), then O(centroids). */
double sc_tdigest_quantile(sc_tdigest *t, double q);

/* The fraction of the weight at or below x, in [0, 1], with ties counted half (see above); NaN
 * when empty or x is NaN. Flushes the buffer first, then O(centroids). */
double sc_tdigest_cdf(sc_tdigest *t, double x);

/* Elasticsearch's median_absolute_deviation of the digest: the median m, then the median of a
 * digest (same compression) of |mean - m| over the centroids with their weights; exact (numpy's
 * median of |x - median(x)|) in the exact phase. *out is NaN when empty. Flushes t; allocates a
 * temporary digest from t's pool (SC_ENOMEM). O(centroids log centroids). */
sc_status sc_tdigest_mad(sc_tdigest *t, double *out) SC_MUST_USE;

/* Total weight added. */
uint64_t sc_tdigest_count(const sc_tdigest *t);

/* Exact smallest and largest values added; NaN when empty. */
double sc_tdigest_min(const sc_tdigest *t);
double sc_tdigest_max(const sc_tdigest *t);

double sc_tdigest_compression(const sc_tdigest *t);

/* True while every sample is kept (the exact phase). */
bool sc_tdigest_is_exact(const sc_tdigest *t);

/* Number of centroids (samples in the exact phase, as distinct weighted entries) after a flush. */
size_t sc_tdigest_n_centroids(sc_tdigest *t);

/* The i-th centroid in mean order (0 <= i < sc_tdigest_n_centroids(t), which flushes; valid
 * until the next add or merge). In the exact phase the entries are samples with their
 * multiplicity. For median_absolute_deviation: a digest of |mean - median| with these weights. */
void sc_tdigest_centroid(const sc_tdigest *t, size_t i, double *mean, uint64_t *weight);

/* Heap bytes held now (header and centroid/buffer array): what a breaker should charge. */
size_t sc_tdigest_mem_bytes(const sc_tdigest *t);

/* Flushes the buffer and appends the binary encoding (docs/aggregations-sketches.md) to out.
 * Decoding the bytes and encoding again gives the same bytes. SC_ENOMEM (out may hold a partial
 * encoding). */
sc_status sc_tdigest_encode(sc_tdigest *t, sc_buf *out) SC_MUST_USE;

/* Decodes exactly the bytes of `in` into a new digest whose memory comes from `arena` or `pool`
 * as in sc_tdigest_new. Validates magic, version, flags, compression, finite sorted means within
 * [min, max], non-zero weights without overflow, the exact-phase limit, canonical varints and no
 * trailing bytes: anything else is SC_ECORRUPT, never a crash. SC_ENOMEM, SC_ELIMIT. *out is
 * set only on SC_OK. */
sc_status sc_tdigest_decode(sc_slice in, sc_alloc_pool *pool, sc_arena *arena, sc_tdigest **out)
    SC_MUST_USE;

#endif
