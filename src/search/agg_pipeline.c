/* Pipeline aggregations (search/agg.h): nothing is collected; at the final reduce, sibling
 * pipelines (avg/max/min/sum/stats_bucket) read one value per bucket of a sibling
 * multi-bucket aggregation, and parent pipelines (cumulative_sum, derivative, bucket_sort)
 * walk the buckets of the aggregation they sit in, after its ordering and gap filling. Values
 * missing in a bucket (an empty avg, ...) are skipped (gap_policy skip) or taken as 0
 * (insert_zeros). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

/* ---- the placeholder collector ---- */

static sc_status nop_seg(sc__agg_coll *c, const sc__agg_seg *s)
{
    (void)c;
    (void)s;
    return SC_OK;
}

static sc_status nop_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                             size_t n)
{
    (void)c;
    (void)docs;
    (void)owners;
    (void)n;
    return SC_OK;
}

static sc_status nop_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static sc_status placeholder(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    (void)owner;
    *out = sc__agg_result_new(c->ctx->a, c->spec, 0);
    return *out ? SC_OK : sc__agg_oom(c->ctx->a);
}

static const sc__agg_coll_ops pipeline_ops = {
    .seg_begin = nop_seg, .collect = nop_collect, .seg_end = nop_end, .build = placeholder};

sc_status sc__agg_pipeline_new(sc__agg_coll *c)
{
    c->ops = &pipeline_ops;
    return SC_OK;
}

/* ---- values ---- */

double sc__agg_path_value(const sc_agg_spec *owner, const sc_agg_bucket *b, const sc_agg_path *p)
{
    for (uint32_t i = 0; i < p->n_via; i++) {
        uint32_t s = p->via[i];
        if (s >= owner->n_subs || s >= b->n_subs || !b->subs[s] || b->subs[s]->n_buckets != 1)
            return NAN;
        b = &b->subs[s]->buckets[0];
        owner = owner->subs[s];
    }
    switch (p->kind) {
    case SC_AGG_PATH_COUNT: return (double)b->doc_count;
    case SC_AGG_PATH_KEY: return owner->kind == SC_AGG_HISTOGRAM ? b->dkey : (double)b->key;
    default: break;
    }
    if (p->sub >= owner->n_subs || p->sub >= b->n_subs || !b->subs[p->sub])
        return NAN;
    return sc__agg_metric_value(owner->subs[p->sub], b->subs[p->sub], p->stat);
}

static double gap(const sc_agg_spec *pipe, double v)
{
    return isnan(v) && pipe->gap_insert_zeros ? 0 : v;
}

/* One sibling pipeline over the target's result. */
static sc_status sibling(const sc_agg_spec *pipe, const sc_agg_result *target, sc_arena *a,
                         sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(a, pipe, 0);
    if (!r)
        return sc__agg_oom(a);
    size_t n_ext = 0;
    for (size_t i = 0; target && i < target->n_buckets; i++) {
        double v = gap(pipe, sc__agg_path_value(pipe->target, &target->buckets[i], &pipe->value));
        if (isnan(v))
            continue;
        r->count++;
        r->sum += v;
        r->sum_sq += v * v;
        bool better = pipe->kind == SC_AGG_MIN_BUCKET ? v < r->min : v > r->max;
        bool tie = pipe->kind == SC_AGG_MIN_BUCKET ? v == r->min : v == r->max;
        if (v < r->min)
            r->min = v;
        if (v > r->max)
            r->max = v;
        if (pipe->kind == SC_AGG_MIN_BUCKET || pipe->kind == SC_AGG_MAX_BUCKET)
            n_ext = better ? 1 : n_ext + tie;
    }
    if (n_ext) {
        /* the keys of the extreme buckets, in bucket order */
        double ext = pipe->kind == SC_AGG_MIN_BUCKET ? r->min : r->max;
        r->buckets = sc_arena_calloc(a, n_ext, sizeof *r->buckets);
        if (!r->buckets)
            return sc__agg_oom(a);
        for (size_t i = 0; i < target->n_buckets; i++) {
            double v =
                gap(pipe, sc__agg_path_value(pipe->target, &target->buckets[i], &pipe->value));
            if (v == ext && r->n_buckets < n_ext) {
                sc_agg_bucket *k = &r->buckets[r->n_buckets++];
                k->key = target->buckets[i].key;
                k->dkey = target->buckets[i].dkey;
                k->bkey = target->buckets[i].bkey;
            }
        }
    }
    if (pipe->kind == SC_AGG_MIN_BUCKET || pipe->kind == SC_AGG_MAX_BUCKET) {
        /* single-value: the value read through `sum` (count 1), or none */
        double v = pipe->kind == SC_AGG_MIN_BUCKET ? r->min : r->max;
        r->sum = r->count ? v : 0;
        r->count = r->count ? 1 : 0;
    } else if (pipe->kind == SC_AGG_AVG_BUCKET && r->count) {
        r->sum /= (double)r->count;
        r->count = 1;
    } else if (pipe->kind == SC_AGG_SUM_BUCKET) {
        r->count = 1; /* an empty sum is 0 */
    }
    *out = r;
    return SC_OK;
}

