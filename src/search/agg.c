/* The aggregation collector framework (search/agg.h, agg_internal.h): collector trees from a
 * spec, the (doc, bucket ordinal) pair batches to sub-aggregations, arena vectors, doc values
 * of a field, and sc_agg_collect_shard (collect + build of a shard partial). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/agg_internal.h"
#include "search/runtime.h"

sc_status sc__agg_oom(sc_arena *a)
{
    return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

sc_status sc__agg_vec_ensure(sc_arena *a, sc__agg_vec *v, size_t n, uint64_t fill)
{
    if (n <= v->len)
        return SC_OK;
    if (n > v->cap) {
        size_t cap = v->cap ? v->cap : 16;
        while (cap < n)
            cap *= 2;
        uint64_t *p = sc_arena_alloc(a, cap * sizeof *p);
        if (!p)
            return sc__agg_oom(a);
        if (v->len)
            memcpy(p, v->p, v->len * sizeof *p);
        v->p = p;
        v->cap = cap;
    }
    uint64_t *p = v->p;
    for (size_t i = v->len; i < n; i++)
        p[i] = fill;
    v->len = n;
    return SC_OK;
}

sc_status sc__agg_counts_ensure(sc__agg_coll *c, uint32_t ord)
{
    return sc__agg_vec_ensure(c->ctx->a, &c->doc_counts, (size_t)ord + 1, 0);
}

sc_status sc__agg_flush(sc__agg_coll *c)
{
    size_t n = c->pb_n;
    c->pb_n = 0;
    if (!n)
        return SC_OK;
    for (size_t i = 0; i < c->n_subs; i++) {
        sc__agg_coll *s = c->subs[i];
        SC_TRY(s->ops->collect(s, c->pb_docs, c->pb_ords, n));
    }
    return SC_OK;
}

sc_status sc__agg_coll_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    SC_TRY(c->ops->seg_begin(c, s));
    for (size_t i = 0; i < c->n_subs; i++)
        SC_TRY(sc__agg_coll_seg_begin(c->subs[i], s));
    return SC_OK;
}

sc_status sc__agg_coll_seg_end(sc__agg_coll *c)
{
    SC_TRY(sc__agg_flush(c));
    SC_TRY(c->ops->seg_end(c));
    for (size_t i = 0; i < c->n_subs; i++)
        SC_TRY(sc__agg_coll_seg_end(c->subs[i]));
    return SC_OK;
}

sc_status sc__agg_coll_new(sc__agg_ctx *ctx, const sc_agg_spec *spec, sc__agg_coll **out)
{
    sc_arena *a = ctx->a;
    sc__agg_coll *c = sc_arena_calloc(a, 1, sizeof *c);
    if (!c)
        return sc__agg_oom(a);
    c->spec = spec;
    c->ctx = ctx;
    c->n_subs = spec->n_subs;
    if (spec->n_subs) {
        c->subs = sc_arena_calloc(a, spec->n_subs, sizeof *c->subs);
        c->pb_docs = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *c->pb_docs);
        c->pb_ords = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *c->pb_ords);
        if (!c->subs || !c->pb_docs || !c->pb_ords)
            return sc__agg_oom(a);
        for (size_t i = 0; i < spec->n_subs; i++)
            SC_TRY(sc__agg_coll_new(ctx, spec->subs[i], &c->subs[i]));
    }
    switch (spec->kind) {
    case SC_AGG_TERMS:
    case SC_AGG_SIGNIFICANT_TERMS:
    case SC_AGG_RARE_TERMS: SC_TRY(sc__agg_terms_new(c)); break;
    case SC_AGG_HISTOGRAM:
    case SC_AGG_DATE_HISTOGRAM: SC_TRY(sc__agg_histo_new(c)); break;
    case SC_AGG_RANGE: SC_TRY(sc__agg_range_new(c)); break;
    case SC_AGG_COMPOSITE:
    case SC_AGG_MULTI_TERMS: SC_TRY(sc__agg_composite_new(c)); break;
    case SC_AGG_AVG_BUCKET:
    case SC_AGG_MAX_BUCKET:
    case SC_AGG_MIN_BUCKET:
    case SC_AGG_SUM_BUCKET:
    case SC_AGG_STATS_BUCKET:
    case SC_AGG_CUMULATIVE_SUM:
    case SC_AGG_DERIVATIVE:
    case SC_AGG_BUCKET_SORT:
    case SC_AGG_BUCKET_SCRIPT:
    case SC_AGG_BUCKET_SELECTOR:
    case SC_AGG_MOVING_FN:
    case SC_AGG_SERIAL_DIFF:
    case SC_AGG_PERCENTILES_BUCKET:
    case SC_AGG_EXTENDED_STATS_BUCKET: SC_TRY(sc__agg_pipeline_new(c)); break;
    case SC_AGG_AUTO_DATE_HISTOGRAM: SC_TRY(sc__agg_auto_histo_new(c)); break;
    case SC_AGG_WEIGHTED_AVG: SC_TRY(sc__agg_weighted_new(c)); break;
    case SC_AGG_GEO_BOUNDS:
    case SC_AGG_GEO_CENTROID: SC_TRY(sc__agg_geo_new(c)); break;
    case SC_AGG_TOP_HITS:
    case SC_AGG_TOP_METRICS: SC_TRY(sc__agg_top_hits_new(c)); break;
    case SC_AGG_FILTER:
    case SC_AGG_FILTERS:
    case SC_AGG_MISSING:
    case SC_AGG_GLOBAL: SC_TRY(sc__agg_filter_new(c)); break;
    case SC_AGG_SAMPLER:
    case SC_AGG_DIVERSIFIED_SAMPLER: SC_TRY(sc__agg_sampler_new(c)); break;
    case SC_AGG_NESTED:
    case SC_AGG_REVERSE_NESTED: SC_TRY(sc__agg_nested_new(c)); break;
    case SC_AGG_MIN:
    case SC_AGG_MAX:
    case SC_AGG_SUM:
    case SC_AGG_AVG:
    case SC_AGG_VALUE_COUNT:
    case SC_AGG_STATS:
    case SC_AGG_EXTENDED_STATS: SC_TRY(sc__agg_metric_new(c)); break;
    case SC_AGG_CARDINALITY:
    case SC_AGG_PERCENTILES:
    case SC_AGG_PERCENTILE_RANKS:
    case SC_AGG_MEDIAN_ABSOLUTE_DEVIATION: SC_TRY(sc__agg_sketch_new(c)); break;
    default:
        snprintf(ctx->err->reason, sizeof ctx->err->reason,
                 "aggregation [%s] of this type is not supported yet", spec->name);
        return SC_EUNSUPPORTED;
    }
    *out = c;
    return SC_OK;
}

sc_agg_result *sc__agg_result_new(sc_arena *a, const sc_agg_spec *spec, size_t nb)
{
    sc_agg_result *r = sc_arena_calloc(a, 1, sizeof *r);
    if (!r)
        return NULL;
    r->kind = spec->kind;
    r->min = INFINITY;
    r->max = -INFINITY;
    r->n_reduced = 1;
    r->n_buckets = nb;
    r->buckets = sc_arena_calloc(a, nb ? nb : 1, sizeof *r->buckets);
    if (!r->buckets)
        return NULL;
    if (spec->n_subs) {
        sc_agg_result **subs = sc_arena_calloc(a, nb * spec->n_subs + 1, sizeof *subs);
        if (!subs)
            return NULL;
        for (size_t i = 0; i < nb; i++) {
            r->buckets[i].subs = subs + i * spec->n_subs;
            r->buckets[i].n_subs = (uint32_t)spec->n_subs;
        }
    }
    return r;
}

sc_status sc__agg_count_buckets(sc__agg_ctx *ctx, uint64_t n)
{
    ctx->n_buckets += n;
    if (ctx->n_buckets > ctx->max_buckets) {
        ctx->err->too_many_buckets = true;
        snprintf(ctx->err->reason, sizeof ctx->err->reason,
                 "Trying to create too many buckets. Must be less than or equal to: [%llu] but "
                 "this number of buckets was exceeded. This limit can be set by changing the "
                 "[search.max_buckets] cluster level setting.",
                 (unsigned long long)ctx->max_buckets);
        return SC_ELIMIT;
    }
    return SC_OK;
}

sc_status sc__agg_build_bucket(sc__agg_coll *c, uint32_t ord, sc_agg_bucket *b)
{
    b->doc_count = ord < c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[ord] : 0;
    for (size_t i = 0; i < c->n_subs; i++)
        SC_TRY(c->subs[i]->ops->build(c->subs[i], ord, &b->subs[i]));
    return SC_OK;
}

/* ---- doc values ---- */

