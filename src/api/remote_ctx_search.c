/* The data-node side of clustered scroll and point in time (cluster/ctx_wire.h): a context here
 * pins the snapshots of the shards a coordinator asked for (cluster/scroll.h registry, with its
 * keep-alive); each query against it runs the shipped node query (search_wire.h, parsed with
 * this node's mappings as in remote_search.c) over the pinned snapshots, per target from its
 * own position for a scroll page, and answers as a node query phase does, with a reader context
 * for the fetch that holds its own references. Also frees contexts and answers _terms_enum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/remote_internal.h"
#include "base/clock.h"
#include "cluster/ctx_wire.h"
#include "cluster/scroll.h"
#include "cluster/search.h"
#include "cluster/tasks.h"

/* The merged outcome of the per-target runs of one page. */
typedef struct page_run {
    sc_node_query_request *nq; /* per run */
    sc_node_query_response *nr;
    size_t n_runs;
    sc_node_shard_result *results; /* per target */
    sc_node_hit *top;
    size_t n_top;
    void *agg;
} page_run;

static void page_release(page_run *p)
{
    for (size_t i = 0; i < p->n_runs; i++)
        sc_node_query_release(&p->nq[i], &p->nr[i]);
}

/* A reader context for the fetch with its own references to the targets' snapshots. */
static uint64_t keep_fetch_context(sc_api_remote *r, const sc_wire_node_query *q, const page_run *p)
{
    if (!p->n_top)
        return 0;
    size_t nt = q->n_targets;
    sc__remote_ctx *c = sc__remote_ctx_new(nt);
    if (!c)
        return 0;
    for (size_t t = 0; t < nt; t++) {
        if (!p->results[t].snapshot || p->results[t].st != SC_OK)
            continue;
        c->shard_ix[c->n] = q->targets[t].shard_ix;
        c->snapshots[c->n++] = sc_shard_snapshot_ref(p->results[t].snapshot);
    }
    return sc__remote_ctx_put(r, c);
}

static sc_status encode_page(sc_api_remote *r, const remote_query *rq, const page_run *p,
                             sc_arena *a, sc_wire_buf *out)
{
    size_t nt = rq->q.n_targets;
    sc_wire_node_query_resp w = {
        .n_results = nt, .top = p->top, .n_top = p->n_top, .n_sort = rq->q.n_sort};
    w.results = sc_arena_calloc(a, nt ? nt : 1, sizeof *w.results);
    if (!w.results)
        return SC_ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        const sc_node_shard_result *s = &p->results[t];
        w.results[t] = sc__remote_outcome(s);
    }
    uint8_t *agg = NULL;
    size_t agg_len = 0;
    if (p->agg)
        SC_TRY(sc_agg_encode(p->agg, &agg, &agg_len));
    w.agg_partial = sc_slice_make(agg, agg_len);
    w.context_id = keep_fetch_context(r, &rq->q, p);
    sc_status st = sc_wire_node_query_resp_encode(&w, out);
    free(agg);
    return st;
}

/* Runs the page over the context's snapshots: every target at once (top k of the node query,
 * aggregations included) without skips, else each target alone for its hits [skip, skip +
 * page_size). */
