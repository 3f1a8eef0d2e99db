/* _search response writing: hits with _source filtering (includes/excludes), sort values,
 * _shards with failures, and the "all shards failed" error. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"
#include "api/internal.h"
#include "api/search_internal.h"

/* _source includes/excludes: rewrites a document's source. */
static bool path_match(const char *pattern, const char *path)
{
    /* "a.*" matches "a.b"; "a" matches "a" and "a.b" (objects include their children). */
    size_t pl = strlen(pattern);
    if (fnmatch(pattern, path, 0) == 0)
        return true;
    return strncmp(pattern, path, pl) == 0 && path[pl] == '.';
}

static json_t *filter_source(const json_t *v, const char *prefix, const json_t *inc,
                             const json_t *exc);

static bool any_match(const json_t *list, const char *path, bool prefix_ok)
{
    size_t i;
    json_t *x;
    json_array_foreach (list, i, x) {
        const char *p = json_string_value(x);
        if (!p)
            continue;
        if (path_match(p, path))
            return true;
        /* An object on the way to an included path must be kept. */
        if (prefix_ok) {
            size_t l = strlen(path);
            if (strncmp(p, path, l) == 0 && p[l] == '.')
                return true;
            if (p[0] == '*')
                return true;
        }
    }
    return false;
}

static json_t *filter_source(const json_t *v, const char *prefix, const json_t *inc,
                             const json_t *exc)
{
    json_t *out = json_object();
    const char *k;
    json_t *x;
    json_object_foreach ((json_t *)v, k, x) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (exc && any_match(exc, path, false))
            continue;
        bool full = !inc || json_array_size(inc) == 0 || any_match(inc, path, false);
        if (full && !json_is_object(x)) {
            json_object_set(out, k, x);
            continue;
        }
        if (json_is_object(x) && (full || any_match(inc, path, true))) {
            json_t *sub = filter_source(x, path, full ? NULL : inc, exc);
            if (json_object_size(sub) || full)
                json_object_set_new(out, k, sub);
            else
                json_decref(sub);
        }
    }
    return out;
}

static json_t *as_list(const json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_string(v))
        return json_pack("[O]", v);
    if (json_is_array(v))
        return json_incref((json_t *)v);
    return NULL;
}

void sc__search_write_source(sc_jsonw *w, sc_slice src, const json_t *filter)
{
    if (!filter) {
        sc_jsonw_raw(w, src);
        return;
    }
    json_t *inc = NULL, *exc = NULL;
    if (json_is_object(filter)) {
        inc = as_list(json_object_get(filter, "includes"));
        if (!inc)
            inc = as_list(json_object_get(filter, "include"));
        exc = as_list(json_object_get(filter, "excludes"));
        if (!exc)
            exc = as_list(json_object_get(filter, "exclude"));
    } else {
        inc = as_list(filter);
    }
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)src.ptr, src.len, 0, &jerr);
    if (!json_is_object(doc)) {
        sc_jsonw_raw(w, src);
    } else {
        json_t *f = filter_source(doc, "", inc, exc);
        sc__api_json_write(w, f);
        json_decref(f);
    }
    json_decref(doc);
    json_decref(inc);
    json_decref(exc);
}

void sc__search_write_shards(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r)
{
    sc_jsonw_key(w, "_shards");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", r->shards_total);
    sc_jsonw_kv_int(w, "successful", r->shards_successful);
    sc_jsonw_kv_int(w, "skipped", r->shards_skipped);
    sc_jsonw_kv_int(w, "failed", r->shards_failed);
    if (r->n_failures) {
        sc_jsonw_key(w, "failures");
        sc_jsonw_arr_begin(w);
        for (size_t i = 0; i < r->n_failures; i++) {
            const sc_shard_failure *f = &r->failures[i];
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_int(w, "shard", f->shard);
            sc_jsonw_kv_str(w, "index", sr->indices[f->index_i]->name);
            sc_jsonw_key(w, "node");
            if (f->node_id)
                sc_jsonw_str(w, f->node_id);
            else
                sc_jsonw_null(w);
            sc_jsonw_key(w, "reason");
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "type", f->err.type ? f->err.type : "exception");
            sc_jsonw_kv_str(w, "reason", f->err.reason);
            sc_jsonw_obj_end(w);
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_arr_end(w);
    }
    sc_jsonw_obj_end(w);
}

