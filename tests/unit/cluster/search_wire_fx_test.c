/* Tests for cluster/search_wire_fx.c: the query-phase features (profile, rescore, collapse,
 * kNN, RRF sub-searches) of the node query request and the collapse keys, shard profiles and
 * RRF ranked lists of its answer survive
 * a round trip; an encoding without features is the older one byte for byte; every truncation
 * inside the features, a trailing byte, an unknown flag bit and a too-deep profile tree are
 * refused as SC_ECORRUPT. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/search_wire.h"
#include "search/profile.h"
#include "wire_check.h"

/* With SCRY_WIRE_SEEDS_DIR set, each encoding is also written there as a seed of
 * tests/fuzz/wire_fuzz.c (selector byte + body), as search_wire_test.c does. */
#define write_seed(name, selector, p, n)                                                           \
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", name, selector, p, n)

static sc_status dec_query(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_query_decode(p, n, a, out);
}

static sc_status dec_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_query_resp_decode(p, n, a, out);
}

/* The encoding without features (its first `base` bytes) decodes as having none; every longer
 * prefix and a trailing byte are refused. */
static void check_truncations(const uint8_t *p, size_t n, size_t base, wire_decode_fn dec,
                              void *out)
{
    uint8_t *q = malloc(base ? base : 1);
    memcpy(q, p, base);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(dec(q, base, &a, out), SC_OK);
    sc_arena_fini(&a);
    free(q);
    wire_check_truncations_from(p, n, base + 1, dec, out);
}

static sc_wire_node_query base_query(void)
{
    static sc_slice names[1] = {{(const uint8_t *)"docs", 4}};
    static sc_shard_target targets[2] = {{0, 1, 1, 1}, {0, 3, 3, 3}};
    return (sc_wire_node_query){.index_names = names,
                                .n_indices = 1,
                                .query_json = sc_slice_cstr("{\"match\":{\"t\":\"x\"}}"),
                                .k = 10,
                                .timeout_ms = -1,
                                .targets = targets,
                                .n_targets = 2,
                                .n_shards_total = 6,
                                .parent_task = sc_slice_cstr("n1:7")};
}

