/* Merging t-digest (see tdigest.h): one array of weighted points, a sorted prefix of centroids
 * followed by an unsorted buffer; the exact phase keeps every sample, the digest phase merges the
 * buffer into centroids under the k1 scale function. Also the knot interpolation for quantile and
 * cdf and the versioned binary encoding of docs/aggregations-sketches.md. */
#include "search/tdigest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"

SC_ALLOC_POOL_DEFINE(sc_pool_search_tdigest, "search.tdigest");

typedef struct cent {
    double mean;
    uint64_t w;
} cent;

struct sc_tdigest {
    sc_alloc_pool *pool; /* with arena NULL */
    sc_arena *arena;     /* or NULL */
    double delta;        /* compression */
    uint64_t exact_limit;
    size_t buffer_cap; /* digest phase: unsorted points that trigger a merge */
    bool exact;
    cent *c; /* [0, n_sorted) sorted by mean; [n_sorted, len) unsorted */
    size_t n_sorted, len, cap;
    cent *tmp; /* digest phase: radix sort scratch of tmp_cap points, or NULL */
    size_t tmp_cap;
    uint64_t total;
    double min, max;
};

/* Memory comes from the arena when there is one (freeing is a no-op: replaced blocks stay in
 * the arena, whose budget counts them), else from the accounting pool. */
static sc_status oom(const sc_arena *arena)
{
    return arena && arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

sc_status sc_tdigest_new(double compression, sc_alloc_pool *pool, sc_arena *arena, sc_tdigest **out)
{
    *out = NULL;
    if (!(compression >= SC_TDIGEST_MIN_COMPRESSION && compression <= SC_TDIGEST_MAX_COMPRESSION))
        return SC_EINVAL;
    if (!pool)
        pool = &sc_pool_search_tdigest;
    sc_tdigest *t =
        arena ? sc_arena_calloc(arena, 1, sizeof *t) : sc_alloc_calloc(pool, 1, sizeof *t);
    if (!t)
        return oom(arena);
    t->pool = pool;
    t->arena = arena;
    t->delta = compression;
    t->exact_limit = (uint64_t)(SC_TDIGEST_EXACT_FACTOR * compression);
    /* Dunning's MergingDigest buffers about 5 * compression points between merges. */
    t->buffer_cap = (size_t)(5 * compression) < 32 ? 32 : (size_t)(5 * compression);
    t->exact = true;
    t->min = INFINITY;
    t->max = -INFINITY;
    *out = t;
    return SC_OK;
}

void sc_tdigest_free(sc_tdigest *t)
{
    if (!t || t->arena)
        return;
    sc_alloc_free(t->pool, t->c);
    sc_alloc_free(t->pool, t->tmp);
    sc_alloc_free(t->pool, t);
}

uint64_t sc_tdigest_count(const sc_tdigest *t)
{
    return t->total;
}

double sc_tdigest_min(const sc_tdigest *t)
{
    return t->total ? t->min : NAN;
}

double sc_tdigest_max(const sc_tdigest *t)
{
    return t->total ? t->max : NAN;
}

double sc_tdigest_compression(const sc_tdigest *t)
{
    return t->delta;
}

bool sc_tdigest_is_exact(const sc_tdigest *t)
{
    return t->exact;
}

size_t sc_tdigest_mem_bytes(const sc_tdigest *t)
{
    return sizeof *t + (t->c ? t->cap * sizeof(cent) : 0) +
           (t->tmp ? t->tmp_cap * sizeof(cent) : 0);
}

static sc_status reserve(sc_tdigest *t, size_t extra)
{
    if (t->len + extra <= t->cap)
        return SC_OK;
    size_t cap = t->cap ? t->cap : 16;
    while (cap < t->len + extra)
        cap *= 2;
    cent *c;
    if (t->arena) {
        c = sc_arena_alloc(t->arena, cap * sizeof(cent));
        if (c && t->len)
            memcpy(c, t->c, t->len * sizeof(cent));
    } else {
        c = sc_alloc_realloc(t->pool, t->c, cap * sizeof(cent));
    }
    if (!c)
        return oom(t->arena);
    t->c = c;
    t->cap = cap;
    return SC_OK;
}

/* ---- merging -------------------------------------------------------------------------------- */

/* Sorting by mean: an introsort (median-of-three quicksort, heapsort past 2 log2 n levels,
 * insertion sort below 16) with the comparison inlined, in place. qsort's indirect calls made
 * adding cost 75 ns per value; this halves it (bench/sketch_bench.c). */

static void swap_c(cent *a, cent *b)
{
    cent t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(cent *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        cent x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].mean > x.mean; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

static void sift_down(cent *a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && a[c + 1].mean > a[c].mean)
            c++;
        if (!(a[c].mean > a[i].mean))
            return;
        swap_c(&a[i], &a[c]);
        i = c;
    }
}

