/* Boolean iterator kinds (search/iter.h): conjunction (leapfrog), disjunction (a heap by doc,
 * with min-should-match and dis_max scoring), exclusion, required+optional and boosting.
 * Scores are summed as Lucene does: in double, cast to float once per node. */
#include <stdlib.h>
#include <string.h>

#include "search/internal.h"
#include "search/iter.h"

static sc_iter_stats *first_stats(sc_doc_iter **c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i]->stats)
            return c[i]->stats;
    return NULL;
}

/* ---- conjunction ------------------------------------------------------------------------ */

typedef struct conj_iter {
    sc_doc_iter base;
    sc_doc_iter **c; /* sorted by cost, cheapest (the lead) first */
    bool *scoring;
    bool *approx; /* two-phase phrase children: confirmed once every clause agrees */
    size_t n;
    bool any_approx;
    bool dense;         /* into_bitset by ANDing per-child 4,096-doc windows */
    sc_bitset acc, tmp; /* the windows (arena) */
    float min_score;    /* > 0: a collector's threshold (top-k pruning) */
} conj_iter;

/* With a minimum score: whether the lead's doc d can beat it, from the lead's score and the
 * other scoring clauses' block bounds, before they move (BlockMaxConjunctionScorer's check).
 * Each bound is >= that clause's score and the double sum is monotone, so the float of the
 * sum bounds conj_score's. */
static bool conj_may_compete(conj_iter *x, uint32_t d)
{
    /* an unconfirmed phrase lead has no score yet: its bound stands in */
    double s = !x->scoring[0] ? 0.0
               : x->approx[0] ? sc_doc_iter_max_score(x->c[0], d)
                              : sc_doc_iter_score(x->c[0]);
    for (size_t i = 1; i < x->n; i++)
        if (x->scoring[i])
            s += sc_doc_iter_max_score(x->c[i], d);
    return (float)s > x->min_score;
}

/* Leapfrog from candidate d (the lead is on d) until all children agree; then the two-phase
 * children confirm d (positions), the next candidate if one does not. */
static uint32_t conj_align(conj_iter *x, uint32_t d)
{
    sc_doc_iter *lead = x->c[0];
again:
    while (d != SC_DOC_END) {
        if (x->min_score > 0.0f && !conj_may_compete(x, d)) {
            d = sc_doc_iter_next(lead);
            continue;
        }
        for (size_t i = 1; i < x->n; i++) {
            sc_doc_iter *ci = x->c[i];
            uint32_t cd = ci->positioned && ci->doc >= d ? ci->doc : sc_doc_iter_advance(ci, d);
            if (cd > d) {
                d = sc_doc_iter_advance(lead, cd);
                goto again;
            }
        }
        if (x->any_approx)
            for (size_t i = 0; i < x->n; i++)
                if (x->approx[i] && !sc__iter_phrase_confirm(x->c[i])) {
                    d = sc_doc_iter_next(lead);
                    goto again;
                }
        break;
    }
    x->base.positioned = true;
    return x->base.doc = d;
}

static uint32_t conj_next(sc_doc_iter *it)
{
    conj_iter *x = (conj_iter *)it;
    if (it->positioned && it->doc == SC_DOC_END)
        return SC_DOC_END;
    return conj_align(x, sc_doc_iter_next(x->c[0]));
}

static uint32_t conj_advance(sc_doc_iter *it, uint32_t target)
{
    conj_iter *x = (conj_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    return conj_align(x, sc_doc_iter_advance(x->c[0], target));
}

static uint64_t conj_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const conj_iter *)it)->c[0]);
}

/* Dense AND: every child ORs its docs of a 4,096-doc window into its own bitset in bulk (its
 * native into_bitset), the windows are ANDed word by word, the result ORed into the caller's
 * set; then the children are re-aligned after the window. */
