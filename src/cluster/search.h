/* The search coordinator: query-then-fetch over every shard of the target indices.
 *
 * The per-node phases are plain structs (sc_node_query_request / _response and
 * sc_node_fetch_request / _response) so that a coordinator could send the same batch to a remote
 * node unchanged (DESIGN.md §7, lesson 5): one query-phase request per node covering all of that
 * node's shards; the node runs them with bounded concurrency on its search pool and partially
 * reduces (top k across its shards) before replying; the coordinator does the final reduce
 * (score desc, then shard index, then doc) and sends one fetch request per node for the winners.
 * In single-node mode the "send" is a direct call. One shard's query and fetch run in the shard
 * module (shard/shard_search.h), which returns typed results; this layer moves and reduces them.
 * Sort values are search/sort.h's sc_sort_key under sc_sort_spec; track_total_hits uses
 * search/searcher.h's SC_TRACK_TOTAL_HITS_* encoding, capped once per shard (in the shard
 * module) and once over the sum here (the final reduce). */
#ifndef SC_CLUSTER_SEARCH_H
#define SC_CLUSTER_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "cluster/node.h"
#include "cluster/tasks.h"
#include "search/query.h"
#include "search/searcher.h"
#include "search/sort.h"
#include "search/term_stats.h"
#include "shard/shard.h"
#include "shard/shard_search.h"

/* ---- the request as the API builds it ---- */

/* The named queries (`_name`) of one index's query tree: names[i] names queries[i]. */
typedef struct sc_search_named {
    const char *const *names;
    const sc_query *const *queries;
    size_t n;
    /* the inner_hits of the tree's nested queries (fetched for each hit), n_inner of them */
    const sc_shard_inner_spec *inner;
    size_t n_inner;
} sc_search_named;

