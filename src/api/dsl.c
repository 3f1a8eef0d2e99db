/* Query DSL -> sc_query (see dsl.h): the shared helpers, the compound queries (bool,
 * constant_score, boosting, dis_max), match_all / match_none, and the table mapping query names
 * to their handlers (dsl_fulltext.c, dsl_term.c). */
#include "api/dsl.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl_internal.h"

sc_status sc__dsl_fail(P *p, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->reason, sizeof p->err->reason, fmt, ap);
    va_end(ap);
    p->err->type = type;
    p->err->status = 400;
    return SC_EPARSE;
}

sc_status sc__dsl_oom(P *p)
{
    if (p->a->over_budget) {
        p->err->type = "circuit_breaking_exception";
        p->err->status = 429;
        snprintf(p->err->reason, sizeof p->err->reason,
                 "[request] Data too large, query exceeds the request memory budget");
        return SC_ELIMIT;
    }
    p->err->type = "exception";
    p->err->status = 500;
    snprintf(p->err->reason, sizeof p->err->reason, "out of memory");
    return SC_ENOMEM;
}

sc_slice sc__dsl_jstr(const json_t *s)
{
    return sc_slice_make(json_string_value(s), json_string_length(s));
}

/* Text form of a scalar JSON value (numbers as Java prints them for integers). */
bool sc__dsl_scalar_text(P *p, const json_t *v, sc_slice *out)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: *out = sc__dsl_jstr(v); return true;
    case JSON_INTEGER: snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: snprintf(buf, sizeof buf, "%.17g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, sizeof buf, "true"); break;
    case JSON_FALSE: snprintf(buf, sizeof buf, "false"); break;
    default: return false;
    }
    char *s = sc_arena_strndup(p->a, buf, strlen(buf));
    if (!s)
        return false;
    *out = sc_slice_cstr(s);
    return true;
}

sc_dsl_field_kind sc__dsl_field_kind(P *p, sc_slice field)
{
    return p->env && p->env->field_kind ? p->env->field_kind(p->env->ctx, field)
                                        : SC_DSL_FIELD_TEXT;
}

sc_status sc__dsl_no_geo(P *p, sc_slice field)
{
    if (sc__dsl_field_kind(p, field) != SC_DSL_FIELD_GEO)
        return SC_OK;
    return sc__dsl_fail(p, "query_shard_exception",
                        "Geometry fields do not support exact searching, use dedicated geometry "
                        "queries instead: [%.*s]",
                        (int)field.len, (const char *)field.ptr);
}

sc_status sc__dsl_encode_term(P *p, sc_slice field, const json_t *v, sc_slice *out)
{
    if (p->env && p->env->encode_term) {
        sc_status st = p->env->encode_term(p->env->ctx, field, v, p->a, out);
        if (st == SC_OK)
            return SC_OK;
        if (st == SC_EINVAL)
            return sc__dsl_fail(p, "query_shard_exception",
                                "failed to create query: invalid value for field [%.*s]",
                                (int)field.len, (const char *)field.ptr);
        if (st != SC_EUNSUPPORTED)
            return st == SC_ENOMEM || st == SC_ELIMIT ? sc__dsl_oom(p) : st;
    }
    if (!sc__dsl_scalar_text(p, v, out))
        return sc__dsl_fail(p, "parsing_exception", "[term] value of field [%.*s] must be a scalar",
                            (int)field.len, (const char *)field.ptr);
    return SC_OK;
}

sc_status sc__dsl_analyze(P *p, sc_slice field, const char *analyzer, sc_slice text,
                          sc_dsl_token **toks, size_t *n)
{
    if (p->env && p->env->analyze) {
        sc_status st = p->env->analyze(p->env->ctx, field, analyzer, text, p->a, toks, n);
        if (st == SC_ENOTFOUND)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "analyzer [%s] has not been configured", analyzer ? analyzer : "?");
        if (st != SC_OK)
            return sc__dsl_oom(p);
        return SC_OK;
    }
    /* Fallback: lowercase ASCII, split on whitespace and punctuation. */
    size_t cap = text.len / 2 + 1;
    sc_dsl_token *t = sc_arena_alloc(p->a, cap * sizeof *t);
    char *buf = sc_arena_alloc(p->a, text.len + 1);
    if (!t || !buf)
        return sc__dsl_oom(p);
    size_t nt = 0, i = 0;
    uint32_t pos = 0;
    while (i < text.len) {
        while (i < text.len && !isalnum(text.ptr[i]) && text.ptr[i] < 0x80)
            i++;
        size_t s = i;
        while (i < text.len && (isalnum(text.ptr[i]) || text.ptr[i] >= 0x80)) {
            buf[i] = (char)tolower(text.ptr[i]);
            i++;
        }
        if (i > s && nt < cap) {
            t[nt].term = sc_slice_make(buf + s, i - s);
            t[nt].position = pos++;
            t[nt].position_length = 1;
            nt++;
        }
    }
    *toks = t;
    *n = nt;
    return SC_OK;
}

