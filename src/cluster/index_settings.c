/* An index's settings (parsing and validation into sc_index_settings, the normalized JSON of
 * GET _settings) and its analysis (the analyzer registry bound to the index, reloads, and the
 * analyze/normalize hook the mapping layer calls). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "mapping/analysis.h"
#include "text/analyzer.h"

/* ---- settings ---- */

/* Looks a setting up in any of the accepted forms: {"index.x": v}, {"index": {"x": v}},
 * {"x": v}. Dotted sub-keys ("translog.durability") are looked up both flat and nested. */
static json_t *setting(const json_t *s, const char *key)
{
    if (!s)
        return NULL;
    char flat[128];
    snprintf(flat, sizeof flat, "index.%s", key);
    json_t *v = json_object_get(s, flat);
    if (v)
        return v;
    v = json_object_get(s, key);
    if (v)
        return v;
    json_t *ix = json_object_get(s, "index");
    if (json_is_object(ix)) {
        v = json_object_get(ix, key);
        if (v)
            return v;
        const char *dot = strchr(key, '.');
        if (dot) {
            char head[64];
            snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
            json_t *sub = json_object_get(ix, head);
            if (json_is_object(sub))
                return json_object_get(sub, dot + 1);
        }
    }
    const char *dot = strchr(key, '.');
    if (dot) {
        char head[64];
        snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
        json_t *sub = json_object_get(s, head);
        if (json_is_object(sub))
            return json_object_get(sub, dot + 1);
    }
    return NULL;
}

static bool setting_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_string(v)) {
        char *end;
        errno = 0;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (!errno && end != json_string_value(v) && *end == '\0') {
            *out = x;
            return true;
        }
    }
    return false;
}

/* A nested setting value as GET _settings shows it: strings and objects as given, numbers
 * and booleans as strings. */
static json_t *setting_text(const json_t *v)
{
    if (json_is_string(v) || json_is_object(v) || json_is_array(v))
        return json_deep_copy(v);
    if (json_is_integer(v))
        return json_sprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v))
        return json_sprintf("%g", json_real_value(v));
    return json_string(json_is_true(v) ? "true" : json_is_false(v) ? "false" : "");
}

bool sc_setting_parse_bytes(const json_t *v, uint64_t *out)
{
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return false;
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    const char *str = json_string_value(v);
    char *end;
    errno = 0;
    double x = strtod(str, &end);
    if (errno || end == str || !(x >= 0) || x > 9e18)
        return false;
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"kb", 1024.0},
                 {"k", 1024.0},
                 {"mb", 1048576.0},
                 {"m", 1048576.0},
                 {"gb", 1073741824.0},
                 {"g", 1073741824.0},
                 {"tb", 1099511627776.0},
                 {"t", 1099511627776.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(end, units[i].unit) == 0 && x * units[i].mult <= 9e18) {
            *out = (uint64_t)(x * units[i].mult);
            return true;
        }
    return false;
}

