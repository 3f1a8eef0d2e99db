/* In-process query benchmark (bench/query_bench.sh runs it beside bench/LuceneQueryBench.java
 * on the same documents): indexes DOCS (id <TAB> text, from tests/oracle/search/gen.py) into
 * one segment with the standard analyzer, then runs the luceneutil query classes of QUERIES
 * (JSON lines with "query" and "class"; regex-class queries are wrapped in /.../) in three
 * modes, single threaded: COUNT (sc_search_count), TOP_10 (exact total up to 1,000, as
 * Lucene's IndexSearcher.search(q, 10)), TOP_10_COUNT (exact total). Each query runs once to
 * warm up, then REPS times; prints "class<TAB>mode<TAB>n<TAB>median_us<TAB>p99_us<TAB>hits_sum
 * <TAB>mean_us" per class and mode (the mean is what a throughput benchmark sees); then the
 * cancellation overhead: the whole set with the cancel token vs. without any
 * token (best of 3 rounds each), on stderr. Usage: query_bench DOCS QUERIES WORK_DIR [REPS]
 * Environment: QB_CLASSES=a,b only these classes; QB_MODE=TOP_10 only that mode; QB_NO_OVERHEAD=1
 * skips the overhead rounds; QB_CPUTIME=1 times queries by thread CPU time; QB_TOTAL_ROUNDS=n
 * prints only the best whole-set time (ms) of n rounds (the compiled-out comparison in
 * query_bench.sh builds this file twice, once with SC_SEARCH_NO_CANCEL_CHECKS). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/clock.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/query_parser.h"
#include "search/searcher.h"
#include "text/analyzer.h"

typedef struct toks {
    sc_index_token *t;
    size_t n, cap;
    char *bytes;
    size_t blen, bcap;
} toks;

static sc_status sink(void *ctx, const sc_token *tok)
{
    toks *k = ctx;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 256;
        k->t = realloc(k->t, k->cap * sizeof *k->t);
    }
    if (k->blen + tok->len > k->bcap) {
        k->bcap = (k->blen + tok->len) * 2 + 4096;
        k->bytes = realloc(k->bytes, k->bcap);
    }
    if (!k->t || !k->bytes)
        return SC_ENOMEM;
    memcpy(k->bytes + k->blen, tok->term, tok->len);
    k->t[k->n].term = sc_slice_make((const void *)(uintptr_t)k->blen, tok->len);
    k->t[k->n].position = tok->position;
    k->n++;
    k->blen += tok->len;
    return SC_OK;
}

static void die(const char *what, sc_status st)
{
    fprintf(stderr, "query_bench: %s: %s\n", what, sc_status_name(st));
    exit(2);
}

static void build_segment(const char *docs, const char *dir, const sc_analyzer *an)
{
    FILE *f = fopen(docs, "r");
    if (!f) {
        perror(docs);
        exit(2);
    }
    sc_segment_builder *b;
    sc_status st = sc_segment_builder_new(&b);
    if (st != SC_OK)
        die("builder", st);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    toks k = {0};
    uint64_t t0 = sc_clock_now_ns();
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = 0;
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = 0;
        k.n = k.blen = 0;
        if ((st = sc_analyzer_analyze(an, sc_slice_cstr(tab + 1), sink, &k)) != SC_OK)
            die("analyze", st);
        for (size_t i = 0; i < k.n; i++)
            k.t[i].term.ptr = (const uint8_t *)k.bytes + (uintptr_t)k.t[i].term.ptr;
        sc_index_token idtok = {sc_slice_cstr(line), 0};
        sc_index_field fields[2] = {
            {.name = sc_slice_cstr("_id"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED,
             .tokens = &idtok,
             .n_tokens = 1},
            {.name = sc_slice_cstr("body"),
             .kind = SC_FIELD_TEXT,
             .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
             .tokens = k.t,
             .n_tokens = k.n,
             .length = (uint32_t)k.n},
        };
        sc_index_doc doc = {sc_slice_cstr(line), sc_slice_make(NULL, 0), fields, 2, NULL, 0};
        if ((st = sc_segment_builder_add(b, &doc, NULL)) != SC_OK)
            die("add", st);
    }
    if ((st = sc_segment_builder_write(b, dir, "bench", NULL)) != SC_OK)
        die("write", st);
    fprintf(stderr, "scry: indexed %u docs in %.1f s\n", sc_segment_builder_n_docs(b),
            (double)(sc_clock_now_ns() - t0) / 1e9);
    sc_segment_builder_free(b);
    free(line);
    free(k.t);
    free(k.bytes);
    fclose(f);
}

typedef struct bq {
    char *text;
    char *cls;
} bq;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

enum {
    M_COUNT,
    M_TOP10,
    M_TOP10_COUNT,
    M_N
};
static const char *const MODES[M_N] = {"COUNT", "TOP_10", "TOP_10_COUNT"};

static bool use_cancel = true;
static bool cpu_time; /* QB_CPUTIME=1: thread CPU time instead of wall time (busy machines) */

