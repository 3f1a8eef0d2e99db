/* The strict HTTP/1.1 request parser (see parse.h): request line, header fields and their
 * framing rules, and the in-place chunked body decoder. */
#include "http/parse.h"

#include <string.h>
#include <strings.h>

/* tchar of RFC 9110 5.6.2. */
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static sc_status refuse(sc_http_perr *err, int status, const char *type, const char *reason)
{
    err->status = status;
    err->type = type;
    err->reason = reason;
    return SC_EPARSE;
}

static sc_status bad(sc_http_perr *err, const char *reason)
{
    return refuse(err, 400, "illegal_argument_exception", reason);
}

/* Not complete yet: fine while the head may still fit. */
static sc_status more(size_t len, size_t max_head, bool *complete, sc_http_perr *err)
{
    *complete = false;
    if (len >= max_head)
        return refuse(err, 431, "too_long_http_header_exception",
                      "the request line and headers are larger than the limit");
    return SC_OK;
}

static bool eq_ci(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && strncasecmp(s, lit, n) == 0;
}

const char *sc_http_head_get(const sc_http_head *h, const char *name, size_t *len)
{
    for (size_t i = 0; i < h->n_fields; i++)
        if (eq_ci(h->fields[i].name, h->fields[i].name_len, name)) {
            *len = h->fields[i].value_len;
            return h->fields[i].value;
        }
    *len = 0;
    return NULL;
}

/* The request line "METHOD SP target SP HTTP/1.x CRLF" from buf[*pos]; checks every byte as it
 * arrives, so garbage is refused before the line ends. *done false: need more bytes. */
static sc_status parse_request_line(const char *buf, size_t len, size_t *pos, sc_http_head *h,
                                    bool *done, sc_http_perr *err)
{
    size_t i = *pos, start = i;
    *done = false;
    while (i < len && is_tchar((unsigned char)buf[i]) && i - start < 32)
        i++;
    if (i == len)
        return SC_OK;
    if (buf[i] != ' ' || i == start)
        return bad(err, "invalid HTTP request line");
    h->method = buf + start;
    h->method_len = i - start;
    size_t t = ++i;
    while (i < len && buf[i] > 0x20 && buf[i] < 0x7f)
        i++;
    if (i > t && buf[t] != '/' && !(buf[t] == '*' && i - t == 1))
        return bad(err, "invalid HTTP request target: it must be an absolute path");
    if (i == len)
        return SC_OK;
    if (buf[i] != ' ' || i == t)
        return bad(err, "invalid HTTP request line");
    h->target = buf + t;
    h->target_len = i - t;
    i++;
    static const char proto[] = "HTTP/";
    for (size_t k = 0; k < 5; k++, i++) {
        if (i == len)
            return SC_OK;
        if (buf[i] != proto[k])
            return bad(err, "invalid HTTP version in the request line");
    }
    if (len - i < 5)
        return SC_OK;
    if (buf[i] < '0' || buf[i] > '9' || buf[i + 1] != '.' || buf[i + 2] < '0' || buf[i + 2] > '9' ||
        buf[i + 3] != '\r' || buf[i + 4] != '\n')
        return bad(err, "invalid HTTP version in the request line");
    if (buf[i] != '1')
        return refuse(err, 505, "illegal_argument_exception", "HTTP version not supported");
    h->minor = buf[i + 2] == '0' ? 0 : 1;
    *pos = i + 5;
    *done = true;
    return SC_OK;
}

/* One header field line from buf[*pos]; *end_of_head when it was the blank line. */
static sc_status parse_field(const char *buf, size_t len, size_t *pos, sc_http_head *h, bool *done,
                             bool *end_of_head, sc_http_perr *err)
{
    size_t i = *pos;
    *done = *end_of_head = false;
    if (i == len)
        return SC_OK;
    if (buf[i] == '\r') {
        if (i + 1 == len)
            return SC_OK;
        if (buf[i + 1] != '\n')
            return bad(err, "invalid line end in the request head");
        *pos = i + 2;
        *done = *end_of_head = true;
        return SC_OK;
    }
    if (buf[i] == ' ' || buf[i] == '\t')
        return bad(err, "obsolete line folding in the request head is not allowed");
    size_t ns = i;
    while (i < len && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == len)
        return SC_OK;
    if (buf[i] != ':' || i == ns)
        return bad(err, "invalid header field name");
    size_t ne = i++;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    size_t vs = i;
    while (i < len && (buf[i] == '\t' || ((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f)))
        i++;
    if (i == len)
        return SC_OK;
    if (buf[i] == '\0')
        return bad(err, "a request header value contains a NUL byte");
    if (buf[i] != '\r')
        return bad(err, "a request header value contains a control character");
    if (i + 1 == len)
        return SC_OK;
    if (buf[i + 1] != '\n')
        return bad(err, "invalid line end in the request head");
    size_t ve = i;
    while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
        ve--;
    if (h->n_fields == SC_HTTP_MAX_HEADERS)
        return refuse(err, 431, "too_long_http_header_exception", "too many request headers");
    h->fields[h->n_fields++] = (sc_http_field){buf + ns, ne - ns, buf + vs, ve - vs};
    *pos = i + 2;
    *done = true;
    return SC_OK;
}

/* True when the comma-separated list v holds the token tok (case-insensitive). */
static bool list_has(const char *v, size_t len, const char *tok)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < len && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e > s && eq_ci(v + s, e - s, tok))
            return true;
    }
    return false;
}

