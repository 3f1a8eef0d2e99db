/* Token filters: lowercase (Java Character.toLowerCase per code point, via ICU u_tolower),
 * English possessive removal, stop words (an immutable open-addressing set), Lucene's
 * EnglishMinimalStemmer, ASCII folding, and the dispatch to the Porter stemmer (porter.c).
 * Every filter is 1:1 or 1:0 and works in place on the caller's term buffer. */
#include <stdlib.h>
#include <string.h>
#include <libstemmer.h>
#include <stdint.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

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
        o += sc_utf8_put(dst + o, (uint32_t)u_tolower((UChar32)cp));
    }
    return o;
}

/* ---- stop words ---------------------------------------------------------------------------- */

struct sc__stopset {
    size_t mask;     /* slots - 1, slots a power of two */
    uint32_t *slots; /* 0 empty, else 1 + index into words */
    uint8_t **words; /* length-prefixed: 4-byte length then bytes */
    size_t n_words;
    size_t max_len;         /* longest word in bytes: longer terms are rejected at once */
    uint64_t first_byte[4]; /* bitmap of the words' first bytes */
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
    sc__stopset *s = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*s));
    if (!s)
        return SC_ENOMEM;
    size_t slots = 16;
    while (slots < 2 * n + 2)
        slots *= 2;
    s->mask = slots - 1;
    s->ignore_case = ignore_case;
    s->slots = sc_alloc_calloc(&sc__text_pool, slots, sizeof(uint32_t));
    s->words = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(uint8_t *));
    if (!s->slots || !s->words) {
        sc__stopset_free(s);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        uint8_t *w = sc_alloc_malloc(&sc__text_pool, 4 + 2 * len + 8);
        if (!w) {
            sc__stopset_free(s);
            return SC_ENOMEM;
        }
        uint32_t stored =
            (uint32_t)(ignore_case ? sc__lowercase(w + 4, (const uint8_t *)words[i], len) : len);
        if (!ignore_case)
            memcpy(w + 4, words[i], len);
        memcpy(w, &stored, 4);
        if (stopset_lookup(s, w + 4, stored)) {
            sc_alloc_free(&sc__text_pool, w);
            continue;
        }
        s->words[s->n_words++] = w;
        if (stored > s->max_len)
            s->max_len = stored;
        if (stored > 0)
            s->first_byte[w[4] >> 6] |= 1ull << (w[4] & 63);
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
        "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
        "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
        "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with",
    };
    return sc__stopset_new(english, sizeof(english) / sizeof(english[0]), false, out);
}

void sc__stopset_free(sc__stopset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_words; i++)
        sc_alloc_free(&sc__text_pool, s->words[i]);
    sc_alloc_free(&sc__text_pool, s->words);
    sc_alloc_free(&sc__text_pool, s->slots);
    sc_alloc_free(&sc__text_pool, s);
}

bool sc__stopset_has(const sc__stopset *s, const uint8_t *term, size_t len)
{
    if (!s->ignore_case) {
        if (len > s->max_len || (len > 0 && !(s->first_byte[term[0] >> 6] >> (term[0] & 63) & 1)))
            return false;
        return stopset_lookup(s, term, len);
    }
    uint8_t stack[512];
    uint8_t *tmp =
        len * 2 + 8 <= sizeof(stack) ? stack : sc_alloc_malloc(&sc__text_pool, len * 2 + 8);
    if (!tmp)
        return false;
    size_t n = sc__lowercase(tmp, term, len);
    bool r = stopset_lookup(s, tmp, n);
    if (tmp != stack)
        sc_alloc_free(&sc__text_pool, tmp);
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
    case 's': return;
    case 'e':
        if (len > 3 && s[len - 3] == 'i' && s[len - 4] != 'a' && s[len - 4] != 'e') {
            s[len - 3] = 'y';
            t->len = len - 2;
            return;
        }
        if (s[len - 3] == 'i' || s[len - 3] == 'a' || s[len - 3] == 'o' || s[len - 3] == 'e')
            return;
        break;
    default: break;
    }
    t->len = len - 1;
}

/* Characters whose compatibility decomposition does not end in ASCII, folded the way Lucene's
 * ASCIIFoldingFilter does (checked against Lucene over Latin-1, Latin Extended-A/B, Latin
 * Extended Additional, General Punctuation and the full-width forms). Sorted by code point. */
