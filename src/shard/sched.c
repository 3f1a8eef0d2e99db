/* The shard scheduler (sched.h): a timer thread that scans the attached shards every tick and
 * queues the due ones on a maintenance pool (refresh, async sync, flush) or a merge pool.
 *
 * Per shard the scheduler keeps a small record inside the shard (sc__sched_slot, internal.h):
 * when it last scheduled a refresh and a sync, and whether a job of each kind is queued or
 * running. Every field of it is read and written under the scheduler's mutex. The scan is a
 * loop over an array under that mutex: at 20,000 shards it costs well under a millisecond per
 * 100 ms tick, and an idle shard costs no thread and no wake-up of its own. */
#include "shard/sched.h"

#include <stdlib.h>
#include <time.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/threadpool.h"
#include "base/vec.h"
#include "shard/internal.h"

#define TICK_NS (100 * 1000000ULL) /* timer resolution, as the per-shard threads had */
#define QUEUE_CAP 4096             /* jobs waiting per pool; a full queue retries next tick */

struct sc_shard_sched {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* timer: wake early (a shard's buffer is full; stopping) */
    pthread_cond_t idle_cv; /* detach: a shard's job finished */
    SC_VEC(sc_shard *) shards;
    bool stopping;
    bool kick; /* a wake-up is pending */
    pthread_t timer;
    bool timer_started;
    sc_threadpool *pool;
    sc_threadpool *merge_pool;
    size_t n_threads;
    uint64_t inactive_ns; /* a shard without writes this long goes idle (0: never) */
    size_t n_idle_jobs;   /* idle releases queued or running */
    size_t max_idle_jobs; /* at most this many at once: refreshes never queue behind a wave */
    size_t n_idle_due;    /* shards due for a release at the last scan */
    bool released;        /* a release ended since the heap was last trimmed */
};

static void run_merge(void *arg, sc_status pool_st)
{
    sc_shard *s = arg;
    if (pool_st == SC_OK)
        sc__shard_ignore(sc_shard_maybe_merge(s));
    sc_shard_sched *sc = s->sched;
    pthread_mutex_lock(&sc->mu);
    s->sched_slot.merge_queued = false;
    pthread_cond_broadcast(&sc->idle_cv);
    pthread_mutex_unlock(&sc->mu);
}

/* Queues a merge of s unless one is queued or running (mu held). */
static void queue_merge(sc_shard_sched *sc, sc_shard *s)
{
    sc__sched_slot *sl = &s->sched_slot;
    if (sl->detaching || sc->stopping)
        return;
    if (sl->merge_queued) {
        /* The running merge planned without the segments refreshed since: look again once it
         * is done (the timer re-queues it). */
        sl->want_merge = true;
        return;
    }
    sl->merge_queued = true;
    if (sc_threadpool_submit(sc->merge_pool, run_merge, s, NULL) != SC_OK) {
        sl->merge_queued = false;
        sl->want_merge = true; /* retried at the next tick */
    }
}

static void run_maintenance(void *arg, sc_status pool_st)
{
    sc_shard *s = arg;
    sc__sched_slot *sl = &s->sched_slot;
    /* do_sync / do_refresh / do_idle were set before the submit (the pool's queue orders
     * them). */
    bool refreshed = pool_st == SC_OK && sc__shard_maintain(s, sl->do_sync, sl->do_refresh);
    sc_status idle_st = SC_OK;
    if (sl->do_idle)
        idle_st = pool_st == SC_OK ? sc_shard_release_idle(s) : pool_st;
    sc_shard_sched *sc = s->sched;
    pthread_mutex_lock(&sc->mu);
    sl->queued = false;
    if (sl->do_idle) {
        if (idle_st == SC_OK) {
            sl->idle = true;
            /* the release's own commit is not activity; a write since it is */
            sl->seen_changes = s->idle_changes;
        } else {
            sl->last_active_ns = sc_clock_now_ns(); /* try again after another period */
        }
        sc->n_idle_jobs--;
        sc->released = true;
        if (sc->n_idle_due > 1) { /* more to release: scan now, not at the next tick */
            sc->kick = true;
            pthread_cond_signal(&sc->cv);
        }
    }
    if (refreshed && !s->cfg.no_background_merges)
        queue_merge(sc, s);
    pthread_cond_broadcast(&sc->idle_cv);
    pthread_mutex_unlock(&sc->mu);
}

/* Decides whether s has work due at `now` and queues it (mu held). */
static void consider(sc_shard_sched *sc, sc_shard *s, uint64_t now)
{
    sc__sched_slot *sl = &s->sched_slot;
    if (sl->detaching)
        return;
    if (sl->want_merge && !sl->merge_queued) {
        sl->want_merge = false;
        queue_merge(sc, s);
    }
    uint64_t changes = atomic_load_explicit(&s->n_changes, memory_order_relaxed);
    if (changes != sl->seen_changes) {
        sl->seen_changes = changes;
        sl->last_active_ns = now;
        sl->idle = false;
    }
    const sc_shard_config *c = &s->cfg;
    bool idle_due = sc->inactive_ns && !sl->idle && !sl->merge_queued &&
                    now - sl->last_active_ns >= sc->inactive_ns;
    sc->n_idle_due += idle_due;
    if (sl->queued)
        return;
    bool go_idle = idle_due && sc->n_idle_jobs < sc->max_idle_jobs;
    bool refresh =
        sl->urgent || (c->refresh_interval_ms > 0 &&
                       now - sl->last_refresh_ns >= (uint64_t)c->refresh_interval_ms * 1000000ULL &&
                       atomic_load_explicit(&s->bg_dirty, memory_order_relaxed));
    bool sync =
        c->durability_async && now - sl->last_sync_ns >= (uint64_t)c->sync_interval_ms * 1000000ULL;
    if (!refresh && !sync && !go_idle)
        return;
    sl->do_refresh = refresh;
    sl->do_sync = sync;
    sl->do_idle = go_idle;
    sl->queued = true;
    if (sc_threadpool_submit(sc->pool, run_maintenance, s, NULL) != SC_OK) {
        sl->queued = false; /* queue full: next tick */
        return;
    }
    if (go_idle)
        sc->n_idle_jobs++;
    sl->urgent = false;
    if (refresh)
        sl->last_refresh_ns = now;
    if (sync)
        sl->last_sync_ns = now;
}

static void *timer_main(void *arg)
{
    sc_shard_sched *sc = arg;
    pthread_mutex_lock(&sc->mu);
    while (!sc->stopping) {
        if (!sc->kick) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)TICK_NS;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&sc->cv, &sc->mu, &ts);
        }
        sc->kick = false;
        if (sc->stopping)
            break;
        uint64_t now = sc_clock_now_ns();
        sc->n_idle_due = 0;
        for (size_t i = 0; i < sc->shards.len; i++)
            consider(sc, sc->shards.ptr[i], now);
        if (sc->released && sc->n_idle_due == 0) {
            /* A wave of releases ended (often thousands of shards together after a bulk
             * load): the heap's free pages back to the system, once, so that what the
             * shards released leaves the resident set. */
            sc->released = false;
            pthread_mutex_unlock(&sc->mu);
            sc_alloc_release_free();
            pthread_mutex_lock(&sc->mu);
        }
    }
    pthread_mutex_unlock(&sc->mu);
    return NULL;
}

