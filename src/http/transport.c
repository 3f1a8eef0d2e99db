/* The epoll transport: one epoll set shared by N worker threads, every socket non-blocking
 * and registered once, edge-triggered, so any free worker serves any ready connection. One
 * worker at a time holds a connection (its requests run on that worker, in order) through an
 * atomic state word: "owned", and "an event came while owned" (the owner then looks again
 * before letting go), so no system call re-arms a connection between requests. Closed
 * connections' slots are kept for reuse, never freed under a worker that may still hold an
 * event for them: a generation number in the state word and in the epoll tag makes such an
 * event harmless. A worker takes one event per epoll_wait: taking a batch would pin the
 * batch's connections to it while another worker idles. Keep-alive and pipelining (responses
 * in request order, no reading while a response is unsent), TLS with GnuTLS,
 * http.max_open_connections, and a reaper thread that closes connections past their deadline
 * (idle keep-alive, a head or body that does not arrive, a client that does not read).
 * Per-connection memory is a small struct (plus a TLS session): receive and send buffers are
 * borrowed from the worker and only copied into the connection when a request or response is
 * left half done. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/tasks.h"
#include "http/internal.h"

#define SCRATCH_BYTES 65536

/* Connection slots are allocated this many at a time and reused, never freed while serving. */
#define SLOT_CHUNK 256

/* The state word of a connection: its generation in the high 32 bits, these flags below. */
#define ST_OWNED 1u   /* a worker holds the connection */
#define ST_PENDING 2u /* an event came while it was held: the holder looks again */

/* epoll tags: a connection's is (generation << 32) | slot index. */
#define TAG_LISTEN UINT64_MAX
#define TAG_STOP (UINT64_MAX - 1)

typedef struct conn {
    _Atomic uint64_t st; /* generation and ST_* flags */
    uint32_t idx;        /* slot index */
    bool want_out;       /* registered for EPOLLOUT too (after a send had to wait) */
    int fd;
    gnutls_session_t tls;
    bool handshaken;
    bool tls_send_again; /* gnutls_record_send returned AGAIN: resume with (NULL, 0) */
    bool close_after;    /* close once `out` is sent */
    bool head_checked;   /* the current request passed sc__http_precheck */
    bool eof;            /* the peer closed its side */
    bool linger;         /* answered and half-closed: dropping input until the peer closes */
    bool refused;        /* closing on a refusal: the client may still be sending */
    sc_buf in;           /* received bytes not consumed yet (empty when idle) */
    sc_buf out;          /* response bytes not sent yet (empty when idle) */
    size_t out_off;
    uint64_t reserved; /* in-flight breaker bytes of the current request */
    uint64_t discard;  /* body bytes of a refused request still to drop */
    sc_http_chunked ch;
    uint64_t due_ms;              /* deadline kept by the worker that holds the connection */
    _Atomic uint64_t deadline_ms; /* published for the reaper at re-arm; UINT64_MAX = busy */
    bool reaped;                  /* under ep->mu */
    struct conn *prev, *next;     /* ep->conns (or next: ep->free_slots), under ep->mu */
} conn;

typedef struct worker {
    sc__http_ep *ep;
    pthread_t thread;
    uint8_t *scratch; /* SCRATCH_BYTES */
    sc_buf out;       /* responses of the current event */
} worker;

struct sc__http_ep {
    sc_http_config cfg;
    sc_node *node;
    sc__http_tls *tls;
    int lfd, epfd, evfd;
    worker *workers;
    unsigned n_workers;
    pthread_t reaper;
    bool reaper_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping; /* under mu */
    conn *conns;   /* under mu */
    atomic_uint n_conns;
    atomic_bool spinning;    /* a worker is polling for the next event (busy_poll_us) */
    _Atomic(conn *) *chunks; /* n_chunks arrays of SLOT_CHUNK slots, allocated as needed */
    size_t n_chunks;
    uint32_t n_slots; /* slots handed out so far, under mu */
    conn *free_slots; /* closed connections' slots, under mu */
};

static uint64_t now_ms(void)
{
    return sc_clock_now_ns() / 1000000;
}

static void set_deadline(sc__http_ep *ep, conn *c)
{
    c->due_ms = now_ms() + (uint64_t)ep->cfg.timeout_s * 1000;
}

