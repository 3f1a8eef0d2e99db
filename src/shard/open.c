/* Opening a shard: the last commit (manifest, its segments, deletes and id table), translog
 * replay on top of it, attaching it to a scheduler for background work; and closing it. Writes,
 * refresh and commit are in shard.c. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "shard/internal.h"

SC_ALLOC_POOL_DEFINE(sc_pool_shard_ids, "shard.ids");

/* ---- recovery ---- */

/* Reports replay progress to the owner; false when it asks to stop. */
static bool replay_progress(sc_shard *s)
{
    return !s->cfg.on_recovery_progress ||
           s->cfg.on_recovery_progress(s->cfg.recovery_ctx, s->replay_ops, s->replay_bytes,
                                       s->replay_total);
}

/* The test-only delay before the first replayed operation (sc_shard_config), in 50 ms slices
 * so that a cancel (node shutdown) still stops it promptly. */
static sc_status replay_test_delay(sc_shard *s)
{
    uint64_t end = sc_clock_now_ns() + (uint64_t)s->cfg.test_recovery_delay_ms * 1000000;
    while (sc_clock_now_ns() < end) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
        if (!replay_progress(s))
            return SC_ECANCELLED;
    }
    return SC_OK;
}

static sc_status replay_op(void *ctx, const sc_translog_op *op)
{
    sc_shard *s = ctx;
    if (s->replay_ops == 0 && s->cfg.test_recovery_delay_ms)
        SC_TRY(replay_test_delay(s));
    s->replay_ops++;
    s->replay_bytes = sc_translog_replayed_bytes(s->tlog);
    if ((s->replay_ops & 1023) == 0 && !replay_progress(s))
        return SC_ECANCELLED;
    if (op->seq_no <= s->committed_max_seq_no)
        return SC_OK; /* already in the commit */
    sc_shard_error err;
    sc_status st = op->type == SC_TRANSLOG_INDEX
                       ? sc__shard_index_locked(s, op->id, op->source, NULL, op, NULL, NULL, &err)
                       : sc__shard_delete_locked(s, op->id, NULL, op, NULL, NULL, &err);
    /* A document the mapping rejects now was rejected then too (it was never acknowledged
     * unless parsing succeeded), so only I/O and memory errors stop recovery. */
    if (st == SC_ENOMEM || st == SC_EIO)
        return st;
    if (sc__shard_buffer_full(s))
        return sc__shard_refresh_locked(s);
    return SC_OK;
}

