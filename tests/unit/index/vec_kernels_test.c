/* The vector kernels (index/vec_kernels.h): every implementation the CPU supports against a
 * plain double-precision loop, for float32 and float x int8 (relative error) and int8 (exact),
 * over lengths 0..300 (every tail shape) and random values. Seeds are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>

#include "common.h"
#include "index/vec_kernels.h"

static float frand(void)
{
    return (float)((double)(t_rand() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void test_f32_against_double(void **state)
{
    (void)state;
    t_seed("vec_kernels_f32");
    static float a[300], b[300];
    for (sc_vec_impl impl = SC_VEC_IMPL_SCALAR; impl <= SC_VEC_IMPL_AUTO; impl++) {
        if (!sc_vec_impl_supported(impl))
            continue;
        const sc_vec_kernels *k = sc_vec_kernels_get(impl);
        for (size_t n = 0; n <= 300; n++) {
            double dot = 0, l2 = 0, aa = 0, bb = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                a[i] = frand(), b[i] = frand();
                dot += (double)a[i] * b[i];
                l2 += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
                aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
                mag += fabs((double)a[i] * b[i]);
            }
            assert_true(fabs(k->dot_f32(a, b, n) - dot) <= 1e-5 * (mag + 1));
            assert_true(fabs(k->l2sq_f32(a, b, n) - l2) <= 1e-5 * (l2 + 1));
            double cos = aa > 0 && bb > 0 ? dot / sqrt(aa * bb) : 0;
            assert_true(fabs(sc_vec_cos_f32(k, a, b, n) - cos) <= 1e-4);
        }
    }
}

static void test_i8_exact(void **state)
{
    (void)state;
    t_seed("vec_kernels_i8");
    static int8_t a[300], b[300];
    for (sc_vec_impl impl = SC_VEC_IMPL_SCALAR; impl <= SC_VEC_IMPL_AUTO; impl++) {
        if (!sc_vec_impl_supported(impl))
            continue;
        const sc_vec_kernels *k = sc_vec_kernels_get(impl);
        for (size_t n = 0; n <= 300; n++) {
            int64_t dot = 0, l2 = 0, aa = 0, bb = 0;
            for (size_t i = 0; i < n; i++) {
                /* extremes included: -128 * -128 and (127 - -128)^2 */
                a[i] = (int8_t)(n % 7 == 0 ? -128 : (int)(t_rand() & 0xff) - 128);
                b[i] = (int8_t)(n % 7 == 0 ? (i & 1 ? 127 : -128) : (int)(t_rand() & 0xff) - 128);
                dot += (int64_t)a[i] * b[i];
                l2 += ((int64_t)a[i] - b[i]) * ((int64_t)a[i] - b[i]);
                aa += (int64_t)a[i] * a[i], bb += (int64_t)b[i] * b[i];
            }
            assert_int_equal(k->dot_i8(a, b, n), dot);
            assert_int_equal(k->l2sq_i8(a, b, n), l2);
            double cos = aa > 0 && bb > 0 ? (double)dot / sqrt((double)aa * (double)bb) : 0;
            assert_true(fabs(sc_vec_cos_i8(k, a, b, n) - cos) <= 1e-5);
        }
    }
}

/* 7-bit codes x 13-bit integers (the int8 walk with a quantized query): the extremes 127 x
 * 4095 and 127 x -4095 in every lane at 4,096 dims and random values at every tail length,
 * against a 64-bit loop. */
