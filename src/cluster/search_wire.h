/* The encodings of the cross-node search phases (issue 13, "Search across nodes"): the node
 * query-phase request and response and the node fetch-phase request and response, as bodies of
 * transport messages (cluster/wire.h primitives; grammar in search_wire.c). The request ships
 * the search's pieces, not pointers: index names and the query DSL JSON (the data node re-parses
 * it with its own mapping), sort specs with resolved kinds, search_after, track_total_hits,
 * timeout, the aggregation JSON and the target shards. The response carries per-shard outcomes,
 * the node's partially reduced top k with sort values and shard ordinals, and the node's reduced
 * aggregation partial as sc_agg_encode bytes. Decoders allocate in a caller's arena, borrow
 * byte strings from the input, and return SC_ECORRUPT on any malformed input. */
#ifndef SC_CLUSTER_SEARCH_WIRE_H
#define SC_CLUSTER_SEARCH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "cluster/search.h"
#include "cluster/wire.h"
#include "search/sort.h"
#include "shard/shard_search.h"

/* Transport message types of the search phases. */
enum {
    SC_MSG_NODE_QUERY = 0x0101,
    SC_MSG_NODE_FETCH = 0x0102,
    SC_MSG_NODE_FREE_CONTEXT = 0x0103,
    SC_MSG_NODE_DFS = 0x0104,    /* node_query body -> term_stats (dfs_query_then_fetch) */
    SC_MSG_NODE_CANCEL = 0x0105, /* node_cancel body -> empty (cancel a search's child tasks) */
};

/* Longest parent task id ("<node id>:<task number>") a request may carry. */
#define SC_WIRE_MAX_TASK_ID 128

/* Most sort keys a request may carry (decoders refuse more). */
#define SC_WIRE_MAX_SORT_KEYS 1024

/* Fetch-phase extras (issue 14): what a data node computes per hit beyond _source and doc
 * values, asked for by flags in the node fetch request's extension. */
enum {
    SC_WIRE_FETCH_VERSIONS = 1u << 0,  /* _version, _seq_no, _primary_term */
    SC_WIRE_FETCH_EXPLAIN = 1u << 1,   /* _explanation */
    SC_WIRE_FETCH_NAMED = 1u << 2,     /* matched_queries and nested queries' inner_hits */
    SC_WIRE_FETCH_HIGHLIGHT = 1u << 3, /* highlight fragments */
    SC_WIRE_FETCH_ALL_ = (1u << 4) - 1,
};
/* Deepest explanation tree the fetch response may carry (decoders refuse deeper): queries nest
 * at most SC_DSL_MAX_DEPTH (64) levels, each adding a level or two, then a BM25 breakdown. */
#define SC_WIRE_MAX_EXPLAIN_DEPTH 256
/* Most rescorers and kNN clauses a request may carry (decoders refuse more). */
#define SC_WIRE_MAX_RESCORE 64
#define SC_WIRE_MAX_KNN 1024
#define SC_WIRE_MAX_RRF 1024

/* Flag bits of the query-phase features a node query request carries after its original
 * fields (an encoding without them, as older coordinators send, has none). */
enum {
    SC_WIRE_QF_PROFILE = 1u << 0,
    SC_WIRE_QF_RESCORE = 1u << 1,
    SC_WIRE_QF_COLLAPSE = 1u << 2,
    SC_WIRE_QF_KNN = 1u << 3,
    SC_WIRE_QF_RRF = 1u << 4,
    SC_WIRE_QF_KNOWN_ = (1u << 5) - 1,
};

/* An RRF sub-search after the first (the request's query is the first): a query, or a kNN
 * clause, as JSON. */
typedef struct sc_wire_rrf_sub {
    sc_slice json;
    bool knn;
} sc_wire_rrf_sub;

/* The ranked list of one RRF sub-search after the first on a node (cluster/search.h). */
typedef sc_node_ranked sc_wire_rrf_top;

/* One query rescorer (shard_search.h sc_shard_rescore) with its query as JSON. */
typedef struct sc_wire_rescore {
    sc_slice query_json;
    uint32_t window_size;
    float query_weight, rescore_weight;
    uint8_t mode; /* sc_shard_rescore_mode */
} sc_wire_rescore;

