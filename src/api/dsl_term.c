/* Query DSL, term-level queries: term, terms, ids, exists, prefix, wildcard, regexp, fuzzy and
 * range (see dsl.h, dsl_internal.h). Numeric-kind fields become ranges over encoded values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl_internal.h"

/* term-level single-field queries: value short form or {"value": ..., "boost": ...}. */
static sc_status term_value(P *p, const char *qname, const json_t *body, const char *vkey,
                            sc_slice *field, json_t **value, json_t **opts)
{
    json_t *v;
    SC_TRY(sc__dsl_single_field(p, qname, body, field, &v));
    *opts = NULL;
    if (json_is_object(v)) {
        *opts = v;
        *value = json_object_get(v, "value");
        if (!*value && vkey)
            *value = json_object_get(v, vkey);
        if (!*value)
            return sc__dsl_fail(p, "parsing_exception", "[%s] query requires a value", qname);
    } else {
        *value = v;
    }
    if (json_is_object(*value) || json_is_array(*value) || json_is_null(*value))
        return sc__dsl_fail(p, "parsing_exception",
                            "[%s] query does not support array or object "
                            "values for field [%.*s]",
                            qname, (int)field->len, (const char *)field->ptr);
    return SC_OK;
}

/* Numeric-kind fields: encodes [from, to] through the env. Returns SC_EUNSUPPORTED (nothing
 * reported) when the env cannot (not a numeric field, or no callback). */
static sc_status numeric_bounds(P *p, const char *qname, sc_slice field, const json_t *from,
                                const json_t *to, bool il, bool iu, const char *format,
                                const char *tz, int64_t *lo, int64_t *hi, bool *empty)
{
    if (!p->env || !p->env->encode_range)
        return SC_EUNSUPPORTED;
    char err[256] = "";
    sc_status st = p->env->encode_range(p->env->ctx, field, from, to, il, iu, format, tz, lo, hi,
                                        empty, err, sizeof err);
    if (st == SC_EINVAL)
        return sc__dsl_fail(
            p, "query_shard_exception", "failed to create query: %s [%s] on field [%.*s]",
            err[0] ? err : "invalid value", qname, (int)field.len, (const char *)field.ptr);
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return sc__dsl_oom(p);
    return st;
}

/* A term/terms value on a numeric-kind field as the range [v, v]: NULL *out when the field is
 * not numeric (the caller builds a term query). */
static sc_status numeric_term(P *p, const char *qname, sc_slice field, const json_t *v,
                              sc_query **out)
{
    *out = NULL;
    int64_t lo, hi;
    bool empty = false;
    sc_status st = numeric_bounds(p, qname, field, v, v, true, true, NULL, NULL, &lo, &hi, &empty);
    if (st == SC_EUNSUPPORTED)
        return SC_OK;
    if (st != SC_OK)
        return st;
    *out = empty ? NEW(p, sc_query_match_none(p->a))
                 : NEW(p, sc_query_range(p->a, field, &lo, &hi, 1));
    return SC_OK;
}

/* A CIDR value ("10.0.0.0/8") on an ip field as the term range of its addresses: NULL *out when
 * the field is not an ip field or the value has no '/'. */
static sc_status cidr_term(P *p, const char *qname, sc_slice field, const json_t *v, sc_query **out)
{
    *out = NULL;
    if (!p->env || !p->env->encode_cidr || !json_is_string(v))
        return SC_OK;
    sc_slice lo, hi;
    char err[256] = "";
    sc_status st = p->env->encode_cidr(p->env->ctx, field, v, p->a, &lo, &hi, err, sizeof err);
    if (st == SC_EUNSUPPORTED)
        return SC_OK;
    if (st == SC_EINVAL)
        return sc__dsl_fail(
            p, "query_shard_exception", "failed to create query: %s [%s] on field [%.*s]",
            err[0] ? err : "invalid CIDR value", qname, (int)field.len, (const char *)field.ptr);
    if (st != SC_OK)
        return sc__dsl_oom(p);
    *out = NEW(p, sc_query_term_range(p->a, field, &lo, &hi, true, true));
    return SC_OK;
}

