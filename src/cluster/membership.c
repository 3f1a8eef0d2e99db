/* Cluster membership on etcd (see membership.h): start/stop, the cluster thread, the node's
 * session (lease + registration key + keeper), the master election, and publishing this
 * node's index metadata. The watched view is in membership_view.c, the master's allocation in
 * membership_master.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/membership_internal.h"
#include "mapping/mapping.h"

/* How often the node refreshes its registration value (OS numbers for _cat/nodes): one write
 * per node per 30 s keeps etcd's write rate independent of traffic. */
#define REFRESH_MS 30000
/* The cluster thread's idle tick. A watch event or a lost lease wakes it earlier. */
#define TICK_MS 250
/* A non-master re-checks the master key at least this often even without a watch event. */
#define CAMPAIGN_MS 2000

void sc__ms_key(const sc_membership *m, char *out, size_t cap, const char *kind, const char *name)
{
    snprintf(out, cap, "%s%s%s%s", m->prefix, kind, name ? "/" : "", name ? name : "");
}

static void signal_locked(sc_membership *m)
{
    m->wake = true;
    pthread_cond_signal(&m->cv);
}

/* The keeper's reports: EXPIRED stops acting as master at once (etcd may have dropped the
 * lease) but keeps the session, as etcd extends leases across its leader elections and
 * restarts; ALIVE resumes (a campaign finds the master key still ours); GONE re-registers. */
static void on_lease(void *ctx, int64_t lease, sc_etcd_lease_state state)
{
    sc_membership *m = ctx;
    if (state == SC_ETCD_LEASE_ALIVE) {
        sc_log(SC_LOG_INFO, "cluster", "lease %llx alive again", (unsigned long long)lease);
        atomic_store(&m->suspect, false);
    } else {
        bool was_master = atomic_exchange(&m->is_master, false);
        sc_log(SC_LOG_WARN, "cluster", "lease %llx %s%s", (unsigned long long)lease,
               state == SC_ETCD_LEASE_GONE ? "gone: registering again" : "not refreshed in time",
               was_master ? "; left the master role" : "");
        if (state == SC_ETCD_LEASE_GONE)
            atomic_store(&m->lost, true);
        else
            atomic_store(&m->suspect, true);
    }
    pthread_mutex_lock(&m->mu);
    signal_locked(m);
    pthread_mutex_unlock(&m->mu);
}

/* The node's metadata hook: queue the write for the cluster thread. */
static void on_meta(void *ctx, const char *index, const char *meta_json)
{
    sc_membership *m = ctx;
    pthread_mutex_lock(&m->mu);
    json_t *v = json_null();
    if (meta_json) {
        v = json_object();
        json_t *mj =
            strstr(meta_json, SC_META_KEEP_CLUSTER_ALIASES) ? json_loads(meta_json, 0, NULL) : NULL;
        if (json_is_true(json_object_get(mj, SC_META_KEEP_CLUSTER_ALIASES))) {
            /* a mapping change: etcd's settings and aliases stay (put_merged) */
            json_object_del(mj, SC_META_KEEP_CLUSTER_ALIASES);
            char *text = json_dumps(mj, JSON_COMPACT);
            json_object_set_new(v, "meta", json_string(text ? text : meta_json));
            json_object_set_new(v, "keep_aliases", json_true());
            free(text);
        } else {
            json_object_set_new(v, "meta", json_string(meta_json));
        }
        json_decref(mj);
    }
    json_object_set_new(m->pending, index, v);
    signal_locked(m);
    pthread_mutex_unlock(&m->mu);
}

