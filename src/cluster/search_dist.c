/* The search coordinator over shards placed on several nodes (search_internal.h; DESIGN.md
 * lesson 5). Targets are grouped into units: one per data node (batched query phase) or one per
 * shard (search.batched_query_phase false). A local unit calls sc_node_query_phase directly; a
 * remote unit is one SC_MSG_NODE_QUERY over the transport (search_wire.h), answered with the
 * node's partially reduced top k and aggregation partial. Units run concurrently on a few
 * sender threads. The final reduce (search_dist_reduce.c) merges them; the fetch is one request
 * per node holding winners. A unit that fails (connect, timeout, remote error) reports each of
 * its shards in _shards.failures; an unassigned shard fails as no_shard_available.
 *
 * Cancellation crosses nodes: each remote unit runs as a child task of the search's task on its
 * data node (parent_task in the request). While remote units run, the coordinating thread only
 * watches: when the search's task is cancelled (task API, client hang-up) it sends
 * SC_MSG_NODE_CANCEL to every node with a unit in flight (again every CANCEL_RESEND_MS while
 * one runs, for a request that arrived after the cancel), and those nodes' shards stop at their
 * next check and answer as cancelled. A timeout crosses as the budget left when a unit is sent. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/search_dist.h"
#include "cluster/search_wire.h"

/* Sender threads per search: enough to overlap a few nodes' round trips (or, unbatched, many
 * shard requests) without a thread per shard. */
#define MAX_SENDERS 8
/* A remote node gets the search's timeout plus this to answer with its partial results. */
#define TIMEOUT_GRACE_MS 1000
#define DEFAULT_REMOTE_TIMEOUT_MS 30000
/* How often the watching thread looks at the task's cancellation flag, and re-sends cancels. */
#define CANCEL_POLL_MS 20
#define CANCEL_RESEND_MS 500
#define CANCEL_SEND_TIMEOUT_MS 2000

typedef struct dist_run {
    sc_node *node;
    const sc_search_request *sr;
    const sc_placement_snapshot *snap;
    sc__dist_unit *units; /* every attempt's units, rounds one after another */
    size_t n_units, cap_units;
    size_t round_start;              /* the units of the round being run: [round_start, n_units) */
    uint32_t *attempt;               /* per target (shard_ix): the copy number it is on */
    char (*dead)[SC_ALLOC_NODE_MAX]; /* nodes that failed or timed out in this search */
    size_t n_dead;
    uint32_t n_retried;
    uint32_t k;
    bool can_match;
    const sc_term_stats *dfs;
    uint64_t deadline_ns;
    sc_cancel_token *token;
    sc_transport *transport;
    atomic_size_t next;
    sc__dist_breaker br;
    char parent[64]; /* the search's task id "<node>:<n>" ("" without a task) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n_done; /* units of the round that finished (under mu) */
    /* batched_reduce_size: units that answered are folded every batch (under mu); batched with
     * fewer answers than the batch, one by one as they arrive instead (fold_arrivals) */
    bool folding, fold_arrivals;
    size_t fold_batch;
    size_t *fold_pending, n_fold_pending, cap_fold_pending;
    size_t fold_next; /* units before this are folded */
    sc__partial fold;
    sc_status fold_st;
} dist_run;

static sc_status unit_alloc(sc__dist_unit *u, size_t n)
{
    sc_arena_init(&u->mem, 0);
    sc_arena_init(&u->agg_mem, 0);
    u->targets = sc_arena_calloc(&u->mem, n ? n : 1, sizeof *u->targets);
    u->results = sc_arena_calloc(&u->mem, n ? n : 1, sizeof *u->results);
    return u->targets && u->results ? SC_OK : SC_ENOMEM;
}

static bool node_dead(const dist_run *d, const char *node_id)
{
    for (size_t i = 0; i < d->n_dead; i++)
        if (strcmp(d->dead[i], node_id) == 0)
            return true;
    return false;
}

/* The next copy of target tg at or after its current attempt that is not on a node that failed
 * in this search; false when none is left. Advances d->attempt. */
static bool next_copy(dist_run *d, const sc_shard_target *tg, sc_shard_location *loc)
{
    const char *index = d->sr->indices[tg->index_i]->name;
    for (;; d->attempt[tg->shard_ix]++) {
        if (!sc_placement_copy(d->snap, index, tg->shard, d->attempt[tg->shard_ix], loc))
            return false;
        if (!node_dead(d, loc->node_id))
            return true;
    }
}

/* Room for n more units. Called between rounds only (no sender runs): units move. */
static sc_status grow_units(dist_run *d, size_t n)
{
    size_t cap = d->cap_units * 2 > d->n_units + n ? d->cap_units * 2 : d->n_units + n;
    sc__dist_unit *u = realloc(d->units, cap * sizeof *u);
    if (!u)
        return SC_ENOMEM;
    memset(u + d->cap_units, 0, (cap - d->cap_units) * sizeof *u);
    d->units = u;
    d->cap_units = cap;
    return SC_OK;
}

