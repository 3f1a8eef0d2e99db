/* The shard's commit side: refresh (the indexing buffer into a segment), flush (a commit: the
 * manifest, the id table file and a new translog generation), removal of files no commit
 * references, one round of background work (timed refresh, flush; run by sched.c), giving back
 * an idle shard's memory, and stats. The write path is in shard.c. */
#include <dirent.h>
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

static void next_segment_name(sc_shard *s, char *out, size_t cap)
{
    snprintf(out, cap, "seg%08" PRIu64, s->seg_counter++);
}

/* Buffers larger than this, or than a quarter of ram_buffer_bytes, give their memory back
 * when they become a segment (a bulk load's buffer of up to ram_buffer_bytes would otherwise
 * stay allocated while the shard idles); smaller ones (a refresh every second of a few docs)
 * keep their capacity for the next. The quarter bounds the buffer at 1.25 ram_buffer_bytes:
 * the threshold counts from the kept capacity, which a small limit would otherwise let grow
 * by a limit's worth each refresh up to 4 MiB. */
#define RELEASE_BUFFER_BYTES ((size_t)4 << 20)

static void buffer_clear(sc_shard *s)
{
    if (!s->builder)
        return;
    size_t keep = s->cfg.ram_buffer_bytes / 4;
    if (keep > RELEASE_BUFFER_BYTES)
        keep = RELEASE_BUFFER_BYTES;
    bool release = sc__shard_buffer_bytes(s) > keep;
    sc_segment_builder_reset(s->builder);
    if (release) {
        sc_segment_builder_trim(s->builder);
        sc_vec_free(&s->buf_entry);
        sc_vec_free(&s->buf_ver);
        sc_vec_free(&s->buf_deleted);
        sc_vec_free(&s->buf_child);
        sc_vec_free(&s->buf_src);
        sc_vec_free(&s->buf_sources);
        sc_alloc_release_free();
    }
    sc_vec_clear(&s->buf_entry);
    sc_vec_clear(&s->buf_ver);
    sc_vec_clear(&s->buf_deleted);
    sc_vec_clear(&s->buf_child);
    sc_vec_clear(&s->buf_src);
    sc_vec_clear(&s->buf_sources);
    s->builder_base_ram = sc__shard_buffer_bytes(s);
}

sc_status sc__shard_refresh_locked(sc_shard *s)
{
    if (!s->changed)
        return SC_OK;
    uint64_t t0 = sc_clock_now_ns();
    uint32_t n = s->builder ? sc_segment_builder_n_docs(s->builder) : 0;
    if (n > 0) {
        char name[SC_SEGMENT_NAME_MAX + 1];
        next_segment_name(s, name, sizeof(name));
        SC_TRY(sc_segment_builder_write(s->builder, s->dir, name, NULL));
        sc_segment *seg;
        SC_TRY(sc_segment_open(s->dir, name, &seg));
        sc__slot *sl = sc__slot_new(s, seg);
        if (!sl) {
            sc_segment_unref(seg);
            return SC_ENOMEM;
        }
        /* everything that can fail before anything changes: the new slot's deletes, its
         * filter, room for it; then the buffer's ids leave the table (found in the new
         * segment's `_id` terms from now on: buffer doc d is its doc d) */
        sc_status st = sc_vec_reserve(&s->slots, 1);
        for (uint32_t d = 0; d < n && st == SC_OK; d++)
            if (s->buf_deleted.ptr[d])
                st = sc__slot_delete(sl, d);
        if (st == SC_OK)
            st = sc__slot_filter(sl);
        if (st == SC_OK)
            st = sc__ids_drop_buffered(s);
        if (st != SC_OK) {
            sc__slot_free(sl);
            return st;
        }
        s->slots.ptr[s->slots.len++] = sl;
        sl->dirty = true;
        buffer_clear(s);
    }
    SC_TRY(sc__shard_publish(s));
    s->changed = false;
    atomic_fetch_add(&s->n_refreshes, 1);
    atomic_fetch_add(&s->refresh_time_ns, sc_clock_now_ns() - t0);
    return SC_OK;
}

sc_status sc_shard_refresh(sc_shard *s)
{
    pthread_mutex_lock(&s->wlock);
    sc_status st = sc__shard_refresh_locked(s);
    pthread_mutex_unlock(&s->wlock);
    return st;
}

/* Whether nm (len bytes) is suf with something before it. */
static bool has_suffix(const char *nm, size_t len, const char *suf)
{
    size_t n = strlen(suf);
    return len > n && strcmp(nm + len - n, suf) == 0;
}

