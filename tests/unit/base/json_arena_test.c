/* Tests for base/json_arena: jansson trees parsed inside a scope live in the arena (its bytes
 * grow, malloc'd values do not), equal what a parse outside a scope gives (random documents,
 * printed seed), mix with malloc'd values that outlive the scope, fall back to malloc at the
 * budget without tripping it and past the slab table, and nested scopes stay closed. Run under
 * ASan: a free() of arena memory or a leak of a malloc'd child fails the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/json.h"

static json_t *parse(const char *s)
{
    json_t *v = NULL;
    sc_json_limits lim = {.reject_duplicates = true};
    sc_json_error e;
    assert_int_equal(sc_json_parse(sc_slice_cstr(s), &lim, &v, &e), SC_OK);
    return v;
}

static const char *body = "{\"query\":{\"query_string\":{\"query\":\"states\",\"default_field\":"
                          "\"body\"}},\"size\":0,\"track_total_hits\":true,\"tags\":[1,2.5,"
                          "\"x\",null,false]}";

static void test_tree_in_arena(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_json_arena_scope js;
    sc_json_arena_begin(&js, &a);
    assert_true(js.open);
    size_t before = a.used_bytes;
    json_t *v = parse(body);
    assert_true(a.used_bytes > before); /* the tree took slabs of the arena */
    sc_json_arena_hold(&js);
    size_t held = a.used_bytes;
    /* Made while holding: malloc'd, so it may outlive the scope. */
    json_t *kept = json_pack("{s:s, s:i}", "a", "bee", "n", 7);
    json_t *child = json_string("malloc'd child of an arena object");
    assert_int_equal(a.used_bytes, held);
    assert_int_equal(json_object_set_new(v, "extra", child), 0);
    assert_int_equal(json_object_set(kept, "q", json_object_get(v, "query")), 0);
    json_t *ref = parse(body);
    json_object_del(ref, "tags");
    assert_int_equal(json_object_del(v, "tags"), 0); /* frees inside the scope: no-ops */
    assert_true(json_equal(json_object_get(v, "query"), json_object_get(ref, "query")));
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"extra\":\"malloc'd child of an arena object\""));
    free(text);                 /* json_dumps' result is plain malloc memory outside allocation */
    json_object_del(kept, "q"); /* drops the last outside ref to the subtree */
    json_decref(v);             /* frees the malloc'd child; ASan would see a leak */
    json_decref(ref);
    sc_json_arena_end(&js);
    assert_false(js.open);
    assert_string_equal(json_string_value(json_object_get(kept, "a")), "bee");
    json_decref(kept);
    assert_false(a.over_budget);
    sc_arena_fini(&a);
}

static void test_budget_falls_back(void **state)
{
    (void)state;
    /* A body of ~40 KiB in an arena with 16 KiB of budget: the slabs stop at the budget and
     * the rest of the tree is malloc'd; the budget is never tripped. */
    char *big = malloc(64 * 1024);
    assert_non_null(big);
    size_t n = 0;
    n += (size_t)sprintf(big + n, "{\"terms\":[");
    for (int i = 0; i < 2000; i++)
        n += (size_t)sprintf(big + n, "%s\"term%05d\"", i ? "," : "", i);
    sprintf(big + n, "]}");
    json_t *ref = parse(big);
    sc_arena a;
    sc_arena_init(&a, 16 * 1024);
    sc_json_arena_scope js;
    sc_json_arena_begin(&js, &a);
    json_t *v = parse(big);
    sc_json_arena_hold(&js);
    assert_true(a.used_bytes > 0 && a.used_bytes <= 16 * 1024);
    assert_false(a.over_budget);
    assert_true(json_equal(v, ref));
    json_decref(v);
    sc_json_arena_end(&js);
    sc_arena_fini(&a);
    /* Unlimited budget, ~2 MiB body: more slabs than the table holds, the rest malloc'd. */
    size_t cap = 3u << 20;
    char *huge = malloc(cap);
    assert_non_null(huge);
    n = (size_t)sprintf(huge, "[");
    for (int i = 0; n + 64 < cap - 16; i++)
        n += (size_t)sprintf(huge + n, "%s{\"k%d\":\"v%d\"}", i ? "," : "", i, i);
    sprintf(huge + n, "]");
    json_t *href = parse(huge);
    sc_arena_init(&a, 0);
    sc_json_arena_begin(&js, &a);
    v = parse(huge);
    sc_json_arena_hold(&js);
    assert_true(json_equal(v, href));
    json_decref(v);
    sc_json_arena_end(&js);
    sc_arena_fini(&a);
    json_decref(href);
    json_decref(ref);
    free(huge);
    free(big);
}

