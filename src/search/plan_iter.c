/* Per-segment iterator building from a plan (internal.h: sc__plan_iter): leaves (terms,
 * phrases, multi-term expansions, exists, ranges, geo) and composites (bool, dis_max,
 * boosting, constant score). Multi-term expansions walk the matched terms with one reused
 * postings cursor (reset per term, nothing allocated per term) straight into a segment bitset. */
#include <stdlib.h>
#include <string.h>

#include "index/bkd2.h"
#include "index/docvalues.h"
#include "index/postings.h"
#include "index/terms.h"
#include "search/geo.h"
#include "base/clock.h"
#include "search/internal.h"
#include "search/profile.h"
#include "search/range.h"

sc_status sc__search_oom(sc__search_ctx *ctx)
{
    if (ctx->a->over_budget)
        return sc__search_fail(ctx, SC_ELIMIT, "query memory exceeds the arena budget of %zu bytes",
                               ctx->a->budget_bytes);
    return SC_ENOMEM;
}

static sc_bitset *new_bits(sc__search_ctx *ctx, uint32_t n_docs)
{
    sc_bitset *bs = sc_arena_alloc(ctx->a, sizeof *bs);
    uint64_t *w = sc_arena_calloc(ctx->a, sc_bitset_words_for(n_docs) + 1, sizeof(uint64_t));
    if (!bs || !w)
        return NULL;
    bs->words = w;
    bs->n_bits = n_docs;
    return bs;
}

static sc_doc_iter *leaf(sc__search_ctx *ctx, sc_doc_iter *it)
{
    if (it) {
        it->stats = ctx->stats;
        if (ctx->o->cancel)
            sc_iter_leaf_set_cancel(it, ctx->o->cancel);
    }
    return it;
}

sc_status sc__search_corrupt(sc__search_ctx *ctx, sc_status st, sc_slice field)
{
    return sc__search_fail(ctx, st, "reading field [%.*s] failed: %s", (int)field.len,
                           (const char *)field.ptr, sc_status_str(st));
}

/* ---- leaves ----------------------------------------------------------------------------- */

/* Term k's entry in segment seg_i: the one the plan read with its doc freqs (seg_terms: a term
 * plan's k is 0, a phrase's entries are term-major), else looked up now. */
static sc_status seg_term(sc__search_ctx *ctx, const sc__plan *p, size_t k, size_t seg_i,
                          const sc_field_info *f, sc_slice term, sc_term_info *ti, bool *found)
{
    if (p->seg_terms && p->seg_terms_of == ctx->s) {
        const sc__seg_term *e = &p->seg_terms[k * ctx->s->n_segs + seg_i];
        *found = e->found;
        *ti = e->ti;
        return SC_OK;
    }
    return sc_terms_lookup(ctx->s->segs[seg_i].seg, f, term, ti, found);
}

static sc_status term_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out)
{
    *out = NULL;
    const sc_segment *seg = ctx->s->segs[seg_i].seg;
    const sc_field_info *f = sc_segment_field(seg, p->field);
    if (!f)
        return SC_OK;
    sc_term_info ti;
    bool found;
    sc_status st = seg_term(ctx, p, 0, seg_i, f, p->term, &ti, &found);
    if (st != SC_OK)
        return sc__search_corrupt(ctx, st, p->field);
    if (!found)
        return SC_OK;
    sc_postings cur;
    sc_postings_init(&cur);
    st = sc_postings_reset(&cur, seg, f, &ti, p->bm25 ? SC_POSTINGS_FREQS : 0);
    if (st != SC_OK)
        return sc__search_corrupt(ctx, st, p->field);
    *out =
        leaf(ctx, sc_iter_term(ctx->a, &cur, p->bm25, p->bm25 ? sc_segment_norms(seg, f) : NULL));
    return *out ? SC_OK : sc__search_oom(ctx);
}

