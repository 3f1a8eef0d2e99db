/* Top-k of a sum disjunction of terms without exact totals (internal.h): block-max MaxScore
 * over windows, driven by postings blocks. A window ends where some clause's block ends, so
 * in it every clause has one score bound (its block's best impact) and at most 128 docs; a
 * clause known to have no doc in the window bounds it by 0 (the rare term of or_high_low
 * between its docs). The clauses whose bounds cannot beat the threshold together are
 * non-essential: only the other clauses' docs are candidates, scored in bulk, and the
 * non-essential ones are probed for the candidates that can still win (sc_postings_filter),
 * highest bound first. A window where no clause is essential is skipped undecoded. Scores are
 * the double sums in the disjunction's child order, cast to float, as the iterator tree's. */
#include <math.h>
#include <string.h>

#include "search/internal.h"

#define UNKNOWN_DOC (SC_POSTINGS_END - 1) /* a clause's next doc is not known */
/* Windows skipped in a row before sc__disj_terms_next returns, empty, so that the caller
 * checks its cancel token. */
#define MAX_EMPTY_WINDOWS 64

typedef struct dt_clause {
    sc_postings *p;
    const sc_bm25 *bm25;
    const uint8_t *norms;
    uint32_t bend; /* last doc of the cached shallow block (bvalid) */
    bool bvalid, bexact, dead;
    float bound; /* of the cached block: loose (max freq, min norm) until bexact */
    float ub;    /* bound in the current window (0: no doc in it) */
    size_t ne;   /* essential: its docs in the window (edocs/escores rows) */
} dt_clause;

struct sc__disj_terms {
    dt_clause *c; /* child order */
    size_t n;
    size_t cap_n;   /* the buffers have room for this many clauses */
    uint32_t floor; /* every doc below is done */
    float thr;      /* -inf until a collector sets a minimum score */
    bool done;
    size_t *order;   /* the live clauses by window bound, ascending */
    double *prefix;  /* prefix[k]: sum of the k smallest bounds */
    uint32_t *edocs; /* n rows of SC_POSTINGS_BLOCK */
    uint32_t *efreqs;
    float *escores;
    size_t *epos;
    /* the window's candidates (at most SC_POSTINGS_BLOCK per essential clause) */
    uint32_t *cdocs;
    float *contrib;  /* per candidate, n contributions in child order (0: no match) */
    double *partial; /* per candidate, the sum of its contributions so far */
    uint32_t *idx;   /* candidates still in play */
    uint32_t *pdocs; /* their docs */
    uint32_t *keep, *kfreqs;
    uint32_t *out_docs;
    float *out_scores;
};

/* BM25 of clause c for doc d with frequency f (Lucene's order, as term_score_batch). */
static inline float clause_bm25(const dt_clause *c, uint32_t d, uint32_t f)
{
    float ni = c->bm25->cache[c->norms ? c->norms[d] : 1];
    return c->bm25->weight - c->bm25->weight / (1.0f + (float)f * ni);
}

static inline float impact_bm25(const dt_clause *c, sc_postings_impact im)
{
    return sc_bm25_score(c->bm25, (float)im.max_freq,
                         c->norms ? (im.min_norm ? im.min_norm : 1) : 1);
}

/* Whether a sum bounded by `bound` (a double sum of float bounds) may exceed thr: the bound is
 * inflated by far more than the rounding of a double sum of a few floats, so a float score
 * it bounds never casts above it. */
static inline bool may_beat(double bound, float thr)
{
    return (float)(bound * (1.0 + 0x1p-30)) > thr;
}

