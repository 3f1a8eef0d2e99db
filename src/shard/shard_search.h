/* A shard's query phase and fetch phase: one query tree over one searcher snapshot
 * (shard/shard.h) through the search layer (search/searcher.h, search/sort.h), returning typed
 * results -- the top docs with their sort values (search/sort.h's sc_sort_spec / sc_sort_key,
 * the one sort vocabulary from the API down), the total and its relation, timeouts, errors, an
 * optional aggregation partial -- and, for the winners, _id, _source and doc-value fields as
 * typed values. No JSON here: the cluster layer moves and reduces these, the API layer writes
 * them (DESIGN.md §5).
 *
 * track_total_hits uses search/searcher.h's encoding everywhere: SC_TRACK_TOTAL_HITS_ALL
 * (INT64_MAX) exact, SC_TRACK_TOTAL_HITS_NONE (0) no total, N count up to N. At shard level the
 * cap is applied once, by sc_shard_query_run on the shard's total (sc_search_total_cap); the
 * coordinator applies the same rule once more to the sum (the final reduce). */
#ifndef SC_SHARD_SHARD_SEARCH_H
#define SC_SHARD_SHARD_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/highlight.h"
#include "search/iter.h"
#include "search/query.h"
#include "search/explain.h"
#include "search/searcher.h"
#include "search/sort.h"
#include "shard/shard.h"

/* A shard-level failure in Elasticsearch's terms. `reason` does not name the shard: the caller
 * that knows the index and shard number adds them. */
typedef struct sc_shard_search_error {
    int status;       /* HTTP status: 400 bad query, 429 memory budget, 500 internal */
    const char *type; /* static string: "query_shard_exception", "circuit_breaking_exception",
                         "task_cancelled_exception", "illegal_argument_exception", "exception" */
    char reason[256];
} sc_shard_search_error;

/* ---- the aggregation hook ---------------------------------------------------------------- */

/* What a collect hook sees for one shard. Everything is borrowed for the duration of the call. */
typedef struct sc_shard_collect_call {
    const sc_shard_snapshot *snapshot; /* the shard: segments and the mapping it was built with */
    const sc_searcher *searcher;       /* the same segments as the search layer takes them */
    const sc_query *query;
    sc_cancel_token *token; /* check it as the searcher does (per window / leaf) */
    sc_arena *scratch;      /* working memory with the query's byte budget; freed
                               when the shard query returns */
    sc_arena *out;          /* the partial's memory: lives until the caller's reduce */
    bool counts_total;      /* k == 0 with a tracked total: *n_matched_out is the shard's total */
} sc_shard_collect_call;

/* An optional extra pass over a shard's matches (aggregations). A shard query with k == 0 and a
 * hook runs only the hook's pass, whose match count is the shard's total; with k > 0 it runs
 * the top-k pass and then the hook's pass (the total comes from the top-k pass).
 *
 * run: called once per shard query; must visit every matching live doc (deletes applied) and
 *   return SC_OK with *partial_out (memory from call->out, or NULL) and *n_matched_out (the
 *   number of docs matching call->query; the whole count unless the token fired; read only
 *   when call->counts_total). A hook that visits other docs than call->query's (aggregations
 *   beside a post_filter) counts call->query's matches itself when call->counts_total. On failure
 *   it returns an error status and fills err (status, static type, reason); SC_ELIMIT with
 *   call->scratch->over_budget set is reported as the memory budget. Must be thread-safe: the
 *   shards of a node run it concurrently with the same ctx.
 * reduce: combines n partials (entries may be NULL: failed or empty shards) into one of the
 *   same kind in *out_partial (memory from `out`). Used on the data node over its shards (the
 *   node-level partial reduce) and by the coordinator over the nodes' reductions. May be NULL
 *   (then the node response carries the per-shard partials only). Called from one thread. */
