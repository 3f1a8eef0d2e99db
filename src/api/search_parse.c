/* _search request parsing: the body and URL parameters into a search_parse, search_after
 * values into sort keys, and the query DSL bound to each target index's mapping. */
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

/* ---- the DSL environment bound to one index's mapping ---- */

typedef struct dsl_ctx {
    sc_index *ix;
    sc_mapping *m;
    const char **fields;
    size_t n_fields;
    sc_arena *arena;
    sc_search_named *named; /* where `_name`d queries go, or NULL */
    size_t cap_named;
} dsl_ctx;

static sc_status env_named(void *ctx, const char *name, sc_query *q)
{
    dsl_ctx *d = ctx;
    sc_search_named *n = d->named;
    if (!n)
        return SC_OK;
    if (n->n == d->cap_named) {
        size_t cap = d->cap_named ? d->cap_named * 2 : 4;
        const char **names = sc_arena_alloc(d->arena, cap * sizeof *names);
        const sc_query **qs = sc_arena_alloc(d->arena, cap * sizeof *qs);
        if (!names || !qs)
            return SC_ENOMEM;
        if (n->n) {
            memcpy(names, n->names, n->n * sizeof *names);
            memcpy(qs, n->queries, n->n * sizeof *qs);
        }
        n->names = names;
        n->queries = qs;
        d->cap_named = cap;
    }
    ((const char **)n->names)[n->n] = name;
    ((const sc_query **)n->queries)[n->n++] = q;
    return SC_OK;
}

static sc_dsl_field_kind env_kind(void *ctx, sc_slice field)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f)
        return SC_DSL_FIELD_UNMAPPED;
    switch (f->type) {
    case SC_MAPPING_TEXT: return SC_DSL_FIELD_TEXT;
    case SC_MAPPING_KEYWORD:
    case SC_MAPPING_IP: return SC_DSL_FIELD_KEYWORD;
    case SC_MAPPING_OBJECT: return SC_DSL_FIELD_UNMAPPED;
    case SC_MAPPING_GEO_POINT: return SC_DSL_FIELD_GEO;
    default: return SC_DSL_FIELD_NUMERIC;
    }
}

static sc_status env_vector(void *ctx, sc_slice field, sc_vec_params *out, bool *indexed)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f)
        return SC_ENOTFOUND;
    if (f->type != SC_MAPPING_DENSE_VECTOR || f->vec.dims == 0)
        return f->type == SC_MAPPING_DENSE_VECTOR ? SC_ENOTFOUND : SC_EINVAL;
    *out = f->vec;
    *indexed = f->index;
    return SC_OK;
}

static sc_status env_analyze(void *ctx, sc_slice field, const char *analyzer, sc_slice text,
                             sc_arena *a, sc_dsl_token **toks, size_t *n)
{
    dsl_ctx *d = ctx;
    const sc_mapping_analysis *an = sc_index_analysis(d->ix);
    const char *name = analyzer;
    if (!name) {
        const sc_mapping_field *f = sc_mapping_find(d->m, field);
        if (f && f->type == SC_MAPPING_TEXT)
            name = sc_mapping_search_analyzer(f, false);
    }
    sc_index_token *it;
    size_t nt;
    SC_TRY(an->analyze(an->ctx, name, text, a, &it, &nt));
    sc_dsl_token *out = sc_arena_alloc(a, (nt ? nt : 1) * sizeof *out);
    if (!out)
        return SC_ENOMEM;
    for (size_t i = 0; i < nt; i++) {
        out[i].term = it[i].term;
        out[i].position = it[i].position;
    }
    *toks = out;
    *n = nt;
    return SC_OK;
}