static sc_status phrase_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i,
                             sc_doc_iter **out)
{
    *out = NULL;
    const sc_segment *seg = ctx->s->segs[seg_i].seg;
    const sc_field_info *f = sc_segment_field(seg, p->field);
    if (!f)
        return SC_OK;
    if (!(f->flags & SC_FIELD_POSITIONS))
        return sc__search_fail(ctx, SC_EINVAL,
                               "field [%.*s] was indexed without position data; cannot run "
                               "a phrase query",
                               (int)p->field.len, (const char *)p->field.ptr);
    sc_postings cur[64];
    uint32_t offsets[64];
    for (size_t i = 0; i < p->n_terms; i++) {
        sc_term_info ti;
        bool found;
        sc_status st = seg_term(ctx, p, i, seg_i, f, p->terms[i], &ti, &found);
        if (st != SC_OK)
            return sc__search_corrupt(ctx, st, p->field);
        if (!found)
            return SC_OK;
        sc_postings_init(&cur[i]);
        st = sc_postings_reset(&cur[i], seg, f, &ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS);
        if (st != SC_OK)
            return sc__search_corrupt(ctx, st, p->field);
        offsets[i] = p->positions[i] - p->positions[0];
    }
    *out = leaf(ctx, sc_iter_phrase(ctx->a, cur, offsets, p->n_terms, p->slop, p->bm25,
                                    p->bm25 ? sc_segment_norms(seg, f) : NULL));
    return *out ? SC_OK : sc__search_oom(ctx);
}

/* A multi-term leaf: up to SMALL_EXPANSION matched terms stay lazy (as Lucene's up to 16
 * terms, so a top-10 stops early): one term iterator, or a windowed bitset union of their
 * postings (iter_union.c); more are ORed into one segment bitset in bulk, walking them with
 * ONE reused cursor (nothing is allocated per term). A search that stops early (bounded
 * totals, range_needed) keeps up to TOPK_EXPANSION terms lazy, as many as fit in the memory
 * of the segment bitset they replace: the union reads its first matches window by window,
 * and sets itself up as a whole bitset only if the caller jumps (a conjunction); [0-9]{4}
 * (19 terms) TOP_10 on the 1M-doc benchmark: 677 us as a bitset, 12 us this way. */
#define SMALL_EXPANSION 16
#define TOPK_EXPANSION 64

typedef struct expansion {
    sc__search_ctx *ctx;
    const sc_segment *seg;
    const sc_field_info *f;
    uint32_t n_docs;
    sc_term_info small[TOPK_EXPANSION];
    size_t max_small; /* SMALL_EXPANSION, or TOPK_EXPANSION when the search stops early */
    size_t n_small;
    sc_bitset *bs; /* once past SMALL_EXPANSION */
    sc_postings cur;
} expansion;

static sc_status expansion_add(expansion *e, const sc_term_info *ti)
{
    if (!e->bs && e->n_small < e->max_small) {
        e->small[e->n_small++] = *ti;
        return SC_OK;
    }
    if (!e->bs) {
        if (!(e->bs = new_bits(e->ctx, e->n_docs)))
            return sc__search_oom(e->ctx);
        for (size_t i = 0; i < e->n_small; i++) {
            SC_TRY(sc_postings_reset(&e->cur, e->seg, e->f, &e->small[i], 0));
            sc_postings_into_bitset(&e->cur, e->n_docs, e->bs, 0);
        }
    }
    SC_TRY(sc_postings_reset(&e->cur, e->seg, e->f, ti, 0));
    sc_postings_into_bitset(&e->cur, e->n_docs, e->bs, 0);
    return sc_postings_status(&e->cur);
}

