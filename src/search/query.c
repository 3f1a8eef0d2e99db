/* Query tree constructors and a Lucene-style printer (search/query.h). */
#include "search/query.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <float.h>
#include <math.h>
#include <string.h>

static sc_query *node(sc_arena *a, sc_query_kind kind)
{
    sc_query *q = sc_arena_calloc(a, 1, sizeof *q);
    if (q) {
        q->kind = kind;
        q->boost = 1.0f;
    }
    return q;
}

/* Copies a slice into the arena; false on exhaustion. */
static bool dup_slice(sc_arena *a, sc_slice in, sc_slice *out)
{
    char *p = sc_arena_strndup(a, in.len ? (const char *)in.ptr : "", in.len);
    if (!p)
        return false;
    *out = sc_slice_make(p, in.len);
    return true;
}

static sc_slice *dup_slices(sc_arena *a, const sc_slice *in, size_t n)
{
    sc_slice *out = sc_arena_alloc(a, (n ? n : 1) * sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!dup_slice(a, in[i], &out[i]))
            return NULL;
    return out;
}

sc_query *sc_query_match_all(sc_arena *a)
{
    return node(a, SC_QUERY_MATCH_ALL);
}

sc_query *sc_query_match_none(sc_arena *a)
{
    return node(a, SC_QUERY_MATCH_NONE);
}

/* Shared shape: a field and one byte string. */
static sc_query *field_value(sc_arena *a, sc_query_kind kind, sc_slice field, sc_slice v,
                             size_t field_off, size_t value_off)
{
    sc_query *q = node(a, kind);
    if (!q)
        return NULL;
    if (!dup_slice(a, field, (sc_slice *)((char *)q + field_off)) ||
        !dup_slice(a, v, (sc_slice *)((char *)q + value_off)))
        return NULL;
    return q;
}

#define FV(a, kind, member, vname, field, v)                                                       \
    field_value((a), (kind), (field), (v), offsetof(sc_query, u.member.field),                     \
                offsetof(sc_query, u.member.vname))

sc_query *sc_query_term(sc_arena *a, sc_slice field, sc_slice term)
{
    return FV(a, SC_QUERY_TERM, term, term, field, term);
}

sc_query *sc_query_terms(sc_arena *a, sc_slice field, const sc_slice *terms, size_t n_terms)
{
    sc_query *q = node(a, SC_QUERY_TERMS);
    if (!q || !dup_slice(a, field, &q->u.terms.field))
        return NULL;
    q->u.terms.terms = dup_slices(a, terms, n_terms);
    q->u.terms.n_terms = n_terms;
    return q->u.terms.terms ? q : NULL;
}

sc_query *sc_query_bool(sc_arena *a)
{
    sc_query *q = node(a, SC_QUERY_BOOL);
    if (q)
        q->u.bool_.minimum_should_match = -1;
    return q;
}

sc_query *sc_query_phrase(sc_arena *a, sc_slice field, const sc_slice *terms,
                          const uint32_t *positions, size_t n_terms, uint32_t slop)
{
    sc_query *q = node(a, SC_QUERY_PHRASE);
    if (!q || !dup_slice(a, field, &q->u.phrase.field))
        return NULL;
    q->u.phrase.terms = dup_slices(a, terms, n_terms);
    q->u.phrase.positions = sc_arena_alloc(a, (n_terms ? n_terms : 1) * sizeof(uint32_t));
    if (!q->u.phrase.terms || !q->u.phrase.positions)
        return NULL;
    for (size_t i = 0; i < n_terms; i++)
        q->u.phrase.positions[i] = positions ? positions[i] : (uint32_t)i;
    q->u.phrase.n_terms = n_terms;
    q->u.phrase.slop = slop;
    return q;
}

sc_query *sc_query_prefix(sc_arena *a, sc_slice field, sc_slice prefix)
{
    return FV(a, SC_QUERY_PREFIX, prefix, prefix, field, prefix);
}

sc_query *sc_query_term_range(sc_arena *a, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                              bool incl_lo, bool incl_hi)
{
    sc_query *q = node(a, SC_QUERY_TERM_RANGE);
    if (!q || !dup_slice(a, field, &q->u.term_range.field))
        return NULL;
    if (lo && !dup_slice(a, *lo, &q->u.term_range.lo))
        return NULL;
    if (hi && !dup_slice(a, *hi, &q->u.term_range.hi))
        return NULL;
    q->u.term_range.has_lo = lo != NULL;
    q->u.term_range.has_hi = hi != NULL;
    q->u.term_range.incl_lo = incl_lo;
    q->u.term_range.incl_hi = incl_hi;
    return q;
}

