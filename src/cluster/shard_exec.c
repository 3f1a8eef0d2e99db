/* Shard-level query execution: one query tree over one shard snapshot through the search
 * layer's searcher (search/searcher.h), returning the top k (score, shard-global doc) and the
 * hit count in the coordinator's terms. */
#include "cluster/shard_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/docvalues.h"
#include "search/searcher.h"
#include "search/agg.h"
#include "search/sort.h"

int sc__sort_cmp(const sc_sort_field *sort, size_t n_sort, const sc_sort_value *a,
                 const sc_sort_value *b)
{
    for (size_t i = 0; i < n_sort; i++) {
        const sc_sort_field *f = &sort[i];
        const sc_sort_value *x = &a[i], *y = &b[i];
        int c = 0;
        if (x->missing || y->missing) {
            if (x->missing && y->missing)
                continue;
            c = x->missing ? 1 : -1;
            if (f->missing_first)
                c = -c;
            return c; /* missing placement does not flip with the order */
        }
        if (f->kind == SC_SORT_SCORE)
            c = x->score < y->score ? -1 : x->score > y->score;
        else if (f->kind == SC_SORT_DOC || x->str.ptr == NULL)
            c = x->num < y->num ? -1 : x->num > y->num;
        else
            c = sc_slice_cmp(x->str, y->str);
        if (c)
            return f->desc ? -c : c;
    }
    return 0;
}

typedef struct keyed {
    sc_shard_hit hit;
    uint32_t key_off;
} keyed;

typedef struct sort_ctx {
    const sc__shard_exec_args *a;
    const sc_sort_value *keys;
} sort_ctx;

static int cmp_keyed(const void *pa, const void *pb, void *ctx)
{
    const sort_ctx *c = ctx;
    const keyed *x = pa, *y = pb;
    int r = sc__sort_cmp(c->a->sort, c->a->n_sort, c->keys + x->key_off, c->keys + y->key_off);
    if (r)
        return r;
    return (x->hit.doc > y->hit.doc) - (x->hit.doc < y->hit.doc);
}

/* Reads the sort keys of one doc. */
static void doc_keys(const sc__shard_exec_args *a, const sc_shard_segment_view *sv,
                     const sc_search_hit *h, uint64_t global, sc_sort_value *out)
{
    for (size_t i = 0; i < a->n_sort; i++) {
        const sc_sort_field *f = &a->sort[i];
        sc_sort_value *v = &out[i];
        memset(v, 0, sizeof *v);
        v->score = h->score;
        if (f->kind == SC_SORT_SCORE)
            continue;
        if (f->kind == SC_SORT_DOC) {
            v->num = (int64_t)global;
            continue;
        }
        v->missing = true;
        const sc_field_info *fi = sc_segment_field(sv->seg, sc_slice_cstr(f->field));
        if (!fi)
            continue;
        if (fi->kind == SC_FIELD_NUMERIC) {
            sc_dv_numeric dv;
            int64_t vals[64];
            size_t n;
            if (sc_dv_numeric_open(sv->seg, fi, &dv) == SC_OK &&
                (n = sc_dv_numeric_get(&dv, h->doc, vals, 64)) > 0) {
                v->missing = false;
                v->num = f->desc ? vals[n - 1] : vals[0];
            }
        } else if (fi->kind == SC_FIELD_KEYWORD) {
            sc_dv_sorted_set dv;
            uint64_t ords[64];
            size_t n;
            if (sc_dv_sorted_set_open(sv->seg, fi, &dv) == SC_OK &&
                (n = sc_dv_sorted_set_ords(&dv, h->doc, ords, 64)) > 0) {
                v->missing = false;
                v->str = sc_dv_sorted_set_term(&dv, f->desc ? ords[n - 1] : ords[0]);
                if (!v->str.ptr)
                    v->str = sc_slice_make("", 0);
            }
        }
    }
}

/* Field sort through the search layer's top-k sort collector (search/sort.h): only k hits are
 * kept, and with track_total_hits false the points of a numeric first key skip segments and
 * docs that cannot compete. SC_EUNSUPPORTED when the sort cannot be expressed (the caller
 * then collects everything, below). */
