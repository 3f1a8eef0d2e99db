/* Aggregations (DESIGN.md §7, issue 12): one data structure, four steps.
 *  - The SPEC: a compiled, typed request tree (sc_agg_spec) the API layer builds from the
 *    `aggs` JSON with the index mapping (field value types resolved, dates parsed). Its root
 *    (SC_AGG_ROOT) holds the top-level aggregations as subs.
 *  - COLLECT: per segment, windows of matching doc ids (sc_search_collect) go to a tree of
 *    collectors built from the spec; bucket collectors pass (doc, bucket ordinal) pairs in
 *    batches to their sub-aggregations, metrics keep arrays indexed by bucket ordinal.
 *  - BUILD: the collectors turn into a shard partial result (sc_agg_result, arena-allocated
 *    plain structs) — sc_agg_collect_shard does collect + build.
 *  - REDUCE: a list of partial results into one (sc_agg_reduce); the same function runs over a
 *    node's shards and over nodes on the coordinator. FINALIZE (sc_agg_finalize): ordering,
 *    size pruning, min_doc_count, gap filling, the final bucket count limit.
 * Partial results have a compact versioned binary encoding (sc_agg_encode / sc_agg_decode) so
 * they can cross nodes. */
#ifndef SC_SEARCH_AGG_H
#define SC_SEARCH_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/dfa.h"
#include "search/hll.h"
#include "search/query.h"
#include "search/script.h"
#include "search/searcher.h"
#include "search/sort.h"
#include "search/tdigest.h"

