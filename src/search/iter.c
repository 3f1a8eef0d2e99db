/* Leaf iterator kinds (term postings, all docs, bitset, constant score) and the counted generic
 * fallbacks (search/iter.h). Wrappers and the cancel token are in iter_wrap.c. */
#include "search/iter.h"
#include "search/internal.h"

#include <string.h>

/* ---- fallbacks -------------------------------------------------------------------------- */

void sc_doc_iter_fallback_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    if (it->stats)
        it->stats->fallback_into_bitset++;
    uint32_t d = it->positioned ? it->doc : it->ops->next(it);
    while (d < upto) {
        sc_bitset_set(bs, d - base);
        d = it->ops->next(it);
    }
}

uint32_t sc_doc_iter_fallback_run_end(sc_doc_iter *it)
{
    if (it->stats)
        it->stats->fallback_run_end++;
    return it->doc == SC_DOC_END ? SC_DOC_END : it->doc + 1;
}

size_t sc_doc_iter_fallback_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    if (it->stats)
        it->stats->fallback_next_batch++;
    size_t n = 0;
    while (n < max) {
        uint32_t d = it->ops->next(it);
        if (d == SC_DOC_END)
            break;
        docs[n] = d;
        if (freqs)
            freqs[n] = 1;
        n++;
    }
    return n;
}

void sc_doc_iter_ignore_min_score(sc_doc_iter *it, float min_score)
{
    (void)it;
    (void)min_score;
}

size_t sc_doc_iter_fallback_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    if (it->stats)
        it->stats->fallback_score_batch++;
    size_t n = 0;
    while (n < max) {
        uint32_t d = it->ops->next(it);
        if (d == SC_DOC_END)
            break;
        docs[n] = d;
        scores[n] = it->ops->score(it);
        n++;
    }
    return n;
}

/* ---- shared helpers --------------------------------------------------------------------- */

/* Sets, in dst, bit (i - dst_base) for every set bit i of src in [from, to). */
static void or_bits_range(sc_bitset *dst, uint32_t dst_base, const sc_bitset *src, uint32_t from,
                          uint32_t to)
{
    if (from >= to)
        return;
    if ((dst_base & 63) == 0) {
        /* Word-aligned: whole words with masks at both ends, no branch per word (a sparse
         * source's zero test mispredicted about every other word). */
        size_t w0 = from >> 6, w1 = (to - 1) >> 6;
        uint64_t *d = dst->words - (dst_base >> 6);
        const uint64_t *sw = src->words;
        uint64_t first = ~UINT64_C(0) << (from & 63);
        uint64_t last = (to & 63) ? ~(~UINT64_C(0) << (to & 63)) : ~UINT64_C(0);
        if (w0 == w1) {
            d[w0] |= sw[w0] & first & last;
            return;
        }
        d[w0] |= sw[w0] & first;
        for (size_t w = w0 + 1; w < w1; w++)
            d[w] |= sw[w];
        d[w1] |= sw[w1] & last;
        return;
    }
    for (size_t i = sc_bitset_next_set(src, from); i < to; i = sc_bitset_next_set(src, i + 1))
        sc_bitset_set(dst, i - dst_base);
}

/* ---- term ------------------------------------------------------------------------------- */

static const sc_doc_iter_ops term_ops;
void sc__iter_phrase_set_cancel(sc_doc_iter *it, sc_cancel_token *token);

typedef struct term_iter {
    sc_doc_iter base;
    sc_cancel_token *token; /* optional: checked once per postings block */
    uint32_t last_block;
    uint32_t n_checks;
    sc_postings p;
    const sc_bm25 *bm25;
    const uint8_t *norms;
    float max_all; /* score bound over the whole term */
    uint32_t shallow_end;
    float shallow_max;
} term_iter;

/* The per-block cancellation check: a compare per move, a relaxed load per block of 128
 * docs, a clock read every 8 blocks. On cancel the cursor is treated as exhausted. */
