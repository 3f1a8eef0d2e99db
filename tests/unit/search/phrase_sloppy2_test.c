/* Two-term sloppy phrases (src/search/phrase_match.c's two-term walk, iter_phrase.c's freq
 * bounds) against a brute-force model over the documents' text. With two distinct terms the
 * SloppyPhraseMatcher's freq is the sum, in text order, of 1 / (1 + d) over the boundaries
 * between runs of one term's positions in the merged order of both (positions less query
 * offsets; at equal positions the term of the run in progress first, at the start the smaller
 * query offset) whose distance d is within the slop; the model builds that order from the text
 * and sums it. Every doc and score (bit for bit) must match: alone (scoring and not), counted
 * into a bitset, scored in bulk, inside a conjunction (two-phase), and with a minimum score
 * collected as the top-k collector does (block skipping on max_score): every doc scoring above
 * it must come. Also the freq bound the pruning uses (freq <= 1.5 m, m the smaller term
 * freq) is checked on every doc. The same term twice in the phrase (repeat groups): the
 * docs must be those with two positions of the term at a gap the slop allows, with the same
 * positive score in every mode. Slop 0..6; short docs and long ones (more than 16 positions of
 * a term, over several position groups). Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/bitset.h"
#include "fixture.h"
#include "index/postings.h"
#include "index/terms.h"
#include "search/bm25.h"
#include "search/iter.h"

enum {
    PER = 5000,
    MAXLEN = 400,
    N_W = 4, /* words 0..2 are phrase terms, 3 is filler */
    ROUNDS = 240
};
static const char *words[N_W] = {"a", "b", "c", "zz"};
static uint8_t text[PER][MAXLEN];
static uint16_t len[PER];
static sc_segment *seg;
static const sc_field_info *field;
static const uint8_t *norms;
static char dir[96];
static sc_bm25 bm25;

static int setup(void **state)
{
    (void)state;
    if (fx_begin("phrase_sloppy2", dir, sizeof dir) != 0)
        return -1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    static sc_index_token toks[MAXLEN];
    for (uint32_t d = 0; d < PER; d++) {
        /* one doc in 12 long: a frequent term's positions cross position groups */
        len[d] = (uint16_t)(below(12) == 0 ? 100 + below(MAXLEN - 100) : 2 + below(30));
        for (uint32_t k = 0; k < len[d]; k++) {
            uint32_t r = below(100);
            uint8_t w = r < 35 ? 0 : r < 55 ? 1 : r < 61 ? 2 : 3;
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
    if (!field)
        return -1;
    sc_bm25_field_stats fs = {field->doc_count, field->sum_total_term_freq};
    sc_bm25_init(&bm25, 1.2f, 0.75f, &fs);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    return fx_end(dir);
}

typedef struct query {
    uint8_t t[2];
    uint32_t off[2];
    uint32_t slop;
} query;

/* Model, two distinct terms: the freq as described at the top (slop 0: the exact phrase's
 * count, the boundaries at distance 0). */
static float model_distinct(const query *q, uint32_t d)
{
    int64_t pa[MAXLEN], pb[MAXLEN];
    uint32_t na = 0, nb = 0;
    for (uint32_t k = 0; k < len[d]; k++) {
        if (text[d][k] == q->t[0])
            pa[na++] = (int64_t)k - q->off[0];
        if (text[d][k] == q->t[1])
            pb[nb++] = (int64_t)k - q->off[1];
    }
    uint32_t i = 0, j = 0;
    int prev_term = -1;
    int64_t prev_pos = 0;
    float f = 0.0f;
    while (i < na || j < nb) {
        int take;
        if (j == nb)
            take = 0;
        else if (i == na)
            take = 1;
        else if (pa[i] != pb[j])
            take = pa[i] < pb[j] ? 0 : 1;
        else if (prev_term >= 0)
            take = prev_term; /* the run in progress takes the tie */
        else
            take = q->off[0] < q->off[1] ? 0 : 1;
        int64_t pos = take == 0 ? pa[i++] : pb[j++];
        if (prev_term >= 0 && take != prev_term && pos - prev_pos <= (int64_t)q->slop)
            f += 1.0f / (1.0f + (float)(pos - prev_pos));
        prev_term = take;
        prev_pos = pos;
    }
    return f;
}

/* Model, the same term twice (offsets off0 < off1, gap g): slop 0, the exact count of
 * positions p with the term at p + g; else whether two positions of the term are delta apart
 * with |delta - g| <= slop (either pp on either position). */
static float model_repeat(const query *q, uint32_t d, bool *match)
{
    uint32_t g = q->off[1] - q->off[0], n = 0;
    *match = false;
    for (uint32_t x = 0; x < len[d]; x++) {
        if (text[d][x] != q->t[0])
            continue;
        for (uint32_t y = x + 1; y < len[d]; y++) {
            if (text[d][y] != q->t[0])
                continue;
            int64_t delta = (int64_t)(y - x);
            int64_t dist = delta > g ? delta - g : (int64_t)g - delta;
            *match = *match || dist <= (int64_t)q->slop || delta + g <= q->slop;
            n += q->slop == 0 && delta == g;
        }
    }
    if (q->slop == 0)
        *match = n > 0;
    return (float)n;
}

static uint32_t term_freq(uint8_t t, uint32_t d)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < len[d]; k++)
        n += text[d][k] == t;
    return n;
}

