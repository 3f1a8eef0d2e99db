/* The shard copies a clustered node holds (issue 13, placement): a node opens only the copies
 * the routing table allocates to it, creating a copy's folder when the copy is allocated (peer
 * recovery then fills it, replication.c), and retires a copy that is no longer allocated once
 * every copy of its shard is started on live nodes (and it has served LEAVE_SERVE_NS more, for
 * coordinators whose routing lags): its entry then leaves sc_index.shards,
 * the shard is closed and its folder removed after a grace period (requests that loaded the
 * pointer before may still use it), or taken back if the routing allocates it here again.
 * Also: flushing only the shards with something to commit, in parallel, at shutdown. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/threadpool.h"
#include "cluster/allocation.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "shard/shard.h"

/* How long a retired copy stays open after it left `shards`: every request that loaded the
 * pointer before (a search's query phase, a replicated write under an older routing) has
 * finished long before; searches hold snapshots, not the shard, past their start. */
#define RETIRE_GRACE_NS (60ull * 1000000000)

/* How long a copy that is no longer allocated here (a relocation's source, or a copy re-created
 * elsewhere) goes on serving before it retires: a coordinator whose routing has not caught up
 * with the change yet (each node follows etcd on its own watch) still finds it, instead of a
 * shard failure when the shard has no other copy. Writes are not taken meanwhile (the routing
 * no longer names it; a replica receives nothing). Several watch delays on a loaded machine. */
#define LEAVE_SERVE_NS (3ull * 1000000000)

typedef struct sc__retired_copy {
    struct sc__retired_copy *next;
    sc_shard *shard;
    uint32_t id;
    uint64_t at_ns;
} sc__retired_copy;

sc_status sc__index_mark_absent(sc_index *ix, bool create)
{
    uint32_t ns = ix->settings.number_of_shards;
    _Atomic bool *a = calloc(ns ? ns : 1, sizeof *a);
    if (!a)
        return SC_ENOMEM;
    for (uint32_t i = 0; i < ns; i++) {
        bool absent = create;
        if (!create) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%u", ix->dir, i);
            absent = sc_path_exists(path) != 1;
        }
        atomic_init(&a[i], absent);
    }
    ix->shard_absent = a;
    return SC_OK;
}

typedef struct flush_job {
    sc_index *ix;
    uint32_t shard;
} flush_job;

static void flush_one(void *arg, sc_status pool_st)
{
    flush_job *j = arg;
    sc_shard *s = j->ix->shards[j->shard];
    if (pool_st == SC_OK && s && sc_shard_needs_flush(s) && sc_shard_flush(s) != SC_OK)
        sc_log(SC_LOG_WARN, "index", "flush of [%s][%u] at shutdown failed", j->ix->name, j->shard);
}

void sc__indices_flush_dirty(sc_index **ixs, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = 0; ixs[i]->shards && s < ixs[i]->settings.number_of_shards; s++)
            total += ixs[i]->shards[s] && sc_shard_needs_flush(ixs[i]->shards[s]);
    if (!total)
        return;
    flush_job *jobs = calloc(total, sizeof *jobs);
    size_t k = 0;
    for (size_t i = 0; jobs && i < n; i++)
        for (uint32_t s = 0; ixs[i]->shards && s < ixs[i]->settings.number_of_shards; s++)
            if (ixs[i]->shards[s] && k < total)
                jobs[k++] = (flush_job){ixs[i], s};
    /* Flushes are fsync-bound: a few in flight overlap the waits (as the shard scheduler's
     * maintenance workers, up to the cores, at most 4). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cores < 1 ? 1 : cores > 4 ? 4 : (size_t)cores;
    sc_threadpool *pool = NULL;
    uint64_t t0 = sc_clock_now_ns();
    size_t done = 0;
    if (jobs && sc_threadpool_new(threads, 1024, "sc-close", &pool) == SC_OK) {
        for (; done < k; done++)
            if (sc_threadpool_submit_wait(pool, flush_one, &jobs[done], NULL) != SC_OK)
                break;
        sc_threadpool_free(pool, SC_THREADPOOL_DRAIN);
    }
    for (; jobs && done < k; done++) /* no pool: one by one */
        flush_one(&jobs[done], SC_OK);
    if (!jobs) /* no memory for the list: flush in place */
        for (size_t i = 0; i < n; i++)
            for (uint32_t s = 0; ixs[i]->shards && s < ixs[i]->settings.number_of_shards; s++) {
                flush_job j = {ixs[i], s};
                flush_one(&j, SC_OK);
            }
    sc_log(SC_LOG_INFO, "node", "flushed %zu shards with changes at shutdown in %.2f s", total,
           (double)(sc_clock_now_ns() - t0) / 1e9);
    free(jobs);
}

