/* Two-phase phrases inside conjunctions (src/search/iter_bool.c, iter_phrase.c): a phrase
 * that is a required clause next to other required clauses reads positions only for docs
 * every clause matches. Random docs over a small vocabulary (frequent phrase words, a rare
 * filter word); for exact and sloppy phrases, as lead or not, must and filter, with deletes:
 * counts and top 10 (exact and bounded totals) equal a model built from the phrase and the
 * term searched alone, and the number of position checks (sc_iter_stats.phrase_position_checks) is
 * at most the number of docs holding every word (deleted ones included: the live-docs filter
 * is applied above the conjunction). Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

enum {
    PER = 30000,
    MAXLEN = 24
};
static const char *words[] = {"a", "b", "c", "zz", "rare", "mid"};
enum {
    W_A,
    W_B,
    W_C,
    W_ZZ,
    W_RARE,
    W_MID,
    N_W
};
static uint8_t text[PER][MAXLEN];
static uint8_t len[PER];
static sc_segment *seg;
static sc_bitset live;
static bool live_of[PER];
static uint32_t n_deleted;
static sc_searcher_segment ss;
static const sc_searcher searcher = {&ss, 1};
static char dir[96];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("two_phase", dir, sizeof dir) != 0)
        return -1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    for (uint32_t d = 0; d < PER; d++) {
        len[d] = (uint8_t)(2 + below(MAXLEN - 1));
        sc_index_token toks[MAXLEN];
        for (uint32_t k = 0; k < len[d]; k++) {
            uint32_t r = below(1000);
            /* a, b, c frequent; mid in ~1 doc of 10; rare in ~1 doc of 100 */
            uint8_t w = r < 250   ? W_A
                        : r < 500 ? W_B
                        : r < 650 ? W_C
                        : r < 655 ? W_MID
                        : r < 656 ? W_RARE
                                  : W_ZZ;
            text[d][k] = w;
            toks[k] = (sc_index_token){sc_slice_cstr(words[w]), k};
        }
        if (fx_add_body(b, d, toks, len[d]) != 0)
            return -1;
    }
    if (fx_write(b, dir, 0, &seg) != 0)
        return -1;
    if (fx_lives(&live, PER, false, 11, live_of, &n_deleted) != 0)
        return -1;
    ss = fx_searcher_segment(seg, &live, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    sc_bitset_fini(&live);
    return fx_end(dir);
}

static bool has(uint32_t d, int w)
{
    for (uint32_t k = 0; k < len[d]; k++)
        if (text[d][k] == w)
            return true;
    return false;
}

/* Every hit of q over the segment (size = all), into score[] by doc (-1: no hit). */
static size_t all_hits(sc_query *q, float *score)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = PER;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_search_result r;
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
    for (uint32_t d = 0; d < PER; d++)
        score[d] = -1.0f;
    for (size_t i = 0; i < r.n_hits; i++)
        score[r.hits[i].doc] = r.hits[i].score;
    size_t n = r.n_hits;
    sc_arena_fini(&a);
    return n;
}

static float ph_score[PER], t_score[PER];
static ref_hit ref[PER];

