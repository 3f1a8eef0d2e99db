/* The histogram and date_histogram collectors (agg_internal.h). Bucket keys are computed for
 * a window of values in one loop (histogram: floor((v - offset) / interval) as an int64
 * index; date_histogram: the rounded UTC start), then (owner, key) maps to a bucket ordinal,
 * with the previous lookup cached (neighbouring docs usually share a bucket). hard_bounds
 * drop values outside them; a doc counts once per bucket. Empty buckets are made at the
 * final reduce (agg_histo_reduce.c). A top-level numeric histogram whose subs are plain
 * metrics on single-valued fields updates their per-bucket arrays directly (histo_fused), as
 * does a top-level date_histogram of a fixed-length rounding in a zone without transitions. */
#include <math.h>
#include <string.h>

#include "search/agg_internal.h"

typedef struct histo_state {
    sc__agg_ords ords;
    sc__agg_field f;
    int64_t *ibuf;
    int64_t *keys;
    double *idx;
    bool *ok;
    /* recent lookups, direct-mapped by key and owner */
    struct {
        int64_t key;
        uint32_t owner, ord; /* ord + 1, 0 = empty */
    } cache[256];
    uint32_t *gstart, *glist; /* ordinals grouped by owner (build) */
    uint32_t n_owners;
    /* the top level (owner 0): ordinal + 1 of key dense_base + i, 0 = not yet; a plain load
     * instead of the hashed cache and its compares per doc */
    uint32_t *dense;
    int64_t dense_base;
    bool dense_set;
    /* a fused date_histogram (see histo_fused): its dense table and keys[] hold the bucket
     * index q, the bucket's key is q x dq_unit - dq_shift; 0 for a histogram (key = index) */
    int64_t dq_unit, dq_shift;
    /* the fused date_histogram's last bucket: values in [d_lo, d_hi) have ordinal d_ord
     * (sorted dates mostly stay in it; d_lo > d_hi: none yet) */
    int64_t d_lo, d_hi;
    uint32_t d_ord;
    /* the fused path (see histo_fused): bucket ordinals and docs of a window, and the pairs
     * this segment gave the metric subs (their lane offset) */
    uint32_t *bords, *fdocs;
    uint64_t fused_n;
    /* the fused path's doc counts, four per ordinal (doc i of a window in i % 4), folded into
     * doc_counts at seg_end: one counter per bucket made each doc of a run in one bucket wait
     * for the previous doc's increment of the same cell */
    sc__agg_vec lcounts;
} histo_state;

#define DENSE 4096

static sc_status histo_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    histo_state *h = c->state;
    h->fused_n = 0;
    return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &h->f);
}

static sc_status histo_seg_end(sc__agg_coll *c)
{
    histo_state *h = c->state;
    uint64_t *lc = h->lcounts.p;
    size_t n = h->lcounts.len / 4;
    if (n && n > c->doc_counts.len)
        SC_TRY(sc__agg_counts_ensure(c, (uint32_t)(n - 1)));
    uint64_t *counts = c->doc_counts.p;
    for (size_t o = 0; o < n; o++) {
        counts[o] += lc[4 * o] + lc[4 * o + 1] + lc[4 * o + 2] + lc[4 * o + 3];
        lc[4 * o] = lc[4 * o + 1] = lc[4 * o + 2] = lc[4 * o + 3] = 0;
    }
    return SC_OK;
}

/* The key of value v (a double for histograms, the raw doc value for dates); false when
 * hard_bounds exclude it. */
static inline bool key_of(const sc_agg_spec *spec, int64_t raw, double v, int64_t *key)
{
    if (spec->kind == SC_AGG_DATE_HISTOGRAM) {
        int64_t k = sc_agg_round(&spec->rounding, raw);
        *key = k;
        return !spec->has_hard_bounds ||
               ((double)k >= spec->hard_min && (double)k <= spec->hard_max);
    }
    double idx = floor((v - spec->offset) / spec->interval);
    if (!(idx > -9.2e18 && idx < 9.2e18))
        return false; /* NaN or beyond an int64 index */
    *key = (int64_t)idx;
    double kv = idx * spec->interval + spec->offset;
    return !spec->has_hard_bounds || (kv >= spec->hard_min && kv <= spec->hard_max);
}

