/* One request/response exchange of the epoll transport: the checks made on a complete head
 * (basic authentication, body size, in-flight breaker), the request handed to the router with
 * its own arena, and the response written as bytes (status line, the Elasticsearch product
 * header, X-Opaque-Id, Warning, optional gzip) ready for the socket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/rest.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/tasks.h"
#include "http/auth.h"
#include "http/internal.h"
#include "http/router.h"

static const char *reason_phrase(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* Extra response headers beside the fixed ones. */
typedef struct resp_extra {
    const char *opaque; /* X-Opaque-Id echoed, or NULL */
    size_t opaque_len;
    const char *www_auth; /* WWW-Authenticate, or NULL */
    bool close;
    bool keep_alive_10; /* HTTP/1.0 keep-alive: say so */
    bool head_only;     /* HEAD: Content-Length of the body, no body */
    bool gzip;          /* body is already gzip-encoded */
} resp_extra;

static void put(sc_buf *out, const char *s, size_t n)
{
    if (sc_vec_append(out, (const unsigned char *)s, n) != SC_OK)
        out->len = 0; /* out of memory: drop the response; the caller closes */
}

static void puts_(sc_buf *out, const char *s)
{
    put(out, s, strlen(s));
}

/* Status line and headers (and the body unless head_only) appended to out. */
static void write_response(sc_buf *out, const sc_rest_resp *r, const uint8_t *body, size_t len,
                           const resp_extra *x)
{
    if (sc_vec_reserve(out, 512 + (x->head_only ? 0 : len)) != SC_OK)
        return; /* the caller sees nothing written and closes */
    /* Formatted by hand: snprintf showed up at 2-3 % of a term COUNT request's CPU. */
    char num[24];
    size_t k = sizeof num;
    int st = r->status >= 100 && r->status <= 999 ? r->status : 500;
    puts_(out, "HTTP/1.1 ");
    char code[4] = {(char)('0' + st / 100), (char)('0' + st / 10 % 10), (char)('0' + st % 10), ' '};
    put(out, code, 4);
    puts_(out, reason_phrase(st));
    puts_(out, "\r\nX-elastic-product: Elasticsearch\r\ncontent-type: ");
    puts_(out, r->content_type ? r->content_type : "application/json");
    puts_(out, "\r\ncontent-length: ");
    size_t v = len;
    do {
        num[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(out, num + k, sizeof num - k);
    puts_(out, "\r\n");
    int n;
    if (x->gzip)
        puts_(out, "content-encoding: gzip\r\nvary: Accept-Encoding\r\n");
    if (x->opaque) {
        puts_(out, "X-Opaque-Id: ");
        put(out, x->opaque, x->opaque_len);
        puts_(out, "\r\n");
    }
    if (x->www_auth) {
        puts_(out, "WWW-Authenticate: ");
        puts_(out, x->www_auth);
        puts_(out, "\r\n");
    }
    if (r->warning) {
        /* RFC 7234 warn-code 299 as Elasticsearch sends deprecation warnings. */
        char warn[512];
        n = snprintf(warn, sizeof warn, "Warning: 299 Elasticsearch-8.15.0 \"%s\"\r\n", r->warning);
        put(out, warn, (size_t)n < sizeof warn ? (size_t)n : sizeof warn - 1);
    }
    if (x->close)
        puts_(out, "connection: close\r\n");
    else if (x->keep_alive_10)
        puts_(out, "connection: keep-alive\r\n");
    puts_(out, "\r\n");
    if (!x->head_only && len)
        put(out, (const char *)body, len);
}

void sc__http_write_perr(const sc_http_perr *e, sc_buf *out)
{
    sc_rest_resp r;
    sc_rest_resp_init(&r);
    sc_rest_error(NULL, &r, e->status, e->type, e->reason, NULL, 0);
    resp_extra x = {.close = true};
    write_response(out, &r, r.body.ptr, r.body.len, &x);
    sc_rest_resp_fini(&r);
}

static bool is_method(const sc_http_head *h, const char *m)
{
    return h->method_len == strlen(m) && memcmp(h->method, m, h->method_len) == 0;
}

static void extra_for(const sc_http_head *h, resp_extra *x)
{
    memset(x, 0, sizeof *x);
    x->opaque = sc_http_head_get(h, "x-opaque-id", &x->opaque_len);
    x->close = !h->keep_alive;
    x->keep_alive_10 = h->keep_alive && h->minor == 0;
    x->head_only = is_method(h, "HEAD");
}

/* The path of the target (before '?') as a NUL-terminated arena-free copy in buf. */
static size_t path_len(const sc_http_head *h)
{
    const char *q = memchr(h->target, '?', h->target_len);
    return q ? (size_t)(q - h->target) : h->target_len;
}

/* Decodes the Basic credentials of the Authorization header into buf as "user\0pass\0";
 * false when absent, not Basic, not base64, holding NUL or without ':'. */
static bool basic_credentials(const sc_http_head *h, char *buf, size_t cap, const char **user,
                              const char **pass)
{
    size_t len;
    const char *v = sc_http_head_get(h, "authorization", &len);
    if (!v || len < 6 || strncasecmp(v, "Basic ", 6) != 0)
        return false;
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 6; i < len && v[i] != '='; i++) {
        const char *d = v[i] ? memchr(digits, v[i], 64) : NULL;
        if (!d)
            return false;
        acc = (acc << 6) | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            unsigned char b = (unsigned char)((acc >> bits) & 0xFF);
            if (b == 0 || n + 2 >= cap)
                return false;
            buf[n++] = (char)b;
        }
    }
    buf[n] = '\0';
    char *colon = memchr(buf, ':', n);
    if (!colon)
        return false;
    *colon = '\0';
    *user = buf;
    *pass = colon + 1;
    return true;
}

