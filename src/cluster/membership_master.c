/* The master's work on the cluster thread: when the view changed (nodes, indices, routing),
 * recompute the routing table with sc_allocation_compute and write each index's changed entry
 * to etcd in a txn fenced by the master term (CREATE(master key) == term) and the entry's
 * mod_revision (no lost update); delete entries of indices that are gone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/membership_internal.h"

/* number_of_shards / number_of_replicas from index metadata (settings.index.*, strings or
 * integers as Elasticsearch normalizes them). */
static int64_t setting_int(const json_t *meta, const char *name, int64_t dflt)
{
    const json_t *ix = json_object_get(json_object_get(meta, "settings"), "index");
    const json_t *v = json_object_get(ix, name);
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    if (s) {
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end != s && !*end)
            return x;
    }
    return dflt;
}

/* The inputs of an allocation, copied from the view under the lock. */
typedef struct alloc_input {
    char (*node_ids)[SC_ALLOC_NODE_MAX];
    const char **nodes;
    size_t n_nodes;
    sc_alloc_index *ix;
    char **names;
    size_t n_ix;
    sc_routing_table current;
    json_t *routing_json, *routing_mod;
    int64_t term;
    sc_alloc_settings settings;
} alloc_input;

static void input_fini(alloc_input *in)
{
    free(in->node_ids);
    free(in->nodes);
    for (size_t i = 0; i < in->n_ix; i++)
        free(in->names[i]);
    free(in->names);
    free(in->ix);
    sc_routing_table_fini(&in->current);
    json_decref(in->routing_json);
    json_decref(in->routing_mod);
}

/* Copies the view (mu held). false: nothing to do or out of memory. */
static bool input_take(sc_membership *m, alloc_input *in)
{
    memset(in, 0, sizeof *in);
    size_t nn = m->n_members, ni = json_object_size(m->indices);
    in->node_ids = calloc(nn + 1, sizeof *in->node_ids);
    in->nodes = calloc(nn + 1, sizeof *in->nodes);
    in->ix = calloc(ni + 1, sizeof *in->ix);
    in->names = calloc(ni + 1, sizeof *in->names);
    if (!in->node_ids || !in->nodes || !in->ix || !in->names)
        return false;
    for (size_t i = 0; i < nn; i++) {
        memcpy(in->node_ids[i], m->members[i].id, SC_ALLOC_NODE_MAX);
        in->nodes[i] = in->node_ids[i];
    }
    in->n_nodes = nn;
    const char *name;
    json_t *meta;
    json_object_foreach (m->indices, name, meta) {
        int64_t shards = setting_int(meta, "number_of_shards", 1);
        int64_t reps = setting_int(meta, "number_of_replicas", 1);
        if (shards < 1 || shards > 1024 || reps < 0 || reps > 32)
            continue;
        if (!(in->names[in->n_ix] = strdup(name)))
            return false;
        in->ix[in->n_ix] = (sc_alloc_index){in->names[in->n_ix], (uint32_t)shards, (uint32_t)reps};
        in->n_ix++;
    }
    char why[256];
    if (sc_alloc_settings_from(json_object_get(m->settings, "persistent"),
                               json_object_get(m->settings, "transient"), &in->settings, why,
                               sizeof why) != SC_OK) /* refused by PUT; defaults for the key */
        sc_log(SC_LOG_WARN, "cluster", "allocation settings: %s", why);
    in->routing_json = json_deep_copy(m->routing_json);
    in->routing_mod = json_deep_copy(m->routing_mod);
    in->term = m->my_term;
    return in->routing_json && in->routing_mod && sc__ms_routing(m, &in->current) == SC_OK;
}

/* Writes (value != NULL) or deletes routing/<index>, fenced by the master term and the
 * entry's mod_revision. Returns false when a compare failed or etcd was unreachable. */