static uint32_t term_checked(term_iter *t, uint32_t d)
{
#ifndef SC_SEARCH_NO_CANCEL_CHECKS
    if (t->token && t->p.block != t->last_block) {
        t->last_block = t->p.block;
        if (sc_cancel_token_check(t->token, (++t->n_checks & 7) == 0)) {
            t->p.exhausted = true;
            t->p.doc = SC_POSTINGS_END;
            d = SC_DOC_END;
        }
    }
#endif
    return t->base.doc = d;
}

static uint32_t term_next(sc_doc_iter *it)
{
    term_iter *t = (term_iter *)it;
    it->positioned = true;
    return term_checked(t, sc_postings_next(&t->p));
}

static uint32_t term_advance(sc_doc_iter *it, uint32_t target)
{
    term_iter *t = (term_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    it->positioned = true;
    return term_checked(t, sc_postings_advance(&t->p, target));
}

void sc_iter_leaf_set_cancel(sc_doc_iter *it, sc_cancel_token *token)
{
#ifdef SC_SEARCH_NO_CANCEL_CHECKS
    return;
#endif
    if (it->ops == &term_ops) {
        ((term_iter *)it)->token = token;
        ((term_iter *)it)->last_block = UINT32_MAX;
    } else {
        sc__iter_phrase_set_cancel(it, token);
    }
}

static uint64_t term_cost(const sc_doc_iter *it)
{
    return sc_postings_cost(&((const term_iter *)it)->p);
}

static void term_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    term_iter *t = (term_iter *)it;
    it->positioned = true;
    sc_postings_into_bitset(&t->p, upto, bs, base);
    it->doc = t->p.exhausted || !t->p.started ? SC_DOC_END : t->p.doc;
}

static uint32_t term_run_end(sc_doc_iter *it)
{
    return sc_postings_run_end(&((term_iter *)it)->p);
}

static size_t term_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    term_iter *t = (term_iter *)it;
    it->positioned = true;
    size_t n = sc_postings_next_batch(&t->p, docs, freqs, max);
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static float term_score(sc_doc_iter *it)
{
    term_iter *t = (term_iter *)it;
    if (!t->bm25)
        return 0.0f;
    uint8_t norm = t->norms ? t->norms[it->doc] : 1;
    return sc_bm25_score(t->bm25, (float)sc_postings_freq(&t->p), norm);
}

static float impact_score(const term_iter *t, sc_postings_impact imp)
{
    return sc_bm25_score(t->bm25, (float)imp.max_freq,
                         t->norms ? (imp.min_norm ? imp.min_norm : 1) : 1);
}

/* Score bound of the shallow block: the best BM25 over its competitive (freq, norm) pairs
 * (exact for the block's best doc), else the block's (max freq, min norm) bound. */
static float shallow_block_score(const term_iter *t)
{
    sc_postings_impact imps[SC_POSTINGS_BLOCK];
    size_t n = sc_postings_shallow_impacts(&t->p, imps, SC_POSTINGS_BLOCK);
    if (n == 0)
        return impact_score(t, sc_postings_shallow_impact(&t->p));
    /* BM25 grows with freq * cache[norm]: the pair with the largest product has the best
     * score (float rounding keeps the order), so one division instead of one per pair. */
    const float *cache = t->bm25->cache;
    float best = -1.0f;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        float x = (float)imps[i].max_freq * cache[t->norms ? imps[i].min_norm : 1];
        if (x > best) {
            best = x;
            at = i;
        }
    }
    return sc_bm25_score(t->bm25, (float)imps[at].max_freq, t->norms ? imps[at].min_norm : 1);
}

static uint32_t term_advance_shallow(sc_doc_iter *it, uint32_t target)
{
    term_iter *t = (term_iter *)it;
    uint32_t end = sc_postings_advance_shallow(&t->p, target);
    t->shallow_end = end;
    t->shallow_max = t->bm25 && end != SC_POSTINGS_END ? shallow_block_score(t) : 0.0f;
    return end;
}

