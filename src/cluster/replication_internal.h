/* Between replication.c (fan-out, ops-based recovery, the recovery thread) and
 * replication_files.c (file-based recovery, both sides). */
#ifndef SC_CLUSTER_REPLICATION_INTERNAL_H
#define SC_CLUSTER_REPLICATION_INTERNAL_H

#include "cluster/allocation.h"
#include "cluster/replication.h"
#include "cluster/transport.h"

typedef struct sc_repl_files sc_repl_files;

/* Waits (up to 10 s) for this node's routing to show alloc_id as a copy of the shard with this
 * node as primary; fills *term and the copy's node. SC_ECONFLICT: not primary here;
 * SC_ENOTFOUND: the copy is unknown. */
sc_status sc__repl_wait_copy(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                             int64_t *term, char node[SC_ALLOC_NODE_MAX]) SC_MUST_USE;
/* The primary's ops-based recovery of a copy (every id whose seq_no > after_seq_no; -1: all),
 * then the copy joins the in-sync set. out gets the count of operations sent. */
sc_status sc__repl_recover_ops(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                               int64_t after_seq_no, sc_wire_buf *out, char *errmsg, size_t cap)
    SC_MUST_USE;
sc_placement *sc__repl_placement(sc_repl *r);
/* The recovery thread is asked to stop. */
bool sc__repl_stopping(sc_repl *r);

/* The primary's side: registers the start/chunk/finish handlers; *out holds the pinned
 * commits. sc__repl_files_free releases every pin (NULL is a no-op). */
sc_status sc__repl_files_start(sc_repl *r, sc_transport *t, sc_repl_files **out) SC_MUST_USE;
void sc__repl_files_free(sc_repl_files *f);

/* The copy's side: recovers the local copy alloc_id of index/shard from the primary at
 * host:port, by files (the copy is not empty, or the primary holds many documents) or by
 * operations. why gets the reason of a failure. */
sc_status sc__repl_recover_copy(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                                const char *host, uint16_t port, char *why, size_t cap) SC_MUST_USE;

#endif
