/* Postings cursor: walks one term's documents in a segment. Docs are stored in blocks of 128
 * (bit-packed gaps, a run, or a bitset; a varint tail block), frequencies in their own packed
 * blocks decoded only when asked, positions in a separate stream, and a fixed-size skip entry
 * per block holding the block's last doc and its impact (max freq, min norm byte); each block
 * of a field with freqs starts with its competitive (freq, norm) pairs for block-max pruning.
 * The cursor is caller-owned, holds its decode buffers inline and never allocates: one cursor
 * can be reset onto thousands of terms (sc_postings_reset).
 *
 * Protocol (as Lucene's DocIdSetIterator): after reset the cursor is unpositioned; next() or
 * advance() move it; they return the new doc or SC_POSTINGS_END. Corrupt data makes the cursor
 * return SC_POSTINGS_END and sets a sticky status (sc_postings_status). Not thread-safe: one
 * cursor per thread; any number of cursors may read one segment concurrently. */
#ifndef SC_INDEX_POSTINGS_H
#define SC_INDEX_POSTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/status.h"
#include "index/segment.h"
#include "index/terms.h"

#define SC_POSTINGS_END UINT32_MAX
#define SC_POSTINGS_BLOCK 128

enum {
    SC_POSTINGS_FREQS = 1u << 0,     /* freq() will be called (no cost until it is) */
    SC_POSTINGS_POSITIONS = 1u << 1, /* positions() will be called */
};

/* Skip/impact entry of one block (see docs/format.md). */
typedef struct sc_postings_impact {
    uint32_t max_freq; /* highest freq of any doc in the block */
    uint8_t min_norm;  /* smallest norm byte of any doc in the block (0 if no norms) */
} sc_postings_impact;

typedef struct sc_postings {
    uint32_t doc; /* current doc (valid after next/advance returned it) */
    /* private */
    const uint8_t *base; /* file bytes */
    uint64_t base_len;
    const uint8_t *skip;  /* skip table: n_blocks entries (NULL: < 128 docs, one block) */
    const uint8_t *skip2; /* second level: n_skip2 entries per 32 blocks, or NULL */
    uint32_t n_skip2;
    uint64_t blocks_off; /* absolute offset of the first block */
    uint64_t pos_off;    /* absolute offset of the term's positions */
    uint32_t n_docs_seg; /* segment doc count (doc ids must be below) */
    uint32_t doc_freq;
    uint32_t n_blocks;
    uint32_t block;      /* decoded block index (n_blocks = exhausted) */
    uint32_t shallow;    /* block index of advance_shallow */
    uint32_t n_in_block; /* docs in the decoded block */
    uint32_t i;          /* index of `doc` in docs[] */
    uint32_t prev_last;  /* last doc of the block before `block` (or -1 as UINT32_MAX) */
    uint64_t freq_off;   /* absolute offset of the decoded block's freqs */
    uint8_t freq_kind;   /* 0: packed block, 1: varint tail */
    bool has_freqs;      /* field stores freqs */
    bool has_positions;
    bool freqs_decoded;
    bool started;
    bool exhausted;
    sc_status status;      /* sticky */
    uint32_t pos_total;    /* positions in the block (UINT32_MAX: not summed yet) */
    uint32_t pos_pb;       /* index of the position block at pos_cursor */
    uint32_t pos_dec;      /* index + 1 of the position group in pos_buf (0: none) */
    uint32_t pos_seen;     /* index + 1 of the last group a doc was read from unpacked */
    uint32_t pos_tail_n;   /* tail group in pos_buf: sums decoded so far ... */
    uint64_t pos_tail_off; /* ... and the absolute offset of the next varint */
    uint64_t pos_start;    /* absolute offset of the block's positions */
    uint64_t pos_cursor;   /* absolute offset of position block pos_pb */
    /* 16-byte aligned whatever the fields above: the block decoders store docs 16-32 bytes at
     * a time, and an 8-byte-aligned array (a 4-byte field added above) cost and_high_*
     * TOP_10_COUNT 10% */
    _Alignas(16) uint32_t docs[SC_POSTINGS_BLOCK];
    uint32_t freqs[SC_POSTINGS_BLOCK];
    uint32_t pos_first[SC_POSTINGS_BLOCK];    /* doc j's first position delta in the block (valid
                                                 once pos_total is) */
    uint32_t pos_buf[SC_POSTINGS_BLOCK + 16]; /* prefix sums of the deltas of block pos_dec - 1
                                                 (+ slack for 16-wide reads) */
    uint32_t filter_floor; /* sc_postings_filter answered the blocks below from their bits */
} sc_postings;

