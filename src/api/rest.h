/* The REST request/response model shared by the HTTP front end and the API handlers. The HTTP
 * layer fills an sc_rest_req (method, decoded path, path captures, query parameters, body) and
 * hands it to a handler, which writes status, content type and body into an sc_rest_resp.
 * Everything a handler allocates for the request comes from req->arena and dies with it.
 * Also: Elasticsearch-shaped error bodies and the common query parameters (pretty,
 * filter_path, error_trace, human). */
#ifndef SC_API_REST_H
#define SC_API_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/jsonw.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

typedef struct sc_node sc_node;

typedef enum sc_rest_method {
    SC_REST_GET,
    SC_REST_PUT,
    SC_REST_POST,
    SC_REST_DELETE,
    SC_REST_HEAD,
    SC_REST_OTHER,
} sc_rest_method;

#define SC_REST_MAX_PARAMS 64
#define SC_REST_MAX_CAPTURES 4

typedef struct sc_rest_param {
    const char *key;
    const char *value; /* "" for a key without '=' */
} sc_rest_param;

typedef struct sc_rest_req {
    sc_rest_method method;
    const char *method_str;   /* as received, NUL-terminated */
    const char *path;         /* the path as received (still percent-encoded), NUL-terminated;
                               * the router decodes it segment by segment */
    sc_slice body;            /* borrowed, may be empty */
    const char *content_type; /* may be NULL */
    sc_rest_param params[SC_REST_MAX_PARAMS];
    size_t n_params;
    /* Path captures filled by the router: {index}, {id}, {target} ... (NULL when absent).
     * index and extra never hold a NUL byte (the router refuses such a path with 400). */
    const char *index;
    sc_slice id;       /* a document id: a byte string that may hold NUL; ptr NULL when absent */
    const char *extra; /* a third capture (e.g. the task id or scroll id) */
    /* Set by the front end when the request must be refused with 400
     * illegal_argument_exception and this reason (a parameter or header holding a NUL byte);
     * the router then runs no handler. */
    const char *reject;
    sc_arena *arena;
    sc_node *node;
    bool pretty;
    /* The client's socket (-1 when unknown): searches are cancelled when it hangs up. */
    int client_fd;
    /* Forwarded by another node of the cluster (api/forward.h): execute here, never forward. */
    bool forwarded;
} sc_rest_req;

typedef struct sc_rest_resp {
    int status;
    const char *content_type; /* static string; default application/json */
    sc_buf body;              /* owned, freed by sc_rest_resp_fini */
    bool no_filter;           /* body is not JSON (cat text): skip filter_path */
    const char *warning;      /* static text for a deprecation `Warning` header, or NULL */
} sc_rest_resp;

typedef void (*sc_rest_handler)(sc_rest_req *req, sc_rest_resp *resp);

void sc_rest_resp_init(sc_rest_resp *resp);
void sc_rest_resp_fini(sc_rest_resp *resp);

/* Query parameter value or NULL when absent. */
const char *sc_rest_param_get(const sc_rest_req *req, const char *key);
/* Boolean parameter: absent -> dflt; "" / "true" -> true; "false" -> false. */
bool sc_rest_param_bool(const sc_rest_req *req, const char *key, bool dflt);
/* Integer parameter; sets *ok false (and leaves dflt) when present but not an integer. */
int64_t sc_rest_param_int(const sc_rest_req *req, const char *key, int64_t dflt, bool *ok);

/* Starts a JSON body: resets resp->body, sets status and content type, and initializes w with
 * the request's pretty flag. */
void sc_rest_json_begin(sc_rest_req *req, sc_rest_resp *resp, int status, sc_jsonw *w);
/* Finishes the JSON body; on a writer failure replaces it with a 500 error. */
void sc_rest_json_end(sc_rest_req *req, sc_rest_resp *resp, sc_jsonw *w);

/* An extra key/value pair of an error object ("index", "index_uuid", "resource.id" ...). */
typedef struct sc_rest_kv {
    const char *key;
    const char *value; /* SC_REST_TRUE writes the JSON literal true */
} sc_rest_kv;

/* The value of an sc_rest_kv that is written as JSON `true` instead of a string. */
extern const char sc_rest_true[];
#define SC_REST_TRUE sc_rest_true

/* Writes Elasticsearch's error envelope:
 * {"error":{"root_cause":[{"type":T,"reason":R,...extra}],"type":T,"reason":R,...extra},
 *  "status":N}. reason is escaped; it may contain user text. */
void sc_rest_error(sc_rest_req *req, sc_rest_resp *resp, int status, const char *type,
                   const char *reason, const sc_rest_kv *extra, size_t n_extra);
/* printf-style reason without extra fields. */
void sc_rest_errorf(sc_rest_req *req, sc_rest_resp *resp, int status, const char *type,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* index_not_found_exception (404) for `name`. */
void sc_rest_error_index_not_found(sc_rest_req *req, sc_rest_resp *resp, const char *name);

/* Writes the standard {"acknowledged":true} body with status 200. */
void sc_rest_ack(sc_rest_req *req, sc_rest_resp *resp);

/* Applies filter_path (comma-separated dotted paths with `*` and `**`; a leading `-` excludes,
 * applied before the inclusions) to a JSON body in place; bodies that are not JSON are left
 * alone. Returns SC_ENOMEM only. */
sc_status sc_rest_filter_path(sc_buf *body, const char *filter_path, bool pretty) SC_MUST_USE;

/* Applies `?human`: before every "<x>_in_bytes" / "<x>_in_millis" integer member of a JSON
 * body adds "<x>" with the readable value ("1.2mb", "350ms", "2.5s"). Bodies that are not JSON
 * are left alone. Returns SC_ENOMEM only. */
sc_status sc_rest_humanize(sc_buf *body, bool pretty) SC_MUST_USE;

/* Method name ("GET") for messages. */
const char *sc_rest_method_name(sc_rest_method m);

#endif
