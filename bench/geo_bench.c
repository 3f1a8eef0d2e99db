/* Geo query counts over N points (default 2M, one per doc; taxi-like: 80% in a New York box,
 * 20% anywhere on the globe, same generator as bench/LuceneGeoBench.java), through the searcher
 * on one segment: the 2-D points tree ("g", points + doc values) vs the doc-values scan
 * ("d", index: false). Single-threaded, best of R runs per case; counts must agree.
 * Usage: geo_bench [n_docs, default 2000000] [runs, default 5]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "index/bkd2.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/geo.h"
#include "search/searcher.h"

#include "bench_util.h"

static uint64_t x = 88172645463325252ull;
static double unit(void)
{
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return (double)(x >> 11) / 9007199254740992.0;
}

static const struct {
    const char *name;
    sc_geo_shape s;
} cases[] = {
    {"box midtown", {SC_GEO_BOX, 40.80, 40.70, -74.02, -73.93, 0, 0, 0}},
    {"box nyc", {SC_GEO_BOX, 41.0, 40.5, -74.3, -73.7, 0, 0, 0}},
    {"box dateline", {SC_GEO_BOX, 30, -30, 170, -170, 0, 0, 0}},
    {"box europe", {SC_GEO_BOX, 60, 35, -10, 30, 0, 0, 0}},
    {"dist 1km", {SC_GEO_DISTANCE, 0, 0, 0, 0, 40.75, -73.98, 1000}},
    {"dist 20km", {SC_GEO_DISTANCE, 0, 0, 0, 0, 40.75, -73.98, 20000}},
    {"dist 2000km", {SC_GEO_DISTANCE, 0, 0, 0, 0, 48.85, 2.35, 2000000}},
};

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2000000u;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int64_t *v = malloc(sizeof(int64_t) * n);
    if (!v)
        return 1;
    for (uint32_t i = 0; i < n; i++) {
        double lat, lon;
        if (unit() < 0.8) {
            lat = 40.5 + 0.5 * unit();
            lon = -74.3 + 0.6 * unit();
        } else {
            lat = -90 + 180 * unit();
            lon = -180 + 360 * unit();
        }
        v[i] = (int64_t)(((uint64_t)(uint32_t)sc_geo_encode_lat(lat) << 32) |
                         (uint32_t)sc_geo_encode_lon(lon));
    }
    char dir[64];
    if (bench_dir_make("geo", dir, sizeof dir) != 0)
        return 1;
    uint64_t t0 = sc_clock_now_ns();
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    for (uint32_t i = 0; i < n; i++) {
        sc_index_field f[2] = {{.name = sc_slice_cstr("g"),
                                .kind = SC_FIELD_NUMERIC,
                                .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO,
                                .values = &v[i],
                                .n_values = 1},
                               {.name = sc_slice_cstr("d"),
                                .kind = SC_FIELD_NUMERIC,
                                .flags = SC_FIELD_DOCVALUES | SC_FIELD_GEO,
                                .values = &v[i],
                                .n_values = 1}};
        sc_index_doc doc = {
            .id = sc_slice_cstr("x"), .source = sc_slice_cstr(""), .fields = f, .n_fields = 2};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_segment *seg;
    if (bench_segment_write(b, dir, &seg) != 0)
        return 1;
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("g"));
    printf("segment of %u docs: %.0f ms; 2-D points section %.2f bytes/point\n", n, ms_since(t0),
           (double)fi->points_len / n);
    sc_searcher_segment sseg = {seg, NULL, 0};
    sc_searcher sr = {&sseg, 1};
    printf("%-14s %10s %12s %12s %10s %14s\n", "query", "matches", "points_ms", "dv_scan_ms",
           "dv/points", "leaves in/x");
    sc_bkd2 tree;
    if (sc_segment_points2(seg, fi, &tree) != SC_OK)
        return 1;
    sc_bitset scratch;
    if (sc_bitset_init(&scratch, n) != SC_OK)
        return 1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double best[2] = {1e30, 1e30};
        uint64_t tot[2] = {0};
        for (int k = 0; k < runs; k++)
            for (int m = 0; m < 2; m++) {
                sc_arena a;
                sc_arena_init(&a, 0);
                sc_query *q = sc_query_geo(&a, sc_slice_cstr(m ? "d" : "g"), &cases[c].s);
                sc_search_options o;
                sc_search_options_init(&o);
                o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
                sc_search_result res;
                t0 = sc_clock_now_ns();
                sc_status st = sc_search_count(&sr, q, &o, &a, &res);
                double ms = ms_since(t0);
                if (st != SC_OK)
                    return 1;
                tot[m] = res.total;
                bench_keep_best(&best[m], ms);
                sc_arena_fini(&a);
            }
        if (tot[0] != tot[1]) {
            fprintf(stderr, "%s: count mismatch %llu vs %llu\n", cases[c].name,
                    (unsigned long long)tot[0], (unsigned long long)tot[1]);
            return 1;
        }
        sc_geo_compiled g;
        sc_geo_compile(&cases[c].s, &g);
        sc_bkd2_shape shape = sc_geo_bkd2_shape(&g);
        sc_bkd2_stats stats;
        if (sc_bkd2_intersect(&tree, &shape, &scratch, &stats) != SC_OK)
            return 1;
        char leaves[32];
        snprintf(leaves, sizeof leaves, "%u/%u", stats.leaves_inside, stats.leaves_crossing);
        printf("%-14s %10llu %12.2f %12.2f %9.1fx %14s\n", cases[c].name,
               (unsigned long long)tot[0], best[0], best[1], best[1] / best[0], leaves);
    }
    sc_bitset_fini(&scratch);
    sc_segment_unref(seg);
    free(v);
    return bench_dir_remove(dir) == 0 ? 0 : 1;
}
