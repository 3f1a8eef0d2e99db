/* Token filters: lowercase (Java Character.toLowerCase per code point, via ICU u_tolower),
 * English possessive removal, stop words (an immutable open-addressing set), Lucene's
 * EnglishMinimalStemmer, ASCII folding, and the dispatch to the Porter stemmer (porter.c).
 * Every filter is 1:1 or 1:0 and works in place on the caller's term buffer. */
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>

#include "text/internal.h"

size_t sc__lowercase(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t b = src[i];
        if (b < 0x80) {
            dst[o++] = (uint8_t)(b >= 'A' && b <= 'Z' ? b + 32 : b);
            i++;
            continue;
        }
        uint32_t cp = sc__utf8_next(src, n, &i);
        o += sc__utf8_put(dst + o, (uint32_t)u_tolower((UChar32)cp));
    }
    return o;
}

/* ---- stop words ---------------------------------------------------------------------------- */

struct sc__stopset {
    size_t mask;      /* slots - 1, slots a power of two */
    uint32_t *slots;  /* 0 empty, else 1 + index into words */
    uint8_t **words;  /* length-prefixed: 4-byte length then bytes */
    size_t n_words;
    bool ignore_case;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static bool word_eq(const uint8_t *w, const uint8_t *p, size_t n)
{
    uint32_t len;
    memcpy(&len, w, 4);
    return len == n && memcmp(w + 4, p, n) == 0;
}

static bool stopset_lookup(const sc__stopset *s, const uint8_t *p, size_t n)
{
    for (size_t h = hash_bytes(p, n) & s->mask;; h = (h + 1) & s->mask) {
        uint32_t v = s->slots[h];
        if (v == 0)
            return false;
        if (word_eq(s->words[v - 1], p, n))
            return true;
    }
}

sc_status sc__stopset_new(const char *const *words, size_t n, bool ignore_case, sc__stopset **out)
{
    *out = NULL;
    sc__stopset *s = calloc(1, sizeof(*s));
    if (!s)
        return SC_ENOMEM;
    size_t slots = 16;
    while (slots < 2 * n + 2)
        slots *= 2;
    s->mask = slots - 1;
    s->ignore_case = ignore_case;
    s->slots = calloc(slots, sizeof(uint32_t));
    s->words = calloc(n ? n : 1, sizeof(uint8_t *));
    if (!s->slots || !s->words) {
        sc__stopset_free(s);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        uint8_t *w = malloc(4 + 2 * len + 8);
        if (!w) {
            sc__stopset_free(s);
            return SC_ENOMEM;
        }
        uint32_t stored = (uint32_t)(ignore_case ? sc__lowercase(w + 4, (const uint8_t *)words[i],
                                                                 len)
                                                 : len);
        if (!ignore_case)
            memcpy(w + 4, words[i], len);
        memcpy(w, &stored, 4);
        if (stopset_lookup(s, w + 4, stored)) {
            free(w);
            continue;
        }
        s->words[s->n_words++] = w;
        size_t h = hash_bytes(w + 4, stored) & s->mask;
        while (s->slots[h])
            h = (h + 1) & s->mask;
        s->slots[h] = (uint32_t)s->n_words;
    }
    *out = s;
    return SC_OK;
}

sc_status sc__stopset_english(sc__stopset **out)
{
    static const char *const english[] = {
        "a",    "an",   "and",  "are",   "as",   "at",    "be",    "but",  "by",
        "for",  "if",   "in",   "into",  "is",   "it",    "no",    "not",  "of",
        "on",   "or",   "such", "that",  "the",  "their", "then",  "there", "these",
        "they", "this", "to",   "was",   "will", "with",
    };
    return sc__stopset_new(english, sizeof(english) / sizeof(english[0]), false, out);
}

void sc__stopset_free(sc__stopset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_words; i++)
        free(s->words[i]);
    free(s->words);
    free(s->slots);
    free(s);
}

bool sc__stopset_has(const sc__stopset *s, const uint8_t *term, size_t len)
{
    if (!s->ignore_case)
        return stopset_lookup(s, term, len);
    uint8_t stack[512];
    uint8_t *tmp = len * 2 + 8 <= sizeof(stack) ? stack : malloc(len * 2 + 8);
    if (!tmp)
        return false;
    size_t n = sc__lowercase(tmp, term, len);
    bool r = stopset_lookup(s, tmp, n);
    if (tmp != stack)
        free(tmp);
    return r;
}

/* ---- the simple filters ------------------------------------------------------------------- */

static void possessive(sc__term *t)
{
    size_t n = t->len;
    if (n < 2 || (t->buf[n - 1] != 's' && t->buf[n - 1] != 'S'))
        return;
    if (t->buf[n - 2] == '\'') {
        t->len = n - 2;
    } else if (n >= 4 && t->buf[n - 4] == 0xE2 && t->buf[n - 3] == 0x80 &&
               t->buf[n - 2] == 0x99) { /* U+2019 */
        t->len = n - 4;
    } else if (n >= 4 && t->buf[n - 4] == 0xEF && t->buf[n - 3] == 0xBC &&
               t->buf[n - 2] == 0x87) { /* U+FF07 */
        t->len = n - 4;
    }
}

/* Lucene EnglishMinimalStemmer: plural "s" removal. The tests are on ASCII letters at the end
 * of the term, so bytes give the same answer as UTF-16 units. */
