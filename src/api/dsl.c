/* Query DSL -> sc_query (see dsl.h). One static function per query type; the table at the
 * bottom maps names to them. */
#include "api/dsl.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/query_parser.h"

typedef struct P {
    const sc_dsl_env *env;
    sc_arena *a;
    sc_dsl_error *err;
    int depth;
} P;

static sc_status parse_query(P *p, const json_t *q, sc_query **out);

static sc_status fail(P *p, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static sc_status fail(P *p, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->reason, sizeof p->err->reason, fmt, ap);
    va_end(ap);
    p->err->type = type;
    p->err->status = 400;
    return SC_EPARSE;
}

static sc_status oom(P *p)
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

#define NEW(p, expr)                                                                               \
    ({                                                                                             \
        sc_query *q__ = (expr);                                                                    \
        if (!q__)                                                                                  \
            return oom(p);                                                                         \
        q__;                                                                                       \
    })

static sc_slice jstr(const json_t *s)
{
    return sc_slice_make(json_string_value(s), json_string_length(s));
}

/* Text form of a scalar JSON value (numbers as Java prints them for integers). */
static bool scalar_text(P *p, const json_t *v, sc_slice *out)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        *out = jstr(v);
        return true;
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
        break;
    case JSON_TRUE:
        snprintf(buf, sizeof buf, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, sizeof buf, "false");
        break;
    default:
        return false;
    }
    char *s = sc_arena_strndup(p->a, buf, strlen(buf));
    if (!s)
        return false;
    *out = sc_slice_cstr(s);
    return true;
}

static sc_dsl_field_kind field_kind(P *p, sc_slice field)
{
    return p->env && p->env->field_kind ? p->env->field_kind(p->env->ctx, field)
                                        : SC_DSL_FIELD_TEXT;
}

static sc_status encode_term(P *p, sc_slice field, const json_t *v, sc_slice *out)
{
    if (p->env && p->env->encode_term) {
        sc_status st = p->env->encode_term(p->env->ctx, field, v, p->a, out);
        if (st == SC_OK)
            return SC_OK;
        if (st == SC_EINVAL)
            return fail(p, "query_shard_exception",
                        "failed to create query: invalid value for field [%.*s]", (int)field.len,
                        (const char *)field.ptr);
        if (st != SC_EUNSUPPORTED)
            return st == SC_ENOMEM || st == SC_ELIMIT ? oom(p) : st;
    }
    if (!scalar_text(p, v, out))
        return fail(p, "parsing_exception", "[term] value of field [%.*s] must be a scalar",
                    (int)field.len, (const char *)field.ptr);
    return SC_OK;
}

static sc_status analyze(P *p, sc_slice field, const char *analyzer, sc_slice text,
                         sc_dsl_token **toks, size_t *n)
{
    if (p->env && p->env->analyze) {
        sc_status st = p->env->analyze(p->env->ctx, field, analyzer, text, p->a, toks, n);
        if (st == SC_ENOTFOUND)
            return fail(p, "illegal_argument_exception", "analyzer [%s] has not been configured",
                        analyzer ? analyzer : "?");
        if (st != SC_OK)
            return oom(p);
        return SC_OK;
    }
    /* Fallback: lowercase ASCII, split on whitespace and punctuation. */
    size_t cap = text.len / 2 + 1;
    sc_dsl_token *t = sc_arena_alloc(p->a, cap * sizeof *t);
    char *buf = sc_arena_alloc(p->a, text.len + 1);
    if (!t || !buf)
        return oom(p);
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
            nt++;
        }
    }
    *toks = t;
    *n = nt;
    return SC_OK;
}

static bool get_float(const json_t *v, float *out)
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

static bool get_int(const json_t *v, int64_t *out)
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
static sc_status single_field(P *p, const char *qname, const json_t *body, sc_slice *field,
                              json_t **value)
{
    if (!json_is_object(body) || json_object_size(body) == 0)
        return fail(p, "parsing_exception", "[%s] query malformed, no field", qname);
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)body, k, v)
    {
        if (strcmp(k, "boost") == 0 || strcmp(k, "_name") == 0)
            continue;
        if (n++ > 0)
            return fail(p, "parsing_exception",
                        "[%s] query doesn't support multiple fields, found [%.*s] and [%s]", qname,
                        (int)field->len, (const char *)field->ptr, k);
        *field = sc_slice_cstr(k);
        *value = v;
    }
    if (n == 0)
        return fail(p, "parsing_exception", "[%s] query malformed, no field", qname);
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
static sc_status check_keys(P *p, const char *qname, const json_t *obj,
                            const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!key_in(k, allowed))
            return fail(p, "parsing_exception", "[%s] query does not support [%s]", qname, k);
    }
    return SC_OK;
}

static sc_status apply_boost(P *p, const char *qname, const json_t *obj, sc_query *q)
{
    json_t *b = json_is_object(obj) ? json_object_get(obj, "boost") : NULL;
    if (b) {
        float f;
        if (!get_float(b, &f))
            return fail(p, "parsing_exception", "[%s] query: [boost] must be a number", qname);
        q->boost *= f;
    }
    return SC_OK;
}

static uint32_t auto_edits(sc_slice term, const json_t *fuzz, bool *ok)
{
    *ok = true;
    if (!fuzz)
        return 0;
    if (json_is_integer(fuzz))
        return json_integer_value(fuzz) > 2 ? 2 : (uint32_t)json_integer_value(fuzz);
    if (json_is_string(fuzz)) {
        const char *s = json_string_value(fuzz);
        if (strncmp(s, "AUTO", 4) == 0) {
            int lo = 3, hi = 6;
            if (s[4] == ':' && sscanf(s + 5, "%d,%d", &lo, &hi) != 2) {
                *ok = false;
                return 0;
            }
            size_t chars = 0;
            for (size_t i = 0; i < term.len; i++)
                chars += (term.ptr[i] & 0xc0) != 0x80;
            return chars < (size_t)lo ? 0 : chars < (size_t)hi ? 1 : 2;
        }
        char *end;
        double d = strtod(s, &end);
        if (end != s && *end == '\0' && d >= 0)
            return d > 2 ? 2 : (uint32_t)d;
    }
    if (json_is_real(fuzz))
        return json_real_value(fuzz) > 2 ? 2 : (uint32_t)json_real_value(fuzz);
    *ok = false;
    return 0;
}

