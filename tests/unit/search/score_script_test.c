/* script_score through the searcher (search/score_script.c, iter_function_score.c): three
 * segments with deletes, vectors on most docs, a numeric field on some. A function_score with
 * one script function replacing the score: `dotProduct(params.q, 'v') * 0 + l2norm(..)`-style
 * scripts over random queries equal a double brute force (top hits and scores) restricted to
 * live docs with a vector (filtered by `doc['n'].size() > 0` via a ternary); `doc['n'].value`
 * reads the numeric doc value; a run-time error (a matched doc without a vector, a negative
 * score, a wrong-length query vector) ends the search with SC_EINVAL and the reason in
 * res.error. Random seed printed (SCRY_SEED reruns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fixture.h"
#include "search/score_script.h"

#define DIMS 6
#define N_SEGS 3
#define N_PER 300

static char dir[64];
static sc_segment *segs[N_SEGS];
static sc_bitset lives[N_SEGS];
static bool live[N_SEGS][N_PER];
static bool has_vec[N_SEGS][N_PER];
static float vecs[N_SEGS][N_PER][DIMS];
static int64_t nums[N_SEGS][N_PER];
static bool has_num[N_SEGS][N_PER];
static sc_searcher_segment views[N_SEGS];
static sc_searcher searcher;

static int setup(void **state)
{
    (void)state;
    if (fx_begin("score_script", dir, sizeof dir) != 0)
        return -1;
    sc_vec_params p = {DIMS, SC_VEC_SIM_L2, SC_VEC_ELEM_FLOAT, SC_VEC_INDEX_FLAT, 16, 100};
    for (int s = 0; s < N_SEGS; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < N_PER; d++) {
            fx_tagged k;
            sc_index_field f[4];
            size_t nf = fx_tagged_fields(&k, s, d, 0, f);
            for (int i = 0; i < DIMS; i++)
                vecs[s][d][i] = (float)below(2000) / 100.0f - 10.0f;
            has_vec[s][d] = below(10) != 0;
            if (has_vec[s][d])
                f[nf++] = (sc_index_field){.name = sc_slice_cstr("v"),
                                           .kind = SC_FIELD_VECTOR,
                                           .flags = SC_FIELD_INDEXED,
                                           .vector = vecs[s][d],
                                           .vparams = &p};
            nums[s][d] = (int64_t)below(1000);
            has_num[s][d] = has_vec[s][d] && below(4) != 0;
            if (has_num[s][d])
                f[nf++] = fx_numeric("n", SC_FIELD_DOCVALUES, &nums[s][d], 1);
            if (fx_add(b, k.id, f, nf) != 0)
                return -1;
        }
        if (fx_segment_finish(b, dir, s, false, 7, &segs[s], &lives[s], live[s], &views[s]) != 0)
            return -1;
    }
    searcher = (sc_searcher){views, N_SEGS};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEGS; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
    }
    return fx_end(dir);
}

/* A script_score-style query: match_all (or a term on the docs with a vector: every doc has
 * tag t0, so the inner query is match_all either way) scored by src with q bound to `q`. */
static sc_query *script_query(sc_arena *a, const char *src, const sc_score_script_vec *q)
{
    sc_script *s;
    sc_script_error err;
    sc_score_script *ss = sc_arena_calloc(a, 1, sizeof *ss);
    assert_non_null(ss);
    assert_int_equal(sc_script_compile(sc_score_script_env(), sc_slice_cstr(src), a, &s, &err),
                     SC_OK);
    size_t n = sc_script_n_vars(s);
    ss->script = s;
    ss->vals = sc_arena_calloc(a, n + 1, sizeof *ss->vals);
    ss->fields = sc_arena_calloc(a, n + 1, sizeof *ss->fields);
    ss->dv_value = sc_arena_calloc(a, n + 1, sizeof *ss->dv_value);
    ss->dv_scaling = sc_arena_calloc(a, n + 1, sizeof *ss->dv_scaling);
    ss->score_var = -1;
    for (size_t i = 0; i < n; i++) {
        const sc_script_var *v = sc_script_var_get(s, i);
        if (v->kind != SC_SCRIPT_VAR_PARAM)
            ss->fields[i] = sc_slice_cstr(v->name); /* numeric longs: dv_value LONG (0) */
        else if (!strcmp(v->name, "q"))
            ss->vals[i] = (sc_script_value){
                .type = SC_SCRIPT_OBJECT, .obj = q, .obj_kind = SC_SCORE_SCRIPT_VEC};
        else if (!strcmp(v->name, "_score"))
            ss->score_var = (int64_t)i;
    }
    sc_query *fs = sc_query_function_score(a, sc_query_match_all(a));
    sc_score_function f = {.kind = SC_SF_SCRIPT, .weight = 1, .script = ss};
    assert_int_equal(sc_query_function_score_add(a, fs, &f), SC_OK);
    fs->u.function_score.score_mode = SC_SF_SCORE_FIRST;
    fs->u.function_score.boost_mode = SC_SF_BOOST_REPLACE;
    return fs;
}

