/* Points of geo_point fields: a 2-D BKD tree over (lat, lon) quantized as Lucene's LatLonPoint
 * (GeoEncodingUtils: 32-bit ints, lat = floor(lat / (180 / 2^32)), lon = floor(lon / (360 /
 * 2^32)), 90 and 180 map to INT32_MAX). The builder splits each node's points at the leaf
 * boundary of its left subtree, on the dimension with the widest spread, so leaves hold at
 * most leaf_size points and the tree is a complete binary heap as the 1-D tree (bkd.h); each
 * node stores the bounding cell of its points, so whole subtrees are accepted or skipped.
 *
 * Layout (little-endian; offsets relative to the start of the buffer):
 *   header  : magic "BKD2", u8 dims (2), u8 reserved[3], u32 leaf_size, u32 n_points,
 *             u32 n_leaves, u32 doc_bound (every doc id < doc_bound), u32 n_docs (distinct
 *             docs with a value), u32 n_nodes (power of two >= n_leaves)          [32 bytes]
 *   nodes   : 2 * n_nodes cells (i32 min_lat, i32 max_lat, i32 min_lon, i32 max_lon), heap
 *             order (root 1, children 2i and 2i+1, leaf j at n_nodes + j); empty padding
 *             cells have min_lat > max_lat
 *   leafdir : (n_leaves + 1) u64 offsets of the encoded leaves
 *   leaves  : per leaf j (points [j*leaf_size, ...) of the build order), sorted by doc:
 *             u8 doc_kind, u8 lat_bits, u8 lon_bits, u8 0, u16 n, u16 0,
 *             doc block (bkd.h's kinds, shared code in bkd_leaf.c),
 *             n (lat - cell min_lat) with lat_bits bits + 8 pad bytes,
 *             n (lon - cell min_lon) with lon_bits bits + 8 pad bytes
 *
 * The reader borrows the bytes (mmap) and checks every bound: corrupt input gives
 * SC_ECORRUPT, never a read out of bounds. A reader is immutable and thread-safe. */
#ifndef SC_INDEX_BKD2_H
#define SC_INDEX_BKD2_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

/* ---- Lucene's quantization of latitude / longitude ------------------------------------- */

#define SC_GEO_LAT_DECODE (180.0 / 4294967296.0)
#define SC_GEO_LON_DECODE (360.0 / 4294967296.0)

/* Encoded cell of a latitude in [-90, 90] (floor; 90 -> INT32_MAX), and the ceiling variant
 * Lucene uses for the lower bound of a box. Longitude likewise over [-180, 180]. */
static inline int32_t sc_geo_encode_lat(double lat)
{
    return lat >= 90.0 ? INT32_MAX : (int32_t)floor(lat / SC_GEO_LAT_DECODE);
}
static inline int32_t sc_geo_encode_lat_ceil(double lat)
{
    double c = ceil(lat / SC_GEO_LAT_DECODE);
    return c >= 2147483647.0 ? INT32_MAX : (int32_t)c;
}
static inline int32_t sc_geo_encode_lon(double lon)
{
    return lon >= 180.0 ? INT32_MAX : (int32_t)floor(lon / SC_GEO_LON_DECODE);
}
static inline int32_t sc_geo_encode_lon_ceil(double lon)
{
    double c = ceil(lon / SC_GEO_LON_DECODE);
    return c >= 2147483647.0 ? INT32_MAX : (int32_t)c;
}
/* The lower-left corner of an encoded cell, in degrees. */
static inline double sc_geo_decode_lat(int32_t e)
{
    return e * SC_GEO_LAT_DECODE;
}
static inline double sc_geo_decode_lon(int32_t e)
{
    return e * SC_GEO_LON_DECODE;
}

/* ---- writer ---------------------------------------------------------------------------- */

/* Builds the tree of n points (lat[i], lon[i], docs[i]) (encoded as above; any order; a doc
 * may have several points; each doc < doc_bound) and appends its encoding to *out. leaf_size
 * 0 means SC_BKD_LEAF_SIZE (512); at most 65535. Inputs are not modified; temporary memory is
 * O(n); O(n log n) time. */
sc_status sc_bkd2_write(const int32_t *lat, const int32_t *lon, const uint32_t *docs, size_t n,
                        uint32_t doc_bound, uint32_t leaf_size, sc_buf *out) SC_MUST_USE;

/* ---- reader ---------------------------------------------------------------------------- */

typedef struct sc_bkd2 {
    /* private: a view over the borrowed bytes, filled by sc_bkd2_open */
    const uint8_t *base;
    size_t len;
    uint32_t leaf_size;
    uint32_t n_points;
    uint32_t n_leaves;
    uint32_t doc_bound;
    uint32_t n_docs;
    uint32_t n_nodes;
    const uint8_t *nodes;   /* 2 * n_nodes * 16 bytes */
    const uint8_t *leafdir; /* (n_leaves + 1) * 8 bytes */
} sc_bkd2;

