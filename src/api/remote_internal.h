/* Private to the data-node search handlers (remote_search.c) and their reader contexts
 * (remote_ctx.c). */
#ifndef SC_API_REMOTE_INTERNAL_H
#define SC_API_REMOTE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "api/agg_internal.h"
#include "api/remote.h"
#include "cluster/search.h"
#include "cluster/search_wire.h"
#include "shard/shard.h"

/* Everything one query-phase request holds while it runs. */
typedef struct remote_query {
    sc_wire_node_query q;
    sc_index **list; /* per shipped index name; NULL when this node lacks it */
    sc_query **queries;
    sc_query **agg_queries;
    const sc_shard_rescore **rescore; /* per index, q.fx.n_rescore each (NULL: none) */
    sc_shard_collapse collapse;
    json_t *knnj;           /* the kNN clauses (an array), or NULL */
    sc_query **rrf_queries; /* RRF: sub-search m + 1 of index i at [m * n_indices + i] */
    sc__agg_hook agg;
    sc_agg_spec *spec;
    json_t *qj, *pfj, *aggj, *rtj; /* rtj: runtime_mappings (its scripts' text) */
    char reason[256];
} remote_query;

/* Resolves rq->q's indices and parses its JSON with this node's mappings (remote_search.c);
 * SC_EPARSE with rq->reason set. Release with sc__remote_rq_fini, also on failure. */
sc_status sc__remote_prepare(sc_api_remote *r, remote_query *rq, sc_arena *a) SC_MUST_USE;
void sc__remote_rq_fini(remote_query *rq);
/* A shard's outcome on the wire: status, totals, timed_out, skipped, and for a failure its
 * HTTP status, type ("exception" when none) and reason. */
sc_wire_shard_outcome sc__remote_outcome(const sc_node_shard_result *s);
/* The end of a handler of rq: when st failed, its message in errmsg (rq->reason, else "index
 * missing on the data node" for SC_ENOTFOUND, else the status); then sc__remote_rq_fini.
 * Returns st. */
sc_status sc__remote_rq_finish(remote_query *rq, sc_status st, char *errmsg, size_t cap);
/* Registers the search-context handlers (remote_ctx_search.c: clustered scroll, point in time,
 * _terms_enum) on t. */
sc_status sc__remote_ctx_register(sc_api_remote *r, sc_transport *t) SC_MUST_USE;
/* _terms_enum on this node's copies (api_terms_enum.c): decodes a terms_req
 * (cluster/ctx_wire.h) and answers its terms_resp. */
sc_status sc__terms_enum_node(sc_node *n, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
    SC_MUST_USE;

/* The snapshots a query-phase answer's hits refer to, by the coordinator's shard ordinal. */
typedef struct sc__remote_ctx {
    uint64_t id;
    uint64_t created_ns;
    size_t n;
    uint32_t *shard_ix;
    const sc_shard_snapshot **snapshots; /* one reference each */
    struct sc__remote_ctx *next;
} sc__remote_ctx;

struct sc_api_remote {
    sc_node *node;
    pthread_mutex_t mu;
    sc__remote_ctx *contexts;
    uint64_t next_id;
};

/* Registers c (taking it) and returns its new id; reaps expired contexts. */
uint64_t sc__remote_ctx_put(sc_api_remote *r, sc__remote_ctx *c);
/* Removes and returns the context with that id (the caller frees it), or NULL. */
sc__remote_ctx *sc__remote_ctx_take(sc_api_remote *r, uint64_t id);
/* An empty context with room for the snapshots of n_targets shards, or NULL (out of memory). */
sc__remote_ctx *sc__remote_ctx_new(size_t n_targets);
/* Releases c's snapshots and frees it. NULL is a no-op. */
void sc__remote_ctx_free(sc__remote_ctx *c);
void sc__remote_ctx_free_all(sc_api_remote *r);

/* The fetch-phase extras of a node fetch request (remote_fetch.c): the shipped query parsed
 * with this node's mappings, its named queries and inner_hits, the highlight specs, and the
 * search request sc_node_fetch_phase reads (sr). */
typedef struct sc__remote_fetch {
    sc_index **list; /* per shipped index (a reference each) */
    size_t n;
    sc_query **queries;     /* per index: the query with its alias filter (arena) */
    sc_search_named *named; /* per index (arena) */
    sc_search_request sr;
    struct json_t *qj, *hlj;
    char reason[256]; /* why preparing failed, when it did */
} sc__remote_fetch;

/* Prepares *rf for f (f->flags not 0); everything in `a` but what sc__remote_fetch_fini frees
 * (also after a failure). SC_ENOTFOUND (an index this node lacks), SC_EPARSE (the query or the
 * highlight does not parse here: rf->reason), SC_ECORRUPT, SC_ENOMEM. */
sc_status sc__remote_fetch_prepare(sc_node *node, const sc_wire_node_fetch *f, sc_arena *a,
                                   sc__remote_fetch *rf) SC_MUST_USE;
void sc__remote_fetch_fini(sc__remote_fetch *rf);

#endif