sc_query *sc_query_wildcard(sc_arena *a, sc_slice field, sc_slice pattern)
{
    sc_query *q = FV(a, SC_QUERY_WILDCARD, wildcard, pattern, field, pattern);
    if (q)
        q->u.wildcard.max_determinized_states = SC_QUERY_MAX_DETERMINIZED_STATES;
    return q;
}

sc_query *sc_query_regexp(sc_arena *a, sc_slice field, sc_slice pattern, uint32_t flags)
{
    sc_query *q = FV(a, SC_QUERY_REGEXP, regexp, pattern, field, pattern);
    if (q) {
        q->u.regexp.flags = flags;
        q->u.regexp.max_determinized_states = SC_QUERY_MAX_DETERMINIZED_STATES;
    }
    return q;
}

sc_query *sc_query_fuzzy(sc_arena *a, sc_slice field, sc_slice term, uint32_t max_edits,
                         uint32_t prefix_length, uint32_t max_expansions, bool transpositions)
{
    sc_query *q = FV(a, SC_QUERY_FUZZY, fuzzy, term, field, term);
    if (q) {
        q->u.fuzzy.max_edits = max_edits;
        q->u.fuzzy.prefix_length = prefix_length;
        q->u.fuzzy.max_expansions = max_expansions;
        q->u.fuzzy.transpositions = transpositions;
    }
    return q;
}

sc_query *sc_query_constant_score(sc_arena *a, sc_query *inner)
{
    sc_query *q = node(a, SC_QUERY_CONSTANT_SCORE);
    if (q)
        q->u.constant_score.inner = inner;
    return q;
}

sc_query *sc_query_boosting(sc_arena *a, sc_query *positive, sc_query *negative,
                            float negative_boost)
{
    sc_query *q = node(a, SC_QUERY_BOOSTING);
    if (q) {
        q->u.boosting.positive = positive;
        q->u.boosting.negative = negative;
        q->u.boosting.negative_boost = negative_boost;
    }
    return q;
}

sc_query *sc_query_nested(sc_arena *a, sc_slice path, sc_query *inner,
                          sc_nested_score_mode score_mode)
{
    sc_query *q = node(a, SC_QUERY_NESTED);
    if (q && !dup_slice(a, path, &q->u.nested.path))
        return NULL;
    if (q) {
        q->u.nested.inner = inner;
        q->u.nested.score_mode = score_mode;
    }
    return q;
}

sc_query *sc_query_function_score(sc_arena *a, sc_query *inner)
{
    sc_query *q = node(a, SC_QUERY_FUNCTION_SCORE);
    if (q) {
        q->u.function_score.inner = inner;
        q->u.function_score.max_boost = FLT_MAX;
    }
    return q;
}

sc_status sc_query_function_score_add(sc_arena *a, sc_query *q, const sc_score_function *f)
{
    if (q->kind != SC_QUERY_FUNCTION_SCORE)
        return SC_EINVAL;
    if (q->u.function_score.n_fns == q->u.function_score.cap_fns) {
        size_t cap = q->u.function_score.cap_fns ? q->u.function_score.cap_fns * 2 : 4;
        sc_score_function *fns = sc_arena_alloc(a, cap * sizeof *fns);
        if (!fns)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        if (q->u.function_score.n_fns)
            memcpy(fns, q->u.function_score.fns, q->u.function_score.n_fns * sizeof *fns);
        q->u.function_score.fns = fns;
        q->u.function_score.cap_fns = cap;
    }
    sc_score_function *d = &q->u.function_score.fns[q->u.function_score.n_fns];
    *d = *f;
    if (f->field.len) {
        uint8_t *copy = sc_arena_alloc(a, f->field.len);
        if (!copy)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        memcpy(copy, f->field.ptr, f->field.len);
        d->field = sc_slice_make(copy, f->field.len);
    }
    q->u.function_score.n_fns++;
    return SC_OK;
}

sc_query *sc_query_dis_max(sc_arena *a, float tie_breaker)
{
    sc_query *q = node(a, SC_QUERY_DIS_MAX);
    if (q)
        q->u.dis_max.tie_breaker = tie_breaker;
    return q;
}

