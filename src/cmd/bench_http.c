/* The load driver's HTTP/1.1 client: keep-alive connections on per-thread epoll loops, one
 * request in flight per connection (closed loop, no pipelining), responses parsed with
 * Content-Length or chunked framing. See bench_internal.h. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <fcntl.h>

#include "base/clock.h"
#include "cmd/bench_internal.h"

bool bench_is_error(const bench_resp *r)
{
    if (r->status != 200)
        return true;
    if (!memmem(r->body, r->body_len, "\"timed_out\":false", 17))
        return true;
    if (!memmem(r->body, r->body_len, "\"failed\":0", 10))
        return true;
    return false;
}

int bench_connect(const char *host, int port)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, portstr, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

/* Parses a response at the start of buf[0..len). Returns the total bytes the response spans
 * when complete (filling *r; a chunked body is decoded into `dechunk`), 0 if more bytes are
 * needed, or -1 if the bytes are not HTTP. *close_after is set from "Connection: close". */
static long parse_response(const char *buf, size_t len, sc_buf *dechunk, bench_resp *r,
                           bool *close_after)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end)
        return len > (1u << 20) ? -1 : 0;
    size_t hlen = (size_t)(end - buf) + 4;
    if (len < 12 || memcmp(buf, "HTTP/1.", 7) != 0)
        return -1;
    r->status = atoi(buf + 9);
    long clen = -1;
    bool chunked = false;
    *close_after = buf[7] == '0'; /* HTTP/1.0 closes by default */
    for (const char *line = memchr(buf, '\n', hlen) + 1; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end + 2 - line));
        if (!eol)
            break;
        size_t ll = (size_t)(eol - line);
        if (ll > 15 && strncasecmp(line, "content-length:", 15) == 0)
            clen = atol(line + 15);
        else if (ll > 18 && strncasecmp(line, "transfer-encoding:", 18) == 0 &&
                 memmem(line, ll, "chunked", 7))
            chunked = true;
        else if (ll > 11 && strncasecmp(line, "connection:", 11) == 0)
            *close_after = memmem(line, ll, "close", 5) != NULL;
        line = eol + 1;
    }
    if (r->status == 204 || r->status == 304 || (r->status >= 100 && r->status < 200)) {
        r->body = buf + hlen;
        r->body_len = 0;
        return (long)hlen;
    }
    if (!chunked) {
        if (clen < 0)
            return -1; /* close-delimited bodies are not supported by a keep-alive client */
        if (len < hlen + (size_t)clen)
            return 0;
        r->body = buf + hlen;
        r->body_len = (size_t)clen;
        return (long)(hlen + (size_t)clen);
    }
    sc_vec_clear(dechunk);
    size_t pos = hlen;
    for (;;) {
        const char *crlf = memmem(buf + pos, len - pos, "\r\n", 2);
        if (!crlf)
            return 0;
        char *ep;
        unsigned long n = strtoul(buf + pos, &ep, 16);
        if (ep == buf + pos)
            return -1;
        pos = (size_t)(crlf - buf) + 2;
        if (n == 0) {
            /* trailers end with an empty line */
            const char *fin = memmem(buf + pos, len - pos, "\r\n", 2);
            while (fin && fin != buf + pos) {
                pos = (size_t)(fin - buf) + 2;
                fin = memmem(buf + pos, len - pos, "\r\n", 2);
            }
            if (!fin)
                return 0;
            pos += 2;
            break;
        }
        if (len < pos + n + 2)
            return 0;
        if (sc_vec_append(dechunk, (const unsigned char *)buf + pos, n) != SC_OK)
            return -1;
        pos += n + 2;
    }
    r->body = (const char *)dechunk->ptr;
    r->body_len = dechunk->len;
    return (long)pos;
}

int bench_roundtrip(const char *host, int port, int *fd, const bench_req *req, sc_buf *scratch,
                    bench_resp *resp)
{
    static _Thread_local sc_buf dechunk;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (*fd < 0) {
            if ((*fd = bench_connect(host, port)) < 0)
                return -1;
            /* a hung server fails the request instead of hanging the validation pass */
            struct timeval tv = {.tv_sec = 120};
            setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        }
        size_t off = 0;
        while (off < req->wire_len) {
            ssize_t w = send(*fd, req->wire + off, req->wire_len - off, MSG_NOSIGNAL);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        sc_vec_clear(scratch);
        long used = 0;
        bool close_after = false;
        if (off == req->wire_len) {
            for (;;) {
                if (sc_vec_reserve(scratch, 65536) != SC_OK)
                    return -1;
                ssize_t n = recv(*fd, scratch->ptr + scratch->len, 65536, 0);
                if (n <= 0)
                    break;
                scratch->len += (size_t)n;
                used = parse_response((const char *)scratch->ptr, scratch->len, &dechunk, resp,
                                      &close_after);
                if (used != 0)
                    break;
            }
        }
        if (used > 0) {
            if (close_after) {
                /* the body points into scratch/dechunk, which stay valid */
                close(*fd);
                *fd = -1;
            }
            return 0;
        }
        close(*fd);
        *fd = -1;
        if (used < 0)
            return -1;
    }
    return -1;
}

