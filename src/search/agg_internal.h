/* Private to the aggregation files of src/search: the collector tree (one collector per spec
 * node; bucket collectors pass (doc, bucket ordinal) pairs in batches to their subs), growable
 * arena arrays indexed by bucket ordinal, the (owner, key) -> bucket ordinal tables, and the
 * per-kind constructors. */
#ifndef SC_SEARCH_AGG_INTERNAL_H
#define SC_SEARCH_AGG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "index/bkd2.h"
#include "index/docvalues.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/internal.h"
#include "search/runtime.h"

/* Pairs buffered before a bucket collector flushes them to its subs. */
#define SC__AGG_PAIRS 4096

/* Counters and sums kept in this many lanes per bucket (doc i of a window in lane i % LANES):
 * independent adds the compiler vectorizes; added together at the end. */
#define SC__AGG_LANES 4

/* s[l] += the sum of v[i] over the i < k with i % SC__AGG_LANES == l (vectorized). */
static inline void sc__agg_lane_sums(const int64_t *v, size_t k, int64_t *s)
{
    size_t i = 0;
    for (; i + SC__AGG_LANES <= k; i += SC__AGG_LANES)
        for (size_t l = 0; l < SC__AGG_LANES; l++)
            s[l] += v[i + l];
    for (size_t j = i; j < k; j++)
        s[j - i] += v[j];
}

typedef struct sc__agg_coll sc__agg_coll;
typedef struct sc__agg_field sc__agg_field;

/* Shared by every collector of one shard collection. */
typedef struct sc__agg_ctx {
    sc_arena *a;
    const sc_searcher *s;
    sc__search_ctx *sctx; /* plan building for filter queries */
    const sc_agg_shard_options *so;
    sc_agg_error *err;
    uint64_t n_buckets; /* buckets built (max_buckets) */
    uint64_t max_buckets;
    const sc_query *q; /* the current pass's query (top_hits scores with it) */
    /* per runtime field of so: the segment its column was last computed for, and the column */
    const sc_segment **rt_seg;
    struct sc__agg_field *rt_col;
    uint64_t **rt_failed; /* per runtime field: its docs whose script failed (NULL: none) */
    char (*rt_reason)[200];
} sc__agg_ctx;

/* Per-segment view handed to seg_begin. */
typedef struct sc__agg_seg {
    const sc_segment *seg;
    size_t seg_i;
    uint32_t n_docs;
} sc__agg_seg;

/* Collector methods. collect receives docs (non-decreasing within a segment) and the bucket
 * ordinal each belongs to in the parent (`owners` NULL: all 0, the top level). build writes
 * the result of owner ordinal `owner` into *out (ctx arena). */
typedef struct sc__agg_coll_ops {
    sc_status (*seg_begin)(sc__agg_coll *c, const sc__agg_seg *s);
    sc_status (*collect)(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners, size_t n);
    sc_status (*seg_end)(sc__agg_coll *c);
    sc_status (*build)(sc__agg_coll *c, uint32_t owner, sc_agg_result **out);
    /* Optional (NULL = never): c is a top-level aggregation and the current segment's matches
     * are all its docs (field NULL) or its docs with a value of `field` in [lo, hi] (no
     * deletes either way); *handled = true when c counted them without docs (then it gets no
     * collect calls for this segment). */
    sc_status (*seg_whole)(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi,
                           bool *handled);
    /* seg_whole passes the docs it takes to the subs itself (sc__agg_emit), so it applies
     * with sub-aggregations too (otherwise only to a collector without subs). */
    bool seg_whole_feeds_subs;
    /* Optional (NULL = never): c is a top-level aggregation and the query is match_all
     * (field NULL) or one range [lo, hi] on `field`; called once before the first segment
     * (the searcher's segments are c->ctx->s). */
    sc_status (*query_whole)(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi);
} sc__agg_coll_ops;

/* A growable array of 8-byte cells in the arena (grows by doubling; old blocks stay in the
 * arena until it is freed, which the budget counts). */
typedef struct sc__agg_vec {
    void *p;
    size_t len, cap; /* cells */
} sc__agg_vec;

/* Makes cells [0, n) exist (new ones filled with the 8-byte pattern `fill`). */
sc_status sc__agg_vec_ensure(sc_arena *a, sc__agg_vec *v, size_t n, uint64_t fill) SC_MUST_USE;

