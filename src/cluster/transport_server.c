/* The transport's server side (transport.h): the listening socket, one I/O thread that polls it
 * and every inbound connection and cuts the byte stream into validated frames, and the worker
 * pool that runs the registered handlers and writes their response frames back. */
#include <arpa/inet.h>
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
#include <unistd.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/test_partition.h"
#include "cluster/transport_internal.h"

/* A response must reach a live peer within this; a stuck peer loses its connection. */
#define SEND_TIMEOUT_MS 30000
#define READ_CHUNK 65536
/* An inbound TLS handshake must complete within this, or the connection is refused. */
#define HANDSHAKE_TIMEOUT_MS 10000

typedef struct srv_conn {
    sc__tp_link link;
    bool handshaking; /* TLS: no frame is read before the handshake completes */
    bool want_write;  /* the handshake waits for the socket to be writable */
    char peer[64];    /* the peer's address, for the log */
    uint64_t handshake_deadline_ns;
    bool hello_seen; /* the handshake's first byte was checked */
    atomic_int refs;
    pthread_mutex_t wmu; /* one response frame at a time */
    uint8_t *buf;
    size_t len, cap;
    struct srv_conn *next;
} srv_conn;

typedef struct srv_job {
    sc_transport *t;
    srv_conn *c;
    uint16_t type;
    uint64_t id;
    uint8_t *body;
    size_t body_len;
} srv_job;

static void conn_unref(srv_conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    sc__tp_link_close(&c->link);
    pthread_mutex_destroy(&c->wmu);
    free(c->buf);
    free(c);
}

static sc__tp_handler find_handler(sc_transport *t, uint16_t type)
{
    sc__tp_handler h = {0};
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n_handlers; i++)
        if (t->handlers[i].type == type)
            h = t->handlers[i];
    pthread_mutex_unlock(&t->mu);
    return h;
}

static void write_response(srv_job *j, uint8_t flags, const uint8_t *body, size_t n)
{
    sc_wire_header h = {.flags = (uint8_t)(SC_WIRE_FLAG_RESPONSE | flags),
                        .type = j->type,
                        .request_id = j->id,
                        .body_len = (uint32_t)n};
    uint8_t hdr[SC_WIRE_HEADER_BYTES];
    sc_wire_header_put(&h, hdr);
    pthread_mutex_lock(&j->c->wmu);
    sc_status st = sc__tp_send_all(&j->c->link, hdr, sizeof hdr, body, n,
                                   sc_clock_now_ns() + (uint64_t)SEND_TIMEOUT_MS * 1000000u);
    if (st != SC_OK)
        shutdown(j->c->link.fd, SHUT_RDWR); /* the I/O thread sees the close and drops it */
    pthread_mutex_unlock(&j->c->wmu);
}

static void run_job(void *arg, sc_status pool_st)
{
    srv_job *j = arg;
    sc_transport *t = j->t;
    sc_wire_buf resp;
    sc_wire_buf_init(&resp);
    resp.limit = t->cfg.max_body_bytes;
    char msg[256] = "";
    sc_status st = SC_ECANCELLED;
    if (pool_st == SC_OK) {
        sc__tp_handler h = find_handler(t, j->type);
        if (h.fn) {
            st = h.fn(h.ctx, sc_slice_make(j->body, j->body_len), &resp, msg, sizeof msg);
            if (st == SC_OK && resp.st != SC_OK)
                st = resp.st;
        } else {
            st = SC_EUNSUPPORTED;
            snprintf(msg, sizeof msg, "no handler for transport message type %u", j->type);
        }
    }
    if (st == SC_OK) {
        write_response(j, 0, resp.ptr, resp.len);
    } else {
        sc_wire_buf err;
        sc_wire_buf_init(&err);
        if (sc_wire_error_encode(st, msg[0] ? msg : sc_status_str(st), &err) == SC_OK)
            write_response(j, SC_WIRE_FLAG_ERROR, err.ptr, err.len);
        sc_wire_buf_fini(&err);
    }
    atomic_fetch_add(&t->n_handled, 1);
    sc_wire_buf_fini(&resp);
    conn_unref(j->c);
    free(j->body);
    free(j);
}