static const struct {
    uint32_t cp;
    const char *ascii;
} fold_table[] = {
    {0x00AB, "\""}, {0x00BB, "\""}, {0x00C6, "AE"}, {0x00D0, "D"},  {0x00D8, "O"},  {0x00DE, "TH"},
    {0x00DF, "ss"}, {0x00E6, "ae"}, {0x00F0, "d"},  {0x00F8, "o"},  {0x00FE, "th"}, {0x0110, "D"},
    {0x0111, "d"},  {0x0126, "H"},  {0x0127, "h"},  {0x0131, "i"},  {0x0138, "q"},  {0x013F, "L"},
    {0x0140, "l"},  {0x0141, "L"},  {0x0142, "l"},  {0x0149, "n"},  {0x014A, "N"},  {0x014B, "n"},
    {0x0152, "OE"}, {0x0153, "oe"}, {0x0166, "T"},  {0x0167, "t"},  {0x017F, "s"},  {0x0180, "b"},
    {0x0181, "B"},  {0x0182, "B"},  {0x0183, "b"},  {0x0186, "O"},  {0x0187, "C"},  {0x0188, "c"},
    {0x0189, "D"},  {0x018A, "D"},  {0x018B, "D"},  {0x018C, "d"},  {0x018E, "E"},  {0x018F, "A"},
    {0x0190, "E"},  {0x0191, "F"},  {0x0192, "f"},  {0x0193, "G"},  {0x0195, "hv"}, {0x0196, "I"},
    {0x0197, "I"},  {0x0198, "K"},  {0x0199, "k"},  {0x019A, "l"},  {0x019C, "M"},  {0x019D, "N"},
    {0x019E, "n"},  {0x019F, "O"},  {0x01A4, "P"},  {0x01A5, "p"},  {0x01AB, "t"},  {0x01AC, "T"},
    {0x01AD, "t"},  {0x01AE, "T"},  {0x01B2, "V"},  {0x01B3, "Y"},  {0x01B4, "y"},  {0x01B5, "Z"},
    {0x01B6, "z"},  {0x01BF, "w"},  {0x01DD, "e"},  {0x01E4, "G"},  {0x01E5, "G"},  {0x01E7, "G"},
    {0x01F6, "HV"}, {0x01F7, "W"},  {0x021C, "Z"},  {0x021D, "z"},  {0x0220, "N"},  {0x0221, "d"},
    {0x0222, "OU"}, {0x0223, "ou"}, {0x0224, "Z"},  {0x0225, "z"},  {0x0234, "l"},  {0x0235, "n"},
    {0x0236, "t"},  {0x0237, "j"},  {0x0238, "db"}, {0x0239, "qp"}, {0x023A, "A"},  {0x023B, "C"},
    {0x023C, "c"},  {0x023D, "L"},  {0x023E, "T"},  {0x023F, "s"},  {0x0240, "z"},  {0x0243, "B"},
    {0x0244, "U"},  {0x0245, "V"},  {0x0246, "E"},  {0x0247, "e"},  {0x0248, "J"},  {0x0249, "j"},
    {0x024A, "Q"},  {0x024B, "q"},  {0x024C, "R"},  {0x024D, "r"},  {0x024E, "Y"},  {0x024F, "y"},
    {0x1E9A, "a"},  {0x1E9B, "f"},  {0x1E9C, "s"},  {0x1E9D, "s"},  {0x1E9E, "SS"}, {0x1EFA, "LL"},
    {0x1EFB, "ll"}, {0x1EFC, "V"},  {0x1EFE, "Y"},  {0x1EFF, "y"},  {0x2010, "-"},  {0x2011, "-"},
    {0x2012, "-"},  {0x2013, "-"},  {0x2014, "-"},  {0x2018, "'"},  {0x2019, "'"},  {0x201A, "'"},
    {0x201B, "'"},  {0x201C, "\""}, {0x201D, "\""}, {0x201E, "\""}, {0x2032, "'"},  {0x2033, "\""},
    {0x2035, "'"},  {0x2036, "\""}, {0x2038, "^"},  {0x2039, "'"},  {0x203A, "'"},  {0x2044, "/"},
    {0x2045, "["},  {0x2046, "]"},  {0x204E, "*"},  {0x204F, ";"},  {0x2052, "%"},  {0x2053, "~"},
    {0x207B, "-"},  {0x208B, "-"},  {0x2094, "a"}};

