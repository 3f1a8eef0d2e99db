/* Runs one query tree on one shard snapshot: the shard-level query phase (top k by score and
 * the hit count), bridging the coordinator to the search layer (src/search). */
#ifndef SC_CLUSTER_SHARD_EXEC_H
#define SC_CLUSTER_SHARD_EXEC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/search.h"
#include "cluster/tasks.h"
#include "search/query.h"
#include "shard/shard.h"

typedef struct sc__shard_exec_args {
    const sc_shard_snapshot *snapshot;
    const sc_query *query;
    uint32_t k;                 /* 0 = count only */
    int64_t track_total_hits;   /* -1 exact, 0 none, N */
    sc_cancel_token *token;     /* cancellation + deadline (shared by the request's shards) */
    uint32_t shard_ix;          /* stamped into every returned doc */
    const sc_sort_field *sort;  /* field sort (NULL = by score) */
    size_t n_sort;
    const sc_sort_value *search_after;
    sc_node *node;              /* request breaker: the query's memory is reserved on it */
    const sc_agg_spec *aggs;    /* aggregations (NULL = none), collected under agg_query */
    const sc_query *agg_query;
    uint32_t n_shards;          /* shards of the request (terms' shard_size) */
    uint64_t max_buckets;
} sc__shard_exec_args;

/* Compares two docs' sort keys under a sort spec (<0: a ranks first). */
int sc__sort_cmp(const sc_sort_field *sort, size_t n_sort, const sc_sort_value *a,
                 const sc_sort_value *b);

typedef struct sc__shard_exec_result {
    sc_shard_hit *docs; /* malloc'd, best first, at most k */
    sc_sort_value *keys; /* malloc'd n_docs * n_sort keys (docs[i].keys point here) */
    size_t n_docs;
    uint64_t total;
    bool total_is_lower_bound;
    bool timed_out;
    bool breaker_tripped;       /* SC_ELIMIT came from the request breaker */
    bool too_many_buckets;      /* SC_ELIMIT was search.max_buckets */
    uint8_t *agg_bytes;         /* malloc'd encoding of the aggregation partial (sc_agg_encode) */
    size_t agg_len;
    char error[256];
} sc__shard_exec_result;

sc_status sc__shard_exec(const sc__shard_exec_args *a, sc__shard_exec_result *r) SC_MUST_USE;

#endif
