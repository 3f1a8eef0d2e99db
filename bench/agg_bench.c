/* Aggregations over one real segment of N docs (default 1M), single-threaded, best of R runs,
 * ns per segment doc: terms on a keyword field (100 distinct values, single-valued, taxis-like
 * rate codes; top level without subs = the ordinal-count path), terms + avg sub, terms on a
 * long, histogram (interval 5) and date_histogram (calendar day) — these two count from
 * points under match_all —, avg and stats; then under a range query on "t" over half the
 * docs: date_histogram on "t" (points again, within the range) and, through constant_score
 * (doc values, 4,096-doc bitset windows), the date_histogram, a histogram and terms; and the two
 * Rally operations that were slowest against Lucene: distance_amount_agg (a histogram of a
 * scaled_float "sd" in [0, 50) with interval 1 and a stats sub-aggregation on the scaled_float
 * "sm", under a range query matching every doc), autohisto_agg (auto_date_histogram on "t",
 * 20 buckets, under the range query on "t": from points; then the same docs under
 * constant_score: from doc values), autohisto_metrics (Rally's
 * auto_date_histogram_with_metrics: 10 buckets, minimum_interval day, stats of "sm", "tip"
 * and "sd", same range: the rung from the trees, then one pass; then under constant_score:
 * recorded and replayed) and avg_tip_percent_aggregation (an avg of the
 * runtime field tip / fare over the doubles "tip" and "fare" under a range fare > 0), the last
 * twice: evaluated for the collected docs (as served) and as a whole column first (the earlier
 * path, sc_agg_shard_options.runtime_columns); then composite (two keyword sources, a scaled
 * histogram, a calendar-day date_histogram) and multi_terms of the two keywords, size 10,
 * under match_all; then Rally's date_histogram_fixed_interval_with_metrics (10 days > stats
 * of "sm", "tip" and "sd") and _with_metrics_agg (10 days > min, max and avg of "sm", avg of
 * "sd") under the range 2015-01-01 to 2015-03-01 on "t", Rally's single-source composites
 * (composite-histogram, composite-date_histogram-daily/weekly/monthly of the pickup time "pt"
 * under that range; composite-geotile_grid-precision-8/12/15 of the pickup point "pl" under
 * 2015-01-01 to 2015-02-01 on "t"), and avg_passenger_count_filtered_aggregation (avg of "pc" under
 * the term "2" on "rc" and "sm" > 60), LuceneAggBench's queries on the taxis file. With
 * AGG_BENCH_TAXIS=FILE (a `scry gen taxis` ndjson file, the one bench/LuceneAggBench.java indexes),
 * "sd", "sm", "tip", "fare" and "t" are the first n_docs docs' trip_distance, total_amount,
 * tip_amount, fare_amount and dropoff_datetime (epoch ms, UTC, read as LuceneAggBench reads it)
 * instead of generated values, and autohisto_agg's range is LuceneAggBench's and Rally's
 * (2015-01-01 to 2015-01-21 inclusive). Times are CPU time: best and median of the runs; "hits" is
 * the matching docs. With AGG_BENCH_DIGEST=1 each case also prints a hash of its buckets' keys and
 * counts (to compare two builds' answers). Usage: agg_bench [n_docs, default 1000000] [runs,
 * default 5] [name filter]. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "index/bkd2.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/runtime.h"
#include "search/searcher.h"

#include "agg_bench_util.h"
#include "bench_util.h"

static sc_agg_spec *spec(sc_agg_kind kind, const char *field, sc_agg_vtype vt)
{
    sc_agg_spec *s = bench_agg_spec(kind, field, vt);
    if (kind == SC_AGG_HISTOGRAM || kind == SC_AGG_DATE_HISTOGRAM) {
        s->min_doc_count = 0;
        s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    }
    return s;
}

static sc_agg_spec *root_of(sc_agg_spec *top)
{
    return bench_agg_with_sub(spec(SC_AGG_ROOT, NULL, 0), top);
}

/* 0: match_all; 1: a range query on "t" over its middle half (points count a histogram on "t"
 * within it); 2: that range under constant_score (the same docs through doc values); 3: a
 * range on "sd" matching every doc (Rally's trip_distance filter); 4: "fare" > 0 (Rally's
 * fare_amount filter); 5: "t" from 2015-01-01 to 2015-01-21 inclusive (Rally's autohisto_agg
 * range, days 0-20 of the generated values); 6: that range under constant_score. */
