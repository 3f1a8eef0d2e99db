/* _search and _count: the handlers, which resolve the target
 * indices, call the coordinator and write the page. Parsing lives in search_parse.c, the response
 * shape in search_write.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_internal.h"
#include "api/search_run.h"
#include "base/clock.h"
#include "base/json.h"
#include "cluster/alias.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/scroll.h"
#include "cluster/search.h"
#include "cluster/tasks.h"
#include "search/runtime.h"

void sc__search_run_fini(search_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        if (run->filters)
            json_decref(run->filters[i]);
        if (run->routings)
            free(run->routings[i]);
    }
    free(run->filters);
    free(run->routings);
    run->filters = NULL;
    run->routings = NULL;
    sc_node_release(run->list, run->n);
    json_decref(run->sp.owned_q), json_decref(run->sp.vec.owned);
    json_decref(run->sp.suggest_out);
    run->sp.suggest_out = NULL;
    for (size_t i = 0; i < run->sp.n_inner_out; i++)
        json_decref(run->sp.inner_out[i]);
    free(run->sp.inner_out);
    run->sp.inner_out = NULL;
    run->sp.n_inner_out = 0;
    sc__agg_spec_free(run->sp.agg_spec);
    run->sp.agg_spec = NULL;
    run->list = NULL;
    run->n = 0;
}

static char *scroll_body_text(const json_t *body, const search_parse *sp, bool clustered)
{
    json_t *b = body ? json_deep_copy(body) : json_object();
    if (!b)
        return NULL;
    if (sp->query)
        json_object_set(b, "query", sp->query);
    json_object_del(b, "from");
    json_object_del(b, "size");
    if (clustered) { /* as Elasticsearch: aggregations and suggestions on the first page only */
        json_object_del(b, "aggs");
        json_object_del(b, "aggregations");
        json_object_del(b, "suggest");
    }
    if (!sp->source)
        json_object_set_new(b, "_source", json_false());
    char *text = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return text;
}

/* Whether a `fields` entry names a text field of a target index (values from _source). */
static bool needs_source(search_run *run)
{
    bool need = run->sp.n_stored > 0; /* stored fields are read from _source */
    for (size_t i = 0; i < run->n && !need && run->sp.n_src_fields; i++) {
        sc_mapping *m = sc_index_mapping(run->list[i]);
        for (size_t f = 0; f < run->sp.n_src_fields && !need; f++) {
            const sc_mapping_field *mf = sc_mapping_find(m, sc_slice_cstr(run->sp.src_fields[f]));
            need = mf && mf->type == SC_MAPPING_TEXT;
        }
        sc_mapping_unref(m);
    }
    return need;
}

/* Aggregations and post_filter: parses the aggs (with the first index's mapping) and, with a
 * post_filter, narrows each index's hits query to bool {must: query, filter: post_filter}
 * while the aggregations keep the query (*agg_queries). false after writing a 4xx. */
static bool prepare_aggs(sc_rest_req *req, sc_rest_resp *resp, search_run *run, sc_query **queries,
                         sc_query ***agg_queries)
{
    *agg_queries = NULL;
    run->agg.hit_queries = queries;
    run->agg.n_queries = run->n;
    sc_slice *names = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *names);
    for (size_t i = 0; names && i < run->n; i++)
        names[i] = sc_slice_cstr(run->list[i]->name);
    run->agg.index_names = names;
    sc_mapping *overlay = NULL;
    if (!sc__search_runtime_parse(req, resp, &run->sp, run->n ? run->list[0] : NULL,
                                  (sc_runtime_field **)&run->agg.runtime, &run->agg.n_runtime,
                                  &overlay))
        return false;
    if (run->sp.aggs) {
        sc_agg_parse_error err;
        bool ok = sc__agg_parse_mapped(req, run->n ? run->list[0] : NULL, overlay, run->sp.aggs,
                                       &run->sp.agg_spec, &err);
        if (!ok) {
            sc_mapping_unref(overlay);
            sc__agg_write_error(req, resp, &err);
            return false;
        }
    }
    sc_mapping_unref(overlay);
    if (!run->sp.post_filter)
        return true;
    sc_query **orig = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *orig);
    if (!orig) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    for (size_t i = 0; i < run->n; i++) {
        sc_query *pf = NULL, *b = sc_query_bool(req->arena);
        sc_dsl_error derr;
        sc_status st =
            sc__search_parse_query(req->arena, run->list[i], run->sp.post_filter, &pf, &derr);
        if (st != SC_OK) {
            sc_rest_error(req, resp, derr.status ? derr.status : 400,
                          derr.type ? derr.type : "parsing_exception", derr.reason, NULL, 0);
            return false;
        }
        if (!b || sc_query_bool_add(req->arena, b, SC_OCCUR_MUST, queries[i]) != SC_OK ||
            sc_query_bool_add(req->arena, b, SC_OCCUR_FILTER, pf) != SC_OK) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            return false;
        }
        orig[i] = queries[i];
        queries[i] = b;
    }
    *agg_queries = orig;
    run->agg.agg_queries = orig;
    return true;
}

