/* TLS on transport connections (transport.h, sc_transport_tls_config): GnuTLS credentials
 * loaded once per transport, one session per connection over its non-blocking socket, the
 * handshake with the peer's certificate checked per verification_mode (mutual: a server requires
 * its client's certificate), and the record I/O both sides use through sc__tp_link. Private to
 * transport.c and transport_server.c. */
#ifndef SC_CLUSTER_TRANSPORT_TLS_H
#define SC_CLUSTER_TRANSPORT_TLS_H

#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/status.h"
#include "cluster/transport.h"

typedef struct sc__tp_tls sc__tp_tls;

/* One connection's byte stream: the socket and, with TLS, its session. */
typedef struct sc__tp_link {
    int fd;
    gnutls_session_t tls; /* NULL: plaintext */
} sc__tp_link;

/* Loads the certificate, key and CA of cfg. *out owns them (sc__tp_tls_free). SC_EINVAL with the
 * reason logged when a file is missing or invalid. */
sc_status sc__tp_tls_new(const sc_transport_tls_config *cfg, sc__tp_tls **out) SC_MUST_USE;
void sc__tp_tls_free(sc__tp_tls *t);

/* Starts a session on l->fd: the server side (requires and checks the client's certificate
 * unless verification_mode is none) or the client side (checks the server's certificate, and
 * under full that it names `host`). SC_ENOMEM. */
sc_status sc__tp_tls_start(sc__tp_tls *t, sc__tp_link *l, bool server, const char *host)
    SC_MUST_USE;

/* One step of the handshake: 1 done, 0 not yet (wait for *want_write ? POLLOUT : POLLIN and
 * call again), -1 failed (why: a readable reason). */
int sc__tp_tls_handshake_step(sc__tp_link *l, bool *want_write, char *why, size_t why_cap);

/* Record I/O, as send(2)/recv(2) on a non-blocking socket: bytes moved, 0 at EOF (recv), or -1
 * with errno EAGAIN (wait for the socket and call again with the same arguments) or EIO. */
ssize_t sc__tp_link_send(sc__tp_link *l, const void *p, size_t n);
ssize_t sc__tp_link_recv(sc__tp_link *l, void *p, size_t n);
/* Decrypted bytes buffered in the session (poll(2) does not see them). */
size_t sc__tp_link_pending(const sc__tp_link *l);
/* Ends the session and closes the socket; l is reset (fd -1). */
void sc__tp_link_close(sc__tp_link *l);

#endif