/* Zeroes the cursor (no allocation). Optional: reset works on any struct. */
void sc_postings_init(sc_postings *p);

/* Points the cursor at the postings of term `ti` of field `f` in `seg`. `flags` is a hint
 * (SC_POSTINGS_*). No allocation; O(1). Returns SC_ECORRUPT if the term's location is out of
 * the file. The segment must stay referenced while the cursor is used. */
sc_status sc_postings_reset(sc_postings *p, const sc_segment *seg, const sc_field_info *f,
                            const sc_term_info *ti, unsigned flags) SC_MUST_USE;

/* Moves to the next doc; returns it or SC_POSTINGS_END. */
uint32_t sc_postings_next(sc_postings *p);

/* Moves to the first doc >= target (beyond the current one); returns it or SC_POSTINGS_END.
 * Skips whole blocks through the skip tables: galloping over the first level, continued on
 * the second (one entry per 32 blocks, then a binary search inside the group found) once the
 * jump is longer than 32 blocks. target must be > current doc (or the cursor unpositioned);
 * otherwise behaves as next(). */
uint32_t sc_postings_advance(sc_postings *p, uint32_t target);

/* Bulk next: fills up to `max` following docs (and their freqs if `freqs` is non-NULL);
 * returns how many (0 at the end). After the call `doc` is the last doc returned when `max` were
 * returned, or SC_POSTINGS_END when fewer were (the end was reached). */
size_t sc_postings_next_batch(sc_postings *p, uint32_t *docs, uint32_t *freqs, size_t max);

/* Bulk read of a window: writes the current doc (the cursor must be positioned; nothing when
 * it is exhausted) and the docs after it, while below `upto` and at most `max`, with their
 * freqs when `freqs` is non-NULL; returns how many. The cursor ends on the last doc written,
 * or, when the block ran out below `upto` and docs may follow before it, on the first doc of
 * the next block (>= upto or not written because of `max`, or END). Nothing is decoded past
 * the block that holds the last doc written unless docs below `upto` may lie there. */
size_t sc_postings_take_upto(sc_postings *p, uint32_t upto, uint32_t *docs, uint32_t *freqs,
                             size_t max);

/* Bulk into a bitset: sets bit (d - base) for the current doc (if positioned; the first doc if
 * not) and every following doc d < upto; leaves the cursor on the first doc >= upto (or END).
 * The caller guarantees bits [base, upto) exist in `bs`. Run blocks set ranges, bitset blocks
 * OR words, packed blocks are decoded straight into the set. */
void sc_postings_into_bitset(sc_postings *p, uint32_t upto, sc_bitset *bs, uint32_t base);

/* Bulk membership (a conjunction's probe): for the candidates cand[0..n), strictly ascending,
 * each above every candidate and advance target this cursor was given before (any values on
 * a fresh cursor), writes to keep[] the index of every candidate the term contains, and its
 * frequency to freqs[] when freqs is non-NULL (1 for fields without freqs); returns how many.
 * The cursor ends as if advance() had been called with each candidate in turn (on the first
 * doc >= cand[n - 1], or END), unless `only_filter`: the caller then promises to call nothing
 * but sc_postings_filter on it until the next reset, and the cursor may end between blocks
 * (the last candidate's block is not decoded when its bits answer). Blocks without a
 * candidate are skipped through the skip tables undecoded; bitset blocks (but the one the
 * cursor ends in) answer from their bits, frequencies by the rank of the bit, without decoding
 * their docs. O(n log 128 + blocks touched). keep and freqs have room for n. */
size_t sc_postings_filter(sc_postings *p, const uint32_t *cand, size_t n, uint32_t *keep,
                          uint32_t *freqs, bool only_filter);

/* End (exclusive) of the run of consecutive docs that starts at the current doc: every doc in
 * [doc, run_end) matches. At least doc + 1. Positioned cursors only. */
uint32_t sc_postings_run_end(sc_postings *p);

/* Frequency of the current doc (1 for fields without freqs). Decodes the block's freqs on
 * the first call in a block. */
uint32_t sc_postings_freq(sc_postings *p);

