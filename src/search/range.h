/* Range and term/terms queries over one segment's NUMERIC field (numeric, date, ip, boolean:
 * all encoded as sortable int64 by src/mapping), as doc-id iterators (search/iter.h).
 *
 * Two ways to answer (Lucene's IndexOrDocValuesQuery, ES's "index or doc values" choice):
 * - points: the BKD tree (index/bkd.h) is intersected once into a per-query bitset (inside
 *   leaves added whole, doc ids decoded in bulk) and served by the bitset iterator kind;
 * - doc values: a lazy "dv_range" iterator that checks each candidate doc's values; cheap when
 *   another required clause leads with few docs (it is only advanced to those).
 * sc_range_iter chooses by cost when both exist: doc values when the points estimate exceeds
 * 8 times the lead cost, points otherwise (Lucene's threshold).
 *
 * Ranges are inclusive [lo, hi] over the encoded values (the caller turns gt/lt into
 * inclusive bounds on the encoding, e.g. gt x -> x + 1; lo > hi matches nothing). Several
 * ranges are OR-ed: `terms` on a numeric field is n ranges [v, v]. */
#ifndef SC_SEARCH_RANGE_H
#define SC_SEARCH_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bitset.h"
#include "base/status.h"
#include "index/bkd.h"
#include "index/docvalues.h"
#include "search/iter.h"

/* One segment's view of a numeric field. Either pointer may be NULL (no points / no doc
 * values); both are borrowed for the life of the iterators built from them. */
typedef struct sc_range_source {
    const sc_bkd *bkd;
    const sc_dv_numeric *dv;
    uint32_t n_docs; /* the segment's doc count (max doc) */
} sc_range_source;

typedef enum sc_range_strategy {
    SC_RANGE_AUTO,        /* by cost (see above) */
    SC_RANGE_POINTS,      /* points if present, else doc values */
    SC_RANGE_DOC_VALUES,  /* doc values if present, else points */
    SC_RANGE_POINTS_LIST, /* points (if present) into a sorted doc list whatever the estimate
                             (AUTO and POINTS do so below n_docs / 128 estimated matches) */
} sc_range_strategy;

/* Builds the iterator over docs having at least one value in any [lo[i], hi[i]] (n >= 1; the
 * arrays are copied). lead_cost: the cost of the cheapest other required clause of the same
 * conjunction, or UINT64_MAX when this query leads. Matching docs score `score`. Deletes are
 * not applied (wrap with sc_iter_live_docs). When neither points nor doc values exist the
 * iterator matches nothing. *used_points (may be NULL) tells which way was chosen.
 * SC_ENOMEM on arena exhaustion; SC_ECORRUPT from a corrupt BKD leaf. */
sc_status sc_range_iter(sc_arena *a, const sc_range_source *src, const int64_t *lo,
                        const int64_t *hi, size_t n, uint64_t lead_cost, float score,
                        sc_range_strategy strategy, sc_doc_iter **out, bool *used_points)
    SC_MUST_USE;

/* The docs having a value in any [lo[i], hi[i]] (n ranges) from the points alone, ascending
 * and distinct, in *docs (arena; *n_out of them): the leaves overlapping each range are found
 * by a binary search over the leaf cells and decoded. est: the expected count (sizes the
 * array; sc_bkd_estimate). For ranges matching few docs, where a segment-wide bitset would
 * cost more than the matches. SC_ENOMEM; SC_ECORRUPT from a damaged leaf. */
sc_status sc_range_points_docs(sc_arena *a, const sc_bkd *t, const int64_t *lo, const int64_t *hi,
                               size_t n, uint64_t est, uint32_t **docs, size_t *n_out) SC_MUST_USE;

/* The doc-values iterator alone (tests, and callers that know they lead with few docs). */
sc_doc_iter *sc_iter_dv_range(sc_arena *a, const sc_dv_numeric *dv, uint32_t n_docs,
                              const int64_t *lo, const int64_t *hi, size_t n, float score);