/* ?routing=a,b (the shards those values route to) and ?preference=_shards:0,2 (those shard
 * numbers; other preferences are accepted and change nothing on one node) as a per-index shard
 * mask; *out stays NULL when neither restricts the search. Later pages of a scroll (and
 * searches of a point in time) take them from the context: the shards of the first page. */
static bool shard_selection(sc_rest_req *req, sc_rest_resp *resp, search_run *run,
                            const sc_scroll *ctx, const uint64_t *const **out)
{
    *out = NULL;
    const char *routing = sc_rest_param_get(req, "routing");
    const char *pref = sc_rest_param_get(req, "preference");
    if (ctx) {
        routing = ctx->routing;
        pref = ctx->preference;
    }
    const char *shards = pref && strncmp(pref, "_shards:", 8) == 0 ? pref + 8 : NULL;
    bool alias_routing = false;
    for (size_t i = 0; !ctx && run->routings && i < run->n; i++)
        alias_routing |= run->routings[i] != NULL;
    uint32_t slice_max = run->sp.slice_max, slice_id = run->sp.slice_id;
    bool doc = run->doc_routing && !ctx;
    if (doc) /* one document: its shard, whatever the value holds (not a ?routing list) */
        routing = NULL;
    if ((!routing || !*routing) && !shards && !alias_routing && !slice_max && !doc)
        return true;
    uint64_t **masks = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *masks);
    if (!masks) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    for (size_t i = 0; i < run->n; i++) {
        uint32_t ns = run->list[i]->settings.number_of_shards;
        size_t words = (ns + 63) / 64;
        uint64_t *r = sc_arena_calloc(req->arena, words, sizeof *r);
        uint64_t *p = sc_arena_calloc(req->arena, words, sizeof *p);
        if (!r || !p) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            return false;
        }
        const char *ri = !ctx && run->routings && run->routings[i] && !(routing && *routing)
                             ? run->routings[i]
                             : routing;
        if (doc && !ri) {
            uint32_t s = sc_index_route(run->list[i], *run->doc_routing);
            r[s / 64] |= UINT64_C(1) << (s % 64);
        } else if (ri && *ri) {
            for (const char *a = ri; *a;) {
                const char *e = strchr(a, ',');
                size_t len = e ? (size_t)(e - a) : strlen(a);
                uint32_t s = sc_index_route(run->list[i], sc_slice_make(a, len));
                r[s / 64] |= UINT64_C(1) << (s % 64);
                a += len + (e ? 1 : 0);
            }
        } else {
            memset(r, 0xff, words * sizeof *r);
        }
        if (shards) {
            for (const char *a = shards; *a && *a != '|';) {
                char *end;
                long s = strtol(a, &end, 10);
                if (end == a || (*end && *end != ',' && *end != '|')) {
                    sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                                   "no Preference for [%s]", pref);
                    return false;
                }
                if (s >= 0 && (uint32_t)s < ns)
                    p[s / 64] |= UINT64_C(1) << (s % 64);
                a = *end == ',' ? end + 1 : end;
            }
        } else {
            memset(p, 0xff, words * sizeof *p);
        }
        for (size_t w = 0; w < words; w++)
            r[w] &= p[w];
        /* a slice reads whole shards, as Elasticsearch when max <= shards: shard s belongs to
         * slice s % max; more slices than shards would split shards (not supported) */
        if (slice_max > ns) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "[slice] max [%u] is larger than the number of shards [%u] of [%s]: "
                           "slices within a shard are not supported",
                           slice_max, ns, run->list[i]->name);
            return false;
        }
        for (uint32_t s = 0; slice_max && s < ns; s++)
            if (s % slice_max != slice_id)
                r[s / 64] &= ~(UINT64_C(1) << (s % 64));
        masks[i] = r;
    }
    *out = (const uint64_t *const *)masks;
    return true;
}