static int query_kind;

/* the shard options of every case (runtime fields) */
static sc_agg_shard_options shard_opts = {.n_shards = 1};

static const char *only; /* run only the cases whose name contains it (argv[3]) */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Rally's avg_passenger_count_filtered_aggregation query: a bool filter of the term "2" on
 * "rc" (rate_code_id) and "sm" (total_amount, scaled by 100) > 60, i.e. >= 6001. Exits on an
 * error. */
static const sc_query *filtered_query(sc_arena *a)
{
    int64_t lo = 6001, hi = INT64_MAX;
    sc_query *b = sc_query_bool(a);
    if (!b ||
        sc_query_bool_add(a, b, SC_OCCUR_FILTER,
                          sc_query_term(a, sc_slice_cstr("rc"), sc_slice_cstr("2"))) != SC_OK ||
        sc_query_bool_add(a, b, SC_OCCUR_FILTER,
                          sc_query_range(a, sc_slice_cstr("sm"), &lo, &hi, 1)) != SC_OK)
        exit(1);
    return b;
}

/* A digest of result r (FNV-1a over every bucket's keys and doc count, recursively), to
 * compare two builds' answers (AGG_BENCH_DIGEST=1). */
static uint64_t digest(const sc_agg_result *r, uint64_t h, uint64_t *n_buckets, uint64_t *sum)
{
    if (!r)
        return h;
    for (size_t i = 0; i < r->n_buckets; i++) {
        const sc_agg_bucket *b = &r->buckets[i];
        uint64_t words[3] = {(uint64_t)b->key, 0, b->doc_count};
        memcpy(&words[1], &b->dkey, 8);
        for (size_t k = 0; k < sizeof words; k++)
            h = (h ^ ((const uint8_t *)words)[k]) * 0x100000001b3u;
        for (size_t k = 0; k < b->bkey.len; k++)
            h = (h ^ b->bkey.ptr[k]) * 0x100000001b3u;
        *n_buckets += 1;
        *sum += b->doc_count;
        for (uint32_t j = 0; b->subs && j < b->n_subs; j++)
            h = digest(b->subs[j], h, n_buckets, sum);
    }
    return h;
}

