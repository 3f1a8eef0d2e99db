/* 1-D BKD tree: writer (sort, leaves, doc-id packing, value bit-packing, min/max tree) and
 * bounds-checked reader (intersect into a bitset, count, estimate). Format: see bkd.h. */
#include "index/bkd.h"

#include "index/bkd_leaf.h"
#include "index/internal.h"

#include <stdlib.h>
#include <string.h>

#define BKD_MAGIC 0x31444B42u /* "BKD1" */
#define BKD_HEADER 48

/* ---- little-endian helpers ------------------------------------------------------------- */

static sc_status put(sc_buf *out, const void *p, size_t n)
{
    if (sc_vec_reserve(out, n) != SC_OK)
        return SC_ENOMEM;
    memcpy(out->ptr + out->len, p, n);
    out->len += n;
    return SC_OK;
}
static sc_status put8(sc_buf *out, uint8_t v)
{
    return put(out, &v, 1);
}
static sc_status put16(sc_buf *out, uint16_t v)
{
    return put(out, &v, 2);
}
static sc_status put32(sc_buf *out, uint32_t v)
{
    return put(out, &v, 4);
}
static sc_status put64(sc_buf *out, uint64_t v)
{
    return put(out, &v, 8);
}

/* ---- writer ---------------------------------------------------------------------------- */

typedef struct bkd_pt {
    int64_t v;
    uint32_t d;
} bkd_pt;

static int cmp_val_doc(const void *a, const void *b)
{
    const bkd_pt *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);
}

