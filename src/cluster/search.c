/* Query-then-fetch coordinator and the data-node phases (see search.h). One shard's query and
 * fetch run in the shard module (shard/shard_search.h); this file reserves their memory on the
 * request breaker, runs the shards on the node's search pool, reduces, and maps failures. */
#include "cluster/search.h"
#include "search/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/threadpool.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/search_internal.h"
#include "search/can_match.h"
#include "shard/shard.h"

/* One shard's query-phase job, run on the node's search pool. Its results live in `mem` (the
 * request arena is not thread-safe), which the node response keeps until release. */
struct node_fold;

typedef struct shard_job {
    struct node_fold *fold; /* batched_reduce_size folding on this node, or NULL */
    bool folded;            /* its hits and aggregation partial are in fold->acc */
    sc_node *node;
    const sc_node_query_request *req;
    size_t t; /* target number */
    sc_node_shard_result *res;
    sc_arena *mem;
    sc_shard_query_result r;
    sc__sort_bottom *bottom; /* can_match by sort on this node, or NULL */
} shard_job;

/* The query's working memory is reserved on the request breaker: an eighth of its limit per
 * shard execution (shard executions are bounded by the search pool, so this admits several at
 * once), at least 1 MiB (or the limit); the scratch arena enforces the reservation. Returns 0
 * and fills err when the breaker refuses it. */
static uint64_t reserve_budget(sc_node *n, sc_cluster_error *err)
{
    sc_breaker_stats bs;
    sc_breakers_get(n, &bs);
    uint64_t budget = bs.request_limit / 8;
    uint64_t floor_bytes = bs.request_limit < (1u << 20) ? bs.request_limit : (1u << 20);
    if (budget < floor_bytes)
        budget = floor_bytes;
    if (!sc_breaker_reserve(n, budget)) {
        sc_cluster_error_set(err, 429, "circuit_breaking_exception",
                             "[request] Data too large, data for [<query>] would be [%llu] more, "
                             "which is larger than the limit of [%llu]",
                             (unsigned long long)budget, (unsigned long long)bs.request_limit);
        return 0;
    }
    return budget;
}

/* The shard module's error as the shard failure: query errors name the index and shard. */
static void map_error(const sc_index *ix, uint32_t shard, sc_status st,
                      const sc_shard_search_error *e, sc_cluster_error *err)
{
    const char *type = e->type ? e->type : "exception";
    int status = e->status ? e->status : 500;
    if (st == SC_ECANCELLED || status == 429)
        sc_cluster_error_set(err, status, type, "%s", e->reason);
    else
        sc_cluster_error_set(err, status, type, "[%s][%u] %s", ix->name, shard,
                             e->reason[0] ? e->reason : sc_status_str(st));
}

/* The can_match pre-filter on one shard snapshot (search/can_match.h). */
static bool shard_can_match(const sc_shard_snapshot *snap, const sc_query *q)
{
    sc_searcher_segment one[16];
    sc_searcher_segment *segs =
        snap->n_segments <= 16 ? one : malloc(snap->n_segments * sizeof *segs);
    if (!segs)
        return true;
    sc_searcher s;
    sc_shard_searcher_init(snap, segs, &s);
    bool can = sc_query_can_match(&s, q);
    if (segs != one)
        free(segs);
    return can;
}

/* Test only (sc_node_config.test_search_delay_ms): waits before the shard runs, in short steps
 * that poll the token. false when the search was cancelled meanwhile; past the deadline the
 * wait ends and the token is marked timed out, so the shard stops at its first check. */
