/* sc_hll: the HyperLogLog++ cardinality sketch behind the `cardinality` aggregation, shaped as
 * Elasticsearch uses it: `precision_threshold` picks the precision p (4..18); a sketch first
 * counts "linearly" (a hash set of 32-bit encodings of the 64-bit value hashes, near-exact) and
 * switches to 2^p one-byte registers once the set holds more than 3 * 2^p / 16 encodings (3072 at
 * the default p = 14). The register estimate is Ertl's improved raw estimator (arXiv 1702.01284),
 * which needs no empirical bias tables; measured errors are in docs/aggregations-sketches.md.
 *
 * The state depends only on the SET of hashes added (not on order, duplicates or how they were
 * split across partial sketches), so merging partial sketches gives exactly the sketch of all
 * values. Values are hashed by the caller with sc_hll_hash_bytes / sc_hll_hash_u64.
 * Memory comes from an sc_arena (aggregations) or an sc_alloc_pool. Not thread-safe; distinct
 * sketches are independent. */
#ifndef SC_SEARCH_HLL_H
#define SC_SEARCH_HLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

#define SC_HLL_MIN_PRECISION 4
#define SC_HLL_MAX_PRECISION 18
#define SC_HLL_DEFAULT_PRECISION 14   /* ES's default, = threshold 3000 */
#define SC_HLL_DEFAULT_THRESHOLD 3000 /* ES's default precision_threshold */
#define SC_HLL_MAX_THRESHOLD 40000    /* larger thresholds behave as 40000 (p = 18) */
#define SC_HLL_ENCODING_VERSION 1

typedef struct sc_hll sc_hll;

/* The precision Elasticsearch derives from a precision_threshold t: the bits needed for
 * ceil(t / 0.75) * 4, clamped to [4, 18] (3000 -> 14, 40000 -> 18). Negative t counts as 0. */
uint32_t sc_hll_precision_for_threshold(int64_t threshold);

/* Creates an empty sketch of precision p (SC_HLL_MIN_PRECISION..SC_HLL_MAX_PRECISION). Its memory
 * comes from `arena` when not NULL (an aggregation's per-request memory: the arena's budget
 * counts every block, replaced blocks stay until the arena is freed, sc_hll_free is a no-op),
 * else from `pool` (NULL = the "search.hll" pool). An empty sketch holds only its header; the
 * linear-counting set grows with the values up to 2^p bytes, the registers take 2^p bytes.
 * *out is owned by the caller: free with sc_hll_free (pool) or with the arena.
 * SC_EINVAL for a bad precision, SC_ELIMIT (arena over budget), SC_ENOMEM. */
sc_status sc_hll_new(uint32_t precision, sc_alloc_pool *pool, sc_arena *arena, sc_hll **out)
    SC_MUST_USE;

/* Frees a sketch; NULL is a no-op. */
void sc_hll_free(sc_hll *h);

/* Adds one 64-bit value hash. Amortized O(1); may grow the set or switch to registers, so
 * SC_ENOMEM or SC_ELIMIT (arena budget) are possible: the sketch is then unchanged and valid. */
sc_status sc_hll_add(sc_hll *h, uint64_t hash) SC_MUST_USE;

/* Adds n hashes; as n calls of sc_hll_add but faster in register mode. On failure a prefix of
 * the hashes has been added (the sketch stays valid). */
sc_status sc_hll_add_batch(sc_hll *h, const uint64_t *hashes, size_t n) SC_MUST_USE;

/* Merges src into dst (the union of their sets). Works across modes: a linear dst takes src's
 * encodings (switching to registers if the union is too large); a register dst takes src's
 * encodings or the register-wise max. SC_EINVAL when the precisions differ (dst unchanged),
 * SC_ENOMEM / SC_ELIMIT (dst valid, possibly with part of src merged). O(size of src) or O(2^p). */
sc_status sc_hll_merge(sc_hll *dst, const sc_hll *src) SC_MUST_USE;

/* The estimated number of distinct hashes added. Linear mode: 2^31 * ln(2^31 / (2^31 - n)) over
 * the n distinct 31-bit encodings (exact unless two values share a 31-bit hash prefix);
 * register mode: Ertl's improved estimator, rounded. O(1) in linear mode, O(2^p) otherwise. */
uint64_t sc_hll_estimate(const sc_hll *h);

/* The sketch's precision p. */
uint32_t sc_hll_precision(const sc_hll *h);

/* True while the sketch counts linearly (before the switch to registers). */
bool sc_hll_is_linear(const sc_hll *h);

/* Heap bytes the sketch holds now (header, set or registers): what a breaker should charge. */
size_t sc_hll_mem_bytes(const sc_hll *h);

/* Appends the sketch's binary encoding (docs/aggregations-sketches.md) to out. Canonical: equal
 * sketches encode to equal bytes. SC_ENOMEM (out may hold a partial encoding). */
sc_status sc_hll_encode(const sc_hll *h, sc_buf *out) SC_MUST_USE;

/* Decodes exactly the bytes of `in` into a new sketch whose memory comes from `arena` or `pool`
 * as in sc_hll_new. Validates everything (magic, version, precision, mode, ordering and
 * validity of every encoding, register ranges, no trailing bytes): anything else is
 * SC_ECORRUPT, never a crash. SC_ENOMEM, SC_ELIMIT. *out is set only on SC_OK. */
sc_status sc_hll_decode(sc_slice in, sc_alloc_pool *pool, sc_arena *arena, sc_hll **out)
    SC_MUST_USE;

/* MurmurHash3 x64_128 of `len` bytes with `seed` (Austin Appleby's public algorithm, written
 * from its description): out[0] = h1, out[1] = h2. */
void sc_murmur3_x64_128(const void *key, size_t len, uint32_t seed, uint64_t out[2]);

/* The hash of a byte-string value (keyword, ip, text terms) as Elasticsearch computes it:
 * h1 of MurmurHash3 x64_128 with seed 0. */
uint64_t sc_hll_hash_bytes(sc_slice s);

/* The hash of a 64-bit value (long, date, boolean, and doubles as their IEEE bits): the
 * MurmurHash3 64-bit finalizer, a bijection, so distinct values never collide. (ES uses HPPC's
 * mix64 here; sketches are not exchanged with ES, so bit-compatibility is not needed.) */
uint64_t sc_hll_hash_u64(uint64_t v);

#endif
