/* Required + optional (and excluded) terms (src/search/reqopt_terms.c, the exhaustive
 * collector of req_opt / exclusion trees of terms) against a brute-force model: two segments of
 * random docs with terms from 90% down to 0.3% of the docs (bitset, packed and tail blocks),
 * one or two required terms (+ a filter), one to three optional terms (some boosted), zero to
 * two excluded terms, without and with deletes; top 10 with an exact total and with bounded
 * totals (10,000 and 100: required blocks skipped by block-max) must equal the model's
 * total, docs and scores bit for bit: the required sum (double, cast), plus in float the
 * optional terms' double sum cast (Lucene's ReqOptSumScorer over a DisjunctionSumScorer).
 * Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixture.h"
#include "search/bm25.h"
#include "search/query.h"

#define TERMS_CORPUS_TAG "reqopt"
#include "terms_corpus.h"

/* A query: required terms (scoring, boost), a filter term (-1: none), optional terms (boost),
 * excluded terms. */
typedef struct shape {
    int req[2];
    size_t n_req;
    int filter;
    int opt[3];
    float opt_boost[3];
    size_t n_opt;
    int ex[2];
    size_t n_ex;
} shape;

static void init_bm25(sc_bm25 *bm, int t, float boost)
{
    sc_bm25_field_stats fs = {0, 0};
    for (int s = 0; s < N_SEG; s++) {
        const sc_field_info *f = sc_segment_field(segs[s], sc_slice_cstr("body"));
        fs.doc_count += f->doc_count;
        fs.sum_total_term_freq += f->sum_total_term_freq;
    }
    uint64_t df = 0;
    for (uint32_t d = 0; d < N_SEG * PER; d++)
        df += freq[t][d] > 0;
    sc_bm25_init(bm, boost, sc_bm25_idf(df, fs.doc_count), &fs);
}

static size_t model(const shape *q)
{
    sc_bm25 rb[2], ob[3];
    for (size_t i = 0; i < q->n_req; i++)
        init_bm25(&rb[i], q->req[i], 1.0f);
    for (size_t i = 0; i < q->n_opt; i++)
        init_bm25(&ob[i], q->opt[i], q->opt_boost[i]);
    size_t n = 0;
    for (uint32_t d = 0; d < N_SEG * PER; d++) {
        uint32_t s = d / PER, local = d % PER;
        if (ss[s].live && ss[s].n_deleted && !live_of[s][local])
            continue;
        bool ok = q->filter < 0 || freq[q->filter][d] > 0;
        for (size_t i = 0; i < q->n_req && ok; i++)
            ok = freq[q->req[i]][d] > 0;
        for (size_t i = 0; i < q->n_ex && ok; i++)
            ok = freq[q->ex[i]][d] == 0;
        if (!ok)
            continue;
        const uint8_t *norms =
            sc_segment_norms(segs[s], sc_segment_field(segs[s], sc_slice_cstr("body")));
        double rs = 0, os = 0;
        bool on = false;
        for (size_t i = 0; i < q->n_req; i++)
            rs += sc_bm25_score(&rb[i], (float)freq[q->req[i]][d], norms[local]);
        for (size_t i = 0; i < q->n_opt; i++)
            if (freq[q->opt[i]][d]) {
                on = true;
                os += sc_bm25_score(&ob[i], (float)freq[q->opt[i]][d], norms[local]);
            }
        float sc = (float)rs;
        if (on)
            sc += (float)os;
        ref[n++] = (ref_hit){d, sc};
    }
    qsort(ref, n, sizeof *ref, cmp_ref);
    return n;
}

static sc_query *term(sc_arena *a, int t, float boost)
{
    sc_query *q = sc_query_term(a, sc_slice_cstr("body"), sc_slice_cstr(names[t]));
    if (boost != 1.0f)
        q->boost = boost;
    return q;
}

