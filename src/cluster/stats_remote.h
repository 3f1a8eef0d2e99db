/* Cluster-wide index statistics (issue 13): a node holds only its own shard copies, so the
 * numbers of `_stats`, `_cat/indices` and `_cat/count` are gathered from the nodes holding each
 * copy, one SC_MSG_SHARD_STATS request per node (stats_wire.h). On a single node the numbers
 * are the local shards'. */
#ifndef SC_CLUSTER_STATS_REMOTE_H
#define SC_CLUSTER_STATS_REMOTE_H

#include <stdint.h>

#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/transport.h"

/* Registers the SC_MSG_SHARD_STATS handler on t for node n. */
sc_status sc_stats_remote_start(sc_node *n, sc_transport *t) SC_MUST_USE;

/* What the copies of some indices hold. */
typedef struct sc_cluster_stats {
    sc_index_stats primaries; /* the primary copy of every shard */
    sc_index_stats total;     /* every started copy */
    uint32_t n_copies;        /* copies the settings ask for: shards x (1 + replicas) */
    uint32_t n_answered;      /* started copies whose numbers are in total */
} sc_cluster_stats;

/* For each of list[0..n): out[i] (caller's array of n). Clustered: every started copy's
 * numbers, from this node for its own copies and from one request per other node holding
 * copies (a node that does not answer within 10 s leaves its copies out of n_answered). Single
 * node: the local shards (the primaries; replicas are never assigned; n_answered is the
 * number of shards). Thread-safe. */
void sc_cluster_index_stats(sc_node *node, sc_index **list, size_t n, sc_cluster_stats *out);

#endif