static void conj_into_bitset_dense(conj_iter *x, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    uint32_t d = x->base.doc;
    while (d < upto) {
        uint32_t wbase = d & ~63u;
        uint32_t wend = upto - wbase > 4096 ? wbase + 4096 : upto;
        size_t nw = (wend - wbase + 63) / 64;
        memset(x->acc.words, 0, nw * sizeof(uint64_t));
        sc_doc_iter_into_bitset(x->c[0], wend, &x->acc, wbase);
        uint64_t any = 1;
        for (size_t i = 1; i < x->n && any; i++) {
            /* once the AND is empty the other children are not decoded here: conj_align
             * moves them past the window */
            memset(x->tmp.words, 0, nw * sizeof(uint64_t));
            if (x->c[i]->doc < wend)
                sc_doc_iter_into_bitset(x->c[i], wend, &x->tmp, wbase);
            any = 0;
            for (size_t w = 0; w < nw; w++)
                any |= x->acc.words[w] &= x->tmp.words[w];
        }
        if ((base & 63) == 0) { /* whole words, no branch per word */
            uint64_t *dst = bs->words + ((wbase - base) >> 6);
            for (size_t w = 0; w < nw; w++)
                dst[w] |= x->acc.words[w];
        } else {
            for (size_t w = 0; w < nw; w++)
                for (uint64_t word = x->acc.words[w]; word; word &= word - 1)
                    sc_bitset_set(bs, wbase + (uint32_t)w * 64 + (uint32_t)__builtin_ctzll(word) -
                                          base);
        }
        d = conj_align(x, x->c[0]->doc);
    }
}

/* Leapfrog straight into the set (sparse AND), or windows when dense. */
static void conj_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    conj_iter *x = (conj_iter *)it;
    if (!it->positioned)
        conj_next(it);
    if (x->dense && x->acc.words) {
        conj_into_bitset_dense(x, upto, bs, base);
        return;
    }
    uint32_t d = it->doc;
    while (d < upto) {
        sc_bitset_set(bs, d - base);
        d = conj_next(it);
    }
}

static uint32_t conj_run_end(sc_doc_iter *it)
{
    conj_iter *x = (conj_iter *)it;
    uint32_t r = SC_DOC_END;
    for (size_t i = 0; i < x->n; i++) {
        uint32_t ri = sc_doc_iter_run_end(x->c[i]);
        if (ri < r)
            r = ri;
    }
    return r;
}

static float conj_score(sc_doc_iter *it)
{
    conj_iter *x = (conj_iter *)it;
    double sum = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->scoring[i])
            sum += sc_doc_iter_score(x->c[i]);
    return (float)sum;
}

static float conj_max_score(sc_doc_iter *it, uint32_t upto)
{
    conj_iter *x = (conj_iter *)it;
    double sum = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->scoring[i])
            sum += sc_doc_iter_max_score(x->c[i], upto);
    return (float)sum * 1.0000001f;
}

static uint32_t conj_shallow(sc_doc_iter *it, uint32_t target)
{
    conj_iter *x = (conj_iter *)it;
    uint32_t r = SC_DOC_END;
    for (size_t i = 0; i < x->n; i++) {
        if (!x->scoring[i])
            continue;
        uint32_t e = sc_doc_iter_advance_shallow(x->c[i], target);
        if (e < r)
            r = e;
    }
    return r;
}

static void conj_min_score(sc_doc_iter *it, float min_score)
{
    ((conj_iter *)it)->min_score = min_score;
}

static const sc_doc_iter_ops conj_ops = {
    "conjunction",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END,
    conj_next,
    conj_advance,
    conj_cost,
    conj_into_bitset,
    conj_run_end,
    sc_doc_iter_fallback_next_batch,
    conj_score,
    conj_max_score,
    conj_shallow,
    conj_min_score,
    sc_doc_iter_fallback_score_batch,
};

