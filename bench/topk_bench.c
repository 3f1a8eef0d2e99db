/* Top-10 without totals on one segment, scry in process (bench/topk_bench.sh runs it beside
 * bench/LuceneTopkBench.java, which builds the same documents from the same generator): issue
 * 18's date range (`range` on a date not in doc order, `size: 10`, `track_total_hits: false`)
 * and a term query sorted by a numeric field (`sort: views desc|asc`, `size: 10`, no total).
 * Documents: `date` (epoch millis, uniform over five years, one per doc), `views` (0..99,999,
 * missing on 1 doc in 20; many ties), `tag` (keyword: a 50 %, b 10 %, c 1 %, z the rest).
 * Single threaded, timed by thread CPU time (the machine is shared), median of R runs after
 * warm-up. Range cases also time the two ways alone (the points into a bitset, and the
 * doc-values scan that stops at 10 hits) to show the per-segment choice.
 * Usage: topk_bench [n_docs (1000000)] [runs (200)]. Prints TSV:
 * case, hits, median_us, points_us, scan_us, docs_read, top (the hits' doc ids). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "index/builder.h"
#include "index/docvalues.h"
#include "index/segment.h"
#include "search/range.h"
#include "search/searcher.h"
#include "search/sort.h"

#include "bench_util.h"

#define DATE_BASE 1577836800000LL            /* 2020-01-01 */
#define DATE_SPAN (5LL * 365 * 86400 * 1000) /* five years of millis */
#define DAY_MS (86400LL * 1000)

static uint64_t xs = 88172645463325252ull;

static uint64_t next(void)
{
    xs ^= xs << 13;
    xs ^= xs >> 7;
    xs ^= xs << 17;
    return xs;
}

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static uint64_t last_top[10]; /* doc ids of the last run's hits (compared with Lucene's) */

typedef enum {
    RANGE_SEARCH,
    RANGE_POINTS,
    RANGE_SCAN,
    SORT_SEARCH
} op_kind;

typedef struct bcase {
    const char *name;
    int64_t lo, hi;  /* range */
    const char *tag; /* sort */
    bool desc;
} bcase;

/* One run of case c the given way; returns the hits found, *read the docs whose sort values
 * were read (sort) or 0. */
static size_t run(const sc_searcher *sr, const sc_segment *seg, const bcase *c, op_kind how,
                  uint64_t *read)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    size_t hits = 0;
    *read = 0;
    if (how == SORT_SEARCH) {
        sc_query *q = sc_query_term(&a, sc_slice_cstr("tag"), sc_slice_cstr(c->tag));
        sc_sort_spec sp = {
            .kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("views"), .desc = c->desc};
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = 10;
        o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
        sc_search_result res;
        sc_sorted_result out;
        if (sc_search_sorted(sr, q, &o, &sp, 1, NULL, &a, &res, &out) != SC_OK)
            exit(1);
        hits = out.n_hits;
        for (size_t i = 0; i < hits && i < 10; i++)
            last_top[i] = out.hits[i].global_doc;
        *read = out.stats.collected;
    } else if (how == RANGE_SEARCH) {
        sc_query *q = sc_query_range(&a, sc_slice_cstr("date"), &c->lo, &c->hi, 1);
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = 10;
        o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
        sc_search_result res;
        if (sc_search_execute(sr, q, &o, &a, &res) != SC_OK)
            exit(1);
        hits = res.n_hits;
        for (size_t i = 0; i < hits && i < 10; i++)
            last_top[i] = res.hits[i].global_doc;
    } else {
        const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("date"));
        sc_bkd bkd;
        sc_dv_numeric dv;
        if (sc_segment_points(seg, f, &bkd) != SC_OK || sc_dv_numeric_open(seg, f, &dv) != SC_OK)
            exit(1);
        sc_range_source src = {&bkd, &dv, sc_segment_n_docs(seg)};
        sc_doc_iter *it;
        if (sc_range_iter(&a, &src, &c->lo, &c->hi, 1, UINT64_MAX, 1.0f,
                          how == RANGE_POINTS ? SC_RANGE_POINTS : SC_RANGE_DOC_VALUES, &it,
                          NULL) != SC_OK)
            exit(1);
        uint32_t d;
        while (hits < 10 && (d = sc_doc_iter_next(it)) != SC_DOC_END)
            last_top[hits++] = d;
    }
    sc_arena_fini(&a);
    return hits;
}

