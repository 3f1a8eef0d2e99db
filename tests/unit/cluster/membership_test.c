/* Tests for cluster/membership against a real etcd started by the test (etcd_fixture.h), with
 * three in-process nodes (each its own data folder and membership): one master seen by all,
 * index metadata published and allocated by the master, a clean leave handing the master role
 * over with promotions under a new primary term, a lease revoked behind a node's back (it
 * registers again), mapping changes and index deletion reaching every view. */
#include <jansson.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/etcd.h"
#include "cluster/membership.h"
#include "cluster/node.h"
#include "etcd_fixture.h"

#define N 3

static etcd_fixture g_etcd;
static sc_node *g_nodes[N];
static sc_membership *g_ms[N];
static char g_dirs[N][256];

static void start_member(int i)
{
    sc_membership_config mc = {.endpoints = g_etcd.url,
                               .cluster_name = "unit",
                               .http_address = "127.0.0.1:1",
                               .lease_ttl_s = 2};
    assert_int_equal(sc_membership_start(&mc, g_nodes[i], &g_ms[i]), SC_OK);
}

static int setup(void **state)
{
    (void)state;
    if (fixture_start(&g_etcd, 0) != 0)
        return -1;
    for (int i = 0; i < N; i++) {
        snprintf(g_dirs[i], sizeof g_dirs[i], "%s/node%d", g_etcd.dir, i);
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        sc_node_config nc = {.data_dir = g_dirs[i], .node_name = name, .search_threads = 1};
        if (sc_node_open(&nc, &g_nodes[i]) != SC_OK)
            return -1;
        start_member(i);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < N; i++) {
        sc_membership_stop(g_ms[i]);
        sc_node_close(g_nodes[i]);
    }
    fixture_stop(&g_etcd);
    return 0;
}

/* Whether every running member sees `want` nodes and the same single master; fills master. */
static bool agreed(size_t want, int *master)
{
    char id[SC_ALLOC_NODE_MAX] = "";
    int n_master = 0;
    for (int i = 0; i < N; i++) {
        if (!g_ms[i])
            continue;
        sc_cluster_view v;
        assert_int_equal(sc_membership_view(g_ms[i], &v), SC_OK);
        bool ok = v.n_nodes == want && v.master_id[0] && (!id[0] || !strcmp(id, v.master_id));
        snprintf(id, sizeof id, "%s", v.master_id);
        sc_cluster_view_fini(&v);
        if (!ok)
            return false;
        if (sc_membership_is_master(g_ms[i])) {
            n_master++;
            *master = i;
        }
    }
    return n_master == 1 && !strcmp(id, sc_node_id(g_nodes[*master]));
}

static int wait_agreed(size_t want)
{
    int master = -1;
    for (int t = 0; t < 600; t++) { /* 30 s: a loaded machine */
        if (agreed(want, &master))
            return master;
        sleep_ms(50);
    }
    fail_msg("members did not agree on %zu nodes and one master", want);
    return -1;
}

/* The routing of index in member i's view once it has `copies` assigned copies per shard. */
static bool routing_ready(int i, const char *index, size_t copies, sc_index_routing *out)
{
    sc_cluster_view v;
    assert_int_equal(sc_membership_view(g_ms[i], &v), SC_OK);
    const sc_index_routing *r = sc_routing_table_find(&v.routing, index);
    bool ok = r != NULL;
    for (uint32_t s = 0; ok && s < r->number_of_shards; s++)
        ok = r->shards[s].n_copies == copies && r->shards[s].copies[0].primary;
    if (ok && out)
        assert_int_equal(sc_index_routing_copy(r, out), SC_OK);
    sc_cluster_view_fini(&v);
    return ok;
}

static void wait_routing(int i, const char *index, size_t copies, sc_index_routing *out)
{
    for (int t = 0; t < 600; t++) { /* 30 s: a loaded machine */
        if (routing_ready(i, index, copies, out))
            return;
        sleep_ms(50);
    }
    fail_msg("no routing for [%s] with %zu copies per shard in member %d", index, copies, i);
}