static sc_doc_iter *make_phrase(sc_arena *a, const query *q, bool scoring)
{
    sc_postings p[2];
    for (size_t i = 0; i < 2; i++) {
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
    sc_doc_iter *it = sc_iter_phrase(a, p, q->off, 2, q->slop, scoring ? &bm25 : NULL, norms);
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
    q->t[0] = (uint8_t)below(3);
    /* the same term twice in one query of four */
    q->t[1] = below(4) == 0 ? q->t[0] : (uint8_t)((q->t[0] + 1 + below(2)) % 3);
    /* the second term one or two after the first (a removed stop word), either order of
     * cost */
    q->off[0] = 0;
    q->off[1] = below(5) == 0 ? 2 : 1;
    q->slop = below(7);
}

static void print_query(const query *q)
{
    fprintf(stderr, "query \"%s@%u %s@%u\"~%u\n", words[q->t[0]], q->off[0], words[q->t[1]],
            q->off[1], q->slop);
}

static bool in_doc(int w, uint32_t d)
{
    for (uint32_t k = 0; k < len[d]; k++)
        if (text[d][k] == w)
            return true;
    return false;
}

static float want_score(float freq, uint32_t d)
{
    return sc_bm25_score(&bm25, freq, norms[d]);
}

/* Docs and scores of one walk of the iterator in the given mode against the model. */
static void check_mode(const query *q, int mode, const bool *want, const float *want_freq,
                       const float *got0, float *got, int filter_w, float min_score)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    bool distinct = q->t[0] != q->t[1];
    sc_doc_iter *it = make_phrase(&a, q, mode != 1 && mode != 2);
    if (mode == 3) {
        sc_doc_iter *c[2] = {make_term(&a, filter_w), it};
        it = sc_iter_conjunction(&a, c, 2, 2);
        assert_non_null(it);
    }
    if (mode == 2) { /* counted into a bitset (two-term counts: bulk_pairs) */
        sc_bitset bs;
        assert_int_equal(sc_bitset_init(&bs, PER), SC_OK);
        sc_doc_iter_into_bitset(it, PER, &bs, 0);
        for (uint32_t d = 0; d < PER; d++)
            if (sc_bitset_test(&bs, d) != want[d]) {
                print_query(q);
                fail_msg("bitset: doc %u %s", d, want[d] ? "missing" : "is not a match");
            }
        sc_bitset_fini(&bs);
        sc_arena_fini(&a);
        return;
    }
    uint32_t e = 0; /* the next doc the model must see come (modes 0, 1, 3, 4) */
    uint32_t docs[64];
    float scores[64];
    bool shallow_done = false;
    for (;;) {
        size_t n;
        if (mode == 4) { /* scored in bulk (exhaustive top-k: bulk_pairs) */
            n = sc_doc_iter_score_batch(it, docs, scores, 1 + below(64));
            if (n == 0)
                break;
        } else if (mode == 5) {
            /* the top-k collector's pruning: min score told, blocks whose bound cannot beat
             * it skipped with shallow moves, then one advance */
            sc_doc_iter_set_min_score(it, min_score);
            uint32_t target = it->positioned ? it->doc + 1 : 0;
            if (it->positioned && it->doc == SC_DOC_END)
                break;
            for (;;) {
                uint32_t upto = sc_doc_iter_advance_shallow(it, target);
                if (upto == SC_DOC_END)
                    upto = SC_DOC_END - 1;
                if (sc_doc_iter_max_score(it, upto) > min_score)
                    break;
                if (upto >= SC_DOC_END - 1) {
                    shallow_done = true;
                    break;
                }
                target = upto + 1;
            }
            if (shallow_done)
                break;
            docs[0] = sc_doc_iter_advance(it, target);
            if (docs[0] == SC_DOC_END)
                break;
            scores[0] = sc_doc_iter_score(it);
            n = 1;
        } else {
            docs[0] = sc_doc_iter_next(it);
            if (docs[0] == SC_DOC_END)
                break;
            scores[0] = mode == 1 ? 0.0f : sc_doc_iter_score(it);
            n = 1;
        }
        for (size_t k = 0; k < n; k++) {
            uint32_t d = docs[k];
            if (d >= PER || !want[d] || (mode == 3 && !in_doc(filter_w, d))) {
                print_query(q);
                fail_msg("mode %d: doc %u is not a match", mode, d);
            }
            for (; e < d; e++) { /* every doc the mode must return before d */
                bool must = want[e];
                if (mode == 3)
                    must = must && in_doc(filter_w, e);
                if (mode == 5)
                    must = must && distinct && want_score(want_freq[e], e) > min_score;
                if (must) {
                    print_query(q);
                    fail_msg("mode %d: doc %u missing (next is %u)", mode, e, d);
                }
            }
            e = d + 1;
            if (mode == 0 || mode == 4 || mode == 5) {
                float s = scores[k];
                /* the same term twice, sloppy: mode 0's score in the other modes */
                float w = distinct || q->slop == 0 ? want_score(want_freq[d], d)
                          : mode == 0              ? s
                                                   : got0[d];
                if (s != w || !(s > 0.0f)) {
                    print_query(q);
                    fail_msg("mode %d: doc %u: score %.9g, the model's freq %.9g scores %.9g", mode,
                             d, s, want_freq[d], w);
                }
                if (mode == 0)
                    got[d] = s;
            }
        }
    }
    for (; e < PER; e++) {
        bool must = want[e];
        if (mode == 3)
            must = must && in_doc(filter_w, e);
        if (mode == 5)
            must = must && distinct && want_score(want_freq[e], e) > min_score;
        if (must) {
            print_query(q);
            fail_msg("mode %d: doc %u missing at the end", mode, e);
        }
    }
    sc_arena_fini(&a);
}