/* Groups targets (with their copies in loc) into new units: one per node when batched, else one
 * per target. A target without a copy (loc unassigned) gets a unit of its own with no node,
 * which fails as no_shard_available. */
static sc_status group(dist_run *d, const sc_shard_target *targets, const sc_shard_location *loc,
                       size_t nt, bool batched)
{
    size_t first = d->n_units;
    size_t *count = calloc(nt ? nt : 1, sizeof *count);
    size_t *unit_of = calloc(nt ? nt : 1, sizeof *unit_of);
    sc_status st = count && unit_of ? SC_OK : SC_ENOMEM;
    for (size_t t = 0; st == SC_OK && t < nt; t++) {
        size_t u = d->n_units;
        if (batched && loc[t].assigned)
            for (size_t j = first; j < d->n_units; j++)
                if (d->units[j].assigned && strcmp(d->units[j].node_id, loc[t].node_id) == 0)
                    u = j;
        if (u == d->n_units) {
            if (d->n_units == d->cap_units && (st = grow_units(d, nt)) != SC_OK)
                break;
            sc__dist_unit *nu = &d->units[d->n_units++];
            nu->assigned = loc[t].assigned;
            nu->local = loc[t].local;
            snprintf(nu->node_id, sizeof nu->node_id, "%s", loc[t].node_id);
            snprintf(nu->host, sizeof nu->host, "%s", loc[t].host);
            nu->port = loc[t].port;
        }
        unit_of[t] = u;
        count[u - first]++;
    }
    for (size_t u = first; st == SC_OK && u < d->n_units; u++)
        st = unit_alloc(&d->units[u], count[u - first]);
    for (size_t t = 0; st == SC_OK && t < nt; t++) {
        sc__dist_unit *u = &d->units[unit_of[t]];
        u->targets[u->n_targets++] = targets[t];
    }
    free(count);
    free(unit_of);
    return st;
}

/* The first round: every target on its first searchable copy (the primary while it lives). */
static sc_status group_first(dist_run *d, const sc_shard_target *targets, size_t nt, bool batched)
{
    /* at most one unit per target in a round; retry rounds grow the array (group) */
    d->cap_units = nt ? nt : 1;
    d->units = calloc(d->cap_units, sizeof *d->units);
    d->attempt = calloc(nt ? nt : 1, sizeof *d->attempt);
    sc_shard_location *loc = calloc(nt ? nt : 1, sizeof *loc);
    sc_status st = d->units && d->attempt && loc ? SC_OK : SC_ENOMEM;
    for (size_t t = 0; st == SC_OK && t < nt; t++)
        (void)next_copy(d, &targets[t], &loc[t]);
    if (st == SC_OK)
        st = group(d, targets, loc, nt, batched);
    free(loc);
    return st;
}

static void fail_unit(sc__dist_unit *u, int status, const char *type, const char *reason)
{
    u->st = SC_EIO;
    u->fail_status = status;
    snprintf(u->fail_type, sizeof u->fail_type, "%s", type);
    snprintf(u->fail_reason, sizeof u->fail_reason, "%s", reason);
}

static void run_local(dist_run *d, sc__dist_unit *u)
{
    u->lreq = (sc_node_query_request){.search = d->sr,
                                      .targets = u->targets,
                                      .n_targets = u->n_targets,
                                      .k = d->k,
                                      .deadline_ns = d->deadline_ns,
                                      .token = d->token,
                                      .collect = d->sr->collect,
                                      .can_match = d->can_match,
                                      .dfs = d->dfs};
    /* the unit's own arena: the request arena is not thread-safe */
    u->st = sc_node_query_phase(d->node, &u->lreq, &u->mem, &u->lresp);
    u->lresp_valid = true;
    if (u->st != SC_OK) {
        fail_unit(u, 500, "exception", "the node's query phase failed");
        return;
    }
    for (size_t t = 0; t < u->n_targets; t++)
        u->results[t] = u->lresp.results[t];
    u->top = u->lresp.top;
    u->n_top = u->lresp.n_top;
    u->agg = u->lresp.agg_reduced;
    const sc_search_request *sr = d->sr;
    if (sr->n_rrf > 1) { /* the other sub-searches on the same snapshots */
        u->rrf = sc_arena_calloc(&u->mem, sr->n_rrf - 1, sizeof *u->rrf);
        u->st = u->rrf ? sc_node_query_rrf_more(d->node, &u->lreq, &u->lresp,
                                                &sr->rrf_queries[sr->n_indices], sr->n_rrf - 1,
                                                &u->mem, u->rrf)
                       : SC_ENOMEM;
        if (u->st != SC_OK) {
            fail_unit(u, 500, "exception", "the node's query phase failed");
            return;
        }
    }
    u->n_partial_reduces = u->lresp.n_partial_reduces;
    /* the node phase's high-water mark (its reduce's scratch is given back by then), then
     * what it keeps */
    (void)sc__dist_breaker_add(&d->br, u->mem.peak_bytes);
    sc__dist_breaker_sub(&d->br, u->mem.peak_bytes - u->mem.used_bytes);
}