/* Cuts whole frames off the front of c->buf and queues them. false: bad frame (close). */
static bool dispatch_frames(sc_transport *t, srv_conn *c)
{
    size_t off = 0;
    bool ok = true;
    while (c->len - off >= SC_WIRE_HEADER_BYTES) {
        sc_wire_header h;
        if (sc_wire_header_get(c->buf + off, t->cfg.max_body_bytes, &h) != SC_OK ||
            (h.flags & SC_WIRE_FLAG_RESPONSE)) {
            ok = false;
            break;
        }
        if (c->len - off - SC_WIRE_HEADER_BYTES < h.body_len)
            break;
        srv_job *j = calloc(1, sizeof *j);
        uint8_t *body = malloc(h.body_len ? h.body_len : 1);
        if (!j || !body) {
            free(j);
            free(body);
            ok = false;
            break;
        }
        memcpy(body, c->buf + off + SC_WIRE_HEADER_BYTES, h.body_len);
        *j = (srv_job){t, c, h.type, h.request_id, body, h.body_len};
        atomic_fetch_add(&c->refs, 1);
        if (find_handler(t, h.type).on_io_thread)
            run_job(j, SC_OK); /* must not queue behind the pool's long handlers */
        else if (sc_threadpool_submit_wait(t->pool, run_job, j, NULL) != SC_OK)
            run_job(j, SC_ECANCELLED);
        off += SC_WIRE_HEADER_BYTES + h.body_len;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
    return ok;
}

/* One read. false: the connection is finished (EOF, error or bad frame). */
static bool conn_read_once(sc_transport *t, srv_conn *c)
{
    if (c->cap - c->len < READ_CHUNK) {
        size_t cap = c->cap ? c->cap * 2 : 2 * READ_CHUNK;
        if (cap > (size_t)t->cfg.max_body_bytes + SC_WIRE_HEADER_BYTES + 2 * READ_CHUNK)
            return false; /* dispatch_frames refuses such a frame before we get here */
        uint8_t *p = realloc(c->buf, cap);
        if (!p)
            return false;
        c->buf = p;
        c->cap = cap;
    }
    if (sc_test_partitioned())
        return false; /* a cut link: the connection drops */
    ssize_t r = sc__tp_link_recv(&c->link, c->buf + c->len, c->cap - c->len);
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (r == 0)
        return false;
    c->len += (size_t)r;
    if (!dispatch_frames(t, c)) {
        atomic_fetch_add(&t->n_bad_frames, 1);
        return false;
    }
    return true;
}

/* Advances a TLS handshake. false: it failed and the peer is refused (logged). */
static bool conn_handshake(sc_transport *t, srv_conn *c)
{
    char why[200];
    int r = -1;
    uint8_t first;
    /* a TLS client speaks first, with a handshake record (content type 22): anything else (a
     * plaintext node's frame) is refused at once rather than read as a record */
    ssize_t n = c->hello_seen ? -1 : recv(c->link.fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
    c->hello_seen |= n == 1;
    if (n == 1 && first != 22)
        snprintf(why, sizeof why, "not a TLS handshake (a plaintext peer?)");
    else if (n == 0)
        snprintf(why, sizeof why, "the peer closed the connection");
    else
        r = sc__tp_tls_handshake_step(&c->link, &c->want_write, why, sizeof why);
    if (r >= 0) {
        c->handshaking = r == 0;
        if (r == 1)
            c->want_write = false;
        return true;
    }
    atomic_fetch_add(&t->n_tls_refused, 1);
    sc_log(SC_LOG_WARN, "transport",
           "refused transport connection from %s: TLS handshake failed: %s", c->peer, why);
    return false;
}

/* Reads what is available (with TLS, also what the session has already decrypted, which poll
 * does not see). false: the connection is finished (EOF, error, bad frame, refused handshake). */
static bool conn_read(sc_transport *t, srv_conn *c)
{
    if (c->handshaking) {
        if (!conn_handshake(t, c))
            return false;
        if (c->handshaking)
            return true;
    }
    do {
        if (!conn_read_once(t, c))
            return false;
    } while (sc__tp_link_pending(&c->link) > 0);
    return true;
}

static void peer_name(const struct sockaddr_storage *ss, socklen_t sl, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
    (void)getnameinfo((const struct sockaddr *)ss, sl, host, sizeof host, port, sizeof port,
                      NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, cap, "%s:%s", host, port);
}

static bool accept_one(sc_transport *t, srv_conn **conns)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(t->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (fd < 0)
        return false;
    if (sc_test_partitioned()) {
        close(fd);
        return true;
    }
    sc__tp_tune_socket(fd);
    srv_conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return false;
    }
    c->link.fd = fd;
    peer_name(&ss, sl, c->peer, sizeof c->peer);
    if (t->tls) {
        if (sc__tp_tls_start(t->tls, &c->link, true, NULL) != SC_OK) {
            close(fd);
            free(c);
            return false;
        }
        c->handshaking = true;
        c->handshake_deadline_ns = sc_clock_now_ns() + HANDSHAKE_TIMEOUT_MS * 1000000ull;
    }
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->wmu, NULL);
    c->next = *conns;
    *conns = c;
    return true;
}

