/* Aggregations (search/agg.h) against brute force over random documents: four segments (with
 * deletes) split into three "shards"; multi-valued and missing values; terms on keyword and
 * numeric fields with metric subs, the metrics, histogram, date_histogram, range, filters,
 * missing, global, nested buckets; the reduce of the shards' partials equals one collection
 * over all segments; the binary encoding round-trips and rejects corrupt input; terms error
 * bounds hold. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/bkd2.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/automaton.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

#define N_SEG 4
#define PER_SEG 1500
#define N_ALL (N_SEG * PER_SEG)
#define N_TERMS 30
#define T0 INT64_C(1577836800000) /* 2020-01-01 */

typedef struct mdoc {
    uint32_t k[2], nk; /* keyword "k": term ids, ascending, distinct */
    int64_t n[3];
    uint32_t nn;  /* long "n" (0..3 values, ascending, repeats allowed) */
    double d;     /* double "d": every doc */
    int64_t t;    /* date "t": every doc */
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
    if (fx_begin("agg", dir, sizeof dir) != 0)
        return -1;
    for (int i = 0; i < N_TERMS; i++)
        snprintf(term_names[i], sizeof term_names[i], "w%02d", i);
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            mdoc *m = &docs[s * PER_SEG + d];
            /* skewed term frequencies so that terms error bounds matter */
            m->nk = below(3);
            for (uint32_t i = 0; i < m->nk; i++)
                m->k[i] = below(1 + below(N_TERMS));
            fx_sort2_distinct(m->k, &m->nk);
            m->nn = below(4);
            for (uint32_t i = 0; i < m->nn; i++)
                m->n[i] = (int64_t)below(101) - 50;
            fx_sort_i64(m->n, m->nn);
            m->d = ((double)below(20001) - 10000) / 16.0;
            m->t = T0 + (int64_t)below(400) * 86400000 + (int64_t)below(86400000);
            m->tag = below(4);
            fx_tagged tg;
            sc_index_field f[7];
            size_t nf = fx_tagged_fields(&tg, s, d, m->tag, f);
            f[1].flags |= SC_FIELD_DOCVALUES;
            sc_index_token kt[2];
            for (uint32_t i = 0; i < m->nk; i++)
                kt[i] = (sc_index_token){sc_slice_cstr(term_names[m->k[i]]), 0};
            if (m->nk)
                f[nf++] = fx_keyword("k", SC_FIELD_DOCVALUES, kt, m->nk);
            if (m->nn)
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, m->n, m->nn);
            int64_t dv = sc_agg_double_to_sortable(m->d);
            f[nf++] = fx_numeric("d", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &dv, 1);
            f[nf++] = fx_numeric("t", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m->t, 1);
            if (fx_add(b, tg.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, s == 1, 6, &segs[s], &lives[s], live, &ss[s]) != 0)
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

/* ---- spec building ---- */

static sc_agg_spec *mk(sc_arena *a, sc_agg_kind kind, const char *name, const char *field,
                       sc_agg_vtype vt)
{
    sc_agg_spec *s = fx_agg_spec(a, kind, name, field, vt);
    s->sigma = 2;
    if (kind == SC_AGG_HISTOGRAM || kind == SC_AGG_DATE_HISTOGRAM) {
        s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        s->min_doc_count = 0;
    }
    return s;
}

#define add_sub fx_agg_add_sub

/* A query: match_all (qk 0) or tag == t<qk-1>. */
static sc_query *query(sc_arena *a, int qk)
{
    if (qk == 0)
        return sc_query_match_all(a);
    char t[8];
    snprintf(t, sizeof t, "t%d", qk - 1);
    return sc_query_term(a, sc_slice_cstr("tag"), sc_slice_cstr(t));
}

static bool doc_matches(const mdoc *m, int qk)
{
    return m->live && (qk == 0 || m->tag == (uint32_t)(qk - 1));
}

/* Collects root over segments [from, to) as one shard of n_shards. */
static sc_agg_result *collect(sc_arena *a, const sc_agg_spec *root, int qk, size_t from, size_t to,
                              uint32_t n_shards)
{
    uint64_t total;
    sc_agg_result *r =
        fx_agg_collect(a, root, ss + from, to - from, query(a, qk), n_shards, &total);
    uint64_t expect = 0;
    for (size_t g = from * PER_SEG; g < to * PER_SEG; g++)
        expect += doc_matches(&docs[g], qk);
    assert_int_equal(total, expect);
    return r;
}

/* The final result over all docs: one shard, or the reduce of three shards' partials (after an
 * encode/decode round trip, as they would cross nodes). */
static sc_agg_result *run(sc_arena *a, const sc_agg_spec *root, int qk, bool sharded)
{
    if (!sharded)
        return fx_agg_final(a, root, collect(a, root, qk, 0, N_SEG, 1));
    static const size_t cut[4] = {0, 2, 3, 4};
    sc_agg_result *parts[3];
    for (int i = 0; i < 3; i++)
        parts[i] = fx_agg_round_trip(a, collect(a, root, qk, cut[i], cut[i + 1], 3));
    return fx_agg_reduce3(a, root, parts);
}

static const sc_agg_result *top(const sc_agg_result *root, size_t i)
{
    assert_int_equal(root->n_buckets, 1);
    assert_true(i < root->buckets[0].n_subs);
    return root->buckets[0].subs[i];
}

static void near(double x, double y)
{
    if (isnan(x) || isnan(y)) {
        assert_true(isnan(x) && isnan(y));
        return;
    }
    double tol = 1e-9 * (fabs(x) + fabs(y) + 1);
    if (fabs(x - y) > tol)
        fail_msg("%.17g != %.17g", x, y);
}

/* ---- brute-force models ---- */

/* The id of term "wNN" (keys are not NUL-terminated). */
static int term_id(sc_slice k)
{
    assert_int_equal(k.len, 3);
    return (k.ptr[1] - '0') * 10 + (k.ptr[2] - '0');
}

typedef struct mstats {
    uint64_t count;
    double sum, min, max, sq;
} mstats;

static void mstats_add(mstats *m, double v)
{
    if (!m->count || v < m->min)
        m->min = v;
    if (!m->count || v > m->max)
        m->max = v;
    m->count++;
    m->sum += v;
    m->sq += v * v;
}

static void check_stats(const sc_agg_result *r, const mstats *m)
{
    assert_int_equal(r->count, m->count);
    near(r->sum, m->sum);
    if (r->kind == SC_AGG_EXTENDED_STATS)
        near(r->sum_sq, m->sq);
    /* min and max only where they show (avg, sum and value_count results do not keep them) */
    if (m->count && r->kind != SC_AGG_AVG && r->kind != SC_AGG_SUM &&
        r->kind != SC_AGG_VALUE_COUNT) {
        near(r->min, m->min);
        near(r->max, m->max);
    }
}

/* terms on "k" (size 40: every term) with avg(n) and stats(d) subs, and terms on "n". */
static void test_terms_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++)
        for (int qk = 0; qk < 3; qk++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
            tk->size = 40;
            add_sub(&a, tk, mk(&a, SC_AGG_AVG, "avg_n", "n", SC_AGG_V_LONG));
            add_sub(&a, tk, mk(&a, SC_AGG_STATS, "st_d", "d", SC_AGG_V_DOUBLE));
            add_sub(&a, root, tk);
            sc_agg_spec *tn = mk(&a, SC_AGG_TERMS, "tn", "n", SC_AGG_V_LONG);
            tn->size = 200;
            tn->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
            add_sub(&a, root, tn);
            /* top level without subs: the ordinal-count fast path, with `missing` */
            sc_agg_spec *tf = mk(&a, SC_AGG_TERMS, "tf", "k", SC_AGG_V_KEYWORD);
            tf->size = 40;
            tf->has_missing = true;
            tf->missing_bytes = sc_slice_cstr("w15");
            tf->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = false};
            add_sub(&a, root, tf);
            sc_agg_result *r = run(&a, root, qk, sharded);
            uint64_t cnt[N_TERMS] = {0}, ncnt[101] = {0};
            mstats avg[N_TERMS] = {{0}}, st[N_TERMS] = {{0}};
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *m = &docs[g];
                if (!doc_matches(m, qk))
                    continue;
                for (uint32_t i = 0; i < m->nk; i++) {
                    cnt[m->k[i]]++;
                    for (uint32_t j = 0; j < m->nn; j++)
                        mstats_add(&avg[m->k[i]], (double)m->n[j]);
                    mstats_add(&st[m->k[i]], m->d);
                }
                for (uint32_t j = 0; j < m->nn; j++)
                    if (!j || m->n[j] != m->n[j - 1])
                        ncnt[m->n[j] + 50]++;
            }
            const sc_agg_result *x = top(r, 0);
            size_t expect_n = 0;
            for (int t = 0; t < N_TERMS; t++)
                expect_n += cnt[t] > 0;
            assert_int_equal(x->n_buckets, expect_n);
            assert_int_equal(x->doc_count_error, 0);
            assert_int_equal(x->sum_other, 0);
            for (size_t i = 0; i < x->n_buckets; i++) {
                const sc_agg_bucket *b = &x->buckets[i];
                int t = term_id(b->bkey);
                assert_int_equal(b->doc_count, cnt[t]);
                if (i) {
                    const sc_agg_bucket *p = &x->buckets[i - 1];
                    assert_true(
                        p->doc_count > b->doc_count ||
                        (p->doc_count == b->doc_count && sc_slice_cmp(p->bkey, b->bkey) < 0));
                }
                check_stats(b->subs[0], &avg[t]);
                check_stats(b->subs[1], &st[t]);
            }
            const sc_agg_result *y = top(r, 1);
            size_t k = 0;
            for (int v = 0; v < 101; v++) {
                if (!ncnt[v])
                    continue;
                assert_true(k < y->n_buckets);
                assert_int_equal(y->buckets[k].key, v - 50);
                assert_int_equal(y->buckets[k].doc_count, ncnt[v]);
                k++;
            }
            assert_int_equal(k, y->n_buckets);
            uint64_t nokey = 0;
            for (size_t g = 0; g < N_ALL; g++)
                nokey += doc_matches(&docs[g], qk) && docs[g].nk == 0;
            const sc_agg_result *z = top(r, 2);
            uint64_t seen = 0;
            for (size_t i = 0; i < z->n_buckets; i++) {
                int t = term_id(z->buckets[i].bkey);
                assert_int_equal(z->buckets[i].doc_count, cnt[t] + (t == 15 ? nokey : 0));
                if (i)
                    assert_true(z->buckets[i - 1].doc_count <= z->buckets[i].doc_count);
                seen += z->buckets[i].doc_count;
            }
            uint64_t all = nokey;
            for (int t = 0; t < N_TERMS; t++)
                all += cnt[t];
            assert_int_equal(seen, all);
            sc_arena_fini(&a);
        }
}

/* terms with a small size over three shards: counts never overstate, the error bound holds,
 * and returned counts plus sum_other equal all values counted. */
static void test_terms_error_bounds(void **state)
{
    (void)state;
    for (uint32_t size = 1; size <= 8; size += 3) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
        tk->size = size;
        tk->shard_size = size; /* force errors */
        add_sub(&a, root, tk);
        sc_agg_result *r = run(&a, root, 0, true);
        uint64_t cnt[N_TERMS] = {0}, total = 0;
        for (size_t g = 0; g < N_ALL; g++)
            for (uint32_t i = 0; docs[g].live && i < docs[g].nk; i++, total++)
                cnt[docs[g].k[i]]++;
        const sc_agg_result *x = top(r, 0);
        assert_int_equal(x->n_buckets, size);
        uint64_t sum = x->sum_other;
        for (size_t i = 0; i < x->n_buckets; i++) {
            const sc_agg_bucket *b = &x->buckets[i];
            uint64_t truth = cnt[term_id(b->bkey)];
            assert_true(b->doc_count <= truth);
            assert_true(x->doc_count_error >= 0);
            assert_true(truth - b->doc_count <= (uint64_t)x->doc_count_error);
            assert_true(b->doc_count_error >= 0 &&
                        truth - b->doc_count <= (uint64_t)b->doc_count_error);
            sum += b->doc_count;
        }
        assert_int_equal(sum, total);
        sc_arena_fini(&a);
    }
}

/* every metric kind on "n" (multi-valued, missing) and "d", under terms and at the top. */
static void test_metrics_vs_model(void **state)
{
    (void)state;
    static const sc_agg_kind kinds[] = {SC_AGG_MIN,        SC_AGG_MAX,   SC_AGG_SUM,
                                        SC_AGG_AVG,        SC_AGG_STATS, SC_AGG_EXTENDED_STATS,
                                        SC_AGG_VALUE_COUNT};
    for (int sharded = 0; sharded < 2; sharded++)
        for (int qk = 0; qk < 5; qk++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            for (size_t i = 0; i < 7; i++) {
                add_sub(&a, root, mk(&a, kinds[i], "mn", "n", SC_AGG_V_LONG));
                add_sub(&a, root, mk(&a, kinds[i], "md", "d", SC_AGG_V_DOUBLE));
            }
            sc_agg_spec *miss = mk(&a, SC_AGG_SUM, "sum_missing", "n", SC_AGG_V_LONG);
            miss->has_missing = true;
            miss->missing_double = 1000;
            add_sub(&a, root, miss);
            add_sub(&a, root, mk(&a, SC_AGG_MAX, "unmapped", "nope", SC_AGG_V_UNMAPPED));
            sc_agg_result *r = run(&a, root, qk, sharded);
            mstats n = {0}, d = {0}, nm = {0};
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *m = &docs[g];
                if (!doc_matches(m, qk))
                    continue;
                for (uint32_t j = 0; j < m->nn; j++)
                    mstats_add(&n, (double)m->n[j]);
                if (!m->nn)
                    mstats_add(&nm, 1000);
                mstats_add(&d, m->d);
            }
            for (size_t i = 0; i < 7; i++) {
                check_stats(top(r, 2 * i), &n);
                check_stats(top(r, 2 * i + 1), &d);
            }
            assert_int_equal(top(r, 14)->count, n.count + nm.count);
            near(top(r, 14)->sum, n.sum + nm.sum);
            assert_int_equal(top(r, 15)->count, 0);
            sc_arena_fini(&a);
        }
}

/* histogram on "n" (interval 7, offset 3, gaps filled, extended bounds) and "d"
 * (interval 12.5, min_doc_count 2), with a value_count sub. */
