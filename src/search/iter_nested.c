/* The block join iterator (iter.h, Lucene's ToParentBlockJoinQuery scorer): nested child
 * documents sit immediately before their root in a segment (index/nested.c), so the roots of a
 * child query's matches are found by walking the child iterator block by block: the root of a
 * child doc is the next set bit of the segment's root bitset. Scores of a root's matching
 * children combine per score mode (avg, sum, min, max, none) in double, as Lucene does. Its
 * max_score is unbounded (FLT_MAX): a sum over children has no per-block bound here. */
#include <float.h>

#include "search/iter.h"

typedef struct nested_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
    const sc_bitset *parents;
    uint32_t n_docs;
    sc_nested_score_mode mode;
    float boost;
    float score;
} nested_iter;

/* The last set bit < i, or -1. */
static int64_t prev_set(const sc_bitset *b, uint32_t i)
{
    if (i == 0)
        return -1;
    size_t last = (size_t)i - 1;
    size_t w = last >> 6;
    uint64_t word = b->words[w] & (~0ull >> (63 - (last & 63)));
    while (!word) {
        if (w == 0)
            return -1;
        word = b->words[--w];
    }
    return (int64_t)((w << 6) + 63 - (size_t)__builtin_clzll(word));
}

/* Moves to the root of child doc cd (the child iterator's current doc, or END), scoring it
 * from every matching child of that block; leaves the child iterator past the root. */
static uint32_t collect(nested_iter *n, uint32_t cd)
{
    sc_doc_iter *it = &n->base;
    it->positioned = true;
    size_t parent = cd == SC_DOC_END ? n->n_docs : sc_bitset_next_set(n->parents, cd);
    if (parent >= n->n_docs) {
        n->score = 0;
        return it->doc = SC_DOC_END;
    }
    double acc = 0;
    uint32_t count = 0;
    bool scoring = n->mode != SC_NESTED_SCORE_NONE;
    while (cd < parent) {
        if (scoring) {
            double s = sc_doc_iter_score(n->c);
            if (count == 0)
                acc = s;
            else if (n->mode == SC_NESTED_SCORE_MIN)
                acc = s < acc ? s : acc;
            else if (n->mode == SC_NESTED_SCORE_MAX)
                acc = s > acc ? s : acc;
            else
                acc += s;
        }
        count++;
        cd = sc_doc_iter_next(n->c);
    }
    if (cd == parent) /* a root matched the child query: not a child, skip it */
        sc_doc_iter_next(n->c);
    if (n->mode == SC_NESTED_SCORE_AVG && count)
        acc /= count;
    n->score = scoring ? (float)acc * n->boost : 0.0f;
    return it->doc = (uint32_t)parent;
}

static uint32_t nested_next(sc_doc_iter *it)
{
    nested_iter *n = (nested_iter *)it;
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    uint32_t cd = n->c->positioned ? n->c->doc : sc_doc_iter_next(n->c);
    if (it->positioned && cd != SC_DOC_END && cd <= it->doc)
        cd = sc_doc_iter_advance(n->c, it->doc + 1);
    return collect(n, cd);
}

static uint32_t nested_advance(sc_doc_iter *it, uint32_t target)
{
    nested_iter *n = (nested_iter *)it;
    if (it->positioned && (it->doc == SC_DOC_END || target <= it->doc))
        return it->doc;
    if (target >= n->n_docs) {
        it->positioned = true;
        return it->doc = SC_DOC_END;
    }
    /* the children of target's block (if target is a root) start after the previous root */
    uint32_t start = (uint32_t)(prev_set(n->parents, target) + 1);
    uint32_t cd = n->c->positioned ? n->c->doc : SC_DOC_END;
    if (!n->c->positioned || (cd != SC_DOC_END && cd < start))
        cd = sc_doc_iter_advance(n->c, start);
    return collect(n, cd);
}

static uint64_t nested_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const nested_iter *)it)->c);
}

static float nested_score(sc_doc_iter *it)
{
    return ((nested_iter *)it)->score;
}

static float nested_max_score(sc_doc_iter *it, uint32_t upto)
{
    (void)upto;
    return ((nested_iter *)it)->mode == SC_NESTED_SCORE_NONE ? 0.0f : FLT_MAX;
}

static uint32_t nested_advance_shallow(sc_doc_iter *it, uint32_t target)
{
    (void)it;
    (void)target;
    return SC_DOC_END; /* one window to the end: there is no bound to refine */
}

/* The bulk operations use the counted generic fallbacks: a root is known only after its
 * whole block of children was read, so there is no faster path to forward. */
static const sc_doc_iter_ops nested_ops = {
    .name = "nested",
    .native = 0,
    .next = nested_next,
    .advance = nested_advance,
    .cost = nested_cost,
    .into_bitset = sc_doc_iter_fallback_into_bitset,
    .run_end = sc_doc_iter_fallback_run_end,
    .next_batch = sc_doc_iter_fallback_next_batch,
    .score = nested_score,
    .max_score = nested_max_score,
    .advance_shallow = nested_advance_shallow,
    .set_min_score = sc_doc_iter_ignore_min_score,
    .score_batch = sc_doc_iter_fallback_score_batch,
};

sc_doc_iter *sc_iter_nested(sc_arena *a, sc_doc_iter *child, const sc_bitset *parents,
                            uint32_t n_docs, sc_nested_score_mode mode, float boost)
{
    nested_iter *n = sc_arena_calloc(a, 1, sizeof *n);
    if (!n)
        return NULL;
    n->base.ops = &nested_ops;
    n->base.stats = child->stats;
    n->c = child;
    n->parents = parents;
    n->n_docs = n_docs < parents->n_bits ? n_docs : (uint32_t)parents->n_bits;
    n->mode = mode;
    n->boost = boost;
    return &n->base;
}
