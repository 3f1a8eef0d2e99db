/* Shared pieces of the aggregation tests over real segments (agg_test, agg_sketch_test,
 * agg_geo_test): a spec with the common defaults, adding a sub-aggregation, collecting one shard,
 * the encode/decode round trip of a partial, the partial-then-final reduce of three shards,
 * the teardown of the segments, and the small sorts of a model document's values.
 * Header-only; include after cmocka.h and fixture.h. */
#ifndef SC_TESTS_SEARCH_AGG_FIXTURE_H
#define SC_TESTS_SEARCH_AGG_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_spec_init.h"
#include "fixture.h"

/* A spec in a: size 10, min_doc_count 1, ordered by count descending; the tests set the rest. */
static inline sc_agg_spec *fx_agg_spec(sc_arena *a, sc_agg_kind kind, const char *name,
                                       const char *field, sc_agg_vtype vt)
{
    sc_agg_spec *s = sc_arena_calloc(a, 1, sizeof *s);
    assert_non_null(s);
    return fx_agg_spec_init(s, kind, name, field, vt);
}

/* Appends c to p's subs (arena-allocated). */
static inline void fx_agg_add_sub(sc_arena *a, sc_agg_spec *p, sc_agg_spec *c)
{
    sc_agg_spec **subs = sc_arena_alloc(a, (p->n_subs + 1) * sizeof *subs);
    assert_non_null(subs);
    if (p->n_subs)
        memcpy(subs, p->subs, p->n_subs * sizeof *subs);
    subs[p->n_subs++] = c;
    p->subs = subs;
}

/* Collects root over the n segment views at ss with q as one shard of n_shards; asserts
 * success and stores the number of matching docs in *total (when not NULL). */
static inline sc_agg_result *fx_agg_collect(sc_arena *a, const sc_agg_spec *root,
                                            sc_searcher_segment *ss, size_t n, const sc_query *q,
                                            uint32_t n_shards, uint64_t *total)
{
    sc_searcher s = {ss, n};
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = {.n_shards = n_shards};
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *r = NULL;
    sc_status st = sc_agg_collect_shard(root, &s, q, &o, &so, a, &r, &res, &err);
    if (st != SC_OK)
        fprintf(stderr, "collect: %s %s\n", sc_status_str(st), err.reason);
    assert_int_equal(st, SC_OK);
    if (total)
        *total = res.total;
    return r;
}

/* r after an encode/decode round trip (as a partial crosses nodes); asserts the decoded
 * result equals r. */
static inline sc_agg_result *fx_agg_round_trip(sc_arena *a, const sc_agg_result *r)
{
    uint8_t *bytes;
    size_t len;
    sc_agg_result *back;
    assert_int_equal(sc_agg_encode(r, &bytes, &len), SC_OK);
    assert_int_equal(sc_agg_decode(bytes, len, a, &back), SC_OK);
    free(bytes);
    assert_true(sc_agg_result_equal(r, back));
    return back;
}

/* The final result of one shard's partial r. */
static inline sc_agg_result *fx_agg_final(sc_arena *a, const sc_agg_spec *root, sc_agg_result *r)
{
    sc_agg_error err;
    sc_agg_result *out;
    assert_int_equal(sc_agg_reduce(root, &r, 1, true, 0, a, &out, &err), SC_OK);
    return out;
}

/* The final result of three shards' partials: a partial reduce of the first two (as a data
 * node would), then the final reduce of that and the third (as the coordinator). */
static inline sc_agg_result *fx_agg_reduce3(sc_arena *a, const sc_agg_spec *root,
                                            sc_agg_result *parts[3])
{
    sc_agg_error err;
    sc_agg_result *two, *out;
    assert_int_equal(sc_agg_reduce(root, parts, 2, false, 0, a, &two, &err), SC_OK);
    sc_agg_result *last[2] = {two, parts[2]};
    assert_int_equal(sc_agg_reduce(root, last, 2, true, 0, a, &out, &err), SC_OK);
    return out;
}

/* Unrefs the n segments, frees their live bitsets and removes dir (fx_end). */
static inline int fx_agg_teardown(sc_segment **segs, sc_bitset *lives, int n, const char *dir)
{
    for (int s = 0; s < n; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
    }
    return fx_end(dir);
}

/* Makes k[0..*nk) (at most 2 term ids) distinct and ascending. */
static inline void fx_sort2_distinct(uint32_t *k, uint32_t *nk)
{
    if (*nk == 2 && k[0] == k[1])
        *nk = 1;
    if (*nk == 2 && k[0] > k[1]) {
        uint32_t t = k[0];
        k[0] = k[1];
        k[1] = t;
    }
}

/* Sorts v[0..n) ascending (insertion sort: n is a handful of values). */
static inline void fx_sort_i64(int64_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

#endif
