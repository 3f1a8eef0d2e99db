/* The single- and multi-value metric aggregations (min, max, sum, avg, value_count, stats,
 * extended_stats): one collector keeping count, Kahan-compensated sum and sum of squares,
 * min and max per owner bucket ordinal (min and max only for the kinds that show them), read
 * from numeric doc values a window at a time (single-valued fields in one batch read); sums
 * over integer and scaled_float fields in int64 while exact; value_count on keyword/ip counts
 * ordinals. */
#include <math.h>
#include <string.h>

#include "search/agg_internal.h"
#include "search/runtime.h"

#define LANES SC__AGG_LANES

typedef struct metric_state {
    sc__agg_field f;
    sc__agg_vec count, sum, sum_c, min, max, sq, sq_c; /* per owner */
    /* under a bucket aggregation, single-valued fields: LANES Kahan sums (and sums of squares)
     * per owner, doc i into lane i % LANES, folded in at the build. Neighbouring docs mostly
     * fall in the same bucket, and one compensated sum per owner made every value wait for the
     * previous one's four dependent additions (Rally's distance_amount_agg) */
    sc__agg_vec lsum, lsum_c, lsq, lsq_c;
    /* and the lane's count, min and max: one count / min / max per owner made each doc of a
     * run in one bucket wait for the previous doc's load-modify-store of the same cells
     * (store-to-load forwarding, ~5 cycles a doc) */
    sc__agg_vec lcount, lmin, lmax;
    /* an integer field (int_ok): while every value taken so far adds up to less than 2^53 in
     * absolute value (iabs), each Kahan step on exact integers is exact, so the sums are kept
     * in int64 instead (isum per owner for the top level, ilsum per owner lane) and give the
     * same doubles. The first value that would break the bound folds them into sum / lsum
     * (int_fold) and the compensated sums take over for good (inexact).
     * A scaled_float (factor > 0) is stored as an integer count of 1 / factor units, so the
     * int64 sum of those integers is the exact sum of the indexed values: it is converted once
     * (exact below 2^53) and divided once by the factor at the build, which gives the
     * correctly rounded sum (a compensated sum of value / factor per value does not, and its
     * last bits depend on the order of the docs). */
    sc__agg_vec isum, ilsum;
    /* and the int64 path's min and max per owner lane (INT64_MAX / INT64_MIN: none), converted
     * once at the build: int_value is non-decreasing, so the min / max of the integers give
     * the min / max of the doubles (a division per value for each of them before) */
    sc__agg_vec ilmin, ilmax;
    uint64_t iabs;
    /* a bound on |value| in the current segment from its doc values header (min, gcd and bit
     * width), when below 2^51 (seg_bounded): a window of k values then adds at most k * seg_abs
     * to iabs without looking at them */
    uint64_t seg_abs;
    double factor; /* the scaling factor of a scaled_float, 0 otherwise */
    bool int_ok, inexact, seg_bounded;
    bool per_doc; /* sc_agg_shard_options.per_doc_windows: no one-owner shortcuts */
    bool minmax;  /* min / max kept: min, max, stats, extended_stats (nothing shows them else) */
    int64_t *ibuf;
    double *dbuf;
    /* a double runtime field evaluated for the collected docs only (no column): its values
     * go straight into dbuf; NULL for every other field */
    sc_runtime_doubles *rt;
} metric_state;

/* The int64 sums: exact while iabs < 2^53; values of 2^51 and more are left to the
 * compensated sum (a window's 4096 absolute values then add up below 2^63). */
#define INT_SUM_LIMIT (UINT64_C(1) << 53)
#define INT_VALUE_LIMIT (UINT64_C(1) << 51)

/* A bound on the absolute values of dv's values into *out when it is below 2^51 (else
 * false), from the header's range. */