struct sc__agg_coll {
    const sc_agg_spec *spec;
    const sc__agg_coll_ops *ops;
    sc__agg_ctx *ctx;
    sc__agg_coll **subs;
    size_t n_subs;
    sc__agg_vec doc_counts;      /* bucket kinds: uint64 per bucket ordinal */
    uint32_t *pb_docs, *pb_ords; /* pairs for the subs */
    size_t pb_n;
    bool top;               /* a top-level aggregation: collect always gets owners NULL */
    bool skip;              /* the current segment was answered by seg_whole */
    const sc__agg_seg *seg; /* the current segment (top level) */
    void *state;            /* the kind's own */
};

/* Builds the collector tree of spec (its subs too). */
sc_status sc__agg_coll_new(sc__agg_ctx *ctx, const sc_agg_spec *spec, sc__agg_coll **out)
    SC_MUST_USE;
/* Runs seg_begin / seg_end of c and of its subs (seg_end flushes buffered pairs first). */
sc_status sc__agg_coll_seg_begin(sc__agg_coll *c, const sc__agg_seg *s) SC_MUST_USE;
sc_status sc__agg_coll_seg_end(sc__agg_coll *c) SC_MUST_USE;

/* A doc fell into bucket `ord`: counts it and queues the pair for the subs. */
static inline sc_status sc__agg_emit(sc__agg_coll *c, uint32_t doc, uint32_t ord);
sc_status sc__agg_flush(sc__agg_coll *c) SC_MUST_USE;
/* Makes doc_counts cover ordinal `ord`. */
sc_status sc__agg_counts_ensure(sc__agg_coll *c, uint32_t ord) SC_MUST_USE;

static inline sc_status sc__agg_emit(sc__agg_coll *c, uint32_t doc, uint32_t ord)
{
    if (ord >= c->doc_counts.len)
        SC_TRY(sc__agg_counts_ensure(c, ord));
    ((uint64_t *)c->doc_counts.p)[ord]++;
    if (c->n_subs) {
        c->pb_docs[c->pb_n] = doc;
        c->pb_ords[c->pb_n] = ord;
        if (++c->pb_n == SC__AGG_PAIRS)
            return sc__agg_flush(c);
    }
    return SC_OK;
}

/* As sc__agg_emit without the count: a caller that counts its docs per bucket itself (in
 * lanes, folded into doc_counts before the build) only queues the pair for the subs. */
static inline sc_status sc__agg_emit_uncounted(sc__agg_coll *c, uint32_t doc, uint32_t ord)
{
    if (c->n_subs) {
        c->pb_docs[c->pb_n] = doc;
        c->pb_ords[c->pb_n] = ord;
        if (++c->pb_n == SC__AGG_PAIRS)
            return sc__agg_flush(c);
    }
    return SC_OK;
}

/* A new result of c's kind with nb buckets (each with room for the spec's subs). */
sc_agg_result *sc__agg_result_new(sc_arena *a, const sc_agg_spec *spec, size_t nb);
/* Builds bucket b's sub-results for bucket ordinal `ord` (its doc count from doc_counts). */
sc_status sc__agg_build_bucket(sc__agg_coll *c, uint32_t ord, sc_agg_bucket *b) SC_MUST_USE;
/* Counts n built buckets against max_buckets (SC_ELIMIT with too_many_buckets). */
sc_status sc__agg_count_buckets(sc__agg_ctx *ctx, uint64_t n) SC_MUST_USE;
/* Arena failure: SC_ELIMIT when over budget, else SC_ENOMEM. */
sc_status sc__agg_oom(sc_arena *a);

/* ---- (owner, key) -> bucket ordinal tables (open addressing, arena) ---- */

typedef struct sc__agg_ords {
    uint32_t *slots;              /* entry + 1, 0 = empty */
    size_t cap;                   /* power of two */
    sc__agg_vec owner, key, hash; /* per ordinal: uint64 owner, int64 key, uint64 hash */
    sc__agg_vec bkey;             /* bytes mode: (ptr, len) as two cells per ordinal */
    size_t n;
    bool bytes;
    uint8_t *pool; /* bytes mode: key copies, packed without alignment */
    size_t pool_left;
} sc__agg_ords;

