/* Rollover of an alias with a write index (see datastream.h): a new index named after the
 * write index's trailing number (or as given), created with the templates and the request's
 * settings and mappings, becomes the alias's write index. Data streams roll over in
 * datastream.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/alias.h"
#include "cluster/datastream.h"
#include "cluster/internal.h"
#include "cluster/template.h"

/* "logs-000007" -> "logs-000008"; false when the name does not end in -<digits>. */
static bool next_name(const char *old, char *out, size_t cap)
{
    const char *dash = strrchr(old, '-');
    if (!dash || !dash[1])
        return false;
    for (const char *p = dash + 1; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    long long n = strtoll(dash + 1, NULL, 10);
    snprintf(out, cap, "%.*s-%06lld", (int)(dash - old), old, n + 1);
    return true;
}

/* Moves the alias to the new index as its write index. */
static sc_status move_alias(sc_node *n, const char *alias, sc_index *old, const char *new_index,
                            sc_cluster_error *err)
{
    json_t *all = sc_index_aliases(old);
    json_t *props = json_object_get(all, alias);
    bool explicit_writer = json_is_true(json_object_get(props, "is_write_index"));
    json_t *now = json_pack("{s:b}", "is_write_index", 1);
    if (json_is_true(json_object_get(props, "is_hidden")))
        json_object_set_new(now, "is_hidden", json_true());
    json_t *before = json_deep_copy(props);
    json_object_set_new(before, "is_write_index", json_false());
    sc_alias_action acts[2] = {
        {.op = SC_ALIAS_ADD, .index = new_index, .alias = alias, .props = now},
        {.op = explicit_writer ? SC_ALIAS_ADD : SC_ALIAS_REMOVE,
         .index = old->name,
         .alias = alias,
         .props = before,
         .must_exist = true},
    };
    sc_status st = sc_node_aliases_update(n, acts, 2, err);
    json_decref(now);
    json_decref(before);
    json_decref(all);
    return st;
}

sc_status sc_alias_rollover(sc_node *n, const char *alias, const char *new_index,
                            const sc_rollover_conditions *c, bool dry_run, const json_t *settings,
                            const json_t *mappings, sc_rollover_result *out, sc_cluster_error *err)
{
    memset(out, 0, sizeof *out);
    out->met = json_object();
    sc_index *concrete = sc_node_index(n, alias);
    sc_index_unref(concrete);
    sc_index *old = NULL;
    const char *routing;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_status st =
        concrete ? SC_EINVAL : sc_node_index_for_doc(n, alias, true, &a, &old, &routing, err);
    sc_arena_fini(&a);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "rollover target [%s] must be a data stream or an alias with a "
                             "write index",
                             alias);
        return SC_EINVAL;
    }
    snprintf(out->old_index, sizeof out->old_index, "%s", old->name);
    if (new_index)
        snprintf(out->new_index, sizeof out->new_index, "%s", new_index);
    else if (!next_name(old->name, out->new_index, sizeof out->new_index)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "index name [%s] does not match pattern '^.*-\\d+$'", old->name);
        sc_index_unref(old);
        return SC_EINVAL;
    }
    bool go = sc__rollover_conditions_met(old, c, out->met);
    if (go && !dry_run) {
        st = sc_node_create_index_templated(n, out->new_index, settings, mappings, NULL, err);
        if (st == SC_OK)
            st = move_alias(n, alias, old, out->new_index, err);
        out->rolled_over = st == SC_OK;
    }
    sc_index_unref(old);
    return st;
}