static void minimal_english(sc__term *t)
{
    uint8_t *s = t->buf;
    size_t len = t->len;
    if (len < 3 || s[len - 1] != 's')
        return;
    switch (s[len - 2]) {
    case 'u':
    case 's':
        return;
    case 'e':
        if (len > 3 && s[len - 3] == 'i' && s[len - 4] != 'a' && s[len - 4] != 'e') {
            s[len - 3] = 'y';
            t->len = len - 2;
            return;
        }
        if (s[len - 3] == 'i' || s[len - 3] == 'a' || s[len - 3] == 'o' || s[len - 3] == 'e')
            return;
        break;
    default:
        break;
    }
    t->len = len - 1;
}

/* Letters NFD does not decompose, folded the way Lucene's ASCIIFoldingFilter does. */
static const char *fold_special(uint32_t cp)
{
    switch (cp) {
    case 0xC6: return "AE";
    case 0xD0: return "D";
    case 0xD8: return "O";
    case 0xDE: return "TH";
    case 0xDF: return "ss";
    case 0xE6: return "ae";
    case 0xF0: return "d";
    case 0xF8: return "o";
    case 0xFE: return "th";
    case 0x110: return "D";
    case 0x111: return "d";
    case 0x126: return "H";
    case 0x127: return "h";
    case 0x131: return "i";
    case 0x132: return "IJ";
    case 0x133: return "ij";
    case 0x138: return "q";
    case 0x13F: return "L";
    case 0x140: return "l";
    case 0x141: return "L";
    case 0x142: return "l";
    case 0x149: return "'n";
    case 0x14A: return "N";
    case 0x14B: return "n";
    case 0x152: return "OE";
    case 0x153: return "oe";
    case 0x166: return "T";
    case 0x167: return "t";
    case 0x17F: return "s";
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0x2035: return "'";
    case 0x201C: case 0x201D: case 0x201E: case 0x2033: case 0x2036: case 0xAB: case 0xBB:
        return "\"";
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: return "-";
    case 0xFB00: return "ff";
    case 0xFB01: return "fi";
    case 0xFB02: return "fl";
    case 0xFB03: return "ffi";
    case 0xFB04: return "ffl";
    case 0xFB06: return "st";
    default: return NULL;
    }
}

/* ASCII folding: NFD, drop combining marks, map the letters above. Approximates Lucene's
 * ASCIIFoldingFilter table for Latin scripts; characters with no ASCII form stay unchanged. */
static void ascii_fold(sc__term *t)
{
    if (sc__text_is_ascii(t->buf, t->len))
        return;
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *nfd = unorm2_getNFDInstance(&err);
    if (U_FAILURE(err))
        return;
    uint8_t out[4096];
    size_t o = 0, i = 0;
    while (i < t->len && o + 16 < sizeof(out)) {
        size_t start = i;
        uint32_t cp = sc__utf8_next(t->buf, t->len, &i);
        const char *sp = fold_special(cp);
        if (sp) {
            size_t l = strlen(sp);
            memcpy(out + o, sp, l);
            o += l;
            continue;
        }
        if (cp < 0x80) {
            out[o++] = (uint8_t)cp;
            continue;
        }
        UChar buf[8];
        int32_t n = unorm2_getDecomposition(nfd, (UChar32)cp, buf, 8, &err);
        if (U_FAILURE(err) || n <= 0 || buf[0] >= 0x80) {
            err = U_ZERO_ERROR;
            memcpy(out + o, t->buf + start, i - start);
            o += i - start;
            continue;
        }
        bool marks_only = true;
        for (int32_t k = 1; k < n; k++)
            if (u_getCombiningClass(buf[k]) == 0 && !(buf[k] >= 0x300 && buf[k] <= 0x36F))
                marks_only = false;
        if (!marks_only) {
            memcpy(out + o, t->buf + start, i - start);
            o += i - start;
            continue;
        }
        out[o++] = (uint8_t)buf[0];
    }
    if (i < t->len || o > t->cap)
        return; /* too long to fold in the fixed buffer: leave unchanged */
    memcpy(t->buf, out, o);
    t->len = o;
}

bool sc__filter_apply(const sc__filter *f, sc__term *t)
{
    switch (f->kind) {
    case SC__F_LOWERCASE: {
        if (sc__text_is_ascii(t->buf, t->len)) {
            for (size_t i = 0; i < t->len; i++)
                if (t->buf[i] >= 'A' && t->buf[i] <= 'Z')
                    t->buf[i] += 32;
            return true;
        }
        /* Lowercase into the upper half of the buffer, then move down. */
        size_t half = t->cap / 2;
        if (t->len > half || t->len * 3 / 2 + 4 > t->cap - half)
            return true;
        memcpy(t->buf + half, t->buf, t->len);
        t->len = sc__lowercase(t->buf, t->buf + half, t->len);
        return true;
    }
    case SC__F_POSSESSIVE:
        possessive(t);
        return true;
    case SC__F_STOP:
        return !sc__stopset_has(f->stop, t->buf, t->len);
    case SC__F_PORTER:
        sc__porter_stem(t);
        return true;
    case SC__F_MINIMAL_EN:
        minimal_english(t);
        return true;
    case SC__F_ASCIIFOLD:
        ascii_fold(t);
        return true;
    }
    return true;
}
