/* Required + optional (and excluded) terms driven by postings blocks (internal.h): the
 * collector's replacement for walking req_opt / exclusion iterators one doc at a time with
 * virtual calls per doc and clause. The required side yields 128 docs and their scores at a
 * time (a term's batch or conj_terms.c), the excluded terms are probed for them in bulk and
 * their docs dropped, and every optional term is probed (sc_postings_filter: skip tables,
 * bitset blocks answered from their bits) for its frequencies, which are scored in one loop.
 * Sums follow the iterator tree: the optional disjunction's double sum in child order, cast
 * to float, added to the required score in float (ro_score). */
#include <string.h>

#include "search/internal.h"

typedef struct rt_term {
    sc_postings *p;
    const sc_bm25 *bm25; /* NULL: scores 0 */
    const uint8_t *norms;
} rt_term;

/* A leading optional term's buffered batch. */
typedef struct rt_buf {
    uint32_t docs[SC_POSTINGS_BLOCK], freqs[SC_POSTINGS_BLOCK];
    size_t n, pos;
    bool done;
} rt_buf;

struct sc__reqopt_terms {
    sc__conj_terms *ct; /* the required side when a conjunction, else req */
    rt_term req;
    rt_term *opt, *ex;
    size_t n_opt, n_ex;
    bool done;
    float min_score; /* > 0: required blocks whose bound cannot beat it are skipped */
    float opt_max;   /* the optional terms' score bound: their maxima's double sum, cast */
    float req_max;   /* the required term's score bound (0 for a conjunction) */
    bool opt_lead;   /* the optional terms lead: the required one alone cannot compete */
    rt_buf *bufs;    /* n_opt (bounded totals, optional terms rarer than the required
                        one): the optional terms' lead */
    uint32_t keep[SC_POSTINGS_BLOCK];
    uint32_t freqs[SC_POSTINGS_BLOCK];
};

/* BM25 bound of an impact (max freq, min norm). */
static float impact_bm25(const rt_term *t, sc_postings_impact im)
{
    return sc_bm25_score(t->bm25, (float)im.max_freq,
                         t->norms ? (im.min_norm ? im.min_norm : 1) : 1);
}

/* Score bound of the required term's shallow block: the best BM25 over its competitive
 * (freq, norm) pairs, else the block's (max freq, min norm) bound (as the term iterator). */
static float shallow_bound(const rt_term *t)
{
    sc_postings_impact imps[SC_POSTINGS_BLOCK];
    size_t n = sc_postings_shallow_impacts(t->p, imps, SC_POSTINGS_BLOCK);
    if (n == 0)
        return impact_bm25(t, sc_postings_shallow_impact(t->p));
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float s = sc_bm25_score(t->bm25, (float)imps[i].max_freq, t->norms ? imps[i].min_norm : 1);
        if (s > best)
            best = s;
    }
    return best;
}

/* The term cursors of `it`: a term, or an unpositioned sum disjunction (min_match 1) of terms.
 * Counts them into *n and fills out when non-NULL. */
static bool term_list(sc_doc_iter *it, rt_term *out, size_t *n)
{
    sc_doc_iter **kids = &it;
    size_t nk = 1;
    if (!sc__iter_term_cursor(it, NULL, NULL) &&
        !sc__iter_disjunction_batch_children(it, &kids, &nk))
        return false;
    for (size_t i = 0; i < nk; i++) {
        rt_term t = {0};
        if (!(t.p = sc__iter_term_cursor(kids[i], &t.bm25, &t.norms)))
            return false;
        if (out)
            out[i] = t;
    }
    *n = nk;
    return true;
}

