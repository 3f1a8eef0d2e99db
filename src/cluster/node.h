/* sc_node: one scry node — its identity, configuration and the index registry (indices by name
 * with settings, mapping and shards), persisted under the data folder so a restart reopens every
 * index. Single-node mode is a cluster of one: the coordinator (search.h) runs against the
 * node's local shards through the same per-node request structs a remote node would receive.
 *
 * Layout on disk:
 *   DATA/node.json                      {"node_id": ..., "cluster_uuid": ...}
 *   DATA/indices/<uuid>/meta.json       name, uuid, creation date, settings, mappings
 *   DATA/indices/<uuid>/<shard number>/ one folder per shard (owned by src/shard)
 * Thread-safe: the registry is guarded by a mutex; an sc_index is refcounted so a request that
 * holds one keeps it alive across a concurrent DELETE. */
#ifndef SC_CLUSTER_NODE_H
#define SC_CLUSTER_NODE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "mapping/mapping.h"

typedef struct sc_node sc_node;
typedef struct sc_index sc_index;
typedef struct sc_shard sc_shard;
typedef struct sc_threadpool sc_threadpool;
typedef struct sc_membership sc_membership;

typedef struct sc_node_config {
    const char *data_dir;      /* required */
    const char *node_name;     /* default: host name */
    const char *cluster_name;  /* default "scry" */
    size_t memory_limit_bytes; /* budget for breakers; default 1 GiB */
    unsigned search_threads;   /* shard-level search workers; 0 = cores */
    int durability_async;      /* 1: index.translog.durability async by default */
    /* Test only (`scry serve --test-recovery-delay`): each shard recovered at start waits this
     * long before replaying its translog (sc_shard_config.test_recovery_delay_ms). 0 = none. */
    uint32_t test_recovery_delay_ms;
    /* path.repo: the folder under which fs snapshot repositories may live; NULL = none. */
    const char *path_repo;
    /* Test only (`scry serve --test-snapshot-delay`): a snapshot waits this long before each
     * file it copies, so that tests can kill a node mid-snapshot. 0 in production. */
    uint32_t test_snapshot_delay_ms;
    /* Test only (`scry serve --test-search-delay`): each shard query waits this long before it
     * runs, polling its cancellation token (cancelled: the shard fails as cancelled; past the
     * deadline: it runs at once and times out), so that tests have a slow search. 0 = none. */
    uint32_t test_search_delay_ms;
    /* Test only (`scry serve --test-fetch-delay`): a coordinator waits this long between a
     * distributed search's query phase and its fetch phase, so that tests can kill a data node
     * in between. 0 = none. */
    uint32_t test_fetch_delay_ms;
    /* Clustered (`serve --cluster`): the node holds only the shard copies the routing table
     * allocates to it. A new index's shards are not opened at creation and a shard folder
     * missing at start is absent (not created); the placement opens, retires and removes
     * copies as the routing changes (copies.c). false: every shard of every index is local. */
    bool allocated_copies_only;
    /* indices.memory.shard_inactive_time: a shard without writes this long commits and frees
     * its indexing buffer (sc_shard_release_idle). 0: the default (5 minutes); < 0: never. */
    int64_t shard_inactive_ms;
    /* indices.memory.index_buffer_size, per shard (Elasticsearch's is one budget for the
     * node): a shard's indexing buffer becomes a segment past it. 0: 64 MiB. */
    uint64_t index_buffer_bytes;
} sc_node_config;

/* A user-facing error: Elasticsearch type, reason, HTTP status, and the index it concerns. */
typedef struct sc_cluster_error {
    const char *type;
    char reason[512];
    int status;
    char index[256];
    char index_uuid[32];
    const char *cause_type;
    char cause_reason[256];
} sc_cluster_error;