sc_status sc_shard_sched_new(size_t n_workers, size_t n_merge_workers, sc_shard_sched **out)
{
    *out = NULL;
    if (n_workers == 0 || n_merge_workers == 0)
        return SC_EINVAL;
    sc_shard_sched *sc = calloc(1, sizeof *sc);
    if (!sc)
        return SC_ENOMEM;
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
    pthread_cond_init(&sc->idle_cv, NULL);
    sc_status st = sc_threadpool_new(n_workers, QUEUE_CAP, "sc-refresh", &sc->pool);
    if (st == SC_OK)
        st = sc_threadpool_new(n_merge_workers, QUEUE_CAP, "sc-merge", &sc->merge_pool);
    if (st == SC_OK) {
        if (pthread_create(&sc->timer, NULL, timer_main, sc) != 0)
            st = SC_EIO;
        else
            sc->timer_started = true;
    }
    if (st != SC_OK) {
        sc_shard_sched_free(sc);
        return st;
    }
    sc->n_threads = 1 + n_workers + n_merge_workers;
    sc->inactive_ns = (uint64_t)SC_SHARD_INACTIVE_DEFAULT_MS * 1000000ULL;
    /* one release (a commit: a few fsyncs) at a time per two workers, so that the others
     * keep refreshing the shards that are being written */
    sc->max_idle_jobs = n_workers > 1 ? n_workers / 2 : 1;
    *out = sc;
    return SC_OK;
}