sc_status sc__dist_take_answer(const sc_search_request *sr, sc__dist_unit *u, const uint8_t *p,
                               size_t n)
{
    sc_wire_node_query_resp w;
    SC_TRY(sc_wire_node_query_resp_decode(p, n, &u->mem, &w));
    if (w.n_results != u->n_targets || (w.n_top && w.n_sort != sr->n_sort) ||
        (w.n_top && w.collapse != (sr->collapse != NULL)))
        return SC_ECORRUPT;
    for (size_t t = 0; t < u->n_targets; t++) {
        const sc_wire_shard_outcome *o = &w.results[t];
        sc_node_shard_result *r = &u->results[t];
        r->st = o->st;
        r->total = o->total;
        r->total_is_lower_bound = o->total_gte;
        r->timed_out = o->timed_out;
        r->terminated_early = o->terminated_early;
        r->skipped = o->skipped;
        r->max_score = w.has_max_scores ? o->max_score : NAN;
        r->profile = o->profile;
        if (o->st != SC_OK) {
            r->err.status = o->http_status;
            r->err.type = sc_arena_strndup(&u->mem, (const char *)o->type.ptr, o->type.len);
            snprintf(r->err.reason, sizeof r->err.reason, "%.*s", (int)o->reason.len,
                     (const char *)o->reason.ptr);
        }
    }
    for (size_t i = 0; i < w.n_top; i++) {
        bool known = false; /* a hit must name one of the unit's shards */
        for (size_t t = 0; t < u->n_targets && !known; t++)
            known = u->targets[t].shard_ix == w.top[i].shard_ix;
        if (!known)
            return SC_ECORRUPT;
    }
    if (w.n_rrf != (sr->n_rrf > 1 ? sr->n_rrf - 1 : 0))
        return SC_ECORRUPT;
    for (size_t j = 0; j < w.n_rrf; j++)
        for (size_t i = 0; i < w.rrf[j].n_top; i++) {
            bool known = false;
            for (size_t t = 0; t < u->n_targets && !known; t++)
                known = u->targets[t].shard_ix == w.rrf[j].top[i].shard_ix;
            if (!known)
                return SC_ECORRUPT;
        }
    u->rrf = (sc_node_ranked *)w.rrf;
    u->top = w.top;
    u->n_top = w.n_top;
    u->context_id = w.context_id;
    const sc_shard_collect_hook *h = sr->collect;
    if (w.agg_partial.len) {
        if (!h || !h->decode)
            return SC_ECORRUPT;
        SC_TRY(h->decode(h->ctx, w.agg_partial.ptr, w.agg_partial.len, &u->agg_mem, &u->agg));
    }
    u->n_partial_reduces = w.n_partial_reduces;
    return SC_OK;
}

/* The request's query-phase features (search_wire.h) for the data nodes; *knn_text and *rs are
 * malloc'd (the caller frees them). */
