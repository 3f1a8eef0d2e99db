/* Storing and deleting index templates (see template.h): the shape checks Elasticsearch makes
 * on PUT _index_template / _component_template / _template, the overlap rule between
 * composable templates of one priority, and the in-use rule for component templates. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"
#include "cluster/template.h"

static sc_status invalid(sc_cluster_error *err, int status, const char *type, const char *reason)
{
    sc_cluster_error_set(err, status, type, "%s", reason);
    return status == 404 ? SC_ENOTFOUND : SC_EINVAL;
}

/* Checks that only `allowed` keys appear; the error names the first other one. */
static sc_status known_keys(const json_t *body, const char *what, const char *const *allowed,
                            sc_cluster_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)body, k, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(k, *a) == 0;
        if (!ok) {
            sc_cluster_error_set(err, 400, "x_content_parse_exception", "[%s] unknown field [%s]",
                                 what, k);
            return SC_EINVAL;
        }
    }
    return SC_OK;
}

/* index_patterns as an array of strings (new reference), or NULL when missing or malformed. */
static json_t *patterns_of(const json_t *v)
{
    if (json_is_string(v))
        return json_pack("[s]", json_string_value(v));
    if (!json_is_array(v) || json_array_size(v) == 0)
        return NULL;
    size_t i;
    json_t *p;
    json_array_foreach (v, i, p)
        if (!json_is_string(p) || !json_string_length(p))
            return NULL;
    return json_deep_copy(v);
}

/* Checks {settings?, mappings?, aliases?} and that it makes a valid index. */
static sc_status check_part(const json_t *part, sc_cluster_error *err)
{
    if (!part)
        return SC_OK;
    static const char *const keys[] = {"settings", "mappings", "aliases", "lifecycle", NULL};
    if (!json_is_object(part))
        return invalid(err, 400, "x_content_parse_exception", "[template] must be an object");
    sc_status st = known_keys(part, "template", keys, err);
    for (const char *const *k = keys; st == SC_OK && *k; k++) {
        const json_t *v = json_object_get(part, *k);
        if (v && !json_is_object(v)) {
            sc_cluster_error_set(err, 400, "x_content_parse_exception", "[%s] must be an object",
                                 *k);
            st = SC_EINVAL;
        }
    }
    return st;
}

/* Builds (and drops) an index from composed settings and mappings to validate them. */
static sc_status check_index(sc_node *n, const sc_template_result *r, sc_cluster_error *err)
{
    sc_index *ix = NULL;
    sc_status st = sc__index_build(n, "template-validation", "template-validation", 0, r->settings,
                                   r->mappings, &ix, err);
    sc_index_unref(ix);
    return st;
}

/* Two patterns can match one name: literal prefixes compatible (one a prefix of the other) and,
 * for a literal pattern, the other matches it. */
static bool overlap(const char *a, const char *b)
{
    bool wa = strpbrk(a, "*?") != NULL, wb = strpbrk(b, "*?") != NULL;
    if (!wa && !wb)
        return strcmp(a, b) == 0;
    if (!wa)
        return fnmatch(b, a, 0) == 0;
    if (!wb)
        return fnmatch(a, b, 0) == 0;
    size_t la = strcspn(a, "*?"), lb = strcspn(b, "*?");
    size_t l = la < lb ? la : lb;
    return strncmp(a, b, l) == 0;
}

static sc_status check_overlap(sc_node *n, const char *name, const json_t *patterns,
                               json_int_t prio, sc_cluster_error *err)
{
    json_t *all = sc_meta_list(n, SC_META_INDEX_TEMPLATE);
    const char *k;
    json_t *t;
    sc_status st = SC_OK;
    json_object_foreach (all, k, t) {
        if (!strcmp(k, name) || json_integer_value(json_object_get(t, "priority")) != prio)
            continue;
        const json_t *other = json_object_get(t, "index_patterns");
        size_t i, j;
        json_t *p, *q;
        bool hit = false;
        json_array_foreach (patterns, i, p)
            json_array_foreach (other, j, q)
                hit |= overlap(json_string_value(p), json_string_value(q));
        if (!hit)
            continue;
        char *mine = json_dumps(patterns, JSON_COMPACT);
        char *theirs = json_dumps(other, JSON_COMPACT);
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "index template [%s] has index patterns %s matching patterns from "
                             "existing templates [%s] with patterns (%s => %s) that have the "
                             "same priority [%lld], multiple index templates may not match "
                             "during index creation, please use a different priority",
                             name, mine ? mine : "", k, k, theirs ? theirs : "", (long long)prio);
        free(mine);
        free(theirs);
        st = SC_EINVAL;
        break;
    }
    json_decref(all);
    return st;
}

