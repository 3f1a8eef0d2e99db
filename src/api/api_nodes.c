/* Cluster-view endpoints: GET _cat/nodes and GET _cluster/state[/{metrics}[/{indices}]], read
 * from sc_node_cluster_view (the etcd-watched view when clustered, a cluster of one otherwise).
 * _cat/nodes columns are Elasticsearch's defaults; "heap.percent" is the process's resident
 * memory against the node's memory budget (scry has no JVM heap), "cpu" the host's CPU use over
 * the last 5 s as the node last published it (clustered; "-" on a single node). */
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/membership.h"

static const char *const k_cols[] = {
    "ip",      "heap.percent", "ram.percent",      "cpu",    "load_1m",
    "load_5m", "load_15m",     "node.role",        "master", "name",
    "id",      "http_address", "transport_address"};
#define N_COLS (sizeof k_cols / sizeof k_cols[0])
#define N_DEFAULT 10 /* the first ten are Elasticsearch's default columns */

static const char *pct(sc_rest_req *req, int v)
{
    return v < 0 ? "-" : sc__api_fmt(req, "%d", v);
}

static const char *load(sc_rest_req *req, double v)
{
    return v < 0 ? "-" : sc__api_fmt(req, "%.2f", v);
}

/* The cell of column c for node mb. */
static const char *cell(sc_rest_req *req, const sc_cluster_view *v, const sc_member *mb, size_t c)
{
    switch (c) {
    case 0: {
        const char *colon = strrchr(mb->http, ':');
        return colon ? sc__api_fmt(req, "%.*s", (int)(colon - mb->http), mb->http) : mb->http;
    }
    case 1: return pct(req, mb->heap_percent);
    case 2: return pct(req, mb->ram_percent);
    case 3: return pct(req, mb->cpu_percent);
    case 4:
    case 5:
    case 6: return load(req, mb->load[c - 4]);
    case 7: return "dim";
    case 8: return strcmp(mb->id, v->master_id) ? "-" : "*";
    case 9: return mb->name;
    case 10: return mb->id;
    case 11: return mb->http;
    default: return mb->transport[0] ? mb->transport : "-";
    }
}

/* Columns from `h` (comma list; unknown names are a 400), else the defaults. */
static bool columns(sc_rest_req *req, sc_rest_resp *resp, size_t *cols, size_t *n)
{
    const char *h = sc_rest_param_get(req, "h");
    *n = 0;
    if (!h || !*h) {
        for (size_t c = 0; c < N_DEFAULT; c++)
            cols[(*n)++] = c;
        return true;
    }
    for (const char *p = h; *p && *n < N_COLS;) {
        size_t len = strcspn(p, ",");
        size_t c = 0;
        while (c < N_COLS && (strlen(k_cols[c]) != len || strncmp(k_cols[c], p, len) != 0))
            c++;
        if (c == N_COLS) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "request [/_cat/nodes] contains unrecognized parameter value [%.*s]",
                           (int)len, p);
            return false;
        }
        cols[(*n)++] = c;
        p += len + (p[len] == ',');
    }
    return true;
}

void sc_api_cat_nodes(sc_rest_req *req, sc_rest_resp *resp)
{
    size_t cols[N_COLS], nc;
    if (!columns(req, resp, cols, &nc))
        return;
    sc_cluster_view v;
    if (sc_node_cluster_view(req->node, &v) != SC_OK) {
        sc_rest_errorf(req, resp, 500, "exception", "cannot read the cluster view");
        return;
    }
    const char *f = sc_rest_param_get(req, "format");
    if (f && !strcmp(f, "json")) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        for (size_t i = 0; i < v.n_nodes; i++) {
            sc_jsonw_obj_begin(&w);
            for (size_t c = 0; c < nc; c++)
                sc_jsonw_kv_str(&w, k_cols[cols[c]], cell(req, &v, &v.nodes[i], cols[c]));
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
        sc_cluster_view_fini(&v);
        return;
    }
    const char **cells = sc_arena_alloc(req->arena, (v.n_nodes + 1) * nc * sizeof *cells);
    if (!cells) {
        sc_cluster_view_fini(&v);
        sc_rest_errorf(req, resp, 500, "exception", "out of memory");
        return;
    }
    sc__api_table t = {.n_cols = nc, .n_rows = v.n_nodes, .cells = cells};
    for (size_t c = 0; c < nc; c++) {
        cells[c] = k_cols[cols[c]];
        t.right[c] = cols[c] >= 1 && cols[c] <= 6;
    }
    for (size_t i = 0; i < v.n_nodes; i++)
        for (size_t c = 0; c < nc; c++) {
            const char *x = cell(req, &v, &v.nodes[i], cols[c]);
            cells[(i + 1) * nc + c] = x ? x : "";
        }
    sc_vec_clear(&resp->body);
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
    sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
    sc_cluster_view_fini(&v);
}
