/* _search, _count and _msearch: request parsing (body and URL parameters, the query DSL per
 * target index), the coordinator call, and the response shape. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/scroll.h"
#include "cluster/search.h"
#include "cluster/tasks.h"

/* ---- the DSL environment bound to one index's mapping ---- */

typedef struct dsl_ctx {
    sc_index *ix;
    sc_mapping *m;
    const char **fields;
    size_t n_fields;
    sc_arena *arena;
} dsl_ctx;

static sc_dsl_field_kind env_kind(void *ctx, sc_slice field)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, field);
    if (!f)
        return SC_DSL_FIELD_UNMAPPED;
    switch (f->type) {
    case SC_MAPPING_TEXT:
        return SC_DSL_FIELD_TEXT;
    case SC_MAPPING_KEYWORD:
    case SC_MAPPING_IP:
        return SC_DSL_FIELD_KEYWORD;
    case SC_MAPPING_OBJECT:
        return SC_DSL_FIELD_UNMAPPED;
    case SC_MAPPING_GEO_POINT:
        return SC_DSL_FIELD_GEO;
    default:
        return SC_DSL_FIELD_NUMERIC;
    }
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
                                  int64_t *lo, int64_t *hi, bool *empty, char *err,
                                  size_t err_cap)
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
    case SC_MAPPING_GEO_POINT:
        return SC_EUNSUPPORTED;
    default:
        break;
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
    if (!f || (f->type != SC_MAPPING_KEYWORD && f->type != SC_MAPPING_IP &&
               f->type != SC_MAPPING_TEXT))
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

typedef struct search_parse {
    json_t *body;     /* owned */
    json_t *query;    /* borrowed from body or built from q= */
    json_t *owned_q;  /* a query built from URL params */
    int64_t from, size;
    int64_t track_total_hits;
    bool rest_total_int;
    int64_t timeout_ms;
    bool source;
    json_t *source_filter; /* borrowed: includes/excludes spec, or NULL */
    const char **dv_fields; /* docvalue_fields + fields names (arena) */
    size_t n_dv_fields;
    sc_sort_field *sort;    /* field sort (arena); n_sort 0 = relevance order */
    size_t n_sort;
    const json_t *search_after; /* borrowed from the body */
} search_parse;

