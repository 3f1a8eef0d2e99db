/* The membership's view of the cluster, kept from the etcd watch on /scry/<cluster>/ (see
 * membership.h): live nodes, the master, index metadata and the routing table; and the
 * snapshot the APIs read. Values come from etcd and are parsed as untrusted JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/membership_internal.h"

static void member_from_json(sc_member *mb, const char *id, size_t id_len, const json_t *v)
{
    memset(mb, 0, sizeof *mb);
    snprintf(mb->id, sizeof mb->id, "%.*s", (int)id_len, id);
    const char *name = json_string_value(json_object_get(v, "name"));
    snprintf(mb->name, sizeof mb->name, "%s", name ? name : mb->id);
    const char *http = json_string_value(json_object_get(v, "http"));
    snprintf(mb->http, sizeof mb->http, "%s", http ? http : "");
    const char *tr = json_string_value(json_object_get(v, "transport"));
    snprintf(mb->transport, sizeof mb->transport, "%s", tr ? tr : "");
    mb->started_ms = json_integer_value(json_object_get(v, "started_ms"));
    const json_t *hp = json_object_get(v, "heap_percent"), *rp = json_object_get(v, "ram_percent"),
                 *cp = json_object_get(v, "cpu");
    mb->heap_percent = json_is_integer(hp) ? (int)json_integer_value(hp) : -1;
    mb->ram_percent = json_is_integer(rp) ? (int)json_integer_value(rp) : -1;
    mb->cpu_percent = json_is_integer(cp) ? (int)json_integer_value(cp) : -1;
    const json_t *load = json_object_get(v, "load");
    for (int i = 0; i < 3; i++) {
        const json_t *x = json_array_get(load, (size_t)i);
        mb->load[i] = json_is_number(x) ? json_number_value(x) : -1;
    }
}

static void member_put(sc_membership *m, const char *id, size_t id_len, const json_t *v)
{
    if (id_len == 0 || id_len >= SC_ALLOC_NODE_MAX || memchr(id, '\0', id_len))
        return;
    sc_member mb;
    member_from_json(&mb, id, id_len, v);
    for (size_t i = 0; i < m->n_members; i++)
        if (!strcmp(m->members[i].id, mb.id)) {
            m->members[i] = mb;
            return;
        }
    sc_member *grown = realloc(m->members, (m->n_members + 1) * sizeof *grown);
    if (!grown)
        return;
    m->members = grown;
    m->members[m->n_members++] = mb;
    m->dirty = true;
}

static void member_del(sc_membership *m, const char *id, size_t id_len)
{
    for (size_t i = 0; i < m->n_members; i++)
        if (strlen(m->members[i].id) == id_len && !memcmp(m->members[i].id, id, id_len)) {
            m->members[i] = m->members[--m->n_members];
            m->dirty = true;
            return;
        }
}

static void master_set(sc_membership *m, const json_t *v, int64_t create_rev)
{
    const char *id = json_string_value(json_object_get(v, "id"));
    snprintf(m->master_id, sizeof m->master_id, "%s", id ? id : "");
    m->master_term = v ? create_rev : 0;
    m->dirty = true;
    /* Someone else holds the key: we are not master, whatever we believed. */
    if (atomic_load(&m->is_master) &&
        (strcmp(m->master_id, sc_node_id(m->node)) != 0 || m->master_term != m->my_term)) {
        atomic_store(&m->is_master, false);
        sc_log(SC_LOG_WARN, "cluster", "master key changed: no longer master");
    }
}

/* Applies one key (value NULL: deleted). Called with mu held. */
static void apply(sc_membership *m, const sc_etcd_kv *kv, bool deleted)
{
    size_t pl = strlen(m->prefix);
    if (kv->key_len <= pl || memcmp(kv->key, m->prefix, pl) != 0)
        return;
    const char *rest = kv->key + pl;
    size_t rest_len = kv->key_len - pl;
    json_t *v = NULL;
    if (!deleted) {
        v = json_loadb(kv->value, kv->value_len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(v)) {
            json_decref(v);
            return; /* not ours or corrupt: ignored */
        }
    }
    char name[256];
    if (rest_len == 6 && !memcmp(rest, "master", 6)) {
        master_set(m, v, kv->create_revision);
    } else if (rest_len == 4 && !memcmp(rest, "meta", 4)) {
        /* a node's own write may be in the view already (sc_membership_meta_update) */
        if (kv->mod_revision >= m->meta_rev || deleted) {
            json_decref(m->meta);
            m->meta = json_incref(v);
            m->meta_rev = kv->mod_revision;
        }
    } else if (rest_len == 8 && !memcmp(rest, "settings", 8)) {
        /* the allocation settings are read from it (rebalance.enable, ...) */
        json_decref(m->settings);
        m->settings = json_incref(v);
        m->dirty = true;
    } else if (rest_len > 6 && !memcmp(rest, "nodes/", 6)) {
        if (deleted)
            member_del(m, rest + 6, rest_len - 6);
        else
            member_put(m, rest + 6, rest_len - 6, v);
    } else if (rest_len > 8 && rest_len - 8 < sizeof name && !memcmp(rest, "indices/", 8) &&
               !memchr(rest + 8, '\0', rest_len - 8)) {
        snprintf(name, sizeof name, "%.*s", (int)(rest_len - 8), rest + 8);
        if (deleted)
            json_object_del(m->indices, name);
        else
            json_object_set(m->indices, name, v);
        m->dirty = true;
    } else if (rest_len > 8 && rest_len - 8 < sizeof name && !memcmp(rest, "routing/", 8) &&
               !memchr(rest + 8, '\0', rest_len - 8)) {
        snprintf(name, sizeof name, "%.*s", (int)(rest_len - 8), rest + 8);
        if (deleted) {
            json_object_del(m->routing_json, name);
            json_object_del(m->routing_mod, name);
        } else {
            json_object_set(m->routing_json, name, v);
            json_object_set_new(m->routing_mod, name, json_integer(kv->mod_revision));
        }
        m->dirty = true;
    }
    json_decref(v);
    if (kv->mod_revision > m->revision)
        m->revision = kv->mod_revision;
}

