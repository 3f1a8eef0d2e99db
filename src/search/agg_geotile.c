/* Geotile keys of encoded points without a sin and a log per point (agg_internal.h,
 * sc__agg_tiles): x is an integer shift of the encoded longitude; y, the Web Mercator row, is
 * looked up in a table of cells of encoded latitude (2^shift encodings each) filled on first
 * use. A cell whose two ends are well inside one row answers that row for every encoding in
 * it; any other cell (a row boundary within it or near it, the clamped rows past +-85.05
 * degrees) and any point outside the table's window take sc_agg_geotile_key itself. */
#include <math.h>
#include <string.h>

#include "index/bkd2.h"
#include "search/agg_internal.h"

/* Cells of the table: 128 KiB of rows per aggregation source. */
#define TILE_CELLS ((size_t)1 << 15)

/* The unrounded row of latitude lat at zoom z, as sc_agg_geotile_key computes it before its
 * floor and clamp (the same expression, so the same double). */
static double row_real(uint32_t z, double lat)
{
    double tiles = ldexp(1.0, (int)z);
    double ls = sin(lat * (M_PI / 180.0));
    return (0.5 - log((1.0 + ls) / (1.0 - ls)) / (4.0 * M_PI)) * tiles;
}

sc_status sc__agg_tiles_init(sc__agg_tiles *t, sc_arena *a, uint32_t z)
{
    memset(t, 0, sizeof *t);
    t->z = z;
    /* A row at zoom z is about 2^(33 - z) x cos(lat) encodings high: cells of 2^(27 - z) make
     * some 64 x cos(lat) cells per row, so about one point in 32 x cos(lat) lands in a cell
     * with a boundary and pays the formula. */
    t->shift = z >= 27 ? 0 : 27 - z;
    t->cells = sc_arena_alloc(a, TILE_CELLS * sizeof *t->cells);
    if (!t->cells)
        return sc__agg_oom(a);
    memset(t->cells, 0xff, TILE_CELLS * sizeof *t->cells); /* SC__AGG_TILE_UNKNOWN */
    t->n_cells = TILE_CELLS;
    return SC_OK;
}

/* Whether every latitude encoding in [lo, hi] has row k by the formula, k being the floor of
 * the computed row at both ends with a margin. The true row is monotone (decreasing in the
 * latitude); sin and log are within a few ulps of it, which moves the computed row by far
 * less than the margin of 2^-36 rows per tile of the zoom (the error is under 2^-45 x tiles
 * below 85.06 degrees, where the clamp begins), so an encoding between two ends that are at
 * least the margin inside row k computes a row inside k too. */
static uint32_t cell_row(uint32_t z, int64_t lo, int64_t hi)
{
    double tiles = ldexp(1.0, (int)z), margin = ldexp(tiles, -36);
    double top = row_real(z, sc_geo_decode_lat((int32_t)lo));    /* the larger row value */
    double bottom = row_real(z, sc_geo_decode_lat((int32_t)hi)); /* the smaller */
    if (!(top >= bottom && bottom >= 0 && top < tiles))
        return SC__AGG_TILE_EXACT; /* NaN, clamped rows or a non-monotone pair */
    double k = floor(bottom);
    if (bottom - k < margin || top > k + 1 - margin)
        return SC__AGG_TILE_EXACT;
    return (uint32_t)k;
}

int64_t sc__agg_tiles_fill(sc__agg_tiles *t, int32_t la, int32_t lo)
{
    if (!t->based) { /* the window is centred on the first point */
        int64_t half = (int64_t)(t->n_cells / 2) << t->shift;
        t->base = ((int64_t)la - half) & ~(((int64_t)1 << t->shift) - 1);
        t->based = true;
    }
    uint64_t cell = (uint64_t)((int64_t)la - t->base) >> t->shift;
    if (cell >= t->n_cells)
        return sc_agg_geotile_key(t->z, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
    int64_t a = t->base + ((int64_t)cell << t->shift), b = a + ((int64_t)1 << t->shift) - 1;
    a = a < INT32_MIN ? INT32_MIN : a;
    b = b > INT32_MAX ? INT32_MAX : b;
    t->cells[cell] = cell_row(t->z, a, b);
    return sc__agg_tiles_key(t, la, lo);
}