static sc_status add(sc__agg_coll *c, uint32_t doc, uint32_t owner, int64_t key);
static sc_status ord_cached(sc__agg_coll *c, uint32_t owner, int64_t key, uint32_t *ord);

/* The top level's (owner 0) bucket ordinal of key: through the dense table inside its window,
 * the hashed cache outside it. */
static inline sc_status ord_top(sc__agg_coll *c, int64_t key, uint32_t *ord)
{
    histo_state *h = c->state;
    if (!h->dense_set) {
        h->dense = sc_arena_calloc(c->ctx->a, DENSE, sizeof *h->dense);
        if (!h->dense)
            return sc__agg_oom(c->ctx->a);
        h->dense_base = key > INT64_MIN + DENSE / 4 ? key - DENSE / 4 : INT64_MIN;
        h->dense_set = true;
    }
    uint64_t d = (uint64_t)key - (uint64_t)h->dense_base;
    int64_t rk = h->dq_unit ? key * h->dq_unit - h->dq_shift : key;
    if (d >= DENSE)
        return ord_cached(c, 0, rk, ord);
    uint32_t o = h->dense[d];
    if (!o) {
        bool added;
        SC_TRY(sc__agg_ords_long(c->ctx->a, &h->ords, 0, rk, &o, &added));
        h->dense[d] = ++o;
    }
    *ord = o - 1;
    return SC_OK;
}

/* The top level's keys[0..k) of docs[0..k) (see ord_top). */
static sc_status add_top(sc__agg_coll *c, const uint32_t *docs, const int64_t *keys, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        uint32_t o;
        SC_TRY(ord_top(c, keys[i], &o));
        SC_TRY(sc__agg_emit(c, docs[i], o));
    }
    return SC_OK;
}

/* The bucket ordinal of (owner, key) through the direct-mapped cache of recent lookups. */
static sc_status ord_cached(sc__agg_coll *c, uint32_t owner, int64_t key, uint32_t *ord)
{
    histo_state *h = c->state;
    size_t slot = ((uint64_t)key * 0x9e3779b97f4a7c15u + owner) >> 56;
    if (h->cache[slot].ord && h->cache[slot].key == key && h->cache[slot].owner == owner) {
        *ord = h->cache[slot].ord - 1;
        return SC_OK;
    }
    bool added;
    SC_TRY(sc__agg_ords_long(c->ctx->a, &h->ords, owner, key, ord, &added));
    h->cache[slot].key = key;
    h->cache[slot].owner = owner;
    h->cache[slot].ord = *ord + 1;
    return SC_OK;
}

static sc_status add(sc__agg_coll *c, uint32_t doc, uint32_t owner, int64_t key)
{
    uint32_t ord;
    SC_TRY(ord_cached(c, owner, key, &ord));
    return sc__agg_emit(c, doc, ord);
}

/* A date rounding that is plain arithmetic: a fixed length (fixed intervals, minutes, hours,
 * days) in a zone without transitions. Its length, or 0. */
int64_t sc__agg_plain_unit_ms(const sc_agg_rounding *r)
{
    if (r->tz.n_trans)
        return 0;
    switch (r->unit) {
    case SC_AGG_CAL_NONE: return r->fixed_ms > 0 ? r->fixed_ms : 0;
    case SC_AGG_CAL_MINUTE: return 60000;
    case SC_AGG_CAL_HOUR: return 3600000;
    case SC_AGG_CAL_DAY: return 86400000;
    default: return 0;
    }
}