static void test_histogram_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++)
        for (int qk = 0; qk < 5; qk += 2) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *hn = mk(&a, SC_AGG_HISTOGRAM, "hn", "n", SC_AGG_V_LONG);
            hn->interval = 7;
            hn->offset = 3;
            hn->has_ext_bounds = true;
            hn->ext_min = -100;
            hn->ext_max = 80;
            add_sub(&a, hn, mk(&a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
            add_sub(&a, root, hn);
            sc_agg_spec *hd = mk(&a, SC_AGG_HISTOGRAM, "hd", "d", SC_AGG_V_DOUBLE);
            hd->interval = 12.5;
            hd->min_doc_count = 2;
            add_sub(&a, root, hd);
            sc_agg_result *r = run(&a, root, qk, sharded);
            /* n: keys floor((v - 3) / 7) * 7 + 3 for v in [-50, 50]; extended to [-100, 80] */
            int64_t lo = (int64_t)floor((-100.0 - 3) / 7), hi = (int64_t)floor((80.0 - 3) / 7);
            uint64_t cnt[64] = {0}, vc[64] = {0};
            uint64_t dc[2000] = {0};
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *m = &docs[g];
                if (!doc_matches(m, qk))
                    continue;
                int64_t prev = INT64_MIN;
                for (uint32_t j = 0; j < m->nn; j++) {
                    int64_t idx = (int64_t)floor(((double)m->n[j] - 3) / 7) - lo;
                    if (idx != prev) {
                        cnt[idx]++;
                        for (uint32_t q = 0; q < m->nn; q++)
                            vc[idx] += 1;
                    }
                    prev = idx;
                }
                dc[(int64_t)floor(m->d / 12.5) + 1000]++;
            }
            const sc_agg_result *x = top(r, 0);
            assert_int_equal(x->n_buckets, hi - lo + 1);
            for (size_t i = 0; i < x->n_buckets; i++) {
                near(x->buckets[i].dkey, (double)(lo + (int64_t)i) * 7 + 3);
                assert_int_equal(x->buckets[i].doc_count, cnt[i]);
                assert_int_equal(x->buckets[i].subs[0]->count, vc[i]);
            }
            const sc_agg_result *y = top(r, 1);
            size_t k = 0;
            for (int i = 0; i < 2000; i++) {
                if (dc[i] < 2)
                    continue;
                assert_true(k < y->n_buckets);
                near(y->buckets[k].dkey, (double)(i - 1000) * 12.5);
                assert_int_equal(y->buckets[k].doc_count, dc[i]);
                k++;
            }
            assert_int_equal(k, y->n_buckets);
            sc_arena_fini(&a);
        }
}

/* Month start (UTC ms) of local time t shifted by tz_ms, from gmtime: the model. */
static int64_t month_start(int64_t t, int64_t tz_ms)
{
    time_t s = (time_t)((t + tz_ms) / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (int64_t)timegm(&tm) * 1000 - tz_ms;
}

/* date_histogram on "t": calendar month in +05:30, fixed 10d, calendar week (Monday). */
static void test_date_histogram_vs_model(void **state)
{
    (void)state;
    const int64_t tz = 19800000, day = 86400000;
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *hm = mk(&a, SC_AGG_DATE_HISTOGRAM, "m", "t", SC_AGG_V_DATE);
        hm->rounding.unit = SC_AGG_CAL_MONTH;
        hm->rounding.tz.base_offset_ms = tz;
        add_sub(&a, root, hm);
        sc_agg_spec *hf = mk(&a, SC_AGG_DATE_HISTOGRAM, "f", "t", SC_AGG_V_DATE);
        hf->rounding.fixed_ms = 10 * day;
        add_sub(&a, root, hf);
        sc_agg_spec *hw = mk(&a, SC_AGG_DATE_HISTOGRAM, "w", "t", SC_AGG_V_DATE);
        hw->rounding.unit = SC_AGG_CAL_WEEK;
        add_sub(&a, root, hw);
        sc_agg_result *r = run(&a, root, 0, sharded);
        const sc_agg_result *x = top(r, 0), *f = top(r, 1), *w = top(r, 2);
        uint64_t total_m = 0, total_f = 0, total_w = 0;
        for (size_t i = 0; i < x->n_buckets; i++) {
            total_m += x->buckets[i].doc_count;
            assert_int_equal(month_start(x->buckets[i].key, tz), x->buckets[i].key);
            if (i)
                assert_int_equal(month_start(x->buckets[i].key - 1, tz), x->buckets[i - 1].key);
        }
        for (size_t i = 0; i < f->n_buckets; i++) {
            total_f += f->buckets[i].doc_count;
            assert_int_equal(f->buckets[i].key % (10 * day), 0);
            if (i)
                assert_int_equal(f->buckets[i].key - f->buckets[i - 1].key, 10 * day);
        }
        for (size_t i = 0; i < w->n_buckets; i++) {
            total_w += w->buckets[i].doc_count;
            time_t s = (time_t)(w->buckets[i].key / 1000);
            struct tm tm;
            gmtime_r(&s, &tm);
            assert_int_equal(tm.tm_wday, 1);
            assert_int_equal(w->buckets[i].key % day, 0);
        }
        uint64_t live = 0;
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            if (!m->live)
                continue;
            live++;
            /* the doc's bucket in each histogram holds it */
            int64_t ms = month_start(m->t, tz);
            bool found = false;
            for (size_t i = 0; i < x->n_buckets; i++)
                found |= x->buckets[i].key == ms && x->buckets[i].doc_count > 0;
            assert_true(found);
        }
        assert_int_equal(total_m, live);
        assert_int_equal(total_f, live);
        assert_int_equal(total_w, live);
        /* per-bucket counts: recount the month buckets */
        for (size_t i = 0; i < x->n_buckets; i++) {
            uint64_t c = 0;
            for (size_t g = 0; g < N_ALL; g++)
                c += docs[g].live && month_start(docs[g].t, tz) == x->buckets[i].key;
            assert_int_equal(x->buckets[i].doc_count, c);
        }
        sc_arena_fini(&a);
    }
}

/* range on "d" (overlapping, open ends) with a sum(n) sub; filters on tag with other bucket;
 * missing "k"; global under a tag query; filter > terms nesting. */
static void test_range_filters_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *rg = mk(&a, SC_AGG_RANGE, "r", "d", SC_AGG_V_DOUBLE);
        static sc_agg_range_spec ranges[3] = {{.from = -INFINITY, .to = -100},
                                              {.from = -200, .to = 300},
                                              {.from = 250, .to = INFINITY}};
        rg->ranges = ranges;
        rg->n_ranges = 3;
        add_sub(&a, rg, mk(&a, SC_AGG_SUM, "s", "n", SC_AGG_V_LONG));
        add_sub(&a, root, rg);
        sc_agg_spec *fs = mk(&a, SC_AGG_FILTERS, "f", NULL, 0);
        const sc_query **qs = sc_arena_alloc(&a, 2 * sizeof *qs);
        qs[0] = query(&a, 1);
        qs[1] = query(&a, 2);
        fs->filters = qs;
        fs->n_filters = 2;
        fs->other_bucket = true;
        add_sub(&a, root, fs);
        add_sub(&a, root, mk(&a, SC_AGG_MISSING, "mk", "k", SC_AGG_V_KEYWORD));
        add_sub(&a, root, mk(&a, SC_AGG_GLOBAL, "g", NULL, 0));
        sc_agg_spec *fl = mk(&a, SC_AGG_FILTER, "fl", NULL, 0);
        fl->filters = qs + 1;
        fl->n_filters = 1;
        sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
        tk->size = 40;
        add_sub(&a, fl, tk);
        add_sub(&a, root, fl);
        const int qk = 3; /* tag t2 */
        sc_agg_result *r = run(&a, root, qk, sharded);
        uint64_t rc[3] = {0}, fc[3] = {0}, missing = 0, global = 0;
        double rs[3] = {0};
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            global += m->live;
            if (!doc_matches(m, qk))
                continue;
            for (int i = 0; i < 3; i++)
                if (m->d >= ranges[i].from && m->d < ranges[i].to) {
                    rc[i]++;
                    for (uint32_t j = 0; j < m->nn; j++)
                        rs[i] += (double)m->n[j];
                }
            fc[m->tag == 0 ? 0 : m->tag == 1 ? 1 : 2]++;
            missing += m->nk == 0;
        }
        const sc_agg_result *x = top(r, 0);
        assert_int_equal(x->n_buckets, 3);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(x->buckets[i].doc_count, rc[i]);
            near(x->buckets[i].subs[0]->sum, rs[i]);
        }
        const sc_agg_result *f = top(r, 1);
        assert_int_equal(f->n_buckets, 3);
        for (int i = 0; i < 3; i++)
            assert_int_equal(f->buckets[i].doc_count, fc[i]);
        assert_int_equal(top(r, 2)->buckets[0].doc_count, missing);
        assert_int_equal(top(r, 3)->buckets[0].doc_count, global);
        const sc_agg_result *fl_r = top(r, 4);
        assert_int_equal(fl_r->buckets[0].doc_count, fc[1]);
        /* under tag t2, the filter tag t1 matches nothing: its terms are empty */
        assert_int_equal(fl_r->buckets[0].subs[0]->n_buckets, 0);
        sc_arena_fini(&a);
    }
}

/* terms(k) > histogram(n) > sum(d): nested bucket ordinals against brute force. */
static void test_nested_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
        tk->size = 40;
        sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "n", SC_AGG_V_LONG);
        h->interval = 25;
        h->min_doc_count = 1;
        add_sub(&a, h, mk(&a, SC_AGG_SUM, "s", "d", SC_AGG_V_DOUBLE));
        sc_agg_spec *inner = mk(&a, SC_AGG_TERMS, "in", "tag", SC_AGG_V_KEYWORD);
        inner->size = 4;
        add_sub(&a, h, inner);
        add_sub(&a, tk, h);
        add_sub(&a, root, tk);
        /* single-valued keyword at the top level with a sub: the batched ordinal path */
        sc_agg_spec *tt = mk(&a, SC_AGG_TERMS, "tt", "tag", SC_AGG_V_KEYWORD);
        add_sub(&a, tt, mk(&a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
        add_sub(&a, root, tt);
        sc_agg_result *r = run(&a, root, 0, sharded);
        const sc_agg_result *ttr = top(r, 1);
        assert_int_equal(ttr->n_buckets, 4);
        for (size_t i = 0; i < ttr->n_buckets; i++) {
            uint64_t c = 0, vc = 0;
            for (size_t g = 0; g < N_ALL; g++)
                if (docs[g].live && docs[g].tag == (uint32_t)(ttr->buckets[i].bkey.ptr[1] - '0')) {
                    c++;
                    vc += docs[g].nn;
                }
            assert_int_equal(ttr->buckets[i].doc_count, c);
            assert_int_equal(ttr->buckets[i].subs[0]->count, vc);
        }
        const sc_agg_result *x = top(r, 0);
        for (size_t i = 0; i < x->n_buckets; i++) {
            int t = term_id(x->buckets[i].bkey);
            const sc_agg_result *hr = x->buckets[i].subs[0];
            for (size_t j = 0; j < hr->n_buckets; j++) {
                const sc_agg_bucket *hb = &hr->buckets[j];
                uint64_t c = 0, tagc[4] = {0};
                double s = 0;
                for (size_t g = 0; g < N_ALL; g++) {
                    const mdoc *m = &docs[g];
                    bool has_t = false, has_b = false;
                    for (uint32_t q = 0; q < m->nk; q++)
                        has_t |= m->k[q] == (uint32_t)t;
                    for (uint32_t q = 0; q < m->nn; q++)
                        has_b |= floor((double)m->n[q] / 25) * 25 == hb->dkey;
                    if (m->live && has_t && has_b) {
                        c++;
                        s += m->d;
                        tagc[m->tag]++;
                    }
                }
                assert_int_equal(hb->doc_count, c);
                near(hb->subs[0]->sum, s);
                const sc_agg_result *tr = hb->subs[1];
                for (size_t q = 0; q < tr->n_buckets; q++)
                    assert_int_equal(tr->buckets[q].doc_count,
                                     tagc[tr->buckets[q].bkey.ptr[1] - '0']);
            }
        }
        sc_arena_fini(&a);
    }
}

/* Corrupt encodings: every truncation and many byte flips of a real partial decode to
 * SC_ECORRUPT or to a result that re-encodes without crashing. */

/* top_hits / top_metrics against a sort of the matching docs: at the top level (d desc, ties by
 * doc; from 2 size 5), under terms on "k" (t desc, size 3) and top_metrics (t asc, size 2,
 * metrics n and d); sharded results equal the single-shard ones, ids are fetched. */
typedef struct ord_doc {
    size_t g;
    double key;
} ord_doc;

