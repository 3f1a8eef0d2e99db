/* The terms aggregation's collector and shard build (agg_internal.h). Keyword and ip fields
 * count sorted-set ordinals: a top-level terms without sub-aggregations counts into an array
 * indexed by segment ordinal (sc_dv_sorted_set_count_batch) and folds it into the shard's
 * term -> bucket table at segment end; otherwise each (owner, segment ordinal) maps to a shard
 * bucket ordinal once per segment. Numeric, date and boolean fields map (owner, value) to
 * bucket ordinals. The shard result keeps the top shard_size buckets by the order. */
#include <stdlib.h>
#include <string.h>

#include "index/bkd2.h"
#include "search/agg_internal.h"

typedef struct terms_state {
    sc__agg_ords ords; /* shard level: (owner, term or value) -> bucket ordinal */
    sc__agg_field f;
    const sc__agg_seg *seg;
    bool bytes;
    /* fast path (top level, no subs, keyword): counts[ord + 1], counts[0] = no value */
    uint32_t *counts;
    sc__agg_terms_fast *fast; /* the kept segment counts */
    bool used_fast;           /* top level, no subs: built from `fast` */
    /* top level with subs: segment ordinal -> bucket ordinal (UINT32_MAX = not yet) */
    uint32_t *seg_map;
    size_t seg_map_len;
    /* under a parent: (owner, segment ordinal) -> segment slot -> bucket ordinal */
    sc__agg_ords seg_ords;
    sc__agg_vec seg_slot;
    uint64_t *obuf; /* one doc's ords */
    size_t obuf_cap;
    uint32_t *gstart, *glist; /* bucket ordinals grouped by owner (build) */
    uint32_t n_owners;
    struct {
        int64_t key;
        uint32_t owner, ord; /* ord + 1, 0 = empty */
    } cache[256];            /* numeric: recent (owner, value) lookups, direct-mapped */
    bool significant;        /* significant_terms: no fast path; subset sizes per owner */
    bool rare;               /* rare_terms: no fast path; its own build */
    sc__agg_vec subset;      /* significant_terms: docs collected per owner */
    /* numeric at the top level, one value per doc, values spanning at most DENSE_SPAN in the
     * segment (its doc values header): the bucket ordinal of value dense_min + i in dense[i]
     * (UINT32_MAX = not looked up yet), kept across segments when large enough */
    uint32_t *dense;
    size_t dense_cap;
    bool dense_on;
    int64_t dense_min;
    /* the dense path and the top-level keyword path with subs (segment ordinals below
     * LANE_MAX_KEYS): docs counted per key (dense index or segment ordinal + 1) in LANES
     * counters, doc i of a window into lane i % LANES, added into doc_counts at segment end.
     * One count per bucket made each doc of a run in one bucket wait for the previous doc's
     * load-add-store of the same cell (store-to-load forwarding, ~5 cycles a doc; Rally's
     * rate_code_id is "1" for nearly every doc) */
    uint32_t *lanes;
    size_t lanes_cap, lanes_keys;
    /* those two paths when every sub is a metric on a field with one value per doc
     * (sc__agg_metric_fusable): a window's bucket ordinals go straight to the metrics, as the
     * fused histogram does; fused_n docs so far in this segment (the lane of the next) */
    uint64_t fused_n;
    /* int_window's guess of the window's dominant segment ordinal + 1 (UINT32_MAX: none) */
    uint32_t dom;
} terms_state;

/* The bucket of (owner, term bytes). */
static sc_status bucket_bytes(sc__agg_coll *c, uint32_t owner, sc_slice term, uint32_t *ord)
{
    terms_state *t = c->state;
    bool added;
    return sc__agg_ords_bytes(c->ctx->a, &t->ords, owner, term, ord, &added);
}

/* The largest value span (max - min) of a segment's numeric field that gets a dense table
 * (16 KiB, and 64 KiB of lane counts): Rally's passenger_count spans 0..9. */
#define DENSE_SPAN 4095

#define LANES SC__AGG_LANES
#define LANE_MAX_KEYS 16384