sc_query *sc_query_ids(sc_arena *a, const sc_slice *ids, size_t n_ids)
{
    sc_query *q = node(a, SC_QUERY_IDS);
    if (!q)
        return NULL;
    q->u.ids.ids = dup_slices(a, ids, n_ids);
    q->u.ids.n_ids = n_ids;
    return q->u.ids.ids ? q : NULL;
}

sc_query *sc_query_knn(sc_arena *a, sc_slice field, const float *vector, uint32_t dims, uint32_t k,
                       uint32_t num_candidates, sc_query *filter, float similarity)
{
    sc_query *q = node(a, SC_QUERY_KNN);
    if (!q || !dup_slice(a, field, &q->u.knn.field))
        return NULL;
    q->u.knn.vector = sc_arena_alloc(a, (size_t)dims * sizeof(float) + 1);
    if (!q->u.knn.vector)
        return NULL;
    if (dims)
        memcpy(q->u.knn.vector, vector, (size_t)dims * sizeof(float));
    q->u.knn.dims = dims;
    q->u.knn.k = k;
    q->u.knn.num_candidates = num_candidates;
    q->u.knn.filter = filter;
    q->u.knn.similarity = similarity;
    q->u.knn.min_score = -INFINITY;
    q->u.knn.oversample = 0;
    return q;
}

sc_query *sc_query_exists(sc_arena *a, sc_slice field)
{
    sc_query *q = node(a, SC_QUERY_EXISTS);
    if (!q || !dup_slice(a, field, &q->u.exists.field))
        return NULL;
    return q;
}

sc_query *sc_query_geo(sc_arena *a, sc_slice field, const sc_geo_shape *shape)
{
    sc_query *q = node(a, SC_QUERY_GEO);
    if (!q || !dup_slice(a, field, &q->u.geo.field))
        return NULL;
    q->u.geo.shape = *shape;
    return q;
}

sc_query *sc_query_range(sc_arena *a, sc_slice field, const int64_t *lo, const int64_t *hi,
                         size_t n)
{
    sc_query *q = node(a, SC_QUERY_RANGE);
    if (!q || n == 0 || !dup_slice(a, field, &q->u.range.field))
        return NULL;
    q->u.range.lo = sc_arena_alloc(a, n * sizeof(int64_t));
    q->u.range.hi = sc_arena_alloc(a, n * sizeof(int64_t));
    if (!q->u.range.lo || !q->u.range.hi)
        return NULL;
    memcpy(q->u.range.lo, lo, n * sizeof(int64_t));
    memcpy(q->u.range.hi, hi, n * sizeof(int64_t));
    q->u.range.n = n;
    return q;
}

sc_status sc_query_bool_add(sc_arena *a, sc_query *q, sc_query_occur occur, sc_query *child)
{
    if (!q || q->kind != SC_QUERY_BOOL || !child)
        return SC_EINVAL;
    if (q->u.bool_.n_clauses >= SC_QUERY_MAX_CLAUSE_COUNT)
        return SC_ELIMIT;
    if (q->u.bool_.n_clauses == q->u.bool_.cap_clauses) {
        size_t cap = q->u.bool_.cap_clauses ? q->u.bool_.cap_clauses * 2 : 4;
        sc_query_clause *c = sc_arena_alloc(a, cap * sizeof *c);
        if (!c)
            return SC_ENOMEM;
        if (q->u.bool_.n_clauses)
            memcpy(c, q->u.bool_.clauses, q->u.bool_.n_clauses * sizeof *c);
        q->u.bool_.clauses = c;
        q->u.bool_.cap_clauses = cap;
    }
    q->u.bool_.clauses[q->u.bool_.n_clauses].occur = occur;
    q->u.bool_.clauses[q->u.bool_.n_clauses].query = child;
    q->u.bool_.n_clauses++;
    return SC_OK;
}

sc_status sc_query_dis_max_add(sc_arena *a, sc_query *q, sc_query *child)
{
    if (!q || q->kind != SC_QUERY_DIS_MAX || !child)
        return SC_EINVAL;
    size_t n = q->u.dis_max.n_queries;
    /* Grow by powers of two: the capacity is implied by n. */
    if ((n & (n - 1)) == 0) {
        size_t cap = n ? n * 2 : 2;
        sc_query **c = sc_arena_alloc(a, cap * sizeof *c);
        if (!c)
            return SC_ENOMEM;
        if (n)
            memcpy(c, q->u.dis_max.queries, n * sizeof *c);
        q->u.dis_max.queries = c;
    }
    q->u.dis_max.queries[n] = child;
    q->u.dis_max.n_queries = n + 1;
    return SC_OK;
}

