/* Leaf iterator kinds (term postings, all docs, bitset, constant score), the counted generic
 * fallbacks and the cancel token (search/iter.h). */
#include "search/iter.h"

#include <string.h>

#include "base/clock.h"

/* ---- fallbacks -------------------------------------------------------------------------- */

void sc_doc_iter_fallback_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs,
                                      uint32_t base)
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

size_t sc_doc_iter_fallback_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs,
                                       size_t max)
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

size_t sc_doc_iter_fallback_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores,
                                        size_t max)
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

/* ---- cancel token ----------------------------------------------------------------------- */

void sc_cancel_token_init(sc_cancel_token *t, uint64_t deadline_ns)
{
    atomic_init(&t->cancelled, 0);
    atomic_init(&t->fired, 0);
    t->deadline_ns = deadline_ns;
}

bool sc_cancel_token_check(sc_cancel_token *t, bool check_clock)
{
    if (atomic_load_explicit(&t->fired, memory_order_relaxed))
        return true;
    if (atomic_load_explicit(&t->cancelled, memory_order_relaxed)) {
        atomic_store_explicit(&t->fired, 1, memory_order_relaxed);
        return true;
    }
    if (check_clock && t->deadline_ns && sc_clock_now_ns() >= t->deadline_ns) {
        atomic_store_explicit(&t->fired, 2, memory_order_relaxed);
        return true;
    }
    return false;
}

/* ---- shared helpers --------------------------------------------------------------------- */

/* Sets, in dst, bit (i - dst_base) for every set bit i of src in [from, to). */
static void or_bits_range(sc_bitset *dst, uint32_t dst_base, const sc_bitset *src, uint32_t from,
                          uint32_t to)
{
    if (from >= to)
        return;
    if ((dst_base & 63) == 0) {
        /* Word-aligned: whole words with masks at both ends. */
        size_t w0 = from >> 6, w1 = (to - 1) >> 6;
        for (size_t w = w0; w <= w1; w++) {
            uint64_t word = src->words[w];
            if (w == w0)
                word &= ~UINT64_C(0) << (from & 63);
            if (w == w1 && (to & 63))
                word &= ~(~UINT64_C(0) << (to & 63));
            if (word)
                dst->words[w - (dst_base >> 6)] |= word;
        }
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
    if (t->token && t->p.block != t->last_block) {
        t->last_block = t->p.block;
        if (sc_cancel_token_check(t->token, (++t->n_checks & 7) == 0)) {
            t->p.exhausted = true;
            t->p.doc = SC_POSTINGS_END;
            d = SC_DOC_END;
        }
    }
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
    return sc_bm25_score(t->bm25, (float)imp.max_freq, t->norms ? (imp.min_norm ? imp.min_norm : 1)
                                                                 : 1);
}

/* Score bound of the shallow block: the best BM25 over its competitive (freq, norm) pairs
 * (exact for the block's best doc), else the block's (max freq, min norm) bound. */
static float shallow_block_score(const term_iter *t)
{
    sc_postings_impact imps[SC_POSTINGS_BLOCK];
    size_t n = sc_postings_shallow_impacts(&t->p, imps, SC_POSTINGS_BLOCK);
    if (n == 0)
        return impact_score(t, sc_postings_shallow_impact(&t->p));
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float s = sc_bm25_score(t->bm25, (float)imps[i].max_freq, t->norms ? imps[i].min_norm : 1);
        if (s > best)
            best = s;
    }
    return best;
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

/* ---- all docs --------------------------------------------------------------------------- */

typedef struct all_iter {
    sc_doc_iter base;
    uint32_t n_docs;
    float score;
} all_iter;

static uint32_t all_set(sc_doc_iter *it, uint32_t d)
{
    it->positioned = true;
    return it->doc = d < ((all_iter *)it)->n_docs ? d : SC_DOC_END;
}

static uint32_t all_next(sc_doc_iter *it)
{
    if (it->doc == SC_DOC_END && it->positioned)
        return SC_DOC_END;
    return all_set(it, it->positioned ? it->doc + 1 : 0);
}

static uint32_t all_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return all_set(it, target);
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
    uint32_t d = it->positioned ? (it->doc == SC_DOC_END ? SC_DOC_END : it->doc + 1) : 0;
    while (n < max && d < x->n_docs) {
        docs[n] = d;
        if (freqs)
            freqs[n] = 1;
        n++, d++;
    }
    it->positioned = true;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static float all_score(sc_doc_iter *it)
{
    return ((all_iter *)it)->score;
}

static float all_max_score(sc_doc_iter *it, uint32_t upto)
{
    return ((all_iter *)it)->score;
}

static uint32_t end_shallow(sc_doc_iter *it, uint32_t target)
{
    return SC_DOC_END;
}

static size_t all_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t n = all_next_batch(it, docs, NULL, max);
    for (size_t i = 0; i < n; i++)
        scores[i] = ((all_iter *)it)->score;
    return n;
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
    all_score,
    all_max_score,
    end_shallow,
    sc_doc_iter_ignore_min_score,
    all_score_batch,
};

