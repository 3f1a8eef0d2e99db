/* The node and its in-memory index registry (see node.h): index objects, settings, create /
 * delete / resolve, mappings. The metadata on disk and loading it at start: node_persist.c. */
#include "cluster/node.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/threadpool.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/ops.h"
#include "cluster/scroll.h"
#include "mapping/analysis.h"
#include "shard/routing.h"
#include "text/analyzer.h"

struct sc_node {
    sc_node_config cfg;
    char *data_dir;
    char *name;
    char *cluster_name;
    char node_id[24];
    char cluster_uuid[24];
    int64_t start_ms;
    pthread_mutex_t mu;
    pthread_mutex_t alias_write_mu; /* serializes alias and settings changes with their queuing */
    sc_index **indices;             /* sorted by name */
    size_t n_indices, cap_indices;
    sc_threadpool *pool;
    sc_shard_sched *sched; /* background work of every shard (refresh, flush, merges) */
    sc__tasks tasks;
    sc__breakers breakers;
    sc__scrolls scrolls;
    sc__watcher *watcher;
    sc__meta *meta;         /* templates, pipelines, data streams (meta_store.c) */
    sc__bgtasks *bg;        /* reindex / by-query tasks run in the background (bgtask.c) */
    sc__snaps *snaps;       /* snapshot repositories and running snapshots (snapshot.c) */
    sc__recovery *recovery; /* shards opened in the background at start */
    /* Cluster membership and the metadata hook (membership.c); NULL when single-node. */
    /* Installed while requests may run, hence atomics. */
    _Atomic(sc_membership *) cluster;
    _Atomic(sc_node_meta_fn) meta_fn;
    _Atomic(void *) meta_ctx;
    _Atomic(sc_placement *) placement;
};

void sc_node_set_placement(sc_node *n, sc_placement *p)
{
    atomic_store(&n->placement, p);
}

sc_placement *sc_node_placement(const sc_node *n)
{
    return atomic_load(&((sc_node *)n)->placement);
}

void sc_node_set_cluster(sc_node *n, sc_membership *m, sc_node_meta_fn fn, void *ctx)
{
    atomic_store(&n->meta_ctx, ctx);
    atomic_store(&n->meta_fn, fn);
    atomic_store(&n->cluster, m);
}

sc_membership *sc_node_cluster(const sc_node *n)
{
    return atomic_load(&((sc_node *)n)->cluster);
}

void sc__node_meta_changed(sc_node *n, const char *index, const char *meta_json)
{
    sc_node_meta_fn fn = n ? atomic_load(&n->meta_fn) : NULL;
    if (fn)
        fn(atomic_load(&n->meta_ctx), index, meta_json);
}

sc__recovery *sc__node_recovery(sc_node *n)
{
    return n->recovery;
}

sc__scrolls *sc__node_scrolls(sc_node *n)
{
    return &n->scrolls;
}

sc__bgtasks *sc__node_bgtasks(sc_node *n)
{
    return n->bg;
}

sc__snaps *sc__node_snaps(sc_node *n)
{
    return n->snaps;
}

sc__meta *sc__node_meta(sc_node *n)
{
    return n->meta;
}

sc__tasks *sc__node_tasks(sc_node *n)
{
    return &n->tasks;
}

sc__breakers *sc__node_breakers(sc_node *n)
{
    return &n->breakers;
}

void sc_cluster_error_set(sc_cluster_error *err, int status, const char *type, const char *fmt, ...)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->status = status;
    err->type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof err->reason, fmt, ap);
    va_end(ap);
}

void sc_cluster_error_not_found(sc_cluster_error *err, const char *name)
{
    sc_cluster_error_set(err, 404, "index_not_found_exception", "no such index [%s]", name);
    if (err) {
        snprintf(err->index, sizeof err->index, "%s", name);
        snprintf(err->index_uuid, sizeof err->index_uuid, "_na_");
    }
}