/* run->filters = new references to filters (run->n entries). */
static bool copy_filters(search_run *run, json_t *const *filters)
{
    run->filters = calloc(run->n ? run->n : 1, sizeof *run->filters);
    if (!run->filters)
        return false;
    for (size_t i = 0; i < run->n; i++)
        run->filters[i] = json_incref(filters[i]);
    return true;
}

/* Each index reached through filtered aliases searches {"bool": {"must": [its query],
 * "filter": [the alias filter]}}, composed on the query trees so that named queries,
 * highlighting and aggregations keep pointing at the request's own clauses; the filter does not
 * change scores. */
static bool apply_alias_filters(sc_rest_req *req, sc_rest_resp *resp, search_run *run,
                                sc_query **queries)
{
    for (size_t i = 0; run->filters && i < run->n; i++) {
        if (!run->filters[i])
            continue;
        sc_query *f = NULL;
        if (!sc__search_build_queries(req, resp, run->filters[i], &run->list[i], 1, &f))
            return false;
        sc_query *b = sc_query_bool(req->arena);
        if (!b || sc_query_bool_add(req->arena, b, SC_OCCUR_MUST, queries[i]) != SC_OK ||
            sc_query_bool_add(req->arena, b, SC_OCCUR_FILTER, f) != SC_OK) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            return false;
        }
        queries[i] = b;
    }
    return true;
}

/* Compact JSON text in the request arena (empty for NULL). */
static sc_slice json_text(sc_rest_req *req, const json_t *j)
{
    if (!j)
        return sc_slice_make(NULL, 0);
    char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    char *copy = t ? sc_arena_strndup(req->arena, t, strlen(t)) : NULL;
    free(t);
    return copy ? sc_slice_cstr(copy) : sc_slice_make(NULL, 0);
}

/* Clustered scroll / point in time (cluster/search_ctx.c): what it does not carry is refused,
 * as Elasticsearch refuses `from` in a scroll. false after writing a 400. */
static bool ctx_supported(sc_rest_req *req, sc_rest_resp *resp, const search_run *run,
                          const scroll_page *sc)
{
    if (sc->opening && run->sp.from > 0) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: using [from] is not allowed in a scroll context;",
                      NULL, 0);
        return false;
    }
    if (run->sp.dfs) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[dfs_query_then_fetch] with a scroll or point in time is not supported in "
                      "a cluster yet",
                      NULL, 0);
        return false;
    }
    return true;
}

/* Clustered: the rescore queries and the kNN clauses as JSON for the data nodes (cluster/search.h
 * rescore_json, knn_clauses). false when the arena is exhausted. */
static bool ship_query_features(sc_rest_req *req, search_run *run)
{
    size_t nr = run->sr.rescore ? run->sr.n_rescore : 0, nk = json_array_size(run->sp.vec.knn);
    sc_slice *rj = nr ? sc_arena_calloc(req->arena, nr, sizeof *rj) : NULL;
    sc_slice *kj = nk ? sc_arena_calloc(req->arena, nk, sizeof *kj) : NULL;
    if ((nr && !rj) || (nk && !kj))
        return false;
    for (size_t k = 0; k < nr; k++)
        if (!(rj[k] = json_text(req, run->sp.rescore[k].query)).len)
            return false;
    for (size_t k = 0; k < nk; k++)
        if (!(kj[k] = json_text(req, json_array_get(run->sp.vec.knn, k))).len)
            return false;
    /* RRF: each sub-search ({"query": q} or {"knn": clause}) */
    size_t ns = run->sr.n_rrf ? json_array_size(run->sp.vec.subs) : 0;
    sc_slice *sj = ns ? sc_arena_calloc(req->arena, ns, sizeof *sj) : NULL;
    bool *sk = ns ? sc_arena_calloc(req->arena, ns, sizeof *sk) : NULL;
    if (ns && (!sj || !sk))
        return false;
    for (size_t j = 0; j < ns; j++) {
        const json_t *sub = json_array_get(run->sp.vec.subs, j);
        const json_t *kc = json_object_get(sub, "knn");
        sk[j] = kc != NULL;
        if (!(sj[j] = json_text(req, kc ? kc : json_object_get(sub, "query"))).len)
            return false;
    }
    run->sr.rrf_json = sj;
    run->sr.rrf_knn = sk;
    run->sr.rescore_json = rj;
    run->sr.knn_clauses = kj;
    run->sr.n_knn_clauses = nk;
    run->sr.knn_default_k = (uint32_t)run->sp.size;
    return true;
}

