/* Field-sorted top-k against a brute-force model (seed printed, SCRY_SEED reruns): three real
 * segments with a multi-valued numeric field (values missing on some docs, extremes), a
 * keyword field (0..2 terms), a double field (sortable encoding) for avg/sum, deletes on one
 * segment and random filters; random sort specs (1..3 of numeric/keyword/_doc/_score, asc or
 * desc, missing first/last, mode min/max/avg/sum), random k and search_after. The collector
 * with points (BKD per segment) and without must both equal the model, and points must
 * actually prune (segments skipped / competitive bitsets) on an ascending numeric sort. A
 * larger segment (60,000 docs) checks the competitive sets once the heap tightens (bitsets,
 * then sorted doc lists): a term's top k by a numeric field with many ties, missing values,
 * deletes, asc and desc, identical with and without the points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/builder.h"
#include "index/segment.h"
#include "search/sort.h"

#include "fixture.h"

#define N_SEG 3
#define PER_SEG 1500
#define N_ALL (N_SEG * PER_SEG)

typedef struct mdoc {
    int64_t n[3];
    uint32_t nn;
    char k[2][8];
    uint32_t nk;
    int64_t dbl[2];
    uint32_t nd;
    bool live;
} mdoc;

static mdoc docs[N_ALL];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static bool has_deletes[N_SEG];
static sc_buf bkd_bytes[N_SEG];
static sc_bkd bkds[N_SEG];
static char dir[64];

static int64_t enc(double x)
{
    int64_t bits;
    memcpy(&bits, &x, 8);
    return bits ^ ((bits >> 63) & INT64_MAX);
}

static double dec(int64_t v)
{
    int64_t bits = v ^ ((v >> 63) & INT64_MAX);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int setup(void **state)
{
    (void)state;
    if (fx_begin("sort", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        SC_VEC(int64_t) pv = {0};
        SC_VEC(uint32_t) pd = {0};
        for (uint32_t d = 0; d < PER_SEG; d++) {
            mdoc *m = &docs[s * PER_SEG + d];
            uint32_t r = below(10);
            m->nn = r < 2 ? 0 : r < 8 ? 1 : 2 + below(2);
            for (uint32_t i = 0; i < m->nn; i++) {
                uint32_t e = below(200);
                m->n[i] = (s == 0 && e == 0)   ? INT64_MIN
                          : (s == 0 && e == 1) ? INT64_MAX
                                               : (int64_t)s * 100000 + (int64_t)below(5000);
                if (sc_vec_push(&pv, m->n[i]) != SC_OK || sc_vec_push(&pd, d) != SC_OK)
                    return -1;
            }
            qsort(m->n, m->nn, sizeof(int64_t), cmp_i64);
            m->nk = below(3);
            for (uint32_t i = 0; i < m->nk; i++)
                snprintf(m->k[i], sizeof m->k[i], "t%02u", below(40));
            if (m->nk == 2) {
                if (strcmp(m->k[0], m->k[1]) > 0) {
                    char t[8];
                    memcpy(t, m->k[0], 8);
                    memcpy(m->k[0], m->k[1], 8);
                    memcpy(m->k[1], t, 8);
                } else if (strcmp(m->k[0], m->k[1]) == 0) {
                    m->nk = 1;
                }
            }
            m->nd = below(3);
            for (uint32_t i = 0; i < m->nd; i++)
                m->dbl[i] = enc(((double)below(2000) - 1000.0) / 8.0);
            qsort(m->dbl, m->nd, sizeof(int64_t), cmp_i64);
            sc_index_token kt[2] = {{sc_slice_cstr(m->k[0]), 0}, {sc_slice_cstr(m->k[1]), 1}};
            char id[16];
            snprintf(id, sizeof id, "%d-%u", s, d);
            sc_index_token idt = {sc_slice_cstr(id), 0};
            sc_index_field f[4];
            size_t nf = 0;
            f[nf++] = fx_keyword("_id", 0, &idt, 1);
            if (m->nn)
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, m->n, m->nn);
            if (m->nk)
                f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, kt, m->nk);
            if (m->nd)
                f[nf++] = fx_numeric("dbl", SC_FIELD_DOCVALUES, m->dbl, m->nd);
            if (fx_add(b, id, f, nf) != 0)
                return -1;
        }
        if (fx_write(b, dir, s, &segs[s]) != 0)
            return -1;
        if (sc_bkd_write(pv.ptr, pd.ptr, pv.len, PER_SEG, 32, &bkd_bytes[s]) != SC_OK ||
            sc_bkd_open(sc_slice_make(bkd_bytes[s].ptr, bkd_bytes[s].len), &bkds[s]) != SC_OK)
            return -1;
        sc_vec_free(&pv);
        sc_vec_free(&pd);
        has_deletes[s] = s == 1;
        bool live[PER_SEG];
        uint32_t del;
        if (fx_lives(&lives[s], PER_SEG, !has_deletes[s], 4, live, &del) != 0)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++)
            docs[s * PER_SEG + d].live = live[d];
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
        sc_vec_free(&bkd_bytes[s]);
    }
    return fx_end(dir);
}

/* ---- the model: its own key extraction and comparison ----------------------------------- */

