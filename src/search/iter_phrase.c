/* Phrase iterator (search/iter.h): a leapfrog conjunction over the terms' postings; positions
 * are read only for docs all terms contain. Slop 0 counts exact matches (Lucene's
 * ExactPhraseMatcher); slop > 0 runs Lucene's SloppyPhraseMatcher (repeated terms included:
 * its repeat groups and collision rule) and sums 1 / (1 + match length) per match as the
 * phrase frequency. */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "search/iter.h"

/* Inline fast paths of the cursor's moves inside its decoded block (the common case of a
 * phrase's candidates); anything else (block changes, ends, errors) goes to postings.c. */
static inline uint32_t cur_next(sc_postings *p)
{
    if (p->started && !p->exhausted && p->i + 1 < p->n_in_block)
        return p->doc = p->docs[++p->i];
    return sc_postings_next(p);
}

static inline uint32_t cur_advance(sc_postings *p, uint32_t target)
{
    if (p->started && !p->exhausted && target > p->doc && target <= p->docs[p->n_in_block - 1]) {
        uint32_t i = p->i + 1;
#ifdef __SSE2__
        /* 8 docs per step (unsigned compares as signed of sign-flipped values): the first not
         * below target is the answer (entries past n_in_block are stale, but the answer comes
         * before them); a dense cursor skips tens of docs per lead doc */
        const __m128i flip = _mm_set1_epi32(INT32_MIN);
        __m128i t = _mm_xor_si128(_mm_set1_epi32((int)target), flip);
        for (; i + 8 <= SC_POSTINGS_BLOCK; i += 8) {
            __m128i d0 = _mm_loadu_si128((const __m128i *)(const void *)(p->docs + i));
            __m128i d4 = _mm_loadu_si128((const __m128i *)(const void *)(p->docs + i + 4));
            unsigned lt = (unsigned)_mm_movemask_ps(
                              _mm_castsi128_ps(_mm_cmpgt_epi32(t, _mm_xor_si128(d0, flip)))) |
                          (unsigned)_mm_movemask_ps(
                              _mm_castsi128_ps(_mm_cmpgt_epi32(t, _mm_xor_si128(d4, flip))))
                              << 4;
            if (lt != 0xff) {
                i += (uint32_t)__builtin_ctz(~lt);
                p->i = i;
                return p->doc = p->docs[i];
            }
        }
#endif
        while (p->docs[i] < target)
            i++;
        p->i = i;
        return p->doc = p->docs[i];
    }
    return sc_postings_advance(p, target);
}

static inline uint32_t cur_freq(sc_postings *p)
{
    if (p->freqs_decoded && p->started && !p->exhausted)
        return p->freqs[p->i];
    return sc_postings_freq(p);
}

typedef struct pp {
    uint32_t *pos; /* positions of the term in the current doc */
    uint32_t cap, n, idx;
    uint32_t offset;  /* the term's position in the query */
    int64_t position; /* pos[idx] - offset */
    uint32_t ord;
    int32_t rpt_group; /* sloppy: index of the group of pps with the same term, or -1 */
} pp;

typedef struct phrase_iter {
    sc_doc_iter base;
    sc_cancel_token *token; /* optional: checked every 256 candidate docs */
    uint32_t n_cand;
    sc_arena *a;
    sc_postings *p; /* n cursors, the lead (cheapest) first */
    pp *pps;
    size_t n;
    uint32_t slop;
    const sc_bm25 *bm25;
    const uint8_t *norms;
    float freq; /* of the current doc */
    /* Block-max bounds (bm25 only): the phrase's score bound over [.., shallow_end] (the
     * lead's block; see phrase_shallow_to), the bound over the whole postings, and the minimum
     * score a collector asked for (0: none; lead blocks that cannot beat it are skipped before
     * the other terms move, and candidates before their positions are read). */
    uint32_t shallow_end;
    float shallow_max;
    float max_all;
    float min_score;
    sc_postings_impact *imps; /* n * SC_POSTINGS_BLOCK scratch frontiers */
    /* The phrase freq bound of the non-lead terms over the shallow window (exact: the least of
     * their max freqs, sloppy: the sum), so a lead doc is judged from its own freq and norm
     * before the others move. need[v]: the least freq whose score with norm byte v beats
     * min_score, valid while need_at[v] == min_score (computed on first use). */
    uint64_t others_maxf;
    uint64_t need[256];
    float need_at[256];
    /* Sloppy phrases with a repeated term: groups of the pps sharing a term, each sorted by
     * query offset (Lucene's rptGroups) */
    pp ***groups;
    size_t *group_len;
    size_t n_groups;
} phrase_iter;

static bool load_positions(phrase_iter *x, size_t i)
{
    pp *q = &x->pps[i];
    uint32_t f = cur_freq(&x->p[i]);
    if (f > q->cap) {
        uint32_t cap = q->cap ? q->cap : 16;
        while (cap < f)
            cap *= 2;
        uint32_t *b = sc_arena_alloc(x->a, cap * sizeof *b);
        if (!b)
            return false;
        q->pos = b;
        q->cap = cap;
    }
    /* room for the whole buffer (at least 16): short docs are copied 8 at a time */
    q->n = (uint32_t)sc_postings_positions(&x->p[i], q->pos, q->cap);
    q->idx = 0;
    return q->n > 0;
}

#ifdef __SSE2__
/* b[0..nb) shifted by sb (nb <= 16, room for 16 entries) in four vectors; lanes past nb hold
 * `fill`. */
