/* Streaming postings and term dictionary encoders (postenc.h): a term's docs are buffered one
 * 128-doc block at a time; each full block is encoded as soon as it fills, the positions are
 * packed 128 deltas at a time as they arrive, and the skip entries collected per block are
 * completed (second level, or dropped for a one-block term) at the end. */
#include "index/postenc.h"

#include <string.h>

#include "base/varint.h"
#include "index/bitpack.h"

void sc__postenc_init(sc__postenc *e)
{
    memset(e, 0, sizeof(*e));
}

void sc__postenc_fini(sc__postenc *e)
{
    sc_vec_free(&e->skip);
    sc_vec_free(&e->blk);
    sc_vec_free(&e->pos);
}

void sc__postenc_begin(sc__postenc *e, bool freqs, bool with_pos, bool norms,
                       const uint8_t *norm, size_t norm_len)
{
    e->freqs = freqs;
    e->with_pos = freqs && with_pos;
    e->norms = freqs && norms;
    e->norm = norm;
    e->norm_len = norm_len;
    sc_vec_clear(&e->skip);
    sc_vec_clear(&e->blk);
    sc_vec_clear(&e->pos);
    e->n = e->pend = 0;
    e->pos_off = 0;
    e->blk_base = e->pos_base = 0;
    e->prev_last = UINT32_MAX; /* "-1": the first gap is then the doc itself */
    e->df = 0;
    e->ttf = 0;
    e->st = SC_OK;
}

static uint8_t norm_of(const sc__postenc *e, uint32_t doc)
{
    return e->norms && doc < e->norm_len ? e->norm[doc] : 0;
}

/* Appends the block's competitive impacts: the pareto frontier of its (freq, norm) pairs (a
 * pair is dominated by one with freq >= and norm <=; smaller norm byte = shorter doc = higher
 * score), ascending in both, as imp_len:varint then per pair freq delta:varint (from the
 * previous freq + 1, the first from 1) and norm delta:u8 (the first absolute). */
static void encode_impacts(sc__postenc *e)
{
    uint32_t best[256] = {0};
    for (uint32_t i = 0; i < e->n; i++) {
        uint8_t nb = norm_of(e, e->docs[i]);
        if (e->fr[i] > best[nb])
            best[nb] = e->fr[i];
    }
    uint8_t tmp[SC_POSTINGS_BLOCK * 6], *t = tmp;
    uint32_t prev_freq = 0;
    unsigned prev_norm = 0;
    for (unsigned nb = 0; nb < 256; nb++) {
        if (best[nb] <= prev_freq)
            continue; /* dominated by a shorter doc with at least this freq */
        uint32_t d = best[nb] - prev_freq - 1;
        t += sc_varint_put(t, d);
        *t++ = (uint8_t)(nb - prev_norm);
        prev_freq = best[nb];
        prev_norm = nb;
    }
    sc__buf_varint(&e->blk, (uint64_t)(t - tmp), &e->st);
    sc__buf_put(&e->blk, tmp, (size_t)(t - tmp), &e->st);
}

static void encode_full_docs(sc__postenc *e, uint32_t first_gap)
{
    const uint32_t *docs = e->docs;
    uint32_t n = e->n, vals[SC_POSTINGS_BLOCK];
    uint8_t packed[16 * 32];
    uint32_t last = docs[n - 1];
    if (last - docs[0] == SC_POSTINGS_BLOCK - 1) {
        sc__buf_u8(&e->blk, SC__BLOCK_RUN << 6, &e->st);
        sc__buf_varint(&e->blk, first_gap, &e->st);
        return;
    }
    vals[0] = 0;
    for (uint32_t i = 1; i < n; i++)
        vals[i] = docs[i] - docs[i - 1] - 1;
    unsigned width = sc_bitpack_width(vals, n);
    uint64_t span = (uint64_t)last - docs[0] + 1;
    uint64_t bitset_bytes = (span + 63) / 64 * 8;
    if (bitset_bytes < sc_bitpack_bytes(width)) {
        sc__buf_u8(&e->blk, SC__BLOCK_BITSET << 6, &e->st);
        sc__buf_varint(&e->blk, first_gap, &e->st);
        uint64_t words[64] = {0};
        for (uint32_t i = 0; i < n; i++) {
            uint32_t o = docs[i] - docs[0];
            words[o / 64] |= UINT64_C(1) << (o % 64);
        }
        sc__buf_put(&e->blk, words, (size_t)bitset_bytes, &e->st);
    } else {
        sc__buf_u8(&e->blk, (uint8_t)((SC__BLOCK_PACKED << 6) | width), &e->st);
        sc__buf_varint(&e->blk, first_gap, &e->st);
        sc_bitpack_pack(vals, width, packed);
        sc__buf_put(&e->blk, packed, sc_bitpack_bytes(width), &e->st);
    }
}

