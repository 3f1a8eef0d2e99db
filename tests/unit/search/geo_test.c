/* Geo queries through the searcher (sc_query_geo -> plan -> per-segment 2-D points or doc
 * values scan): two segments of random points (clusters, poles, the dateline, duplicates,
 * multi-valued docs up to 20 points, docs without a point) with deletes in one, a field with
 * points and doc values ("g") and one with doc values only ("d"); random boxes
 * (dateline-crossing ones included) and distances (tiny to antipodal, centers at poles and on
 * the dateline) alone and under a bool with a keyword term; counts equal a brute-force scan
 * with the same predicate and, within float ambiguity at the edge, an independent haversine
 * model; exists; then the two segments are merged (deletes dropped) and every query is checked
 * again on the merged segment. Seed printed, SCRY_SEED reruns. */
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
#include <unistd.h>

#include "index/bkd.h"
#include "index/builder.h"
#include "index/merge.h"
#include "index/segment.h"
#include "search/geo.h"
#include "search/query.h"
#include "search/searcher.h"

#include "fixture.h"

static double uni(double a, double b)
{
    return a + (b - a) * (double)(rnd() >> 11) / 9007199254740992.0;
}

#define N_SEG 2
#define PER_SEG 3000
#define N_ALL (N_SEG * PER_SEG)

typedef struct gdoc {
    int64_t g[20]; /* packed points */
    uint32_t ng;
    uint32_t tag;
    bool live;
} gdoc;

static gdoc docs[N_ALL];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static sc_searcher_segment ss[N_SEG];
static sc_searcher searcher = {ss, N_SEG};
static sc_segment *merged;
static sc_searcher_segment ms[1];
static sc_searcher msearcher = {ms, 1};
static char dir[64];

static void rand_point(double *lat, double *lon)
{
    switch (below(6)) {
    case 0: /* a cluster near Paris with duplicates */
        *lat = 48.85 + (double)below(50) * 1e-3;
        *lon = 2.35 + (double)below(50) * 1e-3;
        break;
    case 1: /* the dateline */
        *lat = uni(-60, 60);
        *lon = below(2) ? uni(179, 180) : uni(-180, -179);
        break;
    case 2: /* near the poles, and exactly on them */
        *lat = below(4) == 0 ? (below(2) ? 90.0 : -90.0) : (below(2) ? uni(85, 90) : uni(-90, -85));
        *lon = uni(-180, 180);
        break;
    default:
        *lat = uni(-90, 90);
        *lon = uni(-180, 180);
        break;
    }
}

static int64_t pack(double lat, double lon)
{
    return (int64_t)(((uint64_t)(uint32_t)sc_geo_encode_lat(lat) << 32) |
                     (uint32_t)sc_geo_encode_lon(lon));
}

static void unpack(int64_t v, int32_t *lat, int32_t *lon)
{
    *lat = (int32_t)(uint32_t)((uint64_t)v >> 32);
    *lon = (int32_t)(uint32_t)(uint64_t)v;
}

static int setup(void **state)
{
    (void)state;
    if (fx_begin("geo", dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++) {
            gdoc *m = &docs[s * PER_SEG + d];
            m->ng = below(8) == 0     ? 0
                    : below(100) == 0 ? 17 + below(4) /* past the scan's 16-value fast path */
                    : below(6) == 0   ? 2 + below(2)
                                      : 1;
            for (uint32_t i = 0; i < m->ng; i++) {
                double lat, lon;
                rand_point(&lat, &lon);
                m->g[i] = pack(lat, lon);
            }
            m->tag = below(3);
            fx_tagged k;
            sc_index_field f[4];
            size_t nf = fx_tagged_fields(&k, s, d, m->tag, f);
            if (m->ng) {
                f[nf++] = fx_numeric("g", SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO,
                                     m->g, m->ng);
                f[nf++] = fx_numeric("d", SC_FIELD_DOCVALUES | SC_FIELD_GEO, m->g, m->ng);
            }
            if (fx_add(b, k.id, f, nf) != 0)
                return -1;
        }
        bool live[PER_SEG];
        if (fx_segment_finish(b, dir, s, s == 0, 5, &segs[s], &lives[s], live, &ss[s]) != 0)
            return -1;
        for (uint32_t d = 0; d < PER_SEG; d++)
            docs[s * PER_SEG + d].live = live[d];
    }
    sc_merge_input in[N_SEG];
    for (int s = 0; s < N_SEG; s++)
        in[s] = (sc_merge_input){segs[s], ss[s].live};
    if (sc_segment_merge(in, N_SEG, dir, "m", NULL) != SC_OK ||
        sc_segment_open(dir, "m", &merged) != SC_OK)
        return -1;
    ms[0].seg = merged;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
    }
    sc_segment_unref(merged);
    return fx_end(dir);
}