/* Clustered: the JSON the data nodes re-parse with their own mappings (search_wire.h), with
 * each index's alias filter. false when the arena is exhausted. */
static bool ship_json(sc_rest_req *req, const json_t *body, search_run *run)
{
    run->sr.query_json = json_text(req, run->sp.query);
    run->sr.post_filter_json = json_text(req, run->sp.post_filter);
    run->sr.aggs_json = json_text(req, run->sp.aggs);
    if (json_object_size(run->sp.runtime_mappings))
        run->sr.runtime_json = json_text(req, run->sp.runtime_mappings);
    run->sr.highlight_json = json_text(req, json_object_get(body, "highlight"));
    bool any = false;
    for (size_t i = 0; run->filters && i < run->n; i++)
        any |= run->filters[i] != NULL;
    sc_slice *f = any ? sc_arena_calloc(req->arena, run->n, sizeof *f) : NULL;
    bool ok = (!any || f) && (!json_object_get(body, "highlight") || run->sr.highlight_json.len);
    for (size_t i = 0; f && i < run->n; i++) {
        f[i] = json_text(req, run->filters[i]);
        ok &= !run->filters[i] || f[i].len > 0;
    }
    run->sr.alias_filter_json = f;
    return ok && ship_query_features(req, run);
}

/* 429 when the coordinator's request breaker refused the reduce, as Elasticsearch words it. */
static void write_reduce_breaker(sc_rest_req *req, sc_rest_resp *resp, const sc_search_response *r)
{
    char reason[256], wanted[24], limit[24];
    snprintf(reason, sizeof reason,
             "[request] Data too large, data for [<reduce_aggs>] would be [%llu/%.1fmb], which is "
             "larger than the limit of [%llu/%.1fmb]",
             (unsigned long long)r->breaker_wanted, (double)r->breaker_wanted / 1048576.0,
             (unsigned long long)r->breaker_limit, (double)r->breaker_limit / 1048576.0);
    snprintf(wanted, sizeof wanted, "%llu", (unsigned long long)r->breaker_wanted);
    snprintf(limit, sizeof limit, "%llu", (unsigned long long)r->breaker_limit);
    sc_rest_kv kv[] = {
        {"bytes_wanted", wanted}, {"bytes_limit", limit}, {"durability", "TRANSIENT"}};
    sc_rest_error(req, resp, 429, "circuit_breaking_exception", reason, kv, 3);
}

/* Appends s to the NUL-terminated buf[0..at) as far as cap allows; returns the new length
 * (the task description of every search, without snprintf's format parsing). */
static size_t desc_put(char *buf, size_t cap, size_t at, const char *s)
{
    size_t n = strnlen(s, cap - 1 - at);
    memcpy(buf + at, s, n);
    buf[at + n] = '\0';
    return at + n;
}

