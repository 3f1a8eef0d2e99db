/* Query DSL, full-text queries: match, match_phrase, match_phrase_prefix, multi_match,
 * query_string and simple_query_string (see dsl.h, dsl_internal.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl_internal.h"
#include "search/query_parser.h"

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
sc_status sc__dsl_term_or_fuzzy(P *p, sc_slice field, sc_slice term, const json_t *fuzz,
                                const json_t *opts, sc_query **out)
{
    bool ok;
    uint32_t edits = auto_edits(term, fuzz, &ok);
    if (!ok)
        return sc__dsl_fail(p, "parsing_exception", "invalid fuzziness value");
    if (edits == 0) {
        *out = NEW(p, sc_query_term(p->a, field, term));
        return SC_OK;
    }
    int64_t prefix_length = 0, max_exp = SC_QUERY_FUZZY_MAX_EXPANSIONS;
    bool transpositions = true;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "prefix_length")) && !sc__dsl_get_int(v, &prefix_length))
            return sc__dsl_fail(p, "parsing_exception", "[prefix_length] must be an integer");
        if ((v = json_object_get(opts, "max_expansions")) && !sc__dsl_get_int(v, &max_exp))
            return sc__dsl_fail(p, "parsing_exception", "[max_expansions] must be an integer");
        if ((v = json_object_get(opts, "fuzzy_transpositions")) ||
            (v = json_object_get(opts, "transpositions")))
            transpositions = json_is_true(v);
    }
    if (prefix_length < 0 || max_exp <= 0)
        return sc__dsl_fail(p, "illegal_argument_exception", "invalid fuzzy parameters");
    *out = NEW(p, sc_query_fuzzy(p->a, field, term, edits, (uint32_t)prefix_length,
                                 (uint32_t)max_exp, transpositions));
    return SC_OK;
}

/* The last term of match_bool_prefix / multi_match bool_prefix: a prefix query with constant
 * score, as Elasticsearch's default rewrite; fuzziness applies to the other terms only. */
static sc_status last_prefix(P *p, sc_slice field, sc_slice term, sc_query **out)
{
    *out = NEW(p, sc_query_prefix(p->a, field, term));
    return SC_OK;
}

/* Builds the query of a `match` on one field: analyzed text -> term / bool of terms. With
 * prefix_last (match_bool_prefix, multi_match bool_prefix) the last term is a prefix, so
 * "lapt" finds "laptop" as the user types. */
