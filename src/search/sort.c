/* Field-sorted top-k collector with points-based skipping. See sort.h. */
#include "search/sort.h"

#include <math.h>
#include <string.h>

#include "index/docvalues.h"
#include "search/range.h"

#define VAL_STACK 64
#define CHECK_EVERY 32 /* collected docs between competitive-range estimates */
/* A competitive set is built only once est <= BUILD_PER_DOC x the docs collected in the
 * segment: collecting a doc (next + doc values + heap) costs about 30 ns, intersecting a point
 * about 1.2 ns (bench/topk_bench.c). */
#define BUILD_PER_DOC 32
/* Below n_docs / LIST_DIV estimated points the set is a sorted doc list, not a bitset. */
#define LIST_DIV 128

typedef struct seg_reader {
    sc_dv_numeric num;
    sc_dv_sorted_set ss;
    bool has_num, has_ss;
} seg_reader;

struct sc_sort_collector {
    sc_arena *a;
    sc_sort_spec *specs;
    size_t n, k;
    sc_sort_key *after;  /* NULL or n values */
    sc_sorted_hit *heap; /* max-heap by sort order: the worst hit at [0] */
    size_t len;
    sc_sort_key *cand; /* scratch n values */
    int64_t *buf;      /* multi-valued docs beyond VAL_STACK */
    uint32_t buf_cap;
    seg_reader *rd; /* n readers of the current segment */
    bool done;
    uint64_t prune_after; /* points prune only once this many docs were collected */
    sc_sort_stats st;
    bool track_scores; /* score every doc; max_score their best */
    bool any_score;
    float max_score;
    const sc_segment *seg; /* the segment being collected (nested sorts read its blocks) */
    int64_t *nbuf;         /* nested sorts: the values of a root's children */
    size_t nbuf_cap;
};

static sc_sort_mode eff_mode(const sc_sort_spec *s)
{
    if (s->mode != SC_SORT_MODE_AUTO)
        return s->mode;
    return s->desc ? SC_SORT_MODE_MAX : SC_SORT_MODE_MIN;
}

static bool uses_double(const sc_sort_spec *s)
{
    sc_sort_mode m = eff_mode(s);
    return s->kind == SC_SORT_BY_SCORE ||
           (s->kind == SC_SORT_BY_NUMERIC && (m == SC_SORT_MODE_AVG || m == SC_SORT_MODE_SUM));
}

int sc_sort_compare(const sc_sort_spec *specs, size_t n, const sc_sort_key *a, const sc_sort_key *b)
{
    for (size_t i = 0; i < n; i++) {
        const sc_sort_spec *s = &specs[i];
        const sc_sort_key *x = &a[i], *y = &b[i];
        if (x->missing || y->missing) {
            if (x->missing && y->missing)
                continue;
            int first = s->missing_first ? -1 : 1; /* where the missing one goes */
            return x->missing ? first : -first;
        }
        int c;
        if (s->kind == SC_SORT_BY_KEYWORD)
            c = sc_slice_cmp(x->s, y->s);
        else if (uses_double(s))
            c = (x->d > y->d) - (x->d < y->d);
        else
            c = (x->i > y->i) - (x->i < y->i);
        if (c)
            return s->desc ? -c : c;
    }
    return 0;
}

static int hit_cmp(const sc_sort_collector *c, const sc_sorted_hit *x, const sc_sorted_hit *y)
{
    int r = sc_sort_compare(c->specs, c->n, x->values, y->values);
    if (r)
        return r;
    return (x->global_doc > y->global_doc) - (x->global_doc < y->global_doc);
}

