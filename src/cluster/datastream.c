/* Data streams (see datastream.h): creating a stream and its backing indices from its
 * template, the stream records in the metadata store, rollover with conditions, deletion, and
 * the auto-creation of a first write. */
#include "cluster/datastream.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/alias.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/meta_store.h"
#include "cluster/ops.h"
#include "cluster/template.h"

bool sc_data_stream_exists(sc_node *n, const char *name)
{
    json_t *ds = sc_meta_get(n, SC_META_DATA_STREAM, name);
    json_decref(ds);
    return ds != NULL;
}

static void backing_name(const char *stream, int64_t gen, char *out, size_t cap)
{
    time_t secs = (time_t)(sc_clock_wall_ms() / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(out, cap, ".ds-%s-%04d.%02d.%02d-%06lld", stream, tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, (long long)gen);
}

/* Creates backing index `index` of `stream` from the template and makes it the write index
 * (the previous write index `old`, if any, keeps the stream name for reads). */
static sc_status add_backing(sc_node *n, const char *stream, const char *index, const char *old,
                             sc_cluster_error *err)
{
    sc_template_result r;
    if (sc_template_resolve(n, stream, NULL, &r) != SC_OK)
        return SC_ENOMEM;
    if (!r.data_stream) {
        sc_template_result_fini(&r);
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "no matching index template with a data_stream found for data "
                             "stream [%s]",
                             stream);
        return SC_EINVAL;
    }
    json_t *props = json_object_get(r.mappings, "properties");
    if (!json_is_object(props)) {
        props = json_object();
        json_object_set_new(r.mappings, "properties", props);
    }
    if (!json_object_get(props, "@timestamp"))
        json_object_set_new(props, "@timestamp", json_pack("{s:s}", "type", "date"));
    json_object_set_new(json_object_get(r.settings, "index"), "hidden", json_string("true"));
    sc_status st = sc_node_create_index(n, index, r.settings, r.mappings, err);
    sc_template_result_fini(&r);
    if (st != SC_OK)
        return st;
    json_t *w = json_pack("{s:b,s:b}", "is_write_index", 1, "_data_stream", 1);
    json_t *ro = json_pack("{s:b,s:b}", "is_write_index", 0, "_data_stream", 1);
    sc_alias_action acts[2] = {
        {.op = SC_ALIAS_ADD, .index = index, .alias = stream, .props = w},
        {.op = SC_ALIAS_ADD, .index = old, .alias = stream, .props = ro},
    };
    st = sc_node_aliases_update(n, acts, old ? 2 : 1, err);
    json_decref(w);
    json_decref(ro);
    if (st != SC_OK) {
        sc_cluster_error ignored;
        if (sc_node_delete_index(n, index, &ignored) != SC_OK)
            sc_log(SC_LOG_WARN, "index", "could not remove [%s]", index);
    }
    return st;
}

/* The record GET _data_stream shows, with the backing indices' uuids. */
static json_t *record_view(sc_node *n, const char *name, const json_t *rec)
{
    json_t *out = json_deep_copy(rec);
    json_t *indices = json_array();
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get(rec, "indices"), i, v) {
        sc_index *ix = sc_node_index(n, json_string_value(v));
        if (!ix)
            continue; /* a backing index deleted on its own (not the write index) */
        json_array_append_new(indices, json_pack("{s:s,s:s}", "index_name", json_string_value(v),
                                                 "index_uuid", ix->uuid));
        sc_index_unref(ix);
    }
    json_object_set_new(out, "name", json_string(name));
    json_object_set_new(out, "indices", indices);
    json_object_set_new(out, "timestamp_field", json_pack("{s:s}", "name", "@timestamp"));
    json_object_set_new(out, "status", json_string("GREEN"));
    return out;
}