sc_doc_iter *sc_iter_conjunction(sc_arena *a, sc_doc_iter **children, size_t n, size_t n_scoring)
{
    if (n == 0)
        return NULL;
    conj_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    sc_doc_iter **c = sc_arena_alloc(a, n * sizeof *c);
    bool *sc = sc_arena_alloc(a, n);
    if (!x || !c || !sc)
        return NULL;
    memcpy(c, children, n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        sc[i] = i < n_scoring;
    /* Insertion sort by cost (n is small), carrying the scoring flags. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && sc_doc_iter_cost(c[j]) < sc_doc_iter_cost(c[j - 1]); j--) {
            sc_doc_iter *t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
            bool b = sc[j];
            sc[j] = sc[j - 1];
            sc[j - 1] = b;
        }
    bool *ap = sc_arena_calloc(a, n, sizeof *ap);
    if (!ap)
        return NULL;
    for (size_t i = 0; i < n && n > 1; i++)
        x->any_approx |= ap[i] = sc__iter_phrase_make_approximate(c[i]);
    x->base.ops = &conj_ops;
    x->base.stats = first_stats(children, n);
    x->c = c;
    x->scoring = sc;
    x->approx = ap;
    x->n = n;
    return &x->base;
}

bool sc__iter_conjunction_batch_children(sc_doc_iter *it, sc_doc_iter ***children,
                                         const bool **scoring, size_t *n)
{
    if (it->ops != &conj_ops || it->positioned)
        return false;
    conj_iter *x = (conj_iter *)it;
    if (x->n < 2)
        return false;
    for (size_t i = 0; i < x->n; i++)
        if (!(x->c[i]->ops->native & SC_ITER_NATIVE_SCORE_BATCH) || x->c[i]->positioned)
            return false;
    *children = x->c;
    *scoring = x->scoring;
    *n = x->n;
    return true;
}

void sc_iter_conjunction_set_dense(sc_doc_iter *it, sc_arena *a, bool dense)
{
    conj_iter *x = (conj_iter *)it;
    if (it->ops != &conj_ops || x->any_approx) /* windows would hold unconfirmed docs */
        return;
    if (dense && !x->acc.words) {
        x->acc.words = sc_arena_alloc(a, 65 * sizeof(uint64_t));
        x->tmp.words = sc_arena_alloc(a, 65 * sizeof(uint64_t));
        if (!x->acc.words || !x->tmp.words) {
            x->acc.words = x->tmp.words = NULL;
            return; /* stays on the leapfrog path */
        }
        x->acc.n_bits = x->tmp.n_bits = 4096 + 64;
    }
    x->dense = dense;
}

/* ---- disjunction ------------------------------------------------------------------------ */

typedef struct disj_iter {
    sc_doc_iter base;
    sc_doc_iter **c;
    sc_doc_iter **heap; /* min-heap by doc over the children */
    size_t n;
    uint32_t min_match;
    sc_disj_mode mode;
    float tie;
    uint64_t cost;
    /* Block-max MaxScore once a collector sets a minimum score: children by global max score
     * ascending; the first n_non ("non-essential") cannot reach the threshold together, so
     * only the others lead, and the non-essential ones are probed only while a doc can still
     * compete. */
    bool pruning;
    float thr;
    sc_doc_iter **by_max;
    float *maxs;
    double *prefix; /* prefix[i] = sum of maxs[0..i) */
    size_t n_non;
} disj_iter;

static uint32_t disj_pruned_from(disj_iter *x, uint32_t target);

static void sift_down(sc_doc_iter **h, size_t n, size_t i)
{
    sc_doc_iter *x = h[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l >= n)
            break;
        m = l + 1 < n && h[l + 1]->doc < h[l]->doc ? l + 1 : l;
        if (h[m]->doc >= x->doc)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
}

static void heapify(disj_iter *x)
{
    for (size_t i = x->n / 2; i-- > 0;)
        sift_down(x->heap, x->n, i);
}

/* Number of children on the heap top's doc. */
static uint32_t count_at(disj_iter *x, uint32_t d)
{
    uint32_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        k += x->c[i]->doc == d;
    return k;
}

/* From the heap's state, settles on the first doc matched by >= min_match children. */
static uint32_t disj_settle(disj_iter *x)
{
    for (;;) {
        uint32_t d = x->heap[0]->doc;
        if (d == SC_DOC_END || x->min_match <= 1 || count_at(x, d) >= x->min_match) {
            x->base.positioned = true;
            return x->base.doc = d;
        }
        /* Too few here: move every child on d forward. */
        while (x->heap[0]->doc == d) {
            sc_doc_iter_next(x->heap[0]);
            sift_down(x->heap, x->n, 0);
        }
    }
}

static uint32_t disj_next(sc_doc_iter *it)
{
    disj_iter *x = (disj_iter *)it;
    if (!it->positioned) {
        for (size_t i = 0; i < x->n; i++)
            sc_doc_iter_next(x->c[i]);
        heapify(x);
        return disj_settle(x);
    }
    uint32_t d = it->doc;
    if (d == SC_DOC_END)
        return d;
    if (x->pruning)
        return disj_pruned_from(x, d + 1);
    while (x->heap[0]->doc == d) {
        sc_doc_iter_next(x->heap[0]);
        sift_down(x->heap, x->n, 0);
    }
    return disj_settle(x);
}

static uint32_t disj_advance(sc_doc_iter *it, uint32_t target)
{
    disj_iter *x = (disj_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    if (!it->positioned) {
        for (size_t i = 0; i < x->n; i++)
            sc_doc_iter_advance(x->c[i], target);
        heapify(x);
        return disj_settle(x);
    }
    if (x->pruning)
        return disj_pruned_from(x, target);
    while (x->heap[0]->doc < target) {
        sc_doc_iter_advance(x->heap[0], target);
        sift_down(x->heap, x->n, 0);
    }
    return disj_settle(x);
}

static uint64_t disj_cost(const sc_doc_iter *it)
{
    return ((const disj_iter *)it)->cost;
}

static void disj_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    disj_iter *x = (disj_iter *)it;
    if (x->min_match > 1) {
        uint32_t d = it->positioned ? it->doc : disj_next(it);
        while (d < upto) {
            sc_bitset_set(bs, d - base);
            d = disj_next(it);
        }
        return;
    }
    if (!it->positioned)
        disj_next(it);
    /* Every child is on or after the current doc: each ORs its own docs in bulk. */
    for (size_t i = 0; i < x->n; i++)
        if (x->c[i]->doc < upto)
            sc_doc_iter_into_bitset(x->c[i], upto, bs, base);
    heapify(x);
    disj_settle(x);
}

static uint32_t disj_run_end(sc_doc_iter *it)
{
    disj_iter *x = (disj_iter *)it;
    uint32_t r = it->doc + 1;
    if (x->min_match > 1)
        return r;
    for (size_t i = 0; i < x->n; i++)
        if (x->c[i]->doc == it->doc) {
            uint32_t ri = sc_doc_iter_run_end(x->c[i]);
            if (ri > r)
                r = ri;
        }
    return r;
}

static float disj_score(sc_doc_iter *it)
{
    disj_iter *x = (disj_iter *)it;
    uint32_t d = it->doc;
    if (x->mode == SC_DISJ_SUM) {
        double sum = 0;
        for (size_t i = 0; i < x->n; i++)
            if (x->c[i]->doc == d)
                sum += sc_doc_iter_score(x->c[i]);
        return (float)sum;
    }
    float max = 0;
    double others = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (x->c[i]->doc != d)
            continue;
        float s = sc_doc_iter_score(x->c[i]);
        if (s >= max) {
            others += max;
            max = s;
        } else {
            others += s;
        }
    }
    return (float)(max + others * x->tie);
}