static sc_status query_features(const sc_search_request *sr, sc_wire_query_features *fx,
                                char **knn_text, sc_wire_rescore **rs, sc_wire_rrf_sub **subs)
{
    memset(fx, 0, sizeof *fx);
    *knn_text = NULL;
    *rs = NULL;
    *subs = NULL;
    fx->profile = sr->profile;
    if (sr->n_rrf > 1 && sr->rrf_json && sr->rrf_knn) { /* the first is the request's query */
        if (!(*subs = calloc(sr->n_rrf - 1, sizeof **subs)))
            return SC_ENOMEM;
        for (size_t j = 1; j < sr->n_rrf; j++)
            (*subs)[j - 1] = (sc_wire_rrf_sub){.json = sr->rrf_json[j], .knn = sr->rrf_knn[j]};
        fx->rrf = *subs;
        fx->n_rrf = sr->n_rrf - 1;
        fx->rrf_default_k = sr->knn_default_k;
    }
    if (sr->collapse) {
        fx->collapse_field = sc_slice_cstr(sr->collapse->field);
        fx->collapse_numeric = sr->collapse->numeric;
    }
    if (sr->n_rescore && sr->rescore && sr->rescore_json && sr->n_indices) {
        if (!(*rs = calloc(sr->n_rescore, sizeof **rs)))
            return SC_ENOMEM;
        for (size_t k = 0; k < sr->n_rescore; k++) {
            const sc_shard_rescore *x = &sr->rescore[0][k];
            (*rs)[k] = (sc_wire_rescore){.query_json = sr->rescore_json[k],
                                         .window_size = x->window_size,
                                         .query_weight = x->query_weight,
                                         .rescore_weight = x->rescore_weight,
                                         .mode = (uint8_t)x->mode};
        }
        fx->rescore = *rs;
        fx->n_rescore = sr->n_rescore;
    }
    if (sr->n_knn_clauses) { /* "[c0,c1,...]" */
        size_t len = 2;
        for (size_t j = 0; j < sr->n_knn_clauses; j++)
            len += sr->knn_clauses[j].len + 1;
        char *t = malloc(len + 1), *p = t;
        if (!t)
            return SC_ENOMEM;
        *p++ = '[';
        for (size_t j = 0; j < sr->n_knn_clauses; j++) {
            if (j)
                *p++ = ',';
            memcpy(p, sr->knn_clauses[j].ptr, sr->knn_clauses[j].len);
            p += sr->knn_clauses[j].len;
        }
        *p++ = ']';
        *knn_text = t;
        fx->knn_json = sc_slice_make(t, (size_t)(p - t));
        fx->knn_default_k = sr->knn_default_k;
        fx->knn_floor = sr->knn_floor;
        fx->n_knn_floor = sr->knn_floor ? sr->n_knn_clauses : 0;
    }
    return SC_OK;
}

sc_status sc__dist_encode_query(const sc_search_request *sr, const sc_shard_target *targets,
                                size_t nt, uint32_t k, bool can_match, const sc_term_stats *dfs,
                                int64_t timeout_ms, const char *parent_task, sc_wire_buf *b)
{
    sc_slice *names = calloc(sr->n_indices + 1, sizeof *names);
    if (!names)
        return SC_ENOMEM;
    uint32_t n_shards = 0;
    for (size_t i = 0; i < sr->n_indices; i++) {
        names[i] = sc_slice_cstr(sr->indices[i]->name);
        n_shards += sr->indices[i]->settings.number_of_shards;
    }
    sc_wire_node_query q = {.index_names = names,
                            .index_filters = (sc_slice *)sr->alias_filter_json,
                            .n_indices = sr->n_indices,
                            .query_json = sr->query_json,
                            .post_filter_json = sr->post_filter_json,
                            .aggs_json = sr->aggs_json,
                            .runtime_json = sr->runtime_json,
                            .k = k,
                            .track_total_hits = sr->track_total_hits,
                            .timeout_ms = timeout_ms,
                            .count_only = sr->count_only,
                            .terminate_after = sr->terminate_after,
                            .sort = sr->sort,
                            .n_sort = sr->n_sort,
                            .search_after = sr->search_after,
                            .targets = targets,
                            .n_targets = nt,
                            .n_shards_total = n_shards,
                            .can_match = can_match,
                            .dfs = dfs,
                            .track_scores = sr->track_scores && sr->n_sort,
                            .has_min_score = sr->has_min_score,
                            .min_score = sr->min_score,
                            .index_boosts = sr->index_boosts,
                            .parent_task =
                                parent_task ? sc_slice_cstr(parent_task) : sc_slice_make(NULL, 0),
                            .batched_reduce_size = sr->batched_reduce_size};
    char *knn_text;
    sc_wire_rescore *rs;
    sc_wire_rrf_sub *subs;
    sc_status st = query_features(sr, &q.fx, &knn_text, &rs, &subs);
    if (st == SC_OK)
        st = sc_wire_node_query_encode(&q, b);
    free(knn_text);
    free(rs);
    free(subs);
    free(names);
    return st;
}

