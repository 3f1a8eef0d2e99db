/* Private state of a shard shared by shard.c (writes, refresh, commit, background work),
 * open.c (opening the last commit, translog replay, close), snapshot.c
 * (searcher snapshots), merge.c (merges), ids.c (the persisted id table) and idtab.c (the
 * in-memory id table). */
#ifndef SC_SHARD_INTERNAL_H
#define SC_SHARD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/hashmap.h"
#include "base/vec.h"
#include "index/builder.h"
#include "index/commit.h"
#include "index/docvalues.h"
#include "shard/sched.h"
#include "shard/shard.h"
#include "shard/shard_search.h"
#include "shard/translog.h"

#define SC__SEG_BUFFER UINT32_MAX     /* entry lives in the in-memory buffer */
#define SC__SEG_NONE (UINT32_MAX - 1) /* tombstone: deleted document */
#define SC__NO_ENTRY UINT32_MAX

/* The versions of one _id's latest operation. */
typedef struct sc__versions {
    int64_t seq_no;
    int64_t primary_term;
    int64_t version;
} sc__versions;

/* One _id's latest state in the id table: where it is, 8 bytes. The table holds only the ids
 * whose latest operation is in the indexing buffer or a delete (a tombstone); an id whose doc is
 * in a segment is found in the segments' `_id` terms (sc__id_locate), and a refresh drops the
 * buffer's entries (their docs are in the new segment). Its versions are not kept here but where
 * the doc is (sc__entry_versions): a segment doc's in the segment's _seq_no, _version and
 * _primary_term doc values (written with every doc), a buffered doc's in buf_ver, a
 * tombstone's in tombs. */
typedef struct sc__id_entry {
    uint32_t seg; /* SC__SEG_BUFFER or SC__SEG_NONE in the table; a slot uid in sc__id_loc */
    uint32_t doc; /* doc in the slot or the buffer; a tombstone's index in tombs */
} sc__id_entry;

/* The key of entry number `entry` as the table's owner finds it (for sc__idtab_get, which
 * calls it only to confirm a slot whose 32-bit tag matched); an empty slice with a NULL ptr when
 * it cannot be read. The slice need only stay valid until the comparison is done. */
typedef sc_slice (*sc__idtab_key_fn)(void *ctx, uint32_t entry);

/* The _id -> entry table (idtab.c): every entry number 0..len-1 was added with exactly one key,
 * in entry order; entries leave only all at once (sc__idtab_compact, at a refresh: the
 * buffer's ids; a deleted id keeps a tombstone entry). The table keeps
 * only hash tags and entry numbers, not the keys: the owner keeps each key where its doc is
 * (sc__entry_key). Not thread-safe (the writer's lock). */
typedef struct sc__idtab {
    uint64_t *slots; /* cap slots: tag (hash >> 32) << 32 | (entry + 1); 0 = empty */
    size_t cap;      /* 0, 16, then 1.5x the previous (sc__idtab_next_cap) */
    uint32_t len;    /* entries */
    sc_alloc_pool *pool;
} sc__idtab;

void sc__idtab_init(sc__idtab *t, sc_alloc_pool *pool);
void sc__idtab_fini(sc__idtab *t);
/* The entry of key: true and *entry when present; key_of(ctx, e) gives the key of an entry e
 * whose tag matched. O(1) expected; a key is read only on a tag match (false matches: about
 * probe length / 2^32 per lookup). */
bool sc__idtab_get(const sc__idtab *t, sc_slice key, sc__idtab_key_fn key_of, void *ctx,
                   uint32_t *entry);
/* Adds key (not present) as entry number `entry`, which must equal t->len (SC_EINVAL
 * otherwise); the key is hashed, not kept. SC_ENOMEM leaves the table unchanged. */
sc_status sc__idtab_add(sc__idtab *t, sc_slice key, uint32_t entry) SC_MUST_USE;
/* Makes room for one more entry: the next sc__idtab_add cannot fail with SC_ENOMEM. */
sc_status sc__idtab_reserve(sc__idtab *t) SC_MUST_USE;
/* Keeps the entries e with renum[e] != UINT32_MAX (renum has len entries), renumbered to
 * renum[e], which must be a permutation of 0..new_len-1 over the kept ones; the slot array
 * resized to hold new_len (freed when 0). Reads no key. SC_ENOMEM and SC_EINVAL (a bad
 * numbering) leave the table unchanged. O(cap + new slots). */
