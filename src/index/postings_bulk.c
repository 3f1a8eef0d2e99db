/* Bulk paths of the postings cursor (postings.h): into_bitset (runs as ranges, bitset blocks as
 * shifted words, dense docs through a byte map) and sc_postings_filter, a conjunction's probe
 * (bitset blocks answered from their bits, decoded blocks searched branch-free or mapped). The
 * cursor itself, decoding and skipping are in postings.c. Same validation as the decoders:
 * corrupt input ends iteration with SC_ECORRUPT, never a read outside the block. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "index/bitpack.h"
#include "index/postings_impl.h"

/* Docs spanning at most DENSE_SPAN ids are set through a byte map: a plain byte store per
 * doc, then 16 bytes become 16 bits per movemask. An OR into the word per doc made each doc of
 * a dense block wait for the previous one's store (the same word); and_high_high counts spent
 * a quarter of their time there. */
#define DENSE_SPAN 2048

#ifdef __SSE2__
static void set_docs_dense(const uint32_t *docs, uint32_t from, uint32_t to, sc_bitset *bs,
                           uint32_t base)
{
    _Alignas(16) uint8_t map[DENSE_SPAN + 128];
    uint32_t lo = (docs[from] - base) & ~63u;
    size_t n_words = ((size_t)docs[to - 1] - base - lo) / 64 + 1;
    memset(map, 0, n_words * 64);
    for (uint32_t i = from; i < to; i++)
        map[docs[i] - base - lo] = 0x80;
    uint64_t *words = bs->words + (lo >> 6);
    for (size_t w = 0; w < n_words; w++) {
        const __m128i *m = (const __m128i *)(map + w * 64);
        uint64_t bits = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_load_si128(m)) |
                        (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_load_si128(m + 1)) << 16 |
                        (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_load_si128(m + 2)) << 32 |
                        (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_load_si128(m + 3)) << 48;
        words[w] |= bits;
    }
}
#endif

static inline void set_docs(const uint32_t *docs, uint32_t from, uint32_t to, sc_bitset *bs,
                            uint32_t base)
{
    uint64_t *words = bs->words;
    if (docs[to - 1] - docs[from] == to - 1 - from) {
        sc_bitset_set_range(bs, docs[from] - base, (size_t)docs[to - 1] - base + 1);
        return;
    }
#ifdef __SSE2__
    /* at 1 doc in 8 or more (below, the per-word stores seldom wait on each other and the
     * map's zeroing and packing cost more: prefix3 / regex counts 0.88x at 1 in 60) */
    uint32_t span = docs[to - 1] - docs[from];
    if (to - from >= 32 && span < DENSE_SPAN - 64 && span <= 8 * (to - from)) {
        set_docs_dense(docs, from, to, bs, base);
        return;
    }
#endif
    for (uint32_t i = from; i < to; i++) {
        uint32_t d = docs[i] - base;
        words[d >> 6] |= UINT64_C(1) << (d & 63);
    }
}

/* Adds every doc of full block k (k >= 1, entirely below the caller's upto) to the bitset
 * without decoding it into docs[] when it is a run (one range) or a bitset (shifted word ORs);
 * packed and tail blocks are decoded. Same validation as decode_block. */