static sc_status content_length(const sc_http_field *f, sc_http_head *h, sc_http_perr *err)
{
    if (f->value_len == 0 || f->value_len > 18)
        return bad(err, "invalid Content-Length");
    int64_t n = 0;
    for (size_t k = 0; k < f->value_len; k++) {
        if (f->value[k] < '0' || f->value[k] > '9')
            return bad(err, "invalid Content-Length");
        n = n * 10 + (f->value[k] - '0');
    }
    if (h->content_length >= 0 && h->content_length != n)
        return bad(err, "multiple different Content-Length values");
    h->content_length = n;
    return SC_OK;
}

/* Framing and connection semantics from the fields (RFC 9112 6, 9.3). */
static sc_status derive(sc_http_head *h, sc_http_perr *err)
{
    size_t n_host = 0, n_te = 0;
    bool close = false, keep = false;
    for (size_t i = 0; i < h->n_fields; i++) {
        const sc_http_field *f = &h->fields[i];
        if (eq_ci(f->name, f->name_len, "content-length")) {
            SC_TRY(content_length(f, h, err));
        } else if (eq_ci(f->name, f->name_len, "transfer-encoding")) {
            if (++n_te > 1 || !eq_ci(f->value, f->value_len, "chunked"))
                return refuse(err, 501, "illegal_argument_exception",
                              "unsupported Transfer-Encoding (only chunked)");
            h->chunked = true;
        } else if (eq_ci(f->name, f->name_len, "host")) {
            n_host++;
        } else if (eq_ci(f->name, f->name_len, "connection")) {
            close |= list_has(f->value, f->value_len, "close");
            keep |= list_has(f->value, f->value_len, "keep-alive");
        } else if (eq_ci(f->name, f->name_len, "expect")) {
            if (!eq_ci(f->value, f->value_len, "100-continue"))
                return refuse(err, 417, "illegal_argument_exception", "unsupported Expect");
            h->expect_continue = true;
        } else if (eq_ci(f->name, f->name_len, "content-encoding")) {
            if (eq_ci(f->value, f->value_len, "gzip") || eq_ci(f->value, f->value_len, "x-gzip"))
                h->content_encoding = "gzip";
            else if (eq_ci(f->value, f->value_len, "deflate"))
                h->content_encoding = "deflate";
            else if (!eq_ci(f->value, f->value_len, "identity"))
                return refuse(err, 415, "illegal_argument_exception",
                              "unsupported Content-Encoding (gzip, deflate or identity)");
        }
    }
    if (h->chunked && h->content_length >= 0)
        return bad(err, "a request may not have both Content-Length and Transfer-Encoding");
    if (h->chunked && h->minor == 0)
        return bad(err, "Transfer-Encoding is not allowed in HTTP/1.0");
    if (h->minor >= 1 && n_host != 1)
        return bad(err, n_host ? "more than one Host header" : "an HTTP/1.1 request needs a Host");
    h->keep_alive = h->minor >= 1 ? !close : (keep && !close);
    return SC_OK;
}

sc_status sc_http_parse_head(const char *buf, size_t len, size_t max_head, sc_http_head *h,
                             bool *complete, sc_http_perr *err)
{
    *complete = false;
    h->n_fields = 0;
    h->content_length = -1;
    h->chunked = h->keep_alive = h->expect_continue = false;
    h->content_encoding = NULL;
    size_t pos = 0;
    /* RFC 9112 2.2: ignore empty lines before the request line (a client's stray CRLF). */
    while (pos < 8 && len - pos >= 2 && buf[pos] == '\r' && buf[pos + 1] == '\n')
        pos += 2;
    if (len - pos == 1 && buf[pos] == '\r')
        return more(len, max_head, complete, err);
    bool done;
    SC_TRY(parse_request_line(buf, len, &pos, h, &done, err));
    if (!done)
        return more(len, max_head, complete, err);
    for (;;) {
        bool end;
        SC_TRY(parse_field(buf, len, &pos, h, &done, &end, err));
        if (!done)
            return more(len, max_head, complete, err);
        if (pos > max_head)
            return more(pos, max_head, complete, err);
        if (end)
            break;
    }
    h->head_len = pos;
    SC_TRY(derive(h, err));
    *complete = true;
    return SC_OK;
}

