/* The composite aggregation (search/agg.h): every combination of its sources' values in a doc
 * (terms, histogram, date_histogram; multi-valued sources give the cartesian product) is a
 * key, encoded as bytes that sc_agg_composite_cmp orders by the sources' orders. A shard keeps
 * the `size` smallest keys after the `after` key; the reduce merges by key and keeps `size`
 * again, which is exact (a key among the global first `size` is among every shard's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "index/bkd2.h"
#include "search/agg_internal.h"

#define MAX_COMBOS 1024 /* key combinations of one doc */
#define MAX_VALUES 64   /* values of one source in one doc */

typedef struct src_state {
    sc__agg_field f;
} src_state;

typedef struct comp_state {
    sc__agg_ords ords;
    src_state *src;
    uint8_t *after; /* encoded after key, or NULL */
    size_t after_len;
    uint8_t *key; /* scratch key */
    size_t key_cap;
} comp_state;

static bool is_bytes(const sc_agg_spec *s)
{
    return s->kind == SC_AGG_TERMS && !sc_agg_vtype_numeric(s->vtype);
}

/* ---- key encoding ---- */

static size_t part_size(const sc_agg_spec *s, const sc_agg_value *v)
{
    if (v->null)
        return 1;
    return is_bytes(s) ? 1 + sc_varint_len(v->s.len) + v->s.len : 9;
}

static uint8_t *part_put(const sc_agg_spec *s, const sc_agg_value *v, uint8_t *p)
{
    *p++ = v->null ? 0 : 1;
    if (v->null)
        return p;
    if (is_bytes(s)) {
        p += sc_varint_put(p, v->s.len);
        if (v->s.len)
            memcpy(p, v->s.ptr, v->s.len);
        return p + v->s.len;
    }
    uint64_t x;
    if (s->kind == SC_AGG_HISTOGRAM)
        memcpy(&x, &v->d, 8);
    else
        x = (uint64_t)v->i;
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
    return p + 8;
}

/* Reads one part at *p (< end) into v. */
static bool part_get(const sc_agg_spec *s, const uint8_t **p, const uint8_t *end, sc_agg_value *v)
{
    memset(v, 0, sizeof *v);
    if (*p >= end || **p > 1)
        return false;
    v->null = *(*p)++ == 0;
    if (v->null)
        return true;
    if (is_bytes(s)) {
        uint64_t len;
        if (sc_varint_get(p, end, &len) != SC_OK || len > (uint64_t)(end - *p))
            return false;
        v->s = sc_slice_make(*p, len);
        *p += len;
        return true;
    }
    if (end - *p < 8)
        return false;
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x |= (uint64_t)(*p)[i] << (8 * i);
    *p += 8;
    if (s->kind == SC_AGG_HISTOGRAM)
        memcpy(&v->d, &x, 8);
    else
        v->i = (int64_t)x;
    return true;
}

bool sc_agg_composite_parse(const sc_agg_spec *spec, sc_slice key, sc_agg_value *out)
{
    const uint8_t *p = key.ptr, *end = key.ptr + key.len;
    for (size_t i = 0; i < spec->n_sources; i++)
        if (!part_get(spec->sources[i], &p, end, &out[i]))
            return false;
    return p == end;
}

static int part_cmp(const sc_agg_spec *s, const sc_agg_value *a, const sc_agg_value *b)
{
    int c;
    if (a->null || b->null)
        c = a->null == b->null ? 0 : a->null ? -1 : 1;
    else if (is_bytes(s))
        c = sc_slice_cmp(a->s, b->s);
    else if (s->kind == SC_AGG_HISTOGRAM)
        c = (a->d > b->d) - (a->d < b->d);
    else
        c = (a->i > b->i) - (a->i < b->i);
    return s->order.desc ? -c : c;
}