typedef struct mkey {
    bool missing;
    double num; /* numeric (as double for avg/sum; exact compare through `i` otherwise) */
    int64_t i;
    const char *s;
} mkey;

static void model_keys(const sc_sort_spec *sp, size_t n, uint32_t g, mkey *out)
{
    const mdoc *m = &docs[g];
    for (size_t i = 0; i < n; i++) {
        const sc_sort_spec *s = &sp[i];
        mkey *k = &out[i];
        memset(k, 0, sizeof *k);
        sc_sort_mode mode = s->mode ? s->mode : s->desc ? SC_SORT_MODE_MAX : SC_SORT_MODE_MIN;
        if (s->kind == SC_SORT_BY_DOC) {
            k->i = g;
        } else if (s->kind == SC_SORT_BY_SCORE) {
            k->num = 1.0;
        } else if (s->kind == SC_SORT_BY_KEYWORD) {
            if (!m->nk)
                k->missing = true;
            else
                k->s = mode == SC_SORT_MODE_MAX ? m->k[m->nk - 1] : m->k[0];
        } else {
            bool is_dbl = sc_slice_eq_cstr(s->field, "dbl");
            const int64_t *v = is_dbl ? m->dbl : m->n;
            uint32_t c = is_dbl ? m->nd : m->nn;
            if (!c) {
                k->missing = true;
                continue;
            }
            if (mode == SC_SORT_MODE_MIN)
                k->i = v[0];
            else if (mode == SC_SORT_MODE_MAX)
                k->i = v[c - 1];
            else {
                double sum = 0;
                for (uint32_t j = 0; j < c; j++)
                    sum += is_dbl ? dec(v[j]) : (double)v[j];
                k->num = mode == SC_SORT_MODE_AVG ? sum / c : sum;
            }
        }
    }
}

static const sc_sort_spec *g_sp;
static size_t g_n;

static int model_cmp_keys(const mkey *a, const mkey *b)
{
    for (size_t i = 0; i < g_n; i++) {
        const sc_sort_spec *s = &g_sp[i];
        if (a[i].missing != b[i].missing)
            return a[i].missing == s->missing_first ? -1 : 1;
        if (a[i].missing)
            continue;
        sc_sort_mode mode = s->mode ? s->mode : s->desc ? SC_SORT_MODE_MAX : SC_SORT_MODE_MIN;
        int c;
        if (s->kind == SC_SORT_BY_KEYWORD)
            c = strcmp(a[i].s, b[i].s);
        else if (s->kind == SC_SORT_BY_SCORE ||
                 (s->kind == SC_SORT_BY_NUMERIC &&
                  (mode == SC_SORT_MODE_AVG || mode == SC_SORT_MODE_SUM)))
            c = (a[i].num > b[i].num) - (a[i].num < b[i].num);
        else
            c = (a[i].i > b[i].i) - (a[i].i < b[i].i);
        if (c)
            return s->desc ? -c : c;
    }
    return 0;
}

static mkey *g_keys;

