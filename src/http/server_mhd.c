/* The libmicrohttpd transport (http.transport: mhd), kept as the fallback of the epoll
 * transport: its own thread pool pins each connection to one thread. Connection state, body
 * accumulation, dispatch, response headers. */
#include "http/internal.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api/rest.h"
#include "base/arena.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/vec.h"
#include "cluster/log.h"
#include "cluster/tasks.h"
#include "http/auth.h"
#include "http/router.h"

struct sc__http_mhd {
    struct MHD_Daemon *d;
    sc_node *node;
    sc_http_config cfg;
    uint16_t port;
    char *tls_cert; /* PEM, NUL-terminated; owned */
    char *tls_key;
};

typedef struct conn_state {
    sc_buf body;
    uint64_t reserved; /* bytes held on the in-flight requests breaker */
    bool too_large;
    bool tripped; /* the in-flight breaker refused the body */
    bool responded;
    bool denied; /* 401 queued before the body: the body is discarded */
} conn_state;

/* libmicrohttpd hands the path and the query arguments over NUL-terminated, after its own
 * percent-decoding: a "%00" would cut them short ("/victim%00/_doc/1" became "/victim").
 * This unescaper leaves them encoded; the router decodes them with lengths (router.c). */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    sc_rest_req *req = cls;
    if (req->n_params >= SC_REST_MAX_PARAMS || !key)
        return MHD_NO;
    sc_router_add_param(req, key, key_size, value, value ? value_size : 0);
    return MHD_YES;
}

/* A header value holding a NUL byte would be read cut short (X-Opaque-Id, Content-Type,
 * Authorization): such a request is refused. */
static enum MHD_Result check_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    sc_rest_req *req = cls;
    if (key && strlen(key) != key_size)
        sc_router_reject(req, "request header", key, key_size);
    else if (value && strlen(value) != value_size)
        sc_router_reject(req, key ? key : "request header", value, value_size);
    return MHD_YES;
}

/* Queues r; extra_name/extra_value is one more header or NULL. */
static enum MHD_Result send_resp_hdr(struct MHD_Connection *c, sc_rest_resp *r,
                                     const char *extra_name, const char *extra_value)
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
    const char *opaque = NULL;
    size_t opaque_len = 0;
    /* Echoed only when whole: a value holding NUL would go out cut short. */
    if (MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, "X-Opaque-Id", 11, &opaque,
                                      &opaque_len) != MHD_YES ||
        (opaque && strlen(opaque) != opaque_len))
        opaque = NULL;
    if (opaque)
        MHD_add_response_header(mr, "X-Opaque-Id", opaque);
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "application/json");
    if (extra_name)
        MHD_add_response_header(mr, extra_name, extra_value);
    if (r->warning) {
        /* RFC 7234 warn-code 299 as Elasticsearch sends deprecation warnings. */
        char warn[512];
        snprintf(warn, sizeof warn, "299 Elasticsearch-8.15.0 \"%s\"", r->warning);
        MHD_add_response_header(mr, "Warning", warn);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, mr);
    MHD_destroy_response(mr);
    return ret;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, sc_rest_resp *r)
{
    return send_resp_hdr(c, r, NULL, NULL);
}

/* True when the Basic credentials of an Authorization header decode to bytes holding NUL:
 * libmicrohttpd hands user and password over as C strings, so "pw\0junk" would be checked as
 * "pw". Such credentials are refused whole. */
static bool basic_credentials_hold_nul(const char *hdr)
{
    if (!hdr || strncasecmp(hdr, "Basic ", 6) != 0)
        return false;
    uint32_t acc = 0;
    int bits = 0;
    for (const char *p = hdr + 6; *p && *p != '='; p++) {
        const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *d = strchr(digits, *p);
        if (!d || *p == ' ')
            continue;
        acc = (acc << 6) | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (((acc >> bits) & 0xFF) == 0)
                return true;
        }
    }
    return false;
}

/* Basic authentication: MHD_YES when the request carries valid credentials; otherwise queues
 * Elasticsearch's 401 security_exception and sets *denied. */