static void test_u7_i16_exact(void **state)
{
    (void)state;
    t_seed("vec_kernels_u7_i16");
    static int8_t a[4096];
    static int16_t b[4096];
    for (sc_vec_impl impl = SC_VEC_IMPL_SCALAR; impl <= SC_VEC_IMPL_AUTO; impl++) {
        if (!sc_vec_impl_supported(impl))
            continue;
        const sc_vec_kernels *k = sc_vec_kernels_get(impl);
        for (size_t n = 0; n <= 4096; n += n < 300 ? 1 : 1899) {
            int64_t dot = 0;
            for (size_t i = 0; i < n; i++) {
                bool ext = n % 3 == 0 || n == 4096;
                a[i] = (int8_t)(ext ? 127 : (int)(t_rand() % 128));
                b[i] = (int16_t)(ext ? (n % 2 ? 4095 : -4095) : (int)(t_rand() % 8191) - 4095);
                dot += (int64_t)a[i] * b[i];
            }
            assert_int_equal(k->dot_u7_i16(a, b, n), dot);
        }
    }
}

/* The gather form of dot_u7_i16 (a node's neighbours scored in one call): m rows picked by
 * ordinal from a table of codes, m = 0..9 (every remainder of the four-row passes), repeated
 * and out-of-order ordinals, the extremes 127 x +-4095 in one row, lengths 0..300 and 4,096,
 * each against a 64-bit loop. */
static void test_u7_i16_gather_exact(void **state)
{
    (void)state;
    t_seed("vec_kernels_u7_i16_gather");
    enum {
        ROWS = 12
    };
    static int8_t tab[ROWS * 4096];
    static int16_t b[4096];
    uint32_t ords[9];
    int32_t out[9];
    for (sc_vec_impl impl = SC_VEC_IMPL_SCALAR; impl <= SC_VEC_IMPL_AUTO; impl++) {
        if (!sc_vec_impl_supported(impl))
            continue;
        const sc_vec_kernels *k = sc_vec_kernels_get(impl);
        for (size_t n = 0; n <= 4096; n += n < 300 ? 1 : 3796) {
            bool ext = n % 3 == 0 || n == 4096;
            for (size_t i = 0; i < n; i++)
                b[i] = (int16_t)(ext ? (n % 2 ? 4095 : -4095) : (int)(t_rand() % 8191) - 4095);
            for (size_t r = 0; r < ROWS; r++)
                for (size_t i = 0; i < n; i++)
                    tab[r * n + i] = (int8_t)(ext && r == 5 ? 127 : (int)(t_rand() % 128));
            for (size_t m = 0; m <= 9; m++) {
                for (size_t j = 0; j < m; j++)
                    ords[j] = j == 2 ? 5 : (uint32_t)(t_rand() % ROWS);
                k->dot_u7_i16_gather(tab, ords, m, b, n, out);
                for (size_t j = 0; j < m; j++) {
                    int64_t dot = 0;
                    for (size_t i = 0; i < n; i++)
                        dot += (int64_t)tab[ords[j] * n + i] * b[i];
                    assert_int_equal(out[j], dot);
                }
            }
        }
    }
}

/* float x int8 (asymmetric scoring of quantized vectors): every code -128..127 and lengths
 * covering every tail shape, against a double loop. */
static void test_f32_i8_against_double(void **state)
{
    (void)state;
    t_seed("vec_kernels_f32_i8");
    static float a[300];
    static int8_t b[300];
    for (sc_vec_impl impl = SC_VEC_IMPL_SCALAR; impl <= SC_VEC_IMPL_AUTO; impl++) {
        if (!sc_vec_impl_supported(impl))
            continue;
        const sc_vec_kernels *k = sc_vec_kernels_get(impl);
        for (size_t n = 0; n <= 300; n++) {
            double dot = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                a[i] = frand();
                b[i] = (int8_t)(n % 5 == 0 ? (i & 1 ? 127 : -128) : (int)(t_rand() & 0xff) - 128);
                dot += (double)a[i] * b[i];
                mag += fabs((double)a[i] * b[i]);
            }
            assert_true(fabs(k->dot_f32_i8(a, b, n) - dot) <= 1e-5 * (mag + 1));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_against_double),    cmocka_unit_test(test_u7_i16_exact),
        cmocka_unit_test(test_u7_i16_gather_exact),   cmocka_unit_test(test_i8_exact),
        cmocka_unit_test(test_f32_i8_against_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