/* Opens a tree over `bytes` (borrowed; must outlive the reader): header, node table and leaf
 * directory bounds (leaves are checked when decoded). SC_ECORRUPT on any inconsistency. */
sc_status sc_bkd2_open(sc_slice bytes, sc_bkd2 *out) SC_MUST_USE;

static inline uint32_t sc_bkd2_n_points(const sc_bkd2 *t)
{
    return t->n_points;
}
static inline uint32_t sc_bkd2_n_docs(const sc_bkd2 *t)
{
    return t->n_docs;
}
static inline uint32_t sc_bkd2_doc_bound(const sc_bkd2 *t)
{
    return t->doc_bound;
}
static inline uint32_t sc_bkd2_n_leaves(const sc_bkd2 *t)
{
    return t->n_leaves;
}

/* An encoded cell: every point of a node has min_lat <= lat <= max_lat and likewise lon. */
typedef struct sc_bkd2_cell {
    int32_t min_lat, max_lat, min_lon, max_lon;
} sc_bkd2_cell;

typedef enum sc_bkd2_relation {
    SC_BKD2_OUTSIDE, /* no point of the cell can match */
    SC_BKD2_CROSSES, /* some may: test each point */
    SC_BKD2_INSIDE,  /* every point of the cell matches */
} sc_bkd2_relation;

/* A query shape over encoded points. relate must be conservative: INSIDE only when every
 * point of the cell matches, OUTSIDE only when none does. match sets hit[i] to 1 when point i
 * matches, else 0, for a batch of n points. Both are called from one thread per intersect. */
typedef struct sc_bkd2_shape {
    sc_bkd2_relation (*relate)(const void *ctx, const sc_bkd2_cell *cell);
    void (*match)(const void *ctx, const int32_t *lat, const int32_t *lon, uint32_t n,
                  uint8_t *hit);
    const void *ctx;
} sc_bkd2_shape;

/* A box of encoded bounds, inclusive; min_lon > max_lon crosses the dateline (lon >= min_lon
 * or lon <= max_lon). The full box (INT32_MIN..INT32_MAX both ways) matches every point. */
typedef struct sc_bkd2_box {
    int32_t min_lat, max_lat, min_lon, max_lon;
} sc_bkd2_box;

/* The shape of a box (box is borrowed for the shape's life). */
sc_bkd2_shape sc_bkd2_box_shape(const sc_bkd2_box *box);

/* Whether an encoded point lies in a box. */
static inline bool sc_bkd2_box_contains(const sc_bkd2_box *b, int32_t lat, int32_t lon)
{
    if (lat < b->min_lat || lat > b->max_lat)
        return false;
    if (b->min_lon <= b->max_lon)
        return lon >= b->min_lon && lon <= b->max_lon;
    return lon >= b->min_lon || lon <= b->max_lon;
}

typedef struct sc_bkd2_stats {
    uint64_t points; /* matching points added (a doc with two matching points counts twice) */
    uint32_t leaves_inside;
    uint32_t leaves_crossing;
} sc_bkd2_stats;

/* Sets the bit of every doc having a point in the shape (bs->n_bits >= doc_bound, else
 * SC_EINVAL). Cells the shape holds whole are added leaf by leaf without decoding values,
 * doc ids straight into the bitset; crossing leaves decode lat, lon and docs into buffers and
 * test the batch with shape->match. stats may be NULL. SC_ECORRUPT on a corrupt leaf. */
sc_status sc_bkd2_intersect(const sc_bkd2 *t, const sc_bkd2_shape *shape, sc_bitset *bs,
                            sc_bkd2_stats *stats) SC_MUST_USE;

/* Leaf access (tests, fuzzing, merges): the cell of leaf j, and its decoded points (docs
 * ascending; room for leaf_size each). */
void sc_bkd2_leaf_cell(const sc_bkd2 *t, uint32_t leaf, sc_bkd2_cell *cell);
sc_status sc_bkd2_leaf_read(const sc_bkd2 *t, uint32_t leaf, uint32_t *docs, int32_t *lat,
                            int32_t *lon, uint32_t *n) SC_MUST_USE;

/* Decodes one encoded leaf on its own (the fuzzing surface): cell mins given, docs must be <
 * doc_bound, at most max_n points. */
sc_status sc_bkd2_leaf_decode(sc_slice leaf, int32_t min_lat, int32_t min_lon, uint32_t doc_bound,
                              uint32_t max_n, uint32_t *docs, int32_t *lat, int32_t *lon,
                              uint32_t *n) SC_MUST_USE;

#endif