sc_status sc__dsl_q_term(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "term", body, NULL, &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value", "boost", "_name", "case_insensitive", NULL};
        SC_TRY(sc__dsl_check_keys(p, "term", opts, keys));
    }
    SC_TRY(sc__dsl_no_geo(p, field));
    SC_TRY(cidr_term(p, "term", field, v, out));
    if (*out)
        return sc__dsl_apply_boost(p, "term", opts, *out);
    SC_TRY(numeric_term(p, "term", field, v, out));
    if (*out)
        return sc__dsl_apply_boost(p, "term", opts, *out);
    SC_TRY(sc__dsl_encode_term(p, field, v, &t));
    *out = NEW(p, sc_query_term(p->a, field, t));
    return sc__dsl_apply_boost(p, "term", opts, *out);
}

sc_status sc__dsl_q_terms(P *p, const json_t *body, sc_query **out)
{
    sc_slice field;
    json_t *arr = NULL;
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[terms] query malformed");
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)body, k, v) {
        if (strcmp(k, "boost") == 0 || strcmp(k, "_name") == 0)
            continue;
        if (arr)
            return sc__dsl_fail(p, "parsing_exception",
                                "[terms] query does not support multiple fields");
        field = sc_slice_cstr(k);
        arr = v;
    }
    if (!arr || !json_is_array(arr))
        return sc__dsl_fail(p, "parsing_exception", "[terms] query requires an array of values");
    SC_TRY(sc__dsl_no_geo(p, field));
    size_t n = json_array_size(arr);
    if (n > 65536)
        return sc__dsl_fail(
            p, "illegal_argument_exception",
            "The number of terms [%zu] used in the Terms Query request has exceeded the "
            "allowed maximum of [65536]",
            n);
    if (p->env && p->env->encode_range && n) {
        /* numeric-kind field: one range [v, v] per value */
        int64_t *lo = sc_arena_alloc(p->a, n * sizeof *lo),
                *hi = sc_arena_alloc(p->a, n * sizeof *hi);
        if (!lo || !hi)
            return sc__dsl_oom(p);
        size_t m = 0;
        sc_status st = SC_OK;
        for (size_t i = 0; i < n && st == SC_OK; i++) {
            json_t *x = json_array_get(arr, i);
            if (json_is_object(x) || json_is_array(x) || json_is_null(x))
                return sc__dsl_fail(p, "parsing_exception", "[terms] values must be scalars");
            bool empty = false;
            st = numeric_bounds(p, "terms", field, x, x, true, true, NULL, NULL, &lo[m], &hi[m],
                                &empty);
            if (st == SC_OK && !empty)
                m++;
        }
        if (st == SC_OK) {
            *out = m ? NEW(p, sc_query_range(p->a, field, lo, hi, m))
                     : NEW(p, sc_query_match_none(p->a));
            return sc__dsl_apply_boost(p, "terms", body, *out);
        }
        if (st != SC_EUNSUPPORTED)
            return st;
    }
    sc_slice *terms = sc_arena_alloc(p->a, (n ? n : 1) * sizeof *terms);
    if (!terms)
        return sc__dsl_oom(p);
    sc_query *ranges = NULL; /* CIDR values on an ip field: a bool of term ranges */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(arr, i);
        if (json_is_object(x) || json_is_array(x) || json_is_null(x))
            return sc__dsl_fail(p, "parsing_exception", "[terms] values must be scalars");
        sc_query *r;
        SC_TRY(cidr_term(p, "terms", field, x, &r));
        if (r) {
            if (!ranges)
                ranges = NEW(p, sc_query_bool(p->a));
            if (sc_query_bool_add(p->a, ranges, SC_OCCUR_SHOULD, r) != SC_OK)
                return sc__dsl_oom(p);
            continue;
        }
        SC_TRY(sc__dsl_encode_term(p, field, x, &terms[m++]));
    }
    *out = NEW(p, sc_query_terms(p->a, field, terms, m));
    if (ranges) {
        if (m && sc_query_bool_add(p->a, ranges, SC_OCCUR_SHOULD, *out) != SC_OK)
            return sc__dsl_oom(p);
        *out = NEW(p, sc_query_constant_score(p->a, ranges));
    }
    return sc__dsl_apply_boost(p, "terms", body, *out);
}

sc_status sc__dsl_q_ids(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"values", "boost", "_name", "type", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[ids] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "ids", body, keys));
    json_t *arr = json_object_get(body, "values");
    if (!json_is_array(arr))
        return sc__dsl_fail(p, "parsing_exception", "[ids] query requires [values] array");
    size_t n = json_array_size(arr);
    sc_slice *ids = sc_arena_alloc(p->a, (n ? n : 1) * sizeof *ids);
    if (!ids)
        return sc__dsl_oom(p);
    for (size_t i = 0; i < n; i++)
        if (!sc__dsl_scalar_text(p, json_array_get(arr, i), &ids[i]))
            return sc__dsl_fail(p, "parsing_exception", "[ids] values must be strings");
    *out = NEW(p, sc_query_ids(p->a, ids, n));
    return sc__dsl_apply_boost(p, "ids", body, *out);
}

