/* Aggregations through the shard query phase's collect hook (shard/shard_search.h): per shard,
 * collect + build the partial (search/agg.h) in the query's budgeted scratch arena and move it
 * into the result arena through its binary encoding (what a remote node would send); per node,
 * the partial reduce of its shards; at the coordinator (sc__agg_final), the final reduce and
 * finalize. With a post_filter the hits query differs from the aggregations' query: the hook
 * maps one to the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"

static sc_status hook_run(void *ctx, const sc_shard_collect_call *call, void **partial_out,
                          uint64_t *n_matched_out, sc_shard_search_error *err)
{
    const sc__agg_hook *h = ctx;
    const sc_query *q = call->query;
    for (size_t i = 0; h->agg_queries && i < h->n_queries; i++)
        if (h->hit_queries[i] == call->query)
            q = h->agg_queries[i];
    sc_search_options o;
    sc_search_options_init(&o);
    o.cancel = call->token;
    sc_agg_shard_options so = {.n_shards = h->n_shards,
                               .max_buckets = h->max_buckets,
                               .runtime = h->runtime,
                               .n_runtime = h->n_runtime};
    for (size_t i = 0; h->index_names && i < h->n_queries; i++)
        if (h->hit_queries[i] == call->query)
            so.index_name = h->index_names[i];
    sc_search_result res;
    sc_agg_error aerr;
    sc_agg_result *r = NULL;
    memset(&res, 0, sizeof res);
    sc_status st =
        sc_agg_collect_shard(h->spec, call->searcher, q, &o, &so, call->scratch, &r, &res, &aerr);
    if (st != SC_OK) {
        if (aerr.too_many_buckets) {
            err->status = 400;
            err->type = "too_many_buckets_exception";
        } else if (!call->scratch->over_budget) {
            bool bad =
                st == SC_EUNSUPPORTED || st == SC_EPARSE || st == SC_EINVAL || st == SC_ELIMIT;
            err->status = bad ? 400 : 500;
            err->type = bad ? "illegal_argument_exception" : "exception";
        }
        if (err->type)
            snprintf(err->reason, sizeof err->reason, "%s", aerr.reason);
        return st;
    }
    /* the partial crosses into the result arena as it would cross nodes */
    uint8_t *bytes;
    size_t len;
    SC_TRY(sc_agg_encode(r, &bytes, &len));
    sc_agg_result *moved;
    st = sc_agg_decode(bytes, len, call->out, &moved);
    free(bytes);
    if (st != SC_OK)
        return st;
    *partial_out = moved;
    *n_matched_out = res.total;
    if (q != call->query && call->counts_total) {
        /* a post_filter: the aggregations saw more docs than the hits, whose total this is */
        sc_search_result cr;
        memset(&cr, 0, sizeof cr);
        st = sc_search_count(call->searcher, call->query, &o, call->scratch, &cr);
        if (st != SC_OK) {
            if (!call->scratch->over_budget) {
                bool bad =
                    st == SC_EUNSUPPORTED || st == SC_EPARSE || st == SC_EINVAL || st == SC_ELIMIT;
                err->status = bad ? 400 : 500;
                err->type = bad ? "query_shard_exception" : "exception";
                snprintf(err->reason, sizeof err->reason, "%s",
                         cr.error[0] ? cr.error : sc_status_str(st));
            }
            return st;
        }
        *n_matched_out = cr.total;
    }
    return SC_OK;
}

static sc_status hook_reduce(void *ctx, void *const *partials, size_t n, sc_arena *out,
                             void **out_partial, sc_shard_search_error *err)
{
    const sc__agg_hook *h = ctx;
    sc_agg_result **in = malloc((n ? n : 1) * sizeof *in);
    if (!in)
        return SC_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (partials[i])
            in[k++] = partials[i];
    *out_partial = NULL;
    if (!k) {
        free(in);
        return SC_OK;
    }
    /* the reduce's working memory (sort arrays, merged buckets that borrow the inputs' keys)
     * is given back once its result has been copied out; out->peak_bytes keeps its high-water
     * mark for the breaker */
    sc_arena_mark mark = sc_arena_mark_get(out);
    sc_agg_error aerr;
    sc_agg_result *r;
    sc_status st = sc_agg_reduce(h->spec, in, k, false, h->max_buckets, out, &r, &aerr);
    free(in);
    if (st != SC_OK) {
        err->status = st == SC_ECORRUPT ? 500 : 429;
        err->type = st == SC_ECORRUPT ? "exception" : "circuit_breaking_exception";
        snprintf(err->reason, sizeof err->reason, "%s",
                 aerr.reason[0] ? aerr.reason : sc_status_str(st));
        return st;
    }
    /* the reduction shares key bytes with the shards' partials, whose memory goes with the
     * node's shard results: it leaves self-contained, as it would leave the node, and compact
     * (only the merged buckets, not the reduce's scratch) */
    uint8_t *bytes;
    size_t len;
    SC_TRY(sc_agg_encode(r, &bytes, &len));
    sc_arena_rewind(out, mark);
    sc_agg_result *moved;
    st = sc_agg_decode(bytes, len, out, &moved);
    free(bytes);
    if (st != SC_OK)
        return st;
    *out_partial = moved;
    return SC_OK;
}

static sc_status hook_encode(void *ctx, const void *partial, uint8_t **bytes, size_t *len)
{
    (void)ctx;
    return sc_agg_encode(partial, bytes, len);
}

static sc_status hook_decode(void *ctx, const uint8_t *bytes, size_t len, sc_arena *out,
                             void **partial)
{
    (void)ctx;
    sc_agg_result *r;
    SC_TRY(sc_agg_decode(bytes, len, out, &r));
    *partial = r;
    return SC_OK;
}

void sc__agg_hook_init(sc__agg_hook *h)
{
    h->hook = (sc_shard_collect_hook){.ctx = h,
                                      .run = hook_run,
                                      .reduce = hook_reduce,
                                      .encode = hook_encode,
                                      .decode = hook_decode};
}

sc_status sc__agg_final(const sc__agg_hook *h, void *reduced, sc_arena *a, sc_agg_result **out,
                        sc_agg_error *err)
{
    memset(err, 0, sizeof *err);
    if (!reduced) {
        *out = sc_agg_result_empty(h->spec, a);
        return *out ? SC_OK : (a->over_budget ? SC_ELIMIT : SC_ENOMEM);
    }
    sc_agg_result *r = reduced;
    return sc_agg_reduce(h->spec, &r, 1, true, h->max_buckets, a, out, err);
}