sc_status sc_sort_collector_new(sc_arena *a, const sc_sort_spec *specs, size_t n, size_t k,
                                const sc_sort_key *search_after, sc_sort_collector **out)
{
    if (n == 0 || k == 0 || k > (SIZE_MAX / 4) / (n * sizeof(sc_sort_key)))
        return SC_EINVAL;
    for (size_t i = 0; i < n; i++) {
        sc_sort_mode m = specs[i].mode;
        if (m > SC_SORT_MODE_SUM || (specs[i].kind != SC_SORT_BY_NUMERIC &&
                                     (m == SC_SORT_MODE_AVG || m == SC_SORT_MODE_SUM)))
            return SC_EINVAL;
    }
    sc_sort_collector *c = sc_arena_calloc(a, 1, sizeof *c);
    if (!c)
        return SC_ENOMEM;
    c->a = a;
    c->n = n;
    c->k = k;
    c->prune_after = 0;
    c->specs = sc_arena_alloc(a, n * sizeof *c->specs);
    c->heap = sc_arena_alloc(a, k * sizeof *c->heap);
    sc_sort_key *vals = sc_arena_calloc(a, k * n, sizeof *vals);
    c->cand = sc_arena_calloc(a, n, sizeof *c->cand);
    c->rd = sc_arena_calloc(a, n, sizeof *c->rd);
    c->buf = sc_arena_alloc(a, VAL_STACK * sizeof(int64_t));
    c->buf_cap = VAL_STACK;
    if (!c->specs || !c->heap || !vals || !c->cand || !c->rd || !c->buf)
        return SC_ENOMEM;
    memcpy(c->specs, specs, n * sizeof *specs);
    for (size_t s = 0; s < k; s++)
        c->heap[s].values = vals + s * n;
    if (search_after) {
        c->after = sc_arena_alloc(a, n * sizeof *c->after);
        if (!c->after)
            return SC_ENOMEM;
        memcpy(c->after, search_after, n * sizeof *c->after);
    }
    *out = c;
    return SC_OK;
}

/* The values of a numeric doc (ascending) in c->buf; returns the count (0: missing). */
static size_t num_values(sc_sort_collector *c, const sc_dv_numeric *dv, uint32_t doc, sc_status *st)
{
    uint32_t cnt = sc_dv_numeric_count(dv, doc);
    if (cnt > c->buf_cap) {
        int64_t *nb = sc_arena_alloc(c->a, (size_t)cnt * sizeof(int64_t));
        if (!nb) {
            *st = SC_ENOMEM;
            return 0;
        }
        c->buf = nb;
        c->buf_cap = cnt;
    }
    return cnt ? sc_dv_numeric_get(dv, doc, c->buf, cnt) : 0;
}

