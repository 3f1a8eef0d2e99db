/* Lucene's light stemmers and the normalization filters its language analyzers use, written
 * from the published algorithms (J. Savoy's light stemmers for European languages, CLEF):
 *   german_normalization  ä/ö/ü -> a/o/u, ae/oe/ue -> a/o/u (not after a vowel), ß -> ss
 *   light_german          GermanLightStemFilter     light_french   FrenchLightStemFilter
 *   light_spanish         SpanishLightStemFilter    light_italian  ItalianLightStemFilter
 *   light_portuguese      PortugueseLightStemFilter
 *   stemmer_override      StemmerOverrideFilter: listed terms get a fixed stem
 *   elision               ElisionFilter: drops "l'", "qu'"... when the part before the first
 *                         apostrophe (' or U+2019) is one of the articles
 * All work on the term's code points, as Lucene works on its UTF-16 units (equal for these
 * alphabets). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>

#include "text/internal.h"

typedef struct cps {
    uint32_t *c;
    int32_t len;
    uint32_t stack[64];
    uint32_t *heap;
} cps;

static bool cps_load(cps *w, const sc__term *t)
{
    w->heap = NULL;
    w->c = w->stack;
    if (t->len > 64) {
        w->heap = sc_alloc_malloc(&sc__text_pool, t->len * sizeof(uint32_t));
        if (!w->heap)
            return false;
        w->c = w->heap;
    }
    size_t i = 0;
    w->len = 0;
    while (i < t->len)
        w->c[w->len++] = sc__utf8_next(t->buf, t->len, &i);
    return true;
}

/* Writes the first len code points back (never longer than the input in bytes: every rewrite
 * here maps to a character of at most the same UTF-8 width, ß -> ss included). */
static void cps_store(cps *w, sc__term *t, int32_t len)
{
    size_t o = 0;
    for (int32_t i = 0; i < len; i++)
        o += sc_utf8_put(t->buf + o, w->c[i]);
    t->len = o;
    sc_alloc_free(&sc__text_pool, w->heap);
}

static bool ends(const uint32_t *s, int32_t len, const char *suffix)
{
    /* suffix is UTF-8; compare code point by code point from the end */
    size_t n = strlen(suffix), i = 0;
    uint32_t buf[16];
    int32_t k = 0;
    while (i < n && k < 16)
        buf[k++] = sc__utf8_next((const uint8_t *)suffix, n, &i);
    if (k > len)
        return false;
    for (int32_t j = 0; j < k; j++)
        if (s[len - k + j] != buf[j])
            return false;
    return true;
}

static int32_t delete_at(uint32_t *s, int32_t pos, int32_t len)
{
    if (pos < len - 1)
        memmove(s + pos, s + pos + 1, (size_t)(len - pos - 1) * sizeof(uint32_t));
    return len - 1;
}

/* ---- German ------------------------------------------------------------------------------ */

static bool st_ending(uint32_t c)
{
    switch (c) {
    case 'b':
    case 'd':
    case 'f':
    case 'g':
    case 'h':
    case 'k':
    case 'l':
    case 'm':
    case 'n':
    case 't': return true;
    default: return false;
    }
}

static int32_t german_light(uint32_t *s, int32_t len)
{
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 0xE4:
        case 0xE0:
        case 0xE1:
        case 0xE2: s[i] = 'a'; break;
        case 0xF6:
        case 0xF2:
        case 0xF3:
        case 0xF4: s[i] = 'o'; break;
        case 0xEF:
        case 0xEC:
        case 0xED:
        case 0xEE: s[i] = 'i'; break;
        case 0xFC:
        case 0xF9:
        case 0xFA:
        case 0xFB: s[i] = 'u'; break;
        default: break;
        }
    }
    /* step 1 */
    if (len > 5 && ends(s, len, "ern"))
        len -= 3;
    else if (len > 4 &&
             (ends(s, len, "em") || ends(s, len, "en") || ends(s, len, "er") || ends(s, len, "es")))
        len -= 2;
    else if (len > 3 && s[len - 1] == 'e')
        len -= 1;
    else if (len > 3 && s[len - 1] == 's' && st_ending(s[len - 2]))
        len -= 1;
    /* step 2 */
    if (len > 5 && ends(s, len, "est"))
        len -= 3;
    else if (len > 4 && (ends(s, len, "er") || ends(s, len, "en")))
        len -= 2;
    else if (len > 4 && ends(s, len, "st") && st_ending(s[len - 3]))
        len -= 2;
    return len;
}