enum {
    CH_SIZE,
    CH_EXT,
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER,
    CH_TRAILER_LINE,
    CH_TRAILER_LF,
    CH_END_LF,
};

void sc_http_chunked_init(sc_http_chunked *c)
{
    memset(c, 0, sizeof *c);
    c->state = CH_SIZE;
}

static int hexval(unsigned char b)
{
    if (b >= '0' && b <= '9')
        return b - '0';
    if (b >= 'a' && b <= 'f')
        return b - 'a' + 10;
    if (b >= 'A' && b <= 'F')
        return b - 'A' + 10;
    return -1;
}

static sc_status too_large(sc_http_perr *err)
{
    refuse(err, 413, "content_too_long_exception", "request body exceeds http.max_content_length");
    return SC_ELIMIT;
}

/* One byte of a size line, a chunk's CRLF or the trailer. */
static sc_status chunk_byte(sc_http_chunked *c, unsigned char b, uint64_t max, bool *done,
                            sc_http_perr *err)
{
    switch (c->state) {
    case CH_SIZE: {
        int d = hexval(b);
        if (d >= 0) {
            uint64_t room = max - c->total; /* total <= max always holds */
            if (c->left > room / 16 || c->left * 16 + (uint64_t)d > room)
                return too_large(err);
            c->left = c->left * 16 + (uint64_t)d;
            c->line++;
            return SC_OK;
        }
        if (c->line == 0)
            return bad(err, "invalid chunk size");
        if (b == ';' || b == ' ' || b == '\t')
            c->state = CH_EXT;
        else if (b == '\r')
            c->state = CH_SIZE_LF;
        else
            return bad(err, "invalid chunk size");
        return SC_OK;
    }
    case CH_EXT:
        if (++c->line > 4096)
            return bad(err, "chunk extension too long");
        if (b == '\r')
            c->state = CH_SIZE_LF;
        else if (b != '\t' && (b < 0x20 || b == 0x7f))
            return bad(err, "invalid chunk extension");
        return SC_OK;
    case CH_SIZE_LF:
        if (b != '\n')
            return bad(err, "invalid line end in chunked body");
        c->line = 0;
        c->state = c->left ? CH_DATA : CH_TRAILER;
        return SC_OK;
    case CH_DATA_CR:
        if (b != '\r')
            return bad(err, "chunk data is longer than its size");
        c->state = CH_DATA_LF;
        return SC_OK;
    case CH_DATA_LF:
        if (b != '\n')
            return bad(err, "invalid line end in chunked body");
        c->state = CH_SIZE;
        return SC_OK;
    case CH_TRAILER:
        c->state = b == '\r' ? CH_END_LF : CH_TRAILER_LINE;
        if (b == '\r' || b == '\t' || b >= 0x20)
            return SC_OK;
        return bad(err, "invalid chunked trailer");
    case CH_TRAILER_LINE:
        if (++c->line > 16384)
            return refuse(err, 431, "too_long_http_header_exception", "chunked trailer too long");
        if (b == '\r')
            c->state = CH_TRAILER_LF;
        else if (b != '\t' && (b < 0x20 || b == 0x7f))
            return bad(err, "invalid chunked trailer");
        return SC_OK;
    case CH_TRAILER_LF:
        if (b != '\n')
            return bad(err, "invalid line end in chunked trailer");
        c->state = CH_TRAILER;
        return SC_OK;
    case CH_END_LF:
        if (b != '\n')
            return bad(err, "invalid line end in chunked body");
        *done = true;
        return SC_OK;
    default: return bad(err, "invalid chunked body state");
    }
}

sc_status sc_http_chunked_decode(sc_http_chunked *c, uint8_t *buf, size_t len, uint64_t max,
                                 bool *done, sc_http_perr *err)
{
    *done = false;
    while (c->src < len && !*done) {
        if (c->state == CH_DATA) {
            size_t n = len - c->src;
            if ((uint64_t)n > c->left)
                n = (size_t)c->left;
            if (c->dst != c->src)
                memmove(buf + c->dst, buf + c->src, n);
            c->dst += n;
            c->src += n;
            c->left -= n;
            c->total += n;
            if (!c->left)
                c->state = CH_DATA_CR;
            continue;
        }
        sc_status st = chunk_byte(c, buf[c->src], max, done, err);
        if (st != SC_OK)
            return st;
        c->src++;
    }
    return SC_OK;
}
