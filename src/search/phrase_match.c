/* Position matchers of the phrase iterator (phrase_internal.h): exact and sloppy phrase
 * frequencies of one doc from its terms' positions. Two-term phrases (the common case) get
 * branch-free SSE2 kernels over up to 8 x 8 or 16 x n positions (equality, within-slop) and a
 * sloppy matcher written out for a queue of two; three or more terms are read term by term,
 * the fewest positions first, as long as some start (exact) or window (sloppy) survives; the
 * rest follows Lucene's ExactPhraseMatcher and SloppyPhraseMatcher. */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "search/phrase_internal.h"

typedef sc__phrase_pp pp;
typedef sc__phrase_iter phrase_iter;

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

/* phrase_internal.h */
uint32_t sc__phrase_eq_count16(const uint32_t *a, uint32_t na, uint32_t sa, const uint32_t *b,
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
        /* both short (the common case): all 8 x 8 pairs at once */
        return (float)sc__phrase_eq8x8(pa, na, (uint32_t)oa, pb, nb, (uint32_t)ob);
    }
    /* one side short: each position of the other against it (positions of a term in a doc
     * are distinct, so matched positions of either side count the matches) */
    if (nb <= 16 && na <= nb)
        return (float)sc__phrase_eq_count16(pa, na, (uint32_t)oa, pb, nb, (uint32_t)ob, !x->bm25);
    if (na <= 16)
        return (float)sc__phrase_eq_count16(pb, nb, (uint32_t)ob, pa, na, (uint32_t)oa, !x->bm25);
    if (nb <= 16)
        return (float)sc__phrase_eq_count16(pa, na, (uint32_t)oa, pb, nb, (uint32_t)ob, !x->bm25);
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
float sc__phrase_exact_freq(phrase_iter *x)
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

/* The lazy matchers' view of one term in the current doc: position k is s[k] + adj (mod
 * 2^32), n of them. */
typedef struct tpos {
    const uint32_t *s;
    uint32_t adj, n;
} tpos;

static inline uint32_t doc_freq_of(sc_postings *p)
{
    if (p->freqs_decoded && p->started && !p->exhausted)
        return p->freqs[p->i];
    return sc_postings_freq(p);
}

/* Term i's positions in the current doc: with in_place, in place when the cursor holds (or
 * cheaply decodes) them, else copied to pps[i] (bit i of x->loaded set). False when it has
 * none or they cannot be read. */
static bool term_positions(phrase_iter *x, size_t i, bool in_place, tpos *t)
{
    sc_postings *p = &x->p[i];
    if (in_place &&
        (sc_postings_positions_view(p, &t->s, &t->adj) ||
         (sc_postings_positions_prepare(p) && sc_postings_positions_view(p, &t->s, &t->adj)))) {
        t->n = p->freqs[p->i];
        return t->n > 0;
    }
    if (!sc__phrase_load_positions(x, i))
        return false;
    x->loaded |= UINT64_C(1) << i;
    t->s = x->pps[i].pos;
    t->adj = 0;
    t->n = x->pps[i].n;
    return true;
}

/* Orders the terms the leapfrog moved by their freq in the current doc, fewest first (ties by
 * index), into ord[0..n_adv), the deferred ones after them; returns the smallest freq. */
static uint32_t order_by_freq(phrase_iter *x, uint8_t *ord)
{
    uint32_t f[64];
    for (size_t i = x->n_adv; i < x->n; i++)
        ord[i] = (uint8_t)i;      /* deferred: last, by cost */
    f[0] = doc_freq_of(&x->p[0]); /* the lead is never deferred */
    ord[0] = 0;
    uint32_t least = f[0];
    for (size_t i = 1; i < x->n_adv; i++) {
        f[i] = doc_freq_of(&x->p[i]);
        size_t k = i;
        for (; k > 0 && f[i] < f[ord[k - 1]]; k--)
            ord[k] = ord[k - 1];
        ord[k] = (uint8_t)i;
        if (f[i] < least)
            least = f[i];
    }
    return least;
}

/* Term a's positions less its query offset into x->cand (grown to room for `need`, the
 * term's freq in the doc): the candidate starts; returns how many (0: none or unreadable). */
