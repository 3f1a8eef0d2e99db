/* The normalizers and stemmers Lucene 8.7 writes by hand for its Arabic, Persian, Hindi,
 * Indonesian and Serbian analysis (rather than Snowball), written from the published
 * algorithms:
 *   arabic_normalization   ArabicNormalizer: hamza-seated alefs -> alef, alef maksura -> yeh,
 *                          teh marbuta -> heh; tatweel and the harakat removed
 *   persian_normalization  PersianNormalizer: farsi yeh / yeh barree -> yeh, keheh -> kaf,
 *                          heh with hamza / heh goal -> heh; hamza above removed
 *   indic_normalization    IndicNormalizer: two- and three-character spellings of one letter
 *                          in the nine Indic blocks composed to the letter (Unicode 5.2 ch. 6)
 *   hindi_normalization    HindiNormalizer (Pingali & Varma, with Larkey et al.'s additions)
 *   serbian_normalization  SerbianNormalizationFilter: Cyrillic to "bald" Latin
 *   decimal_digit          DecimalDigitFilter: any Unicode decimal digit -> 0-9
 *   stemmer arabic         ArabicStemmer (Larkey et al.'s light10 prefixes and suffixes)
 *   stemmer hindi          HindiStemmer (Ramanathan & Rao's suffix lists)
 *   stemmer indonesian     IndonesianStemmer (Tala's algorithm, derivational on)
 *   stemmer czech          CzechStemmer (Dolamic & Savoy's light stemmer: case endings,
 *                          possessives, then a final consonant normalization)
 *   stemmer latvian        LatvianStemmer (a light form of Kreslins' algorithm: noun and
 *                          adjective endings, undoing palatalization after some)
 *   stemmer bulgarian      BulgarianStemmer (Savoy's light stemmer: articles, plurals, a
 *                          final vowel, -ен and -ъ<C> rewrites)
 * (Greek's lowercase and stemmer are in greek.c.)
 * All of these scripts are in the BMP, so Lucene's UTF-16 units are our code points. */
#include <string.h>
#include <unicode/uchar.h>

#include "text/internal.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static int32_t del(uint32_t *s, int32_t pos, int32_t len)
{
    if (pos < len - 1)
        memmove(s + pos, s + pos + 1, (size_t)(len - pos - 1) * sizeof(uint32_t));
    return len - 1;
}

static int32_t del_n(uint32_t *s, int32_t pos, int32_t len, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        len = del(s, pos, len);
    return len;
}

/* Decodes a UTF-8 literal into cps (at most 8); returns the count. */
static int32_t lit(const char *u8, uint32_t *cps)
{
    size_t n = strlen(u8), i = 0;
    int32_t k = 0;
    while (i < n && k < 8)
        cps[k++] = sc__utf8_next((const uint8_t *)u8, n, &i);
    return k;
}

static bool ends_with(const uint32_t *s, int32_t len, const char *suffix)
{
    uint32_t c[8];
    int32_t k = lit(suffix, c);
    if (k > len)
        return false;
    for (int32_t j = 0; j < k; j++)
        if (s[len - k + j] != c[j])
            return false;
    return true;
}

static bool starts_with(const uint32_t *s, int32_t len, const char *prefix)
{
    int32_t k = (int32_t)strlen(prefix); /* ASCII prefixes only (Indonesian) */
    if (k > len)
        return false;
    for (int32_t j = 0; j < k; j++)
        if (s[j] != (uint8_t)prefix[j])
            return false;
    return true;
}

/* ---- Arabic ------------------------------------------------------------------------------ */

static int32_t arabic_norm(uint32_t *s, int32_t len)
{
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 0x0622: /* alef madda, hamza above, hamza below */
        case 0x0623:
        case 0x0625: s[i] = 0x0627; break;
        case 0x0649: s[i] = 0x064A; break; /* alef maksura -> yeh */
        case 0x0629: s[i] = 0x0647; break; /* teh marbuta -> heh */
        case 0x0640:                       /* tatweel */
        case 0x064B:                       /* fathatan .. sukun */
        case 0x064C:
        case 0x064D:
        case 0x064E:
        case 0x064F:
        case 0x0650:
        case 0x0651:
        case 0x0652:
            len = del(s, i, len);
            i--;
            break;
        default: break;
        }
    }
    return len;
}

/* Prefixes in the order they are tried: al, wal, bal, kal, fal, ll, w (only one is removed). */
static const uint32_t ar_prefixes[][4] = {{2, 0x0627, 0x0644},
                                          {3, 0x0648, 0x0627, 0x0644},
                                          {3, 0x0628, 0x0627, 0x0644},
                                          {3, 0x0643, 0x0627, 0x0644},
                                          {3, 0x0641, 0x0627, 0x0644},
                                          {2, 0x0644, 0x0644},
                                          {1, 0x0648}};
