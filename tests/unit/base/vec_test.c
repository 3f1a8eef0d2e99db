/* Tests for base/vec: push/append growth keeps contents, empty append, overflow refused with
 * the vector unchanged, clear and free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/vec.h"

static void test_push_growth(void **state)
{
    (void)state;
    SC_VEC(uint32_t) v = {0};
    assert_int_equal(v.len, 0);
    assert_int_equal(sc_vec_push(&v, 7u), SC_OK);
    assert_int_equal(v.len, 1);
    assert_int_equal(v.ptr[0], 7);
    assert_true(v.cap >= 1);
    for (uint32_t i = 1; i < 10000; i++) {
        size_t old_cap = v.cap;
        assert_int_equal(sc_vec_push(&v, i * 3), SC_OK);
        assert_true(v.cap == old_cap || v.cap >= old_cap * 2); /* geometric */
    }
    assert_int_equal(v.len, 10000);
    for (uint32_t i = 1; i < 10000; i++)
        assert_int_equal(v.ptr[i], i * 3);
    sc_vec_clear(&v);
    assert_int_equal(v.len, 0);
    assert_true(v.cap >= 10000);
    sc_vec_free(&v);
    assert_null(v.ptr);
    assert_int_equal(v.cap, 0);
    sc_vec_free(&v);
}

static void test_append(void **state)
{
    (void)state;
    sc_buf b = {0};
    assert_int_equal(sc_vec_append(&b, "", 0), SC_OK);
    assert_int_equal(b.len, 0);
    assert_int_equal(sc_vec_append(&b, "hello ", 6), SC_OK);
    assert_int_equal(sc_vec_append(&b, "world", 5), SC_OK);
    assert_int_equal(b.len, 11);
    assert_memory_equal(b.ptr, "hello world", 11);
    assert_int_equal(sc_vec_reserve(&b, 1000), SC_OK);
    assert_true(b.cap >= 1011);
    assert_memory_equal(b.ptr, "hello world", 11);
    sc_vec_free(&b);
}

static void test_overflow(void **state)
{
    (void)state;
    SC_VEC(uint64_t) v = {0};
    assert_int_equal(sc_vec_push(&v, 1u), SC_OK);
    uint64_t *old = v.ptr;
    size_t cap = v.cap;
    assert_int_equal(sc_vec_reserve(&v, SIZE_MAX / 4), SC_ENOMEM);
    assert_int_equal(sc_vec_reserve(&v, SIZE_MAX), SC_ENOMEM);
    assert_ptr_equal(v.ptr, old);
    assert_int_equal(v.cap, cap);
    assert_int_equal(v.len, 1);
    sc_vec_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_growth),
        cmocka_unit_test(test_append),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
