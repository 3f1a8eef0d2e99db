/* Scroll pages (`/_search/scroll`), clearing scrolls, and point in time open/close: the
 * contexts live in cluster/scroll.c; each page runs as a search (api_search.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_run.h"
#include "base/clock.h"
#include "api/forward.h"
#include "cluster/alias.h"
#include "cluster/ctx_wire.h"
#include "cluster/node.h"
#include "cluster/search_ctx.h"

/* The scroll id and keep-alive from the body or the URL. */
static const char *scroll_id_of(sc_rest_req *req, const json_t *body, int64_t *keep_ms)
{
    const char *id = req->extra ? req->extra : sc_rest_param_get(req, "scroll_id");
    const char *keep = sc_rest_param_get(req, "scroll");
    if (body) {
        json_t *v = json_object_get(body, "scroll_id");
        if (json_is_string(v))
            id = json_string_value(v);
        v = json_object_get(body, "scroll");
        if (json_is_string(v))
            keep = json_string_value(v);
    }
    *keep_ms = 0;
    if (keep && !sc_time_parse_ms(keep, keep_ms))
        *keep_ms = -1;
    return id;
}

bool sc__api_ctx_route(sc_rest_req *req, sc_rest_resp *resp, const char *id, const char **local)
{
    *local = id;
    if (!sc_node_placement(req->node))
        return true;
    sc_ctx_id cid;
    if (sc_ctx_id_parse(id, req->arena, &cid) != SC_OK) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception", "Cannot parse %s id [%.100s]",
                       strstr(req->path, "_scroll") ? "scroll" : "search context", id);
        return false;
    }
    char node[64];
    snprintf(node, sizeof node, "%.*s", (int)cid.coordinator.len,
             (const char *)cid.coordinator.ptr);
    if (!strcmp(node, sc_node_id(req->node))) {
        char *lid = sc_arena_alloc(req->arena, 96);
        if (!lid) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            return false;
        }
        sc_scroll_id_of(req->node, cid.coordinator_seq, lid, 96);
        *local = lid;
        return true;
    }
    sc_shard_location loc = {.known = true, .assigned = true};
    snprintf(loc.node_id, sizeof loc.node_id, "%s", node);
    if (req->forwarded ||
        !sc_search_ctx_node_addr(req->node, node, loc.host, sizeof loc.host, &loc.port)) {
        sc_rest_errorf(req, resp, 404, "search_context_missing_exception",
                       "No search context found for id [%.100s]: its coordinating node [%s] is "
                       "not in the cluster",
                       id, node);
        return false;
    }
    /* the coordinating node holds the context's state: the page runs there */
    sc__api_forward(req, resp, &loc, NULL, NULL, req->body);
    if (resp->status == 502) /* it died: its context with it */
        sc_rest_errorf(req, resp, 404, "search_context_missing_exception",
                       "No search context found for id [%.100s]: its coordinating node [%s] "
                       "cannot be reached",
                       id, node);
    return false;
}

void sc_api_scroll(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    int64_t keep_ms;
    const char *id = scroll_id_of(req, body, &keep_ms);
    if (!id || keep_ms < 0) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      keep_ms < 0 ? "Validation Failed: 1: invalid [scroll];"
                                  : "Validation Failed: 1: scrollId is missing;",
                      NULL, 0);
        return;
    }
    id = sc_arena_strndup(req->arena, id, strlen(id));
    json_decref(body);
    const char *local = NULL;
    if (!id || !sc__api_ctx_route(req, resp, id, &local))
        return; /* forwarded to the coordinator, or an error */
    scroll_page sp = {.ctx = sc_scroll_acquire(req->node, local, keep_ms, false)};
    if (!sp.ctx) {
        char reason[256];
        snprintf(reason, sizeof reason, "No search context found for id [%.100s]", id);
        sc_rest_error(req, resp, 404, "search_context_missing_exception", reason, NULL, 0);
        return;
    }
    json_t *sbody = NULL;
    if (sp.ctx->body) {
        json_error_t jerr;
        sbody = json_loads(sp.ctx->body, 0, &jerr);
    }
    /* The page request's own URL parameters (size, q, ...) must not apply: parse with none. */
    size_t saved = req->n_params;
    req->n_params = 0;
    search_run run;
    bool ok = sc__search_run_ex(req, resp, NULL, sbody, false, &run, &sp);
    req->n_params = saved;
    if (ok) {
        sc__search_respond_page(req, resp, &run, sp.ctx);
        sc__search_run_fini(&run);
    }
    json_decref(sbody);
    sc_scroll_release(req->node, sp.ctx);
}