static int64_t ud_int(const json_t *o, const char *k, int64_t def)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static sc_status load_commit(sc_shard *s, uint64_t *tlog_gen, sc_shard_error *err)
{
    sc_manifest m;
    sc_manifest_init(&m);
    sc_index_error ie;
    sc_status st = sc_manifest_read(s->dir, &m, &ie);
    if (st == SC_ENOTFOUND) {
        sc_manifest_fini(&m);
        *tlog_gen = 1;
        sc__shard_cleanup_files(s, NULL, 0, true);
        return SC_OK;
    }
    if (st != SC_OK) {
        if (err) {
            err->type = "corrupt_index_exception";
            err->cause_type = NULL;
            snprintf(err->reason, sizeof(err->reason), "manifest: %s at %" PRIu64 " in %.200s",
                     ie.msg, ie.offset, ie.file);
        }
        sc_manifest_fini(&m);
        return st;
    }
    json_t *ud = json_loadb((const char *)m.user_data.ptr, m.user_data.len, 0, NULL);
    *tlog_gen = (uint64_t)ud_int(ud, "translog_gen", 1);
    s->max_seq_no = ud_int(ud, "max_seq_no", -1);
    s->committed_max_seq_no = s->max_seq_no;
    s->seg_counter = (uint64_t)ud_int(ud, "seg_counter", 0);
    uint64_t ids_gen = (uint64_t)ud_int(ud, "ids_gen", 0);
    json_decref(ud);
    s->manifest_gen = m.generation;
    for (size_t i = 0; i < m.segments.len && st == SC_OK; i++) {
        const sc_manifest_segment *ms = &m.segments.ptr[i];
        sc_segment *seg;
        st = sc_segment_open_ex(s->dir, ms->name, &seg, &ie);
        if (st != SC_OK) {
            if (err) {
                err->type = "corrupt_index_exception";
                err->cause_type = NULL;
                snprintf(err->reason, sizeof(err->reason), "segment %s: %s at %" PRIu64, ms->name,
                         ie.msg, ie.offset);
            }
            break;
        }
        sc__slot *sl = sc__slot_new(s, seg);
        if (!sl) {
            sc_segment_unref(seg);
            st = SC_ENOMEM;
            break;
        }
        sl->committed = true;
        sl->del_gen = ms->del_gen;
        if (ms->del_gen) {
            st = sc_live_docs_read(s->dir, ms->name, ms->del_gen, sl->n_docs, &sl->pending, &ie);
            if (st == SC_OK)
                sl->n_deleted = sl->n_docs - (uint32_t)sc_bitset_count(&sl->pending);
            sl->dirty = true;
        }
        if (st == SC_OK)
            st = sc_vec_push(&s->slots, sl);
        if (st != SC_OK)
            sc__slot_free(sl);
    }
    if (st == SC_OK && ids_gen)
        st = sc__ids_read(s, ids_gen);
    /* the read checked every live id against its segment's `_id` doc values: those pages are
     * the page cache's again (the id table keeps no keys of its own) */
    for (size_t i = 0; st == SC_OK && i < s->slots.len; i++)
        sc_segment_drop_pages(s->slots.ptr[i]->seg);
    if (st == SC_OK)
        sc__shard_cleanup_files(s, &m, ids_gen, true);
    if (st != SC_OK && err && st != SC_ENOMEM && err->type == NULL) {
        err->type = "corrupt_index_exception";
        snprintf(err->reason, sizeof(err->reason), "failed to load the commit of %s", s->dir);
    }
    sc_manifest_fini(&m);
    return st;
}

/* ---- open / close ---- */

static void shard_free(sc_shard *s)
{
    sc__sched_detach(s);
    sc_shard_sched_free(s->own_sched);
    if (s->snap)
        sc_shard_searcher_release(&s->snap->pub);
    for (size_t i = 0; i < s->slots.len; i++)
        sc__slot_free(s->slots.ptr[i]);
    sc_vec_free(&s->slots);
    sc_segment_builder_free(s->builder);
    sc_translog_close(s->tlog);
    sc__idtab_fini(&s->ids);
    sc_vec_free(&s->entries);
    sc__tombs_clear(s);
    sc_vec_free(&s->buf_entry);
    sc_vec_free(&s->buf_ver);
    sc_vec_free(&s->buf_deleted);
    sc_vec_free(&s->buf_child);
    sc_vec_free(&s->buf_src);
    sc_vec_free(&s->buf_sources);
    sc_arena_fini(&s->arena);
    sc_mapping_unref(s->mapping);
    pthread_mutex_destroy(&s->wlock);
    pthread_mutex_destroy(&s->map_lock);
    pthread_mutex_destroy(&s->snap_lock);
    pthread_mutex_destroy(&s->merge_lock);
    free(s->dir);
    free(s);
}

