/* Clocks over clock_gettime. */
#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

bool sc_time_parse_ms(const char *s, int64_t *ms)
{
    if (!s || !*s)
        return false;
    if (strcmp(s, "-1") == 0) {
        *ms = -1;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return false;
    double mult;
    if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "s") == 0 || *end == '\0')
        mult = *end ? 1000 : 1;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else if (strcmp(end, "d") == 0)
        mult = 86400000;
    else if (strcmp(end, "micros") == 0)
        mult = 0.001;
    else if (strcmp(end, "nanos") == 0)
        mult = 0.000001;
    else
        return false;
    *ms = (int64_t)(v * mult);
    return true;
}
