/* Latency histogram (HDR-style, log-linear buckets) and small statistics helpers for the
 * benchmark driver. Values are unsigned integers (the driver records microseconds). Values
 * below 256 are exact; above, each power of two is split into 128 linear sub-buckets, so any
 * reported value is within 1/128 (0.8%) of the true one. Recording is O(1) and allocation-free;
 * one histogram per thread, merged at the end. Not thread-safe. */
#ifndef SC_BASE_HISTOGRAM_H
#define SC_BASE_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define SC_HISTOGRAM_SUB_BITS 8
#define SC_HISTOGRAM_BUCKETS                                                                       \
    ((1u << SC_HISTOGRAM_SUB_BITS) +                                                               \
     (64u - SC_HISTOGRAM_SUB_BITS) * (1u << (SC_HISTOGRAM_SUB_BITS - 1)))

typedef struct sc_histogram {
    uint64_t n;   /* values recorded */
    uint64_t min; /* exact smallest value (UINT64_MAX when empty) */
    uint64_t max; /* exact largest value (0 when empty) */
    double sum;   /* exact sum, for the mean */
    uint64_t counts[SC_HISTOGRAM_BUCKETS];
} sc_histogram;

/* Empties the histogram (caller's storage, about 60 KB: allocate it, do not put it on a small
 * stack). */
void sc_histogram_init(sc_histogram *h);

/* Records one value. O(1). */
void sc_histogram_record(sc_histogram *h, uint64_t value);

/* Records `count` copies of one value. */
void sc_histogram_record_n(sc_histogram *h, uint64_t value, uint64_t count);

/* Adds every value of src into dst. O(buckets). */
void sc_histogram_merge(sc_histogram *dst, const sc_histogram *src);

/* The value at percentile pct (0..100): the smallest bucket whose cumulative count reaches
 * ceil(pct/100 * n), reported as the bucket's highest value clamped to [min, max]. pct <= 0
 * gives min, pct >= 100 gives max; an empty histogram gives 0. O(buckets). */
uint64_t sc_histogram_percentile(const sc_histogram *h, double pct);

/* Arithmetic mean of the recorded values; 0 when empty. */
double sc_histogram_mean(const sc_histogram *h);

/* Bucket index of a value and the [lowest, highest] values sharing that bucket (exposed for
 * tests and for exporting the histogram). */
size_t sc_histogram_bucket_of(uint64_t value);
uint64_t sc_histogram_bucket_low(size_t bucket);
uint64_t sc_histogram_bucket_high(size_t bucket);

/* Statistics over small arrays of doubles (per-repetition QPS and the like). Empty input gives
 * 0 (and stddev of fewer than two values is 0). The array is not modified. */
double sc_stats_mean(const double *v, size_t n);
double sc_stats_stddev(const double *v, size_t n); /* sample standard deviation (n - 1) */
double sc_stats_median(const double *v, size_t n); /* mean of the two middle values if n even */
double sc_stats_min(const double *v, size_t n);
double sc_stats_max(const double *v, size_t n);
/* Geometric mean of the positive values (non-positive ones are skipped); 0 if none. */
double sc_stats_geomean(const double *v, size_t n);

#endif