static int ord_cmp(const void *x, const void *y)
{
    const ord_doc *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

#define check_hit_id(h, g) check_hit_id_at(h, g, __LINE__)
static void check_hit_id_at(const sc_agg_hit *h, size_t g, int line)
{
    char id[16];
    snprintf(id, sizeof id, "%d-%u", (int)(g / PER_SEG), (unsigned)(g % PER_SEG));
    if (!sc_slice_eq_cstr(h->id, id))
        fail_msg("line %d: hit id %.*s, expected %s", line, (int)h->id.len, (const char *)h->id.ptr,
                 id);
}

static void test_top_hits_vs_model(void **state)
{
    (void)state;
    static ord_doc od[N_ALL];
    for (int sharded = 0; sharded < 2; sharded++)
        for (int qk = 0; qk < 3; qk++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_sort_spec by_d = {.kind = SC_SORT_BY_NUMERIC,
                                 .field = sc_slice_cstr("d"),
                                 .desc = true,
                                 .is_double = true};
            sc_sort_spec by_t_desc = {
                .kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("t"), .desc = true};
            sc_sort_spec by_t = {.kind = SC_SORT_BY_NUMERIC, .field = sc_slice_cstr("t")};
            sc_agg_spec *th = mk(&a, SC_AGG_TOP_HITS, "th", NULL, 0);
            th->hit_sort = &by_d;
            th->n_hit_sort = 1;
            th->from = 2;
            th->size = 5;
            th->hit_source = true;
            add_sub(&a, root, th);
            sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
            tk->size = 40;
            sc_agg_spec *sub = mk(&a, SC_AGG_TOP_HITS, "sub", NULL, 0);
            sub->hit_sort = &by_t_desc;
            sub->n_hit_sort = 1;
            sub->size = 3;
            add_sub(&a, tk, sub);
            add_sub(&a, root, tk);
            sc_agg_spec *tm = mk(&a, SC_AGG_TOP_METRICS, "tm", NULL, 0);
            tm->hit_sort = &by_t;
            tm->n_hit_sort = 1;
            tm->size = 2;
            sc_agg_spec **ms = sc_arena_alloc(&a, 2 * sizeof *ms);
            ms[0] = mk(&a, SC_AGG_MAX, "n", "n", SC_AGG_V_LONG);
            ms[1] = mk(&a, SC_AGG_MAX, "d", "d", SC_AGG_V_DOUBLE);
            tm->metrics = ms;
            tm->n_metrics = 2;
            add_sub(&a, root, tm);
            sc_agg_spec *sc = mk(&a, SC_AGG_TOP_HITS, "scored", NULL, 0);
            sc->size = 4;
            add_sub(&a, root, sc);
            sc_agg_result *r = run(&a, root, qk, sharded);

            size_t n = 0;
            for (size_t g = 0; g < N_ALL; g++)
                if (doc_matches(&docs[g], qk))
                    od[n++] = (ord_doc){g, -docs[g].d};
            qsort(od, n, sizeof *od, ord_cmp);
            const sc_agg_result *x = top(r, 0);
            assert_int_equal(x->count, n);
            assert_int_equal(x->n_hits, 7);
            for (size_t i = 0; i < 7; i++) {
                check_hit_id(&x->hits[i], od[i].g);
                near(sc_agg_sortable_to_double(x->hits[i].values[0].i), docs[od[i].g].d);
            }
            /* top_metrics: t ascending */
            for (size_t i = 0; i < n; i++)
                od[i].key = (double)docs[od[i].g].t;
            qsort(od, n, sizeof *od, ord_cmp);
            const sc_agg_result *m = top(r, 2);
            assert_int_equal(m->n_hits, 2);
            for (size_t i = 0; i < 2; i++) {
                const mdoc *d = &docs[od[i].g];
                assert_int_equal(m->hits[i].values[0].i, d->t);
                assert_int_equal(m->hits[i].n_metrics, 2);
                near(m->hits[i].metrics[0], d->nn ? (double)d->n[0] : NAN);
                near(m->hits[i].metrics[1], d->d);
            }
            /* default _score sort: constant scores within a shard (idf is per shard, so shards
             * differ), so the first docs of one shard */
            const sc_agg_result *s = top(r, 3);
            assert_int_equal(s->n_hits, 4);
            for (size_t i = 1; i < 4; i++) {
                assert_true(s->hits[i].score > 0);
                assert_true(s->hits[i].score == s->hits[0].score);
            }
            size_t first = 0;
            while (!doc_matches(&docs[first], qk))
                first++;
            if (!sharded)
                check_hit_id(&s->hits[0], first);
            /* under terms: per term, t descending */
            const sc_agg_result *t = top(r, 1);
            for (size_t b = 0; b < t->n_buckets; b++) {
                int term = term_id(t->buckets[b].bkey);
                size_t k = 0;
                for (size_t g = 0; g < N_ALL; g++) {
                    const mdoc *d = &docs[g];
                    bool has = false;
                    for (uint32_t j = 0; j < d->nk; j++)
                        has |= d->k[j] == (uint32_t)term;
                    if (has && doc_matches(d, qk))
                        od[k++] = (ord_doc){g, -(double)d->t};
                }
                qsort(od, k, sizeof *od, ord_cmp);
                const sc_agg_result *h = t->buckets[b].subs[0];
                assert_int_equal(h->count, k);
                assert_int_equal(h->n_hits, k < 3 ? k : 3);
                for (size_t i = 0; i < h->n_hits; i++) {
                    check_hit_id(&h->hits[i], od[i].g);
                    assert_int_equal(h->hits[i].source.len, 0); /* _source: false */
                }
            }
            sc_arena_fini(&a);
        }
}

/* bucket_script / bucket_selector under terms on "k": sum(d)/_count, a path through a filter
 * (tag t0) to its _count and avg(n), and a selector keeping even counts; sharded equals the
 * model. */
static sc_script *compile_script(sc_arena *a, const char *src)
{
    sc_script *s;
    sc_script_error err;
    if (sc_script_compile(sc_script_env_builtin(), sc_slice_cstr(src), a, &s, &err) != SC_OK)
        fail_msg("compile [%s]: %s", src, err.reason);
    return s;
}

static void test_bucket_script_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
        tk->size = 40;
        add_sub(&a, tk, mk(&a, SC_AGG_SUM, "s", "d", SC_AGG_V_DOUBLE)); /* 0 */
        sc_agg_spec *f = mk(&a, SC_AGG_FILTER, "f", NULL, 0);           /* 1 */
        const sc_query **fq = sc_arena_alloc(&a, sizeof *fq);
        fq[0] = query(&a, 1);
        f->filters = fq;
        f->n_filters = 1;
        add_sub(&a, f, mk(&a, SC_AGG_AVG, "an", "n", SC_AGG_V_LONG));
        add_sub(&a, tk, f);
        static const uint32_t via[1] = {1};
        /* 2: sum / count */
        sc_agg_spec *bs = mk(&a, SC_AGG_BUCKET_SCRIPT, "per", NULL, 0);
        sc_agg_path *paths = sc_arena_calloc(&a, 4, sizeof *paths);
        paths[0] = (sc_agg_path){.kind = SC_AGG_PATH_SUB, .sub = 0};
        paths[1] = (sc_agg_path){.kind = SC_AGG_PATH_COUNT};
        paths[2] = (sc_agg_path){.kind = SC_AGG_PATH_COUNT, .via = via, .n_via = 1};
        paths[3] = (sc_agg_path){.kind = SC_AGG_PATH_SUB, .sub = 0, .via = via, .n_via = 1};
        bs->paths = paths;
        bs->n_paths = 4;
        bs->script = compile_script(&a, "params.s / params.c");
        sc_agg_script_bind *b1 = sc_arena_calloc(&a, 2, sizeof *b1);
        b1[0] = (sc_agg_script_bind){.from_path = true, .path = 0};
        b1[1] = (sc_agg_script_bind){.from_path = true, .path = 1};
        bs->binds = b1;
        add_sub(&a, tk, bs);
        /* 3: through the filter, skipped where avg(n) is empty */
        sc_agg_spec *nf = mk(&a, SC_AGG_BUCKET_SCRIPT, "nested", NULL, 0);
        nf->paths = paths;
        nf->n_paths = 4;
        nf->script = compile_script(&a, "fc * 1000 + fa + k");
        sc_agg_script_bind *b2 = sc_arena_calloc(&a, 3, sizeof *b2);
        b2[0] = (sc_agg_script_bind){.from_path = true, .path = 2};
        b2[1] = (sc_agg_script_bind){.from_path = true, .path = 3};
        b2[2] = (sc_agg_script_bind){.value = sc_script_long(7)};
        nf->binds = b2;
        add_sub(&a, tk, nf);
        /* 4: even counts only */
        sc_agg_spec *sel = mk(&a, SC_AGG_BUCKET_SELECTOR, "even", NULL, 0);
        sel->paths = paths;
        sel->n_paths = 4;
        sel->script = compile_script(&a, "(long) params.c % 2 == 0");
        sc_agg_script_bind *b3 = sc_arena_calloc(&a, 1, sizeof *b3);
        b3[0] = (sc_agg_script_bind){.from_path = true, .path = 1};
        sel->binds = b3;
        add_sub(&a, tk, sel);
        add_sub(&a, root, tk);
        sc_agg_result *r = run(&a, root, 0, sharded);
        uint64_t cnt[N_TERMS] = {0}, fcnt[N_TERMS] = {0};
        double sum[N_TERMS] = {0};
        mstats fn[N_TERMS] = {{0}};
        for (size_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            if (!doc_matches(m, 0))
                continue;
            for (uint32_t i = 0; i < m->nk; i++) {
                cnt[m->k[i]]++;
                sum[m->k[i]] += m->d;
                if (m->tag == 0) {
                    fcnt[m->k[i]]++;
                    for (uint32_t j = 0; j < m->nn; j++)
                        mstats_add(&fn[m->k[i]], (double)m->n[j]);
                }
            }
        }
        const sc_agg_result *x = top(r, 0);
        size_t expect = 0;
        for (int t = 0; t < N_TERMS; t++)
            expect += cnt[t] && cnt[t] % 2 == 0;
        assert_int_equal(x->n_buckets, expect);
        for (size_t i = 0; i < x->n_buckets; i++) {
            const sc_agg_bucket *b = &x->buckets[i];
            int t = term_id(b->bkey);
            assert_int_equal(b->doc_count % 2, 0);
            assert_int_equal(b->subs[2]->count, 1);
            near(b->subs[2]->sum, sum[t] / (double)cnt[t]);
            if (fn[t].count) {
                assert_int_equal(b->subs[3]->count, 1);
                near(b->subs[3]->sum, (double)fcnt[t] * 1000 + fn[t].sum / (double)fn[t].count + 7);
            } else {
                assert_int_equal(b->subs[3]->count, 0); /* gap_policy skip */
            }
        }
        sc_arena_fini(&a);
    }
}

/* rare_terms on "n" (about 90 docs per value; fewer under the query) with max_doc_count
 * between the rarest and the most frequent value's count: exactly the values in at most
 * max_doc_count matching docs, in key order, whether one shard or the reduce of three (values
 * rare on one shard and frequent on another are dropped); a sum sub-aggregation reduces too.
 * The cut comes from the docs: a fixed one (25 under the query) left every value below it for
 * some seeds. */
static void test_rare_terms_vs_model(void **state)
{
    (void)state;
    for (int sharded = 0; sharded < 2; sharded++)
        for (int qk = 0; qk < 2; qk++) {
            uint64_t cnt[101] = {0};
            double sum[101] = {0};
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *m = &docs[g];
                if (!doc_matches(m, qk))
                    continue;
                for (uint32_t j = 0; j < m->nn; j++)
                    if (!j || m->n[j] != m->n[j - 1]) {
                        cnt[m->n[j] + 50]++;
                        sum[m->n[j] + 50] += m->d;
                    }
            }
            uint64_t lo = UINT64_MAX, hi = 0;
            for (int v = 0; v <= 100; v++) {
                if (cnt[v] && cnt[v] < lo)
                    lo = cnt[v];
                if (cnt[v] > hi)
                    hi = cnt[v];
            }
            assert_true(lo < hi);
            uint64_t max = (lo + hi) / 2 < 100 ? (lo + hi) / 2 : 100;
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *rt = mk(&a, SC_AGG_RARE_TERMS, "rt", "n", SC_AGG_V_LONG);
            rt->max_doc_count = max;
            rt->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
            add_sub(&a, rt, mk(&a, SC_AGG_SUM, "s", "d", SC_AGG_V_DOUBLE));
            add_sub(&a, root, rt);
            sc_agg_result *r = run(&a, root, qk, sharded);
            const sc_agg_result *x = top(r, 0);
            size_t k = 0, frequent = 0;
            for (int v = 0; v <= 100; v++) {
                if (!cnt[v])
                    continue;
                if (cnt[v] > max) {
                    frequent++;
                    continue;
                }
                assert_true(k < x->n_buckets);
                assert_int_equal(x->buckets[k].key, v - 50);
                assert_int_equal(x->buckets[k].doc_count, cnt[v]);
                near(x->buckets[k].subs[0]->sum, sum[v]);
                k++;
            }
            assert_int_equal(x->n_buckets, k);
            assert_true(k > 0 && frequent > 0); /* both sides of the cut are exercised */
            sc_arena_fini(&a);
        }
}

static void test_codec_corrupt(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
    add_sub(&a, tk, mk(&a, SC_AGG_STATS, "st", "d", SC_AGG_V_DOUBLE));
    /* top_hits (sort values, ids) and rare_terms (hashes) take part too */
    static const sc_sort_spec by_d = {
        .kind = SC_SORT_BY_NUMERIC, .field = {(const uint8_t *)"d", 1}, .is_double = true};
    sc_agg_spec *th = mk(&a, SC_AGG_TOP_HITS, "th", NULL, 0);
    th->hit_sort = &by_d;
    th->n_hit_sort = 1;
    th->size = 2;
    add_sub(&a, tk, th);
    add_sub(&a, root, tk);
    sc_agg_spec *rt = mk(&a, SC_AGG_RARE_TERMS, "rt", "n", SC_AGG_V_LONG);
    rt->max_doc_count = 15;
    add_sub(&a, root, rt);
    sc_agg_result *r = collect(&a, root, 0, 0, 1, 1);
    uint8_t *bytes;
    size_t len;
    assert_int_equal(sc_agg_encode(r, &bytes, &len), SC_OK);
    for (size_t cut = 0; cut < len; cut++) {
        sc_agg_result *x;
        assert_int_equal(sc_agg_decode(bytes, cut, &a, &x), SC_ECORRUPT);
    }
    for (int i = 0; i < 4000; i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, bytes, len);
        copy[below((uint32_t)len)] ^= (uint8_t)(1u << below(8));
        sc_agg_result *x;
        sc_arena_mark m = sc_arena_mark_get(&a);
        if (sc_agg_decode(copy, len, &a, &x) == SC_OK) {
            uint8_t *again;
            size_t alen;
            assert_int_equal(sc_agg_encode(x, &again, &alen), SC_OK);
            free(again);
        }
        sc_arena_rewind(&a, m);
        free(copy);
    }
    free(bytes);
    sc_arena_fini(&a);
}

/* include/exclude: a regex and an exclude list on keywords (fast path and under a parent),
 * values on numbers, and partitions that split the terms without overlap. */
static void test_terms_include_exclude(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_dfa re;
    assert_int_equal(
        sc_automaton_regexp(sc_slice_cstr("w0[0-5]"), SC_REGEXP_ALL, 10000, &a, &re, NULL), SC_OK);
    static const sc_slice ex[1] = {{(const uint8_t *)"w03", 3}};
    static const int64_t inc_num[3] = {-50, 0, 7};
    sc_agg_term_filter kf = {.include_re = &re, .exclude = ex, .n_exclude = 1};
    sc_agg_term_filter nf = {.include_num = inc_num, .n_include_num = 3};
    sc_agg_term_filter parts[3];
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *t1 = mk(&a, SC_AGG_TERMS, "t1", "k", SC_AGG_V_KEYWORD);
    t1->size = 40;
    t1->term_filter = &kf;
    add_sub(&a, root, t1);
    sc_agg_spec *g = mk(&a, SC_AGG_GLOBAL, "g", NULL, 0); /* the same under a parent */
    sc_agg_spec *t2 = mk(&a, SC_AGG_TERMS, "t2", "k", SC_AGG_V_KEYWORD);
    *t2 = *t1;
    add_sub(&a, g, t2);
    add_sub(&a, root, g);
    sc_agg_spec *tn = mk(&a, SC_AGG_TERMS, "tn", "n", SC_AGG_V_LONG);
    tn->size = 200;
    tn->term_filter = &nf;
    add_sub(&a, root, tn);
    for (uint32_t p = 0; p < 3; p++) {
        parts[p] = (sc_agg_term_filter){.num_partitions = 3, .partition = p};
        sc_agg_spec *tp = mk(&a, SC_AGG_TERMS, "tp", "k", SC_AGG_V_KEYWORD);
        tp->size = 40;
        tp->term_filter = &parts[p];
        add_sub(&a, root, tp);
    }
    sc_agg_result *r = run(&a, root, 0, true);
    uint64_t cnt[N_TERMS] = {0};
    for (size_t d = 0; d < N_ALL; d++)
        for (uint32_t i = 0; docs[d].live && i < docs[d].nk; i++)
            cnt[docs[d].k[i]]++;
    for (int w = 0; w < 2; w++) {
        const sc_agg_result *x = w ? top(r, 1)->buckets[0].subs[0] : top(r, 0);
        size_t expect = 0;
        for (int t = 0; t <= 5; t++)
            expect += t != 3 && cnt[t] > 0;
        assert_int_equal(x->n_buckets, expect);
        assert_int_equal(x->sum_other, 0);
        for (size_t i = 0; i < x->n_buckets; i++) {
            int t = term_id(x->buckets[i].bkey);
            assert_true(t <= 5 && t != 3);
            assert_int_equal(x->buckets[i].doc_count, cnt[t]);
        }
    }
    const sc_agg_result *y = top(r, 2);
    for (size_t i = 0; i < y->n_buckets; i++)
        assert_true(y->buckets[i].key == -50 || y->buckets[i].key == 0 || y->buckets[i].key == 7);
    int seen[N_TERMS] = {0};
    for (int p = 0; p < 3; p++) {
        const sc_agg_result *z = top(r, 3 + (size_t)p);
        for (size_t i = 0; i < z->n_buckets; i++)
            seen[term_id(z->buckets[i].bkey)]++;
    }
    for (int t = 0; t < N_TERMS; t++)
        assert_int_equal(seen[t], cnt[t] > 0 ? 1 : 0);
    sc_arena_fini(&a);
}

/* composite: terms(k, missing_bucket) x histogram(n, 25, desc) x date_histogram(t, month),
 * paged with `after` 7 buckets at a time over three shards: the pages, concatenated, are every
 * combination in key order with brute-force counts. */
typedef struct combo {
    char text[48];
    uint64_t count;
} combo;