static float disj_max_score(sc_doc_iter *it, uint32_t upto)
{
    disj_iter *x = (disj_iter *)it;
    double sum = 0;
    float max = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (x->c[i]->doc == SC_DOC_END)
            continue;
        float s = sc_doc_iter_max_score(x->c[i], upto);
        sum += s;
        if (s > max)
            max = s;
    }
    if (x->mode == SC_DISJ_MAX)
        return (float)(max + (sum - max) * x->tie) * 1.0000001f;
    return (float)sum * 1.0000001f;
}

static uint32_t disj_shallow(sc_doc_iter *it, uint32_t target)
{
    disj_iter *x = (disj_iter *)it;
    uint32_t r = SC_DOC_END;
    for (size_t i = 0; i < x->n; i++) {
        if (x->c[i]->doc == SC_DOC_END)
            continue;
        uint32_t e = sc_doc_iter_advance_shallow(x->c[i], target);
        if (e < r)
            r = e;
    }
    return r;
}

static int cmp_max(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    float x = sc_doc_iter_max_score(*(sc_doc_iter *const *)a, SC_DOC_END);
    float y = sc_doc_iter_max_score(*(sc_doc_iter *const *)b, SC_DOC_END);
    return (x > y) - (x < y);
}

static void disj_set_min_score(sc_doc_iter *it, float min_score)
{
    disj_iter *x = (disj_iter *)it;
    if (x->mode != SC_DISJ_SUM || x->min_match > 1 || !it->positioned || !x->by_max)
        return;
    if (!x->pruning) {
        memcpy(x->by_max, x->c, x->n * sizeof *x->by_max);
        qsort_r(x->by_max, x->n, sizeof *x->by_max, cmp_max, NULL);
        x->prefix[0] = 0;
        for (size_t i = 0; i < x->n; i++) {
            x->maxs[i] = sc_doc_iter_max_score(x->by_max[i], SC_DOC_END);
            x->prefix[i + 1] = x->prefix[i] + x->maxs[i];
        }
        x->pruning = true;
    }
    x->thr = min_score;
    size_t k = 0;
    while (k < x->n && (float)x->prefix[k + 1] <= min_score)
        k++;
    x->n_non = k;
}