sc_doc_iter *sc_iter_all(sc_arena *a, uint32_t n_docs, float score)
{
    all_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &all_ops;
    x->n_docs = n_docs;
    x->score = score;
    return &x->base;
}

/* ---- bitset ----------------------------------------------------------------------------- */

typedef struct bits_iter {
    sc_doc_iter base;
    const sc_bitset *bs;
    uint32_t n_docs;
    uint64_t cost;
    float score;
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
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    return bits_from(it, it->positioned ? it->doc + 1 : 0);
}

static uint32_t bits_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return bits_from(it, target);
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
    uint32_t d = it->positioned ? (it->doc == SC_DOC_END ? x->n_docs : it->doc + 1) : 0;
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
    it->positioned = true;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static float bits_score(sc_doc_iter *it)
{
    return ((bits_iter *)it)->score;
}

static float bits_max_score(sc_doc_iter *it, uint32_t upto)
{
    return ((bits_iter *)it)->score;
}

static size_t bits_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t n = bits_next_batch(it, docs, NULL, max);
    for (size_t i = 0; i < n; i++)
        scores[i] = ((bits_iter *)it)->score;
    return n;
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
    bits_score,
    bits_max_score,
    end_shallow,
    sc_doc_iter_ignore_min_score,
    bits_score_batch,
};

sc_doc_iter *sc_iter_bitset(sc_arena *a, const sc_bitset *bs, uint32_t n_docs, float score)
{
    bits_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &bits_ops;
    x->bs = bs;
    x->n_docs = n_docs;
    x->cost = sc_bitset_count_range(bs, 0, n_docs);
    x->score = score;
    return &x->base;
}

/* ---- constant score --------------------------------------------------------------------- */

typedef struct const_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
    float score;
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

static float const_score(sc_doc_iter *it)
{
    return ((const_iter *)it)->score;
}

static float const_max_score(sc_doc_iter *it, uint32_t upto)
{
    return ((const_iter *)it)->score;
}

static uint32_t const_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(CHILD(it), target);
}

static size_t const_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t n = sc_doc_iter_next_batch(CHILD(it), docs, NULL, max);
    const_sync(it, CHILD(it)->doc);
    for (size_t i = 0; i < n; i++)
        scores[i] = ((const_iter *)it)->score;
    return n;
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
    const_score,
    const_max_score,
    const_shallow,
    sc_doc_iter_ignore_min_score,
    const_score_batch,
};

sc_doc_iter *sc_iter_constant(sc_arena *a, sc_doc_iter *child, float score)
{
    const_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &const_ops;
    x->base.stats = child->stats;
    x->c = child;
    x->score = score;
    return &x->base;
}

/* ---- wrappers --------------------------------------------------------------------------- */

/* Live docs: the child's docs whose live bit is set. */
typedef struct live_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
    const sc_bitset *live;
    sc_bitset scratch; /* 4,096-bit window for into_bitset, in the arena */
} live_iter;

#define LCHILD(it) (((live_iter *)(it))->c)
#define LIVE(it) (((live_iter *)(it))->live)

static uint32_t live_skip(sc_doc_iter *it, uint32_t d)
{
    while (d != SC_DOC_END && !sc_bitset_test(LIVE(it), d))
        d = sc_doc_iter_next(LCHILD(it));
    it->positioned = true;
    return it->doc = d;
}

static uint32_t live_next(sc_doc_iter *it)
{
    return live_skip(it, sc_doc_iter_next(LCHILD(it)));
}

static uint32_t live_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return live_skip(it, sc_doc_iter_advance(LCHILD(it), target));
}

static uint64_t live_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const live_iter *)it)->c);
}

static void live_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    live_iter *x = (live_iter *)it;
    sc_doc_iter *c = x->c;
    uint32_t d = it->positioned ? it->doc : sc_doc_iter_next(c);
    /* Windows of 4,096 docs, word-aligned: the child writes into the scratch window, which is
     * ANDed with the live bits and ORed into the caller's set. */
    while (d < upto) {
        uint32_t wbase = d & ~63u;
        uint32_t wend = wbase + 4096 < upto ? wbase + 4096 : upto;
        if (wend > x->live->n_bits)
            wend = (uint32_t)x->live->n_bits;
        if (wend <= d) { /* at or past the end of the segment */
            d = SC_DOC_END;
            break;
        }
        memset(x->scratch.words, 0, 64 * sizeof(uint64_t));
        sc_doc_iter_into_bitset(c, wend, &x->scratch, wbase);
        size_t nw = (wend - wbase + 63) / 64;
        for (size_t w = 0; w < nw; w++) {
            uint64_t word = x->scratch.words[w] & x->live->words[(wbase >> 6) + w];
            if (!word)
                continue;
            if ((base & 63) == 0) {
                bs->words[((wbase - base) >> 6) + w] |= word;
            } else {
                while (word) {
                    uint32_t doc = wbase + (uint32_t)w * 64 + (uint32_t)__builtin_ctzll(word);
                    sc_bitset_set(bs, doc - base);
                    word &= word - 1;
                }
            }
        }
        d = c->doc;
    }
    live_skip(it, d);
}