static const char *fold_special(uint32_t cp)
{
    size_t lo = 0, hi = sizeof(fold_table) / sizeof(fold_table[0]);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fold_table[mid].cp == cp)
            return fold_table[mid].ascii;
        if (fold_table[mid].cp < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Folds one code point into out (ASCII); returns the bytes written or 0 when it has no ASCII
 * form: the table above, else the NFKD decomposition without its combining marks when every
 * remaining character is ASCII or in the table. */
static size_t fold_cp(uint32_t cp, uint8_t *out, size_t room)
{
    const char *sp = fold_special(cp);
    if (sp) {
        size_t l = strlen(sp);
        if (l > room)
            return 0;
        memcpy(out, sp, l);
        return l;
    }
    /* Compatibility decompositions only where Lucene folds them: full-width ASCII, the Latin
     * ligatures, super/subscripts, the DZ/LJ/NJ/IJ digraphs and doubled punctuation. */
    bool compat = (cp >= 0xFF01 && cp <= 0xFF5E && cp != 0xFF40 && cp != 0xFF5C) ||
                  (cp >= 0xFB00 && cp <= 0xFB06 && cp != 0xFB05) || cp == 0xB2 || cp == 0xB3 ||
                  cp == 0xB9 || (cp >= 0x2070 && cp <= 0x2094) || (cp >= 0x1C4 && cp <= 0x1CC) ||
                  (cp >= 0x1F1 && cp <= 0x1F3) || cp == 0x132 || cp == 0x133 || cp == 0x203C ||
                  (cp >= 0x2047 && cp <= 0x2049);
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *norm = compat ? unorm2_getNFKDInstance(&err) : unorm2_getNFDInstance(&err);
    if (U_FAILURE(err))
        return 0;
    UChar buf[32];
    int32_t n = unorm2_getDecomposition(norm, (UChar32)cp, buf, 32, &err);
    if (U_FAILURE(err) || n <= 0)
        return 0;
    size_t o = 0;
    for (int32_t k = 0; k < n; k++) {
        UChar32 c = buf[k];
        if (U16_IS_LEAD(buf[k]) && k + 1 < n) {
            c = U16_GET_SUPPLEMENTARY(buf[k], buf[k + 1]);
            k++;
        }
        if (u_charType(c) == U_NON_SPACING_MARK)
            continue;
        if (c < 0x80) {
            if (o + 1 > room)
                return 0;
            out[o++] = (uint8_t)c;
            continue;
        }
        const char *s2 = fold_special((uint32_t)c);
        size_t l = s2 ? strlen(s2) : 0;
        if (!s2 || o + l > room)
            return 0;
        memcpy(out + o, s2, l);
        o += l;
    }
    return o;
}

/* ASCII folding: characters with an ASCII form are replaced by it; others stay unchanged.
 * Works in the term buffer: the term is moved to the upper half and folded down (a folded
 * character never takes more bytes than its UTF-8 form). */
static void ascii_fold(sc__term *t)
{
    if (sc__text_is_ascii(t->buf, t->len))
        return;
    size_t half = t->cap / 2;
    if (t->len > half)
        return; /* cannot happen: the caller sizes cap >= 2 * len */
    uint8_t *src = t->buf + half;
    memmove(src, t->buf, t->len);
    size_t o = 0, i = 0, n = t->len;
    while (i < n) {
        size_t start = i;
        uint32_t cp = sc__utf8_next(src, n, &i);
        if (cp < 0x80) {
            t->buf[o++] = (uint8_t)cp;
            continue;
        }
        uint8_t tmp[16];
        size_t w = fold_cp(cp, tmp, sizeof(tmp));
        if (w > 0 && w <= i - start) {
            memcpy(t->buf + o, tmp, w);
            o += w;
        } else {
            memmove(t->buf + o, src + start, i - start);
            o += i - start;
        }
    }
    t->len = o;
}

/* Snowball English (Porter2): libstemmer's "english" gives the same stems as Lucene's
 * SnowballFilter(EnglishStemmer) (oracle-checked on the fixture's word list). */
static void snowball(sc__term *t, struct sb_stemmer *sb)
{
    if (!sb || t->len > INT32_MAX)
        return;
    const sb_symbol *o = sb_stemmer_stem(sb, t->buf, (int)t->len);
    if (!o)
        return; /* out of memory inside libstemmer: leave the term unstemmed */
    int n = sb_stemmer_length(sb);
    if (n < 0 || (size_t)n > t->cap)
        return;
    memmove(t->buf, o, (size_t)n);
    t->len = (size_t)n;
}

/* Length of a valid UTF-8 term in UTF-16 units (what Lucene's term length counts). */
static size_t utf16_len(const uint8_t *s, size_t n)
{
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];
        if ((b & 0xC0) != 0x80)
            u += b >= 0xF0 ? 2 : 1;
    }
    return u;
}