static conn *slot_at(sc__http_ep *ep, uint32_t idx)
{
    conn *chunk = atomic_load_explicit(&ep->chunks[idx / SLOT_CHUNK], memory_order_acquire);
    return &chunk[idx % SLOT_CHUNK];
}

static uint64_t tag_of(const conn *c)
{
    return (atomic_load_explicit(&c->st, memory_order_relaxed) >> 32) << 32 | c->idx;
}

/* Registers c's socket again with its events (edge-triggered), which queues an event when
 * the socket is ready now: the way to be called back for input left unread. */
static bool rearm(sc__http_ep *ep, conn *c)
{
    struct epoll_event ev = {.events =
                                 EPOLLIN | EPOLLRDHUP | EPOLLET | (c->want_out ? EPOLLOUT : 0),
                             .data.u64 = tag_of(c)};
    return epoll_ctl(ep->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

/* Asks for EPOLLOUT edges too once a send has had to wait (they are needed only then). */
static bool want_out(sc__http_ep *ep, conn *c)
{
    if (c->want_out)
        return true;
    c->want_out = true;
    return rearm(ep, c);
}

/* Takes a free slot (under ep->mu) with every field reset but its state word and index. NULL
 * when none is left (past http.max_open_connections plus a chunk) or out of memory. */
static conn *slot_take(sc__http_ep *ep)
{
    conn *c = ep->free_slots;
    if (c) {
        ep->free_slots = c->next;
    } else {
        uint32_t idx = ep->n_slots;
        if (idx / SLOT_CHUNK >= ep->n_chunks)
            return NULL;
        conn *chunk = atomic_load_explicit(&ep->chunks[idx / SLOT_CHUNK], memory_order_relaxed);
        if (!chunk) {
            chunk = calloc(SLOT_CHUNK, sizeof *chunk);
            if (!chunk)
                return NULL;
            for (uint32_t i = 0; i < SLOT_CHUNK; i++) {
                atomic_init(&chunk[i].st, (uint64_t)1 << 32);
                chunk[i].idx = idx + i;
            }
            atomic_store_explicit(&ep->chunks[idx / SLOT_CHUNK], chunk, memory_order_release);
        }
        c = &chunk[idx % SLOT_CHUNK];
        ep->n_slots++;
    }
    /* Everything after the state word and the index (an event that outlived the slot's last
     * connection may still read the state word). */
    memset((char *)c + offsetof(conn, want_out), 0, sizeof *c - offsetof(conn, want_out));
    return c;
}

/* Closes c (held by the caller, or by no one once the workers are gone) and puts its slot
 * back with the next generation, so that events still on their way to a worker are dropped. */
static void conn_close(sc__http_ep *ep, conn *c)
{
    sc_breaker_inflight_release(ep->node, c->reserved);
    c->reserved = 0;
    sc_vec_free(&c->in);
    sc_vec_free(&c->out);
    pthread_mutex_lock(&ep->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        ep->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->tls) {
        if (c->handshaken)
            (void)gnutls_bye(c->tls, GNUTLS_SHUT_WR);
        gnutls_deinit(c->tls);
        c->tls = NULL;
    }
    close(c->fd);
    c->fd = -1;
    uint64_t gen = (atomic_load_explicit(&c->st, memory_order_relaxed) >> 32) + 1;
    atomic_store_explicit(&c->st, (gen & 0xffffffffu ? gen : 1) << 32, memory_order_release);
    c->prev = NULL;
    c->next = ep->free_slots;
    ep->free_slots = c;
    pthread_mutex_unlock(&ep->mu);
    atomic_fetch_sub(&ep->n_conns, 1);
}

/* Takes hold of the connection of an event tagged with generation gen: true when this worker
 * now holds it; false when another worker does (it was told to look again) or the event
 * outlived its connection. */
static bool acquire(conn *c, uint64_t gen)
{
    uint64_t s = atomic_load_explicit(&c->st, memory_order_acquire);
    for (;;) {
        if (s >> 32 != gen)
            return false;
        uint64_t want = s & ST_OWNED ? s | ST_PENDING : s | ST_OWNED;
        if (atomic_compare_exchange_weak_explicit(&c->st, &s, want, memory_order_acq_rel,
                                                  memory_order_acquire))
            return !(s & ST_OWNED);
    }
}

/* Lets go of c unless an event came since the holder last looked (then false: look again). */
static bool release(conn *c, uint64_t gen)
{
    uint64_t owned = gen << 32 | ST_OWNED;
    return atomic_compare_exchange_strong_explicit(&c->st, &owned, gen << 32, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* ---- socket I/O, plain or TLS: > 0 bytes, 0 would block, -1 closed or failed ---- */

static ssize_t io_read(conn *c, uint8_t *buf, size_t cap)
{
    if (c->tls) {
        ssize_t n = gnutls_record_recv(c->tls, buf, cap);
        if (n > 0)
            return n;
        if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
            return 0;
        c->eof = true;
        return -1;
    }
    for (;;) {
        ssize_t n = recv(c->fd, buf, cap, 0);
        if (n > 0)
            return n;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        c->eof = true;
        return -1;
    }
}

static ssize_t io_write(conn *c, const uint8_t *buf, size_t len)
{
    if (c->tls) {
        ssize_t n = c->tls_send_again ? gnutls_record_send(c->tls, NULL, 0)
                                      : gnutls_record_send(c->tls, buf, len);
        c->tls_send_again = n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED;
        if (n > 0)
            return n;
        return c->tls_send_again ? 0 : -1;
    }
    for (;;) {
        ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

/* Sends buf[*off..len); true when all of it went (or false: would block or failed, see
 * *failed). */
static bool send_all(sc__http_ep *ep, conn *c, const uint8_t *buf, size_t len, size_t *off,
                     bool *failed)
{
    *failed = false;
    while (*off < len) {
        ssize_t n = io_write(c, buf + *off, len - *off);
        if (n < 0) {
            *failed = true;
            return false;
        }
        if (n == 0)
            return false;
        *off += (size_t)n;
        set_deadline(ep, c); /* a reading client is not a slow one */
    }
    return true;
}

/* ---- requests ---- */

/* Checks a new head once (sc__http_precheck) and answers `Expect: 100-continue`. False when the
 * request was refused (the refusal is in w->out); *skip then says how many bytes to drop when
 * the connection stays open. */
static bool check_head(sc__http_ep *ep, worker *w, conn *c, const sc_http_head *h, size_t have,
                       size_t *skip)
{
    *skip = 0;
    if (c->head_checked)
        return true;
    bool close;
    if (!sc__http_precheck(&ep->cfg, ep->node, h, &c->reserved, &w->out, &close)) {
        if (close) {
            c->close_after = c->refused = true;
        } else {
            *skip = h->head_len;
            c->discard = h->content_length > 0 ? (uint64_t)h->content_length : 0;
        }
        return false;
    }
    c->head_checked = true;
    sc_http_chunked_init(&c->ch);
    bool body_missing =
        h->chunked || have < (size_t)(h->content_length > 0 ? h->content_length : 0);
    if (h->expect_continue && h->minor >= 1 && body_missing) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (sc_vec_append(&w->out, (const unsigned char *)cont, sizeof cont - 1) != SC_OK)
            c->close_after = true;
    }
    return true;
}

/* The body of the request whose head is h at buf[0..*len): SC_OK with *ready when complete
 * (*body_len decoded bytes at buf + head_len, *used raw bytes after the head). A chunked body
 * is decoded in place and the not-yet-complete tail compacted, which shrinks *len. */
static bool body_of(sc__http_ep *ep, worker *w, conn *c, const sc_http_head *h, uint8_t *buf,
                    size_t *len, size_t *body_len, size_t *used)
{
    uint8_t *body = buf + h->head_len;
    size_t have = *len - h->head_len;
    if (!h->chunked) {
        size_t cl = h->content_length > 0 ? (size_t)h->content_length : 0;
        *body_len = *used = cl;
        return have >= cl;
    }
    bool done;
    sc_http_perr e;
    if (sc_http_chunked_decode(&c->ch, body, have, ep->cfg.max_content_length, &done, &e) !=
        SC_OK) {
        sc__http_write_perr(&e, &w->out);
        c->close_after = c->refused = true;
        return false;
    }
    if (done) {
        *body_len = c->ch.dst;
        *used = c->ch.src;
        return true;
    }
    size_t gap = c->ch.src - c->ch.dst;
    if (gap) {
        memmove(body + c->ch.dst, body + c->ch.src, have - c->ch.src);
        *len -= gap;
        c->ch.src = c->ch.dst;
    }
    return false;
}

/* Serves every complete request at the start of buf[0..*len), appending the responses to
 * w->out in order; returns the bytes consumed (*len may shrink, see body_of). */
static size_t serve_requests(sc__http_ep *ep, worker *w, conn *c, uint8_t *buf, size_t *len)
{
    size_t off = 0;
    while (off < *len && !c->close_after) {
        if (c->discard) {
            size_t n = *len - off < c->discard ? *len - off : (size_t)c->discard;
            off += n;
            c->discard -= n;
            continue;
        }
        sc_http_head h;
        bool complete;
        sc_http_perr e;
        if (sc_http_parse_head((const char *)buf + off, *len - off, SC__HTTP_MAX_HEAD, &h,
                               &complete, &e) != SC_OK) {
            sc__http_write_perr(&e, &w->out);
            c->close_after = c->refused = true;
            break;
        }
        if (!complete)
            break;
        size_t skip;
        if (!check_head(ep, w, c, &h, *len - off - h.head_len, &skip)) {
            off += skip;
            continue;
        }
        size_t rest = *len - off, body_len, used;
        bool ready = body_of(ep, w, c, &h, buf + off, &rest, &body_len, &used);
        *len = off + rest;
        if (!ready)
            break;
        if (h.chunked && body_len) {
            /* The size of a chunked body is known only now: the in-flight breaker then. */
            if (!sc_breaker_inflight_reserve(ep->node, body_len)) {
                sc_http_perr be = {429, "circuit_breaking_exception",
                                   "[in_flight_requests] Data too large, data for "
                                   "[<http_request>] would be larger than the limit"};
                sc__http_write_perr(&be, &w->out);
                c->close_after = true;
                break;
            }
            c->reserved = body_len;
        }
        sc__http_outcome oc;
        sc__http_exchange(&ep->cfg, ep->node, &h, buf + off + h.head_len, body_len, c->fd,
                          c->reserved, &w->out, &oc);
        c->reserved = 0;
        c->head_checked = false;
        off += h.head_len + used;
        if (oc.close)
            c->close_after = true;
    }
    return off;
}

/* Reads what the socket has and serves the complete requests; leftovers of a half-received
 * request are kept in c->in. The registration is edge-triggered, so reading stops only when
 * the socket has nothing more (a plain read shorter than asked for means that: TCP hands over
 * all it holds) or after a few rounds, for fairness, with *more set (the caller asks epoll for
 * another event then). False when the connection failed. */
static bool read_and_serve(sc__http_ep *ep, worker *w, conn *c, bool *more)
{
    *more = false;
    for (int round = 0; !c->eof && !c->close_after; round++) {
        if (round == 8) {
            *more = true;
            break;
        }
        bool scratch = c->in.len == 0;
        uint8_t *dst = w->scratch;
        size_t cap = SCRATCH_BYTES;
        if (!scratch) {
            if (sc_vec_reserve(&c->in, SCRATCH_BYTES) != SC_OK)
                return false;
            dst = c->in.ptr + c->in.len;
            cap = c->in.cap - c->in.len;
        }
        ssize_t n = io_read(c, dst, cap);
        if (n <= 0)
            break;
        if (c->head_checked && n >= 1024)
            set_deadline(ep, c); /* a body arriving at a fair pace */
        uint8_t *buf = scratch ? w->scratch : c->in.ptr;
        size_t len = scratch ? (size_t)n : c->in.len + (size_t)n;
        size_t used = serve_requests(ep, w, c, buf, &len);
        if (scratch) {
            if (len > used && sc_vec_append(&c->in, buf + used, len - used) != SC_OK)
                return false;
        } else {
            memmove(c->in.ptr, c->in.ptr + used, len - used);
            c->in.len = len - used;
        }
        if (!c->in.len)
            sc_vec_free(&c->in); /* an idle connection holds no buffer */
        /* One TLS record per read: only a read that would block says the socket is empty. */
        if ((size_t)n < cap && !c->tls)
            break;
    }
    return true;
}

/* Sends w->out; what does not go now moves to c->out (the buffers are swapped, not copied).
 * False when the connection failed. */
static bool flush_worker_out(sc__http_ep *ep, worker *w, conn *c)
{
    if (!w->out.len)
        return true;
    size_t off = 0;
    bool failed;
    if (send_all(ep, c, w->out.ptr, w->out.len, &off, &failed)) {
        w->out.len = 0;
        if (w->out.cap > (1u << 20))
            sc_vec_free(&w->out);
        return true;
    }
    if (failed)
        return false;
    c->out = w->out;
    c->out_off = off;
    w->out = (sc_buf){0};
    return true;
}

/* TLS handshake step; true when done (false: waiting for the socket or closed, *gone says
 * closed). */
static bool handshake(sc__http_ep *ep, conn *c, bool *gone)
{
    *gone = false;
    int rc = gnutls_handshake(c->tls);
    if (rc == GNUTLS_E_SUCCESS) {
        c->handshaken = true;
        return true;
    }
    if ((rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) &&
        (!gnutls_record_get_direction(c->tls) || want_out(ep, c)))
        return false;
    sc_log(SC_LOG_DEBUG, "http", "TLS handshake failed: %s", gnutls_strerror(rc));
    conn_close(ep, c);
    *gone = true;
    return false;
}

/* A lingering connection's input is dropped until the peer closes. False when c was closed. */
static bool drain(sc__http_ep *ep, worker *w, conn *c)
{
    for (int k = 0; k < 16; k++) {
        ssize_t n = io_read(c, w->scratch, SCRATCH_BYTES);
        if (n < 0) {
            conn_close(ep, c);
            return false;
        }
        if (n == 0)
            return true; /* empty: the next edge calls back */
    }
    if (rearm(ep, c)) /* more to drop: after the other connections' turn */
        return true;
    conn_close(ep, c);
    return false;
}

/* Closes c once its answer is out. A client may still be sending the body of a refused
 * request: closing with unread input would reset the connection and could destroy the answer
 * before the client reads it, so a plain connection is half-closed and drained first (for at
 * most 2 s, bounded by the reaper). False when c was closed. */
static bool finish(sc__http_ep *ep, worker *w, conn *c)
{
    bool unread = c->refused || c->in.len || c->discard;
    if (!unread || c->tls || c->eof || c->linger || shutdown(c->fd, SHUT_WR) != 0) {
        conn_close(ep, c);
        return false;
    }
    c->linger = true;
    c->due_ms = now_ms() + 2000;
    sc_vec_free(&c->in);
    return drain(ep, w, c);
}

/* Serves what a connection this worker holds is ready for, up to where it has to wait for
 * the socket. False when c was closed. */
static bool serve_conn(sc__http_ep *ep, worker *w, conn *c)
{
    if (c->linger)
        return drain(ep, w, c);
    bool gone;
    if (c->tls && !c->handshaken && !handshake(ep, c, &gone))
        return !gone;
    if (c->out_off < c->out.len) {
        bool failed;
        if (!send_all(ep, c, c->out.ptr, c->out.len, &c->out_off, &failed)) {
            if (!failed && want_out(ep, c))
                return true;
            conn_close(ep, c);
            return false;
        }
        sc_vec_free(&c->out);
        c->out_off = 0;
        if (c->close_after)
            return finish(ep, w, c);
    }
    w->out.len = 0;
    bool more;
    if (!read_and_serve(ep, w, c, &more) || !flush_worker_out(ep, w, c)) {
        w->out.len = 0;
        conn_close(ep, c);
        return false;
    }
    if (c->out_off < c->out.len) {
        if (want_out(ep, c))
            return true;
        conn_close(ep, c);
        return false;
    }
    if (c->close_after || c->eof)
        return finish(ep, w, c);
    if (!c->in.len)
        set_deadline(ep, c); /* idle keep-alive from now */
    if (more && !rearm(ep, c)) {
        conn_close(ep, c);
        return false;
    }
    return true;
}

/* One readiness event of a connection: served by this worker if no other holds it (that one
 * is told to look again instead). Holding it, the worker looks again for as long as events
 * come while it serves, then lets go and publishes the deadline for the reaper. */
static void on_conn(sc__http_ep *ep, worker *w, uint64_t tag)
{
    conn *c = slot_at(ep, (uint32_t)tag);
    uint64_t gen = tag >> 32;
    if (!acquire(c, gen))
        return;
    do {
        atomic_fetch_and_explicit(&c->st, ~(uint64_t)ST_PENDING, memory_order_acq_rel);
        atomic_store_explicit(&c->deadline_ms, UINT64_MAX, memory_order_relaxed);
        if (!serve_conn(ep, w, c))
            return;
        atomic_store_explicit(&c->deadline_ms, c->due_ms, memory_order_relaxed);
    } while (!release(c, gen));
}

/* ---- accepting ---- */

/* Past http.max_open_connections: a prompt 503 (plain HTTP only) and close. */
static void refuse_conn(sc__http_ep *ep, int fd)
{
    static const char body[] =
        "{\"error\":{\"root_cause\":[{\"type\":\"too_many_connections_exception\",\"reason\":"
        "\"too many open connections (http.max_open_connections)\"}],\"type\":"
        "\"too_many_connections_exception\",\"reason\":\"too many open connections "
        "(http.max_open_connections)\"},\"status\":503}";
    if (!ep->tls) {
        char msg[512];
        int n = snprintf(msg, sizeof msg,
                         "HTTP/1.1 503 Service Unavailable\r\nX-elastic-product: Elasticsearch\r\n"
                         "content-type: application/json\r\ncontent-length: %zu\r\n"
                         "connection: close\r\n\r\n%s",
                         sizeof body - 1, body);
        (void)!send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close(fd);
}

static void add_conn(sc__http_ep *ep, int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    gnutls_session_t tls = NULL;
    if (ep->tls && sc__http_tls_session(ep->tls, fd, &tls) != SC_OK) {
        close(fd);
        return;
    }
    pthread_mutex_lock(&ep->mu);
    conn *c = slot_take(ep);
    if (!c) {
        pthread_mutex_unlock(&ep->mu);
        if (tls)
            gnutls_deinit(tls);
        close(fd);
        return;
    }
    c->fd = fd;
    c->tls = tls;
    set_deadline(ep, c);
    atomic_store_explicit(&c->deadline_ms, c->due_ms, memory_order_relaxed);
    c->next = ep->conns;
    if (ep->conns)
        ep->conns->prev = c;
    ep->conns = c;
    pthread_mutex_unlock(&ep->mu);
    atomic_fetch_add(&ep->n_conns, 1);
    /* From here another worker may hold c: an event can come before epoll_ctl returns. Only
     * a failed registration (no event possible) leaves c to this worker. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.u64 = tag_of(c)};
    if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        conn_close(ep, c);
}

/* Accepts what is pending (up to 64, then lets other events in) and re-arms the listener.
 * Out of file descriptors, the listener stays disarmed until the reaper's next round. */
static void on_listen(sc__http_ep *ep)
{
    for (int k = 0; k < 64; k++) {
        int fd = accept4(ep->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                sc_log(SC_LOG_WARN, "http", "cannot accept connections: %s", strerror(errno));
                return;
            }
            break;
        }
        if (atomic_load(&ep->n_conns) >= ep->cfg.max_open_connections)
            refuse_conn(ep, fd);
        else
            add_conn(ep, fd);
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = TAG_LISTEN};
    (void)epoll_ctl(ep->epfd, EPOLL_CTL_MOD, ep->lfd, &ev);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    sc__http_ep *ep = w->ep;
    uint64_t spin_ns = (uint64_t)ep->cfg.busy_poll_us * 1000;
    for (;;) {
        struct epoll_event ev;
        int n = 0;
        /* After an event, one worker at a time polls for the next before it sleeps: a
         * keep-alive client's next request, sent tens of microseconds after the response,
         * finds a worker awake instead of paying a wake-up (at one connection a wake-up and
         * the cold caches after it cost about as much as a cheap query). A busy server always
         * has an event ready and never polls empty; the poll yields the core to any other
         * runnable thread between looks (a client on the same machine loses nothing). */
        if (spin_ns && !atomic_exchange_explicit(&ep->spinning, true, memory_order_acquire)) {
            uint64_t end = sc_clock_now_ns() + spin_ns;
            for (;;) {
                n = epoll_wait(ep->epfd, &ev, 1, 0);
                if (n != 0 || sc_clock_now_ns() >= end)
                    break;
                sched_yield();
            }
            atomic_store_explicit(&ep->spinning, false, memory_order_release);
        }
        if (n <= 0)
            n = epoll_wait(ep->epfd, &ev, 1, -1);
        if (n <= 0)
            continue;
        if (ev.data.u64 == TAG_STOP)
            break;
        if (ev.data.u64 == TAG_LISTEN)
            on_listen(ep);
        else
            on_conn(ep, w, ev.data.u64);
    }
    return NULL;
}

/* Every 500 ms: shuts down the sockets of connections past their deadline that no worker
 * holds (the worker that gets the wake-up closes them), and re-arms the listener in case it
 * was left disarmed for lack of file descriptors. */
static void *reaper_main(void *arg)
{
    sc__http_ep *ep = arg;
    pthread_mutex_lock(&ep->mu);
    while (!ep->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 500000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&ep->cv, &ep->mu, &ts);
        if (ep->stopping)
            break;
        uint64_t now = now_ms();
        for (conn *c = ep->conns; c; c = c->next)
            if (!c->reaped && atomic_load_explicit(&c->deadline_ms, memory_order_relaxed) < now) {
                (void)shutdown(c->fd, SHUT_RDWR);
                c->reaped = true;
            }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = TAG_LISTEN};
        (void)epoll_ctl(ep->epfd, EPOLL_CTL_MOD, ep->lfd, &ev);
    }
    pthread_mutex_unlock(&ep->mu);
    return NULL;
}

/* ---- start / stop ---- */

/* Raises the soft RLIMIT_NOFILE so that max_open_connections sockets fit beside the shards'
 * files; lowers the connection limit (with a warning) when the hard limit is too small. */
static void raise_nofile(sc__http_ep *ep)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0)
        return;
    rlim_t want = (rlim_t)ep->cfg.max_open_connections + 1024;
    if (r.rlim_cur < want) {
        r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max >= want ? want : r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
        (void)getrlimit(RLIMIT_NOFILE, &r);
    }
    if (r.rlim_cur < want) {
        size_t fit = r.rlim_cur > 1024 + 64 ? (size_t)(r.rlim_cur - 1024) : 64;
        sc_log(SC_LOG_WARN, "http",
               "file descriptor limit %llu: http.max_open_connections lowered from %zu to %zu",
               (unsigned long long)r.rlim_cur, ep->cfg.max_open_connections, fit);
        ep->cfg.max_open_connections = fit;
    }
}

static sc_status listen_on(sc__http_ep *ep, const sc_http_config *c, uint16_t *port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    const char *bind_addr = c->bind && *c->bind ? c->bind : "127.0.0.1";
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    socklen_t sl;
    if (inet_pton(AF_INET, bind_addr, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(c->port);
        sl = sizeof *sin;
    } else if (inet_pton(AF_INET6, bind_addr, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(c->port);
        sl = sizeof *sin6;
    } else {
        sc_log(SC_LOG_ERROR, "http", "invalid bind address [%s]", bind_addr);
        return SC_EINVAL;
    }
    ep->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (ep->lfd < 0 || setsockopt(ep->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(ep->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(ep->lfd, 4096) != 0 ||
        getsockname(ep->lfd, (struct sockaddr *)&ss, &sl) != 0) {
        sc_log(SC_LOG_ERROR, "http", "cannot listen on %s:%u: %s", bind_addr, (unsigned)c->port,
               strerror(errno));
        return SC_EIO;
    }
    *port = ntohs(ss.ss_family == AF_INET ? sin->sin_port : sin6->sin6_port);
    return SC_OK;
}

static sc_status start_threads(sc__http_ep *ep)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = TAG_LISTEN};
    struct epoll_event sev = {.events = EPOLLIN, .data.u64 = TAG_STOP};
    if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->lfd, &ev) != 0 ||
        epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->evfd, &sev) != 0)
        return SC_EIO;
    ep->workers = calloc(ep->n_workers, sizeof *ep->workers);
    if (!ep->workers)
        return SC_ENOMEM;
    for (unsigned i = 0; i < ep->n_workers; i++) {
        worker *w = &ep->workers[i];
        w->ep = ep;
        w->scratch = malloc(SCRATCH_BYTES);
        if (!w->scratch || pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            free(w->scratch);
            w->scratch = NULL;
            ep->n_workers = i;
            return SC_ENOMEM;
        }
    }
    if (pthread_create(&ep->reaper, NULL, reaper_main, ep) != 0)
        return SC_ENOMEM;
    ep->reaper_started = true;
    return SC_OK;
}

sc_status sc__http_ep_start(const sc_http_config *c, sc_node *node, sc__http_ep **out,
                            uint16_t *port)
{
    *out = NULL;
    sc__http_ep *ep = calloc(1, sizeof *ep);
    if (!ep)
        return SC_ENOMEM;
    ep->cfg = *c;
    ep->node = node;
    ep->lfd = ep->epfd = ep->evfd = -1;
    pthread_mutex_init(&ep->mu, NULL);
    pthread_cond_init(&ep->cv, NULL);
    if (!ep->cfg.max_open_connections)
        ep->cfg.max_open_connections = 10000;
    raise_nofile(ep);
    /* Slots for max_open_connections: on_listen refuses beyond it, and a closed connection's
     * slot is free again before it stops counting. */
    ep->n_chunks = (ep->cfg.max_open_connections + SLOT_CHUNK - 1) / SLOT_CHUNK;
    ep->chunks = calloc(ep->n_chunks, sizeof *ep->chunks);
    if (!ep->chunks) {
        pthread_mutex_destroy(&ep->mu);
        pthread_cond_destroy(&ep->cv);
        free(ep);
        return SC_ENOMEM;
    }
    unsigned threads = c->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 2;
    }
    ep->n_workers = threads;
    sc_status st = SC_OK;
    if (c->tls_cert_file || c->tls_key_file)
        st = sc__http_tls_new(c->tls_cert_file, c->tls_key_file, &ep->tls);
    if (st == SC_OK)
        st = listen_on(ep, c, port);
    if (st == SC_OK) {
        ep->epfd = epoll_create1(EPOLL_CLOEXEC);
        ep->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        st = ep->epfd < 0 || ep->evfd < 0 ? SC_EIO : start_threads(ep);
    }
    if (st != SC_OK) {
        sc__http_ep_stop(ep);
        return st;
    }
    *out = ep;
    return SC_OK;
}

