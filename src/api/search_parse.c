/* _search request parsing: the body and URL parameters into a search_parse, and search_after
 * values into sort keys. The query DSL bound to each target index's mapping is search_env.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl.h"
#include "api/internal.h"
#include "api/search_internal.h"
#include "base/clock.h"
#include "base/json.h"

/* One sort entry: "f", "f:desc", {"f": "desc"}, {"f": {"order": .., "missing": ..}}. */
static bool sort_entry(sc_rest_req *req, const char *name, const json_t *spec, sc_sort_spec *f,
                       bool *unmapped_ok, char *why, size_t why_cap)
{
    memset(f, 0, sizeof *f);
    *unmapped_ok = false;
    char *copy = sc_arena_strndup(req->arena, name, strlen(name));
    if (!copy)
        return false;
    const char *order = NULL;
    char *colon = strrchr(copy, ':');
    if (!spec && colon) {
        *colon = '\0';
        order = colon + 1;
    }
    if (json_is_string(spec))
        order = json_string_value(spec);
    else if (json_is_object(spec)) {
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)spec, k, v) {
            if (!strcmp(k, "order") && json_is_string(v))
                order = json_string_value(v);
            else if (!strcmp(k, "missing") && json_is_string(v))
                f->missing_first = !strcmp(json_string_value(v), "_first");
            else if (!strcmp(k, "unmapped_type") && json_is_string(v))
                *unmapped_ok = true;
            else if (!strcmp(k, "mode") && json_is_string(v)) {
                const char *mv = json_string_value(v);
                f->mode = !strcmp(mv, "min")   ? SC_SORT_MODE_MIN
                          : !strcmp(mv, "max") ? SC_SORT_MODE_MAX
                          : !strcmp(mv, "avg") ? SC_SORT_MODE_AVG
                          : !strcmp(mv, "sum") ? SC_SORT_MODE_SUM
                                               : (sc_sort_mode)-1;
                if ((int)f->mode < 0) {
                    snprintf(why, why_cap, "[sort] unknown mode [%s] for [%s]", mv, name);
                    return false;
                }
            } else if (!strcmp(k, "nested") && json_is_object(v)) {
                const char *nk;
                json_t *nv;
                json_object_foreach (v, nk, nv) {
                    if (strcmp(nk, "path") || !json_is_string(nv)) {
                        snprintf(why, why_cap,
                                 "[sort] [nested] option [%s] is not supported (only [path])", nk);
                        return false;
                    }
                    f->nested_path = sc_slice_cstr(json_string_value(nv));
                }
                if (!f->nested_path.len) {
                    snprintf(why, why_cap, "[sort] [nested] requires [path]");
                    return false;
                }
            } else if (strcmp(k, "unmapped_type") && strcmp(k, "mode") && strcmp(k, "format") &&
                       strcmp(k, "numeric_type")) {
                snprintf(why, why_cap, "[sort] option [%s] is not supported", k);
                return false;
            }
        }
    } else if (spec) {
        snprintf(why, why_cap, "[sort] malformed entry for [%s]", name);
        return false;
    }
    if (!strcmp(copy, "_score")) {
        f->kind = SC_SORT_BY_SCORE;
        f->desc = true;
    } else if (!strcmp(copy, "_doc")) {
        f->kind = SC_SORT_BY_DOC;
    } else {
        f->kind = SC_SORT_BY_NUMERIC; /* until sc__search_resolve_sort reads the mapping */
        f->field = sc_slice_cstr(copy);
    }
    if (order) {
        if (!strcmp(order, "desc"))
            f->desc = true;
        else if (!strcmp(order, "asc"))
            f->desc = false;
        else {
            snprintf(why, why_cap, "[sort] unknown order [%s]", order);
            return false;
        }
    }
    return true;
}

/* Parses a sort spec (string, object or array of them); sp->n_sort stays 0 for plain
 * relevance order. */
