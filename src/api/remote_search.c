/* The data-node handlers of the cross-node search phases (remote.h): decode the coordinator's
 * node query request, rebuild the search with this node's indices and mappings (the query,
 * post_filter and aggs JSON are parsed here, as Elasticsearch's data nodes do), run
 * sc_node_query_phase over the listed shards and answer with the partially reduced result;
 * then fetch from the kept snapshots. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"
#include "api/forward.h"
#include "api/remote_internal.h"
#include "api/search_internal.h"
#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/search.h"
#include "cluster/search_wire.h"
#include "cluster/tasks.h"
#include "search/runtime.h"

static json_t *load_json(sc_slice s)
{
    /* as the REST layer: a string may hold NUL bytes (an escaped NUL in an _id) */
    return s.len ? json_loadb((const char *)s.ptr, s.len, JSON_ALLOW_NUL, NULL) : NULL;
}

/* The kNN clauses ORed with q (hybrid; a missing query's match_all is replaced), each with the
 * floor of the coordinator's global kNN phase, as the API builds them (api/search_vector.c). */
static bool add_knn(sc_api_remote *r, remote_query *rq, sc_arena *a, size_t i, sc_query **q)
{
    const sc_wire_query_features *fx = &rq->q.fx;
    size_t nk = json_array_size(rq->knnj);
    bool with_query = rq->qj != NULL;
    sc_query *b = nk > 1 || with_query ? sc_query_bool(a) : NULL;
    if ((nk > 1 || with_query) &&
        (!b || (with_query && sc_query_bool_add(a, b, SC_OCCUR_SHOULD, *q) != SC_OK)))
        return false;
    for (size_t k = 0; k < nk; k++) {
        sc_rest_req req = {.arena = a, .node = r->node, .client_fd = -1};
        sc_rest_resp resp;
        sc_rest_resp_init(&resp);
        sc_query *kq = NULL;
        bool ok = sc__search_parse_for_index(&req, &resp, rq->list[i], json_array_get(rq->knnj, k),
                                             true, fx->knn_default_k, &kq);
        sc_rest_resp_fini(&resp);
        if (!ok) {
            snprintf(rq->reason, sizeof rq->reason, "knn: clause [%zu] does not parse", k);
            return false;
        }
        if (fx->knn_floor && k < fx->n_knn_floor && !isnan(fx->knn_floor[k]))
            kq->u.knn.min_score = fx->knn_floor[k];
        if (!b) {
            *q = kq;
            return true;
        }
        if (sc_query_bool_add(a, b, SC_OCCUR_SHOULD, kq) != SC_OK)
            return false;
    }
    *q = b;
    return true;
}

/* RRF: the sub-searches after the first for index i, parsed with its mapping. */
static bool build_rrf(sc_api_remote *r, remote_query *rq, sc_arena *a, size_t i)
{
    const sc_wire_query_features *fx = &rq->q.fx;
    for (size_t m = 0; m < fx->n_rrf; m++) {
        json_t *j = load_json(fx->rrf[m].json);
        sc_rest_req req = {.arena = a, .node = r->node, .client_fd = -1};
        sc_rest_resp resp;
        sc_rest_resp_init(&resp);
        bool ok = j && sc__search_parse_for_index(&req, &resp, rq->list[i], j, fx->rrf[m].knn,
                                                  fx->rrf_default_k,
                                                  &rq->rrf_queries[m * rq->q.n_indices + i]);
        sc_rest_resp_fini(&resp);
        json_decref(j);
        if (!ok) {
            snprintf(rq->reason, sizeof rq->reason, "rrf: sub-search [%zu] does not parse", m + 1);
            return false;
        }
    }
    return true;
}