static sc_status exec_sorted_topk(const sc__shard_exec_args *a, const sc_searcher *s,
                                  sc_search_options *o, sc_arena *arena,
                                  sc__shard_exec_result *r)
{
    const sc_shard_snapshot *snap = a->snapshot;
    size_t ns = a->n_sort;
    sc_sort_spec *specs = sc_arena_calloc(arena, ns ? ns : 1, sizeof *specs);
    sc_sort_key *after = a->search_after ? sc_arena_calloc(arena, ns ? ns : 1, sizeof *after) : NULL;
    if (!specs || (a->search_after && !after))
        return SC_EUNSUPPORTED;
    for (size_t i = 0; i < ns; i++) {
        const sc_sort_field *f = &a->sort[i];
        sc_sort_spec *sp = &specs[i];
        sp->desc = f->desc;
        sp->missing_first = f->missing_first;
        sp->kind = f->kind == SC_SORT_SCORE ? SC_SORT_BY_SCORE
                   : f->kind == SC_SORT_DOC ? SC_SORT_BY_DOC
                                            : SC_SORT_BY_NUMERIC;
        if (f->kind == SC_SORT_FIELD) {
            sp->field = sc_slice_cstr(f->field);
            for (size_t g = 0; g < snap->n_segments; g++) {
                const sc_field_info *fi = sc_segment_field(snap->segments[g].seg, sp->field);
                if (fi) {
                    if (fi->kind == SC_FIELD_KEYWORD)
                        sp->kind = SC_SORT_BY_KEYWORD;
                    else if (fi->kind != SC_FIELD_NUMERIC)
                        return SC_EUNSUPPORTED;
                    break;
                }
            }
        }
        if (after) {
            const sc_sort_value *v = &a->search_after[i];
            after[i].missing = v->missing;
            after[i].i = v->num;
            after[i].s = v->str;
            after[i].d = v->score;
        }
    }
    o->size = a->k;
    o->from = 0;
    sc_search_result res;
    sc_sorted_result sr;
    sc_status st = sc_search_sorted(s, a->query, o, specs, ns, after, arena, &res, &sr);
    if (st == SC_EINVAL)
        return SC_EUNSUPPORTED;
    if (st != SC_OK) {
        snprintf(r->error, sizeof r->error, "%s", res.error[0] ? res.error : sc_status_str(st));
        return st;
    }
    r->total = sr.total;
    r->total_is_lower_bound = sr.total_gte;
    r->timed_out = res.timed_out;
    if (res.cancelled)
        return SC_ECANCELLED;
    size_t k = sr.n_hits;
    r->docs = malloc((k ? k : 1) * sizeof *r->docs);
    r->keys = malloc((k ? k : 1) * (ns ? ns : 1) * sizeof *r->keys);
    if (!r->docs || !r->keys)
        return SC_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        const sc_sorted_hit *h = &sr.hits[i];
        for (size_t j = 0; j < ns; j++) {
            sc_sort_value *v = &r->keys[i * ns + j];
            const sc_sort_key *x = &h->values[j];
            memset(v, 0, sizeof *v);
            v->missing = x->missing;
            v->score = h->score;
            if (specs[j].kind == SC_SORT_BY_KEYWORD)
                v->str = x->missing || x->s.ptr ? x->s : sc_slice_make("", 0);
            else if (specs[j].kind != SC_SORT_BY_SCORE)
                v->num = x->i;
        }
        r->docs[i] = (sc_shard_hit){.score = h->score, .shard_ix = a->shard_ix,
                                    .doc = (uint32_t)h->global_doc};
        r->docs[i].keys = r->keys + i * ns;
    }
    r->n_docs = k;
    return SC_OK;
}

/* Field sort: every matching doc is collected (by the searcher, all of them), keyed from doc
 * values, filtered by search_after and the best k kept. */