static void heap_sort(cent *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t i = n; i-- > 1;) {
        swap_c(&a[0], &a[i]);
        sift_down(a, 0, i);
    }
}

static void intro_sort(cent *a, size_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(a, n);
            return;
        }
        size_t mid = n / 2;
        if (a[mid].mean < a[0].mean)
            swap_c(&a[mid], &a[0]);
        if (a[n - 1].mean < a[0].mean)
            swap_c(&a[n - 1], &a[0]);
        if (a[n - 1].mean < a[mid].mean)
            swap_c(&a[n - 1], &a[mid]);
        double pivot = a[mid].mean;
        /* Hoare partition; a[0] <= pivot <= a[n - 1] keep both scans in bounds */
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i].mean < pivot)
                i++;
            while (a[j].mean > pivot)
                j--;
            if (i >= j)
                break;
            swap_c(&a[i], &a[j]);
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j + 1, n); recurse into the smaller side */
        size_t left = j + 1;
        if (left < n - left) {
            intro_sort(a, left, depth);
            a += left;
            n -= left;
        } else {
            intro_sort(a + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(a, n);
}

static void sort_points(cent *a, size_t n)
{
    int depth = 0;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_sort(a, n, depth);
}

/* A double's bits as an unsigned key in the same order (finite values only). */
static uint64_t radix_key(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u >> 63 ? ~u : u | (1ULL << 63);
}

/* LSD radix sort by mean, 8 bits a pass, through tmp (room for n); passes where every key has
 * the same digit (the sign and exponent bytes, mostly) are skipped. */
static void radix_sort(cent *a, cent *tmp, size_t n)
{
    uint32_t counts[8][256];
    memset(counts, 0, sizeof counts);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = radix_key(a[i].mean);
        for (int b = 0; b < 8; b++)
            counts[b][(k >> (8 * b)) & 255]++;
    }
    cent *src = a, *dst = tmp;
    uint64_t k0 = radix_key(a[0].mean);
    for (int b = 0; b < 8; b++) {
        uint32_t *cnt = counts[b];
        if (cnt[(k0 >> (8 * b)) & 255] == n)
            continue;
        uint32_t sum = 0;
        for (int d = 0; d < 256; d++) {
            uint32_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(radix_key(src[i].mean) >> (8 * b)) & 255]++] = src[i];
        cent *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(cent));
}

/* Sorts t's points: by radix through the scratch array when it can be had (kept for the next
 * flush, as this runs on every full buffer of the digest phase), else in place. Never fails. */
static void sort_all(sc_tdigest *t)
{
    size_t i = 1;
    while (i < t->len && t->c[i - 1].mean <= t->c[i].mean)
        i++;
    if (i >= t->len) /* already in order (ascending input): nothing to do */
        return;
    /* the scratch is for the digest phase's regular merges (buffer + centroids), not for the
     * one-time sort when leaving the exact phase */
    bool regular = !t->exact && t->len <= t->buffer_cap + (size_t)(4 * t->delta) + 64;
    if (t->len >= 128 && regular && t->tmp_cap < t->len) {
        cent *tmp;
        if (t->arena) {
            tmp = sc_arena_alloc(t->arena, t->cap * sizeof(cent));
        } else {
            tmp = sc_alloc_malloc(t->pool, t->cap * sizeof(cent));
            if (tmp)
                sc_alloc_free(t->pool, t->tmp);
        }
        if (tmp) {
            t->tmp = tmp;
            t->tmp_cap = t->cap;
        }
    }
    if (t->len >= 128 && t->tmp_cap >= t->len)
        radix_sort(t->c, t->tmp, t->len);
    else
        sort_points(t->c, t->len);
}

