/* auto_date_histogram (search/agg.h): at most `size` buckets, at the finest rung of the
 * interval ladder that fits. The shard records each matching (doc, owner, value) while
 * collecting (the values' range is only known at the end), then picks each owner's rung,
 * maps the values to buckets and replays the docs, segment by segment, to the
 * sub-aggregations (Elasticsearch defers its sub-aggregations the same way). The reduce
 * takes the coarsest rung of its inputs, re-rounds their keys to it and merges; the final
 * reduce climbs the ladder until the buckets, gaps included, fit. A top-level one without
 * sub-aggregations counts a whole segment (match_all or a range on its field, no deletes)
 * from the BKD tree instead: the segment's exact value extent joins the rung choice, and the
 * chosen rung's buckets are counted from the tree's leaves (agg_points.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

typedef struct seg_rec {
    sc__agg_seg seg;
    sc__agg_vec docs, owners, vals; /* one entry per (doc, distinct value) */
} seg_rec;

/* Counts at a fine fixed cell (top level, no sub-aggregations, single-valued, UTC): instead
 * of recording every value, each value adds one to cnt[(v - base * unit) / unit] of at most
 * DENSE_CELLS cells; a value outside them coarsens the cell along DENSE_UNITS (each a
 * multiple of the one before, up to a day), merging cells exactly. The build maps each cell
 * to the bucket of its start: the chosen rung's buckets are unions of whole cells (a rung
 * finer than a day is a multiple of the cell, since the cell only coarsens when the values
 * span more than DENSE_CELLS - 2 cells and `size` <= DENSE_MAX_SIZE keeps the rung above
 * that; coarser rungs start at UTC day boundaries). Values beyond a day's cells or +-2^52 ms
 * go to the record as before (`spilled`). */
#define DENSE_CELLS 4096
#define DENSE_MAX_SIZE 512
static const int64_t DENSE_UNITS[] = {1000,   5000,    10000,   30000,    60000,    300000,
                                      600000, 1800000, 3600000, 10800000, 43200000, 86400000};
#define N_DENSE_UNITS (sizeof DENSE_UNITS / sizeof DENSE_UNITS[0])

typedef struct dense_cells {
    bool on, spilled, any;
    uint32_t ui;         /* index into DENSE_UNITS */
    int64_t base;        /* the first cell's index: cell i starts at (base + i) * unit */
    int64_t lo, hi;      /* the values counted */
    uint64_t *cnt, *tmp; /* DENSE_CELLS each */
} dense_cells;

/* A segment answered from its points: the tree and the extent of its matching values. */
typedef struct pts_seg {
    sc_bkd t;
    int64_t lo, hi;
} pts_seg;

typedef struct auto_state {
    sc__agg_field f;
    dense_cells dense;
    pts_seg *pts;
    size_t n_pts, pts_cap;
    seg_rec *segs;
    size_t n_segs, cap;
    sc__agg_ords ords;
    sc__agg_vec rung; /* per owner */
    bool built;
    /* the rung was chosen before collecting (auto_query_whole): docs go straight to their
     * buckets and the subs, nothing recorded */
    bool pre;
    sc_agg_rounding pre_rr;
    int64_t pre_start, pre_next;
    uint32_t pre_ord;
    bool pre_have;
    /* the fused form of it (subs all fusable metrics, one value per doc): a window's values
     * and bucket ordinals, and the pairs given to the subs in this segment (their lanes) */
    int64_t *pre_vals;
    uint32_t *pre_ords;
    uint64_t pre_n;
} auto_state;

static sc_status auto_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    if (st->built)
        return SC_OK; /* the replay's own calls */
    if (st->pre) {
        st->pre_n = 0;
        return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &st->f);
    }
    if (st->n_segs == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 8;
        seg_rec *n = sc_arena_calloc(a, cap, sizeof *n);
        if (!n)
            return sc__agg_oom(a);
        if (st->n_segs)
            memcpy(n, st->segs, st->n_segs * sizeof *n);
        st->segs = n;
        st->cap = cap;
    }
    seg_rec *r = &st->segs[st->n_segs++];
    memset(r, 0, sizeof *r);
    r->seg = *s;
    return sc__agg_field_open(c->ctx, s->seg, c->spec->field, &st->f);
}