typedef struct sc_search_request {
    sc_index **indices; /* targets (borrowed) */
    sc_query **queries; /* one tree per index (mappings differ), borrowed */
    size_t n_indices;
    uint32_t from, size;
    int64_t track_total_hits; /* SC_TRACK_TOTAL_HITS_ALL exact, _NONE none, N up to N */
    int64_t timeout_ms;       /* -1 = none */
    bool count_only;          /* _count: totals only, no hits, exact */
    uint64_t terminate_after; /* per shard: collect at most this many docs (0 = no limit) */
    bool fetch_source;
    sc_task *task; /* cancellation flag; may be NULL */
    /* Scroll: searcher snapshots pinned per target shard (index order, then shard number),
     * used instead of each shard's current one; NULL = current. */
    const sc_shard_snapshot *const *pinned;
    /* docvalue_fields / fields: values read from doc values for each hit (keyword, numeric,
     * date, boolean, ip fields), returned per hit as typed values (sc_shard_field_values). */
    const char *const *dv_fields;
    size_t n_dv_fields;
    /* Sort by fields (NULL/0 = by score). When set, the docs are ranked by these keys (then
     * shard, then doc); field kinds resolved (SC_SORT_BY_NUMERIC / _KEYWORD, see
     * shard_search.h); search_after (n_sort values, or NULL) skips docs that do not sort
     * strictly after it. */
    const sc_sort_spec *sort;
    size_t n_sort;
    const sc_sort_key *search_after;
    /* Aggregations: an optional extra pass per shard and the reduce of its partials
     * (shard_search.h); borrowed. NULL = none. */
    const sc_shard_collect_hook *collect;
    /* Shard selection (?routing, ?preference=_shards:..): when only_shards is set, a shard s of
     * index i is searched only if only_shards[i] (a bitmask over its shards, ceil(shards / 64)
     * words) has bit s. NULL = every shard. */
    const uint64_t *const *only_shards;
    /* Reciprocal rank fusion (rank.rrf, the rrf retriever; cluster/search_rrf.c): n_rrf > 0
     * sub-searches replace `queries`; sub j's tree for index i is rrf_queries[j * n_indices +
     * i]. Each sub-search's global top rrf_window hits are ranked (from 1) on the same pinned
     * snapshots and a doc scores sum(1 / (rrf_rank_constant + rank)) over the sub-searches that
     * rank it. */
    sc_query *const *rrf_queries;
    size_t n_rrf;
    uint32_t rrf_window, rrf_rank_constant;
    /* A search of top-level kNN clauses only (no query): each shard returns its best k per
     * clause and the coordinator keeps the best knn_cap (the sum of the clauses' k) of them,
     * hits and total. 0 = not such a search. */
    uint32_t knn_cap;
    /* Hybrid search (top-level kNN clauses with a query): clause j's SC_QUERY_KNN node inside
     * index i's tree is knn_global[j * n_indices + i]. Before the query phase each clause runs
     * alone on the same pinned snapshots for its global top k and its nodes' min_score
     * becomes the k-th best score, so the shards together contribute the global top k (as
     * Elasticsearch's DFS kNN phase; ties at the k-th score are all kept). n_knn_global 0 =
     * none. Single node only. */
    sc_query *const *knn_global;
    size_t n_knn_global;
    /* Highlighting (search/highlight.h): per index, the fields to highlight in its hits
     * (NULL = none; the array itself NULL = no highlighting). Needs fetch_source. */
    const sc_hl_spec *const *highlight;
    bool versions;                /* each hit's _version, _seq_no and _primary_term */
    const sc_search_named *named; /* per index (NULL = none): hits' matched_queries */
    /* each hit's _explanation of its score under explain_queries[index_i] (the query without
     * a post_filter; NULL: queries[index_i]) */
    bool explain;
    sc_query *const *explain_queries;
    bool track_scores; /* field sorts: hits keep their _score and max_score is set */
    /* rescore: per index, n_rescore rescorers applied in order (shard_search.h); NULL none */
    const sc_shard_rescore *const *rescore;
    size_t n_rescore;
    /* collapse (by score only): one hit per value of the field, NULL = none */
    const sc_shard_collapse *collapse;
    /* Clustered searches (cluster/placement.h) ship these to the data nodes, which re-parse
     * them with their own mappings (cluster/search_wire.h): the query, post_filter and aggs as
     * compact JSON text (borrowed; empty = none), and the body's runtime_mappings the
     * aggregations may read. Unused on a single node. */
    sc_slice query_json, post_filter_json, aggs_json, runtime_json;
    /* the "highlight" object (compact JSON; empty = none): the data nodes resolve it against
     * their own mappings in the fetch phase */
    sc_slice highlight_json;
    /* per index (n_indices), the alias filter the data nodes apply under the query (JSON;
     * empty = none), or NULL when no index has one */
    const sc_slice *alias_filter_json;
    /* min_score and indices_boost, shipped to the data nodes (`queries` already hold them):
     * per index (n_indices) the boost, or NULL = none */
    bool has_min_score;
    float min_score;
    const float *index_boosts;
    /* pre_filter_shard_size: the can_match pre-filter runs when the search targets more shards
     * than this; 0 = Elasticsearch's default (more than 128 shards, or a primary sort on a
     * field). It never runs with aggregations (see sc_node_query_request.can_match). */
    uint32_t pre_filter_shard_size;
    /* max_concurrent_shard_requests: query requests in flight per node of the search (0 = no
     * limit but the coordinator's 8 sender threads) */
    uint32_t max_concurrent_shard_requests;
    /* batched_reduce_size: a data node (over its shards) and the coordinator (over the nodes'
     * answers) fold every this many results into one partial result, bounding what they hold;
     * 0 = Elasticsearch's default, 512 (cluster/search_partial.c) */
    uint32_t batched_reduce_size;
    /* search_type=dfs_query_then_fetch: a first phase gathers the term statistics of every
     * target shard (search/term_stats.h) and every shard scores with their sum */
    bool dfs;
    /* profile: true: each searched shard's profile (search/profile.h) in the response (the
     * data nodes send theirs in the query answer). */
    bool profile;
    /* Clustered scroll / point in time (search_ctx.c): the coordinator's context, whose shards
     * are searched through their data nodes' search contexts; NULL = none */
    struct sc_scroll *ctx;
    uint32_t knn_default_k; /* clustered: a shipped kNN clause's k when it gives none */
    /* Clustered (issue 13/14/16), shipped with the query for the data nodes to rebuild:
     * rescore_json[k] is rescorer k's rescore_query (n_rescore of them; the other parameters
     * are those of rescore[0][k]); knn_clauses the top-level kNN clauses (each a JSON object;
     * a clause's k defaults to knn_default_k, above), ORed with the query on the data node as the
     * API does; knn_floor (NULL: none) per clause the min_score its kNN nodes take (NaN: none), set
     * by the coordinator's global kNN phase of a hybrid search. */
    const sc_slice *rescore_json;
    const sc_slice *knn_clauses;
    size_t n_knn_clauses;
    const float *knn_floor;
    /* With n_rrf: sub-search j as JSON (rrf_json[j]: a query, or a kNN clause when rrf_knn[j]),
     * which the data nodes rebuild. */
    const sc_slice *rrf_json;
    const bool *rrf_knn;
} sc_search_request;

