/* Collectors (search/searcher.h): top-k by score with exact or bounded totals, window at a
 * time; the iterators come from plan_iter.c, conjunctions and required + optional terms of
 * plain terms run block by block (conj_terms.c, reqopt_terms.c). */
#include "search/searcher.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "search/internal.h"
#include "search/range.h"

void sc_search_options_init(sc_search_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = 10;
    o->track_total_hits = SC_TRACK_TOTAL_HITS_DEFAULT;
    o->max_clause_count = SC_QUERY_MAX_CLAUSE_COUNT;
}

/* ---- collection ------------------------------------------------------------------------- */

/* A min-heap of the best hits: the root is the worst (lowest score, then highest doc). */
typedef struct topk {
    sc_search_hit *h;
    size_t n, k;
} topk;

static bool worse(const sc_search_hit *a, const sc_search_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->global_doc > b->global_doc);
}

static void topk_push(topk *t, const sc_search_hit *x)
{
    if (t->k == 0)
        return;
    size_t i;
    if (t->n < t->k) {
        i = t->n++;
        while (i > 0 && worse(x, &t->h[(i - 1) / 2])) {
            t->h[i] = t->h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        t->h[i] = *x;
        return;
    }
    if (!worse(&t->h[0], x))
        return;
    i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m;
        if (l >= t->n)
            break;
        m = l + 1 < t->n && worse(&t->h[l + 1], &t->h[l]) ? l + 1 : l;
        if (!worse(&t->h[m], x))
            break;
        t->h[i] = t->h[m];
        i = m;
    }
    t->h[i] = *x;
}

static int cmp_hits(const void *a, const void *b)
{
    const sc_search_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->global_doc > y->global_doc) - (x->global_doc < y->global_doc);
}

sc_doc_iter *sc__search_wrap_segment(sc__search_ctx *ctx, sc_doc_iter *it, size_t seg_i)
{
    const sc_searcher_segment *ss = &ctx->s->segs[seg_i];
    if (it && ss->live && ss->n_deleted)
        it = sc_iter_live_docs(ctx->a, it, ss->live);
    if (it && ctx->o->cancel)
        it = sc_iter_cancel(ctx->a, it, ctx->o->cancel);
    return it;
}

void sc__search_finish_flags(sc__search_ctx *ctx)
{
    if (ctx->o->cancel) {
        uint32_t f = atomic_load_explicit(&ctx->o->cancel->fired, memory_order_relaxed);
        ctx->res->cancelled = f == 1;
        ctx->res->timed_out = f == 2;
    }
}

void sc__search_ctx_init(sc__search_ctx *ctx, const sc_searcher *s, const sc_search_options *o,
                         sc_arena *a, sc_search_result *res)
{
    memset(res, 0, sizeof *res);
    memset(ctx, 0, sizeof *ctx);
    ctx->s = s;
    ctx->o = o;
    ctx->a = a;
    ctx->res = res;
    ctx->stats = o->stats;
    ctx->max_clause_count = o->max_clause_count ? o->max_clause_count : SC_QUERY_MAX_CLAUSE_COUNT;
}

/* Collection state across segments. */
typedef struct collector {
    topk t;
    uint64_t total;   /* docs counted while counting was still required */
    uint64_t track_n; /* count at least this many exactly (UINT64_MAX: all) */
    bool pruning;     /* counting is done: skip what cannot compete */
    float thr;        /* the worst hit's score once the heap is full */
    float max_score;
} collector;

/* Collects one segment's docs, a batch (window) at a time. Until track_n docs are counted
 * every match is visited; after that (with a full heap) blocks whose max score cannot beat the
 * worst hit are skipped (advance_shallow + max_score), the iterator is told the minimum score
 * so disjunctions run block-max MaxScore, and the segment ends once its global bound cannot
 * compete. */
