/* The sketch aggregations (cardinality, percentiles, percentile_ranks; search/agg_sketch.c)
 * against brute force over random documents: four segments (with deletes) collected as one
 * shard or as three shards whose partials cross an encode/decode round trip and a partial then
 * final reduce; keyword, long, double and date fields, multi-valued and missing values, the
 * `missing` parameter, unmapped fields, sketches under terms buckets and ordering terms by a
 * cardinality or median_absolute_deviation sub. Counts below the threshold are exact (±1), above it
 * within the HLL bound; sharded and single-shard cardinalities are identical; percentiles of up to
 * 2000 values are numpy-linear exact, larger ones within the t-digest rank bound; corrupt partials
 * are rejected. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "exact_stats.h"
#include "fixture.h"

#define N_SEG 4
#define PER_SEG 2000
#define N_ALL (N_SEG * PER_SEG)
#define N_TERMS 6000

typedef struct mdoc {
    uint32_t k[2], nk; /* keyword "k": term ids, distinct */
    int64_t n[3];
    uint32_t nn;  /* long "n": 0..3 values, ascending */
    double d;     /* double "d": every doc */
    uint32_t tag; /* keyword "tag": t0..t3 */
    bool live;
} mdoc;

static mdoc docs[N_ALL];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static char dir[64];
static char term_names[N_TERMS][8];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("agg_sketch", dir, sizeof dir) != 0)
        return -1;
    for (int i = 0; i < N_TERMS; i++)
        snprintf(term_names[i], sizeof term_names[i], "v%04d", i);
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            mdoc *m = &docs[s * PER_SEG + d];
            m->nk = below(3);
            for (uint32_t i = 0; i < m->nk; i++)
                m->k[i] = below(N_TERMS);
            fx_sort2_distinct(m->k, &m->nk);
            m->nn = below(4);
            for (uint32_t i = 0; i < m->nn; i++)
                m->n[i] = (int64_t)below(5000) * 1000003 - 7;
            fx_sort_i64(m->n, m->nn);
            /* skewed: an exponential-ish value with ties */
            m->d = floor(-log(((double)below(1u << 30) + 0.5) / (double)(1u << 30)) * 1000) / 8;
            m->tag = below(4);
            fx_tagged tg;
            sc_index_field f[6];
            size_t nf = fx_tagged_fields(&tg, s, d, m->tag, f);
            f[1].flags |= SC_FIELD_DOCVALUES;
            sc_index_token kt[2];
            for (uint32_t i = 0; i < m->nk; i++)
                kt[i] = (sc_index_token){sc_slice_cstr(term_names[m->k[i]]), 0};
            if (m->nk)
                f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, kt, m->nk);
            if (m->nn)
                f[nf++] = fx_numeric("n", SC_FIELD_DOCVALUES, m->n, m->nn);
            int64_t dv = sc_agg_double_to_sortable(m->d);
            f[nf++] = fx_numeric("d", SC_FIELD_DOCVALUES, &dv, 1);
            if (fx_add(b, tg.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, s == 2, 7, &segs[s], &lives[s], live, &ss[s]) != 0)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++)
            docs[s * PER_SEG + d].live = live[d];
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return fx_agg_teardown(segs, lives, N_SEG, dir);
}

static sc_agg_spec *mk(sc_arena *a, sc_agg_kind kind, const char *name, const char *field,
                       sc_agg_vtype vt)
{
    sc_agg_spec *s = fx_agg_spec(a, kind, name, field, vt);
    s->keyed = true;
    return s;
}

#define add_sub fx_agg_add_sub

static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, size_t from, size_t to)
{
    return fx_agg_collect(a, root, ss + from, to - from, sc_query_match_all(a), 3, NULL);
}

/* The final result over all docs: one shard, or three shards' partials after an encode/decode
 * round trip, reduced partially (two) then finally. */
static sc_agg_result *run(sc_arena *a, const sc_agg_spec *root, bool sharded)
{
    if (!sharded)
        return fx_agg_final(a, root, collect(a, root, 0, N_SEG));
    static const size_t cut[4] = {0, 1, 3, 4};
    sc_agg_result *parts[3];
    for (int i = 0; i < 3; i++)
        parts[i] = fx_agg_round_trip(a, collect(a, root, cut[i], cut[i + 1]));
    return fx_agg_reduce3(a, root, parts);
}

