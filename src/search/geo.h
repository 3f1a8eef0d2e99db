/* Geo queries (Elasticsearch's geo_bounding_box and geo_distance) over one segment's geo_point
 * field, as doc-id iterators: the 2-D points tree (index/bkd2.h) is intersected once into a
 * per-query bitset (cells inside the shape added whole, doc ids decoded in bulk; crossing
 * leaves tested in batches), served by the bitset iterator kind. A segment without 2-D points
 * for the field (index: false, or a version 3 segment) is answered by a doc-values scan.
 *
 * Semantics follow Elasticsearch / Lucene's LatLonPoint: points are compared in Lucene's
 * quantized encoding; a box's bounds are encoded with ceil (bottom, left) and floor (top,
 * right), left > right crosses the dateline; distances are arc (haversine) distances on a
 * sphere of radius 6371008.7714 m between the center and the point's decoded coordinates. */
#ifndef SC_SEARCH_GEO_H
#define SC_SEARCH_GEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bitset.h"
#include "base/status.h"
#include "index/bkd2.h"
#include "index/segment.h"
#include "search/iter.h"
#include "search/query.h"

#define SC_GEO_EARTH_RADIUS_M 6371008.7714 /* Elasticsearch's GeoUtils.EARTH_MEAN_RADIUS */

/* Haversine distance in meters between two points given in degrees. */
double sc_geo_arc_distance_m(double lat1, double lon1, double lat2, double lon2);

/* A shape prepared for matching encoded points: an encoded bounding box (exact for boxes, a
 * superset for distances) and, for distances, the haversine threshold. Fill with
 * sc_geo_compile; plain data, no ownership. */
typedef struct sc_geo_compiled {
    sc_geo_kind kind;
    bool none;       /* matches nothing (Lucene: a box with bottom = 90, ...) */
    bool all;        /* matches every point (a distance of half the circumference or more) */
    sc_bkd2_box box; /* encoded bounds */
    double lat, lon; /* DISTANCE: center in radians */
    double cos_lat;
    double h_max;     /* DISTANCE: match when haversine h <= h_max */
    double h_inside;  /* DISTANCE: a cell whose corners are all within h_inside is inside */
    double h_outside; /* DISTANCE: a cell whose nearest point is beyond h_outside is outside */
} sc_geo_compiled;

/* Prepares shape s (validated by the caller: latitudes in [-90, 90], longitudes in
 * [-180, 180], top >= bottom, radius >= 0). */
void sc_geo_compile(const sc_geo_shape *s, sc_geo_compiled *out);

/* Whether an encoded point matches. */
bool sc_geo_matches(const sc_geo_compiled *g, int32_t lat, int32_t lon);

/* The tree shape of a compiled query (g borrowed for the shape's life). */
sc_bkd2_shape sc_geo_bkd2_shape(const sc_geo_compiled *g);

/* The iterator over docs of seg with a point of `field` in the shape (deletes not applied),
 * scoring `score`: NULL in *out when the segment has no such field or no doc can match.
 * SC_EINVAL (err filled) when the field is not numeric; SC_EUNSUPPORTED (err filled) when it
 * has neither 2-D points nor doc values; SC_ECORRUPT from a corrupt leaf; SC_ENOMEM. */
sc_status sc_geo_segment_iter(sc_arena *a, const sc_segment *seg, sc_slice field,
                              const sc_geo_shape *shape, float score, sc_doc_iter **out, char *err,
                              size_t err_cap) SC_MUST_USE;

#endif
