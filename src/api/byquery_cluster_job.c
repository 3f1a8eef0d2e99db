/* _reindex, and _update_by_query / _delete_by_query run as a task (wait_for_completion=false),
 * on a cluster (byquery_internal.h). A node holds only its own shard copies, so the job reads
 * the source through the cluster, as a client would: a clustered scroll (sliced with ?slices)
 * over every shard wherever it lives, and writes each page as one _bulk request, which goes to
 * the primaries on whatever node holds them. Update and delete name each hit's _seq_no and
 * _primary_term, so a document changed since the scroll opened is a version conflict. Both run
 * in-process through the REST handlers (api_search.c, api_scroll.c, api_bulk.c), so the job
 * sees exactly what a client's scroll and bulk see; the task, its status and its cancellation
 * (between pages) are those of the single-node job (api_byquery.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/byquery_internal.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "base/vec.h"
#include "cluster/alias.h"
#include "cluster/node.h"

/* The scroll's keep-alive, renewed by every page. A throttled job waits between pages, up to
 * a page at the rate asked for; an hour covers 1000 documents at 0.3 per second. */
#define KEEP_ALIVE "1h"
#define MAX_THREADS 16

/* Runs handler h on this node as a request with one optional parameter; returns the answer's
 * JSON (new reference, NULL when not JSON) and its status. With raw (a search page), the body
 * is also handed over in *raw (free with sc_vec_free): the hits' _source are copied from it
 * byte for byte, not re-serialized (jansson would write 0.1 as 0.10000000000000001). */
static json_t *call(sc_node *node, sc_arena *a, sc_rest_handler h, sc_rest_method m,
                    const char *path, const char *index, const char *key, const char *value,
                    const char *ctype, sc_slice body, int *status, sc_buf *raw)
{
    sc_rest_req r = {.method = m,
                     .method_str = sc_rest_method_name(m),
                     .path = path,
                     .body = body,
                     .content_type = ctype,
                     .index = index,
                     .arena = a,
                     .node = node,
                     .client_fd = -1};
    if (key) {
        r.params[0] = (sc_rest_param){.key = key, .value = value};
        r.n_params = 1;
    }
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    h(&r, &resp);
    *status = resp.status;
    json_error_t jerr;
    json_t *out = json_loadb((const char *)resp.body.ptr, resp.body.len, 0, &jerr);
    if (raw) {
        *raw = resp.body;
        resp.body = (sc_buf){0};
    }
    sc_rest_resp_fini(&resp);
    return out;
}

static json_t *call_json(sc_node *node, sc_arena *a, sc_rest_handler h, const char *path,
                         const char *index, const char *key, const char *value, const json_t *body,
                         int *status, sc_buf *raw)
{
    char *text = json_dumps(body, JSON_COMPACT);
    if (!text) {
        *status = 500;
        return NULL;
    }
    json_t *out = call(node, a, h, SC_REST_POST, path, index, key, value, "application/json",
                       sc_slice_make(text, strlen(text)), status, raw);
    free(text);
    return out;
}

