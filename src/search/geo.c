/* Geo box and distance queries: shape compilation (encoded bounds, haversine threshold, cell
 * relations) and the per-segment iterator from the 2-D points or a doc-values scan. See
 * geo.h. */
#include "search/geo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "index/docvalues.h"

#define DEG (M_PI / 180.0)
/* Bounding boxes of circles are padded by this many degrees (about 10 cm) so float error at
 * their edges never drops a point the exact test would keep; the test decides. */
#define BOX_PAD_DEG 1e-6
/* A cell is inside a circle only when its corners are within this fraction of the haversine
 * threshold: the margin covers float error between the corners' and the points' distances
 * (relative error ~1e-9 at 1 m radii). */
#define INSIDE_MARGIN (1.0 - 1e-4)
/* and outside only when its nearest point is beyond this multiple of the threshold */
#define OUTSIDE_MARGIN (1.0 + 1e-4)

static double hav(double lat1, double cos1, double lat2, double dlon)
{
    double a = sin((lat2 - lat1) * 0.5), b = sin(dlon * 0.5);
    return a * a + cos1 * cos(lat2) * b * b;
}

double sc_geo_arc_distance_m(double lat1, double lon1, double lat2, double lon2)
{
    double h = hav(lat1 * DEG, cos(lat1 * DEG), lat2 * DEG, (lon2 - lon1) * DEG);
    h = h < 0 ? 0 : h > 1 ? 1 : h;
    return 2.0 * SC_GEO_EARTH_RADIUS_M * asin(sqrt(h));
}

static void compile_box(const sc_geo_shape *s, sc_geo_compiled *g)
{
    double left = s->left, right = s->right;
    /* Lucene's LatLonPoint.newBoxQuery: 90 and 180 are not representable as lower bounds */
    if (s->bottom >= 90.0 || (left >= 180.0 && right >= 180.0)) {
        g->none = true;
        return;
    }
    if (left >= 180.0 && right < left)
        left = -180.0;
    g->box.min_lat = sc_geo_encode_lat_ceil(s->bottom);
    g->box.max_lat = sc_geo_encode_lat(s->top);
    g->box.min_lon = sc_geo_encode_lon_ceil(left);
    g->box.max_lon = sc_geo_encode_lon(right);
    if (g->box.min_lat > g->box.max_lat)
        g->none = true;
}

