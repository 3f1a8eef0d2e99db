/* dfs statistics (search/term_stats.c) on real segments: four segments of random text
 * documents play four shards. For random term, phrase and bool queries, the statistics
 * collected per segment and summed (sc_term_stats_add) equal those collected over all four;
 * and searching one segment with them (sc_search_options.dfs) scores every hit exactly as
 * searching all four segments does, while its own statistics give other scores. Seed printed,
 * SCRY_SEED reruns. */
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
#include "search/query.h"
#include "search/searcher.h"
#include "search/term_stats.h"

#include "fixture.h"

#define N_SEG 4
#define PER_SEG 150
#define N_WORDS 12

static const char *const words[N_WORDS] = {"quick", "brown", "fox",   "lazy",  "dog",  "jumps",
                                           "over",  "river", "stone", "light", "tree", "moss"};
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static char dir[64];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("term_stats", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            fx_tagged k;
            sc_index_field f[3];
            size_t nf = fx_tagged_fields(&k, s, d, below(3), f);
            sc_index_token toks[8];
            uint32_t n = 1 + below(8);
            for (uint32_t i = 0; i < n; i++) /* skewed per segment: statistics differ */
                toks[i] = (sc_index_token){
                    sc_slice_cstr(words[(below(N_WORDS) + s * below(2)) % N_WORDS]), i};
            f[nf++] =
                (sc_index_field){.name = sc_slice_cstr("body"),
                                 .kind = SC_FIELD_TEXT,
                                 .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
                                 .tokens = toks,
                                 .n_tokens = n};
            if (fx_add(b, k.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, true, 1, &segs[s], &lives[s], live, &ss[s]) != 0)
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
    }
    return fx_end(dir);
}

static sc_query *term(sc_arena *a)
{
    return sc_query_term(a, sc_slice_cstr("body"), sc_slice_cstr(words[below(N_WORDS)]));
}

static sc_query *rand_query(sc_arena *a)
{
    switch (below(3)) {
    case 0: return term(a);
    case 1: {
        sc_slice t[2] = {sc_slice_cstr(words[below(N_WORDS)]),
                         sc_slice_cstr(words[below(N_WORDS)])};
        uint32_t pos[2] = {0, 1};
        return sc_query_phrase(a, sc_slice_cstr("body"), t, pos, 2, below(2));
    }
    default: {
        sc_query *b = sc_query_bool(a);
        for (uint32_t i = 0, n = 2 + below(2); b && i < n; i++)
            if (sc_query_bool_add(a, b, SC_OCCUR_SHOULD, term(a)) != SC_OK)
                return NULL;
        return b;
    }
    }
}

static void stats_equal(const sc_term_stats *x, const sc_term_stats *y)
{
    assert_int_equal(x->n_fields, y->n_fields);
    assert_int_equal(x->n_terms, y->n_terms);
    for (size_t i = 0; i < x->n_fields; i++) {
        sc_bm25_field_stats fs;
        assert_true(sc_term_stats_field(y, x->fields[i].field, &fs));
        assert_true(fs.doc_count == x->fields[i].doc_count);
        assert_true(fs.sum_total_term_freq == x->fields[i].sum_total_term_freq);
    }
    for (size_t i = 0; i < x->n_terms; i++) {
        uint64_t df = 0;
        assert_true(sc_term_stats_term(y, x->terms[i].field, x->terms[i].term, &df));
        assert_true(df == x->terms[i].doc_freq);
    }
}

static void test_dfs_scores_equal_one_index(void **state)
{
    (void)state;
    sc_searcher all = {ss, N_SEG};
    size_t differ = 0;
    for (int q = 0; q < 60; q++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *query = rand_query(&a);
        assert_non_null(query);
        sc_term_stats whole, sum = {0};
        assert_int_equal(sc_term_stats_collect(&all, query, &a, &whole), SC_OK);
        for (int s = 0; s < N_SEG; s++) {
            sc_searcher one = {&ss[s], 1};
            sc_term_stats part;
            assert_int_equal(sc_term_stats_collect(&one, query, &a, &part), SC_OK);
            assert_int_equal(sc_term_stats_add(&sum, &part, &a), SC_OK);
        }
        stats_equal(&whole, &sum);
        stats_equal(&sum, &whole);
        /* every doc's score over all segments */
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = N_SEG * PER_SEG;
        o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        sc_search_result ra;
        assert_int_equal(sc_search_execute(&all, query, &o, &a, &ra), SC_OK);
        float *want = calloc(N_SEG * PER_SEG, sizeof *want);
        for (size_t i = 0; i < ra.n_hits; i++)
            want[ra.hits[i].global_doc] = ra.hits[i].score;
        for (int s = 0; s < N_SEG; s++) {
            sc_searcher one = {&ss[s], 1};
            sc_search_result r;
            o.dfs = &sum;
            assert_int_equal(sc_search_execute(&one, query, &o, &a, &r), SC_OK);
            for (size_t i = 0; i < r.n_hits; i++) {
                uint64_t g = (uint64_t)s * PER_SEG + r.hits[i].global_doc;
                if (r.hits[i].score != want[g])
                    fail_msg("query %d segment %d doc %u: dfs score %.9g, one index %.9g", q, s,
                             (unsigned)r.hits[i].doc, r.hits[i].score, want[g]);
            }
            o.dfs = NULL;
            assert_int_equal(sc_search_execute(&one, query, &o, &a, &r), SC_OK);
            for (size_t i = 0; i < r.n_hits; i++)
                differ += r.hits[i].score != want[(uint64_t)s * PER_SEG + r.hits[i].global_doc];
        }
        free(want);
        sc_arena_fini(&a);
    }
    assert_true(differ > 0); /* the per-segment statistics alone do differ */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dfs_scores_equal_one_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