/* Zeroed lane counters for n keys in t->lanes (see terms_state). */
static sc_status lanes_begin(sc__agg_coll *c, size_t n)
{
    terms_state *t = c->state;
    if (n * LANES > t->lanes_cap) {
        t->lanes = sc_arena_alloc(c->ctx->a, n * LANES * sizeof *t->lanes);
        if (!t->lanes)
            return sc__agg_oom(c->ctx->a);
        t->lanes_cap = n * LANES;
    }
    memset(t->lanes, 0, n * LANES * sizeof *t->lanes);
    t->lanes_keys = n;
    return SC_OK;
}

/* Adds the lane counts of key i into doc_counts[map[i]] (the ordinal made sure of when it was
 * looked up), for every key counted in this segment. */
static void lanes_end(sc__agg_coll *c, const uint32_t *map)
{
    terms_state *t = c->state;
    uint64_t *dc = c->doc_counts.p;
    for (size_t i = 0; i < t->lanes_keys; i++) {
        const uint32_t *l = t->lanes + i * LANES;
        uint64_t n = (uint64_t)l[0] + l[1] + l[2] + l[3];
        if (n)
            dc[map[i]] += n;
    }
    t->lanes_keys = 0;
}

/* Sets up t->dense for the current segment when its field fits (see terms_state). */
static sc_status dense_begin(sc__agg_coll *c)
{
    terms_state *t = c->state;
    t->dense_on = false;
    const sc_dv_numeric *dv = &t->f.num;
    int64_t lo;
    uint64_t span;
    if (!c->top || t->bytes || !t->f.has_num || !sc_dv_numeric_is_single(dv) || c->spec->geotile ||
        c->spec->geohash || !sc_dv_numeric_range(dv, &lo, &span) || span > DENSE_SPAN)
        return SC_OK;
    size_t n = (size_t)span + 1;
    if (n > t->dense_cap) {
        t->dense = sc_arena_alloc(c->ctx->a, n * sizeof *t->dense);
        if (!t->dense)
            return sc__agg_oom(c->ctx->a);
        t->dense_cap = n;
    }
    memset(t->dense, 0xff, n * sizeof *t->dense);
    t->dense_min = lo;
    t->dense_on = true;
    return lanes_begin(c, n);
}

/* Whether every sub of c takes a window of (doc, bucket ordinal) directly (see terms_state). */
static bool subs_fusable(const sc__agg_coll *c)
{
    if (!c->n_subs)
        return false;
    for (size_t i = 0; i < c->n_subs; i++)
        if (!sc__agg_metric_fusable(c->subs[i]))
            return false;
    return true;
}

/* The window docs[0..k) with bucket ordinals ords[0..k) to every sub (subs_fusable): the
 * values, order and lanes the queued pairs would give them, so the same sums bit for bit. */
static sc_status to_subs(sc__agg_coll *c, const uint32_t *docs, const uint32_t *ords, size_t k)
{
    terms_state *t = c->state;
    if (!k)
        return SC_OK;
    uint32_t mx = (uint32_t)(t->ords.n - 1); /* every ordinal so far is below ords.n */
    SC_TRY(sc__agg_metrics_add_owned(c->subs, c->n_subs, docs, ords, k, mx, t->fused_n));
    t->fused_n += k;
    return SC_OK;
}

static sc_status terms_seg_begin(sc__agg_coll *c, const sc__agg_seg *s)
{
    terms_state *t = c->state;
    sc_arena *a = c->ctx->a;
    t->seg = s;
    t->fused_n = 0;
    t->dom = UINT32_MAX;
    SC_TRY(sc__agg_field_open(c->ctx, s->seg, c->spec->field, &t->f));
    SC_TRY(dense_begin(c));
    t->counts = NULL;
    t->seg_map = NULL;
    memset(&t->seg_ords, 0, sizeof t->seg_ords);
    memset(&t->seg_slot, 0, sizeof t->seg_slot);
    bool fast = c->top && !c->n_subs && !t->significant && !t->rare;
    if (!t->bytes || (!t->f.has_ss && !fast))
        return SC_OK;
    size_t n = t->f.has_ss ? (size_t)sc_dv_sorted_set_n_ords(&t->f.ss) + 1 : 1;
    if (fast) {
        t->used_fast = true;
        t->counts = sc_arena_calloc(a, n, sizeof *t->counts);
        if (!t->counts)
            return sc__agg_oom(a);
    } else if (c->top && t->f.has_ss) {
        t->seg_map = sc_arena_alloc(a, n * sizeof *t->seg_map);
        if (!t->seg_map)
            return sc__agg_oom(a);
        memset(t->seg_map, 0xff, n * sizeof *t->seg_map);
        t->seg_map_len = n;
        if (n <= LANE_MAX_KEYS && sc_dv_sorted_set_is_single(&t->f.ss))
            SC_TRY(lanes_begin(c, n));
    }
    return SC_OK;
}