static void notify(sc_membership *m)
{
    size_t n = atomic_load(&m->n_listeners);
    for (size_t i = 0; i < n; i++)
        m->listeners[i].fn(m->listeners[i].ctx);
}

sc_status sc_membership_on_change(sc_membership *m, sc_membership_change_fn fn, void *ctx)
{
    pthread_mutex_lock(&m->mu);
    size_t n = atomic_load(&m->n_listeners);
    sc_status st = SC_ELIMIT;
    if (n < sizeof m->listeners / sizeof m->listeners[0]) {
        m->listeners[n].fn = fn;
        m->listeners[n].ctx = ctx;
        atomic_store(&m->n_listeners, n + 1); /* published after the slot is filled */
        st = SC_OK;
    }
    pthread_mutex_unlock(&m->mu);
    return st;
}

void sc__ms_on_reset(void *ctx, const sc_etcd_kvs *all)
{
    sc_membership *m = ctx;
    pthread_mutex_lock(&m->mu);
    m->n_members = 0;
    m->master_id[0] = '\0';
    bool had_master = atomic_load(&m->is_master);
    json_object_clear(m->indices);
    json_object_clear(m->routing_json);
    json_object_clear(m->routing_mod);
    json_decref(m->meta);
    m->meta = NULL;
    json_decref(m->settings);
    m->settings = NULL;
    m->meta_rev = 0;
    for (size_t i = 0; i < all->len; i++)
        apply(m, &all->kvs[i], false);
    if (had_master && !m->master_id[0]) {
        atomic_store(&m->is_master, false);
        sc_log(SC_LOG_WARN, "cluster", "master key gone: no longer master");
    }
    m->revision = all->revision;
    m->synced = true;
    m->dirty = true;
    m->wake = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    notify(m);
}

void sc__ms_on_events(void *ctx, const sc_etcd_event *ev, size_t n)
{
    sc_membership *m = ctx;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++)
        apply(m, &ev[i].kv, ev[i].type == SC_ETCD_EVENT_DELETE);
    m->wake = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    notify(m);
}

static int cmp_member(const void *a, const void *b)
{
    const sc_member *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->id, y->id);
}

/* Parses the routing values into t (corrupt entries skipped, logged). Called with mu held. */
static sc_status routing_of(const json_t *routing_json, sc_routing_table *t)
{
    memset(t, 0, sizeof *t);
    size_t n = json_object_size(routing_json);
    t->indices = calloc(n + 1, sizeof *t->indices);
    if (!t->indices)
        return SC_ENOMEM;
    const char *name;
    json_t *v;
    json_object_foreach ((json_t *)routing_json, name, v) {
        if (sc_index_routing_from_json(name, v, &t->indices[t->n_indices]) == SC_OK)
            t->n_indices++;
        else
            sc_log(SC_LOG_WARN, "cluster", "ignoring a corrupt routing entry for [%s]", name);
    }
    return SC_OK;
}

sc_status sc__ms_routing(sc_membership *m, sc_routing_table *t)
{
    return routing_of(m->routing_json, t);
}

int64_t sc_membership_revision(sc_membership *m)
{
    pthread_mutex_lock(&m->mu);
    int64_t rev = m->revision;
    pthread_mutex_unlock(&m->mu);
    return rev;
}

sc_status sc_membership_view(sc_membership *m, sc_cluster_view *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&m->mu);
    snprintf(out->cluster_name, sizeof out->cluster_name, "%s", m->cluster_name);
    snprintf(out->local_id, sizeof out->local_id, "%s", sc_node_id(m->node));
    out->nodes = calloc(m->n_members + 1, sizeof *out->nodes);
    if (out->nodes && m->n_members)
        memcpy(out->nodes, m->members, m->n_members * sizeof *out->nodes);
    out->n_nodes = out->nodes ? m->n_members : 0;
    snprintf(out->master_id, sizeof out->master_id, "%s", m->master_id);
    out->master_term = m->master_term;
    out->indices = json_deep_copy(m->indices);
    sc_status st = routing_of(m->routing_json, &out->routing);
    out->revision = m->revision;
    out->synced = m->synced;
    out->connected = m->lease != 0 && !atomic_load(&m->lost) && !atomic_load(&m->suspect);
    pthread_mutex_unlock(&m->mu);
    if (!out->nodes || !out->indices || st != SC_OK) {
        sc_cluster_view_fini(out);
        return SC_ENOMEM;
    }
    qsort(out->nodes, out->n_nodes, sizeof *out->nodes, cmp_member);
    return SC_OK;
}

void sc_cluster_view_fini(sc_cluster_view *v)
{
    if (!v)
        return;
    free(v->nodes);
    json_decref(v->indices);
    sc_routing_table_fini(&v->routing);
    memset(v, 0, sizeof *v);
}
