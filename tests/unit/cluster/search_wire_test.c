/* Tests for cluster/search_wire.c: round trips of the node query request/response and the node
 * fetch request/response with every field set, and every truncation of each encoding decoding
 * to SC_ECORRUPT (never a read past the end). */
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
#include "wire_check.h"

/* With SCRY_WIRE_SEEDS_DIR set, each encoding is also written there as a seed of
 * tests/fuzz/wire_fuzz.c (selector byte + body): how tests/fuzz/corpus/wire/ was made. */
#define write_seed(name, selector, p, n)                                                           \
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", name, selector, p, n)
#define check_truncations wire_check_truncations

static sc_status dec_query(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_query_decode(p, n, a, out);
}
static sc_status dec_query_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_query_resp_decode(p, n, a, out);
}
static sc_status dec_fetch(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_fetch_decode(p, n, a, out);
}
static sc_status dec_fetch_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_node_fetch_resp_decode(p, n, a, out);
}

static bool key_eq(const sc_sort_key *x, const sc_sort_key *y)
{
    return x->missing == y->missing && x->i == y->i && x->d == y->d && sc_slice_eq(x->s, y->s);
}

static sc_field_stat fstats[2] = {
    {.field = {(const uint8_t *)"title", 5}, .doc_count = 300, .sum_total_term_freq = 1234567},
    {.field = {(const uint8_t *)"body", 4}, .doc_count = 0}};
static sc_term_stat tstats[3] = {{.field = {(const uint8_t *)"title", 5},
                                  .term = {(const uint8_t *)"fox", 3},
                                  .doc_freq = 7,
                                  .total_term_freq = 9},
                                 {.field = {(const uint8_t *)"title", 5},
                                  .term = {(const uint8_t *)"", 0},
                                  .doc_freq = 1,
                                  .total_term_freq = 1},
                                 {.field = {(const uint8_t *)"body", 4},
                                  .term = {(const uint8_t *)"\xff\x00z", 3},
                                  .doc_freq = UINT32_MAX,
                                  .total_term_freq = UINT64_MAX}};
static sc_term_stats stats = {fstats, 2, tstats, 3};

static void stats_eq(const sc_term_stats *a, const sc_term_stats *b)
{
    assert_int_equal(a->n_fields, b->n_fields);
    assert_int_equal(a->n_terms, b->n_terms);
    for (size_t i = 0; i < a->n_fields; i++) {
        assert_true(sc_slice_eq(a->fields[i].field, b->fields[i].field));
        assert_true(a->fields[i].doc_count == b->fields[i].doc_count);
        assert_true(a->fields[i].sum_total_term_freq == b->fields[i].sum_total_term_freq);
    }
    for (size_t i = 0; i < a->n_terms; i++) {
        assert_true(sc_slice_eq(a->terms[i].field, b->terms[i].field));
        assert_true(sc_slice_eq(a->terms[i].term, b->terms[i].term));
        assert_true(a->terms[i].doc_freq == b->terms[i].doc_freq);
        assert_true(a->terms[i].total_term_freq == b->terms[i].total_term_freq);
    }
}

static sc_status dec_stats(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_wire_term_stats_decode(p, n, a, out);
}

