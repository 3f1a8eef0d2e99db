/* Replication and peer recovery between shard copies (issue 13, "Writes and replication"),
 * Elasticsearch's primary-backup design on the routing table in etcd:
 *
 *  - the primary performs a write (its seq_no, its primary term, its translog), then sends the
 *    operations to every other copy of the shard in the routing table (in-sync replicas and
 *    copies still recovering) in one SC_MSG_REPL_OPS request per copy, and acknowledges after
 *    the in-sync ones answered. An in-sync copy that fails is removed from the in-sync set in
 *    etcd (sc_membership_set_in_sync, fenced by the primary term) BEFORE the write is
 *    acknowledged without it; when that removal fails (a stale primary, etcd unreachable) the
 *    write is not acknowledged. A primary whose lease lapsed, or that the routing no longer
 *    names primary under its term, does not acknowledge either;
 *  - a replica refuses operations whose primary term is below the highest it has seen or below
 *    the routing table's term for the shard (an old primary is fenced);
 *  - a copy that is assigned but not in sync asks the primary for a peer recovery
 *    (SC_MSG_REPL_RECOVER). The primary waits until its routing shows the copy (from then on
 *    every write is also sent to it), waits for the writes already running to finish
 *    (operation permits; new writes never wait), then sends every id of the shard as its
 *    current operation (document or tombstone with the primary's seq_no, term and version);
 *    seq-no dedup on the copy (sc_shard_apply) makes the
 *    overlap with concurrent writes harmless. When nothing failed on the way, the primary adds
 *    the copy to the in-sync set.
 *
 * Messages (cluster/wire.h primitives):
 *   ops      = index:bytes shard:uv term:uv refresh:bool n:uv (op)*   response: empty
 *              (refresh: the write asked for refresh=true/wait_for; the copy refreshes the
 *              shard after applying, so the write is visible on every copy before the ack)
 *   op       = delete:bool seq_no:svar term:uv version:uv id:bytes source:bytes
 *   recover  = index:bytes shard:uv alloc_id:bytes           response: uv:n_ops_sent
 *
 * File-based recovery (the copy pulls; replication_files.c). A copy that is not empty (it may
 * hold operations the primary never acknowledged), or whose primary holds many documents, is
 * replaced by a commit of the primary and then receives the operations after it:
 *   start    = index:bytes shard:uv alloc_id:bytes copy_ids:uv
 *              response: by_files:bool [rec_id:uv max_seq_no:svar n:uv (name:bytes size:uv
 *              checksum:uv)*]   (by_files false: use the ops-based recover above)
 *   chunk    = rec_id:uv file:uv offset:uv max_len:uv      response: data:bytes checksum:uv
 *              (checksum: xxh3-64 of data; a file's checksum is xxh3-64 of the whole file)
 *   finish   = index:bytes shard:uv alloc_id:bytes rec_id:uv after_seq_no:svar
 *              response: uv:n_ops_sent (the primary releases the pinned commit, then runs
 *              the ops-based recovery for the ids whose seq_no is above after_seq_no) */
#ifndef SC_CLUSTER_REPLICATION_H
#define SC_CLUSTER_REPLICATION_H

#include <stddef.h>

#include "base/status.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/wire.h"
#include "shard/shard.h"

enum {
    SC_MSG_REPL_OPS = 0x0301,
    SC_MSG_REPL_RECOVER = 0x0302,
    SC_MSG_REPL_FILES_START = 0x0303,
    SC_MSG_REPL_FILES_CHUNK = 0x0304,
    SC_MSG_REPL_FILES_FINISH = 0x0305,
};

#define SC_REPL_FILE_NAME_MAX 96
#define SC_REPL_FILES_MAX 100000u
#define SC_REPL_CHUNK_MAX (1u << 20)

/* The primary's answer to a file recovery start. */
typedef struct sc_repl_file {
    char name[SC_REPL_FILE_NAME_MAX];
    uint64_t size, checksum;
} sc_repl_file;

typedef struct sc_repl_files_plan {
    bool by_files;
    uint64_t rec_id;
    int64_t max_seq_no;  /* of the pinned commit (-1: empty) */
    sc_repl_file *files; /* malloc'd */
    size_t n_files;
} sc_repl_files_plan;

/* A decoded batch of operations (byte strings borrow the message; ops is malloc'd). */
typedef struct sc_repl_ops {
    sc_slice index;
    uint32_t shard;
    int64_t term; /* the sending primary's term */
    bool refresh; /* refresh the shard after applying */
    sc_shard_op *ops;
    size_t n_ops;
} sc_repl_ops;

/* Encoding: the header, then exactly n_ops ops. */
void sc_repl_ops_put_header(sc_wire_buf *b, const char *index, uint32_t shard, int64_t term,
                            bool refresh, size_t n_ops);
void sc_repl_ops_put_op(sc_wire_buf *b, const sc_shard_op *op);
/* SC_ECORRUPT on bad bytes (a negative seq_no, an empty or over-long id, a delete with a
 * source, trailing bytes), SC_ENOMEM. out owned: sc_repl_ops_fini (also after a failure). */