static int model_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int c = model_cmp_keys(g_keys + (size_t)a * g_n, g_keys + (size_t)b * g_n);
    return c ? c : (a > b) - (a < b);
}

static void to_value(const sc_sort_spec *s, const mkey *k, sc_sort_key *v)
{
    memset(v, 0, sizeof *v);
    v->missing = k->missing;
    v->i = k->i;
    v->d = k->num;
    if (s->kind == SC_SORT_BY_KEYWORD && k->s)
        v->s = sc_slice_cstr(k->s);
}

static void random_spec(sc_sort_spec *s)
{
    memset(s, 0, sizeof *s);
    uint32_t r = below(6);
    s->desc = below(2);
    s->missing_first = below(2);
    if (r <= 1) {
        s->kind = SC_SORT_BY_NUMERIC;
        s->field = sc_slice_cstr("n");
        s->mode = (sc_sort_mode)below(5);
    } else if (r == 2) {
        s->kind = SC_SORT_BY_NUMERIC;
        s->field = sc_slice_cstr("dbl");
        s->is_double = true;
        s->mode = (sc_sort_mode)below(5);
    } else if (r == 3) {
        s->kind = SC_SORT_BY_KEYWORD;
        s->field = sc_slice_cstr("k");
        s->mode = (sc_sort_mode)(below(2) ? SC_SORT_MODE_AUTO : SC_SORT_MODE_MIN + below(2));
    } else if (r == 4) {
        s->kind = SC_SORT_BY_DOC;
    } else {
        s->kind = SC_SORT_BY_SCORE;
    }
}

/* Runs the collector over every segment (filter: docs with bit set in `filter` or all). */
static size_t run(const sc_sort_spec *sp, size_t n, size_t k, const sc_sort_key *after,
                  const sc_bitset *filter, bool with_points, uint32_t *out, sc_sort_stats *st)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_sort_collector *c;
    assert_int_equal(sc_sort_collector_new(&a, sp, n, k, after, &c), SC_OK);
    for (int s = 0; s < N_SEG; s++) {
        sc_doc_iter *it =
            filter ? sc_iter_bitset(&a, &filter[s], PER_SEG, 1.0f) : sc_iter_all(&a, PER_SEG, 1.0f);
        if (has_deletes[s])
            it = sc_iter_live_docs(&a, it, &lives[s]);
        const sc_bkd *pts =
            with_points && sp[0].kind == SC_SORT_BY_NUMERIC && sc_slice_eq_cstr(sp[0].field, "n")
                ? &bkds[s]
                : NULL;
        assert_int_equal(
            sc_sort_collector_collect(c, segs[s], (uint32_t)s, (uint64_t)s * PER_SEG, it, pts),
            SC_OK);
    }
    sc_sorted_hit *hits;
    size_t m = sc_sort_collector_hits(c, &hits);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(hits[i].global_doc, hits[i].segment * PER_SEG + hits[i].doc);
        out[i] = (uint32_t)hits[i].global_doc;
    }
    if (st)
        *st = *sc_sort_collector_stats(c);
    sc_arena_fini(&a);
    return m;
}

