/* POST /_reindex, /{index}/_delete_by_query and /{index}/_update_by_query: the matching
 * documents are read in batches from searcher snapshots pinned at the start (a consistent view
 * while the writes go on) and written back in one sc_index_write per index and batch. Each run
 * is a task (GET _tasks, cancellation between batches); with wait_for_completion=false it runs
 * on a background thread (cluster/bgtask.h) and GET /_tasks/{id} reports its progress and
 * final response. With ?slices=N (or auto: one per source shard) the work is split into N
 * slices that run in parallel on their own threads over the same pinned snapshots: by shard
 * when there are at least N source shards, else the slices sharing a shard split its documents
 * by a hash of _id; each slice reports its own status. Scripts are refused with 400. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/byquery_cluster.h"
#include "api/byquery_internal.h"
#include "api/docs.h"
#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_internal.h"
#include "base/clock.h"
#include "base/file.h"
#include "cluster/alias.h"
#include "cluster/bgtask.h"
#include "cluster/ops.h"
#include "cluster/scroll.h"
#include "cluster/search.h"

static void slices_free(job *j)
{
    for (uint32_t k = 0; k < j->n_sub; k++) {
        json_decref(j->slices[k].failures);
        free(j->slices[k].only_shards);
    }
    free(j->slices);
    j->slices = NULL;
    j->n_sub = 0;
}

static void job_free(void *v)
{
    job *j = v;
    if (!j)
        return;
    slices_free(j);
    free(j->source);
    free(j->dest);
    free(j->pipeline);
    json_decref(j->query);
    json_decref(j->failures);
    json_decref(j->source_fields);
    free(j);
}

static json_t *slice_status(job *j)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:i,s:i},s:I,s:f,s:i}", "total",
                     (json_int_t)j->total, "updated", (json_int_t)j->updated, "created",
                     (json_int_t)j->created, "deleted", (json_int_t)j->deleted, "batches",
                     (json_int_t)j->batches, "version_conflicts", (json_int_t)j->conflicts, "noops",
                     (json_int_t)j->noops, "retries", "bulk", 0, "search", 0, "throttled_millis",
                     (json_int_t)j->throttled_ms, "requests_per_second", j->rps > 0 ? j->rps : -1.0,
                     "throttled_until_millis", 0);
}

/* The status; a sliced job's counters are the sums of its slices', listed in "slices". */
static json_t *job_status(void *v)
{
    job *j = v;
    if (!j->n_sub)
        return slice_status(j);
    json_t *list = json_array();
    int64_t sum[8] = {0};
    for (uint32_t k = 0; k < j->n_sub; k++) {
        job *sl = &j->slices[k];
        json_t *st = slice_status(sl);
        json_object_set_new(st, "slice_id", json_integer(sl->slice_id));
        json_array_append_new(list, st);
        int64_t v8[8] = {sl->total,   sl->updated,   sl->created, sl->deleted,
                         sl->batches, sl->conflicts, sl->noops,   sl->throttled_ms};
        for (int i = 0; i < 8; i++)
            sum[i] += v8[i];
    }
    json_t *out = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:i,s:i},s:I,s:f,s:i,s:o}", "total",
                            (json_int_t)sum[0], "updated", (json_int_t)sum[1], "created",
                            (json_int_t)sum[2], "deleted", (json_int_t)sum[3], "batches",
                            (json_int_t)sum[4], "version_conflicts", (json_int_t)sum[5], "noops",
                            (json_int_t)sum[6], "retries", "bulk", 0, "search", 0,
                            "throttled_millis", (json_int_t)sum[7], "requests_per_second",
                            j->rps > 0 ? j->rps : -1.0, "throttled_until_millis", 0, "slices",
                            list);
    return out;
}