static bool bulk_block(sc_postings *p, uint32_t k, sc_bitset *bs, uint32_t base)
{
    uint32_t last = skip_last(p, k), prev_last = skip_last(p, k - 1);
    bool full = k + 1 < p->n_blocks || p->doc_freq % SC_POSTINGS_BLOCK == 0;
    uint64_t start = block_data(p, k);
    if (full && last > prev_last && last < p->n_docs_seg && start + 2 <= p->base_len) {
        const uint8_t *q = p->base + start, *end = p->base + p->base_len;
        unsigned kind = q[0] >> 6;
        q++;
        uint64_t gap;
        if (kind != SC__BLOCK_PACKED) {
            if (varint(&q, end, &gap) != SC_OK || (uint64_t)prev_last + 1 + gap > last)
                return false;
            uint32_t first = prev_last + 1 + (uint32_t)gap;
            if (first < base)
                return false;
            if (kind == SC__BLOCK_RUN) {
                if (last - first != SC_POSTINGS_BLOCK - 1)
                    return false;
                sc_bitset_set_range(bs, first - base, (size_t)last - base + 1);
                return true;
            }
            if (kind == SC__BLOCK_BITSET) {
                uint64_t span = (uint64_t)last - first + 1, n_words = (span + 63) / 64;
                if ((uint64_t)(end - q) < n_words * 8)
                    return false;
                unsigned sh = (first - base) & 63, pop = 0;
                size_t wi = (first - base) >> 6;
                for (uint64_t j = 0; j < n_words; j++) {
                    uint64_t w = sc__ld64(q + 8 * j);
                    if (j == n_words - 1 && span % 64 && (w >> (span % 64)))
                        return false;
                    pop += (unsigned)__builtin_popcountll(w);
                    bs->words[wi + j] |= w << sh;
                    if (sh && (w >> (64 - sh)))
                        bs->words[wi + j + 1] |= w >> (64 - sh);
                }
                /* first and last set; 128 bits */
                return pop == SC_POSTINGS_BLOCK && (q[0] & 1) &&
                       ((sc__ld64(q + 8 * ((span - 1) / 64)) >> ((span - 1) % 64)) & 1);
            }
            return false;
        }
    }
    if (!sc__postings_decode_block(p, k))
        return false;
    if (p->docs[0] < base)
        return false;
    set_docs(p->docs, 0, p->n_in_block, bs, base);
    return true;
}

void sc_postings_into_bitset(sc_postings *p, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    if (!p->started && sc_postings_next(p) == SC_POSTINGS_END)
        return;
    while (!p->exhausted && p->doc < upto) {
        uint32_t i = p->i, n = p->n_in_block;
        if (p->docs[i] < base) {
            fail(p); /* caller contract broken: never write below the window */
            return;
        }
        if (p->docs[n - 1] >= upto) {
            uint32_t j = i;
            while (p->docs[j] < upto)
                j++;
            set_docs(p->docs, i, j, bs, base);
            p->i = j;
            p->doc = p->docs[j];
            return;
        }
        set_docs(p->docs, i, n, bs, base);
        /* whole blocks below upto go straight from the file into the set */
        uint32_t k = p->block + 1;
        for (; k < p->n_blocks && skip_last(p, k) < upto; k++) {
            if (!bulk_block(p, k, bs, base)) {
                fail(p);
                return;
            }
        }
        enter_block(p, k);
    }
}

/* If full block k is a bitset block, tests the candidates cand[*i..] up to its last doc
 * against its bits (no decoding into docs[]), appending the indices of the members to
 * keep[*m..] (and their frequencies to freqs[*m..] when freqs is non-NULL: the rank of the
 * doc's bit indexes the block's unpacked freqs), and returns true; *i then indexes the first
 * candidate past the block. False for other kinds or a block that fails the checks (the
 * caller then decodes it, which validates it fully). Candidates are >= block k-1's last doc + 1
 * (the caller found k by them). */