static sc_status auto_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

/* The whole segment matches (top level, no sub-aggregations): keeps its tree and value
 * extent for the build, which counts the chosen rung's buckets from it. Any zone, size and
 * minimum_interval: the rung's own rounding walks the leaves. */
static sc_status auto_seg_whole(sc__agg_coll *c, const sc_slice *field, int64_t qlo, int64_t qhi,
                                bool *handled)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    pts_seg p;
    bool ok, any;
    *handled = false;
    SC_TRY(sc__agg_points_extent(c, field, qlo, qhi, &p.t, &p.lo, &p.hi, &ok, &any));
    if (!ok || !any) {
        *handled = ok;
        return SC_OK;
    }
    if (st->n_pts == st->pts_cap) {
        size_t cap = st->pts_cap ? 2 * st->pts_cap : 8;
        pts_seg *n = sc_arena_alloc(a, cap * sizeof *n);
        if (!n)
            return sc__agg_oom(a);
        if (st->n_pts)
            memcpy(n, st->pts, st->n_pts * sizeof *n);
        st->pts = n;
        st->pts_cap = cap;
    }
    st->pts[st->n_pts++] = p;
    *handled = true;
    return SC_OK;
}

/* Appends x to v: in place while there is room (the collect loop's common case; a call to
 * sc__agg_vec_ensure per cell cost 16% of the operation), else through it. */
static inline sc_status push(sc_arena *a, sc__agg_vec *v, uint64_t x)
{
    if (v->len < v->cap) {
        ((uint64_t *)v->p)[v->len++] = x;
        return SC_OK;
    }
    return sc__agg_vec_ensure(a, v, v->len + 1, x);
}

static inline int64_t floor_div(int64_t v, int64_t u)
{
    int64_t q = v / u;
    return q - (v % u < 0);
}

/* Makes the cells hold [lo, hi] (moving or coarsening them): false when a day's cells do
 * not. */
static bool dense_fit(dense_cells *d, int64_t lo, int64_t hi)
{
    if (lo < -(INT64_C(1) << 52) || hi > (INT64_C(1) << 52))
        return false;
    if (!d->any) {
        d->any = true;
        d->lo = lo;
        d->hi = hi;
    }
    int64_t nlo = lo < d->lo ? lo : d->lo, nhi = hi > d->hi ? hi : d->hi;
    uint32_t ui = d->ui;
    while (floor_div(nhi, DENSE_UNITS[ui]) - floor_div(nlo, DENSE_UNITS[ui]) >= DENSE_CELLS)
        if (++ui == N_DENSE_UNITS)
            return false;
    int64_t nbase = floor_div(nlo, DENSE_UNITS[ui]);
    if (ui != d->ui || nbase != d->base) {
        /* cell (base + i) * unit lies within one new cell: the units divide each other */
        memset(d->tmp, 0, DENSE_CELLS * sizeof *d->tmp);
        int64_t ou = DENSE_UNITS[d->ui], nu = DENSE_UNITS[ui];
        for (size_t i = 0; i < DENSE_CELLS; i++)
            if (d->cnt[i])
                d->tmp[floor_div((d->base + (int64_t)i) * ou, nu) - nbase] += d->cnt[i];
        uint64_t *t = d->cnt;
        d->cnt = d->tmp;
        d->tmp = t;
        d->ui = ui;
        d->base = nbase;
    }
    d->lo = nlo;
    d->hi = nhi;
    return true;
}