/* The first doc >= target that may score above the threshold. */
static uint32_t disj_pruned_from(disj_iter *x, uint32_t target)
{
    for (;;) {
        uint32_t d = SC_DOC_END;
        for (size_t i = x->n_non; i < x->n; i++) {
            sc_doc_iter *c = x->by_max[i];
            uint32_t cd = c->doc;
            if (cd < target || !c->positioned)
                cd = sc_doc_iter_advance(c, target);
            if (cd < d)
                d = cd;
        }
        if (d == SC_DOC_END)
            break;
        double s = 0;
        for (size_t i = x->n_non; i < x->n; i++)
            if (x->by_max[i]->doc == d)
                s += sc_doc_iter_score(x->by_max[i]);
        bool ok = true;
        for (size_t j = x->n_non; j-- > 0;) {
            if ((float)(s + x->prefix[j + 1]) <= x->thr) {
                ok = false;
                break;
            }
            sc_doc_iter *c = x->by_max[j];
            uint32_t cd = c->doc;
            if (cd < d || !c->positioned)
                cd = sc_doc_iter_advance(c, d);
            if (cd == d)
                s += sc_doc_iter_score(c);
        }
        if (ok && (float)s > x->thr) {
            x->base.doc = d;
            return d;
        }
        target = d + 1;
    }
    return x->base.doc = SC_DOC_END;
}

static const sc_doc_iter_ops disj_ops = {
    "disjunction",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END,
    disj_next,
    disj_advance,
    disj_cost,
    disj_into_bitset,
    disj_run_end,
    sc_doc_iter_fallback_next_batch,
    disj_score,
    disj_max_score,
    disj_shallow,
    disj_set_min_score,
    sc_doc_iter_fallback_score_batch,
};

bool sc__iter_disjunction_batch_children(sc_doc_iter *it, sc_doc_iter ***children, size_t *n)
{
    if (it->ops != &disj_ops || it->positioned)
        return false;
    disj_iter *x = (disj_iter *)it;
    if (x->mode != SC_DISJ_SUM || x->min_match > 1)
        return false;
    for (size_t i = 0; i < x->n; i++)
        if (!(x->c[i]->ops->native & SC_ITER_NATIVE_SCORE_BATCH) || x->c[i]->positioned)
            return false;
    *children = x->c;
    *n = x->n;
    return true;
}