/* Bucket starts of k date values for a plain rounding (see sc__agg_plain_unit_ms), in one loop. */
static void round_plain(const sc_agg_rounding *r, int64_t unit, const int64_t *v, size_t k,
                        int64_t *out)
{
    const int64_t lim = INT64_C(1) << 60;
    int64_t shift = r->tz.base_offset_ms - r->offset_ms;
    for (size_t i = 0; i < k; i++) {
        int64_t x = v[i] > lim ? lim : v[i] < -lim ? -lim : v[i];
        x += shift;
        int64_t q = x / unit;
        q -= (x % unit != 0) & (x < 0); /* floor */
        out[i] = q * unit - shift;
    }
}

/* The fused path: a top-level numeric histogram, or a date_histogram whose rounding is plain
 * arithmetic (sc__agg_plain_unit_ms), whose subs are all metrics on fields with one value per doc
 * in this segment (Rally's distance_amount_agg: a histogram of trip_distance with a stats of
 * total_amount; date_histogram_fixed_interval_with_metrics: 10 days, three stats). A window's
 * bucket ordinals go straight to the metrics' per-bucket arrays, no (doc, ordinal) pair queued per
 * doc; the same values in the same order and lanes as the pairs would give them, so the sums are
 * bit for bit those of the general path. */
static bool fusable(const sc__agg_coll *c)
{
    const histo_state *h = c->state;
    const sc_agg_spec *spec = c->spec;
    if (!c->n_subs || spec->has_hard_bounds || !h->f.has_num || !sc_dv_numeric_is_single(&h->f.num))
        return false;
    if (spec->kind == SC_AGG_DATE_HISTOGRAM ? !sc__agg_plain_unit_ms(&spec->rounding)
                                            : spec->vtype == SC_AGG_V_DOUBLE)
        return false;
    for (size_t i = 0; i < c->n_subs; i++)
        if (!sc__agg_metric_fusable(c->subs[i]))
            return false;
    return true;
}

/* Bucket keys by integer division. floor((v / factor - offset) / interval) of a raw value v
 * (factor 1 without scaling) is floor(v / d) with d = factor x interval when the offset is 0,
 * factor and interval are whole numbers and d <= 2^31, for |v| < 2^40: the true quotient is a
 * fraction with denominator d, never within the two roundings' relative error (< 2^-51) below
 * the next integer, and an exact integer stays exact. Rally's trip_distance histogram (factor
 * 100, interval 1) is floor(v / 100) then, without two double divisions per value. d, or 0. */
static int64_t int_divisor(const sc_agg_spec *spec)
{
    double f = spec->scaling_factor > 0 ? spec->scaling_factor : 1, iv = spec->interval;
    if (spec->offset != 0 || !(f >= 1 && iv >= 1) || f != floor(f) || iv != floor(iv) ||
        f * iv > 2147483648.0)
        return 0;
    return (int64_t)(f * iv);
}

/* Whether every v[0..k) is within +-2^40 (int_divisor's exact range). */
static bool small(const int64_t *v, size_t k)
{
    const int64_t lim = INT64_C(1) << 40;
    bool ok = true;
    for (size_t i = 0; i < k; i++)
        ok &= v[i] > -lim && v[i] < lim;
    return ok;
}

/* out[i] = floor(v[i] / d) for |v[i]| < 2^40: a multiply by 1 / d (off by at most one from the
 * quotient), corrected with exact integer products. */
static void exact_floor_div(const int64_t *v, size_t k, int64_t d, int64_t *out)
{
    double r = 1.0 / (double)d;
    for (size_t i = 0; i < k; i++) {
        int64_t q = (int64_t)((double)v[i] * r);
        q -= q * d > v[i];
        q += (q + 1) * d <= v[i];
        out[i] = q;
    }
}

/* Whether every v[0..k) is in [0, 2^31) (exact_floor_div31's range). */
static bool small31(const int64_t *v, size_t k)
{
    bool ok = true;
    for (size_t i = 0; i < k; i++)
        ok &= (uint64_t)v[i] < (UINT64_C(1) << 31);
    return ok;
}

