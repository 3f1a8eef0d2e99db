/* Snapshot and restore endpoints: PUT/GET/DELETE _snapshot/{repo}, POST _snapshot/{repo}/_verify,
 * PUT/POST/GET/DELETE _snapshot/{repo}/{snapshot}, POST .../_restore and GET _cat/snapshots.
 * JSON in, calls into cluster/snapshot.h, JSON out. Creating a snapshot with
 * wait_for_completion=false runs it as a background task (GET _tasks) and answers
 * {"accepted": true}. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/bgtask.h"
#include "cluster/snapshot.h"
#include "cluster/tasks.h"

static void write_json(sc_rest_req *req, sc_rest_resp *resp, int status, json_t *v)
{
    sc_jsonw w;
    sc_rest_json_begin(req, resp, status, &w);
    sc__api_json_write(&w, v);
    sc_rest_json_end(req, resp, &w);
    json_decref(v);
}

static sc_cluster_error *err_init(sc_cluster_error *e)
{
    memset(e, 0, sizeof *e);
    return e;
}

/* _snapshot and _snapshot/{repo} */
void sc_api_snapshot_repo(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_cluster_error err;
    err_init(&err);
    const char *repo = req->extra;
    sc_status st;
    if (req->method == SC_REST_GET || req->method == SC_REST_HEAD) {
        json_t *out;
        st = sc_snapshot_repo_get(req->node, repo, &out, &err);
        if (st == SC_OK)
            write_json(req, resp, 200, out);
    } else if (!repo) {
        sc_rest_errorf(req, resp, 405, "illegal_argument_exception",
                       "Incorrect HTTP method for uri [/_snapshot] and method [%s], allowed: "
                       "[GET]",
                       sc_rest_method_name(req->method));
        return;
    } else if (req->method == SC_REST_DELETE) {
        st = sc_snapshot_repo_delete(req->node, repo, &err);
        if (st == SC_OK)
            sc_rest_ack(req, resp);
    } else {
        json_t *body;
        if (!sc__api_body_json(req, resp, true, &body))
            return;
        st = sc_snapshot_repo_put(req->node, repo, body, &err);
        json_decref(body);
        if (st == SC_OK)
            sc_rest_ack(req, resp);
    }
    if (st != SC_OK)
        sc__api_cluster_error(req, resp, &err);
}

void sc_api_snapshot_verify(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_cluster_error err;
    json_t *out;
    if (sc_snapshot_repo_verify(req->node, req->extra, &out, err_init(&err)) == SC_OK)
        write_json(req, resp, 200, out);
    else
        sc__api_cluster_error(req, resp, &err);
}

/* ---- create ---- */

static json_t *bg_run(void *ctx, sc_task *task, bool *error)
{
    sc_cluster_error err;
    json_t *out = sc_snapshot_run(ctx, task, err_init(&err));
    if (!out) {
        *error = true;
        out =
            json_pack("{s:s,s:s}", "type", err.type ? err.type : "exception", "reason", err.reason);
    }
    return out;
}

static json_t *bg_status(void *ctx)
{
    return sc_snapshot_job_status(ctx);
}

static void bg_free(void *ctx)
{
    sc_snapshot_job_free(ctx);
}

static void create(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    sc_cluster_error err;
    sc_snapshot_job *job;
    sc_status st =
        sc_snapshot_prepare(req->node, req->extra, req->index, body, &job, err_init(&err));
    json_decref(body);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    if (!sc_rest_param_bool(req, "wait_for_completion", false)) {
        char id[64];
        if (sc_bgtask_start(req->node, "cluster:admin/snapshot/create", sc_snapshot_job_name(job),
                            bg_run, bg_status, bg_free, job, id) != SC_OK) {
            sc_rest_error(req, resp, 500, "exception", "cannot start the snapshot task", NULL, 0);
            return;
        }
        write_json(req, resp, 200, json_pack("{s:b,s:s}", "accepted", 1, "task", id));
        return;
    }
    sc_task task;
    sc_task_begin(req->node, &task, "cluster:admin/snapshot/create", sc_snapshot_job_name(job));
    json_t *out = sc_snapshot_run(job, &task, &err);
    sc_task_end(req->node, &task);
    sc_snapshot_job_free(job);
    if (out)
        write_json(req, resp, 200, out);
    else
        sc__api_cluster_error(req, resp, &err);
}

/* _snapshot/{repo}/{snapshot} */
void sc_api_snapshot(sc_rest_req *req, sc_rest_resp *resp)
{
    if (req->method == SC_REST_PUT || req->method == SC_REST_POST) {
        create(req, resp);
        return;
    }
    sc_cluster_error err;
    err_init(&err);
    sc_status st;
    if (req->method == SC_REST_DELETE) {
        st = sc_snapshot_delete(req->node, req->extra, req->index, &err);
        if (st == SC_OK)
            sc_rest_ack(req, resp);
    } else {
        json_t *out;
        st = sc_snapshot_get(req->node, req->extra, req->index, &out, &err);
        if (st == SC_OK)
            write_json(req, resp, 200, out);
    }
    if (st != SC_OK)
        sc__api_cluster_error(req, resp, &err);
}

