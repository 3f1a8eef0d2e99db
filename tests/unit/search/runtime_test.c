/* Runtime fields in aggregations (src/search/runtime.c): a metric on a double runtime field of
 * arithmetic over single-valued doc values evaluates it for its collected docs only
 * (sc_runtime_doubles); the result must be bit for bit the whole-column path's
 * (sc_agg_shard_options.runtime_columns), over random docs in three segments (deletes in two,
 * a two-valued variable in the third, which takes the column path there), under match_all,
 * ranges, a sparse term query and constant_score, at the top level, under terms (the pairs
 * path) and under a histogram (the fused path); and equal to a brute-force model. */
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
#include "search/runtime.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

enum {
    N_SEG = 3,
    N_TAGS = 4
};

typedef struct rdoc {
    double tip, fare; /* fare: the smallest of the doc's values */
    int64_t fs;       /* a scaled_float x 100, raw */
    uint32_t tag;
    bool two; /* "fare" has two values */
    bool live;
} rdoc;

static rdoc *docs[N_SEG];
static uint32_t n_docs[N_SEG];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment views[N_SEG];
static char dir[64];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("runtime", dir, sizeof dir) != 0)
        return -1;
    for (int g = 0; g < N_SEG; g++) {
        /* more than one 4,096-doc collect window and one 512-row program window */
        n_docs[g] = 300 + below(g == 0 ? 9000 : 3000);
        docs[g] = calloc(n_docs[g], sizeof *docs[g]);
        bool *live = calloc(n_docs[g], sizeof *live);
        if (!docs[g] || !live)
            return -1;
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < n_docs[g]; d++) {
            rdoc *x = &docs[g][d];
            x->tip = below(4) ? (double)below(2000) / 100 : 0;
            double fares[2] = {(double)(1 + below(10000)) / 100, (double)(1 + below(10000)) / 100};
            size_t nf = g == 2 && below(5) == 0 ? 2 : 1; /* two values: not single-valued */
            if (nf == 2 && fares[1] < fares[0]) {
                double t = fares[0];
                fares[0] = fares[1];
                fares[1] = t;
            }
            x->fare = fares[0];
            x->two = nf == 2;
            x->fs = (int64_t)below(5000);
            x->tag = below(N_TAGS);
            int64_t tip = sc_agg_double_to_sortable(x->tip);
            int64_t fare[2] = {sc_agg_double_to_sortable(fares[0]),
                               sc_agg_double_to_sortable(fares[1])};
            fx_tagged tg;
            sc_index_field f[5];
            size_t n = fx_tagged_fields(&tg, g, d, x->tag, f);
            uint32_t fl = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES;
            f[n++] = fx_numeric("tip", fl, &tip, 1);
            f[n++] = fx_numeric("fare", fl, fare, nf);
            f[n++] = fx_numeric("fs", fl, &x->fs, 1);
            if (fx_add(b, tg.id, f, n) != 0)
                return -1;
        }
        if (fx_segment_finish(b, dir, g, g == 1, 5, &segs[g], &lives[g], live, &views[g]) != 0)
            return -1;
        for (uint32_t d = 0; d < n_docs[g]; d++)
            docs[g][d].live = live[d];
        free(live);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int g = 0; g < N_SEG; g++)
        free(docs[g]);
    return fx_agg_teardown(segs, lives, N_SEG, dir);
}

/* Compiles src as runtime field `name` of type double; its doc accesses read the doubles "tip"
 * and "fare" and the scaled_float (x 100) "fs". */
static sc_runtime_field compile(sc_arena *a, const char *name, const char *src)
{
    sc_script *s = NULL;
    sc_script_error err;
    sc_status st = sc_script_compile(sc_runtime_env(), sc_slice_cstr(src), a, &s, &err);
    if (st != SC_OK)
        fail_msg("compile [%s]: %s", src, err.reason);
    size_t nv = sc_script_n_vars(s);
    sc_runtime_var *vars = sc_arena_calloc(a, nv + 1, sizeof *vars);
    assert_non_null(vars);
    for (size_t i = 0; i < nv; i++) {
        const sc_script_var *v = sc_script_var_get(s, i);
        assert_int_equal(v->kind, SC_SCRIPT_VAR_DOC_VALUE);
        vars[i].field = sc_slice_cstr(v->name);
        vars[i].value = strcmp(v->name, "fs") == 0 ? SC_SF_VALUE_SCALED : SC_SF_VALUE_DOUBLE;
        vars[i].scaling = strcmp(v->name, "fs") == 0 ? 100 : 1;
    }
    return (sc_runtime_field){.name = name, .type = SC_RUNTIME_DOUBLE, .script = s, .vars = vars};
}

