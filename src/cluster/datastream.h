/* Data streams: a name for a series of hidden backing indices .ds-{name}-{yyyy.MM.dd}-{gen}
 * created from an index template with a data_stream object. The stream's record (generation,
 * backing indices, template) lives in the node-level metadata store; its name resolves like an
 * alias held by every backing index (marked _data_stream, shown by no alias API), so searches
 * cover every backing index and writes go to the newest one (the write index) through the
 * same resolution as everything else (alias.h). Rollover adds a backing index. Thread-safe. */
#ifndef SC_CLUSTER_DATASTREAM_H
#define SC_CLUSTER_DATASTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/node.h"

/* Creates the stream `name` and its first backing index. Errors: 400
 * illegal_argument_exception when no template with data_stream matches, 400
 * resource_already_exists_exception, 400 invalid_index_name_exception. */
sc_status sc_data_stream_create(sc_node *n, const char *name, sc_cluster_error *err) SC_MUST_USE;

/* Deletes streams matching names (comma-separated, wildcards) and their backing indices.
 * SC_ENOTFOUND (index_not_found_exception) for a concrete missing name. */
sc_status sc_data_stream_delete(sc_node *n, const char *names, sc_cluster_error *err) SC_MUST_USE;

/* The records of streams matching names (NULL = all), as GET _data_stream shows them, in a
 * new array. SC_ENOTFOUND for a concrete missing name. */
sc_status sc_data_stream_get(sc_node *n, const char *names, json_t **out, sc_cluster_error *err)
    SC_MUST_USE;

/* Whether `name` is a data stream. */
bool sc_data_stream_exists(sc_node *n, const char *name);

/* Rollover conditions (-1 = not set). */
typedef struct sc_rollover_conditions {
    int64_t max_age_ms;
    int64_t max_docs;
    int64_t max_primary_shard_size_bytes;
    int64_t max_primary_shard_docs;
} sc_rollover_conditions;

/* The outcome of a rollover. old/new index names (new is the would-be name on a dry run or
 * when no condition is met); met is an object {"[max_docs: 5]": true, ...}. */
typedef struct sc_rollover_result {
    char old_index[256];
    char new_index[256];
    bool rolled_over;
    json_t *met; /* owned */
} sc_rollover_result;

/* Rolls the stream over to a new backing index when any condition is met (or there are
 * none), unless dry_run. SC_ENOTFOUND / SC_EINVAL with err. */
sc_status sc_data_stream_rollover(sc_node *n, const char *name, const sc_rollover_conditions *c,
                                  bool dry_run, sc_rollover_result *out, sc_cluster_error *err)
    SC_MUST_USE;

/* Rolls an alias with a write index over to new_index (NULL: the write index's name with its
 * trailing -<number> incremented, 6 digits), created with the templates and the given settings
 * and mappings (may be NULL), which becomes the write index; the old one keeps the alias for
 * reads when it was an explicit write index, else loses it. 400 illegal_argument_exception
 * when alias is not an alias with a write index or the name cannot be derived. */
sc_status sc_alias_rollover(sc_node *n, const char *alias, const char *new_index,
                            const sc_rollover_conditions *c, bool dry_run, const json_t *settings,
                            const json_t *mappings, sc_rollover_result *out, sc_cluster_error *err)
    SC_MUST_USE;

/* Creates what a first write into the missing name `name` needs: a data stream when the
 * matching template has data_stream, else an index with the templates applied. */
sc_status sc_node_autocreate(sc_node *n, const char *name, sc_cluster_error *err) SC_MUST_USE;

#endif