/* A single exact term, or a fuzzy term when `fuzz` asks for edits. */
static sc_status term_or_fuzzy(P *p, sc_slice field, sc_slice term, const json_t *fuzz,
                               const json_t *opts, sc_query **out)
{
    bool ok;
    uint32_t edits = auto_edits(term, fuzz, &ok);
    if (!ok)
        return fail(p, "parsing_exception", "invalid fuzziness value");
    if (edits == 0) {
        *out = NEW(p, sc_query_term(p->a, field, term));
        return SC_OK;
    }
    int64_t prefix_length = 0, max_exp = SC_QUERY_FUZZY_MAX_EXPANSIONS;
    bool transpositions = true;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "prefix_length")) && !get_int(v, &prefix_length))
            return fail(p, "parsing_exception", "[prefix_length] must be an integer");
        if ((v = json_object_get(opts, "max_expansions")) && !get_int(v, &max_exp))
            return fail(p, "parsing_exception", "[max_expansions] must be an integer");
        if ((v = json_object_get(opts, "fuzzy_transpositions")) ||
            (v = json_object_get(opts, "transpositions")))
            transpositions = json_is_true(v);
    }
    if (prefix_length < 0 || max_exp <= 0)
        return fail(p, "illegal_argument_exception", "invalid fuzzy parameters");
    *out = NEW(p, sc_query_fuzzy(p->a, field, term, edits, (uint32_t)prefix_length,
                                 (uint32_t)max_exp, transpositions));
    return SC_OK;
}

/* Builds the query of a `match` on one field: analyzed text -> term / bool of terms. */
static sc_status build_match(P *p, sc_slice field, const json_t *query, const json_t *opts,
                             sc_query **out)
{
    sc_dsl_field_kind kind = field_kind(p, field);
    if (kind == SC_DSL_FIELD_KEYWORD || kind == SC_DSL_FIELD_NUMERIC) {
        sc_slice t;
        SC_TRY(encode_term(p, field, query, &t));
        return term_or_fuzzy(p, field, t, opts ? json_object_get(opts, "fuzziness") : NULL,
                             opts, out);
    }
    sc_slice text;
    if (!scalar_text(p, query, &text))
        return fail(p, "parsing_exception", "[match] unknown token [%s] after [query]",
                    json_is_object(query) ? "START_OBJECT" : "START_ARRAY");
    const char *analyzer = NULL;
    bool and_op = false;
    const json_t *fuzz = NULL, *msm = NULL;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "analyzer"))) {
            if (!json_is_string(v))
                return fail(p, "parsing_exception", "[match] [analyzer] must be a string");
            analyzer = json_string_value(v);
        }
        if ((v = json_object_get(opts, "operator"))) {
            const char *o = json_is_string(v) ? json_string_value(v) : "";
            if (strcasecmp(o, "and") == 0)
                and_op = true;
            else if (strcasecmp(o, "or") != 0)
                return fail(p, "parsing_exception", "[match] unknown operator [%s]", o);
        }
        fuzz = json_object_get(opts, "fuzziness");
        msm = json_object_get(opts, "minimum_should_match");
    }
    sc_dsl_token *toks;
    size_t n;
    SC_TRY(analyze(p, field, analyzer, text, &toks, &n));
    if (n == 0) {
        const json_t *ztq = opts ? json_object_get(opts, "zero_terms_query") : NULL;
        if (ztq && json_is_string(ztq) && strcasecmp(json_string_value(ztq), "all") == 0)
            *out = NEW(p, sc_query_match_all(p->a));
        else
            *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (n == 1)
        return term_or_fuzzy(p, field, toks[0].term, fuzz, opts, out);
    sc_query *b = NEW(p, sc_query_bool(p->a));
    for (size_t i = 0; i < n; i++) {
        sc_query *t = NULL;
        SC_TRY(term_or_fuzzy(p, field, toks[i].term, fuzz, opts, &t));
        sc_status st = sc_query_bool_add(p->a, b, and_op ? SC_OCCUR_MUST : SC_OCCUR_SHOULD, t);
        if (st == SC_ELIMIT)
            return fail(p, "illegal_argument_exception", "too_many_clauses: maxClauseCount is "
                                                         "set to 1024");
        if (st != SC_OK)
            return oom(p);
    }
    if (!and_op && msm) {
        int32_t m;
        if (!sc_dsl_minimum_should_match(msm, n, &m))
            return fail(p, "parsing_exception", "[match] invalid [minimum_should_match]");
        b->u.bool_.minimum_should_match = m;
    }
    *out = b;
    return SC_OK;
}

static sc_status build_phrase(P *p, sc_slice field, const json_t *query, const json_t *opts,
                              bool prefix_last, sc_query **out)
{
    sc_dsl_field_kind kind = field_kind(p, field);
    if (kind == SC_DSL_FIELD_KEYWORD || kind == SC_DSL_FIELD_NUMERIC) {
        sc_slice t;
        SC_TRY(encode_term(p, field, query, &t));
        *out = NEW(p, prefix_last ? sc_query_prefix(p->a, field, t)
                                  : sc_query_term(p->a, field, t));
        return SC_OK;
    }
    sc_slice text;
    if (!scalar_text(p, query, &text))
        return fail(p, "parsing_exception", "[match_phrase] query must be text");
    const char *analyzer = NULL;
    int64_t slop = 0;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "analyzer")) && json_is_string(v))
            analyzer = json_string_value(v);
        if ((v = json_object_get(opts, "slop")) && (!get_int(v, &slop) || slop < 0))
            return fail(p, "parsing_exception", "[match_phrase] [slop] must be a non-negative "
                                                "integer");
    }
    sc_dsl_token *toks;
    size_t n;
    SC_TRY(analyze(p, field, analyzer, text, &toks, &n));
    if (n == 0) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (n == 1) {
        *out = NEW(p, prefix_last ? sc_query_prefix(p->a, field, toks[0].term)
                                  : sc_query_term(p->a, field, toks[0].term));
        return SC_OK;
    }
    size_t np = prefix_last ? n - 1 : n;
    sc_slice *terms = sc_arena_alloc(p->a, np * sizeof *terms);
    uint32_t *pos = sc_arena_alloc(p->a, np * sizeof *pos);
    if (!terms || !pos)
        return oom(p);
    for (size_t i = 0; i < np; i++) {
        terms[i] = toks[i].term;
        pos[i] = toks[i].position - toks[0].position;
    }
    sc_query *ph = np == 1 ? NEW(p, sc_query_term(p->a, field, terms[0]))
                           : NEW(p, sc_query_phrase(p->a, field, terms, pos, np, (uint32_t)slop));
    if (!prefix_last) {
        *out = ph;
        return SC_OK;
    }
    sc_query *b = NEW(p, sc_query_bool(p->a));
    sc_query *pre = NEW(p, sc_query_prefix(p->a, field, toks[n - 1].term));
    if (sc_query_bool_add(p->a, b, SC_OCCUR_MUST, ph) != SC_OK ||
        sc_query_bool_add(p->a, b, SC_OCCUR_MUST, pre) != SC_OK)
        return oom(p);
    *out = b;
    return SC_OK;
}

