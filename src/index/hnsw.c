/* HNSW build and search (hnsw.h). One beam-search routine serves both: candidates in a
 * max-heap, results in a min-heap of at most ef, visited nodes marked in a generation-stamped
 * array (the builder's own; a search thread's kept across searches, so a query clears nothing).
 * Rejected nodes (filter, deletes) are traversed but not collected, so the graph stays
 * connected under a filter. */
#include "index/hnsw.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* ---- heaps of (ord, score) ---- */

typedef struct heap {
    sc_hnsw_hit *h;
    size_t len, cap;
    bool max; /* max-heap (best on top) or min-heap (worst on top) */
} heap;

static inline bool above(const heap *q, float a, float b)
{
    return q->max ? a > b : a < b;
}

/* Pushes (ord, score); a full heap drops it (only the search's candidate heap can fill, and
 * only past what a beam of ef ever needs). */
static void heap_push(heap *q, uint32_t ord, float score)
{
    if (q->len == q->cap)
        return;
    size_t i = q->len++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!above(q, score, q->h[p].score))
            break;
        q->h[i] = q->h[p];
        i = p;
    }
    q->h[i] = (sc_hnsw_hit){ord, score};
}

static sc_hnsw_hit heap_pop(heap *q)
{
    sc_hnsw_hit top = q->h[0], last = q->h[--q->len];
    size_t i = 0, n = q->len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && above(q, q->h[c + 1].score, q->h[c].score))
            c++;
        if (!above(q, q->h[c].score, last.score))
            break;
        q->h[i] = q->h[c];
        i = c;
    }
    if (n)
        q->h[i] = last;
    return top;
}

/* ---- visited sets ---- */

/* stamp[i] == gen means visited; a new generation empties the set, and only the wrap of gen
 * (every 65,535 generations) clears the array. */
typedef struct visited {
    uint16_t *stamp;
    size_t cap;
    uint16_t gen;
} visited;

static inline bool visit(visited *v, uint32_t i)
{
    if (v->stamp[i] == v->gen)
        return false;
    v->stamp[i] = v->gen;
    return true;
}

/* Starts an empty set. */
static void visited_next(visited *v)
{
    if (++v->gen == 0) {
        memset(v->stamp, 0, v->cap * sizeof(uint16_t));
        v->gen = 1;
    }
}

/* The search threads' sets: one per thread, grown to the largest graph searched (2 bytes per
 * node), freed when the thread ends. The _Thread_local pointer is the fast path (and keeps the
 * main thread's set reachable for leak checkers); the key's destructor frees other threads'. */
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static _Thread_local visited *tl_vis;

static void tl_free(void *p)
{
    visited *v = p;
    free(v->stamp);
    free(v);
}

static void tl_init(void)
{
    (void)pthread_key_create(&tl_key, tl_free);
}

static visited *thread_visited(uint32_t n)
{
    visited *v = tl_vis;
    if (!v) {
        (void)pthread_once(&tl_once, tl_init);
        v = calloc(1, sizeof(*v));
        if (!v || pthread_setspecific(tl_key, v) != 0) {
            free(v);
            return NULL;
        }
        tl_vis = v;
    }
    if (v->cap < n) {
        uint16_t *s = calloc(n, sizeof(uint16_t));
        if (!s)
            return NULL;
        free(v->stamp);
        v->stamp = s;
        v->cap = n;
        v->gen = 0;
    }
    visited_next(v);
    return v;
}

typedef struct beam {
    const sc_hnsw_graph *g;
    const sc_hnsw_scorer *s;
    visited *vis;
    const uint64_t *accept;
    const uint32_t *ord_doc;
    uint64_t visit_limit, n_visited;
    bool incomplete;
} beam;

static inline bool accepted(const beam *b, uint32_t ord)
{
    if (!b->accept)
        return true;
    uint32_t d = b->ord_doc ? b->ord_doc[ord] : ord;
    return (b->accept[d >> 6] >> (d & 63)) & 1;
}

/* Greedy walk on level lev from *ep (score *eps) to a local best. */
static void greedy(beam *b, int lev, uint32_t *ep, float *eps)
{
    for (bool moved = true; moved;) {
        moved = false;
        uint32_t cnt;
        const uint32_t *l = sc_hnsw_links(b->g, *ep, lev, &cnt);
        for (uint32_t j = 0; j < cnt; j++) {
            float s = b->s->score(b->s, l[j]);
            b->n_visited++;
            if (s > *eps) {
                *eps = s;
                *ep = l[j];
                moved = true;
            }
        }
    }
}

