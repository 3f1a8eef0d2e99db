/* Private to the distributed search coordinator: search_dist.c (grouping, the query phase per
 * unit) and search_dist_reduce.c (final reduce, the fetch per node). */
#ifndef SC_CLUSTER_SEARCH_DIST_H
#define SC_CLUSTER_SEARCH_DIST_H

#include <stdatomic.h>

#include "cluster/allocation.h"
#include "cluster/search_internal.h"
#include "cluster/transport.h"

/* One query-phase request: a data node's shards (batched) or one shard (unbatched). */
typedef struct sc__dist_unit {
    bool assigned, local, sent;
    _Atomic int state; /* 0 waiting, 1 running on a sender, 2 done */
    char node_id[SC_ALLOC_NODE_MAX];
    char host[128];
    uint16_t port;
    sc_shard_target *targets; /* the unit's targets, with the search's global shard_ix */
    size_t n_targets;
    sc_arena mem; /* the unit's memory (filled by a sender thread) */
    /* outcome */
    sc_status st;     /* SC_OK, or the whole unit failed (fail_*) */
    bool node_failed; /* ... because the node could not be reached or did not answer in time */
    int fail_status;
    char fail_type[64];
    char fail_reason[512];
    sc_node_shard_result *results; /* per target (when st == SC_OK) */
    sc_node_hit *top;              /* the unit's partially reduced top k */
    size_t n_top;
    void *agg;                  /* the unit's reduced aggregation partial, or NULL */
    sc_node_ranked *rrf;        /* RRF: the ranked lists of sub-searches 1.. (n_rrf - 1) */
    sc_arena agg_mem;           /* remote: the decoded aggregation partial's memory */
    size_t resp_len;            /* remote: bytes of resp_bytes */
    uint32_t n_partial_reduces; /* batched_reduce_size folds its node did */
    bool folded;                /* its top and aggregation are in the coordinator's fold */
    uint64_t context_id;        /* remote: the data node's reader context (0: none) */
    uint8_t *resp_bytes;        /* remote: the answer the decoded fields borrow (malloc'd) */
    sc_node_query_request lreq; /* local: the node phase's request and response */
    sc_node_query_response lresp;
    bool lresp_valid;
    /* per target: its failure here was retried on another copy (a later unit answers for it;
     * the final reduce ignores this entry), or NULL when nothing was retried */
    bool *superseded;
} sc__dist_unit;

/* The coordinator's reduce memory on its request breaker: the units' answers (decoded partial
 * top hits and aggregations) as they arrive and the final aggregation reduce. Released when the
 * search ends. */
typedef struct sc__dist_breaker {
    sc_node *node;
    _Atomic uint64_t reserved;
    atomic_bool tripped;
    _Atomic uint64_t wanted; /* reserved + the refused amount, when tripped */
} sc__dist_breaker;

/* Reserves bytes; false (and tripped, counted as a trip) when the breaker refuses them. Notes
 * the reservation's high-water mark as the breaker's peak. Thread-safe. */
bool sc__dist_breaker_add(sc__dist_breaker *b, uint64_t bytes);
/* Decodes a remote node query answer (search_wire.h) into the unit: its results, top hits,
 * reader context and aggregation partial (in u->mem; byte strings borrow p). SC_ECORRUPT when
 * it does not match the unit's targets. */
sc_status sc__dist_take_answer(const sc_search_request *sr, sc__dist_unit *u, const uint8_t *p,
                               size_t n) SC_MUST_USE;
/* Gives back bytes reserved with sc__dist_breaker_add. Thread-safe. */
void sc__dist_breaker_sub(sc__dist_breaker *b, uint64_t bytes);
/* Frees the data nodes' reader contexts of the units (a search that ends before its fetch). */
void sc__dist_free_contexts(const sc__dist_unit *units, size_t n_units, sc_transport *t);

/* The final reduce over the units (failures, totals, top hits, aggregations), then the fetch of
 * the page: local winners through sc_node_fetch_phase, remote ones with one SC_MSG_NODE_FETCH
 * per node (with the fetch-phase extras the request asks for: highlight, versions, named
 * queries and inner_hits, explain with `dfs` when not NULL); contexts of remote units without
 * winners are freed. Everything in *out is in `arena`. fold: the units folded as they arrived
 * (batched_reduce_size; units[u].folded; its hits are tagged with their unit). SC_ECANCELLED
 * when the task or a shard was cancelled. */
sc_status sc__dist_reduce(sc_node *n, const sc_search_request *sr, sc__dist_unit *units,
                          size_t n_units, const sc__partial *fold, sc_transport *t,
                          sc_cancel_token *token, sc__dist_breaker *br, const sc_term_stats *dfs,
                          sc_arena *arena,
                          sc_search_response *out) SC_MUST_USE;

#endif