/* Counts a window's values into the cells; false (nothing counted) when they do not fit. */
static bool dense_add(dense_cells *d, const int64_t *v, size_t n)
{
    if (!n)
        return true;
    int64_t lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    if (!dense_fit(d, lo, hi))
        return false;
    /* the cell in doubles, exact: v - start < DENSE_CELLS * a day < 2^53, and a quotient
     * below an integer k <= DENSE_CELLS by at least 1 / unit (>= 1 / 86,400,000) stays below
     * it when rounded (k * 2^-53 is smaller); a 64-bit division per value costs more */
    double u = (double)DENSE_UNITS[d->ui];
    int64_t start = d->base * DENSE_UNITS[d->ui];
    uint64_t *cnt = d->cnt;
    for (size_t i = 0; i < n; i++)
        cnt[(int64_t)((double)(v[i] - start) / u)]++; /* int64: one conversion instruction */
    return true;
}

/* v left the bucket [pre_start, pre_next): rounds it to its bucket and looks up (or adds) the
 * bucket's ordinal into pre_ord. */
static sc_status pre_enter(sc_arena *a, auto_state *st, int64_t v)
{
    st->pre_start = sc_agg_round(&st->pre_rr, v);
    st->pre_next = sc_agg_round_next(&st->pre_rr, st->pre_start);
    if (st->pre_next <= st->pre_start)
        st->pre_next = st->pre_start + 1;
    bool added;
    SC_TRY(sc__agg_ords_long(a, &st->ords, 0, st->pre_start, &st->pre_ord, &added));
    st->pre_have = true;
    return SC_OK;
}

/* The rung chosen up front: each doc's distinct values to their buckets (the last bucket
 * [pre_start, pre_next) skips the rounding and the ordinal hash) and on to the subs. */
static sc_status collect_pre(sc__agg_coll *c, const uint32_t *docs, size_t n)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    bool fused = sc_dv_numeric_is_single(&st->f.num);
    for (size_t j = 0; j < c->n_subs && fused; j++)
        fused = sc__agg_metric_fusable(c->subs[j]);
    if (fused) {
        /* as the pairs would reach the subs (same order and lanes: the same sums), without
         * queueing them: the ordinals go straight to the metrics' per-bucket arrays */
        if (!st->pre_vals) {
            st->pre_vals = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *st->pre_vals);
            st->pre_ords = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *st->pre_ords);
            if (!st->pre_vals || !st->pre_ords)
                return sc__agg_oom(a);
        }
        for (size_t off = 0; off < n; off += SC__AGG_PAIRS) {
            size_t k = n - off < SC__AGG_PAIRS ? n - off : SC__AGG_PAIRS;
            const uint32_t *wd = docs + off;
            sc_dv_numeric_get_single_batch(&st->f.num, wd, k, st->pre_vals);
            uint32_t mx = 0;
            for (size_t i = 0; i < k; i++) {
                int64_t v = st->pre_vals[i];
                if (!st->pre_have || v < st->pre_start || v >= st->pre_next) {
                    SC_TRY(pre_enter(a, st, v));
                    SC_TRY(sc__agg_counts_ensure(c, st->pre_ord));
                }
                st->pre_ords[i] = st->pre_ord;
                mx = st->pre_ord > mx ? st->pre_ord : mx;
                ((uint64_t *)c->doc_counts.p)[st->pre_ord]++;
            }
            SC_TRY(
                sc__agg_metrics_add_owned(c->subs, c->n_subs, wd, st->pre_ords, k, mx, st->pre_n));
            st->pre_n += k;
        }
        return SC_OK;
    }
    int64_t vals[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = sc_dv_numeric_get(&st->f.num, docs[i], vals, 256);
        for (size_t j = 0; j < k && j < 256; j++) {
            int64_t v = vals[j];
            if (j && v == vals[j - 1])
                continue;
            if (!st->pre_have || v < st->pre_start || v >= st->pre_next)
                SC_TRY(pre_enter(a, st, v));
            SC_TRY(sc__agg_emit(c, docs[i], st->pre_ord));
        }
    }
    return SC_OK;
}

