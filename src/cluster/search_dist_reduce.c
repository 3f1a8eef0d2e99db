/* The distributed coordinator's final reduce and fetch phase (search_dist.h): merges the units'
 * shard outcomes, partially reduced top hits and aggregation partials, then fetches the page's
 * winners with one request per node. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/search_dist.h"
#include "cluster/search_wire.h"
#include "search/profile.h"

/* A merged hit and the unit it came from (the hit first: the comparators take sc_node_hit). */
typedef struct ranked {
    sc_node_hit h;
    size_t unit;
} ranked;

static sc_status add_failure(const sc__dist_unit *u, const sc_shard_target *tg, int status,
                             const char *type, const char *reason, sc_arena *arena,
                             sc_search_response *out)
{
    sc_shard_failure *f = &out->failures[out->n_failures++];
    f->index_i = tg->index_i;
    f->shard = tg->shard;
    f->node_id = u->node_id[0] ? sc_arena_strndup(arena, u->node_id, strlen(u->node_id)) : NULL;
    memset(&f->err, 0, sizeof f->err);
    f->err.status = status ? status : 500;
    f->err.type =
        sc_arena_strndup(arena, type ? type : "exception", strlen(type ? type : "exception"));
    snprintf(f->err.reason, sizeof f->err.reason, "%s", reason);
    out->shards_failed++;
    return f->err.type ? SC_OK : SC_ENOMEM;
}

static int cmp_profile(const void *pa, const void *pb)
{
    const sc_shard_profile *a = pa, *b = pb;
    if (a->index_i != b->index_i)
        return a->index_i < b->index_i ? -1 : 1;
    return (a->shard > b->shard) - (a->shard < b->shard);
}

/* profile: the searched shards' profiles (copied: the units' memory goes first), each with the
 * node that ran it, in target order as on a single node. */
static sc_status reduce_profiles(const sc__dist_unit *units, size_t nu, sc_arena *arena,
                                 sc_search_response *out)
{
    out->profiles = sc_arena_calloc(arena, out->shards_total + 1, sizeof *out->profiles);
    if (!out->profiles)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t u = 0; u < nu; u++) {
        const sc__dist_unit *x = &units[u];
        for (size_t t = 0; x->st == SC_OK && t < x->n_targets; t++) {
            const sc_node_shard_result *r = &x->results[t];
            if ((x->superseded && x->superseded[t]) || r->st != SC_OK || r->skipped ||
                !r->profile || out->n_profiles > out->shards_total)
                continue;
            sc_shard_profile *sp = &out->profiles[out->n_profiles++];
            sp->index_i = x->targets[t].index_i;
            sp->shard = x->targets[t].shard;
            struct sc_search_profile *copy;
            SC_TRY(sc_search_profile_copy(arena, r->profile, &copy));
            sp->profile = copy;
            if (!x->local &&
                !(sp->node_id = sc_arena_strndup(arena, x->node_id, strlen(x->node_id))))
                return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        }
    }
    qsort(out->profiles, out->n_profiles, sizeof *out->profiles, cmp_profile);
    return SC_OK;
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
                SC_TRY(add_failure(x, &x->targets[t], x->fail_status, x->fail_type, x->fail_reason,
                                   arena, out));
                continue;
            }
            const sc_node_shard_result *r = &x->results[t];
            if (r->st != SC_OK) {
                cancelled |= r->st == SC_ECANCELLED;
                SC_TRY(add_failure(x, &x->targets[t], r->err.status, r->err.type, r->err.reason, arena,
                                   out));
                continue;
            }
            out->shards_successful++;
            out->shards_skipped += r->skipped;
            out->total += r->total;
            out->total_is_lower_bound |= r->total_is_lower_bound;
            out->timed_out |= r->timed_out;
            out->terminated_early |= r->terminated_early;
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
    return sr->profile ? reduce_profiles(units, nu, arena, out) : SC_OK;
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
    size_t before = arena->used_bytes, peak0 = arena->peak_bytes;
    arena->peak_bytes = before;
    sc_status st = h->reduce(h->ctx, partials, nu + 1, arena, &out->agg_result, &err);
    /* the final reduce's memory joins the units' on the breaker: its high-water mark (the
     * reduce gives its scratch back), then what it keeps */
    size_t peak = arena->peak_bytes - before, kept = arena->used_bytes - before;
    arena->peak_bytes = peak0 > arena->peak_bytes ? peak0 : arena->peak_bytes;
    if (st == SC_OK && peak && !sc__dist_breaker_add(br, peak))
        return SC_ELIMIT;
    if (st == SC_OK)
        sc__dist_breaker_sub(br, peak - kept);
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
    if (sr->collapse) {
        /* the units' tops are collapsed each; across units the best hit of a group wins (as
         * Elasticsearch's CollapseTopFieldDocs merge), up to from + size groups */
        size_t keep = (size_t)sr->from + sr->size, g = 0;
        for (size_t i = 0; i < all && g < keep; i++) {
            bool seen = false;
            for (size_t j = 0; j < g && !seen; j++)
                seen =
                    sc__search_same_group(sr->collapse, m[j].h.collapse_key, m[i].h.collapse_key);
            if (!seen)
                m[g++] = m[i];
        }
        all = g;
    }
    *out = m;
    *n_out = all;
    return SC_OK;
}