/* Java Character.isWhitespace on a code point (ICU's u_isWhitespace is defined as Java's). */
static bool java_space(uint32_t cp)
{
    return u_isWhitespace((UChar32)cp) != 0;
}

/* Lucene TrimFilter: strips leading and trailing Character.isWhitespace. */
static void trim(sc__term *t)
{
    size_t start = 0, end = t->len;
    while (start < end) {
        size_t i = start;
        uint32_t cp = sc__utf8_next(t->buf, end, &i);
        if (!java_space(cp))
            break;
        start = i;
    }
    while (end > start) {
        size_t j = end - 1;
        while (j > start && (t->buf[j] & 0xC0) == 0x80)
            j--;
        size_t k = j;
        uint32_t cp = sc__utf8_next(t->buf, end, &k);
        if (!java_space(cp))
            break;
        end = j;
    }
    memmove(t->buf, t->buf + start, end - start);
    t->len = end - start;
}

/* Lucene TruncateTokenFilter: at most n UTF-16 units. A surrogate pair that would be cut in
 * half is dropped whole (Java would leave a lone surrogate). */
static void truncate_u16(sc__term *t, uint32_t n)
{
    size_t u = 0, i = 0;
    while (i < t->len) {
        uint8_t b = t->buf[i];
        size_t w = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        size_t units = w == 4 ? 2 : 1;
        if (u + units > n)
            break;
        u += units;
        i += w;
    }
    if (i < t->len)
        t->len = i;
}

/* The filters the built-in analyzers never use, kept out of sc__filter_apply so that its
 * hot path stays small enough to inline well (measured: english -8% when they were inline). */
__attribute__((noinline)) static bool apply_ext(const sc__filter *f, sc__term *t)
{
    switch (f->kind) {
    case SC__F_SNOWBALL: snowball(t, t->stemmers ? t->stemmers[f->slot] : NULL); return true;
    case SC__F_LENGTH: {
        size_t n = utf16_len(t->buf, t->len);
        return n >= f->a && n <= f->b;
    }
    case SC__F_TRIM: trim(t); return true;
    case SC__F_TRUNCATE: truncate_u16(t, f->a); return true;
    case SC__F_KEYWORD_MARKER:
        if (sc__stopset_has(f->stop, t->buf, t->len))
            t->keyword = true;
        return true;
    case SC__F_LIGHT_STEM: sc__light_stem(f->a, t); return true;
    case SC__F_GERMAN_NORM: sc__german_normalize(t); return true;
    case SC__F_LANG_NORM:
        if (!(f->a == SC__N_HINDI && t->keyword))
            sc__lang_normalize(f->a, t);
        return true;
    case SC__F_ELISION: sc__elision(f->stop, t); return true;
    case SC__F_STEM_OVERRIDE: sc__stem_override(f, t); return true;
    case SC__F_UNIQUE:
    case SC__F_NGRAM:
    case SC__F_EDGE_NGRAM:
    case SC__F_SHINGLE:
    case SC__F_SYNONYM: return true; /* stream filters: run by stream.c, never here */
    default: return true;
    }
}

static inline __attribute__((always_inline)) bool apply(const sc__filter *f, sc__term *t)
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
    case SC__F_POSSESSIVE: possessive(t); return true;
    case SC__F_STOP: return !sc__stopset_has(f->stop, t->buf, t->len);
    case SC__F_PORTER: sc__porter_stem(t); return true;
    case SC__F_MINIMAL_EN: minimal_english(t); return true;
    case SC__F_ASCIIFOLD: ascii_fold(t); return true;
    case SC__F_SNOWBALL_EN: snowball(t, t->snowball); return true;
    default: return apply_ext(f, t);
    }
    return true;
}

bool sc__filter_apply(const sc__filter *f, sc__term *t)
{
    return apply(f, t);
}

/* The fast path's loop lives here, next to the filters, so that the switch is inlined into it
 * without relying on link-time optimisation (measured: english -5% when the switch became an
 * out-of-line call per filter per token). */
bool sc__filters_run(const sc__filter *fs, size_t n, sc__term *t)
{
    for (size_t i = 0; i < n; i++)
        if (!apply(&fs[i], t))
            return false;
    return true;
}