static float term_max_score(sc_doc_iter *it, uint32_t upto)
{
    term_iter *t = (term_iter *)it;
    if (!t->bm25)
        return 0.0f;
    if (t->shallow_end != SC_DOC_END && upto <= t->shallow_end && it->positioned &&
        it->doc != SC_DOC_END && it->doc <= t->shallow_end)
        return t->shallow_max;
    return t->max_all;
}

/* Decodes a batch with frequencies and scores it in one tight loop (BM25 in Lucene's order). */
static size_t term_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    term_iter *t = (term_iter *)it;
    uint32_t freqs[SC_POSTINGS_BLOCK];
    if (max > SC_POSTINGS_BLOCK)
        max = SC_POSTINGS_BLOCK;
    it->positioned = true;
    size_t n = sc_postings_next_batch(&t->p, docs, t->bm25 ? freqs : NULL, max);
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    if (!t->bm25) {
        for (size_t i = 0; i < n; i++)
            scores[i] = 0.0f;
        return n;
    }
    const float w = t->bm25->weight;
    const float *cache = t->bm25->cache;
    const uint8_t *norms = t->norms;
    for (size_t i = 0; i < n; i++) {
        float ni = cache[norms ? norms[docs[i]] : 1];
        scores[i] = w - w / (1.0f + (float)freqs[i] * ni);
    }
    return n;
}

static const sc_doc_iter_ops term_ops = {
    "term",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    term_next,
    term_advance,
    term_cost,
    term_into_bitset,
    term_run_end,
    term_next_batch,
    term_score,
    term_max_score,
    term_advance_shallow,
    sc_doc_iter_ignore_min_score,
    term_score_batch,
};

sc_doc_iter *sc_iter_term(sc_arena *a, const sc_postings *cursor, const sc_bm25 *bm25,
                          const uint8_t *norms)
{
    term_iter *t = sc_arena_calloc(a, 1, sizeof *t);
    if (!t)
        return NULL;
    t->base.ops = &term_ops;
    t->p = *cursor;
    t->bm25 = bm25;
    t->norms = norms;
    t->shallow_end = SC_DOC_END;
    if (bm25)
        t->max_all = impact_score(t, sc_postings_term_impact(&t->p));
    return &t->base;
}

sc_postings *sc__iter_term_cursor(sc_doc_iter *it, const sc_bm25 **bm25, const uint8_t **norms)
{
    if (it->ops != &term_ops || it->positioned)
        return NULL;
    term_iter *t = (term_iter *)it;
    if (bm25)
        *bm25 = t->bm25;
    if (norms)
        *norms = t->norms;
    return &t->p;
}

/* ---- constant-score kinds: shared parts ------------------------------------------------- */

/* The head of the constant-score kinds (all docs, bitset, constant score). */
typedef struct fixed_iter {
    sc_doc_iter base;
    float score;
} fixed_iter;

#define FIXED_SCORE(it) (((fixed_iter *)(it))->score)

static float fixed_score(sc_doc_iter *it)
{
    return FIXED_SCORE(it);
}

static float fixed_max_score(sc_doc_iter *it, uint32_t upto)
{
    return FIXED_SCORE(it);
}

/* Fills scores[0, n) with the constant score; returns n. */
static size_t fixed_fill(sc_doc_iter *it, float *scores, size_t n)
{
    for (size_t i = 0; i < n; i++)
        scores[i] = FIXED_SCORE(it);
    return n;
}

static uint32_t end_shallow(sc_doc_iter *it, uint32_t target)
{
    return SC_DOC_END;
}

/* next/advance of a kind that can seek to the first match >= d with `from`. */
typedef uint32_t (*seek_fn)(sc_doc_iter *it, uint32_t d);

static inline uint32_t seek_next(sc_doc_iter *it, seek_fn from)
{
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    return from(it, it->positioned ? it->doc + 1 : 0);
}

static inline uint32_t seek_advance(sc_doc_iter *it, uint32_t target, seek_fn from)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return from(it, target);
}

/* The first doc a batch starts at (past_end when exhausted). */
static uint32_t batch_first(const sc_doc_iter *it, uint32_t past_end)
{
    return it->positioned ? (it->doc == SC_DOC_END ? past_end : it->doc + 1) : 0;
}

