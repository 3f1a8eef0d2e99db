/* The distributed coordinator's final reduce and fetch phase (search_dist.h): merges the units'
 * shard outcomes, partially reduced top hits and aggregation partials, then fetches the page's
 * winners with one request per node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/log.h"
#include "cluster/search_dist.h"
#include "cluster/search_wire.h"

/* A merged hit and the unit it came from (the hit first: the comparators take sc_node_hit). */
typedef struct ranked {
    sc_node_hit h;
    size_t unit;
} ranked;

static sc_status add_failure(const sc_shard_target *tg, int status, const char *type,
                             const char *reason, sc_arena *arena, sc_search_response *out)
{
    sc_shard_failure *f = &out->failures[out->n_failures++];
    f->index_i = tg->index_i;
    f->shard = tg->shard;
    memset(&f->err, 0, sizeof f->err);
    f->err.status = status ? status : 500;
    f->err.type =
        sc_arena_strndup(arena, type ? type : "exception", strlen(type ? type : "exception"));
    snprintf(f->err.reason, sizeof f->err.reason, "%s", reason);
    out->shards_failed++;
    return f->err.type ? SC_OK : SC_ENOMEM;
}

/* Failures, totals, timed_out. */
static sc_status reduce_shards(const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                               sc_cancel_token *token, sc_arena *arena, sc_search_response *out)
{
    size_t nt = 0; /* every target once: its last attempt */
    for (size_t u = 0; u < nu; u++)
        for (size_t t = 0; t < units[u].n_targets; t++)
            nt += !(units[u].superseded && units[u].superseded[t]);
    out->shards_total = (uint32_t)nt;
    out->failures = sc_arena_calloc(arena, nt ? nt : 1, sizeof *out->failures);
    if (!out->failures)
        return SC_ENOMEM;
    bool cancelled = false;
    for (size_t u = 0; u < nu; u++) {
        const sc__dist_unit *x = &units[u];
        out->query_requests += x->sent;
        for (size_t t = 0; t < x->n_targets; t++) {
            if (x->superseded && x->superseded[t])
                continue; /* retried on another copy */
            if (x->st != SC_OK) {
                SC_TRY(add_failure(&x->targets[t], x->fail_status, x->fail_type, x->fail_reason,
                                   arena, out));
                continue;
            }
            const sc_node_shard_result *r = &x->results[t];
            if (r->st != SC_OK) {
                cancelled |= r->st == SC_ECANCELLED;
                SC_TRY(add_failure(&x->targets[t], r->err.status, r->err.type, r->err.reason, arena,
                                   out));
                continue;
            }
            out->shards_successful++;
            out->shards_skipped += r->skipped;
            out->total += r->total;
            out->total_is_lower_bound |= r->total_is_lower_bound;
            out->timed_out |= r->timed_out;
        }
    }
    if (atomic_load_explicit(&token->fired, memory_order_relaxed) == 1 ||
        atomic_load_explicit(&token->cancelled, memory_order_relaxed))
        cancelled = true;
    if (cancelled) {
        out->cancelled = true;
        return SC_ECANCELLED;
    }
    sc__search_skipped_fixup(out);
    sc_search_total_cap(sr->track_total_hits, &out->total, &out->total_is_lower_bound);
    return SC_OK;
}

static sc_status reduce_aggs(const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                             const sc__partial *fold, sc__dist_breaker *br, sc_arena *arena,
                             sc_search_response *out)
{
    const sc_shard_collect_hook *h = sr->collect;
    if (!h || !h->reduce)
        return SC_OK;
    void **partials = sc_arena_calloc(arena, nu + 1, sizeof *partials);
    if (!partials)
        return SC_ENOMEM;
    partials[0] = fold->agg; /* the first units, folded as they arrived (in unit order) */
    for (size_t u = 0; u < nu; u++)
        partials[u + 1] = units[u].st == SC_OK ? units[u].agg : NULL;
    sc_shard_search_error err;
    memset(&err, 0, sizeof err);
    size_t before = arena->used_bytes;
    sc_status st = h->reduce(h->ctx, partials, nu + 1, arena, &out->agg_result, &err);
    /* the final reduce's memory joins the units' on the breaker */
    if (st == SC_OK && arena->used_bytes > before &&
        !sc__dist_breaker_add(br, arena->used_bytes - before))
        return SC_ELIMIT;
    if (st != SC_OK)
        sc_log(SC_LOG_WARN, "search", "aggregation reduce failed: %s",
               err.reason[0] ? err.reason : sc_status_str(st));
    return st;
}

