/* Shard allocation: a pure function from (live nodes, indices, current routing table) to a new
 * routing table, run by the master whenever membership or index metadata changes, plus the
 * routing table's JSON form as stored in etcd (one value per index, docs/cluster.md).
 *
 * Rules (Elasticsearch's):
 *  - a shard has at most 1 + number_of_replicas copies (plus relocation targets), never two on
 *    one node, only on live nodes; copies on nodes that left are dropped;
 *  - existing copies on live nodes move only by relocation (rebalancing, below);
 *  - while the primary is live, a replica whose node left leaves the in-sync set (it misses the
 *    writes the primary goes on taking);
 *  - a shard whose primary left gets a new primary chosen among its live in-sync copies, and its
 *    primary term goes up by one; the in-sync copies that are not live then leave the set;
 *  - with no live in-sync copy the shard stays without primary (red), keeping its term and its
 *    in-sync set (no write can happen without a primary), so a stale copy is never promoted;
 *    when a node holding an in-sync copy comes back (a full-cluster restart), that copy becomes
 *    primary again under a new term;
 *  - a new shard (primary term 0) gets all its copies at once on the least loaded nodes, term 1,
 *    with only the primary in sync: every replica (new or added later) is INITIALIZING until
 *    its peer recovery from the primary completes and the primary marks it in sync
 *    (sc_membership_set_in_sync), so an empty replica is never promoted;
 *  - new copies go to the nodes with the fewest copies (then fewest primaries, then id): a fresh
 *    allocation is even (copies per node differ by at most one);
 *  - rebalancing (allocation_rebalance.c, Elasticsearch's balanced allocator): when every shard
 *    is active, a started copy moves from a node whose weight for its index is more than the
 *    threshold above another node's, weight = 0.45 x (node's copies - mean) + 0.55 x (node's
 *    copies of the index - the index's mean); at most cluster_concurrent_rebalance moves at a
 *    time. A move is a relocation target: an extra copy on the new node naming its source
 *    (relocating_from), INITIALIZING until its peer recovery puts it in the in-sync set; the next
 *    computation then drops the source (a primary source hands over: the target becomes primary
 *    under a new term, which fences the old primary's late writes). A target whose source is gone
 *    becomes an ordinary replica; a target on a node that left is dropped (the move is off). */
#ifndef SC_CLUSTER_ALLOCATION_H
#define SC_CLUSTER_ALLOCATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define SC_ALLOC_NODE_MAX 64 /* node id bytes incl. NUL */
#define SC_ALLOC_ID_MAX 24   /* allocation id bytes incl. NUL */

/* One copy of a shard on a node. relocating_from is "" or, for a relocation target, the
 * allocation id of the copy it replaces (its source, which then shows as RELOCATING). */
typedef struct sc_shard_copy {
    char node[SC_ALLOC_NODE_MAX];
    char alloc_id[SC_ALLOC_ID_MAX];
    char relocating_from[SC_ALLOC_ID_MAX];
    bool primary;
} sc_shard_copy;

/* An in-sync copy: its allocation id and the node that holds (or held) it. */
typedef struct sc_in_sync {
    char alloc_id[SC_ALLOC_ID_MAX];
    char node[SC_ALLOC_NODE_MAX];
} sc_in_sync;

/* One shard: its copies (the primary first when there is one), the in-sync copies and the
 * primary term (0 = never had a primary). */
typedef struct sc_shard_routing {
    sc_shard_copy *copies;
    size_t n_copies;
    sc_in_sync *in_sync;
    size_t n_in_sync;
    int64_t primary_term;
} sc_shard_routing;

typedef struct sc_index_routing {
    char *index;
    uint32_t number_of_shards, number_of_replicas;
    sc_shard_routing *shards; /* number_of_shards entries */
} sc_index_routing;

/* The routing table: indices sorted by name. */
typedef struct sc_routing_table {
    sc_index_routing *indices;
    size_t n_indices;
} sc_routing_table;