static inline void load16(const uint32_t *b, uint32_t nb, uint32_t sb, uint32_t fill,
                          __m128i out[4])
{
    __m128i vn = _mm_set1_epi32((int)nb), vs = _mm_set1_epi32((int)sb);
    __m128i vf = _mm_set1_epi32((int)fill);
    for (int v = 0; v < 4; v++) {
        __m128i idx = _mm_setr_epi32(4 * v, 4 * v + 1, 4 * v + 2, 4 * v + 3);
        __m128i k = _mm_cmplt_epi32(idx, vn);
        __m128i x = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 4 * v)), vs);
        out[v] = _mm_or_si128(_mm_and_si128(k, x), _mm_andnot_si128(k, vf));
    }
}

/* How many of a[0..na) shifted by sa equal one of b's (nb <= 16, see load16); with `one`,
 * stops at the first. One broadcast and four compares per position of a. */
static uint32_t eq_count16(const uint32_t *a, uint32_t na, uint32_t sa, const uint32_t *b,
                           uint32_t nb, uint32_t sb, bool one)
{
    __m128i B[4];
    load16(b, nb, sb, UINT32_MAX - 1, B);
    uint32_t cnt = 0;
    for (uint32_t k = 0; k < na; k++) {
        __m128i v = _mm_set1_epi32((int)(a[k] + sa));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(v, B[0]), _mm_cmpeq_epi32(v, B[1])),
                                 _mm_or_si128(_mm_cmpeq_epi32(v, B[2]), _mm_cmpeq_epi32(v, B[3])));
        cnt += _mm_movemask_epi8(m) != 0;
        if (one && cnt)
            break;
    }
    return cnt;
}
#endif

#ifdef __SSE2__
/* Within-slop tests of shifted positions (sloppy, two terms): with A = a + off_b and B = b +
 * off_a (below 2^30 + 2^29) and slop below 2^20, |(a - off_a) - (b - off_b)| <= slop iff
 * (A + slop - B) mod 2^32 <= 2 slop; adding 2^31 to A + slop turns that unsigned test into one
 * signed compare against 2 slop + 1 - 2^31. Lanes past a list's end hold sentinels that meet
 * nothing: 0x80000000 for B, 0xC0000000 for A. */
#define SC__SLOP_SIGN(slop) ((uint32_t)(slop) + UINT32_C(0x80000000))

/* Whether some a[k] + sa is within `slop` of some b[j] + sb (nb <= 16, see load16). */
static bool within16(const uint32_t *a, uint32_t na, uint32_t sa, const uint32_t *b, uint32_t nb,
                     uint32_t sb, uint32_t slop)
{
    __m128i B[4];
    load16(b, nb, sb, UINT32_C(0x80000000), B);
    const __m128i lim = _mm_set1_epi32((int)(2 * slop + 1 + UINT32_C(0x80000000)));
    for (uint32_t k = 0; k < na; k++) {
        __m128i va = _mm_set1_epi32((int)(a[k] + sa + SC__SLOP_SIGN(slop)));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpgt_epi32(lim, _mm_sub_epi32(va, B[0])),
                                              _mm_cmpgt_epi32(lim, _mm_sub_epi32(va, B[1]))),
                                 _mm_or_si128(_mm_cmpgt_epi32(lim, _mm_sub_epi32(va, B[2])),
                                              _mm_cmpgt_epi32(lim, _mm_sub_epi32(va, B[3]))));
        if (_mm_movemask_epi8(m))
            return true;
    }
    return false;
}
#endif

/* Exact, two terms: a branch-free merge of the sorted position lists shifted by their query
 * offsets (a[i] - off_a == b[j] - off_b, compared as a[i] + off_b == b[j] + off_a). */
static float exact_freq2(const phrase_iter *x)
{
    const pp *a = &x->pps[0], *b = &x->pps[1];
    const uint32_t *pa = a->pos, *pb = b->pos;
    uint32_t na = a->n, nb = b->n, i = 0, j = 0, freq = 0;
    uint64_t oa = b->offset, ob = a->offset;
#ifdef __SSE2__
    if (na <= 8 && nb <= 8) {
        /* both short (the common case): compare all 8 x 8 pairs at once, no data-dependent
         * branch. Both buffers hold at least 16 entries (cap), so 8 can be read; lanes past
         * n become sentinels that never meet (all ones on a, all ones minus one on b). */
        const __m128i iota0 = _mm_setr_epi32(0, 1, 2, 3), iota4 = _mm_setr_epi32(4, 5, 6, 7);
        __m128i va = _mm_set1_epi32((int)na), vb = _mm_set1_epi32((int)nb);
        __m128i sa = _mm_set1_epi32((int)(uint32_t)oa), sb = _mm_set1_epi32((int)(uint32_t)ob);
        __m128i ka0 = _mm_cmplt_epi32(iota0, va), ka4 = _mm_cmplt_epi32(iota4, va);
        __m128i kb0 = _mm_cmplt_epi32(iota0, vb), kb4 = _mm_cmplt_epi32(iota4, vb);
        __m128i ones = _mm_set1_epi32(-1), two = _mm_set1_epi32(-2);
        __m128i a0 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)pa), sa);
        __m128i a4 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)(pa + 4)), sa);
        __m128i b0 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)pb), sb);
        __m128i b4 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)(pb + 4)), sb);
        a0 = _mm_or_si128(_mm_and_si128(ka0, a0), _mm_andnot_si128(ka0, ones));
        a4 = _mm_or_si128(_mm_and_si128(ka4, a4), _mm_andnot_si128(ka4, ones));
        b0 = _mm_or_si128(_mm_and_si128(kb0, b0), _mm_andnot_si128(kb0, two));
        b4 = _mm_or_si128(_mm_and_si128(kb4, b4), _mm_andnot_si128(kb4, two));
        __m128i m0 = _mm_setzero_si128(), m4 = _mm_setzero_si128();
