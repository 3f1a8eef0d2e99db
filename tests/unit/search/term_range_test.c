/* Term range automaton (search/term_range.h) against a brute-force bytewise comparison: random
 * short strings over a small alphabet with 0x00 and 0xff (prefixes of each other, equal bounds,
 * lo > hi, open sides, inclusive and exclusive), every string of length <= 3 checked; the
 * bound-length limit. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/term_range.h"

static uint64_t rng;
static uint32_t below(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static const uint8_t alpha[] = {0x00, 'a', 'b', 'c', 0x7f, 0x80, 0xff};

static size_t rand_str(uint8_t *s)
{
    size_t n = below(5);
    for (size_t i = 0; i < n; i++)
        s[i] = alpha[below(sizeof alpha)];
    return n;
}

static int cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return (na > nb) - (na < nb);
}

static bool run(const sc_dfa *d, const uint8_t *s, size_t n)
{
    uint32_t st = d->start;
    for (size_t i = 0; i < n && st != SC_DFA_DEAD; i++)
        st = sc_dfa_step(d, st, s[i]);
    return sc_dfa_accepts(d, st);
}

static void test_vs_brute(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_SEED");
    rng = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20));
    if (!rng)
        rng = 1;
    fprintf(stderr, "[term_range] seed=%llu (rerun with SCRY_SEED=%llu)\n", (unsigned long long)rng,
            (unsigned long long)rng);
    for (int rep = 0; rep < 400; rep++) {
        uint8_t lo[8], hi[8];
        size_t nl = rand_str(lo), nh = rand_str(hi);
        if (below(5) == 0) {
            memcpy(hi, lo, nl);
            nh = nl;
            if (below(2) && nh < 8)
                hi[nh++] = alpha[below(sizeof alpha)];
        }
        bool has_lo = below(6) != 0, has_hi = below(6) != 0;
        bool li = below(2), hi_i = below(2);
        sc_slice sl = sc_slice_make(lo, nl), sh = sc_slice_make(hi, nh);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        assert_int_equal(
            sc_term_range_dfa(has_lo ? &sl : NULL, li, has_hi ? &sh : NULL, hi_i, &a, &d), SC_OK);
        /* every string of length <= 3 over the alphabet */
        uint8_t s[4];
        size_t na = sizeof alpha;
        for (size_t len = 0; len <= 3; len++) {
            size_t total = 1;
            for (size_t i = 0; i < len; i++)
                total *= na;
            for (size_t k = 0; k < total; k++) {
                size_t x = k;
                for (size_t i = 0; i < len; i++, x /= na)
                    s[i] = alpha[x % na];
                bool want = true;
                if (has_lo) {
                    int c = cmp(s, len, lo, nl);
                    want = want && (li ? c >= 0 : c > 0);
                }
                if (has_hi) {
                    int c = cmp(s, len, hi, nh);
                    want = want && (hi_i ? c <= 0 : c < 0);
                }
                if (run(&d, s, len) != want)
                    fail_msg("rep %d: string of length %zu (k %zu) got %d", rep, len, k, !want);
            }
        }
        /* the bounds themselves and extensions of them */
        if (has_lo)
            assert_true(run(&d, lo, nl) == (li && (!has_hi || (hi_i ? cmp(lo, nl, hi, nh) <= 0
                                                                    : cmp(lo, nl, hi, nh) < 0))));
        sc_arena_fini(&a);
    }
}

static void test_limit(void **state)
{
    (void)state;
    static uint8_t big[SC_TERM_RANGE_MAX_BOUND + 1];
    sc_slice s = sc_slice_make(big, sizeof big);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_dfa d;
    assert_int_equal(sc_term_range_dfa(&s, true, NULL, false, &a, &d), SC_EINVAL);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vs_brute),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
