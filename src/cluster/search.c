/* Query-then-fetch coordinator and the data-node phases (see search.h). */
#include "cluster/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/threadpool.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/shard_exec.h"
#include "index/docvalues.h"
#include "index/stored.h"
#include "mapping/mapping.h"
#include "shard/shard.h"

static sc_status copy_slice(sc_arena *a, sc_slice in, sc_slice *out);

/* One shard's query-phase job, run on the node's search pool. Memory is malloc'd (the request
 * arena is not thread-safe) and copied into the arena after the wait. */
typedef struct shard_job {
    sc_node *node;
    const sc_node_query_request *req;
    size_t t; /* target number */
    sc_shard_query_result *res;
    sc_shard_hit *top;   /* malloc'd, up to k */
    uint8_t *agg_bytes;  /* malloc'd encoded aggregation partial */
    size_t agg_len;
    sc_sort_value *keys; /* malloc'd sort keys of top (field sort) */
    size_t n_top;
} shard_job;

static void run_shard(void *arg, sc_status pool_st)
{
    shard_job *j = arg;
    const sc_node_query_request *req = j->req;
    const sc_shard_target *tg = &req->targets[j->t];
    const sc_search_request *sr = req->search;
    sc_index *ix = sr->indices[tg->index_i];
    sc_shard_query_result *res = j->res;
    if (pool_st != SC_OK) {
        res->st = SC_ECANCELLED;
        sc_cluster_error_set(&res->err, 503, "task_cancelled_exception", "shard task dropped");
        return;
    }
    if (!ix->shards || !ix->shards[tg->shard]) {
        res->st = SC_EIO;
        sc_cluster_error_set(&res->err, 503, "no_shard_available_action_exception",
                             "[%s][%u] shard is not available", ix->name, tg->shard);
        return;
    }
    const sc_shard_snapshot *snap;
    if (sr->pinned) {
        snap = sr->pinned[tg->pin_ix];
        res->pinned = true;
    } else {
        snap = sc_shard_searcher_acquire(ix->shards[tg->shard]);
    }
    res->snapshot = (void *)snap;
    sc__shard_exec_args a = {
        .snapshot = snap,
        .query = sr->queries[tg->index_i],
        .k = req->k,
        .track_total_hits = sr->track_total_hits,
        .token = req->token,
        .shard_ix = tg->shard_ix,
        .sort = sr->sort,
        .n_sort = sr->n_sort,
        .search_after = sr->search_after,
        .node = j->node,
        .aggs = sr->aggs,
        .agg_query = sr->agg_queries ? sr->agg_queries[tg->index_i] : NULL,
        .n_shards = (uint32_t)req->n_targets,
        .max_buckets = sr->max_buckets,
    };
    sc__shard_exec_result r;
    memset(&r, 0, sizeof r);
    sc_status st = sc__shard_exec(&a, &r);
    res->st = st;
    if (st != SC_OK) {
        if (st == SC_ECANCELLED)
            sc_cluster_error_set(&res->err, 400, "task_cancelled_exception", "task cancelled");
        else if (r.breaker_tripped)
            sc_cluster_error_set(&res->err, 429, "circuit_breaking_exception", "%s", r.error);
        else if (r.too_many_buckets)
            sc_cluster_error_set(&res->err, 400, "too_many_buckets_exception", "%s", r.error);
        else
            sc_cluster_error_set(
                &res->err,
                st == SC_ELIMIT || st == SC_EUNSUPPORTED || st == SC_EPARSE || st == SC_EINVAL
                    ? 400
                    : 500,
                st == SC_ELIMIT ? "illegal_argument_exception"
                : st == SC_EUNSUPPORTED || st == SC_EPARSE || st == SC_EINVAL
                    ? "query_shard_exception"
                    : "exception",
                "[%s][%u] %s", ix->name, tg->shard, r.error[0] ? r.error : sc_status_str(st));
        free(r.docs);
        free(r.keys);
        free(r.agg_bytes);
        return;
    }
    j->agg_bytes = r.agg_bytes;
    j->agg_len = r.agg_len;
    res->total = r.total;
    res->total_is_lower_bound = r.total_is_lower_bound;
    res->timed_out = r.timed_out;
    j->top = r.docs;
    j->keys = r.keys;
    j->n_top = r.n_docs;
}

