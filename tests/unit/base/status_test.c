/* Tests for base/status: every code has a distinct message and name; out of range is safe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "base/status.h"

static void test_names_and_messages(void **state)
{
    (void)state;
    assert_string_equal(sc_status_str(SC_OK), "ok");
    assert_string_equal(sc_status_name(SC_ECORRUPT), "SC_ECORRUPT");
    for (int i = 0; i < SC_STATUS_COUNT_; i++) {
        for (int j = i + 1; j < SC_STATUS_COUNT_; j++) {
            assert_string_not_equal(sc_status_str((sc_status)i), sc_status_str((sc_status)j));
            assert_string_not_equal(sc_status_name((sc_status)i), sc_status_name((sc_status)j));
        }
    }
    assert_string_equal(sc_status_str((sc_status)999), "unknown status");
    assert_string_equal(sc_status_str((sc_status)-1), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
