/* Tests for base/threadpool: every task runs once, task groups wait for their batch, a full
 * queue gives SC_EFULL, shutdown drains or cancels (cancelled tasks still run with
 * SC_ECANCELLED), and submit after shutdown fails. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/threadpool.h"

static _Atomic int counter;
static _Atomic int n_cancelled;

static void count_task(void *arg, sc_status st)
{
    if (st == SC_OK)
        atomic_fetch_add(&counter, (int)(intptr_t)arg);
    else
        atomic_fetch_add(&n_cancelled, 1);
}

static void test_runs_all(void **state)
{
    (void)state;
    atomic_store(&counter, 0);
    sc_threadpool *tp;
    assert_int_equal(sc_threadpool_new(3, 64, "test", &tp), SC_OK);
    assert_int_equal(sc_threadpool_n_threads(tp), 3);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 20; i++)
            assert_int_equal(sc_threadpool_submit_wait(tp, count_task, (void *)(intptr_t)1, &g),
                             SC_OK);
        assert_int_equal(sc_taskgroup_wait(&g), SC_OK);
        assert_int_equal(atomic_load(&counter), (round + 1) * 20);
    }
    assert_int_equal(sc_taskgroup_wait(&g), SC_OK); /* nothing pending: returns at once */
    sc_taskgroup_fini(&g);
    sc_threadpool_free(tp, SC_THREADPOOL_DRAIN);
    sc_threadpool_free(NULL, SC_THREADPOOL_DRAIN);
}

/* A gate that holds the single worker so the queue fills up deterministically. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open, worker_blocked;

static void gate_task(void *arg, sc_status st)
{
    (void)arg;
    (void)st;
    pthread_mutex_lock(&gate_mu);
    worker_blocked = true;
    pthread_cond_broadcast(&gate_cv);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

static sc_threadpool *blocked_pool(sc_taskgroup *g, size_t cap)
{
    gate_open = false;
    worker_blocked = false;
    sc_threadpool *tp;
    assert_int_equal(sc_threadpool_new(1, cap, NULL, &tp), SC_OK);
    assert_int_equal(sc_threadpool_submit(tp, gate_task, NULL, g), SC_OK);
    pthread_mutex_lock(&gate_mu);
    while (!worker_blocked)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    return tp;
}

static void open_gate(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = true;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void test_full_queue_and_drain(void **state)
{
    (void)state;
    atomic_store(&counter, 0);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    sc_threadpool *tp = blocked_pool(&g, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(sc_threadpool_submit(tp, count_task, (void *)(intptr_t)1, &g), SC_OK);
    assert_int_equal(sc_threadpool_queued(tp), 4);
    assert_int_equal(sc_threadpool_submit(tp, count_task, (void *)(intptr_t)1, &g), SC_EFULL);
    assert_int_equal(g.pending, 5); /* the refused task was not counted */
    open_gate();
    sc_threadpool_free(tp, SC_THREADPOOL_DRAIN);
    assert_int_equal(atomic_load(&counter), 4);
    assert_int_equal(sc_taskgroup_wait(&g), SC_OK);
    sc_taskgroup_fini(&g);
}

/* Shuts the pool down with cancellation from another thread while the worker is held. */
static void *cancel_thread(void *arg)
{
    sc_threadpool_free(arg, SC_THREADPOOL_CANCEL);
    return NULL;
}

static void test_cancel(void **state)
{
    (void)state;
    atomic_store(&counter, 0);
    atomic_store(&n_cancelled, 0);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    sc_threadpool *tp = blocked_pool(&g, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(sc_threadpool_submit(tp, count_task, (void *)(intptr_t)1, &g), SC_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_thread, tp), 0);
    /* The queued tasks are cancelled while the worker is still inside the gate task. */
    while (atomic_load(&n_cancelled) < 8)
        sched_yield();
    assert_int_equal(atomic_load(&counter), 0);
    open_gate();
    pthread_join(t, NULL);
    assert_int_equal(sc_taskgroup_wait(&g), SC_ECANCELLED);
    assert_int_equal(g.n_cancelled, 8);
    sc_taskgroup_fini(&g);
}

static void test_closed_and_invalid(void **state)
{
    (void)state;
    sc_threadpool *tp;
    assert_int_equal(sc_threadpool_new(0, 4, NULL, &tp), SC_EINVAL);
    assert_null(tp);
    assert_int_equal(sc_threadpool_new(1, 0, NULL, &tp), SC_EINVAL);
    assert_int_equal(sc_threadpool_new(2, 2, "a-very-long-thread-name", &tp), SC_OK);
    assert_int_equal(sc_threadpool_submit(tp, NULL, NULL, NULL), SC_EINVAL);
    sc_threadpool_free(tp, SC_THREADPOOL_CANCEL);
}

/* Many producers racing on a small queue: every accepted task runs exactly once. */
typedef struct producer {
    sc_threadpool *tp;
    sc_taskgroup *g;
    int accepted;
    int unexpected;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = 0; i < 5000; i++) {
        sc_status st = sc_threadpool_submit(p->tp, count_task, (void *)(intptr_t)1, p->g);
        if (st == SC_OK)
            p->accepted++;
        else if (st != SC_EFULL)
            p->unexpected++; /* checked on the main thread: cmocka asserts are not thread-safe */
    }
    return NULL;
}

static void test_concurrent_producers(void **state)
{
    (void)state;
    atomic_store(&counter, 0);
    sc_threadpool *tp;
    assert_int_equal(sc_threadpool_new(2, 16, NULL, &tp), SC_OK);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    producer p[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        p[i] = (producer){tp, &g, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    }
    int total = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        total += p[i].accepted;
        assert_int_equal(p[i].unexpected, 0);
    }
    assert_int_equal(sc_taskgroup_wait(&g), SC_OK);
    assert_int_equal(atomic_load(&counter), total);
    assert_true(total > 0);
    sc_taskgroup_fini(&g);
    sc_threadpool_free(tp, SC_THREADPOOL_DRAIN);
}

/* A task may submit follow-up tasks to its own pool (fan-out from a worker). */
typedef struct fanout {
    sc_threadpool *tp;
    sc_taskgroup *g;
    _Atomic int refused;
} fanout;

static fanout fan;

static void parent_task(void *arg, sc_status st)
{
    (void)arg;
    if (st != SC_OK)
        return;
    for (int i = 0; i < 4; i++)
        if (sc_threadpool_submit(fan.tp, count_task, (void *)(intptr_t)1, fan.g) != SC_OK)
            atomic_fetch_add(&fan.refused, 1);
}

static void test_submit_from_task(void **state)
{
    (void)state;
    atomic_store(&counter, 0);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    assert_int_equal(sc_threadpool_new(2, 256, NULL, &fan.tp), SC_OK);
    fan.g = &g;
    atomic_store(&fan.refused, 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sc_threadpool_submit(fan.tp, parent_task, NULL, &g), SC_OK);
    /* Children are counted before their parent finishes, so one wait covers both levels. */
    assert_int_equal(sc_taskgroup_wait(&g), SC_OK);
    assert_int_equal(atomic_load(&fan.refused), 0);
    assert_int_equal(atomic_load(&counter), 40);
    sc_threadpool_free(fan.tp, SC_THREADPOOL_DRAIN);
    sc_taskgroup_fini(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_all),
        cmocka_unit_test(test_full_queue_and_drain),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_closed_and_invalid),
        cmocka_unit_test(test_concurrent_producers),
        cmocka_unit_test(test_submit_from_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
