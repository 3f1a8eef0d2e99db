/* Clustered scroll and point in time, the coordinator (search_ctx.h). A page groups its targets
 * by the data-node context that holds them (or, for a scroll's first page, by the node of each
 * shard's first searchable copy), sends one SC_MSG_CTX_QUERY per context concurrently, then
 * runs the distributed final reduce and fetch (search_dist_reduce.c). A scroll page asks every
 * shard for its next `size` hits after the ones it already returned (each shard's order is
 * fixed by its pinned snapshot), so the merged first `size` are exactly the next page of the
 * whole order; each shard's position then advances by its hits on the page. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/search_ctx.h"
#include "cluster/search_dist.h"
#include "cluster/search_wire.h"

#define CTX_TIMEOUT_MS 30000
#define FREE_TIMEOUT_MS 5000
/* Copies a shard may try when its context is opened (the first one, then retries). */
#define OPEN_COPIES 4

/* One request: the targets of one data-node context. */
typedef struct ctx_unit {
    sc__dist_unit u;
    uint64_t seq;       /* 0: open */
    bool failed_before; /* the shards' contexts could not be opened: fail without sending */
    uint64_t got_seq;   /* the context that answered */
} ctx_unit;

typedef struct ctx_run {
    sc_node *node;
    const sc_search_request *sr;
    sc_scroll *ctx;
    sc_transport *t;
    ctx_unit *units; /* every round's, rounds one after another */
    size_t n_units, round_start;
    uint32_t *attempt; /* per pin_ix: the copy a shard's context is being opened on */
    uint8_t flags;    /* SC_CTX_* for the units that open */
    bool scroll_page; /* skips from each shard's position */
    uint32_t k;
    uint64_t deadline_ns;
    char parent[64];
    sc__dist_breaker *br;
    pthread_mutex_t mu;
    size_t next;
} ctx_run;

static void fail(sc__dist_unit *u, int status, const char *type, const char *reason)
{
    u->st = SC_EIO;
    u->fail_status = status;
    snprintf(u->fail_type, sizeof u->fail_type, "%s", type);
    snprintf(u->fail_reason, sizeof u->fail_reason, "%s", reason);
}

/* The index-order ordinal of every shard of the context's indices (pin_ix) -> index name. */
static const char *index_of(const sc_search_request *sr, uint32_t index_i)
{
    return sr->indices[index_i]->name;
}