/* exact_floor_div for v[i] in [0, 2^31) (d <= 2^31, see int_divisor) as one 64-bit multiply
 * and shift (Granlund and Montgomery's round-up method): with l = ceil(log2 d), s = 31 + l and
 * m = ceil(2^s / d) < 2^32, floor(v / d) = (v x m) >> s exactly for every v < 2^31, since
 * m x d - 2^s < d <= 2^l; v x m < 2^63. The earlier double-and-correct loop of this range
 * took 43 % of the fused collector's samples (Rally's distance_amount_agg). */
static void exact_floor_div31(const int64_t *v, size_t k, int64_t d, int64_t *out)
{
    unsigned l = 0;
    while ((INT64_C(1) << l) < d)
        l++;
    unsigned sh = 31 + l;
    uint64_t m = ((UINT64_C(1) << sh) + (uint64_t)d - 1) / (uint64_t)d;
    for (size_t i = 0; i < k; i++)
        out[i] = (int64_t)(((uint64_t)v[i] * m) >> sh);
}

/* The top level's ordinals of keys[0..k) into bords and their largest into *mx, when every key
 * is in the dense table already (false otherwise: then ord_top adds the new ones). Branch-free,
 * with the table and arrays in locals (ord_top reloads them through h after every store). */
static bool dense_ords(histo_state *h, size_t k, uint32_t *mx)
{
    if (!h->dense_set)
        return false;
    const int64_t *keys = h->keys;
    const uint32_t *dense = h->dense;
    uint32_t *bo = h->bords;
    uint64_t base = (uint64_t)h->dense_base;
    uint32_t hi = 0, miss = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t d = (uint64_t)keys[i] - base;
        uint32_t o = dense[d & (DENSE - 1)] & (0u - (uint32_t)(d < DENSE));
        miss |= o == 0;
        o -= 1;
        bo[i] = o;
        hi = o > hi ? o : hi;
    }
    *mx = hi;
    return !miss;
}

/* Bucket indexes q of k date values for a plain rounding of length unit (sc__agg_plain_unit_ms):
 * the bucket of v starts at q x unit - shift, as round_plain computes it. Values within
 * +-2^52 of the shift take a multiply by 1 / unit (within one of the quotient, corrected with
 * exact integer products), the rest the division. */
void sc__agg_plain_index(const sc_agg_rounding *r, int64_t unit, const int64_t *v, size_t k,
                         int64_t *out)
{
    const int64_t lim = INT64_C(1) << 60, near = INT64_C(1) << 52;
    int64_t shift = r->tz.base_offset_ms - r->offset_ms;
    double inv = 1.0 / (double)unit;
    for (size_t i = 0; i < k; i++) {
        int64_t x = v[i] > lim ? lim : v[i] < -lim ? -lim : v[i];
        x += shift;
        int64_t q;
        if (x > -near && x < near) {
            q = (int64_t)((double)x * inv);
            q -= q * unit > x;
            q += (q + 1) * unit <= x;
        } else {
            q = x / unit;
            q -= (x % unit != 0) & (x < 0); /* floor */
        }
        out[i] = q;
    }
}

/* The fused path's counts and metrics of docs wd[0..m) in buckets h->bords[0..m) (largest
 * mx). */
static sc_status fused_add(sc__agg_coll *c, const uint32_t *wd, size_t m, uint32_t mx)
{
    histo_state *h = c->state;
    SC_TRY(sc__agg_vec_ensure(c->ctx->a, &h->lcounts, 4 * ((size_t)mx + 1), 0));
    uint64_t *lc = h->lcounts.p;
    const uint32_t *bo = h->bords;
    uint32_t diff = 0;
    for (size_t i = 0; i < m; i++) /* vectorized: one bucket for the whole window? */
        diff |= bo[i] ^ bo[0];
    if (m && !diff)
        lc[4 * (size_t)bo[0]] += m; /* the lanes are only added up (histo_seg_end) */
    else
        for (size_t i = 0; i < m; i++)
            lc[4 * (size_t)bo[i] + (i & 3)]++;
    SC_TRY(sc__agg_metrics_add_owned(c->subs, c->n_subs, wd, h->bords, m, mx, h->fused_n));
    h->fused_n += m;
    return SC_OK;
}