static sc_status exec_sorted(const sc__shard_exec_args *a, const sc_searcher *s,
                             sc_search_options *o, sc_arena *arena, sc__shard_exec_result *r)
{
    const sc_shard_snapshot *snap = a->snapshot;
    sc_status fast = exec_sorted_topk(a, s, o, arena, r);
    if (fast != SC_EUNSUPPORTED)
        return fast;
    o->size = snap->max_doc ? (size_t)snap->max_doc : 1;
    o->from = 0;
    o->track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_search_result res;
    memset(&res, 0, sizeof res);
    sc_status st = sc_search_execute(s, a->query, o, arena, &res);
    if (st != SC_OK) {
        snprintf(r->error, sizeof r->error, "%s", res.error[0] ? res.error : sc_status_str(st));
        return st;
    }
    r->total = res.total;
    r->timed_out = res.timed_out;
    if (res.cancelled)
        return SC_ECANCELLED;
    if (a->track_total_hits > 0 && r->total > (uint64_t)a->track_total_hits) {
        r->total = (uint64_t)a->track_total_hits;
        r->total_is_lower_bound = true;
    }
    /* The keyed copy of every match lives in the reserved arena: a sort over many matches is
     * what the request breaker must see. */
    size_t n = res.n_hits, ns = a->n_sort;
    keyed *ks = sc_arena_alloc(arena, (n ? n : 1) * sizeof *ks);
    sc_sort_value *keys = sc_arena_alloc(arena, (n ? n : 1) * (ns ? ns : 1) * sizeof *keys);
    if (!ks || !keys)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const sc_search_hit *h = &res.hits[i];
        uint64_t global = snap->segments[h->segment].doc_base + h->doc;
        doc_keys(a, &snap->segments[h->segment], h, global, keys + m * ns);
        if (a->search_after && sc__sort_cmp(a->sort, ns, keys + m * ns, a->search_after) <= 0)
            continue;
        ks[m].hit = (sc_shard_hit){.score = h->score, .shard_ix = a->shard_ix,
                                   .doc = (uint32_t)global};
        ks[m].key_off = (uint32_t)(m * ns);
        m++;
    }
    sort_ctx ctx = {a, keys};
    qsort_r(ks, m, sizeof *ks, cmp_keyed, &ctx);
    size_t k = m < a->k ? m : a->k;
    r->docs = malloc((k ? k : 1) * sizeof *r->docs);
    r->keys = malloc((k ? k : 1) * (ns ? ns : 1) * sizeof *r->keys);
    if (!r->docs || !r->keys)
        return SC_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        memcpy(r->keys + i * ns, keys + ks[i].key_off, ns * sizeof *keys);
        r->docs[i] = ks[i].hit;
        r->docs[i].keys = r->keys + i * ns;
    }
    r->n_docs = k;
    return SC_OK;
}

/* The aggregation pass (search/agg.h): collects the shard partial under agg_query in the
 * query's budgeted arena and encodes it for the node's reduce; *total is its exact hit count. */
static sc_status exec_aggs(const sc__shard_exec_args *a, const sc_searcher *s,
                           sc_search_options *o, sc_arena *arena, sc__shard_exec_result *r,
                           uint64_t *total)
{
    sc_agg_shard_options so = {.n_shards = a->n_shards, .max_buckets = a->max_buckets};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *part = NULL;
    memset(&res, 0, sizeof res);
    sc_status st = sc_agg_collect_shard(a->aggs, s, a->agg_query ? a->agg_query : a->query, o,
                                        &so, arena, &part, &res, &err);
    if (st != SC_OK) {
        r->too_many_buckets = err.too_many_buckets;
        snprintf(r->error, sizeof r->error, "%s", err.reason[0] ? err.reason : sc_status_str(st));
        return st;
    }
    if (res.cancelled)
        return SC_ECANCELLED;
    r->timed_out |= res.timed_out;
    *total = res.total;
    return sc_agg_encode(part, &r->agg_bytes, &r->agg_len);
}

