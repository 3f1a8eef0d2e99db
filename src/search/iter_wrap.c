/* The cancel token and the wrapper kinds (live docs, cancellation, profiling) of
 * search/iter.h. Every wrapper forwards every operation, bulk ones included; the forwarders
 * they share are written once over `wrap_iter`, the common head of their structs. */
#include "search/iter.h"

#include <string.h>

#include "base/clock.h"

/* ---- cancel token ----------------------------------------------------------------------- */

void sc_cancel_token_init(sc_cancel_token *t, uint64_t deadline_ns)
{
    atomic_init(&t->cancelled, 0);
    atomic_init(&t->fired, 0);
    t->deadline_ns = deadline_ns;
}

#ifndef SC_SEARCH_NO_CANCEL_CHECKS
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
#endif

/* ---- shared forwarders ------------------------------------------------------------------ */

typedef struct wrap_iter {
    sc_doc_iter base;
    sc_doc_iter *c;
} wrap_iter;

#define CHILD(it) (((wrap_iter *)(it))->c)

/* Takes the child's position after a bulk call. */
static uint32_t wrap_sync(sc_doc_iter *it)
{
    it->positioned = true;
    return it->doc = CHILD(it)->doc;
}

static uint64_t wrap_cost(const sc_doc_iter *it)
{
    return sc_doc_iter_cost(((const wrap_iter *)it)->c);
}

static uint32_t wrap_run_end(sc_doc_iter *it)
{
    return sc_doc_iter_run_end(CHILD(it));
}

static float wrap_score(sc_doc_iter *it)
{
    return sc_doc_iter_score(CHILD(it));
}

static float wrap_max_score(sc_doc_iter *it, uint32_t upto)
{
    return sc_doc_iter_max_score(CHILD(it), upto);
}

static uint32_t wrap_shallow(sc_doc_iter *it, uint32_t target)
{
    return sc_doc_iter_advance_shallow(CHILD(it), target);
}

static void wrap_min_score(sc_doc_iter *it, float min_score)
{
    sc_doc_iter_set_min_score(CHILD(it), min_score);
}

/* Allocates a wrapper of `size` bytes (a struct starting with wrap_iter) around child. */
static void *wrap_new(sc_arena *a, size_t size, const sc_doc_iter_ops *ops, sc_doc_iter *child)
{
    wrap_iter *x = sc_arena_calloc(a, 1, size);
    if (!x)
        return NULL;
    x->base.ops = ops;
    x->base.stats = child->stats;
    x->c = child;
    return x;
}

#define WRAP_FLAGS                                                                                 \
    (SC_ITER_NATIVE_INTO_BITSET | SC_ITER_NATIVE_RUN_END | SC_ITER_NATIVE_NEXT_BATCH |             \
     SC_ITER_NATIVE_SCORE_BATCH)

/* ---- live docs -------------------------------------------------------------------------- */

/* Live docs: the child's docs whose live bit is set. */
typedef struct live_iter {
    wrap_iter w;
    const sc_bitset *live;
    sc_bitset scratch; /* 4,096-bit window for into_bitset, in the arena */
} live_iter;

#define LIVE(it) (((live_iter *)(it))->live)

static uint32_t live_skip(sc_doc_iter *it, uint32_t d)
{
    while (d != SC_DOC_END && !sc_bitset_test(LIVE(it), d))
        d = sc_doc_iter_next(CHILD(it));
    it->positioned = true;
    return it->doc = d;
}

static uint32_t live_next(sc_doc_iter *it)
{
    return live_skip(it, sc_doc_iter_next(CHILD(it)));
}

static uint32_t live_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    return live_skip(it, sc_doc_iter_advance(CHILD(it), target));
}

static void live_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    live_iter *x = (live_iter *)it;
    sc_doc_iter *c = x->w.c;
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
    uint32_t r = sc_doc_iter_run_end(CHILD(it));
    uint32_t d = it->doc;
    const sc_bitset *lv = LIVE(it);
    if (r == SC_DOC_END || r > lv->n_bits)
        r = (uint32_t)lv->n_bits;
    for (uint32_t i = d + 1; i < r; i++)
        if (!sc_bitset_test(lv, i))
            return i;
    return r;
}

/* Keeps the live docs of docs[0, n) and their 4-byte values (freqs or scores; vals may be
 * NULL), in order; returns how many. */
static size_t live_keep(const sc_bitset *live, uint32_t *docs, void *vals, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sc_bitset_test(live, docs[i]))
            continue;
        docs[kept] = docs[i];
        if (vals)
            memcpy((char *)vals + kept * 4, (char *)vals + i * 4, 4);
        kept++;
    }
    return kept;
}

/* Pulls batches from the child (next_batch when freqs_or_null, else score_batch) until one
 * keeps a live doc. */
