/* The terms reduce, as Elasticsearch computes it (reference/aggregations.md §2.1): buckets
 * merged by key; each input's error term (0 when it returned every term or the order is by
 * key, its smallest count when ordered by count desc, -1 otherwise); sum_other_doc_count
 * summed, plus at the final reduce the counts of buckets cut by `size` (not those dropped by
 * min_doc_count); per-bucket errors; and doc_count_error_upper_bound 0 when one shard result
 * went in. Partial reduces keep every bucket. */
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

/* The error term an input contributes (-1 = unbounded). */
static int64_t input_error(const sc_agg_spec *spec, const sc_agg_result *r)
{
    if (r->error_set)
        return r->doc_count_error;
    /* a shard result with fewer buckets than its shard_size returned every term */
    if (r->n_buckets == 0 || r->n_buckets < r->shard_size || spec->order.kind == SC_AGG_ORDER_KEY)
        return 0;
    if (spec->order.kind == SC_AGG_ORDER_COUNT && spec->order.desc)
        return (int64_t)r->buckets[r->n_buckets - 1].doc_count;
    return -1;
}

typedef struct ref {
    sc_agg_bucket *b;
    int64_t e; /* its input's error term */
} ref;

static int cmp_ref_key(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, ((const ref *)x)->b, ((const ref *)y)->b);
}

static int cmp_bucket(const void *x, const void *y, void *ctx)
{
    return sc__agg_bucket_cmp(ctx, x, y);
}

/* Error sums saturate (bounds past 2^63 are meaningless, and decoded input may be anything). */
static int64_t sat_add(int64_t x, int64_t y)
{
    int64_t r;
    return __builtin_add_overflow(x, y, &r) ? (y > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t add_err(int64_t x, int64_t y)
{
    return x < 0 || y < 0 ? -1 : sat_add(x, y);
}

sc_status sc__agg_terms_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                               bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                               sc_agg_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->n_buckets;
    ref *refs = sc_arena_alloc(a, (total ? total : 1) * sizeof *refs);
    if (!refs)
        return sc__agg_oom(a);
    int64_t error = 0;
    uint64_t sum_other = 0;
    uint32_t n_reduced = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t e = input_error(spec, in[i]);
        error = add_err(error, e);
        sum_other += in[i]->sum_other;
        n_reduced += in[i]->n_reduced;
        for (size_t j = 0; j < in[i]->n_buckets; j++)
            refs[k++] = (ref){&in[i]->buckets[j], e};
    }
    qsort_r(refs, total, sizeof *refs, cmp_ref_key, (void *)spec);
    /* the merged buckets and the largest group first: a partial reduce keeps every distinct
     * key, and its memory is what a node or the coordinator holds per bucket */
    size_t distinct = 0, widest = 1;
    for (size_t i = 0, j; i < total; i = j) {
        for (j = i + 1; j < total && sc__agg_key_cmp(spec, refs[j].b, refs[i].b) == 0; j++)
            ;
        distinct++;
        widest = j - i > widest ? j - i : widest;
    }
    sc_agg_bucket **group = sc_arena_alloc(a, widest * sizeof *group);
    sc_agg_result *r = sc__agg_result_new(a, spec, distinct);
    if (!group || !r)
        return sc__agg_oom(a);
    r->sum_other = sum_other;
    size_t nb = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        sc_agg_bucket *m = &r->buckets[nb++];
        m->key = refs[i].b->key;
        m->dkey = refs[i].b->dkey;
        m->bkey = refs[i].b->bkey;
        int64_t be = 0; /* may go negative until the total is added */
        bool unbounded = error < 0;
        for (; j < total && sc__agg_key_cmp(spec, refs[j].b, refs[i].b) == 0; j++) {
            m->doc_count += refs[j].b->doc_count;
            /* this input returned the term: its own error does not apply to it */
            int64_t own = refs[j].b->doc_count_error;
            unbounded |= own < 0 || refs[j].e < 0;
            be = sat_add(be, sat_add(own, refs[j].e == INT64_MIN ? INT64_MAX : -refs[j].e));
            group[j - i] = refs[j].b;
        }
        m->doc_count_error = unbounded ? -1 : sat_add(be, error);
        SC_TRY(sc__agg_reduce_subs(spec, group, j - i, final, max_buckets, a, m, err));
        i = j;
    }
    r->n_buckets = nb;
    r->n_reduced = n_reduced;
    r->doc_count_error = error;
    r->error_set = true;
    if (final) {
        qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_bucket, (void *)spec);
        size_t kept = 0;
        for (size_t i = 0; i < nb; i++) {
            if (r->buckets[i].doc_count < spec->min_doc_count)
                continue; /* dropped without counting into sum_other */
            if (kept < spec->size)
                r->buckets[kept++] = r->buckets[i];
            else
                r->sum_other += r->buckets[i].doc_count;
        }
        r->n_buckets = kept;
        if (n_reduced <= 1)
            r->doc_count_error = 0;
        if (n_reduced <= 1)
            for (size_t i = 0; i < kept; i++)
                r->buckets[i].doc_count_error = 0;
        SC_TRY(sc__agg_pipelines_parent(spec, r, a, err));
    }
    *out = r;
    return SC_OK;
}