const char *sc_query_kind_name(sc_query_kind kind)
{
    static const char *const names[] = {
        [SC_QUERY_MATCH_ALL] = "match_all",
        [SC_QUERY_MATCH_NONE] = "match_none",
        [SC_QUERY_TERM] = "term",
        [SC_QUERY_TERMS] = "terms",
        [SC_QUERY_BOOL] = "bool",
        [SC_QUERY_PHRASE] = "match_phrase",
        [SC_QUERY_PREFIX] = "prefix",
        [SC_QUERY_WILDCARD] = "wildcard",
        [SC_QUERY_REGEXP] = "regexp",
        [SC_QUERY_FUZZY] = "fuzzy",
        [SC_QUERY_CONSTANT_SCORE] = "constant_score",
        [SC_QUERY_BOOSTING] = "boosting",
        [SC_QUERY_DIS_MAX] = "dis_max",
        [SC_QUERY_IDS] = "ids",
        [SC_QUERY_EXISTS] = "exists",
        [SC_QUERY_RANGE] = "range",
        [SC_QUERY_GEO] = "geo",
        [SC_QUERY_TERM_RANGE] = "range",
        [SC_QUERY_KNN] = "knn",
        [SC_QUERY_FUNCTION_SCORE] = "function_score",
        [SC_QUERY_NESTED] = "nested",
    };
    if ((unsigned)kind < sizeof names / sizeof names[0] && names[kind])
        return names[kind];
    return "unknown";
}

/* A bounded string builder that keeps counting past the end. */
typedef struct out {
    char *buf;
    size_t cap, len;
} out;

