/* sc_node_cluster_view: the one place the APIs get the cluster from (membership.h). Clustered,
 * it is the membership's watched view; single-node, a cluster of one made of the local node,
 * its indices and a one-node allocation, so _cat/nodes, _cluster/state and _cluster/health read
 * the same structures either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"
#include "cluster/membership_internal.h"

/* Fills mb with the local node. */
static void local_member(sc_node *n, sc_member *mb)
{
    memset(mb, 0, sizeof *mb);
    snprintf(mb->id, sizeof mb->id, "%s", sc_node_id(n));
    snprintf(mb->name, sizeof mb->name, "%s", sc_node_name(n));
    snprintf(mb->http, sizeof mb->http, "127.0.0.1");
    mb->started_ms = sc_node_start_ms(n);
    sc__os_stats(n, mb);
}

static sc_status single_node_view(sc_node *n, sc_cluster_view *out)
{
    snprintf(out->cluster_name, sizeof out->cluster_name, "%s", sc_node_cluster_name(n));
    snprintf(out->local_id, sizeof out->local_id, "%s", sc_node_id(n));
    snprintf(out->master_id, sizeof out->master_id, "%s", sc_node_id(n));
    out->master_term = 1;
    out->connected = out->synced = true;
    out->nodes = calloc(1, sizeof *out->nodes);
    out->indices = json_object();
    sc_index **list = NULL;
    size_t n_ix = 0;
    sc_status st = out->nodes && out->indices ? sc__node_all(n, &list, &n_ix) : SC_ENOMEM;
    if (st != SC_OK)
        return st;
    local_member(n, &out->nodes[0]);
    out->n_nodes = 1;
    sc_alloc_index *ai = calloc(n_ix + 1, sizeof *ai);
    if (!ai) {
        sc_node_release(list, n_ix);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n_ix; i++) {
        json_object_set_new(out->indices, list[i]->name, sc__index_meta_json(list[i]));
        ai[i] = (sc_alloc_index){list[i]->name, list[i]->settings.number_of_shards,
                                 list[i]->settings.number_of_replicas};
    }
    const char *self = sc_node_id(n);
    uint64_t rng = 1; /* fixed: the same allocation ids on every call */
    st = sc_allocation_compute(&self, 1, ai, n_ix, NULL, NULL, &rng, &out->routing);
    free(ai);
    sc_node_release(list, n_ix);
    return st;
}

sc_status sc_node_cluster_view(sc_node *n, sc_cluster_view *out)
{
    sc_membership *m = sc_node_cluster(n);
    if (!m) {
        memset(out, 0, sizeof *out);
        sc_status st = single_node_view(n, out);
        if (st != SC_OK)
            sc_cluster_view_fini(out);
        return st;
    }
    sc_status st = sc_membership_view(m, out);
    if (st != SC_OK)
        return st;
    for (size_t i = 0; i < out->n_nodes; i++)
        if (!strcmp(out->nodes[i].id, out->local_id)) {
            sc_member fresh = out->nodes[i];
            sc_membership_local_stats(m, &fresh);
            out->nodes[i] = fresh;
        }
    return SC_OK;
}
