/* Phrase iterator (search/iter.h): a leapfrog conjunction over the terms' postings; positions
 * are read only for docs all terms contain. Slop 0 counts exact matches (Lucene's
 * ExactPhraseMatcher); slop > 0 runs Lucene's SloppyPhraseMatcher (for phrases without
 * repeated terms) and sums 1 / (1 + match length) per match as the phrase frequency. */
#include <string.h>

#include "search/iter.h"

typedef struct pp {
    uint32_t *pos; /* positions of the term in the current doc */
    uint32_t cap, n, idx;
    uint32_t offset;   /* the term's position in the query */
    int64_t position;  /* pos[idx] - offset */
    uint32_t ord;
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
} phrase_iter;

static bool load_positions(phrase_iter *x, size_t i)
{
    pp *q = &x->pps[i];
    uint32_t f = sc_postings_freq(&x->p[i]);
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
    q->n = (uint32_t)sc_postings_positions(&x->p[i], q->pos, f);
    q->idx = 0;
    return q->n > 0;
}

/* Exact: positions p of term 0 such that every term i has p - off0 + off_i. */
static float exact_freq(phrase_iter *x)
{
    size_t n = x->n;
    uint32_t cursor[64];
    memset(cursor, 0, sizeof cursor);
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
        if (ok)
            freq += 1.0f;
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
static float sloppy_freq(phrase_iter *x)
{
    size_t n = x->n;
    pp *q[64];
    size_t qn = 0;
    int64_t end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        pp *p = &x->pps[i];
        p->idx = 0;
        p->position = (int64_t)p->pos[0] - p->offset;
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
        (out) = q[m_]->position;                                                                   \
    } while (0)
    for (;;) {
        pp *p;
        POP_MIN(p);
        int64_t match_length = end - p->position;
        int64_t next;
        TOP_POS(next);
        bool done = false, matched = false;
        while (!done) {
            if (!pp_next(p)) {
                done = true;
                break;
            }
            if (p->position > end)
                end = p->position;
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

static bool phrase_matches(phrase_iter *x)
{
    for (size_t i = 0; i < x->n; i++)
        if (!load_positions(x, i))
            return false;
    x->freq = x->slop == 0 ? exact_freq(x) : sloppy_freq(x);
    return x->freq > 0;
}

/* Leapfrog from the lead's doc d, then check positions; repeat until a match or END. */
static uint32_t phrase_settle(phrase_iter *x, uint32_t d)
{
    sc_postings *lead = &x->p[0];
    for (;;) {
    again:
        if (d == SC_DOC_END)
            break;
        for (size_t i = 1; i < x->n; i++) {
            sc_postings *c = &x->p[i];
            uint32_t cd = c->started && (c->exhausted || c->doc >= d) ? c->doc
                                                                     : sc_postings_advance(c, d);
            if (cd == SC_POSTINGS_END) {
                d = SC_DOC_END;
                goto done;
            }
            if (cd > d) {
                d = sc_postings_advance(lead, cd);
                goto again;
            }
        }
        if (phrase_matches(x))
            break;
        if (x->token && (++x->n_cand & 255) == 0 &&
            sc_cancel_token_check(x->token, (x->n_cand & 2047) == 0)) {
            d = SC_DOC_END;
            break;
        }
        d = sc_postings_next(lead);
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
    return phrase_settle(x, sc_postings_next(&x->p[0]));
}

static uint32_t phrase_advance(sc_doc_iter *it, uint32_t target)
{
    phrase_iter *x = (phrase_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    return phrase_settle(x, sc_postings_advance(&x->p[0], target));
}

static uint64_t phrase_cost(const sc_doc_iter *it)
{
    return sc_postings_cost(&((const phrase_iter *)it)->p[0]);
}

static void phrase_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    uint32_t d = it->positioned ? it->doc : phrase_next(it);
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
    return x->bm25 ? x->bm25->weight : 0.0f; /* BM25 approaches weight as freq grows */
}

static uint32_t phrase_shallow(sc_doc_iter *it, uint32_t target)
{
    return SC_DOC_END;
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
    sc_doc_iter_ignore_min_score,
    sc_doc_iter_fallback_score_batch,
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
    x->base.ops = &phrase_ops;
    x->a = a;
    x->p = p;
    x->pps = pps;
    x->n = n;
    x->slop = slop;
    x->bm25 = bm25;
    x->norms = norms;
    return &x->base;
}
