/* Template endpoints: /_index_template/{name} (composable), /_component_template/{name},
 * /_template/{name} (legacy) with PUT/POST, GET (names and wildcards), HEAD and DELETE, and
 * POST /_index_template/_simulate_index/{index} and /_index_template/_simulate[/{name}]. The
 * templates themselves live in cluster/template.c. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/template.h"

static void put_common(sc_rest_req *req, sc_rest_resp *resp, sc_meta_kind kind)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    bool create = sc_rest_param_bool(req, "create", false);
    sc_cluster_error err;
    sc_status st;
    if (kind == SC_META_INDEX_TEMPLATE)
        st = sc_template_put_index(req->node, req->extra, body, create, &err);
    else if (kind == SC_META_COMPONENT_TEMPLATE)
        st = sc_template_put_component(req->node, req->extra, body, create, &err);
    else
        st = sc_template_put_legacy(req->node, req->extra, body, &err);
    json_decref(body);
    if (st == SC_OK)
        sc_rest_ack(req, resp);
    else if (st == SC_EIO || st == SC_ENOMEM)
        sc_rest_error(req, resp, 500, "exception", "cannot store the template", NULL, 0);
    else
        sc__api_cluster_error(req, resp, &err);
}

void sc_api_index_template_put(sc_rest_req *req, sc_rest_resp *resp)
{
    put_common(req, resp, SC_META_INDEX_TEMPLATE);
}

void sc_api_component_template_put(sc_rest_req *req, sc_rest_resp *resp)
{
    put_common(req, resp, SC_META_COMPONENT_TEMPLATE);
}

void sc_api_legacy_template_put(sc_rest_req *req, sc_rest_resp *resp)
{
    put_common(req, resp, SC_META_LEGACY_TEMPLATE);
}

static bool name_matches(const char *names, const char *name)
{
    if (!names || !*names || !strcmp(names, "*") || !strcmp(names, "_all"))
        return true;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", names);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (fnmatch(t, name, 0) == 0)
            return true;
    return false;
}

static void get_common(sc_rest_req *req, sc_rest_resp *resp, sc_meta_kind kind)
{
    json_t *all = sc_meta_list(req->node, kind);
    json_t *out = kind == SC_META_LEGACY_TEMPLATE ? json_object() : json_array();
    const char *k;
    json_t *t;
    json_object_foreach (all, k, t) {
        if (!name_matches(req->extra, k))
            continue;
        if (kind == SC_META_LEGACY_TEMPLATE)
            json_object_set(out, k, t);
        else
            json_array_append_new(
                out,
                json_pack("{s:s,s:O}", "name", k,
                          kind == SC_META_INDEX_TEMPLATE ? "index_template" : "component_template",
                          t));
    }
    json_decref(all);
    bool concrete = req->extra && !strpbrk(req->extra, "*?,");
    bool empty =
        kind == SC_META_LEGACY_TEMPLATE ? json_object_size(out) == 0 : json_array_size(out) == 0;
    if (concrete && empty) {
        json_decref(out);
        if (kind == SC_META_LEGACY_TEMPLATE) {
            sc_jsonw w;
            sc_rest_json_begin(req, resp, 404, &w);
            sc_jsonw_obj_begin(&w);
            sc_jsonw_obj_end(&w);
            sc_rest_json_end(req, resp, &w);
            return;
        }
        sc_rest_errorf(req, resp, 404, "resource_not_found_exception", "%s matching [%s] not found",
                       kind == SC_META_INDEX_TEMPLATE ? "index template" : "component template",
                       req->extra);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    if (kind == SC_META_LEGACY_TEMPLATE) {
        sc__api_json_write(&w, out);
    } else {
        sc_jsonw_obj_begin(&w);
        sc_jsonw_key(&w,
                     kind == SC_META_INDEX_TEMPLATE ? "index_templates" : "component_templates");
        sc__api_json_write(&w, out);
        sc_jsonw_obj_end(&w);
    }
    sc_rest_json_end(req, resp, &w);
    json_decref(out);
}

void sc_api_index_template_get(sc_rest_req *req, sc_rest_resp *resp)
{
    get_common(req, resp, SC_META_INDEX_TEMPLATE);
}

void sc_api_component_template_get(sc_rest_req *req, sc_rest_resp *resp)
{
    get_common(req, resp, SC_META_COMPONENT_TEMPLATE);
}

void sc_api_legacy_template_get(sc_rest_req *req, sc_rest_resp *resp)
{
    get_common(req, resp, SC_META_LEGACY_TEMPLATE);
}

static void delete_common(sc_rest_req *req, sc_rest_resp *resp, sc_meta_kind kind)
{
    sc_cluster_error err;
    sc_status st = sc_template_delete(req->node, kind, req->extra, &err);
    if (st == SC_OK)
        sc_rest_ack(req, resp);
    else if (st == SC_EIO || st == SC_ENOMEM)
        sc_rest_error(req, resp, 500, "exception", "cannot store the change", NULL, 0);
    else
        sc__api_cluster_error(req, resp, &err);
}

void sc_api_index_template_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    delete_common(req, resp, SC_META_INDEX_TEMPLATE);
}

void sc_api_component_template_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    delete_common(req, resp, SC_META_COMPONENT_TEMPLATE);
}

void sc_api_legacy_template_delete(sc_rest_req *req, sc_rest_resp *resp)
{
    delete_common(req, resp, SC_META_LEGACY_TEMPLATE);
}

/* {"template": {settings, mappings, aliases}, "overlapping": [...]} for a composition. */
static void write_simulation(sc_rest_req *req, sc_rest_resp *resp, sc_template_result *r,
                             const char *index)
{
    json_t *overlapping = json_array();
    if (index) {
        json_t *all = sc_meta_list(req->node, SC_META_INDEX_TEMPLATE);
        const char *k;
        json_t *t;
        json_object_foreach (all, k, t) {
            size_t i;
            json_t *p;
            bool hit = false;
            json_array_foreach (json_object_get(t, "index_patterns"), i, p)
                hit |= json_is_string(p) && fnmatch(json_string_value(p), index, 0) == 0;
            if (hit && strcmp(k, r->name))
                json_array_append_new(overlapping,
                                      json_pack("{s:s,s:O}", "name", k, "index_patterns",
                                                json_object_get(t, "index_patterns")));
        }
        json_decref(all);
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "template");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "settings");
    sc__api_json_write(&w, r->settings);
    sc_jsonw_key(&w, "mappings");
    sc__api_json_write(&w, r->mappings);
    sc_jsonw_key(&w, "aliases");
    sc__api_json_write(&w, r->aliases);
    sc_jsonw_obj_end(&w);
    if (r->data_stream) {
        sc_jsonw_key(&w, "data_stream");
        sc__api_json_write(&w, r->data_stream);
    }
    sc_jsonw_key(&w, "overlapping");
    sc__api_json_write(&w, overlapping);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(overlapping);
}

void sc_api_index_template_simulate_index(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_template_result r;
    if (sc_template_resolve(req->node, req->extra, NULL, &r) != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    if (!r.name[0] && json_array_size(r.legacy_names) == 0) {
        sc_template_result_fini(&r);
        sc_rest_errorf(req, resp, 404, "resource_not_found_exception",
                       "no matching index template found for index [%s]", req->extra);
        return;
    }
    write_simulation(req, resp, &r, req->extra);
    sc_template_result_fini(&r);
}

void sc_api_index_template_simulate(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body = NULL;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    sc_template_result r;
    if (json_is_object(body) && json_object_get(body, "index_patterns")) {
        sc_template_compose(req->node, body, &r);
    } else if (!req->extra || sc_template_resolve(req->node, "", req->extra, &r) != SC_OK) {
        json_decref(body);
        sc_rest_errorf(req, resp, 404, "resource_not_found_exception",
                       "index template matching [%s] not found", req->extra ? req->extra : "");
        return;
    }
    json_decref(body);
    write_simulation(req, resp, &r, NULL);
    sc_template_result_fini(&r);
}
