/* Query tree -> shard-level plan (search/internal.h): effective boosts, BM25 statistics summed
 * over the segments, automata compiled for prefix/wildcard/regexp, and Lucene's top-terms
 * blended rewrite for fuzzy queries (the best max_expansions terms by similarity, each scored
 * as a term query whose doc freq is the largest among them, boosted by its similarity). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/doc.h"
#include "base/clock.h"
#include "index/terms.h"
#include "search/automaton.h"
#include "search/internal.h"
#include "search/profile.h"
#include "search/term_stats.h"

sc_status sc__search_fail(sc__search_ctx *ctx, sc_status st, const char *fmt, ...)
{
    if (ctx->res && !ctx->res->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->res->error, sizeof ctx->res->error, fmt, ap);
        va_end(ap);
    }
    return st;
}

bool sc__search_cancelled(sc__search_ctx *ctx, bool check_clock)
{
    return ctx->o->cancel && sc_cancel_token_check(ctx->o->cancel, check_clock);
}

static sc_status oom(sc__search_ctx *ctx)
{
    if (ctx->a->over_budget)
        return sc__search_fail(ctx, SC_ELIMIT, "query memory exceeds the arena budget of %zu bytes",
                               ctx->a->budget_bytes);
    return SC_ENOMEM;
}

static sc__plan *new_plan(sc__search_ctx *ctx, sc__plan_kind kind, bool scoring, float score)
{
    sc__plan *p = sc_arena_calloc(ctx->a, 1, sizeof *p);
    if (p) {
        p->kind = kind;
        p->scoring = scoring;
        p->score = score;
    }
    return p;
}

static void field_stats(sc__search_ctx *ctx, sc_slice field, sc_bm25_field_stats *fs)
{
    if (ctx->o->dfs && sc_term_stats_field(ctx->o->dfs, field, fs))
        return; /* dfs_query_then_fetch: the whole search's statistics */
    fs->doc_count = 0;
    fs->sum_total_term_freq = 0;
    for (size_t i = 0; i < ctx->s->n_segs; i++) {
        const sc_field_info *f = sc_segment_field(ctx->s->segs[i].seg, field);
        if (f) {
            fs->doc_count += f->doc_count;
            fs->sum_total_term_freq += f->sum_total_term_freq;
        }
    }
}

/* The term's doc freq over the searcher's segments. With `into` (n_segs entries), also each
 * segment's entry; *read false when the segments were not read (dfs statistics). */
static sc_status term_df_into(sc__search_ctx *ctx, sc_slice field, sc_slice term, uint64_t *df,
                              sc__seg_term *into, bool *read)
{
    *read = false;
    if (ctx->o->dfs && sc_term_stats_term(ctx->o->dfs, field, term, df))
        return SC_OK;
    *read = true;
    *df = 0;
    for (size_t i = 0; i < ctx->s->n_segs; i++) {
        const sc_segment *seg = ctx->s->segs[i].seg;
        const sc_field_info *f = sc_segment_field(seg, field);
        if (into)
            into[i] = (sc__seg_term){.found = false};
        if (!f)
            continue;
        sc_term_info ti;
        bool found;
        sc_status st = sc_terms_lookup(seg, f, term, &ti, &found);
        if (st != SC_OK)
            return sc__search_fail(ctx, st, "reading the terms of field [%.*s] failed",
                                   (int)field.len, (const char *)field.ptr);
        if (found)
            *df += ti.doc_freq;
        if (into && found)
            into[i] = (sc__seg_term){.found = true, .ti = ti};
    }
    return SC_OK;
}

/* term_df_into with each segment's entry in *seen (n_segs entries in the arena), or NULL when
 * the segments were not read. */
static sc_status term_df_seen(sc__search_ctx *ctx, sc_slice field, sc_slice term, uint64_t *df,
                              sc__seg_term **seen)
{
    *seen = NULL;
    size_t ns = ctx->s->n_segs;
    sc__seg_term *e = ns ? sc_arena_alloc(ctx->a, ns * sizeof *e) : NULL;
    if (ns && !e)
        return oom(ctx);
    bool read;
    SC_TRY(term_df_into(ctx, field, term, df, e, &read));
    if (read)
        *seen = e;
    return SC_OK;
}

/* ---- collecting the terms an automaton matches, over all segments ----------------------- */

