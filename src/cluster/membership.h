/* sc_membership: a node's part in an etcd-backed cluster (`scry serve --cluster etcd=...`).
 * It registers the node under a lease-bound key (a killed node disappears within the lease
 * TTL), runs the master election (create-if-absent of the master key bound to the node's
 * lease; retried when the key goes away), keeps a watched in-memory view of the live nodes, the
 * master, the index metadata and the routing table, publishes this node's index metadata, and,
 * while master, computes the routing table (allocation.h) and writes it with txns fenced by the
 * master key's create_revision (the master term). Key layout: docs/cluster.md.
 *
 * Threads: one cluster thread (session, election, metadata writes, allocation), the etcd watch
 * thread and the lease keeper. Every function here is thread-safe. Without --cluster nothing of
 * this runs and the node is a cluster of one. */
#ifndef SC_CLUSTER_MEMBERSHIP_H
#define SC_CLUSTER_MEMBERSHIP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/allocation.h"
#include "cluster/node.h"

typedef struct sc_membership sc_membership;

typedef struct sc_membership_config {
    const char *endpoints;         /* etcd client URLs, comma-separated (required) */
    const char *cluster_name;      /* key prefix /scry/<cluster_name>/ (default "scry") */
    const char *http_address;      /* host:port of this node's HTTP API */
    const char *transport_address; /* host:port of this node's transport (may be NULL) */
    int64_t lease_ttl_s;           /* node lease TTL; default 3 (etcd's minimum is 2) */
    int64_t request_timeout_ms;    /* per etcd request; default 2000 */
} sc_membership_config;

/* A live node as registered in etcd. */
typedef struct sc_member {
    char id[SC_ALLOC_NODE_MAX];
    char name[128];
    char http[64];
    char transport[64];
    int64_t started_ms;
    /* OS numbers the node publishes (refreshed every 30 s); -1 = unknown. */
    int heap_percent, ram_percent, cpu_percent;
    double load[3];
} sc_member;

/* A snapshot of the cluster as this node sees it. Owned by the caller: sc_cluster_view_fini. */
typedef struct sc_cluster_view {
    char cluster_name[128];
    char local_id[SC_ALLOC_NODE_MAX];
    sc_member *nodes; /* sorted by name, then id */
    size_t n_nodes;
    char master_id[SC_ALLOC_NODE_MAX]; /* "" when there is no master */
    int64_t master_term;               /* the master key's create_revision */
    json_t *indices;                   /* {name: metadata} (new reference) */
    sc_routing_table routing;
    int64_t revision; /* etcd revision the view reflects */
    bool connected;   /* this node's session (lease) is alive */
    bool synced;      /* the view has been read from etcd at least once */
} sc_cluster_view;

/* Joins the cluster for `node`: connects, starts the cluster thread and returns at once (the
 * registration retries in the background while etcd is unreachable). Installs itself on the
 * node (sc_node_set_cluster). *out owned: sc_membership_stop. SC_EINVAL on a bad endpoint list.
 */
sc_status sc_membership_start(const sc_membership_config *cfg, sc_node *node, sc_membership **out)
    SC_MUST_USE;
/* Leaves the cluster: stops the threads, revokes the lease (so the node and, if it was master,
 * the master key go at once), detaches from the node and frees. NULL is a no-op. */
void sc_membership_stop(sc_membership *m);
/* The first half of sc_membership_stop: leaves the cluster and stops the threads (no more
 * change callbacks) but keeps m readable, so that a listener's own thread can be stopped after
 * it; sc_membership_stop then frees. Idempotent; not thread-safe against stop. */
void sc_membership_halt(sc_membership *m);

/* Copies the current view into *out. */
sc_status sc_membership_view(sc_membership *m, sc_cluster_view *out) SC_MUST_USE;
void sc_cluster_view_fini(sc_cluster_view *v);
/* True while this node holds the master key with a live lease. */
bool sc_membership_is_master(sc_membership *m);
/* The etcd revision the watched view reflects (what sc_membership_view would report). */
int64_t sc_membership_revision(sc_membership *m);
/* False while the node's lease may have expired (no keepalive for a TTL, or etcd said it is
 * gone): a primary then stops acknowledging writes (another may have been promoted). */