static void test_random_sorts_vs_model(void **state)
{
    (void)state;
    static uint32_t all[N_ALL], got[N_ALL];
    g_keys = malloc(sizeof(mkey) * N_ALL * 3);
    sc_bitset filter[N_SEG];
    for (int s = 0; s < N_SEG; s++)
        assert_int_equal(sc_bitset_init(&filter[s], PER_SEG), SC_OK);
    for (int q = 0; q < 200; q++) {
        sc_sort_spec sp[3];
        size_t n = 1 + below(3);
        for (size_t i = 0; i < n; i++)
            random_spec(&sp[i]);
        g_sp = sp;
        g_n = n;
        bool use_filter = below(2);
        for (int s = 0; s < N_SEG; s++) {
            sc_bitset_clear_all(&filter[s]);
            for (uint32_t d = 0; d < PER_SEG; d++)
                if (below(3))
                    sc_bitset_set(&filter[s], d);
        }
        size_t m = 0;
        for (uint32_t g = 0; g < N_ALL; g++) {
            if (!docs[g].live || (use_filter && !sc_bitset_test(&filter[g / PER_SEG], g % PER_SEG)))
                continue;
            model_keys(sp, n, g, g_keys + (size_t)g * n);
            all[m++] = g;
        }
        qsort(all, m, sizeof(uint32_t), model_cmp);
        size_t k = below(4) == 0 ? 1 + below(600) : 1 + below(30);
        /* search_after: the values of a random model hit */
        sc_sort_key after[3];
        bool use_after = below(4) == 0 && m > 0;
        size_t start = 0;
        if (use_after) {
            size_t pos = below((uint32_t)m);
            const mkey *ak = g_keys + (size_t)all[pos] * n;
            for (size_t i = 0; i < n; i++)
                to_value(&sp[i], &ak[i], &after[i]);
            while (start < m && model_cmp_keys(g_keys + (size_t)all[start] * n, ak) <= 0)
                start++;
        }
        size_t want = m - start < k ? m - start : k;
        for (int wp = 0; wp < 2; wp++) {
            size_t got_n = run(sp, n, k, use_after ? after : NULL, use_filter ? filter : NULL,
                               wp == 1, got, NULL);
            if (got_n != want)
                fail_msg("query %d: %zu hits, model %zu (points %d)", q, got_n, want, wp);
            for (size_t i = 0; i < want; i++)
                if (got[i] != all[start + i])
                    fail_msg("query %d (points %d): hit %zu is doc %u, model %u", q, wp, i, got[i],
                             all[start + i]);
        }
    }
    for (int s = 0; s < N_SEG; s++)
        sc_bitset_fini(&filter[s]);
    free(g_keys);
}

static void test_points_prune(void **state)
{
    (void)state;
    static uint32_t a[N_ALL], b[N_ALL];
    sc_sort_spec sp = {.kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("n")};
    sc_sort_stats st;
    size_t na = run(&sp, 1, 10, NULL, NULL, false, a, NULL);
    size_t nb = run(&sp, 1, 10, NULL, NULL, true, b, &st);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na * sizeof(uint32_t));
    /* segments 1 and 2 hold only larger values: skipped whole */
    assert_int_equal(st.segments_skipped, 2);
    assert_true(st.collected < PER_SEG); /* competitive bitsets, or all-INT64_MIN top 10 */
    /* desc, k 10: segment 2 holds the largest values; competitive bitsets inside it */
    sp.desc = true;
    na = run(&sp, 1, 10, NULL, NULL, false, a, NULL);
    nb = run(&sp, 1, 10, NULL, NULL, true, b, &st);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na * sizeof(uint32_t));
    assert_true(st.competitive_builds >= 1);
    assert_true(st.collected < N_ALL - PER_SEG / 2);
    fprintf(stderr, "desc: collected %llu, builds %u, skipped segs %u\n",
            (unsigned long long)st.collected, st.competitive_builds, st.segments_skipped);
}

/* The shard-level driver over the searcher: match_all or a keyword term query, random sorts,
 * from/size, track_total_hits true/false/N, deletes; hits and totals equal the model. */