/* Grants a lease, registers the node under it and starts the keeper. */
static sc_status session_open(sc_membership *m)
{
    sc_etcd_error err;
    int64_t lease, ttl;
    sc_status st = sc_etcd_lease_grant(m->etcd, m->ttl_s, &lease, &ttl, &err);
    if (st != SC_OK) {
        sc_log(SC_LOG_DEBUG, "cluster", "lease grant failed: %s (%s)", sc_status_str(st),
               err.message);
        return st;
    }
    char key[512];
    sc__ms_key(m, key, sizeof key, "nodes", sc_node_id(m->node));
    char *val = sc__ms_node_value(m);
    st = val ? sc_etcd_put(m->etcd, key, val, strlen(val), lease, NULL, &err) : SC_ENOMEM;
    free(val);
    sc_etcd_keeper *k = NULL;
    if (st == SC_OK)
        st = sc_etcd_keeper_start(m->etcd, lease, ttl, on_lease, m, &k);
    if (st != SC_OK) {
        sc_log(SC_LOG_DEBUG, "cluster", "registration failed: %s (%s)", sc_status_str(st),
               err.message);
        if (sc_etcd_lease_revoke(m->etcd, lease, NULL) != SC_OK)
            sc_log(SC_LOG_DEBUG, "cluster", "lease %llx left to expire", (unsigned long long)lease);
        return st;
    }
    atomic_store(&m->lost, false);
    atomic_store(&m->suspect, false);
    pthread_mutex_lock(&m->mu);
    m->lease = lease;
    m->keeper = k;
    pthread_mutex_unlock(&m->mu);
    sc_log(SC_LOG_INFO, "cluster", "registered node [%s] (%s) with lease %llx (ttl %llds) on %s",
           sc_node_name(m->node), sc_node_id(m->node), (unsigned long long)lease, (long long)ttl,
           sc_etcd_endpoint(m->etcd));
    return SC_OK;
}

static void session_close(sc_membership *m)
{
    pthread_mutex_lock(&m->mu);
    sc_etcd_keeper *k = m->keeper;
    m->keeper = NULL;
    m->lease = 0;
    pthread_mutex_unlock(&m->mu);
    atomic_store(&m->is_master, false);
    sc_etcd_keeper_stop(k);
}

/* One attempt at the master key: create it bound to our lease if absent. */
static void campaign(sc_membership *m)
{
    char key[512];
    sc__ms_key(m, key, sizeof key, "master", NULL);
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(sc_node_id(m->node)));
    json_object_set_new(v, "name", json_string(sc_node_name(m->node)));
    char *val = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    if (!val)
        return;
    sc_etcd_cmp absent = {.key = key, .target = SC_ETCD_CREATE, .value = 0};
    sc_etcd_op put = {.kind = SC_ETCD_OP_PUT,
                      .key = key,
                      .value = val,
                      .value_len = strlen(val),
                      .lease = m->lease};
    sc_etcd_op get = {.kind = SC_ETCD_OP_GET, .key = key};
    sc_etcd_txn_result r;
    sc_etcd_error err;
    sc_status st = sc_etcd_txn(m->etcd, &absent, 1, &put, 1, &get, 1, &r, &err);
    free(val);
    if (st != SC_OK) {
        sc_log(SC_LOG_DEBUG, "cluster", "campaign failed: %s (%s)", sc_status_str(st), err.message);
        return;
    }
    int64_t term = 0;
    if (r.succeeded)
        term = r.revision;
    else if (r.range.len == 1 && r.range.kvs[0].lease == m->lease)
        term = r.range.kvs[0].create_revision; /* ours already (a retried campaign) */
    sc_etcd_txn_result_fini(&r);
    if (!term)
        return;
    pthread_mutex_lock(&m->mu);
    m->my_term = term;
    m->dirty = true;
    pthread_mutex_unlock(&m->mu);
    atomic_store(&m->is_master, true);
    sc_log(SC_LOG_INFO, "cluster", "elected master (term %lld)", (long long)term);
}

/* etcd's mapping of an index with this node's merged in (fields are only ever added; another
 * node may have added some this node has not taken yet). NULL when either does not parse or
 * they conflict: the caller writes this node's. */
static json_t *merged_mappings(const json_t *cur, const json_t *mine)
{
    sc_mapping *base = NULL, *merged = NULL;
    sc_mapping_error err;
    json_t *out = NULL;
    if (json_is_object(cur) && json_is_object(mine) && sc_mapping_new(cur, &base, &err) == SC_OK &&
        sc_mapping_merge(base, mine, &merged, &err) == SC_OK)
        out = sc_mapping_to_json(merged);
    sc_mapping_unref(merged);
    sc_mapping_unref(base);
    return out;
}

/* Puts an index's metadata over etcd's copy (compare-and-swap on the key's mod_revision,
 * retried): the mappings are merged, so that a write from a node that has not taken another
 * node's new fields yet does not drop them. A mapping change (keep_cluster) writes only that:
 * the settings and aliases etcd holds stay, as another node may have just changed them (a
 * settings update right after a bulk that added a field must not be undone by the field's
 * publication). Any other change writes this node's settings and aliases. A copy of another
 * index of the same name (another uuid) is replaced. */