/* The "sort" array of a hit: numbers decoded as Elasticsearch prints them (dates as epoch
 * millis), keywords as strings, missing values as null. */
/* A hit's inner_hits (nested queries): Elasticsearch's shape, one search-hits object per
 * inner_hits name, each hit with _nested {field, offset}; hits without children get empty
 * ones. */
static void write_inner_hits(sc_jsonw *w, const sc_search_request *sr, const sc_result_hit *h)
{
    const sc_search_named *n = &sr->named[h->index_i];
    sc_jsonw_key(w, "inner_hits");
    sc_jsonw_obj_begin(w);
    for (size_t k = 0; k < n->n_inner; k++) {
        const sc_shard_inner_spec *spec = &n->inner[k];
        const sc_shard_inner_result *r = h->inner ? &h->inner[k] : NULL;
        sc_jsonw_key(w, spec->name);
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "hits");
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "total");
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_int(w, "value", r ? (int64_t)r->total : 0);
        sc_jsonw_kv_str(w, "relation", "eq");
        sc_jsonw_obj_end(w);
        sc_jsonw_key(w, "max_score");
        if (r && r->total && !isnan(r->max_score))
            sc_jsonw_float(w, r->max_score);
        else
            sc_jsonw_null(w);
        sc_jsonw_key(w, "hits");
        sc_jsonw_arr_begin(w);
        for (size_t i = 0; r && i < r->n_hits; i++) {
            const sc_shard_inner_hit *x = &r->hits[i];
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "_index", sr->indices[h->index_i]->name);
            sc_jsonw_key(w, "_id");
            sc_jsonw_strn(w, h->id);
            sc_jsonw_key(w, "_nested");
            sc_jsonw_obj_begin(w);
            sc_jsonw_key(w, "field");
            sc_jsonw_strn(w, spec->path);
            sc_jsonw_kv_int(w, "offset", x->offset);
            sc_jsonw_obj_end(w);
            sc_jsonw_key(w, "_score");
            sc_jsonw_float(w, x->score);
            if (x->source.len) {
                sc_jsonw_key(w, "_source");
                sc_jsonw_raw(w, x->source);
            }
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_arr_end(w);
        sc_jsonw_obj_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_obj_end(w);
}

static void write_sort_values(sc_jsonw *w, const sc_mapping *m, const search_parse *sp,
                              const sc_sort_key *keys)
{
    sc_jsonw_key(w, "sort");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < sp->n_sort; i++) {
        const sc_sort_spec *f = &sp->sort[i];
        const sc_sort_key *v = &keys[i];
        if (v->missing) {
            sc_jsonw_null(w);
        } else if (f->kind == SC_SORT_BY_SCORE) {
            sc_jsonw_float(w, (float)v->d);
        } else if (f->kind == SC_SORT_BY_DOC) {
            sc_jsonw_int(w, v->i);
        } else if (f->kind == SC_SORT_BY_KEYWORD) {
            sc_jsonw_strn(w, v->s.ptr ? v->s : sc_slice_make("", 0));
        } else if (f->mode == SC_SORT_MODE_AVG || f->mode == SC_SORT_MODE_SUM) {
            sc_jsonw_double(w, v->d); /* decoded by the collector */
        } else {
            const sc_mapping_field *mf = m ? sc_mapping_find(m, f->field) : NULL;
            if (mf)
                sc_mapping_write_value(mf, v->i, true, w);
            else
                sc_jsonw_int(w, v->i);
        }
    }
    sc_jsonw_arr_end(w);
}

/* One fetched doc-value field as "name":[values], formatted with the mapping (dates, doubles,
 * booleans, ips as Elasticsearch prints them). */
static void write_dv_field(sc_jsonw *w, const sc_mapping_field *mf, const char *name,
                           const sc_shard_field_values *fv)
{
    sc_jsonw_key(w, name);
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < fv->n_values; i++) {
        if (fv->numeric) {
            if (mf)
                sc_mapping_write_value(mf, fv->nums[i], false, w);
            else
                sc_jsonw_int(w, fv->nums[i]);
        } else if (mf && mf->type == SC_MAPPING_IP && fv->terms[i].len == 16) {
            char ip[64];
            size_t l = sc_mapping_ip_format(fv->terms[i].ptr, ip);
            sc_jsonw_strn(w, sc_slice_make(ip, l));
        } else {
            sc_jsonw_strn(w, fv->terms[i]);
        }
    }
    sc_jsonw_arr_end(w);
}