static void shard_dir(const sc_index *ix, uint32_t shard, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%u", ix->dir, shard);
}

static void remove_copy_dir(const sc_index *ix, uint32_t shard)
{
    char path[4096];
    shard_dir(ix, shard, path, sizeof path);
    if (sc_path_exists(path) != 1)
        return;
    if (sc_dir_remove_all(path) != SC_OK)
        sc_log(SC_LOG_WARN, "cluster", "cannot remove the folder of retired copy [%s][%u]",
               ix->name, shard);
    else
        sc_log(SC_LOG_INFO, "cluster", "removed copy [%s][%u]: not allocated to this node",
               ix->name, shard);
}

void sc__index_close_retired(sc_index *ix)
{
    sc__retired_copy *r = ix->retired;
    ix->retired = NULL;
    while (r) {
        sc__retired_copy *next = r->next;
        sc_shard_close(r->shard, false);
        if (!atomic_load(&ix->deleted) && ix->shard_absent && ix->shard_absent[r->id])
            remove_copy_dir(ix, r->id);
        free(r);
        r = next;
    }
}

/* Every copy of the shard is started (in sync) on a live node other than this one: a copy
 * here is not needed. An empty routing, a copy still recovering or a dead in-sync holder
 * keeps the local data (it may be the only one). */
static bool safe_elsewhere(const sc_shard_routing *sh, const char *local,
                           bool (*live)(void *, const char *), void *ctx)
{
    if (!sh->n_copies || !sh->n_in_sync)
        return false;
    for (size_t c = 0; c < sh->n_copies; c++) {
        const sc_shard_copy *cp = &sh->copies[c];
        bool in_sync = false;
        for (size_t i = 0; i < sh->n_in_sync; i++)
            in_sync |= !strcmp(sh->in_sync[i].alloc_id, cp->alloc_id);
        if (!in_sync || !strcmp(cp->node, local) || !live(ctx, cp->node))
            return false;
    }
    for (size_t i = 0; i < sh->n_in_sync; i++)
        if (!strcmp(sh->in_sync[i].node, local) || !live(ctx, sh->in_sync[i].node))
            return false;
    return true;
}

static bool allocated_here(const sc_shard_routing *sh, const char *local)
{
    for (size_t c = 0; c < sh->n_copies; c++)
        if (!strcmp(sh->copies[c].node, local))
            return true;
    return false;
}

/* Takes a retired copy of `shard` back (allocated here again); true when there was one. */
static bool revive(sc_index *ix, uint32_t shard)
{
    for (sc__retired_copy **pp = &ix->retired; *pp; pp = &(*pp)->next) {
        sc__retired_copy *r = *pp;
        if (r->id != shard)
            continue;
        *pp = r->next;
        pthread_mutex_lock(ix->mapping_mu);
        sc_shard_set_mapping(r->shard, ix->mapping);
        ix->shards[shard] = r->shard;
        atomic_store(&ix->shard_absent[shard], false);
        pthread_mutex_unlock(ix->mapping_mu);
        free(r);
        sc_log(SC_LOG_INFO, "cluster", "copy [%s][%u] allocated here again: kept", ix->name, shard);
        return true;
    }
    return false;
}

static bool open_copy(sc_node *n, sc_index *ix, uint32_t shard)
{
    if (revive(ix, shard))
        return true;
    char path[4096];
    sc_shard_config cfg;
    sc__index_shard_config(n, ix, shard, path, sizeof path, &cfg);
    sc_shard_error serr;
    memset(&serr, 0, sizeof serr);
    sc_shard *s = NULL;
    sc_status st = sc_shard_open(&cfg, &s, &serr);
    sc_mapping_unref(cfg.mapping);
    if (st != SC_OK) {
        sc_log(SC_LOG_WARN, "cluster", "cannot open copy [%s][%u]: %s (retried)", ix->name, shard,
               serr.reason[0] ? serr.reason : sc_status_str(st));
        return false;
    }
    /* Published before the absent flag drops, so a reader never sees "present" without it. */
    sc__index_shard_recovered(ix, shard, s, SC_OK, &serr);
    atomic_store(&ix->shard_absent[shard], false);
    sc_log(SC_LOG_DEBUG, "cluster", "opened copy [%s][%u]: allocated to this node", ix->name,
           shard);
    return true;
}

