/* Sketch benchmark and error measurement for the cardinality and percentiles sketches
 * (src/search/hll.c, src/search/tdigest.c). Usage:
 *   sketch_bench speed          add throughput in ns per value (hashing, HLL, t-digest)
 *   sketch_bench hll-error [T]  HLL relative error over T trials per precision, n = 1..10M
 *   sketch_bench td-error [T]   t-digest rank error per quantile over T trials per data set
 * Times are thread CPU time (the development machine is shared). The numbers in
 * docs/aggregations-sketches.md come from this program (release build). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/hll.h"
#include "search/tdigest.h"

#include "../tests/unit/search/exact_stats.h"
#include "../tests/unit/search/splitmix.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(sc_status st)
{
    if (st != SC_OK) {
        fprintf(stderr, "sketch_bench: %s\n", sc_status_str(st));
        exit(1);
    }
}

static volatile uint64_t sink;

/* ---- speed ---------------------------------------------------------------------------------- */

#define N_SPEED 4000000

static void speed_hll(const uint64_t *hashes, uint32_t p, size_t n_distinct, int batch)
{
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        sc_hll *h;
        check(sc_hll_new(p, NULL, NULL, &h));
        double t0 = now_s();
        if (batch) {
            for (size_t i = 0; i < N_SPEED; i += 1024)
                check(sc_hll_add_batch(h, hashes + i, N_SPEED - i < 1024 ? N_SPEED - i : 1024));
        } else {
            for (size_t i = 0; i < N_SPEED; i++)
                check(sc_hll_add(h, hashes[i]));
        }
        double ns = (now_s() - t0) * 1e9 / N_SPEED;
        sink += sc_hll_estimate(h);
        sc_hll_free(h);
        if (ns < best)
            best = ns;
    }
    printf("hll p=%-2u %-8s %8zu distinct: %6.2f ns/value\n", p, batch ? "batch" : "add",
           n_distinct, best);
}

static void speed_td(const double *vals, double compression, const char *what, int batch)
{
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        sc_tdigest *t;
        check(sc_tdigest_new(compression, NULL, NULL, &t));
        double t0 = now_s();
        if (batch)
            check(sc_tdigest_add_batch(t, vals, N_SPEED));
        else
            for (size_t i = 0; i < N_SPEED; i++)
                check(sc_tdigest_add(t, vals[i], 1));
        sink += (uint64_t)sc_tdigest_quantile(t, 0.5);
        double ns = (now_s() - t0) * 1e9 / N_SPEED;
        sc_tdigest_free(t);
        if (ns < best)
            best = ns;
    }
    printf("tdigest compression=%-4g %-8s %-8s: %6.2f ns/value\n", compression, what,
           batch ? "batch" : "add", best);
}

static void run_speed(void)
{
    uint64_t *hashes = malloc(sizeof(uint64_t) * N_SPEED);
    char *keys = malloc((size_t)N_SPEED * 16);
    uint8_t *lens = malloc(N_SPEED);
    for (size_t i = 0; i < N_SPEED; i++)
        lens[i] = (uint8_t)snprintf(keys + i * 16, 16, "user-%zu", i * 7919);
    double t0 = now_s();
    for (size_t i = 0; i < N_SPEED; i++)
        hashes[i] = sc_hll_hash_bytes(sc_slice_make(keys + i * 16, lens[i]));
    printf("murmur3 x64_128 of 6..13-byte keys: %6.2f ns/value\n", (now_s() - t0) * 1e9 / N_SPEED);
    free(keys);
    free(lens);
    t0 = now_s();
    uint64_t acc = 0;
    for (size_t i = 0; i < N_SPEED; i++)
        acc += sc_hll_hash_u64(i);
    sink += acc;
    printf("fmix64 of integers: %6.2f ns/value\n", (now_s() - t0) * 1e9 / N_SPEED);
    for (size_t i = 0; i < N_SPEED; i++)
        hashes[i] = rnd();
    speed_hll(hashes, 14, N_SPEED, 0);
    speed_hll(hashes, 14, N_SPEED, 1);
    speed_hll(hashes, 18, N_SPEED, 0);
    speed_hll(hashes, 18, N_SPEED, 1);
    /* few distinct values: every add is a set lookup of a value already present */
    for (size_t i = 0; i < N_SPEED; i++)
        hashes[i] = sc_hll_hash_u64(rnd() % 2000);
    speed_hll(hashes, 14, 2000, 0);
    speed_hll(hashes, 14, 2000, 1);
    free(hashes);

    double *vals = malloc(sizeof(double) * N_SPEED);
    for (size_t i = 0; i < N_SPEED; i++)
        vals[i] = -log(unif()) * 100;
    speed_td(vals, 100, "random", 0);
    speed_td(vals, 100, "random", 1);
    speed_td(vals, 200, "random", 1);
    qsort(vals, N_SPEED, sizeof(double), cmp_d);
    speed_td(vals, 100, "sorted", 1);
    free(vals);
}

/* ---- HLL error ------------------------------------------------------------------------------ */

#define MAX_POINTS 128

