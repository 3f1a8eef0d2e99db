/* Tests for cluster/etcd against a real etcd 3.4 started by the test (etcd_fixture.h): KV,
 * prefixes, txn compare-and-swap, leases and the keeper, watch (events, resume after an etcd
 * restart, re-list after a compaction) and endpoint failover. Skips (exit 77 is not used:
 * cmocka fails) only when /usr/bin/etcd is missing, with a message. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/etcd.h"
#include "cluster/etcd_resp.h"
#include "etcd_fixture.h"

static etcd_fixture g_etcd;

static int setup(void **state)
{
    (void)state;
    if (fixture_start(&g_etcd, 0) != 0) {
        fprintf(stderr, "etcd_test: cannot start etcd (install etcd-server)\n");
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&g_etcd);
    return 0;
}

static sc_etcd *client(void)
{
    sc_etcd *e;
    assert_int_equal(sc_etcd_new(g_etcd.url, 2000, &e), SC_OK);
    return e;
}

static void test_kv(void **state)
{
    (void)state;
    sc_etcd *e = client();
    int64_t rev;
    assert_int_equal(sc_etcd_put(e, "/t/kv/a", "1", 1, 0, &rev, NULL), SC_OK);
    assert_true(rev > 0);
    /* binary value with a NUL byte */
    assert_int_equal(sc_etcd_put(e, "/t/kv/b", "x\0y", 3, 0, NULL, NULL), SC_OK);
    assert_int_equal(sc_etcd_put(e, "/t/kw", "other", 5, 0, NULL, NULL), SC_OK);
    sc_etcd_kvs r;
    assert_int_equal(sc_etcd_get(e, "/t/kv/a", &r, NULL), SC_OK);
    assert_int_equal(r.len, 1);
    assert_string_equal(r.kvs[0].value, "1");
    assert_int_equal(r.kvs[0].mod_revision, rev);
    sc_etcd_kvs_fini(&r);
    assert_int_equal(sc_etcd_get(e, "/t/kv/missing", &r, NULL), SC_OK);
    assert_int_equal(r.len, 0);
    sc_etcd_kvs_fini(&r);
    assert_int_equal(sc_etcd_range_prefix(e, "/t/nothing/", &r, NULL), SC_OK);
    assert_int_equal(r.len, 0);
    assert_true(r.revision > 0);
    sc_etcd_kvs_fini(&r);
    assert_int_equal(sc_etcd_range_prefix(e, "/t/kv/", &r, NULL), SC_OK);
    assert_int_equal(r.len, 2);
    assert_string_equal(r.kvs[0].key, "/t/kv/a");
    assert_int_equal(r.kvs[1].value_len, 3);
    assert_memory_equal(r.kvs[1].value, "x\0y", 3);
    sc_etcd_kvs_fini(&r);
    int64_t n;
    assert_int_equal(sc_etcd_delete(e, "/t/kv/", true, &n, NULL), SC_OK);
    assert_int_equal(n, 2);
    assert_int_equal(sc_etcd_get(e, "/t/kw", &r, NULL), SC_OK);
    assert_int_equal(r.len, 1);
    sc_etcd_kvs_fini(&r);
    sc_etcd_free(e);
}

static void test_range_pages(void **state)
{
    (void)state;
    sc_etcd *e = client();
    for (int i = 0; i < 2500; i++) {
        char k[32];
        snprintf(k, sizeof k, "/t/many/%05d", i);
        assert_int_equal(sc_etcd_put(e, k, k, strlen(k), 0, NULL, NULL), SC_OK);
    }
    sc_etcd_kvs r;
    assert_int_equal(sc_etcd_range_prefix(e, "/t/many/", &r, NULL), SC_OK);
    assert_int_equal(r.len, 2500);
    for (size_t i = 1; i < r.len; i++)
        assert_true(strcmp(r.kvs[i - 1].key, r.kvs[i].key) < 0);
    sc_etcd_kvs_fini(&r);
    sc_etcd_free(e);
}