static void collect_batches(collector *c, sc_doc_iter *it, uint32_t seg_i, uint64_t base)
{
    uint32_t docs[128];
    float scores[128];
    float told = -1.0f; /* the minimum score the iterator was last told */
    if (c->pruning && c->t.k && sc_doc_iter_max_score(it, SC_DOC_END) <= c->thr)
        return; /* nothing in this segment can beat the current hits */
    for (;;) {
        if (c->pruning && c->t.k && it->positioned && c->thr > told) {
            /* a later segment, or the threshold rose: disjunctions repartition, phrases
             * skip more blocks */
            sc_doc_iter_set_min_score(it, c->thr);
            told = c->thr;
        }
        if (c->pruning && it->positioned && it->doc != SC_DOC_END) {
            if (sc_doc_iter_max_score(it, SC_DOC_END) <= c->thr)
                break; /* e.g. constant scores once the heap is full */
            /* skip blocks that cannot beat the worst hit: shallow moves only (no decoding)
             * from block to block until one may compete, then one advance into it */
            uint32_t target = it->doc + 1;
            bool skipped = false, done = false;
            for (;;) {
                uint32_t upto = sc_doc_iter_advance_shallow(it, target);
                if (upto == SC_DOC_END)
                    upto = SC_DOC_END - 1;
                if (sc_doc_iter_max_score(it, upto) > c->thr)
                    break;
                skipped = true;
                if (upto >= SC_DOC_END - 1) {
                    done = true;
                    break;
                }
                target = upto + 1;
            }
            if (done)
                break;
            if (skipped) {
                if (sc_doc_iter_advance(it, target) == SC_DOC_END)
                    break;
                /* the doc advanced to is handled like a batch of one */
                docs[0] = it->doc;
                scores[0] = sc_doc_iter_score(it);
                goto one;
            }
        }
        size_t n = sc_doc_iter_score_batch(it, docs, scores, 128);
        if (n == 0)
            break;
        if (!c->pruning)
            c->total += n;
        if (!c->t.k) {
            if (c->total >= c->track_n) {
                c->pruning = true;
                break;
            }
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            if (c->t.n == c->t.k && scores[i] <= c->thr)
                continue;
            if (scores[i] > c->max_score)
                c->max_score = scores[i];
            sc_search_hit h = {seg_i, docs[i], base + docs[i], scores[i]};
            topk_push(&c->t, &h);
            if (c->t.n == c->t.k)
                c->thr = c->t.h[0].score;
        }
        if (c->t.n == c->t.k && c->total >= c->track_n && !c->pruning)
            c->pruning = true;
        continue;
    one:
        if (scores[0] > c->max_score)
            c->max_score = scores[0];
        if (c->t.k && (c->t.n < c->t.k || scores[0] > c->thr)) {
            sc_search_hit h = {seg_i, docs[0], base + docs[0], scores[0]};
            topk_push(&c->t, &h);
            if (c->t.n == c->t.k)
                c->thr = c->t.h[0].score;
        }
    }
}

/* Every segment is collected a batch at a time: kinds that score in bulk do it natively, the
 * others through the counted generic score_batch (next + score), which still spares the
 * collector a virtual call per doc (measured 17-33% faster over the luceneutil set than a
 * per-doc loop). */
static void collect_segment(collector *c, sc_doc_iter *it, uint32_t seg_i, uint64_t base)
{
    collect_batches(c, it, seg_i, base);
}

/* Offers one matching doc (live docs already applied) to the counts and the heap. */
static inline void offer(collector *c, uint32_t seg_i, uint64_t base, uint32_t d, float sc)
{
    c->total++;
    if (!c->t.k || (c->t.n == c->t.k && sc <= c->thr))
        return;
    if (sc > c->max_score)
        c->max_score = sc;
    sc_search_hit h = {seg_i, d, base + d, sc};
    topk_push(&c->t, &h);
    if (c->t.n == c->t.k)
        c->thr = c->t.h[0].score;
}