static void test_search_sorted(void **state)
{
    (void)state;
    static uint32_t all[N_ALL];
    g_keys = malloc(sizeof(mkey) * N_ALL * 3);
    sc_searcher_segment ss[N_SEG];
    for (int s = 0; s < N_SEG; s++) {
        ss[s].seg = segs[s];
        ss[s].live = has_deletes[s] ? &lives[s] : NULL;
        ss[s].n_deleted = has_deletes[s] ? (uint32_t)(PER_SEG - sc_bitset_count(&lives[s])) : 0;
    }
    sc_searcher searcher = {ss, N_SEG};
    uint64_t pruned = 0;
    for (int q = 0; q < 100; q++) {
        sc_sort_spec sp[3];
        size_t n = 1 + below(3);
        for (size_t i = 0; i < n; i++)
            random_spec(&sp[i]);
        if (below(2)) { /* often a prunable first key */
            memset(&sp[0], 0, sizeof sp[0]);
            sp[0].kind = SC_SORT_BY_NUMERIC;
            sp[0].field = sc_slice_cstr("n");
            sp[0].desc = below(2);
        }
        g_sp = sp;
        g_n = n;
        char term[8];
        snprintf(term, sizeof term, "t%02u", below(40));
        bool use_term = below(2);
        size_t m = 0;
        for (uint32_t g = 0; g < N_ALL; g++) {
            if (!docs[g].live)
                continue;
            if (use_term) {
                bool has = false;
                for (uint32_t i = 0; i < docs[g].nk; i++)
                    has |= strcmp(docs[g].k[i], term) == 0;
                if (!has)
                    continue;
            }
            model_keys(sp, n, g, g_keys + (size_t)g * n);
            all[m++] = g;
        }
        qsort(all, m, sizeof(uint32_t), model_cmp);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *query = use_term ? sc_query_term(&a, sc_slice_cstr("k"), sc_slice_cstr(term))
                                   : sc_query_match_all(&a);
        sc_search_options o;
        sc_search_options_init(&o);
        o.from = below(6);
        o.size = 1 + below(20);
        uint32_t t = below(3);
        o.track_total_hits = t == 0   ? SC_TRACK_TOTAL_HITS_ALL
                             : t == 1 ? SC_TRACK_TOTAL_HITS_NONE
                                      : 10;
        sc_search_result res;
        sc_sorted_result out;
        assert_int_equal(sc_search_sorted(&searcher, query, &o, sp, n, NULL, &a, &res, &out),
                         SC_OK);
        pruned += out.stats.segments_skipped + out.stats.competitive_builds;
        size_t want = m > o.from ? m - o.from : 0;
        want = want < o.size ? want : o.size;
        assert_int_equal(out.n_hits, want);
        for (size_t i = 0; i < want; i++)
            if (out.hits[i].global_doc != all[o.from + i])
                fail_msg("query %d: hit %zu is %llu, model %u", q, i,
                         (unsigned long long)out.hits[i].global_doc, all[o.from + i]);
        if (t == 0) {
            assert_true(out.total_tracked);
            assert_int_equal(out.total, m);
            assert_false(out.total_gte);
        } else if (t == 2) {
            assert_int_equal(out.total, m > 10 ? 10 : m);
            assert_true(out.total_gte == (m > 10));
        } else {
            assert_false(out.total_tracked);
        }
        sc_arena_fini(&a);
    }
    free(g_keys);
    const sc_field_info *fi = sc_segment_field(segs[0], sc_slice_cstr("n"));
    bool has_points = fi && (fi->flags & SC_FIELD_POINTS);
    fprintf(stderr, "segment points: %s, prunings: %llu\n", has_points ? "yes" : "no",
            (unsigned long long)pruned);
    if (has_points)
        assert_true(pruned > 0);
}

static void test_bad_args(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_sort_collector *c;
    sc_sort_spec sp = {
        .kind = SC_SORT_BY_KEYWORD, .field = sc_slice_cstr("k"), .mode = SC_SORT_MODE_AVG};
    assert_int_equal(sc_sort_collector_new(&a, &sp, 1, 10, NULL, &c), SC_EINVAL);
    sp.mode = SC_SORT_MODE_AUTO;
    assert_int_equal(sc_sort_collector_new(&a, &sp, 0, 10, NULL, &c), SC_EINVAL);
    assert_int_equal(sc_sort_collector_new(&a, &sp, 1, 0, NULL, &c), SC_EINVAL);
    sp.field = sc_slice_cstr("no_such_field"); /* every doc missing: doc order */
    assert_int_equal(sc_sort_collector_new(&a, &sp, 1, 3, NULL, &c), SC_OK);
    assert_int_equal(sc_sort_collector_collect(c, segs[0], 0, 0, sc_iter_all(&a, PER_SEG, 1), NULL),
                     SC_OK);
    sc_sorted_hit *h;
    assert_int_equal(sc_sort_collector_hits(c, &h), 3);
    assert_int_equal(h[0].doc, 0);
    assert_int_equal(h[2].doc, 2);
    assert_true(h[0].values[0].missing);
    sc_arena_fini(&a);
}