/* The fused date_histogram's ordinals of the window's k values (h->ibuf) into h->bords, the
 * largest into *mx: a value in the last bucket's [d_lo, d_hi) takes its ordinal (q x unit -
 * shift <= v < that + unit is exactly the values whose index is q, sc__agg_plain_index's
 * clamp included), any other its index and ord_top. */
static sc_status date_ords(sc__agg_coll *c, int64_t unit, size_t k, uint32_t *mx)
{
    histo_state *h = c->state;
    uint32_t hi = 0;
    int64_t lo_v = INT64_MAX, hi_v = INT64_MIN;
    for (size_t i = 0; i < k; i++) { /* vectorized: the window inside the last bucket? */
        lo_v = h->ibuf[i] < lo_v ? h->ibuf[i] : lo_v;
        hi_v = h->ibuf[i] > hi_v ? h->ibuf[i] : hi_v;
    }
    if (k && lo_v >= h->d_lo && hi_v < h->d_hi) { /* sorted dates: most windows */
        for (size_t i = 0; i < k; i++)
            h->bords[i] = h->d_ord;
        *mx = h->d_ord;
        return SC_OK;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t v = h->ibuf[i];
        if (v < h->d_lo || v >= h->d_hi) {
            int64_t q;
            sc__agg_plain_index(&c->spec->rounding, unit, &v, 1, &q);
            SC_TRY(ord_top(c, q, &h->d_ord));
            h->d_lo = q * unit - h->dq_shift;
            h->d_hi = h->d_lo + unit;
        }
        h->bords[i] = h->d_ord;
        hi = h->d_ord > hi ? h->d_ord : hi;
    }
    *mx = hi;
    return SC_OK;
}

static sc_status histo_fused(sc__agg_coll *c, const uint32_t *docs, size_t n)
{
    histo_state *h = c->state;
    const sc_agg_spec *spec = c->spec;
    double inv = spec->interval, o = spec->offset;
    bool date = spec->kind == SC_AGG_DATE_HISTOGRAM;
    int64_t div = date ? 0 : int_divisor(spec);
    int64_t unit = date ? sc__agg_plain_unit_ms(&spec->rounding) : 0;
    if (date) {
        h->dq_unit = unit;
        h->dq_shift = spec->rounding.tz.base_offset_ms - spec->rounding.offset_ms;
    }
    for (size_t off = 0; off < n; off += SC__AGG_PAIRS) {
        size_t k = n - off < SC__AGG_PAIRS ? n - off : SC__AGG_PAIRS;
        const uint32_t *wd = docs + off;
        sc_dv_numeric_get_single_batch(&h->f.num, wd, k, h->ibuf);
        /* the keys as histo_collect computes them */
        bool all = true;
        if (date) {
            uint32_t mx = 0;
            SC_TRY(date_ords(c, unit, k, &mx));
            SC_TRY(fused_add(c, wd, k, mx));
            continue;
        }
        if (div && small31(h->ibuf, k)) {
            exact_floor_div31(h->ibuf, k, div, h->keys);
        } else if (div && small(h->ibuf, k)) {
            exact_floor_div(h->ibuf, k, div, h->keys);
        } else if (spec->scaling_factor <= 0) {
            for (size_t i = 0; i < k; i++)
                h->keys[i] = (int64_t)floor(((double)h->ibuf[i] - o) / inv);
        } else {
            double scale = spec->scaling_factor;
            bool in_range = true;
            for (size_t i = 0; i < k; i++) {
                h->idx[i] = floor(((double)h->ibuf[i] / scale - o) / inv);
                in_range &= h->idx[i] > -9.2e18 && h->idx[i] < 9.2e18;
            }
            if (in_range) {
                for (size_t i = 0; i < k; i++)
                    h->keys[i] = (int64_t)h->idx[i];
            } else {
                for (size_t i = 0; i < k; i++) {
                    h->ok[i] = key_of(spec, h->ibuf[i],
                                      sc_agg_value_to_double(spec->vtype, h->ibuf[i]) / scale,
                                      &h->keys[i]);
                    all &= h->ok[i];
                }
            }
        }
        size_t m = 0;
        uint32_t mx = 0;
        if (all) {
            if (!dense_ords(h, k, &mx)) {
                mx = 0;
                for (size_t i = 0; i < k; i++) {
                    SC_TRY(ord_top(c, h->keys[i], &h->bords[i]));
                    mx = h->bords[i] > mx ? h->bords[i] : mx;
                }
            }
            m = k;
        } else {
            for (size_t i = 0; i < k; i++) {
                if (!h->ok[i])
                    continue;
                SC_TRY(ord_top(c, h->keys[i], &h->bords[m]));
                mx = h->bords[m] > mx ? h->bords[m] : mx;
                h->fdocs[m++] = wd[i];
            }
            wd = h->fdocs;
        }
        if (m)
            SC_TRY(fused_add(c, wd, m, mx));
    }
    return SC_OK;
}

