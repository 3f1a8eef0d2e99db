/* Alias endpoints: POST /_aliases (add / remove / remove_index actions, applied atomically),
 * PUT|POST|DELETE /{index}/_alias(es)/{name}, GET|HEAD /_alias[/{name}], /{index}/_alias[/{name}]
 * and GET /_cat/aliases[/{name}]. The aliases themselves live in cluster/alias.c. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_internal.h"
#include "cluster/alias.h"

typedef struct actions {
    sc_alias_action *a;
    size_t len, cap;
} actions;

static bool push(sc_rest_req *req, actions *v, sc_alias_action act)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        sc_alias_action *p = sc_arena_alloc(req->arena, cap * sizeof *p);
        if (!p)
            return false;
        if (v->len)
            memcpy(p, v->a, v->len * sizeof *p);
        v->a = p;
        v->cap = cap;
    }
    v->a[v->len++] = act;
    return true;
}

/* The strings of a "index"/"indices" style pair: one string or an array of strings. */
static bool names_of(const json_t *one, const json_t *many, const char **out, size_t cap, size_t *n)
{
    *n = 0;
    if (json_is_string(one))
        out[(*n)++] = json_string_value(one);
    else if (one)
        return false;
    if (json_is_string(many)) {
        out[(*n)++] = json_string_value(many);
    } else if (json_is_array(many)) {
        size_t i;
        json_t *v;
        json_array_foreach (many, i, v) {
            if (!json_is_string(v) || *n == cap)
                return false;
            out[(*n)++] = json_string_value(v);
        }
    } else if (many) {
        return false;
    }
    return true;
}

static void validation_error(sc_rest_req *req, sc_rest_resp *resp, const char *what)
{
    sc_rest_errorf(req, resp, 400, "action_request_validation_exception",
                   "Validation Failed: 1: %s;", what);
}

/* Checks that an alias filter is a query (parsed without an index, as a shape check). */
static bool filter_ok(sc_rest_req *req, sc_rest_resp *resp, const json_t *props)
{
    const json_t *f = json_object_get(props, "filter");
    if (!f)
        return true;
    if (!json_is_object(f)) {
        sc_rest_error(req, resp, 400, "parsing_exception", "[filter] must be an object", NULL, 0);
        return false;
    }
    return sc__search_build_queries(req, resp, f, NULL, 0, NULL);
}

/* Expands one {"add"|"remove"|"remove_index": {...}} into actions. */
static bool parse_action(sc_rest_req *req, sc_rest_resp *resp, const json_t *item, actions *out)
{
    const char *kind;
    json_t *body;
    if (!json_is_object(item) || json_object_size(item) != 1) {
        validation_error(req, resp, "each action must be an object with one key");
        return false;
    }
    json_object_foreach ((json_t *)item, kind, body)
        break;
    sc_alias_op op = !strcmp(kind, "add")            ? SC_ALIAS_ADD
                     : !strcmp(kind, "remove")       ? SC_ALIAS_REMOVE
                     : !strcmp(kind, "remove_index") ? SC_ALIAS_REMOVE_INDEX
                                                     : (sc_alias_op)-1;
    if ((int)op < 0 || !json_is_object(body)) {
        sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                       "[alias_action] unknown field [%.100s]", kind);
        return false;
    }
    const char *ixs[64], *als[64];
    size_t n_ix, n_al;
    if (!names_of(json_object_get(body, "index"), json_object_get(body, "indices"), ixs, 64,
                  &n_ix) ||
        !names_of(json_object_get(body, "alias"), json_object_get(body, "aliases"), als, 64,
                  &n_al)) {
        validation_error(req, resp, "index, indices, alias and aliases must be strings");
        return false;
    }
    if (n_ix == 0) {
        validation_error(req, resp, "One of [index] or [indices] is required");
        return false;
    }
    if (op != SC_ALIAS_REMOVE_INDEX && n_al == 0) {
        validation_error(req, resp, "One of [alias] or [aliases] is required");
        return false;
    }
    static const char *const known[] = {
        "index",         "indices",        "alias",          "aliases",   "filter",     "routing",
        "index_routing", "search_routing", "is_write_index", "is_hidden", "must_exist", NULL};
    const char *key;
    json_t *val;
    json_object_foreach (body, key, val) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(key, *k);
        if (!ok) {
            sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                           "[%s] unknown field [%.100s]", kind, key);
            return false;
        }
    }
    if (op == SC_ALIAS_ADD && !filter_ok(req, resp, body))
        return false;
    if (op == SC_ALIAS_REMOVE_INDEX)
        n_al = 1, als[0] = NULL;
    const json_t *me = json_object_get(body, "must_exist");
    for (size_t i = 0; i < n_ix; i++)
        for (size_t k = 0; k < n_al; k++)
            if (!push(req, out,
                      (sc_alias_action){.op = op,
                                        .index = ixs[i],
                                        .alias = als[k],
                                        .props = body,
                                        .must_exist = !json_is_false(me)})) {
                sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                              "[request] Data too large for the request budget", NULL, 0);
                return false;
            }
    return true;
}