typedef struct mterm {
    sc_slice term;
    uint64_t df;
    float boost;
} mterm;

typedef SC_VEC(mterm) mterm_vec;

static int cmp_mterm(const void *a, const void *b)
{
    return sc_slice_cmp(((const mterm *)a)->term, ((const mterm *)b)->term);
}

/* Every distinct term of `field` the DFA accepts, with doc freqs summed over segments. The
 * vector is heap-owned (caller frees); term bytes live in the arena. */
static sc_status collect_terms(sc__search_ctx *ctx, sc_slice field, const sc_dfa *dfa,
                               mterm_vec *out)
{
    sc_status st = SC_OK;
    for (size_t i = 0; i < ctx->s->n_segs && st == SC_OK; i++) {
        const sc_segment *seg = ctx->s->segs[i].seg;
        const sc_field_info *f = sc_segment_field(seg, field);
        if (!f)
            continue;
        sc_terms_iter it;
        memset(&it, 0, sizeof it);
        st = sc_terms_iter_init(&it, seg, f);
        if (st == SC_OK)
            st = sc_terms_intersect_start(&it, dfa);
        bool has = false;
        while (st == SC_OK && (st = sc_terms_next_match(&it, &has)) == SC_OK && has) {
            if ((++ctx->terms_walked & 63) == 0 && sc__search_cancelled(ctx, true))
                break;
            sc_slice t = sc_terms_term(&it);
            char *copy = sc_arena_strndup(ctx->a, (const char *)t.ptr, t.len);
            if (!copy) {
                st = oom(ctx);
                break;
            }
            mterm m = {sc_slice_make(copy, t.len), sc_terms_info(&it)->doc_freq, 1.0f};
            if (sc_vec_push(out, m) != SC_OK)
                st = SC_ENOMEM;
        }
        sc_terms_iter_fini(&it);
    }
    if (st != SC_OK)
        return st;
    if (out->len > 1) {
        qsort(out->ptr, out->len, sizeof(mterm), cmp_mterm);
        size_t k = 0;
        for (size_t i = 0; i < out->len; i++) {
            if (k && sc_slice_eq(out->ptr[k - 1].term, out->ptr[i].term))
                out->ptr[k - 1].df += out->ptr[i].df;
            else
                out->ptr[k++] = out->ptr[i];
        }
        out->len = k;
    }
    return SC_OK;
}

/* Fuzzy selection order: higher boost first, then smaller term (Lucene's TopTermsRewrite). */
static int cmp_fuzzy(const void *a, const void *b)
{
    const mterm *x = a, *y = b;
    if (x->boost != y->boost)
        return x->boost > y->boost ? -1 : 1;
    return sc_slice_cmp(x->term, y->term);
}

static sc_status nested_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                             sc__plan **out);
static sc_status build(sc__search_ctx *ctx, const sc_query *q, float parent_boost, bool scoring,
                       sc__plan **out);

static sc_status term_plan(sc__search_ctx *ctx, sc_slice field, sc_slice term, float boost,
                           bool scoring, const uint64_t *df_override, sc__plan **out)
{
    sc__plan *p = new_plan(ctx, SC__PLAN_TERM, scoring, boost);
    if (!p)
        return oom(ctx);
    p->field = field;
    p->term = term;
    if (scoring) {
        uint64_t df;
        sc__seg_term *seen = NULL;
        if (df_override)
            df = *df_override;
        else
            SC_TRY(term_df_seen(ctx, field, term, &df, &seen));
        /* the iterators take the entries from here instead of a second lookup per segment
         * (1 of 2 term dictionary lookups of a scored term query; sc_terms_lookup was 6-7 %
         * of a top-10 request's CPU, h-req18) */
        p->seg_terms = seen;
        p->seg_terms_of = seen ? ctx->s : NULL;
        if (df == 0) {
            p->kind = SC__PLAN_NONE;
        } else {
            sc_bm25_field_stats fs;
            field_stats(ctx, field, &fs);
            p->bm25 = sc_arena_alloc(ctx->a, sizeof *p->bm25);
            if (!p->bm25)
                return oom(ctx);
            sc_bm25_init(p->bm25, boost, sc_bm25_idf(df, fs.doc_count), &fs);
            p->df = df;
            p->fstats = fs;
        }
    }
    *out = p;
    return SC_OK;
}

