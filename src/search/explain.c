/* Score explanations of one doc (search/explain.h): the query is planned as a search plans it,
 * then the plan is walked, each node's value read from its own iterator advanced to the doc. */
#include "search/explain.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "index/postings.h"
#include "index/segment.h"
#include "search/internal.h"

/* ---- strings in the arena ----------------------------------------------------------------- */

typedef struct sbuf {
    sc_arena *a;
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = sc_arena_alloc(b->a, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        if (b->len)
            memcpy(p, b->p, b->len);
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_slice(sbuf *b, sc_slice s)
{
    sb_add(b, (const char *)s.ptr, s.len);
}

static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static const char *sb_done(sbuf *b)
{
    if (b->oom)
        return NULL;
    if (!b->p)
        sb_add(b, "", 0);
    return b->oom ? NULL : b->p;
}

static void field_term(sbuf *b, sc_slice field, const char *sep, sc_slice term, const char *end)
{
    sb_slice(b, field);
    sb_str(b, sep);
    sb_slice(b, term);
    sb_str(b, end);
}

/* ---- plans as strings (the leaves of explanations) ---------------------------------------- */

static void plan_str(sbuf *b, const sc__plan *p)
{
    switch (p->kind) {
    case SC__PLAN_NONE: sb_str(b, "MatchNoDocsQuery(\"\")"); break;
    case SC__PLAN_ALL: sb_str(b, "*:*"); break;
    case SC__PLAN_TERM: field_term(b, p->field, ":", p->term, ""); break;
    case SC__PLAN_PHRASE:
        sb_slice(b, p->field);
        sb_str(b, ":\"");
        for (size_t i = 0; i < p->n_terms; i++) {
            if (i)
                sb_str(b, " ");
            sb_slice(b, p->terms[i]);
        }
        sb_str(b, "\"");
        if (p->slop)
            sb_fmt(b, "~%u", p->slop);
        break;
    case SC__PLAN_TERMSET:
        sb_slice(b, p->field);
        if (p->terms) {
            sb_str(b, ":(");
            for (size_t i = 0; i < p->n_terms; i++) {
                if (i)
                    sb_str(b, " ");
                sb_slice(b, p->terms[i]);
            }
            sb_str(b, ")");
        } else {
            sb_str(b, ":<automaton>");
        }
        break;
    case SC__PLAN_EXISTS:
        sb_str(b, "FieldExistsQuery [field=");
        sb_slice(b, p->field);
        sb_str(b, "]");
        break;
    case SC__PLAN_RANGE:
        sb_slice(b, p->field);
        sb_str(b, ":");
        for (size_t i = 0; i < p->n_ranges; i++)
            sb_fmt(b, "%s[%lld TO %lld]", i ? " " : "", (long long)p->lo[i], (long long)p->hi[i]);
        break;
    case SC__PLAN_GEO:
        sb_str(b, "GeoQuery(");
        sb_slice(b, p->field);
        sb_str(b, ")");
        break;
    case SC__PLAN_DOCS: sb_str(b, "KnnScoreDocQuery"); break;
    case SC__PLAN_FUNCTION_SCORE: sb_str(b, "FunctionScoreQuery"); break;
    case SC__PLAN_BOOSTING: sb_str(b, "BoostingQuery"); break;
    case SC__PLAN_CONST:
        sb_str(b, "ConstantScore(");
        plan_str(b, p->child);
        sb_str(b, ")");
        break;
    case SC__PLAN_NESTED:
        sb_str(b, "ToParentBlockJoinQuery (");
        plan_str(b, p->child);
        sb_str(b, ")");
        break;
    case SC__PLAN_BOOL: {
        sb_str(b, "(");
        bool first = true;
        struct {
            sc__plan **v;
            size_t n;
            const char *mark;
        } parts[] = {{p->must, p->n_must, "+"},
                     {p->filter, p->n_filter, "#"},
                     {p->must_not, p->n_must_not, "-"},
                     {p->should, p->n_should, ""}};
        for (size_t k = 0; k < 4; k++)
            for (size_t i = 0; i < parts[k].n; i++) {
                sb_str(b, first ? parts[k].mark : " ");
                if (!first)
                    sb_str(b, parts[k].mark);
                first = false;
                plan_str(b, parts[k].v[i]);
            }
        sb_str(b, ")");
        break;
    }
    case SC__PLAN_DISMAX:
        sb_str(b, "(");
        for (size_t i = 0; i < p->n_should; i++) {
            if (i)
                sb_str(b, " | ");
            plan_str(b, p->should[i]);
        }
        sb_str(b, ")");
        if (p->tie_breaker != 0.0f)
            sb_fmt(b, "~%g", (double)p->tie_breaker);
        break;
    }
}

/* ---- explanations ------------------------------------------------------------------------- */

typedef struct ex {
    sc__search_ctx *ctx;
    size_t seg_i;
    uint32_t doc;
} ex;

static sc_status ex_oom(ex *e)
{
    return sc__search_oom(e->ctx);
}

static sc_explanation *new_details(ex *e, sc_explanation *x, size_t n)
{
    x->details = n ? sc_arena_calloc(e->ctx->a, n, sizeof *x->details) : NULL;
    x->n_details = 0;
    return n && !x->details ? NULL : x;
}

static sc_status leaf_set(ex *e, sc_explanation *x, float value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static sc_status leaf_set(ex *e, sc_explanation *x, float value, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    x->match = true;
    x->value = value;
    x->description = sc_arena_strndup(e->ctx->a, tmp, strlen(tmp));
    x->details = NULL;
    x->n_details = 0;
    return x->description ? SC_OK : ex_oom(e);
}

const char *sc__plan_describe(sc_arena *a, const sc__plan *p)
{
    sbuf b = {.a = a};
    plan_str(&b, p);
    return sb_done(&b);
}

static const char *plan_desc(ex *e, const sc__plan *p, const char *pre, const char *post)
{
    sbuf b = {.a = e->ctx->a};
    sb_str(&b, pre);
    plan_str(&b, p);
    sb_str(&b, post);
    return sb_done(&b);
}

/* Does the doc match p, and with which score (its iterator's, so exactly the search's)? */
static sc_status node_score(ex *e, const sc__plan *p, sc_doc_iter **it_out, bool *match,
                            float *score)
{
    sc_doc_iter *it;
    SC_TRY(sc__plan_iter(e->ctx, p, e->seg_i, &it));
    *match = it && sc_doc_iter_advance(it, e->doc) == e->doc;
    *score = *match && p->scoring ? sc_doc_iter_score(it) : 0.0f;
    if (it_out)
        *it_out = it;
    return SC_OK;
}

static sc_status explain(ex *e, const sc__plan *p, sc_explanation *x);

static sc_status term_explain(ex *e, const sc__plan *p, sc_doc_iter *it, float score,
                              sc_explanation *x)
{
    /* a fresh iterator: its cursor is reachable only before it moves */
    (void)it;
    const sc_bm25 *bm = NULL;
    const uint8_t *norms = NULL;
    sc_doc_iter *fresh;
    SC_TRY(sc__plan_iter(e->ctx, p, e->seg_i, &fresh));
    sc_postings *cur = fresh ? sc__iter_term_cursor(fresh, &bm, &norms) : NULL;
    float freq =
        cur && sc_doc_iter_advance(fresh, e->doc) == e->doc ? (float)sc_postings_freq(cur) : 0.0f;
    uint8_t norm = norms ? norms[e->doc] : 1;
    float dl = (float)sc_norm_decode(norm);
    const sc_bm25_field_stats *fs = &p->fstats;
    float avgdl =
        fs->doc_count ? (float)((double)fs->sum_total_term_freq / (double)fs->doc_count) : 1.0f;
    float boost = p->score;
    float idf = sc_bm25_idf(p->df, fs->doc_count);
    float tf = 1.0f - 1.0f / (1.0f + freq * p->bm25->cache[norm]);
    const char *d = plan_desc(e, p, "weight(", "");
    char *desc = d ? sc_arena_alloc(e->ctx->a, strlen(d) + 64) : NULL;
    if (!desc)
        return ex_oom(e);
    sprintf(desc, "%s in %u) [PerFieldSimilarity], result of:", d, e->doc);
    x->match = true;
    x->value = score;
    x->description = desc;
    if (!new_details(e, x, 1))
        return ex_oom(e);
    sc_explanation *s = &x->details[x->n_details++];
    SC_TRY(
        leaf_set(e, s, score, "score(freq=%g), computed as boost * idf * tf from:", (double)freq));
    if (!new_details(e, s, 3))
        return ex_oom(e);
    SC_TRY(leaf_set(e, &s->details[s->n_details++], boost, "boost"));
    sc_explanation *xi = &s->details[s->n_details++];
    SC_TRY(leaf_set(e, xi, idf, "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:"));
    if (!new_details(e, xi, 2))
        return ex_oom(e);
    SC_TRY(leaf_set(e, &xi->details[xi->n_details++], (float)p->df,
                    "n, number of documents containing term"));
    SC_TRY(leaf_set(e, &xi->details[xi->n_details++], (float)fs->doc_count,
                    "N, total number of documents with field"));
    sc_explanation *xt = &s->details[s->n_details++];
    SC_TRY(
        leaf_set(e, xt, tf, "tf, computed as freq / (freq + k1 * (1 - b + b * dl / avgdl)) from:"));
    if (!new_details(e, xt, 5))
        return ex_oom(e);
    SC_TRY(leaf_set(e, &xt->details[xt->n_details++], freq,
                    "freq, occurrences of term within document"));
    SC_TRY(leaf_set(e, &xt->details[xt->n_details++], SC_BM25_K1, "k1, term saturation parameter"));
    SC_TRY(
        leaf_set(e, &xt->details[xt->n_details++], SC_BM25_B, "b, length normalization parameter"));
    SC_TRY(leaf_set(e, &xt->details[xt->n_details++], dl,
                    norms ? "dl, length of field (approximate)" : "dl, length of field"));
    SC_TRY(leaf_set(e, &xt->details[xt->n_details++], avgdl, "avgdl, average length of field"));
    return SC_OK;
}

/* A required non-scoring clause, as Lucene shows a FILTER clause. */
static sc_status filter_explain(ex *e, const sc__plan *p, sc_explanation *x)
{
    SC_TRY(leaf_set(e, x, 0.0f, "match on required clause, product of:"));
    if (!new_details(e, x, 2))
        return ex_oom(e);
    SC_TRY(leaf_set(e, &x->details[x->n_details++], 0.0f, "# clause"));
    sc_explanation *c = &x->details[x->n_details++];
    const char *d = plan_desc(e, p, "", "");
    if (!d)
        return ex_oom(e);
    return leaf_set(e, c, 1.0f, "%s", d);
}

static sc_status add_children(ex *e, sc__plan **v, size_t n, bool scored, sc_explanation *x)
{
    for (size_t i = 0; i < n; i++) {
        sc_explanation *c = &x->details[x->n_details];
        if (scored && v[i]->scoring) {
            SC_TRY(explain(e, v[i], c));
        } else {
            bool m;
            float sc;
            SC_TRY(node_score(e, v[i], NULL, &m, &sc));
            if (!m)
                continue;
            SC_TRY(filter_explain(e, v[i], c));
        }
        if (c->match)
            x->n_details++;
    }
    return SC_OK;
}

static sc_status explain(ex *e, const sc__plan *p, sc_explanation *x)
{
    sc_doc_iter *it;
    bool match;
    float score;
    SC_TRY(node_score(e, p, &it, &match, &score));
    memset(x, 0, sizeof *x);
    if (!match) {
        const char *d = plan_desc(e, p, "no match on ", "");
        if (!d)
            return ex_oom(e);
        SC_TRY(leaf_set(e, x, 0.0f, "%s", d));
        x->match = false;
        return SC_OK;
    }
    switch (p->kind) {
    case SC__PLAN_TERM:
        if (p->bm25)
            return term_explain(e, p, it, score, x);
        break;
    case SC__PLAN_PHRASE:
        if (p->bm25) {
            const char *d = plan_desc(e, p, "weight(", "");
            if (!d)
                return ex_oom(e);
            SC_TRY(leaf_set(e, x, score, "%s in %u) [PerFieldSimilarity], result of:", d, e->doc));
            if (!new_details(e, x, 1))
                return ex_oom(e);
            return leaf_set(e, &x->details[x->n_details++], p->bm25->weight,
                            "weight, computed as boost * idf (the sum of the terms' idfs)");
        }
        break;
    case SC__PLAN_BOOL:
        SC_TRY(leaf_set(e, x, score, "sum of:"));
        if (!new_details(e, x, p->n_must + p->n_should + p->n_filter))
            return ex_oom(e);
        SC_TRY(add_children(e, p->must, p->n_must, true, x));
        SC_TRY(add_children(e, p->filter, p->n_filter, false, x));
        SC_TRY(add_children(e, p->should, p->n_should, true, x));
        return SC_OK;
    case SC__PLAN_DISMAX:
        if (p->tie_breaker == 0.0f)
            SC_TRY(leaf_set(e, x, score, "max of:"));
        else
            SC_TRY(leaf_set(e, x, score, "max plus %g times others of:", (double)p->tie_breaker));
        if (!new_details(e, x, p->n_should))
            return ex_oom(e);
        return add_children(e, p->should, p->n_should, true, x);
    case SC__PLAN_BOOSTING: return leaf_set(e, x, score, "score of boosting query");
    case SC__PLAN_FUNCTION_SCORE: return leaf_set(e, x, score, "score of function_score query");
    case SC__PLAN_DOCS: return leaf_set(e, x, score, "score of knn query");
    case SC__PLAN_NESTED:
        if (p->nested_mode != SC_NESTED_SCORE_NONE)
            return leaf_set(e, x, score, "Score based on child doc range");
        break;
    default: break;
    }
    /* constant-score kinds (and non-scoring leaves) */
    const char *d = p->kind == SC__PLAN_CONST || p->kind == SC__PLAN_ALL
                        ? plan_desc(e, p, "", "")
                        : plan_desc(e, p, "ConstantScore(", ")");
    if (!d)
        return ex_oom(e);
    return leaf_set(e, x, score, "%s", d);
}

sc_status sc_search_explain(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            uint64_t global_doc, sc_arena *a, sc_search_result *res,
                            sc_explanation **out)
{
    sc__search_ctx ctx;
    sc__search_ctx_init(&ctx, s, o, a, res);
    *out = sc_arena_calloc(a, 1, sizeof **out);
    if (!*out)
        return sc__search_oom(&ctx);
    ex e = {.ctx = &ctx};
    uint64_t base = 0;
    size_t si = 0;
    for (; si < s->n_segs; si++) {
        uint32_t n = sc_segment_n_docs(s->segs[si].seg);
        if (global_doc < base + n)
            break;
        base += n;
    }
    if (si == s->n_segs ||
        (s->segs[si].live && !sc_bitset_test(s->segs[si].live, (size_t)(global_doc - base)))) {
        (*out)->description = "no matching document";
        return SC_OK;
    }
    e.seg_i = si;
    e.doc = (uint32_t)(global_doc - base);
    sc__plan *plan;
    SC_TRY(sc__plan_build(&ctx, q, true, &plan));
    return explain(&e, plan, *out);
}