/* GermanNormalizationFilter; may grow the term by one code point per ß (room: len + n_ß). */
static int32_t german_norm(uint32_t *s, int32_t len, int32_t cap)
{
    enum {
        N,
        V,
        U
    } state = N;
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 'a':
        case 'o': state = U; break;
        case 'u': state = state == N ? U : V; break;
        case 'e':
            if (state == U)
                len = delete_at(s, i--, len);
            state = V;
            break;
        case 'i':
        case 'q':
        case 'y': state = V; break;
        case 0xE4:
            s[i] = 'a';
            state = V;
            break;
        case 0xF6:
            s[i] = 'o';
            state = V;
            break;
        case 0xFC:
            s[i] = 'u';
            state = V;
            break;
        case 0xDF:
            if (len + 1 > cap)
                break;
            memmove(s + i + 2, s + i + 1, (size_t)(len - i - 1) * sizeof(uint32_t));
            s[i++] = 's';
            s[i] = 's';
            len++;
            state = N;
            break;
        default: state = N; break;
        }
    }
    return len;
}

/* ---- French ------------------------------------------------------------------------------ */

static int32_t french_norm(uint32_t *s, int32_t len)
{
    if (len > 4) {
        for (int32_t i = 0; i < len; i++) {
            switch (s[i]) {
            case 0xE0:
            case 0xE1:
            case 0xE2: s[i] = 'a'; break;
            case 0xF4: s[i] = 'o'; break;
            case 0xE8:
            case 0xE9:
            case 0xEA: s[i] = 'e'; break;
            case 0xF9:
            case 0xFB: s[i] = 'u'; break;
            case 0xEE: s[i] = 'i'; break;
            case 0xE7: s[i] = 'c'; break;
            default: break;
            }
        }
        uint32_t ch = s[0];
        for (int32_t i = 1; i < len; i++) {
            if (s[i] == ch && u_isalpha((UChar32)ch))
                len = delete_at(s, i--, len);
            else
                ch = s[i];
        }
    }
    if (len > 4 && ends(s, len, "ie"))
        len -= 2;
    if (len > 4) {
        if (s[len - 1] == 'r')
            len--;
        if (s[len - 1] == 'e')
            len--;
        if (s[len - 1] == 'e')
            len--;
        if (s[len - 1] == s[len - 2] && u_isalpha((UChar32)s[len - 1]))
            len--;
    }
    return len;
}

/* Savoy's French suffix rules in order: a word longer than `min` that ends in `suffix` gets
 * `repl` instead; then, for the two rules that have one, an inner rewrite of what is left
 * (`then_*`). A rule not marked `more` ends the chain. */
typedef struct fr_rule {
    int32_t min;
    const char *suffix, *repl; /* UTF-8 / ASCII */
    bool more;
    int32_t then_min;
    const char *then_suffix, *then_repl;
} fr_rule;

/* one rule a line */
/* clang-format off */
static const fr_rule fr_rules[] = {
    {9, "issement", "ir", false, 0, NULL, NULL},
    {8, "issant", "ir", false, 0, NULL, NULL},
    {6, "ement", "e", false, 3, "ive", "if"},
    {11, "ficatrice", "fier", false, 0, NULL, NULL},
    {10, "ficateur", "fier", false, 0, NULL, NULL},
    {9, "catrice", "quer", false, 0, NULL, NULL},
    {8, "cateur", "quer", false, 0, NULL, NULL},
    {8, "atrice", "er", false, 0, NULL, NULL},
    {7, "ateur", "er", false, 0, NULL, NULL},
    {6, "trice", "teur", true, 0, NULL, NULL},
    {5, "ième", "", false, 0, NULL, NULL},
    {7, "teuse", "ter", false, 0, NULL, NULL},
    {6, "teur", "ter", false, 0, NULL, NULL},
    {5, "euse", "eu", false, 0, NULL, NULL},
    {8, "ère", "er", false, 0, NULL, NULL},
    {7, "ive", "if", false, 0, NULL, NULL},
    {4, "folle", "fou", false, 0, NULL, NULL},
    {4, "molle", "mou", false, 0, NULL, NULL},
    {9, "nnelle", "n", false, 0, NULL, NULL},
    {9, "nnel", "n", false, 0, NULL, NULL},
    {4, "ète", "et", true, 0, NULL, NULL},
    {8, "ique", "", true, 0, NULL, NULL},
    {8, "esse", "e", false, 0, NULL, NULL},
    {7, "inage", "in", false, 0, NULL, NULL},
    {9, "isation", "", false, 5, "ual", "uel"},
    {9, "isateur", "", false, 0, NULL, NULL},
    {8, "ation", "", false, 0, NULL, NULL},
    {8, "ition", "", false, 0, NULL, NULL},
};
/* clang-format on */