static sc_status env_encode(void *ctx, sc_slice field, const json_t *value, sc_arena *a,
                            sc_slice *out)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f || f->type == SC_MAPPING_TEXT || f->type == SC_MAPPING_OBJECT)
        return SC_EUNSUPPORTED;
    sc_mapping_value v;
    sc_mapping_error err;
    sc_status st = sc_mapping_encode_value(f, value, sc_index_analysis(d->ix), sc_clock_wall_ms(),
                                           a, &v, &err);
    if (st != SC_OK)
        return st == SC_ENOMEM ? SC_ENOMEM : SC_EINVAL;
    if (v.kind == SC_FIELD_KEYWORD) {
        *out = v.term;
        return SC_OK;
    }
    /* Numeric terms need point queries from the search layer (pending). */
    return SC_EUNSUPPORTED;
}

/* Range / numeric term bounds through the mapping's encoders (numbers, dates, booleans). */
static sc_status env_encode_range(void *ctx, sc_slice field, const json_t *from, const json_t *to,
                                  bool il, bool iu, const char *format, const char *time_zone,
                                  int64_t *lo, int64_t *hi, bool *empty, char *err, size_t err_cap)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f)
        return SC_EUNSUPPORTED;
    switch (f->type) {
    case SC_MAPPING_OBJECT:
    case SC_MAPPING_TEXT:
    case SC_MAPPING_KEYWORD:
    case SC_MAPPING_IP:
    case SC_MAPPING_GEO_POINT: return SC_EUNSUPPORTED;
    default: break;
    }
    sc_date_format *fmt = NULL;
    int64_t tz = 0;
    if (format && sc_date_format_new(sc_slice_cstr(format), &fmt) != SC_OK) {
        snprintf(err, err_cap, "invalid date format [%s]", format);
        return SC_EINVAL;
    }
    if (time_zone && sc_date_parse_tz(sc_slice_cstr(time_zone), &tz) != SC_OK) {
        sc_date_format_free(fmt);
        snprintf(err, err_cap, "invalid time zone [%s]", time_zone);
        return SC_EINVAL;
    }
    sc_mapping_error merr;
    memset(&merr, 0, sizeof merr);
    sc_status st = sc_mapping_encode_range(f, from, to, il, iu, fmt, tz, sc_clock_wall_ms(), lo, hi,
                                           empty, &merr);
    sc_date_format_free(fmt);
    if (st == SC_EINVAL)
        snprintf(err, err_cap, "%s", merr.reason);
    return st == SC_OK || st == SC_ENOMEM ? st : SC_EINVAL;
}

/* Range bounds on keyword (normalized), ip (16 bytes) and text (the raw bytes, as
 * Elasticsearch's TermRangeQuery on a text field) fields as exact terms. */
static sc_status env_encode_term_range(void *ctx, sc_slice field, const json_t *from,
                                       const json_t *to, sc_arena *a, sc_slice *lo, sc_slice *hi,
                                       char *err, size_t err_cap)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f ||
        (f->type != SC_MAPPING_KEYWORD && f->type != SC_MAPPING_IP && f->type != SC_MAPPING_TEXT))
        return SC_EUNSUPPORTED;
    const json_t *v[2] = {from, to};
    sc_slice *o[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        if (!v[i])
            continue;
        if (f->type == SC_MAPPING_TEXT) {
            if (!json_is_string(v[i])) {
                snprintf(err, err_cap, "range bounds of a text field must be strings");
                return SC_EINVAL;
            }
            *o[i] = sc_slice_make(json_string_value(v[i]), json_string_length(v[i]));
            continue;
        }
        sc_mapping_value mv;
        sc_mapping_error merr;
        memset(&merr, 0, sizeof merr);
        sc_status st = sc_mapping_encode_value(f, v[i], sc_index_analysis(d->ix),
                                               sc_clock_wall_ms(), a, &mv, &merr);
        if (st == SC_ENOMEM || st == SC_ELIMIT)
            return st;
        if (st != SC_OK || mv.kind != SC_FIELD_KEYWORD) {
            snprintf(err, err_cap, "%s", merr.reason[0] ? merr.reason : "invalid bound");
            return SC_EINVAL;
        }
        *o[i] = mv.term;
    }
    return SC_OK;
}

