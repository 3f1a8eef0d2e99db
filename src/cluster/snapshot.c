/* Snapshots (see snapshot.h): taking a snapshot, listing and deleting them. Repositories are
 * in snapshot_repo.c, restore in snapshot_restore.c, the repository files in snaprepo.c. */
#include "cluster/snapshot.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/meta_store.h"
#include "cluster/placement.h"
#include "cluster/snap_internal.h"
#include "cluster/snaprepo.h"
#include "mapping/date.h"

/* ---- snapshot info (the response shape) ---- */

static json_t *iso(int64_t ms)
{
    char buf[48];
    size_t len = sc_date_format_iso(ms, buf);
    return json_stringn(buf, len);
}

json_t *sc__snap_info(const char *repo, const json_t *sum)
{
    int64_t start = json_integer_value(json_object_get(sum, "start_time_ms"));
    const char *state = json_string_value(json_object_get(sum, "state"));
    json_t *failures = json_object_get(sum, "failures");
    json_t *o = json_pack("{s:O,s:O,s:s,s:i,s:s,s:O,s:[],s:b,s:s,s:o,s:I,s:O,s:O,s:[]}", "snapshot",
                          json_object_get(sum, "snapshot"), "uuid", json_object_get(sum, "uuid"),
                          "repository", repo, "version_id", 8500099, "version", "8.5.0", "indices",
                          json_object_get(sum, "indices"), "data_streams", "include_global_state",
                          0, "state", state, "start_time", iso(start), "start_time_in_millis",
                          (json_int_t)start, "failures", failures ? failures : json_array(),
                          "shards", json_object_get(sum, "shards"), "feature_states");
    if (!failures)
        json_decref(json_object_get(o, "failures"));
    if (strcmp(state, "IN_PROGRESS") != 0) {
        int64_t end = json_integer_value(json_object_get(sum, "end_time_ms"));
        json_object_set_new(o, "end_time", iso(end));
        json_object_set_new(o, "end_time_in_millis", json_integer(end));
        json_object_set_new(o, "duration_in_millis", json_integer(end - start));
    }
    json_t *md = json_object_get(sum, "metadata");
    if (md)
        json_object_set(o, "metadata", md);
    return o;
}

/* ---- taking a snapshot ---- */

static bool snap_name_ok(const char *repo, const char *snap, sc_cluster_error *err)
{
    const char *why = NULL;
    if (!*snap)
        why = "cannot be empty";
    else if (snap[0] == '_')
        why = "must not start with '_'";
    else if (strpbrk(snap, " ,\"*\\<|>/?#\t\n"))
        why = "must not contain the following characters [ , \", *, \\, <, |, >, /, ?, #]";
    else if (strlen(snap) > 255)
        why = "is too long";
    for (const char *c = snap; !why && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            why = "must be lowercase";
    if (why)
        sc_cluster_error_set(err, 400, "invalid_snapshot_name_exception",
                             "[%s:%s] Invalid snapshot name [%s], %s", repo, snap, snap, why);
    return why == NULL;
}

/* The body's "indices": a string or an array of strings, as one comma expression. */
bool sc__snap_indices_expr(const json_t *v, char *out, size_t cap, sc_cluster_error *err)
{
    out[0] = '\0';
    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v)) {
        snprintf(out, cap, "%s", json_string_value(v));
        return true;
    }
    if (json_is_array(v)) {
        size_t i, used = 0;
        const json_t *e;
        json_array_foreach (v, i, e) {
            if (!json_is_string(e))
                break;
            int w = snprintf(out + used, cap - used, "%s%s", used ? "," : "", json_string_value(e));
            if (w < 0 || (size_t)w >= cap - used)
                break;
            used += (size_t)w;
        }
        if (i == json_array_size(v))
            return true;
    }
    sc_cluster_error_set(err, 400, "illegal_argument_exception",
                         "[indices] must be a string or an array of strings");
    return false;
}

