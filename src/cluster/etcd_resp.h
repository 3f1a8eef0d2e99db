/* Decoders of etcd JSON-gateway responses (etcd_resp.c), shared by the client (etcd.c), the
 * watch thread (etcd_watch.c) and the fuzz target. Each takes arbitrary bytes: malformed input
 * gives SC_ECORRUPT, never a crash. Missing fields are proto3 defaults (0, false, empty);
 * int64 fields may be JSON strings or numbers; keys and values are base64. */
#ifndef SC_CLUSTER_ETCD_RESP_H
#define SC_CLUSTER_ETCD_RESP_H

#include <stddef.h>

#include "cluster/etcd.h"

/* One message of a watch stream (one line `{"result":{...}}` or `{"error":{...}}`). */
typedef struct sc_etcd_watch_msg {
    bool created, canceled;
    int64_t revision;         /* header.revision (0 if absent) */
    int64_t compact_revision; /* > 0: the requested revision was compacted */
    bool error;               /* a stream-level error object */
    sc_etcd_event *events;    /* owned, freed by sc_etcd_watch_msg_fini */
    size_t n_events;
} sc_etcd_watch_msg;

void sc_etcd_watch_msg_fini(sc_etcd_watch_msg *m);
void sc_etcd_kv_fini(sc_etcd_kv *kv);

/* Maps an HTTP status and an error body ({"error","message","code"}) to a status and fills err
 * (may be NULL). http_status 200 with a body gives SC_OK. */
sc_status sc_etcd_decode_error(long http_status, const char *buf, size_t len, sc_etcd_error *err);
/* A RangeResponse: kvs, more, header.revision. */
sc_status sc_etcd_decode_range(const char *buf, size_t len, sc_etcd_kvs *out) SC_MUST_USE;
/* A PutResponse: header.revision. */
sc_status sc_etcd_decode_put(const char *buf, size_t len, int64_t *revision) SC_MUST_USE;
/* A DeleteRangeResponse: deleted. */
sc_status sc_etcd_decode_delete(const char *buf, size_t len, int64_t *deleted) SC_MUST_USE;
/* A TxnResponse: succeeded, header.revision, the first response_range's kvs. */
sc_status sc_etcd_decode_txn(const char *buf, size_t len, sc_etcd_txn_result *out) SC_MUST_USE;
/* A lease grant or keepalive response (the keepalive one wrapped in {"result":...}): ID, TTL.
 * A missing TTL gives *ttl_s = 0 (the lease is gone). */
sc_status sc_etcd_decode_lease(const char *buf, size_t len, int64_t *id, int64_t *ttl_s)
    SC_MUST_USE;
/* One watch stream line. */
sc_status sc_etcd_decode_watch(const char *buf, size_t len, sc_etcd_watch_msg *out) SC_MUST_USE;

/* The range_end that selects every key starting with prefix[0..len): the prefix with its last
 * non-0xff byte incremented (trailing 0xff bytes dropped); "\0" (len 1) when there is none.
 * out must hold len + 1 bytes; returns the length written. */
size_t sc_etcd_prefix_end(const char *prefix, size_t len, char *out);

#endif