/* Suffixes in order, each removed when it still ends the word: ha, an, at, wn, yn, yh, yp, h,
 * p, y. */
static const uint32_t ar_suffixes[][3] = {
    {2, 0x0647, 0x0627}, {2, 0x0627, 0x0646}, {2, 0x0627, 0x062A}, {2, 0x0648, 0x0646},
    {2, 0x064A, 0x0646}, {2, 0x064A, 0x0647}, {2, 0x064A, 0x0629}, {1, 0x0647},
    {1, 0x0629},         {1, 0x064A}};

static int32_t arabic_stem(uint32_t *s, int32_t len)
{
    for (size_t p = 0; p < sizeof(ar_prefixes) / sizeof(ar_prefixes[0]); p++) {
        int32_t n = (int32_t)ar_prefixes[p][0];
        /* w- needs a word of 4 letters; the others leave at least 2 */
        if ((n == 1 && len < 4) || len < n + 2)
            continue;
        bool m = true;
        for (int32_t i = 0; i < n && m; i++)
            m = s[i] == ar_prefixes[p][1 + i];
        if (m) {
            len = del_n(s, 0, len, n);
            break;
        }
    }
    for (size_t q = 0; q < sizeof(ar_suffixes) / sizeof(ar_suffixes[0]); q++) {
        int32_t n = (int32_t)ar_suffixes[q][0];
        if (len < n + 2)
            continue;
        bool m = true;
        for (int32_t i = 0; i < n && m; i++)
            m = s[len - n + i] == ar_suffixes[q][1 + i];
        if (m)
            len -= n;
    }
    return len;
}

/* ---- Persian ----------------------------------------------------------------------------- */

static int32_t persian_norm(uint32_t *s, int32_t len)
{
    for (int32_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 0x06CC: /* farsi yeh, yeh barree */
        case 0x06D2: s[i] = 0x064A; break;
        case 0x06A9: s[i] = 0x0643; break; /* keheh -> kaf */
        case 0x06C0:                       /* heh with yeh above, heh goal */
        case 0x06C1: s[i] = 0x0647; break;
        case 0x0654: /* hamza above */
            len = del(s, i, len);
            i--;
            break;
        default: break;
        }
    }
    return len;
}

/* ---- Indic ------------------------------------------------------------------------------- */

/* Script flags of the nine blocks, 0x0900 + 0x80 * k. */
enum {
    DEVA = 1,
    BENG = 2,
    GURU = 4,
    GUJR = 8,
    ORYA = 16,
    TAML = 32,
    TELU = 64,
    KNDA = 128,
    MLYM = 256
};

/* Compositions: the offsets (in the block) of the first, second and optional third character
 * (-1 none, 0xFF zero-width joiner), the composed character and the scripts it applies to.
 * Tried in this order; the first that matches wins. */
