/* Cluster and node information endpoints: GET /, _cluster/health, _cat APIs, _nodes/stats,
 * _tasks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "cluster/bgtask.h"
#include "cluster/membership.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/stats_remote.h"
#include "cluster/placement.h"
#include "cluster/scroll.h"
#include "cluster/transport.h"
#include "cluster/tasks.h"

#define SC_ES_VERSION "8.15.0"
#define SC_LUCENE_VERSION "9.11.1"

void sc_api_root(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_node *n = req->node;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "name", sc_node_name(n));
    sc_jsonw_kv_str(&w, "cluster_name", sc_node_cluster_name(n));
    sc_jsonw_kv_str(&w, "cluster_uuid", sc_node_cluster_uuid(n));
    sc_jsonw_key(&w, "version");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "number", SC_ES_VERSION);
    sc_jsonw_kv_str(&w, "build_flavor", "default");
    sc_jsonw_kv_str(&w, "build_type", "tar");
    sc_jsonw_kv_str(&w, "build_hash", "scry-" SCRY_VERSION);
    sc_jsonw_kv_str(&w, "build_date", "2026-11-30T00:00:00.000Z");
    sc_jsonw_kv_bool(&w, "build_snapshot", false);
    sc_jsonw_kv_str(&w, "lucene_version", SC_LUCENE_VERSION);
    sc_jsonw_kv_str(&w, "minimum_wire_compatibility_version", "7.17.0");
    sc_jsonw_kv_str(&w, "minimum_index_compatibility_version", "7.0.0");
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_str(&w, "tagline", "You Know, for Search");
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

/* Health of the target indices (all when none): green when every shard copy is assigned,
 * yellow when replicas are configured (one node holds primaries only), red when a named index
 * does not exist (yet). */
typedef struct health {
    int rank; /* 0 green, 1 yellow, 2 red */
    uint64_t shards, active, unassigned;
    uint64_t failed_primaries; /* primaries failed to open or unassigned: red */
    uint64_t initializing;     /* primaries recovering at start: red, as Elasticsearch */
    uint64_t relocating;       /* copies moving to another node (their targets recovering) */
    bool missing;              /* a named index does not exist (yet): red */
    size_t n_nodes;
} health;

static const char *const health_names[] = {"green", "yellow", "red"};

/* Clustered: health from the routing table (Elasticsearch's rule: red when a primary is
 * unassigned, yellow when a replica is unassigned or still recovering, i.e. not in sync). A concrete index name missing from the metadata is red. */
static void health_of_routing(sc_rest_req *req, const sc_cluster_view *v, health *h)
{
    const char *expr = req->index;
    if (expr && *expr && !strpbrk(expr, "*,") && strcmp(expr, "_all") != 0 &&
        !json_object_get(v->indices, expr)) {
        h->rank = 2;
        h->missing = true;
        return;
    }
    /* an index whose metadata is there but not its routing yet (the master has not allocated
     * it): its shards are unassigned, red, as Elasticsearch right after a create */
    const char *name;
    json_t *meta;
    json_object_foreach (v->indices, name, meta) {
        if (sc__api_name_matches(expr, name) && !sc_routing_table_find(&v->routing, name))
            h->rank = 2;
    }
    for (size_t i = 0; i < v->routing.n_indices; i++) {
        const sc_index_routing *r = &v->routing.indices[i];
        if (!sc__api_name_matches(expr, r->index))
            continue;
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            bool prim = sh->n_copies && sh->copies[0].primary;
            size_t want = 1 + (size_t)r->number_of_replicas;
            /* a relocation target is not a copy of its own: its source is active and
             * RELOCATING until the target is in sync (Elasticsearch counts it so too) */
            size_t reloc = sc_shard_n_relocating(sh), n_copies = sh->n_copies - reloc;
            size_t started = 0; /* copies in the in-sync set; the others are recovering */
            for (size_t k = 0; prim && k < sh->n_copies; k++)
                for (size_t j = 0; !sh->copies[k].relocating_from[0] && j < sh->n_in_sync; j++)
                    started += !strcmp(sh->in_sync[j].alloc_id, sh->copies[k].alloc_id);
            h->shards += prim;
            h->active += started;
            h->relocating += prim ? reloc : 0;
            h->initializing += prim ? n_copies - started : 0;
            h->unassigned += want > (prim ? n_copies : 0) ? want - (prim ? n_copies : 0) : 0;
            h->failed_primaries += !prim;
            if (!prim)
                h->rank = 2;
            else if (started < want && h->rank < 1)
                h->rank = 1;
        }
    }
}

