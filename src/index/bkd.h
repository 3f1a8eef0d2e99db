/* Points: a 1-D BKD tree over int64 values (DESIGN.md §3 and lesson 4). Numeric, date and ip
 * fields arrive already encoded as sortable int64 (mapping: dates as epoch millis, doubles as
 * sortable longs), so one tree kind serves them all.
 *
 * Layout (little-endian; all offsets relative to the start of the buffer, so the segment
 * format can embed the buffer as one section):
 *   header  : magic "BKD1", u8 dims (1), u8 reserved[3], u32 leaf_size, u32 n_points,
 *             u32 n_leaves, u32 doc_bound (every doc id < doc_bound), u32 n_docs (distinct
 *             docs with a value), i64 min, i64 max, u32 n_nodes (power of two >= n_leaves)
 *   nodes   : 2 * n_nodes entries of (i64 min, i64 max), heap order (root at 1, children of
 *             i at 2i and 2i+1, leaf j at n_nodes + j); empty padding cells have min > max
 *   leafdir : (n_leaves + 1) u64 offsets of the encoded leaves
 *   leaves  : per leaf, points of [j*leaf_size, ...) of the (value, doc) order, re-sorted by
 *             doc inside the leaf:
 *             u8 doc_kind, u8 val_bits (0: every value equals the leaf min), u16 n,
 *             doc block, then n values (v - leaf min) bit-packed with val_bits bits + 8 pad
 *   doc kinds (the smallest that applies is chosen):
 *     RUN    : u32 first; the docs are first, first+1, ... (distinct, consecutive)
 *     BITSET : u32 base (multiple of 64), u16 n_words, n_words u64 words (distinct docs)
 *     D16    : u32 min, n u16 deltas     D24: u32 min, n 3-byte deltas     D32: n u32
 * A future 2-D (geo) tree gets dims 2 and its own node layout under the same header.
 *
 * The reader borrows the bytes (mmap) and checks every bound: corrupt input gives
 * SC_ECORRUPT, never a read out of bounds. A reader is immutable and thread-safe. */
#ifndef SC_INDEX_BKD_H
#define SC_INDEX_BKD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

#define SC_BKD_LEAF_SIZE 512

enum {
    SC_BKD_DOCS_RUN = 1,
    SC_BKD_DOCS_BITSET = 2,
    SC_BKD_DOCS_D16 = 3,
    SC_BKD_DOCS_D24 = 4,
    SC_BKD_DOCS_D32 = 5,
};

/* ---- writer ---------------------------------------------------------------------------- */

/* Builds the tree of n points (values[i], docs[i]) (any order; a doc may have several values,
 * each doc < doc_bound) and appends its encoding to *out. leaf_size 0 means SC_BKD_LEAF_SIZE
 * (tests use small ones to get deep trees); at most 65535. The input arrays are not
 * modified; temporary memory is O(n). */
sc_status sc_bkd_write(const int64_t *values, const uint32_t *docs, size_t n, uint32_t doc_bound,
                       uint32_t leaf_size, sc_buf *out) SC_MUST_USE;

/* ---- reader ---------------------------------------------------------------------------- */

typedef struct sc_bkd {
    /* private: a view over the borrowed bytes, filled by sc_bkd_open */
    const uint8_t *base;
    size_t len;
    uint32_t leaf_size;
    uint32_t n_points;
    uint32_t n_leaves;
    uint32_t doc_bound;
    uint32_t n_docs;
    uint32_t n_nodes;
    int64_t min, max;
    const uint8_t *nodes;   /* 2 * n_nodes * 16 bytes */
    const uint8_t *leafdir; /* (n_leaves + 1) * 8 bytes */
} sc_bkd;

/* Opens a tree over `bytes` (borrowed; must outlive the reader). Checks the header, the node
 * and directory bounds and that leaf offsets are increasing and inside the buffer (leaves
 * themselves are checked when decoded). SC_ECORRUPT on any inconsistency. */
sc_status sc_bkd_open(sc_slice bytes, sc_bkd *out) SC_MUST_USE;