static bool name_taken(sc__snaps *s, const char *repo, const char *snap, const json_t *root)
{
    size_t i;
    const json_t *e;
    json_array_foreach (json_object_get(root, "snapshots"), i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "snapshot")), snap))
            return true;
    }
    for (sc_snapshot_job *j = s->running; j; j = j->next)
        if (!strcmp(j->repo, repo) && !strcmp(j->name, snap))
            return true;
    return false;
}

void sc_snapshot_job_free(sc_snapshot_job *j)
{
    if (!j)
        return;
    if (j->registered) {
        pthread_mutex_lock(&j->s->mu);
        for (sc_snapshot_job **p = &j->s->running; *p; p = &(*p)->next)
            if (*p == j) {
                *p = j->next;
                break;
            }
        pthread_mutex_unlock(&j->s->mu);
    }
    sc_node_release(j->indices, j->n_indices);
    json_decref(j->metadata);
    free(j);
}

sc_status sc_snapshot_prepare(sc_node *n, const char *repo, const char *snap, const json_t *body,
                              sc_snapshot_job **out, sc_cluster_error *err)
{
    *out = NULL;
    if (!snap_name_ok(repo, snap, err)) /* clustered: each primary's node copies its shard */
        return SC_EINVAL;
    if (body && !json_is_object(body)) {
        sc_cluster_error_set(err, 400, "parse_exception", "request body must be an object");
        return SC_EINVAL;
    }
    sc_snapshot_job *j = calloc(1, sizeof *j);
    if (!j)
        return SC_ENOMEM;
    j->node = n;
    j->s = sc__node_snaps(n);
    snprintf(j->repo, sizeof j->repo, "%s", repo);
    snprintf(j->name, sizeof j->name, "%s", snap);
    snprintf(j->desc, sizeof j->desc, "%s:%s", repo, snap);
    sc__random_id(j->uuid);
    const json_t *partial = json_object_get(body, "partial");
    j->partial = json_is_true(partial);
    const json_t *md = json_object_get(body, "metadata");
    if (md && !json_is_object(md) && !json_is_null(md)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "[metadata] must be an object");
        sc_snapshot_job_free(j);
        return SC_EINVAL;
    }
    j->metadata = json_is_object(md) ? json_deep_copy(md) : NULL;
    char expr[4096];
    sc_status st = sc__snap_repo_location(n, repo, j->loc, err);
    if (st == SC_OK &&
        !sc__snap_indices_expr(json_object_get(body, "indices"), expr, sizeof expr, err))
        st = SC_EINVAL;
    unsigned flags = SC_NODE_RESOLVE_HIDDEN;
    if (st == SC_OK)
        st = sc_node_resolve_ex(n, expr[0] ? expr : NULL, flags, &j->indices, &j->n_indices, err);
    if (st != SC_OK) {
        sc_snapshot_job_free(j);
        return st;
    }
    json_t *root;
    uint64_t gen;
    pthread_mutex_lock(&j->s->mu);
    st = sc__snap_root_read(n, repo, j->loc, &root, &gen, err);
    if (st == SC_OK) {
        if (name_taken(j->s, repo, snap, root)) {
            sc_cluster_error_set(err, 400, "invalid_snapshot_name_exception",
                                 "[%s:%s] Invalid snapshot name [%s], snapshot with the same name "
                                 "already exists",
                                 repo, snap, snap);
            st = SC_EEXIST;
        } else {
            j->start_ms = sc_clock_wall_ms();
            j->next = j->s->running;
            j->s->running = j;
            j->registered = true;
        }
        json_decref(root);
    }
    pthread_mutex_unlock(&j->s->mu);
    if (st != SC_OK) {
        sc_snapshot_job_free(j);
        return st;
    }
    *out = j;
    return SC_OK;
}

const char *sc_snapshot_job_name(const sc_snapshot_job *j)
{
    return j->desc;
}