/* The stored form of an index template body (new reference) after the shape checks. */
static sc_status normalize_index_template(sc_node *n, const char *name, const json_t *body,
                                          json_t **out, sc_cluster_error *err)
{
    static const char *const keys[] = {"index_patterns",
                                       "template",
                                       "composed_of",
                                       "priority",
                                       "version",
                                       "_meta",
                                       "data_stream",
                                       "allow_auto_create",
                                       "ignore_missing_component_templates",
                                       "deprecated",
                                       NULL};
    sc_status st = known_keys(body, "index_template", keys, err);
    if (st != SC_OK)
        return st;
    json_t *patterns = patterns_of(json_object_get(body, "index_patterns"));
    if (!patterns)
        return invalid(err, 400, "action_request_validation_exception",
                       "Validation Failed: 1: index patterns are missing;");
    const json_t *prio = json_object_get(body, "priority");
    const json_t *comp = json_object_get(body, "composed_of");
    const json_t *ds = json_object_get(body, "data_stream");
    if ((prio && (!json_is_integer(prio) || json_integer_value(prio) < 0)) ||
        (comp && !json_is_array(comp)) || (ds && !json_is_object(ds))) {
        json_decref(patterns);
        return invalid(err, 400, "x_content_parse_exception",
                       "[index_template] priority must be a non-negative integer, composed_of "
                       "an array and data_stream an object");
    }
    st = check_part(json_object_get(body, "template"), err);
    json_t *t = json_deep_copy(body);
    json_object_set_new(t, "index_patterns", patterns);
    if (!comp)
        json_object_set_new(t, "composed_of", json_array());
    if (ds) {
        json_t *d = json_object_get(t, "data_stream");
        if (!json_object_get(d, "hidden"))
            json_object_set_new(d, "hidden", json_false());
        if (!json_object_get(d, "allow_custom_routing"))
            json_object_set_new(d, "allow_custom_routing", json_false());
    }
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get(t, "composed_of"), i, c) {
        json_t *ct = st == SC_OK ? sc_meta_get(n, SC_META_COMPONENT_TEMPLATE,
                                               json_is_string(c) ? json_string_value(c) : "")
                                 : json_object();
        if (!ct) {
            sc_cluster_error_set(err, 400, "invalid_index_template_exception",
                                 "index_template [%s] invalid, cause [index template [%s] "
                                 "specifies component templates [%s] that do not exist]",
                                 name, name, json_is_string(c) ? json_string_value(c) : "?");
            st = SC_EINVAL;
        }
        json_decref(ct);
    }
    if (st == SC_OK)
        st = check_overlap(n, name, json_object_get(t, "index_patterns"), json_integer_value(prio),
                           err);
    if (st != SC_OK) {
        json_decref(t);
        return st;
    }
    *out = t;
    return SC_OK;
}

sc_status sc_template_put_index(sc_node *n, const char *name, const json_t *body, bool create_only,
                                sc_cluster_error *err)
{
    if (!json_is_object(body))
        return invalid(err, 400, "parse_exception", "request body is required");
    json_t *t;
    sc_status st = normalize_index_template(n, name, body, &t, err);
    if (st != SC_OK)
        return st;
    if (create_only) {
        json_t *old = sc_meta_get(n, SC_META_INDEX_TEMPLATE, name);
        json_decref(old);
        if (old) {
            json_decref(t);
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "index template [%s] already exists", name);
            return SC_EINVAL;
        }
    }
    /* The composition must make a valid index. */
    sc_template_result r;
    sc_template_compose(n, t, &r);
    st = check_index(n, &r, err);
    sc_template_result_fini(&r);
    if (st == SC_OK)
        st = sc_meta_put(n, SC_META_INDEX_TEMPLATE, name, t);
    json_decref(t);
    return st;
}

sc_status sc_template_put_component(sc_node *n, const char *name, const json_t *body,
                                    bool create_only, sc_cluster_error *err)
{
    static const char *const keys[] = {"template", "version", "_meta", "deprecated", NULL};
    if (!json_is_object(body))
        return invalid(err, 400, "parse_exception", "request body is required");
    sc_status st = known_keys(body, "component_template", keys, err);
    if (st != SC_OK)
        return st;
    const json_t *part = json_object_get(body, "template");
    if (!part)
        return invalid(err, 400, "x_content_parse_exception",
                       "Required [template] for [component_template]");
    st = check_part(part, err);
    if (st != SC_OK)
        return st;
    sc_template_result r = {.settings = sc_settings_nested(json_object_get(part, "settings")),
                            .mappings = json_object()};
    const json_t *m = json_object_get(part, "mappings");
    if (m)
        sc_json_merge(r.mappings, m);
    st = check_index(n, &r, err);
    sc_template_result_fini(&r);
    if (st != SC_OK)
        return st;
    json_t *old = create_only ? sc_meta_get(n, SC_META_COMPONENT_TEMPLATE, name) : NULL;
    if (old) {
        json_decref(old);
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "component template [%s] already exists", name);
        return SC_EINVAL;
    }
    return sc_meta_put(n, SC_META_COMPONENT_TEMPLATE, name, body);
}