/* A CIDR block on an ip field as its first and last address. */
static sc_status env_encode_cidr(void *ctx, sc_slice field, const json_t *value, sc_arena *a,
                                 sc_slice *lo, sc_slice *hi, char *err, size_t err_cap)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f || f->type != SC_MAPPING_IP || !json_is_string(value))
        return SC_EUNSUPPORTED;
    uint8_t *b = sc_arena_alloc(a, 32);
    if (!b)
        return SC_ENOMEM;
    sc_slice text = sc_slice_make(json_string_value(value), json_string_length(value));
    sc_status st = sc_mapping_ip_cidr(text, b, b + 16);
    if (st == SC_ENOTFOUND)
        return SC_EUNSUPPORTED;
    if (st != SC_OK) {
        snprintf(err, err_cap, "invalid CIDR block [%.*s]", (int)(text.len > 64 ? 64 : text.len),
                 (const char *)text.ptr);
        return SC_EINVAL;
    }
    *lo = sc_slice_make(b, 16);
    *hi = sc_slice_make(b + 16, 16);
    return SC_OK;
}

static sc_status env_score_field(void *ctx, sc_slice field, sc_sf_value *value, double *scaling,
                                 int *date)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f)
        return SC_ENOTFOUND;
    *value = SC_SF_VALUE_LONG;
    *scaling = 1;
    *date = f->type == SC_MAPPING_DATE ? 1 : f->type == SC_MAPPING_DATE_NANOS ? 2 : 0;
    switch (f->type) {
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT: *value = SC_SF_VALUE_DOUBLE; return SC_OK;
    case SC_MAPPING_SCALED_FLOAT:
        *value = SC_SF_VALUE_SCALED;
        *scaling = f->scaling_factor;
        return SC_OK;
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
    case SC_MAPPING_BOOLEAN:
    case SC_MAPPING_DATE:
    case SC_MAPPING_DATE_NANOS: return SC_OK;
    default: return SC_EUNSUPPORTED;
    }
}

static const sc_analyzer *env_analyzer_for(void *ctx, sc_slice field)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (f && f->type != SC_MAPPING_TEXT)
        return NULL;
    const sc_analyzer_registry *r = d->ix->analysis;
    if (!f)
        return sc_analyzer_registry_default(r);
    const sc_analyzer *a =
        sc_analyzer_registry_get(r, sc_slice_cstr(sc_mapping_search_analyzer(f, false)));
    return a ? a : sc_analyzer_registry_default(r);
}

static const sc_analyzer *env_analyzer_named(void *ctx, const char *name)
{
    dsl_ctx *d = ctx;
    const sc_analyzer_registry *r = d->ix->analysis;
    return name ? sc_analyzer_registry_get(r, sc_slice_cstr(name))
                : sc_analyzer_registry_default(r);
}

static size_t env_default_fields(void *ctx, const char ***fields)
{
    dsl_ctx *d = ctx;
    if (!d->fields) {
        size_t n = sc_mapping_n_fields(d->m);
        const char **list = sc_arena_alloc(d->arena, (n ? n : 1) * sizeof *list);
        if (!list)
            return 0;
        size_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
            const sc_mapping_field *f = sc_mapping_field_at(d->m, i);
            if (f->type == SC_MAPPING_TEXT || (f->type == SC_MAPPING_KEYWORD && !f->is_multi_field))
                list[k++] = f->path;
        }
        d->fields = list;
        d->n_fields = k;
    }
    *fields = d->fields;
    return d->n_fields;
}

/* ---- request parsing ---- */

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
    static const char *const unsupported[] = {"script_fields", "runtime_mappings",
                                              "terminate_after", "profile", NULL};
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

