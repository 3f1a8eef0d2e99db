/* Private to src/cluster: the pieces of the node that several files of the layer share. */
#ifndef SC_CLUSTER_INTERNAL_H
#define SC_CLUSTER_INTERNAL_H

#include <pthread.h>

#include "cluster/node.h"
#include "cluster/tasks.h"
#include "shard/sched.h"
#include "shard/shard.h"

typedef struct sc__tasks {
    pthread_mutex_t mu;
    sc_task *head;
    uint64_t next_id;
} sc__tasks;

typedef struct sc__breakers {
    uint64_t request_limit;
    uint64_t inflight_limit;
    _Atomic uint64_t request_used, request_tripped;
    _Atomic uint64_t inflight_used, inflight_tripped;
    _Atomic uint64_t request_peak; /* largest memory one shard execution used (high-water) */
} sc__breakers;

typedef struct sc_scroll sc_scroll;
typedef struct sc__scrolls {
    pthread_mutex_t mu;
    sc_scroll *head;
    uint64_t next_id;
} sc__scrolls;

sc__tasks *sc__node_tasks(sc_node *n);

/* The client hang-up watcher thread (tasks.c). */
typedef struct sc__watcher sc__watcher;
sc__watcher *sc__watcher_start(sc_node *n);
void sc__watcher_stop(sc__watcher *w);
sc__scrolls *sc__node_scrolls(sc_node *n);
sc__breakers *sc__node_breakers(sc_node *n);

/* Opens (create: creates) the shards of ix under ix->dir. Fills ix->shards. */
sc_status sc__index_open_shards(sc_node *n, sc_index *ix, bool create, sc_cluster_error *err)
    SC_MUST_USE;
/* The configuration of shard `shard` of ix (path written into path[cap]); cfg->mapping holds
 * a reference the caller drops with sc_mapping_unref. */
void sc__index_shard_config(sc_node *n, sc_index *ix, uint32_t shard, char *path, size_t cap,
                            sc_shard_config *cfg);
/* Publishes the outcome of a background open of shard i: the shard (st == SC_OK; takes it),
 * or its failure (red, UNASSIGNED with serr's reason). */
void sc__index_shard_recovered(sc_index *ix, uint32_t i, sc_shard *shard, sc_status st,
                               const sc_shard_error *serr);

/* Background recovery of the indices found at start (recovery.c). */
typedef struct sc__recovery sc__recovery;
sc_status sc__recovery_new(sc__recovery **out) SC_MUST_USE;
/* Queues every shard of ix (registered, shards INITIALIZING; a reference is taken per shard). */
sc_status sc__recovery_add(sc__recovery *r, sc_node *n, sc_index *ix) SC_MUST_USE;
/* Starts the recoveries on their own thread and pool (up to the cores, at most 4 shards at
 * once); returns at once. */
sc_status sc__recovery_start(sc__recovery *r) SC_MUST_USE;
/* Stops the recoveries still running (their shards stay INITIALIZING; the translog is replayed
 * again at the next start), waits for the thread and frees r. NULL is a no-op. */
void sc__recovery_free(sc__recovery *r);
/* The node's recovery (NULL once started recoveries are freed at close). */
sc__recovery *sc__node_recovery(sc_node *n);

/* Closes the shards (no flush). */
void sc__index_close_shards(sc_index *ix);
/* Flushes every shard (used at shutdown). */
void sc__index_flush(sc_index *ix);

/* ---- the copies a node holds (copies.c) ---- */
/* allocated_copies_only: allocates ix->shard_absent and marks every shard absent (create) or
 * the shards whose folder is missing (an index loaded at start). SC_ENOMEM. */
sc_status sc__index_mark_absent(sc_index *ix, bool create) SC_MUST_USE;
/* Flushes, on a bounded pool, the shards of the given indices that have something to commit;
 * idle shards are skipped (shutdown). */
void sc__indices_flush_dirty(sc_index **ixs, size_t n);
/* Closes the retired copies of ix without flushing (their data is elsewhere; index free). */
void sc__index_close_retired(sc_index *ix);
/* Makes ix's local copies follow the routing: opens (or creates) the copies allocated here,
 * retires those no longer allocated once every copy of the shard is started on live nodes,
 * and closes and removes retired copies after their grace period. Placement thread only.
 * local: this node's id; live(node id) tells whether a node is live. Returns false when
 * something must be retried later (an open failed, a retired copy waits). */
typedef struct sc_index_routing sc_index_routing;
bool sc__index_reconcile_copies(sc_node *n, sc_index *ix, const sc_index_routing *r,
                                const char *local, bool (*live)(void *, const char *), void *ctx);

/* A registry replaced by a reload: requests that read it may still run (freed with the
 * index). */
