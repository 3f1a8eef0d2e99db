/* Tests for cluster/transport_tls.c through the transport (transport.h with a tls config): two
 * TLS transports in one process over loopback (echo, a large body, concurrent requests that
 * share pooled sessions while the server reads and writes them from different threads), and
 * the refusals: a plaintext client, a client of another CA, a TLS client of a plaintext server,
 * unusable files. Certificates are made with the `openssl` command line in a temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <pthread.h>
#include <unistd.h>

#include "cluster/transport.h"

enum {
    T_ECHO = 1
};

static char dir[256];

static void sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    assert_int_equal(rc, 0);
}

static void make_ca(const char *name)
{
    sh("cd %s && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=%s -keyout %s.key "
       "-out %s.pem >/dev/null 2>&1",
       dir, name, name, name);
}

static void make_cert(const char *name, const char *ca)
{
    sh("cd %s && openssl req -newkey rsa:2048 -nodes -subj /CN=%s -keyout %s.key -out %s.csr "
       ">/dev/null 2>&1 && printf 'subjectAltName=IP:127.0.0.1\\n' > %s.ext && openssl x509 -req "
       "-in %s.csr -CA %s.pem -CAkey %s.key -CAcreateserial -days 2 -extfile %s.ext -out %s.pem "
       ">/dev/null 2>&1",
       dir, name, name, name, name, name, ca, ca, name, name);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/scry-tp-tls-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    make_ca("ca");
    make_ca("other");
    make_cert("node", "ca");
    make_cert("stranger", "other");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

typedef struct tls_files {
    char cert[300], key[300], ca[300];
    sc_transport_tls_config cfg;
} tls_files;

static const sc_transport_tls_config *files(tls_files *f, const char *cert, const char *ca,
                                            sc_transport_verify mode)
{
    snprintf(f->cert, sizeof f->cert, "%s/%s.pem", dir, cert);
    snprintf(f->key, sizeof f->key, "%s/%s.key", dir, cert);
    snprintf(f->ca, sizeof f->ca, "%s/%s.pem", dir, ca);
    f->cfg = (sc_transport_tls_config){
        .cert_file = f->cert, .key_file = f->key, .ca_file = f->ca, .verification_mode = mode};
    return &f->cfg;
}

static sc_status h_echo(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t cap)
{
    (void)ctx, (void)errmsg, (void)cap;
    sc_wire_put_raw(resp, body.ptr, body.len);
    return resp->st;
}

static sc_transport *open_tp(const sc_transport_tls_config *tls)
{
    sc_transport_config cfg = {
        .n_workers = 3, .max_body_bytes = 1 << 20, .backoff_max_ms = 100, .tls = tls};
    sc_transport *t = NULL;
    assert_int_equal(sc_transport_open(&cfg, &t), SC_OK);
    assert_int_equal(sc_transport_register(t, T_ECHO, h_echo, NULL), SC_OK);
    return t;
}

static sc_status try_echo(sc_transport *c, uint16_t port, const char *s)
{
    uint8_t *resp = NULL;
    size_t n = 0;
    sc_transport_error err;
    sc_status st =
        sc_transport_request(c, "127.0.0.1", port, T_ECHO, sc_slice_cstr(s), 5000, &resp, &n, &err);
    if (st == SC_OK && (n != strlen(s) || memcmp(resp, s, n) != 0))
        st = SC_ECORRUPT;
    free(resp);
    return st;
}

/* The server counts a request or a refused handshake after its peer may already have seen the
 * answer (or the closed connection), so its counters are read once they settle: stats of `t`
 * after at most 5 s of waiting for fn(stats) to hold. */
