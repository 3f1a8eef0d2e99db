/* The composite aggregation's keys and reduce (agg_composite.c collects): a key is its sources'
 * parts, each a null flag and then a keyword's bytes (varint length) or a numeric key's 8
 * bytes, little-endian; sc_agg_composite_cmp orders keys by the sources' orders. The reduce
 * merges the shards' keys and keeps `size`, which is exact (a key among the global first `size`
 * is among every shard's). Also the geotile and geohash keys of a point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "search/agg_internal.h"

bool sc__comp_is_bytes(const sc_agg_spec *s)
{
    return s->kind == SC_AGG_TERMS && !sc_agg_vtype_numeric(s->vtype);
}

/* ---- key encoding ---- */

size_t sc__comp_part_size(const sc_agg_spec *s, const sc_agg_value *v)
{
    if (v->null)
        return 1;
    return sc__comp_is_bytes(s) ? 1 + sc_varint_len(v->s.len) + v->s.len : 9;
}

uint8_t *sc__comp_part_put(const sc_agg_spec *s, const sc_agg_value *v, uint8_t *p)
{
    *p++ = v->null ? 0 : 1;
    if (v->null)
        return p;
    if (sc__comp_is_bytes(s)) {
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
    if (sc__comp_is_bytes(s)) {
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
    else if (sc__comp_is_bytes(s))
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

static int cmp_refs(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, *(sc_agg_bucket *const *)x, *(sc_agg_bucket *const *)y);
}

sc_status sc__agg_composite_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                   bool final, uint64_t max_buckets, sc_arena *a,
                                   sc_agg_result **out, sc_agg_error *err)
{
    size_t total;
    sc_agg_bucket **refs = sc__agg_bucket_refs(in, n, a, &total);
    sc_agg_result *r = sc__agg_result_new(a, spec, total < spec->size ? total : spec->size);
    if (!refs || !r)
        return sc__agg_oom(a);
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
