/* _delete_by_query / _update_by_query across a cluster (byquery_cluster.c): the receiving node
 * sends the request to every node holding a primary of the target indices (itself included),
 * each runs it on its own primaries only, and the per-node responses are summed. With
 * wait_for_completion=false it is a task of the receiving node that reads and writes through
 * the cluster instead (byquery_cluster_job.c): one task id, its status and cancellation here. */
#ifndef SC_API_BYQUERY_CLUSTER_H
#define SC_API_BYQUERY_CLUSTER_H
#include <stdint.h>

#include "api/rest.h"
#include "cluster/alias.h"

/* Clustered, not forwarded and waiting for completion: runs req (a by-query request over the
 * index expression `source`) on every node holding a primary of its indices and writes the
 * merged response into resp; true when it answered (also with an error). false: run it here
 * as on a single node. */
bool sc__byquery_fanout(sc_rest_req *req, sc_rest_resp *resp, const char *source);
/* For a by-query request forwarded by sc__byquery_fanout: *out (from req->arena) is, per index
 * of res, the bitset of the shards whose primary is on this node; NULL when the request is not
 * such a one (every shard). false on ENOMEM. */
bool sc__byquery_local_primaries(sc_rest_req *req, const sc_resolved *res, uint64_t ***out);
#endif