static void test_txn(void **state)
{
    (void)state;
    sc_etcd *e = client();
    sc_etcd_cmp absent = {.key = "/t/txn/m", .target = SC_ETCD_CREATE, .value = 0};
    sc_etcd_op put = {.kind = SC_ETCD_OP_PUT, .key = "/t/txn/m", .value = "me", .value_len = 2};
    sc_etcd_op get = {.kind = SC_ETCD_OP_GET, .key = "/t/txn/m"};
    sc_etcd_txn_result r;
    assert_int_equal(sc_etcd_txn(e, &absent, 1, &put, 1, &get, 1, &r, NULL), SC_OK);
    assert_true(r.succeeded);
    int64_t created = r.revision;
    sc_etcd_txn_result_fini(&r);
    /* second create-if-absent fails and reads the current value */
    put.value = "you";
    put.value_len = 3;
    assert_int_equal(sc_etcd_txn(e, &absent, 1, &put, 1, &get, 1, &r, NULL), SC_OK);
    assert_false(r.succeeded);
    assert_int_equal(r.range.len, 1);
    assert_string_equal(r.range.kvs[0].value, "me");
    assert_int_equal(r.range.kvs[0].create_revision, created);
    sc_etcd_txn_result_fini(&r);
    /* optimistic update on mod_revision */
    sc_etcd_cmp mod = {.key = "/t/txn/m", .target = SC_ETCD_MOD, .value = created};
    assert_int_equal(sc_etcd_txn(e, &mod, 1, &put, 1, NULL, 0, &r, NULL), SC_OK);
    assert_true(r.succeeded);
    sc_etcd_txn_result_fini(&r);
    assert_int_equal(sc_etcd_txn(e, &mod, 1, &put, 1, NULL, 0, &r, NULL), SC_OK);
    assert_false(r.succeeded); /* mod_revision moved on */
    sc_etcd_txn_result_fini(&r);
    sc_etcd_op del = {.kind = SC_ETCD_OP_DELETE, .key = "/t/txn/", .prefix = true};
    sc_etcd_cmp ne = {.key = "/t/txn/m", .target = SC_ETCD_CREATE, .result = SC_ETCD_NOT_EQUAL};
    assert_int_equal(sc_etcd_txn(e, &ne, 1, &del, 1, NULL, 0, &r, NULL), SC_OK);
    assert_true(r.succeeded);
    sc_etcd_txn_result_fini(&r);
    sc_etcd_free(e);
}

static _Atomic int g_lost, g_expired, g_alive;

static void on_lease(void *ctx, int64_t lease, sc_etcd_lease_state state)
{
    (void)ctx, (void)lease;
    atomic_fetch_add(state == SC_ETCD_LEASE_GONE      ? &g_lost
                     : state == SC_ETCD_LEASE_EXPIRED ? &g_expired
                                                      : &g_alive,
                     1);
}

static void test_lease(void **state)
{
    (void)state;
    sc_etcd *e = client();
    int64_t id, ttl;
    assert_int_equal(sc_etcd_lease_grant(e, 2, &id, &ttl, NULL), SC_OK);
    assert_true(ttl >= 2);
    assert_int_equal(sc_etcd_put(e, "/t/lease/k", "v", 1, id, NULL, NULL), SC_OK);
    assert_int_equal(sc_etcd_lease_keepalive_once(e, id, &ttl, NULL), SC_OK);
    assert_true(ttl >= 2);
    /* kept alive past several TTLs by the keeper */
    sc_etcd_keeper *k;
    assert_int_equal(sc_etcd_keeper_start(e, id, ttl, on_lease, NULL, &k), SC_OK);
    sleep_ms(4500);
    assert_true(sc_etcd_keeper_alive(k));
    sc_etcd_kvs r;
    assert_int_equal(sc_etcd_get(e, "/t/lease/k", &r, NULL), SC_OK);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.kvs[0].lease, id);
    sc_etcd_kvs_fini(&r);
    /* revoking removes the key; the keeper notices the lease is gone */
    assert_int_equal(sc_etcd_lease_revoke(e, id, NULL), SC_OK);
    assert_int_equal(sc_etcd_get(e, "/t/lease/k", &r, NULL), SC_OK);
    assert_int_equal(r.len, 0);
    sc_etcd_kvs_fini(&r);
    for (int i = 0; i < 40 && !atomic_load(&g_lost); i++)
        sleep_ms(100);
    assert_int_equal(atomic_load(&g_lost), 1);
    assert_false(sc_etcd_keeper_alive(k));
    sc_etcd_keeper_stop(k);
    sc_etcd_error err;
    assert_int_equal(sc_etcd_lease_keepalive_once(e, id, &ttl, &err), SC_ENOTFOUND);
    assert_int_equal(sc_etcd_lease_revoke(e, id, &err), SC_ENOTFOUND);
    assert_true(strstr(err.message, "lease not found") != NULL);
    assert_int_equal(sc_etcd_put(e, "/t/lease/k", "v", 1, id, NULL, &err), SC_ENOTFOUND);
    sc_etcd_free(e);
}

