/* weighted_avg (search/agg.h): Σ(value × weight) / Σ weight per owner bucket, the weight read
 * from a second field (its first value; Elasticsearch requires one). Kept in the metric result
 * fields: count = values seen, sum = Σ value × weight, sum_sq = Σ weight (both Kahan-summed),
 * so the metric reduce merges it unchanged. */
#include <math.h>
#include <string.h>

#include "search/agg_internal.h"

typedef struct wavg_state {
    sc__agg_field f, w;
    sc__agg_vec count, sum, sum_c, wsum, wsum_c;
} wavg_state;

static sc_status wavg_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    wavg_state *st = c->state;
    SC_TRY(sc__agg_field_open(c->ctx, s->seg, c->spec->field, &st->f));
    return sc__agg_field_open(c->ctx, s->seg, c->spec->weight_field, &st->w);
}

static sc_status wavg_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static void kahan(double *sum, double *comp, double v)
{
    if (!isfinite(v)) {
        *sum += v;
    } else if (isfinite(*sum)) {
        double corrected = v - *comp;
        double nsum = *sum + corrected;
        *comp = (nsum - *sum) - corrected;
        *sum = nsum;
    }
}

static sc_status wavg_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                              size_t n)
{
    wavg_state *st = c->state;
    const sc_agg_spec *spec = c->spec;
    sc_arena *a = c->ctx->a;
    double vals[256];
    for (size_t i = 0; i < n; i++) {
        uint32_t w = owners ? owners[i] : 0;
        size_t k = sc__agg_doc_doubles(&st->f, spec, docs[i], vals, 256);
        if (!k)
            continue;
        int64_t raw;
        double weight;
        if (st->w.has_num && sc_dv_numeric_first(&st->w.num, docs[i], &raw))
            weight = sc_agg_value_to_double(spec->weight_vtype, raw);
        else if (spec->has_weight_missing)
            weight = spec->weight_missing;
        else
            continue;
        if (w >= st->count.len) {
            SC_TRY(sc__agg_vec_ensure(a, &st->count, (size_t)w + 1, 0));
            SC_TRY(sc__agg_vec_ensure(a, &st->sum, (size_t)w + 1, 0));
            SC_TRY(sc__agg_vec_ensure(a, &st->sum_c, (size_t)w + 1, 0));
            SC_TRY(sc__agg_vec_ensure(a, &st->wsum, (size_t)w + 1, 0));
            SC_TRY(sc__agg_vec_ensure(a, &st->wsum_c, (size_t)w + 1, 0));
        }
        for (size_t j = 0; j < k; j++) {
            ((uint64_t *)st->count.p)[w]++;
            kahan(&((double *)st->sum.p)[w], &((double *)st->sum_c.p)[w], vals[j] * weight);
            kahan(&((double *)st->wsum.p)[w], &((double *)st->wsum_c.p)[w], weight);
        }
    }
    return SC_OK;
}

static sc_status wavg_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    wavg_state *st = c->state;
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 0);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    if (owner < st->count.len) {
        r->count = ((const uint64_t *)st->count.p)[owner];
        r->sum = ((const double *)st->sum.p)[owner];
        r->sum_c = ((const double *)st->sum_c.p)[owner];
        r->sum_sq = ((const double *)st->wsum.p)[owner];
        r->sum_sq_c = ((const double *)st->wsum_c.p)[owner];
    }
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops wavg_ops = {
    .seg_begin = wavg_seg_begin,
    .collect = wavg_collect,
    .seg_end = wavg_seg_end,
    .build = wavg_build,
};

sc_status sc__agg_weighted_new(sc__agg_coll *c)
{
    wavg_state *st = sc_arena_calloc(c->ctx->a, 1, sizeof *st);
    if (!st)
        return sc__agg_oom(c->ctx->a);
    c->state = st;
    c->ops = &wavg_ops;
    return SC_OK;
}
