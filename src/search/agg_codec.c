/* The binary encoding of aggregation partial results (grammar in search/agg.h): what a data
 * node sends the coordinator. Decoding validates every length, count, kind and the nesting
 * depth, and rejects trailing bytes: any input gives a result or SC_ECORRUPT. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "search/agg_internal.h"

enum {
    F_METRIC = 1,
    F_TERMS = 2,
    F_ERROR_SET = 4,
    F_RUNG = 8,
    F_SKETCH = 16, /* cardinality, percentiles, percentile_ranks, median_absolute_deviation */
    F_HITS = 32,   /* top_hits, top_metrics */
    F_HASHES = 64  /* rare_terms */
};

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    bool failed;
} wbuf;

static void put(wbuf *w, const void *src, size_t n)
{
    if (w->failed || n == 0)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->failed = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void put_v(wbuf *w, uint64_t v)
{
    uint8_t b[SC_VARINT_MAX_BYTES];
    put(w, b, sc_varint_put(b, v));
}

static void put_z(wbuf *w, int64_t v)
{
    put_v(w, sc_zigzag_encode(v));
}

static void put_f(wbuf *w, double d)
{
    uint8_t b[8];
    uint64_t x;
    memcpy(&x, &d, 8);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(x >> (8 * i));
    put(w, b, 8);
}

static bool is_metric(sc_agg_kind k)
{
    return (k >= SC_AGG_MIN && k <= SC_AGG_EXTENDED_STATS) || k == SC_AGG_WEIGHTED_AVG ||
           k == SC_AGG_GEO_BOUNDS || k == SC_AGG_GEO_CENTROID;
}

/* Kinds whose results carry the terms part (error, sum_other, n_reduced, shard_size). */
static bool terms_part(sc_agg_kind k)
{
    return sc_agg_kind_terms_like(k) || k == SC_AGG_SIGNIFICANT_TERMS;
}

static void put_s(wbuf *w, sc_slice s)
{
    put_v(w, s.len);
    put(w, s.ptr, s.len);
}

static void enc_hits(wbuf *w, const sc_agg_result *r)
{
    put_v(w, r->count);
    put_v(w, r->n_hits);
    for (size_t i = 0; i < r->n_hits; i++) {
        const sc_agg_hit *h = &r->hits[i];
        put_f(w, h->score);
        put_v(w, h->doc);
        put_v(w, h->n_values);
        for (uint32_t j = 0; j < h->n_values; j++) {
            const sc_sort_key *k = &h->values[j];
            uint8_t m = k->missing;
            put(w, &m, 1);
            put_z(w, k->i);
            put_f(w, k->d);
            put_s(w, k->s);
        }
        put_v(w, h->n_metrics);
        for (uint32_t j = 0; j < h->n_metrics; j++)
            put_f(w, h->metrics[j]);
        put_s(w, h->index);
        put_s(w, h->id);
        put_s(w, h->source);
    }
}

static void enc_node(wbuf *w, const sc_agg_result *r)
{
    uint8_t head[2] = {
        (uint8_t)r->kind,
        (uint8_t)((is_metric(r->kind) ? F_METRIC : 0) | (terms_part(r->kind) ? F_TERMS : 0) |
                  (r->error_set ? F_ERROR_SET : 0) |
                  (r->kind == SC_AGG_AUTO_DATE_HISTOGRAM ? F_RUNG : 0) |
                  (r->hll || r->td ? F_SKETCH : 0) | (sc__agg_is_top_hits(r->kind) ? F_HITS : 0) |
                  (r->kind == SC_AGG_RARE_TERMS ? F_HASHES : 0))};
    put(w, head, 2);
    if (head[1] & F_METRIC) {
        put_v(w, r->count);
        put_f(w, r->sum);
        put_f(w, r->sum_c);
        put_f(w, r->min);
        put_f(w, r->max);
        put_f(w, r->sum_sq);
        put_f(w, r->sum_sq_c);
    }
    if (head[1] & F_TERMS) {
        put_z(w, r->doc_count_error);
        put_v(w, r->sum_other);
        put_v(w, r->n_reduced);
        put_v(w, r->shard_size);
    }
    if (head[1] & F_RUNG)
        put_v(w, r->rung);
    if (head[1] & F_SKETCH) {
        sc_buf b = {0};
        /* the digest is flushed by encoding: a const result's sketch still changes form */
        if ((r->hll ? sc_hll_encode(r->hll, &b) : sc_tdigest_encode(r->td, &b)) != SC_OK)
            w->failed = true;
        put_v(w, b.len);
        put(w, b.ptr, b.len);
        sc_vec_free(&b);
    }
    if (head[1] & F_HITS)
        enc_hits(w, r);
    if (head[1] & F_HASHES) {
        put_v(w, r->n_hashes);
        for (size_t i = 0; i < r->n_hashes; i++) {
            uint8_t b[8];
            for (int k = 0; k < 8; k++)
                b[k] = (uint8_t)(r->hashes[i] >> (8 * k));
            put(w, b, 8);
        }
    }
    put_v(w, r->n_buckets);
    for (size_t i = 0; i < r->n_buckets; i++) {
        const sc_agg_bucket *b = &r->buckets[i];
        put_z(w, b->key);
        put_f(w, b->dkey);
        put_v(w, b->bkey.len);
        put(w, b->bkey.ptr, b->bkey.len);
        put_v(w, b->doc_count);
        put_z(w, b->doc_count_error);
        put_v(w, b->n_subs);
        for (uint32_t j = 0; j < b->n_subs; j++)
            enc_node(w, b->subs[j]);
    }
}

sc_status sc_agg_encode(const sc_agg_result *r, uint8_t **out, size_t *len)
{
    wbuf w = {0};
    put(&w, "SCAG", 4);
    uint8_t v = SC_AGG_ENCODING_VERSION;
    put(&w, &v, 1);
    enc_node(&w, r);
    if (w.failed) {
        free(w.p);
        return SC_ENOMEM;
    }
    *out = w.p;
    *len = w.len;
    return SC_OK;
}

/* ---- decoding ---- */

typedef struct rbuf {
    const uint8_t *p, *end;
    sc_arena *a;
} rbuf;

static sc_status get_v(rbuf *r, uint64_t *v)
{
    return sc_varint_get(&r->p, r->end, v) == SC_OK ? SC_OK : SC_ECORRUPT;
}

static sc_status get_z(rbuf *r, int64_t *v)
{
    uint64_t x;
    SC_TRY(get_v(r, &x));
    *v = sc_zigzag_decode(x);
    return SC_OK;
}

static sc_status get_f(rbuf *r, double *d)
{
    if (r->end - r->p < 8)
        return SC_ECORRUPT;
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    memcpy(d, &x, 8);
    return SC_OK;
}

static sc_status dec_node(rbuf *r, int depth, sc_agg_result **out);

static sc_status get_s(rbuf *r, sc_slice *out)
{
    uint64_t len;
    SC_TRY(get_v(r, &len));
    if (len > (uint64_t)(r->end - r->p))
        return SC_ECORRUPT;
    uint8_t *b = sc_arena_alloc(r->a, len ? len : 1);
    if (!b)
        return sc__agg_oom(r->a);
    if (len)
        memcpy(b, r->p, len);
    r->p += len;
    *out = sc_slice_make(b, len);
    return SC_OK;
}

static sc_status dec_hits(rbuf *r, sc_agg_result *x)
{
    uint64_t nh;
    SC_TRY(get_v(r, &x->count));
    SC_TRY(get_v(r, &nh));
    /* every hit takes at least 14 bytes */
    if (nh > (uint64_t)(r->end - r->p) / 14)
        return SC_ECORRUPT;
    x->hits = sc_arena_calloc(r->a, nh ? nh : 1, sizeof *x->hits);
    if (!x->hits)
        return sc__agg_oom(r->a);
    x->n_hits = nh;
    for (uint64_t i = 0; i < nh; i++) {
        sc_agg_hit *h = &x->hits[i];
        double score;
        uint64_t nv, nm;
        SC_TRY(get_f(r, &score));
        h->score = (float)score;
        SC_TRY(get_v(r, &h->doc));
        SC_TRY(get_v(r, &nv));
        /* every value takes at least 11 bytes */
        if (nv > (uint64_t)(r->end - r->p) / 11)
            return SC_ECORRUPT;
        h->n_values = (uint32_t)nv;
        h->values = sc_arena_calloc(r->a, nv ? nv : 1, sizeof *h->values);
        if (!h->values)
            return sc__agg_oom(r->a);
        for (uint64_t j = 0; j < nv; j++) {
            sc_sort_key *k = &h->values[j];
            if (r->p >= r->end || *r->p > 1)
                return SC_ECORRUPT;
            k->missing = *r->p++;
            SC_TRY(get_z(r, &k->i));
            SC_TRY(get_f(r, &k->d));
            SC_TRY(get_s(r, &k->s));
        }
        SC_TRY(get_v(r, &nm));
        if (nm > (uint64_t)(r->end - r->p) / 8)
            return SC_ECORRUPT;
        h->n_metrics = (uint32_t)nm;
        h->metrics = sc_arena_alloc(r->a, (nm ? nm : 1) * sizeof *h->metrics);
        if (!h->metrics)
            return sc__agg_oom(r->a);
        for (uint64_t j = 0; j < nm; j++)
            SC_TRY(get_f(r, &h->metrics[j]));
        SC_TRY(get_s(r, &h->index));
        SC_TRY(get_s(r, &h->id));
        SC_TRY(get_s(r, &h->source));
    }
    return SC_OK;
}

static sc_status dec_bucket(rbuf *r, int depth, sc_agg_bucket *b)
{
    uint64_t len, n_subs;
    SC_TRY(get_z(r, &b->key));
    SC_TRY(get_f(r, &b->dkey));
    SC_TRY(get_v(r, &len));
    if (len > (uint64_t)(r->end - r->p))
        return SC_ECORRUPT;
    uint8_t *k = sc_arena_alloc(r->a, len ? len : 1);
    if (!k)
        return sc__agg_oom(r->a);
    if (len)
        memcpy(k, r->p, len);
    r->p += len;
    b->bkey = sc_slice_make(k, len);
    SC_TRY(get_v(r, &b->doc_count));
    SC_TRY(get_z(r, &b->doc_count_error));
    SC_TRY(get_v(r, &n_subs));
    /* every sub-result takes at least 3 bytes */
    if (n_subs > (uint64_t)(r->end - r->p) / 3)
        return SC_ECORRUPT;
    b->n_subs = (uint32_t)n_subs;
    b->subs = sc_arena_calloc(r->a, n_subs ? n_subs : 1, sizeof *b->subs);
    if (!b->subs)
        return sc__agg_oom(r->a);
    for (uint64_t j = 0; j < n_subs; j++)
        SC_TRY(dec_node(r, depth + 1, &b->subs[j]));
    return SC_OK;
}

static sc_status dec_node(rbuf *r, int depth, sc_agg_result **out)
{
    if (depth > SC_AGG_MAX_DEPTH || r->end - r->p < 2)
        return SC_ECORRUPT;
    uint8_t kind = r->p[0], flags = r->p[1];
    r->p += 2;
    if (kind >= SC_AGG_KIND_COUNT_ || kind == SC_AGG_GEOTILE_GRID || (flags & ~127u) ||
        !!(flags & F_HASHES) != (kind == SC_AGG_RARE_TERMS) ||
        !!(flags & F_HITS) != sc__agg_is_top_hits((sc_agg_kind)kind) ||
        !!(flags & F_RUNG) != (kind == SC_AGG_AUTO_DATE_HISTOGRAM) ||
        ((flags & F_SKETCH) && !sc__agg_is_sketch((sc_agg_kind)kind)) ||
        !!(flags & F_METRIC) != is_metric((sc_agg_kind)kind) ||
        !!(flags & F_TERMS) != terms_part((sc_agg_kind)kind))
        return SC_ECORRUPT;
    sc_agg_result *x = sc_arena_calloc(r->a, 1, sizeof *x);
    if (!x)
        return sc__agg_oom(r->a);
    x->kind = (sc_agg_kind)kind;
    x->min = INFINITY; /* as sc__agg_result_new: no value yet */
    x->max = -INFINITY;
    x->error_set = flags & F_ERROR_SET;
    if (flags & F_METRIC) {
        SC_TRY(get_v(r, &x->count));
        SC_TRY(get_f(r, &x->sum));
        SC_TRY(get_f(r, &x->sum_c));
        SC_TRY(get_f(r, &x->min));
        SC_TRY(get_f(r, &x->max));
        SC_TRY(get_f(r, &x->sum_sq));
        SC_TRY(get_f(r, &x->sum_sq_c));
    } else {
        x->n_reduced = 1;
    }
    if (flags & F_TERMS) {
        uint64_t nr, ss;
        SC_TRY(get_z(r, &x->doc_count_error));
        SC_TRY(get_v(r, &x->sum_other));
        SC_TRY(get_v(r, &nr));
        SC_TRY(get_v(r, &ss));
        if (nr > UINT32_MAX || ss > UINT32_MAX)
            return SC_ECORRUPT;
        x->n_reduced = (uint32_t)nr;
        x->shard_size = (uint32_t)ss;
    }
    if (flags & F_METRIC)
        x->n_reduced = 1;
    if (flags & F_RUNG) {
        uint64_t rung;
        SC_TRY(get_v(r, &rung));
        if (rung >= SC_AGG_AUTO_LADDER)
            return SC_ECORRUPT;
        x->rung = (uint32_t)rung;
    }
    if (flags & F_SKETCH) {
        uint64_t slen;
        SC_TRY(get_v(r, &slen));
        if (slen > (uint64_t)(r->end - r->p))
            return SC_ECORRUPT;
        sc_slice sk = sc_slice_make(r->p, (size_t)slen);
        r->p += slen;
        if (kind == SC_AGG_CARDINALITY)
            SC_TRY(sc_hll_decode(sk, NULL, r->a, &x->hll));
        else
            SC_TRY(sc_tdigest_decode(sk, NULL, r->a, &x->td));
    }
    if (flags & F_HITS)
        SC_TRY(dec_hits(r, x));
    if (flags & F_HASHES) {
        uint64_t nh;
        SC_TRY(get_v(r, &nh));
        if (nh > (uint64_t)(r->end - r->p) / 8)
            return SC_ECORRUPT;
        x->hashes = sc_arena_alloc(r->a, (nh ? nh : 1) * sizeof *x->hashes);
        if (!x->hashes)
            return sc__agg_oom(r->a);
        for (uint64_t i = 0; i < nh; i++) {
            uint64_t h = 0;
            for (int k = 0; k < 8; k++)
                h |= (uint64_t)r->p[k] << (8 * k);
            r->p += 8;
            if (i && h <= x->hashes[i - 1])
                return SC_ECORRUPT; /* ascending, distinct */
            x->hashes[i] = h;
        }
        x->n_hashes = nh;
    }
    uint64_t nb;
    SC_TRY(get_v(r, &nb));
    /* every bucket takes at least 13 bytes */
    if (nb > (uint64_t)(r->end - r->p) / 13)
        return SC_ECORRUPT;
    x->n_buckets = nb;
    x->buckets = sc_arena_calloc(r->a, nb ? nb : 1, sizeof *x->buckets);
    if (!x->buckets)
        return sc__agg_oom(r->a);
    for (uint64_t i = 0; i < nb; i++)
        SC_TRY(dec_bucket(r, depth, &x->buckets[i]));
    *out = x;
    return SC_OK;
}

sc_status sc_agg_decode(const uint8_t *p, size_t len, sc_arena *a, sc_agg_result **out)
{
    if (len < 5 || memcmp(p, "SCAG", 4) != 0 || p[4] != SC_AGG_ENCODING_VERSION)
        return SC_ECORRUPT;
    rbuf r = {p + 5, p + len, a};
    SC_TRY(dec_node(&r, 0, out));
    return r.p == r.end ? SC_OK : SC_ECORRUPT;
}