/* match / match_phrase / match_phrase_prefix: {"field": "text"} or {"field": {"query": ...}}. */
static sc_status q_match_common(P *p, const char *qname, const json_t *body, int mode,
                                sc_query **out)
{
    sc_slice field;
    json_t *v;
    SC_TRY(single_field(p, qname, body, &field, &v));
    const json_t *query = v, *opts = NULL;
    if (json_is_object(v)) {
        static const char *const match_keys[] = {
            "query", "operator", "minimum_should_match", "fuzziness", "prefix_length",
            "max_expansions", "fuzzy_transpositions", "analyzer", "boost", "zero_terms_query",
            "lenient", "auto_generate_synonyms_phrase_query", "cutoff_frequency",
            "fuzzy_rewrite", "_name", "slop", NULL};
        SC_TRY(check_keys(p, qname, v, match_keys));
        opts = v;
        query = json_object_get(v, "query");
        if (!query)
            return fail(p, "parsing_exception", "[%s] requires query value", qname);
    }
    if (json_is_null(query))
        return fail(p, "parsing_exception", "[%s] requires query value", qname);
    sc_status st = mode == 0   ? build_match(p, field, query, opts, out)
                   : mode == 1 ? build_phrase(p, field, query, opts, false, out)
                               : build_phrase(p, field, query, opts, true, out);
    if (st != SC_OK)
        return st;
    return apply_boost(p, qname, opts, *out);
}

static sc_status q_match(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match", body, 0, out);
}

static sc_status q_match_phrase(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match_phrase", body, 1, out);
}

static sc_status q_match_phrase_prefix(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match_phrase_prefix", body, 2, out);
}

static sc_status q_match_all(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"boost", "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[match_all] query malformed");
    SC_TRY(check_keys(p, "match_all", body, keys));
    *out = NEW(p, sc_query_match_all(p->a));
    return apply_boost(p, "match_all", body, *out);
}

static sc_status q_match_none(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"boost", "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[match_none] query malformed");
    SC_TRY(check_keys(p, "match_none", body, keys));
    *out = NEW(p, sc_query_match_none(p->a));
    return SC_OK;
}

/* term-level single-field queries: value short form or {"value": ..., "boost": ...}. */
static sc_status term_value(P *p, const char *qname, const json_t *body, const char *vkey,
                            sc_slice *field, json_t **value, json_t **opts)
{
    json_t *v;
    SC_TRY(single_field(p, qname, body, field, &v));
    *opts = NULL;
    if (json_is_object(v)) {
        *opts = v;
        *value = json_object_get(v, "value");
        if (!*value && vkey)
            *value = json_object_get(v, vkey);
        if (!*value)
            return fail(p, "parsing_exception", "[%s] query requires a value", qname);
    } else {
        *value = v;
    }
    if (json_is_object(*value) || json_is_array(*value) || json_is_null(*value))
        return fail(p, "parsing_exception", "[%s] query does not support array or object "
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
        return fail(p, "query_shard_exception", "failed to create query: %s [%s] on field [%.*s]",
                    err[0] ? err : "invalid value", qname, (int)field.len,
                    (const char *)field.ptr);
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return oom(p);
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

static sc_status q_term(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "term", body, NULL, &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value", "boost", "_name", "case_insensitive", NULL};
        SC_TRY(check_keys(p, "term", opts, keys));
    }
    SC_TRY(numeric_term(p, "term", field, v, out));
    if (*out)
        return apply_boost(p, "term", opts, *out);
    SC_TRY(encode_term(p, field, v, &t));
    *out = NEW(p, sc_query_term(p->a, field, t));
    return apply_boost(p, "term", opts, *out);
}

static sc_status q_terms(P *p, const json_t *body, sc_query **out)
{
    sc_slice field;
    json_t *arr = NULL;
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[terms] query malformed");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)body, k, v)
    {
        if (strcmp(k, "boost") == 0 || strcmp(k, "_name") == 0)
            continue;
        if (arr)
            return fail(p, "parsing_exception",
                        "[terms] query does not support multiple fields");
        field = sc_slice_cstr(k);
        arr = v;
    }
    if (!arr || !json_is_array(arr))
        return fail(p, "parsing_exception", "[terms] query requires an array of values");
    size_t n = json_array_size(arr);
    if (n > 65536)
        return fail(p, "illegal_argument_exception",
                    "The number of terms [%zu] used in the Terms Query request has exceeded the "
                    "allowed maximum of [65536]",
                    n);
    if (p->env && p->env->encode_range && n) {
        /* numeric-kind field: one range [v, v] per value */
        int64_t *lo = sc_arena_alloc(p->a, n * sizeof *lo), *hi = sc_arena_alloc(p->a, n * sizeof *hi);
        if (!lo || !hi)
            return oom(p);
        size_t m = 0;
        sc_status st = SC_OK;
        for (size_t i = 0; i < n && st == SC_OK; i++) {
            json_t *x = json_array_get(arr, i);
            if (json_is_object(x) || json_is_array(x) || json_is_null(x))
                return fail(p, "parsing_exception", "[terms] values must be scalars");
            bool empty = false;
            st = numeric_bounds(p, "terms", field, x, x, true, true, NULL, NULL, &lo[m], &hi[m],
                                &empty);
            if (st == SC_OK && !empty)
                m++;
        }
        if (st == SC_OK) {
            *out = m ? NEW(p, sc_query_range(p->a, field, lo, hi, m))
                     : NEW(p, sc_query_match_none(p->a));
            return apply_boost(p, "terms", body, *out);
        }
        if (st != SC_EUNSUPPORTED)
            return st;
    }
    sc_slice *terms = sc_arena_alloc(p->a, (n ? n : 1) * sizeof *terms);
    if (!terms)
        return oom(p);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(arr, i);
        if (json_is_object(x) || json_is_array(x) || json_is_null(x))
            return fail(p, "parsing_exception", "[terms] values must be scalars");
        SC_TRY(encode_term(p, field, x, &terms[i]));
    }
    *out = NEW(p, sc_query_terms(p->a, field, terms, n));
    return apply_boost(p, "terms", body, *out);
}

static sc_status q_ids(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"values", "boost", "_name", "type", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[ids] query malformed");
    SC_TRY(check_keys(p, "ids", body, keys));
    json_t *arr = json_object_get(body, "values");
    if (!json_is_array(arr))
        return fail(p, "parsing_exception", "[ids] query requires [values] array");
    size_t n = json_array_size(arr);
    sc_slice *ids = sc_arena_alloc(p->a, (n ? n : 1) * sizeof *ids);
    if (!ids)
        return oom(p);
    for (size_t i = 0; i < n; i++)
        if (!scalar_text(p, json_array_get(arr, i), &ids[i]))
            return fail(p, "parsing_exception", "[ids] values must be strings");
    *out = NEW(p, sc_query_ids(p->a, ids, n));
    return apply_boost(p, "ids", body, *out);
}

static sc_status q_exists(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"field", "boost", "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[exists] query malformed");
    SC_TRY(check_keys(p, "exists", body, keys));
    json_t *f = json_object_get(body, "field");
    if (!json_is_string(f))
        return fail(p, "parsing_exception", "[exists] must be provided with a [field]");
    *out = NEW(p, sc_query_exists(p->a, jstr(f)));
    return apply_boost(p, "exists", body, *out);
}

