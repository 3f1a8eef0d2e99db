/* The placement thread and its snapshots (placement.h): follows the membership view, creates
 * and deletes local indices to match the cluster metadata, merges mappings, and publishes the
 * routing table with the nodes' transport addresses for lock-free-ish lookups (one mutex to
 * swap the snapshot pointer, a refcount per snapshot). */
#include "cluster/placement.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/cluster_settings.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/replication.h"
#include "mapping/mapping.h"

typedef struct node_addr {
    char id[SC_ALLOC_NODE_MAX];
    char host[128];
    uint16_t port;
} node_addr;

struct sc_placement_snapshot {
    atomic_int refs;
    char local_id[SC_ALLOC_NODE_MAX];
    sc_routing_table routing;
    node_addr *nodes;
    size_t n_nodes;
    int64_t revision;
    bool batched; /* cluster setting search.batched_query_phase (default true) */
};

struct sc_placement {
    sc_node *node;
    sc_membership *m;
    sc_transport *t;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* a change to look at, or stop */
    pthread_cond_t cv_snap; /* a snapshot was published */
    bool dirty, stop;
    sc_placement_snapshot *snap;
    json_t *seen;       /* names of indices seen in the metadata: {name: true} */
    int64_t copies_rev; /* routing revision the local copies follow (0: retry next pass) */
    sc_repl *repl;      /* replication handlers and the recovery thread */
};

void sc_placement_release(sc_placement_snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    sc_routing_table_fini(&s->routing);
    free(s->nodes);
    free(s);
}

sc_placement_snapshot *sc_placement_acquire(sc_placement *p)
{
    pthread_mutex_lock(&p->mu);
    sc_placement_snapshot *s = p->snap;
    atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&p->mu);
    return s;
}

int64_t sc_placement_revision(const sc_placement_snapshot *s)
{
    return s->revision;
}

bool sc_placement_batched(const sc_placement_snapshot *s)
{
    return s->batched;
}

/* search.batched_query_phase from the cluster settings (transient over persistent). */
static bool read_batched(sc_node *n)
{
    json_t *pers = NULL, *trans = NULL;
    bool batched = true;
    if (sc_cluster_settings_get(n, &pers, &trans) == SC_OK) {
        const json_t *v = json_object_get(trans, "search.batched_query_phase");
        if (!v || json_is_null(v))
            v = json_object_get(pers, "search.batched_query_phase");
        const char *s = json_string_value(v);
        if (s && strcmp(s, "false") == 0)
            batched = false;
        if (json_is_false(v))
            batched = false;
    }
    json_decref(pers);
    json_decref(trans);
    return batched;
}

sc_transport *sc_placement_transport(sc_placement *p)
{
    return p->t;
}

const sc_shard_routing *sc_placement_shard(const sc_placement_snapshot *s, const char *index,
                                           uint32_t shard)
{
    const sc_index_routing *r = sc_routing_table_find(&s->routing, index);
    return r && shard < r->number_of_shards ? &r->shards[shard] : NULL;
}

const sc_routing_table *sc_placement_routing(const sc_placement_snapshot *s)
{
    return &s->routing;
}

const char *sc_placement_local_id(const sc_placement_snapshot *s)
{
    return s->local_id;
}

bool sc_placement_addr(const sc_placement_snapshot *s, const char *node_id, char *host, size_t cap,
                       uint16_t *port)
{
    for (size_t i = 0; i < s->n_nodes; i++)
        if (!strcmp(s->nodes[i].id, node_id) && s->nodes[i].port) {
            snprintf(host, cap, "%s", s->nodes[i].host);
            *port = s->nodes[i].port;
            return true;
        }
    return false;
}

sc_membership *sc_placement_membership(sc_placement *p)
{
    return p->m;
}

sc_node *sc_placement_node(sc_placement *p)
{
    return p->node;
}

sc_repl *sc_placement_repl(sc_placement *p)
{
    return p->repl;
}

void sc_placement_halt_recovery(sc_placement *p)
{
    if (p)
        sc__repl_halt(p->repl);
}