/* One sort entry: "f", "f:desc", {"f": "desc"}, {"f": {"order": .., "missing": ..}}. */
static bool sort_entry(sc_rest_req *req, const char *name, const json_t *spec, sc_sort_field *f,
                       char *why, size_t why_cap)
{
    memset(f, 0, sizeof *f);
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
        json_object_foreach((json_t *)spec, k, v)
        {
            if (!strcmp(k, "order") && json_is_string(v))
                order = json_string_value(v);
            else if (!strcmp(k, "missing") && json_is_string(v))
                f->missing_first = !strcmp(json_string_value(v), "_first");
            else if (strcmp(k, "unmapped_type") && strcmp(k, "mode") && strcmp(k, "format") &&
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
        f->kind = SC_SORT_SCORE;
        f->desc = true;
    } else if (!strcmp(copy, "_doc")) {
        f->kind = SC_SORT_DOC;
    } else {
        f->kind = SC_SORT_FIELD;
        f->field = copy;
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
    sc_sort_field *fields = sc_arena_calloc(req->arena, n ? n : 1, sizeof *fields);
    if (!fields)
        return false;
    char why[256] = "";
    size_t k = 0;
    bool ok = true;
    if (url_sort) {
        char *copy = sc_arena_strndup(req->arena, url_sort, strlen(url_sort));
        char *save = NULL;
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && ok;
             t = strtok_r(NULL, ",", &save))
            ok = sort_entry(req, t, NULL, &fields[k++], why, sizeof why);
    } else {
        for (size_t i = 0; i < n && ok; i++) {
            const json_t *x = json_is_array(sort) ? json_array_get(sort, i) : sort;
            if (json_is_string(x))
                ok = sort_entry(req, json_string_value(x), NULL, &fields[k++], why, sizeof why);
            else if (json_is_object(x) && json_object_size(x) == 1) {
                void *it = json_object_iter((json_t *)x);
                ok = sort_entry(req, json_object_iter_key(it), json_object_iter_value(it),
                                &fields[k++], why, sizeof why);
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
        by_field |= fields[i].kind == SC_SORT_FIELD ||
                    (fields[i].kind == SC_SORT_SCORE && !fields[i].desc);
    if (by_field) {
        sp->sort = fields;
        sp->n_sort = k;
    }
    return true;
}

static bool parse_tth(const json_t *v, int64_t *out)
{
    if (json_is_true(v))
        *out = -1;
    else if (json_is_false(v))
        *out = 0;
    else if (json_is_integer(v) && json_integer_value(v) >= 0)
        *out = json_integer_value(v);
    else
        return false;
    return true;
}

static bool parse_search(sc_rest_req *req, sc_rest_resp *resp, const json_t *body_in,
                         search_parse *sp, bool count)
{
    memset(sp, 0, sizeof *sp);
    sp->size = 10;
    sp->track_total_hits = 10000;
    sp->timeout_ms = -1;
    sp->source = true;
    const json_t *body = body_in;
    if (body) {
        static const char *const known[] = {
            "query", "size", "from", "track_total_hits", "timeout", "_source", "sort",
            "aggs", "aggregations", "explain", "stored_fields", "docvalue_fields", "fields",
            "min_score", "terminate_after", "track_scores", "version", "seq_no_primary_term",
            "highlight", "search_after", "profile", "post_filter", "collapse", "stats", "pit",
            "runtime_mappings", "indices_boost", "rescore", "suggest", "script_fields", "ext",
            NULL};
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)body, k, v)
        {
            bool ok = false;
            for (const char *const *n = known; *n; n++)
                ok |= strcmp(k, *n) == 0;
            if (!ok || (count && strcmp(k, "query") != 0 && strcmp(k, "min_score") != 0 &&
                        strcmp(k, "terminate_after") != 0)) {
                sc_rest_errorf(req, resp, 400, "parsing_exception",
                               "Unknown key for a %s in [%s].",
                               json_is_object(v)  ? "START_OBJECT"
                               : json_is_array(v) ? "START_ARRAY"
                                                  : "VALUE_STRING",
                               k);
                return false;
            }
        }
        if (json_object_get(body, "aggs") || json_object_get(body, "aggregations")) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "aggregations are not supported yet", NULL, 0);
            return false;
        }
        sp->query = json_object_get(body, "query");
        if (sp->query && !json_is_object(sp->query)) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "[query] must be an object", NULL, 0);
            return false;
        }
        json_t *v2;
        if ((v2 = json_object_get(body, "size")) &&
            (!json_is_integer(v2) || json_integer_value(v2) < 0)) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "[size] parameter cannot be negative, found [%lld]",
                           json_is_integer(v2) ? (long long)json_integer_value(v2) : -1LL);
            return false;
        }
        if (v2)
            sp->size = json_integer_value(v2);
        if ((v2 = json_object_get(body, "from")) &&
            (!json_is_integer(v2) || json_integer_value(v2) < 0)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "[from] parameter cannot be negative", NULL, 0);
            return false;
        }
        if (v2)
            sp->from = json_integer_value(v2);
        if ((v2 = json_object_get(body, "track_total_hits")) &&
            !parse_tth(v2, &sp->track_total_hits)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "[track_total_hits] must be a boolean or a non-negative integer", NULL,
                          0);
            return false;
        }
        if ((v2 = json_object_get(body, "timeout")) &&
            (!json_is_string(v2) ||
             !sc_time_parse_ms(json_string_value(v2), &sp->timeout_ms))) {
            sc_rest_error(req, resp, 400, "parse_exception", "failed to parse [timeout]", NULL,
                          0);
            return false;
        }
        if ((v2 = json_object_get(body, "_source"))) {
            if (json_is_false(v2))
                sp->source = false;
            else if (!json_is_true(v2))
                sp->source_filter = v2;
        }
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
            const char **names = sc_arena_alloc(req->arena,
                                                (sp->n_dv_fields + n + 1) * sizeof *names);
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
    }
    /* URL parameters override the body, as in Elasticsearch. */
    bool ok = true;
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
            sp->track_total_hits = -1;
        else if (!strcmp(tth, "false"))
            sp->track_total_hits = 0;
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
    const char *sort_param = sc_rest_param_get(req, "sort");
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
    const char *src = sc_rest_param_get(req, "_source");
    if (src && strcmp(src, "false") == 0)
        sp->source = false;
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