/* Parses settings into s and builds the normalized settings JSON for GET _settings. */
bool sc__index_parse_settings(const json_t *in, sc_index_settings *s, json_t **norm,
                              json_t **analysis, bool durability_async, sc_cluster_error *err)
{
    s->number_of_shards = 1;
    s->number_of_replicas = 1;
    s->refresh_interval_ms = 1000;
    s->max_result_window = 10000;
    s->durability_async = durability_async;
    *analysis = NULL;
    json_t *v;
    int64_t x;
    if ((v = setting(in, "number_of_shards"))) {
        if (!setting_int(v, &x) || x < 1 || x > 1024) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "Failed to parse value [%s] for setting [index.number_of_shards] "
                                 "must be >= 1 and <= 1024",
                                 json_is_string(v) ? json_string_value(v) : "?");
            return false;
        }
        s->number_of_shards = (uint32_t)x;
    }
    if ((v = setting(in, "number_of_replicas"))) {
        if (!setting_int(v, &x) || x < 0 || x > 64) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "Failed to parse value for setting [index.number_of_replicas]");
            return false;
        }
        s->number_of_replicas = (uint32_t)x;
    }
    if ((v = setting(in, "refresh_interval"))) {
        int64_t ms;
        bool ok = json_is_string(v) ? sc_time_parse_ms(json_string_value(v), &ms)
                                    : (json_is_integer(v) && (ms = json_integer_value(v)) >= -1);
        if (!ok) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "failed to parse setting [index.refresh_interval]");
            return false;
        }
        s->refresh_interval_ms = ms;
    }
    if ((v = setting(in, "max_result_window"))) {
        if (!setting_int(v, &x) || x < 1) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "Failed to parse value for setting [index.max_result_window]");
            return false;
        }
        s->max_result_window = x;
    }
    if ((v = setting(in, "translog.durability"))) {
        const char *d = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(d, "async") == 0)
            s->durability_async = true;
        else if (strcmp(d, "request") == 0)
            s->durability_async = false;
        else {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "unknown value for [index.translog.durability] must be one of "
                                 "[REQUEST, ASYNC]");
            return false;
        }
    }
    s->flush_threshold_bytes = 512ull << 20;
    if ((v = setting(in, "translog.flush_threshold_size"))) {
        if (!sc_setting_parse_bytes(v, &s->flush_threshold_bytes) ||
            s->flush_threshold_bytes < 128) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "failed to parse setting [index.translog.flush_threshold_size]: "
                                 "expected a byte size of at least 128b, e.g. 512mb");
            return false;
        }
    }
    s->merge_memory_bytes = 256ull << 20;
    if ((v = setting(in, "merge.memory"))) {
        if (!sc_setting_parse_bytes(v, &s->merge_memory_bytes) || s->merge_memory_bytes == 0) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "failed to parse setting [index.merge.memory]: expected a "
                                 "positive byte size, e.g. 256mb");
            return false;
        }
    }
    s->write_wait_active = 1;
    if ((v = setting(in, "write.wait_for_active_shards"))) {
        json_t *txt = setting_text(v);
        bool ok = json_is_string(txt) &&
                  sc_wait_active_parse(json_string_value(txt), &s->write_wait_active);
        json_decref(txt);
        if (!ok) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "failed to parse setting [index.write.wait_for_active_shards]: "
                                 "expected 'all' or a non-negative integer");
            return false;
        }
    }
    s->routing_num_shards = 0;
    if ((v = setting(in, "number_of_routing_shards"))) {
        if (!setting_int(v, &x) || x < s->number_of_shards || x > 1048576 ||
            x % s->number_of_shards != 0) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "the number of routing shards [%s] must be a multiple of the "
                                 "number of shards [%u]",
                                 json_is_string(v) ? json_string_value(v) : "?",
                                 s->number_of_shards);
            return false;
        }
        s->routing_num_shards = (uint32_t)x;
    }
    if ((v = setting(in, "analysis")) && json_is_object(v))
        *analysis = json_deep_copy(v);

    /* Normalized form: {"index": {all given keys flattened under index, as strings}}. */
    json_t *ix = json_object();
    json_object_set_new(ix, "number_of_shards", json_sprintf("%u", s->number_of_shards));
    json_object_set_new(ix, "number_of_replicas", json_sprintf("%u", s->number_of_replicas));
    if (in) {
        const char *k;
        json_t *val;
        json_object_foreach ((json_t *)in, k, val) {
            const char *key = strncmp(k, "index.", 6) == 0 ? k + 6 : k;
            if (strcmp(key, "index") == 0 && json_is_object(val)) {
                const char *k2;
                json_t *v2;
                json_object_foreach (val, k2, v2) {
                    if (strcmp(k2, "number_of_shards") && strcmp(k2, "number_of_replicas"))
                        json_object_set_new(ix, k2, setting_text(v2));
                }
                continue;
            }
            if (strcmp(key, "number_of_shards") == 0 || strcmp(key, "number_of_replicas") == 0)
                continue;
            if (json_is_integer(val))
                json_object_set_new(ix, key,
                                    json_sprintf("%lld", (long long)json_integer_value(val)));
            else
                json_object_set_new(ix, key, json_deep_copy(val));
        }
    }
    *norm = json_object();
    json_object_set_new(*norm, "index", ix);
    return true;
}

