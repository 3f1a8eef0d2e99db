/* Cluster-view endpoints: GET _cat/nodes and, when clustered, GET _cat/shards[/{index}], read
 * from sc_node_cluster_view (the etcd-watched view when clustered, a cluster of one otherwise).
 * _cat/nodes columns are Elasticsearch's defaults; "heap.percent" is the process's resident
 * memory against the node's memory budget (scry has no JVM heap), "cpu" the host's CPU use over
 * the last 5 s as the node last published it (clustered; "-" on a single node). */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/membership.h"
#include "shard/shard.h"

static const char *const k_cols[] = {
    "ip",      "heap.percent", "ram.percent",      "cpu",    "load_1m",
    "load_5m", "load_15m",     "node.role",        "master", "name",
    "id",      "http_address", "transport_address"};
#define N_COLS (sizeof k_cols / sizeof k_cols[0])
#define N_DEFAULT 10 /* the first ten are Elasticsearch's default columns */

bool sc__api_name_matches(const char *expr, const char *name)
{
    if (!expr || !*expr || !strcmp(expr, "_all"))
        return true;
    char pat[256];
    for (const char *p = expr; *p;) {
        size_t len = strcspn(p, ",");
        if (len < sizeof pat) {
            memcpy(pat, p, len);
            pat[len] = '\0';
            if (fnmatch(pat, name, 0) == 0)
                return true;
        }
        p += len + (p[len] == ',');
    }
    return false;
}

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

/* ---- _cat/shards ---- */

static const char *const k_shard_cols[] = {"index", "shard", "prirep", "state", "docs",
                                           "store", "ip",    "node",   "id"};
#define N_SHARD_COLS (sizeof k_shard_cols / sizeof k_shard_cols[0])
#define N_SHARD_DEFAULT 8

/* One row of _cat/shards: a copy (or an unassigned slot) of shard s. */
typedef struct shard_row {
    const char *cells[N_SHARD_COLS];
} shard_row;

static const sc_member *member_of(const sc_cluster_view *v, const char *id)
{
    for (size_t i = 0; i < v->n_nodes; i++)
        if (!strcmp(v->nodes[i].id, id))
            return &v->nodes[i];
    return NULL;
}

/* docs and store of a copy held by this node, from the local shard; "-" otherwise. */
static void local_numbers(sc_rest_req *req, sc_index *local, uint32_t s, shard_row *row)
{
    row->cells[4] = row->cells[5] = "";
    sc_shard_stats st;
    if (!local || s >= local->settings.number_of_shards || !local->shards || !local->shards[s] ||
        sc_shard_stats_get(local->shards[s], false, &st) != SC_OK)
        return;
    char size[32];
    sc__api_human_bytes(size, sizeof size, st.store_bytes);
    row->cells[4] = sc__api_fmt(req, "%llu", (unsigned long long)st.n_docs);
    row->cells[5] = sc__api_fmt(req, "%s", size);
    sc_shard_stats_fini(&st);
}

/* The k-th copy of sh that is not a relocation target (targets show on their source's row). */
static const sc_shard_copy *nth_copy(const sc_shard_routing *sh, size_t k)
{
    for (size_t i = 0; i < sh->n_copies; i++)
        if (!sh->copies[i].relocating_from[0] && k-- == 0)
            return &sh->copies[i];
    return NULL;
}

static void fill_row(sc_rest_req *req, const sc_cluster_view *v, const sc_index_routing *r,
                     uint32_t s, size_t k, sc_index *local, shard_row *row)
{
    const sc_shard_routing *sh = &r->shards[s];
    const sc_shard_copy *c = nth_copy(sh, k);
    const sc_shard_copy *to = c ? sc_shard_relocation_target(sh, c) : NULL;
    bool has_primary = sh->n_copies && sh->copies[0].primary;
    bool in_sync = false;
    for (size_t i = 0; c && i < sh->n_in_sync; i++)
        in_sync |= !strcmp(sh->in_sync[i].alloc_id, c->alloc_id);
    row->cells[0] = r->index;
    row->cells[1] = sc__api_fmt(req, "%u", s);
    row->cells[2] = (c ? c->primary : (k == 0 && !has_primary)) ? "p" : "r";
    row->cells[3] = !c ? "UNASSIGNED" : to ? "RELOCATING" : in_sync ? "STARTED" : "INITIALIZING";
    row->cells[4] = row->cells[5] = row->cells[6] = row->cells[7] = row->cells[8] = "";
    if (!c)
        return;
    if (!strcmp(c->node, v->local_id))
        local_numbers(req, local, s, row);
    const sc_member *mb = member_of(v, c->node);
    row->cells[6] = mb ? cell(req, v, mb, 0) : "";
    row->cells[7] = mb ? mb->name : c->node;
    row->cells[8] = c->node;
    if (to) { /* Elasticsearch's form: "source -> target-ip target-id target-name" */
        const sc_member *tm = member_of(v, to->node);
        row->cells[7] =
            sc__api_fmt(req, "%s -> %s %s %s", row->cells[7], tm ? cell(req, v, tm, 0) : "",
                        to->node, tm ? tm->name : to->node);
    }
}

