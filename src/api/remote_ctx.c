/* Reader contexts of the remote query phase (remote.h): the shard snapshots a data node's top
 * hits refer to, kept from its query-phase answer until the coordinator's fetch or free, and
 * reaped after a keep-alive so a coordinator that died cannot pin segments forever. */
#include <stdlib.h>
#include <string.h>

#include "api/remote_internal.h"
#include "base/clock.h"

/* Matches Elasticsearch's default search context keep-alive. */
#define CTX_KEEP_ALIVE_NS (5ull * 60 * 1000000000ull)

static void ctx_free(sc__remote_ctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        sc_shard_searcher_release(c->snapshots[i]);
    free(c->snapshots);
    free(c->shard_ix);
    free(c);
}

/* Drops expired contexts (lock held). */
static void reap(sc_api_remote *r, uint64_t now)
{
    sc__remote_ctx **link = &r->contexts;
    while (*link) {
        sc__remote_ctx *c = *link;
        if (now - c->created_ns > CTX_KEEP_ALIVE_NS) {
            *link = c->next;
            ctx_free(c);
            continue;
        }
        link = &c->next;
    }
}

uint64_t sc__remote_ctx_put(sc_api_remote *r, sc__remote_ctx *c)
{
    uint64_t now = sc_clock_now_ns();
    pthread_mutex_lock(&r->mu);
    reap(r, now);
    c->id = ++r->next_id;
    c->created_ns = now;
    c->next = r->contexts;
    r->contexts = c;
    pthread_mutex_unlock(&r->mu);
    return c->id;
}

sc__remote_ctx *sc__remote_ctx_take(sc_api_remote *r, uint64_t id)
{
    pthread_mutex_lock(&r->mu);
    sc__remote_ctx *found = NULL;
    for (sc__remote_ctx **link = &r->contexts; *link; link = &(*link)->next)
        if ((*link)->id == id) {
            found = *link;
            *link = found->next;
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return found;
}

sc__remote_ctx *sc__remote_ctx_new(size_t n_targets)
{
    sc__remote_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->shard_ix = calloc(n_targets ? n_targets : 1, sizeof *c->shard_ix);
        c->snapshots = calloc(n_targets ? n_targets : 1, sizeof *c->snapshots);
    }
    if (!c || !c->shard_ix || !c->snapshots) {
        sc__remote_ctx_free(c);
        return NULL;
    }
    return c;
}

void sc__remote_ctx_free(sc__remote_ctx *c)
{
    if (c)
        ctx_free(c);
}

void sc__remote_ctx_free_all(sc_api_remote *r)
{
    pthread_mutex_lock(&r->mu);
    while (r->contexts) {
        sc__remote_ctx *c = r->contexts;
        r->contexts = c->next;
        ctx_free(c);
    }
    pthread_mutex_unlock(&r->mu);
}