static sc_status auto_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                              size_t n)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    if (st->pre && !st->built)
        return st->f.has_num ? collect_pre(c, docs, n) : SC_OK;
    if (!st->f.has_num || !st->n_segs)
        return SC_OK;
    seg_rec *r = &st->segs[st->n_segs - 1];
    if (!owners && !c->n_subs && sc_dv_numeric_is_single(&st->f.num)) {
        /* top level without sub-aggregations (Rally's autohisto_agg): only the values matter,
         * read a window at a time, counted into the cells when they can, else straight into
         * the record (docs and owners stay empty) */
        dense_cells *d = &st->dense;
        if (!d->on && !d->spilled) {
            const sc_agg_tz *tz = &c->spec->rounding.tz;
            d->spilled = tz->n_trans || tz->base_offset_ms || c->spec->size > DENSE_MAX_SIZE;
            if (!d->spilled) {
                d->cnt = sc_arena_calloc(a, DENSE_CELLS, sizeof *d->cnt);
                d->tmp = sc_arena_alloc(a, DENSE_CELLS * sizeof *d->tmp);
                if (!d->cnt || !d->tmp)
                    return sc__agg_oom(a);
                d->on = true;
            }
        }
        if (d->on && !d->spilled) {
            int64_t buf[512];
            size_t done = 0;
            while (done < n) {
                size_t k = n - done < 512 ? n - done : 512;
                sc_dv_numeric_get_single_batch(&st->f.num, docs + done, k, buf);
                if (!dense_add(d, buf, k)) {
                    d->spilled = true;
                    break;
                }
                done += k;
            }
            docs += done;
            n -= done;
            if (!n)
                return SC_OK;
        }
        SC_TRY(sc__agg_vec_ensure(a, &r->vals, r->vals.len + n, 0));
        sc_dv_numeric_get_single_batch(&st->f.num, docs, n, (int64_t *)r->vals.p + r->vals.len - n);
        return SC_OK;
    }
    int64_t vals[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = sc_dv_numeric_get(&st->f.num, docs[i], vals, 256);
        for (size_t j = 0; j < k && j < 256; j++) {
            if (j && vals[j] == vals[j - 1])
                continue;
            SC_TRY(push(a, &r->docs, docs[i]));
            SC_TRY(push(a, &r->owners, owners ? owners[i] : 0));
            SC_TRY(push(a, &r->vals, (uint64_t)vals[j]));
        }
    }
    return SC_OK;
}

/* The number of buckets from the bucket of lo to the bucket of hi at rung i, up to cap + 1. */
static uint64_t span(const sc_agg_spec *spec, uint32_t i, int64_t lo, int64_t hi, uint64_t cap)
{
    sc_agg_rounding r;
    sc_agg_auto_rung(i, &spec->rounding.tz, &r, NULL);
    int64_t k = sc_agg_round(&r, lo), last = sc_agg_round(&r, hi);
    uint64_t n = 1;
    while (k < last && n <= cap) {
        k = sc_agg_round_next(&r, k);
        n++;
    }
    return n;
}

/* The finest rung (from the spec's minimum) whose buckets over [lo, hi] fit in `size`. */
static uint32_t pick_rung(const sc_agg_spec *spec, int64_t lo, int64_t hi)
{
    uint32_t i = spec->min_rung; /* the minimum_interval rung */
    while (i + 1 < SC_AGG_AUTO_LADDER && span(spec, i, lo, hi, spec->size) > spec->size)
        i++;
    return i;
}

/* A fixed-length rung in UTC (seconds .. days, no zone transitions): its length, else 0. */
static int64_t fixed_unit(const sc_agg_rounding *r)
{
    if (r->tz.n_trans || r->offset_ms)
        return 0;
    switch (r->unit) {
    case SC_AGG_CAL_NONE: return r->fixed_ms > 0 ? r->fixed_ms : 0;
    case SC_AGG_CAL_MINUTE: return 60000;
    case SC_AGG_CAL_HOUR: return 3600000;
    case SC_AGG_CAL_DAY: return 86400000;
    default: return 0;
    }
}

/* A segment recorded without docs (top level, no sub-aggregations, owner 0): counts each
 * value's bucket. For a fixed-length rung the bucket is an index into at most `size` + 1
 * counters from the owner's first bucket (no rounding call, no hash per value: most of the
 * operation's time); otherwise the rounding with the last-bucket shortcut. */