/* dfs_query_then_fetch's statistics: round trip, truncations, a count past the bytes left. */
static void test_term_stats(void **state)
{
    (void)state;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_term_stats_encode(&stats, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_term_stats d;
    assert_int_equal(sc_wire_term_stats_decode(b.ptr, b.len, &a, &d), SC_OK);
    stats_eq(&d, &stats);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_stats, &d);
    write_seed("term_stats", 7, b.ptr, b.len);
    uint8_t huge[] = {0xff, 0xff, 0x03, 0};
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_term_stats_decode(huge, sizeof huge, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
}

static void test_query(void **state)
{
    (void)state;
    sc_slice names[2] = {sc_slice_cstr("logs"), sc_slice_cstr("metrics")};
    sc_sort_spec sort[2] = {
        {.kind = SC_SORT_BY_NUMERIC,
         .field = sc_slice_cstr("ts"),
         .desc = true,
         .mode = SC_SORT_MODE_MAX,
         .is_double = true},
        {.kind = SC_SORT_BY_KEYWORD, .field = sc_slice_cstr("host"), .missing_first = true},
    };
    sc_sort_key after[2] = {{.i = -42, .d = 3.5}, {.missing = true, .s = sc_slice_cstr("h1")}};
    sc_shard_target targets[3] = {{0, 1, 1, 1}, {0, 4, 4, 4}, {1, 2, 8, 8}};
    sc_slice filters[2] = {sc_slice_make(NULL, 0), sc_slice_cstr("{\"term\":{\"user\":\"k\"}}")};
    sc_wire_node_query q = {.index_names = names,
                            .index_filters = filters,
                            .n_indices = 2,
                            .query_json = sc_slice_cstr("{\"match\":{\"body\":\"x\"}}"),
                            .post_filter_json = sc_slice_cstr("{\"term\":{\"a\":1}}"),
                            .aggs_json = sc_slice_cstr("{\"t\":{\"terms\":{\"field\":\"h\"}}}"),
                            .k = 20,
                            .track_total_hits = 10000,
                            .timeout_ms = -1,
                            .count_only = false,
                            .sort = sort,
                            .n_sort = 2,
                            .search_after = after,
                            .targets = targets,
                            .n_targets = 3,
                            .n_shards_total = 12,
                            .can_match = true,
                            .dfs = &stats,
                            .parent_task = sc_slice_cstr("node-a:123"),
                            .track_scores = true,
                            .has_min_score = true,
                            .min_score = 0.75f,
                            .index_boosts = (const float[]){2.5f, 1.0f},
                            .batched_reduce_size = 7};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_query d;
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_int_equal(d.n_indices, 2);
    assert_true(sc_slice_eq(d.index_names[1], names[1]));
    assert_int_equal(d.index_filters[0].len, 0); /* the alias filter of each index */
    assert_true(sc_slice_eq(d.index_filters[1], filters[1]));
    assert_true(sc_slice_eq(d.query_json, q.query_json));
    assert_true(sc_slice_eq(d.post_filter_json, q.post_filter_json));
    assert_true(sc_slice_eq(d.aggs_json, q.aggs_json));
    assert_int_equal(d.runtime_json.len, 0);
    assert_int_equal(d.k, 20);
    assert_int_equal(d.batched_reduce_size, 7);
    assert_int_equal(d.track_total_hits, 10000);
    assert_int_equal(d.timeout_ms, -1);
    assert_int_equal(d.n_sort, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(d.sort[i].kind, sort[i].kind);
        assert_true(sc_slice_eq(d.sort[i].field, sort[i].field));
        assert_int_equal(d.sort[i].desc, sort[i].desc);
        assert_int_equal(d.sort[i].missing_first, sort[i].missing_first);
        assert_int_equal(d.sort[i].mode, sort[i].mode);
        assert_int_equal(d.sort[i].is_double, sort[i].is_double);
        assert_true(key_eq(&d.search_after[i], &after[i]));
    }
    assert_int_equal(d.n_targets, 3);
    assert_memory_equal(d.targets, targets, sizeof targets);
    assert_int_equal(d.n_shards_total, 12);
    assert_true(d.can_match);
    assert_non_null(d.dfs);
    stats_eq(d.dfs, &stats);
    assert_true(sc_slice_eq(d.parent_task, q.parent_task));
    assert_true(d.track_scores);
    assert_true(d.has_min_score); /* extension tag 9: min_score and the boosts per index */
    assert_true(d.min_score == 0.75f);
    assert_non_null(d.index_boosts);
    assert_true(d.index_boosts[0] == 2.5f && d.index_boosts[1] == 1.0f);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_query, &d);
    write_seed("node_query", 3, b.ptr, b.len);
    /* the tag 9 payload's flags: 0 or unknown bits are corrupt; without it, nothing is set */
    for (int flags = 0; flags < 5; flags += 4) {
        uint8_t bad[512];
        assert_true(b.len < sizeof bad);
        memcpy(bad, b.ptr, b.len);
        /* the payload is the encoding's tail: uv:9 bytes(uv:3 f32 f32 f32) = 9 0x0d 0x03 ... */
        size_t at = b.len - 15;
        assert_int_equal(bad[at], 9);
        assert_int_equal(bad[at + 2], 3);
        bad[at + 2] = (uint8_t)flags;
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(sc_wire_node_query_decode(bad, b.len, &a, &d), SC_ECORRUPT);
        sc_arena_fini(&a);
    }
    assert_int_equal(d.terminate_after, 0);
    q.has_min_score = false;
    q.index_boosts = NULL;
    q.terminate_after = 300; /* extension tag 10 */
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_false(d.has_min_score);
    assert_null(d.index_boosts);
    assert_true(d.track_scores);
    assert_int_equal(d.terminate_after, 300);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_query, &d);
    write_seed("node_query_terminate", 3, b.ptr, b.len);
    {
        /* the tail is uv:10 bytes(uv:300) = 0x0a 0x02 0xac 0x02; terminate_after 0 is corrupt */
        uint8_t bad[512];
        assert_true(b.len < sizeof bad);
        memcpy(bad, b.ptr, b.len);
        assert_int_equal(bad[b.len - 4], 10);
        bad[b.len - 3] = 1;
        bad[b.len - 2] = 0;
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(sc_wire_node_query_decode(bad, b.len - 1, &a, &d), SC_ECORRUPT);
        sc_arena_fini(&a);
    }
    q.terminate_after = 0;
    /* extension tag 11: runtime_mappings; empty is corrupt */
    q.runtime_json = sc_slice_cstr("{\"r\":{\"type\":\"long\",\"script\":\"emit(1)\"}}");
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_true(sc_slice_eq(d.runtime_json, q.runtime_json));
    assert_int_equal(d.terminate_after, 0);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_query, &d);
    write_seed("node_query_runtime", 3, b.ptr, b.len);
    {
        /* the tail is uv:11 bytes(bytes:json); an empty json is corrupt */
        size_t n = q.runtime_json.len;
        uint8_t bad[512];
        assert_true(b.len < sizeof bad);
        memcpy(bad, b.ptr, b.len);
        assert_int_equal(bad[b.len - n - 3], 11);
        bad[b.len - n - 2] = 1;
        bad[b.len - n - 1] = 0;
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(sc_wire_node_query_decode(bad, b.len - n, &a, &d), SC_ECORRUPT);
        sc_arena_fini(&a);
    }
    q.runtime_json = sc_slice_make(NULL, 0);
    /* a target naming an index past n_indices is corrupt */
    targets[2].index_i = 2;
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
}