static sc_status build_match(P *p, sc_slice field, const json_t *query, const json_t *opts,
                             bool prefix_last, sc_query **out)
{
    SC_TRY(sc__dsl_no_geo(p, field));
    sc_dsl_field_kind kind = sc__dsl_field_kind(p, field);
    if (kind == SC_DSL_FIELD_KEYWORD || kind == SC_DSL_FIELD_NUMERIC) {
        sc_slice t;
        SC_TRY(sc__dsl_encode_term(p, field, query, &t));
        if (prefix_last && kind == SC_DSL_FIELD_KEYWORD)
            return last_prefix(p, field, t, out);
        return sc__dsl_term_or_fuzzy(p, field, t, opts ? json_object_get(opts, "fuzziness") : NULL,
                                     opts, out);
    }
    sc_slice text;
    if (!sc__dsl_scalar_text(p, query, &text))
        return sc__dsl_fail(p, "parsing_exception", "[match] unknown token [%s] after [query]",
                            json_is_object(query) ? "START_OBJECT" : "START_ARRAY");
    const char *analyzer = NULL;
    bool and_op = false;
    const json_t *fuzz = NULL, *msm = NULL;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "analyzer"))) {
            if (!json_is_string(v))
                return sc__dsl_fail(p, "parsing_exception", "[match] [analyzer] must be a string");
            analyzer = json_string_value(v);
        }
        if ((v = json_object_get(opts, "operator"))) {
            const char *o = json_is_string(v) ? json_string_value(v) : "";
            if (strcasecmp(o, "and") == 0)
                and_op = true;
            else if (strcasecmp(o, "or") != 0)
                return sc__dsl_fail(p, "parsing_exception", "[match] unknown operator [%s]", o);
        }
        fuzz = json_object_get(opts, "fuzziness");
        msm = json_object_get(opts, "minimum_should_match");
    }
    sc_dsl_token *toks;
    size_t n;
    SC_TRY(sc__dsl_analyze(p, field, analyzer, text, &toks, &n));
    if (n == 0) {
        const json_t *ztq = opts ? json_object_get(opts, "zero_terms_query") : NULL;
        if (ztq && json_is_string(ztq) && strcasecmp(json_string_value(ztq), "all") == 0)
            *out = NEW(p, sc_query_match_all(p->a));
        else
            *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (n == 1)
        return prefix_last ? last_prefix(p, field, toks[0].term, out)
                           : sc__dsl_term_or_fuzzy(p, field, toks[0].term, fuzz, opts, out);
    sc_query *b = NEW(p, sc_query_bool(p->a));
    for (size_t i = 0; i < n; i++) {
        sc_query *t = NULL;
        if (prefix_last && i == n - 1)
            SC_TRY(last_prefix(p, field, toks[i].term, &t));
        else
            SC_TRY(sc__dsl_term_or_fuzzy(p, field, toks[i].term, fuzz, opts, &t));
        sc_status st = sc_query_bool_add(p->a, b, and_op ? SC_OCCUR_MUST : SC_OCCUR_SHOULD, t);
        if (st == SC_ELIMIT)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "too_many_clauses: maxClauseCount is "
                                "set to 1024");
        if (st != SC_OK)
            return sc__dsl_oom(p);
    }
    if (!and_op && msm) {
        int32_t m;
        if (!sc_dsl_minimum_should_match(msm, n, &m))
            return sc__dsl_fail(p, "parsing_exception", "[match] invalid [minimum_should_match]");
        b->u.bool_.minimum_should_match = m;
    }
    *out = b;
    return SC_OK;
}

static sc_status build_phrase(P *p, sc_slice field, const json_t *query, const json_t *opts,
                              bool prefix_last, sc_query **out)
{
    SC_TRY(sc__dsl_no_geo(p, field));
    sc_dsl_field_kind kind = sc__dsl_field_kind(p, field);
    if (kind == SC_DSL_FIELD_KEYWORD || kind == SC_DSL_FIELD_NUMERIC) {
        sc_slice t;
        SC_TRY(sc__dsl_encode_term(p, field, query, &t));
        *out =
            NEW(p, prefix_last ? sc_query_prefix(p->a, field, t) : sc_query_term(p->a, field, t));
        return SC_OK;
    }
    sc_slice text;
    if (!sc__dsl_scalar_text(p, query, &text))
        return sc__dsl_fail(p, "parsing_exception", "[match_phrase] query must be text");
    const char *analyzer = NULL;
    int64_t slop = 0;
    if (opts) {
        json_t *v;
        if ((v = json_object_get(opts, "analyzer")) && json_is_string(v))
            analyzer = json_string_value(v);
        if ((v = json_object_get(opts, "slop")) && (!sc__dsl_get_int(v, &slop) || slop < 0))
            return sc__dsl_fail(p, "parsing_exception",
                                "[match_phrase] [slop] must be a non-negative "
                                "integer");
    }
    sc_dsl_token *toks;
    size_t n;
    SC_TRY(sc__dsl_analyze(p, field, analyzer, text, &toks, &n));
    if (n == 0) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (n == 1) {
        *out = NEW(p, prefix_last ? sc_query_prefix(p->a, field, toks[0].term)
                                  : sc_query_term(p->a, field, toks[0].term));
        return SC_OK;
    }
    if (!prefix_last) { /* a synonym or word-delimiter graph: one phrase per path */
        SC_TRY(sc__dsl_graph_phrase(p, field, toks, n, (uint32_t)slop, out));
        if (*out)
            return SC_OK;
    }
    size_t np = prefix_last ? n - 1 : n;
    sc_slice *terms = sc_arena_alloc(p->a, np * sizeof *terms);
    uint32_t *pos = sc_arena_alloc(p->a, np * sizeof *pos);
    if (!terms || !pos)
        return sc__dsl_oom(p);
    for (size_t i = 0; i < np; i++) {
        terms[i] = toks[i].term;
        pos[i] = toks[i].position - toks[0].position;
    }
    if (prefix_last) {
        /* match_phrase_prefix: the whole phrase, its last term a prefix expanded at planning
         * into at most max_expansions terms (default 50), as Elasticsearch's MultiPhraseQuery */
        int64_t max_exp = 50;
        json_t *me = opts ? json_object_get(opts, "max_expansions") : NULL;
        if (me && (!sc__dsl_get_int(me, &max_exp) || max_exp < 1 || max_exp > 1024))
            return sc__dsl_fail(p, "parsing_exception",
                                "[match_phrase_prefix] [max_expansions] must be from 1 to 1024");
        sc_slice *all = sc_arena_alloc(p->a, n * sizeof *all);
        uint32_t *apos = sc_arena_alloc(p->a, n * sizeof *apos);
        if (!all || !apos)
            return sc__dsl_oom(p);
        for (size_t i = 0; i < n; i++) {
            all[i] = toks[i].term;
            apos[i] = toks[i].position - toks[0].position;
        }
        sc_query *pp = NEW(p, sc_query_phrase(p->a, field, all, apos, n, (uint32_t)slop));
        pp->u.phrase.prefix_last = true;
        pp->u.phrase.max_expansions = (uint32_t)max_exp;
        *out = pp;
        return SC_OK;
    }
    *out = np == 1 ? NEW(p, sc_query_term(p->a, field, terms[0]))
                   : NEW(p, sc_query_phrase(p->a, field, terms, pos, np, (uint32_t)slop));
    return SC_OK;
}