sc_status sc__idtab_compact(sc__idtab *t, const uint32_t *renum, uint32_t new_len) SC_MUST_USE;
/* The slot count a table of cap slots grows to (16 from 0, then 1.5x); it grows when an add
 * would make it more than 3/4 full. */
size_t sc__idtab_next_cap(size_t cap);

/* A segment's `_id` membership filter (idfilter.c): a blocked bloom filter, ~10 bits an id.
 * Never "absent" for a term of the segment; "present" for a foreign id about 1 % of the time. */
typedef struct sc__idfilter {
    uint64_t *words;   /* n_blocks blocks of 8 words (512 bits) */
    uint32_t n_blocks; /* 0: no ids, every answer "absent" */
} sc__idfilter;

/* Builds the filter of seg's `_id` terms into *out (one pass over the term dictionary;
 * O(terms)). SC_ECORRUPT (a term count that disagrees), SC_ENOMEM; *out empty on failure. */
sc_status sc__idfilter_build(const sc_segment *seg, sc__idfilter *out) SC_MUST_USE;
/* Whether a key whose sc_hashmap_hash is hash may be in the filter: false only when it is not
 * (no false "absent"). O(1), one cache line. */
bool sc__idfilter_maybe(const sc__idfilter *f, uint64_t hash);
void sc__idfilter_fini(sc__idfilter *f);
size_t sc__idfilter_bytes(const sc__idfilter *f);

/* Immutable live-docs bits shared by snapshots. */
typedef struct sc__live {
    _Atomic int refs;
    sc_bitset bits;
    uint32_t n_deleted;
} sc__live;

typedef struct sc__slot {
    uint32_t uid;
    char name[SC_SEGMENT_NAME_MAX + 1];
    sc_segment *seg;
    uint32_t n_docs;
    sc_bitset pending; /* writer's live bits; words NULL until the first delete */
    uint32_t n_deleted;
    sc__live *published; /* what the current snapshot uses (NULL: no deletes) */
    bool dirty;          /* pending differs from published */
    uint64_t del_gen;    /* committed deletes generation (0: none) */
    bool del_dirty;      /* deletes changed since the last commit */
    bool committed;      /* listed in the last manifest */
    int merging;
    int vdv_state;               /* version doc values: 0 not opened yet, 1 open, -1 missing */
    sc_dv_numeric vdv[3];        /* _seq_no, _primary_term, _version (wlock) */
    int iddv_state;              /* _id doc values: 0 not opened yet, 1 open, -1 missing (wlock) */
    sc_dv_sorted_set iddv;       /* the ids of the entries in this slot (sc__slot_key) */
    sc_buf old_ids;              /* iddv_state -1: every doc's id, read once from stored fields */
    SC_VEC(uint64_t) old_id_off; /* ... doc d's at old_ids[off[d] .. off[d + 1]) */
    int filter_state;            /* 0: filter not built yet, 1: built (wlock) */
    sc__idfilter filter;         /* of the segment's `_id` terms (sc__slot_find) */
} sc__slot;

/* Builds sl's `_id` filter unless built (wlock held, or sl not yet shared). Errors of
 * sc__idfilter_build. */
sc_status sc__slot_filter(sc__slot *sl) SC_MUST_USE;
/* The live doc of id in slot sl (hash = sc_hashmap_hash(id)): *found and *doc, the doc whose
 * `_id` term is id and whose bit is set in sl->pending (the writer's live bits); false when the
 * filter rules id out, the term is missing or every doc under it is deleted. Builds the filter
 * on first use. SC_ECORRUPT, SC_ENOMEM. wlock held; O(1) expected when the filter says
 * absent, else a term dictionary seek and the term's postings. */
sc_status sc__slot_find(sc__slot *sl, sc_slice id, uint64_t hash, uint32_t *doc, bool *found)
    SC_MUST_USE;