/* Appends the 401 for a request without valid credentials. */
static void deny(const sc_http_head *h, const char *user, sc_buf *out, bool close)
{
    char path[512];
    size_t pl = path_len(h);
    snprintf(path, sizeof path, "%.*s", (int)(pl < 500 ? pl : 500), h->target);
    sc_rest_resp r;
    sc_rest_resp_init(&r);
    if (user)
        sc_rest_errorf(NULL, &r, 401, "security_exception",
                       "unable to authenticate user [%s] for REST request [%s]", user, path);
    else
        sc_rest_errorf(NULL, &r, 401, "security_exception",
                       "missing authentication credentials for REST request [%s]", path);
    sc_log(SC_LOG_DEBUG, "auth", "401 for %s (user [%s])", path, user ? user : "");
    resp_extra x;
    extra_for(h, &x);
    x.close |= close;
    x.www_auth = "Basic realm=\"security\" charset=\"UTF-8\"";
    write_response(out, &r, r.body.ptr, r.body.len, &x);
    sc_rest_resp_fini(&r);
}

static void refuse(const sc_http_head *h, sc_buf *out, int status, const char *type,
                   const char *reason, bool close)
{
    sc_rest_resp r;
    sc_rest_resp_init(&r);
    sc_rest_error(NULL, &r, status, type, reason, NULL, 0);
    resp_extra x;
    extra_for(h, &x);
    x.close |= close;
    write_response(out, &r, r.body.ptr, r.body.len, &x);
    sc_rest_resp_fini(&r);
}

bool sc__http_precheck(const sc_http_config *c, sc_node *node, const sc_http_head *h,
                       uint64_t *reserved, sc_buf *out, bool *close)
{
    *reserved = 0;
    /* A refused request's Content-Length body is read and dropped by the transport (so the
     * client, still sending, reads the answer instead of a reset); a chunked one closes. */
    bool has_body = h->chunked;
    *close = has_body;
    if (c->auth) {
        char cred[1024];
        const char *user = NULL, *pass = NULL;
        bool have = basic_credentials(h, cred, sizeof cred, &user, &pass);
        bool ok = have && sc_http_auth_check(c->auth, user, pass);
        if (!ok)
            deny(h, have ? user : NULL, out, has_body);
        explicit_bzero(cred, sizeof cred);
        if (!ok)
            return false;
    }
    if (h->content_length > 0 && (uint64_t)h->content_length > c->max_content_length) {
        char reason[128];
        snprintf(reason, sizeof reason, "request body exceeds http.max_content_length [%zu]",
                 c->max_content_length);
        refuse(h, out, 413, "content_too_long_exception", reason, true);
        *close = true;
        return false;
    }
    if (h->content_length > 0) {
        if (!sc_breaker_inflight_reserve(node, (uint64_t)h->content_length)) {
            refuse(h, out, 429, "circuit_breaking_exception",
                   "[in_flight_requests] Data too large, data for [<http_request>] would be "
                   "larger than the limit",
                   h->chunked);
            return false;
        }
        *reserved = (uint64_t)h->content_length;
    }
    return true;
}

