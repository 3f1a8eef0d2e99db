/* Tests for cluster/alias.c and cluster/resolve.c on a node in a temporary folder: atomic alias
 * changes (all or nothing), resolution of names, aliases and wildcards with alias filters and
 * search routing, write-index lookups, and aliases surviving a reopen. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/file.h"
#include "cluster/alias.h"
#include "cluster/node.h"

static sc_node *open_node(const char *dir)
{
    sc_node_config cfg = {.data_dir = dir, .node_name = "t", .search_threads = 1};
    sc_node *n = NULL;
    assert_int_equal(sc_node_open(&cfg, &n), SC_OK);
    return n;
}

static void add(sc_node *n, const char *index, const char *alias, const char *props_json,
                sc_status want)
{
    json_t *props = json_loads(props_json, 0, NULL);
    sc_alias_action a = {.op = SC_ALIAS_ADD, .index = index, .alias = alias, .props = props};
    sc_cluster_error err;
    assert_int_equal(sc_node_aliases_update(n, &a, 1, &err), want);
    json_decref(props);
}

static void test_resolve_and_write_index(void **state)
{
    (void)state;
    char dir[] = "/tmp/scry-alias-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sc_node *n = open_node(dir);
    sc_cluster_error err;
    assert_int_equal(sc_node_create_index(n, "a", NULL, NULL, &err), SC_OK);
    assert_int_equal(sc_node_create_index(n, "b", NULL, NULL, &err), SC_OK);
    add(n, "a", "al", "{\"filter\":{\"term\":{\"k\":\"x\"}},\"routing\":\"r\"}", SC_OK);
    add(n, "b", "al", "{}", SC_OK);
    add(n, "a", "b", "{}", SC_EINVAL); /* an index's name */

    sc_resolved r;
    assert_int_equal(sc_node_resolve_read(n, "al", 0, &r, &err), SC_OK);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.list[0]->name, "a");
    assert_non_null(r.filters[0]);
    assert_string_equal(r.routings[0], "r");
    assert_null(r.filters[1]);
    assert_null(r.routings[1]);
    sc_resolved_fini(&r);
    /* named directly too: unfiltered */
    assert_int_equal(sc_node_resolve_read(n, "al,a", 0, &r, &err), SC_OK);
    assert_null(r.filters[0]);
    sc_resolved_fini(&r);
    assert_int_equal(sc_node_resolve_read(n, "a*,-b", 0, &r, &err), SC_OK);
    assert_int_equal(r.n, 1);
    sc_resolved_fini(&r);
    assert_int_equal(sc_node_resolve_read(n, "nope", 0, &r, &err), SC_ENOTFOUND);

    sc_arena arena;
    sc_arena_init(&arena, 0);
    sc_index *ix;
    const char *routing;
    assert_int_equal(sc_node_index_for_doc(n, "al", true, &arena, &ix, &routing, &err), SC_EINVAL);
    assert_string_equal(err.type, "illegal_argument_exception");
    add(n, "b", "al", "{\"is_write_index\":true}", SC_OK);
    assert_int_equal(sc_node_index_for_doc(n, "al", true, &arena, &ix, &routing, &err), SC_OK);
    assert_string_equal(ix->name, "b");
    assert_null(routing);
    sc_index_unref(ix);
    add(n, "a", "al", "{\"is_write_index\":true}", SC_EINVAL); /* two write indices */
    sc_arena_fini(&arena);

    /* all or nothing: the second action fails, the first is not applied */
    json_t *empty = json_object();
    sc_alias_action acts[2] = {
        {.op = SC_ALIAS_ADD, .index = "a", .alias = "new", .props = empty},
        {.op = SC_ALIAS_REMOVE, .index = "a", .alias = "missing", .must_exist = true},
    };
    assert_int_equal(sc_node_aliases_update(n, acts, 2, &err), SC_ENOTFOUND);
    assert_string_equal(err.type, "aliases_not_found_exception");
    assert_int_equal(sc_node_resolve_read(n, "new", 0, &r, &err), SC_ENOTFOUND);
    json_decref(empty);

    /* aliases survive a reopen */
    sc_node_close(n);
    n = open_node(dir);
    assert_int_equal(sc_node_resolve_read(n, "al", 0, &r, &err), SC_OK);
    assert_int_equal(r.n, 2);
    assert_non_null(r.filters[0]);
    sc_resolved_fini(&r);
    sc_node_close(n);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_and_write_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
