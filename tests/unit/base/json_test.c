/* Tests for base/json: parsing with limits (bytes, depth; 10,000 levels fail cleanly), error
 * positions (line, column, byte offset), duplicates, NUL in strings, and typed getters whose
 * errors name the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"

static sc_status parse(const char *s, const sc_json_limits *lim, json_t **out, sc_json_error *e)
{
    return sc_json_parse(sc_slice_cstr(s), lim, out, e);
}

static void test_parse_ok(void **state)
{
    (void)state;
    json_t *v;
    sc_json_error e;
    assert_int_equal(parse("{\"a\": [1, 2.5, \"x\", true, null]}", NULL, &v, &e), SC_OK);
    assert_true(json_is_object(v));
    json_decref(v);
    /* Not NUL-terminated: only len bytes are read. */
    const char buf[] = {'[', '1', ']', 'x', 'x'};
    assert_int_equal(sc_json_parse(sc_slice_make(buf, 3), NULL, &v, &e), SC_OK);
    assert_int_equal(json_array_size(v), 1);
    json_decref(v);
    /* Escaped NUL inside a string is kept. */
    assert_int_equal(parse("{\"s\":\"a\\u0000b\"}", NULL, &v, &e), SC_OK);
    sc_slice s;
    assert_int_equal(sc_json_get_str(v, "s", &s, &e), SC_OK);
    assert_int_equal(s.len, 3);
    assert_memory_equal(s.ptr, "a\0b", 3);
    json_decref(v);
    /* Scalars at top level only when asked for. */
    assert_int_equal(parse("42", NULL, &v, &e), SC_EPARSE);
    sc_json_limits any = {.any_value = true};
    assert_int_equal(parse("42", &any, &v, &e), SC_OK);
    assert_int_equal(json_integer_value(v), 42);
    json_decref(v);
}

static void test_parse_errors(void **state)
{
    (void)state;
    json_t *v = (json_t *)&v;
    sc_json_error e;
    memset(&e, 0, sizeof(e));
    assert_int_equal(parse("{\n  \"a\": 1,\n  \"b\": tru\n}", NULL, &v, &e), SC_EPARSE);
    assert_null(v);
    assert_int_equal(e.line, 3);
    assert_true(e.column >= 8 && e.column <= 11);
    assert_true(e.position >= 18 && e.position <= 22);
    assert_true(strlen(e.message) > 0);
    assert_int_equal(parse("", NULL, &v, &e), SC_EPARSE);
    assert_int_equal(parse("{\"a\":1} trailing", NULL, &v, &e), SC_EPARSE);
    assert_int_equal(parse("{\"a\":1,}", NULL, &v, &e), SC_EPARSE);
    assert_int_equal(parse("{\"a\":\"\xff\"}", NULL, &v, &e), SC_EPARSE); /* invalid UTF-8 */
    /* Duplicates are accepted (last wins) unless rejected. */
    assert_int_equal(parse("{\"a\":1,\"a\":2}", NULL, &v, &e), SC_OK);
    json_decref(v);
    sc_json_limits strict = {.reject_duplicates = true};
    assert_int_equal(parse("{\"a\":1,\"a\":2}", &strict, &v, &e), SC_EPARSE);
    assert_non_null(strstr(e.message, "duplicate"));
}

static char *nested(int depth, char open, char close)
{
    char *s = malloc((size_t)depth * 2 + 1);
    memset(s, open, (size_t)depth);
    memset(s + depth, close, (size_t)depth);
    s[depth * 2] = 0;
    return s;
}

