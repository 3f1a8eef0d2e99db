/* The request router: a static table of (methods, path pattern) -> API handler. Patterns are
 * '/'-separated segments; a segment is a literal ("_search") or a capture ({index}, {id},
 * {extra}). A capture never matches a segment starting with '_' except "_all", so "/_cat"
 * never lands on the index handlers. A path that matches some pattern but not with this
 * method gives 405 (with the allowed methods); no match gives 404. Independent of the socket
 * server so the fuzz target and unit tests can drive it directly. */
#ifndef SC_HTTP_ROUTER_H
#define SC_HTTP_ROUTER_H

#include "api/rest.h"

/* Routes req (method and path set; captures are filled here) and runs the handler, writing the
 * response into resp (which must be initialized). Applies `pretty` and `filter_path` from the
 * query parameters. Always produces a response. Thread-safe (the table is immutable). */
void sc_router_dispatch(sc_rest_req *req, sc_rest_resp *resp);

/* Maps a method string to the enum. */
sc_rest_method sc_router_method(const char *method);

/* Parses a raw query string ("a=1&b") into req->params, percent-decoding into req->arena.
 * Extra parameters past SC_REST_MAX_PARAMS are dropped. */
void sc_router_parse_query(sc_rest_req *req, const char *query, size_t len);

#endif
