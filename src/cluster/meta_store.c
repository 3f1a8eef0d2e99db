/* The node-level metadata document (see meta_store.h): loaded at start from
 * DATA/cluster_meta.json, changed copy-on-write under a mutex, written atomically. */
#include "cluster/meta_store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"

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

json_t *sc_meta_get(sc_node *n, sc_meta_kind kind, const char *name)
{
    sc__meta *m = sc__node_meta(n);
    pthread_mutex_lock(&m->mu);
    json_t *v = json_object_get(json_object_get(m->doc, kind_keys[kind]), name);
    json_t *copy = v ? json_deep_copy(v) : NULL;
    pthread_mutex_unlock(&m->mu);
    return copy;
}

json_t *sc_meta_list(sc_node *n, sc_meta_kind kind)
{
    sc__meta *m = sc__node_meta(n);
    pthread_mutex_lock(&m->mu);
    json_t *copy = json_deep_copy(json_object_get(m->doc, kind_keys[kind]));
    pthread_mutex_unlock(&m->mu);
    return copy ? copy : json_object();
}

sc_status sc_meta_change(sc_node *n, sc_meta_change_fn fn, void *ctx)
{
    sc__meta *m = sc__node_meta(n);
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
