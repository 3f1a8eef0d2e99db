/* REDUCE and FINALIZE of aggregation partial results (search/agg.h): metrics merge their
 * counts, Kahan sums and extremes; range/filters/single-bucket kinds merge positionally;
 * histograms merge by key and, at the final reduce, fill empty buckets (min_doc_count 0,
 * extended_bounds), drop those under min_doc_count and order; terms are in
 * agg_terms_reduce.c. The same code serves a node's shards and the coordinator's nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

static bool is_metric(sc_agg_kind k)
{
    return (k >= SC_AGG_MIN && k <= SC_AGG_EXTENDED_STATS) || k == SC_AGG_WEIGHTED_AVG ||
           k == SC_AGG_GEO_BOUNDS || k == SC_AGG_GEO_CENTROID;
}

/* Kahan summation as Elasticsearch's CompensatedSum (shard sums are added as values, their
 * compensations dropped, as its reduce does). */
static void kahan_add(double *sum, double *comp, double x)
{
    if (!isfinite(x)) {
        *sum += x;
    } else if (isfinite(*sum)) {
        double corrected = x - *comp;
        double nsum = *sum + corrected;
        *comp = (nsum - *sum) - corrected;
        *sum = nsum;
    }
}

double sc__agg_metric_value(const sc_agg_spec *spec, const sc_agg_result *r, sc_agg_stat stat)
{
    if (!r)
        return NAN;
    if (spec->kind == SC_AGG_WEIGHTED_AVG)
        return r->count && r->sum_sq != 0 ? r->sum / r->sum_sq : NAN;
    if (spec->kind == SC_AGG_CARDINALITY)
        return r->hll ? (double)sc_hll_estimate(r->hll) : 0;
    if (spec->kind == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION) {
        double mad = NAN;
        if (r->td && sc_tdigest_mad(r->td, &mad) != SC_OK)
            mad = NAN;
        return mad;
    }
    if (sc__agg_is_sketch(spec->kind))
        return NAN;
    /* single-value pipelines keep their value in sum (count 1), none with count 0 */
    if (spec->kind == SC_AGG_PERCENTILES_BUCKET)
        return NAN;
    if (sc_agg_kind_pipeline(spec->kind) && spec->kind != SC_AGG_STATS_BUCKET &&
        spec->kind != SC_AGG_EXTENDED_STATS_BUCKET)
        return r->count ? r->sum : NAN;
    double avg = r->count ? r->sum / (double)r->count : NAN;
    if (stat == SC_AGG_STAT_VALUE) {
        switch (spec->kind) {
        case SC_AGG_MIN: stat = SC_AGG_STAT_MIN; break;
        case SC_AGG_MAX: stat = SC_AGG_STAT_MAX; break;
        case SC_AGG_SUM: stat = SC_AGG_STAT_SUM; break;
        case SC_AGG_VALUE_COUNT: stat = SC_AGG_STAT_COUNT; break;
        default: stat = SC_AGG_STAT_AVG; break;
        }
    }
    switch (stat) {
    case SC_AGG_STAT_COUNT: return (double)r->count;
    case SC_AGG_STAT_MIN: return r->count ? r->min : NAN;
    case SC_AGG_STAT_MAX: return r->count ? r->max : NAN;
    case SC_AGG_STAT_SUM: return r->sum;
    default: return avg;
    }
}

int sc__agg_key_cmp(const sc_agg_spec *spec, const sc_agg_bucket *x, const sc_agg_bucket *y)
{
    if (spec->kind == SC_AGG_HISTOGRAM)
        return (x->dkey > y->dkey) - (x->dkey < y->dkey);
    if (spec->kind == SC_AGG_COMPOSITE || spec->kind == SC_AGG_MULTI_TERMS)
        return sc_agg_composite_cmp(spec, x->bkey, y->bkey);
    if ((spec->kind == SC_AGG_TERMS || spec->kind == SC_AGG_SIGNIFICANT_TERMS ||
         spec->kind == SC_AGG_RARE_TERMS) &&
        (spec->vtype == SC_AGG_V_KEYWORD || spec->vtype == SC_AGG_V_IP ||
         spec->vtype == SC_AGG_V_UNMAPPED))
        return sc_slice_cmp(x->bkey, y->bkey);
    return (x->key > y->key) - (x->key < y->key);
}