static int cmp_combo(const void *x, const void *y)
{
    return strcmp(((const combo *)x)->text, ((const combo *)y)->text);
}

static void combo_text(char *buf, size_t cap, int term, int64_t h, int64_t m)
{
    if (term < 0)
        snprintf(buf, cap, "null|%lld|%lld", (long long)h, (long long)m);
    else
        snprintf(buf, cap, "w%02d|%lld|%lld", term, (long long)h, (long long)m);
}

static void test_composite_paging_vs_model(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *cp = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
    cp->size = 7;
    sc_agg_spec *s0 = mk(&a, SC_AGG_TERMS, "k", "k", SC_AGG_V_KEYWORD);
    s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    s0->missing_bucket = true;
    sc_agg_spec *s1 = mk(&a, SC_AGG_HISTOGRAM, "h", "n", SC_AGG_V_LONG);
    s1->interval = 25;
    s1->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = true};
    sc_agg_spec *s2 = mk(&a, SC_AGG_DATE_HISTOGRAM, "m", "t", SC_AGG_V_DATE);
    s2->rounding.unit = SC_AGG_CAL_MONTH;
    sc_agg_spec *srcs[3] = {s0, s1, s2};
    cp->sources = srcs;
    cp->n_sources = 3;
    add_sub(&a, cp, mk(&a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
    add_sub(&a, root, cp);
    /* the model */
    static combo model[20000];
    size_t nm = 0;
    for (size_t g = 0; g < N_ALL; g++) {
        const mdoc *d = &docs[g];
        if (!d->live || !d->nn)
            continue;
        int terms[2] = {-1, -1};
        size_t nt = d->nk ? d->nk : 1;
        for (uint32_t i = 0; i < d->nk; i++)
            terms[i] = (int)d->k[i];
        int64_t m = month_start(d->t, 0);
        for (size_t ti = 0; ti < nt; ti++)
            for (uint32_t j = 0; j < d->nn; j++) {
                int64_t h = (int64_t)floor((double)d->n[j] / 25) * 25;
                if (j && (int64_t)floor((double)d->n[j - 1] / 25) * 25 == h)
                    continue;
                combo_text(model[nm].text, sizeof model[nm].text, terms[ti], h, m);
                model[nm++].count = 1;
            }
    }
    qsort(model, nm, sizeof *model, cmp_combo);
    size_t nd = 0;
    for (size_t i = 0; i < nm; i++) {
        if (nd && !strcmp(model[nd - 1].text, model[i].text))
            model[nd - 1].count++;
        else
            model[nd++] = model[i];
    }
    /* the pages */
    sc_agg_value after[3];
    size_t seen = 0, pages = 0;
    sc_slice prev = {0};
    for (;;) {
        sc_agg_result *r = run(&a, root, 0, true);
        const sc_agg_result *x = top(r, 0);
        if (!x->n_buckets)
            break;
        pages++;
        for (size_t i = 0; i < x->n_buckets; i++) {
            const sc_agg_bucket *b = &x->buckets[i];
            if (prev.ptr)
                assert_true(sc_agg_composite_cmp(cp, prev, b->bkey) < 0);
            prev = b->bkey;
            sc_agg_value v[3];
            assert_true(sc_agg_composite_parse(cp, b->bkey, v));
            char text[48];
            combo_text(text, sizeof text, v[0].null ? -1 : term_id(v[0].s), (int64_t)v[1].d,
                       v[2].i);
            bool found = false;
            for (size_t j = 0; j < nd && !found; j++)
                if (!strcmp(model[j].text, text)) {
                    assert_int_equal(model[j].count, b->doc_count);
                    found = true;
                }
            assert_true(found);
            seen++;
        }
        assert_true(sc_agg_composite_parse(cp, x->buckets[x->n_buckets - 1].bkey, after));
        cp->after = after;
        assert_true(pages < 10000);
    }
    assert_int_equal(seen, nd);
    sc_arena_fini(&a);
}

/* composite over single-valued fields (the segment-ordinal fast path of agg_composite.c):
 * tag (desc) x histogram(d, 100) x date_histogram(t, month) with a value_count sub, paged with
 * `after` 5 buckets at a time over three shards, under match_all and under a term query; and
 * the same composite under terms(k) (one page per k bucket, owners other than 0). Every page
 * against brute force: keys in order, counts and the sub's value exact. */
typedef struct fkey {
    int tag; /* desc */
    double h;
    int64_t m;
    uint64_t count;
} fkey;

static int cmp_fkey(const void *x, const void *y)
{
    const fkey *a = x, *b = y;
    if (a->tag != b->tag)
        return a->tag > b->tag ? -1 : 1;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return (a->m > b->m) - (a->m < b->m);
}

/* The model's distinct keys of the docs matching qk (and having term k_id when >= 0). */
static size_t fkey_model(fkey *out, int qk, int k_id)
{
    size_t n = 0;
    for (size_t g = 0; g < N_ALL; g++) {
        const mdoc *d = &docs[g];
        bool has_k = k_id < 0;
        for (uint32_t i = 0; i < d->nk; i++)
            has_k |= (int)d->k[i] == k_id;
        if (!doc_matches(d, qk) || !has_k)
            continue;
        out[n++] = (fkey){(int)d->tag, floor(d->d / 100) * 100, month_start(d->t, 0), 1};
    }
    qsort(out, n, sizeof *out, cmp_fkey);
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (nd && !cmp_fkey(&out[nd - 1], &out[i]))
            out[nd - 1].count++;
        else
            out[nd++] = out[i];
    }
    return nd;
}

static void check_fkey_page(const sc_agg_spec *cp, const sc_agg_result *x, const fkey *model,
                            size_t from, size_t n_model)
{
    size_t expect = n_model - from < cp->size ? n_model - from : cp->size;
    assert_int_equal(x->n_buckets, expect);
    for (size_t i = 0; i < x->n_buckets; i++) {
        sc_agg_value v[3];
        assert_true(sc_agg_composite_parse(cp, x->buckets[i].bkey, v));
        const fkey *m = &model[from + i];
        assert_int_equal(v[0].s.len, 2);
        assert_int_equal(v[0].s.ptr[1] - '0', m->tag);
        assert_true(v[1].d == m->h);
        assert_int_equal(v[2].i, m->m);
        assert_int_equal(x->buckets[i].doc_count, m->count);
        assert_int_equal(x->buckets[i].subs[0]->count, m->count);
    }
}

static void test_composite_single_valued_vs_model(void **state)
{
    (void)state;
    static fkey model[N_ALL];
    for (int qk = 0; qk < 2; qk++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *cp = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
        cp->size = 5;
        sc_agg_spec *s0 = mk(&a, SC_AGG_TERMS, "tag", "tag", SC_AGG_V_KEYWORD);
        s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = true};
        sc_agg_spec *s1 = mk(&a, SC_AGG_HISTOGRAM, "h", "d", SC_AGG_V_DOUBLE);
        s1->interval = 100;
        sc_agg_spec *s2 = mk(&a, SC_AGG_DATE_HISTOGRAM, "m", "t", SC_AGG_V_DATE);
        s2->rounding.unit = SC_AGG_CAL_MONTH;
        sc_agg_spec *srcs[3] = {s0, s1, s2};
        cp->sources = srcs;
        cp->n_sources = 3;
        add_sub(&a, cp, mk(&a, SC_AGG_VALUE_COUNT, "vc", "d", SC_AGG_V_DOUBLE));
        add_sub(&a, root, cp);
        size_t nd = fkey_model(model, qk, -1);
        assert_true(nd > 3 * cp->size);
        sc_agg_value after[3];
        size_t from = 0;
        for (; from < nd; from += cp->size) {
            const sc_agg_result *x = top(run(&a, root, qk, true), 0);
            check_fkey_page(cp, x, model, from, nd);
            assert_true(sc_agg_composite_parse(cp, x->buckets[x->n_buckets - 1].bkey, after));
            cp->after = after;
        }
        assert_int_equal(top(run(&a, root, qk, true), 0)->n_buckets, 0);
        sc_arena_fini(&a);
    }
    /* under terms(k): the composite of each k bucket (owners), first page, one shard */
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "k", "k", SC_AGG_V_KEYWORD);
    tk->size = N_TERMS;
    sc_agg_spec *cp = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
    cp->size = 4;
    sc_agg_spec *s0 = mk(&a, SC_AGG_TERMS, "tag", "tag", SC_AGG_V_KEYWORD);
    s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = true};
    sc_agg_spec *s1 = mk(&a, SC_AGG_HISTOGRAM, "h", "d", SC_AGG_V_DOUBLE);
    s1->interval = 100;
    sc_agg_spec *s2 = mk(&a, SC_AGG_DATE_HISTOGRAM, "m", "t", SC_AGG_V_DATE);
    s2->rounding.unit = SC_AGG_CAL_MONTH;
    sc_agg_spec *srcs[3] = {s0, s1, s2};
    cp->sources = srcs;
    cp->n_sources = 3;
    add_sub(&a, cp, mk(&a, SC_AGG_VALUE_COUNT, "vc", "d", SC_AGG_V_DOUBLE));
    add_sub(&a, tk, cp);
    add_sub(&a, root, tk);
    const sc_agg_result *x = top(run(&a, root, 0, false), 0);
    assert_true(x->n_buckets > 3);
    for (size_t i = 0; i < x->n_buckets; i++) {
        int k_id = term_id(x->buckets[i].bkey);
        size_t nd = fkey_model(model, 0, k_id);
        check_fkey_page(cp, x->buckets[i].subs[0], model, 0, nd);
    }
    sc_arena_fini(&a);
}

/* composite with one histogram source at the top level (collect_histo_top: bucket index ->
 * ordinal through a dense table of 4,096 indexes, tuple_ord outside it): interval 7.5 with
 * offset 2.5 ascending (the keys in the table), and interval 1/16 descending (20,001 keys, most
 * outside the table), paged with `after` over three shards, under match_all and a term query:
 * every page against brute force (keys, counts, the sub's count). */
typedef struct hkey {
    double h;
    uint64_t count;
} hkey;

static int cmp_hkey(const void *x, const void *y)
{
    double a = ((const hkey *)x)->h, b = ((const hkey *)y)->h;
    return (a > b) - (a < b);
}

static void test_composite_lone_histogram_vs_model(void **state)
{
    (void)state;
    static hkey model[N_ALL];
    const double ivs[2] = {7.5, 1.0 / 16}, offs[2] = {2.5, 0};
    for (int v = 0; v < 2; v++)
        for (int qk = 0; qk < 2; qk++) {
            size_t n = 0;
            for (size_t g = 0; g < N_ALL; g++)
                if (doc_matches(&docs[g], qk))
                    model[n++] =
                        (hkey){floor((docs[g].d - offs[v]) / ivs[v]) * ivs[v] + offs[v], 1};
            qsort(model, n, sizeof *model, cmp_hkey);
            size_t nd = 0;
            for (size_t i = 0; i < n; i++) {
                if (nd && model[nd - 1].h == model[i].h)
                    model[nd - 1].count++;
                else
                    model[nd++] = model[i];
            }
            if (v == 1) /* descending */
                for (size_t i = 0; i < nd / 2; i++) {
                    hkey t = model[i];
                    model[i] = model[nd - 1 - i];
                    model[nd - 1 - i] = t;
                }
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *cp = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
            cp->size = v ? 200 : 5;
            sc_agg_spec *s0 = mk(&a, SC_AGG_HISTOGRAM, "h", "d", SC_AGG_V_DOUBLE);
            s0->interval = ivs[v];
            s0->offset = offs[v];
            s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = v == 1};
            sc_agg_spec *srcs[1] = {s0};
            cp->sources = srcs;
            cp->n_sources = 1;
            add_sub(&a, cp, mk(&a, SC_AGG_VALUE_COUNT, "vc", "d", SC_AGG_V_DOUBLE));
            add_sub(&a, root, cp);
            assert_true(nd > 3 * cp->size);
            sc_agg_value after[1];
            size_t from = 0;
            for (; from < nd; from += cp->size) {
                const sc_agg_result *x = top(run(&a, root, qk, true), 0);
                size_t expect = nd - from < cp->size ? nd - from : cp->size;
                assert_int_equal(x->n_buckets, expect);
                for (size_t i = 0; i < x->n_buckets; i++) {
                    sc_agg_value pv[1];
                    assert_true(sc_agg_composite_parse(cp, x->buckets[i].bkey, pv));
                    assert_true(pv[0].d == model[from + i].h);
                    assert_int_equal(x->buckets[i].doc_count, model[from + i].count);
                    assert_int_equal(x->buckets[i].subs[0]->count, model[from + i].count);
                }
                assert_true(sc_agg_composite_parse(cp, x->buckets[x->n_buckets - 1].bkey, after));
                cp->after = after;
            }
            assert_int_equal(top(run(&a, root, qk, true), 0)->n_buckets, 0);
            sc_arena_fini(&a);
        }
}

/* A top-level date_histogram of a fixed-length rounding (10 days with a 3 h offset, an hour,
 * 7 days in a fixed +05:30 zone) whose subs are metrics on single-valued fields takes the fused
 * path (agg_histo.c, histo_fused: bucket indexes by a multiply, the ordinals straight to the
 * metrics' arrays); with a value_count sub added it takes the (doc, bucket) pair path. Both
 * must give the same buckets and bit-identical metrics, under match_all and a term query,
 * across the fixture's segments (one with deletes); doc counts also against brute force. */
static void same_metric(const sc_agg_result *x, const sc_agg_result *y);

static void test_fused_date_histogram_equals_general(void **state)
{
    (void)state;
    const int64_t hour = 3600000, day = 86400000;
    for (int v = 0; v < 3; v++)
        for (int qk = 0; qk < 2; qk++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *fused = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *general = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_rounding r = {0};
            if (v == 0) {
                r.fixed_ms = 10 * day;
                r.offset_ms = 3 * hour;
            } else if (v == 1) {
                r.unit = SC_AGG_CAL_HOUR;
            } else {
                r.fixed_ms = 7 * day;
                r.tz.base_offset_ms = 19800000;
            }
            for (int g = 0; g < 2; g++) {
                sc_agg_spec *h = mk(&a, SC_AGG_DATE_HISTOGRAM, "h", "t", SC_AGG_V_DATE);
                h->rounding = r;
                add_sub(&a, h, mk(&a, SC_AGG_STATS, "st", "d", SC_AGG_V_DOUBLE));
                add_sub(&a, h, mk(&a, SC_AGG_EXTENDED_STATS, "es", "d", SC_AGG_V_DOUBLE));
                add_sub(&a, h, mk(&a, SC_AGG_AVG, "av", "t", SC_AGG_V_DATE));
                if (g) /* not a plain metric: the pairs path */
                    add_sub(&a, h, mk(&a, SC_AGG_VALUE_COUNT, "vc", "d", SC_AGG_V_DOUBLE));
                add_sub(&a, g ? general : fused, h);
            }
            const sc_agg_result *xf = top(run(&a, fused, qk, false), 0);
            const sc_agg_result *xg = top(run(&a, general, qk, false), 0);
            assert_true(xf->n_buckets > 10);
            assert_int_equal(xf->n_buckets, xg->n_buckets);
            int64_t shift = r.tz.base_offset_ms - r.offset_ms;
            int64_t unit = r.fixed_ms ? r.fixed_ms : hour;
            for (size_t i = 0; i < xf->n_buckets; i++) {
                const sc_agg_bucket *bf = &xf->buckets[i], *bg = &xg->buckets[i];
                assert_int_equal(bf->key, bg->key);
                assert_int_equal(bf->doc_count, bg->doc_count);
                for (int j = 0; j < 3; j++)
                    same_metric(bf->subs[j], bg->subs[j]);
                uint64_t c = 0;
                for (size_t g = 0; g < N_ALL; g++) {
                    int64_t x = docs[g].t + shift;
                    int64_t q = x / unit - (x % unit != 0 && x < 0);
                    c += doc_matches(&docs[g], qk) && q * unit - shift == bf->key;
                }
                assert_int_equal(bf->doc_count, c);
            }
            sc_arena_fini(&a);
        }
}