static json_t *job_response(job *j, bool timed_out)
{
    json_t *r = job_status(j);
    json_object_set_new(r, "took", json_integer(sc_clock_wall_ms() - j->start_ms));
    json_object_set_new(r, "timed_out", json_boolean(timed_out));
    json_object_set_new(r, "failures", json_incref(j->failures));
    if (j->task && atomic_load(&j->task->token.cancelled))
        json_object_set_new(r, "canceled", json_string("by user request"));
    return r;
}

void sc__byquery_add_failure(job *j, const char *index, const char *id, int status,
                             const char *type, const char *reason)
{
    json_array_append_new(j->failures,
                          json_pack("{s:s,s:s,s:i,s:{s:s,s:s}}", "index", index, "id", id, "status",
                                    status, "cause", "type", type ? type : "exception", "reason",
                                    reason ? reason : ""));
}

/* A failure of one document, as Elasticsearch lists it. */
static void add_failure(job *j, const char *index, sc_slice id, const sc_doc_result *r)
{
    json_array_append_new(
        j->failures, json_pack("{s:s,s:s%,s:i,s:{s:s,s:s}}", "index", index, "id",
                               (const char *)id.ptr, id.len, "status", r->status, "cause", "type",
                               r->err.type ? r->err.type : "exception", "reason", r->err.reason));
}

/* Counts the results of one write batch; false when a failure stops the job. */
static bool account(job *j, sc_index *ix, const sc_doc_write *w, const sc_doc_result *r, size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const char *res = r[i].result;
        if (res && !strcmp(res, "created"))
            j->created++;
        else if (res && !strcmp(res, "updated"))
            j->updated++;
        else if (res && !strcmp(res, "deleted"))
            j->deleted++;
        else if (res && !strcmp(res, "noop"))
            j->noops++;
        else if (r[i].status == 409 || (res && !strcmp(res, "not_found"))) {
            j->conflicts++;
            if (!j->proceed) {
                add_failure(j, ix->name, w[i].id, &r[i]);
                ok = false;
            }
        } else if (!res) {
            add_failure(j, ix->name, w[i].id, &r[i]);
            ok = false;
        }
    }
    return ok;
}

/* Writes the page's hits of index `which` (delete or update in place). */
static bool write_in_place(job *j, sc_rest_req *req, sc_index *ix, uint32_t which,
                           const sc_search_response *page)
{
    sc_arena *a = req->arena;
    sc_doc_write *w = sc_arena_calloc(a, page->n_hits ? page->n_hits : 1, sizeof *w);
    sc_doc_result *r = sc_arena_calloc(a, page->n_hits ? page->n_hits : 1, sizeof *r);
    if (!w || !r)
        return false;
    sc__api_ingest_cache cache = {0};
    size_t n = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < page->n_hits; i++) {
        const sc_result_hit *h = &page->hits[i];
        if (h->index_i != which)
            continue;
        sc_slice src = h->source;
        if (j->kind == JOB_UPDATE) {
            /* Updates go through the pipelines again (?pipeline, else the index's). */
            sc_cluster_error err;
            sc__api_ingest_outcome o =
                sc__api_ingest(req, &cache, ix, j->pipeline, h->id, &src, &err);
            if (o == SC_API_INGEST_DROPPED) {
                j->noops++;
                continue;
            }
            if (o == SC_API_INGEST_FAILED) {
                sc_doc_result fr = {.status = err.status, .err = err};
                add_failure(j, ix->name, h->id, &fr);
                ok = false;
                break;
            }
        }
        w[n++] = (sc_doc_write){.op = j->kind == JOB_DELETE ? SC_DOC_DELETE : SC_DOC_INDEX,
                                .id = h->id,
                                .source = src,
                                .if_seq_no = -2};
    }
    sc__api_ingest_cache_fini(&cache);
    if (!ok)
        return false;
    if (!n)
        return true;
    if (sc_index_write(ix, w, n, r, a) != SC_OK)
        return false;
    return account(j, ix, w, r, n);
}