/* The ordinal of (owner, key), added when new (*added). */
sc_status sc__agg_ords_long(sc_arena *a, sc__agg_ords *o, uint32_t owner, int64_t key,
                            uint32_t *ord, bool *added) SC_MUST_USE;
/* As above for byte-string keys (copied into the arena when added). */
sc_status sc__agg_ords_bytes(sc_arena *a, sc__agg_ords *o, uint32_t owner, sc_slice key,
                             uint32_t *ord, bool *added) SC_MUST_USE;
static inline uint32_t sc__agg_ords_owner(const sc__agg_ords *o, uint32_t ord)
{
    return (uint32_t)((const uint64_t *)o->owner.p)[ord];
}
static inline int64_t sc__agg_ords_key(const sc__agg_ords *o, uint32_t ord)
{
    return ((const int64_t *)o->key.p)[ord];
}
static inline sc_slice sc__agg_ords_bkey(const sc__agg_ords *o, uint32_t ord)
{
    const uint64_t *c = (const uint64_t *)o->bkey.p + 2 * (size_t)ord;
    return sc_slice_make((const void *)(uintptr_t)c[0], (size_t)c[1]);
}
/* Ordinals grouped by owner: list[start[w] .. start[w+1]) are owner w's (ascending), for
 * owners < n_owners (ordinals of larger owners are left out). */
sc_status sc__agg_ords_group(sc_arena *a, const sc__agg_ords *o, uint32_t n_owners,
                             uint32_t **start, uint32_t **list) SC_MUST_USE;

/* ---- doc values of an aggregation's field in one segment ---- */

struct sc__agg_field {
    bool has_num, has_ss;
    sc_dv_numeric num;
    sc_dv_sorted_set ss;
};

/* Opens field's doc values in seg (none: both flags false); a runtime field of ctx's options
 * gets its column computed for seg (once per segment and collection). SC_ECORRUPT passes
 * through; a runtime script's error is SC_EINVAL with ctx->err's reason. */
sc_status sc__agg_field_open(sc__agg_ctx *ctx, const sc_segment *seg, const char *field,
                             sc__agg_field *f) SC_MUST_USE;
/* As sc__agg_field_open, but a double runtime field that can be evaluated for given docs
 * (sc_runtime_doubles_open) gives *rt (in ctx's arena) and no column (*f all false); *rt NULL
 * otherwise. Only for a spec of vtype double without a scaling factor (the column's values
 * would be read back as exactly these doubles). */
sc_status sc__agg_field_open_doubles(sc__agg_ctx *ctx, const sc_segment *seg,
                                     const sc_agg_spec *spec, sc__agg_field *f,
                                     sc_runtime_doubles **rt) SC_MUST_USE;
/* The numeric values of doc (ascending) as doubles of type t; spec `missing` applies. Returns
 * how many (at most cap; 0 when the doc has none). */
size_t sc__agg_doc_doubles(const sc__agg_field *f, const sc_agg_spec *spec, uint32_t doc,
                           double *out, size_t cap);

/* ---- the top-level keyword terms fast path (agg_terms_ords.c) ---- */
typedef struct sc__agg_terms_fast sc__agg_terms_fast;
/* Keeps a segment's non-zero ordinal counts (counts[ord + 1], counts[0] = docs without a
 * value) for the build; *f is created on first use. */
sc_status sc__agg_terms_fast_seg_end(sc__agg_coll *c, sc__agg_terms_fast **f,
                                     const sc_dv_sorted_set *ss, const uint32_t *counts)
    SC_MUST_USE;
/* The shard result from the kept lists (f may be NULL: no values anywhere). */
sc_status sc__agg_terms_fast_build(sc__agg_coll *c, const sc__agg_terms_fast *f,
                                   sc_agg_result **out) SC_MUST_USE;

/* ---- plain date roundings (agg_histo.c) ---- */
/* A date rounding that is plain arithmetic: a fixed length (fixed intervals, minutes, hours,
 * days) in a zone without transitions. Its length in ms, or 0. */
int64_t sc__agg_plain_unit_ms(const sc_agg_rounding *r);
/* For such a rounding of length unit: out[i] = the index q of v[i]'s bucket, which starts at
 * q x unit - (r->tz.base_offset_ms - r->offset_ms) (sc_agg_round's key). */
void sc__agg_plain_index(const sc_agg_rounding *r, int64_t unit, const int64_t *v, size_t k,
                         int64_t *out);