#define SC__ROT(r)                                                                                 \
    do {                                                                                           \
        __m128i r0 = _mm_shuffle_epi32(b0, r), r4 = _mm_shuffle_epi32(b4, r);                      \
        m0 = _mm_or_si128(m0, _mm_or_si128(_mm_cmpeq_epi32(a0, r0), _mm_cmpeq_epi32(a0, r4)));     \
        m4 = _mm_or_si128(m4, _mm_or_si128(_mm_cmpeq_epi32(a4, r0), _mm_cmpeq_epi32(a4, r4)));     \
    } while (0)
        SC__ROT(0xe4); /* identity and the three rotations of each half of b */
        SC__ROT(0x39);
        SC__ROT(0x4e);
        SC__ROT(0x93);
#undef SC__ROT
        /* lanes of a that meet a position of b: each is one match (positions of a term in a
         * doc are distinct) */
        unsigned bits = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(m0)) |
                        (unsigned)_mm_movemask_ps(_mm_castsi128_ps(m4)) << 4;
        static const uint8_t pop4[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
        return (float)(pop4[bits & 15] + pop4[bits >> 4]);
    }
    /* one side short: each position of the other against it (positions of a term in a doc
     * are distinct, so matched positions of either side count the matches) */
    if (nb <= 16 && na <= nb)
        return (float)eq_count16(pa, na, (uint32_t)oa, pb, nb, (uint32_t)ob, !x->bm25);
    if (na <= 16)
        return (float)eq_count16(pb, nb, (uint32_t)ob, pa, na, (uint32_t)oa, !x->bm25);
    if (nb <= 16)
        return (float)eq_count16(pa, na, (uint32_t)oa, pb, nb, (uint32_t)ob, !x->bm25);
#endif
    if ((uint64_t)pa[na - 1] + oa < 256 && (uint64_t)pb[nb - 1] + ob < 256) {
        /* both shifted lists fit 256 bits (the common case: positions are sorted, so the last
         * is the largest): set bits independently, AND, count; no dependent compare chain */
        uint64_t ma[4] = {0, 0, 0, 0}, mb[4] = {0, 0, 0, 0};
        for (uint32_t k = 0; k < na; k++) {
            uint32_t v = pa[k] + (uint32_t)oa;
            ma[v >> 6] |= UINT64_C(1) << (v & 63);
        }
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v = pb[k] + (uint32_t)ob;
            mb[v >> 6] |= UINT64_C(1) << (v & 63);
        }
        for (int k = 0; k < 4; k++) {
            uint64_t m = ma[k] & mb[k];
            while (m) { /* few matches per doc: cheaper than a popcount call */
                freq++;
                m &= m - 1;
            }
        }
        return (float)freq;
    }
    while (i < na && j < nb) {
        uint64_t u = pa[i] + oa, v = pb[j] + ob;
        freq += u == v;
        i += u <= v;
        j += v <= u;
        if (freq && !x->bm25)
            break; /* not scoring: one match decides */
    }
    return (float)freq;
}

/* Exact: positions p of term 0 such that every term i has p - off0 + off_i. */
static float exact_freq(phrase_iter *x)
{
    size_t n = x->n;
    if (n == 2)
        return exact_freq2(x);
    uint32_t cursor[64];
    memset(cursor, 0, n * sizeof *cursor);
    float freq = 0;
    pp *lead = &x->pps[0];
    for (uint32_t k = 0; k < lead->n; k++) {
        int64_t start = (int64_t)lead->pos[k] - lead->offset;
        bool ok = true;
        for (size_t i = 1; i < n && ok; i++) {
            pp *q = &x->pps[i];
            int64_t want = start + q->offset;
            while (cursor[i] < q->n && (int64_t)q->pos[cursor[i]] < want)
                cursor[i]++;
            if (cursor[i] >= q->n) {
                return freq;
            }
            ok = (int64_t)q->pos[cursor[i]] == want;
        }
        if (ok) {
            freq += 1.0f;
            if (!x->bm25)
                return freq; /* not scoring: one match decides */
        }
    }
    return freq;
}

static bool pp_next(pp *q)
{
    if (++q->idx >= q->n)
        return false;
    q->position = (int64_t)q->pos[q->idx] - q->offset;
    return true;
}

/* Lucene's PhrasePositions ordering in the sloppy matcher's queue. */
static bool pp_less(const pp *a, const pp *b)
{
    if (a->position != b->position)
        return a->position < b->position;
    if (a->offset != b->offset)
        return a->offset < b->offset;
    return a->ord < b->ord;
}

/* SloppyPhraseMatcher.nextMatch loop over a small queue kept as an unsorted array. */
/* SloppyPhraseMatcher.advanceRpts: while p sits on the same text position as another pp of
 * its repeat group, the lesser of the two (by position, then offset) moves on. In this
 * queue (an unsorted array scanned for its minimum) re-queuing is implicit. False when a pp
 * runs out. */
static bool advance_rpts(const phrase_iter *x, pp *p, int64_t *end)
{
    if (p->rpt_group < 0)
        return true;
    pp **rg = x->groups[p->rpt_group];
    size_t len = x->group_len[p->rpt_group];
    for (;;) {
        int64_t tp = p->position + p->offset;
        pp *other = NULL;
        for (size_t i = 0; i < len && !other; i++)
            if (rg[i] != p && rg[i]->position + rg[i]->offset == tp)
                other = rg[i];
        if (!other)
            return true;
        if (other->position < p->position ||
            (other->position == p->position && other->offset < p->offset))
            p = other;
        if (!pp_next(p))
            return false;
        if (p->position > *end)
            *end = p->position;
    }
}