void sc__random_id(char out[24])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char raw[22];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, raw, sizeof raw) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof raw) {
        uint64_t x = sc_clock_now_ns() ^ (uint64_t)getpid() << 32;
        for (size_t i = 0; i < sizeof raw; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            raw[i] = (unsigned char)(x >> 56);
        }
    }
    for (int i = 0; i < 22; i++)
        out[i] = alphabet[raw[i] & 63];
    out[22] = '\0';
}

bool sc_index_name_valid(const char *name, sc_cluster_error *err)
{
    size_t len = strlen(name);
    const char *why = NULL;
    if (len == 0)
        why = "must not be empty";
    else if (len > 255)
        why = "index name is too long, (> 255)";
    else if (name[0] == '-' || name[0] == '_' || name[0] == '+')
        why = "must not start with '_', '-', or '+'";
    else if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        why = "must not be '.' or '..'";
    else if (strpbrk(name, "\\/*?\"<>| ,#:"))
        why = "must not contain the following characters [ , \", *, \\, <, |, ,, >, /, ?, #, :]";
    else {
        for (size_t i = 0; i < len; i++)
            if (name[i] >= 'A' && name[i] <= 'Z') {
                why = "must be lowercase";
                break;
            }
    }
    if (!why)
        return true;
    sc_cluster_error_set(err, 400, "invalid_index_name_exception", "Invalid index name [%s], %s",
                         name, why);
    if (err) {
        snprintf(err->index, sizeof err->index, "%s", name);
        snprintf(err->index_uuid, sizeof err->index_uuid, "_na_");
    }
    return false;
}

const char *sc_node_name(const sc_node *n)
{
    return n->name;
}
const char *sc_node_id(const sc_node *n)
{
    return n->node_id;
}
const char *sc_node_cluster_name(const sc_node *n)
{
    return n->cluster_name;
}
const char *sc_node_cluster_uuid(const sc_node *n)
{
    return n->cluster_uuid;
}
int64_t sc_node_start_ms(const sc_node *n)
{
    return n->start_ms;
}
const sc_node_config *sc_node_config_get(const sc_node *n)
{
    return &n->cfg;
}
sc_shard_sched *sc__node_sched(sc_node *n)
{
    return n->sched;
}

sc_threadpool *sc_node_search_pool(sc_node *n)
{
    return n->pool;
}

/* ---- index objects ---- */

void sc_index_ref(sc_index *ix)
{
    atomic_fetch_add_explicit(&ix->refs, 1, memory_order_relaxed);
}

static void index_free(sc_index *ix)
{
    sc__index_close_shards(ix);
    sc_mapping_unref(ix->mapping);
    json_decref(ix->settings_json);
    json_decref(ix->analysis_json);
    json_decref(ix->aliases);
    sc_analyzer_registry_free(ix->analysis);
    for (retired_registry *r = ix->analysis_retired, *next; r; r = next) {
        next = r->next;
        sc_analyzer_registry_free(r->registry);
        free(r);
    }
    if (ix->mapping_mu) {
        pthread_mutex_destroy(ix->mapping_mu);
        free(ix->mapping_mu);
    }
    if (atomic_load(&ix->deleted) && ix->dir) {
        if (sc_dir_remove_all(ix->dir) != SC_OK)
            sc_log(SC_LOG_WARN, "index", "could not remove [%s]", ix->dir);
    }
    free(ix->name);
    free(ix->dir);
    free(ix);
}

void sc_index_unref(sc_index *ix)
{
    if (ix && atomic_fetch_sub_explicit(&ix->refs, 1, memory_order_acq_rel) == 1)
        index_free(ix);
}

sc_mapping *sc_index_mapping(sc_index *ix)
{
    pthread_mutex_lock(ix->mapping_mu);
    sc_mapping *m = sc_mapping_ref(ix->mapping);
    pthread_mutex_unlock(ix->mapping_mu);
    return m;
}

