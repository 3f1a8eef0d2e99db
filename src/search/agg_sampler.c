/* The sampler and diversified_sampler aggregations (agg_internal.h): one bucket per owner
 * holding a shard's best `shard_size` docs by score, which its sub-aggregations see instead of
 * every doc; diversified_sampler also keeps at most max_docs_per_value docs per value of its
 * field (counted per (owner, value); docs without a value share one key; an unmapped field
 * samples nothing, as Elasticsearch's unmapped sampler).
 * Elasticsearch keeps the top docs by score, ties by doc id; under a query whose matches all
 * score alike (match_all, filters, ranges, constant_score, a bool of such) those are the first
 * shard_size matches in doc order, which docs arrive in (segments in order, docs non-decreasing
 * within one), so a doc passes while its owner's count is below shard_size. A query that
 * scores docs differently is refused (400): the collectors see no scores. */
#include <stdio.h>
#include <string.h>

#include "search/agg_internal.h"

/* Whether every match of q scores the same (conservative: false when unsure). */
static bool constant_scores(const sc_query *q)
{
    if (!q)
        return true;
    switch (q->kind) {
    case SC_QUERY_MATCH_ALL:
    case SC_QUERY_MATCH_NONE:
    case SC_QUERY_TERMS:
    case SC_QUERY_CONSTANT_SCORE:
    case SC_QUERY_IDS:
    case SC_QUERY_EXISTS:
    case SC_QUERY_RANGE:
    case SC_QUERY_GEO: return true;
    case SC_QUERY_BOOL:
        for (size_t i = 0; i < q->u.bool_.n_clauses; i++) {
            const sc_query_clause *cl = &q->u.bool_.clauses[i];
            if (cl->occur == SC_OCCUR_SHOULD ||
                (cl->occur == SC_OCCUR_MUST && !constant_scores(cl->query)))
                return false;
        }
        return true;
    default: return false;
    }
}

/* diversified_sampler's state: the field's doc values in the current segment and the docs
 * taken per (owner, value) (values: byte keys for keywords and ips, else the numeric value;
 * docs without one: owner alone in `none`). */
typedef struct diverse {
    sc__agg_field f;
    sc__agg_ords vals, none;
    sc__agg_vec taken; /* uint64 per ordinal of vals */
    sc__agg_vec none_taken;
} diverse;

static sc_status sampler_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    diverse *d = c->state;
    return d ? sc__agg_field_open(c->ctx, s->seg, c->spec->field, &d->f) : SC_OK;
}

static sc_status sampler_seg_end(sc__agg_coll *c)
{
    (void)c;
    return SC_OK;
}

static sc_status sampler_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                 size_t n)
{
    uint64_t cap = c->spec->shard_size;
    for (size_t i = 0; i < n; i++) {
        uint32_t owner = owners ? owners[i] : 0;
        if (owner < c->doc_counts.len && ((const uint64_t *)c->doc_counts.p)[owner] >= cap)
            continue;
        SC_TRY(sc__agg_emit(c, docs[i], owner));
    }
    return SC_OK;
}

/* Whether doc may join owner's sample under the per-value limit (and counts it when so). */
static sc_status diverse_take(sc__agg_coll *c, diverse *d, uint32_t doc, uint32_t owner, bool *take)
{
    sc__agg_ctx *ctx = c->ctx;
    uint32_t ord;
    bool added;
    sc__agg_vec *counts = &d->taken;
    uint32_t nv = d->f.has_ss    ? sc_dv_sorted_set_count(&d->f.ss, doc)
                  : d->f.has_num ? sc_dv_numeric_count(&d->f.num, doc)
                                 : 0;
    if (nv > 1) {
        snprintf(ctx->err->reason, sizeof ctx->err->reason,
                 "Sample diversifying key must be a single valued-field");
        return SC_EINVAL;
    }
    if (nv == 0) {
        SC_TRY(sc__agg_ords_long(ctx->a, &d->none, owner, 0, &ord, &added));
        counts = &d->none_taken;
    } else if (d->f.has_ss) {
        uint64_t o;
        sc_dv_sorted_set_ords(&d->f.ss, doc, &o, 1);
        SC_TRY(sc__agg_ords_bytes(ctx->a, &d->vals, owner, sc_dv_sorted_set_term(&d->f.ss, o), &ord,
                                  &added));
    } else {
        int64_t v;
        sc_dv_numeric_first(&d->f.num, doc, &v);
        SC_TRY(sc__agg_ords_long(ctx->a, &d->vals, owner, v, &ord, &added));
    }
    if (ord >= counts->len)
        SC_TRY(sc__agg_vec_ensure(ctx->a, counts, (size_t)ord + 1, 0));
    uint64_t *n = (uint64_t *)counts->p + ord;
    *take = *n < c->spec->max_docs_per_value;
    if (*take)
        ++*n;
    return SC_OK;
}