static sc_status phrase_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                             sc__plan **out);

/* The indexed terms of `field` starting with `prefix` over every segment, distinct, in term
 * order, at most max (Lucene's MultiPhraseQuery expansion of match_phrase_prefix). */
static sc_status prefix_terms(sc__search_ctx *ctx, sc_slice field, sc_slice prefix, uint32_t max,
                              sc_slice **out, size_t *n_out)
{
    sc_dfa dfa;
    if (sc_automaton_prefix(prefix, ctx->a, &dfa) != SC_OK)
        return oom(ctx);
    size_t n = 0, cap = max ? max : 1;
    sc_slice *v = sc_arena_alloc(ctx->a, cap * sizeof *v);
    if (!v)
        return oom(ctx);
    for (size_t s = 0; s < ctx->s->n_segs; s++) {
        const sc_field_info *fi = sc_segment_field(ctx->s->segs[s].seg, field);
        if (!fi)
            continue;
        sc_terms_iter it;
        SC_TRY(sc_terms_iter_init(&it, ctx->s->segs[s].seg, fi));
        sc_status st = sc_terms_intersect_start(&it, &dfa);
        bool has = false;
        while (st == SC_OK && (st = sc_terms_next_match(&it, &has)) == SC_OK && has) {
            sc_slice t = sc_terms_term(&it);
            size_t pos = 0; /* sorted insert, distinct, keeping the first `max` */
            while (pos < n && sc_slice_cmp(v[pos], t) < 0)
                pos++;
            if ((pos < n && sc_slice_eq(v[pos], t)) || pos >= cap)
                continue;
            uint8_t *copy = sc_arena_alloc(ctx->a, t.len ? t.len : 1);
            if (!copy) {
                st = SC_ENOMEM;
                break;
            }
            memcpy(copy, t.ptr, t.len);
            if (n == cap)
                n--; /* drop the largest */
            memmove(&v[pos + 1], &v[pos], (n - pos) * sizeof *v);
            v[pos] = sc_slice_make(copy, t.len);
            n++;
        }
        sc_terms_iter_fini(&it);
        if (st != SC_OK)
            return st == SC_ENOMEM ? oom(ctx) : st;
    }
    *out = v;
    *n_out = n;
    return SC_OK;
}

/* match_phrase_prefix: one phrase per expansion of the last term, any of them (scores add). */
static sc_status phrase_prefix_plan(sc__search_ctx *ctx, const sc_query *q, float boost,
                                    bool scoring, sc__plan **out)
{
    size_t n = q->u.phrase.n_terms, ne;
    sc_slice *exp;
    SC_TRY(prefix_terms(ctx, q->u.phrase.field, q->u.phrase.terms[n - 1],
                        q->u.phrase.max_expansions, &exp, &ne));
    sc_query *b = sc_query_bool(ctx->a);
    sc_slice *terms = sc_arena_alloc(ctx->a, n * sizeof *terms);
    if (!b || !terms)
        return oom(ctx);
    memcpy(terms, q->u.phrase.terms, n * sizeof *terms);
    for (size_t i = 0; i < ne; i++) {
        terms[n - 1] = exp[i];
        sc_query *ph = sc_query_phrase(ctx->a, q->u.phrase.field, terms, q->u.phrase.positions, n,
                                       q->u.phrase.slop);
        if (!ph || sc_query_bool_add(ctx->a, b, SC_OCCUR_SHOULD, ph) != SC_OK)
            return oom(ctx);
    }
    sc_query *none = ne ? NULL : sc_query_match_none(ctx->a);
    if (!ne && !none)
        return oom(ctx);
    return build(ctx, ne ? b : none, boost, scoring, out);
}

