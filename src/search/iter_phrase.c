/* Phrase iterator (search/iter.h): a leapfrog conjunction over the terms' postings, rarest
 * first (two-term counts and exhaustive top-k merge balanced blocks in bulk); positions are
 * read only for docs all terms contain and matched by phrase_match.c (slop 0: Lucene's
 * ExactPhraseMatcher; slop > 0: its SloppyPhraseMatcher, 1 / (1 + match length) summed per
 * match). Top-k skips lead blocks and lead docs that cannot beat the collector's minimum
 * score. */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "search/internal.h"
#include "search/iter.h"
#include "search/phrase_internal.h"

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

typedef sc__phrase_pp pp;
typedef sc__phrase_iter phrase_iter;

/* phrase_internal.h */
bool sc__phrase_on_doc(phrase_iter *x, size_t i)
{
    sc_postings *c = &x->p[i];
    uint32_t d = x->p[0].doc;
    uint32_t cd = c->started && (c->exhausted || c->doc >= d) ? c->doc : cur_advance(c, d);
    return cd == d;
}

/* phrase_internal.h */
bool sc__phrase_load_positions(phrase_iter *x, size_t i)
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

/* The phrase freq bounds below count half freqs: the two-term sloppy bound (sloppy2_bound)
 * is a multiple of one half. A bound h stands for the freq h / 2. */
static inline float half_freq(uint64_t h)
{
    return (float)h * 0.5f; /* exact: the float of 2f is twice the float of f */
}

/* The least phrase freq, in halves, whose score with norm byte v beats min_score (UINT64_MAX:
 * none); BM25 does not fall as freq grows, so a doc can compete iff its freq bound reaches it.
 * Cached per norm byte until min_score changes; O(log freq) score evaluations to fill. */
static uint64_t need_freq_fill(phrase_iter *x, uint8_t v)
{
    uint64_t lo = 0, hi = 1; /* score(lo) <= min (freq 0 never matches), score(hi) > min */
    while (!(sc_bm25_score(x->bm25, half_freq(hi), v) > x->min_score)) {
        lo = hi;
        if (hi >= 2 * (uint64_t)UINT32_MAX) {
            hi = UINT64_MAX;
            break;
        }
        hi *= 2;
    }
    while (hi != UINT64_MAX && hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sc_bm25_score(x->bm25, half_freq(mid), v) > x->min_score)
            hi = mid;
        else
            lo = mid;
    }
    x->need[v] = hi;
    x->need_at[v] = x->min_score;
    return hi;
}

/* need_freq_fill's cached answer inline (asked once per candidate doc). */
static inline uint64_t need_freq(phrase_iter *x, uint8_t v)
{
    return x->need_at[v] == x->min_score ? x->need[v] : need_freq_fill(x, v);
}

/* Sloppy, two distinct terms: an upper bound of the SloppyPhraseMatcher freq of a doc where
 * the rarer of the two terms has m positions (m = the least of the two freqs, or of bounds of
 * them), tighter than the sum of the freqs (Lucene's maxFreq) when one term is frequent. With
 * two terms the matcher's candidates are the boundaries between runs of one term's positions
 * in the merged order of both (positions less query offsets): each is the last position of a
 * run and the first of the next, of the other term, counted 1 / (1 + distance) when within the
 * slop. Each of the m positions borders at most two runs of the other term, at most one of
 * them at distance 0 (a term's positions are distinct) and the other at most 1/2, so freq <=
 * m * (1 + 1/2), in halves 3m (the float sum stays under it: its terms are 1, 1/2 (exact) or
 * at most 0.33333334, far from any rounding that could add up to 1/6). */
static inline uint64_t sloppy2_bound(uint64_t m)
{
    return 3 * m;
}

/* Whether the two-term sloppy bound applies (no repeated term: a repeat group's matches
 * follow other rules). */
static inline bool is_sloppy2(const phrase_iter *x)
{
    return x->slop && x->n == 2 && x->n_groups == 0;
}

/* A bound of the phrase freq, in halves, from bounds f0 (the lead's) and fo of the other
 * terms' (the least for an exact phrase, the sum for a sloppy one, as phrase_shallow_to keeps
 * them). */
static inline uint64_t freq_bound(const phrase_iter *x, uint64_t f0, uint64_t fo)
{
    uint64_t least = f0 < fo ? f0 : fo;
    if (!x->slop)
        return 2 * least;
    return is_sloppy2(x) ? sloppy2_bound(least) : 2 * (f0 + fo);
}