static inline uint32_t sc_bkd_n_points(const sc_bkd *t)
{
    return t->n_points;
}
static inline uint32_t sc_bkd_n_docs(const sc_bkd *t)
{
    return t->n_docs;
}
static inline uint32_t sc_bkd_doc_bound(const sc_bkd *t)
{
    return t->doc_bound;
}
/* Smallest and largest value of the whole tree (meaningless when n_points is 0). */
static inline int64_t sc_bkd_min(const sc_bkd *t)
{
    return t->min;
}
static inline int64_t sc_bkd_max(const sc_bkd *t)
{
    return t->max;
}
/* True when every doc has at most one value (then point counts are doc counts). */
static inline bool sc_bkd_single_valued(const sc_bkd *t)
{
    return t->n_points == t->n_docs;
}

/* An upper bound of the number of points with lo <= v <= hi, from the tree alone (leaves
 * touched times their sizes): O(log n), no leaf is read. For cost-based planning. */
uint64_t sc_bkd_estimate(const sc_bkd *t, int64_t lo, int64_t hi);

/* Exact number of points with lo <= v <= hi, without materializing doc ids: inside leaves
 * count by their sizes, crossing leaves decode values only. Equals the number of matching
 * docs when sc_bkd_single_valued (and there are no deletes). */
sc_status sc_bkd_count(const sc_bkd *t, int64_t lo, int64_t hi, uint64_t *count) SC_MUST_USE;

/* Result of an intersection. */
typedef struct sc_bkd_stats {
    uint64_t points;        /* points added (a doc with two matching values counts twice) */
    uint32_t leaves_inside; /* leaves added whole, without comparing values */
    uint32_t leaves_crossing;
    bool terminated; /* stopped early because `limit` points were reached */
} sc_bkd_stats;

/* Sets the bit of every doc having a value in [lo, hi] in bs (bs->n_bits >= doc_bound, else
 * SC_EINVAL). Subtrees inside the range are added leaf by leaf without comparing values, doc
 * ids decoded in one tight loop straight into the bitset; crossing leaves decode values and
 * docs into buffers and compare in a batch. limit > 0: stop after the leaf at which `limit`
 * points were added (stats->terminated says so); leaves are visited in ascending value order.
 * stats may be NULL. */
sc_status sc_bkd_intersect(const sc_bkd *t, int64_t lo, int64_t hi, sc_bitset *bs, uint64_t limit,
                           sc_bkd_stats *stats) SC_MUST_USE;

/* Leaf access (tests, fuzzing, sort): number of leaves, the [min, max] cell of leaf j, and its
 * decoded points (docs ascending, values[i] the value of docs[i]; room for leaf_size each). */
static inline uint32_t sc_bkd_n_leaves(const sc_bkd *t)
{
    return t->n_leaves;
}
void sc_bkd_leaf_cell(const sc_bkd *t, uint32_t leaf, int64_t *min, int64_t *max);
/* The leaves [*first, *end) that can hold values in [lo, hi]: leaves ascend by value, so from
 * the first whose cell max >= lo to the last whose cell min <= hi (binary searches over the
 * cells; *first == *end when none can). */
void sc_bkd_leaf_span(const sc_bkd *t, int64_t lo, int64_t hi, uint32_t *first, uint32_t *end);
sc_status sc_bkd_leaf_read(const sc_bkd *t, uint32_t leaf, uint32_t *docs, int64_t *values,
                           uint32_t *n, uint8_t *doc_kind) SC_MUST_USE;
/* The number of points of leaf j (< n_leaves), from the header alone. */
uint32_t sc_bkd_leaf_count(const sc_bkd *t, uint32_t leaf);
/* Decodes only the values of leaf j (in the leaf's doc order, not sorted; room for leaf_size),
 * skipping its doc block: for value histograms over the leaves (aggregations' points path).
 * SC_EINVAL for a leaf out of range, SC_ECORRUPT for a damaged leaf. O(leaf_size). */
sc_status sc_bkd_leaf_values(const sc_bkd *t, uint32_t leaf, int64_t *values,
                             uint32_t *n) SC_MUST_USE;

/* Decodes one encoded leaf (as stored at a leaf offset) on its own: the fuzzing surface.
 * `leaf_min` is the leaf's cell min, docs must be < doc_bound, at most max_n points. */
sc_status sc_bkd_leaf_decode(sc_slice leaf, int64_t leaf_min, uint32_t doc_bound, uint32_t max_n,
                             uint32_t *docs, int64_t *values, uint32_t *n, uint8_t *doc_kind)
    SC_MUST_USE;

#endif