static void test_nested_and_null(void **state)
{
    (void)state;
    sc_arena a, b;
    sc_arena_init(&a, 0);
    sc_arena_init(&b, 0);
    sc_json_arena_scope outer, inner, none;
    sc_json_arena_begin(&none, NULL);
    assert_false(none.open);
    sc_json_arena_end(&none);
    sc_json_arena_begin(&outer, &a);
    sc_json_arena_begin(&inner, &b);
    assert_true(outer.open);
    assert_false(inner.open); /* one scope per thread */
    json_t *v = parse(body);
    sc_json_arena_hold(&inner); /* no-ops for a closed scope */
    sc_json_arena_end(&inner);
    json_t *w = parse(body); /* the outer scope still allocates */
    assert_int_equal(b.used_bytes, 0);
    sc_json_arena_hold(&outer);
    assert_true(json_equal(v, w));
    json_decref(v);
    json_decref(w);
    sc_json_arena_end(&outer);
    /* With no scope, parsing is malloc as before. */
    size_t used = a.used_bytes;
    v = parse(body);
    assert_int_equal(a.used_bytes, used);
    json_decref(v);
    sc_arena_fini(&a);
    sc_arena_fini(&b);
}

/* A random JSON value of bounded depth, appended to buf. */
static void random_value(char *buf, size_t *n, size_t cap, int depth, unsigned *seed)
{
    if (*n + 200 > cap)
        depth = 0;
    int kind = rand_r(seed) % (depth > 0 ? 8 : 6);
    switch (kind) {
    case 0: *n += (size_t)snprintf(buf + *n, cap - *n, "%d", rand_r(seed) % 100000 - 500); break;
    case 1: *n += (size_t)snprintf(buf + *n, cap - *n, "%.6g", rand_r(seed) / 1000.0); break;
    case 2: {
        int len = rand_r(seed) % 40;
        buf[(*n)++] = '"';
        for (int i = 0; i < len; i++)
            buf[(*n)++] = (char)('a' + rand_r(seed) % 26);
        if (rand_r(seed) % 4 == 0)
            *n += (size_t)snprintf(buf + *n, cap - *n, "\\u00e9\\n");
        buf[(*n)++] = '"';
        break;
    }
    case 3: *n += (size_t)snprintf(buf + *n, cap - *n, "true"); break;
    case 4: *n += (size_t)snprintf(buf + *n, cap - *n, "null"); break;
    case 5: *n += (size_t)snprintf(buf + *n, cap - *n, "false"); break;
    case 6: {
        int len = rand_r(seed) % 6;
        buf[(*n)++] = '[';
        for (int i = 0; i < len; i++) {
            if (i)
                buf[(*n)++] = ',';
            random_value(buf, n, cap, depth - 1, seed);
        }
        buf[(*n)++] = ']';
        break;
    }
    default: {
        int len = rand_r(seed) % 6;
        buf[(*n)++] = '{';
        for (int i = 0; i < len; i++) {
            if (i)
                buf[(*n)++] = ',';
            *n += (size_t)snprintf(buf + *n, cap - *n, "\"k%d\":", i);
            random_value(buf, n, cap, depth - 1, seed);
        }
        buf[(*n)++] = '}';
        break;
    }
    }
    buf[*n] = 0;
}

static void test_random_documents(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    const char *env = getenv("SCRY_TEST_SEED");
    if (env)
        seed = (unsigned)strtoul(env, NULL, 10);
    printf("json_arena_test seed %u (SCRY_TEST_SEED)\n", seed);
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (int round = 0; round < 300; round++) {
        size_t n = 0;
        buf[n++] = '[';
        random_value(buf, &n, cap, 1 + rand_r(&seed) % 6, &seed);
        buf[n++] = ']';
        buf[n] = 0;
        json_t *ref = parse(buf);
        sc_arena a;
        /* Budgets from tight to none, so some trees are part arena, part malloc. */
        sc_arena_init(&a, (size_t)(rand_r(&seed) % 3) * 2048);
        sc_json_arena_scope js;
        sc_json_arena_begin(&js, &a);
        json_t *v = parse(buf);
        sc_json_arena_hold(&js);
        assert_false(a.over_budget);
        char *x = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        char *y = json_dumps(ref, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_string_equal(x, y);
        free(x);
        free(y);
        json_decref(v);
        sc_json_arena_end(&js);
        sc_arena_fini(&a);
        json_decref(ref);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_in_arena),
        cmocka_unit_test(test_budget_falls_back),
        cmocka_unit_test(test_nested_and_null),
        cmocka_unit_test(test_random_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