/* With a minimum score: whether the current doc (all terms on it) can beat it, from the
 * terms' freqs and the doc's norm alone (an exact phrase's freq is at most the smallest term
 * freq, a sloppy one's at most their sum, and with two distinct terms sloppy2_bound of the
 * smaller), before any position is read. */
static bool phrase_may_compete(phrase_iter *x, uint32_t d)
{
    uint64_t f = x->slop ? 0 : UINT64_MAX;
    for (size_t i = x->n_adv; i < x->n; i++)
        if (!sc__phrase_on_doc(x, i))
            return false; /* the doc lacks a term */
    if (is_sloppy2(x)) {
        f = freq_bound(x, cur_freq(&x->p[0]), cur_freq(&x->p[1]));
    } else {
        for (size_t i = 0; i < x->n; i++) {
            uint64_t fi = cur_freq(&x->p[i]);
            if (x->slop)
                f += fi;
            else if (fi < f)
                f = fi;
        }
        f *= 2; /* in halves */
    }
    return f >= need_freq(x, x->norms ? x->norms[d] : 1);
}

/* The same before the other terms move, from the lead's freq and the others' window bound. */
static bool lead_may_compete(phrase_iter *x, uint32_t d)
{
    uint64_t f = freq_bound(x, cur_freq(&x->p[0]), x->others_maxf);
    return f >= need_freq(x, x->norms ? x->norms[d] : 1);
}

/* Two terms, both cursors on the doc: their positions in place (sc_postings_positions_view:
 * no copy), a group not decoded yet decoded first unless sc_postings_positions reads the doc
 * cheaper (the first doc read from a packed group, a doc spanning two groups): false then. */
static inline bool views2(phrase_iter *x, const uint32_t **sa, uint32_t *aa, const uint32_t **sb,
                          uint32_t *ab)
{
    sc_postings *pa = &x->p[0], *pb = &x->p[1];
    return (sc_postings_positions_view(pa, sa, aa) ||
            (sc_postings_positions_prepare(pa) && sc_postings_positions_view(pa, sa, aa))) &&
           (sc_postings_positions_view(pb, sb, ab) ||
            (sc_postings_positions_prepare(pb) && sc_postings_positions_view(pb, sb, ab)));
}

/* Two terms: the phrase freq from the positions in place when they are (exact: one side has
 * at most 16 positions; sloppy: any lengths, no pair within the slop decided first by the
 * vector test); -1 otherwise (then the positions are loaded and matched). */
static inline float pair_in_place(phrase_iter *x)
{
    const uint32_t *sa, *sb;
    uint32_t aa, ab;
    if (!views2(x, &sa, &aa, &sb, &ab))
        return -1.0f;
    uint32_t na = x->p[0].freqs[x->p[0].i], nb = x->p[1].freqs[x->p[1].i];
    if (x->slop) {
        int any = sc__phrase_sloppy2_any(x, sa, na, aa, sb, nb, ab);
        if (any == 0)
            return 0.0f;
        if (any > 0 && !x->bm25)
            return 1.0f;
        return sc__phrase_sloppy2_freq(x, sa, na, aa, sb, nb, ab);
    }
#ifdef __SSE2__
    /* a[k] - off_a == b[j] - off_b as a[k] + off_b == b[j] + off_a, positions as sums + adj */
    uint32_t oa = aa + x->pps[1].offset, ob = ab + x->pps[0].offset;
    bool one = !x->bm25;
    if (na <= 8 && nb <= 8)
        return (float)sc__phrase_eq8x8(sa, na, oa, sb, nb, ob);
    if (nb <= 16 && na <= nb)
        return (float)sc__phrase_eq_count16(sa, na, oa, sb, nb, ob, one);
    if (na <= 16)
        return (float)sc__phrase_eq_count16(sb, nb, ob, sa, na, oa, one);
    if (nb <= 16)
        return (float)sc__phrase_eq_count16(sa, na, oa, sb, nb, ob, one);
#endif
    return -1.0f;
}

