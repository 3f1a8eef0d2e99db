/* The shard's writer side: writes with versioning and the translog, and realtime get; see
 * shard.h. Refresh, commit, background rounds, idle release and stats are in shard_commit.c,
 * opening (recovery) and closing in open.c, snapshots in snapshot.c, merges in merge.c, the id
 * table file in ids.c and where its keys are read in idkeys.c. */
#include <dirent.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/file.h"
#include "index/stored.h"
#include "shard/internal.h"

static void conflict_err(sc_shard_error *err, sc_slice id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void conflict_err(sc_shard_error *err, sc_slice id, const char *fmt, ...)
{
    if (!err)
        return;
    char tail[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof(tail), fmt, ap);
    va_end(ap);
    err->type = "version_conflict_engine_exception";
    err->cause_type = NULL;
    err->cause_reason[0] = 0;
    snprintf(err->reason, sizeof(err->reason), "[%.*s]: version conflict, %s",
             (int)(id.len > 200 ? 200 : id.len), (const char *)id.ptr, tail);
}

static void plain_err(sc_shard_error *err, const char *type, const char *msg)
{
    if (!err)
        return;
    err->type = type;
    err->cause_type = NULL;
    err->cause_reason[0] = 0;
    snprintf(err->reason, sizeof(err->reason), "%s", msg);
}

sc_shard_write_opts sc_shard_write_defaults(void)
{
    sc_shard_write_opts o = {SC_SHARD_OP_INDEX, SC_SHARD_NO_SEQ_NO, 0, false, false};
    return o;
}

void sc_shard_set_mapping(sc_shard *s, sc_mapping *m)
{
    sc_mapping_ref(m);
    pthread_mutex_lock(&s->map_lock);
    sc_mapping *old = s->mapping;
    s->mapping = m;
    pthread_mutex_unlock(&s->map_lock);
    sc_mapping_unref(old);
}

sc_mapping *sc_shard_mapping(sc_shard *s)
{
    pthread_mutex_lock(&s->map_lock);
    sc_mapping *m = sc_mapping_ref(s->mapping);
    pthread_mutex_unlock(&s->map_lock);
    return m;
}

/* ---- slots ---- */

void sc__slot_free(sc__slot *sl)
{
    if (!sl)
        return;
    sc_segment_unref(sl->seg);
    sc_bitset_fini(&sl->pending);
    sc__live_unref(sl->published);
    sc_vec_free(&sl->old_ids);
    sc_vec_free(&sl->old_id_off);
    sc__idfilter_fini(&sl->filter);
    free(sl);
}

static sc__slot *slot_by_uid(sc_shard *s, uint32_t uid)
{
    for (size_t i = 0; i < s->slots.len; i++)
        if (s->slots.ptr[i]->uid == uid)
            return s->slots.ptr[i];
    return NULL;
}

sc_status sc__entry_versions(sc_shard *s, const sc__id_entry *e, sc__versions *out)
{
    if (e->seg == SC__SEG_BUFFER) {
        if (e->doc >= s->buf_ver.len)
            return SC_ECORRUPT;
        *out = s->buf_ver.ptr[e->doc];
        return SC_OK;
    }
    if (e->seg == SC__SEG_NONE) {
        if (e->doc >= s->tombs.len)
            return SC_ECORRUPT;
        *out = s->tombs.ptr[e->doc];
        return SC_OK;
    }
    sc__slot *sl = slot_by_uid(s, e->seg);
    return sl ? sc__slot_versions(sl, e->doc, out) : SC_ECORRUPT;
}

sc_status sc__slot_versions(sc__slot *sl, uint32_t doc, sc__versions *out)
{
    if (!sl->vdv_state) {
        static const char *const names[3] = {"_seq_no", "_primary_term", "_version"};
        sl->vdv_state = 1;
        for (int i = 0; i < 3 && sl->vdv_state == 1; i++) {
            const sc_field_info *fi = sc_segment_field(sl->seg, sc_slice_cstr(names[i]));
            if (!fi || fi->kind != SC_FIELD_NUMERIC ||
                sc_dv_numeric_open(sl->seg, fi, &sl->vdv[i]) != SC_OK)
                sl->vdv_state = -1;
        }
    }
    if (sl->vdv_state < 0 || !sc_dv_numeric_first(&sl->vdv[0], doc, &out->seq_no) ||
        !sc_dv_numeric_first(&sl->vdv[1], doc, &out->primary_term) ||
        !sc_dv_numeric_first(&sl->vdv[2], doc, &out->version))
        return SC_ECORRUPT;
    return SC_OK;
}

/* A slot for an opened segment (takes the segment reference). */
sc__slot *sc__slot_new(sc_shard *s, sc_segment *seg)
{
    sc__slot *sl = calloc(1, sizeof(*sl));
    if (!sl)
        return NULL;
    sl->uid = s->next_uid++;
    snprintf(sl->name, sizeof(sl->name), "%s", sc_segment_name(seg));
    sl->seg = seg;
    sl->n_docs = sc_segment_n_docs(seg);
    /* nested children are hidden from searches by the published live bits (snapshot.c) */
    sl->dirty = sc_segment_parents(seg) != NULL;
    return sl;
}

/* Marks doc deleted in a slot's pending bits. */
sc_status sc__slot_delete(sc__slot *sl, uint32_t doc)
{
    if (!sl->pending.words) {
        SC_TRY(sc_bitset_init(&sl->pending, sl->n_docs));
        sc_bitset_set_range(&sl->pending, 0, sl->n_docs);
    }
    if (doc < sl->n_docs && sc_bitset_test(&sl->pending, doc)) {
        sc_bitset_clear(&sl->pending, doc);
        sl->n_deleted++;
        sl->dirty = true;
        sl->del_dirty = true;
    }
    return SC_OK;
}

/* Marks buffer doc `doc` deleted with the nested children before it (its block). */
static void buffer_delete_block(sc_shard *s, uint32_t doc)
{
    s->buf_deleted.ptr[doc] = 1;
    while (doc > 0 && s->buf_child.ptr[doc - 1])
        s->buf_deleted.ptr[--doc] = 1;
}

/* Deletes the current location of entry e (buffer or segment): the whole block (the root
 * and its nested children). */
static sc_status drop_location(sc_shard *s, const sc__id_entry *e)
{
    if (e->seg == SC__SEG_BUFFER) {
        buffer_delete_block(s, e->doc);
        sc__shard_mark_changed(s);
        return SC_OK;
    }
    if (e->seg == SC__SEG_NONE)
        return SC_OK;
    sc__slot *sl = slot_by_uid(s, e->seg);
    if (!sl)
        return SC_OK;
    sc__shard_mark_changed(s);
    for (uint32_t d = sc_segment_block_start(sl->seg, e->doc); d < e->doc; d++)
        SC_TRY(sc__slot_delete(sl, d));
    return sc__slot_delete(sl, e->doc);
}

/* The indexing buffer's memory: the builder and the shard's per-doc arrays beside it, among
 * them the buffered `_source` copies (as large as the builder's own stored fields for a doc of
 * dense vectors, whose JSON text is three times the floats). */
size_t sc__shard_buffer_bytes(const sc_shard *s)
{
    return (s->builder ? sc_segment_builder_ram_bytes(s->builder) : 0) +
           s->buf_entry.cap * sizeof *s->buf_entry.ptr + s->buf_ver.cap * sizeof *s->buf_ver.ptr +
           s->buf_deleted.cap + s->buf_child.cap + s->buf_src.cap * sizeof *s->buf_src.ptr +
           s->buf_sources.cap;
}

/* Whether the buffer should become a segment. Measured from the buffer's size right after its
 * last reset: the builder and the arrays keep (and count) capacity across resets, so an
 * absolute threshold would refresh after a few hundred documents once it has been filled
 * once. */
bool sc__shard_buffer_full(const sc_shard *s)
{
    if (!s->builder)
        return false;
    size_t ram = sc__shard_buffer_bytes(s);
    return ram > s->builder_base_ram && ram - s->builder_base_ram > s->cfg.ram_buffer_bytes;
}

/* Whether the buffer passed twice its limit: the scheduler woken at the limit has not made it
 * a segment yet while writes kept coming (a bulk load on a busy machine), so the writer does
 * it itself and the buffer stays bounded whatever the write rate. */
bool sc__shard_buffer_way_over(const sc_shard *s)
{
    if (!s->builder)
        return false;
    size_t ram = sc__shard_buffer_bytes(s);
    return ram > s->builder_base_ram && ram - s->builder_base_ram > 2 * s->cfg.ram_buffer_bytes;
}

/* ---- applying operations ---- */

/* Where id is and its versions (zero when the id is unknown). */
static sc_status id_lookup(sc_shard *s, sc_slice id, sc__id_loc *loc, sc__versions *v)
{
    SC_TRY(sc__id_locate(s, id, loc));
    memset(v, 0, sizeof *v);
    return loc->known ? sc__loc_versions(s, loc, v) : SC_OK;
}

/* Parses `source` with the shard's mapping, handling dynamic mapping updates. */
static sc_status parse_doc(sc_shard *s, sc_slice id, sc_slice source, sc_index_doc *doc,
                           sc_shard_error *err)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        sc_mapping *m = sc_shard_mapping(s);
        sc_mapping *updated = NULL;
        sc_status st =
            sc_mapping_parse_doc(m, s->cfg.analysis, id, source, &s->arena, doc, &updated, err);
        sc_mapping_unref(m);
        if (st != SC_OK)
            return st;
        if (!updated)
            return SC_OK;
        if (s->cfg.on_mapping_update) {
            st = s->cfg.on_mapping_update(s->cfg.update_ctx, s, updated, err);
            sc_mapping_unref(updated);
            if (st != SC_OK)
                return st;
            /* parse again with whatever mapping was installed (it contains the new fields
             * unless another update raced; then another round) */
            continue;
        }
        sc_shard_set_mapping(s, updated);
        sc_mapping_unref(updated);
        return SC_OK; /* *doc was built against `updated`: valid */
    }
    plain_err(err, "illegal_argument_exception", "mapping update did not converge");
    return SC_ECONFLICT;
}