static int cmp_sorted(const void *pa, const void *pb, void *ctx)
{
    const sc_search_request *sr = ctx;
    const sc_shard_hit *a = pa, *b = pb;
    int c = sc__sort_cmp(sr->sort, sr->n_sort, a->keys, b->keys);
    if (c)
        return c;
    if (a->shard_ix != b->shard_ix)
        return a->shard_ix < b->shard_ix ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

static int cmp_doc(const void *pa, const void *pb)
{
    const sc_shard_hit *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->shard_ix != b->shard_ix)
        return a->shard_ix < b->shard_ix ? -1 : 1;
    return (a->doc > b->doc) - (a->doc < b->doc);
}

/* The node's partial reduce of its shards' aggregation partials (decoded as they would
 * arrive from the shards); a shard whose partial does not decode fails. */
static sc_status reduce_node_aggs(const sc_node_query_request *req, shard_job *jobs,
                                  sc_arena *arena, sc_node_query_response *out)
{
    size_t nt = req->n_targets, n = 0;
    sc_agg_result **parts = sc_arena_alloc(arena, (nt ? nt : 1) * sizeof *parts);
    if (!parts)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        sc_shard_query_result *res = &out->results[t];
        if (res->st != SC_OK || !jobs[t].agg_bytes)
            continue;
        sc_status st = sc_agg_decode(jobs[t].agg_bytes, jobs[t].agg_len, arena, &res->aggs);
        if (st == SC_ENOMEM || st == SC_ELIMIT)
            return st;
        if (st != SC_OK) {
            res->st = st;
            sc_cluster_error_set(&res->err, 500, "exception", "corrupt aggregation partial");
            continue;
        }
        parts[n++] = res->aggs;
    }
    if (!n)
        return SC_OK;
    sc_agg_error err;
    sc_status st = sc_agg_reduce(req->search->aggs, parts, n, false, req->search->max_buckets,
                                 arena, &out->aggs, &err);
    return st == SC_ECORRUPT ? SC_OK : st;
}