static bool header_abs_bound(const sc_dv_numeric *dv, uint64_t *out)
{
    int64_t lo;
    uint64_t span;
    if (!sc_dv_numeric_range(dv, &lo, &span) || span >= INT_VALUE_LIMIT ||
        lo <= -(int64_t)INT_VALUE_LIMIT || lo >= (int64_t)INT_VALUE_LIMIT)
        return false;
    int64_t hi = lo + (int64_t)span; /* no overflow: both below 2^51 */
    uint64_t a = lo < 0 ? (uint64_t)-lo : (uint64_t)lo, b = hi < 0 ? (uint64_t)-hi : (uint64_t)hi;
    *out = a > b ? a : b;
    return *out < INT_VALUE_LIMIT;
}

static sc_status metric_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    metric_state *m = c->state;
    SC_TRY(sc__agg_field_open_doubles(c->ctx, s->seg, c->spec, &m->f, &m->rt));
    m->seg_bounded = m->int_ok && m->f.has_num && header_abs_bound(&m->f.num, &m->seg_abs);
    return SC_OK;
}

static sc_status metric_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

/* Makes the per-owner arrays cover owner w. */
static sc_status ensure(sc__agg_coll *c, uint32_t w)
{
    metric_state *m = c->state;
    if (w < m->count.len)
        return SC_OK;
    sc_arena *a = c->ctx->a;
    size_t n = (size_t)w + 1;
    double inf = INFINITY, ninf = -INFINITY;
    uint64_t pinf, pninf;
    memcpy(&pinf, &inf, 8);
    memcpy(&pninf, &ninf, 8);
    SC_TRY(sc__agg_vec_ensure(a, &m->count, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->sum, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->sum_c, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->sq, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->sq_c, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->min, n, pinf));
    SC_TRY(sc__agg_vec_ensure(a, &m->max, n, pninf));
    SC_TRY(sc__agg_vec_ensure(a, &m->lsum, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->lsum_c, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->lsq, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->lsq_c, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->lcount, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->lmin, n * LANES, pinf));
    SC_TRY(sc__agg_vec_ensure(a, &m->lmax, n * LANES, pninf));
    SC_TRY(sc__agg_vec_ensure(a, &m->isum, n, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->ilsum, n * LANES, 0));
    SC_TRY(sc__agg_vec_ensure(a, &m->ilmin, n * LANES, (uint64_t)INT64_MAX));
    SC_TRY(sc__agg_vec_ensure(a, &m->ilmax, n * LANES, (uint64_t)INT64_MIN));
    return SC_OK;
}

/* Kahan summation as Elasticsearch's CompensatedSum: non-finite values poison the sum. */
static inline void kahan(double *sum, double *comp, double v)
{
    if (!isfinite(v)) {
        *sum += v;
    } else if (isfinite(*sum)) {
        double corrected = v - *comp;
        double nsum = *sum + corrected;
        *comp = (nsum - *sum) - corrected;
        *sum = nsum;
    }
}

static inline void add_value(metric_state *m, uint32_t w, double v, bool squares)
{
    ((uint64_t *)m->count.p)[w]++;
    kahan(&((double *)m->sum.p)[w], &((double *)m->sum_c.p)[w], v);
    if (squares)
        kahan(&((double *)m->sq.p)[w], &((double *)m->sq_c.p)[w], v * v);
    if (!m->minmax)
        return;
    double *mn = &((double *)m->min.p)[w], *mx = &((double *)m->max.p)[w];
    if (v < *mn)
        *mn = v;
    if (v > *mx)
        *mx = v;
}

/* A value of owner w into lane l of its lanes (see metric_state). */
static inline void add_lane(metric_state *m, uint32_t w, size_t l, double v, bool squares)
{
    size_t x = (size_t)w * LANES + l;
    ((uint64_t *)m->lcount.p)[x]++;
    kahan(&((double *)m->lsum.p)[x], &((double *)m->lsum_c.p)[x], v);
    if (squares)
        kahan(&((double *)m->lsq.p)[x], &((double *)m->lsq_c.p)[x], v * v);
    if (!m->minmax)
        return;
    double *mn = &((double *)m->lmin.p)[x], *mx = &((double *)m->lmax.p)[x];
    *mn = v < *mn ? v : *mn;
    *mx = v > *mx ? v : *mx;
}

