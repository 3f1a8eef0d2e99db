/* GET|POST [/{index}]/_validate/query: parses the body's query (or ?q=) with each target
 * index's mapping, as a search would, without running it. `valid` is false when any index
 * cannot parse it; with ?explain=true each index gets an entry with the parsed query in
 * Lucene's string form (search/query.h) or the parse error. */
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_internal.h"
#include "cluster/node.h"
#include "search/query.h"

typedef struct validated {
    bool valid;
    const char *text; /* explanation or error (arena) */
} validated;

static validated validate_one(sc_rest_req *req, sc_index *ix, const json_t *q)
{
    sc_query *tree = NULL;
    sc_dsl_error err;
    memset(&err, 0, sizeof err);
    sc_status st = sc__search_parse_query(req->arena, ix, q, &tree, &err);
    if (st != SC_OK) {
        const char *why = err.reason[0] ? err.reason : sc_status_str(st);
        size_t n = strlen(why) + strlen(err.type ? err.type : "parsing_exception") + 8;
        char *t = sc_arena_alloc(req->arena, n);
        if (t)
            snprintf(t, n, "[%s] %s", err.type ? err.type : "parsing_exception", why);
        return (validated){false, t ? t : why};
    }
    size_t n = sc_query_to_string(tree, NULL, 0) + 1;
    char *t = sc_arena_alloc(req->arena, n);
    if (t)
        sc_query_to_string(tree, t, n);
    return (validated){true, t ? t : ""};
}

void sc_api_validate_query(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    const json_t *q = body ? json_object_get(body, "query") : NULL;
    json_t *owned = NULL;
    const char *qs = sc_rest_param_get(req, "q");
    if (!q && qs)
        q = owned = json_pack("{s:{s:s}}", "query_string", "query", qs);
    if (!q)
        q = owned = json_pack("{s:{}}", "match_all");
    const char *ex = sc_rest_param_get(req, "explain");
    bool explain = ex && (!*ex || !strcmp(ex, "true"));
    sc_index **list = NULL;
    size_t n = 0;
    sc_cluster_error cerr;
    sc_status st = sc_node_resolve(req->node, req->index, &list, &n, &cerr);
    if (st != SC_OK) {
        if (st == SC_ENOTFOUND)
            sc_rest_error_index_not_found(req, resp, cerr.index);
        else
            sc__api_cluster_error(req, resp, &cerr);
        json_decref(owned), json_decref(body);
        return;
    }
    validated *v = sc_arena_calloc(req->arena, n ? n : 1, sizeof *v);
    bool valid = v != NULL && json_is_object(q);
    for (size_t i = 0; v && json_is_object(q) && i < n; i++) {
        v[i] = validate_one(req, list[i], q);
        valid &= v[i].valid;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", (int64_t)n);
    sc_jsonw_kv_int(&w, "successful", (int64_t)n);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_bool(&w, "valid", valid);
    if (explain && v) {
        sc_jsonw_key(&w, "explanations");
        sc_jsonw_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "index", list[i]->name);
            bool ok = json_is_object(q) && v[i].valid;
            sc_jsonw_kv_bool(&w, "valid", ok);
            sc_jsonw_kv_str(&w, ok ? "explanation" : "error",
                            json_is_object(q) ? v[i].text : "[query] must be an object");
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
    }
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_node_release(list, n);
    json_decref(owned), json_decref(body);
}