/* The query-phase features (issues 13/14/16) of a node query request. */
typedef struct sc_wire_query_features {
    bool profile;                   /* each shard's profile in the answer */
    const sc_wire_rescore *rescore; /* n_rescore rescorers, applied in order */
    size_t n_rescore;
    sc_slice collapse_field; /* empty = no collapse */
    bool collapse_numeric;
    sc_slice knn_json;      /* the top-level kNN clauses (a JSON array); empty = none */
    uint32_t knn_default_k; /* a clause's k when it gives none */
    const float *knn_floor; /* NULL or n_knn_floor per-clause min_score values (NaN: none) */
    size_t n_knn_floor;
    /* RRF: the sub-searches after the first, run on the same snapshots as the first; the
     * answer carries their ranked lists (sc_wire_node_query_resp.rrf) */
    const sc_wire_rrf_sub *rrf;
    size_t n_rrf;
    uint32_t rrf_default_k; /* a kNN sub-search's k when it gives none */
} sc_wire_query_features;

typedef struct sc_wire_node_query {
    sc_slice *index_names; /* per coordinator index number (targets' index_i) */
    /* per index: the filter of the aliases it was reached through (JSON; empty = none);
     * NULL when encoding = none for every index */
    sc_slice *index_filters;
    size_t n_indices;
    sc_slice query_json;       /* the "query" object; empty = match_all */
    sc_slice post_filter_json; /* empty = none */
    sc_slice aggs_json;        /* the "aggs" object; empty = none */
    sc_slice runtime_json;     /* the "runtime_mappings" object; empty = none */
    uint32_t k;                /* from + size */
    int64_t track_total_hits;  /* SC_TRACK_TOTAL_HITS_* encoding */
    int64_t timeout_ms;        /* -1 = none */
    bool count_only;
    uint64_t terminate_after; /* per shard; 0 = none */
    const sc_sort_spec *sort; /* kinds resolved by the coordinator */
    size_t n_sort;
    const sc_sort_key *search_after; /* n_sort values or NULL */
    const sc_shard_target *targets;
    size_t n_targets;
    uint32_t n_shards_total;  /* shards of the whole search (terms' default shard_size) */
    bool can_match;           /* run the can_match pre-filter (sc_node_query_request) */
    const sc_term_stats *dfs; /* dfs_query_then_fetch: the statistics to score with, or NULL */
    sc_slice parent_task;     /* the coordinator's search task "<node>:<n>"; empty = none */
    bool track_scores;        /* a field sort still scores hits (max_score per shard back) */
    /* min_score and indices_boost, applied by the data node as on a single node */
    bool has_min_score;
    float min_score;
    const float *index_boosts; /* per index (n_indices); NULL = 1 for every index */
    sc_wire_query_features fx;
    uint32_t batched_reduce_size; /* 0 = the default; never 1 */
} sc_wire_node_query;

/* One target's outcome. */
typedef struct sc_wire_shard_outcome {
    sc_status st;
    int http_status; /* when st != SC_OK */
    sc_slice type;   /* the error type ("query_shard_exception"...) */
    sc_slice reason;
    uint64_t total;
    bool total_gte;
    bool timed_out;
    bool terminated_early; /* terminate_after cut the shard short */
    bool skipped;          /* can_match: not searched */
    float max_score; /* with has_max_scores: the shard's best score under a field sort (NaN) */
    const struct sc_search_profile *profile; /* the shard's profile (profile: true), or NULL */
} sc_wire_shard_outcome;

typedef struct sc_wire_node_query_resp {
    uint64_t context_id; /* the data node's reader context for the fetch (0: none kept) */
    sc_wire_shard_outcome *results; /* one per target */
    size_t n_results;
    sc_node_hit *top; /* the node's partially reduced top k */
    size_t n_top;
    size_t n_sort;        /* keys per hit (0 under a score sort) */
    sc_slice agg_partial; /* sc_agg_encode bytes of the node's reduction; empty: none */
    bool has_max_scores;  /* results carry max_score (the request's track_scores) */
    bool collapse;              /* each hit carries its collapse_key (collapse) */
    const sc_wire_rrf_top *rrf; /* RRF: the ranked lists of the sub-searches after the first */
    size_t n_rrf;
    uint32_t n_partial_reduces; /* batched_reduce_size folds done on the node */
} sc_wire_node_query_resp;