static void rand_shape(sc_geo_shape *s)
{
    memset(s, 0, sizeof *s);
    if (below(2)) {
        s->kind = SC_GEO_BOX;
        double a = uni(-90, 90), b = uni(-90, 90);
        if (below(8) == 0)
            a = 90.0, b = uni(80, 90);
        s->top = a > b ? a : b;
        s->bottom = a > b ? b : a;
        s->left = uni(-180, 180);
        s->right = below(4) == 0 ? uni(-180, 180) : s->left + uni(0, 40); /* some cross */
        if (s->right > 180)
            s->right -= 360;
        if (below(10) == 0)
            s->left = 170, s->right = -170;
        return;
    }
    s->kind = SC_GEO_DISTANCE;
    double lat, lon;
    rand_point(&lat, &lon);
    s->lat = lat;
    s->lon = lon;
    static const double radii[] = {5, 500, 50e3, 500e3, 2000e3, 8000e3, 15000e3, 21000e3};
    s->radius_m = radii[below(8)] * uni(0.5, 1.5);
}

/* Independent model: decoded point vs the shape in degrees / meters; *edge when within float
 * ambiguity of the boundary. */
static bool model(const sc_geo_shape *s, int32_t elat, int32_t elon, bool *edge)
{
    double lat = sc_geo_decode_lat(elat), lon = sc_geo_decode_lon(elon);
    if (s->kind == SC_GEO_BOX) {
        bool in_lat = lat >= s->bottom && lat <= s->top && s->bottom < 90.0;
        bool in_lon = s->left <= s->right ? lon >= s->left && lon <= s->right
                                          : lon >= s->left || lon <= s->right;
        *edge = fabs(lat - s->top) < 1e-7 || fabs(lat - s->bottom) < 1e-7 ||
                fabs(lon - s->left) < 1e-7 || fabs(lon - s->right) < 1e-7;
        return in_lat && in_lon;
    }
    double d = sc_geo_arc_distance_m(s->lat, s->lon, lat, lon);
    *edge = fabs(d - s->radius_m) < 1e-6 * s->radius_m + 1e-3;
    return d <= s->radius_m;
}

static void check(const sc_searcher *sr, bool use_merged, int q, const sc_geo_shape *shape,
                  const char *field, int with_tag, uint32_t tag)
{
    sc_geo_compiled g;
    sc_geo_compile(shape, &g);
    uint64_t want = 0, want_model = 0, edges = 0, first = UINT64_MAX, pos = 0;
    for (uint32_t i = 0; i < N_ALL; i++) {
        const gdoc *m = &docs[i];
        if (!m->live)
            continue;
        bool hit = false, mhit = false, edge = false;
        for (uint32_t k = 0; k < m->ng; k++) {
            int32_t la, lo;
            unpack(m->g[k], &la, &lo);
            bool e;
            hit = hit || sc_geo_matches(&g, la, lo);
            mhit = mhit || model(shape, la, lo, &e);
            edge = edge || e;
        }
        if (with_tag && m->tag != tag)
            hit = mhit = false, edge = false;
        if (hit && first == UINT64_MAX)
            first = use_merged ? pos : i;
        want += hit;
        want_model += mhit;
        edges += edge;
        pos++;
    }
    uint64_t diff = want > want_model ? want - want_model : want_model - want;
    if (diff > edges)
        fail_msg("query %d: predicate %llu vs haversine model %llu (edges %llu)", q,
                 (unsigned long long)want, (unsigned long long)want_model,
                 (unsigned long long)edges);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *gq = sc_query_geo(&a, sc_slice_cstr(field), shape);
    sc_query *query = with_tag ? fx_with_tag(&a, gq, tag, SC_OCCUR_FILTER) : gq;
    assert_non_null(query);
    sc_search_options o;
    sc_search_options_init(&o);
    o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
    sc_search_result res;
    assert_int_equal(sc_search_count(sr, query, &o, &a, &res), SC_OK);
    if (res.total != want)
        fail_msg("query %d (%s %s, kind %d, merged %d): count %llu, model %llu", q, field,
                 with_tag ? "+tag" : "", shape->kind, use_merged, (unsigned long long)res.total,
                 (unsigned long long)want);
    assert_int_equal(sc_search_execute(sr, query, &o, &a, &res), SC_OK);
    assert_int_equal(res.total, want);
    if (!with_tag && want)
        assert_int_equal(res.hits[0].global_doc, first);
    sc_arena_fini(&a);
}