/* The rescorers of index i, their queries parsed with its mapping. */
static bool build_rescore(remote_query *rq, sc_arena *a, size_t i)
{
    const sc_wire_query_features *fx = &rq->q.fx;
    sc_shard_rescore *rs = sc_arena_calloc(a, fx->n_rescore, sizeof *rs);
    if (!rs)
        return false;
    for (size_t k = 0; k < fx->n_rescore; k++) {
        const sc_wire_rescore *w = &fx->rescore[k];
        json_t *qj = load_json(w->query_json);
        sc_dsl_error derr;
        sc_query *q = NULL;
        bool ok = qj && sc__search_parse_query(a, rq->list[i], qj, &q, &derr) == SC_OK;
        json_decref(qj);
        if (!ok) {
            snprintf(rq->reason, sizeof rq->reason, "rescore: %s", qj ? derr.reason : "not JSON");
            return false;
        }
        rs[k] = (sc_shard_rescore){.query = q,
                                   .window_size = w->window_size,
                                   .query_weight = w->query_weight,
                                   .rescore_weight = w->rescore_weight,
                                   .mode = (sc_shard_rescore_mode)w->mode};
    }
    rq->rescore[i] = rs;
    return true;
}

/* Parses the query (and post_filter) for index i. false with rq->reason set on failure. */
static bool parse_index_query(sc_api_remote *r, remote_query *rq, sc_arena *a, size_t i)
{
    sc_dsl_error derr;
    sc_query *q = NULL;
    if (!rq->qj)
        q = sc_query_match_all(a);
    else if (sc__search_parse_query(a, rq->list[i], rq->qj, &q, &derr) != SC_OK)
        q = NULL, snprintf(rq->reason, sizeof rq->reason, "%s", derr.reason);
    if (!q)
        return false;
    /* the filter of the aliases the coordinator reached this index through */
    sc_slice fs = rq->q.index_filters ? rq->q.index_filters[i] : sc_slice_make(NULL, 0);
    if (fs.len) {
        json_t *fj = load_json(fs);
        sc_query *f = NULL, *fb = sc_query_bool(a);
        bool ok = fj && sc__search_parse_query(a, rq->list[i], fj, &f, &derr) == SC_OK;
        json_decref(fj);
        if (!ok) {
            snprintf(rq->reason, sizeof rq->reason, "alias filter: %s",
                     fj ? derr.reason : "not JSON");
            return false;
        }
        if (!fb || sc_query_bool_add(a, fb, SC_OCCUR_MUST, q) != SC_OK ||
            sc_query_bool_add(a, fb, SC_OCCUR_FILTER, f) != SC_OK)
            return false;
        q = fb;
    }
    if (rq->knnj && !add_knn(r, rq, a, i, &q))
        return false;
    if (rq->q.fx.n_rescore && !build_rescore(rq, a, i))
        return false;
    if (rq->q.fx.n_rrf && !build_rrf(r, rq, a, i))
        return false;
    /* indices_boost and min_score, as sc__search_page_build applies them on a single node */
    if (rq->q.index_boosts)
        q->boost *= rq->q.index_boosts[i];
    if (rq->q.has_min_score) {
        sc_query *ms = sc_query_function_score(a, q);
        if (!ms)
            return false;
        ms->u.function_score.has_min_score = true;
        ms->u.function_score.min_score = rq->q.min_score;
        q = ms;
    }
    rq->queries[i] = q;
    if (!rq->pfj)
        return true;
    sc_query *pf = NULL, *b = sc_query_bool(a);
    if (sc__search_parse_query(a, rq->list[i], rq->pfj, &pf, &derr) != SC_OK) {
        snprintf(rq->reason, sizeof rq->reason, "%s", derr.reason);
        return false;
    }
    if (!b || sc_query_bool_add(a, b, SC_OCCUR_MUST, q) != SC_OK ||
        sc_query_bool_add(a, b, SC_OCCUR_FILTER, pf) != SC_OK)
        return false;
    rq->agg_queries[i] = q;
    rq->queries[i] = b;
    return true;
}