sc_status sc__shard_exec(const sc__shard_exec_args *a, sc__shard_exec_result *r)
{
    const sc_shard_snapshot *snap = a->snapshot;
    sc_searcher_segment stack[32];
    sc_searcher_segment *segs =
        snap->n_segments <= 32 ? stack : malloc(snap->n_segments * sizeof *segs);
    if (!segs)
        return SC_ENOMEM;
    for (size_t i = 0; i < snap->n_segments; i++) {
        segs[i].seg = snap->segments[i].seg;
        segs[i].live = snap->segments[i].live;
        segs[i].n_deleted = snap->segments[i].live ? snap->segments[i].n_deleted : 0;
    }
    sc_searcher s = {.segs = segs, .n_segs = snap->n_segments};
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = a->k;
    o.from = 0;
    o.track_total_hits = a->track_total_hits < 0 ? SC_TRACK_TOTAL_HITS_ALL : a->track_total_hits;
    o.cancel = a->token;
    /* The query's memory (plan, iterators, bitsets, hits) is reserved on the request breaker:
     * an eighth of its limit per shard execution (shard executions are bounded by the search
     * pool, so this admits several at once); the arena enforces the reservation. */
    uint64_t budget = 0;
    if (a->node) {
        sc_breaker_stats bs;
        sc_breakers_get(a->node, &bs);
        budget = bs.request_limit / 8;
        uint64_t floor_bytes = bs.request_limit < (1u << 20) ? bs.request_limit : (1u << 20);
        if (budget < floor_bytes)
            budget = floor_bytes;
        if (!sc_breaker_reserve(a->node, budget)) {
            snprintf(r->error, sizeof r->error,
                     "[request] Data too large, data for [<query>] would be [%llu] more, which "
                     "is larger than the limit of [%llu]",
                     (unsigned long long)budget, (unsigned long long)bs.request_limit);
            r->breaker_tripped = true;
            if (segs != stack)
                free(segs);
            return SC_ELIMIT;
        }
    }
    sc_arena arena;
    sc_arena_init(&arena, budget);
    sc_status st;
    if (a->aggs) {
        uint64_t total = 0;
        st = exec_aggs(a, &s, &o, &arena, r, &total);
        if (st != SC_OK || r->timed_out)
            goto out;
        if (a->k == 0 && (!a->agg_query || a->agg_query == a->query)) {
            /* the aggregation pass counted the hits exactly */
            r->total = total;
            if (a->track_total_hits >= 0 && total > (uint64_t)a->track_total_hits) {
                r->total = (uint64_t)a->track_total_hits;
                r->total_is_lower_bound = true;
            }
            goto out;
        }
    }
    if (a->n_sort && a->k > 0) {
        st = exec_sorted(a, &s, &o, &arena, r);
        goto out;
    }
    sc_search_result res;
    memset(&res, 0, sizeof res);
    st = a->k == 0 && a->track_total_hits != 0
                       ? sc_search_count(&s, a->query, &o, &arena, &res)
                       : sc_search_execute(&s, a->query, &o, &arena, &res);
    if (st == SC_OK) {
        r->total = res.total;
        r->total_is_lower_bound = res.total_gte;
        r->timed_out = res.timed_out;
        if (res.cancelled)
            st = SC_ECANCELLED;
        else if (res.n_hits) {
            r->docs = malloc(res.n_hits * sizeof *r->docs);
            if (!r->docs) {
                st = SC_ENOMEM;
            } else {
                for (size_t i = 0; i < res.n_hits; i++) {
                    const sc_search_hit *h = &res.hits[i];
                    r->docs[i].score = h->score;
                    r->docs[i].shard_ix = a->shard_ix;
                    r->docs[i].doc = snap->segments[h->segment].doc_base + h->doc;
                }
                r->n_docs = res.n_hits;
            }
        }
    } else {
        snprintf(r->error, sizeof r->error, "%s", res.error[0] ? res.error : sc_status_str(st));
    }
out:
    if (arena.over_budget && st != SC_OK) {
        st = SC_ELIMIT;
        r->breaker_tripped = true;
        snprintf(r->error, sizeof r->error,
                 "[request] Data too large, data for [<query>] would be larger than the limit "
                 "of [%llu] reserved for it",
                 (unsigned long long)budget);
        if (a->node)
            sc_breaker_count_trip(a->node);
    }
    sc_arena_fini(&arena);
    if (a->node)
        sc_breaker_release(a->node, budget);
    if (segs != stack)
        free(segs);
    return st;
}
