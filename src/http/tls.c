/* TLS for the epoll transport: GnuTLS credentials loaded from the PEM certificate and key
 * (the same two options as before), and one non-blocking server session per connection. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cluster/log.h"
#include "http/internal.h"

struct sc__http_tls {
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
};

static sc_status read_file(const char *what, const char *path, gnutls_datum_t *d)
{
    uint8_t *data;
    size_t len;
    if (sc_file_read_all(path, &data, &len) != SC_OK) {
        sc_log(SC_LOG_ERROR, "http", "cannot read TLS %s [%s]", what, path);
        return SC_EIO;
    }
    d->data = data;
    d->size = (unsigned)len;
    return SC_OK;
}

sc_status sc__http_tls_new(const char *cert_file, const char *key_file, sc__http_tls **out)
{
    *out = NULL;
    if (!cert_file || !key_file) {
        sc_log(SC_LOG_ERROR, "http", "TLS needs both a certificate and a key file");
        return SC_EINVAL;
    }
    gnutls_datum_t cert = {0}, key = {0};
    sc_status st = read_file("certificate", cert_file, &cert);
    if (st == SC_OK)
        st = read_file("key", key_file, &key);
    sc__http_tls *t = st == SC_OK ? calloc(1, sizeof *t) : NULL;
    if (st == SC_OK && !t)
        st = SC_ENOMEM;
    if (st == SC_OK && gnutls_certificate_allocate_credentials(&t->cred) != GNUTLS_E_SUCCESS) {
        free(t);
        t = NULL;
        st = SC_ENOMEM;
    }
    if (st == SC_OK) {
        int rc = gnutls_certificate_set_x509_key_mem(t->cred, &cert, &key, GNUTLS_X509_FMT_PEM);
        if (rc >= 0)
            rc = gnutls_priority_init(&t->prio, "NORMAL", NULL);
        if (rc < 0) {
            sc_log(SC_LOG_ERROR, "http", "invalid TLS certificate [%s] / key [%s]: %s", cert_file,
                   key_file, gnutls_strerror(rc));
            st = SC_EINVAL;
        }
    }
    free(cert.data);
    if (key.data) {
        explicit_bzero(key.data, key.size);
        free(key.data);
    }
    if (st != SC_OK) {
        sc__http_tls_free(t);
        return st;
    }
    *out = t;
    return SC_OK;
}

void sc__http_tls_free(sc__http_tls *t)
{
    if (!t)
        return;
    if (t->prio)
        gnutls_priority_deinit(t->prio);
    if (t->cred)
        gnutls_certificate_free_credentials(t->cred);
    free(t);
}

sc_status sc__http_tls_session(sc__http_tls *t, int fd, gnutls_session_t *out)
{
    gnutls_session_t s;
    if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) != GNUTLS_E_SUCCESS)
        return SC_ENOMEM;
    if (gnutls_priority_set(s, t->prio) < 0 ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0) {
        gnutls_deinit(s);
        return SC_EINVAL;
    }
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
    gnutls_transport_set_int(s, fd);
    *out = s;
    return SC_OK;
}
