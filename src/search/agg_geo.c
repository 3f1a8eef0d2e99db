/* geo_bounds and geo_centroid (search/agg.h) over geo_point doc values (Lucene's LatLonPoint
 * encoding packed in one numeric value: latitude in the high 32 bits). Both keep their state in
 * the metric result fields, so the codec carries them unchanged:
 *   geo_centroid: count = points, sum (+ sum_c) = Σ lat, sum_sq (+ sum_sq_c) = Σ lon, Kahan-
 *                 summed; the metric reduce merges it as it is.
 *   geo_bounds:   min / max = bottom / top latitude; sum / sum_c = the smallest / largest
 *                 longitude >= 0, sum_sq / sum_sq_c = the smallest / largest longitude < 0
 *                 (Elasticsearch's posLeft/posRight/negLeft/negRight, for wrap_longitude);
 *                 merged by sc__agg_geo_bounds_merge. */
#include <math.h>
#include <string.h>

#include "index/bkd2.h"
#include "search/agg_internal.h"

typedef struct geo_state {
    sc__agg_field f;
    sc__agg_vec count, a, a_c, b, b_c, mn, mx; /* per owner, in the result fields' roles */
} geo_state;

static sc_status geo_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    geo_state *st = c->state;
    return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &st->f);
}

static sc_status geo_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static void kahan(double *sum, double *comp, double v)
{
    double corrected = v - *comp;
    double nsum = *sum + corrected;
    *comp = (nsum - *sum) - corrected;
    *sum = nsum;
}

/* Makes the per-owner arrays cover owner w, extremes starting empty. */
static sc_status ensure(sc__agg_coll *c, uint32_t w)
{
    geo_state *st = c->state;
    if (w < st->count.len)
        return SC_OK;
    sc_arena *a = c->ctx->a;
    size_t n = (size_t)w + 1;
    double inf = INFINITY, ninf = -INFINITY;
    uint64_t pinf, pninf;
    memcpy(&pinf, &inf, 8);
    memcpy(&pninf, &ninf, 8);
    bool bounds = c->spec->kind == SC_AGG_GEO_BOUNDS;
    SC_TRY(sc__agg_vec_ensure(a, &st->count, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &st->a, n, bounds ? pinf : 0));
    SC_TRY(sc__agg_vec_ensure(a, &st->a_c, n, bounds ? pninf : 0));
    SC_TRY(sc__agg_vec_ensure(a, &st->b, n, bounds ? pinf : 0));
    SC_TRY(sc__agg_vec_ensure(a, &st->b_c, n, bounds ? pninf : 0));
    SC_TRY(sc__agg_vec_ensure(a, &st->mn, n, pinf));
    SC_TRY(sc__agg_vec_ensure(a, &st->mx, n, pninf));
    return SC_OK;
}

static void add_point(geo_state *st, bool bounds, uint32_t w, double lat, double lon)
{
    ((uint64_t *)st->count.p)[w]++;
    double *a = &((double *)st->a.p)[w], *a_c = &((double *)st->a_c.p)[w];
    double *b = &((double *)st->b.p)[w], *b_c = &((double *)st->b_c.p)[w];
    double *mn = &((double *)st->mn.p)[w], *mx = &((double *)st->mx.p)[w];
    if (!bounds) {
        kahan(a, a_c, lat);
        kahan(b, b_c, lon);
        return;
    }
    *mn = lat < *mn ? lat : *mn;
    *mx = lat > *mx ? lat : *mx;
    if (lon >= 0) {
        *a = lon < *a ? lon : *a;
        *a_c = lon > *a_c ? lon : *a_c;
    } else {
        *b = lon < *b ? lon : *b;
        *b_c = lon > *b_c ? lon : *b_c;
    }
}

static sc_status geo_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                             size_t n)
{
    geo_state *st = c->state;
    bool bounds = c->spec->kind == SC_AGG_GEO_BOUNDS;
    if (!st->f.has_num)
        return SC_OK;
    int64_t vals[64];
    for (size_t i = 0; i < n; i++) {
        uint32_t w = owners ? owners[i] : 0;
        size_t k = sc_dv_numeric_get(&st->f.num, docs[i], vals, 64);
        if (!k)
            continue;
        SC_TRY(ensure(c, w));
        for (size_t j = 0; j < k && j < 64; j++) {
            int32_t la = (int32_t)(uint32_t)((uint64_t)vals[j] >> 32);
            int32_t lo = (int32_t)(uint32_t)(uint64_t)vals[j];
            add_point(st, bounds, w, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
        }
    }
    return SC_OK;
}

static sc_status geo_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    geo_state *st = c->state;
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 0);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    if (c->spec->kind == SC_AGG_GEO_BOUNDS)
        r->sum = r->sum_sq = INFINITY, r->sum_c = r->sum_sq_c = -INFINITY;
    if (owner < st->count.len) {
        r->count = ((const uint64_t *)st->count.p)[owner];
        r->sum = ((const double *)st->a.p)[owner];
        r->sum_c = ((const double *)st->a_c.p)[owner];
        r->sum_sq = ((const double *)st->b.p)[owner];
        r->sum_sq_c = ((const double *)st->b_c.p)[owner];
        r->min = ((const double *)st->mn.p)[owner];
        r->max = ((const double *)st->mx.p)[owner];
    }
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops geo_ops = {
    .seg_begin = geo_seg_begin,
    .collect = geo_collect,
    .seg_end = geo_seg_end,
    .build = geo_build,
};

sc_status sc__agg_geo_new(sc__agg_coll *c)
{
    geo_state *st = sc_arena_calloc(c->ctx->a, 1, sizeof *st);
    if (!st)
        return sc__agg_oom(c->ctx->a);
    c->state = st;
    c->ops = &geo_ops;
    return SC_OK;
}

void sc__agg_geo_bounds_merge(sc_agg_result *r, const sc_agg_result *x)
{
    if (!x->count) /* an empty partial's fields are zeros, not extremes */
        return;
    r->count += x->count;
    r->min = x->min < r->min ? x->min : r->min;
    r->max = x->max > r->max ? x->max : r->max;
    r->sum = x->sum < r->sum ? x->sum : r->sum;
    r->sum_c = x->sum_c > r->sum_c ? x->sum_c : r->sum_c;
    r->sum_sq = x->sum_sq < r->sum_sq ? x->sum_sq : r->sum_sq;
    r->sum_sq_c = x->sum_sq_c > r->sum_sq_c ? x->sum_sq_c : r->sum_sq_c;
}
