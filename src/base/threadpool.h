/* sc_threadpool: a fixed set of worker threads fed by a bounded FIFO queue, and sc_taskgroup,
 * a countdown latch for waiting on a batch of tasks (e.g. one search over several shards).
 * Submitting to a full queue fails fast with SC_EFULL so callers can shed load or run the task
 * inline. Every submitted task runs exactly once: with SC_OK normally, or with SC_ECANCELLED if
 * the pool is shut down with cancellation before the task started (so it can free its arg). */
#ifndef SC_BASE_THREADPOOL_H
#define SC_BASE_THREADPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

typedef struct sc_threadpool sc_threadpool;

/* A task body. `st` is SC_OK when run by a worker, SC_ECANCELLED when the pool dropped it at
 * shutdown (then it runs on the shutting-down thread and should only release `arg`). */
typedef void (*sc_task_fn)(void *arg, sc_status st);

/* Counts down as its tasks finish; caller-owned storage. */
typedef struct sc_taskgroup {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t pending;
    size_t n_cancelled;
} sc_taskgroup;

void sc_taskgroup_init(sc_taskgroup *g);
/* The group must have no pending tasks. */
void sc_taskgroup_fini(sc_taskgroup *g);

/* Blocks until every task submitted with this group has finished (run or cancelled). Returns
 * SC_OK, or SC_ECANCELLED if any of them were cancelled. Must not be called from a task of the
 * same pool while the pool could be saturated (the classic nested-wait deadlock). */
sc_status sc_taskgroup_wait(sc_taskgroup *g);

/* Starts n_threads workers (>= 1) with a queue of queue_cap (>= 1) pending tasks. Worker
 * threads are named `name` (truncated to 15 bytes; NULL = "sc-worker"). *out owns the pool;
 * release with sc_threadpool_free. SC_EINVAL, SC_ENOMEM, or SC_EIO if threads cannot start. */
sc_status sc_threadpool_new(size_t n_threads, size_t queue_cap, const char *name,
                            sc_threadpool **out) SC_MUST_USE;

/* Queues fn(arg). `group` (may be NULL) is counted up now and down when the task finishes.
 * SC_EFULL when the queue is full, SC_ECLOSED after shutdown began; on failure nothing is
 * queued, the group is unchanged and fn is not called. Thread-safe. */
sc_status sc_threadpool_submit(sc_threadpool *tp, sc_task_fn fn, void *arg, sc_taskgroup *group)
    SC_MUST_USE;

/* As sc_threadpool_submit but waits for room instead of failing with SC_EFULL. Never call it
 * from a worker of the same pool. */
sc_status sc_threadpool_submit_wait(sc_threadpool *tp, sc_task_fn fn, void *arg,
                                    sc_taskgroup *group) SC_MUST_USE;

/* Number of worker threads / tasks queued but not started (a snapshot). Thread-safe. */
size_t sc_threadpool_n_threads(const sc_threadpool *tp);
size_t sc_threadpool_queued(sc_threadpool *tp);

typedef enum sc_threadpool_shutdown {
    SC_THREADPOOL_DRAIN,  /* run every queued task, then stop */
    SC_THREADPOOL_CANCEL, /* call queued tasks with SC_ECANCELLED; running tasks finish */
} sc_threadpool_shutdown;

/* Stops accepting tasks, drains or cancels the queue, joins the workers and frees the pool.
 * NULL is a no-op. Must not be called from a worker of the pool. */
void sc_threadpool_free(sc_threadpool *tp, sc_threadpool_shutdown mode);

#endif
