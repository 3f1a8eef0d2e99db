/* The node-level metadata document (see meta_store.h). On a single node: loaded at start from
 * DATA/cluster_meta.json, changed copy-on-write under a mutex, written atomically. Clustered
 * (--cluster): the etcd document /scry/<cluster>/meta, read from the membership's watched view
 * and changed by compare-and-swap (membership.h); what a node had in its local file when it
 * joined is published once (sc_meta_publish_local). */
#include "cluster/meta_store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/membership.h"

struct sc__meta {
    pthread_mutex_t mu;
    json_t *doc;
    char *path;
};

static const char *const kind_keys[SC_META_N_KINDS] = {"index_templates", "component_templates",
                                                       "templates", "pipelines", "data_streams",
                                                       "repositories"};

const char *sc_meta_kind_key(sc_meta_kind kind)
{
    return kind_keys[kind];
}

sc_status sc__meta_open(const char *data_dir, sc__meta **out)
{
    *out = NULL;
    sc__meta *m = calloc(1, sizeof *m);
    char path[4096];
    snprintf(path, sizeof path, "%s/cluster_meta.json", data_dir);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return SC_ENOMEM;
    }
    pthread_mutex_init(&m->mu, NULL);
    uint8_t *text;
    size_t len;
    if (sc_file_read_all(path, &text, &len) == SC_OK) {
        json_error_t jerr;
        m->doc = json_loadb((const char *)text, len, 0, &jerr);
        free(text);
        if (!json_is_object(m->doc)) {
            sc_log(SC_LOG_ERROR, "node",
                   "cannot read [%s]: templates, pipelines and data "
                   "streams start empty",
                   path);
            json_decref(m->doc);
            m->doc = NULL;
        }
    }
    if (!m->doc)
        m->doc = json_object();
    for (int k = 0; k < SC_META_N_KINDS; k++)
        if (!json_is_object(json_object_get(m->doc, kind_keys[k])))
            json_object_set_new(m->doc, kind_keys[k], json_object());
    *out = m;
    return SC_OK;
}

void sc__meta_close(sc__meta *m)
{
    if (!m)
        return;
    json_decref(m->doc);
    pthread_mutex_destroy(&m->mu);
    free(m->path);
    free(m);
}

/* Reading the cluster's document: a deep copy of doc[kind][name] (name NULL: doc[kind]). */
typedef struct peek_ctx {
    const char *kind, *name;
    json_t *out;
} peek_ctx;

static void peek_fn(void *vctx, const json_t *doc)
{
    peek_ctx *c = vctx;
    json_t *v = json_object_get(doc, c->kind);
    if (c->name)
        v = json_object_get(v, c->name);
    c->out = v ? json_deep_copy(v) : NULL;
}

static json_t *peek(sc_node *n, sc_meta_kind kind, const char *name)
{
    sc__meta *m = sc__node_meta(n);
    sc_membership *ms = sc_node_cluster(n);
    peek_ctx c = {.kind = kind_keys[kind], .name = name};
    if (ms) {
        sc_membership_meta_read(ms, peek_fn, &c);
        return c.out;
    }
    pthread_mutex_lock(&m->mu);
    peek_fn(&c, m->doc);
    pthread_mutex_unlock(&m->mu);
    return c.out;
}

json_t *sc_meta_get(sc_node *n, sc_meta_kind kind, const char *name)
{
    return peek(n, kind, name);
}

json_t *sc_meta_list(sc_node *n, sc_meta_kind kind)
{
    json_t *copy = peek(n, kind, NULL);
    return json_is_object(copy) ? copy : (json_decref(copy), json_object());
}

/* Gives the cluster's document every kind's object before a change runs on it. */
typedef struct cluster_change {
    sc_meta_change_fn fn;
    void *ctx;
    sc_status fn_st; /* what fn answered last (etcd's own failures are told apart) */
} cluster_change;

static void complete(json_t *doc)
{
    for (int k = 0; k < SC_META_N_KINDS; k++)
        if (!json_is_object(json_object_get(doc, kind_keys[k])))
            json_object_set_new(doc, kind_keys[k], json_object());
}

static sc_status cluster_change_fn(void *vctx, json_t *doc)
{
    cluster_change *c = vctx;
    complete(doc);
    c->fn_st = c->fn(c->ctx, doc);
    return c->fn_st;
}

