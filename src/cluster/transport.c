/* The transport's client side and lifecycle (transport.h): per-peer pools of persistent
 * connections, connect with timeout and bounded back-off, one request/response exchange per
 * borrowed connection with id matching and a deadline. The server side is transport_server.c. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/test_partition.h"
#include "cluster/transport_internal.h"

#define BACKOFF_MIN_MS 50

void sc__tp_tune_socket(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Waits for `events` on fd until deadline_ns (0 = forever). */
static sc_status wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        int ms = -1;
        if (deadline_ns) {
            uint64_t now = sc_clock_now_ns();
            if (now >= deadline_ns)
                return SC_ETIMEOUT;
            ms = (int)((deadline_ns - now + 999999u) / 1000000u);
        }
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0)
            return SC_OK;
        if (r == 0)
            return SC_ETIMEOUT;
        if (errno != EINTR)
            return SC_EIO;
    }
}

static sc_status send_part(sc__tp_link *l, const uint8_t *p, size_t n, uint64_t deadline_ns)
{
    while (n) {
        ssize_t w = sc__tp_link_send(l, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            SC_TRY(wait_fd(l->fd, POLLOUT, deadline_ns));
        } else if (!(w < 0 && errno == EINTR)) {
            return SC_EIO;
        }
    }
    return SC_OK;
}

sc_status sc__tp_send_all(sc__tp_link *l, const void *a, size_t an, const void *b, size_t bn,
                          uint64_t deadline_ns)
{
    SC_TRY(send_part(l, a, an, deadline_ns));
    return send_part(l, b, bn, deadline_ns);
}

/* Reads exactly n bytes. *got_any is set once a byte arrived. */
static sc_status recv_all(sc__tp_link *l, uint8_t *p, size_t n, uint64_t deadline_ns, bool *got_any)
{
    while (n) {
        ssize_t r = sc__tp_link_recv(l, p, n);
        if (r > 0) {
            *got_any = true;
            p += r;
            n -= (size_t)r;
        } else if (r == 0) {
            return SC_EIO;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            SC_TRY(wait_fd(l->fd, POLLIN, deadline_ns));
        } else if (errno != EINTR) {
            return SC_EIO;
        }
    }
    return SC_OK;
}

static int connect_to(const char *host, uint16_t port, uint32_t timeout_ms)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", port);
    if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai)
        return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    bool ok = fd >= 0;
    if (ok && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        ok = errno == EINPROGRESS &&
             wait_fd(fd, POLLOUT, sc_clock_now_ns() + (uint64_t)timeout_ms * 1000000u) == SC_OK;
        int err = 0;
        socklen_t el = sizeof err;
        ok = ok && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
    }
    freeaddrinfo(ai);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sc__tp_tune_socket(fd);
    return fd;
}

static sc__tp_peer *get_peer(sc_transport *t, const char *host, uint16_t port)
{
    for (sc__tp_peer *p = t->peers; p; p = p->next)
        if (p->port == port && strcmp(p->host, host) == 0)
            return p;
    sc__tp_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->host, sizeof p->host, "%s", host);
    p->port = port;
    /* borrow() waits against sc_clock_now_ns deadlines: the monotonic clock */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->next = t->peers;
    t->peers = p;
    return p;
}

static void set_err(sc_transport_error *err, bool remote, const char *what, const char *host,
                    unsigned port)
{
    if (!err)
        return;
    err->remote = remote;
    if (remote)
        snprintf(err->message, sizeof err->message, "%s", what);
    else
        snprintf(err->message, sizeof err->message, "%s %s:%u", what, host, port);
}

/* One exchange on a borrowed connection. */
static sc_status roundtrip(sc_transport *t, sc__tp_link *l, uint16_t type, sc_slice body,
                           uint64_t deadline_ns, uint8_t **resp, size_t *resp_len, bool *got_any,
                           sc_transport_error *err)
{
    uint64_t id = atomic_fetch_add(&t->next_id, 1);
    sc_wire_header h = {.type = type, .request_id = id, .body_len = (uint32_t)body.len};
    uint8_t hdr[SC_WIRE_HEADER_BYTES];
    sc_wire_header_put(&h, hdr);
    SC_TRY(sc__tp_send_all(l, hdr, sizeof hdr, body.ptr, body.len, deadline_ns));
    SC_TRY(recv_all(l, hdr, sizeof hdr, deadline_ns, got_any));
    sc_wire_header rh;
    SC_TRY(sc_wire_header_get(hdr, t->cfg.max_body_bytes, &rh));
    if (!(rh.flags & SC_WIRE_FLAG_RESPONSE) || rh.request_id != id || rh.type != type)
        return SC_ECORRUPT;
    uint8_t *b = malloc(rh.body_len ? rh.body_len : 1);
    if (!b)
        return SC_ENOMEM;
    sc_status st = recv_all(l, b, rh.body_len, deadline_ns, got_any);
    if (st == SC_OK && (rh.flags & SC_WIRE_FLAG_ERROR)) {
        sc_status remote = SC_EIO;
        char msg[256];
        st = sc_wire_error_decode(b, rh.body_len, &remote, msg, sizeof msg);
        if (st == SC_OK) {
            st = remote;
            set_err(err, true, msg, NULL, 0);
        }
        /* the exchange itself completed: the connection stays usable */
        *got_any = false;
    }
    if (st != SC_OK) {
        free(b);
        return st;
    }
    *resp = b;
    *resp_len = rh.body_len;
    return SC_OK;
}