static int cmp_ranked_doc(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->h.shard_ix != b->h.shard_ix)
        return a->h.shard_ix < b->h.shard_ix ? -1 : 1;
    return (a->h.doc > b->h.doc) - (a->h.doc < b->h.doc);
}

/* Appends the first rrf_window hits of a ranked list (best first) as their RRF contributions
 * 1 / (rank_constant + rank), ranks from 1 (search_rrf.c's formula). */
static void contribute(const sc_search_request *sr, const ranked *list, size_t n, ranked *f,
                       size_t *nf)
{
    for (size_t r = 0; r < n && r < sr->rrf_window; r++) {
        f[*nf] = list[r];
        f[(*nf)++].h.score = 1.0f / (float)((double)sr->rrf_rank_constant + (double)(r + 1));
    }
}

/* RRF: the fused ranking of every sub-search's global list (the first is *all, the others
 * each unit's rrf lists merged) replaces *all; totals are the largest sub-search's. */
static sc_status fuse_rrf(const sc_search_request *sr, const sc__dist_unit *units, size_t nu,
                          ranked **all, size_t *n_all, sc_search_response *out)
{
    size_t n_more = sr->n_rrf - 1, cap = *n_all, most = 0;
    for (size_t m = 0; m < n_more; m++) {
        size_t one = 0;
        for (size_t u = 0; u < nu; u++)
            one += units[u].st == SC_OK && units[u].rrf ? units[u].rrf[m].n_top : 0;
        cap += one;
        most = one > most ? one : most;
    }
    ranked *f = malloc((cap + 1) * sizeof *f), *list = malloc((most + 1) * sizeof *list);
    if (!f || !list) {
        free(f), free(list);
        return SC_ENOMEM;
    }
    size_t nf = 0;
    contribute(sr, *all, *n_all, f, &nf);
    for (size_t m = 0; m < n_more; m++) {
        size_t nl = 0;
        uint64_t total = 0;
        bool gte = false;
        for (size_t u = 0; u < nu; u++) {
            if (units[u].st != SC_OK || !units[u].rrf)
                continue;
            const sc_node_ranked *t = &units[u].rrf[m];
            for (size_t i = 0; i < t->n_top; i++)
                list[nl++] = (ranked){t->top[i], u};
            total += t->total;
            gte |= t->total_gte;
        }
        qsort(list, nl, sizeof *list, sc__search_cmp_score);
        contribute(sr, list, nl, f, &nf);
        sc_search_total_cap(sr->track_total_hits, &total, &gte);
        if (total > out->total) {
            out->total = total;
            out->total_is_lower_bound = gte;
        }
    }
    free(list);
    qsort(f, nf, sizeof *f, cmp_ranked_doc);
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        if (k && f[k - 1].h.shard_ix == f[i].h.shard_ix && f[k - 1].h.doc == f[i].h.doc)
            f[k - 1].h.score += f[i].h.score;
        else
            f[k++] = f[i];
    }
    qsort(f, k, sizeof *f, sc__search_cmp_score);
    free(*all);
    *all = f;
    *n_all = k;
    return SC_OK;
}