sc_status sc__agg_pipelines_siblings(const sc_agg_spec *owner, sc_agg_bucket *b, sc_arena *a)
{
    for (size_t j = 0; j < owner->n_subs && j < b->n_subs; j++) {
        const sc_agg_spec *p = owner->subs[j];
        if (!sc_agg_kind_sibling(p->kind))
            continue;
        const sc_agg_result *t = p->target_sub < b->n_subs ? b->subs[p->target_sub] : NULL;
        if (p->kind == SC_AGG_PERCENTILES_BUCKET || p->kind == SC_AGG_EXTENDED_STATS_BUCKET)
            SC_TRY(sc__agg_sibling_more(p, t, a, &b->subs[j]));
        else
            SC_TRY(sibling(p, t, a, &b->subs[j]));
    }
    return SC_OK;
}

/* ---- parent pipelines ---- */

typedef struct sort_ctx {
    const sc_agg_spec *owner, *pipe;
} sort_ctx;

static int cmp_sort(const void *x, const void *y, void *ctx)
{
    const sort_ctx *c = ctx;
    const sc_agg_bucket *a = x, *b = y;
    for (size_t i = 0; i < c->pipe->n_sort; i++) {
        const sc_agg_path *p = &c->pipe->sort[i];
        double va = sc__agg_path_value(c->owner, a, p), vb = sc__agg_path_value(c->owner, b, p);
        if (isnan(va) || isnan(vb)) {
            if (isnan(va) != isnan(vb))
                return isnan(va) ? 1 : -1;
            continue;
        }
        int r = (va > vb) - (va < vb);
        if (r)
            return p->desc ? -r : r;
    }
    /* stable: the previous order (bucket_sort keeps ties as they were) */
    return (a->doc_count_error > b->doc_count_error) - (a->doc_count_error < b->doc_count_error);
}

static sc_status bucket_sort(const sc_agg_spec *owner, const sc_agg_spec *pipe, sc_agg_result *r)
{
    if (pipe->n_sort) {
        /* the position rides in doc_count_error while sorting (restored below) */
        int64_t *saved = malloc((r->n_buckets ? r->n_buckets : 1) * sizeof *saved);
        if (!saved)
            return SC_ENOMEM;
        for (size_t i = 0; i < r->n_buckets; i++) {
            saved[i] = r->buckets[i].doc_count_error;
            r->buckets[i].doc_count_error = (int64_t)i;
        }
        sort_ctx ctx = {owner, pipe};
        qsort_r(r->buckets, r->n_buckets, sizeof *r->buckets, cmp_sort, &ctx);
        for (size_t i = 0; i < r->n_buckets; i++)
            r->buckets[i].doc_count_error = saved[r->buckets[i].doc_count_error];
        free(saved);
    }
    size_t from = pipe->from < r->n_buckets ? pipe->from : r->n_buckets;
    size_t n = r->n_buckets - from;
    if (pipe->size && n > pipe->size)
        n = pipe->size;
    if (from)
        memmove(r->buckets, r->buckets + from, n * sizeof *r->buckets);
    r->n_buckets = n;
    return SC_OK;
}

sc_status sc__agg_pipelines_parent(const sc_agg_spec *spec, sc_agg_result *r, sc_arena *a,
                                   sc_agg_error *err)
{
    for (size_t j = 0; j < spec->n_subs; j++) {
        const sc_agg_spec *p = spec->subs[j];
        if (p->kind == SC_AGG_BUCKET_SCRIPT || p->kind == SC_AGG_BUCKET_SELECTOR) {
            SC_TRY(sc__agg_bucket_script(spec, (uint32_t)j, r, a, err));
            continue;
        }
        if (p->kind == SC_AGG_MOVING_FN || p->kind == SC_AGG_SERIAL_DIFF) {
            SC_TRY(sc__agg_moving(spec, (uint32_t)j, r, a, err));
            continue;
        }
        if (p->kind == SC_AGG_BUCKET_SORT) {
            SC_TRY(bucket_sort(spec, p, r));
            continue;
        }
        if (p->kind != SC_AGG_CUMULATIVE_SUM && p->kind != SC_AGG_DERIVATIVE)
            continue;
        double acc = 0, prev = NAN;
        for (size_t i = 0; i < r->n_buckets; i++) {
            sc_agg_bucket *b = &r->buckets[i];
            if (j >= b->n_subs)
                return SC_ECORRUPT;
            sc_agg_result *x = sc__agg_result_new(a, p, 0);
            if (!x)
                return sc__agg_oom(a);
            double v = gap(p, sc__agg_path_value(spec, b, &p->value));
            if (p->kind == SC_AGG_CUMULATIVE_SUM) {
                if (!isnan(v))
                    acc += v;
                x->sum = acc;
                x->count = 1;
            } else {
                if (!isnan(v) && !isnan(prev)) {
                    x->sum = v - prev;
                    x->count = 1;
                }
                if (!isnan(v))
                    prev = v;
            }
            b->subs[j] = x;
        }
    }
    return SC_OK;
}