static sc_status histo_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                               size_t n)
{
    if (!owners && fusable(c))
        return histo_fused(c, docs, n);
    histo_state *h = c->state;
    const sc_agg_spec *spec = c->spec;
    bool date = spec->kind == SC_AGG_DATE_HISTOGRAM;
    if (h->f.has_num && sc_dv_numeric_is_single(&h->f.num)) {
        for (size_t off = 0; off < n; off += SC__AGG_PAIRS) {
            size_t k = n - off < SC__AGG_PAIRS ? n - off : SC__AGG_PAIRS;
            sc_dv_numeric_get_single_batch(&h->f.num, docs + off, k, h->ibuf);
            if (!date && spec->vtype != SC_AGG_V_DOUBLE && !spec->has_hard_bounds &&
                spec->scaling_factor <= 0) {
                /* integer values: the bucket index in one vectorizable loop */
                double inv = spec->interval, o = spec->offset;
                for (size_t i = 0; i < k; i++)
                    h->keys[i] = (int64_t)floor(((double)h->ibuf[i] - o) / inv);
                if (!owners) {
                    SC_TRY(add_top(c, docs + off, h->keys, k));
                    continue;
                }
                for (size_t i = 0; i < k; i++)
                    SC_TRY(add(c, docs[off + i], owners[off + i], h->keys[i]));
                continue;
            }
            if (!date && spec->vtype != SC_AGG_V_DOUBLE && !spec->has_hard_bounds) {
                /* scaled_float (Rally's trip_distance): value / factor, then the index, as
                 * key_of computes them, in one loop; an index beyond an int64 (a tiny
                 * interval) sends the window to the per-value path */
                double scale = spec->scaling_factor, inv = spec->interval, o = spec->offset;
                double *idx = h->idx;
                bool in_range = true;
                for (size_t i = 0; i < k; i++) {
                    idx[i] = floor(((double)h->ibuf[i] / scale - o) / inv);
                    in_range &= idx[i] > -9.2e18 && idx[i] < 9.2e18;
                }
                if (in_range) {
                    for (size_t i = 0; i < k; i++)
                        h->keys[i] = (int64_t)idx[i];
                    if (!owners) {
                        SC_TRY(add_top(c, docs + off, h->keys, k));
                        continue;
                    }
                    for (size_t i = 0; i < k; i++)
                        SC_TRY(add(c, docs[off + i], owners[off + i], h->keys[i]));
                    continue;
                }
            }
            int64_t unit =
                date && !spec->has_hard_bounds ? sc__agg_plain_unit_ms(&spec->rounding) : 0;
            if (unit) {
                round_plain(&spec->rounding, unit, h->ibuf, k, h->keys);
                for (size_t i = 0; i < k; i++)
                    SC_TRY(add(c, docs[off + i], owners ? owners[off + i] : 0, h->keys[i]));
                continue;
            }
            /* scaled_float as the per-doc path: value / factor (Rally's trip_distance) */
            double scale = spec->scaling_factor > 0 ? spec->scaling_factor : 1;
            for (size_t i = 0; i < k; i++)
                h->ok[i] =
                    key_of(spec, h->ibuf[i],
                           sc_agg_value_to_double(spec->vtype, h->ibuf[i]) / scale, &h->keys[i]);
            for (size_t i = 0; i < k; i++)
                if (h->ok[i])
                    SC_TRY(add(c, docs[off + i], owners ? owners[off + i] : 0, h->keys[i]));
        }
        return SC_OK;
    }
    int64_t raw[256];
    double vals[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        if (h->f.has_num) {
            k = sc_dv_numeric_get(&h->f.num, docs[i], raw, 256);
            for (size_t j = 0; j < k; j++) {
                vals[j] = sc_agg_value_to_double(spec->vtype, raw[j]);
                if (spec->scaling_factor > 0)
                    vals[j] /= spec->scaling_factor;
            }
        }
        if (k == 0 && spec->has_missing) {
            raw[0] = spec->missing_num;
            vals[0] = spec->missing_double;
            k = 1;
        }
        int64_t prev = 0;
        for (size_t j = 0; j < k; j++) {
            int64_t key;
            if (!key_of(spec, raw[j], vals[j], &key) || (j && key == prev))
                continue; /* values are ascending, so are keys: a doc counts once per bucket */
            prev = key;
            SC_TRY(add(c, docs[i], owners ? owners[i] : 0, key));
        }
    }
    return SC_OK;
}