static void run_remote(dist_run *d, sc__dist_unit *u)
{
    const sc_search_request *sr = d->sr;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    /* the data node gets what is left of the search's timeout */
    int64_t left = -1;
    if (sr->timeout_ms >= 0) {
        uint64_t now = sc_clock_now_ns();
        left = d->deadline_ns > now ? (int64_t)((d->deadline_ns - now) / 1000000u) : 0;
    }
    if (sc__dist_encode_query(sr, u->targets, u->n_targets, d->k, d->can_match, d->dfs, left,
                              d->parent[0] ? d->parent : NULL, &b) != SC_OK) {
        sc_wire_buf_fini(&b);
        fail_unit(u, 500, "exception", "cannot encode the node query request");
        return;
    }
    uint32_t tmo = left >= 0 ? (uint32_t)left + TIMEOUT_GRACE_MS : DEFAULT_REMOTE_TIMEOUT_MS;
    uint8_t *resp = NULL;
    size_t len = 0;
    sc_transport_error err;
    sc_status st = sc_transport_request(d->transport, u->host, u->port, SC_MSG_NODE_QUERY,
                                        sc_slice_make(b.ptr, b.len), tmo, &resp, &len, &err);
    sc_wire_buf_fini(&b);
    u->sent = true;
    if (st == SC_OK && (st = sc__dist_take_answer(d->sr, u, resp, len)) != SC_OK)
        snprintf(err.message, sizeof err.message, "bad answer from the node: %s",
                 sc_status_str(st));
    /* keyword sort keys and strings borrow the answer: it lives as long as the unit */
    u->resp_bytes = resp;
    u->resp_len = len;
    if (st == SC_OK) {
        /* the answer and what was decoded from it stay until the final reduce (or a fold) */
        (void)sc__dist_breaker_add(&d->br, len + u->mem.used_bytes + u->agg_mem.used_bytes);
        return;
    }
    char reason[512];
    snprintf(reason, sizeof reason, "[%s][%s:%u] %s", u->node_id, u->host, u->port, err.message);
    if (err.remote)
        fail_unit(u, 500, "remote_transport_exception", reason);
    else if (st == SC_ETIMEOUT)
        fail_unit(u, 504, "receive_timeout_transport_exception", reason);
    else
        fail_unit(u, 503, "node_not_connected_exception", reason);
    u->node_failed = !err.remote;
}

static void run_unit(dist_run *d, sc__dist_unit *u)
{
    if (!u->assigned)
        fail_unit(u, 503, "no_shard_available_action_exception",
                  "no active primary copy of the shard");
    else if (u->local)
        run_local(d, u);
    else if (!d->transport || !u->port)
        fail_unit(u, 503, "node_not_connected_exception", "no transport address for the node");
    else
        run_remote(d, u);
}

/* Folds the pending units (under d->mu): their top hits (tagged with their unit) and
 * aggregation partials join d->fold, and a remote unit's answer and decoded partial are freed
 * and given back to the breaker. */
static void fold_units(dist_run *d)
{
    size_t all = 0;
    for (size_t i = 0; i < d->n_fold_pending; i++)
        all += d->units[d->fold_pending[i]].n_top;
    sc_node_hit *hits = malloc((all ? all : 1) * sizeof *hits);
    uint32_t *tags = malloc((all ? all : 1) * sizeof *tags);
    void **partials = calloc(d->n_fold_pending + 1, sizeof *partials);
    sc_status st = hits && tags && partials ? SC_OK : SC_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; st == SC_OK && i < d->n_fold_pending; i++) {
        const sc__dist_unit *u = &d->units[d->fold_pending[i]];
        for (size_t h = 0; h < u->n_top; h++) {
            hits[m] = u->top[h];
            tags[m++] = (uint32_t)d->fold_pending[i];
        }
        partials[i] = u->agg;
    }
    size_t before = sc__partial_bytes(&d->fold);
    if (st == SC_OK)
        st = sc__partial_fold(&d->fold, d->sr, d->k, d->sr->collect, hits, tags, m, partials,
                              d->n_fold_pending);
    free(hits);
    free(tags);
    free(partials);
    if (st != SC_OK) {
        d->fold_st = st;
        return;
    }
    /* the new fold's high-water mark while the old fold and the folded units are still held,
     * then what it keeps */
    size_t peak = d->fold.mem ? d->fold.mem->peak_bytes : 0;
    (void)sc__dist_breaker_add(&d->br, peak);
    sc__dist_breaker_sub(&d->br, peak - sc__partial_bytes(&d->fold));
    sc__dist_breaker_sub(&d->br, before);
    for (size_t i = 0; i < d->n_fold_pending; i++) {
        sc__dist_unit *u = &d->units[d->fold_pending[i]];
        u->folded = true;
        u->top = NULL;
        u->n_top = 0;
        u->agg = NULL;
        if (u->local)
            continue; /* its memory is the node phase's, released with it */
        sc__dist_breaker_sub(&d->br, u->resp_len + u->agg_mem.used_bytes);
        free(u->resp_bytes);
        u->resp_bytes = NULL;
        sc_arena_fini(&u->agg_mem);
        sc_arena_init(&u->agg_mem, 0);
    }
    d->n_fold_pending = 0;
}

/* Batched (one unit per data node, each answer already a node's partial reduce) with fewer
 * answers than batched_reduce_size: rather than holding every node's answer until the final
 * reduce, the coordinator folds them as they arrive, one at a time in unit order (the first two
 * together, then each next one into the fold, as soon as it has answered), and frees each folded
 * answer. The last unit goes to the final reduce with the fold. The grouping does not depend on
 * which node answers first (only when each fold runs does), so hits, top_hits ties, sums and
 * sketches come out the same every time. These folds are not reduce phases the request asked
 * for: num_reduce_phases does not count them. Failed units are passed over. Under d->mu. */
