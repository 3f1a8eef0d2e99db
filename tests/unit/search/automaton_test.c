/* Tests for pattern compilation (src/search/automaton*.c): Lucene RegExp syntax and flags,
 * wildcards, prefixes, Levenshtein automata (randomized against a DP, seed printed) and the
 * determinization limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "search/automaton.h"
#include "search/automaton_internal.h"
#include "search/query.h"

#define S(x) sc_slice_cstr(x)

typedef struct rcase {
    const char *pattern;
    const char *yes[8];
    const char *no[8];
} rcase;

static void check_cases(const rcase *cases, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        sc_automaton_error err = {{0}, 0};
        sc_status st =
            kind == 0 ? sc_automaton_regexp(S(cases[i].pattern), SC_REGEXP_ALL, 10000, &a, &d, &err)
            : kind == 1 ? sc_automaton_wildcard(S(cases[i].pattern), 10000, &a, &d, &err)
                        : sc_automaton_prefix(S(cases[i].pattern), &a, &d);
        if (st != SC_OK)
            fail_msg("pattern %s: %s (%s)", cases[i].pattern, sc_status_name(st), err.msg);
        for (int k = 0; k < 8 && cases[i].yes[k]; k++)
            if (!sc_automaton_run(&d, S(cases[i].yes[k])))
                fail_msg("pattern %s should accept '%s'", cases[i].pattern, cases[i].yes[k]);
        for (int k = 0; k < 8 && cases[i].no[k]; k++)
            if (sc_automaton_run(&d, S(cases[i].no[k])))
                fail_msg("pattern %s should reject '%s'", cases[i].pattern, cases[i].no[k]);
        sc_arena_fini(&a);
    }
}

static void test_regexp(void **state)
{
    (void)state;
    static const rcase cases[] = {
        {"abc", {"abc"}, {"ab", "abcd", ""}},
        {"a|bc", {"a", "bc"}, {"b", "abc"}},
        {"ab*c", {"ac", "abc", "abbbc"}, {"abd", "a"}},
        {"ab+c?", {"ab", "abbc"}, {"a", "ac", "abcc"}},
        {"a{2,3}", {"aa", "aaa"}, {"a", "aaaa"}},
        {"a{2}", {"aa"}, {"a", "aaa"}},
        {"a{2,}", {"aa", "aaaaa"}, {"a"}},
        {"(ab)+", {"ab", "abab"}, {"aba", ""}},
        {"[a-c]x", {"ax", "cx"}, {"dx", "x"}},
        {"[^a-c]", {"d", "\xc3\xa9", "\xf0\x9f\x98\x80"}, {"a", "b", "dd", ""}},
        {"[-abc]", {"a", "-"}, {"d"}},
        {".", {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"}, {"", "ab"}},
        {"\xc3\xa9.", {"\xc3\xa9z", "\xc3\xa9\xc3\xa9"}, {"ez", "\xc3\xa9"}},
        {"@", {"", "anything", "\xc3\xa9"}, {NULL}},
        {"#|a", {"a"}, {"", "#"}},
        {"\"a.b\"", {"a.b"}, {"axb"}},
        {"a()b", {"ab"}, {"a b"}},
        {"\\.\\*", {".*"}, {"ab"}},
        {"<1-10>", {"1", "01", "10", "0010", "7"}, {"0", "11", "", "100"}},
        {"<01-10>", {"01", "10", "05"}, {"1", "010", "11"}},
        {"<0-255>", {"0", "255", "99", "000"}, {"256", "1000"}},
        {"x<10-5>", {"x5", "x10"}, {"x4", "x11"}},
        {"ab&a.", {"ab"}, {"ac", "a"}},
        {"@&~(foo)", {"fo", "fooo", "", "bar"}, {"foo"}},
        {"~(a.*)", {"b", "", "ba"}, {"a", "abc"}},
        {"~(ab)c", {"c", "ac", "abbc"}, {"abc"}},
        {"*a", {"*a"}, {"a", "ba"}},
        {"a]", {"a]"}, {"a"}},
        {"", {""}, {"a"}},
        {"[a-z]+ing", {"running", "sing"}, {"ing", "Running"}},
        {"(a|b)*abb", {"abb", "aababb"}, {"ab", "abba"}},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

static void test_regexp_errors(void **state)
{
    (void)state;
    static const struct {
        const char *p;
        sc_status st;
    } bad[] = {
        {"(ab", SC_EPARSE},    {"a)", SC_EPARSE},    {"[ab", SC_EPARSE},
        {"a{2", SC_EPARSE},    {"a{x}", SC_EPARSE},  {"\"ab", SC_EPARSE},
        {"[z-a]", SC_EPARSE},  {"<1-x>", SC_EPARSE}, {"<foo>", SC_EUNSUPPORTED},
        {"[abc-]", SC_EPARSE}, {"ab|", SC_EPARSE},   {"a\\", SC_EPARSE},
        {"<1-2", SC_EPARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        sc_automaton_error err = {{0}, 0};
        sc_status st = sc_automaton_regexp(S(bad[i].p), SC_REGEXP_ALL, 10000, &a, &d, &err);
        if (st != bad[i].st)
            fail_msg("pattern %s: got %s want %s", bad[i].p, sc_status_name(st),
                     sc_status_name(bad[i].st));
        assert_true(err.msg[0] != 0);
        sc_arena_fini(&a);
    }
    /* Flags off: the operators are literal. */
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_dfa d;
    assert_int_equal(sc_automaton_regexp(S("a&b~c@#"), SC_REGEXP_NONE, 10000, &a, &d, NULL), SC_OK);
    assert_true(sc_automaton_run(&d, S("a&b~c@#")));
    sc_arena_fini(&a);
}