static sc_status put_merged(sc_membership *m, const char *key, const char *meta, bool keep_cluster,
                            int64_t *rev, sc_etcd_error *err)
{
    json_t *mine = json_loads(meta, 0, NULL);
    if (!mine)
        return sc_etcd_put(m->etcd, key, meta, strlen(meta), 0, rev, err);
    sc_status st = SC_ECONFLICT;
    for (int i = 0; i < 10; i++) {
        sc_etcd_kvs kvs;
        st = sc_etcd_get(m->etcd, key, &kvs, err);
        if (st != SC_OK)
            break;
        int64_t mod = 0;
        json_t *cur = NULL;
        if (kvs.len == 1) {
            mod = kvs.kvs[0].mod_revision;
            cur = json_loadb(kvs.kvs[0].value, kvs.kvs[0].value_len, 0, NULL);
        }
        sc_etcd_kvs_fini(&kvs);
        const char *cu = json_string_value(json_object_get(cur, "uuid"));
        const char *mu = json_string_value(json_object_get(mine, "uuid"));
        bool same = json_is_object(cur) && cu && mu && strcmp(cu, mu) == 0;
        json_t *out;
        if (same && keep_cluster) {
            out = json_incref(cur);
        } else {
            out = json_deep_copy(mine);
            if (keep_cluster) /* the first copy in etcd: no aliases from a mapping change */
                json_object_del(out, "aliases");
        }
        json_t *mm = same ? merged_mappings(json_object_get(cur, "mappings"),
                                            json_object_get(mine, "mappings"))
                          : NULL;
        if (mm)
            json_object_set_new(out, "mappings", mm);
        else if (same && keep_cluster)
            json_object_set(out, "mappings", json_object_get(mine, "mappings"));
        json_decref(cur);
        char *text = json_dumps(out, JSON_COMPACT);
        json_decref(out);
        if (!text) {
            st = SC_ENOMEM;
            break;
        }
        sc_etcd_cmp cmp = {.key = key, .target = SC_ETCD_MOD, .value = mod};
        sc_etcd_op put = {
            .kind = SC_ETCD_OP_PUT, .key = key, .value = text, .value_len = strlen(text)};
        sc_etcd_txn_result r;
        st = sc_etcd_txn(m->etcd, &cmp, 1, &put, 1, NULL, 0, &r, err);
        free(text);
        if (st != SC_OK)
            break;
        bool ok = r.succeeded;
        *rev = r.revision;
        sc_etcd_txn_result_fini(&r);
        if (ok)
            break;
        st = SC_ECONFLICT;
    }
    json_decref(mine);
    return st;
}

/* Writes the queued index metadata; failed writes are queued again unless superseded. */
static void publish_pending(sc_membership *m)
{
    pthread_mutex_lock(&m->mu);
    json_t *todo = m->pending;
    m->pending = json_object();
    m->inflight = json_incref(todo);
    pthread_mutex_unlock(&m->mu);
    const char *name;
    json_t *v;
    json_object_foreach (todo, name, v) {
        char key[512];
        sc__ms_key(m, key, sizeof key, "indices", name);
        sc_etcd_error err;
        sc_status st;
        int64_t rev = 0;
        const char *meta = json_string_value(json_object_get(v, "meta"));
        if (!meta) {
            st = sc_etcd_delete(m->etcd, key, false, NULL, &err);
        } else if (json_is_true(json_object_get(v, "create_only"))) {
            sc_etcd_cmp absent = {.key = key, .target = SC_ETCD_CREATE, .value = 0};
            sc_etcd_op put = {
                .kind = SC_ETCD_OP_PUT, .key = key, .value = meta, .value_len = strlen(meta)};
            sc_etcd_txn_result r;
            st = sc_etcd_txn(m->etcd, &absent, 1, &put, 1, NULL, 0, &r, &err);
            if (st == SC_OK && r.succeeded)
                rev = r.revision;
            sc_etcd_txn_result_fini(&r);
        } else {
            st = put_merged(m, key, meta, json_is_true(json_object_get(v, "keep_aliases")), &rev,
                            &err);
        }
        if (st == SC_OK) {
            /* until a view of this revision is in use, the view's copy is older than ours: kept
             * even when the watch has brought it already (the placement thread may be working
             * from a view built before) */
            pthread_mutex_lock(&m->mu);
            json_t *w = json_object_get(m->written, name);
            if (!meta) /* deleted: no local index left to guard (and no mark kept forever) */
                json_object_del(m->written, name);
            else if (rev > 0 && (!w || json_integer_value(w) < rev))
                json_object_set_new(m->written, name, json_integer(rev));
            pthread_mutex_unlock(&m->mu);
            continue;
        }
        sc_log(SC_LOG_DEBUG, "cluster", "metadata of [%s] not written yet: %s (%s)", name,
               sc_status_str(st), err.message);
        pthread_mutex_lock(&m->mu);
        if (!json_object_get(m->pending, name))
            json_object_set(m->pending, name, v);
        pthread_mutex_unlock(&m->mu);
    }
    pthread_mutex_lock(&m->mu);
    json_decref(m->inflight);
    m->inflight = NULL;
    pthread_mutex_unlock(&m->mu);
    json_decref(todo);
}

