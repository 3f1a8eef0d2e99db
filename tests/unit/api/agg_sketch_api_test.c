/* The REST side of the sketch aggregations (api/agg_parse_params.c, api/agg_write.c):
 * cardinality, percentiles and percentile_ranks requests parsed into specs (precision from
 * precision_threshold, sorted distinct points, keyed, tdigest.compression), Elasticsearch's
 * parse errors, and results written in Elasticsearch's shapes (keyed and list forms, Java
 * double keys, null when empty, typed_keys prefixes). No index: every field is unmapped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"

static sc_arena arena;

static sc_agg_spec *parse(const char *json, sc_agg_parse_error *err)
{
    json_error_t jerr;
    json_t *j = json_loads(json, 0, &jerr);
    assert_non_null(j);
    sc_rest_req req;
    memset(&req, 0, sizeof req);
    req.arena = &arena;
    req.client_fd = -1;
    sc_agg_spec *root = NULL;
    bool ok = sc__agg_parse(&req, NULL, j, &root, err);
    json_decref(j);
    return ok ? root : NULL;
}

static void expect_error(const char *json, const char *type, const char *reason_part)
{
    sc_agg_parse_error err;
    if (parse(json, &err))
        fail_msg("%s parsed; expected %s", json, type);
    assert_string_equal(err.type, type);
    if (reason_part && !strstr(err.reason, reason_part))
        fail_msg("%s: reason [%s] lacks [%s]", json, err.reason, reason_part);
}

static void test_parse(void **state)
{
    (void)state;
    sc_arena_init(&arena, 0);
    sc_agg_parse_error err;
    sc_agg_spec *root =
        parse("{\"c\":{\"cardinality\":{\"field\":\"f\",\"precision_threshold\":100}},"
              "\"c2\":{\"cardinality\":{\"field\":\"f\"}},"
              "\"p\":{\"percentiles\":{\"field\":\"g\",\"percents\":[99,50,50,0.5],"
              "\"tdigest\":{\"compression\":200,\"execution_hint\":\"high_accuracy\"}}},"
              "\"p2\":{\"percentiles\":{\"field\":\"g\",\"missing\":3}},"
              "\"r\":{\"percentile_ranks\":{\"field\":\"g\",\"values\":[10,5],\"keyed\":false}}}",
              &err);
    if (!root)
        fail_msg("%s: %s", err.type, err.reason);
    assert_int_equal(root->n_subs, 5);
    assert_int_equal(root->subs[0]->kind, SC_AGG_CARDINALITY);
    assert_int_equal(root->subs[0]->hll_precision, 10);
    assert_int_equal(root->subs[1]->hll_precision, 14);
    const sc_agg_spec *p = root->subs[2];
    assert_int_equal(p->kind, SC_AGG_PERCENTILES);
    assert_int_equal(p->n_points, 3);
    assert_true(p->points[0] == 0.5 && p->points[1] == 50 && p->points[2] == 99);
    assert_true(p->compression == 200 && p->keyed);
    const sc_agg_spec *p2 = root->subs[3];
    assert_int_equal(p2->n_points, 7); /* 1 5 25 50 75 95 99 */
    assert_true(p2->points[3] == 50 && p2->compression == 100 && p2->has_missing);
    const sc_agg_spec *r = root->subs[4];
    assert_int_equal(r->kind, SC_AGG_PERCENTILE_RANKS);
    assert_true(r->n_points == 2 && r->points[0] == 5 && r->points[1] == 10 && !r->keyed);

    root = parse("{\"m\":{\"median_absolute_deviation\":{\"field\":\"g\"}},"
                 "\"m2\":{\"median_absolute_deviation\":{\"field\":\"g\",\"compression\":50}}}",
                 &err);
    assert_non_null(root);
    assert_int_equal(root->subs[0]->kind, SC_AGG_MEDIAN_ABSOLUTE_DEVIATION);
    assert_true(root->subs[0]->compression == 1000 && root->subs[1]->compression == 50);
    expect_error("{\"m\":{\"median_absolute_deviation\":{\"field\":\"g\",\"compression\":-2}}}",
                 "illegal_argument_exception", "[compression] must be greater than or equal");
    expect_error("{\"p\":{\"percentiles\":{\"field\":\"g\",\"percents\":[101]}}}",
                 "illegal_argument_exception", "percent must be in [0,100]");
    expect_error("{\"p\":{\"percentiles\":{\"field\":\"g\",\"percents\":[]}}}",
                 "illegal_argument_exception", "must not be an empty array");
    expect_error("{\"r\":{\"percentile_ranks\":{\"field\":\"g\"}}}", "illegal_argument_exception",
                 "[values] must not be null");
    expect_error("{\"p\":{\"percentiles\":{\"field\":\"g\",\"tdigest\":{\"execution_hint\":"
                 "\"fast\"}}}}",
                 "illegal_argument_exception", "Invalid execution_hint [fast]");
    expect_error("{\"p\":{\"percentiles\":{\"field\":\"g\",\"tdigest\":{\"compression\":-1}}}}",
                 "illegal_argument_exception", "[compression] must be greater than or equal");
    expect_error("{\"p\":{\"percentiles\":{\"field\":\"g\",\"hdr\":{}}}}",
                 "illegal_argument_exception", "hdr");
    expect_error("{\"c\":{\"cardinality\":{\"field\":\"f\",\"bogus\":1}}}",
                 "x_content_parse_exception", "unknown field [bogus]");
    expect_error("{\"c\":{\"cardinality\":{\"field\":\"f\"},\"aggs\":{\"x\":{\"max\":{\"field\":"
                 "\"f\"}}}}}",
                 "aggregation_initialization_exception", "cannot accept sub-aggregations");
    sc_arena_fini(&arena);
}