static void fold_arrived(dist_run *d)
{
    while (d->fold_st == SC_OK) {
        size_t want = d->fold.mem ? 1 : 2, got = 0, pend[2], u = d->fold_next;
        for (; u + 1 < d->n_units && got < want; u++) {
            if (atomic_load(&d->units[u].state) != 2)
                break;
            if (d->units[u].st == SC_OK)
                pend[got++] = u;
        }
        if (got < want)
            return;
        if (d->cap_fold_pending < 2) {
            size_t *p = realloc(d->fold_pending, 2 * sizeof *p);
            if (!p) {
                d->fold_st = SC_ENOMEM;
                return;
            }
            d->fold_pending = p;
            d->cap_fold_pending = 2;
        }
        d->n_fold_pending = got;
        memcpy(d->fold_pending, pend, got * sizeof *pend);
        d->fold_next = u;
        uint32_t phases = d->fold.n_phases;
        fold_units(d);
        d->fold.n_phases = phases;
    }
}

/* A unit finished (under d->mu): folds every batch of finished units in unit order (the order
 * of the single reduce, so that ties and sums of doubles come out the same), the fold counting
 * as one result, while more units are to come in the round (the last batch goes to the final
 * reduce). Failed units are in the batch but add nothing. */
static void fold_ready(dist_run *d)
{
    if (d->fold_arrivals) {
        fold_arrived(d);
        return;
    }
    for (;;) {
        size_t need = d->fold_batch - (d->fold.mem ? 1 : 0), k = 0;
        if (d->fold_st != SC_OK || d->fold_next + need >= d->n_units)
            return;
        while (k < need && atomic_load(&d->units[d->fold_next + k].state) == 2)
            k++;
        if (k < need)
            return;
        if (need > d->cap_fold_pending) {
            size_t *p = realloc(d->fold_pending, need * sizeof *p);
            if (!p) {
                d->fold_st = SC_ENOMEM;
                return;
            }
            d->fold_pending = p;
            d->cap_fold_pending = need;
        }
        d->n_fold_pending = 0;
        for (k = 0; k < need; k++)
            if (d->units[d->fold_next + k].st == SC_OK)
                d->fold_pending[d->n_fold_pending++] = d->fold_next + k;
        d->fold_next += need;
        fold_units(d);
    }
}

static void *sender(void *arg)
{
    dist_run *d = arg;
    for (;;) {
        size_t i = d->round_start + atomic_fetch_add(&d->next, 1);
        if (i >= d->n_units)
            return NULL;
        atomic_store(&d->units[i].state, 1);
        run_unit(d, &d->units[i]);
        atomic_store(&d->units[i].state, 2);
        pthread_mutex_lock(&d->mu);
        d->n_done++;
        if (d->folding)
            fold_ready(d);
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
    }
}

static bool search_cancelled(const dist_run *d);

/* Sends SC_MSG_NODE_CANCEL for the search's task to every node with a remote unit of the round
 * in flight (once per node). Best effort: a node that does not answer has its unit time out. */
static void send_cancels(dist_run *d)
{
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    if (sc_wire_node_cancel_encode(sc_slice_cstr(d->parent), &b) != SC_OK) {
        sc_wire_buf_fini(&b);
        return;
    }
    for (size_t u = d->round_start; u < d->n_units; u++) {
        const sc__dist_unit *x = &d->units[u];
        if (x->local || !x->assigned || !x->port || atomic_load(&x->state) != 1)
            continue;
        bool seen = false;
        for (size_t v = d->round_start; v < u && !seen; v++)
            seen = !d->units[v].local && atomic_load(&d->units[v].state) == 1 &&
                   strcmp(d->units[v].node_id, x->node_id) == 0;
        if (seen)
            continue;
        uint8_t *resp = NULL;
        size_t len = 0;
        sc_transport_error err;
        sc_status st = sc_transport_request(d->transport, x->host, x->port, SC_MSG_NODE_CANCEL,
                                            sc_slice_make(b.ptr, b.len), CANCEL_SEND_TIMEOUT_MS,
                                            &resp, &len, &err);
        free(resp);
        sc_log(SC_LOG_DEBUG, "search", "cancel of [%s] sent to [%s]: %s", d->parent, x->node_id,
               st == SC_OK ? "ok" : err.message);
    }
    sc_wire_buf_fini(&b);
}

/* While the senders run the round: waits for them, and forwards a cancellation of the search's
 * task to the data nodes with work in flight. */
