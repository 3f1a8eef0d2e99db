/* Private to the postings cursor's two files (postings.c: the cursor, decoding, skipping,
 * positions, impacts; postings_bulk.c: into_bitset and the conjunction's probes): the skip entry
 * readers, the block locator and the decoders they share. */
#ifndef SC_INDEX_POSTINGS_IMPL_H
#define SC_INDEX_POSTINGS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/varint.h"
#include "index/bitpack.h"
#include "index/internal.h"
#include "index/postings.h"

/* sc_varint_get with the one-byte case inline (block headers' lengths and gaps are mostly
 * small; the call was 4-6% of and_high_* counts) */
static inline sc_status varint(const uint8_t **q, const uint8_t *end, uint64_t *v)
{
    if (*q < end && **q < 0x80) {
        *v = *(*q)++;
        return SC_OK;
    }
    return sc_varint_get(q, end, v);
}

static inline uint32_t skip_last(const sc_postings *p, uint32_t k)
{
    return sc__ld32(p->skip + (size_t)k * SC__SKIP_BYTES);
}
static inline uint32_t skip_block_off(const sc_postings *p, uint32_t k)
{
    return p->skip ? sc__ld32(p->skip + (size_t)k * SC__SKIP_BYTES + 4) : 0;
}
static inline uint32_t skip_pos_off(const sc_postings *p, uint32_t k)
{
    return p->skip ? sc__ld32(p->skip + (size_t)k * SC__SKIP_BYTES + 8) : 0;
}

/* Absolute offset of block k's doc data: past its impacts prefix (imp_len:varint + bytes) in
 * fields with freqs. p->base_len when out of the file (every caller treats that as corrupt). */
static inline uint64_t block_data(const sc_postings *p, uint32_t k)
{
    uint64_t start = p->blocks_off + skip_block_off(p, k);
    if (start >= p->base_len)
        return p->base_len;
    if (!p->has_freqs)
        return start;
    const uint8_t *q = p->base + start, *end = p->base + p->base_len;
    uint64_t len;
    if (varint(&q, end, &len) != SC_OK || len >= (uint64_t)(end - q))
        return p->base_len;
    return (uint64_t)(q - p->base) + len;
}

/* Bits set in w (the baseline target has no POPCNT; a library call was slower). */
static inline uint32_t popcount64(uint64_t w)
{
    w -= (w >> 1) & UINT64_C(0x5555555555555555);
    w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
    w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (uint32_t)((w * UINT64_C(0x0101010101010101)) >> 56);
}

/* Decodes block k's docs (validated; freqs of a tail block too) and makes it current at its
 * first doc; false on corrupt data. */
bool sc__postings_decode_block(sc_postings *p, uint32_t k);
/* First block >= from whose last doc >= target (n_blocks if none), through the skip levels. */
uint32_t sc__postings_find_block(const sc_postings *p, uint32_t from, uint32_t target);

/* The small ones inline in both files (called per block on the probe paths; out of line they
 * cost and_high_* TOP_10_COUNT 7-10%). */

/* Marks the cursor corrupt and exhausted; returns SC_POSTINGS_END. */
static inline uint32_t fail(sc_postings *p)
{
    p->status = SC_ECORRUPT;
    p->exhausted = true;
    p->doc = SC_POSTINGS_END;
    return SC_POSTINGS_END;
}

/* Decodes the current full block's freqs; false on corrupt data. */
static inline bool decode_freqs(sc_postings *p)
{
    const uint8_t *q = p->base + p->freq_off, *end = p->base + p->base_len;
    if (p->freq_kind == 0) {
        if (q >= end)
            return false;
        unsigned w = *q++;
        if (w > 32 || (size_t)(end - q) < sc_bitpack_bytes(w))
            return false;
        sc_bitpack_unpack(q, w, p->freqs);
        for (uint32_t i = 0; i < SC_POSTINGS_BLOCK; i++)
            p->freqs[i] += 1;
    } else {
        return false; /* tail freqs are decoded with the docs: never reached */
    }
    p->freqs_decoded = true;
    return true;
}

/* Moves to block k's first doc (exhausted past the last block); the doc or SC_POSTINGS_END. */
static inline uint32_t enter_block(sc_postings *p, uint32_t k)
{
    if (k >= p->n_blocks) {
        p->exhausted = true;
        p->doc = SC_POSTINGS_END;
        return SC_POSTINGS_END;
    }
    if (!sc__postings_decode_block(p, k))
        return fail(p);
    p->started = true;
    p->doc = p->docs[0];
    return p->doc;
}

#endif
