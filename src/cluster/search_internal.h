/* Private to the search coordinator: search.c (one node) and search_dist.c (shards on several
 * nodes) share the target list, the hit order and the sort-key copy. */
#ifndef SC_CLUSTER_SEARCH_INTERNAL_H
#define SC_CLUSTER_SEARCH_INTERNAL_H

#include <pthread.h>

#include "cluster/search.h"
#include "cluster/wire.h"

/* The target shards of the request in coordinator order (index, then shard number), with
 * ?routing / ?preference shard selection applied; *n_out of them (arena). */
sc_status sc__search_build_targets(const sc_search_request *sr, sc_arena *arena,
                                   sc_shard_target **out, size_t *n_out) SC_MUST_USE;
/* qsort comparators of sc_node_hit: by the request's sort keys (ctx: the sc_search_request),
 * or by score desc; then shard ordinal, then doc. */
int sc__search_cmp_sorted(const void *a, const void *b, void *ctx);
int sc__search_cmp_score(const void *a, const void *b);
/* Whether two collapse keys name the same group (docs without a value form one group). */
bool sc__search_same_group(const sc_shard_collapse *c, const sc_sort_key *a, const sc_sort_key *b);
/* Copies n_sort keys (and keyword bytes) into the arena; NULL without a field sort. */
sc_status sc__search_copy_keys(const sc_search_request *sr, const sc_sort_key *keys,
                               sc_arena *arena, const sc_sort_key **out) SC_MUST_USE;
/* Whether the can_match pre-filter runs for a search over n_targets shards: more than
 * pre_filter_shard_size when set, else Elasticsearch's default (more than 128, or a primary
 * sort on a field); never with aggregations. */
bool sc__search_prefilter(const sc_search_request *sr, size_t n_targets);
/* When every shard was skipped, reports one as run (Elasticsearch always runs one). */
void sc__search_skipped_fixup(sc_search_response *out);
/* ---- can_match by sort (search_sortskip.c) ---- */

/* What a shard's points say about the primary sort field. */
typedef enum sc__sortskip_bound {
    SC__SORTSKIP_KNOWN,     /* *best: the best value it can produce */
    SC__SORTSKIP_UNKNOWN,   /* doc values only, or not readable: always run */
    SC__SORTSKIP_NO_VALUES, /* no doc has a value: every hit would sort last */
} sc__sortskip_bound;

/* The worst value of the best full top k found so far on this node (shared by its shards). */
typedef struct sc__sort_bottom {
    pthread_mutex_t mu;
    bool set;
    int64_t v;
} sc__sort_bottom;

/* Whether the node skips shards by sort for this request: can_match on, a numeric primary sort
 * (min/max), missing values last, k > 0, track_total_hits false, no aggregations / collapse /
 * rescore. */
bool sc__sortskip_applies(const sc_node_query_request *req);
sc__sortskip_bound sc__sortskip_bound_of(const sc_shard_snapshot *snap, const sc_sort_spec *s,
                                         int64_t *best);
void sc__sortskip_init(sc__sort_bottom *b);
void sc__sortskip_fini(sc__sort_bottom *b);
/* True when a shard with that bound cannot put a hit in the top k (strictly worse). */
bool sc__sortskip_cannot_beat(sc__sort_bottom *b, const sc_sort_spec *s, sc__sortskip_bound kind,
                              int64_t best);
/* A shard returned a full top k whose last primary key is *kth: tightens the bottom. */
void sc__sortskip_offer(sc__sort_bottom *b, const sc_sort_spec *s, const sc_sort_key *kth);
/* order[0..n_targets): the targets best-bounded first (current snapshots' points). */
void sc__sortskip_order(const sc_node_query_request *req, size_t *order);

/* dfs_query_then_fetch across nodes: the statistics of every target, one request per node
 * holding its first copy (search_dfs.c). A node that cannot answer leaves its shards' out. */
sc_status sc__search_dfs_dist(sc_node *n, const sc_search_request *sr,
                              const sc_shard_target *targets, size_t nt, sc_arena *arena,
                              sc_term_stats *out) SC_MUST_USE;
/* The node query request (search_wire.h) for these targets of sr into b: timeout_ms is what is
 * left of the search's timeout (-1: none), parent_task the coordinator's task id or NULL. */