sc_doc_iter *sc_iter_disjunction(sc_arena *a, sc_doc_iter **children, size_t n, uint32_t min_match,
                                 sc_disj_mode mode, float tie_breaker)
{
    if (n == 0)
        return NULL;
    disj_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    sc_doc_iter **c = sc_arena_alloc(a, n * sizeof *c);
    sc_doc_iter **h = sc_arena_alloc(a, n * sizeof *h);
    if (!x || !c || !h)
        return NULL;
    if (mode == SC_DISJ_SUM && min_match <= 1) {
        x->by_max = sc_arena_alloc(a, n * sizeof *x->by_max);
        x->maxs = sc_arena_alloc(a, n * sizeof *x->maxs);
        x->prefix = sc_arena_alloc(a, (n + 1) * sizeof *x->prefix);
        if (!x->by_max || !x->maxs || !x->prefix)
            return NULL;
    }
    memcpy(c, children, n * sizeof *c);
    memcpy(h, children, n * sizeof *h);
    x->base.ops = &disj_ops;
    x->base.stats = first_stats(children, n);
    x->c = c;
    x->heap = h;
    x->n = n;
    x->min_match = min_match ? min_match : 1;
    x->mode = mode;
    x->tie = tie_breaker;
    for (size_t i = 0; i < n; i++)
        x->cost += sc_doc_iter_cost(c[i]);
    return &x->base;
}

/* ---- exclusion -------------------------------------------------------------------------- */

typedef struct excl_iter {
    sc_doc_iter base;
    sc_doc_iter *in, *ex;
    sc_bitset scratch;  /* a 4,096-doc window (arena) */
    uint64_t *ex_words; /* the excluded docs of the window (bulk path) */
    bool probe;         /* exclusion much denser than the include side: probe per doc */
} excl_iter;

static uint32_t excl_settle(excl_iter *x, uint32_t d)
{
    while (d != SC_DOC_END) {
        sc_doc_iter *ex = x->ex;
        uint32_t e = ex->positioned && ex->doc >= d ? ex->doc : sc_doc_iter_advance(ex, d);
        if (e != d)
            break;
        d = sc_doc_iter_next(x->in);
    }
    x->base.positioned = true;
    return x->base.doc = d;
}

static uint32_t excl_next(sc_doc_iter *it)
{
    excl_iter *x = (excl_iter *)it;
    return excl_settle(x, sc_doc_iter_next(x->in));
}

static uint32_t excl_advance(sc_doc_iter *it, uint32_t target)
{
    excl_iter *x = (excl_iter *)it;
    if (it->positioned && target <= it->doc)
        return it->doc;
    return excl_settle(x, sc_doc_iter_advance(x->in, target));
}

static uint64_t excl_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const excl_iter *)it)->in);
}

static void excl_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    excl_iter *x = (excl_iter *)it;
    uint32_t d = it->positioned ? it->doc : excl_next(it);
    /* Word-aligned windows of 4,096 docs: the included docs go into a scratch window in bulk,
     * the excluded ones are cleared there, and the rest is ORed into the caller's set (whose
     * other bits, maybe set by siblings, are never cleared). */
    while (d < upto) {
        uint32_t wbase = d & ~63u;
        uint32_t wend = upto - wbase > 4096 ? wbase + 4096 : upto;
        memset(x->scratch.words, 0, 64 * sizeof(uint64_t));
        sc_doc_iter_into_bitset(x->in, wend, &x->scratch, wbase);
        sc_doc_iter *ex = x->ex;
        uint32_t e = ex->positioned && ex->doc >= d ? ex->doc : sc_doc_iter_advance(ex, d);
        size_t nw = (wend - wbase + 63) / 64;
        if (e >= wend) {
            /* nothing excluded in this window */
        } else if (x->probe) {
            /* a dense exclusion: advance it to each included doc only */
            for (size_t w = 0; w < nw; w++)
                for (uint64_t word = x->scratch.words[w]; word; word &= word - 1) {
                    uint32_t doc = wbase + (uint32_t)w * 64 + (uint32_t)__builtin_ctzll(word);
                    if (e < doc)
                        e = sc_doc_iter_advance(ex, doc);
                    if (e == doc)
                        x->scratch.words[w] &= ~(UINT64_C(1) << (doc & 63));
                }
            if (e < wend)
                e = sc_doc_iter_advance(ex, wend);
        } else if (ex->ops->native & SC_ITER_NATIVE_INTO_BITSET) {
            /* the excluded docs of the window in bulk, cleared word by word */
            memset(x->ex_words, 0, 64 * sizeof(uint64_t));
            sc_bitset exw = {x->ex_words, 4096 + 64};
            sc_doc_iter_into_bitset(ex, wend, &exw, wbase);
            for (size_t w = 0; w < nw; w++)
                x->scratch.words[w] &= ~x->ex_words[w];
        } else {
            while (e < wend) {
                sc_bitset_clear(&x->scratch, e - wbase);
                e = sc_doc_iter_next(ex);
            }
        }
        for (size_t w = 0; w < nw; w++) {
            uint64_t word = x->scratch.words[w];
            if (!word)
                continue;
            if ((base & 63) == 0) {
                bs->words[((wbase - base) >> 6) + w] |= word;
            } else {
                while (word) {
                    sc_bitset_set(bs, wbase + (uint32_t)w * 64 + (uint32_t)__builtin_ctzll(word) -
                                          base);
                    word &= word - 1;
                }
            }
        }
        d = excl_settle(x, x->in->doc);
    }
}

