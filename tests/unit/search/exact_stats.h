/* Exact statistics over a sorted array of doubles, the oracle of the percentiles sketch
 * (tdigest_test, agg_sketch_test, bench/sketch_bench.c): numpy-linear quantiles, the fractions
 * below and at or below a value, and the mid-rank cdf. Header-only. */
#ifndef SC_TESTS_SEARCH_EXACT_STATS_H
#define SC_TESTS_SEARCH_EXACT_STATS_H

#include <stddef.h>

/* qsort comparator of doubles, ascending */
static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy.percentile(..., method="linear") over sorted s[0..n) */
static inline double exact_quantile(const double *s, size_t n, double q)
{
    double idx = q * (double)(n - 1);
    size_t lo = (size_t)idx;
    if (lo >= n - 1)
        return s[n - 1];
    return s[lo] + (idx - (double)lo) * (s[lo + 1] - s[lo]);
}

/* The numbers of values of sorted s[0..n) below x and at or below x. */
static inline void exact_counts(const double *s, size_t n, double x, size_t *lt, size_t *le)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    *lt = lo;
    hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    *le = lo;
}

/* The fractions of sorted s below x and at or below x. */
static inline void exact_range(const double *s, size_t n, double x, double *lt, double *le)
{
    size_t a, b;
    exact_counts(s, n, x, &a, &b);
    *lt = (double)a / (double)n;
    *le = (double)b / (double)n;
}

/* (number below x + half the number equal to x) / n over sorted s */
static inline double exact_cdf(const double *s, size_t n, double x)
{
    size_t lt, le;
    exact_counts(s, n, x, &lt, &le);
    return ((double)lt + (double)(le - lt) / 2) / (double)n;
}

#endif