/* Encodes the pending docs as one block (full when 128, else the tail) and its skip entry. */
static void encode_block(sc__postenc *e)
{
    uint32_t n = e->n;
    uint64_t block_off = e->blk_base + e->blk.len;
    if (block_off > UINT32_MAX || e->pos_off > UINT32_MAX) {
        e->st = SC_ELIMIT;
        return;
    }
    uint32_t max_freq = 0;
    uint8_t min_norm = 255;
    for (uint32_t i = 0; i < n; i++) {
        if (e->fr[i] > max_freq)
            max_freq = e->fr[i];
        uint8_t nb = norm_of(e, e->docs[i]);
        if (nb < min_norm)
            min_norm = nb;
    }
    if (e->freqs)
        encode_impacts(e);
    uint32_t first_gap = e->docs[0] - (e->prev_last + 1);
    uint32_t last = e->docs[n - 1];
    if (n == SC_POSTINGS_BLOCK) {
        encode_full_docs(e, first_gap);
        if (e->freqs) {
            uint32_t vals[SC_POSTINGS_BLOCK];
            uint8_t packed[16 * 32];
            for (uint32_t i = 0; i < n; i++)
                vals[i] = e->fr[i] - 1;
            unsigned fw = sc_bitpack_width(vals, n);
            sc__buf_u8(&e->blk, (uint8_t)fw, &e->st);
            sc_bitpack_pack(vals, fw, packed);
            sc__buf_put(&e->blk, packed, sc_bitpack_bytes(fw), &e->st);
        }
    } else {
        /* tail: the freq folds into the doc gap's low bit when it is 1 (the common case in
         * short postings), else follows it */
        uint32_t prev = e->prev_last;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t gap = e->docs[i] - prev - 1;
            if (!e->freqs) {
                sc__buf_varint(&e->blk, gap, &e->st);
            } else if (e->fr[i] == 1) {
                sc__buf_varint(&e->blk, gap * 2 + 1, &e->st);
            } else {
                sc__buf_varint(&e->blk, gap * 2, &e->st);
                sc__buf_varint(&e->blk, e->fr[i] - 2, &e->st);
            }
            prev = e->docs[i];
        }
    }
    /* the block's position deltas left over from the 128-at-a-time packing, as varints */
    for (uint32_t j = 0; j < e->pend; j++)
        sc__buf_varint(&e->pos, e->pvals[j], &e->st);
    e->pend = 0;
    uint8_t s[SC__SKIP_BYTES] = {0};
    sc__st32(s, last);
    sc__st32(s + 4, (uint32_t)block_off);
    sc__st32(s + 8, (uint32_t)e->pos_off);
    sc__st32(s + 12, max_freq);
    s[16] = e->norms ? min_norm : 0;
    sc__buf_put(&e->skip, s, sizeof(s), &e->st);
    e->prev_last = last;
    e->n = 0;
}

void sc__postenc_add(sc__postenc *e, uint32_t doc, uint32_t freq, const uint32_t *positions)
{
    if (e->n == 0)
        e->pos_off = e->pos_base + e->pos.len;
    e->docs[e->n] = doc;
    e->fr[e->n] = freq;
    e->n++;
    e->df++;
    e->ttf += freq;
    if (e->with_pos) {
        uint32_t p = 0;
        for (uint32_t j = 0; j < freq; j++) {
            e->pvals[e->pend++] = positions[j] - p;
            p = positions[j];
            if (e->pend == SC_POSTINGS_BLOCK) {
                uint8_t packed[16 * 32];
                unsigned pw = sc_bitpack_width(e->pvals, SC_POSTINGS_BLOCK);
                sc__buf_u8(&e->pos, (uint8_t)pw, &e->st);
                sc_bitpack_pack(e->pvals, pw, packed);
                sc__buf_put(&e->pos, packed, sc_bitpack_bytes(pw), &e->st);
                e->pend = 0;
            }
        }
    }
    if (e->n == SC_POSTINGS_BLOCK)
        encode_block(e);
}