/* The column of runtime field i of ctx's options in seg (computed once per segment). */
static sc_status runtime_open(sc__agg_ctx *ctx, size_t i, const sc_segment *seg, sc__agg_field *f)
{
    if (!ctx->rt_seg) {
        size_t n = ctx->so->n_runtime;
        ctx->rt_seg = sc_arena_calloc(ctx->a, n, sizeof *ctx->rt_seg);
        ctx->rt_col = sc_arena_calloc(ctx->a, n, sizeof *ctx->rt_col);
        ctx->rt_failed = sc_arena_calloc(ctx->a, n, sizeof *ctx->rt_failed);
        ctx->rt_reason = sc_arena_calloc(ctx->a, n, sizeof *ctx->rt_reason);
        if (!ctx->rt_seg || !ctx->rt_col || !ctx->rt_failed || !ctx->rt_reason)
            return sc__agg_oom(ctx->a);
    }
    if (ctx->rt_seg[i] != seg) {
        sc__agg_field *col = &ctx->rt_col[i];
        memset(col, 0, sizeof *col);
        sc_script_error serr = {0};
        bool is_num = false;
        SC_TRY(sc_runtime_column(ctx->a, &ctx->so->runtime[i], seg, &is_num, &col->num, &col->ss,
                                 &ctx->rt_failed[i], &serr));
        snprintf(ctx->rt_reason[i], sizeof ctx->rt_reason[i], "%s", serr.reason);
        col->has_num = is_num;
        col->has_ss = !is_num;
        ctx->rt_seg[i] = seg;
    }
    *f = ctx->rt_col[i];
    return SC_OK;
}

