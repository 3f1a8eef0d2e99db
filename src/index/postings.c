/* Postings cursor (postings.h). A term's postings are a table of fixed 20-byte skip entries
 * (last doc, block offset, positions offset, max freq, min norm), then the blocks, each (in
 * fields with freqs) after its competitive impacts: full blocks of 128 docs (packed gaps / run
 * / bitset, then packed freqs) and a varint tail block (freqs interleaved). A term with fewer than
 * 128 docs has no skip table (p->skip == NULL): its only block is bounded by the segment's doc
 * count until it is decoded, and its impact comes from the block's impacts prefix. A term of more
 * than 32 blocks has a second level (last doc, max freq, min norm per 32 blocks) for long jumps and
 * window impacts; its entries are checked against the first level before they are trusted. Every
 * block is validated as it is decoded (bounds, ascending, last doc equals its skip entry, below the
 * segment's doc count), so corrupt input ends iteration with SC_ECORRUPT, never a wild read or
 * write. */
#include "index/postings.h"

#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/varint.h"
#include "index/bitpack.h"
#include "index/internal.h"
#include "index/postings_impl.h"

void sc_postings_init(sc_postings *p)
{
    memset(p, 0, offsetof(sc_postings, docs));
    p->filter_floor = 0;
    p->doc = SC_POSTINGS_END;
    p->exhausted = true;
}

sc_status sc_postings_reset(sc_postings *p, const sc_segment *seg, const sc_field_info *f,
                            const sc_term_info *ti, unsigned flags)
{
    (void)flags;
    sc_slice b = sc__segment_bytes(seg);
    p->base = b.ptr;
    p->base_len = b.len;
    p->n_docs_seg = sc_segment_n_docs(seg);
    p->doc_freq = ti->doc_freq;
    p->n_blocks = (uint32_t)(((uint64_t)ti->doc_freq + SC_POSTINGS_BLOCK - 1) / SC_POSTINGS_BLOCK);
    p->has_freqs = f->kind == SC_FIELD_TEXT;
    p->has_positions = f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_POSITIONS);
    p->block = UINT32_MAX;
    p->shallow = 0;
    p->filter_floor = 0;
    p->n_in_block = 0;
    p->i = 0;
    p->started = false;
    p->exhausted = false;
    p->freqs_decoded = false;
    p->status = SC_OK;
    p->doc = SC_POSTINGS_END;
    uint32_t n_skip = sc__skip_entries(ti->doc_freq, p->n_blocks);
    p->n_skip2 = sc__skip2_entries(n_skip);
    uint64_t skip_bytes =
        (uint64_t)n_skip * SC__SKIP_BYTES + (uint64_t)p->n_skip2 * SC__SKIP2_BYTES;
    if (ti->doc_freq == 0 || ti->doc_freq > p->n_docs_seg || ti->postings_off > b.len ||
        skip_bytes > b.len - ti->postings_off || (p->has_positions && ti->positions_off > b.len)) {
        p->status = SC_ECORRUPT;
        p->exhausted = true;
        return SC_ECORRUPT;
    }
    p->skip = skip_bytes ? b.ptr + ti->postings_off : NULL;
    p->skip2 = p->n_skip2 ? p->skip + (size_t)n_skip * SC__SKIP_BYTES : NULL;
    p->blocks_off = ti->postings_off + skip_bytes;
    p->pos_off = ti->positions_off;
    return SC_OK;
}

/* For each byte value: the indexes of its set bits (then zeros) and how many there are; filled
 * once at load time. */
static uint8_t bit_idx[256][8], bit_cnt[256];

__attribute__((constructor)) static void init_bit_tables(void)
{
    for (unsigned v = 0; v < 256; v++) {
        unsigned n = 0;
        for (unsigned b = 0; b < 8; b++)
            if (v >> b & 1)
                bit_idx[v][n++] = (uint8_t)b;
        bit_cnt[v] = (uint8_t)n;
    }
}

/* Decodes the bitset payload [p, p + words*8) of a block starting at `first` into docs: a byte
 * at a time through bit_idx (8 entries written, bit_cnt kept) while that stays inside docs[],
 * then bit by bit. */
