/* The sampler aggregation (agg_internal.h): one bucket per owner holding a shard's best
 * `shard_size` docs by score, which its sub-aggregations see instead of every doc.
 * Elasticsearch keeps the top docs by score, ties by doc id; under a query whose matches all
 * score alike (match_all, filters, ranges, constant_score, a bool of such) those are the first
 * shard_size matches in doc order, which docs arrive in (segments in order, docs non-decreasing
 * within one), so a doc passes while its owner's count is below shard_size. A query that
 * scores docs differently is refused (400): the collectors see no scores. */
#include <stdio.h>

#include "search/agg_internal.h"

/* Whether every match of q scores the same (conservative: false when unsure). */
static bool constant_scores(const sc_query *q)
{
    if (!q)
        return true;
    switch (q->kind) {
    case SC_QUERY_MATCH_ALL:
    case SC_QUERY_MATCH_NONE:
    case SC_QUERY_TERMS:
    case SC_QUERY_CONSTANT_SCORE:
    case SC_QUERY_IDS:
    case SC_QUERY_EXISTS:
    case SC_QUERY_RANGE:
    case SC_QUERY_GEO: return true;
    case SC_QUERY_BOOL:
        for (size_t i = 0; i < q->u.bool_.n_clauses; i++) {
            const sc_query_clause *cl = &q->u.bool_.clauses[i];
            if (cl->occur == SC_OCCUR_SHOULD ||
                (cl->occur == SC_OCCUR_MUST && !constant_scores(cl->query)))
                return false;
        }
        return true;
    default: return false;
    }
}

static sc_status sampler_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    (void)c;
    (void)s;
    return SC_OK;
}

static sc_status sampler_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static sc_status sampler_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                 size_t n)
{
    uint64_t cap = c->spec->shard_size;
    for (size_t i = 0; i < n; i++) {
        uint32_t owner = owners ? owners[i] : 0;
        if (owner < c->doc_counts.len && ((const uint64_t *)c->doc_counts.p)[owner] >= cap)
            continue;
        SC_TRY(sc__agg_emit(c, docs[i], owner));
    }
    return SC_OK;
}

static sc_status sampler_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 1);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    SC_TRY(sc__agg_count_buckets(c->ctx, 1));
    SC_TRY(sc__agg_build_bucket(c, owner, &r->buckets[0]));
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops sampler_ops = {
    .seg_begin = sampler_seg_begin,
    .collect = sampler_collect,
    .seg_end = sampler_seg_end,
    .build = sampler_build,
};

sc_status sc__agg_sampler_new(sc__agg_coll *c)
{
    if (!constant_scores(c->ctx->q)) {
        snprintf(c->ctx->err->reason, sizeof c->ctx->err->reason,
                 "[sampler] aggregation [%s] under a query that scores documents differently is "
                 "not supported yet (only match_all, filters, ranges, constant_score and bools "
                 "of those)",
                 c->spec->name);
        return SC_EUNSUPPORTED;
    }
    c->ops = &sampler_ops;
    return SC_OK;
}