bool sc_membership_publishing(sc_membership *m, const char *index, int64_t view_revision)
{
    pthread_mutex_lock(&m->mu);
    json_t *w = json_object_get(m->written, index);
    bool newer = w && json_integer_value(w) > view_revision;
    /* Views are built one after another by one thread: once one holds our write, so do the
     * later ones. (Dropping it when the watch had brought it let a view built before that take
     * the older aliases back over this node's change.) */
    if (w && !newer)
        json_object_del(m->written, index);
    bool b = newer || json_object_get(m->pending, index) || json_object_get(m->inflight, index);
    pthread_mutex_unlock(&m->mu);
    return b;
}

/* Queues this node's existing indices (create-if-absent: etcd's copy wins). */
static void queue_local_indices(sc_membership *m)
{
    sc_index **list;
    size_t n;
    if (sc__node_all(m->node, &list, &n) != SC_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        json_t *meta = sc__index_meta_json(list[i]);
        char *text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
        json_decref(meta);
        if (!text)
            continue;
        on_meta(m, list[i]->name, text);
        pthread_mutex_lock(&m->mu);
        json_t *v = json_object_get(m->pending, list[i]->name);
        if (json_is_object(v))
            json_object_set_new(v, "create_only", json_true());
        pthread_mutex_unlock(&m->mu);
        free(text);
    }
    sc_node_release(list, n);
}

/* Waits on the condition variable for up to ms (or a wake-up). */
static void wait_locked(sc_membership *m, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    while (!m->stop && !m->wake && pthread_cond_timedwait(&m->cv, &m->mu, &ts) == 0)
        ;
    m->wake = false;
}

/* Whether the view shows no master (a reason to campaign now). */
static bool master_vacant(sc_membership *m)
{
    pthread_mutex_lock(&m->mu);
    bool vacant = m->synced && !m->master_id[0];
    pthread_mutex_unlock(&m->mu);
    return vacant;
}

static void refresh_registration(sc_membership *m)
{
    char key[512];
    sc__ms_key(m, key, sizeof key, "nodes", sc_node_id(m->node));
    char *val = sc__ms_node_value(m);
    sc_etcd_error err;
    if (val && sc_etcd_put(m->etcd, key, val, strlen(val), m->lease, NULL, &err) != SC_OK)
        sc_log(SC_LOG_DEBUG, "cluster", "registration refresh failed: %s", err.message);
    free(val);
}