static void health_of(sc_rest_req *req, health *h)
{
    memset(h, 0, sizeof *h);
    h->n_nodes = 1;
    sc_cluster_view v;
    if (sc_node_cluster(req->node) && sc_node_cluster_view(req->node, &v) == SC_OK) {
        h->n_nodes = v.n_nodes;
        health_of_routing(req, &v, h);
        sc_cluster_view_fini(&v);
        return;
    }
    sc_index **list;
    size_t n;
    sc_cluster_error err;
    /* every index, hidden ones too (a data stream's backing indices), as Elasticsearch's
     * health expands wildcards to all */
    if (sc_node_resolve_ex(req->node, req->index, SC_NODE_RESOLVE_CLOSED | SC_NODE_RESOLVE_HIDDEN,
                           &list, &n, &err) != SC_OK) {
        h->rank = 2;
        h->missing = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t failed = sc_index_n_failed_shards(list[i]);
        uint32_t init = sc_index_n_initializing_shards(list[i]);
        h->shards += list[i]->settings.number_of_shards - failed - init;
        h->failed_primaries += failed;
        h->initializing += init;
        h->unassigned +=
            (uint64_t)list[i]->settings.number_of_shards * list[i]->settings.number_of_replicas +
            failed;
    }
    sc_node_release(list, n);
    h->active = h->shards;
    h->rank = h->failed_primaries || h->initializing ? 2 : h->unassigned ? 1 : 0;
}

/* wait_for_nodes: "N", ">=N", "<=N", ">N", "<N", or ge(N) le(N) gt(N) lt(N). */
static bool parse_wait_nodes(const char *s, int *op, long *n)
{
    static const char *const pre[] = {">=", "<=", ">", "<", "ge(", "le(", "gt(", "lt("};
    static const int ops[] = {1, 2, 3, 4, 1, 2, 3, 4};
    *op = 0;
    for (int i = 0; i < 8; i++)
        if (!strncmp(s, pre[i], strlen(pre[i]))) {
            *op = ops[i];
            s += strlen(pre[i]);
            break;
        }
    char *end;
    *n = strtol(s, &end, 10);
    if (end == s || *n < 0)
        return false;
    return *end == '\0' || (*end == ')' && end[1] == '\0');
}

static bool nodes_ok(int op, long want, size_t have)
{
    long h = (long)have;
    switch (op) {
    case 1: return h >= want;
    case 2: return h <= want;
    case 3: return h > want;
    case 4: return h < want;
    default: return h == want;
    }
}

static void write_health(sc_rest_req *req, sc_rest_resp *resp, const health *hp, bool timed_out)
{
    health h = *hp;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, timed_out ? 408 : 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "cluster_name", sc_node_cluster_name(req->node));
    sc_jsonw_kv_str(&w, "status", health_names[h.rank]);
    sc_jsonw_kv_bool(&w, "timed_out", timed_out);
    sc_jsonw_kv_int(&w, "number_of_nodes", (int64_t)h.n_nodes);
    sc_jsonw_kv_int(&w, "number_of_data_nodes", (int64_t)h.n_nodes);
    sc_jsonw_kv_int(&w, "active_primary_shards", (int64_t)h.shards);
    sc_jsonw_kv_int(&w, "active_shards", (int64_t)h.active);
    sc_jsonw_kv_int(&w, "relocating_shards", (int64_t)h.relocating);
    sc_jsonw_kv_int(&w, "initializing_shards", (int64_t)h.initializing);
    sc_jsonw_kv_int(&w, "unassigned_shards", (int64_t)h.unassigned);
    sc_jsonw_kv_int(&w, "unassigned_primary_shards", (int64_t)h.failed_primaries);
    sc_jsonw_kv_int(&w, "delayed_unassigned_shards", 0);
    sc_jsonw_kv_int(&w, "number_of_pending_tasks", 0);
    sc_jsonw_kv_int(&w, "number_of_in_flight_fetch", 0);
    sc_jsonw_kv_int(&w, "task_max_waiting_in_queue_millis", 0);
    uint64_t copies = h.active + h.unassigned + h.initializing;
    double pct = copies ? 100.0 * (double)h.active / (double)copies : 100.0;
    sc_jsonw_kv_double(&w, "active_shards_percent_as_number", pct);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

