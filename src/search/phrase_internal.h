/* Private to the phrase iterator: its state (iter_phrase.c: candidates, bounds, the iterator
 * contract) shared with the position matchers (phrase_match.c: exact and sloppy phrase
 * frequencies of the current doc from the loaded positions). */
#ifndef SC_SEARCH_PHRASE_INTERNAL_H
#define SC_SEARCH_PHRASE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "index/postings.h"
#include "search/bm25.h"
#include "search/iter.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* One query term's positions in the current doc (Lucene's PhrasePositions). pos has room for
 * cap >= 16 entries once loaded (the matchers read 8 or 16 at a time). */
typedef struct sc__phrase_pp {
    uint32_t *pos; /* positions of the term in the current doc */
    uint32_t cap, n, idx;
    uint32_t offset;  /* the term's position in the query */
    int64_t position; /* pos[idx] - offset */
    uint32_t ord;
    int32_t rpt_group; /* sloppy: index of the group of pps with the same term, or -1 */
} sc__phrase_pp;

typedef struct sc__phrase_iter {
    sc_doc_iter base;
    sc_cancel_token *token; /* optional: checked every 256 candidate docs */
    uint32_t n_cand;
    sc_arena *a;
    sc_postings *p; /* n cursors, the lead (cheapest) first */
    sc__phrase_pp *pps;
    size_t n;
    uint32_t slop;
    const sc_bm25 *bm25;
    const uint8_t *norms;
    float freq; /* of the current doc */
    /* Two-phase (inside a conjunction): next/advance stop on the lead term's docs (the
     * approximation), and the other terms and positions are read only when the conjunction
     * confirms a doc all its clauses match (sc__iter_phrase_confirm): the outer leapfrog runs
     * over the cheapest cursors only, as Lucene's flattened approximations do */
    bool approx;
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
    sc__phrase_pp ***groups;
    size_t *group_len;
    size_t n_groups;
    /* Three or more terms: the start positions (position - query offset) still possible in
     * the current doc, filtered term by term (phrase_match.c's lazy matchers) */
    int64_t *cand;
    uint32_t cand_cap;
    uint64_t loaded; /* bit i: pps[i] holds term i's positions in the current doc (sloppy) */
    /* Three or more terms: cursors [n_adv, n) are terms in at least half the docs; the
     * leapfrog leaves them behind and the lazy matchers move them to the doc only once the
     * rarer terms' positions leave a candidate (such a term is almost always there, and
     * finding it decodes a block). n_adv == n otherwise. */
    size_t n_adv;
} sc__phrase_iter;

#ifdef __SSE2__
/* Exact, two terms, both short (na, nb <= 8): how many a[k] + oa equal some b[j] + ob (mod
 * 2^32), all 8 x 8 pairs at once, no data-dependent branch. 8 entries of a and b are read;
 * lanes past na / nb become sentinels that never meet (all ones on a, all ones minus one on
 * b). Each match is one lane of a (positions of a term in a doc are distinct). */
static inline uint32_t sc__phrase_eq8x8(const uint32_t *pa, uint32_t na, uint32_t oa,
                                        const uint32_t *pb, uint32_t nb, uint32_t ob)
{
    const __m128i iota0 = _mm_setr_epi32(0, 1, 2, 3), iota4 = _mm_setr_epi32(4, 5, 6, 7);
    __m128i va = _mm_set1_epi32((int)na), vb = _mm_set1_epi32((int)nb);
    __m128i sa = _mm_set1_epi32((int)oa), sb = _mm_set1_epi32((int)ob);
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
    return (uint32_t)(pop4[bits & 15] + pop4[bits >> 4]);
}

/* How many of a[0..na) shifted by sa equal one of b's shifted by sb (mod 2^32; nb <= 16, 16
 * entries of b are read); with `one`, stops at the first. One broadcast and four compares per
 * position of a. */
uint32_t sc__phrase_eq_count16(const uint32_t *a, uint32_t na, uint32_t sa, const uint32_t *b,
                               uint32_t nb, uint32_t sb, bool one);
#endif

/* Sloppy, two distinct terms (n_groups == 0, n == 2), term i's positions p[k] + adj_i (mod
 * 2^32; n >= 1 each): 1 if some pair is within the slop once shifted by the query offsets
 * (then the doc matches), 0 if none (it does not), -1 when the quick test does not apply (both
 * longer than 16, positions or offsets too large). Up to 16 entries of pa and pb are read. */
int sc__phrase_sloppy2_any(const sc__phrase_iter *x, const uint32_t *pa, uint32_t na, uint32_t adja,
                           const uint32_t *pb, uint32_t nb, uint32_t adjb);

/* Sloppy, two distinct terms (n_groups == 0, n == 2): the SloppyPhraseMatcher freq of the
 * current doc from term i's positions p[k] + adj_i (mod 2^32; n >= 1 each), as
 * sc__phrase_sloppy_freq would compute it from the loaded positions; works on positions in
 * place (sc_postings_positions_view). Not scoring: > 0 as soon as one match is found. */
float sc__phrase_sloppy2_freq(const sc__phrase_iter *x, const uint32_t *pa, uint32_t na,
                              uint32_t adja, const uint32_t *pb, uint32_t nb, uint32_t adjb);

/* Moves a deferred cursor (i >= n_adv) to the lead's doc if it is behind; whether the term is
 * on it (false: the doc lacks the term, or the cursor ended). */
bool sc__phrase_on_doc(sc__phrase_iter *x, size_t i);

/* Copies term i's positions in the current doc to pps[i] (pos, n; idx reset). False when it
 * has none or they cannot be read (corrupt: the cursor failed). */
bool sc__phrase_load_positions(sc__phrase_iter *x, size_t i);

/* Exact phrase freq of the current doc, three or more terms, every cursor on the doc, no
 * position loaded yet: the term with the fewest positions in the doc gives the candidate
 * starts, and each other term, fewest positions first, keeps those it continues; a term that
 * leaves none ends the doc before the rest are read. Positions are read in place where the
 * cursor holds them decoded. The same freq as sc__phrase_exact_freq; not scoring (bm25 NULL):
 * 1 as soon as one match is found. */
float sc__phrase_exact_lazy(sc__phrase_iter *x);

/* Sloppy, three or more terms, every cursor on the doc, no position loaded yet: false when no
 * position of the term with the fewest positions in the doc has a position of every other
 * term within the slop (positions less query offsets), so the doc cannot match (a match of
 * the SloppyPhraseMatcher has every term within the slop of each other); loads the terms to
 * pps[] fewest positions first (bits of x->loaded) and stops at the first that leaves no
 * candidate. True: the doc may match (then load the other terms and run
 * sc__phrase_sloppy_freq). */
bool sc__phrase_sloppy_may_match(sc__phrase_iter *x);

/* Exact phrase freq of the current doc (every term's positions loaded, n >= 1): how many
 * positions p of the lead have every term i at p - off_0 + off_i. Not scoring (bm25 NULL):
 * 1 as soon as one match is found. */
float sc__phrase_exact_freq(sc__phrase_iter *x);

/* Sloppy phrase freq of the current doc: Lucene's SloppyPhraseMatcher (repeat groups and
 * collision rule included), the sum of 1 / (1 + match length) over its matches. Not scoring:
 * > 0 as soon as one match is found. */
float sc__phrase_sloppy_freq(sc__phrase_iter *x);

#endif