int sc_agg_composite_cmp(const sc_agg_spec *spec, sc_slice x, sc_slice y)
{
    const uint8_t *p = x.ptr, *pe = x.ptr + x.len, *q = y.ptr, *qe = y.ptr + y.len;
    for (size_t i = 0; i < spec->n_sources; i++) {
        sc_agg_value a, b;
        if (!part_get(spec->sources[i], &p, pe, &a) || !part_get(spec->sources[i], &q, qe, &b))
            return sc_slice_cmp(x, y);
        int c = part_cmp(spec->sources[i], &a, &b);
        if (c)
            return c;
    }
    return 0;
}

/* ---- collection ---- */

static sc_status comp_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    comp_state *cs = c->state;
    for (size_t i = 0; i < c->spec->n_sources; i++)
        SC_TRY(sc__agg_field_open(c->ctx, s->seg, c->spec->sources[i]->field, &cs->src[i].f));
    return SC_OK;
}

static sc_status comp_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

/* The geotile key of a point at zoom z, as Elasticsearch's GeoTileUtils.longEncode: x from
 * the longitude, y from the Web Mercator projection of the latitude, both clamped to the
 * 2^z tiles of the zoom (exact sin where Elasticsearch uses SloppyMath). */
int64_t sc_agg_geotile_key(uint32_t z, double lat, double lon)
{
    double tiles = ldexp(1.0, (int)z);
    double x = floor((lon + 180.0) / 360.0 * tiles);
    double ls = sin(lat * (M_PI / 180.0));
    double y = floor((0.5 - log((1.0 + ls) / (1.0 - ls)) / (4.0 * M_PI)) * tiles);
    x = x < 0 || x != x ? 0 : x >= tiles ? tiles - 1 : x;
    y = y < 0 || y != y ? 0 : y >= tiles ? tiles - 1 : y;
    return (int64_t)((uint64_t)z << 58 | (uint64_t)x << 29 | (uint64_t)y);
}

int64_t sc_agg_geohash_key(uint32_t n, int32_t lat, int32_t lon)
{
    uint32_t la = (uint32_t)lat ^ 0x80000000u, lo = (uint32_t)lon ^ 0x80000000u;
    uint64_t h = 0;
    for (uint32_t i = 0; i < 5 * n; i++) {
        uint32_t src = i & 1 ? la : lo;
        h = h << 1 | ((src >> (31 - i / 2)) & 1);
    }
    return (int64_t)(h << 4 | n);
}