/* ---- counting from points (agg_points.c) ---- */
/* Whether spec's field has single-valued 1-D points in segment s (long/date, no `missing`). */
bool sc__agg_points_open(const sc_agg_spec *spec, const sc__agg_seg *s, sc_bkd *t);
/* A top-level histogram / date_histogram over the whole current segment from its points into
 * ords (owner 0) and doc_counts; *handled false when it does not apply. */
sc_status sc__agg_histo_points(sc__agg_coll *c, sc__agg_ords *ords, const sc_slice *field,
                               int64_t lo, int64_t hi, bool *handled) SC_MUST_USE;
/* A top-level range over the whole current segment from its points (ordinal = range). */
sc_status sc__agg_range_points(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi,
                               bool *handled) SC_MUST_USE;
/* For a seg_whole call (field, [qlo, qhi]) of top-level c: *ok when the current segment's
 * points can stand for its matches; then *t is the tree and, when some value matches (*any),
 * [*lo, *hi] the smallest and largest matching value, exact (at most two leaves decoded).
 * SC_ECORRUPT for a damaged tree. O(log leaves). */
sc_status sc__agg_points_extent(sc__agg_coll *c, const sc_slice *field, int64_t qlo, int64_t qhi,
                                sc_bkd *t, int64_t *lo, int64_t *hi, bool *ok, bool *any)
    SC_MUST_USE;
/* Adds t's values in [lo, hi] to the buckets of rounding r (keys of owner 0 in ords, counts in
 * c's doc_counts), leaf by leaf: a leaf inside one bucket adds its size unread. t must stay
 * mapped (its segment referenced) until then. */
sc_status sc__agg_points_round(sc__agg_coll *c, sc__agg_ords *ords, const sc_bkd *t,
                               const sc_agg_rounding *r, int64_t lo, int64_t hi) SC_MUST_USE;

/* ---- the fused histogram-with-metrics path (agg_metric.c, used by agg_histo.c) ---- */
/* Whether c is a min/max/sum/avg/stats/extended_stats collector without subs whose field has
 * exactly one value per doc in the current segment (then `missing` never applies). */
bool sc__agg_metric_fusable(const sc__agg_coll *c);
/* What a flush of the pairs (docs[i], owners[i]), i < k <= SC__AGG_PAIRS, would add to c
 * (sc__agg_metric_fusable; max_owner the largest owner), value i in lane (lane0 + i) % 4:
 * with lane0 = the pairs already given to c in this segment, the same sums, bit for bit. */
sc_status sc__agg_metric_add_owned(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                   size_t k, uint32_t max_owner, uint64_t lane0) SC_MUST_USE;
/* sc__agg_metric_add_owned of the window to each of subs[0..n) (all sc__agg_metric_fusable) in
 * turn, the doc values of a column read once for the subs on the same field (Rally's
 * date_histogram_fixed_interval_with_metrics_agg: min, max and avg of total_amount). */
sc_status sc__agg_metrics_add_owned(sc__agg_coll *const *subs, size_t n, const uint32_t *docs,
                                    const uint32_t *owners, size_t k, uint32_t max_owner,
                                    uint64_t lane0) SC_MUST_USE;
/* One pass for a top-level terms on a single-valued keyword whose only sub is c (see
 * agg_terms.c): c's int64 lanes, owner w's lane l at index w * 4 + l, count[x] += 1 and
 * sum[x] += v[i] per doc i taken. */
typedef struct sc__agg_int_lanes {
    const int64_t *v; /* the window's values (sc__agg_metric_int_window) */
    uint64_t *count;
    int64_t *sum;
} sc__agg_int_lanes;
/* Whether c (sc__agg_metric_fusable) is a sum or avg whose sums are still int64 ones. */
bool sc__agg_metric_int_fusable(const sc__agg_coll *c);
/* Reads the values of docs[0..k) and takes them into the int64 sums (*taken) or not (the
 * bound broke: the compensated sums took over, use sc__agg_metric_add_owned); with *taken,
 * out holds the lanes covering owners up to max_owner. */
sc_status sc__agg_metric_int_window(sc__agg_coll *c, const uint32_t *docs, size_t k,
                                    uint32_t max_owner, sc__agg_int_lanes *out, bool *taken)
    SC_MUST_USE;
