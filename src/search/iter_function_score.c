/* The function_score iterator (iter.h): the inner query's docs, each scored by the query's
 * functions (search/function_score.h) from the fields' numeric doc values, read per doc; with
 * min_score, docs below it are skipped as they are reached (so the score is computed on
 * next/advance). Its max_score is unbounded (FLT_MAX, as Elasticsearch's FunctionFactorScorer):
 * collectors cannot prune below it, which keeps block-max skipping correct. A script's run-time
 * error (or negative score) is written to the caller's error slot and ends the iteration. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "search/iter.h"

typedef struct fs_iter {
    sc_doc_iter base;
    sc_doc_iter *child;
    const sc_score_function *fns;
    size_t n_fns;
    sc_doc_iter **filters;   /* per function, NULL = every doc (or nothing in this segment:
                                see no_match) */
    const bool *no_match;    /* per function: its filter matches nothing in the segment */
    const sc_dv_numeric *dv; /* per function, valid when has_dv[i] */
    const bool *has_dv;
    uint32_t doc_base;
    sc_sf_score_mode score_mode;
    sc_sf_boost_mode boost_mode;
    float max_boost;
    bool has_min;
    float min_score;
    uint32_t scored_doc; /* the doc `score` belongs to, SC_DOC_END when none */
    float score;
    double *results, *weights; /* n_fns each */
    sc_score_script_seg **scripts;
    sc_status *err_st;
    char *err_msg;
    size_t err_cap;
    bool failed;
} fs_iter;

#define FS(it) ((fs_iter *)(it))
#define MAX_VALUES 64 /* values of one doc a decay function looks at */

static bool applies(fs_iter *f, size_t i, uint32_t doc)
{
    if (f->no_match[i])
        return false;
    sc_doc_iter *flt = f->filters[i];
    if (!flt)
        return true;
    if (!flt->positioned || flt->doc < doc)
        sc_doc_iter_advance(flt, doc);
    return flt->doc == doc;
}

static float compute(fs_iter *f, uint32_t doc)
{
    float q = sc_doc_iter_score(f->child);
    size_t n = 0;
    for (size_t i = 0; i < f->n_fns; i++) {
        if (!applies(f, i, doc))
            continue;
        const sc_score_function *fn = &f->fns[i];
        if (fn->kind == SC_SF_SCRIPT) {
            double r;
            sc_script_error err;
            if (sc_score_script_run(f->scripts[i], doc, q, &r, &err) != SC_OK) {
                if (!f->failed && f->err_st && *f->err_st == SC_OK) {
                    *f->err_st = SC_EINVAL;
                    snprintf(f->err_msg, f->err_cap, "%s", err.reason);
                }
                f->failed = true;
                return 0;
            }
            f->results[n] = r * fn->weight;
            f->weights[n++] = fn->weight;
            if (f->score_mode == SC_SF_SCORE_FIRST)
                break;
            continue;
        }
        int64_t vals[MAX_VALUES];
        size_t nv = 0;
        if (f->has_dv[i])
            nv = sc_dv_numeric_get(&f->dv[i], doc, vals, MAX_VALUES);
        else if (fn->kind == SC_SF_RANDOM && fn->field.len == 0) {
            vals[0] = (int64_t)(f->doc_base + doc);
            nv = 1;
        }
        if (fn->kind == SC_SF_RANK_FEATURE) /* the query's score is Lucene's weight w */
            f->results[n] = nv ? (double)sc_sf_rank_eval(fn, vals[0], q) : 0;
        else
            f->results[n] = sc_sf_eval(fn, vals, nv);
        f->weights[n++] = fn->weight;
        if (f->score_mode == SC_SF_SCORE_FIRST)
            break;
    }
    double factor = sc_sf_combine(f->score_mode, f->results, f->weights, n);
    float s = sc_sf_boost(f->boost_mode, q, factor, f->max_boost);
    return isnan(s) || s < 0 ? 0 : s;
}

/* Stays on the child's current doc if it passes min_score, else moves on; returns the doc. */
static uint32_t settle(fs_iter *f, uint32_t doc)
{
    while (doc != SC_DOC_END) {
        f->score = compute(f, doc);
        f->scored_doc = doc;
        if (f->failed) {
            doc = SC_DOC_END;
            break;
        }
        if (!f->has_min || f->score >= f->min_score)
            break;
        doc = sc_doc_iter_next(f->child);
    }
    f->base.doc = doc;
    return doc;
}

static uint32_t fs_next(sc_doc_iter *it)
{
    it->positioned = true;
    return settle(FS(it), sc_doc_iter_next(FS(it)->child));
}

static uint32_t fs_advance(sc_doc_iter *it, uint32_t target)
{
    it->positioned = true;
    return settle(FS(it), sc_doc_iter_advance(FS(it)->child, target));
}

static uint64_t fs_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(FS(it)->child);
}

static float fs_score(sc_doc_iter *it)
{
    fs_iter *f = FS(it);
    if (f->scored_doc != it->doc)
        f->score = compute(f, it->doc);
    f->scored_doc = it->doc;
    return f->score;
}

static float fs_max_score(sc_doc_iter *it, uint32_t upto)
{
    (void)it;
    (void)upto;
    return FLT_MAX;
}

static uint32_t fs_advance_shallow(sc_doc_iter *it, uint32_t target)
{
    (void)it;
    (void)target;
    return SC_DOC_END; /* one window to the end: there is no bound to refine */
}

static const sc_doc_iter_ops fs_ops = {
    .name = "function_score",
    .native = 0,
    .next = fs_next,
    .advance = fs_advance,
    .cost = fs_cost,
    .into_bitset = sc_doc_iter_fallback_into_bitset,
    .run_end = sc_doc_iter_fallback_run_end,
    .next_batch = sc_doc_iter_fallback_next_batch,
    .score = fs_score,
    .max_score = fs_max_score,
    .advance_shallow = fs_advance_shallow,
    .set_min_score = sc_doc_iter_ignore_min_score,
    .score_batch = sc_doc_iter_fallback_score_batch,
};

sc_doc_iter *sc_iter_function_score(sc_arena *a, sc_doc_iter *child,
                                    const sc_iter_function_score_args *args)
{
    fs_iter *f = sc_arena_calloc(a, 1, sizeof *f);
    size_t n = args->n_fns ? args->n_fns : 1;
    double *buf = sc_arena_alloc(a, 2 * n * sizeof *buf);
    if (!f || !buf)
        return NULL;
    f->base.ops = &fs_ops;
    f->base.stats = child->stats;
    f->child = child;
    f->fns = args->fns;
    f->n_fns = args->n_fns;
    f->filters = args->filters;
    f->no_match = args->no_match;
    f->dv = args->dv;
    f->has_dv = args->has_dv;
    f->doc_base = args->doc_base;
    f->score_mode = args->score_mode;
    f->boost_mode = args->boost_mode;
    f->max_boost = args->max_boost;
    f->has_min = args->has_min_score;
    f->min_score = args->min_score;
    f->scored_doc = SC_DOC_END;
    f->results = buf;
    f->weights = buf + n;
    f->scripts = args->scripts;
    f->err_st = args->err_st;
    f->err_msg = args->err_msg;
    f->err_cap = args->err_cap;
    return &f->base;
}