typedef enum sc_agg_kind {
    SC_AGG_ROOT, /* the request: subs are the top-level aggregations */
    /* bucket */
    SC_AGG_TERMS,
    SC_AGG_HISTOGRAM,
    SC_AGG_DATE_HISTOGRAM,
    SC_AGG_RANGE, /* range and date_range */
    SC_AGG_FILTER,
    SC_AGG_FILTERS,
    SC_AGG_MISSING,
    SC_AGG_GLOBAL,
    /* metric */
    SC_AGG_MIN,
    SC_AGG_MAX,
    SC_AGG_SUM,
    SC_AGG_AVG,
    SC_AGG_VALUE_COUNT,
    SC_AGG_STATS,
    SC_AGG_EXTENDED_STATS,
    /* bucket (after the metrics to keep the encoded kind numbers stable) */
    SC_AGG_COMPOSITE,   /* sources: TERMS / HISTOGRAM / DATE_HISTOGRAM specs; `after` paging */
    SC_AGG_MULTI_TERMS, /* sources: TERMS specs; keys as composite's, reduced as terms */
    /* pipeline (computed at the final reduce from other aggregations' results) */
    SC_AGG_AVG_BUCKET, /* sibling: over the buckets of `target` */
    SC_AGG_MAX_BUCKET,
    SC_AGG_MIN_BUCKET,
    SC_AGG_SUM_BUCKET,
    SC_AGG_STATS_BUCKET,
    SC_AGG_CUMULATIVE_SUM, /* parent: a value in each bucket of the enclosing histogram */
    SC_AGG_DERIVATIVE,
    SC_AGG_BUCKET_SORT,         /* parent: sorts / pages the enclosing aggregation's buckets */
    SC_AGG_AUTO_DATE_HISTOGRAM, /* `size` = target buckets; interval from a ladder */
    SC_AGG_WEIGHTED_AVG,        /* metric: Σ value x weight in sum, Σ weight in sum_sq */
    /* keyword terms scored by JLH against the index: a bucket's background count in `key`,
     * the result's subset size in sum_other, its superset size in doc_count_error, the final
     * score in a bucket's dkey */
    SC_AGG_SIGNIFICANT_TERMS,
    /* metrics over the sketches of search/hll.h and search/tdigest.h (agg_sketch.c); the
     * result's sketch in hll / td, encoded under flag 16 */
    SC_AGG_CARDINALITY,
    SC_AGG_PERCENTILES,
    SC_AGG_PERCENTILE_RANKS,
    SC_AGG_MEDIAN_ABSOLUTE_DEVIATION,
    /* geo metrics over geo_point doc values (agg_geo.c); state in the metric fields */
    SC_AGG_GEO_BOUNDS,   /* min/max latitude; sum/sum_c, sum_sq/sum_sq_c: lon >= 0, < 0 extremes */
    SC_AGG_GEO_CENTROID, /* count, Σ lat in sum, Σ lon in sum_sq */
    /* the best docs of a bucket (agg_top_hits.c): hits with their sort values; top_hits also
     * carries each hit's _index, _id and _source (fetched on the shard, as Elasticsearch
     * does), top_metrics the values of its metric fields; the bucket's doc count in count */
    SC_AGG_TOP_HITS,
    SC_AGG_TOP_METRICS,
    /* parent pipelines over any multi-bucket aggregation (agg_pipeline_script.c): a script of
     * buckets_path variables per bucket; the selector drops the buckets it is false for */
    SC_AGG_BUCKET_SCRIPT,
    SC_AGG_BUCKET_SELECTOR,
    /* more pipelines (agg_pipeline_moving.c): parent moving_fn (a MovingFunctions script over a
     * window of the previous values) and serial_diff (value - the value `window` buckets
     * back); sibling percentiles_bucket (exact percentiles of the values: buckets[i].dkey for
     * points[i]) and extended_stats_bucket (count, sum, sum_sq, min, max) */
    SC_AGG_MOVING_FN,
    SC_AGG_SERIAL_DIFF,
    SC_AGG_PERCENTILES_BUCKET,
    SC_AGG_EXTENDED_STATS_BUCKET,
    /* terms in at most max_doc_count docs (agg_rare_terms.c), exact: a shard sends its rare
     * candidates as buckets and the 64-bit hashes of its other terms in `hashes`; a reduce
     * drops candidates whose hash another input saw as frequent or whose summed count passes
     * max_doc_count. Buckets in key order. */
    SC_AGG_RARE_TERMS,
    /* block join (agg_nested.c), one bucket each: `nested` over the nested child docs of path
     * `field` of the incoming roots; `reverse_nested` over the roots of the incoming children
     * (each root once per bucket) */
    SC_AGG_NESTED,
    SC_AGG_REVERSE_NESTED,
    /* a composite source only (agg_composite.c): the Web Mercator tile of a geo_point at
     * zoom `precision`, as Elasticsearch's GeoTileUtils.longEncode (zoom << 58 | x << 29 | y);
     * written as "zoom/x/y". Not a result kind (never encoded). */
    SC_AGG_GEOTILE_GRID,
    /* one bucket: the shard's best shard_size docs by score (agg_sampler.c; shard_size 100) */
    SC_AGG_SAMPLER,
    /* one bucket: as SAMPLER with at most max_docs_per_value docs per value of `field` (docs
     * without a value share one key); a multi-valued doc is an error (agg_sampler.c) */
    SC_AGG_DIVERSIFIED_SAMPLER,
    SC_AGG_KIND_COUNT_
} sc_agg_kind;

/* The value type of an aggregation's field, resolved from the mapping. Numeric doc values
 * hold LONG (and integer/short/byte), DATE (epoch ms), BOOLEAN (0/1) as is and DOUBLE in the
 * sortable-long encoding; KEYWORD and IP (16 bytes) are sorted-set ordinals. UNMAPPED: no
 * such field (empty buckets / null metrics, as Elasticsearch). */
typedef enum sc_agg_vtype {
    SC_AGG_V_UNMAPPED,
    SC_AGG_V_LONG,
    SC_AGG_V_DOUBLE,
    SC_AGG_V_DATE,
    SC_AGG_V_BOOLEAN,
    SC_AGG_V_KEYWORD,
    SC_AGG_V_IP,
    SC_AGG_V_GEO_POINT, /* packed LatLonPoint (latitude in the high 32 bits) */
} sc_agg_vtype;

/* Pipeline kinds: no collection; computed at the final reduce. */
static inline bool sc_agg_kind_pipeline(sc_agg_kind k)
{
    return (k >= SC_AGG_AVG_BUCKET && k <= SC_AGG_BUCKET_SORT) ||
           (k >= SC_AGG_BUCKET_SCRIPT && k <= SC_AGG_EXTENDED_STATS_BUCKET);
}

