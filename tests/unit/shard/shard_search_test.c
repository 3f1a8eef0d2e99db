/* Tests for src/shard/shard_search.c and shard_fetch.c: a real shard (two segments, a delete)
 * with keyword, long, date, double, ip, boolean and text fields; the query phase's typed results
 * (top docs by score and by sort, search_after, totals under track_total_hits caps, a collect
 * hook with k == 0 and k > 0, the scratch budget) checked against a model of the documents, and
 * the fetch phase's _id, _source and typed doc-value fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "text/analyzer.h"
#include "base/file.h"
#include "search/highlight.h"
#include "shard/shard.h"
#include "shard/shard_search.h"

#define N_DOCS 30
#define DELETED 5 /* doc "d05" is deleted */
#define BASE_MS 1600000000000LL

static char dir[256];
static sc_shard *g_shard;

/* The model: doc i has k = "k<29-i>", n = (i * 7) % 31 unless i % 7 == 3, d = BASE_MS + i,
 * x = i / 4.0, ip 10.0.0.i, b = i even, t contains "alpha" when i % 3 == 0. */
static bool has_n(int i)
{
    return i % 7 != 3;
}
static int64_t n_of(int i)
{
    return (i * 7) % 31;
}
static bool live(int i)
{
    return i != DELETED;
}

static void source_of(int i, char *buf, size_t cap)
{
    char n[32] = "";
    if (has_n(i))
        snprintf(n, sizeof n, "\"n\":%lld,", (long long)n_of(i));
    snprintf(buf, cap,
             "{\"k\":\"k%02d\",%s\"d\":%lld,\"x\":%g,\"ip\":\"10.0.0.%d\",\"b\":%s,"
             "\"t\":\"%s text\"}",
             29 - i, n, (long long)(BASE_MS + i), i / 4.0, i, i % 2 == 0 ? "true" : "false",
             i % 3 == 0 ? "alpha" : "beta");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/scry-shard-search-test-%d", (int)getpid());
    if (sc_dir_remove_all(dir) != SC_OK)
        return -1;
    json_error_t je;
    json_t *mj =
        json_loads("{\"properties\":{\"k\":{\"type\":\"keyword\"},\"n\":{\"type\":\"long\"},"
                   "\"d\":{\"type\":\"date\"},\"x\":{\"type\":\"double\"},"
                   "\"ip\":{\"type\":\"ip\"},\"b\":{\"type\":\"boolean\"},"
                   "\"t\":{\"type\":\"text\"}}}",
                   0, &je);
    sc_mapping *m = NULL;
    sc_mapping_error merr;
    if (!mj || sc_mapping_new(mj, &m, &merr) != SC_OK)
        return -1;
    json_decref(mj);
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.mapping = m;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    sc_shard_error err;
    if (sc_shard_open(&cfg, &g_shard, &err) != SC_OK)
        return -1;
    sc_mapping_unref(m);
    for (int i = 0; i < N_DOCS; i++) {
        char id[16], src[256];
        snprintf(id, sizeof id, "d%02d", i);
        source_of(i, src, sizeof src);
        sc_shard_result r;
        sc_shard_write_opts o = sc_shard_write_defaults();
        if (sc_shard_index(g_shard, sc_slice_cstr(id), sc_slice_cstr(src), &o, &r, &err) != SC_OK)
            return -1;
        if (i == N_DOCS / 2 && sc_shard_refresh(g_shard) != SC_OK) /* two segments */
            return -1;
    }
    sc_shard_result r;
    sc_shard_write_opts o = sc_shard_write_defaults();
    if (sc_shard_delete(g_shard, sc_slice_cstr("d05"), &o, &r, &err) != SC_OK ||
        sc_shard_refresh(g_shard) != SC_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sc_shard_close(g_shard, false);
    return sc_dir_remove_all(dir) == SC_OK ? 0 : -1;
}

/* Runs a query with an unlimited scratch arena; results in `out`. */
static sc_status run(const sc_shard_query_args *a, sc_arena *out, sc_shard_query_result *res)
{
    sc_arena scratch;
    sc_arena_init(&scratch, 0);
    sc_status st = sc_shard_query_run(a, &scratch, out, res);
    sc_arena_fini(&scratch);
    return st;
}

/* The model's doc number of a shard-global doc id (ids follow indexing order here). */
static int model_doc(const sc_shard_snapshot *snap, uint32_t doc)
{
    sc_shard_fetch_args fa = {.snapshot = snap, .docs = &doc, .n_docs = 1};
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_shard_fetched f;
    assert_int_equal(sc_shard_fetch_run(&fa, &a, &f), SC_OK);
    assert_true(f.found);
    int i = -1;
    assert_int_equal(sscanf((const char *)f.id.ptr, "d%2d", &i), 1);
    sc_arena_fini(&a);
    return i;
}

static void test_scored_and_totals(void **state)
{
    (void)state;
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(g_shard);
    assert_int_equal(snap->n_segments, 2);
    sc_arena out;
    sc_arena_init(&out, 0);
    sc_query *all = sc_query_match_all(&out);
    sc_query *alpha = sc_query_term(&out, sc_slice_cstr("t"), sc_slice_cstr("alpha"));
    int n_alpha = 0;
    for (int i = 0; i < N_DOCS; i++)
        n_alpha += live(i) && i % 3 == 0;
    sc_shard_query_result r;
    sc_shard_query_args a = {
        .snapshot = snap, .query = all, .k = 5, .track_total_hits = SC_TRACK_TOTAL_HITS_ALL};
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, N_DOCS - 1);
    assert_false(r.total_gte);
    assert_false(r.timed_out);
    assert_null(r.agg_partial);
    assert_int_equal(r.n_docs, 5);
    for (size_t i = 0; i < r.n_docs; i++) { /* equal scores: doc order */
        assert_null(r.docs[i].sort);
        assert_true(r.docs[i].score == r.docs[0].score);
        if (i)
            assert_true(r.docs[i].doc > r.docs[i - 1].doc);
    }
    a.query = alpha;
    a.k = 100;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, n_alpha);
    assert_int_equal(r.n_docs, n_alpha);
    for (size_t i = 0; i < r.n_docs; i++)
        assert_int_equal(model_doc(snap, r.docs[i].doc) % 3, 0);
    /* caps: bounded top-k, none, count only (exact, then capped) */
    a.query = all;
    a.k = 3;
    a.track_total_hits = 10;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, 10);
    assert_true(r.total_gte);
    assert_int_equal(r.n_docs, 3);
    a.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, 0);
    assert_int_equal(r.n_docs, 3);
    a.k = 0;
    a.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, N_DOCS - 1);
    assert_false(r.total_gte);
    assert_int_equal(r.n_docs, 0);
    a.track_total_hits = 10;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, 10);
    assert_true(r.total_gte);
    a.track_total_hits = N_DOCS - 1; /* exactly the total: exact */
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, N_DOCS - 1);
    assert_false(r.total_gte);
    sc_arena_fini(&out);
    sc_shard_searcher_release(snap);
}