static const sc_agg_result *top(const sc_agg_result *root, size_t i)
{
    assert_int_equal(root->n_buckets, 1);
    return root->buckets[0].subs[i];
}

static uint64_t card(const sc_agg_result *r)
{
    return r->hll ? sc_hll_estimate(r->hll) : 0;
}

/* |est - exact| within 1 (exact mode) or 6 standard errors of precision p (register mode). */
static void check_card(const sc_agg_result *r, uint64_t exact, uint32_t p, const char *what)
{
    double est = (double)card(r), tol = 1;
    if (r->hll && !sc_hll_is_linear(r->hll))
        tol = 6 * 1.04 / sqrt((double)(1u << p)) * (double)exact;
    if (fabs(est - (double)exact) > tol)
        fail_msg("%s: cardinality %.0f, exact %llu", what, est, (unsigned long long)exact);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Percentiles of td against the sorted values: exact up to 2000 values, else rank error within
 * 0.02; percentile ranks likewise. At the default compression (100) a centroid at the median
 * may hold up to 4·n·q(1-q)/100 = 1 % of the values, and interpolating inside it (after a
 * reduce merged digests of several shards) can miss by about that much: 0.0101 was seen with
 * seed 28150058870. */
static void check_digest(sc_tdigest *td, double *vals, size_t n, const char *what)
{
    if (n == 0) {
        assert_null(td);
        return;
    }
    assert_non_null(td);
    assert_int_equal(sc_tdigest_count(td), n);
    qsort(vals, n, sizeof *vals, cmp_d);
    static const double qs[] = {0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double got = sc_tdigest_quantile(td, qs[i]), want = exact_quantile(vals, n, qs[i]);
        double x = vals[(size_t)(qs[i] * (double)(n - 1))];
        if (n <= 2000) {
            if (fabs(got - want) > 1e-9 * (1 + fabs(want)) ||
                fabs(sc_tdigest_cdf(td, x) - exact_cdf(vals, n, x)) > 1e-12)
                fail_msg("%s: n=%zu q=%g got %.17g want %.17g", what, n, qs[i], got, want);
        } else if (fabs(exact_cdf(vals, n, got) - qs[i]) > 0.02 ||
                   fabs(sc_tdigest_cdf(td, x) - exact_cdf(vals, n, x)) > 0.02) {
            fail_msg("%s: n=%zu q=%g got %.6g want %.6g", what, n, qs[i], got, want);
        }
    }
}

/* Top-level cardinality of k (p 14: past the switch; p 18: linear), n, d with `missing`, an
 * unmapped field with and without `missing`; sharded equals single-shard exactly. */
static void test_cardinality(void **state)
{
    (void)state;
    uint64_t first[6] = {0};
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *c14 = mk(&a, SC_AGG_CARDINALITY, "c14", "k", SC_AGG_V_KEYWORD);
        sc_agg_spec *c18 = mk(&a, SC_AGG_CARDINALITY, "c18", "k", SC_AGG_V_KEYWORD);
        c18->hll_precision = 18;
        sc_agg_spec *cn = mk(&a, SC_AGG_CARDINALITY, "cn", "n", SC_AGG_V_LONG);
        sc_agg_spec *cm = mk(&a, SC_AGG_CARDINALITY, "cm", "n", SC_AGG_V_LONG);
        cm->has_missing = true;
        cm->missing_num = -1;
        sc_agg_spec *cu = mk(&a, SC_AGG_CARDINALITY, "cu", "nope", SC_AGG_V_UNMAPPED);
        sc_agg_spec *cum = mk(&a, SC_AGG_CARDINALITY, "cum", "nope", SC_AGG_V_KEYWORD);
        cum->has_missing = true;
        cum->missing_bytes = sc_slice_cstr("x");
        sc_agg_spec *all[] = {c14, c18, cn, cm, cu, cum};
        for (size_t i = 0; i < 6; i++)
            add_sub(&a, root, all[i]);
        sc_agg_result *r = run(&a, root, sharded);
        static bool seen_k[N_TERMS];
        memset(seen_k, 0, sizeof seen_k);
        uint64_t nk = 0, nn = 0, missing = 0, live = 0;
        int64_t *ns = malloc(sizeof(int64_t) * 3 * N_ALL);
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            if (!m->live)
                continue;
            live++;
            for (uint32_t i = 0; i < m->nk; i++)
                if (!seen_k[m->k[i]]) {
                    seen_k[m->k[i]] = true;
                    nk++;
                }
            for (uint32_t i = 0; i < m->nn; i++)
                ns[nn++] = m->n[i];
            missing += m->nn == 0;
        }
        qsort(ns, nn, sizeof *ns, cmp_i64);
        uint64_t n_distinct = 0;
        for (uint64_t i = 0; i < nn; i++)
            n_distinct += !i || ns[i] != ns[i - 1];
        free(ns);
        assert_true(nk > 3072); /* c14 is past the switch */
        check_card(top(r, 2), n_distinct, 14, "n");
        check_card(top(r, 3), n_distinct + (missing ? 1 : 0), 14, "n missing -1");
        check_card(top(r, 0), nk, 14, "k p14");
        assert_false(sc_hll_is_linear(top(r, 0)->hll));
        check_card(top(r, 1), nk, 18, "k p18");
        assert_true(sc_hll_is_linear(top(r, 1)->hll));
        assert_int_equal(card(top(r, 4)), 0);
        assert_null(top(r, 4)->hll);
        assert_int_equal(card(top(r, 5)), live ? 1 : 0);
        for (size_t i = 0; i < 6; i++) {
            if (sharded)
                assert_int_equal(card(top(r, i)), first[i]);
            first[i] = card(top(r, i));
        }
        sc_arena_fini(&a);
    }
}