/* search_after values -> typed sort keys, encoded with the first target index's mapping. */
static bool convert_after(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                          sc_index *ix, sc_sort_value **out)
{
    *out = NULL;
    if (!sp->search_after || !sp->n_sort)
        return true;
    sc_sort_value *v = sc_arena_calloc(req->arena, sp->n_sort, sizeof *v);
    if (!v)
        return false;
    sc_mapping *m = ix ? sc_index_mapping(ix) : NULL;
    bool ok = true;
    for (size_t i = 0; i < sp->n_sort && ok; i++) {
        const json_t *x = json_array_get(sp->search_after, i);
        const sc_sort_field *f = &sp->sort[i];
        if (json_is_null(x)) {
            v[i].missing = true;
        } else if (f->kind == SC_SORT_SCORE) {
            ok = json_is_number(x);
            v[i].score = (float)json_number_value(x);
        } else if (f->kind == SC_SORT_DOC) {
            ok = json_is_integer(x);
            v[i].num = json_integer_value(x);
        } else {
            const sc_mapping_field *mf = m ? sc_mapping_find(m, sc_slice_cstr(f->field)) : NULL;
            if (mf && sc_mapping_type_is_numeric(mf->type)) {
                sc_mapping_value mv;
                sc_mapping_error merr;
                ok = sc_mapping_encode_value(mf, x, sc_index_analysis(ix), sc_clock_wall_ms(),
                                             req->arena, &mv, &merr) == SC_OK;
                v[i].num = mv.num;
            } else if (json_is_string(x)) {
                v[i].str = sc_slice_make(json_string_value(x), json_string_length(x));
                if (!v[i].str.len)
                    v[i].str = sc_slice_make("", 0);
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

/* Builds the query tree of each index. */
static bool build_queries(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                          sc_index **list, size_t n, sc_query **out)
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
        dsl_ctx d = {.ix = list[i], .m = sc_index_mapping(list[i]), .arena = req->arena};
        sc_dsl_env env = {.ctx = &d,
                          .analyze = env_analyze,
                          .field_kind = env_kind,
                          .encode_term = env_encode,
                          .default_fields = env_default_fields,
                          .analyzer_for = env_analyzer_for,
                          .analyzer_named = env_analyzer_named,
                          .encode_range = env_encode_range,
                          .encode_term_range = env_encode_term_range,
                          .encode_cidr = env_encode_cidr};
        sc_dsl_error err;
        sc_status st = sc_dsl_parse(&env, req->arena, query, &out[i], &err);
        sc_mapping_unref(d.m);
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
    json_array_foreach(list, i, x)
    {
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
    json_object_foreach((json_t *)v, k, x)
    {
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

static void write_source(sc_jsonw *w, sc_slice src, const json_t *filter)
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

static void write_shards(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r)
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
            sc_jsonw_kv_str(w, "node", "local-node");
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
static void write_sort_values(sc_jsonw *w, sc_index *ix, const search_parse *sp,
                              const sc_sort_value *keys)
{
    sc_mapping *m = sc_index_mapping(ix);
    sc_jsonw_key(w, "sort");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < sp->n_sort; i++) {
        const sc_sort_field *f = &sp->sort[i];
        const sc_sort_value *v = &keys[i];
        if (v->missing) {
            sc_jsonw_null(w);
        } else if (f->kind == SC_SORT_SCORE) {
            sc_jsonw_float(w, v->score);
        } else if (f->kind == SC_SORT_DOC) {
            sc_jsonw_int(w, v->num);
        } else if (v->str.ptr) {
            sc_jsonw_strn(w, v->str);
        } else {
            const sc_mapping_field *mf = sc_mapping_find(m, sc_slice_cstr(f->field));
            if (mf)
                sc_mapping_write_value(mf, v->num, true, w);
            else
                sc_jsonw_int(w, v->num);
        }
    }
    sc_jsonw_arr_end(w);
    sc_mapping_unref(m);
}

/* Writes the body of one search response (used by _search and each _msearch item). */
static void write_search_response(sc_jsonw *w, const sc_search_request *sr,
                                  const sc_search_response *r, const search_parse *sp,
                                  uint64_t took_ms, int status_for_msearch)
{
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "took", (int64_t)took_ms);
    sc_jsonw_kv_bool(w, "timed_out", r->timed_out);
    write_shards(w, sr, r);
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
    if ((r->n_hits == 0 && isnan(r->max_score)) || sp->n_sort)
        sc_jsonw_null(w);
    else
        sc_jsonw_float(w, isnan(r->max_score) ? 0.0f : r->max_score);
    sc_jsonw_key(w, "hits");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_hits; i++) {
        const sc_result_hit *h = &r->hits[i];
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "_index", sr->indices[h->index_i]->name);
        sc_jsonw_key(w, "_id");
        sc_jsonw_strn(w, h->id);
        sc_jsonw_key(w, "_score");
        if (sp->n_sort)
            sc_jsonw_null(w);
        else
            sc_jsonw_float(w, h->score);
        if (sp->source && h->source.len) {
            sc_jsonw_key(w, "_source");
            write_source(w, h->source, sp->source_filter);
        }
        if (h->fields.len) {
            sc_jsonw_key(w, "fields");
            sc_jsonw_raw(w, h->fields);
        }
        if (sp->n_sort && h->sort)
            write_sort_values(w, sr->indices[h->index_i], sp, h->sort);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
    sc_jsonw_obj_end(w);
    if (status_for_msearch)
        sc_jsonw_kv_int(w, "status", status_for_msearch);
    sc_jsonw_obj_end(w);
}

/* search_phase_execution_exception "all shards failed" in Elasticsearch's grouped shape: the
 * shards' causes as root_cause, failed_shards with each shard's reason; the status is the
 * first shard failure's. */
static void write_all_failed(sc_rest_req *req, sc_rest_resp *resp, const sc_search_request *sr,
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
        sc_jsonw_kv_str(&w, "type", r->failures[i].err.type ? r->failures[i].err.type : "exception");
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
        sc_jsonw_kv_str(&w, "node", sc_node_id(req->node));
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

/* Resolves, parses and runs one search; on success the caller writes the response. Returns
 * false after writing an error into resp. */
typedef struct search_run {
    sc_index **list;
    size_t n;
    sc_search_request sr;
    sc_search_response r;
    search_parse sp;
    uint64_t t0;
} search_run;

static void run_fini(search_run *run)
{
    sc_node_release(run->list, run->n);
    json_decref(run->sp.owned_q);
    run->list = NULL;
    run->n = 0;
}

/* The scroll a search page belongs to (NULL for plain searches). */
typedef struct scroll_page {
    sc_scroll *ctx;    /* acquired context: its indices and pinned snapshots are used */
    bool opening;      /* first page: the context is opened here after resolution */
    bool pit;          /* a point in time: from/size come from the request */
    int64_t keep_alive_ms;
} scroll_page;

static char *scroll_body_text(const json_t *body, const search_parse *sp)
{
    json_t *b = body ? json_deep_copy(body) : json_object();
    if (!b)
        return NULL;
    if (sp->query)
        json_object_set(b, "query", sp->query);
    json_object_del(b, "from");
    json_object_del(b, "size");
    if (!sp->source)
        json_object_set_new(b, "_source", json_false());
    char *text = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return text;
}

static bool run_search_ex(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                          const json_t *body, bool count, search_run *run, scroll_page *sc)
{
    memset(run, 0, sizeof *run);
    run->t0 = sc_clock_now_ns();
    if (!parse_search(req, resp, body, &run->sp, count))
        return false;
    if (sc && sc->ctx) {
        /* A later page: the context's own indices, position and page size. */
        run->list = malloc((sc->ctx->n_indices ? sc->ctx->n_indices : 1) * sizeof *run->list);
        if (!run->list) {
            json_decref(run->sp.owned_q);
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            return false;
        }
        for (size_t i = 0; i < sc->ctx->n_indices; i++) {
            sc_index_ref(sc->ctx->indices[i]);
            run->list[i] = sc->ctx->indices[i];
        }
        run->n = sc->ctx->n_indices;
        if (!sc->pit) {
            run->sp.from = (int64_t)sc->ctx->position;
            run->sp.size = sc->ctx->size;
        }
    } else {
        sc_cluster_error err;
        sc_status st = sc_node_resolve(req->node, index_expr, &run->list, &run->n, &err);
        if (st != SC_OK) {
            json_decref(run->sp.owned_q);
            if (st == SC_ENOTFOUND)
                sc_rest_error_index_not_found(req, resp, err.index);
            else
                sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
            return false;
        }
    }
    for (size_t i = 0; i < run->n; i++) {
        if (sc && sc->ctx && !sc->pit)
            break;
        if (!count && run->sp.from + run->sp.size > run->list[i]->settings.max_result_window) {
            char reason[512];
            snprintf(reason, sizeof reason,
                     "Result window is too large, from + size must be less than or equal to: "
                     "[%lld] but was [%lld]. See the scroll api for a more efficient way to "
                     "request large data sets. This limit can be set by changing the "
                     "[index.max_result_window] index level setting.",
                     (long long)run->list[i]->settings.max_result_window,
                     (long long)(run->sp.from + run->sp.size));
            sc_rest_error(req, resp, 400, "illegal_argument_exception", reason, NULL, 0);
            run_fini(run);
            return false;
        }
    }
    sc_query **queries = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *queries);
    if (!queries) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        run_fini(run);
        return false;
    }
    if (!build_queries(req, resp, run->sp.query, run->list, run->n, queries)) {
        run_fini(run);
        return false;
    }
    sc_sort_value *after = NULL;
    if (!convert_after(req, resp, &run->sp, run->n ? run->list[0] : NULL, &after)) {
        run_fini(run);
        return false;
    }
    if (sc && sc->opening) {
        char *text = scroll_body_text(body, &run->sp);
        sc_status ost = sc_scroll_open(req->node, run->list, run->n, text,
                                       (uint32_t)run->sp.size, sc->keep_alive_ms, &sc->ctx);
        free(text);
        if (ost != SC_OK) {
            sc_rest_error(req, resp, 500, "exception", "cannot open the scroll context", NULL, 0);
            run_fini(run);
            return false;
        }
    }
    sc_task task;
    char desc[256];
    snprintf(desc, sizeof desc, "indices[%s], search_type[QUERY_THEN_FETCH]",
             index_expr ? index_expr : "_all");
    sc_task_begin(req->node, &task, "indices:data/read/search", desc);
    if (req->client_fd >= 0)
        sc_task_watch_client(req->node, &task, req->client_fd);
    run->sr = (sc_search_request){.indices = run->list,
                                  .queries = queries,
                                  .n_indices = run->n,
                                  .from = (uint32_t)run->sp.from,
                                  .size = (uint32_t)run->sp.size,
                                  .track_total_hits = count ? -1 : run->sp.track_total_hits,
                                  .timeout_ms = run->sp.timeout_ms,
                                  .count_only = count,
                                  .fetch_source = run->sp.source,
                                  .task = &task,
                                  .pinned = sc && sc->ctx ? sc->ctx->pinned : NULL,
                                  .dv_fields = run->sp.dv_fields,
                                  .n_dv_fields = run->sp.n_dv_fields,
                                  .sort = run->sp.sort,
                                  .n_sort = run->sp.n_sort,
                                  .search_after = after};
    sc_status st = sc_search_run(req->node, &run->sr, req->arena, &run->r);
    sc_task_end(req->node, &task);
    run->sr.task = NULL;
    if (st == SC_ECANCELLED) {
        sc_rest_error(req, resp, 400, "task_cancelled_exception", "task cancelled", NULL, 0);
        run_fini(run);
        return false;
    }
    if (st == SC_ELIMIT || st == SC_ENOMEM) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large, data for [<search>] would be larger than the "
                      "limit",
                      NULL, 0);
        run_fini(run);
        return false;
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "search_phase_execution_exception", sc_status_str(st), NULL,
                      0);
        run_fini(run);
        return false;
    }
    if (run->r.shards_total > 0 && run->r.shards_failed == run->r.shards_total) {
        write_all_failed(req, resp, &run->sr, &run->r);
        run_fini(run);
        return false;
    }
    uint64_t took_ms = (sc_clock_now_ns() - run->t0) / 1000000;
    for (size_t i = 0; i < run->n; i++) {
        atomic_fetch_add(&run->list[i]->n_search_queries, 1);
        atomic_fetch_add(&run->list[i]->search_time_ns, took_ms * 1000000 / (run->n ? run->n : 1));
    }
    return true;
}