static void test_query_features(void **state)
{
    (void)state;
    sc_wire_node_query q = base_query();
    sc_wire_buf plain;
    sc_wire_buf_init(&plain);
    assert_int_equal(sc_wire_node_query_encode(&q, &plain), SC_OK);
    sc_wire_rescore rs[2] = {{.query_json = sc_slice_cstr("{\"match\":{\"t\":\"y\"}}"),
                              .window_size = 50,
                              .query_weight = 0.7f,
                              .rescore_weight = 1.5f,
                              .mode = SC_RESCORE_MAX},
                             {.query_json = sc_slice_cstr("{\"term\":{\"g\":1}}"),
                              .window_size = 5,
                              .query_weight = 1,
                              .rescore_weight = 2}};
    float floors[2] = {0.25f, NAN};
    sc_wire_rrf_sub subs[2] = {{.json = sc_slice_cstr("{\"field\":\"v\",\"k\":3}"), .knn = true},
                               {.json = sc_slice_cstr("{\"term\":{\"g\":2}}")}};
    q.fx =
        (sc_wire_query_features){.profile = true,
                                 .rescore = rs,
                                 .n_rescore = 2,
                                 .collapse_field = sc_slice_cstr("tag"),
                                 .collapse_numeric = false,
                                 .knn_json = sc_slice_cstr("[{\"field\":\"v\"},{\"field\":\"w\"}]"),
                                 .knn_default_k = 12,
                                 .knn_floor = floors,
                                 .n_knn_floor = 2,
                                 .rrf = subs,
                                 .n_rrf = 2,
                                 .rrf_default_k = 8};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    /* the features follow the older encoding unchanged */
    assert_true(b.len > plain.len);
    assert_memory_equal(b.ptr, plain.ptr, plain.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_query d;
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_true(d.fx.profile);
    assert_int_equal(d.fx.n_rescore, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(sc_slice_eq(d.fx.rescore[i].query_json, rs[i].query_json));
        assert_int_equal(d.fx.rescore[i].window_size, rs[i].window_size);
        assert_true(d.fx.rescore[i].query_weight == rs[i].query_weight);
        assert_true(d.fx.rescore[i].rescore_weight == rs[i].rescore_weight);
        assert_int_equal(d.fx.rescore[i].mode, rs[i].mode);
    }
    assert_true(sc_slice_eq(d.fx.collapse_field, q.fx.collapse_field));
    assert_false(d.fx.collapse_numeric);
    assert_true(sc_slice_eq(d.fx.knn_json, q.fx.knn_json));
    assert_int_equal(d.fx.knn_default_k, 12);
    assert_int_equal(d.fx.n_knn_floor, 2);
    assert_true(d.fx.knn_floor[0] == 0.25f && isnan(d.fx.knn_floor[1]));
    assert_int_equal(d.fx.n_rrf, 2);
    assert_int_equal(d.fx.rrf_default_k, 8);
    for (size_t i = 0; i < 2; i++) {
        assert_true(sc_slice_eq(d.fx.rrf[i].json, subs[i].json));
        assert_int_equal(d.fx.rrf[i].knn, subs[i].knn);
    }
    assert_true(sc_slice_eq(d.parent_task, q.parent_task));
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, plain.len, dec_query, &d);
    write_seed("node_query_features", 3, b.ptr, b.len);

    /* no features: nothing appended, and the older decoder's view (all zero) */
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_query_decode(plain.ptr, plain.len, &a, &d), SC_OK);
    assert_false(d.fx.profile);
    assert_int_equal(d.fx.n_rescore + d.fx.collapse_field.len + d.fx.knn_json.len + d.fx.n_rrf, 0);
    sc_arena_fini(&a);

    /* an unknown flag bit, and a zero flag word, are corrupt */
    uint8_t bad[2] = {0x10, 0x00};
    for (int i = 0; i < 2; i++) {
        uint8_t *x = malloc(plain.len + 1);
        memcpy(x, plain.ptr, plain.len);
        x[plain.len] = bad[i];
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(sc_wire_node_query_decode(x, plain.len + 1, &a, &d), SC_ECORRUPT);
        sc_arena_fini(&a);
        free(x);
    }
    sc_wire_buf_fini(&b);
    sc_wire_buf_fini(&plain);
}

static bool node_eq(const sc_profile_node *x, const sc_profile_node *y)
{
    if (strcmp(x->type, y->type) || strcmp(x->description, y->description) ||
        memcmp(x->counts, y->counts, sizeof x->counts) ||
        memcmp(x->times_ns, y->times_ns, sizeof x->times_ns) || x->build_ns != y->build_ns ||
        x->n_builds != y->n_builds || x->n_children != y->n_children)
        return false;
    for (size_t i = 0; i < x->n_children; i++)
        if (!node_eq(&x->children[i], &y->children[i]))
            return false;
    return true;
}