static void run_one(ctx_run *r, ctx_unit *cu)
{
    sc__dist_unit *u = &cu->u;
    if (cu->failed_before)
        return; /* u->st and the reason were set when grouping */
    if (!u->port) {
        char reason[256];
        snprintf(reason, sizeof reason, "[%s] node is not in the cluster", u->node_id);
        fail(u, 503, "node_not_connected_exception", reason);
        u->node_failed = true;
        return;
    }
    const sc_search_request *sr = r->sr;
    int64_t left = -1;
    if (sr->timeout_ms >= 0) {
        uint64_t now = sc_clock_now_ns();
        left = r->deadline_ns > now ? (int64_t)((r->deadline_ns - now) / 1000000u) : 0;
    }
    sc_wire_buf inner, b;
    sc_wire_buf_init(&inner);
    sc_wire_buf_init(&b);
    sc_status st = sc__dist_encode_query(sr, u->targets, u->n_targets, r->k, false, NULL, left,
                                         r->parent[0] ? r->parent : NULL, &inner);
    uint64_t *skip = NULL;
    if (st == SC_OK && r->scroll_page && cu->seq) {
        skip = calloc(u->n_targets, sizeof *skip);
        if (!skip)
            st = SC_ENOMEM;
        for (size_t t = 0; skip && t < u->n_targets; t++)
            skip[t] = r->ctx->shards[u->targets[t].pin_ix].consumed;
    }
    sc_ctx_query cq = {.flags = cu->seq ? (uint8_t)(r->flags & SC_CTX_PIT) : r->flags,
                       .seq = cu->seq,
                       .keep_alive_ms = (uint64_t)r->ctx->keep_alive_ms,
                       .page_size = sr->size,
                       .skip = skip,
                       .n_skip = skip ? u->n_targets : 0,
                       .node_query = sc_slice_make(inner.ptr, inner.len)};
    if (st == SC_OK)
        st = sc_ctx_query_encode(&cq, &b);
    free(skip);
    sc_wire_buf_fini(&inner);
    if (st != SC_OK) {
        sc_wire_buf_fini(&b);
        fail(u, 500, "exception", "cannot encode the search context request");
        return;
    }
    uint32_t tmo = left >= 0 ? (uint32_t)left + 1000 : CTX_TIMEOUT_MS;
    uint8_t *resp = NULL;
    size_t len = 0;
    sc_transport_error err;
    memset(&err, 0, sizeof err);
    st = sc_transport_request(r->t, u->host, u->port, SC_MSG_CTX_QUERY, sc_slice_make(b.ptr, b.len),
                              tmo, &resp, &len, &err);
    sc_wire_buf_fini(&b);
    u->sent = true;
    u->resp_bytes = resp; /* the decoded hits borrow it */
    sc_ctx_query_resp cr;
    if (st == SC_OK && (st = sc_ctx_query_resp_decode(resp, len, &cr)) == SC_OK) {
        cu->got_seq = cr.seq;
        if (r->flags & SC_CTX_OPEN_ONLY)
            return;
        st = sc__dist_take_answer(sr, u, cr.node_query_resp.ptr, cr.node_query_resp.len);
        if (st == SC_OK) {
            (void)sc__dist_breaker_add(r->br, len + u->mem.used_bytes);
            return;
        }
    }
    char reason[600];
    if (st == SC_ENOTFOUND && err.remote) {
        snprintf(reason, sizeof reason, "[%s] %s", u->node_id, err.message);
        fail(u, 404, "search_context_missing_exception", reason);
        return;
    }
    snprintf(reason, sizeof reason, "[%s][%s:%u] %s", u->node_id, u->host, u->port,
             err.message[0] ? err.message : sc_status_str(st));
    if (err.remote)
        fail(u, 500, "remote_transport_exception", reason);
    else if (st == SC_ETIMEOUT)
        fail(u, 504, "receive_timeout_transport_exception", reason);
    else
        fail(u, 503, "node_not_connected_exception", reason);
    u->node_failed = !err.remote;
}

static void *sender(void *arg)
{
    ctx_run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t i = r->next++;
        pthread_mutex_unlock(&r->mu);
        if (i >= r->n_units)
            return NULL;
        run_one(r, &r->units[i]);
    }
}

/* Every unit at once (at most 8 threads, the calling one included). */
static void run_all(ctx_run *r)
{
    pthread_t th[7];
    size_t n_th = 0;
    for (size_t i = r->next + 1; i < r->n_units && n_th < 7; i++)
        if (pthread_create(&th[n_th], NULL, sender, r) == 0)
            n_th++;
    sender(r);
    for (size_t i = 0; i < n_th; i++)
        pthread_join(th[i], NULL);
}

/* The unit for (node, seq), created when new; NULL on ENOMEM. */
static ctx_unit *unit_for(ctx_run *r, const sc_placement_snapshot *snap, const char *node,
                          uint64_t seq, size_t cap)
{
    for (size_t i = r->round_start; i < r->n_units; i++)
        if (!r->units[i].failed_before && r->units[i].seq == seq &&
            !strcmp(r->units[i].u.node_id, node))
            return &r->units[i];
    ctx_unit *cu = &r->units[r->n_units++];
    cu->seq = seq;
    cu->u.assigned = true;
    snprintf(cu->u.node_id, sizeof cu->u.node_id, "%s", node);
    if (!sc_placement_addr(snap, node, cu->u.host, sizeof cu->u.host, &cu->u.port))
        cu->u.port = 0;
    sc_arena_init(&cu->u.mem, 0);
    sc_arena_init(&cu->u.agg_mem, 0);
    cu->u.targets = sc_arena_calloc(&cu->u.mem, cap ? cap : 1, sizeof *cu->u.targets);
    cu->u.results = sc_arena_calloc(&cu->u.mem, cap ? cap : 1, sizeof *cu->u.results);
    return cu->u.targets && cu->u.results ? cu : NULL;
}

/* Groups the targets: a shard with a context goes to it; one without (a scroll's first page, a
 * point in time being opened) to its first searchable copy's node, to open one there. */