sc_status sc_node_query_phase(sc_node *n, const sc_node_query_request *req, sc_arena *arena,
                              sc_node_query_response *out)
{
    memset(out, 0, sizeof *out);
    size_t nt = req->n_targets;
    out->results = sc_arena_calloc(arena, nt ? nt : 1, sizeof *out->results);
    shard_job *jobs = calloc(nt ? nt : 1, sizeof *jobs);
    if (!out->results || !jobs) {
        free(jobs);
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    }
    sc_threadpool *pool = sc_node_search_pool(n);
    sc_taskgroup g;
    sc_taskgroup_init(&g);
    for (size_t t = 0; t < nt; t++) {
        jobs[t] = (shard_job){.node = n, .req = req, .t = t, .res = &out->results[t]};
        /* A single shard runs inline: no hand-off latency. The pool bounds concurrency; a full
         * queue also falls back to running here. */
        if (nt == 1 || !pool || sc_threadpool_submit(pool, run_shard, &jobs[t], &g) != SC_OK)
            run_shard(&jobs[t], SC_OK);
    }
    (void)sc_taskgroup_wait(&g);
    sc_taskgroup_fini(&g);
    /* Partial reduce: the node's top k across its shards. */
    size_t all = 0;
    for (size_t t = 0; t < nt; t++)
        all += jobs[t].n_top;
    sc_shard_hit *merged = sc_arena_alloc(arena, (all ? all : 1) * sizeof *merged);
    sc_status st = SC_OK;
    if (!merged) {
        st = arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    } else {
        size_t k = 0;
        size_t ns = req->search->n_sort;
        for (size_t t = 0; t < nt && st == SC_OK; t++) {
            if (jobs[t].n_top)
                memcpy(merged + k, jobs[t].top, jobs[t].n_top * sizeof *merged);
            if (jobs[t].keys && ns) {
                /* Keys move into the arena: the jobs' buffers are freed below. */
                sc_sort_value *kk = sc_arena_alloc(arena, jobs[t].n_top * ns * sizeof *kk);
                if (!kk) {
                    st = arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
                    break;
                }
                memcpy(kk, jobs[t].keys, jobs[t].n_top * ns * sizeof *kk);
                for (size_t i = 0; i < jobs[t].n_top * ns && st == SC_OK; i++)
                    if (kk[i].str.ptr && kk[i].str.len)
                        st = copy_slice(arena, kk[i].str, &kk[i].str);
                for (size_t i = 0; i < jobs[t].n_top; i++)
                    merged[k + i].keys = kk + i * ns;
            }
            k += jobs[t].n_top;
        }
        if (ns)
            qsort_r(merged, all, sizeof *merged, cmp_sorted, (void *)req->search);
        else
            qsort(merged, all, sizeof *merged, cmp_doc);
        out->top = merged;
        out->n_top = all < req->k ? all : req->k;
    }
    if (st == SC_OK && req->search->aggs)
        st = reduce_node_aggs(req, jobs, arena, out);
    for (size_t t = 0; t < nt; t++) {
        free(jobs[t].top);
        free(jobs[t].keys);
        free(jobs[t].agg_bytes);
    }
    free(jobs);
    return st;
}

void sc_node_query_release(const sc_node_query_request *req, sc_node_query_response *resp)
{
    if (!resp->results)
        return;
    for (size_t t = 0; t < req->n_targets; t++) {
        if (!resp->results[t].pinned)
            sc_shard_searcher_release(resp->results[t].snapshot);
        resp->results[t].snapshot = NULL;
    }
}

static sc_status copy_slice(sc_arena *a, sc_slice in, sc_slice *out)
{
    uint8_t *p = sc_arena_alloc(a, in.len ? in.len : 1);
    if (!p)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (in.len)
        memcpy(p, in.ptr, in.len);
    *out = sc_slice_make(p, in.len);
    return SC_OK;
}

/* Writes the doc values of the requested fields for one doc as {"f":[...],...}. */
static sc_status doc_fields(const sc_node_fetch_request *req, const sc_shard_snapshot *snap,
                            const sc_shard_segment_view *seg, uint32_t doc, sc_arena *arena,
                            sc_slice *out)
{
    sc_buf buf = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &buf, false);
    sc_jsonw_obj_begin(&w);
    bool any = false;
    for (size_t f = 0; f < req->n_dv_fields; f++) {
        const char *name = req->dv_fields[f];
        const sc_field_info *fi = sc_segment_field(seg->seg, sc_slice_cstr(name));
        if (!fi)
            continue;
        const sc_mapping_field *mf =
            snap->mapping ? sc_mapping_find(snap->mapping, sc_slice_cstr(name)) : NULL;
        if (fi->kind == SC_FIELD_NUMERIC) {
            sc_dv_numeric dv;
            if (sc_dv_numeric_open(seg->seg, fi, &dv) != SC_OK)
                continue;
            int64_t vals[64];
            size_t nv = sc_dv_numeric_get(&dv, doc, vals, 64);
            if (!nv)
                continue;
            sc_jsonw_key(&w, name);
            sc_jsonw_arr_begin(&w);
            for (size_t i = 0; i < nv; i++) {
                if (mf)
                    sc_mapping_write_value(mf, vals[i], false, &w);
                else
                    sc_jsonw_int(&w, vals[i]);
            }
            sc_jsonw_arr_end(&w);
            any = true;
        } else if (fi->kind == SC_FIELD_KEYWORD) {
            sc_dv_sorted_set dv;
            if (sc_dv_sorted_set_open(seg->seg, fi, &dv) != SC_OK)
                continue;
            uint64_t ords[64];
            size_t nv = sc_dv_sorted_set_ords(&dv, doc, ords, 64);
            if (!nv)
                continue;
            sc_jsonw_key(&w, name);
            sc_jsonw_arr_begin(&w);
            for (size_t i = 0; i < nv; i++) {
                sc_slice t = sc_dv_sorted_set_term(&dv, ords[i]);
                if (mf && mf->type == SC_MAPPING_IP && t.len == 16) {
                    char ip[64];
                    size_t l = sc_mapping_ip_format(t.ptr, ip);
                    sc_jsonw_strn(&w, sc_slice_make(ip, l));
                } else {
                    sc_jsonw_strn(&w, t);
                }
            }
            sc_jsonw_arr_end(&w);
            any = true;
        }
    }
    sc_jsonw_obj_end(&w);
    sc_status st = sc_jsonw_finish(&w);
    if (st == SC_OK && any)
        st = copy_slice(arena, sc_slice_make(buf.ptr, buf.len), out);
    sc_vec_free(&buf);
    return st;
}