/* Model order for "n desc, missing last, then k asc" (k asc = doc desc). */
static int cmp_n_desc(const void *pa, const void *pb)
{
    int x = *(const int *)pa, y = *(const int *)pb;
    if (has_n(x) != has_n(y))
        return has_n(x) ? -1 : 1;
    if (has_n(x) && n_of(x) != n_of(y))
        return n_of(x) > n_of(y) ? -1 : 1;
    return y - x;
}

static void test_sorted(void **state)
{
    (void)state;
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(g_shard);
    sc_arena out;
    sc_arena_init(&out, 0);
    int model[N_DOCS], m = 0;
    for (int i = 0; i < N_DOCS; i++)
        if (live(i))
            model[m++] = i;
    qsort(model, (size_t)m, sizeof *model, cmp_n_desc);
    sc_sort_spec spec[2] = {
        {.kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("n"), .desc = true},
        {.kind = SC_SORT_BY_KEYWORD, .field = sc_slice_cstr("k")},
    };
    sc_shard_query_result r;
    sc_shard_query_args a = {.snapshot = snap,
                             .query = sc_query_match_all(&out),
                             .k = (uint32_t)m,
                             .track_total_hits = SC_TRACK_TOTAL_HITS_ALL,
                             .sort = spec,
                             .n_sort = 2};
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, m);
    assert_int_equal(r.n_docs, m);
    for (int i = 0; i < m; i++) {
        int d = model_doc(snap, r.docs[i].doc);
        assert_int_equal(d, model[i]);
        const sc_sort_key *key = r.docs[i].sort;
        assert_non_null(key);
        assert_true(key[0].missing == !has_n(d));
        if (has_n(d))
            assert_int_equal(key[0].i, n_of(d));
        char want[8];
        snprintf(want, sizeof want, "k%02d", 29 - d);
        assert_false(key[1].missing);
        assert_int_equal(key[1].s.len, 3);
        assert_memory_equal(key[1].s.ptr, want, 3);
    }
    /* search_after the 4th hit: the rest, in order */
    sc_sort_key after[2];
    memcpy(after, r.docs[3].sort, sizeof after);
    a.search_after = after;
    a.k = 5;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.n_docs, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(model_doc(snap, r.docs[i].doc), model[4 + i]);
    /* keyword first: k ascending = doc descending; bounded total */
    a.search_after = NULL;
    a.sort = &spec[1];
    a.n_sort = 1;
    a.k = 3;
    a.track_total_hits = 7;
    assert_int_equal(run(&a, &out, &r), SC_OK);
    assert_int_equal(r.total, 7);
    assert_true(r.total_gte);
    assert_int_equal(r.n_docs, 3);
    assert_int_equal(model_doc(snap, r.docs[0].doc), 29);
    assert_int_equal(model_doc(snap, r.docs[2].doc), 27);
    sc_arena_fini(&out);
    sc_shard_searcher_release(snap);
}