#ifdef __SSE2__
/* Sloppy, two distinct terms: whether some pair of positions is within slop once shifted by
 * the query offsets (see within16; what the sloppy matcher finds first: the closest pair is
 * adjacent in the merged order, and it checks every adjacent pair). Both have at most 8
 * positions (buffers hold 16); all 8 x 8 pairs at once, three operations per 4 pairs. */
static bool sloppy_any2(const phrase_iter *x)
{
    const pp *a = &x->pps[0], *b = &x->pps[1];
    __m128i A[4], B[4];
    load16(a->pos, a->n, b->offset, UINT32_C(0xC0000000), A);
    load16(b->pos, b->n, a->offset, UINT32_C(0x80000000), B);
    const __m128i sl = _mm_set1_epi32((int)SC__SLOP_SIGN(x->slop));
    const __m128i lim = _mm_set1_epi32((int)(2 * x->slop + 1 + UINT32_C(0x80000000)));
    __m128i a0 = _mm_add_epi32(A[0], sl), a4 = _mm_add_epi32(A[1], sl);
    __m128i m = _mm_setzero_si128();
#define SC__ROT(r)                                                                                 \
    do {                                                                                           \
        __m128i r0 = _mm_shuffle_epi32(B[0], r), r4 = _mm_shuffle_epi32(B[1], r);                  \
        m = _mm_or_si128(m, _mm_or_si128(_mm_cmpgt_epi32(lim, _mm_sub_epi32(a0, r0)),              \
                                         _mm_cmpgt_epi32(lim, _mm_sub_epi32(a0, r4))));            \
        m = _mm_or_si128(m, _mm_or_si128(_mm_cmpgt_epi32(lim, _mm_sub_epi32(a4, r0)),              \
                                         _mm_cmpgt_epi32(lim, _mm_sub_epi32(a4, r4))));            \
    } while (0)
    SC__ROT(0xe4); /* identity and the three rotations of each half of b */
    SC__ROT(0x39);
    SC__ROT(0x4e);
    SC__ROT(0x93);
#undef SC__ROT
    return _mm_movemask_epi8(m) != 0;
}
#endif

/* SloppyPhraseMatcher for two distinct terms: the same walk as sloppy_freq with its queue of
 * two written out (the popped pp is the lesser by pp_less; once it passes the other, the other
 * is the lesser), so matches and their summation order are the same. */
static float sloppy_freq2(phrase_iter *x)
{
    pp *p = &x->pps[0], *o = &x->pps[1];
    p->idx = o->idx = 0;
    p->position = (int64_t)p->pos[0] - p->offset;
    o->position = (int64_t)o->pos[0] - o->offset;
    int64_t end = p->position > o->position ? p->position : o->position;
    if (pp_less(o, p)) {
        pp *t = p;
        p = o;
        o = t;
    }
    float freq = 0;
    for (;;) {
        int64_t match_length = end - p->position, next = o->position;
        bool matched = false;
        while (pp_next(p)) {
            if (p->position > end)
                end = p->position;
            if (p->position > next) {
                if (match_length <= x->slop) {
                    matched = true;
                    break;
                }
                pp *t = p; /* o is now the lesser */
                p = o;
                o = t;
                next = o->position;
                match_length = end - p->position;
            } else if (end - p->position < match_length) {
                match_length = end - p->position;
            }
        }
        if (!matched) { /* exhausted: the last candidate counts if within slop */
            if (match_length <= x->slop)
                freq += 1.0f / (1.0f + (float)match_length);
            return freq;
        }
        freq += 1.0f / (1.0f + (float)match_length);
        if (!x->bm25)
            return freq; /* not scoring: one match decides */
        pp *t = p;       /* p passed o: o is the lesser */
        p = o;
        o = t;
    }
}

static float sloppy_freq(phrase_iter *x)
{
    size_t n = x->n;
    if (n == 0)
        return 0.0f;
    if (n == 2 && x->n_groups == 0) {
#ifdef __SSE2__
        /* short docs: no pair within slop (most candidates) decides without the walk */
        const pp *a = &x->pps[0], *b = &x->pps[1];
        if ((a->n <= 16 || b->n <= 16) && x->slop < (UINT32_C(1) << 20) &&
            a->pos[a->n - 1] < (UINT32_C(1) << 30) && b->pos[b->n - 1] < (UINT32_C(1) << 30) &&
            a->offset < (1u << 29) && b->offset < (1u << 29)) {
            bool any = a->n <= 8 && b->n <= 8 ? sloppy_any2(x)
                       : b->n <= 16 && (a->n <= b->n || a->n > 16)
                           ? within16(a->pos, a->n, b->offset, b->pos, b->n, a->offset, x->slop)
                           : within16(b->pos, b->n, a->offset, a->pos, a->n, b->offset, x->slop);
            if (!any)
                return 0.0f;
            if (!x->bm25)
                return 1.0f;
        }
#endif
        return sloppy_freq2(x);
    }
    pp *q[64];
    size_t qn = 0;
    int64_t end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        pp *p = &x->pps[i];
        p->idx = 0;
        p->position = (int64_t)p->pos[0] - p->offset;
    }
    /* advanceRepeatGroups: the j-th pp of a group (by offset) starts at the term's j-th
     * position */
    for (size_t g = 0; g < x->n_groups; g++)
        for (size_t j = 1; j < x->group_len[g]; j++)
            for (size_t k = 0; k < j; k++)
                if (!pp_next(x->groups[g][j]))
                    return 0.0f;
    for (size_t i = 0; i < n; i++) {
        pp *p = &x->pps[i];
        if (p->position > end)
            end = p->position;
        q[qn++] = p;
    }
    float freq = 0;
