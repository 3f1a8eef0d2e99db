/* Small helpers shared by the benchmark programs that build a real segment (geo_bench,
 * range_bench): wall-clock milliseconds, best-of bookkeeping, a scratch directory under /tmp
 * and writing + opening one segment. Header-only; each bench is its own program. */
#ifndef SC_BENCH_UTIL_H
#define SC_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/clock.h"
#include "index/builder.h"
#include "index/segment.h"

/* Milliseconds since t0 (sc_clock_now_ns). */
static inline double ms_since(uint64_t t0)
{
    return (double)(sc_clock_now_ns() - t0) / 1e6;
}

/* Keeps the smallest time of the runs in *best. */
static inline void bench_keep_best(double *best, double ms)
{
    if (ms < *best)
        *best = ms;
}

/* Makes the empty directory /tmp/scry_<tag>_bench_<pid> in dir. 0, or -1 when it cannot. */
static inline int bench_dir_make(const char *tag, char *dir, size_t dir_cap)
{
    snprintf(dir, dir_cap, "/tmp/scry_%s_bench_%d", tag, (int)getpid());
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Removes the directory of bench_dir_make. 0, or -1 when it cannot. */
static inline int bench_dir_remove(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes the builder as segment "s" in dir, frees it and opens the segment. 0 or -1. */
static inline int bench_segment_write(sc_segment_builder *b, const char *dir, sc_segment **out)
{
    sc_status st = sc_segment_builder_write(b, dir, "s", NULL);
    sc_segment_builder_free(b);
    return st == SC_OK && sc_segment_open(dir, "s", out) == SC_OK ? 0 : -1;
}

#endif
