/* The kNN query's plan (internal.h: sc__knn_plan): the shard's nearest neighbours are found
 * while planning, as Lucene's AbstractKnnVectorQuery rewrites itself: per segment, the filter
 * (if any) becomes a bitset ANDed with the live docs, then the segment's vectors are searched
 * (index/vecfield.h: the HNSW graph with the filter as accept bits, or an exact scan when the
 * filter accepts at most num_candidates docs or the graph visits more nodes than it accepts);
 * the best k of the shard are kept and become a DOCS plan (a doc list per segment with its
 * scores). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/vecfield.h"
#include "search/internal.h"

typedef struct khit {
    float score; /* Elasticsearch's vector score (before boost) */
    uint32_t seg, doc;
} khit;

static int cmp_khit(const void *a, const void *b)
{
    const khit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

static int cmp_seg_doc(const void *a, const void *b)
{
    const khit *x = a, *y = b;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* The accepted docs of segment i: filter AND live (NULL words when every doc is accepted). */
static sc_status accept_bits(sc__search_ctx *ctx, const sc__plan *filter, size_t i,
                             const uint64_t **words, uint64_t *n_accept)
{
    const sc_searcher_segment *ss = &ctx->s->segs[i];
    uint32_t n_docs = sc_segment_n_docs(ss->seg);
    *words = NULL;
    *n_accept = n_docs;
    if (!filter) {
        if (ss->live) {
            *words = ss->live->words;
            *n_accept = n_docs - ss->n_deleted;
        }
        return SC_OK;
    }
    size_t nw = sc_bitset_words_for(n_docs) + 1;
    uint64_t *w = sc_arena_calloc(ctx->a, nw, sizeof(uint64_t));
    if (!w)
        return sc__search_oom(ctx);
    sc_bitset bs = {w, n_docs};
    sc_doc_iter *it;
    SC_TRY(sc__plan_iter(ctx, filter, i, &it));
    if (it) {
        sc_doc_iter_next(it);
        if (it->doc != SC_DOC_END)
            sc_doc_iter_into_bitset(it, n_docs, &bs, 0);
    }
    if (ss->live)
        for (size_t k = 0; k + 1 < nw; k++)
            w[k] &= ss->live->words[k];
    *words = w;
    *n_accept = sc_popcount_words(w, nw - 1);
    return SC_OK;
}

/* Searches segment i, appending its hits (similarity units) to *hits. */
static sc_status search_segment(sc__search_ctx *ctx, const sc_query *q, const sc__plan *filter,
                                size_t i, khit *hits, size_t *n_hits, sc_hnsw_hit *scratch)
{
    const sc_segment *seg = ctx->s->segs[i].seg;
    const sc_field_info *f = sc_segment_field(seg, q->u.knn.field);
    if (!f || f->kind != SC_FIELD_VECTOR || f->points_len == 0)
        return SC_OK;
    sc_vec_field vf;
    sc_status st = sc_segment_vectors(seg, f, &vf);
    if (st != SC_OK)
        return sc__search_corrupt(ctx, st, q->u.knn.field);
    if (vf.p.dims != q->u.knn.dims)
        return sc__search_fail(ctx, SC_EINVAL,
                               "the query vector has a different number of dimensions [%u] than "
                               "the document vectors [%u]",
                               q->u.knn.dims, vf.p.dims);
    sc_vec_knn_opts o = {
        .query = q->u.knn.vector,
        .k = q->u.knn.k,
        .num_candidates = q->u.knn.num_candidates,
        .oversample = q->u.knn.oversample};
    SC_TRY(accept_bits(ctx, filter, i, &o.accept, &o.n_accept));
    if (o.accept && o.n_accept == 0)
        return SC_OK;
    size_t n = 0;
    bool exact;
    st = sc_vec_knn(&vf, &o, ctx->a, scratch, &n, &exact);
    if (st != SC_OK)
        return st == SC_ENOMEM || st == SC_ELIMIT ? sc__search_oom(ctx) : st;
    for (size_t j = 0; j < n; j++) {
        if (!isnan(q->u.knn.similarity) &&
            !sc_vec_similarity_ok(&vf.p, scratch[j].score, q->u.knn.similarity))
            continue;
        float score = sc_vec_score(&vf.p, scratch[j].score);
        hits[(*n_hits)++] = (khit){score, (uint32_t)i, scratch[j].ord};
    }
    return SC_OK;
}

/* Groups the kept hits per segment (docs ascending) into p. */
static sc_status to_docs_plan(sc__search_ctx *ctx, khit *hits, size_t n, float boost, sc__plan *p)
{
    size_t ns = ctx->s->n_segs;
    p->seg_docs = sc_arena_calloc(ctx->a, ns + 1, sizeof *p->seg_docs);
    p->seg_scores = sc_arena_calloc(ctx->a, ns + 1, sizeof *p->seg_scores);
    p->seg_n = sc_arena_calloc(ctx->a, ns + 1, sizeof *p->seg_n);
    uint32_t *docs = sc_arena_alloc(ctx->a, (n + 1) * sizeof *docs);
    float *scores = sc_arena_alloc(ctx->a, (n + 1) * sizeof *scores);
    if (!p->seg_docs || !p->seg_scores || !p->seg_n || !docs || !scores)
        return sc__search_oom(ctx);
    qsort(hits, n, sizeof *hits, cmp_seg_doc);
    for (size_t j = 0; j < n; j++) {
        uint32_t s = hits[j].seg;
        if (!p->seg_n[s]) {
            p->seg_docs[s] = docs + j;
            p->seg_scores[s] = scores + j;
        }
        docs[j] = hits[j].doc;
        scores[j] = hits[j].score * boost;
        p->seg_n[s]++;
    }
    return SC_OK;
}

sc_status sc__knn_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                       sc__plan **out)
{
    sc__plan *p = sc_arena_calloc(ctx->a, 1, sizeof *p);
    if (!p)
        return sc__search_oom(ctx);
    p->kind = SC__PLAN_DOCS;
    p->scoring = scoring;
    p->score = boost;
    sc__plan *filter = NULL;
    if (q->u.knn.filter)
        SC_TRY(sc__plan_build(ctx, q->u.knn.filter, false, &filter));
    if (filter && filter->kind == SC__PLAN_NONE) {
        p->kind = SC__PLAN_NONE;
        *out = p;
        return SC_OK;
    }
    uint32_t k = q->u.knn.k;
    size_t per = (size_t)k * SC_VEC_INT8_OVERSAMPLE;
    if (per < q->u.knn.num_candidates)
        per = q->u.knn.num_candidates;
    if (q->u.knn.oversample > 0) { /* sc_vec_knn's beam: at least ceil(k oversample), capped */
        double r = ceil((double)k * (q->u.knn.oversample < 1 ? 1.0 : q->u.knn.oversample));
        size_t os = r > SC_VEC_MAX_RESCORE ? SC_VEC_MAX_RESCORE : (size_t)r;
        if (per < os)
            per = os;
    }
    size_t ns = ctx->s->n_segs;
    khit *hits = sc_arena_alloc(ctx->a, ((size_t)k * ns + 1) * sizeof *hits);
    sc_hnsw_hit *scratch = sc_arena_alloc(ctx->a, (per + 1) * sizeof *scratch);
    if (!hits || !scratch)
        return sc__search_oom(ctx);
    size_t n = 0;
    for (size_t i = 0; i < ns; i++) {
        if (sc__search_cancelled(ctx, true))
            break;
        SC_TRY(search_segment(ctx, q, filter, i, hits, &n, scratch));
    }
    /* the shard's best k over its segments (ties: segment, then doc) */
    qsort(hits, n, sizeof *hits, cmp_khit);
    if (n > k)
        n = k;
    /* a global kNN phase ran first: keep only this shard's part of the global top k */
    while (n && hits[n - 1].score * boost < q->u.knn.min_score)
        n--;
    SC_TRY(to_docs_plan(ctx, hits, n, boost, p));
    *out = p;
    return SC_OK;
}