/* The shard bucket of segment ordinal o + 1 (0 = the missing value) under owner. */
static sc_status seg_bucket(sc__agg_coll *c, uint32_t owner, uint64_t o1, uint32_t *ord)
{
    terms_state *t = c->state;
    sc_slice term = o1 ? sc_dv_sorted_set_term(&t->f.ss, o1 - 1) : c->spec->missing_bytes;
    if (!term.ptr)
        term = sc_slice_make("", 0);
    if (t->seg_map) {
        if (t->seg_map[o1] == UINT32_MAX)
            SC_TRY(bucket_bytes(c, owner, term, &t->seg_map[o1]));
        *ord = t->seg_map[o1];
        return SC_OK;
    }
    uint32_t slot;
    bool added;
    SC_TRY(sc__agg_ords_long(c->ctx->a, &t->seg_ords, owner, (int64_t)o1, &slot, &added));
    if (added) {
        SC_TRY(sc__agg_vec_ensure(c->ctx->a, &t->seg_slot, (size_t)slot + 1, 0));
        SC_TRY(bucket_bytes(c, owner, term, (uint32_t *)&((uint64_t *)t->seg_slot.p)[slot]));
    }
    *ord = (uint32_t)((const uint64_t *)t->seg_slot.p)[slot];
    return SC_OK;
}

/* The ords of doc (+1; the missing value's 0 when it has none and `missing` is set) into
 * t->obuf; returns how many. */
static sc_status doc_ords(sc__agg_coll *c, uint32_t doc, size_t *n_out)
{
    terms_state *t = c->state;
    uint32_t cnt = sc_dv_sorted_set_count(&t->f.ss, doc);
    if (cnt > t->obuf_cap) {
        t->obuf = sc_arena_alloc(c->ctx->a, cnt * sizeof *t->obuf);
        if (!t->obuf)
            return sc__agg_oom(c->ctx->a);
        t->obuf_cap = cnt;
    }
    size_t n = cnt ? sc_dv_sorted_set_ords(&t->f.ss, doc, t->obuf, cnt) : 0;
    for (size_t i = 0; i < n; i++)
        t->obuf[i]++;
    if (n == 0 && c->spec->has_missing && t->obuf_cap) {
        t->obuf[0] = 0;
        n = 1;
    }
    *n_out = n;
    return SC_OK;
}

#define DOM_MAX 256 /* collect_bytes's windows */

/* dominant_window's doc i of segment ordinal + 1 o1 (not the dominant key): counted and added
 * in its own lanes, taken out of the dominant key's (s, n). */
static sc_status dom_other(sc__agg_coll *c, uint32_t o1, size_t i, sc__agg_int_lanes *ml,
                           int64_t *s, uint64_t *n)
{
    terms_state *t = c->state;
    uint32_t ord = t->seg_map[o1];
    if (ord == UINT32_MAX) {
        SC_TRY(seg_bucket(c, 0, o1, &ord));
        SC_TRY(sc__agg_counts_ensure(c, ord));
        SC_TRY(sc__agg_metric_int_lanes(c->subs[0], ord, ml));
    }
    size_t x = (size_t)ord * LANES + (size_t)((t->fused_n + i) % LANES);
    t->lanes[(size_t)o1 * LANES + (i % LANES)]++;
    ml->count[x]++;
    ml->sum[x] += ml->v[i];
    s[i % LANES] -= ml->v[i];
    n[i % LANES]--;
    return SC_OK;
}

