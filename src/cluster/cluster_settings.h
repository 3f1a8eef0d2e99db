/* Cluster settings (GET/PUT _cluster/settings): two flat maps "a.b.c" -> value, persistent and
 * transient. Clustered, both live in etcd under /scry/<cluster>/settings (one JSON document,
 * updated by compare-and-swap on its mod_revision); on a single node, in
 * DATA/cluster_settings.json, where transient settings are forgotten when the node restarts (as
 * Elasticsearch forgets them on a full-cluster restart; in etcd they persist). Values are kept
 * as Elasticsearch reports them: strings (numbers and booleans converted), or arrays of
 * strings. Unknown names are accepted and stored (clients set many settings scry ignores). */
#ifndef SC_CLUSTER_CLUSTER_SETTINGS_H
#define SC_CLUSTER_CLUSTER_SETTINGS_H

#include <jansson.h>

#include "base/status.h"
#include "cluster/node.h"

/* The current settings: *persistent and *transient are new flat objects (json_decref). */
sc_status sc_cluster_settings_get(sc_node *n, json_t **persistent, json_t **transient) SC_MUST_USE;

/* Applies updates (objects, nested or flat; a null value removes the setting; either may be
 * NULL). *applied_persistent / *applied_transient get the normalized flat updates (new
 * references). SC_EINVAL with err (illegal_argument_exception) on a value that is an object
 * after flattening or not a scalar/array of scalars; SC_EIO / SC_ECONFLICT when storage fails.
 * Thread-safe; concurrent updates do not lose each other's keys. */
sc_status sc_cluster_settings_update(sc_node *n, const json_t *persistent, const json_t *transient,
                                     json_t **applied_persistent, json_t **applied_transient,
                                     sc_cluster_error *err) SC_MUST_USE;

/* Flattens a settings object ({"a":{"b":1}} or {"a.b":1}) into flat "a.b" -> string value
 * (null kept as null) added to flat. SC_EINVAL (err) on an unsupported value. */
sc_status sc_settings_flatten(const json_t *in, json_t *flat, sc_cluster_error *err) SC_MUST_USE;

/* The nested form of a flat map (new reference), as GET shows it without flat_settings. */
json_t *sc_settings_nest(const json_t *flat);

#endif
