/* libFuzzer target for the HTTP/1.1 request parser (src/http/parse.c): the input is what a
 * client sends on one connection (request lines, headers, Content-Length and chunked bodies,
 * pipelined requests). It is consumed as the epoll transport does (heads re-parsed as bytes
 * arrive, chunked bodies decoded in place and compacted), once whole and once in pieces whose
 * size comes from the first byte; both runs must see the same requests (method, target, body)
 * and the same final error. Parsed fields must lie inside the buffer and hold no control
 * bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY (1u << 20)
#define MAX_REQS 64

typedef struct trace {
    size_t n;
    uint64_t h[MAX_REQS];
    int error; /* status of the refusal, 0 = none */
} trace;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void check_head(const sc_http_head *h, const uint8_t *buf, size_t len)
{
    if (h->head_len > len || h->n_fields > SC_HTTP_MAX_HEADERS || h->content_length < -1)
        abort();
    for (size_t i = 0; i < h->n_fields; i++) {
        const sc_http_field *f = &h->fields[i];
        if ((const uint8_t *)f->value < buf || (const uint8_t *)f->value + f->value_len > buf + len)
            abort();
        for (size_t k = 0; k < f->value_len; k++)
            if (((unsigned char)f->value[k] < 0x20 && f->value[k] != '\t') || f->value[k] == 0x7f)
                abort();
    }
    if (h->chunked && h->content_length >= 0)
        abort();
}

/* Consumes the complete requests of buf[0..*len); returns the bytes consumed; false in
 * *stop once a request was refused. */
static size_t serve(uint8_t *buf, size_t *len, sc_http_chunked *ch, bool *checked, trace *t,
                    bool *stop)
{
    size_t off = 0;
    while (off < *len && t->n < MAX_REQS) {
        sc_http_head h;
        bool complete;
        sc_http_perr e;
        if (sc_http_parse_head((const char *)buf + off, *len - off, 4096, &h, &complete, &e) !=
            SC_OK) {
            t->error = e.status;
            *stop = true;
            return off;
        }
        if (!complete)
            return off;
        check_head(&h, buf + off, *len - off);
        if (!*checked) {
            sc_http_chunked_init(ch);
            *checked = true;
        }
        uint8_t *body = buf + off + h.head_len;
        size_t have = *len - off - h.head_len, body_len, used;
        if (h.chunked) {
            bool done;
            sc_status st = sc_http_chunked_decode(ch, body, have, MAX_BODY, &done, &e);
            if (st != SC_OK) {
                t->error = e.status;
                *stop = true;
                return off;
            }
            if (ch->dst > ch->src || ch->src > have || ch->total > MAX_BODY)
                abort();
            if (!done) {
                size_t gap = ch->src - ch->dst;
                memmove(body + ch->dst, body + ch->src, have - ch->src);
                *len -= gap;
                ch->src = ch->dst;
                return off;
            }
            body_len = ch->dst;
            used = ch->src;
        } else {
            size_t cl = h.content_length > 0 ? (size_t)h.content_length : 0;
            if (cl > MAX_BODY) {
                t->error = 413;
                *stop = true;
                return off;
            }
            if (have < cl)
                return off;
            body_len = used = cl;
        }
        uint64_t x = fnv(1469598103934665603ull, h.method, h.method_len);
        x = fnv(x, h.target, h.target_len);
        x = fnv(x, body, body_len);
        t->h[t->n++] = x;
        *checked = false;
        off += h.head_len + used;
        if (!h.keep_alive) {
            *stop = true;
            return off;
        }
    }
    return off;
}

static void run(const uint8_t *data, size_t size, size_t step, trace *t)
{
    memset(t, 0, sizeof *t);
    uint8_t *buf = malloc(size + 1);
    if (!buf)
        return;
    size_t len = 0, fed = 0;
    sc_http_chunked ch;
    bool checked = false, stop = false;
    while (fed < size && !stop) {
        size_t n = size - fed < step ? size - fed : step;
        memcpy(buf + len, data + fed, n);
        len += n;
        fed += n;
        size_t used = serve(buf, &len, &ch, &checked, t, &stop);
        memmove(buf, buf + used, len - used);
        len -= used;
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = (size_t)data[0] % 17 + 1;
    trace whole, pieces;
    run(data + 1, size - 1, size, &whole);
    run(data + 1, size - 1, step, &pieces);
    if (whole.n != pieces.n || memcmp(whole.h, pieces.h, whole.n * sizeof whole.h[0]) != 0)
        abort();
    if (whole.error != pieces.error) {
        /* A head past the limit is 431 either way; anything else must agree exactly. */
        abort();
    }
    return 0;
}