/* Whether nm is "<seg>.seg" for a segment name. */
static bool is_seg_file(const char *nm, size_t len, const char *seg)
{
    size_t n = strlen(seg);
    return len == n + 4 && memcmp(nm, seg, n) == 0 && strcmp(nm + n, ".seg") == 0;
}

/* Deletes files the shard no longer needs: segments, deletes and id tables neither in the last
 * commit nor in the writer's set nor being written by a merge; at open also temp files of
 * interrupted atomic writes, segment writes and merges (counted in n_removed_at_open). Best
 * effort (wlock held). */
void sc__shard_cleanup_files(sc_shard *s, const sc_manifest *m, uint64_t ids_gen, bool at_open)
{
    DIR *d = opendir(s->dir);
    if (!d)
        return;
    struct dirent *de;
    char keep_ids[64];
    snprintf(keep_ids, sizeof(keep_ids), "ids-%" PRIu64 ".dat", ids_gen);
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        size_t len = strlen(nm);
        bool candidate = false, keep = false;
        if (at_open && strncmp(nm, SC_SHARD_PIN_PREFIX, strlen(SC_SHARD_PIN_PREFIX)) == 0) {
            /* a commit pinned for a snapshot copy that never finished */
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", s->dir, nm);
            if (sc_dir_remove_all(path) == SC_OK)
                s->n_removed_at_open++;
            continue;
        }
        if (strstr(nm, ".tmp.") || has_suffix(nm, len, ".tmp")) {
            /* atomic writes (".tmp.<n>") and segment writes ("<seg>.seg.tmp") cut short */
            candidate = at_open;
        } else if (has_suffix(nm, len, ".seg")) {
            candidate = true;
            keep = s->merging_name[0] && is_seg_file(nm, len, s->merging_name);
            for (size_t i = 0; i < s->slots.len && !keep; i++)
                keep = is_seg_file(nm, len, s->slots.ptr[i]->name);
            for (size_t i = 0; m && i < m->segments.len && !keep; i++)
                keep = is_seg_file(nm, len, m->segments.ptr[i].name);
        } else if (has_suffix(nm, len, ".del")) {
            candidate = true;
            for (size_t i = 0; m && i < m->segments.len && !keep; i++) {
                char want[SC_SEGMENT_NAME_MAX + 32];
                snprintf(want, sizeof(want), "%s_%" PRIu64 ".del", m->segments.ptr[i].name,
                         m->segments.ptr[i].del_gen);
                keep = strcmp(want, nm) == 0;
            }
        } else if (strncmp(nm, "ids-", 4) == 0) {
            candidate = true;
            keep = strcmp(nm, keep_ids) == 0;
        }
        if (candidate && !keep) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", s->dir, nm);
            if (unlink(path) == 0 && at_open)
                s->n_removed_at_open++;
        }
    }
    closedir(d);
}

static sc_status user_data_write(sc_shard *s, sc_buf *out, uint64_t tlog_gen, uint64_t ids_gen)
{
    char txt[512];
    int n =
        snprintf(txt, sizeof(txt),
                 "{\"translog_gen\":%" PRIu64 ",\"max_seq_no\":%" PRId64 ",\"seg_counter\":%" PRIu64
                 ",\"ids_gen\":%" PRIu64 ",\"primary_term\":%" PRId64 "}",
                 tlog_gen, s->max_seq_no, s->seg_counter, ids_gen, s->cfg.primary_term);
    sc_vec_clear(out);
    return sc_vec_append(out, (const uint8_t *)txt, (size_t)n);
}