static bool parse_sort(sc_rest_req *req, sc_rest_resp *resp, const json_t *sort,
                       const char *url_sort, search_parse *sp)
{
    size_t n = url_sort ? 1 : json_is_array(sort) ? json_array_size(sort) : 1;
    if (url_sort)
        for (const char *c = url_sort; *c; c++)
            n += *c == ',';
    sc_sort_spec *fields = sc_arena_calloc(req->arena, n ? n : 1, sizeof *fields);
    bool *unmapped_ok = sc_arena_calloc(req->arena, n ? n : 1, sizeof *unmapped_ok);
    if (!fields || !unmapped_ok)
        return false;
    char why[256] = "";
    size_t k = 0;
    bool ok = true;
    if (url_sort) {
        char *copy = sc_arena_strndup(req->arena, url_sort, strlen(url_sort));
        char *save = NULL;
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && ok;
             t = strtok_r(NULL, ",", &save))
            ok = sort_entry(req, t, NULL, &fields[k], &unmapped_ok[k], why, sizeof why), k++;
    } else {
        for (size_t i = 0; i < n && ok; i++) {
            const json_t *x = json_is_array(sort) ? json_array_get(sort, i) : sort;
            if (json_is_string(x))
                ok = sort_entry(req, json_string_value(x), NULL, &fields[k], &unmapped_ok[k], why,
                                sizeof why),
                k++;
            else if (json_is_object(x) && json_object_size(x) == 1) {
                void *it = json_object_iter((json_t *)x);
                ok = sort_entry(req, json_object_iter_key(it), json_object_iter_value(it),
                                &fields[k], &unmapped_ok[k], why, sizeof why),
                k++;
            } else {
                snprintf(why, sizeof why, "[sort] entries must be strings or single-key objects");
                ok = false;
            }
        }
    }
    if (!ok) {
        sc_rest_error(req, resp, 400, "parsing_exception", why[0] ? why : "bad sort", NULL, 0);
        return false;
    }
    bool by_field = false;
    for (size_t i = 0; i < k; i++)
        by_field |= fields[i].kind != SC_SORT_BY_SCORE || !fields[i].desc;
    if (by_field) {
        sp->sort = fields;
        sp->n_sort = k;
        sp->sort_unmapped_ok = unmapped_ok;
    }
    return true;
}

bool sc__search_check_sort(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                           sc_index *ix)
{
    sc_mapping *m = NULL;
    bool ok = true;
    for (size_t i = 0; i < sp->n_sort && ok; i++) {
        const sc_sort_spec *f = &sp->sort[i];
        /* metadata fields (_id, _index, _seq_no ...) are not in the mapping */
        if ((f->kind != SC_SORT_BY_NUMERIC && f->kind != SC_SORT_BY_KEYWORD) || !f->field.len ||
            f->field.ptr[0] == '_')
            continue;
        if (!m && !(m = sc_index_mapping(ix)))
            break;
        const sc_mapping_field *mf = sc_mapping_find(m, f->field);
        if (f->nested_path.len) {
            const sc_mapping_field *np = sc_mapping_find(m, f->nested_path);
            size_t pl = f->nested_path.len;
            if (!np || np->type != SC_MAPPING_OBJECT || !np->nested) {
                sc_rest_errorf(req, resp, 400, "query_shard_exception",
                               "[nested] nested object under path [%.*s] is not of nested type",
                               (int)(pl > 200 ? 200 : pl), (const char *)f->nested_path.ptr);
                ok = false;
                break;
            }
            if (f->field.len <= pl || memcmp(f->field.ptr, f->nested_path.ptr, pl) ||
                f->field.ptr[pl] != '.') {
                sc_rest_errorf(req, resp, 400, "query_shard_exception",
                               "[nested] nested path [%.*s] is not a parent of the sort field",
                               (int)(pl > 200 ? 200 : pl), (const char *)f->nested_path.ptr);
                ok = false;
                break;
            }
        }
        if (mf && mf->type == SC_MAPPING_TEXT) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "Text fields are not optimised for operations that require "
                           "per-document field data like aggregations and sorting, so these "
                           "operations are disabled by default. Please use a keyword field "
                           "instead. Alternatively, set fielddata=true on [%.*s] in order to "
                           "load field data by uninverting the inverted index. Note that this "
                           "can use significant memory.",
                           (int)(f->field.len > 200 ? 200 : f->field.len),
                           (const char *)f->field.ptr);
            ok = false;
        } else if ((!mf || mf->type == SC_MAPPING_OBJECT) &&
                   !(sp->sort_unmapped_ok && sp->sort_unmapped_ok[i])) {
            sc_rest_errorf(req, resp, 400, "query_shard_exception",
                           "No mapping found for [%.*s] in order to sort on",
                           (int)(f->field.len > 200 ? 200 : f->field.len),
                           (const char *)f->field.ptr);
            ok = false;
        }
    }
    sc_mapping_unref(m);
    return ok;
}