/* Resolves the indices and parses the request's JSON with this node's mappings. */
sc_status sc__remote_prepare(sc_api_remote *r, remote_query *rq, sc_arena *a)
{
    size_t ni = rq->q.n_indices;
    rq->list = calloc(ni ? ni : 1, sizeof *rq->list);
    rq->queries = sc_arena_calloc(a, ni ? ni : 1, sizeof *rq->queries);
    rq->agg_queries = sc_arena_calloc(a, ni ? ni : 1, sizeof *rq->agg_queries);
    rq->rescore = rq->q.fx.n_rescore ? sc_arena_calloc(a, ni ? ni : 1, sizeof *rq->rescore) : NULL;
    if (!rq->list || !rq->queries || !rq->agg_queries || (rq->q.fx.n_rescore && !rq->rescore))
        return SC_ENOMEM;
    if (rq->q.fx.collapse_field.len) {
        rq->collapse.field = sc_arena_strndup(a, (const char *)rq->q.fx.collapse_field.ptr,
                                              rq->q.fx.collapse_field.len);
        rq->collapse.numeric = rq->q.fx.collapse_numeric;
        if (!rq->collapse.field)
            return SC_ENOMEM;
    }
    if (rq->q.fx.n_rrf && !(rq->rrf_queries = sc_arena_calloc(a, rq->q.fx.n_rrf * (ni ? ni : 1),
                                                              sizeof *rq->rrf_queries)))
        return SC_ENOMEM;
    rq->knnj = load_json(rq->q.fx.knn_json);
    if (rq->q.fx.knn_json.len && !json_is_array(rq->knnj))
        return SC_ECORRUPT;
    rq->qj = load_json(rq->q.query_json);
    rq->pfj = load_json(rq->q.post_filter_json);
    rq->aggj = load_json(rq->q.aggs_json);
    if ((rq->q.query_json.len && !rq->qj) || (rq->q.post_filter_json.len && !rq->pfj) ||
        (rq->q.aggs_json.len && !rq->aggj))
        return SC_ECORRUPT;
    sc_index *first = NULL;
    for (size_t i = 0; i < ni; i++) {
        char *name =
            sc_arena_strndup(a, (const char *)rq->q.index_names[i].ptr, rq->q.index_names[i].len);
        /* an index created a moment ago may not have reached this node's placement yet */
        sc_rest_req wreq = {.arena = a, .node = r->node, .client_fd = -1, .forwarded = true};
        rq->list[i] = name ? sc__api_wait_index(&wreq, name) : NULL;
        if (!rq->list[i])
            continue;
        if (!parse_index_query(r, rq, a, i))
            return SC_EPARSE;
        if (!first)
            first = rq->list[i];
    }
    if (!rq->aggj)
        return SC_OK;
    sc_rest_req req = {.arena = a, .node = r->node, .client_fd = -1};
    sc_mapping *overlay = NULL;
    if (rq->q.runtime_json.len) {
        /* the runtime fields the aggregations read, compiled with this node's mapping as the
         * coordinator did with its own */
        rq->rtj = load_json(rq->q.runtime_json);
        if (!json_is_object(rq->rtj))
            return SC_ECORRUPT;
        search_parse sp = {.runtime_mappings = rq->rtj};
        sc_rest_resp resp;
        sc_rest_resp_init(&resp);
        sc_runtime_field *rf = NULL;
        size_t nrf = 0;
        bool ok = sc__search_runtime_parse(&req, &resp, &sp, first, &rf, &nrf, &overlay);
        if (!ok)
            snprintf(rq->reason, sizeof rq->reason, "runtime_mappings: %.*s",
                     (int)(resp.body.len < 200 ? resp.body.len : 200), (const char *)resp.body.ptr);
        sc_rest_resp_fini(&resp);
        if (!ok)
            return SC_EPARSE;
        rq->agg.runtime = rf;
        rq->agg.n_runtime = nrf;
    }
    sc_agg_parse_error perr;
    bool parsed = sc__agg_parse_mapped(&req, first, overlay, rq->aggj, &rq->spec, &perr);
    sc_mapping_unref(overlay);
    if (!parsed) {
        snprintf(rq->reason, sizeof rq->reason, "aggregations: %s", perr.reason);
        return SC_EPARSE;
    }
    rq->agg.spec = rq->spec;
    rq->agg.hit_queries = rq->queries;
    rq->agg.index_names = rq->q.index_names;
    rq->agg.agg_queries = rq->pfj ? rq->agg_queries : NULL;
    rq->agg.n_queries = ni;
    rq->agg.n_shards = rq->q.n_shards_total;
    sc__agg_hook_init(&rq->agg);
    return SC_OK;
}

sc_wire_shard_outcome sc__remote_outcome(const sc_node_shard_result *s)
{
    sc_wire_shard_outcome o = {.st = s->st,
                               .total = s->total,
                               .total_gte = s->total_is_lower_bound,
                               .timed_out = s->timed_out,
                               .terminated_early = s->terminated_early,
                               .skipped = s->skipped};
    if (s->st != SC_OK) {
        o.http_status = s->err.status;
        o.type = sc_slice_cstr(s->err.type ? s->err.type : "exception");
        o.reason = sc_slice_cstr(s->err.reason);
    }
    return o;
}