static void test_competitive_lists(void **state)
{
    (void)state;
    enum {
        N = 60000
    };
    static int64_t val[N];
    static bool has[N], live[N];
    static uint32_t tagv[N];
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    uint32_t range = 50 + below(5000); /* few distinct values: many ties */
    for (uint32_t d = 0; d < N; d++) {
        has[d] = below(20) != 0;
        val[d] = (int64_t)below(range) - (int64_t)(range / 2);
        tagv[d] = below(4);
        fx_tagged k;
        sc_index_field f[3];
        size_t nf = fx_tagged_fields(&k, 9, d, tagv[d], f);
        if (has[d])
            f[nf++] = fx_numeric("v", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &val[d], 1);
        assert_int_equal(fx_add(b, k.id, f, nf), 0);
    }
    sc_segment *seg;
    sc_bitset lv;
    sc_searcher_segment view;
    assert_int_equal(fx_segment_finish(b, dir, 9, false, 7, &seg, &lv, live, &view), 0);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("v"));
    assert_true(fi && (fi->flags & SC_FIELD_POINTS));
    uint32_t lists = 0;
    for (int q = 0; q < 24; q++) {
        sc_sort_spec sp = {.kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("v"), .desc = q & 1};
        size_t k = 1 + below(20);
        char tag[8];
        snprintf(tag, sizeof tag, "t%u", (unsigned)(q % 4));
        uint32_t got[2][20];
        size_t n_got[2];
        for (int wp = 0; wp < 2; wp++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_query *tq = sc_query_term(&a, sc_slice_cstr("tag"), sc_slice_cstr(tag));
            assert_non_null(tq);
            sc_searcher sr = {&view, 1};
            sc_search_options o;
            sc_search_options_init(&o);
            o.size = k;
            /* no total: the points prune; an exact total: every match collected, no pruning */
            o.track_total_hits = wp ? SC_TRACK_TOTAL_HITS_NONE : SC_TRACK_TOTAL_HITS_ALL;
            sc_search_result res;
            sc_sorted_result out;
            assert_int_equal(sc_search_sorted(&sr, tq, &o, &sp, 1, NULL, &a, &res, &out), SC_OK);
            n_got[wp] = out.n_hits;
            for (size_t i = 0; i < out.n_hits; i++)
                got[wp][i] = out.hits[i].doc;
            if (wp)
                lists += out.stats.competitive_lists;
            else
                assert_int_equal(out.stats.competitive_builds, 0);
            sc_arena_fini(&a);
        }
        /* the model: live docs of the tag, by value (missing last), ties by doc */
        size_t want_n = 0;
        uint32_t want[20];
        for (uint32_t d = 0; d < N; d++) {
            if (!live[d] || tagv[d] != (uint32_t)(q % 4))
                continue;
            /* insertion into the sorted top k */
            size_t pos = want_n;
            while (pos > 0) {
                uint32_t o = want[pos - 1];
                bool better = has[d] && (!has[o] || (sp.desc ? val[d] > val[o] : val[d] < val[o]));
                if (!better)
                    break;
                pos--;
            }
            if (pos >= k)
                continue;
            size_t end = want_n < k ? want_n : k - 1;
            for (size_t i = end; i > pos; i--)
                want[i] = want[i - 1];
            want[pos] = d;
            if (want_n < k)
                want_n++;
        }
        assert_int_equal(n_got[0], want_n);
        assert_int_equal(n_got[1], want_n);
        for (size_t i = 0; i < want_n; i++) {
            if (got[0][i] != want[i] || got[1][i] != want[i])
                fail_msg("query %d (%s, k %zu): hit %zu: dv %u, points %u, model %u", q,
                         sp.desc ? "desc" : "asc", k, i, got[0][i], got[1][i], want[i]);
        }
    }
    fprintf(stderr, "competitive lists built: %u\n", lists);
    assert_true(lists > 0);
    sc_bitset_fini(&lv);
    sc_segment_unref(seg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sorts_vs_model), cmocka_unit_test(test_points_prune),
        cmocka_unit_test(test_search_sorted),         cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_competitive_lists),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
