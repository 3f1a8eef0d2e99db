/* GET|POST [/{index}]/_field_caps?fields=a,b*: each mapped field matching the patterns (by
 * full path, `*` wildcards) per type across the target indices, with searchable / aggregatable
 * as Elasticsearch reports them; `indices` on a type entry when not every index has the field
 * with that type, non_searchable_indices / non_aggregatable_indices when they disagree. */
#include <fnmatch.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/node.h"
#include "mapping/mapping.h"

static bool wanted(const json_t *patterns, const char *path)
{
    size_t i;
    const json_t *p;
    json_array_foreach (patterns, i, p)
        if (json_is_string(p) && fnmatch(json_string_value(p), path, 0) == 0)
            return true;
    return false;
}

/* The fields list from ?fields= (comma separated) or the body's `fields` (a string or a list). */
static json_t *field_patterns(sc_rest_req *req, const json_t *body)
{
    json_t *out = json_array();
    const char *q = sc_rest_param_get(req, "fields");
    const json_t *b = body ? json_object_get(body, "fields") : NULL;
    if (q && *q) {
        const char *s = q;
        while (*s) {
            const char *c = strchr(s, ',');
            size_t n = c ? (size_t)(c - s) : strlen(s);
            if (n)
                json_array_append_new(out, json_stringn(s, n));
            s += n + (c ? 1 : 0);
        }
    } else if (json_is_string(b)) {
        json_array_append(out, (json_t *)b);
    } else if (json_is_array(b)) {
        size_t i;
        json_t *x;
        json_array_foreach (b, i, x)
            if (json_is_string(x))
                json_array_append(out, x);
    }
    return out;
}

static void add_name(json_t *entry, const char *key, const char *name)
{
    json_t *a = json_object_get(entry, key);
    if (!a) {
        a = json_array();
        json_object_set_new(entry, key, a);
    }
    json_array_append_new(a, json_string(name));
}

static void add_field(json_t *fields, const sc_mapping_field *f, const char *index)
{
    const char *type = f->type_alias ? f->type_alias : sc_mapping_type_name(f->type);
    bool object = f->type == SC_MAPPING_OBJECT;
    bool searchable = !object && f->index;
    bool aggregatable = !object && f->doc_values && f->type != SC_MAPPING_TEXT;
    json_t *by_type = json_object_get(fields, f->path);
    if (!by_type) {
        by_type = json_object();
        json_object_set_new(fields, f->path, by_type);
    }
    json_t *e = json_object_get(by_type, type);
    if (!e) {
        e = json_pack("{s:s,s:b}", "type", type, "metadata_field", 0);
        json_object_set_new(by_type, type, e);
    }
    add_name(e, "indices", index);
    if (!searchable)
        add_name(e, "non_searchable_indices", index);
    if (!aggregatable)
        add_name(e, "non_aggregatable_indices", index);
}

/* Turns the per-index lists into Elasticsearch's shape: searchable / aggregatable true unless
 * some index says no (then the lists name those), `indices` only when not all have it. */
static void finish(json_t *fields, size_t n_indices)
{
    const char *path, *type;
    json_t *by_type, *e;
    json_object_foreach (fields, path, by_type) {
        json_object_foreach (by_type, type, e) {
            size_t n = json_array_size(json_object_get(e, "indices"));
            size_t ns = json_array_size(json_object_get(e, "non_searchable_indices"));
            size_t na = json_array_size(json_object_get(e, "non_aggregatable_indices"));
            json_object_set_new(e, "searchable", json_boolean(ns == 0));
            json_object_set_new(e, "aggregatable", json_boolean(na == 0));
            if (ns == n)
                json_object_del(e, "non_searchable_indices");
            if (na == n)
                json_object_del(e, "non_aggregatable_indices");
            if (n == n_indices && json_object_size(by_type) == 1)
                json_object_del(e, "indices");
        }
    }
}

void sc_api_field_caps(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    json_t *patterns = field_patterns(req, body);
    if (!json_array_size(patterns)) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: no fields specified;", NULL, 0);
        json_decref(patterns), json_decref(body);
        return;
    }
    sc_index **list = NULL;
    size_t n = 0;
    sc_cluster_error cerr;
    sc_status st = sc_node_resolve(req->node, req->index, &list, &n, &cerr);
    if (st != SC_OK) {
        if (st == SC_ENOTFOUND)
            sc_rest_error_index_not_found(req, resp, cerr.index);
        else
            sc__api_cluster_error(req, resp, &cerr);
        json_decref(patterns), json_decref(body);
        return;
    }
    json_t *fields = json_object(), *indices = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(indices, json_string(list[i]->name));
        sc_mapping *m = sc_index_mapping(list[i]);
        for (size_t k = 1; m && k < sc_mapping_n_fields(m); k++) {
            const sc_mapping_field *f = sc_mapping_field_at(m, (uint32_t)k);
            if (f && f->path && *f->path && wanted(patterns, f->path))
                add_field(fields, f, list[i]->name);
        }
        sc_mapping_unref(m);
    }
    finish(fields, n);
    json_t *out = json_pack("{s:o,s:o}", "indices", indices, "fields", fields);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc__api_json_write(&w, out);
    sc_rest_json_end(req, resp, &w);
    json_decref(out);
    sc_node_release(list, n);
    json_decref(patterns), json_decref(body);
}
