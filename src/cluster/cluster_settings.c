/* Cluster settings storage and normalization (see cluster_settings.h): the document
 * {"persistent":{flat}, "transient":{flat}} in etcd (membership document "settings") or, on a
 * single node, in DATA/cluster_settings.json with the node's start time, so that transient
 * settings written by a previous run are ignored. A lock file serializes single-node updates. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/file.h"
#include "cluster/allocation.h"
#include "cluster/cluster_settings.h"
#include "cluster/membership.h"

/* A scalar setting value as Elasticsearch stores it: a string. */
static json_t *as_string(const json_t *v)
{
    if (json_is_string(v))
        return json_incref((json_t *)v);
    if (json_is_true(v) || json_is_false(v))
        return json_string(json_is_true(v) ? "true" : "false");
    if (json_is_number(v)) {
        char *t = json_dumps(v, JSON_ENCODE_ANY);
        json_t *s = t ? json_string(t) : NULL;
        free(t);
        return s;
    }
    return NULL;
}

static sc_status flatten_into(const json_t *in, const char *prefix, json_t *flat,
                              sc_cluster_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)in, k, v) {
        char key[512];
        if ((size_t)snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k) >=
            sizeof key) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "setting name too long [%.64s...]", key);
            return SC_EINVAL;
        }
        sc_status st = SC_OK;
        if (json_is_object(v)) {
            st = flatten_into(v, key, flat, err);
        } else if (json_is_null(v)) {
            json_object_set_new(flat, key, json_null());
        } else if (json_is_array(v)) {
            json_t *a = json_array();
            for (size_t i = 0; st == SC_OK && i < json_array_size(v); i++) {
                json_t *s = as_string(json_array_get(v, i));
                if (!s)
                    st = SC_EINVAL;
                else
                    json_array_append_new(a, s);
            }
            json_object_set_new(flat, key, a);
        } else {
            json_t *s = as_string(v);
            if (!s)
                st = SC_EINVAL;
            else
                json_object_set_new(flat, key, s);
        }
        if (st == SC_EINVAL && err && !err->type)
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "unsupported value for setting [%s]", key);
        if (st != SC_OK)
            return st;
    }
    return SC_OK;
}

sc_status sc_settings_flatten(const json_t *in, json_t *flat, sc_cluster_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!in || json_is_null(in))
        return SC_OK;
    if (!json_is_object(in)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "cluster settings must be an object");
        return SC_EINVAL;
    }
    return flatten_into(in, "", flat, err);
}

json_t *sc_settings_nest(const json_t *flat)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)flat, k, v) {
        json_t *cur = out;
        char path[512];
        snprintf(path, sizeof path, "%s", k);
        char *save = NULL, *part = strtok_r(path, ".", &save), *next;
        for (; part && (next = strtok_r(NULL, ".", &save)); part = next) {
            json_t *child = json_object_get(cur, part);
            if (!json_is_object(child)) {
                child = json_object();
                json_object_set_new(cur, part, child);
            }
            cur = child;
        }
        if (part)
            json_object_set(cur, part, v);
    }
    return out;
}

/* Applies the flat updates to the document's section (null removes). */
static void apply(json_t *doc, const char *section, const json_t *upd)
{
    json_t *sec = json_object_get(doc, section);
    if (!json_is_object(sec)) {
        sec = json_object();
        json_object_set_new(doc, section, sec);
    }
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)upd, k, v) {
        if (json_is_null(v))
            json_object_del(sec, k);
        else
            json_object_set(sec, k, v);
    }
}

typedef struct update_ctx {
    const json_t *persistent, *transient;
} update_ctx;

static sc_status apply_both(void *ctx, json_t *doc)
{
    const update_ctx *u = ctx;
    apply(doc, "persistent", u->persistent);
    apply(doc, "transient", u->transient);
    return SC_OK;
}

/* ---- single node: DATA/cluster_settings.json ---- */

static void local_path(sc_node *n, char *out, size_t cap, const char *suffix)
{
    snprintf(out, cap, "%s/cluster_settings%s", sc_node_config_get(n)->data_dir, suffix);
}

static json_t *local_read(sc_node *n)
{
    char path[4096];
    local_path(n, path, sizeof path, ".json");
    uint8_t *text;
    size_t len;
    json_t *doc = NULL;
    if (sc_file_read_all(path, &text, &len) == SC_OK) {
        doc = json_loadb((const char *)text, len, 0, NULL);
        free(text);
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        doc = json_object();
    }
    /* transient settings of an earlier run of the node are gone */
    if (json_integer_value(json_object_get(doc, "start_ms")) != sc_node_start_ms(n))
        json_object_del(doc, "transient");
    return doc;
}

static sc_status local_update(sc_node *n, update_ctx *u)
{
    char lock[4096], path[4096];
    local_path(n, lock, sizeof lock, ".lock");
    local_path(n, path, sizeof path, ".json");
    int fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        if (fd >= 0)
            close(fd);
        return SC_EIO;
    }
    json_t *doc = local_read(n);
    (void)apply_both(u, doc);
    json_object_set_new(doc, "start_ms", json_integer(sc_node_start_ms(n)));
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    sc_status st = text ? sc_file_write_atomic(path, text, strlen(text)) : SC_ENOMEM;
    free(text);
    close(fd); /* releases the lock */
    return st;
}

static json_t *section(json_t *doc, const char *name)
{
    json_t *s = json_object_get(doc, name);
    return json_is_object(s) ? json_incref(s) : json_object();
}

sc_status sc_cluster_settings_get(sc_node *n, json_t **persistent, json_t **transient)
{
    *persistent = *transient = NULL;
    sc_membership *m = sc_node_cluster(n);
    json_t *doc = NULL;
    sc_status st = SC_OK;
    if (m)
        st = sc_membership_doc_get(m, "settings", &doc);
    else
        doc = local_read(n);
    if (st != SC_OK)
        return st;
    *persistent = section(doc, "persistent");
    *transient = section(doc, "transient");
    json_decref(doc);
    return SC_OK;
}

sc_status sc_cluster_settings_update(sc_node *n, const json_t *persistent, const json_t *transient,
                                     json_t **applied_persistent, json_t **applied_transient,
                                     sc_cluster_error *err)
{
    json_t *p = json_object(), *t = json_object();
    sc_status st = sc_settings_flatten(persistent, p, err);
    if (st == SC_OK)
        st = sc_settings_flatten(transient, t, err);
    /* the allocation settings the master reads are checked here, as Elasticsearch refuses a
     * bad value with a 400 (each section on its own: a bad value is bad in either) */
    char why[256];
    sc_alloc_settings as;
    if (st == SC_OK && (sc_alloc_settings_from(p, NULL, &as, why, sizeof why) != SC_OK ||
                        sc_alloc_settings_from(NULL, t, &as, why, sizeof why) != SC_OK)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception", "%s", why);
        st = SC_EINVAL;
    }
    update_ctx u = {p, t};
    sc_membership *m = sc_node_cluster(n);
    if (st == SC_OK) {
        st = m ? sc_membership_doc_update(m, "settings", apply_both, &u) : local_update(n, &u);
        if (st != SC_OK)
            sc_cluster_error_set(err, 500, "exception", "cannot store the cluster settings: %s",
                                 sc_status_str(st));
    }
    if (st != SC_OK) {
        json_decref(p);
        json_decref(t);
        return st;
    }
    *applied_persistent = p;
    *applied_transient = t;
    return SC_OK;
}
