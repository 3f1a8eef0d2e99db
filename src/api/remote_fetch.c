/* The fetch-phase extras on a data node (issue 14; remote.h): for a node fetch request with
 * fetch flags, the query shipped by the coordinator is parsed again with this node's mappings
 * (each index's `_name`d queries and nested inner_hits collected, its alias filter applied, as
 * the single-node search builds them), the highlight object resolved against the same trees,
 * and the search request that sc_node_fetch_phase reads (highlight specs, versions, named
 * queries, explain with the dfs statistics) is filled in. remote_search.c runs the fetch. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/forward.h"
#include "api/remote_internal.h"
#include "api/search_internal.h"

static json_t *load_json(sc_slice s)
{
    /* as the REST layer: a string may hold NUL bytes (an escaped NUL in an _id) */
    return s.len ? json_loadb((const char *)s.ptr, s.len, JSON_ALLOW_NUL, NULL) : NULL;
}

/* Index i's query tree (with its alias filter) and named queries. false with rf->reason. */
static bool build_query(sc__remote_fetch *rf, const sc_wire_node_fetch *f, sc_arena *a, size_t i)
{
    sc_dsl_error derr;
    sc_query *q = NULL;
    sc_search_named *named = f->flags & SC_WIRE_FETCH_NAMED ? &rf->named[i] : NULL;
    if (!rf->qj)
        q = sc_query_match_all(a);
    else if (sc__search_parse_query_named(a, rf->list[i], rf->qj, &q, &derr, named) != SC_OK)
        q = NULL, snprintf(rf->reason, sizeof rf->reason, "%s", derr.reason);
    if (!q)
        return false;
    sc_slice fs = f->index_filters ? f->index_filters[i] : sc_slice_make(NULL, 0);
    if (fs.len) {
        json_t *fj = load_json(fs);
        sc_query *flt = NULL, *b = sc_query_bool(a);
        bool ok = fj && sc__search_parse_query(a, rf->list[i], fj, &flt, &derr) == SC_OK;
        json_decref(fj);
        if (!ok) {
            snprintf(rf->reason, sizeof rf->reason, "alias filter: %s",
                     fj ? derr.reason : "not JSON");
            return false;
        }
        if (!b || sc_query_bool_add(a, b, SC_OCCUR_MUST, q) != SC_OK ||
            sc_query_bool_add(a, b, SC_OCCUR_FILTER, flt) != SC_OK)
            return false;
        q = b;
    }
    rf->queries[i] = q;
    return true;
}

/* The highlight specs of every index, resolved as the coordinator resolved its own. */
static bool build_highlight(sc__remote_fetch *rf, sc_node *node, sc_arena *a)
{
    sc_rest_req req = {.arena = a, .node = node, .client_fd = -1, .forwarded = true};
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    search_parse sp;
    memset(&sp, 0, sizeof sp);
    bool ok = sc__search_parse_highlight(&req, &resp, rf->hlj, &sp) &&
              sc__search_build_highlight(&req, &resp, &sp, rf->list, rf->n, rf->queries,
                                         &rf->sr.highlight);
    if (!ok)
        snprintf(rf->reason, sizeof rf->reason, "highlight: %.*s",
                 (int)(resp.body.len > 200 ? 200 : resp.body.len), (const char *)resp.body.ptr);
    sc_rest_resp_fini(&resp);
    return ok;
}

sc_status sc__remote_fetch_prepare(sc_node *node, const sc_wire_node_fetch *f, sc_arena *a,
                                   sc__remote_fetch *rf)
{
    memset(rf, 0, sizeof *rf);
    size_t ni = f->n_indices;
    rf->n = ni;
    rf->list = calloc(ni ? ni : 1, sizeof *rf->list);
    rf->queries = sc_arena_calloc(a, ni ? ni : 1, sizeof *rf->queries);
    rf->named = sc_arena_calloc(a, ni ? ni : 1, sizeof *rf->named);
    if (!rf->list || !rf->queries || !rf->named)
        return SC_ENOMEM;
    rf->qj = load_json(f->query_json);
    rf->hlj = load_json(f->highlight_json);
    if ((f->query_json.len && !rf->qj) || (f->highlight_json.len && !rf->hlj) ||
        (!rf->hlj) != !(f->flags & SC_WIRE_FETCH_HIGHLIGHT))
        return SC_ECORRUPT;
    for (size_t i = 0; i < ni; i++) {
        char *name =
            sc_arena_strndup(a, (const char *)f->index_names[i].ptr, f->index_names[i].len);
        sc_rest_req wreq = {.arena = a, .node = node, .client_fd = -1, .forwarded = true};
        rf->list[i] = name ? sc__api_wait_index(&wreq, name) : NULL;
        if (!rf->list[i]) {
            snprintf(rf->reason, sizeof rf->reason, "index [%s] missing on the data node",
                     name ? name : "?");
            return SC_ENOTFOUND;
        }
        if (!build_query(rf, f, a, i))
            return rf->reason[0] ? SC_EPARSE : SC_ENOMEM;
    }
    rf->sr = (sc_search_request){.indices = rf->list,
                                 .queries = rf->queries,
                                 .n_indices = ni,
                                 .versions = f->flags & SC_WIRE_FETCH_VERSIONS,
                                 .explain = f->flags & SC_WIRE_FETCH_EXPLAIN};
    bool any_named = false;
    for (size_t i = 0; i < ni; i++)
        any_named |= rf->named[i].n > 0 || rf->named[i].n_inner > 0;
    rf->sr.named = any_named ? rf->named : NULL;
    if (rf->hlj && !build_highlight(rf, node, a))
        return SC_EPARSE;
    return SC_OK;
}

void sc__remote_fetch_fini(sc__remote_fetch *rf)
{
    for (size_t i = 0; rf->list && i < rf->n; i++)
        if (rf->list[i])
            sc_index_unref(rf->list[i]);
    free(rf->list);
    json_decref(rf->qj);
    json_decref(rf->hlj);
    memset(rf, 0, sizeof *rf);
}