static bool decode_bitset(sc_postings *p, const uint8_t *q, uint64_t span, uint32_t first)
{
    uint64_t n_words = (span + 63) / 64;
    if (span % 64 && (sc__ld64(q + 8 * (n_words - 1)) >> (span % 64)))
        return false;
    uint32_t n = 0;
    uint64_t n_bytes = n_words * 8, i = 0;
    for (; i < n_bytes && n <= SC_POSTINGS_BLOCK - 8; i++) {
        const uint8_t *ix = bit_idx[q[i]];
        uint32_t b = first + (uint32_t)(i * 8);
#ifdef __SSE2__
        const __m128i z = _mm_setzero_si128(), vb = _mm_set1_epi32((int)b);
        __m128i w = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)ix), z);
        _mm_storeu_si128((__m128i *)(void *)(p->docs + n),
                         _mm_add_epi32(_mm_unpacklo_epi16(w, z), vb));
        _mm_storeu_si128((__m128i *)(void *)(p->docs + n + 4),
                         _mm_add_epi32(_mm_unpackhi_epi16(w, z), vb));
#else
        for (unsigned k = 0; k < 8; k++)
            p->docs[n + k] = b + ix[k];
#endif
        n += bit_cnt[q[i]];
    }
    for (; i < n_bytes; i++) {
        for (unsigned v = q[i]; v; v &= v - 1) {
            if (n == SC_POSTINGS_BLOCK)
                return false;
            p->docs[n++] = first + (uint32_t)(i * 8) + (uint32_t)__builtin_ctz(v);
        }
    }
    return n == SC_POSTINGS_BLOCK && p->docs[0] == first;
}

static bool decode_block(sc_postings *p, uint32_t k)
{
    /* without a skip table (one tail block) the segment's doc count bounds the last doc */
    uint32_t last = p->skip ? skip_last(p, k) : p->n_docs_seg - 1;
    uint32_t prev_last = k ? skip_last(p, k - 1) : UINT32_MAX;
    if ((k && last <= prev_last) || last >= p->n_docs_seg)
        return false;
    uint64_t start = block_data(p, k);
    if (start >= p->base_len)
        return false;
    const uint8_t *q = p->base + start, *end = p->base + p->base_len;
    uint64_t base_first = (uint64_t)prev_last + 1; /* 0 for the first block */
    base_first &= UINT32_MAX;
    uint32_t n = k + 1 == p->n_blocks ? p->doc_freq - k * SC_POSTINGS_BLOCK : SC_POSTINGS_BLOCK;
    if (n == SC_POSTINGS_BLOCK) {
        uint8_t hdr = *q++;
        unsigned kind = hdr >> 6, width = hdr & 63;
        uint64_t gap;
        if (varint(&q, end, &gap) != SC_OK || base_first + gap > last)
            return false;
        uint32_t first = (uint32_t)(base_first + gap);
        if (kind == SC__BLOCK_PACKED) {
            size_t nb = sc_bitpack_bytes(width);
            if (width > 32 || (size_t)(end - q) < nb)
                return false;
            sc_bitpack_unpack_gaps(q, width, first, p->docs);
            q += nb;
            if (p->docs[SC_POSTINGS_BLOCK - 1] != last)
                return false;
            /* without wrap-around the gaps make docs strictly ascending; check when possible */
            if ((uint64_t)first + ((UINT64_C(1) << width) * SC_POSTINGS_BLOCK) > UINT32_MAX)
                for (uint32_t i = 1; i < SC_POSTINGS_BLOCK; i++)
                    if (p->docs[i] <= p->docs[i - 1])
                        return false;
        } else if (kind == SC__BLOCK_RUN) {
            if (last - first != SC_POSTINGS_BLOCK - 1)
                return false;
            for (uint32_t i = 0; i < SC_POSTINGS_BLOCK; i++)
                p->docs[i] = first + i;
        } else if (kind == SC__BLOCK_BITSET) {
            uint64_t span = (uint64_t)last - first + 1;
            uint64_t nb = (span + 63) / 64 * 8;
            if ((uint64_t)(end - q) < nb || !decode_bitset(p, q, span, first) ||
                p->docs[SC_POSTINGS_BLOCK - 1] != last)
                return false;
            q += nb;
        } else {
            return false;
        }
        p->freq_kind = 0;
    } else {
        /* tail: doc gaps, with freqs interleaved in fields that have them (gap * 2 + 1 for
         * freq 1, else gap * 2 then freq - 2), decoded together */
        uint64_t prev = prev_last;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t gap;
            if (sc_varint_get(&q, end, &gap) != SC_OK)
                return false;
            if (p->has_freqs) {
                uint32_t f = 1;
                if (!(gap & 1)) {
                    if (sc_varint_get32(&q, end, &f) != SC_OK || f > UINT32_MAX - 2)
                        return false;
                    f += 2;
                }
                p->freqs[i] = f;
                gap >>= 1;
            }
            uint64_t d = ((prev + 1) & UINT32_MAX) + gap;
            if (d > last || (i > 0 && d <= prev))
                return false;
            p->docs[i] = (uint32_t)d;
            prev = d;
        }
        if (p->skip && p->docs[n - 1] != last)
            return false;
        p->freq_kind = 1;
    }
    p->freq_off = (uint64_t)(q - p->base);
    p->freqs_decoded = p->freq_kind == 1 && p->has_freqs;
    p->n_in_block = n;
    p->block = k;
    p->i = 0;
    p->prev_last = prev_last;
    p->pos_total = UINT32_MAX;
    p->pos_pb = 0;
    p->pos_dec = 0;
    p->pos_seen = 0;
    p->pos_start = p->pos_off + skip_pos_off(p, k);
    p->pos_cursor = p->pos_start;
    return true;
}