static int cmp_doc_val(const void *a, const void *b)
{
    const bkd_pt *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static unsigned bits_for(uint64_t x)
{
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

/* Encodes one leaf (points sorted by doc) with cell [cmin, cmax]; docs and deltas are scratch
 * arrays of room n. */
static sc_status write_leaf(const bkd_pt *p, uint32_t n, int64_t cmin, int64_t cmax, uint32_t *docs,
                            uint64_t *deltas, sc_buf *out)
{
    for (uint32_t i = 0; i < n; i++) {
        docs[i] = p[i].d;
        deltas[i] = (uint64_t)p[i].v - (uint64_t)cmin;
    }
    unsigned bits = bits_for((uint64_t)cmax - (uint64_t)cmin);
    size_t head = out->len;
    SC_TRY(put32(out, 0)); /* kind, bits, n: kind patched below */
    uint8_t kind;
    SC_TRY(sc__bkd_docs_put(docs, n, &kind, out));
    out->ptr[head] = kind;
    out->ptr[head + 1] = (uint8_t)bits;
    sc__st16(out->ptr + head + 2, (uint16_t)n);
    sc_status st = SC_OK;
    sc__packed_put(out, deltas, n, bits, &st); /* (v - cmin) with `bits` bits each, LSB first */
    return st;
}

sc_status sc_bkd_write(const int64_t *values, const uint32_t *docs, size_t n, uint32_t doc_bound,
                       uint32_t leaf_size, sc_buf *out)
{
    if (leaf_size == 0)
        leaf_size = SC_BKD_LEAF_SIZE;
    if (leaf_size > UINT16_MAX || n > UINT32_MAX)
        return SC_EINVAL;
    bkd_pt *pts = malloc((n ? n : 1) * sizeof(*pts));
    if (!pts)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (docs[i] >= doc_bound) {
            free(pts);
            return SC_EINVAL;
        }
        pts[i].v = values[i];
        pts[i].d = docs[i];
    }
    if (n)
        qsort(pts, n, sizeof(*pts), cmp_val_doc);
    uint32_t n_leaves = (uint32_t)((n + leaf_size - 1) / leaf_size);
    uint32_t n_nodes = sc__bkd_node_count(n_leaves);
    uint32_t n_docs;
    sc_status cst = sc__bkd_count_docs(docs, n, doc_bound, &n_docs);
    if (cst != SC_OK) {
        free(pts);
        return cst;
    }

    int64_t *cell = calloc((size_t)2 * n_nodes * 2, sizeof(int64_t));
    uint32_t *sdocs = malloc(sizeof(uint32_t) * leaf_size);
    uint64_t *sdeltas = malloc(sizeof(uint64_t) * leaf_size);
    if (!cell || !sdocs || !sdeltas) {
        free(cell);
        free(sdocs);
        free(sdeltas);
        free(pts);
        return SC_ENOMEM;
    }
    for (uint32_t i = 0; i < 2 * n_nodes; i++) {
        cell[2 * i] = INT64_MAX;
        cell[2 * i + 1] = INT64_MIN;
    }
    for (uint32_t j = 0; j < n_leaves; j++) {
        size_t from = (size_t)j * leaf_size, to = from + leaf_size < n ? from + leaf_size : n;
        cell[2 * (n_nodes + j)] = pts[from].v;
        cell[2 * (n_nodes + j) + 1] = pts[to - 1].v;
    }
    for (uint32_t i = n_nodes - 1; i >= 1; i--) {
        int64_t *c = cell + 2 * i, *l = cell + 4 * i, *r = cell + 4 * i + 2;
        c[0] = l[0] < r[0] ? l[0] : r[0];
        c[1] = l[1] > r[1] ? l[1] : r[1];
    }

    sc_status st = SC_OK;
    size_t start = out->len;
#define W(expr)                                                                                    \
    do {                                                                                           \
        if ((st = (expr)) != SC_OK)                                                                \
            goto done;                                                                             \
    } while (0)
    W(put32(out, BKD_MAGIC));
    W(put8(out, 1));
    W(put8(out, 0));
    W(put16(out, 0));
    W(put32(out, leaf_size));
    W(put32(out, (uint32_t)n));
    W(put32(out, n_leaves));
    W(put32(out, doc_bound));
    W(put32(out, n_docs));
    W(put64(out, (uint64_t)(n ? pts[0].v : 0)));
    W(put64(out, (uint64_t)(n ? pts[n - 1].v : 0)));
    W(put32(out, n_nodes));
    for (uint32_t i = 0; i < 2 * n_nodes; i++) {
        W(put64(out, (uint64_t)cell[2 * i]));
        W(put64(out, (uint64_t)cell[2 * i + 1]));
    }
    size_t dir = out->len;
    for (uint32_t j = 0; j <= n_leaves; j++)
        W(put64(out, 0));
    for (uint32_t j = 0; j < n_leaves; j++) {
        uint64_t off = out->len - start;
        memcpy(out->ptr + dir + 8 * (size_t)j, &off, 8);
        size_t from = (size_t)j * leaf_size, to = from + leaf_size < n ? from + leaf_size : n;
        int64_t cmin = pts[from].v, cmax = pts[to - 1].v;
        qsort(pts + from, to - from, sizeof(*pts), cmp_doc_val);
        W(write_leaf(pts + from, (uint32_t)(to - from), cmin, cmax, sdocs, sdeltas, out));
    }
    {
        uint64_t off = out->len - start;
        memcpy(out->ptr + dir + 8 * (size_t)n_leaves, &off, 8);
    }
#undef W
done:
    free(cell);
    free(sdocs);
    free(sdeltas);
    free(pts);
    return st;
}

/* ---- reader ---------------------------------------------------------------------------- */

sc_status sc_bkd_open(sc_slice bytes, sc_bkd *out)
{
    memset(out, 0, sizeof(*out));
    const uint8_t *p = bytes.ptr;
    if (bytes.len < BKD_HEADER || sc__ld32(p) != BKD_MAGIC || p[4] != 1)
        return SC_ECORRUPT;
    out->base = p;
    out->len = bytes.len;
    out->leaf_size = sc__ld32(p + 8);
    out->n_points = sc__ld32(p + 12);
    out->n_leaves = sc__ld32(p + 16);
    out->doc_bound = sc__ld32(p + 20);
    out->n_docs = sc__ld32(p + 24);
    out->min = (int64_t)sc__ld64(p + 28);
    out->max = (int64_t)sc__ld64(p + 36);
    out->n_nodes = sc__ld32(p + 44);
    if (out->n_points && out->min > out->max)
        return SC_ECORRUPT;
    return sc__bkd_layout_check(bytes, BKD_HEADER, out->leaf_size, out->n_points, out->n_leaves,
                                out->doc_bound, out->n_docs, out->n_nodes, &out->nodes,
                                &out->leafdir);
}

static inline void node_cell(const sc_bkd *t, uint32_t i, int64_t *mn, int64_t *mx)
{
    *mn = (int64_t)sc__ld64(t->nodes + (size_t)i * 16);
    *mx = (int64_t)sc__ld64(t->nodes + (size_t)i * 16 + 8);
}

void sc_bkd_leaf_cell(const sc_bkd *t, uint32_t leaf, int64_t *min, int64_t *max)
{
    node_cell(t, t->n_nodes + leaf, min, max);
}

void sc_bkd_leaf_span(const sc_bkd *t, int64_t lo, int64_t hi, uint32_t *first, uint32_t *end)
{
    uint32_t a = 0, b = t->n_leaves;
    while (a < b) { /* the first leaf whose max >= lo */
        uint32_t m = a + (b - a) / 2;
        int64_t mn, mx;
        sc_bkd_leaf_cell(t, m, &mn, &mx);
        if (mx < lo)
            a = m + 1;
        else
            b = m;
    }
    *first = a;
    b = t->n_leaves;
    while (a < b) { /* past the last leaf whose min <= hi */
        uint32_t m = a + (b - a) / 2;
        int64_t mn, mx;
        sc_bkd_leaf_cell(t, m, &mn, &mx);
        if (mn <= hi)
            a = m + 1;
        else
            b = m;
    }
    *end = a;
}

static inline uint32_t leaf_count(const sc_bkd *t, uint32_t j)
{
    return sc__bkd_leaf_count(j, t->n_leaves, t->leaf_size, t->n_points);
}

static inline sc_slice leaf_bytes(const sc_bkd *t, uint32_t j)
{
    return sc__bkd_leaf_slice(t->base, t->leafdir, j);
}

/* A parsed leaf: header checked, block bounds inside the leaf bytes. */
typedef struct leaf_view {
    uint8_t kind;
    uint8_t bits;
    uint32_t n;
    const uint8_t *docs; /* doc block */
    const uint8_t *vals; /* value block (with pad) */
} leaf_view;

static sc_status leaf_parse(sc_slice s, uint32_t max_n, leaf_view *v)
{
    if (s.len < 4)
        return SC_ECORRUPT;
    v->kind = s.ptr[0];
    v->bits = s.ptr[1];
    v->n = sc__ld16(s.ptr + 2);
    if (v->n == 0 || v->n > max_n || v->bits > 64)
        return SC_ECORRUPT;
    size_t doc_len;
    SC_TRY(sc__bkd_docs_len(v->kind, v->n, s.ptr + 4, s.len - 4, &doc_len));
    if (4 + doc_len + sc__packed_bytes(v->n, v->bits) > s.len)
        return SC_ECORRUPT;
    v->docs = s.ptr + 4;
    v->vals = v->docs + doc_len;
    return SC_OK;
}

/* Decodes the docs of a parsed leaf into docs[0..n) (ascending for valid input). */
static sc_status leaf_docs(const leaf_view *v, uint32_t doc_bound, uint32_t *docs)
{
    return sc__bkd_docs_decode(v->kind, v->docs, v->n, doc_bound, docs);
}

/* Decodes the values of a parsed leaf (leaf_min + packed delta). Bounds: leaf_parse reserved
 * the pad, so each 8-byte load stays inside the leaf. */
static void leaf_values(const leaf_view *v, int64_t leaf_min, int64_t *vals)
{
    sc__bkd_unpack64(v->vals, v->n, v->bits, leaf_min, vals);
}

sc_status sc_bkd_leaf_decode(sc_slice leaf, int64_t leaf_min, uint32_t doc_bound, uint32_t max_n,
                             uint32_t *docs, int64_t *values, uint32_t *n, uint8_t *doc_kind)
{
    leaf_view v;
    SC_TRY(leaf_parse(leaf, max_n, &v));
    SC_TRY(leaf_docs(&v, doc_bound, docs));
    leaf_values(&v, leaf_min, values);
    *n = v.n;
    if (doc_kind)
        *doc_kind = v.kind;
    return SC_OK;
}

sc_status sc_bkd_leaf_read(const sc_bkd *t, uint32_t leaf, uint32_t *docs, int64_t *values,
                           uint32_t *n, uint8_t *doc_kind)
{
    if (leaf >= t->n_leaves)
        return SC_EINVAL;
    int64_t mn, mx;
    sc_bkd_leaf_cell(t, leaf, &mn, &mx);
    SC_TRY(sc_bkd_leaf_decode(leaf_bytes(t, leaf), mn, t->doc_bound, t->leaf_size, docs, values, n,
                              doc_kind));
    return *n == leaf_count(t, leaf) ? SC_OK : SC_ECORRUPT;
}

uint32_t sc_bkd_leaf_count(const sc_bkd *t, uint32_t leaf)
{
    return leaf_count(t, leaf);
}

sc_status sc_bkd_leaf_values(const sc_bkd *t, uint32_t leaf, int64_t *values, uint32_t *n)
{
    if (leaf >= t->n_leaves)
        return SC_EINVAL;
    leaf_view v;
    SC_TRY(leaf_parse(leaf_bytes(t, leaf), t->leaf_size, &v));
    if (v.n != leaf_count(t, leaf))
        return SC_ECORRUPT;
    int64_t mn, mx;
    sc_bkd_leaf_cell(t, leaf, &mn, &mx);
    leaf_values(&v, mn, values);
    *n = v.n;
    return SC_OK;
}

/* Adds every doc of leaf j to bs without looking at values: one tight loop per packing kind
 * straight into the bitset words. */
static sc_status leaf_add_all(const sc_bkd *t, uint32_t j, sc_bitset *bs, uint32_t *docs)
{
    leaf_view v;
    SC_TRY(leaf_parse(leaf_bytes(t, j), t->leaf_size, &v));
    if (v.n != leaf_count(t, j))
        return SC_ECORRUPT;
    return sc__bkd_docs_add(v.kind, v.docs, v.n, t->doc_bound, bs, docs);
}

typedef struct isect {
    const sc_bkd *t;
    int64_t lo, hi;
    sc_bitset *bs; /* NULL: count only */
    uint64_t limit;
    sc_bkd_stats st;
    uint32_t *docs;
    int64_t *vals;
} isect;

static sc_status visit_inside(isect *x, uint32_t from, uint32_t to)
{
    for (uint32_t j = from; j < to; j++) {
        if (x->limit && x->st.points >= x->limit) {
            x->st.terminated = true;
            return SC_OK;
        }
        if (x->bs)
            SC_TRY(leaf_add_all(x->t, j, x->bs, x->docs));
        x->st.points += leaf_count(x->t, j);
        x->st.leaves_inside++;
    }
    return SC_OK;
}

static sc_status visit_crossing(isect *x, uint32_t j)
{
    if (x->limit && x->st.points >= x->limit) {
        x->st.terminated = true;
        return SC_OK;
    }
    const sc_bkd *t = x->t;
    leaf_view v;
    SC_TRY(leaf_parse(leaf_bytes(t, j), t->leaf_size, &v));
    if (v.n != leaf_count(t, j))
        return SC_ECORRUPT;
    int64_t mn, mx;
    sc_bkd_leaf_cell(t, j, &mn, &mx);
    leaf_values(&v, mn, x->vals);
    int64_t lo = x->lo, hi = x->hi;
    const int64_t *vals = x->vals;
    uint32_t n = v.n;
    x->st.leaves_crossing++;
    if (!x->bs) {
        uint64_t c = 0;
        for (uint32_t i = 0; i < n; i++)
            c += (uint64_t)((vals[i] >= lo) & (vals[i] <= hi));
        x->st.points += c;
        return SC_OK;
    }
    SC_TRY(leaf_docs(&v, t->doc_bound, x->docs));
    const uint32_t *docs = x->docs;
    uint64_t *words = x->bs->words, c = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t m = (uint64_t)((vals[i] >= lo) & (vals[i] <= hi));
        words[docs[i] >> 6] |= m << (docs[i] & 63);
        c += m;
    }
    x->st.points += c;
    return SC_OK;
}

