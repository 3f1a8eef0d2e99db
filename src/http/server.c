/* libmicrohttpd glue: connection state, body accumulation, dispatch, response headers. */
#include "http/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/rest.h"
#include "base/arena.h"
#include "base/clock.h"
#include "base/vec.h"
#include "cluster/log.h"
#include "cluster/tasks.h"
#include "http/router.h"

struct sc_http_server {
    struct MHD_Daemon *d;
    sc_node *node;
    sc_http_config cfg;
    uint16_t port;
};

typedef struct conn_state {
    sc_buf body;
    uint64_t reserved; /* bytes held on the in-flight requests breaker */
    bool too_large;
    bool tripped;      /* the in-flight breaker refused the body */
    bool responded;
} conn_state;

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
}

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    sc_rest_req *req = cls;
    if (req->n_params >= SC_REST_MAX_PARAMS || !key)
        return MHD_NO;
    req->params[req->n_params].key = key;
    req->params[req->n_params].value = value ? value : "";
    req->n_params++;
    return MHD_YES;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, sc_rest_resp *r)
{
    struct MHD_Response *mr;
    if (r->body.len) {
        mr = MHD_create_response_from_buffer(r->body.len, r->body.ptr, MHD_RESPMEM_MUST_FREE);
        if (mr) {
            r->body.ptr = NULL;
            r->body.len = r->body.cap = 0;
        }
    } else {
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!mr)
        return MHD_NO;
    MHD_add_response_header(mr, "X-Elastic-Product", "Elasticsearch");
    const char *opaque = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Opaque-Id");
    if (opaque)
        MHD_add_response_header(mr, "X-Opaque-Id", opaque);
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "application/json");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, mr);
    MHD_destroy_response(mr);
    return ret;
}

static enum MHD_Result too_large(struct MHD_Connection *c, size_t limit)
{
    sc_rest_resp r;
    sc_rest_resp_init(&r);
    char reason[128];
    snprintf(reason, sizeof reason, "request body exceeds http.max_content_length [%zu]", limit);
    sc_rest_error(NULL, &r, 413, "content_too_long_exception", reason, NULL, 0);
    enum MHD_Result ret = send_resp(c, &r);
    sc_rest_resp_fini(&r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    sc_http_server *s = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        *con_cls = st;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->cfg.max_content_length) {
            st->too_large = true;
            st->responded = true;
            return too_large(c, s->cfg.max_content_length);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!st->too_large && !st->tripped) {
            if (st->body.len + *upload_data_size > s->cfg.max_content_length) {
                st->too_large = true;
            } else if (!sc_breaker_inflight_reserve(s->node, *upload_data_size)) {
                st->tripped = true;
            } else {
                st->reserved += *upload_data_size;
                if (sc_vec_append(&st->body, (const unsigned char *)upload_data,
                                  *upload_data_size) != SC_OK)
                    st->tripped = true;
            }
            if (st->too_large || st->tripped) {
                sc_vec_free(&st->body);
                sc_breaker_inflight_release(s->node, st->reserved);
                st->reserved = 0;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (st->responded)
        return MHD_YES;
    st->responded = true;
    if (st->too_large)
        return too_large(c, s->cfg.max_content_length);
    if (st->tripped) {
        sc_rest_resp r;
        sc_rest_resp_init(&r);
        sc_rest_error(NULL, &r, 429, "circuit_breaking_exception",
                      "[in_flight_requests] Data too large, data for [<http_request>] would be "
                      "larger than the limit",
                      NULL, 0);
        enum MHD_Result ret = send_resp(c, &r);
        sc_rest_resp_fini(&r);
        return ret;
    }

    uint64_t t0 = sc_clock_now_ns();
    sc_arena arena;
    sc_arena_init(&arena, s->cfg.request_budget_bytes);
    sc_rest_req *req = sc_arena_calloc(&arena, 1, sizeof *req);
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    enum MHD_Result ret;
    if (!req) {
        sc_rest_error(NULL, &resp, 500, "exception", "out of memory", NULL, 0);
    } else {
        req->arena = &arena;
        req->node = s->node;
        req->method = sc_router_method(method);
        req->method_str = method;
        req->path = url;
        req->body = sc_slice_make(st->body.ptr, st->body.len);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        req->client_fd = ci ? ci->connect_fd : -1;
        req->content_type =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, req);
        sc_router_dispatch(req, &resp);
    }
    uint64_t took_ms = (sc_clock_now_ns() - t0) / 1000000;
    if (s->cfg.slowlog_ms && took_ms >= s->cfg.slowlog_ms)
        sc_log(SC_LOG_WARN, "slowlog",
               "took[%llums] status[%d] %s %s body_bytes[%zu] body[%.*s%s]",
               (unsigned long long)took_ms, resp.status, method, url, st->body.len,
               (int)(st->body.len < 512 ? st->body.len : 512),
               st->body.ptr ? (const char *)st->body.ptr : "", st->body.len > 512 ? "..." : "");
    else
        sc_log(SC_LOG_DEBUG, "http", "%s %s -> %d in %llums", method, url, resp.status,
               (unsigned long long)took_ms);
    (void)version;
    ret = send_resp(c, &resp);
    sc_rest_resp_fini(&resp);
    if (arena.over_budget)
        sc_log(SC_LOG_WARN, "breaker", "request %s %s exceeded its memory budget", method, url);
    sc_arena_fini(&arena);
    sc_vec_free(&st->body);
    sc_breaker_inflight_release(s->node, st->reserved);
    st->reserved = 0;
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    sc_http_server *s = cls;
    conn_state *st = *con_cls;
    if (st) {
        sc_breaker_inflight_release(s->node, st->reserved);
        sc_vec_free(&st->body);
        free(st);
        *con_cls = NULL;
    }
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    sc_log(SC_LOG_DEBUG, "mhd", "%s", msg);
}

sc_status sc_http_start(const sc_http_config *c, sc_node *node, sc_http_server **out)
{
    *out = NULL;
    sc_http_server *s = calloc(1, sizeof *s);
    if (!s)
        return SC_ENOMEM;
    s->cfg = *c;
    s->node = node;
    unsigned threads = c->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 2;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    const char *bind = c->bind && *c->bind ? c->bind : "127.0.0.1";
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bind, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(c->port);
    } else if (inet_pton(AF_INET6, bind, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(c->port);
        flags |= MHD_USE_IPv6;
    } else {
        sc_log(SC_LOG_ERROR, "http", "invalid bind address [%s]", bind);
        free(s);
        return SC_EINVAL;
    }
    s->d = MHD_start_daemon(
        flags, c->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT, c->timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024), MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, s, MHD_OPTION_END);
    if (!s->d) {
        sc_log(SC_LOG_ERROR, "http", "cannot listen on %s:%u", bind, (unsigned)c->port);
        free(s);
        return SC_EIO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : c->port;
    sc_log(SC_LOG_INFO, "http", "listening on %s:%u with %u threads", bind, (unsigned)s->port,
           threads);
    *out = s;
    return SC_OK;
}

uint16_t sc_http_port(const sc_http_server *s)
{
    return s->port;
}

/* MHD_stop_daemon closes the listening socket first and then joins the worker threads, each of
 * which finishes the request it is running. MHD_quiesce_daemon is not used: with a thread pool
 * on epoll, libmicrohttpd 0.9.75 can abort in it ("Failed to remove listen FD from epoll set")
 * when a worker races the removal. */
void sc_http_stop(sc_http_server *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    free(s);
}