sc_status sc_data_stream_create(sc_node *n, const char *name, sc_cluster_error *err)
{
    if (!sc_index_name_valid(name, err))
        return SC_EINVAL;
    if (sc_data_stream_exists(n, name)) {
        sc_cluster_error_set(err, 400, "resource_already_exists_exception",
                             "data_stream [%s] already exists", name);
        return SC_EEXIST;
    }
    sc_index *same = sc_node_index(n, name);
    sc_index_unref(same);
    if (same) {
        sc_cluster_error_set(err, 400, "invalid_index_name_exception",
                             "data stream [%s] conflicts with index", name);
        return SC_EINVAL;
    }
    sc_template_result r;
    if (sc_template_resolve(n, name, NULL, &r) != SC_OK)
        return SC_ENOMEM;
    char tname[256];
    snprintf(tname, sizeof tname, "%s", r.name);
    bool hidden = json_is_true(json_object_get(r.data_stream, "hidden"));
    sc_template_result_fini(&r);
    char index[512];
    backing_name(name, 1, index, sizeof index);
    sc_status st = add_backing(n, name, index, NULL, err);
    if (st != SC_OK)
        return st;
    json_t *rec =
        json_pack("{s:[s],s:i,s:s,s:b,s:b,s:b,s:b}", "indices", index, "generation", 1, "template",
                  tname, "hidden", hidden, "system", 0, "allow_custom_routing", 0, "replicated", 0);
    st = sc_meta_put(n, SC_META_DATA_STREAM, name, rec);
    json_decref(rec);
    if (st == SC_OK)
        sc_log(SC_LOG_INFO, "index", "created data stream [%s]", name);
    return st;
}

/* Concrete names that match no stream make the request fail (404, as Elasticsearch). */
static sc_status select_streams(sc_node *n, const char *names, json_t **out, sc_cluster_error *err)
{
    json_t *all = sc_meta_list(n, SC_META_DATA_STREAM);
    json_t *picked = json_object();
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", names && *names ? names : "*");
    char *save = NULL;
    sc_status st = SC_OK;
    for (char *t = strtok_r(buf, ",", &save); t && st == SC_OK; t = strtok_r(NULL, ",", &save)) {
        const char *pat = !strcmp(t, "_all") ? "*" : t;
        bool wild = strpbrk(pat, "*?") != NULL, any = false;
        const char *k;
        json_t *v;
        json_object_foreach (all, k, v)
            if (wild ? fnmatch(pat, k, 0) == 0 : !strcmp(pat, k)) {
                json_object_set(picked, k, v);
                any = true;
            }
        if (!any && !wild) {
            sc_cluster_error_not_found(err, pat);
            st = SC_ENOTFOUND;
        }
    }
    json_decref(all);
    if (st != SC_OK) {
        json_decref(picked);
        return st;
    }
    *out = picked;
    return SC_OK;
}

sc_status sc_data_stream_get(sc_node *n, const char *names, json_t **out, sc_cluster_error *err)
{
    json_t *picked;
    sc_status st = select_streams(n, names, &picked, err);
    if (st != SC_OK)
        return st;
    json_t *arr = json_array();
    const char *k;
    json_t *v;
    json_object_foreach (picked, k, v)
        json_array_append_new(arr, record_view(n, k, v));
    json_decref(picked);
    *out = arr;
    return SC_OK;
}

sc_status sc_data_stream_delete(sc_node *n, const char *names, sc_cluster_error *err)
{
    json_t *picked;
    sc_status st = select_streams(n, names, &picked, err);
    if (st != SC_OK)
        return st;
    const char *k;
    json_t *v;
    json_object_foreach (picked, k, v) {
        st = sc_meta_put(n, SC_META_DATA_STREAM, k, NULL);
        size_t i;
        json_t *ix;
        json_array_foreach (json_object_get(v, "indices"), i, ix) {
            sc_cluster_error ignored;
            if (sc_node_delete_index(n, json_string_value(ix), &ignored) != SC_OK)
                sc_log(SC_LOG_WARN, "index", "backing index [%s] already gone",
                       json_string_value(ix));
        }
        if (st != SC_OK)
            break;
    }
    json_decref(picked);
    return st;
}

