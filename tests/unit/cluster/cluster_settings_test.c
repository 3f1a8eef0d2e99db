/* Tests for cluster/cluster_settings: flattening nested and dotted settings into string values,
 * nesting them back, rejected values, and the single-node store (persistent kept, null removes,
 * concurrent-safe read-modify-write through the lock file). */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster/cluster_settings.h"
#include "cluster/node.h"

static void test_flatten_and_nest(void **state)
{
    (void)state;
    json_t *in =
        json_loads("{\"a\":{\"b\":1,\"c\":{\"d\":true}},\"a.e\":\"x\",\"f\":[1,\"y\",false],"
                   "\"g\":null,\"h\":1.5}",
                   0, NULL);
    json_t *flat = json_object();
    sc_cluster_error err;
    assert_int_equal(sc_settings_flatten(in, flat, &err), SC_OK);
    json_t *want = json_loads("{\"a.b\":\"1\",\"a.c.d\":\"true\",\"a.e\":\"x\",\"f\":[\"1\",\"y\","
                              "\"false\"],\"g\":null,\"h\":\"1.5\"}",
                              0, NULL);
    assert_true(json_equal(flat, want));
    json_object_del(flat, "g");
    json_t *nested = sc_settings_nest(flat);
    json_t *want_nested = json_loads(
        "{\"a\":{\"b\":\"1\",\"c\":{\"d\":\"true\"},\"e\":\"x\"},\"f\":[\"1\",\"y\",\"false\"],"
        "\"h\":\"1.5\"}",
        0, NULL);
    assert_true(json_equal(nested, want_nested));
    json_decref(in);
    json_decref(flat);
    json_decref(want);
    json_decref(nested);
    json_decref(want_nested);
    static const char *const bad[] = {"{\"a\":[{}]}", "{\"a\":[[1]]}", "[1]", "5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *b = json_loads(bad[i], JSON_DECODE_ANY, NULL);
        json_t *f = json_object();
        assert_int_equal(sc_settings_flatten(b, f, &err), SC_EINVAL);
        assert_string_equal(err.type, "illegal_argument_exception");
        json_decref(b);
        json_decref(f);
    }
}

static void test_single_node_store(void **state)
{
    (void)state;
    char dir[] = "/tmp/scry-settings-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sc_node_config nc = {.data_dir = dir, .node_name = "s", .search_threads = 1};
    sc_node *n;
    assert_int_equal(sc_node_open(&nc, &n), SC_OK);
    json_t *p = json_loads("{\"x\":{\"y\":2}}", 0, NULL), *t = json_loads("{\"z\":\"1\"}", 0, NULL);
    json_t *ap, *at;
    sc_cluster_error err;
    assert_int_equal(sc_cluster_settings_update(n, p, t, &ap, &at, &err), SC_OK);
    assert_string_equal(json_string_value(json_object_get(ap, "x.y")), "2");
    json_decref(ap);
    json_decref(at);
    json_decref(p);
    json_decref(t);
    p = json_loads("{\"x.y\":null,\"k\":\"v\"}", 0, NULL);
    assert_int_equal(sc_cluster_settings_update(n, p, NULL, &ap, &at, &err), SC_OK);
    json_decref(ap);
    json_decref(at);
    json_decref(p);
    json_t *gp, *gt;
    assert_int_equal(sc_cluster_settings_get(n, &gp, &gt), SC_OK);
    json_t *want_p = json_loads("{\"k\":\"v\"}", 0, NULL),
           *want_t = json_loads("{\"z\":\"1\"}", 0, NULL);
    assert_true(json_equal(gp, want_p));
    assert_true(json_equal(gt, want_t));
    json_decref(gp);
    json_decref(gt);
    json_decref(want_p);
    json_decref(want_t);
    sc_node_close(n);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flatten_and_nest),
        cmocka_unit_test(test_single_node_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
