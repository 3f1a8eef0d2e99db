/* Index templates (see template.h): validation and storage of composable, component and legacy
 * templates in the metadata store, and their composition into a new index's settings, mappings
 * and aliases. */
#include "cluster/template.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/alias.h"
#include "cluster/internal.h"
#include "cluster/log.h"

void sc_json_merge(json_t *dst, const json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)src, k, v) {
        json_t *cur = json_object_get(dst, k);
        if (json_is_object(cur) && json_is_object(v))
            sc_json_merge(cur, v);
        else
            json_object_set_new(dst, k, json_deep_copy(v));
    }
}

/* Sets value at the dotted path under obj, creating objects on the way. */
static void set_path(json_t *obj, const char *path, const json_t *value)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    char *part = strtok_r(buf, ".", &save);
    while (part) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) {
            if (json_is_object(value)) {
                json_t *cur = json_object_get(obj, part);
                if (!json_is_object(cur)) {
                    cur = json_object();
                    if (!cur || json_object_set_new(obj, part, cur) != 0)
                        return;
                }
                sc_json_merge(cur, value);
            } else {
                json_object_set_new(obj, part, json_deep_copy(value));
            }
            return;
        }
        json_t *cur = json_object_get(obj, part);
        if (!json_is_object(cur)) {
            cur = json_object();
            if (!cur || json_object_set_new(obj, part, cur) != 0)
                return;
        }
        obj = cur;
        part = next;
    }
}

json_t *sc_settings_nested(const json_t *settings)
{
    json_t *out = json_object();
    json_t *ix = json_object();
    const char *k;
    json_t *v;
    /* Only the keys of the top level and of an "index" object are paths ("index.a.b",
     * "translog.durability"); the keys inside an object value (analyzer names, ...) are kept
     * whole. */
    json_object_foreach ((json_t *)settings, k, v) {
        if (!strcmp(k, "index") && json_is_object(v)) {
            const char *k2;
            json_t *v2;
            json_object_foreach (v, k2, v2)
                set_path(ix, k2, v2);
            continue;
        }
        set_path(ix, !strncmp(k, "index.", 6) ? k + 6 : k, v);
    }
    json_object_set_new(out, "index", ix);
    return out;
}

/* A mappings object without the ES 6 single-type wrapper. */
static const json_t *unwrap_mappings(const json_t *m)
{
    if (json_object_size(m) == 1 && json_is_object(json_object_get(m, "_doc")))
        return json_object_get(m, "_doc");
    return m;
}

/* Adds a template part ({settings?, mappings?, aliases?}) to the result. */
static void add_part(sc_template_result *r, const json_t *part)
{
    const json_t *s = json_object_get(part, "settings");
    if (json_is_object(s)) {
        json_t *nested = sc_settings_nested(s);
        sc_json_merge(r->settings, nested);
        json_decref(nested);
    }
    const json_t *m = json_object_get(part, "mappings");
    if (json_is_object(m))
        sc_json_merge(r->mappings, unwrap_mappings(m));
    const json_t *a = json_object_get(part, "aliases");
    if (json_is_object(a))
        sc_json_merge(r->aliases, a);
}

static bool patterns_match(const json_t *patterns, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach (patterns, i, p) {
        const char *s = json_string_value(p);
        if (s && fnmatch(s, name, 0) == 0)
            return true;
    }
    return false;
}

/* The composable template matching name with the highest priority (borrowed), or NULL. */
static const json_t *best_template(const json_t *templates, const char *name, const char **tname)
{
    const json_t *best = NULL;
    json_int_t best_prio = -1;
    const char *k;
    json_t *t;
    json_object_foreach ((json_t *)templates, k, t) {
        if (!patterns_match(json_object_get(t, "index_patterns"), name))
            continue;
        json_int_t prio = json_integer_value(json_object_get(t, "priority"));
        if (prio > best_prio) {
            best = t;
            best_prio = prio;
            *tname = k;
        }
    }
    return best;
}

static void compose(sc_node *n, const json_t *t, sc_template_result *r)
{
    json_t *components = sc_meta_list(n, SC_META_COMPONENT_TEMPLATE);
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get(t, "composed_of"), i, c) {
        const json_t *ct = json_object_get(components, json_string_value(c));
        add_part(r, json_object_get(ct, "template"));
    }
    json_decref(components);
    add_part(r, json_object_get(t, "template"));
    const json_t *ds = json_object_get(t, "data_stream");
    if (json_is_object(ds))
        r->data_stream = json_deep_copy(ds);
}

