/* Background recovery of the shards found at start: the node answers HTTP at once while each
 * shard opens its last commit and replays its translog on a small pool (up to the cores, at
 * most 4 threads) that exists only while recoveries run. A recovering shard is INITIALIZING
 * (its entry in sc_index.shards is NULL and it has no failure): health is red, searches and
 * writes get 503. Long replays log their progress every few seconds. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/threadpool.h"
#include "base/vec.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "shard/shard.h"

#define PROGRESS_LOG_NS (5ull * 1000000000) /* a progress line every 5 s per shard */

typedef struct job {
    sc__recovery *r;
    sc_node *node;
    sc_index *ix; /* a reference, released when the job ends */
    uint32_t shard;
    uint64_t start_ns, last_log_ns;
} job;

struct sc__recovery {
    SC_VEC(job *) jobs;
    _Atomic bool cancel;
    pthread_t thread;
    bool started;
};

sc_status sc__recovery_new(sc__recovery **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? SC_OK : SC_ENOMEM;
}

sc_status sc__recovery_add(sc__recovery *r, sc_node *n, sc_index *ix)
{
    for (uint32_t i = 0; i < ix->settings.number_of_shards; i++) {
        if (ix->shard_absent && ix->shard_absent[i])
            continue; /* no copy here (copies.c) */
        job *j = calloc(1, sizeof *j);
        if (!j || sc_vec_push(&r->jobs, j) != SC_OK) {
            free(j);
            return SC_ENOMEM;
        }
        sc_index_ref(ix);
        *j = (job){.r = r, .node = n, .ix = ix, .shard = i};
    }
    return SC_OK;
}

static bool on_progress(void *ctx, uint64_t ops, uint64_t bytes_done, uint64_t bytes_total)
{
    job *j = ctx;
    uint64_t now = sc_clock_now_ns();
    if (ops == 0 && bytes_done == 0 && j->last_log_ns == 0) {
        j->last_log_ns = now;
        if (bytes_total > 4096)
            sc_log(SC_LOG_INFO, "recovery", "recovering [%s][%u]: translog of %.1f MB to replay",
                   j->ix->name, j->shard, (double)bytes_total / 1048576.0);
    } else if (now - j->last_log_ns >= PROGRESS_LOG_NS) {
        j->last_log_ns = now;
        sc_log(SC_LOG_INFO, "recovery",
               "recovering [%s][%u]: %llu ops replayed, %.1f of %.1f MB (%.0f%%) in %.1f s",
               j->ix->name, j->shard, (unsigned long long)ops, (double)bytes_done / 1048576.0,
               (double)bytes_total / 1048576.0,
               bytes_total ? 100.0 * (double)bytes_done / (double)bytes_total : 100.0,
               (double)(now - j->start_ns) / 1e9);
    }
    return !atomic_load_explicit(&j->r->cancel, memory_order_relaxed);
}

static void run_job(void *arg, sc_status pool_st)
{
    job *j = arg;
    sc_index *ix = j->ix;
    j->start_ns = sc_clock_now_ns();
    sc_status st = pool_st;
    sc_shard *shard = NULL;
    sc_shard_error serr = {0};
    if (st == SC_OK && atomic_load(&j->r->cancel))
        st = SC_ECANCELLED;
    if (st == SC_OK) {
        char path[4096];
        sc_shard_config cfg;
        sc__index_shard_config(j->node, ix, j->shard, path, sizeof path, &cfg);
        cfg.on_recovery_progress = on_progress;
        cfg.recovery_ctx = j;
        cfg.test_recovery_delay_ms = sc_node_config_get(j->node)->test_recovery_delay_ms;
        st = sc_shard_open(&cfg, &shard, &serr);
        sc_mapping_unref(cfg.mapping);
    }
    if (st == SC_ECANCELLED) {
        sc_log(SC_LOG_INFO, "recovery", "recovery of [%s][%u] stopped: the node is stopping",
               ix->name, j->shard);
    } else {
        sc__index_shard_recovered(ix, j->shard, shard, st, &serr);
        if (st == SC_OK)
            sc_log(SC_LOG_INFO, "recovery", "recovered [%s][%u] in %.2f s", ix->name, j->shard,
                   (double)(sc_clock_now_ns() - j->start_ns) / 1e9);
    }
    sc_index_unref(ix);
    free(j);
}

static void *recovery_main(void *arg)
{
    sc__recovery *r = arg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cores < 1 ? 1 : cores > 4 ? 4 : (size_t)cores;
    if (threads > r->jobs.len)
        threads = r->jobs.len;
    uint64_t t0 = sc_clock_now_ns();
    sc_threadpool *pool = NULL;
    size_t i = 0;
    if (sc_threadpool_new(threads, r->jobs.len, "sc-recovery", &pool) == SC_OK) {
        for (; i < r->jobs.len; i++)
            if (sc_threadpool_submit_wait(pool, run_job, r->jobs.ptr[i], NULL) != SC_OK)
                break;
        sc_threadpool_free(pool, SC_THREADPOOL_DRAIN);
    }
    /* Jobs never submitted (no pool): run here, one by one. */
    for (; i < r->jobs.len; i++)
        run_job(r->jobs.ptr[i], SC_OK);
    sc_log(SC_LOG_INFO, "recovery", "%zu shards recovered in %.2f s", r->jobs.len,
           (double)(sc_clock_now_ns() - t0) / 1e9);
    return NULL;
}

sc_status sc__recovery_start(sc__recovery *r)
{
    if (!r->jobs.len)
        return SC_OK;
    if (pthread_create(&r->thread, NULL, recovery_main, r) != 0) {
        recovery_main(r); /* no thread: recover before serving, as before */
        sc_vec_clear(&r->jobs);
        return SC_OK;
    }
    r->started = true;
    return SC_OK;
}

void sc__recovery_free(sc__recovery *r)
{
    if (!r)
        return;
    atomic_store(&r->cancel, true);
    if (r->started)
        pthread_join(r->thread, NULL);
    else
        for (size_t i = 0; i < r->jobs.len; i++) {
            sc_index_unref(r->jobs.ptr[i]->ix);
            free(r->jobs.ptr[i]);
        }
    sc_vec_free(&r->jobs);
    free(r);
}