/* median(|x - median(x)|) with numpy's linear median (vals are sorted in place). */
static double exact_mad(double *vals, size_t n)
{
    qsort(vals, n, sizeof *vals, cmp_d);
    double m = exact_quantile(vals, n, 0.5);
    for (size_t i = 0; i < n; i++)
        vals[i] = fabs(vals[i] - m);
    qsort(vals, n, sizeof *vals, cmp_d);
    return exact_quantile(vals, n, 0.5);
}

/* median_absolute_deviation of d and n at the default compression (1000: exact up to 20000
 * values, so here exactly numpy's), at the top level and under terms, one vs three shards. */
static void test_mad(void **state)
{
    (void)state;
    double *vals = malloc(sizeof(double) * 3 * N_ALL);
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        add_sub(&a, root, mk(&a, SC_AGG_MEDIAN_ABSOLUTE_DEVIATION, "md", "d", SC_AGG_V_DOUBLE));
        add_sub(&a, root, mk(&a, SC_AGG_MEDIAN_ABSOLUTE_DEVIATION, "mn", "n", SC_AGG_V_LONG));
        sc_agg_spec *tg = mk(&a, SC_AGG_TERMS, "tags", "tag", SC_AGG_V_KEYWORD);
        add_sub(&a, tg, mk(&a, SC_AGG_MEDIAN_ABSOLUTE_DEVIATION, "md", "d", SC_AGG_V_DOUBLE));
        tg->order = (sc_agg_order){.kind = SC_AGG_ORDER_METRIC, .desc = false, .sub = 0};
        add_sub(&a, root, tg);
        sc_agg_result *r = run(&a, root, sharded);
        size_t nd = 0, nn = 0;
        for (size_t g = 0; g < N_ALL; g++)
            if (docs[g].live)
                vals[nd++] = docs[g].d;
        double got;
        assert_int_equal(sc_tdigest_mad(top(r, 0)->td, &got), SC_OK);
        assert_true(got == exact_mad(vals, nd));
        for (size_t g = 0; g < N_ALL; g++)
            for (uint32_t i = 0; docs[g].live && i < docs[g].nn; i++)
                vals[nn++] = (double)docs[g].n[i];
        assert_int_equal(sc_tdigest_mad(top(r, 1)->td, &got), SC_OK);
        assert_true(got == exact_mad(vals, nn));
        const sc_agg_result *t = top(r, 2);
        assert_int_equal(t->n_buckets, 4);
        double prev = -INFINITY;
        for (size_t b = 0; b < t->n_buckets; b++) {
            uint32_t tag = (uint32_t)(t->buckets[b].bkey.ptr[1] - '0');
            size_t n = 0;
            for (size_t g = 0; g < N_ALL; g++)
                if (docs[g].live && docs[g].tag == tag)
                    vals[n++] = docs[g].d;
            assert_int_equal(sc_tdigest_mad(t->buckets[b].subs[0]->td, &got), SC_OK);
            assert_true(got == exact_mad(vals, n));
            assert_true(got >= prev); /* ordered by the MAD ascending */
            prev = got;
        }
        sc_arena_fini(&a);
    }
    free(vals);
}