int sc__agg_bucket_cmp(const sc_agg_spec *spec, const sc_agg_bucket *x, const sc_agg_bucket *y)
{
    const sc_agg_order *o = &spec->order;
    int c = 0;
    if (o->kind == SC_AGG_ORDER_COUNT) {
        c = (x->doc_count > y->doc_count) - (x->doc_count < y->doc_count);
    } else if (o->kind == SC_AGG_ORDER_KEY) {
        c = sc__agg_key_cmp(spec, x, y);
    } else if (o->sub < spec->n_subs && o->sub < x->n_subs && o->sub < y->n_subs) {
        const sc_agg_spec *ss = spec->subs[o->sub];
        double vx = sc__agg_metric_value(ss, x->subs[o->sub], o->stat);
        double vy = sc__agg_metric_value(ss, y->subs[o->sub], o->stat);
        if (isnan(vx) || isnan(vy))
            return isnan(vx) - isnan(vy); /* empty values last in either order */
        c = (vx > vy) - (vx < vy);
    }
    if (o->desc)
        c = -c;
    return c ? c : sc__agg_key_cmp(spec, x, y);
}

sc_agg_result *sc__agg_empty_result(const sc_agg_spec *spec, sc_arena *a)
{
    size_t nb = 0;
    switch (spec->kind) {
    case SC_AGG_RANGE: nb = spec->n_ranges; break;
    case SC_AGG_FILTERS: nb = spec->n_filters + (spec->other_bucket ? 1 : 0); break;
    case SC_AGG_FILTER:
    case SC_AGG_MISSING:
    case SC_AGG_GLOBAL:
    case SC_AGG_NESTED:
    case SC_AGG_REVERSE_NESTED:
    case SC_AGG_SAMPLER:
    case SC_AGG_DIVERSIFIED_SAMPLER:
    case SC_AGG_ROOT: nb = 1; break;
    default: break;
    }
    sc_agg_result *r = sc__agg_result_new(a, spec, nb);
    if (!r)
        return NULL;
    for (size_t i = 0; i < nb; i++) {
        r->buckets[i].key = (int64_t)i;
        for (size_t j = 0; j < spec->n_subs; j++)
            if (!(r->buckets[i].subs[j] = sc__agg_empty_result(spec->subs[j], a)))
                return NULL;
    }
    return r;
}

sc_agg_result *sc_agg_result_empty(const sc_agg_spec *spec, sc_arena *a)
{
    return sc__agg_empty_result(spec, a);
}

sc_agg_bucket **sc__agg_bucket_refs(sc_agg_result *const *in, size_t n, sc_arena *a, size_t *total)
{
    size_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += in[i]->n_buckets;
    sc_agg_bucket **refs = sc_arena_alloc(a, (t ? t : 1) * sizeof *refs);
    if (refs) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < in[i]->n_buckets; j++)
                refs[k++] = &in[i]->buckets[j];
    }
    *total = t;
    return refs;
}

sc_status sc__agg_reduce_subs(const sc_agg_spec *spec, sc_agg_bucket *const *bs, size_t n,
                              bool final, uint64_t max_buckets, sc_arena *a, sc_agg_bucket *out,
                              sc_agg_error *err)
{
    if (!spec->n_subs)
        return SC_OK;
    sc_agg_result **in = sc_arena_alloc(a, (n ? n : 1) * sizeof *in);
    if (!in)
        return sc__agg_oom(a);
    for (size_t j = 0; j < spec->n_subs; j++) {
        for (size_t i = 0; i < n; i++) {
            if (bs[i]->n_subs != spec->n_subs || !bs[i]->subs[j])
                return SC_ECORRUPT;
            in[i] = bs[i]->subs[j];
        }
        SC_TRY(sc_agg_reduce(spec->subs[j], in, n, final, max_buckets, a, &out->subs[j], err));
    }
    return final ? sc__agg_pipelines_siblings(spec, out, a) : SC_OK;
}

