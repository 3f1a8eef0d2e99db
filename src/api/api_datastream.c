/* Data stream endpoints: PUT/GET/DELETE /_data_stream/{name}, GET /_data_stream/_stats,
 * POST /{stream or alias}/_rollover[/{new index}] (conditions max_age, max_docs,
 * max_primary_shard_size, max_primary_shard_docs; dry_run), and the write rules of streams (op_type
 * create only,
 * @timestamp required) used by the document endpoints and _bulk. The streams themselves live
 * in cluster/datastream.c. Also the clear 400 of the snapshot endpoints scry does not have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/docs.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/clock.h"
#include "cluster/alias.h"
#include "cluster/datastream.h"
#include "cluster/ops.h"
#include "cluster/search.h"

static void answer(sc_rest_req *req, sc_rest_resp *resp, sc_status st, sc_cluster_error *err)
{
    if (st == SC_OK)
        sc_rest_ack(req, resp);
    else if (st == SC_ENOMEM || st == SC_EIO)
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
    else
        sc__api_cluster_error(req, resp, err);
}

void sc_api_data_stream_put(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_cluster_error err;
    answer(req, resp, sc_data_stream_create(req->node, req->extra, &err), &err);
}

void sc_api_data_stream_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_cluster_error err;
    answer(req, resp, sc_data_stream_delete(req->node, req->extra, &err), &err);
}

void sc_api_data_stream_get(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *arr;
    sc_cluster_error err;
    sc_status st = sc_data_stream_get(req->node, req->extra, &arr, &err);
    if (st != SC_OK) {
        answer(req, resp, st, &err);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "data_streams");
    sc__api_json_write(&w, arr);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(arr);
}

/* Store size and shard count of a stream's backing indices. */
static void stream_numbers(sc_rest_req *req, const json_t *rec, uint64_t *bytes, uint64_t *shards)
{
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get(rec, "indices"), i, v) {
        const char *name = json_string_value(json_object_get(v, "index_name"));
        sc_index *ix = name ? sc_node_index(req->node, name) : NULL;
        if (!ix)
            continue;
        sc_index_stats s;
        sc_index_collect_stats(ix, &s);
        *bytes += s.store_bytes;
        *shards += ix->settings.number_of_shards;
        sc_index_unref(ix);
    }
}

/* The largest @timestamp (epoch ms) in the stream's backing indices, 0 when none: a search
 * sorted by @timestamp descending for one hit. */
static int64_t max_timestamp(sc_rest_req *req, const char *stream)
{
    sc_resolved res;
    sc_cluster_error err;
    if (sc_node_resolve_read(req->node, stream, 0, &res, &err) != SC_OK)
        return 0;
    int64_t out = 0;
    sc_query **queries = sc_arena_calloc(req->arena, res.n ? res.n : 1, sizeof *queries);
    for (size_t i = 0; queries && i < res.n; i++)
        queries[i] = sc_query_match_all(req->arena);
    sc_sort_spec spec = {.kind = SC_SORT_BY_NUMERIC,
                         .field = sc_slice_cstr("@timestamp"),
                         .desc = true,
                         .mode = SC_SORT_MODE_MAX};
    sc_search_request sr = {.indices = res.list,
                            .queries = queries,
                            .n_indices = res.n,
                            .size = 1,
                            .track_total_hits = SC_TRACK_TOTAL_HITS_NONE,
                            .timeout_ms = -1,
                            .sort = &spec,
                            .n_sort = 1};
    sc_search_response r;
    if (queries && res.n && sc_search_run(req->node, &sr, req->arena, &r) == SC_OK && r.n_hits &&
        r.hits[0].sort && !r.hits[0].sort[0].missing)
        out = r.hits[0].sort[0].i;
    sc_resolved_fini(&res);
    return out;
}

