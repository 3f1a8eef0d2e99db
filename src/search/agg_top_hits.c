/* top_hits and top_metrics (search/agg.h): per owner bucket ordinal the best from + size docs
 * under the spec's sort (default _score descending, scored by the query's own scorer advanced
 * to each collected doc), kept as (segment, doc, sort values) with the worst entry replaced;
 * the build fetches _id and _source (top_hits, on the shard as Elasticsearch does) or reads
 * the metric fields (top_metrics) of the kept docs; the reduce merges hit lists by the same
 * order (ties: the earlier input, then that input's order), so shard order stays deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/stored.h"
#include "search/agg_internal.h"

typedef struct cand {
    uint32_t seg_i, doc;
    uint64_t gdoc;
    float score;
    sc_sort_key *values;
} cand;

typedef struct slot {
    cand *c;
    uint32_t n, worst;
} slot;

typedef struct th_state {
    uint32_t k; /* from + size */
    sc_sort_spec *specs;
    size_t n_specs;
    bool scores;
    sc__agg_vec slots;  /* per owner: slot * */
    sc__agg_vec counts; /* per owner: docs seen */
    sc__agg_field *rd;  /* per sort spec, the current segment's doc values */
    uint32_t seg_i;
    uint64_t base; /* the current segment's first shard-global doc */
    sc__plan *plan;
    const sc_query *plan_q;
    sc_doc_iter *it;
    uint32_t last_doc;
    float last_score;
    sc_sort_key *scratch;
    int64_t *nbuf;
    uint64_t *obuf;
    uint32_t buf_cap;
} th_state;

static const sc_sort_spec default_sort = {.kind = SC_SORT_BY_SCORE, .desc = true};

static sc_sort_mode eff_mode(const sc_sort_spec *s)
{
    if (s->mode != SC_SORT_MODE_AUTO)
        return s->mode;
    return s->desc ? SC_SORT_MODE_MAX : SC_SORT_MODE_MIN;
}

static sc_status seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    th_state *t = c->state;
    sc__agg_ctx *ctx = c->ctx;
    t->seg_i = (uint32_t)s->seg_i;
    t->base = 0;
    for (size_t i = 0; i < s->seg_i && i < ctx->s->n_segs; i++)
        t->base += sc_segment_n_docs(ctx->s->segs[i].seg);
    for (size_t i = 0; i < t->n_specs; i++) {
        memset(&t->rd[i], 0, sizeof t->rd[i]);
        if (t->specs[i].kind == SC_SORT_BY_NUMERIC || t->specs[i].kind == SC_SORT_BY_KEYWORD) {
            char *f = sc_arena_strndup(ctx->a, (const char *)t->specs[i].field.ptr,
                                       t->specs[i].field.len);
            if (!f)
                return sc__agg_oom(ctx->a);
            SC_TRY(sc__agg_field_open(c->ctx, s->seg, f, &t->rd[i]));
        }
    }
    t->it = NULL;
    t->last_doc = SC_DOC_END;
    if (t->scores) {
        if (!t->plan || t->plan_q != ctx->q) {
            SC_TRY(sc__plan_build(ctx->sctx, ctx->q, true, &t->plan));
            t->plan_q = ctx->q;
        }
        SC_TRY(sc__plan_iter(ctx->sctx, t->plan, s->seg_i, &t->it));
    }
    return SC_OK;
}

static sc_status seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static float score_of(th_state *t, uint32_t doc)
{
    if (!t->it)
        return 0;
    if (doc == t->last_doc)
        return t->last_score;
    uint32_t d = t->it->doc;
    if (!t->it->positioned || d < doc)
        d = sc_doc_iter_advance(t->it, doc);
    t->last_doc = doc;
    t->last_score = d == doc ? sc_doc_iter_score(t->it) : 0;
    return t->last_score;
}

static sc_status grow_bufs(sc_arena *a, th_state *t, uint32_t n)
{
    if (n <= t->buf_cap)
        return SC_OK;
    uint32_t cap = t->buf_cap ? t->buf_cap : 64;
    while (cap < n)
        cap *= 2;
    t->nbuf = sc_arena_alloc(a, (size_t)cap * sizeof *t->nbuf);
    t->obuf = sc_arena_alloc(a, (size_t)cap * sizeof *t->obuf);
    if (!t->nbuf || !t->obuf)
        return sc__agg_oom(a);
    t->buf_cap = cap;
    return SC_OK;
}

