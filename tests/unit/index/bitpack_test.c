/* Bit-packing round trips for every width 0..32 and every implementation (scalar, SSE4.1,
 * AVX2 when the CPU has them): pack then unpack gives the input back, the gap decoder gives the
 * doc numbers, the prefix-sum decoder (positions) the inclusive prefix sums, and every SIMD kernel
 * equals the scalar reference bit for bit (including on arbitrary packed bytes, as corrupt input
 * would be). Seeds are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/bitpack.h"

static const sc_bitpack_impl impls[] = {SC_BITPACK_SCALAR, SC_BITPACK_SSE41, SC_BITPACK_AVX2,
                                        SC_BITPACK_AUTO};

static void fill(uint32_t *v, unsigned width)
{
    for (int i = 0; i < SC_BITPACK_N; i++) {
        uint32_t x = (uint32_t)t_rand();
        v[i] = width == 32 ? x : x & ((UINT32_C(1) << width) - 1);
    }
    if (width > 0) /* make sure the top value is present so the width is exact */
        v[t_below(SC_BITPACK_N)] = width == 32 ? UINT32_MAX : (UINT32_C(1) << width) - 1;
}

static void test_roundtrip_all_widths(void **state)
{
    (void)state;
    t_seed("bitpack_roundtrip");
    uint32_t in[SC_BITPACK_N], out[SC_BITPACK_N], ref[SC_BITPACK_N];
    uint8_t packed[16 * 32 + 16];
    for (int rep = 0; rep < 200; rep++) {
        for (unsigned w = 0; w <= 32; w++) {
            fill(in, w);
            assert_int_equal(sc_bitpack_width(in, SC_BITPACK_N), w);
            memset(packed, 0xAB, sizeof(packed));
            sc_bitpack_pack(in, w, packed);
            for (size_t k = 0; k < sizeof(impls) / sizeof(impls[0]); k++) {
                memset(out, 0x55, sizeof(out));
                sc_bitpack_unpack_with(impls[k], packed, w, out);
                assert_memory_equal(out, in, sizeof(in));
                uint32_t first = (uint32_t)t_below(1000);
                sc_bitpack_unpack_gaps_with(impls[k], packed, w, first, out);
                ref[0] = first;
                for (int i = 1; i < SC_BITPACK_N; i++)
                    ref[i] = ref[i - 1] + in[i] + 1;
                assert_memory_equal(out, ref, sizeof(ref));
                sc_bitpack_unpack_psum_with(impls[k], packed, w, out);
                ref[0] = in[0];
                for (int i = 1; i < SC_BITPACK_N; i++)
                    ref[i] = ref[i - 1] + in[i]; /* mod 2^32, as the kernels */
                assert_memory_equal(out, ref, sizeof(ref));
            }
        }
    }
}

static void test_simd_equals_scalar_on_noise(void **state)
{
    (void)state;
    t_seed("bitpack_noise");
    uint8_t noise[16 * 32];
    uint32_t a[SC_BITPACK_N], ua[SC_BITPACK_N], b[SC_BITPACK_N];
    for (int rep = 0; rep < 300; rep++) {
        for (size_t i = 0; i < sizeof(noise); i++)
            noise[i] = (uint8_t)t_rand();
        for (unsigned w = 0; w <= 32; w++) {
            uint32_t first = (uint32_t)t_rand();
            sc_bitpack_unpack_gaps_with(SC_BITPACK_SCALAR, noise, w, first, a);
            sc_bitpack_unpack_with(SC_BITPACK_SCALAR, noise, w, ua);
            uint32_t pa[SC_BITPACK_N];
            sc_bitpack_unpack_psum_with(SC_BITPACK_SCALAR, noise, w, pa);
            for (size_t k = 1; k < sizeof(impls) / sizeof(impls[0]); k++) {
                sc_bitpack_unpack_gaps_with(impls[k], noise, w, first, b);
                assert_memory_equal(a, b, sizeof(a));
                sc_bitpack_unpack_with(impls[k], noise, w, b);
                assert_memory_equal(ua, b, sizeof(ua));
                sc_bitpack_unpack_psum_with(impls[k], noise, w, b);
                assert_memory_equal(pa, b, sizeof(pa));
            }
        }
    }
    fprintf(stderr, "sse4.1: %s, avx2: %s\n", sc_bitpack_supported(SC_BITPACK_SSE41) ? "yes" : "no",
            sc_bitpack_supported(SC_BITPACK_AVX2) ? "yes" : "no");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_widths),
        cmocka_unit_test(test_simd_equals_scalar_on_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
