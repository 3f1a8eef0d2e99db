/* The composite aggregation (search/agg.h), its collection: every combination of its sources'
 * values in a doc (terms, histogram, date_histogram, geotile_grid; multi-valued sources give the
 * cartesian product) is a key (agg_composite_key.c encodes and orders them). A shard keeps the
 * `size` smallest keys after the `after` key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/bkd2.h"
#include "search/agg_internal.h"

#define MAX_COMBOS 1024 /* key combinations of one doc */
#define MAX_VALUES 64   /* values of one source in one doc */

typedef struct src_state {
    sc__agg_field f;
    sc__agg_tiles tiles; /* a geotile_grid source: rows by latitude (tiles.cells NULL: not yet) */
} src_state;

/* The segment's key cache: (owner, the sources' key parts) -> bucket ordinal, where a part is
 * a keyword's segment ordinal or a numeric source's key (rounded date, histogram key bits,
 * geotile key, value). Open addressing; FAST_EMPTY marks a free slot, FAST_SKIP a key at or
 * before `after`. Cleared at each segment (ordinals are the segment's). */
#define FAST_EMPTY UINT32_MAX
#define FAST_SKIP (UINT32_MAX - 1)
#define FAST_MAX_CAP ((size_t)1 << 20) /* slots; past that, misses are not cached */
#define FAST_WINDOW 256                /* docs whose parts are read at a time */
#define DENSE_MAX ((size_t)1 << 16)    /* combinations of keyword ordinals in a dense table */
#define HDENSE ((size_t)1 << 12)       /* bucket indexes of a lone histogram source */
#define TOP_MAX_KEEP 4096              /* largest size collect_top serves */

typedef struct fast_cache {
    int64_t *keys;  /* cap x (1 + n_sources): owner, parts */
    uint32_t *ords; /* cap */
    size_t cap, n;
} fast_cache;

typedef struct comp_state {
    sc__agg_ords ords;
    src_state *src;
    uint8_t *after; /* encoded after key, or NULL */
    size_t after_len;
    uint8_t *key; /* scratch key */
    size_t key_cap;
    bool fast; /* the segment's sources are all single-valued: collect_window */
    fast_cache fc;
    /* keyword sources only, top level, few combinations: the ordinal of each combination of
     * the segment's ordinals in a dense table (FAST_EMPTY: not seen yet) */
    uint32_t *dense;
    size_t dense_len, dense_cap;
    uint64_t mult[8];
    /* with no sub-aggregations: the segment's doc count of each combination in four lanes
     * (doc j of a window in lane j % 4: a run of docs with one combination does not wait on
     * its own increments), turned into bucket counts at seg_end (flush_dense), no ordinal
     * looked up per doc */
    uint32_t *dcount;
    /* one histogram source at the top level: the ordinal (or FAST_SKIP) of bucket index
     * hbase + i, FAST_EMPTY when not seen yet; for the whole collection (a histogram key
     * means the same in every segment) */
    uint32_t *hdense;
    int64_t hbase;
    /* one numeric source (not a histogram) at the top level without sub-aggregations: the
     * counts of its smallest keys (collect_top), turned into buckets at each seg_end
     * (flush_top); top.cap 0: not made yet */
    bool use_top;
    sc__agg_comp_top top;
} comp_state;

/* ---- collection ---- */

/* Whether source s reads at most one value per doc in this segment through a batch read:
 * a keyword's single-valued ordinals, or a numeric field with one value in every doc. */
static bool source_single(const sc_agg_spec *s, const sc__agg_field *f)
{
    if (sc__comp_is_bytes(s))
        return f->has_ss && sc_dv_sorted_set_is_single(&f->ss);
    return f->has_num && sc_dv_numeric_is_single(&f->num);
}

/* Whether collect_top serves this segment (cs->fast already set), and its table made on
 * first use: a key of the source is then one int64 in the source's order (ascending: the key;
 * descending: ~key), and a key at or before `after` is never counted. */
