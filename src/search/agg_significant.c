/* significant_terms (search/agg.h) with Elasticsearch's default JLH score: a term's frequency
 * in the matching docs (the subset: docs of the owner bucket) against its frequency in the
 * whole index (the superset: live docs; background counts are the terms' doc frequencies).
 * The shard keeps the shard_size best by its own statistics; the reduce sums counts and sizes
 * and, at the final reduce, scores again, drops terms under min_doc_count and keeps `size`. */
#include <stdlib.h>
#include <string.h>

#include "index/terms.h"
#include "search/agg_internal.h"

/* JLH: (fg - bg) * (fg / bg) when the term is more frequent in the subset, else 0. */
static double jlh(uint64_t sub_df, uint64_t sub_size, uint64_t sup_df, uint64_t sup_size)
{
    if (!sub_size || !sup_size || !sup_df)
        return 0;
    double fg = (double)sub_df / (double)sub_size, bg = (double)sup_df / (double)sup_size;
    double abs_change = fg - bg;
    return abs_change > 0 ? abs_change * (fg / bg) : 0;
}

static int cmp_score(const void *x, const void *y)
{
    const sc_agg_bucket *a = x, *b = y;
    if (a->dkey != b->dkey)
        return a->dkey > b->dkey ? -1 : 1;
    return sc_slice_cmp(a->bkey, b->bkey);
}

/* The doc frequency of term in field over the shard's segments. */
static sc_status background(const sc_searcher *s, const char *field, sc_slice term, uint64_t *df)
{
    *df = 0;
    for (size_t i = 0; i < s->n_segs; i++) {
        const sc_field_info *f = sc_segment_field(s->segs[i].seg, sc_slice_cstr(field));
        sc_term_info ti;
        bool found = false;
        if (f)
            SC_TRY(sc_terms_lookup(s->segs[i].seg, f, term, &ti, &found));
        *df += found ? ti.doc_freq : 0;
    }
    return SC_OK;
}

sc_status sc__agg_significant_build(sc__agg_coll *c, const sc__agg_ords *ords,
                                    const sc__agg_vec *subset, uint32_t owner, sc_agg_result **out)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    const sc_searcher *s = c->ctx->s;
    uint64_t sup = 0, sub = owner < subset->len ? ((const uint64_t *)subset->p)[owner] : 0;
    for (size_t i = 0; i < s->n_segs; i++)
        sup += sc_segment_n_docs(s->segs[i].seg) - (s->segs[i].live ? s->segs[i].n_deleted : 0);
    size_t nb = 0;
    for (size_t i = 0; i < ords->n; i++)
        nb += sc__agg_ords_owner(ords, (uint32_t)i) == owner;
    sc_agg_result *r = sc__agg_result_new(a, spec, nb);
    if (!r)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < ords->n; i++) {
        if (sc__agg_ords_owner(ords, (uint32_t)i) != owner)
            continue;
        sc_slice term = sc__agg_ords_bkey(ords, (uint32_t)i);
        if (!sc_agg_term_filter_bytes(spec->term_filter, term))
            continue;
        sc_agg_bucket *b = &r->buckets[k++];
        uint64_t bg;
        SC_TRY(background(s, spec->field, term, &bg));
        b->bkey = term;
        b->doc_count = i < c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[i] : 0;
        b->key = (int64_t)bg;
        b->dkey = jlh(b->doc_count, sub, bg, sup);
        b->doc_count_error = (int64_t)i; /* the ordinal while sorting */
    }
    qsort(r->buckets, k, sizeof *r->buckets, cmp_score);
    uint32_t shard_size = sc_agg_terms_shard_size(spec, c->ctx->so ? c->ctx->so->n_shards : 1);
    size_t keep = k < shard_size ? k : shard_size;
    SC_TRY(sc__agg_count_buckets(c->ctx, keep));
    for (size_t i = 0; i < keep; i++) {
        uint32_t ord = (uint32_t)r->buckets[i].doc_count_error;
        r->buckets[i].doc_count_error = 0;
        r->buckets[i].dkey = 0;
        SC_TRY(sc__agg_build_bucket(c, ord, &r->buckets[i]));
    }
    r->n_buckets = keep;
    r->sum_other = sub;
    r->doc_count_error = (int64_t)sup;
    r->shard_size = shard_size;
    *out = r;
    return SC_OK;
}

static int cmp_key(const void *x, const void *y)
{
    return sc_slice_cmp((*(sc_agg_bucket *const *)x)->bkey, (*(sc_agg_bucket *const *)y)->bkey);
}

sc_status sc__agg_significant_reduce(const sc_agg_spec *spec, sc_agg_result *const *in, size_t n,
                                     bool final, uint64_t max_buckets, sc_arena *a,
                                     sc_agg_result **out, sc_agg_error *err)
{
    size_t total;
    sc_agg_bucket **refs = sc__agg_bucket_refs(in, n, a, &total);
    sc_agg_result *r = sc__agg_result_new(a, spec, total);
    if (!refs || !r)
        return sc__agg_oom(a);
    uint64_t sub = 0, sup = 0;
    for (size_t i = 0; i < n; i++) {
        sub += in[i]->sum_other;
        sup += (uint64_t)(in[i]->doc_count_error > 0 ? in[i]->doc_count_error : 0);
        r->n_reduced += in[i]->n_reduced;
    }
    qsort(refs, total, sizeof *refs, cmp_key);
    size_t nb = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        sc_agg_bucket *m = &r->buckets[nb++];
        m->bkey = refs[i]->bkey;
        uint64_t bg = 0;
        for (; j < total && sc_slice_eq(refs[j]->bkey, refs[i]->bkey); j++) {
            m->doc_count += refs[j]->doc_count;
            bg += (uint64_t)(refs[j]->key > 0 ? refs[j]->key : 0);
        }
        m->key = (int64_t)bg;
        SC_TRY(sc__agg_reduce_subs(spec, refs + i, j - i, final, max_buckets, a, m, err));
        i = j;
    }
    r->n_buckets = nb;
    r->n_reduced -= 1; /* result_new started it at 1 */
    r->sum_other = sub;
    r->doc_count_error = (int64_t)(sup > INT64_MAX ? INT64_MAX : sup);
    if (final) {
        size_t kept = 0;
        for (size_t i = 0; i < nb; i++) {
            sc_agg_bucket *b = &r->buckets[i];
            b->dkey = jlh(b->doc_count, sub, (uint64_t)b->key, sup);
            if (b->doc_count >= spec->min_doc_count && b->dkey > 0)
                r->buckets[kept++] = *b;
        }
        qsort(r->buckets, kept, sizeof *r->buckets, cmp_score);
        r->n_buckets = kept < spec->size ? kept : spec->size;
    }
    *out = r;
    return SC_OK;
}