static sc_status visit(isect *x, uint32_t node, unsigned depth)
{
    if (x->st.terminated)
        return SC_OK;
    const sc_bkd *t = x->t;
    int64_t mn, mx;
    node_cell(t, node, &mn, &mx);
    if (mn > mx || mx < x->lo || mn > x->hi)
        return SC_OK;
    uint32_t span = t->n_nodes >> depth;
    uint32_t first = (node - (1u << depth)) * span;
    if (first >= t->n_leaves)
        return SC_OK;
    if (x->lo <= mn && mx <= x->hi) {
        uint32_t to = first + span < t->n_leaves ? first + span : t->n_leaves;
        return visit_inside(x, first, to);
    }
    if (node >= t->n_nodes)
        return visit_crossing(x, node - t->n_nodes);
    SC_TRY(visit(x, 2 * node, depth + 1));
    return visit(x, 2 * node + 1, depth + 1);
}

static sc_status run(const sc_bkd *t, int64_t lo, int64_t hi, sc_bitset *bs, uint64_t limit,
                     sc_bkd_stats *stats)
{
    isect x = {.t = t, .lo = lo, .hi = hi, .bs = bs, .limit = limit};
    sc_status st = SC_OK;
    if (t->n_leaves && lo <= hi) {
        x.docs = malloc(sizeof(uint32_t) * t->leaf_size);
        x.vals = malloc(sizeof(int64_t) * t->leaf_size);
        if (!x.docs || !x.vals)
            st = SC_ENOMEM;
        else
            st = visit(&x, 1, 0);
        free(x.docs);
        free(x.vals);
    }
    if (stats)
        *stats = x.st;
    return st;
}