static sc_status ix_analyze(void *ctx, const char *analyzer, sc_slice text, sc_arena *arena,
                            sc_index_token **tokens, size_t *n_tokens);
static sc_status ix_normalize(void *ctx, const char *normalizer, sc_slice text, sc_arena *arena,
                              sc_slice *out);

sc_status sc__index_analysis_bind(sc_index *ix, sc_cluster_error *err)
{
    sc_analysis_error aerr;
    sc_analyzer_registry *r = NULL;
    /* synonyms_path names a file under the node's data folder */
    sc_status st = sc_analyzer_registry_new_dir(
        ix->analysis_json, ix->node ? sc_node_config_get(ix->node)->data_dir : NULL, &r, &aerr);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception", "%s",
                             st == SC_EINVAL ? aerr.message : sc_status_str(st));
        return st;
    }
    ix->analysis = r;
    ix->analysis_hook.ctx = ix;
    ix->analysis_hook.analyze = ix_analyze;
    ix->analysis_hook.normalize = ix_normalize;
    return SC_OK;
}

sc_status sc_index_reload_analysis(sc_index *ix, sc_cluster_error *err)
{
    static pthread_mutex_t reload_mu = PTHREAD_MUTEX_INITIALIZER;
    sc_analysis_error aerr;
    sc_analyzer_registry *r = NULL;
    sc_status st = sc_analyzer_registry_new_dir(
        ix->analysis_json, ix->node ? sc_node_config_get(ix->node)->data_dir : NULL, &r, &aerr);
    if (st != SC_OK) {
        sc_cluster_error_set(err, st == SC_EINVAL ? 400 : 500, "illegal_argument_exception", "%s",
                             st == SC_EINVAL ? aerr.message : sc_status_str(st));
        return st;
    }
    retired_registry *old = malloc(sizeof *old);
    if (!old) {
        sc_analyzer_registry_free(r);
        sc_cluster_error_set(err, 500, "exception", "%s", sc_status_str(SC_ENOMEM));
        return SC_ENOMEM;
    }
    pthread_mutex_lock(&reload_mu);
    old->registry = ix->analysis;
    old->next = ix->analysis_retired;
    ix->analysis_retired = old;
    __atomic_store_n(&ix->analysis, (void *)r, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reload_mu);
    return SC_OK;
}

/* ---- analysis hook for the mapping layer ---- */

typedef struct tok_sink {
    sc_arena *arena;
    SC_VEC(sc_index_token) toks;
    sc_status st;
} tok_sink;

static sc_status collect_token(void *ctx, const sc_token *t)
{
    tok_sink *s = ctx;
    uint8_t *copy = sc_arena_alloc(s->arena, t->len ? t->len : 1);
    if (!copy)
        return s->arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    memcpy(copy, t->term, t->len);
    sc_index_token it = {sc_slice_make(copy, t->len), t->position};
    return sc_vec_push(&s->toks, it);
}

static sc_status ix_analyze(void *ctx, const char *analyzer, sc_slice text, sc_arena *arena,
                            sc_index_token **tokens, size_t *n_tokens)
{
    sc_index *ix = ctx;
    const sc_analyzer *a = analyzer
                               ? sc_analyzer_registry_get(ix->analysis, sc_slice_cstr(analyzer))
                               : sc_analyzer_registry_default(ix->analysis);
    if (!a)
        return SC_ENOTFOUND;
    tok_sink s = {.arena = arena};
    sc_status st = sc_analyzer_analyze(a, text, collect_token, &s);
    if (st != SC_OK) {
        sc_vec_free(&s.toks);
        return st;
    }
    sc_index_token *out = sc_arena_alloc(arena, (s.toks.len ? s.toks.len : 1) * sizeof *out);
    if (!out) {
        sc_vec_free(&s.toks);
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    }
    if (s.toks.len)
        memcpy(out, s.toks.ptr, s.toks.len * sizeof *out);
    *tokens = out;
    *n_tokens = s.toks.len;
    sc_vec_free(&s.toks);
    return SC_OK;
}

static sc_status ix_normalize(void *ctx, const char *normalizer, sc_slice text, sc_arena *arena,
                              sc_slice *out)
{
    sc_index *ix = ctx;
    return sc_mapping_normalize_with(ix->analysis, normalizer, text, arena, out);
}