uint32_t sc_postings_next(sc_postings *p)
{
    if (p->exhausted)
        return SC_POSTINGS_END;
    if (!p->started)
        return enter_block(p, 0);
    if (p->i + 1 < p->n_in_block) {
        p->doc = p->docs[++p->i];
        return p->doc;
    }
    return enter_block(p, p->block + 1);
}

static inline uint32_t skip2_last(const sc_postings *p, uint32_t g)
{
    return sc__ld32(p->skip2 + (size_t)g * SC__SKIP2_BYTES);
}

/* First block in (lo, hi] whose last doc >= target, given last(lo) < target <= last(hi). */
static uint32_t bsearch_block(const sc_postings *p, uint32_t lo, uint32_t hi, uint32_t target)
{
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (skip_last(p, mid) >= target)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The block search through the second level, for a target past block `from` (last(from) <
 * target). Returns n_blocks + 1 when the second level disagrees with the first (corrupt data:
 * the caller then searches the first level alone), so a bad entry can never skip docs. */
static uint32_t find_block2(const sc_postings *p, uint32_t from, uint32_t target)
{
    uint32_t n = p->n_blocks, G = SC__SKIP2_BLOCKS;
    uint32_t g = from / G, gend = (g + 1) * G < n ? (g + 1) * G - 1 : n - 1;
    if (skip_last(p, gend) >= target)
        return bsearch_block(p, from, gend, target); /* inside the current group */
    /* galloping over the groups after g (group g ends below target) */
    uint32_t lo = g, hi, step = 1;
    for (;;) {
        if ((uint64_t)lo + step >= p->n_skip2) {
            hi = p->n_skip2 - 1;
            if (hi <= lo || skip2_last(p, hi) < target)
                return skip_last(p, n - 1) < target ? n : n + 1;
            break;
        }
        hi = lo + step;
        if (skip2_last(p, hi) >= target)
            break;
        lo = hi;
        step *= 2;
    }
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (skip2_last(p, mid) >= target)
            hi = mid;
        else
            lo = mid;
    }
    /* group hi: its blocks (hi*G, end]; check both boundaries on the first level */
    uint32_t b_lo = hi * G - 1, b_hi = (hi + 1) * G < n ? (hi + 1) * G - 1 : n - 1;
    if (skip_last(p, b_lo) >= target || skip_last(p, b_hi) < target)
        return n + 1;
    return bsearch_block(p, b_lo, b_hi, target);
}

