/* Private to the snapshot files of src/cluster (snapshot.c, snapshot_repo.c,
 * snapshot_restore.c): the node's snapshot state and the helpers they share. */
#ifndef SC_CLUSTER_SNAP_INTERNAL_H
#define SC_CLUSTER_SNAP_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster/node.h"
#include "cluster/placement.h"
#include "cluster/snapshot.h"

struct sc__snaps {
    pthread_mutex_t write_mu; /* one repository write (snapshot, delete, restore) at a time */
    pthread_mutex_t mu;       /* `running` and reads/writes of repository roots */
    char *path_repo;          /* realpath of path.repo, or NULL (no repository allowed) */
    sc_snapshot_job *running; /* IN_PROGRESS snapshots */
};

typedef struct sc__snaps sc__snaps;

/* A snapshot being taken (snapshot.c); repo, name and next are read under sc__snaps.mu. */
struct sc_snapshot_job {
    sc_node *node;
    sc__snaps *s;
    char repo[256];
    char name[256];
    char uuid[24];
    char loc[4096];
    char desc[520];
    int64_t start_ms;
    sc_index **indices;
    size_t n_indices;
    bool partial;
    bool registered;
    json_t *metadata;
    _Atomic uint64_t files_done, files_total, bytes_copied, blobs_reused;
    uint8_t touched[256]; /* blob folders with new blobs, synced before the manifest */
    sc_snapshot_job *next;
};

/* Copies shard sh's commit (pinned under the job's uuid) into the repository's blobs; fills
 * shard_json's "files" and "n_docs". *why on failure (static text). task may be NULL. */
sc_status sc__snap_shard_copy(sc_snapshot_job *j, sc_shard *sh, json_t *shard_json, sc_task *task,
                              const char **why) SC_MUST_USE;
/* Clustered: has the node at loc copy shard `shard` of `index` (snapshot_remote.c) and fills
 * shard_json as sc__snap_shard_copy does. On failure why (cap bytes) says why. */
sc_status sc__snap_shard_remote(sc_snapshot_job *j, const sc_shard_location *loc, const char *index,
                                uint32_t shard, json_t *shard_json, char *why, size_t cap)
    SC_MUST_USE;
/* Clustered restore: fills the shard folders of ix, being created from the cluster's metadata,
 * from the snapshot its metadata names ({"repository", "snapshot_uuid", "index"}), before its
 * shards open. */
sc_status sc__snap_restore_dirs(sc_node *n, const json_t *restore, sc_index *ix,
                                sc_cluster_error *err) SC_MUST_USE;
/* The location folder of a registered repository. 404 repository_missing_exception. */
sc_status sc__snap_repo_location(sc_node *n, const char *repo, char loc[4096],
                                 sc_cluster_error *err) SC_MUST_USE;
/* Reads the root, with a 500 repository_exception naming the bad file. */
sc_status sc__snap_root_read(sc_node *n, const char *repo, const char *loc, json_t **root,
                             uint64_t *gen, sc_cluster_error *err) SC_MUST_USE;
/* The body's "indices" (string or array of strings) as one comma expression in out. */
bool sc__snap_indices_expr(const json_t *v, char *out, size_t cap, sc_cluster_error *err);
/* Whether name matches one of the comma-separated names / fnmatch patterns of expr (NULL, ""
 * and "_all" match all). */
bool sc__snap_expr_matches(const char *expr, const char *name);
/* The first plain name (no wildcard, not _all / _current) of expr missing from `names` (an
 * object's keys, or an array of strings or of objects with "snapshot"), copied into out; false
 * when none is missing. */
bool sc__snap_missing_name(const char *expr, const json_t *names, char *out, size_t cap);
/* Elasticsearch's snapshot info object for a root summary (new reference). */
json_t *sc__snap_info(const char *repo, const json_t *sum);

#endif