typedef struct sc_shard_collect_hook {
    void *ctx;
    sc_status (*run)(void *ctx, const sc_shard_collect_call *call, void **partial_out,
                     uint64_t *n_matched_out, sc_shard_search_error *err);
    sc_status (*reduce)(void *ctx, void *const *partials, size_t n, sc_arena *out,
                        void **out_partial, sc_shard_search_error *err);
    /* encode / decode: a partial as bytes that cross nodes (the data node encodes its reduced
     * partial, the coordinator decodes it into `out`). encode's *bytes is malloc'd (free()).
     * decode returns SC_ECORRUPT on bad bytes. Both may be NULL (then a clustered search with
     * this hook fails on remote nodes). */
    sc_status (*encode)(void *ctx, const void *partial, uint8_t **bytes, size_t *len);
    sc_status (*decode)(void *ctx, const uint8_t *bytes, size_t len, sc_arena *out, void **partial);
} sc_shard_collect_hook;

/* ---- query phase ------------------------------------------------------------------------- */

/* rescore's score_mode: how a window doc's two scores combine when the rescore query matches. */
typedef enum sc_shard_rescore_mode {
    SC_RESCORE_TOTAL,
    SC_RESCORE_MULTIPLY,
    SC_RESCORE_AVG,
    SC_RESCORE_MAX,
    SC_RESCORE_MIN,
} sc_shard_rescore_mode;

/* Field collapsing: one hit per value of `field` (its best by score; docs without a value
 * form one group), from keyword (sorted-set) or numeric doc values. */
typedef struct sc_shard_collapse {
    const char *field;
    bool numeric;
} sc_shard_collapse;

/* One query rescorer (Elasticsearch's rescore.query): the shard's top window_size docs get
 * query_weight * score, combined by mode with rescore_weight * the rescore query's score where
 * it matches; the docs past the window get query_weight * score; then all are re-sorted. */
typedef struct sc_shard_rescore {
    const sc_query *query;
    uint32_t window_size;
    float query_weight, rescore_weight;
    sc_shard_rescore_mode mode;
} sc_shard_rescore;

typedef struct sc_shard_query_args {
    const sc_shard_snapshot *snapshot; /* held by the caller for the call (and while the
                                          results' keyword sort values are read) */
    const sc_query *query;
    uint32_t k;               /* from + size: top docs to return; 0 = total (and hook) only */
    int64_t track_total_hits; /* SC_TRACK_TOTAL_HITS_ALL / _NONE / N */
    /* Sort (NULL/0: by score, ties by doc). Field kinds must be resolved (SC_SORT_BY_NUMERIC /
     * SC_SORT_BY_KEYWORD; a field without doc values of that kind is missing in every doc). */
    const sc_sort_spec *sort;
    size_t n_sort;
    const sc_sort_key *search_after;      /* n_sort values or NULL (field sort only) */
    sc_cancel_token *token;               /* cancellation + deadline; may be NULL */
    const sc_shard_collect_hook *collect; /* optional (aggregations) */
    const sc_shard_rescore *rescore;      /* applied in order after the top k by score (no
                                             sort): k grows to the largest window */
    size_t n_rescore;
    const sc_shard_collapse *collapse; /* by score only: the top k groups' best docs */
    bool track_scores; /* field sort: score the docs anyway, and the best score (max_score) */
    /* dfs_query_then_fetch: the whole search's term statistics (search/term_stats.h), or NULL
     * for the shard's own */
    const struct sc_term_stats *dfs;
    bool profile; /* profile: true: res->profile gets the plan's records and the times */
    /* terminate_after (0 = none): only the first n matching docs in index order (segment by
     * segment, ascending doc ids) are collected, by the top docs, the count and the hook */
    uint64_t terminate_after;
} sc_shard_query_args;