#define POP_MIN(out)                                                                               \
    do {                                                                                           \
        size_t m_ = 0;                                                                             \
        for (size_t k_ = 1; k_ < qn; k_++)                                                         \
            if (pp_less(q[k_], q[m_]))                                                             \
                m_ = k_;                                                                           \
        (out) = q[m_];                                                                             \
        q[m_] = q[--qn];                                                                           \
    } while (0)
#define TOP_POS(out)                                                                               \
    do {                                                                                           \
        size_t m_ = 0;                                                                             \
        for (size_t k_ = 1; k_ < qn; k_++)                                                         \
            if (pp_less(q[k_], q[m_]))                                                             \
                m_ = k_;                                                                           \
        (out) = qn ? q[m_]->position : INT64_MAX; /* one term: nothing to wait for */              \
    } while (0)
    for (;;) {
        pp *p;
        POP_MIN(p);
        int64_t match_length = end - p->position;
        int64_t next;
        TOP_POS(next);
        bool matched = false;
        for (;;) {
            if (!pp_next(p))
                break;
            if (p->position > end)
                end = p->position;
            if (x->n_groups && !advance_rpts(x, p, &end))
                break;
            if (p->position > next) {
                q[qn++] = p;
                if (match_length <= x->slop) {
                    matched = true;
                    break;
                }
                POP_MIN(p);
                TOP_POS(next);
                match_length = end - p->position;
            } else {
                int64_t m2 = end - p->position;
                if (m2 < match_length)
                    match_length = m2;
            }
        }
        if (matched) {
            freq += 1.0f / (1.0f + (float)match_length);
            if (!x->bm25)
                break; /* not scoring: one match decides */
            continue;
        }
        /* exhausted: the last candidate counts if within slop */
        if (match_length <= x->slop)
            freq += 1.0f / (1.0f + (float)match_length);
        break;
    }
#undef POP_MIN
#undef TOP_POS
    return freq;
}

/* The least phrase freq whose score with norm byte v beats min_score (UINT64_MAX: none); BM25
 * does not fall as freq grows, so a doc can compete iff its freq bound reaches it. Cached per
 * norm byte until min_score changes; O(log freq) score evaluations to fill. */
static uint64_t need_freq(phrase_iter *x, uint8_t v)
{
    if (x->need_at[v] == x->min_score)
        return x->need[v];
    uint64_t lo = 0, hi = 1; /* score(lo) <= min (freq 0 never matches), score(hi) > min */
    while (!(sc_bm25_score(x->bm25, (float)hi, v) > x->min_score)) {
        lo = hi;
        if (hi >= UINT32_MAX) {
            hi = UINT64_MAX;
            break;
        }
        hi *= 2;
    }
    while (hi != UINT64_MAX && hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sc_bm25_score(x->bm25, (float)mid, v) > x->min_score)
            hi = mid;
        else
            lo = mid;
    }
    x->need[v] = hi;
    x->need_at[v] = x->min_score;
    return hi;
}

/* With a minimum score: whether the current doc (all terms on it) can beat it, from the
 * terms' freqs and the doc's norm alone (an exact phrase's freq is at most the smallest term
 * freq, a sloppy one's at most their sum), before any position is read. */
static bool phrase_may_compete(phrase_iter *x, uint32_t d)
{
    uint64_t f = x->slop ? 0 : UINT64_MAX;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t fi = cur_freq(&x->p[i]);
        if (x->slop)
            f += fi;
        else if (fi < f)
            f = fi;
    }
    return f >= need_freq(x, x->norms ? x->norms[d] : 1);
}

/* The same before the other terms move, from the lead's freq and the others' window bound. */
static bool lead_may_compete(phrase_iter *x, uint32_t d)
{
    uint64_t fl = cur_freq(&x->p[0]);
    uint64_t f = x->slop ? fl + x->others_maxf : (fl < x->others_maxf ? fl : x->others_maxf);
    return f >= need_freq(x, x->norms ? x->norms[d] : 1);
}

static bool phrase_matches(phrase_iter *x)
{
    for (size_t i = 0; i < x->n; i++)
        if (!load_positions(x, i))
            return false;
    x->freq = x->slop == 0 ? exact_freq(x) : sloppy_freq(x);
    return x->freq > 0;
}

/* The phrase's score bound over docs whose terms' impacts are given: imps[i * BLOCK ..] holds
 * cnt[i] (freq, norm) pairs of term i, ascending in both (a pareto frontier: every doc of the
 * term there has freq <= and norm >= some pair's). For a doc with norm byte v, term i's freq
 * is at most F_i(v), the freq of its last pair with norm <= v (none: the doc lacks the term).
 * An exact phrase's freq is at most min_i F_i(v) (each match needs one position of every
 * term); a sloppy one's at most sum_i F_i(v) (every position heads at most one match). BM25
 * grows with freq and falls with the norm byte, so the bound is the max over the pairs' norms
 * v of score(F(v), v). */
static float frontier_bound(const phrase_iter *x, const size_t *cnt)
{
    size_t n = x->n;
    size_t idx[64];
    memset(idx, 0, n * sizeof *idx);
    float best = 0.0f;
    for (;;) {
        unsigned v = 256;
        for (size_t i = 0; i < n; i++)
            if (idx[i] < cnt[i] && x->imps[i * SC_POSTINGS_BLOCK + idx[i]].min_norm < v)
                v = x->imps[i * SC_POSTINGS_BLOCK + idx[i]].min_norm;
        if (v == 256)
            break;
        uint64_t f = x->slop ? 0 : UINT64_MAX;
        bool all = true;
        for (size_t i = 0; i < n; i++) {
            const sc_postings_impact *im = &x->imps[i * SC_POSTINGS_BLOCK];
            while (idx[i] < cnt[i] && im[idx[i]].min_norm <= v)
                idx[i]++;
            uint64_t fi = idx[i] ? im[idx[i] - 1].max_freq : 0;
            all = all && fi;
            if (x->slop)
                f += fi;
            else if (fi < f)
                f = fi;
        }
        if (!all)
            continue; /* a doc of norm v lacks some term */
        float sc = sc_bm25_score(x->bm25, (float)f, x->norms ? (uint8_t)v : 1);
        if (sc > best)
            best = sc;
    }
    return best;
}