/* composite(tag desc) and composite(tag, tag asc) over the single-valued keyword "tag" (the dense
 * table of ordinal combinations), paged 3 buckets at a time with `after`, under match_all and a
 * term query, over three shards: every page against brute force. */
static void test_composite_keywords_dense_vs_model(void **state)
{
    (void)state;
    for (int two = 0; two < 2; two++)
        for (int qk = 0; qk < 3; qk += 2) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *cp = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
            cp->size = 3;
            sc_agg_spec *s0 = mk(&a, SC_AGG_TERMS, "a", "tag", SC_AGG_V_KEYWORD);
            s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = true};
            sc_agg_spec *s1 = mk(&a, SC_AGG_TERMS, "b", "tag", SC_AGG_V_KEYWORD);
            s1->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
            sc_agg_spec *srcs[2] = {s0, s1};
            cp->sources = srcs;
            cp->n_sources = two ? 2 : 1;
            add_sub(&a, root, cp);
            uint64_t cnt[4] = {0};
            for (size_t g = 0; g < N_ALL; g++)
                cnt[docs[g].tag] += doc_matches(&docs[g], qk);
            sc_agg_value after[2];
            int next = 3; /* tags in descending order, the non-empty ones */
            for (int page = 0; page < 4; page++) {
                const sc_agg_result *x = top(run(&a, root, qk, true), 0);
                if (!x->n_buckets)
                    break;
                for (size_t i = 0; i < x->n_buckets; i++) {
                    while (next >= 0 && !cnt[next])
                        next--;
                    assert_true(next >= 0);
                    sc_agg_value v[2];
                    assert_true(sc_agg_composite_parse(cp, x->buckets[i].bkey, v));
                    assert_int_equal(v[0].s.ptr[1] - '0', next);
                    if (two)
                        assert_int_equal(v[1].s.ptr[1] - '0', next);
                    assert_int_equal(x->buckets[i].doc_count, cnt[next]);
                    next--;
                }
                assert_true(sc_agg_composite_parse(cp, x->buckets[x->n_buckets - 1].bkey, after));
                cp->after = after;
            }
            while (next >= 0 && !cnt[next])
                next--;
            assert_int_equal(next, -1);
            sc_arena_fini(&a);
        }
}

/* sampler > terms(tag): the sample is the first shard_size matches in doc order (segments in
 * order), under match_all and a range on "t" (a segment without deletes is sampled from the
 * range field's doc values, sampler_seg_whole) and the same range under constant_score (the
 * windows): all three against brute force, for samples inside one segment and across them. */
static void test_sampler_whole_segment_vs_model(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {5, 700, 2000, 2 * N_ALL};
    int64_t qlo = T0 + INT64_C(37) * 86400000 + 12345, qhi = T0 + INT64_C(201) * 86400000 - 777;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int qk = 0; qk < 3; qk++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            sc_agg_spec *sp = mk(&a, SC_AGG_SAMPLER, "s", NULL, 0);
            sp->shard_size = sizes[si];
            sc_agg_spec *tt = mk(&a, SC_AGG_TERMS, "tag", "tag", SC_AGG_V_KEYWORD);
            tt->size = 4;
            add_sub(&a, sp, tt);
            add_sub(&a, root, sp);
            sc_query *rq = sc_query_range(&a, sc_slice_cstr("t"), &qlo, &qhi, 1);
            const sc_query *q = qk == 0   ? sc_query_match_all(&a)
                                : qk == 1 ? rq
                                          : sc_query_constant_score(&a, rq);
            uint64_t want[4] = {0}, n = 0, total = 0;
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *d = &docs[g];
                if (!d->live || (qk && (d->t < qlo || d->t > qhi)))
                    continue;
                total++;
                if (n < sizes[si]) {
                    want[d->tag]++;
                    n++;
                }
            }
            uint64_t got_total;
            sc_agg_result *r =
                fx_agg_final(&a, root, fx_agg_collect(&a, root, ss, N_SEG, q, 1, &got_total));
            assert_int_equal(got_total, total);
            const sc_agg_result *x = top(r, 0);
            assert_int_equal(x->n_buckets, 1);
            assert_int_equal(x->buckets[0].doc_count, n);
            const sc_agg_result *t = x->buckets[0].subs[0];
            uint64_t sum = 0;
            for (size_t i = 0; i < t->n_buckets; i++) {
                int tag = t->buckets[i].bkey.ptr[1] - '0';
                assert_int_equal(t->buckets[i].doc_count, want[tag]);
                sum += t->buckets[i].doc_count;
            }
            assert_int_equal(sum, n);
            sc_arena_fini(&a);
        }
}

/* multi_terms (tag, n): every pair counted once per doc; with a small size over three shards
 * the counts never overstate and stay within the error bound. */
static void test_multi_terms_vs_model(void **state)
{
    (void)state;
    for (int small = 0; small < 2; small++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
        sc_agg_spec *mt = mk(&a, SC_AGG_MULTI_TERMS, "mt", NULL, 0);
        mt->size = small ? 5 : 1000;
        sc_agg_spec *s0 = mk(&a, SC_AGG_TERMS, "tag", "tag", SC_AGG_V_KEYWORD);
        sc_agg_spec *s1 = mk(&a, SC_AGG_TERMS, "n", "n", SC_AGG_V_LONG);
        s0->order = s1->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        sc_agg_spec *srcs[2] = {s0, s1};
        mt->sources = srcs;
        mt->n_sources = 2;
        add_sub(&a, root, mt);
        sc_agg_result *r = run(&a, root, 0, true);
        static uint64_t cnt[4][101];
        memset(cnt, 0, sizeof cnt);
        uint64_t total = 0;
        for (size_t g = 0; g < N_ALL; g++)
            for (uint32_t j = 0; docs[g].live && j < docs[g].nn; j++)
                if (!j || docs[g].n[j] != docs[g].n[j - 1]) {
                    cnt[docs[g].tag][docs[g].n[j] + 50]++;
                    total++;
                }
        const sc_agg_result *x = top(r, 0);
        uint64_t sum = x->sum_other;
        for (size_t i = 0; i < x->n_buckets; i++) {
            sc_agg_value v[2];
            assert_true(sc_agg_composite_parse(mt, x->buckets[i].bkey, v));
            uint64_t truth = cnt[v[0].s.ptr[1] - '0'][v[1].i + 50];
            if (small) {
                assert_true(x->buckets[i].doc_count <= truth);
                assert_true(x->doc_count_error >= 0 &&
                            truth - x->buckets[i].doc_count <= (uint64_t)x->doc_count_error);
            } else {
                assert_int_equal(x->buckets[i].doc_count, truth);
            }
            sum += x->buckets[i].doc_count;
        }
        assert_int_equal(sum, total);
        sc_arena_fini(&a);
    }
}

/* Pipelines at the final reduce over three shards: histogram(n, 10) > value_count(n) with
 * cumulative_sum and derivative of it and a bucket_sort keeping the 3 largest counts;
 * max_bucket / avg_bucket / stats_bucket beside it; all against brute force. */
static void test_pipelines_vs_model(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "n", SC_AGG_V_LONG);
    h->interval = 10;
    add_sub(&a, h, mk(&a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
    sc_agg_spec *cum = mk(&a, SC_AGG_CUMULATIVE_SUM, "cum", NULL, 0);
    cum->value = (sc_agg_path){.kind = SC_AGG_PATH_SUB, .sub = 0};
    sc_agg_spec *der = mk(&a, SC_AGG_DERIVATIVE, "der", NULL, 0);
    der->value = (sc_agg_path){.kind = SC_AGG_PATH_SUB, .sub = 1}; /* of the cumulative sum */
    add_sub(&a, h, cum);
    add_sub(&a, h, der);
    add_sub(&a, root, h);
    sc_agg_spec *h2 = mk(&a, SC_AGG_HISTOGRAM, "h2", "n", SC_AGG_V_LONG);
    h2->interval = 10;
    sc_agg_spec *bs = mk(&a, SC_AGG_BUCKET_SORT, "bs", NULL, 0);
    static const sc_agg_path by_count = {.kind = SC_AGG_PATH_COUNT, .desc = true};
    bs->sort = &by_count;
    bs->n_sort = 1;
    bs->size = 3;
    add_sub(&a, h2, bs);
    add_sub(&a, root, h2);
    static const sc_agg_kind sib[3] = {SC_AGG_MAX_BUCKET, SC_AGG_AVG_BUCKET, SC_AGG_STATS_BUCKET};
    for (int i = 0; i < 3; i++) {
        sc_agg_spec *p = mk(&a, sib[i], "p", NULL, 0);
        p->target = h;
        p->target_sub = 0;
        p->value = (sc_agg_path){.kind = SC_AGG_PATH_SUB, .sub = 0};
        add_sub(&a, root, p);
    }
    sc_agg_result *r = run(&a, root, 0, true);
    /* per bucket: its docs, and value_count = every value of those docs */
    uint64_t vc[11] = {0}, dc[11] = {0};
    for (size_t g = 0; g < N_ALL; g++) {
        const mdoc *d = &docs[g];
        int64_t prev = INT64_MIN;
        for (uint32_t j = 0; d->live && j < d->nn; j++) {
            int64_t b = (int64_t)floor((double)d->n[j] / 10) + 5;
            if (b != prev) {
                dc[b]++;
                vc[b] += d->nn;
            }
            prev = b;
        }
    }
    const sc_agg_result *x = top(r, 0);
    assert_int_equal(x->n_buckets, 11);
    double acc = 0, prev = NAN, mx = -1, sum = 0;
    for (size_t i = 0; i < 11; i++) {
        const sc_agg_bucket *b = &x->buckets[i];
        assert_int_equal(b->doc_count, dc[i]);
        assert_int_equal(b->subs[0]->count, vc[i]);
        acc += (double)vc[i];
        near(b->subs[1]->sum, acc);
        if (i) {
            assert_int_equal(b->subs[2]->count, 1);
            near(b->subs[2]->sum, acc - prev);
        } else {
            assert_int_equal(b->subs[2]->count, 0);
        }
        prev = acc;
        mx = (double)vc[i] > mx ? (double)vc[i] : mx;
        sum += (double)vc[i];
    }
    const sc_agg_result *y = top(r, 1);
    assert_int_equal(y->n_buckets, 3);
    assert_true(y->buckets[0].doc_count >= y->buckets[1].doc_count &&
                y->buckets[1].doc_count >= y->buckets[2].doc_count);
    near(top(r, 2)->sum, mx);
    assert_true(top(r, 2)->n_buckets >= 1);
    near(top(r, 3)->sum, sum / 11);
    assert_int_equal(top(r, 4)->count, 11);
    near(top(r, 4)->max, mx);
    sc_arena_fini(&a);
}

/* auto_date_histogram over "t" (400 days): 20 buckets fit at 1M, 5 at 3M; sub-aggregations
 * see the deferred docs (also under a terms parent); against brute force over three shards. */
static void test_auto_date_histogram_vs_model(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *ah = mk(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "ah", "t", SC_AGG_V_DATE);
    ah->size = 20;
    add_sub(&a, ah, mk(&a, SC_AGG_SUM, "s", "d", SC_AGG_V_DOUBLE));
    add_sub(&a, root, ah);
    sc_agg_spec *tt = mk(&a, SC_AGG_TERMS, "tt", "tag", SC_AGG_V_KEYWORD);
    sc_agg_spec *a5 = mk(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "a5", "t", SC_AGG_V_DATE);
    a5->size = 5;
    add_sub(&a, a5, mk(&a, SC_AGG_VALUE_COUNT, "vc", "n", SC_AGG_V_LONG));
    add_sub(&a, tt, a5);
    add_sub(&a, root, tt);
    /* top level without subs: the values-only record, counted by rounding (months) and by
     * index (days, a fixed-length rung) */
    sc_agg_spec *bare = mk(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "bare", "t", SC_AGG_V_DATE);
    bare->size = 20;
    add_sub(&a, root, bare);
    sc_agg_spec *days = mk(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "days", "t", SC_AGG_V_DATE);
    days->size = 450;
    add_sub(&a, root, days);
    sc_agg_result *r = run(&a, root, 0, true);
    const sc_agg_result *x = top(r, 0);
    assert_int_equal(x->rung, 13); /* 1M */
    const sc_agg_result *xb = top(r, 2);
    assert_int_equal(xb->rung, 13);
    assert_int_equal(xb->n_buckets, x->n_buckets);
    for (size_t i = 0; i < x->n_buckets; i++) {
        assert_int_equal(xb->buckets[i].key, x->buckets[i].key);
        assert_int_equal(xb->buckets[i].doc_count, x->buckets[i].doc_count);
    }
    const sc_agg_result *xd = top(r, 3);
    assert_int_equal(xd->rung, 11); /* 1d */
    uint64_t day_total = 0;
    for (size_t i = 0; i < xd->n_buckets; i++) {
        int64_t k = xd->buckets[i].key;
        assert_int_equal(k % 86400000, 0);
        uint64_t c = 0;
        for (size_t g = 0; g < N_ALL; g++)
            c += docs[g].live && docs[g].t >= k && docs[g].t < k + 86400000;
        assert_int_equal(xd->buckets[i].doc_count, c);
        day_total += c;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < x->n_buckets; i++) {
        const sc_agg_bucket *b = &x->buckets[i];
        assert_int_equal(month_start(b->key, 0), b->key);
        uint64_t c = 0;
        double s = 0;
        for (size_t g = 0; g < N_ALL; g++)
            if (docs[g].live && month_start(docs[g].t, 0) == b->key) {
                c++;
                s += docs[g].d;
            }
        assert_int_equal(b->doc_count, c);
        near(b->subs[0]->sum, s);
        total += c;
    }
    assert_true(x->n_buckets <= 20 && x->n_buckets >= 13);
    const sc_agg_result *t = top(r, 1);
    for (size_t i = 0; i < t->n_buckets; i++) {
        const sc_agg_result *q = t->buckets[i].subs[0];
        assert_int_equal(q->rung, 14); /* 3M */
        assert_true(q->n_buckets <= 5);
        uint64_t sum = 0;
        for (size_t j = 0; j < q->n_buckets; j++) {
            uint64_t vc = 0;
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *d = &docs[g];
                int64_t m = month_start(d->t, 0), k = q->buckets[j].key;
                /* the quarter of the doc: its month's start within [k, next quarter) */
                if (d->live && d->tag == (uint32_t)(t->buckets[i].bkey.ptr[1] - '0') && m >= k &&
                    (j + 1 == q->n_buckets || m < q->buckets[j + 1].key))
                    vc += d->nn;
            }
            assert_int_equal(q->buckets[j].subs[0]->count, vc);
            sum += q->buckets[j].doc_count;
        }
        assert_int_equal(sum, t->buckets[i].doc_count);
    }
    uint64_t live = 0;
    for (size_t g = 0; g < N_ALL; g++)
        live += docs[g].live;
    assert_int_equal(total, live);
    assert_int_equal(day_total, live);
    sc_arena_fini(&a);
}