/* Exhaustive sum disjunction, window at a time (Lucene's BooleanScorer): every child scores
 * its docs in bulk (score_batch) into a 2,048-doc accumulator (double sums in child order, as
 * the disjunction scores), then the window's docs are counted and offered to the heap in doc
 * order. Live docs are applied per doc; the cancel token is checked per window. */
#define BS_WINDOW 2048

typedef struct bs_child {
    sc_doc_iter *it;
    uint32_t docs[128];
    float scores[128];
    size_t n, pos;
    bool done;
} bs_child;

static sc_status collect_disjunction(sc__search_ctx *ctx, collector *c, sc_doc_iter **kids,
                                     size_t n_kids, size_t seg_i, uint64_t base)
{
    const sc_bitset *live = ctx->s->segs[seg_i].n_deleted ? ctx->s->segs[seg_i].live : NULL;
    bs_child *bc = sc_arena_calloc(ctx->a, n_kids, sizeof *bc);
    double *acc = sc_arena_alloc(ctx->a, BS_WINDOW * sizeof *acc);
    uint64_t *marks = sc_arena_alloc(ctx->a, BS_WINDOW / 64 * sizeof *marks);
    if (!bc || !acc || !marks)
        return sc__search_oom(ctx);
    for (size_t i = 0; i < n_kids; i++)
        bc[i].it = kids[i];
    for (;;) {
        /* refill and find the window start */
        uint32_t w = SC_DOC_END;
        for (size_t i = 0; i < n_kids; i++) {
            bs_child *b = &bc[i];
            if (!b->done && b->pos == b->n) {
                b->n = sc_doc_iter_score_batch(b->it, b->docs, b->scores, 128);
                b->pos = 0;
                b->done = b->n == 0;
            }
            if (!b->done && b->docs[b->pos] < w)
                w = b->docs[b->pos];
        }
        if (w == SC_DOC_END)
            break;
        if (ctx->o->cancel && sc_cancel_token_check(ctx->o->cancel, true))
            break;
        uint32_t wend = w < SC_DOC_END - BS_WINDOW ? w + BS_WINDOW : SC_DOC_END;
        memset(marks, 0, BS_WINDOW / 64 * sizeof *marks);
        for (size_t i = 0; i < n_kids; i++) {
            bs_child *b = &bc[i];
            while (!b->done) {
                /* a local position: the stores into marks (uint64_t) could alias b->pos
                 * (size_t), which would be reloaded every doc */
                size_t pos = b->pos, n = b->n;
                while (pos < n && b->docs[pos] < wend) {
                    uint32_t o = b->docs[pos] - w;
                    uint64_t bit = UINT64_C(1) << (o & 63);
                    if (marks[o >> 6] & bit) {
                        acc[o] += b->scores[pos];
                    } else {
                        marks[o >> 6] |= bit;
                        acc[o] = b->scores[pos];
                    }
                    pos++;
                }
                b->pos = pos;
                if (b->pos < b->n)
                    break;
                b->n = sc_doc_iter_score_batch(b->it, b->docs, b->scores, 128);
                b->pos = 0;
                b->done = b->n == 0;
            }
        }
        for (size_t wi = 0; wi < BS_WINDOW / 64; wi++) {
            uint64_t word = marks[wi];
            while (word) {
                uint32_t o = (uint32_t)(wi * 64) + (uint32_t)__builtin_ctzll(word);
                word &= word - 1;
                uint32_t d = w + o;
                if (live && !sc_bitset_test(live, d))
                    continue;
                offer(c, (uint32_t)seg_i, base, d, (float)acc[o]);
            }
        }
    }
    return SC_OK;
}

/* Exhaustive conjunction (exact totals) in 2,048-doc windows (a conjunctive BooleanScorer):
 * the lead and every clause at most CONJ_BATCH_RATIO times as frequent score their docs of
 * the window in bulk (score_batch), scattering the scores into a per-window double array in
 * the conjunction's child order (so the sums equal conj_score's) and their docs into bit
 * masks that are ANDed; the more frequent clauses (last in cost order) are probed with
 * advance + score for the window's matches only. Live docs per match, the cancel token per
 * window. */