static double decode_double(int64_t v)
{
    int64_t bits = v ^ ((v >> 63) & INT64_MAX);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* A nested sort's values of root `doc`: every value (numeric, or keyword ordinals as int64)
 * of its children (the docs of its block before it), into c->nbuf; *n_out how many. */
static sc_status nested_values(sc_sort_collector *c, const seg_reader *r, bool numeric,
                               uint32_t doc, size_t *n_out)
{
    *n_out = 0;
    const sc_bitset *parents = sc_segment_parents(c->seg);
    if (!parents)
        return SC_OK;
    size_t n = 0;
    for (uint32_t d = sc_segment_block_start(c->seg, doc); d < doc; d++) {
        uint32_t cnt =
            numeric ? sc_dv_numeric_count(&r->num, d) : sc_dv_sorted_set_count(&r->ss, d);
        if (!cnt)
            continue;
        if (n + cnt > c->nbuf_cap) {
            size_t cap = (n + cnt) * 2;
            int64_t *nb = sc_arena_alloc(c->a, cap * sizeof *nb);
            if (!nb)
                return SC_ENOMEM;
            if (n)
                memcpy(nb, c->nbuf, n * sizeof *nb);
            c->nbuf = nb;
            c->nbuf_cap = cap;
        }
        n += numeric ? sc_dv_numeric_get(&r->num, d, c->nbuf + n, cnt)
                     : sc_dv_sorted_set_ords(&r->ss, d, (uint64_t *)(c->nbuf + n), cnt);
    }
    *n_out = n;
    return SC_OK;
}

/* The sort key of a nested sort spec for root doc. */
static sc_status nested_key(sc_sort_collector *c, const sc_sort_spec *s, const seg_reader *r,
                            uint32_t doc, sc_sort_key *v)
{
    bool numeric = s->kind == SC_SORT_BY_NUMERIC;
    size_t m = 0;
    if (numeric ? r->has_num : r->has_ss)
        SC_TRY(nested_values(c, r, numeric, doc, &m));
    if (m == 0) {
        v->missing = true;
        return SC_OK;
    }
    sc_sort_mode mode = eff_mode(s);
    if (numeric && (mode == SC_SORT_MODE_AVG || mode == SC_SORT_MODE_SUM)) {
        double sum = 0;
        for (size_t j = 0; j < m; j++)
            sum += s->is_double ? decode_double(c->nbuf[j]) : (double)c->nbuf[j];
        v->d = mode == SC_SORT_MODE_AVG ? sum / (double)m : sum;
        return SC_OK;
    }
    /* min / max over every child's values (keyword ordinals compare as their terms) */
    bool max = mode == SC_SORT_MODE_MAX;
    if (numeric) {
        int64_t best = c->nbuf[0];
        for (size_t j = 1; j < m; j++)
            if (max ? c->nbuf[j] > best : c->nbuf[j] < best)
                best = c->nbuf[j];
        v->i = best;
    } else {
        const uint64_t *o = (const uint64_t *)c->nbuf;
        uint64_t best = o[0];
        for (size_t j = 1; j < m; j++)
            if (max ? o[j] > best : o[j] < best)
                best = o[j];
        v->s = sc_dv_sorted_set_term(&r->ss, best);
    }
    return SC_OK;
}

static sc_status read_values(sc_sort_collector *c, uint32_t doc, uint64_t global, float score,
                             sc_sort_key *out)
{
    sc_status st = SC_OK;
    for (size_t i = 0; i < c->n; i++) {
        const sc_sort_spec *s = &c->specs[i];
        sc_sort_key *v = &out[i];
        memset(v, 0, sizeof *v);
        switch (s->kind) {
        case SC_SORT_BY_SCORE: v->d = score; break;
        case SC_SORT_BY_DOC: v->i = (int64_t)global; break;
        case SC_SORT_BY_NUMERIC: {
            if (s->nested_path.len) {
                SC_TRY(nested_key(c, s, &c->rd[i], doc, v));
                break;
            }
            if (!c->rd[i].has_num) {
                v->missing = true;
                break;
            }
            size_t m = num_values(c, &c->rd[i].num, doc, &st);
            if (st != SC_OK)
                return st;
            if (m == 0) {
                v->missing = true;
                break;
            }
            switch (eff_mode(s)) {
            case SC_SORT_MODE_MAX: v->i = c->buf[m - 1]; break;
            case SC_SORT_MODE_AVG:
            case SC_SORT_MODE_SUM: {
                double sum = 0;
                for (size_t j = 0; j < m; j++)
                    sum += s->is_double ? decode_double(c->buf[j]) : (double)c->buf[j];
                v->d = eff_mode(s) == SC_SORT_MODE_AVG ? sum / (double)m : sum;
                break;
            }
            default: v->i = c->buf[0]; break;
            }
            break;
        }
        case SC_SORT_BY_KEYWORD: {
            if (s->nested_path.len) {
                SC_TRY(nested_key(c, s, &c->rd[i], doc, v));
                break;
            }
            if (!c->rd[i].has_ss) {
                v->missing = true;
                break;
            }
            const sc_dv_sorted_set *ss = &c->rd[i].ss;
            uint32_t cnt = sc_dv_sorted_set_count(ss, doc);
            if (cnt == 0) {
                v->missing = true;
                break;
            }
            uint64_t ords[VAL_STACK];
            size_t m = sc_dv_sorted_set_ords(ss, doc, ords, VAL_STACK);
            uint64_t ord = ords[0];
            if (eff_mode(s) == SC_SORT_MODE_MAX) {
                if (cnt <= VAL_STACK) {
                    ord = ords[m - 1];
                } else {
                    uint64_t *all = sc_arena_alloc(c->a, (size_t)cnt * sizeof(uint64_t));
                    if (!all)
                        return SC_ENOMEM;
                    m = sc_dv_sorted_set_ords(ss, doc, all, cnt);
                    ord = all[m - 1];
                }
            }
            v->s = sc_dv_sorted_set_term(ss, ord);
            break;
        }
        }
    }
    return SC_OK;
}

static void sift_down(sc_sort_collector *c, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < c->len && hit_cmp(c, &c->heap[l], &c->heap[w]) > 0)
            w = l;
        if (r < c->len && hit_cmp(c, &c->heap[r], &c->heap[w]) > 0)
            w = r;
        if (w == i)
            return;
        sc_sorted_hit t = c->heap[i];
        c->heap[i] = c->heap[w];
        c->heap[w] = t;
        i = w;
    }
}

static void sift_up(sc_sort_collector *c, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (hit_cmp(c, &c->heap[i], &c->heap[p]) <= 0)
            return;
        sc_sorted_hit t = c->heap[i];
        c->heap[i] = c->heap[p];
        c->heap[p] = t;
        i = p;
    }
}

