/* Tests for ingest pipelines (src/api/ingest.c, ingest_proc.c, ingest_grok.c): compile errors,
 * processors over documents, if conditions, on_failure, the regex translation and its cost
 * bound, grok captures and dissect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/ingest_internal.h"

/* Runs the pipeline text over the document text; returns the status and fills *out (owned). */
static sc_status run(const char *pipeline, const char *doc, json_t **out, sc_ingest_error *err)
{
    json_error_t jerr;
    json_t *def = json_loads(pipeline, 0, &jerr);
    assert_non_null(def);
    sc_pipeline *p = NULL;
    sc_status st = sc_pipeline_compile(def, &p, err);
    json_decref(def);
    if (st != SC_OK)
        return st;
    sc_ingest_doc d = {.source = json_loads(doc, 0, &jerr), .meta = json_object()};
    st = sc_pipeline_run(p, &d, err);
    sc_pipeline_free(p);
    json_decref(d.meta);
    *out = d.dropped ? NULL : d.source;
    if (d.dropped)
        json_decref(d.source);
    return st;
}

static void expect(const char *pipeline, const char *doc, const char *want)
{
    json_t *out = NULL;
    sc_ingest_error err;
    assert_int_equal(run(pipeline, doc, &out, &err), SC_OK);
    json_error_t jerr;
    json_t *w = json_loads(want, 0, &jerr);
    if (!json_equal(out, w)) {
        char *got = json_dumps(out, JSON_SORT_KEYS);
        print_error("got %s want %s\n", got, want);
        free(got);
        fail();
    }
    json_decref(w);
    json_decref(out);
}

static void test_compile_errors(void **state)
{
    (void)state;
    const char *bad[] = {
        "{}",
        "{\"processors\":{}}",
        "{\"processors\":[{\"nope\":{}}]}",
        "{\"processors\":[{\"set\":{\"value\":1}}]}",
        "{\"processors\":[{\"set\":{\"field\":\"a\"}}]}",
        "{\"processors\":[{\"set\":{\"field\":\"a\",\"value\":1,\"if\":\"ctx.a.size() > 1\"}}]}",
        "{\"processors\":[{\"grok\":{\"field\":\"a\",\"patterns\":[]}}]}",
        "{\"processors\":[{\"grok\":{\"field\":\"a\",\"patterns\":[\"%{NOPE}\"]}}]}",
        "{\"processors\":[{\"grok\":{\"field\":\"a\",\"patterns\":[\"(?=x)\"]}}]}",
        "{\"processors\":[{\"gsub\":{\"field\":\"a\",\"pattern\":\"((a{100}){100}){100}\","
        "\"replacement\":\"\"}}]}",
        "{\"processors\":[{\"dissect\":{\"field\":\"a\",\"pattern\":\"%{a}%{b}\"}}]}",
        "{\"processors\":[{\"convert\":{\"field\":\"a\",\"type\":\"date\"}}]}",
        "{\"processors\":[{\"date\":{\"field\":\"a\"}}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *out = NULL;
        sc_ingest_error err;
        /* compile errors: nothing runs, so no document comes back */
        assert_int_equal(run(bad[i], "{}", &out, &err), SC_EINVAL);
        assert_null(out);
        assert_non_null(err.type);
        assert_true(err.reason[0] != '\0');
    }
}

static void test_processors(void **state)
{
    (void)state;
    expect("{\"processors\":[{\"set\":{\"field\":\"a.b\",\"value\":\"{{x}}!\"}}]}", "{\"x\":1}",
           "{\"x\":1,\"a\":{\"b\":\"1!\"}}");
    expect("{\"processors\":[{\"rename\":{\"field\":\"x\",\"target_field\":\"y\"}},"
           "{\"remove\":{\"field\":\"z\",\"ignore_missing\":true}}]}",
           "{\"x\":1}", "{\"y\":1}");
    expect("{\"processors\":[{\"split\":{\"field\":\"s\",\"separator\":\"\\\\s*,\\\\s*\"}},"
           "{\"join\":{\"field\":\"s\",\"separator\":\"/\"}}]}",
           "{\"s\":\"a , b,c\"}", "{\"s\":\"a/b/c\"}");
    expect("{\"processors\":[{\"convert\":{\"field\":\"n\",\"type\":\"long\"}},"
           "{\"uppercase\":{\"field\":\"t\"}},{\"trim\":{\"field\":\"u\"}}]}",
           "{\"n\":\"-12\",\"t\":\"ab\",\"u\":\" x \"}", "{\"n\":-12,\"t\":\"AB\",\"u\":\"x\"}");
    expect("{\"processors\":[{\"gsub\":{\"field\":\"s\",\"pattern\":\"[aeiou]\","
           "\"replacement\":\"\"}}]}",
           "{\"s\":\"banana\"}", "{\"s\":\"bnn\"}");
    expect("{\"processors\":[{\"append\":{\"field\":\"t\",\"value\":[\"b\",\"a\"],"
           "\"allow_duplicates\":false}}]}",
           "{\"t\":\"a\"}", "{\"t\":[\"a\",\"b\"]}");
}

