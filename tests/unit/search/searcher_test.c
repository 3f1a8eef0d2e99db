/* Tests for the searcher (src/search/searcher.c, plan.c) on real segments: the query kinds the
 * Lucene oracle does not cover (terms, ids, exists, dis_max, boosting, constant_score, bool
 * shapes, minimum_should_match), paging, track_total_hits, counts vs. execute with deletes,
 * expansion limits as errors naming the limit, cancellation and deadlines, and zero
 * allocations per matched term when a multi-term query walks its terms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/builder.h"
#include "search/query_parser.h"
#include "search/searcher.h"

/* Counting malloc (not under ASan, which owns malloc). */
#ifndef SC_ASAN
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static size_t n_mallocs;
void *malloc(size_t n)
{
    n_mallocs++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    n_mallocs++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    n_mallocs++;
    return __libc_realloc(p, n);
}
#endif

#define N_SEG 2
#define PER_SEG 3000
static sc_segment *segs[N_SEG];
static sc_searcher_segment ss[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher searcher = {ss, N_SEG};
static char dir[64];

/* Doc d: body "w<d%7> w<d%13> common", tag "t<d%3>" (keyword), "x<d 4 digits>" for the first
 * 2000 docs and "y<d>" for the first 20, and n = d (numeric doc values) on even docs. */
static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/scry_searcher_test_%d", (int)getpid());
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    if (system(cmd) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t i = 0; i < PER_SEG; i++) {
            uint32_t d = (uint32_t)s * PER_SEG + i;
            char w1[16], w2[16], x[16], y[16], tag[8], id[16];
            snprintf(w1, sizeof w1, "w%u", d % 7);
            snprintf(w2, sizeof w2, "w%u", d % 13 + 100);
            snprintf(x, sizeof x, "x%04u", d);
            snprintf(y, sizeof y, "y%04u", d);
            snprintf(tag, sizeof tag, "t%u", d % 3);
            snprintf(id, sizeof id, "%u", d);
            sc_index_token body[5] = {{sc_slice_cstr(w1), 0}, {sc_slice_cstr(w2), 1},
                                      {sc_slice_cstr("common"), 2}, {sc_slice_cstr(x), 3},
                                      {sc_slice_cstr(y), 4}};
            size_t nb = d < 20 ? 5 : d < 2000 ? 4 : 3;
            sc_index_token idt = {sc_slice_cstr(id), 0}, tagt = {sc_slice_cstr(tag), 0};
            int64_t nv = d;
            sc_index_field f[4] = {
                {.name = sc_slice_cstr("_id"), .kind = SC_FIELD_KEYWORD,
                 .flags = SC_FIELD_INDEXED, .tokens = &idt, .n_tokens = 1},
                {.name = sc_slice_cstr("body"), .kind = SC_FIELD_TEXT,
                 .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS, .tokens = body,
                 .n_tokens = nb, .length = (uint32_t)nb},
                {.name = sc_slice_cstr("n"), .kind = SC_FIELD_NUMERIC,
                 .flags = SC_FIELD_DOCVALUES, .values = &nv, .n_values = d % 2 == 0},
                {.name = sc_slice_cstr("tag"), .kind = SC_FIELD_KEYWORD,
                 .flags = SC_FIELD_INDEXED, .tokens = &tagt, .n_tokens = d % 5 != 0},
            };
            sc_index_doc doc = {sc_slice_cstr(id), sc_slice_cstr("{}"), f, 4, NULL, 0};
            if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
                return -1;
        }
        char name[16];
        snprintf(name, sizeof name, "s%d", s);
        if (sc_segment_builder_write(b, dir, name, NULL) != SC_OK ||
            sc_segment_open(dir, name, &segs[s]) != SC_OK)
            return -1;
        sc_segment_builder_free(b);
        ss[s].seg = segs[s];
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_unref(segs[s]);
        if (ss[s].live)
            sc_bitset_fini(&lives[s]);
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#define S(x) sc_slice_cstr(x)

static uint64_t count(sc_arena *a, const sc_query *q)
{
    sc_search_options o;
    sc_search_options_init(&o);
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_search_result r, c;
    assert_int_equal(sc_search_execute(&searcher, q, &o, a, &r), SC_OK);
    assert_int_equal(sc_search_count(&searcher, q, &o, a, &c), SC_OK);
    assert_int_equal(r.total, c.total);
    assert_false(r.total_gte);
    return c.total;
}

static uint64_t brute(bool (*pred)(uint32_t d))
{
    uint64_t n = 0;
    for (uint32_t d = 0; d < N_SEG * PER_SEG; d++) {
        uint32_t s = d / PER_SEG;
        if (ss[s].live && !sc_bitset_test(ss[s].live, d % PER_SEG))
            continue;
        n += pred(d);
    }
    return n;
}

static bool p_w3(uint32_t d) { return d % 7 == 3; }
static bool p_w3_or_w101(uint32_t d) { return d % 7 == 3 || d % 13 == 1; }
static bool p_w3_and_w101(uint32_t d) { return d % 7 == 3 && d % 13 == 1; }
static bool p_w3_not_w101(uint32_t d) { return d % 7 == 3 && d % 13 != 1; }
static bool p_msm2(uint32_t d) { return (d % 7 == 3) + (d % 13 == 1) + (d % 3 == 0 && d % 5) >= 2; }
static bool p_all(uint32_t d) { return true; }
static bool p_tag(uint32_t d) { return d % 5 != 0; }
static bool p_even(uint32_t d) { return d % 2 == 0; }
static bool p_t1_t2(uint32_t d) { return d % 5 != 0 && d % 3 != 0; }
static bool p_x(uint32_t d) { return d < 2000; }

static void check_kinds(void)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *w3 = sc_query_term(&a, S("body"), S("w3"));
    sc_query *w101 = sc_query_term(&a, S("body"), S("w101"));
    sc_query *t0 = sc_query_term(&a, S("tag"), S("t0"));
    assert_int_equal(count(&a, w3), brute(p_w3));
    sc_query *b = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, w3), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, w101), SC_OK);
    assert_int_equal(count(&a, b), brute(p_w3_or_w101));
    b->u.bool_.minimum_should_match = 2;
    assert_int_equal(count(&a, b), brute(p_w3_and_w101));
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, t0), SC_OK);
    assert_int_equal(count(&a, b), brute(p_msm2));
    b = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_FILTER, w3), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_MUST_NOT, w101), SC_OK);
    assert_int_equal(count(&a, b), brute(p_w3_not_w101));
    b = sc_query_bool(&a); /* only must_not: nothing (Lucene; the DSL layer adds match_all) */
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_MUST_NOT, w101), SC_OK);
    assert_int_equal(count(&a, b), 0);
    assert_int_equal(count(&a, sc_query_match_all(&a)), brute(p_all));
    assert_int_equal(count(&a, sc_query_match_none(&a)), 0);
    assert_int_equal(count(&a, sc_query_exists(&a, S("tag"))), brute(p_tag));
    assert_int_equal(count(&a, sc_query_exists(&a, S("n"))), brute(p_even));
    assert_int_equal(count(&a, sc_query_exists(&a, S("body"))), brute(p_all));
    assert_int_equal(count(&a, sc_query_exists(&a, S("nope"))), 0);
    sc_slice tags[] = {S("t1"), S("t2"), S("t9")};
    assert_int_equal(count(&a, sc_query_terms(&a, S("tag"), tags, 3)), brute(p_t1_t2));
    sc_slice ids[] = {S("5"), S("3005"), S("77777")};
    sc_query *idq = sc_query_ids(&a, ids, 3);
    uint64_t n_ids = (ss[0].live ? sc_bitset_test(ss[0].live, 5) : 1) +
                     (ss[1].live ? sc_bitset_test(ss[1].live, 5) : 1);
    assert_int_equal(count(&a, idq), n_ids);
    assert_int_equal(count(&a, sc_query_prefix(&a, S("body"), S("x"))), brute(p_x));

    /* scores of the constant kinds */
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    sc_query *cs = sc_query_constant_score(&a, w3);
    cs->boost = 2.5f;
    assert_int_equal(sc_search_execute(&searcher, cs, &o, &a, &r), SC_OK);
    assert_true(r.n_hits == 10 && r.hits[0].score == 2.5f && r.hits[9].score == 2.5f);
    assert_true(r.hits[0].global_doc < r.hits[1].global_doc); /* ties by doc id */
    /* dis_max: max + tie * others */
    sc_query *dm = sc_query_dis_max(&a, 0.5f);
    sc_query *c1 = sc_query_constant_score(&a, w3), *c2 = sc_query_constant_score(&a, w101);
    c1->boost = 4.0f;
    c2->boost = 2.0f;
    assert_int_equal(sc_query_dis_max_add(&a, dm, c1), SC_OK);
    assert_int_equal(sc_query_dis_max_add(&a, dm, c2), SC_OK);
    assert_int_equal(sc_search_execute(&searcher, dm, &o, &a, &r), SC_OK);
    assert_true(r.hits[0].score == 5.0f); /* a doc with both: 4 + 0.5 * 2 */
    assert_int_equal(r.hits[0].global_doc % 7, 3);
    assert_int_equal(r.hits[0].global_doc % 13, 1);
    /* boosting: docs matching the negative are demoted */
    sc_query *bo = sc_query_boosting(&a, c1, w101, 0.25f);
    assert_int_equal(sc_search_execute(&searcher, bo, &o, &a, &r), SC_OK);
    assert_true(r.hits[0].score == 4.0f && r.hits[0].global_doc % 13 != 1);
    o.size = 6000;
    assert_int_equal(sc_search_execute(&searcher, bo, &o, &a, &r), SC_OK);
    assert_true(r.hits[r.n_hits - 1].score == 1.0f && r.hits[r.n_hits - 1].global_doc % 13 == 1);
    sc_arena_fini(&a);
}