static const int16_t indic_comp[][5] = {
    {0x05, 0x3E, 0x45, 0x11, DEVA | GUJR},
    {0x05, 0x3E, 0x46, 0x12, DEVA},
    {0x05, 0x3E, 0x47, 0x13, DEVA | GUJR},
    {0x05, 0x3E, 0x48, 0x14, DEVA | GUJR},
    {0x05, 0x3E, -1, 0x06, DEVA | BENG | GURU | GUJR | ORYA},
    {0x05, 0x45, -1, 0x72, DEVA},
    {0x05, 0x45, -1, 0x0D, GUJR},
    {0x05, 0x46, -1, 0x04, DEVA},
    {0x05, 0x47, -1, 0x0F, GUJR},
    {0x05, 0x48, -1, 0x10, GURU | GUJR},
    {0x05, 0x49, -1, 0x11, DEVA | GUJR},
    {0x05, 0x4A, -1, 0x12, DEVA},
    {0x05, 0x4B, -1, 0x13, DEVA | GUJR},
    {0x05, 0x4C, -1, 0x14, DEVA | GURU | GUJR},
    {0x06, 0x45, -1, 0x11, DEVA | GUJR},
    {0x06, 0x46, -1, 0x12, DEVA},
    {0x06, 0x47, -1, 0x13, DEVA | GUJR},
    {0x06, 0x48, -1, 0x14, DEVA | GUJR},
    {0x07, 0x57, -1, 0x08, MLYM},
    {0x09, 0x41, -1, 0x0A, DEVA},
    {0x09, 0x57, -1, 0x0A, TAML | MLYM},
    {0x0E, 0x46, -1, 0x10, MLYM},
    {0x0F, 0x45, -1, 0x0D, DEVA},
    {0x0F, 0x46, -1, 0x0E, DEVA},
    {0x0F, 0x47, -1, 0x10, DEVA},
    {0x0F, 0x57, -1, 0x10, ORYA},
    {0x12, 0x3E, -1, 0x13, MLYM},
    {0x12, 0x4C, -1, 0x14, TELU | KNDA},
    {0x12, 0x55, -1, 0x13, TELU},
    {0x12, 0x57, -1, 0x14, TAML | MLYM},
    {0x13, 0x57, -1, 0x14, ORYA},
    {0x15, 0x3C, -1, 0x58, DEVA},
    {0x16, 0x3C, -1, 0x59, DEVA | GURU},
    {0x17, 0x3C, -1, 0x5A, DEVA | GURU},
    {0x1C, 0x3C, -1, 0x5B, DEVA | GURU},
    {0x21, 0x3C, -1, 0x5C, DEVA | BENG | ORYA},
    {0x22, 0x3C, -1, 0x5D, DEVA | BENG | ORYA},
    {0x23, 0x4D, 0xFF, 0x7A, MLYM},
    {0x24, 0x4D, 0xFF, 0x4E, BENG},
    {0x28, 0x3C, -1, 0x29, DEVA},
    {0x28, 0x4D, 0xFF, 0x7B, MLYM},
    {0x2B, 0x3C, -1, 0x5E, DEVA | GURU},
    {0x2F, 0x3C, -1, 0x5F, DEVA | BENG},
    {0x2C, 0x41, 0x41, 0x0B, TELU},
    {0x30, 0x3C, -1, 0x31, DEVA},
    {0x30, 0x4D, 0xFF, 0x7C, MLYM},
    {0x32, 0x4D, 0xFF, 0x7D, MLYM},
    {0x33, 0x3C, -1, 0x34, DEVA},
    {0x33, 0x4D, 0xFF, 0x7E, MLYM},
    {0x35, 0x41, -1, 0x2E, TELU},
    {0x3E, 0x45, -1, 0x49, DEVA | GUJR},
    {0x3E, 0x46, -1, 0x4A, DEVA},
    {0x3E, 0x47, -1, 0x4B, DEVA | GUJR},
    {0x3E, 0x48, -1, 0x4C, DEVA | GUJR},
    {0x3F, 0x55, -1, 0x40, KNDA},
    {0x41, 0x41, -1, 0x42, GURU},
    {0x46, 0x3E, -1, 0x4A, TAML | MLYM},
    {0x46, 0x42, 0x55, 0x4B, KNDA},
    {0x46, 0x42, -1, 0x4A, KNDA},
    {0x46, 0x46, -1, 0x48, MLYM},
    {0x46, 0x55, -1, 0x47, TELU | KNDA},
    {0x46, 0x56, -1, 0x48, TELU | KNDA},
    {0x46, 0x57, -1, 0x4C, TAML | MLYM},
    {0x47, 0x3E, -1, 0x4B, BENG | ORYA | TAML | MLYM},
    {0x47, 0x57, -1, 0x4C, BENG | ORYA},
    {0x4A, 0x55, -1, 0x4B, KNDA},
    {0x72, 0x3F, -1, 0x07, GURU},
    {0x72, 0x40, -1, 0x08, GURU},
    {0x72, 0x47, -1, 0x0F, GURU},
    {0x73, 0x41, -1, 0x09, GURU},
    {0x73, 0x42, -1, 0x0A, GURU},
    {0x73, 0x4B, -1, 0x13, GURU},
};

/* The block index 0..8 of c (Devanagari .. Malayalam), or -1. */
static int indic_block(uint32_t c)
{
    return c >= 0x0900 && c < 0x0D80 ? (int)((c - 0x0900) >> 7) : -1;
}

static int32_t indic_norm(uint32_t *s, int32_t len)
{
    for (int32_t i = 0; i + 1 < len; i++) {
        int b0 = indic_block(s[i]);
        if (b0 < 0 || indic_block(s[i + 1]) != b0)
            continue;
        uint32_t base = 0x0900 + ((uint32_t)b0 << 7);
        int flag = 1 << b0;
        int c0 = (int)(s[i] - base), c1 = (int)(s[i + 1] - base), c2 = -1;
        if (i + 2 < len) {
            if (s[i + 2] == 0x200D)
                c2 = 0xFF;
            else if (indic_block(s[i + 2]) == b0)
                c2 = (int)(s[i + 2] - base);
        }
        for (size_t k = 0; k < sizeof(indic_comp) / sizeof(indic_comp[0]); k++) {
            const int16_t *d = indic_comp[k];
            if (d[0] != c0 || !(d[4] & flag) || d[1] != c1 || (d[2] >= 0 && d[2] != c2))
                continue;
            s[i] = base + (uint32_t)d[3];
            len = del(s, i + 1, len);
            if (d[2] >= 0)
                len = del(s, i + 1, len);
            break;
        }
    }
    return len;
}