/* percentiles of d (past 2000 values: digest) and of n (multi-valued), percentile_ranks of d,
 * and percentiles of an unmapped field with `missing`. */
static void test_percentiles(void **state)
{
    (void)state;
    double *dv = malloc(sizeof(double) * N_ALL), *nv = malloc(sizeof(double) * 3 * N_ALL);
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        add_sub(&a, root, mk(&a, SC_AGG_PERCENTILES, "pd", "d", SC_AGG_V_DOUBLE));
        add_sub(&a, root, mk(&a, SC_AGG_PERCENTILES, "pn", "n", SC_AGG_V_LONG));
        add_sub(&a, root, mk(&a, SC_AGG_PERCENTILE_RANKS, "rd", "d", SC_AGG_V_DOUBLE));
        sc_agg_spec *pm = mk(&a, SC_AGG_PERCENTILES, "pm", "nope", SC_AGG_V_DOUBLE);
        pm->has_missing = true;
        pm->missing_double = 7.5;
        pm->compression = 200;
        add_sub(&a, root, pm);
        add_sub(&a, root, mk(&a, SC_AGG_PERCENTILES, "pu", "nope", SC_AGG_V_UNMAPPED));
        sc_agg_result *r = run(&a, root, sharded);
        size_t nd = 0, nn = 0;
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            if (!m->live)
                continue;
            dv[nd++] = m->d;
            for (uint32_t i = 0; i < m->nn; i++)
                nv[nn++] = (double)m->n[i];
        }
        assert_true(nd > 2000);
        check_digest(top(r, 0)->td, dv, nd, "percentiles d");
        check_digest(top(r, 1)->td, nv, nn, "percentiles n");
        check_digest(top(r, 2)->td, dv, nd, "ranks d");
        sc_tdigest *m = top(r, 3)->td;
        assert_non_null(m);
        assert_int_equal(sc_tdigest_count(m), nd);
        assert_true(sc_tdigest_quantile(m, 0.5) == 7.5);
        assert_true(sc_tdigest_compression(m) == 200);
        assert_null(top(r, 4)->td);
        sc_arena_fini(&a);
    }
    free(dv);
    free(nv);
}

/* terms on tag ordered by a cardinality sub, with percentiles and cardinality subs per bucket
 * (under 2000 values each: exact). */
static void test_under_terms(void **state)
{
    (void)state;
    double *vals = malloc(sizeof(double) * N_ALL);
    static bool seen[4][N_TERMS];
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *tg = mk(&a, SC_AGG_TERMS, "tags", "tag", SC_AGG_V_KEYWORD);
        add_sub(&a, tg, mk(&a, SC_AGG_CARDINALITY, "ck", "k", SC_AGG_V_KEYWORD));
        add_sub(&a, tg, mk(&a, SC_AGG_PERCENTILES, "pd", "d", SC_AGG_V_DOUBLE));
        tg->order = (sc_agg_order){.kind = SC_AGG_ORDER_METRIC, .desc = true, .sub = 0};
        add_sub(&a, root, tg);
        sc_agg_result *r = run(&a, root, sharded);
        const sc_agg_result *t = top(r, 0);
        assert_int_equal(t->n_buckets, 4);
        memset(seen, 0, sizeof seen);
        uint64_t nk[4] = {0};
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            for (uint32_t i = 0; m->live && i < m->nk; i++)
                if (!seen[m->tag][m->k[i]]) {
                    seen[m->tag][m->k[i]] = true;
                    nk[m->tag]++;
                }
        }
        for (size_t b = 0; b < t->n_buckets; b++) {
            const sc_agg_bucket *bk = &t->buckets[b];
            uint32_t tag = (uint32_t)(bk->bkey.ptr[1] - '0');
            check_card(bk->subs[0], nk[tag], 14, "ck under tag");
            if (b)
                assert_true(card(t->buckets[b - 1].subs[0]) >= card(bk->subs[0]));
            size_t n = 0;
            for (size_t g = 0; g < N_ALL; g++)
                if (docs[g].live && docs[g].tag == tag)
                    vals[n++] = docs[g].d;
            assert_true(n <= 2000);
            check_digest(bk->subs[1]->td, vals, n, "pd under tag");
        }
        sc_arena_fini(&a);
    }
    free(vals);
}