static void test_kinds(void **state)
{
    (void)state;
    check_kinds();
}

static void test_kinds_with_deletes(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        assert_int_equal(sc_bitset_init(&lives[s], PER_SEG), SC_OK);
        sc_bitset_set_range(&lives[s], 0, PER_SEG);
        for (uint32_t i = (uint32_t)s; i < PER_SEG; i += 11) {
            sc_bitset_clear(&lives[s], i);
            ss[s].n_deleted++;
        }
        ss[s].live = &lives[s];
    }
    check_kinds();
}

static bool p_y7(uint32_t d) { return d == 7; }
static bool p_y7_or_w3(uint32_t d) { return d == 7 || d % 7 == 3; }

/* Scored term queries whose term is in one segment only (y<d> and x<d> are in segment 0) or in
 * no segment: the iterators take the term's entries from the plan's doc-freq lookups (plan.c
 * term_df_seen), so a segment without the term must give no iterator and the other its postings;
 * hits, totals and scores as counted and as scored alone. */
static void test_scored_term_in_some_segments(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = 3000;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_search_result r;
    sc_query *y7 = sc_query_term(&a, S("body"), S("y0007"));
    assert_int_equal(sc_search_execute(&searcher, y7, &o, &a, &r), SC_OK);
    assert_int_equal(r.total, brute(p_y7));
    assert_int_equal(r.n_hits, r.total);
    if (r.n_hits)
        assert_int_equal(r.hits[0].global_doc, 7);
    float y7_score = r.n_hits ? r.hits[0].score : 0.0f;
    sc_query *none = sc_query_term(&a, S("body"), S("zzz"));
    assert_int_equal(sc_search_execute(&searcher, none, &o, &a, &r), SC_OK);
    assert_int_equal(r.total, 0);
    sc_query *nofield = sc_query_term(&a, S("nofield"), S("w3"));
    assert_int_equal(sc_search_execute(&searcher, nofield, &o, &a, &r), SC_OK);
    assert_int_equal(r.total, 0);
    /* in a disjunction with a term of every segment: the rare term's doc leads, scored as
     * alone plus its w3 part (7 % 7 != 3: none) */
    sc_query *b = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, y7), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD,
                                       sc_query_term(&a, S("body"), S("w3"))),
                     SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, none), SC_OK);
    assert_int_equal(sc_search_execute(&searcher, b, &o, &a, &r), SC_OK);
    assert_int_equal(r.total, brute(p_y7_or_w3));
    assert_int_equal(r.total, count(&a, b));
    if (brute(p_y7)) {
        assert_int_equal(r.hits[0].global_doc, 7);
        assert_true(r.hits[0].score == y7_score);
    }
    for (size_t i = 0; i < r.n_hits; i++)
        assert_true(p_y7_or_w3((uint32_t)r.hits[i].global_doc));
    sc_arena_fini(&a);
}

