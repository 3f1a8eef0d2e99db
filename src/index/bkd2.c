/* 2-D BKD tree for geo points: writer (widest-dimension median splits at leaf boundaries,
 * bounding cells, leaves with shared doc-id blocks and bit-packed lat/lon deltas) and the
 * bounds-checked reader (intersect a shape into a bitset). Format: see bkd2.h. */
#include "index/bkd2.h"

#include <stdlib.h>
#include <string.h>

#include "index/bkd.h"
#include "index/bkd_leaf.h"
#include "index/internal.h"

#define BKD2_MAGIC 0x32444B42u /* "BKD2" */
#define BKD2_HEADER 32
#define BKD2_LEAF_HEADER 8

/* ---- writer ---------------------------------------------------------------------------- */

typedef struct pt2 {
    int32_t c[2]; /* lat, lon */
    uint32_t d;
} pt2;

static int cmp_doc(const void *a, const void *b)
{
    const pt2 *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->c[0] != y->c[0])
        return x->c[0] < y->c[0] ? -1 : 1;
    return (x->c[1] > y->c[1]) - (x->c[1] < y->c[1]);
}

static inline void swap_pt(pt2 *a, pt2 *b)
{
    pt2 t = *a;
    *a = *b;
    *b = t;
}

/* Reorders p[0..n) so that p[i].c[dim] <= p[k].c[dim] <= p[j].c[dim] for i < k < j:
 * quickselect with a three-way partition (runs of equal keys, e.g. all-equal leaves, finish
 * in one pass) and a pivot from a cheap generator over the range (no quadratic input order). */
