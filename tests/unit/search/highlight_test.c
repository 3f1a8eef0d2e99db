/* Tests for the highlighter (src/search/highlight.c, highlight_passage.c): matching (terms,
 * phrases, multi-term queries, field restriction), passages, tags, encoder, sizing. The
 * passages and their scores are checked against Lucene by tests/oracle/highlight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "search/highlight.h"

#define S(x) sc_slice_cstr(x)

typedef struct fx {
    sc_arena a;
    sc_analyzer *an;
    sc_hl_options o;
} fx;

static int setup(void **state)
{
    static fx f;
    sc_arena_init(&f.a, 0);
    if (sc_analyzer_builtin("standard", &f.an) != SC_OK)
        return -1;
    sc_hl_options_init(&f.o);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sc_hl_options_init(&f->o);
    sc_analyzer_free(f->an);
    sc_arena_fini(&f->a);
    return 0;
}

/* Highlights `text` (values split on '|') for q on field "body"; returns the snippets joined
 * with " ## " in a static buffer. */
static const char *hl(fx *f, const sc_query *q, const char *text)
{
    static char out[4096];
    sc_slice vals[8];
    size_t nv = 0;
    const char *p = text;
    for (;;) {
        const char *bar = strchr(p, '|');
        vals[nv++] = sc_slice_make(p, bar ? (size_t)(bar - p) : strlen(p));
        if (!bar)
            break;
        p = bar + 1;
    }
    sc_hl_query *hq;
    assert_int_equal(sc_hl_query_build(q, S("body"), true, &f->a, &hq), SC_OK);
    sc_slice *fr;
    size_t n;
    assert_int_equal(sc_highlight_field(hq, f->an, &f->o, vals, nv, NULL, &f->a, &fr, &n), SC_OK);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%.*s", i ? " ## " : "",
                                (int)fr[i].len, (const char *)fr[i].ptr);
    return out;
}

static void test_terms_and_sentences(void **state)
{
    fx *f = *state;
    sc_hl_options_init(&f->o);
    sc_query *q = sc_query_term(&f->a, S("body"), S("fox"));
    /* sentences are merged while they fit in fragment_size (Elasticsearch's bounded scanner) */
    assert_string_equal(hl(f, q, "The quick fox. A dog sleeps. Another fox runs."),
                        "The quick <em>fox</em>. A dog sleeps. Another <em>fox</em> runs.");
    f->o.fragment_size = 16;
    assert_string_equal(hl(f, q, "The quick fox. A dog sleeps. Another fox runs."),
                        "The quick <em>fox</em>. ## Another <em>fox</em> runs.");
    f->o.number_of_fragments = 1;
    assert_string_equal(hl(f, q, "The quick fox. A dog sleeps. Another fox runs."),
                        "The quick <em>fox</em>."); /* shorter and earlier scores higher */
    f->o.number_of_fragments = 0;
    assert_string_equal(hl(f, q, "The quick fox. A dog sleeps.|no match|fox"),
                        "The quick <em>fox</em>. A dog sleeps. ## <em>fox</em>");
    sc_hl_options_init(&f->o);
    /* other fields' terms do not mark with require_field_match */
    sc_query *other = sc_query_term(&f->a, S("title"), S("fox"));
    assert_string_equal(hl(f, other, "The quick fox."), "");
}

