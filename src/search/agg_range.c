/* The range / date_range collector (agg_internal.h): each doc's values (as doubles) against
 * every [from, to) range; a doc counts once per range it has a value in. Ranges keep the
 * request's order and may overlap; bucket ordinal = owner * n_ranges + range. */
#include <string.h>

#include "search/agg_internal.h"

typedef struct range_state {
    sc__agg_field f;
    uint64_t *lo, *hi; /* ip_range: per range, the segment's ordinals [lo, hi) */
} range_state;

/* The first ordinal whose term is >= t (n_ords when none). */
static uint64_t ceil_ord(const sc_dv_sorted_set *ss, sc_slice t)
{
    uint64_t lo = 0, hi = sc_dv_sorted_set_n_ords(ss);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sc_slice_cmp(sc_dv_sorted_set_term(ss, mid), t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ip_range: docs' ordinals against each range's ordinal bounds in this segment. */
static sc_status collect_ips(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                             size_t n)
{
    range_state *r = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t nr = spec->n_ranges;
    uint64_t ords[64];
    for (size_t i = 0; r->f.has_ss && i < n; i++) {
        size_t k = sc_dv_sorted_set_ords(&r->f.ss, docs[i], ords, 64);
        uint32_t owner = owners ? owners[i] : 0;
        for (size_t g = 0; g < nr; g++)
            for (size_t j = 0; j < k; j++)
                if (ords[j] >= r->lo[g] && ords[j] < r->hi[g]) {
                    SC_TRY(sc__agg_emit(c, docs[i], (uint32_t)(owner * nr + g)));
                    break;
                }
    }
    return SC_OK;
}

static sc_status range_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    range_state *r = c->state;
    SC_TRY(sc__agg_field_open(c->ctx, s->seg, c->spec->field, &r->f));
    if (c->spec->vtype != SC_AGG_V_IP || !r->f.has_ss)
        return SC_OK;
    for (size_t g = 0; g < c->spec->n_ranges; g++) {
        const sc_agg_range_spec *rg = &c->spec->ranges[g];
        r->lo[g] = rg->from_ip.len ? ceil_ord(&r->f.ss, rg->from_ip) : 0;
        r->hi[g] =
            rg->to_ip.len ? ceil_ord(&r->f.ss, rg->to_ip) : sc_dv_sorted_set_n_ords(&r->f.ss);
    }
    return SC_OK;
}

static sc_status range_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static sc_status range_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                               size_t n)
{
    range_state *r = c->state;
    const sc_agg_spec *spec = c->spec;
    if (spec->vtype == SC_AGG_V_IP)
        return collect_ips(c, docs, owners, n);
    size_t nr = spec->n_ranges;
    double vals[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = sc__agg_doc_doubles(&r->f, spec, docs[i], vals, 256);
        if (!k)
            continue;
        uint32_t owner = owners ? owners[i] : 0;
        for (size_t g = 0; g < nr; g++) {
            const sc_agg_range_spec *rg = &spec->ranges[g];
            for (size_t j = 0; j < k; j++) {
                if (vals[j] >= rg->from && vals[j] < rg->to) {
                    SC_TRY(sc__agg_emit(c, docs[i], (uint32_t)(owner * nr + g)));
                    break;
                }
            }
        }
    }
    return SC_OK;
}

static sc_status range_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    size_t nr = c->spec->n_ranges;
    sc_agg_result *res = sc__agg_result_new(c->ctx->a, c->spec, nr);
    if (!res)
        return sc__agg_oom(c->ctx->a);
    SC_TRY(sc__agg_count_buckets(c->ctx, nr));
    for (size_t g = 0; g < nr; g++) {
        res->buckets[g].key = (int64_t)g;
        SC_TRY(sc__agg_build_bucket(c, (uint32_t)(owner * nr + g), &res->buckets[g]));
    }
    *out = res;
    return SC_OK;
}

static sc_status range_seg_whole(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi,
                                 bool *handled)
{
    *handled = false;
    return c->spec->vtype == SC_AGG_V_IP ? SC_OK : sc__agg_range_points(c, field, lo, hi, handled);
}

static const sc__agg_coll_ops range_ops = {
    .seg_begin = range_seg_begin,
    .collect = range_collect,
    .seg_end = range_seg_end,
    .build = range_build,
    .seg_whole = range_seg_whole,
};

sc_status sc__agg_range_new(sc__agg_coll *c)
{
    range_state *r = sc_arena_calloc(c->ctx->a, 1, sizeof *r);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    r->lo = sc_arena_calloc(c->ctx->a, c->spec->n_ranges + 1, sizeof *r->lo);
    r->hi = sc_arena_calloc(c->ctx->a, c->spec->n_ranges + 1, sizeof *r->hi);
    if (!r->lo || !r->hi)
        return sc__agg_oom(c->ctx->a);
    c->state = r;
    c->ops = &range_ops;
    return SC_OK;
}