sc_status sc_bkd_intersect(const sc_bkd *t, int64_t lo, int64_t hi, sc_bitset *bs, uint64_t limit,
                           sc_bkd_stats *stats)
{
    if (!bs || bs->n_bits < t->doc_bound)
        return SC_EINVAL;
    return run(t, lo, hi, bs, limit, stats);
}

sc_status sc_bkd_count(const sc_bkd *t, int64_t lo, int64_t hi, uint64_t *count)
{
    sc_bkd_stats s;
    SC_TRY(run(t, lo, hi, NULL, 0, &s));
    *count = s.points;
    return SC_OK;
}

static uint64_t estimate(const sc_bkd *t, int64_t lo, int64_t hi, uint32_t node, unsigned depth)
{
    int64_t mn, mx;
    node_cell(t, node, &mn, &mx);
    if (mn > mx || mx < lo || mn > hi)
        return 0;
    uint32_t span = t->n_nodes >> depth;
    uint64_t first = (uint64_t)(node - (1u << depth)) * span;
    if (first >= t->n_leaves)
        return 0;
    if ((lo <= mn && mx <= hi) || node >= t->n_nodes) {
        uint64_t to = first + span < t->n_leaves ? first + span : t->n_leaves;
        uint64_t pts = (to - first) * t->leaf_size;
        uint64_t cap = t->n_points - first * t->leaf_size;
        return pts < cap ? pts : cap;
    }
    return estimate(t, lo, hi, 2 * node, depth + 1) + estimate(t, lo, hi, 2 * node + 1, depth + 1);
}

uint64_t sc_bkd_estimate(const sc_bkd *t, int64_t lo, int64_t hi)
{
    if (!t->n_leaves || lo > hi)
        return 0;
    return estimate(t, lo, hi, 1, 0);
}
