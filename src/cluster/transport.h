/* The node-to-node transport: request/response messages framed by cluster/wire.h over
 * persistent TCP connections on the transport port (--transport-port), never mixed with HTTP.
 *
 * Server side: one I/O thread polls the listening socket and every inbound connection, reads
 * whole frames (size-limited, validated; a connection that sends a bad frame is closed) and
 * runs the handler registered for the frame's type on a worker pool; the worker writes the
 * response frame (same request id) back on that connection. Unknown types get an ERROR
 * response (SC_EUNSUPPORTED).
 *
 * Client side: a small pool of persistent connections per peer (host:port). A request borrows
 * an idle connection (or opens one, up to conns_per_peer; beyond that it waits), sends one
 * frame and waits for the response with the same id, with a timeout. A connection that fails or
 * times out is closed (a late response could not be matched otherwise); a request that failed
 * on a reused idle connection before anything came back is retried once on a fresh one. Connect
 * failures put the peer in back-off (50 ms doubling up to backoff_max_ms): requests fail fast
 * with SC_EIO until it expires. Requests on one connection are sequential; concurrency comes
 * from the pool.
 *
 * TLS (optional, tls in the config; transport_tls.h): every connection, inbound and outbound, is
 * a TLS session with this node's certificate, and the peer's certificate is checked against the
 * CA (Elasticsearch's xpack.security.transport.ssl.*): mutual TLS is how peers authenticate. A
 * peer that fails the handshake (no certificate, another CA, a plaintext peer) is refused and
 * logged, its connection closed before any frame is read or sent. */
#ifndef SC_CLUSTER_TRANSPORT_H
#define SC_CLUSTER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"
#include "cluster/wire.h"

typedef struct sc_transport sc_transport;

/* verification_mode, as Elasticsearch's: full = the peer's certificate chains to the CA and,
 * on outbound connections, names the host connected to (a SAN IP address or DNS name);
 * certificate = chains to the CA; none = not checked (encryption only: no peer authentication). */
typedef enum sc_transport_verify {
    SC_TRANSPORT_VERIFY_FULL,
    SC_TRANSPORT_VERIFY_CERTIFICATE,
    SC_TRANSPORT_VERIFY_NONE,
} sc_transport_verify;

typedef struct sc_transport_tls_config {
    const char *cert_file; /* PEM certificate (chain) of this node */
    const char *key_file;  /* its PEM private key (unencrypted) */
    const char *ca_file;   /* PEM CA certificate(s) peers must chain to (not needed for none) */
    sc_transport_verify verification_mode;
} sc_transport_tls_config;

typedef struct sc_transport_config {
    const char *bind_host;              /* listen address; NULL = "127.0.0.1"; "" = no server */
    uint16_t port;                      /* 0 = an ephemeral port (see sc_transport_port) */
    size_t n_workers;                   /* handler threads; 0 = 4 */
    uint32_t max_body_bytes;            /* 0 = SC_WIRE_DEFAULT_MAX_BODY_BYTES (both directions) */
    uint32_t conns_per_peer;            /* 0 = 4 */
    uint32_t connect_timeout_ms;        /* 0 = 2000 */
    uint32_t backoff_max_ms;            /* 0 = 2000 */
    const sc_transport_tls_config *tls; /* NULL = plaintext; read at open only */
} sc_transport_config;

/* A handler: decodes `body` (borrowed for the call), does the work and writes the response body
 * into `resp`. Returning non-OK sends an ERROR response with that status and `errmsg` (a
 * NUL-terminated message the handler may fill, errcap bytes). Runs on a worker thread,
 * concurrently with other handlers. */
typedef sc_status (*sc_transport_handler_fn)(void *ctx, sc_slice body, sc_wire_buf *resp,
                                             char *errmsg, size_t errcap);

/* Opens a transport and, unless bind_host is "", starts listening. *out owns it; close with
 * sc_transport_close. SC_EIO when the port cannot be bound, SC_EINVAL (logged) when the TLS
 * files cannot be used, SC_ENOMEM. */
sc_status sc_transport_open(const sc_transport_config *cfg, sc_transport **out) SC_MUST_USE;

/* The port the server listens on (the ephemeral one when configured 0); 0 without a server. */
uint16_t sc_transport_port(const sc_transport *t);

/* Registers the handler for message type `type` (replacing any). Call before peers send that
 * type; thread-safe. SC_EINVAL for type 0 (reserved). */
sc_status sc_transport_register(sc_transport *t, uint16_t type, sc_transport_handler_fn fn,
                                void *ctx) SC_MUST_USE;
/* The same for a handler that runs on the server's I/O thread as its frame arrives, not on the
 * worker pool: for a message that must not wait behind long-running handlers (a search's
 * cancel). It must be quick and never block; its (small) response is written from there. */
sc_status sc_transport_register_inline(sc_transport *t, uint16_t type, sc_transport_handler_fn fn,
                                       void *ctx) SC_MUST_USE;

typedef struct sc_transport_error {
    bool remote;       /* true: the peer's handler failed (status below is its status) */
    char message[256]; /* a readable reason */
} sc_transport_error;

/* Sends a request of `type` to host:port and waits up to timeout_ms (0 = 30 s) for its response.
 * On SC_OK, *resp (malloc'd, free() it) and *resp_len hold the response body. Failures:
 * SC_ETIMEOUT, SC_EIO (connect/send/receive failed, or the peer is in back-off), SC_ECORRUPT (a
 * bad frame from the peer), SC_ELIMIT (body too large), or the remote handler's status with
 * err->remote set. err may be NULL. Thread-safe; blocks the calling thread. */
sc_status sc_transport_request(sc_transport *t, const char *host, uint16_t port, uint16_t type,
                               sc_slice body, uint32_t timeout_ms, uint8_t **resp, size_t *resp_len,
                               sc_transport_error *err) SC_MUST_USE;

/* Counters for tests and stats (a snapshot). */
typedef struct sc_transport_stats {
    uint64_t connects;         /* outbound connections opened */
    uint64_t requests_sent;    /* outbound requests that got a response */
    uint64_t requests_handled; /* inbound requests answered */
    uint64_t bad_frames;       /* inbound connections closed for a bad frame */
    uint64_t tls_refused;      /* inbound connections refused by the TLS handshake */
    uint64_t tls_failed;       /* outbound connections whose TLS handshake failed */
} sc_transport_stats;
void sc_transport_stats_get(sc_transport *t, sc_transport_stats *out);

/* Stops the server (in-flight handlers finish and answer), closes every connection and frees
 * the transport. No sc_transport_request may be running. NULL is a no-op. */
void sc_transport_close(sc_transport *t);

#endif