/* ---- Hindi ------------------------------------------------------------------------------- */

static int32_t hindi_norm(uint32_t *s, int32_t len)
{
    /* single-character replacements; 0 = delete */
    static const uint32_t map[][2] = {
        {0x0901, 0x0902}, {0x093C, 0},      {0x0929, 0x0928}, {0x0931, 0x0930}, {0x0934, 0x0933},
        {0x0958, 0x0915}, {0x0959, 0x0916}, {0x095A, 0x0917}, {0x095B, 0x091C}, {0x095C, 0x0921},
        {0x095D, 0x0922}, {0x095E, 0x092B}, {0x095F, 0x092F}, {0x200D, 0},      {0x200C, 0},
        {0x094D, 0},      {0x0945, 0x0947}, {0x0946, 0x0947}, {0x0949, 0x094B}, {0x094A, 0x094B},
        {0x090D, 0x090F}, {0x090E, 0x090F}, {0x0911, 0x0913}, {0x0912, 0x0913}, {0x0972, 0x0905},
        {0x0906, 0x0905}, {0x0908, 0x0907}, {0x090A, 0x0909}, {0x0960, 0x090B}, {0x0961, 0x090C},
        {0x0910, 0x090F}, {0x0914, 0x0913}, {0x0940, 0x093F}, {0x0942, 0x0941}, {0x0944, 0x0943},
        {0x0963, 0x0962}, {0x0948, 0x0947}, {0x094C, 0x094B}};
    for (int32_t i = 0; i < len; i++) {
        if (s[i] == 0x0928) { /* dead n (na + virama) -> anusvara */
            if (i + 1 < len && s[i + 1] == 0x094D) {
                s[i] = 0x0902;
                len = del(s, i + 1, len);
            }
            continue;
        }
        for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
            if (s[i] != map[k][0])
                continue;
            if (map[k][1]) {
                s[i] = map[k][1];
            } else {
                len = del(s, i, len);
                i--;
            }
            break;
        }
    }
    return len;
}

/* Suffix groups by length: a suffix of n characters is removed from a word longer than n + 1;
 * the first group (longest) with a match wins. */
static const char *const hi_suffixes[5][19] = {
    {"ो", "े", "ू", "ु", "ी", "ि", "ा"},
    {"कर", "ाओ", "िए", "ाई", "ाए", "ने", "नी", "ना", "ते", "ीं", "ती", "ता", "ाँ", "ां", "ों", "ें"},
    {"ाकर", "ाइए", "ाईं", "ाया", "ेगी", "ेगा", "ोगी", "ोगे", "ाने", "ाना", "ाते", "ाती", "ाता", "तीं",
     "ाओं", "ाएं", "ुओं", "ुएं", "ुआं"},
    {"ाएगी", "ाएगा", "ाओगी", "ाओगे", "एंगी", "ेंगी", "एंगे", "ेंगे", "ूंगी", "ूंगा", "ातीं", "नाओं", "नाएं", "ताओं",
     "ताएं", "ियाँ", "ियों", "ियां"},
    {"ाएंगी", "ाएंगे", "ाऊंगी", "ाऊंगा", "ाइयाँ", "ाइयों", "ाइयां"},
};

static int32_t hindi_stem(uint32_t *s, int32_t len)
{
    for (int32_t n = 5; n >= 1; n--) {
        if (len <= n + 1)
            continue;
        for (size_t k = 0; k < 19 && hi_suffixes[n - 1][k]; k++)
            if (ends_with(s, len, hi_suffixes[n - 1][k]))
                return len - n;
    }
    return len;
}

/* ---- Indonesian -------------------------------------------------------------------------- */

enum {
    ID_KE = 1,
    ID_PENG = 2,
    ID_DI = 4,
    ID_MENG = 8,
    ID_TER = 16,
    ID_BER = 32,
    ID_PE = 64
};

typedef struct id_state {
    int syl;
    int flags;
} id_state;