/* The live doc of id in any of the shard's segments, newest slot first (sc__slot_find on each):
 * *found, *slot and *doc. Errors of sc__slot_find. wlock held. */
sc_status sc__segments_find(sc_shard *s, sc_slice id, uint64_t hash, sc__slot **slot, uint32_t *doc,
                            bool *found) SC_MUST_USE;

/* The scheduler's record of one shard; every field under the scheduler's mutex. */
typedef struct sc__sched_slot {
    uint64_t last_refresh_ns, last_sync_ns; /* when a refresh / sync was last scheduled */
    size_t index;                           /* in the scheduler's shard array */
    bool queued;                            /* a maintenance job is queued or running */
    bool merge_queued;                      /* a merge job is queued or running */
    bool urgent;                            /* the buffer is full: refresh at once */
    bool want_merge;                        /* merge again once the running one ends */
    bool detaching;                         /* closing: schedule nothing more */
    bool do_refresh, do_sync;               /* what the queued maintenance job does */
    bool do_idle;                           /* ... and whether it releases idle memory */
    bool idle;                              /* released; nothing written since */
    uint64_t seen_changes;                  /* sc_shard.n_changes when last looked at */
    uint64_t last_active_ns;                /* when n_changes was last seen to move */
} sc__sched_slot;

typedef struct sc__snap {
    sc_shard_snapshot pub; /* first: the public view */
    _Atomic int refs;
    sc_shard_segment_view *views;
    sc__live **lives;
} sc__snap;

/* A buffered doc's _id and _source: id_len bytes of id at buf_sources[off], then len bytes of
 * source (a nested child's id_len is 0). */
typedef struct sc__buf_src {
    uint64_t off;
    uint32_t len;
    uint32_t id_len;
} sc__buf_src;

struct sc_shard {
    char *dir;
    sc_shard_config cfg;
    pthread_mutex_t wlock;                      /* writer: every mutation below */
    pthread_mutex_t map_lock;                   /* mapping pointer */
    pthread_mutex_t snap_lock;                  /* current snapshot pointer */
    pthread_mutex_t merge_lock;                 /* one merge at a time */
    char merging_name[SC_SEGMENT_NAME_MAX + 1]; /* segment a merge is writing (wlock) */
    sc_mapping *mapping;
    sc__snap *snap;
    sc_translog *tlog;
    uint32_t n_removed_at_open; /* leftover files removed when the shard was opened */
    sc_status sticky;           /* SC_EIO after a failed translog write: refuse writes */
    bool log_replayed; /* wlock held: a replay op is a replicated one, append it (replica.c) */
    /* ids */
    sc__idtab ids; /* id -> entry index (entries[i]'s key is sc__entry_key) */
    SC_VEC(sc__id_entry) entries;
    SC_VEC(sc__versions) tombs;  /* a tombstone entry's versions (by its doc) */
    SC_VEC(uint32_t) tombs_free; /* tombs no entry uses (reused first) */
    SC_VEC(uint64_t) tomb_key;   /* a tomb's key: offset in tomb_keys (UINT64_MAX: free) */
    sc_buf tomb_keys;            /* varint length + bytes per tomb key */
    uint64_t tomb_keys_garbage;  /* bytes of tomb_keys no tomb uses (compacted past half) */
    /* segments */
    SC_VEC(sc__slot *) slots;
    uint32_t next_uid;
    uint64_t seg_counter;
    /* buffer: the builder is made by the first write and freed when the shard goes idle
     * (sc_shard_release_idle), so an idle or never-written shard holds none */
    sc_segment_builder *builder;  /* NULL: nothing buffered */
    size_t builder_base_ram;      /* sc__shard_buffer_bytes right after the last reset */
    SC_VEC(uint32_t) buf_entry;   /* buffer doc -> entry */
    SC_VEC(sc__versions) buf_ver; /* buffer doc -> its versions (set for entries' docs) */
    SC_VEC(uint8_t) buf_deleted;  /* buffer doc deleted (overwritten) */
    SC_VEC(uint8_t) buf_child;    /* buffer doc is a nested child (its root follows its block) */
    SC_VEC(sc__buf_src) buf_src;
    sc_buf buf_sources;
    bool changed;   /* something to refresh */
    sc_arena arena; /* per operation */
    /* sequence numbers and commit */
    int64_t max_seq_no;
    int64_t committed_max_seq_no;
    uint64_t manifest_gen;
    uint64_t snap_gen;
    /* background work, run by a scheduler (sched.c) */
    sc_shard_sched *sched;      /* attached to (NULL: none, the caller drives) */
    sc_shard_sched *own_sched;  /* a private one when cfg.sched was NULL */
    sc__sched_slot sched_slot;  /* the scheduler's record (its mutex) */
    _Atomic bool bg_dirty;      /* writes since the last background refresh */
    _Atomic uint64_t n_changes; /* bumped by every change (sc__shard_mark_changed) */
    uint64_t idle_changes;      /* n_changes when sc_shard_release_idle last ended (wlock) */
    _Atomic uint64_t flush_threshold_bytes; /* flush past this translog size */
    _Atomic uint64_t merge_spilled_bytes;   /* written to merge spill files, ever */
    /* translog replay progress (open.c, during sc_shard_open only) */
    uint64_t replay_ops, replay_bytes, replay_total;
    /* stats */
    _Atomic uint64_t n_index_ops, n_delete_ops, n_refreshes, n_flushes, n_merges;
    _Atomic uint64_t n_queries, query_time_ns; /* query phases run on this copy */
    _Atomic uint64_t index_time_ns, refresh_time_ns, flush_time_ns, merge_time_ns;
    _Atomic uint64_t merges_current;
};