bool sc__dsl_get_float(const json_t *v, float *out)
{
    if (json_is_number(v)) {
        *out = (float)json_number_value(v);
        return true;
    }
    if (json_is_string(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        if (end != json_string_value(v) && *end == '\0') {
            *out = (float)d;
            return true;
        }
    }
    return false;
}

bool sc__dsl_get_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v))) {
        *out = (int64_t)json_real_value(v);
        return true;
    }
    if (json_is_string(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (end != json_string_value(v) && *end == '\0') {
            *out = x;
            return true;
        }
    }
    return false;
}

bool sc_dsl_minimum_should_match(const json_t *spec, size_t n, int32_t *out)
{
    int64_t v = 0;
    if (json_is_integer(spec)) {
        v = json_integer_value(spec);
        if (v < 0)
            v = (int64_t)n + v;
    } else if (json_is_string(spec)) {
        const char *s = json_string_value(spec);
        char *end;
        double d = strtod(s, &end);
        if (end == s)
            return false;
        while (*end == ' ')
            end++;
        if (*end == '%') {
            /* Lucene: floor of the percentage; a negative percentage leaves that many out. */
            int64_t k = (int64_t)((double)n * fabs(d) / 100.0);
            v = d < 0 ? (int64_t)n - k : k;
            end++;
        } else {
            v = (int64_t)d;
            if (v < 0)
                v = (int64_t)n + v;
        }
        if (*end != '\0')
            return false;
    } else {
        return false;
    }
    if (v < 0)
        v = 0;
    if (v > (int64_t)n)
        v = (int64_t)n;
    *out = (int32_t)v;
    return true;
}

/* Splits {"field": value} (exactly one key) into field name and value. */
sc_status sc__dsl_single_field(P *p, const char *qname, const json_t *body, sc_slice *field,
                               json_t **value)
{
    if (!json_is_object(body) || json_object_size(body) == 0)
        return sc__dsl_fail(p, "parsing_exception", "[%s] query malformed, no field", qname);
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach ((json_t *)body, k, v) {
        if (strcmp(k, "boost") == 0 || strcmp(k, "_name") == 0)
            continue;
        if (n++ > 0)
            return sc__dsl_fail(p, "parsing_exception",
                                "[%s] query doesn't support multiple fields, found [%.*s] and [%s]",
                                qname, (int)field->len, (const char *)field->ptr, k);
        *field = sc_slice_cstr(k);
        *value = v;
    }
    if (n == 0)
        return sc__dsl_fail(p, "parsing_exception", "[%s] query malformed, no field", qname);
    return SC_OK;
}

static bool key_in(const char *k, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(k, *allowed) == 0)
            return true;
    return false;
}

/* Rejects keys not in `allowed` with ES's message. */
sc_status sc__dsl_check_keys(P *p, const char *qname, const json_t *obj, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)obj, k, v) {
        if (!key_in(k, allowed))
            return sc__dsl_fail(p, "parsing_exception", "[%s] query does not support [%s]", qname,
                                k);
    }
    return SC_OK;
}

sc_status sc__dsl_apply_boost(P *p, const char *qname, const json_t *obj, sc_query *q)
{
    json_t *b = json_is_object(obj) ? json_object_get(obj, "boost") : NULL;
    if (b) {
        float f;
        if (!sc__dsl_get_float(b, &f))
            return sc__dsl_fail(p, "parsing_exception", "[%s] query: [boost] must be a number",
                                qname);
        q->boost *= f;
    }
    return SC_OK;
}

static sc_status q_match_all(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[match_all] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "match_all", body, keys));
    *out = NEW(p, sc_query_match_all(p->a));
    return sc__dsl_apply_boost(p, "match_all", body, *out);
}

static sc_status q_match_none(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[match_none] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "match_none", body, keys));
    *out = NEW(p, sc_query_match_none(p->a));
    return SC_OK;
}

