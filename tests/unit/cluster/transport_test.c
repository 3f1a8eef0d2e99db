/* Tests for cluster/wire.c and cluster/transport.c: frame header and body primitives (round
 * trips, every truncation and bad byte -> SC_ECORRUPT), then two transports in one process over
 * loopback: echo, concurrent requests over the pool, remote errors, unknown types, a bad frame
 * from a raw socket closes only that connection, a dead peer (SC_EIO, back-off), a slow handler
 * (SC_ETIMEOUT, the connection is replaced), reconnect after the peer restarts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster/transport.h"
#include "cluster/wire.h"

enum {
    T_ECHO = 1,
    T_FAIL = 2,
    T_SLOW = 3,
    T_UNKNOWN = 99
};

static void test_header(void **state)
{
    (void)state;
    sc_wire_header h = {.flags = SC_WIRE_FLAG_RESPONSE,
                        .type = 513,
                        .request_id = 0x0102030405060708ull,
                        .body_len = 77};
    uint8_t b[SC_WIRE_HEADER_BYTES];
    sc_wire_header_put(&h, b);
    sc_wire_header g;
    assert_int_equal(sc_wire_header_get(b, 1000, &g), SC_OK);
    assert_int_equal(g.type, 513);
    assert_true(g.request_id == h.request_id);
    assert_int_equal(g.body_len, 77);
    assert_int_equal(sc_wire_header_get(b, 76, &g), SC_ELIMIT);
    uint8_t c[SC_WIRE_HEADER_BYTES];
    for (int i = 0; i < 6; i++) {
        memcpy(c, b, sizeof c);
        c[i] ^= 0x40; /* magic, version, flag bits */
        assert_int_equal(sc_wire_header_get(c, 1000, &g), SC_ECORRUPT);
    }
    memcpy(c, b, sizeof c);
    c[5] = SC_WIRE_FLAG_ERROR; /* error without response */
    assert_int_equal(sc_wire_header_get(c, 1000, &g), SC_ECORRUPT);
}

static void test_body(void **state)
{
    (void)state;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_wire_put_uvar(&b, 300);
    sc_wire_put_svar(&b, -5);
    sc_wire_put_f32(&b, 1.5f);
    sc_wire_put_f64(&b, -2.25);
    sc_wire_put_bool(&b, true);
    sc_wire_put_str(&b, "hello");
    sc_wire_put_u8(&b, 7);
    uint8_t *p;
    size_t n;
    assert_int_equal(sc_wire_buf_take(&b, &p, &n), SC_OK);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    assert_int_equal(sc_wire_get_uvar(&r), 300);
    assert_int_equal(sc_wire_get_svar(&r), -5);
    assert_true(sc_wire_get_f32(&r) == 1.5f);
    assert_true(sc_wire_get_f64(&r) == -2.25);
    assert_true(sc_wire_get_bool(&r));
    assert_true(sc_slice_eq_cstr(sc_wire_get_bytes(&r), "hello"));
    assert_int_equal(sc_wire_get_u8(&r), 7);
    assert_int_equal(sc_wire_reader_finish(&r), SC_OK);
    /* every truncation is corrupt, never a read past the end */
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *q = malloc(cut ? cut : 1);
        memcpy(q, p, cut);
        sc_wire_reader_init(&r, q, cut);
        (void)sc_wire_get_uvar(&r);
        (void)sc_wire_get_svar(&r);
        (void)sc_wire_get_f32(&r);
        (void)sc_wire_get_f64(&r);
        (void)sc_wire_get_bool(&r);
        (void)sc_wire_get_bytes(&r);
        (void)sc_wire_get_u8(&r);
        assert_int_equal(sc_wire_reader_finish(&r), SC_ECORRUPT);
        free(q);
    }
    free(p);
    /* a bool byte of 2, a length past the end, trailing bytes */
    const uint8_t bad_bool[] = {2}, bad_len[] = {5, 'a'}, trailing[] = {1, 0};
    sc_wire_reader_init(&r, bad_bool, 1);
    (void)sc_wire_get_bool(&r);
    assert_int_equal(sc_wire_reader_finish(&r), SC_ECORRUPT);
    sc_wire_reader_init(&r, bad_len, 2);
    (void)sc_wire_get_bytes(&r);
    assert_int_equal(sc_wire_reader_finish(&r), SC_ECORRUPT);
    sc_wire_reader_init(&r, trailing, 2);
    (void)sc_wire_get_bool(&r);
    assert_int_equal(sc_wire_reader_finish(&r), SC_ECORRUPT);
    /* a writer over its limit is sticky */
    sc_wire_buf_init(&b);
    b.limit = 4;
    sc_wire_put_str(&b, "toolong");
    sc_wire_put_u8(&b, 1);
    assert_int_equal(sc_wire_buf_take(&b, &p, &n), SC_ELIMIT);
    /* error bodies */
    sc_wire_buf_init(&b);
    assert_int_equal(sc_wire_error_encode(SC_ENOTFOUND, "no \x01such", &b), SC_OK);
    sc_status remote;
    char msg[64];
    assert_int_equal(sc_wire_error_decode(b.ptr, b.len, &remote, msg, sizeof msg), SC_OK);
    assert_int_equal(remote, SC_ENOTFOUND);
    assert_string_equal(msg, "no ?such");
    b.ptr[0] = 0; /* SC_OK is not an error */
    assert_int_equal(sc_wire_error_decode(b.ptr, b.len, &remote, msg, sizeof msg), SC_ECORRUPT);
    sc_wire_buf_fini(&b);
}

