/* Shared-but-private pieces of the http layer: the two transports behind server.h (the
 * epoll transport of transport.c, the default, and libmicrohttpd in server_mhd.c), the
 * request exchange (exchange.c: one parsed request -> sc_rest_req -> response bytes), the TLS
 * glue (tls.c) and gzip coding (gzip.c). */
#ifndef SC_HTTP_INTERNAL_H
#define SC_HTTP_INTERNAL_H

#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "http/parse.h"
#include "http/server.h"

/* Largest request head (request line + headers); beyond it 431. Elasticsearch's
 * http.max_header_size is 16 KiB and its initial line 4 KiB; we allow both in one 64 KiB. */
#define SC__HTTP_MAX_HEAD 65536

/* ---- transports (each returns the bound port through *port) ---- */
typedef struct sc__http_ep sc__http_ep;
sc_status sc__http_ep_start(const sc_http_config *c, sc_node *node, sc__http_ep **out,
                            uint16_t *port) SC_MUST_USE;
void sc__http_ep_stop(sc__http_ep *ep);

typedef struct sc__http_mhd sc__http_mhd;
sc_status sc__http_mhd_start(const sc_http_config *c, sc_node *node, sc__http_mhd **out,
                             uint16_t *port) SC_MUST_USE;
void sc__http_mhd_stop(sc__http_mhd *m);

/* ---- the exchange ---- */

/* What the exchange decided about the connection. */
typedef struct sc__http_outcome {
    bool close; /* close the connection after this response */
} sc__http_outcome;

/* Checks done once the head is complete and before the body is read: basic authentication
 * (401), the declared body size against http.max_content_length (413) and the in-flight
 * requests breaker (429). Returns true when the request may go on (*reserved gets the bytes
 * held on the breaker, released by sc__http_exchange); otherwise the refusal is appended to
 * out and *close says whether the connection must close (a chunked body, or one past the
 * limit); if not, the caller drops the Content-Length body bytes and goes on. */
bool sc__http_precheck(const sc_http_config *c, sc_node *node, const sc_http_head *h,
                       uint64_t *reserved, sc_buf *out, bool *close);

/* Runs one complete request (head h, decoded body, the client's socket for cancellation) and
 * appends the whole response to out. Releases `reserved` bytes of the in-flight breaker. */
void sc__http_exchange(const sc_http_config *c, sc_node *node, const sc_http_head *h, uint8_t *body,
                       size_t body_len, int fd, uint64_t reserved, sc_buf *out,
                       sc__http_outcome *oc);

/* Appends an Elasticsearch-shaped error response for a protocol error, with
 * `Connection: close`. */
void sc__http_write_perr(const sc_http_perr *e, sc_buf *out);

/* ---- gzip (gzip.c) ---- */

/* Inflates a gzip or zlib ("deflate") body into a new malloc'ed buffer (*out, *out_len; free
 * with free()). SC_ELIMIT past `max` bytes, SC_EPARSE when corrupt, SC_ENOMEM. */
sc_status sc__http_inflate(const uint8_t *in, size_t len, size_t max, uint8_t **out,
                           size_t *out_len) SC_MUST_USE;
/* Appends the gzip encoding of in[0..len) to out. SC_ENOMEM only. */
sc_status sc__http_gzip(const uint8_t *in, size_t len, sc_buf *out) SC_MUST_USE;

/* ---- TLS (tls.c) ---- */
typedef struct sc__http_tls sc__http_tls;
/* Loads and checks the PEM certificate and key (SC_EIO unreadable, SC_EINVAL invalid). */
sc_status sc__http_tls_new(const char *cert_file, const char *key_file, sc__http_tls **out)
    SC_MUST_USE;
void sc__http_tls_free(sc__http_tls *t);
/* A server session on the non-blocking socket fd. */
sc_status sc__http_tls_session(sc__http_tls *t, int fd, gnutls_session_t *out) SC_MUST_USE;

#endif
