/* GET /_cat/shards[/{index}]: one row per shard copy with its state. A primary that failed to
 * open at start is UNASSIGNED with reason ALLOCATION_FAILED and the failure as details, as
 * Elasticsearch shows a failed shard; one still recovering at start is INITIALIZING; replicas
 * are UNASSIGNED on one node. Columns: `h`
 * selects them (unknown names are refused), `v` adds the header, format=json gives objects. */
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/node.h"
#include "cluster/ops.h"

enum {
    C_INDEX,
    C_SHARD,
    C_PRIREP,
    C_STATE,
    C_DOCS,
    C_STORE,
    C_DATASET,
    C_IP,
    C_NODE,
    C_REASON,
    C_DETAILS,
    N_COLS
};

static const char *const col_names[N_COLS] = {"index",
                                              "shard",
                                              "prirep",
                                              "state",
                                              "docs",
                                              "store",
                                              "dataset",
                                              "ip",
                                              "node",
                                              "unassigned.reason",
                                              "unassigned.details"};
static const int default_cols[] = {C_INDEX, C_SHARD,   C_PRIREP, C_STATE, C_DOCS,
                                   C_STORE, C_DATASET, C_IP,     C_NODE};

static void size_text(char *buf, size_t cap, uint64_t b)
{
    const char *units[] = {"b", "kb", "mb", "gb", "tb"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llub", (unsigned long long)b);
    else
        snprintf(buf, cap, "%.1f%s", v, units[u]);
}

/* Parses `h` into cols; false (with a 400 written) on an unknown column. */
static bool pick_columns(sc_rest_req *req, sc_rest_resp *resp, int *cols, size_t *n_cols)
{
    const char *h = sc_rest_param_get(req, "h");
    *n_cols = 0;
    if (!h || !*h) {
        memcpy(cols, default_cols, sizeof default_cols);
        *n_cols = sizeof default_cols / sizeof default_cols[0];
        return true;
    }
    const char *p = h;
    while (*p && *n_cols < N_COLS) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int c = 0; c < N_COLS; c++)
            if (strlen(col_names[c]) == len && memcmp(col_names[c], p, len) == 0)
                found = c;
        if (found < 0) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "unable to find column [%.*s]", (int)len, p);
            return false;
        }
        cols[(*n_cols)++] = found;
        p += len;
        if (*p == ',')
            p++;
    }
    return true;
}

/* The cells of one shard copy. */
static void shard_row(sc_rest_req *req, sc_index *ix, uint32_t shard, bool primary,
                      const char **cell)
{
    for (int c = 0; c < N_COLS; c++)
        cell[c] = "";
    cell[C_INDEX] = ix->name;
    cell[C_SHARD] = sc__api_fmt(req, "%u", shard);
    cell[C_PRIREP] = primary ? "p" : "r";
    const char *failure = primary ? sc_index_shard_failure(ix, shard) : NULL;
    if (primary && sc_index_shard_initializing(ix, shard)) {
        /* Recovering at start (translog replay), as Elasticsearch's local recovery shows. */
        cell[C_STATE] = "INITIALIZING";
        cell[C_IP] = "127.0.0.1";
        cell[C_NODE] = sc_node_name(req->node);
        return;
    }
    if (!primary || failure) {
        cell[C_STATE] = "UNASSIGNED";
        cell[C_REASON] = failure ? "ALLOCATION_FAILED" : "INDEX_CREATED";
        cell[C_DETAILS] = failure ? failure : "";
        return;
    }
    sc_index_stats st;
    sc_index_shard_stats(ix, shard, &st);
    char size[32];
    size_text(size, sizeof size, st.store_bytes);
    cell[C_STATE] = "STARTED";
    cell[C_DOCS] = sc__api_fmt(req, "%llu", (unsigned long long)st.docs_count);
    cell[C_STORE] = cell[C_DATASET] = sc__api_fmt(req, "%s", size);
    cell[C_IP] = "127.0.0.1";
    cell[C_NODE] = sc_node_name(req->node);
    for (int c = 0; c < N_COLS; c++)
        if (!cell[c])
            cell[c] = "";
}

static void write_text(sc_rest_req *req, sc_rest_resp *resp, const char **cells, size_t n_rows,
                       const int *cols, size_t n_cols)
{
    size_t width[N_COLS] = {0};
    bool header = sc_rest_param_bool(req, "v", false);
    for (size_t k = 0; k < n_cols; k++)
        width[k] = header ? strlen(col_names[cols[k]]) : 0;
    for (size_t r = 0; r < n_rows; r++)
        for (size_t k = 0; k < n_cols; k++) {
            size_t l = strlen(cells[r * N_COLS + cols[k]]);
            width[k] = l > width[k] ? l : width[k];
        }
    sc_vec_clear(&resp->body);
    for (size_t r = header ? 0 : 1; r <= n_rows; r++) {
        for (size_t k = 0; k < n_cols; k++) {
            const char *cell = r ? cells[(r - 1) * N_COLS + cols[k]] : col_names[cols[k]];
            size_t l = strlen(cell);
            (void)sc_vec_append(&resp->body, (const unsigned char *)cell, l);
            for (size_t i = l; k + 1 < n_cols && i <= width[k]; i++)
                (void)sc_vec_push(&resp->body, ' ');
        }
        (void)sc_vec_push(&resp->body, '\n');
    }
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
}

void sc_api_cat_shards(sc_rest_req *req, sc_rest_resp *resp)
{
    if (sc_node_cluster(req->node)) { /* clustered: the routing table's view (api_nodes.c) */
        sc__api_cat_shards_cluster(req, resp);
        return;
    }
    int cols[N_COLS];
    size_t n_cols;
    if (!pick_columns(req, resp, cols, &n_cols))
        return;
    sc_index **list;
    size_t n;
    sc_cluster_error err;
    sc_status st =
        sc_node_resolve_ex(req->node, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n, &err);
    if (st == SC_ENOTFOUND) {
        sc_rest_error_index_not_found(req, resp, err.index);
        return;
    }
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    size_t n_rows = 0;
    for (size_t i = 0; i < n; i++)
        n_rows +=
            (size_t)list[i]->settings.number_of_shards * (1 + list[i]->settings.number_of_replicas);
    const char **cells = sc_arena_alloc(req->arena, (n_rows + 1) * N_COLS * sizeof *cells);
    if (!cells) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return;
    }
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = 0; s < list[i]->settings.number_of_shards; s++)
            for (uint32_t c = 0; c <= list[i]->settings.number_of_replicas; c++)
                shard_row(req, list[i], s, c == 0, cells + N_COLS * r++);
    const char *f = sc_rest_param_get(req, "format");
    if (f && strcmp(f, "json") == 0) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        for (size_t k = 0; k < n_rows; k++) {
            sc_jsonw_obj_begin(&w);
            for (size_t c = 0; c < n_cols; c++) {
                const char *v = cells[k * N_COLS + cols[c]];
                sc_jsonw_key(&w, col_names[cols[c]]);
                if (*v)
                    sc_jsonw_str(&w, v);
                else
                    sc_jsonw_null(&w);
            }
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
    } else {
        write_text(req, resp, cells, n_rows, cols, n_cols);
    }
    sc_node_release(list, n);
}