sc_status sc__agg_field_open(sc__agg_ctx *ctx, const sc_segment *seg, const char *field,
                             sc__agg_field *f)
{
    memset(f, 0, sizeof *f);
    if (!field)
        return SC_OK;
    for (size_t i = 0; ctx->so && i < ctx->so->n_runtime; i++)
        if (strcmp(ctx->so->runtime[i].name, field) == 0)
            return runtime_open(ctx, i, seg, f);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr(field));
    if (!fi)
        return SC_OK;
    sc_status st = sc_dv_numeric_open(seg, fi, &f->num);
    if (st == SC_OK)
        f->has_num = true;
    else if (st != SC_ENOTFOUND)
        return st;
    st = sc_dv_sorted_set_open(seg, fi, &f->ss);
    if (st == SC_OK)
        f->has_ss = true;
    else if (st != SC_ENOTFOUND)
        return st;
    return SC_OK;
}

sc_status sc__agg_field_open_doubles(sc__agg_ctx *ctx, const sc_segment *seg,
                                     const sc_agg_spec *spec, sc__agg_field *f,
                                     sc_runtime_doubles **rt)
{
    *rt = NULL;
    memset(f, 0, sizeof *f);
    bool plain = spec->vtype == SC_AGG_V_DOUBLE && !(spec->scaling_factor > 0);
    for (size_t i = 0;
         plain && spec->field && ctx->so && !ctx->so->runtime_columns && i < ctx->so->n_runtime;
         i++)
        if (strcmp(ctx->so->runtime[i].name, spec->field) == 0) {
            /* a column computed already (another collector's) is read as it is */
            if (ctx->rt_seg && ctx->rt_seg[i] == seg)
                break;
            SC_TRY(sc_runtime_doubles_open(ctx->a, &ctx->so->runtime[i], seg, rt));
            if (*rt)
                return SC_OK;
            break;
        }
    return sc__agg_field_open(ctx, seg, spec->field, f);
}