/* Copies the value at dotted `path` of src (if any) to the same path of dst. */
static void copy_path(const json_t *src, json_t *dst, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL, *seg = strtok_r(buf, ".", &save);
    while (seg) {
        char *next = strtok_r(NULL, ".", &save);
        const json_t *v = json_object_get(src, seg);
        if (!v)
            return;
        if (!next) {
            json_object_set(dst, seg, (json_t *)v);
            return;
        }
        json_t *d = json_object_get(dst, seg);
        if (!json_is_object(d)) {
            d = json_object();
            if (json_object_set_new(dst, seg, d) != 0)
                return;
        }
        src = v;
        dst = d;
        seg = next;
    }
}

/* The source limited to j->source_fields, in the arena (the source itself when not set). */
static sc_slice filtered_source(job *j, sc_arena *a, sc_slice src)
{
    if (!j->source_fields)
        return src;
    json_error_t jerr;
    json_t *doc = sc__api_json_loadb(src, &jerr);
    json_t *out = json_object();
    size_t i;
    json_t *f;
    json_array_foreach (j->source_fields, i, f)
        if (json_is_string(f))
            copy_path(doc, out, json_string_value(f));
    char *text = json_dumps(out, JSON_COMPACT);
    char *copy = text ? sc_arena_strndup(a, text, strlen(text)) : NULL;
    free(text);
    json_decref(doc);
    json_decref(out);
    return copy ? sc_slice_make(copy, strlen(copy)) : src;
}

/* Reindex: the page's hits into the destination (with its pipelines). */
static bool write_dest(job *j, sc_rest_req *req, const sc_search_response *page)
{
    sc_cluster_error err;
    const char *routing;
    sc_index *dest = sc__api_index_for_write(req, j->dest, &routing, &err);
    if (!dest) {
        sc_doc_result r = {.status = err.status, .err = err};
        add_failure(j, j->dest, sc_slice_cstr(""), &r);
        return false;
    }
    size_t cap = page->n_hits ? page->n_hits : 1;
    sc_doc_write *w = sc_arena_calloc(req->arena, cap, sizeof *w);
    sc_doc_result *r = sc_arena_calloc(req->arena, cap, sizeof *r);
    sc__api_ingest_cache cache = {0};
    size_t n = 0;
    bool ok = w && r;
    for (size_t i = 0; ok && i < page->n_hits; i++) {
        sc_slice src = filtered_source(j, req->arena, page->hits[i].source);
        sc__api_ingest_outcome o =
            sc__api_ingest(req, &cache, dest, j->pipeline, page->hits[i].id, &src, &err);
        if (o == SC_API_INGEST_DROPPED) {
            j->noops++;
            continue;
        }
        if (o == SC_API_INGEST_FAILED) {
            sc_doc_result fr = {.status = err.status, .err = err};
            add_failure(j, dest->name, page->hits[i].id, &fr);
            ok = false;
            break;
        }
        w[n++] = (sc_doc_write){.op = j->dest_create ? SC_DOC_CREATE : SC_DOC_INDEX,
                                .id = page->hits[i].id,
                                .source = src,
                                .if_seq_no = -2};
    }
    sc__api_ingest_cache_fini(&cache);
    if (ok && n)
        ok = sc_index_write(dest, w, n, r, req->arena) == SC_OK && account(j, dest, w, r, n);
    if (j->refresh)
        sc_index_refresh_after_write(dest, SC_REFRESH_TRUE);
    sc_index_unref(dest);
    return ok;
}

/* One page: the next `size` matches from `from` over the pinned snapshots. */
static sc_status next_page(job *j, sc_rest_req *req, sc_resolved *res, sc_query **queries,
                           sc_scroll *ctx, uint64_t from, uint32_t size, sc_search_response *page)
{
    sc_search_request sr = {.indices = res->list,
                            .queries = queries,
                            .n_indices = res->n,
                            .from = (uint32_t)from,
                            .size = size,
                            .track_total_hits = SC_TRACK_TOTAL_HITS_ALL,
                            .timeout_ms = -1,
                            .fetch_source = true,
                            .task = j->task,
                            .pinned = ctx->pinned,
                            .only_shards = (const uint64_t *const *)j->only_shards};
    return sc_search_run(req->node, &sr, req->arena, page);
}