static sc_status run_page(sc_api_remote *r, remote_query *rq, const sc_ctx_query *cq,
                          const sc_scroll *ctx, sc_task *task, sc_arena *a, page_run *p)
{
    const sc_wire_node_query *q = &rq->q;
    size_t nt = q->n_targets;
    bool per_target = cq->n_skip > 0;
    sc_search_request *sr = sc_arena_calloc(a, 1, sizeof *sr);
    p->n_runs = per_target ? nt : 1;
    p->nq = sc_arena_calloc(a, p->n_runs ? p->n_runs : 1, sizeof *p->nq);
    p->nr = sc_arena_calloc(a, p->n_runs ? p->n_runs : 1, sizeof *p->nr);
    p->results = sc_arena_calloc(a, nt ? nt : 1, sizeof *p->results);
    if (!sr || !p->nq || !p->nr || !p->results)
        return SC_ENOMEM;
    *sr = (sc_search_request){.indices = rq->list,
                              .queries = rq->queries,
                              .n_indices = q->n_indices,
                              .track_total_hits = q->track_total_hits,
                              .timeout_ms = q->timeout_ms,
                              .count_only = q->count_only,
                              .terminate_after = q->terminate_after,
                              .sort = q->sort,
                              .n_sort = q->n_sort,
                              .search_after = q->search_after,
                              .pinned = ctx->pinned,
                              .collect = rq->spec && !per_target ? &rq->agg.hook : NULL};
    uint64_t deadline =
        q->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)q->timeout_ms * 1000000u : 0;
    task->token.deadline_ns = deadline;
    size_t cap = 0;
    for (size_t i = 0; i < p->n_runs; i++) {
        uint64_t k = per_target ? cq->skip[i] + cq->page_size : q->k;
        p->nq[i] = (sc_node_query_request){.search = sr,
                                           .targets = per_target ? &q->targets[i] : q->targets,
                                           .n_targets = per_target ? 1 : nt,
                                           .k = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k,
                                           .deadline_ns = deadline,
                                           .token = &task->token,
                                           .collect = sr->collect};
        sc_status st = sc_node_query_phase(r->node, &p->nq[i], a, &p->nr[i]);
        if (st != SC_OK) {
            p->n_runs = i + 1; /* released by page_release */
            return st;
        }
        cap += p->nr[i].n_top;
    }
    p->top = sc_arena_calloc(a, cap ? cap : 1, sizeof *p->top);
    if (!p->top)
        return SC_ENOMEM;
    for (size_t i = 0; i < p->n_runs; i++) {
        size_t skip = per_target ? cq->skip[i] : 0;
        for (size_t j = skip; j < p->nr[i].n_top; j++)
            p->top[p->n_top++] = p->nr[i].top[j];
        if (per_target)
            p->results[i] = p->nr[i].results[0];
    }
    if (!per_target) {
        memcpy(p->results, p->nr[0].results, nt * sizeof *p->results);
        p->agg = p->nr[0].agg_reduced;
    }
    return SC_OK;
}

/* The context a query names must pin exactly the shards it targets, of the same indices. */
static bool ctx_matches(const sc_scroll *ctx, const remote_query *rq)
{
    if (ctx->n_indices != rq->q.n_indices)
        return false;
    for (size_t i = 0; i < ctx->n_indices; i++)
        if (ctx->indices[i] != rq->list[i])
            return false;
    for (size_t t = 0; t < rq->q.n_targets; t++)
        if (rq->q.targets[t].pin_ix >= ctx->n_pinned || !ctx->pinned[rq->q.targets[t].pin_ix])
            return false;
    return true;
}

/* Opens the context the query asks for; SC_ENOTFOUND when an index is missing here. */
static sc_status open_ctx(sc_api_remote *r, remote_query *rq, const sc_ctx_query *cq, sc_arena *a,
                          sc_scroll **out)
{
    const sc_wire_node_query *q = &rq->q;
    for (size_t i = 0; i < q->n_indices; i++)
        if (!rq->list[i])
            return SC_ENOTFOUND;
    if (!cq->keep_alive_ms)
        return SC_EINVAL;
    uint32_t *ix = sc_arena_calloc(a, q->n_targets + 1, sizeof *ix);
    uint32_t *sh = sc_arena_calloc(a, q->n_targets + 1, sizeof *sh);
    uint32_t *pin = sc_arena_calloc(a, q->n_targets + 1, sizeof *pin);
    if (!ix || !sh || !pin)
        return SC_ENOMEM;
    for (size_t t = 0; t < q->n_targets; t++) {
        ix[t] = q->targets[t].index_i;
        sh[t] = q->targets[t].shard;
        pin[t] = q->targets[t].pin_ix;
    }
    return sc_scroll_open_shards(r->node, rq->list, q->n_indices, ix, sh, pin, q->n_targets,
                                 cq->flags & SC_CTX_PIT, (int64_t)cq->keep_alive_ms, out);
}