/* Collects the values at dotted `path` below v into out: objects are walked by the path's
 * segments (also keys that hold several segments, "a.b" as one key), arrays are flattened. */
static void collect_path(const json_t *v, const char *path, json_t *out)
{
    if (!*path) {
        if (json_is_array(v)) {
            size_t i;
            json_t *x;
            json_array_foreach (v, i, x) {
                if (!json_is_object(x) && !json_is_array(x) && !json_is_null(x))
                    json_array_append(out, x);
            }
        } else if (!json_is_object(v) && !json_is_null(v)) {
            json_array_append(out, (json_t *)v);
        }
        return;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x)
            collect_path(x, path, out);
        return;
    }
    if (!json_is_object(v))
        return;
    for (const char *dot = path;; dot++) {
        if (*dot == '.' || !*dot) {
            json_t *child = json_object_getn(v, path, (size_t)(dot - path));
            if (child)
                collect_path(child, *dot ? dot + 1 : dot, out);
            if (!*dot)
                break;
        }
    }
}

/* A hit's "fields": doc values (typed, from the fetch phase) plus, for `fields` entries naming
 * text fields (no doc values), the values found in its _source, as Elasticsearch does. */
static void write_hit_fields(sc_jsonw *w, const sc_mapping *m, const search_parse *sp,
                             const sc_result_hit *h, const sc_mapping_field *const *dv_mf)
{
    json_t *doc = NULL, *extra = NULL;
    for (size_t i = 0; i < sp->n_stored && h->source.len && m; i++) {
        const sc_mapping_field *mf = sc_mapping_find(m, sc_slice_cstr(sp->stored[i]));
        if (!mf || !mf->store || (extra && json_object_get(extra, sp->stored[i])))
            continue;
        json_error_t jerr;
        if (!doc)
            doc = json_loadb((const char *)h->source.ptr, h->source.len, 0, &jerr);
        json_t *vals = json_array();
        collect_path(doc, sp->stored[i], vals);
        if (json_array_size(vals)) {
            if (!extra)
                extra = json_object();
            json_object_set_new(extra, sp->stored[i], vals);
        } else {
            json_decref(vals);
        }
    }
    if (sp->n_src_fields && h->source.len) {
        for (size_t i = 0; i < sp->n_src_fields; i++) {
            const sc_mapping_field *mf =
                m ? sc_mapping_find(m, sc_slice_cstr(sp->src_fields[i])) : NULL;
            if (!mf || mf->type != SC_MAPPING_TEXT)
                continue;
            json_error_t jerr;
            if (!doc)
                doc = json_loadb((const char *)h->source.ptr, h->source.len, 0, &jerr);
            json_t *vals = json_array();
            collect_path(doc, sp->src_fields[i], vals);
            if (json_array_size(vals)) {
                if (!extra)
                    extra = json_object();
                json_object_set_new(extra, sp->src_fields[i], vals);
            } else {
                json_decref(vals);
            }
        }
    }
    const sc_sort_key *ck = h->collapse_key;
    if (h->n_fields || extra || ck) {
        sc_jsonw_key(w, "fields");
        sc_jsonw_obj_begin(w);
        for (size_t i = 0; i < h->n_fields; i++) {
            size_t f = h->fields[i].field;
            const char *name = sp->dv_fields[f];
            write_dv_field(w,
                           dv_mf ? dv_mf[f]
                           : m   ? sc_mapping_find(m, sc_slice_cstr(name))
                                 : NULL,
                           name, &h->fields[i]);
        }
        if (ck) { /* collapse: the group's value ([null] without one) */
            sc_jsonw_key(w, sp->collapse_field);
            sc_jsonw_arr_begin(w);
            if (ck->missing)
                sc_jsonw_null(w);
            else if (sp->collapse.numeric)
                sc_jsonw_int(w, ck->i);
            else
                sc_jsonw_strn(w, ck->s);
            sc_jsonw_arr_end(w);
        }
        const char *k;
        json_t *v;
        json_object_foreach (extra, k, v) {
            sc_jsonw_key(w, k);
            sc__api_json_write(w, v);
        }
        sc_jsonw_obj_end(w);
    }
    json_decref(extra);
    json_decref(doc);
}