static bool run_search(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                       const json_t *body, bool count, search_run *run)
{
    return run_search_ex(req, resp, index_expr, body, count, run, NULL);
}

/* Writes a search page; with a scroll, adds _scroll_id and advances the context. */
static void respond_page(sc_rest_req *req, sc_rest_resp *resp, search_run *run, sc_scroll *ctx)
{
    bool pit = ctx && ctx->pit;
    uint64_t took_ms = (sc_clock_now_ns() - run->t0) / 1000000;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    if (ctx) {
        /* "_scroll_id" leads the object as in Elasticsearch. */
        sc_buf inner = {0};
        sc_jsonw iw;
        sc_jsonw_init(&iw, &inner, false);
        write_search_response(&iw, &run->sr, &run->r, &run->sp, took_ms, 0);
        if (sc_jsonw_finish(&iw) != SC_OK || inner.len < 2) {
            sc_vec_free(&inner);
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            return;
        }
        json_error_t jerr;
        json_t *obj = json_loadb((const char *)inner.ptr, inner.len, 0, &jerr);
        sc_vec_free(&inner);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, pit ? "pit_id" : "_scroll_id", ctx->id);
        const char *k;
        json_t *v;
        json_object_foreach(obj, k, v)
        {
            sc_jsonw_key(&w, k);
            sc__api_json_write(&w, v);
        }
        sc_jsonw_obj_end(&w);
        json_decref(obj);
        if (!pit)
            ctx->position += run->r.n_hits;
    } else {
        write_search_response(&w, &run->sr, &run->r, &run->sp, took_ms, 0);
    }
    sc_rest_json_end(req, resp, &w);
}