/* Adds one doc of a block to the buffer's parallel arrays and the builder (made here by the
 * first write after an open or an idle release). */
static sc_status buffer_add_one(sc_shard *s, const sc_index_doc *d, sc_slice id, bool child,
                                uint32_t *doc_id)
{
    if (!s->builder) {
        SC_TRY(sc_segment_builder_new(&s->builder));
        s->builder_base_ram = sc__shard_buffer_bytes(s);
    }
    SC_TRY(sc_vec_reserve(&s->buf_entry, 1));
    SC_TRY(sc_vec_reserve(&s->buf_ver, 1));
    SC_TRY(sc_vec_reserve(&s->buf_deleted, 1));
    SC_TRY(sc_vec_reserve(&s->buf_child, 1));
    SC_TRY(sc_vec_reserve(&s->buf_src, 1));
    SC_TRY(sc_vec_reserve(&s->buf_sources, id.len + d->source.len));
    SC_TRY(sc_segment_builder_add(s->builder, d, doc_id));
    /* the id first: sc__entry_key reads a buffered entry's key here */
    sc__buf_src bs = {s->buf_sources.len, (uint32_t)d->source.len, (uint32_t)id.len};
    if (id.len)
        memcpy(s->buf_sources.ptr + s->buf_sources.len, id.ptr, id.len);
    s->buf_sources.len += id.len;
    if (d->source.len)
        memcpy(s->buf_sources.ptr + s->buf_sources.len, d->source.ptr, d->source.len);
    s->buf_sources.len += d->source.len;
    s->buf_src.ptr[s->buf_src.len++] = bs;
    s->buf_deleted.ptr[s->buf_deleted.len++] = 0;
    s->buf_child.ptr[s->buf_child.len++] = child;
    s->buf_entry.ptr[s->buf_entry.len++] = SC__NO_ENTRY;
    s->buf_ver.ptr[s->buf_ver.len++] = (sc__versions){0};
    return SC_OK;
}