static void check(const shape *s)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *q = sc_query_bool(&a);
    for (size_t i = 0; i < s->n_req; i++)
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_MUST, term(&a, s->req[i], 1.0f)), SC_OK);
    if (s->filter >= 0)
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_FILTER, term(&a, s->filter, 1.0f)),
                         SC_OK);
    for (size_t i = 0; i < s->n_opt; i++)
        assert_int_equal(
            sc_query_bool_add(&a, q, SC_OCCUR_SHOULD, term(&a, s->opt[i], s->opt_boost[i])), SC_OK);
    for (size_t i = 0; i < s->n_ex; i++)
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_MUST_NOT, term(&a, s->ex[i], 1.0f)),
                         SC_OK);
    size_t n = model(s);
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    static const int64_t tracks[3] = {SC_TRACK_TOTAL_HITS_ALL, 10000, 100};
    for (int mode = 0; mode < 3; mode++) {
        /* exact total, then bounded ones: required blocks skipped by block-max once counted
         * far enough (sooner at 100) */
        o.track_total_hits = tracks[mode];
        assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
        if (mode == 0 || n < (size_t)tracks[mode]) {
            if (r.total != n)
                fprintf(stderr, "req %d opt %zu ex %zu mode %d: total %llu, want %zu\n", s->req[0],
                        s->n_opt, s->n_ex, mode, (unsigned long long)r.total, n);
            assert_int_equal(r.total, n);
            assert_false(r.total_gte);
        } else {
            /* exactly the bound counted: "gte" is allowed (counting stops there, as in the
             * iterator tree's collector) */
            assert_int_equal(r.total, tracks[mode]);
            if (n > (size_t)tracks[mode])
                assert_true(r.total_gte);
        }
        assert_int_equal(r.n_hits, n < 10 ? n : 10);
        for (size_t k = 0; k < r.n_hits; k++) {
            if (r.hits[k].global_doc != ref[k].doc || r.hits[k].score != ref[k].score)
                fprintf(stderr,
                        "req %d opt %zu ex %zu mode %d hit %zu: doc %llu %.9g, want %llu %.9g\n",
                        s->req[0], s->n_opt, s->n_ex, mode, k,
                        (unsigned long long)r.hits[k].global_doc, r.hits[k].score,
                        (unsigned long long)ref[k].doc, ref[k].score);
            assert_int_equal(r.hits[k].global_doc, ref[k].doc);
            assert_true(r.hits[k].score == ref[k].score);
        }
    }
    sc_arena_fini(&a);
}

static void check_all(void)
{
    static const float boosts[] = {1.0f, 3.0f, 0.5f};
    /* every required term with every optional one, plain and with an exclusion */
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            if (i == j)
                continue;
            shape s = {{i}, 1, -1, {j}, {boosts[(i + j) % 3]}, 1, {0}, 0};
            check(&s);
            s.ex[0] = (i + j + 1) % T;
            s.n_ex = s.ex[0] != i && s.ex[0] != j;
            check(&s);
        }
    /* random larger shapes: two required terms or a filter, up to three optional, two
     * excluded */
    for (int round = 0; round < 60; round++) {
        shape s = {{0}, 0, -1, {0}, {0}, 0, {0}, 0};
        int used[T] = {0};
#define PICK(dst)                                                                                  \
    do {                                                                                           \
        int t_;                                                                                    \
        do                                                                                         \
            t_ = (int)below(T);                                                                    \
        while (used[t_]);                                                                          \
        used[t_] = 1;                                                                              \
        (dst) = t_;                                                                                \
    } while (0)
        s.n_req = 1 + below(2);
        for (size_t i = 0; i < s.n_req; i++)
            PICK(s.req[i]);
        if (below(3) == 0)
            PICK(s.filter);
        s.n_opt = below(4);
        for (size_t i = 0; i < s.n_opt; i++) {
            PICK(s.opt[i]);
            s.opt_boost[i] = boosts[below(3)];
        }
        s.n_ex = below(3);
        if (s.n_req + (s.filter >= 0) + s.n_opt + s.n_ex > T)
            s.n_ex = 0;
        for (size_t i = 0; i < s.n_ex; i++)
            PICK(s.ex[i]);
#undef PICK
        check(&s);
    }
}

static void test_reqopt(void **state)
{
    (void)state;
    check_all();
}

static void test_reqopt_with_deletes(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        uint32_t deleted = 0;
        for (uint32_t d = 0; d < PER; d++)
            deleted += !live_of[s][d];
        ss[s] = fx_searcher_segment(segs[s], &lives[s], deleted);
    }
    check_all();
    for (int s = 0; s < N_SEG; s++)
        ss[s] = fx_searcher_segment(segs[s], &lives[s], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reqopt),
        cmocka_unit_test(test_reqopt_with_deletes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