static void test_paging_and_totals(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *q = sc_query_term(&a, S("body"), S("common"));
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result all, page;
    o.size = 30;
    o.track_total_hits = 100;
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &all), SC_OK);
    assert_int_equal(all.total, 100);
    assert_true(all.total_gte && all.total_tracked);
    o.from = 10;
    o.size = 10;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &page), SC_OK);
    assert_false(page.total_tracked);
    assert_int_equal(page.n_hits, 10);
    for (int i = 0; i < 10; i++)
        assert_true(page.hits[i].global_doc == all.hits[10 + i].global_doc);
    sc_arena_fini(&a);
}

static void test_limits(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    sc_query *re = sc_query_regexp(&a, S("body"), S("(a|b)*a(a|b){20}"), SC_REGEXP_ALL);
    assert_int_equal(sc_search_execute(&searcher, re, &o, &a, &r), SC_ELIMIT);
    printf("# %s\n", r.error);
    assert_non_null(strstr(r.error, "max_determinized_states"));
    sc_query *px = sc_query_prefix(&a, S("body"), S("x"));
    px->u.prefix.rewrite = SC_REWRITE_SCORING_BOOLEAN;
    o.max_clause_count = 100;
    assert_int_equal(sc_search_execute(&searcher, px, &o, &a, &r), SC_ELIMIT);
    printf("# %s\n", r.error);
    assert_non_null(strstr(r.error, "max_clause_count"));
    sc_query *py = sc_query_prefix(&a, S("body"), S("y"));
    py->u.prefix.rewrite = SC_REWRITE_SCORING_BOOLEAN;
    assert_int_equal(sc_search_execute(&searcher, py, &o, &a, &r), SC_OK);
    assert_true(r.n_hits == 10 && r.hits[0].score > 1.0f); /* BM25, not constant */
    sc_query *bad = sc_query_regexp(&a, S("body"), S("a(b"), SC_REGEXP_ALL);
    assert_int_equal(sc_search_execute(&searcher, bad, &o, &a, &r), SC_EPARSE);
    printf("# %s\n", r.error);
    sc_arena_fini(&a);
    /* the arena budget is a limit too */
    sc_arena_init(&a, 4096);
    sc_query *pq = sc_query_prefix(&a, S("body"), S("x"));
    assert_non_null(pq);
    o.size = 1000; /* 1,000 hits do not fit in 4 KiB */
    sc_status st = sc_search_execute(&searcher, pq, &o, &a, &r);
    printf("# budget: %s\n", sc_status_name(st));
    assert_int_equal(st, SC_ELIMIT);
    printf("# %s\n", r.error);
    sc_arena_fini(&a);
}

