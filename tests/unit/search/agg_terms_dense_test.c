/* The terms collector's per-segment tables (search/agg_terms.c): a top-level terms on a
 * numeric field whose values span at most 4,095 in a segment maps each value to its bucket
 * through a dense table, and that path and the top-level keyword path with subs count docs
 * per key in lanes folded into the bucket counts at segment end. Against brute force: three
 * segments (a gcd of 10 and negative values; passenger-count-like 0..9; a span too wide for
 * the table with 17,000 keyword terms, too many for the lanes, sharing values with the
 * others), deletes, with and without an avg sub, under match_all and a sparse range; and the
 * one-pass keyword > int64 sum / avg path against the window path, bit for bit.
 * Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

#define N_SEG 3
static const uint32_t seg_docs[N_SEG] = {3000, 3000, 17000};

static char dir[64];

typedef struct ddoc {
    int64_t v;  /* "v": long, one a doc */
    int64_t m;  /* "m": long, one a doc */
    uint32_t k; /* "k": keyword "k<k>", one a doc */
    int64_t x;  /* "x": a double (as a sortable long), one a doc */
    bool live;
} ddoc;

static int setup(void **state)
{
    (void)state;
    return fx_begin("agg_terms_dense", dir, sizeof dir);
}

static int teardown(void **state)
{
    (void)state;
    return fx_end(dir);
}

/* A value of "v" in segment s: -300..600 step 10, +7; 0..9 (mostly 1); or 2,000 values up to
 * two million (one in four a value of the other segments, so buckets join across paths). */
static int64_t v_of(int s)
{
    if (s == 0)
        return ((int64_t)below(91) - 30) * 10 + 7;
    if (s == 1)
        return below(4) ? 1 : (int64_t)below(10);
    if (below(4) == 0)
        return below(2) ? ((int64_t)below(91) - 30) * 10 + 7 : (int64_t)below(10);
    return (int64_t)below(2000) * 1000 + 3;
}

typedef struct km {
    int64_t key, m;
} km;

static int cmp_km(const void *a, const void *b)
{
    int64_t x = ((const km *)a)->key, y = ((const km *)b)->key;
    return (x > y) - (x < y);
}

/* Checks terms result r (keys by `bytes`) against the docs matching [mlo, mhi] on "m": every
 * key's doc count, and with_avg the avg sub's count and sum; and no other buckets. */
static void check(const sc_agg_result *r, ddoc *const *docs, bool bytes, int64_t mlo, int64_t mhi,
                  bool with_avg)
{
    size_t cap = 0;
    for (int s = 0; s < N_SEG; s++)
        cap += seg_docs[s];
    km *keys = calloc(cap, sizeof *keys);
    assert_non_null(keys);
    size_t nk = 0;
    for (int s = 0; s < N_SEG; s++)
        for (uint32_t d = 0; d < seg_docs[s]; d++) {
            const ddoc *x = &docs[s][d];
            if (x->live && x->m >= mlo && x->m <= mhi)
                keys[nk++] = (km){bytes ? (int64_t)x->k : x->v, x->m};
        }
    qsort(keys, nk, sizeof *keys, cmp_km);
    /* r's buckets by key (a keyword's number after "k"), for a binary search */
    km *byk = calloc(r->n_buckets + 1, sizeof *byk);
    assert_non_null(byk);
    for (size_t i = 0; i < r->n_buckets; i++) {
        const sc_agg_bucket *b = &r->buckets[i];
        int64_t key = b->key;
        if (bytes) {
            char kw[16] = {0};
            assert_true(b->bkey.len > 1 && b->bkey.len < sizeof kw && b->bkey.ptr[0] == 'k');
            memcpy(kw, b->bkey.ptr + 1, b->bkey.len - 1);
            key = strtoll(kw, NULL, 10);
        }
        byk[i] = (km){key, (int64_t)i};
    }
    qsort(byk, r->n_buckets, sizeof *byk, cmp_km);
    size_t distinct = 0;
    for (size_t i = 0; i < nk;) {
        uint64_t n = 0;
        int64_t sum = 0, key = keys[i].key;
        for (; i < nk && keys[i].key == key; i++) {
            n++;
            sum += keys[i].m;
        }
        distinct++;
        km probe = {key, 0};
        const km *hit = bsearch(&probe, byk, r->n_buckets, sizeof *byk, cmp_km);
        if (!hit)
            fail_msg("key %lld: no bucket", (long long)key);
        const sc_agg_bucket *b = &r->buckets[hit->m];
        if (b->doc_count != n)
            fail_msg("key %lld: doc_count %llu, want %llu", (long long)key,
                     (unsigned long long)b->doc_count, (unsigned long long)n);
        if (with_avg) {
            assert_int_equal(b->subs[0]->count, n);
            assert_true(b->subs[0]->sum == (double)sum);
        }
    }
    assert_int_equal(r->n_buckets, distinct);
    free(byk);
    free(keys);
}