/* The window is the lead's block holding the first doc >= target (shallow_end: its last doc):
 * a window that cannot compete is skipped whole without the other terms moving. Its bound:
 * each lead doc is dominated by a pair (f, v) of the lead's competitive impacts, and the
 * phrase freq there is at most min(f, others) for an exact phrase, f + others for a sloppy
 * one, others being the least (exact) or the sum (sloppy) of the other terms' max freqs over
 * the window (their skip entries through shallow_end); the bound is the best score of those
 * (freq, norm) pairs. Sets shallow_end, shallow_max and others_maxf. */
static uint32_t phrase_shallow_to(phrase_iter *x, uint32_t target)
{
    uint32_t end = sc_postings_advance_shallow(&x->p[0], target);
    uint64_t others = x->slop ? 0 : UINT64_MAX;
    for (size_t i = 1; i < x->n && end != SC_POSTINGS_END; i++) {
        if (sc_postings_advance_shallow(&x->p[i], target) == SC_POSTINGS_END) {
            end = SC_POSTINGS_END; /* a term has no doc >= target: neither has the phrase */
            break;
        }
        uint64_t fi = sc_postings_max_impact_upto(&x->p[i], end).max_freq;
        if (x->slop)
            others += fi;
        else if (fi < others)
            others = fi;
    }
    if (end == SC_POSTINGS_END) {
        x->shallow_end = SC_DOC_END;
        x->shallow_max = 0.0f;
        return SC_DOC_END;
    }
    sc_postings_impact *im = x->imps;
    size_t cnt = sc_postings_shallow_impacts(&x->p[0], im, SC_POSTINGS_BLOCK);
    if (cnt == 0) {
        im[0] = sc_postings_shallow_impact(&x->p[0]);
        cnt = 1;
    }
    float best = 0.0f;
    for (size_t j = 0; j < cnt; j++) {
        uint64_t f = im[j].max_freq;
        f = x->slop ? f + others : (f < others ? f : others);
        float sc = sc_bm25_score(x->bm25, (float)f, x->norms ? im[j].min_norm : 1);
        if (sc > best)
            best = sc;
    }
    x->others_maxf = others;
    x->shallow_end = end;
    x->shallow_max = best;
    return end;
}

/* Leapfrog from the lead's doc d, then check positions; repeat until a match or END. With a
 * minimum score, a candidate in a block whose bound cannot beat it is skipped with the rest
 * of that block before any other term moves or positions are read. */
static uint32_t phrase_settle(phrase_iter *x, uint32_t d)
{
    sc_postings *lead = &x->p[0];
    for (;;) {
    again:
        if (d == SC_DOC_END)
            break;
        if (x->min_score > 0.0f) {
            if (x->shallow_end == SC_DOC_END || d > x->shallow_end)
                phrase_shallow_to(x, d);
            if (x->shallow_max <= x->min_score) {
                if (x->shallow_end == SC_DOC_END) {
                    d = SC_DOC_END;
                    break;
                }
                d = sc_postings_advance(lead, x->shallow_end + 1);
                goto again;
            }
            if (!lead_may_compete(x, d))
                goto next;
        }
        for (size_t i = 1; i < x->n; i++) {
            sc_postings *c = &x->p[i];
            uint32_t cd = c->started && (c->exhausted || c->doc >= d) ? c->doc : cur_advance(c, d);
            if (cd == SC_POSTINGS_END) {
                d = SC_DOC_END;
                goto done;
            }
            if (cd > d) {
                d = cur_advance(lead, cd);
                goto again;
            }
        }
        if ((x->min_score <= 0.0f || phrase_may_compete(x, d)) && phrase_matches(x))
            break;
    next:
        if (x->token && (++x->n_cand & 255) == 0 &&
            sc_cancel_token_check(x->token, (x->n_cand & 2047) == 0)) {
            d = SC_DOC_END;
            break;
        }
        d = cur_next(lead);
    }
done:
    x->base.positioned = true;
    return x->base.doc = d;
}

static uint32_t phrase_next(sc_doc_iter *it)
{
    phrase_iter *x = (phrase_iter *)it;
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    return phrase_settle(x, cur_next(&x->p[0]));
}