/* The unit's target that holds shard ordinal shard_ix, or NULL. */
static const sc_shard_target *target_of(const sc__dist_unit *u, uint32_t shard_ix)
{
    for (size_t x = 0; x < u->n_targets; x++)
        if (u->targets[x].shard_ix == shard_ix)
            return &u->targets[x];
    return NULL;
}

/* The fetch-phase extras the request asks the data node for (search_wire.h): flags, the
 * indices with their alias filters, the query and highlight JSON, each doc's index number and,
 * for explain under dfs_query_then_fetch, the global statistics. */
static sc_status fetch_extras(const sc_search_request *sr, const sc__dist_unit *u,
                              const sc_node_hit *docs, size_t nd, const sc_term_stats *dfs,
                              sc_arena *arena, sc_wire_node_fetch *f)
{
    f->flags = (sr->versions ? SC_WIRE_FETCH_VERSIONS : 0) |
               (sr->explain ? SC_WIRE_FETCH_EXPLAIN : 0) | (sr->named ? SC_WIRE_FETCH_NAMED : 0) |
               (sr->highlight ? SC_WIRE_FETCH_HIGHLIGHT : 0);
    if (!f->flags)
        return SC_OK;
    sc_slice *names = sc_arena_calloc(arena, sr->n_indices + 1, sizeof *names);
    uint32_t *di = sc_arena_calloc(arena, nd + 1, sizeof *di);
    if (!names || !di)
        return SC_ENOMEM;
    for (size_t i = 0; i < sr->n_indices; i++)
        names[i] = sc_slice_cstr(sr->indices[i]->name);
    for (size_t j = 0; j < nd; j++) {
        const sc_shard_target *tg = target_of(u, docs[j].shard_ix);
        di[j] = tg ? tg->index_i : 0;
    }
    f->index_names = names;
    f->index_filters = (sc_slice *)sr->alias_filter_json;
    f->n_indices = sr->n_indices;
    f->query_json = sr->query_json;
    f->highlight_json = sr->highlight ? sr->highlight_json : sc_slice_make(NULL, 0);
    f->doc_index = di;
    f->dfs = sr->explain ? dfs : NULL;
    return SC_OK;
}

/* What a data node computed must fit the coordinator's own view of the request: highlight
 * field numbers, named query numbers and inner_hits counts of the doc's index. */
static bool extras_fit(const sc_search_request *sr, uint32_t index_i, const sc_shard_fetched *d,
                       uint32_t n_inner)
{
    const sc_hl_spec *hs = sr->highlight ? sr->highlight[index_i] : NULL;
    for (size_t k = 0; k < d->n_highlights; k++)
        if (!hs || d->highlights[k].field >= hs->n_fields)
            return false;
    const sc_search_named *nm = sr->named ? &sr->named[index_i] : NULL;
    for (size_t k = 0; k < d->n_matched; k++)
        if (!nm || d->matched[k] >= nm->n)
            return false;
    if (d->inner && (!nm || n_inner != nm->n_inner))
        return false;
    return (!d->has_versions || sr->versions) && (!d->explanation || sr->explain);
}

/* A remote unit's fetch request, sent ahead on a thread of its own so that the data nodes run
 * their fetches at the same time; the coordinator then decodes the answers in unit order. */
typedef struct fetch_ahead {
    pthread_t th;
    bool sent, joined; /* a thread runs (ran) the request; it was joined */
    sc_transport *t;
    const sc__dist_unit *u;
    sc_wire_buf req;
    uint32_t flags;            /* the request's fetch flags */
    const uint32_t *doc_index; /* per doc (flags set) */
    uint8_t *resp;             /* malloc'd answer */
    size_t len;
    sc_status st;
    uint32_t timeout_ms; /* of the request (fetch_timeout_ms) */
} fetch_ahead;

/* Remote fetches sent ahead at once: beyond this many, the rest go one after another. */
#define MAX_FETCH_AHEAD 8
/* A fetch request's timeout: without a search timeout, FETCH_TIMEOUT_MS; with one, what is left
 * of it plus FETCH_GRACE_MS, so that a node frozen after its query answer holds the search up
 * a bounded time past its timeout (its shards become fetch failures). */
#define FETCH_TIMEOUT_MS 30000
#define FETCH_GRACE_MS 5000
/* The free of a data node's context is best effort (the node also reaps idle ones). */
#define FREE_TIMEOUT_MS 1000

