/* Every REST endpoint's handler, dispatched by the router in src/http/router.c. Each takes the
 * routed request (captures in req->index / req->id / req->extra) and writes the whole response,
 * success or Elasticsearch-shaped error. Thread-safe: handlers share only the node. */
#ifndef SC_API_HANDLERS_H
#define SC_API_HANDLERS_H

#include "api/rest.h"

/* cluster and node information (api_cluster.c) */
void sc_api_root(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cluster_health(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_indices(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_health(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_count(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_shards(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_nodes_stats(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_tasks(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_tasks_cancel(sc_rest_req *req, sc_rest_resp *resp);
/* the cluster view (api_nodes.c, api_state.c) */
void sc_api_cat_nodes(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cluster_state(sc_rest_req *req, sc_rest_resp *resp);
/* _cluster/settings (api_cluster_settings.c) */
void sc_api_cluster_settings_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cluster_settings_put(sc_rest_req *req, sc_rest_resp *resp);

/* index administration (api_index.c) */
void sc_api_index_create(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_get_mapping(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_put_mapping(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_get_settings(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_put_settings(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_refresh(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_flush(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_close(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_open(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_forcemerge(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_stats(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_segments(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_disk_usage(sc_rest_req *req, sc_rest_resp *resp);
/* _analyze (api_analyze.c) */
void sc_api_analyze(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_reload_search_analyzers(sc_rest_req *req, sc_rest_resp *resp);

/* aliases (api_alias.c) */
void sc_api_aliases_update(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_alias_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_alias_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_alias_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_aliases(sc_rest_req *req, sc_rest_resp *resp);

/* templates (api_template.c) */
void sc_api_index_template_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_template_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_template_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_template_simulate_index(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_index_template_simulate(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_component_template_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_component_template_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_component_template_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_legacy_template_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_legacy_template_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_legacy_template_delete(sc_rest_req *req, sc_rest_resp *resp);

/* ingest pipelines (api_ingest.c) */
void sc_api_pipeline_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_pipeline_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_pipeline_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_pipeline_simulate(sc_rest_req *req, sc_rest_resp *resp);

/* data streams (api_datastream.c) */
void sc_api_data_stream_put(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_data_stream_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_data_stream_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_data_stream_stats(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_rollover(sc_rest_req *req, sc_rest_resp *resp);

/* reindex and by-query writes (api_byquery.c) */
void sc_api_reindex(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_delete_by_query(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_update_by_query(sc_rest_req *req, sc_rest_resp *resp);

/* endpoints scry knows but does not implement: 400 naming the feature (api_datastream.c) */
/* Snapshot and restore (api_snapshot.c). */
void sc_api_snapshot_repo(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_snapshot_verify(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_snapshot(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_snapshot_current(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_snapshot_restore(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_cat_snapshots(sc_rest_req *req, sc_rest_resp *resp);

/* documents (api_doc.c, api_bulk.c) */
void sc_api_doc_index(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_doc_create(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_doc_get(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_doc_source(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_doc_delete(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_doc_update(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_mget(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_bulk(sc_rest_req *req, sc_rest_resp *resp);

/* search (api_search.c) */
void sc_api_search(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_count(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_explain(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_validate_query(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_field_caps(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_terms_enum(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_msearch(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_scroll(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_scroll_clear(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_pit_open(sc_rest_req *req, sc_rest_resp *resp);
void sc_api_pit_close(sc_rest_req *req, sc_rest_resp *resp);

#endif
