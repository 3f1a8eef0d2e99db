/* Node-level metadata that belongs to no single index: composable and component index
 * templates, legacy templates, ingest pipelines, data streams and snapshot repositories. One
 * JSON document {kind: {name: object}}: on a single node kept in memory and written atomically
 * to DATA/cluster_meta.json on every change; clustered (--cluster), the etcd document
 * /scry/<cluster>/meta, changed by compare-and-swap through any node and read from each node's
 * watched view (docs/cluster.md). Thread-safe. */
#ifndef SC_CLUSTER_META_STORE_H
#define SC_CLUSTER_META_STORE_H

#include <jansson.h>

#include "base/status.h"
#include "cluster/node.h"

typedef enum sc_meta_kind {
    SC_META_INDEX_TEMPLATE,
    SC_META_COMPONENT_TEMPLATE,
    SC_META_LEGACY_TEMPLATE,
    SC_META_PIPELINE,
    SC_META_DATA_STREAM,
    SC_META_REPOSITORY, /* snapshot repositories (snapshot.h) */
    SC_META_N_KINDS
} sc_meta_kind;

/* A deep copy of the object `name` of a kind (owned), or NULL when absent. */
json_t *sc_meta_get(sc_node *n, sc_meta_kind kind, const char *name);
/* A deep copy of every object of a kind: {name: object} (owned; empty object when none). */
json_t *sc_meta_list(sc_node *n, sc_meta_kind kind);

/* A change: receives the whole mutable document ({kind name: {name: object}}) under the lock;
 * returns SC_OK to keep and persist its changes, anything else to drop them all. */
typedef sc_status (*sc_meta_change_fn)(void *ctx, json_t *doc);
/* Runs fn on a copy of the document and, when it returns SC_OK, persists the copy and makes it
 * current. SC_EIO when the file cannot be written (nothing changes). */
sc_status sc_meta_change(sc_node *n, sc_meta_change_fn fn, void *ctx) SC_MUST_USE;
/* The key of a kind in the document ("index_templates", ...). */
const char *sc_meta_kind_key(sc_meta_kind kind);
/* Puts (replacing) or, with value NULL, deletes one object. SC_ENOTFOUND when deleting an
 * absent name; SC_EIO as sc_meta_change. value is deep-copied. */
sc_status sc_meta_put(sc_node *n, sc_meta_kind kind, const char *name, const json_t *value)
    SC_MUST_USE;

/* Clustered: publishes what this node's DATA/cluster_meta.json holds (from a single-node life)
 * to the cluster's document (names the cluster already has keep the cluster's object, with a
 * warning), then renames the file to cluster_meta.json.published so that a later start does
 * not bring back what the cluster deleted. When etcd cannot be written, logs a warning and
 * keeps the file (published at the next start). Blocking; a no-op on a single node or when
 * the file held nothing. */
sc_status sc_meta_publish_local(sc_node *n);

#endif
