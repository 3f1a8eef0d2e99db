/* Conjunctions of terms against a brute-force model (src/search/conj_terms.c, count.c and the
 * conjunction collectors of searcher.c): two segments of random docs with terms from 90% down
 * to 0.3% of the docs (bitset, packed and tail blocks) in a text field and a keyword field (no
 * freqs, no norms), every pair and some triples, must and filter clauses, without and with
 * deletes; exact counts (sc_search_count), top 10 with an exact total, and top 10 with the
 * default bounded total must equal the model's counts, docs and BM25 scores (Lucene's formula,
 * double sums). Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixture.h"
#include "search/bm25.h"
#include "search/query.h"

#define TERMS_CORPUS_TAG "conj"
#include "terms_corpus.h"

/* A clause names term t of body, or of the keyword field tag when t >= TAG. */
#define TAG 100
#define TERM(c) ((c) % TAG)
#define FIELD(c) ((c) >= TAG ? "tag" : "body")

/* The model: matching live docs with their scores (musts score, filters do not), sorted. */
static size_t model(const int *must, size_t n_must, const int *filter, size_t n_filter)
{
    sc_bm25 bm[T];
    for (size_t i = 0; i < n_must; i++) {
        sc_bm25_field_stats fs = {0, 0};
        for (int s = 0; s < N_SEG; s++) {
            const sc_field_info *f = sc_segment_field(segs[s], sc_slice_cstr(FIELD(must[i])));
            fs.doc_count += f->doc_count;
            fs.sum_total_term_freq += f->sum_total_term_freq;
        }
        uint64_t df = 0;
        for (uint32_t d = 0; d < N_SEG * PER; d++)
            df += freq[TERM(must[i])][d] > 0;
        sc_bm25_init(&bm[i], 1.0f, sc_bm25_idf(df, fs.doc_count), &fs);
    }
    size_t n = 0;
    for (uint32_t d = 0; d < N_SEG * PER; d++) {
        uint32_t s = d / PER, local = d % PER;
        if (ss[s].live && !live_of[s][local])
            continue;
        bool ok = true;
        for (size_t i = 0; i < n_must && ok; i++)
            ok = freq[TERM(must[i])][d] > 0;
        for (size_t i = 0; i < n_filter && ok; i++)
            ok = freq[TERM(filter[i])][d] > 0;
        if (!ok)
            continue;
        const uint8_t *norms =
            sc_segment_norms(segs[s], sc_segment_field(segs[s], sc_slice_cstr("body")));
        double sum = 0;
        for (size_t i = 0; i < n_must; i++) {
            bool tag = must[i] >= TAG; /* keyword: freq 1, no norms (norm byte 1) */
            sum += sc_bm25_score(&bm[i], tag ? 1.0f : (float)freq[TERM(must[i])][d],
                                 tag ? 1 : norms[local]);
        }
        ref[n++] = (ref_hit){d, (float)sum};
    }
    qsort(ref, n, sizeof *ref, cmp_ref);
    return n;
}

static void check(const int *must, size_t n_must, const int *filter, size_t n_filter)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *q = sc_query_bool(&a);
    for (size_t i = 0; i < n_must; i++)
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_MUST,
                                           sc_query_term(&a, sc_slice_cstr(FIELD(must[i])),
                                                         sc_slice_cstr(names[TERM(must[i])]))),
                         SC_OK);
    for (size_t i = 0; i < n_filter; i++)
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_FILTER,
                                           sc_query_term(&a, sc_slice_cstr(FIELD(filter[i])),
                                                         sc_slice_cstr(names[TERM(filter[i])]))),
                         SC_OK);
    size_t n = model(must, n_must, filter, n_filter);
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    assert_int_equal(sc_search_count(&searcher, q, &o, &a, &r), SC_OK);
    if (r.total != n)
        fprintf(stderr, "count: must %zu filter %zu: %llu, want %zu\n", n_must, n_filter,
                (unsigned long long)r.total, n);
    assert_int_equal(r.total, n);
    for (int mode = 0; mode < 2; mode++) {
        /* exact total (exhaustive collectors), then the default bounded one (pruning) */
        o.track_total_hits = mode == 0 ? SC_TRACK_TOTAL_HITS_ALL : 10000;
        assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
        if (mode == 0 || n <= 10000) {
            assert_int_equal(r.total, n);
            assert_false(r.total_gte);
        } else {
            assert_int_equal(r.total, 10000);
            assert_true(r.total_gte);
        }
        assert_int_equal(r.n_hits, n < 10 ? n : 10);
        for (size_t k = 0; k < r.n_hits; k++) {
            if (r.hits[k].global_doc != ref[k].doc || r.hits[k].score != ref[k].score)
                fprintf(stderr, "mode %d hit %zu: doc %llu score %.9g, want doc %llu %.9g\n", mode,
                        k, (unsigned long long)r.hits[k].global_doc, r.hits[k].score,
                        (unsigned long long)ref[k].doc, ref[k].score);
            assert_int_equal(r.hits[k].global_doc, ref[k].doc);
            assert_true(r.hits[k].score == ref[k].score);
        }
    }
    sc_arena_fini(&a);
}

static void check_all(void)
{
    for (int i = 0; i < T; i++)
        for (int j = i + 1; j < T; j++) {
            int m[2] = {i, j};
            check(m, 2, NULL, 0);
            check(&m[1], 1, &m[0], 1); /* a scoring must and a filter */
        }
    /* the keyword field: terms without freqs and norms, alone and beside text terms */
    for (int i = 0; i < T; i++)
        for (int j = i + 1; j < T; j++) {
            int m[2] = {TAG + i, TAG + j}, mixed[2] = {i, TAG + j};
            check(m, 2, NULL, 0);
            check(mixed, 2, NULL, 0);
            check(&mixed[0], 1, &mixed[1], 1);
        }
    static const int triples[][3] = {{0, 1, 2}, {0, 2, 4}, {1, 3, 5}, {0, 0 + 1, 6}, {2, 3, 4}};
    for (size_t k = 0; k < sizeof triples / sizeof triples[0]; k++) {
        check(triples[k], 3, NULL, 0);
        check(triples[k], 2, &triples[k][2], 1);
    }
}

static void test_conjunctions(void **state)
{
    (void)state;
    check_all();
}

static void test_conjunctions_with_deletes(void **state)
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
        cmocka_unit_test(test_conjunctions),
        cmocka_unit_test(test_conjunctions_with_deletes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
