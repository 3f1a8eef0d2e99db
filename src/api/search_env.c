/* The query DSL bound to one target index's mapping (the sc_dsl_env callbacks: field kinds,
 * analyzers, term and range encoders, score fields, vector fields, named queries), and the
 * per-index query builds of a search. */
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
#include "base/vec.h"
#include "text/analyzer.h"

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

/* inner_hits: {"name", "from" (0), "size" (3), "_source" (true)}; names are unique. */
static sc_status env_inner_hits(void *ctx, const json_t *opts, sc_slice path, const sc_query *inner,
                                char *err, size_t err_cap)
{
    dsl_ctx *d = ctx;
    sc_search_named *n = d->named;
    if (!n)
        return SC_OK;
    sc_shard_inner_spec sp = {.path = path, .query = inner, .size = 3, .source = true};
    char *pname = sc_arena_strndup(d->arena, (const char *)path.ptr, path.len);
    if (!pname)
        return SC_ENOMEM;
    sp.name = pname;
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)opts, k, v) {
        if (!strcmp(k, "name") && json_is_string(v)) {
            sp.name = json_string_value(v);
        } else if ((!strcmp(k, "from") || !strcmp(k, "size")) && json_is_integer(v) &&
                   json_integer_value(v) >= 0 && json_integer_value(v) <= 100) {
            *(!strcmp(k, "from") ? &sp.from : &sp.size) = (uint32_t)json_integer_value(v);
        } else if (!strcmp(k, "_source") && json_is_boolean(v)) {
            sp.source = json_is_true(v);
        } else if (!strcmp(k, "from") || !strcmp(k, "size")) {
            snprintf(err, err_cap,
                     "[inner_hits] [%s] must be an integer from 0 to 100 "
                     "(index.max_inner_result_window)",
                     k);
            return SC_EINVAL;
        } else {
            snprintf(err, err_cap, "[inner_hits] option [%s] is not supported", k);
            return SC_EINVAL;
        }
    }
    for (size_t i = 0; i < n->n_inner; i++)
        if (!strcmp(n->inner[i].name, sp.name)) {
            snprintf(err, err_cap, "[inner_hits] already contains an entry for key [%s]", sp.name);
            return SC_EINVAL;
        }
    sc_shard_inner_spec *list = sc_arena_alloc(d->arena, (n->n_inner + 1) * sizeof *list);
    if (!list)
        return SC_ENOMEM;
    if (n->n_inner)
        memcpy(list, n->inner, n->n_inner * sizeof *list);
    list[n->n_inner] = sp;
    n->inner = list;
    n->n_inner++;
    return SC_OK;
}

static sc_status env_nested(void *ctx, sc_slice path)
{
    dsl_ctx *d = ctx;
    const sc_mapping_field *f = sc_mapping_find(d->m, path);
    if (!f)
        return SC_ENOTFOUND;
    return f->type == SC_MAPPING_OBJECT && f->nested ? SC_OK : SC_EINVAL;
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

static float env_oversample(void *ctx, sc_slice field)
{
    const sc_mapping_field *f = sc_mapping_find(((dsl_ctx *)ctx)->m, field);
    return f && f->type == SC_MAPPING_DENSE_VECTOR ? f->vec_oversample : -1;
}

typedef struct dsl_toks {
    sc_arena *a;
    SC_VEC(sc_dsl_token) v;
} dsl_toks;

static sc_status dsl_tok(void *ctx, const sc_token *t)
{
    dsl_toks *d = ctx;
    uint8_t *copy = sc_arena_alloc(d->a, t->len ? t->len : 1);
    if (!copy)
        return d->a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    memcpy(copy, t->term, t->len);
    sc_dsl_token k = {sc_slice_make(copy, t->len), t->position,
                      t->position_length ? t->position_length : 1};
    return sc_vec_push(&d->v, k);
}

/* The field's search analyzer (or `analyzer`) over text, read straight from the index's
 * registry (as the mapping hook does) so that the tokens keep their position lengths, which
 * phrase building needs for token graphs (synonym_graph, word_delimiter_graph). */
static sc_status env_analyze(void *ctx, sc_slice field, const char *analyzer, sc_slice text,
                             sc_arena *a, sc_dsl_token **toks, size_t *n)
{
    dsl_ctx *d = ctx;
    const char *name = analyzer;
    if (!name) {
        const sc_mapping_field *f = sc_mapping_find(d->m, field);
        if (f && f->type == SC_MAPPING_TEXT)
            name = sc_mapping_search_analyzer(f, false);
    }
    const sc_analyzer_registry *reg = __atomic_load_n(&d->ix->analysis, __ATOMIC_ACQUIRE);
    const sc_analyzer *an = name ? sc_analyzer_registry_get(reg, sc_slice_cstr(name))
                                 : sc_analyzer_registry_default(reg);
    if (!an)
        return SC_ENOTFOUND;
    dsl_toks dt = {.a = a};
    sc_status st = sc_analyzer_analyze(an, text, dsl_tok, &dt);
    sc_dsl_token *out = st == SC_OK ? sc_arena_alloc(a, (dt.v.len ? dt.v.len : 1) * sizeof *out)
                                    : NULL;
    if (st == SC_OK && !out)
        st = SC_ENOMEM;
    if (st == SC_OK && dt.v.len)
        memcpy(out, dt.v.ptr, dt.v.len * sizeof *out);
    *toks = out;
    *n = st == SC_OK ? dt.v.len : 0;
    sc_vec_free(&dt.v);
    return st;
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
    *value = SC_SF_VALUE_LONG;
    *scaling = 1;
    *date = 0;
    if (!f) { /* a feature of a rank_features field: "<field>.<feature>" */
        const uint8_t *dot = field.len ? memrchr(field.ptr, '.', field.len) : NULL;
        const sc_mapping_field *pf =
            dot ? sc_mapping_find(d->m, sc_slice_make(field.ptr, (size_t)(dot - field.ptr))) : NULL;
        if (!pf || pf->type != SC_MAPPING_RANK_FEATURES || dot + 1 == field.ptr + field.len)
            return SC_ENOTFOUND;
        f = pf;
    }
    if (f->type == SC_MAPPING_RANK_FEATURES && f == sc_mapping_find(d->m, field))
        return SC_EUNSUPPORTED; /* the field itself, not one of its features */
    if (f->type == SC_MAPPING_RANK_FEATURE || f->type == SC_MAPPING_RANK_FEATURES) {
        *value = f->positive_score_impact ? SC_SF_VALUE_FEATURE : SC_SF_VALUE_FEATURE_NEG;
        return SC_OK;
    }
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
                      .vector_oversample = env_oversample,
                      .nested_path = env_nested,
                      .inner_hits = env_inner_hits,
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

sc_status sc__search_parse_query_named(sc_arena *arena, sc_index *ix, const json_t *query,
                                       sc_query **out, sc_dsl_error *err, sc_search_named *named)
{
    return parse_query(arena, ix, query, false, 0, out, err, named);
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