static void test_limits(void **state)
{
    (void)state;
    json_t *v;
    sc_json_error e;
    /* Exactly at the default depth parses; one more level fails with the position. */
    char *ok = nested(SC_JSON_DEFAULT_MAX_DEPTH, '[', ']');
    assert_int_equal(parse(ok, NULL, &v, &e), SC_OK);
    json_decref(v);
    free(ok);
    char *deep = nested(SC_JSON_DEFAULT_MAX_DEPTH + 1, '[', ']');
    assert_int_equal(parse(deep, NULL, &v, &e), SC_ELIMIT);
    assert_int_equal(e.position, SC_JSON_DEFAULT_MAX_DEPTH);
    assert_int_equal(e.line, 1);
    assert_int_equal(e.column, SC_JSON_DEFAULT_MAX_DEPTH + 1);
    assert_non_null(strstr(e.message, "depth"));
    free(deep);
    /* 10,000 levels of arrays and of objects fail cleanly. */
    char *very = nested(10000, '[', ']');
    assert_int_equal(parse(very, NULL, &v, &e), SC_ELIMIT);
    free(very);
    char *objs = malloc(10000 * 6 + 1), *p = objs;
    for (int i = 0; i < 10000; i++)
        p += sprintf(p, "{\"a\":");
    assert_int_equal(parse(objs, NULL, &v, &e), SC_ELIMIT);
    free(objs);
    /* Brackets inside strings do not count toward depth. */
    assert_int_equal(parse("[\"[[[[[[[[[[[[\\\"[[[[\"]", &(sc_json_limits){.max_depth = 2}, &v, &e),
                     SC_OK);
    json_decref(v);
    assert_int_equal(parse("[[[1]]]", &(sc_json_limits){.max_depth = 2}, &v, &e), SC_ELIMIT);
    assert_int_equal(e.position, 2);
    /* Byte limit. */
    assert_int_equal(parse("[1,2,3]", &(sc_json_limits){.max_bytes = 6}, &v, &e), SC_ELIMIT);
    assert_non_null(strstr(e.message, "limit"));
    assert_int_equal(parse("[1,2,3]", &(sc_json_limits){.max_bytes = 7}, &v, &e), SC_OK);
    json_decref(v);
    /* The column counts characters, not bytes. */
    assert_int_equal(
        parse("[\"\xc3\xa9\xc3\xa9\",[[1]]]", &(sc_json_limits){.max_depth = 2}, &v, &e),
        SC_ELIMIT);
    assert_int_equal(e.position, 9); /* bytes: [ " 4xUTF-8 " , [ [ */
    assert_int_equal(e.column, 8);   /* characters before it: [ " e e " , [ */
}

static void test_getters(void **state)
{
    (void)state;
    json_t *v;
    sc_json_error e;
    assert_int_equal(parse("{\"s\":\"hi\",\"i\":-7,\"r\":2.5,\"ri\":3.0,\"b\":false,\"o\":{},"
                           "\"a\":[],\"n\":null,\"big\":1e300}",
                           NULL, &v, &e),
                     SC_OK);
    sc_slice s;
    int64_t i;
    double d;
    bool b;
    json_t *o;
    assert_int_equal(sc_json_get_str(v, "s", &s, &e), SC_OK);
    assert_true(sc_slice_eq_cstr(s, "hi"));
    assert_int_equal(sc_json_get_int(v, "i", &i, &e), SC_OK);
    assert_int_equal(i, -7);
    assert_int_equal(sc_json_get_int(v, "ri", &i, &e), SC_OK);
    assert_int_equal(i, 3);
    assert_int_equal(sc_json_get_int(v, "r", &i, &e), SC_EINVAL);
    assert_string_equal(e.message, "[r] must be an integer but was real");
    assert_int_equal(sc_json_get_int(v, "big", &i, &e), SC_EINVAL);
    assert_int_equal(sc_json_get_double(v, "r", &d, &e), SC_OK);
    assert_true(d == 2.5);
    assert_int_equal(sc_json_get_double(v, "i", &d, &e), SC_OK);
    assert_true(d == -7.0);
    assert_int_equal(sc_json_get_bool(v, "b", &b, &e), SC_OK);
    assert_false(b);
    assert_int_equal(sc_json_get_bool(v, "s", &b, &e), SC_EINVAL);
    assert_string_equal(e.message, "[s] must be a boolean but was string");
    assert_int_equal(sc_json_get_obj(v, "o", &o, &e), SC_OK);
    assert_true(json_is_object(o));
    assert_int_equal(sc_json_get_obj(v, "a", &o, &e), SC_EINVAL);
    assert_string_equal(e.message, "[a] must be an object but was array");
    assert_int_equal(sc_json_get_arr(v, "a", &o, &e), SC_OK);
    assert_int_equal(sc_json_get_str(v, "i", &s, &e), SC_EINVAL);
    assert_string_equal(e.message, "[i] must be a string but was integer");
    assert_int_equal(sc_json_get_str(v, "missing", &s, &e), SC_ENOTFOUND);
    assert_string_equal(e.message, "[missing] is missing");
    assert_int_equal(sc_json_get_str(v, "n", &s, NULL), SC_ENOTFOUND); /* null = missing */
    assert_int_equal(sc_json_get_str(o, "x", &s, &e), SC_ENOTFOUND);   /* o is an array here */
    assert_string_equal(sc_json_type_name(NULL), "missing");
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_getters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