static void test_geo_vs_model(void **state)
{
    (void)state;
    for (int q = 0; q < 300; q++) {
        sc_geo_shape s;
        rand_shape(&s);
        const char *field = below(4) == 0 ? "d" : "g";
        int with_tag = below(3) == 0;
        uint32_t tag = below(3);
        check(&searcher, false, q, &s, field, with_tag, tag);
        check(&msearcher, true, q, &s, field, with_tag, tag);
    }
}

static void test_exists(void **state)
{
    (void)state;
    uint64_t want = 0;
    for (uint32_t i = 0; i < N_ALL; i++)
        want += docs[i].live && docs[i].ng;
    static const char *const fields[] = {"g", "d"};
    for (int k = 0; k < 2; k++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_search_options o;
        sc_search_options_init(&o);
        sc_search_result res;
        sc_query *q = sc_query_exists(&a, sc_slice_cstr(fields[k]));
        assert_int_equal(sc_search_count(&searcher, q, &o, &a, &res), SC_OK);
        assert_int_equal(res.total, want);
        assert_int_equal(sc_search_count(&msearcher, q, &o, &a, &res), SC_OK);
        assert_int_equal(res.total, want);
        sc_arena_fini(&a);
    }
}

/* The merged segment keeps the 2-D points of "g" (and none for the doc-values-only "d"). */
static void test_merge_keeps_2d(void **state)
{
    (void)state;
    const sc_field_info *f = sc_segment_field(merged, sc_slice_cstr("g"));
    assert_non_null(f);
    assert_true(f->flags & SC_FIELD_GEO);
    sc_bkd2 t;
    assert_int_equal(sc_segment_points2(merged, f, &t), SC_OK);
    uint64_t pts = 0;
    for (uint32_t i = 0; i < N_ALL; i++)
        pts += docs[i].live ? docs[i].ng : 0;
    assert_int_equal(sc_bkd2_n_points(&t), pts);
    sc_bkd b1;
    assert_int_equal(sc_segment_points(merged, f, &b1), SC_ENOTFOUND);
    const sc_field_info *fd = sc_segment_field(merged, sc_slice_cstr("d"));
    assert_int_equal(sc_segment_points2(merged, fd, &t), SC_ENOTFOUND);
}

static void test_distance_math(void **state)
{
    (void)state;
    /* one degree of arc on the sphere of radius 6371008.7714 m */
    double deg = 6371008.7714 * M_PI / 180.0;
    assert_true(fabs(sc_geo_arc_distance_m(0, 0, 1, 0) - deg) < 1e-6);
    assert_true(fabs(sc_geo_arc_distance_m(0, 179.5, 0, -179.5) - deg) < 1e-6);
    assert_true(fabs(sc_geo_arc_distance_m(90, 0, 90, 123) - 0) < 1e-6);
    assert_true(fabs(sc_geo_arc_distance_m(0, 0, 0, 180) - 180 * deg) < 1e-3);
    /* Paris - New York, about 5837 km */
    double d = sc_geo_arc_distance_m(48.8566, 2.3522, 40.7128, -74.0060);
    assert_true(d > 5.83e6 && d < 5.84e6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance_math),
        cmocka_unit_test(test_geo_vs_model),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_merge_keeps_2d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