static void test_conditions_and_failures(void **state)
{
    (void)state;
    const char *p = "{\"processors\":[{\"set\":{\"field\":\"hit\",\"value\":true,"
                    "\"if\":\"ctx.k == 'x' || ctx?.n?.m == 3\"}}]}";
    expect(p, "{\"k\":\"x\"}", "{\"k\":\"x\",\"hit\":true}");
    expect(p, "{\"n\":{\"m\":3}}", "{\"n\":{\"m\":3},\"hit\":true}");
    expect(p, "{\"k\":\"y\"}", "{\"k\":\"y\"}");
    json_t *out = NULL;
    sc_ingest_error err;
    assert_int_equal(run("{\"processors\":[{\"lowercase\":{\"field\":\"q\"}}]}", "{}", &out, &err),
                     SC_EINVAL);
    assert_string_equal(err.type, "illegal_argument_exception");
    assert_string_equal(err.reason, "field [q] not present as part of path [q]");
    assert_string_equal(err.processor, "lowercase");
    json_decref(out);
    expect("{\"processors\":[{\"convert\":{\"field\":\"a\",\"type\":\"integer\","
           "\"on_failure\":[{\"set\":{\"field\":\"e\",\"value\":\"{{_ingest.on_failure_message}}"
           "\"}}]}}]}",
           "{\"a\":\"x\"}", "{\"a\":\"x\",\"e\":\"unable to convert [x] to integer\"}");
    expect("{\"processors\":[{\"fail\":{\"message\":\"no\"}}],"
           "\"on_failure\":[{\"set\":{\"field\":\"f\",\"value\":1}}]}",
           "{}", "{\"f\":1}");
    assert_int_equal(run("{\"processors\":[{\"drop\":{}}]}", "{}", &out, &err), SC_OK);
    assert_null(out);
}

static void test_grok_and_dissect(void **state)
{
    (void)state;
    expect("{\"processors\":[{\"grok\":{\"field\":\"m\",\"patterns\":"
           "[\"%{IPV4:ip} %{INT:n:int} %{WORD:w}\"]}}]}",
           "{\"m\":\"1.2.3.4 -7 abc\"}",
           "{\"m\":\"1.2.3.4 -7 abc\",\"ip\":\"1.2.3.4\",\"n\":-7,\"w\":\"abc\"}");
    expect("{\"processors\":[{\"grok\":{\"field\":\"m\",\"patterns\":[\"%{HTTPDATE:t}\"]}}]}",
           "{\"m\":\"[10/Oct/2000:13:55:36 -0700]\"}",
           "{\"m\":\"[10/Oct/2000:13:55:36 -0700]\",\"t\":\"10/Oct/2000:13:55:36 -0700\"}");
    expect("{\"processors\":[{\"dissect\":{\"field\":\"m\",\"pattern\":\"<%{a}> %{+b} %{+b}\","
           "\"append_separator\":\"-\"}}]}",
           "{\"m\":\"<1> x y\"}", "{\"m\":\"<1> x y\",\"a\":\"1\",\"b\":\"x-y\"}");
}

static void test_regex_translation_and_cost(void **state)
{
    (void)state;
    char out[256];
    size_t used = 0;
    int groups = 0;
    assert_true(
        sc__ingest_regex_translate("(?:\\d+)(?<x>[\\s\\w]*?)a+?", out, sizeof out, &used, &groups));
    assert_string_equal(out, "([0-9]+)([[:space:][:alnum:]_]*)a+");
    assert_int_equal(groups, 2);
    assert_true(sc__ingest_regex_cheap("[0-9]{1,3}(\\.[0-9]{1,3}){3}"));
    assert_false(sc__ingest_regex_cheap("((a{100}){100}){100}"));
    assert_false(sc__ingest_regex_cheap("a++++++++++++++++++++++++++++++++"));
    used = 0;
    assert_false(sc__ingest_regex_translate("(?=x)", out, sizeof out, &used, &groups));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_processors),
        cmocka_unit_test(test_conditions_and_failures),
        cmocka_unit_test(test_grok_and_dissect),
        cmocka_unit_test(test_regex_translation_and_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