static uint32_t phrase_advance(sc_doc_iter *it, uint32_t target)
{
    phrase_iter *x = (phrase_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    return phrase_settle(x, cur_advance(&x->p[0], target));
}

static uint64_t phrase_cost(const sc_doc_iter *it)
{
    return sc_postings_cost(&((const phrase_iter *)it)->p[0]);
}

/* Where bulk_pairs puts matches: bits of a set (counting), or (doc, score) pairs up to max
 * (exhaustive top-k), stopping with both cursors on the last one when full. */
typedef struct pair_sink {
    sc_bitset *bs;
    uint32_t base;
    uint32_t *docs;
    float *scores;
    size_t max, n;
    bool full;
} pair_sink;

static inline void sink_put(const phrase_iter *x, pair_sink *s, uint32_t d)
{
    if (s->bs) {
        sc_bitset_set(s->bs, d - s->base);
        return;
    }
    s->docs[s->n] = d;
    s->scores[s->n] = sc_bm25_score(x->bm25, x->freq, x->norms ? x->norms[d] : 1);
    s->full = ++s->n == s->max;
}

/* Two terms without a minimum score, from the lead's doc ld: docs both terms share below upto
 * go to the sink when their positions match. Where the two cursors' decoded blocks are about
 * as dense as each other, the shared docs of both blocks are found at once by a branch-free
 * merge (a leapfrog mispredicts on about every other doc there); where one is much denser,
 * the leapfrog skips through it faster. Returns the lead's first doc not looked at (>= upto),
 * SC_DOC_END (the end, an error or cancellation), or with a full sink the last doc put. */
static uint32_t bulk_pairs(phrase_iter *x, uint32_t ld, uint32_t upto, pair_sink *s)
{
    sc_postings *L = &x->p[0], *O = &x->p[1];
    uint8_t pi[SC_POSTINGS_BLOCK], pj[SC_POSTINGS_BLOCK];
    while (ld < upto) {
        uint32_t od = O->started && (O->exhausted || O->doc >= ld) ? O->doc : cur_advance(O, ld);
        if (od == SC_POSTINGS_END)
            return SC_DOC_END;
        if (od > ld) {
            ld = cur_advance(L, od);
            continue;
        }
        uint32_t i = L->i, j = O->i, nl = L->n_in_block, no = O->n_in_block, k = 0;
        const uint32_t *ldocs = L->docs, *odocs = O->docs;
        /* merge when the other holds at most 3 in 4 doc ids (denser, the leapfrog's branch
         * is predictable) and is at most 8 times as dense as the lead (a merge step costs
         * about an eighth of a mispredicted leapfrog step); measured on the luceneutil
         * phrases: sloppy two-term counts 8-17% faster, exact ones (one term dense) slower
         * with the merge */
        uint64_t span_o = odocs[no - 1] - odocs[j] + 1;
        bool merge =
            nl - i >= 4 && no - j >= 4 && 4 * (uint64_t)(no - j) <= 3 * span_o &&
            (uint64_t)(no - j) * (ldocs[nl - 1] - ldocs[i] + 1) <= 8 * (uint64_t)(nl - i) * span_o;
        if (merge)
            while (nl > i + 1 && ldocs[nl - 1] >= upto)
                nl--;
        if (!merge) { /* this doc alone, as phrase_settle (an error ends the cursor) */
            if (phrase_matches(x)) {
                sink_put(x, s, ld);
                if (s->full)
                    return ld;
            }
            if (x->token && (++x->n_cand & 255) == 0 &&
                sc_cancel_token_check(x->token, (x->n_cand & 2047) == 0))
                return SC_DOC_END;
            ld = cur_next(L);
            continue;
        }
        while (i < nl && j < no) {
            uint32_t a = ldocs[i], b = odocs[j];
            pi[k] = (uint8_t)i;
            pj[k] = (uint8_t)j;
            k += a == b;
            i += a <= b;
            j += b <= a;
        }
        for (uint32_t c = 0; c < k; c++) {
            L->i = pi[c];
            O->i = pj[c];
            L->doc = O->doc = ldocs[pi[c]];
            if (phrase_matches(x)) {
                sink_put(x, s, L->doc);
                if (s->full)
                    return L->doc; /* both cursors on it */
            }
        }
        if (sc_postings_status(L) != SC_OK || sc_postings_status(O) != SC_OK)
            return SC_DOC_END; /* corrupt positions: the cursor ended */
        uint32_t before = x->n_cand;
        x->n_cand += k;
        if (x->token && ((before ^ x->n_cand) & ~255u) &&
            sc_cancel_token_check(x->token, ((before ^ x->n_cand) & ~2047u) != 0))
            return SC_DOC_END;
        /* consumed: the lead through i - 1, the other through j - 1 */
        L->i = i - 1;
        L->doc = ldocs[i - 1];
        O->i = j - 1;
        O->doc = odocs[j - 1];
        ld = cur_next(L);
    }
    return ld;
}

static void phrase_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    phrase_iter *x = (phrase_iter *)it;
    uint32_t d = it->positioned ? it->doc : phrase_next(it);
    if (d < upto && x->n == 2 && x->min_score <= 0.0f) {
        sc_bitset_set(bs, d - base);
        pair_sink sink = {bs, base, NULL, NULL, 0, 0, false};
        uint32_t ld = bulk_pairs(x, cur_next(&x->p[0]), upto, &sink);
        if (ld == SC_DOC_END) {
            it->positioned = true;
            it->doc = SC_DOC_END;
            return;
        }
        phrase_settle(x, ld); /* the first match >= upto */
        return;
    }
    while (d < upto) {
        sc_bitset_set(bs, d - base);
        d = phrase_next(it);
    }
}

static uint32_t phrase_run_end(sc_doc_iter *it)
{
    return it->doc + 1; /* a run of phrase matches is never known without positions */
}

static size_t phrase_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    phrase_iter *x = (phrase_iter *)it;
    size_t n = 0;
    while (n < max && phrase_next(it) != SC_DOC_END) {
        docs[n] = it->doc;
        if (freqs)
            freqs[n] = x->freq < 1.0f ? 1 : (uint32_t)x->freq;
        n++;
    }
    return n;
}

/* Two terms without a minimum score (exhaustive top-k): matches and scores in bulk through
 * bulk_pairs; other cases one next() at a time. */
static size_t phrase_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    phrase_iter *x = (phrase_iter *)it;
    if (x->n != 2 || x->min_score > 0.0f || !x->bm25 || max == 0)
        return sc_doc_iter_fallback_score_batch(it, docs, scores, max);
    if (it->positioned && it->doc == SC_DOC_END)
        return 0;
    pair_sink sink = {NULL, 0, docs, scores, max, 0, false};
    uint32_t d = bulk_pairs(x, cur_next(&x->p[0]), SC_DOC_END, &sink);
    it->positioned = true;
    it->doc = sink.full ? d : SC_DOC_END;
    return sink.n;
}