/* The largest cumulative fraction a centroid starting at q0 may reach: k1^-1(k1(q0) + 1). */
static double q_limit(double q0, double delta)
{
    double k = delta / (2 * M_PI) * asin(2 * q0 - 1) + 1;
    if (k >= delta / 4)
        return 1.0;
    return (1 + sin(2 * M_PI * k / delta)) / 2;
}

/* Sorts all points and, in the digest phase, merges neighbours in one pass while the merged
 * centroid stays within 1 in k (the merging t-digest). In place; no allocation. */
static void flush(sc_tdigest *t)
{
    if (t->n_sorted == t->len)
        return;
    sort_all(t);
    if (t->exact) {
        t->n_sorted = t->len;
        return;
    }
    double total = (double)t->total;
    size_t out = 0;
    cent cur = t->c[0];
    double w_before = 0, limit = q_limit(0, t->delta) * total;
    for (size_t i = 1; i < t->len; i++) {
        cent x = t->c[i];
        if (w_before + (double)cur.w + (double)x.w <= limit) {
            cur.w += x.w;
            cur.mean += (x.mean - cur.mean) * ((double)x.w / (double)cur.w);
        } else {
            t->c[out++] = cur;
            w_before += (double)cur.w;
            limit = q_limit(w_before / total, t->delta) * total;
            cur = x;
        }
    }
    t->c[out++] = cur;
    /* incremental means can drift past the exact extremes by an ulp */
    if (t->c[0].mean < t->min)
        t->c[0].mean = t->min;
    if (t->c[out - 1].mean > t->max)
        t->c[out - 1].mean = t->max;
    t->len = t->n_sorted = out;
}

/* Replays the exact phase's points into centroids, then trims the array from its 20 *
 * compression points to what the digest phase needs (centroids + buffer). */
static void leave_exact(sc_tdigest *t)
{
    t->exact = false;
    t->n_sorted = 0;
    flush(t);
    /* room for the most centroids a merge leaves (about compression; 2x to be safe) */
    size_t need = t->buffer_cap + (size_t)(2 * t->delta) + 16;
    if (need < t->len + 1)
        return;
    if (t->cap <= 2 * need)
        return;
    cent *c;
    if (t->arena) {
        c = sc_arena_alloc(t->arena, need * sizeof(cent));
        if (c)
            memcpy(c, t->c, t->len * sizeof(cent));
    } else {
        c = sc_alloc_realloc(t->pool, t->c, need * sizeof(cent));
    }
    if (c) { /* else keep the larger array */
        t->c = c;
        t->cap = need;
    }
}

/* Leaves the exact phase once the total passes the limit. */
static void after_add(sc_tdigest *t)
{
    if (t->exact && t->total > t->exact_limit) {
        leave_exact(t);
    } else if (!t->exact && t->len - t->n_sorted >= t->buffer_cap) {
        flush(t);
    }
}

sc_status sc_tdigest_add(sc_tdigest *t, double x, uint64_t w)
{
    if (!isfinite(x) || w == 0)
        return SC_EINVAL;
    if (t->total + w < t->total)
        return SC_ELIMIT;
    SC_TRY(reserve(t, 1));
    t->c[t->len++] = (cent){x, w};
    t->total += w;
    if (x < t->min)
        t->min = x;
    if (x > t->max)
        t->max = x;
    after_add(t);
    return SC_OK;
}

sc_status sc_tdigest_add_batch(sc_tdigest *t, const double *xs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        SC_TRY(sc_tdigest_add(t, xs[i], 1));
    return SC_OK;
}

sc_status sc_tdigest_merge(sc_tdigest *dst, const sc_tdigest *src)
{
    if (src->total == 0)
        return SC_OK;
    if (dst->total + src->total < dst->total)
        return SC_ELIMIT;
    SC_TRY(reserve(dst, src->len));
    memcpy(dst->c + dst->len, src->c, src->len * sizeof(cent));
    dst->len += src->len;
    dst->total += src->total;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    if (dst->exact && !src->exact) {
        leave_exact(dst);
    } else {
        after_add(dst);
    }
    return SC_OK;
}

