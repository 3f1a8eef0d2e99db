/* Tasks and the request circuit breaker. Every search registers a task (id "<node>:<n>",
 * action, description, start time, a cancellation flag that shard-level execution polls);
 * GET _tasks lists them and POST _tasks/<id>/_cancel sets the flag. The request breaker
 * accounts per-request memory (arena budgets) against a node-wide limit (60% of the memory
 * limit by default); a reservation that would exceed it trips with circuit_breaking_exception
 * (429). Thread-safe. */
#ifndef SC_CLUSTER_TASKS_H
#define SC_CLUSTER_TASKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonw.h"
#include "cluster/node.h"
#include "search/iter.h"

typedef struct sc_task {
    uint64_t id;
    const char *action;   /* static */
    char description[256];
    uint64_t start_ns;     /* sc_clock_now_ns at the start; see sc_task_start_wall_ms */
    sc_cancel_token token; /* cancellation flag + deadline, polled by shard execution */
    int client_fd;         /* the HTTP client's socket, watched for hang-ups; -1 = none */
    /* a child task's parent on the coordinating node ("<node>:<n>"), listed as parent_task_id
     * and matched by sc_tasks_cancel_children; "" = none (set after sc_task_begin) */
    char parent_task_id[136];
    struct sc_task *prev, *next;
} sc_task;

/* Registers a running task (caller-owned storage, must stay alive until sc_task_end). */
void sc_task_begin(sc_node *n, sc_task *t, const char *action, const char *description);
/* The same, with the start time the caller already took (sc_clock_now_ns) for the request. */
void sc_task_begin_at(sc_node *n, sc_task *t, const char *action, const char *description,
                      uint64_t start_ns);
void sc_task_end(sc_node *n, sc_task *t);
/* The task's start as wall-clock epoch milliseconds (start_time_in_millis), derived from the
 * monotonic start when asked: a search reads one clock at its start, not two. */
int64_t sc_task_start_wall_ms(const sc_task *t);
/* Cancels the task when the client socket `fd` hangs up (checked every 100 ms by the node's
 * watcher thread while the task runs). The socket must stay open until sc_task_end. */
void sc_task_watch_client(sc_node *n, sc_task *t, int fd);
/* Writes "<node>:<id>": {...} members for every task (or only task_id "<node>:<id>" when not
 * NULL; only those whose action matches the `actions` glob when not NULL) into an open
 * object. */
void sc_tasks_write(sc_node *n, sc_jsonw *w, const char *task_id, const char *actions);
/* Cancels task_id (or, when NULL, every task whose action matches the `actions` glob, all when
 * NULL). Returns the number cancelled. */
size_t sc_tasks_cancel(sc_node *n, const char *task_id, const char *actions);
/* Cancels every task whose parent_task_id is parent (the coordinator cancelled its search).
 * Returns the number cancelled. */
size_t sc_tasks_cancel_children(sc_node *n, const char *parent);
/* Writes "<node>:<id>" of t into buf (cap >= 64 holds any). */
void sc_task_id_str(sc_node *n, const sc_task *t, char *buf, size_t cap);

typedef struct sc_breaker_stats {
    uint64_t request_limit, request_used, request_tripped;
    uint64_t inflight_used, inflight_tripped;
    /* the most memory one shard execution actually used under its request-breaker
     * reservation (its scratch arena's high-water mark), since start or the last reset */
    uint64_t request_peak;
} sc_breaker_stats;

/* Reads the breaker counters into out. With reset_peak, the peak counter restarts at 0
 * (atomically with its read). */
void sc_breakers_get(sc_node *n, sc_breaker_stats *out);
void sc_breakers_get_reset(sc_node *n, sc_breaker_stats *out, bool reset_peak);
/* Records that one request execution used `bytes` of its reservation (keeps the maximum). */
void sc_breaker_note_used(sc_node *n, uint64_t bytes);
/* Reserves bytes on the request breaker; false (and counts a trip) when over the limit. */
bool sc_breaker_reserve(sc_node *n, uint64_t bytes);
void sc_breaker_release(sc_node *n, uint64_t bytes);
/* Counts a trip of the request breaker that happened inside a reservation (an arena with a
 * reserved budget ran out). */
void sc_breaker_count_trip(sc_node *n);
/* In-flight request bytes (HTTP bodies). */
bool sc_breaker_inflight_reserve(sc_node *n, uint64_t bytes);
void sc_breaker_inflight_release(sc_node *n, uint64_t bytes);

#endif