static bool id_vowel(uint32_t c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* Removes n leading characters after a prefix rule fired (flag recorded, one syllable less). */
static int32_t id_cut(id_state *st, int flag, uint32_t *s, int32_t len, int32_t n)
{
    st->flags |= flag;
    st->syl--;
    return del_n(s, 0, len, n);
}

static int32_t id_first_prefix(id_state *st, uint32_t *s, int32_t len)
{
    if (starts_with(s, len, "meng"))
        return id_cut(st, ID_MENG, s, len, 4);
    if (starts_with(s, len, "meny") && len > 4 && id_vowel(s[4])) {
        s[3] = 's'; /* meny+vowel: the stem starts with s */
        return id_cut(st, ID_MENG, s, len, 3);
    }
    if (starts_with(s, len, "men") || starts_with(s, len, "mem"))
        return id_cut(st, ID_MENG, s, len, 3);
    if (starts_with(s, len, "me"))
        return id_cut(st, ID_MENG, s, len, 2);
    if (starts_with(s, len, "peng"))
        return id_cut(st, ID_PENG, s, len, 4);
    if (starts_with(s, len, "peny") && len > 4 && id_vowel(s[4])) {
        s[3] = 's';
        return id_cut(st, ID_PENG, s, len, 3);
    }
    if (starts_with(s, len, "peny"))
        return id_cut(st, ID_PENG, s, len, 4);
    if (starts_with(s, len, "pen") && len > 3 && id_vowel(s[3])) {
        s[2] = 't'; /* pen+vowel: the stem starts with t */
        return id_cut(st, ID_PENG, s, len, 2);
    }
    if (starts_with(s, len, "pen") || starts_with(s, len, "pem"))
        return id_cut(st, ID_PENG, s, len, 3);
    if (starts_with(s, len, "di"))
        return id_cut(st, ID_DI, s, len, 2);
    if (starts_with(s, len, "ter"))
        return id_cut(st, ID_TER, s, len, 3);
    if (starts_with(s, len, "ke"))
        return id_cut(st, ID_KE, s, len, 2);
    return len;
}

static int32_t id_second_prefix(id_state *st, uint32_t *s, int32_t len)
{
    if (starts_with(s, len, "ber"))
        return id_cut(st, ID_BER, s, len, 3);
    if (len == 7 && starts_with(s, len, "belajar"))
        return id_cut(st, ID_BER, s, len, 3);
    if (starts_with(s, len, "be") && len > 4 && !id_vowel(s[2]) && s[3] == 'e' && s[4] == 'r')
        return id_cut(st, ID_BER, s, len, 2);
    if (starts_with(s, len, "per"))
        return id_cut(st, 0, s, len, 3);
    if (len == 7 && starts_with(s, len, "pelajar"))
        return id_cut(st, 0, s, len, 3);
    if (starts_with(s, len, "pe"))
        return id_cut(st, ID_PE, s, len, 2);
    return len;
}

static int32_t id_suffix(id_state *st, const uint32_t *s, int32_t len)
{
    int f = st->flags;
    if (ends_with(s, len, "kan") && !(f & (ID_KE | ID_PENG | ID_PE))) {
        st->syl--;
        return len - 3;
    }
    if (ends_with(s, len, "an") && !(f & (ID_DI | ID_MENG | ID_TER))) {
        st->syl--;
        return len - 2;
    }
    if (ends_with(s, len, "i") && !ends_with(s, len, "si") && !(f & (ID_BER | ID_KE | ID_PENG))) {
        st->syl--;
        return len - 1;
    }
    return len;
}

static int32_t indonesian_stem(uint32_t *s, int32_t len)
{
    id_state st = {0, 0};
    for (int32_t i = 0; i < len; i++)
        st.syl += id_vowel(s[i]);
    if (st.syl > 2 && (ends_with(s, len, "kah") || ends_with(s, len, "lah") ||
                       ends_with(s, len, "pun"))) { /* particles */
        st.syl--;
        len -= 3;
    }
    if (st.syl > 2) { /* possessive pronouns */
        if (ends_with(s, len, "ku") || ends_with(s, len, "mu")) {
            st.syl--;
            len -= 2;
        } else if (ends_with(s, len, "nya")) {
            st.syl--;
            len -= 3;
        }
    }
    /* derivational: first-order prefix, then suffix, then second-order prefix; when no
     * first-order prefix fires, second-order prefix then suffix */
    int32_t old = len;
    if (st.syl > 2)
        len = id_first_prefix(&st, s, len);
    if (old != len) {
        old = len;
        if (st.syl > 2)
            len = id_suffix(&st, s, len);
        if (old != len && st.syl > 2)
            len = id_second_prefix(&st, s, len);
    } else {
        if (st.syl > 2)
            len = id_second_prefix(&st, s, len);
        if (st.syl > 2)
            len = id_suffix(&st, s, len);
    }
    return len;
}

/* ---- Bulgarian ------------------------------------------------------------------------- */

static int32_t bg_article(const uint32_t *s, int32_t len)
{
    if (len > 6 && ends_with(s, len, "ият"))
        return len - 3;
    if (len > 5 && (ends_with(s, len, "ът") || ends_with(s, len, "то") || ends_with(s, len, "те") ||
                    ends_with(s, len, "та") || ends_with(s, len, "ия")))
        return len - 2;
    if (len > 4 && ends_with(s, len, "ят"))
        return len - 2;
    return len;
}

static int32_t bg_plural(uint32_t *s, int32_t len)
{
    if (len > 6) {
        if (ends_with(s, len, "овци") || ends_with(s, len, "ове"))
            return len - 3; /* -овци keeps its о */
        if (ends_with(s, len, "еве")) {
            s[len - 3] = 0x0439; /* й */
            return len - 2;
        }
    }
    if (len > 5) {
        if (ends_with(s, len, "ища"))
            return len - 3;
        if (ends_with(s, len, "та"))
            return len - 2;
        if (ends_with(s, len, "ци")) {
            s[len - 2] = 0x043A; /* к */
            return len - 1;
        }
        if (ends_with(s, len, "зи")) {
            s[len - 2] = 0x0433; /* г */
            return len - 1;
        }
        if (s[len - 3] == 0x0435 && s[len - 1] == 0x0438) { /* е.и -> я. */
            s[len - 3] = 0x044F;
            return len - 1;
        }
    }
    if (len > 4) {
        if (ends_with(s, len, "си")) {
            s[len - 2] = 0x0445; /* х */
            return len - 1;
        }
        if (ends_with(s, len, "и"))
            return len - 1;
    }
    return len;
}

static int32_t bulgarian_stem(uint32_t *s, int32_t len)
{
    if (len < 4)
        return len;
    if (len > 5 && ends_with(s, len, "ища"))
        return len - 3;
    len = bg_article(s, len);
    len = bg_plural(s, len);
    if (len > 3) {
        if (ends_with(s, len, "я"))
            len--;
        if (ends_with(s, len, "а") || ends_with(s, len, "о") || ends_with(s, len, "е"))
            len--;
    }
    if (len > 4 && ends_with(s, len, "ен")) { /* -ен -> -н */
        s[len - 2] = 0x043D;
        len--;
    }
    if (len > 5 && s[len - 2] == 0x044A) { /* -ъ<C> -> -<C> */
        s[len - 2] = s[len - 1];
        len--;
    }
    return len;
}

/* ---- Czech ------------------------------------------------------------------------------ */

static bool ends_any(const uint32_t *s, int32_t len, const char *const *list)
{
    for (; *list; list++)
        if (ends_with(s, len, *list))
            return true;
    return false;
}

static int32_t cz_case(const uint32_t *s, int32_t len)
{
    static const char *const three[] = {
        "ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ěte", "ete", "ěti", "eti", "ího", "iho",
        "ími", "ímu", "imu", "ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými", NULL};
    static const char *const two[] = {"em", "es", "ém", "ím", "ům", "at", "ám",
                                      "os", "us", "ým", "mi", "ou", NULL};
    static const char *const four[] = {"ětem", "etem", "atům", NULL};
    if (len > 7 && ends_with(s, len, "atech"))
        return len - 5;
    if (len > 6 && ends_any(s, len, four))
        return len - 4;
    if (len > 5 && ends_any(s, len, three))
        return len - 3;
    if (len > 4 && ends_any(s, len, two))
        return len - 2;
    if (len > 3) {
        switch (s[len - 1]) {
        case 'a':
        case 'e':
        case 'i':
        case 'o':
        case 'u':
        case 'y':
        case 0x016F: /* ů á é í ý ě */
        case 0x00E1:
        case 0x00E9:
        case 0x00ED:
        case 0x00FD:
        case 0x011B: return len - 1;
        default: break;
        }
    }
    return len;
}

static int32_t cz_normalize(uint32_t *s, int32_t len)
{
    if (ends_with(s, len, "čt") || ends_with(s, len, "št")) { /* čt -> ck, št -> sk */
        s[len - 2] = s[len - 2] == 0x010D ? 'c' : 's';
        s[len - 1] = 'k';
        return len;
    }
    switch (s[len - 1]) {
    case 'c': /* [cč] -> k */
    case 0x010D: s[len - 1] = 'k'; return len;
    case 'z': /* [zž] -> h */
    case 0x017E: s[len - 1] = 'h'; return len;
    default: break;
    }
    if (len > 1 && s[len - 2] == 'e') { /* e* -> * */
        s[len - 2] = s[len - 1];
        return len - 1;
    }
    if (len > 2 && s[len - 2] == 0x016F) /* *ů* -> *o* */
        s[len - 2] = 'o';
    return len;
}

static int32_t czech_stem(uint32_t *s, int32_t len)
{
    len = cz_case(s, len);
    if (len > 5 && (ends_with(s, len, "ov") || ends_with(s, len, "in") || ends_with(s, len, "ův")))
        len -= 2; /* possessives */
    return len > 0 ? cz_normalize(s, len) : len;
}

/* ---- Latvian ---------------------------------------------------------------------------- */

static bool lv_vowel(uint32_t c)
{
    switch (c) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u':
    case 0x0101: /* ā ī ē ū */
    case 0x012B:
    case 0x0113:
    case 0x016B: return true;
    default: return false;
    }
}