static sc_status dec_cancel(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)a;
    return sc_wire_node_cancel_decode(p, n, out);
}

/* The cancel message: a round trip, every truncation refused, and an empty or too long parent
 * id refused by both sides (the size limit). */
static void test_cancel(void **state)
{
    (void)state;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_cancel_encode(sc_slice_cstr("node-a:123"), &b), SC_OK);
    sc_slice d;
    assert_int_equal(sc_wire_node_cancel_decode(b.ptr, b.len, &d), SC_OK);
    assert_true(sc_slice_eq(d, sc_slice_cstr("node-a:123")));
    check_truncations(b.ptr, b.len, dec_cancel, &d);
    write_seed("node_cancel", 8, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    char big[SC_WIRE_MAX_TASK_ID + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_cancel_encode(sc_slice_cstr(big), &b), SC_EINVAL);
    assert_int_equal(sc_wire_node_cancel_encode(sc_slice_cstr(""), &b), SC_EINVAL);
    sc_wire_buf_fini(&b);
    /* hand-made bodies: an empty id, an id one byte over the limit */
    uint8_t empty[1] = {0};
    assert_int_equal(sc_wire_node_cancel_decode(empty, 1, &d), SC_ECORRUPT);
    uint8_t over[2 + SC_WIRE_MAX_TASK_ID + 1];
    over[0] = 0x80 | ((SC_WIRE_MAX_TASK_ID + 1) & 0x7f);
    over[1] = (uint8_t)((SC_WIRE_MAX_TASK_ID + 1) >> 7);
    memset(over + 2, 'x', SC_WIRE_MAX_TASK_ID + 1);
    assert_int_equal(sc_wire_node_cancel_decode(over, sizeof over, &d), SC_ECORRUPT);
    /* ... also inside a node query request */
    sc_shard_target t = {0, 0, 0, 0};
    sc_slice name = sc_slice_cstr("i");
    sc_wire_node_query q = {.index_names = &name,
                            .n_indices = 1,
                            .timeout_ms = 250,
                            .targets = &t,
                            .n_targets = 1,
                            .parent_task = sc_slice_cstr(big)};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_encode(&q, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_query dq;
    assert_int_equal(sc_wire_node_query_decode(b.ptr, b.len, &a, &dq), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
}

static void test_query_resp(void **state)
{
    (void)state;
    sc_wire_shard_outcome res[2] = {
        {.st = SC_OK,
         .total = 17,
         .total_gte = true,
         .skipped = true,
         .max_score = 3.25f,
         .terminated_early = true},
        {.st = SC_EPARSE,
         .http_status = 400,
         .type = sc_slice_cstr("query_shard_exception"),
         .reason = sc_slice_cstr("bad"),
         .timed_out = true},
    };
    sc_sort_key k1[1] = {{.i = 5}}, k2[1] = {{.missing = true, .s = sc_slice_cstr("zz")}};
    sc_node_hit top[2] = {{.score = 2.5f, .shard_ix = 3, .doc = 9, .keys = k1},
                          {.score = 0.0f, .shard_ix = 7, .doc = 0, .keys = k2}};
    uint8_t agg[5] = {1, 2, 3, 4, 5};
    sc_wire_node_query_resp q = {.context_id = 77,
                                 .results = res,
                                 .n_results = 2,
                                 .top = top,
                                 .n_top = 2,
                                 .n_sort = 1,
                                 .agg_partial = sc_slice_make(agg, 5),
                                 .has_max_scores = true,
                                 .n_partial_reduces = 3};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_query_resp_encode(&q, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_query_resp d;
    assert_int_equal(sc_wire_node_query_resp_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_true(d.context_id == 77);
    assert_int_equal(d.n_partial_reduces, 3);
    assert_int_equal(d.n_results, 2);
    assert_int_equal(d.results[0].total, 17);
    assert_true(d.results[0].total_gte);
    assert_true(d.results[0].skipped);
    assert_false(d.results[1].skipped);
    assert_int_equal(d.results[1].st, SC_EPARSE);
    assert_int_equal(d.results[1].http_status, 400);
    assert_true(sc_slice_eq(d.results[1].type, res[1].type));
    assert_true(sc_slice_eq(d.results[1].reason, res[1].reason));
    assert_true(d.results[1].timed_out);
    assert_int_equal(d.n_top, 2);
    assert_true(d.top[0].score == 2.5f);
    assert_int_equal(d.top[1].shard_ix, 7);
    assert_int_equal(d.top[0].doc, 9);
    assert_true(key_eq(d.top[0].keys, k1));
    assert_true(key_eq(d.top[1].keys, k2));
    assert_true(sc_slice_eq(d.agg_partial, q.agg_partial));
    assert_true(d.has_max_scores);
    assert_true(d.results[0].max_score == 3.25f);
    assert_true(d.results[1].max_score == 0.0f);
    assert_true(d.results[0].terminated_early); /* extension tag 2 */
    assert_false(d.results[1].terminated_early);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_query_resp, &d);
    write_seed("node_query_resp", 4, b.ptr, b.len);
    sc_wire_buf_fini(&b);
}

static void test_fetch(void **state)
{
    (void)state;
    sc_node_hit docs[2] = {{.shard_ix = 3, .doc = 9}, {.shard_ix = 1, .doc = 100000}};
    sc_slice fields[1] = {sc_slice_cstr("host")};
    sc_wire_node_fetch f = {.context_id = 5,
                            .docs = docs,
                            .n_docs = 2,
                            .source = true,
                            .dv_fields = fields,
                            .n_dv_fields = 1};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_encode(&f, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_fetch d;
    assert_int_equal(sc_wire_node_fetch_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_true(d.context_id == 5);
    assert_int_equal(d.n_docs, 2);
    assert_int_equal(d.docs[1].doc, 100000);
    assert_true(d.source);
    assert_true(sc_slice_eq(d.dv_fields[0], fields[0]));
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_fetch, &d);
    write_seed("node_fetch", 5, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    int64_t nums[2] = {-3, 1700000000000};
    sc_slice terms[1] = {sc_slice_cstr("web-1")};
    sc_shard_field_values fv[2] = {
        {.field = 0, .type = SC_SHARD_VALUE_DATE, .numeric = true, .n_values = 2, .nums = nums},
        {.field = 1, .type = SC_SHARD_VALUE_TERM, .n_values = 1, .terms = terms}};
    sc_shard_fetched got[2] = {{.found = true,
                                .id = sc_slice_cstr("a1"),
                                .source = sc_slice_cstr("{\"x\":1}"),
                                .fields = fv,
                                .n_fields = 2},
                               {.found = false}};
    sc_wire_node_fetch_resp r = {.docs = got, .n_docs = 2};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_resp_encode(&r, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_fetch_resp dr;
    assert_int_equal(sc_wire_node_fetch_resp_decode(b.ptr, b.len, &a, &dr), SC_OK);
    assert_int_equal(dr.n_docs, 2);
    assert_true(dr.docs[0].found);
    assert_false(dr.docs[1].found);
    assert_true(sc_slice_eq(dr.docs[0].id, got[0].id));
    assert_true(sc_slice_eq(dr.docs[0].source, got[0].source));
    assert_int_equal(dr.docs[0].n_fields, 2);
    assert_int_equal(dr.docs[0].fields[0].type, SC_SHARD_VALUE_DATE);
    assert_true(dr.docs[0].fields[0].nums[1] == nums[1]);
    assert_true(sc_slice_eq(dr.docs[0].fields[1].terms[0], terms[0]));
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_fetch_resp, &dr);
    write_seed("node_fetch_resp", 6, b.ptr, b.len);
    sc_wire_buf_fini(&b);
}

/* The fetch-phase extras (issue 14): the request's flags, indices, query / highlight JSON, each
 * doc's index and the dfs statistics; the response's highlights, versions, matched named
 * queries, explanation tree and inner hits. Round trips, truncations, and the limits: a doc
 * index past n_indices, an explanation deeper than SC_WIRE_MAX_EXPLAIN_DEPTH, unknown flags and
 * an unknown extension tag are refused. */
static void test_fetch_extras(void **state)
{
    (void)state;
    sc_node_hit docs[3] = {{.shard_ix = 3, .doc = 9}, {.shard_ix = 1, .doc = 7}, {.shard_ix = 3}};
    sc_slice names[2] = {sc_slice_cstr("a"), sc_slice_cstr("b")};
    sc_slice filters[2] = {sc_slice_make(NULL, 0), sc_slice_cstr("{\"term\":{\"t\":1}}")};
    uint32_t doc_index[3] = {1, 0, 1};
    sc_wire_node_fetch f = {.context_id = 9,
                            .docs = docs,
                            .n_docs = 3,
                            .source = true,
                            .flags = SC_WIRE_FETCH_ALL_,
                            .index_names = names,
                            .index_filters = filters,
                            .n_indices = 2,
                            .query_json = sc_slice_cstr("{\"match\":{\"x\":\"y\"}}"),
                            .highlight_json = sc_slice_cstr("{\"fields\":{\"x\":{}}}"),
                            .doc_index = doc_index,
                            .dfs = &stats};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_encode(&f, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_fetch d;
    assert_int_equal(sc_wire_node_fetch_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_int_equal(d.flags, SC_WIRE_FETCH_ALL_);
    assert_int_equal(d.n_indices, 2);
    assert_true(sc_slice_eq(d.index_names[1], names[1]));
    assert_true(sc_slice_eq(d.index_filters[1], filters[1]));
    assert_int_equal(d.index_filters[0].len, 0);
    assert_true(sc_slice_eq(d.query_json, f.query_json));
    assert_true(sc_slice_eq(d.highlight_json, f.highlight_json));
    assert_memory_equal(d.doc_index, doc_index, sizeof doc_index);
    assert_non_null(d.dfs);
    stats_eq(d.dfs, &stats);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_fetch, &d);
    write_seed("node_fetch_extras", 5, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    /* a doc index past n_indices is refused by the encoder; unknown flags too */
    doc_index[2] = 2;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_encode(&f, &b), SC_EINVAL);
    sc_wire_buf_fini(&b);
    doc_index[2] = 1;
    f.flags = SC_WIRE_FETCH_ALL_ + 1;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_encode(&f, &b), SC_EINVAL);
    sc_wire_buf_fini(&b);

    /* the response: a found doc with every extra, a missing one, a found one without extras */
    sc_slice frags[2] = {sc_slice_cstr("the <em>fox</em>"), sc_slice_cstr("")};
    sc_shard_highlight hl[2] = {{.field = 1, .frags = frags, .n_frags = 2},
                                {.field = 0, .frags = frags, .n_frags = 1}};
    uint32_t matched[2] = {0, 4};
    sc_explanation leaf[2] = {{.match = true, .value = 0.5f, .description = "idf"},
                              {.match = true, .value = 2.0f, .description = NULL}};
    sc_explanation root = {.match = true,
                           .value = 1.0f,
                           .description = "weight(x:fox)",
                           .details = leaf,
                           .n_details = 2};
    sc_shard_inner_hit ih[2] = {{.offset = 2, .score = 1.5f, .source = sc_slice_cstr("{}")},
                                {.offset = 0, .score = 0.25f}};
    sc_shard_inner_result inner[2] = {{.total = 5, .max_score = 1.5f, .hits = ih, .n_hits = 2},
                                      {.total = 0, .max_score = NAN}};
    sc_shard_fetched got[3] = {{.found = true,
                                .id = sc_slice_cstr("d1"),
                                .highlights = hl,
                                .n_highlights = 2,
                                .has_versions = true,
                                .version = 3,
                                .seq_no = 41,
                                .primary_term = 2,
                                .matched = matched,
                                .n_matched = 2,
                                .explanation = &root,
                                .inner = inner},
                               {.found = false},
                               {.found = true, .id = sc_slice_cstr("d2")}};
    uint32_t n_inner[3] = {2, 0, 2};
    sc_wire_node_fetch_resp r = {.docs = got, .n_docs = 3, .extras = true, .n_inner = n_inner};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_resp_encode(&r, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    sc_wire_node_fetch_resp dr;
    assert_int_equal(sc_wire_node_fetch_resp_decode(b.ptr, b.len, &a, &dr), SC_OK);
    assert_true(dr.extras);
    const sc_shard_fetched *g = &dr.docs[0];
    assert_int_equal(g->n_highlights, 2);
    assert_int_equal(g->highlights[0].field, 1);
    assert_int_equal(g->highlights[0].n_frags, 2);
    assert_true(sc_slice_eq(g->highlights[0].frags[0], frags[0]));
    assert_int_equal(g->highlights[1].n_frags, 1);
    assert_true(g->has_versions && g->version == 3 && g->seq_no == 41 && g->primary_term == 2);
    assert_int_equal(g->n_matched, 2);
    assert_int_equal(g->matched[1], 4);
    assert_non_null(g->explanation);
    assert_true(g->explanation->value == 1.0f);
    assert_string_equal(g->explanation->description, "weight(x:fox)");
    assert_int_equal(g->explanation->n_details, 2);
    assert_string_equal(g->explanation->details[0].description, "idf");
    assert_string_equal(g->explanation->details[1].description, "");
    assert_true(g->explanation->details[1].value == 2.0f);
    assert_int_equal(dr.n_inner[0], 2);
    assert_true(g->inner[0].total == 5 && g->inner[0].n_hits == 2);
    assert_true(g->inner[0].hits[0].offset == 2 && g->inner[0].hits[0].score == 1.5f);
    assert_true(sc_slice_eq(g->inner[0].hits[0].source, ih[0].source));
    assert_true(isnan(g->inner[1].max_score));
    assert_false(dr.docs[1].found);
    /* the third doc has no inner results: none are sent for it */
    assert_int_equal(dr.n_inner[2], 0);
    assert_null(dr.docs[2].inner);
    assert_null(dr.docs[2].explanation);
    assert_false(dr.docs[2].has_versions);
    sc_arena_fini(&a);
    check_truncations(b.ptr, b.len, dec_fetch_resp, &dr);
    write_seed("node_fetch_resp_extras", 6, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    /* an explanation as deep as a reader accepts, then one level deeper */
    sc_explanation chain[SC_WIRE_MAX_EXPLAIN_DEPTH + 1];
    for (size_t i = 0; i <= SC_WIRE_MAX_EXPLAIN_DEPTH; i++)
        chain[i] = (sc_explanation){.description = "x",
                                    .details = i < SC_WIRE_MAX_EXPLAIN_DEPTH ? &chain[i + 1] : NULL,
                                    .n_details = i < SC_WIRE_MAX_EXPLAIN_DEPTH};
    sc_shard_fetched deep = {.found = true, .explanation = &chain[1]};
    sc_wire_node_fetch_resp rd = {.docs = &deep, .n_docs = 1, .extras = true};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_resp_encode(&rd, &b), SC_OK);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_fetch_resp_decode(b.ptr, b.len, &a, &dr), SC_OK);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
    deep.explanation = &chain[0];
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_resp_encode(&rd, &b), SC_ELIMIT);
    sc_wire_buf_fini(&b);

    /* an unknown extension tag, and the same tag twice, are corrupt */
    sc_wire_node_fetch plain = {.context_id = 1};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_node_fetch_encode(&plain, &b), SC_OK);
    b.len--; /* drop the empty extension list */
    sc_wire_put_uvar(&b, 1);
    sc_wire_put_uvar(&b, 7);
    sc_wire_put_bytes(&b, "", 0);
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_fetch_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
    /* no docs, flags VERSIONS, no index, empty JSON, no dfs: once is fine, twice is not */
    uint8_t once[] = {0, 0, 0, 0, 1, 1, 5, 1, 0, 0, 0, 0};
    uint8_t twice[] = {0, 0, 0, 0, 2, 1, 5, 1, 0, 0, 0, 0, 1, 5, 1, 0, 0, 0, 0};
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_wire_node_fetch_decode(once, sizeof once, &a, &d), SC_OK);
    assert_int_equal(d.flags, SC_WIRE_FETCH_VERSIONS);
    assert_int_equal(sc_wire_node_fetch_decode(twice, sizeof twice, &a, &d), SC_ECORRUPT);
    once[7] = 0; /* flags 0 inside the extension */
    assert_int_equal(sc_wire_node_fetch_decode(once, sizeof once, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),      cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_term_stats), cmocka_unit_test(test_query_resp),
        cmocka_unit_test(test_fetch),      cmocka_unit_test(test_fetch_extras),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
