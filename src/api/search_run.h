/* What the search handlers share (api_search.c, api_scroll.c, api_msearch.c): one resolved,
 * parsed and executed search, and the page writer. */
#ifndef SC_API_SEARCH_RUN_H
#define SC_API_SEARCH_RUN_H

#include "api/agg_internal.h"
#include "api/search_internal.h"
#include "cluster/scroll.h"

/* Resolves, parses and runs one search; on success the caller writes the response. Returns
 * false after writing an error into resp. */
typedef struct search_run {
    sc_index **list;
    size_t n;
    json_t **filters; /* per index: the alias filter or NULL (owned; NULL = none) */
    char **routings;  /* per index: the alias search routing or NULL (owned; NULL = none) */
    sc_search_request sr;
    sc_search_response r;
    search_parse sp;
    sc__agg_hook agg; /* the aggregations' collect hook (spec NULL: none) */
    uint64_t t0;
    /* one document's search (_explain): only the shard its routing value hashes to, per index
     * (an id may hold commas and NUL bytes: not a ?routing list); NULL = no such restriction */
    const sc_slice *doc_routing;
} search_run;

/* The scroll a search page belongs to (NULL for plain searches). */
typedef struct scroll_page {
    sc_scroll *ctx; /* acquired context: its indices and pinned snapshots are used */
    bool opening;   /* first page: the context is opened here after resolution */
    bool pit;       /* a point in time: from/size come from the request */
    int64_t keep_alive_ms;
} scroll_page;

/* Resolves index_expr, parses body and runs the search (a count when count; a scroll or point
 * in time page with page). false after writing an error into resp; on true the caller writes the
 * response and calls sc__search_run_fini. */
bool sc__search_run_ex(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                       const json_t *body, bool count, search_run *run, scroll_page *page);
bool sc__search_run_one(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                        const json_t *body, bool count, search_run *run);
/* As sc__search_run_one, searching only the shard of each index that doc_routing (the doc's
 * routing value: its id unless it was indexed with a routing) hashes to. */
bool sc__search_run_doc(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                        const json_t *body, sc_slice doc_routing, search_run *run);
void sc__search_run_fini(search_run *run);
/* Writes a search page; with a scroll, adds _scroll_id and advances the context. */
void sc__search_respond_page(sc_rest_req *req, sc_rest_resp *resp, search_run *run, sc_scroll *ctx);
/* collapse.inner_hits (search_collapse.c): validates the entries (an object or an array;
 * names default to the collapse field and must differ) into sp. 400 and false on bad input. */
bool sc__search_parse_inner_hits(sc_rest_req *req, sc_rest_resp *resp, const json_t *ih,
                                 const char *field, search_parse *sp);
/* Runs each page hit's group searches for sp->collapse_inner over index_expr and keeps
 * their hits in sp->inner_out (freed by sc__search_run_fini). false after writing an error
 * (one group search's error) into resp. */
bool sc__search_expand_collapse(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                                search_run *run);
/* The node that holds a scroll or point in time (api_scroll.c): on a single node, and for a
 * clustered id this node coordinates, true with *local = the registry id (arena). Otherwise the
 * request is forwarded to the coordinating node (its answer written into resp), or a malformed
 * id is answered 400 and an id whose coordinator left the cluster 404: false. */
bool sc__api_ctx_route(sc_rest_req *req, sc_rest_resp *resp, const char *id, const char **local);

#endif
