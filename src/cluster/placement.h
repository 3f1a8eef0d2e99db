/* sc_placement: where shard copies live when clustered, and the node-to-node transport that
 * reaches them (issue 13, first increment of "Search across nodes").
 *
 * A placement thread follows the membership's view (membership.h): every index in the cluster
 * metadata is created on this node with the metadata's uuid when absent (empty shards; the
 * metadata is not published back), an index that disappears from the metadata after this node
 * saw it is deleted locally, and mappings in the metadata are merged into the local ones. It
 * also publishes an immutable, refcounted snapshot of the routing table and of the live nodes'
 * transport addresses, which the search coordinator and write routing read without touching
 * etcd. Deliberate limits of this increment: every node holds every shard of every index (the
 * copies the routing table does not assign to it stay empty and are never searched); only
 * primaries are searched and written; nothing is replicated or recovered. Single-node servers
 * have no placement (sc_node_placement returns NULL) and keep their code paths. */
#ifndef SC_CLUSTER_PLACEMENT_H
#define SC_CLUSTER_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/allocation.h"
#include "cluster/membership.h"
#include "cluster/node.h"
#include "cluster/transport.h"

/* Starts following `m` for node n and installs the placement on the node
 * (sc_node_set_placement). The transport is borrowed (it must outlive the placement). *out:
 * stop with sc_placement_stop. SC_ENOMEM, SC_EIO (thread), SC_ELIMIT (listener slots). */
sc_status sc_placement_start(sc_node *n, sc_membership *m, sc_transport *t, sc_placement **out)
    SC_MUST_USE;
/* Uninstalls from the node, stops the thread and frees. Call after sc_membership_stop (the
 * membership calls the placement back until then). NULL is a no-op. */
void sc_placement_stop(sc_placement *p);

/* The transport (borrowed). */
sc_transport *sc_placement_transport(sc_placement *p);

/* Where one shard's primary is. */
typedef struct sc_shard_location {
    bool known;    /* the routing table has the index (a new index's comes a moment later) */
    bool assigned; /* a primary on a live node is known */
    bool local;    /* ... and it is this node */
    char node_id[SC_ALLOC_NODE_MAX];
    char host[128]; /* its transport address (when not local) */
    uint16_t port;
} sc_shard_location;

typedef struct sc_placement_snapshot sc_placement_snapshot;
/* The current snapshot (a reference: release it). Never NULL after start. Thread-safe. */
sc_placement_snapshot *sc_placement_acquire(sc_placement *p);
void sc_placement_release(sc_placement_snapshot *s);
/* Looks up the primary of shard `shard` of `index` in the snapshot. O(log indices). */
void sc_placement_primary(const sc_placement_snapshot *s, const char *index, uint32_t shard,
                          sc_shard_location *out);
/* The i-th searchable copy of a shard (i from 0): live copies in the in-sync set, the primary
 * first, then the replicas in routing order. false (and *out zeroed) when there is no such copy.
 * The search coordinator walks them to retry a failed shard on another copy. O(copies x nodes). */
bool sc_placement_copy(const sc_placement_snapshot *s, const char *index, uint32_t shard, size_t i,
                       sc_shard_location *out);
/* The cluster setting search.batched_query_phase (default true; read once a second and on
 * view changes): false sends one query-phase request per shard instead of one per node. */
bool sc_placement_batched(const sc_placement_snapshot *s);
/* The etcd revision the snapshot reflects (0 before the first view). */
int64_t sc_placement_revision(const sc_placement_snapshot *s);

/* For replication (replication.h). The shard's routing in the snapshot, or NULL. */
const sc_shard_routing *sc_placement_shard(const sc_placement_snapshot *s, const char *index,
                                           uint32_t shard);
/* The whole routing table of the snapshot, and this node's id. */
const sc_routing_table *sc_placement_routing(const sc_placement_snapshot *s);
const char *sc_placement_local_id(const sc_placement_snapshot *s);
/* The transport address of a live node; false when unknown. */
bool sc_placement_addr(const sc_placement_snapshot *s, const char *node_id, char *host,
                       size_t cap, uint16_t *port);
sc_membership *sc_placement_membership(sc_placement *p);
sc_node *sc_placement_node(sc_placement *p);
struct sc_repl *sc_placement_repl(sc_placement *p);
/* Stops the peer-recovery thread, the placement's one outbound transport user that runs on its
 * own; before the transport closes at shutdown. NULL is a no-op. */
void sc_placement_halt_recovery(sc_placement *p);

/* Waits until a snapshot at least as new as etcd revision `rev` is published, or timeout_ms.
 * SC_OK or SC_ETIMEOUT. */
sc_status sc_placement_wait(sc_placement *p, int64_t rev, int64_t timeout_ms) SC_MUST_USE;

#endif