static void test_cancel_and_deadline(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    sc_cancel_token t;
    sc_cancel_token_init(&t, 0);
    o.cancel = &t;
    sc_query *q = sc_query_term(&a, S("body"), S("common"));
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
    assert_false(r.cancelled || r.timed_out);
    assert_true(r.total > 0);
    sc_cancel_token_cancel(&t);
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
    assert_true(r.cancelled);
    assert_int_equal(r.total, 0);
    sc_cancel_token_init(&t, 1); /* deadline in the past */
    assert_int_equal(sc_search_count(&searcher, q, &o, &a, &r), SC_OK);
    assert_true(r.timed_out);
    sc_arena_fini(&a);
}

/* The deadline holds while a query is planned: 300 fuzzy clauses whose automata take tens of
 * milliseconds to build stop at an expired deadline before building any of them (issue 17,
 * item 7). Memory is the deterministic witness: without a deadline the automata fill the
 * arena; with an expired one the plan holds only empty clauses. */
static void test_deadline_while_planning(void **state)
{
    (void)state;
    size_t bytes[2];
    for (int expired = 0; expired < 2; expired++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *b = sc_query_bool(&a);
        char term[32];
        for (int i = 0; i < 300; i++) {
            snprintf(term, sizeof term, "wor%dq", i);
            sc_query *f = sc_query_fuzzy(&a, S("body"), S(term), 2, 0, 50, true);
            assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, f), SC_OK);
        }
        sc_search_options o;
        sc_search_options_init(&o);
        sc_cancel_token t;
        sc_cancel_token_init(&t, expired ? 1 : 0); /* 1 ns: long past */
        o.cancel = &t;
        sc_search_result r;
        size_t before = a.used_bytes;
        assert_int_equal(sc_search_execute(&searcher, b, &o, &a, &r), SC_OK);
        bytes[expired] = a.used_bytes - before;
        printf("# 300 fuzzy clauses, deadline %s: %zu arena bytes, timed_out %d\n",
               expired ? "expired" : "none", bytes[expired], r.timed_out);
        assert_true(r.timed_out == (expired == 1));
        sc_arena_fini(&a);
    }
    assert_true(bytes[1] * 20 < bytes[0]);
}