sc__reqopt_terms *sc__reqopt_terms_new(sc_arena *a, sc_doc_iter *it, uint32_t n_docs, bool bounded)
{
    sc_doc_iter *x = it, *ex = NULL, *req = NULL, *opt = NULL;
    if (sc__iter_exclusion_parts(it, &x, &ex)) {
        if (!sc__iter_req_opt_parts(x, &req, &opt))
            req = x;
    } else if (!sc__iter_req_opt_parts(it, &req, &opt)) {
        return NULL;
    }
    /* check the whole shape before anything is taken over */
    size_t n_opt = 0, n_ex = 0;
    if ((opt && !term_list(opt, NULL, &n_opt)) || (ex && !term_list(ex, NULL, &n_ex)))
        return NULL;
    const sc_bm25 *req_bm;
    bool req_term = sc__iter_term_cursor(req, &req_bm, NULL) != NULL;
    if (req_term && !req_bm)
        return NULL; /* a lone filter: not a shape the tree scores as req_opt */
    if (bounded && !req_term && !opt)
        return NULL; /* a conjunction minus exclusions: the tree prunes it */
    sc_doc_iter **kids;
    const bool *scoring;
    size_t n_kids;
    if (!req_term && !sc__iter_conjunction_batch_children(req, &kids, &scoring, &n_kids))
        return NULL;
    sc__reqopt_terms *r = sc_arena_calloc(a, 1, sizeof *r);
    rt_term *ot = sc_arena_alloc(a, (n_opt + n_ex + 1) * sizeof *ot);
    if (!r || !ot)
        return NULL;
    if (!req_term) {
        r->ct = sc__conj_terms_new(a, req, true);
        /* a lead over a third of the segment: scoring every clause's docs in bulk wins
         * (searcher.c's conj_terms_pays) */
        if (!r->ct || sc__conj_terms_cost(r->ct, 0) * 3 >= n_docs)
            return NULL;
    } else {
        r->req.p = sc__iter_term_cursor(req, &r->req.bm25, &r->req.norms);
    }
    r->opt = ot;
    r->ex = ot + n_opt;
    if (opt)
        term_list(opt, r->opt, &r->n_opt);
    if (ex)
        term_list(ex, r->ex, &r->n_ex);
    double om = 0.0;
    for (size_t i = 0; i < r->n_opt; i++)
        if (r->opt[i].bm25)
            om += impact_bm25(&r->opt[i], sc_postings_term_impact(r->opt[i].p));
    r->opt_max = (float)om;
    if (!r->ct)
        r->req_max = impact_bm25(&r->req, sc_postings_term_impact(r->req.p));
    /* the optional terms may lead only when rarer together than the required one (leading
     * by a denser union made intersection_union TOP_10 2x slower) */
    uint64_t opt_cost = 0;
    for (size_t i = 0; i < r->n_opt; i++)
        opt_cost += sc_postings_cost(r->opt[i].p);
    if (!r->ct && r->n_opt && bounded && opt_cost < sc_postings_cost(r->req.p) &&
        !(r->bufs = sc_arena_alloc(a, r->n_opt * sizeof *r->bufs)))
        return NULL;
    return r;
}

/* BM25 of t for docs[k] with frequency f (Lucene's order, as term_score_batch). */
static inline float term_bm25(const rt_term *t, uint32_t doc, uint32_t f)
{
    float ni = t->bm25->cache[t->norms ? t->norms[doc] : 1];
    return t->bm25->weight - t->bm25->weight / (1.0f + (float)f * ni);
}

void sc__reqopt_terms_set_min_score(sc__reqopt_terms *r, float min_score)
{
    if (!r->ct)
        r->min_score = min_score;
}

/* Skips the required term's blocks whose bound plus the optional side's cannot beat
 * min_score (shallow moves, no decoding); when some were skipped, the batch starting at the
 * first doc of the first block that may compete (its docs and freqs into docs / r->freqs,
 * how many returned). 0 when nothing was skipped (the caller takes the next batch) or the
 * term is done (r->done). */
static size_t pruned_batch(sc__reqopt_terms *r, uint32_t *docs)
{
    sc_postings *p = r->req.p;
    if (p->exhausted || (p->started && p->doc == SC_POSTINGS_END))
        return 0;
    uint32_t start = p->started ? p->doc + 1 : 0, target = start;
    for (;;) {
        uint32_t end = sc_postings_advance_shallow(p, target);
        if (end == SC_POSTINGS_END) {
            r->done = true;
            return 0;
        }
        if (shallow_bound(&r->req) + r->opt_max > r->min_score)
            break;
        if (end == SC_POSTINGS_END - 1) {
            r->done = true;
            return 0;
        }
        target = end + 1;
    }
    if (target == start)
        return 0;
    uint32_t d = sc_postings_advance(p, target);
    if (d == SC_POSTINGS_END) {
        r->done = true;
        return 0;
    }
    docs[0] = d;
    r->freqs[0] = sc_postings_freq(p);
    return 1 + sc_postings_next_batch(p, docs + 1, r->freqs + 1, SC_POSTINGS_BLOCK - 1);
}

/* Once the required term alone cannot beat min_score (its maximum is at most that), only the
 * docs of the optional terms can compete: their union leads from the first doc past the
 * required side's last one (a merge of their batches, each doc's scores summed in double in
 * child order), and the required term is probed for each batch of it (Lucene's
 * ReqOptSumScorer turning the optional clause into a required one). The matches into docs /
 * scores (the same float sums as the tree's), *n_out of them (possibly 0); false at the end. */