static sc_status expansion_iter(expansion *e, float score, sc_doc_iter **out)
{
    sc__search_ctx *ctx = e->ctx;
    if (ctx->exhaustive && !e->bs && e->n_small > 1) {
        /* every match will be visited: one bulk bitset beats a lazy disjunction */
        if (!(e->bs = new_bits(ctx, e->n_docs)))
            return sc__search_oom(ctx);
        for (size_t i = 0; i < e->n_small; i++) {
            SC_TRY(sc_postings_reset(&e->cur, e->seg, e->f, &e->small[i], 0));
            sc_postings_into_bitset(&e->cur, e->n_docs, e->bs, 0);
        }
    }
    if (e->bs) {
        *out = leaf(ctx, sc_iter_bitset(ctx->a, e->bs, e->n_docs, score));
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    if (e->n_small == 0)
        return SC_OK;
    if (e->n_small > 1) {
        sc_doc_iter *u;
        sc_status st = sc_iter_term_union(ctx->a, e->seg, e->f, e->small, e->n_small, score, &u);
        if (st != SC_OK)
            return st == SC_ENOMEM ? sc__search_oom(ctx) : st;
        *out = leaf(ctx, u);
        return SC_OK;
    }
    sc_postings p;
    sc_postings_init(&p);
    SC_TRY(sc_postings_reset(&p, e->seg, e->f, &e->small[0], 0));
    sc_doc_iter *d = leaf(ctx, sc_iter_term(ctx->a, &p, NULL, NULL));
    *out = d ? sc_iter_constant(ctx->a, d, score) : NULL;
    return *out ? SC_OK : sc__search_oom(ctx);
}

static sc_status termset_iter(sc__search_ctx *ctx, const sc__plan *p, const sc_segment *seg,
                              sc_doc_iter **out)
{
    *out = NULL;
    const sc_field_info *f = sc_segment_field(seg, p->field);
    if (!f)
        return SC_OK;
    expansion e;
    e.ctx = ctx;
    e.seg = seg;
    e.f = f;
    e.n_docs = sc_segment_n_docs(seg);
    e.n_small = 0;
    e.max_small = SMALL_EXPANSION;
    if (ctx->range_needed) {
        /* past 16, the cursors take no more memory than the bitset they replace (one that
         * materializes on a jump then holds both: at most twice the old footprint) */
        size_t more = e.n_docs / 8 / sizeof(sc_postings);
        e.max_small =
            SMALL_EXPANSION + more < TOPK_EXPANSION ? SMALL_EXPANSION + more : TOPK_EXPANSION;
    }
    e.bs = NULL;
    sc_postings_init(&e.cur);
    sc_status st = SC_OK;
    if (p->terms) {
        for (size_t i = 0; i < p->n_terms && st == SC_OK; i++) {
            sc_term_info ti;
            bool found;
            st = sc_terms_lookup(seg, f, p->terms[i], &ti, &found);
            if (st == SC_OK && found)
                st = expansion_add(&e, &ti);
        }
    } else {
        sc_terms_iter it;
        memset(&it, 0, sizeof it);
        st = sc_terms_iter_init(&it, seg, f);
        if (st == SC_OK)
            st = sc_terms_intersect_start(&it, p->dfa);
        bool has = false;
        while (st == SC_OK && (st = sc_terms_next_match(&it, &has)) == SC_OK && has) {
            if ((++ctx->terms_walked & 63) == 0 && sc__search_cancelled(ctx, true))
                break;
            st = expansion_add(&e, sc_terms_info(&it));
        }
        sc_terms_iter_fini(&it);
    }
    if (st != SC_OK)
        return st == SC_ENOMEM || st == SC_ELIMIT ? (ctx->res->error[0] ? st : sc__search_oom(ctx))
                                                  : sc__search_corrupt(ctx, st, p->field);
    return expansion_iter(&e, p->score, out);
}

/* The docs having a point: the whole 1-D or 2-D tree into bs. SC_ENOTFOUND without points. */
static sc_status exists_from_points(const sc_segment *seg, const sc_field_info *f, sc_bitset *bs)
{
    sc_bkd t;
    sc_status st = sc_segment_points(seg, f, &t);
    if (st == SC_OK)
        return sc_bkd_intersect(&t, INT64_MIN, INT64_MAX, bs, 0, NULL);
    if (st != SC_ENOTFOUND)
        return st;
    sc_bkd2 t2;
    SC_TRY(sc_segment_points2(seg, f, &t2));
    sc_bkd2_box all = {INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
    sc_bkd2_shape s = sc_bkd2_box_shape(&all);
    return sc_bkd2_intersect(&t2, &s, bs, NULL);
}

static sc_status exists_iter(sc__search_ctx *ctx, const sc__plan *p, const sc_segment *seg,
                             sc_doc_iter **out)
{
    *out = NULL;
    const sc_field_info *f = sc_segment_field(seg, p->field);
    if (!f || f->doc_count == 0)
        return SC_OK;
    uint32_t n_docs = sc_segment_n_docs(seg);
    if (f->doc_count == n_docs) {
        *out = leaf(ctx, sc_iter_all(ctx->a, n_docs, p->score));
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    sc_bitset *bs = new_bits(ctx, n_docs);
    if (!bs)
        return sc__search_oom(ctx);
    const uint8_t *norms = sc_segment_norms(seg, f);
    sc_status st = SC_OK;
    if (norms) {
        for (uint32_t d = 0; d < n_docs; d++)
            if (norms[d])
                sc_bitset_set(bs, d);
    } else if (f->kind == SC_FIELD_NUMERIC) {
        sc_dv_numeric dv;
        st = sc_dv_numeric_open(seg, f, &dv);
        if (st == SC_OK)
            for (uint32_t d = 0; d < n_docs; d++)
                if (sc_dv_numeric_count(&dv, d))
                    sc_bitset_set(bs, d);
        if (st == SC_ENOTFOUND) /* doc_values: false: every doc of the points */
            st = exists_from_points(seg, f, bs);
        if (st == SC_ENOTFOUND)
            st = sc__search_fail(ctx, SC_EUNSUPPORTED,
                                 "exists on numeric field [%.*s] needs doc values or points",
                                 (int)p->field.len, (const char *)p->field.ptr);
    } else {
        sc_terms_iter it;
        memset(&it, 0, sizeof it);
        sc_postings cur;
        sc_postings_init(&cur);
        st = sc_terms_iter_init(&it, seg, f);
        bool has = false;
        while (st == SC_OK && (st = sc_terms_next(&it, &has)) == SC_OK && has) {
            st = sc_postings_reset(&cur, seg, f, sc_terms_info(&it), 0);
            if (st == SC_OK)
                sc_postings_into_bitset(&cur, n_docs, bs, 0);
        }
        sc_terms_iter_fini(&it);
    }
    if (st != SC_OK)
        return st;
    *out = leaf(ctx, sc_iter_bitset(ctx->a, bs, n_docs, p->score));
    return *out ? SC_OK : sc__search_oom(ctx);
}

/* ---- composites ------------------------------------------------------------------------- */

/* Builds the iterators of a list, dropping children that match nothing; *n_out counts. */
static sc_status build_list(sc__search_ctx *ctx, sc__plan **plans, size_t n, size_t seg_i,
                            sc_doc_iter **its, size_t *n_out, bool *any_null)
{
    *n_out = 0;
    *any_null = false;
    for (size_t i = 0; i < n; i++) {
        sc_doc_iter *it;
        SC_TRY(sc__plan_iter(ctx, plans[i], seg_i, &it));
        if (it)
            its[(*n_out)++] = it;
        else
            *any_null = true;
    }
    return SC_OK;
}

/* Lucene's Boolean2ScorerSupplier shape: req = conjunction(must + filter) scoring the musts,
 * opt = disjunction(should) with min-should-match, then req+opt, then exclusion. */
static sc_status bool_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out)
{
    *out = NULL;
    size_t n_all = p->n_must + p->n_filter + p->n_should + p->n_must_not;
    sc_doc_iter **buf = sc_arena_alloc(ctx->a, (n_all + 1) * sizeof *buf);
    if (!buf)
        return sc__search_oom(ctx);
    size_t n_m, n_f, n_s, n_n;
    bool null_m, null_f, null_s, null_n;
    sc_doc_iter **m = buf;
    SC_TRY(build_list(ctx, p->must, p->n_must, seg_i, m, &n_m, &null_m));
    if (null_m)
        return SC_OK;
    sc_doc_iter **fl = m + n_m;
    SC_TRY(build_list(ctx, p->filter, p->n_filter, seg_i, fl, &n_f, &null_f));
    if (null_f)
        return SC_OK;
    sc_doc_iter **sh = fl + n_f;
    SC_TRY(build_list(ctx, p->should, p->n_should, seg_i, sh, &n_s, &null_s));
    if (p->min_should > n_s)
        return SC_OK;
    sc_doc_iter **nn = sh + n_s;
    SC_TRY(build_list(ctx, p->must_not, p->n_must_not, seg_i, nn, &n_n, &null_n));

    sc_doc_iter *req = NULL, *opt = NULL, *res;
    size_t n_req = n_m + n_f;
    if (n_req == 1 && n_m == 1) {
        req = m[0];
    } else if (n_req >= 1) {
        req = sc_iter_conjunction(ctx->a, m, n_req, p->scoring ? n_m : 0);
        /* Dense (4,096-doc windows ANDed; used by counts through into_bitset) unless the
         * rarest clause matches fewer than 1 doc in 1,024: bulk decoding into bitsets beat
         * leapfrog by 1.6-1.9x on and_high_{high,med,low} counts (200k and 1M docs); only
         * very sparse leads keep leapfrog. */
        uint64_t min_cost = UINT64_MAX;
        for (size_t i = 0; i < n_req; i++)
            if (sc_doc_iter_cost(m[i]) < min_cost)
                min_cost = sc_doc_iter_cost(m[i]);
        if (req && min_cost * 1024 >= sc_segment_n_docs(ctx->s->segs[seg_i].seg))
            sc_iter_conjunction_set_dense(req, ctx->a, true);
    }
    if (n_s == 1 && p->min_should <= 1)
        opt = sh[0];
    else if (n_s >= 1)
        opt =
            sc_iter_disjunction(ctx->a, sh, n_s, p->min_should ? p->min_should : 1, SC_DISJ_SUM, 0);
    if ((n_req >= 1 && !req) || (n_s >= 1 && !opt))
        return sc__search_oom(ctx);
    if (!req && !opt)
        return SC_OK;
    if (req && opt) {
        if (p->min_should >= 1) {
            sc_doc_iter *both[2] = {req, opt};
            res = sc_iter_conjunction(ctx->a, both, 2, p->scoring ? 2 : 0);
        } else if (p->scoring) {
            res = sc_iter_req_opt(ctx->a, req, opt);
        } else {
            res = req;
        }
    } else {
        res = req ? req : opt;
    }
    if (res && n_n) {
        sc_doc_iter *ex =
            n_n == 1 ? nn[0] : sc_iter_disjunction(ctx->a, nn, n_n, 1, SC_DISJ_SUM, 0);
        res = ex ? sc_iter_exclusion(ctx->a, res, ex) : NULL;
    }
    *out = res;
    return res ? SC_OK : sc__search_oom(ctx);
}

/* function_score over one segment: the inner iterator, each function's filter iterator and
 * its field's numeric doc values. */
static sc_status function_score_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i,
                                     sc_doc_iter **out)
{
    sc_doc_iter *child;
    SC_TRY(sc__plan_iter(ctx, p->child, seg_i, &child));
    if (!child)
        return SC_OK;
    const sc_query *q = p->fs;
    size_t n = q->u.function_score.n_fns, cap = n ? n : 1;
    sc_doc_iter **filters = sc_arena_calloc(ctx->a, cap, sizeof *filters);
    bool *no_match = sc_arena_calloc(ctx->a, cap, sizeof *no_match);
    bool *has_dv = sc_arena_calloc(ctx->a, cap, sizeof *has_dv);
    sc_dv_numeric *dv = sc_arena_calloc(ctx->a, cap, sizeof *dv);
    sc_score_script_seg **scripts = sc_arena_calloc(ctx->a, cap, sizeof *scripts);
    if (!filters || !no_match || !has_dv || !dv || !scripts)
        return sc__search_oom(ctx);
    const sc_segment *seg = ctx->s->segs[seg_i].seg;
    uint32_t base = 0;
    for (size_t i = 0; i < seg_i; i++)
        base += sc_segment_n_docs(ctx->s->segs[i].seg);
    for (size_t i = 0; i < n; i++) {
        const sc_score_function *fn = &p->fns[i];
        if (p->filter[i]) {
            SC_TRY(sc__plan_iter(ctx, p->filter[i], seg_i, &filters[i]));
            no_match[i] = filters[i] == NULL;
        }
        if (fn->kind == SC_SF_SCRIPT &&
            sc_score_script_seg_open(ctx->a, fn->script, seg, &scripts[i]) != SC_OK)
            return sc__search_oom(ctx);
        const sc_field_info *fi = fn->field.len ? sc_segment_field(seg, fn->field) : NULL;
        has_dv[i] =
            fi && fi->kind == SC_FIELD_NUMERIC && sc_dv_numeric_open(seg, fi, &dv[i]) == SC_OK;
    }
    sc_iter_function_score_args args = {.fns = p->fns,
                                        .n_fns = n,
                                        .filters = filters,
                                        .no_match = no_match,
                                        .dv = dv,
                                        .has_dv = has_dv,
                                        .doc_base = base,
                                        .score_mode = q->u.function_score.score_mode,
                                        .boost_mode = q->u.function_score.boost_mode,
                                        .max_boost = q->u.function_score.max_boost,
                                        .has_min_score = q->u.function_score.has_min_score,
                                        .min_score = q->u.function_score.min_score,
                                        .scripts = scripts,
                                        .err_st = &ctx->script_st,
                                        .err_msg = ctx->res->error,
                                        .err_cap = sizeof ctx->res->error};
    *out = sc_iter_function_score(ctx->a, child, &args);
    return *out ? SC_OK : sc__search_oom(ctx);
}

static sc_status plan_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out);