/* Index settings as scry uses them (the full settings JSON is kept for GET _settings). */
typedef struct sc_index_settings {
    uint32_t number_of_shards;   /* default 1 */
    uint32_t number_of_replicas; /* default 1 (reported; a single node holds primaries only) */
    int64_t refresh_interval_ms; /* default 1000; -1 disables periodic refresh */
    int64_t max_result_window;   /* default 10000 */
    bool durability_async;       /* index.translog.durability: async */
    /* Elasticsearch's routing_num_shards: index.number_of_routing_shards, else for indices
     * created by this version the ES 7+ default (num_shards * 2^k <= 1024, see
     * sc_routing_default_num_routing_shards), persisted in the index metadata; 0 = num_shards
     * (indices created before it was stored keep routing by floorMod(hash, num_shards)). */
    uint32_t routing_num_shards;
    /* index.translog.flush_threshold_size: a shard flushes once its translog is larger
     * (default 512 MiB, as Elasticsearch), which bounds what a restart replays. Dynamic. */
    uint64_t flush_threshold_bytes;
    /* index.merge.memory: what one merge of a shard may hold before it spills to temporary
     * files (default 256 MiB). Static. */
    uint64_t merge_memory_bytes;
    /* index.write.wait_for_active_shards (default 1; SC_WAIT_ACTIVE_ALL for "all"). Dynamic. */
    int32_t write_wait_active;
} sc_index_settings;

struct sc_index {
    _Atomic int refs;
    sc_node *node; /* the owning node (for its metadata hook) */
    char *name;
    char uuid[24];
    char *dir;
    int64_t creation_date_ms;
    sc_index_settings settings;
    json_t *settings_json; /* normalized {"index": {...}} as shown by GET _settings */
    json_t *analysis_json; /* settings.index.analysis or NULL */
    /* settings.number_of_shards entries. An entry is NULL while the shard recovers in the
     * background at start (INITIALIZING: sc_index_shard_initializing) or when it failed to open
     * (shard_failures); it is set once, atomically, when the recovery finishes. */
    sc_shard *_Atomic *shards;
    /* Per shard (settings.number_of_shards entries, NULL when all opened): why a shard failed
     * to open at start (corrupt or unreadable files), owned strings; that shard's entry in
     * `shards` stays NULL, it is red and UNASSIGNED, searches report it in _shards.failures and
     * its files are left in place. Each entry is set at most once, atomically (by the
     * background recovery), and read-only afterwards. */
    char *_Atomic *shard_failures;
    /* Per shard: true when this node holds no copy of it (allocated_copies_only: never
     * allocated here, or retired); its `shards` entry is NULL and it is not INITIALIZING. Set
     * and cleared by the placement thread only (copies.c). NULL when every shard is local. */
    _Atomic bool *shard_absent;
    /* Copies retired from `shards` (no longer allocated here), closed by the placement thread
     * after a grace period, or with the index (copies.c). Placement thread only. */
    struct sc__retired_copy *retired;
    /* Per shard (lazily allocated, placement thread only): when this node first saw its copy
     * no longer allocated and safe elsewhere (0: not leaving); it keeps serving until
     * LEAVE_SERVE_NS later (copies.c). */
    uint64_t *leaving_since_ns;
    void *analysis; /* analyzer registry (opaque, see node.c); replaced whole by
                     * sc_index_reload_analysis, the old one kept until the index is freed */
    void *analysis_retired; /* registries replaced by reloads (node.c), freed with the index */
    sc_mapping_analysis analysis_hook; /* binds the mapping layer to `analysis` */
    /* Mapping: replaced whole on change; read with sc_index_mapping. */
    void *mapping_mu; /* pthread_mutex_t* */
    sc_mapping *mapping;
    _Atomic bool deleted;
    /* Closed (POST _close): reads and writes fail with index_closed_exception; persisted in the
     * index metadata. The shards stay open in memory (flushed at close). */
    _Atomic bool closed;
    /* Aliases of this index (Elasticsearch keeps them in the index metadata): an object
     * {alias: {filter?, index_routing?, search_routing?, is_write_index?, is_hidden?}}, never
     * NULL once registered. Replaced whole under *alias_mu (the node's registry mutex), so read
     * it only through alias.h. */
    json_t *aliases;
    void *alias_mu; /* pthread_mutex_t*, owned by the node */
    /* This node's requests on the index, for _nodes/stats (_stats sums the copies' own
     * counters, sc_index_stats). */
    _Atomic uint64_t n_index_ops, index_time_ns, n_delete_ops;
    _Atomic uint64_t n_search_queries, search_time_ns, n_fetch, fetch_time_ns;
};