/* The sort values of doc into t->scratch (keyword bytes borrowed from the segment). */
static sc_status read_values(sc__agg_coll *c, uint32_t doc, float score)
{
    th_state *t = c->state;
    for (size_t i = 0; i < t->n_specs; i++) {
        const sc_sort_spec *s = &t->specs[i];
        sc_sort_key *v = &t->scratch[i];
        memset(v, 0, sizeof *v);
        const sc__agg_field *f = &t->rd[i];
        switch (s->kind) {
        case SC_SORT_BY_SCORE: v->d = score; break;
        case SC_SORT_BY_DOC: v->i = (int64_t)(t->base + doc); break;
        case SC_SORT_BY_NUMERIC: {
            uint32_t n = f->has_num ? sc_dv_numeric_count(&f->num, doc) : 0;
            if (n == 0) {
                v->missing = true;
                break;
            }
            SC_TRY(grow_bufs(c->ctx->a, t, n));
            n = (uint32_t)sc_dv_numeric_get(&f->num, doc, t->nbuf, n);
            sc_sort_mode m = eff_mode(s);
            if (m == SC_SORT_MODE_AVG || m == SC_SORT_MODE_SUM) {
                double sum = 0;
                for (uint32_t j = 0; j < n; j++)
                    sum +=
                        s->is_double ? sc_agg_sortable_to_double(t->nbuf[j]) : (double)t->nbuf[j];
                v->d = m == SC_SORT_MODE_AVG ? sum / (double)n : sum;
            } else {
                v->i = m == SC_SORT_MODE_MAX ? t->nbuf[n - 1] : t->nbuf[0];
            }
            break;
        }
        case SC_SORT_BY_KEYWORD: {
            uint32_t n = f->has_ss ? sc_dv_sorted_set_count(&f->ss, doc) : 0;
            if (n == 0) {
                v->missing = true;
                break;
            }
            SC_TRY(grow_bufs(c->ctx->a, t, n));
            n = (uint32_t)sc_dv_sorted_set_ords(&f->ss, doc, t->obuf, n);
            v->s = sc_dv_sorted_set_term(&f->ss, eff_mode(s) == SC_SORT_MODE_MAX ? t->obuf[n - 1]
                                                                                 : t->obuf[0]);
            break;
        }
        }
    }
    return SC_OK;
}

static int cand_cmp(const th_state *t, const sc_sort_key *xv, uint64_t xd, const sc_sort_key *yv,
                    uint64_t yd)
{
    int r = sc_sort_compare(t->specs, t->n_specs, xv, yv);
    return r ? r : (xd > yd) - (xd < yd);
}

/* Copies the scratch values into dst, keyword bytes into the arena. */
static sc_status keep_values(sc_arena *a, const th_state *t, sc_sort_key *dst)
{
    for (size_t i = 0; i < t->n_specs; i++) {
        dst[i] = t->scratch[i];
        if (t->specs[i].kind == SC_SORT_BY_KEYWORD && !dst[i].missing) {
            uint8_t *b = sc_arena_alloc(a, dst[i].s.len ? dst[i].s.len : 1);
            if (!b)
                return sc__agg_oom(a);
            memcpy(b, dst[i].s.ptr, dst[i].s.len);
            dst[i].s = sc_slice_make(b, dst[i].s.len);
        }
    }
    return SC_OK;
}

static void find_worst(const th_state *t, slot *sl)
{
    uint32_t w = 0;
    for (uint32_t i = 1; i < sl->n; i++)
        if (cand_cmp(t, sl->c[i].values, sl->c[i].gdoc, sl->c[w].values, sl->c[w].gdoc) > 0)
            w = i;
    sl->worst = w;
}

