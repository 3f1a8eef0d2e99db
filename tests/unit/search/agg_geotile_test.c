/* Geotile keys from the row table (search/agg_geotile.c, sc__agg_tiles_key) against the
 * formula (sc_agg_geotile_key of the decoded point) on every point tried: every latitude
 * encoding of a 2^22-wide span around New York (the taxis' pickups) and of one across the
 * Mercator clamp at 85.05 degrees, at zooms 8, 12, 15, 20 and 29; random points over the
 * globe and in the New York box at every zoom 0..29; every latitude encoding one row
 * boundary either side of each boundary in the New York span; the extreme encodings. Every
 * key of a composite geotile source goes through this table, so equal keys here mean equal
 * buckets. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "index/bkd2.h"
#include "search/agg_internal.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t reference(uint32_t z, int32_t la, int32_t lo)
{
    return sc_agg_geotile_key(z, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
}

/* Fails at the first point where the table and the formula differ. */
static void check(sc__agg_tiles *t, int32_t la, int32_t lo)
{
    int64_t got = sc__agg_tiles_key(t, la, lo), want = reference(t->z, la, lo);
    if (got != want) {
        fprintf(stderr, "zoom %u, lat %d, lon %d: key %lld, the formula %lld\n", t->z, la, lo,
                (long long)got, (long long)want);
        fail();
    }
}

/* Every latitude encoding in [lo, lo + span) at zoom z, longitudes varied. */
static void sweep(uint32_t z, int64_t lo, int64_t span)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc__agg_tiles t;
    assert_int_equal(sc__agg_tiles_init(&t, &a, z), SC_OK);
    check(&t, (int32_t)(lo + span / 2), 0); /* the window centred as a collection would be */
    for (int64_t la = lo; la < lo + span; la++)
        check(&t, (int32_t)la, (int32_t)(uint32_t)rnd());
    sc_arena_fini(&a);
}

static void test_sweeps(void **state)
{
    (void)state;
    static const uint32_t zooms[] = {8, 12, 15, 20, 29};
    int64_t nyc = sc_geo_encode_lat(40.7), clamp = sc_geo_encode_lat(85.0511287798);
    for (size_t i = 0; i < sizeof zooms / sizeof *zooms; i++) {
        sweep(zooms[i], nyc - ((int64_t)1 << 21), (int64_t)1 << 22);
        sweep(zooms[i], clamp - ((int64_t)1 << 20), (int64_t)1 << 21);
    }
}

/* A random encoding in [lo, hi]. */
static int32_t in(int64_t lo, int64_t hi)
{
    return (int32_t)(lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)));
}

static void test_random_points(void **state)
{
    (void)state;
    int64_t blat = sc_geo_encode_lat(40.4), tlat = sc_geo_encode_lat(41.1);
    int64_t llon = sc_geo_encode_lon(-74.4), rlon = sc_geo_encode_lon(-73.6);
    for (uint32_t z = 0; z <= 29; z++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc__agg_tiles nyc, globe;
        assert_int_equal(sc__agg_tiles_init(&nyc, &a, z), SC_OK);
        assert_int_equal(sc__agg_tiles_init(&globe, &a, z), SC_OK);
        for (int i = 0; i < 200000; i++) {
            check(&nyc, in(blat, tlat), in(llon, rlon));
            check(&globe, (int32_t)(uint32_t)rnd(), (int32_t)(uint32_t)rnd());
        }
        static const int32_t edge[] = {INT32_MIN, INT32_MIN + 1, -1,       0,
                                       1,         INT32_MAX - 1, INT32_MAX};
        for (size_t i = 0; i < 7; i++)
            for (size_t j = 0; j < 7; j++) {
                check(&nyc, edge[i], edge[j]);
                check(&globe, edge[i], edge[j]);
            }
        sc_arena_fini(&a);
    }
}

/* The largest latitude encoding in [lo, hi] whose row (formula) is at least the row of lo,
 * i.e. the last one before the row changes (rows fall as the latitude grows). */
static int64_t row_end(uint32_t z, int64_t lo, int64_t hi)
{
    int64_t y = reference(z, (int32_t)lo, 0) & ((1 << 29) - 1);
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if ((reference(z, (int32_t)mid, 0) & ((1 << 29) - 1)) >= y)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void test_row_boundaries(void **state)
{
    (void)state;
    int64_t lo = sc_geo_encode_lat(40.4), hi = sc_geo_encode_lat(41.1);
    for (uint32_t z = 10; z <= 24; z += 2) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc__agg_tiles t;
        assert_int_equal(sc__agg_tiles_init(&t, &a, z), SC_OK);
        check(&t, (int32_t)((lo + hi) / 2), 0);
        int n = 0;
        for (int64_t e = lo; e < hi && n < 400; n++) {
            int64_t b = row_end(z, e, hi);
            for (int64_t d = b - 300; d <= b + 300; d++)
                check(&t, (int32_t)d, (int32_t)(uint32_t)rnd());
            e = b + 1;
        }
        sc_arena_fini(&a);
    }
}

int main(void)
{
    const char *env = getenv("SCRY_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("agg_geotile_test seed %llu (SCRY_SEED reruns)\n", (unsigned long long)seed);
    rng_state = seed * 0x9e3779b97f4a7c15u | 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_points),
        cmocka_unit_test(test_row_boundaries),
        cmocka_unit_test(test_sweeps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
