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

/* Parses a raw query string ("a=1&b") into req->params, percent-decoding into req->arena
 * ('+' is a space). Extra parameters past SC_REST_MAX_PARAMS are dropped. A key or value that
 * decodes to bytes holding NUL is not added: it sets req->reject, so dispatch answers 400. */
void sc_router_parse_query(sc_rest_req *req, const char *query, size_t len);

/* Adds one parameter given still percent-encoded (key_len / value_len bytes; value may be NULL
 * for a key without '='), with the rules of sc_router_parse_query. */
void sc_router_add_param(sc_rest_req *req, const char *key, size_t key_len, const char *value,
                         size_t value_len);

/* Percent-decodes s[0..len) into a NUL-terminated arena copy; *out_len is the decoded length,
 * which is the truth: the result may hold NUL bytes (from "%00"). A '%' not followed by two hex
 * digits is kept as is; '+' becomes a space only when plus_is_space (query strings, not paths).
 * NULL when the arena is over budget. O(len). */
char *sc_router_decode(sc_arena *a, const char *s, size_t len, bool plus_is_space, size_t *out_len);

/* Makes dispatch refuse req with 400: "<what> [<s, NUL shown as \u0000>] contains a NUL byte".
 * Keeps the first reason when called again. */
void sc_router_reject(sc_rest_req *req, const char *what, const char *s, size_t len);

#endif