/* Folding a lane's min / max in: as the per-value updates (`v < mn`), and a zero of either
 * sign against a zero of the other keeps -0.0 for the min and +0.0 for the max (Java's
 * Math.min / Math.max, as Elasticsearch), so the lanes' order does not show. */
static double fold_min(double mn, double v)
{
    if (v == 0 && mn == 0)
        return signbit(v) ? v : mn;
    return v < mn ? v : mn;
}

static double fold_max(double mx, double v)
{
    if (v == 0 && mx == 0)
        return signbit(v) ? mx : v;
    return v > mx ? v : mx;
}

/* The top level (every value to owner 0): a window of values in four independent Kahan lanes
 * and a min/max loop the compiler vectorizes, folded into owner 0 once per window (one
 * dependent chain per value made avg/stats ~4x slower). */
static void add_window(metric_state *m, const double *v, size_t k, bool squares)
{
    double s[4] = {0}, c[4] = {0}, q[4] = {0}, qc[4] = {0};
    double mn = INFINITY, mx = -INFINITY;
    size_t i = 0;
    for (; i + 4 <= k; i += 4)
        for (int l = 0; l < 4; l++) {
            kahan(&s[l], &c[l], v[i + l]);
            if (squares)
                kahan(&q[l], &qc[l], v[i + l] * v[i + l]);
        }
    for (; i < k; i++) {
        kahan(&s[0], &c[0], v[i]);
        if (squares)
            kahan(&q[0], &qc[0], v[i] * v[i]);
    }
    for (size_t j = 0; j < k && m->minmax; j++) {
        mn = v[j] < mn ? v[j] : mn;
        mx = v[j] > mx ? v[j] : mx;
    }
    ((uint64_t *)m->count.p)[0] += k;
    double *sum = m->sum.p, *sum_c = m->sum_c.p, *sq = m->sq.p, *sq_c = m->sq_c.p;
    for (int l = 0; l < 4; l++) {
        kahan(sum, sum_c, s[l]);
        kahan(sum, sum_c, -c[l]);
        if (squares) {
            kahan(sq, sq_c, q[l]);
            kahan(sq, sq_c, -qc[l]);
        }
    }
    double *pmn = m->min.p, *pmx = m->max.p;
    *pmn = mn < *pmn ? mn : *pmn;
    *pmx = mx > *pmx ? mx : *pmx;
}

/* An integer of the field as the double the metric takes (value / factor for a scaled_float,
 * as sc__agg_doc_doubles). */
static inline double int_value(const metric_state *m, int64_t v)
{
    return m->factor > 0 ? (double)v / m->factor : (double)v;
}

/* Owner w's int64 sums together (exact: their absolute values add up below 2^53). */
static int64_t int_total(const metric_state *m, size_t w)
{
    const int64_t *il = (const int64_t *)m->ilsum.p + w * LANES;
    int64_t t = ((const int64_t *)m->isum.p)[w];
    for (size_t l = 0; l < LANES; l++)
        t += il[l];
    return t;
}

/* Ends the int64 sums: adds them into the compensated sums. Integer fields: exact, everything
 * so far is an integer below 2^53, so the compensations are all +0.0 and the sums hold exact
 * totals, as the per-value Kahan steps would have left them. A scaled_float: each owner's
 * total, divided once, into its own sum (the same whatever lanes the values went to). */
static void int_fold(metric_state *m)
{
    int64_t *is = m->isum.p, *il = m->ilsum.p;
    double *sum = m->sum.p, *lsum = m->lsum.p;
    if (m->factor > 0) {
        for (size_t w = 0; w < m->isum.len; w++) {
            int64_t t = int_total(m, w);
            if (t)
                kahan(&sum[w], &((double *)m->sum_c.p)[w], (double)t / m->factor);
        }
        if (m->isum.len) {
            memset(is, 0, m->isum.len * sizeof *is);
            memset(il, 0, m->ilsum.len * sizeof *il);
        }
        m->inexact = true;
        return;
    }
    for (size_t w = 0; w < m->isum.len; w++)
        if (is[w]) {
            sum[w] += (double)is[w];
            is[w] = 0;
        }
    for (size_t x = 0; x < m->ilsum.len; x++)
        if (il[x]) {
            lsum[x] += (double)il[x];
            il[x] = 0;
        }
    m->inexact = true;
}

