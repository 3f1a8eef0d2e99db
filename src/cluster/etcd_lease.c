/* The lease keeper: a thread that refreshes one etcd lease every TTL/3 (as etcd's Go client
 * does), retries every 500 ms on error, and reports EXPIRED when no refresh succeeded for a whole
 * TTL, ALIVE when one succeeds again, GONE (and ends) when etcd says the lease does not exist. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/etcd_internal.h"
#include "cluster/log.h"

struct sc_etcd_keeper {
    sc_etcd *conn; /* own connection */
    int64_t id, ttl_s;
    sc_etcd_lease_fn fn;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    _Atomic bool alive;
};

/* Waits up to ms or until stop; returns true when stopping. */
static bool nap(sc_etcd_keeper *k, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&k->mu);
    while (!k->stop && pthread_cond_timedwait(&k->cv, &k->mu, &ts) == 0)
        ;
    bool stop = k->stop;
    pthread_mutex_unlock(&k->mu);
    return stop;
}

static void report(sc_etcd_keeper *k, sc_etcd_lease_state state)
{
    atomic_store(&k->alive, state == SC_ETCD_LEASE_ALIVE);
    if (k->fn)
        k->fn(k->ctx, k->id, state);
}

static void *keeper_main(void *arg)
{
    sc_etcd_keeper *k = arg;
    int64_t period_ms = k->ttl_s * 1000 / 3;
    if (period_ms < 300)
        period_ms = 300;
    /* The lease lasts at least TTL after the send time of the last successful refresh. */
    uint64_t deadline_ns = sc_clock_now_ns() + (uint64_t)k->ttl_s * 1000000000u;
    int64_t wait_ms = period_ms;
    bool expired = false;
    while (!nap(k, wait_ms)) {
        uint64_t sent = sc_clock_now_ns();
        int64_t ttl = 0;
        sc_etcd_error err;
        sc_status st = sc_etcd_lease_keepalive_once(k->conn, k->id, &ttl, &err);
        if (st == SC_OK) {
            deadline_ns = sent + (uint64_t)ttl * 1000000000u;
            wait_ms = period_ms;
            if (expired) {
                expired = false;
                sc_log(SC_LOG_INFO, "etcd", "lease %llx refreshed again",
                       (unsigned long long)k->id);
                report(k, SC_ETCD_LEASE_ALIVE);
            }
            continue;
        }
        sc_log(SC_LOG_DEBUG, "etcd", "lease %llx keepalive failed: %s (%s)",
               (unsigned long long)k->id, sc_status_str(st), err.message);
        if (st == SC_ENOTFOUND) {
            sc_log(SC_LOG_WARN, "etcd", "lease %llx is gone", (unsigned long long)k->id);
            report(k, SC_ETCD_LEASE_GONE);
            break;
        }
        if (!expired && sc_clock_now_ns() >= deadline_ns) {
            expired = true;
            sc_log(SC_LOG_WARN, "etcd", "lease %llx not refreshed for its TTL (%s)",
                   (unsigned long long)k->id, err.message);
            report(k, SC_ETCD_LEASE_EXPIRED);
        }
        wait_ms = 500;
    }
    return NULL;
}

sc_status sc_etcd_keeper_start(const sc_etcd *e, int64_t id, int64_t ttl_s, sc_etcd_lease_fn fn,
                               void *ctx, sc_etcd_keeper **out)
{
    *out = NULL;
    sc_etcd_keeper *k = calloc(1, sizeof *k);
    if (!k)
        return SC_ENOMEM;
    sc_status st = sc_etcd_clone(e, &k->conn);
    if (st != SC_OK) {
        free(k);
        return st;
    }
    /* A refresh must not block past its retry period, nor stop() for long. */
    if (sc__etcd_timeout_ms(k->conn) > 1000)
        sc__etcd_set_timeout_ms(k->conn, 1000);
    k->id = id;
    k->ttl_s = ttl_s > 0 ? ttl_s : 1;
    k->fn = fn;
    k->ctx = ctx;
    atomic_store(&k->alive, true);
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&k->thread, NULL, keeper_main, k) != 0) {
        sc_etcd_free(k->conn);
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return SC_ENOMEM;
    }
    *out = k;
    return SC_OK;
}

bool sc_etcd_keeper_alive(const sc_etcd_keeper *k)
{
    return k && atomic_load(&((sc_etcd_keeper *)k)->alive);
}

void sc_etcd_keeper_stop(sc_etcd_keeper *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    sc_etcd_free(k->conn);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
