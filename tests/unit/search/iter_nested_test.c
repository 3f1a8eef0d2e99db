/* Tests for the block join iterator (src/search/iter_nested.c): random blocks (children then
 * their root) and random matching children with scores; next, advance to random targets
 * (roots, children, past the end) and the bulk fallbacks must give exactly the roots a
 * brute-force model gives, with the score of every score mode (avg, sum, min, max, none, in
 * double as Lucene) times the boost. The seed is printed (SCRY_SEED replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/iter.h"

static unsigned seed;

typedef struct model {
    uint32_t n_docs;
    sc_bitset parents;
    uint32_t *child_docs; /* matching children, ascending */
    float *child_scores;
    size_t n_child;
} model;

static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(rand() % (int)n);
}

/* Random blocks of 0..6 children then a root; each child matches with probability 1/3. */
static void build(model *m, uint32_t n_blocks)
{
    uint32_t cap = n_blocks * 8;
    m->child_docs = calloc(cap, sizeof *m->child_docs);
    m->child_scores = calloc(cap, sizeof *m->child_scores);
    assert_non_null(m->child_docs);
    assert_int_equal(sc_bitset_init(&m->parents, cap), SC_OK);
    uint32_t d = 0;
    m->n_child = 0;
    for (uint32_t b = 0; b < n_blocks; b++) {
        uint32_t k = rnd(7);
        for (uint32_t i = 0; i < k; i++, d++) {
            if (rnd(3) == 0) {
                m->child_docs[m->n_child] = d;
                m->child_scores[m->n_child++] = (float)(1 + rnd(100)) / 8.0f;
            }
        }
        sc_bitset_set(&m->parents, d++);
    }
    m->n_docs = d;
    m->parents.n_bits = d; /* the bits past n_docs are zero */
}

/* The expected score of root r under mode, or NAN when r has no matching child. */
static float expect(const model *m, uint32_t r, sc_nested_score_mode mode, float boost)
{
    uint32_t start = r;
    while (start > 0 && !sc_bitset_test(&m->parents, start - 1))
        start--;
    double acc = 0;
    uint32_t n = 0;
    for (size_t i = 0; i < m->n_child; i++) {
        uint32_t c = m->child_docs[i];
        if (c < start || c >= r)
            continue;
        double s = m->child_scores[i];
        if (n == 0)
            acc = s;
        else if (mode == SC_NESTED_SCORE_MIN)
            acc = s < acc ? s : acc;
        else if (mode == SC_NESTED_SCORE_MAX)
            acc = s > acc ? s : acc;
        else
            acc += s;
        n++;
    }
    if (!n)
        return NAN;
    if (mode == SC_NESTED_SCORE_AVG)
        acc /= n;
    return mode == SC_NESTED_SCORE_NONE ? 0.0f : (float)acc * boost;
}

static sc_doc_iter *make(sc_arena *a, const model *m, sc_nested_score_mode mode, float boost)
{
    sc_doc_iter *c = sc_iter_docs(a, m->child_docs, m->child_scores, m->n_child);
    assert_non_null(c);
    sc_doc_iter *it = sc_iter_nested(a, c, &m->parents, m->n_docs, mode, boost);
    assert_non_null(it);
    return it;
}

