/* GET/PUT _cluster/settings (cluster/cluster_settings.h): persistent and transient settings,
 * nested by default or flat with flat_settings=true, as Elasticsearch answers them.
 * include_defaults=true adds an empty "defaults" object (scry does not list its defaults). */
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/cluster_settings.h"

static void write_section(sc_rest_req *req, sc_jsonw *w, const char *name, const json_t *flat)
{
    sc_jsonw_key(w, name);
    if (sc_rest_param_bool(req, "flat_settings", false)) {
        sc__api_json_write(w, flat);
        return;
    }
    json_t *nested = sc_settings_nest(flat);
    sc__api_json_write(w, nested);
    json_decref(nested);
}

void sc_api_cluster_settings_get(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *p, *t;
    sc_status st = sc_cluster_settings_get(req->node, &p, &t);
    if (st != SC_OK) {
        sc_rest_errorf(req, resp, 500, "exception", "cannot read the cluster settings: %s",
                       sc_status_str(st));
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    write_section(req, &w, "persistent", p);
    write_section(req, &w, "transient", t);
    if (sc_rest_param_bool(req, "include_defaults", false)) {
        sc_jsonw_key(&w, "defaults");
        sc_jsonw_obj_begin(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(p);
    json_decref(t);
}

void sc_api_cluster_settings_put(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    if (!json_is_object(body)) {
        json_decref(body);
        sc_rest_errorf(req, resp, 400, "action_request_validation_exception",
                       "Validation Failed: 1: no settings to update;");
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach (body, k, v) {
        if (strcmp(k, "persistent") != 0 && strcmp(k, "transient") != 0) {
            sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                           "[cluster_update_settings_request] unknown field [%s]", k);
            json_decref(body);
            return;
        }
    }
    json_t *p = NULL, *t = NULL;
    sc_cluster_error err;
    sc_status st = sc_cluster_settings_update(req->node, json_object_get(body, "persistent"),
                                              json_object_get(body, "transient"), &p, &t, &err);
    json_decref(body);
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &err);
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "acknowledged", true);
    write_section(req, &w, "persistent", p);
    write_section(req, &w, "transient", t);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    json_decref(p);
    json_decref(t);
}