/* Writes the body of one search response (used by _search and each _msearch item). */
void sc__search_write_explanation(sc_jsonw *w, const sc_explanation *x)
{
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "value");
    sc_jsonw_float(w, x->value);
    sc_jsonw_kv_str(w, "description", x->description ? x->description : "");
    sc_jsonw_key(w, "details");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < x->n_details; i++)
        sc__search_write_explanation(w, &x->details[i]);
    sc_jsonw_arr_end(w);
    sc_jsonw_obj_end(w);
}

void sc__search_write_response(sc_jsonw *w, const sc_search_request *sr,
                               const sc_search_response *r, const search_parse *sp,
                               uint64_t took_ms, int status_for_msearch)
{
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "took", (int64_t)took_ms);
    sc_jsonw_kv_bool(w, "timed_out", r->timed_out);
    if (sp->terminate_after) /* as Elasticsearch: only when terminate_after was given */
        sc_jsonw_kv_bool(w, "terminated_early", r->terminated_early);
    /* as Elasticsearch: only when batched_reduce_size made partial reduces */
    if (r->num_reduce_phases > 1)
        sc_jsonw_kv_int(w, "num_reduce_phases", r->num_reduce_phases);
    sc__search_write_shards(w, sr, r);
    sc_jsonw_key(w, "hits");
    sc_jsonw_obj_begin(w);
    if (sp->track_total_hits != 0) {
        if (sp->rest_total_int) {
            sc_jsonw_kv_int(w, "total", (int64_t)r->total);
        } else {
            sc_jsonw_key(w, "total");
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_int(w, "value", (int64_t)r->total);
            sc_jsonw_kv_str(w, "relation", r->total_is_lower_bound ? "gte" : "eq");
            sc_jsonw_obj_end(w);
        }
    }
    sc_jsonw_key(w, "max_score");
    bool scored = !sp->n_sort || sr->track_scores;
    if ((r->n_hits == 0 && isnan(r->max_score)) || !scored || (sp->n_sort && isnan(r->max_score)))
        sc_jsonw_null(w);
    else
        sc_jsonw_float(w, isnan(r->max_score) ? 0.0f : r->max_score);
    sc_jsonw_key(w, "hits");
    sc_jsonw_arr_begin(w);
    /* One mapping reference per index for the whole page (formatting fields and sorts). */
    sc_mapping *maps_stack[8];
    memset(maps_stack, 0, sizeof maps_stack);
    sc_mapping **maps = sr->n_indices <= 8 ? maps_stack : calloc(sr->n_indices, sizeof *maps);
    /* The docvalue_fields' mapping entries, looked up once per index rather than per hit and
     * field (up to 8 indices and 8 fields; beyond, per hit as before) */
    enum {
        DV_CACHE = 8
    };
    const sc_mapping_field *dv_mf[DV_CACHE][DV_CACHE];
    bool dv_cached = sr->n_indices <= DV_CACHE && sp->n_dv_fields <= DV_CACHE;
    for (size_t i = 0; i < r->n_hits; i++) {
        const sc_result_hit *h = &r->hits[i];
        const sc_mapping *m = NULL;
        if (maps) {
            if (!maps[h->index_i]) {
                maps[h->index_i] = sc_index_mapping(sr->indices[h->index_i]);
                for (size_t f = 0; dv_cached && f < sp->n_dv_fields; f++)
                    dv_mf[h->index_i][f] =
                        maps[h->index_i]
                            ? sc_mapping_find(maps[h->index_i], sc_slice_cstr(sp->dv_fields[f]))
                            : NULL;
            }
            m = maps[h->index_i];
        }
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "_index", sr->indices[h->index_i]->name);
        if (!sp->stored_none) {
            sc_jsonw_key(w, "_id");
            sc_jsonw_strn(w, h->id);
        }
        if (sp->version && h->has_versions)
            sc_jsonw_kv_int(w, "_version", h->version);
        if (sp->seq_no_primary_term && h->has_versions) {
            sc_jsonw_kv_int(w, "_seq_no", h->seq_no);
            sc_jsonw_kv_int(w, "_primary_term", h->primary_term);
        }
        sc_jsonw_key(w, "_score");
        if (!scored)
            sc_jsonw_null(w);
        else
            sc_jsonw_float(w, h->score);
        if (sp->source && h->source.len) {
            sc_jsonw_key(w, "_source");
            sc__search_write_source(w, h->source, sp->source_filter);
        }
        write_hit_fields(w, m, sp, h, maps && dv_cached ? dv_mf[h->index_i] : NULL);
        sc__search_write_highlight(w, sr, h);
        if (h->n_matched && sr->named) {
            sc_jsonw_key(w, "matched_queries");
            sc_jsonw_arr_begin(w);
            for (size_t k = 0; k < h->n_matched; k++)
                sc_jsonw_str(w, sr->named[h->index_i].names[h->matched[k]]);
            sc_jsonw_arr_end(w);
        }
        if (sp->n_sort && h->sort)
            write_sort_values(w, m, sp, h->sort);
        if (sr->named && sr->named[h->index_i].n_inner)
            write_inner_hits(w, sr, h);
        if (sr->explain && h->explanation) {
            sc_jsonw_key(w, "_explanation");
            sc__search_write_explanation(w, h->explanation);
        }
        if (i < sp->n_inner_out && sp->inner_out[i]) { /* collapse inner_hits */
            sc_jsonw_key(w, "inner_hits");
            sc__api_json_write(w, sp->inner_out[i]);
        }
        sc_jsonw_obj_end(w);
    }
    for (size_t i = 0; maps && i < sr->n_indices; i++)
        sc_mapping_unref(maps[i]);
    if (maps != maps_stack)
        free(maps);
    sc_jsonw_arr_end(w);
    sc_jsonw_obj_end(w);
    if (sp->agg_spec)
        sc__agg_write(w, sp->agg_spec, sp->agg_result, sp->typed_keys);
    if (sp->suggest_out) {
        sc_jsonw_key(w, "suggest");
        sc__api_json_write(w, sp->suggest_out);
    }
    if (sp->profile && r->profiles)
        sc__search_write_profile(w, sr, r, sp);
    if (status_for_msearch)
        sc_jsonw_kv_int(w, "status", status_for_msearch);
    sc_jsonw_obj_end(w);
}

