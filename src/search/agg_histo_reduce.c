/* The histogram / date_histogram reduce (agg_internal.h): buckets of every input merged by
 * key (sub-aggregations reduced per key); at the final reduce, with min_doc_count 0, empty
 * buckets fill every key between the first and last (widened by extended_bounds, clipped by
 * hard_bounds), then min_doc_count filters and the order sorts (default _key asc). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

static int cmp_key(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, *(sc_agg_bucket *const *)x, *(sc_agg_bucket *const *)y);
}

static int cmp_bucket(const void *x, const void *y, void *ctx)
{
    return sc__agg_bucket_cmp(ctx, x, y);
}

/* The bucket key holding value v (histogram: as a double; dates: UTC ms). */
static double round_key(const sc_agg_spec *spec, double v)
{
    if (spec->kind == SC_AGG_DATE_HISTOGRAM)
        return (double)sc_agg_round(&spec->rounding, (int64_t)v);
    return floor((v - spec->offset) / spec->interval) * spec->interval + spec->offset;
}

static double key_of(const sc_agg_spec *spec, const sc_agg_bucket *b)
{
    return spec->kind == SC_AGG_HISTOGRAM ? b->dkey : (double)b->key;
}

/* The key after k. */
static double next_key(const sc_agg_spec *spec, double k)
{
    if (spec->kind == SC_AGG_DATE_HISTOGRAM)
        return (double)sc_agg_round_next(&spec->rounding, (int64_t)k);
    double idx = round((k - spec->offset) / spec->interval);
    return (idx + 1) * spec->interval + spec->offset;
}

/* Rebuilds r's buckets with empty ones in every gap of [lo, hi]. */
static sc_status fill_gaps(const sc_agg_spec *spec, sc_agg_result *r, double lo, double hi,
                           uint64_t max_buckets, sc_arena *a, sc_agg_error *err)
{
    size_t cap = r->n_buckets + 16, n = 0;
    sc_agg_bucket *out = sc_arena_alloc(a, cap * sizeof *out);
    if (!out)
        return sc__agg_oom(a);
    size_t j = 0;
    double k = lo;
    while (k <= hi || j < r->n_buckets) {
        if (n == cap) {
            sc_agg_bucket *bigger = sc_arena_alloc(a, 2 * cap * sizeof *bigger);
            if (!bigger)
                return sc__agg_oom(a);
            memcpy(bigger, out, n * sizeof *out);
            out = bigger;
            cap *= 2;
        }
        if (n >= max_buckets) {
            err->too_many_buckets = true;
            snprintf(err->reason, sizeof err->reason,
                     "Trying to create too many buckets. Must be less than or equal to: [%llu] "
                     "but this number of buckets was exceeded. This limit can be set by "
                     "changing the [search.max_buckets] cluster level setting.",
                     (unsigned long long)max_buckets);
            return SC_ELIMIT;
        }
        if (j < r->n_buckets && key_of(spec, &r->buckets[j]) <= k) {
            out[n++] = r->buckets[j++];
            k = next_key(spec, key_of(spec, &out[n - 1]));
            continue;
        }
        if (k > hi)
            break;
        /* an empty bucket: zero count, empty sub-results */
        sc_agg_result *one = sc__agg_result_new(a, spec, 1);
        if (!one)
            return sc__agg_oom(a);
        sc_agg_bucket *b = &one->buckets[0];
        for (size_t s = 0; s < spec->n_subs; s++)
            if (!(b->subs[s] = sc__agg_empty_result(spec->subs[s], a)))
                return sc__agg_oom(a);
        if (spec->kind == SC_AGG_HISTOGRAM)
            b->dkey = k;
        else
            b->key = (int64_t)k;
        out[n++] = *b;
        k = next_key(spec, k);
    }
    r->buckets = out;
    r->n_buckets = n;
    return SC_OK;
}

static sc_status finalize(const sc_agg_spec *spec, sc_agg_result *r, uint64_t max_buckets,
                          sc_arena *a, sc_agg_error *err)
{
    if (spec->min_doc_count == 0 && (r->n_buckets || spec->has_ext_bounds)) {
        double lo = r->n_buckets ? key_of(spec, &r->buckets[0]) : INFINITY;
        double hi = r->n_buckets ? key_of(spec, &r->buckets[r->n_buckets - 1]) : -INFINITY;
        if (spec->has_ext_bounds) {
            double emin = spec->ext_min, emax = spec->ext_max;
            if (spec->has_hard_bounds) {
                emin = emin < spec->hard_min ? spec->hard_min : emin;
                emax = emax > spec->hard_max ? spec->hard_max : emax;
            }
            if (emin <= emax) {
                double kmin = round_key(spec, emin), kmax = round_key(spec, emax);
                lo = kmin < lo ? kmin : lo;
                hi = kmax > hi ? kmax : hi;
            }
        }
        /* dates beyond +-2^62 ms (decoded garbage) are not stepped through */
        bool sane = spec->kind == SC_AGG_HISTOGRAM || (fabs(lo) < 0x1p62 && fabs(hi) < 0x1p62);
        if (lo <= hi && sane)
            SC_TRY(fill_gaps(spec, r, lo, hi, max_buckets, a, err));
    }
    size_t kept = 0;
    for (size_t i = 0; i < r->n_buckets; i++)
        if (r->buckets[i].doc_count >= spec->min_doc_count)
            r->buckets[kept++] = r->buckets[i];
    r->n_buckets = kept;
    if (spec->order.kind != SC_AGG_ORDER_KEY || spec->order.desc)
        qsort_r(r->buckets, kept, sizeof *r->buckets, cmp_bucket, (void *)spec);
    return sc__agg_pipelines_parent(spec, r, a, err);
}

sc_status sc__agg_histo_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                               bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                               sc_agg_error *err)
{
    size_t total;
    sc_agg_bucket **refs = sc__agg_bucket_refs(in, n, a, &total);
    sc_agg_result *r = sc__agg_result_new(a, spec, total);
    if (!refs || !r)
        return sc__agg_oom(a);
    /* merge by key ascending (the histogram's key order, whatever the requested order) */
    sc_agg_spec by_key = *spec;
    by_key.order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    qsort_r(refs, total, sizeof *refs, cmp_key, &by_key);
    size_t nb = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        sc_agg_bucket *m = &r->buckets[nb++];
        m->key = refs[i]->key;
        m->dkey = refs[i]->dkey;
        while (j < total && sc__agg_key_cmp(spec, refs[j], refs[i]) == 0)
            m->doc_count += refs[j++]->doc_count;
        SC_TRY(sc__agg_reduce_subs(spec, refs + i, j - i, final, max_buckets, a, m, err));
        i = j;
    }
    r->n_buckets = nb;
    if (final)
        SC_TRY(finalize(spec, r, max_buckets, a, err));
    *out = r;
    return SC_OK;
}