/* etcd down for longer than the TTL: the keeper reports EXPIRED, and ALIVE once etcd is back
 * (etcd restores leases with a fresh TTL when it restarts), with the key still attached. */
static void test_keeper_outage(void **state)
{
    (void)state;
    sc_etcd *e = client();
    int64_t id, ttl;
    assert_int_equal(sc_etcd_lease_grant(e, 2, &id, &ttl, NULL), SC_OK);
    assert_int_equal(sc_etcd_put(e, "/t/outage", "v", 1, id, NULL, NULL), SC_OK);
    atomic_store(&g_expired, 0);
    atomic_store(&g_alive, 0);
    atomic_store(&g_lost, 0);
    sc_etcd_keeper *k;
    assert_int_equal(sc_etcd_keeper_start(e, id, ttl, on_lease, NULL, &k), SC_OK);
    fixture_kill(&g_etcd);
    for (int i = 0; i < 60 && !atomic_load(&g_expired); i++)
        sleep_ms(100);
    assert_int_equal(atomic_load(&g_expired), 1);
    assert_false(sc_etcd_keeper_alive(k));
    assert_int_equal(fixture_start(&g_etcd, 1), 0);
    for (int i = 0; i < 60 && !atomic_load(&g_alive); i++)
        sleep_ms(100);
    assert_int_equal(atomic_load(&g_alive), 1);
    assert_true(sc_etcd_keeper_alive(k));
    assert_int_equal(atomic_load(&g_lost), 0);
    sc_etcd_kvs r;
    assert_int_equal(sc_etcd_get(e, "/t/outage", &r, NULL), SC_OK);
    assert_int_equal(r.len, 1);
    sc_etcd_kvs_fini(&r);
    sc_etcd_keeper_stop(k);
    assert_int_equal(sc_etcd_lease_revoke(e, id, NULL), SC_OK);
    sc_etcd_free(e);
}

/* A watch consumer that mirrors the prefix as a small table. */
typedef struct mirror {
    pthread_mutex_t mu;
    int resets, events;
    char keys[64][32];
    char vals[64][16];
    int n;
} mirror;

static void mirror_set(mirror *m, const char *k, const char *v)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->keys[i], k)) {
            if (v)
                snprintf(m->vals[i], sizeof m->vals[i], "%s", v);
            else
                m->keys[i][0] = '\0';
            return;
        }
    if (v && m->n < 64) {
        snprintf(m->keys[m->n], sizeof m->keys[0], "%s", k);
        snprintf(m->vals[m->n++], sizeof m->vals[0], "%s", v);
    }
}

static const char *mirror_get(mirror *m, const char *k)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->keys[i], k))
            return m->vals[i];
    return NULL;
}

static void on_reset(void *ctx, const sc_etcd_kvs *all)
{
    mirror *m = ctx;
    pthread_mutex_lock(&m->mu);
    m->resets++;
    m->n = 0;
    for (size_t i = 0; i < all->len; i++)
        mirror_set(m, all->kvs[i].key, all->kvs[i].value);
    pthread_mutex_unlock(&m->mu);
}