static void apply(sc_rest_req *req, sc_rest_resp *resp, const actions *acts)
{
    sc_cluster_error err;
    sc_status st = sc_node_aliases_update(req->node, acts->a, acts->len, &err);
    if (st == SC_ENOMEM) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "acknowledged", true);
    sc_jsonw_kv_bool(&w, "errors", false);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_aliases_update(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    json_t *list = json_object_get(body, "actions");
    if (!json_is_array(list) || json_array_size(list) == 0) {
        json_decref(body);
        validation_error(req, resp, "no actions specified");
        return;
    }
    actions acts = {0};
    size_t i;
    json_t *item;
    json_array_foreach (list, i, item) {
        if (!parse_action(req, resp, item, &acts)) {
            json_decref(body);
            return;
        }
    }
    apply(req, resp, &acts);
    json_decref(body);
}

/* Splits a comma-separated path part into actions of one kind. */
static bool split_into(sc_rest_req *req, const char *indices, const char *names, sc_alias_op op,
                       const json_t *props, actions *out)
{
    char *ic = sc_arena_strndup(req->arena, indices, strlen(indices));
    if (!ic)
        return false;
    char *s1 = NULL;
    for (char *ix = strtok_r(ic, ",", &s1); ix; ix = strtok_r(NULL, ",", &s1)) {
        char *nc = sc_arena_strndup(req->arena, names, strlen(names));
        if (!nc)
            return false;
        char *s2 = NULL;
        for (char *al = strtok_r(nc, ",", &s2); al; al = strtok_r(NULL, ",", &s2))
            if (!push(req, out,
                      (sc_alias_action){
                          .op = op, .index = ix, .alias = al, .props = props, .must_exist = true}))
                return false;
    }
    return true;
}

void sc_api_alias_put(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body = NULL;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    if (body && !json_is_object(body)) {
        json_decref(body);
        sc_rest_error(req, resp, 400, "parsing_exception", "the body must be an object", NULL, 0);
        return;
    }
    json_t *props = body ? body : json_object();
    json_object_del(props, "_data_stream");
    actions acts = {0};
    if (filter_ok(req, resp, props)) {
        if (split_into(req, req->index, req->extra, SC_ALIAS_ADD, props, &acts))
            apply(req, resp, &acts);
        else
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
    }
    json_decref(props);
}

void sc_api_alias_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    actions acts = {0};
    if (split_into(req, req->index, req->extra, SC_ALIAS_REMOVE, NULL, &acts))
        apply(req, resp, &acts);
    else
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
}

/* Whether alias matches one of the comma-separated names / patterns (NULL = all). */
static bool name_matches(const char *names, const char *alias)
{
    if (!names || !*names || !strcmp(names, "_all") || !strcmp(names, "*"))
        return true;
    size_t len = strlen(names);
    char buf[512];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, names, len + 1);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (fnmatch(t, alias, 0) == 0)
            return true;
    return false;
}