/* Wraps the query of each index reached through a filtered alias. */
static bool alias_filters(sc_rest_req *req, sc_rest_resp *resp, job *j, sc_resolved *res,
                          sc_query **queries)
{
    for (size_t i = 0; i < res->n; i++) {
        if (!res->filters[i])
            continue;
        json_t *q = j->query ? json_incref(j->query) : json_pack("{s:{}}", "match_all");
        json_t *wrapped =
            json_pack("{s:{s:[o],s:[O]}}", "bool", "must", q, "filter", res->filters[i]);
        bool ok =
            wrapped && sc__search_build_queries(req, resp, wrapped, &res->list[i], 1, &queries[i]);
        json_decref(wrapped);
        if (!ok)
            return false;
    }
    return true;
}

/* In steps of at most 100 ms, so a cancellation is seen. */
void sc__byquery_throttle(job *j, uint64_t done)
{
    if (j->rps <= 0)
        return;
    double wait_ms = (double)done * 1000.0 / j->rps;
    int64_t due_ms = j->start_ms + (int64_t)(wait_ms < 1e12 ? wait_ms : 1e12);
    for (int64_t now = sc_clock_wall_ms(); now < due_ms; now = sc_clock_wall_ms()) {
        if (j->task && atomic_load(&j->task->token.cancelled))
            return;
        int64_t step = due_ms - now < 100 ? due_ms - now : 100;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step * 1000000L};
        nanosleep(&ts, NULL);
        j->throttled_ms += step;
    }
}

/* A hash-split slice keeps only its documents of the page (compacted in place). */
static void keep_slice(job *j, sc_search_response *page)
{
    size_t n = 0;
    for (size_t i = 0; i < page->n_hits; i++) {
        sc_slice id = page->hits[i].id;
        if (sc_checksum(id.ptr, id.len) % j->hash_mod == j->hash_rem)
            page->hits[n++] = page->hits[i];
    }
    page->n_hits = n;
}

/* The batches over the pinned snapshots; false when a write failure stopped the job. */
static bool run_batches(job *j, sc_rest_req *req, sc_resolved *res, sc_query **queries,
                        sc_scroll *ctx)
{
    sc_arena *outer = req->arena;
    uint64_t from = 0, done = 0;
    bool ok = true, first = true;
    bool hashed = j->hash_mod > 1;
    while (ok) {
        if (j->task && atomic_load(&j->task->token.cancelled))
            break;
        uint32_t size = j->batch;
        if (j->max_docs >= 0 && (int64_t)done + size > j->max_docs)
            size = (uint32_t)(j->max_docs - (int64_t)done);
        if (!size)
            break;
        sc_arena batch;
        sc_arena_init(&batch, (size_t)256 << 20);
        req->arena = &batch;
        sc_search_response page;
        ok = next_page(j, req, res, queries, ctx, from, size, &page) == SC_OK;
        if (ok && first && !hashed) {
            j->total = j->max_docs >= 0 && (int64_t)page.total > j->max_docs ? j->max_docs
                                                                             : (int64_t)page.total;
            first = false;
        }
        bool more = ok && page.n_hits > 0;
        uint64_t read = more ? page.n_hits : 0;
        if (more && hashed) {
            keep_slice(j, &page);
            j->total += (int64_t)page.n_hits; /* known only as the pages go by */
        }
        done += page.n_hits;
        if (more && j->kind == JOB_REINDEX)
            ok = write_dest(j, req, &page);
        for (uint32_t i = 0; more && ok && j->kind != JOB_REINDEX && i < res->n; i++)
            ok = write_in_place(j, req, res->list[i], i, &page);
        if (more && page.n_hits)
            j->batches++;
        from += read;
        req->arena = outer;
        sc_arena_fini(&batch);
        if (!more)
            break;
        sc__byquery_throttle(j, done);
    }
    req->arena = outer;
    return ok;
}

