/* Tests for the strict HTTP/1.1 request parser (src/http/parse.c): request line, fields and
 * framing rules (RFC 9112), refusals with their status, and the in-place chunked decoder fed
 * byte by byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/parse.h"

/* Parses s whole: 0 when complete, -1 when incomplete, else the refusal's status. */
static int parse(const char *s, sc_http_head *h)
{
    bool complete;
    sc_http_perr e;
    if (sc_http_parse_head(s, strlen(s), 65536, h, &complete, &e) != SC_OK)
        return e.status;
    return complete ? 0 : -1;
}

static void test_request_line_and_fields(void **state)
{
    (void)state;
    sc_http_head h;
    const char *r = "\r\nPOST /i/_search?q=a%20b HTTP/1.1\r\nHost: x\r\nContent-Length:  7 \r\n"
                    "X-Opaque-Id: abc\r\nConnection: close\r\n\r\n{\"a\":1}";
    assert_int_equal(parse(r, &h), 0);
    assert_int_equal(h.method_len, 4);
    assert_memory_equal(h.method, "POST", 4);
    assert_int_equal(h.target_len, strlen("/i/_search?q=a%20b"));
    assert_int_equal(h.minor, 1);
    assert_int_equal(h.content_length, 7);
    assert_false(h.keep_alive);
    assert_int_equal(h.head_len, strlen(r) - 7);
    size_t len;
    const char *v = sc_http_head_get(&h, "x-opaque-id", &len);
    assert_non_null(v);
    assert_int_equal(len, 3);
    assert_memory_equal(v, "abc", 3);
    assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &h), 0);
    assert_false(h.keep_alive);
    assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h), 0);
    assert_true(h.keep_alive);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n", &h), -1);
    assert_int_equal(parse("GET /", &h), -1);
}

static void test_refusals(void **state)
{
    (void)state;
    sc_http_head h;
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                           "Content-Length: 2\r\n\r\n",
                           &h),
                     400);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                           "Content-Length: 2\r\n\r\n",
                           &h),
                     0);
    assert_int_equal(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n",
                           &h),
                     400);
    assert_int_equal(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", &h),
                     501);
    assert_int_equal(parse("GET / HTTP/1.1\r\n\r\n", &h), 400);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &h), 400);
    assert_int_equal(parse("\x01\x02 GARBAGE", &h), 400); /* refused before the line ends */
    assert_int_equal(parse("GET / HTTP/2.0\r\nHost: x\r\n\r\n", &h), 505);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", &h), 400);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost : x\r\n\r\n", &h), 400);
    assert_int_equal(parse("GET / HTTP/1.1\nHost: x\n\n", &h), 400);
    assert_int_equal(parse("GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n", &h), 400);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\nExpect: nope\r\n\r\n", &h), 417);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\n\r\n", &h), 415);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", &h), 400);
    static const char nul[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Opaque-Id: a\0b\r\n\r\n";
    bool complete;
    sc_http_perr e;
    assert_int_equal(sc_http_parse_head(nul, sizeof nul - 1, 65536, &h, &complete, &e), SC_EPARSE);
    assert_int_equal(e.status, 400);
    assert_non_null(strstr(e.reason, "NUL"));
    char big[300];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET /", 5);
    assert_int_equal(sc_http_parse_head(big, sizeof big, 256, &h, &complete, &e), SC_EPARSE);
    assert_int_equal(e.status, 431);
}

/* Decodes s fed one byte at a time; returns the status and the body in out. */
static sc_status dechunk(const char *s, uint64_t max, char *out, size_t *out_len, size_t *used)
{
    uint8_t buf[512];
    size_t n = strlen(s), len = 0;
    sc_http_chunked c;
    sc_http_chunked_init(&c);
    sc_http_perr e;
    for (size_t i = 0; i < n; i++) {
        buf[len++] = (uint8_t)s[i];
        bool done;
        sc_status st = sc_http_chunked_decode(&c, buf, len, max, &done, &e);
        if (st != SC_OK)
            return st;
        if (done) {
            memcpy(out, buf, c.dst);
            *out_len = c.dst;
            *used = c.src;
            return SC_OK;
        }
    }
    return SC_EFULL; /* incomplete */
}

static void test_chunked(void **state)
{
    (void)state;
    char out[512];
    size_t len, used;
    const char *b = "5;x=1\r\nhello\r\nB\r\n, the world\r\n0\r\nTrailer: t\r\n\r\nNEXT";
    assert_int_equal(dechunk(b, 1000, out, &len, &used), SC_OK);
    assert_int_equal(len, 16);
    assert_memory_equal(out, "hello, the world", 16);
    assert_int_equal(used, strlen(b) - 4); /* the trailer's blank line ends it, before NEXT */
    assert_int_equal(dechunk("ffffffffffffffff\r\n", 1000, out, &len, &used), SC_ELIMIT);
    assert_int_equal(dechunk("10000000000000000\r\n", UINT64_MAX, out, &len, &used), SC_ELIMIT);
    assert_int_equal(dechunk("8\r\n12345678\r\n8\r\n", 10, out, &len, &used), SC_ELIMIT);
    assert_int_equal(dechunk("5\r\nhello!\r\n", 1000, out, &len, &used), SC_EPARSE);
    assert_int_equal(dechunk("x\r\n", 1000, out, &len, &used), SC_EPARSE);
    assert_int_equal(dechunk("5\nhello\r\n", 1000, out, &len, &used), SC_EPARSE);
    assert_int_equal(dechunk("5\r\nhel", 1000, out, &len, &used), SC_EFULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_line_and_fields),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_chunked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