sc_status sc__remote_rq_finish(remote_query *rq, sc_status st, char *errmsg, size_t cap)
{
    if (st != SC_OK)
        snprintf(errmsg, cap, "%s",
                 rq->reason[0]        ? rq->reason
                 : st == SC_ENOTFOUND ? "index missing on the data node"
                                      : sc_status_str(st));
    sc__remote_rq_fini(rq);
    return st;
}

void sc__remote_rq_fini(remote_query *rq)
{
    for (size_t i = 0; rq->list && i < rq->q.n_indices; i++)
        if (rq->list[i])
            sc_index_unref(rq->list[i]);
    free(rq->list);
    sc__agg_spec_free(rq->spec);
    json_decref(rq->qj);
    json_decref(rq->pfj);
    json_decref(rq->aggj);
    json_decref(rq->rtj);
    json_decref(rq->knnj);
}

/* Keeps the snapshots of the targets that hold a hit (for the fetch) in a context. */
static uint64_t keep_context(sc_api_remote *r, const sc_node_query_request *nq,
                             sc_node_query_response *nr)
{
    if (!nr->n_top)
        return 0;
    size_t nt = nq->n_targets;
    sc__remote_ctx *c = sc__remote_ctx_new(nt);
    if (!c)
        return 0;
    for (size_t t = 0; t < nt; t++) {
        if (!nr->results[t].snapshot || nr->results[t].st != SC_OK)
            continue;
        c->shard_ix[c->n] = nq->targets[t].shard_ix;
        c->snapshots[c->n++] = nr->results[t].snapshot;
        nr->results[t].pinned = true; /* the context's reference now: release skips it */
    }
    return sc__remote_ctx_put(r, c);
}

/* Writes the node's answer. */
static sc_status answer(sc_api_remote *r, remote_query *rq, const sc_node_query_request *nq,
                        sc_node_query_response *nr, const sc_wire_rrf_top *rrf, sc_arena *a,
                        sc_wire_buf *out)
{
    size_t nt = nq->n_targets;
    sc_wire_node_query_resp w = {.n_results = nt,
                                 .top = nr->top,
                                 .n_top = nr->n_top,
                                 .n_sort = rq->q.n_sort,
                                 .has_max_scores = rq->q.track_scores,
                                 .collapse = rq->collapse.field != NULL,
                                 .rrf = rrf,
                                 .n_rrf = rrf ? rq->q.fx.n_rrf : 0,
                                 .n_partial_reduces = nr->n_partial_reduces};
    w.results = sc_arena_calloc(a, nt ? nt : 1, sizeof *w.results);
    if (!w.results)
        return SC_ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        const sc_node_shard_result *s = &nr->results[t];
        w.results[t] = sc__remote_outcome(s);
        w.results[t].max_score = s->max_score;
        w.results[t].profile = s->st == SC_OK ? s->profile : NULL;
    }
    uint8_t *agg = NULL;
    size_t agg_len = 0;
    if (nr->agg_reduced)
        SC_TRY(sc_agg_encode(nr->agg_reduced, &agg, &agg_len));
    w.agg_partial = sc_slice_make(agg, agg_len);
    w.context_id = keep_context(r, nq, nr);
    sc_status st = sc_wire_node_query_resp_encode(&w, out);
    free(agg);
    return st;
}

/* The node's breaker refused its partial reduce: every shard fails with 429 (the coordinator
 * may retry them on other copies) and nothing of the reduce is sent. */
static void refuse_reduce(sc_node *n, const sc_node_query_request *nq, sc_node_query_response *nr,
                          uint64_t bytes)
{
    sc_breaker_stats bs;
    sc_breakers_get(n, &bs);
    for (size_t t = 0; t < nq->n_targets; t++) {
        sc_node_shard_result *s = &nr->results[t];
        if (s->st != SC_OK)
            continue;
        s->st = SC_ELIMIT;
        sc_cluster_error_set(&s->err, 429, "circuit_breaking_exception",
                             "[request] Data too large, data for [<reduce>] would be [%llu] "
                             "more, which is larger than the limit of [%llu]",
                             (unsigned long long)bytes, (unsigned long long)bs.request_limit);
    }
    nr->n_top = 0;
    nr->agg_reduced = NULL;
}

