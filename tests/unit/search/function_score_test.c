/* Tests for function_score's arithmetic (src/search/function_score.c) against Elasticsearch's
 * formulas written out here: modifiers, decay curves and their distances, multi-value modes,
 * score_mode and boost_mode folding, doc value decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "search/function_score.h"

static sc_score_function fn(sc_sf_kind kind)
{
    sc_score_function f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.weight = 1;
    f.factor = 1;
    f.decay_value = 0.5;
    return f;
}

static int64_t sortable(double d)
{
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits < 0 ? bits ^ INT64_MAX : bits;
}

static void test_field_value_factor(void **state)
{
    (void)state;
    sc_score_function f = fn(SC_SF_FIELD_VALUE);
    f.factor = 2;
    f.modifier = SC_SF_MOD_LOG1P;
    int64_t v = 4;
    assert_float_equal(sc_sf_eval(&f, &v, 1), log10(9), 1e-12);
    f.modifier = SC_SF_MOD_RECIPROCAL;
    f.weight = 3;
    assert_float_equal(sc_sf_eval(&f, &v, 1), 3.0 / 8, 1e-12);
    f.has_missing = true;
    f.missing = 1;
    assert_float_equal(sc_sf_eval(&f, NULL, 0), 3.0 / 2, 1e-12);
    f.value = SC_SF_VALUE_DOUBLE;
    f.modifier = SC_SF_MOD_NONE;
    f.weight = 1;
    int64_t d = sortable(-2.25);
    assert_float_equal(sc_sf_eval(&f, &d, 1), -4.5, 1e-12);
    f.value = SC_SF_VALUE_SCALED;
    f.scaling = 100;
    v = 250;
    assert_float_equal(sc_sf_eval(&f, &v, 1), 5.0, 1e-12);
}

static void test_decay(void **state)
{
    (void)state;
    sc_score_function f = fn(SC_SF_DECAY);
    f.origin = 10;
    f.scale = 5;
    f.offset = 1;
    f.decay_value = 0.25;
    int64_t v[] = {4, 13, 30};
    f.decay = SC_SF_GAUSS;
    /* min distance: |13 - 10| - 1 = 2 */
    assert_float_equal(sc_sf_eval(&f, v, 3), pow(0.25, 4.0 / 25), 1e-12);
    f.decay = SC_SF_EXP;
    assert_float_equal(sc_sf_eval(&f, v, 3), pow(0.25, 2.0 / 5), 1e-12);
    f.decay = SC_SF_LINEAR;
    assert_float_equal(sc_sf_eval(&f, v, 3), 1 - 2.0 * 0.75 / 5, 1e-12);
    f.multi = SC_SF_MULTI_MAX; /* 30: distance 19, past the linear zero */
    assert_float_equal(sc_sf_eval(&f, v, 3), 0, 1e-12);
    f.multi = SC_SF_MULTI_AVG; /* (5 + 2 + 19) / 3 */
    assert_float_equal(sc_sf_eval(&f, v, 3), fmax(0, 1 - 26.0 / 3 * 0.75 / 5), 1e-12);
    assert_float_equal(sc_sf_eval(&f, NULL, 0), 1, 0); /* missing: 1 */
}

static void test_combine_and_boost(void **state)
{
    (void)state;
    double r[] = {2, 3, 4}, w[] = {1, 1, 2};
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_MULTIPLY, r, w, 3), 24, 0);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_SUM, r, w, 3), 9, 0);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_AVG, r, w, 3), 9.0 / 4, 1e-12);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_FIRST, r, w, 3), 2, 0);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_MAX, r, w, 3), 4, 0);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_MIN, r, w, 3), 2, 0);
    assert_float_equal(sc_sf_combine(SC_SF_SCORE_SUM, r, w, 0), 1, 0); /* nothing matched */
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_MULTIPLY, 2, 3, FLT_MAX), 6, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_MULTIPLY, 2, 3, 1.5f), 3, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_REPLACE, 2, 3, FLT_MAX), 3, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_SUM, 2, 3, FLT_MAX), 5, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_AVG, 2, 3, FLT_MAX), 2.5, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_MAX, 2, 3, FLT_MAX), 3, 0);
    assert_float_equal(sc_sf_boost(SC_SF_BOOST_MIN, 2, 3, FLT_MAX), 2, 0);
}

static void test_random(void **state)
{
    (void)state;
    sc_score_function f = fn(SC_SF_RANDOM);
    f.seed = 42;
    int64_t v = 7;
    double a = sc_sf_eval(&f, &v, 1);
    assert_true(a >= 0 && a < 1);
    assert_float_equal(sc_sf_eval(&f, &v, 1), a, 0);
    f.seed = 43;
    assert_true(sc_sf_eval(&f, &v, 1) != a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_value_factor),
        cmocka_unit_test(test_decay),
        cmocka_unit_test(test_combine_and_boost),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