/* Sibling pipelines: computed from the buckets of another aggregation (`target`). */
static inline bool sc_agg_kind_sibling(sc_agg_kind k)
{
    return (k >= SC_AGG_AVG_BUCKET && k <= SC_AGG_STATS_BUCKET) || k == SC_AGG_PERCENTILES_BUCKET ||
           k == SC_AGG_EXTENDED_STATS_BUCKET;
}

/* Kinds reduced as terms (error bounds, sum_other_doc_count). */
static inline bool sc_agg_kind_terms_like(sc_agg_kind k)
{
    return k == SC_AGG_TERMS || k == SC_AGG_MULTI_TERMS;
}

static inline bool sc_agg_vtype_numeric(sc_agg_vtype t)
{
    return t == SC_AGG_V_LONG || t == SC_AGG_V_DOUBLE || t == SC_AGG_V_DATE ||
           t == SC_AGG_V_BOOLEAN;
}

/* Terms order. */
typedef enum sc_agg_order_kind {
    SC_AGG_ORDER_COUNT,  /* _count */
    SC_AGG_ORDER_KEY,    /* _key */
    SC_AGG_ORDER_METRIC, /* a sub-aggregation's value (sub index + stat) */
} sc_agg_order_kind;

/* Which value of a metric sub-aggregation an order refers to. */
typedef enum sc_agg_stat {
    SC_AGG_STAT_VALUE, /* the metric's own value (min/max/sum/avg/value_count) */
    SC_AGG_STAT_COUNT,
    SC_AGG_STAT_MIN,
    SC_AGG_STAT_MAX,
    SC_AGG_STAT_AVG,
    SC_AGG_STAT_SUM,
} sc_agg_stat;

typedef struct sc_agg_order {
    sc_agg_order_kind kind;
    bool desc;
    uint32_t sub;     /* METRIC: index into the spec's subs */
    sc_agg_stat stat; /* METRIC */
} sc_agg_order;

/* Date rounding: calendar units or a fixed interval, in a time zone. */
typedef enum sc_agg_cal_unit {
    SC_AGG_CAL_NONE, /* fixed interval */
    SC_AGG_CAL_MINUTE,
    SC_AGG_CAL_HOUR,
    SC_AGG_CAL_DAY,
    SC_AGG_CAL_WEEK,
    SC_AGG_CAL_MONTH,
    SC_AGG_CAL_QUARTER,
    SC_AGG_CAL_YEAR,
} sc_agg_cal_unit;

/* A time zone: UTC offsets changing at instants (DST). n_trans 0 = fixed `base_offset_ms`;
 * otherwise offset_ms[i] applies from at_ms[i] (ascending) on, base_offset_ms before the
 * first. Arrays borrowed (the spec's arena). */
typedef struct sc_agg_tz {
    int64_t base_offset_ms;
    const int64_t *at_ms;
    const int32_t *offset_s;
    size_t n_trans;
} sc_agg_tz;

typedef struct sc_agg_rounding {
    sc_agg_cal_unit unit;
    int64_t fixed_ms; /* unit NONE */
    uint32_t years;   /* unit YEAR: buckets of this many years from year 0 (0 = 1) */
    int64_t offset_ms;
    sc_agg_tz tz;
} sc_agg_rounding;

/* auto_date_histogram's ladder of roundings, finest first (Elasticsearch's RoundingInfo:
 * 1, 5, 10, 30 s; 1, 5, 10, 30 m; 1, 3, 12 h; 1, 7 d; 1, 3 M; 1, 5, 10, 20, 50, 100 y). */
#define SC_AGG_AUTO_LADDER 21
/* Rung i as a rounding in time zone tz (offset 0), and its label ("5m", "1M", "10y"). */
void sc_agg_auto_rung(uint32_t i, const sc_agg_tz *tz, sc_agg_rounding *out, const char **label);