sc_status sc_meta_change(sc_node *n, sc_meta_change_fn fn, void *ctx)
{
    sc__meta *m = sc__node_meta(n);
    sc_membership *ms = sc_node_cluster(n);
    if (ms) {
        cluster_change c = {fn, ctx, SC_EIO};
        sc_status st = sc_membership_meta_update(ms, cluster_change_fn, &c);
        if (st == SC_OK || (c.fn_st != SC_OK && st == c.fn_st)) /* the change's own answer */
            return st;
        sc_log(SC_LOG_ERROR, "node", "cannot store the cluster metadata in etcd: %s",
               sc_status_str(st));
        return SC_EIO;
    }
    pthread_mutex_lock(&m->mu);
    json_t *copy = json_deep_copy(m->doc);
    sc_status st = copy ? fn(ctx, copy) : SC_ENOMEM;
    if (st == SC_OK) {
        char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
        st = text ? sc_file_write_atomic(m->path, text, strlen(text)) : SC_ENOMEM;
        free(text);
        if (st != SC_OK)
            sc_log(SC_LOG_ERROR, "node", "cannot write [%s]", m->path);
    }
    if (st == SC_OK) {
        json_decref(m->doc);
        m->doc = copy;
    } else {
        json_decref(copy);
    }
    pthread_mutex_unlock(&m->mu);
    return st;
}

/* Publishing the local file's objects: those the cluster lacks are added; for a name the
 * cluster has, the cluster's object wins. */
typedef struct publish_ctx {
    const json_t *local;
    int added, kept;
} publish_ctx;

static sc_status publish_fn(void *vctx, json_t *doc)
{
    publish_ctx *c = vctx;
    c->added = c->kept = 0;
    complete(doc);
    for (int k = 0; k < SC_META_N_KINDS; k++) {
        json_t *dst = json_object_get(doc, kind_keys[k]);
        const char *name;
        json_t *v;
        json_object_foreach (json_object_get(c->local, kind_keys[k]), name, v) {
            json_t *have = json_object_get(dst, name);
            if (!have) {
                json_object_set(dst, name, v);
                c->added++;
            } else if (!json_equal(have, v)) {
                sc_log(SC_LOG_WARN, "node",
                       "local %s [%s] differs from the cluster's: the cluster's is kept",
                       kind_keys[k], name);
                c->kept++;
            }
        }
    }
    return SC_OK;
}

sc_status sc_meta_publish_local(sc_node *n)
{
    sc__meta *m = sc__node_meta(n);
    sc_membership *ms = sc_node_cluster(n);
    if (!ms)
        return SC_OK;
    pthread_mutex_lock(&m->mu);
    json_t *local = json_deep_copy(m->doc);
    pthread_mutex_unlock(&m->mu);
    size_t total = 0;
    for (int k = 0; k < SC_META_N_KINDS; k++)
        total += json_object_size(json_object_get(local, kind_keys[k]));
    if (total == 0) {
        json_decref(local);
        return SC_OK;
    }
    publish_ctx c = {.local = local};
    sc_status st = sc_membership_meta_update(ms, publish_fn, &c);
    json_decref(local);
    if (st != SC_OK) {
        sc_log(SC_LOG_WARN, "node",
               "cannot publish the %zu templates, pipelines, data streams and repositories of "
               "[%s] to the cluster (%s): the cluster does not have them; they stay in the file "
               "and are published at the next start",
               total, m->path, sc_status_str(st));
        return st;
    }
    char done[4200];
    snprintf(done, sizeof done, "%s.published", m->path);
    if (rename(m->path, done) != 0)
        sc_log(SC_LOG_WARN, "node", "cannot rename [%s] to [%s]", m->path, done);
    sc_log(SC_LOG_INFO, "node",
           "published the local metadata of [%s] to the cluster: %d added, %d already there "
           "(kept the cluster's); the file is now [%s]",
           m->path, c.added, c.kept, done);
    return SC_OK;
}

typedef struct put_ctx {
    const char *key, *name;
    const json_t *value;
} put_ctx;

static sc_status put_fn(void *ctx, json_t *doc)
{
    put_ctx *p = ctx;
    json_t *map = json_object_get(doc, p->key);
    if (!p->value)
        return json_object_del(map, p->name) == 0 ? SC_OK : SC_ENOTFOUND;
    json_t *copy = json_deep_copy(p->value);
    return copy && json_object_set_new(map, p->name, copy) == 0 ? SC_OK : SC_ENOMEM;
}

sc_status sc_meta_put(sc_node *n, sc_meta_kind kind, const char *name, const json_t *value)
{
    put_ctx p = {.key = kind_keys[kind], .name = name, .value = value};
    return sc_meta_change(n, put_fn, &p);
}
