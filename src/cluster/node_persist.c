/* The node on disk: each index's metadata (indices/<uuid>/meta.json: name, settings, mappings,
 * state), the node identity (node.json), and loading both at start. The in-memory registry is
 * in node.c. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/snap_internal.h"

json_t *sc__index_meta_json(sc_index *ix)
{
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(ix->name));
    json_object_set_new(m, "uuid", json_string(ix->uuid));
    json_object_set_new(m, "creation_date", json_integer(ix->creation_date_ms));
    json_object_set(m, "settings", ix->settings_json);
    if (atomic_load(&ix->closed))
        json_object_set_new(m, "state", json_string("close"));
    if (ix->settings.routing_num_shards)
        json_object_set_new(m, "routing_num_shards", json_integer(ix->settings.routing_num_shards));
    pthread_mutex_lock(ix->mapping_mu);
    json_t *mj = sc_mapping_to_json(ix->mapping);
    pthread_mutex_unlock(ix->mapping_mu);
    json_object_set_new(m, "mappings", mj ? mj : json_object());
    json_t *aliases = sc__index_aliases_copy(ix);
    if (json_object_size(aliases))
        json_object_set_new(m, "aliases", aliases);
    else
        json_decref(aliases);
    return m;
}

static sc_status write_meta(sc_index *ix, bool publish)
{
    json_t *m = sc__index_meta_json(ix);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (!text)
        return SC_ENOMEM;
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.json", ix->dir);
    sc_status st = sc_file_write_atomic(path, text, strlen(text));
    if (st == SC_OK && publish)
        sc__node_meta_changed(ix->node, ix->name, text);
    free(text);
    return st;
}

sc_status sc__index_write_meta(sc_index *ix)
{
    return write_meta(ix, true);
}

void sc__index_persist_mapping_meta(sc_index *ix)
{
    if (write_meta(ix, false) != SC_OK) {
        sc_log(SC_LOG_WARN, "index", "could not persist metadata of [%s]", ix->name);
        return;
    }
    json_t *m = sc__index_meta_json(ix);
    json_object_set_new(m, SC_META_KEEP_CLUSTER_ALIASES, json_true());
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (text)
        sc__node_meta_changed(ix->node, ix->name, text);
    free(text);
}

sc_status sc__index_write_meta_local(sc_index *ix)
{
    return write_meta(ix, false);
}

void sc__index_persist_meta(sc_index *ix)
{
    if (sc__index_write_meta(ix) != SC_OK)
        sc_log(SC_LOG_WARN, "index", "could not persist metadata of [%s]", ix->name);
}

void sc__index_remove_meta(const sc_index *ix)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.json", ix->dir);
    unlink(path);
    sc__node_meta_changed(ix->node, ix->name, NULL);
}

/* Builds and opens (create: new, empty shards; else as sc__index_open_shards opens them) the
 * index described by metadata m (meta.json's form); the caller registers it. expect_uuid, when
 * set, must equal m's uuid. *out: the index (the caller's reference). */
static sc_status index_from_meta(sc_node *n, const json_t *m, const char *expect_uuid, bool create,
                                 sc_index **out)
{
    const char *name = json_string_value(json_object_get(m, "name"));
    const char *uuid = json_string_value(json_object_get(m, "uuid"));
    json_t *settings = json_object_get(m, "settings");
    json_t *mappings = json_object_get(m, "mappings");
    int64_t created = json_integer_value(json_object_get(m, "creation_date"));
    json_t *rns = json_object_get(m, "routing_num_shards");
    const char *state = json_string_value(json_object_get(m, "state"));
    bool closed = state && strcmp(state, "close") == 0;
    if (!name || !uuid || strlen(uuid) >= 24 || (expect_uuid && strcmp(uuid, expect_uuid) != 0))
        return SC_ECORRUPT;
    if (create) {
        /* The folder exists when this node created the index itself (it makes the folder
         * before publishing the metadata) or holds it already: never open it twice. */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/indices/%s", sc_node_config_get(n)->data_dir, uuid);
        if (access(dir, F_OK) == 0)
            return SC_EEXIST;
    }
    /* settings were saved normalized ({"index":{...}}); strip the generated keys. */
    json_t *s2 = json_deep_copy(settings);
    json_t *ixs = json_object_get(s2, "index");
    if (json_is_object(ixs)) {
        json_object_del(ixs, "uuid");
        json_object_del(ixs, "provided_name");
        json_object_del(ixs, "creation_date");
        json_object_del(ixs, "version");
    }
    sc_cluster_error err;
    sc_index *ix;
    sc_status st = sc__index_build(n, name, uuid, created, s2, mappings, &ix, &err);
    json_decref(s2);
    if (st != SC_OK) {
        sc_log(SC_LOG_ERROR, "index", "cannot load index [%s]: %s", name, err.reason);
        return st;
    }
    atomic_store(&ix->closed, closed);
    json_t *aliases = json_object_get(m, "aliases");
    if (json_is_object(aliases)) {
        json_decref(ix->aliases);
        ix->aliases = json_deep_copy(aliases);
    }
    /* Metadata written before routing_num_shards was stored has none: keep routing by
     * num_shards (0) unless the settings name number_of_routing_shards. */
    if (json_is_integer(rns) && json_integer_value(rns) >= ix->settings.number_of_shards &&
        json_integer_value(rns) % ix->settings.number_of_shards == 0 &&
        json_integer_value(rns) <= 1048576)
        ix->settings.routing_num_shards = (uint32_t)json_integer_value(rns);
    if (create && (sc_dir_make(ix->dir) != SC_OK || write_meta(ix, false) != SC_OK)) {
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return SC_EIO;
    }
    /* restored through another node: this node's copies come from the snapshot */
    const json_t *restore = json_object_get(m, "restore");
    if (create && json_is_object(restore) &&
        (st = sc__snap_restore_dirs(n, restore, ix, &err)) != SC_OK) {
        sc_log(SC_LOG_ERROR, "index", "cannot restore [%s] from its snapshot: %s", ix->name,
               err.reason);
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return st;
    }
    st = sc__index_open_shards(n, ix, create, &err);
    if (st != SC_OK) {
        sc_log(SC_LOG_ERROR, "index", "cannot open shards of [%s]: %s", ix->name, err.reason);
        if (create)
            atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return st;
    }
    *out = ix;
    return SC_OK;
}