double sc_agg_sortable_to_double(int64_t v)
{
    int64_t bits = v ^ ((v >> 63) & INT64_MAX);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

int64_t sc_agg_double_to_sortable(double d)
{
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits ^ ((bits >> 63) & INT64_MAX);
}

double sc_agg_value_to_double(sc_agg_vtype t, int64_t v)
{
    return t == SC_AGG_V_DOUBLE ? sc_agg_sortable_to_double(v) : (double)v;
}

size_t sc__agg_doc_doubles(const sc__agg_field *f, const sc_agg_spec *spec, uint32_t doc,
                           double *out, size_t cap)
{
    int64_t vals[256];
    size_t n = 0;
    if (f->has_num) {
        n = sc_dv_numeric_get(&f->num, doc, vals, cap < 256 ? cap : 256);
        for (size_t i = 0; i < n; i++) {
            double d = sc_agg_value_to_double(spec->vtype, vals[i]);
            out[i] = spec->scaling_factor > 0 ? d / spec->scaling_factor : d;
        }
    }
    if (n == 0 && spec->has_missing && cap) {
        out[0] = spec->missing_double;
        n = 1;
    }
    return n;
}

/* ---- a shard collection ---- */

typedef struct run_ctx {
    sc__agg_coll **colls;
    size_t n;
    const sc_searcher *s;
    sc__agg_seg seg; /* the current segment */
} run_ctx;

static sc_status run_seg_begin(void *ctx, size_t seg_i, const sc_segment *seg)
{
    run_ctx *r = ctx;
    r->seg = (sc__agg_seg){.seg = seg, .seg_i = seg_i, .n_docs = sc_segment_n_docs(seg)};
    for (size_t i = 0; i < r->n; i++) {
        r->colls[i]->skip = false;
        r->colls[i]->seg = &r->seg;
        SC_TRY(sc__agg_coll_seg_begin(r->colls[i], &r->seg));
    }
    return SC_OK;
}

/* The whole segment matches: aggregations that can count it from the index do. */
static sc_status run_seg_whole(void *ctx, const sc_slice *field, int64_t lo, int64_t hi,
                               bool *consumed)
{
    run_ctx *r = ctx;
    bool all = true;
    for (size_t i = 0; i < r->n; i++) {
        sc__agg_coll *c = r->colls[i];
        bool handled = false;
        if (c->ops->seg_whole && (!c->n_subs || c->ops->seg_whole_feeds_subs))
            SC_TRY(c->ops->seg_whole(c, field, lo, hi, &handled));
        c->skip = handled;
        all &= handled;
    }
    *consumed = all;
    return SC_OK;
}

/* The query is match_all or one range: aggregations that can plan from it do. */
static sc_status run_query_whole(void *ctx, const sc_slice *field, int64_t lo, int64_t hi)
{
    run_ctx *r = ctx;
    for (size_t i = 0; i < r->n; i++)
        if (r->colls[i]->ops->query_whole)
            SC_TRY(r->colls[i]->ops->query_whole(r->colls[i], field, lo, hi));
    return SC_OK;
}

/* A matching doc whose runtime field's script failed fails the collection (SC_EINVAL). */
static sc_status runtime_check(const run_ctx *r, const uint32_t *docs, size_t n)
{
    const sc__agg_ctx *ctx = r->colls[0]->ctx;
    for (size_t i = 0; i < ctx->so->n_runtime; i++) {
        const uint64_t *f = ctx->rt_seg[i] == r->seg.seg ? ctx->rt_failed[i] : NULL;
        for (size_t j = 0; f && j < n; j++)
            if (f[docs[j] / 64] >> (docs[j] % 64) & 1) {
                snprintf(ctx->err->reason, sizeof ctx->err->reason, "runtime field [%s]: %s",
                         ctx->so->runtime[i].name, ctx->rt_reason[i]);
                return SC_EINVAL;
            }
    }
    return SC_OK;
}

static sc_status run_collect(void *ctx, const uint32_t *docs, size_t n)
{
    run_ctx *r = ctx;
    if (r->n && r->colls[0]->ctx->rt_seg)
        SC_TRY(runtime_check(r, docs, n));
    for (size_t i = 0; i < r->n; i++)
        if (!r->colls[i]->skip)
            SC_TRY(r->colls[i]->ops->collect(r->colls[i], docs, NULL, n));
    return SC_OK;
}

static sc_status run_seg_end(void *ctx)
{
    run_ctx *r = ctx;
    for (size_t i = 0; i < r->n; i++)
        SC_TRY(sc__agg_coll_seg_end(r->colls[i]));
    return SC_OK;
}

/* One collection pass over the top-level aggregations whose kind is (global) or is not
 * (!global) SC_AGG_GLOBAL. */
static sc_status run_pass(sc__agg_ctx *ctx, const sc_agg_spec *root, bool global, const sc_query *q,
                          const sc_search_options *o, sc__agg_coll **colls, sc_search_result *res)
{
    run_ctx r = {.colls = sc_arena_calloc(ctx->a, root->n_subs + 1, sizeof *r.colls), .s = ctx->s};
    if (!r.colls)
        return sc__agg_oom(ctx->a);
    ctx->q = q;
    for (size_t i = 0; i < root->n_subs; i++) {
        if ((root->subs[i]->kind == SC_AGG_GLOBAL) != global)
            continue;
        SC_TRY(sc__agg_coll_new(ctx, root->subs[i], &colls[i]));
        colls[i]->top = true;
        r.colls[r.n++] = colls[i];
    }
    if (!r.n && global)
        return SC_OK;
    sc_search_collector c = {.ctx = &r,
                             .segment_begin = run_seg_begin,
                             .collect = run_collect,
                             .segment_end = run_seg_end,
                             .segment_whole = run_seg_whole,
                             .query_whole = run_query_whole};
    return sc_search_collect(ctx->s, q, o, &c, ctx->a, res);
}

sc_status sc_agg_collect_shard(const sc_agg_spec *root, const sc_searcher *s, const sc_query *q,
                               const sc_search_options *o, const sc_agg_shard_options *so,
                               sc_arena *a, sc_agg_result **out, sc_search_result *res,
                               sc_agg_error *err)
{
    memset(err, 0, sizeof *err);
    sc__search_ctx sctx;
    sc_search_result fres;
    sc__search_ctx_init(&sctx, s, o, a, &fres);
    sc__agg_ctx ctx = {.a = a, .s = s, .sctx = &sctx, .so = so, .err = err};
    ctx.max_buckets = so && so->max_buckets ? so->max_buckets : SC_AGG_DEFAULT_MAX_BUCKETS;
    sc__agg_coll **colls = sc_arena_calloc(a, root->n_subs + 1, sizeof *colls);
    if (!colls)
        return sc__agg_oom(a);
    sc_status st = run_pass(&ctx, root, false, q, o, colls, res);
    if (st != SC_OK && fres.error[0] && !res->error[0])
        memcpy(res->error, fres.error, sizeof res->error);
    if (st == SC_OK && !res->cancelled && !res->timed_out) {
        sc_search_result gres;
        memset(&gres, 0, sizeof gres);
        const sc_query *all = sc_query_match_all(a);
        if (!all)
            return sc__agg_oom(a);
        st = run_pass(&ctx, root, true, all, o, colls, &gres);
        res->cancelled |= gres.cancelled;
        res->timed_out |= gres.timed_out;
    }
    if (st != SC_OK) {
        if (!err->reason[0])
            snprintf(err->reason, sizeof err->reason, "%s",
                     res->error[0] ? res->error : sc_status_str(st));
        return st;
    }
    sc_agg_result *r = sc__agg_result_new(a, root, 1);
    if (!r)
        return sc__agg_oom(a);
    r->buckets[0].doc_count = res->total;
    for (size_t i = 0; i < root->n_subs; i++) {
        if (colls[i])
            st = colls[i]->ops->build(colls[i], 0, &r->buckets[0].subs[i]);
        if (st != SC_OK)
            return st;
    }
    *out = r;
    return SC_OK;
}