/* One range (range / date_range): [from, to) over the value as a double. */
typedef struct sc_agg_range_spec {
    double from, to;               /* -inf / +inf when open */
    const char *key;               /* user key or NULL (the writer generates "from-to") */
    const char *from_str, *to_str; /* the request's strings (date_range), or NULL */
    /* ip_range (the spec's vtype IP): 16-byte bounds, [from, to); empty slice = open */
    sc_slice from_ip, to_ip;
    const char *mask; /* the CIDR text of a `mask` range (its key), or NULL */
} sc_agg_range_spec;

/* A typed value of a composite key part (the request's `after`). */
typedef struct sc_agg_value {
    bool null;
    int64_t i;  /* terms on numeric kinds (encoded doc value), date_histogram (ms) */
    double d;   /* histogram */
    sc_slice s; /* terms on keyword/ip */
} sc_agg_value;

/* terms include / exclude (Elasticsearch's IncludeExclude): a regular expression over the
 * term bytes (keyword/ip: DFAs compiled by the caller), exact values (bytes for keyword/ip,
 * encoded doc values for numeric kinds), or a partition of the terms by hash (murmur3 x86_32
 * with seed 31 of the bytes; BitMixer.mix64 of numbers): a term is kept when
 * floorMod(hash, num_partitions) == partition. */
typedef struct sc_agg_term_filter {
    const struct sc_dfa *include_re, *exclude_re;
    const sc_slice *include, *exclude; /* bytes */
    size_t n_include, n_exclude;
    const int64_t *include_num, *exclude_num; /* numeric */
    size_t n_include_num, n_exclude_num;
    uint32_t num_partitions; /* 0 = none */
    uint32_t partition;
} sc_agg_term_filter;

/* Whether a terms key passes the filter (NULL: no filter). */
bool sc_agg_term_filter_bytes(const sc_agg_term_filter *f, sc_slice term);
bool sc_agg_term_filter_num(const sc_agg_term_filter *f, int64_t v);

/* A value read from a bucket for a pipeline (buckets_path's last part) or a bucket_sort key. */
typedef enum sc_agg_path_kind {
    SC_AGG_PATH_COUNT, /* _count */
    SC_AGG_PATH_KEY,   /* _key (numeric keys) */
    SC_AGG_PATH_SUB,   /* the bucket's sub-aggregation `sub` (a metric or pipeline), `stat` */
} sc_agg_path_kind;

/* A path first steps through n_via single-bucket sub-aggregations (a filter's bucket:
 * "the_filter>avg_price", "the_filter>_count"), via[i] a sub index of the previous level. */
typedef struct sc_agg_path {
    sc_agg_path_kind kind;
    uint32_t sub;
    sc_agg_stat stat;
    bool desc; /* bucket_sort */
    const uint32_t *via;
    uint32_t n_via;
} sc_agg_path;

/* How a bucket_script / bucket_selector binds one script variable: to buckets_path entry
 * `path` (from_path), or to a constant of the script's params. */
typedef struct sc_agg_script_bind {
    bool from_path;
    bool window; /* moving_fn: `values`, the window of values (an OBJECT: double[obj_kind]) */
    uint32_t path;
    sc_script_value value;
} sc_agg_script_bind;

/* The geotile key of a point at zoom z (0..29), as Elasticsearch's GeoTileUtils.longEncode. */
int64_t sc_agg_geotile_key(uint32_t z, double lat, double lon);
/* The geohash key of a point (its LatLonPoint-encoded lat / lon) with n (1..12) characters, as
 * Elasticsearch's Geohash.longEncode: the 5n interleaved bits (longitude first) << 4 | n. */
int64_t sc_agg_geohash_key(uint32_t n, int32_t lat, int32_t lon);
/* Its text (n base-32 characters and a NUL) into out[13]. */
void sc_agg_geohash_text(int64_t key, char *out);

