/* A conjunction of terms driven by postings blocks (internal.h): the rarest term's docs, 128 at
 * a time, are probed in each other term in bulk (sc_postings_filter: skip tables, bitset blocks
 * answered from their bits, branch-free searches or a byte map inside decoded blocks), and the
 * survivors are scored in one loop. Used by exact counts (count.c; also the ANDed windows over
 * the same cursors) and by top-k collection (searcher.c), where it replaces the iterator-level
 * leapfrog (virtual calls per candidate and clause) and scoring every doc of every clause. */
#include <string.h>

#include "base/bitset.h"

#include "search/internal.h"

struct sc__conj_terms {
    size_t n;
    sc_postings **p; /* the clauses' cursors, the rarest (lead) first */
    const sc_bm25 **bm25;
    const uint8_t **norms;
    const bool *scoring;
    bool scores;
    bool done;
    uint32_t cand[SC_POSTINGS_BLOCK];
    uint32_t keep[SC_POSTINGS_BLOCK];
    uint32_t (*freqs)[SC_POSTINGS_BLOCK]; /* n rows, aligned with cand */
};

sc__conj_terms *sc__conj_terms_new(sc_arena *a, sc_doc_iter *it, bool scores)
{
    sc_doc_iter **kids;
    const bool *scoring;
    size_t n;
    if (!sc__iter_conjunction_batch_children(it, &kids, &scoring, &n))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!sc__iter_term_cursor(kids[i], NULL, NULL))
            return NULL;
    sc__conj_terms *ct = sc_arena_calloc(a, 1, sizeof *ct);
    sc_postings **p = sc_arena_alloc(a, n * sizeof *p);
    const sc_bm25 **bm = sc_arena_alloc(a, n * sizeof *bm);
    const uint8_t **nm = sc_arena_alloc(a, n * sizeof *nm);
    uint32_t(*fr)[SC_POSTINGS_BLOCK] = scores ? sc_arena_alloc(a, n * sizeof *fr) : NULL;
    if (!ct || !p || !bm || !nm || (scores && !fr))
        return NULL;
    for (size_t i = 0; i < n; i++)
        p[i] = sc__iter_term_cursor(kids[i], &bm[i], &nm[i]);
    ct->n = n;
    ct->p = p;
    ct->bm25 = bm;
    ct->norms = nm;
    ct->scoring = scoring;
    ct->scores = scores;
    ct->freqs = fr;
    return ct;
}

uint64_t sc__conj_terms_cost(const sc__conj_terms *ct, size_t i)
{
    return i < ct->n ? sc_postings_cost(ct->p[i]) : 0;
}

/* BM25 of the clauses' frequencies, summed in double in clause order (conj_score's order),
 * then cast once, as the conjunction scores. */
static void score_matches(const sc__conj_terms *ct, const uint32_t *docs, size_t n, float *scores)
{
    double sum[SC_POSTINGS_BLOCK];
    for (size_t k = 0; k < n; k++)
        sum[k] = 0.0;
    for (size_t i = 0; i < ct->n; i++) {
        const sc_bm25 *bm = ct->bm25[i];
        if (!ct->scoring[i] || !bm)
            continue;
        const float w = bm->weight;
        const float *cache = bm->cache;
        const uint8_t *norms = ct->norms[i];
        const uint32_t *f = ct->freqs[i];
        for (size_t k = 0; k < n; k++) {
            float ni = cache[norms ? norms[docs[k]] : 1];
            sum[k] += w - w / (1.0f + (float)f[k] * ni);
        }
    }
    for (size_t k = 0; k < n; k++)
        scores[k] = (float)sum[k];
}

bool sc__conj_terms_next(sc__conj_terms *ct, uint32_t *docs, float *scores, size_t *n_out)
{
    *n_out = 0;
    if (ct->done)
        return false;
    uint32_t *cand = ct->cand;
    size_t n =
        sc_postings_next_batch(ct->p[0], cand, ct->scores ? ct->freqs[0] : NULL, SC_POSTINGS_BLOCK);
    if (n == 0) {
        ct->done = true;
        return false;
    }
    for (size_t i = 1; i < ct->n && n; i++) {
        sc_postings *p = ct->p[i];
        /* counts leave the cursors between blocks (no decode of the last candidate's block);
         * scoring keeps it decoded: the next batch starts there, and probing a bitset block
         * again with its freqs cost more than decoding it once (TOP_10_COUNT 0.88-0.95x) */
        size_t m =
            sc_postings_filter(p, cand, n, ct->keep, ct->scores ? ct->freqs[i] : NULL, !ct->scores);
        if (m < n) {
            /* compact the candidates and the earlier clauses' frequencies (keep[k] >= k) */
            for (size_t k = 0; k < m; k++)
                cand[k] = cand[ct->keep[k]];
            if (ct->scores)
                for (size_t e = 0; e < i; e++)
                    for (size_t k = 0; k < m; k++)
                        ct->freqs[e][k] = ct->freqs[e][ct->keep[k]];
        }
        n = m;
        if (p->exhausted)
            ct->done = true; /* no later candidate can match */
    }
    memcpy(docs, cand, n * sizeof *docs);
    if (ct->scores && scores)
        score_matches(ct, docs, n, scores);
    *n_out = n;
    return true;
}

uint64_t sc__conj_terms_count_windows(sc__conj_terms *ct, uint32_t n_docs, const sc_bitset *live,
                                      uint64_t *acc, uint64_t *tmp, sc_cancel_token *cancel)
{
    sc_bitset a = {acc, 4096 + 64}, t = {tmp, 4096 + 64};
    uint64_t total = 0;
    uint32_t n_windows = 0;
    for (size_t i = 0; i < ct->n; i++)
        if (sc_postings_next(ct->p[i]) == SC_POSTINGS_END)
            return 0;
    for (;;) {
        /* the window starts at the furthest cursor's doc; the others catch up by skipping */
        uint32_t d = 0;
        for (size_t i = 0; i < ct->n; i++)
            if (ct->p[i]->doc > d)
                d = ct->p[i]->doc;
        if (d == SC_POSTINGS_END)
            break;
        for (size_t i = 0; i < ct->n; i++)
            if (ct->p[i]->doc < d && sc_postings_advance(ct->p[i], d) == SC_POSTINGS_END)
                return total;
        uint32_t wbase = d & ~63u;
        uint32_t wend = n_docs - wbase > 4096 ? wbase + 4096 : n_docs;
        size_t nw = (wend - wbase + 63) / 64;
        uint64_t any = 0;
        for (size_t i = 0; i < ct->n; i++) {
            sc_postings *p = ct->p[i];
            if (p->doc >= wend) {
                any = 0; /* nothing of this clause in the window */
                break;
            }
            memset(i ? tmp : acc, 0, nw * sizeof(uint64_t));
            sc_postings_into_bitset(p, wend, i ? &t : &a, wbase);
            if (i == 0)
                continue;
            any = 0;
            for (size_t w = 0; w < nw; w++)
                any |= acc[w] &= tmp[w];
            if (!any)
                break; /* the later clauses skip this window's docs at the next window */
        }
        if (any) {
            if (live)
                for (size_t w = 0; w < nw; w++)
                    acc[w] &= live->words[(wbase >> 6) + w];
            total += sc_popcount_words(acc, nw);
        }
        if (cancel && sc_cancel_token_check(cancel, (++n_windows & 7) == 0))
            break;
    }
    return total;
}