static uint32_t live_run_end(sc_doc_iter *it)
{
    uint32_t r = sc_doc_iter_run_end(LCHILD(it));
    uint32_t d = it->doc;
    const sc_bitset *lv = LIVE(it);
    if (r == SC_DOC_END || r > lv->n_bits)
        r = (uint32_t)lv->n_bits;
    for (uint32_t i = d + 1; i < r; i++)
        if (!sc_bitset_test(lv, i))
            return i;
    return r;
}

static size_t live_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    size_t kept = 0;
    while (kept == 0) {
        size_t n = sc_doc_iter_next_batch(LCHILD(it), docs, freqs, max);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (!sc_bitset_test(LIVE(it), docs[i]))
                continue;
            docs[kept] = docs[i];
            if (freqs)
                freqs[kept] = freqs[i];
            kept++;
        }
    }
    it->positioned = true;
    it->doc = kept ? docs[kept - 1] : SC_DOC_END;
    return kept;
}

static float live_score(sc_doc_iter *it)
{
    return sc_doc_iter_score(LCHILD(it));
}

static float live_max_score(sc_doc_iter *it, uint32_t upto)
{
    return sc_doc_iter_max_score(LCHILD(it), upto);
}

static uint32_t live_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(LCHILD(it), target);
}

static void live_min_score(sc_doc_iter *it, float min_score)
{
    sc_doc_iter_set_min_score(LCHILD(it), min_score);
}

static size_t live_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t kept = 0;
    while (kept == 0) {
        size_t n = sc_doc_iter_score_batch(LCHILD(it), docs, scores, max);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (!sc_bitset_test(LIVE(it), docs[i]))
                continue;
            docs[kept] = docs[i];
            scores[kept] = scores[i];
            kept++;
        }
    }
    it->positioned = true;
    it->doc = kept ? docs[kept - 1] : SC_DOC_END;
    return kept;
}

static const sc_doc_iter_ops live_ops = {
    "live_docs",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    live_next,
    live_advance,
    live_cost,
    live_into_bitset,
    live_run_end,
    live_next_batch,
    live_score,
    live_max_score,
    live_shallow,
    live_min_score,
    live_score_batch,
};

sc_doc_iter *sc_iter_live_docs(sc_arena *a, sc_doc_iter *child, const sc_bitset *live)
{
    live_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    uint64_t *words = sc_arena_alloc(a, 65 * sizeof(uint64_t));
    if (!x || !words)
        return NULL;
    x->base.ops = &live_ops;
    x->base.stats = child->stats;
    x->c = child;
    x->live = live;
    x->scratch.words = words;
    x->scratch.n_bits = 4096 + 64;
    return &x->base;
}

/* Cancellation: stops at the first check after the token fires. */
typedef struct cancel_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
    sc_cancel_token *token;
    uint32_t countdown; /* single-doc calls until the next check */
} cancel_iter;

#define CCHILD(it) (((cancel_iter *)(it))->c)
#define CHECK_EVERY 4096

static bool cancel_stop(sc_doc_iter *it, bool clock)
{
    cancel_iter *x = (cancel_iter *)it;
    if (!sc_cancel_token_check(x->token, clock))
        return false;
    it->positioned = true;
    it->doc = SC_DOC_END;
    return true;
}

static bool cancel_tick(sc_doc_iter *it)
{
    cancel_iter *x = (cancel_iter *)it;
    if (--x->countdown)
        return false;
    x->countdown = CHECK_EVERY;
    return cancel_stop(it, true);
}

static uint32_t cancel_next(sc_doc_iter *it)
{
    if (cancel_tick(it))
        return SC_DOC_END;
    it->positioned = true;
    return it->doc = sc_doc_iter_next(CCHILD(it));
}

static uint32_t cancel_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    if (cancel_tick(it))
        return SC_DOC_END;
    it->positioned = true;
    return it->doc = sc_doc_iter_advance(CCHILD(it), target);
}

static uint64_t cancel_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const cancel_iter *)it)->c);
}