static sc_status diverse_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                 size_t n)
{
    diverse *d = c->state;
    if (c->spec->vtype == SC_AGG_V_UNMAPPED)
        return SC_OK;
    uint64_t cap = c->spec->shard_size;
    for (size_t i = 0; i < n; i++) {
        uint32_t owner = owners ? owners[i] : 0;
        if (owner < c->doc_counts.len && ((const uint64_t *)c->doc_counts.p)[owner] >= cap)
            continue;
        bool take;
        SC_TRY(diverse_take(c, d, docs[i], owner, &take));
        if (take)
            SC_TRY(sc__agg_emit(c, docs[i], owner));
    }
    return SC_OK;
}

static sc_status sampler_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(c->ctx->a, c->spec, 1);
    if (!r)
        return sc__agg_oom(c->ctx->a);
    SC_TRY(sc__agg_count_buckets(c->ctx, 1));
    SC_TRY(sc__agg_build_bucket(c, owner, &r->buckets[0]));
    *out = r;
    return SC_OK;
}

/* Docs read for the sample of a whole segment before giving up (the windows then feed it): the
 * scan reads the range field's doc values from the first doc on, so a range whose matches
 * come late in doc order would cost more than the windows of its matches. */
#define WHOLE_SCAN_MIN 65536

/* The segment's matches are all its docs (field NULL) or its docs with a value of the
 * single-valued `field` in [lo, hi] (no deletes): the sample is the first of them in doc
 * order while the count is below shard_size, found by reading the field's doc values from
 * the first doc until the sample is full (Lucene's top-N of constant scores terminates the
 * same way), instead of every match's window. Not handled (nothing taken) when the scan
 * would pass max(WHOLE_SCAN_MIN, n_docs / 16) docs without filling the sample. */
static sc_status sampler_seg_whole(sc__agg_coll *c, const sc_slice *field, int64_t lo, int64_t hi,
                                   bool *handled)
{
    *handled = false;
    uint64_t cap = c->spec->shard_size;
    uint64_t have = c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[0] : 0;
    uint32_t n_docs = c->seg->n_docs;
    if (!field) {
        for (uint32_t d = 0; d < n_docs && have < cap; d++, have++)
            SC_TRY(sc__agg_emit(c, d, 0));
        *handled = true;
        return SC_OK;
    }
    char name[256];
    if (field->len >= sizeof name || have >= cap)
        return SC_OK;
    memcpy(name, field->ptr, field->len);
    name[field->len] = '\0';
    sc__agg_field f;
    SC_TRY(sc__agg_field_open(c->ctx, c->seg->seg, name, &f));
    if (!f.has_num)
        return SC_OK;
    uint32_t want = (uint32_t)(cap - have < 4096 ? cap - have : 4096), got = 0;
    uint32_t *docs = sc_arena_alloc(c->ctx->a, want * sizeof *docs);
    if (!docs)
        return sc__agg_oom(c->ctx->a);
    uint32_t limit = n_docs / 16 > WHOLE_SCAN_MIN ? n_docs / 16 : WHOLE_SCAN_MIN;
    uint32_t d = 0;
    for (; d < n_docs && got < want; d++) {
        int64_t v;
        if (d == limit)
            return SC_OK; /* sparse matches: the windows are cheaper */
        if (sc_dv_numeric_first(&f.num, d, &v) && v >= lo && v <= hi)
            docs[got++] = d;
    }
    if (got == want && (uint64_t)want < cap - have)
        return SC_OK; /* a sample larger than the scan's buffer */
    for (uint32_t i = 0; i < got; i++)
        SC_TRY(sc__agg_emit(c, docs[i], 0));
    *handled = true;
    return SC_OK;
}

static const sc__agg_coll_ops sampler_ops = {
    .seg_begin = sampler_seg_begin,
    .collect = sampler_collect,
    .seg_end = sampler_seg_end,
    .build = sampler_build,
    .seg_whole = sampler_seg_whole,
    .seg_whole_feeds_subs = true,
};

static const sc__agg_coll_ops diverse_ops = {
    .seg_begin = sampler_seg_begin,
    .collect = diverse_collect,
    .seg_end = sampler_seg_end,
    .build = sampler_build,
};

sc_status sc__agg_sampler_new(sc__agg_coll *c)
{
    bool diversified = c->spec->kind == SC_AGG_DIVERSIFIED_SAMPLER;
    if (!constant_scores(c->ctx->q)) {
        snprintf(c->ctx->err->reason, sizeof c->ctx->err->reason,
                 "[%s] aggregation [%s] under a query that scores documents differently is "
                 "not supported yet (only match_all, filters, ranges, constant_score and bools "
                 "of those)",
                 diversified ? "diversified_sampler" : "sampler", c->spec->name);
        return SC_EUNSUPPORTED;
    }
    c->ops = &sampler_ops;
    if (!diversified)
        return SC_OK;
    diverse *d = sc_arena_calloc(c->ctx->a, 1, sizeof *d);
    if (!d)
        return sc__agg_oom(c->ctx->a);
    d->vals.bytes = c->spec->vtype == SC_AGG_V_KEYWORD || c->spec->vtype == SC_AGG_V_IP;
    c->state = d;
    c->ops = &diverse_ops;
    return SC_OK;
}