/* search_phase_execution_exception "all shards failed" in Elasticsearch's grouped shape: the
 * shards' causes as root_cause, failed_shards with each shard's reason; the status is the
 * first shard failure's. */
void sc__search_write_all_failed(sc_rest_req *req, sc_rest_resp *resp, const sc_search_request *sr,
                                 const sc_search_response *r)
{
    int status = r->n_failures && r->failures[0].err.status ? r->failures[0].err.status : 503;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, status, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "error");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "root_cause");
    sc_jsonw_arr_begin(&w);
    for (size_t i = 0; i < r->n_failures; i++) {
        /* Grouped: one root cause per distinct (index, type). */
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup |= r->failures[j].index_i == r->failures[i].index_i &&
                   r->failures[j].err.type == r->failures[i].err.type;
        if (dup)
            continue;
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "type",
                        r->failures[i].err.type ? r->failures[i].err.type : "exception");
        sc_jsonw_kv_str(&w, "reason", r->failures[i].err.reason);
        sc_jsonw_kv_str(&w, "index_uuid", sr->indices[r->failures[i].index_i]->uuid);
        sc_jsonw_kv_str(&w, "index", sr->indices[r->failures[i].index_i]->name);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_kv_str(&w, "type", "search_phase_execution_exception");
    sc_jsonw_kv_str(&w, "reason", "all shards failed");
    sc_jsonw_kv_str(&w, "phase", "query");
    sc_jsonw_kv_bool(&w, "grouped", true);
    sc_jsonw_key(&w, "failed_shards");
    sc_jsonw_arr_begin(&w);
    for (size_t i = 0; i < r->n_failures; i++) {
        const sc_shard_failure *f = &r->failures[i];
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_int(&w, "shard", f->shard);
        sc_jsonw_kv_str(&w, "index", sr->indices[f->index_i]->name);
        sc_jsonw_kv_str(&w, "node", f->node_id ? f->node_id : sc_node_id(req->node));
        sc_jsonw_key(&w, "reason");
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "type", f->err.type ? f->err.type : "exception");
        sc_jsonw_kv_str(&w, "reason", f->err.reason);
        sc_jsonw_obj_end(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_int(&w, "status", status);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}