#define CONJ_BATCH_RATIO 256

static sc_status collect_conjunction(sc__search_ctx *ctx, collector *c, sc_doc_iter **kids,
                                     const bool *scoring, size_t n_kids, size_t seg_i,
                                     uint64_t base)
{
    const sc_bitset *live = ctx->s->segs[seg_i].n_deleted ? ctx->s->segs[seg_i].live : NULL;
    bs_child *bc = sc_arena_calloc(ctx->a, n_kids, sizeof *bc);
    double *acc = sc_arena_alloc(ctx->a, BS_WINDOW * sizeof *acc);
    uint64_t *mask = sc_arena_alloc(ctx->a, BS_WINDOW / 64 * sizeof *mask);
    uint64_t *kmask = sc_arena_alloc(ctx->a, BS_WINDOW / 64 * sizeof *kmask);
    if (!bc || !acc || !mask || !kmask)
        return sc__search_oom(ctx);
    uint64_t lead_cost = sc_doc_iter_cost(kids[0]);
    size_t n_batch = 1; /* children [0, n_batch) score in bulk, the rest are probed */
    while (n_batch < n_kids && sc_doc_iter_cost(kids[n_batch]) <= lead_cost * CONJ_BATCH_RATIO)
        n_batch++;
    for (size_t i = 0; i < n_kids; i++)
        bc[i].it = kids[i];
    for (;;) {
        bs_child *lead = &bc[0];
        if (lead->pos == lead->n) {
            lead->n = sc_doc_iter_score_batch(lead->it, lead->docs, lead->scores, 128);
            lead->pos = 0;
            if (lead->n == 0)
                break;
        }
        if (ctx->o->cancel && sc_cancel_token_check(ctx->o->cancel, true))
            break;
        uint32_t w = lead->docs[lead->pos];
        uint32_t wend = w < SC_DOC_END - BS_WINDOW ? w + BS_WINDOW : SC_DOC_END;
        bool any = true;
        for (size_t i = 0; i < n_batch; i++) {
            bs_child *b = &bc[i];
            uint64_t *m = i == 0 ? mask : kmask;
            memset(m, 0, BS_WINDOW / 64 * sizeof *m);
            bool sc = scoring[i];
            for (;;) {
                size_t pos = b->pos, n = b->n; /* local: see collect_disjunction */
                while (pos < n && b->docs[pos] < w)
                    pos++; /* docs before the window (skipped by an earlier window) */
                if (i == 0) {
                    for (; pos < n && b->docs[pos] < wend; pos++) {
                        uint32_t o = b->docs[pos] - w;
                        m[o >> 6] |= UINT64_C(1) << (o & 63);
                        acc[o] = sc ? b->scores[pos] : 0.0;
                    }
                } else {
                    for (; pos < n && b->docs[pos] < wend; pos++) {
                        uint32_t o = b->docs[pos] - w;
                        m[o >> 6] |= UINT64_C(1) << (o & 63);
                        if (sc)
                            acc[o] += b->scores[pos];
                    }
                }
                b->pos = pos;
                if (b->pos < b->n || b->done)
                    break;
                b->n = sc_doc_iter_score_batch(b->it, b->docs, b->scores, 128);
                b->pos = 0;
                b->done = b->n == 0;
            }
            if (i > 0) {
                uint64_t or_ = 0;
                for (size_t k = 0; k < BS_WINDOW / 64; k++)
                    or_ |= mask[k] &= kmask[k];
                if (!or_) {
                    any = false; /* later children skip this window's docs next time */
                    break;
                }
            }
        }
        if (any) {
            for (size_t k = 0; k < BS_WINDOW / 64; k++) {
                uint64_t word = mask[k];
                while (word) {
                    uint32_t o = (uint32_t)(k * 64) + (uint32_t)__builtin_ctzll(word);
                    word &= word - 1;
                    uint32_t d = w + o;
                    double sum = acc[o];
                    bool ok = true;
                    for (size_t i = n_batch; i < n_kids; i++) {
                        sc_doc_iter *it = bc[i].it;
                        uint32_t cd =
                            it->positioned && it->doc >= d ? it->doc : sc_doc_iter_advance(it, d);
                        if (cd != d) {
                            ok = false;
                            break;
                        }
                        if (scoring[i])
                            sum += sc_doc_iter_score(it);
                    }
                    if (!ok || (live && !sc_bitset_test(live, d)))
                        continue;
                    offer(c, (uint32_t)seg_i, base, d, (float)sum);
                }
            }
        }
        /* a batch child that ran out ends the conjunction */
        bool ended = false;
        for (size_t i = 1; i < n_batch; i++)
            ended = ended || (bc[i].done && bc[i].pos == bc[i].n);
        if (ended)
            break;
    }
    return SC_OK;
}

