/* Phrases of three or more terms (src/search/phrase_match.c, iter_phrase.c) against a brute-force
 * matcher over the documents' text: random exact phrases (repeated terms and gaps in the query
 * offsets included) must give every doc and freq (through the score) the brute force finds, and
 * random sloppy phrases of distinct terms every doc where some choice of one position per term
 * lies within the slop (positions less query offsets), scoring and not, alone, beside a term
 * in a conjunction (two-phase) and with a minimum score. Short docs and long ones (positions
 * over several position groups, more than 16 per term); "a" is in most docs, so phrases with
 * it check it last (iter_phrase.c's deferred cursors). Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "index/postings.h"
#include "index/terms.h"
#include "search/bm25.h"
#include "search/iter.h"

enum {
    PER = 6000,
    MAXLEN = 400,
    N_W = 7, /* words 0..5 are phrase terms, 6 is filler */
    ROUNDS = 400
};
static const char *words[N_W] = {"a", "b", "c", "d", "e", "f", "zz"};
static uint8_t text[PER][MAXLEN];
static uint16_t len[PER];
static sc_segment *seg;
static const sc_field_info *field;
static const uint8_t *norms;
static char dir[96];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("phrase_match", dir, sizeof dir) != 0)
        return -1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    static sc_index_token toks[MAXLEN];
    for (uint32_t d = 0; d < PER; d++) {
        /* one doc in 16 long: a dense term's positions cross position groups */
        len[d] = (uint16_t)(below(16) == 0 ? 100 + below(MAXLEN - 100) : 2 + below(30));
        for (uint32_t k = 0; k < len[d]; k++) {
            uint32_t r = below(1000);
            uint8_t w = r < 300   ? 0
                        : r < 500 ? 1
                        : r < 650 ? 2
                        : r < 750 ? 3
                        : r < 800 ? 4
                        : r < 815 ? 5
                                  : 6;
            text[d][k] = w;
            toks[k] = (sc_index_token){sc_slice_cstr(words[w]), k};
        }
        if (fx_add_body(b, d, toks, len[d]) != 0)
            return -1;
    }
    if (fx_write(b, dir, 0, &seg) != 0)
        return -1;
    field = sc_segment_field(seg, sc_slice_cstr("body"));
    norms = field ? sc_segment_norms(seg, field) : NULL;
    return field ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    return fx_end(dir);
}

typedef struct query {
    size_t n;
    uint8_t t[8];
    uint32_t off[8];
    uint32_t slop;
} query;

/* Brute force, exact: the starts s with term i at s + off_i for every i. */
static uint32_t bf_exact(const query *q, uint32_t d)
{
    uint32_t f = 0;
    for (uint32_t s = 0; s < len[d]; s++) {
        size_t i = 0;
        while (i < q->n && s + q->off[i] < len[d] && text[d][s + q->off[i]] == q->t[i])
            i++;
        f += i == q->n;
    }
    return f;
}

/* Brute force, sloppy (distinct terms): some m such that every term has a position p with
 * p - off_i in [m, m + slop] (the least of a window is some term's p - off_i). */
static bool bf_sloppy(const query *q, uint32_t d)
{
    for (size_t a = 0; a < q->n; a++)
        for (uint32_t pa = 0; pa < len[d]; pa++) {
            if (text[d][pa] != q->t[a])
                continue;
            int64_t m = (int64_t)pa - q->off[a];
            size_t i = 0;
            for (; i < q->n; i++) {
                bool found = false;
                for (int64_t v = m; v <= m + q->slop && !found; v++) {
                    int64_t p = v + q->off[i];
                    found = p >= 0 && p < len[d] && text[d][p] == q->t[i];
                }
                if (!found)
                    break;
            }
            if (i == q->n)
                return true;
        }
    return false;
}

static sc_bm25 bm25;

static sc_doc_iter *make_phrase(sc_arena *a, const query *q, bool scoring)
{
    sc_postings p[8];
    for (size_t i = 0; i < q->n; i++) {
        sc_term_info ti;
        bool found;
        assert_int_equal(sc_terms_lookup(seg, field, sc_slice_cstr(words[q->t[i]]), &ti, &found),
                         SC_OK);
        assert_true(found);
        sc_postings_init(&p[i]);
        assert_int_equal(
            sc_postings_reset(&p[i], seg, field, &ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS),
            SC_OK);
    }
    sc_doc_iter *it = sc_iter_phrase(a, p, q->off, q->n, q->slop, scoring ? &bm25 : NULL, norms);
    assert_non_null(it);
    return it;
}