static size_t live_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, float *scores,
                         size_t max)
{
    size_t kept = 0;
    while (kept == 0) {
        size_t n = scores ? sc_doc_iter_score_batch(CHILD(it), docs, scores, max)
                          : sc_doc_iter_next_batch(CHILD(it), docs, freqs, max);
        if (n == 0)
            break;
        kept = live_keep(LIVE(it), docs, scores ? (void *)scores : (void *)freqs, n);
    }
    it->positioned = true;
    it->doc = kept ? docs[kept - 1] : SC_DOC_END;
    return kept;
}

static size_t live_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    return live_batch(it, docs, freqs, NULL, max);
}

static size_t live_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    return live_batch(it, docs, NULL, scores, max);
}

static const sc_doc_iter_ops live_ops = {
    "live_docs",      WRAP_FLAGS,     live_next,        live_advance, wrap_cost,
    live_into_bitset, live_run_end,   live_next_batch,  wrap_score,   wrap_max_score,
    wrap_shallow,     wrap_min_score, live_score_batch,
};

sc_doc_iter *sc_iter_live_docs(sc_arena *a, sc_doc_iter *child, const sc_bitset *live)
{
    live_iter *x = wrap_new(a, sizeof *x, &live_ops, child);
    uint64_t *words = sc_arena_alloc(a, 65 * sizeof(uint64_t));
    if (!x || !words)
        return NULL;
    x->live = live;
    x->scratch.words = words;
    x->scratch.n_bits = 4096 + 64;
    return &x->w.base;
}

/* ---- cancellation ----------------------------------------------------------------------- */

/* Cancellation: stops at the first check after the token fires. */
typedef struct cancel_iter {
    wrap_iter w;
    sc_cancel_token *token;
    uint32_t countdown; /* single-doc calls until the next check */
    uint32_t n_bulk;    /* bulk calls: the flag each time, the clock every few */
} cancel_iter;

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
    return it->doc = sc_doc_iter_next(CHILD(it));
}

static uint32_t cancel_advance(sc_doc_iter *it, uint32_t target)
{
    if (it->positioned && target <= it->doc)
        return it->doc;
    if (cancel_tick(it))
        return SC_DOC_END;
    it->positioned = true;
    return it->doc = sc_doc_iter_advance(CHILD(it), target);
}

static void cancel_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    /* counts call this per 4,096-doc window: the clock every 8 windows */
    if (cancel_stop(it, (++((cancel_iter *)it)->n_bulk & 7) == 0))
        return;
    sc_doc_iter_into_bitset(CHILD(it), upto, bs, base);
    wrap_sync(it);
}

static size_t cancel_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    if (cancel_stop(it, true))
        return 0;
    size_t n = sc_doc_iter_next_batch(CHILD(it), docs, freqs, max);
    wrap_sync(it);
    return n;
}

static size_t cancel_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    cancel_iter *x = (cancel_iter *)it;
    /* the clock is read every 32 batches (~4,096 docs), the flag every batch */
    if (cancel_stop(it, (++x->n_bulk & 31) == 0))
        return 0;
    size_t n = sc_doc_iter_score_batch(CHILD(it), docs, scores, max);
    wrap_sync(it);
    return n;
}

static const sc_doc_iter_ops cancel_ops = {
    "cancel",           WRAP_FLAGS,     cancel_next,        cancel_advance, wrap_cost,
    cancel_into_bitset, wrap_run_end,   cancel_next_batch,  wrap_score,     wrap_max_score,
    wrap_shallow,       wrap_min_score, cancel_score_batch,
};

sc_doc_iter *sc_iter_cancel(sc_arena *a, sc_doc_iter *child, sc_cancel_token *token)
{
#ifdef SC_SEARCH_NO_CANCEL_CHECKS
    (void)a;
    (void)token;
    return child;
#endif
    cancel_iter *x = wrap_new(a, sizeof *x, &cancel_ops, child);
    if (!x)
        return NULL;
    x->token = token;
    x->countdown = CHECK_EVERY;
    return &x->w.base;
}

/* ---- profiling -------------------------------------------------------------------------- */

/* Profiling: counts each call, forwards everything. */
typedef struct prof_iter {
    wrap_iter w;
    uint64_t *counts;
    uint64_t *times; /* timed wrapper only */
} prof_iter;

#define PCOUNT(it, k) (((prof_iter *)(it))->counts[k]++)

static uint32_t prof_next(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_NEXT);
    sc_doc_iter_next(CHILD(it));
    return wrap_sync(it);
}

static uint32_t prof_advance(sc_doc_iter *it, uint32_t target)
{
    PCOUNT(it, SC_PROF_ADVANCE);
    if (it->positioned && target <= it->doc)
        return it->doc;
    sc_doc_iter_advance(CHILD(it), target);
    return wrap_sync(it);
}