static void *io_main(void *arg)
{
    sc_transport *t = arg;
    srv_conn *conns = NULL;
    struct pollfd *pfds = NULL;
    size_t pcap = 0;
    while (!atomic_load(&t->stopping)) {
        size_t n = 2;
        for (srv_conn *c = conns; c; c = c->next)
            n++;
        if (n > pcap) {
            struct pollfd *p = realloc(pfds, n * 2 * sizeof *p);
            if (!p)
                break;
            pfds = p;
            pcap = n * 2;
        }
        pfds[0] = (struct pollfd){.fd = t->wake[0], .events = POLLIN};
        pfds[1] = (struct pollfd){.fd = t->listen_fd, .events = POLLIN};
        size_t i = 2;
        uint64_t wake_at = 0; /* the first handshake deadline */
        for (srv_conn *c = conns; c; c = c->next) {
            pfds[i++] = (struct pollfd){.fd = c->link.fd,
                                        .events = (short)(c->want_write ? POLLOUT : POLLIN)};
            if (c->handshaking && (!wake_at || c->handshake_deadline_ns < wake_at))
                wake_at = c->handshake_deadline_ns;
        }
        int timeout_ms = -1;
        if (wake_at) {
            uint64_t now = sc_clock_now_ns();
            timeout_ms = wake_at > now ? (int)((wake_at - now) / 1000000u) + 1 : 0;
        }
        if (poll(pfds, n, timeout_ms) < 0 && errno != EINTR)
            break;
        uint64_t now = wake_at ? sc_clock_now_ns() : 0;
        /* a new conn goes to the head and is not in pfds yet: polled from the next round */
        bool added = (pfds[1].revents & POLLIN) && accept_one(t, &conns);
        i = 2;
        srv_conn **link = added ? &conns->next : &conns;
        while (*link && i < n) {
            srv_conn *c = *link;
            short ev = pfds[i++].revents;
            if (!ev && c->handshaking && now >= c->handshake_deadline_ns) {
                atomic_fetch_add(&t->n_tls_refused, 1);
                sc_log(SC_LOG_WARN, "transport",
                       "refused transport connection from %s: TLS handshake timed out", c->peer);
                *link = c->next;
                conn_unref(c);
                continue;
            }
            if (ev && !conn_read(t, c)) {
                *link = c->next;
                conn_unref(c);
                continue;
            }
            link = &c->next;
        }
    }
    while (conns) {
        srv_conn *c = conns;
        conns = c->next;
        conn_unref(c);
    }
    free(pfds);
    return NULL;
}

static sc_status bind_listen(sc_transport *t)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char port[8];
    snprintf(port, sizeof port, "%u", t->cfg.port);
    const char *host = t->cfg.bind_host ? t->cfg.bind_host : "127.0.0.1";
    if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
        return SC_EIO;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bool ok = fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0;
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!ok || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        if (fd >= 0)
            close(fd);
        return SC_EIO;
    }
    t->listen_fd = fd;
    t->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    return SC_OK;
}

sc_status sc__transport_server_start(sc_transport *t)
{
    SC_TRY(bind_listen(t));
    if (pipe2(t->wake, O_CLOEXEC) != 0)
        return SC_EIO;
    SC_TRY(sc_threadpool_new(t->cfg.n_workers, 1024, "sc-transport", &t->pool));
    if (pthread_create(&t->io, NULL, io_main, t) != 0)
        return SC_EIO;
    t->io_started = true;
    return SC_OK;
}

void sc__transport_server_stop(sc_transport *t)
{
    atomic_store(&t->stopping, true);
    if (t->io_started) {
        ssize_t w = write(t->wake[1], "x", 1);
        (void)w;
        pthread_join(t->io, NULL);
        t->io_started = false;
    }
    sc_threadpool_free(t->pool, SC_THREADPOOL_DRAIN);
    t->pool = NULL;
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    t->listen_fd = -1;
    for (int i = 0; i < 2; i++)
        if (t->wake[i] >= 0)
            close(t->wake[i]);
    t->wake[0] = t->wake[1] = -1;
}