static sc_status q_prefix(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "prefix", body, "prefix", &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value", "prefix", "boost", "_name", "rewrite",
                                           "case_insensitive", NULL};
        SC_TRY(check_keys(p, "prefix", opts, keys));
    }
    if (!scalar_text(p, v, &t))
        return oom(p);
    *out = NEW(p, sc_query_prefix(p->a, field, t));
    return apply_boost(p, "prefix", opts, *out);
}

static sc_status q_wildcard(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "wildcard", body, "wildcard", &field, &v, &opts));
    if (opts) {
        static const char *const keys[] = {"value", "wildcard", "boost", "_name", "rewrite",
                                           "case_insensitive", NULL};
        SC_TRY(check_keys(p, "wildcard", opts, keys));
    }
    if (!scalar_text(p, v, &t))
        return oom(p);
    *out = NEW(p, sc_query_wildcard(p->a, field, t));
    return apply_boost(p, "wildcard", opts, *out);
}

static sc_status q_regexp(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "regexp", body, NULL, &field, &v, &opts));
    uint32_t flags = SC_REGEXP_ALL;
    int64_t max_states = SC_QUERY_MAX_DETERMINIZED_STATES;
    if (opts) {
        static const char *const keys[] = {"value", "flags", "flags_value", "boost", "_name",
                                           "rewrite", "case_insensitive",
                                           "max_determinized_states", NULL};
        SC_TRY(check_keys(p, "regexp", opts, keys));
        json_t *f = json_object_get(opts, "flags");
        if (f && json_is_string(f) && strcmp(json_string_value(f), "NONE") == 0)
            flags = SC_REGEXP_NONE;
        json_t *m = json_object_get(opts, "max_determinized_states");
        if (m && (!get_int(m, &max_states) || max_states <= 0))
            return fail(p, "parsing_exception", "[regexp] invalid [max_determinized_states]");
    }
    if (!scalar_text(p, v, &t))
        return oom(p);
    *out = NEW(p, sc_query_regexp(p->a, field, t, flags));
    (*out)->u.regexp.max_determinized_states = (uint32_t)max_states;
    return apply_boost(p, "regexp", opts, *out);
}

static sc_status q_fuzzy(P *p, const json_t *body, sc_query **out)
{
    sc_slice field, t;
    json_t *v, *opts;
    SC_TRY(term_value(p, "fuzzy", body, NULL, &field, &v, &opts));
    json_t *fz = NULL;
    if (opts) {
        static const char *const keys[] = {"value", "fuzziness", "prefix_length",
                                           "max_expansions", "transpositions", "boost", "_name",
                                           "rewrite", NULL};
        SC_TRY(check_keys(p, "fuzzy", opts, keys));
        fz = json_object_get(opts, "fuzziness");
    }
    if (!scalar_text(p, v, &t))
        return oom(p);
    json_t *autos = json_string("AUTO");
    sc_status st = term_or_fuzzy(p, field, t, fz ? fz : autos, opts, out);
    json_decref(autos);
    if (st != SC_OK)
        return st;
    if ((*out)->kind == SC_QUERY_TERM) {
        /* Zero edits: still a fuzzy query in Lucene, same matches as the term. */
    }
    return apply_boost(p, "fuzzy", opts, *out);
}

static sc_status add_clauses(P *p, sc_query *b, const json_t *v, sc_query_occur occ)
{
    if (json_is_object(v)) {
        sc_query *c = NULL;
        SC_TRY(parse_query(p, v, &c));
        sc_status st = sc_query_bool_add(p->a, b, occ, c);
        if (st == SC_ELIMIT)
            return fail(p, "illegal_argument_exception",
                        "too_many_clauses: maxClauseCount is set to 1024");
        return st == SC_OK ? SC_OK : oom(p);
    }
    if (!json_is_array(v))
        return fail(p, "parsing_exception", "[bool] query clauses must be objects or arrays");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_object(x))
            return fail(p, "parsing_exception", "[bool] query clause must be an object");
        SC_TRY(add_clauses(p, b, x, occ));
    }
    return SC_OK;
}

static sc_status q_bool(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"must", "should", "must_not", "filter",
                                       "minimum_should_match", "boost", "_name",
                                       "adjust_pure_negative", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[bool] query malformed");
    SC_TRY(check_keys(p, "bool", body, keys));
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
            return fail(p, "parsing_exception", "[bool] invalid [minimum_should_match]");
        b->u.bool_.minimum_should_match = m;
    }
    *out = b;
    return apply_boost(p, "bool", body, b);
}

static sc_status q_constant_score(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"filter", "boost", "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[constant_score] query malformed");
    SC_TRY(check_keys(p, "constant_score", body, keys));
    json_t *f = json_object_get(body, "filter");
    if (!json_is_object(f))
        return fail(p, "parsing_exception", "[constant_score] requires a 'filter' element");
    sc_query *inner = NULL;
    SC_TRY(parse_query(p, f, &inner));
    *out = NEW(p, sc_query_constant_score(p->a, inner));
    return apply_boost(p, "constant_score", body, *out);
}

static sc_status q_boosting(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"positive", "negative", "negative_boost", "boost",
                                       "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[boosting] query malformed");
    SC_TRY(check_keys(p, "boosting", body, keys));
    json_t *pos = json_object_get(body, "positive"), *neg = json_object_get(body, "negative");
    float nb;
    if (!json_is_object(pos))
        return fail(p, "parsing_exception", "[boosting] query requires 'positive' query");
    if (!json_is_object(neg))
        return fail(p, "parsing_exception", "[boosting] query requires 'negative' query");
    if (!get_float(json_object_get(body, "negative_boost"), &nb) || nb < 0)
        return fail(p, "parsing_exception",
                    "[boosting] query requires 'negative_boost' to be set to be a positive value");
    sc_query *pq, *nq = NULL;
    SC_TRY(parse_query(p, pos, &pq));
    SC_TRY(parse_query(p, neg, &nq));
    *out = NEW(p, sc_query_boosting(p->a, pq, nq, nb));
    return apply_boost(p, "boosting", body, *out);
}

static sc_status q_dis_max(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"queries", "tie_breaker", "boost", "_name", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[dis_max] query malformed");
    SC_TRY(check_keys(p, "dis_max", body, keys));
    float tie = 0;
    json_t *tb = json_object_get(body, "tie_breaker");
    if (tb && !get_float(tb, &tie))
        return fail(p, "parsing_exception", "[dis_max] [tie_breaker] must be a number");
    json_t *qs = json_object_get(body, "queries");
    if (!json_is_array(qs) || json_array_size(qs) == 0)
        return fail(p, "parsing_exception", "[dis_max] requires 'queries' field with at least "
                                            "one clause");
    sc_query *d = NEW(p, sc_query_dis_max(p->a, tie));
    size_t i;
    json_t *x;
    json_array_foreach(qs, i, x)
    {
        sc_query *c = NULL;
        SC_TRY(parse_query(p, x, &c));
        if (sc_query_dis_max_add(p->a, d, c) != SC_OK)
            return oom(p);
    }
    *out = d;
    return apply_boost(p, "dis_max", body, d);
}