static bool search_run_impl(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                            const json_t *body, bool count, search_run *run, scroll_page *sc,
                            const sc_slice *doc_routing)
{
    memset(run, 0, sizeof *run);
    run->doc_routing = doc_routing;
    run->t0 = sc_clock_now_ns();
    if (!sc__search_parse(req, resp, body, &run->sp, count))
        return false;
    if (run->sp.slice_max && !sc) {
        json_decref(run->sp.owned_q), json_decref(run->sp.vec.owned);
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[slice] can only be used with [scroll] or [point-in-time] requests", NULL,
                      0);
        return false;
    }
    if (sc && sc->ctx) {
        /* A later page: the context's own indices, position and page size. */
        run->list = malloc((sc->ctx->n_indices ? sc->ctx->n_indices : 1) * sizeof *run->list);
        if (!run->list) {
            json_decref(run->sp.owned_q), json_decref(run->sp.vec.owned);
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            return false;
        }
        for (size_t i = 0; i < sc->ctx->n_indices; i++) {
            sc_index_ref(sc->ctx->indices[i]);
            run->list[i] = sc->ctx->indices[i];
        }
        run->n = sc->ctx->n_indices;
        if (sc->ctx->filters && !copy_filters(run, sc->ctx->filters)) {
            sc__search_run_fini(run);
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            return false;
        }
        if (!sc->pit) {
            run->sp.from = (int64_t)sc->ctx->position;
            run->sp.size = sc->ctx->size;
        }
    } else {
        sc_cluster_error err;
        sc_resolved res;
        sc_status st =
            sc_node_resolve_read(req->node, index_expr, sc__api_expand_flags(req), &res, &err);
        run->list = res.list;
        run->n = res.n;
        run->filters = res.filters;
        run->routings = res.routings;
        if (st != SC_OK) {
            json_decref(run->sp.owned_q), json_decref(run->sp.vec.owned);
            if (st == SC_ENOTFOUND)
                sc_rest_error_index_not_found(req, resp, err.index);
            else if (st == SC_ECLOSED || st == SC_EINVAL)
                sc__api_cluster_error(req, resp, &err);
            else
                sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
            return false;
        }
    }
    for (size_t i = 0; i < run->n; i++) {
        if (sc && sc->ctx && !sc->pit)
            break;
        if (!count && run->sp.from + run->sp.size > run->list[i]->settings.max_result_window) {
            char reason[512];
            snprintf(reason, sizeof reason,
                     "Result window is too large, from + size must be less than or equal to: "
                     "[%lld] but was [%lld]. See the scroll api for a more efficient way to "
                     "request large data sets. This limit can be set by changing the "
                     "[index.max_result_window] index level setting.",
                     (long long)run->list[i]->settings.max_result_window,
                     (long long)(run->sp.from + run->sp.size));
            sc_rest_error(req, resp, 400, "illegal_argument_exception", reason, NULL, 0);
            sc__search_run_fini(run);
            return false;
        }
        if (!count && !sc__search_check_sort(req, resp, &run->sp, run->list[i])) {
            sc__search_run_fini(run);
            return false;
        }
    }
    sc_query **queries = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *queries);
    if (!queries) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        sc__search_run_fini(run);
        return false;
    }
    sc_search_named *named = sc_arena_calloc(req->arena, run->n ? run->n : 1, sizeof *named);
    uint32_t dk = run->sp.size > 0 && run->sp.size <= UINT32_MAX ? (uint32_t)run->sp.size : 0;
    if (!named || !sc__search_build_queries_named(req, resp, run->sp.query, run->list, run->n,
                                                  queries, named, dk)) {
        if (!named)
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
        sc__search_run_fini(run);
        return false;
    }
    if (!apply_alias_filters(req, resp, run, queries)) {
        sc__search_run_fini(run);
        return false;
    }
    sc_query **rrf_queries, **knn_global;
    size_t n_rrf, n_knn_global;
    if (!sc__search_build_vector(req, resp, &run->sp, run->list, run->n, queries, &rrf_queries,
                                 &n_rrf, &knn_global, &n_knn_global)) {
        sc__search_run_fini(run);
        return false;
    }
    search_page page;
    if (!sc__search_page_build(req, resp, &run->sp, run->list, run->n, count, queries, named,
                               &page)) {
        sc__search_run_fini(run);
        return false;
    }
    sc_query **agg_queries = NULL;
    if (!count && !prepare_aggs(req, resp, run, queries, &agg_queries)) {
        sc__search_run_fini(run);
        return false;
    }
    if (run->sp.agg_spec) {
        run->agg.spec = run->sp.agg_spec;
        for (size_t i = 0; i < run->n; i++)
            run->agg.n_shards += run->list[i]->settings.number_of_shards;
        sc__agg_hook_init(&run->agg);
    }
    sc__search_resolve_sort(&run->sp, run->list, run->n);
    sc_sort_key *after = NULL;
    if (!sc__search_convert_after(req, resp, &run->sp, run->n ? run->list[0] : NULL, &after)) {
        sc__search_run_fini(run);
        return false;
    }
    if (sc && sc->opening) {
        char *text = scroll_body_text(body, &run->sp, sc_node_placement(req->node) != NULL);
        sc_status ost =
            sc_scroll_open(req->node, run->list, run->n, text, sc_rest_param_get(req, "routing"),
                           sc_rest_param_get(req, "preference"), (uint32_t)run->sp.size,
                           sc->keep_alive_ms, &sc->ctx);
        free(text);
        if (ost != SC_OK) {
            sc_rest_error(req, resp, 500, "exception", "cannot open the scroll context", NULL, 0);
            sc__search_run_fini(run);
            return false;
        }
        /* Later pages keep the alias filters of the first one. */
        sc->ctx->filters = run->filters;
        run->filters = NULL;
        if (sc->ctx->filters && !copy_filters(run, sc->ctx->filters)) {
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            sc__search_run_fini(run);
            return false;
        }
    }
    const uint64_t *const *only = NULL;
    if (!shard_selection(req, resp, run, sc ? sc->ctx : NULL, &only)) {
        if (sc && sc->opening && sc->ctx) /* freed by the handler's release */
            (void)sc_scroll_clear(req->node, sc->ctx->id);
        sc__search_run_fini(run);
        return false;
    }
    sc_task task;
    char desc[256];
    size_t dn = 0;
    dn = desc_put(desc, sizeof desc, dn, "indices[");
    dn = desc_put(desc, sizeof desc, dn, index_expr ? index_expr : "_all");
    dn = desc_put(desc, sizeof desc, dn, "], search_type[");
    dn = desc_put(desc, sizeof desc, dn, run->sp.dfs ? "DFS_QUERY_THEN_FETCH" : "QUERY_THEN_FETCH");
    (void)desc_put(desc, sizeof desc, dn, "]");
    /* the task runs since the request's start (one clock read for both) */
    sc_task_begin_at(req->node, &task, "indices:data/read/search", desc, run->t0);
    if (req->client_fd >= 0)
        sc_task_watch_client(req->node, &task, req->client_fd);
    run->sr = (sc_search_request){
        .indices = run->list,
        .queries = queries,
        .n_indices = run->n,
        .from = (uint32_t)run->sp.from,
        .size = (uint32_t)run->sp.size,
        .track_total_hits = count ? SC_TRACK_TOTAL_HITS_ALL : run->sp.track_total_hits,
        .timeout_ms = run->sp.timeout_ms,
        .count_only = count,
        .terminate_after = (uint64_t)run->sp.terminate_after,
        .fetch_source = run->sp.source || needs_source(run),
        .task = &task,
        .pinned = sc && sc->ctx && !sc->ctx->shards ? sc->ctx->pinned : NULL,
        .ctx = sc && sc->ctx && sc->ctx->shards ? sc->ctx : NULL,
        .dv_fields = run->sp.dv_fields,
        .n_dv_fields = run->sp.n_dv_fields,
        .sort = run->sp.sort,
        .n_sort = run->sp.n_sort,
        .search_after = after,
        .only_shards = only,
        .highlight = page.highlight,
        .versions = run->sp.version || run->sp.seq_no_primary_term,
        .named = page.named,
        .explain = run->sp.explain && !count,
        .explain_queries = agg_queries,
        .track_scores = run->sp.track_scores && !count,
        .rescore = page.rescore,
        .n_rescore = page.rescore ? run->sp.n_rescore : 0,
        .collapse = page.collapse,
        .has_min_score = run->sp.has_min_score,
        .min_score = run->sp.min_score,
        .index_boosts = page.index_boosts,
        .collect = run->sp.agg_spec ? &run->agg.hook : NULL,
        .rrf_queries = rrf_queries,
        .n_rrf = n_rrf,
        .rrf_window = run->sp.vec.rank_window,
        .rrf_rank_constant = run->sp.vec.rank_constant,
        .knn_cap = sc__search_knn_cap(&run->sp),
        .pre_filter_shard_size = run->sp.pre_filter_shard_size,
        .max_concurrent_shard_requests = run->sp.max_concurrent_shard_requests,
        .batched_reduce_size = run->sp.batched_reduce_size,
        .dfs = run->sp.dfs,
        .profile = run->sp.profile && !count,
        .knn_global = knn_global,
        .n_knn_global = n_knn_global};
    run->sp.node_id = sc_node_id(req->node);
    if (run->sr.ctx && !ctx_supported(req, resp, run, sc)) {
        if (sc->opening) /* freed by the handler's release */
            (void)sc_scroll_clear(req->node, sc->ctx->id);
        sc_task_end(req->node, &task);
        sc__search_run_fini(run);
        return false;
    }
    if (sc_node_placement(req->node)) {
        if (!ship_json(req, body, run)) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            sc_task_end(req->node, &task);
            sc__search_run_fini(run);
            return false;
        }
    }
    sc_status st = sc_search_run(req->node, &run->sr, req->arena, &run->r);
    sc_task_end(req->node, &task);
    run->sr.task = NULL;
    if (st == SC_ECANCELLED) {
        sc_rest_error(req, resp, 400, "task_cancelled_exception", "task cancelled", NULL, 0);
        sc__search_run_fini(run);
        return false;
    }
    if (st == SC_ELIMIT && run->r.breaker_limit) {
        write_reduce_breaker(req, resp, &run->r);
        sc__search_run_fini(run);
        return false;
    }
    if (st == SC_ELIMIT || st == SC_ENOMEM) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large, data for [<search>] would be larger than the "
                      "limit",
                      NULL, 0);
        sc__search_run_fini(run);
        return false;
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "search_phase_execution_exception", sc_status_str(st), NULL,
                      0);
        sc__search_run_fini(run);
        return false;
    }
    if (run->r.shards_failed > 0 &&
        !sc_rest_param_bool(req, "allow_partial_search_results", true)) {
        sc_rest_errorf(req, resp, 503, "search_phase_execution_exception",
                       "Partial shards failure (%u shards unavailable)", run->r.shards_failed);
        sc__search_run_fini(run);
        return false;
    }
    if (run->r.shards_total > 0 && run->r.shards_failed == run->r.shards_total) {
        sc__search_write_all_failed(req, resp, &run->sr, &run->r);
        sc__search_run_fini(run);
        return false;
    }
    if (run->sp.agg_spec) {
        /* the coordinator's final reduce and finalize */
        sc_agg_error aerr;
        st = sc__agg_final(&run->agg, run->r.agg_result, req->arena, &run->sp.agg_result, &aerr);
        if (st == SC_ELIMIT && aerr.too_many_buckets) {
            char max[24];
            snprintf(max, sizeof max, "%d", SC_AGG_DEFAULT_MAX_BUCKETS);
            sc_rest_kv kv[] = {{"max_buckets", max}};
            sc_rest_error(req, resp, 400, "too_many_buckets_exception", aerr.reason, kv, 1);
            sc__search_run_fini(run);
            return false;
        }
        if (st == SC_EINVAL && aerr.reason[0]) {
            /* a pipeline script failed at run time */
            sc_rest_error(req, resp, 400, "script_exception", aerr.reason, NULL, 0);
            sc__search_run_fini(run);
            return false;
        }
        if (st != SC_OK) {
            sc_rest_error(req, resp, st == SC_ECORRUPT ? 500 : 429,
                          st == SC_ECORRUPT ? "exception" : "circuit_breaking_exception",
                          "[request] Data too large for the aggregations' final reduce", NULL, 0);
            sc__search_run_fini(run);
            return false;
        }
    }
    if (!count && !sc__search_run_suggest(req, resp, &run->sp, run->list, run->n)) {
        sc__search_run_fini(run);
        return false;
    }
    if (!count && run->sp.collapse_inner &&
        !sc__search_expand_collapse(req, resp, index_expr, run)) {
        sc__search_run_fini(run);
        return false;
    }
    uint64_t took_ms = (sc_clock_now_ns() - run->t0) / 1000000;
    for (size_t i = 0; i < run->n; i++) {
        atomic_fetch_add(&run->list[i]->n_search_queries, 1);
        atomic_fetch_add(&run->list[i]->search_time_ns, took_ms * 1000000 / (run->n ? run->n : 1));
    }
    return true;
}