sc_status sc_shard_open(const sc_shard_config *cfg, sc_shard **out, sc_shard_error *err)
{
    *out = NULL;
    if (err)
        memset(err, 0, sizeof(*err));
    sc_shard *s = calloc(1, sizeof(*s));
    if (!s)
        return SC_ENOMEM;
    s->cfg = *cfg;
    if (s->cfg.primary_term <= 0)
        s->cfg.primary_term = 1;
    if (!s->cfg.sync_interval_ms)
        s->cfg.sync_interval_ms = 5000;
    if (!s->cfg.refresh_interval_ms)
        s->cfg.refresh_interval_ms = 1000;
    if (!s->cfg.ram_buffer_bytes)
        s->cfg.ram_buffer_bytes = 64u << 20;
    if (!s->cfg.flush_threshold_bytes)
        s->cfg.flush_threshold_bytes = 512ull << 20;
    atomic_init(&s->flush_threshold_bytes, s->cfg.flush_threshold_bytes);
    pthread_mutex_init(&s->wlock, NULL);
    pthread_mutex_init(&s->map_lock, NULL);
    pthread_mutex_init(&s->snap_lock, NULL);
    pthread_mutex_init(&s->merge_lock, NULL);
    sc__idtab_init(&s->ids, &sc_pool_shard_ids);
    sc_arena_init(&s->arena, 0);
    s->max_seq_no = -1;
    s->committed_max_seq_no = -1;
    s->dir = strdup(cfg->path ? cfg->path : "");
    sc_status st = s->dir && cfg->path ? SC_OK : SC_EINVAL;
    if (st == SC_OK) {
        if (cfg->mapping) {
            s->mapping = sc_mapping_ref(cfg->mapping);
        } else {
            sc_mapping_error me;
            st = sc_mapping_new(NULL, &s->mapping, &me);
        }
    }
    if (st == SC_OK)
        st = sc_dir_make(s->dir);
    uint64_t tlog_gen = 1;
    if (st == SC_OK)
        st = load_commit(s, &tlog_gen, err);
    if (st == SC_OK)
        st = sc_translog_open(s->dir, tlog_gen, &s->tlog);
    if (st == SC_OK) {
        pthread_mutex_lock(&s->wlock);
        s->replay_total = sc_translog_replay_bytes(s->tlog);
        st = replay_progress(s) ? SC_OK : SC_ECANCELLED;
        if (st == SC_OK)
            st = sc_translog_replay(s->tlog, replay_op, s, NULL, NULL);
        if (st == SC_OK && s->cfg.test_recovery_delay_ms && s->replay_ops == 0)
            st = replay_test_delay(s);
        if (st == SC_OK && !replay_progress(s))
            st = SC_ECANCELLED;
        if (st == SC_OK) {
            sc__shard_mark_changed(s);
            st = sc__shard_refresh_locked(s);
        }
        pthread_mutex_unlock(&s->wlock);
        if (st != SC_OK && st != SC_ECANCELLED && err && !err->type) {
            err->type = "translog_corrupted_exception";
            snprintf(err->reason, sizeof(err->reason), "failed to recover the translog of %s: %s",
                     s->dir, sc_status_str(st));
        }
    }
    if (st == SC_OK && !s->cfg.no_background_thread) {
        sc_shard_sched *sched = s->cfg.sched;
        if (!sched) {
            st = sc_shard_sched_new(1, 1, &s->own_sched);
            sched = s->own_sched;
        }
        if (st == SC_OK)
            st = sc__sched_attach(sched, s);
    }
    if (st != SC_OK) {
        shard_free(s);
        return st;
    }
    *out = s;
    return SC_OK;
}

void sc_shard_close(sc_shard *s, bool flush)
{
    if (!s)
        return;
    sc__sched_detach(s);
    pthread_mutex_lock(&s->merge_lock); /* wait for a running force merge */
    pthread_mutex_unlock(&s->merge_lock);
    sc__shard_ignore(sc_translog_sync(s->tlog));
    if (flush && sc_shard_needs_flush(s)) {
        pthread_mutex_lock(&s->wlock);
        (void)sc__shard_flush_locked(s);
        pthread_mutex_unlock(&s->wlock);
    }
    shard_free(s);
}

uint32_t sc_shard_files_removed_at_open(const sc_shard *s)
{
    return s->n_removed_at_open;
}

/* ---- installing a commit copied from another copy (file-based peer recovery) ---- */

/* Removes every regular file of the shard folder but the translog's (folders, e.g. pins and
 * the staging folder, stay). */
static sc_status remove_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return SC_EIO;
    sc_status st = SC_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
            !strncmp(e->d_name, "translog-", 9)) /* the translog trims its own */
            continue;
        if (unlink(path) != 0 && errno != ENOENT)
            st = SC_EIO;
    }
    closedir(d);
    return st;
}