static bool probe_bitset_block(const sc_postings *p, uint32_t k, const uint32_t *cand, size_t n,
                               size_t *i, uint32_t *keep, uint32_t *freqs, size_t *m)
{
    if (k == 0 || (k + 1 == p->n_blocks && p->doc_freq % SC_POSTINGS_BLOCK))
        return false;
    uint32_t last = skip_last(p, k), prev_last = skip_last(p, k - 1);
    uint64_t start = block_data(p, k);
    if (last <= prev_last || last >= p->n_docs_seg || start + 2 > p->base_len)
        return false;
    const uint8_t *q = p->base + start, *end = p->base + p->base_len;
    if ((q[0] >> 6) != SC__BLOCK_BITSET)
        return false;
    q++;
    uint64_t gap;
    if (varint(&q, end, &gap) != SC_OK || (uint64_t)prev_last + 1 + gap > last)
        return false;
    uint32_t first = prev_last + 1 + (uint32_t)gap;
    uint64_t span = (uint64_t)last - first + 1, n_words = (span + 63) / 64;
    if ((uint64_t)(end - q) < n_words * 8)
        return false;
    /* the first and last bits must be set; membership alone does not count all 128 (3-8% of
     * and_high_* counts): a wrong count there can only miscount a file that passed its
     * checksum at open, never read outside the block */
    if (!(q[0] & 1) || !((q[(span - 1) >> 3] >> ((span - 1) & 7)) & 1))
        return false;
    size_t j = *i, mm = *m;
    if (!freqs) {
        for (; j < n && cand[j] <= last; j++) {
            uint32_t off = cand[j] - first; /* below first: wraps past span, not a member */
            keep[mm] = (uint32_t)j;
            mm += off < span && ((q[off >> 3] >> (off & 7)) & 1);
        }
        *i = j;
        *m = mm;
        return true;
    }
    /* ranks: bits before each word (a packed block is at most 512 bytes, so a bitset block
     * smaller than it spans at most 4,096 docs); all 128 counted as the decoder does, so a
     * rank always indexes the block's freqs */
    uint32_t before[65], fr[SC_POSTINGS_BLOCK];
    if (n_words > 64)
        return false;
    before[0] = 0;
    for (uint64_t w = 0; w < n_words; w++)
        before[w + 1] = before[w] + popcount64(sc__ld64(q + 8 * w));
    if (before[n_words] != SC_POSTINGS_BLOCK ||
        (span % 64 && (sc__ld64(q + 8 * (n_words - 1)) >> (span % 64))))
        return false;
    if (p->has_freqs) {
        const uint8_t *f = q + n_words * 8;
        if (f >= end || *f > 32 || (size_t)(end - f - 1) < sc_bitpack_bytes(*f))
            return false;
        sc_bitpack_unpack(f + 1, *f, fr);
    } else {
        memset(fr, 0, sizeof fr); /* freq 1 */
    }
    for (; j < n && cand[j] <= last; j++) {
        uint32_t off = cand[j] - first;
        uint32_t in = off < span ? off : 0;
        uint64_t word = sc__ld64(q + 8 * (in >> 6));
        uint64_t below = word & ((UINT64_C(1) << (in & 63)) - 1);
        keep[mm] = (uint32_t)j;
        freqs[mm] = fr[(before[in >> 6] + popcount64(below)) & (SC_POSTINGS_BLOCK - 1)] + 1;
        mm += off < span && ((word >> (in & 63)) & 1);
    }
    *i = j;
    *m = mm;
    return true;
}

/* Index of the first of docs[lo..hi) that is >= c (docs[hi - 1] >= c): branch-free. */
static inline uint32_t lower_bound(const uint32_t *docs, uint32_t lo, uint32_t hi, uint32_t c)
{
    const uint32_t *b = docs + lo;
    uint32_t len = hi - lo;
    while (len > 1) {
        uint32_t half = len / 2;
        b += (size_t)(b[half - 1] < c) * half; /* arithmetic, not a branch (gcc made one) */
        len -= half;
    }
    return (uint32_t)(b - docs);
}

/* Largest doc span of a block that sc_postings_filter maps into bytes (stack bytes). */
#define MAP_SPAN 4096

/* lower_bound over a full block: a constant trip count, unrolled */
static inline uint32_t lower_bound_128(const uint32_t *docs, uint32_t c)
{
    const uint32_t *b = docs;
    for (uint32_t half = SC_POSTINGS_BLOCK / 2; half >= 1; half /= 2)
        b += (size_t)(b[half - 1] < c) * half;
    return (uint32_t)(b - docs);
}

/* Aligned to 64 bytes: a 32-byte shift of this function (an unrelated edit above it) made
 * and_high_* TOP_10_COUNT 10% slower, through where its inner loops fell in the fetch blocks. */