static sc_status phrase_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                             sc__plan **out)
{
    if (q->u.phrase.prefix_last && q->u.phrase.n_terms > 0)
        return phrase_prefix_plan(ctx, q, boost, scoring, out);
    size_t n = q->u.phrase.n_terms;
    if (n == 0) {
        *out = new_plan(ctx, SC__PLAN_NONE, scoring, 0);
        return *out ? SC_OK : oom(ctx);
    }
    if (n == 1)
        return term_plan(ctx, q->u.phrase.field, q->u.phrase.terms[0], boost, scoring, NULL, out);
    if (n > 64)
        return sc__search_fail(ctx, SC_ELIMIT, "phrase has %zu terms, more than the limit of 64",
                               n);
    sc__plan *p = new_plan(ctx, SC__PLAN_PHRASE, scoring, boost);
    if (!p)
        return oom(ctx);
    p->field = q->u.phrase.field;
    p->terms = q->u.phrase.terms;
    p->positions = q->u.phrase.positions;
    p->n_terms = n;
    p->slop = q->u.phrase.slop;
    sc_bm25_field_stats fs;
    field_stats(ctx, p->field, &fs);
    /* each term's entries, as for a term query: the iterators do not look them up again (the
     * second lookup was half of a two-term phrase's 5 % in sc_terms_lookup) */
    size_t ns = ctx->s->n_segs;
    sc__seg_term *seen = ns ? sc_arena_alloc(ctx->a, n * ns * sizeof *seen) : NULL;
    if (ns && !seen)
        return oom(ctx);
    bool read = true;
    double idf = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t df;
        bool r;
        SC_TRY(term_df_into(ctx, p->field, p->terms[i], &df, seen ? seen + i * ns : NULL, &r));
        read &= r;
        if (df == 0) {
            p->kind = SC__PLAN_NONE;
            *out = p;
            return SC_OK;
        }
        idf += sc_bm25_idf(df, fs.doc_count);
    }
    p->seg_terms = read ? seen : NULL;
    p->seg_terms_of = read ? ctx->s : NULL;
    if (scoring) {
        p->bm25 = sc_arena_alloc(ctx->a, sizeof *p->bm25);
        if (!p->bm25)
            return oom(ctx);
        sc_bm25_init(p->bm25, boost, (float)idf, &fs);
        p->fstats = fs;
    }
    *out = p;
    return SC_OK;
}

static sc_status automaton_fail(sc__search_ctx *ctx, sc_status st, const sc_automaton_error *e,
                                const char *what, sc_slice pattern)
{
    return sc__search_fail(ctx, st, "%s [%.*s]: %s", what,
                           (int)(pattern.len > 100 ? 100 : pattern.len), (const char *)pattern.ptr,
                           e->msg[0] ? e->msg : sc_status_str(st));
}

/* A multi-term query: constant score over the automaton's terms, or (scoring_boolean) an OR of
 * BM25 term queries limited by max_clause_count. */
static sc_status multiterm_plan(sc__search_ctx *ctx, sc_slice field, const sc_dfa *dfa,
                                sc_query_rewrite rewrite, float boost, bool scoring, sc__plan **out)
{
    if (rewrite == SC_REWRITE_SCORING_BOOLEAN && scoring) {
        mterm_vec terms = {0};
        sc_status st = collect_terms(ctx, field, dfa, &terms);
        if (st == SC_OK && terms.len > ctx->max_clause_count)
            st = sc__search_fail(ctx, SC_ELIMIT,
                                 "the query expands to %zu terms, more than max_clause_count "
                                 "(%u)",
                                 terms.len, ctx->max_clause_count);
        sc__plan *b = st == SC_OK ? new_plan(ctx, SC__PLAN_BOOL, true, boost) : NULL;
        if (st == SC_OK && b) {
            b->should = sc_arena_alloc(ctx->a, (terms.len + 1) * sizeof *b->should);
            b->min_should = 1;
            for (size_t i = 0; st == SC_OK && b->should && i < terms.len; i++)
                st = term_plan(ctx, field, terms.ptr[i].term, boost, true, &terms.ptr[i].df,
                               &b->should[b->n_should++]);
            if (!b->should)
                st = oom(ctx);
        } else if (st == SC_OK) {
            st = oom(ctx);
        }
        sc_vec_free(&terms);
        *out = b;
        return st;
    }
    sc__plan *p = new_plan(ctx, SC__PLAN_TERMSET, scoring, boost);
    if (!p)
        return oom(ctx);
    p->field = field;
    sc_dfa *copy = sc_arena_alloc(ctx->a, sizeof *copy);
    if (!copy)
        return oom(ctx);
    *copy = *dfa;
    p->dfa = copy;
    *out = p;
    return SC_OK;
}

