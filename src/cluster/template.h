/* Index templates: composable index templates (index_patterns, priority, composed_of,
 * template.settings/mappings/aliases, data_stream), the component templates they are built
 * from, and legacy templates (order, settings, mappings, aliases), kept in the node-level
 * metadata store (meta_store.h). A new index (created explicitly or by a first write) takes the
 * settings, mappings and aliases of the highest-priority composable template whose patterns
 * match its name, or else of every matching legacy template in order; the request's own
 * settings and mappings win over the template's. Thread-safe. */
#ifndef SC_CLUSTER_TEMPLATE_H
#define SC_CLUSTER_TEMPLATE_H

#include <jansson.h>
#include <stdbool.h>

#include "base/status.h"
#include "cluster/meta_store.h"
#include "cluster/node.h"

/* Stores a composable index template (PUT _index_template/{name}); create_only refuses to
 * replace one (400 illegal_argument_exception). Validates the body's shape, that every
 * component it names exists, that its composed settings and mappings make a valid index, and
 * that no other template of the same priority has overlapping patterns. SC_EINVAL with err. */
sc_status sc_template_put_index(sc_node *n, const char *name, const json_t *body, bool create_only,
                                sc_cluster_error *err) SC_MUST_USE;
/* Stores a component template ({"template": {settings?, mappings?, aliases?}}, version, _meta). */
sc_status sc_template_put_component(sc_node *n, const char *name, const json_t *body,
                                    bool create_only, sc_cluster_error *err) SC_MUST_USE;
/* Stores a legacy template (PUT _template/{name}: index_patterns, order, settings, mappings,
 * aliases, version). */
sc_status sc_template_put_legacy(sc_node *n, const char *name, const json_t *body,
                                 sc_cluster_error *err) SC_MUST_USE;
/* Deletes templates of a kind by name or wildcard (comma-separated). SC_ENOTFOUND (404
 * resource_not_found_exception) when a concrete name is absent; a component template still
 * used by an index template is refused (400 illegal_argument_exception). */
sc_status sc_template_delete(sc_node *n, sc_meta_kind kind, const char *names,
                             sc_cluster_error *err) SC_MUST_USE;

/* What templates give a new index. All members owned (json_decref); settings nested as
 * {"index": {...}}, mappings and aliases objects (never NULL after success). */
typedef struct sc_template_result {
    json_t *settings;
    json_t *mappings;
    json_t *aliases;
    json_t *data_stream;  /* the composable template's data_stream object, or NULL */
    char name[256];       /* the composable template that matched ("" when none) */
    json_t *legacy_names; /* array of the legacy templates applied */
} sc_template_result;

/* Composes the templates matching index `name` (nothing matching: empty objects). When
 * `template_name` is not NULL that composable template is used whatever its patterns
 * (_simulate of a stored template). SC_ENOTFOUND when template_name does not exist. */
sc_status sc_template_resolve(sc_node *n, const char *name, const char *template_name,
                              sc_template_result *out) SC_MUST_USE;
void sc_template_result_fini(sc_template_result *r);
/* Composes one composable template body (its components read from the store; missing ones
 * skipped) into *out (initialized here). */
void sc_template_compose(sc_node *n, const json_t *index_template, sc_template_result *out);

/* Creates index `name` with the matching templates applied under the request's settings,
 * mappings and aliases (each may be NULL), as sc_node_create_index does; the aliases are
 * added after (a failure there deletes the new index again). */
sc_status sc_node_create_index_templated(sc_node *n, const char *name, const json_t *settings,
                                         const json_t *mappings, const json_t *aliases,
                                         sc_cluster_error *err) SC_MUST_USE;

/* Settings in the nested form {"index": {...}}: flat "index.a.b" and "a.b" keys expanded,
 * keys without the index. prefix put under index. New reference. */
json_t *sc_settings_nested(const json_t *settings);
/* Deep-merges src into dst (objects recursively, other values replaced). */
void sc_json_merge(json_t *dst, const json_t *src);

#endif
