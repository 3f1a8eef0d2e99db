/* The single- and fixed-bucket collectors (agg_internal.h): filter and filters (each filter
 * query's iterator over the segment, advanced along the incoming non-decreasing docs; the
 * other bucket takes docs no filter matched), missing (docs without a value in the field)
 * and global (every doc: fed by a match_all pass at the top level). Bucket ordinal =
 * owner * n_buckets + bucket. */
#include <string.h>

#include "search/agg_internal.h"

typedef struct filter_state {
    size_t n_buckets;  /* filters (+ other) */
    sc__plan **plans;  /* per filter */
    sc_doc_iter **its; /* per filter, this segment (NULL: matches nothing here) */
    sc__agg_field f;   /* missing */
} filter_state;

static sc_status filter_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    filter_state *fs = c->state;
    if (c->spec->kind == SC_AGG_MISSING)
        return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &fs->f);
    for (size_t i = 0; fs->plans && i < c->spec->n_filters; i++)
        SC_TRY(sc__plan_iter(c->ctx->sctx, fs->plans[i], s->seg_i, &fs->its[i]));
    return SC_OK;
}

static sc_status filter_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

/* Whether filter i matches doc (docs arrive non-decreasing). */
static inline bool matches(filter_state *fs, size_t i, uint32_t doc)
{
    sc_doc_iter *it = fs->its[i];
    if (!it)
        return false;
    if (!it->positioned || (it->doc != SC_DOC_END && it->doc < doc))
        sc_doc_iter_advance(it, doc);
    return it->doc == doc;
}

static bool has_value(const filter_state *fs, uint32_t doc)
{
    if (fs->f.has_num && sc_dv_numeric_count(&fs->f.num, doc))
        return true;
    return fs->f.has_ss && sc_dv_sorted_set_count(&fs->f.ss, doc);
}

static sc_status filter_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                size_t n)
{
    filter_state *fs = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t nb = fs->n_buckets;
    for (size_t i = 0; i < n; i++) {
        uint32_t owner = owners ? owners[i] : 0;
        uint32_t base = (uint32_t)(owner * nb);
        switch (spec->kind) {
        case SC_AGG_GLOBAL: SC_TRY(sc__agg_emit(c, docs[i], base)); break;
        case SC_AGG_MISSING:
            if (!has_value(fs, docs[i]))
                SC_TRY(sc__agg_emit(c, docs[i], base));
            break;
        default: {
            bool any = false;
            for (size_t f = 0; f < spec->n_filters; f++) {
                if (matches(fs, f, docs[i])) {
                    any = true;
                    SC_TRY(sc__agg_emit(c, docs[i], base + (uint32_t)f));
                }
            }
            if (!any && spec->other_bucket && spec->kind == SC_AGG_FILTERS)
                SC_TRY(sc__agg_emit(c, docs[i], base + (uint32_t)spec->n_filters));
            break;
        }
        }
    }
    return SC_OK;
}

static sc_status filter_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    filter_state *fs = c->state;
    size_t nb = fs->n_buckets;
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, nb);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    SC_TRY(sc__agg_count_buckets(c->ctx, nb));
    for (size_t b = 0; b < nb; b++) {
        r->buckets[b].key = (int64_t)b;
        SC_TRY(sc__agg_build_bucket(c, (uint32_t)(owner * nb + b), &r->buckets[b]));
    }
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops filter_ops = {
    .seg_begin = filter_seg_begin,
    .collect = filter_collect,
    .seg_end = filter_seg_end,
    .build = filter_build,
};

sc_status sc__agg_filter_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    filter_state *fs = sc_arena_calloc(a, 1, sizeof *fs);
    if (!fs)
        return sc__agg_oom(a);
    fs->n_buckets = 1;
    if (spec->kind == SC_AGG_FILTER || spec->kind == SC_AGG_FILTERS) {
        size_t nf = spec->n_filters;
        fs->n_buckets = spec->kind == SC_AGG_FILTERS ? nf + (spec->other_bucket ? 1 : 0) : 1;
        fs->plans = sc_arena_calloc(a, nf + 1, sizeof *fs->plans);
        fs->its = sc_arena_calloc(a, nf + 1, sizeof *fs->its);
        if (!fs->plans || !fs->its)
            return sc__agg_oom(a);
        for (size_t i = 0; i < nf; i++)
            SC_TRY(sc__plan_build(c->ctx->sctx, spec->filters[i], false, &fs->plans[i]));
    }
    c->state = fs;
    c->ops = &filter_ops;
    return SC_OK;
}