/* Whether a health wait goes on: a condition asked for does not hold yet. */
static bool health_waits(const health *h, int goal, int nodes_op, long nodes_want, bool no_reloc,
                         bool no_init)
{
    return h->rank > goal || (nodes_want >= 0 && !nodes_ok(nodes_op, nodes_want, h->n_nodes)) ||
           (no_reloc && h->relocating) || (no_init && h->initializing);
}

/* GET /_cluster/health[/{index}]: with wait_for_status, wait_for_nodes and/or
 * wait_for_no_relocating_shards / wait_for_no_initializing_shards, polls until the health is
 * at least as good as asked, the live node count matches and no shard relocates / initializes,
 * or `timeout` (30s)
 * passes; then answers 408 with "timed_out": true, as Elasticsearch does. Node counts come from
 * the cluster view (etcd membership when clustered). */
void sc_api_cluster_health(sc_rest_req *req, sc_rest_resp *resp)
{
    const char *want = sc_rest_param_get(req, "wait_for_status");
    int want_rank = -1;
    if (want) {
        for (int r = 0; r < 3; r++)
            if (strcmp(want, health_names[r]) == 0)
                want_rank = r;
        if (want_rank < 0) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "unknown cluster health status [%s]", want);
            return;
        }
    }
    const char *wn = sc_rest_param_get(req, "wait_for_nodes");
    int nodes_op = 0;
    long nodes_want = -1;
    if (wn && *wn && !parse_wait_nodes(wn, &nodes_op, &nodes_want)) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "cannot parse wait_for_nodes [%s]", wn);
        return;
    }
    static const char *const k_no[2] = {"wait_for_no_relocating_shards",
                                        "wait_for_no_initializing_shards"};
    bool no_wait[2];
    for (int i = 0; i < 2; i++) {
        const char *v = sc_rest_param_get(req, k_no[i]);
        if (v && *v && strcmp(v, "true") && strcmp(v, "false")) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "Failed to parse value [%s] as only [true] or [false] are allowed.", v);
            return;
        }
        no_wait[i] = sc_rest_param_bool(req, k_no[i], false);
    }
    bool no_reloc = no_wait[0], no_init = no_wait[1];
    int64_t timeout_ms = 30000;
    const char *to = sc_rest_param_get(req, "timeout");
    if (to && !sc_time_parse_ms(to, &timeout_ms)) {
        sc_rest_errorf(req, resp, 400, "parse_exception",
                       "failed to parse setting [timeout] with value [%s] as a time value", to);
        return;
    }
    health h;
    health_of(req, &h);
    bool timed_out = false;
    if (want_rank >= 0 || h.missing || nodes_want >= 0 || no_reloc || no_init) {
        /* A missing index is waited for too (it may be created meanwhile); with only
         * wait_for_nodes, any status will do. */
        int goal = want_rank >= 0 ? want_rank : h.missing ? 1 : 2;
        uint64_t deadline =
            sc_clock_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
        while (health_waits(&h, goal, nodes_op, nodes_want, no_reloc, no_init) &&
               sc_clock_now_ns() < deadline) {
            struct timespec ts = {0, 20 * 1000000};
            nanosleep(&ts, NULL);
            health_of(req, &h);
        }
        timed_out = health_waits(&h, goal, nodes_op, nodes_want, no_reloc, no_init);
    }
    write_health(req, resp, &h, timed_out);
}

void sc__api_human_bytes(char *buf, size_t cap, uint64_t b)
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

static bool want_json(sc_rest_req *req)
{
    const char *f = sc_rest_param_get(req, "format");
    return f && strcmp(f, "json") == 0;
}

void sc__api_table_write(sc_rest_resp *resp, const sc__api_table *t, bool header)
{
    size_t width[16] = {0};
    for (size_t r = 0; r <= t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++) {
            size_t l = strlen(t->cells[r * t->n_cols + c]);
            if ((r > 0 || header) && l > width[c])
                width[c] = l;
        }
    for (size_t r = header ? 0 : 1; r <= t->n_rows; r++) {
        for (size_t c = 0; c < t->n_cols; c++) {
            const char *cell = t->cells[r * t->n_cols + c];
            size_t l = strlen(cell);
            size_t pad = width[c] - l;
            if (t->right[c] && r > 0)
                for (size_t i = 0; i < pad; i++)
                    (void)sc_vec_push(&resp->body, ' ');
            (void)sc_vec_append(&resp->body, (const unsigned char *)cell, l);
            if (c + 1 < t->n_cols && !(t->right[c] && r > 0))
                for (size_t i = 0; i < pad; i++)
                    (void)sc_vec_push(&resp->body, ' ');
            if (c + 1 < t->n_cols)
                (void)sc_vec_push(&resp->body, ' ');
        }
        (void)sc_vec_push(&resp->body, '\n');
    }
}