static void run_case(const char *name, const sc_agg_spec *root, const sc_searcher *s, uint32_t n,
                     int runs)
{
    if (only && !strstr(name, only))
        return;
    double *all = calloc((size_t)runs, sizeof *all);
    uint64_t hits = 0;
    if (!all)
        exit(1);
    for (int r = 0; r < runs; r++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        int64_t lo = INT64_C(1420070400000) + INT64_C(22) * 86400000,
                hi = INT64_C(1420070400000) + INT64_C(67) * 86400000;
        sc_query *rq = sc_query_range(&a, sc_slice_cstr("t"), &lo, &hi, 1);
        int64_t alo = INT64_C(1420070400000), ahi = alo + INT64_C(21) * 86400000 - 1;
        sc_query *aq = sc_query_range(&a, sc_slice_cstr("t"), &alo, &ahi, 1);
        int64_t dlo = 0, dhi = 4999;      /* trip_distance in [0, 50) */
        int64_t flo = 1, fhi = INT64_MAX; /* fare > 0: sortable longs from nextUp(0) */
        /* [2015-01-01, 2015-03-01): Rally's date_histogram_*_with_metrics range */
        int64_t mlo = INT64_C(1420070400000), mhi = INT64_C(1425168000000) - 1;
        /* [2015-01-01, 2015-02-01): Rally's composite-terms and composite-geotile_grid range */
        int64_t jhi = INT64_C(1422748800000) - 1;
        const sc_query *q =
            query_kind == 0   ? sc_query_match_all(&a)
            : query_kind == 1 ? rq
            : query_kind == 2 ? sc_query_constant_score(&a, rq)
            : query_kind == 3 ? sc_query_range(&a, sc_slice_cstr("sd"), &dlo, &dhi, 1)
            : query_kind == 4 ? sc_query_range(&a, sc_slice_cstr("fare"), &flo, &fhi, 1)
            : query_kind == 5 ? aq
            : query_kind == 6 ? sc_query_constant_score(&a, aq)
            : query_kind == 7 ? sc_query_range(&a, sc_slice_cstr("t"), &mlo, &mhi, 1)
            : query_kind == 9 ? sc_query_range(&a, sc_slice_cstr("t"), &mlo, &jhi, 1)
                              : filtered_query(&a);
        /* the process's CPU time: single-threaded cases on a shared, loaded machine are timed
         * by the CPU they use (best of the runs), not the wall clock */
        uint64_t total;
        double ms = bench_agg_collect_so_ms(name, root, s, q, &shard_opts, &a,
                                            CLOCK_PROCESS_CPUTIME_ID, &total);
        if (query_kind == 0 && total != n) {
            fprintf(stderr, "%s: %llu docs matched, not %u\n", name, (unsigned long long)total, n);
            exit(1);
        }
        all[r] = ms;
        hits = total;
        if (r == 0 && getenv("AGG_BENCH_DIGEST")) {
            uint64_t nb = 0, sum = 0, h = digest(bench_agg_last, 0xcbf29ce484222325u, &nb, &sum);
            printf("%-40s digest %016llx buckets %llu doc_count_sum %llu\n", name,
                   (unsigned long long)h, (unsigned long long)nb, (unsigned long long)sum);
        }
        sc_arena_fini(&a);
    }
    qsort(all, (size_t)runs, sizeof *all, cmp_double);
    double best = all[0], median = all[runs / 2];
    printf("%-40s %8.3f ms  %6.2f ns/doc  median %8.3f ms  hits %llu\n", name, best, best * 1e6 / n,
           median, (unsigned long long)hits);
    free(all);
}

/* Epoch milliseconds of "YYYY-MM-DD HH:MM:SS" (UTC; LuceneAggBench's TaxisCases.millis), from
 * the days of the civil date (Howard Hinnant's days_from_civil); 0 when too short. */
static int64_t taxis_millis(const char *p)
{
    if (strlen(p) < 19)
        return 0;
    int y = atoi(p), m = atoi(p + 5), d = atoi(p + 8);
    int64_t hh = atoi(p + 11), mi = atoi(p + 14), se = atoi(p + 17);
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    return ((days * 24 + hh) * 60 + mi) * 60000 + se * 1000;
}

/* The number after "key": in line (0 when absent). */
static double taxis_number(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtod(p + strlen(key), NULL) : 0;
}

/* The string or number after "key": in line into out (empty when absent). */
static void taxis_string(const char *line, const char *key, char *out, size_t cap)
{
    const char *p = strstr(line, key);
    size_t k = 0;
    if (p) {
        p += strlen(key);
        p += *p == '"';
        while (p[k] && p[k] != '"' && p[k] != ',' && p[k] != '}' && k + 1 < cap)
            k++;
        memcpy(out, p, k);
    }
    out[k] = 0;
}

/* The next document line of f (skipping bulk action lines) into *line; false at the end. */
static bool taxis_next(FILE *f, char **line, size_t *cap)
{
    while (getline(line, cap, f) > 0)
        if (strncmp(*line, "{\"index\"", 8) != 0 && (*line)[0] == '{')
            return true;
    return false;
}