void sc_placement_primary(const sc_placement_snapshot *s, const char *index, uint32_t shard,
                          sc_shard_location *out)
{
    memset(out, 0, sizeof *out);
    const sc_index_routing *r = sc_routing_table_find(&s->routing, index);
    if (!r || shard >= r->number_of_shards)
        return;
    out->known = true;
    const sc_shard_routing *sh = &r->shards[shard];
    for (size_t c = 0; c < sh->n_copies; c++) {
        if (!sh->copies[c].primary)
            continue;
        snprintf(out->node_id, sizeof out->node_id, "%s", sh->copies[c].node);
        if (strcmp(sh->copies[c].node, s->local_id) == 0) {
            out->assigned = out->local = true;
            return;
        }
        for (size_t i = 0; i < s->n_nodes; i++)
            if (strcmp(s->nodes[i].id, sh->copies[c].node) == 0 && s->nodes[i].port) {
                snprintf(out->host, sizeof out->host, "%s", s->nodes[i].host);
                out->port = s->nodes[i].port;
                out->assigned = true;
            }
        return;
    }
}

/* "host:port" (the last colon splits, so "[::1]:9300" keeps its brackets off). */
static void parse_addr(const char *s, node_addr *a)
{
    const char *c = strrchr(s, ':');
    if (!c)
        return;
    long port = strtol(c + 1, NULL, 10);
    if (port <= 0 || port > 65535)
        return;
    const char *h = s;
    size_t hl = (size_t)(c - s);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof a->host)
        return;
    memcpy(a->host, h, hl);
    a->host[hl] = '\0';
    a->port = (uint16_t)port;
}

static sc_placement_snapshot *snapshot_from(const sc_cluster_view *v)
{
    sc_placement_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    snprintf(s->local_id, sizeof s->local_id, "%s", v->local_id);
    s->revision = v->revision;
    s->nodes = calloc(v->n_nodes ? v->n_nodes : 1, sizeof *s->nodes);
    s->routing.indices =
        calloc(v->routing.n_indices ? v->routing.n_indices : 1, sizeof *s->routing.indices);
    if (!s->nodes || !s->routing.indices) {
        sc_placement_release(s);
        return NULL;
    }
    for (size_t i = 0; i < v->n_nodes; i++) {
        snprintf(s->nodes[i].id, sizeof s->nodes[i].id, "%s", v->nodes[i].id);
        parse_addr(v->nodes[i].transport, &s->nodes[i]);
    }
    s->n_nodes = v->n_nodes;
    for (size_t i = 0; i < v->routing.n_indices; i++) {
        if (sc_index_routing_copy(&v->routing.indices[i], &s->routing.indices[i]) != SC_OK) {
            sc_placement_release(s);
            return NULL;
        }
        s->routing.n_indices++;
    }
    return s;
}

/* Merges the metadata's mapping into the local index's (fields other nodes added by dynamic
 * mapping or PUT _mapping). Not published back: it came from the cluster. */
static void merge_mapping(sc_index *ix, const json_t *meta)
{
    const json_t *mj = json_object_get(meta, "mappings");
    if (!json_is_object(mj) || json_object_size(mj) == 0)
        return;
    sc_mapping *base = sc_index_mapping(ix);
    sc_mapping *merged = NULL;
    sc_mapping_error err;
    if (sc_mapping_merge(base, mj, &merged, &err) == SC_OK) {
        (void)sc_index_install_mapping(ix, base, merged);
        sc_mapping_unref(merged);
    } else {
        sc_log(SC_LOG_DEBUG, "cluster", "mapping of [%s] from the cluster not merged", ix->name);
    }
    sc_mapping_unref(base);
}

/* Takes the aliases and the settings of the metadata (changed through another node, or a data
 * stream rolled over there) into the local index, unless this node's own change of the index is
 * still on its way to etcd: the view then holds the older value (a view from before a local
 * PUT _settings set number_of_replicas back, and the next publication wrote it). The metadata
 * write lock covers a local change from its swap to its queuing (alias.c, index_settings.c).
 * Not published back. */
