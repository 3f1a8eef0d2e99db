/* The encodings of clustered scroll, point in time and _terms_enum (issue 13): the messages a
 * coordinator sends to the data nodes that hold search contexts (reader contexts pinning shard
 * snapshots with a keep-alive, cluster/scroll.h) and the client-facing context id. Bodies use
 * cluster/wire.h primitives; every body starts with a version byte; decoders borrow byte strings
 * from the input, allocate arrays in a caller's arena and answer SC_ECORRUPT on malformed,
 * truncated or trailing input (counts are checked against the bytes left before allocating). */
#ifndef SC_CLUSTER_CTX_WIRE_H
#define SC_CLUSTER_CTX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "cluster/wire.h"

/* Transport message types. */
enum {
    SC_MSG_CTX_QUERY = 0x0110,  /* ctx_query -> ctx_query_resp */
    SC_MSG_CTX_FREE = 0x0111,   /* ctx_free -> uv:shard contexts freed */
    SC_MSG_TERMS_ENUM = 0x0112, /* terms_req -> terms_resp */
};

#define SC_CTX_WIRE_VERSION 1
/* Most search contexts one free message or one context id may name. */
#define SC_CTX_WIRE_MAX_IDS 65536

/* ctx_query flags */
#define SC_CTX_OPEN 0x01u      /* open a new context on the targets (seq must be 0) */
#define SC_CTX_PIT 0x02u       /* ... as a point in time (shared by searches), not a scroll */
#define SC_CTX_OPEN_ONLY 0x04u /* open without running the query (point in time open) */

/* A query phase against a data node's search context:
 *   ctx_query = u8:version u8:flags uv:seq uv:keep_alive_ms uv:page_size uv:n_skip uv:skip*
 *               bytes:node_query
 * node_query is search_wire.h's body (its targets are the context's shards). With n_skip = 0
 * every target returns its top k of node_query; otherwise n_skip equals node_query's number of
 * targets and target t returns its hits [skip[t], skip[t] + page_size) (a scroll page). */
typedef struct sc_ctx_query {
    uint8_t flags;
    uint64_t seq;           /* the data node's context (0 with SC_CTX_OPEN) */
    uint64_t keep_alive_ms; /* renews the context (0: keep its own) */
    uint32_t page_size;
    const uint64_t *skip; /* n_skip entries */
    size_t n_skip;
    sc_slice node_query;
} sc_ctx_query;

/* ctx_query_resp = u8:version uv:seq uv:n_shards bytes:node_query_resp (empty with OPEN_ONLY) */
typedef struct sc_ctx_query_resp {
    uint64_t seq;      /* the context (new with SC_CTX_OPEN) */
    uint32_t n_shards; /* shards it pins */
    sc_slice node_query_resp;
} sc_ctx_query_resp;

/* ctx_free = u8:version bool:all_scrolls uv:n (uv:seq)*  (all_scrolls: every scroll context of
 * the node, not the points in time; the seqs are then ignored) */
typedef struct sc_ctx_free {
    bool all_scrolls;
    const uint64_t *seq;
    size_t n;
} sc_ctx_free;

/* terms_req  = u8:version bytes:field bytes:prefix bool:case_insensitive uv:size
 *              uv:n_indices (bytes:index uv:n_shards (uv:shard)*)*
 * terms_resp = u8:version uv:successful uv:failed uv:n_terms (bytes:term)*   (sorted, unique) */
typedef struct sc_terms_req_index {
    sc_slice name;
    const uint32_t *shards;
    size_t n_shards;
} sc_terms_req_index;

typedef struct sc_terms_req {
    sc_slice field, prefix;
    bool case_insensitive;
    uint32_t size;
    const sc_terms_req_index *indices;
    size_t n_indices;
} sc_terms_req;

typedef struct sc_terms_resp {
    uint32_t successful, failed;
    const sc_slice *terms;
    size_t n_terms;
} sc_terms_resp;

/* The client-facing id of a clustered scroll or point in time: URL-safe base64 (no padding) of
 *   ctx_id = u8:version bool:pit bytes:coordinator_node uv:coordinator_seq
 *            uv:n (bytes:node uv:seq)*
 * (the coordinator's context, then every data-node context it opened). */
typedef struct sc_ctx_id_entry {
    sc_slice node;
    uint64_t seq;
} sc_ctx_id_entry;

typedef struct sc_ctx_id {
    bool pit;
    sc_slice coordinator;
    uint64_t coordinator_seq;
    const sc_ctx_id_entry *entries;
    size_t n;
} sc_ctx_id;

/* Encoders append to out (sticky status) and return its status. */
sc_status sc_ctx_query_encode(const sc_ctx_query *q, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_ctx_query_resp_encode(const sc_ctx_query_resp *r, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_ctx_free_encode(const sc_ctx_free *f, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_terms_req_encode(const sc_terms_req *q, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_terms_resp_encode(const sc_terms_resp *r, sc_wire_buf *out) SC_MUST_USE;
sc_status sc_ctx_id_encode(const sc_ctx_id *id, sc_wire_buf *out) SC_MUST_USE;

sc_status sc_ctx_query_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_query *out)
    SC_MUST_USE;
sc_status sc_ctx_query_resp_decode(const uint8_t *p, size_t n, sc_ctx_query_resp *out) SC_MUST_USE;
sc_status sc_ctx_free_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_free *out) SC_MUST_USE;
sc_status sc_terms_req_decode(const uint8_t *p, size_t n, sc_arena *a, sc_terms_req *out)
    SC_MUST_USE;
sc_status sc_terms_resp_decode(const uint8_t *p, size_t n, sc_arena *a, sc_terms_resp *out)
    SC_MUST_USE;
sc_status sc_ctx_id_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_id *out) SC_MUST_USE;

/* The id as text: URL-safe base64 without padding (malloc'd, free() it; NULL on ENOMEM). */
char *sc_ctx_id_text(const sc_ctx_id *id);
/* Parses a client's id text: SC_EINVAL when it is not a clustered context id (not base64, or
 * not the grammar above). Byte strings point into *buf (arena). */
sc_status sc_ctx_id_parse(const char *text, sc_arena *a, sc_ctx_id *out) SC_MUST_USE;

#endif