static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, const sc_query *q,
                              const sc_runtime_field *rf, size_t n_rf, bool columns,
                              uint64_t *total)
{
    sc_searcher s = {views, N_SEG};
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = {
        .n_shards = 1, .runtime = rf, .n_runtime = n_rf, .runtime_columns = columns};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *r = NULL;
    sc_status st = sc_agg_collect_shard(root, &s, q, &o, &so, a, &r, &res, &err);
    if (st != SC_OK)
        fail_msg("collect: %s %s", sc_status_str(st), err.reason);
    *total = res.total;
    return r;
}

static sc_agg_spec *metric(sc_arena *a, sc_agg_kind kind, const char *name, const char *field)
{
    return fx_agg_spec(a, kind, name, field, SC_AGG_V_DOUBLE);
}

/* The query of kind qk: match_all, fs in [500, 3999], tag t1, that range under constant_score,
 * and whether doc x matches it. */
static sc_query *query(sc_arena *a, int qk)
{
    int64_t lo = 500, hi = 3999;
    sc_query *r = sc_query_range(a, sc_slice_cstr("fs"), &lo, &hi, 1);
    switch (qk) {
    case 0: return sc_query_match_all(a);
    case 1: return r;
    case 2: return sc_query_term(a, sc_slice_cstr("tag"), sc_slice_cstr("t1"));
    default: return sc_query_constant_score(a, r);
    }
}

static bool matches(const rdoc *x, int qk)
{
    if (!x->live)
        return false;
    switch (qk) {
    case 0: return true;
    case 2: return x->tag == 1;
    default: return x->fs >= 500 && x->fs <= 3999;
    }
}

/* The model's value of the two fields: tip / fare and fs / 100 * 2.0 + tip. */
static double model_value(const rdoc *x, int field)
{
    return field == 0 ? x->tip / x->fare : (double)x->fs / 100 * 2.0 + x->tip;
}

/* avg, sum, min, max, stats, extended_stats and value_count of both runtime fields at the top
 * level; avg and stats under terms on "tag"; stats under a histogram of "fs" (interval 10):
 * the column path and the collected-docs path agree bit for bit, and with the model. */
