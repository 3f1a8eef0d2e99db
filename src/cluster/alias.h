/* Aliases and index expressions: an alias is a second name for one or more indices, kept (as in
 * Elasticsearch) in each index's metadata with its optional filter, routing, write-index and
 * hidden flags. This module changes aliases atomically (POST _aliases) and resolves every name
 * a request carries, index or alias, concrete or wildcard, to indices: for reads (searches see
 * the alias filters and search routing) and for single-document operations (the write index).
 * Thread-safe: aliases change and are read under the node's registry mutex, so a search
 * resolves either the state before an alias swap or the state after it, never a mix. */
#ifndef SC_CLUSTER_ALIAS_H
#define SC_CLUSTER_ALIAS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"
#include "base/status.h"
#include "cluster/node.h"

typedef enum sc_alias_op {
    SC_ALIAS_ADD,
    SC_ALIAS_REMOVE,
    SC_ALIAS_REMOVE_INDEX,
} sc_alias_op;

/* One action of POST _aliases. */
typedef struct sc_alias_action {
    sc_alias_op op;
    const char *index; /* index name or wildcard pattern (not an alias) */
    const char *alias; /* add: alias name; remove: name or wildcard pattern; remove_index: NULL */
    /* add: the action object as sent; read keys: filter (object), routing, index_routing,
     * search_routing (string or number), is_write_index, is_hidden (booleans); _data_stream
     * (boolean) marks a data stream's name on its backing indices (datastream.c only). */
    const json_t *props;
    bool must_exist; /* remove: a missing alias is aliases_not_found_exception (404) */
} sc_alias_action;

/* Applies the actions in order as one change: either all take effect (published at once and
 * persisted in every touched index's metadata; remove_index deletes the index) or none does
 * and err says why (index_not_found_exception 404, aliases_not_found_exception 404,
 * invalid_alias_name_exception 400, illegal_argument_exception 400 for bad properties or two
 * write indices). Status SC_OK, SC_ENOTFOUND, SC_EINVAL, SC_ENOMEM. */
sc_status sc_node_aliases_update(sc_node *n, const sc_alias_action *acts, size_t n_acts,
                                 sc_cluster_error *err) SC_MUST_USE;

/* A deep copy of the aliases of ix ({name: properties}; a data stream's name on its backing
 * indices left out); owned, json_decref. Never NULL unless out of memory. */
json_t *sc_index_aliases(sc_index *ix);

/* Whether ix is the write (newest backing) index of a data stream, whose name goes to stream
 * (cap bytes). */
bool sc_index_stream_write_index(sc_index *ix, char *stream, size_t cap);

/* The result of resolving an index expression for a read: indices (new references, sorted by
 * name) and, per index, the alias filter to apply (a query JSON, NULL when some part of the
 * expression named the index itself or an alias without a filter) and the search routing
 * (comma-separated, NULL = every shard; routings itself is NULL when no index has one). Owned:
 * release with sc_resolved_fini. */
typedef struct sc_resolved {
    sc_index **list;
    size_t n;
    json_t **filters;
    char **routings;
} sc_resolved;

/* Resolves an index expression ("a", "a,b", "logs-*", "_all", "*", "-x" exclusions; each part
 * an index or an alias name) as sc_node_resolve_ex does, filling the alias filters and routing.
 * Hidden aliases are not matched by wildcards. */
sc_status sc_node_resolve_read(sc_node *n, const char *expr, unsigned flags, sc_resolved *out,
                               sc_cluster_error *err) SC_MUST_USE;
void sc_resolved_fini(sc_resolved *r);

/* The one index a single-document operation on `name` addresses (new reference in *out):
 * the index itself, or for an alias its write index (write) or its only index (read). The
 * alias's index_routing, if any, is copied into the arena as *routing (else NULL).
 * SC_ENOTFOUND when no index or alias has that name (err: index_not_found_exception);
 * SC_EINVAL (400 illegal_argument_exception) for an alias without a write index, or a read
 * through an alias of several indices. */
sc_status sc_node_index_for_doc(sc_node *n, const char *name, bool write, sc_arena *arena,
                                sc_index **out, const char **routing, sc_cluster_error *err)
    SC_MUST_USE;

#endif
