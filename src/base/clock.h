/* Monotonic and wall clocks. */
#ifndef SC_BASE_CLOCK_H
#define SC_BASE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Nanoseconds from CLOCK_MONOTONIC: only differences are meaningful. Thread-safe. */
uint64_t sc_clock_now_ns(void);

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t sc_clock_wall_ms(void);

/* CPU time used by the calling thread, nanoseconds. */
uint64_t sc_clock_thread_cpu_ns(void);

/* Parses an Elasticsearch time value ("1s", "500ms", "2m", "1h", "1d", "10micros",
 * "100nanos"; a bare number is milliseconds; "-1" is -1) into *ms. Returns false for anything
 * else, leaving *ms untouched. */
bool sc_time_parse_ms(const char *s, int64_t *ms);

#endif