static void prof_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    PCOUNT(it, SC_PROF_INTO_BITSET);
    sc_doc_iter_into_bitset(CHILD(it), upto, bs, base);
    wrap_sync(it);
}

static uint32_t prof_run_end(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_RUN_END);
    return sc_doc_iter_run_end(CHILD(it));
}

static size_t prof_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    PCOUNT(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_next_batch(CHILD(it), docs, freqs, max);
    wrap_sync(it);
    return n;
}

static float prof_score(sc_doc_iter *it)
{
    PCOUNT(it, SC_PROF_SCORE);
    return sc_doc_iter_score(CHILD(it));
}

static size_t prof_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    PCOUNT(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_score_batch(CHILD(it), docs, scores, max);
    wrap_sync(it);
    return n;
}

static const sc_doc_iter_ops prof_ops = {
    "profile",        WRAP_FLAGS,     prof_next,        prof_advance, wrap_cost,
    prof_into_bitset, prof_run_end,   prof_next_batch,  prof_score,   wrap_max_score,
    wrap_shallow,     wrap_min_score, prof_score_batch,
};

sc_doc_iter *sc_iter_profile(sc_arena *a, sc_doc_iter *child, uint64_t *counts)
{
    prof_iter *x = wrap_new(a, sizeof *x, &prof_ops, child);
    if (!x)
        return NULL;
    x->counts = counts;
    return &x->w.base;
}

/* ---- timed profiling: the counts plus each call's time ------------------------------------ */

#define TIMED_BEGIN(it, k)                                                                         \
    prof_iter *px_ = (prof_iter *)(it);                                                            \
    px_->counts[k]++;                                                                              \
    uint64_t t0_ = sc_clock_now_ns()
#define TIMED_END(k) px_->times[k] += sc_clock_now_ns() - t0_

static uint32_t timed_next(sc_doc_iter *it)
{
    TIMED_BEGIN(it, SC_PROF_NEXT);
    sc_doc_iter_next(CHILD(it));
    uint32_t d = wrap_sync(it);
    TIMED_END(SC_PROF_NEXT);
    return d;
}

static uint32_t timed_advance(sc_doc_iter *it, uint32_t target)
{
    TIMED_BEGIN(it, SC_PROF_ADVANCE);
    uint32_t d = it->doc;
    if (!(it->positioned && target <= it->doc)) {
        sc_doc_iter_advance(CHILD(it), target);
        d = wrap_sync(it);
    }
    TIMED_END(SC_PROF_ADVANCE);
    return d;
}

static void timed_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base)
{
    TIMED_BEGIN(it, SC_PROF_INTO_BITSET);
    sc_doc_iter_into_bitset(CHILD(it), upto, bs, base);
    wrap_sync(it);
    TIMED_END(SC_PROF_INTO_BITSET);
}

static uint32_t timed_run_end(sc_doc_iter *it)
{
    TIMED_BEGIN(it, SC_PROF_RUN_END);
    uint32_t e = sc_doc_iter_run_end(CHILD(it));
    TIMED_END(SC_PROF_RUN_END);
    return e;
}

static size_t timed_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max)
{
    TIMED_BEGIN(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_next_batch(CHILD(it), docs, freqs, max);
    wrap_sync(it);
    TIMED_END(SC_PROF_NEXT_BATCH);
    return n;
}

static float timed_score(sc_doc_iter *it)
{
    TIMED_BEGIN(it, SC_PROF_SCORE);
    float s = sc_doc_iter_score(CHILD(it));
    TIMED_END(SC_PROF_SCORE);
    return s;
}

static size_t timed_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max)
{
    TIMED_BEGIN(it, SC_PROF_NEXT_BATCH);
    size_t n = sc_doc_iter_score_batch(CHILD(it), docs, scores, max);
    wrap_sync(it);
    TIMED_END(SC_PROF_NEXT_BATCH);
    return n;
}

static const sc_doc_iter_ops timed_ops = {
    "profile_timed",   WRAP_FLAGS,     timed_next,        timed_advance, wrap_cost,
    timed_into_bitset, timed_run_end,  timed_next_batch,  timed_score,   wrap_max_score,
    wrap_shallow,      wrap_min_score, timed_score_batch,
};

sc_doc_iter *sc_iter_profile_timed(sc_arena *a, sc_doc_iter *child, uint64_t *counts,
                                   uint64_t *times_ns)
{
    prof_iter *x = wrap_new(a, sizeof *x, &timed_ops, child);
    if (!x)
        return NULL;
    x->counts = counts;
    x->times = times_ns;
    return &x->w.base;
}
