/* sc_etcd: a small etcd v3 client over the JSON gateway (POST /v3/..., base64 keys and values,
 * int64 as strings) with libcurl. Several endpoints with failover; KV put/get/range by
 * prefix/delete; txn compare-and-swap; leases (grant, revoke, keepalive on a timer thread);
 * and watch on a prefix (a streaming request on its own thread, list-then-watch, resuming from
 * the last revision after a reconnect and re-reading after a compaction).
 *
 * Every call is bounded by the client's timeout (per endpoint tried). Errors are an sc_status
 * plus an optional sc_etcd_error with etcd's message:
 *   SC_EIO       no endpoint reachable / transport error / HTTP 5xx
 *   SC_ETIMEOUT  the request timed out
 *   SC_ENOTFOUND etcd code 5 (e.g. unknown lease)
 *   SC_EINVAL    HTTP 4xx other than below (bad request)
 *   SC_ELIMIT    etcd code 11 (compacted or future revision)
 *   SC_ECORRUPT  a response that does not parse
 * Thread-safety: one sc_etcd may be shared; its calls are serialized on an internal mutex
 * (the keepalive and watch threads use their own connections). */
#ifndef SC_CLUSTER_ETCD_H
#define SC_CLUSTER_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct sc_etcd sc_etcd;

/* What etcd said about a failed call (gRPC code and message), or the transport's error. */
typedef struct sc_etcd_error {
    int http_status; /* 0 when no HTTP response */
    int code;        /* gRPC code from the body; 0 if none */
    char message[256];
} sc_etcd_error;

/* One key-value with its revisions. key/value are NUL-terminated copies (and may contain NUL
 * bytes: use the lengths). */
typedef struct sc_etcd_kv {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    int64_t create_revision, mod_revision, version, lease;
} sc_etcd_kv;

/* The result of a range: kvs in key order and the store revision it was read at. */
typedef struct sc_etcd_kvs {
    sc_etcd_kv *kvs;
    size_t len;
    int64_t revision;
    bool more;
} sc_etcd_kvs;

/* Frees what a range result owns and zeroes it. NULL-safe. */
void sc_etcd_kvs_fini(sc_etcd_kvs *r);

/* Opens a client for `endpoints`, a comma-separated list of http://host:port URLs.
 * timeout_ms bounds each request (default 3000 when <= 0). *out owned: sc_etcd_free.
 * SC_EINVAL on an empty or malformed list. No network I/O here. */
sc_status sc_etcd_new(const char *endpoints, int64_t timeout_ms, sc_etcd **out) SC_MUST_USE;
/* A new client on the same endpoints (its own connection). */
sc_status sc_etcd_clone(const sc_etcd *e, sc_etcd **out) SC_MUST_USE;
/* Frees the client. NULL is a no-op. */
void sc_etcd_free(sc_etcd *e);
/* The endpoint the client uses now (after failovers). Borrowed; valid until sc_etcd_free. */
const char *sc_etcd_endpoint(const sc_etcd *e);

/* Puts key = value (bytes), attached to `lease` (0 = none). *revision (may be NULL) gets the
 * revision of the write. */
sc_status sc_etcd_put(sc_etcd *e, const char *key, const void *value, size_t value_len,
                      int64_t lease, int64_t *revision, sc_etcd_error *err) SC_MUST_USE;
/* Reads one key: out->len is 0 or 1. Caller frees out with sc_etcd_kvs_fini. */
sc_status sc_etcd_get(sc_etcd *e, const char *key, sc_etcd_kvs *out, sc_etcd_error *err)
    SC_MUST_USE;
/* Reads every key starting with prefix (all pages, at one revision). */
sc_status sc_etcd_range_prefix(sc_etcd *e, const char *prefix, sc_etcd_kvs *out, sc_etcd_error *err)
    SC_MUST_USE;
/* Deletes key (or every key starting with it when prefix). *n_deleted may be NULL. */
sc_status sc_etcd_delete(sc_etcd *e, const char *key, bool prefix, int64_t *n_deleted,
                         sc_etcd_error *err) SC_MUST_USE;

/* Compacts the key history up to revision (watchers below it get a compaction error). */
sc_status sc_etcd_compact(sc_etcd *e, int64_t revision, sc_etcd_error *err) SC_MUST_USE;

/* Compare targets of a txn. */
typedef enum sc_etcd_target {
    SC_ETCD_CREATE, /* create_revision (0 = key absent) */
    SC_ETCD_MOD,    /* mod_revision */
    SC_ETCD_VERSION /* version */
} sc_etcd_target;

typedef enum sc_etcd_cmp_result {
    SC_ETCD_EQUAL,
    SC_ETCD_GREATER,
    SC_ETCD_LESS,
    SC_ETCD_NOT_EQUAL
} sc_etcd_cmp_result;

/* One compare: target(key) result value, e.g. CREATE(key) EQUAL 0 = "key absent". */
typedef struct sc_etcd_cmp {
    const char *key;
    sc_etcd_target target;
    sc_etcd_cmp_result result;
    int64_t value;
} sc_etcd_cmp;

typedef enum sc_etcd_op_kind {
    SC_ETCD_OP_PUT,
    SC_ETCD_OP_DELETE,
    SC_ETCD_OP_GET
} sc_etcd_op_kind;

/* One txn operation. PUT uses value/value_len/lease; DELETE and GET use prefix. */
typedef struct sc_etcd_op {
    sc_etcd_op_kind kind;
    const char *key;
    const void *value;
    size_t value_len;
    int64_t lease;
    bool prefix;
} sc_etcd_op;

