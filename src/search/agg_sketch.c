/* The sketch metrics: cardinality (a HyperLogLog++ sketch per owner bucket, search/hll.h) and
 * percentiles / percentile_ranks / median_absolute_deviation (a t-digest per owner bucket,
 * search/tdigest.h). Sketches live
 * in the aggregation's arena, are created on an owner's first value, travel in the partial
 * results (encoded by agg_codec.c) and are merged by the reduce. Values are hashed as
 * Elasticsearch does for bytes (MurmurHash3 of the term) and by a 64-bit bijection for numbers
 * (the doc value itself: long, date, boolean, scaled_float's long, double's sortable bits). */
#include <math.h>
#include <string.h>

#include "search/agg_internal.h"

/* Values of one field read per document, as the other collectors (sc__agg_doc_doubles). */
#define MAX_VALUES 256

typedef struct sketch_state {
    sc__agg_field f;
    sc__agg_vec sk; /* per owner: sc_hll * or sc_tdigest * (0 = none yet) */
} sketch_state;

static sc_status sketch_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    sketch_state *m = c->state;
    return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &m->f);
}

static sc_status sketch_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static uint32_t precision_of(const sc_agg_spec *spec)
{
    return spec->hll_precision ? spec->hll_precision : SC_HLL_DEFAULT_PRECISION;
}

static double compression_of(const sc_agg_spec *spec)
{
    if (spec->compression > 0)
        return spec->compression;
    /* Elasticsearch's default for median_absolute_deviation is 1000 */
    return spec->kind == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION ? 1000 : SC_TDIGEST_DEFAULT_COMPRESSION;
}

/* The sketch of owner w, created on first use. */
static sc_status sketch_of(sc__agg_coll *c, uint32_t w, void **out)
{
    sketch_state *m = c->state;
    if (w >= m->sk.len)
        SC_TRY(sc__agg_vec_ensure(c->ctx->a, &m->sk, (size_t)w + 1, 0));
    void **slot = (void **)m->sk.p + w;
    if (!*slot) {
        if (c->spec->kind == SC_AGG_CARDINALITY)
            SC_TRY(sc_hll_new(precision_of(c->spec), NULL, c->ctx->a, (sc_hll **)slot));
        else
            SC_TRY(sc_tdigest_new(compression_of(c->spec), NULL, c->ctx->a, (sc_tdigest **)slot));
    }
    *out = *slot;
    return SC_OK;
}

/* The hashes of doc's values (the `missing` value when it has none); how many (<= cap). */
static size_t doc_hashes(const sketch_state *m, const sc_agg_spec *spec, uint32_t doc,
                         uint64_t *out, size_t cap)
{
    size_t n = 0;
    if (m->f.has_ss) {
        uint64_t ords[MAX_VALUES];
        n = sc_dv_sorted_set_ords(&m->f.ss, doc, ords, cap < MAX_VALUES ? cap : MAX_VALUES);
        for (size_t i = 0; i < n; i++)
            out[i] = sc_hll_hash_bytes(sc_dv_sorted_set_term(&m->f.ss, ords[i]));
    } else if (m->f.has_num) {
        int64_t vals[MAX_VALUES];
        n = sc_dv_numeric_get(&m->f.num, doc, vals, cap < MAX_VALUES ? cap : MAX_VALUES);
        for (size_t i = 0; i < n; i++)
            out[i] = sc_hll_hash_u64((uint64_t)vals[i]);
    }
    if (n == 0 && spec->has_missing && cap) {
        bool bytes = spec->vtype == SC_AGG_V_KEYWORD || spec->vtype == SC_AGG_V_IP;
        out[0] = bytes ? sc_hll_hash_bytes(spec->missing_bytes)
                       : sc_hll_hash_u64((uint64_t)spec->missing_num);
        n = 1;
    }
    return n;
}

static sc_status sketch_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                size_t n)
{
    sketch_state *m = c->state;
    const sc_agg_spec *spec = c->spec;
    if (!m->f.has_ss && !m->f.has_num && !spec->has_missing)
        return SC_OK;
    void *sk;
    if (spec->kind == SC_AGG_CARDINALITY) {
        uint64_t hashes[MAX_VALUES];
        for (size_t i = 0; i < n; i++) {
            size_t k = doc_hashes(m, spec, docs[i], hashes, MAX_VALUES);
            if (!k)
                continue;
            SC_TRY(sketch_of(c, owners ? owners[i] : 0, &sk));
            SC_TRY(sc_hll_add_batch(sk, hashes, k));
        }
        return SC_OK;
    }
    double vals[MAX_VALUES];
    for (size_t i = 0; i < n; i++) {
        size_t k = sc__agg_doc_doubles(&m->f, spec, docs[i], vals, MAX_VALUES);
        if (!k)
            continue;
        SC_TRY(sketch_of(c, owners ? owners[i] : 0, &sk));
        for (size_t j = 0; j < k; j++) {
            sc_status st = sc_tdigest_add(sk, vals[j], 1);
            if (st != SC_OK && st != SC_EINVAL) /* NaN / infinite values are skipped */
                return st;
        }
    }
    return SC_OK;
}

static sc_status sketch_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    sketch_state *m = c->state;
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 0);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    void *sk = owner < m->sk.len ? ((void **)m->sk.p)[owner] : NULL;
    if (c->spec->kind == SC_AGG_CARDINALITY)
        r->hll = sk;
    else
        r->td = sk;
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops sketch_ops = {
    .seg_begin = sketch_seg_begin,
    .collect = sketch_collect,
    .seg_end = sketch_seg_end,
    .build = sketch_build,
};

sc_status sc__agg_sketch_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    sketch_state *m = sc_arena_calloc(a, 1, sizeof *m);
    if (!m)
        return sc__agg_oom(a);
    c->state = m;
    c->ops = &sketch_ops;
    return SC_OK;
}

sc_status sc__agg_sketch_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                sc_arena *a, sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(a, spec, 0);
    if (!r)
        return sc__agg_oom(a);
    if (spec->kind == SC_AGG_CARDINALITY) {
        for (size_t i = 0; i < n; i++) {
            if (!in[i]->hll)
                continue;
            if (!r->hll)
                SC_TRY(sc_hll_new(sc_hll_precision(in[i]->hll), NULL, a, &r->hll));
            sc_status st = sc_hll_merge(r->hll, in[i]->hll);
            if (st != SC_OK)
                return st == SC_EINVAL ? SC_ECORRUPT : st;
        }
    } else {
        /* Elasticsearch merges into the digest of the largest compression */
        double comp = 0;
        for (size_t i = 0; i < n; i++)
            if (in[i]->td && sc_tdigest_compression(in[i]->td) > comp)
                comp = sc_tdigest_compression(in[i]->td);
        if (comp > 0)
            SC_TRY(sc_tdigest_new(comp, NULL, a, &r->td));
        for (size_t i = 0; i < n; i++)
            if (in[i]->td)
                SC_TRY(sc_tdigest_merge(r->td, in[i]->td));
    }
    *out = r;
    return SC_OK;
}
