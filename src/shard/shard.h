/* sc_shard: one shard of an index in its own directory. One writer at a time (an internal
 * mutex serializes index/create/delete/refresh/flush), any number of concurrent searchers on
 * immutable, refcounted snapshots that a refresh swaps atomically.
 *
 * Write path: the document is parsed by the mapping layer (src/mapping) into an sc_index_doc,
 * appended to the translog and to the in-memory segment buffer; the call returns after the
 * translog entry is fsynced (durability "request"), unless the caller asked to defer the sync
 * (then it must call sc_shard_sync before acknowledging: one fsync for a whole bulk request), or
 * the shard runs with durability "async" (fsync on a timer). Refresh writes the buffer as a
 * segment and publishes a new snapshot (on request, or every refresh_interval_ms by the
 * node's shard scheduler, shard/sched.h). Flush (commit) writes deletes, the id table and the manifest,
 * rolls the translog and trims old generations. Opening loads the last manifest and replays the
 * translog (a torn last entry is cut). Merges run on the scheduler's merge pool after refreshes
 * (tiered policy of src/index) and on request (force merge).
 *
 * Every document's _id, _seq_no, _version and _primary_term are kept in an in-memory id table
 * (persisted at each flush as `ids-<gen>.dat`), so GET by id is realtime and version checks need
 * no index lookups. Memory: about 40 bytes + the id length per document (and per tombstone). */
#ifndef SC_SHARD_SHARD_H
#define SC_SHARD_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/segment.h"
#include "mapping/mapping.h"
#include "shard/sched.h"

/* "no value" for seq_no parameters (Elasticsearch's UNASSIGNED_SEQ_NO). */
#define SC_SHARD_NO_SEQ_NO (-2)

typedef struct sc_shard sc_shard;

/* Called (under the shard's writer lock) when a document introduced dynamic fields. `proposed`
 * is the shard's mapping extended with them. The callee merges it into the index-wide mapping
 * (e.g. sc_mapping_merge with sc_mapping_to_json(proposed)), publishes the result to every
 * shard of the index with sc_shard_set_mapping (this shard included: calling it from inside
 * the callback is allowed), and returns SC_OK; or returns an error (with err filled, e.g. a
 * conflict with a concurrent update on another shard) to fail the document. Without a
 * callback the shard adopts `proposed` itself. */
typedef sc_status (*sc_shard_mapping_update_fn)(void *ctx, sc_shard *shard,
                                                const sc_mapping *proposed, sc_mapping_error *err);

typedef struct sc_shard_config {
    const char *path;    /* the shard directory (created if missing) */
    sc_mapping *mapping; /* initial mapping (a reference is taken); NULL = empty mapping */
    const sc_mapping_analysis *analysis; /* borrowed, must outlive the shard; NULL = fallback */
    sc_shard_mapping_update_fn on_mapping_update; /* may be NULL */
    void *update_ctx;
    int64_t primary_term;           /* default 1 (0 -> 1) */
    bool durability_async;          /* index.translog.durability: async */
    uint32_t sync_interval_ms;      /* async fsync period; 0 -> 5000 */
    int32_t refresh_interval_ms;    /* background refresh period; 0 -> 1000; -1 = only on request */
    size_t ram_buffer_bytes;        /* refresh when the buffer exceeds it; 0 -> 64 MiB */
    uint64_t flush_threshold_bytes; /* flush when the translog exceeds it; 0 -> 512 MiB */
    /* index.merge.memory: a merge's memory limit before it spills to temporary files in the
     * shard folder (sc_merge_options); 0 -> 256 MiB */
    uint64_t merge_memory_bytes;
    bool no_background_merges;      /* merges only on sc_shard_force_merge / sc_shard_maybe_merge */
    bool no_background_thread;      /* no timers at all (tests, tools): the caller drives */
    /* The node's scheduler for background work (borrowed; must outlive the shard). NULL with
     * background work on: the shard starts a private scheduler of its own. */
    sc_shard_sched *sched;
    /* Translog replay at open: called before the first operation, then about every 1,024
     * operations, and at the end, with the operations replayed so far, the bytes read and the
     * bytes to read (sc_translog_replay_bytes). Returning false cancels the open
     * (SC_ECANCELLED; nothing is lost: the next open replays again). May be NULL. */
    bool (*on_recovery_progress)(void *ctx, uint64_t ops, uint64_t bytes_done,
                                 uint64_t bytes_total);
    void *recovery_ctx;
    /* Test only (`scry serve --test-recovery-delay`): the replay sleeps this long, in slices
     * that still ask on_recovery_progress whether to go on, before its first operation, so
     * that tests can observe a shard while it recovers. 0 in production. */
    uint32_t test_recovery_delay_ms;
} sc_shard_config;

