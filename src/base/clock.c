/* Clocks over clock_gettime. */
#include "base/clock.h"

#include <time.h>

static uint64_t read_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sc_clock_now_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int64_t sc_clock_wall_ms(void)
{
    return (int64_t)(read_ns(CLOCK_REALTIME) / 1000000u);
}

uint64_t sc_clock_thread_cpu_ns(void)
{
    return read_ns(CLOCK_THREAD_CPUTIME_ID);
}