/* Builds an sc_index in memory (not registered). Takes no ownership of the JSON inputs. */
sc_status sc__index_build(sc_node *n, const char *name, const char *uuid, int64_t created,
                          const json_t *settings, const json_t *mappings, sc_index **out,
                          sc_cluster_error *err)
{
    *out = NULL;
    sc_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return SC_ENOMEM;
    atomic_init(&ix->refs, 1);
    ix->node = n;
    ix->name = strdup(name);
    snprintf(ix->uuid, sizeof ix->uuid, "%s", uuid);
    ix->creation_date_ms = created;
    ix->mapping_mu = malloc(sizeof(pthread_mutex_t));
    if (!ix->name || !ix->mapping_mu) {
        free(ix->mapping_mu);
        ix->mapping_mu = NULL;
        index_free(ix);
        return SC_ENOMEM;
    }
    pthread_mutex_init(ix->mapping_mu, NULL);
    ix->alias_mu = &n->mu;
    ix->aliases = json_object();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/indices/%s", n->data_dir, ix->uuid);
    ix->dir = strdup(dir);
    if (!sc__index_parse_settings(settings, &ix->settings, &ix->settings_json, &ix->analysis_json,
                                  n->cfg.durability_async, err)) {
        index_free(ix);
        return SC_EINVAL;
    }
    json_t *ixs = json_object_get(ix->settings_json, "index");
    json_object_set_new(ixs, "uuid", json_string(ix->uuid));
    json_object_set_new(ixs, "provided_name", json_string(ix->name));
    json_object_set_new(ixs, "creation_date", json_sprintf("%lld", (long long)created));
    json_object_set_new(ixs, "version", json_pack("{s:s}", "created", "8500000"));
    sc_status st = sc__index_analysis_bind(ix, err);
    if (st != SC_OK) {
        index_free(ix);
        return st;
    }
    sc_mapping_error merr;
    st = sc_mapping_new(mappings, &ix->mapping, &merr);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 400, merr.type ? merr.type : "mapper_parsing_exception", "%s",
                             merr.reason);
        if (merr.cause_type) {
            err->cause_type = merr.cause_type;
            snprintf(err->cause_reason, sizeof err->cause_reason, "%s", merr.cause_reason);
        }
        index_free(ix);
        return st == SC_ENOMEM ? SC_ENOMEM : SC_EINVAL;
    }
    *out = ix;
    return SC_OK;
}