/* Something changed that a refresh must publish (wlock held); tells the scheduler too. */
static inline void sc__shard_mark_changed(sc_shard *s)
{
    s->changed = true;
    atomic_store_explicit(&s->bg_dirty, true, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->n_changes, 1, memory_order_relaxed);
}

/* Background work logs nothing and retries on the next tick; the status is dropped. */
static inline void sc__shard_ignore(sc_status st)
{
    (void)st;
}

/* A slot for an opened segment (takes the segment reference); NULL when out of memory. */
sc__slot *sc__slot_new(sc_shard *s, sc_segment *seg);
/* Marks doc of slot sl deleted in its pending live set (wlock held; built on first use). */
sc_status sc__slot_delete(sc__slot *sl, uint32_t doc) SC_MUST_USE;

/* The versions of entry e (wlock held; opens the slot's version doc values on first use).
 * SC_ECORRUPT when e's segment has no version doc values for its doc or e names no slot. */
sc_status sc__entry_versions(sc_shard *s, const sc__id_entry *e, sc__versions *out) SC_MUST_USE;
/* The versions of doc of slot sl from its doc values (wlock held); SC_ECORRUPT when missing. */
sc_status sc__slot_versions(sc__slot *sl, uint32_t doc, sc__versions *out) SC_MUST_USE;
/* Makes entry ei, whose id is key, a tombstone with versions v (wlock held); SC_ENOMEM leaves
 * it unchanged. */
sc_status sc__entry_tombstone(sc_shard *s, uint32_t ei, sc_slice key, const sc__versions *v)
    SC_MUST_USE;
/* The _id of entry number ei (< entries.len), read where its doc is: a segment doc's from the
 * segment's _id doc values (mapped; for a segment written before _id had doc values, from its
 * stored ids, read once into the slot), a buffered doc's from the buffer, a tombstone's from the
 * tombstone keys (wlock held). Valid until the next change under the lock; an empty slice with
 * a NULL ptr when it cannot be read (a location that names nothing). O(1) but the first read
 * of an old segment, which reads all its stored ids. */
sc_slice sc__entry_key(sc_shard *s, uint32_t ei);
/* The _id of doc of slot sl, as sc__entry_key. */
sc_slice sc__slot_key(sc__slot *sl, uint32_t doc);
/* The entry of id: true and *ei when the shard has one (wlock held). */
bool sc__entry_find(sc_shard *s, sc_slice id, uint32_t *ei);
/* Where an id's latest operation is (sc__id_locate). */
typedef struct sc__id_loc {
    bool known;      /* false: the shard has no operation of the id on record */
    sc__id_entry at; /* SC__SEG_BUFFER / SC__SEG_NONE (the table's entry) or a slot uid */
    uint32_t entry;  /* the table's entry number; SC__NO_ENTRY for a segment doc */
    sc__slot *slot;  /* at's slot when at is a segment doc, else NULL */
} sc__id_loc;
/* Finds id: the id table first (buffered docs and tombstones), else its live doc in the
 * segments, newest first, behind each segment's `_id` filter (sc__segments_find). wlock held.
 * SC_ECORRUPT, SC_ENOMEM (building a filter). */
