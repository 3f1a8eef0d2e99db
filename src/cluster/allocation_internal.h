/* Private to allocation.c (placement of copies, promotion) and allocation_rebalance.c (moving
 * started copies between nodes): the per-node load of one computation and shared helpers. */
#ifndef SC_CLUSTER_ALLOCATION_INTERNAL_H
#define SC_CLUSTER_ALLOCATION_INTERNAL_H

#include "cluster/allocation.h"

typedef struct sc__node_load {
    const char *id;
    uint32_t copies, primaries;
    uint32_t ix_copies; /* copies of the index being placed (allocation.c's pass 2) */
} sc__node_load;

typedef struct sc__alloc_ctx {
    sc__node_load *nodes; /* sorted by id */
    size_t n_nodes;
    uint64_t *rng;
} sc__alloc_ctx;

/* The node's load entry, or NULL when the node is not live. O(log nodes). */
sc__node_load *sc__alloc_find_node(sc__alloc_ctx *c, const char *id);

/* A fresh allocation id from c's generator. */
void sc__alloc_new_id(sc__alloc_ctx *c, char out[SC_ALLOC_ID_MAX]);

/* Whether alloc_id is in s's in-sync set. */
bool sc__alloc_in_sync(const sc_shard_routing *s, const char *alloc_id);

/* Starts relocations (adds relocation targets to t's shards) as the balance rule and settings
 * say; see allocation.h. Runs after placement and promotion, when every shard is active.
 * SC_ENOMEM. */
sc_status sc__alloc_rebalance(sc__alloc_ctx *c, sc_routing_table *t, const sc_alloc_settings *set)
    SC_MUST_USE;

#endif