static void test_join_and_allocate(void **state)
{
    (void)state;
    int master = wait_agreed(N);
    json_t *settings = json_loads("{\"number_of_shards\":3,\"number_of_replicas\":1}", 0, NULL);
    sc_cluster_error err;
    int creator = (master + 1) % N; /* a non-master writes the metadata */
    assert_int_equal(sc_node_create_index(g_nodes[creator], "books", settings, NULL, &err), SC_OK);
    json_decref(settings);
    for (int i = 0; i < N; i++) {
        sc_index_routing r;
        wait_routing(i, "books", 2, &r);
        for (uint32_t s = 0; s < 3; s++) {
            assert_int_equal(r.shards[s].primary_term, 1);
            assert_string_not_equal(r.shards[s].copies[0].node, r.shards[s].copies[1].node);
        }
        sc_index_routing_fini(&r);
    }
    /* a mapping change reaches every view */
    sc_index *ix = sc_node_index(g_nodes[creator], "books");
    json_t *upd = json_loads("{\"properties\":{\"title\":{\"type\":\"text\"}}}", 0, NULL);
    assert_int_equal(sc_index_put_mapping(ix, upd, &err), SC_OK);
    json_decref(upd);
    sc_index_unref(ix);
    for (int t = 0; t < 600; t++) { /* 30 s: a loaded machine */
        sc_cluster_view v;
        assert_int_equal(sc_membership_view(g_ms[master], &v), SC_OK);
        json_t *props = json_object_get(
            json_object_get(json_object_get(v.indices, "books"), "mappings"), "properties");
        bool seen = json_object_get(props, "title") != NULL;
        sc_cluster_view_fini(&v);
        if (seen)
            return;
        sleep_ms(50);
    }
    fail_msg("mapping change not seen by the master");
}

static void test_leave_promotes(void **state)
{
    (void)state;
    int master = wait_agreed(N);
    sc_index_routing before;
    wait_routing(master, "books", 2, &before);
    /* a fresh replica is not in sync (it holds nothing before its recovery) */
    for (uint32_t s = 0; s < 3; s++) {
        assert_int_equal(before.shards[s].n_in_sync, 1);
        assert_string_equal(before.shards[s].in_sync[0].alloc_id, before.shards[s].copies[0].alloc_id);
    }
    /* the primaries mark their replicas in sync, as after a completed peer recovery */
    for (uint32_t s = 0; s < 3; s++)
        assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", s,
                                                   before.shards[s].copies[1].alloc_id, true, 1),
                         SC_OK);
    for (int t = 0; t < 600; t++) {
        sc_index_routing_fini(&before);
        wait_routing(master, "books", 2, &before);
        bool all = true;
        for (uint32_t s = 0; s < 3; s++)
            all &= before.shards[s].n_in_sync == 2;
        if (all)
            break;
        sleep_ms(50);
    }
    char gone[SC_ALLOC_NODE_MAX];
    snprintf(gone, sizeof gone, "%s", sc_node_id(g_nodes[master]));
    sc_membership_stop(g_ms[master]); /* revokes the lease: the master key goes at once */
    g_ms[master] = NULL;
    int next = wait_agreed(N - 1);
    assert_int_not_equal(next, master);
    /* The new master's routing (the old one also has 2 copies a shard: wait until no copy is
     * on the node that left, as a loaded machine may show the old routing for a while). */
    sc_index_routing after;
    for (int t = 0;; t++) {
        wait_routing(next, "books", 2, &after);
        bool moved = true;
        for (uint32_t s = 0; s < 3; s++)
            for (size_t k = 0; k < after.shards[s].n_copies; k++)
                moved &= strcmp(after.shards[s].copies[k].node, gone) != 0;
        if (moved)
            break;
        sc_index_routing_fini(&after);
        if (t == 600)
            fail_msg("the routing still names the node that left");
        sleep_ms(50);
    }
    for (uint32_t s = 0; s < 3; s++) {
        bool was_on_gone = !strcmp(before.shards[s].copies[0].node, gone);
        assert_int_equal(after.shards[s].primary_term, was_on_gone ? 2 : 1);
        for (size_t k = 0; k < after.shards[s].n_copies; k++)
            assert_string_not_equal(after.shards[s].copies[k].node, gone);
    }
    sc_index_routing_fini(&before);
    sc_index_routing_fini(&after);
    start_member(master); /* rejoins under the same node id */
    wait_agreed(N);
}

