/* Term dictionary reader (terms.h): front-coded blocks of 32 terms, a u32 block index that is
 * binary searched on each block's first (whole) term, and automaton intersection that seeks
 * past every range of terms whose prefix the DFA rejects. All reads are bounds-checked. */
#include "index/terms.h"

#include <string.h>

#include "base/varint.h"
#include "index/internal.h"

static inline bool has_freqs(const sc_field_info *f)
{
    return f->kind == SC_FIELD_TEXT;
}

static inline bool has_pos(const sc_field_info *f)
{
    return f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_POSITIONS);
}

static uint64_t block_start(const uint8_t *tindex, uint64_t k)
{
    return sc__ld32(tindex + 4 * k);
}

sc_status sc_terms_iter_init(sc_terms_iter *it, const sc_segment *seg, const sc_field_info *f)
{
    memset(it, 0, sizeof(*it));
    sc_slice b = sc__segment_bytes(seg);
    it->seg = seg;
    it->field = f;
    it->tdata = b.ptr + f->tdata_off;
    it->tdata_len = f->tdata_len;
    it->tindex = b.ptr + f->tindex_off;
    it->n_blocks = (f->n_terms + SC__TERMS_PER_BLOCK - 1) / SC__TERMS_PER_BLOCK;
    it->block = UINT64_MAX;
    return SC_OK;
}

void sc_terms_iter_fini(sc_terms_iter *it)
{
    sc_vec_free(&it->term);
    sc_vec_free(&it->seek);
    sc_vec_free(&it->states);
}

static uint32_t entries_in(const sc_terms_iter *it, uint64_t k)
{
    uint64_t left = it->field->n_terms - k * SC__TERMS_PER_BLOCK;
    return left < SC__TERMS_PER_BLOCK ? (uint32_t)left : SC__TERMS_PER_BLOCK;
}

static void load_block(sc_terms_iter *it, uint64_t k)
{
    it->block = k;
    it->pos = block_start(it->tindex, k);
    it->block_end = k + 1 < it->n_blocks ? block_start(it->tindex, k + 1) : it->tdata_len;
    it->in_block = 0;
    it->lazy_from = 0;
    it->term.len = 0;
    it->valid_states = 0;
}

static sc_status corrupt(sc_terms_iter *it)
{
    it->status = SC_ECORRUPT;
    it->positioned = false;
    it->at_end = true;
    return SC_ECORRUPT;
}

/* sc_varint_get with values below 2^21 (one to three bytes: every term entry field of the
 * 1M-doc benchmark corpus) decoded inline; longer ones and the last bytes of a block go the
 * general way. */