/* ---- the closed loop ---------------------------------------------------------------------- */

typedef struct conn {
    int fd;
    int id;
    bool busy;      /* a request is in flight */
    size_t pos;     /* next index into the idx list */
    size_t out_off; /* bytes of the current request written */
    const bench_req *cur;
    uint64_t t_sent_ns;
    sc_buf in;
    sc_buf dechunk;
} conn;

typedef struct worker {
    struct bench_pool *pool;
    conn *conns;
    int n_conns;
    int epfd;
    /* per run */
    const bench_req *reqs;
    const size_t *idx;
    size_t n_idx;
    uint64_t deadline_ns;
    bench_counts counts;
    int failed;
    pthread_t th;
} worker;

struct bench_pool {
    char *host;
    int port;
    int n_conns;
    int n_threads;
    worker *w;
};

bench_pool *bench_pool_new(const char *host, int port, int n_conns, int n_threads)
{
    if (n_threads > n_conns)
        n_threads = n_conns;
    if (n_threads < 1)
        n_threads = 1;
    bench_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->host = strdup(host);
    p->port = port;
    p->n_conns = n_conns;
    p->n_threads = n_threads;
    p->w = calloc((size_t)n_threads, sizeof(worker));
    if (!p->host || !p->w) {
        bench_pool_free(p);
        return NULL;
    }
    for (int t = 0; t < n_threads; t++) {
        worker *w = &p->w[t];
        w->pool = p;
        w->epfd = -1;
        w->n_conns = n_conns / n_threads + (t < n_conns % n_threads);
        w->conns = calloc((size_t)w->n_conns, sizeof(conn));
        w->counts.hist = malloc(sizeof(sc_histogram));
        if (!w->conns || !w->counts.hist) {
            bench_pool_free(p);
            return NULL;
        }
        for (int i = 0; i < w->n_conns; i++) {
            w->conns[i].fd = -1;
            w->conns[i].id = t + i * n_threads; /* global connection number */
        }
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
    }
    return p;
}

static void conn_close(worker *w, conn *c)
{
    if (c->fd >= 0) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->busy = false;
    sc_vec_clear(&c->in);
}

void bench_pool_free(bench_pool *p)
{
    if (!p)
        return;
    for (int t = 0; p->w && t < p->n_threads; t++) {
        worker *w = &p->w[t];
        for (int i = 0; w->conns && i < w->n_conns; i++) {
            conn_close(w, &w->conns[i]);
            sc_vec_free(&w->conns[i].in);
            sc_vec_free(&w->conns[i].dechunk);
        }
        free(w->conns);
        free(w->counts.hist);
        if (w->epfd >= 0)
            close(w->epfd);
    }
    free(p->w);
    free(p->host);
    free(p);
}