/* The targets of indices this node has; the others are answered as missing shards. */
static sc_status run_phase(sc_api_remote *r, remote_query *rq, sc_task *task, sc_arena *a,
                           sc_wire_buf *out)
{
    const sc_wire_node_query *q = &rq->q;
    for (size_t t = 0; t < q->n_targets; t++)
        if (!rq->list[q->targets[t].index_i])
            return SC_ENOTFOUND;
    sc_search_request sr = {.indices = rq->list,
                            .queries = rq->queries,
                            .n_indices = q->n_indices,
                            .track_total_hits = q->track_total_hits,
                            .timeout_ms = q->timeout_ms,
                            .count_only = q->count_only,
                            .terminate_after = q->terminate_after,
                            .sort = q->sort,
                            .n_sort = q->n_sort,
                            .search_after = q->search_after,
                            .track_scores = q->track_scores,
                            /* RRF's other sub-searches run after this phase on its shards:
                             * no folding then (cluster/search_internal.h) */
                            .batched_reduce_size =
                                q->fx.n_rrf ? UINT32_MAX : q->batched_reduce_size,
                            .collect = rq->spec ? &rq->agg.hook : NULL,
                            .rescore = rq->rescore,
                            .n_rescore = rq->rescore ? q->fx.n_rescore : 0,
                            .collapse = rq->collapse.field ? &rq->collapse : NULL,
                            .profile = q->fx.profile};
    /* the coordinator sends what is left of the search's timeout */
    uint64_t deadline =
        q->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)q->timeout_ms * 1000000u : 0;
    task->token.deadline_ns = deadline;
    sc_node_query_request nq = {.search = &sr,
                                .targets = q->targets,
                                .n_targets = q->n_targets,
                                .k = q->k,
                                .deadline_ns = deadline,
                                .token = &task->token,
                                .collect = sr.collect,
                                .can_match = q->can_match,
                                .dfs = q->dfs};
    sc_node_query_response nr;
    size_t before = a->used_bytes, peak0 = a->peak_bytes;
    a->peak_bytes = before;
    sc_status st = sc_node_query_phase(r->node, &nq, a, &nr);
    /* the node's partial reduce (merged top hits, reduced aggregations) on its request breaker
     * until the answer is written: its high-water mark (the reduce gives its scratch back) */
    uint64_t reduce_bytes = a->peak_bytes - before, held = 0;
    a->peak_bytes = peak0 > a->peak_bytes ? peak0 : a->peak_bytes;
    if (st == SC_OK && reduce_bytes) {
        if (sc_breaker_reserve(r->node, reduce_bytes)) {
            held = reduce_bytes;
            sc_breaker_note_used(r->node, reduce_bytes);
        } else {
            refuse_reduce(r->node, &nq, &nr, reduce_bytes);
        }
    }
    sc_node_ranked *rrf = NULL;
    if (st == SC_OK && q->fx.n_rrf) { /* the other sub-searches on the same snapshots */
        rrf = sc_arena_calloc(a, q->fx.n_rrf, sizeof *rrf);
        st = rrf ? sc_node_query_rrf_more(r->node, &nq, &nr, rq->rrf_queries, q->fx.n_rrf, a, rrf)
                 : SC_ENOMEM;
    }
    if (st == SC_OK)
        st = answer(r, rq, &nq, &nr, rrf, a, out);
    sc_breaker_release(r->node, held);
    sc_node_query_release(&nq, &nr);
    return st;
}