/* Opens (creating if needed) the node's data folder and every index in it. *out owned; close
 * with sc_node_close. SC_EIO when the folder cannot be used; SC_ECORRUPT when an index's
 * metadata is unreadable (the index is skipped with a log line, not fatal: status OK). */
sc_status sc_node_open(const sc_node_config *cfg, sc_node **out) SC_MUST_USE;
/* Flushes every shard and frees everything. NULL is a no-op. */
void sc_node_close(sc_node *n);

const char *sc_node_name(const sc_node *n);
const char *sc_node_id(const sc_node *n);
const char *sc_node_cluster_name(const sc_node *n);
const char *sc_node_cluster_uuid(const sc_node *n);
int64_t sc_node_start_ms(const sc_node *n);
const sc_node_config *sc_node_config_get(const sc_node *n);
/* The shard-level worker pool (bounded concurrency for query phases); may be NULL. */
sc_threadpool *sc_node_search_pool(sc_node *n);

/* Creates an index. settings/mappings are the request's objects (may be NULL). Errors:
 * SC_EEXIST (resource_already_exists_exception), SC_EINVAL (invalid_index_name_exception,
 * illegal_argument_exception, mapper_parsing_exception), SC_EIO. */
sc_status sc_node_create_index(sc_node *n, const char *name, const json_t *settings,
                               const json_t *mappings, sc_cluster_error *err) SC_MUST_USE;
/* Deletes an index and its files. SC_ENOTFOUND when absent. */
sc_status sc_node_delete_index(sc_node *n, const char *name, sc_cluster_error *err) SC_MUST_USE;

/* The index named `name` with a new reference, or NULL. */
sc_index *sc_node_index(sc_node *n, const char *name);
void sc_index_ref(sc_index *ix);
void sc_index_unref(sc_index *ix);

/* Resolves an index expression ("a", "a,b", "logs-*", "_all", "*", "-x" exclusions) to indices
 * (new references, sorted by name) in *out (malloc'd array; free with sc_node_release).
 * A concrete missing name fails with SC_ENOTFOUND (index_not_found_exception); wildcards that
 * match nothing give an empty list. NULL/empty expression = all. */
sc_status sc_node_resolve(sc_node *n, const char *expr, sc_index ***out, size_t *n_out,
                          sc_cluster_error *err) SC_MUST_USE;
/* Flags of sc_node_resolve_ex. */
#define SC_NODE_RESOLVE_CLOSED 1u /* include closed indices (names and wildcards) */
/* Names and wildcards match indices only, not aliases; a concrete name that is an alias fails
 * with SC_EINVAL (400 illegal_argument_exception), as Elasticsearch's index deletion does. */
#define SC_NODE_RESOLVE_NO_ALIASES 2u
/* Wildcards and _all also match hidden indices (index.hidden: data stream backing indices). */
#define SC_NODE_RESOLVE_HIDDEN 4u
/* sc_node_resolve with flags. Without SC_NODE_RESOLVE_CLOSED (as sc_node_resolve), wildcards
 * skip closed indices and a concrete closed name fails with SC_ECLOSED (err:
 * index_closed_exception, 400, with index and index_uuid), as Elasticsearch's default
 * expand_wildcards=open and ignore_unavailable=false. */
sc_status sc_node_resolve_ex(sc_node *n, const char *expr, unsigned flags, sc_index ***out,
                             size_t *n_out, sc_cluster_error *err) SC_MUST_USE;