/* Offers the candidate (values in c->cand). */
static void offer(sc_sort_collector *c, uint32_t seg_index, uint32_t doc, uint64_t global,
                  float score)
{
    if (c->after && sc_sort_compare(c->specs, c->n, c->cand, c->after) <= 0)
        return;
    sc_sorted_hit cand = {seg_index, doc, global, score, c->cand};
    if (c->len < c->k) {
        sc_sorted_hit *h = &c->heap[c->len];
        sc_sort_key *slot = (sc_sort_key *)h->values;
        memcpy(slot, c->cand, c->n * sizeof *slot);
        *h = cand;
        h->values = slot;
        c->len++;
        sift_up(c, c->len - 1);
        return;
    }
    if (hit_cmp(c, &cand, &c->heap[0]) >= 0)
        return;
    sc_sort_key *slot = (sc_sort_key *)c->heap[0].values;
    memcpy(slot, c->cand, c->n * sizeof *slot);
    c->heap[0] = cand;
    c->heap[0].values = slot;
    sift_down(c, 0);
}

/* Whether the points of specs[0] can prune: numeric min/max mode, missing last, heap full,
 * the worst hit has a value. Returns 0 (no pruning), 1 (only docs with a value in [lo, hi]
 * can compete) or 2 (no later doc can compete). */
static int competitive_range(const sc_sort_collector *c, int64_t *lo, int64_t *hi)
{
    const sc_sort_spec *s = &c->specs[0];
    if (s->kind != SC_SORT_BY_NUMERIC || s->missing_first || c->len < c->k || uses_double(s))
        return 0;
    const sc_sort_key *w = &c->heap[0].values[0];
    if (w->missing)
        return 0;
    /* with one sort key, later docs lose ties (global doc order), so equal values are out */
    bool strict = c->n == 1;
    if (!s->desc) {
        if (strict && w->i == INT64_MIN)
            return 2;
        *lo = INT64_MIN;
        *hi = strict ? w->i - 1 : w->i;
    } else {
        if (strict && w->i == INT64_MAX)
            return 2;
        *lo = strict ? w->i + 1 : w->i;
        *hi = INT64_MAX;
    }
    return 1;
}

