/* Tests for base/utf8: the encoder at every length boundary, the strict validator on valid,
 * overlong, surrogate, out-of-range, stray and truncated sequences, and an exhaustive round
 * trip of every scalar value through both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

static int valid_len(const char *s, size_t n)
{
    return sc_utf8_valid_len((const uint8_t *)s, (const uint8_t *)s + n);
}

static void expect_put(uint32_t cp, const char *bytes, size_t n)
{
    uint8_t out[4];
    assert_int_equal(sc_utf8_put(out, cp), n);
    assert_memory_equal(out, bytes, n);
}

static void test_put_boundaries(void **state)
{
    (void)state;
    expect_put(0x00, "\x00", 1);
    expect_put(0x7F, "\x7F", 1);
    expect_put(0x80, "\xC2\x80", 2);
    expect_put(0x7FF, "\xDF\xBF", 2);
    expect_put(0x800, "\xE0\xA0\x80", 3);
    expect_put(0xE9, "\xC3\xA9", 2);
    expect_put(0x20AC, "\xE2\x82\xAC", 3);
    expect_put(0xFFFD, "\xEF\xBF\xBD", 3);
    expect_put(0xFFFF, "\xEF\xBF\xBF", 3);
    expect_put(0x10000, "\xF0\x90\x80\x80", 4);
    expect_put(0x1F600, "\xF0\x9F\x98\x80", 4);
    expect_put(0x10FFFF, "\xF4\x8F\xBF\xBF", 4);
}

static void test_valid(void **state)
{
    (void)state;
    assert_int_equal(valid_len("a", 1), 1);
    assert_int_equal(valid_len("\xC3\xA9x", 3), 2);
    assert_int_equal(valid_len("\xE2\x82\xAC", 3), 3);
    assert_int_equal(valid_len("\xED\x9F\xBF", 3), 3); /* U+D7FF, just below the surrogates */
    assert_int_equal(valid_len("\xEE\x80\x80", 3), 3); /* U+E000, just above */
    assert_int_equal(valid_len("\xF0\x9F\x98\x80", 4), 4);
    assert_int_equal(valid_len("\xF4\x8F\xBF\xBF", 4), 4);
}

static void test_overlong(void **state)
{
    (void)state;
    assert_int_equal(valid_len("\xC0\xAF", 2), 0);
    assert_int_equal(valid_len("\xC1\xBF", 2), 0);
    assert_int_equal(valid_len("\xE0\x80\xAF", 3), 0);
    assert_int_equal(valid_len("\xE0\x9F\xBF", 3), 0);
    assert_int_equal(valid_len("\xF0\x80\x80\xAF", 4), 0);
    assert_int_equal(valid_len("\xF0\x8F\xBF\xBF", 4), 0);
}

static void test_surrogate_and_range(void **state)
{
    (void)state;
    assert_int_equal(valid_len("\xED\xA0\x80", 3), 0);     /* U+D800 */
    assert_int_equal(valid_len("\xED\xBF\xBF", 3), 0);     /* U+DFFF */
    assert_int_equal(valid_len("\xF4\x90\x80\x80", 4), 0); /* U+110000 */
    assert_int_equal(valid_len("\xF5\x80\x80\x80", 4), 0);
    assert_int_equal(valid_len("\xFF", 1), 0);
}

static void test_stray_and_truncated(void **state)
{
    (void)state;
    assert_int_equal(valid_len("\x80", 1), 0);
    assert_int_equal(valid_len("\xBF", 1), 0);
    assert_int_equal(valid_len("\xC3", 1), 0);
    assert_int_equal(valid_len("\xE2\x82", 2), 0);
    assert_int_equal(valid_len("\xF0\x9F\x98", 3), 0);
    /* The bytes are there but end says the sequence is cut. */
    assert_int_equal(valid_len("\xF0\x9F\x98\x80", 3), 0);
    /* A non-continuation byte inside the sequence. */
    assert_int_equal(valid_len("\xE2\x41\xAC", 3), 0);
    assert_int_equal(valid_len("\xC3\xC3", 2), 0);
}

static void test_round_trip_all(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        uint8_t b[4];
        size_t n = sc_utf8_put(b, cp);
        int v = sc_utf8_valid_len(b, b + n);
        if (cp >= 0xD800 && cp <= 0xDFFF)
            assert_int_equal(v, 0);
        else
            assert_int_equal(v, (int)n);
        assert_int_equal(n, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_boundaries),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_overlong),
        cmocka_unit_test(test_surrogate_and_range),
        cmocka_unit_test(test_stray_and_truncated),
        cmocka_unit_test(test_round_trip_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