/* Makes c's lanes cover max_owner (a new bucket) and refreshes out's pointers. */
sc_status sc__agg_metric_int_lanes(sc__agg_coll *c, uint32_t max_owner, sc__agg_int_lanes *out)
    SC_MUST_USE;

/* ---- per-kind constructors ---- */
sc_status sc__agg_terms_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_metric_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_histo_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_range_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_filter_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_sampler_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_composite_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_pipeline_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_auto_histo_new(sc__agg_coll *c) SC_MUST_USE;
sc_status sc__agg_weighted_new(sc__agg_coll *c) SC_MUST_USE;
/* nested / reverse_nested collectors (agg_nested.c). */
sc_status sc__agg_nested_new(sc__agg_coll *c) SC_MUST_USE;
/* geo_bounds / geo_centroid collectors (agg_geo.c). */
sc_status sc__agg_geo_new(sc__agg_coll *c) SC_MUST_USE;
/* Merges the geo_bounds partial x into r (extremes; counts add). */
void sc__agg_geo_bounds_merge(sc_agg_result *r, const sc_agg_result *x);
/* significant_terms (agg_significant.c): the shard build from the terms collector's
 * (owner, term) ordinals and per-owner subset sizes, and the reduce. */
sc_status sc__agg_significant_build(sc__agg_coll *c, const sc__agg_ords *ords,
                                    const sc__agg_vec *subset, uint32_t owner, sc_agg_result **out)
    SC_MUST_USE;
sc_status sc__agg_significant_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                     bool final, uint64_t max_buckets, sc_arena *a,
                                     sc_agg_result **out, sc_agg_error *err) SC_MUST_USE;
/* auto_date_histogram reduce (agg_auto_histo.c) and its final empty-bucket filling. */
sc_status sc__agg_auto_histo_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                    bool final, uint64_t max_buckets, sc_arena *a,
                                    sc_agg_result **out, sc_agg_error *err) SC_MUST_USE;
sc_status sc__agg_auto_fill(const sc_agg_spec *spec, sc_agg_result *r, uint64_t max_buckets,
                            sc_arena *a, sc_agg_error *err) SC_MUST_USE;

/* rare_terms (agg_rare_terms.c): the shard build from the terms collector's ordinals list[0..nb)
 * of one owner, the 64-bit hash of a key, and the reduce. */
sc_status sc__agg_rare_build(sc__agg_coll *c, bool bytes, const sc__agg_ords *ords,
                             const uint32_t *list, size_t nb, sc_agg_result **out) SC_MUST_USE;
uint64_t sc__agg_rare_hash(const sc_agg_spec *spec, const sc_agg_bucket *b);
sc_status sc__agg_rare_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                              bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                              sc_agg_error *err) SC_MUST_USE;

/* top_hits / top_metrics (agg_top_hits.c): the collector, whether the sort needs scores,
 * and the reduce (hits merged by the sort, from + size kept). */
sc_status sc__agg_top_hits_new(sc__agg_coll *c) SC_MUST_USE;
bool sc__agg_top_hits_scores(const sc_agg_spec *spec);
sc_status sc__agg_top_hits_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                  sc_arena *a, sc_agg_result **out) SC_MUST_USE;
static inline bool sc__agg_is_top_hits(sc_agg_kind k)
{
    return k == SC_AGG_TOP_HITS || k == SC_AGG_TOP_METRICS;
}

/* ---- pipelines (agg_pipeline.c), run at the final reduce ---- */
/* The value of path p in bucket b of an aggregation of spec `owner` (NaN when missing). */
double sc__agg_path_value(const sc_agg_spec *owner, const sc_agg_bucket *b, const sc_agg_path *p);
/* Computes the sibling pipelines among owner's subs from the other subs of bucket b. */
sc_status sc__agg_pipelines_siblings(const sc_agg_spec *owner, sc_agg_bucket *b, sc_arena *a)
    SC_MUST_USE;
/* Runs spec's parent pipelines (cumulative_sum, derivative, bucket_sort, bucket_script,
 * bucket_selector) over r's buckets, in declaration order. SC_EINVAL with err->reason when a
 * script fails at run time. */
sc_status sc__agg_pipelines_parent(const sc_agg_spec *spec, sc_agg_result *r, sc_arena *a,
                                   sc_agg_error *err) SC_MUST_USE;