static void on_events(void *ctx, const sc_etcd_event *ev, size_t n)
{
    mirror *m = ctx;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        m->events++;
        mirror_set(m, ev[i].kv.key, ev[i].type == SC_ETCD_EVENT_PUT ? ev[i].kv.value : NULL);
    }
    pthread_mutex_unlock(&m->mu);
}

/* Waits until key has value (NULL: is absent) in the mirror; true if it did within 5 s. */
static bool wait_for(mirror *m, const char *k, const char *v)
{
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&m->mu);
        const char *cur = mirror_get(m, k);
        bool ok = v ? cur && !strcmp(cur, v) : !cur;
        pthread_mutex_unlock(&m->mu);
        if (ok)
            return true;
        sleep_ms(50);
    }
    return false;
}

static void test_watch(void **state)
{
    (void)state;
    sc_etcd *e = client();
    assert_int_equal(sc_etcd_put(e, "/t/w/before", "0", 1, 0, NULL, NULL), SC_OK);
    mirror m = {.mu = PTHREAD_MUTEX_INITIALIZER};
    sc_etcd_watch *w;
    assert_int_equal(sc_etcd_watch_start(e, "/t/w/", on_reset, on_events, &m, &w), SC_OK);
    assert_true(wait_for(&m, "/t/w/before", "0"));
    assert_int_equal(sc_etcd_put(e, "/t/w/a", "1", 1, 0, NULL, NULL), SC_OK);
    assert_int_equal(sc_etcd_put(e, "/t/other", "x", 1, 0, NULL, NULL), SC_OK);
    assert_true(wait_for(&m, "/t/w/a", "1"));
    assert_null(mirror_get(&m, "/t/other"));
    assert_int_equal(sc_etcd_delete(e, "/t/w/before", false, NULL, NULL), SC_OK);
    assert_true(wait_for(&m, "/t/w/before", NULL));
    /* etcd restarts: the watch resumes from its revision, with no re-list */
    int resets = m.resets;
    fixture_kill(&g_etcd);
    assert_int_equal(fixture_start(&g_etcd, 1), 0);
    assert_int_equal(sc_etcd_put(e, "/t/w/a", "2", 1, 0, NULL, NULL), SC_OK);
    assert_true(wait_for(&m, "/t/w/a", "2"));
    assert_int_equal(m.resets, resets);
    /* a compaction past the watch's revision while it is disconnected: re-list */
    fixture_kill(&g_etcd);
    assert_int_equal(fixture_start(&g_etcd, 1), 0);
    int64_t rev = 0;
    assert_int_equal(sc_etcd_put(e, "/t/w/b", "3", 1, 0, NULL, NULL), SC_OK);
    assert_int_equal(sc_etcd_put(e, "/t/w/b", "4", 1, 0, &rev, NULL), SC_OK);
    assert_int_equal(sc_etcd_compact(e, rev, NULL), SC_OK);
    assert_true(wait_for(&m, "/t/w/b", "4"));
    assert_true(wait_for(&m, "/t/w/a", "2"));
    assert_true(sc_etcd_watch_revision(w) >= rev);
    /* etcd comes back empty (its data lost): the watch notices the older store and re-lists */
    fixture_kill(&g_etcd);
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/data'", g_etcd.dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(fixture_start(&g_etcd, 1), 0);
    assert_int_equal(sc_etcd_put(e, "/t/w/fresh", "5", 1, 0, NULL, NULL), SC_OK);
    assert_true(wait_for(&m, "/t/w/fresh", "5"));
    assert_true(wait_for(&m, "/t/w/a", NULL)); /* gone with the old store */
    sc_etcd_watch_stop(w);
    sc_etcd_free(e);
}