static bool test_delay(sc_node *n, const sc_cancel_token *tok)
{
    uint32_t ms = sc_node_config_get(n)->test_search_delay_ms;
    if (!ms)
        return true;
    uint64_t end = sc_clock_now_ns() + (uint64_t)ms * 1000000u;
    for (;;) {
        uint64_t now = sc_clock_now_ns();
        if (tok && atomic_load_explicit(&((sc_cancel_token *)tok)->cancelled, memory_order_relaxed))
            return false;
        if (now >= end)
            return true;
        if (tok && tok->deadline_ns && now >= tok->deadline_ns) {
            /* the search timed out while waiting: the shard stops at its first check */
            uint32_t none = 0;
            atomic_compare_exchange_strong(&((sc_cancel_token *)tok)->fired, &none, 2);
            return true;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

static void run_shard_once(shard_job *j, sc_status pool_st)
{
    const sc_node_query_request *req = j->req;
    const sc_shard_target *tg = &req->targets[j->t];
    const sc_search_request *sr = req->search;
    sc_index *ix = sr->indices[tg->index_i];
    sc_node_shard_result *res = j->res;
    if (pool_st != SC_OK) {
        res->st = SC_ECANCELLED;
        sc_cluster_error_set(&res->err, 503, "task_cancelled_exception", "shard task dropped");
        return;
    }
    if (!ix->shards || !ix->shards[tg->shard]) {
        res->st = SC_EIO;
        sc_cluster_error_set(&res->err, 503, "no_shard_available_action_exception",
                             "[%s][%u] shard is not available", ix->name, tg->shard);
        return;
    }
    const sc_shard_snapshot *snap;
    if (sr->pinned) {
        snap = sr->pinned[tg->pin_ix];
        res->pinned = true;
    } else {
        snap = sc_shard_searcher_acquire(ix->shards[tg->shard]);
    }
    res->snapshot = snap;
    if (req->can_match && !shard_can_match(snap, sr->queries[tg->index_i])) {
        res->skipped = true;
        return;
    }
    if (j->bottom) {
        /* the bound of the snapshot this query reads (a refresh may have added values) */
        int64_t best = 0;
        sc__sortskip_bound kind = sc__sortskip_bound_of(snap, &sr->sort[0], &best);
        if (sc__sortskip_cannot_beat(j->bottom, &sr->sort[0], kind, best)) {
            res->skipped = true;
            return;
        }
    }
    if (!test_delay(j->node, req->token)) {
        res->st = SC_ECANCELLED;
        sc_cluster_error_set(&res->err, 400, "task_cancelled_exception", "task cancelled");
        return;
    }
    uint64_t budget = reserve_budget(j->node, &res->err);
    if (!budget) {
        res->st = SC_ELIMIT;
        return;
    }
    sc_shard_query_args a = {
        .snapshot = snap,
        .query = sr->queries[tg->index_i],
        .k = req->k,
        .track_total_hits = sr->track_total_hits,
        .sort = sr->sort,
        .n_sort = sr->n_sort,
        .search_after = sr->search_after,
        .token = req->token,
        .collect = req->collect,
        .rescore = sr->rescore ? sr->rescore[tg->index_i] : NULL,
        .collapse = sr->collapse,
        .n_rescore = sr->rescore ? sr->n_rescore : 0,
        .dfs = req->dfs,
        .track_scores = sr->track_scores,
        .profile = sr->profile,
        .terminate_after = sr->terminate_after,
    };
    sc_arena scratch;
    sc_arena_init(&scratch, budget);
    uint64_t q0 = sc_clock_now_ns();
    sc_status st = sc_shard_query_run(&a, &scratch, j->mem, &j->r);
    sc_shard_count_query(ix->shards[tg->shard], sc_clock_now_ns() - q0);
    if (st != SC_OK && j->r.err.status == 429)
        sc_breaker_count_trip(j->node);
    /* what the execution really needed: its scratch high-water plus the result it returns */
    sc_breaker_note_used(j->node, scratch.peak_bytes + j->mem->used_bytes);
    sc_arena_fini(&scratch);
    sc_breaker_release(j->node, budget);
    res->st = st;
    if (st != SC_OK) {
        map_error(ix, tg->shard, st, &j->r.err, &res->err);
        return;
    }
    res->total = j->r.total;
    res->total_is_lower_bound = j->r.total_gte;
    res->timed_out = j->r.timed_out;
    res->terminated_early = j->r.terminated_early;
    res->max_score = j->r.max_score;
    res->profile = j->r.profile;
    if (j->bottom && req->k && j->r.n_docs >= req->k && j->r.docs[req->k - 1].sort)
        sc__sortskip_offer(j->bottom, &sr->sort[0], &j->r.docs[req->k - 1].sort[0]);
}

int sc__search_cmp_sorted(const void *pa, const void *pb, void *ctx)
{
    const sc_search_request *sr = ctx;
    const sc_node_hit *a = pa, *b = pb;
    int c = sc_sort_compare(sr->sort, sr->n_sort, a->keys, b->keys);
    if (c)
        return c;
    if (a->shard_ix != b->shard_ix)
        return a->shard_ix < b->shard_ix ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

int sc__search_cmp_score(const void *pa, const void *pb)
{
    const sc_node_hit *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->shard_ix != b->shard_ix)
        return a->shard_ix < b->shard_ix ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

bool sc__search_same_group(const sc_shard_collapse *c, const sc_sort_key *a, const sc_sort_key *b)
{
    if (!a || !b || a->missing || b->missing)
        return (!a || a->missing) == (!b || b->missing);
    return c->numeric ? a->i == b->i : sc_slice_eq(a->s, b->s);
}

/* Keeps the first (best) hit of each collapse group among hits[0..n), up to k of them, in
 * place; returns how many. O(n * k): k is a page. */
static size_t dedupe_groups(const sc_shard_collapse *c, sc_node_hit *hits, size_t n, size_t k)
{
    size_t m = 0;
    for (size_t i = 0; i < n && m < k; i++) {
        bool seen = false;
        for (size_t j = 0; j < m && !seen; j++)
            seen = sc__search_same_group(c, hits[j].collapse_key, hits[i].collapse_key);
        if (!seen)
            hits[m++] = hits[i];
    }
    return m;
}

/* batched_reduce_size on a node: as shards finish, every batch of results (the fold so far
 * counting as one) is folded into one partial (cluster/search_partial.c) and the folded shards'
 * result memory is freed; the node's final reduce takes the fold and the shards not folded. */
typedef struct node_fold {
    const sc_node_query_request *req;
    shard_job *jobs;
    size_t batch;
    size_t *pending; /* the batch being folded */
    size_t n_pending;
    bool *done;  /* per target: finished */
    size_t next; /* targets before this are folded */
    sc__partial acc;
    sc_status st;
    pthread_mutex_t mu;
} node_fold;

static sc_status fold_pending(node_fold *f)
{
    size_t all = 0, np = 0;
    for (size_t i = 0; i < f->n_pending; i++) {
        const shard_job *j = &f->jobs[f->pending[i]];
        all += j->res->st == SC_OK ? j->r.n_docs : 0;
    }
    sc_node_hit *hits = malloc((all ? all : 1) * sizeof *hits);
    void **partials = calloc(f->n_pending + 1, sizeof *partials);
    sc_status st = hits && partials ? SC_OK : SC_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; st == SC_OK && i < f->n_pending; i++) {
        const shard_job *j = &f->jobs[f->pending[i]];
        if (j->res->st != SC_OK)
            continue;
        for (size_t d = 0; d < j->r.n_docs; d++)
            hits[m++] = (sc_node_hit){.score = j->r.docs[d].score,
                                      .shard_ix = f->req->targets[j->t].shard_ix,
                                      .doc = j->r.docs[d].doc,
                                      .keys = j->r.docs[d].sort,
                                      .collapse_key = j->r.docs[d].collapse_key};
        partials[np++] = j->r.agg_partial;
    }
    if (st == SC_OK)
        st = sc__partial_fold(&f->acc, f->req->search, f->req->k, f->req->collect, hits, NULL, m,
                              partials, np);
    free(hits);
    free(partials);
    for (size_t i = 0; st == SC_OK && i < f->n_pending; i++) {
        shard_job *j = &f->jobs[f->pending[i]];
        if (j->res->st != SC_OK)
            continue;
        /* what the shard returned is in the fold now: its memory goes */
        j->folded = true;
        memset(&j->r, 0, sizeof j->r);
        sc_arena_fini(j->mem);
        sc_arena_init(j->mem, 0);
        j->mem->chunk_bytes = 4096;
    }
    f->n_pending = 0;
    return st;
}

static void run_shard(void *arg, sc_status pool_st)
{
    shard_job *j = arg;
    run_shard_once(j, pool_st);
    node_fold *f = j->fold;
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->done[j->t] = true;
    /* Folds go in target order, the order of the single reduce, so that ties (top_hits) and
     * sums of doubles come out the same; a fold only while more results are to come (the last
     * batch goes to the final reduce). */
    for (;;) {
        size_t need = f->batch - (f->acc.mem ? 1 : 0), k = 0;
        if (f->st != SC_OK || f->next + need >= f->req->n_targets)
            break;
        while (k < need && f->done[f->next + k])
            k++;
        if (k < need)
            break;
        for (f->n_pending = 0; f->n_pending < need; f->n_pending++)
            f->pending[f->n_pending] = f->next + f->n_pending;
        f->next += need;
        f->st = fold_pending(f);
    }
    pthread_mutex_unlock(&f->mu);
}

/* Partial reduce of the top hits: the node's top k across its shards (and the fold's). */
static sc_status reduce_top(const sc_node_query_request *req, const shard_job *jobs,
                            const sc__partial *acc, sc_arena *arena, sc_node_query_response *out)
{
    size_t nt = req->n_targets, all = acc->n_top;
    for (size_t t = 0; t < nt; t++)
        all += jobs[t].res->st == SC_OK ? jobs[t].r.n_docs : 0;
    sc_node_hit *merged = sc_arena_alloc(arena, (all ? all : 1) * sizeof *merged);
    if (!merged)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t m = 0;
    if (acc->n_top) {
        sc_node_hit *folded;
        SC_TRY(sc__partial_copy_top(acc, req->search, arena, &folded));
        memcpy(merged, folded, acc->n_top * sizeof *merged);
        m = acc->n_top;
    }
    for (size_t t = 0; t < nt; t++) {
        if (jobs[t].res->st != SC_OK || jobs[t].folded)
            continue;
        uint32_t shard_ix = req->targets[t].shard_ix;
        for (size_t i = 0; i < jobs[t].r.n_docs; i++) {
            const sc_shard_top_doc *d = &jobs[t].r.docs[i];
            merged[m++] = (sc_node_hit){.score = d->score,
                                        .shard_ix = shard_ix,
                                        .doc = d->doc,
                                        .keys = d->sort,
                                        .collapse_key = d->collapse_key};
        }
    }
    if (req->search->n_sort)
        qsort_r(merged, all, sizeof *merged, sc__search_cmp_sorted, (void *)req->search);
    else
        qsort(merged, all, sizeof *merged, sc__search_cmp_score);
    if (req->search->collapse)
        all = dedupe_groups(req->search->collapse, merged, all, req->k);
    out->top = merged;
    out->n_top = all < req->k ? all : req->k;
    return SC_OK;
}

/* Partial reduce of the aggregations (with a collect hook): the shards' partials, and their
 * reduction when the hook has a reduce. */
static sc_status reduce_aggs(const sc_node_query_request *req, const shard_job *jobs,
                             const sc__partial *acc, sc_arena *arena, sc_node_query_response *out)
{
    size_t nt = req->n_targets;
    /* the fold's reduction (the first targets), then per target (folded ones NULL) */
    void **in = sc_arena_calloc(arena, nt + 1, sizeof *in);
    if (!in)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    in[0] = acc->agg;
    out->agg_partials = in + 1;
    for (size_t t = 0; t < nt; t++)
        out->agg_partials[t] = jobs[t].res->st == SC_OK ? jobs[t].r.agg_partial : NULL;
    if (!req->collect->reduce)
        return SC_OK;
    sc_shard_search_error err;
    memset(&err, 0, sizeof err);
    sc_status st =
        req->collect->reduce(req->collect->ctx, in, nt + 1, arena, &out->agg_reduced, &err);
    if (st != SC_OK)
        sc_log(SC_LOG_WARN, "search", "aggregation reduce failed: %s",
               err.reason[0] ? err.reason : sc_status_str(st));
    return st;
}

sc_status sc_node_query_phase(sc_node *n, const sc_node_query_request *req, sc_arena *arena,
                              sc_node_query_response *out)
{
    memset(out, 0, sizeof *out);
    size_t nt = req->n_targets;
    out->results = sc_arena_calloc(arena, nt ? nt : 1, sizeof *out->results);
    /* in the request's arena, as the results are (it outlives sc_node_query_release), and the
     * jobs on the stack for the few shards of most searches: two calloc/free pairs fewer */
    out->shard_mem = sc_arena_calloc(arena, nt ? nt : 1, sizeof *out->shard_mem);
    shard_job few_jobs[4];
    shard_job *jobs = nt <= 4 ? few_jobs : calloc(nt, sizeof *jobs);
    if (!out->results || !out->shard_mem || !jobs) {
        out->shard_mem = NULL;
        if (jobs != few_jobs)
            free(jobs);
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    }
    sc_threadpool *pool = sc_node_search_pool(n);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    sc__sort_bottom bottom;
    bool sortskip = sc__sortskip_applies(req);
    size_t *order = sortskip ? malloc((nt ? nt : 1) * sizeof *order) : NULL;
    if (sortskip && order) {
        sc__sortskip_init(&bottom);
        sc__sortskip_order(req, order); /* the most promising shards start first */
    }
    /* fold every batched_reduce_size results when there are more shards than that (not when
     * sc__search_can_fold says no, nor with a hook that cannot reduce) */
    node_fold fold = {.req = req, .jobs = jobs, .batch = sc__batched_reduce_size(req->search)};
    bool folding = nt > fold.batch && sc__search_can_fold(req->search) &&
                   !(req->collect && !req->collect->reduce) &&
                   (fold.pending = malloc(nt * sizeof *fold.pending)) != NULL &&
                   (fold.done = calloc(nt, sizeof *fold.done)) != NULL;
    if (folding)
        pthread_mutex_init(&fold.mu, NULL);
    for (size_t i = 0; i < nt; i++) {
        size_t t = order ? order[i] : i;
        sc_arena_init(&out->shard_mem[t], 0);
        /* A shard's results are small (k docs and their keys; larger arrays get chunks of
         * their own): 4 KiB chunks keep a node with many shards from holding 64 KiB each. */
        out->shard_mem[t].chunk_bytes = 4096;
        jobs[t] = (shard_job){.node = n,
                              .req = req,
                              .t = t,
                              .res = &out->results[t],
                              .mem = &out->shard_mem[t],
                              .bottom = order ? &bottom : NULL,
                              .fold = folding ? &fold : NULL};
        /* A single shard runs inline: no hand-off latency. The pool bounds concurrency; a full
         * queue also falls back to running here. */
        if (nt == 1 || !pool || sc_threadpool_submit(pool, run_shard, &jobs[t], &g) != SC_OK)
            run_shard(&jobs[t], SC_OK);
    }
    (void)sc_taskgroup_wait(&g);
    sc_taskgroup_fini(&g);
    if (order)
        sc__sortskip_fini(&bottom);
    free(order);
    sc_status st = fold.st;
    if (st == SC_OK)
        st = reduce_top(req, jobs, &fold.acc, arena, out);
    if (st == SC_OK && req->collect)
        st = reduce_aggs(req, jobs, &fold.acc, arena, out);
    out->n_partial_reduces = fold.acc.n_phases;
    sc__partial_fini(&fold.acc);
    if (folding)
        pthread_mutex_destroy(&fold.mu);
    free(fold.pending);
    free(fold.done);
    if (jobs != few_jobs)
        free(jobs);
    return st;
}

void sc_node_query_release(const sc_node_query_request *req, sc_node_query_response *resp)
{
    if (resp->results) {
        for (size_t t = 0; t < req->n_targets; t++) {
            if (!resp->results[t].pinned)
                sc_shard_searcher_release(resp->results[t].snapshot);
            resp->results[t].snapshot = NULL;
        }
    }
    if (resp->shard_mem) {
        for (size_t t = 0; t < req->n_targets; t++)
            sc_arena_fini(&resp->shard_mem[t]);
        resp->shard_mem = NULL; /* the array itself is the request arena's */
    }
    resp->agg_partials = NULL;
    resp->top = NULL;
    resp->n_top = 0;
}

static sc_status copy_slice(sc_arena *a, sc_slice in, sc_slice *out)
{
    uint8_t *p = sc_arena_alloc(a, in.len ? in.len : 1);
    if (!p)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (in.len)
        memcpy(p, in.ptr, in.len);
    *out = sc_slice_make(p, in.len);
    return SC_OK;
}

/* Fetches one shard's winners: order[0..n) index req->docs, all of target t, in doc order. */
static sc_status fetch_shard(const sc_node_fetch_request *req, size_t t, const size_t *order,
                             size_t n, sc_arena *arena, sc_node_fetch_response *out)
{
    const sc_shard_snapshot *snap = req->query_resp->results[t].snapshot;
    if (!snap)
        return SC_OK;
    uint32_t *docs = sc_arena_alloc(arena, n * sizeof *docs);
    sc_shard_fetched *got = sc_arena_alloc(arena, n * sizeof *got);
    if (!docs || !got)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        docs[i] = req->docs[order[i]].doc;
    sc_shard_fetch_args fa = {.snapshot = snap,
                              .docs = docs,
                              .n_docs = n,
                              .source = req->source,
                              .fields = req->dv_fields,
                              .n_fields = req->n_dv_fields};
    const sc_search_request *sr = req->query->search;
    if (sr && sr->highlight)
        fa.highlight = sr->highlight[req->query->targets[t].index_i];
    fa.versions = sr && sr->versions;
    if (sr && sr->named) {
        fa.named = sr->named[req->query->targets[t].index_i].queries;
        fa.n_named = sr->named[req->query->targets[t].index_i].n;
        fa.inner = sr->named[req->query->targets[t].index_i].inner;
        fa.n_inner = sr->named[req->query->targets[t].index_i].n_inner;
    }
    if (sr && sr->explain) {
        fa.explain = (sr->explain_queries ? sr->explain_queries
                                          : sr->queries)[req->query->targets[t].index_i];
        fa.dfs = req->query->dfs;
    }
    SC_TRY(sc_shard_fetch_run(&fa, arena, got));
    for (size_t i = 0; i < n; i++)
        out->docs[order[i]] = got[i];
    return SC_OK;
}

sc_status sc_node_fetch_phase(sc_node *n, const sc_node_fetch_request *req, sc_arena *arena,
                              sc_node_fetch_response *out)
{
    (void)n;
    size_t nd = req->n_docs;
    out->docs = sc_arena_calloc(arena, nd ? nd : 1, sizeof *out->docs);
    size_t *order = sc_arena_alloc(arena, (nd ? nd : 1) * sizeof *order);
    if (!out->docs || !order)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    /* Fetch in (shard, doc) order, one shard's run at a time, so hits that share a compressed
     * block decompress it once; results land at their rank positions. */
    for (size_t i = 0; i < nd; i++)
        order[i] = i;
    for (size_t i = 1; i < nd; i++) { /* insertion sort: nd is from+size, small */
        size_t x = order[i], j = i;
        while (j > 0) {
            const sc_node_hit *a = &req->docs[order[j - 1]], *b = &req->docs[x];
            if (a->shard_ix < b->shard_ix || (a->shard_ix == b->shard_ix && a->doc <= b->doc))
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    for (size_t i = 0; i < nd;) {
        uint32_t shard_ix = req->docs[order[i]].shard_ix;
        size_t e = i;
        while (e < nd && req->docs[order[e]].shard_ix == shard_ix)
            e++;
        for (size_t t = 0; t < req->query->n_targets; t++)
            if (req->query->targets[t].shard_ix == shard_ix) {
                SC_TRY(fetch_shard(req, t, order + i, e - i, arena, out));
                break;
            }
        i = e;
    }
    return SC_OK;
}

/* The sort keys of a returned hit, copied into the arena with their keyword bytes (the
 * snapshots they point into are released before the response is written). */
sc_status sc__search_copy_keys(const sc_search_request *sr, const sc_sort_key *keys,
                               sc_arena *arena, const sc_sort_key **out)
{
    *out = NULL;
    if (!sr->n_sort || !keys)
        return SC_OK;
    sc_sort_key *k = sc_arena_alloc(arena, sr->n_sort * sizeof *k);
    if (!k)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    memcpy(k, keys, sr->n_sort * sizeof *k);
    for (size_t i = 0; i < sr->n_sort; i++)
        if (sr->sort[i].kind == SC_SORT_BY_KEYWORD && !k[i].missing)
            SC_TRY(copy_slice(arena, k[i].s, &k[i].s));
    *out = k;
    return SC_OK;
}

void sc__search_skipped_fixup(sc_search_response *out)
{
    /* Elasticsearch runs one shard when every shard was skipped, so that a response is built
     * from a real result; that shard provably matches nothing (and can_match never runs with
     * aggregations), so its result is the empty one we have: only the count differs. */
    if (out->shards_total && out->shards_skipped == out->shards_total)
        out->shards_skipped--;
}

bool sc__search_prefilter(const sc_search_request *sr, size_t n_targets)
{
    /* aggregations see every matching doc of the query without post_filter, and some (global,
     * min_doc_count 0) see more: never skipped */
    if (sr->collect)
        return false;
    if (sr->pre_filter_shard_size)
        return n_targets > sr->pre_filter_shard_size;
    bool field_sort = sr->n_sort && (sr->sort[0].kind == SC_SORT_BY_NUMERIC ||
                                     sr->sort[0].kind == SC_SORT_BY_KEYWORD);
    return n_targets > 128 || field_sort;
}

/* The target shards of the request in coordinator order (index, then shard number), with
 * ?routing / ?preference shard selection applied; *n_out of them. */
sc_status sc__search_build_targets(const sc_search_request *sr, sc_arena *arena,
                                   sc_shard_target **out, size_t *n_out)
{
    size_t nt = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        nt += sr->indices[i]->settings.number_of_shards;
    sc_shard_target *targets = sc_arena_alloc(arena, (nt ? nt : 1) * sizeof *targets);
    if (!targets)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t t = 0, pin = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        for (uint32_t s = 0; s < sr->indices[i]->settings.number_of_shards; s++, pin++) {
            const uint64_t *mask = sr->only_shards ? sr->only_shards[i] : NULL;
            if (mask && !(mask[s / 64] >> (s % 64) & 1))
                continue;
            targets[t] = (sc_shard_target){.index_i = (uint32_t)i,
                                           .shard = s,
                                           .shard_ix = (uint32_t)t,
                                           .pin_ix = (uint32_t)pin};
            t++;
        }
    *out = targets;
    *n_out = t;
    return SC_OK;
}

/* Final reduce of the shards' outcomes: failures, the summed total capped once more under
 * track_total_hits, timed_out. SC_ECANCELLED when a shard or the task was cancelled. */
sc_status sc__search_reduce_results(const sc_search_request *sr, const sc_node_query_request *qreq,
                                    const sc_node_query_response *qresp, const char *node_id,
                                    sc_arena *arena, sc_search_response *out)
{
    size_t nt = qreq->n_targets, n_fail = 0;
    out->shards_total = (uint32_t)nt;
    for (size_t i = 0; i < nt; i++)
        n_fail += qresp->results[i].st != SC_OK;
    out->failures = sc_arena_calloc(arena, n_fail ? n_fail : 1, sizeof *out->failures);
    if (!out->failures)
        return SC_ENOMEM;
    bool cancelled = false;
    for (size_t i = 0; i < nt; i++) {
        const sc_node_shard_result *r = &qresp->results[i];
        if (r->st != SC_OK) {
            cancelled |= r->st == SC_ECANCELLED;
            sc_shard_failure *f = &out->failures[out->n_failures++];
            f->index_i = qreq->targets[i].index_i;
            f->shard = qreq->targets[i].shard;
            f->node_id = node_id;
            f->err = r->err;
            out->shards_failed++;
            continue;
        }
        out->shards_successful++;
        out->shards_skipped += r->skipped;
        out->total += r->total;
        out->total_is_lower_bound |= r->total_is_lower_bound;
        out->timed_out |= r->timed_out;
        out->terminated_early |= r->terminated_early;
    }
    if (atomic_load_explicit(&qreq->token->fired, memory_order_relaxed) == 1 ||
        atomic_load_explicit(&qreq->token->cancelled, memory_order_relaxed))
        cancelled = true;
    if (cancelled) {
        out->cancelled = true;
        return SC_ECANCELLED;
    }
    sc__search_skipped_fixup(out);
    if (sr->profile) { /* copied: the shards' memory goes with the query response */
        out->profiles = sc_arena_calloc(arena, nt ? nt : 1, sizeof *out->profiles);
        if (!out->profiles)
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        for (size_t i = 0; i < nt; i++) {
            const sc_node_shard_result *r = &qresp->results[i];
            if (r->st != SC_OK || r->skipped || !r->profile)
                continue;
            sc_shard_profile *sp = &out->profiles[out->n_profiles++];
            sp->index_i = qreq->targets[i].index_i;
            sp->shard = qreq->targets[i].shard;
            struct sc_search_profile *copy;
            SC_TRY(sc_search_profile_copy(arena, r->profile, &copy));
            sp->profile = copy;
        }
    }
    /* The final reduce's cap (each shard's total was capped by the shard module). */
    sc_search_total_cap(sr->track_total_hits, &out->total, &out->total_is_lower_bound);
    out->agg_result = qresp->agg_reduced; /* one node: its reduction is the final one */
    out->num_reduce_phases = qresp->n_partial_reduces + 1;
    return SC_OK;
}

/* The fetch phase for the page [from, from + nh) of the node's top hits, into out->hits. */
sc_status sc__search_fetch_hits(sc_node *n, const sc_search_request *sr,
                                const sc_node_query_request *qreq,
                                const sc_node_query_response *qresp, size_t from, size_t nh,
                                sc_arena *arena, sc_search_response *out)
{
    sc_node_fetch_request freq = {.query = qreq,
                                  .query_resp = qresp,
                                  .docs = qresp->top + from,
                                  .n_docs = nh,
                                  .source = sr->fetch_source,
                                  .dv_fields = sr->dv_fields,
                                  .n_dv_fields = sr->n_dv_fields};
    sc_node_fetch_response fresp;
    uint64_t f0 = sc_clock_now_ns();
    SC_TRY(sc_node_fetch_phase(n, &freq, arena, &fresp));
    out->hits = sc_arena_alloc(arena, nh * sizeof *out->hits);
    if (!out->hits)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < nh; i++) {
        const sc_node_hit *d = &qresp->top[from + i];
        const sc_shard_fetched *f = &fresp.docs[i];
        out->hits[i] = (sc_result_hit){.index_i = qreq->targets[d->shard_ix].index_i,
                                       .shard = qreq->targets[d->shard_ix].shard,
                                       .score = d->score,
                                       .id = f->id,
                                       .source = f->source,
                                       .fields = f->fields,
                                       .n_fields = f->n_fields,
                                       .highlights = f->highlights,
                                       .n_highlights = f->n_highlights,
                                       .has_versions = f->has_versions,
                                       .version = f->version,
                                       .seq_no = f->seq_no,
                                       .primary_term = f->primary_term,
                                       .matched = f->matched,
                                       .n_matched = f->n_matched,
                                       .explanation = f->explanation,
                                       .inner = f->inner};
        SC_TRY(sc__search_copy_keys(sr, d->keys, arena, &out->hits[i].sort));
        if (sr->collapse && d->collapse_key) {
            sc_sort_key *ck = sc_arena_alloc(arena, sizeof *ck);
            if (!ck)
                return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
            *ck = *d->collapse_key;
            if (!sr->collapse->numeric && !ck->missing)
                SC_TRY(copy_slice(arena, ck->s, &ck->s));
            out->hits[i].collapse_key = ck;
        }
    }
    out->n_hits = nh;
    uint64_t fetch_ns = sc_clock_now_ns() - f0;
    for (size_t i = 0; i < sr->n_indices; i++) {
        atomic_fetch_add(&sr->indices[i]->n_fetch, 1);
        atomic_fetch_add(&sr->indices[i]->fetch_time_ns, fetch_ns / sr->n_indices);
    }
    return SC_OK;
}

static sc_status run_search(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                            sc_search_response *out);

sc_status sc_search_run(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                        sc_search_response *out)
{
    if (sc_node_placement(n) && sr->n_knn_global && !sr->n_rrf && !sr->pinned) {
        /* hybrid across nodes: the global kNN phase of the data nodes, then the search with
         * the clauses' floors */
        float *floors;
        SC_TRY(sc__search_knn_global_dist(n, sr, arena, &floors));
        sc_search_request s = *sr;
        s.knn_floor = floors;
        return run_search(n, &s, arena, out);
    }
    if (!sr->n_knn_global || sr->n_rrf || sc_node_placement(n))
        return run_search(n, sr, arena, out);
    /* hybrid: the global kNN phase, then the search, on the same pinned snapshots */
    const sc_shard_snapshot **own = NULL;
    size_t n_pins = 0;
    if (!sr->pinned)
        SC_TRY(sc__search_pin_all(sr, &own, &n_pins));
    sc_search_request s = *sr;
    s.pinned = sr->pinned ? sr->pinned : own;
    s.n_knn_global = 0;
    sc_status st = sc__search_knn_global(n, sr, s.pinned, arena);
    if (st == SC_OK)
        st = run_search(n, &s, arena, out);
    for (size_t p = 0; p < n_pins; p++)
        if (own[p])
            sc_shard_searcher_release(own[p]);
    free(own);
    return st;
}

static sc_status run_search(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                            sc_search_response *out)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    sc_shard_target *targets;
    size_t nt;
    if (sr->n_rrf)
        return sc_node_placement(n) && !sr->pinned ? sc__search_run_rrf_dist(n, sr, arena, out)
                                                   : sc__search_run_rrf(n, sr, arena, out);
    SC_TRY(sc__search_build_targets(sr, arena, &targets, &nt));
    uint64_t k = sr->count_only ? 0 : (uint64_t)sr->from + sr->size;
    uint64_t deadline =
        sr->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)sr->timeout_ms * 1000000 : 0;
    sc_cancel_token local_token;
    bool can_match = sc__search_prefilter(sr, nt);
    sc_cancel_token *token = sr->task ? &sr->task->token : &local_token;
    if (sr->task)
        token->deadline_ns = deadline;
    else
        sc_cancel_token_init(&local_token, deadline);
    /* Clustered: shards live on several nodes (search_dist.c). A scroll pins this node's
     * snapshots and stays local. */
    if (sr->ctx && sc_node_placement(n)) /* through the data nodes' contexts */
        return sc__search_run_ctx(n, sr, targets, nt, deadline, token, arena, out);
    bool dist = sc_node_placement(n) && !sr->pinned;
    sc_term_stats dfs_stats;
    const sc_term_stats *dfs = NULL;
    if (sr->dfs && !sr->count_only) {
        /* dfs_query_then_fetch: every shard scores with the whole search's statistics */
        SC_TRY(dist ? sc__search_dfs_dist(n, sr, targets, nt, arena, &dfs_stats)
                    : sc_search_dfs_node(n, sr, targets, nt, arena, &dfs_stats));
        dfs = &dfs_stats;
    }
    if (dist)
        return sc__search_run_dist(n, sr, targets, nt, (uint32_t)k, deadline, token, can_match, dfs,
                                   arena, out);
    sc_node_query_request qreq = {
        .search = sr,
        .targets = targets,
        .n_targets = nt,
        .k = (uint32_t)k,
        .deadline_ns = deadline,
        .token = token,
        .collect = sr->collect,
        .can_match = can_match,
        .dfs = dfs,
    };
    sc_node_query_response qresp;
    sc_status st = sc_node_query_phase(n, &qreq, arena, &qresp);
    if (st == SC_OK)
        st = sc__search_reduce_results(sr, &qreq, &qresp, sc_node_id(n), arena, out);
    if (st == SC_OK) {
        /* Final reduce of the hits (one node: its partial result is already the global
         * order), then the page's fetch. */
        if (sr->knn_cap && !sr->n_sort) {
            /* a kNN-only search: the global top k of the shards' top k (each shard's top k
             * holds its part of the global top k), as Elasticsearch's kNN phase */
            if (qresp.n_top > sr->knn_cap)
                qresp.n_top = sr->knn_cap;
            if (out->total > sr->knn_cap) {
                out->total = sr->knn_cap;
                out->total_is_lower_bound = false;
            }
        }
        size_t from = sr->from < qresp.n_top ? sr->from : qresp.n_top;
        size_t nh = qresp.n_top - from;
        if (nh > sr->size)
            nh = sr->size;
        if (qresp.n_top && !sr->n_sort)
            out->max_score = qresp.top[0].score;
        for (size_t t = 0; sr->n_sort && sr->track_scores && t < qreq.n_targets; t++) {
            float m = qresp.results[t].max_score;
            if (qresp.results[t].st == SC_OK && !qresp.results[t].skipped && !isnan(m) &&
                (isnan(out->max_score) || m > out->max_score))
                out->max_score = m;
        }
        if (nh > 0)
            st = sc__search_fetch_hits(n, sr, &qreq, &qresp, from, nh, arena, out);
    }
    sc_node_query_release(&qreq, &qresp);
    return st;
}
