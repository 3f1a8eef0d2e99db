/* Tests for the query DSL parser (src/api/dsl.c): every query type's short and long forms,
 * defaults, error types, limits. Uses the parser's built-in analysis fallback (lowercase,
 * split on non-alphanumerics) and prints trees in Lucene's toString style. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/dsl.h"

typedef struct parsed {
    sc_status st;
    char text[1024];
    sc_dsl_error err;
} parsed;

static parsed parse_json(const char *json)
{
    parsed p;
    memset(&p, 0, sizeof p);
    json_error_t jerr;
    json_t *q = json_loads(json, 0, &jerr);
    assert_non_null(q);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *tree = NULL;
    p.st = sc_dsl_parse(NULL, &a, q, &tree, &p.err);
    if (p.st == SC_OK)
        sc_query_to_string(tree, p.text, sizeof p.text);
    sc_arena_fini(&a);
    json_decref(q);
    return p;
}

static void expect(const char *json, const char *tree)
{
    parsed p = parse_json(json);
    if (p.st != SC_OK)
        fail_msg("%s: %s %s", json, p.err.type, p.err.reason);
    if (strcmp(p.text, tree) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", json, p.text, tree);
}

static void expect_error(const char *json, const char *type, const char *reason_part)
{
    parsed p = parse_json(json);
    if (p.st == SC_OK)
        fail_msg("%s: parsed to %s, expected %s", json, p.text, type);
    assert_string_equal(p.err.type, type);
    if (reason_part && !strstr(p.err.reason, reason_part))
        fail_msg("%s: reason [%s] lacks [%s]", json, p.err.reason, reason_part);
}

static void test_match_all_none(void **state)
{
    (void)state;
    expect("{\"match_all\":{}}", "*:*");
    parsed p = parse_json("{\"match_all\":{\"boost\":2}}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(strstr(p.text, "2"));
    expect_error("{\"match_all\":{\"x\":1}}", "parsing_exception", "does not support [x]");
    assert_int_equal(parse_json("{\"match_none\":{}}").st, SC_OK);
}

static void test_match(void **state)
{
    (void)state;
    expect("{\"match\":{\"title\":\"Hello\"}}", "title:hello");
    expect("{\"match\":{\"title\":\"Hello World\"}}", "(title:hello title:world)");
    expect("{\"match\":{\"title\":{\"query\":\"a b\",\"operator\":\"and\"}}}", "(+title:a +title:b)");
    parsed p = parse_json("{\"match\":{\"t\":{\"query\":\"a b c d\",\"minimum_should_match\":\"75%\"}}}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(strstr(p.text, "~3"));
    p = parse_json("{\"match\":{\"t\":{\"query\":\"abcdef\",\"fuzziness\":\"AUTO\"}}}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(strstr(p.text, "~2"));
    expect_error("{\"match\":{\"t\":{\"query\":\"a\",\"operator\":\"xor\"}}}", "parsing_exception",
                 "operator");
    expect_error("{\"match\":{\"t\":{\"bogus\":1}}}", "parsing_exception", "[bogus]");
    expect_error("{\"match\":{\"a\":\"x\",\"b\":\"y\"}}", "parsing_exception", "multiple fields");
    expect_error("{\"match\":{\"t\":{}}}", "parsing_exception", "requires query");
}

static void test_phrase(void **state)
{
    (void)state;
    expect("{\"match_phrase\":{\"t\":\"quick brown fox\"}}", "t:\"quick brown fox\"");
    expect("{\"match_phrase\":{\"t\":{\"query\":\"quick fox\",\"slop\":2}}}", "t:\"quick fox\"~2");
    expect("{\"match_phrase\":{\"t\":\"single\"}}", "t:single");
}

static void test_term_level(void **state)
{
    (void)state;
    expect("{\"term\":{\"tag\":\"Red\"}}", "tag:Red");
    expect("{\"term\":{\"tag\":{\"value\":\"x\"}}}", "tag:x");
    expect("{\"term\":{\"n\":42}}", "n:42");
    assert_int_equal(parse_json("{\"terms\":{\"tag\":[\"a\",\"b\"]}}").st, SC_OK);
    expect("{\"prefix\":{\"tag\":\"ab\"}}", "tag:ab*");
    expect("{\"prefix\":{\"tag\":{\"value\":\"ab\"}}}", "tag:ab*");
    assert_int_equal(parse_json("{\"wildcard\":{\"tag\":{\"value\":\"a*b?\"}}}").st, SC_OK);
    assert_int_equal(parse_json("{\"regexp\":{\"tag\":{\"value\":\"a.*\",\"flags\":\"ALL\"}}}").st,
                     SC_OK);
    assert_int_equal(parse_json("{\"fuzzy\":{\"tag\":{\"value\":\"abcd\",\"fuzziness\":1}}}").st,
                     SC_OK);
    assert_int_equal(parse_json("{\"ids\":{\"values\":[\"1\",\"2\"]}}").st, SC_OK);
    assert_int_equal(parse_json("{\"exists\":{\"field\":\"x\"}}").st, SC_OK);
    expect_error("{\"term\":{\"tag\":[\"a\"]}}", "parsing_exception", NULL);
    expect_error("{\"terms\":{\"tag\":\"a\"}}", "parsing_exception", NULL);
    expect_error("{\"exists\":{}}", "parsing_exception", "field");
}

static void test_compound(void **state)
{
    (void)state;
    expect("{\"bool\":{\"must\":{\"term\":{\"a\":\"x\"}},\"must_not\":[{\"term\":{\"b\":\"y\"}}]}}",
           "(+a:x -b:y)");
    expect("{\"bool\":{\"filter\":[{\"term\":{\"a\":\"x\"}}],\"should\":[{\"term\":{\"b\":\"y\"}}]}}",
           "(#a:x b:y)");
    parsed p = parse_json("{\"bool\":{\"should\":[{\"term\":{\"a\":\"1\"}},{\"term\":{\"a\":\"2\"}},"
                          "{\"term\":{\"a\":\"3\"}}],\"minimum_should_match\":2}}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(strstr(p.text, "~2"));
    assert_int_equal(parse_json("{\"constant_score\":{\"filter\":{\"term\":{\"a\":\"x\"}},"
                                "\"boost\":3}}").st,
                     SC_OK);
    assert_int_equal(parse_json("{\"boosting\":{\"positive\":{\"term\":{\"a\":\"x\"}},"
                                "\"negative\":{\"term\":{\"a\":\"y\"}},\"negative_boost\":0.5}}").st,
                     SC_OK);
    assert_int_equal(parse_json("{\"dis_max\":{\"queries\":[{\"term\":{\"a\":\"x\"}},"
                                "{\"term\":{\"b\":\"x\"}}],\"tie_breaker\":0.3}}").st,
                     SC_OK);
    expect_error("{\"bool\":{\"must\":5}}", "parsing_exception", NULL);
    expect_error("{\"bool\":{\"mustt\":[]}}", "parsing_exception", "[mustt]");
    expect_error("{\"constant_score\":{}}", "parsing_exception", "filter");
    expect_error("{\"boosting\":{\"positive\":{\"match_all\":{}}}}", "parsing_exception", NULL);
}

static void test_multi_match(void **state)
{
    (void)state;
    parsed p = parse_json("{\"multi_match\":{\"query\":\"hello\",\"fields\":[\"a^2\",\"b\"]}}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(strstr(p.text, "a:hello"));
    assert_non_null(strstr(p.text, "b:hello"));
    p = parse_json("{\"multi_match\":{\"query\":\"x y\",\"fields\":[\"a\",\"b\"],"
                   "\"type\":\"most_fields\"}}");
    assert_int_equal(p.st, SC_OK);
    expect_error("{\"multi_match\":{\"query\":\"x\",\"fields\":[\"a\"],\"type\":\"nope\"}}",
                 "parsing_exception", "unknown type");
}

static void test_query_string(void **state)
{
    (void)state;
    expect("{\"query_string\":{\"query\":\"title:hello\"}}", "title:hello");
    expect("{\"query_string\":{\"query\":\"a AND b\",\"default_field\":\"t\"}}", "(+t:a +t:b)");
    expect("{\"query_string\":{\"query\":\"+a -b\",\"default_field\":\"t\"}}", "(+t:a -t:b)");
    expect("{\"query_string\":{\"query\":\"t:ab*\"}}", "t:ab*");
    expect("{\"query_string\":{\"query\":\"t:\\\"x y\\\"\"}}", "t:\"x y\"");
    expect("{\"query_string\":{\"query\":\"a b\",\"default_field\":\"t\","
           "\"default_operator\":\"AND\"}}",
           "(+t:a +t:b)");
    expect_error("{\"query_string\":{\"query\":\"(a\",\"default_field\":\"t\"}}",
                 "query_shard_exception", "parenthesis");
    expect("{\"simple_query_string\":{\"query\":\"a -b\",\"fields\":[\"t\"]}}", "(t:a -t:b)");
}

static void test_structure_errors(void **state)
{
    (void)state;
    expect_error("{\"nope\":{}}", "parsing_exception", "unknown query [nope]");
    expect_error("{}", "parsing_exception", "empty clause");
    expect_error("{\"match_all\":{},\"term\":{\"a\":\"b\"}}", "parsing_exception", "END_OBJECT");
    expect_error("{\"range\":{\"n\":{\"gte\":1}}}", "illegal_argument_exception", "range");
}

/* A dense_vector "v" (3 dims, l2_norm, int8_hnsw) whose mapping default oversample is *ctx. */
static sc_status knn_env_field(void *ctx, sc_slice field, sc_vec_params *out, bool *indexed)
{
    (void)ctx;
    if (!sc_slice_eq(field, sc_slice_cstr("v")))
        return SC_ENOTFOUND;
    *out = (sc_vec_params){3, SC_VEC_SIM_L2, SC_VEC_ELEM_FLOAT, SC_VEC_INDEX_INT8_HNSW, 16, 100};
    *indexed = true;
    return SC_OK;
}

