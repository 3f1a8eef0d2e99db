/* inner_hits of nested queries in the fetch phase (shard_search.h): a fetched root's block is
 * the docs between the previous root and it (index/nested.c), so the child query runs over the
 * whole shard with live bits that admit only that block (the shard's BM25 statistics, as the
 * query phase scored), the path's children of the block give each hit's offset, and the
 * nested object's _source is cut from the root's _source at that offset. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "index/stored.h"
#include "shard/shard_search.h"

static sc_status oom(sc_arena *a)
{
    return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

static const sc_shard_segment_view *find_view(const sc_shard_snapshot *snap, uint32_t doc)
{
    for (size_t i = 0; i < snap->n_segments; i++) {
        const sc_shard_segment_view *v = &snap->segments[i];
        if (doc >= v->doc_base && doc - v->doc_base < v->n_docs)
            return v;
    }
    return NULL;
}

/* Appends the nested objects under dotted `path` of JSON value v to out (arrays flattened,
 * nulls skipped), in the order the mapping layer indexed them. */
static void collect_objects(json_t *v, const char *path, json_t *out)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach (v, i, e)
            collect_objects(e, path, out);
        return;
    }
    if (!json_is_object(v))
        return;
    if (!*path) {
        json_array_append(out, v);
        return;
    }
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    const char *k;
    json_t *x;
    json_object_foreach (v, k, x) {
        if (strlen(k) == n && !memcmp(k, path, n))
            collect_objects(x, dot ? dot + 1 : "", out);
        else if (!strcmp(k, path)) /* a dotted key naming the whole rest */
            collect_objects(x, "", out);
    }
}

/* The docs of q (scored when `scoring`) among [from, to) of segment seg_i: the shard searcher
 * with live bits admitting only that range. Hits best first, at most k; *total all of them. */
static sc_status run_block(sc_searcher *s, sc_searcher_segment *segs, size_t seg_i,
                           sc_bitset *block, uint32_t from, uint32_t to, const sc_query *q,
                           size_t k, sc_arena *arena, sc_search_result *r)
{
    sc_bitset_set_range(block, from, to);
    const sc_bitset *saved = segs[seg_i].live;
    uint32_t saved_del = segs[seg_i].n_deleted;
    segs[seg_i].live = block;
    segs[seg_i].n_deleted = sc_segment_n_docs(segs[seg_i].seg) - (to - from);
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = k;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_status st = sc_search_execute(s, q, &o, arena, r);
    segs[seg_i].live = saved;
    segs[seg_i].n_deleted = saved_del;
    for (uint32_t d = from; d < to; d++)
        sc_bitset_clear(block, d);
    return st;
}

/* The inner hits of spec for root `doc` of view v (segment seg_i). */
static sc_status one(const sc_shard_inner_spec *spec, sc_searcher *s, sc_searcher_segment *segs,
                     size_t seg_i, sc_bitset *block, const sc_shard_segment_view *v, uint32_t doc,
                     sc_slice root_source, sc_arena *arena, sc_shard_inner_result *out)
{
    memset(out, 0, sizeof *out);
    out->max_score = NAN;
    uint32_t start = sc_segment_block_start(v->seg, doc);
    if (start == doc)
        return SC_OK;
    sc_query *pt = sc_query_term(arena, sc_slice_cstr(SC_NESTED_PATH_FIELD), spec->path);
    sc_query *b = sc_query_bool(arena);
    if (!pt || !b || sc_query_bool_add(arena, b, SC_OCCUR_MUST, (sc_query *)spec->query) != SC_OK ||
        sc_query_bool_add(arena, b, SC_OCCUR_FILTER, pt) != SC_OK)
        return oom(arena);
    sc_search_result r;
    sc_status st =
        run_block(s, segs, seg_i, block, start, doc, b, (size_t)spec->from + spec->size, arena, &r);
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return st;
    if (st != SC_OK || r.total == 0)
        return SC_OK; /* the query phase ran this query already: an error only drops hits */
    out->total = r.total;
    out->max_score = r.max_score;
    size_t n = r.n_hits > spec->from ? r.n_hits - spec->from : 0;
    if (!n)
        return SC_OK;
    /* offsets: the block's children of the path, in doc (= source) order */
    sc_query *cs = sc_query_constant_score(arena, pt);
    sc_search_result pr;
    if (!cs)
        return oom(arena);
    st = run_block(s, segs, seg_i, block, start, doc, cs, doc - start, arena, &pr);
    if (st != SC_OK)
        return st == SC_ENOMEM || st == SC_ELIMIT ? st : SC_OK;
    json_t *objs = NULL;
    if (spec->source && root_source.len) {
        json_t *root = json_loadb((const char *)root_source.ptr, root_source.len, 0, NULL);
        objs = json_array();
        char *path = sc_arena_strndup(arena, (const char *)spec->path.ptr, spec->path.len);
        if (root && objs && path)
            collect_objects(root, path, objs);
        json_decref(root);
    }
    sc_shard_inner_hit *hits = sc_arena_calloc(arena, n, sizeof *hits);
    if (!hits) {
        json_decref(objs);
        return oom(arena);
    }
    for (size_t i = 0; i < n; i++) {
        const sc_search_hit *h = &r.hits[spec->from + i];
        hits[i].score = h->score;
        for (size_t j = 0; j < pr.n_hits; j++)
            if (pr.hits[j].doc == h->doc) {
                hits[i].offset = (uint32_t)j;
                break;
            }
        json_t *o = objs ? json_array_get(objs, hits[i].offset) : NULL;
        char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (txt) {
            size_t len = strlen(txt);
            char *c = sc_arena_strndup(arena, txt, len);
            free(txt);
            if (!c) {
                json_decref(objs);
                return oom(arena);
            }
            hits[i].source = sc_slice_make(c, len);
        }
    }
    json_decref(objs);
    out->hits = hits;
    out->n_hits = n;
    return SC_OK;
}

