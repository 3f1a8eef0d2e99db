/* Route table and dispatch (see router.h). */
#include "http/router.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"

enum {
    M_GET = 1 << SC_REST_GET,
    M_PUT = 1 << SC_REST_PUT,
    M_POST = 1 << SC_REST_POST,
    M_DELETE = 1 << SC_REST_DELETE,
    M_HEAD = 1 << SC_REST_HEAD,
};

typedef struct route {
    unsigned methods;
    const char *pattern;
    sc_rest_handler handler;
} route;

/* Order matters only among patterns that can match the same path: literals first. */
static const route routes[] = {
    {M_GET | M_HEAD, "/", sc_api_root},
    {M_GET, "/_cluster/health", sc_api_cluster_health},
    {M_GET, "/_cluster/health/{index}", sc_api_cluster_health},
    {M_GET, "/_cat/indices", sc_api_cat_indices},
    {M_GET, "/_cat/indices/{index}", sc_api_cat_indices},
    {M_GET, "/_cat/health", sc_api_cat_health},
    {M_GET, "/_cat/nodes", sc_api_cat_nodes},
    {M_GET, "/_cat/shards", sc_api_cat_shards},
    {M_GET, "/_cat/shards/{index}", sc_api_cat_shards},
    {M_GET, "/_cluster/state", sc_api_cluster_state},
    {M_GET, "/_cluster/settings", sc_api_cluster_settings_get},
    {M_PUT, "/_cluster/settings", sc_api_cluster_settings_put},
    {M_GET, "/_cluster/state/{extra}", sc_api_cluster_state},
    {M_GET, "/_cluster/state/{extra}/{index}", sc_api_cluster_state},
    {M_GET, "/_cat/count", sc_api_cat_count},
    {M_GET, "/_cat/count/{index}", sc_api_cat_count},
    {M_GET, "/_cat/aliases", sc_api_cat_aliases},
    {M_GET, "/_cat/aliases/{extra}", sc_api_cat_aliases},
    {M_POST, "/_aliases", sc_api_aliases_update},
    {M_GET | M_HEAD, "/_alias", sc_api_alias_get},
    {M_GET | M_HEAD, "/_alias/{extra}", sc_api_alias_get},
    {M_GET | M_HEAD, "/_aliases", sc_api_alias_get},
    {M_GET | M_HEAD, "/{index}/_alias", sc_api_alias_get},
    {M_GET | M_HEAD, "/{index}/_alias/{extra}", sc_api_alias_get},
    {M_GET | M_HEAD, "/{index}/_aliases", sc_api_alias_get},
    {M_PUT | M_POST, "/{index}/_alias/{extra}", sc_api_alias_put},
    {M_PUT | M_POST, "/{index}/_aliases/{extra}", sc_api_alias_put},
    {M_DELETE, "/{index}/_alias/{extra}", sc_api_alias_delete},
    {M_DELETE, "/{index}/_aliases/{extra}", sc_api_alias_delete},
    {M_POST, "/_index_template/_simulate_index/{extra}", sc_api_index_template_simulate_index},
    {M_POST, "/_index_template/_simulate", sc_api_index_template_simulate},
    {M_POST, "/_index_template/_simulate/{extra}", sc_api_index_template_simulate},
    {M_GET | M_HEAD, "/_index_template", sc_api_index_template_get},
    {M_GET | M_HEAD, "/_index_template/{extra}", sc_api_index_template_get},
    {M_PUT | M_POST, "/_index_template/{extra}", sc_api_index_template_put},
    {M_DELETE, "/_index_template/{extra}", sc_api_index_template_delete},
    {M_GET | M_HEAD, "/_component_template", sc_api_component_template_get},
    {M_GET | M_HEAD, "/_component_template/{extra}", sc_api_component_template_get},
    {M_PUT | M_POST, "/_component_template/{extra}", sc_api_component_template_put},
    {M_DELETE, "/_component_template/{extra}", sc_api_component_template_delete},
    {M_GET | M_HEAD, "/_template", sc_api_legacy_template_get},
    {M_GET | M_HEAD, "/_template/{extra}", sc_api_legacy_template_get},
    {M_PUT | M_POST, "/_template/{extra}", sc_api_legacy_template_put},
    {M_DELETE, "/_template/{extra}", sc_api_legacy_template_delete},
    {M_GET | M_POST, "/_ingest/pipeline/_simulate", sc_api_pipeline_simulate},
    {M_GET | M_POST, "/_ingest/pipeline/{extra}/_simulate", sc_api_pipeline_simulate},
    {M_GET, "/_ingest/pipeline", sc_api_pipeline_get},
    {M_GET, "/_ingest/pipeline/{extra}", sc_api_pipeline_get},
    {M_PUT, "/_ingest/pipeline/{extra}", sc_api_pipeline_put},
    {M_DELETE, "/_ingest/pipeline/{extra}", sc_api_pipeline_delete},
    {M_GET, "/_data_stream/_stats", sc_api_data_stream_stats},
    {M_GET, "/_data_stream/{index}/_stats", sc_api_data_stream_stats},
    {M_GET, "/_data_stream", sc_api_data_stream_get},
    {M_GET, "/_data_stream/{extra}", sc_api_data_stream_get},
    {M_PUT, "/_data_stream/{extra}", sc_api_data_stream_put},
    {M_DELETE, "/_data_stream/{extra}", sc_api_data_stream_delete},
    {M_POST, "/{index}/_rollover", sc_api_rollover},
    {M_POST, "/{index}/_rollover/{extra}", sc_api_rollover},
    {M_POST, "/_reindex", sc_api_reindex},
    {M_POST, "/{index}/_delete_by_query", sc_api_delete_by_query},
    {M_POST, "/{index}/_update_by_query", sc_api_update_by_query},
    {M_GET, "/_snapshot", sc_api_snapshot_repo},
    {M_POST, "/_snapshot/{extra}/_verify", sc_api_snapshot_verify},
    {M_GET, "/_snapshot/{extra}/_current", sc_api_snapshot_current},
    {M_GET | M_PUT | M_POST | M_DELETE, "/_snapshot/{extra}", sc_api_snapshot_repo},
    {M_GET | M_PUT | M_POST | M_DELETE, "/_snapshot/{extra}/{index}", sc_api_snapshot},
    {M_POST, "/_snapshot/{extra}/{index}/_restore", sc_api_snapshot_restore},
    {M_GET, "/_cat/snapshots", sc_api_cat_snapshots},
    {M_GET, "/_cat/snapshots/{extra}", sc_api_cat_snapshots},
    {M_GET, "/_nodes/stats", sc_api_nodes_stats},
    {M_GET, "/_nodes/stats/{extra}", sc_api_nodes_stats},
    {M_GET, "/_nodes", sc_api_nodes_stats},
    {M_GET, "/_stats", sc_api_stats},
    {M_GET, "/_stats/{extra}", sc_api_stats},
    {M_GET, "/_all/_stats", sc_api_stats},
    {M_GET, "/{index}/_stats", sc_api_stats},
    {M_GET, "/{index}/_stats/{extra}", sc_api_stats},
    {M_GET, "/_segments", sc_api_segments},
    {M_GET, "/{index}/_segments", sc_api_segments},
    {M_POST, "/{index}/_disk_usage", sc_api_disk_usage},
    {M_GET, "/_analyze", sc_api_analyze},
    {M_POST, "/_analyze", sc_api_analyze},
    {M_GET, "/{index}/_analyze", sc_api_analyze},
    {M_POST, "/{index}/_analyze", sc_api_analyze},
    {M_POST, "/{index}/_reload_search_analyzers", sc_api_reload_search_analyzers},
    {M_GET, "/{index}/_reload_search_analyzers", sc_api_reload_search_analyzers},
    {M_GET | M_POST, "/_refresh", sc_api_refresh},
    {M_GET | M_POST, "/{index}/_refresh", sc_api_refresh},
    {M_GET | M_POST, "/_flush", sc_api_flush},
    {M_GET | M_POST, "/{index}/_flush", sc_api_flush},
    {M_POST, "/_forcemerge", sc_api_forcemerge},
    {M_POST, "/{index}/_forcemerge", sc_api_forcemerge},
    {M_POST, "/{index}/_close", sc_api_index_close},
    {M_POST, "/{index}/_open", sc_api_index_open},
    {M_GET, "/_mapping", sc_api_get_mapping},
    {M_GET, "/{index}/_mapping", sc_api_get_mapping},
    {M_PUT | M_POST, "/{index}/_mapping", sc_api_put_mapping},
    {M_GET, "/_settings", sc_api_get_settings},
    {M_GET, "/{index}/_settings", sc_api_get_settings},
    {M_PUT, "/{index}/_settings", sc_api_put_settings},
    {M_POST | M_PUT, "/_bulk", sc_api_bulk},
    {M_POST | M_PUT, "/{index}/_bulk", sc_api_bulk},
    {M_GET | M_POST, "/_mget", sc_api_mget},
    {M_GET | M_POST, "/{index}/_mget", sc_api_mget},
    {M_GET | M_POST, "/_search/scroll", sc_api_scroll},
    {M_DELETE, "/_search/scroll", sc_api_scroll_clear},
    {M_DELETE, "/_search/scroll/_all", sc_api_scroll_clear},
    {M_GET | M_POST, "/_search/scroll/{extra}", sc_api_scroll},
    {M_DELETE, "/_search/scroll/{extra}", sc_api_scroll_clear},
    {M_DELETE, "/_pit", sc_api_pit_close},
    {M_POST, "/{index}/_pit", sc_api_pit_open},
    {M_GET | M_POST, "/_search", sc_api_search},
    {M_GET | M_POST, "/{index}/_search", sc_api_search},
    {M_GET | M_POST, "/_count", sc_api_count},
    {M_GET | M_POST, "/{index}/_count", sc_api_count},
    {M_GET | M_POST, "/{index}/_explain/{id}", sc_api_explain},
    {M_GET | M_POST, "/_validate/query", sc_api_validate_query},
    {M_GET | M_POST, "/{index}/_validate/query", sc_api_validate_query},
    {M_GET | M_POST, "/_field_caps", sc_api_field_caps},
    {M_GET | M_POST, "/{index}/_field_caps", sc_api_field_caps},
    {M_GET | M_POST, "/{index}/_terms_enum", sc_api_terms_enum},
    {M_GET | M_POST, "/_msearch", sc_api_msearch},
    {M_GET | M_POST, "/{index}/_msearch", sc_api_msearch},
    {M_GET, "/_tasks", sc_api_tasks},
    {M_GET, "/_tasks/{extra}", sc_api_tasks},
    {M_POST, "/_tasks/{extra}/_cancel", sc_api_tasks_cancel},
    {M_POST, "/_tasks/_cancel", sc_api_tasks_cancel},
    {M_POST, "/{index}/_doc", sc_api_doc_index},
    {M_PUT | M_POST, "/{index}/_doc/{id}", sc_api_doc_index},
    {M_GET | M_HEAD, "/{index}/_doc/{id}", sc_api_doc_get},
    {M_DELETE, "/{index}/_doc/{id}", sc_api_doc_delete},
    {M_PUT | M_POST, "/{index}/_create/{id}", sc_api_doc_create},
    {M_GET | M_HEAD, "/{index}/_source/{id}", sc_api_doc_source},
    {M_POST, "/{index}/_update/{id}", sc_api_doc_update},
    {M_PUT, "/{index}", sc_api_index_create},
    {M_DELETE, "/{index}", sc_api_index_delete},
    {M_GET | M_HEAD, "/{index}", sc_api_index_get},
};

