/* The doc-list iterator (sc_iter_docs): a sorted list of docs with a score each, what a kNN
 * query becomes once its nearest neighbours are known (Lucene's DocAndScoreQuery). Every bulk
 * op is native: the list is an array, so batches and bitsets are straight loops. */
#include "search/iter.h"

typedef struct docs_iter {
    sc_doc_iter base;
    const uint32_t *docs;
    const float *scores;
    size_t n, i; /* i: index of the current doc (n when exhausted) */
    float max;
} docs_iter;

/* Moves to the first listed doc >= d, searching from the current index. */
static uint32_t docs_from(sc_doc_iter *it, uint32_t d)
{
    docs_iter *x = (docs_iter *)it;
    size_t lo = it->positioned ? x->i : 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->docs[mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    x->i = lo;
    it->positioned = true;
    return it->doc = lo < x->n ? x->docs[lo] : SC_DOC_END;
}

static uint32_t docs_next(sc_doc_iter *it)
{
    docs_iter *x = (docs_iter *)it;
    if (!it->positioned)
        return docs_from(it, 0);
    if (it->doc == SC_DOC_END)
        return SC_DOC_END;
    x->i++;
    return it->doc = x->i < x->n ? x->docs[x->i] : SC_DOC_END;
}

static uint32_t docs_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return docs_from(it, target);
}

static uint64_t docs_cost(const sc_doc_iter *it)
{
    return ((const docs_iter *)it)->n;
}

static void docs_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    docs_iter *x = (docs_iter *)it;
    if (!it->positioned)
        docs_from(it, 0);
    while (x->i < x->n && x->docs[x->i] < upto) {
        sc_bitset_set(bs, x->docs[x->i] - base);
        x->i++;
    }
    it->doc = x->i < x->n ? x->docs[x->i] : SC_DOC_END;
}

static uint32_t docs_run_end(sc_doc_iter *it)
{
    docs_iter *x = (docs_iter *)it;
    if (it->doc == SC_DOC_END)
        return SC_DOC_END;
    size_t j = x->i;
    while (j + 1 < x->n && x->docs[j + 1] == x->docs[j] + 1)
        j++;
    return x->docs[j] + 1;
}

static size_t docs_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, float *scores,
                         size_t max)
{
    docs_iter *x = (docs_iter *)it;
    size_t start = !it->positioned ? 0 : it->doc == SC_DOC_END ? x->n : x->i + 1;
    size_t n = 0;
    for (size_t j = start; j < x->n && n < max; j++, n++) {
        docs[n] = x->docs[j];
        if (freqs)
            freqs[n] = 1;
        if (scores)
            scores[n] = x->scores[j];
    }
    it->positioned = true;
    x->i = n ? start + n - 1 : x->n;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static size_t docs_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    return docs_batch(it, docs, freqs, NULL, max);
}

static size_t docs_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    return docs_batch(it, docs, NULL, scores, max);
}

static float docs_score(sc_doc_iter *it)
{
    docs_iter *x = (docs_iter *)it;
    return x->scores[x->i];
}

static float docs_max_score(sc_doc_iter *it, uint32_t upto)
{
    (void)upto;
    return ((docs_iter *)it)->max;
}

static uint32_t docs_shallow(sc_doc_iter *it, uint32_t target)
{
    (void)it;
    (void)target;
    return SC_DOC_END;
}

static const sc_doc_iter_ops docs_ops = {
    "doc_list",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |
        SC_ITER_NATIVE_SCORE_BATCH,
    docs_next,
    docs_advance,
    docs_cost,
    docs_into_bitset,
    docs_run_end,
    docs_next_batch,
    docs_score,
    docs_max_score,
    docs_shallow,
    sc_doc_iter_ignore_min_score,
    docs_score_batch,
};

sc_doc_iter *sc_iter_docs(sc_arena *a, const uint32_t *docs, const float *scores, size_t n)
{
    docs_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = &docs_ops;
    x->docs = docs;
    x->scores = scores;
    x->n = n;
    for (size_t i = 0; i < n; i++)
        x->max = scores[i] > x->max ? scores[i] : x->max;
    return &x->base;
}
