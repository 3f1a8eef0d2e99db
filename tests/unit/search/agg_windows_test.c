/* The window shortcuts of the metric and terms collectors (search/agg_metric.c, agg_terms.c):
 * a metric window whose docs all fall in one bucket summed in registers (int64 lanes and
 * Kahan lanes), the int64 path's min / max kept as integers, metric subs on one column reading
 * it once, and a terms window dominated by one keyword taken whole. Every result must be bit
 * for bit the per-doc loops' (sc_agg_shard_options.per_doc_windows): date_histogram and a
 * numeric histogram (the fused paths), terms on a keyword (the one pass and the window path)
 * and on a small-span long, auto_date_histogram, with min / max / avg / sum / stats /
 * extended_stats of a long, of a long read as a scaled_float and of a double, under match_all,
 * a range on the sorted date, that range under constant_score and a sparse term, over three
 * segments (one with deletes; one whose long values pass 2^53 after a few docs, so the
 * compensated sums take over mid-segment); the date_histogram's scaled sub-metrics also
 * against brute force. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

#define N_SEG 3
#define PER_SEG 30000
#define DAY INT64_C(86400000)
#define T0 INT64_C(1420070400000) /* 2015-01-01 */

static char dir[64];

typedef struct wdoc {
    int64_t t, m, s, x, p;
    uint32_t k;
    bool live;
} wdoc;

static wdoc *docs[N_SEG];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];

/* keyword "k" of doc d of segment s: one key dominates (90 %, then in segment 1's second half
 * none does: six keys evenly; segment 2: 80 %, so some windows fall under 3/4) */
static uint32_t k_of(int s, uint32_t d)
{
    if (s == 1 && d >= PER_SEG / 2)
        return below(6);
    if (s == 2)
        return below(5) ? 3 : below(6);
    return below(10) ? 1 : below(6);
}

static int setup(void **state)
{
    (void)state;
    if (fx_begin("agg_windows", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        docs[s] = calloc(PER_SEG, sizeof *docs[s]);
        sc_segment_builder *b;
        if (!docs[s] || sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            wdoc *x = &docs[s][d];
            /* sorted dates over 30 days (10-day buckets of ~10,000 docs: most windows in one),
             * a few out of order */
            x->t =
                T0 + (int64_t)d * (30 * DAY / PER_SEG) + (below(50) ? 0 : (int64_t)below(3) * DAY);
            x->m = s == 2 ? (INT64_C(1) << 50) + below(1000) : (int64_t)below(200001) - 100000;
            x->s = below(50000);
            double xv = below(20) ? (double)below(1000000) / 7 - 50000 : (below(2) ? 0.0 : -0.0);
            x->x = sc_agg_double_to_sortable(xv);
            x->p = below(10) < 7 ? 1 : 1 + below(6);
            x->k = k_of(s, d);
            char kw[8];
            snprintf(kw, sizeof kw, "k%u", x->k);
            sc_index_token kt = {sc_slice_cstr(kw), 0};
            fx_tagged tg;
            sc_index_field f[8];
            size_t nf = fx_tagged_fields(&tg, s, d, 0, f);
            uint32_t fl = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES;
            f[nf++] = fx_numeric("t", fl, &x->t, 1);
            f[nf++] = fx_numeric("m", fl, &x->m, 1);
            f[nf++] = fx_numeric("s", fl, &x->s, 1);
            f[nf++] = fx_numeric("x", fl, &x->x, 1);
            f[nf++] = fx_numeric("p", fl, &x->p, 1);
            f[nf++] = fx_keyword("k", fl, &kt, 1);
            if (fx_add(b, tg.id, f, nf) != 0)
                return -1;
        }
        bool *live = calloc(PER_SEG, sizeof *live);
        if (!live ||
            fx_segment_finish(b, dir, s, s != 1, 7, &segs[s], &lives[s], live, &ss[s]) != 0)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++)
            docs[s][d].live = live[d];
        free(live);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++)
        free(docs[s]);
    return fx_agg_teardown(segs, lives, N_SEG, dir);
}

/* root over the three segments with q, per_doc_windows as given. */
static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, const sc_query *q, bool per_doc)
{
    sc_searcher s = {ss, N_SEG};
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = {.n_shards = 1, .per_doc_windows = per_doc};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *r = NULL;
    sc_status st = sc_agg_collect_shard(root, &s, q, &o, &so, a, &r, &res, &err);
    if (st != SC_OK)
        fprintf(stderr, "collect: %s %s\n", sc_status_str(st), err.reason);
    assert_int_equal(st, SC_OK);
    return r;
}

static const int64_t rlo = T0 + 4 * DAY, rhi = T0 + 26 * DAY;

/* query 0: match_all; 1: t in [rlo, rhi]; 2: that under constant_score; 3: k = "k2" */
static const sc_query *query(sc_arena *a, int q)
{
    sc_query *r = sc_query_range(a, sc_slice_cstr("t"), &rlo, &rhi, 1);
    return q == 0   ? sc_query_match_all(a)
           : q == 1 ? r
           : q == 2 ? sc_query_constant_score(a, r)
                    : sc_query_term(a, sc_slice_cstr("k"), sc_slice_cstr("k2"));
}

static bool matches(const wdoc *x, int q)
{
    if (!x->live)
        return false;
    if (q == 1 || q == 2)
        return x->t >= rlo && x->t <= rhi;
    return q == 0 || x->k == 2;
}

/* The metric subs every bucket aggregation below gets: min, max, avg of "s" as a scaled_float
 * (factor 100; one column read once for the three), stats, avg and sum of the long "m", stats,
 * extended_stats and min of the double "x", max of "m". */