/* Appends the version metadata fields and adds the doc to the buffer, after its nested
 * children (a block: children then root, contiguous). A failure after some children were
 * added marks them deleted. */
static sc_status buffer_add(sc_shard *s, const sc_index_doc *doc, sc_slice id, int64_t seq_no,
                            int64_t term, int64_t version, uint32_t *doc_id)
{
    sc_index_field *f = sc_arena_alloc(&s->arena, (doc->n_fields + 3) * sizeof(*f));
    int64_t *vals = sc_arena_alloc(&s->arena, 3 * sizeof(int64_t));
    if (!f || !vals)
        return SC_ENOMEM;
    memcpy(f, doc->fields, doc->n_fields * sizeof(*f));
    vals[0] = seq_no;
    vals[1] = version;
    vals[2] = term;
    static const char *const names[3] = {"_seq_no", "_version", "_primary_term"};
    for (int i = 0; i < 3; i++) {
        sc_index_field *x = &f[doc->n_fields + i];
        memset(x, 0, sizeof(*x));
        x->name = sc_slice_cstr(names[i]);
        x->kind = SC_FIELD_NUMERIC;
        x->flags = SC_FIELD_DOCVALUES;
        x->values = &vals[i];
        x->n_values = 1;
    }
    sc_index_doc d = *doc;
    d.fields = f;
    d.n_fields = doc->n_fields + 3;
    d.children = NULL;
    d.n_children = 0;
    size_t first = s->buf_deleted.len;
    sc_status st = SC_OK;
    for (size_t i = 0; st == SC_OK && i < doc->n_children; i++)
        st = buffer_add_one(s, &doc->children[i], sc_slice_make(NULL, 0), true, NULL);
    if (st == SC_OK)
        st = buffer_add_one(s, &d, id, false, doc_id);
    if (st != SC_OK) {
        for (size_t i = first; i < s->buf_deleted.len; i++)
            s->buf_deleted.ptr[i] = 1;
        if (s->buf_deleted.len > first)
            sc__shard_mark_changed(s);
        return st;
    }
    sc__shard_mark_changed(s);
    return SC_OK;
}