sc_status sc_template_put_legacy(sc_node *n, const char *name, const json_t *body,
                                 sc_cluster_error *err)
{
    static const char *const keys[] = {"index_patterns", "template", "order",   "settings",
                                       "mappings",       "aliases",  "version", NULL};
    if (!json_is_object(body))
        return invalid(err, 400, "parse_exception", "request body is required");
    sc_status st = known_keys(body, "template", keys, err);
    if (st != SC_OK)
        return st;
    const json_t *pv = json_object_get(body, "index_patterns");
    json_t *patterns = patterns_of(pv ? pv : json_object_get(body, "template"));
    if (!patterns)
        return invalid(err, 400, "action_request_validation_exception",
                       "Validation Failed: 1: index patterns are missing;");
    json_t *t = json_deep_copy(body);
    json_object_del(t, "template");
    json_object_set_new(t, "index_patterns", patterns);
    if (!json_object_get(t, "order"))
        json_object_set_new(t, "order", json_integer(0));
    json_t *part = json_object();
    const char *parts[] = {"settings", "mappings", "aliases"};
    for (size_t i = 0; i < 3; i++)
        if (json_object_get(t, parts[i]))
            json_object_set(part, parts[i], json_object_get(t, parts[i]));
    st = check_part(part, err);
    if (st == SC_OK) {
        /* Its settings and mappings must make a valid index on their own. */
        sc_template_result r = {.settings = sc_settings_nested(json_object_get(part, "settings")),
                                .mappings = json_object()};
        const json_t *m = json_object_get(part, "mappings");
        if (m)
            sc_json_merge(r.mappings,
                          json_object_size(m) == 1 && json_is_object(json_object_get(m, "_doc"))
                              ? json_object_get(m, "_doc")
                              : m);
        st = check_index(n, &r, err);
        sc_template_result_fini(&r);
    }
    json_decref(part);
    if (st == SC_OK)
        st = sc_meta_put(n, SC_META_LEGACY_TEMPLATE, name, t);
    json_decref(t);
    return st;
}

typedef struct del_ctx {
    sc_meta_kind kind;
    const char *names;
    sc_cluster_error *err;
} del_ctx;

/* Names of index templates (in doc) that use component c, comma-separated into buf. */
static bool component_users(json_t *doc, const char *c, char *buf, size_t cap)
{
    json_t *its = json_object_get(doc, sc_meta_kind_key(SC_META_INDEX_TEMPLATE));
    const char *k;
    json_t *t;
    buf[0] = '\0';
    json_object_foreach (its, k, t) {
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(t, "composed_of"), i, x)
            if (json_is_string(x) && !strcmp(json_string_value(x), c)) {
                size_t used = strlen(buf);
                snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", k);
                break;
            }
    }
    return buf[0] != '\0';
}

static sc_status del_fn(void *vctx, json_t *doc)
{
    del_ctx *c = vctx;
    json_t *map = json_object_get(doc, sc_meta_kind_key(c->kind));
    char buf[512];
    snprintf(buf, sizeof buf, "%s", c->names);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bool wild = strpbrk(tok, "*?") != NULL;
        bool any = false;
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(map, tmp, k, v)
        {
            if (wild ? fnmatch(tok, k, 0) != 0 : strcmp(tok, k) != 0)
                continue;
            char users[256];
            if (c->kind == SC_META_COMPONENT_TEMPLATE &&
                component_users(doc, k, users, sizeof users)) {
                sc_cluster_error_set(c->err, 400, "illegal_argument_exception",
                                     "component templates [%s] cannot be removed as they are "
                                     "still in use by index templates [%s]",
                                     k, users);
                return SC_EINVAL;
            }
            any = true;
            json_object_del(map, k);
        }
        if (!any && !wild) {
            sc_cluster_error_set(c->err, 404, "resource_not_found_exception",
                                 c->kind == SC_META_LEGACY_TEMPLATE
                                     ? "index_template [%s] missing"
                                     : "index_template matching [%s] not found",
                                 tok);
            return SC_ENOTFOUND;
        }
    }
    return SC_OK;
}

sc_status sc_template_delete(sc_node *n, sc_meta_kind kind, const char *names,
                             sc_cluster_error *err)
{
    del_ctx c = {.kind = kind, .names = names, .err = err};
    return sc_meta_change(n, del_fn, &c);
}
