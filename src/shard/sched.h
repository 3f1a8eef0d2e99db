/* The shard scheduler: one set of threads that runs the background work of every shard of a
 * node (timed refresh, async translog sync, flush past the translog threshold, merges), so a
 * node holds thousands of shards with a fixed number of threads (DESIGN.md §5). One timer
 * thread finds the shards whose work is due every tick (100 ms) and hands each to a worker of
 * the maintenance pool; merges run on their own small pool so a long merge never delays other
 * shards' refreshes. A shard is never worked on by two threads at once. A shard without
 * writes for the inactive time goes idle: a maintenance job commits it and frees its indexing
 * buffer (sc_shard_release_idle), so thousands of idle shards cost little memory. */
#ifndef SC_SHARD_SCHED_H
#define SC_SHARD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct sc_shard_sched sc_shard_sched;

/* Starts a scheduler with n_workers maintenance threads (refresh, sync, flush; >= 1) and
 * n_merge_workers merge threads (>= 1), plus its timer thread. *out is owned
 * (sc_shard_sched_free). SC_EINVAL, SC_ENOMEM, SC_EIO (threads could not start). */
sc_status sc_shard_sched_new(size_t n_workers, size_t n_merge_workers, sc_shard_sched **out)
    SC_MUST_USE;

/* Stops the threads and frees the scheduler. Every shard attached to it must be closed first.
 * NULL is a no-op. */
void sc_shard_sched_free(sc_shard_sched *sc);

/* Elasticsearch's indices.memory.shard_inactive_time default: 5 minutes. */
#define SC_SHARD_INACTIVE_DEFAULT_MS 300000u

/* Sets how long a shard goes without writes before the scheduler releases its idle memory
 * (sc_shard_release_idle: commit, then free the indexing buffer), once per idle period;
 * 0 never does. Default SC_SHARD_INACTIVE_DEFAULT_MS. Applies to every attached shard from
 * the next tick. Thread-safe. */
void sc_shard_sched_set_inactive_ms(sc_shard_sched *sc, uint64_t ms);

/* Threads the scheduler runs (timer + workers + merge workers). */
size_t sc_shard_sched_n_threads(const sc_shard_sched *sc);

/* Shards attached right now (a snapshot). Thread-safe. */
size_t sc_shard_sched_n_shards(sc_shard_sched *sc);

#endif
