/* The "profile" section of a search response (profile: true; search/profile.h): per searched
 * shard, its query tree with each node's time and per-operation breakdown, the planning time,
 * the collector's time and the aggregations' time, in Elasticsearch's layout (shards[] ->
 * searches[] -> query[] / rewrite_time / collector[], aggregations[]) with scry's operations
 * as the breakdown keys. */
#include <stdio.h>

#include "api/search_internal.h"
#include "search/profile.h"

static void write_node(sc_jsonw *w, const sc_profile_node *n)
{
    static const char *const ops[SC_PROF_COUNT_] = {
        [SC_PROF_NEXT] = "next_doc",           [SC_PROF_ADVANCE] = "advance",
        [SC_PROF_INTO_BITSET] = "into_bitset", [SC_PROF_RUN_END] = "run_end",
        [SC_PROF_NEXT_BATCH] = "next_batch",   [SC_PROF_SCORE] = "score"};
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "type", n->type);
    sc_jsonw_kv_str(w, "description", n->description ? n->description : "");
    sc_jsonw_kv_int(w, "time_in_nanos", (int64_t)sc_profile_node_time_ns(n));
    sc_jsonw_key(w, "breakdown");
    sc_jsonw_obj_begin(w);
    char key[48];
    for (int i = 0; i < SC_PROF_COUNT_; i++) {
        sc_jsonw_kv_int(w, ops[i], (int64_t)n->times_ns[i]);
        snprintf(key, sizeof key, "%s_count", ops[i]);
        sc_jsonw_kv_int(w, key, (int64_t)n->counts[i]);
    }
    sc_jsonw_kv_int(w, "build_scorer", (int64_t)n->build_ns);
    sc_jsonw_kv_int(w, "build_scorer_count", (int64_t)n->n_builds);
    sc_jsonw_obj_end(w);
    if (n->n_children) {
        sc_jsonw_key(w, "children");
        sc_jsonw_arr_begin(w);
        for (size_t i = 0; i < n->n_children; i++)
            write_node(w, &n->children[i]);
        sc_jsonw_arr_end(w);
    }
    sc_jsonw_obj_end(w);
}

void sc__search_write_profile(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r,
                              const search_parse *sp)
{
    sc_jsonw_key(w, "profile");
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "shards");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_profiles; i++) {
        const sc_shard_profile *s = &r->profiles[i];
        const sc_search_profile *p = s->profile;
        const char *ix = sr->indices[s->index_i]->name;
        /* the data node that ran the shard (clustered), else this node */
        const char *node = s->node_id ? s->node_id : sp->node_id ? sp->node_id : "";
        char id[512];
        snprintf(id, sizeof id, "[%s][%s][%u]", node, ix, s->shard);
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "id", id);
        sc_jsonw_kv_str(w, "node_id", node);
        sc_jsonw_kv_str(w, "index", ix);
        sc_jsonw_kv_int(w, "shard_id", s->shard);
        sc_jsonw_key(w, "searches");
        sc_jsonw_arr_begin(w);
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "query");
        sc_jsonw_arr_begin(w);
        if (p->query)
            write_node(w, p->query);
        sc_jsonw_arr_end(w);
        sc_jsonw_kv_int(w, "rewrite_time", (int64_t)p->rewrite_ns);
        sc_jsonw_key(w, "collector");
        sc_jsonw_arr_begin(w);
        if (p->collector) {
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "name", p->collector);
            sc_jsonw_kv_str(w, "reason", "search_top_hits");
            sc_jsonw_kv_int(w, "time_in_nanos", (int64_t)p->collector_ns);
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_arr_end(w);
        sc_jsonw_obj_end(w);
        sc_jsonw_arr_end(w);
        sc_jsonw_key(w, "aggregations");
        sc_jsonw_arr_begin(w);
        if (sp->agg_spec) {
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_str(w, "type", "aggregations");
            sc_jsonw_kv_str(w, "description", "every aggregation of the request, one pass");
            sc_jsonw_kv_int(w, "time_in_nanos", (int64_t)p->aggs_ns);
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_arr_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
    sc_jsonw_obj_end(w);
}