static sc_status count_values(sc__agg_coll *c, const seg_rec *r, sc_agg_rounding *rr)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    const int64_t *v = r->vals.p;
    size_t n = r->vals.len;
    sc_agg_auto_rung((uint32_t)((const uint64_t *)st->rung.p)[0], &c->spec->rounding.tz, rr, NULL);
    int64_t unit = fixed_unit(rr);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    int64_t first = sc_agg_round(rr, lo);
    if (unit && hi - first < (int64_t)(c->spec->size + 1) * unit && hi - first >= 0 &&
        lo > INT64_MIN / 2 && hi < INT64_MAX / 2) {
        size_t nb = (size_t)((hi - first) / unit) + 1;
        uint64_t *cnt = sc_arena_calloc(a, nb, sizeof *cnt);
        if (!cnt)
            return sc__agg_oom(a);
        for (size_t i = 0; i < n; i++)
            cnt[(v[i] - first) / unit]++;
        for (size_t b = 0; b < nb; b++) {
            if (!cnt[b])
                continue;
            uint32_t ord;
            bool added;
            SC_TRY(sc__agg_ords_long(a, &st->ords, 0, first + (int64_t)b * unit, &ord, &added));
            SC_TRY(sc__agg_counts_ensure(c, ord));
            ((uint64_t *)c->doc_counts.p)[ord] += cnt[b];
        }
        return SC_OK;
    }
    int64_t start = 0, next = 0;
    uint32_t ord = 0;
    bool have = false;
    for (size_t i = 0; i < n; i++) {
        if (!have || v[i] < start || v[i] >= next) {
            start = sc_agg_round(rr, v[i]);
            next = sc_agg_round_next(rr, start);
            if (next <= start)
                next = start + 1;
            bool added;
            SC_TRY(sc__agg_ords_long(a, &st->ords, 0, start, &ord, &added));
            have = true;
        }
        SC_TRY(sc__agg_emit(c, 0, ord));
    }
    return SC_OK;
}

/* Adds the cells' counts to owner 0's buckets: each cell to the bucket of its start (the
 * rounding once per bucket, cells in order). */
static sc_status count_cells(sc__agg_coll *c)
{
    auto_state *st = c->state;
    const dense_cells *d = &st->dense;
    sc_agg_rounding rr;
    sc_agg_auto_rung((uint32_t)((const uint64_t *)st->rung.p)[0], &c->spec->rounding.tz, &rr, NULL);
    int64_t u = DENSE_UNITS[d->ui], start = 0, next = 0;
    uint32_t ord = 0;
    bool have = false;
    for (size_t i = 0; i < DENSE_CELLS; i++) {
        if (!d->cnt[i])
            continue;
        int64_t s = (d->base + (int64_t)i) * u;
        if (!have || s < start || s >= next) {
            start = sc_agg_round(&rr, s);
            next = sc_agg_round_next(&rr, start);
            if (next <= start)
                next = start + 1;
            bool added;
            SC_TRY(sc__agg_ords_long(c->ctx->a, &st->ords, 0, start, &ord, &added));
            SC_TRY(sc__agg_counts_ensure(c, ord));
            have = true;
        }
        ((uint64_t *)c->doc_counts.p)[ord] += d->cnt[i];
    }
    return SC_OK;
}

/* The query is match_all or a range on this field (top level, with sub-aggregations): when
 * no segment has deletes and each has single-valued points on the field, the matching
 * values' exact extent comes from the trees, so the rung is chosen before collecting and
 * the docs need not be recorded and replayed (auto_date_histogram_with_metrics). */