sc_status sc__id_locate(sc_shard *s, sc_slice id, sc__id_loc *loc) SC_MUST_USE;
/* The versions of a located id (known); SC_ECORRUPT as sc__entry_versions. wlock held. */
sc_status sc__loc_versions(sc_shard *s, const sc__id_loc *loc, sc__versions *out) SC_MUST_USE;
/* Drops the buffer's entries from the id table after a refresh put their docs in a segment:
 * the table keeps its tombstones only, renumbered in entry order. SC_ENOMEM leaves it
 * unchanged. wlock held; O(table). */
sc_status sc__ids_drop_buffered(sc_shard *s) SC_MUST_USE;
/* Tomb t's key (t in use), as sc__entry_key. */
sc_slice sc__tomb_key(const sc_shard *s, uint32_t t);
/* A new tomb holding versions v and key (wlock held): its index in tombs. SC_ENOMEM. */
sc_status sc__tomb_new(sc_shard *s, sc_slice key, const sc__versions *v, uint32_t *t) SC_MUST_USE;
/* Frees tomb t (its entry left it) for reuse, with its key (wlock held). SC_ENOMEM leaves it
 * in use; SC_EINVAL when t is not a tomb in use. */
sc_status sc__tomb_free(sc_shard *s, uint32_t t) SC_MUST_USE;
/* Gives back the tombstone keys' garbage and spare capacity (never fails). */
void sc__tombs_shrink(sc_shard *s);
/* Frees every tomb and its key (the entries must not name them any more). */
void sc__tombs_clear(sc_shard *s);

/* Index / delete with wlock held (shard.c). replay: the op comes from the translog with fixed
 * versions (o, r may be NULL; nothing is appended to the translog). found: where the caller
 * located id (sc__id_locate) under this same hold of wlock, so the write does not look it up
 * again; NULL: the write looks it up (or not at all: o->append_only, index only). */
sc_status sc__shard_index_locked(sc_shard *s, sc_slice id, sc_slice source,
                                 const sc_shard_write_opts *o, const sc_translog_op *replay,
                                 const sc__id_loc *found, sc_shard_result *r, sc_shard_error *err);
sc_status sc__shard_delete_locked(sc_shard *s, sc_slice id, const sc_shard_write_opts *o,
                                  const sc_translog_op *replay, const sc__id_loc *found,
                                  sc_shard_result *r, sc_shard_error *err);

/* The in-memory buffer's bytes (builder and per-doc arrays with the buffered sources), what
 * _stats reports as index_writer_memory_in_bytes, and whether it should become a segment
 * (wlock held). */
size_t sc__shard_buffer_bytes(const sc_shard *s);
bool sc__shard_buffer_full(const sc_shard *s);
/* Past twice the limit: the writer refreshes itself instead of waiting for the scheduler. */
bool sc__shard_buffer_way_over(const sc_shard *s);
/* Whether the translog has passed the flush threshold (index.translog.flush_threshold_size). */
bool sc__shard_translog_over(sc_shard *s);
/* Bytes of the persisted id table files (ids-<gen>.dat) in the shard folder (ids.c). */
uint64_t sc__ids_file_bytes(const sc_shard *s);

/* Deletes files the shard no longer needs: segments, deletes and id tables neither in the
 * commit m (may be NULL) nor in the writer's set nor being written by a merge; at_open also
 * temp files of interrupted atomic writes. Best effort (wlock held). */
void sc__shard_cleanup_files(sc_shard *s, const sc_manifest *m, uint64_t ids_gen, bool at_open);

/* One round of background work (a scheduler's worker, no lock held): sync the translog
 * (do_sync), refresh (do_refresh, or when the buffer is full) and flush past the translog
 * threshold. Returns true when the refresh published something new (a merge may be due). */