/* A counting collect hook: its partial is the number of matches (one uint64_t). */
static sc_status count_hook(void *ctx, const sc_shard_collect_call *call, void **partial_out,
                            uint64_t *n_matched_out, sc_shard_search_error *err)
{
    (void)err;
    (*(int *)ctx)++;
    sc_search_options o;
    sc_search_options_init(&o);
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    o.cancel = call->token;
    sc_search_result r;
    SC_TRY(sc_search_count(call->searcher, call->query, &o, call->scratch, &r));
    uint64_t *p = sc_arena_alloc(call->out, sizeof *p);
    if (!p)
        return SC_ENOMEM;
    *p = r.total;
    *partial_out = p;
    *n_matched_out = r.total;
    return SC_OK;
}

static void test_hook_and_budget(void **state)
{
    (void)state;
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(g_shard);
    sc_arena out;
    sc_arena_init(&out, 0);
    int calls = 0;
    sc_shard_collect_hook hook = {.ctx = &calls, .run = count_hook};
    sc_shard_query_result r;
    sc_shard_query_args a = {.snapshot = snap,
                             .query = sc_query_match_all(&out),
                             .k = 0,
                             .track_total_hits = 10,
                             .collect = &hook};
    assert_int_equal(run(&a, &out, &r), SC_OK); /* size 0: only the hook's pass */
    assert_int_equal(calls, 1);
    assert_non_null(r.agg_partial);
    assert_int_equal(*(uint64_t *)r.agg_partial, N_DOCS - 1);
    assert_int_equal(r.total, 10);
    assert_true(r.total_gte);
    a.k = 4;
    a.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    assert_int_equal(run(&a, &out, &r), SC_OK); /* top k and the hook */
    assert_int_equal(calls, 2);
    assert_int_equal(r.n_docs, 4);
    assert_int_equal(r.total, N_DOCS - 1);
    assert_int_equal(*(uint64_t *)r.agg_partial, N_DOCS - 1);
    /* a scratch budget too small for the query: 429 */
    a.collect = NULL;
    sc_arena scratch;
    sc_arena_init(&scratch, 64);
    assert_int_equal(sc_shard_query_run(&a, &scratch, &out, &r), SC_ELIMIT);
    assert_int_equal(r.err.status, 429);
    assert_string_equal(r.err.type, "circuit_breaking_exception");
    sc_arena_fini(&scratch);
    sc_arena_fini(&out);
    sc_shard_searcher_release(snap);
}