static uint32_t excl_run_end(sc_doc_iter *it)
{
    excl_iter *x = (excl_iter *)it;
    uint32_t r = sc_doc_iter_run_end(x->in);
    sc_doc_iter *ex = x->ex;
    uint32_t e =
        ex->positioned && ex->doc > it->doc ? ex->doc : sc_doc_iter_advance(ex, it->doc + 1);
    return e < r ? e : r;
}

static float excl_score(sc_doc_iter *it)
{
    return sc_doc_iter_score(((excl_iter *)it)->in);
}

static float excl_max_score(sc_doc_iter *it, uint32_t upto)
{
    return sc_doc_iter_max_score(((excl_iter *)it)->in, upto);
}

static uint32_t excl_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(((excl_iter *)it)->in, target);
}

static void excl_min_score(sc_doc_iter *it, float min_score)
{
    /* excluded docs score as the include side: its skipping is safe */
    sc_doc_iter_set_min_score(((excl_iter *)it)->in, min_score);
}

static const sc_doc_iter_ops excl_ops = {
    "exclusion",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END,
    excl_next,
    excl_advance,
    excl_cost,
    excl_into_bitset,
    excl_run_end,
    sc_doc_iter_fallback_next_batch,
    excl_score,
    excl_max_score,
    excl_shallow,
    excl_min_score,
    sc_doc_iter_fallback_score_batch,
};

bool sc__iter_exclusion_parts(sc_doc_iter *it, sc_doc_iter **include, sc_doc_iter **exclude)
{
    if (it->ops != &excl_ops || it->positioned)
        return false;
    excl_iter *x = (excl_iter *)it;
    *include = x->in;
    *exclude = x->ex;
    return true;
}

sc_doc_iter *sc_iter_exclusion(sc_arena *a, sc_doc_iter *include, sc_doc_iter *exclude)
{
    excl_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    uint64_t *words = sc_arena_alloc(a, 2 * 65 * sizeof(uint64_t));
    if (!x || !words)
        return NULL;
    x->scratch.words = words;
    x->scratch.n_bits = 4096 + 64;
    x->ex_words = words + 65;
    /* excluded docs 8x as many as included ones: probing them per included doc beats
     * decoding them all */
    x->probe = sc_doc_iter_cost(exclude) / 8 > sc_doc_iter_cost(include);
    x->base.ops = &excl_ops;
    x->base.stats = include->stats ? include->stats : exclude->stats;
    x->in = include;
    x->ex = exclude;
    return &x->base;
}

/* ---- required + optional, boosting ------------------------------------------------------ */

typedef struct reqopt_iter {
    sc_doc_iter base;
    sc_doc_iter *req, *opt;
    float factor; /* boosting only */
} reqopt_iter;

static uint32_t ro_sync(sc_doc_iter *it)
{
    it->positioned = true;
    return it->doc = ((reqopt_iter *)it)->req->doc;
}

