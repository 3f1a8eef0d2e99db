/* Write routing across nodes (issue 13, first increment): a document write, get or update whose
 * shard's primary is on another node is forwarded there as the REST request itself over the
 * transport (SC_MSG_REST_FORWARD), executed by that node's router with `forwarded` set (so it is
 * executed locally, never forwarded again) and its response relayed. _bulk splits its items by
 * the primary's node and forwards one sub-bulk per node. No replicas are written: replication
 * is the next step of issue 13.
 *
 * Message body (cluster/wire.h primitives):
 *   request  = method:bytes path:bytes uv:n_params (key:bytes value:bytes)* content_type:bytes
 *              body:bytes
 *   response = uv:status bool:json body:bytes */
#ifndef SC_API_FORWARD_H
#define SC_API_FORWARD_H

#include "api/rest.h"
#include "cluster/placement.h"
#include "cluster/wire.h"

enum {
    SC_MSG_REST_FORWARD = 0x0201
};

/* A forwarded REST request as decoded (byte strings borrow the message). */
typedef struct sc_api_fwd_req {
    sc_slice method, path, content_type, body;
    sc_slice *keys, *values;
    size_t n_params;
} sc_api_fwd_req;

/* Decodes a forwarded request; arrays from `a`. SC_ECORRUPT on bad bytes. */
sc_status sc_api_fwd_req_decode(const uint8_t *p, size_t n, sc_arena *a, sc_api_fwd_req *out)
    SC_MUST_USE;
/* Encodes the response to a forwarded request. */
sc_status sc_api_fwd_resp_encode(const sc_rest_resp *resp, sc_wire_buf *out) SC_MUST_USE;

/* Where the primary of the shard that (routing or id) goes to lives. Without a placement, or for
 * a forwarded request, the answer is "local". In a cluster, waits up to 10 s for a new index's
 * routing to appear (not for a known shard without a live primary). false (after writing a 503
 * into resp) when the shard has no live primary. */
bool sc__api_locate(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix, sc_slice routing,
                    sc_slice id, sc_shard_location *loc);

/* The index `name` (a reference). For a request another node sent (req->forwarded) in a cluster,
 * waits up to 10 s for the placement to create it from the metadata (this node may learn of an
 * index later than the coordinator); NULL when it does not appear. Otherwise sc_node_index. */
sc_index *sc__api_wait_index(sc_rest_req *req, const char *name);

/* Clustered index metadata in etcd (indices/<name>), read straight from etcd (the placement
 * may not have seen it yet). sc__api_meta_known: 1 when etcd has index `name`, 0 when it does
 * not, -1 when etcd cannot be read; 0 on a single node. sc__api_wait_meta waits (up to 10 s)
 * until etcd's metadata of `name` carries `uuid` (this node's create reached the cluster);
 * true at once on a single node. sc__api_wait_local_index waits (up to 10 s) for the placement
 * to create index `name` here (a reference, NULL when it does not appear). */
int sc__api_meta_known(sc_rest_req *req, const char *name);
bool sc__api_wait_meta(sc_rest_req *req, const char *name, const char *uuid);
sc_index *sc__api_wait_local_index(sc_rest_req *req, const char *name);

/* Forwards req (with `path` instead of its own when not NULL, and `body`) to loc's node and
 * writes the node's answer into resp (502 when the node cannot be reached). */
void sc__api_forward(sc_rest_req *req, sc_rest_resp *resp, const sc_shard_location *loc,
                     const char *method, const char *path, sc_slice body);

/* As sc__api_forward, returning the node's status and JSON body (*out: new reference, NULL when
 * not JSON) instead of writing a response. SC_EIO / SC_ETIMEOUT when unreachable. */
sc_status sc__api_forward_json(sc_rest_req *req, const sc_shard_location *loc, const char *method,
                               const char *path, sc_slice body, int *status, json_t **out)
    SC_MUST_USE;

/* Writes across a primary hand-over or a promotion (Elasticsearch's reroute phase): the
 * coordinator (a request that was not forwarded) retries a write that failed because its shard
 * had no primary where it went (no live primary yet, a deposed or unreachable primary, a
 * replication the old primary could not finish), re-locating the primary each time, until the
 * request's `timeout` (default 1m); then the item fails with 503 unavailable_shards_exception
 * "[index][shard] primary shard is not active Timeout: [1m]". The old primary holds writes
 * during a hand-over (cluster/replication.h), so a retry finds the new primary.
 *
 * sc__api_write_retryable: whether an error of that type and reason is retried (not the
 * wait_for_active_shards timeout, which already waited). sc__api_resp_retryable: the same for a
 * response (a forwarded request's 502/503); without maybe_applied, not a failed replication
 * (the write may have been applied: an update must not run twice). sc__api_write_deadline: when
 * retrying stops for a request that started at t0_ns. sc__api_routing_rev: the routing revision to
 * wait past (read it before an attempt). sc__api_retry_wait: waits for a newer routing than rev (at
 * most 500 ms); false when the deadline passed or the request is not retried here (a single node,
 * a forwarded request). sc__api_timeout_reason: the final error's reason. */
bool sc__api_write_retryable(const char *type, const char *reason);
bool sc__api_resp_retryable(const sc_rest_resp *resp, bool maybe_applied);
uint64_t sc__api_write_deadline(const sc_rest_req *req, uint64_t t0_ns);
int64_t sc__api_routing_rev(sc_rest_req *req);
bool sc__api_retry_wait(sc_rest_req *req, int64_t rev, uint64_t deadline_ns);
void sc__api_timeout_reason(const sc_rest_req *req, const char *index, uint32_t shard, char *out,
                            size_t cap);

#endif