static sc_status fuzzy_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                            sc__plan **out)
{
    sc_dfa dfa;
    sc_automaton_error e = {{0}, 0};
    sc_slice term = q->u.fuzzy.term;
    sc_status st = sc_automaton_fuzzy(term, q->u.fuzzy.max_edits, q->u.fuzzy.prefix_length,
                                      q->u.fuzzy.transpositions, ctx->a, &dfa, &e);
    if (st != SC_OK)
        return automaton_fail(ctx, st, &e, "fuzzy query", term);
    mterm_vec terms = {0};
    st = collect_terms(ctx, q->u.fuzzy.field, &dfa, &terms);
    size_t qlen = sc_automaton_cp_len(term);
    for (size_t i = 0; st == SC_OK && i < terms.len; i++) {
        uint32_t ed = sc_automaton_edit_distance(term, terms.ptr[i].term, q->u.fuzzy.transpositions,
                                                 q->u.fuzzy.max_edits);
        size_t tlen = sc_automaton_cp_len(terms.ptr[i].term);
        size_t minlen = tlen < qlen ? tlen : qlen;
        terms.ptr[i].boost = ed == 0 ? 1.0f : 1.0f - (float)ed / (float)(minlen ? minlen : 1);
    }
    size_t keep = terms.len;
    uint32_t max_exp = q->u.fuzzy.max_expansions ? q->u.fuzzy.max_expansions : 50;
    if (st == SC_OK && keep > max_exp) {
        qsort(terms.ptr, terms.len, sizeof(mterm), cmp_fuzzy);
        keep = max_exp;
    }
    uint64_t df_max = 0;
    for (size_t i = 0; i < keep; i++)
        if (terms.ptr[i].df > df_max)
            df_max = terms.ptr[i].df;
    sc__plan *b = NULL;
    if (st == SC_OK && keep == 0) {
        b = new_plan(ctx, SC__PLAN_NONE, scoring, 0);
    } else if (st == SC_OK) {
        b = new_plan(ctx, SC__PLAN_BOOL, scoring, boost);
        if (b && (b->should = sc_arena_alloc(ctx->a, keep * sizeof *b->should)) != NULL) {
            b->min_should = 1;
            for (size_t i = 0; st == SC_OK && i < keep; i++)
                st = term_plan(ctx, q->u.fuzzy.field, terms.ptr[i].term, boost * terms.ptr[i].boost,
                               scoring, &df_max, &b->should[b->n_should++]);
        } else {
            b = NULL;
        }
    }
    sc_vec_free(&terms);
    if (st == SC_OK && !b)
        st = oom(ctx);
    *out = b;
    return st;
}

/* Resolves the clause lists of a bool and its minimum_should_match. */
static sc_status bool_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                           sc__plan **out)
{
    size_t n = q->u.bool_.n_clauses;
    sc__plan *p = new_plan(ctx, SC__PLAN_BOOL, scoring, boost);
    if (!p)
        return oom(ctx);
    sc__plan **lists = sc_arena_alloc(ctx->a, (4 * n + 4) * sizeof *lists);
    if (!lists)
        return oom(ctx);
    p->must = lists;
    p->should = lists + n + 1;
    p->must_not = lists + 2 * n + 2;
    p->filter = lists + 3 * n + 3;
    for (size_t i = 0; i < n; i++) {
        const sc_query_clause *c = &q->u.bool_.clauses[i];
        sc__plan *cp;
        switch (c->occur) {
        case SC_OCCUR_MUST:
            SC_TRY(build(ctx, c->query, boost, scoring, &cp));
            p->must[p->n_must++] = cp;
            break;
        case SC_OCCUR_SHOULD:
            SC_TRY(build(ctx, c->query, boost, scoring, &cp));
            p->should[p->n_should++] = cp;
            break;
        case SC_OCCUR_MUST_NOT:
            SC_TRY(build(ctx, c->query, boost, false, &cp));
            p->must_not[p->n_must_not++] = cp;
            break;
        case SC_OCCUR_FILTER:
            SC_TRY(build(ctx, c->query, boost, false, &cp));
            p->filter[p->n_filter++] = cp;
            break;
        }
    }
    int32_t msm = q->u.bool_.minimum_should_match;
    bool required = p->n_must + p->n_filter > 0;
    if (msm < 0)
        p->min_should = required ? 0 : (p->n_should ? 1 : 0);
    else
        p->min_should = (uint32_t)msm;
    if (!required && p->n_should == 0)
        p->kind = SC__PLAN_NONE; /* no clauses, or only must_not (Lucene: matches nothing) */
    if (p->min_should > p->n_should)
        p->kind = SC__PLAN_NONE;
    if (!scoring && required && p->min_should == 0)
        p->n_should = 0; /* optional clauses only score: matching ignores them (as Lucene) */
    if (!scoring && p->kind == SC__PLAN_BOOL && p->n_must + p->n_filter == 1 && p->n_should == 0 &&
        p->n_must_not == 0) {
        *out = p->n_must ? p->must[0] : p->filter[0]; /* one required clause: itself */
        return SC_OK;
    }
    *out = p;
    return SC_OK;
}