/* One of the shard's top docs. */
typedef struct sc_shard_top_doc {
    uint32_t doc;                    /* shard-global doc id in the snapshot */
    float score;                     /* 0 under a field sort that does not sort by _score */
    const sc_sort_key *sort;         /* n_sort values under a field sort, else NULL; keyword bytes
                                        point into the snapshot's segments */
    const sc_sort_key *collapse_key; /* with args.collapse: the doc's group (keyword bytes in
                                        the snapshot; missing: no value), else NULL */
} sc_shard_top_doc;

typedef struct sc_shard_query_result {
    sc_shard_top_doc *docs; /* best first (score desc or the sort, then doc asc), <= k */
    size_t n_docs;
    uint64_t total;            /* matching live docs, capped by track_total_hits */
    bool total_gte;            /* relation "gte": more docs match than `total` */
    bool timed_out;            /* the token's deadline passed: results are partial */
    void *agg_partial;         /* the collect hook's partial (NULL without a hook) */
    float max_score;           /* args.track_scores under a sort: best score (NAN: none) */
    struct sc_search_profile *profile; /* args.profile: the shard's profile (in `out`) */
    bool terminated_early;     /* args.terminate_after cut the matches short */
    sc_shard_search_error err; /* when the call fails */
} sc_shard_query_result;

/* Runs the shard's query phase: top k by score (search/searcher.h) or by the sort
 * (search/sort.h, with search_after), the total as track_total_hits asks (an exact count
 * without scoring when k == 0), then the collect hook if any. `scratch` gives the query's
 * working memory and its byte budget (the caller frees it after the call); everything in *out
 * (docs, sort values, the agg partial) is allocated from `out` (keyword sort values excepted:
 * they point into the snapshot).
 * Returns SC_OK (timed_out may be set), SC_ECANCELLED (the token was cancelled), or an error
 * with out->err filled: SC_ELIMIT (an expansion limit: 400; or the scratch budget: 429
 * circuit_breaking_exception), SC_EPARSE / SC_EUNSUPPORTED / SC_EINVAL (400
 * query_shard_exception), SC_ECORRUPT / SC_EIO / SC_ENOMEM (500). Thread-safe for distinct
 * arenas and results. Complexity: the search's. */
sc_status sc_shard_query_run(const sc_shard_query_args *args, sc_arena *scratch, sc_arena *out,
                             sc_shard_query_result *res) SC_MUST_USE;

/* Fills segs[0..snap->n_segments) and *s with the snapshot's segments as the search layer takes
 * them (borrowed from snap). */
void sc_shard_searcher_init(const sc_shard_snapshot *snap, sc_searcher_segment *segs,
                            sc_searcher *s);

/* ---- fetch phase ------------------------------------------------------------------------- */

/* How a fetched doc value reads. Numeric kinds carry int64 values, the others term bytes. */
typedef enum sc_shard_value_type {
    SC_SHARD_VALUE_LONG,    /* int64: integer types (and numerics without a mapping) */
    SC_SHARD_VALUE_DOUBLE,  /* int64: a double/float in the sortable-long encoding */
    SC_SHARD_VALUE_DATE,    /* int64: epoch millis (date_nanos: nanos) */
    SC_SHARD_VALUE_BOOLEAN, /* int64: 0 or 1 */
    SC_SHARD_VALUE_IP,      /* bytes: 16-byte IPv6 (IPv4 mapped) */
    SC_SHARD_VALUE_TERM,    /* bytes: keyword terms */
} sc_shard_value_type;

/* The doc values of one requested field for one doc (at least one value). */
typedef struct sc_shard_field_values {
    uint32_t field; /* index into sc_shard_fetch_args.fields */
    sc_shard_value_type type;
    bool numeric; /* values in nums, else in terms */
    size_t n_values;
    const int64_t *nums;   /* ascending (doc-values order) */
    const sc_slice *terms; /* ascending term order */
} sc_shard_field_values;

/* The snippets of one highlighted field of one doc (at least one). */
typedef struct sc_shard_highlight {
    uint32_t field; /* index into the sc_hl_spec's fields */
    const sc_slice *frags;
    size_t n_frags;
} sc_shard_highlight;