/* ip_range's ordinal bounds, exercised on the keyword terms of "k" (byte order, as 16-byte
 * addresses are): [w05, w10), [*, w03), [w27, *). */
static void test_ip_range_bounds(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *rg = mk(&a, SC_AGG_RANGE, "r", "k", SC_AGG_V_IP);
    sc_agg_range_spec ranges[3] = {{.from_ip = sc_slice_cstr("w05"), .to_ip = sc_slice_cstr("w10")},
                                   {.to_ip = sc_slice_cstr("w03")},
                                   {.from_ip = sc_slice_cstr("w27")}};
    rg->ranges = ranges;
    rg->n_ranges = 3;
    add_sub(&a, root, rg);
    sc_agg_result *r = run(&a, root, 0, true);
    static const int lo[3] = {5, 0, 27}, hi[3] = {10, 3, 30};
    for (int i = 0; i < 3; i++) {
        uint64_t c = 0;
        for (size_t g = 0; g < N_ALL; g++) {
            bool in = false;
            for (uint32_t j = 0; docs[g].live && j < docs[g].nk; j++)
                in |= (int)docs[g].k[j] >= lo[i] && (int)docs[g].k[j] < hi[i];
            c += in;
        }
        assert_int_equal(top(r, 0)->buckets[i].doc_count, c);
    }
    sc_arena_fini(&a);
}

/* weighted_avg of "d" by the first value of "n" (docs without "n" skipped; with a weight
 * `missing` of 2 they count), under terms(tag), over three shards. */
static void test_weighted_avg_vs_model(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *tt = mk(&a, SC_AGG_TERMS, "tt", "tag", SC_AGG_V_KEYWORD);
    for (int m = 0; m < 2; m++) {
        sc_agg_spec *w = mk(&a, SC_AGG_WEIGHTED_AVG, "w", "d", SC_AGG_V_DOUBLE);
        w->weight_field = "n";
        w->weight_vtype = SC_AGG_V_LONG;
        w->has_weight_missing = m == 1;
        w->weight_missing = 2;
        add_sub(&a, tt, w);
    }
    add_sub(&a, root, tt);
    sc_agg_result *r = run(&a, root, 0, true);
    const sc_agg_result *x = top(r, 0);
    for (size_t i = 0; i < x->n_buckets; i++)
        for (int m = 0; m < 2; m++) {
            double sw = 0, swv = 0;
            for (size_t g = 0; g < N_ALL; g++) {
                const mdoc *d = &docs[g];
                if (!d->live || d->tag != (uint32_t)(x->buckets[i].bkey.ptr[1] - '0'))
                    continue;
                double wt = d->nn ? (double)d->n[0] : (m ? 2 : NAN);
                if (isnan(wt))
                    continue;
                sw += wt;
                swv += wt * d->d;
            }
            const sc_agg_result *w = x->buckets[i].subs[m];
            near(w->sum_sq, sw);
            near(w->sum, swv);
        }
    sc_arena_fini(&a);
}

/* Counting from points (match_all over a segment without deletes) gives the same buckets as
 * reading doc values (the same docs through a range query covering every value): date
 * histograms (day in a DST zone, month), an integer histogram and ranges on the date field. */
static void test_points_path_equals_doc_values(void **state)
{
    (void)state;
    static const int64_t at[2] = {INT64_C(1583650800000), INT64_C(1604210400000)};
    static const int32_t off[2] = {-4 * 3600, -5 * 3600};
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *d1 = mk(&a, SC_AGG_DATE_HISTOGRAM, "d1", "t", SC_AGG_V_DATE);
    d1->rounding.unit = SC_AGG_CAL_DAY;
    d1->rounding.tz =
        (sc_agg_tz){.base_offset_ms = -5 * 3600000, .at_ms = at, .offset_s = off, .n_trans = 2};
    add_sub(&a, root, d1);
    sc_agg_spec *d2 = mk(&a, SC_AGG_DATE_HISTOGRAM, "d2", "t", SC_AGG_V_DATE);
    d2->rounding.unit = SC_AGG_CAL_MONTH;
    d2->rounding.offset_ms = 6 * 3600000;
    add_sub(&a, root, d2);
    /* plain arithmetic rounding on the doc-values side: a fixed-offset zone and an offset */
    sc_agg_spec *d3 = mk(&a, SC_AGG_DATE_HISTOGRAM, "d3", "t", SC_AGG_V_DATE);
    d3->rounding.unit = SC_AGG_CAL_DAY;
    d3->rounding.tz.base_offset_ms = -3 * 3600000 - 30 * 60000;
    d3->rounding.offset_ms = 2 * 3600000 + 17;
    add_sub(&a, root, d3);
    sc_agg_spec *d4 = mk(&a, SC_AGG_DATE_HISTOGRAM, "d4", "t", SC_AGG_V_DATE);
    d4->rounding.fixed_ms = 7 * 3600000 + 11;
    d4->rounding.offset_ms = -5 * 60000;
    add_sub(&a, root, d4);
    sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "t", SC_AGG_V_DATE);
    h->interval = 7 * 86400000.0 + 13;
    h->offset = 5;
    add_sub(&a, root, h);
    sc_agg_spec *rg = mk(&a, SC_AGG_RANGE, "r", "t", SC_AGG_V_DATE);
    static sc_agg_range_spec ranges[3] = {{.from = -INFINITY, .to = 1585699200000.5},
                                          {.from = 1580000000000.0, .to = 1600000000000.0},
                                          {.from = 1600000000000.0, .to = INFINITY}};
    rg->ranges = ranges;
    rg->n_ranges = 3;
    add_sub(&a, root, rg);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (size_t from = 0; from < N_SEG; from++) {
        sc_searcher s = {ss + from, 1};
        sc_search_options o;
        sc_search_options_init(&o);
        sc_agg_shard_options so = {.n_shards = 1};
        sc_search_result res;
        sc_agg_error err;
        sc_agg_result *fast, *slow, *f2, *s2;
        assert_int_equal(
            sc_agg_collect_shard(root, &s, sc_query_match_all(&a), &o, &so, &a, &fast, &res, &err),
            SC_OK);
        assert_int_equal(sc_agg_collect_shard(root, &s,
                                              sc_query_range(&a, sc_slice_cstr("t"), &lo, &hi, 1),
                                              &o, &so, &a, &slow, &res, &err),
                         SC_OK);
        assert_int_equal(sc_agg_reduce(root, &fast, 1, true, 0, &a, &f2, &err), SC_OK);
        assert_int_equal(sc_agg_reduce(root, &slow, 1, true, 0, &a, &s2, &err), SC_OK);
        assert_true(sc_agg_result_equal(f2, s2));
        /* a range query on the aggregated field: points again (the query's values only) vs
         * the same range under constant_score (doc values) */
        int64_t qlo = T0 + INT64_C(37) * 86400000 + 12345, qhi = T0 + INT64_C(201) * 86400000 - 777;
        sc_query *rq = sc_query_range(&a, sc_slice_cstr("t"), &qlo, &qhi, 1);
        assert_int_equal(sc_agg_collect_shard(root, &s, rq, &o, &so, &a, &fast, &res, &err), SC_OK);
        uint64_t n_fast = res.total;
        assert_int_equal(sc_agg_collect_shard(root, &s, sc_query_constant_score(&a, rq), &o, &so,
                                              &a, &slow, &res, &err),
                         SC_OK);
        assert_int_equal(res.total, n_fast);
        assert_int_equal(sc_agg_reduce(root, &fast, 1, true, 0, &a, &f2, &err), SC_OK);
        assert_int_equal(sc_agg_reduce(root, &slow, 1, true, 0, &a, &s2, &err), SC_OK);
        assert_true(sc_agg_result_equal(f2, s2));
    }
    sc_arena_fini(&a);
}

/* ---- the fused histogram-with-metrics path and the dense range collection ---- */

#define FZ_SEGS 3
static const uint32_t fz_n[FZ_SEGS] = {20000, 20000, 2000};

typedef struct fzdoc {
    int64_t s[2]; /* "s": scaled_float x 100 in [0, 5000); segments 0 and 1: exactly one */
    uint32_t ns;
    int64_t m; /* "m": one per doc everywhere */
    bool live;
} fzdoc;

/* Compares two metric results bit for bit. */
static void same_metric(const sc_agg_result *x, const sc_agg_result *y)
{
    assert_int_equal(x->count, y->count);
    assert_memory_equal(&x->sum, &y->sum, sizeof x->sum);
    assert_memory_equal(&x->sum_c, &y->sum_c, sizeof x->sum_c);
    assert_memory_equal(&x->sum_sq, &y->sum_sq, sizeof x->sum_sq);
    assert_memory_equal(&x->sum_sq_c, &y->sum_sq_c, sizeof x->sum_sq_c);
    assert_memory_equal(&x->min, &y->min, sizeof x->min);
    assert_memory_equal(&x->max, &y->max, sizeof x->max);
}

/* A top-level histogram of a scaled_float whose subs are metrics on single-valued fields
 * (Rally's distance_amount_agg) takes the fused path; with one more sub that is not a plain
 * metric it takes the general (doc, bucket) pair path. Both must give the same buckets and the
 * same sums bit for bit, under match_all, a range matching every doc (the whole windows of
 * collect, with and without deletes), a range matching all but a few (the excluded docs taken
 * out) and the same ranges through constant_score (the bitset windows); a third segment has
 * docs without "s" and with two values (the general path there), and the first has deletes.
 * Doc counts and stats also against brute force. */
static void test_fused_histogram_equals_general(void **state)
{
    (void)state;
    char fdir[80];
    snprintf(fdir, sizeof fdir, "%s/fused", dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", fdir);
    assert_int_equal(system(cmd), 0);
    fzdoc *fd[FZ_SEGS];
    sc_segment *fseg[FZ_SEGS];
    sc_bitset flive[FZ_SEGS];
    sc_searcher_segment fss[FZ_SEGS];
    for (int g = 0; g < FZ_SEGS; g++) {
        fd[g] = calloc(fz_n[g], sizeof *fd[g]);
        bool *live = calloc(fz_n[g], sizeof *live);
        assert_non_null(fd[g]);
        assert_non_null(live);
        sc_segment_builder *b;
        assert_int_equal(sc_segment_builder_new(&b), SC_OK);
        for (uint32_t d = 0; d < fz_n[g]; d++) {
            fzdoc *x = &fd[g][d];
            x->ns = g < 2 ? 1 : below(3);
            for (uint32_t i = 0; i < x->ns; i++)
                x->s[i] = below(8) ? below(600) : below(5000); /* mostly short, as taxi trips */
            if (x->ns == 2 && x->s[0] > x->s[1]) {
                int64_t t = x->s[0];
                x->s[0] = x->s[1];
                x->s[1] = t;
            }
            x->m = (int64_t)below(20000) - 500;
            fx_tagged tg;
            sc_index_field f[4];
            size_t nf = fx_tagged_fields(&tg, 10 + g, d, 0, f);
            if (x->ns)
                f[nf++] = fx_numeric("s", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, x->s, x->ns);
            f[nf++] = fx_numeric("m", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &x->m, 1);
            assert_int_equal(fx_add(b, tg.id, f, nf), 0);
        }
        assert_int_equal(
            fx_segment_finish(b, fdir, g, g != 0, 7, &fseg[g], &flive[g], live, &fss[g]), 0);
        for (uint32_t d = 0; d < fz_n[g]; d++)
            fd[g][d].live = live[d];
        free(live);
    }
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *fused = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *general = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *hs[2];
    for (int v = 0; v < 2; v++) {
        sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "s", SC_AGG_V_LONG);
        h->scaling_factor = 100;
        h->interval = 1;
        sc_agg_spec *st = mk(&a, SC_AGG_STATS, "st", "m", SC_AGG_V_LONG);
        st->scaling_factor = 100;
        add_sub(&a, h, st);
        add_sub(&a, h, mk(&a, SC_AGG_EXTENDED_STATS, "es", "m", SC_AGG_V_LONG));
        sc_agg_spec *av = mk(&a, SC_AGG_AVG, "av", "s", SC_AGG_V_LONG);
        av->scaling_factor = 100;
        add_sub(&a, h, av);
        if (v == 1) /* not a plain metric: the pairs path */
            add_sub(&a, h, mk(&a, SC_AGG_VALUE_COUNT, "vc", "m", SC_AGG_V_LONG));
        add_sub(&a, v ? general : fused, h);
        hs[v] = h;
    }
    /* queries: match_all, a range covering every value, all but s < 0.01 (few docs), and the
     * two ranges under constant_score (bitset windows) */
    int64_t lo[3] = {0, 0, 1}, hi[3] = {0, 1000000, 4999};
    for (int qk = 0; qk < 5; qk++) {
        int r = qk < 3 ? qk : qk - 2;
        sc_query *q = r == 0 ? sc_query_match_all(&a)
                             : sc_query_range(&a, sc_slice_cstr("s"), &lo[r], &hi[r], 1);
        if (qk >= 3)
            q = sc_query_constant_score(&a, q);
        /* the model: per key (value / 100 floored), docs and the stats of m / 100 */
        uint64_t cnt[50] = {0}, n_match = 0;
        mstats ms[50];
        memset(ms, 0, sizeof ms);
        for (int g = 0; g < FZ_SEGS; g++)
            for (uint32_t d = 0; d < fz_n[g]; d++) {
                const fzdoc *x = &fd[g][d];
                bool in = r == 0;
                for (uint32_t i = 0; i < x->ns; i++)
                    in |= x->s[i] >= lo[r] && x->s[i] <= hi[r];
                if (!x->live || !in)
                    continue;
                n_match++;
                int64_t prev = -1;
                for (uint32_t i = 0; i < x->ns; i++) {
                    int64_t k = x->s[i] / 100;
                    if (k == prev)
                        continue;
                    prev = k;
                    cnt[k]++;
                    mstats_add(&ms[k], (double)x->m / 100);
                }
            }
        sc_searcher s = {fss, FZ_SEGS};
        sc_search_options o;
        sc_search_options_init(&o);
        sc_agg_shard_options so = {.n_shards = 1};
        sc_search_result res;
        sc_agg_error err;
        sc_agg_result *rf, *rg;
        assert_int_equal(sc_agg_collect_shard(fused, &s, q, &o, &so, &a, &rf, &res, &err), SC_OK);
        assert_int_equal(res.total, n_match);
        assert_int_equal(sc_agg_collect_shard(general, &s, q, &o, &so, &a, &rg, &res, &err), SC_OK);
        assert_int_equal(res.total, n_match);
        const sc_agg_result *xf = top(rf, 0), *xg = top(rg, 0);
        assert_int_equal(xf->n_buckets, xg->n_buckets);
        size_t nb = 0;
        for (int k = 0; k < 50; k++)
            nb += cnt[k] != 0;
        assert_int_equal(xf->n_buckets, nb);
        for (size_t i = 0; i < xf->n_buckets; i++) {
            const sc_agg_bucket *bf = &xf->buckets[i], *bg = &xg->buckets[i];
            assert_memory_equal(&bf->dkey, &bg->dkey, sizeof bf->dkey);
            assert_int_equal(bf->doc_count, bg->doc_count);
            for (int j = 0; j < 3; j++)
                same_metric(bf->subs[j], bg->subs[j]);
            int k = (int)bf->dkey;
            assert_true(k >= 0 && k < 50);
            assert_int_equal(bf->doc_count, cnt[k]);
            check_stats(bf->subs[0], &ms[k]);
        }
    }
    (void)hs;
    sc_arena_fini(&a);
    for (int g = 0; g < FZ_SEGS; g++) {
        sc_segment_unref(fseg[g]);
        sc_bitset_fini(&flive[g]);
        free(fd[g]);
    }
}