/* A composite aggregation of the one source src (default size). */
static sc_agg_spec *one_source_composite(sc_agg_spec *src)
{
    sc_agg_spec **one = calloc(1, sizeof *one);
    one[0] = src;
    sc_agg_spec *cc = spec(SC_AGG_COMPOSITE, NULL, 0);
    cc->sources = one;
    cc->n_sources = 1;
    return cc;
}

/* The runtime field tip_percent = tip / fare over the doubles "tip" and "fare" (Rally's
 * avg_tip_percent_aggregation), compiled as the API layer does. Exits on an error. */
static sc_runtime_field tip_percent(sc_arena *a)
{
    const char *src = "emit(doc['tip'].value / doc['fare'].value)";
    sc_script *sc = NULL;
    sc_script_error err;
    if (sc_script_compile(sc_runtime_env(), sc_slice_cstr(src), a, &sc, &err) != SC_OK) {
        fprintf(stderr, "compile %s: %s\n", src, err.reason);
        exit(1);
    }
    size_t nv = sc_script_n_vars(sc);
    sc_runtime_var *vars = sc_arena_calloc(a, nv + 1, sizeof *vars);
    for (size_t i = 0; vars && i < nv; i++)
        vars[i] = (sc_runtime_var){.field = sc_slice_cstr(sc_script_var_get(sc, i)->name),
                                   .value = SC_SF_VALUE_DOUBLE,
                                   .scaling = 1};
    return (sc_runtime_field){
        .name = "tip_percent", .type = SC_RUNTIME_DOUBLE, .script = sc, .vars = vars};
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    only = argc > 3 ? argv[3] : NULL;
    char dir[64];
    if (bench_dir_make("agg", dir, sizeof dir) != 0)
        return 1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    uint64_t x = 88172645463325252ull;
    char kw[16], rc[16];
    const char *taxis = getenv("AGG_BENCH_TAXIS");
    FILE *tf = taxis ? fopen(taxis, "r") : NULL;
    if (taxis && !tf) {
        perror(taxis);
        return 1;
    }
    char *line = NULL;
    size_t line_cap = 0;
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        snprintf(kw, sizeof kw, "code-%02u", (unsigned)(x % 100 < 60 ? x % 5 : x % 100));
        int64_t num = (int64_t)((x >> 8) % 200);
        int64_t t = INT64_C(1420070400000) + (int64_t)((x >> 16) % (90ull * 86400000));
        /* taxis-like: trip distance 0..50.00 (mostly short), amount 0..100.00 (x 100) */
        int64_t sd = (int64_t)(((x >> 20) % 1000) * ((x >> 30) % 5000) / 1000);
        int64_t sm = (int64_t)((x >> 24) % 10000);
        double tip = (double)((x >> 34) % 2000) / 100, fare = (double)((x >> 40) % 10000) / 100;
        /* taxis-like passenger count 1..6 and rate code 1..6 */
        int64_t pc = (int64_t)(1 + (x >> 44) % 6);
        snprintf(rc, sizeof rc, "%u", (unsigned)(1 + (x >> 48) % 6));
        if (tf) {
            if (!taxis_next(tf, &line, &line_cap)) {
                fprintf(stderr, "%s: fewer than %u docs\n", taxis, n);
                return 1;
            }
            sd = llround(taxis_number(line, "\"trip_distance\":") * 100);
            sm = llround(taxis_number(line, "\"total_amount\":") * 100);
            tip = taxis_number(line, "\"tip_amount\":");
            fare = taxis_number(line, "\"fare_amount\":");
            pc = llround(taxis_number(line, "\"passenger_count\":"));
            taxis_string(line, "\"rate_code_id\":", rc, sizeof rc);
            char dt[24];
            taxis_string(line, "\"dropoff_datetime\":", dt, sizeof dt);
            t = taxis_millis(dt);
        }
        /* pickup time ("pt"): the dropoff minus up to an hour; pickup location ("pl"): a
         * taxis-like point around Manhattan, packed as a geo_point's doc value */
        int64_t pt = t - (int64_t)((x >> 12) % 3600000);
        double plat = 40.6 + (double)((x >> 5) % 300000) / 1e6,
               plon = -74.05 + (double)((x >> 27) % 250000) / 1e6;
        if (tf) {
            char dt[24];
            taxis_string(line, "\"pickup_datetime\":", dt, sizeof dt);
            pt = taxis_millis(dt);
            const char *lp = strstr(line, "\"pickup_location\":[");
            if (lp) { /* [lon,lat] */
                char *end;
                plon = strtod(lp + 19, &end);
                plat = strtod(end + 1, NULL);
            }
        }
        int64_t pl = (int64_t)((uint64_t)(uint32_t)sc_geo_encode_lat(plat) << 32 |
                               (uint32_t)sc_geo_encode_lon(plon));
        int64_t tip_l = sc_agg_double_to_sortable(tip), fare_l = sc_agg_double_to_sortable(fare);
        sc_index_token tok = {sc_slice_cstr(kw), 0}, rtok = {sc_slice_cstr(rc), 0};
        sc_index_field f[11] = {
            bench_keyword("k", &tok),
            bench_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &num),
            bench_numeric("t", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &t),
            bench_numeric("sd", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &sd),
            bench_numeric("sm", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &sm),
            bench_numeric("tip", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &tip_l),
            bench_numeric("fare", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &fare_l),
            bench_numeric("pc", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &pc),
            bench_keyword("rc", &rtok),
            bench_numeric("pt", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &pt),
            bench_numeric("pl", SC_FIELD_DOCVALUES, &pl)};
        if (bench_add_doc(b, f, 11) != 0)
            return 1;
    }
    free(line);
    if (tf)
        fclose(tf);
    sc_segment *seg;
    if (bench_segment_write(b, dir, &seg) != 0)
        return 1;
    sc_searcher_segment ss = {.seg = seg};
    sc_searcher s = {&ss, 1};
    printf("agg_bench: %u docs, match_all, best of %d\n", n, runs);
    run_case("terms keyword (no subs)", root_of(spec(SC_AGG_TERMS, "k", SC_AGG_V_KEYWORD)), &s, n,
             runs);
    sc_agg_spec *tk = spec(SC_AGG_TERMS, "k", SC_AGG_V_KEYWORD);
    tk->subs = calloc(1, sizeof *tk->subs);
    tk->subs[0] = spec(SC_AGG_AVG, "n", SC_AGG_V_LONG);
    tk->n_subs = 1;
    run_case("terms keyword > avg(long)", root_of(tk), &s, n, runs);
    run_case("terms long", root_of(spec(SC_AGG_TERMS, "n", SC_AGG_V_LONG)), &s, n, runs);
    sc_agg_spec *h = spec(SC_AGG_HISTOGRAM, "n", SC_AGG_V_LONG);
    h->interval = 5;
    run_case("histogram long (interval 5)", root_of(h), &s, n, runs);
    sc_agg_spec *dh = spec(SC_AGG_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    dh->rounding.unit = SC_AGG_CAL_DAY;
    run_case("date_histogram (calendar day)", root_of(dh), &s, n, runs);
    run_case("avg long", root_of(spec(SC_AGG_AVG, "n", SC_AGG_V_LONG)), &s, n, runs);
    run_case("stats long", root_of(spec(SC_AGG_STATS, "n", SC_AGG_V_LONG)), &s, n, runs);
    query_kind = 1;
    run_case("date_histogram, range on t (points)", root_of(dh), &s, n, runs);
    query_kind = 2;
    run_case("date_histogram, same docs, doc values", root_of(dh), &s, n, runs);
    run_case("histogram long, doc values", root_of(h), &s, n, runs);
    run_case("terms keyword, range query", root_of(spec(SC_AGG_TERMS, "k", SC_AGG_V_KEYWORD)), &s,
             n, runs);
    query_kind = 3;
    sc_agg_spec *dist = spec(SC_AGG_HISTOGRAM, "sd", SC_AGG_V_LONG);
    dist->scaling_factor = 100;
    dist->interval = 1;
    dist->subs = calloc(1, sizeof *dist->subs);
    dist->subs[0] = spec(SC_AGG_STATS, "sm", SC_AGG_V_LONG);
    dist->subs[0]->scaling_factor = 100;
    dist->n_subs = 1;
    run_case("distance_amount_agg: histogram(scaled) > stats(scaled), range", root_of(dist), &s, n,
             runs);
    /* on the taxis file, Rally's and LuceneAggBench's range (2015-01-01 to 2015-01-21); on
     * generated values the middle half, as measured before */
    query_kind = taxis ? 5 : 1;
    sc_agg_spec *ah = spec(SC_AGG_AUTO_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    ah->size = 20;
    run_case("autohisto_agg: auto_date_histogram(20), range on t", root_of(ah), &s, n, runs);
    query_kind = taxis ? 6 : 2;
    run_case("autohisto_agg, same docs, doc values", root_of(ah), &s, n, runs);
    /* auto_date_histogram_with_metrics (10 buckets, minimum_interval day, stats of "sm",
     * "tip" and "sd"; the autohisto range): under the range the trees choose the rung before
     * collecting; under constant_score the docs are recorded and replayed */
    query_kind = taxis ? 5 : 1;
    sc_agg_spec *ahm = spec(SC_AGG_AUTO_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    ahm->size = 10;
    ahm->min_rung = 11; /* day */
    ahm->subs = calloc(3, sizeof *ahm->subs);
    ahm->subs[0] = spec(SC_AGG_STATS, "sm", SC_AGG_V_LONG);
    ahm->subs[0]->scaling_factor = 100;
    ahm->subs[1] = spec(SC_AGG_STATS, "tip", SC_AGG_V_DOUBLE);
    ahm->subs[2] = spec(SC_AGG_STATS, "sd", SC_AGG_V_LONG);
    ahm->subs[2]->scaling_factor = 100;
    ahm->n_subs = 3;
    run_case("autohisto_metrics: auto_date_histogram(10, day) > 3 stats, range on t", root_of(ahm),
             &s, n, runs);
    query_kind = taxis ? 6 : 2;
    run_case("autohisto_metrics, same docs, recorded and replayed", root_of(ahm), &s, n, runs);
    /* Rally's avg_passenger_count_aggregation, avg_amount_group_by_integer_aggregation and
     * avg_amount_group_by_keyword_aggregation (passenger_count "pc", rate_code_id "rc",
     * total_amount "sm", a scaled_float of factor 100), under match_all; the first and
     * second with AGG_BENCH_COMPENSATED=1 take the compensated sum for every value (the path
     * before the int64 sums) */
    query_kind = 0;
    shard_opts.compensated_sums = getenv("AGG_BENCH_COMPENSATED") != NULL;
    run_case("avg_passenger_count: avg(long)", root_of(spec(SC_AGG_AVG, "pc", SC_AGG_V_LONG)), &s,
             n, runs);
    sc_agg_spec *gi = spec(SC_AGG_TERMS, "pc", SC_AGG_V_LONG);
    sc_agg_spec *amt = spec(SC_AGG_AVG, "sm", SC_AGG_V_LONG);
    amt->scaling_factor = 100;
    gi->subs = calloc(1, sizeof *gi->subs);
    gi->subs[0] = amt;
    gi->n_subs = 1;
    run_case("avg_amount_group_by_integer: terms(long) > avg(scaled)", root_of(gi), &s, n, runs);
    sc_agg_spec *gk = spec(SC_AGG_TERMS, "rc", SC_AGG_V_KEYWORD);
    gk->subs = calloc(1, sizeof *gk->subs);
    gk->subs[0] = amt;
    gk->n_subs = 1;
    run_case("avg_amount_group_by_keyword: terms(keyword) > avg(scaled)", root_of(gk), &s, n, runs);
    sc_agg_spec *gl = spec(SC_AGG_TERMS, "rc", SC_AGG_V_KEYWORD);
    gl->subs = calloc(1, sizeof *gl->subs);
    gl->subs[0] = spec(SC_AGG_AVG, "pc", SC_AGG_V_LONG);
    gl->n_subs = 1;
    run_case("terms(keyword) > avg(long)", root_of(gl), &s, n, runs);
    shard_opts.compensated_sums = false;
    query_kind = 4;
    sc_arena rta;
    sc_arena_init(&rta, 0);
    sc_runtime_field tp = tip_percent(&rta);
    shard_opts.runtime = &tp;
    shard_opts.n_runtime = 1;
    sc_agg_spec *tavg = spec(SC_AGG_AVG, "tip_percent", SC_AGG_V_DOUBLE);
    run_case("avg_tip_percent: avg(runtime tip / fare), fare > 0", root_of(tavg), &s, n, runs);
    shard_opts.runtime_columns = true;
    run_case("avg_tip_percent, whole column first", root_of(tavg), &s, n, runs);
    shard_opts = (sc_agg_shard_options){.n_shards = 1};
    sc_arena_fini(&rta);
    /* Rally's composite and multi_terms operations (size 10) under match_all, on single-valued
     * fields: two keyword sources (the first descending, as composite-terms), a histogram of
     * the scaled "sm" with interval 5 (composite-histogram), a calendar-day date_histogram of
     * "t" (composite-date_histogram-daily), and multi_terms of the two keywords */
    query_kind = 0;
    sc_agg_spec *ck = spec(SC_AGG_TERMS, "k", SC_AGG_V_KEYWORD);
    ck->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = true};
    sc_agg_spec *cr = spec(SC_AGG_TERMS, "rc", SC_AGG_V_KEYWORD);
    cr->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    sc_agg_spec *ch = spec(SC_AGG_HISTOGRAM, "sm", SC_AGG_V_LONG);
    ch->scaling_factor = 100;
    ch->interval = 5;
    sc_agg_spec *cd = spec(SC_AGG_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    cd->rounding.unit = SC_AGG_CAL_DAY;
    sc_agg_spec *two[2] = {ck, cr}, *one_h[1] = {ch}, *one_d[1] = {cd};
    sc_agg_spec *ct = spec(SC_AGG_COMPOSITE, NULL, 0);
    ct->sources = two;
    ct->n_sources = 2;
    run_case("composite: terms(k, desc) x terms(rc)", root_of(ct), &s, n, runs);
    sc_agg_spec *chh = spec(SC_AGG_COMPOSITE, NULL, 0);
    chh->sources = one_h;
    chh->n_sources = 1;
    run_case("composite: histogram(scaled sm, 5)", root_of(chh), &s, n, runs);
    sc_agg_spec *cdd = spec(SC_AGG_COMPOSITE, NULL, 0);
    cdd->sources = one_d;
    cdd->n_sources = 1;
    run_case("composite: date_histogram(t, day)", root_of(cdd), &s, n, runs);
    sc_agg_spec *mt = spec(SC_AGG_MULTI_TERMS, NULL, 0);
    mt->sources = two;
    mt->n_sources = 2;
    run_case("multi_terms(k, rc)", root_of(mt), &s, n, runs);
    /* Rally's date_histogram_fixed_interval_with_metrics (10d > stats of total_amount,
     * tip_amount, trip_distance) and _with_metrics_agg (10d > min, max, avg of total_amount,
     * avg of trip_distance), under the range [2015-01-01, 2015-03-01) on "t"; and
     * avg_passenger_count_filtered_aggregation (avg of passenger_count under the bool filter
     * rate_code_id "2" and total_amount > 60) */
    query_kind = 7;
    sc_agg_spec *dm = spec(SC_AGG_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    dm->rounding.fixed_ms = INT64_C(10) * 86400000;
    dm->min_doc_count = 1;
    dm->subs = calloc(3, sizeof *dm->subs);
    dm->subs[0] = spec(SC_AGG_STATS, "sm", SC_AGG_V_LONG);
    dm->subs[0]->scaling_factor = 100;
    dm->subs[1] = spec(SC_AGG_STATS, "tip", SC_AGG_V_DOUBLE);
    dm->subs[2] = spec(SC_AGG_STATS, "sd", SC_AGG_V_LONG);
    dm->subs[2]->scaling_factor = 100;
    dm->n_subs = 3;
    run_case("date_histogram_fixed_interval_with_metrics: 10d > 3 stats", root_of(dm), &s, n, runs);
    sc_agg_spec *da = spec(SC_AGG_DATE_HISTOGRAM, "t", SC_AGG_V_DATE);
    da->rounding.fixed_ms = INT64_C(10) * 86400000;
    da->min_doc_count = 1;
    da->subs = calloc(4, sizeof *da->subs);
    da->subs[0] = spec(SC_AGG_MIN, "sm", SC_AGG_V_LONG);
    da->subs[1] = spec(SC_AGG_MAX, "sm", SC_AGG_V_LONG);
    da->subs[2] = spec(SC_AGG_AVG, "sm", SC_AGG_V_LONG);
    da->subs[3] = spec(SC_AGG_AVG, "sd", SC_AGG_V_LONG);
    for (int i = 0; i < 4; i++)
        da->subs[i]->scaling_factor = 100;
    da->n_subs = 4;
    run_case("date_histogram_fixed_interval_with_metrics_agg: 10d > min, max, avg, avg",
             root_of(da), &s, n, runs);
    /* Rally's single-source composite operations as served (size 10, no after), under
     * their range on the dropoff time "t": a histogram of the scaled "sm" (total_amount,
     * interval 5), date_histograms of the pickup time "pt" by calendar day, week and month
     * ([2015-01-01, 2015-03-01)), and geotile_grid of the pickup location "pl" at
     * precisions 8, 12 and 15 ([2015-01-01, 2015-02-01)) */
    static const struct {
        const char *name;
        sc_agg_cal_unit unit;
    } cal[3] = {
        {"daily", SC_AGG_CAL_DAY}, {"weekly", SC_AGG_CAL_WEEK}, {"monthly", SC_AGG_CAL_MONTH}};
    query_kind = 7;
    run_case("rally composite-histogram (sm, 5), range", root_of(chh), &s, n, runs);
    for (int i = 0; i < 3; i++) {
        sc_agg_spec *src = spec(SC_AGG_DATE_HISTOGRAM, "pt", SC_AGG_V_DATE);
        src->rounding.unit = cal[i].unit;
        src->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        sc_agg_spec *cc = one_source_composite(src);
        char name[80];
        snprintf(name, sizeof name, "rally composite-date_histogram-%s, range", cal[i].name);
        run_case(name, root_of(cc), &s, n, runs);
    }
    query_kind = 9;
    static const uint32_t zooms[3] = {8, 12, 15};
    for (int i = 0; i < 3; i++) {
        sc_agg_spec *src = spec(SC_AGG_GEOTILE_GRID, "pl", SC_AGG_V_GEO_POINT);
        src->precision = zooms[i];
        src->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        sc_agg_spec *cc = one_source_composite(src);
        char name[80];
        snprintf(name, sizeof name, "rally composite-geotile_grid-precision-%u, range", zooms[i]);
        run_case(name, root_of(cc), &s, n, runs);
    }
    query_kind = 8;
    run_case("avg_passenger_count_filtered: avg(long), term rc 2 and sm > 60",
             root_of(spec(SC_AGG_AVG, "pc", SC_AGG_V_LONG)), &s, n, runs);
    sc_segment_unref(seg);
    return bench_dir_remove(dir);
}