static bool parse_tth(const json_t *v, int64_t *out)
{
    if (json_is_true(v))
        *out = SC_TRACK_TOTAL_HITS_ALL;
    else if (json_is_false(v))
        *out = SC_TRACK_TOTAL_HITS_NONE;
    else if (json_is_integer(v) && json_integer_value(v) >= 0)
        *out = json_integer_value(v);
    else
        return false;
    return true;
}

/* Reads `size` / `from` of a search body as Elasticsearch does: an integer, a number with an
 * integral value (1e9) or a string holding an integer ("10"), not negative; the result window
 * check (from + size <= max_result_window) comes later, per index. On failure writes a 400 that
 * names the value and returns false. */
static bool window_int(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, const char *key,
                       int64_t *out)
{
    const json_t *v = json_object_get(body, key);
    if (!v)
        return true;
    int64_t x = 0;
    bool ok = false;
    if (json_is_integer(v)) {
        x = json_integer_value(v);
        ok = true;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        ok = d == (double)(int64_t)d && d >= -2147483648.0 && d <= 2147483647.0;
        x = ok ? (int64_t)d : 0;
    } else if (json_is_string(v)) {
        const char *t = json_string_value(v);
        char *end;
        errno = 0;
        long long y = strtoll(t, &end, 10);
        ok = *t && !*end && errno == 0;
        x = y;
    }
    if (!ok || x > INT32_MAX) {
        char shown[96];
        if (json_is_string(v))
            snprintf(shown, sizeof shown, "\"%.64s\"", json_string_value(v));
        else if (json_is_real(v))
            snprintf(shown, sizeof shown, "%.17g", json_real_value(v));
        else if (json_is_integer(v))
            snprintf(shown, sizeof shown, "%lld", (long long)json_integer_value(v));
        else
            snprintf(shown, sizeof shown, "%s", sc_json_type_name(v));
        sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                       "[%s] failed to parse field [%s]: expected an integer, found [%s]", key, key,
                       shown);
        return false;
    }
    if (x < 0) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "[%s] parameter cannot be negative, found [%lld]", key, (long long)x);
        return false;
    }
    *out = x;
    return true;
}

/* Search body keys Elasticsearch knows that scry does not implement yet: ignoring them would
 * answer something else than what was asked (no highlights, no collapsing, every hit instead
 * of those above min_score ...), so they are refused with a 400 unless their value asks for
 * nothing (false, null, {} or []). */
static bool refuse_unsupported(sc_rest_req *req, sc_rest_resp *resp, const json_t *body)
{
    static const char *const unsupported[] = {"script_fields", NULL};
    for (const char *const *k = unsupported; *k; k++) {
        const json_t *v = json_object_get(body, *k);
        if (!v || json_is_false(v) || json_is_null(v) ||
            ((json_is_object(v) && !json_object_size(v)) ||
             (json_is_array(v) && !json_array_size(v))))
            continue;
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "[%s] is not supported yet by this server", *k);
        return false;
    }
    return true;
}

/* pre_filter_shard_size, max_concurrent_shard_requests and batched_reduce_size: positive
 * integers with Elasticsearch's lower bounds and messages. false after writing a 400. */
static bool shard_params(sc_rest_req *req, sc_rest_resp *resp, search_parse *sp)
{
    static const struct {
        const char *name, *java;
        int64_t min;
    } p[] = {{"pre_filter_shard_size", "preFilterShardSize", 1},
             {"max_concurrent_shard_requests", "maxConcurrentShardRequests", 1},
             {"batched_reduce_size", "batchedReduceSize", 2}};
    uint32_t *out[] = {&sp->pre_filter_shard_size, &sp->max_concurrent_shard_requests,
                       &sp->batched_reduce_size};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        if (!sc_rest_param_get(req, p[i].name))
            continue;
        bool ok = true;
        int64_t v = sc_rest_param_int(req, p[i].name, 0, &ok);
        if (!ok) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception", "failed to parse [%s]",
                           p[i].name);
            return false;
        }
        if (v < p[i].min) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception", "%s must be >= %lld",
                           p[i].java, (long long)p[i].min);
            return false;
        }
        *out[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    const char *type = sc_rest_param_get(req, "search_type");
    if (type && strcmp(type, "query_then_fetch") && strcmp(type, "dfs_query_then_fetch")) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception", "No search type for [%s]",
                       type);
        return false;
    }
    sp->dfs = type && !strcmp(type, "dfs_query_then_fetch");
    return true;
}

