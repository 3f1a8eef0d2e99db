/* Clustered scroll and point in time (issue 13), the coordinator's side: the shards of a
 * context are searched through search contexts that their data nodes keep (cluster/scroll.h
 * registry, one per node and request, pinning the node's shard snapshots with the keep-alive;
 * messages in cluster/ctx_wire.h). A scroll opens them on its first page; a point in time when
 * it is opened. The id given to clients names the coordinator's context and every data-node
 * context (sc_ctx_id), so any node can free them; pages go to the coordinator (api layer). */
#ifndef SC_CLUSTER_SEARCH_CTX_H
#define SC_CLUSTER_SEARCH_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/ctx_wire.h"
#include "cluster/node.h"
#include "cluster/scroll.h"

/* Opens a point in time's contexts on every shard of ctx's indices (each on its first
 * searchable copy, one request per node) and sets ctx->wire_id. *n_ok / *n_failed: shards.
 * SC_ENOMEM; node failures only count as failed shards. */
sc_status sc_search_ctx_open_pit(sc_node *n, sc_scroll *ctx, uint32_t *n_ok, uint32_t *n_failed)
    SC_MUST_USE;
/* Frees every context id names: the coordinator's and each data node's (nodes that cannot be
 * reached are skipped: their contexts expire with their keep-alive). Returns the shard
 * contexts freed, plus the coordinator's context when it held no shard itself. */
size_t sc_search_ctx_free(sc_node *n, const sc_ctx_id *id);
/* Frees every scroll context (not the points in time) on every live node; returns how many
 * shard contexts and coordinator contexts were freed. */
size_t sc_search_ctx_free_all(sc_node *n);
/* The transport address of a live node; false when it is not in the cluster now. */
bool sc_search_ctx_node_addr(sc_node *n, const char *node_id, char *host, size_t cap,
                             uint16_t *port);

#endif
