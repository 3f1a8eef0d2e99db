/* The data-node side of the cross-node search phases (issue 13): transport handlers for
 * SC_MSG_NODE_QUERY, SC_MSG_NODE_FETCH and SC_MSG_NODE_FREE_CONTEXT (cluster/search_wire.h).
 * A query request is re-parsed with this node's mappings (query, post_filter, aggs JSON), run
 * over the listed shards through sc_node_query_phase (bounded concurrency, partial reduce of
 * top hits and aggregations) and answered in one message; the shard snapshots its top hits
 * refer to are kept in a reader context (id in the response) until the fetch, an explicit free,
 * or 5 minutes. */
#ifndef SC_API_REMOTE_H
#define SC_API_REMOTE_H

#include "base/status.h"
#include "cluster/node.h"
#include "cluster/transport.h"

typedef struct sc_api_remote sc_api_remote;

/* Registers the handlers on t for node n. *out: stop with sc_api_remote_stop after the
 * transport is closed (no handler runs any more). SC_ENOMEM. */
sc_status sc_api_remote_start(sc_node *n, sc_transport *t, sc_api_remote **out) SC_MUST_USE;
/* Releases every reader context and frees. NULL is a no-op. */
void sc_api_remote_stop(sc_api_remote *r);

#endif