static uint32_t ro_next(sc_doc_iter *it)
{
    sc_doc_iter_next(((reqopt_iter *)it)->req);
    return ro_sync(it);
}

static uint32_t ro_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    sc_doc_iter_advance(((reqopt_iter *)it)->req, target);
    return ro_sync(it);
}

static uint64_t ro_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const reqopt_iter *)it)->req);
}

static void ro_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    sc_doc_iter_into_bitset(((reqopt_iter *)it)->req, upto, bs, base);
    ro_sync(it);
}

static uint32_t ro_run_end(sc_doc_iter *it)
{
    return sc_doc_iter_run_end(((reqopt_iter *)it)->req);
}

/* Whether the optional side is on the current doc. */
static bool opt_on(reqopt_iter *x)
{
    uint32_t d = x->base.doc;
    sc_doc_iter *o = x->opt;
    uint32_t od = o->positioned && o->doc >= d ? o->doc : sc_doc_iter_advance(o, d);
    return od == d;
}

static float ro_score(sc_doc_iter *it)
{
    reqopt_iter *x = (reqopt_iter *)it;
    float s = sc_doc_iter_score(x->req);
    if (opt_on(x))
        s += sc_doc_iter_score(x->opt);
    return s;
}

static float ro_max_score(sc_doc_iter *it, uint32_t upto)
{
    reqopt_iter *x = (reqopt_iter *)it;
    return sc_doc_iter_max_score(x->req, upto) + sc_doc_iter_max_score(x->opt, upto);
}

static uint32_t ro_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(((reqopt_iter *)it)->req, target);
}

static const sc_doc_iter_ops ro_ops = {
    "req_opt",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END,
    ro_next,
    ro_advance,
    ro_cost,
    ro_into_bitset,
    ro_run_end,
    sc_doc_iter_fallback_next_batch,
    ro_score,
    ro_max_score,
    ro_shallow,
    sc_doc_iter_ignore_min_score,
    sc_doc_iter_fallback_score_batch,
};

static float boost_score(sc_doc_iter *it)
{
    reqopt_iter *x = (reqopt_iter *)it;
    float s = sc_doc_iter_score(x->req);
    return opt_on(x) ? s * x->factor : s;
}

static float boost_max_score(sc_doc_iter *it, uint32_t upto)
{
    reqopt_iter *x = (reqopt_iter *)it;
    float m = sc_doc_iter_max_score(x->req, upto);
    return x->factor > 1.0f ? m * x->factor : m;
}

static const sc_doc_iter_ops boost_ops = {
    "boosting",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END,
    ro_next,
    ro_advance,
    ro_cost,
    ro_into_bitset,
    ro_run_end,
    sc_doc_iter_fallback_next_batch,
    boost_score,
    boost_max_score,
    ro_shallow,
    sc_doc_iter_ignore_min_score,
    sc_doc_iter_fallback_score_batch,
};

static sc_doc_iter *reqopt_new(sc_arena *a, const sc_doc_iter_ops *ops, sc_doc_iter *req,
                               sc_doc_iter *opt, float factor)
{
    reqopt_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    if (!x)
        return NULL;
    x->base.ops = ops;
    x->base.stats = req->stats ? req->stats : opt->stats;
    x->req = req;
    x->opt = opt;
    x->factor = factor;
    return &x->base;
}

bool sc__iter_req_opt_parts(sc_doc_iter *it, sc_doc_iter **required, sc_doc_iter **optional)
{
    if (it->ops != &ro_ops || it->positioned)
        return false;
    reqopt_iter *x = (reqopt_iter *)it;
    *required = x->req;
    *optional = x->opt;
    return true;
}

sc_doc_iter *sc_iter_req_opt(sc_arena *a, sc_doc_iter *required, sc_doc_iter *optional)
{
    return reqopt_new(a, &ro_ops, required, optional, 1.0f);
}

sc_doc_iter *sc_iter_boosting(sc_arena *a, sc_doc_iter *positive, sc_doc_iter *negative,
                              float factor)
{
    return reqopt_new(a, &boost_ops, positive, negative, factor);
}
