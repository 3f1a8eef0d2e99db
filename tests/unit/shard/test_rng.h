/* The shard tests' seeded xorshift generator (each test seeds rng and prints the seed). */
#ifndef SC_TESTS_SHARD_TEST_RNG_H
#define SC_TESTS_SHARD_TEST_RNG_H

#include <stdint.h>

static uint64_t rng;

static inline uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#endif