/* The fused path's keys by division (exact_floor_div31 and exact_floor_div) at every bucket
 * edge, for divisors whose reciprocal rounds below (49: 49 x (1 / 49) < 1 in doubles) or above:
 * values 0..N-1 and some beyond 2^31, histograms of interval d (and of a scaled_float x 7 with
 * interval 7, the same divisor) with a stats sub, doc counts and keys against integer
 * division. */
static void test_fused_histogram_key_edges(void **state)
{
    (void)state;
    char edir[80];
    snprintf(edir, sizeof edir, "%s/fedges", dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", edir);
    assert_int_equal(system(cmd), 0);
    enum {
        N = 6000,
        BIG = 40
    };
    static const int64_t divs[] = {49, 3, 100, 97, 1000};
    for (size_t di = 0; di < sizeof divs / sizeof *divs; di++) {
        int64_t d = divs[di];
        for (int wide = 0; wide < 2; wide++) {
            /* wide: the last BIG docs above 2^31 (exact_floor_div for those windows) */
            sc_segment_builder *b;
            assert_int_equal(sc_segment_builder_new(&b), SC_OK);
            int64_t *v = calloc(N + BIG, sizeof *v);
            assert_non_null(v);
            uint32_t n = wide ? N + BIG : N;
            for (uint32_t i = 0; i < n; i++) {
                v[i] = i < N ? (int64_t)i : (INT64_C(1) << 31) + d * (int64_t)(i - N) - 1;
                int64_t m = (int64_t)i % 17;
                fx_tagged tg;
                sc_index_field f[4];
                size_t nf = fx_tagged_fields(&tg, 1, i, 0, f);
                f[nf++] = fx_numeric("s", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &v[i], 1);
                f[nf++] = fx_numeric("m", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m, 1);
                assert_int_equal(fx_add(b, tg.id, f, nf), 0);
            }
            sc_segment *seg;
            sc_bitset live_bs;
            bool *live = calloc(n, sizeof *live);
            sc_searcher_segment view;
            assert_int_equal(fx_segment_finish(b, edir, (int)(di * 2 + (size_t)wide), true, 7, &seg,
                                               &live_bs, live, &view),
                             0);
            for (int scaled = 0; scaled < 2; scaled++) {
                if (scaled && d % 7)
                    continue;
                sc_arena a;
                sc_arena_init(&a, 0);
                sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
                sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "s", SC_AGG_V_LONG);
                h->interval = scaled ? (double)(d / 7) : (double)d;
                h->scaling_factor = scaled ? 7 : 0;
                add_sub(&a, h, mk(&a, SC_AGG_STATS, "st", "m", SC_AGG_V_LONG));
                add_sub(&a, root, h);
                sc_searcher s = {&view, 1};
                sc_search_options o;
                sc_search_options_init(&o);
                sc_agg_shard_options so = {.n_shards = 1};
                sc_search_result res;
                sc_agg_error err;
                sc_agg_result *r;
                assert_int_equal(sc_agg_collect_shard(root, &s, sc_query_match_all(&a), &o, &so, &a,
                                                      &r, &res, &err),
                                 SC_OK);
                const sc_agg_result *x = top(r, 0);
                uint64_t seen = 0;
                for (size_t i = 0; i < x->n_buckets; i++) {
                    const sc_agg_bucket *bk = &x->buckets[i];
                    double step = scaled ? (double)(d / 7) : (double)d;
                    int64_t key = (int64_t)(bk->dkey / step);
                    uint64_t want = 0;
                    for (uint32_t j = 0; j < n; j++)
                        want += v[j] / d == key;
                    if (bk->doc_count != want)
                        fail_msg("divisor %lld scaled %d wide %d: key %lld has %llu docs, want "
                                 "%llu",
                                 (long long)d, scaled, wide, (long long)key,
                                 (unsigned long long)bk->doc_count, (unsigned long long)want);
                    assert_int_equal(bk->subs[0]->count, want);
                    seen += bk->doc_count;
                }
                assert_int_equal(seen, n);
                sc_arena_fini(&a);
            }
            sc_segment_unref(seg);
            sc_bitset_fini(&live_bs);
            free(live);
            free(v);
        }
    }
}

/* A top-level auto_date_histogram without sub-aggregations counts into fixed cells that
 * coarsen as the values spread (agg_auto_histo.c); the same spec with a value_count sub takes
 * the recorded (doc, value) path. Both must give the same rung, keys and counts, and those must
 * match rounding every live value at that rung: values spanning seconds to decades (past a
 * day's 4,096 cells: the rest spilled to the record), before 1970, ascending, descending and
 * shuffled (cells moved and merged between windows and segments), one far outlier last, and
 * `buckets` from 1 to past the cells' limit of 512. Randomized: prints its seed. */
static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void test_auto_histo_cells_vs_record(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("test_auto_histo_cells_vs_record seed %u\n", seed);
    srand(seed);
    char adir[80];
    snprintf(adir, sizeof adir, "%s/autocells", dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", adir);
    assert_int_equal(system(cmd), 0);
    enum {
        NS = 2,
        PER = 5000,
        NV = NS * PER
    };
    static const int64_t spans[] = {
        20000,         3 * 3600000LL, 40 * 86400000LL, 3 * 365 * 86400000LL, 30 * 365 * 86400000LL,
        2 * 86400000LL};
    static const uint64_t sizes[] = {1, 7, 20, 200, 512, 600};
    enum {
        NSZ = sizeof sizes / sizeof *sizes
    };
    int64_t *v = calloc(NV, sizeof *v);
    bool *live = calloc(NV, sizeof *live);
    assert_non_null(v);
    assert_non_null(live);
    int segno = 0;
    for (size_t si = 0; si < sizeof spans / sizeof *spans; si++)
        for (int order = 0; order < 3; order++) {
            int64_t base = (rand() & 1) ? T0 : -T0 - 12345;
            for (size_t i = 0; i < NV; i++)
                v[i] = base +
                       (int64_t)(((uint64_t)rand() << 31 ^ (uint64_t)rand()) % (uint64_t)spans[si]);
            if (order < 2) {
                qsort(v, NV, sizeof *v, cmp_i64);
                for (size_t i = 0; order && i < NV / 2; i++) { /* descending */
                    int64_t t = v[i];
                    v[i] = v[NV - 1 - i];
                    v[NV - 1 - i] = t;
                }
            }
            if (si == 5)
                v[NV - 1] = base + 50 * 365 * 86400000LL; /* an outlier: the last window spills */
            sc_segment *seg[NS];
            sc_bitset bs[NS];
            sc_searcher_segment view[NS];
            for (int sgi = 0; sgi < NS; sgi++) {
                sc_segment_builder *b;
                assert_int_equal(sc_segment_builder_new(&b), SC_OK);
                for (uint32_t i = 0; i < PER; i++) {
                    fx_tagged tg;
                    sc_index_field f[3];
                    size_t nf = fx_tagged_fields(&tg, segno, i, 0, f);
                    f[nf++] = fx_numeric("t", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                                         &v[sgi * PER + i], 1);
                    assert_int_equal(fx_add(b, tg.id, f, nf), 0);
                }
                assert_int_equal(fx_segment_finish(b, adir, segno++, false, 7, &seg[sgi], &bs[sgi],
                                                   live + sgi * PER, &view[sgi]),
                                 0);
            }
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            for (size_t z = 0; z < NSZ; z++)
                for (int sub = 0; sub < 2; sub++) {
                    sc_agg_spec *ah = mk(&a, SC_AGG_AUTO_DATE_HISTOGRAM, "ah", "t", SC_AGG_V_DATE);
                    ah->size = sizes[z];
                    if (sub)
                        add_sub(&a, ah, mk(&a, SC_AGG_VALUE_COUNT, "vc", "t", SC_AGG_V_LONG));
                    add_sub(&a, root, ah);
                }
            sc_searcher s = {view, NS};
            sc_search_options o;
            sc_search_options_init(&o);
            sc_agg_shard_options so = {.n_shards = 1};
            sc_search_result res;
            sc_agg_error err;
            sc_agg_result *r;
            assert_int_equal(
                sc_agg_collect_shard(root, &s, sc_query_match_all(&a), &o, &so, &a, &r, &res, &err),
                SC_OK);
            for (size_t z = 0; z < NSZ; z++) {
                const sc_agg_result *x = top(r, 2 * z), *y = top(r, 2 * z + 1);
                if (x->rung != y->rung || x->n_buckets != y->n_buckets)
                    fail_msg("seed %u span %zu order %d size %llu: rung %u / %u, %zu / %zu "
                             "buckets",
                             seed, si, order, (unsigned long long)sizes[z], x->rung, y->rung,
                             (size_t)x->n_buckets, (size_t)y->n_buckets);
                sc_agg_rounding rr;
                sc_agg_auto_rung(x->rung, &root->subs[2 * z]->rounding.tz, &rr, NULL);
                /* each live value's bucket by rounding, found among the keys (ascending) */
                uint64_t *want_at = calloc(x->n_buckets + 1, sizeof *want_at);
                assert_non_null(want_at);
                for (size_t g = 0; g < NV; g++) {
                    if (!live[g])
                        continue;
                    int64_t k = sc_agg_round(&rr, v[g]);
                    size_t lo = 0, hi = x->n_buckets;
                    while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (x->buckets[mid].key < k)
                            lo = mid + 1;
                        else
                            hi = mid;
                    }
                    want_at[lo < x->n_buckets && x->buckets[lo].key == k ? lo : x->n_buckets]++;
                }
                assert_int_equal(want_at[x->n_buckets], 0); /* no value outside the keys */
                uint64_t seen = 0;
                for (size_t i = 0; i < x->n_buckets; i++) {
                    int64_t k = x->buckets[i].key;
                    uint64_t want = want_at[i];
                    if (x->buckets[i].doc_count != want || y->buckets[i].key != k ||
                        y->buckets[i].doc_count != want)
                        fail_msg("seed %u span %zu order %d size %llu: bucket %lld has %llu "
                                 "(record %lld: %llu), want %llu",
                                 seed, si, order, (unsigned long long)sizes[z], (long long)k,
                                 (unsigned long long)x->buckets[i].doc_count,
                                 (long long)y->buckets[i].key,
                                 (unsigned long long)y->buckets[i].doc_count,
                                 (unsigned long long)want);
                    seen += want;
                }
                free(want_at);
                uint64_t n_live = 0;
                for (size_t g = 0; g < NV; g++)
                    n_live += live[g];
                assert_int_equal(seen, n_live);
            }
            sc_arena_fini(&a);
            for (int sgi = 0; sgi < NS; sgi++) {
                sc_segment_unref(seg[sgi]);
                sc_bitset_fini(&bs[sgi]);
            }
        }
    free(v);
    free(live);
}

/* terms with min_doc_count 0 under a filter: every term of the field is listed, unmatched ones
 * with 0, with and without a sub-aggregation. */
static void test_terms_min_doc_count_zero(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    for (int subs = 0; subs < 2; subs++) {
        sc_agg_spec *t = mk(&a, SC_AGG_TERMS, "t", "k", SC_AGG_V_KEYWORD);
        t->size = 100;
        t->min_doc_count = 0;
        t->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        if (subs)
            add_sub(&a, t, mk(&a, SC_AGG_SUM, "s", "n", SC_AGG_V_LONG));
        add_sub(&a, root, t);
    }
    sc_agg_result *r = run(&a, root, 3, true);
    bool exists[N_TERMS] = {false};
    uint64_t cnt[N_TERMS] = {0};
    for (size_t g = 0; g < N_ALL; g++)
        for (uint32_t j = 0; j < docs[g].nk; j++) {
            exists[docs[g].k[j]] = true; /* deleted docs' terms stay in the segment */
            cnt[docs[g].k[j]] += doc_matches(&docs[g], 3);
        }
    for (int subs = 0; subs < 2; subs++) {
        const sc_agg_result *x = top(r, (size_t)subs);
        size_t n = 0;
        for (int t = 0; t < N_TERMS; t++)
            n += exists[t];
        assert_int_equal(x->n_buckets, n);
        for (size_t i = 0; i < x->n_buckets; i++)
            assert_int_equal(x->buckets[i].doc_count, cnt[term_id(x->buckets[i].bkey)]);
    }
    sc_arena_fini(&a);
}

/* significant_terms on "k" under a tag filter on one shard: subset/superset sizes, background
 * counts (doc frequencies, deleted docs included, as Lucene's), JLH scores and their order
 * against brute force. Over three shards the background counts of a term only add up over the
 * shards that matched it (as in Elasticsearch): there they are at most the truth. */
static void test_significant_terms_vs_model(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *st = mk(&a, SC_AGG_SIGNIFICANT_TERMS, "st", "k", SC_AGG_V_KEYWORD);
    st->size = 10;
    st->shard_size = 100;
    st->min_doc_count = 3;
    add_sub(&a, root, st);
    sc_agg_result *sharded = run(&a, root, 2, true);
    sc_agg_result *r = run(&a, root, 2, false);
    uint64_t sub_size = 0, sup_size = 0, sub_df[N_TERMS] = {0}, bg[N_TERMS] = {0};
    for (size_t g = 0; g < N_ALL; g++) {
        const mdoc *d = &docs[g];
        sup_size += d->live;
        sub_size += doc_matches(d, 2);
        for (uint32_t j = 0; j < d->nk; j++) {
            bg[d->k[j]]++;
            sub_df[d->k[j]] += doc_matches(d, 2);
        }
    }
    const sc_agg_result *x = top(r, 0);
    assert_int_equal(x->sum_other, sub_size);
    assert_int_equal(x->doc_count_error, sup_size);
    double best[N_TERMS];
    size_t n = 0;
    for (int t = 0; t < N_TERMS; t++) {
        double fg = (double)sub_df[t] / (double)sub_size, b = (double)bg[t] / (double)sup_size;
        double score = bg[t] && fg > b ? (fg - b) * (fg / b) : 0;
        if (sub_df[t] >= 3 && score > 0)
            best[n++] = score;
    }
    assert_int_equal(x->n_buckets, n < 10 ? n : 10);
    for (size_t i = 0; i < x->n_buckets; i++) {
        const sc_agg_bucket *b = &x->buckets[i];
        int t = term_id(b->bkey);
        assert_int_equal(b->doc_count, sub_df[t]);
        assert_int_equal(b->key, bg[t]);
        double fg = (double)sub_df[t] / (double)sub_size, bb = (double)bg[t] / (double)sup_size;
        near(b->dkey, (fg - bb) * (fg / bb));
        if (i)
            assert_true(x->buckets[i - 1].dkey >= b->dkey);
        /* nothing better was left out */
        size_t better = 0;
        for (size_t j = 0; j < n; j++)
            better += best[j] > b->dkey * (1 + 1e-12);
        assert_true(better <= i);
    }
    const sc_agg_result *y = top(sharded, 0);
    assert_int_equal(y->sum_other, sub_size);
    for (size_t i = 0; i < y->n_buckets; i++) {
        int t = term_id(y->buckets[i].bkey);
        assert_int_equal(y->buckets[i].doc_count, sub_df[t]);
        assert_true(y->buckets[i].key > 0 && (uint64_t)y->buckets[i].key <= bg[t]);
    }
    sc_arena_fini(&a);
}