sc_status sc__shard_flush_locked(sc_shard *s)
{
    uint64_t t0 = sc_clock_now_ns();
    SC_TRY(sc__shard_refresh_locked(s));
    sc_manifest m;
    sc_manifest_init(&m);
    sc_status st = SC_OK;
    /* deletes files for changed slots */
    for (size_t i = 0; i < s->slots.len && st == SC_OK; i++) {
        sc__slot *sl = s->slots.ptr[i];
        if (sl->del_dirty && sl->n_deleted) {
            st = sc_live_docs_write(s->dir, sl->name, sl->del_gen + 1, &sl->pending);
            if (st == SC_OK)
                sl->del_gen++;
        }
        if (st == SC_OK)
            sl->del_dirty = false;
    }
    uint64_t new_gen = 0;
    if (st == SC_OK)
        st = sc_translog_roll(s->tlog, &new_gen);
    uint64_t mgen = s->manifest_gen + 1;
    if (st == SC_OK)
        st = sc__ids_write(s, mgen);
    for (size_t i = 0; i < s->slots.len && st == SC_OK; i++) {
        sc__slot *sl = s->slots.ptr[i];
        sc_manifest_segment ms;
        memset(&ms, 0, sizeof(ms));
        snprintf(ms.name, sizeof(ms.name), "%s", sl->name);
        ms.n_docs = sl->n_docs;
        ms.n_deleted = sl->del_gen ? sl->n_deleted : 0;
        ms.del_gen = sl->n_deleted ? sl->del_gen : 0;
        ms.checksum = sc_segment_checksum(sl->seg);
        st = sc_vec_push(&m.segments, ms);
    }
    m.generation = mgen;
    if (st == SC_OK)
        st = user_data_write(s, &m.user_data, new_gen, mgen);
    if (st == SC_OK)
        st = sc_manifest_write(s->dir, &m);
    if (st == SC_OK) {
        s->manifest_gen = mgen;
        s->committed_max_seq_no = s->max_seq_no;
        for (size_t i = 0; i < s->slots.len; i++)
            s->slots.ptr[i]->committed = true;
        st = sc_translog_trim(s->tlog, new_gen);
        sc__shard_cleanup_files(s, &m, mgen, false);
        atomic_fetch_add(&s->n_flushes, 1);
        atomic_fetch_add(&s->flush_time_ns, sc_clock_now_ns() - t0);
    }
    sc_manifest_fini(&m);
    return st;
}

static bool needs_flush_locked(sc_shard *s)
{
    if (s->changed || s->buf_entry.len || s->max_seq_no != s->committed_max_seq_no ||
        sc_translog_n_ops(s->tlog))
        return true;
    for (size_t i = 0; i < s->slots.len; i++)
        if (!s->slots.ptr[i]->committed || s->slots.ptr[i]->del_dirty)
            return true;
    return false;
}

bool sc_shard_needs_flush(sc_shard *s)
{
    pthread_mutex_lock(&s->wlock);
    bool dirty = needs_flush_locked(s);
    pthread_mutex_unlock(&s->wlock);
    return dirty;
}

sc_status sc_shard_flush(sc_shard *s)
{
    pthread_mutex_lock(&s->wlock);
    sc_status st = sc__shard_flush_locked(s);
    pthread_mutex_unlock(&s->wlock);
    return st;
}

/* ---- background work (run by the scheduler, sched.c) ---- */

bool sc__shard_maintain(sc_shard *s, bool do_sync, bool do_refresh)
{
    if (do_sync)
        sc__shard_ignore(sc_translog_sync(s->tlog));
    bool refreshed = false;
    pthread_mutex_lock(&s->wlock);
    bool tlog_over = sc__shard_translog_over(s);
    if (do_refresh || tlog_over || sc__shard_buffer_full(s)) {
        /* Cleared before the refresh: a write racing with it sets it again, and costs at most
         * one refresh that finds nothing new. */
        atomic_store_explicit(&s->bg_dirty, false, memory_order_relaxed);
        refreshed = s->changed;
        (void)sc__shard_refresh_locked(s);
        if (tlog_over)
            (void)sc__shard_flush_locked(s);
    }
    pthread_mutex_unlock(&s->wlock);
    return refreshed;
}

/* ---- going idle ---- */

/* Gives back the spare capacity of a vector of n elements of elem bytes (never fails). */
static void vec_shrink(void **ptr, size_t *cap, size_t len, size_t elem)
{
    if (!*ptr || len >= *cap)
        return;
    if (!len) {
        free(*ptr);
        *ptr = NULL;
        *cap = 0;
        return;
    }
    void *p = realloc(*ptr, len * elem);
    if (p) {
        *ptr = p;
        *cap = len;
    }
}