/* First block >= from whose last doc >= target (n_blocks if none). */
static uint32_t find_block(const sc_postings *p, uint32_t from, uint32_t target)
{
    uint32_t n = p->n_blocks;
    if (from >= n || !p->skip || skip_last(p, from) >= target)
        return from;
    /* gallop on the first level: short jumps (the common case in conjunctions) end after a
     * probe or two; once the jump is longer than a group, the second level takes over */
    bool level2 = p->skip2 != NULL;
    uint32_t lo = from, hi, step = 1;
    for (;;) {
        if (level2 && step > SC__SKIP2_BLOCKS) {
            uint32_t k = find_block2(p, lo, target);
            if (k <= n)
                return k;
            level2 = false; /* inconsistent second level: the first alone */
        }
        if ((uint64_t)lo + step >= n) {
            hi = n;
            break;
        }
        hi = lo + step;
        if (skip_last(p, hi) >= target)
            break;
        lo = hi;
        step *= 2;
    }
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (skip_last(p, mid) >= target)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The two shared with postings_bulk.c (postings_impl.h). */
bool sc__postings_decode_block(sc_postings *p, uint32_t k)
{
    return decode_block(p, k);
}

uint32_t sc__postings_find_block(const sc_postings *p, uint32_t from, uint32_t target)
{
    return find_block(p, from, target);
}

uint32_t sc_postings_advance(sc_postings *p, uint32_t target)
{
    if (p->exhausted)
        return SC_POSTINGS_END;
    if (p->started && target <= p->doc)
        return sc_postings_next(p);
    uint32_t i;
    if (!p->started || p->docs[p->n_in_block - 1] < target) {
        uint32_t k = find_block(p, p->started ? p->block + 1 : 0, target);
        if (enter_block(p, k) == SC_POSTINGS_END)
            return SC_POSTINGS_END;
        if (p->docs[p->n_in_block - 1] < target) {
            /* only without a skip table: the block was entered blind */
            p->exhausted = true;
            p->doc = SC_POSTINGS_END;
            return SC_POSTINGS_END;
        }
        i = 0;
    } else {
        i = p->i + 1;
    }
    while (p->docs[i] < target)
        i++;
    p->i = i;
    p->doc = p->docs[i];
    return p->doc;
}

uint32_t sc_postings_freq(sc_postings *p)
{
    if (!p->has_freqs || p->exhausted || !p->started)
        return 1;
    if (!p->freqs_decoded && !decode_freqs(p)) {
        fail(p);
        return 1;
    }
    return p->freqs[p->i];
}

size_t sc_postings_next_batch(sc_postings *p, uint32_t *docs, uint32_t *freqs, size_t max)
{
    size_t n = 0;
    while (n < max) {
        if (sc_postings_next(p) == SC_POSTINGS_END)
            break;
        size_t take = p->n_in_block - p->i;
        if (take > max - n)
            take = max - n;
        memcpy(docs + n, p->docs + p->i, take * sizeof(uint32_t));
        if (freqs) {
            if (!p->has_freqs) {
                for (size_t j = 0; j < take; j++)
                    freqs[n + j] = 1;
            } else {
                if (!p->freqs_decoded && !decode_freqs(p)) {
                    fail(p);
                    return n;
                }
                memcpy(freqs + n, p->freqs + p->i, take * sizeof(uint32_t));
            }
        }
        n += take;
        p->i += (uint32_t)take - 1;
        p->doc = p->docs[p->i];
    }
    return n;
}

size_t sc_postings_take_upto(sc_postings *p, uint32_t upto, uint32_t *docs, uint32_t *freqs,
                             size_t max)
{
    size_t n = 0;
    if (p->exhausted || !p->started)
        return 0;
    while (n < max && p->doc < upto) {
        uint32_t i = p->i, nb = p->n_in_block;
        if (freqs && p->has_freqs && !p->freqs_decoded && !decode_freqs(p)) {
            fail(p);
            return n;
        }
        uint32_t e = i;
        while (e < nb && e - i < max - n && p->docs[e] < upto)
            e++;
        memcpy(docs + n, p->docs + i, (e - i) * sizeof(uint32_t));
        if (freqs) {
            if (p->has_freqs) {
                memcpy(freqs + n, p->freqs + i, (e - i) * sizeof(uint32_t));
            } else {
                for (uint32_t j = i; j < e; j++)
                    freqs[n + j - i] = 1;
            }
        }
        n += e - i;
        p->i = e - 1;
        p->doc = p->docs[e - 1];
        /* stop in this block unless it ran out and the next one may hold docs below upto */
        if (e < nb || n == max || p->docs[nb - 1] + 1 >= upto)
            break;
        sc_postings_next(p);
    }
    return n;
}

/* Whether block k is a run starting right after block k-1's last doc; its last doc in *last. */
static bool block_continues_run(const sc_postings *p, uint32_t k, uint32_t *last)
{
    if (k + 1 == p->n_blocks && p->doc_freq % SC_POSTINGS_BLOCK)
        return false; /* tail blocks are never runs */
    uint64_t start = block_data(p, k);
    if (start + 2 > p->base_len)
        return false;
    const uint8_t *q = p->base + start;
    if ((q[0] >> 6) != SC__BLOCK_RUN || q[1] != 0)
        return false;
    *last = skip_last(p, k);
    return *last - skip_last(p, k - 1) == SC_POSTINGS_BLOCK;
}

uint32_t sc_postings_run_end(sc_postings *p)
{
    if (p->exhausted || !p->started)
        return p->doc == SC_POSTINGS_END ? SC_POSTINGS_END : p->doc + 1;
    uint32_t j = p->i;
    while (j + 1 < p->n_in_block && p->docs[j + 1] == p->docs[j] + 1)
        j++;
    uint32_t end = p->docs[j] + 1;
    if (j + 1 == p->n_in_block) {
        /* the run may continue through following run blocks; look a bounded way ahead */
        for (uint32_t k = p->block + 1, seen = 0; k < p->n_blocks && seen < 256; k++, seen++) {
            uint32_t last;
            if (skip_last(p, k - 1) + 1 != end || !block_continues_run(p, k, &last))
                break;
            end = last + 1;
        }
    }
    return end;
}

/* Positions of a block are groups of 128 deltas (width:u8 + packed), then a tail of pos_total %
 * 128 varint deltas. pos_buf holds inclusive prefix sums (mod 2^32) of one group's deltas, so a
 * doc's positions are differences against the sum before its first delta and a group is
 * decoded once however many docs read from it; the tail's sums are decoded only as far as a
 * doc needs. The first doc read from a packed group takes its few deltas straight from the
 * packed bytes (a sparse reader never unpacks the other 127); the second decodes the group. */

/* Moves pos_cursor to group pb of the current block, hopping over the groups before it by
 * their width bytes (from the start when pb is behind the cursor). */
static bool seek_pos_block(sc_postings *p, uint32_t pb)
{
    if (pb < p->pos_pb) {
        p->pos_pb = 0;
        p->pos_cursor = p->pos_start;
    }
    while (p->pos_pb < pb) {
        if (p->pos_cursor >= p->base_len || p->base[p->pos_cursor] > 32)
            return false;
        p->pos_cursor += 1 + sc_bitpack_bytes(p->base[p->pos_cursor]);
        p->pos_pb++;
    }
    return p->pos_cursor < p->base_len;
}

/* The packed bytes of full group pb (its width in *width), or NULL when out of the file. */
static const uint8_t *packed_pos_block(sc_postings *p, uint32_t pb, unsigned *width)
{
    if (!seek_pos_block(p, pb))
        return NULL;
    const uint8_t *q = p->base + p->pos_cursor, *end = p->base + p->base_len;
    *width = *q++;
    if (*width > 32 || (size_t)(end - q) < sc_bitpack_bytes(*width))
        return NULL;
    return q;
}

/* A varint of the tail: position deltas are mostly one byte, inline; else the full decoder. */
static inline bool pos_varint(const uint8_t **q, const uint8_t *end, uint32_t *v)
{
    if (*q < end && **q < 0x80) {
        *v = *(*q)++;
        return true;
    }
    return sc_varint_get32(q, end, v) == SC_OK;
}

/* Makes entries [0, need) of group pb's prefix sums valid in pos_buf. */
static bool load_pos_block(sc_postings *p, uint32_t pb, uint32_t need)
{
    if (pb < p->pos_total / SC_POSTINGS_BLOCK) {
        if (p->pos_dec == pb + 1)
            return true;
        unsigned width;
        const uint8_t *q = packed_pos_block(p, pb, &width);
        if (!q)
            return false;
        sc_bitpack_unpack_psum(q, width, p->pos_buf);
        p->pos_dec = pb + 1;
        return true;
    }
    /* the tail: varints, decoded on from where the last doc stopped */
    if (p->pos_dec != pb + 1) {
        if (!seek_pos_block(p, pb))
            return false;
        p->pos_tail_n = 0;
        p->pos_tail_off = p->pos_cursor;
        p->pos_dec = pb + 1;
    }
    if (p->pos_tail_n >= need)
        return true;
    const uint8_t *q = p->base + p->pos_tail_off, *end = p->base + p->base_len;
    uint32_t sum = p->pos_tail_n ? p->pos_buf[p->pos_tail_n - 1] : 0;
    for (uint32_t j = p->pos_tail_n; j < need; j++) {
        uint32_t v;
        if (!pos_varint(&q, end, &v)) {
            p->pos_dec = 0;
            return false;
        }
        sum += v;
        p->pos_buf[j] = sum;
    }
    p->pos_tail_n = need;
    p->pos_tail_off = (uint64_t)(q - p->base);
    return true;
}

/* Decodes tail deltas [off, off + n) (the tail is decoded through off) into pos_buf and, as
 * the doc's positions, into out. */
static bool tail_emit(sc_postings *p, uint32_t off, uint32_t n, uint32_t *out)
{
    const uint8_t *q = p->base + p->pos_tail_off, *end = p->base + p->base_len;
    uint32_t sum = off ? p->pos_buf[off - 1] : 0, pos = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v;
        if (!pos_varint(&q, end, &v)) {
            p->pos_dec = 0;
            return false;
        }
        sum += v;
        pos += v;
        p->pos_buf[off + k] = sum;
        out[k] = pos;
    }
    p->pos_tail_n = off + n;
    p->pos_tail_off = (uint64_t)(q - p->base);
    return true;
}