static void test_failover(void **state)
{
    (void)state;
    char eps[256];
    int dead = fixture_free_port();
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d,%s", dead, g_etcd.url);
    sc_etcd *e;
    assert_int_equal(sc_etcd_new(eps, 1000, &e), SC_OK);
    assert_int_equal(sc_etcd_put(e, "/t/f", "1", 1, 0, NULL, NULL), SC_OK);
    assert_string_equal(sc_etcd_endpoint(e), g_etcd.url);
    sc_etcd_free(e);
    /* nothing reachable: an error, promptly */
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d", dead);
    assert_int_equal(sc_etcd_new(eps, 500, &e), SC_OK);
    sc_etcd_error err;
    assert_int_equal(sc_etcd_put(e, "/t/f", "1", 1, 0, NULL, &err), SC_EIO);
    assert_true(err.message[0] != '\0');
    sc_etcd_free(e);
    assert_int_equal(sc_etcd_new("", 0, &e), SC_EINVAL);
    assert_int_equal(sc_etcd_new("127.0.0.1:2379", 0, &e), SC_EINVAL);
}

static void test_decoders(void **state)
{
    (void)state;
    sc_etcd_kvs r;
    const char *ok = "{\"header\":{\"revision\":\"7\"},\"kvs\":[{\"key\":\"YQ==\",\"value\":"
                     "\"MQ==\",\"create_revision\":\"5\",\"mod_revision\":6}],\"more\":true}";
    assert_int_equal(sc_etcd_decode_range(ok, strlen(ok), &r), SC_OK);
    assert_int_equal(r.revision, 7);
    assert_int_equal(r.len, 1);
    assert_string_equal(r.kvs[0].key, "a");
    assert_int_equal(r.kvs[0].create_revision, 5);
    assert_int_equal(r.kvs[0].mod_revision, 6);
    assert_true(r.more);
    sc_etcd_kvs_fini(&r);
    static const char *const bad[] = {"",
                                      "[]",
                                      "{\"kvs\":5}",
                                      "{\"kvs\":[{\"key\":\"!\"}]}",
                                      "{\"header\":{\"revision\":\"x\"}}",
                                      "{\"kvs\":[{\"key\":\"YQ==\",\"version\":\"1e9\"}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_etcd_decode_range(bad[i], strlen(bad[i]), &r), SC_ECORRUPT);
    sc_etcd_watch_msg m;
    const char *ev = "{\"result\":{\"header\":{\"revision\":\"9\"},\"events\":[{\"kv\":{\"key\":"
                     "\"YQ==\",\"mod_revision\":\"8\"}},{\"type\":\"DELETE\",\"kv\":{\"key\":"
                     "\"Yg==\",\"mod_revision\":\"9\"}}]}}";
    assert_int_equal(sc_etcd_decode_watch(ev, strlen(ev), &m), SC_OK);
    assert_int_equal(m.n_events, 2);
    assert_int_equal(m.events[0].type, SC_ETCD_EVENT_PUT);
    assert_int_equal(m.events[1].type, SC_ETCD_EVENT_DELETE);
    assert_string_equal(m.events[1].kv.key, "b");
    sc_etcd_watch_msg_fini(&m);
    const char *cmp = "{\"result\":{\"canceled\":true,\"compact_revision\":\"6\"}}";
    assert_int_equal(sc_etcd_decode_watch(cmp, strlen(cmp), &m), SC_OK);
    assert_int_equal(m.compact_revision, 6);
    sc_etcd_watch_msg_fini(&m);
    int64_t id, ttl;
    const char *ka = "{\"result\":{\"header\":{},\"ID\":\"12345\"}}";
    assert_int_equal(sc_etcd_decode_lease(ka, strlen(ka), &id, &ttl), SC_OK);
    assert_int_equal(id, 12345);
    assert_int_equal(ttl, 0);
    char end[8];
    assert_int_equal(sc_etcd_prefix_end("/a/", 3, end), 3);
    assert_memory_equal(end, "/a0", 3);
    assert_int_equal(sc_etcd_prefix_end("a\xff", 2, end), 1);
    assert_int_equal(end[0], 'b');
    assert_int_equal(sc_etcd_prefix_end("\xff", 1, end), 1);
    assert_int_equal(end[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoders),    cmocka_unit_test(test_kv),
        cmocka_unit_test(test_range_pages), cmocka_unit_test(test_txn),
        cmocka_unit_test(test_lease),       cmocka_unit_test(test_keeper_outage),
        cmocka_unit_test(test_watch),       cmocka_unit_test(test_failover),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