static void test_fetch(void **state)
{
    (void)state;
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(g_shard);
    sc_arena a;
    sc_arena_init(&a, 0);
    /* doc ids of d02, d03 (no n), d20 (second segment), and one past the end */
    uint32_t docs[4] = {2, 3, 20, 1000};
    static const char *const fields[] = {"n", "d", "x", "ip", "b", "k", "t", "nope"};
    sc_shard_fetch_args fa = {.snapshot = snap,
                              .docs = docs,
                              .n_docs = 4,
                              .source = true,
                              .fields = fields,
                              .n_fields = 8};
    sc_shard_fetched f[4];
    assert_int_equal(sc_shard_fetch_run(&fa, &a, f), SC_OK);
    assert_false(f[3].found);
    for (int j = 0; j < 3; j++) {
        int i = (int)docs[j];
        assert_true(f[j].found);
        char id[16], src[256];
        snprintf(id, sizeof id, "d%02d", i);
        source_of(i, src, sizeof src);
        assert_int_equal(f[j].id.len, strlen(id));
        assert_memory_equal(f[j].id.ptr, id, strlen(id));
        assert_int_equal(f[j].source.len, strlen(src));
        assert_memory_equal(f[j].source.ptr, src, strlen(src));
        /* n (when present), d, x, ip, b, k: t has no doc values, nope does not exist */
        size_t want = has_n(i) ? 6 : 5;
        assert_int_equal(f[j].n_fields, want);
        const sc_shard_field_values *fv = f[j].fields;
        if (has_n(i)) {
            assert_int_equal(fv->field, 0);
            assert_int_equal(fv->type, SC_SHARD_VALUE_LONG);
            assert_true(fv->numeric);
            assert_int_equal(fv->n_values, 1);
            assert_int_equal(fv->nums[0], n_of(i));
            fv++;
        }
        assert_int_equal(fv->field, 1);
        assert_int_equal(fv->type, SC_SHARD_VALUE_DATE);
        assert_int_equal(fv->nums[0], BASE_MS + i);
        fv++;
        assert_int_equal(fv->type, SC_SHARD_VALUE_DOUBLE);
        assert_true(fv->numeric);
        fv++;
        assert_int_equal(fv->type, SC_SHARD_VALUE_IP);
        assert_false(fv->numeric);
        assert_int_equal(fv->n_values, 1);
        assert_int_equal(fv->terms[0].len, 16);
        assert_int_equal(fv->terms[0].ptr[15], i);
        fv++;
        assert_int_equal(fv->type, SC_SHARD_VALUE_BOOLEAN);
        assert_int_equal(fv->nums[0], i % 2 == 0);
        fv++;
        assert_int_equal(fv->field, 5);
        assert_int_equal(fv->type, SC_SHARD_VALUE_TERM);
        char k[8];
        snprintf(k, sizeof k, "k%02d", 29 - i);
        assert_int_equal(fv->terms[0].len, 3);
        assert_memory_equal(fv->terms[0].ptr, k, 3);
    }
    /* without _source the _id comes from doc values */
    fa.source = false;
    fa.n_fields = 0;
    assert_int_equal(sc_shard_fetch_run(&fa, &a, f), SC_OK);
    assert_true(f[2].found);
    assert_int_equal(f[2].source.len, 0);
    assert_memory_equal(f[2].id.ptr, "d20", 3);
    assert_int_equal(f[2].n_fields, 0);
    sc_arena_fini(&a);
    sc_shard_searcher_release(snap);
}

/* Highlighting reads _source also when the hits do not return it (_source: false): the
 * fragments are there and no _source is copied out. */
static void test_fetch_highlight_without_source(void **state)
{
    (void)state;
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(g_shard);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_analyzer *an = NULL;
    assert_int_equal(sc_analyzer_builtin("standard", &an), SC_OK);
    sc_query *alpha = sc_query_term(&a, sc_slice_cstr("t"), sc_slice_cstr("alpha"));
    sc_hl_field hf = {.name = "t", .source_path = sc_slice_cstr("t"), .analyzer = an};
    sc_hl_options_init(&hf.opts);
    sc_hl_query *hq = NULL;
    assert_int_equal(sc_hl_query_build(alpha, sc_slice_cstr("t"), true, &a, &hq), SC_OK);
    hf.query = hq;
    sc_hl_spec spec = {.fields = &hf, .n_fields = 1};
    /* d03 and d21 hold "alpha", d02 does not */
    uint32_t docs[3] = {3, 2, 21};
    for (int with_source = 0; with_source < 2; with_source++) {
        sc_shard_fetch_args fa = {
            .snapshot = snap, .docs = docs, .n_docs = 3, .source = with_source, .highlight = &spec};
        sc_shard_fetched f[3];
        assert_int_equal(sc_shard_fetch_run(&fa, &a, f), SC_OK);
        for (int j = 0; j < 3; j++) {
            char id[16], src[256];
            snprintf(id, sizeof id, "d%02d", (int)docs[j]);
            source_of((int)docs[j], src, sizeof src);
            assert_true(f[j].found);
            assert_int_equal(f[j].id.len, strlen(id));
            assert_memory_equal(f[j].id.ptr, id, strlen(id));
            assert_int_equal(f[j].source.len, with_source ? strlen(src) : 0);
            bool hit = docs[j] % 3 == 0;
            assert_int_equal(f[j].n_highlights, hit ? 1 : 0);
            if (hit) {
                assert_int_equal(f[j].highlights[0].n_frags, 1);
                const char *want = "<em>alpha</em> text";
                assert_int_equal(f[j].highlights[0].frags[0].len, strlen(want));
                assert_memory_equal(f[j].highlights[0].frags[0].ptr, want, strlen(want));
            }
        }
    }
    sc_analyzer_free(an);
    sc_arena_fini(&a);
    sc_shard_searcher_release(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scored_and_totals),
        cmocka_unit_test(test_sorted),
        cmocka_unit_test(test_hook_and_budget),
        cmocka_unit_test(test_fetch),
        cmocka_unit_test(test_fetch_highlight_without_source),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