static sc_status add_clauses(P *p, sc_query *b, const json_t *v, sc_query_occur occ)
{
    if (json_is_object(v)) {
        sc_query *c = NULL;
        SC_TRY(sc__dsl_parse_query(p, v, &c));
        sc_status st = sc_query_bool_add(p->a, b, occ, c);
        if (st == SC_ELIMIT)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "too_many_clauses: maxClauseCount is set to 1024");
        return st == SC_OK ? SC_OK : sc__dsl_oom(p);
    }
    if (!json_is_array(v))
        return sc__dsl_fail(p, "parsing_exception",
                            "[bool] query clauses must be objects or arrays");
    size_t i;
    json_t *x;
    json_array_foreach (v, i, x) {
        if (!json_is_object(x))
            return sc__dsl_fail(p, "parsing_exception", "[bool] query clause must be an object");
        SC_TRY(add_clauses(p, b, x, occ));
    }
    return SC_OK;
}

/* A bool of must_not clauses only matches nothing in Lucene; Elasticsearch adds a match_all
 * filter so it matches every other document (score 0), and so do we. */
sc_status sc__dsl_fix_negative(P *p, sc_query *q)
{
    if (q->kind != SC_QUERY_BOOL || q->u.bool_.n_clauses == 0)
        return SC_OK;
    for (size_t i = 0; i < q->u.bool_.n_clauses; i++)
        if (q->u.bool_.clauses[i].occur != SC_OCCUR_MUST_NOT)
            return SC_OK;
    sc_query *all = NEW(p, sc_query_match_all(p->a));
    if (sc_query_bool_add(p->a, q, SC_OCCUR_FILTER, all) != SC_OK)
        return sc__dsl_oom(p);
    return SC_OK;
}

static sc_status q_bool(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"must",
                                       "should",
                                       "must_not",
                                       "filter",
                                       "minimum_should_match",
                                       "boost",
                                       "_name",
                                       "adjust_pure_negative",
                                       NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[bool] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "bool", body, keys));
    sc_query *b = NEW(p, sc_query_bool(p->a));
    static const struct {
        const char *key;
        sc_query_occur occ;
    } parts[] = {{"must", SC_OCCUR_MUST},
                 {"filter", SC_OCCUR_FILTER},
                 {"should", SC_OCCUR_SHOULD},
                 {"must_not", SC_OCCUR_MUST_NOT}};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get(body, parts[i].key);
        if (v)
            SC_TRY(add_clauses(p, b, v, parts[i].occ));
    }
    json_t *msm = json_object_get(body, "minimum_should_match");
    if (msm && !json_is_null(msm)) {
        size_t n_should = 0;
        for (size_t i = 0; i < b->u.bool_.n_clauses; i++)
            n_should += b->u.bool_.clauses[i].occur == SC_OCCUR_SHOULD;
        int32_t m;
        if (!sc_dsl_minimum_should_match(msm, n_should, &m))
            return sc__dsl_fail(p, "parsing_exception", "[bool] invalid [minimum_should_match]");
        b->u.bool_.minimum_should_match = m;
    }
    if (b->u.bool_.n_clauses == 0) /* Elasticsearch: an empty bool matches every document */
        b = NEW(p, sc_query_match_all(p->a));
    else if (!json_is_false(json_object_get(body, "adjust_pure_negative")))
        SC_TRY(sc__dsl_fix_negative(p, b));
    *out = b;
    return sc__dsl_apply_boost(p, "bool", body, b);
}

static sc_status q_constant_score(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"filter", "boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[constant_score] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "constant_score", body, keys));
    json_t *f = json_object_get(body, "filter");
    if (!json_is_object(f))
        return sc__dsl_fail(p, "parsing_exception", "[constant_score] requires a 'filter' element");
    sc_query *inner = NULL;
    SC_TRY(sc__dsl_parse_query(p, f, &inner));
    *out = NEW(p, sc_query_constant_score(p->a, inner));
    return sc__dsl_apply_boost(p, "constant_score", body, *out);
}

static sc_status q_boosting(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"positive", "negative", "negative_boost",
                                       "boost",    "_name",    NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[boosting] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "boosting", body, keys));
    json_t *pos = json_object_get(body, "positive"), *neg = json_object_get(body, "negative");
    float nb;
    if (!json_is_object(pos))
        return sc__dsl_fail(p, "parsing_exception", "[boosting] query requires 'positive' query");
    if (!json_is_object(neg))
        return sc__dsl_fail(p, "parsing_exception", "[boosting] query requires 'negative' query");
    if (!sc__dsl_get_float(json_object_get(body, "negative_boost"), &nb) || nb < 0)
        return sc__dsl_fail(
            p, "parsing_exception",
            "[boosting] query requires 'negative_boost' to be set to be a positive value");
    sc_query *pq, *nq = NULL;
    SC_TRY(sc__dsl_parse_query(p, pos, &pq));
    SC_TRY(sc__dsl_parse_query(p, neg, &nq));
    *out = NEW(p, sc_query_boosting(p->a, pq, nq, nb));
    return sc__dsl_apply_boost(p, "boosting", body, *out);
}

