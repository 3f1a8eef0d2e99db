/* Log-linear latency histogram and small statistics helpers; see histogram.h. */
#include "base/histogram.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_COUNT (1u << SC_HISTOGRAM_SUB_BITS)  /* exact values below this */
#define HALF (1u << (SC_HISTOGRAM_SUB_BITS - 1)) /* linear sub-buckets per power of two */

void sc_histogram_init(sc_histogram *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

size_t sc_histogram_bucket_of(uint64_t value)
{
    if (value < SUB_COUNT)
        return (size_t)value;
    unsigned e = 63u - (unsigned)__builtin_clzll(value); /* >= SUB_BITS */
    unsigned shift = e - (SC_HISTOGRAM_SUB_BITS - 1);
    uint64_t m = value >> shift; /* in [HALF, 2 * HALF) */
    return SUB_COUNT + (size_t)(e - SC_HISTOGRAM_SUB_BITS) * HALF + (size_t)(m - HALF);
}

uint64_t sc_histogram_bucket_low(size_t bucket)
{
    if (bucket < SUB_COUNT)
        return bucket;
    size_t k = bucket - SUB_COUNT;
    unsigned e = (unsigned)(k / HALF) + SC_HISTOGRAM_SUB_BITS;
    uint64_t m = HALF + k % HALF;
    return m << (e - (SC_HISTOGRAM_SUB_BITS - 1));
}

uint64_t sc_histogram_bucket_high(size_t bucket)
{
    if (bucket < SUB_COUNT)
        return bucket;
    size_t k = bucket - SUB_COUNT;
    unsigned e = (unsigned)(k / HALF) + SC_HISTOGRAM_SUB_BITS;
    unsigned shift = e - (SC_HISTOGRAM_SUB_BITS - 1);
    return sc_histogram_bucket_low(bucket) + ((uint64_t)1 << shift) - 1;
}

void sc_histogram_record_n(sc_histogram *h, uint64_t value, uint64_t count)
{
    if (count == 0)
        return;
    h->counts[sc_histogram_bucket_of(value)] += count;
    h->n += count;
    h->sum += (double)value * (double)count;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

void sc_histogram_record(sc_histogram *h, uint64_t value)
{
    sc_histogram_record_n(h, value, 1);
}

void sc_histogram_merge(sc_histogram *dst, const sc_histogram *src)
{
    if (src->n == 0)
        return;
    for (size_t i = 0; i < SC_HISTOGRAM_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->n += src->n;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t sc_histogram_percentile(const sc_histogram *h, double pct)
{
    if (h->n == 0)
        return 0;
    if (pct <= 0)
        return h->min;
    if (pct >= 100)
        return h->max;
    uint64_t rank = (uint64_t)ceil(pct / 100.0 * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < SC_HISTOGRAM_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = sc_histogram_bucket_high(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

double sc_histogram_mean(const sc_histogram *h)
{
    return h->n ? h->sum / (double)h->n : 0.0;
}

double sc_stats_mean(const double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

double sc_stats_stddev(const double *v, size_t n)
{
    if (n < 2)
        return 0.0;
    double m = sc_stats_mean(v, n), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sc_stats_median(const double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    double *c = malloc(n * sizeof(*c));
    if (!c) /* degrade to the mean rather than fail: only reports depend on it */
        return sc_stats_mean(v, n);
    memcpy(c, v, n * sizeof(*c));
    qsort(c, n, sizeof(*c), cmp_double);
    double r = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
    free(c);
    return r;
}

double sc_stats_min(const double *v, size_t n)
{
    double r = n ? v[0] : 0.0;
    for (size_t i = 1; i < n; i++)
        r = v[i] < r ? v[i] : r;
    return r;
}

double sc_stats_max(const double *v, size_t n)
{
    double r = n ? v[0] : 0.0;
    for (size_t i = 1; i < n; i++)
        r = v[i] > r ? v[i] : r;
    return r;
}

double sc_stats_geomean(const double *v, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] > 0) {
            s += log(v[i]);
            k++;
        }
    }
    return k ? exp(s / (double)k) : 0.0;
}