/* Whether the integers v[0..k) go into the int64 sums (their absolute values counted into
 * iabs); false after int_fold (or when the field is not an integer one). */
static bool int_take(metric_state *m, const int64_t *v, size_t k)
{
    if (!m->int_ok || m->inexact)
        return false;
    if (m->seg_bounded && (uint64_t)k * m->seg_abs < INT_SUM_LIMIT - m->iabs) {
        m->iabs += (uint64_t)k * m->seg_abs; /* a bound on the values' sum: still exact */
        return true;
    }
    uint64_t mx = 0, s = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t a = v[i] < 0 ? -(uint64_t)v[i] : (uint64_t)v[i];
        mx = a > mx ? a : mx;
        s += a;
    }
    if (mx < INT_VALUE_LIMIT && s < INT_SUM_LIMIT - m->iabs) {
        m->iabs += s;
        return true;
    }
    int_fold(m);
    return false;
}

/* As int_take for one value of the per-doc path (a double: `missing` may be any number).
 * That path sums doubles, which for a scaled_float are value / factor: the int64 sums end
 * there (int_fold). */
static void int_take_one(metric_state *m, double v)
{
    if (!m->int_ok || m->inexact)
        return;
    if (m->factor > 0) {
        int_fold(m);
        return;
    }
    double a = fabs(v);
    if (a < (double)INT_VALUE_LIMIT && a == floor(a) && (uint64_t)a < INT_SUM_LIMIT - m->iabs)
        m->iabs += (uint64_t)a;
    else
        int_fold(m);
}

/* mn[l] / mx[l] take the min / max of v[i] over the i < k with i % LANES == l, four lanes side
 * by side (vectorized); one body for the int64 and the double windows. */
#define LANE_MINMAX(name, T)                                                                       \
    static void name(const T *v, size_t k, T *mn, T *mx)                                           \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + LANES <= k; i += LANES)                                                         \
            for (size_t l = 0; l < LANES; l++) {                                                   \
                mn[l] = v[i + l] < mn[l] ? v[i + l] : mn[l];                                       \
                mx[l] = v[i + l] > mx[l] ? v[i + l] : mx[l];                                       \
            }                                                                                      \
        for (size_t j = i; j < k; j++) {                                                           \
            mn[j - i] = v[j] < mn[j - i] ? v[j] : mn[j - i];                                       \
            mx[j - i] = v[j] > mx[j - i] ? v[j] : mx[j - i];                                       \
        }                                                                                          \
    }
LANE_MINMAX(lane_minmax_int, int64_t)
LANE_MINMAX(lane_minmax_double, double)
#undef LANE_MINMAX

/* Whether owners[0..k) (k > 0) are all one owner. */
static bool one_owner(const uint32_t *owners, size_t k)
{
    uint32_t w = owners[0], diff = 0;
    for (size_t i = 0; i < k; i++) /* vectorized */
        diff |= owners[i] ^ w;
    return diff == 0;
}

/* add_ints of a window whose docs all belong to owner w: each lane's count, sum, min and max
 * over its docs (doc i in lane (lane0 + i) % LANES, as the per-doc loop) in registers, four
 * lanes side by side (vectorized), then added into w's lanes once. Integer sums and min / max
 * do not depend on the order, so the lanes end as the per-doc loop leaves them. A run of
 * sorted dates (a date_histogram bucket of 10 days holds tens of thousands of consecutive
 * docs) makes most windows one owner. */