static uint32_t anchor_starts(phrase_iter *x, size_t a, uint32_t need, bool in_place)
{
    if (need > x->cand_cap) {
        uint32_t cap = x->cand_cap ? x->cand_cap : 16;
        while (cap < need)
            cap *= 2;
        int64_t *c = sc_arena_alloc(x->a, cap * sizeof *c);
        if (!c)
            return 0;
        x->cand = c;
        x->cand_cap = cap;
    }
    tpos t;
    if (!term_positions(x, a, in_place, &t))
        return 0;
    uint32_t m = t.n < x->cand_cap ? t.n : x->cand_cap;
    int64_t off = x->pps[a].offset;
    for (uint32_t k = 0; k < m; k++)
        x->cand[k] = (int64_t)(uint32_t)(t.s[k] + t.adj) - off;
    return m;
}

/* phrase_internal.h */
float sc__phrase_exact_lazy(phrase_iter *x)
{
    size_t n = x->n;
    uint8_t ord[64] = {0}; /* (every entry below n is set by order_by_freq) */
    uint32_t fmin = order_by_freq(x, ord);
    uint32_t nc = anchor_starts(x, ord[0], fmin, true);
    int64_t *c = x->cand;
    for (size_t r = 1; r < n && nc; r++) {
        size_t i = ord[r];
        tpos t;
        if ((i >= x->n_adv && !sc__phrase_on_doc(x, i)) || !term_positions(x, i, true, &t))
            return 0.0f;
        bool one = r + 1 == n && !x->bm25; /* the last term, not scoring: one match decides */
        int64_t off = x->pps[i].offset;
        uint32_t j = 0, kept = 0;
        int64_t v = (int64_t)(uint32_t)(t.s[0] + t.adj);
        for (uint32_t k = 0; k < nc; k++) {
            int64_t want = c[k] + off;
            while (v < want) {
                if (++j == t.n)
                    goto done;
                v = (int64_t)(uint32_t)(t.s[j] + t.adj);
            }
            if (v == want) {
                c[kept++] = c[k];
                if (one)
                    return 1.0f;
            }
        }
    done:
        nc = kept;
    }
    return (float)nc;
}