__attribute__((aligned(64))) size_t sc_postings_filter(sc_postings *p, const uint32_t *cand,
                                                       size_t n, uint32_t *keep, uint32_t *freqs,
                                                       bool only_filter)
{
    size_t m = 0, i = 0;
    uint32_t kfloor = p->filter_floor; /* blocks below were answered from their bits */
    while (i < n && !p->exhausted) {
        uint32_t c = cand[i];
        if (!p->started || p->docs[p->n_in_block - 1] < c) {
            uint32_t from = p->started ? p->block + 1 : 0;
            uint32_t k = sc__postings_find_block(p, from > kfloor ? from : kfloor, c);
            if (k >= p->n_blocks) {
                p->exhausted = true;
                p->doc = SC_POSTINGS_END;
                break;
            }
            /* a bitset block answers from its bits, unless the last candidate is in it or
             * past it and the cursor must end on a decoded block (the decode was 15% of
             * and_high_low counts on dense bitset terms) */
            if (p->skip && (only_filter || cand[n - 1] > skip_last(p, k)) &&
                probe_bitset_block(p, k, cand, n, &i, keep, freqs, &m)) {
                /* later candidates are past block k, but the next call's may still be in
                 * it when this call's last one was */
                kfloor = i < n ? k + 1 : k;
                continue;
            }
            if (enter_block(p, k) == SC_POSTINGS_END)
                break;
            if (p->docs[p->n_in_block - 1] < c) {
                /* only without a skip table: the block was entered blind */
                p->exhausted = true;
                p->doc = SC_POSTINGS_END;
                break;
            }
        }
        /* the candidates up to the block's last doc, against docs[p->i..] */
        uint32_t nb = p->n_in_block, last = p->docs[nb - 1], j = p->i;
        if (freqs && p->has_freqs && !p->freqs_decoded && !decode_freqs(p)) {
            fail(p);
            return 0;
        }
        const uint32_t *docs = p->docs;
        uint32_t span = last - docs[0] + 1;
        size_t need = (span / 32 + SC_POSTINGS_BLOCK) / 11 + 1; /* candidates for the map */
        if (span <= MAP_SPAN && i + need <= n && cand[i + need - 1] <= last) {
            size_t n_in = need; /* candidates in this block */
            while (i + n_in < n && cand[i + n_in] <= last)
                n_in++;
            /* many candidates: a byte map of the block's docs (index + 1 by offset), one
             * load per candidate (per-candidate searches cost ~12 cycles each; and_high_high
             * TOP_10_COUNT, similar frequencies, spent 40% there) */
            uint8_t map[MAP_SPAN];
            memset(map, 0, span);
            for (uint32_t k = 0; k < nb; k++)
                map[docs[k] - docs[0]] = (uint8_t)(k + 1);
            for (size_t e = i + n_in; i < e; i++) {
                uint32_t off = cand[i] - docs[0]; /* below the block: wraps past span */
                uint32_t idx = off < span ? map[off] : 0;
                keep[m] = (uint32_t)i;
                if (freqs)
                    freqs[m] = p->has_freqs ? p->freqs[(idx - 1) & (SC_POSTINGS_BLOCK - 1)] : 1;
                m += idx != 0;
            }
            c = cand[i - 1];
            j = nb == SC_POSTINGS_BLOCK ? lower_bound_128(docs, c) : lower_bound(docs, 0, nb, c);
            p->i = j;
            p->doc = p->docs[j];
            continue;
        }
        /* each candidate searches the whole block on its own: the searches do not depend
         * on each other, so the CPU overlaps them (chained from the previous candidate's
         * position, each waited for the last: 1.5x slower on and_high_low) */
        for (; i < n && cand[i] <= last; i++) {
            c = cand[i];
            j = nb == SC_POSTINGS_BLOCK ? lower_bound_128(docs, c) : lower_bound(docs, 0, nb, c);
            /* no branch on membership either (about half the candidates match) */
            keep[m] = (uint32_t)i;
            if (freqs)
                freqs[m] = p->has_freqs ? p->freqs[j] : 1;
            m += docs[j] == c;
        }
        p->i = j;
        p->doc = p->docs[j];
    }
    p->filter_floor = kfloor;
    return p->status == SC_OK ? m : 0;
}