static void test_pathological_fails_fast(void **state)
{
    (void)state;
    const char *pats[] = {"(a|b)*a(a|b){20}", "[ab]*a[ab]{30}c", "(.*a.*b.*c){5000}", "a{99999999}",
                          "((((((((((a*)*)*)*)*)*)*)*)*)*){200}"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        sc_automaton_error err = {{0}, 0};
        uint64_t t0 = sc_clock_now_ns();
        sc_status st = sc_automaton_regexp(S(pats[i]), SC_REGEXP_ALL, 10000, &a, &d, &err);
        uint64_t ms = (sc_clock_now_ns() - t0) / 1000000;
        printf("# %s -> %s in %llu ms: %s\n", pats[i], sc_status_name(st), (unsigned long long)ms,
               err.msg);
        if (i < 4) {
            assert_int_equal(st, SC_ELIMIT);
            assert_true(strstr(err.msg, "10000") || strstr(err.msg, "too complex"));
        }
        sc_arena_fini(&a);
    }
    /* Deep nesting is an error, not a stack overflow. */
    char deep[5000];
    memset(deep, '(', 2500);
    memset(deep + 2500, ')', 2499);
    deep[4999] = 0;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_dfa d;
    assert_int_equal(sc_automaton_regexp(S(deep), SC_REGEXP_ALL, 10000, &a, &d, NULL), SC_ELIMIT);
    sc_arena_fini(&a);
}

static void test_wildcard_prefix(void **state)
{
    (void)state;
    static const rcase wc[] = {
        {"ab*", {"ab", "abc", "ab\xc3\xa9"}, {"a", "b"}},
        {"*b", {"b", "ab", "\xc3\xa9\x62"}, {"ba"}},
        {"a?c", {"abc", "a\xc3\xa9\x63"}, {"ac", "abbc"}},
        {"a\\*c", {"a*c"}, {"abc"}},
        {"a\\", {"a\\"}, {"a"}},
        {"*", {"", "x"}, {NULL}},
    };
    check_cases(wc, sizeof wc / sizeof wc[0], 1);
    static const rcase px[] = {
        {"ab", {"ab", "abc", "ab\xff"}, {"a", "b", "ba"}},
        {"", {"", "x"}, {NULL}},
    };
    check_cases(px, sizeof px / sizeof px[0], 2);
}

