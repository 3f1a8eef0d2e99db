/* Tests for base/slice: equality, unsigned byte ordering with prefixes, sub-slices clamp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "base/slice.h"

static void test_eq_and_cstr(void **state)
{
    (void)state;
    assert_int_equal(sc_slice_cstr(NULL).len, 0);
    assert_true(sc_slice_eq(sc_slice_cstr(NULL), sc_slice_make("", 0)));
    assert_true(sc_slice_eq_cstr(sc_slice_make("abc", 3), "abc"));
    assert_false(sc_slice_eq_cstr(sc_slice_make("abc", 2), "abc"));
    assert_false(sc_slice_eq(sc_slice_make("a\0b", 3), sc_slice_make("a\0c", 3)));
    assert_true(sc_slice_eq(sc_slice_make("a\0b", 3), sc_slice_make("a\0b", 3)));
}

static void test_cmp(void **state)
{
    (void)state;
    assert_int_equal(sc_slice_cmp(sc_slice_cstr(""), sc_slice_cstr("")), 0);
    assert_true(sc_slice_cmp(sc_slice_cstr(""), sc_slice_cstr("a")) < 0);
    assert_true(sc_slice_cmp(sc_slice_cstr("ab"), sc_slice_cstr("abc")) < 0);
    assert_true(sc_slice_cmp(sc_slice_cstr("abc"), sc_slice_cstr("ab")) > 0);
    assert_true(sc_slice_cmp(sc_slice_cstr("b"), sc_slice_cstr("abc")) > 0);
    /* Unsigned bytes: 0xff sorts after 'a'. */
    assert_true(sc_slice_cmp(sc_slice_cstr("\xff"), sc_slice_cstr("a")) > 0);
    assert_true(sc_slice_cmp(sc_slice_make("\0", 1), sc_slice_cstr("")) > 0);
}

static void test_prefix_and_sub(void **state)
{
    (void)state;
    sc_slice s = sc_slice_cstr("hello");
    assert_true(sc_slice_starts_with(s, sc_slice_cstr("")));
    assert_true(sc_slice_starts_with(s, sc_slice_cstr("he")));
    assert_true(sc_slice_starts_with(s, s));
    assert_false(sc_slice_starts_with(s, sc_slice_cstr("hello!")));
    assert_false(sc_slice_starts_with(s, sc_slice_cstr("x")));
    assert_true(sc_slice_eq_cstr(sc_slice_sub(s, 1, 3), "ell"));
    assert_true(sc_slice_eq_cstr(sc_slice_sub(s, 3, 100), "lo"));
    assert_int_equal(sc_slice_sub(s, 9, 2).len, 0);
    assert_int_equal(sc_slice_sub(s, 5, 0).len, 0);
    assert_true(sc_slice_eq_cstr(sc_slice_sub(s, 0, (size_t)-1), "hello"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq_and_cstr),
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_prefix_and_sub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