static void test_phrase_and_multiterm(void **state)
{
    fx *f = *state;
    sc_hl_options_init(&f->o);
    sc_slice t[] = {S("quick"), S("fox")};
    uint32_t pos[] = {0, 1};
    sc_query *ph = sc_query_phrase(&f->a, S("body"), t, pos, 2, 0);
    /* the passage starts at the match's sentence; later sentences merge up to fragment_size */
    assert_string_equal(hl(f, ph, "fox quick. The quick fox ran. It ran."),
                        "The <em>quick</em> <em>fox</em> ran. It ran.");
    f->o.fragment_size = 10;
    assert_string_equal(hl(f, ph, "fox quick. The quick fox ran."),
                        "The <em>quick</em> <em>fox</em>");
    sc_hl_options_init(&f->o);
    sc_query *pre = sc_query_prefix(&f->a, S("body"), S("qui"));
    assert_string_equal(hl(f, pre, "Quiet quick fox."), "<em>Quiet</em> <em>quick</em> fox.");
    sc_query *wc = sc_query_wildcard(&f->a, S("body"), S("f?x"));
    assert_string_equal(hl(f, wc, "fix fox foxes"), "<em>fix</em> <em>fox</em> foxes");
    sc_query *fz = sc_query_fuzzy(&f->a, S("body"), S("dog"), 1, 0, 50, true);
    assert_string_equal(hl(f, fz, "dig dogs dog cat"),
                        "<em>dig</em> <em>dogs</em> <em>dog</em> cat");
    sc_query *b = sc_query_bool(&f->a);
    assert_int_equal(sc_query_bool_add(&f->a, b, SC_OCCUR_MUST, pre), SC_OK);
    assert_int_equal(
        sc_query_bool_add(&f->a, b, SC_OCCUR_MUST_NOT, sc_query_term(&f->a, S("body"), S("fox"))),
        SC_OK);
    assert_string_equal(hl(f, b, "quick fox"), "<em>quick</em> fox");
}

static void test_tags_encoder_sizes(void **state)
{
    fx *f = *state;
    sc_hl_options_init(&f->o);
    sc_query *q = sc_query_term(&f->a, S("body"), S("b"));
    f->o.encoder_html = true;
    f->o.pre_tag = S("<x>");
    f->o.post_tag = S("</x>");
    assert_string_equal(hl(f, q, "a <b> & 'c'/b"),
                        "a &lt;<x>b</x>&gt; &amp; &#x27;c&#x27;&#x2F;<x>b</x>");
    sc_hl_options_init(&f->o);
    /* a long sentence is cut around the match at word boundaries (fragment_size) */
    f->o.fragment_size = 20;
    const char *longs = "one two three four five six seven eight nine ten b eleven twelve "
                        "thirteen fourteen fifteen sixteen.";
    const char *got = hl(f, q, longs);
    assert_non_null(strstr(got, "<em>b</em>"));
    assert_true(strlen(got) < 60);
    sc_hl_options_init(&f->o);
    f->o.no_match_size = 10;
    assert_string_equal(hl(f, q, "nothing matches here at all"), "nothing matches");
    f->o.no_match_size = 0;
    assert_string_equal(hl(f, q, "nothing matches here at all"), "");
    f->o.max_analyzed_offset = 4;
    assert_string_equal(hl(f, q, "b a b"), "<em>b</em> a b");
    sc_hl_options_init(&f->o);
    f->o.boundary = SC_HL_BOUNDARY_WORD;
    assert_string_equal(hl(f, q, "a b c"), "<em>b</em>");
    sc_hl_options_init(&f->o);
}

static void test_order_score(void **state)
{
    fx *f = *state;
    sc_hl_options_init(&f->o);
    sc_query *b = sc_query_bool(&f->a);
    assert_int_equal(
        sc_query_bool_add(&f->a, b, SC_OCCUR_SHOULD, sc_query_term(&f->a, S("body"), S("x"))),
        SC_OK);
    assert_int_equal(
        sc_query_bool_add(&f->a, b, SC_OCCUR_SHOULD, sc_query_term(&f->a, S("body"), S("y"))),
        SC_OK);
    f->o.order_score = true;
    f->o.fragment_size = 12;
    assert_string_equal(hl(f, b, "One x here. Both x and y here."),
                        "Both <em>x</em> and <em>y</em> ## One <em>x</em> here.");
    sc_hl_options_init(&f->o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terms_and_sentences),
        cmocka_unit_test(test_phrase_and_multiterm),
        cmocka_unit_test(test_tags_encoder_sizes),
        cmocka_unit_test(test_order_score),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