static sc_status auto_query_whole(sc__agg_coll *c, const sc_slice *field, int64_t qlo, int64_t qhi)
{
    auto_state *st = c->state;
    const sc_searcher *s = c->ctx->s;
    if (!c->n_subs || !s)
        return SC_OK;
    const sc__agg_seg *saved = c->seg;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    bool ok = true;
    for (size_t i = 0; i < s->n_segs && ok; i++) {
        if (s->segs[i].live && s->segs[i].n_deleted) {
            ok = false;
            break;
        }
        sc__agg_seg sg = {
            .seg = s->segs[i].seg, .seg_i = i, .n_docs = sc_segment_n_docs(s->segs[i].seg)};
        sc_bkd t;
        int64_t l = 0, h = 0;
        bool any;
        c->seg = &sg;
        sc_status rc = sc__agg_points_extent(c, field, qlo, qhi, &t, &l, &h, &ok, &any);
        c->seg = saved;
        SC_TRY(rc);
        if (ok && any) {
            lo = l < lo ? l : lo;
            hi = h > hi ? h : hi;
        }
    }
    if (!ok)
        return SC_OK;
    SC_TRY(sc__agg_vec_ensure(c->ctx->a, &st->rung, 1, 0));
    uint32_t rung = lo <= hi ? pick_rung(c->spec, lo, hi) : c->spec->min_rung;
    ((uint64_t *)st->rung.p)[0] = rung;
    sc_agg_auto_rung(rung, &c->spec->rounding.tz, &st->pre_rr, NULL);
    st->pre = true;
    return SC_OK;
}

/* Picks every owner's rung, maps the recorded values to bucket ordinals and replays the docs
 * to the sub-aggregations. */
static sc_status finish(sc__agg_coll *c)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    st->built = true;
    if (st->pre)
        return SC_OK; /* collected straight into the buckets */
    uint32_t n_owners = 1;
    for (size_t s = 0; s < st->n_segs; s++)
        for (size_t i = 0; i < st->segs[s].owners.len; i++) {
            uint32_t w = (uint32_t)((const uint64_t *)st->segs[s].owners.p)[i];
            n_owners = w + 1 > n_owners ? w + 1 : n_owners;
        }
    sc__agg_vec lo = {0}, hi = {0};
    SC_TRY(sc__agg_vec_ensure(a, &lo, n_owners, (uint64_t)INT64_MAX));
    SC_TRY(sc__agg_vec_ensure(a, &hi, n_owners, (uint64_t)INT64_MIN));
    SC_TRY(sc__agg_vec_ensure(a, &st->rung, n_owners, 0));
    int64_t *l = lo.p, *h = hi.p;
    for (size_t s = 0; s < st->n_segs; s++)
        for (size_t i = 0; i < st->segs[s].vals.len; i++) {
            const seg_rec *r = &st->segs[s];
            uint32_t w = r->owners.len ? (uint32_t)((const uint64_t *)r->owners.p)[i] : 0;
            int64_t v = ((const int64_t *)st->segs[s].vals.p)[i];
            l[w] = v < l[w] ? v : l[w];
            h[w] = v > h[w] ? v : h[w];
        }
    if (st->dense.any) {
        l[0] = st->dense.lo < l[0] ? st->dense.lo : l[0];
        h[0] = st->dense.hi > h[0] ? st->dense.hi : h[0];
    }
    for (size_t i = 0; i < st->n_pts; i++) {
        l[0] = st->pts[i].lo < l[0] ? st->pts[i].lo : l[0];
        h[0] = st->pts[i].hi > h[0] ? st->pts[i].hi : h[0];
    }
    uint64_t *rung = st->rung.p;
    for (uint32_t w = 0; w < n_owners; w++)
        rung[w] = l[w] <= h[w] ? pick_rung(c->spec, l[w], h[w]) : c->spec->min_rung;
    if (st->dense.any)
        SC_TRY(count_cells(c));
    if (st->n_pts) {
        sc_agg_rounding rr;
        sc_agg_auto_rung((uint32_t)rung[0], &c->spec->rounding.tz, &rr, NULL);
        for (size_t i = 0; i < st->n_pts; i++)
            SC_TRY(sc__agg_points_round(c, &st->ords, &st->pts[i].t, &rr, st->pts[i].lo,
                                        st->pts[i].hi));
    }
    for (size_t s = 0; s < st->n_segs; s++) {
        seg_rec *r = &st->segs[s];
        for (size_t j = 0; j < c->n_subs; j++)
            SC_TRY(sc__agg_coll_seg_begin(c->subs[j], &r->seg));
        /* the last bucket [start, next) of owner cur_w: values of one bucket in a row (time-
         * ordered docs) skip the rounding and the ordinal hash, which were half the time */
        uint32_t cur_w = UINT32_MAX, ord = 0;
        int64_t start = 0, next = 0;
        sc_agg_rounding rr;
        if (!r->docs.len && r->vals.len) {
            SC_TRY(count_values(c, r, &rr));
            continue;
        }
        for (size_t i = 0; i < r->docs.len; i++) {
            uint32_t w = (uint32_t)((const uint64_t *)r->owners.p)[i];
            int64_t v = ((const int64_t *)r->vals.p)[i];
            if (w != cur_w || v < start || v >= next) {
                if (w != cur_w)
                    sc_agg_auto_rung((uint32_t)rung[w], &c->spec->rounding.tz, &rr, NULL);
                cur_w = w;
                start = sc_agg_round(&rr, v);
                next = sc_agg_round_next(&rr, start);
                if (next <= start)
                    next = start + 1; /* keeps the check exact at the end of time */
                bool added;
                SC_TRY(sc__agg_ords_long(a, &st->ords, w, start, &ord, &added));
            }
            SC_TRY(sc__agg_emit(c, (uint32_t)((const uint64_t *)r->docs.p)[i], ord));
        }
        SC_TRY(sc__agg_flush(c));
        for (size_t j = 0; j < c->n_subs; j++)
            SC_TRY(sc__agg_coll_seg_end(c->subs[j]));
    }
    return SC_OK;
}