bool sc__shard_maintain(sc_shard *s, bool do_sync, bool do_refresh);

/* Scheduler side (sched.c): attach a shard (SC_ENOMEM); detach it, waiting for its queued or
 * running jobs (no-op when not attached); ask for a refresh at once (buffer full). */
sc_status sc__sched_attach(sc_shard_sched *sc, sc_shard *s) SC_MUST_USE;
void sc__sched_detach(sc_shard *s);
void sc__sched_wake(sc_shard *s);

/* Publishes a new snapshot from the writer's slots (wlock held). */
sc_status sc__shard_publish(sc_shard *s);

/* Refresh with wlock held. */
sc_status sc__shard_refresh_locked(sc_shard *s);

/* Flush with wlock held. */
sc_status sc__shard_flush_locked(sc_shard *s);

/* Frees a slot (unrefs its segment and live bits). */
void sc__slot_free(sc__slot *sl);

void sc__live_unref(sc__live *l);

/* Writes / reads the id table `ids-<gen>.dat`; slots[] gives the manifest order. */
sc_status sc__ids_write(sc_shard *s, uint64_t gen) SC_MUST_USE;
sc_status sc__ids_read(sc_shard *s, uint64_t gen) SC_MUST_USE;
/* One entry of an id table file as decoded (ids.c); id borrowed from the file bytes. */
typedef struct sc__ids_entry {
    sc_slice id; /* a byte string: may hold NUL */
    int64_t seq_no, primary_term, version;
    uint64_t segment; /* index in the manifest + 1; 0 = tombstone (not range-checked here) */
    uint64_t doc;     /* not range-checked here */
} sc__ids_entry;
/* Decodes the bytes of an id table file (format in ids.c: version 2, or version 1 as older
 * shards wrote it), calling fn for each entry in order; e->id is valid during the call only.
 * fn's failure stops and is returned. SC_ECORRUPT on bad magic, checksum, a frame that does
 * not decompress to its declared size, truncation or trailing bytes; SC_ENOMEM. Never reads
 * outside data[0..len). O(len + decompressed size). */
sc_status sc__ids_decode(const uint8_t *data, size_t len,
                         sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx) SC_MUST_USE;
/* The entry stream of a version-2 file once decompressed (n entries filling raw[0..len)
 * exactly), as sc__ids_decode; exposed for the fuzzer. */
sc_status sc__ids_decode_entries(const uint8_t *raw, size_t len, uint64_t n,
                                 sc_status (*fn)(void *ctx, const sc__ids_entry *e), void *ctx)
    SC_MUST_USE;

/* The query phase under field collapsing (shard_collapse.c): res->docs are the top a->k
 * groups' best docs by score with their collapse keys (memory from `out`), the totals those of
 * the query. o is the search's options (its size is changed). Errors of sc_search_execute. */
/* terminate_after (shard_terminate.c): when more than n docs of s match q, masks segs (the
 * segments of s, owned by the caller) so that only the first n in index order stay live and
 * sets *terminated; masks come from scratch. Errors as sc_search_collect (why gets the
 * reason). */
sc_status sc__shard_terminate_after(const sc_query *q, uint64_t n, sc_cancel_token *token,
                                    sc_searcher_segment *segs, const sc_searcher *s,
                                    sc_arena *scratch, bool *terminated, char *why, size_t why_size)
    SC_MUST_USE;

sc_status sc__shard_collapse_run(const sc_shard_query_args *a, const sc_searcher *s,
                                 sc_search_options *o, sc_arena *scratch, sc_arena *out,
                                 sc_shard_query_result *res, sc_search_result *sr) SC_MUST_USE;

/* Applies one query rescorer to res's top docs (shard_rescore.c): rescoring the first
 * window_size, weighting the rest, re-sorting all. Memory from scratch. Errors of
 * sc_search_execute. */
sc_status sc__shard_rescore(const sc_shard_rescore *r, const sc_shard_snapshot *snap,
                            const sc_searcher *s, sc_cancel_token *token, sc_arena *scratch,
                            sc_shard_query_result *res) SC_MUST_USE;

#endif
