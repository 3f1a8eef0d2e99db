/* 2-D BKD tree (geo points): property tests against a brute-force scan (seed printed,
 * SCRY_SEED reruns): random points with duplicates, all-equal leaves, clusters, the poles and
 * the dateline (INT32_MIN/MAX), multi-valued and sparse docs, small and default leaf sizes;
 * random boxes (dateline-crossing ones included) and a custom shape through the callback path;
 * every leaf round-trips; random corruption is rejected or read in bounds (run under ASan);
 * version 3 segments still open and a geo field with and without SC_FIELD_GEO merges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/merge.h"
#include "index/segment.h"

typedef struct gpts {
    int32_t *lat, *lon;
    uint32_t *d;
    size_t n;
    uint32_t bound;
} gpts;

static int32_t rand_coord(int dist, int axis)
{
    switch (dist) {
    case 0: /* a tight cluster with many duplicates */ return (int32_t)t_below(40) - 20;
    case 1: { /* full range, extremes (poles / dateline) often */
        uint32_t r = t_below(8);
        if (r == 0)
            return INT32_MIN;
        if (r == 1)
            return INT32_MAX;
        return (int32_t)(uint32_t)t_rand();
    }
    case 2: /* all equal */ return axis ? 123456 : -98765;
    default: /* one dimension narrow, the other wide */
        return axis ? (int32_t)(uint32_t)t_rand() : (int32_t)t_below(1000);
    }
}

static void make(gpts *p, size_t n, int dist, int docs)
{
    p->bound = docs == 2 ? 5000000u : (uint32_t)(n + 1);
    p->n = n;
    p->lat = malloc((n ? n : 1) * sizeof(int32_t));
    p->lon = malloc((n ? n : 1) * sizeof(int32_t));
    p->d = malloc((n ? n : 1) * sizeof(uint32_t));
    assert_non_null(p->lat);
    assert_non_null(p->lon);
    assert_non_null(p->d);
    for (size_t i = 0; i < n; i++) {
        p->lat[i] = rand_coord(dist, 0);
        p->lon[i] = rand_coord(dist, 1);
        p->d[i] = docs == 0 ? (uint32_t)i : t_below(p->bound);
    }
}

static void gfree(gpts *p)
{
    free(p->lat);
    free(p->lon);
    free(p->d);
}

static void build(const gpts *p, uint32_t leaf, sc_buf *buf, sc_bkd2 *t)
{
    buf->len = 0;
    assert_int_equal(sc_bkd2_write(p->lat, p->lon, p->d, p->n, p->bound, leaf, buf), SC_OK);
    assert_int_equal(sc_bkd2_open(sc_slice_make(buf->ptr, buf->len), t), SC_OK);
}