static void random_word(char *buf, int len, unsigned *seed)
{
    static const char *alpha[] = {"a", "b", "c", "\xc3\xa9", "\xe2\x82\xac"};
    buf[0] = 0;
    for (int i = 0; i < len; i++)
        strcat(buf, alpha[rand_r(seed) % 5]);
}

static void test_fuzzy_random(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    if (getenv("SCRY_SEED"))
        seed = (unsigned)strtoul(getenv("SCRY_SEED"), NULL, 10);
    printf("# fuzzy seed %u (SCRY_SEED to replay)\n", seed);
    for (int round = 0; round < 60; round++) {
        char w[64];
        random_word(w, 1 + rand_r(&seed) % 6, &seed);
        uint32_t k = (uint32_t)(rand_r(&seed) % 3);
        uint32_t prefix = (uint32_t)(rand_r(&seed) % 3);
        bool tr = rand_r(&seed) % 2;
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        sc_automaton_error err = {{0}, 0};
        assert_int_equal(sc_automaton_fuzzy(S(w), k, prefix, tr, &a, &d, &err), SC_OK);
        for (int j = 0; j < 300; j++) {
            char t[64];
            random_word(t, rand_r(&seed) % 8, &seed);
            /* the prefix must match exactly: compare the code point prefixes */
            size_t wl = sc_automaton_cp_len(S(w));
            size_t pl = prefix < wl ? prefix : wl;
            bool prefix_ok = true;
            {
                /* byte length of pl code points of w */
                size_t bi = 0;
                for (size_t c = 0; c < pl; c++) {
                    unsigned char ch = (unsigned char)w[bi];
                    bi += ch < 0x80 ? 1 : ch < 0xE0 ? 2 : ch < 0xF0 ? 3 : 4;
                }
                prefix_ok = strncmp(w, t, bi) == 0;
                uint32_t dist =
                    prefix_ok ? sc_automaton_edit_distance(S(w + bi), S(t + bi), tr, k) : k + 1;
                bool want = prefix_ok && dist <= k;
                bool got = sc_automaton_run(&d, S(t));
                if (want != got)
                    fail_msg("seed %u: fuzzy(%s, k=%u, prefix=%u, tr=%d) on %s: want %d got %d",
                             seed, w, k, prefix, tr, t, want, got);
            }
        }
        sc_arena_fini(&a);
    }
}

/* Term ranges against memcmp-style byte order on random short strings over a small alphabet
 * (with a 0xFF and a 0x00 byte, the edges of the byte range), every bound open or closed. */
static int byte_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static void random_bytes(char *buf, size_t *len, unsigned *seed)
{
    static const char alpha[] = {'a', 'b', 'c', '\xff', '\x00'};
    *len = (size_t)(rand_r(seed) % 5);
    for (size_t i = 0; i < *len; i++)
        buf[i] = alpha[rand_r(seed) % 5];
}