void sc__http_ep_stop(sc__http_ep *ep)
{
    if (!ep)
        return;
    pthread_mutex_lock(&ep->mu);
    ep->stopping = true;
    pthread_cond_broadcast(&ep->cv);
    pthread_mutex_unlock(&ep->mu);
    if (ep->reaper_started)
        pthread_join(ep->reaper, NULL);
    /* No new connections; the workers finish the event they hold (a request runs to its
     * response), then see the level-triggered stop event and leave. */
    if (ep->lfd >= 0 && ep->epfd >= 0)
        (void)epoll_ctl(ep->epfd, EPOLL_CTL_DEL, ep->lfd, NULL);
    if (ep->evfd >= 0) {
        uint64_t one = 1;
        (void)!write(ep->evfd, &one, sizeof one);
    }
    for (unsigned i = 0; i < ep->n_workers && ep->workers; i++) {
        pthread_join(ep->workers[i].thread, NULL);
        free(ep->workers[i].scratch);
        sc_vec_free(&ep->workers[i].out);
    }
    free(ep->workers);
    while (ep->conns)
        conn_close(ep, ep->conns);
    for (size_t i = 0; i < ep->n_chunks; i++)
        free(atomic_load_explicit(&ep->chunks[i], memory_order_relaxed));
    free(ep->chunks);
    if (ep->lfd >= 0)
        close(ep->lfd);
    if (ep->epfd >= 0)
        close(ep->epfd);
    if (ep->evfd >= 0)
        close(ep->evfd);
    sc__http_tls_free(ep->tls);
    pthread_mutex_destroy(&ep->mu);
    pthread_cond_destroy(&ep->cv);
    free(ep);
}