/* Room for one more entry (and its tomb's free-list place). */
static sc_status entry_reserve(sc_shard *s)
{
    SC_TRY(sc_vec_reserve(&s->entries, 1));
    SC_TRY(sc_vec_reserve(&s->tombs_free, 1));
    return sc__idtab_reserve(&s->ids);
}

/* Points id's entry at (seg, doc) with the given versions: entry ei (the id's entry as the
 * write's lookup found it; the table has not changed since, the writer's lock is held), or a
 * new entry when ei is SC__NO_ENTRY (the key's source is in place first: a buffered doc's id is
 * in the buffer, a tombstone's is copied to the tombstone keys). Taking the lookup's entry
 * instead of probing the table again saves a probe per write. */
static sc_status entry_set(sc_shard *s, sc_slice id, uint32_t ei, int64_t seq_no, int64_t term,
                           int64_t version, uint32_t seg, uint32_t doc)
{
    uint64_t idx = ei;
    sc__versions v = {seq_no, term, version};
    if (ei == SC__NO_ENTRY) {
        idx = s->entries.len;
        SC_TRY(sc_vec_reserve(&s->entries, 1));
        SC_TRY(sc_vec_reserve(&s->tombs_free, 1)); /* a failed add below frees its tomb */
        sc__id_entry ne = {seg, doc};
        if (seg == SC__SEG_NONE)
            SC_TRY(sc__tomb_new(s, id, &v, &ne.doc));
        sc_status st = sc__idtab_add(&s->ids, id, (uint32_t)idx);
        if (st != SC_OK) {
            if (seg == SC__SEG_NONE)
                sc__shard_ignore(sc__tomb_free(s, ne.doc));
            return st;
        }
        s->entries.ptr[s->entries.len++] = ne;
    } else if (ei >= s->entries.len) {
        return SC_ECORRUPT;
    } else if (seg == SC__SEG_NONE) {
        return sc__entry_tombstone(s, ei, id, &v);
    } else {
        sc__id_entry *e = &s->entries.ptr[ei];
        if (e->seg == SC__SEG_NONE)
            SC_TRY(sc__tomb_free(s, e->doc));
        e->seg = seg;
        e->doc = doc;
    }
    if (seg == SC__SEG_BUFFER) {
        s->buf_entry.ptr[doc] = (uint32_t)idx;
        s->buf_ver.ptr[doc] = v;
    }
    return SC_OK;
}