/* moving_fn / serial_diff pipeline j of spec over r's buckets, and the percentiles_bucket /
 * extended_stats_bucket sibling pipe over target's buckets (agg_pipeline_moving.c). */
sc_status sc__agg_moving(const sc_agg_spec *spec, uint32_t j, sc_agg_result *r, sc_arena *a,
                         sc_agg_error *err) SC_MUST_USE;
sc_status sc__agg_sibling_more(const sc_agg_spec *pipe, const sc_agg_result *target, sc_arena *a,
                               sc_agg_result **out) SC_MUST_USE;
/* bucket_script / bucket_selector pipeline p over r's buckets (agg_pipeline_script.c). */
sc_status sc__agg_bucket_script(const sc_agg_spec *spec, uint32_t j, sc_agg_result *r, sc_arena *a,
                                sc_agg_error *err) SC_MUST_USE;

/* ---- the sketch metrics (agg_sketch.c) ---- */

/* The collector of a cardinality, percentiles, percentile_ranks or median_absolute_deviation
 * spec: a sketch per owner bucket ordinal, in the collection's arena. */
sc_status sc__agg_sketch_new(sc__agg_coll *c) SC_MUST_USE;

/* Whether kind is a sketch metric (cardinality, percentiles, percentile_ranks,
 * median_absolute_deviation). */
static inline bool sc__agg_is_sketch(sc_agg_kind k)
{
    return k == SC_AGG_CARDINALITY || k == SC_AGG_PERCENTILES || k == SC_AGG_PERCENTILE_RANKS ||
           k == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION;
}
/* Reduces sketch results: the union of the HyperLogLog++ sketches (precisions must match:
 * SC_ECORRUPT) or the merge of the t-digests at the largest compression. */
sc_status sc__agg_sketch_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                sc_arena *a, sc_agg_result **out) SC_MUST_USE;

/* ---- reduce helpers (agg_reduce.c) used by the terms reduce (agg_terms_reduce.c) ---- */

/* The buckets of the partial results in[0..n), in input order, as one arena array of pointers
 * (*total of them; never NULL unless out of memory). */
sc_agg_bucket **sc__agg_bucket_refs(sc_agg_result *const *in, size_t n, sc_arena *a, size_t *total);

/* Reduces the sub-results of the buckets bs[0..n) (same key) into out->subs. */
sc_status sc__agg_reduce_subs(const sc_agg_spec *spec, sc_agg_bucket *const *bs, size_t n,
                              bool final, uint64_t max_buckets, sc_arena *a, sc_agg_bucket *out,
                              sc_agg_error *err) SC_MUST_USE;
sc_status sc__agg_terms_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                               bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                               sc_agg_error *err) SC_MUST_USE;
/* An empty result of spec (what a bucket that no doc reached holds). */
sc_agg_result *sc__agg_empty_result(const sc_agg_spec *spec, sc_arena *a);
/* histogram / date_histogram reduce (agg_histo_reduce.c). */
sc_status sc__agg_histo_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                               bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                               sc_agg_error *err) SC_MUST_USE;
/* composite keys (agg_composite_key.c): whether source s's parts are keyword bytes; one part's
 * encoded size; the part written at p, returning its end. */
bool sc__comp_is_bytes(const sc_agg_spec *s);
size_t sc__comp_part_size(const sc_agg_spec *s, const sc_agg_value *v);
uint8_t *sc__comp_part_put(const sc_agg_spec *s, const sc_agg_value *v, uint8_t *p);

/* composite reduce (agg_composite_key.c): merge by key, the first `size` kept. */
sc_status sc__agg_composite_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                   bool final, uint64_t max_buckets, sc_arena *a,
                                   sc_agg_result **out, sc_agg_error *err) SC_MUST_USE;
/* The value a metric result contributes to an order (NaN when empty). */
double sc__agg_metric_value(const sc_agg_spec *spec, const sc_agg_result *r, sc_agg_stat stat);
/* Compares two buckets under a terms order (ties by key ascending). */
int sc__agg_bucket_cmp(const sc_agg_spec *spec, const sc_agg_bucket *x, const sc_agg_bucket *y);
/* Compares two terms keys (bytes or numeric by the spec's value type). */
int sc__agg_key_cmp(const sc_agg_spec *spec, const sc_agg_bucket *x, const sc_agg_bucket *y);