/* red when a primary failed to open or is still recovering, yellow when replicas cannot be
 * placed on one node. */
static const char *index_health(const sc_index *ix)
{
    if (sc_index_n_failed_shards(ix) || sc_index_n_initializing_shards(ix))
        return "red";
    return ix->settings.number_of_replicas ? "yellow" : "green";
}

void sc_api_cat_indices(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, SC_NODE_RESOLVE_CLOSED, &list, &n))
        return;
    static const char *cols[] = {
        "health",     "status",       "index",      "uuid",           "pri",         "rep",
        "docs.count", "docs.deleted", "store.size", "pri.store.size", "dataset.size"};
    const size_t nc = sizeof cols / sizeof cols[0];
    if (want_json(req)) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        sc_cluster_stats *cs = sc_arena_calloc(req->arena, n ? n : 1, sizeof *cs);
        if (cs)
            sc_cluster_index_stats(req->node, list, n, cs);
        for (size_t i = 0; cs && i < n; i++) {
            const sc_index_stats *p = &cs[i].primaries;
            char size[32], psize[32];
            sc__api_human_bytes(size, sizeof size, cs[i].total.store_bytes);
            sc__api_human_bytes(psize, sizeof psize, p->store_bytes);
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "health", index_health(list[i]));
            bool closed = atomic_load(&list[i]->closed);
            sc_jsonw_kv_str(&w, "status", closed ? "close" : "open");
            sc_jsonw_kv_str(&w, "index", list[i]->name);
            sc_jsonw_kv_str(&w, "uuid", list[i]->uuid);
            char buf[32];
            snprintf(buf, sizeof buf, "%u", list[i]->settings.number_of_shards);
            sc_jsonw_kv_str(&w, "pri", buf);
            snprintf(buf, sizeof buf, "%u", list[i]->settings.number_of_replicas);
            sc_jsonw_kv_str(&w, "rep", buf);
            if (closed) {
                /* Elasticsearch has no statistics for a closed index. */
                static const char *const none[] = {"docs.count", "docs.deleted", "store.size",
                                                   "pri.store.size", "dataset.size"};
                for (size_t k = 0; k < 5; k++) {
                    sc_jsonw_key(&w, none[k]);
                    sc_jsonw_null(&w);
                }
                sc_jsonw_obj_end(&w);
                continue;
            }
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->docs_count);
            sc_jsonw_kv_str(&w, "docs.count", buf);
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->docs_deleted);
            sc_jsonw_kv_str(&w, "docs.deleted", buf);
            sc_jsonw_kv_str(&w, "store.size", size);
            sc_jsonw_kv_str(&w, "pri.store.size", psize);
            sc_jsonw_kv_str(&w, "dataset.size", size);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
        sc_node_release(list, n);
        return;
    }
    sc__api_table t = {.n_cols = nc, .n_rows = n};
    t.cells = sc_arena_alloc(req->arena, (n + 1) * nc * sizeof *t.cells);
    if (!t.cells) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    for (size_t c = 0; c < nc; c++)
        t.cells[c] = cols[c];
    t.right[4] = t.right[5] = t.right[6] = t.right[7] = t.right[8] = t.right[9] = t.right[10] =
        true;
    sc_cluster_stats *cs = sc_arena_calloc(req->arena, n ? n : 1, sizeof *cs);
    if (!cs) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    sc_cluster_index_stats(req->node, list, n, cs);
    for (size_t i = 0; i < n; i++) {
        const sc_index_stats *p = &cs[i].primaries;
        char size[32], psize[32];
        sc__api_human_bytes(size, sizeof size, cs[i].total.store_bytes);
        sc__api_human_bytes(psize, sizeof psize, p->store_bytes);
        const char **row = t.cells + (i + 1) * nc;
        row[0] = index_health(list[i]);
        bool closed = atomic_load(&list[i]->closed);
        row[1] = closed ? "close" : "open";
        row[2] = sc_arena_strndup(req->arena, list[i]->name, strlen(list[i]->name));
        row[3] = sc_arena_strndup(req->arena, list[i]->uuid, strlen(list[i]->uuid));
        row[4] = sc__api_fmt(req, "%u", list[i]->settings.number_of_shards);
        row[5] = sc__api_fmt(req, "%u", list[i]->settings.number_of_replicas);
        row[6] = sc__api_fmt(req, "%llu", (unsigned long long)p->docs_count);
        row[7] = sc__api_fmt(req, "%llu", (unsigned long long)p->docs_deleted);
        row[8] = row[10] = sc__api_fmt(req, "%s", size);
        row[9] = sc__api_fmt(req, "%s", psize);
        if (closed)
            row[6] = row[7] = row[8] = row[9] = row[10] = "";
        for (size_t c = 0; c < nc; c++)
            if (!row[c])
                row[c] = "";
    }
    sc_node_release(list, n);
    sc_vec_clear(&resp->body);
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
    sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
}

