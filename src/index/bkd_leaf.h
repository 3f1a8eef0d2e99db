/* Private to src/index: the parts of a BKD leaf that the 1-D tree (bkd.c) and the 2-D geo tree
 * (bkd2.c) share. A leaf's doc ids, sorted ascending, are one "doc block" of the smallest kind
 * that applies (SC_BKD_DOCS_* in bkd.h: RUN, BITSET, D16, D24, D32); its values are deltas from
 * the leaf's cell minimum, bit-packed with sc__packed_put (internal.h). Decoders check every
 * doc id against the tree's doc_bound (one max-reduction per leaf) and never read past the
 * block: corrupt input gives SC_ECORRUPT. */
#ifndef SC_INDEX_BKD_LEAF_H
#define SC_INDEX_BKD_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/internal.h"

/* Appends the doc block of docs[0..n) (ascending; n >= 1; a doc may repeat) to out and sets
 * *kind. SC_ENOMEM on allocation failure. O(n). */
sc_status sc__bkd_docs_put(const uint32_t *docs, uint32_t n, uint8_t *kind, sc_buf *out)
    SC_MUST_USE;

/* The byte length of the doc block of `kind` holding n docs that starts at p, with `avail`
 * bytes readable there. SC_ECORRUPT for an unknown kind or a block longer than avail. */
sc_status sc__bkd_docs_len(uint8_t kind, uint32_t n, const uint8_t *p, size_t avail, size_t *len)
    SC_MUST_USE;

/* Decodes a doc block (its length checked by sc__bkd_docs_len) into docs[0..n): one tight loop
 * per kind. SC_ECORRUPT when a doc is >= doc_bound or a bitset does not hold n docs. */
sc_status sc__bkd_docs_decode(uint8_t kind, const uint8_t *p, uint32_t n, uint32_t doc_bound,
                              uint32_t *docs) SC_MUST_USE;

/* Sets the bit of every doc of the block in bs (bs->n_bits >= doc_bound) without producing an
 * array when the kind allows (RUN: a range, BITSET: word ORs, D16: straight into the words);
 * scratch (room for n) is used by the other kinds. SC_ECORRUPT as sc__bkd_docs_decode. */
sc_status sc__bkd_docs_add(uint8_t kind, const uint8_t *p, uint32_t n, uint32_t doc_bound,
                           sc_bitset *bs, uint32_t *scratch) SC_MUST_USE;

/* Unpacks n deltas of `bits` bits (sc__packed_put layout, pad included in the readable
 * bytes) and adds base: 64-bit values (bits <= 64) and 32-bit values (bits <= 32; wraps in
 * uint32 arithmetic, the caller checks the range). */
void sc__bkd_unpack64(const uint8_t *p, uint32_t n, unsigned bits, int64_t base, int64_t *out);
void sc__bkd_unpack32(const uint8_t *p, uint32_t n, unsigned bits, int32_t base, int32_t *out);

/* ---- tree layout shared by both trees (header counts, node table, leaf directory) ---- */

/* Writer side: the node count of a tree of n_leaves leaves, the smallest power of two >=
 * n_leaves (1 for none). */
static inline uint32_t sc__bkd_node_count(uint32_t n_leaves)
{
    uint32_t n_nodes = 1;
    while (n_nodes < n_leaves)
        n_nodes <<= 1;
    return n_nodes;
}

/* Writer side: the number of distinct docs among docs[0..n) (each < doc_bound), into *n_docs.
 * SC_ENOMEM when the scratch bitset cannot be allocated. */
sc_status sc__bkd_count_docs(const uint32_t *docs, size_t n, uint32_t doc_bound, uint32_t *n_docs)
    SC_MUST_USE;

/* Checks the counts both tree headers carry and finds the node table (n_nodes * 32 bytes
 * right after the `header` bytes) and the leaf directory ((n_leaves + 1) * 8 bytes after it):
 * leaf_size in 1..65535, n_leaves = ceil(n_points / leaf_size), n_docs <= n_points and <=
 * doc_bound (and > 0 when there are points), n_nodes the smallest power of two >= n_leaves
 * (at most 2^27), everything inside the buffer, and leaf offsets non-decreasing from the end
 * of the directory up to the buffer's end. SC_ECORRUPT otherwise. */
sc_status sc__bkd_layout_check(sc_slice bytes, size_t header, uint32_t leaf_size, uint32_t n_points,
                               uint32_t n_leaves, uint32_t doc_bound, uint32_t n_docs,
                               uint32_t n_nodes, const uint8_t **nodes, const uint8_t **leafdir)
    SC_MUST_USE;

/* Number of points in leaf j: leaf_size, except the last leaf which holds the rest. */
static inline uint32_t sc__bkd_leaf_count(uint32_t j, uint32_t n_leaves, uint32_t leaf_size,
                                          uint32_t n_points)
{
    return j + 1 < n_leaves ? leaf_size : n_points - j * leaf_size;
}

/* The encoded bytes of leaf j, between its directory offset and the next one (checked by
 * sc__bkd_layout_check). */
static inline sc_slice sc__bkd_leaf_slice(const uint8_t *base, const uint8_t *leafdir, uint32_t j)
{
    uint64_t a = sc__ld64(leafdir + 8 * (size_t)j), b = sc__ld64(leafdir + 8 * (size_t)j + 8);
    return sc_slice_make(base + a, (size_t)(b - a));
}

#endif