void sc_shard_sched_free(sc_shard_sched *sc)
{
    if (!sc)
        return;
    pthread_mutex_lock(&sc->mu);
    sc->stopping = true;
    pthread_cond_signal(&sc->cv);
    pthread_mutex_unlock(&sc->mu);
    if (sc->timer_started)
        pthread_join(sc->timer, NULL);
    sc_threadpool_free(sc->pool, SC_THREADPOOL_DRAIN);
    sc_threadpool_free(sc->merge_pool, SC_THREADPOOL_DRAIN);
    sc_vec_free(&sc->shards);
    pthread_cond_destroy(&sc->idle_cv);
    pthread_cond_destroy(&sc->cv);
    pthread_mutex_destroy(&sc->mu);
    free(sc);
}

size_t sc_shard_sched_n_threads(const sc_shard_sched *sc)
{
    return sc->n_threads;
}

void sc_shard_sched_set_inactive_ms(sc_shard_sched *sc, uint64_t ms)
{
    pthread_mutex_lock(&sc->mu);
    sc->inactive_ns = ms * 1000000ULL;
    pthread_mutex_unlock(&sc->mu);
}

size_t sc_shard_sched_n_shards(sc_shard_sched *sc)
{
    pthread_mutex_lock(&sc->mu);
    size_t n = sc->shards.len;
    pthread_mutex_unlock(&sc->mu);
    return n;
}

sc_status sc__sched_attach(sc_shard_sched *sc, sc_shard *s)
{
    pthread_mutex_lock(&sc->mu);
    sc_status st = sc_vec_reserve(&sc->shards, 1);
    if (st == SC_OK) {
        uint64_t now = sc_clock_now_ns();
        s->sched = sc;
        s->sched_slot = (sc__sched_slot){
            .last_refresh_ns = now,
            .last_sync_ns = now,
            .last_active_ns = now,
            .seen_changes = atomic_load_explicit(&s->n_changes, memory_order_relaxed),
            .index = sc->shards.len};
        sc->shards.ptr[sc->shards.len++] = s;
    }
    pthread_mutex_unlock(&sc->mu);
    return st;
}

void sc__sched_detach(sc_shard *s)
{
    sc_shard_sched *sc = s->sched;
    if (!sc)
        return;
    pthread_mutex_lock(&sc->mu);
    sc__sched_slot *sl = &s->sched_slot;
    sl->detaching = true;
    while (sl->queued || sl->merge_queued)
        pthread_cond_wait(&sc->idle_cv, &sc->mu);
    size_t i = sl->index, last = sc->shards.len - 1;
    sc->shards.ptr[i] = sc->shards.ptr[last];
    sc->shards.ptr[i]->sched_slot.index = i;
    sc->shards.len = last;
    pthread_mutex_unlock(&sc->mu);
    s->sched = NULL;
}

void sc__sched_wake(sc_shard *s)
{
    sc_shard_sched *sc = s->sched;
    if (!sc)
        return;
    pthread_mutex_lock(&sc->mu);
    s->sched_slot.urgent = true;
    sc->kick = true;
    pthread_cond_signal(&sc->cv);
    pthread_mutex_unlock(&sc->mu);
}
