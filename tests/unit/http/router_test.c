/* Tests for the request router (src/http/router.c) and the REST helpers it applies: 404/405
 * with Elasticsearch's error envelope, captures, query-string decoding, pretty, filter_path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/rest.h"
#include "http/router.h"

typedef struct call {
    sc_arena arena;
    sc_rest_req *req;
    sc_rest_resp resp;
    json_t *json;
} call;

static void run(call *c, const char *method, const char *path, const char *query)
{
    sc_arena_init(&c->arena, 0);
    c->req = sc_arena_calloc(&c->arena, 1, sizeof *c->req);
    assert_non_null(c->req);
    c->req->arena = &c->arena;
    c->req->client_fd = -1;
    c->req->method = sc_router_method(method);
    c->req->method_str = method;
    c->req->path = path;
    if (query)
        sc_router_parse_query(c->req, query, strlen(query));
    sc_rest_resp_init(&c->resp);
    sc_router_dispatch(c->req, &c->resp);
    json_error_t err;
    c->json = json_loadb((const char *)c->resp.body.ptr, c->resp.body.len, 0, &err);
}

static void done(call *c)
{
    json_decref(c->json);
    sc_rest_resp_fini(&c->resp);
    sc_arena_fini(&c->arena);
}

static const char *error_type(const call *c)
{
    return json_string_value(json_object_get(json_object_get(c->json, "error"), "type"));
}

static void test_unknown_route_404(void **state)
{
    (void)state;
    call c;
    run(&c, "GET", "/_nothing/here", NULL);
    assert_int_equal(c.resp.status, 404);
    assert_string_equal(error_type(&c), "illegal_argument_exception");
    assert_int_equal(json_integer_value(json_object_get(c.json, "status")), 404);
    json_t *rc = json_object_get(json_object_get(c.json, "error"), "root_cause");
    assert_int_equal(json_array_size(rc), 1);
    done(&c);
    run(&c, "GET", "/a/b/c/d/e/f/g/h/i/j", NULL);
    assert_int_equal(c.resp.status, 404);
    done(&c);
}

static void test_wrong_method_405(void **state)
{
    (void)state;
    call c;
    run(&c, "DELETE", "/_cluster/health", NULL);
    assert_int_equal(c.resp.status, 405);
    const char *reason =
        json_string_value(json_object_get(json_object_get(c.json, "error"), "reason"));
    assert_non_null(strstr(reason, "allowed: [GET]"));
    done(&c);
    run(&c, "PATCH", "/idx/_doc/1", NULL);
    assert_int_equal(c.resp.status, 405);
    done(&c);
}

static void test_query_decoding(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_rest_req req;
    memset(&req, 0, sizeof req);
    req.arena = &a;
    const char *q = "q=title%3Ahello+world&pretty&size=5&&bad=%zz";
    sc_router_parse_query(&req, q, strlen(q));
    assert_int_equal(req.n_params, 4);
    assert_string_equal(sc_rest_param_get(&req, "q"), "title:hello world");
    assert_string_equal(sc_rest_param_get(&req, "pretty"), "");
    assert_true(sc_rest_param_bool(&req, "pretty", false));
    bool ok = true;
    assert_int_equal(sc_rest_param_int(&req, "size", 10, &ok), 5);
    assert_true(ok);
    assert_string_equal(sc_rest_param_get(&req, "bad"), "%zz");
    assert_int_equal(sc_rest_param_int(&req, "bad", 10, &ok), 10);
    assert_false(ok);
    sc_arena_fini(&a);
}

static void test_filter_path(void **state)
{
    (void)state;
    sc_buf b = {0};
    const char *doc = "{\"took\":3,\"hits\":{\"total\":{\"value\":2},\"hits\":[{\"_id\":\"a\","
                      "\"_score\":1.5},{\"_id\":\"b\",\"_score\":0.5}]},\"x\":{\"y\":{\"z\":1}}}";
    assert_int_equal(sc_vec_append(&b, (const unsigned char *)doc, strlen(doc)), SC_OK);
    assert_int_equal(sc_rest_filter_path(&b, "hits.hits._id,took", false), SC_OK);
    assert_int_equal(b.len,
                     strlen("{\"took\":3,\"hits\":{\"hits\":[{\"_id\":\"a\"},{\"_id\":\"b\"}]}}"));
    assert_memory_equal(b.ptr, "{\"took\":3,\"hits\":{\"hits\":[{\"_id\":\"a\"},{\"_id\":\"b\"}]}}",
                        b.len);
    sc_vec_clear(&b);
    assert_int_equal(sc_vec_append(&b, (const unsigned char *)doc, strlen(doc)), SC_OK);
    assert_int_equal(sc_rest_filter_path(&b, "**.z", false), SC_OK);
    assert_memory_equal(b.ptr, "{\"x\":{\"y\":{\"z\":1}}}", b.len);
    sc_vec_clear(&b);
    assert_int_equal(sc_vec_append(&b, (const unsigned char *)doc, strlen(doc)), SC_OK);
    assert_int_equal(sc_rest_filter_path(&b, "nothing", false), SC_OK);
    assert_memory_equal(b.ptr, "{}", b.len);
    sc_vec_free(&b);
}

static void test_error_envelope(void **state)
{
    (void)state;
    sc_rest_resp r;
    sc_rest_resp_init(&r);
    sc_rest_kv kv[] = {{"index", "i\"x"}, {"grouped", SC_REST_TRUE}};
    sc_rest_error(NULL, &r, 400, "parsing_exception", "bad \x01 thing", kv, 2);
    json_error_t err;
    json_t *j = json_loadb((const char *)r.body.ptr, r.body.len, 0, &err);
    assert_non_null(j);
    json_t *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "index")), "i\"x");
    assert_true(json_is_true(json_object_get(e, "grouped")));
    assert_string_equal(json_string_value(json_object_get(e, "reason")), "bad \x01 thing");
    assert_int_equal(r.status, 400);
    json_decref(j);
    sc_rest_resp_fini(&r);
}

/* A decoded segment or parameter holding NUL is refused before any handler runs (the
 * handlers here would need a node: reaching one would crash, so 400 proves the refusal). */