/* Geo cell keys against published values: Elasticsearch's geotile_grid example (Amsterdam at
 * zoom 8 is tile 8/131/84) and the geohash of (57.64911, 10.40744), u4pruydqqvj. */
static void test_geo_cell_keys(void **state)
{
    (void)state;
    int64_t k = sc_agg_geotile_key(8, 52.374081, 4.912350);
    assert_int_equal(k >> 58, 8);
    assert_int_equal((k >> 29) & 0x1fffffff, 131);
    assert_int_equal(k & 0x1fffffff, 84);
    k = sc_agg_geotile_key(0, -90, 180); /* clamped into the single tile */
    assert_int_equal(k, 0);
    char text[13];
    k = sc_agg_geohash_key(11, sc_geo_encode_lat(57.64911), sc_geo_encode_lon(10.40744));
    assert_int_equal(k & 15, 11);
    sc_agg_geohash_text(k, text);
    assert_string_equal(text, "u4pruydqqvj");
    sc_agg_geohash_text(sc_agg_geohash_key(1, sc_geo_encode_lat(-90), sc_geo_encode_lon(-180)),
                        text);
    assert_string_equal(text, "0");
}

/* The fuzz seeds (tests/fuzz/corpus/agg_partial) decode and round-trip. */
static void test_fuzz_seeds_decode(void **state)
{
    (void)state;
    static const char *const names[] = {
        "terms_avg", "histogram",          "date_range_filters", "stats_nested",
        "composite", "multi_terms",        "auto_weighted",      "nested_reverse",
        "sampler",   "diversified_sampler"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/agg_partial/%s", SCRY_SOURCE_DIR,
                 names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t buf[4096];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_agg_result *r, *again;
        assert_int_equal(sc_agg_decode(buf, n, &a, &r), SC_OK);
        uint8_t *enc;
        size_t len;
        assert_int_equal(sc_agg_encode(r, &enc, &len), SC_OK);
        assert_int_equal(sc_agg_decode(enc, len, &a, &again), SC_OK);
        assert_true(sc_agg_result_equal(r, again));
        free(enc);
        sc_arena_fini(&a);
    }
}

/* max_buckets: a histogram with more buckets than allowed fails with too_many_buckets. */
static void test_max_buckets(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *h = mk(&a, SC_AGG_HISTOGRAM, "h", "d", SC_AGG_V_DOUBLE);
    h->interval = 0.5;
    add_sub(&a, root, h);
    sc_searcher s = {ss, N_SEG};
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = {.n_shards = 1, .max_buckets = 100};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *r;
    assert_int_equal(
        sc_agg_collect_shard(root, &s, sc_query_match_all(&a), &o, &so, &a, &r, &res, &err),
        SC_ELIMIT);
    assert_true(err.too_many_buckets);
    /* the gap fill at the final reduce is bounded too */
    h->interval = 1000;
    h->has_ext_bounds = true;
    h->ext_min = -1e9;
    h->ext_max = 1e9;
    so.max_buckets = 0;
    assert_int_equal(
        sc_agg_collect_shard(root, &s, sc_query_match_all(&a), &o, &so, &a, &r, &res, &err), SC_OK);
    sc_agg_result *out;
    assert_int_equal(sc_agg_reduce(root, &r, 1, true, 1000, &a, &out, &err), SC_ELIMIT);
    assert_true(err.too_many_buckets);
    /* the final reduce counts every bucket of the result, sub-aggregations' too */
    sc_agg_spec *root2 = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *tk = mk(&a, SC_AGG_TERMS, "tk", "k", SC_AGG_V_KEYWORD);
    tk->size = 40;
    add_sub(&a, tk, mk(&a, SC_AGG_TERMS, "in", "tag", SC_AGG_V_KEYWORD));
    add_sub(&a, root2, tk);
    assert_int_equal(
        sc_agg_collect_shard(root2, &s, sc_query_match_all(&a), &o, &so, &a, &r, &res, &err),
        SC_OK);
    assert_int_equal(sc_agg_reduce(root2, &r, 1, true, 0, &a, &out, &err), SC_OK);
    assert_int_equal(sc_agg_reduce(root2, &r, 1, true, 40, &a, &out, &err), SC_ELIMIT);
    assert_true(err.too_many_buckets);
    /* a small arena budget fails the collection with SC_ELIMIT, not a crash */
    sc_arena small;
    sc_arena_init(&small, 64 << 10);
    sc_agg_spec *big = mk(&small, SC_AGG_ROOT, "", NULL, 0);
    sc_agg_spec *tn = mk(&small, SC_AGG_DATE_HISTOGRAM, "t", "t", SC_AGG_V_DATE);
    tn->rounding.fixed_ms = 1;
    add_sub(&small, tn, mk(&small, SC_AGG_SUM, "s", "d", SC_AGG_V_DOUBLE));
    add_sub(&small, big, tn);
    sc_status st =
        sc_agg_collect_shard(big, &s, sc_query_match_all(&small), &o, &so, &small, &r, &res, &err);
    assert_true(st == SC_ELIMIT || st == SC_ENOMEM);
    sc_arena_fini(&small);
    sc_arena_fini(&a);
}

/* Rounding with DST transitions (a synthetic zone: -5h, -4h from 2021-03-14T07:00Z until
 * 2021-11-07T06:00Z): day buckets are 23 h and 25 h long around the changes. */
static void test_rounding_dst(void **state)
{
    (void)state;
    static const int64_t at[2] = {INT64_C(1615705200000), INT64_C(1636264800000)};
    static const int32_t off[2] = {-4 * 3600, -5 * 3600};
    sc_agg_rounding r = {.unit = SC_AGG_CAL_DAY};
    r.tz = (sc_agg_tz){.base_offset_ms = -5 * 3600000, .at_ms = at, .offset_s = off, .n_trans = 2};
    const int64_t h = 3600000;
    int64_t mar13 = INT64_C(1615611600000); /* 2021-03-13T00:00-05:00 */
    assert_int_equal(sc_agg_round(&r, mar13 + 5 * h), mar13);
    int64_t mar14 = sc_agg_round_next(&r, mar13);
    assert_int_equal(mar14, mar13 + 24 * h);
    int64_t mar15 = sc_agg_round_next(&r, mar14);
    assert_int_equal(mar15 - mar14, 23 * h);
    assert_int_equal(sc_agg_round(&r, mar15 - 1), mar14);
    int64_t nov7 = INT64_C(1636257600000); /* 2021-11-07T00:00-04:00 */
    assert_int_equal(sc_agg_round(&r, nov7 + 20 * h), nov7);
    assert_int_equal(sc_agg_round_next(&r, nov7) - nov7, 25 * h);
    /* hours repeat in the fall: the second 01:00 starts its own bucket */
    sc_agg_rounding rh = r;
    rh.unit = SC_AGG_CAL_HOUR;
    int64_t k1 = sc_agg_round(&rh, at[1] - h / 2), k2 = sc_agg_round(&rh, at[1] + h / 2);
    assert_int_equal(k2 - k1, h);
    assert_int_equal(sc_agg_round_next(&rh, k1), k2);
}

/* A partial terms reduce holds one bucket per distinct key: two shard results with the same
 * 2,000 keys reduce to 2,000 buckets in less memory than one bucket per input bucket would take
 * (the coordinator and the data nodes hold these partials; issue 13's reduce memory). */
static void test_terms_partial_reduce_memory(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *t = mk(&a, SC_AGG_TERMS, "t", "k", SC_AGG_V_KEYWORD);
    enum {
        NK = 2000
    };
    sc_agg_result *in[2];
    for (int i = 0; i < 2; i++) {
        sc_agg_result *r = sc_arena_calloc(&a, 1, sizeof *r);
        r->kind = SC_AGG_TERMS;
        r->n_reduced = 1;
        r->n_buckets = NK;
        r->buckets = sc_arena_calloc(&a, NK, sizeof *r->buckets);
        for (int k = 0; k < NK; k++) {
            char *key = sc_arena_alloc(&a, 8);
            snprintf(key, 8, "k%05d", i ? NK - 1 - k : k);
            r->buckets[k].bkey = sc_slice_make(key, 6);
            r->buckets[k].doc_count = 1 + (uint64_t)i;
        }
        in[i] = r;
    }
    sc_arena out;
    sc_arena_init(&out, 0);
    sc_agg_error err;
    sc_agg_result *red;
    assert_int_equal(sc_agg_reduce(t, in, 2, false, 0, &out, &red, &err), SC_OK);
    assert_int_equal(red->n_buckets, NK);
    for (size_t k = 0; k < red->n_buckets; k++)
        assert_int_equal(red->buckets[k].doc_count, 3);
    /* merged buckets plus the sort references: below a bucket per input bucket */
    assert_true(out.peak_bytes < 2 * NK * sizeof(sc_agg_bucket));
    sc_arena_fini(&out);
    sc_arena_fini(&a);
}

/* composite with one numeric source at the top level and no sub-aggregation (agg_composite.c,
 * collect_top: doc counts of the smallest keys in a bounded table, a key past them skipped)
 * against the same composite with a value_count sub (the tuple path): random sources
 * (date_histogram of "t" by a calendar unit or a fixed interval with an offset, in UTC or a
 * fixed zone; geotile_grid at a random zoom of "d" or "t" read as packed points; terms on "t"
 * or "d"), ascending or descending, size 1-40, under match_all or a term query, one shard or
 * three reduced, paged with `after`: every page's keys and doc counts equal. The seed is the
 * file's (printed; SCRY_SEED reruns). */
static void test_composite_top_equals_general(void **state)
{
    (void)state;
    static const sc_agg_cal_unit units[6] = {SC_AGG_CAL_HOUR,  SC_AGG_CAL_DAY,     SC_AGG_CAL_WEEK,
                                             SC_AGG_CAL_MONTH, SC_AGG_CAL_QUARTER, SC_AGG_CAL_YEAR};
    const int64_t hour = 3600000, day = 86400000;
    for (int iter = 0; iter < 40; iter++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        uint32_t kind = below(3);
        const char *field = below(2) ? "t" : "d";
        sc_agg_spec *s0;
        if (kind == 0) {
            s0 = mk(&a, SC_AGG_DATE_HISTOGRAM, "s", "t", SC_AGG_V_DATE);
            if (below(2)) {
                s0->rounding.unit = units[below(6)];
            } else {
                s0->rounding.fixed_ms = (1 + (int64_t)below(30)) * day;
                s0->rounding.offset_ms = (int64_t)below(24) * hour;
            }
            if (below(3) == 0)
                s0->rounding.tz.base_offset_ms = 19800000;
        } else if (kind == 1) {
            s0 = mk(&a, SC_AGG_GEOTILE_GRID, "s", field, SC_AGG_V_GEO_POINT);
            s0->precision = below(30);
        } else {
            s0 = mk(&a, SC_AGG_TERMS, "s", field, *field == 't' ? SC_AGG_V_LONG : SC_AGG_V_DOUBLE);
        }
        s0->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = below(2) == 1};
        uint32_t size = 1 + below(40);
        int qk = below(2) ? 0 : 1 + (int)below(4);
        bool sharded = below(2) == 1;
        sc_agg_spec *roots[2], *cps[2];
        sc_agg_spec **srcs = sc_arena_alloc(&a, sizeof *srcs);
        assert_non_null(srcs);
        srcs[0] = s0;
        for (int g = 0; g < 2; g++) {
            roots[g] = mk(&a, SC_AGG_ROOT, "", NULL, 0);
            cps[g] = mk(&a, SC_AGG_COMPOSITE, "c", NULL, 0);
            cps[g]->size = size;
            cps[g]->sources = srcs;
            cps[g]->n_sources = 1;
            if (g) /* a sub-aggregation: the tuple path */
                add_sub(&a, cps[g], mk(&a, SC_AGG_VALUE_COUNT, "vc", "d", SC_AGG_V_DOUBLE));
            add_sub(&a, roots[g], cps[g]);
        }
        sc_agg_value after[1];
        uint64_t seen = 0;
        for (int page = 0; page < 12; page++) {
            const sc_agg_result *xt = top(run(&a, roots[0], qk, sharded), 0);
            const sc_agg_result *xg = top(run(&a, roots[1], qk, sharded), 0);
            if (xt->n_buckets != xg->n_buckets)
                fail_msg("iter %d kind %u field %s size %u qk %d page %d: %zu buckets, not %zu",
                         iter, kind, field, size, qk, page, xt->n_buckets, xg->n_buckets);
            for (size_t i = 0; i < xt->n_buckets; i++) {
                assert_true(sc_slice_eq(xt->buckets[i].bkey, xg->buckets[i].bkey));
                assert_int_equal(xt->buckets[i].doc_count, xg->buckets[i].doc_count);
                seen += xt->buckets[i].doc_count;
            }
            if (!xt->n_buckets)
                break;
            assert_true(sc_agg_composite_parse(cps[0], xt->buckets[xt->n_buckets - 1].bkey, after));
            cps[0]->after = cps[1]->after = after;
        }
        assert_true(seen > 0);
        sc_arena_fini(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terms_vs_model),
        cmocka_unit_test(test_terms_error_bounds),
        cmocka_unit_test(test_terms_partial_reduce_memory),
        cmocka_unit_test(test_metrics_vs_model),
        cmocka_unit_test(test_histogram_vs_model),
        cmocka_unit_test(test_date_histogram_vs_model),
        cmocka_unit_test(test_range_filters_vs_model),
        cmocka_unit_test(test_nested_vs_model),
        cmocka_unit_test(test_codec_corrupt),
        cmocka_unit_test(test_top_hits_vs_model),
        cmocka_unit_test(test_bucket_script_vs_model),
        cmocka_unit_test(test_rare_terms_vs_model),
        cmocka_unit_test(test_max_buckets),
        cmocka_unit_test(test_rounding_dst),
        cmocka_unit_test(test_fuzz_seeds_decode),
        cmocka_unit_test(test_geo_cell_keys),
        cmocka_unit_test(test_terms_include_exclude),
        cmocka_unit_test(test_composite_paging_vs_model),
        cmocka_unit_test(test_multi_terms_vs_model),
        cmocka_unit_test(test_composite_single_valued_vs_model),
        cmocka_unit_test(test_composite_lone_histogram_vs_model),
        cmocka_unit_test(test_fused_date_histogram_equals_general),
        cmocka_unit_test(test_sampler_whole_segment_vs_model),
        cmocka_unit_test(test_composite_keywords_dense_vs_model),
        cmocka_unit_test(test_pipelines_vs_model),
        cmocka_unit_test(test_auto_date_histogram_vs_model),
        cmocka_unit_test(test_ip_range_bounds),
        cmocka_unit_test(test_weighted_avg_vs_model),
        cmocka_unit_test(test_points_path_equals_doc_values),
        cmocka_unit_test(test_terms_min_doc_count_zero),
        cmocka_unit_test(test_significant_terms_vs_model),
        cmocka_unit_test(test_fused_histogram_equals_general),
        cmocka_unit_test(test_fused_histogram_key_edges),
        cmocka_unit_test(test_auto_histo_cells_vs_record),
        cmocka_unit_test(test_composite_top_equals_general),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