json_t *sc_snapshot_job_status(sc_snapshot_job *j)
{
    return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I}", "repository", j->repo, "snapshot", j->name,
                     "files_done", (json_int_t)atomic_load(&j->files_done), "files_total",
                     (json_int_t)atomic_load(&j->files_total), "bytes_copied",
                     (json_int_t)atomic_load(&j->bytes_copied), "blobs_reused",
                     (json_int_t)atomic_load(&j->blobs_reused));
}

/* The test-only wait before each file (sc_node_config.test_snapshot_delay_ms), in 50 ms
 * slices so that a cancellation (node shutdown) still stops it promptly. */
static void test_delay(sc_snapshot_job *j, sc_task *task)
{
    uint32_t ms = sc_node_config_get(j->node)->test_snapshot_delay_ms;
    for (uint32_t waited = 0; waited < ms; waited += 50) {
        if (task && atomic_load(&task->token.cancelled))
            return;
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
}

sc_status sc__snap_shard_copy(sc_snapshot_job *j, sc_shard *sh, json_t *shard_json, sc_task *task,
                              const char **why)
{
    char pin_name[64];
    snprintf(pin_name, sizeof pin_name, SC_SHARD_PIN_PREFIX "%s", j->uuid);
    sc_shard_pinned pin;
    sc_status st = sc_shard_commit_pin(sh, pin_name, &pin);
    if (st != SC_OK) {
        *why = "could not commit and pin the shard";
        return st;
    }
    atomic_fetch_add(&j->files_total, pin.n_files);
    json_t *files = json_object_get(shard_json, "files");
    json_object_set_new(shard_json, "n_docs", json_integer((json_int_t)pin.n_docs));
    for (size_t i = 0; i < pin.n_files && st == SC_OK; i++) {
        test_delay(j, task);
        if (task && atomic_load(&task->token.cancelled)) {
            *why = "the snapshot was cancelled";
            st = SC_ECANCELLED;
            break;
        }
        char path[4400], hex[SC_SNAPREPO_BLOB_HEX + 1];
        snprintf(path, sizeof path, "%s/%s", pin.dir, pin.files[i]);
        uint64_t size = 0;
        bool copied = false;
        st = sc_snaprepo_hash_file(path, hex, &size);
        if (st == SC_OK)
            st = sc_snaprepo_blob_put(j->loc, path, hex, size, &copied);
        if (st != SC_OK) {
            *why = "could not copy a shard file into the repository";
            break;
        }
        json_array_append_new(files, json_pack("{s:s,s:s,s:I}", "name", pin.files[i], "blob", hex,
                                               "size", (json_int_t)size));
        atomic_fetch_add(&j->files_done, 1);
        if (copied)
            j->touched[sc_snaprepo_blob_prefix(hex)] = 1;
        if (copied)
            atomic_fetch_add(&j->bytes_copied, size);
        else
            atomic_fetch_add(&j->blobs_reused, 1);
    }
    sc_shard_pinned_release(&pin);
    return st;
}

/* How long a clustered snapshot waits for a new index's routing or a shard still opening. */
#define SHARD_WAIT_MS 10000u

/* Snapshots shard i of ix into sj: clustered, on the node holding its primary (this one, or
 * another over the transport: snapshot_remote.c); on a single node, the local shard. NULL on
 * success, else why it failed (static or in buf). */
static const char *snapshot_one(sc_snapshot_job *j, sc_task *task, sc_index *ix, uint32_t i,
                                json_t *sj, char *buf, size_t cap)
{
    if (atomic_load(&ix->deleted))
        return "the index was deleted during the snapshot";
    if (task && atomic_load(&task->token.cancelled))
        return "the snapshot was cancelled";
    sc_placement *p = sc_node_placement(j->node);
    uint64_t until = sc_clock_now_ns() + SHARD_WAIT_MS * 1000000u;
    if (p) {
        sc_shard_location loc;
        for (;;) {
            sc_placement_snapshot *ps = sc_placement_acquire(p);
            sc_placement_primary(ps, ix->name, i, &loc);
            int64_t rev = sc_placement_revision(ps);
            sc_placement_release(ps);
            /* a new index's routing comes from the master in a moment */
            if (loc.assigned || loc.known || sc_clock_now_ns() >= until)
                break;
            (void)!sc_placement_wait(p, rev + 1, 200);
        }
        if (!loc.assigned)
            return "the shard has no active primary";
        if (!loc.local)
            return sc__snap_shard_remote(j, &loc, ix->name, i, sj, buf, cap) == SC_OK ? NULL : buf;
    }
    sc_shard *sh = atomic_load(&ix->shards[i]);
    while (!sh && p && sc_clock_now_ns() < until) { /* still opening (recovery) */
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
        sh = atomic_load(&ix->shards[i]);
    }
    const char *why = NULL;
    if (!sh)
        why = "the shard is not available (recovering or failed)";
    else if (sc__snap_shard_copy(j, sh, sj, task, &why) == SC_OK)
        why = NULL;
    return why ? why : NULL;
}

/* Snapshots every shard of every index into `indices` ({name: {meta, shards}}); returns the
 * number of failed shards, appending their failures. */
static uint32_t snapshot_indices(sc_snapshot_job *j, sc_task *task, json_t *indices,
                                 json_t *failures, uint32_t *total)
{
    uint32_t failed = 0;
    for (size_t k = 0; k < j->n_indices; k++) {
        sc_index *ix = j->indices[k];
        json_t *shards = json_array();
        json_object_set_new(
            indices, ix->name,
            json_pack("{s:o,s:o}", "meta", sc__index_meta_json(ix), "shards", shards));
        for (uint32_t i = 0; i < ix->settings.number_of_shards; i++) {
            json_t *sj = json_pack("{s:i,s:[]}", "n_docs", 0, "files");
            json_array_append_new(shards, sj);
            (*total)++;
            char buf[400];
            const char *why = snapshot_one(j, task, ix, i, sj, buf, sizeof buf);
            if (!why)
                continue;
            failed++;
            sc_log(SC_LOG_WARN, "snapshot", "snapshot [%s:%s]: shard [%s][%u] failed: %s", j->repo,
                   j->name, ix->name, i, why);
            json_object_set_new(sj, "failure", json_string(why));
            json_array_clear(json_object_get(sj, "files"));
            json_array_append_new(
                failures, json_pack("{s:s,s:s,s:i,s:s,s:s,s:s}", "index", ix->name, "index_uuid",
                                    ix->uuid, "shard_id", (int)i, "reason", why, "node_id",
                                    sc_node_id(j->node), "status", "INTERNAL_SERVER_ERROR"));
        }
    }
    return failed;
}

json_t *sc_snapshot_run(sc_snapshot_job *j, sc_task *task, sc_cluster_error *err)
{
    sc__snaps *s = j->s;
    pthread_mutex_lock(&s->write_mu);
    json_t *indices = json_object(), *failures = json_array(), *names = json_array();
    uint32_t total = 0;
    uint32_t failed = snapshot_indices(j, task, indices, failures, &total);
    for (size_t k = 0; k < j->n_indices; k++)
        json_array_append_new(names, json_string(j->indices[k]->name));
    const char *state = failed == 0 ? "SUCCESS" : j->partial ? "PARTIAL" : "FAILED";
    int64_t end = sc_clock_wall_ms();
    json_t *shards = json_pack("{s:i,s:i,s:i}", "total", (int)total, "failed", (int)failed,
                               "successful", (int)(total - failed));
    json_t *sum =
        json_pack("{s:s,s:s,s:s,s:I,s:I,s:O,s:O,s:O}", "snapshot", j->name, "uuid", j->uuid,
                  "state", state, "start_time_ms", (json_int_t)j->start_ms, "end_time_ms",
                  (json_int_t)end, "indices", names, "shards", shards, "failures", failures);
    if (j->metadata)
        json_object_set(sum, "metadata", j->metadata);
    json_t *manifest = json_deep_copy(sum);
    json_object_del(manifest, "shards");
    json_object_set_new(manifest, "format", json_integer(SC_SNAPREPO_FORMAT));
    json_object_set(manifest, "indices", indices);
    /* The blobs' renames must be durable before a manifest names them. */
    sc_status st = sc_snaprepo_blobs_sync(j->loc, j->touched);
    if (st == SC_OK)
        st = sc_snaprepo_manifest_write(j->loc, j->uuid, manifest);
    json_t *out = NULL;
    if (st != SC_OK) {
        sc_cluster_error_set(err, 500, "snapshot_exception",
                             "[%s:%s] cannot write the snapshot manifest: %s", j->repo, j->name,
                             strerror(errno));
    } else {
        json_t *root;
        uint64_t gen;
        pthread_mutex_lock(&s->mu);
        st = sc__snap_root_read(j->node, j->repo, j->loc, &root, &gen, err);
        if (st == SC_OK) {
            json_array_append(json_object_get(root, "snapshots"), sum);
            st = sc_snaprepo_root_write(j->loc, root, gen + 1);
            json_decref(root);
            if (st != SC_OK)
                sc_cluster_error_set(err, 500, "snapshot_exception",
                                     "[%s:%s] cannot write the repository root: %s", j->repo,
                                     j->name, strerror(errno));
        }
        /* Listed in the root (or failed): no longer IN_PROGRESS. */
        for (sc_snapshot_job **p = &s->running; *p; p = &(*p)->next)
            if (*p == j) {
                *p = j->next;
                break;
            }
        j->registered = false;
        pthread_mutex_unlock(&s->mu);
        if (st == SC_OK)
            out = json_pack("{s:o}", "snapshot", sc__snap_info(j->repo, sum));
    }
    pthread_mutex_unlock(&s->write_mu);
    if (out)
        sc_log(SC_LOG_INFO, "snapshot", "snapshot [%s:%s] %s: %u shards, %u failed", j->repo,
               j->name, state, total, failed);
    json_decref(manifest);
    json_decref(sum);
    json_decref(indices);
    json_decref(failures);
    json_decref(names);
    json_decref(shards);
    return out;
}

/* ---- listing ---- */

sc_status sc_snapshot_get(sc_node *n, const char *repo, const char *snaps, json_t **out,
                          sc_cluster_error *err)
{
    char loc[4096];
    SC_TRY(sc__snap_repo_location(n, repo, loc, err));
    sc__snaps *s = sc__node_snaps(n);
    json_t *root;
    uint64_t gen;
    pthread_mutex_lock(&s->mu);
    sc_status st = sc__snap_root_read(n, repo, loc, &root, &gen, err);
    json_t *list = json_array();
    bool current_only = snaps && !strcmp(snaps, "_current");
    if (st == SC_OK) {
        size_t i;
        json_t *e;
        json_array_foreach (json_object_get(root, "snapshots"), i, e) {
            if (!current_only &&
                sc__snap_expr_matches(snaps, json_string_value(json_object_get(e, "snapshot"))))
                json_array_append_new(list, sc__snap_info(repo, e));
        }
        for (sc_snapshot_job *j = s->running; j; j = j->next) {
            if (strcmp(j->repo, repo) != 0 ||
                (!current_only && !sc__snap_expr_matches(snaps, j->name)))
                continue;
            json_t *names = json_array();
            for (size_t k = 0; k < j->n_indices; k++)
                json_array_append_new(names, json_string(j->indices[k]->name));
            json_t *sum =
                json_pack("{s:s,s:s,s:s,s:I,s:o,s:{s:i,s:i,s:i}}", "snapshot", j->name, "uuid",
                          j->uuid, "state", "IN_PROGRESS", "start_time_ms", (json_int_t)j->start_ms,
                          "indices", names, "shards", "total", 0, "failed", 0, "successful", 0);
            json_array_append_new(list, sc__snap_info(repo, sum));
            json_decref(sum);
        }
        json_decref(root);
    }
    pthread_mutex_unlock(&s->mu);
    char miss[256];
    if (st == SC_OK && !current_only && sc__snap_missing_name(snaps, list, miss, sizeof miss)) {
        sc_cluster_error_set(err, 404, "snapshot_missing_exception", "[%s:%s] is missing", repo,
                             miss);
        st = SC_ENOTFOUND;
    }
    if (st != SC_OK) {
        json_decref(list);
        return st;
    }
    *out = json_pack("{s:o,s:I,s:i}", "snapshots", list, "total", (json_int_t)json_array_size(list),
                     "remaining", 0);
    return SC_OK;
}

/* ---- deleting ---- */

/* Reads the manifests of every snapshot of root (for garbage collection). NULL when one cannot
 * be read: then no blob may be removed. */
static json_t *read_all_manifests(const char *loc, const json_t *root)
{
    json_t *all = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach (json_object_get(root, "snapshots"), i, e) {
        json_t *m;
        const char *why = NULL;
        if (sc_snaprepo_manifest_read(loc, json_string_value(json_object_get(e, "uuid")), &m,
                                      &why) != SC_OK) {
            json_decref(all);
            return NULL;
        }
        json_array_append_new(all, m);
    }
    return all;
}

sc_status sc_snapshot_delete(sc_node *n, const char *repo, const char *snaps, sc_cluster_error *err)
{
    char loc[4096];
    SC_TRY(sc__snap_repo_location(n, repo, loc, err));
    sc__snaps *s = sc__node_snaps(n);
    pthread_mutex_lock(&s->write_mu);
    pthread_mutex_lock(&s->mu);
    json_t *root;
    uint64_t gen;
    sc_status st = sc__snap_root_read(n, repo, loc, &root, &gen, err);
    json_t *gone = json_array();
    char miss[256];
    if (st == SC_OK &&
        sc__snap_missing_name(snaps, json_object_get(root, "snapshots"), miss, sizeof miss)) {
        sc_cluster_error_set(err, 404, "snapshot_missing_exception", "[%s:%s] is missing", repo,
                             miss);
        st = SC_ENOTFOUND;
    }
    if (st == SC_OK) {
        json_t *keep = json_array();
        size_t i;
        json_t *e;
        json_array_foreach (json_object_get(root, "snapshots"), i, e) {
            if (sc__snap_expr_matches(snaps, json_string_value(json_object_get(e, "snapshot"))))
                json_array_append(gone, json_object_get(e, "uuid"));
            else
                json_array_append(keep, e);
        }
        json_object_set_new(root, "snapshots", keep);
        if (json_array_size(gone))
            st = sc_snaprepo_root_write(loc, root, gen + 1);
        if (st != SC_OK)
            sc_cluster_error_set(err, 500, "repository_exception",
                                 "[%s] cannot write the repository root: %s", repo,
                                 strerror(errno));
    }
    pthread_mutex_unlock(&s->mu);
    if (st == SC_OK && json_array_size(gone)) {
        size_t i;
        json_t *u;
        json_array_foreach (gone, i, u) {
            char path[4200];
            snprintf(path, sizeof path, "%s/snap-%s.dat", loc, json_string_value(u));
            unlink(path);
        }
        json_t *all = read_all_manifests(loc, root);
        uint64_t removed = 0;
        if (all)
            sc_snaprepo_gc(loc, all, &removed);
        else
            sc_log(SC_LOG_WARN, "snapshot",
                   "[%s] a snapshot manifest is unreadable: unreferenced blobs are kept", repo);
        json_decref(all);
        sc_log(SC_LOG_INFO, "snapshot", "[%s] deleted %zu snapshots, removed %llu blobs", repo,
               json_array_size(gone), (unsigned long long)removed);
    }
    if (root)
        json_decref(root);
    json_decref(gone);
    pthread_mutex_unlock(&s->write_mu);
    return st;
}