/* int_window's path for a window where one key holds at least 3/4 of the docs (Rally's
 * rate_code_id is "1" for ~97 % of them): that key's lane counts and int64 lane sums over
 * the whole window in registers (vectorized, doc i in lane i % LANES), and only the other docs
 * one at a time, each moved out of the dominant key's lanes into its own. The lanes end with
 * the counts and integer sums the per-doc loop gives them (integer sums do not depend on the
 * order). False (nothing done) when no key dominates; then the guess moves for the next
 * window. */
static sc_status dominant_window(sc__agg_coll *c, const uint32_t *o1s, size_t k,
                                 sc__agg_int_lanes *ml, bool *done)
{
    terms_state *t = c->state;
    *done = false;
    if ((c->ctx->so && c->ctx->so->per_doc_windows) || k > DOM_MAX)
        return SC_OK;
    uint32_t dom = t->dom == UINT32_MAX ? o1s[0] : t->dom;
    /* a flag byte per doc of another key (vectorized), zero-padded to whole 8-byte words, so
     * the scan below skips 8 docs of the dominant key per load, without a branch per doc */
    uint8_t ne[DOM_MAX + 8];
    size_t diff = 0;
    for (size_t i = 0; i < k; i++) {
        ne[i] = o1s[i] != dom;
        diff += ne[i];
    }
    memset(ne + k, 0, 8);
    uint32_t dord = t->seg_map[dom];
    if (diff * 4 > k || dord == UINT32_MAX) {
        t->dom = o1s[k / 2];
        return SC_OK;
    }
    int64_t s[LANES] = {0};
    uint64_t n[LANES];
    sc__agg_lane_sums(ml->v, k, s);
    size_t i;
    for (size_t l = 0; l < LANES; l++)
        n[l] = k / LANES + (l < k % LANES);
    uint32_t *lanes = t->lanes;
    uint64_t lane0 = t->fused_n;
    for (size_t b = 0; b < k; b += 8) {
        uint64_t w;
        memcpy(&w, ne + b, 8);
        for (; w; w &= w - 1) {
            i = b + (size_t)(__builtin_ctzll(w) >> 3);
            SC_TRY(dom_other(c, o1s[i], i, ml, s, n));
        }
    }
    for (size_t l = 0; l < LANES; l++) {
        size_t x = (size_t)dord * LANES + (size_t)((lane0 + l) % LANES);
        lanes[(size_t)dom * LANES + l] += (uint32_t)n[l];
        ml->count[x] += n[l];
        ml->sum[x] += s[l];
    }
    t->dom = dom;
    *done = true;
    return SC_OK;
}

/* The window docs[0..k) with segment ordinals + 1 o1s[0..k) of a top-level terms on a
 * single-valued keyword with lanes whose only sub is an int64 sum / avg
 * (sc__agg_metric_int_fusable): the metric reads the window's values, and one pass counts each
 * doc in its ordinal's lane and adds its value to its bucket's metric lane, with no (doc,
 * bucket) window between the two. The same int64 totals and counts as to_subs, so the same
 * result bit for bit. *done false: nothing taken (a doc without a term and no `missing`, where
 * to_subs would skip it, or the metric left its int64 sums): the caller's path instead. */
static sc_status int_window(sc__agg_coll *c, const uint32_t *docs, const uint32_t *o1s, size_t k,
                            bool *done)
{
    terms_state *t = c->state;
    *done = false;
    if (!t->ords.n) /* no bucket yet (so no owner to size the metric for): the caller's path */
        return SC_OK;
    if (!c->spec->has_missing) {
        uint32_t z = 0;
        for (size_t i = 0; i < k; i++)
            z |= o1s[i] == 0;
        if (z)
            return SC_OK;
    }
    sc__agg_int_lanes ml;
    bool taken;
    SC_TRY(sc__agg_metric_int_window(c->subs[0], docs, k, (uint32_t)(t->ords.n - 1), &ml, &taken));
    if (!taken)
        return SC_OK;
    uint32_t *lanes = t->lanes;
    const uint32_t *map = t->seg_map;
    uint64_t lane0 = t->fused_n;
    bool dom_done;
    SC_TRY(dominant_window(c, o1s, k, &ml, &dom_done));
    if (dom_done) {
        t->fused_n += k;
        *done = true;
        return SC_OK;
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t o1 = o1s[i], ord = map[o1];
        if (ord == UINT32_MAX) {
            SC_TRY(seg_bucket(c, 0, o1, &ord));
            SC_TRY(sc__agg_counts_ensure(c, ord));
            SC_TRY(sc__agg_metric_int_lanes(c->subs[0], ord, &ml));
        }
        size_t l = (size_t)((lane0 + i) % LANES), x = (size_t)ord * LANES + l;
        lanes[(size_t)o1 * LANES + (i % LANES)]++;
        ml.count[x]++;
        ml.sum[x] += ml.v[i];
    }
    t->fused_n += k;
    *done = true;
    return SC_OK;
}