/* After a declension II, V or VI ending is removed: the stem's consonant before it goes back
 * to its plain form. s[len] is the first removed character. */
static int32_t lv_unpalatalize(uint32_t *s, int32_t len)
{
    if (s[len] == 'u') { /* genitive plural -u: kš -> kst, ņņ -> nn */
        if (ends_with(s, len, "kš")) {
            len++;
            s[len - 2] = 's';
            s[len - 1] = 't';
            return len;
        }
        if (ends_with(s, len, "ņņ")) {
            s[len - 2] = 'n';
            s[len - 1] = 'n';
            return len;
        }
    }
    if (ends_with(s, len, "pj") || ends_with(s, len, "bj") || ends_with(s, len, "mj") ||
        ends_with(s, len, "vj"))
        return len - 1; /* labial + j */
    static const char *const pairs[][2] = {{"šņ", "sn"}, {"žņ", "zn"}, {"šļ", "sl"},
                                           {"žļ", "zl"}, {"ļņ", "ln"}, {"ļļ", "ll"}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        if (ends_with(s, len, pairs[i][0])) {
            s[len - 2] = (uint8_t)pairs[i][1][0];
            s[len - 1] = (uint8_t)pairs[i][1][1];
            return len;
        }
    }
    if (s[len - 1] == 0x010D) /* č */
        s[len - 1] = 'c';
    else if (s[len - 1] == 0x013C) /* ļ */
        s[len - 1] = 'l';
    else if (s[len - 1] == 0x0146) /* ņ */
        s[len - 1] = 'n';
    return len;
}