/* The outcome of a txn: which branch ran, the revision, and the kvs of the first GET of that
 * branch (if any). Free with sc_etcd_txn_result_fini. */
typedef struct sc_etcd_txn_result {
    bool succeeded;
    int64_t revision;
    sc_etcd_kvs range;
} sc_etcd_txn_result;

void sc_etcd_txn_result_fini(sc_etcd_txn_result *r);

/* Runs a txn: if every compare holds, the success ops, else the failure ops (at most 128 ops in
 * all, as etcd allows). A failed compare is not an error: out->succeeded is false. */
sc_status sc_etcd_txn(sc_etcd *e, const sc_etcd_cmp *cmp, size_t n_cmp, const sc_etcd_op *success,
                      size_t n_success, const sc_etcd_op *failure, size_t n_failure,
                      sc_etcd_txn_result *out, sc_etcd_error *err) SC_MUST_USE;

/* Grants a lease of ttl_s seconds (etcd raises it to its minimum, 2 s by default). *id gets the
 * lease ID; *granted_ttl_s (may be NULL) the TTL etcd chose. */
sc_status sc_etcd_lease_grant(sc_etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_ttl_s,
                              sc_etcd_error *err) SC_MUST_USE;
/* Refreshes a lease once. *ttl_s gets the new TTL. SC_ENOTFOUND when the lease no longer
 * exists (expired or revoked: etcd answers without a TTL). */
sc_status sc_etcd_lease_keepalive_once(sc_etcd *e, int64_t id, int64_t *ttl_s, sc_etcd_error *err)
    SC_MUST_USE;
/* Revokes a lease, deleting every key attached to it. SC_ENOTFOUND if unknown. */
sc_status sc_etcd_lease_revoke(sc_etcd *e, int64_t id, sc_etcd_error *err) SC_MUST_USE;

/* A lease kept alive by a timer thread: a keepalive every TTL/3, retries every 500 ms on error.
 * State changes are reported through the callback, from the keeper's thread:
 *  - SC_ETCD_LEASE_EXPIRED: no keepalive succeeded for a whole TTL, measured from the send time
 *    of the last successful one. etcd may have dropped the lease (it never expires it earlier),
 *    so a holder must stop acting on it; the keeper goes on trying.
 *  - SC_ETCD_LEASE_ALIVE: a keepalive succeeded again after EXPIRED (etcd extends leases across
 *    its own leader elections and restarts, so a lease can outlive a long outage).
 *  - SC_ETCD_LEASE_GONE: etcd answered that the lease does not exist; the thread ends. */
typedef enum sc_etcd_lease_state {
    SC_ETCD_LEASE_ALIVE,
    SC_ETCD_LEASE_EXPIRED,
    SC_ETCD_LEASE_GONE
} sc_etcd_lease_state;
typedef struct sc_etcd_keeper sc_etcd_keeper;
typedef void (*sc_etcd_lease_fn)(void *ctx, int64_t lease, sc_etcd_lease_state state);

/* Starts keeping lease `id` (TTL ttl_s) alive on its own connection to e's endpoints. */
sc_status sc_etcd_keeper_start(const sc_etcd *e, int64_t id, int64_t ttl_s, sc_etcd_lease_fn fn,
                               void *ctx, sc_etcd_keeper **out) SC_MUST_USE;
/* True while the lease is believed alive (state ALIVE). */
bool sc_etcd_keeper_alive(const sc_etcd_keeper *k);
/* Stops the thread (does not revoke) and frees. NULL is a no-op. Waits at most ~1 s. */
void sc_etcd_keeper_stop(sc_etcd_keeper *k);

/* Watch events. */
typedef enum sc_etcd_event_type {
    SC_ETCD_EVENT_PUT,
    SC_ETCD_EVENT_DELETE
} sc_etcd_event_type;

typedef struct sc_etcd_event {
    sc_etcd_event_type type;
    sc_etcd_kv kv; /* for DELETE only key and mod_revision are set */
} sc_etcd_event;

/* Called with the whole prefix content: first, and again after a compaction made the watch's
 * revision unreachable (list-then-watch). The consumer replaces its cache with it. */
typedef void (*sc_etcd_reset_fn)(void *ctx, const sc_etcd_kvs *all);
/* Called with the events of one watch message, in revision order. */
typedef void (*sc_etcd_events_fn)(void *ctx, const sc_etcd_event *events, size_t n);

typedef struct sc_etcd_watch sc_etcd_watch;

/* Watches every key under prefix on its own thread: reads the prefix (reset), then streams
 * events from the next revision; after a broken stream it reconnects (rotating endpoints, with
 * a back-off of up to 1 s) and resumes from the last revision seen + 1; on a compaction it reads
 * the prefix again (reset). Callbacks run on the watch thread, one at a time. */
sc_status sc_etcd_watch_start(const sc_etcd *e, const char *prefix, sc_etcd_reset_fn reset,
                              sc_etcd_events_fn events, void *ctx, sc_etcd_watch **out) SC_MUST_USE;
/* The revision up to which events have been delivered (0 before the first read). */
int64_t sc_etcd_watch_revision(const sc_etcd_watch *w);
/* Stops the thread and frees. No callback runs after it returns. Waits at most ~1 s. */
void sc_etcd_watch_stop(sc_etcd_watch *w);

#endif
