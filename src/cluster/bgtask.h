/* Background tasks: work a request hands off with wait_for_completion=false (reindex, delete
 * and update by query). Each runs on its own thread as a registered task (listed by GET _tasks,
 * cancellable); its status (progress) and, once finished, its response stay readable through
 * GET /_tasks/{id} until the node stops. Node shutdown cancels the running ones and waits for
 * them. Thread-safe. */
#ifndef SC_CLUSTER_BGTASK_H
#define SC_CLUSTER_BGTASK_H

#include <jansson.h>
#include <stdbool.h>

#include "base/status.h"
#include "cluster/node.h"
#include "cluster/tasks.h"

/* The work: runs on the task's thread with its registered task; returns the response body
 * (new reference) and sets *error when it is an error body. */
typedef json_t *(*sc_bgtask_run_fn)(void *ctx, sc_task *task, bool *error);
/* The current progress (new reference), called from other threads while run runs. */
typedef json_t *(*sc_bgtask_status_fn)(void *ctx);

/* Starts a background task; ctx is freed with free_ctx when the node forgets the task (it takes
 * ownership of ctx, even on failure). id_out gets "<node id>:<task number>". */
sc_status sc_bgtask_start(sc_node *n, const char *action, const char *description,
                          sc_bgtask_run_fn run, sc_bgtask_status_fn status,
                          void (*free_ctx)(void *), void *ctx, char id_out[64]) SC_MUST_USE;

/* GET /_tasks/{id} of a background task: {"completed", "task": {...,"status"}, "response" or
 * "error"} (new reference), or NULL when id is not one. */
json_t *sc_bgtask_get(sc_node *n, const char *id);

#endif