/* Why an operation failed (version conflicts, mapping errors), in Elasticsearch's terms:
 * type ("version_conflict_engine_exception", "mapper_parsing_exception", ...) and reason. */
typedef sc_mapping_error sc_shard_error;

/* Opens (or creates) the shard at cfg->path: loads the last commit (manifest, deletes, id
 * table), replays the translog after it (re-parsing sources with cfg->mapping; dynamic
 * mapping updates go through on_mapping_update), removes files not referenced by the commit,
 * and attaches the shard to cfg->sched (or a private scheduler). *out owned (sc_shard_close). Errors: SC_EIO, SC_ECORRUPT
 * (err->reason says which file and where), SC_ENOMEM, or a replayed document's mapping error.
 * err may be NULL. */
sc_status sc_shard_open(const sc_shard_config *cfg, sc_shard **out, sc_shard_error *err)
    SC_MUST_USE;

/* Detaches from the scheduler (waiting for a running job), syncs the translog, optionally flushes
 * (commit, as Elasticsearch does on a clean close; skipped when sc_shard_needs_flush is false), and
 * frees the shard. Snapshots still acquired stay valid until released. flush=false leaves recovery
 * to translog replay at the next open. NULL is a no-op. */
void sc_shard_close(sc_shard *s, bool flush);

/* Sets the translog size past which the shard flushes (index.translog.flush_threshold_size;
 * 0 -> 512 MiB). Checked after writes and by the background work. Thread-safe. */
void sc_shard_set_flush_threshold(sc_shard *s, uint64_t bytes);

/* Replaces the shard's mapping (takes a new reference); later documents parse with it. */
void sc_shard_set_mapping(sc_shard *s, sc_mapping *m);

/* The current mapping, with a new reference for the caller (sc_mapping_unref). */
sc_mapping *sc_shard_mapping(sc_shard *s);

/* ---- writes ---- */

enum {
    SC_SHARD_OP_INDEX = 0,  /* create or overwrite */
    SC_SHARD_OP_CREATE = 1, /* fail with a conflict if the id exists */
};

typedef struct sc_shard_write_opts {
    int op_type;             /* SC_SHARD_OP_INDEX / SC_SHARD_OP_CREATE (index only) */
    int64_t if_seq_no;       /* SC_SHARD_NO_SEQ_NO = no check */
    int64_t if_primary_term; /* 0 = no check */
    bool defer_sync;         /* do not fsync; the caller calls sc_shard_sync before acking */
    /* index only: the id cannot be in the shard (this node generated it for this write, and
     * this is the write's first attempt on the primary), so the write does not look it up: no
     * table probe, no segment filters (Elasticsearch's append-only path). The caller vouches
     * for it; an id that was there after all would be indexed twice. */
    bool append_only;
} sc_shard_write_opts;

/* Defaults: index, no checks, synced. */
sc_shard_write_opts sc_shard_write_defaults(void);

typedef struct sc_shard_result {
    int64_t seq_no;
    int64_t primary_term;
    int64_t version;
    bool created;               /* index: a new document ("created") vs an overwrite ("updated") */
    bool found;                 /* delete: the document existed ("deleted") vs "not_found" */
    uint64_t translog_location; /* for sc_shard_sync_to */
} sc_shard_result;

/* Indexes a document: `source` is its _source JSON, `id` its _id. Checks op_type and
 * if_seq_no/if_primary_term, parses with the mapping, appends to the translog and the buffer,
 * and (unless defer_sync or async durability) fsyncs before returning. Errors (err filled):
 * SC_ECONFLICT (version_conflict_engine_exception; or strict_dynamic_mapping_exception from the
 * mapping, see err->type), SC_EINVAL / SC_EPARSE (mapper_parsing_exception), SC_EIO (the
 * translog could not be written: the shard refuses further writes), SC_ENOMEM. On error
 * nothing changed. Thread-safe (serialized with other writes). O(document). */