static sc_status group(ctx_run *r, const sc_placement_snapshot *snap,
                       const sc_shard_target *targets, size_t nt)
{
    /* a unit per target at most in a round; at most OPEN_COPIES rounds */
    r->units = calloc(nt ? nt * OPEN_COPIES : 1, sizeof *r->units);
    r->attempt = calloc(r->ctx->n_pinned + 1, sizeof *r->attempt);
    if (!r->units || !r->attempt)
        return SC_ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        const sc_shard_target *tg = &targets[t];
        sc_scroll_shard *sh = &r->ctx->shards[tg->pin_ix];
        ctx_unit *cu;
        if (sh->opened && sh->failed) {
            cu = &r->units[r->n_units++];
            cu->failed_before = true;
            sc_arena_init(&cu->u.mem, 0);
            sc_arena_init(&cu->u.agg_mem, 0);
            cu->u.targets = sc_arena_calloc(&cu->u.mem, 1, sizeof *cu->u.targets);
            cu->u.results = sc_arena_calloc(&cu->u.mem, 1, sizeof *cu->u.results);
            if (!cu->u.targets || !cu->u.results)
                return SC_ENOMEM;
            snprintf(cu->u.node_id, sizeof cu->u.node_id, "%s", sh->node);
            fail(&cu->u, sh->fail_status, sh->fail_type, sh->fail_reason);
        } else if (sh->opened) {
            cu = unit_for(r, snap, sh->node, sh->seq, nt);
        } else {
            sc_shard_location loc;
            if (!sc_placement_copy(snap, index_of(r->sr, tg->index_i), tg->shard, 0, &loc)) {
                cu = &r->units[r->n_units++];
                cu->failed_before = true;
                sc_arena_init(&cu->u.mem, 0);
                sc_arena_init(&cu->u.agg_mem, 0);
                cu->u.targets = sc_arena_calloc(&cu->u.mem, 1, sizeof *cu->u.targets);
                cu->u.results = sc_arena_calloc(&cu->u.mem, 1, sizeof *cu->u.results);
                if (!cu->u.targets || !cu->u.results)
                    return SC_ENOMEM;
                fail(&cu->u, 503, "no_shard_available_action_exception",
                     "no active copy of the shard");
            } else {
                cu = unit_for(r, snap, loc.node_id, 0, nt);
            }
        }
        if (!cu || !cu->u.targets)
            return SC_ENOMEM;
        cu->u.targets[cu->u.n_targets++] = *tg;
    }
    return SC_OK;
}

static bool node_failed(const ctx_run *r, const char *node)
{
    for (size_t i = 0; i < r->n_units; i++)
        if (r->units[i].u.node_failed && !strcmp(r->units[i].u.node_id, node))
            return true;
    return false;
}

/* After a round: the shards of opening units whose node could not be reached move to their
 * next copy on a node that did not fail (as Elasticsearch moves a shard's first phase to its
 * next copy), grouped into the next round's units; the failed entries are superseded. Contexts
 * that exist are never moved: they hold their copy's snapshot. *n_next targets moved. */
static sc_status plan_retry(ctx_run *r, const sc_placement_snapshot *snap, size_t nt,
                            size_t *n_next)
{
    size_t r0 = r->round_start, r1 = r->n_units;
    r->round_start = r1;
    *n_next = 0;
    for (size_t u = r0; u < r1; u++) {
        ctx_unit *cu = &r->units[u];
        if (cu->seq || cu->failed_before || cu->u.st == SC_OK || !cu->u.node_failed)
            continue;
        for (size_t t = 0; t < cu->u.n_targets; t++) {
            const sc_shard_target *tg = &cu->u.targets[t];
            sc_shard_location loc;
            bool found = false;
            while (!found && ++r->attempt[tg->pin_ix] < OPEN_COPIES &&
                   sc_placement_copy(snap, index_of(r->sr, tg->index_i), tg->shard,
                                     r->attempt[tg->pin_ix], &loc))
                found = !node_failed(r, loc.node_id);
            if (!found)
                continue;
            if (!cu->u.superseded &&
                !(cu->u.superseded = sc_arena_calloc(&cu->u.mem, cu->u.n_targets, sizeof(bool))))
                return SC_ENOMEM;
            ctx_unit *nu = unit_for(r, snap, loc.node_id, 0, nt);
            if (!nu || !nu->u.targets)
                return SC_ENOMEM;
            cu->u.superseded[t] = true;
            nu->u.targets[nu->u.n_targets++] = *tg;
            ++*n_next;
        }
    }
    if (*n_next)
        sc_log(SC_LOG_DEBUG, "search", "%zu shards' contexts retried on another copy", *n_next);
    return SC_OK;
}