static void test_term_range_random(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    if (getenv("SCRY_SEED"))
        seed = (unsigned)strtoul(getenv("SCRY_SEED"), NULL, 10);
    printf("# term range seed %u (SCRY_SEED to replay)\n", seed);
    for (int round = 0; round < 300; round++) {
        char lo[8], hi[8];
        size_t ll, hl;
        random_bytes(lo, &ll, &seed);
        random_bytes(hi, &hl, &seed);
        bool has_lo = rand_r(&seed) % 4 != 0, has_hi = rand_r(&seed) % 4 != 0;
        bool il = rand_r(&seed) % 2, ih = rand_r(&seed) % 2;
        sc_slice los = sc_slice_make(lo, ll), his = sc_slice_make(hi, hl);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        assert_int_equal(
            sc_automaton_term_range(has_lo ? &los : NULL, il, has_hi ? &his : NULL, ih, &a, &d),
            SC_OK);
        for (int t = 0; t < 60; t++) {
            char w[8];
            size_t wl;
            random_bytes(w, &wl, &seed);
            bool want = true;
            if (has_lo) {
                int c = byte_cmp(w, wl, lo, ll);
                want = want && (il ? c >= 0 : c > 0);
            }
            if (has_hi) {
                int c = byte_cmp(w, wl, hi, hl);
                want = want && (ih ? c <= 0 : c < 0);
            }
            bool got = sc_automaton_run(&d, sc_slice_make(w, wl));
            if (got != want)
                fail_msg("seed %u round %d: range (%d %zu, %d %zu, %d %d) on a %zu-byte term: "
                         "want %d got %d",
                         seed, round, has_lo, ll, has_hi, hl, il, ih, wl, want, got);
        }
        sc_arena_fini(&a);
    }
}

static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(sc_automaton_edit_distance(S("abc"), S("abc"), true, 2), 0);
    assert_int_equal(sc_automaton_edit_distance(S("abc"), S("acb"), true, 2), 1);
    assert_int_equal(sc_automaton_edit_distance(S("abc"), S("acb"), false, 2), 2);
    assert_int_equal(sc_automaton_edit_distance(S("kitten"), S("sitting"), true, 5), 3);
    assert_int_equal(sc_automaton_edit_distance(S("kitten"), S("sitting"), true, 2), 3);
    assert_int_equal(sc_automaton_edit_distance(S("\xc3\xa9t\xc3\xa9"), S("ete"), true, 2), 2);
    assert_int_equal(sc_automaton_cp_len(S("\xc3\xa9t\xc3\xa9")), 3);
}

/* Random byte strings over pieces that exercise UTF-8: ASCII letters, 2-, 3- and 4-byte
 * characters (E0/ED/F0/F4 lead bytes included), and invalid sequences (a lone continuation,
 * a truncated lead, an encoded surrogate, an overlong form, 0xFF). */