static enum MHD_Result authenticate(sc__http_mhd *s, struct MHD_Connection *c, const char *url,
                                    bool *denied)
{
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    bool ok = user && pass && sc_http_auth_check(s->cfg.auth, user, pass) &&
              !basic_credentials_hold_nul(
                  MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    *denied = !ok;
    enum MHD_Result ret = MHD_YES;
    if (!ok) {
        sc_rest_resp r;
        sc_rest_resp_init(&r);
        if (user)
            sc_rest_errorf(NULL, &r, 401, "security_exception",
                           "unable to authenticate user [%s] for REST request [%s]", user, url);
        else
            sc_rest_errorf(NULL, &r, 401, "security_exception",
                           "missing authentication credentials for REST request [%s]", url);
        sc_log(SC_LOG_DEBUG, "auth", "401 for %s (user [%s])", url, user ? user : "");
        ret = send_resp_hdr(c, &r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                            "Basic realm=\"security\" charset=\"UTF-8\"");
        sc_rest_resp_fini(&r);
    }
    if (pass) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user)
        MHD_free(user);
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
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    sc__http_mhd *s = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        *con_cls = st;
        if (s->cfg.auth) {
            enum MHD_Result ar = authenticate(s, c, url, &st->denied);
            if (st->denied) {
                st->responded = true;
                return ar;
            }
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->cfg.max_content_length) {
            st->too_large = true;
            st->responded = true;
            return too_large(c, s->cfg.max_content_length);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!st->too_large && !st->tripped && !st->denied) {
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
        MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, add_param, req);
        MHD_get_connection_values_n(c, MHD_HEADER_KIND, check_header, req);
        sc_router_dispatch(req, &resp);
    }
    uint64_t took_ms = (sc_clock_now_ns() - t0) / 1000000;
    if (s->cfg.slowlog_ms && took_ms >= s->cfg.slowlog_ms)
        sc_log(SC_LOG_WARN, "slowlog", "took[%llums] status[%d] %s %s body_bytes[%zu] body[%.*s%s]",
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
    sc__http_mhd *s = cls;
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

/* Reads a PEM file as a NUL-terminated string. */
static sc_status read_pem(const char *what, const char *path, char **out)
{
    uint8_t *data;
    size_t len;
    if (sc_file_read_all(path, &data, &len) != SC_OK) {
        sc_log(SC_LOG_ERROR, "http", "cannot read TLS %s [%s]", what, path);
        return SC_EIO;
    }
    char *p = realloc(data, len + 1);
    if (!p) {
        free(data);
        return SC_ENOMEM;
    }
    p[len] = '\0';
    *out = p;
    return SC_OK;
}

/* Loads the certificate and key the way libmicrohttpd will, so that a bad file is reported
 * with GnuTLS's reason instead of a bare start failure. */
static sc_status load_tls(sc__http_mhd *s, const sc_http_config *c)
{
    if (!c->tls_cert_file || !c->tls_key_file) {
        sc_log(SC_LOG_ERROR, "http", "TLS needs both a certificate and a key file");
        return SC_EINVAL;
    }
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        sc_log(SC_LOG_ERROR, "http", "this libmicrohttpd was built without TLS support");
        return SC_EINVAL;
    }
    SC_TRY(read_pem("certificate", c->tls_cert_file, &s->tls_cert));
    SC_TRY(read_pem("key", c->tls_key_file, &s->tls_key));
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) != GNUTLS_E_SUCCESS)
        return SC_ENOMEM;
    gnutls_datum_t cert = {(unsigned char *)s->tls_cert, (unsigned)strlen(s->tls_cert)};
    gnutls_datum_t key = {(unsigned char *)s->tls_key, (unsigned)strlen(s->tls_key)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
    gnutls_certificate_free_credentials(cred);
    if (rc < 0) {
        sc_log(SC_LOG_ERROR, "http", "invalid TLS certificate [%s] / key [%s]: %s",
               c->tls_cert_file, c->tls_key_file, gnutls_strerror(rc));
        return SC_EINVAL;
    }
    return SC_OK;
}

static void server_free(sc__http_mhd *s)
{
    if (s->tls_key) {
        explicit_bzero(s->tls_key, strlen(s->tls_key));
        free(s->tls_key);
    }
    free(s->tls_cert);
    free(s);
}

sc_status sc__http_mhd_start(const sc_http_config *c, sc_node *node, sc__http_mhd **out,
                             uint16_t *port)
{
    *out = NULL;
    sc__http_mhd *s = calloc(1, sizeof *s);
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
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
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
    bool tls = c->tls_cert_file || c->tls_key_file;
    if (tls) {
        sc_status st = load_tls(s, c);
        if (st != SC_OK) {
            server_free(s);
            return st;
        }
        flags |= MHD_USE_TLS;
    }
    s->d = MHD_start_daemon(
        flags, c->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT, c->timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024), MHD_OPTION_UNESCAPE_CALLBACK,
        keep_escaped, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, s->tls_cert, MHD_OPTION_HTTPS_MEM_KEY,
        s->tls_key, MHD_OPTION_END);
    if (!s->d) {
        sc_log(SC_LOG_ERROR, "http", "cannot listen on %s:%u%s", bind, (unsigned)c->port,
               tls ? " with TLS" : "");
        server_free(s);
        return SC_EIO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : c->port;
    *port = s->port;
    sc_log(SC_LOG_INFO, "http", "listening on %s:%u (%s%s) with %u threads", bind,
           (unsigned)s->port, tls ? "https" : "http", c->auth ? ", basic auth" : "", threads);
    *out = s;
    return SC_OK;
}

/* MHD_stop_daemon closes the listening socket first and then joins the worker threads, each of
 * which finishes the request it is running. MHD_quiesce_daemon is not used: with a thread pool
 * on epoll, libmicrohttpd 0.9.75 can abort in it ("Failed to remove listen FD from epoll set")
 * when a worker races the removal. */
void sc__http_mhd_stop(sc__http_mhd *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    server_free(s);
}
