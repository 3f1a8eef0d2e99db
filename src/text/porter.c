/* The Porter stemmer as Lucene's PorterStemFilter runs it: Martin Porter's reference
 * implementation of the 1980 algorithm (including its two departures, "bli"->"ble" and
 * "logi"->"log"), on UTF-16 code units where every non-vowel unit counts as a consonant, and
 * words of one or two units left alone. Written from the published algorithm; checked against
 * Lucene on a word list (tests/unit/text/analyzer_test.c). */
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"

typedef struct stemmer {
    uint16_t *b;
    int k, k0, j;
} stemmer;

static bool cons(const stemmer *z, int i)
{
    switch (z->b[i]) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u': return false;
    case 'y': return i == z->k0 ? true : !cons(z, i - 1);
    default: return true;
    }
}

/* Number of consonant-vowel sequences between k0 and j. */
static int measure(const stemmer *z)
{
    int n = 0, i = z->k0;
    for (;;) {
        if (i > z->j)
            return n;
        if (!cons(z, i))
            break;
        i++;
    }
    i++;
    for (;;) {
        for (;;) {
            if (i > z->j)
                return n;
            if (cons(z, i))
                break;
            i++;
        }
        i++;
        n++;
        for (;;) {
            if (i > z->j)
                return n;
            if (!cons(z, i))
                break;
            i++;
        }
        i++;
    }
}

static bool vowel_in_stem(const stemmer *z)
{
    for (int i = z->k0; i <= z->j; i++)
        if (!cons(z, i))
            return true;
    return false;
}

static bool double_c(const stemmer *z, int j)
{
    if (j < z->k0 + 1)
        return false;
    if (z->b[j] != z->b[j - 1])
        return false;
    return cons(z, j);
}

static bool cvc(const stemmer *z, int i)
{
    if (i < z->k0 + 2 || !cons(z, i) || cons(z, i - 1) || !cons(z, i - 2))
        return false;
    uint16_t ch = z->b[i];
    return !(ch == 'w' || ch == 'x' || ch == 'y');
}

/* Does b[k0..k] end with s (len bytes)? Sets j to the position before the suffix. */
static bool ends_n(stemmer *z, const char *s, int len)
{
    if (len > z->k - z->k0 + 1)
        return false;
    int o = z->k - len + 1;
    for (int i = 0; i < len; i++)
        if (z->b[o + i] != (uint8_t)s[i])
            return false;
    z->j = z->k - len;
    return true;
}

static void set_to_n(stemmer *z, const char *s, int len)
{
    int o = z->j + 1;
    for (int i = 0; i < len; i++)
        z->b[o + i] = (uint8_t)s[i];
    z->k = z->j + len;
}

static void r_n(stemmer *z, const char *s, int len)
{
    if (measure(z) > 0)
        set_to_n(z, s, len);
}

/* String literals only: their lengths are compile-time constants. */
#define ends(z, s) ends_n((z), "" s, (int)sizeof(s) - 1)
#define set_to(z, s) set_to_n((z), "" s, (int)sizeof(s) - 1)
#define r(z, s) r_n((z), "" s, (int)sizeof(s) - 1)

/* Plurals and -ed / -ing. */
static void step1(stemmer *z)
{
    if (z->b[z->k] == 's') {
        if (ends(z, "sses"))
            z->k -= 2;
        else if (ends(z, "ies"))
            set_to(z, "i");
        else if (z->b[z->k - 1] != 's')
            z->k--;
    }
    if (ends(z, "eed")) {
        if (measure(z) > 0)
            z->k--;
    } else if ((ends(z, "ed") || ends(z, "ing")) && vowel_in_stem(z)) {
        z->k = z->j;
        if (ends(z, "at"))
            set_to(z, "ate");
        else if (ends(z, "bl"))
            set_to(z, "ble");
        else if (ends(z, "iz"))
            set_to(z, "ize");
        else if (double_c(z, z->k)) {
            uint16_t ch = z->b[z->k--];
            if (ch == 'l' || ch == 's' || ch == 'z')
                z->k++;
        } else if (measure(z) == 1 && cvc(z, z->k))
            set_to(z, "e");
    }
}

/* Terminal y -> i when there is another vowel in the stem. */
static void step2(stemmer *z)
{
    if (ends(z, "y") && vowel_in_stem(z))
        z->b[z->k] = 'i';
}