void sc_api_cat_health(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, NULL, 0, &list, &n))
        return;
    uint64_t shards = 0, unassigned = 0, failed = 0, init = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t f = sc_index_n_failed_shards(list[i]);
        uint32_t in = sc_index_n_initializing_shards(list[i]);
        failed += f;
        init += in;
        shards += list[i]->settings.number_of_shards - f - in;
        unassigned +=
            (uint64_t)list[i]->settings.number_of_shards * list[i]->settings.number_of_replicas + f;
    }
    sc_node_release(list, n);
    int64_t now = sc_clock_wall_ms();
    const char *status = failed || init ? "red" : unassigned ? "yellow" : "green";
    double pct = shards + unassigned + init
                     ? 100.0 * (double)shards / (double)(shards + unassigned + init)
                     : 100.0;
    if (want_json(req)) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        sc_jsonw_obj_begin(&w);
        char buf[64];
        snprintf(buf, sizeof buf, "%lld", (long long)(now / 1000));
        sc_jsonw_kv_str(&w, "epoch", buf);
        sc_jsonw_kv_str(&w, "cluster", sc_node_cluster_name(req->node));
        sc_jsonw_kv_str(&w, "status", status);
        sc_jsonw_kv_str(&w, "node.total", "1");
        sc_jsonw_kv_str(&w, "node.data", "1");
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)shards);
        sc_jsonw_kv_str(&w, "shards", buf);
        sc_jsonw_kv_str(&w, "pri", buf);
        sc_jsonw_kv_str(&w, "relo", "0");
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)init);
        sc_jsonw_kv_str(&w, "init", buf);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)unassigned);
        sc_jsonw_kv_str(&w, "unassign", buf);
        sc_jsonw_kv_str(&w, "pending_tasks", "0");
        snprintf(buf, sizeof buf, "%.1f%%", pct);
        sc_jsonw_kv_str(&w, "active_shards_percent", buf);
        sc_jsonw_obj_end(&w);
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
        return;
    }
    static const char *cols[] = {"epoch",
                                 "timestamp",
                                 "cluster",
                                 "status",
                                 "node.total",
                                 "node.data",
                                 "shards",
                                 "pri",
                                 "relo",
                                 "init",
                                 "unassign",
                                 "pending_tasks",
                                 "max_task_wait_time",
                                 "active_shards_percent"};
    const size_t nc = sizeof cols / sizeof cols[0];
    const char *cells[2 * 14];
    for (size_t c = 0; c < nc; c++)
        cells[c] = cols[c];
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    const char **row = cells + nc;
    row[0] = sc__api_fmt(req, "%lld", (long long)secs);
    row[1] = sc__api_fmt(req, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
    row[2] = sc_node_cluster_name(req->node);
    row[3] = status;
    row[4] = "1";
    row[5] = "1";
    row[6] = sc__api_fmt(req, "%llu", (unsigned long long)shards);
    row[7] = row[6];
    row[8] = "0";
    row[9] = sc__api_fmt(req, "%llu", (unsigned long long)init);
    row[10] = sc__api_fmt(req, "%llu", (unsigned long long)unassigned);
    row[11] = "0";
    row[12] = "-";
    row[13] = sc__api_fmt(req, "%.1f%%", pct);
    for (size_t c = 0; c < nc; c++)
        if (!row[c])
            row[c] = "";
    sc__api_table t = {.n_cols = nc, .n_rows = 1, .cells = cells};
    sc_vec_clear(&resp->body);
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
    sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
}