/* Beam search on level lev from the entry points eps[0..n_eps) (already visited and scored):
 * the best ef accepted nodes into res (a min-heap of capacity ef), using cand (capacity: every
 * node) as the candidate heap. */
static void layer_search(beam *b, int lev, const sc_hnsw_hit *eps, size_t n_eps, uint32_t ef,
                         heap *cand, heap *res)
{
    cand->len = res->len = 0;
    for (size_t i = 0; i < n_eps; i++) {
        heap_push(cand, eps[i].ord, eps[i].score);
        /* res holds ef + 1: keep the best ef of however many entry points */
        if (accepted(b, eps[i].ord) && (res->len < ef || eps[i].score > res->h[0].score)) {
            heap_push(res, eps[i].ord, eps[i].score);
            if (res->len > ef)
                heap_pop(res);
        }
    }
    while (cand->len) {
        sc_hnsw_hit c = heap_pop(cand);
        if (res->len >= ef && c.score < res->h[0].score)
            break;
        if (cand->len) {
            /* the next candidate's links load while this one's neighbours are scored */
            const sc_hnsw_graph *g = b->g;
            uint32_t nx = cand->h[0].ord;
            const uint32_t *nl =
                lev == 0 ? g->l0 + (size_t)nx * (1 + 2 * (size_t)g->m)
                         : g->up + ((size_t)g->up_off[nx] + (size_t)(lev - 1)) * (1 + g->m);
            __builtin_prefetch(nl);
            __builtin_prefetch((const char *)nl + 64);
        }
        uint32_t cnt, fresh[2 * SC_HNSW_MAX_M], n_fresh = 0;
        const uint32_t *l = sc_hnsw_links(b->g, c.ord, lev, &cnt);
        /* the unvisited neighbours first, their vectors prefetched, then scored: the loads
         * overlap instead of one cache miss per score */
        for (uint32_t j = 0; j < cnt; j++)
            if (visit(b->vis, l[j]))
                fresh[n_fresh++] = l[j];
        if (b->s->prefetch)
            for (uint32_t j = 0; j < n_fresh; j++)
                b->s->prefetch(b->s, fresh[j]);
        /* with a visit limit, only the nodes it still allows are scored, then the search stops
         * (as one score at a time would) */
        uint32_t n_score = n_fresh;
        bool stop = false;
        if (b->visit_limit && b->n_visited + n_fresh > b->visit_limit) {
            n_score =
                b->n_visited >= b->visit_limit ? 0 : (uint32_t)(b->visit_limit - b->n_visited);
            stop = true;
        }
        float sc[2 * SC_HNSW_MAX_M];
        if (b->s->score_many)
            b->s->score_many(b->s, fresh, n_score, sc);
        else
            for (uint32_t j = 0; j < n_score; j++)
                sc[j] = b->s->score(b->s, fresh[j]);
        b->n_visited += n_score;
        for (uint32_t j = 0; j < n_score; j++) {
            uint32_t nb = fresh[j];
            float s = sc[j];
            if (res->len < ef || s > res->h[0].score) {
                heap_push(cand, nb, s);
                if (accepted(b, nb)) {
                    heap_push(res, nb, s);
                    if (res->len > ef)
                        heap_pop(res);
                }
            }
        }
        if (stop) {
            b->incomplete = true;
            return;
        }
    }
}

bool sc_hnsw_graph_valid(const sc_hnsw_graph *g)
{
    if (g->n == 0)
        return g->max_level == -1;
    if (g->m < 1 || g->m > SC_HNSW_MAX_M || g->entry >= g->n || g->max_level < 0 ||
        g->max_level > SC_HNSW_MAX_LEVEL || g->levels[g->entry] != g->max_level)
        return false;
    for (uint32_t i = 0; i < g->n; i++) {
        int lv = g->levels[i];
        if (lv > g->max_level)
            return false;
        if (lv > 0 && ((uint64_t)g->up_off[i] + (uint64_t)lv > g->n_up))
            return false;
        for (int lev = 0; lev <= lv; lev++) {
            uint32_t cnt;
            const uint32_t *l = sc_hnsw_links(g, i, lev, &cnt);
            if (cnt > (lev ? g->m : 2 * g->m))
                return false;
            for (uint32_t j = 0; j < cnt; j++)
                if (l[j] >= g->n || l[j] == i || g->levels[l[j]] < lev)
                    return false;
        }
    }
    return true;
}

/* ---- builder ---- */