static void add_metrics(sc_arena *a, sc_agg_spec *p)
{
    static const struct {
        sc_agg_kind kind;
        const char *field;
        sc_agg_vtype vt;
        bool scaled;
    } subs[] = {
        {SC_AGG_MIN, "s", SC_AGG_V_LONG, true},
        {SC_AGG_MAX, "s", SC_AGG_V_LONG, true},
        {SC_AGG_AVG, "s", SC_AGG_V_LONG, true},
        {SC_AGG_STATS, "m", SC_AGG_V_LONG, false},
        {SC_AGG_AVG, "m", SC_AGG_V_LONG, false},
        {SC_AGG_SUM, "m", SC_AGG_V_LONG, false},
        {SC_AGG_STATS, "x", SC_AGG_V_DOUBLE, false},
        {SC_AGG_EXTENDED_STATS, "x", SC_AGG_V_DOUBLE, false},
        {SC_AGG_MIN, "x", SC_AGG_V_DOUBLE, false},
        {SC_AGG_MAX, "m", SC_AGG_V_LONG, false},
    };
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char name[8];
        snprintf(name, sizeof name, "m%zu", i);
        char *nm = sc_arena_alloc(a, sizeof name);
        assert_non_null(nm);
        memcpy(nm, name, sizeof name);
        sc_agg_spec *m = fx_agg_spec(a, subs[i].kind, nm, subs[i].field, subs[i].vt);
        if (subs[i].scaled)
            m->scaling_factor = 100;
        fx_agg_add_sub(a, p, m);
    }
}

/* The 10-day date_histogram's scaled metrics (min, max, avg of "s") against brute force: each
 * bucket's count, min and max (value / 100) and exact sum (the integer total / 100). */
static void check_model(const sc_agg_result *h, int q)
{
    for (size_t i = 0; i < h->n_buckets; i++) {
        const sc_agg_bucket *b = &h->buckets[i];
        uint64_t n = 0;
        int64_t total = 0, mn = INT64_MAX, mx = INT64_MIN;
        for (int s = 0; s < N_SEG; s++)
            for (uint32_t d = 0; d < PER_SEG; d++) {
                const wdoc *x = &docs[s][d];
                int64_t key = (x->t / (10 * DAY)) * 10 * DAY;
                if (!matches(x, q) || key != b->key)
                    continue;
                n++;
                total += x->s;
                mn = x->s < mn ? x->s : mn;
                mx = x->s > mx ? x->s : mx;
            }
        assert_int_equal(b->doc_count, n);
        assert_int_equal(b->subs[2]->count, n);
        assert_true(b->subs[0]->min == (double)mn / 100);
        assert_true(b->subs[1]->max == (double)mx / 100);
        assert_true(b->subs[2]->sum == (double)total / 100);
    }
}

static void test_windows_equal_per_doc(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    /* 0: date_histogram of 10 days (fused); 1: a histogram of the same longs (fused, integer
     * keys); 2: terms on the keyword > avg of the scaled "s" (the one pass); 3: > sum of "m"
     * (the one pass, until segment 2 passes 2^53); 4: > every metric (the windows to the
     * subs); 5: terms on the small-span long "p" > every metric; 6: auto_date_histogram */
    sc_agg_spec *dh = fx_agg_spec(&a, SC_AGG_DATE_HISTOGRAM, "dh", "t", SC_AGG_V_DATE);
    dh->rounding.fixed_ms = 10 * DAY;
    dh->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    add_metrics(&a, dh);
    sc_agg_spec *hi = fx_agg_spec(&a, SC_AGG_HISTOGRAM, "hi", "t", SC_AGG_V_LONG);
    hi->interval = (double)(10 * DAY);
    hi->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    add_metrics(&a, hi);
    sc_agg_spec *tk[3];
    for (int i = 0; i < 3; i++) {
        tk[i] = fx_agg_spec(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
        tk[i]->size = tk[i]->shard_size = 100;
    }
    sc_agg_spec *avs = fx_agg_spec(&a, SC_AGG_AVG, "a", "s", SC_AGG_V_LONG);
    avs->scaling_factor = 100;
    fx_agg_add_sub(&a, tk[0], avs);
    fx_agg_add_sub(&a, tk[1], fx_agg_spec(&a, SC_AGG_SUM, "a", "m", SC_AGG_V_LONG));
    add_metrics(&a, tk[2]);
    sc_agg_spec *tp = fx_agg_spec(&a, SC_AGG_TERMS, "tp", "p", SC_AGG_V_LONG);
    tp->size = tp->shard_size = 100;
    add_metrics(&a, tp);
    sc_agg_spec *ah = fx_agg_spec(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "ah", "t", SC_AGG_V_DATE);
    ah->size = 10;
    add_metrics(&a, ah);
    sc_agg_spec *all[] = {dh, hi, tk[0], tk[1], tk[2], tp, ah};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        fx_agg_add_sub(&a, root, all[i]);
    for (int q = 0; q < 4; q++) {
        sc_agg_result *fast = collect(&a, root, query(&a, q), false);
        sc_agg_result *slow = collect(&a, root, query(&a, q), true);
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
            const sc_agg_result *x = fast->buckets[0].subs[i], *y = slow->buckets[0].subs[i];
            if (!sc_agg_result_equal(x, y))
                fail_msg("query %d, aggregation %zu (%s): the shortcuts differ from the per-doc "
                         "loops",
                         q, i, all[i]->name);
            assert_true(x->n_buckets > 0);
        }
        check_model(fast->buckets[0].subs[0], q);
        assert_true(
            sc_agg_result_equal(fx_agg_final(&a, root, fast), fx_agg_final(&a, root, slow)));
    }
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_equal_per_doc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