static int cmp_key(const void *x, const void *y)
{
    const sc_agg_bucket *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

static sc_status auto_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    auto_state *st = c->state;
    sc_arena *a = c->ctx->a;
    if (!st->built)
        SC_TRY(finish(c));
    size_t nb = 0;
    for (size_t i = 0; i < st->ords.n; i++)
        nb += sc__agg_ords_owner(&st->ords, (uint32_t)i) == owner;
    sc_agg_result *r = sc__agg_result_new(a, c->spec, nb);
    if (!r)
        return sc__agg_oom(a);
    SC_TRY(sc__agg_count_buckets(c->ctx, nb));
    size_t k = 0;
    for (size_t i = 0; i < st->ords.n; i++) {
        if (sc__agg_ords_owner(&st->ords, (uint32_t)i) != owner)
            continue;
        r->buckets[k].key = sc__agg_ords_key(&st->ords, (uint32_t)i);
        SC_TRY(sc__agg_build_bucket(c, (uint32_t)i, &r->buckets[k++]));
    }
    qsort(r->buckets, nb, sizeof *r->buckets, cmp_key);
    r->rung =
        owner < st->rung.len ? (uint32_t)((const uint64_t *)st->rung.p)[owner] : c->spec->min_rung;
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops auto_ops = {
    .seg_begin = auto_seg_begin,
    .collect = auto_collect,
    .seg_end = auto_seg_end,
    .build = auto_build,
    .seg_whole = auto_seg_whole,
    .query_whole = auto_query_whole,
};

sc_status sc__agg_auto_histo_new(sc__agg_coll *c)
{
    auto_state *st = sc_arena_calloc(c->ctx->a, 1, sizeof *st);
    if (!st)
        return sc__agg_oom(c->ctx->a);
    c->state = st;
    c->ops = &auto_ops;
    return SC_OK;
}

/* ---- reduce ---- */

/* Re-rounds the buckets of in[] to rung, merging equal keys, into r (sorted by key). */
static sc_status merge_at(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                          uint32_t rung, bool final, uint64_t max_buckets, sc_arena *a,
                          sc_agg_result **out, sc_agg_error *err)
{
    sc_agg_rounding rr;
    sc_agg_auto_rung(rung, &spec->rounding.tz, &rr, NULL);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->n_buckets;
    sc_agg_bucket *all = sc_arena_alloc(a, (total ? total : 1) * sizeof *all);
    sc_agg_bucket **refs = sc_arena_alloc(a, (total ? total : 1) * sizeof *refs);
    sc_agg_result *r = sc__agg_result_new(a, spec, total);
    if (!all || !refs || !r)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < in[i]->n_buckets; j++) {
            all[k] = in[i]->buckets[j];
            all[k].key = sc_agg_round(&rr, all[k].key);
            k++;
        }
    qsort(all, total, sizeof *all, cmp_key);
    size_t nb = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        sc_agg_bucket *m = &r->buckets[nb++];
        m->key = all[i].key;
        for (; j < total && all[j].key == all[i].key; j++) {
            m->doc_count += all[j].doc_count;
            refs[j - i] = &all[j];
        }
        SC_TRY(sc__agg_reduce_subs(spec, refs, j - i, final, max_buckets, a, m, err));
        i = j;
    }
    r->n_buckets = nb;
    r->rung = rung;
    *out = r;
    return SC_OK;
}