static void test_vectors_and_doc_values_match_brute_force(void **state)
{
    (void)state;
    static float want[N_SEGS * N_PER];
    for (int round = 0; round < 20; round++) {
        float qv[DIMS];
        for (int i = 0; i < DIMS; i++)
            qv[i] = (float)below(2000) / 100.0f - 10.0f;
        sc_score_script_vec q = {qv, DIMS};
        sc_arena a;
        sc_arena_init(&a, 0);
        /* docs without a vector are filtered out by min_score (the script scores them 0
         * without touching their vector: the ternary short-circuits) */
        sc_query *fq = script_query(&a,
                                    "doc['n'].size() == 0 ? (doc['n'].empty ? 0 : -1) : "
                                    "1 / (1 + l2norm(params.q, 'v')) + dotProduct(params.q, "
                                    "'v') * 0 + doc['n'].value + 1",
                                    &q);
        fq->u.function_score.has_min_score = true;
        fq->u.function_score.min_score = 0.5f;
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = N_SEGS * N_PER;
        sc_search_result r;
        assert_int_equal(sc_search_execute(&searcher, fq, &o, &a, &r), SC_OK);
        size_t nw = 0;
        for (int s = 0; s < N_SEGS; s++)
            for (uint32_t d = 0; d < N_PER; d++) {
                want[s * N_PER + d] = -1;
                if (!live[s][d] || !has_num[s][d])
                    continue;
                double l2 = 0;
                for (int i = 0; i < DIMS; i++)
                    l2 += ((double)qv[i] - vecs[s][d][i]) * ((double)qv[i] - vecs[s][d][i]);
                want[s * N_PER + d] = (float)(1 / (1 + sqrt(l2)) + (double)nums[s][d] + 1);
                nw++;
            }
        assert_int_equal(r.total, nw);
        assert_int_equal(r.n_hits, nw);
        for (size_t i = 0; i < r.n_hits; i++) {
            float w = want[r.hits[i].global_doc];
            assert_true(w >= 0);
            assert_true(fabsf(r.hits[i].score - w) <= 1e-5f * w);
            if (i)
                assert_true(r.hits[i - 1].score >= r.hits[i].score);
        }
        sc_arena_fini(&a);
    }
}

static void expect_error(const char *src, uint32_t dims, const char *reason)
{
    float qv[DIMS] = {1, 2, 3, 4, 5, 6};
    sc_score_script_vec q = {qv, dims};
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *fq = script_query(&a, src, &q);
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = 10;
    sc_search_result r;
    assert_int_equal(sc_search_execute(&searcher, fq, &o, &a, &r), SC_EINVAL);
    if (!strstr(r.error, reason))
        fail_msg("error [%s] lacks [%s]", r.error, reason);
    /* counting (min_score keeps the scoring plan) stops the same way */
    fq->u.function_score.has_min_score = true;
    assert_int_equal(sc_search_count(&searcher, fq, &o, &a, &r), SC_EINVAL);
    sc_arena_fini(&a);
}

static void test_run_time_errors(void **state)
{
    (void)state;
    expect_error("cosineSimilarity(params.q, 'v') + 1", DIMS, "doesn't have a value");
    expect_error("doc['n'].size() > 0 ? cosineSimilarity(params.q, 'v') + 1 : 1", 3,
                 "different number of dimensions [3]");
    expect_error("-1", DIMS, "must not produce negative scores");
    expect_error("cosineSimilarity(params.q, 'tag')", DIMS, "not a dense_vector");
    expect_error("doc['n'].value + 1", DIMS, "null");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_and_doc_values_match_brute_force),
        cmocka_unit_test(test_run_time_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