static int32_t latvian_stem(uint32_t *s, int32_t len)
{
    /* endings in the order tried: text, vowels in it, whether palatalization is undone */
    static const struct {
        const char *affix;
        int vc;
        bool pal;
    } affixes[] = {
        {"ajiem", 3, false}, {"ajai", 3, false}, {"ajam", 2, false}, {"ajām", 2, false},
        {"ajos", 2, false},  {"ajās", 2, false}, {"iem", 2, true},   {"ajā", 2, false},
        {"ais", 2, false},   {"ai", 2, false},   {"ei", 2, false},   {"ām", 1, false},
        {"am", 1, false},    {"ēm", 1, false},   {"īm", 1, false},   {"im", 1, false},
        {"um", 1, false},    {"us", 1, true},    {"as", 1, false},   {"ās", 1, false},
        {"es", 1, false},    {"os", 1, true},    {"ij", 1, false},   {"īs", 1, false},
        {"ēs", 1, false},    {"is", 1, false},   {"ie", 1, false},   {"u", 1, true},
        {"a", 1, true},      {"i", 1, true},     {"e", 1, false},    {"ā", 1, false},
        {"ē", 1, false},     {"ī", 1, false},    {"ū", 1, false},    {"o", 1, false},
        {"s", 0, false},     {"š", 0, false},
    };
    int vowels = 0;
    for (int32_t i = 0; i < len; i++)
        vowels += lv_vowel(s[i]);
    for (size_t i = 0; i < sizeof(affixes) / sizeof(affixes[0]); i++) {
        uint32_t c[8];
        int32_t n = lit(affixes[i].affix, c);
        if (vowels > affixes[i].vc && len >= n + 3 && ends_with(s, len, affixes[i].affix)) {
            len -= n;
            return affixes[i].pal ? lv_unpalatalize(s, len) : len;
        }
    }
    return len;
}

/* ---- Serbian and decimal digits (byte-level, never longer) ------------------------------- */