static double time_case(const sc_searcher *sr, const sc_segment *seg, const bcase *c, op_kind how,
                        int runs, size_t *hits, uint64_t *read)
{
    double *t = malloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < 3; i++)
        *hits = run(sr, seg, c, how, read);
    for (int i = 0; i < runs; i++) {
        double t0 = cpu_us();
        *hits = run(sr, seg, c, how, read);
        t[i] = cpu_us() - t0;
    }
    double m = median(t, runs);
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
    int runs = argc > 2 ? atoi(argv[2]) : 200;
    char dir[64];
    if (bench_dir_make("topk", dir, sizeof dir) != 0)
        return 1;
    uint64_t t0 = sc_clock_now_ns();
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    static const char *const tags[] = {"a", "b", "c", "z"};
    for (uint32_t i = 0; i < n; i++) {
        int64_t date = DATE_BASE + (int64_t)(next() % (uint64_t)DATE_SPAN);
        uint64_t v = next();
        int64_t views = (int64_t)((v >> 8) % 100000);
        uint64_t r = next() % 1000;
        const char *tag = tags[r < 500 ? 0 : r < 600 ? 1 : r < 610 ? 2 : 3];
        sc_index_token tok = {.term = sc_slice_cstr(tag), .position = 0};
        sc_index_field f[3];
        size_t nf = 0;
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("date"),
                                   .kind = SC_FIELD_NUMERIC,
                                   .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                                   .values = &date,
                                   .n_values = 1};
        if (v % 20 != 0)
            f[nf++] = (sc_index_field){.name = sc_slice_cstr("views"),
                                       .kind = SC_FIELD_NUMERIC,
                                       .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                                       .values = &views,
                                       .n_values = 1};
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("tag"),
                                   .kind = SC_FIELD_KEYWORD,
                                   .flags = SC_FIELD_INDEXED,
                                   .tokens = &tok,
                                   .n_tokens = 1};
        sc_index_doc doc = {
            .id = sc_slice_cstr("x"), .source = sc_slice_cstr(""), .fields = f, .n_fields = nf};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_segment *seg;
    if (bench_segment_write(b, dir, &seg) != 0)
        return 1;
    fprintf(stderr, "topk_bench: %u docs indexed in %.0f ms\n", n, ms_since(t0));
    sc_searcher_segment sseg = {seg, NULL, 0};
    sc_searcher sr = {&sseg, 1};
    int64_t lo = DATE_BASE + 1000 * DAY_MS;
    const bcase cases[] = {
        {"date_range_1h", lo, lo + DAY_MS / 24 - 1, NULL, false},
        {"date_range_1d", lo, lo + DAY_MS - 1, NULL, false},
        {"date_range_30d", lo, lo + 30 * DAY_MS - 1, NULL, false},
        {"date_range_1y", lo, lo + 365 * DAY_MS - 1, NULL, false},
        {"sort_views_desc_tag_a", 0, 0, "a", true},
        {"sort_views_desc_tag_b", 0, 0, "b", true},
        {"sort_views_desc_tag_c", 0, 0, "c", true},
        {"sort_views_asc_tag_b", 0, 0, "b", false},
    };
    printf("case\thits\tmedian_us\tpoints_us\tscan_us\tdocs_read\ttop\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bcase *c = &cases[i];
        size_t hits, h2;
        uint64_t read;
        if (c->tag) {
            double us = time_case(&sr, seg, c, SORT_SEARCH, runs, &hits, &read);
            printf("%s\t%zu\t%.1f\t-\t-\t%llu\t", c->name, hits, us, (unsigned long long)read);
        } else {
            double pu = time_case(&sr, seg, c, RANGE_POINTS, runs, &h2, &read);
            double su = time_case(&sr, seg, c, RANGE_SCAN, runs, &h2, &read);
            double us = time_case(&sr, seg, c, RANGE_SEARCH, runs, &hits, &read);
            printf("%s\t%zu\t%.1f\t%.1f\t%.1f\t-\t", c->name, hits, us, pu, su);
        }
        for (size_t k = 0; k < hits; k++)
            printf("%s%llu", k ? "," : "", (unsigned long long)last_top[k]);
        printf("\n");
        fflush(stdout);
    }
    sc_segment_unref(seg);
    return bench_dir_remove(dir) != 0;
}