/* match / match_phrase / match_phrase_prefix: {"field": "text"} or {"field": {"query": ...}}. */
static sc_status q_match_common(P *p, const char *qname, const json_t *body, int mode,
                                sc_query **out)
{
    sc_slice field;
    json_t *v;
    SC_TRY(sc__dsl_single_field(p, qname, body, &field, &v));
    const json_t *query = v, *opts = NULL;
    if (json_is_object(v)) {
        static const char *const match_keys[] = {"query",
                                                 "operator",
                                                 "minimum_should_match",
                                                 "fuzziness",
                                                 "prefix_length",
                                                 "max_expansions",
                                                 "fuzzy_transpositions",
                                                 "analyzer",
                                                 "boost",
                                                 "zero_terms_query",
                                                 "lenient",
                                                 "auto_generate_synonyms_phrase_query",
                                                 "cutoff_frequency",
                                                 "fuzzy_rewrite",
                                                 "_name",
                                                 "slop",
                                                 NULL};
        SC_TRY(sc__dsl_check_keys(p, qname, v, match_keys));
        opts = v;
        query = json_object_get(v, "query");
        if (!query)
            return sc__dsl_fail(p, "parsing_exception", "[%s] requires query value", qname);
    }
    if (json_is_null(query))
        return sc__dsl_fail(p, "parsing_exception", "[%s] requires query value", qname);
    sc_status st = mode == 0   ? build_match(p, field, query, opts, false, out)
                   : mode == 1 ? build_phrase(p, field, query, opts, false, out)
                   : mode == 3 ? build_match(p, field, query, opts, true, out)
                               : build_phrase(p, field, query, opts, true, out);
    if (st != SC_OK)
        return st;
    return sc__dsl_apply_boost(p, qname, opts, *out);
}

sc_status sc__dsl_q_match(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match", body, 0, out);
}

sc_status sc__dsl_q_match_phrase(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match_phrase", body, 1, out);
}

sc_status sc__dsl_q_match_phrase_prefix(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match_phrase_prefix", body, 2, out);
}

