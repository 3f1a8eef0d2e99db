/* Alias changes (POST _aliases and the per-index alias endpoints) applied atomically under the
 * registry mutex, and the single-index lookups of document operations through an alias (the
 * write index). Expression resolution is in resolve.c; see alias.h. */
#include "cluster/alias.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"
#include "cluster/log.h"

/* An index whose aliases the request changes: its new alias object (a copy until published). */
typedef struct touched {
    sc_index *ix;
    json_t *aliases;
    bool removed; /* remove_index */
} touched;

typedef struct change {
    sc_node *n;
    touched *t;
    size_t len, cap;
    sc_cluster_error *err;
} change;

json_t *sc__index_aliases_copy(sc_index *ix)
{
    pthread_mutex_lock(ix->alias_mu);
    json_t *copy = json_deep_copy(ix->aliases);
    pthread_mutex_unlock(ix->alias_mu);
    return copy ? copy : json_object();
}

json_t *sc_index_aliases(sc_index *ix)
{
    json_t *all = sc__index_aliases_copy(ix);
    const char *name;
    json_t *props;
    void *tmp;
    /* A data stream's name on its backing indices is not an alias to show. */
    json_object_foreach_safe(all, tmp, name, props)
    {
        if (json_is_true(json_object_get(props, "_data_stream")))
            json_object_del(all, name);
    }
    return all;
}

bool sc_index_stream_write_index(sc_index *ix, char *stream, size_t cap)
{
    json_t *all = sc__index_aliases_copy(ix);
    const char *name;
    json_t *props;
    bool found = false;
    json_object_foreach (all, name, props) {
        if (json_is_true(json_object_get(props, "_data_stream")) &&
            json_is_true(json_object_get(props, "is_write_index"))) {
            snprintf(stream, cap, "%s", name);
            found = true;
            break;
        }
    }
    json_decref(all);
    return found;
}

bool sc__alias_exists_locked(sc_node *n, const char *name)
{
    size_t total;
    sc_index *const *all = sc__node_list_locked(n, &total);
    for (size_t i = 0; i < total; i++)
        if (json_object_get(all[i]->aliases, name))
            return true;
    return false;
}

static touched *touch(change *c, sc_index *ix)
{
    for (size_t i = 0; i < c->len; i++)
        if (c->t[i].ix == ix)
            return &c->t[i];
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        touched *p = realloc(c->t, cap * sizeof *p);
        if (!p)
            return NULL;
        c->t = p;
        c->cap = cap;
    }
    json_t *copy = json_deep_copy(ix->aliases);
    if (!copy)
        return NULL;
    c->t[c->len] = (touched){.ix = ix, .aliases = copy};
    return &c->t[c->len++];
}

static bool is_removed(const change *c, const sc_index *ix)
{
    for (size_t i = 0; i < c->len; i++)
        if (c->t[i].ix == ix)
            return c->t[i].removed;
    return false;
}

/* The indices an action's "index" names (not removed by an earlier action), through fn. */
static sc_status for_indices(change *c, const char *expr,
                             sc_status (*fn)(change *, sc_index *, const sc_alias_action *),
                             const sc_alias_action *a)
{
    size_t total;
    sc_index *const *all = sc__node_list_locked(c->n, &total);
    bool wild = strpbrk(expr, "*?") != NULL || strcmp(expr, "_all") == 0;
    const char *pat = strcmp(expr, "_all") == 0 ? "*" : expr;
    bool any = false;
    for (size_t i = 0; i < total; i++) {
        if (is_removed(c, all[i]))
            continue;
        if (wild ? fnmatch(pat, all[i]->name, 0) != 0 : strcmp(pat, all[i]->name) != 0)
            continue;
        any = true;
        sc_status st = fn(c, all[i], a);
        if (st != SC_OK)
            return st;
    }
    if (!any && !wild) {
        sc_cluster_error_not_found(c->err, expr);
        return SC_ENOTFOUND;
    }
    return SC_OK;
}

/* Copies a routing value (string or number) into props under key. */
static bool routing_value(const json_t *v, json_t *props, const char *key)
{
    if (!v)
        return true;
    if (json_is_string(v))
        json_object_set_new(props, key, json_string(json_string_value(v)));
    else if (json_is_integer(v))
        json_object_set_new(props, key, json_sprintf("%lld", (long long)json_integer_value(v)));
    else
        return false;
    return true;
}

