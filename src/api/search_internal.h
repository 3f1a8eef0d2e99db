/* Private to the _search family of handlers: the parsed search request (body + URL parameters)
 * shared by request parsing (search_parse.c), response writing (search_write.c) and the handlers
 * (api_search.c). */
#ifndef SC_API_SEARCH_INTERNAL_H
#define SC_API_SEARCH_INTERNAL_H

#include <jansson.h>

#include "api/dsl.h"
#include "api/rest.h"
#include "cluster/node.h"
#include "cluster/search.h"
#include "search/agg.h"

/* A search request's options after parsing the body and the URL parameters. */

typedef struct search_parse {
    json_t *body;    /* owned */
    json_t *query;   /* borrowed from body or built from q= */
    json_t *owned_q; /* a query built from URL params */
    int64_t from, size;
    int64_t track_total_hits; /* SC_TRACK_TOTAL_HITS_ALL / _NONE / N (search/searcher.h) */
    bool rest_total_int;
    int64_t timeout_ms;
    bool source;
    json_t *source_filter;  /* borrowed: includes/excludes spec, or NULL */
    const char **dv_fields; /* docvalue_fields + fields names (arena) */
    size_t n_dv_fields;
    const char **src_fields; /* the `fields` names (arena): text ones are read from _source */
    size_t n_src_fields;
    sc_sort_spec *sort; /* field sort (arena); n_sort 0 = relevance order; field kinds are
                           resolved with the targets' mappings (sc__search_resolve_sort) */
    size_t n_sort;
    bool *sort_unmapped_ok;     /* per sort entry: `unmapped_type` given (arena) */
    const json_t *search_after; /* borrowed from the body */
    /* vector search (search_vector.c): kNN clauses and RRF sub-searches ({"query": q} or
     * {"knn": clause}), held by `owned` (json_decref it with owned_q) */
    struct {
        json_t *owned, *knn, *subs;
        bool rrf;
        uint32_t rank_constant, rank_window;
    } vec;
    const json_t *aggs;         /* borrowed: the body's aggs / aggregations, or NULL */
    const json_t *post_filter;  /* borrowed, or NULL */
    bool typed_keys;            /* ?typed_keys */
    sc_agg_spec *agg_spec;     /* parsed aggs (arena; date formats freed by run_fini) */
    sc_agg_result *agg_result; /* the final aggregation result to write (arena) */
} search_parse;

/* Parses a search body (may be NULL) and the URL parameters into sp. `count` restricts the
 * body keys to those of _count. On failure writes a 4xx into resp and returns false; on
 * success the caller json_decref()s sp->owned_q. */
bool sc__search_parse(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, search_parse *sp,
                      bool count);
/* Resolves each field sort's kind from the mappings of list[0..n) (the first index mapping
 * the field decides): numeric types sort by numeric doc values, other mapped types by keyword
 * terms; an unmapped field stays numeric (missing in every doc). */
void sc__search_resolve_sort(search_parse *sp, sc_index *const *list, size_t n);
/* Checks the field sorts against ix's mapping as Elasticsearch does: a text field cannot be
 * sorted on, nor a field ix does not map unless the entry gives `unmapped_type` (its values
 * are then missing). Writes a 400 and returns false on failure. */
bool sc__search_check_sort(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                           sc_index *ix);
/* search_after values -> typed sort keys, encoded with ix's mapping (arena). *out = NULL when
 * there is no search_after. Writes a 400 and returns false on mismatched values. */
bool sc__search_convert_after(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index *ix, sc_sort_key **out);
/* Parses one query object with index ix's mapping (the DSL environment of _search) into *out
 * (arena). SC_EPARSE with err filled, SC_ENOMEM / SC_ELIMIT. */
sc_status sc__search_parse_query(sc_arena *arena, sc_index *ix, const json_t *query,
                                 sc_query **out, sc_dsl_error *err) SC_MUST_USE;
/* Builds the query tree of each of the n indices into out[0..n) (arena). With n == 0 the query
 * is still validated. Writes the DSL error into resp and returns false on failure. */
bool sc__search_build_queries(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                              sc_index **list, size_t n, uint32_t default_k, sc_query **out);
/* Parses `json` (a query, or a kNN clause when knn; knn k defaults to default_k) with ix's
 * mapping into *out (arena); on failure writes the error into resp and returns false. */
bool sc__search_parse_for_index(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix,
                                const json_t *json, bool knn, uint32_t default_k, sc_query **out);

/* Reads `knn`, `rank` and `retriever` of a search body into sp->vec (a retriever may also set
 * sp->query). Writes a 400 into resp and returns false on a bad shape (sp->vec then empty). */
bool sc__search_parse_vector(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                             search_parse *sp);
/* With kNN clauses: ORs them into queries[i] (built from sp->query, or replacing the match_all
 * a missing query gave); with RRF: builds every sub-search per index into *rrf_queries
 * (sub j of index i at [j * n + i], arena) and *n_rrf. 400 into resp and false on error. */
bool sc__search_build_vector(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                             sc_index **list, size_t n, sc_query **queries,
                             sc_query ***rrf_queries, size_t *n_rrf);

/* For a search of top-level kNN clauses without a query (and no RRF): the sum of the
 * clauses' k (cluster/search.h knn_cap); 0 otherwise. */
uint32_t sc__search_knn_cap(const search_parse *sp);

/* Writes the "_shards" member of a search or count response. */
void sc__search_write_shards(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r);
/* Writes the body of one search response (used by _search and each _msearch item; a non-zero
 * status_for_msearch adds "status"). */
void sc__search_write_response(sc_jsonw *w, const sc_search_request *sr,
                               const sc_search_response *r, const search_parse *sp,
                               uint64_t took_ms, int status_for_msearch);
/* Writes Elasticsearch's "all shards failed" search_phase_execution_exception into resp. */
void sc__search_write_all_failed(sc_rest_req *req, sc_rest_resp *resp, const sc_search_request *sr,
                                 const sc_search_response *r);

#endif