static sc_status collect_bytes(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                               size_t n)
{
    terms_state *t = c->state;
    if (t->counts && !t->f.has_ss) {
        t->counts[0] += (uint32_t)n; /* no values in this segment */
        return SC_OK;
    }
    if (!t->f.has_ss) {
        if (!c->spec->has_missing)
            return SC_OK;
        for (size_t i = 0; i < n; i++) {
            uint32_t ord;
            SC_TRY(bucket_bytes(c, owners ? owners[i] : 0, c->spec->missing_bytes, &ord));
            SC_TRY(sc__agg_emit(c, docs[i], ord));
        }
        return SC_OK;
    }
    if (t->counts) {
        sc_dv_sorted_set_count_batch(&t->f.ss, docs, n, t->counts);
        return SC_OK;
    }
    if (t->seg_map && sc_dv_sorted_set_is_single(&t->f.ss)) {
        /* top level with subs, one value per doc: ords of the window in one batch */
        uint32_t o1s[256], wd[256], wo[256];
        uint32_t *lanes = t->lanes_keys ? t->lanes : NULL;
        bool fused = lanes && subs_fusable(c);
        bool onepass = fused && c->n_subs == 1 && sc__agg_metric_int_fusable(c->subs[0]);
        for (size_t off = 0; off < n; off += 256) {
            size_t k = n - off < 256 ? n - off : 256, m = 0;
            sc_dv_sorted_set_single_batch(&t->f.ss, docs + off, k, o1s);
            if (onepass) {
                bool done;
                SC_TRY(int_window(c, docs + off, o1s, k, &done));
                if (done)
                    continue;
                onepass = sc__agg_metric_int_fusable(c->subs[0]); /* else for good */
            }
            for (size_t i = 0; i < k; i++) {
                if (!o1s[i] && !c->spec->has_missing)
                    continue;
                uint32_t ord = t->seg_map[o1s[i]];
                if (ord == UINT32_MAX) {
                    SC_TRY(seg_bucket(c, 0, o1s[i], &ord));
                    SC_TRY(sc__agg_counts_ensure(c, ord));
                }
                if (fused) {
                    lanes[(size_t)o1s[i] * LANES + (i % LANES)]++;
                    wd[m] = docs[off + i];
                    wo[m++] = ord;
                } else if (lanes) {
                    lanes[(size_t)o1s[i] * LANES + (i % LANES)]++;
                    SC_TRY(sc__agg_emit_uncounted(c, docs[off + i], ord));
                } else {
                    SC_TRY(sc__agg_emit(c, docs[off + i], ord));
                }
            }
            if (fused)
                SC_TRY(to_subs(c, wd, wo, m));
        }
        return SC_OK;
    }
    if (!t->obuf_cap) {
        t->obuf = sc_arena_alloc(c->ctx->a, 16 * sizeof *t->obuf);
        if (!t->obuf)
            return sc__agg_oom(c->ctx->a);
        t->obuf_cap = 16;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k;
        SC_TRY(doc_ords(c, docs[i], &k));
        for (size_t j = 0; j < k; j++) {
            uint32_t ord;
            SC_TRY(seg_bucket(c, owners ? owners[i] : 0, t->obuf[j], &ord));
            SC_TRY(sc__agg_emit(c, docs[i], ord));
        }
    }
    return SC_OK;
}

/* geotile_grid / geohash_grid (hash): the packed points vals[0..k) into their distinct cells,
 * ascending; the count. */