static sc_doc_iter *make_term(sc_arena *a, int w)
{
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, field, sc_slice_cstr(words[w]), &ti, &found), SC_OK);
    assert_true(found);
    sc_postings p;
    sc_postings_init(&p);
    assert_int_equal(sc_postings_reset(&p, seg, field, &ti, SC_POSTINGS_FREQS), SC_OK);
    return sc_iter_term(a, &p, NULL, norms);
}

static void random_query(query *q)
{
    q->n = 3 + below(3);
    q->slop = below(2) ? 0 : 1 + below(4);
    for (size_t i = 0; i < q->n; i++) {
        bool again;
        do { /* sloppy: distinct terms (the brute force has no repeat groups) */
            q->t[i] = (uint8_t)below(6);
            again = false;
            for (size_t k = 0; k < i && q->slop; k++)
                again = again || q->t[k] == q->t[i];
        } while (again);
        /* a gap in one offset of five (a removed stop word) */
        q->off[i] = i == 0 ? 0 : q->off[i - 1] + 1 + (below(5) == 0);
    }
}

static void print_query(const query *q)
{
    fprintf(stderr, "query \"");
    for (size_t i = 0; i < q->n; i++)
        fprintf(stderr, "%s%s@%u", i ? " " : "", words[q->t[i]], q->off[i]);
    fprintf(stderr, "\"~%u\n", q->slop);
}

static void test_random_phrases(void **state)
{
    (void)state;
    sc_bm25_field_stats fs = {field->doc_count, field->sum_total_term_freq};
    sc_bm25_init(&bm25, 1.0f, 1.5f, &fs);
    static bool want[PER];
    static uint32_t want_freq[PER];
    uint64_t n_exact = 0, n_sloppy = 0, matches = 0;
    for (int round = 0; round < ROUNDS; round++) {
        query q;
        random_query(&q);
        uint32_t n_want = 0;
        for (uint32_t d = 0; d < PER; d++) {
            want_freq[d] = q.slop ? 0 : bf_exact(&q, d);
            want[d] = q.slop ? bf_sloppy(&q, d) : want_freq[d] > 0;
            n_want += want[d];
        }
        matches += n_want;
        n_exact += q.slop == 0;
        n_sloppy += q.slop != 0;
        int filter_w = (int)below(6);
        float min_score = 0.0f;
        for (int mode = 0; mode < 4; mode++) {
            /* 0: alone, scoring; 1: alone, not scoring; 2: beside a term (two-phase); 3: with
             * a minimum score (every doc scoring above it must come) */
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_doc_iter *it = make_phrase(&a, &q, mode != 1);
            if (mode == 2) {
                sc_doc_iter *c[2] = {make_term(&a, filter_w), it};
                it = sc_iter_conjunction(&a, c, 2, 2);
                assert_non_null(it);
            }
            if (mode == 3)
                sc_doc_iter_set_min_score(it, min_score);
            uint32_t prev = 0, got = 0;
            bool first = true;
            for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END; d = sc_doc_iter_next(it)) {
                assert_true(first || d > prev);
                first = false;
                bool in_filter = false;
                for (uint32_t k = 0; mode == 2 && k < len[d] && !in_filter; k++)
                    in_filter = text[d][k] == filter_w;
                if (!want[d] || (mode == 2 && !in_filter)) {
                    print_query(&q);
                    fail_msg("mode %d: doc %u is not a match", mode, d);
                }
                if (mode == 0 || mode == 3) {
                    float s = sc_doc_iter_score(it);
                    if (q.slop == 0) {
                        float e = sc_bm25_score(&bm25, (float)want_freq[d], norms[d]);
                        if (s != e) {
                            print_query(&q);
                            fail_msg("doc %u: score %.9g, freq %u scores %.9g", d, s, want_freq[d],
                                     e);
                        }
                    } else if (!(s > 0.0f)) {
                        print_query(&q);
                        fail_msg("doc %u: sloppy score %.9g", d, s);
                    }
                    if (mode == 0 && s > min_score && below(4) == 0)
                        min_score = s; /* some match's score: mode 3's threshold */
                }
                prev = d;
                got++;
            }
            if (mode <= 1 && got != n_want) {
                print_query(&q);
                fail_msg("mode %d: %u docs, the brute force %u", mode, got, n_want);
            }
            sc_arena_fini(&a);
        }
        /* mode 2 and 3's completeness: rerun collecting the docs they must return */
        for (int mode = 2; mode <= 3; mode++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_doc_iter *it = make_phrase(&a, &q, mode == 3);
            if (mode == 2) {
                sc_doc_iter *c[2] = {make_term(&a, filter_w), it};
                it = sc_iter_conjunction(&a, c, 2, 2);
            } else {
                sc_doc_iter_set_min_score(it, min_score);
            }
            uint32_t d = sc_doc_iter_next(it);
            for (uint32_t e = 0; e < PER; e++) {
                bool must = want[e];
                if (mode == 2) {
                    bool in_filter = false;
                    for (uint32_t k = 0; k < len[e] && !in_filter; k++)
                        in_filter = text[e][k] == filter_w;
                    must = must && in_filter;
                } else if (must) {
                    float s = q.slop ? 0.0f : sc_bm25_score(&bm25, (float)want_freq[e], norms[e]);
                    must = q.slop == 0 && s > min_score;
                }
                if (must && d != e) {
                    print_query(&q);
                    fail_msg("mode %d: doc %u missing (next is %u)", mode, e, d);
                }
                if (d == e)
                    d = sc_doc_iter_next(it);
            }
            sc_arena_fini(&a);
        }
    }
    fprintf(stderr, "[phrase_match] %llu exact and %llu sloppy phrases, %llu matching docs\n",
            (unsigned long long)n_exact, (unsigned long long)n_sloppy, (unsigned long long)matches);
}