/* Moves the files of from (a folder inside dir) into dir, the manifest last: until it lands
 * the folder holds no commit, so a crash leaves an empty copy, never a mixed one. */
static sc_status move_files(const char *from, const char *dir)
{
    DIR *d = opendir(from);
    if (!d)
        return SC_EIO;
    sc_status st = SC_OK;
    bool manifest = false;
    struct dirent *e;
    while (st == SC_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (!strcmp(e->d_name, SC_MANIFEST_FILE)) {
            manifest = true;
            continue;
        }
        char a[4096], b[4096];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", dir, e->d_name);
        if (rename(a, b) != 0)
            st = SC_EIO;
    }
    closedir(d);
    if (st == SC_OK)
        st = sc_dir_fsync(dir);
    if (st == SC_OK && manifest) {
        char a[4096], b[4096];
        snprintf(a, sizeof a, "%s/%s", from, SC_MANIFEST_FILE);
        snprintf(b, sizeof b, "%s/%s", dir, SC_MANIFEST_FILE);
        if (rename(a, b) != 0)
            st = SC_EIO;
        if (st == SC_OK)
            st = sc_dir_fsync(dir);
    }
    return st;
}

/* Drops the writer's whole state (wlock held); searchers keep their snapshots. */
static void reset_state(sc_shard *s)
{
    for (size_t i = 0; i < s->slots.len; i++)
        sc__slot_free(s->slots.ptr[i]);
    sc_vec_clear(&s->slots);
    if (s->builder)
        sc_segment_builder_reset(s->builder);
    sc_vec_clear(&s->buf_entry);
    sc_vec_clear(&s->buf_child);
    sc_vec_clear(&s->buf_ver);
    sc_vec_clear(&s->buf_deleted);
    sc_vec_clear(&s->buf_src);
    sc_vec_clear(&s->buf_sources);
    sc__idtab_fini(&s->ids);
    sc__idtab_init(&s->ids, &sc_pool_shard_ids);
    sc_vec_clear(&s->entries);
    sc__tombs_clear(s);
    s->max_seq_no = -1;
    s->committed_max_seq_no = -1;
    s->seg_counter = 0;
    s->manifest_gen = 0;
    s->merging_name[0] = 0;
}

sc_status sc_shard_install_commit(sc_shard *s, const char *from_dir, sc_shard_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    sc_shard_sched *sched = s->sched;
    sc__sched_detach(s);
    pthread_mutex_lock(&s->merge_lock); /* no merge runs while the files change */
    pthread_mutex_lock(&s->wlock);
    /* The translog object stays (writers sync it without the lock): a new, empty generation,
     * the older ones (this copy's former operations) trimmed. */
    uint64_t gen = 0;
    sc_status st = sc_translog_roll(s->tlog, &gen);
    if (st == SC_OK) {
        reset_state(s);
        st = remove_files(s->dir);
    }
    if (st == SC_OK)
        st = sc_translog_trim(s->tlog, gen);
    if (st == SC_OK)
        st = move_files(from_dir, s->dir);
    uint64_t commit_tlog_gen = 1;
    if (st == SC_OK)
        st = load_commit(s, &commit_tlog_gen, err);
    /* Committed again at once: the manifest then names this copy's translog generation. */
    if (st == SC_OK) {
        sc__shard_mark_changed(s);
        st = sc__shard_flush_locked(s);
    }
    if (st == SC_OK) {
        s->sticky = SC_OK;
    } else {
        s->sticky = SC_EIO; /* half installed: refuse writes until the next install or reopen */
        if (err && !err->type) {
            err->type = "recovery_failed_exception";
            snprintf(err->reason, sizeof err->reason, "cannot install the copied commit in %s",
                     s->dir);
        }
    }
    pthread_mutex_unlock(&s->wlock);
    pthread_mutex_unlock(&s->merge_lock);
    if (sched && sc__sched_attach(sched, s) != SC_OK && st == SC_OK)
        st = SC_ENOMEM;
    return st;
}

const char *sc_shard_dir(const sc_shard *s)
{
    return s->dir;
}
