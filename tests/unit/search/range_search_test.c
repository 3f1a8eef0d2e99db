/* Range queries through the searcher (sc_query_range -> plan -> per-segment range iterator):
 * two segments (deletes in one) with a numeric field that has points and doc values ("n"), one
 * with doc values only ("m") and a single-valued one with points ("s", counted from the tree
 * alone where nothing is deleted); random ranges and numeric terms, alone, under a bool filter
 * with a keyword term, and in must_not; counts (sc_search_count and sc_search_execute totals)
 * and hits equal a brute-force scan. A field on every doc ("d", one value each: the windowed
 * doc-values scan) checks the per-segment choice of a bounded top-k range (points bitset or a
 * doc-values scan that stops at the first hits): the same hits as the points, and each way is
 * chosen where it is the cheaper. Seed printed, SCRY_SEED reruns. */
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
#include "search/query.h"
#include "search/range.h"
#include "search/searcher.h"

#include "fixture.h"

#define N_SEG 2
#define PER_SEG 2000
#define N_ALL (N_SEG * PER_SEG)

typedef struct mdoc {
    int64_t n[2], m[2], sv, dv;
    uint32_t nn, nm, ns;
    uint32_t tag;
    bool live;
} mdoc;

static mdoc docs[N_ALL];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static sc_searcher searcher = {ss, N_SEG};
static char dir[64];

static int64_t rv(void)
{
    uint32_t r = below(30);
    if (r == 0)
        return INT64_MIN;
    if (r == 1)
        return INT64_MAX;
    return (int64_t)below(10000) - 5000;
}

static int setup(void **state)
{
    (void)state;
    if (fx_begin("range_search", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            mdoc *m = &docs[s * PER_SEG + d];
            m->nn = below(3);
            m->nm = below(3);
            for (uint32_t i = 0; i < m->nn; i++)
                m->n[i] = rv();
            for (uint32_t i = 0; i < m->nm; i++)
                m->m[i] = rv();
            if (m->nn == 2 && m->n[0] > m->n[1]) {
                int64_t t = m->n[0];
                m->n[0] = m->n[1];
                m->n[1] = t;
            }
            if (m->nm == 2 && m->m[0] > m->m[1]) {
                int64_t t = m->m[0];
                m->m[0] = m->m[1];
                m->m[1] = t;
            }
            m->ns = below(5) != 0; /* single-valued field "s" with points: counted from the tree */
            m->sv = rv();
            m->tag = below(3);
            fx_tagged k;
            m->dv = (int64_t)below(100000) - 50000;
            sc_index_field f[6];
            size_t nf = fx_tagged_fields(&k, s, d, m->tag, f);
            if (m->nn)
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, m->n, m->nn);
            if (m->ns)
                f[nf++] = fx_numeric("s", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m->sv, 1);
            if (m->nm)
                f[nf++] = fx_numeric("m", SC_FIELD_DOCVALUES, m->m, m->nm);
            f[nf++] = fx_numeric("d", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &m->dv, 1);
            if (fx_add(b, k.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, s == 0, 5, &segs[s], &lives[s], live, &ss[s]) != 0)
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
    }
    return fx_end(dir);
}

static bool in(const int64_t *v, uint32_t c, const int64_t *lo, const int64_t *hi, size_t n)
{
    for (uint32_t i = 0; i < c; i++)
        for (size_t k = 0; k < n; k++)
            if (v[i] >= lo[k] && v[i] <= hi[k])
                return true;
    return false;
}