void sc_api_search(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    const char *keep = sc_rest_param_get(req, "scroll");
    scroll_page sp = {0};
    if (keep) {
        if (!sc_time_parse_ms(keep, &sp.keep_alive_ms) || sp.keep_alive_ms <= 0) {
            json_decref(body);
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "failed to parse setting [scroll]", NULL, 0);
            return;
        }
        sp.opening = true;
    }
    json_t *pit = body ? json_object_get(body, "pit") : NULL;
    if (pit) {
        json_t *pid = json_object_get(pit, "id");
        json_t *pka = json_object_get(pit, "keep_alive");
        int64_t ka = 0;
        if (!json_is_string(pid) ||
            (pka && (!json_is_string(pka) || !sc_time_parse_ms(json_string_value(pka), &ka)))) {
            json_decref(body);
            sc_rest_error(req, resp, 400, "parsing_exception", "[pit] requires a string [id]",
                          NULL, 0);
            return;
        }
        if (req->index || keep) {
            json_decref(body);
            sc_rest_error(req, resp, 400, "action_request_validation_exception",
                          req->index ? "Validation Failed: 1: [indices] cannot be used with "
                                       "point in time;"
                                     : "Validation Failed: 1: using [point in time] is not "
                                       "allowed in a scroll context;",
                          NULL, 0);
            return;
        }
        sp.ctx = sc_scroll_acquire(req->node, json_string_value(pid), ka, true);
        if (!sp.ctx) {
            json_decref(body);
            sc_rest_error(req, resp, 404, "search_context_missing_exception",
                          "No search context found for the point in time id", NULL, 0);
            return;
        }
        sp.pit = true;
        /* The body's "pit" key is not a search option: parse the rest. */
        json_object_del(body, "pit");
    }
    search_run run;
    bool ok = run_search_ex(req, resp, req->index, body, false, &run,
                            keep || pit ? &sp : NULL);
    if (ok) {
        respond_page(req, resp, &run, sp.ctx);
        run_fini(&run);
    }
    if (sp.ctx)
        sc_scroll_release(req->node, sp.ctx);
    json_decref(body);
}