/* Two-term exact phrases collected as a top-k collector does (iter_phrase.c's score_batch):
 * a batch or two with no minimum score, then a minimum score (some match's score, raised
 * along the way) and batches of 1 to 128 docs, the bulk path skipping lead blocks and
 * candidates by their bounds: every doc the brute force scores above the minimum in force
 * must come with its score, and nothing else but matches. */
static void test_two_term_batches(void **state)
{
    (void)state;
    sc_bm25_field_stats fs = {field->doc_count, field->sum_total_term_freq};
    sc_bm25_init(&bm25, 1.0f, 1.5f, &fs);
    static uint32_t want_freq[PER];
    static float want_score[PER];
    static uint32_t docs[128];
    static float scores[128];
    uint64_t checked = 0;
    for (int round = 0; round < 200; round++) {
        query q = {.n = 2, .slop = 0};
        q.t[0] = (uint8_t)below(6);
        q.t[1] = (uint8_t)below(6);
        q.off[0] = 0;
        q.off[1] = 1 + (below(5) == 0);
        float scs[PER];
        size_t n_scs = 0;
        for (uint32_t d = 0; d < PER; d++) {
            want_freq[d] = bf_exact(&q, d);
            want_score[d] = want_freq[d] ? sc_bm25_score(&bm25, (float)want_freq[d], norms[d]) : 0;
            if (want_freq[d])
                scs[n_scs++] = want_score[d];
        }
        if (n_scs == 0)
            continue;
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_doc_iter *it = make_phrase(&a, &q, true);
        float min_score = 0.0f;
        uint32_t next_want = 0; /* every doc below it was checked */
        int batch = 0;
        for (;;) {
            size_t max = batch < 2 ? 4 : 1 + below(128);
            size_t n = sc_doc_iter_score_batch(it, docs, scores, max);
            for (size_t i = 0; i < n; i++) {
                uint32_t d = docs[i];
                if (d < next_want || d >= PER || !want_freq[d]) {
                    print_query(&q);
                    fail_msg("batch %d: doc %u is not a match (or out of order)", batch, d);
                }
                if (scores[i] != want_score[d]) {
                    print_query(&q);
                    fail_msg("doc %u: score %.9g, freq %u scores %.9g", d, scores[i],
                             want_freq[d], want_score[d]);
                }
                for (uint32_t e = next_want; e < d; e++)
                    if (want_freq[e] && want_score[e] > min_score) {
                        print_query(&q);
                        fail_msg("batch %d (min %.9g): doc %u missing (scores %.9g), next %u",
                                 batch, min_score, e, want_score[e], d);
                    }
                next_want = d + 1;
                checked++;
            }
            if (n == 0) {
                for (uint32_t e = next_want; e < PER; e++)
                    if (want_freq[e] && want_score[e] > min_score) {
                        print_query(&q);
                        fail_msg("min %.9g: doc %u missing at the end", min_score, e);
                    }
                break;
            }
            batch++;
            /* some match's score as the minimum, rising now and then */
            float m = scs[below((uint32_t)n_scs)];
            if (batch == 2 || (m > min_score && below(3) == 0)) {
                if (m > min_score)
                    min_score = m;
                sc_doc_iter_set_min_score(it, min_score);
            }
        }
        sc_arena_fini(&a);
    }
    fprintf(stderr, "[phrase_match] two-term batches: %llu docs checked\n",
            (unsigned long long)checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_phrases),
        cmocka_unit_test(test_two_term_batches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