/* ---- slices ---- */

bool sc__byquery_slice_init(job *sl, const job *j, uint32_t k, uint32_t n)
{
    sl->kind = j->kind;
    sl->node = j->node;
    sl->source = j->source;
    sl->query = j->query;
    sl->max_docs =
        j->max_docs < 0 ? -1 : j->max_docs / n + ((uint64_t)k < (uint64_t)(j->max_docs % n));
    sl->batch = j->batch;
    sl->proceed = j->proceed;
    sl->dest = j->dest;
    sl->dest_create = j->dest_create;
    sl->pipeline = j->pipeline;
    sl->source_fields = j->source_fields;
    sl->refresh = j->refresh;
    sl->rps = j->rps > 0 ? j->rps / n : j->rps;
    sl->task = j->task;
    sl->start_ms = j->start_ms;
    sl->n_slices = 1;
    sl->slice_id = (int)k;
    sl->failures = json_array();
    return sl->failures != NULL;
}

typedef struct slice_pool {
    job *j;
    sc_resolved *res;
    sc_query **queries;
    sc_scroll *ctx;
    _Atomic uint32_t next;
    _Atomic bool failed;
} slice_pool;

/* A worker: runs slices until none is left, each with its own arena. */
static void *slice_main(void *arg)
{
    slice_pool *p = arg;
    for (uint32_t k; (k = atomic_fetch_add(&p->next, 1)) < p->j->n_sub;) {
        sc_arena arena;
        sc_arena_init(&arena, (size_t)64 << 20);
        sc_rest_req req = {.arena = &arena, .node = p->j->node, .client_fd = -1};
        if (!run_batches(&p->j->slices[k], &req, p->res, p->queries, p->ctx))
            atomic_store(&p->failed, true);
        sc_arena_fini(&arena);
    }
    return NULL;
}

/* The shards of slice k of n over the res's shards (units in index order, then shard): every
 * n-th unit when there are at least n, else one unit shared by hash with the other slices
 * that land on it. false on ENOMEM. */
static bool slice_assign(job *sl, const sc_resolved *res, uint32_t k, uint32_t n, uint32_t units)
{
    size_t words = 0;
    for (size_t i = 0; i < res->n; i++)
        words += (res->list[i]->settings.number_of_shards + 63) / 64;
    sl->only_shards = calloc(1, res->n * sizeof(uint64_t *) + words * sizeof(uint64_t));
    if (!sl->only_shards)
        return false;
    uint64_t *w = (uint64_t *)(sl->only_shards + res->n);
    uint32_t u = 0;
    uint32_t mine = n <= units ? k : k % units;
    for (size_t i = 0; i < res->n; i++) {
        uint32_t ns = res->list[i]->settings.number_of_shards;
        sl->only_shards[i] = w;
        for (uint32_t sh = 0; sh < ns; sh++, u++)
            if (n <= units ? u % n == mine : u == mine)
                w[sh / 64] |= 1ull << (sh % 64);
        w += (ns + 63) / 64;
    }
    if (n > units) {
        sl->hash_mod = (n - mine + units - 1) / units;
        sl->hash_rem = k / units;
    }
    return true;
}

/* Runs j as slices (j->n_slices, 0 = one per shard) on up to 16 threads; the slices' failures
 * are moved to j. false when one stopped on a failure. */
