/* Task registry and circuit breakers (see tasks.h). */
#include "cluster/tasks.h"

#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/internal.h"

void sc_task_begin(sc_node *n, sc_task *t, const char *action, const char *description)
{
    sc_task_begin_at(n, t, action, description, sc_clock_now_ns());
}

void sc_task_begin_at(sc_node *n, sc_task *t, const char *action, const char *description,
                      uint64_t start_ns)
{
    sc__tasks *ts = sc__node_tasks(n);
    t->action = action;
    /* a bounded copy (every search begins a task: no format parsing for it) */
    size_t dl = description ? strnlen(description, sizeof t->description - 1) : 0;
    memcpy(t->description, description ? description : "", dl);
    t->description[dl] = '\0';
    t->start_ns = start_ns;
    sc_cancel_token_init(&t->token, 0);
    t->client_fd = -1;
    t->parent_task_id[0] = '\0';
    pthread_mutex_lock(&ts->mu);
    t->id = ++ts->next_id;
    t->prev = NULL;
    t->next = ts->head;
    if (ts->head)
        ts->head->prev = t;
    ts->head = t;
    pthread_mutex_unlock(&ts->mu);
}

int64_t sc_task_start_wall_ms(const sc_task *t)
{
    return sc_clock_wall_ms() - (int64_t)((sc_clock_now_ns() - t->start_ns) / 1000000u);
}

void sc_task_end(sc_node *n, sc_task *t)
{
    sc__tasks *ts = sc__node_tasks(n);
    pthread_mutex_lock(&ts->mu);
    if (t->prev)
        t->prev->next = t->next;
    else
        ts->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&ts->mu);
}

void sc_task_watch_client(sc_node *n, sc_task *t, int fd)
{
    sc__tasks *ts = sc__node_tasks(n);
    pthread_mutex_lock(&ts->mu);
    t->client_fd = fd;
    pthread_mutex_unlock(&ts->mu);
}

/* The hang-up watcher: polls the client sockets of running tasks; a peer that closed its side
 * (or reset the connection) cancels its search. */
struct sc__watcher {
    sc_node *n;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

static void watch_once(sc_node *n)
{
    sc__tasks *ts = sc__node_tasks(n);
    struct pollfd fds[256];
    sc_task *owners[256];
    pthread_mutex_lock(&ts->mu);
    nfds_t k = 0;
    for (sc_task *t = ts->head; t && k < 256; t = t->next)
        if (t->client_fd >= 0 && !atomic_load_explicit(&t->token.cancelled, memory_order_relaxed)) {
            fds[k].fd = t->client_fd;
            fds[k].events = POLLRDHUP;
            fds[k].revents = 0;
            owners[k++] = t;
        }
    /* Polled under the lock: a task's socket stays open until it has ended. */
    if (k > 0 && poll(fds, k, 0) > 0)
        for (nfds_t i = 0; i < k; i++)
            if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
                sc_cancel_token_cancel(&owners[i]->token);
    pthread_mutex_unlock(&ts->mu);
}

static void *watch_main(void *arg)
{
    sc__watcher *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->mu);
        watch_once(w->n);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

sc__watcher *sc__watcher_start(sc_node *n)
{
    sc__watcher *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->n = n;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        return NULL;
    }
    return w;
}

void sc__watcher_stop(sc__watcher *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

static bool id_matches(sc_node *n, const sc_task *t, const char *task_id)
{
    char id[128];
    snprintf(id, sizeof id, "%s:%llu", sc_node_id(n), (unsigned long long)t->id);
    return strcmp(id, task_id) == 0;
}

void sc_tasks_write(sc_node *n, sc_jsonw *w, const char *task_id, const char *actions)
{
    sc__tasks *ts = sc__node_tasks(n);
    uint64_t now = sc_clock_now_ns();
    int64_t wall_ms = sc_clock_wall_ms();
    pthread_mutex_lock(&ts->mu);
    for (sc_task *t = ts->head; t; t = t->next) {
        if (task_id && !id_matches(n, t, task_id))
            continue;
        if (actions && fnmatch(actions, t->action, 0) != 0)
            continue;
        char id[128];
        snprintf(id, sizeof id, "%s:%llu", sc_node_id(n), (unsigned long long)t->id);
        sc_jsonw_key(w, id);
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "node", sc_node_id(n));
        sc_jsonw_kv_int(w, "id", (int64_t)t->id);
        sc_jsonw_kv_str(w, "type", "transport");
        sc_jsonw_kv_str(w, "action", t->action);
        sc_jsonw_kv_str(w, "description", t->description);
        if (t->parent_task_id[0])
            sc_jsonw_kv_str(w, "parent_task_id", t->parent_task_id);
        sc_jsonw_kv_int(w, "start_time_in_millis",
                        wall_ms - (int64_t)((now - t->start_ns) / 1000000u));
        sc_jsonw_kv_int(w, "running_time_in_nanos", (int64_t)(now - t->start_ns));
        sc_jsonw_kv_bool(w, "cancellable", true);
        sc_jsonw_kv_bool(w, "cancelled", atomic_load_explicit(&t->token.cancelled, memory_order_relaxed) != 0);
        sc_jsonw_key(w, "headers");
        sc_jsonw_obj_begin(w);
        sc_jsonw_obj_end(w);
        sc_jsonw_obj_end(w);
    }
    pthread_mutex_unlock(&ts->mu);
}