typedef struct sc_agg_spec sc_agg_spec;
struct sc_agg_spec {
    sc_agg_kind kind;
    const char *name;  /* NUL-terminated (arena) */
    const char *field; /* NULL for filters/global */
    sc_agg_vtype vtype;
    double scaling_factor; /* scaled_float: doc value / factor; 0 = none */
    const char *format;    /* the request's `format`, or NULL */
    /* terms */
    uint32_t size;               /* 10 */
    uint32_t shard_size;         /* 0 = default (size * 1.5 + 10, or size on one shard) */
    uint32_t max_docs_per_value; /* diversified_sampler (default 1) */
    uint64_t min_doc_count;
    uint64_t max_doc_count;                /* rare_terms (1) */
    sc_agg_order order;                    /* terms default _count desc; histograms _key asc */
    bool show_term_doc_count_error;        /* terms: per-bucket errors in the response */
    const sc_agg_term_filter *term_filter; /* terms include/exclude, or NULL */
    bool has_missing;       /* `missing`: docs without a value count under missing_* */
    int64_t missing_num;    /* encoded as the field's doc values (numeric kinds) */
    sc_slice missing_bytes; /* keyword/ip */
    double missing_double;  /* metrics and histograms: the value as a double */
    /* histogram / date_histogram */
    double interval, offset;
    sc_agg_rounding rounding; /* date_histogram (auto_date_histogram: its tz only) */
    uint32_t min_rung;        /* auto_date_histogram: minimum_interval's ladder rung */
    bool has_ext_bounds, has_hard_bounds;
    double ext_min, ext_max, hard_min, hard_max;
    bool keyed;
    /* range */
    sc_agg_range_spec *ranges;
    size_t n_ranges;
    /* filter / filters: n_filters queries (filter: 1); names NULL for anonymous filters */
    const sc_query **filters;
    const char **filter_names;
    size_t n_filters;
    bool other_bucket;
    const char *other_bucket_key; /* "_other_" */
    /* extended_stats */
    double sigma; /* 2 */
    /* cardinality: the HyperLogLog++ precision (from precision_threshold; 0 = 14) */
    uint32_t hll_precision;
    /* percentiles: the percents; percentile_ranks: the values (ascending, distinct) */
    const double *points;
    size_t n_points;
    double compression; /* t-digest compression (0 = 100; median_absolute_deviation 1000) */
    /* geo_bounds */
    bool wrap_longitude; /* true (the parser's default): may cross the dateline */
    /* weighted_avg: the weight's field and type (its `missing` in weight_missing) */
    const char *weight_field;
    sc_agg_vtype weight_vtype;
    bool has_weight_missing;
    double weight_missing;
    /* composite: the sources (each TERMS, HISTOGRAM or DATE_HISTOGRAM with its field,
     * interval/rounding, order.desc and missing_bucket) and the `after` key (n_sources values,
     * or NULL); size is the page size */
    sc_agg_spec **sources;
    size_t n_sources;
    const sc_agg_value *after;
    bool missing_bucket; /* a composite source: docs without a value form a null key part */
    uint32_t precision;  /* a geotile_grid source: the zoom, 0..29 */
    /* the geotile_grid aggregation: a TERMS spec over a geo_point field whose values are the
     * tiles of its points at zoom `precision` (keys as a geotile_grid source's) */
    bool geotile;
    /* the geohash_grid aggregation: likewise with the geohash of `precision` (1..12)
     * characters, keyed by Elasticsearch's Geohash.longEncode (hash bits << 4 | precision) */
    bool geohash;
    /* pipelines: sibling kinds read `value` from each bucket of the sibling subs[target_sub]
     * of their parent (target: its spec); parent kinds read `value` from each bucket of the
     * enclosing aggregation. bucket_sort: sort keys (n_sort), from, size (0 = all). */
    const sc_agg_spec *target;
    uint32_t target_sub;
    sc_agg_path value;
    const sc_agg_path *sort;
    size_t n_sort;
    uint32_t from;
    bool gap_insert_zeros; /* gap_policy insert_zeros (default skip) */
    /* top_hits / top_metrics: the sort (n_hit_sort 0: _score descending; field kinds resolved,
     * keyword fields by their terms), `from` above and `size`; top_hits: whether to fetch
     * _source */
    const sc_sort_spec *hit_sort;
    size_t n_hit_sort;
    bool hit_source;
    sc_agg_spec *const *metrics; /* top_metrics: one field spec (name, vtype) per metric */
    size_t n_metrics;
    /* bucket_script / bucket_selector: the buckets_path entries (paths into the enclosing
     * aggregation's buckets), the compiled script and one binding per script variable */
    const sc_agg_path *paths;
    size_t n_paths;
    const sc_script *script;
    const sc_agg_script_bind *binds;
    /* moving_fn: window and shift; serial_diff: the lag in window */
    uint32_t window;
    int32_t shift;
    void *user; /* the API layer's rendering data (formats); not read here */
    /* tree */
    sc_agg_spec **subs;
    size_t n_subs;
};