/* Whether `it` is a conjunction of terms that collect_conj_terms runs faster than
 * collect_conjunction; *ct then drives it. */
static bool conj_terms_pays(sc__search_ctx *ctx, sc_doc_iter *it, size_t seg_i, sc__conj_terms **ct)
{
    *ct = sc__conj_terms_new(ctx->a, it, true);
    if (!*ct)
        return false;
    /* scoring only the matches (freqs decoded for blocks with one) beat scoring every doc
     * of every clause unless the lead matches a third of the segment or more (and_high_* at 1M
     * docs, TOP_10_COUNT: 1.1-3.6x faster; as_by, 44% and 47%: 0.83x) */
    return sc__conj_terms_cost(*ct, 0) * 3 < sc_segment_n_docs(ctx->s->segs[seg_i].seg);
}

/* Whether the heap is full and enough is counted, so a batch producer may be given the
 * heap's threshold and skip what cannot beat it. */
static bool threshold_ready(const collector *c)
{
    return c->t.k && c->t.n == c->t.k && c->total >= c->track_n;
}

/* Offers a batch's matches that are live; false once a count-only search has counted enough
 * (the caller stops). */
static bool offer_batch(collector *c, const sc_bitset *live, size_t seg_i, uint64_t base,
                        const uint32_t *docs, const float *scores, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!live || sc_bitset_test(live, docs[k]))
            offer(c, (uint32_t)seg_i, base, docs[k], scores[k]);
    if (!c->t.k && c->total > c->track_n) {
        c->pruning = true; /* counting only, and counted enough */
        return false;
    }
    return true;
}

/* Exhaustive collection of scored blocks of matches: a conjunction of terms (conj_terms.c:
 * the matches among each batch of the rarest term's docs) or required + optional / excluded
 * terms (reqopt_terms.c, when ro is non-NULL); live docs per match, the cancel token per
 * batch. */
static void collect_conj_terms(sc__search_ctx *ctx, collector *c, sc__conj_terms *ct,
                               sc__reqopt_terms *ro, size_t seg_i, uint64_t base)
{
    const sc_bitset *live = ctx->s->segs[seg_i].n_deleted ? ctx->s->segs[seg_i].live : NULL;
    uint32_t docs[SC_POSTINGS_BLOCK];
    float scores[SC_POSTINGS_BLOCK];
    size_t n;
    uint32_t n_batches = 0;
    for (;;) {
        if (ro && threshold_ready(c)) {
            c->pruning = true; /* counted enough: skip blocks that cannot compete */
            sc__reqopt_terms_set_min_score(ro, c->thr);
        }
        if (!(ro ? sc__reqopt_terms_next(ro, docs, scores, &n)
                 : sc__conj_terms_next(ct, docs, scores, &n)))
            break;
        if (!offer_batch(c, live, seg_i, base, docs, scores, n))
            break;
        if (ctx->o->cancel && sc_cancel_token_check(ctx->o->cancel, (++n_batches & 31) == 0))
            break;
    }
}