sc_status sc__plan_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out)
{
    if (!p->prof)
        return plan_iter(ctx, p, seg_i, out);
    /* profile: true: time the construction and wrap the iterator in the timed counter */
    sc_profile_node *n = p->prof;
    uint64_t t0 = sc_clock_now_ns();
    sc_status st = plan_iter(ctx, p, seg_i, out);
    n->build_ns += sc_clock_now_ns() - t0;
    n->n_builds++;
    if (st != SC_OK || !*out)
        return st;
    *out = sc_iter_profile_timed(ctx->a, *out, n->counts, n->times_ns);
    return *out ? SC_OK : sc__search_oom(ctx);
}

static sc_status plan_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out)
{
    const sc_segment *seg = ctx->s->segs[seg_i].seg;
    *out = NULL;
    switch (p->kind) {
    case SC__PLAN_NONE: return SC_OK;
    case SC__PLAN_ALL:
        *out = leaf(ctx, sc_iter_all(ctx->a, sc_segment_n_docs(seg), p->score));
        return *out ? SC_OK : sc__search_oom(ctx);
    case SC__PLAN_TERM: return term_iter(ctx, p, seg_i, out);
    case SC__PLAN_PHRASE: return phrase_iter(ctx, p, seg_i, out);
    case SC__PLAN_TERMSET: return termset_iter(ctx, p, seg, out);
    case SC__PLAN_EXISTS: return exists_iter(ctx, p, seg, out);
    case SC__PLAN_DOCS:
        if (p->seg_n[seg_i])
            *out = leaf(ctx, sc_iter_docs(ctx->a, p->seg_docs[seg_i], p->seg_scores[seg_i],
                                          p->seg_n[seg_i]));
        return p->seg_n[seg_i] && !*out ? sc__search_oom(ctx) : SC_OK;
    case SC__PLAN_RANGE: {
        sc_status st = sc_range_segment_iter(ctx->a, seg, p->field, p->lo, p->hi, p->n_ranges,
                                             UINT64_MAX, ctx->range_needed, p->score, out,
                                             ctx->res->error, sizeof ctx->res->error);
        if (st == SC_OK && *out)
            (*out)->stats = ctx->stats;
        return st;
    }
    case SC__PLAN_GEO: {
        sc_status st = sc_geo_segment_iter(ctx->a, seg, p->field, p->geo, p->score, out,
                                           ctx->res->error, sizeof ctx->res->error);
        if (st == SC_OK && *out)
            *out = leaf(ctx, *out);
        return st == SC_ENOMEM ? sc__search_oom(ctx) : st;
    }
    case SC__PLAN_BOOL: return bool_iter(ctx, p, seg_i, out);
    case SC__PLAN_DISMAX: {
        sc_doc_iter **its = sc_arena_alloc(ctx->a, (p->n_should + 1) * sizeof *its);
        size_t n;
        bool any_null;
        if (!its)
            return sc__search_oom(ctx);
        SC_TRY(build_list(ctx, p->should, p->n_should, seg_i, its, &n, &any_null));
        if (n == 0)
            return SC_OK;
        *out = sc_iter_disjunction(ctx->a, its, n, 1, SC_DISJ_MAX, p->tie_breaker);
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    case SC__PLAN_BOOSTING: {
        sc_doc_iter *pos, *neg;
        SC_TRY(sc__plan_iter(ctx, p->must[0], seg_i, &pos));
        if (!pos)
            return SC_OK;
        SC_TRY(sc__plan_iter(ctx, p->must_not[0], seg_i, &neg));
        *out = neg && p->scoring ? sc_iter_boosting(ctx->a, pos, neg, p->tie_breaker) : pos;
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    case SC__PLAN_FUNCTION_SCORE: return function_score_iter(ctx, p, seg_i, out);
    case SC__PLAN_CONST: {
        sc_doc_iter *c;
        SC_TRY(sc__plan_iter(ctx, p->child, seg_i, &c));
        if (!c)
            return SC_OK;
        *out = sc_iter_constant(ctx->a, c, p->score);
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    case SC__PLAN_NESTED: {
        const sc_bitset *parents = sc_segment_parents(seg);
        if (!parents) /* no nested docs in this segment */
            return SC_OK;
        sc_doc_iter *c;
        SC_TRY(sc__plan_iter(ctx, p->child, seg_i, &c));
        if (!c)
            return SC_OK;
        sc_nested_score_mode mode = p->scoring ? p->nested_mode : SC_NESTED_SCORE_NONE;
        *out = sc_iter_nested(ctx->a, c, parents, sc_segment_n_docs(seg), mode, p->score);
        return *out ? SC_OK : sc__search_oom(ctx);
    }
    }
    return SC_OK;
}
