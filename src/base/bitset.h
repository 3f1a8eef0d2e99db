/* Fixed-size bitsets over 64-bit words: set/clear/test, popcount of a range, and/or/andnot of
 * word windows, iteration over set bits. Used for live docs, filters and 4,096-doc count
 * windows. Bits past n_bits in the last word are kept zero by every operation. */
#ifndef SC_BASE_BITSET_H
#define SC_BASE_BITSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct sc_bitset {
    uint64_t *words;
    size_t n_bits;
} sc_bitset;

static inline size_t sc_bitset_words_for(size_t n_bits)
{
    return (n_bits + 63) / 64;
}

/* Allocates a zeroed bitset of n_bits (heap). Free with sc_bitset_fini. */
sc_status sc_bitset_init(sc_bitset *b, size_t n_bits) SC_MUST_USE;
void sc_bitset_fini(sc_bitset *b);

static inline void sc_bitset_set(sc_bitset *b, size_t i)
{
    b->words[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void sc_bitset_clear(sc_bitset *b, size_t i)
{
    b->words[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

static inline bool sc_bitset_test(const sc_bitset *b, size_t i)
{
    return (b->words[i >> 6] >> (i & 63)) & 1;
}

/* Sets every bit in [from, to). */
void sc_bitset_set_range(sc_bitset *b, size_t from, size_t to);

/* Clears every bit. */
void sc_bitset_clear_all(sc_bitset *b);

/* Set bits in words[0, n) (the POPCNT instruction when the CPU has it). */
uint64_t sc_popcount_words(const uint64_t *w, size_t n);
/* Number of set bits in [from, to). O((to-from)/64). */
size_t sc_bitset_count_range(const sc_bitset *b, size_t from, size_t to);

/* Number of set bits in the whole set. */
size_t sc_bitset_count(const sc_bitset *b);

/* Word-window operations: dst.words[w] op= src.words[w] for w in [word_from, word_to). */
void sc_bitset_and_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to);
void sc_bitset_or_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to);
void sc_bitset_andnot_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to);

/* Index of the first set bit >= i, or n_bits if none. */
size_t sc_bitset_next_set(const sc_bitset *b, size_t i);

/* Calls fn(ctx, index) for each set bit in [from, to) in increasing order. Returns early with
 * the first non-zero value fn returns. */
int sc_bitset_foreach(const sc_bitset *b, size_t from, size_t to, int (*fn)(void *ctx, size_t i),
                      void *ctx);

/* Writes the indexes of the set bits in [from, to) into out (room for to-from entries), each
 * plus `base`; returns how many were written. The bulk form of iteration. */
size_t sc_bitset_to_array(const sc_bitset *b, size_t from, size_t to, uint32_t base, uint32_t *out);

#endif