/* Replaces the suffix (UTF-8, which s ends in) by repl (ASCII); the new length. */
static int32_t replace_tail(uint32_t *s, int32_t len, const char *suffix, const char *repl)
{
    for (const char *c = suffix; *c; c++)
        len -= ((uint8_t)*c & 0xC0) != 0x80; /* one per code point */
    for (const char *c = repl; *c; c++)
        s[len++] = (uint8_t)*c;
    return len;
}

static int32_t french_light(uint32_t *s, int32_t len)
{
    if (len > 5 && s[len - 1] == 'x') {
        if (s[len - 3] == 'a' && s[len - 2] == 'u' && s[len - 4] != 'e')
            s[len - 2] = 'l';
        len--;
    }
    if (len > 3 && s[len - 1] == 'x')
        len--;
    if (len > 3 && s[len - 1] == 's')
        len--;
    for (const fr_rule *r = fr_rules; r < fr_rules + sizeof fr_rules / sizeof *fr_rules; r++) {
        if (len <= r->min || !ends(s, len, r->suffix))
            continue;
        len = replace_tail(s, len, r->suffix, r->repl);
        if (r->then_suffix && len > r->then_min && ends(s, len, r->then_suffix))
            len = replace_tail(s, len, r->then_suffix, r->then_repl);
        if (!r->more)
            break;
    }
    return french_norm(s, len);
}

/* ---- Spanish, Italian ------------------------------------------------------------------- */

/* Accented vowels to plain ones (the sets Savoy's Spanish and Italian stemmers fold). */
static void fold_vowels(uint32_t *s, int32_t len)
{
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 0xE0:
        case 0xE1:
        case 0xE2:
        case 0xE4: s[i] = 'a'; break;
        case 0xF2:
        case 0xF3:
        case 0xF4:
        case 0xF6: s[i] = 'o'; break;
        case 0xE8:
        case 0xE9:
        case 0xEA:
        case 0xEB: s[i] = 'e'; break;
        case 0xF9:
        case 0xFA:
        case 0xFB:
        case 0xFC: s[i] = 'u'; break;
        case 0xEC:
        case 0xED:
        case 0xEE:
        case 0xEF: s[i] = 'i'; break;
        default: break;
        }
    }
}

static int32_t spanish_light(uint32_t *s, int32_t len)
{
    if (len < 5)
        return len;
    fold_vowels(s, len);
    switch (s[len - 1]) {
    case 'o':
    case 'a':
    case 'e': return len - 1;
    case 's':
        if (s[len - 2] == 'e' && s[len - 3] == 's' && s[len - 4] == 'e')
            return len - 2;
        if (s[len - 2] == 'e' && s[len - 3] == 'c') {
            s[len - 3] = 'z';
            return len - 2;
        }
        if (s[len - 2] == 'o' || s[len - 2] == 'a' || s[len - 2] == 'e')
            return len - 2;
        return len;
    default: return len;
    }
}

static int32_t italian_light(uint32_t *s, int32_t len)
{
    if (len < 6)
        return len;
    fold_vowels(s, len);
    switch (s[len - 1]) {
    case 'e': return s[len - 2] == 'i' || s[len - 2] == 'h' ? len - 2 : len - 1;
    case 'i': return s[len - 2] == 'h' || s[len - 2] == 'i' ? len - 2 : len - 1;
    case 'a': return s[len - 2] == 'i' ? len - 2 : len - 1;
    case 'o': return s[len - 2] == 'i' ? len - 2 : len - 1;
    default: return len;
    }
}

/* ---- Portuguese -------------------------------------------------------------------------- */

static int32_t pt_remove_suffix(uint32_t *s, int32_t len)
{
    if (len > 4 && ends(s, len, "es")) {
        switch (s[len - 3]) {
        case 'r':
        case 's':
        case 'l':
        case 'z': return len - 2;
        default: break;
        }
    }
    if (len > 3 && ends(s, len, "ns")) {
        s[len - 2] = 'm';
        return len - 1;
    }
    if (len > 4 && (ends(s, len, "eis") || ends(s, len, "éis"))) {
        s[len - 3] = 'e';
        s[len - 2] = 'l';
        return len - 1;
    }
    if (len > 4 && ends(s, len, "ais")) {
        s[len - 2] = 'l';
        return len - 1;
    }
    if (len > 4 && ends(s, len, "óis")) {
        s[len - 3] = 'o';
        s[len - 2] = 'l';
        return len - 1;
    }
    if (len > 4 && ends(s, len, "is")) {
        s[len - 1] = 'l';
        return len;
    }
    if (len > 3 && (ends(s, len, "ões") || ends(s, len, "ães"))) {
        len--;
        s[len - 2] = 0xE3;
        s[len - 1] = 'o';
        return len;
    }
    if (len > 6 && ends(s, len, "mente"))
        return len - 5;
    if (len > 3 && s[len - 1] == 's')
        return len - 1;
    return len;
}

