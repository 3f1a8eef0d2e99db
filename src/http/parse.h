/* A strict HTTP/1.1 request parser (RFC 9112) for the server's own transport: the request head
 * (request line and header fields, parsed in place over the received bytes) and chunked bodies
 * (decoded in place, incrementally). Pure functions over buffers, so the fuzz target
 * (tests/fuzz/http_fuzz.c) and unit tests drive them without sockets. Anything ambiguous is an
 * error, never a guess: two different Content-Length values, Content-Length with
 * Transfer-Encoding, a missing Host in HTTP/1.1, control bytes (NUL included) in a field value,
 * obsolete line folding, bare CR or LF line ends. */
#ifndef SC_HTTP_PARSE_H
#define SC_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define SC_HTTP_MAX_HEADERS 100

typedef struct sc_http_field {
    const char *name; /* not NUL-terminated; a token (no NUL) */
    size_t name_len;
    const char *value; /* not NUL-terminated; surrounding whitespace trimmed; no control bytes */
    size_t value_len;
} sc_http_field;

typedef struct sc_http_head {
    const char *method; /* a token, not NUL-terminated */
    size_t method_len;
    const char *target; /* origin-form "/path?query" (visible ASCII only), not NUL-terminated */
    size_t target_len;
    int minor; /* HTTP/1.<minor>: 0 or 1 */
    sc_http_field fields[SC_HTTP_MAX_HEADERS];
    size_t n_fields;
    size_t head_len; /* bytes of the head including the blank line */
    /* Derived from the fields: */
    int64_t content_length;       /* -1 when absent */
    bool chunked;                 /* Transfer-Encoding: chunked */
    bool keep_alive;              /* after Connection and the version's default */
    bool expect_continue;         /* Expect: 100-continue */
    const char *content_encoding; /* "gzip" / "deflate" (static) or NULL for identity */
} sc_http_head;

/* Why a request was refused: the HTTP status (400, 413, 415, 417, 431, 501, 505), an
 * Elasticsearch-style error type and a static reason. */
typedef struct sc_http_perr {
    int status;
    const char *type;
    const char *reason;
} sc_http_perr;

/* Parses the request head at the start of buf[0..len). SC_OK with *complete: *h is filled (its
 * pointers point into buf). SC_OK without *complete: the head is not complete yet (read more).
 * SC_EPARSE: the request is malformed or refused (a head past max_head bytes gives 431), *err
 * says how; the connection must be closed after the answer. O(len). Thread-safe. */
sc_status sc_http_parse_head(const char *buf, size_t len, size_t max_head, sc_http_head *h,
                             bool *complete, sc_http_perr *err) SC_MUST_USE;

/* Value of the first field named `name` (case-insensitive) or NULL; *len gets its length. */
const char *sc_http_head_get(const sc_http_head *h, const char *name, size_t *len);

/* Incremental in-place decoder of a chunked body. The caller keeps the state between reads;
 * the body bytes start at buf[0] (the byte after the head) and only grow at the end. */
typedef struct sc_http_chunked {
    size_t src;     /* bytes of buf consumed so far */
    size_t dst;     /* decoded bytes written to buf[0..dst) (dst <= src) */
    uint64_t left;  /* bytes left in the current chunk's data */
    uint64_t total; /* decoded bytes so far */
    size_t line;    /* bytes of the current size or trailer line */
    int state;
} sc_http_chunked;

/* Resets the decoder state. */
void sc_http_chunked_init(sc_http_chunked *c);

/* Decodes as much of buf[c->src..len) as possible, moving chunk data down to buf[c->dst..).
 * SC_OK with *done: the body is complete, buf[0..c->dst) is the body and c->src bytes (trailer
 * included) were consumed. SC_OK without *done: read more. SC_ELIMIT: the chunk sizes announce
 * more than `max` bytes (checked as soon as a size line is read, before its data arrives);
 * SC_EPARSE: malformed (*err filled for both). O(len - c->src). */
sc_status sc_http_chunked_decode(sc_http_chunked *c, uint8_t *buf, size_t len, uint64_t max,
                                 bool *done, sc_http_perr *err) SC_MUST_USE;

#endif