static void test_terms_dense_and_lanes(void **state)
{
    (void)state;
    ddoc *docs[N_SEG];
    sc_segment *segs[N_SEG];
    sc_bitset lives[N_SEG];
    sc_searcher_segment ss[N_SEG];
    for (int s = 0; s < N_SEG; s++) {
        docs[s] = calloc(seg_docs[s], sizeof *docs[s]);
        assert_non_null(docs[s]);
        sc_segment_builder *b;
        assert_int_equal(sc_segment_builder_new(&b), SC_OK);
        for (uint32_t d = 0; d < seg_docs[s]; d++) {
            ddoc *x = &docs[s][d];
            x->v = v_of(s);
            x->m = (int64_t)below(100000) - 1000;
            /* mostly one term, as a rate code; segment 2: 17,000 distinct terms */
            x->k = s < 2 ? (below(8) ? 1 : below(6)) : d % 17000;
            char kw[16];
            snprintf(kw, sizeof kw, "k%u", x->k);
            sc_index_token kt = {sc_slice_cstr(kw), 0};
            fx_tagged tg;
            sc_index_field f[6];
            size_t nf = fx_tagged_fields(&tg, s, d, 0, f);
            f[nf++] = fx_numeric("v", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &x->v, 1);
            f[nf++] = fx_numeric("m", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &x->m, 1);
            f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, &kt, 1);
            x->x = sc_agg_double_to_sortable((double)below(1000000) / 7);
            f[nf++] = fx_numeric("x", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &x->x, 1);
            assert_int_equal(fx_add(b, tg.id, f, nf), 0);
        }
        bool *live = calloc(seg_docs[s], sizeof *live);
        assert_non_null(live);
        assert_int_equal(fx_segment_finish(b, dir, s, s == 0, 7, &segs[s], &lives[s], live, &ss[s]),
                         0);
        for (uint32_t d = 0; d < seg_docs[s]; d++)
            docs[s][d].live = live[d];
        free(live);
    }
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *t[4];
    for (int i = 0; i < 4; i++) {
        bool bytes = i >= 2;
        t[i] = fx_agg_spec(&a, SC_AGG_TERMS, "t", bytes ? "k" : "v",
                           bytes ? SC_AGG_V_KEYWORD : SC_AGG_V_LONG);
        t[i]->size = 100000;
        t[i]->shard_size = 100000;
        if (i % 2 == 0)
            fx_agg_add_sub(&a, t[i], fx_agg_spec(&a, SC_AGG_AVG, "avg", "m", SC_AGG_V_LONG));
        fx_agg_add_sub(&a, root, t[i]);
    }
    int64_t mlo[2] = {INT64_MIN, 20000}, mhi[2] = {INT64_MAX, 20999};
    for (int q = 0; q < 2; q++) {
        const sc_query *qq = q == 0 ? sc_query_match_all(&a)
                                    : sc_query_range(&a, sc_slice_cstr("m"), &mlo[1], &mhi[1], 1);
        sc_agg_result *r = fx_agg_collect(&a, root, ss, N_SEG, qq, 1, NULL);
        for (int i = 0; i < 4; i++)
            check(r->buckets[0].subs[i], docs, i >= 2, mlo[q], mhi[q], i % 2 == 0);
    }
    /* terms > avg of a double: the window straight to the metric (fused) and, with a
     * value_count sub beside it, through the queued pairs; the same sums bit for bit */
    for (int bytes = 0; bytes < 2; bytes++) {
        sc_agg_spec *roots[2];
        for (int v = 0; v < 2; v++) {
            roots[v] = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *tt = fx_agg_spec(&a, SC_AGG_TERMS, "t", bytes ? "k" : "v",
                                          bytes ? SC_AGG_V_KEYWORD : SC_AGG_V_LONG);
            tt->size = tt->shard_size = 100000;
            fx_agg_add_sub(&a, tt, fx_agg_spec(&a, SC_AGG_AVG, "avg", "x", SC_AGG_V_DOUBLE));
            if (v)
                fx_agg_add_sub(&a, tt,
                               fx_agg_spec(&a, SC_AGG_VALUE_COUNT, "vc", "m", SC_AGG_V_LONG));
            fx_agg_add_sub(&a, roots[v], tt);
        }
        const sc_agg_result *rf =
            fx_agg_collect(&a, roots[0], ss, N_SEG, sc_query_match_all(&a), 1, NULL)
                ->buckets[0]
                .subs[0];
        const sc_agg_result *rp =
            fx_agg_collect(&a, roots[1], ss, N_SEG, sc_query_match_all(&a), 1, NULL)
                ->buckets[0]
                .subs[0];
        assert_int_equal(rf->n_buckets, rp->n_buckets);
        for (size_t i = 0; i < rf->n_buckets; i++) {
            const sc_agg_result *x = rf->buckets[i].subs[0], *y = rp->buckets[i].subs[0];
            assert_int_equal(rf->buckets[i].doc_count, rp->buckets[i].doc_count);
            assert_int_equal(x->count, y->count);
            assert_memory_equal(&x->sum, &y->sum, sizeof x->sum);
            assert_memory_equal(&x->sum_c, &y->sum_c, sizeof x->sum_c);
        }
    }
    /* terms on the keyword > one avg or sum of "m" (a long, then read as a scaled_float with a
     * factor of 100): one pass over both columns into the metric's int64 lanes; against the
     * same metric with a max beside it (two subs: the window through to_subs), bit for bit,
     * under match_all and the sparse range */
    for (int kind = 0; kind < 4; kind++) {
        sc_agg_spec *roots[2];
        for (int v = 0; v < 2; v++) {
            roots[v] = fx_agg_spec(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *tt = fx_agg_spec(&a, SC_AGG_TERMS, "t", "k", SC_AGG_V_KEYWORD);
            tt->size = tt->shard_size = 100000;
            sc_agg_spec *ms =
                fx_agg_spec(&a, kind % 2 ? SC_AGG_SUM : SC_AGG_AVG, "m", "m", SC_AGG_V_LONG);
            if (kind >= 2)
                ms->scaling_factor = 100;
            fx_agg_add_sub(&a, tt, ms);
            if (v)
                fx_agg_add_sub(&a, tt, fx_agg_spec(&a, SC_AGG_MAX, "mx", "m", SC_AGG_V_LONG));
            fx_agg_add_sub(&a, roots[v], tt);
        }
        for (int q = 0; q < 2; q++) {
            const sc_query *qq = q == 0
                                     ? sc_query_match_all(&a)
                                     : sc_query_range(&a, sc_slice_cstr("m"), &mlo[1], &mhi[1], 1);
            const sc_agg_result *r1 =
                fx_agg_collect(&a, roots[0], ss, N_SEG, qq, 1, NULL)->buckets[0].subs[0];
            const sc_agg_result *r2 =
                fx_agg_collect(&a, roots[1], ss, N_SEG, qq, 1, NULL)->buckets[0].subs[0];
            if (kind == 0)
                check(r1, docs, true, mlo[q], mhi[q], true);
            assert_int_equal(r1->n_buckets, r2->n_buckets);
            for (size_t i = 0; i < r1->n_buckets; i++) {
                const sc_agg_result *x = r1->buckets[i].subs[0], *y = r2->buckets[i].subs[0];
                assert_int_equal(r1->buckets[i].doc_count, r2->buckets[i].doc_count);
                assert_int_equal(x->count, y->count);
                assert_int_equal(x->count, r1->buckets[i].doc_count);
                assert_memory_equal(&x->sum, &y->sum, sizeof x->sum);
                assert_memory_equal(&x->sum_c, &y->sum_c, sizeof x->sum_c);
            }
        }
    }
    sc_arena_fini(&a);
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
        free(docs[s]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terms_dense_and_lanes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