sc_status sc_shard_index(sc_shard *s, sc_slice id, sc_slice source, const sc_shard_write_opts *o,
                         sc_shard_result *r, sc_shard_error *err) SC_MUST_USE;

/* Deletes a document by id (a tombstone keeps its version). A missing id is not an error:
 * r->found is false (Elasticsearch answers 404 "not_found" but still assigns a seq_no).
 * if_seq_no/if_primary_term checks as for index (a mismatch or a missing document with a
 * check is SC_ECONFLICT). Other errors as sc_shard_index. */
sc_status sc_shard_delete(sc_shard *s, sc_slice id, const sc_shard_write_opts *o,
                          sc_shard_result *r, sc_shard_error *err) SC_MUST_USE;

/* Makes every write so far durable (one fsync for many deferred writes). SC_EIO. */
sc_status sc_shard_sync(sc_shard *s) SC_MUST_USE;

/* Makes writes up to r->translog_location durable; cheaper than sc_shard_sync when another
 * thread already synced past it. SC_EIO. */
sc_status sc_shard_sync_to(sc_shard *s, uint64_t location) SC_MUST_USE;

/* ---- replication (replica.c) ---- */

/* An operation as the primary performed it, for a replica or a recovering copy. */
typedef struct sc_shard_op {
    bool is_delete;
    int64_t seq_no, primary_term, version; /* as assigned by the primary */
    sc_slice id;
    sc_slice source; /* empty for deletes */
} sc_shard_op;

/* Applies a primary's operation with its seq_no, term and version (no version checks): appends
 * it to the translog, then to the buffer. Idempotent and order-free per id: when the id's
 * current state is as new or newer, (primary_term, seq_no) compared in that order, the op is
 * stale and skipped (*applied false), so a replayed or reordered op never overwrites a newer
 * one. Not synced: call
 * sc_shard_sync before acknowledging. Errors as sc_shard_index. Thread-safe. */
sc_status sc_shard_apply(sc_shard *s, const sc_shard_op *op, bool *applied, sc_shard_error *err)
    SC_MUST_USE;

/* The term new writes of this copy get (the routing table's primary term once it is
 * primary). Only raises it; a lower term is ignored. Thread-safe. */
void sc_shard_set_primary_term(sc_shard *s, int64_t term);
int64_t sc_shard_primary_term(sc_shard *s);

/* One id table entry as listed by sc_shard_list_ids. id borrows shard memory: valid only during
 * the callback. */
typedef void (*sc_shard_id_fn)(void *ctx, sc_slice id, bool deleted, int64_t seq_no,
                               int64_t primary_term, int64_t version);

/* Calls fn for up to max ids from cursor `from` (0 to start; then the previous call's *next),
 * under the writer lock (fn must be quick and must not call the shard): the indexing buffer's
 * live ids, then each segment's live docs' ids in the order of the segments' numbers, then the
 * deleted ids (tombstones, deleted true). Every id whose latest operation the shard held when
 * the listing started is listed at least once unless a later operation wrote it (refreshes and
 * merges move docs only into segments numbered above those listed); an id may be listed twice
 * (a merge during the listing). *next is the opaque cursor after this page; == from at the
 * end. */
void sc_shard_list_ids(sc_shard *s, uint64_t from, size_t max, sc_shard_id_fn fn, void *ctx,
                       uint64_t *next);

/* ---- reads ---- */

typedef struct sc_shard_doc {
    bool found;
    int64_t seq_no;
    int64_t primary_term;
    int64_t version;
    uint8_t *source; /* malloc'd copy of _source (free with free()); NULL when not found */
    size_t source_len;
} sc_shard_doc;

/* Realtime GET: the latest version of the document, refreshed or not. SC_OK with
 * doc->found false when missing or deleted. SC_EIO/SC_ECORRUPT reading a segment, SC_ENOMEM.
 * Thread-safe. */
sc_status sc_shard_get(sc_shard *s, sc_slice id, sc_shard_doc *doc) SC_MUST_USE;

/* Frees doc->source and zeroes doc. */
void sc_shard_doc_fini(sc_shard_doc *doc);

/* One segment as a searcher sees it. doc ids of the snapshot are doc_base + the segment's doc
 * id. live is NULL when no document of the segment is deleted. */