static void select_k(pt2 *p, size_t n, size_t k, int dim, uint64_t *rng)
{
    size_t lo = 0, hi = n; /* k in [lo, hi) */
    while (hi - lo > 1) {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        int32_t pivot = p[lo + (size_t)(*rng % (hi - lo))].c[dim];
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > */
        while (i < gt) {
            int32_t v = p[i].c[dim];
            if (v < pivot)
                swap_pt(&p[lt++], &p[i++]);
            else if (v > pivot)
                swap_pt(&p[i], &p[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
}

typedef struct build {
    pt2 *p;
    size_t n;
    uint32_t leaf_size, n_nodes;
    uint64_t rng;
} build;

/* Orders the points of node i (depth d) so that each leaf's points are contiguous. */
static void split(build *b, uint32_t node, unsigned depth)
{
    uint32_t span = b->n_nodes >> depth;
    if (span <= 1)
        return;
    uint64_t first = (uint64_t)(node - (1u << depth)) * span;
    uint64_t from = first * b->leaf_size;
    uint64_t to = (first + span) * b->leaf_size;
    if (to > b->n)
        to = b->n;
    uint64_t mid = (first + span / 2) * b->leaf_size;
    if (from >= to || mid >= to) {
        if (from < to)
            split(b, 2 * node, depth + 1);
        return;
    }
    int32_t mn[2] = {INT32_MAX, INT32_MAX}, mx[2] = {INT32_MIN, INT32_MIN};
    for (uint64_t i = from; i < to; i++)
        for (int k = 0; k < 2; k++) {
            int32_t v = b->p[i].c[k];
            mn[k] = v < mn[k] ? v : mn[k];
            mx[k] = v > mx[k] ? v : mx[k];
        }
    /* widest spread, compared in the same units (encoded ints of both dimensions span 2^32) */
    int dim = (int64_t)mx[1] - mn[1] > (int64_t)mx[0] - mn[0] ? 1 : 0;
    select_k(b->p + from, (size_t)(to - from), (size_t)(mid - from), dim, &b->rng);
    split(b, 2 * node, depth + 1);
    split(b, 2 * node + 1, depth + 1);
}

static unsigned bits_for32(uint32_t x)
{
    return x ? 32u - (unsigned)__builtin_clz(x) : 0u;
}

/* Encodes one leaf (points sorted by doc) with cell c; docs and deltas are scratch. */
static sc_status write_leaf(const pt2 *p, uint32_t n, const sc_bkd2_cell *c, uint32_t *docs,
                            uint64_t *deltas, sc_buf *out)
{
    for (uint32_t i = 0; i < n; i++)
        docs[i] = p[i].d;
    unsigned lat_bits = bits_for32((uint32_t)c->max_lat - (uint32_t)c->min_lat);
    unsigned lon_bits = bits_for32((uint32_t)c->max_lon - (uint32_t)c->min_lon);
    size_t head = out->len;
    sc_status st = SC_OK;
    sc__buf_u64(out, 0, &st); /* header, patched below */
    if (st != SC_OK)
        return st;
    uint8_t kind;
    SC_TRY(sc__bkd_docs_put(docs, n, &kind, out));
    out->ptr[head] = kind;
    out->ptr[head + 1] = (uint8_t)lat_bits;
    out->ptr[head + 2] = (uint8_t)lon_bits;
    sc__st16(out->ptr + head + 4, (uint16_t)n);
    for (uint32_t i = 0; i < n; i++)
        deltas[i] = (uint32_t)p[i].c[0] - (uint32_t)c->min_lat;
    sc__packed_put(out, deltas, n, lat_bits, &st);
    for (uint32_t i = 0; i < n; i++)
        deltas[i] = (uint32_t)p[i].c[1] - (uint32_t)c->min_lon;
    sc__packed_put(out, deltas, n, lon_bits, &st);
    return st;
}

static void cell_empty(sc_bkd2_cell *c)
{
    c->min_lat = c->min_lon = INT32_MAX;
    c->max_lat = c->max_lon = INT32_MIN;
}

static void cell_add(sc_bkd2_cell *c, const sc_bkd2_cell *o)
{
    if (o->min_lat > o->max_lat)
        return;
    c->min_lat = o->min_lat < c->min_lat ? o->min_lat : c->min_lat;
    c->max_lat = o->max_lat > c->max_lat ? o->max_lat : c->max_lat;
    c->min_lon = o->min_lon < c->min_lon ? o->min_lon : c->min_lon;
    c->max_lon = o->max_lon > c->max_lon ? o->max_lon : c->max_lon;
}

sc_status sc_bkd2_write(const int32_t *lat, const int32_t *lon, const uint32_t *docs, size_t n,
                        uint32_t doc_bound, uint32_t leaf_size, sc_buf *out)
{
    if (leaf_size == 0)
        leaf_size = SC_BKD_LEAF_SIZE;
    if (leaf_size > UINT16_MAX || n > UINT32_MAX)
        return SC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (docs[i] >= doc_bound)
            return SC_EINVAL;
    uint32_t n_leaves = (uint32_t)((n + leaf_size - 1) / leaf_size);
    uint32_t n_nodes = sc__bkd_node_count(n_leaves);
    pt2 *pts = malloc((n ? n : 1) * sizeof(*pts));
    sc_bkd2_cell *cell = malloc((size_t)2 * n_nodes * sizeof(*cell));
    uint32_t *sdocs = malloc(sizeof(uint32_t) * leaf_size);
    uint64_t *sdeltas = malloc(sizeof(uint64_t) * leaf_size);
    sc_status st = pts && cell && sdocs && sdeltas ? SC_OK : SC_ENOMEM;
    uint32_t n_docs = 0;
    if (st == SC_OK)
        st = sc__bkd_count_docs(docs, n, doc_bound, &n_docs);
    if (st == SC_OK)
        for (size_t i = 0; i < n; i++)
            pts[i] = (pt2){{lat[i], lon[i]}, docs[i]};
    if (st != SC_OK)
        goto done;
    build b = {pts, n, leaf_size, n_nodes, 0x9E3779B97F4A7C15ull ^ n};
    if (n)
        split(&b, 1, 0);
    for (uint32_t i = 0; i < 2 * n_nodes; i++)
        cell_empty(&cell[i]);
    for (uint32_t j = 0; j < n_leaves; j++) {
        size_t from = (size_t)j * leaf_size, to = from + leaf_size < n ? from + leaf_size : n;
        sc_bkd2_cell *c = &cell[n_nodes + j];
        for (size_t i = from; i < to; i++) {
            sc_bkd2_cell one = {pts[i].c[0], pts[i].c[0], pts[i].c[1], pts[i].c[1]};
            cell_add(c, &one);
        }
    }
    for (uint32_t i = n_nodes - 1; i >= 1; i--) {
        cell[i] = cell[2 * i];
        cell_add(&cell[i], &cell[2 * i + 1]);
    }

    size_t start = out->len;
    sc__buf_u32(out, BKD2_MAGIC, &st);
    sc__buf_u32(out, 2, &st); /* dims, reserved[3] */
    sc__buf_u32(out, leaf_size, &st);
    sc__buf_u32(out, (uint32_t)n, &st);
    sc__buf_u32(out, n_leaves, &st);
    sc__buf_u32(out, doc_bound, &st);
    sc__buf_u32(out, n_docs, &st);
    sc__buf_u32(out, n_nodes, &st);
    for (uint32_t i = 0; i < 2 * n_nodes; i++) {
        sc__buf_u32(out, (uint32_t)cell[i].min_lat, &st);
        sc__buf_u32(out, (uint32_t)cell[i].max_lat, &st);
        sc__buf_u32(out, (uint32_t)cell[i].min_lon, &st);
        sc__buf_u32(out, (uint32_t)cell[i].max_lon, &st);
    }
    size_t dir = out->len;
    for (uint32_t j = 0; j <= n_leaves; j++)
        sc__buf_u64(out, 0, &st);
    for (uint32_t j = 0; st == SC_OK && j < n_leaves; j++) {
        sc__st64(out->ptr + dir + 8 * (size_t)j, out->len - start);
        size_t from = (size_t)j * leaf_size, to = from + leaf_size < n ? from + leaf_size : n;
        qsort(pts + from, to - from, sizeof(*pts), cmp_doc);
        st = write_leaf(pts + from, (uint32_t)(to - from), &cell[n_nodes + j], sdocs, sdeltas, out);
    }
    if (st == SC_OK)
        sc__st64(out->ptr + dir + 8 * (size_t)n_leaves, out->len - start);
done:
    free(pts);
    free(cell);
    free(sdocs);
    free(sdeltas);
    return st;
}

/* ---- reader ---------------------------------------------------------------------------- */

sc_status sc_bkd2_open(sc_slice bytes, sc_bkd2 *out)
{
    memset(out, 0, sizeof(*out));
    const uint8_t *p = bytes.ptr;
    if (bytes.len < BKD2_HEADER || sc__ld32(p) != BKD2_MAGIC || p[4] != 2)
        return SC_ECORRUPT;
    out->base = p;
    out->len = bytes.len;
    out->leaf_size = sc__ld32(p + 8);
    out->n_points = sc__ld32(p + 12);
    out->n_leaves = sc__ld32(p + 16);
    out->doc_bound = sc__ld32(p + 20);
    out->n_docs = sc__ld32(p + 24);
    out->n_nodes = sc__ld32(p + 28);
    return sc__bkd_layout_check(bytes, BKD2_HEADER, out->leaf_size, out->n_points, out->n_leaves,
                                out->doc_bound, out->n_docs, out->n_nodes, &out->nodes,
                                &out->leafdir);
}

static inline void node_cell(const sc_bkd2 *t, uint32_t i, sc_bkd2_cell *c)
{
    const uint8_t *q = t->nodes + (size_t)i * 16;
    c->min_lat = (int32_t)sc__ld32(q);
    c->max_lat = (int32_t)sc__ld32(q + 4);
    c->min_lon = (int32_t)sc__ld32(q + 8);
    c->max_lon = (int32_t)sc__ld32(q + 12);
}

void sc_bkd2_leaf_cell(const sc_bkd2 *t, uint32_t leaf, sc_bkd2_cell *cell)
{
    node_cell(t, t->n_nodes + leaf, cell);
}

static inline uint32_t leaf_count(const sc_bkd2 *t, uint32_t j)
{
    return sc__bkd_leaf_count(j, t->n_leaves, t->leaf_size, t->n_points);
}

static inline sc_slice leaf_bytes(const sc_bkd2 *t, uint32_t j)
{
    return sc__bkd_leaf_slice(t->base, t->leafdir, j);
}

/* A parsed leaf: header checked, block bounds inside the leaf bytes. */
typedef struct leaf_view {
    uint8_t kind, lat_bits, lon_bits;
    uint32_t n;
    const uint8_t *docs, *lat, *lon;
} leaf_view;

static sc_status leaf_parse(sc_slice s, uint32_t max_n, leaf_view *v)
{
    if (s.len < BKD2_LEAF_HEADER)
        return SC_ECORRUPT;
    v->kind = s.ptr[0];
    v->lat_bits = s.ptr[1];
    v->lon_bits = s.ptr[2];
    v->n = sc__ld16(s.ptr + 4);
    if (v->n == 0 || v->n > max_n || v->lat_bits > 32 || v->lon_bits > 32 || s.ptr[3] ||
        sc__ld16(s.ptr + 6))
        return SC_ECORRUPT;
    size_t doc_len;
    SC_TRY(sc__bkd_docs_len(v->kind, v->n, s.ptr + BKD2_LEAF_HEADER, s.len - BKD2_LEAF_HEADER,
                            &doc_len));
    size_t lat_len = sc__packed_bytes(v->n, v->lat_bits);
    size_t lon_len = sc__packed_bytes(v->n, v->lon_bits);
    if (BKD2_LEAF_HEADER + doc_len + lat_len + lon_len > s.len)
        return SC_ECORRUPT;
    v->docs = s.ptr + BKD2_LEAF_HEADER;
    v->lat = v->docs + doc_len;
    v->lon = v->lat + lat_len;
    return SC_OK;
}

sc_status sc_bkd2_leaf_decode(sc_slice leaf, int32_t min_lat, int32_t min_lon, uint32_t doc_bound,
                              uint32_t max_n, uint32_t *docs, int32_t *lat, int32_t *lon,
                              uint32_t *n)
{
    leaf_view v;
    SC_TRY(leaf_parse(leaf, max_n, &v));
    SC_TRY(sc__bkd_docs_decode(v.kind, v.docs, v.n, doc_bound, docs));
    sc__bkd_unpack32(v.lat, v.n, v.lat_bits, min_lat, lat);
    sc__bkd_unpack32(v.lon, v.n, v.lon_bits, min_lon, lon);
    *n = v.n;
    return SC_OK;
}

sc_status sc_bkd2_leaf_read(const sc_bkd2 *t, uint32_t leaf, uint32_t *docs, int32_t *lat,
                            int32_t *lon, uint32_t *n)
{
    if (leaf >= t->n_leaves)
        return SC_EINVAL;
    sc_bkd2_cell c;
    sc_bkd2_leaf_cell(t, leaf, &c);
    SC_TRY(sc_bkd2_leaf_decode(leaf_bytes(t, leaf), c.min_lat, c.min_lon, t->doc_bound,
                               t->leaf_size, docs, lat, lon, n));
    return *n == leaf_count(t, leaf) ? SC_OK : SC_ECORRUPT;
}

typedef struct isect {
    const sc_bkd2 *t;
    const sc_bkd2_shape *shape;
    sc_bitset *bs;
    sc_bkd2_stats st;
    uint32_t *docs;
    int32_t *lat, *lon;
    uint8_t *hit;
} isect;

static sc_status visit_inside(isect *x, uint32_t from, uint32_t to)
{
    const sc_bkd2 *t = x->t;
    for (uint32_t j = from; j < to; j++) {
        leaf_view v;
        SC_TRY(leaf_parse(leaf_bytes(t, j), t->leaf_size, &v));
        if (v.n != leaf_count(t, j))
            return SC_ECORRUPT;
        SC_TRY(sc__bkd_docs_add(v.kind, v.docs, v.n, t->doc_bound, x->bs, x->docs));
        x->st.points += v.n;
        x->st.leaves_inside++;
    }
    return SC_OK;
}

static sc_status visit_crossing(isect *x, uint32_t j)
{
    const sc_bkd2 *t = x->t;
    uint32_t n;
    SC_TRY(sc_bkd2_leaf_read(t, j, x->docs, x->lat, x->lon, &n));
    x->shape->match(x->shape->ctx, x->lat, x->lon, n, x->hit);
    uint64_t *words = x->bs->words, c = 0;
    const uint32_t *docs = x->docs;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t m = x->hit[i] & 1u;
        words[docs[i] >> 6] |= m << (docs[i] & 63);
        c += m;
    }
    x->st.points += c;
    x->st.leaves_crossing++;
    return SC_OK;
}

static sc_status visit(isect *x, uint32_t node, unsigned depth)
{
    const sc_bkd2 *t = x->t;
    uint32_t span = t->n_nodes >> depth;
    uint32_t first = (node - (1u << depth)) * span;
    if (first >= t->n_leaves)
        return SC_OK;
    sc_bkd2_cell c;
    node_cell(t, node, &c);
    if (c.min_lat > c.max_lat || c.min_lon > c.max_lon)
        return SC_OK;
    sc_bkd2_relation r = x->shape->relate(x->shape->ctx, &c);
    if (r == SC_BKD2_OUTSIDE)
        return SC_OK;
    if (r == SC_BKD2_INSIDE) {
        uint32_t to = first + span < t->n_leaves ? first + span : t->n_leaves;
        return visit_inside(x, first, to);
    }
    if (node >= t->n_nodes)
        return visit_crossing(x, node - t->n_nodes);
    SC_TRY(visit(x, 2 * node, depth + 1));
    return visit(x, 2 * node + 1, depth + 1);
}

sc_status sc_bkd2_intersect(const sc_bkd2 *t, const sc_bkd2_shape *shape, sc_bitset *bs,
                            sc_bkd2_stats *stats)
{
    if (!bs || bs->n_bits < t->doc_bound)
        return SC_EINVAL;
    isect x = {.t = t, .shape = shape, .bs = bs};
    sc_status st = SC_OK;
    if (t->n_leaves) {
        size_t L = t->leaf_size;
        x.docs = malloc(sizeof(uint32_t) * L);
        x.lat = malloc(sizeof(int32_t) * L);
        x.lon = malloc(sizeof(int32_t) * L);
        x.hit = malloc(L);
        if (!x.docs || !x.lat || !x.lon || !x.hit)
            st = SC_ENOMEM;
        else
            st = visit(&x, 1, 0);
        free(x.docs);
        free(x.lat);
        free(x.lon);
        free(x.hit);
    }
    if (stats)
        *stats = x.st;
    return st;
}

/* ---- the box shape ---------------------------------------------------------------------- */

/* Relation of [a, b] to the range [lo, hi] on one axis. */
static sc_bkd2_relation rel1(int32_t a, int32_t b, int32_t lo, int32_t hi)
{
    if (b < lo || a > hi)
        return SC_BKD2_OUTSIDE;
    return lo <= a && b <= hi ? SC_BKD2_INSIDE : SC_BKD2_CROSSES;
}

static sc_bkd2_relation box_relate(const void *ctx, const sc_bkd2_cell *c)
{
    const sc_bkd2_box *b = ctx;
    sc_bkd2_relation rlat = rel1(c->min_lat, c->max_lat, b->min_lat, b->max_lat);
    if (rlat == SC_BKD2_OUTSIDE)
        return rlat;
    sc_bkd2_relation rlon;
    if (b->min_lon <= b->max_lon) {
        rlon = rel1(c->min_lon, c->max_lon, b->min_lon, b->max_lon);
    } else { /* dateline: [min_lon, MAX] or [MIN, max_lon] */
        sc_bkd2_relation e = rel1(c->min_lon, c->max_lon, b->min_lon, INT32_MAX);
        sc_bkd2_relation w = rel1(c->min_lon, c->max_lon, INT32_MIN, b->max_lon);
        if (e == SC_BKD2_INSIDE || w == SC_BKD2_INSIDE)
            rlon = SC_BKD2_INSIDE;
        else if (e == SC_BKD2_OUTSIDE && w == SC_BKD2_OUTSIDE)
            rlon = SC_BKD2_OUTSIDE;
        else
            rlon = SC_BKD2_CROSSES;
    }
    if (rlon == SC_BKD2_OUTSIDE)
        return rlon;
    return rlat == SC_BKD2_INSIDE && rlon == SC_BKD2_INSIDE ? SC_BKD2_INSIDE : SC_BKD2_CROSSES;
}

static void box_match(const void *ctx, const int32_t *lat, const int32_t *lon, uint32_t n,
                      uint8_t *hit)
{
    const sc_bkd2_box *b = ctx;
    int32_t a = b->min_lat, z = b->max_lat, w = b->min_lon, e = b->max_lon;
    if (w <= e) {
        for (uint32_t i = 0; i < n; i++)
            hit[i] = (uint8_t)((lat[i] >= a) & (lat[i] <= z) & (lon[i] >= w) & (lon[i] <= e));
    } else {
        for (uint32_t i = 0; i < n; i++)
            hit[i] = (uint8_t)((lat[i] >= a) & (lat[i] <= z) & ((lon[i] >= w) | (lon[i] <= e)));
    }
}

sc_bkd2_shape sc_bkd2_box_shape(const sc_bkd2_box *box)
{
    return (sc_bkd2_shape){box_relate, box_match, box};
}