/* The default saturation pivot of rank feature column `field` over the shard's segments
 * (deleted docs included, as Lucene's term statistics): O(docs of the shard). */
static float rank_pivot(sc__search_ctx *ctx, sc_slice field)
{
    uint64_t sum = 0, n = 0;
    for (size_t s = 0; s < ctx->s->n_segs; s++) {
        const sc_segment *seg = ctx->s->segs[s].seg;
        const sc_field_info *fi = sc_segment_field(seg, field);
        sc_dv_numeric dv;
        if (!fi || fi->kind != SC_FIELD_NUMERIC || sc_dv_numeric_open(seg, fi, &dv) != SC_OK)
            continue;
        uint32_t nd = sc_segment_n_docs(seg);
        for (uint32_t d = 0; d < nd; d++) {
            int64_t v;
            if (sc_dv_numeric_first(&dv, d, &v)) {
                sum += (uint64_t)v;
                n++;
            }
        }
    }
    return sc_sf_rank_default_pivot(sum, n);
}

/* The functions of q with the shard's default rank_feature pivots filled in (q's own array
 * when none is missing; q is shared by shards and never changed). */
static sc_status plan_functions(sc__search_ctx *ctx, const sc_query *q,
                                const sc_score_function **out)
{
    size_t n = q->u.function_score.n_fns;
    const sc_score_function *fns = q->u.function_score.fns;
    *out = fns;
    sc_score_function *copy = NULL;
    for (size_t i = 0; i < n; i++) {
        if (fns[i].kind != SC_SF_RANK_FEATURE || fns[i].rank != SC_SF_RANK_SATURATION ||
            fns[i].rank_pivot > 0)
            continue;
        if (!copy) {
            copy = sc_arena_alloc(ctx->a, n * sizeof *copy);
            if (!copy)
                return oom(ctx);
            memcpy(copy, fns, n * sizeof *copy);
            *out = copy;
        }
        copy[i].rank_pivot = rank_pivot(ctx, fns[i].field);
    }
    return SC_OK;
}

/* function_score: the inner plan (its boost times ours, as Lucene's boost reaches the
 * subquery) and each function's filter as a match-only plan. Without scoring and without
 * min_score the functions change nothing: the inner plan alone. */
static sc_status function_score_plan(sc__search_ctx *ctx, const sc_query *q, float boost,
                                     bool scoring, sc__plan **out)
{
    const sc_query *inner = q->u.function_score.inner;
    if (!scoring && !q->u.function_score.has_min_score)
        return build(ctx, inner, boost, false, out);
    sc__plan *p = new_plan(ctx, SC__PLAN_FUNCTION_SCORE, true, boost);
    if (!p)
        return oom(ctx);
    p->fs = q;
    SC_TRY(plan_functions(ctx, q, &p->fns));
    SC_TRY(build(ctx, inner, boost, true, &p->child));
    size_t n = q->u.function_score.n_fns;
    p->filter = sc_arena_calloc(ctx->a, n ? n : 1, sizeof *p->filter);
    if (!p->filter)
        return oom(ctx);
    for (size_t i = 0; i < n; i++)
        if (q->u.function_score.fns[i].filter)
            SC_TRY(build(ctx, q->u.function_score.fns[i].filter, 1.0f, false, &p->filter[i]));
    p->n_filter = n;
    *out = p;
    return SC_OK;
}