/* The first concrete name of `names` that no index has as an alias, or NULL. */
static const char *first_missing(sc_rest_req *req, const char *names, json_t **al, size_t n)
{
    if (!names)
        return NULL;
    char *buf = sc_arena_strndup(req->arena, names, strlen(names));
    char *save = NULL;
    for (char *t = buf ? strtok_r(buf, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        if (strpbrk(t, "*?") || !strcmp(t, "_all"))
            continue;
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = json_object_get(al[i], t) != NULL;
        if (!found)
            return t;
    }
    return NULL;
}

void sc_api_alias_get(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    sc_cluster_error err;
    sc_status st =
        sc_node_resolve_ex(req->node, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n, &err);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    const char *names = req->extra;
    json_t **al = sc_arena_calloc(req->arena, n ? n : 1, sizeof *al);
    for (size_t i = 0; al && i < n; i++)
        al[i] = sc_index_aliases(list[i]);
    const char *missing = al ? first_missing(req, names, al, n) : NULL;
    bool head = req->method == SC_REST_HEAD;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, missing ? 404 : 200, &w);
    sc_jsonw_obj_begin(&w);
    if (missing) {
        sc_jsonw_kv_str(&w, "error", sc__api_fmt(req, "alias [%s] missing", missing));
        sc_jsonw_kv_int(&w, "status", 404);
    }
    bool any = false;
    for (size_t i = 0; al && i < n; i++) {
        const char *name;
        json_t *props;
        json_t *shown = json_object();
        json_object_foreach (al[i], name, props)
            if (name_matches(names, name))
                json_object_set(shown, name, props);
        if (!names || json_object_size(shown)) {
            any = true;
            sc_jsonw_key(&w, list[i]->name);
            sc_jsonw_obj_begin(&w);
            sc_jsonw_key(&w, "aliases");
            sc__api_json_write(&w, shown);
            sc_jsonw_obj_end(&w);
        }
        json_decref(shown);
        json_decref(al[i]);
    }
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    if (head && !any && names)
        resp->status = 404;
    sc_node_release(list, n);
}

static const char *routing_cell(const json_t *props, const char *key)
{
    const char *v = json_string_value(json_object_get(props, key));
    return v ? v : "-";
}

void sc_api_cat_aliases(sc_rest_req *req, sc_rest_resp *resp)
{
    enum {
        N_COLS = 6
    };
    static const char *const cols[N_COLS] = {"alias",         "index",          "filter",
                                             "routing.index", "routing.search", "is_write_index"};
    sc_index **list;
    size_t n;
    if (sc_node_resolve_ex(req->node, NULL, SC_NODE_RESOLVE_CLOSED, &list, &n, NULL) != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    sc_buf rows = {0};
    size_t n_rows = 0;
    json_t *keep = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *al = sc_index_aliases(list[i]);
        json_array_append(keep, al);
        const char *name;
        json_t *props;
        json_object_foreach (al, name, props) {
            if (!name_matches(req->extra, name))
                continue;
            const json_t *wi = json_object_get(props, "is_write_index");
            const char *cells[N_COLS] = {name,
                                         list[i]->name,
                                         json_object_get(props, "filter") ? "*" : "-",
                                         routing_cell(props, "index_routing"),
                                         routing_cell(props, "search_routing"),
                                         wi ? (json_is_true(wi) ? "true" : "false") : "-"};
            (void)sc_vec_append(&rows, (const unsigned char *)cells, sizeof cells);
            n_rows++;
        }
        json_decref(al);
    }
    const char **cells = sc_arena_alloc(req->arena, (n_rows + 1) * N_COLS * sizeof *cells);
    if (cells) {
        memcpy(cells, cols, sizeof cols);
        if (n_rows)
            memcpy(cells + N_COLS, rows.ptr, n_rows * N_COLS * sizeof *cells);
    }
    const char *f = sc_rest_param_get(req, "format");
    if (cells && f && !strcmp(f, "json")) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        for (size_t r = 1; r <= n_rows; r++) {
            sc_jsonw_obj_begin(&w);
            for (size_t c = 0; c < N_COLS; c++)
                sc_jsonw_kv_str(&w, cols[c], cells[r * N_COLS + c]);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
    } else if (cells) {
        sc__api_table t = {.n_cols = N_COLS, .n_rows = n_rows, .cells = cells};
        sc_vec_clear(&resp->body);
        resp->status = 200;
        resp->content_type = "text/plain; charset=UTF-8";
        resp->no_filter = true;
        sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
    } else {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
    }
    json_decref(keep);
    sc_vec_free(&rows);
    sc_node_release(list, n);
}

unsigned sc__api_expand_flags(const sc_rest_req *req)
{
    const char *e = sc_rest_param_get(req, "expand_wildcards");
    return e && (strstr(e, "hidden") || strstr(e, "all")) ? SC_NODE_RESOLVE_HIDDEN : 0;
}
