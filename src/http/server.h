/* The HTTP server. Two transports behind one interface: the default epoll transport
 * (transport.c: one epoll set shared by the workers, so any free worker serves any ready
 * connection; our strict HTTP/1.1 parser, parse.h; keep-alive and pipelining) and
 * libmicrohttpd (server_mhd.c, http.transport: mhd), whose thread pool pins connections.
 * Both: request bodies up to http.max_content_length (413 beyond), idle-connection timeouts
 * against slow clients, a per-request arena, the Elasticsearch product header on every
 * response, optional basic authentication (401 before the body is read) and TLS (GnuTLS).
 * Requests are routed by router.h to the API handlers. */
#ifndef SC_HTTP_SERVER_H
#define SC_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct sc_node sc_node;
typedef struct sc_http_auth sc_http_auth;
typedef struct sc_http_server sc_http_server;

typedef struct sc_http_config {
    const char *bind;            /* IPv4/IPv6 address literal, default "127.0.0.1" */
    uint16_t port;               /* 0 = pick a free port (see sc_http_port) */
    unsigned threads;            /* worker threads; 0 = number of cores */
    size_t max_content_length;   /* bytes; default 100 MiB */
    unsigned timeout_s;          /* idle connection timeout; default 60 */
    size_t request_budget_bytes; /* per-request arena budget (request breaker); 0 = none */
    uint64_t slowlog_ms;         /* log requests slower than this; 0 = off */
    sc_http_auth *auth;          /* basic authentication (http/auth.h, borrowed); NULL = off */
    const char *tls_cert_file;   /* PEM certificate (chain); with tls_key_file: HTTPS only */
    const char *tls_key_file;    /* PEM private key, unencrypted */
    size_t max_open_connections; /* beyond it new connections get a prompt 503; default 10000
                                  * (the file-descriptor limit is raised to fit) */
    bool compression;            /* gzip responses when the client accepts them; default off */
    const char *transport;       /* "epoll" (default) or "mhd" (libmicrohttpd) */
    unsigned busy_poll_us;       /* epoll transport: after a request, one idle worker at a time
                                  * polls for the next one this long before it sleeps (a
                                  * keep-alive client's next request is served without a
                                  * wake-up); 0 = off; default 50 */
} sc_http_config;

/* Fills the defaults above. */
void sc_http_config_default(sc_http_config *c);

/* Starts listening and serving; requests reach `node` (borrowed, must outlive the server).
 * SC_EIO when the address cannot be bound or the TLS files cannot be read; SC_EINVAL when the
 * TLS certificate/key are not valid PEM or do not match, or the transport is unknown
 * (logged). */
sc_status sc_http_start(const sc_http_config *c, sc_node *node, sc_http_server **out) SC_MUST_USE;
/* The bound port (useful with port 0). */
uint16_t sc_http_port(const sc_http_server *s);
/* Finishes in-flight requests, closes every connection and frees the server. NULL is a no-op. */
void sc_http_stop(sc_http_server *s);

#endif
