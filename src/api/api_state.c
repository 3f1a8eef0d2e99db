/* GET _cluster/state[/{metrics}[/{indices}]]: the parts of Elasticsearch's cluster state that
 * clients read — cluster_name, cluster_uuid, master_node, nodes, metadata.indices (settings,
 * mappings, state, primary_terms, in_sync_allocations) and routing_table — from
 * sc_node_cluster_view. Metrics: _all, version, master_node, nodes, metadata, routing_table
 * (comma list); {indices} filters metadata and routing_table by name or `*` patterns. */
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/membership.h"

enum {
    M_VERSION = 1,
    M_MASTER = 2,
    M_NODES = 4,
    M_METADATA = 8,
    M_ROUTING = 16,
    M_ALL = 31
};

static bool parse_metrics(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } k[] = {{"_all", M_ALL},    {"version", M_VERSION},   {"master_node", M_MASTER},
             {"nodes", M_NODES}, {"metadata", M_METADATA}, {"routing_table", M_ROUTING}};
    *out = 0;
    if (!s || !*s) {
        *out = M_ALL;
        return true;
    }
    for (const char *p = s; *p;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < sizeof k / sizeof k[0] &&
               (strlen(k[i].name) != len || strncmp(k[i].name, p, len) != 0))
            i++;
        if (i == sizeof k / sizeof k[0])
            return false;
        *out |= k[i].bit;
        p += len + (p[len] == ',');
    }
    return true;
}

static void write_nodes(sc_jsonw *w, const sc_cluster_view *v)
{
    sc_jsonw_key(w, "nodes");
    sc_jsonw_obj_begin(w);
    for (size_t i = 0; i < v->n_nodes; i++) {
        const sc_member *mb = &v->nodes[i];
        sc_jsonw_key(w, mb->id);
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "name", mb->name);
        sc_jsonw_kv_str(w, "ephemeral_id", mb->id);
        sc_jsonw_kv_str(w, "transport_address", mb->transport[0] ? mb->transport : mb->http);
        sc_jsonw_kv_str(w, "http_address", mb->http);
        sc_jsonw_key(w, "attributes");
        sc_jsonw_obj_begin(w);
        sc_jsonw_obj_end(w);
        sc_jsonw_key(w, "roles");
        sc_jsonw_arr_begin(w);
        sc_jsonw_str(w, "data");
        sc_jsonw_str(w, "ingest");
        sc_jsonw_str(w, "master");
        sc_jsonw_arr_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_obj_end(w);
}

static void write_metadata(sc_jsonw *w, const sc_cluster_view *v, const char *filter)
{
    sc_jsonw_key(w, "metadata");
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "indices");
    sc_jsonw_obj_begin(w);
    const char *name;
    json_t *meta;
    json_object_foreach (v->indices, name, meta) {
        if (!sc__api_name_matches(filter, name))
            continue;
        sc_jsonw_key(w, name);
        sc_jsonw_obj_begin(w);
        const char *state = json_string_value(json_object_get(meta, "state"));
        sc_jsonw_kv_str(w, "state", state && !strcmp(state, "close") ? "close" : "open");
        sc_jsonw_key(w, "settings");
        sc__api_json_write(w, json_object_get(meta, "settings"));
        sc_jsonw_key(w, "mappings");
        sc__api_json_write(w, json_object_get(meta, "mappings"));
        const sc_index_routing *r = sc_routing_table_find(&v->routing, name);
        sc_jsonw_key(w, "primary_terms");
        sc_jsonw_obj_begin(w);
        for (uint32_t s = 0; r && s < r->number_of_shards; s++) {
            char k[16];
            snprintf(k, sizeof k, "%u", s);
            sc_jsonw_kv_int(w, k, r->shards[s].primary_term);
        }
        sc_jsonw_obj_end(w);
        sc_jsonw_key(w, "in_sync_allocations");
        sc_jsonw_obj_begin(w);
        for (uint32_t s = 0; r && s < r->number_of_shards; s++) {
            char k[16];
            snprintf(k, sizeof k, "%u", s);
            sc_jsonw_key(w, k);
            sc_jsonw_arr_begin(w);
            for (size_t i = 0; i < r->shards[s].n_in_sync; i++)
                sc_jsonw_str(w, r->shards[s].in_sync[i].alloc_id);
            sc_jsonw_arr_end(w);
        }
        sc_jsonw_obj_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_obj_end(w);
    sc_jsonw_obj_end(w);
}