static size_t find_pos(sc_node *n, const char *name, bool *found)
{
    size_t lo = 0, hi = n->n_indices;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(n->indices[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static sc_status registry_insert(sc_node *n, sc_index *ix)
{
    bool found;
    size_t pos = find_pos(n, ix->name, &found);
    if (found)
        return SC_EEXIST;
    if (n->n_indices == n->cap_indices) {
        size_t cap = n->cap_indices ? n->cap_indices * 2 : 8;
        sc_index **p = realloc(n->indices, cap * sizeof *p);
        if (!p)
            return SC_ENOMEM;
        n->indices = p;
        n->cap_indices = cap;
    }
    memmove(n->indices + pos + 1, n->indices + pos, (n->n_indices - pos) * sizeof *n->indices);
    n->indices[pos] = ix;
    n->n_indices++;
    return SC_OK;
}

sc_status sc__node_register(sc_node *n, sc_index *ix)
{
    pthread_mutex_lock(&n->mu);
    sc_status st = registry_insert(n, ix);
    pthread_mutex_unlock(&n->mu);
    return st;
}

sc_status sc_node_create_index(sc_node *n, const char *name, const json_t *settings,
                               const json_t *mappings, sc_cluster_error *err)
{
    if (!sc_index_name_valid(name, err))
        return SC_EINVAL;
    pthread_mutex_lock(&n->mu);
    bool found;
    (void)find_pos(n, name, &found);
    bool is_alias = !found && sc__alias_exists_locked(n, name);
    pthread_mutex_unlock(&n->mu);
    if (is_alias) {
        sc_cluster_error_set(err, 400, "invalid_index_name_exception",
                             "Invalid index name [%s], already exists as alias", name);
        snprintf(err->index, sizeof err->index, "%s", name);
        return SC_EINVAL;
    }
    if (found)
        goto exists;
    char uuid[24];
    sc__random_id(uuid);
    sc_index *ix;
    sc_status st = sc__index_build(n, name, uuid, sc_clock_wall_ms(), settings, mappings, &ix, err);
    if (st != SC_OK)
        return st;
    /* New indices route as Elasticsearch 7+ does by default (kept in the metadata). */
    if (!ix->settings.routing_num_shards)
        ix->settings.routing_num_shards =
            sc_routing_default_num_routing_shards(ix->settings.number_of_shards);
    if (sc_dir_make(ix->dir) != SC_OK || sc__index_write_meta(ix) != SC_OK) {
        sc_cluster_error_set(err, 500, "exception", "cannot write index metadata in [%s]", ix->dir);
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return SC_EIO;
    }
    st = sc__index_open_shards(n, ix, true, err);
    if (st != SC_OK) {
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return st;
    }
    st = sc__node_register(n, ix);
    if (st != SC_OK) {
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        if (st == SC_EEXIST)
            goto exists;
        return st;
    }
    sc_log(SC_LOG_INFO, "index", "created index [%s] uuid [%s] shards [%u]", name, uuid,
           ix->settings.number_of_shards);
    return SC_OK;
exists:
    sc_cluster_error_set(err, 400, "resource_already_exists_exception",
                         "index [%s/%s] already exists", name, "_na_");
    {
        sc_index *cur = sc_node_index(n, name);
        if (cur) {
            sc_cluster_error_set(err, 400, "resource_already_exists_exception",
                                 "index [%s/%s] already exists", name, cur->uuid);
            snprintf(err->index_uuid, sizeof err->index_uuid, "%s", cur->uuid);
            sc_index_unref(cur);
        }
        snprintf(err->index, sizeof err->index, "%s", name);
    }
    return SC_EEXIST;
}

sc_status sc_node_delete_index(sc_node *n, const char *name, sc_cluster_error *err)
{
    pthread_mutex_lock(&n->mu);
    sc_index *ix = sc__node_unregister_locked(n, name);
    pthread_mutex_unlock(&n->mu);
    if (!ix) {
        sc_cluster_error_not_found(err, name);
        return SC_ENOTFOUND;
    }
    sc__index_forget(ix);
    return SC_OK;
}

pthread_mutex_t *sc__node_mu(sc_node *n)
{
    return &n->mu;
}

pthread_mutex_t *sc__node_alias_write_mu(sc_node *n)
{
    return &n->alias_write_mu;
}

sc_index *const *sc__node_list_locked(sc_node *n, size_t *count)
{
    *count = n->n_indices;
    return n->indices;
}

sc_index *sc__node_find_locked(sc_node *n, const char *name)
{
    bool found;
    size_t pos = find_pos(n, name, &found);
    return found ? n->indices[pos] : NULL;
}

sc_index *sc__node_unregister_locked(sc_node *n, const char *name)
{
    bool found;
    size_t pos = find_pos(n, name, &found);
    if (!found)
        return NULL;
    sc_index *ix = n->indices[pos];
    memmove(n->indices + pos, n->indices + pos + 1, (n->n_indices - pos - 1) * sizeof *n->indices);
    n->n_indices--;
    return ix;
}

void sc__index_forget(sc_index *ix)
{
    atomic_store(&ix->deleted, true);
    /* Remove the metadata now so a crash before the last reference goes still forgets it. */
    sc__index_remove_meta(ix);
    sc_log(SC_LOG_INFO, "index", "deleted index [%s]", ix->name);
    sc_index_unref(ix);
}

sc_index *sc_node_index(sc_node *n, const char *name)
{
    pthread_mutex_lock(&n->mu);
    bool found;
    size_t pos = find_pos(n, name, &found);
    sc_index *ix = found ? n->indices[pos] : NULL;
    if (ix)
        sc_index_ref(ix);
    pthread_mutex_unlock(&n->mu);
    return ix;
}

void sc_node_release(sc_index **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sc_index_unref(list[i]);
    free(list);
}

void sc_cluster_error_closed(sc_cluster_error *err, const sc_index *ix)
{
    sc_cluster_error_set(err, 400, "index_closed_exception", "closed");
    snprintf(err->index, sizeof err->index, "%s", ix->name);
    snprintf(err->index_uuid, sizeof err->index_uuid, "%s", ix->uuid);
}

sc_status sc_index_set_closed(sc_index *ix, bool closed, sc_cluster_error *err)
{
    if (closed && !atomic_load(&ix->closed))
        (void)sc_index_flush(ix);
    atomic_store(&ix->closed, closed);
    if (sc__index_write_meta(ix) != SC_OK) {
        sc_cluster_error_set(err, 500, "exception", "cannot write index metadata of [%s]",
                             ix->name);
        return SC_EIO;
    }
    sc_log(SC_LOG_INFO, "index", "%s index [%s]", closed ? "closed" : "opened", ix->name);
    return SC_OK;
}

sc_status sc_index_put_mapping(sc_index *ix, const json_t *update, sc_cluster_error *err)
{
    pthread_mutex_lock(ix->mapping_mu);
    sc_mapping *merged = NULL;
    sc_mapping_error merr;
    sc_status st = sc_mapping_merge(ix->mapping, update, &merged, &merr);
    if (st == SC_OK) {
        sc_mapping_unref(ix->mapping);
        ix->mapping = merged;
        sc__index_publish_mapping(ix, merged);
    }
    pthread_mutex_unlock(ix->mapping_mu);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 400, merr.type ? merr.type : "illegal_argument_exception", "%s",
                             merr.reason);
        return st;
    }
    if (sc__index_write_meta(ix) != SC_OK)
        sc_log(SC_LOG_WARN, "index", "could not persist mapping of [%s]", ix->name);
    return SC_OK;
}

bool sc_index_install_mapping(sc_index *ix, const sc_mapping *base, sc_mapping *updated)
{
    pthread_mutex_lock(ix->mapping_mu);
    bool ok = ix->mapping == base;
    if (ok) {
        sc_mapping_unref(ix->mapping);
        ix->mapping = sc_mapping_ref(updated);
    }
    pthread_mutex_unlock(ix->mapping_mu);
    /* only on disk: republishing would overwrite newer metadata (aliases) in etcd */
    if (ok && sc__index_write_meta_local(ix) != SC_OK)
        sc_log(SC_LOG_WARN, "index", "could not persist mapping of [%s]", ix->name);
    return ok;
}

/* ---- open / close ---- */

sc_status sc_node_open(const sc_node_config *cfg, sc_node **out)
{
    *out = NULL;
    if (!cfg->data_dir)
        return SC_EINVAL;
    sc_node *n = calloc(1, sizeof *n);
    if (!n)
        return SC_ENOMEM;
    n->cfg = *cfg;
    n->data_dir = strdup(cfg->data_dir);
    char host[256] = "scry";
    if (!cfg->node_name)
        gethostname(host, sizeof host - 1);
    n->name = strdup(cfg->node_name ? cfg->node_name : host);
    n->cluster_name = strdup(cfg->cluster_name ? cfg->cluster_name : "scry");
    n->cfg.data_dir = n->data_dir;
    n->cfg.node_name = n->name;
    n->cfg.cluster_name = n->cluster_name;
    if (!n->cfg.memory_limit_bytes)
        n->cfg.memory_limit_bytes = (size_t)1 << 30;
    n->start_ms = sc_clock_wall_ms();
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->alias_write_mu, NULL);
    pthread_mutex_init(&n->tasks.mu, NULL);
    pthread_mutex_init(&n->scrolls.mu, NULL);
    n->breakers.request_limit = n->cfg.memory_limit_bytes * 60 / 100;
    n->breakers.inflight_limit = n->cfg.memory_limit_bytes;
    if (sc__node_storage_open(n->data_dir, n->node_id, n->cluster_uuid) != SC_OK) {
        sc_log(SC_LOG_ERROR, "node", "cannot use data folder [%s]", n->data_dir);
        sc_node_close(n);
        return SC_EIO;
    }
    if (sc__meta_open(n->data_dir, &n->meta) != SC_OK || sc__bgtasks_open(&n->bg) != SC_OK ||
        sc__snaps_open(cfg->path_repo, &n->snaps) != SC_OK) {
        sc_node_close(n);
        return SC_ENOMEM;
    }
    unsigned threads = cfg->search_threads;
    if (!threads) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (unsigned)c : 2;
    }
    if (sc_threadpool_new(threads, 4096, "sc-search", &n->pool) != SC_OK)
        n->pool = NULL;
    /* A fixed number of threads for every shard's background work, however many shards the
     * node holds: maintenance workers up to the cores (at most 4), one merge thread. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t workers = cores < 1 ? 1 : cores > 4 ? 4 : (size_t)cores;
    if (sc_shard_sched_new(workers, 1, &n->sched) != SC_OK) {
        sc_log(SC_LOG_ERROR, "node", "cannot start the shard scheduler");
        sc_node_close(n);
        return SC_ENOMEM;
    }
    if (cfg->shard_inactive_ms)
        sc_shard_sched_set_inactive_ms(
            n->sched, cfg->shard_inactive_ms > 0 ? (uint64_t)cfg->shard_inactive_ms : 0);
    if (sc__recovery_new(&n->recovery) != SC_OK) {
        sc_node_close(n);
        return SC_ENOMEM;
    }
    sc__node_recover_indices(n);
    if (sc__recovery_start(n->recovery) != SC_OK)
        sc_log(SC_LOG_ERROR, "node", "cannot start the recovery of the shards");
    n->watcher = sc__watcher_start(n);
    sc_log(SC_LOG_INFO, "node", "node [%s] id [%s] data [%s] indices [%zu]", n->name, n->node_id,
           n->data_dir, n->n_indices);
    *out = n;
    return SC_OK;
}

void sc_node_close(sc_node *n)
{
    if (!n)
        return;
    sc__recovery_free(n->recovery); /* stops recoveries still running */
    n->recovery = NULL;
    sc__watcher_stop(n->watcher);
    sc__bgtasks_close(n->bg); /* before the indices they write go */
    sc__snaps_close(n->snaps);
    n->snaps = NULL;
    (void)sc_scroll_clear(n, NULL);
    if (n->pool)
        sc_threadpool_free(n->pool, SC_THREADPOOL_DRAIN);
    sc__indices_flush_dirty(n->indices, n->n_indices); /* then each close writes nothing */
    for (size_t i = 0; i < n->n_indices; i++)
        sc_index_unref(n->indices[i]);
    free(n->indices);
    /* Every shard is closed by now (indices are released above), so none is attached. */
    sc_shard_sched_free(n->sched);
    sc__meta_close(n->meta);
    pthread_mutex_destroy(&n->mu);
    pthread_mutex_destroy(&n->alias_write_mu);
    pthread_mutex_destroy(&n->tasks.mu);
    pthread_mutex_destroy(&n->scrolls.mu);
    free(n->data_dir);
    free(n->name);
    free(n->cluster_name);
    free(n);
}

/* Snapshot of all indices (new references) for background jobs. */
sc_status sc__node_all(sc_node *n, sc_index ***out, size_t *n_out)
{
    return sc_node_resolve_ex(n, NULL, SC_NODE_RESOLVE_HIDDEN, out, n_out, NULL);
}
