/* Snapshot and restore with `fs` repositories (Elasticsearch's _snapshot API). Repositories are
 * registered in the node metadata (meta_store.h) and must lie under the node's path.repo. A
 * snapshot pins a fresh commit of every shard it covers (sc_shard_commit_pin) and copies the
 * commit's files into the repository's content-addressed blobs, skipping blobs already there,
 * then writes its manifest and a new root generation (repository files: snaprepo.h). Restore
 * rebuilds indices from a manifest, verifying every blob. One repository write (snapshot,
 * delete, restore) runs at a time per node; reads (GET) never wait for a running snapshot.
 * Single node only: a clustered node answers 400. Thread-safe. */
#ifndef SC_CLUSTER_SNAPSHOT_H
#define SC_CLUSTER_SNAPSHOT_H

#include <jansson.h>

#include "base/status.h"
#include "cluster/node.h"
#include "cluster/tasks.h"
#include "cluster/transport.h"

/* PUT _snapshot/{repo}: body {"type":"fs","settings":{"location":...}}. The location (relative:
 * to path.repo) is created when missing. Errors (err): 400 repository_exception (bad type,
 * location outside path.repo or path.repo unset), 400 illegal_argument_exception, 500. */
sc_status sc_snapshot_repo_put(sc_node *n, const char *repo, const json_t *body,
                               sc_cluster_error *err) SC_MUST_USE;
/* GET _snapshot[/{repos}]: {name: {"type","settings"}} for names matching expr (comma list,
 * wildcards, _all; NULL = all). A concrete missing name: 404 repository_missing_exception. */
sc_status sc_snapshot_repo_get(sc_node *n, const char *expr, json_t **out, sc_cluster_error *err)
    SC_MUST_USE;
/* DELETE _snapshot/{repo}: forgets the registration (the files stay). */
sc_status sc_snapshot_repo_delete(sc_node *n, const char *repo, sc_cluster_error *err) SC_MUST_USE;
/* POST _snapshot/{repo}/_verify: writes and removes a file in the location and reads the root.
 * *out {"nodes": {...}}. */
sc_status sc_snapshot_repo_verify(sc_node *n, const char *repo, json_t **out, sc_cluster_error *err)
    SC_MUST_USE;

/* A snapshot being taken: registered IN_PROGRESS by _prepare, copied by _run. */
typedef struct sc_snapshot_job sc_snapshot_job;
/* Checks the request (name, repository, body: indices, ignore_unavailable, partial, metadata)
 * and registers the snapshot as IN_PROGRESS. *out owned (sc_snapshot_job_free). Errors:
 * 400 invalid_snapshot_name_exception (bad or taken name), 404 repository_missing_exception,
 * index resolution errors, 400 for bad bodies. */
sc_status sc_snapshot_prepare(sc_node *n, const char *repo, const char *snap, const json_t *body,
                              sc_snapshot_job **out, sc_cluster_error *err) SC_MUST_USE;
/* Takes the snapshot (task may be NULL; cancelling it fails the snapshot) and returns
 * {"snapshot": {...}} as Elasticsearch's create response (new reference), or NULL with err
 * (repository I/O errors, corrupt root). The snapshot leaves the IN_PROGRESS list either way. */
json_t *sc_snapshot_run(sc_snapshot_job *job, sc_task *task, sc_cluster_error *err);
/* A one-line description ("repo:snap") for task listings. */
const char *sc_snapshot_job_name(const sc_snapshot_job *job);
/* Progress {"files_done","files_total","bytes_copied","blobs_reused"} (new reference). */
json_t *sc_snapshot_job_status(sc_snapshot_job *job);
void sc_snapshot_job_free(sc_snapshot_job *job);

/* GET _snapshot/{repo}/{snaps}: {"snapshots":[...],"total","remaining"} with the running ones
 * IN_PROGRESS. snaps: comma list, wildcards, _all, _current. 404 snapshot_missing_exception for
 * a concrete missing name; 500 repository_exception when a repository file is corrupt. */
sc_status sc_snapshot_get(sc_node *n, const char *repo, const char *snaps, json_t **out,
                          sc_cluster_error *err) SC_MUST_USE;
/* DELETE _snapshot/{repo}/{snaps}: removes the snapshots (waiting for a running snapshot of
 * the node first) and the blobs no other snapshot references. */
sc_status sc_snapshot_delete(sc_node *n, const char *repo, const char *snaps, sc_cluster_error *err)
    SC_MUST_USE;
/* POST _snapshot/{repo}/{snap}/_restore: body indices, ignore_unavailable, rename_pattern,
 * rename_replacement, include_aliases (default true). Creates each index with the snapshot's
 * settings, mappings (and aliases), copying and verifying its shard files, and opens it.
 * Refuses (400 snapshot_restore_exception) to replace an open index; a closed one is replaced.
 * *out {"snapshot":{"snapshot","indices","shards"}}. */
sc_status sc_snapshot_restore(sc_node *n, const char *repo, const char *snap, const json_t *body,
                              json_t **out, sc_cluster_error *err) SC_MUST_USE;

/* Clustered: serves the coordinating node's requests to copy a local primary into the shared
 * repository (snapshot_remote.c) on transport t. */
sc_status sc_snapshot_remote_start(sc_node *n, sc_transport *t) SC_MUST_USE;

#endif
