/* TLS on transport connections (transport_tls.h) with GnuTLS, the library the HTTP side's
 * HTTPS already links: credentials, per-connection sessions, handshake steps and record I/O. */
#include "cluster/transport_tls.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster/log.h"

struct sc__tp_tls {
    gnutls_certificate_credentials_t cred;
    sc_transport_verify mode;
};

sc_status sc__tp_tls_new(const sc_transport_tls_config *cfg, sc__tp_tls **out)
{
    if (!cfg->cert_file || !cfg->key_file) {
        sc_log(SC_LOG_ERROR, "transport", "TLS needs a certificate and a key");
        return SC_EINVAL;
    }
    if (!cfg->ca_file && cfg->verification_mode != SC_TRANSPORT_VERIFY_NONE) {
        sc_log(SC_LOG_ERROR, "transport",
               "TLS verification_mode full/certificate needs certificate_authorities");
        return SC_EINVAL;
    }
    sc__tp_tls *t = calloc(1, sizeof *t);
    if (!t)
        return SC_ENOMEM;
    t->mode = cfg->verification_mode;
    if (gnutls_certificate_allocate_credentials(&t->cred) != GNUTLS_E_SUCCESS) {
        free(t);
        return SC_ENOMEM;
    }
    int rc = gnutls_certificate_set_x509_key_file(t->cred, cfg->cert_file, cfg->key_file,
                                                  GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        sc_log(SC_LOG_ERROR, "transport", "invalid TLS certificate [%s] / key [%s]: %s",
               cfg->cert_file, cfg->key_file, gnutls_strerror(rc));
        sc__tp_tls_free(t);
        return SC_EINVAL;
    }
    if (cfg->ca_file) {
        rc = gnutls_certificate_set_x509_trust_file(t->cred, cfg->ca_file, GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            sc_log(SC_LOG_ERROR, "transport", "invalid TLS certificate authorities [%s]: %s",
                   cfg->ca_file, rc < 0 ? gnutls_strerror(rc) : "no certificate in the file");
            sc__tp_tls_free(t);
            return SC_EINVAL;
        }
    }
    *out = t;
    return SC_OK;
}

void sc__tp_tls_free(sc__tp_tls *t)
{
    if (!t)
        return;
    gnutls_certificate_free_credentials(t->cred);
    free(t);
}

/* The socket is shared by a receiving and a sending thread (server side): never block, never
 * raise SIGPIPE. */
static ssize_t push(gnutls_transport_ptr_t p, const void *buf, size_t n)
{
    return send((int)(intptr_t)p, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t pull(gnutls_transport_ptr_t p, void *buf, size_t n)
{
    return recv((int)(intptr_t)p, buf, n, MSG_DONTWAIT);
}

sc_status sc__tp_tls_start(sc__tp_tls *t, sc__tp_link *l, bool server, const char *host)
{
    gnutls_session_t s;
    /* no session tickets: nothing arrives after the handshake but our frames */
    unsigned flags = (server ? GNUTLS_SERVER : GNUTLS_CLIENT) | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS;
    if (gnutls_init(&s, flags) != GNUTLS_E_SUCCESS)
        return SC_ENOMEM;
    if (gnutls_set_default_priority(s) != GNUTLS_E_SUCCESS ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) != GNUTLS_E_SUCCESS) {
        gnutls_deinit(s);
        return SC_ENOMEM;
    }
    if (t->mode != SC_TRANSPORT_VERIFY_NONE) {
        /* the handshake fails unless the peer's certificate chains to the CA (and, full, on the
         * client side, names the host); a server requires its client's certificate */
        const char *name = !server && t->mode == SC_TRANSPORT_VERIFY_FULL ? host : NULL;
        gnutls_session_set_verify_cert(s, name, 0);
        if (server)
            gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
    }
    gnutls_transport_set_ptr(s, (gnutls_transport_ptr_t)(intptr_t)l->fd);
    gnutls_transport_set_push_function(s, push);
    gnutls_transport_set_pull_function(s, pull);
    l->tls = s;
    return SC_OK;
}

int sc__tp_tls_handshake_step(sc__tp_link *l, bool *want_write, char *why, size_t why_cap)
{
    int rc = gnutls_handshake(l->tls);
    if (rc == GNUTLS_E_SUCCESS)
        return 1;
    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED || !gnutls_error_is_fatal(rc)) {
        *want_write = gnutls_record_get_direction(l->tls) == 1;
        return 0;
    }
    if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
        gnutls_datum_t d = {0};
        unsigned status = gnutls_session_get_verify_cert_status(l->tls);
        if (gnutls_certificate_verification_status_print(
                status, gnutls_certificate_type_get(l->tls), &d, 0) == GNUTLS_E_SUCCESS) {
            snprintf(why, why_cap, "%s", (const char *)d.data);
            gnutls_free(d.data);
            return -1;
        }
    }
    snprintf(why, why_cap, "%s", gnutls_strerror(rc));
    return -1;
}

ssize_t sc__tp_link_send(sc__tp_link *l, const void *p, size_t n)
{
    if (!l->tls)
        return send(l->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    ssize_t w = gnutls_record_send(l->tls, p, n);
    if (w >= 0)
        return w;
    errno = w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED ? EAGAIN : EIO;
    return -1;
}

ssize_t sc__tp_link_recv(sc__tp_link *l, void *p, size_t n)
{
    if (!l->tls)
        return recv(l->fd, p, n, MSG_DONTWAIT);
    ssize_t r = gnutls_record_recv(l->tls, p, n);
    if (r >= 0)
        return r;
    errno = r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED ? EAGAIN : EIO;
    return -1;
}

size_t sc__tp_link_pending(const sc__tp_link *l)
{
    return l->tls ? gnutls_record_check_pending(l->tls) : 0;
}

void sc__tp_link_close(sc__tp_link *l)
{
    if (l->tls)
        gnutls_deinit(l->tls);
    if (l->fd >= 0)
        close(l->fd);
    l->tls = NULL;
    l->fd = -1;
}