static void compile_distance(const sc_geo_shape *s, sc_geo_compiled *g)
{
    double r = s->radius_m / SC_GEO_EARTH_RADIUS_M; /* radians of arc */
    g->lat = s->lat * DEG;
    g->lon = s->lon * DEG;
    g->cos_lat = cos(g->lat);
    g->box = (sc_bkd2_box){INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
    if (r >= M_PI) {
        g->all = true;
        g->h_max = g->h_inside = g->h_outside = 2.0;
        return;
    }
    double sh = sin(r * 0.5);
    g->h_max = sh * sh;
    g->h_inside = g->h_max * INSIDE_MARGIN;
    g->h_outside = g->h_max * OUTSIDE_MARGIN + 1e-15;
    double rdeg = r / DEG + BOX_PAD_DEG;
    double lat_lo = s->lat - rdeg, lat_hi = s->lat + rdeg;
    if (lat_lo > -90.0)
        g->box.min_lat = sc_geo_encode_lat(lat_lo);
    if (lat_hi < 90.0)
        g->box.max_lat = sc_geo_encode_lat(lat_hi);
    if (lat_lo <= -90.0 || lat_hi >= 90.0)
        return; /* a pole is inside: every longitude */
    double dlon = asin(fmin(1.0, sin(r) / g->cos_lat)) / DEG + BOX_PAD_DEG;
    if (dlon >= 180.0)
        return;
    double lon_lo = s->lon - dlon, lon_hi = s->lon + dlon;
    if (lon_lo < -180.0)
        lon_lo += 360.0;
    if (lon_hi > 180.0)
        lon_hi -= 360.0;
    g->box.min_lon = sc_geo_encode_lon(lon_lo);
    g->box.max_lon = lon_hi >= 180.0 ? INT32_MAX : sc_geo_encode_lon(lon_hi);
}

void sc_geo_compile(const sc_geo_shape *s, sc_geo_compiled *out)
{
    memset(out, 0, sizeof *out);
    out->kind = s->kind;
    if (s->kind == SC_GEO_BOX)
        compile_box(s, out);
    else
        compile_distance(s, out);
}

static inline bool circle_has(const sc_geo_compiled *g, int32_t lat, int32_t lon)
{
    double la = sc_geo_decode_lat(lat) * DEG, lo = sc_geo_decode_lon(lon) * DEG;
    return hav(g->lat, g->cos_lat, la, lo - g->lon) <= g->h_max;
}

bool sc_geo_matches(const sc_geo_compiled *g, int32_t lat, int32_t lon)
{
    if (g->none)
        return false;
    if (g->all)
        return true;
    if (!sc_bkd2_box_contains(&g->box, lat, lon))
        return false;
    return g->kind == SC_GEO_BOX || circle_has(g, lat, lon);
}

/* The smallest haversine h from the center to a cell (decoded corners, radians). West of or
 * east of the cell the nearest point lies on its nearer meridian edge (along a parallel h
 * grows with the longitude difference); on a meridian at longitude difference dl, cos(d) =
 * sin(lat) sin(c) + cos(lat) cos(c) cos(dl) is a sinusoid of lat, largest at
 * atan2(sin c, cos c cos dl), so the minimum over an edge is there or at an endpoint. */
static double min_hav(const sc_geo_compiled *g, const sc_bkd2_cell *c)
{
    double la1 = sc_geo_decode_lat(c->min_lat) * DEG, la2 = sc_geo_decode_lat(c->max_lat) * DEG;
    double lo1 = sc_geo_decode_lon(c->min_lon) * DEG, lo2 = sc_geo_decode_lon(c->max_lon) * DEG;
    if (lo1 <= g->lon && g->lon <= lo2) {
        double lat = g->lat < la1 ? la1 : g->lat > la2 ? la2 : g->lat;
        return hav(g->lat, g->cos_lat, lat, 0);
    }
    double d1 = remainder(lo1 - g->lon, 2 * M_PI), d2 = remainder(lo2 - g->lon, 2 * M_PI);
    double dl = fabs(d1) < fabs(d2) ? d1 : d2;
    double h = fmin(hav(g->lat, g->cos_lat, la1, dl), hav(g->lat, g->cos_lat, la2, dl));
    double peak = atan2(sin(g->lat), g->cos_lat * cos(dl));
    if (peak > la1 && peak < la2)
        h = fmin(h, hav(g->lat, g->cos_lat, peak, dl));
    return h;
}

static sc_bkd2_relation geo_relate(const void *ctx, const sc_bkd2_cell *c)
{
    const sc_geo_compiled *g = ctx;
    if (g->none)
        return SC_BKD2_OUTSIDE;
    if (g->all)
        return SC_BKD2_INSIDE;
    sc_bkd2_shape box = sc_bkd2_box_shape(&g->box);
    sc_bkd2_relation r = box.relate(box.ctx, c);
    if (g->kind == SC_GEO_BOX || r == SC_BKD2_OUTSIDE)
        return r;
    if (min_hav(g, c) > g->h_outside)
        return SC_BKD2_OUTSIDE;
    /* Inside the circle when every corner is: the farthest point of a lat/lon rectangle from
     * the center is a corner as long as the rectangle stays within 90 degrees of longitude
     * of the center (without wrapping): along a parallel the distance grows with the
     * longitude difference, along a meridian it is a sinusoid of the latitude whose minimum
     * (the antipode's side) then lies outside [-90, 90]. */
    double lo1 = sc_geo_decode_lon(c->min_lon) * DEG - g->lon;
    double lo2 = sc_geo_decode_lon(c->max_lon) * DEG - g->lon;
    if (lo1 < -M_PI / 2 || lo2 > M_PI / 2)
        return SC_BKD2_CROSSES;
    double la1 = sc_geo_decode_lat(c->min_lat) * DEG, la2 = sc_geo_decode_lat(c->max_lat) * DEG;
    if (hav(g->lat, g->cos_lat, la1, lo1) <= g->h_inside &&
        hav(g->lat, g->cos_lat, la1, lo2) <= g->h_inside &&
        hav(g->lat, g->cos_lat, la2, lo1) <= g->h_inside &&
        hav(g->lat, g->cos_lat, la2, lo2) <= g->h_inside)
        return SC_BKD2_INSIDE;
    return SC_BKD2_CROSSES;
}

static void geo_match(const void *ctx, const int32_t *lat, const int32_t *lon, uint32_t n,
                      uint8_t *hit)
{
    const sc_geo_compiled *g = ctx;
    sc_bkd2_shape box = sc_bkd2_box_shape(&g->box);
    box.match(box.ctx, lat, lon, n, hit);
    if (g->kind == SC_GEO_BOX)
        return;
    for (uint32_t i = 0; i < n; i++)
        if (hit[i])
            hit[i] = circle_has(g, lat[i], lon[i]);
}

sc_bkd2_shape sc_geo_bkd2_shape(const sc_geo_compiled *g)
{
    return (sc_bkd2_shape){geo_relate, geo_match, g};
}

static sc_bitset *arena_bits(sc_arena *a, uint32_t n)
{
    sc_bitset *bs = sc_arena_alloc(a, sizeof *bs);
    uint64_t *w = sc_arena_calloc(a, sc_bitset_words_for(n) + 1, sizeof(uint64_t));
    if (!bs || !w)
        return NULL;
    bs->words = w;
    bs->n_bits = n;
    return bs;
}

#define SCAN_BATCH 1024

typedef struct scan_buf {
    int32_t lat[SCAN_BATCH], lon[SCAN_BATCH];
    uint32_t doc[SCAN_BATCH];
    uint8_t hit[SCAN_BATCH];
    uint32_t n;
} scan_buf;

/* Tests the buffered points in one batch (the tree's crossing-leaf test) and sets the docs. */
static void scan_flush(scan_buf *b, const sc_bkd2_shape *s, sc_bitset *bs)
{
    s->match(s->ctx, b->lat, b->lon, b->n, b->hit);
    uint64_t *words = bs->words;
    for (uint32_t i = 0; i < b->n; i++)
        words[b->doc[i] >> 6] |= (uint64_t)(b->hit[i] & 1u) << (b->doc[i] & 63);
    b->n = 0;
}

/* Doc values: the packed points of a window of docs unpacked into a buffer and tested in a
 * batch like a crossing leaf, so the box test runs branch-free. */
static sc_status dv_scan(sc_arena *a, const sc_dv_numeric *dv, uint32_t n_docs,
                         const sc_geo_compiled *g, sc_bitset *bs)
{
    scan_buf *b = sc_arena_alloc(a, sizeof *b);
    if (!b)
        return SC_ENOMEM;
    b->n = 0;
    sc_bkd2_shape shape = sc_geo_bkd2_shape(g);
    int64_t small[16], *big = NULL;
    uint32_t big_cap = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        const int64_t *vals = small;
        size_t got = sc_dv_numeric_get(dv, d, small, 16);
        if (got == 16) {
            uint32_t c = sc_dv_numeric_count(dv, d);
            if (c > 16) { /* a doc with many points */
                if (c > big_cap) {
                    big = sc_arena_alloc(a, sizeof(int64_t) * c);
                    if (!big)
                        return SC_ENOMEM;
                    big_cap = c;
                }
                got = sc_dv_numeric_get(dv, d, big, c);
                vals = big;
            }
        }
        for (size_t i = 0; i < got; i++) {
            if (b->n == SCAN_BATCH)
                scan_flush(b, &shape, bs);
            b->lat[b->n] = (int32_t)(uint32_t)((uint64_t)vals[i] >> 32);
            b->lon[b->n] = (int32_t)(uint32_t)(uint64_t)vals[i];
            b->doc[b->n++] = d;
        }
    }
    scan_flush(b, &shape, bs);
    return SC_OK;
}