static void add_ints_one(metric_state *m, const int64_t *v, uint32_t w, size_t k, uint64_t lane0)
{
    int64_t s[LANES] = {0}, mn[LANES], mx[LANES];
    for (size_t l = 0; l < LANES; l++)
        mn[l] = INT64_MAX, mx[l] = INT64_MIN;
    sc__agg_lane_sums(v, k, s);
    if (m->minmax)
        lane_minmax_int(v, k, mn, mx);
    uint64_t *cnt = m->lcount.p;
    int64_t *il = m->ilsum.p, *lmn = m->ilmin.p, *lmx = m->ilmax.p;
    for (size_t l = 0; l < LANES && l < k; l++) {
        size_t x = (size_t)w * LANES + (size_t)((lane0 + l) % LANES);
        cnt[x] += k / LANES + (l < k % LANES);
        il[x] += s[l];
        if (m->minmax) {
            lmn[x] = mn[l] < lmn[x] ? mn[l] : lmn[x];
            lmx[x] = mx[l] > lmx[x] ? mx[l] : lmx[x];
        }
    }
}

/* The int64 path of add_single: v[0..k) to owners[i] (NULL: owner 0). */
static void add_ints(metric_state *m, const int64_t *v, const uint32_t *owners, size_t k,
                     uint64_t lane0)
{
    if (!owners) {
        if (!k)
            return;
        int64_t s = 0;
        for (size_t i = 0; i < k; i++) /* the compiler vectorizes this */
            s += v[i];
        ((uint64_t *)m->count.p)[0] += k;
        ((int64_t *)m->isum.p)[0] += s;
        if (!m->minmax)
            return;
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (size_t i = 0; i < k; i++) {
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
        }
        /* int_value is non-decreasing: the min / max of the doubles are those of the ints */
        double *pmn = m->min.p, *pmx = m->max.p, dmn = int_value(m, mn), dmx = int_value(m, mx);
        *pmn = dmn < *pmn ? dmn : *pmn;
        *pmx = dmx > *pmx ? dmx : *pmx;
        return;
    }
    if (k && !m->per_doc && one_owner(owners, k)) {
        add_ints_one(m, v, owners[0], k, lane0);
        return;
    }
    uint64_t *cnt = m->lcount.p;
    int64_t *il = m->ilsum.p;
    if (!m->minmax) {
        for (size_t i = 0; i < k; i++) {
            size_t x = (size_t)owners[i] * LANES + (size_t)((lane0 + i) % LANES);
            cnt[x]++;
            il[x] += v[i];
        }
        return;
    }
    int64_t *lmn = m->ilmin.p, *lmx = m->ilmax.p;
    for (size_t i = 0; i < k; i++) {
        size_t x = (size_t)owners[i] * LANES + (size_t)((lane0 + i) % LANES);
        cnt[x]++;
        il[x] += v[i];
        lmn[x] = v[i] < lmn[x] ? v[i] : lmn[x];
        lmx[x] = v[i] > lmx[x] ? v[i] : lmx[x];
    }
}

/* The values of docs[0..k) (k <= SC__AGG_PAIRS; a single-valued field) as doubles into
 * m->dbuf; v: their doc values already read, or NULL. */
static void window_values(metric_state *m, const sc_agg_spec *spec, const uint32_t *docs, size_t k,
                          const int64_t *v)
{
    if (m->rt) { /* computed for these docs, exactly the doubles a column would give back */
        sc_runtime_doubles_eval(m->rt, docs, k, m->dbuf);
        return;
    }
    if (!v) {
        sc_dv_numeric_get_single_batch(&m->f.num, docs, k, m->ibuf);
        v = m->ibuf;
    }
    if (spec->vtype == SC_AGG_V_DOUBLE)
        for (size_t i = 0; i < k; i++)
            m->dbuf[i] = sc_agg_sortable_to_double(v[i]);
    else
        for (size_t i = 0; i < k; i++)
            m->dbuf[i] = (double)v[i];
    if (spec->scaling_factor > 0) /* as sc__agg_doc_doubles: value / factor */
        for (size_t i = 0; i < k; i++)
            m->dbuf[i] /= spec->scaling_factor;
}

/* add_lane of dbuf[0..k) (k > 0) all to owner w, doc i into lane (lane0 + i) % LANES: the lanes'
 * Kahan sums, counts, min and max in registers over the window, four lanes side by side, each
 * lane taking its values in the same order through the same steps as add_lane (the same bits),
 * stored back once. */