bool sc__search_parse(sc_rest_req *req, sc_rest_resp *resp, const json_t *body_in, search_parse *sp,
                      bool count)
{
    memset(sp, 0, sizeof *sp);
    sp->size = 10;
    sp->track_total_hits = SC_TRACK_TOTAL_HITS_DEFAULT;
    sp->timeout_ms = -1;
    sp->source = true;
    const json_t *body = body_in;
    if (body) {
        static const char *const known[] = {"query",
                                            "size",
                                            "from",
                                            "track_total_hits",
                                            "timeout",
                                            "_source",
                                            "sort",
                                            "aggs",
                                            "aggregations",
                                            "explain",
                                            "stored_fields",
                                            "docvalue_fields",
                                            "fields",
                                            "min_score",
                                            "terminate_after",
                                            "track_scores",
                                            "version",
                                            "seq_no_primary_term",
                                            "highlight",
                                            "search_after",
                                            "profile",
                                            "post_filter",
                                            "collapse",
                                            "stats",
                                            "pit",
                                            "runtime_mappings",
                                            "indices_boost",
                                            "rescore",
                                            "suggest",
                                            "script_fields",
                                            "ext",
                                            "knn",
                                            "rank",
                                            "retriever",
                                            NULL};
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)body, k, v) {
            bool ok = false;
            for (const char *const *n = known; *n; n++)
                ok |= strcmp(k, *n) == 0;
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
        sp->aggs = json_object_get(body, "aggs");
        if (!sp->aggs)
            sp->aggs = json_object_get(body, "aggregations");
        if (sp->aggs && json_object_get(body, "aggs") && json_object_get(body, "aggregations")) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "Found two aggregation definitions: [aggs] and [aggregations]", NULL, 0);
            return false;
        }
        if (sp->aggs && !json_is_object(sp->aggs)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[aggs] must be an object", NULL, 0);
            return false;
        }
        sp->post_filter = json_object_get(body, "post_filter");
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
        if (!window_int(req, resp, body, "size", &sp->size) ||
            !window_int(req, resp, body, "from", &sp->from))
            return false;
        if ((v2 = json_object_get(body, "track_total_hits")) &&
            !parse_tth(v2, &sp->track_total_hits)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "[track_total_hits] must be a boolean or a non-negative integer", NULL,
                          0);
            return false;
        }
        if ((v2 = json_object_get(body, "timeout")) &&
            (!json_is_string(v2) || !sc_time_parse_ms(json_string_value(v2), &sp->timeout_ms))) {
            sc_rest_error(req, resp, 400, "parse_exception", "failed to parse [timeout]", NULL, 0);
            return false;
        }
        if ((v2 = json_object_get(body, "_source"))) {
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
        if (!refuse_unsupported(req, resp, body))
            return false;
        static const char *const fkeys[] = {"docvalue_fields", "fields"};
        for (int fk = 0; fk < 2; fk++) {
            json_t *dv = json_object_get(body, fkeys[fk]);
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
        json_t *sort = json_object_get(body, "sort");
        if (sort && !parse_sort(req, resp, sort, NULL, sp))
            return false;
        sp->search_after = json_object_get(body, "search_after");
        if (sp->search_after && !json_is_array(sp->search_after)) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[search_after] must be an array",
                          NULL, 0);
            return false;
        }
        if (!sc__search_parse_page(req, resp, body, sp))
            return false;
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
    if (body && !sc__search_parse_vector(req, resp, body, sp))
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

/* The DSL bound to ix's mapping: `json` is a query, or a kNN clause when knn (k defaulting
 * to default_k); `_name`d queries go to *named when not NULL. */