static sc_transport_stats settled(sc_transport *t, bool (*fn)(const sc_transport_stats *))
{
    sc_transport_stats st;
    for (int i = 0; i < 500; i++) {
        sc_transport_stats_get(t, &st);
        if (fn(&st))
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return st;
}

static bool handled_242(const sc_transport_stats *st)
{
    return st->requests_handled >= 242;
}

static bool refused_2(const sc_transport_stats *st)
{
    return st->tls_refused >= 2;
}

typedef struct worker_arg {
    sc_transport *c;
    uint16_t port;
    int id, failures;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    char buf[4096];
    for (int i = 0; i < 40; i++) {
        int len = snprintf(buf, sizeof buf, "w%d-%d-", w->id, i);
        memset(buf + len, 'a' + w->id, (size_t)(i * 90)); /* several TLS records for some */
        buf[len + i * 90] = '\0';
        w->failures += try_echo(w->c, w->port, buf) != SC_OK;
    }
    return NULL;
}

static void test_tls_echo_and_concurrency(void **state)
{
    (void)state;
    tls_files fs, fc;
    sc_transport *s = open_tp(files(&fs, "node", "ca", SC_TRANSPORT_VERIFY_FULL));
    sc_transport *c = open_tp(files(&fc, "node", "ca", SC_TRANSPORT_VERIFY_FULL));
    uint16_t port = sc_transport_port(s);
    assert_int_equal(try_echo(c, port, "hello"), SC_OK);
    char *big = malloc(500000);
    memset(big, 'z', 499999);
    big[499999] = '\0';
    assert_int_equal(try_echo(c, port, big), SC_OK);
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
    assert_true(st.connects <= 4 && st.tls_failed == 0);
    st = settled(s, handled_242);
    assert_int_equal(st.tls_refused, 0);
    assert_int_equal(st.requests_handled, 242);
    sc_transport_close(c);
    sc_transport_close(s);
}

static void test_refused_peers(void **state)
{
    (void)state;
    tls_files fs, fo, fn;
    sc_transport *s = open_tp(files(&fs, "node", "ca", SC_TRANSPORT_VERIFY_CERTIFICATE));
    uint16_t port = sc_transport_port(s);
    sc_transport *plain = open_tp(NULL);
    assert_int_not_equal(try_echo(plain, port, "x"), SC_OK);
    /* a client whose certificate comes from another CA (and which trusts only that CA) */
    sc_transport *stranger = open_tp(files(&fo, "stranger", "other", SC_TRANSPORT_VERIFY_FULL));
    assert_int_not_equal(try_echo(stranger, port, "x"), SC_OK);
    /* verification none encrypts without checking: the server still requires a trusted
     * certificate, which this client does not have */
    sc_transport *blind = open_tp(files(&fn, "stranger", "other", SC_TRANSPORT_VERIFY_NONE));
    assert_int_not_equal(try_echo(blind, port, "x"), SC_OK);
    sc_transport_stats st = settled(s, refused_2);
    assert_true(st.tls_refused >= 2);
    assert_int_equal(st.requests_handled, 0);
    sc_transport_stats_get(stranger, &st);
    assert_true(st.tls_failed >= 1); /* it does not trust the server's certificate */
    /* a TLS client of a plaintext server fails its handshake */
    tls_files fc;
    sc_transport *c = open_tp(files(&fc, "node", "ca", SC_TRANSPORT_VERIFY_FULL));
    assert_int_not_equal(try_echo(c, sc_transport_port(plain), "x"), SC_OK);
    sc_transport_stats_get(c, &st);
    assert_true(st.tls_failed >= 1);
    sc_transport_stats_get(plain, &st);
    assert_int_equal(st.requests_handled, 0);
    /* the server keeps serving good peers */
    assert_int_equal(try_echo(c, port, "still here"), SC_OK);
    sc_transport_close(c);
    sc_transport_close(blind);
    sc_transport_close(stranger);
    sc_transport_close(plain);
    sc_transport_close(s);
}

static void test_bad_files(void **state)
{
    (void)state;
    tls_files f;
    sc_transport_config cfg = {.tls = files(&f, "node", "missing", SC_TRANSPORT_VERIFY_FULL)};
    sc_transport *t = NULL;
    assert_int_equal(sc_transport_open(&cfg, &t), SC_EINVAL);
    cfg.tls = files(&f, "missing", "ca", SC_TRANSPORT_VERIFY_FULL);
    assert_int_equal(sc_transport_open(&cfg, &t), SC_EINVAL);
    files(&f, "node", "ca", SC_TRANSPORT_VERIFY_FULL);
    f.cfg.ca_file = NULL; /* full needs a CA */
    cfg.tls = &f.cfg;
    assert_int_equal(sc_transport_open(&cfg, &t), SC_EINVAL);
    f.cfg.verification_mode = SC_TRANSPORT_VERIFY_NONE; /* ... none does not */
    assert_int_equal(sc_transport_open(&cfg, &t), SC_OK);
    sc_transport_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_echo_and_concurrency),
        cmocka_unit_test(test_refused_peers),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