static void *cluster_main(void *arg)
{
    sc_membership *m = arg;
    uint64_t last_campaign = 0, last_refresh = sc_clock_now_ns(), last_cpu = 0;
    int64_t backoff_ms = 200;
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        pthread_mutex_unlock(&m->mu);
        uint64_t now = sc_clock_now_ns();
        if (atomic_load(&m->lost) && m->lease)
            session_close(m);
        int64_t wait = TICK_MS;
        if (!m->lease) {
            if (session_open(m) == SC_OK) {
                backoff_ms = 200;
                last_campaign = 0;
                /* create-if-absent: restores what an etcd that lost its data forgot */
                queue_local_indices(m);
            } else {
                wait = backoff_ms;
                backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
            }
        }
        bool suspect = atomic_load(&m->suspect);
        if (suspect)
            last_campaign = 0; /* campaign as soon as the lease is refreshed again */
        if (m->lease && !suspect && !atomic_load(&m->is_master) &&
            (master_vacant(m) || now - last_campaign > (uint64_t)CAMPAIGN_MS * 1000000)) {
            campaign(m);
            last_campaign = now;
        }
        publish_pending(m);
        if (atomic_load(&m->is_master))
            sc__ms_master_step(m);
        if (m->lease && now - last_refresh > (uint64_t)REFRESH_MS * 1000000) {
            refresh_registration(m);
            last_refresh = now;
        }
        if (now - last_cpu > 5000000000u) {
            sc__ms_sample_cpu(m);
            last_cpu = now;
        }
        pthread_mutex_lock(&m->mu);
        wait_locked(m, wait);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

static void ms_free(sc_membership *m)
{
    if (!m)
        return;
    sc_etcd_free(m->etcd);
    free(m->members);
    json_decref(m->indices);
    json_decref(m->routing_json);
    json_decref(m->routing_mod);
    json_decref(m->meta);
    json_decref(m->settings);
    json_decref(m->pending);
    json_decref(m->written);
    free(m->endpoints);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static sc_status ms_alloc(const sc_membership_config *cfg, sc_node *node, sc_membership **out)
{
    *out = NULL;
    sc_membership *m = calloc(1, sizeof *m);
    if (!m)
        return SC_ENOMEM;
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &ca);
    pthread_condattr_destroy(&ca);
    m->node = node;
    m->endpoints = strdup(cfg->endpoints);
    snprintf(m->cluster_name, sizeof m->cluster_name, "%s",
             cfg->cluster_name ? cfg->cluster_name : "scry");
    snprintf(m->prefix, sizeof m->prefix, "/scry/%s/", m->cluster_name);
    snprintf(m->http, sizeof m->http, "%s", cfg->http_address ? cfg->http_address : "");
    snprintf(m->transport, sizeof m->transport, "%s",
             cfg->transport_address ? cfg->transport_address : "");
    m->ttl_s = cfg->lease_ttl_s > 0 ? cfg->lease_ttl_s : 3;
    m->started_ms = sc_clock_wall_ms();
    m->rng = sc_clock_now_ns() ^ (uint64_t)(uintptr_t)m;
    m->indices = json_object();
    m->routing_json = json_object();
    m->routing_mod = json_object();
    m->pending = json_object();
    m->written = json_object();
    atomic_store(&m->cpu_percent, -1);
    *out = m;
    if (!m->endpoints || !m->indices || !m->routing_json || !m->routing_mod || !m->pending ||
        !m->written)
        return SC_ENOMEM;
    return sc_etcd_new(cfg->endpoints, cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms : 2000,
                       &m->etcd);
}

sc_status sc_membership_start(const sc_membership_config *cfg, sc_node *node, sc_membership **out)
{
    *out = NULL;
    if (!cfg->endpoints || !*cfg->endpoints)
        return SC_EINVAL;
    sc_membership *m = NULL;
    sc_status st = ms_alloc(cfg, node, &m);
    if (st == SC_OK)
        st = sc_etcd_watch_start(m->etcd, m->prefix, sc__ms_on_reset, sc__ms_on_events, m,
                                 &m->watch);
    if (st != SC_OK) {
        ms_free(m);
        return st;
    }
    sc_node_set_cluster(node, m, on_meta, m);
    sc__ms_sample_cpu(m);
    if (pthread_create(&m->thread, NULL, cluster_main, m) != 0) {
        sc_node_set_cluster(node, NULL, NULL, NULL);
        sc_etcd_watch_stop(m->watch);
        ms_free(m);
        return SC_ENOMEM;
    }
    sc_log(SC_LOG_INFO, "cluster", "joining cluster [%s] through etcd %s", m->cluster_name,
           m->endpoints);
    *out = m;
    return SC_OK;
}

void sc_membership_halt(sc_membership *m)
{
    if (!m || m->halted)
        return;
    m->halted = true;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    signal_locked(m);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    sc_node_set_cluster(m->node, NULL, NULL, NULL);
    sc_etcd_watch_stop(m->watch);
    /* Revoke only a lease believed alive: with etcd unreachable, shutting down does not wait
     * for a revoke that cannot succeed (the lease then expires on its own). */
    int64_t lease = m->lease;
    bool alive = lease && !atomic_load(&m->lost) && !atomic_load(&m->suspect);
    session_close(m);
    if (alive && sc_etcd_lease_revoke(m->etcd, lease, NULL) == SC_OK)
        sc_log(SC_LOG_INFO, "cluster", "left the cluster (lease %llx revoked)",
               (unsigned long long)lease);
}

void sc_membership_stop(sc_membership *m)
{
    if (!m)
        return;
    sc_membership_halt(m);
    ms_free(m);
}

bool sc_membership_lease_ok(sc_membership *m)
{
    return !atomic_load(&m->lost) && !atomic_load(&m->suspect);
}

bool sc_membership_is_master(sc_membership *m)
{
    return atomic_load(&m->is_master);
}