static void add_lanes_one(metric_state *m, uint32_t w, size_t k, uint64_t lane0, bool squares)
{
    double s[LANES], sc[LANES], q[LANES], qc[LANES], mn[LANES], mx[LANES];
    uint64_t n[LANES];
    size_t xs[LANES];
    double *ls = m->lsum.p, *lsc = m->lsum_c.p, *lq = m->lsq.p, *lqc = m->lsq_c.p;
    double *lmn = m->lmin.p, *lmx = m->lmax.p;
    uint64_t *cnt = m->lcount.p;
    for (size_t l = 0; l < LANES; l++) {
        size_t x = (size_t)w * LANES + (size_t)((lane0 + l) % LANES);
        xs[l] = x;
        s[l] = ls[x], sc[l] = lsc[x], q[l] = lq[x], qc[l] = lqc[x];
        mn[l] = lmn[x], mx[l] = lmx[x], n[l] = 0;
    }
    const double *v = m->dbuf;
    size_t i = 0;
    for (; i + LANES <= k; i += LANES)
        for (size_t l = 0; l < LANES; l++) {
            kahan(&s[l], &sc[l], v[i + l]);
            if (squares)
                kahan(&q[l], &qc[l], v[i + l] * v[i + l]);
        }
    for (size_t j = i; j < k; j++) {
        kahan(&s[j - i], &sc[j - i], v[j]);
        if (squares)
            kahan(&q[j - i], &qc[j - i], v[j] * v[j]);
    }
    if (m->minmax)
        lane_minmax_double(v, k, mn, mx);
    for (size_t l = 0; l < LANES; l++) {
        size_t x = xs[l];
        n[l] = k / LANES + (l < k % LANES);
        cnt[x] += n[l];
        ls[x] = s[l], lsc[x] = sc[l];
        if (squares)
            lq[x] = q[l], lqc[x] = qc[l];
        if (m->minmax)
            lmn[x] = mn[l], lmx[x] = mx[l];
    }
}

/* The values of docs[0..k) (k <= SC__AGG_PAIRS; a single-valued field) to owners[i] (NULL: all
 * to owner 0), doc i into lane (lane0 + i) % LANES. pre: their doc values as another metric
 * on the same column read them (sc__agg_metrics_add_owned), or NULL to read them into ibuf. */
static void add_single(metric_state *m, const sc_agg_spec *spec, const uint32_t *docs,
                       const uint32_t *owners, size_t k, uint64_t lane0, bool squares,
                       const int64_t *pre)
{
    const int64_t *v = pre;
    if (m->int_ok && !m->inexact && !squares && !m->rt) {
        if (!v) {
            sc_dv_numeric_get_single_batch(&m->f.num, docs, k, m->ibuf);
            v = m->ibuf;
        }
        if (int_take(m, v, k)) {
            add_ints(m, v, owners, k, lane0);
            return;
        }
    }
    window_values(m, spec, docs, k, v);
    if (!owners) {
        add_window(m, m->dbuf, k, squares);
        return;
    }
    if (k && !m->per_doc && one_owner(owners, k)) {
        add_lanes_one(m, owners[0], k, lane0, squares);
        return;
    }
    for (size_t i = 0; i < k; i++)
        add_lane(m, owners[i], (size_t)((lane0 + i) % LANES), m->dbuf[i], squares);
}