static void watch_round(dist_run *d, size_t n)
{
    uint64_t resend_at = 0;
    pthread_mutex_lock(&d->mu);
    while (d->n_done < n) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += CANCEL_POLL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&d->cv, &d->mu, &ts);
        if (d->n_done >= n || !atomic_load_explicit(&d->token->cancelled, memory_order_relaxed))
            continue;
        uint64_t now = sc_clock_now_ns();
        if (now < resend_at)
            continue;
        pthread_mutex_unlock(&d->mu);
        send_cancels(d);
        pthread_mutex_lock(&d->mu);
        resend_at = sc_clock_now_ns() + (uint64_t)CANCEL_RESEND_MS * 1000000u;
    }
    pthread_mutex_unlock(&d->mu);
}

/* Runs the round's units: the calling thread and up to MAX_SENDERS - 1 helpers pull from a
 * counter. */
static void run_units(dist_run *d)
{
    pthread_t th[MAX_SENDERS];
    size_t n_th = 0, n = d->n_units - d->round_start;
    /* max_concurrent_shard_requests is per node in Elasticsearch: that many per node of the
     * round (counted up to MAX_SENDERS), within MAX_SENDERS threads */
    size_t cap = MAX_SENDERS;
    if (d->sr->max_concurrent_shard_requests) {
        size_t nodes = 0;
        for (size_t u = d->round_start; u < d->n_units && nodes < MAX_SENDERS; u++) {
            bool seen = false;
            for (size_t v = d->round_start; v < u && !seen; v++)
                seen = strcmp(d->units[v].node_id, d->units[u].node_id) == 0;
            nodes += !seen;
        }
        cap = (size_t)d->sr->max_concurrent_shard_requests * (nodes ? nodes : 1);
        if (cap > MAX_SENDERS)
            cap = MAX_SENDERS;
    }
    size_t want = n < cap ? n : cap;
    atomic_init(&d->next, 0);
    d->n_done = 0;
    /* with remote units of a task, this thread watches for a cancellation instead of sending */
    bool watch = false;
    for (size_t u = d->round_start; u < d->n_units && d->parent[0] && d->transport; u++)
        watch |= d->units[u].assigned && !d->units[u].local;
    for (size_t i = watch ? 0 : 1; i < want; i++)
        if (pthread_create(&th[n_th], NULL, sender, d) == 0)
            n_th++;
    if (watch && n_th)
        watch_round(d, n);
    else
        sender(d);
    for (size_t i = 0; i < n_th; i++)
        pthread_join(th[i], NULL);
}

/* Whether a shard's failure may succeed on another copy: not a cancellation, not a bad request
 * (4xx other than 429, which every copy would answer alike); node failures, 5xx and the
 * node's circuit breaker (429) may. */
static bool retryable(const sc_node_shard_result *r)
{
    if (r->st == SC_ECANCELLED)
        return false;
    return !(r->err.status >= 400 && r->err.status < 500 && r->err.status != 429);
}

static bool search_cancelled(const dist_run *d)
{
    return atomic_load_explicit(&d->token->cancelled, memory_order_relaxed) ||
           atomic_load_explicit(&d->token->fired, memory_order_relaxed) == 1;
}

/* After a round: the failed shards that have another copy (on a node that did not fail in this
 * search) form the next round; their failed entries are superseded. *n_next of them. */
static sc_status plan_retries(dist_run *d, bool batched, size_t *n_next)
{
    *n_next = 0;
    size_t r0 = d->round_start, r1 = d->n_units;
    for (size_t u = r0; u < r1; u++) { /* nodes that failed are skipped from now on */
        if (d->units[u].st == SC_OK || !d->units[u].node_failed ||
            node_dead(d, d->units[u].node_id))
            continue;
        char(*dead)[SC_ALLOC_NODE_MAX] = realloc(d->dead, (d->n_dead + 1) * sizeof *dead);
        if (!dead)
            return SC_ENOMEM;
        d->dead = dead;
        snprintf(d->dead[d->n_dead++], sizeof d->dead[0], "%s", d->units[u].node_id);
    }
    if (search_cancelled(d))
        return SC_OK;
    size_t n = 0;
    for (size_t u = r0; u < r1; u++)
        n += d->units[u].n_targets;
    sc_shard_target *tg = calloc(n ? n : 1, sizeof *tg);
    sc_shard_location *loc = calloc(n ? n : 1, sizeof *loc);
    sc_status st = tg && loc ? SC_OK : SC_ENOMEM;
    size_t m = 0;
    for (size_t u = r0; st == SC_OK && u < r1; u++) {
        sc__dist_unit *x = &d->units[u];
        if (!x->assigned)
            continue; /* no copy at all */
        for (size_t t = 0; t < x->n_targets; t++) {
            if (x->st == SC_OK && (x->results[t].st == SC_OK || !retryable(&x->results[t])))
                continue;
            d->attempt[x->targets[t].shard_ix]++;
            if (!next_copy(d, &x->targets[t], &loc[m]))
                continue;
            if (!x->superseded &&
                !(x->superseded = sc_arena_calloc(&x->mem, x->n_targets, sizeof(bool)))) {
                st = SC_ENOMEM;
                break;
            }
            x->superseded[t] = true;
            tg[m++] = x->targets[t];
        }
    }
    d->round_start = d->n_units;
    if (st == SC_OK && m)
        st = group(d, tg, loc, m, batched);
    free(tg);
    free(loc);
    d->n_retried += (uint32_t)m;
    *n_next = m;
    return st;
}