void sc_agg_geohash_text(int64_t key, char *out)
{
    static const char b32[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    uint32_t n = (uint32_t)(key & 15);
    n = n > 12 ? 12 : n;
    uint64_t h = (uint64_t)key >> 4;
    for (uint32_t i = 0; i < n; i++)
        out[i] = b32[(h >> (5 * (n - 1 - i))) & 31];
    out[n] = 0;
}

/* The distinct values of source s in doc, ascending in doc-value order (n 0: none; with
 * missing_bucket one null). */
static size_t source_values(const sc_agg_spec *s, const sc__agg_field *f, uint32_t doc,
                            sc_agg_value *out)
{
    size_t n = 0;
    if (is_bytes(s) && f->has_ss) {
        uint64_t ords[MAX_VALUES];
        size_t k = sc_dv_sorted_set_ords(&f->ss, doc, ords, MAX_VALUES);
        for (size_t i = 0; i < k; i++) {
            out[n] = (sc_agg_value){.s = sc_dv_sorted_set_term(&f->ss, ords[i])};
            if (!out[n].s.ptr)
                out[n].s = sc_slice_make("", 0);
            n++;
        }
    } else if (!is_bytes(s) && f->has_num) {
        int64_t vals[MAX_VALUES];
        size_t k = sc_dv_numeric_get(&f->num, doc, vals, MAX_VALUES);
        for (size_t i = 0; i < k; i++) {
            sc_agg_value v = {0};
            if (s->kind == SC_AGG_GEOTILE_GRID) { /* tiles of several points: sorted, distinct */
                int32_t la = (int32_t)(uint32_t)((uint64_t)vals[i] >> 32);
                int32_t lo = (int32_t)(uint32_t)(uint64_t)vals[i];
                v.i =
                    sc_agg_geotile_key(s->precision, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
                size_t j = n;
                while (j && out[j - 1].i > v.i)
                    j--;
                if (j && out[j - 1].i == v.i)
                    continue;
                memmove(&out[j + 1], &out[j], (n - j) * sizeof *out);
                out[j] = v;
                n++;
                continue;
            }
            if (s->kind == SC_AGG_HISTOGRAM) {
                double d = sc_agg_value_to_double(s->vtype, vals[i]);
                if (s->scaling_factor > 0)
                    d /= s->scaling_factor;
                v.d = floor((d - s->offset) / s->interval) * s->interval + s->offset;
                if (n && out[n - 1].d == v.d)
                    continue;
            } else {
                v.i = s->kind == SC_AGG_DATE_HISTOGRAM ? sc_agg_round(&s->rounding, vals[i])
                                                       : vals[i];
                if (n && out[n - 1].i == v.i)
                    continue;
            }
            out[n++] = v;
        }
    }
    if (!n && s->has_missing) /* multi_terms: the substitute value */
        out[n++] = is_bytes(s) ? (sc_agg_value){.s = s->missing_bytes}
                               : (sc_agg_value){.i = s->missing_num};
    else if (!n && s->missing_bucket)
        out[n++] = (sc_agg_value){.null = true};
    return n;
}

/* Every combination of the sources' values: its key, kept when after the `after` key. */
static sc_status add_doc(sc__agg_coll *c, uint32_t doc, uint32_t owner)
{
    comp_state *cs = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t ns = spec->n_sources;
    sc_agg_value vals[8][MAX_VALUES];
    size_t nv[8], idx[8] = {0}, combos = 1;
    for (size_t i = 0; i < ns; i++) {
        nv[i] = source_values(spec->sources[i], &cs->src[i].f, doc, vals[i]);
        if (!nv[i])
            return SC_OK;
        combos *= nv[i];
        if (combos > MAX_COMBOS)
            return SC_OK; /* a pathological doc: skipped */
    }
    for (size_t k = 0; k < combos; k++) {
        size_t len = 0;
        for (size_t i = 0; i < ns; i++)
            len += part_size(spec->sources[i], &vals[i][idx[i]]);
        if (len > cs->key_cap) {
            cs->key = sc_arena_alloc(c->ctx->a, len * 2);
            if (!cs->key)
                return sc__agg_oom(c->ctx->a);
            cs->key_cap = len * 2;
        }
        uint8_t *p = cs->key;
        for (size_t i = 0; i < ns; i++)
            p = part_put(spec->sources[i], &vals[i][idx[i]], p);
        sc_slice key = sc_slice_make(cs->key, len);
        if (!cs->after ||
            sc_agg_composite_cmp(spec, key, sc_slice_make(cs->after, cs->after_len)) > 0) {
            uint32_t ord;
            bool added;
            SC_TRY(sc__agg_ords_bytes(c->ctx->a, &cs->ords, owner, key, &ord, &added));
            SC_TRY(sc__agg_emit(c, doc, ord));
        }
        for (size_t i = ns; i-- > 0;) { /* next combination, odometer style */
            if (++idx[i] < nv[i])
                break;
            idx[i] = 0;
        }
    }
    return SC_OK;
}

static sc_status comp_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                              size_t n)
{
    for (size_t i = 0; i < n; i++)
        SC_TRY(add_doc(c, docs[i], owners ? owners[i] : 0));
    return SC_OK;
}

static int cmp_keys(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, x, y);
}

static int cmp_order(const void *x, const void *y, void *ctx)
{
    return sc__agg_bucket_cmp(ctx, x, y);
}

