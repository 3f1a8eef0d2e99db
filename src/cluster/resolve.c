/* Index expressions -> indices (see alias.h and node.h): comma-separated parts, each an index
 * name, an alias name or a wildcard over both, with "-" exclusions. Reached through an alias,
 * an index carries the alias's filter and search routing; all of it is read under the
 * registry mutex, so a concurrent alias swap is seen whole or not at all. */
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/alias.h"
#include "cluster/internal.h"

/* Per-index state while resolving. */
typedef struct pick {
    bool sel;
    bool unfiltered; /* reached by its own name or through an alias without a filter */
    bool all_shards; /* reached without a search routing */
    json_t *filters; /* array of alias filters, or NULL */
    char *routing;   /* malloc'd, comma-separated */
} pick;

static bool usable(const sc_index *ix, unsigned flags)
{
    return (flags & SC_NODE_RESOLVE_CLOSED) || !atomic_load(&ix->closed);
}

/* Hidden indices (index.hidden, e.g. data stream backing indices) are left out of wildcards
 * and _all unless the pattern itself starts with a dot. */
static bool hidden_for(const sc_index *ix, const char *pat, unsigned flags)
{
    if ((pat && pat[0] == '.') || (flags & SC_NODE_RESOLVE_HIDDEN))
        return false;
    const char *h =
        json_string_value(json_object_get(json_object_get(ix->settings_json, "index"), "hidden"));
    return h && !strcmp(h, "true");
}

static void reach_direct(pick *p)
{
    p->sel = true;
    p->unfiltered = true;
    p->all_shards = true;
}

static const char *routing_of(const json_t *props)
{
    return json_string_value(json_object_get(props, "search_routing"));
}

static void reach_alias(pick *p, const json_t *props)
{
    p->sel = true;
    const json_t *f = json_object_get(props, "filter");
    if (f) {
        if (!p->filters)
            p->filters = json_array();
        json_array_append_new(p->filters, json_deep_copy(f));
    } else {
        p->unfiltered = true;
    }
    const char *r = routing_of(props);
    if (!r) {
        p->all_shards = true;
    } else {
        size_t old = p->routing ? strlen(p->routing) : 0;
        char *nr = realloc(p->routing, old + strlen(r) + 2);
        if (nr) {
            if (old)
                nr[old++] = ',';
            strcpy(nr + old, r);
            p->routing = nr;
        }
    }
}

/* Applies one non-wildcard part. Returns SC_OK, SC_ENOTFOUND, SC_ECLOSED or SC_EINVAL (err
 * filled). */
static sc_status apply_name(sc_node *n, const char *pat, bool neg, unsigned flags, pick *picks,
                            sc_cluster_error *err)
{
    size_t total;
    sc_index *const *all = sc__node_list_locked(n, &total);
    sc_index *ix = sc__node_find_locked(n, pat);
    if (ix) {
        size_t pos = 0;
        while (all[pos] != ix)
            pos++;
        if (neg) {
            picks[pos].sel = false;
            return SC_OK;
        }
        if (!usable(ix, flags)) {
            if (err)
                sc_cluster_error_closed(err, ix);
            return SC_ECLOSED;
        }
        reach_direct(&picks[pos]);
        return SC_OK;
    }
    bool found = false;
    if ((flags & SC_NODE_RESOLVE_NO_ALIASES) && !neg && sc__alias_exists_locked(n, pat)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "The provided expression [%s] matches an alias, specify the "
                             "corresponding concrete indices instead.",
                             pat);
        return SC_EINVAL;
    }
    for (size_t i = 0; i < total && !(flags & SC_NODE_RESOLVE_NO_ALIASES); i++) {
        const json_t *props = json_object_get(all[i]->aliases, pat);
        if (!props)
            continue;
        found = true;
        if (neg)
            picks[i].sel = false;
        else if (usable(all[i], flags))
            reach_alias(&picks[i], props);
    }
    if (!found && !neg) {
        sc_cluster_error_not_found(err, pat);
        return SC_ENOTFOUND;
    }
    return SC_OK;
}

/* Applies one wildcard part to index names and to the names of aliases that are not hidden. */
static void apply_pattern(sc_node *n, const char *pat, bool neg, unsigned flags, pick *picks)
{
    size_t total;
    sc_index *const *all = sc__node_list_locked(n, &total);
    for (size_t i = 0; i < total; i++) {
        if (fnmatch(pat, all[i]->name, 0) == 0 && (neg || !hidden_for(all[i], pat, flags))) {
            if (neg)
                picks[i].sel = false;
            else if (usable(all[i], flags))
                reach_direct(&picks[i]);
        }
        if (flags & SC_NODE_RESOLVE_NO_ALIASES)
            continue;
        const char *alias;
        json_t *props;
        json_object_foreach (all[i]->aliases, alias, props) {
            if (json_is_true(json_object_get(props, "is_hidden")) || fnmatch(pat, alias, 0) != 0)
                continue;
            if (neg)
                picks[i].sel = false;
            else if (usable(all[i], flags))
                reach_alias(&picks[i], props);
        }
    }
}

