/* sc_translog: a shard's write-ahead log. Every index/delete operation is appended before the
 * write is acknowledged and made durable by a sync (fdatasync), so a crash (kill -9, power loss
 * after fsync) loses no acknowledged operation. Files are generations `translog-<gen>.tlog` in
 * the shard directory; a flush (commit) rolls to a new generation and trims the old ones.
 *
 * File grammar (little-endian):
 *   file   := header entry*
 *   header := "SCTLOG01" u64:generation
 *   entry  := u32:payload_len u64:xxh3(payload) payload
 *   payload:= u8:op(1 index, 2 delete) zigzag-varint:seq_no varint:primary_term varint:version
 *             varint:id_len id varint:source_len source
 * A torn or corrupt last entry (short length, short payload, checksum mismatch) is cut off at
 * its start on replay; corruption followed by further valid data in an older generation is
 * SC_ECORRUPT.
 *
 * Thread-safety: append, sync and the getters may be called from any thread (an internal mutex
 * orders appends; syncs are serialized separately so one fsync covers every append before it,
 * the group commit). open/replay/roll/trim/close are for the shard's writer. */
#ifndef SC_SHARD_TRANSLOG_H
#define SC_SHARD_TRANSLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"

enum { SC_TRANSLOG_INDEX = 1, SC_TRANSLOG_DELETE = 2 };

typedef struct sc_translog_op {
    uint8_t type; /* SC_TRANSLOG_INDEX or SC_TRANSLOG_DELETE */
    int64_t seq_no;
    int64_t primary_term;
    int64_t version;
    sc_slice id;
    sc_slice source; /* empty for deletes */
} sc_translog_op;

typedef struct sc_translog sc_translog;

/* Opens the translog in `dir` starting at generation min_gen (>= 1): generations below it are
 * ignored (and removed by trim). Creates `translog-<min_gen>.tlog` when no generation exists.
 * Call sc_translog_replay once before appending. *out owned (sc_translog_close).
 * SC_EIO, SC_ENOMEM. */
sc_status sc_translog_open(const char *dir, uint64_t min_gen, sc_translog **out) SC_MUST_USE;

/* Reads every operation of generations >= min_gen in order and calls fn(ctx, op) (op slices
 * valid during the call only). A torn tail of the last generation is truncated away
 * (*truncated_bytes, may be NULL, says how many bytes were cut). Afterwards appends continue
 * the last generation. Returns the first non-OK status of fn, SC_ECORRUPT (bad header, or
 * corruption before the end of a non-last generation), SC_EIO. */
sc_status sc_translog_replay(sc_translog *t, sc_status (*fn)(void *ctx, const sc_translog_op *op),
                             void *ctx, uint64_t *n_ops, uint64_t *truncated_bytes) SC_MUST_USE;

/* The bytes a replay will read: the sizes of the generation files >= min_gen (for recovery
 * progress). Call before sc_translog_replay. O(generations). */
uint64_t sc_translog_replay_bytes(sc_translog *t);

/* During sc_translog_replay (from its callback): the bytes of the generation files read so far,
 * the current entry included. */
uint64_t sc_translog_replayed_bytes(const sc_translog *t);

/* Appends op (buffered in memory until the next sync) and returns in *location (may be NULL)
 * a position to pass to sc_translog_sync_to. SC_ENOMEM, SC_EINVAL (id or source too large),
 * SC_EIO (an earlier sync failed: the log is unusable until reopened). */
sc_status sc_translog_append(sc_translog *t, const sc_translog_op *op, uint64_t *location)
    SC_MUST_USE;

/* Makes every append up to `location` durable (write + fdatasync), or returns at once if a
 * concurrent sync already covered it. SC_EIO (sticky). */
sc_status sc_translog_sync_to(sc_translog *t, uint64_t location) SC_MUST_USE;

/* Makes every append so far durable. SC_EIO (sticky). */
sc_status sc_translog_sync(sc_translog *t) SC_MUST_USE;

/* Syncs, then starts generation current+1 (new file with header, fsynced, dir fsynced).
 * *new_gen (may be NULL) receives it. SC_EIO. */
sc_status sc_translog_roll(sc_translog *t, uint64_t *new_gen) SC_MUST_USE;

/* Deletes the files of generations < below_gen. SC_EIO. */
sc_status sc_translog_trim(sc_translog *t, uint64_t below_gen) SC_MUST_USE;

/* The current (appending) generation. */
uint64_t sc_translog_generation(const sc_translog *t);

/* Bytes in the generations still kept (header included) plus unsynced bytes; operations since
 * open/trim. For flush thresholds and stats. */
uint64_t sc_translog_size_bytes(sc_translog *t);
uint64_t sc_translog_n_ops(sc_translog *t);

/* Closes the files; does NOT sync pending appends (call sc_translog_sync first to keep them:
 * closing without it models a crash). NULL is a no-op. */
void sc_translog_close(sc_translog *t);

#endif
