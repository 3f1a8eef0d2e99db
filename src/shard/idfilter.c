/* A segment's `_id` membership filter (internal.h, sc__idfilter) and the lookup of an _id in a
 * segment's `_id` terms behind it (sc__slot_find): a blocked bloom filter of 512-bit blocks
 * (one cache line), 7 bits a key inside one block, about 10 bits a key, built from the
 * segment's `_id` term dictionary in one sequential pass. A filter never says "absent" for a
 * term of the segment: a false "absent" would lose an id's versions and duplicate its doc. */
#include <string.h>

#include "base/hashmap.h"
#include "index/postings.h"
#include "index/terms.h"
#include "shard/internal.h"

SC_ALLOC_POOL_DEFINE(sc_pool_shard_idfilter, "shard.idfilter");

/* Bits a key: ~1 % false "present" with 7 bits a key in 512-bit blocks (the blocks' uneven
 * load costs a little over a plain bloom filter's 0.8 %). */
#define BITS_PER_KEY 10
#define BLOCK_WORDS 8
#define K 7

/* The block of a key: the hash's high 32 bits as a fraction of 2^32 times n_blocks. */
static size_t block_of(uint64_t hash, uint32_t n_blocks)
{
    return (size_t)(((hash >> 32) * (uint64_t)n_blocks) >> 32);
}

/* The K bit positions in the block: 9 bits each from the hash's low 32 bits and a remix. */
static void bits_of(uint64_t hash, uint16_t out[K])
{
    uint64_t h = hash * 0x9E3779B97F4A7C15ull ^ (hash >> 29);
    for (int i = 0; i < K; i++)
        out[i] = (uint16_t)((h >> (9 * i)) & 511);
}

static void add_hash(sc__idfilter *f, uint64_t hash)
{
    uint64_t *b = f->words + block_of(hash, f->n_blocks) * BLOCK_WORDS;
    uint16_t bits[K];
    bits_of(hash, bits);
    for (int i = 0; i < K; i++)
        b[bits[i] >> 6] |= 1ull << (bits[i] & 63);
}

bool sc__idfilter_maybe(const sc__idfilter *f, uint64_t hash)
{
    if (!f->n_blocks)
        return false;
    const uint64_t *b = f->words + block_of(hash, f->n_blocks) * BLOCK_WORDS;
    uint16_t bits[K];
    bits_of(hash, bits);
    for (int i = 0; i < K; i++)
        if (!(b[bits[i] >> 6] >> (bits[i] & 63) & 1))
            return false;
    return true;
}

void sc__idfilter_fini(sc__idfilter *f)
{
    sc_alloc_free(&sc_pool_shard_idfilter, f->words);
    memset(f, 0, sizeof *f);
}

size_t sc__idfilter_bytes(const sc__idfilter *f)
{
    return (size_t)f->n_blocks * BLOCK_WORDS * 8;
}

sc_status sc__idfilter_build(const sc_segment *seg, sc__idfilter *out)
{
    memset(out, 0, sizeof *out);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("_id"));
    if (!fi || !fi->n_terms)
        return SC_OK; /* no ids: every lookup misses, rightly */
    uint64_t n_blocks = (fi->n_terms * BITS_PER_KEY + 511) / 512;
    if (n_blocks > UINT32_MAX)
        return SC_ELIMIT;
    sc__idfilter f = {sc_alloc_calloc(&sc_pool_shard_idfilter, (size_t)n_blocks, BLOCK_WORDS * 8),
                      (uint32_t)n_blocks};
    if (!f.words)
        return SC_ENOMEM;
    sc_terms_iter it;
    sc_status st = sc_terms_iter_init(&it, seg, fi);
    uint64_t n = 0;
    for (bool has = true; st == SC_OK;) {
        st = sc_terms_next(&it, &has);
        if (st != SC_OK || !has)
            break;
        add_hash(&f, sc_hashmap_hash(sc_terms_term(&it)));
        n++;
    }
    sc_terms_iter_fini(&it);
    if (st == SC_OK && n != fi->n_terms)
        st = SC_ECORRUPT;
    if (st != SC_OK) {
        sc__idfilter_fini(&f);
        return st;
    }
    *out = f;
    return SC_OK;
}

sc_status sc__slot_filter(sc__slot *sl)
{
    if (sl->filter_state == 1)
        return SC_OK;
    sc_status st = sc__idfilter_build(sl->seg, &sl->filter);
    if (st == SC_OK)
        sl->filter_state = 1;
    return st;
}

sc_status sc__slot_find(sc__slot *sl, sc_slice id, uint64_t hash, uint32_t *doc, bool *found)
{
    *found = false;
    SC_TRY(sc__slot_filter(sl));
    if (!sc__idfilter_maybe(&sl->filter, hash))
        return SC_OK;
    const sc_field_info *fi = sc_segment_field(sl->seg, sc_slice_cstr("_id"));
    sc_term_info ti;
    bool has;
    if (!fi)
        return SC_OK;
    SC_TRY(sc_terms_lookup(sl->seg, fi, id, &ti, &has));
    if (!has)
        return SC_OK;
    /* an id indexed twice before a refresh, or overwritten before a merge, has deleted docs
     * under the same term: the live one is the id's (at most one is); a doc's nested children
     * carry its `_id` term too and are not it */
    const sc_bitset *roots = sc_segment_parents(sl->seg);
    sc_postings p;
    sc_postings_init(&p);
    SC_TRY(sc_postings_reset(&p, sl->seg, fi, &ti, 0));
    for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END; d = sc_postings_next(&p)) {
        if (d >= sl->n_docs)
            return SC_ECORRUPT;
        if (roots && !sc_bitset_test(roots, d))
            continue;
        if (!sl->pending.words || sc_bitset_test(&sl->pending, d)) {
            *doc = d;
            *found = true;
            return SC_OK;
        }
    }
    return p.status;
}

sc_status sc__segments_find(sc_shard *s, sc_slice id, uint64_t hash, sc__slot **slot, uint32_t *doc,
                            bool *found)
{
    *found = false;
    for (size_t i = s->slots.len; i-- > 0;) {
        sc__slot *sl = s->slots.ptr[i];
        SC_TRY(sc__slot_find(sl, id, hash, doc, found));
        if (*found) {
            *slot = sl;
            return SC_OK;
        }
    }
    return SC_OK;
}