sc_status sc_repl_ops_decode(const uint8_t *p, size_t n, sc_repl_ops *out) SC_MUST_USE;
void sc_repl_ops_fini(sc_repl_ops *o);
void sc_repl_recover_encode(sc_wire_buf *b, const char *index, uint32_t shard,
                            const char *alloc_id);
sc_status sc_repl_recover_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                 sc_slice *alloc_id) SC_MUST_USE;

void sc_repl_files_start_encode(sc_wire_buf *b, const char *index, uint32_t shard,
                                const char *alloc_id, uint64_t copy_ids);
sc_status sc_repl_files_start_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                     sc_slice *alloc_id, uint64_t *copy_ids) SC_MUST_USE;
void sc_repl_files_plan_encode(sc_wire_buf *b, const sc_repl_files_plan *pl);
/* SC_ECORRUPT on bad bytes (a file name with '/', a leading dot or unprintable bytes, more than
 * SC_REPL_FILES_MAX files), SC_ENOMEM. out owned: sc_repl_files_plan_fini (also after a
 * failure). */
sc_status sc_repl_files_plan_decode(const uint8_t *p, size_t n, sc_repl_files_plan *out)
    SC_MUST_USE;
void sc_repl_files_plan_fini(sc_repl_files_plan *pl);
void sc_repl_chunk_req_encode(sc_wire_buf *b, uint64_t rec_id, uint32_t file, uint64_t offset,
                              uint32_t max_len);
sc_status sc_repl_chunk_req_decode(const uint8_t *p, size_t n, uint64_t *rec_id, uint32_t *file,
                                   uint64_t *offset, uint32_t *max_len) SC_MUST_USE;
void sc_repl_chunk_encode(sc_wire_buf *b, const void *data, size_t len, uint64_t checksum);
/* data borrows the message. */
sc_status sc_repl_chunk_decode(const uint8_t *p, size_t n, sc_slice *data, uint64_t *checksum)
    SC_MUST_USE;
void sc_repl_finish_encode(sc_wire_buf *b, const char *index, uint32_t shard, const char *alloc_id,
                           uint64_t rec_id, int64_t after_seq_no);
sc_status sc_repl_finish_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                sc_slice *alloc_id, uint64_t *rec_id, int64_t *after_seq_no)
    SC_MUST_USE;

typedef struct sc_repl sc_repl;
typedef struct sc_placement sc_placement;

/* Registers the handlers on the placement's transport and starts the recovery thread. */
sc_status sc__repl_start(sc_placement *p, sc_repl **out) SC_MUST_USE;
/* Stops and joins the recovery thread (it uses the transport as a client: call this before
 * the transport closes). Idempotent; NULL is a no-op. */
void sc__repl_halt(sc_repl *r);
/* Stops the recovery thread (if still running) and frees. NULL is a no-op. */
void sc__repl_stop(sc_repl *r);
/* Wakes the recovery thread (a view change). */
void sc__repl_kick(sc_repl *r);

/* The write path (sc_index_write). Before the local writes: clustered, takes an operation
 * permit (returned; it never waits), and fills primary[0..number_of_shards) with whether this node
 * holds each shard's primary (setting the shard's term from the routing); single-node, all true.
 * sc__repl_wait_primary waits (up to 3 s) for this node's routing to name it primary of shard
 * (a coordinator with a newer routing forwarded the write here); false: the write must be
 * refused, never applied on a copy that is not the primary. After the local writes (results
 * as sc_index_write filled them): replicates the successful operations, turning a result into
 * an error when the write cannot be acknowledged, and releases the permit. */
uint64_t sc__repl_begin(sc_index *ix, bool *primary);
/* wait_for_active_shards: waits until shard has at least need active copies (live copies in
 * the in-sync set; single-node: the primary alone) or deadline_ns (sc_clock_now_ns) passes.
 * *have: the active copies last seen. Call before sc__repl_begin (a waiting write must not
 * hold an operation permit: a recovery that would activate a copy drains them). */
bool sc__repl_wait_active(sc_index *ix, uint32_t shard, uint32_t need, uint64_t deadline_ns,
                          uint32_t *have);
bool sc__repl_wait_primary(sc_index *ix, uint32_t shard);
/* A primary hand-over (Elasticsearch blocks writes for it): while this node's primary of a
 * touched shard (touched[0..number_of_shards)) has an in-sync relocation target, i.e. the
 * master is about to make the target the primary under a new term, waits for the routing to
 * change, up to deadline_ns (then the write goes on here, as before the hand-over began). Call
 * before sc__repl_begin, holding no permit. The write that waited then finds that this node is
 * no longer primary and fails with a shard_not_primary_exception the coordinator retries on
 * the new primary. Single node: returns at once. */
void sc__repl_wait_handoff(sc_index *ix, const bool *touched, uint64_t deadline_ns);
void sc__repl_end(sc_index *ix, uint64_t permit, const sc_doc_write *writes, size_t n,
                  sc_doc_result *results);

#endif
