/* can_match (search/can_match.c) on real segments: three segments whose numeric field "n"
 * (points and doc values) holds values in separate windows, a doc-values-only field "m" and a
 * tag. Random ranges, alone, under bool must / filter / should / must_not and constant_score,
 * over every non-empty subset of the segments: when can_match says no, the search counts 0
 * (never a false "cannot match"), and a range disjoint from every window is refused; the
 * numeric bounds equal the model's min/max. Seed printed, SCRY_SEED reruns. */
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
#include "search/can_match.h"
#include "search/query.h"
#include "search/searcher.h"

#include "fixture.h"

#define N_SEG 3
#define PER_SEG 300

static int64_t nv[N_SEG][PER_SEG];
static bool has_n[N_SEG][PER_SEG];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static char dir[64];

/* Segment s holds n in [s * 1000, s * 1000 + 400). */
static int setup(void **state)
{
    (void)state;
    if (fx_begin("can_match", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            fx_tagged k;
            sc_index_field f[4];
            size_t nf = fx_tagged_fields(&k, s, d, below(3), f);
            has_n[s][d] = below(4) != 0;
            nv[s][d] = s * 1000 + (int64_t)below(400);
            int64_t m = (int64_t)below(5000);
            if (has_n[s][d])
                f[nf++] = fx_numeric("n", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &nv[s][d], 1);
            f[nf++] = fx_numeric("m", SC_FIELD_DOCVALUES, &m, 1);
            if (fx_add(b, k.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, true, 1, &segs[s], &lives[s], live, &ss[s]) != 0)
            return -1;
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

static sc_query *rand_range(sc_arena *a, const char *field)
{
    int64_t lo = (int64_t)below(3400) - 200, hi = lo + (int64_t)below(700);
    return sc_query_range(a, sc_slice_cstr(field), &lo, &hi, 1);
}

/* A random query tree of depth <= depth over ranges on n (mostly), m and tag terms. */
static sc_query *rand_query(sc_arena *a, int depth)
{
    uint32_t pick = depth > 0 ? below(7) : below(3);
    switch (pick) {
    case 0:
    case 1: return rand_range(a, "n");
    case 2:
        return below(2) ? rand_range(a, "m")
                        : sc_query_term(a, sc_slice_cstr("tag"), sc_slice_cstr("t1"));
    case 3: return sc_query_constant_score(a, rand_query(a, depth - 1));
    case 4: return sc_query_match_none(a);
    default: {
        sc_query *b = sc_query_bool(a);
        uint32_t n = 1 + below(3);
        for (uint32_t i = 0; b && i < n; i++) {
            static const sc_query_occur occ[] = {SC_OCCUR_MUST, SC_OCCUR_FILTER, SC_OCCUR_SHOULD,
                                                 SC_OCCUR_MUST_NOT};
            sc_query *c = rand_query(a, depth - 1);
            if (!c || sc_query_bool_add(a, b, occ[below(4)], c) != SC_OK)
                return NULL;
        }
        return b;
    }
    }
}

static void test_never_refuses_a_match(void **state)
{
    (void)state;
    uint64_t refused = 0;
    for (int q = 0; q < 400; q++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *query = rand_query(&a, 3);
        assert_non_null(query);
        uint32_t mask = 1 + below((1u << N_SEG) - 1); /* a shard of some of the segments */
        sc_searcher_segment sub[N_SEG];
        size_t n = 0;
        for (int s = 0; s < N_SEG; s++)
            if (mask >> s & 1)
                sub[n++] = ss[s];
        sc_searcher se = {sub, n};
        sc_search_options o;
        sc_search_options_init(&o);
        o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        sc_search_result res;
        assert_int_equal(sc_search_count(&se, query, &o, &a, &res), SC_OK);
        if (!sc_query_can_match(&se, query)) {
            refused++;
            if (res.total != 0)
                fail_msg("query %d (segments %x): can_match says no, %llu docs match", q, mask,
                         (unsigned long long)res.total);
        }
        sc_arena_fini(&a);
    }
    fprintf(stderr, "[can_match] %llu of 400 random queries refused\n",
            (unsigned long long)refused);
    assert_true(refused > 0);
}

static void test_disjoint_ranges(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_searcher all = {ss, N_SEG}, first = {ss, 1}, none = {ss, 0};
    int64_t lo[2] = {500, 1200}, hi[2] = {900, 1300};
    sc_query *gap = sc_query_range(&a, sc_slice_cstr("n"), lo, hi, 1); /* between windows */
    sc_query *two = sc_query_range(&a, sc_slice_cstr("n"), lo, hi, 2); /* OR: 2nd hits seg 1 */
    sc_query *mq = sc_query_range(&a, sc_slice_cstr("m"), lo, hi, 1);  /* doc values only */
    sc_query *absent = sc_query_range(&a, sc_slice_cstr("nope"), lo, hi, 1);
    assert_false(sc_query_can_match(&all, gap));
    assert_true(sc_query_can_match(&all, two));
    assert_false(sc_query_can_match(&first, two));
    assert_true(sc_query_can_match(&all, mq));
    assert_false(sc_query_can_match(&all, absent));
    assert_true(sc_query_can_match(&none, sc_query_match_all(&a))); /* only ranges refuse */
    assert_false(sc_query_can_match(&none, two)); /* an empty shard holds no value */
    /* bool: a required disjoint clause refuses; should needs one that can match */
    sc_query *b = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_MUST, sc_query_match_all(&a)), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, b, SC_OCCUR_FILTER, gap), SC_OK);
    assert_false(sc_query_can_match(&all, b));
    sc_query *sh = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, sh, SC_OCCUR_SHOULD, gap), SC_OK);
    assert_int_equal(sc_query_bool_add(&a, sh, SC_OCCUR_SHOULD, absent), SC_OK);
    assert_false(sc_query_can_match(&all, sh));
    assert_int_equal(sc_query_bool_add(&a, sh, SC_OCCUR_SHOULD, two), SC_OK);
    assert_true(sc_query_can_match(&all, sh));
    sc_query *mn = sc_query_bool(&a);
    assert_int_equal(sc_query_bool_add(&a, mn, SC_OCCUR_MUST_NOT, two), SC_OK);
    assert_true(sc_query_can_match(&all, mn)); /* must_not is never used to refuse */
    sc_arena_fini(&a);
}

