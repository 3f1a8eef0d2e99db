/* Private to the snapshot files of src/cluster (snapshot.c, snapshot_restore.c): the node's
 * snapshot state and helpers both use. */
#ifndef SC_CLUSTER_SNAP_INTERNAL_H
#define SC_CLUSTER_SNAP_INTERNAL_H

#include <jansson.h>
#include <pthread.h>

#include "cluster/node.h"
#include "cluster/snapshot.h"

struct sc__snaps {
    pthread_mutex_t write_mu; /* one repository write (snapshot, delete, restore) at a time */
    pthread_mutex_t mu;       /* `running` and reads/writes of repository roots */
    char *path_repo;          /* realpath of path.repo, or NULL (no repository allowed) */
    sc_snapshot_job *running; /* IN_PROGRESS snapshots */
};

/* false with a 400 when the node is part of a cluster. */
bool sc__snap_single_node(sc_node *n, sc_cluster_error *err);
/* The location folder of a registered repository. 404 repository_missing_exception. */
sc_status sc__snap_repo_location(sc_node *n, const char *repo, char loc[4096],
                                 sc_cluster_error *err) SC_MUST_USE;
/* Reads the root, with a 500 repository_exception naming the bad file. */
sc_status sc__snap_root_read(sc_node *n, const char *repo, const char *loc, json_t **root,
                             uint64_t *gen, sc_cluster_error *err) SC_MUST_USE;
/* The body's "indices" (string or array of strings) as one comma expression in out. */
bool sc__snap_indices_expr(const json_t *v, char *out, size_t cap, sc_cluster_error *err);
/* Elasticsearch's snapshot info object for a root summary (new reference). */
json_t *sc__snap_info(const char *repo, const json_t *sum);

#endif