void sc_api_data_stream_stats(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *arr;
    sc_cluster_error err;
    sc_status st = sc_data_stream_get(req->node, req->index, &arr, &err);
    if (st != SC_OK) {
        answer(req, resp, st, &err);
        return;
    }
    uint64_t total_bytes = 0, total_shards = 0, backing = 0;
    json_t *rows = json_array();
    size_t i;
    json_t *rec;
    json_array_foreach (arr, i, rec) {
        uint64_t bytes = 0, shards = 0;
        stream_numbers(req, rec, &bytes, &shards);
        size_t n = json_array_size(json_object_get(rec, "indices"));
        json_array_append_new(
            rows,
            json_pack(
                "{s:O,s:I,s:I,s:I}", "data_stream", json_object_get(rec, "name"), "backing_indices",
                (json_int_t)n, "store_size_bytes", (json_int_t)bytes, "maximum_timestamp",
                (json_int_t)max_timestamp(req, json_string_value(json_object_get(rec, "name")))));
        total_bytes += bytes;
        total_shards += shards;
        backing += n;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", (int64_t)total_shards);
    sc_jsonw_kv_int(&w, "successful", (int64_t)total_shards);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_int(&w, "data_stream_count", (int64_t)json_array_size(arr));
    sc_jsonw_kv_int(&w, "backing_indices", (int64_t)backing);
    sc_jsonw_kv_int(&w, "total_store_size_bytes", (int64_t)total_bytes);
    sc_jsonw_key(&w, "data_streams");
    sc__api_json_write(&w, rows);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(rows);
    json_decref(arr);
}

/* "50gb", "10mb", "512b", "1024" -> bytes. */
static bool parse_bytes(const char *s, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return false;
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"kb", 1024.0},
                 {"mb", 1048576.0},
                 {"gb", 1073741824.0},
                 {"tb", 1099511627776.0},
                 {"pb", 1125899906842624.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcasecmp(end, units[i].unit)) {
            double b = v * units[i].mult;
            if (!(b <= 9.2e18))
                return false;
            *out = (int64_t)b;
            return true;
        }
    return false;
}

/* Reads the rollover conditions of a body; false with the error written. */
static bool read_conditions(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                            sc_rollover_conditions *c)
{
    *c = (sc_rollover_conditions){-1, -1, -1, -1};
    const json_t *conds = json_object_get(body, "conditions");
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)conds, k, v) {
        bool ok = true;
        if (!strcmp(k, "max_age"))
            ok = json_is_string(v) && sc_time_parse_ms(json_string_value(v), &c->max_age_ms);
        else if (!strcmp(k, "max_docs"))
            ok = json_is_integer(v) && (c->max_docs = json_integer_value(v)) >= 0;
        else if (!strcmp(k, "max_primary_shard_docs"))
            ok = json_is_integer(v) && (c->max_primary_shard_docs = json_integer_value(v)) >= 0;
        else if (!strcmp(k, "max_primary_shard_size") || !strcmp(k, "max_size"))
            ok = json_is_string(v) &&
                 parse_bytes(json_string_value(v), &c->max_primary_shard_size_bytes);
        else
            ok = false;
        if (!ok) {
            sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                           "[conditions] unknown or invalid condition [%.64s]", k);
            return false;
        }
    }
    return true;
}

void sc_api_rollover(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body = NULL;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    sc_rollover_conditions c;
    if (!read_conditions(req, resp, body, &c)) {
        json_decref(body);
        return;
    }
    bool dry = sc_rest_param_bool(req, "dry_run", false);
    sc_rollover_result r;
    sc_cluster_error err;
    sc_status st = sc_data_stream_exists(req->node, req->index)
                       ? sc_data_stream_rollover(req->node, req->index, &c, dry, &r, &err)
                       : sc_alias_rollover(req->node, req->index, req->extra, &c, dry,
                                           json_object_get(body, "settings"),
                                           json_object_get(body, "mappings"), &r, &err);
    json_decref(body);
    if (st != SC_OK) {
        json_decref(r.met);
        answer(req, resp, st, &err);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "acknowledged", r.rolled_over);
    sc_jsonw_kv_bool(&w, "shards_acknowledged", r.rolled_over);
    sc_jsonw_kv_str(&w, "old_index", r.old_index);
    sc_jsonw_kv_str(&w, "new_index", r.new_index);
    sc_jsonw_kv_bool(&w, "rolled_over", r.rolled_over);
    sc_jsonw_kv_bool(&w, "dry_run", dry);
    sc_jsonw_key(&w, "conditions");
    sc__api_json_write(&w, r.met);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(r.met);
}

bool sc__api_data_stream_write_ok(sc_rest_req *req, const char *name, bool create, sc_slice source,
                                  sc_cluster_error *err)
{
    if (!sc_data_stream_exists(req->node, name))
        return true;
    if (!create) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "only write ops with an op_type of create are allowed in data "
                             "streams");
        return false;
    }
    json_error_t jerr;
    json_t *doc = sc__api_json_loadb(source, &jerr);
    bool has = json_object_get(doc, "@timestamp") != NULL;
    json_decref(doc);
    if (!has)
        sc_cluster_error_set(err, 400, "mapper_parsing_exception",
                             "data stream timestamp field [@timestamp] is missing");
    return has;
}