static float knn_env_oversample(void *ctx, sc_slice field)
{
    (void)field;
    return *(const float *)ctx;
}

/* rescore_vector.oversample of a knn clause, or the mapping default (NAN: the parse failed,
 * err filled). */
static float knn_oversample(float dflt, const char *json, sc_dsl_error *err)
{
    sc_dsl_env env = {.ctx = &dflt,
                      .vector_field = knn_env_field,
                      .vector_oversample = knn_env_oversample};
    json_error_t jerr;
    json_t *q = json_loads(json, 0, &jerr);
    assert_non_null(q);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *tree = NULL;
    float os = sc_dsl_parse(&env, &a, q, &tree, err) == SC_OK ? tree->u.knn.oversample : NAN;
    sc_arena_fini(&a);
    json_decref(q);
    return os;
}

static void test_knn_rescore_vector(void **state)
{
    (void)state;
    sc_dsl_error err;
#define KNN(rv) "{\"knn\":{\"field\":\"v\",\"query_vector\":[1,2,3],\"k\":3" rv "}}"
    assert_true(knn_oversample(-1, KNN(""), &err) == 0);
    assert_true(knn_oversample(2.5f, KNN(""), &err) == 2.5f); /* the mapping default */
    assert_true(knn_oversample(-1, KNN(",\"rescore_vector\":{\"oversample\":1.5}"), &err) == 1.5f);
    assert_true(knn_oversample(4, KNN(",\"rescore_vector\":{\"oversample\":1}"), &err) == 1.0f);
    assert_true(knn_oversample(4, KNN(",\"rescore_vector\":{\"oversample\":0}"), &err) == 0);
    assert_true(knn_oversample(-1, KNN(",\"rescore_vector\":{\"oversample\":\"3\"}"), &err) ==
                3.0f);
    static const struct {
        const char *rv, *type, *reason;
    } bad[] = {
        {",\"rescore_vector\":{\"oversample\":0.5}", "illegal_argument_exception",
         "[oversample] must be >= 1.0"},
        {",\"rescore_vector\":{\"oversample\":-2}", "illegal_argument_exception", "found [-2]"},
        {",\"rescore_vector\":{}", "illegal_argument_exception", "requires [oversample]"},
        {",\"rescore_vector\":{\"oversample\":\"x\"}", "parsing_exception", "must be a number"},
        {",\"rescore_vector\":{\"oversample\":null}", "parsing_exception", "must be a number"},
        {",\"rescore_vector\":[1]", "parsing_exception", "must be an object"},
        {",\"rescore_vector\":{\"oversample\":2,\"k\":1}", "parsing_exception", "[k]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[256];
        snprintf(json, sizeof json, KNN("%s"), bad[i].rv);
        assert_true(isnan(knn_oversample(-1, json, &err)));
        assert_string_equal(err.type, bad[i].type);
        if (!strstr(err.reason, bad[i].reason))
            fail_msg("%s: reason [%s] lacks [%s]", json, err.reason, bad[i].reason);
    }
#undef KNN
}

static void test_limits(void **state)
{
    (void)state;
    /* Nesting past SC_DSL_MAX_DEPTH. */
    char buf[16384] = "";
    for (int i = 0; i < 100; i++)
        strcat(buf, "{\"bool\":{\"must\":");
    strcat(buf, "{\"match_all\":{}}");
    for (int i = 0; i < 100; i++)
        strcat(buf, "}}");
    expect_error(buf, "parsing_exception", "nested depth");
    /* More than 1024 clauses. */
    static char big[200000];
    strcpy(big, "{\"bool\":{\"should\":[");
    for (int i = 0; i < 1100; i++) {
        char t[64];
        snprintf(t, sizeof t, "%s{\"term\":{\"a\":\"%d\"}}", i ? "," : "", i);
        strcat(big, t);
    }
    strcat(big, "]}}");
    expect_error(big, "illegal_argument_exception", "maxClauseCount");
}

static void test_msm_spec(void **state)
{
    (void)state;
    int32_t m;
    json_t *v = json_string("75%");
    assert_true(sc_dsl_minimum_should_match(v, 4, &m));
    assert_int_equal(m, 3);
    json_decref(v);
    v = json_string("-25%");
    assert_true(sc_dsl_minimum_should_match(v, 4, &m));
    assert_int_equal(m, 3);
    json_decref(v);
    v = json_integer(-1);
    assert_true(sc_dsl_minimum_should_match(v, 4, &m));
    assert_int_equal(m, 3);
    json_decref(v);
    v = json_string("9");
    assert_true(sc_dsl_minimum_should_match(v, 4, &m));
    assert_int_equal(m, 4);
    json_decref(v);
    v = json_string("x");
    assert_false(sc_dsl_minimum_should_match(v, 4, &m));
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_all_none), cmocka_unit_test(test_match),
        cmocka_unit_test(test_phrase),         cmocka_unit_test(test_term_level),
        cmocka_unit_test(test_compound),       cmocka_unit_test(test_multi_match),
        cmocka_unit_test(test_query_string),   cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_limits),         cmocka_unit_test(test_msm_spec),
        cmocka_unit_test(test_knn_rescore_vector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