/* Positions it on the last doc of a batch of n (END when empty); returns n. */
static size_t batch_done(sc_doc_iter *it, const uint32_t *docs, size_t n)
{
    it->positioned = true;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

/* ---- all docs --------------------------------------------------------------------------- */

typedef struct all_iter {
    fixed_iter f;
    uint32_t n_docs;
} all_iter;

static uint32_t all_set(sc_doc_iter *it, uint32_t d)
{
    it->positioned = true;
    return it->doc = d < ((all_iter *)it)->n_docs ? d : SC_DOC_END;
}

static uint32_t all_next(sc_doc_iter *it)
{
    return seek_next(it, all_set);
}

static uint32_t all_advance(sc_doc_iter *it, uint32_t target)
{
    return seek_advance(it, target, all_set);
}

static uint64_t all_cost(const sc_doc_iter *it)
{
    return ((const all_iter *)it)->n_docs;
}

static void all_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    all_iter *x = (all_iter *)it;
    uint32_t from = it->positioned ? it->doc : 0;
    uint32_t to = upto < x->n_docs ? upto : x->n_docs;
    if (from < to)
        sc_bitset_set_range(bs, from - base, to - base);
    if (from == SC_DOC_END)
        return;
    all_set(it, to > from ? to : from);
}

static uint32_t all_run_end(sc_doc_iter *it)
{
    return ((all_iter *)it)->n_docs;
}

static size_t all_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    size_t n = 0;
    all_iter *x = (all_iter *)it;
    uint32_t d = batch_first(it, SC_DOC_END);
    while (n < max && d < x->n_docs) {
        docs[n] = d;
        if (freqs)
            freqs[n] = 1;
        n++, d++;
    }
    return batch_done(it, docs, n);
}

static size_t all_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    return fixed_fill(it, scores, all_next_batch(it, docs, NULL, max));
}

static const sc_doc_iter_ops all_ops = {
    "all_docs",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    all_next,
    all_advance,
    all_cost,
    all_into_bitset,
    all_run_end,
    all_next_batch,
    fixed_score,
    fixed_max_score,
    end_shallow,
    sc_doc_iter_ignore_min_score,
    all_score_batch,
};

sc_doc_iter *sc_iter_all(sc_arena *a, uint32_t n_docs, float score)
{
    all_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->f.base.ops = &all_ops;
    x->n_docs = n_docs;
    x->f.score = score;
    return &x->f.base;
}

/* ---- bitset ----------------------------------------------------------------------------- */

typedef struct bits_iter {
    fixed_iter f;
    const sc_bitset *bs;
    uint32_t n_docs;
    uint64_t cost;
} bits_iter;

static uint32_t bits_from(sc_doc_iter *it, uint32_t d)
{
    bits_iter *x = (bits_iter *)it;
    it->positioned = true;
    size_t i = d < x->n_docs ? sc_bitset_next_set(x->bs, d) : x->n_docs;
    return it->doc = i < x->n_docs ? (uint32_t)i : SC_DOC_END;
}

static uint32_t bits_next(sc_doc_iter *it)
{
    return seek_next(it, bits_from);
}

static uint32_t bits_advance(sc_doc_iter *it, uint32_t target)
{
    return seek_advance(it, target, bits_from);
}

static uint64_t bits_cost(const sc_doc_iter *it)
{
    return ((const bits_iter *)it)->cost;
}

static void bits_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    bits_iter *x = (bits_iter *)it;
    uint32_t from = it->positioned ? it->doc : 0;
    if (from == SC_DOC_END)
        return;
    uint32_t to = upto < x->n_docs ? upto : x->n_docs;
    if (from < to)
        or_bits_range(bs, base, x->bs, from, to);
    if (to >= x->n_docs)
        it->positioned = true, it->doc = SC_DOC_END;
    else
        bits_from(it, to > from ? to : from);
}