/* After the units ran: the shards whose contexts were opened (or failed to) are recorded, and
 * the id is rebuilt when anything was opened. */
static sc_status record_opened(ctx_run *r)
{
    sc_scroll *ctx = r->ctx;
    bool any = false;
    for (size_t i = 0; i < r->n_units; i++) {
        ctx_unit *cu = &r->units[i];
        if (cu->seq || cu->failed_before)
            continue;
        any = true;
        for (size_t t = 0; t < cu->u.n_targets; t++) {
            if (cu->u.superseded && cu->u.superseded[t])
                continue; /* a later unit opened it on another copy (or failed there) */
            sc_scroll_shard *sh = &ctx->shards[cu->u.targets[t].pin_ix];
            sh->opened = true;
            snprintf(sh->node, sizeof sh->node, "%s", cu->u.node_id);
            bool ok = cu->u.st == SC_OK && cu->got_seq &&
                      ((r->flags & SC_CTX_OPEN_ONLY) || cu->u.results[t].st == SC_OK);
            sh->failed = !ok;
            sh->seq = ok ? cu->got_seq : 0;
            if (ok)
                continue;
            const sc_node_shard_result *res = &cu->u.results[t];
            bool unit_failed = cu->u.st != SC_OK || !cu->got_seq;
            sh->fail_status = unit_failed ? cu->u.fail_status : res->err.status;
            snprintf(sh->fail_type, sizeof sh->fail_type, "%s",
                     unit_failed     ? cu->u.fail_type
                     : res->err.type ? res->err.type
                                     : "exception");
            snprintf(sh->fail_reason, sizeof sh->fail_reason, "%s",
                     unit_failed ? cu->u.fail_reason : res->err.reason);
        }
    }
    if (!any)
        return SC_OK;
    /* the id: the coordinator's context, then each distinct data-node context */
    sc_ctx_id_entry *e = calloc(ctx->n_pinned + 1, sizeof *e);
    if (!e)
        return SC_ENOMEM;
    size_t ne = 0;
    for (size_t p = 0; p < ctx->n_pinned; p++) {
        const sc_scroll_shard *sh = &ctx->shards[p];
        if (!sh->opened || sh->failed)
            continue;
        bool seen = false;
        for (size_t j = 0; j < ne && !seen; j++)
            seen = e[j].seq == sh->seq && e[j].node.len == strlen(sh->node) &&
                   !memcmp(e[j].node.ptr, sh->node, e[j].node.len);
        if (!seen)
            e[ne++] = (sc_ctx_id_entry){sc_slice_cstr(sh->node), sh->seq};
    }
    sc_ctx_id id = {.pit = ctx->pit,
                    .coordinator = sc_slice_cstr(sc_node_id(r->node)),
                    .coordinator_seq = ctx->seq,
                    .entries = e,
                    .n = ne};
    char *text = sc_ctx_id_text(&id);
    free(e);
    if (!text)
        return SC_ENOMEM;
    free(ctx->wire_id);
    ctx->wire_id = text;
    return SC_OK;
}

static void units_free(ctx_run *r)
{
    for (size_t i = 0; i < r->n_units; i++) {
        free(r->units[i].u.resp_bytes);
        sc_arena_fini(&r->units[i].u.mem);
        sc_arena_fini(&r->units[i].u.agg_mem); /* a decoded aggregation partial */
    }
    free(r->units);
    free(r->attempt);
}

/* Runs the units of r (grouped from targets) and records what was opened. */
static sc_status run_ctx(ctx_run *r, const sc_shard_target *targets, size_t nt)
{
    sc_placement *p = sc_node_placement(r->node);
    sc_placement_snapshot *snap = sc_placement_acquire(p);
    r->t = sc_placement_transport(p);
    pthread_mutex_init(&r->mu, NULL);
    sc_status st = group(r, snap, targets, nt);
    /* each round after the first retries the shards whose node could not be reached */
    for (size_t n_next = 1; st == SC_OK && n_next;) {
        r->next = r->round_start;
        run_all(r);
        st = plan_retry(r, snap, nt, &n_next);
    }
    sc_placement_release(snap);
    pthread_mutex_destroy(&r->mu);
    if (st == SC_OK)
        st = record_opened(r);
    return st;
}