/* The version checks shared by index and delete. */
static sc_status check_versions(const sc__id_entry *ent, const sc__versions *e, sc_slice id,
                                const sc_shard_write_opts *o, bool is_create, sc_shard_error *err)
{
    bool exists = ent && ent->seg != SC__SEG_NONE;
    if (is_create && exists) {
        conflict_err(err, id, "document already exists (current version [%" PRId64 "])",
                     e->version);
        return SC_ECONFLICT;
    }
    if (o && o->if_seq_no != SC_SHARD_NO_SEQ_NO) {
        if (!exists) {
            conflict_err(err, id,
                         "required seqNo [%" PRId64 "], primary term [%" PRId64
                         "]. but no document was found",
                         o->if_seq_no, o->if_primary_term);
            return SC_ECONFLICT;
        }
        if (e->seq_no != o->if_seq_no ||
            (o->if_primary_term && e->primary_term != o->if_primary_term)) {
            conflict_err(err, id,
                         "required seqNo [%" PRId64 "], primary term [%" PRId64
                         "]. current document has seqNo [%" PRId64 "] and primary term [%" PRId64
                         "]",
                         o->if_seq_no, o->if_primary_term, e->seq_no, e->primary_term);
            return SC_ECONFLICT;
        }
    }
    return SC_OK;
}

/* Where the write finds id and the id's versions: the caller's lookup (found), none at all
 * for a primary's append-only write (its id cannot exist, sc_shard_write_opts.append_only), or
 * a lookup here. */
static sc_status write_lookup(sc_shard *s, sc_slice id, bool append_only, const sc__id_loc *found,
                              sc__id_loc *where, sc__versions *ev)
{
    if (found) {
        *where = *found;
        memset(ev, 0, sizeof *ev);
        return where->known ? sc__loc_versions(s, where, ev) : SC_OK;
    }
    if (append_only) {
        memset(where, 0, sizeof *where);
        where->entry = SC__NO_ENTRY;
        memset(ev, 0, sizeof *ev);
        return SC_OK;
    }
    return id_lookup(s, id, where, ev);
}

/* Index with wlock held. replay: the op comes from the translog with fixed versions. found:
 * where the caller found id under the same hold of the lock, or NULL. */
sc_status sc__shard_index_locked(sc_shard *s, sc_slice id, sc_slice source,
                                 const sc_shard_write_opts *o, const sc_translog_op *replay,
                                 const sc__id_loc *found, sc_shard_result *r, sc_shard_error *err)
{
    if (s->sticky != SC_OK) {
        plain_err(err, "translog_exception", "the shard's translog failed; writes are refused");
        return s->sticky;
    }
    if (id.len == 0 || id.len > 512) {
        plain_err(err, "illegal_argument_exception",
                  id.len ? "id is too long, must be no longer than 512 bytes"
                         : "if _id is specified it must not be empty");
        return SC_EINVAL;
    }
    sc_arena_mark mark = sc_arena_mark_get(&s->arena);
    sc__id_loc where;
    sc__versions ev;
    SC_TRY(write_lookup(s, id, !replay && o && o->append_only, found, &where, &ev));
    if (!replay)
        SC_TRY(check_versions(where.known ? &where.at : NULL, &ev, id, o,
                              o && o->op_type == SC_SHARD_OP_CREATE, err));
    /* room first: an id found in a segment gets a new entry, which must not fail once the
     * op is in the translog and its segment doc deleted */
    SC_TRY(entry_reserve(s));
    /* One lookup per write, before parsing: `where` stays true through it. Where an id is
     * changes only under the writer's lock (writes, refresh, merge commit, replica ops, idle
     * release, close), which this thread holds, and parsing calls out only to the mapping
     * update hook (cluster/shards.c on_mapping_update: it merges mappings, installs them
     * under map_lock and queues the metadata for etcd; it cannot take wlock, which would
     * deadlock). The second lookup that used to follow here found the same thing. */
    sc_index_doc doc;
    sc_status st = parse_doc(s, id, source, &doc, err);
    if (st != SC_OK) {
        sc_arena_rewind(&s->arena, mark);
        return st;
    }
    bool exists = where.known && where.at.seg != SC__SEG_NONE;
    int64_t seq_no = replay ? replay->seq_no : s->max_seq_no + 1;
    int64_t term = replay ? replay->primary_term : s->cfg.primary_term;
    int64_t version = replay ? replay->version : (where.known ? ev.version + 1 : 1);
    uint32_t doc_id;
    st = buffer_add(s, &doc, id, seq_no, term, version, &doc_id);
    sc_arena_rewind(&s->arena, mark);
    if (st != SC_OK) {
        if (st == SC_EINVAL)
            plain_err(err, "illegal_argument_exception",
                      "Document contains at least one immense term or an invalid field");
        return st;
    }
    uint64_t loc = 0;
    if (!replay || s->log_replayed) {
        sc_translog_op op = {SC_TRANSLOG_INDEX, seq_no, term, version, id, source};
        st = sc_translog_append(s->tlog, &op, &loc);
        if (st != SC_OK) {
            buffer_delete_block(s, doc_id);
            plain_err(err, "translog_exception", "failed to append to the translog");
            return st;
        }
    }
    if (where.known)
        SC_TRY(drop_location(s, &where.at));
    SC_TRY(entry_set(s, id, where.entry, seq_no, term, version, SC__SEG_BUFFER, doc_id));
    if (seq_no > s->max_seq_no)
        s->max_seq_no = seq_no;
    if (r) {
        r->seq_no = seq_no;
        r->primary_term = term;
        r->version = version;
        r->created = !exists;
        r->found = exists;
        r->translog_location = loc;
    }
    return SC_OK;
}