/* Owner's buckets: the `size` smallest keys. */
static sc_status comp_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    comp_state *cs = c->state;
    sc_arena *a = c->ctx->a;
    size_t nb = 0;
    for (size_t i = 0; i < cs->ords.n; i++)
        nb += sc__agg_ords_owner(&cs->ords, (uint32_t)i) == owner;
    sc_agg_result *r = sc__agg_result_new(a, c->spec, nb);
    if (!r)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < cs->ords.n; i++) {
        if (sc__agg_ords_owner(&cs->ords, (uint32_t)i) != owner)
            continue;
        r->buckets[k].bkey = sc__agg_ords_bkey(&cs->ords, (uint32_t)i);
        r->buckets[k++].key = (int64_t)i; /* the ordinal while sorting */
    }
    size_t keep;
    if (c->spec->kind == SC_AGG_MULTI_TERMS) {
        /* as terms: the top shard_size by the order (counts first), the rest in sum_other */
        for (size_t i = 0; i < nb; i++) {
            uint32_t ord = (uint32_t)r->buckets[i].key;
            r->buckets[i].doc_count =
                ord < c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[ord] : 0;
            if (c->spec->order.kind == SC_AGG_ORDER_METRIC)
                SC_TRY(sc__agg_build_bucket(c, ord, &r->buckets[i]));
        }
        qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_order, (void *)c->spec);
        uint32_t shard_size =
            sc_agg_terms_shard_size(c->spec, c->ctx->so ? c->ctx->so->n_shards : 1);
        keep = nb < shard_size ? nb : shard_size;
        for (size_t i = keep; i < nb; i++)
            r->sum_other += r->buckets[i].doc_count;
        r->shard_size = shard_size;
    } else {
        qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_keys, (void *)c->spec);
        keep = nb < c->spec->size ? nb : c->spec->size;
    }
    SC_TRY(sc__agg_count_buckets(c->ctx, keep));
    for (size_t i = 0; i < keep; i++) {
        uint32_t ord = (uint32_t)r->buckets[i].key;
        r->buckets[i].key = 0;
        SC_TRY(sc__agg_build_bucket(c, ord, &r->buckets[i]));
    }
    r->n_buckets = keep;
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops comp_ops = {
    .seg_begin = comp_seg_begin,
    .collect = comp_collect,
    .seg_end = comp_seg_end,
    .build = comp_build,
};

sc_status sc__agg_composite_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    if (spec->n_sources == 0 || spec->n_sources > 8)
        return SC_EINVAL;
    comp_state *cs = sc_arena_calloc(a, 1, sizeof *cs);
    if (!cs || !(cs->src = sc_arena_calloc(a, spec->n_sources, sizeof *cs->src)))
        return sc__agg_oom(a);
    if (spec->after) {
        size_t len = 0;
        for (size_t i = 0; i < spec->n_sources; i++)
            len += part_size(spec->sources[i], &spec->after[i]);
        if (!(cs->after = sc_arena_alloc(a, len ? len : 1)))
            return sc__agg_oom(a);
        uint8_t *p = cs->after;
        for (size_t i = 0; i < spec->n_sources; i++)
            p = part_put(spec->sources[i], &spec->after[i], p);
        cs->after_len = len;
    }
    c->state = cs;
    c->ops = &comp_ops;
    return SC_OK;
}

static int cmp_refs(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, *(sc_agg_bucket *const *)x, *(sc_agg_bucket *const *)y);
}

sc_status sc__agg_composite_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                   bool final, uint64_t max_buckets, sc_arena *a,
                                   sc_agg_result **out, sc_agg_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->n_buckets;
    sc_agg_bucket **refs = sc_arena_alloc(a, (total ? total : 1) * sizeof *refs);
    sc_agg_result *r = sc__agg_result_new(a, spec, total < spec->size ? total : spec->size);
    if (!refs || !r)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < in[i]->n_buckets; j++)
            refs[k++] = &in[i]->buckets[j];
    qsort_r(refs, total, sizeof *refs, cmp_refs, (void *)spec);
    size_t nb = 0;
    for (size_t i = 0; i < total && nb < spec->size;) {
        size_t j = i;
        sc_agg_bucket *m = &r->buckets[nb++];
        m->bkey = refs[i]->bkey;
        while (j < total && sc__agg_key_cmp(spec, refs[j], refs[i]) == 0)
            m->doc_count += refs[j++]->doc_count;
        SC_TRY(sc__agg_reduce_subs(spec, refs + i, j - i, final, max_buckets, a, m, err));
        i = j;
    }
    r->n_buckets = nb;
    *out = r;
    return SC_OK;
}
