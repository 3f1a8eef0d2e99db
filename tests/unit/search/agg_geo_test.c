/* geo_bounds and geo_centroid (search/agg_geo.c) against brute force over random documents:
 * three segments with deletes, 0..2 geo points per doc (some across the dateline), at the top
 * level and under terms on "tag"; each segment collected as its own shard and reduced equals
 * the brute force (bounds exactly, centroid sums within 1e-9), and the partials round-trip
 * through the binary encoding. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/bkd2.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/agg.h"
#include "search/query.h"
#include "search/searcher.h"

#include "agg_fixture.h"
#include "fixture.h"

#define N_SEG 3
#define PER_SEG 700

typedef struct gdoc {
    int32_t lat[2], lon[2]; /* encoded */
    uint32_t n, tag;
    bool live;
} gdoc;

static gdoc docs[N_SEG * PER_SEG];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static char dir[64];
static int world; /* per run: 0 all west, 1 all east, 2 both (dateline crossings) */

static int setup(void **state)
{
    (void)state;
    if (fx_begin("agg_geo", dir, sizeof dir) != 0)
        return -1;
    world = (int)below(3);
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            gdoc *m = &docs[s * PER_SEG + d];
            m->n = below(3);
            m->tag = below(4);
            int64_t v[2];
            for (uint32_t i = 0; i < m->n; i++) {
                m->lat[i] = (int32_t)(rnd() >> 32);
                int32_t lon = (int32_t)(rnd() >> 33); /* >= 0: east */
                if (world == 0 || (world == 2 && below(2)))
                    lon = -lon - 1;
                m->lon[i] = lon;
                v[i] = (int64_t)(((uint64_t)(uint32_t)m->lat[i] << 32) | (uint32_t)m->lon[i]);
            }
            if (m->n == 2 && v[0] > v[1]) { /* doc values ascending */
                int64_t t = v[0];
                v[0] = v[1];
                v[1] = t;
            }
            fx_tagged tg;
            sc_index_field f[4];
            size_t nf = fx_tagged_fields(&tg, s, d, m->tag, f);
            f[1].flags |= SC_FIELD_DOCVALUES;
            if (m->n)
                f[nf++] = fx_numeric("g", SC_FIELD_DOCVALUES, v, m->n);
            if (fx_add(b, tg.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, false, 5, &segs[s], &lives[s], live, &ss[s]) != 0)
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
    s->wrap_longitude = true;
    return s;
}

#define add_sub fx_agg_add_sub

/* The brute force over live docs with tag (or any: tag < 0). */
typedef struct model {
    uint64_t count;
    double top, bottom, pos_l, pos_r, neg_l, neg_r, sum_lat, sum_lon;
} model;

static model brute(int tag)
{
    model m = {0, -INFINITY, INFINITY, INFINITY, -INFINITY, INFINITY, -INFINITY, 0, 0};
    for (size_t g = 0; g < N_SEG * PER_SEG; g++) {
        const gdoc *d = &docs[g];
        if (!d->live || (tag >= 0 && d->tag != (uint32_t)tag))
            continue;
        for (uint32_t i = 0; i < d->n; i++) {
            double lat = sc_geo_decode_lat(d->lat[i]), lon = sc_geo_decode_lon(d->lon[i]);
            m.count++;
            m.top = fmax(m.top, lat);
            m.bottom = fmin(m.bottom, lat);
            if (lon >= 0) {
                m.pos_l = fmin(m.pos_l, lon);
                m.pos_r = fmax(m.pos_r, lon);
            } else {
                m.neg_l = fmin(m.neg_l, lon);
                m.neg_r = fmax(m.neg_r, lon);
            }
            m.sum_lat += lat;
            m.sum_lon += lon;
        }
    }
    return m;
}

static void check(const sc_agg_result *b, const sc_agg_result *c, const model *m)
{
    assert_int_equal(b->count, m->count);
    assert_int_equal(c->count, m->count);
    if (!m->count)
        return;
    assert_true(b->max == m->top && b->min == m->bottom);
    assert_true(b->sum == m->pos_l && b->sum_c == m->pos_r);
    assert_true(b->sum_sq == m->neg_l && b->sum_sq_c == m->neg_r);
    assert_true(fabs(c->sum - m->sum_lat) <= 1e-9 * (1 + fabs(m->sum_lat)));
    assert_true(fabs(c->sum_sq - m->sum_lon) <= 1e-9 * (1 + fabs(m->sum_lon)));
}

/* One shard per segment, each partial encoded and decoded, reduced: equals the brute force
 * at the top level and in every tag bucket. */
static void test_geo_vs_brute_force(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    add_sub(&a, root, mk(&a, SC_AGG_GEO_BOUNDS, "b", "g", SC_AGG_V_GEO_POINT));
    add_sub(&a, root, mk(&a, SC_AGG_GEO_CENTROID, "c", "g", SC_AGG_V_GEO_POINT));
    sc_agg_spec *t = mk(&a, SC_AGG_TERMS, "t", "tag", SC_AGG_V_KEYWORD);
    add_sub(&a, t, mk(&a, SC_AGG_GEO_BOUNDS, "b", "g", SC_AGG_V_GEO_POINT));
    add_sub(&a, t, mk(&a, SC_AGG_GEO_CENTROID, "c", "g", SC_AGG_V_GEO_POINT));
    add_sub(&a, root, t);
    sc_agg_result *parts[N_SEG];
    for (int s = 0; s < N_SEG; s++)
        parts[s] = fx_agg_round_trip(
            &a, fx_agg_collect(&a, root, ss + s, 1, sc_query_match_all(&a), N_SEG, NULL));
    sc_agg_result *fin;
    sc_agg_error err;
    assert_int_equal(sc_agg_reduce(root, parts, N_SEG, true, 0, &a, &fin, &err), SC_OK);
    model all = brute(-1);
    check(fin->buckets[0].subs[0], fin->buckets[0].subs[1], &all);
    const sc_agg_result *tr = fin->buckets[0].subs[2];
    assert_int_equal(tr->n_buckets, 4);
    for (size_t i = 0; i < tr->n_buckets; i++) {
        model m = brute(tr->buckets[i].bkey.ptr[1] - '0');
        check(tr->buckets[i].subs[0], tr->buckets[i].subs[1], &m);
    }
    sc_arena_fini(&a);
}

/* An unmapped field: empty results that reduce to count 0. */
static void test_geo_unmapped(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_spec *root = mk(&a, SC_AGG_ROOT, "", NULL, 0);
    add_sub(&a, root, mk(&a, SC_AGG_GEO_BOUNDS, "b", "none", SC_AGG_V_UNMAPPED));
    add_sub(&a, root, mk(&a, SC_AGG_GEO_CENTROID, "c", "none", SC_AGG_V_UNMAPPED));
    sc_agg_result *fin = fx_agg_final(
        &a, root, fx_agg_collect(&a, root, ss, N_SEG, sc_query_match_all(&a), 1, NULL));
    assert_int_equal(fin->buckets[0].subs[0]->count, 0);
    assert_int_equal(fin->buckets[0].subs[1]->count, 0);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geo_vs_brute_force),
        cmocka_unit_test(test_geo_unmapped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
