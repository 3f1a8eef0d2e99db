/* Tests for src/mapping/completion.c and the completion mapping: the analyzed key (separators,
 * holes, stacked tokens), the packed term of a document (through sc_mapping_parse_doc with the
 * built-in fallback analysis) and its decoding, malformed terms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapping/mapping.h"

static sc_mapping *mk(const char *json)
{
    json_error_t je;
    json_t *j = json_loads(json, 0, &je);
    assert_non_null(j);
    sc_mapping *m;
    sc_mapping_error err;
    assert_int_equal(sc_mapping_new(j, &m, &err), SC_OK);
    json_decref(j);
    return m;
}

static void test_key(void **state)
{
    (void)state;
    sc_mapping *m = mk("{\"properties\": {\"a\": {\"type\": \"completion\"}, \"b\": {\"type\": "
                       "\"completion\", \"preserve_separators\": false, "
                       "\"preserve_position_increments\": false}}}");
    const sc_mapping_field *a = sc_mapping_find(m, sc_slice_cstr("a"));
    const sc_mapping_field *b = sc_mapping_find(m, sc_slice_cstr("b"));
    assert_int_equal(a->type, SC_MAPPING_COMPLETION);
    assert_int_equal(a->max_input_length, 50);
    sc_index_token t[] = {
        {sc_slice_cstr("nick"), 0}, {sc_slice_cstr("nic"), 0}, {sc_slice_cstr("cave"), 2}};
    sc_arena ar;
    sc_arena_init(&ar, 0);
    sc_slice k;
    assert_int_equal(sc_mapping_completion_key(a, t, 3, &ar, &k), SC_OK);
    /* the stacked "nic" is dropped; the hole at position 1 adds a separator */
    assert_int_equal(k.len, 10);
    assert_memory_equal(k.ptr,
                        "nick\x1f\x1f"
                        "cave",
                        10);
    assert_int_equal(sc_mapping_completion_key(b, t, 3, &ar, &k), SC_OK);
    assert_int_equal(k.len, 8);
    assert_memory_equal(k.ptr, "nickcave", 8);
    sc_arena_fini(&ar);
    sc_mapping_unref(m);
}

static void test_doc_and_decode(void **state)
{
    (void)state;
    sc_mapping *m = mk("{\"properties\": {\"s\": {\"type\": \"completion\", "
                       "\"max_input_length\": 7}}}");
    sc_arena ar;
    sc_arena_init(&ar, 0);
    const char *src = "{\"s\": {\"input\": [\"Nick Cave Band\"], \"weight\": 258}}";
    sc_index_doc doc;
    sc_mapping *upd = NULL;
    sc_mapping_error err;
    assert_int_equal(sc_mapping_parse_doc(m, NULL, sc_slice_cstr("1"), sc_slice_cstr(src), &ar,
                                          &doc, &upd, &err),
                     SC_OK);
    assert_null(upd);
    const sc_index_field *f = NULL;
    for (size_t i = 0; i < doc.n_fields; i++)
        if (sc_slice_eq(doc.fields[i].name, sc_slice_cstr("s")))
            f = &doc.fields[i];
    assert_non_null(f);
    assert_int_equal(f->n_tokens, 1);
    sc_slice key, text;
    uint32_t w;
    assert_true(sc_mapping_completion_decode(f->tokens[0].term, &key, &w, &text));
    assert_int_equal(w, 258);
    assert_int_equal(text.len, 7); /* cut to max_input_length */
    assert_memory_equal(text.ptr, "Nick Ca", 7);
    assert_int_equal(key.len, 7);
    assert_memory_equal(key.ptr,
                        "nick\x1f"
                        "ca",
                        7);
    assert_false(sc_mapping_completion_decode(sc_slice_cstr("no zero byte"), &key, &w, &text));
    assert_false(sc_mapping_completion_decode(sc_slice_make("ab\0\1", 4), &key, &w, &text));
    sc_arena_fini(&ar);
    sc_mapping_unref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_key),
                                       cmocka_unit_test(test_doc_and_decode)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
