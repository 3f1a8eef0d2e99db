/* Constant-score union of a few terms' postings (search/iter.h, sc_iter_term_union): instead
 * of a heap over term iterators, the docs of a window are ORed into a bitset, term by term in
 * bulk (sc_postings_into_bitset), and read back in order. A top-10 of a multi-term query reads
 * its first 1,000 matches this way at a fraction of the cost of a lazy disjunction. Forward
 * windows are sized to hold about 1,024 matches at the terms' summed density and double as the
 * walk goes on; after a jump (advance beyond the window) a window is 64 docs, so a
 * conjunction that leads with another clause does not decode docs it skips. */
#include <string.h>

#include "search/iter.h"

#define MAX_WIDTH 65536
#define NARROW 64
/* Expected matches per window when walking forward: 1,024 (a top-10 with exact totals up to
 * 1,000 reads about that many; "th*e" on the 1M-doc benchmark: 4,096-doc windows 15.8 us,
 * density-sized ones below). */
#define WINDOW_MATCHES 1024

typedef struct union_iter {
    sc_doc_iter base;
    float score;
    uint32_t n_docs;
    uint32_t wbase, wend; /* the loaded window [wbase, wend); wend 0 = none loaded */
    size_t n;
    uint64_t cost;
    sc_postings *p;
    uint32_t *cur; /* each cursor's current doc (SC_DOC_END when done) */
    bool started;
    uint32_t width;  /* of the next forward window: sized by density, doubling up to MAX */
    sc_arena *a;     /* for materialize */
    uint64_t *words; /* min(MAX_WIDTH, n_docs) bits */
} union_iter;

/* Loads the window of docs >= from (width `width`); false when no doc >= from is left. */
static bool load(union_iter *x, uint32_t from, uint32_t width)
{
    if (!x->started) {
        x->started = true;
        for (size_t i = 0; i < x->n; i++)
            x->cur[i] = sc_postings_next(&x->p[i]);
    }
    uint32_t lo = SC_DOC_END;
    for (size_t i = 0; i < x->n; i++) {
        if (x->cur[i] < from)
            x->cur[i] = sc_postings_advance(&x->p[i], from);
        if (x->cur[i] < lo)
            lo = x->cur[i];
    }
    if (lo == SC_DOC_END || lo >= x->n_docs) {
        x->wbase = x->wend = x->n_docs;
        return false;
    }
    uint32_t end = x->n_docs - lo < width ? x->n_docs : lo + width;
    memset(x->words, 0, ((end - lo + 63) / 64) * sizeof(uint64_t));
    sc_bitset bs = {x->words, end - lo};
    for (size_t i = 0; i < x->n; i++) {
        if (x->cur[i] >= end)
            continue;
        sc_postings_into_bitset(&x->p[i], end, &bs, lo);
        x->cur[i] = x->p[i].doc;
        if (x->cur[i] != SC_DOC_END && x->cur[i] < end) /* cannot happen: defensive */
            x->cur[i] = SC_DOC_END;
    }
    x->wbase = lo;
    x->wend = end;
    return true;
}

/* The width of a forward window; each one doubles the next (up to MAX_WIDTH). */
static uint32_t next_width(union_iter *x)
{
    uint32_t w = x->width;
    if (x->width < MAX_WIDTH)
        x->width *= 2;
    return w;
}

/* The first match >= d in the loaded window, or SC_DOC_END. */
static uint32_t in_window(const union_iter *x, uint32_t d)
{
    if (d < x->wbase)
        d = x->wbase;
    if (d >= x->wend)
        return SC_DOC_END;
    uint32_t off = d - x->wbase, nw = (x->wend - x->wbase + 63) / 64;
    uint32_t w = off >> 6;
    uint64_t word = x->words[w] & (~UINT64_C(0) << (off & 63));
    while (!word && ++w < nw)
        word = x->words[w];
    if (!word)
        return SC_DOC_END;
    uint32_t doc = x->wbase + w * 64 + (uint32_t)__builtin_ctzll(word);
    return doc < x->wend ? doc : SC_DOC_END;
}