sc_status sc__search_run_ctx(sc_node *n, const sc_search_request *sr,
                             const sc_shard_target *targets, size_t nt, uint64_t deadline_ns,
                             sc_cancel_token *token, sc_arena *arena, sc_search_response *out)
{
    sc_scroll *ctx = sr->ctx;
    if (!ctx->shards)
        return SC_EINVAL;
    sc__dist_breaker br = {.node = n};
    /* A scroll page is the next `size` hits: each shard is asked for its next `size` after its
     * position, and the page is the first `size` of their merge. */
    sc_search_request page = *sr;
    if (!ctx->pit)
        page.from = 0;
    ctx_run r = {.node = n,
                 .sr = &page,
                 .ctx = ctx,
                 .flags = SC_CTX_OPEN | (ctx->pit ? SC_CTX_PIT : 0),
                 .scroll_page = !ctx->pit,
                 .k = sr->count_only ? 0 : page.from + page.size,
                 .deadline_ns = deadline_ns,
                 .br = &br};
    if (sr->task)
        sc_task_id_str(n, sr->task, r.parent, sizeof r.parent);
    sc_status st = run_ctx(&r, targets, nt);
    sc__dist_unit *units = NULL;
    if (st == SC_OK && !(units = calloc(r.n_units ? r.n_units : 1, sizeof *units)))
        st = SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < r.n_units; i++)
        units[i] = r.units[i].u;
    sc__partial nofold = {0}; /* a context's pages are not folded (batched_reduce_size) */
    if (st == SC_OK && !atomic_load(&br.tripped))
        st = sc__dist_reduce(n, &page, units, r.n_units, &nofold, r.t, token, &br, NULL, arena,
                             out);
    else if (st == SC_OK)
        st = SC_ELIMIT;
    if (st == SC_OK && !ctx->pit) {
        /* each shard's position moves past its hits on the page */
        for (size_t h = 0; h < out->n_hits; h++) {
            size_t pin = out->hits[h].shard;
            for (uint32_t i = 0; i < out->hits[h].index_i; i++)
                pin += sr->indices[i]->settings.number_of_shards;
            if (pin < ctx->n_pinned)
                ctx->shards[pin].consumed++;
        }
    }
    if (atomic_load(&br.tripped)) {
        sc_breaker_stats bs;
        sc_breakers_get(n, &bs);
        out->breaker_wanted = atomic_load(&br.wanted);
        out->breaker_limit = bs.request_limit;
    }
    free(units);
    units_free(&r);
    sc_breaker_release(n, atomic_load(&br.reserved));
    return st;
}

sc_status sc_search_ctx_open_pit(sc_node *n, sc_scroll *ctx, uint32_t *n_ok, uint32_t *n_failed)
{
    *n_ok = *n_failed = 0;
    if (!ctx->shards)
        return SC_EINVAL;
    size_t nt = ctx->n_pinned;
    sc_shard_target *targets = calloc(nt ? nt : 1, sizeof *targets);
    if (!targets)
        return SC_ENOMEM;
    size_t t = 0;
    for (size_t i = 0; i < ctx->n_indices; i++)
        for (uint32_t s = 0; s < ctx->indices[i]->settings.number_of_shards && t < nt; s++, t++)
            targets[t] = (sc_shard_target){
                .index_i = (uint32_t)i, .shard = s, .shard_ix = (uint32_t)t, .pin_ix = (uint32_t)t};
    /* the node query only carries the indices and targets: nothing runs */
    sc_search_request sr = {.indices = ctx->indices,
                            .n_indices = ctx->n_indices,
                            .timeout_ms = -1,
                            .track_total_hits = 0};
    sc__dist_breaker br = {.node = n};
    ctx_run r = {.node = n,
                 .sr = &sr,
                 .ctx = ctx,
                 .flags = SC_CTX_OPEN | SC_CTX_PIT | SC_CTX_OPEN_ONLY,
                 .br = &br};
    sc_status st = run_ctx(&r, targets, t);
    for (size_t p = 0; st == SC_OK && p < nt; p++) {
        if (ctx->shards[p].failed)
            ++*n_failed;
        else
            ++*n_ok;
    }
    units_free(&r);
    free(targets);
    return st;
}

