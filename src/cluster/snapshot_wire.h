/* The transport message of a clustered snapshot (snapshot_remote.c): the coordinating node asks
 * the node holding a shard's primary to copy that shard's commit into the shared fs repository,
 * and gets back the files it copied. Grammar (wire.h primitives):
 *
 *   snap_shard      = repo:bytes snapshot_uuid:bytes index:bytes uv:shard
 *   snap_shard_resp = uv:n_docs uv:n_files (name:bytes blob:bytes uv:size)*
 *
 * Decoders refuse truncations, trailing bytes, empty names, a file name that is not a plain
 * name (a '/', NUL, "." or "..") and a blob name that is not SC_SNAPREPO_BLOB_HEX lowercase hex
 * digits (SC_ECORRUPT). */
#ifndef SC_CLUSTER_SNAPSHOT_WIRE_H
#define SC_CLUSTER_SNAPSHOT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "cluster/wire.h"

enum {
    SC_MSG_SNAP_SHARD = 0x0401, /* snap_shard -> snap_shard_resp */
};

typedef struct sc_snap_shard_req {
    sc_slice repo;          /* the repository's name (each node resolves its location) */
    sc_slice snapshot_uuid; /* names the commit pin */
    sc_slice index;
    uint32_t shard;
} sc_snap_shard_req;

typedef struct sc_snap_shard_file {
    sc_slice name; /* the file's name in the shard's commit */
    sc_slice blob; /* its blob (SC_SNAPREPO_BLOB_HEX hex digits) */
    uint64_t size;
} sc_snap_shard_file;

typedef struct sc_snap_shard_resp {
    uint64_t n_docs;
    sc_snap_shard_file *files;
    size_t n_files;
} sc_snap_shard_resp;

sc_status sc_snap_shard_req_encode(const sc_snap_shard_req *q, sc_wire_buf *b) SC_MUST_USE;
/* Slices borrow from p. */
sc_status sc_snap_shard_req_decode(const uint8_t *p, size_t n, sc_snap_shard_req *q) SC_MUST_USE;
sc_status sc_snap_shard_resp_encode(const sc_snap_shard_resp *r, sc_wire_buf *b) SC_MUST_USE;
/* files allocated in a; slices borrow from p. */
sc_status sc_snap_shard_resp_decode(const uint8_t *p, size_t n, sc_arena *a, sc_snap_shard_resp *r)
    SC_MUST_USE;

#endif
