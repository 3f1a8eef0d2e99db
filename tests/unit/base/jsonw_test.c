/* Tests for base/jsonw: structure and commas, escaping of control characters/quotes/backslashes,
 * UTF-8 repair (invalid bytes -> U+FFFD, valid sequences kept), doubles and floats that parse
 * back bit-identically (random values, printed seed), non-finite -> null, sticky errors, depth
 * limit, pretty printing, and every output re-parsed by jansson. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/jsonw.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void seed_rng(const char *test)
{
    const char *env = getenv("SCRY_TEST_SEED");
    rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    printf("%s: seed %llu (rerun with SCRY_TEST_SEED)\n", test, (unsigned long long)rng_state);
}

/* The buffer as a C string (appends a NUL outside len). */
static const char *text(sc_buf *b)
{
    assert_int_equal(sc_vec_reserve(b, 1), SC_OK);
    b->ptr[b->len] = 0;
    return (const char *)b->ptr;
}

static void assert_valid_json(sc_buf *b)
{
    json_error_t e;
    json_t *v = json_loadb((const char *)b->ptr, b->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!v)
        fail_msg("invalid JSON (%s): %s", e.text, text(b));
    json_decref(v);
}

static void test_structure(void **state)
{
    (void)state;
    sc_buf b = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "name", "scry");
    sc_jsonw_kv_int(&w, "n", -42);
    sc_jsonw_key(&w, "u");
    sc_jsonw_uint(&w, (uint64_t)INT64_MAX + 1); /* jansson itself stops at INT64_MAX */
    sc_jsonw_key(&w, "i");
    sc_jsonw_int(&w, INT64_MIN);
    sc_jsonw_kv_bool(&w, "ok", true);
    sc_jsonw_kv_double(&w, "d", 1.0);
    sc_jsonw_key(&w, "f");
    sc_jsonw_float(&w, 0.1f);
    sc_jsonw_key(&w, "arr");
    sc_jsonw_arr_begin(&w);
    sc_jsonw_null(&w);
    sc_jsonw_arr_begin(&w);
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_raw(&w, sc_slice_cstr("{\"raw\":[1,2]}"));
    sc_jsonw_bool(&w, false);
    sc_jsonw_arr_end(&w);
    sc_jsonw_keyn(&w, sc_slice_make("k\0ey", 4));
    sc_jsonw_strn(&w, sc_slice_make("v\0al", 4));
    sc_jsonw_obj_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_string_equal(
        text(&b),
        "{\"name\":\"scry\",\"n\":-42,\"u\":9223372036854775808,\"i\":-9223372036854775808,"
        "\"ok\":true,\"d\":1.0,\"f\":0.1,\"arr\":[null,[],{},"
        "{\"raw\":[1,2]},false],\"k\\u0000ey\":\"v\\u0000al\"}");
    sc_vec_free(&b);
}

static void test_pretty(void **state)
{
    (void)state;
    sc_buf b = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &b, true);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "a", 1);
    sc_jsonw_key(&w, "b");
    sc_jsonw_arr_begin(&w);
    sc_jsonw_int(&w, 2);
    sc_jsonw_int(&w, 3);
    sc_jsonw_arr_end(&w);
    sc_jsonw_key(&w, "c");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_string_equal(text(&b), "{\n  \"a\" : 1,\n  \"b\" : [\n    2,\n    3\n  ],\n"
                                  "  \"c\" : {}\n}");
    sc_vec_free(&b);
}