static uint32_t bits_run_end(sc_doc_iter *it)
{
    bits_iter *x = (bits_iter *)it;
    uint32_t d = it->doc;
    if (d == SC_DOC_END)
        return SC_DOC_END;
    /* First clear bit after d, a word at a time. */
    size_t w = d >> 6;
    uint64_t inv = ~x->bs->words[w] & (~UINT64_C(0) << (d & 63));
    size_t nw = sc_bitset_words_for(x->n_docs);
    while (!inv && ++w < nw)
        inv = ~x->bs->words[w];
    uint64_t end = w < nw ? (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(inv) : x->n_docs;
    return end > x->n_docs ? x->n_docs : (uint32_t)end;
}

static size_t bits_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    bits_iter *x = (bits_iter *)it;
    size_t n = 0;
    uint32_t d = batch_first(it, x->n_docs);
    while (n < max && d < x->n_docs) {
        size_t w = d >> 6;
        uint64_t word = x->bs->words[w] & (~UINT64_C(0) << (d & 63));
        while (word && n < max) {
            uint32_t doc = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
            if (doc >= x->n_docs)
                break;
            docs[n] = doc;
            if (freqs)
                freqs[n] = 1;
            n++;
            word &= word - 1;
        }
        d = n == max ? docs[n - 1] + 1 : (uint32_t)(w + 1) * 64;
    }
    return batch_done(it, docs, n);
}

static size_t bits_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    return fixed_fill(it, scores, bits_next_batch(it, docs, NULL, max));
}

static const sc_doc_iter_ops bits_ops = {
    "bitset",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    bits_next,
    bits_advance,
    bits_cost,
    bits_into_bitset,
    bits_run_end,
    bits_next_batch,
    fixed_score,
    fixed_max_score,
    end_shallow,
    sc_doc_iter_ignore_min_score,
    bits_score_batch,
};

sc_doc_iter *sc_iter_bitset(sc_arena *a, const sc_bitset *bs, uint32_t n_docs, float score)
{
    bits_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->f.base.ops = &bits_ops;
    x->bs = bs;
    x->n_docs = n_docs;
    x->cost = sc_bitset_count_range(bs, 0, n_docs);
    x->f.score = score;
    return &x->f.base;
}

/* ---- constant score --------------------------------------------------------------------- */

typedef struct const_iter {
    fixed_iter f;
    sc_doc_iter *c;
} const_iter;

#define CHILD(it) (((const_iter *)(it))->c)

static uint32_t const_sync(sc_doc_iter *it, uint32_t d)
{
    it->positioned = true;
    return it->doc = d;
}

static uint32_t const_next(sc_doc_iter *it)
{
    return const_sync(it, sc_doc_iter_next(CHILD(it)));
}

static uint32_t const_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return const_sync(it, sc_doc_iter_advance(CHILD(it), target));
}

static uint64_t const_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const const_iter *)it)->c);
}

static void const_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    sc_doc_iter_into_bitset(CHILD(it), upto, bs, base);
    const_sync(it, CHILD(it)->doc);
}

static uint32_t const_run_end(sc_doc_iter *it)
{
    return sc_doc_iter_run_end(CHILD(it));
}

static size_t const_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    size_t n = sc_doc_iter_next_batch(CHILD(it), docs, freqs, max);
    const_sync(it, CHILD(it)->doc);
    return n;
}

static uint32_t const_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(CHILD(it), target);
}

static size_t const_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    return fixed_fill(it, scores, const_next_batch(it, docs, NULL, max));
}

static const sc_doc_iter_ops const_ops = {
    "constant_score",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    const_next,
    const_advance,
    const_cost,
    const_into_bitset,
    const_run_end,
    const_next_batch,
    fixed_score,
    fixed_max_score,
    const_shallow,
    sc_doc_iter_ignore_min_score,
    const_score_batch,
};

sc_doc_iter *sc_iter_constant(sc_arena *a, sc_doc_iter *child, float score)
{
    const_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->f.base.ops = &const_ops;
    x->f.base.stats = child->stats;
    x->c = child;
    x->f.score = score;
    return &x->f.base;
}