/* phrase (w0 w1, slop) AND term w (must or filter): the model from the two searched alone. */
static void check(int w0, int w1, uint32_t slop, int w, bool filter, bool deletes)
{
    ss = fx_searcher_segment(seg, &live, deletes ? n_deleted : 0);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_slice pt[2] = {sc_slice_cstr(words[w0]), sc_slice_cstr(words[w1])};
    all_hits(sc_query_phrase(&a, sc_slice_cstr("body"), pt, NULL, 2, slop), ph_score);
    all_hits(sc_query_term(&a, sc_slice_cstr("body"), sc_slice_cstr(words[w])), t_score);
    size_t n_ref = 0, n_all_words = 0;
    for (uint32_t d = 0; d < PER; d++) {
        /* deleted docs too: the live-docs filter sits above the conjunction */
        n_all_words += has(d, w0) && has(d, w1) && has(d, w);
        if (deletes && !live_of[d])
            continue;
        if (ph_score[d] >= 0 && t_score[d] >= 0) {
            double s = (double)ph_score[d] + (filter ? 0.0 : (double)t_score[d]);
            ref[n_ref++] = (ref_hit){d, (float)s};
        }
    }
    qsort(ref, n_ref, sizeof *ref, cmp_ref);
    sc_query *q = sc_query_bool(&a);
    assert_int_equal(
        sc_query_bool_add(&a, q, SC_OCCUR_MUST,
                          sc_query_phrase(&a, sc_slice_cstr("body"), pt, NULL, 2, slop)),
        SC_OK);
    assert_int_equal(
        sc_query_bool_add(&a, q, filter ? SC_OCCUR_FILTER : SC_OCCUR_MUST,
                          sc_query_term(&a, sc_slice_cstr("body"), sc_slice_cstr(words[w]))),
        SC_OK);
    for (int mode = 0; mode < 3; mode++) { /* count, top 10 exact total, top 10 bounded */
        sc_iter_stats stats = {0};
        sc_search_options o;
        sc_search_options_init(&o);
        o.stats = &stats;
        o.track_total_hits = mode == 1 ? SC_TRACK_TOTAL_HITS_ALL : 5;
        sc_search_result r;
        if (mode == 0) {
            assert_int_equal(sc_search_count(&searcher, q, &o, &a, &r), SC_OK);
            assert_int_equal(r.total, n_ref);
        } else {
            assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
            if (mode == 1)
                assert_int_equal(r.total, n_ref);
            size_t want = n_ref < 10 ? n_ref : 10;
            assert_int_equal(r.n_hits, want);
            for (size_t i = 0; i < want; i++) {
                if (r.hits[i].doc != ref[i].doc || r.hits[i].score != ref[i].score)
                    fail_msg("\"%s %s\"~%u + %s%s: hit %zu: doc %u score %.9g, model doc %llu "
                             "score %.9g",
                             words[w0], words[w1], slop, filter ? "#" : "", words[w], i,
                             r.hits[i].doc, (double)r.hits[i].score, (unsigned long long)ref[i].doc,
                             (double)ref[i].score);
            }
        }
        /* positions were read only where every clause matched */
        if (stats.phrase_position_checks > n_all_words)
            fail_msg("mode %d: \"%s %s\"~%u + %s: %llu position checks, only %zu docs hold "
                     "every word",
                     mode, words[w0], words[w1], slop, words[w],
                     (unsigned long long)stats.phrase_position_checks, n_all_words);
    }
    sc_arena_fini(&a);
}

static void test_phrase_and_term(void **state)
{
    (void)state;
    for (int del = 0; del < 2; del++)
        for (int filter = 0; filter < 2; filter++)
            for (uint32_t slop = 0; slop < 3; slop += 2) {
                check(W_A, W_B, slop, W_RARE, filter, del); /* the term leads */
                check(W_A, W_C, slop, W_MID, filter, del);
                check(W_RARE, W_A, slop, W_B, filter, del); /* the phrase leads */
                check(W_B, W_B, slop, W_A, filter, del);    /* a repeated word */
            }
}

/* Without another clause the phrase checks its own candidates (no conjunction). */
static void test_phrase_alone_counts(void **state)
{
    (void)state;
    ss = fx_searcher_segment(seg, &live, 0);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_slice pt[2] = {sc_slice_cstr("a"), sc_slice_cstr("b")};
    uint64_t want = 0;
    sc_search_result r;
    for (uint32_t d = 0; d < PER; d++) {
        bool m = false;
        for (uint32_t k = 0; k + 1 < len[d] && !m; k++)
            m = text[d][k] == W_A && text[d][k + 1] == W_B;
        want += m;
    }
    sc_search_options o;
    sc_search_options_init(&o);
    assert_int_equal(sc_search_count(&searcher,
                                     sc_query_phrase(&a, sc_slice_cstr("body"), pt, NULL, 2, 0), &o,
                                     &a, &r),
                     SC_OK);
    assert_int_equal(r.total, want);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phrase_and_term),
        cmocka_unit_test(test_phrase_alone_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