sc_status sc__shard_inner_hits(const sc_shard_fetch_args *args, sc_arena *arena,
                               sc_shard_fetched *out)
{
    const sc_shard_snapshot *snap = args->snapshot;
    sc_searcher_segment *segs = sc_arena_alloc(arena, (snap->n_segments + 1) * sizeof *segs);
    if (!segs)
        return oom(arena);
    sc_searcher s;
    sc_shard_searcher_init(snap, segs, &s);
    /* every segment admits nothing, except the one of the root being fetched (its block) */
    uint32_t max = 1;
    for (size_t i = 0; i < snap->n_segments; i++)
        if (snap->segments[i].n_docs > max)
            max = snap->segments[i].n_docs;
    sc_bitset *none = sc_arena_calloc(arena, 1, sizeof *none);
    sc_bitset *block = sc_arena_calloc(arena, 1, sizeof *block);
    uint64_t *w1 = sc_arena_calloc(arena, sc_bitset_words_for(max), 8);
    uint64_t *w2 = sc_arena_calloc(arena, sc_bitset_words_for(max), 8);
    if (!none || !block || !w1 || !w2)
        return oom(arena);
    *none = (sc_bitset){w1, max};
    *block = (sc_bitset){w2, max};
    for (size_t i = 0; i < snap->n_segments; i++) {
        segs[i].live = none;
        segs[i].n_deleted = snap->segments[i].n_docs;
    }
    sc_stored_reader rd;
    const sc_segment *rd_seg = NULL;
    sc_status st = SC_OK;
    for (size_t i = 0; i < args->n_docs && st == SC_OK; i++) {
        if (!out[i].found)
            continue;
        const sc_shard_segment_view *v = find_view(snap, args->docs[i]);
        if (!v || !sc_segment_parents(v->seg))
            continue;
        uint32_t doc = args->docs[i] - v->doc_base;
        sc_slice id, src = out[i].source;
        if (!src.len) {
            if (rd_seg != v->seg) {
                if (rd_seg)
                    sc_stored_reader_fini(&rd);
                sc_stored_reader_init(&rd, v->seg);
                rd_seg = v->seg;
            }
            if (sc_stored_get(&rd, doc, &id, &src) != SC_OK)
                src = (sc_slice){0};
        }
        sc_shard_inner_result *res = sc_arena_calloc(arena, args->n_inner, sizeof *res);
        if (!res) {
            st = oom(arena);
            break;
        }
        size_t seg_i = (size_t)(v - snap->segments);
        for (size_t k = 0; k < args->n_inner && st == SC_OK; k++)
            st = one(&args->inner[k], &s, segs, seg_i, block, v, doc, src, arena, &res[k]);
        out[i].inner = res;
    }
    if (rd_seg)
        sc_stored_reader_fini(&rd);
    return st;
}
