/* profile: true (Elasticsearch's search profiler, in scry's own documented shape): per shard,
 * the query's plan as a tree of nodes (type, description) with the calls each node's doc-id
 * iterators received over every segment, per operation (next, advance, into_bitset, run_end,
 * next_batch / score_batch, score), and the wall time spent in them (the children's included,
 * as Elasticsearch's time_in_nanos), plus iterator construction; the planning (rewrite) time.
 * The shard layer adds the collector's and the aggregations' times. Off (a NULL
 * sc_search_options.profile) it costs one branch per iterator built. */
#ifndef SC_SEARCH_PROFILE_H
#define SC_SEARCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "search/iter.h"

typedef struct sc_profile_node sc_profile_node;
struct sc_profile_node {
    const char *type;                /* Lucene's query class name for the node ("TermQuery", ...) */
    const char *description;         /* the node as explanations write it ("title:fox") */
    uint64_t counts[SC_PROF_COUNT_]; /* calls per SC_PROF_* operation */
    uint64_t times_ns[SC_PROF_COUNT_]; /* their wall time, children included */
    uint64_t build_ns, n_builds;       /* building the node's iterator, once per segment */
    sc_profile_node *children;
    size_t n_children;
};

typedef struct sc_search_profile {
    sc_profile_node *query; /* the plan of the shard's (last) search; NULL before one */
    uint64_t rewrite_ns;    /* planning: rewrites, term statistics, expansions */
    /* filled by the shard layer (shard/shard_search.c) */
    const char *collector; /* "top_docs", "sorted", "collapse", "count", "aggregations_only" */
    uint64_t collector_ns; /* the whole top-k / count pass, iterators included */
    uint64_t aggs_ns;      /* the aggregations' pass (0 without) */
} sc_search_profile;

/* A node's inclusive time: its operations' and its iterator construction. */
uint64_t sc_profile_node_time_ns(const sc_profile_node *n);

/* Deep copy of src (strings included) into arena a: *out. SC_ENOMEM / SC_ELIMIT. */
sc_status sc_search_profile_copy(sc_arena *a, const sc_search_profile *src, sc_search_profile **out)
    SC_MUST_USE;

#endif