static bool run_sliced(job *j, sc_rest_req *req, sc_resolved *res, sc_query **queries,
                       sc_scroll *ctx)
{
    uint32_t units = 0;
    for (size_t i = 0; i < res->n; i++)
        units += res->list[i]->settings.number_of_shards;
    uint32_t n = j->n_slices ? j->n_slices : units;
    if (n <= 1 || units == 0)
        return run_batches(j, req, res, queries, ctx);
    job *subs = calloc(n, sizeof *subs);
    if (!subs)
        return false;
    bool ok = true;
    for (uint32_t k = 0; k < n && ok; k++)
        ok = sc__byquery_slice_init(&subs[k], j, k, n) && slice_assign(&subs[k], res, k, n, units);
    j->slices = subs;
    j->n_sub = n; /* from here GET _tasks shows the slices */
    if (!ok)
        return false;
    slice_pool pool = {.j = j, .res = res, .queries = queries, .ctx = ctx};
    pthread_t th[16];
    uint32_t n_th = 0;
    while (n_th < (n < 16 ? n : 16) && pthread_create(&th[n_th], NULL, slice_main, &pool) == 0)
        n_th++;
    if (!n_th)
        slice_main(&pool);
    for (uint32_t t = 0; t < n_th; t++)
        pthread_join(th[t], NULL);
    (void)req;
    for (uint32_t k = 0; k < n; k++)
        json_array_extend(j->failures, subs[k].failures);
    return !atomic_load(&pool.failed);
}

/* The response of a finished job; *status 200, or the first failure's when one stopped it. */
static json_t *finish(job *j, bool ok, int *status)
{
    *status = 200;
    if (!ok && json_array_size(j->failures))
        *status =
            (int)json_integer_value(json_object_get(json_array_get(j->failures, 0), "status"));
    return job_response(j, false);
}

/* Runs the job; the response body (new reference), *status its HTTP status. An error found
 * before any write is written into resp instead (NULL returned). */
static json_t *run_job(job *j, sc_rest_req *req, sc_rest_resp *resp, int *status)
{
    j->start_ms = sc_clock_wall_ms();
    j->failures = json_array();
    if (sc_node_placement(req->node) && !req->forwarded) {
        int r = sc__byquery_run_cluster(j, req, resp);
        return r < 0 ? NULL : finish(j, r > 0, status);
    }
    sc_resolved res;
    sc_cluster_error err;
    sc_status st = sc_node_resolve_read(req->node, j->source, 0, &res, &err);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return NULL;
    }
    uint64_t **mine = NULL; /* clustered: this node's primaries only (byquery_cluster.c) */
    if (j->kind != JOB_REINDEX && !sc__byquery_local_primaries(req, &res, &mine)) {
        sc_resolved_fini(&res);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return NULL;
    }
    if (mine) {
        j->only_shards = mine;
        j->n_slices = 1;
    }
    sc_query **queries = sc_arena_calloc(req->arena, res.n ? res.n : 1, sizeof *queries);
    sc_scroll *ctx = NULL;
    if (!queries || !sc__search_build_queries(req, resp, j->query, res.list, res.n, queries) ||
        !alias_filters(req, resp, j, &res, queries) ||
        sc_scroll_open_local(req->node, res.list, res.n, 3600000, &ctx) != SC_OK) {
        if (!resp->body.len)
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        sc_resolved_fini(&res);
        return NULL;
    }
    bool ok = j->n_slices == 1 ? run_batches(j, req, &res, queries, ctx)
                               : run_sliced(j, req, &res, queries, ctx);
    char id[sizeof ctx->id];
    snprintf(id, sizeof id, "%s", ctx->id);
    sc_scroll_release(req->node, ctx);
    (void)sc_scroll_clear(req->node, id);
    for (size_t i = 0; j->refresh && j->kind != JOB_REINDEX && i < res.n; i++)
        sc_index_refresh_after_write(res.list[i], SC_REFRESH_TRUE);
    sc_resolved_fini(&res);
    return finish(j, ok, status);
}

/* ---- background runs ---- */