/* "slice": {"id": i, "max": m} (0 <= i < m, m >= 2; "field" is not supported): which part of a
 * scroll or point in time this search reads. false after writing a 400. */
static bool parse_slice(sc_rest_req *req, sc_rest_resp *resp, const json_t *v, search_parse *sp)
{
    if (!v)
        return true;
    const json_t *id = json_object_get(v, "id"), *max = json_object_get(v, "max");
    if (!json_is_object(v) || !json_is_integer(id) || !json_is_integer(max) ||
        json_object_size(v) != 2) {
        sc_rest_error(req, resp, 400, "parsing_exception",
                      "[slice] takes an integer [id] and an integer [max] (a [field] is not "
                      "supported)",
                      NULL, 0);
        return false;
    }
    json_int_t i = json_integer_value(id), m = json_integer_value(max);
    if (m <= 1 || m > 1024 || i < 0 || i >= m) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      m <= 1 || m > 1024 ? "[slice] max must be between 2 and 1024"
                                         : "[slice] id must be at least 0 and less than max",
                      NULL, 0);
        return false;
    }
    sp->slice_id = (uint32_t)i;
    sp->slice_max = (uint32_t)m;
    return true;
}

bool sc__search_parse(sc_rest_req *req, sc_rest_resp *resp, const json_t *body_in, search_parse *sp,
                      bool count)
{
    memset(sp, 0, sizeof *sp);
    sp->size = 10;
    sp->track_total_hits = SC_TRACK_TOTAL_HITS_DEFAULT;
    sp->timeout_ms = -1;
    sp->source = true;
    const json_t *body = body_in;
    /* bit i: the body holds known[i]. The keys of a body are checked against the list below
     * anyway; absent ones (most of them in a request) then cost no hash lookup (some 35
     * json_object_get per search: ~0.5 us, h-req18). */
    uint64_t has = UINT64_MAX;
    if (body) {
#define K(s)                                                                                       \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }
        static const struct {
            const char *name;
            size_t len;
        } known[] = {K("query"),
                     K("size"),
                     K("from"),
                     K("track_total_hits"),
                     K("timeout"),
                     K("_source"),
                     K("sort"),
                     K("aggs"),
                     K("aggregations"),
                     K("explain"),
                     K("stored_fields"),
                     K("docvalue_fields"),
                     K("fields"),
                     K("min_score"),
                     K("terminate_after"),
                     K("track_scores"),
                     K("version"),
                     K("seq_no_primary_term"),
                     K("highlight"),
                     K("search_after"),
                     K("profile"),
                     K("post_filter"),
                     K("collapse"),
                     K("stats"),
                     K("pit"),
                     K("runtime_mappings"),
                     K("indices_boost"),
                     K("rescore"),
                     K("suggest"),
                     K("script_fields"),
                     K("ext"),
                     K("knn"),
                     K("rank"),
                     K("retriever"),
                     K("slice")};
#undef K
        /* known[]'s positions of the keys read below */
        enum {
            B_SIZE = 1,
            B_FROM = 2,
            B_TTH = 3,
            B_TIMEOUT = 4,
            B_SOURCE = 5,
            B_SORT = 6,
            B_AGGS = 7,
            B_AGGREGATIONS = 8,
            B_DOCVALUE_FIELDS = 11,
            B_FIELDS = 12,
            B_TERMINATE_AFTER = 14,
            B_SEARCH_AFTER = 19,
            B_POST_FILTER = 21,
            B_RUNTIME_MAPPINGS = 25,
            B_SCRIPT_FIELDS = 29,
            B_SLICE = 34
        };
#define HAS(b) ((has >> (b)) & 1)
        /* the keys sc__search_parse_page reads (explain .. highlight, min_score, ...) */
        const uint64_t page_keys = 1ull << 9 | 1ull << 10 | 1ull << 13 | 1ull << 15 | 1ull << 16 |
                                   1ull << 17 | 1ull << 18 | 1ull << 20 | 1ull << 22 | 1ull << 26 |
                                   1ull << 27 | 1ull << 28;
        has = 0;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)body, k, v) {
            bool ok = false;
            size_t kl = strlen(k);
            for (size_t i = 0; i < sizeof known / sizeof known[0] && !ok; i++) {
                ok = known[i].len == kl && memcmp(k, known[i].name, kl) == 0;
                if (ok)
                    has |= 1ull << i;
            }
            if (!ok || (count && strcmp(k, "query") != 0 && strcmp(k, "min_score") != 0 &&
                        strcmp(k, "terminate_after") != 0)) {
                sc_rest_errorf(req, resp, 400, "parsing_exception", "Unknown key for a %s in [%s].",
                               json_is_object(v)  ? "START_OBJECT"
                               : json_is_array(v) ? "START_ARRAY"
                                                  : "VALUE_STRING",
                               k);
                return false;
            }
        }
        sp->aggs = HAS(B_AGGS) ? json_object_get(body, "aggs") : NULL;
        if (!sp->aggs && HAS(B_AGGREGATIONS))
            sp->aggs = json_object_get(body, "aggregations");
        if (HAS(B_AGGS) && HAS(B_AGGREGATIONS)) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "Found two aggregation definitions: [aggs] and [aggregations]", NULL, 0);
            return false;
        }
        if (sp->aggs && !json_is_object(sp->aggs)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[aggs] must be an object", NULL, 0);
            return false;
        }
        sp->runtime_mappings =
            HAS(B_RUNTIME_MAPPINGS) ? json_object_get(body, "runtime_mappings") : NULL;
        sp->post_filter = HAS(B_POST_FILTER) ? json_object_get(body, "post_filter") : NULL;
        if (sp->post_filter && !json_is_object(sp->post_filter)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[post_filter] must be an object",
                          NULL, 0);
            return false;
        }
        sp->query = json_object_get(body, "query");
        if (sp->query && !json_is_object(sp->query)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[query] must be an object", NULL,
                          0);
            return false;
        }
        json_t *v2;
        if ((HAS(B_SIZE) && !window_int(req, resp, body, "size", &sp->size)) ||
            (HAS(B_FROM) && !window_int(req, resp, body, "from", &sp->from)))
            return false;
        if (HAS(B_TTH) && (v2 = json_object_get(body, "track_total_hits")) &&
            !parse_tth(v2, &sp->track_total_hits)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "[track_total_hits] must be a boolean or a non-negative integer", NULL,
                          0);
            return false;
        }
        v2 = HAS(B_TERMINATE_AFTER) ? json_object_get(body, "terminate_after") : NULL;
        if (v2 && (!json_is_integer(v2) || json_integer_value(v2) < 0)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "terminateAfter must be > 0", NULL, 0);
            return false;
        }
        if (v2)
            sp->terminate_after = json_integer_value(v2);
        if (HAS(B_TIMEOUT) && (v2 = json_object_get(body, "timeout")) &&
            (!json_is_string(v2) || !sc_time_parse_ms(json_string_value(v2), &sp->timeout_ms))) {
            sc_rest_error(req, resp, 400, "parse_exception", "failed to parse [timeout]", NULL, 0);
            return false;
        }
        if (HAS(B_SOURCE) && (v2 = json_object_get(body, "_source"))) {
            if (!json_is_boolean(v2) && !json_is_string(v2) && !json_is_array(v2) &&
                !json_is_object(v2)) {
                sc_rest_errorf(req, resp, 400, "parsing_exception",
                               "[_source] Expected one of [VALUE_BOOLEAN, VALUE_STRING, "
                               "START_ARRAY, START_OBJECT] but found [%s]",
                               json_is_number(v2) ? "VALUE_NUMBER" : "VALUE_NULL");
                return false;
            }
            if (json_is_false(v2))
                sp->source = false;
            else if (!json_is_true(v2))
                sp->source_filter = v2;
        }
        if (HAS(B_SCRIPT_FIELDS) && !refuse_unsupported(req, resp, body))
            return false;
        static const char *const fkeys[] = {"docvalue_fields", "fields"};
        for (int fk = 0; fk < 2; fk++) {
            json_t *dv =
                HAS(fk ? B_FIELDS : B_DOCVALUE_FIELDS) ? json_object_get(body, fkeys[fk]) : NULL;
            if (!dv)
                continue;
            if (!json_is_array(dv)) {
                sc_rest_errorf(req, resp, 400, "parsing_exception", "[%s] must be an array",
                               fkeys[fk]);
                return false;
            }
            size_t n = json_array_size(dv);
            const char **names =
                sc_arena_alloc(req->arena, (sp->n_dv_fields + n + 1) * sizeof *names);
            if (!names) {
                sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                              "[request] Data too large for the request budget", NULL, 0);
                return false;
            }
            if (sp->n_dv_fields)
                memcpy(names, sp->dv_fields, sp->n_dv_fields * sizeof *names);
            for (size_t i = 0; i < n; i++) {
                json_t *x = json_array_get(dv, i);
                json_t *f = json_is_object(x) ? json_object_get(x, "field") : x;
                if (!json_is_string(f)) {
                    sc_rest_errorf(req, resp, 400, "parsing_exception",
                                   "[%s] entries must be field names or {\"field\": name}",
                                   fkeys[fk]);
                    return false;
                }
                bool dup = false;
                for (size_t j = 0; j < sp->n_dv_fields; j++)
                    dup |= strcmp(names[j], json_string_value(f)) == 0;
                if (!dup)
                    names[sp->n_dv_fields++] = json_string_value(f);
            }
            sp->dv_fields = names;
            if (fk == 1) {
                /* `fields` also covers text fields, whose values come from _source */
                sp->src_fields = sc_arena_alloc(req->arena, (n ? n : 1) * sizeof(char *));
                if (!sp->src_fields) {
                    sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                                  "[request] Data too large for the request budget", NULL, 0);
                    return false;
                }
                for (size_t i = 0; i < n; i++) {
                    json_t *x = json_array_get(dv, i);
                    json_t *f = json_is_object(x) ? json_object_get(x, "field") : x;
                    sp->src_fields[sp->n_src_fields++] = json_string_value(f);
                }
            }
        }
        json_t *sort = HAS(B_SORT) ? json_object_get(body, "sort") : NULL;
        if (sort && !parse_sort(req, resp, sort, NULL, sp))
            return false;
        if (!parse_slice(req, resp, HAS(B_SLICE) ? json_object_get(body, "slice") : NULL, sp))
            return false;
        sp->search_after = HAS(B_SEARCH_AFTER) ? json_object_get(body, "search_after") : NULL;
        if (sp->search_after && !json_is_array(sp->search_after)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[search_after] must be an array",
                          NULL, 0);
            return false;
        }
        if ((has & page_keys) && !sc__search_parse_page(req, resp, body, sp))
            return false;