static sc_status metric_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                size_t n)
{
    metric_state *m = c->state;
    const sc_agg_spec *spec = c->spec;
    bool squares = spec->kind == SC_AGG_EXTENDED_STATS;
    if (owners) {
        uint32_t mx = 0;
        for (size_t i = 0; i < n; i++)
            mx = owners[i] > mx ? owners[i] : mx;
        SC_TRY(ensure(c, mx));
    } else {
        SC_TRY(ensure(c, 0));
    }
    if (spec->kind == SC_AGG_VALUE_COUNT && m->f.has_ss && !m->f.has_num) {
        for (size_t i = 0; i < n; i++) {
            uint32_t k = sc_dv_sorted_set_count(&m->f.ss, docs[i]);
            if (!k && spec->has_missing)
                k = 1;
            ((uint64_t *)m->count.p)[owners ? owners[i] : 0] += k;
        }
        return SC_OK;
    }
    if (m->rt || (m->f.has_num && sc_dv_numeric_is_single(&m->f.num))) {
        /* every doc has one value: one batch read, then a plain loop (scaled_float too: with
         * the histogram's batch path, Rally's distance_amount_agg on 2M taxis went from 37.6 to
         * 23.0 ms p50, back to back) */
        for (size_t off = 0; off < n; off += SC__AGG_PAIRS) {
            size_t k = n - off < SC__AGG_PAIRS ? n - off : SC__AGG_PAIRS;
            add_single(m, spec, docs + off, owners ? owners + off : NULL, k, 0, squares, NULL);
        }
        return SC_OK;
    }
    double vals[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = sc__agg_doc_doubles(&m->f, spec, docs[i], vals, 256);
        for (size_t j = 0; j < k; j++) {
            int_take_one(m, vals[j]);
            add_value(m, owners ? owners[i] : 0, vals[j], squares);
        }
    }
    return SC_OK;
}

static sc_status metric_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    metric_state *m = c->state;
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 0);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    if (owner < m->count.len) {
        r->count = ((const uint64_t *)m->count.p)[owner];
        r->sum = ((const double *)m->sum.p)[owner];
        r->sum_c = ((const double *)m->sum_c.p)[owner];
        r->sum_sq = ((const double *)m->sq.p)[owner];
        r->sum_sq_c = ((const double *)m->sq_c.p)[owner];
        r->min = ((const double *)m->min.p)[owner];
        r->max = ((const double *)m->max.p)[owner];
        bool scaled = m->factor > 0;
        int64_t is = scaled ? int_total(m, owner) : ((const int64_t *)m->isum.p)[owner];
        if (is && scaled) /* the exact total, converted and divided once (see metric_state) */
            kahan(&r->sum, &r->sum_c, (double)is / m->factor);
        else if (is) /* exact (see int_fold) */
            r->sum += (double)is;
        for (size_t l = 0; l < LANES; l++) {
            size_t x = (size_t)owner * LANES + l;
            double ls = ((const double *)m->lsum.p)[x];
            int64_t il = scaled ? 0 : ((const int64_t *)m->ilsum.p)[x];
            if (il)
                ls += (double)il;
            kahan(&r->sum, &r->sum_c, ls);
            kahan(&r->sum, &r->sum_c, -((const double *)m->lsum_c.p)[x]);
            kahan(&r->sum_sq, &r->sum_sq_c, ((const double *)m->lsq.p)[x]);
            kahan(&r->sum_sq, &r->sum_sq_c, -((const double *)m->lsq_c.p)[x]);
            r->count += ((const uint64_t *)m->lcount.p)[x];
            r->min = fold_min(r->min, ((const double *)m->lmin.p)[x]);
            r->max = fold_max(r->max, ((const double *)m->lmax.p)[x]);
            int64_t imn = ((const int64_t *)m->ilmin.p)[x], imx = ((const int64_t *)m->ilmax.p)[x];
            if (imn != INT64_MAX)
                r->min = fold_min(r->min, int_value(m, imn));
            if (imx != INT64_MIN)
                r->max = fold_max(r->max, int_value(m, imx));
        }
    }
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops metric_ops = {
    .seg_begin = metric_seg_begin,
    .collect = metric_collect,
    .seg_end = metric_seg_end,
    .build = metric_build,
};

bool sc__agg_metric_fusable(const sc__agg_coll *c)
{
    if (c->ops != &metric_ops || c->n_subs)
        return false;
    switch (c->spec->kind) {
    case SC_AGG_MIN:
    case SC_AGG_MAX:
    case SC_AGG_SUM:
    case SC_AGG_AVG:
    case SC_AGG_STATS:
    case SC_AGG_EXTENDED_STATS: break;
    default: return false;
    }
    const metric_state *m = c->state;
    return m->rt || (m->f.has_num && sc_dv_numeric_is_single(&m->f.num));
}