typedef struct retired_registry {
    struct retired_registry *next;
    struct sc_analyzer_registry *registry;
} retired_registry;

/* Parses index settings into s and builds the normalized settings JSON for GET _settings
 * (*norm) and the analysis section (*analysis) (index_settings.c). false with err set. */
bool sc__index_parse_settings(const json_t *in, sc_index_settings *s, json_t **norm,
                              json_t **analysis, bool durability_async, sc_cluster_error *err);
/* Takes the settings of ix's metadata from the cluster (another node changed them): the
 * dynamic ones are applied and meta.json rewritten, not published back (index_settings.c). */
void sc__index_take_settings(sc_index *ix, const json_t *settings);
/* Builds ix's analyzer registry from its analysis settings and its mapping hook
 * (index_settings.c). */
sc_status sc__index_analysis_bind(sc_index *ix, sc_cluster_error *err) SC_MUST_USE;

/* Builds an sc_index in memory (not registered, no shards open) from settings and mappings
 * (node.c). Takes no ownership of the JSON inputs. */
sc_status sc__index_build(sc_node *n, const char *name, const char *uuid, int64_t created,
                          const json_t *settings, const json_t *mappings, sc_index **out,
                          sc_cluster_error *err) SC_MUST_USE;
/* Adds ix (taking the reference) to the registry; SC_EEXIST when the name is taken (node.c). */
sc_status sc__node_register(sc_node *n, sc_index *ix) SC_MUST_USE;

/* The index metadata object as meta.json holds it (new reference; node_persist.c). */
json_t *sc__index_meta_json(sc_index *ix);
/* Index metadata on disk (node_persist.c). Writes the metadata (settings, mapping, state)
 * atomically to <dir>/meta.json. */
sc_status sc__index_write_meta(sc_index *ix) SC_MUST_USE;
/* The same, logging a failure. */
void sc__index_persist_meta(sc_index *ix);
/* Writes meta.json without handing it to the cluster (a change that came from the cluster). */
sc_status sc__index_write_meta_local(sc_index *ix) SC_MUST_USE;
/* sc__index_persist_meta for a mapping change: clustered, the metadata written to etcd keeps
 * the settings and aliases etcd holds (this node's may not have caught up with another node's
 * change of them) and merges the mappings; the hook's text carries the member
 * SC_META_KEEP_CLUSTER_ALIASES for that. */
void sc__index_persist_mapping_meta(sc_index *ix);
#define SC_META_KEEP_CLUSTER_ALIASES "_keep_cluster_aliases"
/* Removes meta.json, so that the index is forgotten at the next start. */
void sc__index_remove_meta(const sc_index *ix);
/* Creates <data_dir>/indices and reads (or makes and writes) the node identity. */
sc_status sc__node_storage_open(const char *data_dir, char node_id[24], char cluster_uuid[24])
    SC_MUST_USE;
/* Loads every index found under <data_dir>/indices (at start) and removes the folders of
 * deleted indices that a crash left behind. */
void sc__node_recover_indices(sc_node *n);
/* Creates the index described by cluster metadata `meta` (meta.json's form, e.g. etcd's
 * indices/<name> value) on this node with the metadata's uuid: its folder, meta.json (not
 * published back: the metadata came from the cluster), empty shards; then registers it.
 * SC_EEXIST when an index of that name exists, SC_ECORRUPT for bad metadata, SC_EIO. */
sc_status sc__node_adopt_index(sc_node *n, const json_t *meta) SC_MUST_USE;

/* Hands a new index mapping to every shard (caller holds ix->mapping_mu). */
void sc__index_publish_mapping(sc_index *ix, sc_mapping *m);

/* Periodic refresh of every index per its refresh_interval, on one background thread. */
/* The node's shard scheduler (shard/sched.h): every shard of the node is attached to it. */
sc_shard_sched *sc__node_sched(sc_node *n);

/* Snapshot of all indices (new references). */
sc_status sc__node_all(sc_node *n, sc_index ***out, size_t *n_out) SC_MUST_USE;

void sc__random_id(char out[24]);

/* The node-level metadata store (meta_store.c): opened with the node, closed with it. */
typedef struct sc__meta sc__meta;
sc_status sc__meta_open(const char *data_dir, sc__meta **out) SC_MUST_USE;
void sc__meta_close(sc__meta *m);
sc__meta *sc__node_meta(sc_node *n);

/* Snapshots (snapshot.c): opened with the node (path.repo may be NULL), closed after the
 * background tasks that may be taking one. */
typedef struct sc__snaps sc__snaps;
sc_status sc__snaps_open(const char *path_repo, sc__snaps **out) SC_MUST_USE;
void sc__snaps_close(sc__snaps *s);
sc__snaps *sc__node_snaps(sc_node *n);