/* Top-k of a sum disjunction of terms without exact totals (disj_terms.c), window by window:
 * the threshold is passed on before each call once the heap is full and enough is counted;
 * live docs per match, the cancel token every call. */
static void collect_disj_terms(sc__search_ctx *ctx, collector *c, sc__disj_terms *dt, size_t seg_i,
                               uint64_t base)
{
    const sc_bitset *live = ctx->s->segs[seg_i].n_deleted ? ctx->s->segs[seg_i].live : NULL;
    const uint32_t *docs;
    const float *scores;
    size_t n;
    uint32_t n_calls = 0;
    for (;;) {
        if (threshold_ready(c)) {
            c->pruning = true;
            sc__disj_terms_set_min_score(dt, c->thr);
        }
        if (!sc__disj_terms_next(dt, &docs, &scores, &n))
            break;
        if (!offer_batch(c, live, seg_i, base, docs, scores, n))
            break;
        if (ctx->o->cancel && sc_cancel_token_check(ctx->o->cancel, (++n_calls & 7) == 0))
            break;
    }
}

/* A lone range with a bounded total (Elasticsearch's default) or none: per segment, by cost
 * (sc_range_segment_bounded), either the points count up to what is still needed and a
 * doc-values scan finds the first hits in doc order, stopping there (constant scores: later
 * docs never beat them), or the points' bitset gives both when the range is too sparse for a
 * short scan. *done false: the segment lacks points or doc values (the generic path runs). */
static sc_status bounded_range(sc__search_ctx *ctx, collector *c, const sc__plan *p, size_t si,
                               uint64_t base, bool *done)
{
    *done = false;
    const sc_searcher_segment *ss = &ctx->s->segs[si];
    const sc_bitset *live = ss->live && ss->n_deleted ? ss->live : NULL;
    uint64_t need =
        !c->track_n || c->pruning || c->total > c->track_n ? 0 : c->track_n + 1 - c->total;
    uint64_t count = 0;
    sc_doc_iter *it = NULL;
    uint64_t k = c->t.k > c->t.n ? c->t.k - c->t.n : 0;
    sc_status st = sc_range_segment_bounded(ctx->a, ss->seg, p->field, p->lo[0], p->hi[0], live,
                                            need, k, p->score, &count, &it, NULL);
    if (st == SC_ENOTFOUND)
        return SC_OK;
    if (st == SC_ENOMEM)
        return sc__search_oom(ctx);
    if (st != SC_OK)
        return sc__search_corrupt(ctx, st, p->field);
    *done = true;
    c->total += count;
    if (c->total > c->track_n)
        c->pruning = true;
    it = sc__search_wrap_segment(ctx, it, si);
    while (it && c->t.n < c->t.k) {
        uint32_t d = sc_doc_iter_next(it);
        if (d == SC_DOC_END)
            break;
        if (p->score > c->max_score)
            c->max_score = p->score;
        sc_search_hit h = {(uint32_t)si, d, base + d, p->score};
        topk_push(&c->t, &h);
        if (c->t.n == c->t.k)
            c->thr = c->t.h[0].score;
    }
    return SC_OK;
}