struct sc_hnsw_builder {
    uint32_t cap, m, efc;
    double ml;
    uint64_t rng;
    sc_hnsw_pair_fn pair;
    const void *ctx;
    uint8_t *levels;
    uint32_t *l0, *up_off;
    SC_VEC(uint32_t) up;
    uint32_t n_up;
    uint32_t entry;
    int32_t max_level;
    visited vis;
    sc_hnsw_hit *cand, *res, *eps, *sel, *tmp;
    struct self_scorer {
        sc_hnsw_scorer base;
        const struct sc_hnsw_builder *b;
    } scorer;      /* similarity to the node being inserted */
    uint32_t self; /* node being inserted */
};

static float self_score(const sc_hnsw_scorer *s, uint32_t ord)
{
    const sc_hnsw_builder *b = ((const struct self_scorer *)s)->b;
    return b->pair(b->ctx, b->self, ord);
}

sc_status sc_hnsw_builder_new(uint32_t cap, uint32_t m, uint32_t ef_construction, uint64_t seed,
                              sc_hnsw_pair_fn pair, const void *ctx, sc_hnsw_builder **out)
{
    *out = NULL;
    if (m < 2 || m > SC_HNSW_MAX_M || ef_construction < 1 || ef_construction > 100000)
        return SC_EINVAL;
    sc_hnsw_builder *b = calloc(1, sizeof(*b));
    if (!b)
        return SC_ENOMEM;
    size_t c = cap ? cap : 1;
    b->cap = cap;
    b->m = m;
    b->efc = ef_construction;
    b->ml = 1.0 / log((double)m);
    b->rng = seed * 0x9E3779B97F4A7C15ull + 1;
    b->pair = pair;
    b->ctx = ctx;
    b->max_level = -1;
    b->levels = calloc(c, 1);
    b->l0 = calloc(c * (1 + 2 * (size_t)m), sizeof(uint32_t));
    b->up_off = calloc(c, sizeof(uint32_t));
    b->vis.stamp = calloc(c, sizeof(uint16_t));
    b->vis.cap = c;
    size_t big = (ef_construction > 2 * m ? ef_construction : 2 * m) + 2;
    b->cand = malloc((c + 1) * sizeof(sc_hnsw_hit));
    b->res = malloc(big * sizeof(sc_hnsw_hit));
    b->eps = malloc(big * sizeof(sc_hnsw_hit));
    b->sel = malloc(4 * ((size_t)m + 1) * sizeof(sc_hnsw_hit));
    b->tmp = malloc(big * sizeof(sc_hnsw_hit));
    if (!b->levels || !b->l0 || !b->up_off || !b->vis.stamp || !b->cand || !b->res || !b->eps ||
        !b->sel || !b->tmp) {
        sc_hnsw_builder_free(b);
        return SC_ENOMEM;
    }
    *out = b;
    return SC_OK;
}

void sc_hnsw_builder_free(sc_hnsw_builder *b)
{
    if (!b)
        return;
    free(b->levels);
    free(b->l0);
    free(b->up_off);
    sc_vec_free(&b->up);
    free(b->vis.stamp);
    free(b->cand);
    free(b->res);
    free(b->eps);
    free(b->sel);
    free(b->tmp);
    free(b);
}

void sc_hnsw_builder_graph(const sc_hnsw_builder *b, uint32_t n, sc_hnsw_graph *out)
{
    *out = (sc_hnsw_graph){.n = n,
                           .m = b->m,
                           .entry = b->entry,
                           .max_level = n ? b->max_level : -1,
                           .levels = b->levels,
                           .l0 = b->l0,
                           .up_off = b->up_off,
                           .up = b->up.ptr,
                           .n_up = b->n_up};
}

static uint32_t *links_mut(sc_hnsw_builder *b, uint32_t i, int lev)
{
    return lev == 0 ? b->l0 + (size_t)i * (1 + 2 * (size_t)b->m)
                    : b->up.ptr + ((size_t)b->up_off[i] + (size_t)(lev - 1)) * (1 + b->m);
}

static sc_status alloc_levels(sc_hnsw_builder *b, uint32_t i, int lv)
{
    b->levels[i] = (uint8_t)lv;
    if (lv == 0)
        return SC_OK;
    size_t words = (size_t)lv * (1 + b->m);
    if (sc_vec_reserve(&b->up, words) != SC_OK)
        return SC_ENOMEM;
    memset(b->up.ptr + b->up.len, 0, words * sizeof(uint32_t));
    b->up.len += words;
    b->up_off[i] = b->n_up;
    b->n_up += (uint32_t)lv;
    return SC_OK;
}