sc_status sc__dsl_q_match_bool_prefix(P *p, const json_t *body, sc_query **out)
{
    return q_match_common(p, "match_bool_prefix", body, 3, out);
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
        return sc__dsl_fail(p, "parsing_exception", "invalid field boost [%s]", spec);
    *boost = (float)b;
    return SC_OK;
}

static size_t default_fields(P *p, const char ***fields)
{
    if (p->env && p->env->default_fields)
        return p->env->default_fields(p->env->ctx, fields);
    return 0;
}

sc_status sc__dsl_q_multi_match(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"query",
                                       "fields",
                                       "type",
                                       "operator",
                                       "minimum_should_match",
                                       "fuzziness",
                                       "prefix_length",
                                       "max_expansions",
                                       "analyzer",
                                       "boost",
                                       "tie_breaker",
                                       "slop",
                                       "zero_terms_query",
                                       "lenient",
                                       "_name",
                                       "fuzzy_transpositions",
                                       "auto_generate_synonyms_phrase_query",
                                       NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[multi_match] query malformed");
    SC_TRY(sc__dsl_check_keys(p, "multi_match", body, keys));
    json_t *query = json_object_get(body, "query");
    if (!query || json_is_null(query))
        return sc__dsl_fail(p, "parsing_exception", "No text specified for multi_match query");
    const char *type = "best_fields";
    json_t *t = json_object_get(body, "type");
    if (t) {
        if (!json_is_string(t))
            return sc__dsl_fail(p, "parsing_exception", "[multi_match] [type] must be a string");
        type = json_string_value(t);
    }
    int mode;
    if (!strcmp(type, "best_fields") || !strcmp(type, "cross_fields") ||
        !strcmp(type, "most_fields"))
        mode = 0;
    else if (!strcmp(type, "bool_prefix"))
        mode = 3;
    else if (!strcmp(type, "phrase"))
        mode = 1;
    else if (!strcmp(type, "phrase_prefix"))
        mode = 2;
    else
        return sc__dsl_fail(p, "parsing_exception",
                            "failed to parse [multi_match] query type [%s]. "
                            "unknown type.",
                            type);
    /* bool_prefix scores like most_fields (Elasticsearch: tie_breaker 1.0, a sum). */
    bool most = strcmp(type, "most_fields") == 0 || mode == 3;
    float tie = 0;
    json_t *tb = json_object_get(body, "tie_breaker");
    if (tb && !sc__dsl_get_float(tb, &tie))
        return sc__dsl_fail(p, "parsing_exception", "[multi_match] [tie_breaker] must be a number");
    const char **names = NULL;
    size_t n_names = 0;
    json_t *fields = json_object_get(body, "fields");
    if (fields && json_is_string(fields)) {
        names = sc_arena_alloc(p->a, sizeof *names);
        if (!names)
            return sc__dsl_oom(p);
        names[0] = json_string_value(fields);
        n_names = 1;
    } else if (fields && json_is_array(fields) && json_array_size(fields) > 0) {
        n_names = json_array_size(fields);
        names = sc_arena_alloc(p->a, n_names * sizeof *names);
        if (!names)
            return sc__dsl_oom(p);
        for (size_t i = 0; i < n_names; i++) {
            json_t *f = json_array_get(fields, i);
            if (!json_is_string(f))
                return sc__dsl_fail(p, "parsing_exception", "[multi_match] fields must be strings");
            names[i] = json_string_value(f);
        }
    } else if (fields && !json_is_array(fields)) {
        return sc__dsl_fail(p, "parsing_exception", "[multi_match] [fields] must be an array");
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
        sc_status st = mode == 0 || mode == 3 ? build_match(p, field, query, body, mode == 3, &q)
                                              : build_phrase(p, field, query, body, mode == 2, &q);
        if (st != SC_OK)
            return st;
        q->boost *= fb;
        st = most ? sc_query_bool_add(p->a, comb, SC_OCCUR_SHOULD, q)
                  : sc_query_dis_max_add(p->a, comb, q);
        if (st != SC_OK)
            return sc__dsl_oom(p);
    }
    *out = comb;
    return sc__dsl_apply_boost(p, "multi_match", body, comb);
}

