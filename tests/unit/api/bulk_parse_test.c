/* Tests for the _bulk NDJSON parser (src/api/bulk_parse.c): line splitting, the four actions,
 * ids and routing kept whole as byte strings (NUL included), index names refused when they hold
 * NUL, op_type, extra keys beside the action, and the errors that fail a whole request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/bulk_parse.h"

static sc_status parse(sc_arena *a, const char *line, sc_bulk_action *out, char *err)
{
    return sc_bulk_parse_action(sc_slice_cstr(line), 7, a, out, err, 256);
}

static void test_lines(void **state)
{
    (void)state;
    const char *body = "a\r\n\n  \nb  \nc";
    sc_slice rest = sc_slice_cstr(body);
    sc_slice l = sc_bulk_next_line(&rest);
    assert_true(l.len == 1 && l.ptr[0] == 'a');
    l = sc_bulk_next_line(&rest);
    assert_true(l.len == 0 && sc_bulk_blank(l));
    l = sc_bulk_next_line(&rest);
    assert_true(sc_bulk_blank(l));
    l = sc_bulk_next_line(&rest);
    assert_true(l.len == 1 && l.ptr[0] == 'b');
    l = sc_bulk_next_line(&rest);
    assert_true(l.len == 1 && l.ptr[0] == 'c' && rest.len == 0);
}

static void test_actions_and_byte_string_ids(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    char err[256];
    sc_bulk_action x;
    assert_int_equal(parse(&a,
                           "{\"delete\":{\"_index\":\"i\",\"_id\":\"a\\u0000b\","
                           "\"routing\":\"r\\u0000\"}}",
                           &x, err),
                     SC_OK);
    assert_int_equal(x.op, SC_BULK_DELETE);
    assert_string_equal(x.op_name, "delete");
    assert_string_equal(x.index, "i");
    assert_int_equal(x.id.len, 3);
    assert_memory_equal(x.id.ptr, "a\0b", 3);
    assert_int_equal(x.routing.len, 2);
    assert_null(x.item_error_type);
    assert_int_equal(x.if_seq_no, -2);
    assert_int_equal(
        parse(&a, "{\"index\":{\"_id\":42,\"if_seq_no\":3,\"if_primary_term\":1}}", &x, err),
        SC_OK);
    assert_null(x.index);
    assert_int_equal(x.id.len, 2);
    assert_memory_equal(x.id.ptr, "42", 2);
    assert_int_equal(x.if_seq_no, 3);
    assert_int_equal(x.if_primary_term, 1);
    assert_int_equal(parse(&a, "{\"update\":{}}", &x, err), SC_OK);
    assert_int_equal(x.op, SC_BULK_UPDATE);
    assert_null(x.id.ptr);
    sc_arena_fini(&a);
}

static void test_item_errors(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    char err[256];
    sc_bulk_action x;
    assert_int_equal(
        parse(&a, "{\"delete\":{\"_index\":\"victim\\u0000x\",\"_id\":\"1\"}}", &x, err), SC_OK);
    assert_string_equal(x.item_error_type, "invalid_index_name_exception");
    assert_null(x.index);
    assert_int_equal(parse(&a, "{\"index\":{\"pipeline\":\"p\\u0000\"}}", &x, err), SC_OK);
    assert_string_equal(x.item_error_type, "illegal_argument_exception");
    assert_int_equal(parse(&a, "{\"index\":{\"op_type\":\"create\"}}", &x, err), SC_OK);
    assert_int_equal(x.op, SC_BULK_CREATE);
    assert_string_equal(x.op_name, "create");
    assert_null(x.item_error_type);
    assert_int_equal(parse(&a, "{\"index\":{\"op_type\":\"delete\"}}", &x, err), SC_OK);
    assert_non_null(x.item_error_type);
    assert_int_equal(parse(&a, "{\"index\":{\"op_type\":null,\"pipeline\":null}}", &x, err), SC_OK);
    assert_null(x.item_error_type);
    assert_int_equal(x.op, SC_BULK_INDEX);
    sc_arena_fini(&a);
}

static void test_extra_keys_and_request_errors(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    char err[256];
    sc_bulk_action x;
    assert_int_equal(parse(&a, "{\"index\":{\"_index\":\"logs\"},\"attempts\":0}", &x, err), SC_OK);
    assert_string_equal(x.extra_key, "attempts");
    assert_string_equal(x.index, "logs");
    assert_int_equal(parse(&a, "{\"index\":{}}", &x, err), SC_OK);
    assert_null(x.extra_key);
    assert_int_equal(parse(&a, "{\"upsert\":{}}", &x, err), SC_EPARSE);
    assert_non_null(strstr(err, "[7]"));
    assert_int_equal(parse(&a, "{\"delete\\u0000x\":{}}", &x, err), SC_EPARSE);
    assert_int_equal(parse(&a, "{}", &x, err), SC_EPARSE);
    assert_int_equal(parse(&a, "{\"index\":1}", &x, err), SC_EPARSE);
    assert_int_equal(parse(&a, "{\"index\":", &x, err), SC_EPARSE);
    assert_non_null(strstr(err, "[7:"));
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_actions_and_byte_string_ids),
        cmocka_unit_test(test_item_errors),
        cmocka_unit_test(test_extra_keys_and_request_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