__attribute__((format(printf, 2, 3))) static void outf(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static void out_slice(out *o, sc_slice s)
{
    outf(o, "%.*s", (int)s.len, (const char *)s.ptr);
}

static void print(out *o, const sc_query *q);

static void print_boost(out *o, const sc_query *q)
{
    if (q->boost != 1.0f)
        outf(o, "^%g", (double)q->boost);
}

static void print_bool(out *o, const sc_query *q)
{
    outf(o, "(");
    for (size_t i = 0; i < q->u.bool_.n_clauses; i++) {
        const sc_query_clause *c = &q->u.bool_.clauses[i];
        if (i)
            outf(o, " ");
        static const char *const pre[] = {"+", "", "-", "#"};
        outf(o, "%s", pre[c->occur]);
        print(o, c->query);
    }
    outf(o, ")");
    if (q->u.bool_.minimum_should_match > 0)
        outf(o, "~%d", (int)q->u.bool_.minimum_should_match);
}

static void print(out *o, const sc_query *q)
{
    switch (q->kind) {
    case SC_QUERY_MATCH_ALL: outf(o, "*:*"); break;
    case SC_QUERY_MATCH_NONE: outf(o, "MatchNoDocsQuery"); break;
    case SC_QUERY_TERM:
        out_slice(o, q->u.term.field), outf(o, ":"), out_slice(o, q->u.term.term);
        break;
    case SC_QUERY_TERMS:
        out_slice(o, q->u.terms.field), outf(o, ":(");
        for (size_t i = 0; i < q->u.terms.n_terms; i++)
            outf(o, i ? " " : ""), out_slice(o, q->u.terms.terms[i]);
        outf(o, ")");
        break;
    case SC_QUERY_BOOL: print_bool(o, q); break;
    case SC_QUERY_PHRASE:
        out_slice(o, q->u.phrase.field), outf(o, ":\"");
        for (size_t i = 0; i < q->u.phrase.n_terms; i++) {
            if (i)
                for (uint32_t g = q->u.phrase.positions[i - 1] + 1; g < q->u.phrase.positions[i];
                     g++)
                    outf(o, " ?");
            outf(o, i ? " " : ""), out_slice(o, q->u.phrase.terms[i]);
        }
        outf(o, "\"");
        if (q->u.phrase.slop)
            outf(o, "~%u", q->u.phrase.slop);
        break;
    case SC_QUERY_PREFIX:
        out_slice(o, q->u.prefix.field), outf(o, ":"), out_slice(o, q->u.prefix.prefix);
        outf(o, "*");
        break;
    case SC_QUERY_WILDCARD:
        out_slice(o, q->u.wildcard.field), outf(o, ":"), out_slice(o, q->u.wildcard.pattern);
        break;
    case SC_QUERY_TERM_RANGE: /* Lucene's TermRangeQuery.toString */
        out_slice(o, q->u.term_range.field), outf(o, ":%s", q->u.term_range.incl_lo ? "[" : "{");
        if (q->u.term_range.has_lo)
            out_slice(o, q->u.term_range.lo);
        else
            outf(o, "*");
        outf(o, " TO ");
        if (q->u.term_range.has_hi)
            out_slice(o, q->u.term_range.hi);
        else
            outf(o, "*");
        outf(o, "%s", q->u.term_range.incl_hi ? "]" : "}");
        break;
    case SC_QUERY_REGEXP:
        out_slice(o, q->u.regexp.field), outf(o, ":/"), out_slice(o, q->u.regexp.pattern);
        outf(o, "/");
        break;
    case SC_QUERY_FUZZY:
        out_slice(o, q->u.fuzzy.field), outf(o, ":"), out_slice(o, q->u.fuzzy.term);
        outf(o, "~%u", q->u.fuzzy.max_edits);
        break;
    case SC_QUERY_CONSTANT_SCORE:
        outf(o, "ConstantScore(");
        print(o, q->u.constant_score.inner);
        outf(o, ")");
        break;
    case SC_QUERY_BOOSTING:
        outf(o, "Boosting(");
        print(o, q->u.boosting.positive);
        outf(o, ", ");
        print(o, q->u.boosting.negative);
        outf(o, ", %g)", (double)q->u.boosting.negative_boost);
        break;
    case SC_QUERY_FUNCTION_SCORE:
        outf(o, "FunctionScore(");
        print(o, q->u.function_score.inner);
        outf(o, ", %zu functions)", q->u.function_score.n_fns);
        break;
    case SC_QUERY_NESTED: /* Lucene's ToParentBlockJoinQuery.toString */
        outf(o, "ToParentBlockJoinQuery (");
        print(o, q->u.nested.inner);
        outf(o, ")");
        break;
    case SC_QUERY_DIS_MAX:
        outf(o, "(");
        for (size_t i = 0; i < q->u.dis_max.n_queries; i++)
            outf(o, i ? " | " : ""), print(o, q->u.dis_max.queries[i]);
        outf(o, ")");
        if (q->u.dis_max.tie_breaker != 0.0f)
            outf(o, "~%g", (double)q->u.dis_max.tie_breaker);
        break;
    case SC_QUERY_IDS:
        outf(o, "_id:(");
        for (size_t i = 0; i < q->u.ids.n_ids; i++)
            outf(o, i ? " " : ""), out_slice(o, q->u.ids.ids[i]);
        outf(o, ")");
        break;
    case SC_QUERY_EXISTS: outf(o, "exists:"), out_slice(o, q->u.exists.field); break;
    case SC_QUERY_RANGE:
        for (size_t i = 0; i < q->u.range.n; i++) {
            outf(o, i ? " " : ""), out_slice(o, q->u.range.field);
            outf(o, ":[%lld TO %lld]", (long long)q->u.range.lo[i], (long long)q->u.range.hi[i]);
        }
        break;
    case SC_QUERY_KNN:
        outf(o, "knn(");
        out_slice(o, q->u.knn.field);
        outf(o, ", dims=%u, k=%u, num_candidates=%u", q->u.knn.dims, q->u.knn.k,
             q->u.knn.num_candidates);
        if (q->u.knn.oversample > 0)
            outf(o, ", oversample=%g", (double)q->u.knn.oversample);
        if (q->u.knn.filter) {
            outf(o, ", filter=");
            print(o, q->u.knn.filter);
        }
        outf(o, ")");
        break;
    case SC_QUERY_GEO: {
        const sc_geo_shape *g = &q->u.geo.shape;
        out_slice(o, q->u.geo.field);
        if (g->kind == SC_GEO_BOX)
            outf(o, ":box(top=%g, left=%g, bottom=%g, right=%g)", g->top, g->left, g->bottom,
                 g->right);
        else
            outf(o, ":distance(%g, %g, %gm)", g->lat, g->lon, g->radius_m);
        break;
    }
    }
    print_boost(o, q);
}

size_t sc_query_to_string(const sc_query *q, char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    if (cap)
        buf[0] = 0;
    if (q)
        print(&o, q);
    if (cap && o.len >= cap) {
        buf[cap - 1] = 0;
        if (cap >= 4)
            memcpy(buf + cap - 4, "...", 3);
    }
    return o.len;
}