static sc_status build(sc__search_ctx *ctx, const sc_query *q, float parent_boost, bool scoring,
                       sc__plan **out)
{
    float boost = parent_boost * q->boost;
    sc__plan *p = NULL;
    sc_automaton_error e = {{0}, 0};
    sc_dfa dfa;
    sc_status st;
    /* Building an automaton and walking its terms is the costly part of planning (a fuzzy
     * automaton of two edits takes a quarter of a millisecond to determinize): a query of a
     * thousand such clauses must still stop at its deadline. A stopped clause matches nothing;
     * the token records why, and the result says timed_out / cancelled. */
    if (q->kind == SC_QUERY_PREFIX || q->kind == SC_QUERY_TERM_RANGE ||
        q->kind == SC_QUERY_WILDCARD || q->kind == SC_QUERY_REGEXP || q->kind == SC_QUERY_FUZZY) {
        if (sc__search_cancelled(ctx, true)) {
            *out = new_plan(ctx, SC__PLAN_NONE, scoring, 0);
            return *out ? SC_OK : oom(ctx);
        }
    }
    switch (q->kind) {
    case SC_QUERY_MATCH_ALL: p = new_plan(ctx, SC__PLAN_ALL, scoring, boost); break;
    case SC_QUERY_MATCH_NONE: p = new_plan(ctx, SC__PLAN_NONE, scoring, boost); break;
    case SC_QUERY_TERM:
        return term_plan(ctx, q->u.term.field, q->u.term.term, boost, scoring, NULL, out);
    case SC_QUERY_TERMS:
    case SC_QUERY_IDS:
        p = new_plan(ctx, SC__PLAN_TERMSET, scoring, boost);
        if (p && q->kind == SC_QUERY_TERMS) {
            p->field = q->u.terms.field;
            p->terms = q->u.terms.terms;
            p->n_terms = q->u.terms.n_terms;
        } else if (p) {
            p->field = sc_slice_cstr("_id");
            p->terms = q->u.ids.ids;
            p->n_terms = q->u.ids.n_ids;
        }
        break;
    case SC_QUERY_EXISTS:
        p = new_plan(ctx, SC__PLAN_EXISTS, scoring, boost);
        if (p)
            p->field = q->u.exists.field;
        break;
    case SC_QUERY_RANGE:
        p = new_plan(ctx, SC__PLAN_RANGE, scoring, boost);
        if (p) {
            p->field = q->u.range.field;
            p->lo = q->u.range.lo;
            p->hi = q->u.range.hi;
            p->n_ranges = q->u.range.n;
        }
        break;
    case SC_QUERY_GEO:
        p = new_plan(ctx, SC__PLAN_GEO, scoring, boost);
        if (p) {
            p->field = q->u.geo.field;
            p->geo = &q->u.geo.shape;
        }
        break;
    case SC_QUERY_PHRASE: return phrase_plan(ctx, q, boost, scoring, out);
    case SC_QUERY_PREFIX:
        st = sc_automaton_prefix(q->u.prefix.prefix, ctx->a, &dfa);
        if (st != SC_OK)
            return oom(ctx);
        return multiterm_plan(ctx, q->u.prefix.field, &dfa, q->u.prefix.rewrite, boost, scoring,
                              out);
    case SC_QUERY_TERM_RANGE:
        st = sc_automaton_term_range(q->u.term_range.has_lo ? &q->u.term_range.lo : NULL,
                                     q->u.term_range.incl_lo,
                                     q->u.term_range.has_hi ? &q->u.term_range.hi : NULL,
                                     q->u.term_range.incl_hi, ctx->a, &dfa);
        if (st != SC_OK)
            return oom(ctx);
        return multiterm_plan(ctx, q->u.term_range.field, &dfa, q->u.term_range.rewrite, boost,
                              scoring, out);
    case SC_QUERY_WILDCARD:
        st = sc_automaton_wildcard(q->u.wildcard.pattern, q->u.wildcard.max_determinized_states,
                                   ctx->a, &dfa, &e);
        if (st != SC_OK)
            return automaton_fail(ctx, st, &e, "wildcard query", q->u.wildcard.pattern);
        return multiterm_plan(ctx, q->u.wildcard.field, &dfa, q->u.wildcard.rewrite, boost, scoring,
                              out);
    case SC_QUERY_REGEXP:
        st = sc_automaton_regexp(q->u.regexp.pattern, q->u.regexp.flags,
                                 q->u.regexp.max_determinized_states, ctx->a, &dfa, &e);
        if (st != SC_OK)
            return automaton_fail(ctx, st, &e, "regexp query", q->u.regexp.pattern);
        return multiterm_plan(ctx, q->u.regexp.field, &dfa, q->u.regexp.rewrite, boost, scoring,
                              out);
    case SC_QUERY_FUZZY: return fuzzy_plan(ctx, q, boost, scoring, out);
    case SC_QUERY_CONSTANT_SCORE:
        p = new_plan(ctx, SC__PLAN_CONST, scoring, boost);
        if (p)
            SC_TRY(build(ctx, q->u.constant_score.inner, 1.0f, false, &p->child));
        break;
    case SC_QUERY_BOOSTING:
        p = new_plan(ctx, SC__PLAN_BOOSTING, scoring, boost);
        if (p) {
            p->must = sc_arena_alloc(ctx->a, sizeof *p->must);
            p->must_not = sc_arena_alloc(ctx->a, sizeof *p->must_not);
            if (!p->must || !p->must_not)
                return oom(ctx);
            SC_TRY(build(ctx, q->u.boosting.positive, boost, scoring, &p->must[0]));
            SC_TRY(build(ctx, q->u.boosting.negative, 1.0f, false, &p->must_not[0]));
            p->n_must = p->n_must_not = 1;
            p->tie_breaker = q->u.boosting.negative_boost;
        }
        break;
    case SC_QUERY_DIS_MAX:
        p = new_plan(ctx, SC__PLAN_DISMAX, scoring, boost);
        if (p) {
            size_t n = q->u.dis_max.n_queries;
            p->should = sc_arena_alloc(ctx->a, (n + 1) * sizeof *p->should);
            if (!p->should)
                return oom(ctx);
            for (size_t i = 0; i < n; i++)
                SC_TRY(
                    build(ctx, q->u.dis_max.queries[i], boost, scoring, &p->should[p->n_should++]));
            p->tie_breaker = q->u.dis_max.tie_breaker;
            p->min_should = 1;
            if (n == 0)
                p->kind = SC__PLAN_NONE;
        }
        break;
    case SC_QUERY_BOOL: return bool_plan(ctx, q, boost, scoring, out);
    case SC_QUERY_KNN: return sc__knn_plan(ctx, q, boost, scoring, out);
    case SC_QUERY_FUNCTION_SCORE: return function_score_plan(ctx, q, boost, scoring, out);
    case SC_QUERY_NESTED: return nested_plan(ctx, q, boost, scoring, out);
    }
    if (!p)
        return oom(ctx);
    *out = p;
    return SC_OK;
}