/* Columns of _cat/shards from `h`, else the defaults; false after a 400. */
static bool shard_columns(sc_rest_req *req, sc_rest_resp *resp, size_t *cols, size_t *n)
{
    const char *h = sc_rest_param_get(req, "h");
    *n = 0;
    for (const char *p = h && *h ? h : NULL; p && *p && *n < N_SHARD_COLS;) {
        size_t len = strcspn(p, ",");
        size_t c = 0;
        while (c < N_SHARD_COLS &&
               (strlen(k_shard_cols[c]) != len || strncmp(k_shard_cols[c], p, len) != 0))
            c++;
        if (c == N_SHARD_COLS) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "request [/_cat/shards] contains unrecognized parameter value [%.*s]",
                           (int)len, p);
            return false;
        }
        cols[(*n)++] = c;
        p += len + (p[len] == ',');
    }
    for (size_t c = 0; !*n && c < N_SHARD_DEFAULT; c++)
        cols[c] = c;
    if (!*n)
        *n = N_SHARD_DEFAULT;
    return true;
}

/* Every copy slot of the indices matching req->index, in routing order. */
static size_t collect_rows(sc_rest_req *req, const sc_cluster_view *v, shard_row **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (size_t i = 0; i < v->routing.n_indices; i++) {
        const sc_index_routing *r = &v->routing.indices[i];
        if (req->index && *req->index && !sc__api_name_matches(req->index, r->index))
            continue;
        sc_index *local = sc_node_index(req->node, r->index);
        for (uint32_t s = 0; s < r->number_of_shards; s++)
            for (size_t k = 0; k < 1 + (size_t)r->number_of_replicas; k++) {
                if (n == cap) {
                    size_t ncap = cap ? cap * 2 : 64;
                    shard_row *grown = sc_arena_alloc(req->arena, ncap * sizeof *grown);
                    if (!grown)
                        break;
                    if (n)
                        memcpy(grown, *out, n * sizeof *grown);
                    *out = grown;
                    cap = ncap;
                }
                fill_row(req, v, r, s, k, local, &(*out)[n++]);
            }
        if (local)
            sc_index_unref(local);
    }
    return n;
}

void sc__api_cat_shards_cluster(sc_rest_req *req, sc_rest_resp *resp)
{
    size_t cols[N_SHARD_COLS], nc;
    if (!shard_columns(req, resp, cols, &nc))
        return;
    sc_cluster_view v;
    if (sc_node_cluster_view(req->node, &v) != SC_OK) {
        sc_rest_errorf(req, resp, 500, "exception", "cannot read the cluster view");
        return;
    }
    shard_row *rows;
    size_t n = collect_rows(req, &v, &rows);
    const char *f = sc_rest_param_get(req, "format");
    if (f && !strcmp(f, "json")) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            sc_jsonw_obj_begin(&w);
            for (size_t c = 0; c < nc; c++) {
                const char *x = rows[i].cells[cols[c]];
                sc_jsonw_key(&w, k_shard_cols[cols[c]]);
                if (x && *x)
                    sc_jsonw_str(&w, x);
                else
                    sc_jsonw_null(&w);
            }
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
    } else {
        const char **cells = sc_arena_alloc(req->arena, (n + 1) * nc * sizeof *cells);
        sc__api_table t = {.n_cols = cells ? nc : 0, .n_rows = cells ? n : 0, .cells = cells};
        for (size_t c = 0; cells && c < nc; c++) {
            cells[c] = k_shard_cols[cols[c]];
            t.right[c] = cols[c] == 1 || cols[c] == 4 || cols[c] == 5;
            for (size_t i = 0; i < n; i++)
                cells[(i + 1) * nc + c] = rows[i].cells[cols[c]] ? rows[i].cells[cols[c]] : "";
        }
        sc_vec_clear(&resp->body);
        resp->status = 200;
        resp->content_type = "text/plain; charset=UTF-8";
        resp->no_filter = true;
        sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
    }
    sc_cluster_view_fini(&v);
}