static void test_escaping(void **state)
{
    (void)state;
    sc_buf b = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_str(&w, "q\"b\\s/n\nr\rt\tb\bf\f\x01\x1f\x7f");
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_string_equal(text(&b), "\"q\\\"b\\\\s/n\\nr\\rt\\tb\\bf\\f\\u0001\\u001f\x7f\"");
    assert_valid_json(&b);
    /* Valid UTF-8 passes through: 2, 3 and 4 byte sequences. */
    sc_vec_clear(&b);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_str(&w, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_string_equal(text(&b), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* Invalid sequences become U+FFFD, one per bad byte: lone continuation, overlong, surrogate,
     * above U+10FFFF, truncated at the end, 0xff. */
    static const struct {
        const char *in;
        size_t len;
        size_t n_repl;
    } bad[] = {
        {"\x80", 1, 1},
        {"\xc0\xaf", 2, 2},
        {"\xe0\x80\xaf", 3, 3},
        {"\xed\xa0\x80", 3, 3},
        {"\xf4\x90\x80\x80", 4, 4},
        {"a\xe2\x82", 3, 2},
        {"\xff", 1, 1},
        {"\xc3", 1, 1},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sc_vec_clear(&b);
        assert_int_equal(sc_json_escape(&b, sc_slice_make(bad[i].in, bad[i].len)), SC_OK);
        size_t n = 0;
        for (size_t k = 0; k + 3 <= b.len; k++)
            if (memcmp(b.ptr + k, "\xef\xbf\xbd", 3) == 0)
                n++;
        assert_int_equal(n, bad[i].n_repl);
        /* The output is valid UTF-8: jansson accepts it as a string body. */
        sc_buf q = {0};
        assert_int_equal(sc_vec_push(&q, '"'), SC_OK);
        assert_int_equal(sc_vec_append(&q, b.ptr, b.len), SC_OK);
        assert_int_equal(sc_vec_push(&q, '"'), SC_OK);
        assert_valid_json(&q);
        sc_vec_free(&q);
    }
    sc_vec_free(&b);
}

static void test_random_bytes_valid(void **state)
{
    (void)state;
    seed_rng("jsonw random strings");
    sc_buf b = {0};
    uint8_t in[64];
    for (int round = 0; round < 2000; round++) {
        size_t len = rnd() % sizeof(in);
        for (size_t i = 0; i < len; i++)
            in[i] = (uint8_t)rnd();
        sc_vec_clear(&b);
        sc_jsonw w;
        sc_jsonw_init(&w, &b, false);
        sc_jsonw_arr_begin(&w);
        sc_jsonw_strn(&w, sc_slice_make(in, len));
        sc_jsonw_arr_end(&w);
        assert_int_equal(sc_jsonw_finish(&w), SC_OK);
        assert_valid_json(&b);
    }
    sc_vec_free(&b);
}

static void test_doubles_round_trip(void **state)
{
    (void)state;
    seed_rng("jsonw doubles");
    char buf[40];
    static const double fixed[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   0.1,
                                   1e21,
                                   1e-7,
                                   123456789012345678.0,
                                   5e-324,
                                   1.7976931348623157e308,
                                   2.2250738585072014e-308,
                                   0.30000000000000004,
                                   100.0,
                                   1e16};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 100000; i++) {
        double d;
        if (i < sizeof(fixed) / sizeof(fixed[0])) {
            d = fixed[i];
        } else {
            uint64_t bits = rnd();
            memcpy(&d, &bits, sizeof(d));
            if (!isfinite(d))
                continue;
        }
        size_t n = sc_json_format_double(buf, d);
        assert_int_equal(strlen(buf), n);
        double back = strtod(buf, NULL);
        assert_memory_equal(&back, &d, sizeof(d)); /* bit-identical, including -0.0 */
        assert_true(n <= 24);
    }
    static const float ffixed[] = {0.0f,   -0.0f,           1.0f,        0.1f,       3.4028235e38f,
                                   1e-45f, 1.17549435e-38f, 16777216.0f, 0.33333334f};
    for (size_t i = 0; i < sizeof(ffixed) / sizeof(ffixed[0]) + 100000; i++) {
        float f;
        if (i < sizeof(ffixed) / sizeof(ffixed[0])) {
            f = ffixed[i];
        } else {
            uint32_t bits = (uint32_t)rnd();
            memcpy(&f, &bits, sizeof(f));
            if (!isfinite(f))
                continue;
        }
        size_t n = sc_json_format_float(buf, f);
        assert_int_equal(strlen(buf), n);
        float back = strtof(buf, NULL);
        assert_memory_equal(&back, &f, sizeof(f));
        /* shortest: with one significant digit less (first to last non-zero digit of the
         * mantissa) f does not read back */
        int first = -1, last = -1, k = 0;
        for (const char *c = buf; *c && *c != 'E' && *c != 'e'; c++) {
            if (*c < '0' || *c > '9')
                continue;
            if (*c != '0') {
                if (first < 0)
                    first = k;
                last = k;
            }
            k++;
        }
        int sig = first < 0 ? 0 : last - first + 1;
        if (sig > 1) {
            char shorter[40];
            snprintf(shorter, sizeof shorter, "%.*g", sig - 1, (double)f);
            float s = strtof(shorter, NULL);
            assert_memory_not_equal(&s, &f, sizeof(f));
        }
    }
    /* Shortest forms and the Java-style ".0". */
    sc_json_format_double(buf, 0.1);
    assert_string_equal(buf, "0.1");
    sc_json_format_double(buf, 3.0);
    assert_string_equal(buf, "3.0");
    sc_json_format_double(buf, -0.0);
    assert_string_equal(buf, "-0.0");
    sc_json_format_float(buf, 0.1f);
    assert_string_equal(buf, "0.1");
    sc_json_format_float(buf, 2.5f);
    assert_string_equal(buf, "2.5");
    assert_int_equal(sc_json_format_double(buf, NAN), 4);
    assert_string_equal(buf, "null");
    sc_json_format_double(buf, -INFINITY);
    assert_string_equal(buf, "null");
    sc_json_format_float(buf, INFINITY);
    assert_string_equal(buf, "null");
}

/* The fast path of sc_json_format_float (plain notation, [1e-3, 1e7): every score) gives the
 * reference form (snprintf/strtof) on every 1009th float of its range and its edges, and on
 * decimals with few digits (where ties and carries are). */
static void test_float_fast_path_equals_reference(void **state)
{
    (void)state;
    char fast[40], ref[40];
    float lo = 1e-3f, hi = 1e7f;
    uint32_t blo, bhi;
    memcpy(&blo, &lo, sizeof blo);
    memcpy(&bhi, &hi, sizeof bhi);
    uint32_t edges[] = {blo - 2, blo - 1, blo, blo + 1, bhi - 1, bhi, bhi + 1};
    for (uint64_t i = 0; i < 7 + (uint64_t)(bhi - blo) / 1009; i++) {
        uint32_t b = i < 7 ? edges[i] : blo + (uint32_t)(i - 7) * 1009;
        float f;
        memcpy(&f, &b, sizeof f);
        for (int s = 0; s < 2; s++, f = -f) {
            sc_json_format_float(fast, f);
            sc__json_format_float_slow(ref, f);
            assert_string_equal(fast, ref);
        }
    }
    static const double p10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
    for (int n = 0; n < 100000; n += 7) { /* n / 10^j and its float neighbours */
        for (int j = 0; j <= 6; j++) {
            float f = (float)((double)n / p10[j]);
            float g[3] = {nextafterf(f, 0.0f), f, nextafterf(f, INFINITY)};
            for (int t = 0; t < 3; t++) {
                sc_json_format_float(fast, g[t]);
                sc__json_format_float_slow(ref, g[t]);
                assert_string_equal(fast, ref);
            }
        }
    }
}

static void test_sticky_errors(void **state)
{
    (void)state;
    sc_buf b = {0};
    sc_jsonw w;
    /* A value where a key is required. */
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_int(&w, 1);
    size_t len = b.len;
    sc_jsonw_kv_int(&w, "a", 2);
    sc_jsonw_obj_end(&w);
    assert_int_equal(b.len, len); /* nothing written after the failure */
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    /* Mismatched close, key outside an object, key after key, unclosed. */
    sc_vec_clear(&b);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_arr_begin(&w);
    sc_jsonw_obj_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_key(&w, "k");
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "k");
    sc_jsonw_key(&w, "k2");
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "k");
    sc_jsonw_obj_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_arr_begin(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    sc_jsonw_init(&w, &b, false);
    sc_jsonw_arr_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_EINVAL);
    /* Depth: exactly SC_JSONW_MAX_DEPTH levels work, one more is SC_ELIMIT. */
    sc_vec_clear(&b);
    sc_jsonw_init(&w, &b, false);
    for (int i = 0; i < SC_JSONW_MAX_DEPTH; i++)
        sc_jsonw_arr_begin(&w);
    for (int i = 0; i < SC_JSONW_MAX_DEPTH; i++)
        sc_jsonw_arr_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_valid_json(&b);
    sc_vec_clear(&b);
    sc_jsonw_init(&w, &b, false);
    for (int i = 0; i <= SC_JSONW_MAX_DEPTH; i++)
        sc_jsonw_obj_begin(&w), sc_jsonw_key(&w, "k");
    assert_int_equal(sc_jsonw_finish(&w), SC_ELIMIT);
    sc_vec_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_pretty),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_random_bytes_valid),
        cmocka_unit_test(test_doubles_round_trip),
        cmocka_unit_test(test_sticky_errors),
        cmocka_unit_test(test_float_fast_path_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