/* A union of more terms than this sets itself up as one bitset of the rest of the segment
 * on its first jump: narrow windows would advance every cursor per target. */
#define JUMP_TERMS 16

/* ORs every cursor's remaining docs into one bitset over the whole segment (the arena's
 * words), which then stands as the loaded window for good. False when out of memory (the
 * iterator then ends; the arena reports it). */
static bool materialize(union_iter *x)
{
    size_t nw = ((size_t)x->n_docs + 63) / 64 + 1;
    uint64_t *w = sc_arena_calloc(x->a, nw, sizeof *w);
    if (!w)
        return false;
    sc_bitset bs = {w, (size_t)x->n_docs};
    for (size_t i = 0; i < x->n; i++) {
        if (x->cur[i] != SC_DOC_END)
            sc_postings_into_bitset(&x->p[i], x->n_docs, &bs, 0);
        x->cur[i] = SC_DOC_END;
    }
    x->words = w;
    x->wbase = 0;
    x->wend = x->n_docs;
    return true;
}

/* The first match >= d; `jump` when d comes from advance (narrow windows past a jump). */
static uint32_t first_from(union_iter *x, uint32_t d, bool jump)
{
    sc_doc_iter *it = &x->base;
    it->positioned = true;
    for (;;) {
        if (x->wend && d < x->wend) {
            uint32_t doc = in_window(x, d);
            if (doc != SC_DOC_END)
                return it->doc = doc;
            d = x->wend;
        }
        if (d >= x->n_docs)
            return it->doc = SC_DOC_END;
        bool far = jump && x->wend && d > x->wend;
        if (far && x->n > JUMP_TERMS) {
            if (!materialize(x))
                return it->doc = SC_DOC_END;
            continue;
        }
        if (!load(x, d, far ? NARROW : next_width(x)))
            return it->doc = SC_DOC_END;
        jump = false;
    }
}

static uint32_t union_next(sc_doc_iter *it)
{
    union_iter *x = (union_iter *)it;
    if (!it->positioned) {
        /* the first doc is the cursors' smallest: no window yet (a count's first move is
         * followed by into_bitset, which streams the cursors) */
        x->started = true;
        uint32_t lo = SC_DOC_END;
        for (size_t i = 0; i < x->n; i++) {
            x->cur[i] = sc_postings_next(&x->p[i]);
            if (x->cur[i] < lo)
                lo = x->cur[i];
        }
        it->positioned = true;
        return it->doc = lo < x->n_docs ? lo : SC_DOC_END;
    }
    if (it->doc == SC_DOC_END)
        return SC_DOC_END;
    return first_from(x, it->doc + 1, false);
}

static uint32_t union_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && (target <= it->doc || it->doc == SC_DOC_END))
        return it->doc;
    return first_from((union_iter *)it, target, true);
}

static uint64_t union_cost(const sc_doc_iter *it)
{
    return ((const union_iter *)it)->cost;
}

static void union_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    union_iter *x = (union_iter *)it;
    uint32_t d = it->positioned ? it->doc : union_next(it);
    if (d == SC_DOC_END)
        return;
    /* the rest of a loaded window (one at most: after this, no window stays loaded), then
     * every cursor straight into bs */
    if (x->wend && d < x->wend) {
        for (; d < upto && d != SC_DOC_END; d = in_window(x, d + 1))
            sc_bitset_set(bs, d - base);
        if (upto < x->wend) {
            first_from(x, upto, false);
            return;
        }
    }
    uint32_t lo = SC_DOC_END;
    for (size_t i = 0; i < x->n; i++) {
        if (x->cur[i] < upto) {
            sc_postings_into_bitset(&x->p[i], upto, bs, base);
            x->cur[i] = x->p[i].doc;
        }
        if (x->cur[i] < lo)
            lo = x->cur[i];
    }
    /* positioned on the first doc >= upto without loading a window: the cursors hold it */
    x->wend = 0;
    it->doc = lo < x->n_docs ? lo : SC_DOC_END;
}