static sc_status offer(sc__agg_coll *c, uint32_t w, uint32_t doc)
{
    th_state *t = c->state;
    sc_arena *a = c->ctx->a;
    if (w >= t->slots.len) {
        SC_TRY(sc__agg_vec_ensure(a, &t->slots, (size_t)w + 1, 0));
        SC_TRY(sc__agg_vec_ensure(a, &t->counts, (size_t)w + 1, 0));
    }
    ((uint64_t *)t->counts.p)[w]++;
    slot **sp = (slot **)t->slots.p + w;
    if (!*sp) {
        slot *sl = sc_arena_calloc(a, 1, sizeof *sl);
        if (!sl || !(sl->c = sc_arena_calloc(a, t->k, sizeof *sl->c)))
            return sc__agg_oom(a);
        for (uint32_t i = 0; i < t->k; i++)
            if (!(sl->c[i].values = sc_arena_calloc(a, t->n_specs, sizeof(sc_sort_key))))
                return sc__agg_oom(a);
        *sp = sl;
    }
    slot *sl = *sp;
    float score = t->scores ? score_of(t, doc) : NAN;
    SC_TRY(read_values(c, doc, score));
    uint64_t gdoc = t->base + doc;
    cand *dst;
    if (sl->n < t->k) {
        dst = &sl->c[sl->n++];
    } else {
        cand *wc = &sl->c[sl->worst];
        if (cand_cmp(t, t->scratch, gdoc, wc->values, wc->gdoc) >= 0)
            return SC_OK;
        dst = wc;
    }
    dst->seg_i = t->seg_i;
    dst->doc = doc;
    dst->gdoc = gdoc;
    dst->score = score;
    SC_TRY(keep_values(a, t, dst->values));
    if (sl->n == t->k)
        find_worst(t, sl);
    return SC_OK;
}

static sc_status collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners, size_t n)
{
    for (size_t i = 0; i < n; i++)
        SC_TRY(offer(c, owners ? owners[i] : 0, docs[i]));
    return SC_OK;
}

static int cand_qcmp(const void *x, const void *y, void *arg)
{
    const cand *a = x, *b = y;
    return cand_cmp(arg, a->values, a->gdoc, b->values, b->gdoc);
}

static sc_status copy_bytes(sc_arena *a, sc_slice in, sc_slice *out)
{
    uint8_t *b = sc_arena_alloc(a, in.len ? in.len : 1);
    if (!b)
        return sc__agg_oom(a);
    if (in.len)
        memcpy(b, in.ptr, in.len);
    *out = sc_slice_make(b, in.len);
    return SC_OK;
}

/* top_hits: _index, _id and _source of each hit; top_metrics: its metric values. */
static sc_status fetch(sc__agg_coll *c, const cand *cd, sc_agg_hit *h)
{
    sc__agg_ctx *ctx = c->ctx;
    const sc_agg_spec *spec = c->spec;
    if (cd->seg_i >= ctx->s->n_segs)
        return SC_ECORRUPT;
    const sc_segment *seg = ctx->s->segs[cd->seg_i].seg;
    if (spec->kind == SC_AGG_TOP_METRICS) {
        h->n_metrics = (uint32_t)spec->n_metrics;
        h->metrics = sc_arena_alloc(ctx->a, (spec->n_metrics + 1) * sizeof *h->metrics);
        if (!h->metrics)
            return sc__agg_oom(ctx->a);
        for (size_t i = 0; i < spec->n_metrics; i++) {
            sc__agg_field f;
            double v;
            SC_TRY(sc__agg_field_open(c->ctx, seg, spec->metrics[i]->field, &f));
            h->metrics[i] = sc__agg_doc_doubles(&f, spec->metrics[i], cd->doc, &v, 1) ? v : NAN;
        }
        return SC_OK;
    }
    SC_TRY(copy_bytes(ctx->a, ctx->so ? ctx->so->index_name : sc_slice_make(NULL, 0), &h->index));
    sc_stored_reader r;
    sc_slice id, src;
    sc_stored_reader_init(&r, seg);
    sc_status st = sc_stored_get(&r, cd->doc, &id, &src);
    if (st == SC_OK)
        st = copy_bytes(ctx->a, id, &h->id);
    if (st == SC_OK)
        st = copy_bytes(ctx->a, spec->hit_source ? src : sc_slice_make(NULL, 0), &h->source);
    sc_stored_reader_fini(&r);
    return st;
}

static sc_status build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    th_state *t = c->state;
    sc_arena *a = c->ctx->a;
    sc_agg_result *r = sc__agg_result_new(a, c->spec, 0);
    if (!r)
        return sc__agg_oom(a);
    slot *sl = owner < t->slots.len ? ((slot **)t->slots.p)[owner] : NULL;
    r->count = owner < t->counts.len ? ((uint64_t *)t->counts.p)[owner] : 0;
    if (sl && sl->n) {
        qsort_r(sl->c, sl->n, sizeof *sl->c, cand_qcmp, t);
        r->hits = sc_arena_calloc(a, sl->n, sizeof *r->hits);
        if (!r->hits)
            return sc__agg_oom(a);
        for (uint32_t i = 0; i < sl->n; i++) {
            sc_agg_hit *h = &r->hits[i];
            h->score = sl->c[i].score;
            h->doc = sl->c[i].gdoc;
            h->values = sl->c[i].values;
            h->n_values = (uint32_t)t->n_specs;
            SC_TRY(fetch(c, &sl->c[i], h));
        }
        r->n_hits = sl->n;
        /* the worst index is stale after sorting; later owners never reuse this slot */
    }
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops ops = {
    .seg_begin = seg_begin, .collect = collect, .seg_end = seg_end, .build = build};