/* On the first positions read in a block: pos_first[j] = freqs[0] + ... + freqs[j-1] (where
 * doc j's deltas start) and pos_total. False when the total does not fit 32 bits. */
static bool sum_pos_first(sc_postings *p)
{
    if (p->pos_start > p->base_len)
        return false;
    uint32_t n = p->n_in_block, acc = 0, j = 0;
    bool small = false; /* every freq summed by the vectors below 2^24: no overflow there */
#ifdef __SSE2__
    /* exclusive prefix sums 8 at a time: the two halves' sums are independent, so the carry
     * chain is one add per 8 freqs */
    __m128i carry = _mm_setzero_si128(), any = _mm_setzero_si128();
    for (; j + 8 <= n; j += 8) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)(p->freqs + j));
        __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p->freqs + j + 4));
        any = _mm_or_si128(any, _mm_or_si128(v0, v1));
        __m128i i0 = _mm_add_epi32(v0, _mm_slli_si128(v0, 4));
        __m128i i1 = _mm_add_epi32(v1, _mm_slli_si128(v1, 4));
        i0 = _mm_add_epi32(i0, _mm_slli_si128(i0, 8));
        i1 = _mm_add_epi32(i1, _mm_slli_si128(i1, 8));
        __m128i t0 = _mm_shuffle_epi32(i0, 0xff), t1 = _mm_shuffle_epi32(i1, 0xff);
        _mm_storeu_si128((__m128i *)(void *)(p->pos_first + j),
                         _mm_add_epi32(carry, _mm_sub_epi32(i0, v0)));
        _mm_storeu_si128((__m128i *)(void *)(p->pos_first + j + 4),
                         _mm_add_epi32(_mm_add_epi32(carry, t0), _mm_sub_epi32(i1, v1)));
        carry = _mm_add_epi32(carry, _mm_add_epi32(t0, t1));
    }
    acc = (uint32_t)_mm_cvtsi128_si32(carry);
    __m128i high = _mm_and_si128(any, _mm_set1_epi32((int)0xff000000u));
    small = _mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) == 0xffff;
