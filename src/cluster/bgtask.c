/* Background tasks (see bgtask.h): a list on the node of running and finished tasks, each with
 * its thread, context, status callback and final response. */
#include "cluster/bgtask.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"

typedef struct sc__bgtask {
    sc_node *node;
    char id[64];
    sc_task task;
    sc_bgtask_run_fn run;
    sc_bgtask_status_fn status;
    void (*free_ctx)(void *);
    void *ctx;
    pthread_t thread;
    bool completed, error; /* guarded by the registry mutex */
    json_t *response;
    struct sc__bgtask *next;
} sc__bgtask;

struct sc__bgtasks {
    pthread_mutex_t mu;
    sc__bgtask *head;
};

sc_status sc__bgtasks_open(sc__bgtasks **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return SC_ENOMEM;
    pthread_mutex_init(&(*out)->mu, NULL);
    return SC_OK;
}

void sc__bgtasks_close(sc__bgtasks *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    for (sc__bgtask *t = b->head; t; t = t->next)
        sc_cancel_token_cancel(&t->task.token);
    pthread_mutex_unlock(&b->mu);
    for (sc__bgtask *t = b->head, *next; t; t = next) {
        next = t->next;
        pthread_join(t->thread, NULL);
        json_decref(t->response);
        t->free_ctx(t->ctx);
        free(t);
    }
    pthread_mutex_destroy(&b->mu);
    free(b);
}

static void *thread_main(void *arg)
{
    sc__bgtask *t = arg;
    bool error = false;
    json_t *resp = t->run(t->ctx, &t->task, &error);
    sc_task_end(t->node, &t->task);
    sc__bgtasks *b = sc__node_bgtasks(t->node);
    pthread_mutex_lock(&b->mu);
    t->response = resp;
    t->error = error;
    t->completed = true;
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

sc_status sc_bgtask_start(sc_node *n, const char *action, const char *description,
                          sc_bgtask_run_fn run, sc_bgtask_status_fn status,
                          void (*free_ctx)(void *), void *ctx, char id_out[64])
{
    sc__bgtask *t = calloc(1, sizeof *t);
    if (!t) {
        free_ctx(ctx);
        return SC_ENOMEM;
    }
    *t = (sc__bgtask){.node = n, .run = run, .status = status, .free_ctx = free_ctx, .ctx = ctx};
    sc_task_begin(n, &t->task, action, description);
    snprintf(t->id, sizeof t->id, "%s:%llu", sc_node_id(n), (unsigned long long)t->task.id);
    snprintf(id_out, 64, "%s", t->id);
    sc__bgtasks *b = sc__node_bgtasks(n);
    pthread_mutex_lock(&b->mu);
    if (pthread_create(&t->thread, NULL, thread_main, t) != 0) {
        pthread_mutex_unlock(&b->mu);
        sc_task_end(n, &t->task);
        free_ctx(ctx);
        free(t);
        return SC_ENOMEM;
    }
    t->next = b->head;
    b->head = t;
    pthread_mutex_unlock(&b->mu);
    return SC_OK;
}

json_t *sc_bgtask_get(sc_node *n, const char *id)
{
    sc__bgtasks *b = sc__node_bgtasks(n);
    pthread_mutex_lock(&b->mu);
    sc__bgtask *t = b->head;
    while (t && strcmp(t->id, id))
        t = t->next;
    json_t *out = NULL;
    if (t) {
        json_t *status = t->status(t->ctx);
        json_int_t start_ms = sc_task_start_wall_ms(&t->task);
        out = json_pack("{s:b,s:{s:s,s:I,s:s,s:s,s:o,s:s,s:I,s:b,s:b}}", "completed", t->completed,
                        "task", "node", sc_node_id(n), "id", (json_int_t)t->task.id, "type",
                        "transport", "action", t->task.action, "status", status, "description",
                        t->task.description, "start_time_in_millis", start_ms,
                        "cancellable", 1, "cancelled", atomic_load(&t->task.token.cancelled) != 0);
        if (t->completed && t->response)
            json_object_set(out, t->error ? "error" : "response", t->response);
    }
    pthread_mutex_unlock(&b->mu);
    return out;
}