/* Loads indices/<uuid_dir>/meta.json, opens the shards and registers the index. SC_ENOTFOUND:
 * the folder has no metadata. */
static sc_status load_index(sc_node *n, const char *uuid_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/indices/%s/meta.json", sc_node_config_get(n)->data_dir,
             uuid_dir);
    uint8_t *text;
    size_t len;
    if (sc_file_read_all(path, &text, &len) != SC_OK)
        return SC_ENOTFOUND;
    json_error_t jerr;
    json_t *m = json_loadb((const char *)text, len, 0, &jerr);
    free(text);
    if (!m)
        return SC_ECORRUPT;
    sc_index *ix;
    sc_status st = index_from_meta(n, m, uuid_dir, false, &ix);
    json_decref(m);
    if (st != SC_OK)
        return st;
    /* Registered with its shards INITIALIZING; they open in the background (recovery.c). */
    sc_index_ref(ix);
    st = sc__node_register(n, ix);
    if (st != SC_OK) {
        sc_index_unref(ix);
        sc_index_unref(ix);
        return st;
    }
    st = sc__recovery_add(sc__node_recovery(n), n, ix);
    sc_index_unref(ix);
    if (st != SC_OK)
        return st;
    sc_log(SC_LOG_INFO, "index", "loaded index [%s] uuid [%s] shards [%u], recovering",
           ix->name, ix->uuid, ix->settings.number_of_shards);
    return SC_OK;
}

sc_status sc__node_adopt_index(sc_node *n, const json_t *meta)
{
    sc_index *ix;
    sc_status st = index_from_meta(n, meta, NULL, true, &ix);
    if (st != SC_OK)
        return st;
    st = sc__node_register(n, ix);
    if (st != SC_OK) {
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return st;
    }
    sc_log(SC_LOG_INFO, "index", "adopted index [%s] uuid [%s] shards [%u] from the cluster",
           ix->name, ix->uuid, ix->settings.number_of_shards);
    return SC_OK;
}

/* Reads node.json, or makes up a new identity and writes it. */
static sc_status load_node_identity(const char *data_dir, char node_id[24], char cluster_uuid[24])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/node.json", data_dir);
    uint8_t *text;
    size_t len;
    if (sc_file_read_all(path, &text, &len) == SC_OK) {
        json_error_t jerr;
        json_t *m = json_loadb((const char *)text, len, 0, &jerr);
        free(text);
        const char *id = json_string_value(json_object_get(m, "node_id"));
        const char *cu = json_string_value(json_object_get(m, "cluster_uuid"));
        if (id && cu) {
            snprintf(node_id, 24, "%s", id);
            snprintf(cluster_uuid, 24, "%s", cu);
            json_decref(m);
            return SC_OK;
        }
        json_decref(m);
    }
    sc__random_id(node_id);
    sc__random_id(cluster_uuid);
    char buf[256];
    int k = snprintf(buf, sizeof buf, "{\"node_id\":\"%s\",\"cluster_uuid\":\"%s\"}\n", node_id,
                     cluster_uuid);
    return sc_file_write_atomic(path, buf, (size_t)k);
}

sc_status sc__node_storage_open(const char *data_dir, char node_id[24], char cluster_uuid[24])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", data_dir);
    if (sc_dir_make(path) != SC_OK)
        return SC_EIO;
    return load_node_identity(data_dir, node_id, cluster_uuid);
}

void sc__node_recover_indices(sc_node *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/indices", sc_node_config_get(n)->data_dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        sc_status st = load_index(n, e->d_name);
        if (st == SC_ENOTFOUND) {
            /* A folder without metadata is a deleted index whose files outlived a crash. */
            char dir[4096 + 512];
            snprintf(dir, sizeof dir, "%s/%s", path, e->d_name);
            if (sc_dir_remove_all(dir) != SC_OK)
                sc_log(SC_LOG_WARN, "node", "cannot remove stale folder [%s]", dir);
        }
    }
    closedir(d);
}