/* The TLS handshake of a new outbound connection, before deadline_ns. false: it failed (logged,
 * the reason in why). */
static bool client_handshake(sc_transport *t, sc__tp_link *l, const char *host, uint16_t port,
                             uint64_t deadline_ns, char *why, size_t why_cap)
{
    if (sc__tp_tls_start(t->tls, l, false, host) != SC_OK) {
        snprintf(why, why_cap, "out of memory");
        return false;
    }
    for (;;) {
        bool want_write = false;
        int r = sc__tp_tls_handshake_step(l, &want_write, why, why_cap);
        if (r == 1)
            return true;
        if (r < 0 || wait_fd(l->fd, want_write ? POLLOUT : POLLIN, deadline_ns) != SC_OK) {
            if (r == 0)
                snprintf(why, why_cap, "timed out");
            atomic_fetch_add(&t->n_tls_failed, 1);
            sc_log(SC_LOG_WARN, "transport", "TLS handshake with %s:%u failed: %s", host, port,
                   why);
            return false;
        }
    }
}

/* Borrows a connection (idle or new). l->fd = -1 and a status on failure (why: the reason of a
 * failed TLS handshake, else empty). */
static sc_status borrow(sc_transport *t, sc__tp_peer *p, uint64_t deadline_ns, sc__tp_link *l,
                        bool *reused, char *why, size_t why_cap)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                          .tv_nsec = (long)(deadline_ns % 1000000000u)};
    *l = (sc__tp_link){.fd = -1};
    why[0] = '\0';
    while (!p->idle && p->n_open >= t->cfg.conns_per_peer) {
        if (pthread_cond_timedwait(&p->cv, &t->mu, &ts) == ETIMEDOUT)
            return SC_ETIMEOUT;
    }
    if (p->idle) {
        sc__tp_cli_conn *c = p->idle;
        p->idle = c->next;
        *l = c->link;
        *reused = true;
        free(c);
        return SC_OK;
    }
    if (sc_clock_now_ns() < p->backoff_until_ns)
        return SC_EIO;
    p->n_open++;
    pthread_mutex_unlock(&t->mu);
    int c = connect_to(p->host, p->port, t->cfg.connect_timeout_ms);
    sc__tp_link nl = {.fd = c};
    if (c >= 0 && t->tls) {
        uint64_t hs_deadline = sc_clock_now_ns() + (uint64_t)t->cfg.connect_timeout_ms * 1000000u;
        if (!client_handshake(t, &nl, p->host, p->port, hs_deadline, why, why_cap)) {
            sc__tp_link_close(&nl);
            c = -1;
        }
    }
    pthread_mutex_lock(&t->mu);
    if (c < 0) {
        p->n_open--;
        p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_MIN_MS;
        if (p->backoff_ms > t->cfg.backoff_max_ms)
            p->backoff_ms = t->cfg.backoff_max_ms;
        p->backoff_until_ns = sc_clock_now_ns() + (uint64_t)p->backoff_ms * 1000000u;
        pthread_cond_signal(&p->cv);
        return SC_EIO;
    }
    p->backoff_ms = 0;
    atomic_fetch_add(&t->n_connects, 1);
    *l = nl;
    *reused = false;
    return SC_OK;
}

/* Returns a connection to the pool (ok) or closes it. */
static void give_back(sc_transport *t, sc__tp_peer *p, sc__tp_link *l, bool ok)
{
    sc__tp_cli_conn *c = ok ? malloc(sizeof *c) : NULL;
    pthread_mutex_lock(&t->mu);
    if (c) {
        c->link = *l;
        c->next = p->idle;
        p->idle = c;
    } else {
        sc__tp_link_close(l);
        p->n_open--;
    }
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&t->mu);
}

