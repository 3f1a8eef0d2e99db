/* Tests for base/clock: monotonic time never goes backwards and advances across a sleep; wall
 * clock is plausible; thread CPU time grows with work. No wall-clock durations are asserted
 * beyond "at least the sleep". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "base/clock.h"

static void test_monotonic(void **state)
{
    (void)state;
    uint64_t prev = sc_clock_now_ns();
    for (int i = 0; i < 100000; i++) {
        uint64_t now = sc_clock_now_ns();
        assert_true(now >= prev);
        prev = now;
    }
    uint64_t a = sc_clock_now_ns();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    assert_true(sc_clock_now_ns() - a >= 2000000);
}

static void test_wall(void **state)
{
    (void)state;
    int64_t ms = sc_clock_wall_ms();
    assert_true(ms > 1600000000000LL); /* after 2020 */
    int64_t t = (int64_t)time(NULL) * 1000;
    assert_true(ms >= t - 2000 && ms <= t + 2000);
}

static void test_thread_cpu(void **state)
{
    (void)state;
    uint64_t a = sc_clock_thread_cpu_ns();
    volatile uint64_t x = 0;
    while (sc_clock_thread_cpu_ns() == a)
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i;
    assert_true(sc_clock_thread_cpu_ns() > a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_wall),
        cmocka_unit_test(test_thread_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
