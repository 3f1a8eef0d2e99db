/* Bitset operations; see bitset.h. */
#include "base/bitset.h"

#include <stdlib.h>
#include <string.h>

sc_status sc_bitset_init(sc_bitset *b, size_t n_bits)
{
    size_t nw = sc_bitset_words_for(n_bits);
    b->n_bits = n_bits;
    b->words = calloc(nw ? nw : 1, sizeof(uint64_t));
    return b->words ? SC_OK : SC_ENOMEM;
}

void sc_bitset_fini(sc_bitset *b)
{
    free(b->words);
    b->words = NULL;
    b->n_bits = 0;
}

static inline uint64_t mask_from(size_t bit) /* bits >= bit within the word */
{
    return ~(uint64_t)0 << (bit & 63);
}

static inline uint64_t mask_below(size_t bit) /* bits < bit within the word; bit%64==0 -> all */
{
    size_t r = bit & 63;
    return r ? (((uint64_t)1 << r) - 1) : ~(uint64_t)0;
}

void sc_bitset_set_range(sc_bitset *b, size_t from, size_t to)
{
    if (to > b->n_bits)
        to = b->n_bits;
    if (from >= to)
        return;
    size_t fw = from >> 6, lw = (to - 1) >> 6;
    if (fw == lw) {
        b->words[fw] |= mask_from(from) & mask_below(to);
        return;
    }
    b->words[fw] |= mask_from(from);
    for (size_t w = fw + 1; w < lw; w++)
        b->words[w] = ~(uint64_t)0;
    b->words[lw] |= mask_below(to);
}

void sc_bitset_clear_all(sc_bitset *b)
{
    memset(b->words, 0, sc_bitset_words_for(b->n_bits) * sizeof(uint64_t));
}

/* The build targets baseline x86-64 (no POPCNT), where __builtin_popcountll is a library call
 * per word; whole-word runs use the instruction when the CPU has it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt"))) static uint64_t popcount_hw(const uint64_t *w, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (uint64_t)__builtin_popcountll(w[i]);
    return c;
}
#endif

uint64_t sc_popcount_words(const uint64_t *w, size_t n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("popcnt"))
        return popcount_hw(w, n);
#endif
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = w[i] - ((w[i] >> 1) & UINT64_C(0x5555555555555555));
        x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
        x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
        c += (x * UINT64_C(0x0101010101010101)) >> 56;
    }
    return c;
}

size_t sc_bitset_count_range(const sc_bitset *b, size_t from, size_t to)
{
    if (to > b->n_bits)
        to = b->n_bits;
    if (from >= to)
        return 0;
    size_t fw = from >> 6, lw = (to - 1) >> 6;
    if (fw == lw)
        return (size_t)__builtin_popcountll(b->words[fw] & mask_from(from) & mask_below(to));
    size_t n = (size_t)__builtin_popcountll(b->words[fw] & mask_from(from));
    n += (size_t)sc_popcount_words(b->words + fw + 1, lw - fw - 1);
    n += (size_t)__builtin_popcountll(b->words[lw] & mask_below(to));
    return n;
}

size_t sc_bitset_count(const sc_bitset *b)
{
    return sc_bitset_count_range(b, 0, b->n_bits);
}

void sc_bitset_and_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to)
{
    for (size_t w = word_from; w < word_to; w++)
        dst->words[w] &= src->words[w];
}

void sc_bitset_or_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to)
{
    for (size_t w = word_from; w < word_to; w++)
        dst->words[w] |= src->words[w];
}

void sc_bitset_andnot_words(sc_bitset *dst, const sc_bitset *src, size_t word_from, size_t word_to)
{
    for (size_t w = word_from; w < word_to; w++)
        dst->words[w] &= ~src->words[w];
}

size_t sc_bitset_next_set(const sc_bitset *b, size_t i)
{
    if (i >= b->n_bits)
        return b->n_bits;
    size_t w = i >> 6;
    uint64_t word = b->words[w] & mask_from(i);
    size_t nw = sc_bitset_words_for(b->n_bits);
    while (!word) {
        if (++w >= nw)
            return b->n_bits;
        word = b->words[w];
    }
    size_t r = (w << 6) + (size_t)__builtin_ctzll(word);
    return r < b->n_bits ? r : b->n_bits;
}

int sc_bitset_foreach(const sc_bitset *b, size_t from, size_t to, int (*fn)(void *ctx, size_t i),
                      void *ctx)
{
    if (to > b->n_bits)
        to = b->n_bits;
    for (size_t i = sc_bitset_next_set(b, from); i < to; i = sc_bitset_next_set(b, i + 1)) {
        int r = fn(ctx, i);
        if (r)
            return r;
    }
    return 0;
}

size_t sc_bitset_to_array(const sc_bitset *b, size_t from, size_t to, uint32_t base, uint32_t *out)
{
    if (to > b->n_bits)
        to = b->n_bits;
    if (from >= to)
        return 0;
    size_t n = 0;
    size_t fw = from >> 6, lw = (to - 1) >> 6;
    for (size_t w = fw; w <= lw; w++) {
        uint64_t word = b->words[w];
        if (w == fw)
            word &= mask_from(from);
        if (w == lw)
            word &= mask_below(to);
        while (word) {
            out[n++] = base + (uint32_t)((w << 6) + (size_t)__builtin_ctzll(word));
            word &= word - 1;
        }
    }
    return n;
}