/* Fills met with the conditions the write index meets; true when one is met. */
static bool conditions_met(sc_index *ix, const sc_rollover_conditions *c, json_t *met)
{
    sc_index_stats s;
    sc_index_collect_stats(ix, &s);
    uint64_t biggest = 0, most_docs = 0;
    for (uint32_t sh = 0; sh < ix->settings.number_of_shards; sh++) {
        sc_index_stats ss;
        sc_index_shard_stats(ix, sh, &ss);
        biggest = ss.store_bytes > biggest ? ss.store_bytes : biggest;
        most_docs = ss.docs_count > most_docs ? ss.docs_count : most_docs;
    }
    int64_t age = sc_clock_wall_ms() - ix->creation_date_ms;
    char key[96];
    bool any = false;
#define COND(field, label, value)                                                                  \
    if (c->field >= 0) {                                                                           \
        bool ok = (int64_t)(value) >= c->field;                                                    \
        snprintf(key, sizeof key, "[%s: %lld]", label, (long long)c->field);                       \
        json_object_set_new(met, key, json_boolean(ok));                                           \
        any |= ok;                                                                                 \
    }
    COND(max_age_ms, "max_age", age)
    COND(max_docs, "max_docs", s.docs_count)
    COND(max_primary_shard_size_bytes, "max_primary_shard_size", biggest)
    COND(max_primary_shard_docs, "max_primary_shard_docs", most_docs)
#undef COND
    return any;
}

bool sc__rollover_conditions_met(sc_index *ix, const sc_rollover_conditions *c, json_t *met)
{
    bool has = c->max_age_ms >= 0 || c->max_docs >= 0 || c->max_primary_shard_size_bytes >= 0 ||
               c->max_primary_shard_docs >= 0;
    return conditions_met(ix, c, met) || !has;
}

sc_status sc_data_stream_rollover(sc_node *n, const char *name, const sc_rollover_conditions *c,
                                  bool dry_run, sc_rollover_result *out, sc_cluster_error *err)
{
    memset(out, 0, sizeof *out);
    out->met = json_object();
    json_t *rec = sc_meta_get(n, SC_META_DATA_STREAM, name);
    if (!rec) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "rollover target [%s] does not exist or is not a data stream", name);
        return SC_EINVAL;
    }
    json_t *indices = json_object_get(rec, "indices");
    const char *old = json_string_value(json_array_get(indices, json_array_size(indices) - 1));
    json_int_t gen = json_integer_value(json_object_get(rec, "generation")) + 1;
    snprintf(out->old_index, sizeof out->old_index, "%s", old ? old : "");
    backing_name(name, gen, out->new_index, sizeof out->new_index);
    sc_index *ix = old ? sc_node_index(n, old) : NULL;
    bool go = ix && sc__rollover_conditions_met(ix, c, out->met);
    sc_index_unref(ix);
    sc_status st = SC_OK;
    if (go && !dry_run) {
        st = add_backing(n, name, out->new_index, old, err);
        if (st == SC_OK) {
            json_array_append_new(indices, json_string(out->new_index));
            json_object_set_new(rec, "generation", json_integer(gen));
            st = sc_meta_put(n, SC_META_DATA_STREAM, name, rec);
            out->rolled_over = st == SC_OK;
        }
    }
    json_decref(rec);
    return st;
}

sc_status sc_node_autocreate(sc_node *n, const char *name, sc_cluster_error *err)
{
    sc_template_result r;
    if (sc_template_resolve(n, name, NULL, &r) != SC_OK)
        return SC_ENOMEM;
    bool ds = r.data_stream != NULL;
    sc_template_result_fini(&r);
    if (ds) {
        sc_status st = sc_data_stream_create(n, name, err);
        return st == SC_EEXIST ? SC_OK : st;
    }
    return sc_node_create_index_templated(n, name, NULL, NULL, NULL, err);
}