/* A NUL-terminated arena copy of s[0..len). */
static char *arena_str(sc_arena *a, const char *s, size_t len)
{
    char *p = sc_arena_alloc(a, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

/* Fills req from the head and runs the router. */
static void dispatch(const sc_http_config *c, sc_node *node, const sc_http_head *h, sc_slice body,
                     int fd, sc_arena *arena, sc_rest_resp *resp)
{
    sc_rest_req *req = sc_arena_calloc(arena, 1, sizeof *req);
    size_t pl = path_len(h);
    char *method = req ? arena_str(arena, h->method, h->method_len) : NULL;
    char *path = method ? arena_str(arena, h->target, pl) : NULL;
    size_t ct_len;
    const char *ct = sc_http_head_get(h, "content-type", &ct_len);
    char *ctype = ct && path ? arena_str(arena, ct, ct_len) : NULL;
    if (!path || (ct && !ctype)) {
        sc_rest_error(NULL, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    req->arena = arena;
    req->node = node;
    req->method = sc_router_method(method);
    req->method_str = method;
    req->path = path;
    req->body = body;
    req->client_fd = fd;
    req->content_type = ctype;
    if (pl < h->target_len)
        sc_router_parse_query(req, h->target + pl + 1, h->target_len - pl - 1);
    sc_router_dispatch(req, resp);
    (void)c;
}

/* Replaces resp's body with its gzip encoding when the client accepts gzip. */
static bool maybe_gzip(const sc_http_config *c, const sc_http_head *h, sc_rest_resp *resp)
{
    size_t len;
    const char *ae = sc_http_head_get(h, "accept-encoding", &len);
    if (!c->compression || !ae || !resp->body.len)
        return false;
    bool gz = false;
    for (size_t i = 0; i + 4 <= len && !gz; i++)
        gz = strncasecmp(ae + i, "gzip", 4) == 0;
    if (!gz)
        return false;
    sc_buf z = {0};
    if (sc__http_gzip(resp->body.ptr, resp->body.len, &z) != SC_OK) {
        sc_vec_free(&z);
        return false;
    }
    sc_vec_free(&resp->body);
    resp->body = z;
    return true;
}

/* Inflates a compressed body in place of the raw one; false (and an error in resp) when it
 * is corrupt or too large. */
static bool inflate_body(const sc_http_config *c, const sc_http_head *h, sc_slice *body,
                         uint8_t **owned, sc_rest_resp *resp)
{
    if (!h->content_encoding || !body->len)
        return true;
    size_t len;
    sc_status st = sc__http_inflate(body->ptr, body->len, c->max_content_length, owned, &len);
    if (st == SC_OK) {
        *body = sc_slice_make(*owned, len);
        return true;
    }
    if (st == SC_ELIMIT) {
        char reason[128];
        snprintf(reason, sizeof reason,
                 "decompressed request body exceeds http.max_content_length [%zu]",
                 c->max_content_length);
        sc_rest_error(NULL, resp, 413, "content_too_long_exception", reason, NULL, 0);
    } else if (st == SC_EPARSE) {
        sc_rest_errorf(NULL, resp, 400, "illegal_argument_exception",
                       "the request body is not valid %s", h->content_encoding);
    } else {
        sc_rest_error(NULL, resp, 500, "exception", "out of memory", NULL, 0);
    }
    return false;
}

static void slowlog(const sc_http_config *c, const sc_http_head *h, sc_slice body, int status,
                    uint64_t t0)
{
    uint64_t took_ms = (sc_clock_now_ns() - t0) / 1000000;
    int ml = (int)h->method_len, tl = (int)(h->target_len < 1024 ? h->target_len : 1024);
    if (c->slowlog_ms && took_ms >= c->slowlog_ms)
        sc_log(SC_LOG_WARN, "slowlog",
               "took[%llums] status[%d] %.*s %.*s body_bytes[%zu] "
               "body[%.*s%s]",
               (unsigned long long)took_ms, status, ml, h->method, tl, h->target, body.len,
               (int)(body.len < 512 ? body.len : 512), body.ptr ? (const char *)body.ptr : "",
               body.len > 512 ? "..." : "");
    else
        sc_log(SC_LOG_DEBUG, "http", "%.*s %.*s -> %d in %llums", ml, h->method, tl, h->target,
               status, (unsigned long long)took_ms);
}

void sc__http_exchange(const sc_http_config *c, sc_node *node, const sc_http_head *h, uint8_t *body,
                       size_t body_len, int fd, uint64_t reserved, sc_buf *out,
                       sc__http_outcome *oc)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    /* Room for a small response up front: growing from empty took ~7 reallocs per request. */
    sc_status rs = sc_vec_reserve(&resp.body, 1024);
    (void)rs;
    sc_slice b = sc_slice_make(body, body_len);
    uint8_t *inflated = NULL;
    if (inflate_body(c, h, &b, &inflated, &resp)) {
        sc_arena arena;
        sc_arena_init(&arena, c->request_budget_bytes);
        dispatch(c, node, h, b, fd, &arena, &resp);
        if (arena.over_budget)
            sc_log(SC_LOG_WARN, "breaker", "request %.*s %.*s exceeded its memory budget",
                   (int)h->method_len, h->method, (int)path_len(h), h->target);
        sc_arena_fini(&arena);
    }
    slowlog(c, h, b, resp.status, t0);
    free(inflated);
    sc_breaker_inflight_release(node, reserved);
    resp_extra x;
    extra_for(h, &x);
    x.gzip = maybe_gzip(c, h, &resp);
    size_t before = out->len;
    write_response(out, &resp, resp.body.ptr, resp.body.len, &x);
    oc->close = x.close || out->len <= before;
    sc_rest_resp_fini(&resp);
}
