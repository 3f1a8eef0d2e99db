/* Doc values readers (columnar per-doc values, for sort, aggregations, docvalue_fields):
 * numeric (sorted multi-valued int64 per doc, stored as min + GCD + bit-packed deltas) and
 * sorted-set (keyword ordinals: a sorted, deduplicated term table and per-doc ascending ords).
 * The reader structs are small views over the mmapped file, filled without allocation and
 * validated when the segment was opened; reads are O(1) random access. Thread-safe. */
#ifndef SC_INDEX_DOCVALUES_H
#define SC_INDEX_DOCVALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/segment.h"

typedef struct sc_dv_numeric {
    /* private */
    uint32_t n_docs;
    uint64_t n_values;
    int64_t min;
    uint64_t gcd;
    uint8_t bits;        /* per value */
    uint8_t off_bits;    /* per doc start offset */
    bool single;         /* one value per doc: no offs, value i is doc i's */
    const uint8_t *offs; /* (n_docs + 1) start offsets, bit-packed */
    const uint8_t *vals; /* n_values packed */
} sc_dv_numeric;

typedef struct sc_dv_sorted_set {
    /* private */
    uint32_t n_docs;
    uint64_t n_ords;
    uint64_t n_values;
    uint8_t ord_bits;
    uint8_t off_bits;
    bool single;      /* at most one ord per doc: ords holds ord + 1 per doc (0 = none), no offs */
    uint8_t rel_bits; /* v11 term offsets: width of term_rel (0 with term_offs) */
    const uint8_t *term_offs; /* before v11: (n_ords + 1) u32 offsets into term_bytes */
    const uint8_t *term_rel;  /* v11: (n_ords + 1) packed offsets from term_base[ord / 16] */
    const uint8_t *term_base; /* v11: (n_ords / 16 + 1) u32 offsets into term_bytes */
    const uint8_t *term_bytes;
    const uint8_t *offs; /* (n_docs + 1) packed starts into ords */
    const uint8_t *ords; /* n_values packed (single: n_docs) */
} sc_dv_sorted_set;

/* Opens the numeric doc values of field f. SC_ENOTFOUND when the field has none. */
sc_status sc_dv_numeric_open(const sc_segment *seg, const sc_field_info *f, sc_dv_numeric *out)
    SC_MUST_USE;
/* Number of values of doc (0 when none). */
uint32_t sc_dv_numeric_count(const sc_dv_numeric *dv, uint32_t doc);
/* Writes up to max values of doc in ascending order; returns the number written. */
size_t sc_dv_numeric_get(const sc_dv_numeric *dv, uint32_t doc, int64_t *out, size_t max);
/* The smallest value of doc in *out; false when the doc has none. */
bool sc_dv_numeric_first(const sc_dv_numeric *dv, uint32_t doc, int64_t *out);

/* Opens the sorted-set doc values of (keyword) field f. SC_ENOTFOUND when none. */
sc_status sc_dv_sorted_set_open(const sc_segment *seg, const sc_field_info *f,
                                sc_dv_sorted_set *out) SC_MUST_USE;
static inline uint64_t sc_dv_sorted_set_n_ords(const sc_dv_sorted_set *dv)
{
    return dv->n_ords;
}
/* The term of `ord` (< n_ords); valid while the segment is referenced. */
sc_slice sc_dv_sorted_set_term(const sc_dv_sorted_set *dv, uint64_t ord);
/* Ord of `term`: true and *ord when present. O(log n_ords). */
bool sc_dv_sorted_set_lookup(const sc_dv_sorted_set *dv, sc_slice term, uint64_t *ord);
/* Number of ords of doc. */
uint32_t sc_dv_sorted_set_count(const sc_dv_sorted_set *dv, uint32_t doc);
/* Writes up to max ords of doc ascending; returns the number written. */
size_t sc_dv_sorted_set_ords(const sc_dv_sorted_set *dv, uint32_t doc, uint64_t *out, size_t max);
/* Cache hints for a fetch of a few scattered docs: start loading doc's ordinals (the start offset
 * when the field is multi-valued), or the offsets of ord's term, so that the loads of many docs
 * overlap instead of each waiting on its own cache miss. No effect on results. */