static json_t *bg_run(void *ctx, sc_task *task, bool *error)
{
    job *j = ctx;
    j->task = task;
    sc_arena arena;
    sc_arena_init(&arena, (size_t)64 << 20);
    sc_rest_req req = {.arena = &arena, .node = j->node, .client_fd = -1};
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    int status = 200;
    json_t *out = run_job(j, &req, &resp, &status);
    if (!out) {
        json_error_t jerr;
        json_t *body = json_loadb((const char *)resp.body.ptr, resp.body.len, 0, &jerr);
        out = json_incref(json_object_get(body, "error"));
        json_decref(body);
        *error = true;
    }
    sc_rest_resp_fini(&resp);
    sc_arena_fini(&arena);
    j->task = NULL;
    return out;
}

/* Runs j now (answering with its response) or, with wait_for_completion=false, in the
 * background (answering {"task": id}). Takes j. */
static void start(sc_rest_req *req, sc_rest_resp *resp, job *j, const char *action)
{
    j->node = req->node;
    j->batch = j->batch ? j->batch : 1000;
    if (!sc_rest_param_bool(req, "wait_for_completion", true)) {
        char id[64], desc[256];
        snprintf(desc, sizeof desc, "%s [%s]", action, j->source);
        if (sc_bgtask_start(req->node, action, desc, bg_run, job_status, job_free, j, id) !=
            SC_OK) {
            sc_rest_error(req, resp, 500, "exception", "cannot start the task", NULL, 0);
            return;
        }
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "task", id);
        sc_jsonw_obj_end(&w);
        sc_rest_json_end(req, resp, &w);
        return;
    }
    sc_task task;
    sc_task_begin(req->node, &task, action, j->source);
    j->task = &task;
    int status = 200;
    json_t *out = run_job(j, req, resp, &status);
    sc_task_end(req->node, &task);
    if (out) {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, status, &w);
        sc__api_json_write(&w, out);
        sc_rest_json_end(req, resp, &w);
        json_decref(out);
    }
    job_free(j);
}

/* The parameters and body keys every by-query request shares; false with the error written. */
static bool common(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, job *j)
{
    if (json_object_get(body, "script")) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "scripts are not supported by scry: [script] cannot be used here", NULL, 0);
        return false;
    }
    const char *conflicts = json_string_value(json_object_get(body, "conflicts"));
    if (!conflicts)
        conflicts = sc_rest_param_get(req, "conflicts");
    if (conflicts && strcmp(conflicts, "proceed") && strcmp(conflicts, "abort")) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "conflicts may only be \"proceed\" or \"abort\" but was [%s]", conflicts);
        return false;
    }
    j->proceed = conflicts && !strcmp(conflicts, "proceed");
    const char *slices = sc_rest_param_get(req, "slices");
    j->n_slices = 1;
    if (slices && !strcmp(slices, "auto")) {
        j->n_slices = 0;
    } else if (slices) {
        char *end;
        long v = strtol(slices, &end, 10);
        if (!*slices || *end || v < 1 || v > 1024) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "[slices] must be an integer from 1 to 1024 or [auto], was [%s]",
                           slices);
            return false;
        }
        j->n_slices = (uint32_t)v;
    }
    bool ok = true;
    j->max_docs = sc_rest_param_int(req, "max_docs", -1, &ok);
    const json_t *md = json_object_get(body, "max_docs");
    if (json_is_integer(md))
        j->max_docs = json_integer_value(md);
    int64_t batch = sc_rest_param_int(req, "scroll_size", 1000, &ok);
    if (!ok || batch < 1 || batch > 10000 || (md && !json_is_integer(md))) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[max_docs] and [scroll_size] must be positive integers", NULL, 0);
        return false;
    }
    j->batch = (uint32_t)batch;
    j->refresh = sc_rest_param_bool(req, "refresh", false);
    const char *rps = sc_rest_param_get(req, "requests_per_second");
    j->rps = rps ? strtod(rps, NULL) : -1.0;
    const json_t *q = json_object_get(body, "query");
    j->query = q ? json_deep_copy(q) : NULL;
    return true;
}