static uint32_t fetch_timeout_ms(const sc_cancel_token *token)
{
    if (!token || !token->deadline_ns)
        return FETCH_TIMEOUT_MS;
    uint64_t now = sc_clock_now_ns();
    uint64_t left = token->deadline_ns > now ? (token->deadline_ns - now) / 1000000u : 0;
    return left + FETCH_GRACE_MS < FETCH_TIMEOUT_MS ? (uint32_t)left + FETCH_GRACE_MS
                                                    : FETCH_TIMEOUT_MS;
}

static void *send_fetch(void *arg)
{
    fetch_ahead *fa = arg;
    fa->st = sc_transport_request(
        fa->t, fa->u->host, fa->u->port, SC_MSG_NODE_FETCH, sc_slice_make(fa->req.ptr, fa->req.len),
        fa->timeout_ms ? fa->timeout_ms : FETCH_TIMEOUT_MS, &fa->resp, &fa->len, NULL);
    return NULL;
}

/* Encodes the fetch request of a remote unit's winners (docs, in page order) into fa->req. */
static sc_status encode_fetch(const sc_search_request *sr, const sc__dist_unit *u,
                              const sc_node_hit *docs, size_t nd, sc_transport *t,
                              const sc_term_stats *dfs, sc_arena *arena, fetch_ahead *fa)
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
    SC_TRY(fetch_extras(sr, u, docs, nd, dfs, arena, &f));
    fa->t = t;
    fa->u = u;
    fa->flags = f.flags;
    fa->doc_index = f.doc_index;
    sc_wire_buf_init(&fa->req);
    return sc_wire_node_fetch_encode(&f, &fa->req);
}

/* Decodes a remote unit's fetch answer (nd docs) into got (arena), checked against the
 * request. */
static sc_status decode_fetch(const sc_search_request *sr, const fetch_ahead *fa, size_t nd,
                              sc_arena *arena, sc_shard_fetched **got)
{
    /* the fetched bytes must outlive the units: decode from a copy in the request arena */
    uint8_t *copy = sc_arena_alloc(arena, fa->len ? fa->len : 1);
    if (!copy)
        return SC_ENOMEM;
    if (fa->len)
        memcpy(copy, fa->resp, fa->len);
    sc_wire_node_fetch_resp r;
    SC_TRY(sc_wire_node_fetch_resp_decode(copy, fa->len, arena, &r));
    if (r.n_docs != nd || r.extras != (fa->flags != 0))
        return SC_ECORRUPT;
    for (size_t j = 0; fa->flags && j < nd; j++)
        if (r.docs[j].found &&
            !extras_fit(sr, fa->doc_index[j], &r.docs[j], r.n_inner ? r.n_inner[j] : 0))
            return SC_ECORRUPT;
    *got = r.docs;
    return SC_OK;
}

/* Fetches a remote unit's winners (docs, in page order) into got (arena): the answer of the
 * request sent ahead (fa->sent), else a request sent now. */
static sc_status fetch_remote(const sc_search_request *sr, const sc__dist_unit *u,
                              const sc_node_hit *docs, size_t nd, sc_transport *t,
                              const sc_term_stats *dfs, sc_arena *arena, fetch_ahead *fa,
                              sc_shard_fetched **got)
{
    fetch_ahead now;
    memset(&now, 0, sizeof now);
    now.timeout_ms = fa ? fa->timeout_ms : 0;
    if (fa && fa->sent) {
        if (!fa->joined)
            pthread_join(fa->th, NULL);
        fa->joined = true;
    } else {
        fa = &now;
        sc_status st = encode_fetch(sr, u, docs, nd, t, dfs, arena, fa);
        if (st == SC_OK)
            send_fetch(fa);
        else
            fa->st = st;
        sc_wire_buf_fini(&fa->req);
    }
    sc_status st = fa->st == SC_OK ? decode_fetch(sr, fa, nd, arena, got) : fa->st;
    if (fa == &now)
        free(now.resp);
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
                                    sc_slice_make(b.ptr, b.len), FREE_TIMEOUT_MS, &resp, &len,
                                    NULL);
    free(resp);
    sc_wire_buf_fini(&b);
}