static int32_t pick(const gpts *p, int axis)
{
    uint32_t r = t_below(5);
    if (r == 0)
        return axis ? INT32_MIN : INT32_MIN + (int32_t)t_below(3);
    if (r == 1)
        return INT32_MAX - (int32_t)t_below(3);
    if (r == 2 || !p->n)
        return (int32_t)(uint32_t)t_rand();
    size_t i = t_below((uint32_t)p->n);
    int64_t v = (int64_t)(axis ? p->lon[i] : p->lat[i]) + (int64_t)t_below(3) - 1;
    return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* A "diamond" |lat - c| + |lon - c| <= r in encoded space (int64 math): a shape that is neither
 * a box nor known to the tree, relating cells by their corners (the diamond is convex). */
typedef struct diamond {
    int64_t clat, clon, r;
} diamond;

static int64_t dist1(const diamond *m, int64_t lat, int64_t lon)
{
    return llabs(lat - m->clat) + llabs(lon - m->clon);
}

static sc_bkd2_relation diamond_relate(const void *ctx, const sc_bkd2_cell *c)
{
    const diamond *m = ctx;
    int64_t nlat = m->clat < c->min_lat ? c->min_lat : m->clat > c->max_lat ? c->max_lat : m->clat;
    int64_t nlon = m->clon < c->min_lon ? c->min_lon : m->clon > c->max_lon ? c->max_lon : m->clon;
    if (dist1(m, nlat, nlon) > m->r)
        return SC_BKD2_OUTSIDE;
    if (dist1(m, c->min_lat, c->min_lon) <= m->r && dist1(m, c->min_lat, c->max_lon) <= m->r &&
        dist1(m, c->max_lat, c->min_lon) <= m->r && dist1(m, c->max_lat, c->max_lon) <= m->r)
        return SC_BKD2_INSIDE;
    return SC_BKD2_CROSSES;
}

static void diamond_match(const void *ctx, const int32_t *lat, const int32_t *lon, uint32_t n,
                          uint8_t *hit)
{
    for (uint32_t i = 0; i < n; i++)
        hit[i] = dist1(ctx, lat[i], lon[i]) <= ((const diamond *)ctx)->r;
}

static void check_shape(const gpts *p, const sc_bkd2 *t, const sc_bkd2_shape *s, sc_bitset *got,
                        sc_bitset *want)
{
    sc_bitset_clear_all(got);
    sc_bitset_clear_all(want);
    uint64_t want_pts = 0;
    uint8_t hit;
    for (size_t i = 0; i < p->n; i++) {
        s->match(s->ctx, &p->lat[i], &p->lon[i], 1, &hit);
        if (hit) {
            sc_bitset_set(want, p->d[i]);
            want_pts++;
        }
    }
    sc_bkd2_stats st;
    assert_int_equal(sc_bkd2_intersect(t, s, got, &st), SC_OK);
    assert_int_equal(st.points, want_pts);
    if (memcmp(got->words, want->words, sc_bitset_words_for(p->bound) * 8) != 0)
        fail_msg("shape: bitsets differ (n=%zu)", p->n);
}

static void check_leaves(const gpts *p, const sc_bkd2 *t)
{
    uint32_t L = t->leaf_size;
    uint32_t *docs = malloc(L * sizeof(uint32_t));
    int32_t *lat = malloc(L * sizeof(int32_t)), *lon = malloc(L * sizeof(int32_t));
    uint64_t total = 0, sum_lat = 0, sum_lon = 0, want_lat = 0, want_lon = 0;
    for (uint32_t j = 0; j < sc_bkd2_n_leaves(t); j++) {
        uint32_t n;
        assert_int_equal(sc_bkd2_leaf_read(t, j, docs, lat, lon, &n), SC_OK);
        sc_bkd2_cell c;
        sc_bkd2_leaf_cell(t, j, &c);
        for (uint32_t i = 0; i < n; i++) {
            assert_true(lat[i] >= c.min_lat && lat[i] <= c.max_lat);
            assert_true(lon[i] >= c.min_lon && lon[i] <= c.max_lon);
            assert_true(i == 0 || docs[i - 1] <= docs[i]);
            sum_lat += (uint32_t)lat[i] + docs[i];
            sum_lon += (uint32_t)lon[i] * 3u + docs[i];
        }
        total += n;
    }
    for (size_t i = 0; i < p->n; i++) {
        want_lat += (uint32_t)p->lat[i] + p->d[i];
        want_lon += (uint32_t)p->lon[i] * 3u + p->d[i];
    }
    assert_int_equal(total, p->n);
    assert_int_equal(sum_lat, want_lat);
    assert_int_equal(sum_lon, want_lon);
    free(docs);
    free(lat);
    free(lon);
}

static void test_random_vs_brute(void **state)
{
    (void)state;
    t_seed("bkd2_random");
    sc_buf buf = {0};
    static const uint32_t leaves[] = {1, 2, 3, 7, 16, 100, 512};
    for (int rep = 0; rep < 50; rep++) {
        gpts p;
        size_t n = t_below(4) == 0 ? t_below(20) : t_below(5000);
        int dist = (int)t_below(4), docs = (int)t_below(3);
        make(&p, n, dist, docs);
        sc_bkd2 t;
        build(&p, leaves[t_below(7)], &buf, &t);
        assert_int_equal(sc_bkd2_n_points(&t), n);
        check_leaves(&p, &t);
        sc_bitset got, want;
        assert_int_equal(sc_bitset_init(&got, p.bound), SC_OK);
        assert_int_equal(sc_bitset_init(&want, p.bound), SC_OK);
        for (size_t i = 0; i < n; i++)
            sc_bitset_set(&want, p.d[i]);
        assert_int_equal(sc_bkd2_n_docs(&t), sc_bitset_count(&want));
        for (int q = 0; q < 25; q++) {
            sc_bkd2_box b = {pick(&p, 0), pick(&p, 0), pick(&p, 1), pick(&p, 1)};
            if (t_below(6) && b.min_lat > b.max_lat) {
                int32_t x = b.min_lat;
                b.min_lat = b.max_lat;
                b.max_lat = x;
            } /* min_lon > max_lon stays: a dateline-crossing box */
            sc_bkd2_shape s = sc_bkd2_box_shape(&b);
            check_shape(&p, &t, &s, &got, &want);
            diamond m = {pick(&p, 0), pick(&p, 1), (int64_t)(t_rand() % (1ull << (t_below(33))))};
            sc_bkd2_shape ds = {diamond_relate, diamond_match, &m};
            check_shape(&p, &t, &ds, &got, &want);
        }
        sc_bkd2_box all = {INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
        sc_bkd2_shape s = sc_bkd2_box_shape(&all);
        sc_bkd2_stats st;
        sc_bitset_clear_all(&got);
        assert_int_equal(sc_bkd2_intersect(&t, &s, &got, &st), SC_OK);
        assert_int_equal(st.points, n);
        assert_int_equal(st.leaves_crossing, 0);
        assert_int_equal(sc_bitset_count(&got), sc_bkd2_n_docs(&t));
        sc_bitset_fini(&got);
        sc_bitset_fini(&want);
        gfree(&p);
    }
    sc_vec_free(&buf);
}

/* Inside cells are added without comparing: a box holding a whole cluster visits no crossing
 * leaf, and a box around one of two far clusters skips the other. */
static void test_inside_and_outside(void **state)
{
    (void)state;
    gpts p;
    make(&p, 4096, 2, 0);
    for (size_t i = 2048; i < 4096; i++)
        p.lat[i] = 1000000, p.lon[i] = -1000000;
    sc_buf buf = {0};
    sc_bkd2 t;
    build(&p, 0, &buf, &t);
    sc_bitset bs;
    assert_int_equal(sc_bitset_init(&bs, p.bound), SC_OK);
    sc_bkd2_box b = {-100000, -90000, 100000, 200000};
    sc_bkd2_shape s = sc_bkd2_box_shape(&b);
    sc_bkd2_stats st;
    assert_int_equal(sc_bkd2_intersect(&t, &s, &bs, &st), SC_OK);
    assert_int_equal(st.points, 2048);
    assert_int_equal(st.leaves_crossing, 0);
    assert_int_equal(st.leaves_inside, 4);
    assert_int_equal(sc_bitset_count(&bs), 2048);
    assert_true(sc_bitset_test(&bs, 0) && !sc_bitset_test(&bs, 2048));
    sc_bitset_fini(&bs);
    gfree(&p);
    sc_vec_free(&buf);
}

/* Quantization helpers match Lucene's GeoEncodingUtils on the edges. */
static void test_encoding(void **state)
{
    (void)state;
    assert_int_equal(sc_geo_encode_lat(90.0), INT32_MAX);
    assert_int_equal(sc_geo_encode_lat(-90.0), INT32_MIN);
    assert_int_equal(sc_geo_encode_lon(180.0), INT32_MAX);
    assert_int_equal(sc_geo_encode_lon(-180.0), INT32_MIN);
    assert_int_equal(sc_geo_encode_lat(0.0), 0);
    assert_int_equal(sc_geo_encode_lat(-1e-9), -1);
    assert_int_equal(sc_geo_encode_lat_ceil(-1e-9), 0);
    assert_int_equal(sc_geo_encode_lat_ceil(90.0), INT32_MAX);
    for (int i = 0; i < 1000; i++) {
        double lat = -90.0 + 180.0 * (double)t_below(1000000) / 1e6;
        int32_t e = sc_geo_encode_lat(lat);
        assert_true(sc_geo_decode_lat(e) <= lat);
        assert_true(lat < 90.0 ? sc_geo_decode_lat(e) + SC_GEO_LAT_DECODE > lat : 1);
        assert_true(sc_geo_encode_lat_ceil(lat) - e <= 1);
    }
}

/* Random byte flips in a valid tree: open either fails or intersect/leaf reads return
 * SC_OK / SC_ECORRUPT without reading out of bounds (ASan). */
static void test_corruption(void **state)
{
    (void)state;
    t_seed("bkd2_corrupt");
    gpts p;
    make(&p, 3000, 1, 1);
    sc_buf buf = {0};
    sc_bkd2 t;
    build(&p, 64, &buf, &t);
    uint8_t *copy = malloc(buf.len);
    uint32_t docs[64];
    int32_t lat[64], lon[64];
    for (int rep = 0; rep < 400; rep++) {
        memcpy(copy, buf.ptr, buf.len);
        for (int k = 0; k < 1 + (int)t_below(4); k++)
            copy[t_below((uint32_t)buf.len)] ^= (uint8_t)(1u << t_below(8));
        size_t len = t_below(10) == 0 ? t_below((uint32_t)buf.len) : buf.len;
        sc_bkd2 c;
        if (sc_bkd2_open(sc_slice_make(copy, len), &c) != SC_OK || c.leaf_size > 64 ||
            c.doc_bound > (1u << 24))
            continue;
        sc_bitset bs;
        assert_int_equal(sc_bitset_init(&bs, c.doc_bound ? c.doc_bound : 1), SC_OK);
        sc_bkd2_box b = {-1000000, 1000000000, INT32_MIN, 5};
        sc_bkd2_shape s = sc_bkd2_box_shape(&b);
        sc_status st = sc_bkd2_intersect(&c, &s, &bs, NULL);
        assert_true(st == SC_OK || st == SC_ECORRUPT);
        for (uint32_t j = 0; j < sc_bkd2_n_leaves(&c); j++) {
            uint32_t n;
            st = sc_bkd2_leaf_read(&c, j, docs, lat, lon, &n);
            assert_true(st == SC_OK || st == SC_ECORRUPT);
        }
        sc_bitset_fini(&bs);
    }
    free(copy);
    gfree(&p);
    sc_vec_free(&buf);
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    sc_buf buf = {0};
    sc_bkd2 t;
    assert_int_equal(sc_bkd2_write(NULL, NULL, NULL, 0, 10, 0, &buf), SC_OK);
    assert_int_equal(sc_bkd2_open(sc_slice_make(buf.ptr, buf.len), &t), SC_OK);
    assert_int_equal(sc_bkd2_n_leaves(&t), 0);
    int32_t la = 1, lo = 2;
    uint32_t d = 10;
    buf.len = 0;
    assert_int_equal(sc_bkd2_write(&la, &lo, &d, 1, 10, 0, &buf), SC_EINVAL);
    uint8_t junk[40] = "BKD1";
    assert_int_equal(sc_bkd2_open(sc_slice_make(junk, sizeof junk), &t), SC_ECORRUPT);
    sc_vec_free(&buf);
}

/* A geo field merges with its 2-D tree whichever input comes first, every point kept, and a
 * segment of an older format version is refused at open rather than misread. */
static void test_versions_and_merge(void **state)
{
    (void)state;
    char dir[256];
    t_tmpdir(dir, sizeof dir);
    sc_segment *segs[2];
    for (int s = 0; s < 2; s++) {
        sc_segment_builder *b;
        assert_int_equal(sc_segment_builder_new(&b), SC_OK);
        for (int i = 0; i < 700; i++) {
            int64_t v = (int64_t)(((uint64_t)(uint32_t)(i * 1000) << 32) | (uint32_t)(-i * 7));
            sc_index_field f = {.name = sc_slice_cstr("g"),
                                .kind = SC_FIELD_NUMERIC,
                                .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO,
                                .values = &v,
                                .n_values = 1};
            sc_index_doc doc = {.id = sc_slice_cstr("x"),
                                .source = sc_slice_cstr("{}"),
                                .fields = &f,
                                .n_fields = 1};
            assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
        }
        char name[8];
        snprintf(name, sizeof name, "s%d", s);
        assert_int_equal(sc_segment_builder_write(b, dir, name, NULL), SC_OK);
        assert_int_equal(sc_segment_open(dir, name, &segs[s]), SC_OK);
        sc_segment_builder_free(b);
    }
    for (int order = 0; order < 2; order++) {
        sc_merge_input in[2] = {{segs[order], NULL}, {segs[1 - order], NULL}};
        char name[8];
        snprintf(name, sizeof name, "m%d", order);
        assert_int_equal(sc_segment_merge(in, 2, dir, name, NULL), SC_OK);
        sc_segment *m;
        assert_int_equal(sc_segment_open(dir, name, &m), SC_OK);
        const sc_field_info *f = sc_segment_field(m, sc_slice_cstr("g"));
        assert_non_null(f);
        assert_true((f->flags & SC_FIELD_GEO) != 0);
        sc_bkd2 t;
        assert_int_equal(sc_segment_points2(m, f, &t), SC_OK);
        assert_int_equal(sc_bkd2_n_points(&t), 1400);
        sc_segment_unref(m);
    }
    sc_segment_unref(segs[0]);
    sc_segment_unref(segs[1]);
    /* the same bytes with an older version number are refused */
    uint8_t *bytes;
    size_t len;
    char path[300];
    snprintf(path, sizeof path, "%s/s0.seg", dir);
    assert_int_equal(sc_file_read_all(path, &bytes, &len), SC_OK);
    assert_true(len > 16);
    bytes[8] = 3;
    sc_segment *old;
    sc_index_error err;
    assert_int_equal(sc_segment_open_bytes(sc_slice_make(bytes, len), "v3", false, &old, &err),
                     SC_ECORRUPT);
    free(bytes);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_brute),  cmocka_unit_test(test_inside_and_outside),
        cmocka_unit_test(test_encoding),         cmocka_unit_test(test_corruption),
        cmocka_unit_test(test_empty_and_errors), cmocka_unit_test(test_versions_and_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