#undef HAS
    }
    /* URL parameters override the body, as in Elasticsearch. */
    bool ok = true;
    sc__search_page_params(req, sp);
    sp->size = sc_rest_param_int(req, "size", sp->size, &ok);
    sp->from = sc_rest_param_int(req, "from", sp->from, &ok);
    if (!ok || sp->size < 0 || sp->from < 0) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[from] and [size] must be non-negative integers", NULL, 0);
        return false;
    }
    const char *tth = sc_rest_param_get(req, "track_total_hits");
    if (tth) {
        if (!strcmp(tth, "true") || !*tth)
            sp->track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        else if (!strcmp(tth, "false"))
            sp->track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
        else {
            char *end;
            long long x = strtoll(tth, &end, 10);
            if (*end || x < 0) {
                sc_rest_error(req, resp, 400, "illegal_argument_exception",
                              "failed to parse [track_total_hits]", NULL, 0);
                return false;
            }
            sp->track_total_hits = x;
        }
    }
    if (sc_rest_param_get(req, "terminate_after")) {
        sp->terminate_after = sc_rest_param_int(req, "terminate_after", 0, &ok);
        if (!ok || sp->terminate_after < 0) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "terminateAfter must be > 0", NULL, 0);
            return false;
        }
    }
    sp->rest_total_int = sc_rest_param_bool(req, "rest_total_hits_as_int", false);
    sp->typed_keys = sc_rest_param_bool(req, "typed_keys", false);
    const char *sort_param = sc_rest_param_get(req, "sort");
    if (sort_param && *sort_param && sp->n_rescore) {
        sc_rest_error(req, resp, 400, "parsing_exception",
                      "Cannot use [sort] option in conjunction with [rescore].", NULL, 0);
        return false;
    }
    if (sort_param && *sort_param && !parse_sort(req, resp, NULL, sort_param, sp))
        return false;
    if (sp->search_after && json_array_size(sp->search_after) != sp->n_sort) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "search_after has %zu value(s) but sort has %zu field sort(s)",
                       json_array_size(sp->search_after), sp->n_sort);
        return false;
    }
    const char *to = sc_rest_param_get(req, "timeout");
    if (to && !sc_time_parse_ms(to, &sp->timeout_ms)) {
        sc_rest_error(req, resp, 400, "parse_exception", "failed to parse [timeout]", NULL, 0);
        return false;
    }
    if (!shard_params(req, resp, sp))
        return false;
    const char *src = sc_rest_param_get(req, "_source");
    if (src && strcmp(src, "false") == 0)
        sp->source = false;
    /* knn, rank, retriever: known[] 31..33 */
    if (body && (has & 7ull << 31) && !sc__search_parse_vector(req, resp, body, sp))
        return false;
    const char *q = sc_rest_param_get(req, "q");
    if (q) {
        json_t *qs = json_object();
        json_object_set_new(qs, "query", json_string(q));
        const char *df = sc_rest_param_get(req, "df");
        if (df)
            json_object_set_new(qs, "default_field", json_string(df));
        const char *op = sc_rest_param_get(req, "default_operator");
        if (op)
            json_object_set_new(qs, "default_operator", json_string(op));
        const char *an = sc_rest_param_get(req, "analyzer");
        if (an)
            json_object_set_new(qs, "analyzer", json_string(an));
        sp->owned_q = json_pack("{s:o}", "query_string", qs);
        sp->query = sp->owned_q;
    }
    return true;
}