/* The scroll id and keep-alive from the body or the URL. */
static const char *scroll_id_of(sc_rest_req *req, const json_t *body, int64_t *keep_ms)
{
    const char *id = req->extra ? req->extra : sc_rest_param_get(req, "scroll_id");
    const char *keep = sc_rest_param_get(req, "scroll");
    if (body) {
        json_t *v = json_object_get(body, "scroll_id");
        if (json_is_string(v))
            id = json_string_value(v);
        v = json_object_get(body, "scroll");
        if (json_is_string(v))
            keep = json_string_value(v);
    }
    *keep_ms = 0;
    if (keep && !sc_time_parse_ms(keep, keep_ms))
        *keep_ms = -1;
    return id;
}

void sc_api_scroll(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    int64_t keep_ms;
    const char *id = scroll_id_of(req, body, &keep_ms);
    if (!id || keep_ms < 0) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      keep_ms < 0 ? "Validation Failed: 1: invalid [scroll];"
                                  : "Validation Failed: 1: scrollId is missing;",
                      NULL, 0);
        return;
    }
    scroll_page sp = {.ctx = sc_scroll_acquire(req->node, id, keep_ms, false)};
    id = sc_arena_strndup(req->arena, id, strlen(id));
    json_decref(body);
    if (!id)
        id = "?";
    if (!sp.ctx) {
        char reason[256];
        snprintf(reason, sizeof reason, "No search context found for id [%.100s]", id);
        sc_rest_error(req, resp, 404, "search_context_missing_exception", reason, NULL, 0);
        return;
    }
    json_t *sbody = NULL;
    if (sp.ctx->body) {
        json_error_t jerr;
        sbody = json_loads(sp.ctx->body, 0, &jerr);
    }
    /* The page request's own URL parameters (size, q, ...) must not apply: parse with none. */
    size_t saved = req->n_params;
    req->n_params = 0;
    search_run run;
    bool ok = run_search_ex(req, resp, NULL, sbody, false, &run, &sp);
    req->n_params = saved;
    if (ok) {
        respond_page(req, resp, &run, sp.ctx);
        run_fini(&run);
    }
    json_decref(sbody);
    sc_scroll_release(req->node, sp.ctx);
}