static bool write_entry(sc_membership *m, const alloc_input *in, const char *index,
                        const char *value)
{
    char mkey[512], rkey[512];
    sc__ms_key(m, mkey, sizeof mkey, "master", NULL);
    sc__ms_key(m, rkey, sizeof rkey, "routing", index);
    sc_etcd_cmp cmp[2] = {
        {.key = mkey, .target = SC_ETCD_CREATE, .value = in->term},
        {.key = rkey,
         .target = SC_ETCD_MOD,
         .value = json_integer_value(json_object_get(in->routing_mod, index))},
    };
    sc_etcd_op op = {.kind = value ? SC_ETCD_OP_PUT : SC_ETCD_OP_DELETE,
                     .key = rkey,
                     .value = value,
                     .value_len = value ? strlen(value) : 0};
    sc_etcd_op check = {.kind = SC_ETCD_OP_GET, .key = mkey};
    sc_etcd_txn_result r;
    sc_etcd_error err;
    sc_status st = sc_etcd_txn(m->etcd, cmp, 2, &op, 1, &check, 1, &r, &err);
    if (st != SC_OK) {
        sc_log(SC_LOG_DEBUG, "cluster", "routing write for [%s] failed: %s (%s)", index,
               sc_status_str(st), err.message);
        return false;
    }
    bool ok = r.succeeded;
    if (!ok && (r.range.len == 0 || r.range.kvs[0].create_revision != in->term)) {
        atomic_store(&m->is_master, false);
        sc_log(SC_LOG_WARN, "cluster", "routing write refused: master term %lld is over",
               (long long)in->term);
    }
    if (ok) {
        /* Apply it to our view at once so the next step does not race the watch echo. */
        pthread_mutex_lock(&m->mu);
        if (value) {
            json_t *j = json_loads(value, 0, NULL);
            if (j)
                json_object_set_new(m->routing_json, index, j);
            json_object_set_new(m->routing_mod, index, json_integer(r.revision));
        } else {
            json_object_del(m->routing_json, index);
            json_object_del(m->routing_mod, index);
        }
        pthread_mutex_unlock(&m->mu);
        sc_log(SC_LOG_INFO, "cluster", "routing of [%s] %s (revision %lld)", index,
               value ? "updated" : "removed", (long long)r.revision);
    }
    sc_etcd_txn_result_fini(&r);
    return ok;
}

/* Logs the relocations next starts (targets not in the current routing). */
static void log_moves(const sc_routing_table *cur, const sc_routing_table *next)
{
    for (size_t i = 0; i < next->n_indices; i++) {
        const sc_index_routing *r = &next->indices[i];
        const sc_index_routing *c = sc_routing_table_find(cur, r->index);
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            for (size_t k = 0; k < sh->n_copies; k++) {
                const sc_shard_copy *t = &sh->copies[k];
                bool known = false;
                for (size_t j = 0; c && s < c->number_of_shards && j < c->shards[s].n_copies; j++)
                    known |= !strcmp(c->shards[s].copies[j].alloc_id, t->alloc_id);
                const sc_shard_copy *src = NULL;
                for (size_t j = 0; t->relocating_from[0] && j < sh->n_copies; j++)
                    if (!strcmp(sh->copies[j].alloc_id, t->relocating_from))
                        src = &sh->copies[j];
                if (!known && src)
                    sc_log(SC_LOG_INFO, "cluster",
                           "rebalance: relocating [%s][%u] %s from [%s] to [%s]", r->index, s,
                           src->primary ? "primary" : "replica", src->node, t->node);
            }
        }
    }
}

/* Writes the entries of `next` that differ from the view; deletes entries of gone indices. */
static bool write_changes(sc_membership *m, const alloc_input *in, const sc_routing_table *next)
{
    bool all_ok = true;
    for (size_t i = 0; i < next->n_indices && atomic_load(&m->is_master); i++) {
        const sc_index_routing *r = &next->indices[i];
        const sc_index_routing *cur = sc_routing_table_find(&in->current, r->index);
        if (cur && sc_index_routing_equal(cur, r))
            continue;
        json_t *j = sc_index_routing_to_json(r);
        char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
        json_decref(j);
        all_ok &= text && write_entry(m, in, r->index, text);
        free(text);
    }
    const char *name;
    json_t *v;
    json_object_foreach (in->routing_json, name, v) {
        if (atomic_load(&m->is_master) && !sc_routing_table_find(next, name))
            all_ok &= write_entry(m, in, name, NULL);
    }
    return all_ok;
}

void sc__ms_master_step(sc_membership *m)
{
    alloc_input in;
    pthread_mutex_lock(&m->mu);
    bool go = m->dirty && m->synced;
    m->dirty = false;
    bool ok = go && input_take(m, &in);
    uint64_t rng = m->rng;
    pthread_mutex_unlock(&m->mu);
    if (!go)
        return;
    sc_routing_table next;
    if (ok)
        ok = sc_allocation_compute(in.nodes, in.n_nodes, in.ix, in.n_ix, &in.current, &in.settings,
                                   &rng, &next) == SC_OK;
    if (ok) {
        log_moves(&in.current, &next);
        ok = write_changes(m, &in, &next);
        sc_routing_table_fini(&next);
    }
    input_fini(&in);
    pthread_mutex_lock(&m->mu);
    m->rng = rng;
    if (!ok)
        m->dirty = true; /* retry on the next tick */
    pthread_mutex_unlock(&m->mu);
}