#endif
    uint64_t total = acc;
    if (!small) { /* the 32-bit sums may have wrapped: the total in 64 bits */
        total = 0;
        for (uint32_t k = 0; k < j; k++)
            total += p->freqs[k];
    }
    for (; j < n; j++) {
        p->pos_first[j] = acc;
        acc += p->freqs[j];
        total += p->freqs[j];
    }
    if (total >= UINT32_MAX)
        return false;
    p->pos_total = (uint32_t)total;
    return true;
}

size_t sc_postings_positions(sc_postings *p, uint32_t *out, size_t max)
{
    if (!p->has_positions || p->exhausted || !p->started)
        return 0;
    if (!p->freqs_decoded && !decode_freqs(p)) {
        fail(p);
        return 0;
    }
    uint32_t freq = p->freqs[p->i];
    if (p->pos_total == UINT32_MAX && !sum_pos_first(p)) {
        fail(p);
        return 0;
    }
    uint32_t g = p->pos_first[p->i];
    /* the doc's deltas are [g, g + freq) of the block's, in one or more position groups */
    uint32_t left = freq, pos = 0;
    uint32_t pb = g / SC_POSTINGS_BLOCK, off = g % SC_POSTINGS_BLOCK;
    size_t n = 0;
    if (freq <= 16 && max >= 16 && off + freq <= SC_POSTINGS_BLOCK) {
        /* the common short doc inside one group */
        if (p->pos_dec != pb + 1 && p->pos_seen != pb + 1 &&
            pb < p->pos_total / SC_POSTINGS_BLOCK && (pb == 0 || p->pos_dec != pb)) {
            /* first doc read from this packed group (and the group before not decoded: not
             * a dense reader going from group to group): its deltas straight from the bytes */
            unsigned width;
            const uint8_t *q = packed_pos_block(p, pb, &width);
            if (!q) {
                fail(p);
                return 0;
            }
            for (uint32_t k = 0; k < freq; k++) {
                pos += sc_bitpack_get(q, width, off + k);
                out[k] = pos;
            }
            p->pos_seen = pb + 1;
            return freq;
        }
        if (pb == p->pos_total / SC_POSTINGS_BLOCK &&
            (p->pos_dec != pb + 1 || p->pos_tail_n <= off)) {
            /* the tail, not decoded this far: the doc's varints straight into out too (reading
             * back what was just stored would stall on store forwarding) */
            if (!load_pos_block(p, pb, off) || !tail_emit(p, off, freq, out)) {
                fail(p);
                return 0;
            }
            return freq;
        }
        if (!load_pos_block(p, pb, off + freq)) {
            fail(p);
            return 0;
        }
        /* a fixed 16-wide copy (pos_buf has 16 entries of slack; out room for 16) */
        uint32_t adj = 0u - (off ? p->pos_buf[off - 1] : 0);
        const uint32_t *ps = p->pos_buf + off;
        for (size_t k = 0; k < 16; k++)
            out[k] = ps[k] + adj;
        return freq;
    }
    while (left) {
        pb = g / SC_POSTINGS_BLOCK;
        off = g % SC_POSTINGS_BLOCK;
        uint32_t cnt = SC_POSTINGS_BLOCK - off < left ? SC_POSTINGS_BLOCK - off : left;
        if (!load_pos_block(p, pb, off + cnt)) {
            fail(p);
            return 0;
        }
        /* position = pos + (sum through the delta) - (sum before this slice) */
        uint32_t adj = pos - (off ? p->pos_buf[off - 1] : 0);
        const uint32_t *ps = p->pos_buf + off;
        size_t take = max - n < cnt ? max - n : cnt;
        for (size_t k = 0; k < take; k++)
            out[n + k] = ps[k] + adj;
        n += take;
        pos = ps[cnt - 1] + adj;
        g += cnt;
        left -= cnt;
    }
    return n;
}

