/* Fixed worker pool over one mutex-protected ring buffer; see threadpool.h. Searches are
 * coarse tasks (one shard, one segment), so a single queue lock is not the bottleneck. */
#include "base/threadpool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct task {
    sc_task_fn fn;
    void *arg;
    sc_taskgroup *group;
} task;

struct sc_threadpool {
    pthread_mutex_t mu;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
    task *ring;
    size_t cap, head, count;
    bool closing;
    size_t n_threads;
    pthread_t *threads;
};

void sc_taskgroup_init(sc_taskgroup *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->pending = 0;
    g->n_cancelled = 0;
}

void sc_taskgroup_fini(sc_taskgroup *g)
{
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

static void group_add(sc_taskgroup *g)
{
    pthread_mutex_lock(&g->mu);
    g->pending++;
    pthread_mutex_unlock(&g->mu);
}

static void group_done(sc_taskgroup *g, bool cancelled)
{
    pthread_mutex_lock(&g->mu);
    if (cancelled)
        g->n_cancelled++;
    if (--g->pending == 0)
        pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

sc_status sc_taskgroup_wait(sc_taskgroup *g)
{
    pthread_mutex_lock(&g->mu);
    while (g->pending)
        pthread_cond_wait(&g->cv, &g->mu);
    sc_status st = g->n_cancelled ? SC_ECANCELLED : SC_OK;
    pthread_mutex_unlock(&g->mu);
    return st;
}

static void run_task(task t, sc_status st)
{
    t.fn(t.arg, st);
    if (t.group)
        group_done(t.group, st != SC_OK);
}

static void *worker(void *p)
{
    sc_threadpool *tp = p;
    pthread_mutex_lock(&tp->mu);
    for (;;) {
        while (tp->count == 0 && !tp->closing)
            pthread_cond_wait(&tp->not_empty, &tp->mu);
        if (tp->count == 0)
            break; /* closing and drained */
        task t = tp->ring[tp->head];
        tp->head = (tp->head + 1) % tp->cap;
        tp->count--;
        pthread_cond_signal(&tp->not_full);
        pthread_mutex_unlock(&tp->mu);
        run_task(t, SC_OK);
        pthread_mutex_lock(&tp->mu);
    }
    pthread_mutex_unlock(&tp->mu);
    return NULL;
}

sc_status sc_threadpool_new(size_t n_threads, size_t queue_cap, const char *name,
                            sc_threadpool **out)
{
    *out = NULL;
    if (n_threads == 0 || queue_cap == 0 || n_threads > 4096 || queue_cap > SIZE_MAX / sizeof(task))
        return SC_EINVAL;
    sc_threadpool *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return SC_ENOMEM;
    tp->ring = calloc(queue_cap, sizeof(task));
    tp->threads = calloc(n_threads, sizeof(pthread_t));
    if (!tp->ring || !tp->threads) {
        free(tp->ring);
        free(tp->threads);
        free(tp);
        return SC_ENOMEM;
    }
    tp->cap = queue_cap;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->not_empty, NULL);
    pthread_cond_init(&tp->not_full, NULL);
    char tname[16];
    snprintf(tname, sizeof(tname), "%s", name ? name : "sc-worker");
    for (size_t i = 0; i < n_threads; i++) {
        if (pthread_create(&tp->threads[i], NULL, worker, tp) != 0) {
            tp->n_threads = i;
            sc_threadpool_free(tp, SC_THREADPOOL_DRAIN);
            return SC_EIO;
        }
        pthread_setname_np(tp->threads[i], tname);
        tp->n_threads = i + 1;
    }
    *out = tp;
    return SC_OK;
}

static sc_status submit(sc_threadpool *tp, sc_task_fn fn, void *arg, sc_taskgroup *group, bool wait)
{
    if (!fn)
        return SC_EINVAL;
    pthread_mutex_lock(&tp->mu);
    while (wait && tp->count == tp->cap && !tp->closing)
        pthread_cond_wait(&tp->not_full, &tp->mu);
    if (tp->closing) {
        pthread_mutex_unlock(&tp->mu);
        return SC_ECLOSED;
    }
    if (tp->count == tp->cap) {
        pthread_mutex_unlock(&tp->mu);
        return SC_EFULL;
    }
    if (group)
        group_add(group);
    tp->ring[(tp->head + tp->count) % tp->cap] = (task){fn, arg, group};
    tp->count++;
    pthread_cond_signal(&tp->not_empty);
    pthread_mutex_unlock(&tp->mu);
    return SC_OK;
}

sc_status sc_threadpool_submit(sc_threadpool *tp, sc_task_fn fn, void *arg, sc_taskgroup *group)
{
    return submit(tp, fn, arg, group, false);
}

sc_status sc_threadpool_submit_wait(sc_threadpool *tp, sc_task_fn fn, void *arg,
                                    sc_taskgroup *group)
{
    return submit(tp, fn, arg, group, true);
}

size_t sc_threadpool_n_threads(const sc_threadpool *tp)
{
    return tp->n_threads;
}

size_t sc_threadpool_queued(sc_threadpool *tp)
{
    pthread_mutex_lock(&tp->mu);
    size_t n = tp->count;
    pthread_mutex_unlock(&tp->mu);
    return n;
}

void sc_threadpool_free(sc_threadpool *tp, sc_threadpool_shutdown mode)
{
    if (!tp)
        return;
    pthread_mutex_lock(&tp->mu);
    tp->closing = true;
    if (mode == SC_THREADPOOL_CANCEL) {
        /* Take the queue away from the workers, then cancel it outside the lock. */
        while (tp->count) {
            task t = tp->ring[tp->head];
            tp->head = (tp->head + 1) % tp->cap;
            tp->count--;
            pthread_mutex_unlock(&tp->mu);
            run_task(t, SC_ECANCELLED);
            pthread_mutex_lock(&tp->mu);
        }
    }
    pthread_cond_broadcast(&tp->not_empty);
    pthread_cond_broadcast(&tp->not_full);
    pthread_mutex_unlock(&tp->mu);
    for (size_t i = 0; i < tp->n_threads; i++)
        pthread_join(tp->threads[i], NULL);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->not_empty);
    pthread_cond_destroy(&tp->not_full);
    free(tp->ring);
    free(tp->threads);
    free(tp);
}