typedef struct sc_result_hit {
    uint32_t index_i; /* into request.indices */
    uint32_t shard;
    float score;
    sc_slice id;                         /* arena */
    sc_slice source;                     /* arena; empty if not fetched */
    const sc_shard_field_values *fields; /* the requested doc-value fields that have values */
    size_t n_fields;
    const sc_sort_key *sort; /* n_sort keys when sorting by fields (arena), else NULL */
    const sc_shard_highlight *highlights; /* fields with snippets (arena), in spec order */
    size_t n_highlights;
    bool has_versions; /* request.versions and found */
    int64_t version, seq_no, primary_term;
    const uint32_t *matched; /* indices into request.named[index_i] it matches */
    size_t n_matched;
    const sc_explanation *explanation;  /* request.explain (NULL on an error) */
    const sc_shard_inner_result *inner; /* request.named[index_i].n_inner results, or NULL */
    const sc_sort_key *collapse_key;    /* with request.collapse (arena), else NULL */
} sc_result_hit;

typedef struct sc_shard_failure {
    uint32_t index_i;
    uint32_t shard;
    const char *node_id; /* the node that ran (or was to run) the shard; NULL: none */
    sc_cluster_error err;
} sc_shard_failure;

/* One shard's profile in a response. */
typedef struct sc_shard_profile {
    uint32_t index_i, shard;
    const struct sc_search_profile *profile; /* arena */
    const char *node_id; /* the data node that ran it (arena); NULL: this node */
} sc_shard_profile;

typedef struct sc_search_response {
    uint64_t total;
    bool total_is_lower_bound; /* relation "gte" */
    float max_score;           /* NaN when no hits */
    bool timed_out;
    bool terminated_early; /* terminate_after stopped some shard's collection */
    bool cancelled;
    uint32_t shards_total, shards_successful, shards_skipped, shards_failed;
    sc_shard_failure *failures; /* arena */
    size_t n_failures;
    sc_result_hit *hits; /* arena, in rank order, after `from` */
    size_t n_hits;
    /* With request.collect and its reduce: the reduced partial of every successful shard
     * (arena), else NULL. */
    void *agg_result;
    /* Clustered: transport requests the query phase sent (one per data node when batched, one
     * per shard when not; local work is not counted). */
    uint32_t query_requests;
    /* The coordinator's request breaker refused the reduce (the search fails with SC_ELIMIT):
     * the bytes it would have held and its limit; 0 otherwise. */
    uint64_t breaker_wanted, breaker_limit;
    /* num_reduce_phases as Elasticsearch reports it: the partial reduces batched_reduce_size
     * caused (on the data nodes and the coordinator) plus the final one */
    uint32_t num_reduce_phases;
    /* request.profile: the successful, searched shards' profiles in target order (arena) */
    sc_shard_profile *profiles;
    size_t n_profiles;
    /* Clustered, with request.knn_cap: the score of the knn_cap-th best merged hit (NaN when
     * fewer matched): the global kNN phase's floor. */
    float knn_kth_score;
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
    uint32_t k;                           /* from + size: how many top hits each shard returns */
    uint64_t deadline_ns;                 /* 0 = none (monotonic clock) */
    sc_cancel_token *token;               /* node-local: the task's token (cancel + deadline) */
    const sc_shard_collect_hook *collect; /* aggregations (optional, borrowed) */
    /* can_match pre-filter: a shard whose field bounds prove the query cannot match
     * (search/can_match.h) is not searched and reported skipped (the coordinator counts one
     * as run when all were skipped, as Elasticsearch runs one). */
    bool can_match;
    /* dfs_query_then_fetch: the statistics every shard scores with (borrowed), or NULL */
    const struct sc_term_stats *dfs;
} sc_node_query_request;

/* One hit of the node's partially reduced top k. */
typedef struct sc_node_hit {
    float score;
    uint32_t shard_ix;               /* which shard of the request */
    uint32_t doc;                    /* doc number within that shard's searcher snapshot */
    const sc_sort_key *keys;         /* n_sort sort keys when sorting by fields, else NULL */
    const sc_sort_key *collapse_key; /* with collapse: the doc's group */
} sc_node_hit;