const sc_mapping_analysis *sc_index_analysis(sc_index *ix)
{
    return &ix->analysis_hook;
}

/* An integer setting given as a number or as its decimal text (the stored form). */
static bool int_setting(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    char *end;
    if (!s || !*s)
        return false;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*end || errno)
        return false;
    *out = x;
    return true;
}

/* Applies the dynamic settings of src (flat "index.x", or the "index" object's keys; numbers or
 * their text) to ix and its settings JSON (a null value removes a key, restoring the default). */
static void apply_dynamic(sc_index *ix, const json_t *src)
{
    const char *k;
    json_t *v;
    json_t *target = json_object_get(ix->settings_json, "index");
    json_object_foreach ((json_t *)src, k, v) {
        const char *key = strncmp(k, "index.", 6) == 0 ? k + 6 : k;
        int64_t ms;
        if (strcmp(key, "refresh_interval") == 0 && json_is_string(v) &&
            sc_time_parse_ms(json_string_value(v), &ms))
            ix->settings.refresh_interval_ms = ms;
        else if (strcmp(key, "refresh_interval") == 0 && json_is_null(v))
            ix->settings.refresh_interval_ms = 1000;
        int64_t x;
        if (strcmp(key, "max_result_window") == 0 && int_setting(v, &x))
            ix->settings.max_result_window = x;
        const json_t *fts = strcmp(key, "translog.flush_threshold_size") == 0 ? v
                            : strcmp(key, "translog") == 0 && json_is_object(v)
                                ? json_object_get(v, "flush_threshold_size")
                                : NULL;
        uint64_t fts_bytes;
        if (fts && json_is_null(fts))
            fts_bytes = 512ull << 20;
        if (fts && (json_is_null(fts) || sc_setting_parse_bytes(fts, &fts_bytes))) {
            ix->settings.flush_threshold_bytes = fts_bytes;
            sc_index_set_flush_threshold(ix, fts_bytes);
        }
        const json_t *wv = strcmp(key, "write.wait_for_active_shards") == 0 ? v
                           : strcmp(key, "write") == 0 && json_is_object(v)
                               ? json_object_get(v, "wait_for_active_shards")
                               : NULL;
        int32_t wa = 1;
        if (wv && int_setting(wv, &x))
            wa = (int32_t)x;
        else if (wv && json_is_string(wv) && !sc_wait_active_parse(json_string_value(wv), &wa))
            wa = 1;
        if (wv)
            ix->settings.write_wait_active = wa; /* null: back to 1 */
        if (strcmp(key, "number_of_replicas") == 0 && int_setting(v, &x) && x >= 0)
            ix->settings.number_of_replicas = (uint32_t)x;
        if (json_is_null(v))
            json_object_del(target, key);
        else if (json_is_integer(v))
            json_object_set_new(target, key,
                                json_sprintf("%lld", (long long)json_integer_value(v)));
        else
            json_object_set_new(target, key, json_deep_copy(v));
    }
}

void sc_index_update_settings(sc_index *ix, const json_t *src)
{
    /* the metadata write lock: from the change to its queuing, the placement thread does not
     * take the settings of an older view over it (placement.c take_meta) */
    pthread_mutex_lock(sc__node_alias_write_mu(ix->node));
    apply_dynamic(ix, src);
    sc__index_persist_meta(ix);
    pthread_mutex_unlock(sc__node_alias_write_mu(ix->node));
}

void sc__index_take_settings(sc_index *ix, const json_t *settings)
{
    if (!json_is_object(settings) || json_equal(settings, ix->settings_json))
        return;
    const json_t *src = json_object_get(settings, "index");
    if (!json_is_object(src))
        return;
    apply_dynamic(ix, src);
    json_t *copy = json_deep_copy(settings);
    if (!copy)
        return;
    json_t *old = ix->settings_json;
    ix->settings_json = copy;
    json_decref(old);
    if (sc__index_write_meta_local(ix) != SC_OK)
        sc_log(SC_LOG_WARN, "index", "could not persist metadata of [%s]", ix->name);
}