sc_status sc__dist_encode_query(const sc_search_request *sr, const sc_shard_target *targets,
                                size_t nt, uint32_t k, bool can_match, const sc_term_stats *dfs,
                                int64_t timeout_ms, const char *parent_task, sc_wire_buf *b)
    SC_MUST_USE;
/* A search with RRF over shards on several nodes (search_rrf.c; sc_search_run hands it
 * sr->n_rrf > 0 with a placement): one query phase per data node carries every sub-search,
 * the coordinator fuses the ranked lists (sc__dist_reduce) and fetches the page. */
sc_status sc__search_run_rrf_dist(sc_node *n, const sc_search_request *sr, sc_arena *arena,
                                  sc_search_response *out) SC_MUST_USE;
/* The query and fetch phases over shards placed on several nodes: one query request per data
 * node (or per shard with search.batched_query_phase false), the final reduce, a fetch per
 * node. Node failures become shard failures. */
sc_status sc__search_run_dist(sc_node *n, const sc_search_request *sr,
                              const sc_shard_target *targets, size_t nt, uint32_t k,
                              uint64_t deadline_ns, sc_cancel_token *token, bool can_match,
                              const sc_term_stats *dfs, sc_arena *arena, sc_search_response *out)
    SC_MUST_USE;
/* A clustered scroll page or point-in-time search (search_ctx.c): every target through its
 * data node's search context (opened on a scroll's first page), one request per context; the
 * final reduce and fetch as sc__search_run_dist; a scroll advances each shard's position by its
 * hits on the page. Unreachable nodes and missing contexts are shard failures. */
sc_status sc__search_run_ctx(sc_node *n, const sc_search_request *sr,
                             const sc_shard_target *targets, size_t nt, uint64_t deadline_ns,
                             sc_cancel_token *token, sc_arena *arena, sc_search_response *out)
    SC_MUST_USE;

/* batched_reduce_size (Elasticsearch's search parameter): the default, and the batch of a
 * request (its value, or the default when 0). */
#define SC_BATCHED_REDUCE_SIZE_DEFAULT 512
static inline uint32_t sc__batched_reduce_size(const sc_search_request *sr)
{
    return sr->batched_reduce_size >= 2 ? sr->batched_reduce_size : SC_BATCHED_REDUCE_SIZE_DEFAULT;
}

/* Whether a request's results may be folded as they arrive (batched_reduce_size): not with
 * profiles (they live in the shards' memory), collapse (a fold keeps k hits, not k groups, and
 * does not copy the collapse keys), RRF (the other sub-searches' lists stay with the shards) or
 * a kNN-only search (its global top k is cut after the merge). */
static inline bool sc__search_can_fold(const sc_search_request *sr)
{
    return !sr->profile && !sr->collapse && !sr->n_rrf && !sr->knn_cap;
}

/* An incremental partial reduce (search_partial.c): the top k and the aggregation partial of
 * every result folded so far, in memory of its own. Zero-initialize; sc__partial_fini. */
typedef struct sc__partial {
    sc_arena *mem;    /* heap arena of what follows; NULL before the first fold */
    sc_node_hit *top; /* the top k so far, sorted (keys and collapse keys in mem) */
    uint32_t *tags;   /* per hit, the caller's tag of where it came from */
    size_t n_top;
    void *agg;         /* the hook's reduction so far (mem), or NULL */
    uint32_t n_phases; /* folds done */
} sc__partial;

/* Folds hits (tags parallel, or NULL for 0) and the aggregation partials (NULLs skipped) into
 * acc: its top k becomes the top k of both (collapse groups deduplicated), copied with their
 * keys, and its aggregation the hook's reduce of both, in a new arena; the old one is freed, so
 * the inputs' memory may go after the call. n_phases + 1. On failure acc is unchanged. */
sc_status sc__partial_fold(sc__partial *acc, const sc_search_request *sr, uint32_t k,
                           const sc_shard_collect_hook *h, const sc_node_hit *hits,
                           const uint32_t *tags, size_t n_hits, void *const *partials,
                           size_t n_partials) SC_MUST_USE;
/* acc's top hits copied (with their keys) into arena: they outlive acc. */
sc_status sc__partial_copy_top(const sc__partial *acc, const sc_search_request *sr, sc_arena *arena,
                               sc_node_hit **out) SC_MUST_USE;
/* Bytes acc holds. */
size_t sc__partial_bytes(const sc__partial *acc);
/* Frees acc's memory (keeps n_phases). */
void sc__partial_fini(sc__partial *acc);

#endif