static bool phrase_matches(phrase_iter *x)
{
    if (x->base.stats)
        x->base.stats->phrase_position_checks++;
    if (x->n == 2 && x->n_groups == 0) {
        float f = pair_in_place(x);
        if (f >= 0.0f) {
            x->freq = f;
            return f > 0.0f;
        }
    }
    if (x->n >= 3 && x->slop == 0) {
        /* term by term, the fewest positions first: most candidates end after two terms */
        x->freq = sc__phrase_exact_lazy(x);
        return x->freq > 0;
    }
    if (x->n >= 3 && !sc__phrase_sloppy_may_match(x)) {
        x->freq = 0.0f;
        return false;
    }
    for (size_t i = 0; i < x->n; i++)
        if (!(x->n >= 3 && (x->loaded >> i & 1)) && !sc__phrase_load_positions(x, i))
            return false;
    x->freq = x->slop == 0 ? sc__phrase_exact_freq(x) : sc__phrase_sloppy_freq(x);
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
        uint64_t f = x->slop ? 0 : UINT64_MAX, least = UINT64_MAX;
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
            if (fi < least)
                least = fi;
        }
        if (!all)
            continue; /* a doc of norm v lacks some term */
        /* in halves */
        f = is_sloppy2(x) ? sloppy2_bound(least) : 2 * f;
        float sc = sc_bm25_score(x->bm25, half_freq(f), x->norms ? (uint8_t)v : 1);
        if (sc > best)
            best = sc;
    }
    return best;
}

/* The window is the lead's block holding the first doc >= target (shallow_end: its last doc):
 * a window that cannot compete is skipped whole without the other terms moving. Its bound:
 * each lead doc is dominated by a pair (f, v) of the lead's competitive impacts, and the
 * phrase freq there is at most freq_bound(f, others): min(f, others) for an exact phrase,
 * f + others for a sloppy one (sloppy2_bound of the min with two distinct terms), others
 * being the least (exact) or the sum (sloppy) of the other terms' max freqs over the window
 * (their skip entries through shallow_end); the bound is the best score of those (freq,
 * norm) pairs. Sets shallow_end, shallow_max and others_maxf. */
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
        uint64_t f = freq_bound(x, im[j].max_freq, others);
        float sc = sc_bm25_score(x->bm25, half_freq(f), x->norms ? im[j].min_norm : 1);
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
        if (x->approx)
            break; /* the lead's doc: sc__iter_phrase_confirm checks the rest */
        for (size_t i = 1; i < x->n_adv; i++) {
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

/* Puts doc d to the sink if m (a set's bit without a branch: whether a candidate matches is
 * about as predictable as a coin); true when the sink is full. */
static inline bool sink_match(const phrase_iter *x, pair_sink *s, uint32_t d, bool m)
{
    if (s->bs) {
        size_t bit = d - s->base;
        s->bs->words[bit >> 6] |= (uint64_t)m << (bit & 63);
        return false;
    }
    if (m)
        sink_put(x, s, d);
    return s->full;
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
            if (sink_match(x, s, ld, phrase_matches(x)))
                return ld;
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
            if (sink_match(x, s, L->doc, phrase_matches(x)))
                return L->doc; /* full: both cursors on it */
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

bool sc__iter_phrase_make_approximate(sc_doc_iter *it)
{
    if (it->ops != &phrase_ops || it->positioned)
        return false;
    ((phrase_iter *)it)->approx = true;
    return true;
}

bool sc__iter_phrase_confirm(sc_doc_iter *it)
{
    phrase_iter *x = (phrase_iter *)it;
    uint32_t d = it->doc;
    for (size_t i = 1; i < x->n_adv; i++) {
        sc_postings *c = &x->p[i];
        uint32_t cd = c->started && (c->exhausted || c->doc >= d) ? c->doc : cur_advance(c, d);
        if (cd != d)
            return false;
    }
    return phrase_matches(x);
}

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
    /* The cheapest term leads and the others follow by cost (the leapfrog asks the rarer
     * first, so a doc one of them lacks is left before a dense term decodes a block for it;
     * ties in query order); pps[i] follows p[i]. */
    uint8_t by_cost[64];
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        for (; k > 0 && sc_postings_cost(&cursors[i]) < sc_postings_cost(&cursors[by_cost[k - 1]]);
             k--)
            by_cost[k] = by_cost[k - 1];
        by_cost[k] = (uint8_t)i;
    }
    for (size_t d = 0; d < n; d++) {
        size_t i = by_cost[d];
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
    x->n_adv = n;
    while (n >= 3 && x->n_adv > 1 && 2 * sc_postings_cost(&p[x->n_adv - 1]) >= p[0].n_docs_seg)
        x->n_adv--;
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
