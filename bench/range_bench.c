/* Range count over N values (default 5M, one per doc, taxis-like total_amount: doubles with
 * two decimals in [0, 120) in the sortable-long encoding, docs in insertion order), BKD vs a
 * numeric doc-values scan of a real segment. Single-threaded, best of R runs per case.
 * Usage: range_bench [n_docs, default 5000000] [runs, default 5].
 * Cases: exact count without doc ids (sc_bkd_count), intersect into a bitset + popcount (what
 * a filter materializes), the same with the 10,000 cap (early termination), and the doc-values
 * scan (sc_range_count without points); ranges [5, 15), [50, 50.5) and [1, 119). Then
 * match_all sorted by the field (top 10 asc, top 1000 desc) with and without points pruning. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bitset.h"
#include "base/clock.h"
#include "index/bkd.h"
#include "index/builder.h"
#include "index/docvalues.h"
#include "index/segment.h"
#include "search/range.h"
#include "search/searcher.h"
#include "search/sort.h"

#include "bench_util.h"

static int64_t enc(double x)
{
    int64_t bits;
    memcpy(&bits, &x, 8);
    return bits ^ ((bits >> 63) & INT64_MAX);
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 5000000u;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int64_t *v = malloc(sizeof(int64_t) * n);
    uint32_t *d = malloc(sizeof(uint32_t) * n);
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* skewed like fares: most between 5 and 30 */
        double amt = (double)(x % 12000) / 100.0;
        if (x % 4 != 0)
            amt = 5.0 + (double)((x >> 20) % 2500) / 100.0;
        v[i] = enc(amt);
        d[i] = i;
    }
    sc_buf buf = {0};
    uint64_t t0 = sc_clock_now_ns();
    if (sc_bkd_write(v, d, n, n, 0, &buf) != SC_OK)
        return 1;
    printf("bkd write: %u points in %.0f ms, %zu bytes (%.2f bytes/point)\n", n, ms_since(t0),
           buf.len, (double)buf.len / n);
    sc_bkd t;
    if (sc_bkd_open(sc_slice_make(buf.ptr, buf.len), &t) != SC_OK)
        return 1;

    /* the doc-values side: a real segment with the same values */
    char dir[64];
    if (bench_dir_make("range", dir, sizeof dir) != 0)
        return 1;
    t0 = sc_clock_now_ns();
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    for (uint32_t i = 0; i < n; i++) {
        sc_index_field f = {.name = sc_slice_cstr("total_amount"),
                            .kind = SC_FIELD_NUMERIC,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                            .values = &v[i],
                            .n_values = 1};
        sc_index_doc doc = {
            .id = sc_slice_cstr("x"), .source = sc_slice_cstr(""), .fields = &f, .n_fields = 1};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_segment *seg;
    if (bench_segment_write(b, dir, &seg) != 0)
        return 1;
    printf("segment with doc values: %.0f ms\n", ms_since(t0));
    sc_dv_numeric dv;
    if (sc_dv_numeric_open(seg, sc_segment_field(seg, sc_slice_cstr("total_amount")), &dv) != SC_OK)
        return 1;

    static const double ranges[][2] = {{5, 15}, {50, 50.5}, {1, 119}};
    sc_bitset bs;
    if (sc_bitset_init(&bs, n) != SC_OK)
        return 1;
    printf("%-14s %12s %12s %12s %12s %12s %10s\n", "range", "matches", "bkd_count_ms",
           "bkd_bitset_ms", "bkd_cap10k_ms", "dv_scan_ms", "dv/bitset");
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
        int64_t lo, hi;
        (void)sc_range_bounds(true, enc(ranges[r][0]), true, true, enc(ranges[r][1]), false, &lo,
                              &hi);
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        uint64_t c[4] = {0};
        for (int k = 0; k < runs; k++) {
            t0 = sc_clock_now_ns();
            if (sc_bkd_count(&t, lo, hi, &c[0]) != SC_OK)
                return 1;
            double ms = ms_since(t0);
            bench_keep_best(&best[0], ms);

            sc_bitset_clear_all(&bs);
            t0 = sc_clock_now_ns();
            if (sc_bkd_intersect(&t, lo, hi, &bs, 0, NULL) != SC_OK)
                return 1;
            c[1] = sc_bitset_count(&bs);
            ms = ms_since(t0);
            bench_keep_best(&best[1], ms);

            sc_range_source src = {&t, &dv, n};
            bool exact;
            t0 = sc_clock_now_ns();
            if (sc_range_count(&src, lo, hi, NULL, 10000, &c[2], &exact) != SC_OK)
                return 1;
            ms = ms_since(t0);
            bench_keep_best(&best[2], ms);

            sc_range_source dvsrc = {NULL, &dv, n};
            t0 = sc_clock_now_ns();
            if (sc_range_count(&dvsrc, lo, hi, NULL, 0, &c[3], NULL) != SC_OK)
                return 1;
            ms = ms_since(t0);
            bench_keep_best(&best[3], ms);
        }
        if (c[0] != c[1] || c[0] != c[3]) {
            fprintf(stderr, "count mismatch: %llu %llu %llu\n", (unsigned long long)c[0],
                    (unsigned long long)c[1], (unsigned long long)c[3]);
            return 1;
        }
        char name[32];
        snprintf(name, sizeof name, "[%g,%g)", ranges[r][0], ranges[r][1]);
        printf("%-14s %12llu %12.2f %12.2f %12.2f %12.2f %9.1fx\n", name, (unsigned long long)c[0],
               best[0], best[1], best[2], best[3], best[3] / best[1]);
    }
    sc_bitset_fini(&bs);

    /* through the searcher (the segment's own points): exact count (sc_search_count), exact
     * total with top 10 (track_total_hits true), and the default bounded total (10,000) */
    printf("\n%-14s %14s %16s %18s\n", "searcher", "count_ms", "top10_exact_ms",
           "top10_track10k_ms");
    {
        sc_searcher_segment sseg = {seg, NULL, 0};
        sc_searcher sr = {&sseg, 1};
        for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
            int64_t lo, hi;
            (void)sc_range_bounds(true, enc(ranges[r][0]), true, true, enc(ranges[r][1]), false,
                                  &lo, &hi);
            double best[3] = {1e30, 1e30, 1e30};
            uint64_t tot[3] = {0};
            for (int k = 0; k < runs; k++)
                for (int mode = 0; mode < 3; mode++) {
                    sc_arena a;
                    sc_arena_init(&a, 0);
                    sc_query *q = sc_query_range(&a, sc_slice_cstr("total_amount"), &lo, &hi, 1);
                    sc_search_options o;
                    sc_search_options_init(&o);
                    o.track_total_hits = mode == 2 ? 10000 : SC_TRACK_TOTAL_HITS_ALL;
                    sc_search_result res;
                    t0 = sc_clock_now_ns();
                    sc_status st = mode == 0 ? sc_search_count(&sr, q, &o, &a, &res)
                                             : sc_search_execute(&sr, q, &o, &a, &res);
                    double ms = ms_since(t0);
                    if (st != SC_OK)
                        return 1;
                    tot[mode] = res.total;
                    bench_keep_best(&best[mode], ms);
                    sc_arena_fini(&a);
                }
            if (tot[0] != tot[1] || tot[2] > tot[0])
                return 1;
            char name[32];
            snprintf(name, sizeof name, "[%g,%g)", ranges[r][0], ranges[r][1]);
            printf("%-14s %14.2f %16.2f %18.2f\n", name, best[0], best[1], best[2]);
        }
    }

    /* match_all sorted by the field: top 10 asc and top 1000 desc, doc values only (every doc
     * read) vs with the points pruning (competitive bitsets from the BKD) */
    printf("\n%-22s %12s %12s %10s %14s %8s\n", "sort (match_all)", "dv_only_ms", "points_ms",
           "speedup", "docs_read(pts)", "builds");
    static const struct {
        const char *name;
        bool desc;
        size_t k;
    } sorts[] = {{"asc size 10", false, 10}, {"desc size 1000", true, 1000}};
    for (size_t q = 0; q < 2; q++) {
        sc_sort_spec sp = {.kind = SC_SORT_BY_NUMERIC,
                           .field = sc_slice_cstr("total_amount"),
                           .desc = sorts[q].desc};
        double best[2] = {1e30, 1e30};
        uint64_t read = 0, builds = 0;
        uint64_t first[2] = {0, 0};
        for (int k = 0; k < runs; k++)
            for (int wp = 0; wp < 2; wp++) {
                sc_arena a;
                sc_arena_init(&a, 0);
                sc_sort_collector *c;
                if (sc_sort_collector_new(&a, &sp, 1, sorts[q].k, NULL, &c) != SC_OK)
                    return 1;
                sc_doc_iter *it = sc_iter_all(&a, n, 1.0f);
                t0 = sc_clock_now_ns();
                if (sc_sort_collector_collect(c, seg, 0, 0, it, wp ? &t : NULL) != SC_OK)
                    return 1;
                sc_sorted_hit *h;
                size_t m = sc_sort_collector_hits(c, &h);
                double ms = ms_since(t0);
                bench_keep_best(&best[wp], ms);
                first[wp] = m ? h[m - 1].global_doc : 0;
                if (wp) {
                    read = sc_sort_collector_stats(c)->collected;
                    builds = sc_sort_collector_stats(c)->competitive_builds;
                }
                sc_arena_fini(&a);
            }
        if (first[0] != first[1]) {
            fprintf(stderr, "sort mismatch\n");
            return 1;
        }
        printf("%-22s %12.2f %12.2f %9.1fx %14llu %8llu\n", sorts[q].name, best[0], best[1],
               best[0] / best[1], (unsigned long long)read, (unsigned long long)builds);
    }
    sc_segment_unref(seg);
    if (bench_dir_remove(dir) != 0)
        return 1;
    sc_vec_free(&buf);
    free(v);
    free(d);
    return 0;
}