/* "title^2" -> field "title", boost 2. */
static sc_status field_boost(P *p, const char *spec, sc_slice *field, float *boost)
{
    const char *caret = strchr(spec, '^');
    *boost = 1;
    if (!caret) {
        *field = sc_slice_cstr(spec);
        return SC_OK;
    }
    *field = sc_slice_make(spec, (size_t)(caret - spec));
    char *end;
    double b = strtod(caret + 1, &end);
    if (end == caret + 1 || *end)
        return fail(p, "parsing_exception", "invalid field boost [%s]", spec);
    *boost = (float)b;
    return SC_OK;
}

static size_t default_fields(P *p, const char ***fields)
{
    if (p->env && p->env->default_fields)
        return p->env->default_fields(p->env->ctx, fields);
    return 0;
}

static sc_status q_multi_match(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {
        "query", "fields", "type", "operator", "minimum_should_match", "fuzziness",
        "prefix_length", "max_expansions", "analyzer", "boost", "tie_breaker", "slop",
        "zero_terms_query", "lenient", "_name", "fuzzy_transpositions",
        "auto_generate_synonyms_phrase_query", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[multi_match] query malformed");
    SC_TRY(check_keys(p, "multi_match", body, keys));
    json_t *query = json_object_get(body, "query");
    if (!query || json_is_null(query))
        return fail(p, "parsing_exception", "No text specified for multi_match query");
    const char *type = "best_fields";
    json_t *t = json_object_get(body, "type");
    if (t) {
        if (!json_is_string(t))
            return fail(p, "parsing_exception", "[multi_match] [type] must be a string");
        type = json_string_value(t);
    }
    int mode;
    if (!strcmp(type, "best_fields") || !strcmp(type, "cross_fields") ||
        !strcmp(type, "most_fields") || !strcmp(type, "bool_prefix"))
        mode = 0;
    else if (!strcmp(type, "phrase"))
        mode = 1;
    else if (!strcmp(type, "phrase_prefix"))
        mode = 2;
    else
        return fail(p, "parsing_exception", "failed to parse [multi_match] query type [%s]. "
                                            "unknown type.",
                    type);
    bool most = strcmp(type, "most_fields") == 0;
    float tie = 0;
    json_t *tb = json_object_get(body, "tie_breaker");
    if (tb && !get_float(tb, &tie))
        return fail(p, "parsing_exception", "[multi_match] [tie_breaker] must be a number");
    const char **names = NULL;
    size_t n_names = 0;
    json_t *fields = json_object_get(body, "fields");
    if (fields && json_is_string(fields)) {
        names = sc_arena_alloc(p->a, sizeof *names);
        if (!names)
            return oom(p);
        names[0] = json_string_value(fields);
        n_names = 1;
    } else if (fields && json_is_array(fields) && json_array_size(fields) > 0) {
        n_names = json_array_size(fields);
        names = sc_arena_alloc(p->a, n_names * sizeof *names);
        if (!names)
            return oom(p);
        for (size_t i = 0; i < n_names; i++) {
            json_t *f = json_array_get(fields, i);
            if (!json_is_string(f))
                return fail(p, "parsing_exception", "[multi_match] fields must be strings");
            names[i] = json_string_value(f);
        }
    } else if (fields && !json_is_array(fields)) {
        return fail(p, "parsing_exception", "[multi_match] [fields] must be an array");
    } else {
        n_names = default_fields(p, &names);
    }
    if (n_names == 0) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    sc_query *comb = most ? NEW(p, sc_query_bool(p->a)) : NEW(p, sc_query_dis_max(p->a, tie));
    for (size_t i = 0; i < n_names; i++) {
        sc_slice field;
        float fb;
        SC_TRY(field_boost(p, names[i], &field, &fb));
        sc_query *q = NULL;
        sc_status st = mode == 0 ? build_match(p, field, query, body, &q)
                                 : build_phrase(p, field, query, body, mode == 2, &q);
        if (st != SC_OK)
            return st;
        q->boost *= fb;
        st = most ? sc_query_bool_add(p->a, comb, SC_OCCUR_SHOULD, q)
                  : sc_query_dis_max_add(p->a, comb, q);
        if (st != SC_OK)
            return oom(p);
    }
    *out = comb;
    return apply_boost(p, "multi_match", body, comb);
}

/* ---- query_string / simple_query_string: a compact Lucene classic syntax parser ---- */

typedef struct qs {
    P *p;
    const char *s;
    size_t len, pos;
    const char **fields; /* default fields */
    float *boosts;
    size_t n_fields;
    bool and_default;
    const char *analyzer;
    bool simple; /* simple_query_string: no field:, no AND/OR words; | + - only */
    int depth;
} qs;

static sc_status qs_or(qs *q, sc_query **out);

static void qs_ws(qs *q)
{
    while (q->pos < q->len && isspace((unsigned char)q->s[q->pos]))
        q->pos++;
}

static bool qs_word(qs *q, const char *w)
{
    size_t n = strlen(w);
    if (q->simple || q->pos + n > q->len || memcmp(q->s + q->pos, w, n) != 0)
        return false;
    if (q->pos + n < q->len && !isspace((unsigned char)q->s[q->pos + n]) &&
        q->s[q->pos + n] != '(')
        return false;
    q->pos += n;
    return true;
}

static bool qs_special(char c, bool simple)
{
    if (simple)
        return strchr("+-|()\"~", c) != NULL;
    return strchr("+-&|!(){}[]^\"~:\\/", c) != NULL;
}

/* One bare term's query over one field. */
static sc_status qs_term_field(qs *q, sc_slice field, sc_slice text, bool is_phrase,
                               const json_t *fuzz, int64_t slop, sc_query **out)
{
    P *p = q->p;
    bool has_wild = false;
    if (!is_phrase)
        for (size_t i = 0; i < text.len; i++)
            if (text.ptr[i] == '*' || text.ptr[i] == '?')
                has_wild = true;
    if (has_wild) {
        if (text.len == 1 && text.ptr[0] == '*') {
            *out = NEW(p, sc_query_exists(p->a, field));
            return SC_OK;
        }
        /* Lowercase like Lucene's classic parser does for multi-term queries. */
        char *low = sc_arena_alloc(p->a, text.len);
        if (!low)
            return oom(p);
        for (size_t i = 0; i < text.len; i++)
            low[i] = (char)tolower(text.ptr[i]);
        sc_slice lt = sc_slice_make(low, text.len);
        bool only_trailing_star = text.ptr[text.len - 1] == '*';
        for (size_t i = 0; i + 1 < text.len; i++)
            if (text.ptr[i] == '*' || text.ptr[i] == '?')
                only_trailing_star = false;
        if (field_kind(p, field) != SC_DSL_FIELD_TEXT)
            lt = text;
        *out = NEW(p, only_trailing_star ? sc_query_prefix(p->a, field, sc_slice_sub(lt, 0, lt.len - 1))
                                         : sc_query_wildcard(p->a, field, lt));
        return SC_OK;
    }
    json_t *jt = json_stringn((const char *)text.ptr, text.len);
    json_t *opts = json_object();
    if (!jt || !opts) {
        json_decref(jt);
        json_decref(opts);
        return oom(p);
    }
    if (q->analyzer)
        json_object_set_new(opts, "analyzer", json_string(q->analyzer));
    sc_status st;
    if (is_phrase) {
        json_object_set_new(opts, "slop", json_integer(slop));
        st = build_phrase(p, field, jt, opts, false, out);
    } else {
        if (fuzz)
            json_object_set(opts, "fuzziness", (json_t *)fuzz);
        /* A bare word that analyzes to several tokens: Lucene's parser builds an OR. */
        st = build_match(p, field, jt, opts, out);
    }
    json_decref(jt);
    json_decref(opts);
    return st;
}

static sc_status qs_term(qs *q, const char *field, size_t flen, sc_slice text, bool is_phrase,
                         const json_t *fuzz, int64_t slop, sc_query **out)
{
    P *p = q->p;
    if (field) {
        return qs_term_field(q, sc_slice_make(field, flen), text, is_phrase, fuzz, slop, out);
    }
    if (q->n_fields == 0) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (q->n_fields == 1) {
        SC_TRY(qs_term_field(q, sc_slice_cstr(q->fields[0]), text, is_phrase, fuzz, slop, out));
        (*out)->boost *= q->boosts[0];
        return SC_OK;
    }
    sc_query *d = NEW(p, sc_query_dis_max(p->a, 0));
    for (size_t i = 0; i < q->n_fields; i++) {
        sc_query *c = NULL;
        SC_TRY(qs_term_field(q, sc_slice_cstr(q->fields[i]), text, is_phrase, fuzz, slop, &c));
        c->boost *= q->boosts[i];
        if (sc_query_dis_max_add(p->a, d, c) != SC_OK)
            return oom(p);
    }
    *out = d;
    return SC_OK;
}

/* clause := [field ':'] ( '(' or ')' | '"' phrase '"' ['~' n] | term ['~' [n]] ) ['^' boost] */
static sc_status qs_clause(qs *q, sc_query **out)
{
    P *p = q->p;
    qs_ws(q);
    if (q->pos >= q->len)
        return fail(p, "query_shard_exception", "Failed to parse query [%.*s]", (int)q->len,
                    q->s);
    const char *field = NULL;
    size_t flen = 0;
    if (!q->simple) {
        /* field name: chars up to ':' that are not special or space */
        size_t e = q->pos;
        while (e < q->len && !isspace((unsigned char)q->s[e]) &&
               (!qs_special(q->s[e], false) || q->s[e] == '\\'))
            e++;
        if (e < q->len && q->s[e] == ':' && e > q->pos) {
            field = q->s + q->pos;
            flen = e - q->pos;
            q->pos = e + 1;
            qs_ws(q);
        }
    }
    sc_query *res = NULL;
    if (q->pos < q->len && q->s[q->pos] == '(') {
        if (++q->depth > SC_DSL_MAX_DEPTH)
            return fail(p, "query_shard_exception", "query is nested too deeply");
        q->pos++;
        const char **sf = q->fields;
        float *sb = q->boosts;
        size_t sn = q->n_fields;
        float one = 1;
        if (field) {
            char *f = sc_arena_strndup(p->a, field, flen);
            const char **fa = sc_arena_alloc(p->a, sizeof *fa);
            if (!f || !fa)
                return oom(p);
            fa[0] = f;
            q->fields = fa;
            q->boosts = &one;
            q->n_fields = 1;
        }
        SC_TRY(qs_or(q, &res));
        q->fields = sf;
        q->boosts = sb;
        q->n_fields = sn;
        qs_ws(q);
        if (q->pos >= q->len || q->s[q->pos] != ')')
            return fail(p, "query_shard_exception",
                        "Failed to parse query [%.*s]: missing closing parenthesis", (int)q->len,
                        q->s);
        q->pos++;
        q->depth--;
    } else if (q->pos < q->len && q->s[q->pos] == '"') {
        size_t s = ++q->pos;
        while (q->pos < q->len && q->s[q->pos] != '"')
            q->pos++;
        if (q->pos >= q->len)
            return fail(p, "query_shard_exception",
                        "Failed to parse query [%.*s]: unterminated phrase", (int)q->len, q->s);
        sc_slice text = sc_slice_make(q->s + s, q->pos - s);
        q->pos++;
        int64_t slop = 0;
        if (q->pos < q->len && q->s[q->pos] == '~') {
            q->pos++;
            char *end;
            slop = strtol(q->s + q->pos, &end, 10);
            q->pos = (size_t)(end - q->s);
        }
        SC_TRY(qs_term(q, field, flen, text, true, NULL, slop, &res));
    } else {
        char *buf = sc_arena_alloc(p->a, q->len - q->pos + 1);
        if (!buf)
            return oom(p);
        size_t n = 0;
        while (q->pos < q->len && !isspace((unsigned char)q->s[q->pos])) {
            char c = q->s[q->pos];
            if (c == '\\' && q->pos + 1 < q->len) {
                buf[n++] = q->s[q->pos + 1];
                q->pos += 2;
                continue;
            }
            if (qs_special(c, q->simple) && !(q->simple && (c == '+' || c == '-') && n > 0))
                break;
            buf[n++] = c;
            q->pos++;
        }
        if (n == 0)
            return fail(p, "query_shard_exception",
                        "Failed to parse query [%.*s]: unexpected [%c] at position %zu",
                        (int)q->len, q->s, q->s[q->pos], q->pos);
        json_t *fz = NULL;
        if (q->pos < q->len && q->s[q->pos] == '~') {
            q->pos++;
            char *end;
            long e = strtol(q->s + q->pos, &end, 10);
            if (end == q->s + q->pos)
                e = 2;
            q->pos = (size_t)(end - q->s);
            fz = json_integer(e);
        }
        sc_status st = qs_term(q, field, flen, sc_slice_make(buf, n), false, fz, 0, &res);
        json_decref(fz);
        SC_TRY(st);
    }
    if (q->pos < q->len && q->s[q->pos] == '^') {
        q->pos++;
        char *end;
        double b = strtod(q->s + q->pos, &end);
        if (end == q->s + q->pos)
            return fail(p, "query_shard_exception", "Failed to parse query [%.*s]: bad boost",
                        (int)q->len, q->s);
        q->pos = (size_t)(end - q->s);
        res->boost *= (float)b;
    }
    *out = res;
    return SC_OK;
}

/* A sequence of clauses with +/-/NOT modifiers and AND/OR connectives (Lucene precedence is
 * approximated the way Lucene's classic parser does: AND binds the neighbours as MUST). */
static sc_status qs_or(qs *q, sc_query **out)
{
    P *p = q->p;
    sc_query *b = NEW(p, sc_query_bool(p->a));
    sc_query_occur occ_default = q->and_default ? SC_OCCUR_MUST : SC_OCCUR_SHOULD;
    bool prev_and = false, saw_or = false;
    size_t n = 0;
    for (;;) {
        qs_ws(q);
        if (q->pos >= q->len || q->s[q->pos] == ')')
            break;
        bool and_next = false;
        if (n > 0 && (qs_word(q, "AND") || (!q->simple && q->pos + 1 < q->len &&
                                            q->s[q->pos] == '&' && q->s[q->pos + 1] == '&' &&
                                            (q->pos += 2)))) {
            and_next = true;
            qs_ws(q);
        } else if (n > 0 && (qs_word(q, "OR") ||
                             (q->pos + 1 < q->len && q->s[q->pos] == '|' &&
                              q->s[q->pos + 1] == '|' && (q->pos += 2)) ||
                             (q->simple && q->s[q->pos] == '|' && (q->pos += 1)))) {
            saw_or = true;
            qs_ws(q);
        }
        sc_query_occur occ = occ_default;
        if (saw_or && !and_next)
            occ = SC_OCCUR_SHOULD;
        if (qs_word(q, "NOT") || (q->pos < q->len && q->s[q->pos] == '!' && !q->simple &&
                                  (q->pos += 1))) {
            occ = SC_OCCUR_MUST_NOT;
        } else if (q->pos < q->len && q->s[q->pos] == '+') {
            q->pos++;
            occ = SC_OCCUR_MUST;
        } else if (q->pos < q->len && q->s[q->pos] == '-') {
            q->pos++;
            occ = SC_OCCUR_MUST_NOT;
        } else if (and_next) {
            occ = SC_OCCUR_MUST;
        }
        if (and_next && n > 0 && b->u.bool_.clauses[n - 1].occur == SC_OCCUR_SHOULD)
            b->u.bool_.clauses[n - 1].occur = SC_OCCUR_MUST;
        sc_query *c = NULL;
        SC_TRY(qs_clause(q, &c));
        sc_status st = sc_query_bool_add(p->a, b, occ, c);
        if (st == SC_ELIMIT)
            return fail(p, "illegal_argument_exception",
                        "too_many_clauses: maxClauseCount is set to 1024");
        if (st != SC_OK)
            return oom(p);
        n++;
        prev_and = and_next;
        saw_or = false;
    }
    (void)prev_and;
    if (n == 0) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (n == 1 && (b->u.bool_.clauses[0].occur == SC_OCCUR_MUST ||
                   b->u.bool_.clauses[0].occur == SC_OCCUR_SHOULD)) {
        *out = b->u.bool_.clauses[0].query;
        return SC_OK;
    }
    *out = b;
    return SC_OK;
}

static sc_status q_query_string_common(P *p, const char *qname, const json_t *body, bool simple,
                                       sc_query **out)
{
    static const char *const keys[] = {
        "query", "default_field", "fields", "default_operator", "analyzer", "boost",
        "allow_leading_wildcard", "lenient", "analyze_wildcard", "fuzziness", "phrase_slop",
        "minimum_should_match", "flags", "_name", "auto_generate_synonyms_phrase_query",
        "quote_field_suffix", "type", "tie_breaker", "escape", "time_zone",
        "enable_position_increments", "fuzzy_max_expansions", "fuzzy_prefix_length",
        "fuzzy_transpositions", "max_determinized_states", "rewrite", "quote_analyzer",
        "analyze_wildcard", NULL};
    if (!json_is_object(body))
        return fail(p, "parsing_exception", "[%s] query malformed", qname);
    SC_TRY(check_keys(p, qname, body, keys));
    json_t *query = json_object_get(body, "query");
    if (!json_is_string(query))
        return fail(p, "parsing_exception", "[%s] must be provided with a [query]", qname);
    qs q = {.p = p, .s = json_string_value(query), .len = json_string_length(query),
            .simple = simple};
    json_t *op = json_object_get(body, "default_operator");
    if (op && json_is_string(op)) {
        if (strcasecmp(json_string_value(op), "and") == 0)
            q.and_default = true;
        else if (strcasecmp(json_string_value(op), "or") != 0)
            return fail(p, "parsing_exception", "[%s] unknown default_operator [%s]", qname,
                        json_string_value(op));
    }
    json_t *an = json_object_get(body, "analyzer");
    if (an && json_is_string(an))
        q.analyzer = json_string_value(an);
    json_t *fields = json_object_get(body, "fields");
    json_t *df = json_object_get(body, "default_field");
    const char **names = NULL;
    size_t nn = 0;
    if (fields && json_is_array(fields) && json_array_size(fields) > 0) {
        nn = json_array_size(fields);
        names = sc_arena_alloc(p->a, nn * sizeof *names);
        if (!names)
            return oom(p);
        for (size_t i = 0; i < nn; i++) {
            json_t *f = json_array_get(fields, i);
            if (!json_is_string(f))
                return fail(p, "parsing_exception", "[%s] fields must be strings", qname);
            names[i] = json_string_value(f);
        }
    } else if (df && json_is_string(df) && strcmp(json_string_value(df), "*") != 0) {
        names = sc_arena_alloc(p->a, sizeof *names);
        if (!names)
            return oom(p);
        names[0] = json_string_value(df);
        nn = 1;
    } else {
        nn = default_fields(p, &names);
    }
    q.fields = sc_arena_alloc(p->a, (nn ? nn : 1) * sizeof *q.fields);
    q.boosts = sc_arena_alloc(p->a, (nn ? nn : 1) * sizeof *q.boosts);
    if (!q.fields || !q.boosts)
        return oom(p);
    for (size_t i = 0; i < nn; i++) {
        sc_slice f;
        SC_TRY(field_boost(p, names[i], &f, &q.boosts[i]));
        q.fields[i] = sc_arena_strndup(p->a, (const char *)f.ptr, f.len);
        if (!q.fields[i])
            return oom(p);
    }
    q.n_fields = nn;
    if (p->env && p->env->analyzer_for && (simple ? nn >= 1 : nn == 1)) {
        /* The search layer's parsers: Lucene's classic and simple syntaxes exactly. */
        sc_query_parser_options o;
        sc_query_parser_options_init(&o);
        o.default_field = sc_slice_cstr(q.fields[0]);
        o.default_operator = q.and_default ? SC_OCCUR_MUST : SC_OCCUR_SHOULD;
        o.analyzer_for = p->env->analyzer_for;
        o.ctx = p->env->ctx;
        if (q.analyzer) {
            o.analyzer = p->env->analyzer_named ? p->env->analyzer_named(p->env->ctx, q.analyzer)
                                                : NULL;
            if (!o.analyzer)
                return fail(p, "illegal_argument_exception", "analyzer [%s] has not been configured",
                            q.analyzer);
            o.analyzer_for = NULL;
        } else {
            o.analyzer = p->env->analyzer_named ? p->env->analyzer_named(p->env->ctx, NULL) : NULL;
        }
        json_t *v;
        int64_t iv;
        if ((v = json_object_get(body, "phrase_slop")) && get_int(v, &iv) && iv >= 0)
            o.phrase_slop = (uint32_t)iv;
        if ((v = json_object_get(body, "fuzzy_prefix_length")) && get_int(v, &iv) && iv >= 0)
            o.fuzzy_prefix_length = (uint32_t)iv;
        if ((v = json_object_get(body, "fuzzy_max_expansions")) && get_int(v, &iv) && iv > 0)
            o.fuzzy_max_expansions = (uint32_t)iv;
        if ((v = json_object_get(body, "allow_leading_wildcard")) && json_is_boolean(v))
            o.allow_leading_wildcard = json_is_true(v);
        sc_slice *fs = NULL;
        if (simple) {
            fs = sc_arena_alloc(p->a, nn * sizeof *fs);
            if (!fs)
                return oom(p);
            for (size_t i = 0; i < nn; i++)
                fs[i] = sc_slice_cstr(q.fields[i]);
            o.fields = fs;
            o.field_boosts = q.boosts;
            o.n_fields = nn;
        }
        sc_query_parse_error perr;
        memset(&perr, 0, sizeof perr);
        sc_slice text = sc_slice_make(q.s, q.len);
        sc_status st = simple ? sc_simple_query_string_parse(text, &o, p->a, out, &perr)
                              : sc_query_string_parse(text, &o, p->a, out, &perr);
        if (st == SC_ENOMEM)
            return oom(p);
        if (st == SC_ELIMIT)
            return fail(p, "illegal_argument_exception",
                        "too_many_clauses: maxClauseCount is set to 1024 (%s)", perr.msg);
        if (st != SC_OK)
            return fail(p, "query_shard_exception",
                        "Failed to parse query [%.*s]: %s at offset %zu", (int)q.len, q.s,
                        perr.msg[0] ? perr.msg : sc_status_str(st), perr.offset);
        if (!simple && q.boosts[0] != 1.0f)
            (*out)->boost *= q.boosts[0];
        return apply_boost(p, qname, body, *out);
    }
    SC_TRY(qs_or(&q, out));
    qs_ws(&q);
    if (q.pos < q.len)
        return fail(p, "query_shard_exception",
                    "Failed to parse query [%.*s]: unexpected ')' at position %zu", (int)q.len,
                    q.s, q.pos);
    return apply_boost(p, qname, body, *out);
}

static sc_status q_query_string(P *p, const json_t *body, sc_query **out)
{
    return q_query_string_common(p, "query_string", body, false, out);
}

static sc_status q_simple_query_string(P *p, const json_t *body, sc_query **out)
{
    return q_query_string_common(p, "simple_query_string", body, true, out);
}

/* range on numeric-kind fields (numbers, dates with format/time_zone and date math, booleans):
 * gt/gte/lt/lte (and the legacy from/to/include_lower/include_upper) into inclusive bounds,
 * executed by the search layer's points / doc-values range (search/range.h). */
static sc_status q_range(P *p, const json_t *body, sc_query **out)
{
    sc_slice field;
    json_t *v;
    SC_TRY(single_field(p, "range", body, &field, &v));
    if (!json_is_object(v))
        return fail(p, "parsing_exception", "[range] query malformed, no start_object after query name");
    static const char *const keys[] = {"gt",   "gte",           "lt",       "lte",
                                       "from", "to",            "include_lower",
                                       "include_upper", "format", "time_zone",
                                       "boost", "_name",         "relation", NULL};
    SC_TRY(check_keys(p, "range", v, keys));
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
        return fail(p, "parsing_exception", "[range] bounds must be scalars");
    const json_t *fmt = json_object_get(v, "format"), *tz = json_object_get(v, "time_zone");
    if ((fmt && !json_is_string(fmt)) || (tz && !json_is_string(tz)))
        return fail(p, "parsing_exception", "[range] [format] and [time_zone] must be strings");
    int64_t lo, hi;
    bool empty = false;
    sc_status st = numeric_bounds(p, "range", field, from, to, il, iu,
                                  fmt ? json_string_value(fmt) : NULL,
                                  tz ? json_string_value(tz) : NULL, &lo, &hi, &empty);
    if (st == SC_EUNSUPPORTED && p->env && p->env->field_kind &&
        p->env->field_kind(p->env->ctx, field) == SC_DSL_FIELD_UNMAPPED) {
        *out = NEW(p, sc_query_match_none(p->a)); /* ES: a range on an unmapped field */
        return SC_OK;
    }
    if (st == SC_EUNSUPPORTED)
        return fail(p, "illegal_argument_exception",
                    "[range] queries on field [%.*s] are not supported yet (numeric and date "
                    "fields only)",
                    (int)field.len, (const char *)field.ptr);
    if (st != SC_OK)
        return st;
    *out = empty ? NEW(p, sc_query_match_none(p->a))
                 : NEW(p, sc_query_range(p->a, field, &lo, &hi, 1));
    return apply_boost(p, "range", v, *out);
}

typedef sc_status (*qfn)(P *, const json_t *, sc_query **);
static const struct {
    const char *name;
    qfn fn;
} kinds[] = {
    {"match_all", q_match_all},
    {"match_none", q_match_none},
    {"match", q_match},
    {"match_phrase", q_match_phrase},
    {"match_phrase_prefix", q_match_phrase_prefix},
    {"multi_match", q_multi_match},
    {"term", q_term},
    {"terms", q_terms},
    {"ids", q_ids},
    {"exists", q_exists},
    {"prefix", q_prefix},
    {"wildcard", q_wildcard},
    {"regexp", q_regexp},
    {"fuzzy", q_fuzzy},
    {"bool", q_bool},
    {"constant_score", q_constant_score},
    {"boosting", q_boosting},
    {"dis_max", q_dis_max},
    {"query_string", q_query_string},
    {"simple_query_string", q_simple_query_string},
    {"range", q_range},
};

static sc_status parse_query(P *p, const json_t *q, sc_query **out)
{
    if (!json_is_object(q))
        return fail(p, "parsing_exception", "query malformed, must start with start_object");
    if (json_object_size(q) == 0)
        return fail(p, "parsing_exception", "query malformed, empty clause found");
    if (json_object_size(q) > 1) {
        void *it = json_object_iter((json_t *)q);
        const char *first = json_object_iter_key(it);
        const char *second = json_object_iter_key(json_object_iter_next((json_t *)q, it));
        return fail(p, "parsing_exception",
                    "[%s] malformed query, expected [END_OBJECT] but found [FIELD_NAME] (%s)",
                    first, second);
    }
    if (++p->depth > SC_DSL_MAX_DEPTH)
        return fail(p, "parsing_exception",
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
            return st;
        }
    }
    return fail(p, "parsing_exception", "unknown query [%s]", name);
}

sc_status sc_dsl_parse(const sc_dsl_env *env, sc_arena *a, const json_t *query, sc_query **out,
                       sc_dsl_error *err)
{
    P p = {.env = env, .a = a, .err = err, .depth = 0};
    err->type = NULL;
    err->reason[0] = '\0';
    err->status = 400;
    *out = NULL;
    return parse_query(&p, query, out);
}