sc_status sc_sort_collector_collect(sc_sort_collector *c, const sc_segment *seg, uint32_t seg_index,
                                    uint64_t doc_base, sc_doc_iter *it, const sc_bkd *points)
{
    if (c->done)
        return SC_EINVAL;
    uint32_t n_docs = sc_segment_n_docs(seg);
    bool needs_score = false;
    for (size_t i = 0; i < c->n; i++) {
        const sc_sort_spec *s = &c->specs[i];
        seg_reader *r = &c->rd[i];
        r->has_num = r->has_ss = false;
        if (s->kind == SC_SORT_BY_SCORE || c->track_scores)
            needs_score = true;
        if (s->kind != SC_SORT_BY_NUMERIC && s->kind != SC_SORT_BY_KEYWORD)
            continue;
        const sc_field_info *f = sc_segment_field(seg, s->field);
        if (!f)
            continue;
        sc_status st = s->kind == SC_SORT_BY_NUMERIC ? sc_dv_numeric_open(seg, f, &r->num)
                                                     : sc_dv_sorted_set_open(seg, f, &r->ss);
        if (st == SC_OK)
            *(s->kind == SC_SORT_BY_NUMERIC ? &r->has_num : &r->has_ss) = true;
        else if (st != SC_ENOTFOUND)
            return st;
    }
    if (points && (c->specs[0].kind != SC_SORT_BY_NUMERIC || sc_bkd_n_points(points) == 0 ||
                   sc_bkd_doc_bound(points) > n_docs || c->specs[0].nested_path.len))
        points = NULL; /* a nested sort's points are its children's, not the roots' */
    c->seg = seg;

    /* whole-segment skip by the points' [min, max] */
    int64_t lo = 0, hi = 0;
    int cr = points && c->st.collected >= c->prune_after ? competitive_range(c, &lo, &hi) : 0;
    if (cr == 2 || (cr == 1 && (sc_bkd_max(points) < lo || sc_bkd_min(points) > hi))) {
        c->st.segments_skipped++;
        return SC_OK;
    }

    /* The competitive docs (those with a value that can still enter the top k), from the
     * points: a bitset over the segment, or a sorted doc list when few (no segment-wide clear
     * per build). Every CHECK_EVERY collected docs the competitive range is estimated from the
     * tree (O(log n)); the set is (re)built only when the estimate is below an eighth of the
     * docs left and a quarter of the previous build's (at most log4(n) builds per segment),
     * and when building costs less than the collecting it saves: a point costs about what a
     * collected doc does / BUILD_PER_DOC, so a build waits until est <= BUILD_PER_DOC x the
     * docs collected in this segment. Measured (bench/topk_bench.c, 1M docs, term in 50 % of
     * them sorted by a numeric field desc): building at the first est < left / 8 intersected
     * ~125k points (150 µs of 153); waiting for the heap to tighten: 44 µs. */
    sc_bitset comp = {0};
    bool comp_on = false;
    const uint32_t *list = NULL;
    size_t list_n = 0, list_i = 0;
    uint64_t next_build = 0, since = 0, last_est = UINT64_MAX, seg_collected = 0;
    for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END;) {
        if (comp_on) {
            size_t nx;
            if (list) {
                while (list_i < list_n && list[list_i] < d)
                    list_i++;
                nx = list_i < list_n ? list[list_i] : n_docs;
            } else {
                nx = sc_bitset_next_set(&comp, d);
            }
            if (nx >= n_docs)
                break;
            if (nx > d) {
                c->st.docs_skipped += nx - d;
                d = sc_doc_iter_advance(it, (uint32_t)nx);
                continue;
            }
        }
        float score = needs_score ? sc_doc_iter_score(it) : 0.0f;
        if (c->track_scores && (!c->any_score || score > c->max_score)) {
            c->max_score = score;
            c->any_score = true;
        }
        SC_TRY(read_values(c, d, doc_base + d, score, c->cand));
        c->st.collected++;
        seg_collected++;
        offer(c, seg_index, d, doc_base + d, score);
        if (points && c->st.collected >= c->prune_after && ++since >= next_build &&
            (cr = competitive_range(c, &lo, &hi)) != 0) {
            if (cr == 2)
                break; /* nothing later can enter the top k */
            uint64_t est = sc_bkd_estimate(points, lo, hi);
            uint32_t left = n_docs - d;
            if (est < left / 8 && est < last_est / 4 && est <= BUILD_PER_DOC * seg_collected) {
                if (est < n_docs / LIST_DIV) {
                    uint32_t *docs;
                    SC_TRY(sc_range_points_docs(c->a, points, &lo, &hi, 1, est, &docs, &list_n));
                    list = docs;
                    list_i = 0;
                    c->st.competitive_lists++;
                } else {
                    if (!comp.words) {
                        uint64_t *w = sc_arena_calloc(c->a, sc_bitset_words_for(n_docs) + 1,
                                                      sizeof(uint64_t));
                        if (!w)
                            return SC_ENOMEM;
                        comp.words = w;
                        comp.n_bits = n_docs;
                    } else {
                        sc_bitset_clear_all(&comp);
                    }
                    SC_TRY(sc_bkd_intersect(points, lo, hi, &comp, 0, NULL));
                    list = NULL;
                }
                comp_on = true;
                last_est = est;
                c->st.competitive_builds++;
            }
            next_build = since + CHECK_EVERY;
        }
        d = sc_doc_iter_next(it);
    }
    return SC_OK;
}

size_t sc_sort_collector_hits(sc_sort_collector *c, sc_sorted_hit **hits)
{
    c->done = true;
    size_t n = c->len;
    /* heap-sort in place: pop the worst to the end */
    while (c->len > 1) {
        sc_sorted_hit t = c->heap[0];
        c->heap[0] = c->heap[c->len - 1];
        c->heap[c->len - 1] = t;
        c->len--;
        sift_down(c, 0);
    }
    c->len = n;
    *hits = c->heap;
    return n;
}

void sc_sort_collector_prune_after(sc_sort_collector *c, uint64_t n)
{
    c->prune_after = n;
}

const sc_sort_stats *sc_sort_collector_stats(const sc_sort_collector *c)
{
    return &c->st;
}

void sc_sort_collector_track_scores(sc_sort_collector *c)
{
    c->track_scores = true;
}

float sc_sort_collector_max_score(const sc_sort_collector *c)
{
    return c->any_score ? c->max_score : NAN;
}