static sc_status q_dis_max(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"queries", "tie_breaker", "boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[dis_max] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "dis_max", body, keys));
    float tie = 0;
    json_t *tb = json_object_get(body, "tie_breaker");
    if (tb && !sc__dsl_get_float(tb, &tie))
        return sc__dsl_fail(p, "parsing_exception", "[dis_max] [tie_breaker] must be a number");
    json_t *qs = json_object_get(body, "queries");
    if (!json_is_array(qs) || json_array_size(qs) == 0)
        return sc__dsl_fail(p, "parsing_exception",
                            "[dis_max] requires 'queries' field with at least "
                            "one clause");
    sc_query *d = NEW(p, sc_query_dis_max(p->a, tie));
    size_t i;
    json_t *x;
    json_array_foreach (qs, i, x) {
        sc_query *c = NULL;
        SC_TRY(sc__dsl_parse_query(p, x, &c));
        if (sc_query_dis_max_add(p->a, d, c) != SC_OK)
            return sc__dsl_oom(p);
    }
    *out = d;
    return sc__dsl_apply_boost(p, "dis_max", body, d);
}

/* nested: {"path": p, "query": q, "score_mode": avg|sum|min|max|none, "ignore_unmapped": b,
 * "boost", "_name"}; inner_hits is read by the search layer (search_parse.c). */
static sc_status q_nested(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"path",       "query", "score_mode", "ignore_unmapped",
                                       "inner_hits", "boost", "_name",      NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[nested] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "nested", body, keys));
    json_t *path = json_object_get(body, "path"), *q = json_object_get(body, "query");
    if (!json_is_string(path))
        return sc__dsl_fail(p, "parsing_exception", "[nested] requires 'path' field");
    if (!json_is_object(q))
        return sc__dsl_fail(p, "parsing_exception", "[nested] requires 'query' field");
    sc_nested_score_mode mode = SC_NESTED_SCORE_AVG;
    json_t *sm = json_object_get(body, "score_mode");
    if (sm) {
        static const char *const modes[] = {"avg", "sum", "min", "max", "none"};
        const char *ms = json_is_string(sm) ? json_string_value(sm) : "";
        size_t i = 0;
        while (i < 5 && strcmp(ms, modes[i]) != 0)
            i++;
        if (i == 5)
            return sc__dsl_fail(p, "illegal_argument_exception", "No enum constant %s",
                                json_is_string(sm) ? ms : "(not a string)");
        mode = (sc_nested_score_mode)i;
    }
    json_t *iu = json_object_get(body, "ignore_unmapped");
    if (iu && !json_is_boolean(iu))
        return sc__dsl_fail(p, "parsing_exception", "[nested] [ignore_unmapped] must be a boolean");
    if (p->in_nested)
        return sc__dsl_fail(p, "query_shard_exception",
                            "[nested] a nested query inside another nested query is not "
                            "supported (nested fields have one level)");
    sc_query *inner = NULL;
    p->in_nested = true;
    sc_status ist = sc__dsl_parse_query(p, q, &inner);
    p->in_nested = false;
    SC_TRY(ist);
    sc_slice ps = sc__dsl_jstr(path);
    sc_status ns =
        p->env && p->env->nested_path ? p->env->nested_path(p->env->ctx, ps) : SC_ENOTFOUND;
    if (ns == SC_ENOTFOUND && json_is_true(iu)) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (ns == SC_ENOTFOUND)
        return sc__dsl_fail(p, "query_shard_exception",
                            "[nested] failed to find nested object under path [%s]",
                            json_string_value(path));
    if (ns != SC_OK)
        return sc__dsl_fail(p, "query_shard_exception",
                            "[nested] nested object under path [%s] is not of nested type",
                            json_string_value(path));
    json_t *ih = json_object_get(body, "inner_hits");
    if (ih && !json_is_object(ih))
        return sc__dsl_fail(p, "parsing_exception", "[nested] [inner_hits] must be an object");
    if (ih && p->env && p->env->inner_hits) {
        char why[256] = "";
        sc_status st = p->env->inner_hits(p->env->ctx, ih, ps, inner, why, sizeof why);
        if (st == SC_EINVAL)
            return sc__dsl_fail(p, "illegal_argument_exception", "%s", why);
        if (st != SC_OK)
            return sc__dsl_oom(p);
    }
    *out = NEW(p, sc_query_nested(p->a, ps, inner, mode));
    return sc__dsl_apply_boost(p, "nested", body, *out);
}