static void test_resp_features(void **state)
{
    (void)state;
    sc_profile_node kids[2] = {{.type = "TermQuery",
                                .description = "t:fox",
                                .counts = {3, 1, 0, 0, 2, 5},
                                .times_ns = {10, 20, 0, 0, 30, 40},
                                .build_ns = 7,
                                .n_builds = 1},
                               {.type = "IndexOrDocValuesQuery",
                                .description = "n:[10 TO *]",
                                .build_ns = 2,
                                .n_builds = 1}};
    sc_profile_node root = {.type = "BooleanQuery",
                            .description = "+t:fox #n:[10 TO *]",
                            .counts = {4},
                            .times_ns = {99},
                            .children = kids,
                            .n_children = 2};
    sc_search_profile prof = {.query = &root,
                              .rewrite_ns = 1234,
                              .collector = "top_docs",
                              .collector_ns = 5678,
                              .aggs_ns = 0};
    sc_wire_shard_outcome res[3] = {{.st = SC_OK, .total = 4, .profile = &prof},
                                    {.st = SC_OK, .skipped = true},
                                    {.st = SC_OK, .total = 1, .profile = &prof}};
    sc_sort_key g1 = {.s = sc_slice_cstr("t3")}, g2 = {.missing = true};
    sc_node_hit top[3] = {{.score = 3, .shard_ix = 0, .doc = 1, .collapse_key = &g1},
                          {.score = 2, .shard_ix = 2, .doc = 8, .collapse_key = &g2},
                          {.score = 1, .shard_ix = 0, .doc = 4, .collapse_key = NULL}};
    sc_node_hit more_hits[2] = {{.score = 0.5f, .shard_ix = 2, .doc = 11},
                                {.score = 0.25f, .shard_ix = 0, .doc = 3}};
    sc_node_ranked more[2] = {{.top = more_hits, .n_top = 2, .total = 40, .total_gte = true},
                              {.total = 0}};
    sc_wire_node_query_resp q = {
        .context_id = 9, .results = res, .n_results = 3, .top = top, .n_top = 3};
    sc_wire_buf plain;
    sc_wire_buf_init(&plain);
    sc_wire_shard_outcome bare[3] = {res[0], res[1], res[2]};
    for (int i = 0; i < 3; i++)
        bare[i].profile = NULL;
    q.results = bare;
    assert_int_equal(sc_wire_node_query_resp_encode(&q, &plain), SC_OK);
    q.results = res;
    q.collapse = true;
    q.rrf = more;
    q.n_rrf = 2;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_resp_encode(&q, &b), SC_OK);
    assert_true(b.len > plain.len);
    assert_memory_equal(b.ptr, plain.ptr, plain.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_query_resp d;
    assert_int_equal(sc_wire_node_query_resp_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_true(d.collapse);
    assert_true(sc_slice_eq(d.top[0].collapse_key->s, g1.s) && !d.top[0].collapse_key->missing);
    assert_true(d.top[1].collapse_key->missing);
    assert_true(d.top[2].collapse_key->missing); /* no key travels as a missing one */
    assert_null(d.results[1].profile);
    assert_int_equal(d.n_rrf, 2);
    assert_int_equal(d.rrf[0].n_top, 2);
    assert_true(d.rrf[0].total == 40 && d.rrf[0].total_gte);
    assert_true(d.rrf[0].top[0].score == 0.5f && d.rrf[0].top[0].shard_ix == 2 &&
                d.rrf[0].top[0].doc == 11 && d.rrf[0].top[1].doc == 3);
    assert_int_equal(d.rrf[1].n_top, 0);
    for (int i = 0; i < 3; i += 2) {
        const sc_search_profile *p = d.results[i].profile;
        assert_non_null(p);
        assert_string_equal(p->collector, "top_docs");
        assert_int_equal(p->collector_ns, 5678);
        assert_int_equal(p->rewrite_ns, 1234);
        assert_true(node_eq(p->query, &root));
    }
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, plain.len, dec_resp, &d);
    write_seed("node_query_resp_features", 4, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    /* a profile tree nested deeper than the decoder's limit is corrupt */
    enum {
        DEPTH = 80
    };
    sc_profile_node chain[DEPTH];
    for (int i = 0; i < DEPTH; i++)
        chain[i] = (sc_profile_node){.type = "BooleanQuery",
                                     .description = "x",
                                     .children = i + 1 < DEPTH ? &chain[i + 1] : NULL,
                                     .n_children = i + 1 < DEPTH ? 1 : 0};
    sc_search_profile deep = {.query = chain};
    sc_wire_shard_outcome one = {.st = SC_OK, .profile = &deep};
    sc_wire_node_query_resp dq = {.results = &one, .n_results = 1};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_resp_encode(&dq, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_query_resp_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
    sc_wire_buf_fini(&plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_features),
        cmocka_unit_test(test_resp_features),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