sc_status sc_search_execute(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            sc_arena *a, sc_search_result *res)
{
    sc__search_ctx ctx;
    sc__search_ctx_init(&ctx, s, o, a, res);
    sc__plan *plan;
    SC_TRY(sc__plan_build(&ctx, q, true, &plan));
    int64_t track = o->track_total_hits;
    res->total_tracked = track != SC_TRACK_TOTAL_HITS_NONE;
    collector c;
    memset(&c, 0, sizeof c);
    c.t.k = o->from + o->size;
    c.track_n = track == SC_TRACK_TOTAL_HITS_ALL ? UINT64_MAX : track < 0 ? 0 : (uint64_t)track;
    ctx.exhaustive = c.track_n == UINT64_MAX;
    ctx.range_needed = ctx.exhaustive ? 0 : (c.track_n > c.t.k ? c.track_n : c.t.k) + 1;
    if (c.t.k && !(c.t.h = sc_arena_alloc(a, c.t.k * sizeof *c.t.h)))
        return sc__search_oom(&ctx);
    uint64_t base = 0;
    sc__disj_terms *dt_prev = NULL; /* its buffers serve the next segment's */
    for (size_t si = 0; si < s->n_segs; si++) {
        uint32_t n_docs = sc_segment_n_docs(s->segs[si].seg);
        if (o->cancel && sc_cancel_token_check(o->cancel, true))
            break; /* checked per segment (leaf) too */
        if (!c.t.k && c.pruning)
            break;
        if (plan->kind == SC__PLAN_RANGE && plan->n_ranges == 1 && c.track_n != UINT64_MAX) {
            bool done;
            SC_TRY(bounded_range(&ctx, &c, plan, si, base, &done));
            if (done) {
                base += n_docs;
                continue;
            }
        }
        if (ctx.script_st != SC_OK)
            break;
        sc_doc_iter *it;
        SC_TRY(sc__plan_iter(&ctx, plan, si, &it));
        sc_doc_iter **kids;
        const bool *kid_scoring;
        size_t n_kids;
        sc__conj_terms *ct;
        sc__reqopt_terms *ro;
        sc__disj_terms *dt;
        if (it && c.track_n == UINT64_MAX &&
            sc__iter_disjunction_batch_children(it, &kids, &n_kids)) {
            SC_TRY(collect_disjunction(&ctx, &c, kids, n_kids, si, base));
        } else if (it && (dt = sc__disj_terms_new(ctx.a, it, dt_prev))) {
            /* bounded totals or none: block-max MaxScore over the terms' blocks */
            collect_disj_terms(&ctx, &c, dt, si, base);
            dt_prev = dt;
        } else if (it && conj_terms_pays(&ctx, it, si, &ct)) {
            /* bounded totals too: visiting every match this way beat block-max pruning
             * through the iterators (and_high_* TOP_10 at 1M docs) */
            collect_conj_terms(&ctx, &c, ct, NULL, si, base);
        } else if (it && (ro = sc__reqopt_terms_new(ctx.a, it, n_docs, c.track_n != UINT64_MAX))) {
            /* bounded totals too (required blocks skipped by block-max once counted enough):
             * visiting the matches in blocks beat the tree's block-max pruning */
            collect_conj_terms(&ctx, &c, NULL, ro, si, base);
        } else if (it && c.track_n == UINT64_MAX &&
                   sc__iter_conjunction_batch_children(it, &kids, &kid_scoring, &n_kids)) {
            SC_TRY(collect_conjunction(&ctx, &c, kids, kid_scoring, n_kids, si, base));
        } else {
            it = sc__search_wrap_segment(&ctx, it, si);
            if (it)
                collect_segment(&c, it, (uint32_t)si, base);
        }
        base += n_docs;
    }
    if (c.t.n)
        qsort(c.t.h, c.t.n, sizeof *c.t.h, cmp_hits);
    res->hits = c.t.n > o->from ? c.t.h + o->from : c.t.h;
    res->n_hits = c.t.n > o->from ? c.t.n - o->from : 0;
    res->max_score = c.max_score;
    if (c.track_n == 0) { /* no total asked for */
        res->total = 0;
        res->total_gte = c.pruning || c.total > 0;
    } else {
        res->total = c.total;
        res->total_gte = c.track_n != UINT64_MAX && c.pruning;
        sc_search_total_cap(track, &res->total, &res->total_gte);
    }
    sc__search_finish_flags(&ctx);
    return ctx.script_st;
}
