/* Tests for the query tree constructors and printer (src/search/query.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "search/query.h"

#define S(x) sc_slice_cstr(x)

static void test_build_and_print(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    char tmp[8] = "foo";
    sc_query *t = sc_query_term(&a, S("body"), S(tmp));
    memcpy(tmp, "zzz", 3); /* the tree must not borrow */
    sc_query *b = sc_query_bool(&a);
    assert_non_null(t);
    assert_non_null(b);
    assert_int_equal(b->u.bool_.minimum_should_match, -1);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_MUST, t), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_MUST_NOT, sc_query_term(&a, S("body"), S("bar"))), SC_OK);
    sc_slice ph[] = {S("new"), S("york")};
    sc_query *p = sc_query_phrase(&a, S("body"), ph, NULL, 2, 1);
    p->boost = 2.0f;
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, p), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_FILTER, sc_query_prefix(&a, S("body"), S("ab"))), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, sc_query_fuzzy(&a, S("f"), S("abc"), 2, 0, 50, true)), SC_OK);
    char buf[256];
    size_t n = sc_query_to_string(b, buf, sizeof buf);
    assert_string_equal(buf, "(+body:foo -body:bar body:\"new york\"~1^2 #body:ab* f:abc~2)");
    assert_int_equal(n, strlen(buf));
    char small[10];
    size_t n2 = sc_query_to_string(b, small, sizeof small);
    assert_int_equal(n2, n);
    assert_string_equal(small, "(+body...");
    assert_int_equal(sc_query_bool_add(&a, t, SC_OCCUR_MUST, b), SC_EINVAL);
    sc_arena_fini(&a);
}

static void test_clause_limit_and_dismax(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *b = sc_query_bool(&a);
    sc_query *t = sc_query_match_all(&a);
    for (unsigned i = 0; i < SC_QUERY_MAX_CLAUSE_COUNT; i++)
        assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, t), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_SHOULD, t), SC_ELIMIT);
    sc_query *d = sc_query_dis_max(&a, 0.5f);
    for (int i = 0; i < 9; i++)
        assert_int_equal(sc_query_dis_max_add(&a, d, sc_query_term(&a, S("f"), S("x"))), SC_OK);
    assert_int_equal(d->u.dis_max.n_queries, 9);
    for (int i = 0; i < 9; i++)
        assert_int_equal(d->u.dis_max.queries[i]->kind, SC_QUERY_TERM);
    assert_string_equal(sc_query_kind_name(SC_QUERY_DIS_MAX), "dis_max");
    sc_arena_fini(&a);
}

static void test_budget(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 64);
    sc_query *q = NULL;
    for (int i = 0; i < 100 && (q = sc_query_term(&a, S("f"), S("abcdefgh"))); i++)
        ;
    assert_null(q);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_print),
        cmocka_unit_test(test_clause_limit_and_dismax),
        cmocka_unit_test(test_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