static void expect_json(const sc_agg_spec *root, const sc_agg_result *r, bool typed,
                        const char *want)
{
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, false);
    sc_jsonw_obj_begin(&w);
    sc__agg_write(&w, root, r, typed);
    sc_jsonw_obj_end(&w);
    assert_int_equal(sc_vec_push(&out, '\0'), SC_OK);
    if (strcmp((const char *)out.ptr, want) != 0)
        fail_msg("\n  got:  %s\n  want: %s", (const char *)out.ptr, want);
    sc_vec_free(&out);
}

/* Results with sketches (values 1..100) and without any value. */
static void test_write(void **state)
{
    (void)state;
    sc_arena_init(&arena, 0);
    sc_agg_parse_error err;
    sc_agg_spec *root =
        parse("{\"c\":{\"cardinality\":{\"field\":\"f\"}},"
              "\"p\":{\"percentiles\":{\"field\":\"g\",\"percents\":[50,99.9,1]}},"
              "\"r\":{\"percentile_ranks\":{\"field\":\"g\",\"values\":[10,1e7],\"keyed\":false}},"
              "\"m\":{\"median_absolute_deviation\":{\"field\":\"g\"}}}",
              &err);
    assert_non_null(root);
    sc_agg_result *res = sc_arena_calloc(&arena, 1, sizeof *res);
    sc_agg_bucket *b = sc_arena_calloc(&arena, 1, sizeof *b);
    sc_agg_result *subs[4];
    for (int i = 0; i < 4; i++) {
        subs[i] = sc_arena_calloc(&arena, 1, sizeof *subs[i]);
        subs[i]->kind = root->subs[i]->kind;
    }
    res->kind = SC_AGG_ROOT;
    res->buckets = b;
    res->n_buckets = 1;
    b->subs = subs;
    b->n_subs = 4;
    expect_json(root, res, false,
                "{\"aggregations\":{\"c\":{\"value\":0},"
                "\"p\":{\"values\":{\"1.0\":null,\"50.0\":null,\"99.9\":null}},"
                "\"r\":{\"values\":[{\"key\":10.0,\"value\":null},"
                "{\"key\":1e+07,\"value\":null}]},\"m\":{\"value\":null}}}");
    assert_int_equal(sc_tdigest_new(1000, NULL, &arena, &subs[3]->td), SC_OK);
    assert_int_equal(sc_hll_new(14, NULL, &arena, &subs[0]->hll), SC_OK);
    assert_int_equal(sc_tdigest_new(100, NULL, &arena, &subs[1]->td), SC_OK);
    assert_int_equal(sc_tdigest_new(100, NULL, &arena, &subs[2]->td), SC_OK);
    for (int v = 1; v <= 100; v++) {
        assert_int_equal(sc_hll_add(subs[0]->hll, sc_hll_hash_u64((uint64_t)v % 40)), SC_OK);
        assert_int_equal(sc_tdigest_add(subs[1]->td, v, 1), SC_OK);
        assert_int_equal(sc_tdigest_add(subs[2]->td, v, 1), SC_OK);
        assert_int_equal(sc_tdigest_add(subs[3]->td, v, 1), SC_OK);
    }
    /* index q * 99 interpolated as Elasticsearch's exact digest (99.9: 99 + 0.901 with the
     * rounding of 0.999 * 99); ranks: (9 + 0.5) / 100; MAD of 1..100: median of |v - 50.5| */
    expect_json(root, res, true,
                "{\"aggregations\":{\"cardinality#c\":{\"value\":40},"
                "\"tdigest_percentiles#p\":{\"values\":{\"1.0\":1.99,\"50.0\":50.5,"
                "\"99.9\":99.90100000000001}},"
                "\"tdigest_percentile_ranks#r\":{\"values\":[{\"key\":10.0,\"value\":9.5},"
                "{\"key\":1e+07,\"value\":100.0}]},"
                "\"median_absolute_deviation#m\":{\"value\":25.0}}}");
    sc_arena_fini(&arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