/* A hit's collapse key in the request arena (the units' memory goes first). */
static sc_status copy_collapse_key(const sc_search_request *sr, const sc_sort_key *k,
                                   sc_arena *arena, const sc_sort_key **out)
{
    sc_sort_key *c = sc_arena_alloc(arena, sizeof *c);
    if (!c)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    *c = *k;
    if (!sr->collapse->numeric && !c->missing && c->s.len) {
        uint8_t *p = sc_arena_alloc(arena, c->s.len);
        if (!p)
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        memcpy(p, c->s.ptr, c->s.len);
        c->s = sc_slice_make(p, c->s.len);
    }
    *out = c;
    return SC_OK;
}

/* The page's hits of unit `unit` (docs, in page order, at page positions pos; *nd of them,
 * arena). */
static sc_status unit_docs(const ranked *page, size_t nh, size_t unit, sc_arena *arena,
                           sc_node_hit **docs_out, size_t **pos_out, size_t *nd_out)
{
    size_t nd = 0;
    for (size_t i = 0; i < nh; i++)
        nd += page[i].unit == unit;
    *nd_out = nd;
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
    *docs_out = docs;
    *pos_out = pos;
    return SC_OK;
}

/* One unit's part of the page: fetch (a remote one's request may have been sent ahead: fa),
 * then fill its hits at their rank positions. */
static sc_status fetch_unit(sc_node *n, const sc_search_request *sr, sc__dist_unit *u,
                            const ranked *page, size_t nh, size_t unit, sc_transport *t,
                            const sc_term_stats *dfs, sc_arena *arena, fetch_ahead *fa,
                            sc_search_response *out, bool *fetched)
{
    sc_node_hit *docs = NULL;
    size_t *pos = NULL, nd;
    SC_TRY(unit_docs(page, nh, unit, arena, &docs, &pos, &nd));
    *fetched = nd > 0;
    if (!nd)
        return SC_OK;
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
        SC_TRY(fetch_remote(sr, u, docs, nd, t, dfs, arena, fa, &got));
    }
    for (size_t j = 0; j < nd; j++) {
        sc_result_hit *h = &out->hits[pos[j]];
        const sc_shard_target *tg = target_of(u, docs[j].shard_ix);
        const sc_shard_fetched *g = &got[j];
        *h = (sc_result_hit){.index_i = tg ? tg->index_i : 0,
                             .shard = tg ? tg->shard : 0,
                             .score = docs[j].score,
                             .id = g->id,
                             .source = g->source,
                             .fields = g->fields,
                             .n_fields = g->n_fields,
                             .highlights = g->highlights,
                             .n_highlights = g->n_highlights,
                             .has_versions = g->has_versions,
                             .version = g->version,
                             .seq_no = g->seq_no,
                             .primary_term = g->primary_term,
                             .matched = g->matched,
                             .n_matched = g->n_matched,
                             .explanation = g->explanation,
                             .inner = g->inner};
        SC_TRY(sc__search_copy_keys(sr, docs[j].keys, arena, &h->sort));
        if (sr->collapse && docs[j].collapse_key)
            SC_TRY(copy_collapse_key(sr, docs[j].collapse_key, arena, &h->collapse_key));
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
        SC_TRY(add_failure(u, &u->targets[x], why == SC_ETIMEOUT ? 504 : 503,
                           why == SC_ETIMEOUT ? "receive_timeout_transport_exception"
                                              : "node_not_connected_exception",
                           reason, arena, out));
    }
    return SC_OK;
}

/* Sends the fetch requests of up to MAX_FETCH_AHEAD remote units with hits on the page, each
 * on a thread of its own (a unit whose request cannot be encoded or whose thread cannot start
 * is fetched in turn later). */
static void send_ahead(const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                       const ranked *page, size_t nh, sc_transport *t, const sc_term_stats *dfs,
                       sc_arena *arena, fetch_ahead *ahead)
{
    size_t n_sent = 0;
    for (size_t u = 0; u < nu && n_sent < MAX_FETCH_AHEAD; u++) {
        if (units[u].st != SC_OK || units[u].local)
            continue;
        sc_node_hit *docs = NULL;
        size_t *pos = NULL, nd = 0;
        if (unit_docs(page, nh, u, arena, &docs, &pos, &nd) != SC_OK || !nd)
            continue;
        fetch_ahead *fa = &ahead[u];
        uint32_t tmo = fa->timeout_ms;
        if (encode_fetch(sr, &units[u], docs, nd, t, dfs, arena, fa) != SC_OK ||
            pthread_create(&fa->th, NULL, send_fetch, fa) != 0) {
            sc_wire_buf_fini(&fa->req);
            memset(fa, 0, sizeof *fa);
            fa->timeout_ms = tmo;
            continue;
        }
        fa->sent = true;
        n_sent++;
    }
}