/* The stored properties of an add action. SC_EINVAL (err) for values of the wrong type. */
static sc_status normalize_props(const json_t *in, json_t **out, sc_cluster_error *err)
{
    json_t *p = json_object();
    const json_t *filter = json_object_get(in, "filter");
    if (filter && !json_is_object(filter)) {
        json_decref(p);
        sc_cluster_error_set(err, 400, "parsing_exception", "[filter] must be an object");
        return SC_EINVAL;
    }
    if (filter)
        json_object_set_new(p, "filter", json_deep_copy(filter));
    const json_t *r = json_object_get(in, "routing");
    bool ok = routing_value(r, p, "index_routing") && routing_value(r, p, "search_routing") &&
              routing_value(json_object_get(in, "index_routing"), p, "index_routing") &&
              routing_value(json_object_get(in, "search_routing"), p, "search_routing");
    const char *keys[] = {"is_write_index", "is_hidden", "_data_stream"};
    for (size_t i = 0; ok && i < 3; i++) {
        const json_t *b = json_object_get(in, keys[i]);
        if (b && !json_is_boolean(b))
            ok = false;
        else if (b)
            json_object_set_new(p, keys[i], json_boolean(json_is_true(b)));
    }
    const char *ir = json_string_value(json_object_get(p, "index_routing"));
    if (ok && ir && strchr(ir, ',')) {
        json_decref(p);
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "alias has several index routing values associated with it");
        return SC_EINVAL;
    }
    if (!ok) {
        json_decref(p);
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "invalid alias properties: routing values must be strings or "
                             "numbers, is_write_index and is_hidden booleans");
        return SC_EINVAL;
    }
    *out = p;
    return SC_OK;
}

static sc_status do_add(change *c, sc_index *ix, const sc_alias_action *a)
{
    touched *t = touch(c, ix);
    if (!t)
        return SC_ENOMEM;
    json_t *props;
    sc_status st = normalize_props(a->props, &props, c->err);
    if (st != SC_OK)
        return st;
    json_object_set_new(t->aliases, a->alias, props);
    return SC_OK;
}

static sc_status do_remove(change *c, sc_index *ix, const sc_alias_action *a)
{
    bool wild = strpbrk(a->alias, "*?") != NULL || strcmp(a->alias, "_all") == 0;
    const char *pat = strcmp(a->alias, "_all") == 0 ? "*" : a->alias;
    const char *name;
    json_t *props;
    bool has = false;
    json_object_foreach (ix->aliases, name, props)
        has |= wild ? fnmatch(pat, name, 0) == 0 : strcmp(pat, name) == 0;
    if (!has)
        return SC_OK;
    touched *t = touch(c, ix);
    if (!t)
        return SC_ENOMEM;
    void *tmp;
    json_object_foreach_safe(t->aliases, tmp, name, props)
    {
        if (wild ? fnmatch(pat, name, 0) == 0 : strcmp(pat, name) == 0)
            json_object_del(t->aliases, name);
    }
    return SC_OK;
}

static sc_status do_remove_index(change *c, sc_index *ix, const sc_alias_action *a)
{
    (void)a;
    touched *t = touch(c, ix);
    if (!t)
        return SC_ENOMEM;
    t->removed = true;
    return SC_OK;
}

/* The aliases of ix as they will be after the change. */
static const json_t *aliases_after(const change *c, const sc_index *ix)
{
    for (size_t i = 0; i < c->len; i++)
        if (c->t[i].ix == ix)
            return c->t[i].removed ? NULL : c->t[i].aliases;
    return ix->aliases;
}

/* Checks an alias the request adds: a valid name, no index of that name, one write index. */
static sc_status check_added(change *c, const char *alias)
{
    sc_cluster_error tmp;
    if (!sc_index_name_valid(alias, &tmp)) {
        sc_cluster_error_set(c->err, 400, "invalid_alias_name_exception",
                             "Invalid alias name [%s]: %s", alias, tmp.reason);
        return SC_EINVAL;
    }
    sc_index *same = sc__node_find_locked(c->n, alias);
    if (same && !is_removed(c, same)) {
        sc_cluster_error_set(c->err, 400, "invalid_alias_name_exception",
                             "Invalid alias name [%s]: an index or data stream exists with the "
                             "same name as the alias",
                             alias);
        snprintf(c->err->index, sizeof c->err->index, "%s", alias);
        return SC_EINVAL;
    }
    size_t total, writers = 0;
    sc_index *const *all = sc__node_list_locked(c->n, &total);
    char names[256] = "";
    for (size_t i = 0; i < total; i++) {
        const json_t *props = json_object_get(aliases_after(c, all[i]), alias);
        if (props && json_is_true(json_object_get(props, "is_write_index"))) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", writers ? ", " : "", all[i]->name);
            writers++;
        }
    }
    if (writers > 1) {
        sc_cluster_error_set(c->err, 400, "illegal_state_exception",
                             "alias [%s] has more than one write index [%s]", alias, names);
        return SC_EINVAL;
    }
    return SC_OK;
}