typedef struct sc_shard_segment_view {
    sc_segment *seg;       /* referenced by the snapshot */
    const sc_bitset *live; /* immutable; set bit = live doc */
    uint32_t n_docs;       /* including deleted */
    uint32_t n_deleted;
    uint32_t doc_base;
} sc_shard_segment_view;

/* An immutable point-in-time view of the shard: what searches run on. */
typedef struct sc_shard_snapshot {
    const sc_shard_segment_view *segments;
    size_t n_segments;
    uint64_t n_docs; /* live documents */
    uint64_t n_deleted;
    uint64_t max_doc;    /* sum of segment n_docs */
    uint64_t generation; /* increases with every refresh that changed something */
    sc_mapping *mapping; /* the mapping when the snapshot was published (referenced) */
} sc_shard_snapshot;

/* The current snapshot with a reference for the caller. Never NULL for an open shard. Cheap
 * (a pointer load and an atomic increment under a tiny lock; no I/O). Thread-safe. */
const sc_shard_snapshot *sc_shard_searcher_acquire(sc_shard *s);

/* Drops a reference from sc_shard_searcher_acquire; the last one frees the snapshot (and
 * segments no longer used by anyone). NULL is a no-op. Thread-safe. */
void sc_shard_searcher_release(const sc_shard_snapshot *snap);
/* Takes one more reference to a snapshot the caller holds (release it with
 * sc_shard_searcher_release). Returns snap. Thread-safe. */
const sc_shard_snapshot *sc_shard_snapshot_ref(const sc_shard_snapshot *snap);

/* ---- maintenance ---- */

/* Makes every write so far searchable: writes the buffer as a segment, applies pending
 * deletes, publishes a new snapshot. No-op when nothing changed. SC_EIO, SC_ENOMEM. */
sc_status sc_shard_refresh(sc_shard *s) SC_MUST_USE;

/* Commits: refresh, write changed live-docs files, the id table and the manifest (with the
 * new translog generation in its user data), then trim the translog. SC_EIO, SC_ENOMEM. */
sc_status sc_shard_flush(sc_shard *s) SC_MUST_USE;
/* Whether a flush would commit anything: operations since the last commit (buffered or in
 * segments not in the manifest), changed deletes, or segments a merge replaced. An idle
 * shard answers false, so closing thousands of them writes nothing. Takes the writer lock. */
bool sc_shard_needs_flush(sc_shard *s);

/* Releases what an idle shard can rebuild on its next write (Elasticsearch's shard
 * inactivity, indices.memory.shard_inactive_time): commits when something is uncommitted (as
 * sc_shard_flush: the translog is trimmed), then frees the indexing buffer (builder and its
 * arrays, made again by the next write), the per-operation arena and the spare capacity of the
 * id table, and drops the segments' mapped pages. Searches, gets and versions answer exactly
 * as before, and every acknowledged write stays durable. With refresh disabled
 * (refresh_interval -1) and documents buffered, nothing is committed and the buffer is kept,
 * so that they stay unsearchable until a refresh. The node's scheduler calls it for shards
 * without writes for its inactive time (sched.h). SC_EIO, SC_ENOMEM from the flush (then the
 * buffer is kept). Thread-safe (takes the writer lock). */
sc_status sc_shard_release_idle(sc_shard *s) SC_MUST_USE;

/* Runs the merge policy once (synchronously) and performs the merges it selects. */
sc_status sc_shard_maybe_merge(sc_shard *s) SC_MUST_USE;

/* Merges down to at most max_segments segments (>= 1), dropping deleted docs; then flushes.
 * SC_EIO, SC_ENOMEM, SC_ECORRUPT. */
sc_status sc_shard_force_merge(sc_shard *s, uint32_t max_segments) SC_MUST_USE;

/* ---- snapshots ---- */

/* Folders whose names start with this inside a shard's directory hold pinned commits; opening
 * the shard removes any left behind (a process killed during a copy). */
#define SC_SHARD_PIN_PREFIX ".pin-"

/* A commit pinned for copying: hard links of its files in `dir`. */
typedef struct sc_shard_pinned {
    char dir[4096];
    char **files; /* file names in dir (the manifest first); empty for a shard never written */
    size_t n_files;
    uint64_t n_docs;    /* live documents of the commit */
    int64_t max_seq_no; /* of the commit (-1 empty) */
} sc_shard_pinned;