static void serbian_norm(sc__term *t)
{
    size_t i = 0, o = 0;
    while (i < t->len) {
        size_t at = i;
        uint32_t c = sc__utf8_next(t->buf, t->len, &i);
        const char *r = NULL;
        switch (c) {
        case 0x0430: r = "a"; break;
        case 0x0431: r = "b"; break;
        case 0x0432: r = "v"; break;
        case 0x0433: r = "g"; break;
        case 0x0434: r = "d"; break;
        case 0x0452:                  /* ђ */
        case 0x0111: r = "dj"; break; /* đ */
        case 0x0435: r = "e"; break;
        case 0x0436: /* ж з ž */
        case 0x0437:
        case 0x017E: r = "z"; break;
        case 0x0438: r = "i"; break;
        case 0x0458: r = "j"; break;
        case 0x043A: r = "k"; break;
        case 0x043B: r = "l"; break;
        case 0x0459: r = "lj"; break;
        case 0x043C: r = "m"; break;
        case 0x043D: r = "n"; break;
        case 0x045A: r = "nj"; break;
        case 0x043E: r = "o"; break;
        case 0x043F: r = "p"; break;
        case 0x0440: r = "r"; break;
        case 0x0441: r = "s"; break;
        case 0x0442: r = "t"; break;
        case 0x045B: /* ћ ц ч č ć */
        case 0x0446:
        case 0x0447:
        case 0x010D:
        case 0x0107: r = "c"; break;
        case 0x0443: r = "u"; break;
        case 0x0444: r = "f"; break;
        case 0x0445: r = "h"; break;
        case 0x045F: r = "dz"; break;
        case 0x0448: /* ш š */
        case 0x0161: r = "s"; break;
        default: break;
        }
        if (r) { /* every source character is 2 bytes: the output never overtakes the input */
            size_t n = strlen(r);
            memcpy(t->buf + o, r, n);
            o += n;
        } else {
            memmove(t->buf + o, t->buf + at, i - at);
            o += i - at;
        }
    }
    t->len = o;
}

/* Java 17's Character.isDigit covers the decimal digits of Unicode 13; ICU may be newer. */
static bool java_digit(uint32_t c, int32_t *v)
{
    if (c < 0x80 || u_charType((UChar32)c) != U_DECIMAL_DIGIT_NUMBER)
        return false;
    UVersionInfo age;
    u_charAge((UChar32)c, age);
    if (age[0] > 13)
        return false;
    *v = u_charDigitValue((UChar32)c);
    return *v >= 0 && *v <= 9;
}

static void decimal_digit(sc__term *t)
{
    size_t i = 0, o = 0;
    while (i < t->len) {
        size_t at = i;
        uint32_t c = sc__utf8_next(t->buf, t->len, &i);
        int32_t v;
        if (java_digit(c, &v)) {
            t->buf[o++] = (uint8_t)('0' + v);
        } else {
            memmove(t->buf + o, t->buf + at, i - at);
            o += i - at;
        }
    }
    t->len = o;
}

/* ---- entry points ------------------------------------------------------------------------ */

int32_t sc__lang_stem(uint32_t lang, uint32_t *s, int32_t len)
{
    switch (lang) {
    case SC__LS_ARABIC: return arabic_stem(s, len);
    case SC__LS_HINDI: return hindi_stem(s, len);
    case SC__LS_INDONESIAN: return indonesian_stem(s, len);
    case SC__LS_GREEK: return sc__greek_stem(s, len);
    case SC__LS_BULGARIAN: return bulgarian_stem(s, len);
    case SC__LS_CZECH: return czech_stem(s, len);
    case SC__LS_LATVIAN: return latvian_stem(s, len);
    default: return len;
    }
}

void sc__lang_normalize(uint32_t which, sc__term *t)
{
    if (which == SC__N_SERBIAN) {
        serbian_norm(t);
        return;
    }
    if (which == SC__N_DECIMAL_DIGIT) {
        decimal_digit(t);
        return;
    }
    if (which == SC__N_GREEK_LOWER) {
        sc__greek_lowercase(t);
        return;
    }
    uint32_t stack[64], *c = stack, *heap = NULL;
    if (t->len > 64) {
        heap = sc_alloc_malloc(&sc__text_pool, t->len * sizeof(uint32_t));
        if (!heap)
            return;
        c = heap;
    }
    int32_t len = 0;
    size_t i = 0;
    while (i < t->len)
        c[len++] = sc__utf8_next(t->buf, t->len, &i);
    switch (which) {
    case SC__N_ARABIC: len = arabic_norm(c, len); break;
    case SC__N_PERSIAN: len = persian_norm(c, len); break;
    case SC__N_INDIC: len = indic_norm(c, len); break;
    case SC__N_HINDI: len = hindi_norm(c, len); break;
    default: break;
    }
    /* every rewrite keeps a character's UTF-8 width or drops characters: never longer */
    size_t o = 0;
    for (int32_t k = 0; k < len; k++)
        o += sc_utf8_put(t->buf + o, c[k]);
    t->len = o;
    sc_alloc_free(&sc__text_pool, heap);
}
