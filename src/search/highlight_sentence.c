/* Sentence boundaries of ASCII text without ICU (highlight_internal.h): the Unicode sentence
 * rules (UAX #29, which ICU's root sentence iterator implements) restricted to the ASCII
 * classes. A forward pass costs a fraction of ICU's rule engine, and most highlighted text is
 * ASCII; anything else goes to ICU. tests/unit/search/highlight_sentence_test.c compares both
 * on random and real text. */
#include <string.h>

#include "search/highlight_internal.h"

enum {
    C_OTHER,
    C_CR,
    C_LF,
    C_SP,
    C_LOWER,
    C_UPPER,
    C_NUM,
    C_ATERM,
    C_STERM,
    C_CLOSE,
    C_SCONT
};

/* The class of each ASCII byte (zero: C_OTHER). */
static const uint8_t CLS[128] = {
    ['\r'] = C_CR,
    ['\n'] = C_LF,
    [' '] = C_SP,
    ['\t'] = C_SP,
    ['\v'] = C_SP,
    ['\f'] = C_SP,
    ['.'] = C_ATERM,
    ['!'] = C_STERM,
    ['?'] = C_STERM,
    ['"'] = C_CLOSE,
    ['\''] = C_CLOSE,
    ['('] = C_CLOSE,
    [')'] = C_CLOSE,
    ['['] = C_CLOSE,
    [']'] = C_CLOSE,
    ['{'] = C_CLOSE,
    ['}'] = C_CLOSE,
    [','] = C_SCONT,
    ['-'] = C_SCONT,
    [':'] = C_SCONT,
    /* ';' is Other in UAX #29 */
    ['a'] = C_LOWER,
    ['b'] = C_LOWER,
    ['c'] = C_LOWER,
    ['d'] = C_LOWER,
    ['e'] = C_LOWER,
    ['f'] = C_LOWER,
    ['g'] = C_LOWER,
    ['h'] = C_LOWER,
    ['i'] = C_LOWER,
    ['j'] = C_LOWER,
    ['k'] = C_LOWER,
    ['l'] = C_LOWER,
    ['m'] = C_LOWER,
    ['n'] = C_LOWER,
    ['o'] = C_LOWER,
    ['p'] = C_LOWER,
    ['q'] = C_LOWER,
    ['r'] = C_LOWER,
    ['s'] = C_LOWER,
    ['t'] = C_LOWER,
    ['u'] = C_LOWER,
    ['v'] = C_LOWER,
    ['w'] = C_LOWER,
    ['x'] = C_LOWER,
    ['y'] = C_LOWER,
    ['z'] = C_LOWER,
    ['A'] = C_UPPER,
    ['B'] = C_UPPER,
    ['C'] = C_UPPER,
    ['D'] = C_UPPER,
    ['E'] = C_UPPER,
    ['F'] = C_UPPER,
    ['G'] = C_UPPER,
    ['H'] = C_UPPER,
    ['I'] = C_UPPER,
    ['J'] = C_UPPER,
    ['K'] = C_UPPER,
    ['L'] = C_UPPER,
    ['M'] = C_UPPER,
    ['N'] = C_UPPER,
    ['O'] = C_UPPER,
    ['P'] = C_UPPER,
    ['Q'] = C_UPPER,
    ['R'] = C_UPPER,
    ['S'] = C_UPPER,
    ['T'] = C_UPPER,
    ['U'] = C_UPPER,
    ['V'] = C_UPPER,
    ['W'] = C_UPPER,
    ['X'] = C_UPPER,
    ['Y'] = C_UPPER,
    ['Z'] = C_UPPER,
    ['0'] = C_NUM,
    ['1'] = C_NUM,
    ['2'] = C_NUM,
    ['3'] = C_NUM,
    ['4'] = C_NUM,
    ['5'] = C_NUM,
    ['6'] = C_NUM,
    ['7'] = C_NUM,
    ['8'] = C_NUM,
    ['9'] = C_NUM,
};

static int cls(uint8_t c)
{
    return CLS[c & 0x7F];
}

static bool is_sat(int c)
{
    return c == C_ATERM || c == C_STERM;
}

/* SB8: after ATerm Close* Sp*, skipping anything but letters, terminators and separators, a
 * lowercase letter means the sentence goes on. */
static bool lower_follows(const uint8_t *p, size_t i, size_t n)
{
    for (; i < n; i++) {
        int c = cls(p[i]);
        if (c == C_LOWER)
            return true;
        if (c == C_UPPER || is_sat(c) || c == C_CR || c == C_LF)
            return false;
    }
    return false;
}

/* Where the sentence ending with the terminator at i breaks (after Close* Sp* ParaSep?), or 0
 * when the rules say it goes on; *resume is where scanning continues. */
static size_t after_terminator(const uint8_t *p, size_t i, size_t n, size_t *resume)
{
    int t = cls(p[i]);
    size_t j = i + 1;
    *resume = j;
    if (j < n && t == C_ATERM && cls(p[j]) == C_NUM)
        return 0; /* SB6 */
    if (j < n && t == C_ATERM && i > 0 && (cls(p[i - 1]) == C_UPPER || cls(p[i - 1]) == C_LOWER) &&
        cls(p[j]) == C_UPPER)
        return 0; /* SB7 */
    while (j < n && cls(p[j]) == C_CLOSE)
        j++;
    while (j < n && cls(p[j]) == C_SP)
        j++;
    if (j < n && (cls(p[j]) == C_SCONT || is_sat(cls(p[j])))) {
        *resume = j; /* SB8a: continues (a terminator there starts its own check) */
        return 0;
    }
    if (t == C_ATERM && lower_follows(p, j, n)) {
        *resume = j; /* SB8 */
        return 0;
    }
    if (j < n && cls(p[j]) == C_CR)
        j += j + 1 < n && p[j + 1] == '\n' ? 2 : 1;
    else if (j < n && cls(p[j]) == C_LF)
        j++;
    *resume = j;
    return j; /* SB11 */
}

bool sc__hl_ascii_sentences(sc_slice text, sc_arena *a, int32_t **list, size_t *n_list)
{
    const uint8_t *p = text.ptr;
    size_t n = text.len, cap = 16, k = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0x80)
            return false;
    int32_t *l = sc_arena_alloc(a, cap * sizeof *l);
    if (!l)
        return false;
    l[k++] = 0;
    for (size_t i = 0; i < n;) {
        int c = cls(p[i]);
        size_t br = 0, resume = i + 1;
        if (c == C_CR)
            br = resume = i + 1 < n && p[i + 1] == '\n' ? i + 2 : i + 1; /* SB3, SB4 */
        else if (c == C_LF)
            br = resume = i + 1;
        else if (is_sat(c))
            br = after_terminator(p, i, n, &resume);
        if (br && br < n) {
            if (k == cap) {
                int32_t *nl = sc_arena_alloc(a, cap * 2 * sizeof *nl);
                if (!nl)
                    return false;
                memcpy(nl, l, k * sizeof *nl);
                l = nl;
                cap *= 2;
            }
            l[k++] = (int32_t)br;
        }
        i = resume;
    }
    if (n > 0) {
        if (k == cap) {
            int32_t *nl = sc_arena_alloc(a, (cap + 1) * sizeof *nl);
            if (!nl)
                return false;
            memcpy(nl, l, k * sizeof *nl);
            l = nl;
        }
        l[k++] = (int32_t)n;
    }
    *list = l;
    *n_list = k;
    return true;
}