typedef struct sc_wire_node_fetch {
    uint64_t context_id;
    const sc_node_hit *docs; /* shard_ix and doc of each winner on the node, rank order */
    size_t n_docs;
    bool source;
    sc_slice *dv_fields;
    size_t n_dv_fields;
    /* Fetch-phase extras (flags 0: none, and nothing below is sent). The data node re-parses
     * the query (and the highlight) with its own mappings, as the query phase does. */
    uint32_t flags;          /* SC_WIRE_FETCH_* */
    sc_slice *index_names;   /* per coordinator index number */
    sc_slice *index_filters; /* per index: its alias filter JSON (empty = none), or NULL */
    size_t n_indices;
    sc_slice query_json;       /* empty = match_all */
    sc_slice highlight_json;   /* the request's "highlight" object (HIGHLIGHT) */
    const uint32_t *doc_index; /* per doc: its index number (< n_indices) */
    const sc_term_stats *dfs;  /* explain under dfs_query_then_fetch: the global statistics */
} sc_wire_node_fetch;

typedef struct sc_wire_node_fetch_resp {
    sc_shard_fetched *docs; /* per requested doc */
    size_t n_docs;
    /* The request had fetch flags: each found doc carries its extras (highlights, versions,
     * matched named queries, explanation, inner hits) and n_inner[i] inner results. */
    bool extras;
    uint32_t *n_inner; /* per doc (arena when decoded); NULL = none anywhere */
} sc_wire_node_fetch_resp;

/* Encoders append to `out` (sticky status) and return its status. */
sc_status sc_wire_node_query_encode(const sc_wire_node_query *q, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_wire_node_query_resp_encode(const sc_wire_node_query_resp *r, sc_wire_buf *out)
    SC_MUST_USE;
sc_status sc_wire_node_fetch_encode(const sc_wire_node_fetch *f, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_wire_node_fetch_resp_encode(const sc_wire_node_fetch_resp *r, sc_wire_buf *out)
    SC_MUST_USE;

/* SC_MSG_NODE_CANCEL's body: the parent task id (1..SC_WIRE_MAX_TASK_ID bytes) whose child
 * tasks on the receiving node are cancelled. The decoded slice borrows p. */
sc_status sc_wire_node_cancel_encode(sc_slice parent_task, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_wire_node_cancel_decode(const uint8_t *p, size_t n, sc_slice *parent_task) SC_MUST_USE;

/* The term statistics of a dfs phase (search/term_stats.h): the answer to SC_MSG_NODE_DFS. */
sc_status sc_wire_term_stats_encode(const sc_term_stats *ts, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_wire_term_stats_decode(const uint8_t *p, size_t n, sc_arena *a, sc_term_stats *out)
    SC_MUST_USE;

/* Decoders: *out's arrays come from `a`, byte strings borrow `p` (keep it alive). SC_ECORRUPT
 * for malformed, truncated or trailing input (target index numbers and shard ordinals are
 * checked against their counts); SC_ENOMEM / SC_ELIMIT from the arena. */
sc_status sc_wire_node_query_decode(const uint8_t *p, size_t n, sc_arena *a,
                                    sc_wire_node_query *out) SC_MUST_USE;
sc_status sc_wire_node_query_resp_decode(const uint8_t *p, size_t n, sc_arena *a,
                                         sc_wire_node_query_resp *out) SC_MUST_USE;
sc_status sc_wire_node_fetch_decode(const uint8_t *p, size_t n, sc_arena *a,
                                    sc_wire_node_fetch *out) SC_MUST_USE;
sc_status sc_wire_node_fetch_resp_decode(const uint8_t *p, size_t n, sc_arena *a,
                                         sc_wire_node_fetch_resp *out) SC_MUST_USE;

#endif