/* Positional kinds: bucket i of every input merges into bucket i. */
static sc_status reduce_positional(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                   bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result *r,
                                   sc_agg_error *err)
{
    sc_agg_bucket **bs = sc_arena_alloc(a, n * sizeof *bs);
    if (!bs)
        return sc__agg_oom(a);
    for (size_t b = 0; b < r->n_buckets; b++) {
        for (size_t i = 0; i < n; i++) {
            if (in[i]->n_buckets != r->n_buckets)
                return SC_ECORRUPT;
            bs[i] = &in[i]->buckets[b];
            r->buckets[b].doc_count += bs[i]->doc_count;
        }
        r->buckets[b].key = (int64_t)b;
        SC_TRY(sc__agg_reduce_subs(spec, bs, n, final, max_buckets, a, &r->buckets[b], err));
    }
    return SC_OK;
}

/* Buckets in r and below (metrics have none). */
static uint64_t count_buckets(const sc_agg_result *r)
{
    uint64_t n = r->n_buckets;
    for (size_t i = 0; i < r->n_buckets; i++)
        for (uint32_t j = 0; j < r->buckets[i].n_subs; j++)
            if (r->buckets[i].subs[j])
                n += count_buckets(r->buckets[i].subs[j]);
    return n;
}

sc_status sc_agg_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n, bool final,
                        uint64_t max_buckets, sc_arena *a, sc_agg_result **out, sc_agg_error *err)
{
    if (n == 0)
        return SC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!in[i] || in[i]->kind != spec->kind)
            return SC_ECORRUPT;
    if (!max_buckets)
        max_buckets = SC_AGG_DEFAULT_MAX_BUCKETS;
    if (sc_agg_kind_pipeline(spec->kind)) {
        /* computed at the final reduce by the enclosing aggregation */
        *out = sc__agg_result_new(a, spec, 0);
        return *out ? SC_OK : sc__agg_oom(a);
    }
    if (sc_agg_kind_terms_like(spec->kind))
        return sc__agg_terms_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (spec->kind == SC_AGG_HISTOGRAM || spec->kind == SC_AGG_DATE_HISTOGRAM)
        return sc__agg_histo_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (spec->kind == SC_AGG_SIGNIFICANT_TERMS)
        return sc__agg_significant_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (sc__agg_is_sketch(spec->kind))
        return sc__agg_sketch_reduce(spec, in, n, a, out);
    if (spec->kind == SC_AGG_AUTO_DATE_HISTOGRAM)
        return sc__agg_auto_histo_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (spec->kind == SC_AGG_COMPOSITE)
        return sc__agg_composite_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (sc__agg_is_top_hits(spec->kind))
        return sc__agg_top_hits_reduce(spec, in, n, a, out);
    if (spec->kind == SC_AGG_RARE_TERMS)
        return sc__agg_rare_reduce(spec, in, n, final, max_buckets, a, out, err);
    if (is_metric(spec->kind)) {
        sc_agg_result *r = sc__agg_result_new(a, spec, 0);
        if (!r)
            return sc__agg_oom(a);
        if (spec->kind == SC_AGG_GEO_BOUNDS) {
            r->sum = r->sum_sq = INFINITY;
            r->sum_c = r->sum_sq_c = -INFINITY;
            for (size_t i = 0; i < n; i++)
                sc__agg_geo_bounds_merge(r, in[i]);
            *out = r;
            return SC_OK;
        }
        for (size_t i = 0; i < n; i++) {
            const sc_agg_result *x = in[i];
            r->count += x->count;
            kahan_add(&r->sum, &r->sum_c, x->sum);
            kahan_add(&r->sum_sq, &r->sum_sq_c, x->sum_sq);
            if (x->min < r->min)
                r->min = x->min;
            if (x->max > r->max)
                r->max = x->max;
        }
        *out = r;
        return SC_OK;
    }
    sc_agg_result *tmpl = sc__agg_empty_result(spec, a);
    if (!tmpl)
        return sc__agg_oom(a);
    for (size_t b = 0; b < tmpl->n_buckets; b++)
        tmpl->buckets[b].doc_count = 0;
    SC_TRY(reduce_positional(spec, in, n, final, max_buckets, a, tmpl, err));
    if (final && (spec->kind == SC_AGG_RANGE || spec->kind == SC_AGG_FILTERS))
        SC_TRY(sc__agg_pipelines_parent(spec, tmpl, a, err));
    if (final && spec->kind == SC_AGG_ROOT && count_buckets(tmpl) - 1 > max_buckets) {
        /* the final result's buckets, as Elasticsearch's reduce counts them */
        err->too_many_buckets = true;
        snprintf(err->reason, sizeof err->reason,
                 "Trying to create too many buckets. Must be less than or equal to: [%llu] but "
                 "this number of buckets was exceeded. This limit can be set by changing the "
                 "[search.max_buckets] cluster level setting.",
                 (unsigned long long)max_buckets);
        return SC_ELIMIT;
    }
    *out = tmpl;
    return SC_OK;
}