bool sc__search_run_ex(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                       const json_t *body, bool count, search_run *run, scroll_page *sc)
{
    return search_run_impl(req, resp, index_expr, body, count, run, sc, NULL);
}

bool sc__search_run_one(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                        const json_t *body, bool count, search_run *run)
{
    return search_run_impl(req, resp, index_expr, body, count, run, NULL, NULL);
}

bool sc__search_run_doc(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                        const json_t *body, sc_slice doc_routing, search_run *run)
{
    return search_run_impl(req, resp, index_expr, body, false, run, NULL, &doc_routing);
}

/* Writes a search page; with a scroll, adds _scroll_id and advances the context. */
void sc__search_respond_page(sc_rest_req *req, sc_rest_resp *resp, search_run *run, sc_scroll *ctx)
{
    bool pit = ctx && ctx->pit;
    uint64_t took_ms = (sc_clock_now_ns() - run->t0) / 1000000;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    if (ctx) {
        /* "_scroll_id" leads the object as in Elasticsearch. */
        sc_buf inner = {0};
        sc_jsonw iw;
        sc_jsonw_init(&iw, &inner, false);
        sc__search_write_response(&iw, &run->sr, &run->r, &run->sp, took_ms, 0);
        if (sc_jsonw_finish(&iw) != SC_OK || inner.len < 2) {
            sc_vec_free(&inner);
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
            return;
        }
        json_error_t jerr;
        json_t *obj = json_loadb((const char *)inner.ptr, inner.len, 0, &jerr);
        sc_vec_free(&inner);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, pit ? "pit_id" : "_scroll_id", ctx->wire_id ? ctx->wire_id : ctx->id);
        const char *k;
        json_t *v;
        json_object_foreach (obj, k, v) {
            sc_jsonw_key(&w, k);
            sc__api_json_write(&w, v);
        }
        sc_jsonw_obj_end(&w);
        json_decref(obj);
        if (!pit)
            ctx->position += run->r.n_hits;
    } else {
        sc__search_write_response(&w, &run->sr, &run->r, &run->sp, took_ms, 0);
    }
    sc_rest_json_end(req, resp, &w);
}