/* Background tasks (bgtask.c): opened with the node; closing cancels and joins them. */
typedef struct sc__bgtasks sc__bgtasks;
sc_status sc__bgtasks_open(sc__bgtasks **out) SC_MUST_USE;
void sc__bgtasks_close(sc__bgtasks *b);
sc__bgtasks *sc__node_bgtasks(sc_node *n);

/* Whether ix meets one of the rollover conditions (or none is set); fills met (datastream.c). */
typedef struct sc_rollover_conditions sc_rollover_conditions;
bool sc__rollover_conditions_met(sc_index *ix, const sc_rollover_conditions *c, json_t *met);

/* The registry mutex (node.c); it also guards every index's aliases. */
pthread_mutex_t *sc__node_mu(sc_node *n);
/* Held across one alias change and the metadata writes it makes (alias.c). */
pthread_mutex_t *sc__node_alias_write_mu(sc_node *n);
/* The registry (sorted by name); caller holds sc__node_mu. */
sc_index *const *sc__node_list_locked(sc_node *n, size_t *count);
/* The index named `name` (borrowed) or NULL; caller holds sc__node_mu. */
sc_index *sc__node_find_locked(sc_node *n, const char *name);
/* Removes `name` from the registry and returns its reference (NULL when absent); caller holds
 * sc__node_mu, then hands the index to sc__index_forget after unlocking. */
sc_index *sc__node_unregister_locked(sc_node *n, const char *name);
/* Marks an unregistered index deleted, removes its metadata and drops the reference. */
void sc__index_forget(sc_index *ix);
/* Whether some index has an alias named `name`; caller holds sc__node_mu (alias.c). */
bool sc__alias_exists_locked(sc_node *n, const char *name);
/* A deep copy of ix's aliases (taking its alias lock): for the metadata file. */
json_t *sc__index_aliases_copy(sc_index *ix);

/* The coordinator's steps (search.c), shared with the RRF coordinator (search_rrf.c): the
 * target shards in coordinator order; the final reduce of the shards' outcomes (failures,
 * totals, timed_out; SC_ECANCELLED); the fetch phase of qresp->top[from, from + nh) into
 * out->hits. */
struct sc_search_request;
struct sc_search_response;
struct sc_shard_target;
struct sc_node_query_request;
struct sc_node_query_response;
sc_status sc__search_build_targets(const struct sc_search_request *sr, sc_arena *arena,
                                   struct sc_shard_target **out, size_t *n_out) SC_MUST_USE;
sc_status sc__search_reduce_results(const struct sc_search_request *sr,
                                    const struct sc_node_query_request *qreq,
                                    const struct sc_node_query_response *qresp,
                                    const char *node_id, sc_arena *arena,
                                    struct sc_search_response *out) SC_MUST_USE;
sc_status sc__search_fetch_hits(sc_node *n, const struct sc_search_request *sr,
                                const struct sc_node_query_request *qreq,
                                const struct sc_node_query_response *qresp, size_t from, size_t nh,
                                sc_arena *arena, struct sc_search_response *out) SC_MUST_USE;
/* A search with reciprocal rank fusion (search_rrf.c; sc_search_run hands it sr->n_rrf > 0). */
sc_status sc__search_run_rrf(sc_node *n, const struct sc_search_request *sr, sc_arena *arena,
                             struct sc_search_response *out) SC_MUST_USE;
/* Pins every shard of sr's indices (in target order: index, then shard) into *pins (malloc'd,
 * *n_pins entries, NULL for a shard not open here); release each with
 * sc_shard_searcher_release and free the array (search_rrf.c). SC_ENOMEM. */
sc_status sc__search_pin_all(const struct sc_search_request *sr, const sc_shard_snapshot ***pins,
                             size_t *n_pins) SC_MUST_USE;
/* The global kNN phase of a hybrid search (search_knn.c; sc_search_run hands it
 * sr->n_knn_global > 0 with pins): sets each clause's min_score to its k-th best score over
 * every shard of the pinned snapshots. */
sc_status sc__search_knn_global(sc_node *n, const struct sc_search_request *sr,
                                const sc_shard_snapshot *const *pins, sc_arena *arena) SC_MUST_USE;
/* The same across nodes (search_knn.c; placement installed, no pins): each clause alone as a
 * kNN-only search of the data nodes for its global top k (no fetch); *floors (arena, one per
 * clause, NaN when fewer than k matched) become the clauses' min_score, on this node's trees
 * and shipped to the data nodes (sc_search_request.knn_floor). */
sc_status sc__search_knn_global_dist(sc_node *n, const struct sc_search_request *sr,
                                     sc_arena *arena, float **floors) SC_MUST_USE;
/* Runs the node's metadata hook (sc_node_set_cluster), if any (node.c). */
void sc__node_meta_changed(sc_node *n, const char *index, const char *meta_json);

#endif