static size_t geocells(bool hash, uint32_t z, int64_t *vals, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        int32_t la = (int32_t)(uint32_t)((uint64_t)vals[i] >> 32);
        int32_t lo = (int32_t)(uint32_t)(uint64_t)vals[i];
        int64_t v = hash ? sc_agg_geohash_key(z, la, lo)
                         : sc_agg_geotile_key(z, sc_geo_decode_lat(la), sc_geo_decode_lon(lo));
        size_t j = n;
        while (j && vals[j - 1] > v)
            j--;
        if (j && vals[j - 1] == v)
            continue;
        memmove(&vals[j + 1], &vals[j], (n - j) * sizeof *vals);
        vals[j] = v;
        n++;
    }
    return n;
}

static sc_status collect_nums(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                              size_t n)
{
    terms_state *t = c->state;
    int64_t vals[256];
    if (t->dense_on) {
        /* a small span of values: the ordinal from the dense table, one load per doc (the
         * hashed cache below cost a multiply, three compares and a branch that mispredicts
         * as the value changes). Each value is min + p * gcd with p < 2^bits, so its index is
         * at most the span. */
        uint32_t *dense = t->dense, *lanes = t->lanes, wo[256];
        uint64_t base = (uint64_t)t->dense_min;
        bool fused = subs_fusable(c);
        for (size_t off = 0; off < n; off += 256) {
            size_t k = n - off < 256 ? n - off : 256;
            sc_dv_numeric_get_single_batch(&t->f.num, docs + off, k, vals);
            for (size_t i = 0; i < k; i++) {
                size_t x = (size_t)((uint64_t)vals[i] - base);
                if (dense[x] == UINT32_MAX) {
                    bool added;
                    SC_TRY(sc__agg_ords_long(c->ctx->a, &t->ords, 0, vals[i], &dense[x], &added));
                    SC_TRY(sc__agg_counts_ensure(c, dense[x]));
                }
                lanes[x * LANES + (i % LANES)]++;
                wo[i] = dense[x];
                if (!fused)
                    SC_TRY(sc__agg_emit_uncounted(c, docs[off + i], dense[x]));
            }
            if (fused)
                SC_TRY(to_subs(c, docs + off, wo, k));
        }
        return SC_OK;
    }
    if (t->f.has_num && sc_dv_numeric_is_single(&t->f.num) && !c->spec->geotile &&
        !c->spec->geohash) {
        /* one value per doc (so `missing` never applies): a window's values in one batch read */
        for (size_t off = 0; off < n; off += 256) {
            size_t k = n - off < 256 ? n - off : 256;
            sc_dv_numeric_get_single_batch(&t->f.num, docs + off, k, vals);
            for (size_t i = 0; i < k; i++) {
                uint32_t owner = owners ? owners[off + i] : 0;
                int64_t v = vals[i];
                size_t slot = ((uint64_t)v * 0x9e3779b97f4a7c15u + owner) >> 56;
                uint32_t ord;
                if (t->cache[slot].ord && t->cache[slot].key == v &&
                    t->cache[slot].owner == owner) {
                    ord = t->cache[slot].ord - 1;
                } else {
                    bool added;
                    SC_TRY(sc__agg_ords_long(c->ctx->a, &t->ords, owner, v, &ord, &added));
                    t->cache[slot].key = v;
                    t->cache[slot].owner = owner;
                    t->cache[slot].ord = ord + 1;
                }
                SC_TRY(sc__agg_emit(c, docs[off + i], ord));
            }
        }
        return SC_OK;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = t->f.has_num ? sc_dv_numeric_get(&t->f.num, docs[i], vals, 256) : 0;
        if (c->spec->geotile || c->spec->geohash)
            k = geocells(c->spec->geohash, c->spec->precision, vals, k);
        if (k == 0 && c->spec->has_missing) {
            vals[0] = c->spec->missing_num;
            k = 1;
        }
        uint32_t owner = owners ? owners[i] : 0;
        for (size_t j = 0; j < k; j++) {
            if (j && vals[j] == vals[j - 1])
                continue; /* a value repeated in a doc counts the doc once */
            size_t slot = ((uint64_t)vals[j] * 0x9e3779b97f4a7c15u + owner) >> 56;
            uint32_t ord;
            if (t->cache[slot].ord && t->cache[slot].key == vals[j] &&
                t->cache[slot].owner == owner) {
                ord = t->cache[slot].ord - 1;
            } else {
                bool added;
                SC_TRY(sc__agg_ords_long(c->ctx->a, &t->ords, owner, vals[j], &ord, &added));
                t->cache[slot].key = vals[j];
                t->cache[slot].owner = owner;
                t->cache[slot].ord = ord + 1;
            }
            SC_TRY(sc__agg_emit(c, docs[i], ord));
        }
    }
    return SC_OK;
}