/* Walking 2,000 matched terms allocates exactly as much as walking 20. */
static void test_no_allocation_per_term(void **state)
{
    (void)state;
    sc_search_options o;
    sc_search_options_init(&o);
    size_t bytes[2];
    size_t allocs[2] = {0, 0};
    const char *pre[2] = {"x", "y"};
    for (int i = 0; i < 2; i++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *q = sc_query_prefix(&a, S("body"), S(pre[i]));
        sc_search_result r;
        size_t before = a.used_bytes;
#ifndef SC_ASAN
        size_t m0 = n_mallocs;
#endif
        assert_int_equal(sc_search_count(&searcher, q, &o, &a, &r), SC_OK);
#ifndef SC_ASAN
        allocs[i] = n_mallocs - m0;
#endif
        bytes[i] = a.used_bytes - before;
        printf("# prefix %s*: %llu hits, %zu arena bytes, %zu mallocs\n", pre[i],
               (unsigned long long)r.total, bytes[i], allocs[i]);
        sc_arena_fini(&a);
    }
    assert_int_equal(bytes[0], bytes[1]);
    assert_int_equal(allocs[0], allocs[1]);
}

static void test_query_string_end_to_end(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query_parser_options po;
    sc_query_parser_options_init(&po);
    po.default_field = S("body");
    sc_query *q;
    assert_int_equal(sc_query_string_parse(S("w3 AND -w101 tag:t1"), &po, &a, &q, NULL), SC_OK);
    sc_search_options o;
    sc_search_options_init(&o);
    sc_search_result r;
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
    assert_true(r.total > 0);
    for (size_t i = 0; i < r.n_hits; i++)
        assert_true(r.hits[i].global_doc % 7 == 3 && r.hits[i].global_doc % 13 != 1);
    /* a phrase over a keyword field without positions is an error naming the field */
    assert_int_equal(sc_query_string_parse(S("tag:\"t1 t2\""), &po, &a, &q, NULL), SC_OK);
    q->kind = SC_QUERY_PHRASE; /* the keyword analyzer made a term; force a phrase */
    sc_slice ts[2] = {S("t1"), S("t2")};
    q = sc_query_phrase(&a, S("tag"), ts, NULL, 2, 0);
    assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_EINVAL);
    printf("# %s\n", r.error);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_paging_and_totals),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_cancel_and_deadline),
        cmocka_unit_test(test_deadline_while_planning),
        cmocka_unit_test(test_no_allocation_per_term),
        cmocka_unit_test(test_query_string_end_to_end),
        cmocka_unit_test(test_kinds_with_deletes),
        cmocka_unit_test(test_scored_term_in_some_segments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