static sc_status run_actions(change *c, const sc_alias_action *acts, size_t n_acts)
{
    for (size_t i = 0; i < n_acts; i++) {
        const sc_alias_action *a = &acts[i];
        sc_status st;
        if (a->op == SC_ALIAS_ADD) {
            st = for_indices(c, a->index, do_add, a);
        } else if (a->op == SC_ALIAS_REMOVE_INDEX) {
            st = for_indices(c, a->index, do_remove_index, a);
        } else {
            size_t before = 0, after = 0;
            size_t total;
            sc_index *const *all = sc__node_list_locked(c->n, &total);
            for (size_t k = 0; k < total; k++)
                before += json_object_size(aliases_after(c, all[k]));
            st = for_indices(c, a->index, do_remove, a);
            for (size_t k = 0; k < total; k++)
                after += json_object_size(aliases_after(c, all[k]));
            if (st == SC_OK && after == before && a->must_exist) {
                sc_cluster_error_set(c->err, 404, "aliases_not_found_exception",
                                     "aliases [%s] missing", a->alias);
                st = SC_ENOTFOUND;
            }
        }
        if (st != SC_OK)
            return st;
    }
    for (size_t i = 0; i < n_acts; i++) {
        if (acts[i].op != SC_ALIAS_ADD)
            continue;
        sc_status st = check_added(c, acts[i].alias);
        if (st != SC_OK)
            return st;
    }
    return SC_OK;
}

sc_status sc_node_aliases_update(sc_node *n, const sc_alias_action *acts, size_t n_acts,
                                 sc_cluster_error *err)
{
    change c = {.n = n, .err = err};
    pthread_mutex_t *mu = sc__node_mu(n);
    /* Changes are applied one at a time so their metadata files are written in order. */
    pthread_mutex_lock(sc__node_alias_write_mu(n));
    pthread_mutex_lock(mu);
    sc_status st = run_actions(&c, acts, n_acts);
    if (st == SC_OK) {
        for (size_t i = 0; i < c.len; i++) {
            touched *t = &c.t[i];
            if (t->removed) {
                sc_index *ix = sc__node_unregister_locked(n, t->ix->name);
                (void)ix; /* the reference now held by t->ix */
                continue;
            }
            json_t *old = t->ix->aliases;
            t->ix->aliases = t->aliases;
            t->aliases = old;
            sc_index_ref(t->ix);
        }
    }
    pthread_mutex_unlock(mu);
    for (size_t i = 0; i < c.len; i++) {
        json_decref(c.t[i].aliases);
        if (st != SC_OK)
            continue;
        if (c.t[i].removed) {
            sc__index_forget(c.t[i].ix);
        } else {
            sc__index_persist_meta(c.t[i].ix);
            sc_index_unref(c.t[i].ix);
        }
    }
    pthread_mutex_unlock(sc__node_alias_write_mu(n));
    free(c.t);
    return st;
}

/* Picks the index of a document operation among those holding the alias (caller holds mu). */
static sc_status pick_alias_target(sc_node *n, const char *name, bool write, sc_index **out,
                                   const json_t **props_out, sc_cluster_error *err)
{
    size_t total, holders = 0;
    sc_index *const *all = sc__node_list_locked(n, &total);
    sc_index *only = NULL, *writer = NULL;
    const json_t *only_props = NULL, *writer_props = NULL;
    char names[256] = "";
    for (size_t i = 0; i < total; i++) {
        const json_t *props = json_object_get(all[i]->aliases, name);
        if (!props)
            continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", holders ? ", " : "", all[i]->name);
        holders++;
        only = all[i];
        only_props = props;
        if (json_is_true(json_object_get(props, "is_write_index"))) {
            writer = all[i];
            writer_props = props;
        }
    }
    if (!holders) {
        sc_cluster_error_not_found(err, name);
        return SC_ENOTFOUND;
    }
    if (write && !writer && holders == 1 &&
        !json_is_false(json_object_get(only_props, "is_write_index"))) {
        writer = only;
        writer_props = only_props;
    }
    if (write && !writer) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "no write index is defined for alias [%s]. The write index may be "
                             "explicitly disabled using is_write_index=false or the alias points "
                             "to multiple indices without one being designated as a write index",
                             name);
        return SC_EINVAL;
    }
    if (!write && holders > 1) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "alias [%s] has more than one index associated with it [%s], can't "
                             "execute a single index op",
                             name, names);
        return SC_EINVAL;
    }
    *out = write ? writer : only;
    *props_out = write ? writer_props : only_props;
    return SC_OK;
}

sc_status sc_node_index_for_doc(sc_node *n, const char *name, bool write, sc_arena *arena,
                                sc_index **out, const char **routing, sc_cluster_error *err)
{
    *out = NULL;
    *routing = NULL;
    pthread_mutex_t *mu = sc__node_mu(n);
    pthread_mutex_lock(mu);
    sc_index *ix = sc__node_find_locked(n, name);
    sc_status st = SC_OK;
    const json_t *props = NULL;
    if (!ix)
        st = pick_alias_target(n, name, write, &ix, &props, err);
    if (st == SC_OK) {
        sc_index_ref(ix);
        const char *r = json_string_value(json_object_get(props, "index_routing"));
        if (r)
            *routing = sc_arena_strndup(arena, r, strlen(r));
        *out = ix;
    }
    pthread_mutex_unlock(mu);
    return st;
}