static sc_status histo_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    histo_state *h = c->state;
    sc_arena *a = c->ctx->a;
    if (!h->gstart || owner >= h->n_owners) {
        uint32_t n_owners = owner + 1;
        for (size_t i = 0; i < h->ords.n; i++) {
            uint32_t w = sc__agg_ords_owner(&h->ords, (uint32_t)i);
            n_owners = w + 1 > n_owners ? w + 1 : n_owners;
        }
        SC_TRY(sc__agg_ords_group(a, &h->ords, n_owners, &h->gstart, &h->glist));
        h->n_owners = n_owners;
    }
    size_t nb = h->gstart[owner + 1] - h->gstart[owner];
    const uint32_t *list = h->glist + h->gstart[owner];
    sc_agg_result *r = sc__agg_result_new(a, c->spec, nb);
    if (!r)
        return sc__agg_oom(a);
    SC_TRY(sc__agg_count_buckets(c->ctx, nb));
    for (size_t i = 0; i < nb; i++) {
        sc_agg_bucket *b = &r->buckets[i];
        int64_t key = sc__agg_ords_key(&h->ords, list[i]);
        if (c->spec->kind == SC_AGG_HISTOGRAM)
            b->dkey = (double)key * c->spec->interval + c->spec->offset;
        else
            b->key = key;
        SC_TRY(sc__agg_build_bucket(c, list[i], b));
    }
    *out = r;
    return SC_OK;
}

static sc_status histo_seg_whole(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi,
                                 bool *handled)
{
    histo_state *h = c->state;
    return sc__agg_histo_points(c, &h->ords, field, lo, hi, handled);
}

static const sc__agg_coll_ops histo_ops = {
    .seg_begin = histo_seg_begin,
    .collect = histo_collect,
    .seg_end = histo_seg_end,
    .build = histo_build,
    .seg_whole = histo_seg_whole,
};

sc_status sc__agg_histo_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    histo_state *h = sc_arena_calloc(a, 1, sizeof *h);
    if (!h)
        return sc__agg_oom(a);
    h->d_lo = 1; /* no last date bucket yet */
    h->ibuf = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->ibuf);
    h->keys = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->keys);
    h->ok = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->ok);
    h->idx = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->idx);
    h->bords = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->bords);
    h->fdocs = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *h->fdocs);
    if (!h->ibuf || !h->keys || !h->ok || !h->idx || !h->bords || !h->fdocs)
        return sc__agg_oom(a);
    c->state = h;
    c->ops = &histo_ops;
    return SC_OK;
}