static float phrase_score(sc_doc_iter *it)
{
    phrase_iter *x = (phrase_iter *)it;
    if (!x->bm25)
        return 0.0f;
    return sc_bm25_score(x->bm25, x->freq, x->norms ? x->norms[it->doc] : 1);
}

static float phrase_max_score(sc_doc_iter *it, uint32_t upto)
{
    phrase_iter *x = (phrase_iter *)it;
    if (!x->bm25)
        return 0.0f;
    if (x->shallow_end != SC_DOC_END && upto <= x->shallow_end && it->positioned &&
        it->doc != SC_DOC_END && it->doc <= x->shallow_end)
        return x->shallow_max;
    return x->max_all;
}

static uint32_t phrase_shallow(sc_doc_iter *it, uint32_t target)
{
    phrase_iter *x = (phrase_iter *)it;
    if (!x->bm25)
        return SC_DOC_END;
    return phrase_shallow_to(x, target);
}

static void phrase_min_score(sc_doc_iter *it, float min_score)
{
    phrase_iter *x = (phrase_iter *)it;
    if (x->bm25)
        x->min_score = min_score;
}

static const sc_doc_iter_ops phrase_ops = {
    "phrase",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH,
    phrase_next,
    phrase_advance,
    phrase_cost,
    phrase_into_bitset,
    phrase_run_end,
    phrase_next_batch,
    phrase_score,
    phrase_max_score,
    phrase_shallow,
    phrase_min_score,
    phrase_score_batch,
};

void sc__iter_phrase_set_cancel(sc_doc_iter *it, sc_cancel_token *token);

void sc__iter_phrase_set_cancel(sc_doc_iter *it, sc_cancel_token *token)
{
    if (it->ops == &phrase_ops)
        ((phrase_iter *)it)->token = token;
}

sc_doc_iter *sc_iter_phrase(sc_arena *a, const sc_postings *cursors, const uint32_t *offsets,
                            size_t n, uint32_t slop, const sc_bm25 *bm25, const uint8_t *norms)
{
    if (n < 1 || n > 64)
        return NULL;
    phrase_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    sc_postings *p = sc_arena_alloc(a, n * sizeof *p);
    pp *pps = sc_arena_calloc(a, n, sizeof *pps);
    if (!x || !p || !pps)
        return NULL;
    /* The cheapest term leads; pps[i] follows p[i]. */
    size_t lead = 0;
    for (size_t i = 1; i < n; i++)
        if (sc_postings_cost(&cursors[i]) < sc_postings_cost(&cursors[lead]))
            lead = i;
    for (size_t i = 0, dst = 1; i < n; i++) {
        size_t d = i == lead ? 0 : dst++;
        p[d] = cursors[i];
        pps[d].offset = offsets[i];
        pps[d].ord = (uint32_t)i;
    }
    /* repeat groups (sloppy only): cursors of one term share their postings */
    for (size_t i = 0; i < n; i++)
        pps[i].rpt_group = -1;
    if (slop > 0) {
        x->groups = sc_arena_alloc(a, n * sizeof *x->groups);
        x->group_len = sc_arena_calloc(a, n, sizeof *x->group_len);
        if (!x->groups || !x->group_len)
            return NULL;
        for (size_t i = 0; i < n; i++) {
            if (pps[i].rpt_group >= 0)
                continue;
            for (size_t j = i + 1; j < n; j++) {
                if (pps[j].rpt_group >= 0 || p[j].blocks_off != p[i].blocks_off ||
                    p[j].pos_off != p[i].pos_off || p[j].base != p[i].base)
                    continue;
                if (pps[i].rpt_group < 0) {
                    size_t g = x->n_groups++;
                    if (!(x->groups[g] = sc_arena_alloc(a, n * sizeof(pp *))))
                        return NULL;
                    pps[i].rpt_group = (int32_t)g;
                    x->groups[g][x->group_len[g]++] = &pps[i];
                }
                size_t g = (size_t)pps[i].rpt_group;
                pps[j].rpt_group = (int32_t)g;
                x->groups[g][x->group_len[g]++] = &pps[j];
            }
        }
        for (size_t g = 0; g < x->n_groups; g++) /* by query offset (insertion sort) */
            for (size_t k = 1; k < x->group_len[g]; k++)
                for (size_t m = k; m > 0 && x->groups[g][m]->offset < x->groups[g][m - 1]->offset;
                     m--) {
                    pp *t = x->groups[g][m];
                    x->groups[g][m] = x->groups[g][m - 1];
                    x->groups[g][m - 1] = t;
                }
    }
    x->base.ops = &phrase_ops;
    x->a = a;
    x->p = p;
    x->pps = pps;
    x->n = n;
    x->slop = slop;
    x->bm25 = bm25;
    x->norms = norms;
    x->shallow_end = SC_DOC_END;
    for (size_t v = 0; v < 256; v++)
        x->need_at[v] = -1.0f; /* min_score is > 0 whenever need[] is read */
    if (bm25) {
        /* the bound over the whole postings: each term's (max freq, min norm) */
        if (!(x->imps = sc_arena_alloc(a, n * SC_POSTINGS_BLOCK * sizeof *x->imps)))
            return NULL;
        size_t cnt[64];
        for (size_t i = 0; i < n; i++) {
            x->imps[i * SC_POSTINGS_BLOCK] = sc_postings_term_impact(&p[i]);
            cnt[i] = 1;
        }
        x->max_all = frontier_bound(x, cnt);
    }
    return &x->base;
}
