/* Tests for base/base64: RFC 4648 vectors, round trips of random bytes, and the strict decoder
 * refusing malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"

static void test_vectors(void **state)
{
    (void)state;
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char out[16];
        assert_int_equal(sc_base64_encode(plain[i], strlen(plain[i]), out), strlen(enc[i]));
        assert_string_equal(out, enc[i]);
        uint8_t dec[16];
        size_t n;
        assert_int_equal(sc_base64_decode(enc[i], strlen(enc[i]), dec, &n), SC_OK);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(dec, plain[i], n);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    srand(7);
    for (int iter = 0; iter < 2000; iter++) {
        size_t n = (size_t)(rand() % 70);
        uint8_t in[70], dec[80];
        char enc[100];
        for (size_t i = 0; i < n; i++)
            in[i] = (uint8_t)rand();
        size_t el = sc_base64_encode(in, n, enc);
        assert_int_equal(el, sc_base64_encoded_len(n));
        size_t dn;
        assert_int_equal(sc_base64_decode(enc, el, dec, &dn), SC_OK);
        assert_int_equal(dn, n);
        if (n)
            assert_memory_equal(dec, in, n);
    }
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Z", "Zg=", "Zg=a", "Z===", "=Zg=", "Zh==", "Zm9=", "Zm9v!A==", "Zg==Zg==", "Zm 9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t dec[16];
        size_t n;
        assert_int_equal(sc_base64_decode(bad[i], strlen(bad[i]), dec, &n), SC_EPARSE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