static sc_status apply_expr(sc_node *n, const char *expr, unsigned flags, pick *picks,
                            sc_cluster_error *err)
{
    if (!expr || !*expr || strcmp(expr, "_all") == 0 || strcmp(expr, "*") == 0) {
        size_t total;
        sc_index *const *all = sc__node_list_locked(n, &total);
        for (size_t i = 0; i < total; i++)
            if (usable(all[i], flags) && !hidden_for(all[i], NULL, flags))
                reach_direct(&picks[i]);
        return SC_OK;
    }
    /* a request's expression is mostly one short name: no heap copy for it */
    char stack_copy[256];
    size_t len = strlen(expr);
    char *copy = len < sizeof stack_copy ? memcpy(stack_copy, expr, len + 1) : strdup(expr);
    if (!copy)
        return SC_ENOMEM;
    sc_status st = SC_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && st == SC_OK;
         tok = strtok_r(NULL, ",", &save)) {
        bool neg = tok[0] == '-';
        const char *pat = neg ? tok + 1 : tok;
        if (strcmp(pat, "_all") == 0)
            pat = "*";
        if (strpbrk(pat, "*?"))
            apply_pattern(n, pat, neg, flags, picks);
        else
            st = apply_name(n, pat, neg, flags, picks, err);
    }
    if (copy != stack_copy)
        free(copy);
    return st;
}

/* The filter of one picked index: NULL, the only alias filter, or a disjunction of them. */
static json_t *combined_filter(pick *p)
{
    if (p->unfiltered || !p->filters || json_array_size(p->filters) == 0)
        return NULL;
    if (json_array_size(p->filters) == 1)
        return json_incref(json_array_get(p->filters, 0));
    return json_pack("{s:{s:O,s:i}}", "bool", "should", p->filters, "minimum_should_match", 1);
}

static sc_status collect(pick *picks, sc_index *const *all, size_t total, bool extras,
                         sc_resolved *out)
{
    size_t cnt = 0;
    bool any_routing = false;
    for (size_t i = 0; i < total; i++) {
        cnt += picks[i].sel;
        any_routing |= picks[i].sel && !picks[i].all_shards && picks[i].routing;
    }
    out->list = malloc((cnt ? cnt : 1) * sizeof *out->list);
    if (extras) {
        out->filters = calloc(cnt ? cnt : 1, sizeof *out->filters);
        /* routings stays NULL (readers check) unless an alias routes: one calloc less for
         * nearly every search */
        if (any_routing)
            out->routings = calloc(cnt, sizeof *out->routings);
    }
    if (!out->list || (extras && (!out->filters || (any_routing && !out->routings)))) {
        free(out->list);
        free(out->filters);
        free(out->routings);
        memset(out, 0, sizeof *out);
        return SC_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        if (!picks[i].sel)
            continue;
        sc_index_ref(all[i]);
        if (extras) {
            out->filters[k] = combined_filter(&picks[i]);
            if (!picks[i].all_shards && picks[i].routing) {
                out->routings[k] = picks[i].routing;
                picks[i].routing = NULL;
            }
        }
        out->list[k++] = all[i];
    }
    out->n = cnt;
    return SC_OK;
}

static sc_status resolve(sc_node *n, const char *expr, unsigned flags, bool extras,
                         sc_resolved *out, sc_cluster_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_t *mu = sc__node_mu(n);
    pthread_mutex_lock(mu);
    size_t total;
    sc_index *const *all = sc__node_list_locked(n, &total);
    /* every search resolves its target: a node with a few indices needs no heap for it */
    pick stack_picks[32];
    pick *picks = total <= 32 ? memset(stack_picks, 0, (total ? total : 1) * sizeof *picks)
                              : calloc(total, sizeof *picks);
    sc_status st = picks ? apply_expr(n, expr, flags, picks, err) : SC_ENOMEM;
    if (st == SC_OK)
        st = collect(picks, all, total, extras, out);
    pthread_mutex_unlock(mu);
    for (size_t i = 0; picks && i < total; i++) {
        json_decref(picks[i].filters);
        free(picks[i].routing);
    }
    if (picks != stack_picks)
        free(picks);
    return st;
}

sc_status sc_node_resolve_read(sc_node *n, const char *expr, unsigned flags, sc_resolved *out,
                               sc_cluster_error *err)
{
    return resolve(n, expr, flags, true, out, err);
}

void sc_resolved_fini(sc_resolved *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->filters)
            json_decref(r->filters[i]);
        if (r->routings)
            free(r->routings[i]);
    }
    free(r->filters);
    free(r->routings);
    sc_node_release(r->list, r->n);
    memset(r, 0, sizeof *r);
}

sc_status sc_node_resolve(sc_node *n, const char *expr, sc_index ***out, size_t *n_out,
                          sc_cluster_error *err)
{
    return sc_node_resolve_ex(n, expr, 0, out, n_out, err);
}

sc_status sc_node_resolve_ex(sc_node *n, const char *expr, unsigned flags, sc_index ***out,
                             size_t *n_out, sc_cluster_error *err)
{
    sc_resolved r;
    sc_status st = resolve(n, expr, flags, false, &r, err);
    *out = r.list;
    *n_out = r.n;
    return st;
}