void sc_api_cat_count(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, 0, &list, &n))
        return;
    uint64_t count = 0;
    sc_cluster_stats *cs = sc_arena_calloc(req->arena, n ? n : 1, sizeof *cs);
    if (cs)
        sc_cluster_index_stats(req->node, list, n, cs); /* every node's primaries */
    for (size_t i = 0; cs && i < n; i++)
        count += cs[i].primaries.docs_count;
    sc_node_release(list, n);
    int64_t now = sc_clock_wall_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    if (want_json(req)) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_arr_begin(&w);
        sc_jsonw_obj_begin(&w);
        char buf[64];
        snprintf(buf, sizeof buf, "%lld", (long long)secs);
        sc_jsonw_kv_str(&w, "epoch", buf);
        snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
        sc_jsonw_kv_str(&w, "timestamp", buf);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)count);
        sc_jsonw_kv_str(&w, "count", buf);
        sc_jsonw_obj_end(&w);
        sc_jsonw_arr_end(&w);
        sc_rest_json_end(req, resp, &w);
        return;
    }
    const char *cells[6] = {"epoch", "timestamp", "count"};
    cells[3] = sc__api_fmt(req, "%lld", (long long)secs);
    cells[4] = sc__api_fmt(req, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
    cells[5] = sc__api_fmt(req, "%llu", (unsigned long long)count);
    for (int i = 3; i < 6; i++)
        if (!cells[i])
            cells[i] = "";
    sc__api_table t = {.n_cols = 3, .n_rows = 1, .cells = cells};
    sc_vec_clear(&resp->body);
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
    sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
}

static void breaker(sc_jsonw *w, const char *name, uint64_t limit, uint64_t used, double overhead,
                    uint64_t tripped, const uint64_t *peak)
{
    char buf[32];
    sc_jsonw_key(w, name);
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "limit_size_in_bytes", (int64_t)limit);
    sc__api_human_bytes(buf, sizeof buf, limit);
    sc_jsonw_kv_str(w, "limit_size", buf);
    sc_jsonw_kv_int(w, "estimated_size_in_bytes", (int64_t)used);
    sc__api_human_bytes(buf, sizeof buf, used);
    sc_jsonw_kv_str(w, "estimated_size", buf);
    sc_jsonw_kv_double(w, "overhead", overhead);
    sc_jsonw_kv_int(w, "tripped", (int64_t)tripped);
    if (peak) /* scry's own: the request breaker's high-water mark of actual use */
        sc_jsonw_kv_int(w, "peak_used_in_bytes", (int64_t)*peak);
    sc_jsonw_obj_end(w);
}