void sc_api_scroll_clear(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    size_t freed = 0;
    bool all = strstr(req->path, "/_all") != NULL;
    if (all) {
        freed = sc_scroll_clear(req->node, NULL);
    } else {
        json_t *ids = body ? json_object_get(body, "scroll_id") : NULL;
        const char *one = req->extra ? req->extra : sc_rest_param_get(req, "scroll_id");
        if (json_is_string(ids))
            freed += sc_scroll_clear(req->node, json_string_value(ids));
        else if (json_is_array(ids)) {
            size_t i;
            json_t *x;
            json_array_foreach(ids, i, x) if (json_is_string(x)) freed +=
                sc_scroll_clear(req->node, json_string_value(x));
        } else if (one) {
            char *copy = sc_arena_strndup(req->arena, one, strlen(one));
            char *save = NULL;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
                 t = strtok_r(NULL, ",", &save))
                freed += sc_scroll_clear(req->node, t);
        } else {
            json_decref(body);
            sc_rest_error(req, resp, 400, "action_request_validation_exception",
                          "Validation Failed: 1: no scroll ids specified;", NULL, 0);
            return;
        }
    }
    json_decref(body);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, freed || all ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "succeeded", true);
    sc_jsonw_kv_int(&w, "num_freed", (int64_t)freed);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_count(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    search_run run;
    bool ok = run_search(req, resp, req->index, body, true, &run);
    if (ok) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_int(&w, "count", (int64_t)run.r.total);
        write_shards(&w, &run.sr, &run.r);
        sc_jsonw_obj_end(&w);
        sc_rest_json_end(req, resp, &w);
        run_fini(&run);
    }
    json_decref(body);
}