/* Legacy templates matching name, applied by ascending order. */
static void compose_legacy(sc_node *n, const char *name, sc_template_result *r)
{
    json_t *legacy = sc_meta_list(n, SC_META_LEGACY_TEMPLATE);
    const char *k;
    json_t *t;
    json_t *picked = json_array();
    json_object_foreach (legacy, k, t) {
        if (patterns_match(json_object_get(t, "index_patterns"), name))
            json_array_append_new(picked, json_pack("{s:s,s:O}", "name", k, "t", t));
    }
    size_t np = json_array_size(picked);
    for (size_t a = 0; a < np; a++) /* insertion sort by order: few templates */
        for (size_t b = a + 1; b < np; b++) {
            json_int_t oa = json_integer_value(
                json_object_get(json_object_get(json_array_get(picked, a), "t"), "order"));
            json_int_t ob = json_integer_value(
                json_object_get(json_object_get(json_array_get(picked, b), "t"), "order"));
            if (ob < oa) {
                json_t *x = json_incref(json_array_get(picked, a));
                json_array_set(picked, a, json_array_get(picked, b));
                json_array_set_new(picked, b, x);
            }
        }
    for (size_t a = 0; a < np; a++) {
        json_t *e = json_array_get(picked, a);
        add_part(r, json_object_get(e, "t"));
        json_array_append(r->legacy_names, json_object_get(e, "name"));
    }
    json_decref(picked);
    json_decref(legacy);
}

static void result_init(sc_template_result *out)
{
    memset(out, 0, sizeof *out);
    out->settings = json_pack("{s:{}}", "index");
    out->mappings = json_object();
    out->aliases = json_object();
    out->legacy_names = json_array();
}

void sc_template_compose(sc_node *n, const json_t *index_template, sc_template_result *out)
{
    result_init(out);
    compose(n, index_template, out);
}

sc_status sc_template_resolve(sc_node *n, const char *name, const char *template_name,
                              sc_template_result *out)
{
    result_init(out);
    json_t *templates = sc_meta_list(n, SC_META_INDEX_TEMPLATE);
    const char *tname = NULL;
    const json_t *t = template_name ? json_object_get(templates, template_name)
                                    : best_template(templates, name, &tname);
    if (template_name && !t) {
        json_decref(templates);
        sc_template_result_fini(out);
        return SC_ENOTFOUND;
    }
    if (t) {
        snprintf(out->name, sizeof out->name, "%s", template_name ? template_name : tname);
        compose(n, t, out);
    } else {
        compose_legacy(n, name, out);
    }
    json_decref(templates);
    return SC_OK;
}

void sc_template_result_fini(sc_template_result *r)
{
    json_decref(r->settings);
    json_decref(r->mappings);
    json_decref(r->aliases);
    json_decref(r->data_stream);
    json_decref(r->legacy_names);
    memset(r, 0, sizeof *r);
}

/* Creates the index, then adds its aliases (a failure there removes the index again). */
static sc_status create_with_aliases(sc_node *n, const char *name, const json_t *settings,
                                     const json_t *mappings, const json_t *aliases,
                                     sc_cluster_error *err)
{
    sc_status st = sc_node_create_index(n, name, settings, mappings, err);
    size_t na = json_object_size(aliases);
    if (st != SC_OK || !na)
        return st;
    sc_alias_action *acts = calloc(na, sizeof *acts);
    if (!acts)
        st = SC_ENOMEM;
    size_t k = 0;
    const char *alias;
    json_t *props;
    json_object_foreach ((json_t *)aliases, alias, props) {
        if (st != SC_OK)
            break;
        if (!json_is_object(props)) {
            sc_cluster_error_set(err, 400, "parse_exception", "alias [%s] must be an object",
                                 alias);
            st = SC_EINVAL;
            break;
        }
        acts[k++] =
            (sc_alias_action){.op = SC_ALIAS_ADD, .index = name, .alias = alias, .props = props};
    }
    if (st == SC_OK)
        st = sc_node_aliases_update(n, acts, k, err);
    free(acts);
    if (st != SC_OK) {
        sc_cluster_error ignored;
        if (sc_node_delete_index(n, name, &ignored) != SC_OK)
            sc_log(SC_LOG_WARN, "index", "could not remove [%s] after its aliases failed", name);
    }
    return st;
}

sc_status sc_node_create_index_templated(sc_node *n, const char *name, const json_t *settings,
                                         const json_t *mappings, const json_t *aliases,
                                         sc_cluster_error *err)
{
    sc_template_result r;
    if (sc_template_resolve(n, name, NULL, &r) != SC_OK)
        return SC_ENOMEM;
    if (settings) {
        json_t *nested = sc_settings_nested(settings);
        sc_json_merge(r.settings, nested);
        json_decref(nested);
    }
    if (mappings)
        sc_json_merge(r.mappings, unwrap_mappings(mappings));
    if (aliases)
        sc_json_merge(r.aliases, aliases);
    sc_status st = create_with_aliases(n, name, r.settings, r.mappings, r.aliases, err);
    sc_template_result_fini(&r);
    return st;
}