typedef sc_status (*qfn)(P *, const json_t *, sc_query **);
static const struct {
    const char *name;
    qfn fn;
} kinds[] = {
    {"match_all", q_match_all},
    {"match_none", q_match_none},
    {"match", sc__dsl_q_match},
    {"match_phrase", sc__dsl_q_match_phrase},
    {"match_phrase_prefix", sc__dsl_q_match_phrase_prefix},
    {"match_bool_prefix", sc__dsl_q_match_bool_prefix},
    {"multi_match", sc__dsl_q_multi_match},
    {"term", sc__dsl_q_term},
    {"terms", sc__dsl_q_terms},
    {"ids", sc__dsl_q_ids},
    {"exists", sc__dsl_q_exists},
    {"prefix", sc__dsl_q_prefix},
    {"wildcard", sc__dsl_q_wildcard},
    {"regexp", sc__dsl_q_regexp},
    {"fuzzy", sc__dsl_q_fuzzy},
    {"bool", q_bool},
    {"constant_score", q_constant_score},
    {"boosting", q_boosting},
    {"dis_max", q_dis_max},
    {"function_score", sc__dsl_q_function_score},
    {"script_score", sc__dsl_q_script_score},
    {"rank_feature", sc__dsl_q_rank_feature},
    {"query_string", sc__dsl_q_query_string},
    {"simple_query_string", sc__dsl_q_simple_query_string},
    {"range", sc__dsl_q_range},
    {"geo_bounding_box", sc__dsl_q_geo_bounding_box},
    {"geo_distance", sc__dsl_q_geo_distance},
    {"knn", sc__dsl_q_knn},
    {"nested", q_nested},
};

/* Reports a query's `_name` (in its body, or in the body of its one field for the field-style
 * queries: {"match": {"title": {"query": .., "_name": ..}}}). */
static sc_status named(P *p, const json_t *body, sc_query *q)
{
    if (!p->env || !p->env->named || !json_is_object(body))
        return SC_OK;
    const json_t *n = json_object_get(body, "_name");
    if (!n && json_object_size(body) == 1) {
        const json_t *inner = json_object_iter_value(json_object_iter((json_t *)body));
        n = json_is_object(inner) ? json_object_get(inner, "_name") : NULL;
    }
    if (!n)
        return SC_OK;
    if (!json_is_string(n))
        return sc__dsl_fail(p, "parsing_exception", "[_name] must be a string");
    return p->env->named(p->env->ctx, json_string_value(n), q) == SC_OK ? SC_OK : sc__dsl_oom(p);
}

sc_status sc__dsl_parse_query(P *p, const json_t *q, sc_query **out)
{
    if (!json_is_object(q))
        return sc__dsl_fail(p, "parsing_exception",
                            "query malformed, must start with start_object");
    if (json_object_size(q) == 0)
        return sc__dsl_fail(p, "parsing_exception", "query malformed, empty clause found");
    if (json_object_size(q) > 1) {
        void *it = json_object_iter((json_t *)q);
        const char *first = json_object_iter_key(it);
        const char *second = json_object_iter_key(json_object_iter_next((json_t *)q, it));
        return sc__dsl_fail(
            p, "parsing_exception",
            "[%s] malformed query, expected [END_OBJECT] but found [FIELD_NAME] (%s)", first,
            second);
    }
    if (++p->depth > SC_DSL_MAX_DEPTH)
        return sc__dsl_fail(
            p, "parsing_exception",
            "The nested depth of the query exceeds the maximum nested depth for queries "
            "[%d]",
            SC_DSL_MAX_DEPTH);
    void *it = json_object_iter((json_t *)q);
    const char *name = json_object_iter_key(it);
    json_t *body = json_object_iter_value(it);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(name, kinds[i].name) == 0) {
            sc_status st = kinds[i].fn(p, body, out);
            p->depth--;
            return st == SC_OK ? named(p, body, *out) : st;
        }
    }
    return sc__dsl_fail(p, "parsing_exception", "unknown query [%s]", name);
}

sc_status sc_dsl_parse(const sc_dsl_env *env, sc_arena *a, const json_t *query, sc_query **out,
                       sc_dsl_error *err)
{
    P p = {.env = env, .a = a, .err = err, .depth = 0};
    err->type = NULL;
    err->reason[0] = '\0';
    err->status = 400;
    *out = NULL;
    return sc__dsl_parse_query(&p, query, out);
}
