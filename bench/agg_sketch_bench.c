/* The sketch aggregations over one real segment of N docs (default 1M) under match_all,
 * single-threaded, best of R runs: thread CPU ns per collected doc for cardinality on a keyword
 * field (200k distinct terms) and on a long (precision 14 and 18), percentiles on a long and on a
 * double, and both as subs of terms on a 100-value keyword (a sketch per bucket).
 * Usage: agg_sketch_bench [n_docs, default 1000000] [runs, default 5]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/searcher.h"

#include "agg_bench_util.h"
#include "bench_util.h"

static sc_agg_spec *spec(sc_agg_kind kind, const char *field, sc_agg_vtype vt)
{
    sc_agg_spec *s = bench_agg_spec(kind, field, vt);
    s->keyed = true;
    return s;
}

#define with_sub bench_agg_with_sub

static void run_case(const char *name, sc_agg_spec *top, const sc_searcher *s, uint32_t n, int runs)
{
    sc_agg_spec *root = with_sub(spec(SC_AGG_ROOT, NULL, 0), top);
    double best = 1e18;
    size_t peak = 0;
    for (int r = 0; r < runs; r++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        /* thread CPU time: the development machine is shared, so wall time overstates */
        uint64_t total;
        double ms = bench_agg_collect_ms(name, root, s, sc_query_match_all(&a), &a,
                                         CLOCK_THREAD_CPUTIME_ID, &total);
        if (total != n) {
            fprintf(stderr, "%s: %llu docs matched, not %u\n", name, (unsigned long long)total, n);
            exit(1);
        }
        bench_keep_best(&best, ms);
        peak = a.peak_bytes;
        sc_arena_fini(&a);
    }
    printf("%-36s %8.2f ms  %6.2f ns/doc  arena peak %6.2f MiB\n", name, best, best * 1e6 / n,
           (double)peak / (1 << 20));
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    char dir[64];
    if (bench_dir_make("agg_sketch", dir, sizeof dir) != 0)
        return 1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    uint64_t x = 88172645463325252ull;
    char user[24], code[16];
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        snprintf(user, sizeof user, "user-%06u", (unsigned)(x % 200000));
        snprintf(code, sizeof code, "code-%02u", (unsigned)((x >> 20) % 100));
        int64_t num = (int64_t)((x >> 24) % 1000000);
        int64_t dv = sc_agg_double_to_sortable((double)((x >> 32) % 100000) / 7.0);
        sc_index_token ut = {sc_slice_cstr(user), 0}, ct = {sc_slice_cstr(code), 0};
        sc_index_field f[4] = {bench_keyword("u", &ut), bench_keyword("c", &ct),
                               bench_numeric("n", SC_FIELD_DOCVALUES, &num),
                               bench_numeric("d", SC_FIELD_DOCVALUES, &dv)};
        if (bench_add_doc(b, f, 4) != 0)
            return 1;
    }
    sc_segment *seg;
    if (bench_segment_write(b, dir, &seg) != 0)
        return 1;
    sc_searcher_segment ss = {.seg = seg};
    sc_searcher s = {&ss, 1};
    printf("agg_sketch_bench: %u docs, match_all, best of %d\n", n, runs);
    run_case("cardinality keyword (200k terms)", spec(SC_AGG_CARDINALITY, "u", SC_AGG_V_KEYWORD),
             &s, n, runs);
    run_case("cardinality long", spec(SC_AGG_CARDINALITY, "n", SC_AGG_V_LONG), &s, n, runs);
    sc_agg_spec *c18 = spec(SC_AGG_CARDINALITY, "n", SC_AGG_V_LONG);
    c18->hll_precision = 18;
    run_case("cardinality long (threshold 40000)", c18, &s, n, runs);
    run_case("percentiles long", spec(SC_AGG_PERCENTILES, "n", SC_AGG_V_LONG), &s, n, runs);
    run_case("percentiles double", spec(SC_AGG_PERCENTILES, "d", SC_AGG_V_DOUBLE), &s, n, runs);
    run_case("terms keyword > cardinality(long)",
             with_sub(spec(SC_AGG_TERMS, "c", SC_AGG_V_KEYWORD),
                      spec(SC_AGG_CARDINALITY, "n", SC_AGG_V_LONG)),
             &s, n, runs);
    run_case("terms keyword > percentiles(long)",
             with_sub(spec(SC_AGG_TERMS, "c", SC_AGG_V_KEYWORD),
                      spec(SC_AGG_PERCENTILES, "n", SC_AGG_V_LONG)),
             &s, n, runs);
    sc_segment_unref(seg);
    return bench_dir_remove(dir);
}