static void test_numeric_bounds(void **state)
{
    (void)state;
    for (uint32_t mask = 1; mask < (1u << N_SEG); mask++) {
        sc_searcher_segment sub[N_SEG];
        size_t n = 0;
        int64_t want_lo = INT64_MAX, want_hi = INT64_MIN;
        for (int s = 0; s < N_SEG; s++) {
            if (!(mask >> s & 1))
                continue;
            sub[n++] = ss[s];
            for (int d = 0; d < PER_SEG; d++)
                if (has_n[s][d]) {
                    want_lo = nv[s][d] < want_lo ? nv[s][d] : want_lo;
                    want_hi = nv[s][d] > want_hi ? nv[s][d] : want_hi;
                }
        }
        sc_searcher se = {sub, n};
        int64_t lo = 0, hi = 0;
        assert_int_equal(sc_searcher_numeric_bounds(&se, sc_slice_cstr("n"), &lo, &hi), SC_OK);
        assert_true(lo == want_lo && hi == want_hi);
        assert_int_equal(sc_searcher_numeric_bounds(&se, sc_slice_cstr("m"), &lo, &hi),
                         SC_EUNSUPPORTED);
        assert_int_equal(sc_searcher_numeric_bounds(&se, sc_slice_cstr("nope"), &lo, &hi),
                         SC_ENOTFOUND);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_refuses_a_match),
        cmocka_unit_test(test_disjoint_ranges),
        cmocka_unit_test(test_numeric_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