static void take_meta(sc_placement *p, sc_index *ix, const json_t *meta, int64_t view_rev)
{
    const json_t *a = json_object_get(meta, "aliases");
    json_t *want = json_is_object(a) ? json_deep_copy(a) : json_object();
    pthread_mutex_t *mu = sc__node_mu(p->node);
    pthread_mutex_lock(sc__node_alias_write_mu(p->node));
    bool same = true;
    if (!sc_membership_publishing(p->m, ix->name, view_rev)) {
        pthread_mutex_lock(mu);
        same = json_equal(ix->aliases, want);
        if (!same) {
            json_t *old = ix->aliases;
            ix->aliases = want;
            want = old;
        }
        pthread_mutex_unlock(mu);
        sc__index_take_settings(ix, json_object_get(meta, "settings"));
    }
    pthread_mutex_unlock(sc__node_alias_write_mu(p->node));
    json_decref(want);
    if (!same && sc__index_write_meta_local(ix) != SC_OK)
        sc_log(SC_LOG_WARN, "cluster", "could not persist the aliases of [%s]", ix->name);
}

/* Makes the local indices follow the metadata. */
static void sync_indices(sc_placement *p, const sc_cluster_view *v)
{
    const char *name;
    json_t *meta;
    json_object_foreach (v->indices, name, meta) {
        json_object_set_new(p->seen, name, json_true());
        sc_index *ix = sc_node_index(p->node, name);
        if (ix) {
            merge_mapping(ix, meta);
            take_meta(p, ix, meta, v->revision);
            sc_index_unref(ix);
            continue;
        }
        sc_status st = sc__node_adopt_index(p->node, meta);
        if (st != SC_OK && st != SC_EEXIST)
            sc_log(SC_LOG_WARN, "cluster", "cannot create index [%s] from the cluster: %s", name,
                   sc_status_str(st));
    }
    void *tmp;
    json_object_foreach_safe(p->seen, tmp, name, meta)
    {
        if (json_object_get(v->indices, name))
            continue;
        sc_cluster_error err;
        if (sc_node_delete_index(p->node, name, &err) == SC_OK)
            sc_log(SC_LOG_INFO, "cluster", "deleted index [%s]: gone from the cluster", name);
        json_object_del(p->seen, name);
    }
}

static bool node_live(void *ctx, const char *id)
{
    const sc_placement_snapshot *s = ctx;
    if (!strcmp(id, s->local_id))
        return true;
    for (size_t i = 0; i < s->n_nodes; i++)
        if (!strcmp(s->nodes[i].id, id))
            return true;
    return false;
}

/* Opens and retires local copies to follow s's routing (copies.c), before s is published: a
 * node that the snapshot names as holding a copy has it open. Only when the routing changed,
 * or when the last pass left something to retry. */
static void sync_copies(sc_placement *p, sc_placement_snapshot *s)
{
    if (!sc_node_config_get(p->node)->allocated_copies_only || s->revision == p->copies_rev)
        return;
    bool settled = true;
    for (size_t i = 0; i < s->routing.n_indices; i++) {
        const sc_index_routing *r = &s->routing.indices[i];
        sc_index *ix = sc_node_index(p->node, r->index);
        if (!ix)
            continue;
        settled &= sc__index_reconcile_copies(p->node, ix, r, s->local_id, node_live, s);
        sc_index_unref(ix);
    }
    p->copies_rev = settled ? s->revision : 0;
}

static void sync_once(sc_placement *p)
{
    sc_cluster_view v;
    if (sc_membership_view(p->m, &v) != SC_OK)
        return;
    if (v.synced) {
        sync_indices(p, &v);
        sc_placement_snapshot *s = snapshot_from(&v);
        if (s) {
            s->batched = read_batched(p->node);
            sync_copies(p, s);
            pthread_mutex_lock(&p->mu);
            sc_placement_snapshot *old = p->snap;
            p->snap = s;
            pthread_cond_broadcast(&p->cv_snap);
            pthread_mutex_unlock(&p->mu);
            sc_placement_release(old);
            sc__repl_kick(p->repl);
        }
    }
    sc_cluster_view_fini(&v);
}