sc_status sc__shard_delete_locked(sc_shard *s, sc_slice id, const sc_shard_write_opts *o,
                                  const sc_translog_op *replay, const sc__id_loc *found,
                                  sc_shard_result *r, sc_shard_error *err)
{
    if (s->sticky != SC_OK) {
        plain_err(err, "translog_exception", "the shard's translog failed; writes are refused");
        return s->sticky;
    }
    if (id.len == 0 || id.len > 512) {
        plain_err(err, "illegal_argument_exception", "invalid id");
        return SC_EINVAL;
    }
    sc__id_loc where;
    sc__versions ev;
    SC_TRY(write_lookup(s, id, false, found, &where, &ev));
    if (!replay)
        SC_TRY(check_versions(where.known ? &where.at : NULL, &ev, id, o, false, err));
    SC_TRY(entry_reserve(s));
    bool exists = where.known && where.at.seg != SC__SEG_NONE;
    int64_t seq_no = replay ? replay->seq_no : s->max_seq_no + 1;
    int64_t term = replay ? replay->primary_term : s->cfg.primary_term;
    int64_t version = replay ? replay->version : (where.known ? ev.version + 1 : 1);
    uint64_t loc = 0;
    if (!replay || s->log_replayed) {
        sc_translog_op op = {SC_TRANSLOG_DELETE, seq_no, term, version, id, {0}};
        sc_status st = sc_translog_append(s->tlog, &op, &loc);
        if (st != SC_OK) {
            plain_err(err, "translog_exception", "failed to append to the translog");
            return st;
        }
    }
    if (where.known)
        SC_TRY(drop_location(s, &where.at));
    SC_TRY(entry_set(s, id, where.entry, seq_no, term, version, SC__SEG_NONE, 0));
    if (seq_no > s->max_seq_no)
        s->max_seq_no = seq_no;
    if (r) {
        r->seq_no = seq_no;
        r->primary_term = term;
        r->version = version;
        r->created = false;
        r->found = exists;
        r->translog_location = loc;
    }
    return SC_OK;
}

/* Whether the translog has grown past index.translog.flush_threshold_size: then the buffer is
 * refreshed and the shard flushed (commit + translog trim) so that a restart replays at most
 * about that much. Checked after every write, not only by a timed refresh, so that it also
 * holds with refresh_interval -1 and explicit refreshes (which empty the buffer, so the
 * buffer-full trigger never fires). */
bool sc__shard_translog_over(sc_shard *s)
{
    return sc_translog_size_bytes(s->tlog) >
           atomic_load_explicit(&s->flush_threshold_bytes, memory_order_relaxed);
}

void sc_shard_set_flush_threshold(sc_shard *s, uint64_t bytes)
{
    atomic_store(&s->flush_threshold_bytes, bytes ? bytes : 512ull << 20);
    if (sc__shard_translog_over(s))
        sc__sched_wake(s);
}

static bool needs_sync(const sc_shard *s, const sc_shard_write_opts *o)
{
    return !s->cfg.durability_async && !(o && o->defer_sync);
}