/* Every unit's top hits in the final order. */
static sc_status merge_top(const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                           const sc__partial *fold, ranked **out, size_t *n_out)
{
    size_t all = fold->n_top;
    for (size_t u = 0; u < nu; u++)
        all += units[u].st == SC_OK ? units[u].n_top : 0;
    ranked *m = malloc((all ? all : 1) * sizeof *m);
    if (!m)
        return SC_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < fold->n_top; i++)
        m[k++] = (ranked){fold->top[i], fold->tags[i]};
    for (size_t u = 0; u < nu; u++)
        for (size_t i = 0; units[u].st == SC_OK && i < units[u].n_top; i++)
            m[k++] = (ranked){units[u].top[i], u};
    if (sr->n_sort)
        qsort_r(m, all, sizeof *m, sc__search_cmp_sorted, (void *)sr);
    else
        qsort(m, all, sizeof *m, sc__search_cmp_score);
    *out = m;
    *n_out = all;
    return SC_OK;
}

/* Fetches a remote unit's winners (docs, in page order) into got (arena). */
static sc_status fetch_remote(const sc_search_request *sr, const sc__dist_unit *u,
                              const sc_node_hit *docs, size_t nd, sc_transport *t, sc_arena *arena,
                              sc_shard_fetched **got)
{
    sc_slice *fields = sc_arena_calloc(arena, sr->n_dv_fields + 1, sizeof *fields);
    if (!fields)
        return SC_ENOMEM;
    for (size_t i = 0; i < sr->n_dv_fields; i++)
        fields[i] = sc_slice_cstr(sr->dv_fields[i]);
    sc_wire_node_fetch f = {.context_id = u->context_id,
                            .docs = docs,
                            .n_docs = nd,
                            .source = sr->fetch_source,
                            .dv_fields = fields,
                            .n_dv_fields = sr->n_dv_fields};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status st = sc_wire_node_fetch_encode(&f, &b);
    uint8_t *resp = NULL;
    size_t len = 0;
    if (st == SC_OK)
        st = sc_transport_request(t, u->host, u->port, SC_MSG_NODE_FETCH,
                                  sc_slice_make(b.ptr, b.len), 30000, &resp, &len, NULL);
    sc_wire_buf_fini(&b);
    /* the fetched bytes must outlive the units: decode from a copy in the request arena */
    uint8_t *copy = st == SC_OK ? sc_arena_alloc(arena, len ? len : 1) : NULL;
    if (st == SC_OK && !copy)
        st = SC_ENOMEM;
    if (st == SC_OK) {
        memcpy(copy, resp, len);
        sc_wire_node_fetch_resp r;
        st = sc_wire_node_fetch_resp_decode(copy, len, arena, &r);
        if (st == SC_OK && r.n_docs != nd)
            st = SC_ECORRUPT;
        *got = r.docs;
    }
    free(resp);
    return st;
}

static void free_context(const sc__dist_unit *u, sc_transport *t)
{
    if (u->local || !u->context_id)
        return;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_wire_put_uvar(&b, u->context_id);
    uint8_t *resp = NULL;
    size_t len;
    if (b.st == SC_OK)
        (void)!sc_transport_request(t, u->host, u->port, SC_MSG_NODE_FREE_CONTEXT,
                                    sc_slice_make(b.ptr, b.len), 5000, &resp, &len, NULL);
    free(resp);
    sc_wire_buf_fini(&b);
}

/* One unit's part of the page: fetch, then fill its hits at their rank positions. */
static sc_status fetch_unit(sc_node *n, const sc_search_request *sr, sc__dist_unit *u,
                            const ranked *page, size_t nh, size_t unit, sc_transport *t,
                            sc_arena *arena, sc_search_response *out, bool *fetched)
{
    size_t nd = 0;
    for (size_t i = 0; i < nh; i++)
        nd += page[i].unit == unit;
    *fetched = nd > 0;
    if (!nd)
        return SC_OK;
    sc_node_hit *docs = sc_arena_alloc(arena, nd * sizeof *docs);
    size_t *pos = sc_arena_alloc(arena, nd * sizeof *pos);
    if (!docs || !pos)
        return SC_ENOMEM;
    for (size_t i = 0, j = 0; i < nh; i++)
        if (page[i].unit == unit) {
            docs[j] = page[i].h;
            pos[j++] = i;
        }
    sc_shard_fetched *got = NULL;
    if (u->local) {
        sc_node_fetch_request fr = {.query = &u->lreq,
                                    .query_resp = &u->lresp,
                                    .docs = docs,
                                    .n_docs = nd,
                                    .source = sr->fetch_source,
                                    .dv_fields = sr->dv_fields,
                                    .n_dv_fields = sr->n_dv_fields};
        sc_node_fetch_response fres;
        SC_TRY(sc_node_fetch_phase(n, &fr, arena, &fres));
        got = fres.docs;
    } else {
        SC_TRY(fetch_remote(sr, u, docs, nd, t, arena, &got));
    }
    for (size_t j = 0; j < nd; j++) {
        sc_result_hit *h = &out->hits[pos[j]];
        const sc_shard_target *tg = NULL;
        for (size_t x = 0; x < u->n_targets && !tg; x++)
            if (u->targets[x].shard_ix == docs[j].shard_ix)
                tg = &u->targets[x];
        *h = (sc_result_hit){.index_i = tg ? tg->index_i : 0,
                             .shard = tg ? tg->shard : 0,
                             .score = docs[j].score,
                             .id = got[j].id,
                             .source = got[j].source,
                             .fields = got[j].fields,
                             .n_fields = got[j].n_fields};
        SC_TRY(sc__search_copy_keys(sr, docs[j].keys, arena, &h->sort));
    }
    return SC_OK;
}