/* A lone range in a top-k search with a bounded total (track_total_hits N or false): counts
 * the segment's matches up to about `limit` (live docs applied; 0: no count) and returns in
 * *hits an iterator over the matches in doc order (every doc scores `score`; deletes NOT
 * applied to it) of which the caller takes the first k. Chosen per segment by cost, as
 * Lucene's IndexOrDocValuesQuery does: a lazy doc-values scan that stops after the first k
 * hits when, at the points' estimated density, that checks fewer docs than the range has
 * matches; otherwise the points intersected into a bitset, which also gives the exact count
 * (then *count may exceed limit). Both give the same docs. *used_points (may be NULL) tells
 * which. SC_ENOTFOUND when the field lacks points or doc values in this segment. */
sc_status sc_range_segment_bounded(sc_arena *a, const sc_segment *seg, sc_slice field, int64_t lo,
                                   int64_t hi, const sc_bitset *live, uint64_t limit, uint64_t k,
                                   float score, uint64_t *count, sc_doc_iter **hits,
                                   bool *used_points) SC_MUST_USE;

/* Counts the docs having a value in [lo, hi] that are live (live may be NULL: no deletes).
 * Without deletes on a single-valued field this reads no doc ids at all (sc_bkd_count).
 * limit > 0: may stop early (after `limit` matching points, before deletes are applied);
 * *exact (may be NULL) is false then and *count is a lower bound (ES's total relation "gte").
 * Falls back to a doc-values scan when there are no points. */
sc_status sc_range_count(const sc_range_source *src, int64_t lo, int64_t hi, const sc_bitset *live,
                         uint64_t limit, uint64_t *count, bool *exact) SC_MUST_USE;

/* The range iterator of field `field` in segment seg (its points when the field has them, its
 * numeric doc values otherwise, chosen by cost when both): NULL in *out when the segment has
 * no such numeric field. SC_EINVAL when the field exists but is not numeric (err names it).
 * needed > 0: the consumer stops after about `needed` matches (bounded totals, early
 * termination); then a lazy doc-values scan is chosen when finding that many (at the points'
 * estimated density) costs less than a quarter of materializing every match. */
sc_status sc_range_segment_iter(sc_arena *a, const sc_segment *seg, sc_slice field,
                                const int64_t *lo, const int64_t *hi, size_t n, uint64_t lead_cost,
                                uint64_t needed, float score, sc_doc_iter **out, char *err,
                                size_t err_cap) SC_MUST_USE;

/* The exact count of docs of seg with a value of `field` in [lo, hi] from the points alone
 * (no doc ids read: sc_bkd_count), when that is exact: the field has points, is single-valued
 * in this segment, and the caller has no deletes to apply. *done false otherwise (count some
 * other way). */
sc_status sc_range_segment_count(const sc_segment *seg, sc_slice field, int64_t lo, int64_t hi,
                                 uint64_t *count, bool *done) SC_MUST_USE;

/* Lucene's PointRangeQuery "inverse" intersection: when every doc of seg has exactly one value
 * of `field` (its points are single-valued and cover all sc_segment_n_docs docs) and the points
 * estimate at most n_docs / 16 docs outside [lo, hi], the docs outside it, ascending and
 * distinct, in *out (arena; *n_out; none when [lo, hi] covers the points' [min, max]: the
 * range matches every doc), and *done = true. The matches are then every doc but those (deletes
 * not applied). *done false otherwise (intersect the range as usual). SC_ENOMEM; SC_ECORRUPT. */
sc_status sc_range_segment_excluded(sc_arena *a, const sc_segment *seg, sc_slice field, int64_t lo,
                                    int64_t hi, uint32_t **out, size_t *n_out, bool *done)
    SC_MUST_USE;

/* Inclusive bounds from ES's gt/gte/lt/lte on encoded values: has_lo/has_hi false = open;
 * lo_incl/hi_incl false = strict. Returns false when the range is empty (e.g. gt INT64_MAX). */
bool sc_range_bounds(bool has_lo, int64_t lo, bool lo_incl, bool has_hi, int64_t hi, bool hi_incl,
                     int64_t *out_lo, int64_t *out_hi);

#endif