void sc_api_msearch(sc_rest_req *req, sc_rest_resp *resp)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, req->pretty);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "took", 0);
    sc_jsonw_key(&w, "responses");
    sc_jsonw_arr_begin(&w);
    const uint8_t *p = req->body.ptr, *end = p ? p + req->body.len : p;
    size_t lineno = 0;
    bool bad = false;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        sc_slice header = sc_slice_make(p, (size_t)(le - p));
        p = nl ? nl + 1 : end;
        lineno++;
        bool blank = true;
        for (size_t i = 0; i < header.len; i++)
            blank &= header.ptr[i] == ' ' || header.ptr[i] == '\r' || header.ptr[i] == '\t';
        if (blank)
            continue;
        if (p >= end) {
            bad = true;
            break;
        }
        nl = memchr(p, '\n', (size_t)(end - p));
        le = nl ? nl : end;
        sc_slice bodyl = sc_slice_make(p, (size_t)(le - p));
        p = nl ? nl + 1 : end;
        lineno++;
        json_error_t jerr;
        json_t *h = sc__api_json_loadb(header, &jerr);
        json_t *b = sc__api_json_loadb(bodyl, &jerr);
        sc_rest_resp item;
        sc_rest_resp_init(&item);
        if (!json_is_object(h) || !json_is_object(b)) {
            sc_rest_errorf(req, &item, 400, "x_content_parse_exception",
                           "[%zu:1] malformed _msearch line", lineno);
        } else {
            const char *ixs = req->index;
            json_t *hi = json_object_get(h, "index");
            char *joined = NULL;
            if (json_is_string(hi))
                ixs = json_string_value(hi);
            else if (json_is_array(hi)) {
                size_t cap = 1, i;
                json_t *x;
                json_array_foreach(hi, i, x) cap += json_string_length(x) + 1;
                joined = sc_arena_alloc(req->arena, cap);
                if (joined) {
                    joined[0] = '\0';
                    json_array_foreach(hi, i, x)
                    {
                        if (i)
                            strcat(joined, ",");
                        if (json_is_string(x))
                            strcat(joined, json_string_value(x));
                    }
                    ixs = joined;
                }
            }
            search_run run;
            if (run_search(req, &item, ixs, b, false, &run)) {
                uint64_t took_ms = (sc_clock_now_ns() - run.t0) / 1000000;
                sc_jsonw iw;
                sc_jsonw_init(&iw, &item.body, false);
                write_search_response(&iw, &run.sr, &run.r, &run.sp, took_ms, 200);
                if (sc_jsonw_finish(&iw) != SC_OK)
                    sc_rest_error(req, &item, 500, "exception", "out of memory", NULL, 0);
                run_fini(&run);
            } else {
                /* Error items carry "status" inside: rewrite {"error":..,"status":N} as is. */
            }
        }
        json_decref(h);
        json_decref(b);
        sc_jsonw_raw(&w, sc_slice_make(item.body.ptr, item.body.len));
        sc_rest_resp_fini(&item);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    if (bad) {
        sc_vec_free(&out);
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "The msearch request must be terminated by a newline [\\n]", NULL, 0);
        return;
    }
    if (sc_jsonw_finish(&w) != SC_OK) {
        sc_vec_free(&out);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    /* Patch the total took into the fixed-width slot: rewrite the prefix. */
    char took[64];
    int tl = snprintf(took, sizeof took, "{\"took\":%llu",
                      (unsigned long long)((sc_clock_now_ns() - t0) / 1000000));
    sc_vec_clear(&resp->body);
    const char *prefix = req->pretty ? NULL : "{\"took\":0";
    if (prefix && out.len > 9 && memcmp(out.ptr, prefix, 9) == 0) {
        (void)sc_vec_append(&resp->body, (const unsigned char *)took, (size_t)tl);
        (void)sc_vec_append(&resp->body, out.ptr + 9, out.len - 9);
    } else {
        (void)sc_vec_append(&resp->body, out.ptr, out.len);
    }
    sc_vec_free(&out);
    resp->status = 200;
    resp->content_type = "application/json";
}

void sc_api_pit_open(sc_rest_req *req, sc_rest_resp *resp)
{
    const char *keep = sc_rest_param_get(req, "keep_alive");
    int64_t ka;
    if (!keep || !sc_time_parse_ms(keep, &ka) || ka <= 0) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [keep_alive] is missing or invalid;", NULL, 0);
        return;
    }
    sc_index **list;
    size_t n;
    sc_cluster_error err;
    sc_status st = sc_node_resolve(req->node, req->index, &list, &n, &err);
    if (st != SC_OK) {
        if (st == SC_ENOTFOUND)
            sc_rest_error_index_not_found(req, resp, err.index);
        else
            sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    sc_scroll *ctx;
    uint32_t shards = 0;
    for (size_t i = 0; i < n; i++)
        shards += list[i]->settings.number_of_shards;
    st = sc_scroll_open(req->node, list, n, NULL, 0, ka, &ctx);
    sc_node_release(list, n);
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", "cannot open the point in time", NULL, 0);
        return;
    }
    ctx->pit = true;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "id", ctx->id);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", shards);
    sc_jsonw_kv_int(&w, "successful", shards);
    sc_jsonw_kv_int(&w, "skipped", 0);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_scroll_release(req->node, ctx);
}

void sc_api_pit_close(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    json_t *id = json_object_get(body, "id");
    if (!json_is_string(id)) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [id] is missing;", NULL, 0);
        return;
    }
    size_t freed = sc_scroll_clear(req->node, json_string_value(id));
    json_decref(body);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, freed ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "succeeded", true);
    sc_jsonw_kv_int(&w, "num_freed", (int64_t)freed);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}