static sc_status top_begin(sc__agg_coll *c)
{
    comp_state *cs = c->state;
    const sc_agg_spec *s = c->spec->sources[0];
    cs->use_top = cs->fast && c->top && !c->n_subs && c->spec->n_sources == 1 &&
                  c->spec->kind == SC_AGG_COMPOSITE && c->spec->size <= TOP_MAX_KEEP &&
                  (s->kind == SC_AGG_DATE_HISTOGRAM || s->kind == SC_AGG_GEOTILE_GRID ||
                   (s->kind == SC_AGG_TERMS && !sc__comp_is_bytes(s)));
    if (!cs->use_top || cs->top.cap)
        return SC_OK;
    SC_TRY(sc__agg_comp_top_init(&cs->top, c->ctx->a, c->spec->size));
    if (c->spec->after && !c->spec->after[0].null) { /* a null sorts before every value */
        cs->top.has_lo = true;
        cs->top.lo = s->order.desc ? ~c->spec->after[0].i : c->spec->after[0].i;
    }
    return SC_OK;
}

static sc_status comp_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    comp_state *cs = c->state;
    cs->fast = true;
    for (size_t i = 0; i < c->spec->n_sources; i++) {
        SC_TRY(sc__agg_field_open(c->ctx, s->seg, c->spec->sources[i]->field, &cs->src[i].f));
        cs->fast = cs->fast && source_single(c->spec->sources[i], &cs->src[i].f);
    }
    SC_TRY(top_begin(c));
    if (cs->fc.n) { /* the previous segment's ordinals mean nothing here */
        memset(cs->fc.ords, 0xff, cs->fc.cap * sizeof *cs->fc.ords);
        cs->fc.n = 0;
    }
    cs->dense_len = 0;
    size_t combos = 1;
    for (size_t i = c->spec->n_sources; cs->fast && combos && i-- > 0;) {
        uint64_t n =
            sc__comp_is_bytes(c->spec->sources[i]) ? sc_dv_sorted_set_n_ords(&cs->src[i].f.ss) : 0;
        cs->mult[i] = combos;
        combos = n && n <= DENSE_MAX / combos ? combos * (size_t)n : 0;
    }
    if (cs->fast && c->top && combos) {
        if (combos > cs->dense_cap) {
            cs->dense = sc_arena_alloc(c->ctx->a, combos * sizeof *cs->dense);
            cs->dcount = sc_arena_calloc(c->ctx->a, 4 * combos, sizeof *cs->dcount);
            if (!cs->dense || !cs->dcount)
                return sc__agg_oom(c->ctx->a);
            cs->dense_cap = combos;
        }
        memset(cs->dense, 0xff, combos * sizeof *cs->dense);
        cs->dense_len = combos;
    }
    return SC_OK;
}

static sc_status miss_ord(sc__agg_coll *c, const int64_t *t, uint32_t *ord);

/* The segment's per-combination doc counts (dcount) into the buckets: each combination's
 * ordinal as collect_window would have looked it up (its parts from the index), then its
 * docs added at once; the counts are left zero. */
