/* The block join aggregations (agg_internal.h): `nested` (one bucket: the nested child docs
 * of path `field` inside each incoming root doc's block) and `reverse_nested` (one bucket: the
 * root of each incoming child doc, counted once per bucket ordinal, as Elasticsearch's
 * ReverseNestedAggregator). Blocks come from the segment's root bitset (index/nested.c): a
 * root's children are the docs between the previous root and it. Bucket ordinal = owner. */
#include <string.h>

#include "search/agg_internal.h"

typedef struct nested_state {
    sc__plan *path_plan;  /* nested: _nested_path:<path> */
    sc_doc_iter *path_it; /* this segment's path docs (NULL: none here) */
    const sc_bitset *parents;
    uint32_t n_docs;
    /* nested: the children of the last root seen (a root may come again with other owners) */
    uint32_t last_root;
    uint32_t *kids;
    size_t n_kids, cap_kids;
    /* reverse_nested: per owner, the last root counted + 1 (0 = none) in this segment */
    sc__agg_vec last;
} nested_state;

static sc_status nested_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    nested_state *ns = c->state;
    ns->parents = sc_segment_parents(s->seg);
    ns->n_docs = s->n_docs;
    ns->path_it = NULL;
    ns->last_root = SC_DOC_END;
    ns->n_kids = 0;
    if (ns->last.len)
        memset(ns->last.p, 0, ns->last.len * 8);
    if (ns->parents && ns->path_plan)
        SC_TRY(sc__plan_iter(c->ctx->sctx, ns->path_plan, s->seg_i, &ns->path_it));
    return SC_OK;
}

static sc_status nested_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

/* The children of `root` with the aggregation's path into ns->kids. */
static sc_status load_kids(sc__agg_coll *c, nested_state *ns, uint32_t root)
{
    ns->n_kids = 0;
    ns->last_root = root;
    sc_doc_iter *it = ns->path_it;
    if (!it || root == 0 || sc_bitset_test(ns->parents, root - 1))
        return SC_OK; /* no path docs here, or a root without children */
    uint32_t start = root;
    while (start > 0 && !sc_bitset_test(ns->parents, start - 1))
        start--;
    uint32_t d = it->positioned ? it->doc : SC_DOC_END;
    if (!it->positioned || (d != SC_DOC_END && d < start))
        d = sc_doc_iter_advance(it, start);
    for (; d < root; d = sc_doc_iter_next(it)) {
        if (ns->n_kids == ns->cap_kids) {
            size_t cap = ns->cap_kids ? ns->cap_kids * 2 : 16;
            uint32_t *k = sc_arena_alloc(c->ctx->a, cap * sizeof *k);
            if (!k)
                return sc__agg_oom(c->ctx->a);
            if (ns->n_kids)
                memcpy(k, ns->kids, ns->n_kids * sizeof *k);
            ns->kids = k;
            ns->cap_kids = cap;
        }
        ns->kids[ns->n_kids++] = d;
    }
    return SC_OK;
}

static sc_status nested_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                size_t n)
{
    nested_state *ns = c->state;
    if (!ns->parents)
        return SC_OK; /* no nested docs in this segment: nothing joins */
    for (size_t i = 0; i < n; i++) {
        uint32_t owner = owners ? owners[i] : 0, doc = docs[i];
        if (c->spec->kind == SC_AGG_NESTED) {
            if (doc != ns->last_root)
                SC_TRY(load_kids(c, ns, doc));
            for (size_t k = 0; k < ns->n_kids; k++)
                SC_TRY(sc__agg_emit(c, ns->kids[k], owner));
            continue;
        }
        size_t root = sc_bitset_next_set(ns->parents, doc);
        if (root >= ns->n_docs)
            continue;
        SC_TRY(sc__agg_vec_ensure(c->ctx->a, &ns->last, (size_t)owner + 1, 0));
        uint64_t *last = ns->last.p;
        if (last[owner] == root + 1)
            continue; /* this root was already counted in this bucket */
        last[owner] = root + 1;
        SC_TRY(sc__agg_emit(c, (uint32_t)root, owner));
    }
    return SC_OK;
}

static sc_status nested_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 1);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    SC_TRY(sc__agg_count_buckets(c->ctx, 1));
    r->buckets[0].key = 0;
    SC_TRY(sc__agg_build_bucket(c, owner, &r->buckets[0]));
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops nested_ops = {
    .seg_begin = nested_seg_begin,
    .collect = nested_collect,
    .seg_end = nested_seg_end,
    .build = nested_build,
};

sc_status sc__agg_nested_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    nested_state *ns = sc_arena_calloc(a, 1, sizeof *ns);
    if (!ns)
        return sc__agg_oom(a);
    if (c->spec->kind == SC_AGG_NESTED && c->spec->field) {
        sc_query *q =
            sc_query_term(a, sc_slice_cstr(SC_NESTED_PATH_FIELD), sc_slice_cstr(c->spec->field));
        if (!q)
            return sc__agg_oom(a);
        SC_TRY(sc__plan_build(c->ctx->sctx, q, false, &ns->path_plan));
    }
    c->state = ns;
    c->ops = &nested_ops;
    return SC_OK;
}