sc_status sc_hnsw_builder_seed(sc_hnsw_builder *b, const sc_hnsw_graph *g, uint32_t base)
{
    if (g->m != b->m || (uint64_t)base + g->n > b->cap || b->max_level >= 0)
        return SC_EINVAL;
    for (uint32_t i = 0; i < g->n; i++) {
        int lv = g->levels[i];
        SC_TRY(alloc_levels(b, base + i, lv));
        for (int lev = 0; lev <= lv; lev++) {
            uint32_t cnt;
            const uint32_t *l = sc_hnsw_links(g, i, lev, &cnt);
            uint32_t *d = links_mut(b, base + i, lev);
            d[0] = cnt;
            for (uint32_t j = 0; j < cnt; j++)
                d[1 + j] = base + l[j];
        }
    }
    if (g->n) {
        b->entry = base + g->entry;
        b->max_level = g->max_level;
    }
    return SC_OK;
}

/* The paper's heuristic (Algorithm 4 without extension or pruned back-fill): candidates best
 * first; keep c when it is closer to the base node than to every neighbour kept so far. */
static size_t select_neighbours(sc_hnsw_builder *b, sc_hnsw_hit *c, size_t n, uint32_t max,
                                sc_hnsw_hit *out)
{
    /* c is an arbitrary array: heapify by pushes into tmp, then pop best first */
    heap h = {b->tmp, 0, n, true};
    for (size_t i = 0; i < n; i++)
        heap_push(&h, c[i].ord, c[i].score);
    size_t k = 0;
    while (h.len && k < max) {
        sc_hnsw_hit x = heap_pop(&h);
        bool keep = true;
        for (size_t j = 0; j < k && keep; j++)
            if (b->pair(b->ctx, x.ord, out[j].ord) > x.score)
                keep = false;
        if (keep)
            out[k++] = x;
    }
    return k;
}

/* Adds link node -> nb on lev, re-selecting node's list with the heuristic when full. */
static void add_link(sc_hnsw_builder *b, uint32_t node, uint32_t nb, int lev)
{
    uint32_t max = lev ? b->m : 2 * b->m;
    uint32_t *l = links_mut(b, node, lev);
    if (l[0] < max) {
        l[1 + l[0]++] = nb;
        return;
    }
    sc_hnsw_hit *c = b->sel + max + 1; /* sel has room for 2 * (2m + 1) */
    for (uint32_t j = 0; j < l[0]; j++)
        c[j] = (sc_hnsw_hit){l[1 + j], b->pair(b->ctx, node, l[1 + j])};
    c[l[0]] = (sc_hnsw_hit){nb, b->pair(b->ctx, node, nb)};
    size_t k = select_neighbours(b, c, l[0] + 1, max, b->sel);
    l[0] = (uint32_t)k;
    for (size_t j = 0; j < k; j++)
        l[1 + j] = b->sel[j].ord;
}

static int draw_level(sc_hnsw_builder *b)
{
    b->rng ^= b->rng >> 12, b->rng ^= b->rng << 25, b->rng ^= b->rng >> 27;
    uint64_t r = (b->rng * 0x2545F4914F6CDD1Dull) >> 11;
    double u = ((double)r + 1.0) / 9007199254740993.0; /* (0, 1] */
    int lv = (int)(-log(u) * b->ml);
    return lv > SC_HNSW_MAX_LEVEL ? SC_HNSW_MAX_LEVEL : lv;
}

sc_status sc_hnsw_builder_add(sc_hnsw_builder *b, uint32_t ord)
{
    int lv = draw_level(b);
    SC_TRY(alloc_levels(b, ord, lv));
    if (b->max_level < 0) {
        b->entry = ord;
        b->max_level = lv;
        return SC_OK;
    }
    sc_hnsw_graph g;
    sc_hnsw_builder_graph(b, b->cap, &g);
    b->self = ord;
    b->scorer = (struct self_scorer){{.score = self_score}, b};
    beam bm = {.g = &g, .s = &b->scorer.base, .vis = &b->vis};
    uint32_t ep = b->entry;
    float eps = self_score(&b->scorer.base, ep);
    for (int lev = b->max_level; lev > lv; lev--)
        greedy(&bm, lev, &ep, &eps);
    heap cand = {b->cand, 0, (size_t)b->cap + 1, true},
         res = {b->res, 0, (size_t)b->efc + 1, false};
    b->eps[0] = (sc_hnsw_hit){ep, eps};
    size_t n_eps = 1;
    for (int lev = lv < b->max_level ? lv : b->max_level; lev >= 0; lev--) {
        visited_next(&b->vis);
        for (size_t i = 0; i < n_eps; i++)
            b->vis.stamp[b->eps[i].ord] = b->vis.gen;
        layer_search(&bm, lev, b->eps, n_eps, b->efc, &cand, &res);
        n_eps = res.len; /* this level's results are the next level's entry points */
        memcpy(b->eps, res.h, n_eps * sizeof(sc_hnsw_hit));
        uint32_t max = lev ? b->m : 2 * b->m;
        size_t k = select_neighbours(b, b->eps, n_eps, max, b->sel);
        uint32_t *l = links_mut(b, ord, lev);
        l[0] = (uint32_t)k;
        for (size_t j = 0; j < k; j++)
            l[1 + j] = b->sel[j].ord;
        for (size_t j = 0; j < k; j++)
            add_link(b, l[1 + j], ord, lev);
    }
    if (lv > b->max_level) {
        b->max_level = lv;
        b->entry = ord;
    }
    return SC_OK;
}