/* inner_hits of a nested query (shard_inner.c): for each fetched root doc, its nested child
 * docs of `path` that `query` (the nested query's inner query) matches, best first (score
 * descending, ties in source order), `from` skipped, at most `size`. */
typedef struct sc_shard_inner_spec {
    const char *name; /* the response key (inner_hits.name, default the path) */
    sc_slice path;
    const sc_query *query;
    uint32_t from, size; /* 0, 3 */
    bool source;         /* _source of each nested object (default true) */
} sc_shard_inner_spec;

typedef struct sc_shard_inner_hit {
    uint32_t offset; /* the object's position among the root's nested objects of path */
    float score;
    sc_slice source; /* the nested object as compact JSON; empty unless spec.source */
} sc_shard_inner_hit;

typedef struct sc_shard_inner_result {
    uint64_t total;  /* matching children of this root */
    float max_score; /* NaN when total is 0 */
    const sc_shard_inner_hit *hits;
    size_t n_hits;
} sc_shard_inner_result;

typedef struct sc_shard_fetched {
    bool found; /* false: the doc id is not in the snapshot */
    sc_slice id;
    sc_slice source;               /* empty unless args.source */
    sc_shard_field_values *fields; /* only fields with values, in request order */
    size_t n_fields;
    sc_shard_highlight *highlights; /* only fields with snippets, in spec order */
    size_t n_highlights;
    bool has_versions; /* args.versions and the doc has them */
    int64_t version, seq_no, primary_term;
    const uint32_t *matched; /* indices into args.named of the named queries it matches */
    size_t n_matched;
    const sc_explanation *explanation; /* args.explain: why it scores (NULL on an error) */
    const sc_shard_inner_result *inner; /* args.n_inner results (one per spec), or NULL */
} sc_shard_fetched;

typedef struct sc_shard_fetch_args {
    const sc_shard_snapshot *snapshot;
    const uint32_t *docs; /* shard-global doc ids; ascending order reads stored blocks once */
    size_t n_docs;
    bool source;               /* read _source (else the _id comes from its doc values) */
    const char *const *fields; /* doc-value fields to read (docvalue_fields / fields) */
    size_t n_fields;
    const sc_hl_spec *highlight; /* fields to highlight from _source (search/highlight.h), or
                                    NULL; read from _source even without `source` */
    bool versions;               /* read _version, _seq_no and _primary_term (their doc values) */
    /* Named queries (the `_name`s of the request's query): which of them each doc matches. */
    const sc_query *const *named;
    size_t n_named;
    /* explain: the query whose score each doc's explanation breaks down (search/explain.h),
     * with the statistics the query phase scored with (dfs, or NULL: the shard's own) */
    const sc_query *explain;
    const struct sc_term_stats *dfs;
    /* inner_hits of the query's nested queries (n_inner specs) */
    const sc_shard_inner_spec *inner;
    size_t n_inner;
} sc_shard_fetch_args;

/* shard_inner.c: the inner hits of found roots out[0..n_docs) (sc_shard_fetch_run calls it
 * when args->n_inner). Children scored with the shard's statistics, as the query phase. */
sc_status sc__shard_inner_hits(const sc_shard_fetch_args *args, sc_arena *arena,
                               sc_shard_fetched *out) SC_MUST_USE;

/* Runs the fetch phase for args->docs: out[i] for docs[i] (the caller's array of n_docs),
 * everything copied into `arena` (valid after the snapshot is released). A doc whose stored
 * fields cannot be read is left not found. SC_ENOMEM / SC_ELIMIT (the arena's budget).
 * Thread-safe for distinct arenas. */
sc_status sc_shard_fetch_run(const sc_shard_fetch_args *args, sc_arena *arena,
                             sc_shard_fetched *out) SC_MUST_USE;

#endif