/* One target shard's outcome on the node. */
typedef struct sc_node_shard_result {
    sc_status st;
    sc_cluster_error err; /* when st != SC_OK */
    uint64_t total;       /* capped by track_total_hits (shard level) */
    bool total_is_lower_bound;
    bool timed_out;
    bool terminated_early; /* terminate_after cut the shard's matches short */
    float max_score; /* track_scores under a field sort: the shard's best (NAN: none) */
    bool skipped;    /* can_match: not searched (st is SC_OK, no hits) */
    const sc_shard_snapshot *snapshot;       /* the docs refer to it (ref held until release) */
    bool pinned;                             /* snapshot belongs to a scroll: not released here */
    const struct sc_search_profile *profile; /* request.profile (shard_mem; NULL: none) */
} sc_node_shard_result;

typedef struct sc_node_query_response {
    sc_node_shard_result *results; /* one per target */
    sc_node_hit *top;              /* partially reduced top k across this node's shards */
    size_t n_top;
    /* With a collect hook: each target's partial (NULL when it failed), valid until
     * sc_node_query_release; and, when the hook has a reduce, their reduction (arena). */
    void **agg_partials;
    void *agg_reduced;
    uint32_t n_partial_reduces; /* folds of batched_reduce_size results done on this node */
    sc_arena *shard_mem; /* per target: its results' memory (freed by sc_node_query_release;
                          * the array is in the query phase's arena) */
} sc_node_query_response;

typedef struct sc_node_fetch_request {
    const sc_node_query_request *query;
    const sc_node_query_response *query_resp;
    const sc_node_hit *docs; /* the winners on this node, in rank order */
    size_t n_docs;
    bool source;
    const char *const *dv_fields;
    size_t n_dv_fields;
} sc_node_fetch_request;

typedef struct sc_node_fetch_response {
    sc_shard_fetched *docs; /* per doc, in the request's order (arena) */
} sc_node_fetch_response;

/* The ranked list of one RRF sub-search after the first on a node: its partially reduced top
 * k (score order; no sort keys) and its matches over the node's shards. */
typedef struct sc_node_ranked {
    sc_node_hit *top;
    size_t n_top;
    uint64_t total;
    bool total_gte;
} sc_node_ranked;

/* RRF on a data node: after the first sub-search's node query phase (req0, resp0, not yet
 * released), each further sub-search m (queries[m * n_indices + i] for index i) runs on the
 * same snapshots of req0's successful shards; its partially reduced top req0->k goes to
 * out[m] (arena). Used by the coordinator's local units and by the data nodes
 * (search_rrf.c). SC_ENOMEM / SC_ELIMIT, or the node phase's failure. */
sc_status sc_node_query_rrf_more(sc_node *n, const sc_node_query_request *req0,
                                 const sc_node_query_response *resp0, sc_query *const *queries,
                                 size_t n_more, sc_arena *arena, sc_node_ranked *out) SC_MUST_USE;
/* The data-node side of the query phase: runs every target shard (bounded concurrency on the
 * node's search pool) through sc_shard_query_run and reduces the top k (and, with a collect
 * hook that has a reduce, the shards' partials). The response must be released with
 * sc_node_query_release, also on failure. */
sc_status sc_node_query_phase(sc_node *n, const sc_node_query_request *req, sc_arena *arena,
                              sc_node_query_response *out) SC_MUST_USE;
/* The data-node side of the fetch phase: per shard, sc_shard_fetch_run over its winners in doc
 * order; results at their rank positions. */
sc_status sc_node_fetch_phase(sc_node *n, const sc_node_fetch_request *req, sc_arena *arena,
                              sc_node_fetch_response *out) SC_MUST_USE;
/* dfs_query_then_fetch's first phase on a data node: the term statistics of the request's
 * queries (search/term_stats.h) summed over the targets held here (a target whose shard is not
 * open is left out: the query phase reports it). Everything in *out is in `arena`. SC_ENOMEM /
 * SC_ELIMIT, SC_ECORRUPT from a term dictionary. */
sc_status sc_search_dfs_node(sc_node *n, const sc_search_request *sr,
                             const sc_shard_target *targets, size_t nt, sc_arena *arena,
                             sc_term_stats *out) SC_MUST_USE;
/* Releases the shard snapshots and the per-shard result memory held by a query response. */
void sc_node_query_release(const sc_node_query_request *req, sc_node_query_response *resp);

#endif
