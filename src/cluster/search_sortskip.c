/* can_match by sort (search_internal.h): with a primary sort on a numeric field and no tracked
 * total, a node runs its shards best-bounded first and skips a shard whose best possible value
 * (its points' min ascending, max descending) cannot beat the worst of a full top k already
 * found on this node (Elasticsearch's bottom sort values). */
#include <stdlib.h>

#include "cluster/search_internal.h"
#include "search/can_match.h"

bool sc__sortskip_applies(const sc_node_query_request *req)
{
    const sc_search_request *sr = req->search;
    if (!req->can_match || !sr || !sr->n_sort || req->k == 0 || req->collect || sr->collapse ||
        sr->n_rescore || sr->track_total_hits != SC_TRACK_TOTAL_HITS_NONE)
        return false;
    const sc_sort_spec *s = &sr->sort[0];
    /* missing values sort last and so never beat a real bottom; avg/sum compare doubles */
    return s->kind == SC_SORT_BY_NUMERIC && !s->missing_first &&
           (s->mode == SC_SORT_MODE_AUTO || s->mode == SC_SORT_MODE_MIN ||
            s->mode == SC_SORT_MODE_MAX);
}

sc__sortskip_bound sc__sortskip_bound_of(const sc_shard_snapshot *snap, const sc_sort_spec *s,
                                         int64_t *best)
{
    sc_searcher_segment one[16];
    sc_searcher_segment *segs =
        snap->n_segments <= 16 ? one : malloc(snap->n_segments * sizeof *segs);
    if (!segs)
        return SC__SORTSKIP_UNKNOWN;
    sc_searcher se;
    sc_shard_searcher_init(snap, segs, &se);
    int64_t lo = 0, hi = 0;
    sc_status st = sc_searcher_numeric_bounds(&se, s->field, &lo, &hi);
    if (segs != one)
        free(segs);
    if (st == SC_ENOTFOUND)
        return SC__SORTSKIP_NO_VALUES;
    if (st != SC_OK)
        return SC__SORTSKIP_UNKNOWN;
    *best = s->desc ? hi : lo;
    return SC__SORTSKIP_KNOWN;
}

void sc__sortskip_init(sc__sort_bottom *b)
{
    pthread_mutex_init(&b->mu, NULL);
    b->set = false;
    b->v = 0;
}

void sc__sortskip_fini(sc__sort_bottom *b)
{
    pthread_mutex_destroy(&b->mu);
}

bool sc__sortskip_cannot_beat(sc__sort_bottom *b, const sc_sort_spec *s, sc__sortskip_bound kind,
                              int64_t best)
{
    if (kind == SC__SORTSKIP_UNKNOWN)
        return false;
    pthread_mutex_lock(&b->mu);
    bool skip = b->set && (kind == SC__SORTSKIP_NO_VALUES || (s->desc ? best < b->v : best > b->v));
    pthread_mutex_unlock(&b->mu);
    return skip; /* strictly worse: a tie could still win on shard order */
}

void sc__sortskip_offer(sc__sort_bottom *b, const sc_sort_spec *s, const sc_sort_key *kth)
{
    if (!kth || kth->missing)
        return;
    pthread_mutex_lock(&b->mu);
    if (!b->set || (s->desc ? kth->i > b->v : kth->i < b->v)) {
        b->v = kth->i;
        b->set = true;
    }
    pthread_mutex_unlock(&b->mu);
}

typedef struct ranked_target {
    size_t t;
    sc__sortskip_bound kind;
    int64_t best;
} ranked_target;

static int cmp_asc(const void *pa, const void *pb)
{
    const ranked_target *a = pa, *b = pb;
    if (a->kind != b->kind) /* known bounds first, then unknown, then shards without values */
        return a->kind < b->kind ? -1 : 1;
    if (a->best != b->best)
        return a->best < b->best ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

static int cmp_desc(const void *pa, const void *pb)
{
    const ranked_target *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->best != b->best)
        return a->best > b->best ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

void sc__sortskip_order(const sc_node_query_request *req, size_t *order)
{
    size_t nt = req->n_targets;
    ranked_target *r = malloc((nt ? nt : 1) * sizeof *r);
    const sc_search_request *sr = req->search;
    for (size_t t = 0; t < nt; t++)
        order[t] = t;
    if (!r)
        return;
    for (size_t t = 0; t < nt; t++) {
        const sc_shard_target *tg = &req->targets[t];
        sc_index *ix = sr->indices[tg->index_i];
        r[t] = (ranked_target){.t = t, .kind = SC__SORTSKIP_UNKNOWN};
        if (!ix->shards || !ix->shards[tg->shard])
            continue;
        const sc_shard_snapshot *snap = sc_shard_searcher_acquire(ix->shards[tg->shard]);
        r[t].kind = sc__sortskip_bound_of(snap, &sr->sort[0], &r[t].best);
        sc_shard_searcher_release(snap);
    }
    qsort(r, nt, sizeof *r, sr->sort[0].desc ? cmp_desc : cmp_asc);
    for (size_t t = 0; t < nt; t++)
        order[t] = r[t].t;
    free(r);
}
