/* Tests for the ASCII sentence scanner (src/search/highlight_sentence.c): equal to ICU's root
 * sentence iterator on hand-picked cases, on random strings over the characters the rules
 * care about (seed printed) and on the real sentences of tests/fixtures/text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include "search/highlight_internal.h"

/* ICU's boundaries of text (ASCII: byte = UTF-16 offsets) into out; returns the count. */
static size_t icu_breaks(const char *text, size_t len, int32_t *out, size_t cap)
{
    UErrorCode err = U_ZERO_ERROR;
    UText *ut = utext_openUTF8(NULL, text, (int64_t)len, &err);
    UBreakIterator *bi = ubrk_open(UBRK_SENTENCE, "", NULL, 0, &err);
    ubrk_setUText(bi, ut, &err);
    assert_true(U_SUCCESS(err));
    size_t n = 0;
    for (int32_t b = ubrk_first(bi); b != UBRK_DONE && n < cap; b = ubrk_next(bi))
        out[n++] = b;
    ubrk_close(bi);
    utext_close(ut);
    return n;
}

static bool same(const char *text, size_t len)
{
    int32_t want[4096];
    size_t nw = icu_breaks(text, len, want, 4096);
    sc_arena a;
    sc_arena_init(&a, 0);
    int32_t *got;
    size_t ng;
    assert_true(sc__hl_ascii_sentences(sc_slice_make(text, len), &a, &got, &ng));
    bool ok = nw == ng && memcmp(want, got, ng * sizeof *got) == 0;
    if (!ok) {
        printf("text [%.*s]\n  icu:", (int)len, text);
        for (size_t i = 0; i < nw; i++)
            printf(" %d", want[i]);
        printf("\n  got:");
        for (size_t i = 0; i < ng; i++)
            printf(" %d", got[i]);
        printf("\n");
    }
    sc_arena_fini(&a);
    return ok;
}

static void test_cases(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "",
        "a",
        "Hello world. How are you? Fine!",
        "Mr. Smith went. He said hi.",
        "U.S.A. is big. 3.14 is pi.",
        "He said \"stop.\" Then left.",
        "What?! Really... yes.",
        "end. (Next) one.",
        "a.\nb\r\nc\rd",
        "one;  two. three",
        "etc. and so on. Then.",
        "x.) lower",
        "Q? \"A.\"  (B) c",
        "Inc. <https://fsf.org/> Everyone",
        "2. You may",
        "e.g. this",
        "No.5 here.",
        "a . b",
        "end.",
        "end.  ",
        "  lead. Tail",
        "A.B.C. Done.",
        "Wait... What? 'Yes.' no",
        "x!\n\ny",
        "x.\t\tY",
        "1.2.3. Next",
        "(a.) B",
        "[Note.] Next",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_true(same(cases[i], strlen(cases[i])));
    sc_arena a;
    sc_arena_init(&a, 0);
    int32_t *l;
    size_t n;
    assert_false(sc__hl_ascii_sentences(sc_slice_cstr("caf\xc3\xa9. Ok"), &a, &l, &n));
    sc_arena_fini(&a);
}

static void test_random(void **state)
{
    (void)state;
    const char alphabet[] = "aZ .!?\"')(,;:-\n\r\t0#]{\v\f*";
    unsigned seed = (unsigned)strtoul(getenv("SCRY_SEED") ? getenv("SCRY_SEED") : "7", NULL, 10);
    printf("seed %u\n", seed);
    srand(seed);
    char buf[64];
    size_t bad = 0;
    for (int it = 0; it < 20000; it++) {
        size_t len = (size_t)(rand() % 40);
        for (size_t i = 0; i < len; i++)
            buf[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
        bad += !same(buf, len);
    }
    assert_int_equal(bad, 0);
}

static void test_real_sentences(void **state)
{
    (void)state;
    const char *dir = getenv("SCRY_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/text/sentences.txt",
             dir ? dir : SCRY_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *all = malloc(1 << 20);
    size_t len = fread(all, 1, (1 << 20) - 1, f);
    fclose(f);
    /* whole paragraphs of ASCII lines, newlines included */
    size_t start = 0, checked = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && (unsigned char)all[i] < 0x80 && i - start < 3000)
            continue;
        if (i > start + 1 && same(all + start, i - start))
            checked++;
        else if (i > start + 1)
            fail();
        start = i + 1;
    }
    assert_true(checked > 10);
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_real_sentences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