static sc_status parse_query(sc_arena *arena, sc_index *ix, const json_t *json, bool knn,
                             uint32_t default_k, sc_query **out, sc_dsl_error *err,
                             sc_search_named *named)
{
    dsl_ctx d = {.ix = ix, .m = sc_index_mapping(ix), .arena = arena, .named = named};
    sc_dsl_env env = {.ctx = &d,
                      .analyze = env_analyze,
                      .field_kind = env_kind,
                      .encode_term = env_encode,
                      .default_fields = env_default_fields,
                      .analyzer_for = env_analyzer_for,
                      .analyzer_named = env_analyzer_named,
                      .encode_range = env_encode_range,
                      .encode_term_range = env_encode_term_range,
                      .encode_cidr = env_encode_cidr,
                      .score_field = env_score_field,
                      .named = env_named,
                      .vector_field = env_vector,
                      .knn_default_k = default_k};
    sc_status st = knn ? sc_dsl_parse_knn(&env, arena, json, out, err)
                       : sc_dsl_parse(&env, arena, json, out, err);
    sc_mapping_unref(d.m);
    return st;
}

sc_status sc__search_parse_query(sc_arena *arena, sc_index *ix, const json_t *query, sc_query **out,
                                 sc_dsl_error *err)
{
    return parse_query(arena, ix, query, false, 0, out, err, NULL);
}

/* Parses `json` (a query, or a kNN clause when knn) with ix's mapping into *out; on failure
 * writes the DSL error into resp and returns false. */
bool sc__search_parse_for_index(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix,
                                const json_t *json, bool knn, uint32_t default_k, sc_query **out)
{
    sc_dsl_error err;
    sc_status st = parse_query(req->arena, ix, json, knn, default_k, out, &err, NULL);
    if (st == SC_OK)
        return true;
    if (st == SC_ENOMEM || st == SC_ELIMIT) {
        sc_rest_error(req, resp, st == SC_ELIMIT ? 429 : 500,
                      st == SC_ELIMIT ? "circuit_breaking_exception" : "exception",
                      st == SC_ELIMIT ? "[request] Data too large" : "out of memory", NULL, 0);
    } else if (err.type && !strcmp(err.type, "query_shard_exception")) {
        sc_rest_kv kv[] = {{"index", ix->name}, {"index_uuid", ix->uuid}};
        sc_rest_error(req, resp, 400, err.type, err.reason, kv, 2);
    } else {
        sc_rest_error(req, resp, err.status ? err.status : 400,
                      err.type ? err.type : "parsing_exception", err.reason, NULL, 0);
    }
    return false;
}

/* Builds the query tree of each index. */
bool sc__search_build_queries(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                              sc_index **list, size_t n, sc_query **out)
{
    return sc__search_build_queries_named(req, resp, query, list, n, out, NULL, 0);
}

bool sc__search_build_queries_named(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                                    sc_index **list, size_t n, sc_query **out,
                                    sc_search_named *named, uint32_t knn_default_k)
{
    if (n == 0 && query) {
        /* No target index: still validate the query as Elasticsearch parses it up front. */
        sc_query *q = NULL;
        sc_dsl_error err;
        if (sc_dsl_parse(NULL, req->arena, query, &q, &err) != SC_OK) {
            sc_rest_error(req, resp, err.status ? err.status : 400,
                          err.type ? err.type : "parsing_exception", err.reason, NULL, 0);
            return false;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!query) {
            out[i] = sc_query_match_all(req->arena);
            if (!out[i]) {
                sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
                return false;
            }
            continue;
        }
        sc_dsl_error err;
        sc_status st = parse_query(req->arena, list[i], query, false, knn_default_k, &out[i],
                                   &err, named ? &named[i] : NULL);
        if (st != SC_OK) {
            if (err.type && !strcmp(err.type, "query_shard_exception")) {
                sc_rest_kv kv[] = {{"index", list[i]->name}, {"index_uuid", list[i]->uuid}};
                sc_rest_error(req, resp, 400, err.type, err.reason, kv, 2);
            } else {
                sc_rest_error(req, resp, err.status ? err.status : 400,
                              err.type ? err.type : "parsing_exception", err.reason, NULL, 0);
            }
            return false;
        }
    }
    return true;
}