/* GET _snapshot/{repo}/_current: the running snapshots (the router keeps `_` names literal). */
void sc_api_snapshot_current(sc_rest_req *req, sc_rest_resp *resp)
{
    req->index = "_current";
    sc_api_snapshot(req, resp);
}

void sc_api_snapshot_restore(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    sc_cluster_error err;
    json_t *out;
    sc_status st =
        sc_snapshot_restore(req->node, req->extra, req->index, body, &out, err_init(&err));
    json_decref(body);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    if (!sc_rest_param_bool(req, "wait_for_completion", false)) {
        json_decref(out);
        out = json_pack("{s:b}", "accepted", 1);
    }
    write_json(req, resp, 200, out);
}

/* ---- _cat/snapshots ---- */

static const char *hms(sc_rest_req *req, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    return sc__api_fmt(req, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static const char *duration(sc_rest_req *req, int64_t ms)
{
    if (ms < 1000)
        return sc__api_fmt(req, "%lldms", (long long)ms);
    if (ms < 60000)
        return sc__api_fmt(req, "%.1fs", ms / 1000.0);
    return sc__api_fmt(req, "%.1fm", ms / 60000.0);
}

#define CAT_COLS 12

static const char *const cat_header[CAT_COLS] = {
    "id",       "repository", "status",  "start_epoch",       "start_time",    "end_epoch",
    "end_time", "duration",   "indices", "successful_shards", "failed_shards", "total_shards"};

/* Appends one row per snapshot of repo to rows (json arrays of strings). */
static sc_status cat_repo(sc_rest_req *req, const char *repo, json_t *rows, sc_cluster_error *err)
{
    json_t *out;
    SC_TRY(sc_snapshot_get(req->node, repo, "_all", &out, err));
    size_t i;
    json_t *s;
    json_array_foreach (json_object_get(out, "snapshots"), i, s) {
        int64_t start = json_integer_value(json_object_get(s, "start_time_in_millis"));
        json_t *endv = json_object_get(s, "end_time_in_millis");
        int64_t end = endv ? json_integer_value(endv) : 0;
        json_t *sh = json_object_get(s, "shards");
        json_t *row = json_array();
        const char *cells[CAT_COLS] = {
            json_string_value(json_object_get(s, "snapshot")),
            repo,
            json_string_value(json_object_get(s, "state")),
            sc__api_fmt(req, "%lld", (long long)(start / 1000)),
            hms(req, start),
            endv ? sc__api_fmt(req, "%lld", (long long)(end / 1000)) : "0",
            endv ? hms(req, end) : "00:00:00",
            duration(req, endv ? end - start : 0),
            sc__api_fmt(req, "%zu", json_array_size(json_object_get(s, "indices"))),
            sc__api_fmt(req, "%lld", json_integer_value(json_object_get(sh, "successful"))),
            sc__api_fmt(req, "%lld", json_integer_value(json_object_get(sh, "failed"))),
            sc__api_fmt(req, "%lld", json_integer_value(json_object_get(sh, "total")))};
        for (int c = 0; c < CAT_COLS; c++)
            json_array_append_new(row, json_string(cells[c] ? cells[c] : ""));
        json_array_append_new(rows, row);
    }
    json_decref(out);
    return SC_OK;
}

void sc_api_cat_snapshots(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_cluster_error err;
    err_init(&err);
    json_t *repos;
    if (sc_snapshot_repo_get(req->node, req->extra, &repos, &err) != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    json_t *rows = json_array();
    const char *name;
    json_t *v;
    sc_status st = SC_OK;
    json_object_foreach (repos, name, v) {
        if (st == SC_OK)
            st = cat_repo(req, name, rows, &err);
    }
    json_decref(repos);
    if (st != SC_OK) {
        json_decref(rows);
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    const char *f = sc_rest_param_get(req, "format");
    if (f && !strcmp(f, "json")) {
        json_t *list = json_array();
        size_t i;
        json_t *row;
        json_array_foreach (rows, i, row) {
            json_t *o = json_object();
            for (int c = 0; c < CAT_COLS; c++)
                json_object_set(o, cat_header[c], json_array_get(row, (size_t)c));
            json_array_append_new(list, o);
        }
        json_decref(rows);
        write_json(req, resp, 200, list);
        return;
    }
    size_t n = json_array_size(rows);
    sc__api_table t = {.n_cols = CAT_COLS, .n_rows = n};
    t.cells = sc_arena_alloc(req->arena, (n + 1) * CAT_COLS * sizeof *t.cells);
    if (!t.cells) {
        json_decref(rows);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    for (int c = 0; c < CAT_COLS; c++)
        t.cells[c] = cat_header[c];
    for (size_t r = 0; r < n; r++)
        for (int c = 0; c < CAT_COLS; c++)
            t.cells[(r + 1) * CAT_COLS + (size_t)c] = sc__api_fmt(
                req, "%s", json_string_value(json_array_get(json_array_get(rows, r), (size_t)c)));
    for (int c = 3; c < CAT_COLS; c++)
        t.right[c] = c != 4 && c != 6 && c != 7;
    json_decref(rows);
    sc_vec_clear(&resp->body);
    resp->status = 200;
    resp->content_type = "text/plain; charset=UTF-8";
    resp->no_filter = true;
    sc__api_table_write(resp, &t, sc_rest_param_bool(req, "v", false));
}