static int conn_open(worker *w, conn *c)
{
    c->fd = bench_connect(w->pool->host, w->pool->port);
    if (c->fd < 0)
        return -1;
    int fl = fcntl(c->fd, F_GETFL);
    fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

/* Writes what it can of the current request; arms EPOLLOUT if the socket is full. Returns -1
 * on a broken connection. */
static int conn_flush(worker *w, conn *c)
{
    while (c->out_off < c->cur->wire_len) {
        ssize_t n =
            send(c->fd, c->cur->wire + c->out_off, c->cur->wire_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
            epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
            return 0;
        }
        if (n <= 0)
            return -1;
        c->out_off += (size_t)n;
        w->counts.bytes_out += (uint64_t)n;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    return 0;
}

static void conn_send_next(worker *w, conn *c)
{
    if (c->fd < 0 && conn_open(w, c) != 0) {
        w->failed = 1;
        return;
    }
    c->cur = &w->reqs[w->idx[c->pos % w->n_idx]];
    c->pos++;
    c->out_off = 0;
    c->busy = true;
    sc_vec_clear(&c->in);
    c->t_sent_ns = sc_clock_now_ns();
    if (conn_flush(w, c) != 0) {
        /* stale keep-alive connection: reconnect once and resend */
        conn_close(w, c);
        if (conn_open(w, c) != 0 || (c->busy = true, c->out_off = 0, conn_flush(w, c)) != 0) {
            w->failed = 1;
            conn_close(w, c);
        }
    }
}

static void complete(worker *w, conn *c, bool error, uint64_t now)
{
    c->busy = false;
    if (now <= w->deadline_ns) {
        uint64_t us = (now - c->t_sent_ns) / 1000;
        sc_histogram_record(w->counts.hist, us);
        if (error)
            w->counts.n_err++;
        else
            w->counts.n_ok++;
    }
}

static void conn_readable(worker *w, conn *c)
{
    for (;;) {
        if (sc_vec_reserve(&c->in, 65536) != SC_OK) {
            w->failed = 1;
            return;
        }
        ssize_t n = recv(c->fd, c->in.ptr + c->in.len, c->in.cap - c->in.len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            /* the server closed: an in-flight request fails */
            if (c->busy)
                complete(w, c, true, sc_clock_now_ns());
            conn_close(w, c);
            return;
        }
        c->in.len += (size_t)n;
        w->counts.bytes_in += (uint64_t)n;
        if (!c->busy)
            continue; /* unsolicited bytes; ignore */
        bench_resp r;
        bool close_after = false;
        long used =
            parse_response((const char *)c->in.ptr, c->in.len, &c->dechunk, &r, &close_after);
        if (used == 0)
            continue;
        uint64_t now = sc_clock_now_ns();
        complete(w, c, used < 0 || bench_is_error(&r), now);
        if (used < 0 || close_after)
            conn_close(w, c);
        else
            sc_vec_clear(&c->in);
        if (now < w->deadline_ns)
            conn_send_next(w, c);
        return;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < w->n_conns && !w->failed; i++)
        conn_send_next(w, &w->conns[i]);
    struct epoll_event evs[64];
    uint64_t drain_until = w->deadline_ns + 30ull * 1000000000ull;
    for (;;) {
        uint64_t now = sc_clock_now_ns();
        int busy = 0;
        for (int i = 0; i < w->n_conns; i++)
            busy += w->conns[i].busy;
        if (w->failed || (now >= w->deadline_ns && busy == 0) || now >= drain_until)
            break;
        uint64_t until = now < w->deadline_ns ? w->deadline_ns : drain_until;
        int timeout_ms = (int)((until - now) / 1000000) + 1;
        if (timeout_ms > 100)
            timeout_ms = 100;
        int n = epoll_wait(w->epfd, evs, 64, timeout_ms);
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if (c->fd < 0)
                continue;
            if (evs[i].events & EPOLLOUT) {
                if (conn_flush(w, c) != 0) {
                    complete(w, c, true, sc_clock_now_ns());
                    conn_close(w, c);
                    continue;
                }
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_readable(w, c);
        }
        /* connections closed by the server after a response get a fresh socket */
        now = sc_clock_now_ns();
        for (int i = 0; i < w->n_conns && now < w->deadline_ns && !w->failed; i++)
            if (!w->conns[i].busy)
                conn_send_next(w, &w->conns[i]);
    }
    /* requests still in flight after the drain limit: drop their connections */
    for (int i = 0; i < w->n_conns; i++)
        if (w->conns[i].busy)
            conn_close(w, &w->conns[i]);
    return NULL;
}

int bench_pool_run(bench_pool *p, const bench_req *reqs, const size_t *idx, size_t n_idx,
                   double duration_s, bench_counts *out)
{
    if (n_idx == 0)
        return 0;
    uint64_t deadline = sc_clock_now_ns() + (uint64_t)(duration_s * 1e9);
    for (int t = 0; t < p->n_threads; t++) {
        worker *w = &p->w[t];
        w->reqs = reqs;
        w->idx = idx;
        w->n_idx = n_idx;
        w->deadline_ns = deadline;
        w->failed = 0;
        w->counts.n_ok = w->counts.n_err = w->counts.bytes_in = w->counts.bytes_out = 0;
        sc_histogram_init(w->counts.hist);
        for (int i = 0; i < w->n_conns; i++)
            w->conns[i].pos = (size_t)w->conns[i].id * n_idx / (size_t)p->n_conns;
    }
    int failed = 0;
    for (int t = 1; t < p->n_threads; t++)
        if (pthread_create(&p->w[t].th, NULL, worker_main, &p->w[t]) != 0)
            return -1;
    worker_main(&p->w[0]);
    for (int t = 1; t < p->n_threads; t++)
        pthread_join(p->w[t].th, NULL);
    for (int t = 0; t < p->n_threads; t++) {
        worker *w = &p->w[t];
        failed |= w->failed;
        if (out) {
            out->n_ok += w->counts.n_ok;
            out->n_err += w->counts.n_err;
            out->bytes_in += w->counts.bytes_in;
            out->bytes_out += w->counts.bytes_out;
            sc_histogram_merge(out->hist, w->counts.hist);
        }
    }
    return failed ? -1 : 0;
}