void sc_dv_sorted_set_prefetch_doc(const sc_dv_sorted_set *dv, uint32_t doc);
void sc_dv_sorted_set_prefetch_term(const sc_dv_sorted_set *dv, uint64_t ord);

/* ---- readers over values computed in memory (runtime fields, search/runtime.h) ---- */

/* A numeric reader over n_docs docs whose values were computed by the caller: doc d's values
 * are vals[offs[d] .. offs[d + 1]) in ascending order (offs NULL: exactly one value per doc,
 * vals[d]). vals (n_values cells) is rewritten in place to the reader's little-endian layout;
 * offs, when given, has n_docs + 1 entries followed by 8 spare bytes (n_docs + 3 cells), and
 * is rewritten likewise. Both are borrowed by *out for its life. O(n_values + n_docs). */
void sc_dv_numeric_wrap(uint32_t n_docs, int64_t *vals, uint64_t n_values, uint32_t *offs,
                        sc_dv_numeric *out);
/* A sorted-set reader over n_docs docs with computed terms: doc d's terms are
 * terms[offs[d] .. offs[d + 1]) in any order, duplicates allowed (the terms' bytes are copied).
 * The term table, ords and offsets are built in `a`. SC_ENOMEM / SC_ELIMIT (arena budget),
 * SC_EINVAL when the term bytes exceed 4 GiB. O(n log n) in the number of terms. */
sc_status sc_dv_sorted_set_build(sc_arena *a, uint32_t n_docs, const sc_slice *terms,
                                 const uint32_t *offs, sc_dv_sorted_set *out) SC_MUST_USE;

/* ---- bulk reads for aggregations (a window of docs at a time) ---- */

/* Whether every doc has exactly one value (then sc_dv_numeric_get_single_batch applies). */
static inline bool sc_dv_numeric_is_single(const sc_dv_numeric *dv)
{
    return dv->single;
}
/* The value of each of docs[0..n) (< n_docs) into out; requires sc_dv_numeric_is_single.
 * One tight loop, no call per doc; a run of consecutive docs is unpacked in order, 8 values
 * per step for the common bit widths. */
void sc_dv_numeric_get_single_batch(const sc_dv_numeric *dv, const uint32_t *docs, size_t n,
                                    int64_t *out);
/* A range holding every value of dv, [*lo, *lo + *span], from its header (min, gcd, bit width):
 * each value is lo + p * gcd with p < 2^bits, so value - lo (in uint64) is at most *span.
 * False when the range does not fit in an int64. O(1). */
bool sc_dv_numeric_range(const sc_dv_numeric *dv, int64_t *lo, uint64_t *span);
/* Whether every doc has at most one ord (then sc_dv_sorted_set_single_batch applies). */
static inline bool sc_dv_sorted_set_is_single(const sc_dv_sorted_set *dv)
{
    return dv->single;
}
/* ord + 1 of each of docs[0..n) (< n_docs), 0 for a doc without a value, into out; requires
 * sc_dv_sorted_set_is_single. */
void sc_dv_sorted_set_single_batch(const sc_dv_sorted_set *dv, const uint32_t *docs, size_t n,
                                   uint32_t *out);
/* Adds 1 to counts[ord + 1] for every ord of each doc of docs[0..n) (< n_docs), and to
 * counts[0] for each doc without one: the counting loop of a terms aggregation. counts has
 * n_ords + 1 cells. */
void sc_dv_sorted_set_count_batch(const sc_dv_sorted_set *dv, const uint32_t *docs, size_t n,
                                  uint32_t *counts);

#endif