void sc__dist_breaker_sub(sc__dist_breaker *b, uint64_t bytes)
{
    if (!bytes)
        return;
    atomic_fetch_sub(&b->reserved, bytes);
    sc_breaker_release(b->node, bytes);
}

bool sc__dist_breaker_add(sc__dist_breaker *b, uint64_t bytes)
{
    if (!bytes)
        return true;
    if (!sc_breaker_reserve(b->node, bytes)) {
        uint64_t want = atomic_load(&b->reserved) + bytes;
        uint64_t w = atomic_load(&b->wanted);
        while (w < want && !atomic_compare_exchange_weak(&b->wanted, &w, want))
            ;
        atomic_store(&b->tripped, true);
        return false;
    }
    sc_breaker_note_used(b->node, atomic_fetch_add(&b->reserved, bytes) + bytes);
    return true;
}

static void units_free(dist_run *d)
{
    for (size_t u = 0; u < d->n_units; u++) {
        sc__dist_unit *x = &d->units[u];
        if (x->lresp_valid)
            sc_node_query_release(&x->lreq, &x->lresp);
        free(x->resp_bytes);
        sc_arena_fini(&x->mem);
        sc_arena_fini(&x->agg_mem);
    }
    free(d->units);
    free(d->fold_pending);
    sc__partial_fini(&d->fold);
    free(d->attempt);
    free(d->dead);
}

sc_status sc__search_run_dist(sc_node *n, const sc_search_request *sr,
                              const sc_shard_target *targets, size_t nt, uint32_t k,
                              uint64_t deadline_ns, sc_cancel_token *token, bool can_match,
                              const sc_term_stats *dfs, sc_arena *arena, sc_search_response *out)
{
    sc_placement *p = sc_node_placement(n);
    sc_placement_snapshot *snap = sc_placement_acquire(p);
    dist_run d = {.node = n,
                  .sr = sr,
                  .snap = snap,
                  .k = k,
                  .can_match = can_match,
                  .dfs = dfs,
                  .deadline_ns = deadline_ns,
                  .token = token,
                  .transport = sc_placement_transport(p),
                  .br = {.node = n}};
    if (sr->task)
        sc_task_id_str(n, sr->task, d.parent, sizeof d.parent);
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    bool batched = sc_placement_batched(snap);
    d.fold_batch = sc__batched_reduce_size(sr);
    d.folding = sc__search_can_fold(sr) && !(sr->collect && !sr->collect->reduce);
    sc_status st = group_first(&d, targets, nt, batched);
    size_t n_next = d.n_units;
    /* node answers fold as they arrive; answers per shard (unbatched), or more answers than
     * batched_reduce_size, every batch */
    d.fold_arrivals = batched && d.n_units <= d.fold_batch;
    /* Each round retries failed shards on their next copy; a target never returns to a copy it
     * tried, so the rounds end (at most one per copy). */
    while (st == SC_OK && n_next && !atomic_load(&d.br.tripped)) {
        run_units(&d);
        st = plan_retries(&d, batched, &n_next);
    }
    if (st == SC_OK && d.fold_st != SC_OK) {
        st = d.fold_st;
        sc__dist_free_contexts(d.units, d.n_units, d.transport);
    }
    if (st == SC_OK && !atomic_load(&d.br.tripped))
        st = sc__dist_reduce(n, sr, d.units, d.n_units, &d.fold, d.transport, token, &d.br, dfs,
                             arena, out);
    else if (st == SC_OK)
        sc__dist_free_contexts(d.units, d.n_units, d.transport);
    if (st == SC_OK && atomic_load(&d.br.tripped))
        st = SC_ELIMIT;
    if (atomic_load(&d.br.tripped)) {
        /* the coordinator refuses to hold more reduce memory: 429, nothing kept */
        sc_breaker_stats bs;
        sc_breakers_get(n, &bs);
        out->breaker_wanted = atomic_load(&d.br.wanted);
        out->breaker_limit = bs.request_limit;
    }
    if (st == SC_OK) {
        sc_log(SC_LOG_DEBUG, "search",
               "%zu shards in %zu query requests (%s), %u remote, %u retried on another copy", nt,
               d.n_units, batched ? "batched per node" : "one per shard", out->query_requests,
               d.n_retried);
    }
    units_free(&d);
    sc_breaker_release(n, atomic_load(&d.br.reserved));
    sc_placement_release(snap);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    return st;
}
