/* Index-level operations the API needs beyond the registry: statistics, refresh, flush,
 * force-merge, and document writes/reads routed to shards. These fan out to every shard of an
 * index (src/shard) and aggregate; document operations route by `_routing` or `_id` with
 * Elasticsearch's murmur3 routing. Thread-safe. */
#ifndef SC_CLUSTER_OPS_H
#define SC_CLUSTER_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "cluster/node.h"

typedef struct sc_index_stats {
    uint64_t docs_count;
    uint64_t docs_deleted;
    uint64_t store_bytes;
    uint64_t n_segments;
    uint64_t merges_current;
    uint64_t merges_total;
    uint64_t merges_spilled_bytes; /* written to merge spill files (index.merge.memory) */
    uint64_t translog_ops;
    uint64_t translog_bytes;
    uint64_t memory_bytes; /* the indexing buffers (0 once the shards went idle) */
    /* work counters of the copies (Elasticsearch's are per shard copy: a replica counts the
     * operations it applies, and a query phase counts on the copy that ran it) */
    uint64_t index_total, index_time_ns, delete_total;
    uint64_t query_total, query_time_ns;
    uint64_t refresh_total, flush_total;
} sc_index_stats;

/* The sc_index_stats fields, in their order on the wire (stats_wire.h): offsets of uint64_t. */
#define SC_INDEX_STATS_N_FIELDS 17
extern const size_t sc_index_stats_fields[SC_INDEX_STATS_N_FIELDS];
/* dst += src, field by field. */
void sc_index_stats_add(sc_index_stats *dst, const sc_index_stats *src);

/* Sums the shards' numbers. */
void sc_index_collect_stats(sc_index *ix, sc_index_stats *out);
/* Per-shard numbers (shard < number_of_shards). */
void sc_index_shard_stats(sc_index *ix, uint32_t shard, sc_index_stats *out);
/* Why primary `shard` failed to open (see sc_index.shard_failures), NULL when it serves. */
const char *sc_index_shard_failure(const sc_index *ix, uint32_t shard);
/* The number of primary shards that failed to open (red, unassigned). */
uint32_t sc_index_n_failed_shards(const sc_index *ix);
/* Whether primary `shard` is still recovering (opened in the background at start: translog
 * replay): neither serving nor failed. Elasticsearch's INITIALIZING. */
bool sc_index_shard_initializing(const sc_index *ix, uint32_t shard);
/* The number of primary shards still recovering (red while > 0, as Elasticsearch). */
uint32_t sc_index_n_initializing_shards(const sc_index *ix);
/* Applies index.translog.flush_threshold_size (bytes; 0 = default) to every open shard. */
void sc_index_set_flush_threshold(sc_index *ix, uint64_t bytes);

/* Publishes a new searcher on every shard. Returns the number of shards that succeeded. */
uint32_t sc_index_refresh(sc_index *ix);
/* Commits every shard (segments durable, translog trimmed). Shards that succeeded. */
uint32_t sc_index_flush(sc_index *ix);
/* Merges every shard down to at most max_segments (<= 0: the policy's choice). */
uint32_t sc_index_forcemerge(sc_index *ix, int64_t max_segments);
/* One of the three above on the shards with only[shard] set (NULL = every shard): a clustered
 * node runs it on the copies the routing assigns to it. Shards that succeeded. */
typedef enum sc_index_bcast {
    SC_BCAST_REFRESH,
    SC_BCAST_FLUSH,
    SC_BCAST_FORCEMERGE
} sc_index_bcast;
uint32_t sc_index_broadcast(sc_index *ix, sc_index_bcast op, int64_t max_segments,
                            const bool *only);

/* ---- documents ---- */

typedef enum sc_doc_op {
    SC_DOC_INDEX,  /* create or replace */
    SC_DOC_CREATE, /* fail with 409 if it exists */
    SC_DOC_DELETE,
} sc_doc_op;

typedef struct sc_doc_write {
    sc_doc_op op;
    sc_slice id;             /* required (the API generates ids for auto-id requests) */
    sc_slice routing;        /* empty = route by id */
    sc_slice source;         /* INDEX/CREATE: the document JSON object */
    int64_t if_seq_no;       /* -2 = unset */
    int64_t if_primary_term; /* 0 = unset */
    bool refresh;            /* refresh=true/wait_for: clustered, replicas refresh too */
    /* wait_for_active_shards: when set, the copies of the shard (primary included) that must
     * be active before the write runs (SC_WAIT_ACTIVE_ALL: 1 + number_of_replicas); unset:
     * the index setting index.write.wait_for_active_shards (default 1). The write waits up to
     * timeout_ms (0: 60 s, Elasticsearch's 1m) for them, then fails with 503
     * unavailable_shards_exception. */
    bool wait_active_set;
    int32_t wait_active;
    uint32_t timeout_ms;
    /* CREATE only: this process generated id for this write (sc__api_auto_id) and this is its
     * first attempt, run here: no copy of the write has been anywhere before, so the id cannot
     * exist and the primary does not look it up (sc_shard_write_opts.append_only). Never set
     * on a retry, a forwarded or a replicated write. */
    bool new_id;
} sc_doc_write;

#define SC_WAIT_ACTIVE_ALL (-1)

/* Parses a wait_for_active_shards value: "all" (SC_WAIT_ACTIVE_ALL) or a non-negative integer
 * (at most 1024). false on anything else. */
bool sc_wait_active_parse(const char *s, int32_t *out);

typedef struct sc_doc_result {
    int status;         /* HTTP status of this item (201 created, 200, 404, 409, 400...) */
    const char *result; /* "created", "updated", "deleted", "not_found"; NULL on error */
    int64_t version, seq_no, primary_term;
    uint32_t shard;
    sc_cluster_error err; /* when result == NULL */
} sc_doc_result;

/* Applies writes to the index, grouped by shard, and makes them durable (translog fsync) per
 * the index's durability before returning. results[i] describes writes[i]. Mapping updates
 * from dynamic fields are installed as they happen. Returns SC_OK when every item has a
 * result (items may have failed individually, e.g. index_closed_exception when the index is
 * closed); other statuses are whole-request failures. */
sc_status sc_index_write(sc_index *ix, const sc_doc_write *writes, size_t n, sc_doc_result *results,
                         sc_arena *arena) SC_MUST_USE;

/* Refresh policy after a write request: none, immediately, or wait for the next refresh. */
typedef enum sc_refresh_policy {
    SC_REFRESH_NONE,
    SC_REFRESH_TRUE,
    SC_REFRESH_WAIT_FOR,
} sc_refresh_policy;
/* Applies a refresh policy to the shards listed (mask over shard numbers; NULL = all). */
void sc_index_refresh_after_write(sc_index *ix, sc_refresh_policy p);

typedef struct sc_doc_get {
    bool found;
    sc_slice source; /* in the arena */
    int64_t version, seq_no, primary_term;
} sc_doc_get;

/* Real-time get by id (sees unrefreshed writes, as Elasticsearch's GET does). SC_ECLOSED when
 * the index is closed. */
sc_status sc_index_get(sc_index *ix, sc_slice id, sc_slice routing, sc_arena *arena,
                       sc_doc_get *out) SC_MUST_USE;

/* The shard a routing value (or id) goes to, with Elasticsearch's murmur3 routing. */
uint32_t sc_index_route(const sc_index *ix, sc_slice routing);

#endif