size_t sc_tdigest_n_centroids(sc_tdigest *t)
{
    flush(t);
    return t->len;
}

void sc_tdigest_centroid(const sc_tdigest *t, size_t i, double *mean, uint64_t *weight)
{
    *mean = t->c[i].mean;
    *weight = t->c[i].w;
}

/* ---- quantile and cdf ------------------------------------------------------------------------
 * Knots map a sample index (0 .. total - 1) to a value: (0, min), then each point's index range
 * [a, b] at its mean (the exact phase spans all w copies of a value; a digest centroid sits at
 * the centre of its span), then (total - 1, max). Between knots values are linear. */

typedef struct knot {
    double a, b, v;
} knot;

static knot knot_at(const sc_tdigest *t, size_t i, double left)
{
    double w = (double)t->c[i].w;
    if (t->exact)
        return (knot){left, left + w - 1, t->c[i].mean};
    double mid = left + (w - 1) / 2;
    return (knot){mid, mid, t->c[i].mean};
}

double sc_tdigest_quantile(sc_tdigest *t, double q)
{
    if (t->total == 0 || isnan(q))
        return NAN;
    if (q <= 0)
        return t->min;
    if (q >= 1)
        return t->max;
    flush(t);
    double idx = q * (double)(t->total - 1), left = 0;
    knot prev = {0, 0, t->min};
    for (size_t i = 0; i <= t->len; i++) {
        double last = (double)(t->total - 1);
        knot k = i < t->len ? knot_at(t, i, left) : (knot){last, last, t->max};
        if (i < t->len)
            left += (double)t->c[i].w;
        if (idx < k.a) {
            double v = prev.v + (idx - prev.b) / (k.a - prev.b) * (k.v - prev.v);
            return v < t->min ? t->min : v > t->max ? t->max : v;
        }
        if (idx <= k.b)
            return k.v;
        prev = k;
    }
    return t->max;
}

static double cdf_exact(const sc_tdigest *t, double x)
{
    double below = 0, equal = 0;
    for (size_t i = 0; i < t->len; i++) {
        if (t->c[i].mean < x)
            below += (double)t->c[i].w;
        else if (t->c[i].mean == x)
            equal += (double)t->c[i].w;
        else
            break;
    }
    return (below + equal / 2) / (double)t->total;
}

double sc_tdigest_cdf(sc_tdigest *t, double x)
{
    if (t->total == 0 || isnan(x))
        return NAN;
    if (x < t->min)
        return 0;
    if (x > t->max)
        return 1;
    flush(t);
    if (t->exact)
        return cdf_exact(t, x);
    /* the index range where the knot map equals x (a point when x falls between knots) */
    double lo = NAN, hi = NAN, left = 0, last = (double)(t->total - 1);
    knot prev = {0, 0, t->min};
    if (t->min == x)
        lo = hi = 0;
    for (size_t i = 0; i <= t->len; i++) {
        knot k = i < t->len ? knot_at(t, i, left) : (knot){last, last, t->max};
        if (i < t->len)
            left += (double)t->c[i].w;
        if (k.v == x) {
            if (isnan(lo))
                lo = k.a;
            hi = k.b;
        } else if (k.v > x) {
            if (isnan(lo))
                lo = hi = prev.b + (x - prev.v) / (k.v - prev.v) * (k.a - prev.b);
            break;
        }
        prev = k;
    }
    double r = ((lo + hi) / 2 + 0.5) / (double)t->total;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

sc_status sc_tdigest_mad(sc_tdigest *t, double *out)
{
    *out = NAN;
    if (t->total == 0)
        return SC_OK;
    double median = sc_tdigest_quantile(t, 0.5);
    sc_tdigest *dev;
    SC_TRY(sc_tdigest_new(t->delta, t->pool, NULL, &dev));
    sc_status st = SC_OK;
    for (size_t i = 0; i < t->len && st == SC_OK; i++)
        st = sc_tdigest_add(dev, fabs(t->c[i].mean - median), t->c[i].w);
    if (st == SC_OK)
        *out = sc_tdigest_quantile(dev, 0.5);
    sc_tdigest_free(dev);
    return st;
}

/* ---- encoding (grammar in docs/aggregations-sketches.md) ------------------------------------ */

enum {
    FLAG_EXACT = 1
};

static void put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}

