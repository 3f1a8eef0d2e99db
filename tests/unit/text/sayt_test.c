/* Tests for src/text/sayt.c: the search_as_you_type analyzer variants of the registry
 * (shingles of n tokens, edge n-grams of shingles), their names, positions and offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "text/analyzer.h"

typedef struct got {
    char s[64][32];
    uint32_t pos[64], start[64], end[64];
    size_t n;
} got;

static sc_status sink(void *ctx, const sc_token *t)
{
    got *g = ctx;
    if (g->n == 64 || t->len >= 32)
        return SC_ELIMIT;
    memcpy(g->s[g->n], t->term, t->len);
    g->s[g->n][t->len] = 0;
    g->pos[g->n] = t->position;
    g->start[g->n] = t->start_offset;
    g->end[g->n++] = t->end_offset;
    return SC_OK;
}

static void run(const sc_analyzer_registry *r, const char *name, const char *text, got *g)
{
    const sc_analyzer *a = sc_analyzer_registry_get(r, sc_slice_cstr(name));
    assert_non_null(a);
    assert_string_equal(sc_analyzer_name(a), name);
    memset(g, 0, sizeof *g);
    assert_int_equal(sc_analyzer_analyze(a, sc_slice_cstr(text), sink, g), SC_OK);
}

static void test_shingles(void **state)
{
    (void)state;
    sc_analyzer_registry *r;
    assert_int_equal(sc_analyzer_registry_new(NULL, &r, NULL), SC_OK);
    got g;
    run(r, "standard#3gram", "Quick brown fox jumps", &g);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.s[0], "quick brown fox");
    assert_string_equal(g.s[1], "brown fox jumps");
    assert_int_equal(g.pos[1], 1);
    assert_int_equal(g.start[1], 6);
    assert_int_equal(g.end[1], 21);
    run(r, "standard#3gram", "two words", &g);
    assert_int_equal(g.n, 0);                     /* fewer tokens than the shingle size: nothing */
    run(r, "stop#2gram", "the fox is brown", &g); /* holes close up */
    assert_int_equal(g.n, 1);
    assert_string_equal(g.s[0], "fox brown");
    assert_int_equal(g.pos[0], 1);
    assert_null(sc_analyzer_registry_get(r, sc_slice_cstr("standard#5gram")));
    assert_null(sc_analyzer_registry_get(r, sc_slice_cstr("nope#2gram")));
    sc_analyzer_registry_free(r);
}

static void test_prefixes(void **state)
{
    (void)state;
    json_error_t je;
    json_t *an = json_loads("{\"analyzer\": {\"my\": {\"type\": \"custom\", \"tokenizer\": "
                            "\"whitespace\"}}}",
                            0, &je);
    assert_non_null(an);
    sc_analyzer_registry *r;
    assert_int_equal(sc_analyzer_registry_new(an, &r, NULL), SC_OK);
    json_decref(an);
    got g;
    run(r, "my#prefix2", "Ab \xc3\xa9", &g);
    /* "Ab é": edge n-grams of "Ab é" (whole code points), then of "é" */
    const char *want[] = {"A", "Ab", "Ab ", "Ab \xc3\xa9", "\xc3\xa9"};
    assert_int_equal(g.n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(g.s[i], want[i]);
    assert_int_equal(g.pos[4], 1);
    run(r, "my#prefix2", "abcdefghijklmnopqrstuvwxyz", &g);
    assert_int_equal(g.n, 20); /* at most 20 code points */
    assert_string_equal(g.s[19], "abcdefghijklmnopqrst");
    sc_analyzer_registry_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shingles),
                                       cmocka_unit_test(test_prefixes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
