/* The kNN query through the searcher (search/knn.c, iter_docs.c): three segments with
 * deletes and a tag field, vectors on most docs; for random queries, with and without a
 * filter (tag term, selective and broad), sc_search_execute's hits equal the brute-force top k
 * over live, accepted docs (flat vectors: exact) with Elasticsearch's l2 scores; the shard's k
 * is kept across segments; a bool of a knn and a term query sums their scores; counts match.
 * Random seed printed (SCRY_SEED reruns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>

#include "fixture.h"

#define DIMS 6
#define N_SEGS 3
#define N_PER 400
#define N_TAGS 40

static char dir[64];
static sc_segment *segs[N_SEGS];
static sc_bitset lives[N_SEGS];
static bool live[N_SEGS][N_PER];
static bool has_vec[N_SEGS][N_PER];
static float vecs[N_SEGS][N_PER][DIMS];
static uint32_t tags[N_SEGS][N_PER];
static sc_searcher_segment views[N_SEGS];
static sc_searcher searcher;

static int setup(void **state)
{
    (void)state;
    if (fx_begin("knn", dir, sizeof dir) != 0)
        return -1;
    sc_vec_params p = {DIMS, SC_VEC_SIM_L2, SC_VEC_ELEM_FLOAT, SC_VEC_INDEX_FLAT, 16, 100};
    for (int s = 0; s < N_SEGS; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < N_PER; d++) {
            fx_tagged k;
            sc_index_field f[3];
            tags[s][d] = below(N_TAGS);
            size_t nf = fx_tagged_fields(&k, s, d, tags[s][d], f);
            for (int i = 0; i < DIMS; i++)
                vecs[s][d][i] = (float)below(1000) / 100.0f;
            has_vec[s][d] = below(10) != 0;
            if (has_vec[s][d])
                f[nf++] = (sc_index_field){.name = sc_slice_cstr("v"),
                                           .kind = SC_FIELD_VECTOR,
                                           .flags = SC_FIELD_INDEXED,
                                           .vector = vecs[s][d],
                                           .vparams = &p};
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

typedef struct cand {
    float score;
    uint64_t global;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->global < y->global ? -1 : x->global > y->global;
}

/* Brute force: the best k live docs with a vector (and tag == want_tag unless < 0). */
static size_t model(const float *q, uint32_t k, int want_tag, cand *out)
{
    size_t n = 0;
    for (int s = 0; s < N_SEGS; s++)
        for (uint32_t d = 0; d < N_PER; d++) {
            if (!live[s][d] || !has_vec[s][d] ||
                (want_tag >= 0 && tags[s][d] != (uint32_t)want_tag))
                continue;
            double l2 = 0;
            for (int i = 0; i < DIMS; i++)
                l2 += ((double)q[i] - vecs[s][d][i]) * ((double)q[i] - vecs[s][d][i]);
            out[n++] = (cand){(float)(1.0 / (1.0 + l2)), (uint64_t)s * N_PER + d};
        }
    qsort(out, n, sizeof *out, cmp_cand);
    return n < k ? n : k;
}

static void test_knn_matches_brute_force(void **state)
{
    (void)state;
    static cand want[N_SEGS * N_PER];
    for (int round = 0; round < 60; round++) {
        float q[DIMS];
        for (int i = 0; i < DIMS; i++)
            q[i] = (float)below(1000) / 100.0f;
        uint32_t k = 1 + below(30);
        int tag = round % 3 == 0 ? -1 : (int)below(N_TAGS);
        sc_arena a;
        sc_arena_init(&a, 0);
        char t[8];
        snprintf(t, sizeof t, "t%d", tag);
        sc_query *filter =
            tag >= 0 ? sc_query_term(&a, sc_slice_cstr("tag"), sc_slice_cstr(t)) : NULL;
        sc_query *kq = sc_query_knn(&a, sc_slice_cstr("v"), q, DIMS, k, k + 10, filter, NAN);
        assert_non_null(kq);
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = 50;
        sc_search_result r;
        assert_int_equal(sc_search_execute(&searcher, kq, &o, &a, &r), SC_OK);
        size_t nw = model(q, k, tag, want);
        assert_int_equal(r.n_hits, nw);
        assert_int_equal(r.total, nw);
        for (size_t i = 0; i < nw; i++) {
            assert_int_equal(r.hits[i].global_doc, want[i].global);
            assert_true(fabsf(r.hits[i].score - want[i].score) <= 1e-5f * want[i].score);
        }
        /* knn OR a tag term: scores add up */
        sc_query *b = sc_query_bool(&a);
        sc_query *term = sc_query_term(&a, sc_slice_cstr("tag"), sc_slice_cstr("t1"));
        sc_query *kq2 = sc_query_knn(&a, sc_slice_cstr("v"), q, DIMS, k, k + 10, NULL, NAN);
        assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, kq2), SC_OK);
        assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, term), SC_OK);
        sc_search_result rb, rt;
        o.size = 2000;
        assert_int_equal(sc_search_execute(&searcher, b, &o, &a, &rb), SC_OK);
        assert_int_equal(sc_search_execute(&searcher, term, &o, &a, &rt), SC_OK);
        size_t nk = model(q, k, -1, want);
        for (size_t i = 0; i < rb.n_hits; i++) {
            float expect = 0;
            for (size_t j = 0; j < nk; j++)
                if (want[j].global == rb.hits[i].global_doc)
                    expect += want[j].score;
            for (size_t j = 0; j < rt.n_hits; j++)
                if (rt.hits[j].global_doc == rb.hits[i].global_doc)
                    expect += rt.hits[j].score;
            assert_true(fabsf(rb.hits[i].score - expect) <= 1e-4f * expect);
        }
        sc_arena_fini(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knn_matches_brute_force),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