static sc_status h_query(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_api_remote *r = ctx;
    sc_arena a;
    sc_arena_init(&a, sc_node_config_get(r->node)->memory_limit_bytes / 4);
    remote_query rq;
    memset(&rq, 0, sizeof rq);
    sc_status st = sc_wire_node_query_decode(body.ptr, body.len, &a, &rq.q);
    if (st == SC_OK)
        st = sc__remote_prepare(r, &rq, &a);
    if (st == SC_OK) {
        /* a child task of the coordinator's search: listed by GET _tasks with its
         * parent_task_id, cancelled by the task API here or by SC_MSG_NODE_CANCEL */
        sc_task task;
        char desc[256];
        snprintf(desc, sizeof desc, "shards [%zu] of %zu indices", rq.q.n_targets, rq.q.n_indices);
        sc_task_begin(r->node, &task, "indices:data/read/search[phase/query]", desc);
        snprintf(task.parent_task_id, sizeof task.parent_task_id, "%.*s", (int)rq.q.parent_task.len,
                 (const char *)rq.q.parent_task.ptr);
        st = run_phase(r, &rq, &task, &a, out);
        sc_task_end(r->node, &task);
    }
    st = sc__remote_rq_finish(&rq, st, errmsg, cap);
    sc_arena_fini(&a);
    return st;
}

/* dfs_query_then_fetch's first phase: the statistics of the query over the listed shards. */
static sc_status h_dfs(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_api_remote *r = ctx;
    sc_arena a;
    sc_arena_init(&a, sc_node_config_get(r->node)->memory_limit_bytes / 4);
    remote_query rq;
    memset(&rq, 0, sizeof rq);
    sc_status st = sc_wire_node_query_decode(body.ptr, body.len, &a, &rq.q);
    if (st == SC_OK)
        st = sc__remote_prepare(r, &rq, &a);
    for (size_t t = 0; st == SC_OK && t < rq.q.n_targets; t++)
        if (!rq.list[rq.q.targets[t].index_i])
            st = SC_ENOTFOUND;
    if (st == SC_OK) {
        sc_search_request sr = {
            .indices = rq.list, .queries = rq.queries, .n_indices = rq.q.n_indices};
        sc_term_stats ts;
        st = sc_search_dfs_node(r->node, &sr, rq.q.targets, rq.q.n_targets, &a, &ts);
        if (st == SC_OK)
            st = sc_wire_term_stats_encode(&ts, out);
    }
    st = sc__remote_rq_finish(&rq, st, errmsg, cap);
    sc_arena_fini(&a);
    return st;
}

/* Each context shard's index number, from the docs that name it (fetch extras pick the
 * highlight specs and named queries by it); a shard named with two indices is corrupt. */
static sc_status doc_indices(const sc_wire_node_fetch *f, const sc__remote_ctx *c,
                             sc_shard_target *targets, sc_arena *a)
{
    bool *set = sc_arena_calloc(a, c->n + 1, sizeof *set);
    if (!set)
        return SC_ENOMEM;
    for (size_t j = 0; j < f->n_docs; j++)
        for (size_t t = 0; t < c->n; t++) {
            if (targets[t].shard_ix != f->docs[j].shard_ix)
                continue;
            if (set[t] && targets[t].index_i != f->doc_index[j])
                return SC_ECORRUPT;
            set[t] = true;
            targets[t].index_i = f->doc_index[j];
        }
    return SC_OK;
}

