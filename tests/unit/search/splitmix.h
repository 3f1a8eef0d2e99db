/* The splitmix64 generator of the sketch tests and bench/sketch_bench.c: full 64-bit output,
 * so random values stand in for value hashes; unif() is uniform in (0, 1). sm_seed() seeds
 * from SCRY_SEED (else time and pid) and prints "[tag] seed=...". Header-only: each program
 * has its own state. Not for the tests that include fixture.h (it has its own rng). */
#ifndef SC_TESTS_SEARCH_SPLITMIX_H
#define SC_TESTS_SEARCH_SPLITMIX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng;

static inline uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double unif(void)
{
    return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static inline void sm_seed(const char *tag)
{
    const char *env = getenv("SCRY_SEED");
    rng = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20));
    fprintf(stderr, "[%s] seed=%llu (rerun with SCRY_SEED=%llu)\n", tag, (unsigned long long)rng,
            (unsigned long long)rng);
}

#endif