/* A state with buffers for up to n clauses, in a. */
static sc__disj_terms *scratch_new(sc_arena *a, size_t n)
{
    size_t cap = n * SC_POSTINGS_BLOCK;
    sc__disj_terms *dt = sc_arena_calloc(a, 1, sizeof *dt);
    if (!dt)
        return NULL;
    dt->c = sc_arena_calloc(a, n, sizeof *dt->c);
    dt->order = sc_arena_alloc(a, n * sizeof *dt->order);
    dt->prefix = sc_arena_alloc(a, (n + 1) * sizeof *dt->prefix);
    dt->edocs = sc_arena_alloc(a, cap * sizeof *dt->edocs);
    dt->efreqs = sc_arena_alloc(a, cap * sizeof *dt->efreqs);
    dt->escores = sc_arena_alloc(a, cap * sizeof *dt->escores);
    dt->epos = sc_arena_alloc(a, n * sizeof *dt->epos);
    dt->cdocs = sc_arena_alloc(a, cap * sizeof *dt->cdocs);
    dt->contrib = sc_arena_alloc(a, cap * n * sizeof *dt->contrib);
    dt->partial = sc_arena_alloc(a, cap * sizeof *dt->partial);
    dt->idx = sc_arena_alloc(a, cap * sizeof *dt->idx);
    dt->pdocs = sc_arena_alloc(a, cap * sizeof *dt->pdocs);
    dt->keep = sc_arena_alloc(a, cap * sizeof *dt->keep);
    dt->kfreqs = sc_arena_alloc(a, cap * sizeof *dt->kfreqs);
    dt->out_docs = sc_arena_alloc(a, cap * sizeof *dt->out_docs);
    dt->out_scores = sc_arena_alloc(a, cap * sizeof *dt->out_scores);
    if (!dt->c || !dt->order || !dt->prefix || !dt->edocs || !dt->efreqs || !dt->escores ||
        !dt->epos || !dt->cdocs || !dt->contrib || !dt->partial || !dt->idx || !dt->pdocs ||
        !dt->keep || !dt->kfreqs || !dt->out_docs || !dt->out_scores)
        return NULL;
    dt->cap_n = n;
    return dt;
}

sc__disj_terms *sc__disj_terms_new(sc_arena *a, sc_doc_iter *it, sc__disj_terms *reuse)
{
    sc_doc_iter **kids;
    size_t n;
    if (!sc__iter_disjunction_batch_children(it, &kids, &n) || n < 2 ||
        n > SC__DISJ_TERMS_MAX_CLAUSES)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const sc_bm25 *bm;
        /* the bounds assume scores that grow with freq and shrink with length: BM25 with a
         * weight >= 0 */
        if (!sc__iter_term_cursor(kids[i], &bm, NULL) || !bm || !(bm->weight >= 0.0f))
            return NULL;
    }
    sc__disj_terms *dt = reuse;
    if (dt && dt->cap_n >= n) {
        memset(dt->c, 0, n * sizeof *dt->c);
        dt->floor = 0;
        dt->done = false;
    } else if (!(dt = scratch_new(a, n))) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        dt_clause *c = &dt->c[i];
        c->p = sc__iter_term_cursor(kids[i], &c->bm25, &c->norms);
    }
    dt->n = n;
    dt->thr = -INFINITY;
    return dt;
}

void sc__disj_terms_set_min_score(sc__disj_terms *dt, float min_score)
{
    if (min_score > dt->thr)
        dt->thr = min_score;
}

/* The clause's first doc >= wmin if known without moving its cursor, else UNKNOWN_DOC. A
 * cursor on a doc >= wmin (after an advance, a probe or a read past a window) has no doc
 * between the last target it was given and that doc, and every doc below wmin is done. */
static inline uint32_t known_doc(const dt_clause *c, uint32_t wmin)
{
    const sc_postings *p = c->p;
    if (p->exhausted)
        return SC_POSTINGS_END;
    return p->started && p->doc >= wmin ? p->doc : UNKNOWN_DOC;
}

/* Moves the clause's cursor to its first doc >= wmin (if it is not there) and returns it. */
static inline uint32_t position(dt_clause *c, uint32_t wmin)
{
    uint32_t d = known_doc(c, wmin);
    return d != UNKNOWN_DOC ? d : sc_postings_advance(c->p, wmin);
}

/* The exact bound of the clause's cached block: the best BM25 over its competitive (freq,
 * norm) pairs (the loose bound when they cannot be read). */
static void exact_bound(dt_clause *c)
{
    sc_postings_impact imps[SC_POSTINGS_BLOCK];
    size_t k = sc_postings_shallow_impacts(c->p, imps, SC_POSTINGS_BLOCK);
    c->bexact = true;
    if (k == 0)
        return;
    float best = 0.0f;
    for (size_t i = 0; i < k; i++) {
        float s = sc_bm25_score(c->bm25, (float)imps[i].max_freq, c->norms ? imps[i].min_norm : 1);
        if (s > best)
            best = s;
    }
    if (best < c->bound)
        c->bound = best;
}

/* Sorts the live clauses by window bound (insertion sort: n is small) and returns how many of
 * the smallest cannot beat the threshold together (the non-essential ones, order[0..k)). */