/* ---- search ---- */

/* Level 1 walked with a beam of width `ub` from the greedy descent's node (b's visited set holds
 * it), every node collected (the filter applies to level 0 only: level 1 only finds where to
 * enter), its results the level-0 entry points (*entries, arena memory), and the visited set
 * emptied but for them. One greedy entry lands some queries in a pocket of level 0 (another
 * cluster of the data) that a beam of ef cannot leave; several entries spread over level 1's
 * neighbourhood of the query do not (docs/benchmarks.md, "level-1 beam"). */
static sc_status upper_beam(beam *b, uint32_t ub, sc_arena *a, heap *cand, sc_hnsw_hit **entries,
                            size_t *n_entries)
{
    sc_hnsw_hit *rh = sc_arena_alloc(a, ((size_t)ub + 2) * sizeof(sc_hnsw_hit));
    if (!rh)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    heap res = {rh, 0, (size_t)ub + 1, false};
    beam up = *b;
    up.accept = NULL;
    layer_search(&up, 1, *entries, 1, ub, cand, &res);
    b->n_visited = up.n_visited;
    b->incomplete = up.incomplete;
    visited_next(b->vis);
    for (size_t i = 0; i < res.len; i++)
        visit(b->vis, rh[i].ord);
    *entries = rh;
    *n_entries = res.len;
    return SC_OK;
}

sc_status sc_hnsw_search(const sc_hnsw_graph *g, const sc_hnsw_scorer *s,
                         const sc_hnsw_search_opts *opts, sc_arena *a, sc_hnsw_hit *hits,
                         size_t *n_hits, uint64_t *visited_out, bool *incomplete)
{
    *n_hits = 0;
    *visited_out = 0;
    *incomplete = false;
    if (g->n == 0 || g->max_level < 0)
        return SC_OK;
    uint32_t ef = opts->ef ? opts->ef : 1;
    visited *vis = thread_visited(g->n);
    /* Each node enters the candidate heap at most once; a beam of ef rarely holds more than
     * ef * 2m of them, so that bounds the scratch on big graphs (extra pushes are dropped). */
    size_t cap = (size_t)g->n + 1, bound = (size_t)ef * 2 * g->m * 4 + 4096;
    if (cap > bound)
        cap = bound;
    sc_hnsw_hit *ch = sc_arena_alloc(a, cap * sizeof(sc_hnsw_hit));
    sc_hnsw_hit *rh = sc_arena_alloc(a, ((size_t)ef + 2) * sizeof(sc_hnsw_hit));
    if (!vis)
        return SC_ENOMEM;
    if (!ch || !rh)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    beam b = {.g = g,
              .s = s,
              .vis = vis,
              .accept = opts->accept,
              .ord_doc = opts->ord_doc,
              .visit_limit = opts->visit_limit};
    uint32_t ep = g->entry;
    float eps = s->score(s, ep);
    b.n_visited = 1;
    uint32_t ub = opts->upper_beam;
    int beam_level = ub > 0 && g->max_level >= 1 ? 1 : 0;
    for (int lev = g->max_level; lev > beam_level; lev--)
        greedy(&b, lev, &ep, &eps);
    visit(vis, ep);
    heap cand = {ch, 0, cap, true}, res = {rh, 0, (size_t)ef + 1, false};
    sc_hnsw_hit e = {ep, eps}, *entries = &e;
    size_t n_entries = 1;
    if (beam_level == 1) {
        SC_TRY(upper_beam(&b, ub, a, &cand, &entries, &n_entries));
        if (b.incomplete) {
            *visited_out = b.n_visited;
            *incomplete = true;
            return SC_OK;
        }
    }
    layer_search(&b, 0, entries, n_entries, ef, &cand, &res);
    size_t n = res.len;
    for (size_t i = n; i > 0; i--)
        hits[i - 1] = heap_pop(&res);
    *n_hits = n;
    *visited_out = b.n_visited;
    *incomplete = b.incomplete;
    return SC_OK;
}