/* ---- partial (and final) results ---- */

typedef struct sc_agg_result sc_agg_result;

/* One hit of a top_hits / top_metrics result. values: the spec's n_hit_sort sort values (for
 * _score the score in d, for _doc the shard-global doc in i; keyword bytes in the result's
 * arena); metrics: top_metrics' values (NaN = the doc has none). index/id/source: top_hits
 * (source empty when not fetched). */
typedef struct sc_agg_hit {
    float score;  /* NaN when the sort did not need scores */
    uint64_t doc; /* shard-global doc id: ties within a shard */
    sc_sort_key *values;
    uint32_t n_values;
    double *metrics;
    uint32_t n_metrics;
    sc_slice index, id, source;
} sc_agg_hit;

/* One bucket: its key (per kind: terms on numeric fields and date_histogram `key`, terms on
 * keyword/ip `bkey`, histogram `dkey`, range/filters the bucket's position in `key`), its doc
 * count, and one result per sub-aggregation of the spec (in spec order). */
typedef struct sc_agg_bucket {
    int64_t key;
    double dkey;
    sc_slice bkey;
    uint64_t doc_count;
    int64_t doc_count_error; /* terms: per-bucket error (-1 unbounded) */
    sc_agg_result **subs;
    uint32_t n_subs;
} sc_agg_bucket;

/* A partial result of one aggregation. Metrics use count/sum/min/max/sum_sq (sums carry
 * Kahan compensation); bucket aggregations use buckets (single-bucket kinds have exactly one).
 * terms also uses doc_count_error (-1 = unbounded), sum_other and n_reduced (how many shard
 * results went in: 1 for a shard's own result). */
struct sc_agg_result {
    sc_agg_kind kind;
    uint64_t count;
    double sum, sum_c, min, max, sum_sq, sum_sq_c;
    sc_agg_bucket *buckets;
    size_t n_buckets;
    int64_t doc_count_error;
    uint64_t sum_other;
    uint32_t n_reduced;
    uint32_t shard_size; /* terms: the shard_size a shard result was cut to */
    uint32_t rung;       /* auto_date_histogram: the ladder rung of the keys */
    bool error_set;      /* terms: doc_count_error already combined by an earlier reduce */
    /* cardinality / percentiles / percentile_ranks / median_absolute_deviation: the sketch (in
     * the result's arena), NULL when no value was seen */
    sc_hll *hll;
    sc_tdigest *td;
    /* top_hits / top_metrics: the best hits first (at most from + size), count = docs seen */
    sc_agg_hit *hits;
    size_t n_hits;
    /* rare_terms: hashes of the terms seen in more than max_doc_count docs (ascending) */
    uint64_t *hashes;
    size_t n_hashes;
};

/* Shard-level settings of a collection. */
typedef struct sc_agg_shard_options {
    uint32_t n_shards;    /* shards the request searches (terms' default shard_size) */
    sc_slice index_name;  /* the shard's index (top_hits' _index) */
    uint64_t max_buckets; /* search.max_buckets (65,536); 0 = default */
    /* runtime fields (search/runtime.h) the aggregations may name as fields: their columns are
     * computed per segment the first time a collector opens them (borrowed; may be NULL) */
    const struct sc_runtime_field *runtime;
    size_t n_runtime;
    /* a metric (min, max, sum, avg, stats, ...) on a double runtime field of arithmetic over
     * single-valued doc values evaluates it for its collected docs only and takes the doubles
     * as computed; true: every runtime field becomes a whole column first (the same values
     * and results, bit for bit; for tests and benchmarks comparing the two paths) */
    bool runtime_columns;
    /* a metric on an integer field (long, date, boolean; no scaling factor) whose values so
     * far add up to less than 2^53 in absolute value sums them in int64 (exactly the doubles
     * the compensated sum gives then) and falls back to the compensated sum from there on;
     * true: the compensated sum for every value (the same results, bit for bit; for tests and
     * benchmarks comparing the two paths) */
    bool compensated_sums;
    /* false (default): a metric window of one bucket, a terms window dominated by one key and
     * metric subs on one column take their shortcuts (agg_metric.c, agg_terms.c); true: the
     * per-doc loops and one read per sub (the same results, bit for bit; for tests) */
    bool per_doc_windows;
} sc_agg_shard_options;