static size_t partition(sc__disj_terms *dt, size_t n_live)
{
    size_t *o = dt->order;
    for (size_t i = 1; i < n_live; i++)
        for (size_t j = i; j > 0 && dt->c[o[j]].ub < dt->c[o[j - 1]].ub; j--) {
            size_t t = o[j];
            o[j] = o[j - 1];
            o[j - 1] = t;
        }
    dt->prefix[0] = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n_live; i++) {
        dt->prefix[i + 1] = dt->prefix[i] + dt->c[o[i]].ub;
        if (k == i && !may_beat(dt->prefix[i + 1], dt->thr))
            k = i + 1;
    }
    return k;
}

/* Zeroes a candidate's contributions (a loop: n is small, a memset call cost 5% of
 * or_high_high). */
static inline float *new_row(sc__disj_terms *dt, size_t m)
{
    float *row = dt->contrib + m * dt->n;
    for (size_t i = 0; i < dt->n; i++)
        row[i] = 0.0f;
    return row;
}

/* The window's candidates from the essential clauses order[n_non..n_live) (each read up to
 * wmax): their docs merged in order, each with its contributions, but for those that cannot
 * beat the threshold even with every non-essential clause. Returns how many. */
static size_t gather(sc__disj_terms *dt, size_t n_non, size_t n_live, uint32_t wmax)
{
    size_t ne = n_live - n_non, m = 0;
    double rest = dt->prefix[n_non]; /* the non-essential clauses' bounds */
    float thr = dt->thr;
    for (size_t e = 0; e < ne; e++) {
        size_t ci = dt->order[n_non + e];
        dt_clause *c = &dt->c[ci];
        uint32_t *docs = dt->edocs + ci * SC_POSTINGS_BLOCK;
        uint32_t *freqs = dt->efreqs + ci * SC_POSTINGS_BLOCK;
        float *scores = dt->escores + ci * SC_POSTINGS_BLOCK;
        c->ne = sc_postings_take_upto(c->p, wmax, docs, freqs, SC_POSTINGS_BLOCK);
        for (size_t k = 0; k < c->ne; k++)
            scores[k] = clause_bm25(c, docs[k], freqs[k]);
        dt->epos[ci] = 0;
    }
    if (ne == 1) {
        size_t ci = dt->order[n_non];
        const uint32_t *docs = dt->edocs + ci * SC_POSTINGS_BLOCK;
        const float *scores = dt->escores + ci * SC_POSTINGS_BLOCK;
        for (size_t k = 0; k < dt->c[ci].ne; k++) {
            if (!may_beat(scores[k] + rest, thr))
                continue;
            new_row(dt, m)[ci] = scores[k];
            dt->cdocs[m] = docs[k];
            dt->partial[m++] = scores[k];
        }
        return m;
    }
    for (;;) {
        uint32_t d = SC_POSTINGS_END;
        for (size_t e = 0; e < ne; e++) {
            size_t ci = dt->order[n_non + e];
            if (dt->epos[ci] < dt->c[ci].ne && dt->edocs[ci * SC_POSTINGS_BLOCK + dt->epos[ci]] < d)
                d = dt->edocs[ci * SC_POSTINGS_BLOCK + dt->epos[ci]];
        }
        if (d == SC_POSTINGS_END)
            return m;
        float *row = new_row(dt, m);
        double s = 0.0;
        for (size_t e = 0; e < ne; e++) {
            size_t ci = dt->order[n_non + e], k = dt->epos[ci];
            if (k < dt->c[ci].ne && dt->edocs[ci * SC_POSTINGS_BLOCK + k] == d) {
                row[ci] = dt->escores[ci * SC_POSTINGS_BLOCK + k];
                s += row[ci];
                dt->epos[ci] = k + 1;
            }
        }
        if (!may_beat(s + rest, thr))
            continue; /* the row is reused */
        dt->cdocs[m] = d;
        dt->partial[m] = s;
        m++;
    }
}

/* Scores the window's m candidates: drops those that cannot beat the threshold, probes the
 * non-essential clauses (highest bound first) for the rest, and writes the winners (all of
 * them without a threshold) to out_docs / out_scores. Returns how many. */