static sc_status flush_dense(sc__agg_coll *c)
{
    comp_state *cs = c->state;
    size_t ns = c->spec->n_sources;
    for (size_t idx = 0; idx < cs->dense_len; idx++) {
        uint32_t *lanes = &cs->dcount[4 * idx];
        uint64_t n = (uint64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
        if (!n)
            continue;
        memset(lanes, 0, 4 * sizeof *lanes);
        uint32_t ord = cs->dense[idx];
        if (ord == FAST_EMPTY) {
            int64_t t[9] = {0};
            for (size_t i = 0; i < ns; i++)
                t[1 + i] =
                    (int64_t)((idx / cs->mult[i]) % sc_dv_sorted_set_n_ords(&cs->src[i].f.ss));
            SC_TRY(miss_ord(c, t, &ord));
            cs->dense[idx] = ord;
        }
        if (ord == FAST_SKIP)
            continue;
        if (ord >= c->doc_counts.len)
            SC_TRY(sc__agg_counts_ensure(c, ord));
        ((uint64_t *)c->doc_counts.p)[ord] += n;
    }
    return SC_OK;
}

/* The counts of collect_top's table into the buckets (each key's ordinal as collect_window
 * would have looked it up); the table is left empty, its bound kept (it holds for the whole
 * collection: keys of later segments above it cannot be among the smallest either). */
static sc_status flush_top(sc__agg_coll *c)
{
    comp_state *cs = c->state;
    sc__agg_comp_top *top = &cs->top;
    bool desc = c->spec->sources[0]->order.desc;
    for (size_t i = 0; top->n && i < top->cap; i++) {
        if (!top->counts[i])
            continue;
        int64_t t[2] = {0, desc ? ~top->keys[i] : top->keys[i]};
        uint32_t ord;
        SC_TRY(miss_ord(c, t, &ord));
        if (ord == FAST_SKIP)
            continue;
        if (ord >= c->doc_counts.len)
            SC_TRY(sc__agg_counts_ensure(c, ord));
        ((uint64_t *)c->doc_counts.p)[ord] += top->counts[i];
    }
    memset(top->counts, 0, top->cap * sizeof *top->counts);
    top->n = 0;
    return SC_OK;
}

static sc_status comp_seg_end(sc__agg_coll *c)
{
    comp_state *cs = c->state;
    if (cs->use_top)
        return flush_top(c);
    return cs->dense_len && !c->n_subs ? flush_dense(c) : SC_OK;
}

/* The distinct values of source s in doc, ascending in doc-value order (n 0: none; with
 * missing_bucket one null). */
static size_t source_values(const sc_agg_spec *s, const sc__agg_field *f, uint32_t doc,
                            sc_agg_value *out)
{
    size_t n = 0;
    if (sc__comp_is_bytes(s) && f->has_ss) {
        uint64_t ords[MAX_VALUES];
        size_t k = sc_dv_sorted_set_ords(&f->ss, doc, ords, MAX_VALUES);
        for (size_t i = 0; i < k; i++) {
            out[n] = (sc_agg_value){.s = sc_dv_sorted_set_term(&f->ss, ords[i])};
            if (!out[n].s.ptr)
                out[n].s = sc_slice_make("", 0);
            n++;
        }
    } else if (!sc__comp_is_bytes(s) && f->has_num) {
        int64_t vals[MAX_VALUES];
        size_t k = sc_dv_numeric_get(&f->num, doc, vals, MAX_VALUES);
        for (size_t i = 0; i < k; i++) {
            sc_agg_value v = {0};
            if (s->kind == SC_AGG_GEOTILE_GRID) { /* tiles of several points: sorted, distinct */
                int32_t la = (int32_t)(uint32_t)((uint64_t)vals[i] >> 32);
                int32_t lo = (int32_t)(uint32_t)(uint64_t)vals[i];
                v.i =
                    sc_agg_geotile_key(s->precision, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
                size_t j = n;
                while (j && out[j - 1].i > v.i)
                    j--;
                if (j && out[j - 1].i == v.i)
                    continue;
                memmove(&out[j + 1], &out[j], (n - j) * sizeof *out);
                out[j] = v;
                n++;
                continue;
            }
            if (s->kind == SC_AGG_HISTOGRAM) {
                double d = sc_agg_value_to_double(s->vtype, vals[i]);
                if (s->scaling_factor > 0)
                    d /= s->scaling_factor;
                v.d = floor((d - s->offset) / s->interval) * s->interval + s->offset;
                if (n && out[n - 1].d == v.d)
                    continue;
            } else {
                v.i = s->kind == SC_AGG_DATE_HISTOGRAM ? sc_agg_round(&s->rounding, vals[i])
                                                       : vals[i];
                if (n && out[n - 1].i == v.i)
                    continue;
            }
            out[n++] = v;
        }
    }
    if (!n && s->has_missing) /* multi_terms: the substitute value */
        out[n++] = sc__comp_is_bytes(s) ? (sc_agg_value){.s = s->missing_bytes}
                                        : (sc_agg_value){.i = s->missing_num};
    else if (!n && s->missing_bucket)
        out[n++] = (sc_agg_value){.null = true};
    return n;
}

/* Every combination of the sources' values: its key, kept when after the `after` key. */
static sc_status add_doc(sc__agg_coll *c, uint32_t doc, uint32_t owner)
{
    comp_state *cs = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t ns = spec->n_sources;
    sc_agg_value vals[8][MAX_VALUES];
    size_t nv[8], idx[8] = {0}, combos = 1;
    for (size_t i = 0; i < ns; i++) {
        nv[i] = source_values(spec->sources[i], &cs->src[i].f, doc, vals[i]);
        if (!nv[i])
            return SC_OK;
        combos *= nv[i];
        if (combos > MAX_COMBOS)
            return SC_OK; /* a pathological doc: skipped */
    }
    for (size_t k = 0; k < combos; k++) {
        size_t len = 0;
        for (size_t i = 0; i < ns; i++)
            len += sc__comp_part_size(spec->sources[i], &vals[i][idx[i]]);
        if (len > cs->key_cap) {
            cs->key = sc_arena_alloc(c->ctx->a, len * 2);
            if (!cs->key)
                return sc__agg_oom(c->ctx->a);
            cs->key_cap = len * 2;
        }
        uint8_t *p = cs->key;
        for (size_t i = 0; i < ns; i++)
            p = sc__comp_part_put(spec->sources[i], &vals[i][idx[i]], p);
        sc_slice key = sc_slice_make(cs->key, len);
        if (!cs->after ||
            sc_agg_composite_cmp(spec, key, sc_slice_make(cs->after, cs->after_len)) > 0) {
            uint32_t ord;
            bool added;
            SC_TRY(sc__agg_ords_bytes(c->ctx->a, &cs->ords, owner, key, &ord, &added));
            SC_TRY(sc__agg_emit(c, doc, ord));
        }
        for (size_t i = ns; i-- > 0;) { /* next combination, odometer style */
            if (++idx[i] < nv[i])
                break;
            idx[i] = 0;
        }
    }
    return SC_OK;
}

/* ---- the single-valued fast path: key parts read a window at a time, cached ordinals ---- */

/* Every bit of every part reaches the low bits the table indexes by (murmur3's finalizer per
 * part): histogram keys are doubles whose low 48 bits are often all zero. Owner 0 (the top
 * level: every tuple) adds no round; the comparison still includes it. */
static uint64_t tuple_hash(const int64_t *t, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t i = t[0] == 0; i < n; i++) {
        h ^= (uint64_t)t[i];
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53u;
        h ^= h >> 33;
    }
    return h;
}

static inline bool tuple_eq(const int64_t *x, const int64_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return false;
    return true;
}

/* The cache slot of tuple t (n cells): its own, or the free one where it belongs. */
static size_t cache_slot(const fast_cache *fc, const int64_t *t, size_t n)
{
    size_t mask = fc->cap - 1, i = (size_t)tuple_hash(t, n) & mask;
    while (fc->ords[i] != FAST_EMPTY && !tuple_eq(&fc->keys[i * n], t, n))
        i = (i + 1) & mask;
    return i;
}

/* Doubles the cache (or makes its first 64 slots). False when at FAST_MAX_CAP. */
static sc_status cache_grow(sc__agg_coll *c, size_t n, bool *grown)
{
    fast_cache *fc = &((comp_state *)c->state)->fc;
    *grown = false;
    size_t cap = fc->cap ? fc->cap * 2 : 64;
    if (cap > FAST_MAX_CAP)
        return SC_OK;
    int64_t *keys = sc_arena_alloc(c->ctx->a, cap * n * sizeof *keys);
    uint32_t *ords = sc_arena_alloc(c->ctx->a, cap * sizeof *ords);
    if (!keys || !ords)
        return sc__agg_oom(c->ctx->a);
    memset(ords, 0xff, cap * sizeof *ords);
    fast_cache old = *fc;
    *fc = (fast_cache){.keys = keys, .ords = ords, .cap = cap, .n = old.n};
    for (size_t i = 0; i < old.cap; i++)
        if (old.ords[i] != FAST_EMPTY) {
            size_t j = cache_slot(fc, &old.keys[i * n], n);
            memcpy(&fc->keys[j * n], &old.keys[i * n], n * sizeof *keys);
            fc->ords[j] = old.ords[i];
        }
    *grown = true;
    return SC_OK;
}

/* A key part of source s from its doc value v (a keyword: its ordinal), as source_values
 * computes the key from the value. */
static int64_t numeric_part(const sc_agg_spec *s, int64_t v)
{
    if (s->kind == SC_AGG_GEOTILE_GRID) {
        int32_t la = (int32_t)(uint32_t)((uint64_t)v >> 32), lo = (int32_t)(uint32_t)(uint64_t)v;
        return sc_agg_geotile_key(s->precision, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
    }
    if (s->kind == SC_AGG_HISTOGRAM) {
        double d = sc_agg_value_to_double(s->vtype, v);
        if (s->scaling_factor > 0)
            d /= s->scaling_factor;
        d = floor((d - s->offset) / s->interval) * s->interval + s->offset;
        int64_t bits;
        memcpy(&bits, &d, 8);
        return bits;
    }
    return s->kind == SC_AGG_DATE_HISTOGRAM ? sc_agg_round(&s->rounding, v) : v;
}

/* The bucket ordinal of tuple t (owner, parts) on a cache miss: the key from the parts, then
 * FAST_SKIP when it is not after `after`, else its ordinal (added when new). */
static sc_status miss_ord(sc__agg_coll *c, const int64_t *t, uint32_t *ord)
{
    comp_state *cs = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t ns = spec->n_sources, len = 0;
    sc_agg_value v[8];
    for (size_t i = 0; i < ns; i++) {
        const sc_agg_spec *s = spec->sources[i];
        memset(&v[i], 0, sizeof v[i]);
        if (sc__comp_is_bytes(s)) {
            v[i].s = sc_dv_sorted_set_term(&cs->src[i].f.ss, (uint64_t)t[1 + i]);
            if (!v[i].s.ptr)
                v[i].s = sc_slice_make("", 0);
        } else if (s->kind == SC_AGG_HISTOGRAM) {
            memcpy(&v[i].d, &t[1 + i], 8);
        } else {
            v[i].i = t[1 + i];
        }
        len += sc__comp_part_size(s, &v[i]);
    }
    if (len > cs->key_cap) {
        cs->key = sc_arena_alloc(c->ctx->a, len * 2);
        if (!cs->key)
            return sc__agg_oom(c->ctx->a);
        cs->key_cap = len * 2;
    }
    uint8_t *p = cs->key;
    for (size_t i = 0; i < ns; i++)
        p = sc__comp_part_put(spec->sources[i], &v[i], p);
    sc_slice key = sc_slice_make(cs->key, len);
    if (cs->after &&
        sc_agg_composite_cmp(spec, key, sc_slice_make(cs->after, cs->after_len)) <= 0) {
        *ord = FAST_SKIP;
        return SC_OK;
    }
    bool added;
    return sc__agg_ords_bytes(c->ctx->a, &cs->ords, (uint32_t)t[0], key, ord, &added);
}

/* The ordinal of tuple t through the cache (a miss is computed and cached). */
static sc_status tuple_ord(sc__agg_coll *c, const int64_t *t, size_t n, uint32_t *ord)
{
    fast_cache *fc = &((comp_state *)c->state)->fc;
    if (fc->cap) {
        size_t i = cache_slot(fc, t, n);
        if (fc->ords[i] != FAST_EMPTY) {
            *ord = fc->ords[i];
            return SC_OK;
        }
    }
    SC_TRY(miss_ord(c, t, ord));
    bool room = fc->cap && (fc->n + 1) * 2 <= fc->cap;
    if (!room)
        SC_TRY(cache_grow(c, n, &room));
    if (room) {
        size_t i = cache_slot(fc, t, n);
        memcpy(&fc->keys[i * n], t, n * sizeof *t);
        fc->ords[i] = *ord;
        fc->n++;
    }
    return SC_OK;
}

/* collect_window for a lone histogram source at the top level: the bucket index of each value
 * (the floor numeric_part multiplies back into the key) maps to the ordinal through a dense
 * table, no tuple hash; a new index (and one outside the table) takes tuple_ord with the key
 * numeric_part computes, so the buckets are those of the general path. */
static sc_status collect_histo_top(sc__agg_coll *c, const uint32_t *docs, size_t n)
{
    comp_state *cs = c->state;
    const sc_agg_spec *s = c->spec->sources[0];
    int64_t raw[FAST_WINDOW];
    double fl[FAST_WINDOW];
    sc_dv_numeric_get_single_batch(&cs->src[0].f.num, docs, n, raw);
    for (size_t j = 0; j < n; j++) {
        double d = sc_agg_value_to_double(s->vtype, raw[j]);
        if (s->scaling_factor > 0)
            d /= s->scaling_factor;
        fl[j] = floor((d - s->offset) / s->interval);
    }
    if (!cs->hdense) {
        if (!(cs->hdense = sc_arena_alloc(c->ctx->a, HDENSE * sizeof *cs->hdense)))
            return sc__agg_oom(c->ctx->a);
        memset(cs->hdense, 0xff, HDENSE * sizeof *cs->hdense);
        double q = n ? fl[0] : 0;
        cs->hbase = q > -4e15 && q < 4e15 ? (int64_t)q - (int64_t)(HDENSE / 4) : 0;
    }
    for (size_t j = 0; j < n; j++) {
        double q = fl[j];
        uint64_t di = q > -4e15 && q < 4e15 ? (uint64_t)((int64_t)q - cs->hbase) : HDENSE;
        uint32_t ord = di < HDENSE ? cs->hdense[di] : FAST_EMPTY;
        if (ord == FAST_EMPTY) {
            double key = q * s->interval + s->offset;
            int64_t t[2] = {0, 0};
            memcpy(&t[1], &key, 8);
            SC_TRY(tuple_ord(c, t, 2, &ord));
            if (di < HDENSE)
                cs->hdense[di] = ord;
        }
        if (ord != FAST_SKIP)
            SC_TRY(sc__agg_emit(c, docs[j], ord));
    }
    return SC_OK;
}

/* collect_window for one numeric source at the top level without sub-aggregations: the keys
 * of a window (as numeric_part computes them), then a doc count per run of equal keys into
 * the bounded table, where a key past the `size` smallest seen so far costs one compare. An
 * ascending geotile source skips the row lookup of a point whose column is already past the
 * bound's column. */
static sc_status collect_top(sc__agg_coll *c, const uint32_t *docs, size_t n)
{
    comp_state *cs = c->state;
    const sc_agg_spec *s = c->spec->sources[0];
    sc__agg_comp_top *top = &cs->top;
    int64_t k[FAST_WINDOW];
    sc_dv_numeric_get_single_batch(&cs->src[0].f.num, docs, n, k);
    /* keys in the table's order: ~key (key ^ -1) for a descending source */
    int64_t flip = s->order.desc ? -1 : 0, run = 0;
    uint64_t cnt = 0; /* docs of key `run` not added yet */
    if (s->kind == SC_AGG_DATE_HISTOGRAM) {
        /* the last bucket's [key, next), as collect_window: a doc inside it only counts */
        int64_t key = 0, next = 0;
        for (size_t j = 0; j < n; j++) {
            int64_t v = k[j];
            if (v < key || v >= next) {
                if (cnt)
                    sc__agg_comp_top_add(top, key ^ flip, cnt);
                cnt = 0;
                key = sc_agg_round(&s->rounding, v);
                next = sc_agg_round_next(&s->rounding, key);
            }
            cnt++;
        }
        if (cnt)
            sc__agg_comp_top_add(top, key ^ flip, cnt);
        return SC_OK;
    }
    if (s->kind == SC_AGG_GEOTILE_GRID) {
        sc__agg_tiles *t = &cs->src[0].tiles;
        if (!t->cells)
            SC_TRY(sc__agg_tiles_init(t, c->ctx->a, s->precision));
        /* a key is z << 58 | x << 29 | y: ascending, a point whose (z, x) is past the bound's
         * is past the bound, its row not looked up */
        int64_t xb = s->order.desc ? INT64_MAX : top->bound >> 29;
        for (size_t j = 0; j < n; j++) {
            uint64_t v = (uint64_t)k[j];
            int32_t la = (int32_t)(uint32_t)(v >> 32), lo = (int32_t)(uint32_t)v;
            int64_t zx = (int64_t)((uint64_t)t->z << 29 |
                                   ((uint64_t)((uint32_t)lo ^ 0x80000000u) >> (32 - t->z)));
            if (zx > xb)
                continue;
            int64_t key = sc__agg_tiles_key(t, la, lo) ^ flip;
            if (key != run && cnt) {
                sc__agg_comp_top_add(top, run, cnt);
                cnt = 0;
            }
            run = key;
            cnt++;
        }
    } else { /* a numeric terms source: the value is the key */
        for (size_t j = 0; j < n; j++) {
            int64_t key = k[j] ^ flip;
            if (key != run && cnt) {
                sc__agg_comp_top_add(top, run, cnt);
                cnt = 0;
            }
            run = key;
            cnt++;
        }
    }
    if (cnt)
        sc__agg_comp_top_add(top, run, cnt);
    return SC_OK;
}

/* A window of docs (at most FAST_WINDOW) whose sources are all single-valued: each source's
 * parts in one batch read, then per doc the tuple's ordinal (the previous doc's when the
 * tuple repeats, else the cache's). A doc without a keyword value takes add_doc. */
static sc_status collect_window(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                                size_t n)
{
    comp_state *cs = c->state;
    const sc_agg_spec *spec = c->spec;
    size_t ns = spec->n_sources, tn = ns + 1;
    if (cs->use_top)
        return collect_top(c, docs, n);
    /* (an offset of -0.0 keeps the zero's sign of an index of -0.0 apart from +0.0's: the
     * general path) */
    if (ns == 1 && !owners && spec->sources[0]->kind == SC_AGG_HISTOGRAM &&
        !(spec->sources[0]->offset == 0 && signbit(spec->sources[0]->offset)))
        return collect_histo_top(c, docs, n);
    int64_t parts[8][FAST_WINDOW];
    bool none[FAST_WINDOW] = {false};
    for (size_t i = 0; i < ns; i++) {
        const sc_agg_spec *s = spec->sources[i];
        const sc__agg_field *f = &cs->src[i].f;
        if (sc__comp_is_bytes(s)) {
            uint32_t o[FAST_WINDOW], zero = 0;
            sc_dv_sorted_set_single_batch(&f->ss, docs, n, o);
            for (size_t j = 0; j < n; j++) { /* vectorized: no store to none[] per doc */
                zero |= o[j] == 0;
                parts[i][j] = (int64_t)o[j] - 1;
            }
            for (size_t j = 0; zero && j < n; j++) {
                none[j] |= o[j] == 0;
                parts[i][j] = o[j] ? parts[i][j] : 0;
            }
        } else if (s->kind == SC_AGG_DATE_HISTOGRAM) {
            /* neighbouring docs mostly share a bucket: the last bucket's bounds [key, next)
             * short-cut the rounding (a calendar month or a time zone costs a civil-date
             * conversion) */
            sc_dv_numeric_get_single_batch(&f->num, docs, n, parts[i]);
            int64_t key = 0, next = 0; /* empty */
            for (size_t j = 0; j < n; j++) {
                int64_t v = parts[i][j];
                if (v < key || v >= next) {
                    key = sc_agg_round(&s->rounding, v);
                    next = sc_agg_round_next(&s->rounding, key);
                }
                parts[i][j] = key;
            }
        } else if (s->kind == SC_AGG_GEOTILE_GRID) {
            /* the rows from the table instead of a sin and a log per point */
            sc__agg_tiles *t = &cs->src[i].tiles;
            if (!t->cells)
                SC_TRY(sc__agg_tiles_init(t, c->ctx->a, s->precision));
            sc_dv_numeric_get_single_batch(&f->num, docs, n, parts[i]);
            for (size_t j = 0; j < n; j++) {
                uint64_t v = (uint64_t)parts[i][j];
                parts[i][j] =
                    sc__agg_tiles_key(t, (int32_t)(uint32_t)(v >> 32), (int32_t)(uint32_t)v);
            }
        } else {
            sc_dv_numeric_get_single_batch(&f->num, docs, n, parts[i]);
            for (size_t j = 0; j < n; j++)
                parts[i][j] = numeric_part(s, parts[i][j]);
        }
    }
    int64_t t[9] = {0}, last[9] = {0};
    uint32_t last_ord = FAST_EMPTY;
    if (cs->dense_len && !owners && !c->n_subs) { /* counted per combination (flush_dense) */
        uint32_t *dc = cs->dcount;
        for (size_t j = 0; j < n; j++) {
            if (none[j]) {
                SC_TRY(add_doc(c, docs[j], 0));
                continue;
            }
            size_t idx = 0;
            for (size_t i = 0; i < ns; i++)
                idx += (size_t)parts[i][j] * cs->mult[i];
            dc[4 * idx + (j & 3)]++;
        }
        return SC_OK;
    }
    if (cs->dense_len && !owners) { /* keyword ordinals: a dense table of combinations */
        for (size_t j = 0; j < n; j++) {
            if (none[j]) {
                SC_TRY(add_doc(c, docs[j], 0));
                continue;
            }
            size_t idx = 0;
            for (size_t i = 0; i < ns; i++)
                idx += (size_t)parts[i][j] * cs->mult[i];
            uint32_t ord = cs->dense[idx];
            if (ord == FAST_EMPTY) {
                t[0] = 0;
                for (size_t i = 0; i < ns; i++)
                    t[1 + i] = parts[i][j];
                SC_TRY(miss_ord(c, t, &ord));
                cs->dense[idx] = ord;
            }
            if (ord != FAST_SKIP)
                SC_TRY(sc__agg_emit(c, docs[j], ord));
        }
        return SC_OK;
    }
    for (size_t j = 0; j < n; j++) {
        uint32_t owner = owners ? owners[j] : 0;
        if (none[j]) {
            SC_TRY(add_doc(c, docs[j], owner));
            continue;
        }
        t[0] = owner;
        for (size_t i = 0; i < ns; i++)
            t[1 + i] = parts[i][j];
        uint32_t ord;
        if (last_ord != FAST_EMPTY && tuple_eq(t, last, tn)) {
            ord = last_ord;
        } else {
            SC_TRY(tuple_ord(c, t, tn, &ord));
            memcpy(last, t, tn * sizeof *t);
            last_ord = ord;
        }
        if (ord != FAST_SKIP)
            SC_TRY(sc__agg_emit(c, docs[j], ord));
    }
    return SC_OK;
}

static sc_status comp_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                              size_t n)
{
    if (((comp_state *)c->state)->fast) {
        for (size_t i = 0; i < n; i += FAST_WINDOW) {
            size_t m = n - i < FAST_WINDOW ? n - i : FAST_WINDOW;
            SC_TRY(collect_window(c, docs + i, owners ? owners + i : NULL, m));
        }
        return SC_OK;
    }
    for (size_t i = 0; i < n; i++)
        SC_TRY(add_doc(c, docs[i], owners ? owners[i] : 0));
    return SC_OK;
}

static int cmp_keys(const void *x, const void *y, void *ctx)
{
    return sc__agg_key_cmp(ctx, x, y);
}

static int cmp_order(const void *x, const void *y, void *ctx)
{
    return sc__agg_bucket_cmp(ctx, x, y);
}

/* Owner's buckets: the `size` smallest keys. */
static sc_status comp_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    comp_state *cs = c->state;
    sc_arena *a = c->ctx->a;
    size_t nb = 0;
    for (size_t i = 0; i < cs->ords.n; i++)
        nb += sc__agg_ords_owner(&cs->ords, (uint32_t)i) == owner;
    sc_agg_result *r = sc__agg_result_new(a, c->spec, nb);
    if (!r)
        return sc__agg_oom(a);
    size_t k = 0;
    for (size_t i = 0; i < cs->ords.n; i++) {
        if (sc__agg_ords_owner(&cs->ords, (uint32_t)i) != owner)
            continue;
        r->buckets[k].bkey = sc__agg_ords_bkey(&cs->ords, (uint32_t)i);
        r->buckets[k++].key = (int64_t)i; /* the ordinal while sorting */
    }
    size_t keep;
    if (c->spec->kind == SC_AGG_MULTI_TERMS) {
        /* as terms: the top shard_size by the order (counts first), the rest in sum_other */
        for (size_t i = 0; i < nb; i++) {
            uint32_t ord = (uint32_t)r->buckets[i].key;
            r->buckets[i].doc_count =
                ord < c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[ord] : 0;
            if (c->spec->order.kind == SC_AGG_ORDER_METRIC)
                SC_TRY(sc__agg_build_bucket(c, ord, &r->buckets[i]));
        }
        qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_order, (void *)c->spec);
        uint32_t shard_size =
            sc_agg_terms_shard_size(c->spec, c->ctx->so ? c->ctx->so->n_shards : 1);
        keep = nb < shard_size ? nb : shard_size;
        for (size_t i = keep; i < nb; i++)
            r->sum_other += r->buckets[i].doc_count;
        r->shard_size = shard_size;
    } else {
        qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_keys, (void *)c->spec);
        keep = nb < c->spec->size ? nb : c->spec->size;
    }
    SC_TRY(sc__agg_count_buckets(c->ctx, keep));
    for (size_t i = 0; i < keep; i++) {
        uint32_t ord = (uint32_t)r->buckets[i].key;
        r->buckets[i].key = 0;
        SC_TRY(sc__agg_build_bucket(c, ord, &r->buckets[i]));
    }
    r->n_buckets = keep;
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops comp_ops = {
    .seg_begin = comp_seg_begin,
    .collect = comp_collect,
    .seg_end = comp_seg_end,
    .build = comp_build,
};

sc_status sc__agg_composite_new(sc__agg_coll *c)
{
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    if (spec->n_sources == 0 || spec->n_sources > 8)
        return SC_EINVAL;
    comp_state *cs = sc_arena_calloc(a, 1, sizeof *cs);
    if (!cs || !(cs->src = sc_arena_calloc(a, spec->n_sources, sizeof *cs->src)))
        return sc__agg_oom(a);
    if (spec->after) {
        size_t len = 0;
        for (size_t i = 0; i < spec->n_sources; i++)
            len += sc__comp_part_size(spec->sources[i], &spec->after[i]);
        if (!(cs->after = sc_arena_alloc(a, len ? len : 1)))
            return sc__agg_oom(a);
        uint8_t *p = cs->after;
        for (size_t i = 0; i < spec->n_sources; i++)
            p = sc__comp_part_put(spec->sources[i], &spec->after[i], p);
        cs->after_len = len;
    }
    c->state = cs;
    c->ops = &comp_ops;
    return SC_OK;
}