static sc_status terms_collect(sc__agg_coll *c, const uint32_t *docs, const uint32_t *owners,
                               size_t n)
{
    terms_state *t = c->state;
    if (t->significant) {
        /* the subset: docs per owner bucket */
        for (size_t i = 0; i < n; i++) {
            uint32_t w = owners ? owners[i] : 0;
            if (w >= t->subset.len)
                SC_TRY(sc__agg_vec_ensure(c->ctx->a, &t->subset, (size_t)w + 1, 0));
            ((uint64_t *)t->subset.p)[w]++;
        }
    }
    return t->bytes ? collect_bytes(c, docs, owners, n) : collect_nums(c, docs, owners, n);
}

/* Fast path: the segment's non-zero counts are kept for the build. */
static sc_status terms_seg_end(sc__agg_coll *c)
{
    terms_state *t = c->state;
    if (t->lanes_keys) /* the lane counts of this segment into doc_counts */
        lanes_end(c, t->dense_on ? t->dense : t->seg_map);
    if (t->seg_map && c->spec->min_doc_count == 0) {
        /* min_doc_count 0 (top level with subs): every term of the segment gets a bucket */
        for (uint64_t o1 = 1; o1 < t->seg_map_len; o1++) {
            uint32_t ord = t->seg_map[o1];
            if (ord == UINT32_MAX)
                SC_TRY(seg_bucket(c, 0, o1, &ord));
            SC_TRY(sc__agg_counts_ensure(c, ord));
        }
    }
    if (!t->counts)
        return SC_OK;
    SC_TRY(sc__agg_terms_fast_seg_end(c, &t->fast, &t->f.ss, t->counts));
    t->counts = NULL;
    return SC_OK;
}

static int cmp_buckets(const void *a, const void *b, void *ctx)
{
    return sc__agg_bucket_cmp(ctx, a, b);
}

/* Builds owner's buckets: every bucket (with subs when ordering by a sub-aggregation), the
 * top shard_size kept by the order, the rest summed into sum_other. */