static void test_range_queries_vs_model(void **state)
{
    (void)state;
    const sc_field_info *fi = sc_segment_field(segs[0], sc_slice_cstr("n"));
    fprintf(stderr, "field n has points: %s\n", fi && (fi->flags & SC_FIELD_POINTS) ? "yes" : "no");
    for (int q = 0; q < 150; q++) {
        int which = (int)below(3); /* n (points, multi-valued), m (doc values), s (points) */
        size_t n = 1 + below(3);
        int64_t lo[3], hi[3];
        for (size_t k = 0; k < n; k++) {
            int64_t a = rv(), b = below(3) == 0 ? a : rv();
            lo[k] = a < b ? a : b;
            hi[k] = a < b ? b : a;
        }
        int shape = (int)below(3); /* 0 alone, 1 filter with tag, 2 tag must_not range */
        uint32_t tag = below(3);
        uint64_t want = 0;
        uint64_t first = UINT64_MAX;
        for (uint32_t g = 0; g < N_ALL; g++) {
            const mdoc *m = &docs[g];
            if (!m->live)
                continue;
            bool r = which == 1   ? in(m->m, m->nm, lo, hi, n)
                     : which == 2 ? in(&m->sv, m->ns, lo, hi, n)
                                  : in(m->n, m->nn, lo, hi, n);
            bool match = shape == 0 ? r : shape == 1 ? (r && m->tag == tag) : (!r && m->tag == tag);
            if (match) {
                want++;
                if (first == UINT64_MAX)
                    first = g;
            }
        }
        sc_arena a;
        sc_arena_init(&a, 0);
        static const char *const fields[] = {"n", "m", "s"};
        sc_query *rq = sc_query_range(&a, sc_slice_cstr(fields[which]), lo, hi, n);
        assert_non_null(rq);
        sc_query *query =
            shape ? fx_with_tag(&a, rq, tag, shape == 1 ? SC_OCCUR_FILTER : SC_OCCUR_MUST_NOT) : rq;
        assert_non_null(query);
        sc_search_options o;
        sc_search_options_init(&o);
        o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        sc_search_result res;
        assert_int_equal(sc_search_count(&searcher, query, &o, &a, &res), SC_OK);
        if (res.total != want)
            fail_msg("query %d (%s, shape %d): count %llu, model %llu", q, fields[which], shape,
                     (unsigned long long)res.total, (unsigned long long)want);
        assert_int_equal(sc_search_execute(&searcher, query, &o, &a, &res), SC_OK);
        assert_int_equal(res.total, want);
        if (shape == 0 && want) /* constant scores: ties by doc id, so the first hit is known */
            assert_int_equal(res.hits[0].global_doc, first);
        /* bounded totals (early termination; a lazy doc-values scan may be chosen) */
        o.track_total_hits = 1 + below(50);
        o.size = 1 + below(5);
        assert_int_equal(sc_search_execute(&searcher, query, &o, &a, &res), SC_OK);
        uint64_t tn = (uint64_t)o.track_total_hits;
        assert_int_equal(res.total, want < tn ? want : tn);
        if (want != tn) /* reaching exactly the threshold may say either */
            assert_true(res.total_gte == (want > tn));
        assert_int_equal(res.n_hits, want < o.size ? want : o.size);
        if (shape == 0 && want)
            assert_int_equal(res.hits[0].global_doc, first);
        sc_arena_fini(&a);
    }
}

/* The bounded top-k range of one segment, both ways: the first k live docs of
 * sc_range_segment_bounded's iterator equal the points bitset's (sc_range_iter with
 * SC_RANGE_POINTS), the count is right, a narrow range takes the points and a wide one the
 * scan; and through the searcher with track_total_hits false the hits are the model's first
 * `size` docs. */