static void test_nul_refused(void **state)
{
    (void)state;
    static const char *const paths[] = {"/victim%00/_doc/1",  "/victim%00",    "/a%00b/_search",
                                        "/_cat/indices/x%00", "/_tasks/a%00b", "/x/_doc%00/1"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        call c;
        run(&c, i == 0 || i == 1 ? "DELETE" : "GET", paths[i], NULL);
        assert_int_equal(c.resp.status, 400);
        const char *want = i <= 3 ? "invalid_index_name_exception" : "illegal_argument_exception";
        assert_string_equal(error_type(&c), want);
        done(&c);
    }
    call c;
    run(&c, "GET", "/", "pretty&routing=a%00b");
    assert_int_equal(c.resp.status, 400);
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(c.json, "error"), "reason")),
               "[routing]"));
    done(&c);
}

static void test_decode_keeps_length(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    size_t n;
    char *d = sc_router_decode(&a, "a%00b%2F+%4", 11, false, &n);
    assert_int_equal(n, 7);
    assert_memory_equal(d, "a\0b/+%4", 7);
    d = sc_router_decode(&a, "x+y%2b", 6, true, &n);
    assert_int_equal(n, 4);
    assert_memory_equal(d, "x y+", 4);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_route_404),   cmocka_unit_test(test_wrong_method_405),
        cmocka_unit_test(test_query_decoding),      cmocka_unit_test(test_filter_path),
        cmocka_unit_test(test_error_envelope),      cmocka_unit_test(test_nul_refused),
        cmocka_unit_test(test_decode_keeps_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