/* Positions of the current doc, ascending, into out (room for `max`); returns how many were
 * written (min(freq, max)); 0 for fields without positions or on corruption. Entries of out
 * past the returned count (below `max`) may be overwritten: a caller passing room for at least
 * 16 gets short docs copied without a loop on freq. Decodes each packed group of 128 position
 * deltas of a block once, however many of its docs are read. */
size_t sc_postings_positions(sc_postings *p, uint32_t *out, size_t max);

/* The current doc's positions in place, without a copy, when they are already decoded (the
 * doc's deltas lie in the position group the cursor holds decoded, as once an earlier doc of
 * that group was read through sc_postings_positions): *sums points at freq prefix sums and
 * position k is sums[k] + *adj (mod 2^32); sums[freq .. 15] may be read (unspecified values).
 * False otherwise (then call sc_postings_positions); never decodes, never fails. */
static inline bool sc_postings_positions_view(const sc_postings *p, const uint32_t **sums,
                                              uint32_t *adj)
{
    if (p->pos_dec == 0 || p->exhausted || !p->started)
        return false; /* pos_dec != 0: freqs decoded and pos_first summed in this block */
    uint32_t g = p->pos_first[p->i], f = p->freqs[p->i];
    uint32_t pb = g / SC_POSTINGS_BLOCK, off = g % SC_POSTINGS_BLOCK;
    if (p->pos_dec != pb + 1 || f > SC_POSTINGS_BLOCK - off)
        return false;
    if (pb == p->pos_total / SC_POSTINGS_BLOCK && p->pos_tail_n < off + f)
        return false; /* the varint tail, not decoded this far */
    *sums = p->pos_buf + off;
    *adj = off ? 0u - p->pos_buf[off - 1] : 0u;
    return true;
}

/* Makes the current doc's positions viewable (sc_postings_positions_view) where that costs
 * no more than reading them: decodes the doc's position group (a packed one whole; the varint
 * tail whole for a dense reader, one that decoded the group before, else through the doc). False,
 * and nothing decoded, for the first doc read from a packed group (sc_postings_positions takes a
 * sparse reader's few deltas straight from the bytes and remembers the group) and for a doc whose
 * positions span two groups; false on corruption too (the cursor fails, as sc_postings_positions
 * would). */
bool sc_postings_positions_prepare(sc_postings *p);

/* Block-max support: moves a shallow pointer (without decoding) to the block that contains
 * the first doc >= target and returns that block's last doc, or SC_POSTINGS_END if no doc >=
 * target. The impact of that block is then sc_postings_shallow_impact(). */
uint32_t sc_postings_advance_shallow(sc_postings *p, uint32_t target);
sc_postings_impact sc_postings_shallow_impact(const sc_postings *p);

/* Competitive impacts of the shallow block (the one of the last advance_shallow): the pareto
 * frontier of its docs' (freq, norm byte) pairs, ascending in freq and in norm; every doc of
 * the block has freq <= and norm >= some pair's. At most SC_POSTINGS_BLOCK pairs. Returns how
 * many were written to out (room for `max`), 0 if there is no shallow block, the field has no
 * freqs, `max` is too small or the data is corrupt: callers then use shallow_impact's bound. */
size_t sc_postings_shallow_impacts(const sc_postings *p, sc_postings_impact *out, size_t max);

/* Loose impact bound (max freq, min norm) of every doc in the blocks from the shallow block
 * (the one of the last advance_shallow; the first block before any) through the block that
 * holds `upto` (through the last block when upto is past it): Lucene's getMaxScore(upTo).
 * Whole groups of 32 blocks come from the second skip level, so a long window costs
 * O(blocks / 32 + 64) entry reads. Does not move the cursor. */
sc_postings_impact sc_postings_max_impact_upto(const sc_postings *p, uint32_t upto);

/* Impact over all blocks of the term (max freq, min norm): O(n_blocks / 32) through the
 * second skip level (O(n_blocks) for terms of at most 32 blocks). */
sc_postings_impact sc_postings_term_impact(const sc_postings *p);

/* doc_freq of the term (the cost of iterating it). */
static inline uint64_t sc_postings_cost(const sc_postings *p)
{
    return p->doc_freq;
}

/* SC_OK or the sticky error (SC_ECORRUPT) that ended iteration early. */
static inline sc_status sc_postings_status(const sc_postings *p)
{
    return p->status;
}

#endif