static void test_lease_revoked_behind_back(void **state)
{
    (void)state;
    int master = wait_agreed(N);
    sc_etcd *e;
    assert_int_equal(sc_etcd_new(g_etcd.url, 2000, &e), SC_OK);
    char key[256];
    snprintf(key, sizeof key, "/scry/unit/nodes/%s", sc_node_id(g_nodes[master]));
    sc_etcd_kvs r;
    assert_int_equal(sc_etcd_get(e, key, &r, NULL), SC_OK);
    assert_int_equal(r.len, 1);
    int64_t lease = r.kvs[0].lease;
    sc_etcd_kvs_fini(&r);
    assert_int_equal(sc_etcd_lease_revoke(e, lease, NULL), SC_OK);
    /* the node notices, re-registers under a new lease, and there is one master again */
    for (int t = 0; t < 600; t++) { /* 30 s: a loaded machine */
        assert_int_equal(sc_etcd_get(e, key, &r, NULL), SC_OK);
        bool back = r.len == 1 && r.kvs[0].lease != lease;
        sc_etcd_kvs_fini(&r);
        if (back)
            break;
        sleep_ms(50);
    }
    wait_agreed(N);
    sc_etcd_free(e);
}

static _Atomic int g_changes;

static void on_change(void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&g_changes, 1);
}

/* The primary's in-sync updates: fenced by the primary term, seen by every view. */
static void test_in_sync_updates(void **state)
{
    (void)state;
    int master = wait_agreed(N);
    assert_int_equal(sc_membership_on_change(g_ms[master], on_change, NULL), SC_OK);
    sc_index_routing r;
    wait_routing(master, "books", 2, &r);
    const sc_shard_routing *sh = &r.shards[0];
    char rep[SC_ALLOC_ID_MAX], prim[SC_ALLOC_ID_MAX];
    snprintf(rep, sizeof rep, "%s", sh->copies[1].alloc_id);
    snprintf(prim, sizeof prim, "%s", sh->copies[0].alloc_id);
    int64_t term = sh->primary_term;
    sc_index_routing_fini(&r);
    int before = atomic_load(&g_changes);
    /* a stale primary (older term) is refused */
    assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", 0, rep, false, term - 1),
                     SC_ECONFLICT);
    assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", 0, prim, false, term),
                     SC_EINVAL);
    assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", 9, rep, false, term),
                     SC_ENOTFOUND);
    assert_int_equal(sc_membership_set_in_sync(g_ms[master], "nope", 0, rep, false, term),
                     SC_ENOTFOUND);
    assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", 0, "none", true, term),
                     SC_ENOTFOUND);
    /* in (a recovery finished; idempotent), out (a failed write), in again: every view follows */
    static const bool steps[] = {true, true, false, true};
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        assert_int_equal(sc_membership_set_in_sync(g_ms[master], "books", 0, rep, steps[k], term),
                         SC_OK);
        for (int i = 0; i < N; i++) {
            bool seen = false;
            for (int t = 0; t < 200 && !seen; t++) {
                assert_true(routing_ready(i, "books", 2, &r));
                seen = r.shards[0].n_in_sync == (steps[k] ? 2u : 1u);
                sc_index_routing_fini(&r);
                if (!seen)
                    sleep_ms(50);
            }
            assert_true(seen);
        }
    }
    assert_true(atomic_load(&g_changes) > before);
}

static void test_delete_index(void **state)
{
    (void)state;
    int master = wait_agreed(N);
    sc_cluster_error err;
    int owner = -1;
    for (int i = 0; i < N; i++) {
        sc_index *ix = sc_node_index(g_nodes[i], "books");
        if (ix) {
            owner = i;
            sc_index_unref(ix);
        }
    }
    assert_true(owner >= 0);
    assert_int_equal(sc_node_delete_index(g_nodes[owner], "books", &err), SC_OK);
    for (int t = 0; t < 600; t++) { /* 30 s: a loaded machine */
        sc_cluster_view v;
        assert_int_equal(sc_membership_view(g_ms[master], &v), SC_OK);
        bool gone =
            !json_object_get(v.indices, "books") && !sc_routing_table_find(&v.routing, "books");
        sc_cluster_view_fini(&v);
        if (gone)
            return;
        sleep_ms(50);
    }
    fail_msg("index metadata or routing still there after the delete");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_and_allocate),
        cmocka_unit_test(test_leave_promotes),
        cmocka_unit_test(test_lease_revoked_behind_back),
        cmocka_unit_test(test_in_sync_updates),
        cmocka_unit_test(test_delete_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
