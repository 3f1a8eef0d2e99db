/* The search coordinator: query-then-fetch over every shard of the target indices.
 *
 * The per-node phases are plain structs (sc_node_query_request / _response and
 * sc_node_fetch_request / _response) so that a coordinator could send the same batch to a remote
 * node unchanged (DESIGN.md §7, lesson 5): one query-phase request per node covering all of that
 * node's shards; the node runs them with bounded concurrency on its search pool and partially
 * reduces (top k across its shards) before replying; the coordinator does the final reduce
 * (score desc, then shard index, then doc) and sends one fetch request per node for the winners.
 * In single-node mode the "send" is a direct call. */
#ifndef SC_CLUSTER_SEARCH_H
#define SC_CLUSTER_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "cluster/node.h"
#include "cluster/tasks.h"
#include "search/agg.h"
#include "search/query.h"
#include "shard/shard.h"

/* ---- sorting ---- */

typedef enum sc_sort_kind {
    SC_SORT_SCORE, /* descending by default */
    SC_SORT_DOC,   /* index order */
    SC_SORT_FIELD, /* doc values of a keyword or numeric-kind field */
} sc_sort_kind;

typedef struct sc_sort_field {
    sc_sort_kind kind;
    const char *field; /* SC_SORT_FIELD */
    bool desc;
    bool missing_first; /* default: missing values last in either order */
} sc_sort_field;

/* One doc's value for one sort field: numbers are the encoded doc value (dates in ms,
 * doubles as sortable longs), keywords the term bytes (valid while the snapshot is held). */
typedef struct sc_sort_value {
    bool missing;
    int64_t num;
    sc_slice str;
    float score;
} sc_sort_value;

/* ---- the request as the API builds it ---- */

typedef struct sc_search_request {
    sc_index **indices; /* targets (borrowed) */
    sc_query **queries; /* one tree per index (mappings differ), borrowed */
    size_t n_indices;
    uint32_t from, size;
    int64_t track_total_hits; /* -1 = exact; 0 = don't track; N = count up to N */
    int64_t timeout_ms;       /* -1 = none */
    bool count_only;          /* _count: totals only, no hits, exact */
    bool fetch_source;
    sc_task *task; /* cancellation flag; may be NULL */
    /* Scroll: searcher snapshots pinned per target shard (index order, then shard number),
     * used instead of each shard's current one; NULL = current. */
    const sc_shard_snapshot *const *pinned;
    /* docvalue_fields / fields: values read from doc values for each hit (keyword, numeric,
     * date, boolean, ip fields), returned per hit as a JSON object of arrays. */
    const char *const *dv_fields;
    size_t n_dv_fields;
    /* Sort by fields (NULL/0 = by score). When set, every matching doc of a shard is ranked by
     * these keys (then shard, then doc); search_after (n_sort values, or NULL) skips docs that
     * do not sort strictly after it. */
    const sc_sort_field *sort;
    size_t n_sort;
    const sc_sort_value *search_after;
    /* Shard selection (?routing, ?preference=_shards:..): when only_shards is set, a shard s of
     * index i is searched only if only_shards[i] (a bitmask over its shards, ceil(shards / 64)
     * words) has bit s. NULL = every shard. */
    const uint64_t *const *only_shards;
    /* Aggregations (NULL = none): the spec (built with the first index's mapping), the query
     * they run under per index (NULL = `queries`: differs with a post_filter, which only
     * narrows the hits), and search.max_buckets (0 = 65,536). Each shard collects a partial,
     * each node reduces its shards', the coordinator reduces and finalizes. */
    const sc_agg_spec *aggs;
    sc_query **agg_queries;
    uint64_t max_buckets;
} sc_search_request;

typedef struct sc_result_hit {
    uint32_t index_i; /* into request.indices */
    uint32_t shard;
    float score;
    sc_slice id;               /* arena */
    sc_slice source;           /* arena; empty if not fetched */
    sc_slice fields;           /* arena: {"field":[values],...} or empty */
    const sc_sort_value *sort; /* n_sort keys when sorting by fields (arena), else NULL */
} sc_result_hit;

typedef struct sc_shard_failure {
    uint32_t index_i;
    uint32_t shard;
    sc_cluster_error err;
} sc_shard_failure;