/* ---- equality (tests) ---- */

static bool dbl_eq(double x, double y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Equal sketches: both absent, or the same encoding. */
static bool sketch_eq(const sc_agg_result *x, const sc_agg_result *y)
{
    if (!x->hll != !y->hll || !x->td != !y->td)
        return false;
    if (!x->hll && !x->td)
        return true;
    sc_buf bx = {0}, by = {0};
    bool eq;
    if (x->hll)
        eq = sc_hll_encode(x->hll, &bx) == SC_OK && sc_hll_encode(y->hll, &by) == SC_OK;
    else
        eq = sc_tdigest_encode(x->td, &bx) == SC_OK && sc_tdigest_encode(y->td, &by) == SC_OK;
    eq = eq && bx.len == by.len && memcmp(bx.ptr, by.ptr, bx.len) == 0;
    sc_vec_free(&bx);
    sc_vec_free(&by);
    return eq;
}

static bool key_eq(const sc_sort_key *x, const sc_sort_key *y)
{
    return x->missing == y->missing && x->i == y->i && dbl_eq(x->d, y->d) &&
           sc_slice_eq(x->s, y->s);
}

static bool hits_eq(const sc_agg_result *x, const sc_agg_result *y)
{
    if (x->n_hits != y->n_hits)
        return false;
    for (size_t i = 0; i < x->n_hits; i++) {
        const sc_agg_hit *a = &x->hits[i], *b = &y->hits[i];
        if (memcmp(&a->score, &b->score, sizeof a->score) || a->doc != b->doc ||
            a->n_values != b->n_values || a->n_metrics != b->n_metrics ||
            !sc_slice_eq(a->index, b->index) || !sc_slice_eq(a->id, b->id) ||
            !sc_slice_eq(a->source, b->source))
            return false;
        for (uint32_t j = 0; j < a->n_values; j++)
            if (!key_eq(&a->values[j], &b->values[j]))
                return false;
        for (uint32_t j = 0; j < a->n_metrics; j++)
            if (!dbl_eq(a->metrics[j], b->metrics[j]))
                return false;
    }
    return true;
}

bool sc_agg_result_equal(const sc_agg_result *x, const sc_agg_result *y)
{
    if (!x || !y)
        return x == y;
    if (x->kind != y->kind || x->count != y->count || !dbl_eq(x->sum, y->sum) ||
        !dbl_eq(x->sum_c, y->sum_c) || !dbl_eq(x->min, y->min) || !dbl_eq(x->max, y->max) ||
        !dbl_eq(x->sum_sq, y->sum_sq) || !dbl_eq(x->sum_sq_c, y->sum_sq_c) ||
        x->n_buckets != y->n_buckets || x->doc_count_error != y->doc_count_error ||
        x->sum_other != y->sum_other || x->n_reduced != y->n_reduced ||
        x->shard_size != y->shard_size || x->rung != y->rung || x->error_set != y->error_set ||
        !sketch_eq(x, y) || !hits_eq(x, y) || x->n_hashes != y->n_hashes ||
        (x->n_hashes && memcmp(x->hashes, y->hashes, x->n_hashes * sizeof *x->hashes)))
        return false;
    for (size_t i = 0; i < x->n_buckets; i++) {
        const sc_agg_bucket *a = &x->buckets[i], *b = &y->buckets[i];
        if (a->key != b->key || !dbl_eq(a->dkey, b->dkey) || !sc_slice_eq(a->bkey, b->bkey) ||
            a->doc_count != b->doc_count || a->doc_count_error != b->doc_count_error ||
            a->n_subs != b->n_subs)
            return false;
        for (uint32_t j = 0; j < a->n_subs; j++)
            if (!sc_agg_result_equal(a->subs[j], b->subs[j]))
                return false;
    }
    return true;
}
