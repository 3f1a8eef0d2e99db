/* HNSW graphs (Malkov & Yashunin) over the vectors of one dense_vector field of a segment:
 * building at flush and merge (sc_hnsw_builder: greedy descent from the entry point, a beam of
 * ef_construction on each level, the paper's neighbour-selection heuristic, level drawn as
 * floor(-ln(U) / ln(m)); m links on levels >= 1, 2m on level 0) and searching a built graph
 * (sc_hnsw_search: greedy descent to level 1, a beam on level 1 whose results all enter level 0
 * (or, with upper_beam 0, the paper's greedy descent to a single level-0 entry), then a
 * best-first beam on level 0 that traverses rejected
 * nodes but collects only accepted ones, with an optional visit limit for filtered search; the
 * visited set is a per-thread generation-stamped array, 2 bytes per node of the largest graph
 * the thread searched, so a search clears nothing).
 * Nodes are vector ordinals 0..n-1; scores are "higher is closer" (sc_hnsw_scorer). A graph is
 * a read-only view (sc_hnsw_graph) over the builder's arrays or a segment's mapped bytes. */
#ifndef SC_INDEX_HNSW_H
#define SC_INDEX_HNSW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"

#define SC_HNSW_MAX_M 512
#define SC_HNSW_MAX_LEVEL 30

/* A read-only graph. Level-0 links of node i: l0[i * (1 + 2m)] is the count, the links
 * follow. A node of level L > 0 has L blocks of (1 + m) u32 (count, links) in `up` starting at
 * block up_off[i] (levels 1..L in order); up_off[i] is unused for level-0 nodes. */
typedef struct sc_hnsw_graph {
    uint32_t n, m;
    uint32_t entry;    /* entry node (meaningless when n == 0) */
    int32_t max_level; /* level of the entry node; -1 when empty */
    const uint8_t *levels;
    const uint32_t *l0;
    const uint32_t *up_off;
    const uint32_t *up;
    uint32_t n_up; /* blocks in `up` */
} sc_hnsw_graph;

/* Links of node i on level lev (i's level must be >= lev); *count set. */
static inline const uint32_t *sc_hnsw_links(const sc_hnsw_graph *g, uint32_t i, int lev,
                                            uint32_t *count)
{
    const uint32_t *p = lev == 0 ? g->l0 + (size_t)i * (1 + 2 * (size_t)g->m)
                                 : g->up + ((size_t)g->up_off[i] + (size_t)(lev - 1)) * (1 + g->m);
    *count = p[0];
    return p + 1;
}

/* Similarity of the query (or of node `self` when building) to node `ord`, higher = closer. */
typedef struct sc_hnsw_scorer {
    float (*score)(const struct sc_hnsw_scorer *s, uint32_t ord);
    void (*prefetch)(const struct sc_hnsw_scorer *s, uint32_t ord); /* may be NULL */
    /* may be NULL: out[j] = score(ords[j]) for j < n (n <= 2 * SC_HNSW_MAX_M), the neighbours
     * of one expanded node scored in one call (the search's level-0 and level-1 beams use it
     * when set; it must equal `score` exactly) */
    void (*score_many)(const struct sc_hnsw_scorer *s, const uint32_t *ords, uint32_t n,
                       float *out);
    const void *ctx;
} sc_hnsw_scorer;

/* Checks a graph's structure: counts within bounds, links < n and not self, levels <=
 * max_level <= SC_HNSW_MAX_LEVEL, the entry at max_level, up blocks within n_up. false on any
 * inconsistency (corrupt input). O(n m). */
bool sc_hnsw_graph_valid(const sc_hnsw_graph *g);

/* ---- building ---- */

typedef struct sc_hnsw_builder sc_hnsw_builder;

/* Node-to-node similarity used while building (higher = closer). */
typedef float (*sc_hnsw_pair_fn)(const void *ctx, uint32_t a, uint32_t b);

/* A builder for up to `cap` nodes, m links (2m on level 0), beam ef_construction, level RNG
 * seeded with `seed` (fixed seeds give identical graphs). pair(ctx, a, b) must be valid for
 * every a, b < cap while building. *out owned (sc_hnsw_builder_free). SC_ENOMEM, SC_EINVAL (m
 * or ef out of range). */
sc_status sc_hnsw_builder_new(uint32_t cap, uint32_t m, uint32_t ef_construction, uint64_t seed,
                              sc_hnsw_pair_fn pair, const void *ctx, sc_hnsw_builder **out)
    SC_MUST_USE;
void sc_hnsw_builder_free(sc_hnsw_builder *b);

/* Seeds the (empty) builder with an existing graph whose node i becomes node base + i, so a
 * merge can insert only the other segments' vectors (the graph's m must equal the builder's;
 * base + g->n <= cap). Nodes below base or past base + n are inserted later with
 * sc_hnsw_builder_add. SC_EINVAL on mismatch, SC_ENOMEM. O(n m). */
sc_status sc_hnsw_builder_seed(sc_hnsw_builder *b, const sc_hnsw_graph *g, uint32_t base)
    SC_MUST_USE;

/* Inserts node `ord` (< cap, not yet inserted). SC_ENOMEM. O(ef_construction log n) pair
 * evaluations times m. */
sc_status sc_hnsw_builder_add(sc_hnsw_builder *b, uint32_t ord) SC_MUST_USE;

/* A view of the graph built so far over `n` nodes (every node < n inserted), valid until the
 * next add or free. */
void sc_hnsw_builder_graph(const sc_hnsw_builder *b, uint32_t n, sc_hnsw_graph *out);

/* ---- searching ---- */

typedef struct sc_hnsw_hit {
    uint32_t ord;
    float score;
} sc_hnsw_hit;

typedef struct sc_hnsw_search_opts {
    uint32_t ef;             /* beam width = results kept (>= 1) */
    const uint64_t *accept;  /* bitset over docs (NULL: accept all) */
    const uint32_t *ord_doc; /* ordinal -> doc for `accept` (NULL: identity) */
    uint64_t visit_limit;    /* stop after visiting this many nodes (0: no limit) */
    uint32_t upper_beam;     /* beam width on level 1, whose results all enter level 0 (0: the
                              * paper's greedy descent down to level 0's single entry) */
} sc_hnsw_search_opts;

/* Searches g: up to opts->ef accepted nodes, best first, into hits (room for ef) and *n_hits.
 * *visited counts scored nodes; *incomplete is set when the visit limit stopped the search.
 * Scratch comes from `a`. SC_ENOMEM / SC_ELIMIT (arena). O(ef log ef) scorer calls times m on
 * level 0 plus the descent. */
sc_status sc_hnsw_search(const sc_hnsw_graph *g, const sc_hnsw_scorer *s,
                         const sc_hnsw_search_opts *opts, sc_arena *a, sc_hnsw_hit *hits,
                         size_t *n_hits, uint64_t *visited, bool *incomplete) SC_MUST_USE;

#endif
