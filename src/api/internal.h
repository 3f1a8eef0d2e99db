/* Private helpers shared by the API handlers: JSON request bodies (jansson), json_t -> sc_jsonw,
 * and the handler declarations the router dispatches to. Not part of the api's public surface
 * except through router tables in the http layer (handlers.h). */
#ifndef SC_API_INTERNAL_H
#define SC_API_INTERNAL_H

#include <jansson.h>

#include "api/rest.h"
#include "cluster/node.h"

/* Parses the request body as one JSON value. An empty body gives *out = NULL and true when
 * `required` is false. On malformed JSON writes a 400 x_content_parse_exception / parse
 * exception with line and column into resp and returns false. Caller json_decref()s *out. */
bool sc__api_body_json(sc_rest_req *req, sc_rest_resp *resp, bool required, json_t **out);
/* The same, also refusing (400 illegal_argument_exception naming the key) a body in which any
 * string holds a NUL byte ("\u0000"): everything read from such bodies is used as C strings,
 * which would be cut short. sc__api_body_json is this check plus parsing; sc__api_body_json_doc
 * parses only, for bodies whose strings are byte strings (documents, mget ids). */
bool sc__api_body_json_doc(sc_rest_req *req, sc_rest_resp *resp, bool required, json_t **out);
/* The dotted path of the first string (or the value of `skip` members, when skip is given, are
 * passed over) in v holding a NUL byte, written into path (cap bytes); false when none. */
bool sc__api_json_find_nul(const json_t *v, const char *const *skip, char *path, size_t cap);
/* Writes 400 illegal_argument_exception "[path] holds a NUL byte ...". */
void sc__api_error_nul(sc_rest_req *req, sc_rest_resp *resp, const char *path);
/* An arena copy of bytes for messages, NUL bytes shown as \u0000. */
const char *sc__api_printable(sc_rest_req *req, sc_slice s);
/* Parses bytes as JSON (strings may hold NUL: check with sc__api_json_find_nul); on failure
 * fills err (line/column/text). */
json_t *sc__api_json_loadb(sc_slice s, json_error_t *err);
/* Writes a jansson value through the streaming writer (shortest doubles, escapes). */
void sc__api_json_write(sc_jsonw *w, const json_t *v);
/* Encodes a jansson value as compact JSON into buf (appending). */
sc_status sc__api_json_encode(sc_buf *buf, const json_t *v) SC_MUST_USE;
/* Writes a cluster error (index_not_found_exception, index_closed_exception, ...) as the
 * Elasticsearch envelope, with index/index_uuid when set (api_index.c). */
void sc__api_cluster_error(sc_rest_req *req, sc_rest_resp *resp, const sc_cluster_error *err);
/* A _cat text table: header row when `v`, columns padded to the widest cell (at most 16). */
typedef struct sc__api_table {
    size_t n_cols, n_rows;
    const char **cells; /* (n_rows + 1) * n_cols, row 0 = header */
    bool right[16];
} sc__api_table;
/* GET _cat/shards when clustered: one row per copy slot of the routing table (api_nodes.c);
 * api_cat_shards.c hands the request over when the node has a cluster membership. */
void sc__api_cat_shards_cluster(sc_rest_req *req, sc_rest_resp *resp);
/* Whether index `name` matches expr: a comma list of names or fnmatch patterns; NULL, "" and
 * "_all" match everything (api_nodes.c). */
bool sc__api_name_matches(const char *expr, const char *name);
/* Elasticsearch's human size ("512b", "1.5kb", "3.2mb") into buf (api_cluster.c). */
void sc__api_human_bytes(char *buf, size_t cap, uint64_t b);
/* Writes t as the body (api_cluster.c). */
void sc__api_table_write(sc_rest_resp *resp, const sc__api_table *t, bool header);
/* The resolve flags ?expand_wildcards adds (api_alias.c): SC_NODE_RESOLVE_HIDDEN for
 * "hidden" or "all"; otherwise none (closed indices keep each endpoint's own rule). */
unsigned sc__api_expand_flags(const sc_rest_req *req);
/* Resolves expr (NULL or "" = every index) into *list (sc_node_release it); closed indices
 * fail (index_closed_exception) or are skipped by wildcards unless flags has
 * SC_NODE_RESOLVE_CLOSED; ?expand_wildcards applies. On failure writes the error and returns
 * false (api_index.c). */
bool sc__api_resolve(sc_rest_req *req, sc_rest_resp *resp, const char *expr, unsigned flags,
                     sc_index ***list, size_t *n);
/* printf into the request arena. */
char *sc__api_fmt(sc_rest_req *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