static inline bool vget(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *q = *p;
    if (end - q >= 3) {
        uint32_t b0 = q[0], b1 = q[1], b2 = q[2];
        if (b0 < 0x80) {
            *out = b0;
            *p = q + 1;
            return true;
        }
        if (b1 < 0x80) {
            *out = (b0 & 0x7f) | (b1 << 7);
            *p = q + 2;
            return true;
        }
        if (b2 < 0x80) {
            *out = (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
            *p = q + 3;
            return true;
        }
    }
    return sc_varint_get(p, end, out) == SC_OK;
}

_Static_assert(SC__TERMS_PER_BLOCK == 32, "lazy_off holds one block");

/* Reads the prefix and suffix of the entry at *pp (within the current block) into term; *pp
 * moves to its statistics. */
static inline sc_status read_head(sc_terms_iter *it, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint64_t prefix, slen;
    if (!vget(&p, end, &prefix) || !vget(&p, end, &slen))
        return corrupt(it);
    if (prefix > it->term.len || (it->in_block == 0 && prefix != 0) || slen > (uint64_t)(end - p) ||
        prefix + slen > SC_TERM_MAX_BYTES)
        return corrupt(it);
    it->term.len = (size_t)prefix;
    if (prefix + slen + 16 > it->term.cap &&
        sc_vec_reserve(&it->term, (size_t)slen + 16) != SC_OK) {
        it->status = SC_ENOMEM;
        return SC_ENOMEM;
    }
    if (slen <= 16 && end - p >= 16)
        memcpy(it->term.ptr + prefix, p, 16); /* fixed size: no call; the buffer has room */
    else
        memcpy(it->term.ptr + prefix, p, (size_t)slen);
    it->term.len = (size_t)(prefix + slen);
    *pp = p + slen;
    if (prefix < it->valid_states)
        it->valid_states = (size_t)prefix;
    return SC_OK;
}

/* Decodes the statistics of entry `index` of the block at *pp into info (offsets are deltas
 * from the previous entry's, absolute for the first). */
static sc_status read_stats(sc_terms_iter *it, const uint8_t **pp, const uint8_t *end,
                            uint32_t index)
{
    const uint8_t *p = *pp;
    uint64_t df, extra = 0, post, posv = 0;
    if (!vget(&p, end, &df) || df == 0 || df > UINT32_MAX)
        return corrupt(it);
    if (has_freqs(it->field) && !vget(&p, end, &extra))
        return corrupt(it);
    if (!vget(&p, end, &post))
        return corrupt(it);
    if (has_pos(it->field) && !vget(&p, end, &posv))
        return corrupt(it);
    sc_term_info *ti = &it->info;
    bool first = index == 0;
    ti->doc_freq = (uint32_t)df;
    ti->total_term_freq = df + extra;
    ti->postings_off = first ? post : ti->postings_off + post;
    ti->positions_off = first ? posv : ti->positions_off + posv;
    ti->ord = it->block * SC__TERMS_PER_BLOCK + index;
    *pp = p;
    return SC_OK;
}

/* Folds the statistics of the entries read lazily into info. */
static sc_status settle(sc_terms_iter *it)
{
    const uint8_t *blk = it->tdata + block_start(it->tindex, it->block);
    const uint8_t *end = it->tdata + it->block_end;
    for (uint32_t i = it->lazy_from; i < it->in_block; i++) {
        const uint8_t *p = blk + it->lazy_off[i];
        SC_TRY(read_stats(it, &p, end, i));
    }
    it->lazy_from = it->in_block;
    return SC_OK;
}

/* Reads the entry at it->pos (within the current block) into term and info. */
static sc_status read_entry(sc_terms_iter *it)
{
    if (it->lazy_from < it->in_block)
        SC_TRY(settle(it));
    const uint8_t *p = it->tdata + it->pos, *end = it->tdata + it->block_end;
    SC_TRY(read_head(it, &p, end));
    SC_TRY(read_stats(it, &p, end, it->in_block));
    it->pos = (uint64_t)(p - it->tdata);
    it->in_block++;
    it->lazy_from = it->in_block;
    it->positioned = true;
    return SC_OK;
}

/* Skips n (<= 4) varints at *pp: the n-th byte below 0x80, found sixteen bytes at a time when
 * possible, without branching on the data (a per-bit loop mispredicted, and libgcc's popcount,
 * the default build having no POPCNT, was 23% of a leading-wildcard walk). */
static inline bool skip_varints(const uint8_t **pp, const uint8_t *end, unsigned n)
{
    const uint8_t *p = *pp;
#ifdef __SIZEOF_INT128__
    if (end - p >= 16) {
        uint64_t x[2];
        memcpy(x, p, 16);
        /* little-endian: byte i's top bit is bit 8i + 7; a clear one ends a varint */
        const uint64_t hi = 0x8080808080808080ull;
        unsigned __int128 m = ((unsigned __int128)(~x[1] & hi) << 64) | (~x[0] & hi);
        for (unsigned i = 1; i < n; i++)
            m &= m - 1;
        if (m) {
            uint64_t lo = (uint64_t)m;
            unsigned bit = lo ? (unsigned)__builtin_ctzll(lo)
                              : 64u + (unsigned)__builtin_ctzll((uint64_t)(m >> 64));
            *pp = p + (bit >> 3) + 1;
            return true;
        }
    }
#endif
    for (unsigned i = 0; i < n; i++) {
        while (p < end && (*p & 0x80))
            p++;
        if (p == end)
            return false;
        p++;
    }
    *pp = p;
    return true;
}

/* Past the last entry of the current block (or before the first block): loads the next block;
 * false (the iterator at its end) when there is none. */
static bool enter_next_block(sc_terms_iter *it)
{
    if (it->block != UINT64_MAX && it->in_block < entries_in(it, it->block))
        return true;
    uint64_t k = it->block == UINT64_MAX ? 0 : it->block + 1;
    if (k >= it->n_blocks) {
        it->at_end = true;
        it->positioned = false;
        return false;
    }
    load_block(it, k);
    return true;
}

/* The intersection's move: the next term without decoding its statistics (read_entry or
 * settle do that when needed). *has false at the end. */
static sc_status next_lazy(sc_terms_iter *it, bool *has)
{
    *has = false;
    if (it->status != SC_OK)
        return it->status;
    if (it->at_end)
        return SC_OK;
    if (!enter_next_block(it))
        return SC_OK;
    const uint8_t *p = it->tdata + it->pos, *end = it->tdata + it->block_end;
    SC_TRY(read_head(it, &p, end));
    it->lazy_off[it->in_block] =
        (uint32_t)((uint64_t)(p - it->tdata) - block_start(it->tindex, it->block));
    if (!skip_varints(&p, end, 2u + has_freqs(it->field) + has_pos(it->field)))
        return corrupt(it);
    it->pos = (uint64_t)(p - it->tdata);
    it->in_block++;
    it->positioned = true;
    *has = true;
    return SC_OK;
}

/* next_lazy for a DFA whose start state is tame (a leading `*`): reads on, term bytes only, to
 * the next term ending with the DFA's suffix (or the end), in one loop with the block's bounds
 * in registers. The terms passed over are rejected by the suffix test of next_match anyway. */
static sc_status scan_to_suffix(sc_terms_iter *it, bool *has)
{
    const uint8_t *suf = it->dfa->suffix;
    uint32_t sl = it->dfa->suffix_len;
    unsigned n_stats = 2u + has_freqs(it->field) + has_pos(it->field);
    for (;;) {
        *has = false;
        if (it->status != SC_OK)
            return it->status;
        if (it->at_end)
            return SC_OK;
        if (!enter_next_block(it))
            return SC_OK;
        const uint8_t *blk = it->tdata + block_start(it->tindex, it->block);
        const uint8_t *p = it->tdata + it->pos, *end = it->tdata + it->block_end;
        uint32_t n_in = entries_in(it, it->block);
        it->positioned = true;
        while (it->in_block < n_in) {
            SC_TRY(read_head(it, &p, end));
            it->lazy_off[it->in_block] = (uint32_t)(p - blk);
            if (!skip_varints(&p, end, n_stats))
                return corrupt(it);
            it->in_block++;
            const uint8_t *t = it->term.ptr;
            size_t len = it->term.len;
            if (len >= sl && t[len - 1] == suf[sl - 1] && memcmp(t + len - sl, suf, sl) == 0) {
                it->pos = (uint64_t)(p - it->tdata);
                *has = true;
                return SC_OK;
            }
        }
        it->pos = (uint64_t)(p - it->tdata);
    }
}

sc_status sc_terms_next(sc_terms_iter *it, bool *has)
{
    *has = false;
    if (it->status != SC_OK)
        return it->status;
    if (it->at_end)
        return SC_OK;
    if (!enter_next_block(it))
        return SC_OK;
    SC_TRY(read_entry(it));
    *has = true;
    return SC_OK;
}

/* The first (whole) term of block k, bounds-checked. */
static bool block_first_term(const sc_terms_iter *it, uint64_t k, sc_slice *out)
{
    uint64_t s = block_start(it->tindex, k);
    uint64_t e = k + 1 < it->n_blocks ? block_start(it->tindex, k + 1) : it->tdata_len;
    const uint8_t *p = it->tdata + s, *end = it->tdata + e;
    uint64_t prefix, slen;
    if (sc_varint_get(&p, end, &prefix) != SC_OK || sc_varint_get(&p, end, &slen) != SC_OK ||
        prefix != 0 || slen > (uint64_t)(end - p))
        return false;
    *out = sc_slice_make(p, (size_t)slen);
    return true;
}

sc_status sc_terms_seek_ceil(sc_terms_iter *it, sc_slice term, bool *has, bool *exact)
{
    *has = false;
    if (exact)
        *exact = false;
    if (it->status != SC_OK)
        return it->status;
    it->at_end = false;
    it->positioned = false;
    if (it->n_blocks == 0) {
        it->at_end = true;
        return SC_OK;
    }
    /* last block whose first term <= term */
    uint64_t lo = 0, hi = it->n_blocks;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        sc_slice ft;
        if (!block_first_term(it, mid, &ft))
            return corrupt(it);
        if (sc_slice_cmp(ft, term) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    load_block(it, lo);
    for (;;) {
        bool h;
        SC_TRY(sc_terms_next(it, &h));
        if (!h)
            return SC_OK;
        int c = sc_slice_cmp(sc_slice_make(it->term.ptr, it->term.len), term);
        if (c >= 0) {
            *has = true;
            if (exact)
                *exact = c == 0;
            return SC_OK;
        }
    }
}

sc_status sc_terms_seek_exact(sc_terms_iter *it, sc_slice term, bool *found)
{
    bool has, exact;
    SC_TRY(sc_terms_seek_ceil(it, term, &has, &exact));
    *found = has && exact;
    return SC_OK;
}

sc_slice sc_terms_term(const sc_terms_iter *it)
{
    return sc_slice_make(it->term.ptr, it->term.len);
}

const sc_term_info *sc_terms_info(const sc_terms_iter *it)
{
    return &it->info;
}

/* ---- automaton intersection ---- */

sc_status sc_terms_intersect_start(sc_terms_iter *it, const sc_dfa *dfa)
{
    it->dfa = dfa;
    it->states.len = 0;
    if (it->states.cap < 64 && sc_vec_reserve(&it->states, 64) != SC_OK)
        return SC_ENOMEM;
    it->states.ptr[0] = dfa->start;
    it->valid_states = 0;
    it->seek.len = 0;
    it->block = UINT64_MAX;
    it->at_end = false;
    it->positioned = false;
    it->in_block = 0;
    return SC_OK;
}

/* After the term died at depth d: builds in it->seek the smallest prefix beyond the dead range
 * that the DFA can still extend (returns 1), or returns 0 when no later term can match, -1 when
 * out of memory. */
static int next_live_prefix(sc_terms_iter *it, size_t d)
{
    const sc_dfa *dfa = it->dfa;
    const uint8_t *t = it->term.ptr;
    for (size_t k = d + 1; k-- > 0;) {
        uint32_t s = it->states.ptr[k];
        for (unsigned c = (unsigned)t[k] + 1; c < 256; c++) {
            if (sc_dfa_step(dfa, s, (uint8_t)c) != SC_DFA_DEAD) {
                it->seek.len = 0;
                if (sc_vec_append(&it->seek, t, k) != SC_OK ||
                    sc_vec_push(&it->seek, (unsigned char)c) != SC_OK)
                    return -1;
                return 1;
            }
        }
    }
    return 0;
}

/* Byte order of the current term against t (as sc_slice_cmp), inline: the walk's seeks compare
 * every term they pass over. */
static inline int cmp_term(const sc_terms_iter *it, sc_slice t)
{
    size_t n = it->term.len < t.len ? it->term.len : t.len;
    for (size_t i = 0; i < n; i++)
        if (it->term.ptr[i] != t.ptr[i])
            return it->term.ptr[i] < t.ptr[i] ? -1 : 1;
    return (it->term.len > t.len) - (it->term.len < t.len);
}

/* The intersection's seek forward to the first term >= target (target > the current term):
 * within the current block when target sorts before the next block's first term (reading on,
 * no binary search), else a binary search over the later blocks; terms passed over are read
 * lazily. *has false at the end. */
static sc_status seek_lazy(sc_terms_iter *it, sc_slice target, bool *has)
{
    uint64_t next_blk = it->block + 1;
    sc_slice ft;
    if (it->block != UINT64_MAX && next_blk < it->n_blocks) {
        if (!block_first_term(it, next_blk, &ft))
            return corrupt(it);
        if (sc_slice_cmp(ft, target) <= 0) {
            /* last block whose first term <= target, among the later ones */
            uint64_t lo = next_blk, hi = it->n_blocks;
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (!block_first_term(it, mid, &ft))
                    return corrupt(it);
                if (sc_slice_cmp(ft, target) <= 0)
                    lo = mid;
                else
                    hi = mid;
            }
            load_block(it, lo);
        }
    }
    for (;;) {
        SC_TRY(next_lazy(it, has));
        if (!*has || cmp_term(it, target) >= 0)
            return SC_OK;
    }
}

/* Steps the DFA over term[d..len) from state s, recording states[d + 1..]; stops early at a
 * tame state (when `tame`) and returns the depth reached in *d; DEAD when it dies there. */
static inline uint32_t walk(const sc_dfa *dfa, const uint8_t *term, size_t len, uint32_t *states,
                            size_t *d, const uint8_t *tame)
{
    size_t i = *d;
    uint32_t s = states[i];
    for (; i < len; i++) {
        if (tame && tame[s])
            break;
        s = sc_dfa_step(dfa, s, term[i]);
        if (s == SC_DFA_DEAD)
            break;
        states[i + 1] = s;
    }
    *d = i;
    return s;
}

sc_status sc_terms_next_match(sc_terms_iter *it, bool *has)
{
    *has = false;
    const sc_dfa *dfa = it->dfa;
    /* the suffix test applies once a term's prefix reaches a tame state */
    const uint8_t *tame = dfa->suffix_len && dfa->tame ? dfa->tame : NULL;
    bool fresh = false; /* the current term came from a seek and is not examined yet */
    bool scan = tame && tame[dfa->start]; /* nothing can die: the suffix picks the terms */
    for (;;) {
        if (!fresh) {
            bool h;
            SC_TRY(scan ? scan_to_suffix(it, &h) : next_lazy(it, &h));
            if (!h)
                return SC_OK;
        }
        fresh = false;
        size_t len = it->term.len;
        if (len + 1 > it->states.cap) {
            it->states.len = 0;
            if (sc_vec_reserve(&it->states, len + 1) != SC_OK)
                return SC_ENOMEM;
        }
        const uint8_t *t = it->term.ptr;
        uint32_t *states = it->states.ptr;
        size_t d = it->valid_states;
        uint32_t s = walk(dfa, t, len, states, &d, tame);
        if (s != SC_DFA_DEAD && d < len) {
            /* a tame state: the term can only match with the suffix */
            uint32_t sl = dfa->suffix_len;
            if (len < sl || t[len - 1] != dfa->suffix[sl - 1] ||
                memcmp(t + len - sl, dfa->suffix, sl) != 0) {
                it->valid_states = d;
                continue;
            }
            s = walk(dfa, t, len, states, &d, NULL);
        }
        if (s != SC_DFA_DEAD) {
            it->valid_states = len;
            if (sc_dfa_accepts(dfa, s)) {
                if (it->lazy_from < it->in_block)
                    SC_TRY(settle(it));
                *has = true;
                return SC_OK;
            }
            continue;
        }
        it->valid_states = d;
        int live = next_live_prefix(it, d);
        if (live < 0)
            return SC_ENOMEM;
        if (live == 0) {
            it->at_end = true;
            it->positioned = false;
            return SC_OK;
        }
        bool h;
        SC_TRY(seek_lazy(it, sc_slice_make(it->seek.ptr, it->seek.len), &h));
        if (!h)
            return SC_OK;
        fresh = true;
    }
}

/* ---- stateless lookup ---- */

sc_status sc_terms_lookup(const sc_segment *seg, const sc_field_info *f, sc_slice term,
                          sc_term_info *out, bool *found)
{
    *found = false;
    sc_terms_iter it;
    memset(&it, 0, sizeof(it));
    SC_TRY(sc_terms_iter_init(&it, seg, f));
    if (it.n_blocks == 0)
        return SC_OK;
    uint64_t lo = 0, hi = it.n_blocks;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        sc_slice ft;
        if (!block_first_term(&it, mid, &ft))
            return SC_ECORRUPT;
        if (sc_slice_cmp(ft, term) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    /* Scan the block comparing front-coded entries against `term` without rebuilding them:
     * m = common prefix length of the previous entry and term (previous < term). */
    uint64_t s = block_start(it.tindex, lo);
    uint64_t e = lo + 1 < it.n_blocks ? block_start(it.tindex, lo + 1) : it.tdata_len;
    const uint8_t *p = it.tdata + s, *end = it.tdata + e;
    size_t m = 0, prev_len = 0;
    uint32_t n = entries_in(&it, lo);
    sc_term_info ti = {0};
    bool freqs = has_freqs(f), pos = has_pos(f);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t prefix, slen, df, extra = 0, post, posv = 0;
        if (sc_varint_get(&p, end, &prefix) != SC_OK || sc_varint_get(&p, end, &slen) != SC_OK ||
            prefix > prev_len || (i == 0 && prefix != 0) || slen > (uint64_t)(end - p))
            return SC_ECORRUPT;
        const uint8_t *suffix = p;
        p += slen;
        if (sc_varint_get(&p, end, &df) != SC_OK || df == 0 || df > UINT32_MAX)
            return SC_ECORRUPT;
        if (freqs && sc_varint_get(&p, end, &extra) != SC_OK)
            return SC_ECORRUPT;
        if (sc_varint_get(&p, end, &post) != SC_OK)
            return SC_ECORRUPT;
        if (pos && sc_varint_get(&p, end, &posv) != SC_OK)
            return SC_ECORRUPT;
        ti.doc_freq = (uint32_t)df;
        ti.total_term_freq = df + extra;
        ti.postings_off = i == 0 ? post : ti.postings_off + post;
        ti.positions_off = i == 0 ? posv : ti.positions_off + posv;
        ti.ord = lo * SC__TERMS_PER_BLOCK + i;
        prev_len = (size_t)(prefix + slen);
        if (prefix < m)
            return SC_OK; /* this entry is already past term */
        if (prefix > m)
            continue; /* still differs from term where the previous entry did */
        size_t c = 0;
        while (c < slen && m + c < term.len && suffix[c] == term.ptr[m + c])
            c++;
        if (c == slen && m + c == term.len) {
            *out = ti;
            *found = true;
            return SC_OK;
        }
        if (m + c == term.len || (c < slen && suffix[c] > term.ptr[m + c]))
            return SC_OK; /* entry > term */
        m += c;
    }
    return SC_OK;
}