static int32_t pt_norm_feminine(uint32_t *s, int32_t len)
{
    if (len > 7 && (ends(s, len, "inha") || ends(s, len, "iaca") || ends(s, len, "eira"))) {
        s[len - 1] = 'o';
        return len;
    }
    if (len > 6) {
        if (ends(s, len, "osa") || ends(s, len, "ica") || ends(s, len, "ida") ||
            ends(s, len, "ada") || ends(s, len, "iva") || ends(s, len, "ama")) {
            s[len - 1] = 'o';
            return len;
        }
        if (ends(s, len, "ona")) {
            s[len - 3] = 0xE3;
            s[len - 2] = 'o';
            return len - 1;
        }
        if (ends(s, len, "ora"))
            return len - 1;
        if (ends(s, len, "esa")) {
            s[len - 3] = 0xEA;
            return len - 1;
        }
        if (ends(s, len, "na")) {
            s[len - 1] = 'o';
            return len;
        }
    }
    return len;
}

static int32_t portuguese_light(uint32_t *s, int32_t len)
{
    if (len < 4)
        return len;
    len = pt_remove_suffix(s, len);
    if (len > 3 && s[len - 1] == 'a')
        len = pt_norm_feminine(s, len);
    if (len > 4) {
        switch (s[len - 1]) {
        case 'e':
        case 'a':
        case 'o': len--; break;
        default: break;
        }
    }
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 0xE0:
        case 0xE1:
        case 0xE2:
        case 0xE4:
        case 0xE3: s[i] = 'a'; break;
        case 0xF2:
        case 0xF3:
        case 0xF4:
        case 0xF6:
        case 0xF5: s[i] = 'o'; break;
        case 0xE8:
        case 0xE9:
        case 0xEA:
        case 0xEB: s[i] = 'e'; break;
        case 0xF9:
        case 0xFA:
        case 0xFB:
        case 0xFC: s[i] = 'u'; break;
        case 0xEC:
        case 0xED:
        case 0xEE:
        case 0xEF: s[i] = 'i'; break;
        case 0xE7: s[i] = 'c'; break;
        default: break;
        }
    }
    return len;
}

/* ---- entry points ------------------------------------------------------------------------- */

void sc__light_stem(uint32_t lang, sc__term *t)
{
    cps w;
    if (!cps_load(&w, t))
        return;
    int32_t len = w.len;
    switch (lang) {
    case SC__LS_GERMAN: len = german_light(w.c, len); break;
    case SC__LS_FRENCH: len = french_light(w.c, len); break;
    case SC__LS_SPANISH: len = spanish_light(w.c, len); break;
    case SC__LS_ITALIAN: len = italian_light(w.c, len); break;
    case SC__LS_PORTUGUESE: len = portuguese_light(w.c, len); break;
    default: len = sc__lang_stem(lang, w.c, len); break;
    }
    cps_store(&w, t, len);
}

void sc__german_normalize(sc__term *t)
{
    /* ß (2 bytes) -> ss (2 bytes): the code point count grows, the byte count does not */
    size_t n_sz = 0;
    for (size_t i = 0; i + 1 < t->len; i++)
        n_sz += t->buf[i] == 0xC3 && t->buf[i + 1] == 0x9F;
    uint32_t stack[96];
    uint32_t *c = stack, *heap = NULL;
    if (t->len + n_sz > 96) {
        heap = sc_alloc_malloc(&sc__text_pool, (t->len + n_sz) * sizeof(uint32_t));
        if (!heap)
            return;
        c = heap;
    }
    int32_t len = 0;
    size_t i = 0;
    while (i < t->len)
        c[len++] = sc__utf8_next(t->buf, t->len, &i);
    len = german_norm(c, len, len + (int32_t)n_sz);
    size_t o = 0;
    for (int32_t k = 0; k < len; k++)
        o += sc_utf8_put(t->buf + o, c[k]);
    t->len = o;
    sc_alloc_free(&sc__text_pool, heap);
}

