/* Monotonic and wall clocks. */
#ifndef SC_BASE_CLOCK_H
#define SC_BASE_CLOCK_H

#include <stdint.h>

/* Nanoseconds from CLOCK_MONOTONIC: only differences are meaningful. Thread-safe. */
uint64_t sc_clock_now_ns(void);

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t sc_clock_wall_ms(void);

/* CPU time used by the calling thread, nanoseconds. */
uint64_t sc_clock_thread_cpu_ns(void);

#endif