static uint64_t now_ns(void)
{
    if (!cpu_time)
        return sc_clock_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t run_one(const sc_searcher *s, const sc_query *q, int mode, sc_arena *a,
                        uint64_t *hits)
{
    sc_search_options o;
    sc_search_options_init(&o);
    sc_cancel_token token;
    /* cancellation checks stay on, as in production, with a deadline so the clock is read */
    sc_cancel_token_init(&token, sc_clock_now_ns() + 60ull * 1000000000ull);
    o.cancel = use_cancel ? &token : NULL;
    o.track_total_hits = mode == M_TOP10_COUNT ? SC_TRACK_TOTAL_HITS_ALL : 1000;
    sc_search_result r;
    uint64_t t0 = now_ns();
    sc_status st =
        mode == M_COUNT ? sc_search_count(s, q, &o, a, &r) : sc_search_execute(s, q, &o, a, &r);
    uint64_t dt = now_ns() - t0;
    if (st != SC_OK)
        die(r.error[0] ? r.error : "search", st);
    *hits = r.total;
    return dt;
}

/* Time of the whole query set, every query once in each mode. */
static uint64_t whole_set(const sc_searcher *s, const bq *qs, size_t n_q,
                          const sc_query_parser_options *po)
{
    uint64_t sum = 0;
    for (size_t k = 0; k < n_q; k++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *q;
        if (sc_query_string_parse(sc_slice_cstr(qs[k].text), po, &a, &q, NULL) == SC_OK)
            for (int m = 0; m < M_N; m++) {
                uint64_t hits;
                sum += run_one(s, q, m, &a, &hits);
            }
        sc_arena_fini(&a);
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DOCS QUERIES WORK_DIR [REPS]\n", argv[0]);
        return 2;
    }
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    cpu_time = getenv("QB_CPUTIME") != NULL;
    sc_analyzer *an;
    sc_status st = sc_analyzer_builtin("standard", &an);
    if (st != SC_OK)
        die("analyzer", st);
    char path[1024];
    snprintf(path, sizeof path, "%s/bench.seg", argv[3]);
    struct stat sb;
    if (stat(path, &sb) != 0)
        build_segment(argv[1], argv[3], an);
    sc_segment *seg;
    if ((st = sc_segment_open(argv[3], "bench", &seg)) != SC_OK)
        die("open", st);
    sc_searcher_segment ss = {seg, NULL, 0};
    sc_searcher s = {&ss, 1};

    FILE *qf = fopen(argv[2], "r");
    if (!qf) {
        perror(argv[2]);
        return 2;
    }
    bq *qs = NULL;
    size_t n_q = 0, cap_q = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, qf) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        const char *text = j ? json_string_value(json_object_get(j, "query")) : NULL;
        const char *cls = j ? json_string_value(json_object_get(j, "class")) : NULL;
        const char *only = getenv("QB_CLASSES"); /* comma-separated class filter */
        if (text && cls && only && *only) {
            size_t cl = strlen(cls);
            const char *m = strstr(only, cls);
            while (m && !((m == only || m[-1] == ',') && (m[cl] == 0 || m[cl] == ',')))
                m = strstr(m + 1, cls);
            if (!m)
                cls = NULL;
        }
        if (text && cls) {
            if (n_q == cap_q)
                qs = realloc(qs, (cap_q = cap_q ? cap_q * 2 : 256) * sizeof *qs);
            size_t tl = strlen(text) + 3;
            qs[n_q].text = malloc(tl);
            snprintf(qs[n_q].text, tl, strcmp(cls, "regex") == 0 ? "/%s/" : "%s", text);
            qs[n_q].cls = strdup(cls);
            n_q++;
        }
        json_decref(j);
    }
    fclose(qf);
    free(line);

    sc_query_parser_options po;
    sc_query_parser_options_init(&po);
    po.default_field = sc_slice_cstr("body");
    po.analyzer = an;
    po.fix_negative = false;
    const char *total_rounds = getenv("QB_TOTAL_ROUNDS");
    if (total_rounds) {
        /* Only the whole set's time (all three modes, cancel token on), best of N rounds:
         * query_bench.sh compares this binary with one built with the checks compiled out. */
        uint64_t best = UINT64_MAX;
        for (int round = 0; round < atoi(total_rounds); round++) {
            uint64_t sum = whole_set(&s, qs, n_q, &po);
            if (sum < best)
                best = sum;
        }
        printf("%.3f\n", (double)best / 1e6);
        return 0;
    }
    uint64_t *lat = malloc(n_q * (size_t)reps * sizeof *lat);
    printf("class\tmode\tqueries\tmedian_us\tp99_us\thits_sum\tmean_us\n");
    size_t i = 0;
    while (i < n_q) {
        size_t j = i;
        while (j < n_q && strcmp(qs[j].cls, qs[i].cls) == 0)
            j++;
        for (int m = 0; m < M_N; m++) {
            if (getenv("QB_MODE") && strcmp(getenv("QB_MODE"), MODES[m]) != 0)
                continue;
            size_t n_lat = 0;
            uint64_t hits_sum = 0;
            for (size_t k = i; k < j; k++) {
                sc_arena a;
                sc_arena_init(&a, 0);
                sc_query *q;
                sc_query_parse_error pe;
                if ((st = sc_query_string_parse(sc_slice_cstr(qs[k].text), &po, &a, &q, &pe)) !=
                    SC_OK)
                    die(pe.msg, st);
                uint64_t hits;
                run_one(&s, q, m, &a, &hits); /* warm-up */
                hits_sum += hits;
                for (int r = 0; r < reps; r++) {
                    sc_arena_mark mk = sc_arena_mark_get(&a);
                    lat[n_lat++] = run_one(&s, q, m, &a, &hits);
                    sc_arena_rewind(&a, mk);
                }
                sc_arena_fini(&a);
            }
            qsort(lat, n_lat, sizeof *lat, cmp_u64);
            size_t p99 = (size_t)((double)(n_lat - 1) * 0.99);
            double total = 0;
            for (size_t k = 0; k < n_lat; k++)
                total += (double)lat[k];
            printf("%s\t%s\t%zu\t%.1f\t%.1f\t%llu\t%.1f\n", qs[i].cls, MODES[m], j - i,
                   (double)lat[n_lat / 2] / 1e3, (double)lat[p99] / 1e3,
                   (unsigned long long)hits_sum, total / (double)n_lat / 1e3);
            fflush(stdout);
        }
        i = j;
    }
    /* Cancellation overhead: the whole query set (all three modes) with the cancel token
     * versus without any check (no wrapper at all: the checks "compiled out"), alternating,
     * best of 3 rounds each. */
    uint64_t best[2] = {UINT64_MAX, UINT64_MAX};
    int rounds = getenv("QB_NO_OVERHEAD") ? 0 : 3;
    for (int round = 0; round < rounds; round++) {
        for (int with = 0; with < 2; with++) {
            use_cancel = with == 1;
            uint64_t sum = whole_set(&s, qs, n_q, &po);
            if (sum < best[with])
                best[with] = sum;
        }
    }
    if (rounds)
        fprintf(stderr, "cancellation checks: %.1f ms with, %.1f ms without: overhead %+.2f%%\n",
                (double)best[1] / 1e6, (double)best[0] / 1e6,
                100.0 * ((double)best[1] - (double)best[0]) / (double)best[0]);
    for (size_t k = 0; k < n_q; k++) {
        free(qs[k].text);
        free(qs[k].cls);
    }
    free(qs);
    free(lat);
    sc_segment_unref(seg);
    sc_analyzer_free(an);
    return 0;
}