static void test_bounded_range_choice(void **state)
{
    (void)state;
    bool seen[2] = {false, false};
    for (int q = 0; q < 200; q++) {
        int64_t lo = (int64_t)below(100000) - 50000;
        /* widths from a few values (points win) to most of the domain (the scan wins) */
        int64_t width = q % 4 == 0 ? (int64_t)below(60) : (int64_t)below(1u << (4 + q % 14));
        int64_t hi = lo + width;
        uint64_t k = 1 + below(20);
        for (int s = 0; s < N_SEG; s++) {
            sc_arena a;
            sc_arena_init(&a, 0);
            const sc_bitset *live = ss[s].n_deleted ? ss[s].live : NULL;
            uint64_t limit = below(2) ? 0 : 1 + below(3000);
            uint64_t count;
            sc_doc_iter *it;
            bool pts;
            assert_int_equal(sc_range_segment_bounded(&a, segs[s], sc_slice_cstr("d"), lo, hi, live,
                                                      limit, k, 1.0f, &count, &it, &pts),
                             SC_OK);
            seen[pts] = true;
            /* the model: live docs of segment s with lo <= d <= hi, in doc order */
            uint64_t want = 0;
            uint32_t first[20];
            size_t nf = 0;
            for (uint32_t d = 0; d < PER_SEG; d++) {
                const mdoc *m = &docs[s * PER_SEG + d];
                if (m->dv >= lo && m->dv <= hi && m->live) {
                    if (nf < k)
                        first[nf++] = d;
                    want++;
                }
            }
            /* the scan's count stops after `limit` points before deletes are applied (a lower
             * bound, as sc_range_count documents); the points' count is exact */
            if (limit && (pts || !live))
                assert_true(count >= (want < limit ? want : limit) && count <= want);
            else if (limit)
                assert_true(count <= want);
            else
                assert_int_equal(count, 0);
            sc_doc_iter *ref;
            sc_range_source src = {NULL, NULL, sc_segment_n_docs(segs[s])};
            sc_bkd bkd;
            sc_dv_numeric dv;
            const sc_field_info *fi = sc_segment_field(segs[s], sc_slice_cstr("d"));
            assert_int_equal(sc_segment_points(segs[s], fi, &bkd), SC_OK);
            assert_int_equal(sc_dv_numeric_open(segs[s], fi, &dv), SC_OK);
            src.bkd = &bkd;
            src.dv = &dv;
            assert_int_equal(
                sc_range_iter(&a, &src, &lo, &hi, 1, UINT64_MAX, 1.0f, SC_RANGE_POINTS, &ref, NULL),
                SC_OK);
            size_t got = 0;
            if (it) {
                if (live) {
                    it = sc_iter_live_docs(&a, it, live);
                    ref = sc_iter_live_docs(&a, ref, live);
                }
                while (got < k) {
                    uint32_t d = sc_doc_iter_next(it), r = sc_doc_iter_next(ref);
                    if (d != r)
                        fail_msg("range [%lld, %lld] segment %d hit %zu: %u, points %u",
                                 (long long)lo, (long long)hi, s, got, d, r);
                    if (d == SC_DOC_END)
                        break;
                    assert_int_equal(d, first[got]);
                    got++;
                }
            }
            assert_int_equal(got, nf);
            sc_arena_fini(&a);
        }
        /* through the searcher, no total: the first `size` live docs in shard order */
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *rq = sc_query_range(&a, sc_slice_cstr("d"), &lo, &hi, 1);
        assert_non_null(rq);
        sc_search_options o;
        sc_search_options_init(&o);
        o.track_total_hits = below(2) ? SC_TRACK_TOTAL_HITS_NONE : (int64_t)(1 + below(100));
        o.size = (size_t)k;
        sc_search_result res;
        assert_int_equal(sc_search_execute(&searcher, rq, &o, &a, &res), SC_OK);
        size_t h = 0;
        for (uint32_t g = 0; g < N_ALL && h < k; g++)
            if (docs[g].live && docs[g].dv >= lo && docs[g].dv <= hi) {
                assert_true(h < res.n_hits);
                assert_int_equal(res.hits[h].global_doc, g);
                h++;
            }
        assert_int_equal(res.n_hits, h);
        sc_arena_fini(&a);
    }
    /* both ways were taken (narrow ranges: points; wide ones: the scan) */
    assert_true(seen[0] && seen[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_queries_vs_model),
        cmocka_unit_test(test_bounded_range_choice),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