/* Closes (closed = true: flushes every shard first) or opens an index, persisting the state in
 * its metadata. Idempotent. SC_EIO when the metadata cannot be written. */
sc_status sc_index_set_closed(sc_index *ix, bool closed, sc_cluster_error *err) SC_MUST_USE;
/* Fills err with index_closed_exception for ix. */
void sc_cluster_error_closed(sc_cluster_error *err, const sc_index *ix);
void sc_node_release(sc_index **list, size_t n);

/* Applies the dynamic settings of src (PUT _settings' "index" object or flat "index.x" keys,
 * already validated) to ix, persists its metadata and, clustered, publishes it so that every
 * node (and the master's allocation: number_of_replicas) follows. */
void sc_index_update_settings(sc_index *ix, const json_t *src);

/* The current mapping with a new reference (sc_mapping_unref). */
sc_mapping *sc_index_mapping(sc_index *ix);
/* Merges a mapping update (PUT _mapping) and persists it. SC_ECONFLICT/SC_EINVAL with err. */
sc_status sc_index_put_mapping(sc_index *ix, const json_t *update, sc_cluster_error *err)
    SC_MUST_USE;
/* Installs a mapping (merged from the cluster's metadata) if `base` is still current (returns
 * true), persisting it to meta.json without publishing it to the cluster; false when another
 * writer changed it first. */
bool sc_index_install_mapping(sc_index *ix, const sc_mapping *base, sc_mapping *updated);
/* Rebuilds the index's analyzers from its settings, re-reading synonym files
 * (_reload_search_analyzers). Requests already running keep the registry they read; it is
 * freed with the index. SC_EINVAL with err (400) when the settings no longer build (for
 * example a synonyms file with a bad rule): the old analyzers stay. Serialised per node. */
sc_status sc_index_reload_analysis(sc_index *ix, sc_cluster_error *err) SC_MUST_USE;
/* The analysis hook for the mapping layer bound to this index's analyzers. */
const sc_mapping_analysis *sc_index_analysis(sc_index *ix);

/* Fills err with index_not_found_exception for name. */
void sc_cluster_error_not_found(sc_cluster_error *err, const char *name);
/* Fills err with type/status/reason (printf). */
void sc_cluster_error_set(sc_cluster_error *err, int status, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses a byte size setting as Elasticsearch does ("512mb", "1gb", "100kb", "2048b", or a
 * plain number of bytes; units case-insensitive). false on anything else or a negative. */
bool sc_setting_parse_bytes(const json_t *v, uint64_t *out);

/* Called after an index's metadata changed (created, mapping or state changed: meta_json is
 * the metadata as written to meta.json) or was removed (meta_json NULL). Runs on the thread
 * that made the change, which holds no node lock; must not block for long. */
typedef void (*sc_node_meta_fn)(void *ctx, const char *index, const char *meta_json);
/* Installs the metadata hook and the cluster membership the APIs read (membership.h; NULL when
 * not clustered). Call before serving requests; not thread-safe against them. */
void sc_node_set_cluster(sc_node *n, sc_membership *m, sc_node_meta_fn fn, void *ctx);
/* The membership installed by sc_node_set_cluster, or NULL (single node). */
sc_membership *sc_node_cluster(const sc_node *n);
/* Installs (or, with NULL, removes) the cross-node placement: shard locations and the transport
 * (cluster/placement.h). Set only when clustered; the coordinator and write routing use it. */
typedef struct sc_placement sc_placement;
void sc_node_set_placement(sc_node *n, sc_placement *p);
/* The installed placement, or NULL (single node: everything is local). */
sc_placement *sc_node_placement(const sc_node *n);

/* Validates an index name as Elasticsearch does (lowercase, no \ / * ? " < > | space , #,
 * not starting with - _ +, not . or .., at most 255 bytes). */
bool sc_index_name_valid(const char *name, sc_cluster_error *err);

#endif