static size_t random_utf8ish(uint8_t *buf, unsigned *seed, int max_pieces)
{
    static const char *pieces[] = {"a",
                                   "b",
                                   "c",
                                   "\xc3\xa9",
                                   "\xc3\xa8",
                                   "\xe2\x82\xac",
                                   "\xe2\x82\xad",
                                   "\xe0\xa4\x85",
                                   "\xed\x9f\xbf",
                                   "\xf0\x9f\x98\x80",
                                   "\xf4\x8f\xbf\xbf",
                                   "\x80",
                                   "\xc3",
                                   "\xed\xa0\x80",
                                   "\xc0\xaf",
                                   "\xff",
                                   "*",
                                   "?"};
    size_t n = 0;
    int k = rand_r(seed) % (max_pieces + 1);
    for (int i = 0; i < k; i++) {
        const char *p = pieces[rand_r(seed) % (sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        memcpy(buf + n, p, l);
        n += l;
    }
    return n;
}

/* The direct wildcard DFA (automaton_wildcard.c) against the NFA construction on random
 * patterns and random (also invalid UTF-8) strings, plus its hints: every accepted string ends
 * with the suffix, and no valid UTF-8 continuation from a tame state dies. */
static void test_wildcard_direct_random(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    if (getenv("SCRY_SEED"))
        seed = (unsigned)strtoul(getenv("SCRY_SEED"), NULL, 10);
    printf("# wildcard seed %u (SCRY_SEED to replay)\n", seed);
    static const char *valid[] = {"a",
                                  "b",
                                  "\xc3\xa9",
                                  "\xe2\x82\xac",
                                  "\xe0\xa4\x85",
                                  "\xed\x9f\xbf",
                                  "\xf0\x9f\x98\x80",
                                  "\xf4\x8f\xbf\xbf"};
    for (int round = 0; round < 400; round++) {
        uint8_t pat[128];
        size_t pl = random_utf8ish(pat, &seed, 7);
        if (rand_r(&seed) % 4 == 0) /* an escape */
            pat[pl++] = '\\';
        sc_slice ps = sc_slice_make(pat, pl);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d, n;
        sc_automaton_error e1 = {{0}, 0}, e2 = {{0}, 0};
        sc_status s1 = sc_automaton_wildcard(ps, 10000, &a, &d, &e1);
        sc_status s2 = sc__am_wildcard_nfa(ps, 1000000, &a, &n, &e2);
        if (s1 != SC_OK || s2 != SC_OK)
            fail_msg("seed %u round %d: %s / %s", seed, round, sc_status_name(s1),
                     sc_status_name(s2));
        for (int t = 0; t < 200; t++) {
            uint8_t w[128];
            size_t wl = random_utf8ish(w, &seed, 6);
            sc_slice ws = sc_slice_make(w, wl);
            bool want = sc_automaton_run(&n, ws), got = sc_automaton_run(&d, ws);
            if (want != got)
                fail_msg("seed %u round %d: pattern of %zu bytes on a %zu-byte string: want %d "
                         "got %d",
                         seed, round, pl, wl, want, got);
            if (got &&
                (wl < d.suffix_len || memcmp(w + wl - d.suffix_len, d.suffix, d.suffix_len) != 0))
                fail_msg("seed %u round %d: accepted string lacks the suffix", seed, round);
            /* tame: along a valid string, from every tame state at a code point boundary,
             * valid continuations never die */
            uint32_t s = d.start;
            for (int i = 0; i < 6 && s != SC_DFA_DEAD; i++) {
                if (d.tame[s]) {
                    uint32_t u = s;
                    for (int k = 0; k < 4 && u != SC_DFA_DEAD; k++) {
                        const char *v = valid[rand_r(&seed) % 8];
                        for (size_t j = 0; v[j] && u != SC_DFA_DEAD; j++)
                            u = sc_dfa_step(&d, u, (uint8_t)v[j]);
                    }
                    if (u == SC_DFA_DEAD)
                        fail_msg("seed %u round %d: a tame state died", seed, round);
                }
                const char *v = valid[rand_r(&seed) % 8];
                for (size_t j = 0; v[j] && s != SC_DFA_DEAD; j++)
                    s = sc_dfa_step(&d, s, (uint8_t)v[j]);
            }
        }
        sc_arena_fini(&a);
    }
}

/* Regexp DFAs get the hints too (automaton_hints.c): on fixed and random patterns, every
 * accepted string ends with the suffix and tame states survive valid continuations. */
static void test_regexp_hints(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    if (getenv("SCRY_SEED"))
        seed = (unsigned)strtoul(getenv("SCRY_SEED"), NULL, 10);
    printf("# regexp hints seed %u (SCRY_SEED to replay)\n", seed);
    static const struct {
        const char *p, *suffix;
    } fixed[] = {{".*0th", "0th"},           {".*(tion|sion)", "ion"}, {"@abc", "abc"},
                 {".*\xc3\xa9", "\xc3\xa9"}, {"(a|b)*abb", NULL},      {"abc", NULL}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        assert_int_equal(sc_automaton_regexp(S(fixed[i].p), SC_REGEXP_ALL, 10000, &a, &d, NULL),
                         SC_OK);
        if (fixed[i].suffix) {
            if (!d.tame || d.suffix_len != strlen(fixed[i].suffix) ||
                memcmp(d.suffix, fixed[i].suffix, d.suffix_len) != 0)
                fail_msg("%s: suffix of %u bytes, tame %d", fixed[i].p, d.suffix_len,
                         d.tame != NULL);
            assert_true(d.tame[d.start]);
        }
        sc_arena_fini(&a);
    }
    static const char *pieces[] = {"a",    "b",  "\xc3\xa9",     ".",       ".*",   "(a|b)",
                                   "[ab]", "a?", "\xe2\x82\xac", "(ab|ba)", "[^a]", "b+"};
    static const char *valid[] = {"a", "b", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    int with_hints = 0;
    for (int round = 0; round < 300; round++) {
        char pat[128] = "";
        int k = 1 + rand_r(&seed) % 5;
        for (int i = 0; i < k; i++)
            strcat(pat, pieces[rand_r(&seed) % (sizeof pieces / sizeof pieces[0])]);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_dfa d;
        assert_int_equal(sc_automaton_regexp(S(pat), SC_REGEXP_ALL, 10000, &a, &d, NULL), SC_OK);
        with_hints += d.tame != NULL;
        for (int t = 0; d.tame && t < 200; t++) {
            uint8_t w[128];
            size_t wl = random_utf8ish(w, &seed, 6);
            if (sc_automaton_run(&d, sc_slice_make(w, wl)) &&
                (wl < d.suffix_len || memcmp(w + wl - d.suffix_len, d.suffix, d.suffix_len)))
                fail_msg("seed %u: /%s/ accepted a string without its suffix", seed, pat);
            uint32_t s = d.start;
            for (int i = 0; i < 5 && s != SC_DFA_DEAD; i++) {
                if (d.tame[s]) {
                    uint32_t u = s;
                    for (int j = 0; j < 4 && u != SC_DFA_DEAD; j++) {
                        const char *v = valid[rand_r(&seed) % 5];
                        for (size_t x = 0; v[x] && u != SC_DFA_DEAD; x++)
                            u = sc_dfa_step(&d, u, (uint8_t)v[x]);
                    }
                    if (u == SC_DFA_DEAD)
                        fail_msg("seed %u: /%s/: a tame state died", seed, pat);
                }
                const char *v = valid[rand_r(&seed) % 5];
                for (size_t x = 0; v[x] && s != SC_DFA_DEAD; x++)
                    s = sc_dfa_step(&d, s, (uint8_t)v[x]);
            }
        }
        sc_arena_fini(&a);
    }
    printf("# %d of 300 random patterns got hints\n", with_hints);
    assert_true(with_hints > 0);
}

static void test_wildcard_limits(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_dfa d;
    sc_automaton_error err = {{0}, 0};
    /* 2^20 position sets: the state limit, fast */
    assert_int_equal(sc_automaton_wildcard(S("*a????????????????????"), 10000, &a, &d, &err),
                     SC_ELIMIT);
    assert_non_null(strstr(err.msg, "10000"));
    /* past 63 tokens: the NFA path, same language */
    char longp[200] = "*";
    for (int i = 0; i < 70; i++)
        strcat(longp, i % 7 == 3 ? "?" : "x");
    strcat(longp, "*");
    assert_int_equal(sc_automaton_wildcard(S(longp), 10000, &a, &d, &err), SC_OK);
    char yes[200] = "zz";
    for (int i = 0; i < 70; i++)
        strcat(yes, i % 7 == 3 ? "\xc3\xa9" : "x");
    assert_true(sc_automaton_run(&d, S(yes)));
    yes[2] = 'y';
    assert_false(sc_automaton_run(&d, S(yes)));
    /* prefix hints: tame once past the prefix, no suffix */
    assert_int_equal(sc_automaton_prefix(S("ab"), &a, &d), SC_OK);
    assert_int_equal(d.suffix_len, 0);
    assert_false(d.tame[d.start]);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regexp),
        cmocka_unit_test(test_regexp_errors),
        cmocka_unit_test(test_pathological_fails_fast),
        cmocka_unit_test(test_wildcard_prefix),
        cmocka_unit_test(test_fuzzy_random),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_term_range_random),
        cmocka_unit_test(test_wildcard_direct_random),
        cmocka_unit_test(test_wildcard_limits),
        cmocka_unit_test(test_regexp_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