bool sc__agg_top_hits_scores(const sc_agg_spec *spec)
{
    if (!spec->n_hit_sort)
        return true;
    for (size_t i = 0; i < spec->n_hit_sort; i++)
        if (spec->hit_sort[i].kind == SC_SORT_BY_SCORE)
            return true;
    return false;
}

sc_status sc__agg_top_hits_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    th_state *t = sc_arena_calloc(a, 1, sizeof *t);
    if (!t)
        return sc__agg_oom(a);
    uint64_t k = (uint64_t)spec->from + spec->size;
    if (k == 0 || k > 100000)
        return SC_EINVAL;
    t->k = (uint32_t)k;
    t->n_specs = spec->n_hit_sort ? spec->n_hit_sort : 1;
    t->specs = sc_arena_alloc(a, t->n_specs * sizeof *t->specs);
    t->rd = sc_arena_calloc(a, t->n_specs, sizeof *t->rd);
    t->scratch = sc_arena_calloc(a, t->n_specs, sizeof *t->scratch);
    if (!t->specs || !t->rd || !t->scratch)
        return sc__agg_oom(a);
    memcpy(t->specs, spec->n_hit_sort ? spec->hit_sort : &default_sort,
           t->n_specs * sizeof *t->specs);
    t->scores = sc__agg_top_hits_scores(spec);
    c->ops = &ops;
    c->state = t;
    return SC_OK;
}

/* ---- reduce ---- */

typedef struct rhit {
    const sc_agg_hit *h;
    size_t input, pos;
} rhit;

static int rhit_cmp(const void *x, const void *y, void *arg)
{
    const sc_agg_spec *spec = arg;
    const rhit *a = x, *b = y;
    const sc_sort_spec *specs = spec->n_hit_sort ? spec->hit_sort : &default_sort;
    size_t n = spec->n_hit_sort ? spec->n_hit_sort : 1;
    int r = sc_sort_compare(specs, n, a->h->values, b->h->values);
    if (r)
        return r;
    /* ties: the earlier input, then the input's own order (a partial reduce's output mixes
     * shards, so its doc ids no longer order it) */
    if (a->input != b->input)
        return a->input < b->input ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

sc_status sc__agg_top_hits_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                  sc_arena *a, sc_agg_result **out)
{
    size_t nv = spec->n_hit_sort ? spec->n_hit_sort : 1;
    size_t total = 0;
    sc_agg_result *r = sc__agg_result_new(a, spec, 0);
    if (!r)
        return sc__agg_oom(a);
    for (size_t i = 0; i < n; i++) {
        r->count += in[i]->count;
        for (size_t j = 0; j < in[i]->n_hits; j++) {
            const sc_agg_hit *h = &in[i]->hits[j];
            if (h->n_values != nv ||
                h->n_metrics != (spec->kind == SC_AGG_TOP_METRICS ? spec->n_metrics : 0))
                return SC_ECORRUPT;
        }
        total += in[i]->n_hits;
    }
    rhit *all = sc_arena_alloc(a, (total ? total : 1) * sizeof *all);
    if (!all)
        return sc__agg_oom(a);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < in[i]->n_hits; j++)
            all[m++] = (rhit){&in[i]->hits[j], i, j};
    qsort_r(all, m, sizeof *all, rhit_cmp, (void *)spec);
    size_t k = (size_t)spec->from + spec->size;
    if (m > k)
        m = k;
    r->hits = sc_arena_calloc(a, m ? m : 1, sizeof *r->hits);
    if (!r->hits)
        return sc__agg_oom(a);
    for (size_t i = 0; i < m; i++)
        r->hits[i] = *all[i].h; /* shares the inputs' bytes, as other reduces share keys */
    r->n_hits = m;
    *out = r;
    return SC_OK;
}