static double get_f64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    double d;
    memcpy(&d, &u, 8);
    return d;
}

sc_status sc_tdigest_encode(sc_tdigest *t, sc_buf *out)
{
    flush(t);
    size_t need = 4 + 8 + SC_VARINT_MAX_BYTES + 16 + t->len * (8 + SC_VARINT_MAX_BYTES);
    SC_TRY(sc_vec_reserve(out, need));
    uint8_t *p = out->ptr + out->len, *start = p;
    *p++ = 'T';
    *p++ = 'D';
    *p++ = SC_TDIGEST_ENCODING_VERSION;
    *p++ = t->exact ? FLAG_EXACT : 0;
    put_f64(p, t->delta);
    p += 8;
    p += sc_varint_put(p, t->len);
    if (t->len) {
        put_f64(p, t->min);
        put_f64(p + 8, t->max);
        p += 16;
    }
    for (size_t i = 0; i < t->len; i++) {
        put_f64(p, t->c[i].mean);
        p += 8;
        p += sc_varint_put(p, t->c[i].w);
    }
    out->len += (size_t)(p - start);
    return SC_OK;
}

/* Reads the points after the header into t, validating each; SC_ECORRUPT or SC_ENOMEM. */
static sc_status decode_points(sc_tdigest *t, const uint8_t *p, const uint8_t *end, uint64_t n)
{
    if (n == 0)
        return p == end && t->exact ? SC_OK : SC_ECORRUPT;
    if (end - p < 16)
        return SC_ECORRUPT;
    t->min = get_f64(p);
    t->max = get_f64(p + 8);
    p += 16;
    if (!isfinite(t->min) || !isfinite(t->max) || t->min > t->max)
        return SC_ECORRUPT;
    SC_TRY(reserve(t, (size_t)n));
    double prev = t->min;
    for (uint64_t i = 0; i < n; i++) {
        if (end - p < 9)
            return SC_ECORRUPT;
        double mean = get_f64(p);
        p += 8;
        const uint8_t *vstart = p;
        uint64_t w;
        if (!(mean >= prev && mean <= t->max) || sc_varint_get(&p, end, &w) != SC_OK ||
            (size_t)(p - vstart) != sc_varint_len(w) || w == 0 || t->total + w < t->total)
            return SC_ECORRUPT;
        t->c[t->len++] = (cent){mean, w};
        t->total += w;
        prev = mean;
    }
    if (p != end)
        return SC_ECORRUPT;
    if (t->exact &&
        (t->total > t->exact_limit || t->c[0].mean != t->min || t->c[t->len - 1].mean != t->max))
        return SC_ECORRUPT;
    t->n_sorted = t->len;
    return SC_OK;
}

sc_status sc_tdigest_decode(sc_slice in, sc_alloc_pool *pool, sc_arena *arena, sc_tdigest **out)
{
    *out = NULL;
    if (in.len < 13 || in.ptr[0] != 'T' || in.ptr[1] != 'D' ||
        in.ptr[2] != SC_TDIGEST_ENCODING_VERSION || (in.ptr[3] & ~FLAG_EXACT) != 0)
        return SC_ECORRUPT;
    double delta = get_f64(in.ptr + 4);
    const uint8_t *p = in.ptr + 12, *end = in.ptr + in.len, *vstart = p;
    uint64_t n;
    if (!(delta >= SC_TDIGEST_MIN_COMPRESSION && delta <= SC_TDIGEST_MAX_COMPRESSION) ||
        sc_varint_get(&p, end, &n) != SC_OK || (size_t)(p - vstart) != sc_varint_len(n) ||
        n > (uint64_t)(end - p) / 9)
        return SC_ECORRUPT;
    sc_tdigest *t;
    SC_TRY(sc_tdigest_new(delta, pool, arena, &t));
    t->exact = (in.ptr[3] & FLAG_EXACT) != 0;
    sc_status st = decode_points(t, p, end, n);
    if (st != SC_OK) {
        sc_tdigest_free(t);
        return st;
    }
    *out = t;
    return SC_OK;
}