/* ---- hooks of the search layer's query_string parser (ctx: the DSL parse state) ---- */

static const sc_analyzer *qs_analyzer_for(void *ctx, sc_slice field)
{
    P *p = ctx;
    return p->env->analyzer_for(p->env->ctx, field);
}

/* `field:[lo TO hi]` / `field:>=x` as the field's type wants it, like the range query: numeric,
 * date and boolean fields through the mapping's encoders, keyword (normalized) and ip through
 * the term encoders; anything else (text) stays the parser's term range (*out NULL). */
static sc_status qs_range_query(void *ctx, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                                bool incl_lo, bool incl_hi, sc_arena *a, sc_query **out, char *msg,
                                size_t msg_cap)
{
    P *p = ctx;
    *out = NULL;
    json_t *from = lo ? json_stringn((const char *)lo->ptr, lo->len) : NULL;
    json_t *to = hi ? json_stringn((const char *)hi->ptr, hi->len) : NULL;
    sc_status st = (lo && !from) || (hi && !to) ? SC_ENOMEM : SC_EUNSUPPORTED;
    if (st == SC_EUNSUPPORTED && p->env->encode_range) {
        int64_t l, h;
        bool empty = false;
        st = p->env->encode_range(p->env->ctx, field, from, to, incl_lo, incl_hi, NULL, NULL, &l,
                                  &h, &empty, msg, msg_cap);
        if (st == SC_OK)
            *out = empty ? sc_query_match_none(a) : sc_query_range(a, field, &l, &h, 1);
    }
    if (st == SC_EUNSUPPORTED && p->env->encode_term_range &&
        sc__dsl_field_kind(p, field) == SC_DSL_FIELD_KEYWORD) {
        sc_slice l = {0}, h = {0};
        st = p->env->encode_term_range(p->env->ctx, field, from, to, a, &l, &h, msg, msg_cap);
        if (st == SC_OK)
            *out = sc_query_term_range(a, field, lo ? &l : NULL, hi ? &h : NULL, incl_lo, incl_hi);
    }
    json_decref(from);
    json_decref(to);
    if (st == SC_EUNSUPPORTED)
        return SC_OK; /* the parser's own term range */
    if (st == SC_OK && !*out)
        return SC_ENOMEM;
    return st;
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
    if (q->pos + n < q->len && !isspace((unsigned char)q->s[q->pos + n]) && q->s[q->pos + n] != '(')
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
            return sc__dsl_oom(p);
        for (size_t i = 0; i < text.len; i++)
            low[i] = (char)tolower(text.ptr[i]);
        sc_slice lt = sc_slice_make(low, text.len);
        bool only_trailing_star = text.ptr[text.len - 1] == '*';
        for (size_t i = 0; i + 1 < text.len; i++)
            if (text.ptr[i] == '*' || text.ptr[i] == '?')
                only_trailing_star = false;
        if (sc__dsl_field_kind(p, field) != SC_DSL_FIELD_TEXT)
            lt = text;
        *out = NEW(p, only_trailing_star
                          ? sc_query_prefix(p->a, field, sc_slice_sub(lt, 0, lt.len - 1))
                          : sc_query_wildcard(p->a, field, lt));
        return SC_OK;
    }
    json_t *jt = json_stringn((const char *)text.ptr, text.len);
    json_t *opts = json_object();
    if (!jt || !opts) {
        json_decref(jt);
        json_decref(opts);
        return sc__dsl_oom(p);
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
        st = build_match(p, field, jt, opts, false, out);
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
            return sc__dsl_oom(p);
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
        return sc__dsl_fail(p, "query_shard_exception", "Failed to parse query [%.*s]", (int)q->len,
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
            return sc__dsl_fail(p, "query_shard_exception", "query is nested too deeply");
        q->pos++;
        const char **sf = q->fields;
        float *sb = q->boosts;
        size_t sn = q->n_fields;
        float one = 1;
        if (field) {
            char *f = sc_arena_strndup(p->a, field, flen);
            const char **fa = sc_arena_alloc(p->a, sizeof *fa);
            if (!f || !fa)
                return sc__dsl_oom(p);
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
            return sc__dsl_fail(p, "query_shard_exception",
                                "Failed to parse query [%.*s]: missing closing parenthesis",
                                (int)q->len, q->s);
        q->pos++;
        q->depth--;
    } else if (q->pos < q->len && q->s[q->pos] == '"') {
        size_t s = ++q->pos;
        while (q->pos < q->len && q->s[q->pos] != '"')
            q->pos++;
        if (q->pos >= q->len)
            return sc__dsl_fail(p, "query_shard_exception",
                                "Failed to parse query [%.*s]: unterminated phrase", (int)q->len,
                                q->s);
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
            return sc__dsl_oom(p);
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
            return sc__dsl_fail(p, "query_shard_exception",
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
            return sc__dsl_fail(p, "query_shard_exception",
                                "Failed to parse query [%.*s]: bad boost", (int)q->len, q->s);
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
        if (n > 0 &&
            (qs_word(q, "AND") || (!q->simple && q->pos + 1 < q->len && q->s[q->pos] == '&' &&
                                   q->s[q->pos + 1] == '&' && (q->pos += 2)))) {
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
        if (qs_word(q, "NOT") ||
            (q->pos < q->len && q->s[q->pos] == '!' && !q->simple && (q->pos += 1))) {
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
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "too_many_clauses: maxClauseCount is set to 1024");
        if (st != SC_OK)
            return sc__dsl_oom(p);
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
    static const char *const keys[] = {"query",
                                       "default_field",
                                       "fields",
                                       "default_operator",
                                       "analyzer",
                                       "boost",
                                       "allow_leading_wildcard",
                                       "lenient",
                                       "analyze_wildcard",
                                       "fuzziness",
                                       "phrase_slop",
                                       "minimum_should_match",
                                       "flags",
                                       "_name",
                                       "auto_generate_synonyms_phrase_query",
                                       "quote_field_suffix",
                                       "type",
                                       "tie_breaker",
                                       "escape",
                                       "time_zone",
                                       "enable_position_increments",
                                       "fuzzy_max_expansions",
                                       "fuzzy_prefix_length",
                                       "fuzzy_transpositions",
                                       "max_determinized_states",
                                       "rewrite",
                                       "quote_analyzer",
                                       "analyze_wildcard",
                                       NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[%s] query malformed", qname);
    SC_TRY(sc__dsl_check_keys(p, qname, body, keys));
    json_t *query = json_object_get(body, "query");
    if (!json_is_string(query))
        return sc__dsl_fail(p, "parsing_exception", "[%s] must be provided with a [query]", qname);
    qs q = {
        .p = p, .s = json_string_value(query), .len = json_string_length(query), .simple = simple};
    json_t *op = json_object_get(body, "default_operator");
    if (op && json_is_string(op)) {
        if (strcasecmp(json_string_value(op), "and") == 0)
            q.and_default = true;
        else if (strcasecmp(json_string_value(op), "or") != 0)
            return sc__dsl_fail(p, "parsing_exception", "[%s] unknown default_operator [%s]", qname,
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
            return sc__dsl_oom(p);
        for (size_t i = 0; i < nn; i++) {
            json_t *f = json_array_get(fields, i);
            if (!json_is_string(f))
                return sc__dsl_fail(p, "parsing_exception", "[%s] fields must be strings", qname);
            names[i] = json_string_value(f);
        }
    } else if (df && json_is_string(df) && strcmp(json_string_value(df), "*") != 0) {
        names = sc_arena_alloc(p->a, sizeof *names);
        if (!names)
            return sc__dsl_oom(p);
        names[0] = json_string_value(df);
        nn = 1;
    } else {
        nn = default_fields(p, &names);
    }
    q.fields = sc_arena_alloc(p->a, (nn ? nn : 1) * sizeof *q.fields);
    q.boosts = sc_arena_alloc(p->a, (nn ? nn : 1) * sizeof *q.boosts);
    if (!q.fields || !q.boosts)
        return sc__dsl_oom(p);
    for (size_t i = 0; i < nn; i++) {
        sc_slice f;
        SC_TRY(field_boost(p, names[i], &f, &q.boosts[i]));
        q.fields[i] = sc_arena_strndup(p->a, (const char *)f.ptr, f.len);
        if (!q.fields[i])
            return sc__dsl_oom(p);
    }
    q.n_fields = nn;
    if (p->env && p->env->analyzer_for && (simple ? nn >= 1 : nn == 1)) {
        /* The search layer's parsers: Lucene's classic and simple syntaxes exactly. */
        sc_query_parser_options o;
        sc_query_parser_options_init(&o);
        o.default_field = sc_slice_cstr(q.fields[0]);
        o.default_operator = q.and_default ? SC_OCCUR_MUST : SC_OCCUR_SHOULD;
        o.analyzer_for = qs_analyzer_for;
        o.range_query = qs_range_query;
        o.ctx = p;
        if (q.analyzer) {
            o.analyzer =
                p->env->analyzer_named ? p->env->analyzer_named(p->env->ctx, q.analyzer) : NULL;
            if (!o.analyzer)
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "analyzer [%s] has not been configured", q.analyzer);
            o.analyzer_for = NULL;
        } else {
            o.analyzer = p->env->analyzer_named ? p->env->analyzer_named(p->env->ctx, NULL) : NULL;
        }
        json_t *v;
        int64_t iv;
        if ((v = json_object_get(body, "phrase_slop")) && sc__dsl_get_int(v, &iv) && iv >= 0)
            o.phrase_slop = (uint32_t)iv;
        if ((v = json_object_get(body, "fuzzy_prefix_length")) && sc__dsl_get_int(v, &iv) &&
            iv >= 0)
            o.fuzzy_prefix_length = (uint32_t)iv;
        if ((v = json_object_get(body, "fuzzy_max_expansions")) && sc__dsl_get_int(v, &iv) &&
            iv > 0)
            o.fuzzy_max_expansions = (uint32_t)iv;
        if ((v = json_object_get(body, "allow_leading_wildcard")) && json_is_boolean(v))
            o.allow_leading_wildcard = json_is_true(v);
        sc_slice *fs = NULL;
        if (simple) {
            fs = sc_arena_alloc(p->a, nn * sizeof *fs);
            if (!fs)
                return sc__dsl_oom(p);
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
            return sc__dsl_oom(p);
        if (st == SC_ELIMIT)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "too_many_clauses: maxClauseCount is set to 1024 (%s)", perr.msg);
        if (st != SC_OK)
            return sc__dsl_fail(p, "query_shard_exception",
                                "Failed to parse query [%.*s]: %s at offset %zu", (int)q.len, q.s,
                                perr.msg[0] ? perr.msg : sc_status_str(st), perr.offset);
        if (!simple && q.boosts[0] != 1.0f)
            (*out)->boost *= q.boosts[0];
        if (!simple)
            SC_TRY(sc__dsl_fix_negative(p, *out));
        return sc__dsl_apply_boost(p, qname, body, *out);
    }
    SC_TRY(qs_or(&q, out));
    qs_ws(&q);
    if (q.pos < q.len)
        return sc__dsl_fail(p, "query_shard_exception",
                            "Failed to parse query [%.*s]: unexpected ')' at position %zu",
                            (int)q.len, q.s, q.pos);
    if (!simple)
        SC_TRY(sc__dsl_fix_negative(p, *out));
    return sc__dsl_apply_boost(p, qname, body, *out);
}

sc_status sc__dsl_q_query_string(P *p, const json_t *body, sc_query **out)
{
    return q_query_string_common(p, "query_string", body, false, out);
}

sc_status sc__dsl_q_simple_query_string(P *p, const json_t *body, sc_query **out)
{
    return q_query_string_common(p, "simple_query_string", body, true, out);
}