#define SC_AGG_DEFAULT_MAX_BUCKETS 65536

/* Why an aggregation failed (user-facing). */
typedef struct sc_agg_error {
    bool too_many_buckets; /* with SC_ELIMIT: too_many_buckets_exception */
    char reason[256];
} sc_agg_error;

/* Collects and builds the shard partial of `root` (SC_AGG_ROOT) over the docs of s matching
 * q (global aggregations: over every live doc), and the exact hit count in res->total. The
 * result and all collection state live in `a` (its budget bounds the aggregation's memory:
 * SC_ELIMIT with a->over_budget set). Errors: SC_ELIMIT (budget, or too many buckets with
 * err->too_many_buckets), SC_ECORRUPT, SC_ENOMEM, search errors (res->error). A cancelled or
 * timed-out search returns SC_OK with res->cancelled/timed_out and a partial result. */
sc_status sc_agg_collect_shard(const sc_agg_spec *root, const sc_searcher *s, const sc_query *q,
                               const sc_search_options *o, const sc_agg_shard_options *so,
                               sc_arena *a, sc_agg_result **out, sc_search_result *res,
                               sc_agg_error *err) SC_MUST_USE;

/* Reduces n >= 1 partial results of `spec` into one, allocated in `a` (inputs are only
 * read; the result may share key bytes with them). With `final`, also finalizes (below).
 * SC_ECORRUPT when an input does not match the spec's shape; SC_ELIMIT (err) past
 * max_buckets at the final reduce; SC_ENOMEM. */
sc_status sc_agg_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n, bool final,
                        uint64_t max_buckets, sc_arena *a, sc_agg_result **out, sc_agg_error *err)
    SC_MUST_USE;

/* An empty result of spec (what no matching doc gives), in `a`; NULL on exhaustion. */
sc_agg_result *sc_agg_result_empty(const sc_agg_spec *spec, sc_arena *a);

/* composite keys are byte strings (sc_agg_bucket.bkey) of the sources' parts in order; each
 * part is a tag byte (0 null, 1 value) and the value (8 little-endian bytes for numbers,
 * histogram keys as doubles; a varint length and the bytes for keyword/ip terms). */
/* Compares two composite keys by the sources' orders (null parts first ascending, last
 * descending). Malformed keys compare by bytes. */
int sc_agg_composite_cmp(const sc_agg_spec *spec, sc_slice x, sc_slice y);
/* The values of key's parts into out[0..n_sources). false when malformed. */
bool sc_agg_composite_parse(const sc_agg_spec *spec, sc_slice key, sc_agg_value *out);

/* The shard_size a terms aggregation uses for n_shards shards. */
uint32_t sc_agg_terms_shard_size(const sc_agg_spec *spec, uint32_t n_shards);