/* Commits (as sc_shard_flush) and, under the same writer lock, hard-links the new commit's
 * manifest, segments, deletes and id table into <shard dir>/<pin_name> (pin_name starts with
 * SC_SHARD_PIN_PREFIX, no '/'). The links keep the files whatever merges and commits do next,
 * so copying them gives exactly that commit. Release with sc_shard_pinned_release (also after
 * a failure: out is then empty). SC_EINVAL (bad pin_name), SC_EIO, SC_ENOMEM. Thread-safe;
 * O(files). */
sc_status sc_shard_commit_pin(sc_shard *s, const char *pin_name, sc_shard_pinned *out)
    SC_MUST_USE;
/* Removes the pin folder and frees the names; p is zeroed. Safe on a zeroed p. */
void sc_shard_pinned_release(sc_shard_pinned *p);

/* File-based peer recovery, the receiving side: replaces the shard's whole state (segments,
 * deletes, id table; buffered and translogged operations are dropped) with the commit whose
 * files are in from_dir (a folder inside the shard's directory named with
 * SC_SHARD_PIN_PREFIX, so that an interrupted copy is removed at open), then commits at once.
 * Searchers keep the snapshots they hold; writers wait on the writer's lock meanwhile. The
 * files of from_dir are moved, the manifest last (a crash leaves an empty copy, never a mixed
 * one). On failure the shard refuses writes (SC_EIO) until the next install or a reopen.
 * SC_EIO, SC_ECORRUPT (err->reason), SC_ENOMEM. */
sc_status sc_shard_install_commit(sc_shard *s, const char *from_dir, sc_shard_error *err)
    SC_MUST_USE;
/* The shard's directory (cfg->path). */
const char *sc_shard_dir(const sc_shard *s);

/* ---- stats ---- */

typedef struct sc_shard_segment_stats {
    char name[SC_SEGMENT_NAME_MAX + 1];
    uint32_t n_docs; /* live */
    uint32_t n_deleted;
    uint64_t size_bytes;
    bool committed;  /* in the last commit */
    bool searchable; /* in the current snapshot */
    uint64_t generation;
} sc_shard_segment_stats;

typedef struct sc_shard_stats {
    uint64_t n_docs;      /* live docs, refreshed (what _count sees) */
    uint64_t n_deleted;   /* deleted docs still in segments */
    uint64_t store_bytes; /* segment files + deletes + id table */
    uint64_t translog_bytes;
    uint64_t translog_ops; /* uncommitted operations */
    uint64_t n_segments;
    uint64_t buffered_docs;   /* indexed, not yet refreshed */
    uint64_t indexing_buffer_bytes; /* held by the indexing buffer, even empty (0: released) */
    int64_t max_seq_no;       /* -1 when empty */
    int64_t local_checkpoint; /* = max_seq_no (single copy) */
    uint64_t n_index_ops, n_delete_ops, n_refreshes, n_flushes, n_merges;
    uint64_t n_queries, query_time_ns; /* query phases run on this copy (sc_shard_count_query) */
    uint64_t index_time_ns, refresh_time_ns, flush_time_ns, merge_time_ns;
    uint64_t merges_current;          /* merges running now */
    uint64_t merge_spilled_bytes;     /* written to merge spill files (index.merge.memory) */
    sc_shard_segment_stats *segments; /* malloc'd array of n_segments (NULL when not asked) */
    uint64_t id_table_bytes;          /* the persisted id table files (with_segments only) */
} sc_shard_stats;

/* Fills *st; with_segments=true also allocates st->segments (free with sc_shard_stats_fini).
 * Thread-safe. */
sc_status sc_shard_stats_get(sc_shard *s, bool with_segments, sc_shard_stats *st) SC_MUST_USE;
void sc_shard_stats_fini(sc_shard_stats *st);
/* Counts one query phase run on this copy that took ns (Elasticsearch's search.query_total
 * and query_time_in_millis are per shard copy). Thread-safe. */
void sc_shard_count_query(sc_shard *s, uint64_t ns);

/* How many unreferenced files (temporary files of interrupted writes, segments, deletes and id
 * tables no commit lists) opening the shard removed, for the caller's log. */
uint32_t sc_shard_files_removed_at_open(const sc_shard *s);

#endif