static void test_collected_docs_equal_column(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_runtime_field rf[2] = {compile(&a, "tp", "emit(doc['tip'].value / doc['fare'].value)"),
                              compile(&a, "mix", "emit(doc['fs'].value * 2.0 + doc['tip'].value)")};
    const char *names[2] = {"tp", "mix"};
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    static const sc_agg_kind kinds[] = {SC_AGG_AVG,        SC_AGG_SUM,   SC_AGG_MIN,
                                        SC_AGG_MAX,        SC_AGG_STATS, SC_AGG_EXTENDED_STATS,
                                        SC_AGG_VALUE_COUNT};
    size_t n_kinds = sizeof kinds / sizeof kinds[0];
    for (int f = 0; f < 2; f++)
        for (size_t k = 0; k < n_kinds; k++)
            fx_agg_add_sub(&a, root, metric(&a, kinds[k], "m", names[f]));
    sc_agg_spec *terms = fx_agg_spec(&a, SC_AGG_TERMS, "by_tag", "tag", SC_AGG_V_KEYWORD);
    fx_agg_add_sub(&a, terms, metric(&a, SC_AGG_AVG, "avg", "tp"));
    fx_agg_add_sub(&a, terms, metric(&a, SC_AGG_STATS, "st", "mix"));
    fx_agg_add_sub(&a, root, terms);
    sc_agg_spec *h = fx_agg_spec(&a, SC_AGG_HISTOGRAM, "h", "fs", SC_AGG_V_LONG);
    h->scaling_factor = 100;
    h->interval = 10;
    fx_agg_add_sub(&a, h, metric(&a, SC_AGG_STATS, "st", "tp"));
    fx_agg_add_sub(&a, root, h);
    for (int qk = 0; qk < 4; qk++) {
        uint64_t t1, t2;
        sc_agg_result *lazy = collect(&a, root, query(&a, qk), rf, 2, false, &t1);
        sc_agg_result *col = collect(&a, root, query(&a, qk), rf, 2, true, &t2);
        assert_int_equal(t1, t2);
        if (!sc_agg_result_equal(lazy, col))
            fail_msg("query %d: the collected-docs path differs from the column's", qk);
        /* the model: count, sum, min and max of each field over the matching docs */
        for (int f = 0; f < 2; f++) {
            uint64_t n = 0;
            long double sum = 0;
            double mn = INFINITY, mx = -INFINITY;
            for (int g = 0; g < N_SEG; g++)
                for (uint32_t d = 0; d < n_docs[g]; d++) {
                    if (!matches(&docs[g][d], qk))
                        continue;
                    double v = model_value(&docs[g][d], f);
                    n++;
                    sum += v;
                    mn = v < mn ? v : mn;
                    mx = v > mx ? v : mx;
                }
            assert_int_equal(t1, n);
            for (size_t k = 0; k < n_kinds; k++) {
                const sc_agg_result *r = lazy->buckets[0].subs[f * n_kinds + k];
                assert_int_equal(r->count, n);
                if (kinds[k] == SC_AGG_VALUE_COUNT)
                    continue;
                double s = r->sum - r->sum_c;
                if (fabs(s - (double)sum) > 1e-9 * fabs((double)sum) + 1e-9)
                    fail_msg("query %d field %d kind %d: sum %.17g, model %.17g", qk, f,
                             (int)kinds[k], s, (double)sum);
                if (kinds[k] == SC_AGG_AVG || kinds[k] == SC_AGG_SUM)
                    continue; /* min and max are not kept where nothing shows them */
                if (n && (r->min != mn || r->max != mx))
                    fail_msg("query %d field %d: min/max %.17g %.17g, model %.17g %.17g", qk, f,
                             r->min, r->max, mn, mx);
            }
        }
    }
    sc_arena_fini(&a);
}

/* The evaluator gives what the column stores, for docs in any order and any count, in a
 * segment where the fast path applies; and declines the segment with a two-valued variable. */
static void test_doubles_eval_equals_column(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_runtime_field rf = compile(&a, "tp", "emit(doc['tip'].value / doc['fare'].value)");
    for (int g = 0; g < N_SEG; g++) {
        sc_runtime_doubles *d;
        assert_int_equal(sc_runtime_doubles_open(&a, &rf, segs[g], &d), SC_OK);
        bool multi = false;
        for (uint32_t i = 0; i < n_docs[g]; i++)
            multi |= docs[g][i].two;
        if (multi) {
            assert_null(d);
            continue;
        }
        assert_non_null(d);
        bool is_num;
        sc_dv_numeric num;
        sc_dv_sorted_set ss;
        uint64_t *failed;
        sc_script_error err;
        assert_int_equal(sc_runtime_column(&a, &rf, segs[g], &is_num, &num, &ss, &failed, &err),
                         SC_OK);
        assert_true(is_num);
        assert_null(failed);
        size_t n = 1 + below(3 * n_docs[g]);
        uint32_t *ids = sc_arena_alloc(&a, n * sizeof *ids);
        double *out = sc_arena_alloc(&a, n * sizeof *out);
        assert_non_null(ids);
        assert_non_null(out);
        for (size_t i = 0; i < n; i++)
            ids[i] = below(n_docs[g]);
        sc_runtime_doubles_eval(d, ids, n, out);
        for (size_t i = 0; i < n; i++) {
            int64_t v;
            assert_true(sc_dv_numeric_first(&num, ids[i], &v));
            double c = sc_agg_sortable_to_double(v);
            if (memcmp(&c, &out[i], sizeof c) != 0)
                fail_msg("segment %d doc %u: %.17g, column %.17g", g, ids[i], out[i], c);
        }
    }
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collected_docs_equal_column),
        cmocka_unit_test(test_doubles_eval_equals_column),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