/* Frees one scroll or point in time by its id: clustered, on every node the id names. */
static size_t clear_one(sc_rest_req *req, const char *id)
{
    sc_ctx_id cid;
    if (sc_node_placement(req->node) && sc_ctx_id_parse(id, req->arena, &cid) == SC_OK)
        return sc_search_ctx_free(req->node, &cid);
    return sc_scroll_clear(req->node, id);
}

void sc_api_scroll_clear(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    size_t freed = 0;
    bool all = strstr(req->path, "/_all") != NULL;
    if (all && sc_node_placement(req->node) && !req->forwarded) {
        freed = sc_search_ctx_free_all(req->node); /* every node's scrolls */
    } else if (all) { /* every scroll, not the points in time (as Elasticsearch) */
        freed = sc_scroll_clear_ex(req->node, NULL, true, NULL);
    } else {
        json_t *ids = body ? json_object_get(body, "scroll_id") : NULL;
        const char *one = req->extra ? req->extra : sc_rest_param_get(req, "scroll_id");
        if (json_is_string(ids))
            freed += clear_one(req, json_string_value(ids));
        else if (json_is_array(ids)) {
            size_t i;
            json_t *x;
            json_array_foreach (ids, i, x)
                if (json_is_string(x))
                    freed += clear_one(req, json_string_value(x));
        } else if (one) {
            char *copy = sc_arena_strndup(req->arena, one, strlen(one));
            char *save = NULL;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
                 t = strtok_r(NULL, ",", &save))
                freed += clear_one(req, t);
        } else {
            json_decref(body);
            sc_rest_error(req, resp, 400, "action_request_validation_exception",
                          "Validation Failed: 1: no scroll ids specified;", NULL, 0);
            return;
        }
    }
    json_decref(body);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, freed || all ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "succeeded", true);
    sc_jsonw_kv_int(&w, "num_freed", (int64_t)freed);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_pit_open(sc_rest_req *req, sc_rest_resp *resp)
{
    const char *keep = sc_rest_param_get(req, "keep_alive");
    int64_t ka;
    if (!keep || !sc_time_parse_ms(keep, &ka) || ka <= 0) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [keep_alive] is missing or invalid;", NULL, 0);
        return;
    }
    sc_resolved res;
    sc_cluster_error err;
    sc_status st =
        sc_node_resolve_read(req->node, req->index, sc__api_expand_flags(req), &res, &err);
    sc_index **list = res.list;
    size_t n = res.n;
    if (st != SC_OK) {
        if (st == SC_ENOTFOUND)
            sc_rest_error_index_not_found(req, resp, err.index);
        else if (st == SC_ECLOSED || st == SC_EINVAL)
            sc__api_cluster_error(req, resp, &err);
        else
            sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    sc_scroll *ctx;
    uint32_t shards = 0;
    for (size_t i = 0; i < n; i++)
        shards += list[i]->settings.number_of_shards;
    st = sc_scroll_open(req->node, list, n, NULL, sc_rest_param_get(req, "routing"),
                        sc_rest_param_get(req, "preference"), 0, ka, &ctx);
    if (st == SC_OK) {
        /* Searches of the point in time keep the alias filters. */
        ctx->filters = res.filters;
        res.filters = NULL;
    }
    sc_resolved_fini(&res);
    uint32_t failed = 0;
    if (st == SC_OK) {
        ctx->pit = true;
        if (ctx->shards) { /* clustered: a context on every shard's node */
            uint32_t ok = 0;
            st = sc_search_ctx_open_pit(req->node, ctx, &ok, &failed);
            if (st == SC_OK && !ok && shards) {
                sc_rest_error(req, resp, 503, "search_phase_execution_exception",
                              "all shards failed: no search context could be opened", NULL, 0);
                sc_scroll_release(req->node, ctx);
                (void)sc_scroll_clear(req->node, ctx->id);
                return;
            }
        }
        if (st != SC_OK) {
            sc_scroll_release(req->node, ctx);
            (void)sc_scroll_clear(req->node, ctx->id);
        }
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", "cannot open the point in time", NULL, 0);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "id", ctx->wire_id ? ctx->wire_id : ctx->id);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", shards);
    sc_jsonw_kv_int(&w, "successful", shards - failed);
    sc_jsonw_kv_int(&w, "skipped", 0);
    sc_jsonw_kv_int(&w, "failed", failed);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_scroll_release(req->node, ctx);
}

void sc_api_pit_close(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    json_t *id = json_object_get(body, "id");
    if (!json_is_string(id)) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [id] is missing;", NULL, 0);
        return;
    }
    size_t freed = clear_one(req, json_string_value(id));
    json_decref(body);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, freed ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "succeeded", true);
    sc_jsonw_kv_int(&w, "num_freed", (int64_t)freed);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}