static sc_status terms_build(sc__agg_coll *c, uint32_t owner, sc_agg_result **out)
{
    terms_state *t = c->state;
    sc_arena *a = c->ctx->a;
    const sc_agg_spec *spec = c->spec;
    if (t->significant)
        return sc__agg_significant_build(c, &t->ords, &t->subset, owner, out);
    if (t->used_fast || (c->top && !c->n_subs && t->bytes && !t->ords.n && !t->rare))
        return sc__agg_terms_fast_build(c, t->fast, out);
    if (!t->gstart || owner >= t->n_owners) {
        uint32_t n_owners = 1;
        for (size_t i = 0; i < t->ords.n; i++) {
            uint32_t w = sc__agg_ords_owner(&t->ords, (uint32_t)i);
            if (w + 1 > n_owners)
                n_owners = w + 1;
        }
        if (owner + 1 > n_owners)
            n_owners = owner + 1;
        SC_TRY(sc__agg_ords_group(a, &t->ords, n_owners, &t->gstart, &t->glist));
        t->n_owners = n_owners;
    }
    size_t nb = t->gstart[owner + 1] - t->gstart[owner];
    const uint32_t *list = t->glist + t->gstart[owner];
    if (spec->term_filter) {
        /* include/exclude: excluded terms are dropped before anything counts them */
        uint32_t *kept = sc_arena_alloc(a, (nb ? nb : 1) * sizeof *kept);
        if (!kept)
            return sc__agg_oom(a);
        size_t k = 0;
        for (size_t i = 0; i < nb; i++) {
            bool ok = t->bytes ? sc_agg_term_filter_bytes(spec->term_filter,
                                                          sc__agg_ords_bkey(&t->ords, list[i]))
                               : sc_agg_term_filter_num(spec->term_filter,
                                                        sc__agg_ords_key(&t->ords, list[i]));
            if (ok)
                kept[k++] = list[i];
        }
        list = kept;
        nb = k;
    }
    if (t->rare)
        return sc__agg_rare_build(c, t->bytes, &t->ords, list, nb, out);
    sc_agg_result *r = sc__agg_result_new(a, spec, nb);
    if (!r)
        return sc__agg_oom(a);
    bool by_metric = spec->order.kind == SC_AGG_ORDER_METRIC;
    for (size_t i = 0; i < nb; i++) {
        sc_agg_bucket *b = &r->buckets[i];
        uint32_t ord = list[i];
        if (t->bytes)
            b->bkey = sc__agg_ords_bkey(&t->ords, ord);
        else
            b->key = sc__agg_ords_key(&t->ords, ord);
        b->key = t->bytes ? (int64_t)ord : b->key;
        b->doc_count = ord < c->doc_counts.len ? ((const uint64_t *)c->doc_counts.p)[ord] : 0;
        if (by_metric)
            SC_TRY(sc__agg_build_bucket(c, ord, b));
    }
    /* while sorting, a bucket carries its ordinal: bytes buckets in key, others in
     * doc_count_error (neither takes part in the comparison there) */
    for (size_t i = 0; i < nb && !t->bytes; i++)
        r->buckets[i].doc_count_error = list[i];
    qsort_r(r->buckets, nb, sizeof *r->buckets, cmp_buckets, (void *)spec);
    uint32_t shard_size = sc_agg_terms_shard_size(spec, c->ctx->so ? c->ctx->so->n_shards : 1);
    size_t keep = nb < shard_size ? nb : shard_size;
    for (size_t i = keep; i < nb; i++)
        r->sum_other += r->buckets[i].doc_count;
    r->n_buckets = keep;
    r->shard_size = shard_size;
    SC_TRY(sc__agg_count_buckets(c->ctx, keep));
    for (size_t i = 0; i < keep; i++) {
        sc_agg_bucket *b = &r->buckets[i];
        uint32_t ord = t->bytes ? (uint32_t)b->key : (uint32_t)b->doc_count_error;
        if (t->bytes)
            b->key = 0;
        b->doc_count_error = 0;
        if (!by_metric)
            SC_TRY(sc__agg_build_bucket(c, ord, b));
    }
    r->doc_count_error = 0;
    *out = r;
    return SC_OK;
}

static const sc__agg_coll_ops terms_ops = {
    .seg_begin = terms_seg_begin,
    .collect = terms_collect,
    .seg_end = terms_seg_end,
    .build = terms_build,
};

sc_status sc__agg_terms_new(sc__agg_coll *c)
{
    terms_state *t = sc_arena_calloc(c->ctx->a, 1, sizeof *t);
    if (!t)
        return sc__agg_oom(c->ctx->a);
    t->bytes = c->spec->vtype == SC_AGG_V_KEYWORD || c->spec->vtype == SC_AGG_V_IP ||
               c->spec->vtype == SC_AGG_V_UNMAPPED;
    t->significant = c->spec->kind == SC_AGG_SIGNIFICANT_TERMS;
    t->rare = c->spec->kind == SC_AGG_RARE_TERMS;
    c->state = t;
    c->ops = &terms_ops;
    return SC_OK;
}

uint32_t sc_agg_terms_shard_size(const sc_agg_spec *spec, uint32_t n_shards)
{
    uint64_t s = spec->size;
    if (spec->shard_size)
        return spec->shard_size < spec->size ? spec->size : spec->shard_size;
    if (n_shards <= 1)
        return (uint32_t)s;
    uint64_t x = s + s / 2 + 10; /* floor(size * 1.5 + 10) */
    return x > INT32_MAX ? INT32_MAX : (uint32_t)x;
}