static void by_query(sc_rest_req *req, sc_rest_resp *resp, job_kind kind)
{
    json_t *body = NULL;
    if (!sc__api_body_json(req, resp, kind == JOB_DELETE, &body))
        return;
    job *j = calloc(1, sizeof *j);
    if (!j) {
        json_decref(body);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    j->kind = kind;
    j->source = strdup(req->index);
    const char *pipe = sc_rest_param_get(req, "pipeline");
    j->pipeline = pipe && kind == JOB_UPDATE ? strdup(pipe) : NULL;
    bool ok = common(req, resp, body, j);
    if (ok && kind == JOB_DELETE && !j->query) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: query is missing;", NULL, 0);
        ok = false;
    }
    json_decref(body);
    if (!ok || sc__byquery_fanout(req, resp, j->source)) {
        job_free(j);
        return;
    }
    start(req, resp, j,
          kind == JOB_DELETE ? "indices:data/write/delete/byquery"
                             : "indices:data/write/update/byquery");
}

void sc_api_delete_by_query(sc_rest_req *req, sc_rest_resp *resp)
{
    by_query(req, resp, JOB_DELETE);
}

void sc_api_update_by_query(sc_rest_req *req, sc_rest_resp *resp)
{
    by_query(req, resp, JOB_UPDATE);
}

/* source.index: a string or an array of strings, as one comma-separated expression. */
static char *source_expr(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (!json_is_array(v) || !json_array_size(v))
        return NULL;
    size_t len = 0, i;
    json_t *x;
    json_array_foreach (v, i, x) {
        if (!json_is_string(x))
            return NULL;
        len += json_string_length(x) + 1;
    }
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    out[0] = '\0';
    json_array_foreach (v, i, x) {
        if (i)
            strcat(out, ",");
        strcat(out, json_string_value(x));
    }
    return out;
}

void sc_api_reindex(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    job *j = calloc(1, sizeof *j);
    const json_t *src = json_object_get(body, "source"), *dst = json_object_get(body, "dest");
    bool ok = j != NULL;
    if (ok) {
        j->kind = JOB_REINDEX;
        ok = common(req, resp, body, j);
    }
    if (ok && json_object_get(src, "remote")) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "reindex from a remote cluster is not supported by scry", NULL, 0);
        ok = false;
    }
    const char *dest = json_string_value(json_object_get(dst, "index"));
    if (ok) {
        j->source = source_expr(json_object_get(src, "index"));
        json_decref(j->query);
        const json_t *q = json_object_get(src, "query");
        j->query = q ? json_deep_copy(q) : NULL;
        const json_t *sf = json_object_get(src, "_source");
        if (json_is_string(sf))
            j->source_fields = json_pack("[O]", sf);
        else if (json_is_array(sf))
            j->source_fields = json_deep_copy(sf);
        const json_t *sz = json_object_get(src, "size");
        if (json_is_integer(sz) && json_integer_value(sz) > 0 && json_integer_value(sz) <= 10000)
            j->batch = (uint32_t)json_integer_value(sz);
        if (!j->source || !dest) {
            sc_rest_error(req, resp, 400, "action_request_validation_exception",
                          !j->source ? "Validation Failed: 1: use _all if you really want to copy "
                                       "from all existing indexes;"
                                     : "Validation Failed: 1: index must be specified;",
                          NULL, 0);
            ok = false;
        }
    }
    if (ok) {
        j->dest = strdup(dest);
        const char *op = json_string_value(json_object_get(dst, "op_type"));
        j->dest_create = op && !strcmp(op, "create");
        const char *pipe = json_string_value(json_object_get(dst, "pipeline"));
        j->pipeline = pipe ? strdup(pipe) : NULL;
        if (json_is_true(json_object_get(body, "refresh")))
            j->refresh = true;
    }
    json_decref(body);
    if (!ok) {
        if (!j)
            sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        job_free(j);
        return;
    }
    start(req, resp, j, "indices:data/write/reindex");
}