static void *placement_main(void *arg)
{
    sc_placement *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        if (!p->dirty) {
            /* also every second: a missed change cannot leave us stale for long */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        }
        if (p->stop)
            break;
        p->dirty = false;
        pthread_mutex_unlock(&p->mu);
        sync_once(p);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void on_change(void *ctx)
{
    sc_placement *p = ctx;
    pthread_mutex_lock(&p->mu);
    p->dirty = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

sc_status sc_placement_start(sc_node *n, sc_membership *m, sc_transport *t, sc_placement **out)
{
    sc_placement *p = calloc(1, sizeof *p);
    if (!p)
        return SC_ENOMEM;
    p->node = n;
    p->m = m;
    p->t = t;
    p->seen = json_object();
    p->snap = calloc(1, sizeof *p->snap);
    if (!p->seen || !p->snap) {
        json_decref(p->seen);
        free(p->snap);
        free(p);
        return SC_ENOMEM;
    }
    atomic_init(&p->snap->refs, 1);
    p->snap->batched = true;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_cond_init(&p->cv_snap, &ca);
    pthread_condattr_destroy(&ca);
    p->dirty = true;
    sc_status st = sc__repl_start(p, &p->repl);
    if (st == SC_OK)
        st = sc_membership_on_change(m, on_change, p);
    if (st == SC_OK && pthread_create(&p->th, NULL, placement_main, p) != 0)
        st = SC_EIO;
    if (st != SC_OK) {
        /* a registered listener cannot be removed: keep p alive (leaked) rather than dangle */
        sc_log(SC_LOG_ERROR, "cluster", "cannot start the placement: %s", sc_status_str(st));
        return st;
    }
    sc_node_set_placement(n, p);
    *out = p;
    return SC_OK;
}

sc_status sc_placement_wait(sc_placement *p, int64_t rev, int64_t timeout_ms)
{
    uint64_t deadline = sc_clock_now_ns() + (uint64_t)timeout_ms * 1000000u;
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000u),
                          .tv_nsec = (long)(deadline % 1000000000u)};
    pthread_mutex_lock(&p->mu);
    p->dirty = true;
    pthread_cond_signal(&p->cv);
    sc_status st = SC_OK;
    while (p->snap->revision < rev && st == SC_OK)
        if (pthread_cond_timedwait(&p->cv_snap, &p->mu, &ts) != 0)
            st = SC_ETIMEOUT;
    pthread_mutex_unlock(&p->mu);
    return st;
}

void sc_placement_stop(sc_placement *p)
{
    if (!p)
        return;
    sc_node_set_placement(p->node, NULL);
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    sc__repl_stop(p->repl);
    sc_placement_release(p->snap);
    json_decref(p->seen);
    pthread_cond_destroy(&p->cv);
    pthread_cond_destroy(&p->cv_snap);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Fills out from copy c when it is live (local or with a transport address). */
static bool live_copy(const sc_placement_snapshot *s, const sc_shard_copy *c,
                      sc_shard_location *out)
{
    memset(out, 0, sizeof *out);
    out->known = true;
    snprintf(out->node_id, sizeof out->node_id, "%s", c->node);
    if (strcmp(c->node, s->local_id) == 0)
        return out->assigned = out->local = true;
    for (size_t i = 0; i < s->n_nodes; i++)
        if (strcmp(s->nodes[i].id, c->node) == 0 && s->nodes[i].port) {
            snprintf(out->host, sizeof out->host, "%s", s->nodes[i].host);
            out->port = s->nodes[i].port;
            return out->assigned = true;
        }
    return false;
}

static bool copy_in_sync(const sc_shard_routing *sh, const sc_shard_copy *c)
{
    for (size_t i = 0; i < sh->n_in_sync; i++)
        if (strcmp(sh->in_sync[i].alloc_id, c->alloc_id) == 0)
            return true;
    return false;
}

bool sc_placement_copy(const sc_placement_snapshot *s, const char *index, uint32_t shard, size_t i,
                       sc_shard_location *out)
{
    memset(out, 0, sizeof *out);
    const sc_index_routing *r = sc_routing_table_find(&s->routing, index);
    if (!r || shard >= r->number_of_shards)
        return false;
    const sc_shard_routing *sh = &r->shards[shard];
    for (int pass = 0; pass < 2; pass++) /* the primary first, then the replicas */
        for (size_t c = 0; c < sh->n_copies; c++) {
            const sc_shard_copy *cp = &sh->copies[c];
            if (cp->primary != (pass == 0) || !copy_in_sync(sh, cp) || !live_copy(s, cp, out))
                continue;
            if (i-- == 0)
                return true;
        }
    memset(out, 0, sizeof *out);
    return false;
}
