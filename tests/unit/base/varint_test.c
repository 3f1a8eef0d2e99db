/* Tests for base/varint: round trips at every length boundary, zigzag, truncated and overlong
 * input -> SC_ECORRUPT with the cursor unmoved, 32-bit overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/varint.h"

static void roundtrip(uint64_t v)
{
    uint8_t buf[SC_VARINT_MAX_BYTES + 2];
    size_t n = sc_varint_put(buf, v);
    assert_int_equal(n, sc_varint_len(v));
    assert_true(n >= 1 && n <= SC_VARINT_MAX_BYTES);
    const uint8_t *p = buf;
    uint64_t got;
    assert_int_equal(sc_varint_get(&p, buf + n, &got), SC_OK);
    assert_int_equal(got, v);
    assert_ptr_equal(p, buf + n);
    /* Every truncation fails and leaves the cursor where it was. */
    for (size_t cut = 0; cut < n; cut++) {
        p = buf;
        assert_int_equal(sc_varint_get(&p, buf + cut, &got), SC_ECORRUPT);
        assert_ptr_equal(p, buf);
    }
}

static void test_roundtrip(void **state)
{
    (void)state;
    for (unsigned bits = 0; bits <= 64; bits++) {
        uint64_t v = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits);
        roundtrip(v);
        roundtrip(v - 1);
        roundtrip(v + 1);
    }
    assert_int_equal(sc_varint_len(0), 1);
    assert_int_equal(sc_varint_len(127), 1);
    assert_int_equal(sc_varint_len(128), 2);
    assert_int_equal(sc_varint_len(UINT64_MAX), 10);
    uint8_t buf[2];
    assert_int_equal(sc_varint_put(buf, 300), 2);
    assert_int_equal(buf[0], 0xac);
    assert_int_equal(buf[1], 0x02);
}

static void test_corrupt(void **state)
{
    (void)state;
    uint64_t v;
    /* 11 continuation bytes: longer than any 64-bit varint. */
    uint8_t overlong[12];
    memset(overlong, 0x80, sizeof(overlong));
    overlong[11] = 0;
    const uint8_t *p = overlong;
    assert_int_equal(sc_varint_get(&p, overlong + 12, &v), SC_ECORRUPT);
    assert_ptr_equal(p, overlong);
    /* 10th byte carrying more than the 64th bit overflows. */
    uint8_t ovf[10];
    memset(ovf, 0xff, 9);
    ovf[9] = 0x02;
    p = ovf;
    assert_int_equal(sc_varint_get(&p, ovf + 10, &v), SC_ECORRUPT);
    ovf[9] = 0x01; /* exactly UINT64_MAX */
    p = ovf;
    assert_int_equal(sc_varint_get(&p, ovf + 10, &v), SC_OK);
    assert_true(v == UINT64_MAX);
    /* Empty input. */
    p = ovf;
    assert_int_equal(sc_varint_get(&p, ovf, &v), SC_ECORRUPT);
    /* 32-bit: UINT32_MAX fits, one more does not (cursor unmoved). */
    uint8_t buf[SC_VARINT_MAX_BYTES];
    uint32_t v32;
    size_t n = sc_varint_put(buf, UINT32_MAX);
    p = buf;
    assert_int_equal(sc_varint_get32(&p, buf + n, &v32), SC_OK);
    assert_int_equal(v32, UINT32_MAX);
    n = sc_varint_put(buf, (uint64_t)UINT32_MAX + 1);
    p = buf;
    assert_int_equal(sc_varint_get32(&p, buf + n, &v32), SC_ECORRUPT);
    assert_ptr_equal(p, buf);
    p = buf;
    assert_int_equal(sc_varint_get32(&p, buf + 2, &v32), SC_ECORRUPT);
}

static void test_zigzag(void **state)
{
    (void)state;
    int64_t vals[] = {0, -1, 1, -2, 2, 63, -64, 64, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    uint64_t want[] = {0, 1, 2, 3, 4, 126, 127, 128, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX - 2};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        assert_true(sc_zigzag_encode(vals[i]) == want[i]);
        assert_true(sc_zigzag_decode(sc_zigzag_encode(vals[i])) == vals[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_zigzag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