static sc_status h_echo(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t cap)
{
    (void)ctx, (void)errmsg, (void)cap;
    sc_wire_put_raw(resp, body.ptr, body.len);
    return SC_OK;
}

static sc_status h_fail(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t cap)
{
    (void)ctx, (void)body, (void)resp;
    snprintf(errmsg, cap, "index [x] missing");
    return SC_ENOTFOUND;
}

static sc_status h_slow(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t cap)
{
    (void)ctx, (void)body, (void)resp, (void)errmsg, (void)cap;
    usleep(300 * 1000);
    return SC_OK;
}

static sc_transport *open_server(uint16_t port)
{
    sc_transport_config cfg = {
        .port = port, .n_workers = 3, .max_body_bytes = 1 << 20, .backoff_max_ms = 200};
    sc_transport *t;
    assert_int_equal(sc_transport_open(&cfg, &t), SC_OK);
    assert_int_equal(sc_transport_register(t, T_ECHO, h_echo, NULL), SC_OK);
    assert_int_equal(sc_transport_register(t, T_FAIL, h_fail, NULL), SC_OK);
    assert_int_equal(sc_transport_register(t, T_SLOW, h_slow, NULL), SC_OK);
    return t;
}

static void echo(sc_transport *c, uint16_t port, const char *s)
{
    uint8_t *resp;
    size_t n;
    sc_transport_error err;
    assert_int_equal(
        sc_transport_request(c, "127.0.0.1", port, T_ECHO, sc_slice_cstr(s), 5000, &resp, &n, &err),
        SC_OK);
    assert_int_equal(n, strlen(s));
    assert_memory_equal(resp, s, n);
    free(resp);
}

typedef struct worker_arg {
    sc_transport *c;
    uint16_t port;
    int id;
    int failures;
} worker_arg;

/* cmocka asserts only on the main thread: a worker counts its failures */
static void *worker(void *arg)
{
    worker_arg *w = arg;
    char buf[64];
    for (int i = 0; i < 50; i++) {
        snprintf(buf, sizeof buf, "w%d-%d", w->id, i);
        uint8_t *resp = NULL;
        size_t n = 0;
        sc_transport_error err;
        sc_status st = sc_transport_request(w->c, "127.0.0.1", w->port, T_ECHO, sc_slice_cstr(buf),
                                            5000, &resp, &n, &err);
        if (st != SC_OK || n != strlen(buf) || memcmp(resp, buf, n) != 0) {
            fprintf(stderr, "worker %d: %s %s\n", w->id, sc_status_name(st), err.message);
            w->failures++;
        }
        free(resp);
    }
    return NULL;
}

