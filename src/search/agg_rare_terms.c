/* rare_terms (search/agg.h SC_AGG_RARE_TERMS): the shard build from the terms collector's
 * (owner, key) ordinals and the reduce. Elasticsearch keeps an approximate set (cuckoo
 * filters, `precision`) of the terms a shard saw too often; scry sends their 64-bit hashes
 * (XXH3), so the answer is exact unless two keys collide in 64 bits. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "search/agg_internal.h"

uint64_t sc__agg_rare_hash(const sc_agg_spec *spec, const sc_agg_bucket *b)
{
    bool bytes = spec->vtype == SC_AGG_V_KEYWORD || spec->vtype == SC_AGG_V_IP ||
                 spec->vtype == SC_AGG_V_UNMAPPED;
    if (bytes)
        return XXH3_64bits(b->bkey.len ? (const void *)b->bkey.ptr : "", b->bkey.len);
    uint8_t k[8];
    for (int i = 0; i < 8; i++)
        k[i] = (uint8_t)((uint64_t)b->key >> (8 * i));
    return XXH3_64bits(k, 8);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Sorts h[0..n) and drops repeats; returns the new length. */
static size_t sort_unique(uint64_t *h, size_t n)
{
    qsort(h, n, sizeof *h, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || h[i] != h[k - 1])
            h[k++] = h[i];
    return k;
}

static int cmp_keys(const void *x, const void *y, void *spec)
{
    return sc__agg_key_cmp(spec, x, y);
}

sc_status sc__agg_rare_build(sc__agg_coll *c, bool bytes, const sc__agg_ords *ords,
                             const uint32_t *list, size_t nb, sc_agg_result **out)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    const uint64_t *counts = c->doc_counts.p;
    size_t nc = 0;
    for (size_t i = 0; i < nb; i++)
        nc += list[i] < c->doc_counts.len && counts[list[i]] <= spec->max_doc_count;
    sc_agg_result *r = sc__agg_result_new(a, spec, nc);
    if (!r)
        return sc__agg_oom(a);
    r->hashes = sc_arena_alloc(a, (nb - nc + 1) * sizeof *r->hashes);
    if (!r->hashes)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < nb; i++) {
        uint32_t ord = list[i];
        sc_agg_bucket tmp = {0};
        sc_agg_bucket *b = &tmp;
        bool rare = ord < c->doc_counts.len && counts[ord] <= spec->max_doc_count;
        if (rare)
            b = &r->buckets[k++];
        if (bytes)
            b->bkey = sc__agg_ords_bkey(ords, ord);
        else
            b->key = sc__agg_ords_key(ords, ord);
        if (rare)
            SC_TRY(sc__agg_build_bucket(c, ord, b));
        else
            r->hashes[r->n_hashes++] = sc__agg_rare_hash(spec, b);
    }
    r->n_hashes = sort_unique(r->hashes, r->n_hashes);
    qsort_r(r->buckets, r->n_buckets, sizeof *r->buckets, cmp_keys, (void *)spec);
    SC_TRY(sc__agg_count_buckets(c->ctx, r->n_buckets));
    *out = r;
    return SC_OK;
}

typedef struct ref {
    sc_agg_bucket *b;
    size_t seq; /* input order */
} ref;

static int cmp_refs(const void *x, const void *y, void *spec)
{
    const ref *a = x, *b = y;
    int c = sc__agg_key_cmp(spec, a->b, b->b);
    return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static bool has_hash(const uint64_t *h, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && h[lo] == x;
}

sc_status sc__agg_rare_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                              bool final, uint64_t max_buckets, sc_arena *a, sc_agg_result **out,
                              sc_agg_error *err)
{
    size_t nh = 0, nb;
    for (size_t i = 0; i < n; i++)
        nh += in[i]->n_hashes;
    sc_agg_bucket **refs = sc__agg_bucket_refs(in, n, a, &nb);
    uint64_t *hashes = sc_arena_alloc(a, (nh + nb + 1) * sizeof *hashes);
    sc_agg_result *r = sc__agg_result_new(a, spec, nb);
    if (!hashes || !refs || !r)
        return sc__agg_oom(a);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i]->n_hashes)
            memcpy(hashes + m, in[i]->hashes, in[i]->n_hashes * sizeof *hashes);
        m += in[i]->n_hashes;
    }
    m = sort_unique(hashes, m);
    size_t known = m; /* the inputs' frequent terms: looked up while merging */
    /* by key, then input order: sub-aggregations reduce their inputs in shard order */
    ref *order = sc_arena_alloc(a, (nb + 1) * sizeof *order);
    if (!order)
        return sc__agg_oom(a);
    for (size_t i = 0; i < nb; i++)
        order[i] = (ref){refs[i], i};
    qsort_r(order, nb, sizeof *order, cmp_refs, (void *)spec);
    for (size_t i = 0; i < nb; i++)
        refs[i] = order[i].b;
    r->n_buckets = 0;
    for (size_t i = 0; i < nb;) {
        size_t j = i + 1;
        uint64_t total = refs[i]->doc_count;
        while (j < nb && sc__agg_key_cmp(spec, refs[i], refs[j]) == 0)
            total += refs[j++]->doc_count;
        uint64_t h = sc__agg_rare_hash(spec, refs[i]);
        if (has_hash(hashes, known, h)) {
            i = j;
            continue;
        }
        if (total > spec->max_doc_count) {
            hashes[m++] = h; /* frequent once the inputs are added up */
            i = j;
            continue;
        }
        sc_agg_bucket *b = &r->buckets[r->n_buckets++];
        b->key = refs[i]->key;
        b->dkey = refs[i]->dkey;
        b->bkey = refs[i]->bkey;
        b->doc_count = total;
        SC_TRY(sc__agg_reduce_subs(spec, refs + i, j - i, final, max_buckets, a, b, err));
        i = j;
    }
    r->hashes = hashes;
    r->n_hashes = sort_unique(hashes, m);
    if (final)
        SC_TRY(sc__agg_pipelines_parent(spec, r, a, err));
    *out = r;
    return SC_OK;
}