/* An index as allocation needs it. */
typedef struct sc_alloc_index {
    const char *name;
    uint32_t number_of_shards, number_of_replicas;
} sc_alloc_index;

/* cluster.routing.rebalance.enable */
typedef enum sc_rebalance_enable {
    SC_REBALANCE_ALL,
    SC_REBALANCE_NONE,
    SC_REBALANCE_PRIMARIES,
    SC_REBALANCE_REPLICAS,
} sc_rebalance_enable;

/* The allocation settings (cluster settings, Elasticsearch's names and defaults). */
typedef struct sc_alloc_settings {
    sc_rebalance_enable enable; /* cluster.routing.rebalance.enable, default all */
    int32_t concurrent;         /* ...allocation.cluster_concurrent_rebalance, 2; -1 unbounded */
    double threshold;           /* ...allocation.balance.threshold, 1.0 (> 0) */
} sc_alloc_settings;

/* Elasticsearch's defaults: all, 2, 1.0. */
void sc_alloc_settings_default(sc_alloc_settings *s);

/* Reads the settings from flat cluster settings maps (transient over persistent; either may be
 * NULL); a missing key keeps the default. SC_EINVAL with a message in msg (cap bytes) naming
 * the setting on an unsupported value; then *s holds the defaults for the bad key. */
sc_status sc_alloc_settings_from(const json_t *persistent, const json_t *transient,
                                 sc_alloc_settings *s, char *msg, size_t cap) SC_MUST_USE;

/* Computes the routing table for `nodes` (live node ids, any order, no duplicates) and
 * `indices` (any order) from `current` (may be NULL = empty), with rebalancing as `settings`
 * say (NULL = the defaults). Indices not listed are dropped. New allocation ids are drawn from
 * *rng (any seed; advanced). out is owned: sc_routing_table_fini. Deterministic for equal
 * inputs; idempotent (feeding out back with no recovery in between changes nothing). SC_EINVAL
 * on a node id too long or a duplicate; SC_ENOMEM. O(shards x nodes log nodes) plus, per move
 * started, O(copies x nodes) (at most 64 moves per call). Thread-safe (pure). */
sc_status sc_allocation_compute(const char *const *nodes, size_t n_nodes,
                                const sc_alloc_index *indices, size_t n_indices,
                                const sc_routing_table *current, const sc_alloc_settings *settings,
                                uint64_t *rng, sc_routing_table *out) SC_MUST_USE;

/* The relocation target of copy `src` of shard s (the copy whose relocating_from is src's
 * allocation id), or NULL when src is not relocating. */
const sc_shard_copy *sc_shard_relocation_target(const sc_shard_routing *s,
                                                const sc_shard_copy *src);

/* The number of relocation targets among s's copies. */
size_t sc_shard_n_relocating(const sc_shard_routing *s);

/* Frees what t owns and zeroes it. NULL-safe. */
void sc_routing_table_fini(sc_routing_table *t);
void sc_index_routing_fini(sc_index_routing *r);
/* Deep copy of r into out. */
sc_status sc_index_routing_copy(const sc_index_routing *r, sc_index_routing *out) SC_MUST_USE;
/* The index's entry in t, or NULL. */
const sc_index_routing *sc_routing_table_find(const sc_routing_table *t, const char *index);

/* The JSON form of one index's routing (new reference):
 * {"number_of_shards":N,"number_of_replicas":R,"shards":[{"primary_term":T,
 *   "in_sync":[{"alloc_id":id,"node":id}],"copies":[{"node":id,"alloc_id":id,"primary":bool,
 *   "relocating_from":id (relocation targets only)}]}]} */
json_t *sc_index_routing_to_json(const sc_index_routing *r);
/* Parses that form (for index `name`); SC_ECORRUPT on anything malformed (wrong types, too many
 * shards or copies, over-long ids). */
sc_status sc_index_routing_from_json(const char *name, const json_t *j, sc_index_routing *out)
    SC_MUST_USE;
/* True when both describe the same assignment (copies, in-sync sets and terms). */
bool sc_index_routing_equal(const sc_index_routing *a, const sc_index_routing *b);

#endif