static sc_status h_ctx_query(void *vr, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_api_remote *r = vr;
    sc_arena a;
    sc_arena_init(&a, sc_node_config_get(r->node)->memory_limit_bytes / 4);
    remote_query rq;
    memset(&rq, 0, sizeof rq);
    sc_ctx_query cq;
    sc_scroll *ctx = NULL;
    sc_status st = sc_ctx_query_decode(body.ptr, body.len, &a, &cq);
    if (st == SC_OK)
        st = sc_wire_node_query_decode(cq.node_query.ptr, cq.node_query.len, &a, &rq.q);
    if (st == SC_OK && cq.n_skip && cq.n_skip != rq.q.n_targets)
        st = SC_ECORRUPT;
    if (st == SC_OK)
        st = sc__remote_prepare(r, &rq, &a);
    if (st == SC_OK && (cq.flags & SC_CTX_OPEN)) {
        st = open_ctx(r, &rq, &cq, &a, &ctx);
    } else if (st == SC_OK) {
        char id[96];
        sc_scroll_id_of(r->node, cq.seq, id, sizeof id);
        ctx = sc_scroll_acquire(r->node, id, (int64_t)cq.keep_alive_ms, cq.flags & SC_CTX_PIT);
        if (!ctx) {
            st = SC_ENOTFOUND;
            snprintf(rq.reason, sizeof rq.reason, "No search context found for id [%llu]",
                     (unsigned long long)cq.seq);
        } else if (!ctx_matches(ctx, &rq)) {
            st = SC_EINVAL;
            snprintf(rq.reason, sizeof rq.reason, "search context [%llu] holds other shards",
                     (unsigned long long)cq.seq);
        }
    }
    sc_wire_buf inner;
    sc_wire_buf_init(&inner);
    if (st == SC_OK && !(cq.flags & SC_CTX_OPEN_ONLY)) {
        sc_task task;
        char desc[256];
        snprintf(desc, sizeof desc, "shards [%zu] of %zu indices (search context)", rq.q.n_targets,
                 rq.q.n_indices);
        sc_task_begin(r->node, &task, "indices:data/read/search[phase/query]", desc);
        snprintf(task.parent_task_id, sizeof task.parent_task_id, "%.*s", (int)rq.q.parent_task.len,
                 (const char *)rq.q.parent_task.ptr);
        page_run p;
        memset(&p, 0, sizeof p);
        st = run_page(r, &rq, &cq, ctx, &task, &a, &p);
        if (st == SC_OK)
            st = encode_page(r, &rq, &p, &a, &inner);
        page_release(&p);
        sc_task_end(r->node, &task);
    }
    if (st == SC_OK) {
        sc_ctx_query_resp w = {.seq = ctx->seq,
                               .n_shards = ctx->n_shards,
                               .node_query_resp = sc_slice_make(inner.ptr, inner.len)};
        st = sc_ctx_query_resp_encode(&w, out);
    }
    sc_wire_buf_fini(&inner);
    if (ctx)
        sc_scroll_release(r->node, ctx);
    if (st != SC_OK && ctx && (cq.flags & SC_CTX_OPEN))
        (void)sc_scroll_clear(r->node, ctx->id);
    st = sc__remote_rq_finish(&rq, st, errmsg, cap);
    sc_arena_fini(&a);
    return st;
}

/* Answers uv:contexts uv:shards freed. */
static sc_status h_ctx_free(void *vr, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    (void)errmsg, (void)cap;
    sc_api_remote *r = vr;
    sc_arena a;
    sc_arena_init(&a, 8u << 20);
    sc_ctx_free f;
    sc_status st = sc_ctx_free_decode(body.ptr, body.len, &a, &f);
    size_t contexts = 0, shards = 0;
    if (st == SC_OK && f.all_scrolls)
        contexts = sc_scroll_clear_ex(r->node, NULL, true, &shards);
    for (size_t i = 0; st == SC_OK && i < f.n; i++) {
        char id[96];
        size_t s = 0;
        sc_scroll_id_of(r->node, f.seq[i], id, sizeof id);
        contexts += sc_scroll_clear_ex(r->node, id, false, &s);
        shards += s;
    }
    if (st == SC_OK) {
        sc_wire_put_uvar(out, contexts);
        sc_wire_put_uvar(out, shards);
        st = out->st;
    }
    sc_arena_fini(&a);
    return st;
}

static sc_status h_terms(void *vr, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_api_remote *r = vr;
    return sc__terms_enum_node(r->node, body, out, errmsg, cap);
}

sc_status sc__remote_ctx_register(sc_api_remote *r, sc_transport *t)
{
    sc_status st = sc_transport_register(t, SC_MSG_CTX_QUERY, h_ctx_query, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_CTX_FREE, h_ctx_free, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_TERMS_ENUM, h_terms, r);
    return st;
}
