/* Helpers shared by the document endpoints (api_doc.c) and _bulk (api_bulk.c). */
#ifndef SC_API_DOCS_H
#define SC_API_DOCS_H

#include <jansson.h>

#include "api/rest.h"
#include "base/jsonw.h"
#include "cluster/node.h"
#include "cluster/ops.h"

/* The index for a write: the index `name`, the write index of the alias `name`, or a new
 * index auto-created with defaults when neither exists. *routing (may be NULL) is set to the
 * alias's index_routing (arena) or NULL. New reference or NULL with err filled. */
sc_index *sc__api_index_for_write(sc_rest_req *req, const char *name, const char **routing,
                                  sc_cluster_error *err);
/* The index a single-document operation without auto-creation addresses (an index, or an
 * alias's write index when `write`, its only index otherwise); *routing as above. New
 * reference or NULL with err filled (index_not_found_exception, illegal_argument_exception). */
sc_index *sc__api_index_for_doc(sc_rest_req *req, const char *name, bool write,
                                const char **routing, sc_cluster_error *err);
/* Ingest pipelines on writes (api_ingest.c): pipelines compiled for one request. */
typedef struct sc_pipeline sc_pipeline;
typedef struct sc__api_ingest_cache {
    sc_pipeline **compiled; /* grows; entries live until sc__api_ingest_cache_fini (a running
                             * pipeline may call others through the cache) */
    char **names;
    size_t n, cap;
} sc__api_ingest_cache;
void sc__api_ingest_cache_fini(sc__api_ingest_cache *c);
typedef enum sc__api_ingest_outcome {
    SC_API_INGEST_KEEP,    /* index *source (replaced by the pipelines' output, in the arena) */
    SC_API_INGEST_DROPPED, /* a drop processor ran: write nothing, answer noop */
    SC_API_INGEST_FAILED,  /* err says why (the item fails, not the request) */
} sc__api_ingest_outcome;
/* Runs the pipelines a write into ix goes through: `pipeline` (the request's, or NULL: the
 * index's index.default_pipeline; "_none" = none), then index.final_pipeline. */
sc__api_ingest_outcome sc__api_ingest(sc_rest_req *req, sc__api_ingest_cache *c, sc_index *ix,
                                      const char *pipeline, sc_slice id, sc_slice *source,
                                      sc_cluster_error *err);
/* The rules of writes into a data stream (api_datastream.c): op_type create only and an
 * @timestamp in the document. True when `name` is not a stream or the write follows them;
 * false with err (400) otherwise. */
bool sc__api_data_stream_write_ok(sc_rest_req *req, const char *name, bool create,
                                  sc_slice source, sc_cluster_error *err);
/* A new 20-character auto-generated document id. */
void sc__api_auto_id(char out[24]);
/* The `refresh` URL parameter. */
sc_refresh_policy sc__api_refresh_param(const sc_rest_req *req);
/* wait_for_active_shards and timeout of a write request into w (unset when absent). false
 * (400 written to resp) on a bad value. */
bool sc__api_wait_active_params(sc_rest_req *req, sc_rest_resp *resp, sc_doc_write *w);
/* Writes the members of a write response item ({_index,_id,_version,result,_shards,...} or
 * the error object). */
void sc__api_write_result(sc_jsonw *w, const char *index, sc_slice id, const sc_index *ix,
                          const sc_doc_result *r, bool with_status);
/* Applies an _update body ({doc, doc_as_upsert, upsert}) to one document. */
sc_status sc__api_update(sc_rest_req *req, sc_index *ix, sc_slice id, sc_slice routing,
                         const json_t *body, sc_doc_result *r) SC_MUST_USE;

#endif