/* Double suffixes to single ones. */
static void step3(stemmer *z)
{
    if (z->k == z->k0)
        return;
#define RULE(suffix, repl)                                                                         \
    if (ends(z, suffix)) {                                                                         \
        r(z, repl);                                                                                \
        return;                                                                                    \
    }
    /* Dispatch on the penultimate letter, as the reference implementation does. */
    switch (z->b[z->k - 1]) {
    case 'a':
        RULE("ational", "ate");
        RULE("tional", "tion");
        break;
    case 'c':
        RULE("enci", "ence");
        RULE("anci", "ance");
        break;
    case 'e': RULE("izer", "ize"); break;
    case 'l':
        RULE("bli", "ble");
        RULE("alli", "al");
        RULE("entli", "ent");
        RULE("eli", "e");
        RULE("ousli", "ous");
        break;
    case 'o':
        RULE("ization", "ize");
        RULE("ation", "ate");
        RULE("ator", "ate");
        break;
    case 's':
        RULE("alism", "al");
        RULE("iveness", "ive");
        RULE("fulness", "ful");
        RULE("ousness", "ous");
        break;
    case 't':
        RULE("aliti", "al");
        RULE("iviti", "ive");
        RULE("biliti", "ble");
        break;
    case 'g': RULE("logi", "log"); break;
    default: break;
    }
#undef RULE
}

/* -ic-, -full, -ness etc. */
static void step4(stemmer *z)
{
    switch (z->b[z->k]) {
    case 'e':
        if (ends(z, "icate")) {
            r(z, "ic");
            break;
        }
        if (ends(z, "ative")) {
            r(z, "");
            break;
        }
        if (ends(z, "alize")) {
            r(z, "al");
            break;
        }
        break;
    case 'i':
        if (ends(z, "iciti"))
            r(z, "ic");
        break;
    case 'l':
        if (ends(z, "ical")) {
            r(z, "ic");
            break;
        }
        if (ends(z, "ful"))
            r(z, "");
        break;
    case 's':
        if (ends(z, "ness"))
            r(z, "");
        break;
    default: break;
    }
}

/* -ant, -ence etc. in context <c>vcvc<v>. */
static void step5(stemmer *z)
{
    if (z->k == z->k0)
        return;
    switch (z->b[z->k - 1]) {
    case 'a':
        if (ends(z, "al"))
            break;
        return;
    case 'c':
        if (ends(z, "ance") || ends(z, "ence"))
            break;
        return;
    case 'e':
        if (ends(z, "er"))
            break;
        return;
    case 'i':
        if (ends(z, "ic"))
            break;
        return;
    case 'l':
        if (ends(z, "able") || ends(z, "ible"))
            break;
        return;
    case 'n':
        if (ends(z, "ant") || ends(z, "ement") || ends(z, "ment") || ends(z, "ent"))
            break;
        return;
    case 'o':
        if (ends(z, "ion") && z->j >= z->k0 && (z->b[z->j] == 's' || z->b[z->j] == 't'))
            break;
        if (ends(z, "ou"))
            break;
        return;
    case 's':
        if (ends(z, "ism"))
            break;
        return;
    case 't':
        if (ends(z, "ate") || ends(z, "iti"))
            break;
        return;
    case 'u':
        if (ends(z, "ous"))
            break;
        return;
    case 'v':
        if (ends(z, "ive"))
            break;
        return;
    case 'z':
        if (ends(z, "ize"))
            break;
        return;
    default: return;
    }
    if (measure(z) > 1)
        z->k = z->j;
}

/* Final -e and -ll. */
static void step6(stemmer *z)
{
    z->j = z->k;
    if (z->b[z->k] == 'e') {
        int a = measure(z);
        if (a > 1 || (a == 1 && !cvc(z, z->k - 1)))
            z->k--;
    }
    if (z->b[z->k] == 'l' && double_c(z, z->k) && measure(z) > 1)
        z->k--;
}

/* Stems b[0..n) in place; returns the new length. */
static int stem_units(uint16_t *b, int n)
{
    stemmer z = {b, n - 1, 0, 0};
    if (z.k > z.k0 + 1) {
        step1(&z);
        step2(&z);
        step3(&z);
        step4(&z);
        step5(&z);
        step6(&z);
    }
    return z.k + 1;
}

void sc__porter_stem(sc__term *t)
{
    if (t->len < 3)
        return;
    uint16_t *u = t->u16;
    size_t n = 0;
    if (t->len > t->u16_cap)
        return; /* the caller sizes u16 for every term; cannot happen */
    for (size_t i = 0; i < t->len;) {
        if (t->buf[i] < 0x80) {
            u[n++] = t->buf[i++];
            continue;
        }
        uint32_t cp = sc__utf8_next(t->buf, t->len, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            u[n++] = (uint16_t)(0xD800 + (cp >> 10));
            u[n++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
        } else {
            u[n++] = (uint16_t)cp;
        }
    }
    int m = stem_units(u, (int)n);
    /* Only ASCII suffixes change: re-encode the units back to UTF-8. */
    size_t o = 0;
    for (int i = 0; i < m; i++) {
        uint32_t cp = u[i];
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < m) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (u[i + 1] - 0xDC00);
            i++;
        }
        o += sc_utf8_put(t->buf + o, cp);
    }
    t->len = o;
}