static void run_hll_error(int trials)
{
    static const uint32_t ps[] = {4, 8, 10, 12, 14, 16, 18};
    uint64_t batch[1024];
    printf("p   m       1.04/sqrt(m)  worst-RMS  (at n)     worst|bias|  worst-single  "
           "trials\n");
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        uint32_t p = ps[k];
        int t_p = p >= 16 ? (trials + 4) / 5 : trials;
        double sum[MAX_POINTS] = {0}, sum_sq[MAX_POINTS] = {0};
        uint64_t at[MAX_POINTS];
        double worst_single = 0;
        int n_points = 0;
        for (int t = 0; t < t_p; t++) {
            sc_hll *h;
            check(sc_hll_new(p, NULL, NULL, &h));
            uint64_t n = 0, next = 1;
            int pt = 0;
            while (next <= 10000000 && pt < MAX_POINTS) {
                while (n < next) {
                    size_t b = next - n < 1024 ? (size_t)(next - n) : 1024;
                    for (size_t i = 0; i < b; i++)
                        batch[i] = rnd();
                    check(sc_hll_add_batch(h, batch, b));
                    n += b;
                }
                double rel = ((double)sc_hll_estimate(h) - (double)n) / (double)n;
                sum[pt] += rel;
                sum_sq[pt] += rel * rel;
                at[pt++] = n;
                worst_single = fmax(worst_single, fabs(rel));
                next = next < 10 ? next + 1 : next + next / 8;
            }
            n_points = pt;
            sc_hll_free(h);
        }
        double worst_rms = 0, worst_bias = 0;
        uint64_t worst_at = 0;
        for (int i = 0; i < n_points; i++) {
            double rms = sqrt(sum_sq[i] / t_p), bias = fabs(sum[i] / t_p);
            if (rms > worst_rms) {
                worst_rms = rms;
                worst_at = at[i];
            }
            worst_bias = fmax(worst_bias, bias);
        }
        printf("%-3u %-7u %8.3f%%     %7.3f%%  (%8llu)  %8.3f%%     %8.3f%%     %d\n", p, 1u << p,
               100 * 1.04 / sqrt((double)(1u << p)), 100 * worst_rms, (unsigned long long)worst_at,
               100 * worst_bias, 100 * worst_single, t_p);
    }
}

/* ---- t-digest error ------------------------------------------------------------------------- */

static double draw(int d)
{
    double s = 0;
    switch (d) {
    case 0: return unif() * 100;
    case 1:
        for (int i = 0; i < 12; i++)
            s += unif();
        return (s - 6) * 10 + 50;
    case 2: return -log(unif()) * 10;
    default:
        for (int i = 0; i < 12; i++)
            s += unif();
        return exp((s - 6) * 1.5);
    }
}

static const double QS[] = {0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999};
#define N_QS (sizeof QS / sizeof QS[0])

static void run_td_error(int trials)
{
    static const char *const names[] = {"uniform", "normal", "exponential", "lognormal"};
    static const double comps[] = {100, 200};
    size_t n = 100000;
    double *vals = malloc(sizeof(double) * n), *sorted = malloc(sizeof(double) * n);
    for (size_t c = 0; c < 2; c++) {
        printf("compression %g, n=%zu, %d trials x 4 distributions x (random, sorted, 8-way "
               "merge)\nq        max-rank-err  rms-rank-err  max-cdf-err\n",
               comps[c], n, trials);
        double max_err[N_QS] = {0}, sq[N_QS] = {0}, max_cdf[N_QS] = {0};
        int runs = 0;
        for (int t = 0; t < trials; t++) {
            for (int d = 0; d < 4; d++) {
                for (size_t i = 0; i < n; i++)
                    vals[i] = sorted[i] = draw(d);
                qsort(sorted, n, sizeof(double), cmp_d);
                for (int mode = 0; mode < 3; mode++) {
                    sc_tdigest *td;
                    check(sc_tdigest_new(comps[c], NULL, NULL, &td));
                    if (mode < 2) {
                        check(sc_tdigest_add_batch(td, mode ? sorted : vals, n));
                    } else {
                        sc_tdigest *parts[8];
                        for (int j = 0; j < 8; j++)
                            check(sc_tdigest_new(comps[c], NULL, NULL, &parts[j]));
                        for (size_t i = 0; i < n; i++)
                            check(sc_tdigest_add(parts[rnd() % 8], vals[i], 1));
                        for (int j = 0; j < 8; j++) {
                            check(sc_tdigest_merge(td, parts[j]));
                            sc_tdigest_free(parts[j]);
                        }
                    }
                    for (size_t k = 0; k < N_QS; k++) {
                        double e =
                            fabs(exact_cdf(sorted, n, sc_tdigest_quantile(td, QS[k])) - QS[k]);
                        double idx = QS[k] * (double)(n - 1);
                        size_t lo = (size_t)idx;
                        double xq = sorted[lo] + (idx - (double)lo) * (sorted[lo + 1] - sorted[lo]);
                        double ce = fabs(sc_tdigest_cdf(td, xq) - QS[k]);
                        max_err[k] = fmax(max_err[k], e);
                        max_cdf[k] = fmax(max_cdf[k], ce);
                        sq[k] += e * e;
                    }
                    runs++;
                    sc_tdigest_free(td);
                }
            }
        }
        for (size_t k = 0; k < N_QS; k++)
            printf("%-8g %10.5f    %10.5f    %10.5f\n", QS[k], max_err[k], sqrt(sq[k] / runs),
                   max_cdf[k]);
        (void)names;
    }
    free(vals);
    free(sorted);
}

int main(int argc, char **argv)
{
    rng = 0x5eed; /* fixed: the measurements are repeatable */
    const char *cmd = argc > 1 ? argv[1] : "speed";
    int trials = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(cmd, "speed") == 0)
        run_speed();
    else if (strcmp(cmd, "hll-error") == 0)
        run_hll_error(trials > 0 ? trials : 50);
    else if (strcmp(cmd, "td-error") == 0)
        run_td_error(trials > 0 ? trials : 10);
    else {
        fprintf(stderr, "usage: sketch_bench [speed | hll-error [trials] | td-error [trials]]\n");
        return 2;
    }
    return 0;
}