void sc__postenc_finish(sc__postenc *e)
{
    if (e->n)
        encode_block(e);
    uint32_t n_blocks = (uint32_t)(e->skip.len / SC__SKIP_BYTES);
    uint32_t n_skip = sc__skip_entries(e->df, n_blocks), n_skip2 = sc__skip2_entries(n_skip);
    if (n_skip == 0) {
        sc_vec_clear(&e->skip);
        return;
    }
    /* the second level: per 32 blocks the last doc, max freq and min norm */
    for (uint32_t g = 0; g < n_skip2 && e->st == SC_OK; g++) {
        uint32_t k0 = g * SC__SKIP2_BLOCKS, k1 = k0 + SC__SKIP2_BLOCKS;
        if (k1 > n_blocks)
            k1 = n_blocks;
        uint32_t max_freq = 0;
        uint8_t min_norm = 255;
        for (uint32_t k = k0; k < k1; k++) {
            const uint8_t *s = e->skip.ptr + (size_t)k * SC__SKIP_BYTES;
            if (sc__ld32(s + 12) > max_freq)
                max_freq = sc__ld32(s + 12);
            if (s[16] < min_norm)
                min_norm = s[16];
        }
        uint8_t s2[SC__SKIP2_BYTES] = {0};
        sc__st32(s2, sc__ld32(e->skip.ptr + (size_t)(k1 - 1) * SC__SKIP_BYTES));
        sc__st32(s2 + 4, max_freq);
        s2[8] = min_norm;
        sc__buf_put(&e->skip, s2, sizeof(s2), &e->st);
    }
}

void sc__termdict_init(sc__termdict *t)
{
    memset(t, 0, sizeof(*t));
}

void sc__termdict_fini(sc__termdict *t)
{
    sc_vec_free(&t->tindex);
    sc_vec_free(&t->tdata);
    sc_vec_free(&t->prev);
}

void sc__termdict_begin(sc__termdict *t, bool freqs, bool with_pos)
{
    t->freqs = freqs;
    t->with_pos = freqs && with_pos;
    sc_vec_clear(&t->tindex);
    sc_vec_clear(&t->tdata);
    sc_vec_clear(&t->prev);
    t->count = t->prev_post = t->prev_pos = 0;
    t->tdata_base = 0;
    t->st = SC_OK;
}

void sc__termdict_add(sc__termdict *t, sc_slice term, uint32_t df, uint64_t ttf,
                      uint64_t post_off, uint64_t pos_off)
{
    bool first = t->count % SC__TERMS_PER_BLOCK == 0;
    if (first) {
        uint64_t at = t->tdata_base + t->tdata.len;
        if (at > UINT32_MAX) {
            t->st = SC_ELIMIT;
            return;
        }
        sc__buf_u32(&t->tindex, (uint32_t)at, &t->st);
    }
    /* front coding against the previous term of the same block */
    size_t prefix = 0;
    if (!first) {
        size_t m = t->prev.len < term.len ? t->prev.len : term.len;
        while (prefix < m && t->prev.ptr[prefix] == term.ptr[prefix])
            prefix++;
    }
    sc__buf_varint(&t->tdata, prefix, &t->st);
    sc__buf_varint(&t->tdata, term.len - prefix, &t->st);
    sc__buf_put(&t->tdata, term.ptr + prefix, term.len - prefix, &t->st);
    sc__buf_varint(&t->tdata, df, &t->st);
    if (t->freqs)
        sc__buf_varint(&t->tdata, ttf - df, &t->st);
    sc__buf_varint(&t->tdata, first ? post_off : post_off - t->prev_post, &t->st);
    if (t->with_pos)
        sc__buf_varint(&t->tdata, first ? pos_off : pos_off - t->prev_pos, &t->st);
    sc_vec_clear(&t->prev);
    sc__buf_put(&t->prev, term.ptr, term.len, &t->st);
    t->prev_post = post_off;
    t->prev_pos = pos_off;
    t->count++;
}