/* ---- geotile keys without a sin and a log per point (agg_geotile.c) ---- */
#define SC__AGG_TILE_UNKNOWN UINT32_MAX     /* a cell not looked at yet */
#define SC__AGG_TILE_EXACT (UINT32_MAX - 1) /* a cell whose points take the formula */
/* The rows of zoom z by cells of encoded latitude (2^shift encodings each) in a window of
 * n_cells from base (set by the first point). Per aggregation source, for a whole collection:
 * it depends on the zoom only. */
typedef struct sc__agg_tiles {
    uint32_t z, shift;
    bool based;
    int64_t base;
    uint32_t *cells; /* row, SC__AGG_TILE_UNKNOWN or SC__AGG_TILE_EXACT */
    size_t n_cells;
} sc__agg_tiles;
/* An empty table for zoom z (0..29) in a: 128 KiB. SC_ENOMEM (the arena's budget). */
sc_status sc__agg_tiles_init(sc__agg_tiles *t, sc_arena *a, uint32_t z) SC_MUST_USE;
/* sc__agg_tiles_key for a point outside the known cells (fills its cell). */
int64_t sc__agg_tiles_fill(sc__agg_tiles *t, int32_t la, int32_t lo);
/* The geotile key of the encoded point (la, lo): equal to sc_agg_geotile_key(z,
 * sc_geo_decode_lat(la), sc_geo_decode_lon(lo)) for every point (agg_geotile_test). x is
 * floor((lon + 180) / 360 x 2^z) = (lo + 2^31) >> (32 - z) exactly: lon, lon + 180 and the
 * quotient are exact doubles (multiples of 360 / 2^32 below 2^38 of them). */
static inline int64_t sc__agg_tiles_key(sc__agg_tiles *t, int32_t la, int32_t lo)
{
    uint64_t cell = (uint64_t)((int64_t)la - t->base) >> t->shift;
    uint32_t y = cell < t->n_cells ? t->cells[cell] : SC__AGG_TILE_UNKNOWN;
    if (y >= SC__AGG_TILE_EXACT) {
        if (y == SC__AGG_TILE_UNKNOWN)
            return sc__agg_tiles_fill(t, la, lo);
        return sc_agg_geotile_key(t->z, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
    }
    uint64_t x = ((uint64_t)(uint32_t)lo ^ 0x80000000u) >> (32 - t->z);
    return (int64_t)((uint64_t)t->z << 58 | x << 29 | y);
}

/* ---- composite with one numeric source: the counts of its smallest keys (agg_comp_top.c) ---- */
/* The doc count of each key that can still be among the `keep` smallest: keys above `bound`
 * (INT64_MAX until the first prune) and, with has_lo, keys at or below lo are not counted.
 * Keys are int64s in the order wanted (a descending source's keys mapped by ~). Open
 * addressing by key; a count of 0 marks a free slot. Lives in the query's arena. */
typedef struct sc__agg_comp_top {
    int64_t *keys;
    uint64_t *counts;
    int64_t *scratch; /* max_n + 1 */
    size_t cap, n, keep, max_n;
    unsigned shift; /* 64 - log2(cap) */
    int64_t bound, lo;
    bool has_lo;
} sc__agg_comp_top;
/* An empty table keeping the `keep` smallest keys. SC_ENOMEM (the arena's budget). */
sc_status sc__agg_comp_top_init(sc__agg_comp_top *t, sc_arena *a, size_t keep) SC_MUST_USE;
/* Lowers the bound to the keep-th smallest key of the table and drops the keys above it.
 * O(cap). */
void sc__agg_comp_top_prune(sc__agg_comp_top *t);
/* Adds n (> 0) docs of key. Amortized O(1). */
static inline void sc__agg_comp_top_add(sc__agg_comp_top *t, int64_t key, uint64_t n)
{
    if (key > t->bound || (t->has_lo && key <= t->lo))
        return;
    size_t mask = t->cap - 1, i = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15u) >> t->shift);
    while (t->counts[i] && t->keys[i] != key)
        i = (i + 1) & mask;
    t->counts[i] += n;
    if (t->counts[i] == n) { /* a new key */
        t->keys[i] = key;
        if (++t->n > t->max_n)
            sc__agg_comp_top_prune(t);
    }
}

#endif