static void cancel_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    if (cancel_stop(it, true))
        return;
    sc_doc_iter_into_bitset(CCHILD(it), upto, bs, base);
    it->positioned = true;
    it->doc = CCHILD(it)->doc;
}

static uint32_t cancel_run_end(sc_doc_iter *it)
{
    return sc_doc_iter_run_end(CCHILD(it));
}

static size_t cancel_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    if (cancel_stop(it, true))
        return 0;
    size_t n = sc_doc_iter_next_batch(CCHILD(it), docs, freqs, max);
    it->positioned = true;
    it->doc = CCHILD(it)->doc;
    return n;
}

static float cancel_score(sc_doc_iter *it)
{
    return sc_doc_iter_score(CCHILD(it));
}

static float cancel_max_score(sc_doc_iter *it, uint32_t upto)
{
    return sc_doc_iter_max_score(CCHILD(it), upto);
}

static uint32_t cancel_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(CCHILD(it), target);
}

static void cancel_min_score(sc_doc_iter *it, float min_score)
{
    sc_doc_iter_set_min_score(CCHILD(it), min_score);
}

static size_t cancel_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    cancel_iter *x = (cancel_iter *)it;
    /* the clock is read every 32 batches (~4,096 docs), the flag every batch */
    if (cancel_stop(it, (++x->countdown & 31) == 0))
        return 0;
    size_t n = sc_doc_iter_score_batch(CCHILD(it), docs, scores, max);
    it->positioned = true;
    it->doc = CCHILD(it)->doc;
    return n;
}

static const sc_doc_iter_ops cancel_ops = {
    "cancel",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    cancel_next,
    cancel_advance,
    cancel_cost,
    cancel_into_bitset,
    cancel_run_end,
    cancel_next_batch,
    cancel_score,
    cancel_max_score,
    cancel_shallow,
    cancel_min_score,
    cancel_score_batch,
};

sc_doc_iter *sc_iter_cancel(sc_arena *a, sc_doc_iter *child, sc_cancel_token *token)
{
    cancel_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &cancel_ops;
    x->base.stats = child->stats;
    x->c = child;
    x->token = token;
    x->countdown = CHECK_EVERY;
    return &x->base;
}

/* Profiling: counts each call, forwards everything. */
typedef struct prof_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
    uint64_t *counts;
} prof_iter;

#define PCHILD(it) (((prof_iter *)(it))->c)
#define PCOUNT(it, k) (((prof_iter *)(it))->counts[k]++)

static uint32_t prof_sync(sc_doc_iter *it)
{
    it->positioned = true;
    return it->doc = PCHILD(it)->doc;
}

static uint32_t prof_next(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_NEXT);
    sc_doc_iter_next(PCHILD(it));
    return prof_sync(it);
}

static uint32_t prof_advance(sc_doc_iter *it, uint32_t target)
{
    PCOUNT(it, SC_PROF_ADVANCE);
    if (it->positioned && target <= it->doc)
        return it->doc;
    sc_doc_iter_advance(PCHILD(it), target);
    return prof_sync(it);
}

static uint64_t prof_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const prof_iter *)it)->c);
}

static void prof_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    PCOUNT(it, SC_PROF_INTO_BITSET);
    sc_doc_iter_into_bitset(PCHILD(it), upto, bs, base);
    prof_sync(it);
}

static uint32_t prof_run_end(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_RUN_END);
    return sc_doc_iter_run_end(PCHILD(it));
}

static size_t prof_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    PCOUNT(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_next_batch(PCHILD(it), docs, freqs, max);
    prof_sync(it);
    return n;
}

static float prof_score(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_SCORE);
    return sc_doc_iter_score(PCHILD(it));
}

static float prof_max_score(sc_doc_iter *it, uint32_t upto)
{
    return sc_doc_iter_max_score(PCHILD(it), upto);
}

static uint32_t prof_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(PCHILD(it), target);
}

static void prof_min_score(sc_doc_iter *it, float min_score)
{
    sc_doc_iter_set_min_score(PCHILD(it), min_score);
}

static size_t prof_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    PCOUNT(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_score_batch(PCHILD(it), docs, scores, max);
    prof_sync(it);
    return n;
}

static const sc_doc_iter_ops prof_ops = {
    "profile",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    prof_next,
    prof_advance,
    prof_cost,
    prof_into_bitset,
    prof_run_end,
    prof_next_batch,
    prof_score,
    prof_max_score,
    prof_shallow,
    prof_min_score,
    prof_score_batch,
};

sc_doc_iter *sc_iter_profile(sc_arena *a, sc_doc_iter *child, uint64_t *counts)
{
    prof_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &prof_ops;
    x->base.stats = child->stats;
    x->c = child;
    x->counts = counts;
    return &x->base;
}