static bool in_sync(const sc_shard_routing *sh, const char *id)
{
    for (size_t i = 0; i < sh->n_in_sync; i++)
        if (!strcmp(sh->in_sync[i].alloc_id, id))
            return true;
    return false;
}

/* One shard's copies, then UNASSIGNED entries up to 1 + number_of_replicas. */
static void write_shard(sc_jsonw *w, const sc_index_routing *r, uint32_t s)
{
    const sc_shard_routing *sh = &r->shards[s];
    sc_jsonw_arr_begin(w);
    size_t want = 1 + (size_t)r->number_of_replicas;
    bool has_primary = sh->n_copies && sh->copies[0].primary;
    for (size_t i = 0, k = 0; i < want; i++, k++) {
        while (k < sh->n_copies && sh->copies[k].relocating_from[0])
            k++; /* a relocation target shows as its source's relocating_node */
        const sc_shard_copy *c = k < sh->n_copies ? &sh->copies[k] : NULL;
        const sc_shard_copy *to = c ? sc_shard_relocation_target(sh, c) : NULL;
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "state",
                        !c                         ? "UNASSIGNED"
                        : to                       ? "RELOCATING"
                        : in_sync(sh, c->alloc_id) ? "STARTED"
                                                   : "INITIALIZING");
        sc_jsonw_kv_bool(w, "primary", c ? c->primary : (i == 0 && !has_primary));
        sc_jsonw_key(w, "node");
        if (c)
            sc_jsonw_str(w, c->node);
        else
            sc_jsonw_null(w);
        sc_jsonw_key(w, "relocating_node");
        if (to)
            sc_jsonw_str(w, to->node);
        else
            sc_jsonw_null(w);
        sc_jsonw_kv_int(w, "shard", s);
        sc_jsonw_kv_str(w, "index", r->index);
        if (c) {
            sc_jsonw_key(w, "allocation_id");
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "id", c->alloc_id);
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

static void write_routing(sc_jsonw *w, const sc_cluster_view *v, const char *filter)
{
    sc_jsonw_key(w, "routing_table");
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "indices");
    sc_jsonw_obj_begin(w);
    for (size_t i = 0; i < v->routing.n_indices; i++) {
        const sc_index_routing *r = &v->routing.indices[i];
        if (!sc__api_name_matches(filter, r->index))
            continue;
        sc_jsonw_key(w, r->index);
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "shards");
        sc_jsonw_obj_begin(w);
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            char k[16];
            snprintf(k, sizeof k, "%u", s);
            sc_jsonw_key(w, k);
            write_shard(w, r, s);
        }
        sc_jsonw_obj_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_obj_end(w);
    sc_jsonw_obj_end(w);
}

void sc_api_cluster_state(sc_rest_req *req, sc_rest_resp *resp)
{
    unsigned metrics;
    if (!parse_metrics(req->extra, &metrics)) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "unknown cluster state metric in [%s]", req->extra);
        return;
    }
    sc_cluster_view v;
    if (sc_node_cluster_view(req->node, &v) != SC_OK) {
        sc_rest_errorf(req, resp, 500, "exception", "cannot read the cluster view");
        return;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "cluster_name", v.cluster_name);
    sc_jsonw_kv_str(&w, "cluster_uuid", sc_node_cluster_uuid(req->node));
    if (metrics & M_VERSION) {
        sc_jsonw_kv_int(&w, "version", v.revision);
        sc_jsonw_kv_str(&w, "state_uuid", sc__api_fmt(req, "rev-%lld", (long long)v.revision));
    }
    if (metrics & M_MASTER) {
        sc_jsonw_key(&w, "master_node");
        if (v.master_id[0])
            sc_jsonw_str(&w, v.master_id);
        else
            sc_jsonw_null(&w);
    }
    if (metrics & M_NODES)
        write_nodes(&w, &v);
    if (metrics & M_METADATA)
        write_metadata(&w, &v, req->index);
    if (metrics & M_ROUTING)
        write_routing(&w, &v, req->index);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_cluster_view_fini(&v);
}