bool sc_postings_positions_prepare(sc_postings *p)
{
    if (!p->has_positions || p->exhausted || !p->started)
        return false;
    if (!p->freqs_decoded && !decode_freqs(p)) {
        fail(p);
        return false;
    }
    if (p->pos_total == UINT32_MAX && !sum_pos_first(p)) {
        fail(p);
        return false;
    }
    uint32_t g = p->pos_first[p->i], f = p->freqs[p->i];
    uint32_t pb = g / SC_POSTINGS_BLOCK, off = g % SC_POSTINGS_BLOCK;
    if (f > SC_POSTINGS_BLOCK - off)
        return false; /* spans two groups */
    /* the first doc read from a packed group is read sparsely (see sc_postings_positions),
     * unless the group before was decoded (a dense reader, going from group to group) */
    if (pb < p->pos_total / SC_POSTINGS_BLOCK && p->pos_dec != pb + 1 && p->pos_seen != pb + 1 &&
        (pb == 0 || p->pos_dec != pb))
        return false;
    /* the varint tail: whole for a dense reader (it decoded the group before or reads the
     * tail already), else through the doc */
    uint32_t need = off + f;
    if (pb == p->pos_total / SC_POSTINGS_BLOCK && pb > 0 &&
        (p->pos_dec == pb || p->pos_dec == pb + 1))
        need = p->pos_total % SC_POSTINGS_BLOCK;
    if (!load_pos_block(p, pb, need)) {
        fail(p);
        return false;
    }
    return true;
}

/* Bound of the only block of a term without skip table: from its impacts prefix (the last pair
 * has the largest freq, the first the smallest norm); the loosest bound if it is corrupt. */
static sc_postings_impact skipless_impact(const sc_postings *p)
{
    sc_postings_impact im = {1, 0};
    if (!p->has_freqs)
        return im;
    sc_postings_impact pairs[SC_POSTINGS_BLOCK];
    size_t n = sc_postings_shallow_impacts(p, pairs, SC_POSTINGS_BLOCK);
    if (n == 0)
        return (sc_postings_impact){UINT32_MAX, 0};
    im.max_freq = pairs[n - 1].max_freq;
    im.min_norm = pairs[0].min_norm;
    return im;
}