/* The search of sc_api_search with its parsed body (borrowed; the "pit" key may be removed). */
static void search_with_body(sc_rest_req *req, sc_rest_resp *resp, json_t *body)
{
    const char *keep = sc_rest_param_get(req, "scroll");
    scroll_page sp = {0};
    if (keep) {
        if (!sc_time_parse_ms(keep, &sp.keep_alive_ms) || sp.keep_alive_ms <= 0) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "failed to parse setting [scroll]", NULL, 0);
            return;
        }
        sp.opening = true;
    }
    json_t *pit = body ? json_object_get(body, "pit") : NULL;
    if (pit) {
        json_t *pid = json_object_get(pit, "id");
        json_t *pka = json_object_get(pit, "keep_alive");
        int64_t ka = 0;
        if (!json_is_string(pid) ||
            (pka && (!json_is_string(pka) || !sc_time_parse_ms(json_string_value(pka), &ka)))) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[pit] requires a string [id]", NULL,
                          0);
            return;
        }
        if (req->index || keep) {
            sc_rest_error(req, resp, 400, "action_request_validation_exception",
                          req->index ? "Validation Failed: 1: [indices] cannot be used with "
                                       "point in time;"
                                     : "Validation Failed: 1: using [point in time] is not "
                                       "allowed in a scroll context;",
                          NULL, 0);
            return;
        }
        const char *local = NULL;
        if (!sc__api_ctx_route(req, resp, json_string_value(pid), &local)) {
            return; /* forwarded to the coordinator, or a 400 */
        }
        sp.ctx = sc_scroll_acquire(req->node, local, ka, true);
        if (!sp.ctx) {
            sc_rest_error(req, resp, 404, "search_context_missing_exception",
                          "No search context found for the point in time id", NULL, 0);
            return;
        }
        sp.pit = true;
        /* The body's "pit" key is not a search option: parse the rest. */
        json_object_del(body, "pit");
    }
    search_run run;
    bool ok = sc__search_run_ex(req, resp, req->index, body, false, &run, keep || pit ? &sp : NULL);
    if (ok) {
        sc__search_respond_page(req, resp, &run, sp.ctx);
        sc__search_run_fini(&run);
    }
    if (sp.ctx)
        sc_scroll_release(req->node, sp.ctx);
}