/* An error answer (or none) as a failure that stops the job. */
static void fail_with(job *j, const char *index, const json_t *ans, int status, const char *what)
{
    const json_t *e = json_object_get(ans, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *reason = json_string_value(json_object_get(e, "reason"));
    char buf[160];
    if (!reason) {
        snprintf(buf, sizeof buf, "the %s answered %d", what, status);
        reason = buf;
    }
    sc__byquery_add_failure(j, index, "", status ? status : 500, type, reason);
}

/* The search body of slice sl (of n): the query, page size, _doc order, and what the writes
 * need (seq_no_primary_term for in-place writes, the source fields to copy for a reindex). */
static json_t *search_body(const job *sl, uint32_t n_slices)
{
    uint32_t size = sl->batch;
    if (sl->max_docs >= 0 && (int64_t)size > sl->max_docs)
        size = sl->max_docs > 0 ? (uint32_t)sl->max_docs : 1;
    json_t *b = json_pack("{s:i,s:[s],s:b}", "size", (json_int_t)size, "sort", "_doc",
                          "track_total_hits", 1);
    if (!b)
        return NULL;
    json_object_set_new(b, "query",
                        sl->query ? json_deep_copy(sl->query) : json_pack("{s:{}}", "match_all"));
    if (sl->kind != JOB_REINDEX)
        json_object_set_new(b, "seq_no_primary_term", json_true());
    if (sl->kind == JOB_REINDEX && sl->source_fields)
        json_object_set_new(b, "_source", json_deep_copy(sl->source_fields));
    if (n_slices > 1)
        json_object_set_new(b, "slice",
                            json_pack("{s:i,s:i}", "id", sl->slice_id, "max", (int)n_slices));
    return b;
}

/* ---- the raw _source of each hit of a search page (copied byte for byte) ---- */

static const char *ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* The end of the JSON value at p, NULL when it is malformed or runs past e. */
static const char *skip(const char *p, const char *e)
{
    p = ws(p, e);
    if (p >= e)
        return NULL;
    if (*p == '"') {
        for (p++; p < e; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < e) {
            if (*p == '"') {
                p = skip(p, e);
                if (!p)
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
        p++;
    return p > start ? p : NULL;
}

/* The value of member `key` (a plain ASCII key) of the object at p, NULL when absent. */
static const char *member(const char *p, const char *e, const char *key)
{
    p = ws(p, e);
    if (p >= e || *p != '{')
        return NULL;
    p++;
    size_t klen = strlen(key);
    for (;;) {
        p = ws(p, e);
        if (p >= e || *p != '"')
            return NULL;
        const char *k = p + 1, *kend = skip(p, e);
        if (!kend)
            return NULL;
        p = ws(kend, e);
        if (p >= e || *p != ':')
            return NULL;
        const char *v = ws(p + 1, e);
        if ((size_t)(kend - 1 - k) == klen && !memcmp(k, key, klen))
            return v;
        p = skip(v, e);
        if (!p)
            return NULL;
        p = ws(p, e);
        if (p >= e || *p != ',')
            return NULL;
        p++;
    }
}

bool sc__byquery_source_spans(const uint8_t *text, size_t len, sc_slice *spans, size_t n)
{
    const char *p = (const char *)text, *e = p + len;
    const char *hits = member(p, e, "hits");
    const char *arr = hits ? member(hits, e, "hits") : NULL;
    if (!arr || arr >= e || *arr != '[')
        return false;
    p = arr + 1;
    for (size_t i = 0;; i++) {
        p = ws(p, e);
        if (p < e && *p == ']')
            return i == n;
        if (i >= n)
            return false;
        const char *src = member(p, e, "_source");
        const char *end = src ? skip(src, e) : NULL;
        spans[i] = end ? sc_slice_make(src, (size_t)(end - src)) : sc_slice_make(NULL, 0);
        p = skip(p, e);
        if (!p)
            return false;
        p = ws(p, e);
        if (p < e && *p == ',')
            p++;
    }
}

/* Appends one bulk item (action line and, but for a delete, the source) for hit h. */
static bool add_item(const job *sl, sc_buf *out, const json_t *h, sc_slice raw_src)
{
    const json_t *id = json_object_get(h, "_id");
    if (!json_is_string(id))
        return true;
    json_t *meta = json_pack(
        "{s:s,s:O}", "_index",
        sl->kind == JOB_REINDEX ? sl->dest : json_string_value(json_object_get(h, "_index")), "_id",
        id);
    if (!meta)
        return false;
    const json_t *routing = json_object_get(h, "_routing");
    if (json_is_string(routing))
        json_object_set(meta, "routing", (json_t *)routing);
    const json_t *seq = json_object_get(h, "_seq_no"), *term = json_object_get(h, "_primary_term");
    if (sl->kind != JOB_REINDEX && json_is_number(seq) && json_is_number(term)) {
        json_object_set_new(meta, "if_seq_no", json_integer((json_int_t)json_number_value(seq)));
        json_object_set_new(meta, "if_primary_term",
                            json_integer((json_int_t)json_number_value(term)));
    }
    if (sl->kind != JOB_DELETE && sl->pipeline)
        json_object_set_new(meta, "pipeline", json_string(sl->pipeline));
    const char *op = sl->kind == JOB_DELETE                       ? "delete"
                     : sl->kind == JOB_REINDEX && sl->dest_create ? "create"
                                                                  : "index";
    json_t *action = json_pack("{s:o}", op, meta);
    char *line = action ? json_dumps(action, JSON_COMPACT) : NULL;
    json_decref(action);
    bool ok = line && sc_vec_append(out, (const unsigned char *)line, strlen(line)) == SC_OK &&
              sc_vec_push(out, '\n') == SC_OK;
    free(line);
    if (ok && sl->kind != JOB_DELETE) {
        if (!raw_src.ptr)
            raw_src = sc_slice_cstr("{}");
        size_t at = out->len;
        ok = sc_vec_append(out, raw_src.ptr, raw_src.len) == SC_OK &&
             sc_vec_push(out, '\n') == SC_OK;
        /* a source indexed pretty-printed keeps its line breaks; outside strings (the only
         * place JSON allows them) they are white space, and a bulk line must not hold one */
        for (size_t i = at; ok && i + 1 < out->len; i++)
            if (out->ptr[i] == '\n' || out->ptr[i] == '\r')
                out->ptr[i] = ' ';
    }
    return ok;
}

/* Counts a bulk answer's items as the single-node job counts its writes; false when a
 * failure stops the job (a conflict without conflicts=proceed, or any other error). */
static bool account(job *sl, const json_t *items)
{
    bool ok = true;
    size_t i;
    const json_t *it;
    json_array_foreach (items, i, it) {
        const char *op;
        const json_t *r;
        json_object_foreach ((json_t *)it, op, r) {
            const char *res = json_string_value(json_object_get(r, "result"));
            int status = (int)json_integer_value(json_object_get(r, "status"));
            const json_t *err = json_object_get(r, "error");
            if (res && !err && !strcmp(res, "created"))
                sl->created++;
            else if (res && !err && !strcmp(res, "updated"))
                sl->updated++;
            else if (res && !err && !strcmp(res, "deleted"))
                sl->deleted++;
            else if (res && !err && !strcmp(res, "noop"))
                sl->noops++;
            else if (status == 409 || (res && !strcmp(res, "not_found"))) {
                sl->conflicts++;
                if (sl->proceed)
                    continue;
            }
            if (!err && (status == 409 || (res && !strcmp(res, "not_found"))))
                err = json_pack("{s:s,s:s}", "type", "version_conflict_engine_exception", "reason",
                                "the document is gone");
            else if (!err)
                continue;
            else
                json_incref((json_t *)err);
            const char *ix = json_string_value(json_object_get(r, "_index"));
            const char *id = json_string_value(json_object_get(r, "_id"));
            sc__byquery_add_failure(sl, ix ? ix : "", id ? id : "", status ? status : 500,
                                    json_string_value(json_object_get(err, "type")),
                                    json_string_value(json_object_get(err, "reason")));
            json_decref((json_t *)err);
            ok = false;
        }
    }
    return ok;
}

/* Writes one page's hits (at most `keep`) with one _bulk request; false when the job stops. */
static bool write_page(job *sl, sc_arena *a, const json_t *hits, const sc_slice *srcs, size_t keep)
{
    sc_buf body = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < keep; i++)
        ok = add_item(sl, &body, json_array_get(hits, i), srcs[i]);
    if (!ok) {
        sc_vec_free(&body);
        sc__byquery_add_failure(sl, sl->source, "", 500, "exception", "out of memory");
        return false;
    }
    if (!body.len) {
        sc_vec_free(&body);
        return true;
    }
    int status = 0;
    json_t *ans = call(sl->node, a, sc_api_bulk, SC_REST_POST, "/_bulk", NULL, NULL, NULL,
                       "application/x-ndjson", sc_slice_make(body.ptr, body.len), &status, NULL);
    sc_vec_free(&body);
    const json_t *items = json_object_get(ans, "items");
    if (status != 200 || !json_is_array(items)) {
        fail_with(sl, sl->kind == JOB_REINDEX ? sl->dest : sl->source, ans, status, "bulk write");
        json_decref(ans);
        return false;
    }
    ok = account(sl, items);
    json_decref(ans);
    return ok;
}

/* Slice sl of n (n = 1: the whole job): scrolls its part of the source and writes it page by
 * page. false when a failure stopped it. */
static bool run_slice(job *sl, uint32_t n_slices)
{
    json_t *body = search_body(sl, n_slices);
    if (!body) {
        sc__byquery_add_failure(sl, sl->source, "", 500, "exception", "out of memory");
        return false;
    }
    char *scroll_id = NULL;
    uint64_t done = 0;
    bool ok = true, first = true;
    while (ok) {
        if (sl->task && atomic_load(&sl->task->token.cancelled))
            break;
        if (sl->max_docs >= 0 && (int64_t)done >= sl->max_docs)
            break;
        sc_arena a;
        sc_arena_init(&a, (size_t)256 << 20);
        int status = 0;
        json_t *page;
        sc_buf raw = {0};
        if (first) {
            char path[512];
            snprintf(path, sizeof path, "/%s/_search", sl->source);
            page = call_json(sl->node, &a, sc_api_search, path, sl->source, "scroll", KEEP_ALIVE,
                             body, &status, &raw);
        } else {
            json_t *sb = json_pack("{s:s,s:s}", "scroll_id", scroll_id, "scroll", KEEP_ALIVE);
            page = sb ? call_json(sl->node, &a, sc_api_scroll, "/_search/scroll", NULL, NULL, NULL,
                                  sb, &status, &raw)
                      : NULL;
            json_decref(sb);
        }
        const json_t *hits = json_object_get(json_object_get(page, "hits"), "hits");
        const char *sid = json_string_value(json_object_get(page, "_scroll_id"));
        size_t n_hits = json_array_size(hits);
        sc_slice *srcs = n_hits ? sc_arena_calloc(&a, n_hits, sizeof *srcs) : NULL;
        if (status == 200 && json_is_array(hits) && n_hits &&
            (!srcs || !sc__byquery_source_spans(raw.ptr, raw.len, srcs, n_hits))) {
            sc__byquery_add_failure(sl, sl->source, "", 500, "exception",
                                    "cannot read the sources of a search page");
            ok = false;
        } else if (status != 200 || !json_is_array(hits)) {
            fail_with(sl, sl->source, page, status, "source scroll");
            ok = false;
        } else {
            if (sid && (!scroll_id || strcmp(sid, scroll_id))) {
                free(scroll_id);
                scroll_id = strdup(sid);
            }
            if (first) {
                int64_t total = (int64_t)json_number_value(json_object_get(
                    json_object_get(json_object_get(page, "hits"), "total"), "value"));
                sl->total = sl->max_docs >= 0 && total > sl->max_docs ? sl->max_docs : total;
                first = false;
            }
            size_t keep = json_array_size(hits);
            if (sl->max_docs >= 0 && (int64_t)(done + keep) > sl->max_docs)
                keep = (size_t)(sl->max_docs - (int64_t)done);
            if (!keep) {
                json_decref(page);
                sc_vec_free(&raw);
                sc_arena_fini(&a);
                break;
            }
            ok = write_page(sl, &a, hits, srcs, keep);
            sl->batches++;
            done += keep;
        }
        json_decref(page);
        sc_vec_free(&raw);
        sc_arena_fini(&a);
        if (ok)
            sc__byquery_throttle(sl, done);
    }
    json_decref(body);
    if (scroll_id) {
        sc_arena a;
        sc_arena_init(&a, (size_t)1 << 20);
        json_t *cb = json_pack("{s:s}", "scroll_id", scroll_id);
        int status = 0;
        char *text = cb ? json_dumps(cb, JSON_COMPACT) : NULL;
        if (text)
            json_decref(call(sl->node, &a, sc_api_scroll_clear, SC_REST_DELETE, "/_search/scroll",
                             NULL, NULL, NULL, "application/json",
                             sc_slice_make(text, strlen(text)), &status, NULL));
        free(text);
        json_decref(cb);
        sc_arena_fini(&a);
        free(scroll_id);
    }
    return ok;
}

typedef struct pool {
    job *j;
    uint32_t n;
    _Atomic uint32_t next;
    _Atomic bool failed;
} pool;

static void *slice_main(void *arg)
{
    pool *p = arg;
    for (uint32_t k; (k = atomic_fetch_add(&p->next, 1)) < p->n;)
        if (!run_slice(&p->j->slices[k], p->n))
            atomic_store(&p->failed, true);
    return NULL;
}

/* The number of slices: ?slices, auto = the source's smallest shard count; a clustered sliced
 * scroll splits by shard, so never more than that. */
static uint32_t slice_count(const job *j, const sc_resolved *res)
{
    uint32_t min_shards = 0;
    for (size_t i = 0; i < res->n; i++) {
        uint32_t ns = res->list[i]->settings.number_of_shards;
        if (!min_shards || ns < min_shards)
            min_shards = ns;
    }
    uint32_t n = j->n_slices ? j->n_slices : min_shards;
    return n > min_shards ? min_shards : n ? n : 1;
}

/* Refreshes `index` through the cluster (every node holding a copy). */
static void refresh(sc_node *node, const char *index)
{
    sc_arena a;
    sc_arena_init(&a, (size_t)1 << 20);
    char path[512];
    snprintf(path, sizeof path, "/%s/_refresh", index);
    int status = 0;
    json_decref(call(node, &a, sc_api_refresh, SC_REST_POST, path, index, NULL, NULL, NULL,
                     sc_slice_make("", 0), &status, NULL));
    sc_arena_fini(&a);
}

int sc__byquery_run_cluster(job *j, sc_rest_req *req, sc_rest_resp *resp)
{
    sc_resolved res;
    sc_cluster_error err;
    if (sc_node_resolve_read(req->node, j->source, 0, &res, &err) != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return -1;
    }
    uint32_t n = slice_count(j, &res);
    sc_resolved_fini(&res);
    /* The query is checked once (a count through the cluster) so that a bad one is the
     * request's error, as on a single node, not a failure of each slice. */
    json_t *cb = json_pack("{s:o}", "query",
                           j->query ? json_deep_copy(j->query) : json_pack("{s:{}}", "match_all"));
    char path[512];
    snprintf(path, sizeof path, "/%s/_count", j->source);
    int status = 0;
    json_t *ans = cb ? call_json(req->node, req->arena, sc_api_count, path, j->source, NULL, NULL,
                                 cb, &status, NULL)
                     : NULL;
    json_decref(cb);
    if (status != 200 || !ans) {
        if (ans) {
            sc_jsonw w;
            sc_rest_json_begin(req, resp, status, &w);
            sc__api_json_write(&w, ans);
            sc_rest_json_end(req, resp, &w);
        } else {
            sc_rest_error(req, resp, 500, "exception", "the source cannot be counted", NULL, 0);
        }
        json_decref(ans);
        return -1;
    }
    json_decref(ans);
    bool ok;
    if (n <= 1) {
        ok = run_slice(j, 1);
    } else {
        job *subs = calloc(n, sizeof *subs);
        ok = subs != NULL;
        for (uint32_t k = 0; k < n && ok; k++)
            ok = sc__byquery_slice_init(&subs[k], j, k, n);
        if (subs) {
            j->slices = subs;
            j->n_sub = n; /* from here GET _tasks shows the slices */
        }
        if (!ok) {
            sc__byquery_add_failure(j, j->source, "", 500, "exception", "out of memory");
            return 0;
        }
        pool p = {.j = j, .n = n};
        pthread_t th[MAX_THREADS];
        uint32_t n_th = 0;
        while (n_th < (n < MAX_THREADS ? n : MAX_THREADS) &&
               pthread_create(&th[n_th], NULL, slice_main, &p) == 0)
            n_th++;
        if (!n_th)
            slice_main(&p);
        for (uint32_t t = 0; t < n_th; t++)
            pthread_join(th[t], NULL);
        for (uint32_t k = 0; k < n; k++)
            json_array_extend(j->failures, subs[k].failures);
        ok = !atomic_load(&p.failed);
    }
    if (j->refresh)
        refresh(req->node, j->kind == JOB_REINDEX ? j->dest : j->source);
    return ok ? 1 : 0;
}