uint32_t sc_postings_advance_shallow(sc_postings *p, uint32_t target)
{
    if (!p->skip) {
        /* one short block (< 128 docs): decode it for its last doc; harmless when the cursor
         * is not positioned yet (next() enters block 0 again) */
        if (p->exhausted && p->block != 0)
            return SC_POSTINGS_END;
        if (p->block != 0 && !decode_block(p, 0)) {
            fail(p);
            return SC_POSTINGS_END;
        }
        uint32_t last = p->docs[p->n_in_block - 1];
        p->shallow = 0;
        return target <= last ? last : SC_POSTINGS_END;
    }
    uint32_t from = p->shallow;
    if (from < p->n_blocks && from > 0 && skip_last(p, from - 1) >= target)
        from = 0; /* a target behind the shallow pointer: search from the start */
    uint32_t k = find_block(p, from, target);
    if (k >= p->n_blocks)
        return SC_POSTINGS_END;
    p->shallow = k;
    return skip_last(p, k);
}

sc_postings_impact sc_postings_shallow_impact(const sc_postings *p)
{
    sc_postings_impact im = {0, 0};
    if (!p->skip)
        return p->n_blocks ? skipless_impact(p) : im;
    if (p->shallow < p->n_blocks) {
        const uint8_t *e = p->skip + (size_t)p->shallow * SC__SKIP_BYTES;
        im.max_freq = sc__ld32(e + 12);
        im.min_norm = e[16];
    }
    return im;
}

static inline void impact_add(sc_postings_impact *im, uint32_t max_freq, uint8_t min_norm)
{
    if (max_freq > im->max_freq)
        im->max_freq = max_freq;
    if (min_norm < im->min_norm)
        im->min_norm = min_norm;
}

sc_postings_impact sc_postings_max_impact_upto(const sc_postings *p, uint32_t upto)
{
    if (!p->skip)
        return p->n_blocks ? skipless_impact(p) : (sc_postings_impact){0, 0};
    sc_postings_impact im = {0, 255};
    uint32_t k = p->shallow < p->n_blocks ? p->shallow : 0;
    while (k < p->n_blocks) {
        uint32_t g = k / SC__SKIP2_BLOCKS;
        if (p->skip2 && k % SC__SKIP2_BLOCKS == 0 && skip2_last(p, g) < upto) {
            const uint8_t *e = p->skip2 + (size_t)g * SC__SKIP2_BYTES;
            impact_add(&im, sc__ld32(e + 4), e[8]);
            k += SC__SKIP2_BLOCKS;
            continue;
        }
        const uint8_t *e = p->skip + (size_t)k * SC__SKIP_BYTES;
        impact_add(&im, sc__ld32(e + 12), e[16]);
        if (sc__ld32(e) >= upto)
            break;
        k++;
    }
    return im;
}

sc_postings_impact sc_postings_term_impact(const sc_postings *p)
{
    sc_postings_impact im = {0, 255};
    if (!p->skip)
        return p->n_blocks ? skipless_impact(p) : (sc_postings_impact){0, 0};
    if (p->skip2) {
        for (uint32_t g = 0; g < p->n_skip2; g++) {
            const uint8_t *e = p->skip2 + (size_t)g * SC__SKIP2_BYTES;
            impact_add(&im, sc__ld32(e + 4), e[8]);
        }
        return im;
    }
    for (uint32_t k = 0; k < p->n_blocks; k++) {
        const uint8_t *e = p->skip + (size_t)k * SC__SKIP_BYTES;
        if (sc__ld32(e + 12) > im.max_freq)
            im.max_freq = sc__ld32(e + 12);
        if (e[16] < im.min_norm)
            im.min_norm = e[16];
    }
    if (p->n_blocks == 0)
        im.min_norm = 0;
    return im;
}

size_t sc_postings_shallow_impacts(const sc_postings *p, sc_postings_impact *out, size_t max)
{
    if (p->shallow >= p->n_blocks || !p->has_freqs || max == 0)
        return 0;
    uint64_t start = p->blocks_off + skip_block_off(p, p->shallow);
    if (start >= p->base_len)
        return 0;
    const uint8_t *q = p->base + start, *end = p->base + p->base_len;
    uint64_t len;
    if (sc_varint_get(&q, end, &len) != SC_OK || len >= (uint64_t)(end - q))
        return 0;
    end = q + len;
    size_t n = 0;
    uint64_t freq = 0;
    unsigned norm = 0;
    while (q < end) {
        uint64_t d;
        if (n == max || sc_varint_get(&q, end, &d) != SC_OK || q >= end)
            return 0;
        freq += d + 1;
        norm += *q++;
        if (freq > UINT32_MAX || norm > 255)
            return 0;
        out[n].max_freq = (uint32_t)freq;
        out[n].min_norm = (uint8_t)norm;
        n++;
    }
    return n;
}