/* A partial holding both sketch kinds: every truncation is rejected; flipped bytes decode to
 * SC_ECORRUPT or a result (never a crash); the intact bytes decode to an equal result. */
static void test_corrupt(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    add_sub(&a, root, mk(&a, SC_AGG_CARDINALITY, "c", "k", SC_AGG_V_KEYWORD));
    add_sub(&a, root, mk(&a, SC_AGG_PERCENTILES, "p", "d", SC_AGG_V_DOUBLE));
    sc_agg_result *r = collect(&a, root, 0, 1), *d;
    uint8_t *bytes;
    size_t len;
    assert_int_equal(sc_agg_encode(r, &bytes, &len), SC_OK);
    for (size_t cut = 0; cut < len; cut += 1 + cut / 64)
        assert_int_equal(sc_agg_decode(bytes, cut, &a, &d), SC_ECORRUPT);
    for (int i = 0; i < 2000; i++) {
        size_t at = rnd() % len;
        uint8_t was = bytes[at];
        bytes[at] ^= (uint8_t)(1u << (rnd() % 8));
        sc_status st = sc_agg_decode(bytes, len, &a, &d);
        assert_true(st == SC_OK || st == SC_ECORRUPT);
        bytes[at] = was;
    }
    assert_int_equal(sc_agg_decode(bytes, len, &a, &d), SC_OK);
    assert_true(sc_agg_result_equal(r, d));
    free(bytes);
    sc_arena_fini(&a);
}

/* The fuzz seeds with sketches (tests/fuzz/corpus/agg_partial/sketches_*, written by
 * tests/fuzz/seeds/make_sketch_seeds.c) decode, round-trip and hold the sketches they were made
 * with. The encoding numbers kinds by their place in sc_agg_kind, so a kind inserted before the
 * sketch kinds, or a format change, makes them stale: that fails here (and in the ctest
 * search_agg_sketch_seeds, which compares them byte for byte); `make fuzz-seeds` rewrites them. */
static void test_fuzz_seeds(void **state)
{
    (void)state;
    static const char *const names[] = {"sketches_empty", "sketches_small", "sketches_large"};
    static const uint64_t want[] = {0, 30, 400};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/agg_partial/%s", SCRY_SOURCE_DIR,
                 names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t buf[8192];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        assert_true(n < sizeof buf);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_result *r, *again;
        sc_status st = sc_agg_decode(buf, n, &a, &r);
        if (st != SC_OK || r->kind != SC_AGG_ROOT || r->n_buckets != 1 ||
            r->buckets[0].n_subs != 4 || r->buckets[0].subs[0]->kind != SC_AGG_CARDINALITY ||
            r->buckets[0].subs[1]->kind != SC_AGG_PERCENTILES ||
            r->buckets[0].subs[2]->kind != SC_AGG_PERCENTILE_RANKS) {
            sc_arena_fini(&a);
            fail_msg("stale fuzz seed %s (decode: %s): regenerate with `make fuzz-seeds`", names[i],
                     sc_status_str(st));
        }
        const sc_agg_result *c = r->buckets[0].subs[0];
        assert_int_equal(c->kind, SC_AGG_CARDINALITY);
        uint64_t est = card(c);
        assert_true(est + est / 5 >= want[i] && est <= want[i] + want[i] / 5);
        assert_int_equal(r->buckets[0].subs[3]->kind, SC_AGG_MEDIAN_ABSOLUTE_DEVIATION);
        assert_true(!want[i] || sc_tdigest_count(r->buckets[0].subs[3]->td) == want[i]);
        uint8_t *enc;
        size_t len;
        assert_int_equal(sc_agg_encode(r, &enc, &len), SC_OK);
        assert_int_equal(len, n);
        assert_memory_equal(enc, buf, n);
        assert_int_equal(sc_agg_decode(enc, len, &a, &again), SC_OK);
        assert_true(sc_agg_result_equal(r, again));
        free(enc);
        sc_arena_fini(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cardinality), cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_under_terms), cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_mad),         cmocka_unit_test(test_fuzz_seeds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