sc_status sc__agg_metric_add_owned(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                   size_t k, uint32_t max_owner, uint64_t lane0)
{
    SC_TRY(ensure(c, max_owner));
    add_single(c->state, c->spec, docs, owners, k, lane0, c->spec->kind == SC_AGG_EXTENDED_STATS,
               NULL);
    return SC_OK;
}

/* Whether the fusable metrics a and b read the same doc-values column (the same field, no
 * runtime field): then b may take the window values a read. */
static bool same_column(const sc__agg_coll *a, const sc__agg_coll *b)
{
    const metric_state *ma = a->state, *mb = b->state;
    return !ma->rt && !mb->rt && a->spec->field && b->spec->field &&
           strcmp(a->spec->field, b->spec->field) == 0;
}

sc_status sc__agg_metrics_add_owned(sc__agg_coll *const *subs, size_t n, const uint32_t *docs,
                                    const uint32_t *owners, size_t k, uint32_t max_owner,
                                    uint64_t lane0)
{
    for (size_t j = 0; j < n; j++) {
        sc__agg_coll *c = subs[j];
        /* the first earlier metric on the same column read the window itself (an earlier one
         * on that column would be first): its ibuf holds the values (add_single reads them
         * into ibuf on every path but a runtime field's) */
        const int64_t *pre = NULL;
        bool per_doc = ((const metric_state *)c->state)->per_doc;
        for (size_t i = 0; i < j && !pre && !per_doc; i++)
            if (same_column(subs[i], c))
                pre = ((const metric_state *)subs[i]->state)->ibuf;
        SC_TRY(ensure(c, max_owner));
        add_single(c->state, c->spec, docs, owners, k, lane0,
                   c->spec->kind == SC_AGG_EXTENDED_STATS, pre);
    }
    return SC_OK;
}

bool sc__agg_metric_int_fusable(const sc__agg_coll *c)
{
    if (c->ops != &metric_ops || (c->spec->kind != SC_AGG_SUM && c->spec->kind != SC_AGG_AVG))
        return false;
    const metric_state *m = c->state;
    return m->int_ok && !m->inexact && !m->rt && !m->minmax;
}

sc_status sc__agg_metric_int_lanes(sc__agg_coll *c, uint32_t max_owner, sc__agg_int_lanes *out)
{
    SC_TRY(ensure(c, max_owner));
    metric_state *m = c->state;
    out->v = m->ibuf;
    out->count = m->lcount.p;
    out->sum = m->ilsum.p;
    return SC_OK;
}

sc_status sc__agg_metric_int_window(sc__agg_coll *c, const uint32_t *docs, size_t k,
                                    uint32_t max_owner, sc__agg_int_lanes *out, bool *taken)
{
    metric_state *m = c->state;
    SC_TRY(ensure(c, max_owner));
    /* as add_single: the same read and the same bound, so the same fold point */
    sc_dv_numeric_get_single_batch(&m->f.num, docs, k, m->ibuf);
    *taken = int_take(m, m->ibuf, k);
    return sc__agg_metric_int_lanes(c, max_owner, out);
}

sc_status sc__agg_metric_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    metric_state *m = sc_arena_calloc(a, 1, sizeof *m);
    if (!m)
        return sc__agg_oom(a);
    m->ibuf = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *m->ibuf);
    m->dbuf = sc_arena_alloc(a, SC__AGG_PAIRS * sizeof *m->dbuf);
    if (!m->ibuf || !m->dbuf)
        return sc__agg_oom(a);
    const sc_agg_spec *spec = c->spec;
    m->factor = spec->scaling_factor > 0 ? spec->scaling_factor : 0;
    m->int_ok = spec->vtype != SC_AGG_V_DOUBLE && spec->kind != SC_AGG_EXTENDED_STATS &&
                !(c->ctx->so && c->ctx->so->compensated_sums);
    m->per_doc = c->ctx->so && c->ctx->so->per_doc_windows;
    m->minmax = spec->kind == SC_AGG_MIN || spec->kind == SC_AGG_MAX ||
                spec->kind == SC_AGG_STATS || spec->kind == SC_AGG_EXTENDED_STATS;
    c->state = m;
    c->ops = &metric_ops;
    return SC_OK;
}