/* phrase_internal.h */
bool sc__phrase_sloppy_may_match(phrase_iter *x)
{
    size_t n = x->n;
    uint8_t ord[64] = {0}; /* (every entry below n is set by order_by_freq) */
    uint32_t fmin = order_by_freq(x, ord);
    x->loaded = 0; /* copied out: the SloppyPhraseMatcher reads them after */
    uint32_t nc = anchor_starts(x, ord[0], fmin, false);
    int64_t *c = x->cand;
    const int64_t slop = x->slop;
    for (size_t r = 1; r < n && nc; r++) {
        size_t i = ord[r];
        tpos t;
        if ((i >= x->n_adv && !sc__phrase_on_doc(x, i)) || !term_positions(x, i, false, &t))
            return false;
        int64_t off = x->pps[i].offset;
        uint32_t j = 0, kept = 0;
        int64_t v = (int64_t)(uint32_t)(t.s[0] + t.adj) - off;
        for (uint32_t k = 0; k < nc; k++) {
            /* the first position of term i not below c - slop: within the slop iff <= c + slop */
            while (v < c[k] - slop) {
                if (++j == t.n)
                    goto done;
                v = (int64_t)(uint32_t)(t.s[j] + t.adj) - off;
            }
            if (v <= c[k] + slop)
                c[kept++] = c[k];
        }
    done:
        nc = kept;
    }
    return nc > 0;
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
 * positions (16 entries of each are read); all 8 x 8 pairs at once, three operations per 4
 * pairs. */
static bool sloppy_any2(const uint32_t *pa, uint32_t na, uint32_t oa, const uint32_t *pb,
                        uint32_t nb, uint32_t ob, uint32_t slop)
{
    __m128i A[4], B[4];
    load16(pa, na, oa, UINT32_C(0xC0000000), A);
    load16(pb, nb, ob, UINT32_C(0x80000000), B);
    const __m128i sl = _mm_set1_epi32((int)SC__SLOP_SIGN(slop));
    const __m128i lim = _mm_set1_epi32((int)(2 * slop + 1 + UINT32_C(0x80000000)));
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

/* phrase_internal.h */
int sc__phrase_sloppy2_any(const phrase_iter *x, const uint32_t *pa, uint32_t na, uint32_t adja,
                           const uint32_t *pb, uint32_t nb, uint32_t adjb)
{
#ifdef __SSE2__
    uint32_t offa = x->pps[0].offset, offb = x->pps[1].offset, slop = x->slop;
    if ((na > 16 && nb > 16) || slop >= (UINT32_C(1) << 20) ||
        pa[na - 1] + adja >= (UINT32_C(1) << 30) || pb[nb - 1] + adjb >= (UINT32_C(1) << 30) ||
        offa >= (1u << 29) || offb >= (1u << 29))
        return -1;
    /* A = a + off_b, B = b + off_a (mod 2^32: the shifted true positions) */
    uint32_t oa = adja + offb, ob = adjb + offa;
    if (na <= 8 && nb <= 8)
        return sloppy_any2(pa, na, oa, pb, nb, ob, slop);
    if (nb <= 16 && (na <= nb || na > 16))
        return within16(pa, na, oa, pb, nb, ob, slop);
    return within16(pb, nb, ob, pa, na, oa, slop);
#else
    (void)x, (void)pa, (void)na, (void)adja, (void)pb, (void)nb, (void)adjb;
    return -1;
#endif
}

/* One side of the two-term sloppy walk: a term's positions as s[k] + adj (mod 2^32; adj 0
 * for loaded positions, the view's adjustment for positions in place). */
typedef struct side2 {
    const uint32_t *s;
    uint32_t n, idx, adj, offset, ord;
    int64_t position;
} side2;

static inline bool side_next(side2 *q)
{
    if (++q->idx >= q->n)
        return false;
    q->position = (int64_t)(uint32_t)(q->s[q->idx] + q->adj) - q->offset;
    return true;
}

/* pp_less of two sides. */
static inline bool side_less(const side2 *a, const side2 *b)
{
    if (a->position != b->position)
        return a->position < b->position;
    if (a->offset != b->offset)
        return a->offset < b->offset;
    return a->ord < b->ord;
}

/* SloppyPhraseMatcher for two distinct terms: the same walk as sloppy_freq with its queue of
 * two written out (the popped side is the lesser by pp_less; once it passes the other, the
 * other is the lesser), so matches and their summation order are the same. Works on the
 * positions in place (sums + adj) as well as on loaded ones; na, nb >= 1. */
static float sloppy_walk2(const phrase_iter *x, const uint32_t *pa, uint32_t na, uint32_t adja,
                          const uint32_t *pb, uint32_t nb, uint32_t adjb)
{
    side2 sa = {pa, na, 0, adja, x->pps[0].offset, x->pps[0].ord, 0};
    side2 sb = {pb, nb, 0, adjb, x->pps[1].offset, x->pps[1].ord, 0};
    sa.position = (int64_t)(uint32_t)(pa[0] + adja) - sa.offset;
    sb.position = (int64_t)(uint32_t)(pb[0] + adjb) - sb.offset;
    side2 *p = &sa, *o = &sb;
    int64_t end = p->position > o->position ? p->position : o->position;
    if (side_less(o, p)) {
        p = &sb;
        o = &sa;
    }
    const int64_t slop = x->slop;
    float freq = 0;
    for (;;) {
        int64_t match_length = end - p->position, next = o->position;
        bool matched = false;
        while (side_next(p)) {
            if (p->position > end)
                end = p->position;
            if (p->position > next) {
                if (match_length <= slop) {
                    matched = true;
                    break;
                }
                side2 *t = p; /* o is now the lesser */
                p = o;
                o = t;
                next = o->position;
                match_length = end - p->position;
            } else if (end - p->position < match_length) {
                match_length = end - p->position;
            }
        }
        if (!matched) { /* exhausted: the last candidate counts if within slop */
            if (match_length <= slop)
                freq += 1.0f / (1.0f + (float)match_length);
            return freq;
        }
        freq += 1.0f / (1.0f + (float)match_length);
        if (!x->bm25)
            return freq; /* not scoring: one match decides */
        side2 *t = p;    /* p passed o: o is the lesser */
        p = o;
        o = t;
    }
}

/* phrase_internal.h */
float sc__phrase_sloppy2_freq(const phrase_iter *x, const uint32_t *pa, uint32_t na, uint32_t adja,
                              const uint32_t *pb, uint32_t nb, uint32_t adjb)
{
    return sloppy_walk2(x, pa, na, adja, pb, nb, adjb);
}

float sc__phrase_sloppy_freq(phrase_iter *x)
{
    size_t n = x->n;
    if (n == 0)
        return 0.0f;
    if (n == 2 && x->n_groups == 0) {
        /* short docs: no pair within slop (most candidates) decides without the walk */
        const pp *a = &x->pps[0], *b = &x->pps[1];
        int any = sc__phrase_sloppy2_any(x, a->pos, a->n, 0, b->pos, b->n, 0);
        if (any == 0)
            return 0.0f;
        if (any > 0 && !x->bm25)
            return 1.0f;
        return sloppy_walk2(x, a->pos, a->n, 0, b->pos, b->n, 0);
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