sc_status sc__dsl_q_exists(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"field", "boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[exists] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "exists", body, keys));
    json_t *f = json_object_get(body, "field");
    if (!json_is_string(f))
        return sc__dsl_fail(p, "parsing_exception", "[exists] must be provided with a [field]");
    *out = NEW(p, sc_query_exists(p->a, sc__dsl_jstr(f)));
    return sc__dsl_apply_boost(p, "exists", body, *out);
}

sc_status sc__dsl_q_prefix(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "prefix", body, "prefix", &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value",   "prefix",           "boost", "_name",
                                           "rewrite", "case_insensitive", NULL};
        SC_TRY(sc__dsl_check_keys(p, "prefix", opts, keys));
    }
    if (!sc__dsl_scalar_text(p, v, &t))
        return sc__dsl_oom(p);
    *out = NEW(p, sc_query_prefix(p->a, field, t));
    return sc__dsl_apply_boost(p, "prefix", opts, *out);
}

sc_status sc__dsl_q_wildcard(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "wildcard", body, "wildcard", &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value",   "wildcard",         "boost", "_name",
                                           "rewrite", "case_insensitive", NULL};
        SC_TRY(sc__dsl_check_keys(p, "wildcard", opts, keys));
    }
    if (!sc__dsl_scalar_text(p, v, &t))
        return sc__dsl_oom(p);
    *out = NEW(p, sc_query_wildcard(p->a, field, t));
    return sc__dsl_apply_boost(p, "wildcard", opts, *out);
}

sc_status sc__dsl_q_regexp(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "regexp", body, NULL, &field, &v, &opts));
    uint32_t flags = SC_REGEXP_ALL;
    int64_t max_states = SC_QUERY_MAX_DETERMINIZED_STATES;
    if (opts) {
        static const char *const keys[] = {
            "value", "flags",   "flags_value",      "boost",
            "_name", "rewrite", "case_insensitive", "max_determinized_states",
            NULL};
        SC_TRY(sc__dsl_check_keys(p, "regexp", opts, keys));
        json_t *f = json_object_get(opts, "flags");
        if (f && json_is_string(f) && strcmp(json_string_value(f), "NONE") == 0)
            flags = SC_REGEXP_NONE;
        json_t *m = json_object_get(opts, "max_determinized_states");
        if (m && (!sc__dsl_get_int(m, &max_states) || max_states <= 0))
            return sc__dsl_fail(p, "parsing_exception",
                                "[regexp] invalid [max_determinized_states]");
    }
    if (!sc__dsl_scalar_text(p, v, &t))
        return sc__dsl_oom(p);
    *out = NEW(p, sc_query_regexp(p->a, field, t, flags));
    (*out)->u.regexp.max_determinized_states = (uint32_t)max_states;
    return sc__dsl_apply_boost(p, "regexp", opts, *out);
}

sc_status sc__dsl_q_fuzzy(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "fuzzy", body, NULL, &field, &v, &opts));
    json_t *fz = NULL;
    if (opts) {
        static const char *const keys[] = {"value",          "fuzziness",      "prefix_length",
                                           "max_expansions", "transpositions", "boost",
                                           "_name",          "rewrite",        NULL};
        SC_TRY(sc__dsl_check_keys(p, "fuzzy", opts, keys));
        fz = json_object_get(opts, "fuzziness");
    }
    if (!sc__dsl_scalar_text(p, v, &t))
        return sc__dsl_oom(p);
    json_t *autos = json_string("AUTO");
    sc_status st = sc__dsl_term_or_fuzzy(p, field, t, fz ? fz : autos, opts, out);
    json_decref(autos);
    if (st != SC_OK)
        return st;
    if ((*out)->kind == SC_QUERY_TERM) {
        /* Zero edits: still a fuzzy query in Lucene, same matches as the term. */
    }
    return sc__dsl_apply_boost(p, "fuzzy", opts, *out);
}

/* range on numeric-kind fields (numbers, dates with format/time_zone and date math, booleans):
 * gt/gte/lt/lte (and the legacy from/to/include_lower/include_upper) into inclusive bounds,
 * executed by the search layer's points / doc-values range (search/range.h). */