sc_status sc_shard_release_idle(sc_shard *s)
{
    pthread_mutex_lock(&s->wlock);
    sc_status st = SC_OK;
    /* With refresh off (refresh_interval -1) a flush would make buffered documents searchable:
     * such a buffer stays as it is, and only what does not change any answer is released. */
    bool keep_buffer =
        s->cfg.refresh_interval_ms < 0 && s->builder && sc_segment_builder_n_docs(s->builder) > 0;
    if (!keep_buffer && s->sticky == SC_OK && needs_flush_locked(s))
        st = sc__shard_flush_locked(s);
    if (st == SC_OK && !keep_buffer && !s->changed) {
        sc_segment_builder_free(s->builder);
        s->builder = NULL;
        s->builder_base_ram = 0;
        sc_vec_free(&s->buf_entry);
        sc_vec_free(&s->buf_ver);
        sc_vec_free(&s->buf_deleted);
        sc_vec_free(&s->buf_child);
        sc_vec_free(&s->buf_src);
        sc_vec_free(&s->buf_sources);
    }
    sc_arena_fini(&s->arena); /* empty between operations */
    sc_arena_init(&s->arena, 0);
    sc__tombs_shrink(s);
    vec_shrink((void **)&s->entries.ptr, &s->entries.cap, s->entries.len, sizeof *s->entries.ptr);
    vec_shrink((void **)&s->tombs.ptr, &s->tombs.cap, s->tombs.len, sizeof *s->tombs.ptr);
    vec_shrink((void **)&s->tomb_key.ptr, &s->tomb_key.cap, s->tomb_key.len,
               sizeof *s->tomb_key.ptr);
    vec_shrink((void **)&s->slots.ptr, &s->slots.cap, s->slots.len, sizeof *s->slots.ptr);
    /* the pages searches touched are the page cache's again (RssFile, not this process's) */
    for (size_t i = 0; i < s->slots.len; i++)
        sc_segment_drop_pages(s->slots.ptr[i]->seg);
    s->idle_changes = atomic_load_explicit(&s->n_changes, memory_order_relaxed);
    pthread_mutex_unlock(&s->wlock);
    return st;
}

/* ---- stats ---- */

sc_status sc_shard_stats_get(sc_shard *s, bool with_segments, sc_shard_stats *st)
{
    memset(st, 0, sizeof(*st));
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(s);
    pthread_mutex_lock(&s->wlock);
    st->n_docs = snap->n_docs;
    st->n_deleted = snap->n_deleted;
    st->n_segments = s->slots.len;
    st->buffered_docs = s->builder ? sc_segment_builder_n_docs(s->builder) : 0;
    st->indexing_buffer_bytes = sc__shard_buffer_bytes(s);
    st->max_seq_no = s->max_seq_no;
    st->local_checkpoint = s->max_seq_no;
    for (size_t i = 0; i < s->slots.len; i++)
        st->store_bytes += sc_segment_size_bytes(s->slots.ptr[i]->seg) +
                           (s->slots.ptr[i]->n_deleted ? s->slots.ptr[i]->n_docs / 8 + 64 : 0);
    if (with_segments && s->slots.len) {
        st->segments = calloc(s->slots.len, sizeof(*st->segments));
        if (!st->segments) {
            pthread_mutex_unlock(&s->wlock);
            sc_shard_searcher_release(snap);
            return SC_ENOMEM;
        }
        for (size_t i = 0; i < s->slots.len; i++) {
            const sc__slot *sl = s->slots.ptr[i];
            sc_shard_segment_stats *g = &st->segments[i];
            snprintf(g->name, sizeof(g->name), "%s", sl->name);
            g->n_docs = sl->n_docs - sl->n_deleted;
            g->n_deleted = sl->n_deleted;
            g->size_bytes = sc_segment_size_bytes(sl->seg);
            g->committed = sl->committed;
            g->generation = sl->uid;
            for (size_t k = 0; k < snap->n_segments; k++)
                g->searchable |= snap->segments[k].seg == sl->seg;
        }
    }
    pthread_mutex_unlock(&s->wlock);
    sc_shard_searcher_release(snap);
    if (with_segments)
        st->id_table_bytes = sc__ids_file_bytes(s);
    st->translog_bytes = sc_translog_size_bytes(s->tlog);
    st->translog_ops = sc_translog_n_ops(s->tlog);
    st->n_index_ops = atomic_load(&s->n_index_ops);
    st->n_delete_ops = atomic_load(&s->n_delete_ops);
    st->n_refreshes = atomic_load(&s->n_refreshes);
    st->n_flushes = atomic_load(&s->n_flushes);
    st->n_merges = atomic_load(&s->n_merges);
    st->index_time_ns = atomic_load(&s->index_time_ns);
    st->refresh_time_ns = atomic_load(&s->refresh_time_ns);
    st->flush_time_ns = atomic_load(&s->flush_time_ns);
    st->merge_time_ns = atomic_load(&s->merge_time_ns);
    st->n_queries = atomic_load(&s->n_queries);
    st->query_time_ns = atomic_load(&s->query_time_ns);
    st->merges_current = atomic_load(&s->merges_current);
    st->merge_spilled_bytes = atomic_load(&s->merge_spilled_bytes);
    return SC_OK;
}

void sc_shard_count_query(sc_shard *s, uint64_t ns)
{
    atomic_fetch_add(&s->n_queries, 1);
    atomic_fetch_add(&s->query_time_ns, ns);
}

void sc_shard_stats_fini(sc_shard_stats *st)
{
    free(st->segments);
    st->segments = NULL;
}