size_t sc_tasks_cancel(sc_node *n, const char *task_id, const char *actions)
{
    sc__tasks *ts = sc__node_tasks(n);
    size_t k = 0;
    pthread_mutex_lock(&ts->mu);
    for (sc_task *t = ts->head; t; t = t->next) {
        if (task_id && !id_matches(n, t, task_id))
            continue;
        if (!task_id && actions && fnmatch(actions, t->action, 0) != 0)
            continue;
        sc_cancel_token_cancel(&t->token);
        k++;
    }
    pthread_mutex_unlock(&ts->mu);
    return k;
}

size_t sc_tasks_cancel_children(sc_node *n, const char *parent)
{
    sc__tasks *ts = sc__node_tasks(n);
    size_t k = 0;
    pthread_mutex_lock(&ts->mu);
    for (sc_task *t = ts->head; t; t = t->next)
        if (t->parent_task_id[0] && strcmp(t->parent_task_id, parent) == 0) {
            sc_cancel_token_cancel(&t->token);
            k++;
        }
    pthread_mutex_unlock(&ts->mu);
    return k;
}

void sc_task_id_str(sc_node *n, const sc_task *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s:%llu", sc_node_id(n), (unsigned long long)t->id);
}

void sc_breakers_get(sc_node *n, sc_breaker_stats *out)
{
    sc_breakers_get_reset(n, out, false);
}

void sc_breakers_get_reset(sc_node *n, sc_breaker_stats *out, bool reset_peak)
{
    sc__breakers *b = sc__node_breakers(n);
    out->request_peak = reset_peak ? atomic_exchange(&b->request_peak, 0)
                                   : atomic_load(&b->request_peak);
    out->request_limit = b->request_limit;
    out->request_used = atomic_load(&b->request_used);
    out->request_tripped = atomic_load(&b->request_tripped);
    out->inflight_used = atomic_load(&b->inflight_used);
    out->inflight_tripped = atomic_load(&b->inflight_tripped);
}

static bool reserve(_Atomic uint64_t *used, _Atomic uint64_t *tripped, uint64_t limit,
                    uint64_t bytes)
{
    uint64_t cur = atomic_load(used);
    for (;;) {
        if (limit && cur + bytes > limit) {
            atomic_fetch_add(tripped, 1);
            return false;
        }
        if (atomic_compare_exchange_weak(used, &cur, cur + bytes))
            return true;
    }
}

bool sc_breaker_reserve(sc_node *n, uint64_t bytes)
{
    sc__breakers *b = sc__node_breakers(n);
    return reserve(&b->request_used, &b->request_tripped, b->request_limit, bytes);
}

void sc_breaker_note_used(sc_node *n, uint64_t bytes)
{
    _Atomic uint64_t *peak = &sc__node_breakers(n)->request_peak;
    uint64_t cur = atomic_load(peak);
    while (cur < bytes && !atomic_compare_exchange_weak(peak, &cur, bytes))
        ;
}

void sc_breaker_count_trip(sc_node *n)
{
    atomic_fetch_add(&sc__node_breakers(n)->request_tripped, 1);
}

void sc_breaker_release(sc_node *n, uint64_t bytes)
{
    atomic_fetch_sub(&sc__node_breakers(n)->request_used, bytes);
}

bool sc_breaker_inflight_reserve(sc_node *n, uint64_t bytes)
{
    sc__breakers *b = sc__node_breakers(n);
    return reserve(&b->inflight_used, &b->inflight_tripped, b->inflight_limit, bytes);
}

void sc_breaker_inflight_release(sc_node *n, uint64_t bytes)
{
    atomic_fetch_sub(&sc__node_breakers(n)->inflight_used, bytes);
}