/* range on a term-kind field (keyword, ip, text: bytewise on the indexed terms, Lucene's
 * TermRangeQuery) through the env. SC_EUNSUPPORTED when the field is not one. */
static sc_status term_range(P *p, sc_slice field, const json_t *from, const json_t *to, bool il,
                            bool iu, sc_query **out)
{
    if (!p->env || !p->env->encode_term_range)
        return SC_EUNSUPPORTED;
    sc_slice lo = {0}, hi = {0};
    char err[256] = "";
    sc_status st =
        p->env->encode_term_range(p->env->ctx, field, from, to, p->a, &lo, &hi, err, sizeof err);
    if (st == SC_EINVAL)
        return sc__dsl_fail(
            p, "query_shard_exception", "failed to create query: %s [range] on field [%.*s]",
            err[0] ? err : "invalid value", (int)field.len, (const char *)field.ptr);
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return sc__dsl_oom(p);
    if (st != SC_OK)
        return st;
    *out = NEW(p, sc_query_term_range(p->a, field, from ? &lo : NULL, to ? &hi : NULL, il, iu));
    return SC_OK;
}

sc_status sc__dsl_q_range(P *p, const json_t *body, sc_query **out)
{
    sc_slice field;
    json_t *v;
    SC_TRY(sc__dsl_single_field(p, "range", body, &field, &v));
    if (!json_is_object(v))
        return sc__dsl_fail(p, "parsing_exception",
                            "[range] query malformed, no start_object after query name");
    static const char *const keys[] = {
        "gt",     "gte",       "lt",    "lte",   "from",     "to", "include_lower", "include_upper",
        "format", "time_zone", "boost", "_name", "relation", NULL};
    SC_TRY(sc__dsl_check_keys(p, "range", v, keys));
    const json_t *from = NULL, *to = NULL;
    bool il = true, iu = true;
    json_t *x;
    if ((x = json_object_get(v, "from")) && !json_is_null(x))
        from = x;
    if ((x = json_object_get(v, "to")) && !json_is_null(x))
        to = x;
    if ((x = json_object_get(v, "include_lower")))
        il = json_is_true(x);
    if ((x = json_object_get(v, "include_upper")))
        iu = json_is_true(x);
    if ((x = json_object_get(v, "gte")) && !json_is_null(x))
        from = x, il = true;
    if ((x = json_object_get(v, "gt")) && !json_is_null(x))
        from = x, il = false;
    if ((x = json_object_get(v, "lte")) && !json_is_null(x))
        to = x, iu = true;
    if ((x = json_object_get(v, "lt")) && !json_is_null(x))
        to = x, iu = false;
    if ((from && (json_is_object(from) || json_is_array(from))) ||
        (to && (json_is_object(to) || json_is_array(to))))
        return sc__dsl_fail(p, "parsing_exception", "[range] bounds must be scalars");
    const json_t *fmt = json_object_get(v, "format"), *tz = json_object_get(v, "time_zone");
    if ((fmt && !json_is_string(fmt)) || (tz && !json_is_string(tz)))
        return sc__dsl_fail(p, "parsing_exception",
                            "[range] [format] and [time_zone] must be strings");
    int64_t lo, hi;
    bool empty = false;
    sc_status st =
        numeric_bounds(p, "range", field, from, to, il, iu, fmt ? json_string_value(fmt) : NULL,
                       tz ? json_string_value(tz) : NULL, &lo, &hi, &empty);
    if (st == SC_EUNSUPPORTED && p->env && p->env->field_kind &&
        p->env->field_kind(p->env->ctx, field) == SC_DSL_FIELD_UNMAPPED) {
        *out = NEW(p, sc_query_match_none(p->a)); /* ES: a range on an unmapped field */
        return SC_OK;
    }
    if (st == SC_EUNSUPPORTED) {
        st = term_range(p, field, from, to, il, iu, out);
        if (st == SC_OK)
            return sc__dsl_apply_boost(p, "range", v, *out);
    }
    if (st == SC_EUNSUPPORTED)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "Field [%.*s] of type [%s] does not support range queries",
                            (int)field.len, (const char *)field.ptr,
                            sc__dsl_field_kind(p, field) == SC_DSL_FIELD_GEO ? "geo_point"
                                                                             : "object");
    if (st != SC_OK)
        return st;
    *out = empty ? NEW(p, sc_query_match_none(p->a))
                 : NEW(p, sc_query_range(p->a, field, &lo, &hi, 1));
    return sc__dsl_apply_boost(p, "range", v, *out);
}
