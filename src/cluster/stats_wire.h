/* The transport message of cluster-wide index statistics (stats_remote.c): the node answering
 * `_stats`, `_cat/indices` or `_cat/count` asks each node holding copies of the indices for
 * those copies' numbers. Grammar (wire.h primitives):
 *
 *   shard_stats      = uv:n (index:bytes uv:shard)*
 *   shard_stats_resp = uv:n (bool:open [uv:field{17}])*
 *
 * The 17 fields of an open copy are its sc_index_stats (cluster/ops.h) in the order of
 * sc_index_stats_fields: docs, deleted, store bytes, segments, translog ops and bytes, merges
 * current / total / spilled bytes, indexing buffer bytes, index ops and time (ns), delete ops,
 * query phases and their time (ns), refreshes, flushes.
 *
 * The answer has one entry per asked copy, in the asked order; `open` is false for a copy the
 * node does not hold open (yet). Decoders refuse truncations, trailing bytes, empty index names
 * and counts that cannot fit the remaining bytes (SC_ECORRUPT). */
#ifndef SC_CLUSTER_STATS_WIRE_H
#define SC_CLUSTER_STATS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "cluster/ops.h"
#include "cluster/wire.h"

enum {
    SC_MSG_SHARD_STATS = 0x0501, /* shard_stats -> shard_stats_resp */
};

typedef struct sc_stats_copy {
    sc_slice index;
    uint32_t shard;
} sc_stats_copy;

typedef struct sc_stats_copy_resp {
    bool open;
    sc_index_stats s; /* when open */
} sc_stats_copy_resp;

sc_status sc_stats_req_encode(const sc_stats_copy *c, size_t n, sc_wire_buf *b) SC_MUST_USE;
/* *out (n entries) from a; slices borrow from p. */
sc_status sc_stats_req_decode(const uint8_t *p, size_t len, sc_arena *a, sc_stats_copy **out,
                              size_t *n) SC_MUST_USE;
sc_status sc_stats_resp_encode(const sc_stats_copy_resp *r, size_t n, sc_wire_buf *b) SC_MUST_USE;
/* *out (n entries) from a. */
sc_status sc_stats_resp_decode(const uint8_t *p, size_t len, sc_arena *a, sc_stats_copy_resp **out,
                               size_t *n) SC_MUST_USE;

#endif