static bool opt_led_batch(sc__reqopt_terms *r, uint32_t *docs, float *scores, size_t *n_out)
{
    sc_postings *q = r->req.p;
    if (q->exhausted)
        return false;
    if (!r->opt_lead) {
        r->opt_lead = true;
        uint32_t floor = q->started ? q->doc + 1 : 0;
        for (size_t i = 0; i < r->n_opt; i++) {
            sc_postings *o = r->opt[i].p;
            rt_buf *b = &r->bufs[i];
            b->pos = b->n = 0;
            b->done = true;
            if (o->exhausted)
                continue;
            uint32_t d = o->started && o->doc >= floor ? o->doc : sc_postings_advance(o, floor);
            if (d == SC_POSTINGS_END)
                continue;
            b->docs[0] = d;
            b->freqs[0] = sc_postings_freq(o);
            b->n = 1 + sc_postings_next_batch(o, b->docs + 1, b->freqs + 1, SC_POSTINGS_BLOCK - 1);
            b->done = false;
        }
    }
    double sum[SC_POSTINGS_BLOCK];
    size_t n = 0;
    while (n < SC_POSTINGS_BLOCK) {
        uint32_t d = SC_POSTINGS_END;
        for (size_t i = 0; i < r->n_opt; i++) {
            rt_buf *b = &r->bufs[i];
            if (!b->done && b->pos == b->n) {
                b->n = sc_postings_next_batch(r->opt[i].p, b->docs, b->freqs, SC_POSTINGS_BLOCK);
                b->pos = 0;
                b->done = b->n == 0;
            }
            if (!b->done && b->docs[b->pos] < d)
                d = b->docs[b->pos];
        }
        if (d == SC_POSTINGS_END)
            break;
        double s = 0.0;
        for (size_t i = 0; i < r->n_opt; i++) {
            rt_buf *b = &r->bufs[i];
            if (b->done || b->docs[b->pos] != d)
                continue;
            if (r->opt[i].bm25)
                s += term_bm25(&r->opt[i], d, b->freqs[b->pos]);
            b->pos++;
        }
        docs[n] = d;
        sum[n++] = s;
    }
    if (n == 0)
        return false;
    size_t m = sc_postings_filter(q, docs, n, r->keep, r->freqs, false);
    for (size_t i = 0; i < m; i++) {
        uint32_t k = r->keep[i], d = docs[k];
        docs[i] = d;
        scores[i] = term_bm25(&r->req, d, r->freqs[i]) + (float)sum[k];
    }
    *n_out = m;
    return true;
}

bool sc__reqopt_terms_next(sc__reqopt_terms *r, uint32_t *docs, float *scores, size_t *n_out)
{
    *n_out = 0;
    if (r->done)
        return false;
    size_t n;
    bool led = false; /* the optional term led: its scores are in */
    if (r->ct) {
        if (!sc__conj_terms_next(r->ct, docs, scores, &n)) {
            r->done = true;
            return false;
        }
    } else if (r->opt_lead || (r->min_score > 0.0f && r->bufs && r->req_max <= r->min_score)) {
        if (!opt_led_batch(r, docs, scores, &n)) {
            r->done = true;
            return false;
        }
        led = true;
    } else {
        n = r->min_score > 0.0f ? pruned_batch(r, docs) : 0;
        if (n == 0 && !r->done)
            n = sc_postings_next_batch(r->req.p, docs, r->freqs, SC_POSTINGS_BLOCK);
        if (n == 0) {
            r->done = true;
            return false;
        }
        for (size_t k = 0; k < n; k++)
            scores[k] = term_bm25(&r->req, docs[k], r->freqs[k]);
    }
    /* excluded docs: probed only (their cursors serve nothing else), then dropped */
    for (size_t e = 0; e < r->n_ex && n; e++) {
        sc_postings *p = r->ex[e].p;
        if (p->exhausted)
            continue;
        size_t m = sc_postings_filter(p, docs, n, r->keep, NULL, true);
        if (m == 0)
            continue;
        size_t j = 0, t = 0;
        for (size_t k = 0; k < n; k++) {
            if (t < m && r->keep[t] == k) {
                t++;
                continue;
            }
            docs[j] = docs[k];
            scores[j] = scores[k];
            j++;
        }
        n = j;
    }
    if (n && r->n_opt && !led) {
        double sum[SC_POSTINGS_BLOCK];
        bool on[SC_POSTINGS_BLOCK];
        for (size_t k = 0; k < n; k++) {
            sum[k] = 0.0;
            on[k] = false;
        }
        for (size_t o = 0; o < r->n_opt; o++) {
            const rt_term *t = &r->opt[o];
            if (t->p->exhausted)
                continue;
            size_t m = sc_postings_filter(t->p, docs, n, r->keep, r->freqs, false);
            for (size_t i = 0; i < m; i++) {
                uint32_t k = r->keep[i];
                on[k] = true;
                if (t->bm25)
                    sum[k] += term_bm25(t, docs[k], r->freqs[i]);
            }
        }
        for (size_t k = 0; k < n; k++)
            if (on[k])
                scores[k] += (float)sum[k];
    }
    *n_out = n;
    return true;
}