sc_status sc_geo_segment_iter(sc_arena *a, const sc_segment *seg, sc_slice field,
                              const sc_geo_shape *shape, float score, sc_doc_iter **out, char *err,
                              size_t err_cap)
{
    *out = NULL;
    const sc_field_info *f = sc_segment_field(seg, field);
    if (!f || f->doc_count == 0)
        return SC_OK;
    if (f->kind != SC_FIELD_NUMERIC) {
        snprintf(err, err_cap, "field [%.*s] is not a geo_point field", (int)field.len,
                 (const char *)field.ptr);
        return SC_EINVAL;
    }
    sc_geo_compiled *g = sc_arena_alloc(a, sizeof *g);
    if (!g)
        return SC_ENOMEM;
    sc_geo_compile(shape, g);
    if (g->none)
        return SC_OK;
    uint32_t n_docs = sc_segment_n_docs(seg);
    sc_bitset *bs = arena_bits(a, n_docs);
    if (!bs)
        return SC_ENOMEM;
    sc_bkd2 t;
    sc_status st = sc_segment_points2(seg, f, &t);
    if (st == SC_OK) {
        sc_bkd2_shape s = sc_geo_bkd2_shape(g);
        SC_TRY(sc_bkd2_intersect(&t, &s, bs, NULL));
    } else if (st == SC_ENOTFOUND) {
        sc_dv_numeric dv;
        st = sc_dv_numeric_open(seg, f, &dv);
        if (st == SC_ENOTFOUND) {
            snprintf(err, err_cap,
                     "field [%.*s] is not searchable: it has neither points nor doc values",
                     (int)field.len, (const char *)field.ptr);
            return SC_EUNSUPPORTED;
        }
        if (st != SC_OK)
            return st;
        SC_TRY(dv_scan(a, &dv, n_docs, g, bs));
    } else {
        return st;
    }
    *out = sc_iter_bitset(a, bs, n_docs, score);
    return *out ? SC_OK : SC_ENOMEM;
}