sc_status sc_shard_index(sc_shard *s, sc_slice id, sc_slice source, const sc_shard_write_opts *o,
                         sc_shard_result *r, sc_shard_error *err)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_shard_result tmp;
    if (!r)
        r = &tmp;
    pthread_mutex_lock(&s->wlock);
    sc_status st = sc__shard_index_locked(s, id, source, o, NULL, NULL, r, err);
    bool over = st == SC_OK && (sc__shard_buffer_full(s) || sc__shard_translog_over(s));
    if (over && (!s->sched || sc__shard_buffer_way_over(s))) {
        st = sc__shard_refresh_locked(s);
        if (st == SC_OK && sc__shard_translog_over(s))
            st = sc__shard_flush_locked(s);
    }
    pthread_mutex_unlock(&s->wlock);
    if (st == SC_OK && needs_sync(s, o) &&
        sc_translog_sync_to(s->tlog, r->translog_location) != SC_OK) {
        plain_err(err, "translog_exception", "failed to sync the translog");
        st = SC_EIO;
    }
    if (st == SC_OK) {
        if (over)
            sc__sched_wake(s);
        atomic_fetch_add(&s->n_index_ops, 1);
        atomic_fetch_add(&s->index_time_ns, sc_clock_now_ns() - t0);
    }
    return st;
}

sc_status sc_shard_delete(sc_shard *s, sc_slice id, const sc_shard_write_opts *o,
                          sc_shard_result *r, sc_shard_error *err)
{
    sc_shard_result tmp;
    if (!r)
        r = &tmp;
    pthread_mutex_lock(&s->wlock);
    sc_status st = sc__shard_delete_locked(s, id, o, NULL, NULL, r, err);
    pthread_mutex_unlock(&s->wlock);
    if (st == SC_OK && needs_sync(s, o) &&
        sc_translog_sync_to(s->tlog, r->translog_location) != SC_OK) {
        plain_err(err, "translog_exception", "failed to sync the translog");
        st = SC_EIO;
    }
    if (st == SC_OK)
        atomic_fetch_add(&s->n_delete_ops, 1);
    return st;
}

sc_status sc_shard_sync(sc_shard *s)
{
    return sc_translog_sync(s->tlog);
}

sc_status sc_shard_sync_to(sc_shard *s, uint64_t location)
{
    return sc_translog_sync_to(s->tlog, location);
}

/* ---- get ---- */

void sc_shard_doc_fini(sc_shard_doc *doc)
{
    free(doc->source);
    memset(doc, 0, sizeof(*doc));
}

sc_status sc_shard_get(sc_shard *s, sc_slice id, sc_shard_doc *doc)
{
    memset(doc, 0, sizeof(*doc));
    pthread_mutex_lock(&s->wlock);
    sc__id_loc loc;
    sc_status lst = sc__id_locate(s, id, &loc);
    if (lst != SC_OK || !loc.known || loc.at.seg == SC__SEG_NONE) {
        pthread_mutex_unlock(&s->wlock);
        return lst;
    }
    const sc__id_entry *e = &loc.at;
    sc__versions v;
    sc_status vst = sc__loc_versions(s, &loc, &v);
    if (vst != SC_OK) {
        pthread_mutex_unlock(&s->wlock);
        return vst;
    }
    doc->seq_no = v.seq_no;
    doc->primary_term = v.primary_term;
    doc->version = v.version;
    if (e->seg == SC__SEG_BUFFER) {
        sc__buf_src bs = s->buf_src.ptr[e->doc];
        doc->source = malloc(bs.len ? bs.len : 1);
        if (!doc->source) {
            pthread_mutex_unlock(&s->wlock);
            return SC_ENOMEM;
        }
        memcpy(doc->source, s->buf_sources.ptr + bs.off + bs.id_len, bs.len);
        doc->source_len = bs.len;
        doc->found = true;
        pthread_mutex_unlock(&s->wlock);
        return SC_OK;
    }
    sc__slot *sl = loc.slot;
    if (!sl) {
        pthread_mutex_unlock(&s->wlock);
        return SC_ECORRUPT;
    }
    sc_segment *seg = sl->seg;
    uint32_t d = e->doc;
    sc_segment_ref(seg);
    pthread_mutex_unlock(&s->wlock);
    sc_stored_reader rd;
    sc_stored_reader_init(&rd, seg);
    sc_slice sid, src;
    sc_status st = sc_stored_get(&rd, d, &sid, &src);
    if (st == SC_OK) {
        doc->source = malloc(src.len ? src.len : 1);
        if (doc->source) {
            memcpy(doc->source, src.ptr, src.len);
            doc->source_len = src.len;
            doc->found = true;
        } else {
            st = SC_ENOMEM;
        }
    }
    sc_stored_reader_fini(&rd);
    sc_segment_unref(seg);
    return st;
}

/* ---- refresh and commit ---- */