static size_t score_window(sc__disj_terms *dt, size_t m, size_t n_non)
{
    size_t n = dt->n, live = m;
    for (size_t k = 0; k < m; k++)
        dt->idx[k] = (uint32_t)k;
    for (size_t j = n_non + 1; j-- > 0 && live;) {
        /* the candidates that may still win with the clauses order[0..j) still to come */
        size_t w = 0;
        for (size_t t = 0; t < live; t++) {
            uint32_t k = dt->idx[t];
            if (may_beat(dt->partial[k] + dt->prefix[j], dt->thr)) {
                dt->idx[w] = k;
                dt->pdocs[w++] = dt->cdocs[k];
            }
        }
        live = w;
        if (j == 0 || !live)
            break;
        size_t ci = dt->order[j - 1];
        dt_clause *c = &dt->c[ci];
        if (c->ub == 0.0f || c->p->exhausted)
            continue; /* no doc in the window */
        size_t h = sc_postings_filter(c->p, dt->pdocs, live, dt->keep, dt->kfreqs, false);
        for (size_t t = 0; t < h; t++) {
            uint32_t k = dt->idx[dt->keep[t]];
            float s = clause_bm25(c, dt->cdocs[k], dt->kfreqs[t]);
            dt->contrib[k * n + ci] = s;
            dt->partial[k] += s;
        }
    }
    size_t out = 0;
    for (size_t t = 0; t < live; t++) {
        uint32_t k = dt->idx[t];
        const float *row = dt->contrib + k * n;
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += row[i];
        float f = (float)s;
        if (f > dt->thr) {
            dt->out_docs[out] = dt->cdocs[k];
            dt->out_scores[out++] = f;
        }
    }
    return out;
}

bool sc__disj_terms_next(sc__disj_terms *dt, const uint32_t **docs, const float **scores,
                         size_t *n_out)
{
    *n_out = 0;
    *docs = dt->out_docs;
    *scores = dt->out_scores;
    for (unsigned empty = 0; !dt->done && empty < MAX_EMPTY_WINDOWS; empty++) {
        uint32_t wmin = dt->floor, wmax = SC_POSTINGS_END;
        size_t n_live = 0;
        for (size_t i = 0; i < dt->n; i++) {
            dt_clause *c = &dt->c[i];
            if (c->dead)
                continue;
            if (c->p->exhausted) {
                c->dead = true;
                continue;
            }
            if (!c->bvalid || c->bend < wmin) {
                uint32_t e = sc_postings_advance_shallow(c->p, wmin);
                if (e == SC_POSTINGS_END) {
                    c->dead = true;
                    continue;
                }
                c->bend = e;
                c->bvalid = true;
                c->bexact = false;
                c->bound = impact_bm25(c, sc_postings_shallow_impact(c->p));
            }
            if (c->bend < wmax)
                wmax = c->bend + 1;
            dt->order[n_live++] = i;
        }
        if (n_live == 0) {
            dt->done = true;
            break;
        }
        for (size_t t = 0; t < n_live; t++) {
            dt_clause *c = &dt->c[dt->order[t]];
            uint32_t kd = known_doc(c, wmin);
            c->ub = kd == UNKNOWN_DOC || kd < wmax ? c->bound : 0.0f;
        }
        /* partition; refine the essential clauses' bounds (exact block bounds first, then
         * their next docs: a clause with none in the window bounds it by 0) until stable */
        size_t n_non;
        bool pruning = dt->thr > -INFINITY;
        for (;;) {
            n_non = partition(dt, n_live);
            if (n_non == n_live)
                break;
            bool changed = false;
            for (size_t t = n_non; pruning && t < n_live; t++) {
                dt_clause *c = &dt->c[dt->order[t]];
                if (!c->bexact && c->ub > 0.0f) {
                    exact_bound(c);
                    changed |= c->bound < c->ub;
                    c->ub = c->bound;
                }
            }
            if (changed)
                continue;
            for (size_t t = n_non; t < n_live; t++) {
                dt_clause *c = &dt->c[dt->order[t]];
                if (position(c, wmin) >= wmax && c->ub > 0.0f) {
                    c->ub = 0.0f;
                    changed = true;
                }
            }
            if (!changed)
                break;
        }
        dt->floor = wmax;
        if (wmax == SC_POSTINGS_END)
            dt->done = true;
        if (n_non == n_live)
            continue; /* nothing in the window can beat the threshold */
        size_t m = gather(dt, n_non, n_live, wmax);
        if (m == 0)
            continue;
        *n_out = score_window(dt, m, n_non);
        return true;
    }
    return !dt->done;
}