sc_status sc_transport_request(sc_transport *t, const char *host, uint16_t port, uint16_t type,
                               sc_slice body, uint32_t timeout_ms, uint8_t **resp, size_t *resp_len,
                               sc_transport_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (type == 0 || body.len > t->cfg.max_body_bytes)
        return type == 0 ? SC_EINVAL : SC_ELIMIT;
    if (sc_test_partitioned()) {
        set_err(err, false, "cut off from (test partition)", host, port);
        return SC_EIO;
    }
    uint64_t deadline = sc_clock_now_ns() + (uint64_t)(timeout_ms ? timeout_ms : 30000) * 1000000u;
    for (int attempt = 0;; attempt++) {
        pthread_mutex_lock(&t->mu);
        sc__tp_peer *p = get_peer(t, host, port);
        sc__tp_link l;
        bool reused = false;
        char why[200] = "";
        sc_status st = p ? borrow(t, p, deadline, &l, &reused, why, sizeof why) : SC_ENOMEM;
        pthread_mutex_unlock(&t->mu);
        if (st != SC_OK) {
            char what[256];
            snprintf(what, sizeof what, "TLS handshake failed (%s) with", why);
            set_err(err, false,
                    why[0]         ? what
                    : st == SC_EIO ? "cannot connect to"
                                   : "no free connection to",
                    host, port);
            return st;
        }
        bool got_any = false;
        st = roundtrip(t, &l, type, body, deadline, resp, resp_len, &got_any, err);
        bool remote = err && err->remote;
        give_back(t, p, &l, st == SC_OK || remote);
        if (st == SC_OK) {
            atomic_fetch_add(&t->n_sent, 1);
            return SC_OK;
        }
        /* a pooled connection the peer closed meanwhile: one retry on a fresh one */
        if (!remote && st == SC_EIO && reused && !got_any && attempt == 0)
            continue;
        if (!remote)
            set_err(err, false, st == SC_ETIMEOUT ? "request timed out:" : "request failed:", host,
                    port);
        return st;
    }
}

sc_status sc_transport_open(const sc_transport_config *cfg, sc_transport **out)
{
    sc_transport *t = calloc(1, sizeof *t);
    if (!t)
        return SC_ENOMEM;
    t->cfg = *cfg;
    if (!t->cfg.n_workers)
        t->cfg.n_workers = 4;
    if (!t->cfg.max_body_bytes)
        t->cfg.max_body_bytes = SC_WIRE_DEFAULT_MAX_BODY_BYTES;
    if (!t->cfg.conns_per_peer)
        t->cfg.conns_per_peer = 4;
    if (!t->cfg.connect_timeout_ms)
        t->cfg.connect_timeout_ms = 2000;
    if (!t->cfg.backoff_max_ms)
        t->cfg.backoff_max_ms = 2000;
    t->listen_fd = -1;
    t->wake[0] = t->wake[1] = -1;
    atomic_init(&t->next_id, 1);
    pthread_mutex_init(&t->mu, NULL);
    if (cfg->tls) {
        sc_status st = sc__tp_tls_new(cfg->tls, &t->tls);
        if (st != SC_OK) {
            sc_transport_close(t);
            return st;
        }
    }
    if (!(cfg->bind_host && cfg->bind_host[0] == '\0')) {
        sc_status st = sc__transport_server_start(t);
        if (st != SC_OK) {
            sc_transport_close(t);
            return st;
        }
    }
    *out = t;
    return SC_OK;
}

uint16_t sc_transport_port(const sc_transport *t)
{
    return t->port;
}

static sc_status register_handler(sc_transport *t, uint16_t type, sc_transport_handler_fn fn,
                                  void *ctx, bool on_io_thread)
{
    if (type == 0 || !fn)
        return SC_EINVAL;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n_handlers; i++)
        if (t->handlers[i].type == type) {
            t->handlers[i] = (sc__tp_handler){type, fn, ctx, on_io_thread};
            pthread_mutex_unlock(&t->mu);
            return SC_OK;
        }
    sc__tp_handler *h = realloc(t->handlers, (t->n_handlers + 1) * sizeof *h);
    if (h) {
        h[t->n_handlers++] = (sc__tp_handler){type, fn, ctx, on_io_thread};
        t->handlers = h;
    }
    pthread_mutex_unlock(&t->mu);
    return h ? SC_OK : SC_ENOMEM;
}

sc_status sc_transport_register(sc_transport *t, uint16_t type, sc_transport_handler_fn fn,
                                void *ctx)
{
    return register_handler(t, type, fn, ctx, false);
}

sc_status sc_transport_register_inline(sc_transport *t, uint16_t type, sc_transport_handler_fn fn,
                                       void *ctx)
{
    return register_handler(t, type, fn, ctx, true);
}

void sc_transport_stats_get(sc_transport *t, sc_transport_stats *out)
{
    out->connects = atomic_load(&t->n_connects);
    out->requests_sent = atomic_load(&t->n_sent);
    out->requests_handled = atomic_load(&t->n_handled);
    out->bad_frames = atomic_load(&t->n_bad_frames);
    out->tls_refused = atomic_load(&t->n_tls_refused);
    out->tls_failed = atomic_load(&t->n_tls_failed);
}

void sc_transport_close(sc_transport *t)
{
    if (!t)
        return;
    sc__transport_server_stop(t);
    while (t->peers) {
        sc__tp_peer *p = t->peers;
        t->peers = p->next;
        while (p->idle) {
            sc__tp_cli_conn *c = p->idle;
            p->idle = c->next;
            sc__tp_link_close(&c->link);
            free(c);
        }
        pthread_cond_destroy(&p->cv);
        free(p);
    }
    free(t->handlers);
    sc__tp_tls_free(t->tls);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