/* A remote unit's fetch failed (its node died or answered with an error between the query and
 * the fetch): as Elasticsearch's fetch phase, each of its shards with a hit on the page becomes a
 * shard failure and those hits leave the page; the rest of the search answers. */
static sc_status fetch_failed(const sc__dist_unit *u, const ranked *page, size_t nh, size_t unit,
                              sc_status why, bool *lost, sc_arena *arena, sc_search_response *out)
{
    char reason[512];
    snprintf(reason, sizeof reason, "[%s][%s:%u] fetch failed: %s", u->node_id, u->host, u->port,
             sc_status_str(why));
    sc_log(SC_LOG_WARN, "search", "%s", reason);
    for (size_t x = 0; x < u->n_targets; x++) {
        if ((u->superseded && u->superseded[x]) || u->results[x].st != SC_OK)
            continue;
        bool on_page = false;
        for (size_t i = 0; i < nh; i++)
            if (page[i].unit == unit && page[i].h.shard_ix == u->targets[x].shard_ix) {
                lost[i] = true;
                on_page = true;
            }
        if (!on_page)
            continue;
        out->shards_successful--;
        SC_TRY(add_failure(&u->targets[x], why == SC_ETIMEOUT ? 504 : 503,
                           why == SC_ETIMEOUT ? "receive_timeout_transport_exception"
                                              : "node_not_connected_exception",
                           reason, arena, out));
    }
    return SC_OK;
}

sc_status sc__dist_reduce(sc_node *n, const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                          const sc__partial *fold, sc_transport *t, sc_cancel_token *token,
                          sc__dist_breaker *br, sc_arena *arena, sc_search_response *out)
{
    sc_status st0 = reduce_shards(sr, units, nu, token, arena, out);
    if (st0 == SC_OK)
        st0 = reduce_aggs(sr, units, nu, fold, br, arena, out);
    /* the data nodes' folds, the coordinator's, and this final reduce */
    out->num_reduce_phases = fold->n_phases + 1;
    for (size_t u = 0; u < nu; u++)
        out->num_reduce_phases += units[u].st == SC_OK ? units[u].n_partial_reduces : 0;
    if (st0 != SC_OK) {
        sc__dist_free_contexts(units, nu, t);
        return st0;
    }
    uint32_t delay_ms = sc_node_config_get(n)->test_fetch_delay_ms;
    if (delay_ms) /* test only: a window to kill a data node between the phases */
        nanosleep(&(struct timespec){delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L}, NULL);
    ranked *all;
    size_t n_all;
    SC_TRY(merge_top(sr, units, nu, fold, &all, &n_all));
    size_t from = sr->from < n_all ? sr->from : n_all;
    size_t nh = n_all - from < sr->size ? n_all - from : sr->size;
    if (sr->count_only)
        nh = 0;
    if (n_all && !sr->n_sort)
        out->max_score = all[0].h.score;
    sc_status st = SC_OK;
    out->hits = sc_arena_calloc(arena, nh ? nh : 1, sizeof *out->hits);
    bool *lost = sc_arena_calloc(arena, nh ? nh : 1, sizeof *lost);
    if (!out->hits || !lost)
        st = SC_ENOMEM;
    for (size_t u = 0; u < nu; u++) {
        bool fetched = false;
        if (st == SC_OK && units[u].st == SC_OK) {
            st = fetch_unit(n, sr, &units[u], all + from, nh, u, t, arena, out, &fetched);
            if (st != SC_OK && !units[u].local && st != SC_ENOMEM && st != SC_ELIMIT)
                st = fetch_failed(&units[u], all + from, nh, u, st, lost, arena, out);
        }
        if (!fetched)
            free_context(&units[u], t); /* the fetch frees it on the data node */
    }
    size_t kept = 0; /* the page without the hits whose fetch failed */
    for (size_t i = 0; st == SC_OK && i < nh; i++)
        if (!lost[i])
            out->hits[kept++] = out->hits[i];
    out->n_hits = st == SC_OK ? kept : 0;
    free(all);
    return st;
}

void sc__dist_free_contexts(const sc__dist_unit *units, size_t n_units, sc_transport *t)
{
    for (size_t u = 0; u < n_units; u++)
        if (units[u].st == SC_OK)
            free_context(&units[u], t);
}