/* The _search and _count bodies are parsed into the request arena (base/json.h, a scope per
 * request): the tree dies with the request and nothing in the search path keeps it (a scroll
 * keeps the body as text, aliases' filters come from the cluster state). */
void sc_api_search(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    sc_json_arena_scope js;
    sc_json_arena_begin(&js, req->arena);
    bool ok = sc__api_body_json(req, resp, false, &body);
    sc_json_arena_hold(&js);
    if (ok)
        search_with_body(req, resp, body);
    json_decref(body);
    sc_json_arena_end(&js);
}

void sc_api_count(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    sc_json_arena_scope js;
    sc_json_arena_begin(&js, req->arena);
    bool parsed = sc__api_body_json(req, resp, false, &body);
    sc_json_arena_hold(&js);
    if (!parsed) {
        sc_json_arena_end(&js);
        return;
    }
    search_run run;
    bool ok = sc__search_run_one(req, resp, req->index, body, true, &run);
    if (ok) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_int(&w, "count", (int64_t)run.r.total);
        if (run.sp.terminate_after) /* as Elasticsearch: only when terminate_after was given */
            sc_jsonw_kv_bool(&w, "terminated_early", run.r.terminated_early);
        sc__search_write_shards(&w, &run.sr, &run.r);
        sc_jsonw_obj_end(&w);
        sc_rest_json_end(req, resp, &w);
        sc__search_run_fini(&run);
    }
    json_decref(body);
    sc_json_arena_end(&js);
}