bool sc_membership_lease_ok(sc_membership *m);
/* Called after the view changed (nodes, master, index metadata or routing), from the watch
 * thread, with no lock held; read the view with sc_membership_view. Must not block. */
typedef void (*sc_membership_change_fn)(void *ctx);
/* Registers a change listener (at most 8; SC_ELIMIT beyond). Listeners stay until stop. */
sc_status sc_membership_on_change(sc_membership *m, sc_membership_change_fn fn, void *ctx)
    SC_MUST_USE;

/* Adds (in_sync true) or removes an allocation id of shard `shard` of `index` in the in-sync
 * set stored in etcd, as the primary does after a recovery finalizes or before acknowledging a
 * write a replica failed. Fenced: applies only while the shard's primary term in etcd equals
 * primary_term (SC_ECONFLICT otherwise: the caller is a stale primary), with a compare on the
 * routing value's mod_revision (retried on a concurrent change). Adding needs a copy with that
 * id in the routing; removing the primary's own id is SC_EINVAL. SC_ENOTFOUND: no such index,
 * shard or copy. Blocking (etcd round trips); thread-safe. */
sc_status sc_membership_set_in_sync(sc_membership *m, const char *index, uint32_t shard,
                                    const char *alloc_id, bool in_sync, int64_t primary_term)
    SC_MUST_USE;

/* Whether this node's metadata of `index` is queued, being written to etcd, or was written at
 * a revision after view_revision (a view's sc_cluster_view.revision): that view's copy is then
 * older than the node's own. */
bool sc_membership_publishing(sc_membership *m, const char *index, int64_t view_revision);

/* Reads the JSON document at /scry/<cluster>/<name> straight from etcd (*out: new reference;
 * an empty object when absent). SC_ECORRUPT when it is not a JSON object. */
sc_status sc_membership_doc_get(sc_membership *m, const char *name, json_t **out) SC_MUST_USE;
/* Read-modify-write of that document: fn edits a copy in place (returning non-OK aborts with
 * that status); the write compares the key's mod_revision and the whole round is retried (up
 * to 10 times, then SC_ECONFLICT) when someone else wrote in between. */
typedef sc_status (*sc_membership_doc_fn)(void *ctx, json_t *doc);
sc_status sc_membership_doc_update(sc_membership *m, const char *name, sc_membership_doc_fn fn,
                                   void *ctx) SC_MUST_USE;

/* The node-level metadata document "meta" (templates, pipelines, data streams, snapshot
 * repositories: meta_store.h) as this node's view holds it: fn runs with it (NULL when absent)
 * under the view's lock and must neither block nor keep the pointer. The view follows the
 * watch; a node's own updates are in it when sc_membership_meta_update returns. Before the
 * watch's first listing the document is read from etcd (blocking). */
void sc_membership_meta_read(sc_membership *m, void (*fn)(void *ctx, const json_t *doc), void *ctx);
/* sc_membership_doc_update of "meta" that puts the stored document into this node's view before
 * returning (other nodes see it when their watch delivers it). */
sc_status sc_membership_meta_update(sc_membership *m, sc_membership_doc_fn fn, void *ctx)
    SC_MUST_USE;

/* Fills local OS numbers (heap % of the memory budget, RAM %, CPU %, load averages) into mb. */
void sc_membership_local_stats(sc_membership *m, sc_member *mb);

/* The cluster as node n sees it, clustered or not: with a membership, its view (the local
 * node's OS numbers refreshed); on a single node, a cluster of one built through the same
 * structures (the node as master, its indices, and sc_allocation_compute's routing over one
 * node: primaries assigned, replicas unassigned). Caller frees with sc_cluster_view_fini. */
sc_status sc_node_cluster_view(sc_node *n, sc_cluster_view *out) SC_MUST_USE;

#endif