/* track_scores under a field sort: max_score is the best of the shards' (NaN: none). */
static void reduce_max_score(const sc_search_request *sr, const sc__dist_unit *units, size_t nu,
                             sc_search_response *out)
{
    for (size_t u = 0; sr->n_sort && sr->track_scores && u < nu; u++)
        for (size_t t = 0; units[u].st == SC_OK && t < units[u].n_targets; t++) {
            const sc_node_shard_result *r = &units[u].results[t];
            if ((units[u].superseded && units[u].superseded[t]) || r->st != SC_OK || r->skipped ||
                isnan(r->max_score))
                continue;
            if (isnan(out->max_score) || r->max_score > out->max_score)
                out->max_score = r->max_score;
        }
}

sc_status sc__dist_reduce(sc_node *n, const sc_search_request *sr, sc__dist_unit *units, size_t nu,
                          const sc__partial *fold, sc_transport *t, sc_cancel_token *token,
                          sc__dist_breaker *br, const sc_term_stats *dfs, sc_arena *arena,
                          sc_search_response *out)
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
    if (sr->n_rrf) {
        sc_status fst = fuse_rrf(sr, units, nu, &all, &n_all, out);
        if (fst != SC_OK) {
            free(all);
            sc__dist_free_contexts(units, nu, t);
            return fst;
        }
    }
    out->knn_kth_score = NAN;
    if (sr->knn_cap && !sr->n_sort) {
        /* a kNN-only search: the global top k of the shards' top k, as on one node */
        if (n_all >= sr->knn_cap)
            out->knn_kth_score = all[sr->knn_cap - 1].h.score;
        if (n_all > sr->knn_cap)
            n_all = sr->knn_cap;
        if (out->total > sr->knn_cap) {
            out->total = sr->knn_cap;
            out->total_is_lower_bound = false;
        }
    }
    size_t from = sr->from < n_all ? sr->from : n_all;
    size_t nh = n_all - from < sr->size ? n_all - from : sr->size;
    if (sr->count_only)
        nh = 0;
    if (n_all && !sr->n_sort)
        out->max_score = all[0].h.score;
    reduce_max_score(sr, units, nu, out);
    sc_status st = SC_OK;
    out->hits = sc_arena_calloc(arena, nh ? nh : 1, sizeof *out->hits);
    bool *lost = sc_arena_calloc(arena, nh ? nh : 1, sizeof *lost);
    if (!out->hits || !lost)
        st = SC_ENOMEM;
    fetch_ahead *ahead = st == SC_OK ? calloc(nu ? nu : 1, sizeof *ahead) : NULL;
    uint32_t fetch_tmo = fetch_timeout_ms(token);
    for (size_t u = 0; ahead && u < nu; u++)
        ahead[u].timeout_ms = fetch_tmo;
    if (ahead)
        send_ahead(sr, units, nu, all + from, nh, t, dfs, arena, ahead);
    for (size_t u = 0; u < nu; u++) {
        bool fetched = false;
        fetch_ahead *fa = ahead ? &ahead[u] : NULL;
        if (st == SC_OK && units[u].st == SC_OK) {
            st = fetch_unit(n, sr, &units[u], all + from, nh, u, t, dfs, arena, fa, out, &fetched);
            if (st != SC_OK && !units[u].local && st != SC_ENOMEM && st != SC_ELIMIT)
                st = fetch_failed(&units[u], all + from, nh, u, st, lost, arena, out);
        }
        if (!fetched && !(fa && fa->sent))
            free_context(&units[u], t); /* the fetch frees it on the data node */
    }
    for (size_t u = 0; ahead && u < nu; u++) {
        if (ahead[u].sent && !ahead[u].joined)
            pthread_join(ahead[u].th, NULL);
        sc_wire_buf_fini(&ahead[u].req);
        free(ahead[u].resp);
    }
    free(ahead);
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