static void test_against_model(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        model m = {0};
        build(&m, 1 + rnd(400));
        for (int mode = SC_NESTED_SCORE_AVG; mode <= SC_NESTED_SCORE_NONE; mode++) {
            float boost = round % 2 ? 1.0f : 2.5f;
            sc_arena a;
            sc_arena_init(&a, 0);
            /* next: every root with a matching child, in order, with its score */
            sc_doc_iter *it = make(&a, &m, (sc_nested_score_mode)mode, boost);
            uint32_t want = 0;
            for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END; d = sc_doc_iter_next(it)) {
                while (want < d) {
                    if (sc_bitset_test(&m.parents, want))
                        assert_true(isnan(expect(&m, want, (sc_nested_score_mode)mode, boost)));
                    want++;
                }
                assert_true(sc_bitset_test(&m.parents, d));
                float e = expect(&m, d, (sc_nested_score_mode)mode, boost);
                assert_false(isnan(e));
                assert_true(sc_doc_iter_score(it) == e);
                want = d + 1;
            }
            for (; want < m.n_docs; want++)
                if (sc_bitset_test(&m.parents, want))
                    assert_true(isnan(expect(&m, want, (sc_nested_score_mode)mode, boost)));
            /* advance to random increasing targets (children and roots alike) */
            it = make(&a, &m, (sc_nested_score_mode)mode, boost);
            uint32_t t = 0;
            while (t <= m.n_docs + 2) {
                uint32_t got = sc_doc_iter_advance(it, t);
                uint32_t exp = SC_DOC_END;
                for (uint32_t d = t; d < m.n_docs; d++)
                    if (sc_bitset_test(&m.parents, d) &&
                        !isnan(expect(&m, d, (sc_nested_score_mode)mode, boost))) {
                        exp = d;
                        break;
                    }
                assert_int_equal(got, exp);
                if (got == SC_DOC_END)
                    break;
                assert_true(sc_doc_iter_score(it) ==
                            expect(&m, got, (sc_nested_score_mode)mode, boost));
                t = got + 1 + rnd(12);
            }
            /* the bulk fallbacks: into_bitset over the whole segment equals next's roots */
            it = make(&a, &m, (sc_nested_score_mode)mode, boost);
            sc_bitset bs;
            assert_int_equal(sc_bitset_init(&bs, m.n_docs), SC_OK);
            sc_doc_iter_next(it);
            if (it->doc != SC_DOC_END)
                sc_doc_iter_into_bitset(it, m.n_docs, &bs, 0);
            for (uint32_t d = 0; d < m.n_docs; d++)
                assert_int_equal(sc_bitset_test(&bs, d),
                                 sc_bitset_test(&m.parents, d) &&
                                     !isnan(expect(&m, d, (sc_nested_score_mode)mode, boost)));
            sc_bitset_fini(&bs);
            sc_arena_fini(&a);
        }
        sc_bitset_fini(&m.parents);
        free(m.child_docs);
        free(m.child_scores);
    }
}

/* A root whose block has no children and a segment of roots only never match; an empty
 * child iterator ends at once. */
static void test_edges(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_bitset p;
    assert_int_equal(sc_bitset_init(&p, 4), SC_OK);
    sc_bitset_set_range(&p, 0, 4);
    sc_doc_iter *c = sc_iter_docs(&a, NULL, NULL, 0);
    sc_doc_iter *it = sc_iter_nested(&a, c, &p, 4, SC_NESTED_SCORE_AVG, 1.0f);
    assert_int_equal(sc_doc_iter_next(it), SC_DOC_END);
    assert_int_equal(sc_doc_iter_next(it), SC_DOC_END);
    /* blocks [0,1 -> 2] [3] [4,5 -> 6]: children 1 and 5 match */
    sc_bitset q;
    assert_int_equal(sc_bitset_init(&q, 7), SC_OK);
    sc_bitset_set(&q, 2);
    sc_bitset_set(&q, 3);
    sc_bitset_set(&q, 6);
    static const uint32_t docs[] = {1, 5};
    static const float scores[] = {3.0f, 5.0f};
    c = sc_iter_docs(&a, docs, scores, 2);
    it = sc_iter_nested(&a, c, &q, 7, SC_NESTED_SCORE_SUM, 1.0f);
    assert_int_equal(sc_doc_iter_advance(it, 3), 6); /* root 3 has no children */
    assert_true(sc_doc_iter_score(it) == 5.0f);
    assert_int_equal(sc_doc_iter_next(it), SC_DOC_END);
    c = sc_iter_docs(&a, docs, scores, 2);
    it = sc_iter_nested(&a, c, &q, 7, SC_NESTED_SCORE_MAX, 1.0f);
    assert_int_equal(sc_doc_iter_advance(it, 1), 2); /* a child target: its root */
    assert_true(sc_doc_iter_score(it) == 3.0f);
    assert_int_equal(sc_doc_iter_advance(it, 7), SC_DOC_END);
    sc_bitset_fini(&p);
    sc_bitset_fini(&q);
    sc_arena_fini(&a);
}

int main(void)
{
    const char *env = getenv("SCRY_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("iter_nested_test seed %u (SCRY_SEED replays)\n", seed);
    srand(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