static void test_loopback(void **state)
{
    (void)state;
    sc_transport *s = open_server(0);
    uint16_t port = sc_transport_port(s);
    assert_true(port != 0);
    sc_transport *c = open_server(0); /* a second node: client of the first */
    echo(c, port, "");
    echo(c, port, "hello");
    char *big = malloc(300000);
    memset(big, 'z', 299999);
    big[299999] = '\0';
    echo(c, port, big);
    free(big);

    pthread_t th[6];
    worker_arg wa[6];
    for (int i = 0; i < 6; i++) {
        wa[i] = (worker_arg){c, port, i, 0};
        pthread_create(&th[i], NULL, worker, &wa[i]);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(wa[i].failures, 0);
    }
    sc_transport_stats st;
    sc_transport_stats_get(c, &st);
    assert_true(st.connects <= 4); /* persistent pool, conns_per_peer default 4 */
    assert_int_equal(st.requests_sent, 303);

    uint8_t *resp;
    size_t n;
    sc_transport_error err;
    assert_int_equal(sc_transport_request(c, "127.0.0.1", port, T_FAIL, sc_slice_cstr("x"), 5000,
                                          &resp, &n, &err),
                     SC_ENOTFOUND);
    assert_true(err.remote);
    assert_string_equal(err.message, "index [x] missing");
    assert_int_equal(sc_transport_request(c, "127.0.0.1", port, T_UNKNOWN, sc_slice_cstr("x"), 5000,
                                          &resp, &n, &err),
                     SC_EUNSUPPORTED);
    assert_true(err.remote);
    /* a slow handler: timeout, and the connection is not reused for the late answer */
    assert_int_equal(
        sc_transport_request(c, "127.0.0.1", port, T_SLOW, sc_slice_cstr(""), 100, &resp, &n, &err),
        SC_ETIMEOUT);
    echo(c, port, "after timeout");
    sc_transport_close(c);
    sc_transport_close(s);
}

static void test_bad_frames(void **state)
{
    (void)state;
    sc_transport *s = open_server(0);
    uint16_t port = sc_transport_port(s);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(write(fd, junk, sizeof junk - 1) > 0);
    char buf[16];
    assert_int_equal(read(fd, buf, sizeof buf), 0); /* closed by the server */
    close(fd);
    /* an oversize body length is refused before any buffering */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    sc_wire_header h = {.type = T_ECHO, .request_id = 1, .body_len = 1u << 30};
    uint8_t hdr[SC_WIRE_HEADER_BYTES];
    sc_wire_header_put(&h, hdr);
    assert_true(write(fd, hdr, sizeof hdr) > 0);
    assert_int_equal(read(fd, buf, sizeof buf), 0);
    close(fd);
    sc_transport_stats st;
    sc_transport_stats_get(s, &st);
    assert_int_equal(st.bad_frames, 2);
    /* the server still answers others */
    sc_transport *c = open_server(0);
    echo(c, port, "still here");
    sc_transport_close(c);
    sc_transport_close(s);
}

static void test_dead_peer_and_reconnect(void **state)
{
    (void)state;
    sc_transport *s = open_server(0);
    uint16_t port = sc_transport_port(s);
    sc_transport *c = open_server(0);
    echo(c, port, "one");
    sc_transport_close(s); /* the pooled connection is now dead */
    uint8_t *resp;
    size_t n;
    sc_transport_error err;
    assert_int_equal(sc_transport_request(c, "127.0.0.1", port, T_ECHO, sc_slice_cstr("x"), 1000,
                                          &resp, &n, &err),
                     SC_EIO);
    assert_false(err.remote);
    /* in back-off now: fails fast */
    assert_int_equal(sc_transport_request(c, "127.0.0.1", port, T_ECHO, sc_slice_cstr("x"), 1000,
                                          &resp, &n, &err),
                     SC_EIO);
    s = open_server(port); /* the peer comes back on the same port */
    usleep(450 * 1000);    /* longer than the bounded back-off (200 ms) */
    echo(c, port, "two");
    sc_transport_close(c);
    sc_transport_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_body),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_bad_frames),
        cmocka_unit_test(test_dead_peer_and_reconnect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