void sc_api_nodes_stats(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_node *node = req->node;
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, NULL, 0, &list, &n))
        return;
    sc_index_stats tot = {0};
    uint64_t q = 0, qt = 0, ix_ops = 0, ix_t = 0, fetch = 0, fetch_t = 0;
    for (size_t i = 0; i < n; i++) {
        sc_index_stats s;
        sc_index_collect_stats(list[i], &s);
        tot.docs_count += s.docs_count;
        tot.docs_deleted += s.docs_deleted;
        tot.store_bytes += s.store_bytes;
        tot.n_segments += s.n_segments;
        tot.memory_bytes += s.memory_bytes;
        q += atomic_load(&list[i]->n_search_queries);
        qt += atomic_load(&list[i]->search_time_ns);
        ix_ops += atomic_load(&list[i]->n_index_ops);
        ix_t += atomic_load(&list[i]->index_time_ns);
        fetch += atomic_load(&list[i]->n_fetch);
        fetch_t += atomic_load(&list[i]->fetch_time_ns);
    }
    sc_node_release(list, n);
    const sc_node_config *cfg = sc_node_config_get(node);
    uint64_t mem = cfg->memory_limit_bytes;
    sc_breaker_stats br;
    sc_breakers_get_reset(node, &br, sc_rest_param_bool(req, "reset_peak", false));
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_nodes");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", 1);
    sc_jsonw_kv_int(&w, "successful", 1);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_str(&w, "cluster_name", sc_node_cluster_name(node));
    sc_jsonw_key(&w, "nodes");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, sc_node_id(node));
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "timestamp", sc_clock_wall_ms());
    sc_jsonw_kv_str(&w, "name", sc_node_name(node));
    sc_jsonw_kv_str(&w, "transport_address", "127.0.0.1:9300");
    sc_jsonw_kv_str(&w, "host", "127.0.0.1");
    sc_jsonw_kv_str(&w, "ip", "127.0.0.1:9300");
    sc_jsonw_key(&w, "roles");
    sc_jsonw_arr_begin(&w);
    sc_jsonw_str(&w, "data");
    sc_jsonw_str(&w, "ingest");
    sc_jsonw_str(&w, "master");
    sc_jsonw_arr_end(&w);
    sc_jsonw_key(&w, "indices");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "docs");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "count", (int64_t)tot.docs_count);
    sc_jsonw_kv_int(&w, "deleted", (int64_t)tot.docs_deleted);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "store");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "size_in_bytes", (int64_t)tot.store_bytes);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "indexing");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "index_total", (int64_t)ix_ops);
    sc_jsonw_kv_int(&w, "index_time_in_millis", (int64_t)(ix_t / 1000000));
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "search");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "query_total", (int64_t)q);
    sc_jsonw_kv_int(&w, "query_time_in_millis", (int64_t)(qt / 1000000));
    sc_jsonw_kv_int(&w, "fetch_total", (int64_t)fetch);
    sc_jsonw_kv_int(&w, "fetch_time_in_millis", (int64_t)(fetch_t / 1000000));
    /* scroll and point-in-time contexts held here (a cluster's data-node contexts included) */
    sc_jsonw_kv_int(&w, "open_contexts", (int64_t)sc_scroll_count(req->node));
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "segments");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "count", (int64_t)tot.n_segments);
    sc_jsonw_kv_int(&w, "memory_in_bytes", (int64_t)tot.memory_bytes);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_placement *pl = sc_node_placement(node);
    sc_transport *tp = pl ? sc_placement_transport(pl) : NULL;
    if (tp) { /* clustered: the node-to-node transport's counters */
        sc_transport_stats ts;
        sc_transport_stats_get(tp, &ts);
        sc_jsonw_key(&w, "transport");
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_int(&w, "rx_count", (int64_t)ts.requests_handled);
        sc_jsonw_kv_int(&w, "tx_count", (int64_t)ts.requests_sent);
        sc_jsonw_kv_int(&w, "connections_opened", (int64_t)ts.connects);
        sc_jsonw_kv_int(&w, "bad_frames", (int64_t)ts.bad_frames);
        sc_jsonw_kv_int(&w, "tls_handshakes_refused", (int64_t)ts.tls_refused);
        sc_jsonw_kv_int(&w, "tls_handshakes_failed", (int64_t)ts.tls_failed);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_key(&w, "breakers");
    sc_jsonw_obj_begin(&w);
    breaker(&w, "request", br.request_limit, br.request_used, 1.0, br.request_tripped,
            &br.request_peak);
    breaker(&w, "fielddata", mem * 40 / 100, 0, 1.03, 0, NULL);
    breaker(&w, "in_flight_requests", mem, br.inflight_used, 2.0, br.inflight_tripped,
            NULL);
    breaker(&w, "parent", mem * 95 / 100, br.request_used + br.inflight_used, 1.0,
            br.request_tripped + br.inflight_tripped, NULL);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_tasks(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *bg = req->extra ? sc_bgtask_get(req->node, req->extra) : NULL;
    if (bg) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc__api_json_write(&w, bg);
        sc_rest_json_end(req, resp, &w);
        json_decref(bg);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "nodes");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, sc_node_id(req->node));
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "name", sc_node_name(req->node));
    sc_jsonw_key(&w, "tasks");
    sc_jsonw_obj_begin(&w);
    sc_tasks_write(req->node, &w, req->extra, sc_rest_param_get(req, "actions"));
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

void sc_api_tasks_cancel(sc_rest_req *req, sc_rest_resp *resp)
{
    size_t n = sc_tasks_cancel(req->node, req->extra, sc_rest_param_get(req, "actions"));
    if (req->extra && n == 0) {
        sc_rest_errorf(req, resp, 404, "resource_not_found_exception", "task [%s] is not found",
                       req->extra);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "nodes");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}