static void test_random_sloppy2(void **state)
{
    (void)state;
    static bool want[PER];
    static float want_freq[PER], got0[PER];
    uint64_t n_q = 0, n_rep = 0, matches = 0, above_min = 0;
    for (int round = 0; round < ROUNDS; round++) {
        query q;
        random_query(&q);
        bool distinct = q.t[0] != q.t[1];
        uint32_t n_want = 0;
        float scores_seen[8];
        size_t n_seen = 0;
        for (uint32_t d = 0; d < PER; d++) {
            if (distinct) {
                want_freq[d] = model_distinct(&q, d);
                want[d] = want_freq[d] > 0.0f;
                /* the pruning's bound: freq <= 1.5 m */
                uint32_t fa = term_freq(q.t[0], d), fb = term_freq(q.t[1], d);
                uint32_t m = fa < fb ? fa : fb;
                if (want_freq[d] > 1.5f * (float)m) {
                    print_query(&q);
                    fail_msg("doc %u: freq %.9g over the bound of m = %u", d, want_freq[d], m);
                }
            } else {
                want_freq[d] = model_repeat(&q, d, &want[d]);
            }
            n_want += want[d];
            if (want[d] && n_seen < 8 && below(50) == 0)
                scores_seen[n_seen++] = want_score(want_freq[d], d);
        }
        matches += n_want;
        n_q++;
        n_rep += !distinct;
        /* the threshold of mode 5: some match's score (a competitive doc sits right above
         * it), else a low one */
        float min_score = n_seen ? scores_seen[below((uint32_t)n_seen)] * 0.999f : 0.1f;
        int filter_w = (int)below(3);
        for (int mode = 0; mode <= 5; mode++) {
            /* 0: alone, scoring; 1: alone, not scoring; 2: into a bitset; 3: beside a term
             * (two-phase); 4: scored in bulk; 5: with a minimum score, as the collector */
            check_mode(&q, mode, want, want_freq, got0, got0, filter_w, min_score);
        }
        for (uint32_t d = 0; d < PER && distinct; d++)
            above_min += want[d] && want_score(want_freq[d], d) > min_score;
    }
    fprintf(stderr,
            "[phrase_sloppy2] %llu phrases (%llu with the same term twice), %llu matching docs, "
            "%llu above the minimum scores\n",
            (unsigned long long)n_q, (unsigned long long)n_rep, (unsigned long long)matches,
            (unsigned long long)above_min);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sloppy2),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