void sc__search_resolve_sort(search_parse *sp, sc_index *const *list, size_t n)
{
    for (size_t i = 0; i < sp->n_sort; i++) {
        sc_sort_spec *f = &sp->sort[i];
        if (f->kind != SC_SORT_BY_NUMERIC && f->kind != SC_SORT_BY_KEYWORD)
            continue;
        if (sc_slice_eq(f->field, sc_slice_cstr("_id"))) {
            /* not in the mapping: the ids' sorted-set doc values, in byte order */
            f->kind = SC_SORT_BY_KEYWORD;
            continue;
        }
        for (size_t x = 0; x < n; x++) {
            sc_mapping *m = sc_index_mapping(list[x]);
            const sc_mapping_field *mf = m ? sc_mapping_find(m, f->field) : NULL;
            if (mf) {
                bool num = sc_mapping_type_is_numeric(mf->type);
                f->kind = num ? SC_SORT_BY_NUMERIC : SC_SORT_BY_KEYWORD;
                f->is_double = mf->type == SC_MAPPING_DOUBLE || mf->type == SC_MAPPING_FLOAT ||
                               mf->type == SC_MAPPING_HALF_FLOAT;
            }
            sc_mapping_unref(m);
            if (mf)
                break;
        }
    }
}

/* search_after values -> typed sort keys, encoded with the first target index's mapping. */
bool sc__search_convert_after(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index *ix, sc_sort_key **out)
{
    *out = NULL;
    if (!sp->search_after || !sp->n_sort)
        return true;
    sc_sort_key *v = sc_arena_calloc(req->arena, sp->n_sort, sizeof *v);
    if (!v)
        return false;
    sc_mapping *m = ix ? sc_index_mapping(ix) : NULL;
    bool ok = true;
    for (size_t i = 0; i < sp->n_sort && ok; i++) {
        const json_t *x = json_array_get(sp->search_after, i);
        const sc_sort_spec *f = &sp->sort[i];
        if (json_is_null(x)) {
            v[i].missing = true;
        } else if (f->kind == SC_SORT_BY_SCORE) {
            ok = json_is_number(x);
            v[i].d = (float)json_number_value(x); /* scores compare as floats */
        } else if (f->kind == SC_SORT_BY_DOC) {
            ok = json_is_integer(x);
            v[i].i = json_integer_value(x);
        } else {
            const sc_mapping_field *mf = m ? sc_mapping_find(m, f->field) : NULL;
            if (mf && sc_mapping_type_is_numeric(mf->type)) {
                sc_mapping_value mv;
                sc_mapping_error merr;
                ok = sc_mapping_encode_value(mf, x, sc_index_analysis(ix), sc_clock_wall_ms(),
                                             req->arena, &mv, &merr) == SC_OK;
                v[i].i = mv.num;
            } else if (json_is_string(x)) {
                v[i].s = sc_slice_make(json_string_value(x), json_string_length(x));
                if (!v[i].s.len)
                    v[i].s = sc_slice_make("", 0);
            } else {
                ok = false;
            }
        }
    }
    sc_mapping_unref(m);
    if (!ok) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "search_after values do not match the sort fields", NULL, 0);
        return false;
    }
    *out = v;
    return true;
}