void sc__elision(const sc__stopset *articles, sc__term *t)
{
    for (size_t i = 0; i < t->len; i++) {
        size_t w = 0;
        if (t->buf[i] == '\'')
            w = 1;
        else if (i + 2 < t->len && t->buf[i] == 0xE2 && t->buf[i + 1] == 0x80 &&
                 t->buf[i + 2] == 0x99)
            w = 3;
        if (!w)
            continue;
        if (sc__stopset_has(articles, t->buf, i)) {
            memmove(t->buf, t->buf + i + w, t->len - i - w);
            t->len -= i + w;
        }
        return;
    }
}

/* ---- stemmer_override ---------------------------------------------------------------------- */

static int pair_cmp(const void *a, const void *b)
{
    return strcmp(((char *const *)a)[0], ((char *const *)b)[0]);
}

static char *dup_trim(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = sc_alloc_malloc(&sc__text_pool, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

sc_status sc__stem_override_init(sc__filter *f, const char *const *rules, size_t n,
                                 const char *path, char *err, size_t err_size)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        cap++;
        for (const char *p = rules[i]; *p; p++)
            cap += *p == ',';
    }
    f->ovr = sc_alloc_calloc(&sc__text_pool, 2 * (cap ? cap : 1), sizeof(char *));
    if (!f->ovr)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *arrow = strstr(rules[i], "=>");
        char *val = arrow ? dup_trim(arrow + 2, strlen(arrow + 2)) : NULL;
        if (!arrow || (val && !val[0])) {
            sc_alloc_free(&sc__text_pool, val);
            snprintf(err, err_size, "%s[%zu]: invalid stemmer override rule [%s]", path, i,
                     rules[i]);
            return SC_EINVAL;
        }
        if (!val)
            return SC_ENOMEM;
        const char *k = rules[i];
        bool used = false;
        while (k < arrow) {
            const char *e = k;
            while (e < arrow && *e != ',')
                e++;
            char *key = dup_trim(k, (size_t)(e - k));
            if (!key) {
                if (!used)
                    sc_alloc_free(&sc__text_pool, val);
                return SC_ENOMEM;
            }
            if (!key[0]) {
                sc_alloc_free(&sc__text_pool, key);
                if (!used)
                    sc_alloc_free(&sc__text_pool, val);
                snprintf(err, err_size, "%s[%zu]: invalid stemmer override rule [%s]", path, i,
                         rules[i]);
                return SC_EINVAL;
            }
            char *v = used ? dup_trim(val, strlen(val)) : val;
            if (!v) {
                sc_alloc_free(&sc__text_pool, key);
                return SC_ENOMEM;
            }
            used = true;
            /* the first rule for a key wins: Lucene's StemmerOverrideMap.Builder ignores
             * repeated keys */
            bool dup = false;
            for (size_t j = 0; j < f->n_ovr && !dup; j++)
                dup = strcmp(f->ovr[2 * j], key) == 0;
            if (dup) {
                sc_alloc_free(&sc__text_pool, key);
                sc_alloc_free(&sc__text_pool, v);
            } else {
                f->ovr[2 * f->n_ovr] = key;
                f->ovr[2 * f->n_ovr + 1] = v;
                f->n_ovr++;
            }
            k = e < arrow ? e + 1 : arrow;
        }
        if (!used)
            sc_alloc_free(&sc__text_pool, val);
    }
    qsort(f->ovr, f->n_ovr, 2 * sizeof(char *), pair_cmp);
    f->b = 0; /* the longest value, for the room the stream path reserves */
    for (size_t j = 0; j < f->n_ovr; j++)
        if (strlen(f->ovr[2 * j + 1]) > f->b)
            f->b = (uint32_t)strlen(f->ovr[2 * j + 1]);
    return SC_OK;
}

void sc__stem_override(const sc__filter *f, sc__term *t)
{
    if (t->keyword)
        return;
    size_t lo = 0, hi = f->n_ovr;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *k = f->ovr[2 * mid];
        size_t kl = strlen(k);
        int c = memcmp(k, t->buf, kl < t->len ? kl : t->len);
        if (c == 0)
            c = kl < t->len ? -1 : kl > t->len ? 1 : 0;
        if (c == 0) {
            const char *v = f->ovr[2 * mid + 1];
            size_t vl = strlen(v);
            if (vl + 8 > t->cap)
                return; /* the stream path reserves room before this filter */
            memcpy(t->buf, v, vl);
            t->len = vl;
            t->keyword = true;
            return;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
}