static void retire_copy(sc_index *ix, uint32_t shard)
{
    sc__retired_copy *r = calloc(1, sizeof *r);
    if (!r)
        return; /* kept open: retried at the next change */
    pthread_mutex_lock(ix->mapping_mu);
    atomic_store(&ix->shard_absent[shard], true);
    r->shard = ix->shards[shard];
    ix->shards[shard] = NULL;
    pthread_mutex_unlock(ix->mapping_mu);
    r->id = shard;
    r->at_ns = sc_clock_now_ns();
    r->next = ix->retired;
    ix->retired = r;
    sc_log(SC_LOG_INFO, "cluster",
           "copy [%s][%u] is no longer allocated to this node and every copy is started "
           "elsewhere: retired (removed in %llu s)",
           ix->name, shard, (unsigned long long)(RETIRE_GRACE_NS / 1000000000));
}

/* Closes and removes the retired copies whose grace period is over; true when none waits. */
static bool expire_retired(sc_index *ix)
{
    uint64_t now = sc_clock_now_ns();
    for (sc__retired_copy **pp = &ix->retired; *pp;) {
        sc__retired_copy *r = *pp;
        if (now - r->at_ns < RETIRE_GRACE_NS) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        sc_shard_close(r->shard, false);
        remove_copy_dir(ix, r->id);
        free(r);
    }
    return ix->retired == NULL;
}

/* Whether shard i's leaving copy has served long enough (starting its clock on the first
 * call); true also when the clock cannot be kept (out of memory: retire at once as before). */
static bool leave_due(sc_index *ix, uint32_t i)
{
    if (!ix->leaving_since_ns)
        ix->leaving_since_ns =
            calloc(ix->settings.number_of_shards + 1, sizeof *ix->leaving_since_ns);
    if (!ix->leaving_since_ns)
        return true;
    uint64_t now = sc_clock_now_ns();
    if (!ix->leaving_since_ns[i]) {
        ix->leaving_since_ns[i] = now;
        return false;
    }
    if (now - ix->leaving_since_ns[i] < LEAVE_SERVE_NS)
        return false;
    ix->leaving_since_ns[i] = 0;
    return true;
}

bool sc__index_reconcile_copies(sc_node *n, sc_index *ix, const sc_index_routing *r,
                                const char *local, bool (*live)(void *, const char *), void *ctx)
{
    if (!ix->shard_absent || !ix->shards || atomic_load(&ix->deleted))
        return true;
    bool settled = true;
    uint32_t ns = ix->settings.number_of_shards;
    for (uint32_t i = 0; r && i < ns && i < r->number_of_shards; i++) {
        const sc_shard_routing *sh = &r->shards[i];
        bool here = allocated_here(sh, local);
        bool absent = atomic_load(&ix->shard_absent[i]);
        if (ix->leaving_since_ns && (here || absent))
            ix->leaving_since_ns[i] = 0;
        if (here && absent) {
            settled &= open_copy(n, ix, i);
        } else if (!here && !absent) {
            if (ix->shards[i] && safe_elsewhere(sh, local, live, ctx)) {
                if (leave_due(ix, i))
                    retire_copy(ix, i);
                else
                    settled = false; /* serving a little longer */
            } else if (!(ix->shard_failures && ix->shard_failures[i]))
                settled = false; /* kept until the shard is started elsewhere (or recovered) */
        } else if (!here && absent && safe_elsewhere(sh, local, live, ctx)) {
            /* a folder without an open copy (restored from a snapshot, or left by a
             * retirement that could not remove it) */
            bool retired = false;
            for (sc__retired_copy *x = ix->retired; x; x = x->next)
                retired |= x->id == i;
            if (!retired)
                remove_copy_dir(ix, i);
        }
    }
    settled &= expire_retired(ix);
    return settled;
}