/* nested: the child plan is inner AND (filter) _nested_path:path, so only that path's hidden
 * child docs match it; the iterator joins them to their roots. */
static sc_status nested_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                             sc__plan **out)
{
    sc_query *cq = sc_query_bool(ctx->a);
    sc_query *pt = sc_query_term(ctx->a, sc_slice_cstr(SC_NESTED_PATH_FIELD), q->u.nested.path);
    if (!cq || !pt || sc_query_bool_add(ctx->a, cq, SC_OCCUR_MUST, q->u.nested.inner) != SC_OK ||
        sc_query_bool_add(ctx->a, cq, SC_OCCUR_FILTER, pt) != SC_OK)
        return oom(ctx);
    bool child_scoring = scoring && q->u.nested.score_mode != SC_NESTED_SCORE_NONE;
    sc__plan *p = new_plan(ctx, SC__PLAN_NESTED, scoring, boost);
    if (!p)
        return oom(ctx);
    p->nested_mode = q->u.nested.score_mode;
    p->field = q->u.nested.path;
    SC_TRY(build(ctx, cq, 1.0f, child_scoring, &p->child));
    *out = p;
    return SC_OK;
}

sc_status sc__plan_build(sc__search_ctx *ctx, const sc_query *q, bool scoring, sc__plan **out)
{
    if (!ctx->o->profile || ctx->profiled)
        return build(ctx, q, 1.0f, scoring, out);
    uint64_t t0 = sc_clock_now_ns();
    SC_TRY(build(ctx, q, 1.0f, scoring, out));
    ctx->o->profile->rewrite_ns += sc_clock_now_ns() - t0;
    ctx->profiled = true;
    return sc__profile_attach(ctx, *out);
}
