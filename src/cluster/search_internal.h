/* Private to the search coordinator: search.c (one node) and search_dist.c (shards on several
 * nodes) share the target list, the hit order and the sort-key copy. */
#ifndef SC_CLUSTER_SEARCH_INTERNAL_H
#define SC_CLUSTER_SEARCH_INTERNAL_H

#include "cluster/search.h"

/* The target shards of the request in coordinator order (index, then shard number), with
 * ?routing / ?preference shard selection applied; *n_out of them (arena). */
sc_status sc__search_build_targets(const sc_search_request *sr, sc_arena *arena,
                                   sc_shard_target **out, size_t *n_out) SC_MUST_USE;
/* qsort comparators of sc_node_hit: by the request's sort keys (ctx: the sc_search_request),
 * or by score desc; then shard ordinal, then doc. */
int sc__search_cmp_sorted(const void *a, const void *b, void *ctx);
int sc__search_cmp_score(const void *a, const void *b);
/* Copies n_sort keys (and keyword bytes) into the arena; NULL without a field sort. */
sc_status sc__search_copy_keys(const sc_search_request *sr, const sc_sort_key *keys,
                               sc_arena *arena, const sc_sort_key **out) SC_MUST_USE;
/* The query and fetch phases over shards placed on several nodes: one query request per data
 * node (or per shard with search.batched_query_phase false), the final reduce, a fetch per
 * node. Node failures become shard failures. */
sc_status sc__search_run_dist(sc_node *n, const sc_search_request *sr,
                              const sc_shard_target *targets, size_t nt, uint32_t k,
                              uint64_t deadline_ns, sc_cancel_token *token, sc_arena *arena,
                              sc_search_response *out) SC_MUST_USE;

#endif