bool sc_search_ctx_node_addr(sc_node *n, const char *node_id, char *host, size_t cap,
                             uint16_t *port)
{
    sc_placement *p = sc_node_placement(n);
    if (!p)
        return false;
    sc_placement_snapshot *snap = sc_placement_acquire(p);
    bool ok = sc_placement_addr(snap, node_id, host, cap, port);
    sc_placement_release(snap);
    return ok;
}

/* Sends one free message to node_id (this node: directly); adds the contexts and shards it
 * freed. */
static void free_on(sc_node *n, const char *node_id, const sc_ctx_free *f, size_t *contexts,
                    size_t *shards)
{
    if (!strcmp(node_id, sc_node_id(n))) {
        size_t s = 0;
        if (f->all_scrolls)
            *contexts += sc_scroll_clear_ex(n, NULL, true, &s), *shards += s;
        for (size_t i = 0; i < f->n; i++) {
            char id[96];
            sc_scroll_id_of(n, f->seq[i], id, sizeof id);
            s = 0;
            *contexts += sc_scroll_clear_ex(n, id, false, &s);
            *shards += s;
        }
        return;
    }
    char host[128];
    uint16_t port;
    if (!sc_search_ctx_node_addr(n, node_id, host, sizeof host, &port))
        return;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    uint8_t *resp = NULL;
    size_t len = 0;
    if (sc_ctx_free_encode(f, &b) == SC_OK &&
        sc_transport_request(sc_placement_transport(sc_node_placement(n)), host, port,
                             SC_MSG_CTX_FREE, sc_slice_make(b.ptr, b.len), FREE_TIMEOUT_MS, &resp,
                             &len, NULL) == SC_OK) {
        sc_wire_reader rd;
        sc_wire_reader_init(&rd, resp, len);
        uint64_t c = sc_wire_get_uvar(&rd), s = sc_wire_get_uvar(&rd);
        if (sc_wire_reader_finish(&rd) == SC_OK) {
            *contexts += (size_t)c;
            *shards += (size_t)s;
        }
    }
    free(resp);
    sc_wire_buf_fini(&b);
}

size_t sc_search_ctx_free(sc_node *n, const sc_ctx_id *id)
{
    size_t contexts = 0, shards = 0;
    char node[64];
    snprintf(node, sizeof node, "%.*s", (int)id->coordinator.len,
             (const char *)id->coordinator.ptr);
    sc_ctx_free f = {.seq = &id->coordinator_seq, .n = 1};
    free_on(n, node, &f, &contexts, &shards);
    bool coordinator_freed = contexts > 0;
    /* each node's contexts in one message */
    uint64_t *seqs = calloc(id->n + 1, sizeof *seqs);
    bool *done = calloc(id->n + 1, sizeof *done);
    for (size_t i = 0; seqs && done && i < id->n; i++) {
        if (done[i])
            continue;
        size_t k = 0;
        for (size_t j = i; j < id->n; j++)
            if (!done[j] && id->entries[j].node.len == id->entries[i].node.len &&
                !memcmp(id->entries[j].node.ptr, id->entries[i].node.ptr,
                        id->entries[i].node.len)) {
                seqs[k++] = id->entries[j].seq;
                done[j] = true;
            }
        snprintf(node, sizeof node, "%.*s", (int)id->entries[i].node.len,
                 (const char *)id->entries[i].node.ptr);
        f = (sc_ctx_free){.seq = seqs, .n = k};
        size_t c = 0;
        free_on(n, node, &f, &c, &shards);
    }
    free(seqs);
    free(done);
    return shards ? shards : coordinator_freed;
}

size_t sc_search_ctx_free_all(sc_node *n)
{
    sc_cluster_view v;
    size_t contexts = 0, shards = 0;
    sc_ctx_free f = {.all_scrolls = true};
    if (sc_node_cluster_view(n, &v) != SC_OK) {
        free_on(n, sc_node_id(n), &f, &contexts, &shards);
        return shards + contexts;
    }
    for (size_t i = 0; i < v.n_nodes; i++)
        free_on(n, v.nodes[i].id, &f, &contexts, &shards);
    sc_cluster_view_fini(&v);
    return shards ? shards : contexts;
}