typedef struct sc_search_response {
    uint64_t total;
    bool total_is_lower_bound; /* relation "gte" */
    float max_score;           /* NaN when no hits */
    bool timed_out;
    bool cancelled;
    uint32_t shards_total, shards_successful, shards_skipped, shards_failed;
    sc_shard_failure *failures; /* arena */
    size_t n_failures;
    sc_result_hit *hits; /* arena, in rank order, after `from` */
    size_t n_hits;
    /* With request.aggs: the final (finalized) result (arena), NULL when no shard returned
     * one; agg_error is set (with agg_too_many_buckets for too_many_buckets_exception) when
     * the final reduce failed. */
    sc_agg_result *aggs;
    bool agg_too_many_buckets;
    char agg_error[256];
} sc_search_response;

/* Runs a search (query phase on every shard in parallel, reduce, fetch). Results live in
 * `arena`. Per-shard failures are reported in the response (SC_OK); SC_ECANCELLED when the
 * task was cancelled; SC_ENOMEM/SC_ELIMIT for the request's memory. Thread-safe. */
sc_status sc_search_run(sc_node *n, const sc_search_request *req, sc_arena *arena,
                        sc_search_response *out) SC_MUST_USE;

/* ---- per-node phases (the wire format of a future transport) ---- */

typedef struct sc_shard_target {
    uint32_t index_i;  /* coordinator's index number */
    uint32_t shard;    /* shard number within the index */
    uint32_t shard_ix; /* coordinator-global shard ordinal (tie-break order) */
    uint32_t pin_ix;   /* ordinal over every shard of the request's indices (into pinned) */
} sc_shard_target;

typedef struct sc_node_query_request {
    const sc_search_request *search; /* the request, shipped once per node */
    const sc_shard_target *targets;
    size_t n_targets;
    uint32_t k;             /* from + size: how many top hits each shard returns */
    uint64_t deadline_ns;   /* 0 = none (monotonic clock) */
    sc_cancel_token *token; /* node-local: the task's token (cancel + deadline) */
} sc_node_query_request;

typedef struct sc_shard_hit {
    float score;
    uint32_t shard_ix;         /* which shard of the request */
    uint32_t doc;              /* doc number within that shard's searcher snapshot */
    const sc_sort_value *keys; /* n_sort sort keys when sorting by fields, else NULL */
} sc_shard_hit;

typedef struct sc_shard_query_result {
    sc_status st;
    sc_cluster_error err; /* when st != SC_OK */
    uint64_t total;
    bool total_is_lower_bound;
    bool timed_out;
    void *snapshot; /* the shard searcher the docs refer to (ref held until fetch) */
    bool pinned;    /* snapshot belongs to a scroll: not released here */
    sc_agg_result *aggs; /* the shard's aggregation partial (arena), NULL when none */
} sc_shard_query_result;

typedef struct sc_node_query_response {
    sc_shard_query_result *results; /* one per target */
    sc_shard_hit *top;              /* partially reduced top k across this node's shards */
    size_t n_top;
    sc_agg_result *aggs; /* the node's partial reduce of its shards' aggregations, or NULL */
} sc_node_query_response;

typedef struct sc_node_fetch_request {
    const sc_node_query_request *query;
    const sc_node_query_response *query_resp;
    const sc_shard_hit *docs; /* the winners on this node, in rank order */
    size_t n_docs;
    bool source;
    const char *const *dv_fields;
    size_t n_dv_fields;
} sc_node_fetch_request;

typedef struct sc_node_fetch_response {
    sc_slice *ids;     /* per doc */
    sc_slice *sources; /* per doc (empty when not requested or missing) */
    sc_slice *fields;  /* per doc: docvalue fields JSON object, or empty */
} sc_node_fetch_response;

/* The data-node side of the query phase: runs every target shard (bounded concurrency on the
 * node's search pool) and reduces the top k. */
sc_status sc_node_query_phase(sc_node *n, const sc_node_query_request *req, sc_arena *arena,
                              sc_node_query_response *out) SC_MUST_USE;
/* The data-node side of the fetch phase. */
sc_status sc_node_fetch_phase(sc_node *n, const sc_node_fetch_request *req, sc_arena *arena,
                              sc_node_fetch_response *out) SC_MUST_USE;
/* Releases the shard snapshots held by a query response. */
void sc_node_query_release(const sc_node_query_request *req, sc_node_query_response *resp);

#endif