sc_status sc_node_fetch_phase(sc_node *n, const sc_node_fetch_request *req, sc_arena *arena,
                              sc_node_fetch_response *out)
{
    (void)n;
    out->ids = sc_arena_calloc(arena, req->n_docs ? req->n_docs : 1, sizeof *out->ids);
    out->sources = sc_arena_calloc(arena, req->n_docs ? req->n_docs : 1, sizeof *out->sources);
    out->fields = sc_arena_calloc(arena, req->n_docs ? req->n_docs : 1, sizeof *out->fields);
    if (!out->ids || !out->sources || !out->fields)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    /* Fetch in (shard, doc) order with one stored-fields reader per segment, so hits that share
     * a compressed block decompress it once; results land at their rank positions. */
    size_t nd = req->n_docs;
    size_t *order = malloc((nd ? nd : 1) * sizeof *order);
    if (!order)
        return SC_ENOMEM;
    for (size_t i = 0; i < nd; i++)
        order[i] = i;
    for (size_t i = 1; i < nd; i++) { /* insertion sort: nd is from+size, small */
        size_t x = order[i], j = i;
        while (j > 0) {
            const sc_shard_hit *a = &req->docs[order[j - 1]], *b = &req->docs[x];
            if (a->shard_ix < b->shard_ix || (a->shard_ix == b->shard_ix && a->doc <= b->doc))
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    sc_stored_reader reader;
    const sc_segment *reader_seg = NULL;
    /* Without _source a hit's _id comes from the `_id` field's sorted-set doc values (an O(1)
     * lookup in the mapped file); segments written before _id had them use stored fields. */
    const sc_segment *id_seg = NULL;
    sc_dv_sorted_set id_dv;
    bool id_dv_ok = false;
    sc_status result = SC_OK;
    for (size_t oi = 0; oi < nd && result == SC_OK; oi++) {
        size_t i = order[oi];
        const sc_shard_hit *d = &req->docs[i];
        const sc_shard_snapshot *snap = NULL;
        for (size_t t = 0; t < req->query->n_targets; t++)
            if (req->query->targets[t].shard_ix == d->shard_ix) {
                snap = req->query_resp->results[t].snapshot;
                break;
            }
        if (!snap)
            continue;
        const sc_shard_segment_view *seg = NULL;
        for (size_t s = 0; s < snap->n_segments; s++)
            if (d->doc >= snap->segments[s].doc_base &&
                d->doc < snap->segments[s].doc_base + snap->segments[s].n_docs)
                seg = &snap->segments[s];
        if (!seg)
            continue;
        uint32_t sdoc = d->doc - seg->doc_base;
        sc_slice id = {0}, src = {0};
        bool have_id = false;
        if (!req->source) {
            if (id_seg != seg->seg) {
                const sc_field_info *fi = sc_segment_field(seg->seg, sc_slice_cstr("_id"));
                id_dv_ok = fi && fi->kind == SC_FIELD_KEYWORD &&
                           sc_dv_sorted_set_open(seg->seg, fi, &id_dv) == SC_OK;
                id_seg = seg->seg;
            }
            uint64_t ord;
            if (id_dv_ok && sc_dv_sorted_set_ords(&id_dv, sdoc, &ord, 1) == 1) {
                id = sc_dv_sorted_set_term(&id_dv, ord);
                have_id = true;
            }
        }
        sc_status st = SC_OK;
        if (!have_id) {
            if (reader_seg != seg->seg) {
                if (reader_seg)
                    sc_stored_reader_fini(&reader);
                sc_stored_reader_init(&reader, seg->seg);
                reader_seg = seg->seg;
            }
            st = sc_stored_get(&reader, sdoc, &id, &src);
        }
        if (st == SC_OK) {
            st = copy_slice(arena, id, &out->ids[i]);
            if (st == SC_OK && req->source)
                st = copy_slice(arena, src, &out->sources[i]);
        }
        if (st == SC_OK && req->n_dv_fields)
            st = doc_fields(req, snap, seg, sdoc, arena, &out->fields[i]);
        if (st == SC_ENOMEM || st == SC_ELIMIT)
            result = st;
    }
    if (reader_seg)
        sc_stored_reader_fini(&reader);
    free(order);
    return result;
}

sc_status sc_search_run(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                        sc_search_response *out)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    size_t nt = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        nt += sr->indices[i]->settings.number_of_shards;
    sc_shard_target *targets = sc_arena_alloc(arena, (nt ? nt : 1) * sizeof *targets);
    if (!targets)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t t = 0, pin = 0;
    for (size_t i = 0; i < sr->n_indices; i++)
        for (uint32_t s = 0; s < sr->indices[i]->settings.number_of_shards; s++, pin++) {
            const uint64_t *mask = sr->only_shards ? sr->only_shards[i] : NULL;
            if (mask && !(mask[s / 64] >> (s % 64) & 1))
                continue;
            targets[t] = (sc_shard_target){.index_i = (uint32_t)i,
                                           .shard = s,
                                           .shard_ix = (uint32_t)t,
                                           .pin_ix = (uint32_t)pin};
            t++;
        }
    nt = t;
    uint64_t k = sr->count_only ? 0 : (uint64_t)sr->from + sr->size;
    uint64_t deadline =
        sr->timeout_ms >= 0 ? sc_clock_now_ns() + (uint64_t)sr->timeout_ms * 1000000 : 0;
    sc_cancel_token local_token;
    sc_cancel_token *token = sr->task ? &sr->task->token : &local_token;
    if (sr->task)
        token->deadline_ns = deadline;
    else
        sc_cancel_token_init(&local_token, deadline);
    sc_node_query_request qreq = {
        .search = sr,
        .targets = targets,
        .n_targets = nt,
        .k = (uint32_t)k,
        .deadline_ns = deadline,
        .token = token,
    };
    sc_node_query_response qresp;
    sc_status st = sc_node_query_phase(n, &qreq, arena, &qresp);
    if (st != SC_OK) {
        sc_node_query_release(&qreq, &qresp);
        return st;
    }
    out->shards_total = (uint32_t)nt;
    size_t n_fail = 0;
    for (size_t i = 0; i < nt; i++)
        n_fail += qresp.results[i].st != SC_OK;
    out->failures = sc_arena_calloc(arena, n_fail ? n_fail : 1, sizeof *out->failures);
    if (!out->failures) {
        sc_node_query_release(&qreq, &qresp);
        return SC_ENOMEM;
    }
    bool cancelled = false;
    for (size_t i = 0; i < nt; i++) {
        const sc_shard_query_result *r = &qresp.results[i];
        if (r->st != SC_OK) {
            cancelled |= r->st == SC_ECANCELLED;
            sc_shard_failure *f = &out->failures[out->n_failures++];
            f->index_i = targets[i].index_i;
            f->shard = targets[i].shard;
            f->err = r->err;
            out->shards_failed++;
            continue;
        }
        out->shards_successful++;
        out->total += r->total;
        out->total_is_lower_bound |= r->total_is_lower_bound;
        out->timed_out |= r->timed_out;
    }
    if (atomic_load_explicit(&qreq.token->fired, memory_order_relaxed) == 1 ||
        atomic_load_explicit(&qreq.token->cancelled, memory_order_relaxed))
        cancelled = true;
    if (cancelled) {
        sc_node_query_release(&qreq, &qresp);
        out->cancelled = true;
        return SC_ECANCELLED;
    }
    if (sr->track_total_hits > 0 && out->total >= (uint64_t)sr->track_total_hits &&
        (out->total > (uint64_t)sr->track_total_hits || out->total_is_lower_bound)) {
        out->total = (uint64_t)sr->track_total_hits;
        out->total_is_lower_bound = true;
    }
    if (sr->aggs && qresp.aggs) {
        /* the coordinator's final reduce over the nodes' partials (one node here) */
        sc_agg_error err;
        st = sc_agg_reduce(sr->aggs, &qresp.aggs, 1, true, sr->max_buckets, arena, &out->aggs,
                           &err);
        if (st == SC_ELIMIT && err.too_many_buckets) {
            out->agg_too_many_buckets = true;
            snprintf(out->agg_error, sizeof out->agg_error, "%s", err.reason);
            out->aggs = NULL;
        } else if (st != SC_OK) {
            sc_node_query_release(&qreq, &qresp);
            return st;
        }
    }
    /* Final reduce (one node: its partial result is already the global order). */
    size_t from = sr->from < qresp.n_top ? sr->from : qresp.n_top;
    size_t nh = qresp.n_top - from;
    if (nh > sr->size)
        nh = sr->size;
    if (qresp.n_top && !sr->n_sort)
        out->max_score = qresp.top[0].score;
    if (nh > 0) {
        sc_node_fetch_request freq = {.query = &qreq,
                                      .query_resp = &qresp,
                                      .docs = qresp.top + from,
                                      .n_docs = nh,
                                      .source = sr->fetch_source,
                                      .dv_fields = sr->dv_fields,
                                      .n_dv_fields = sr->n_dv_fields};
        sc_node_fetch_response fresp;
        uint64_t f0 = sc_clock_now_ns();
        st = sc_node_fetch_phase(n, &freq, arena, &fresp);
        if (st != SC_OK) {
            sc_node_query_release(&qreq, &qresp);
            return st;
        }
        out->hits = sc_arena_alloc(arena, nh * sizeof *out->hits);
        if (!out->hits) {
            sc_node_query_release(&qreq, &qresp);
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        }
        for (size_t i = 0; i < nh; i++) {
            const sc_shard_hit *d = &qresp.top[from + i];
            out->hits[i] = (sc_result_hit){.index_i = targets[d->shard_ix].index_i,
                                           .shard = targets[d->shard_ix].shard,
                                           .score = d->score,
                                           .id = fresp.ids[i],
                                           .source = fresp.sources[i],
                                           .fields = fresp.fields[i],
                                           .sort = d->keys};
        }
        out->n_hits = nh;
        uint64_t fetch_ns = sc_clock_now_ns() - f0;
        for (size_t i = 0; i < sr->n_indices; i++) {
            atomic_fetch_add(&sr->indices[i]->n_fetch, 1);
            atomic_fetch_add(&sr->indices[i]->fetch_time_ns, fetch_ns / sr->n_indices);
        }
    }
    sc_node_query_release(&qreq, &qresp);
    return SC_OK;
}