static sc_status h_fetch(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_api_remote *r = ctx;
    sc_arena a;
    sc_arena_init(&a, sc_node_config_get(r->node)->memory_limit_bytes / 4);
    sc_wire_node_fetch f;
    sc_status st = sc_wire_node_fetch_decode(body.ptr, body.len, &a, &f);
    sc__remote_ctx *c = st == SC_OK ? sc__remote_ctx_take(r, f.context_id) : NULL;
    if (st == SC_OK && !c) {
        snprintf(errmsg, cap, "no search context found for id [%llu]",
                 (unsigned long long)f.context_id);
        st = SC_ENOTFOUND;
    }
    sc_shard_target *targets = c ? sc_arena_calloc(&a, c->n + 1, sizeof *targets) : NULL;
    sc_node_shard_result *results = c ? sc_arena_calloc(&a, c->n + 1, sizeof *results) : NULL;
    const char **fields = sc_arena_calloc(&a, f.n_dv_fields + 1, sizeof *fields);
    if (st == SC_OK && (!targets || !results || !fields))
        st = SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < c->n; i++) {
        targets[i].shard_ix = c->shard_ix[i];
        results[i].snapshot = c->snapshots[i];
    }
    for (size_t i = 0; st == SC_OK && i < f.n_dv_fields; i++)
        if (!(fields[i] =
                  sc_arena_strndup(&a, (const char *)f.dv_fields[i].ptr, f.dv_fields[i].len)))
            st = SC_ENOMEM;
    /* fetch-phase extras (highlight, versions, named queries, explain, inner_hits) */
    sc__remote_fetch rf;
    memset(&rf, 0, sizeof rf);
    if (st == SC_OK && f.flags) {
        st = sc__remote_fetch_prepare(r->node, &f, &a, &rf);
        if (st == SC_OK)
            st = doc_indices(&f, c, targets, &a);
        if (st != SC_OK && rf.reason[0])
            snprintf(errmsg, cap, "%s", rf.reason);
    }
    if (st == SC_OK) {
        sc_node_query_request nq = {
            .targets = targets, .n_targets = c->n, .search = f.flags ? &rf.sr : NULL, .dfs = f.dfs};
        sc_node_query_response nr = {.results = results};
        sc_node_fetch_request fr = {.query = &nq,
                                    .query_resp = &nr,
                                    .docs = f.docs,
                                    .n_docs = f.n_docs,
                                    .source = f.source,
                                    .dv_fields = fields,
                                    .n_dv_fields = f.n_dv_fields};
        sc_node_fetch_response fres;
        st = sc_node_fetch_phase(r->node, &fr, &a, &fres);
        sc_wire_node_fetch_resp w = {.docs = fres.docs, .n_docs = f.n_docs, .extras = f.flags};
        if (st == SC_OK && f.flags && rf.sr.named) {
            w.n_inner = sc_arena_calloc(&a, f.n_docs + 1, sizeof *w.n_inner);
            for (size_t i = 0; w.n_inner && i < f.n_docs; i++)
                w.n_inner[i] = (uint32_t)rf.named[f.doc_index[i]].n_inner;
            st = w.n_inner ? SC_OK : SC_ENOMEM;
        }
        if (st == SC_OK)
            st = sc_wire_node_fetch_resp_encode(&w, out);
    }
    sc__remote_fetch_fini(&rf);
    sc__remote_ctx_free(c);
    sc_arena_fini(&a);
    return st;
}

/* The coordinator cancelled its search: every child task of it here stops at its next check
 * and answers (its shards as cancelled). Answers empty, also when none runs (any more). */
static sc_status h_cancel(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    (void)out, (void)errmsg, (void)cap;
    sc_api_remote *r = ctx;
    sc_slice parent;
    SC_TRY(sc_wire_node_cancel_decode(body.ptr, body.len, &parent));
    char id[SC_WIRE_MAX_TASK_ID + 1];
    memcpy(id, parent.ptr, parent.len);
    id[parent.len] = '\0';
    size_t k = sc_tasks_cancel_children(r->node, id);
    sc_log(SC_LOG_DEBUG, "search", "cancelled %zu child tasks of [%s]", k, id);
    return SC_OK;
}

static sc_status h_free(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    (void)out, (void)errmsg, (void)cap;
    sc_wire_reader rd;
    sc_wire_reader_init(&rd, body.ptr, body.len);
    uint64_t id = sc_wire_get_uvar(&rd);
    SC_TRY(sc_wire_reader_finish(&rd));
    sc__remote_ctx_free(sc__remote_ctx_take(ctx, id));
    return SC_OK;
}

sc_status sc_api_remote_start(sc_node *n, sc_transport *t, sc_api_remote **out)
{
    sc_api_remote *r = calloc(1, sizeof *r);
    if (!r)
        return SC_ENOMEM;
    r->node = n;
    pthread_mutex_init(&r->mu, NULL);
    sc_status st = sc_transport_register(t, SC_MSG_NODE_QUERY, h_query, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_NODE_FETCH, h_fetch, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_NODE_FREE_CONTEXT, h_free, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_NODE_DFS, h_dfs, r);
    if (st == SC_OK)
        st = sc_transport_register_inline(t, SC_MSG_NODE_CANCEL, h_cancel, r);
    if (st == SC_OK)
        st = sc__remote_ctx_register(r, t);
    if (st != SC_OK) {
        sc_api_remote_stop(r);
        return st;
    }
    *out = r;
    return SC_OK;
}

void sc_api_remote_stop(sc_api_remote *r)
{
    if (!r)
        return;
    sc__remote_ctx_free_all(r);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