/* ---- binary encoding ----
 * Grammar (little-endian varints, "v" = varint, "z" = zigzag varint, "f64" 8 bytes):
 *   partial  := "SCAG" version:u8(1) node
 *   node     := kind:u8 flags:u8 [metric] [terms] [rung] [sketch] n_buckets:v bucket*
 *   metric   := count:v sum:f64 sum_c:f64 min:f64 max:f64 sum_sq:f64 sum_sq_c:f64  (flags&1)
 *   terms    := error:z sum_other:v n_reduced:v shard_size:v                       (flags&2)
 *   rung     := rung:v                                                            (flags&8)
 *   sketch   := len:v bytes                                                      (flags&16)
 *   hits     := count:v n_hits:v hit*                                             (flags&32)
 *   hashes   := n:v hash:u64*  (ascending; little-endian)                         (flags&64)
 *   hit      := score:f64 doc:v n_values:v value* n_metrics:v metric:f64* index:str id:str
 *               source:str          (str := len:v bytes)
 *   value    := missing:u8 i:z d:f64 s:str
 *   bucket   := key:z dkey:f64 bkey_len:v bkey:bytes doc_count:v error:z n_subs:v node*
 * kind is the position in sc_agg_kind (ROOT 0 ... SIGNIFICANT_TERMS 28, CARDINALITY 29,
 * PERCENTILES 30, PERCENTILE_RANKS 31, MEDIAN_ABSOLUTE_DEVIATION 32, GEO_BOUNDS 33,
 * GEO_CENTROID 34, TOP_HITS 35, TOP_METRICS 36, BUCKET_SCRIPT 37, BUCKET_SELECTOR 38,
 * MOVING_FN 39, SERIAL_DIFF 40, PERCENTILES_BUCKET 41, EXTENDED_STATS_BUCKET 42,
 * RARE_TERMS 43, NESTED 44, REVERSE_NESTED 45; GEOTILE_GRID 46 is a composite source, never a
 * result; SAMPLER 47, DIVERSIFIED_SAMPLER 48): new kinds go at the end,
 * and the fuzz seeds are regenerated when a number moves (tests/fuzz/seeds/). flags&1: the
 * min..extended_stats and weighted_avg metrics; flags&2: terms, multi_terms and
 * significant_terms; flags&4 = error_set; flags&8: auto_date_histogram (always); flags&16:
 * the sketch kinds holding a sketch (sc_hll_encode for cardinality, sc_tdigest_encode for
 * percentiles, percentile_ranks, median_absolute_deviation; docs/aggregations-sketches.md);
 * flags&32: top_hits and top_metrics (always); flags&64: rare_terms (always);
 * no other flag is valid. Nesting is limited to SC_AGG_MAX_DEPTH. */
#define SC_AGG_ENCODING_VERSION 1
#define SC_AGG_MAX_DEPTH 32

/* Appends the encoding of r to a malloc'd buffer: *out (free()) and *len. SC_ENOMEM. */
sc_status sc_agg_encode(const sc_agg_result *r, uint8_t **out, size_t *len) SC_MUST_USE;
/* Decodes bytes into a result in `a`; key bytes are copied. Validates everything: SC_ECORRUPT
 * on any malformed, truncated or trailing input (never reads out of bounds), SC_ENOMEM /
 * SC_ELIMIT from the arena. */
sc_status sc_agg_decode(const uint8_t *p, size_t len, sc_arena *a, sc_agg_result **out) SC_MUST_USE;

/* Adds Elasticsearch's MovingFunctions (max, min, sum, unweightedAvg, linearWeightedAvg,
 * ewma, holt, stdDev over `values`) to env, for moving_fn scripts. SC_ENOMEM. */
sc_status sc_agg_moving_functions_add(sc_script_env *env) SC_MUST_USE;

/* Deep equality of two results (keys, counts, exact metric bits), for tests. */
bool sc_agg_result_equal(const sc_agg_result *x, const sc_agg_result *y);

/* ---- helpers shared with the API ---- */

/* The doc value of a double field (sortable-long encoding) and back. */
double sc_agg_sortable_to_double(int64_t v);
int64_t sc_agg_double_to_sortable(double d);
/* The numeric doc value v of a field of type t as a double. */
double sc_agg_value_to_double(sc_agg_vtype t, int64_t v);
/* date_histogram: the start (UTC ms) of the bucket holding t, and the next bucket's start. */
int64_t sc_agg_round(const sc_agg_rounding *r, int64_t t);
int64_t sc_agg_round_next(const sc_agg_rounding *r, int64_t key);
/* The UTC offset (ms) of tz at instant t. */
int64_t sc_agg_tz_offset(const sc_agg_tz *tz, int64_t t);

#endif
