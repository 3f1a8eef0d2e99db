/* Top-k collection sorted by fields (Elasticsearch `sort`): numeric doc values (long, date,
 * double in the sortable encoding, ...), keyword sorted-set ordinals (resolved to their terms,
 * so values compare across segments), `_score` and `_doc`; asc/desc; `missing` _first/_last;
 * `mode` min/max/avg/sum for multi-valued fields; `search_after`.
 *
 * Use: sc_sort_collector_new once per shard search, sc_sort_collector_collect once per segment
 * (in segment order, with the segment's shard-global doc base and the query's iterator for that
 * segment, already filtered by live docs), then sc_sort_collector_hits.
 *
 * Skipping: when the first sort field is numeric, the caller may pass the segment's points
 * (BKD) for that field. Then a segment whose [min, max] cannot beat the current k-th hit is
 * skipped whole, and inside a segment, once the heap is full, the collector builds a
 * "competitive" bitset from the BKD (docs having a value that can still enter the top k) and
 * leapfrogs the query iterator over it (Lucene's competitive iterator), refreshed as the k-th
 * value tightens. Skipping is disabled when missing values sort first. The number of matching
 * docs is then not known: callers that need totals count separately (sc_search_count).
 *
 * Values borrowed from segments (keyword terms) stay valid while the segments are referenced.
 * Single-threaded; memory from the arena given to _new. */
#ifndef SC_SEARCH_SORT_H
#define SC_SEARCH_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/bkd.h"
#include "index/segment.h"
#include "search/iter.h"

typedef enum sc_sort_by {
    SC_SORT_BY_SCORE,   /* _score (the iterator must score) */
    SC_SORT_BY_DOC,     /* _doc: shard-global doc id */
    SC_SORT_BY_NUMERIC, /* numeric doc values of `field` */
    SC_SORT_BY_KEYWORD, /* sorted-set doc values of `field`, compared by term bytes */
} sc_sort_by;

typedef enum sc_sort_mode {
    SC_SORT_MODE_AUTO, /* ES default: min for asc, max for desc */
    SC_SORT_MODE_MIN,
    SC_SORT_MODE_MAX,
    SC_SORT_MODE_AVG, /* numeric only; compared as double */
    SC_SORT_MODE_SUM, /* numeric only; compared as double */
} sc_sort_mode;

typedef struct sc_sort_spec {
    sc_sort_by kind;
    sc_slice field; /* NUMERIC / KEYWORD */
    bool desc;
    bool missing_first; /* ES `missing: _first` (default _last, whatever the order) */
    sc_sort_mode mode;
    bool is_double; /* NUMERIC: values are doubles in the sortable-long encoding (avg/sum
                       decode them first) */
    /* NUMERIC / KEYWORD: the `nested` path of the field (empty: none); a root's values are
     * then those of its nested children (index/nested.c blocks), `mode` over all of them */
    sc_slice nested_path;
} sc_sort_spec;

/* One sort value of a hit. Which member is meaningful depends on the spec: `i` for NUMERIC with
 * min/max and for _doc, `d` for _score and NUMERIC avg/sum, `s` for KEYWORD. */
typedef struct sc_sort_key {
    bool missing;
    int64_t i;
    double d;
    sc_slice s;
} sc_sort_key;

typedef struct sc_sorted_hit {
    uint32_t segment; /* index given to collect */
    uint32_t doc;     /* segment-local */
    uint64_t global_doc;
    float score;               /* 0 unless a spec is _score */
    const sc_sort_key *values; /* n_specs values (arena) */
} sc_sorted_hit;

typedef struct sc_sort_stats {
    uint64_t collected;          /* docs whose sort values were read */
    uint32_t segments_skipped;   /* by points min/max */
    uint32_t competitive_builds; /* competitive sets built from points (bitsets or lists) */
    uint32_t competitive_lists;  /* of which sorted doc lists (few competitive docs) */
    uint64_t docs_skipped;       /* doc ids jumped over by leapfrogging the competitive
                                    bitset (matching or not) */
} sc_sort_stats;

typedef struct sc_sort_collector sc_sort_collector;

/* A collector of the best k hits under specs[0..n) (copied), ties by global doc ascending.
 * search_after: n values (copied; keyword bytes must outlive the collector) or NULL; only hits
 * sorting strictly after it are kept. SC_EINVAL for n == 0, k == 0 or a bad mode; SC_ENOMEM. */
sc_status sc_sort_collector_new(sc_arena *a, const sc_sort_spec *specs, size_t n, size_t k,
                                const sc_sort_key *search_after, sc_sort_collector **out)
    SC_MUST_USE;

/* Collects the docs of `it` (fresh, unpositioned; live docs already applied) of segment `seg`
 * (index seg_index, shard-global ids doc_base + doc). points: the BKD of specs[0].field in this
 * segment when specs[0] is NUMERIC and the field has points, else NULL. */
sc_status sc_sort_collector_collect(sc_sort_collector *c, const sc_segment *seg, uint32_t seg_index,
                                    uint64_t doc_base, sc_doc_iter *it, const sc_bkd *points)
    SC_MUST_USE;

/* Points prune (skip docs that cannot enter the top k) only once n docs were collected, so
 * that the first n matches are all counted (track_total_hits: n - 1 -> a total of at least
 * n - 1, relation gte). Default 0: prune as soon as the top k is full. */
void sc_sort_collector_prune_after(sc_sort_collector *c, uint64_t n);

/* The hits best first (at most k) in *hits (arena memory); returns how many. May be called
 * once, after the last collect. */
size_t sc_sort_collector_hits(sc_sort_collector *c, sc_sorted_hit **hits);

/* Counters (for tests and profiles). */
const sc_sort_stats *sc_sort_collector_stats(const sc_sort_collector *c);

/* track_scores: every collected doc is scored (the iterator must score) and the best score
 * kept; call before the first collect. sc_sort_collector_max_score: that best (NAN: none). */
void sc_sort_collector_track_scores(sc_sort_collector *c);
float sc_sort_collector_max_score(const sc_sort_collector *c);

/* Compares two value tuples under specs (ties not broken): <0 when a sorts first. */
int sc_sort_compare(const sc_sort_spec *specs, size_t n, const sc_sort_key *a,
                    const sc_sort_key *b);

/* ---- whole-shard sorted search ----------------------------------------------------------- */

#include "search/query.h"
#include "search/searcher.h"

typedef struct sc_sorted_result {
    sc_sorted_hit *hits; /* the `size` hits after `from`, best first (arena) */
    size_t n_hits;
    uint64_t total; /* matching live docs (see total_gte); 0 when not tracked */
    bool total_gte; /* more than `total` match (track_total_hits N reached) */
    bool total_tracked;
    sc_sort_stats stats;
    float max_score; /* o->track_scores: the best score of every match (NAN when none) */
} sc_sorted_result;

/* Runs q over the shard and returns the top from+size hits under specs (the `size` after
 * `from`), with search_after (n_specs values or NULL). Totals follow o->track_total_hits:
 * counted while collecting (every match visited); with track_total_hits false the points of
 * specs[0] (when numeric with points) prune segments and docs that cannot compete. Errors and
 * partial results (timeout, cancel) are reported in *res (error text, timed_out, cancelled)
 * as sc_search_execute does; its hits are not filled. */
sc_status sc_search_sorted(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                           const sc_sort_spec *specs, size_t n_specs,
                           const sc_sort_key *search_after, sc_arena *a, sc_search_result *res,
                           sc_sorted_result *out) SC_MUST_USE;

#endif