sc_status sc__agg_auto_histo_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                    bool final, uint64_t max_buckets, sc_arena *a,
                                    sc_agg_result **out, sc_agg_error *err)
{
    uint32_t rung = spec->min_rung;
    for (size_t i = 0; i < n; i++)
        rung = in[i]->rung > rung ? in[i]->rung : rung;
    sc_agg_result *r;
    SC_TRY(merge_at(spec, in, n, rung, false, max_buckets, a, &r, err));
    while (final && r->n_buckets &&
           span(spec, r->rung, r->buckets[0].key, r->buckets[r->n_buckets - 1].key, spec->size) >
               spec->size &&
           r->rung + 1 < SC_AGG_AUTO_LADDER)
        SC_TRY(merge_at(spec, &r, 1, r->rung + 1, false, max_buckets, a, &r, err));
    if (final) {
        /* the final pass: sub-aggregations finalized, empty buckets filled */
        SC_TRY(merge_at(spec, &r, 1, r->rung, true, max_buckets, a, &r, err));
        SC_TRY(sc__agg_auto_fill(spec, r, max_buckets, a, err));
    }
    *out = r;
    return SC_OK;
}

sc_status sc__agg_auto_fill(const sc_agg_spec *spec, sc_agg_result *r, uint64_t max_buckets,
                            sc_arena *a, sc_agg_error *err)
{
    if (r->n_buckets < 2)
        return SC_OK;
    sc_agg_rounding rr;
    sc_agg_auto_rung(r->rung, &spec->rounding.tz, &rr, NULL);
    uint64_t n =
        span(spec, r->rung, r->buckets[0].key, r->buckets[r->n_buckets - 1].key, max_buckets);
    if (n > max_buckets) {
        err->too_many_buckets = true;
        snprintf(err->reason, sizeof err->reason,
                 "Trying to create too many buckets. Must be less than or equal to: [%llu] but "
                 "this number of buckets was exceeded. This limit can be set by changing the "
                 "[search.max_buckets] cluster level setting.",
                 (unsigned long long)max_buckets);
        return SC_ELIMIT;
    }
    sc_agg_bucket *out = sc_arena_calloc(a, n, sizeof *out);
    if (!out)
        return sc__agg_oom(a);
    size_t j = 0, k = 0;
    for (int64_t key = r->buckets[0].key; k < n; key = sc_agg_round_next(&rr, key)) {
        if (j < r->n_buckets && r->buckets[j].key == key) {
            out[k++] = r->buckets[j++];
            continue;
        }
        sc_agg_result *one = sc__agg_result_new(a, spec, 1);
        if (!one)
            return sc__agg_oom(a);
        for (size_t s = 0; s < spec->n_subs; s++)
            if (!(one->buckets[0].subs[s] = sc__agg_empty_result(spec->subs[s], a)))
                return sc__agg_oom(a);
        one->buckets[0].key = key;
        out[k++] = one->buckets[0];
    }
    r->buckets = out;
    r->n_buckets = k;
    return SC_OK;
}