static size_t union_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    union_iter *x = (union_iter *)it;
    if (it->positioned && it->doc == SC_DOC_END)
        return 0;
    size_t n = 0;
    uint32_t d = it->positioned ? it->doc + 1 : 0;
    while (n < max) {
        if (!x->wend || d >= x->wend) {
            if (d >= x->n_docs || !load(x, d, next_width(x)))
                break;
        }
        if (d < x->wbase)
            d = x->wbase;
        /* the window's words from d on, a set bit at a time */
        uint32_t off = d - x->wbase, nw = (x->wend - x->wbase + 63) / 64, w = off >> 6;
        uint64_t word = x->words[w] & (~UINT64_C(0) << (off & 63));
        for (;;) {
            while (word && n < max) {
                docs[n++] = x->wbase + w * 64 + (uint32_t)__builtin_ctzll(word);
                word &= word - 1;
            }
            if (n == max || ++w >= nw)
                break;
            word = x->words[w];
        }
        d = x->wend;
    }
    if (freqs)
        for (size_t i = 0; i < n; i++)
            freqs[i] = 1;
    it->positioned = true;
    it->doc = n ? docs[n - 1] : SC_DOC_END;
    return n;
}

static float union_score(sc_doc_iter *it)
{
    return ((union_iter *)it)->score;
}

static float union_max_score(sc_doc_iter *it, uint32_t upto)
{
    (void)upto;
    return ((union_iter *)it)->score;
}

static uint32_t union_shallow(sc_doc_iter *it, uint32_t target)
{
    (void)it;
    (void)target;
    return SC_DOC_END;
}

static size_t union_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    size_t n = union_next_batch(it, docs, NULL, max);
    for (size_t i = 0; i < n; i++)
        scores[i] = ((union_iter *)it)->score;
    return n;
}

static const sc_doc_iter_ops union_ops = {
    "term_union",
    SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_NEXT_BATCH | SC_ITER_NATIVE_SCORE_BATCH,
    union_next,
    union_advance,
    union_cost,
    union_into_bitset,
    sc_doc_iter_fallback_run_end,
    union_next_batch,
    union_score,
    union_max_score,
    union_shallow,
    sc_doc_iter_ignore_min_score,
    union_score_batch,
};

sc_status sc_iter_term_union(sc_arena *a, const sc_segment *seg, const sc_field_info *f,
                             const sc_term_info *terms, size_t n, float score, sc_doc_iter **out)
{
    *out = NULL;
    union_iter *x = sc_arena_calloc(a, 1, sizeof *x);
    sc_postings *p = n ? sc_arena_alloc(a, n * sizeof *p) : NULL;
    uint32_t *cur = n ? sc_arena_alloc(a, n * sizeof *cur) : NULL;
    /* a window never spans more than the segment: small segments get small windows */
    uint32_t n_docs = sc_segment_n_docs(seg);
    size_t wbits = n_docs < MAX_WIDTH ? n_docs : MAX_WIDTH;
    uint64_t *words = sc_arena_alloc(a, ((wbits + 63) / 64 + 1) * sizeof(uint64_t));
    if (!x || !words || (n && (!p || !cur)))
        return SC_ENOMEM;
    x->words = words;
    x->a = a;
    x->base.ops = &union_ops;
    x->score = score;
    x->n_docs = n_docs;
    x->n = n;
    x->p = p;
    x->cur = cur;
    for (size_t i = 0; i < n; i++) {
        sc_postings_init(&p[i]);
        SC_TRY(sc_postings_reset(&p[i], seg, f, &terms[i], 0));
        x->cost += sc_postings_cost(&p[i]);
    }
    /* first window: about WINDOW_MATCHES expected matches at the summed density */
    uint64_t w = x->cost ? (uint64_t)WINDOW_MATCHES * x->n_docs / x->cost : MAX_WIDTH;
    x->width = NARROW;
    while (x->width < w && x->width < MAX_WIDTH)
        x->width *= 2;
    *out = &x->base;
    return SC_OK;
}
