/* The server's public face (server.h): configuration defaults and the choice of transport. */
#include "http/server.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/log.h"
#include "http/internal.h"

struct sc_http_server {
    sc__http_ep *ep;
    sc__http_mhd *mhd;
    uint16_t port;
};

void sc_http_config_default(sc_http_config *c)
{
    memset(c, 0, sizeof *c);
    c->bind = "127.0.0.1";
    c->port = 9200;
    c->threads = 0;
    c->max_content_length = 100u << 20;
    c->timeout_s = 60;
    c->request_budget_bytes = 0;
    c->slowlog_ms = 0;
    c->max_open_connections = 10000;
    c->compression = false;
    c->transport = "epoll";
    c->busy_poll_us = 50;
}

sc_status sc_http_start(const sc_http_config *c, sc_node *node, sc_http_server **out)
{
    *out = NULL;
    const char *t = c->transport && *c->transport ? c->transport : "epoll";
    bool mhd = strcmp(t, "mhd") == 0;
    if (!mhd && strcmp(t, "epoll") != 0) {
        sc_log(SC_LOG_ERROR, "http", "unknown http.transport [%s] (epoll or mhd)", t);
        return SC_EINVAL;
    }
    sc_http_server *s = calloc(1, sizeof *s);
    if (!s)
        return SC_ENOMEM;
    sc_status st = mhd ? sc__http_mhd_start(c, node, &s->mhd, &s->port)
                       : sc__http_ep_start(c, node, &s->ep, &s->port);
    if (st != SC_OK) {
        free(s);
        return st;
    }
    if (!mhd) {
        unsigned threads = c->threads;
        if (!threads) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            threads = n > 0 ? (unsigned)n : 2;
        }
        bool tls = c->tls_cert_file || c->tls_key_file;
        sc_log(SC_LOG_INFO, "http", "listening on %s:%u (%s%s) with %u threads (epoll)",
               c->bind && *c->bind ? c->bind : "127.0.0.1", (unsigned)s->port,
               tls ? "https" : "http", c->auth ? ", basic auth" : "", threads);
    }
    *out = s;
    return SC_OK;
}

uint16_t sc_http_port(const sc_http_server *s)
{
    return s->port;
}

void sc_http_stop(sc_http_server *s)
{
    if (!s)
        return;
    sc__http_ep_stop(s->ep);
    sc__http_mhd_stop(s->mhd);
    free(s);
}