#define N_ROUTES (sizeof routes / sizeof routes[0])
#define MAX_SEGS 8

sc_rest_method sc_router_method(const char *m)
{
    if (!m)
        return SC_REST_OTHER;
    if (strcmp(m, "GET") == 0)
        return SC_REST_GET;
    if (strcmp(m, "PUT") == 0)
        return SC_REST_PUT;
    if (strcmp(m, "POST") == 0)
        return SC_REST_POST;
    if (strcmp(m, "DELETE") == 0)
        return SC_REST_DELETE;
    if (strcmp(m, "HEAD") == 0)
        return SC_REST_HEAD;
    return SC_REST_OTHER;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *sc_router_decode(sc_arena *a, const char *s, size_t len, bool plus_is_space, size_t *out_len)
{
    char *out = sc_arena_alloc(a, len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else if (s[i] == '+' && plus_is_space) {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

/* A copy of s[0..len) for messages: NUL bytes become the six characters \u0000. */
static const char *printable(sc_arena *a, const char *s, size_t len)
{
    size_t n_nul = 0;
    for (size_t i = 0; i < len; i++)
        n_nul += s[i] == '\0';
    char *out = sc_arena_alloc(a, len + 5 * n_nul + 1);
    if (!out)
        return "";
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\0') {
            memcpy(out + o, "\\u0000", 6);
            o += 6;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

void sc_router_reject(sc_rest_req *req, const char *what, const char *s, size_t len)
{
    if (req->reject)
        return;
    const char *shown = printable(req->arena, s, len);
#define REJECT_FMT "%s [%.200s] contains a NUL byte, which is not allowed"
    int n = snprintf(NULL, 0, REJECT_FMT, what, shown);
    char *r = n > 0 ? sc_arena_alloc(req->arena, (size_t)n + 1) : NULL;
    if (r)
        snprintf(r, (size_t)n + 1, REJECT_FMT, what, shown);
#undef REJECT_FMT
    req->reject = r ? r : "the request contains a NUL byte, which is not allowed";
}

void sc_router_add_param(sc_rest_req *req, const char *key, size_t key_len, const char *value,
                         size_t value_len)
{
    if (req->n_params >= SC_REST_MAX_PARAMS)
        return;
    size_t kl, vl;
    char *k = sc_router_decode(req->arena, key, key_len, true, &kl);
    char *v = sc_router_decode(req->arena, value ? value : "", value ? value_len : 0, true, &vl);
    if (!k || !v)
        return;
    /* A parameter is a C string everywhere above; one holding NUL would be read cut short. */
    if (memchr(k, '\0', kl)) {
        sc_router_reject(req, "request parameter", k, kl);
        return;
    }
    if (memchr(v, '\0', vl)) {
        char what[320];
        snprintf(what, sizeof what, "value of request parameter [%.256s]", k);
        sc_router_reject(req, what, v, vl);
        return;
    }
    req->params[req->n_params].key = k;
    req->params[req->n_params].value = v;
    req->n_params++;
}

void sc_router_parse_query(sc_rest_req *req, const char *q, size_t len)
{
    size_t i = 0;
    while (i < len && req->n_params < SC_REST_MAX_PARAMS) {
        size_t start = i;
        while (i < len && q[i] != '&')
            i++;
        size_t end = i;
        if (i < len)
            i++;
        if (end == start)
            continue;
        size_t eq = start;
        while (eq < end && q[eq] != '=')
            eq++;
        if (eq < end)
            sc_router_add_param(req, q + start, eq - start, q + eq + 1, end - eq - 1);
        else
            sc_router_add_param(req, q + start, eq - start, "", 0);
    }
}

typedef struct segs {
    const char *ptr[MAX_SEGS];
    size_t len[MAX_SEGS];
    int n;
} segs;

/* Splits "/a/b/" into segments; returns false if there are too many. Empty segments are
 * skipped ("//a" == "/a"). With an arena, each segment is percent-decoded into it after the
 * split (so "%2F" stays inside its segment, and a decoded segment may hold NUL bytes: its
 * length is the truth); without one (route patterns) segments point into path. */
static bool split(const char *path, segs *s, sc_arena *decode_into)
{
    s->n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != '/')
            p++;
        if (s->n == MAX_SEGS)
            return false;
        s->ptr[s->n] = start;
        s->len[s->n] = (size_t)(p - start);
        if (decode_into) {
            s->ptr[s->n] =
                sc_router_decode(decode_into, start, (size_t)(p - start), false, &s->len[s->n]);
            if (!s->ptr[s->n])
                return false;
        }
        s->n++;
    }
    return true;
}

static bool seg_eq(const segs *s, int i, const char *lit, size_t lit_len)
{
    return s->len[i] == lit_len && memcmp(s->ptr[i], lit, lit_len) == 0;
}

/* The route patterns split into segments once (at the first request): matching a request
 * compares its segment count first, then literals, without re-splitting every pattern. */
enum {
    CAP_LITERAL,
    CAP_INDEX,
    CAP_ID,
    CAP_EXTRA
};
typedef struct route_shape {
    segs s;
    unsigned char cap[MAX_SEGS];
} route_shape;
static route_shape shapes[N_ROUTES];
static pthread_once_t shapes_once = PTHREAD_ONCE_INIT;

static void shapes_init(void)
{
    for (size_t i = 0; i < N_ROUTES; i++) {
        route_shape *r = &shapes[i];
        if (!split(routes[i].pattern, &r->s, NULL))
            r->s.n = -1; /* never matches (a pattern longer than MAX_SEGS) */
        for (int k = 0; k < r->s.n; k++) {
            const char *x = r->s.ptr[k];
            r->cap[k] = x[0] != '{'                     ? CAP_LITERAL
                        : strncmp(x, "{index}", 7) == 0 ? CAP_INDEX
                        : strncmp(x, "{id}", 4) == 0    ? CAP_ID
                                                        : CAP_EXTRA;
        }
    }
}

/* Matches path segments against route ri's pattern; fills captures (arena copies) on success. */
static bool match(sc_rest_req *req, const segs *s, size_t ri, bool fill)
{
    const route_shape *p = &shapes[ri];
    if (p->s.n != s->n)
        return false;
    for (int i = 0; i < p->s.n; i++) {
        if (p->cap[i] != CAP_LITERAL) {
            /* "_x" is an endpoint, not a name; but a task id (node:n) may start with '_' as
             * a node id is random base64url */
            if (s->ptr[i][0] == '_' && !seg_eq(s, i, "_all", 4) &&
                !(p->cap[i] == CAP_EXTRA && memchr(s->ptr[i], ':', s->len[i])))
                return false;
            if (!fill)
                continue;
            char *v = sc_arena_strndup(req->arena, s->ptr[i], s->len[i]);
            if (!v)
                return false;
            if (p->cap[i] == CAP_INDEX)
                req->index = v;
            else if (p->cap[i] == CAP_ID)
                req->id = sc_slice_make(v, s->len[i]);
            else
                req->extra = v;
        } else if (!seg_eq(s, i, p->s.ptr[i], p->s.len[i])) {
            return false;
        }
    }
    return true;
}

/* The capture name ("{index}", "{id}", ...) or literal at segment i of route ri's pattern. */
static bool pattern_seg_is(size_t ri, int i, const char *what)
{
    const segs *p = &shapes[ri].s;
    return i < p->n && p->len[i] == strlen(what) && memcmp(p->ptr[i], what, p->len[i]) == 0;
}

/* A decoded segment holding NUL would be cut short wherever it is used as a C string (index
 * names, scroll and task ids, literals), so such a request is refused with 400 unless the
 * segment is a document id, which is a byte string with a length all the way down. Returns
 * true when the request was refused. */
static bool refuse_nul_segment(sc_rest_req *req, sc_rest_resp *resp, const segs *s, const route *r)
{
    for (int i = 0; i < s->n; i++) {
        if (!memchr(s->ptr[i], '\0', s->len[i]))
            continue;
        if (r && pattern_seg_is((size_t)(r - routes), i, "{id}"))
            continue;
        const char *shown = printable(req->arena, s->ptr[i], s->len[i]);
        bool is_index = r ? pattern_seg_is((size_t)(r - routes), i, "{index}")
                          : (i == 0 && s->ptr[i][0] != '_');
        if (is_index)
            sc_rest_errorf(req, resp, 400, "invalid_index_name_exception",
                           "Invalid index name [%.200s], must not contain a NUL byte", shown);
        else
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "path segment [%.200s] of uri [%s] contains a NUL byte, which is not "
                           "allowed",
                           shown, req->path);
        return true;
    }
    return false;
}

static void route_request(sc_rest_req *req, sc_rest_resp *resp)
{
    pthread_once(&shapes_once, shapes_init);
    segs s;
    if (!split(req->path, &s, req->arena)) {
        sc_rest_errorf(req, resp, 404, "illegal_argument_exception",
                       "no handler found for uri [%s] and method [%s]", req->path, req->method_str);
        return;
    }
    unsigned allowed = 0;
    const route *shape = NULL; /* first route of the right shape, whatever the method */
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (!match(req, &s, i, false))
            continue;
        if (!shape)
            shape = &routes[i];
        if (routes[i].methods & (1u << req->method)) {
            if (refuse_nul_segment(req, resp, &s, &routes[i]))
                return;
            if (!match(req, &s, i, true)) {
                sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
                return;
            }
            routes[i].handler(req, resp);
            return;
        }
        allowed |= routes[i].methods;
    }
    if (refuse_nul_segment(req, resp, &s, shape))
        return;
    if (allowed) {
        char list[64] = "";
        for (int m = 0; m < SC_REST_OTHER; m++) {
            if (!(allowed & (1u << m)))
                continue;
            if (list[0])
                strcat(list, ",");
            strcat(list, sc_rest_method_name((sc_rest_method)m));
        }
        sc_rest_errorf(req, resp, 405, "illegal_argument_exception",
                       "Incorrect HTTP method for uri [%s] and method [%s], allowed: [%s]",
                       req->path, req->method_str, list);
        return;
    }
    sc_rest_errorf(req, resp, 404, "illegal_argument_exception",
                   "no handler found for uri [%s] and method [%s]", req->path, req->method_str);
}

void sc_router_dispatch(sc_rest_req *req, sc_rest_resp *resp)
{
    if (req->reject) {
        /* Refused by the front end (a parameter or header holding NUL): nothing else of the
         * request is trusted, including pretty and filter_path. */
        sc_rest_error(req, resp, 400, "illegal_argument_exception", req->reject, NULL, 0);
        return;
    }
    const char *pretty = sc_rest_param_get(req, "pretty");
    req->pretty = pretty && strcmp(pretty, "false") != 0;
    if (!req->method_str)
        req->method_str = sc_rest_method_name(req->method);
    route_request(req, resp);
    /* error_trace is accepted: error bodies carry no Java stack trace to add. */
    if (sc_rest_param_bool(req, "human", false) && !resp->no_filter && resp->body.len > 0) {
        if (sc_rest_humanize(&resp->body, req->pretty) != SC_OK)
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
    }
    const char *fp = sc_rest_param_get(req, "filter_path");
    if (fp && *fp && !resp->no_filter && resp->body.len > 0) {
        if (sc_rest_filter_path(&resp->body, fp, req->pretty) != SC_OK)
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
    }
    if (req->pretty && resp->body.len && resp->body.ptr[resp->body.len - 1] != '\n')
        (void)sc_vec_push(&resp->body, '\n');
}
