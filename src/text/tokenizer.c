/* Tokenizers: Lucene 8.7's StandardTokenizer (the JFlex UAX#29 grammar: words, numbers,
 * Katakana runs, Southeast Asian runs, one token per Han/Hiragana character, emoji sequences;
 * everything else skipped; at most 255 UTF-16 units per token, longer words split), and the
 * CharTokenizer family (letter, whitespace) plus keyword.
 *
 * Why not ICU's ubrk word iterator: ICU segments Han, Kana and Thai with a dictionary, while
 * Lucene emits each Han/Hiragana character alone and keeps Thai runs whole, and ICU's rule
 * status does not tell which punctuation-only segments Lucene drops or how emoji are kept. So
 * we run the UAX#29 rules ourselves, as Lucene's grammar states them, over ICU's Unicode
 * property data (Word_Break, Script, Line_Break, Extended_Pictographic). Pure-ASCII input takes
 * a specialised instance of the same scanner that never calls ICU; a unit test checks both
 * instances give identical tokens. */
#include <pthread.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include "text/internal.h"

/* Character classes of the standard tokenizer (low 6 bits) and a flag bit. */
enum {
    C_OTHER,
    C_ALETTER,
    C_HEBREW,
    C_NUMERIC,
    C_KATAKANA,
    C_EXTNUMLET,
    C_MIDLETTER,
    C_MIDNUM,
    C_MIDNUMLET,
    C_SQUOTE,
    C_DQUOTE,
    C_EXTEND, /* Extend or Format */
    C_ZWJ,
    C_NEWLINE,
    C_HAN,
    C_HIRAGANA,
    C_COMPLEX, /* Line_Break=Complex_Context (Thai, Lao, Myanmar, Khmer, ...) */
    C_RI,
    C_EMOD, /* emoji skin-tone modifiers: not Extend in Lucene's (Unicode 9) tables */
};
#define F_HANGUL 0x20 /* a Hangul letter (for the <HANGUL> token type) */
#define F_PICT 0x40   /* Extended_Pictographic */
#define F_SA 0x80 /* Line_Break=Complex_Context (also set on Extend marks such as Thai vowels) */
#define BASE(c) ((c)&0x1F)

static uint8_t ascii_cls[128];
static bool ascii_alnum[256];      /* ASCII letters and digits */
static bool ascii_word_start[256]; /* ASCII bytes that can start a standard token */
static bool ascii_skip[256];       /* ASCII bytes that start nothing, not even an emoji */
/* Classes of planes 0-2 (BMP, SMP with emoji and historic scripts, SIP with rare Han), built
 * once: classify_icu costs several ICU property lookups per call. */
static uint8_t plane_cls[3 * 65536];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

/* Is c assigned in Unicode major.minor or earlier? Lucene's tables are older than ICU's: its
 * StandardTokenizer grammar was generated from Unicode 9.0 and Java 17's Character (used by the
 * letter and whitespace tokenizers) knows Unicode 13.0; a character assigned later is
 * unassigned there. */
static bool assigned_by(UChar32 c, int major, int minor)
{
    UVersionInfo v;
    u_charAge(c, v);
    return v[0] < major || (v[0] == major && v[1] <= minor);
}

#define LUCENE_UNICODE_MAJOR 9
#define LUCENE_UNICODE_MINOR 0
#define JAVA_UNICODE_MAJOR 13
#define JAVA_UNICODE_MINOR 0

static uint8_t classify_icu(UChar32 c)
{
    uint8_t f = u_hasBinaryProperty(c, UCHAR_EXTENDED_PICTOGRAPHIC) ? F_PICT : 0;
    if (!assigned_by(c, LUCENE_UNICODE_MAJOR, LUCENE_UNICODE_MINOR) ||
        u_charType(c) == U_UNASSIGNED) {
        /* Lucene's emoji data (Emoji 11) marks the unassigned planes-1 symbol ranges
         * Extended_Pictographic; later Unicode versions gave some of them to non-emoji blocks
         * (e.g. U+1FB00 Symbols for Legacy Computing), which ICU no longer flags. */
        if (c >= 0x1F000 && c <= 0x1FFFD && !(c >= 0x1F900 && c <= 0x1F90B) && c != 0x1F93B &&
            c != 0x1F946)
            f = F_PICT;
        return C_OTHER | f;
    }
    if (u_getIntPropertyValue(c, UCHAR_LINE_BREAK) == U_LB_COMPLEX_CONTEXT)
        f |= F_SA;
    /* Word_Break values that changed after Unicode 9 (found by running every code point of
     * planes 0-1 through Lucene, see tests/oracle/analysis/README). */
    switch (c) {
    case 0x02D7: return C_MIDLETTER | f; /* MODIFIER LETTER MINUS SIGN */
    case 0x055F: return C_OTHER | f;     /* ARMENIAN ABBREVIATION MARK */
    case 0x05F3: return C_ALETTER | f;   /* HEBREW PUNCTUATION GERESH */
    case 0x1CF2:
    case 0x1CF3: return C_EXTEND | f; /* VEDIC SIGN (ROTATED) ARDHAVISARGA */
    case 0x111C9: return C_OTHER | f; /* SHARADA SANDHI MARK */
    default: break;
    }
    if (c >= 0x1F3FB && c <= 0x1F3FF)
        return C_EMOD | f;
    if (c >= 0xFF10 && c <= 0xFF19) /* Lucene adds full-width digits to Numeric */
        return C_NUMERIC | f;
    switch (u_getIntPropertyValue(c, UCHAR_WORD_BREAK)) {
    case U_WB_ALETTER:
        /* Unicode 11 added some modifier symbols and punctuation to ALetter; Lucene's
         * Unicode 9 tables do not have them. */
        if (u_charType(c) == U_MODIFIER_SYMBOL || c == 0x055A || c == 0x055B || c == 0x055C ||
            c == 0x055E || c == 0x058A)
            return C_OTHER | f;
        {
            UErrorCode e = U_ZERO_ERROR;
            if (uscript_getScript(c, &e) == USCRIPT_HANGUL && U_SUCCESS(e))
                f |= F_HANGUL;
        }
        return C_ALETTER | f;
    case U_WB_HEBREW_LETTER: return C_HEBREW | f;
    case U_WB_NUMERIC: return C_NUMERIC | f;
    case U_WB_KATAKANA: return C_KATAKANA | f;
    case U_WB_EXTENDNUMLET: return C_EXTNUMLET | f;
    case U_WB_MIDLETTER: return C_MIDLETTER | f;
    case U_WB_MIDNUM: return C_MIDNUM | f;
    case U_WB_MIDNUMLET: return C_MIDNUMLET | f;
    case U_WB_SINGLE_QUOTE: return C_SQUOTE | f;
    case U_WB_DOUBLE_QUOTE: return C_DQUOTE | f;
    case U_WB_EXTEND:
    case U_WB_FORMAT: return C_EXTEND | f;
    case U_WB_ZWJ: return C_ZWJ | f;
    case U_WB_CR:
    case U_WB_LF:
    case U_WB_NEWLINE: return C_NEWLINE | f;
    case U_WB_REGIONAL_INDICATOR: return C_RI | f;
    default: break;
    }
    UErrorCode err = U_ZERO_ERROR;
    UScriptCode sc = uscript_getScript(c, &err);
    if (U_SUCCESS(err) && sc == USCRIPT_HAN)
        return C_HAN | f;
    if (U_SUCCESS(err) && sc == USCRIPT_HIRAGANA)
        return C_HIRAGANA | f;
    if (f & F_SA)
        return C_COMPLEX | f;
    return C_OTHER | f;
}

static void init_tables(void)
{
    for (int c = 0; c < 128; c++) {
        uint8_t k = C_OTHER;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            k = C_ALETTER;
        else if (c >= '0' && c <= '9')
            k = C_NUMERIC;
        else if (c == '_')
            k = C_EXTNUMLET;
        else if (c == '.')
            k = C_MIDNUMLET;
        else if (c == '\'')
            k = C_SQUOTE;
        else if (c == ':')
            k = C_MIDLETTER;
        else if (c == ',' || c == ';')
            k = C_MIDNUM;
        else if (c == '"')
            k = C_DQUOTE;
        else if (c == '\n' || c == '\r' || c == '\v' || c == '\f')
            k = C_NEWLINE;
        ascii_cls[c] = k;
        ascii_alnum[c] = k == C_ALETTER || k == C_NUMERIC;
        ascii_word_start[c] = k == C_ALETTER || k == C_NUMERIC || k == C_EXTNUMLET;
        ascii_skip[c] = !ascii_word_start[c] && c != '#' && c != '*';
    }
    for (uint32_t c = 0; c < 3 * 65536; c++)
        plane_cls[c] = c < 128                        ? ascii_cls[c]
                       : (c >= 0xD800 && c <= 0xDFFF) ? C_OTHER
                                                      : classify_icu((UChar32)c);
}

bool sc__text_is_ascii(const uint8_t *s, size_t len)
{
    size_t i = 0;
    uint64_t acc = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < len; i++)
        acc |= s[i];
    return (acc & 0x8080808080808080ull) == 0;
}

/* ---- the standard tokenizer ------------------------------------------------------------- */

typedef struct scan {
    const uint8_t *s;
    size_t n;
    uint32_t max_len;
} scan;

/* Class of the code point at p; *q gets the next position, *u its UTF-16 length. With ascii
 * the input is known to be ASCII and ICU is never consulted. */
static inline __attribute__((always_inline)) uint8_t cls_at(const scan *sc, size_t p, size_t *q,
                                                            uint32_t *u, bool ascii)
{
    if (ascii || sc->s[p] < 0x80) {
        *q = p + 1;
        *u = 1;
        return ascii_cls[sc->s[p] & 0x7F];
    }
    size_t i = p;
    uint32_t cp = sc__utf8_next(sc->s, sc->n, &i);
    *q = i;
    *u = cp < 0x10000 ? 1 : 2;
    return cp < 3 * 65536 ? plane_cls[cp] : classify_icu((UChar32)cp);
}

/* Word-rule states: the kind of the last base character taken. */
enum {
    P_NONE,
    P_A,
    P_H,
    P_N,
    P_K,
    P_E,
    P_Q /* Hebrew letter + single quote (WB7a) */
};

static inline int word_kind(uint8_t b)
{
    switch (b) {
    case C_ALETTER: return P_A;
    case C_HEBREW: return P_H;
    case C_NUMERIC: return P_N;
    case C_KATAKANA: return P_K;
    case C_EXTNUMLET: return P_E;
    default: return P_NONE;
    }
}

/* May a character of kind k directly follow state prev (WB5, 8, 9, 10, 13, 13a, 13b)? */
static inline bool joins(int prev, int k)
{
    if (k == P_NONE)
        return false;
    switch (prev) {
    case P_NONE:
    case P_E: return true;
    case P_K: return k == P_K || k == P_E;
    default: /* letters, numbers, Hebrew+quote */ return k != P_K;
    }
}

/* Lucene's WORD/NUMERIC rules from s: returns the end of the longest match of at most max_len
 * UTF-16 units, or s when there is none (a run of ExtendNumLet alone is no token). */
static inline __attribute__((always_inline)) size_t scan_word(const scan *sc, size_t s, bool ascii)
{
    size_t p = s, accept = s;
    uint32_t units = 0;
    int prev = P_NONE;
    bool seen_core = false;
    while (p < sc->n) {
        size_t q;
        uint32_t u;
        uint8_t c = BASE(cls_at(sc, p, &q, &u, ascii));
        if (!ascii && (c == C_EXTEND || c == C_ZWJ)) { /* WB4: X (Extend|Format|ZWJ)* -> X */
            if (units + u > sc->max_len)
                break;
            units += u;
            p = q;
            if (seen_core)
                accept = p;
            continue;
        }
        int k = word_kind(c);
        if (joins(prev, k)) {
            if (units + u > sc->max_len)
                break;
            units += u;
            p = q;
            prev = k;
            if (k != P_E)
                seen_core = true;
            if (k == P_A || k == P_N) {
                /* Fast path: ASCII letters and digits always join letters and digits (WB5,
                 * 8-10); also in the general path, where a non-ASCII byte ends the loop. */
                size_t lim = p + (sc->max_len - units);
                if (lim > sc->n)
                    lim = sc->n;
                size_t p0 = p;
                while (p < lim && ascii_alnum[sc->s[p]])
                    p++;
                if (p > p0) {
                    units += (uint32_t)(p - p0);
                    prev = ascii_cls[sc->s[p - 1]] == C_ALETTER ? P_A : P_N;
                }
            }
            if (seen_core)
                accept = p;
            continue;
        }
        bool mid_letter =
            (prev == P_A || prev == P_H) && (c == C_MIDLETTER || c == C_MIDNUMLET || c == C_SQUOTE);
        bool mid_num = prev == P_N && (c == C_MIDNUM || c == C_MIDNUMLET || c == C_SQUOTE);
        bool heb_dq = prev == P_H && c == C_DQUOTE;
        if (mid_letter || mid_num || heb_dq) {
            /* WB6/7, WB11/12, WB7b/c: the middle character joins only if a letter (number)
             * follows, ignoring Extend/Format/ZWJ after it. */
            size_t r = q, r2 = q;
            uint32_t uu = units + u, u2 = 0;
            uint8_t c2 = C_OTHER;
            while (r < sc->n) {
                c2 = BASE(cls_at(sc, r, &r2, &u2, ascii));
                if (ascii || (c2 != C_EXTEND && c2 != C_ZWJ))
                    break;
                uu += u2;
                r = r2;
            }
            if (r < sc->n) {
                int k2 = word_kind(c2);
                bool ok = mid_num ? k2 == P_N : heb_dq ? k2 == P_H : (k2 == P_A || k2 == P_H);
                if (ok && uu + u2 <= sc->max_len) {
                    units = uu + u2;
                    p = r2;
                    prev = k2;
                    accept = p;
                    continue;
                }
            }
        }
        if (prev == P_H && c == C_SQUOTE && units + u <= sc->max_len) { /* WB7a */
            units += u;
            p = q;
            prev = P_Q;
            accept = p;
            continue;
        }
        break;
    }
    return accept;
}

/* One base character of class want (Han, Hiragana) or a run of them (Complex_Context), each
 * followed by Extend/Format/ZWJ, within max_len units. */
static size_t scan_run(const scan *sc, size_t s, uint8_t want, bool run)
{
    size_t p = s, accept = s;
    uint32_t units = 0;
    bool first = true;
    while (p < sc->n) {
        size_t q;
        uint32_t u;
        uint8_t full = cls_at(sc, p, &q, &u, false), c = BASE(full);
        bool ext = (c == C_EXTEND || c == C_ZWJ) && !(first && want == C_COMPLEX);
        if (want == C_COMPLEX && (full & F_SA))
            c = C_COMPLEX; /* a Complex_Context mark can start or continue the run */
        if (!ext && (c != want || (!first && !run)))
            break;
        if (units + u > sc->max_len)
            break;
        units += u;
        p = accept = q;
        first = false;
    }
    return accept;
}

static inline bool is_keycap_base(uint8_t b)
{
    return (b >= '0' && b <= '9') || b == '#' || b == '*';
}

static inline bool is_cp(const scan *sc, size_t p, size_t q, uint32_t want)
{
    size_t i = p;
    return q - p > 1 && sc__utf8_next(sc->s, sc->n, &i) == want;
}

/* Takes one code point at *p if it fits under the cap. */
static inline bool take(const scan *sc, size_t *p, size_t q, uint32_t u, uint32_t *units)
{
    (void)sc;
    if (*units + u > sc->max_len)
        return false;
    *units += u;
    *p = q;
    return true;
}

/* Lucene's ExtFmtZwjSansPresSel*: Extend/Format/ZWJ except the presentation selectors. */
static size_t ex_run(const scan *sc, size_t p, uint32_t *units)
{
    size_t q;
    uint32_t u;
    while (p < sc->n) {
        uint8_t c = BASE(cls_at(sc, p, &q, &u, false));
        if ((c != C_EXTEND && c != C_ZWJ) || is_cp(sc, p, q, 0xFE0E) || is_cp(sc, p, q, 0xFE0F))
            break;
        if (!take(sc, &p, q, u, units))
            break;
    }
    return p;
}

/* One emoji element at p (UTS#51 as Lucene's grammar has it): an Extended_Pictographic
 * character + ExtFmtZwj (sans presentation selectors) + optional U+FE0F; a modifier base +
 * modifier; a lone modifier; or a keycap sequence. Tag characters are Extend, so tag sequences
 * are covered. Returns the end, or p when there is no element. */
static size_t emoji_element(const scan *sc, size_t p, uint32_t *units, bool *pict)
{
    size_t q, r, e;
    uint32_t u, u2;
    *pict = false;
    if (p >= sc->n)
        return p;
    uint8_t c = cls_at(sc, p, &q, &u, false);
    if (BASE(c) == C_EMOD) {
        if (!take(sc, &p, q, u, units))
            return p;
        return ex_run(sc, p, units);
    }
    if (c & F_PICT) {
        *pict = true;
        size_t i = p;
        uint32_t cp = sc__utf8_next(sc->s, sc->n, &i);
        bool mod_base = u_hasBinaryProperty((UChar32)cp, UCHAR_EMOJI_MODIFIER_BASE);
        if (!take(sc, &p, q, u, units))
            return p;
        e = ex_run(sc, p, units);
        if (e < sc->n) {
            uint8_t c2 = cls_at(sc, e, &r, &u2, false);
            if (mod_base && BASE(c2) == C_EMOD) {
                size_t m = e;
                if (take(sc, &m, r, u2, units))
                    return ex_run(sc, m, units);
                return e;
            }
            if (is_cp(sc, e, r, 0xFE0F) && take(sc, &e, r, u2, units))
                return e;
        }
        return e;
    }
    if (is_keycap_base(sc->s[p])) {
        /* base ExtFmtZwjSansPresSel* U+FE0F? U+20E3, longest match */
        uint32_t uu = *units + 1, best_units = 0;
        size_t t = q, best = p;
        while (t < sc->n) {
            uint8_t c2 = BASE(cls_at(sc, t, &r, &u2, false));
            if (is_cp(sc, t, r, 0xFE0F) && r < sc->n) {
                size_t r2;
                uint32_t u3;
                cls_at(sc, r, &r2, &u3, false);
                if (is_cp(sc, r, r2, 0x20E3) && uu + u2 + u3 <= sc->max_len) {
                    best = r2;
                    best_units = uu + u2 + u3;
                }
                break;
            }
            if ((c2 != C_EXTEND && c2 != C_ZWJ) || is_cp(sc, t, r, 0xFE0E) || uu + u2 > sc->max_len)
                break;
            uu += u2;
            if (is_cp(sc, t, r, 0x20E3)) {
                best = r;
                best_units = uu;
            }
            t = r;
        }
        if (best > p)
            *units = best_units;
        return best;
    }
    return p;
}

/* Emoji sequences: ZWJ* element (ZWJ element)*, or a regional-indicator pair (each indicator
 * with its Extend/Format/ZWJ). Returns the end of the longest match, or s. */
static size_t scan_emoji(const scan *sc, size_t s)
{
    size_t p = s, q, accept = s;
    uint32_t units = 0, u;
    uint8_t c = cls_at(sc, p, &q, &u, false);
    if (BASE(c) == C_RI) {
        for (int k = 0; k < 2; k++) {
            if (p >= sc->n || BASE(cls_at(sc, p, &q, &u, false)) != C_RI ||
                !take(sc, &p, q, u, &units))
                return accept;
            if (k == 1)
                accept = p;
            while (p < sc->n) {
                uint8_t t = BASE(cls_at(sc, p, &q, &u, false));
                if ((t != C_EXTEND && t != C_ZWJ) || !take(sc, &p, q, u, &units))
                    break;
                if (k == 1)
                    accept = p;
            }
        }
        return accept;
    }
    bool first = true, ends_zwj = false;
    for (;;) {
        /* ZWJ* before the element: the first one's, or the joining ZWJs */
        size_t z = p;
        uint32_t zu = units;
        while (z < sc->n && BASE(cls_at(sc, z, &q, &u, false)) == C_ZWJ && take(sc, &z, q, u, &zu))
            ;
        if (!first && z == p && !ends_zwj)
            break; /* elements join only across a ZWJ */
        uint32_t eu = zu, nz = 0;
        for (size_t i = p; i < z; i += 3)
            nz++;
        bool pict;
        size_t e = emoji_element(sc, z, &eu, &pict);
        if (e == z) {
            if (!first)
                accept = z; /* a sequence may end in ZWJs (Lucene: "0\u20E3\u200D" is one
                             * emoji token) */
            break;
        }
        /* Only pictographs (and modifier bases) take leading ZWJs; a lone modifier or a
         * keycap needs exactly the one joining ZWJ (or none at the start). */
        if (!pict && (first ? nz != 0 : nz != (ends_zwj ? 0u : 1u))) {
            if (!first)
                accept = z;
            break;
        }
        first = false;
        p = accept = e;
        units = eu;
        ends_zwj = e - z >= 3 && sc->s[e - 3] == 0xE2 && sc->s[e - 2] == 0x80 &&
                   sc->s[e - 1] == 0x8D; /* the element's Extend tail ended in U+200D */
    }
    return accept;
}

enum {
    RULE_WORD,
    RULE_IDEOGRAPHIC,
    RULE_HIRAGANA,
    RULE_SOUTHEAST_ASIAN,
    RULE_EMOJI
};

/* The type Lucene's grammar gives a match [s, e): for the word rule <NUM> when it holds no
 * letters, <HANGUL> or <KATAKANA> when it is only Hangul (Katakana) letters and their Extend
 * marks, else <ALPHANUM>. */
static inline __attribute__((always_inline)) sc_token_type type_of(const scan *sc, size_t s,
                                                                   size_t e, bool ascii, int rule)
{
    switch (rule) {
    case RULE_IDEOGRAPHIC: return SC_TOKEN_IDEOGRAPHIC;
    case RULE_HIRAGANA: return SC_TOKEN_HIRAGANA;
    case RULE_SOUTHEAST_ASIAN: return SC_TOKEN_SOUTHEAST_ASIAN;
    case RULE_EMOJI: return SC_TOKEN_EMOJI;
    default: break;
    }
    bool letter = false, hangul = false, kata = false, other = false;
    for (size_t p = s, q; p < e; p = q) {
        uint32_t u;
        uint8_t c = cls_at(sc, p, &q, &u, ascii);
        switch (BASE(c)) {
        case C_ALETTER:
        case C_HEBREW:
            if (c & F_HANGUL)
                hangul = true;
            else
                letter = true;
            break;
        case C_KATAKANA: kata = true; break;
        case C_EXTEND:
        case C_ZWJ: break;
        default: other = true; break;
        }
        if (ascii && letter)
            return SC_TOKEN_ALPHANUM;
    }
    if (!letter && !hangul && !kata)
        return SC_TOKEN_NUM;
    if (!letter && !other && hangul != kata)
        return hangul ? SC_TOKEN_HANGUL : SC_TOKEN_KATAKANA;
    return SC_TOKEN_ALPHANUM;
}

static inline __attribute__((always_inline)) sc_status
run_standard(const scan *sc, sc__raw_sink sink, void *ctx, bool ascii)
{
    size_t p = 0;
    while (p < sc->n) {
        if (ascii) {
            while (p < sc->n && !ascii_word_start[sc->s[p]])
                p++;
        } else {
            while (p < sc->n && ascii_skip[sc->s[p]])
                p++;
        }
        if (p == sc->n)
            break;
        size_t q;
        uint32_t u;
        uint8_t c = cls_at(sc, p, &q, &u, ascii);
        uint8_t b = BASE(c);
        size_t end = p;
        int rule = RULE_WORD;
        if (b >= C_ALETTER && b <= C_EXTNUMLET) {
            end = scan_word(sc, p, ascii);
        } else if (ascii) {
            p = q;
            continue;
        } else if (b == C_HAN || b == C_HIRAGANA) {
            end = scan_run(sc, p, b, false);
            rule = b == C_HAN ? RULE_IDEOGRAPHIC : RULE_HIRAGANA;
        } else if (b == C_COMPLEX || (c & F_SA)) {
            end = scan_run(sc, p, C_COMPLEX, true);
            rule = RULE_SOUTHEAST_ASIAN;
        }
        if (!ascii &&
            ((c & F_PICT) || b == C_EMOD || b == C_ZWJ || b == C_RI || is_keycap_base(sc->s[p]))) {
            size_t e2 = scan_emoji(sc, p);
            if (e2 > p && e2 >= end) { /* the emoji rule comes first in Lucene's grammar */
                end = e2;
                rule = RULE_EMOJI;
            }
        }
        if (end > p) {
            SC_TRY(sink(ctx, p, end, true, type_of(sc, p, end, ascii, rule)));
            p = end;
        } else {
            p = q; /* Lucene's [^] rule: skip one character */
        }
    }
    return SC_OK;
}

static sc_status run_standard_ascii(const scan *sc, sc__raw_sink sink, void *ctx)
{
    return run_standard(sc, sink, ctx, true);
}

static sc_status run_standard_generic(const scan *sc, sc__raw_sink sink, void *ctx)
{
    return run_standard(sc, sink, ctx, false);
}

sc_status sc__tokenize_standard(uint32_t max_len, sc_slice text, bool ascii_path, sc__raw_sink sink,
                                void *ctx)
{
    pthread_once(&cls_once, init_tables);
    scan sc = {text.ptr, text.len, max_len ? max_len : 1};
    return ascii_path ? run_standard_ascii(&sc, sink, ctx) : run_standard_generic(&sc, sink, ctx);
}

/* ---- CharTokenizer family ---------------------------------------------------------------- */

static inline bool java_is_whitespace(uint32_t cp)
{
    if (cp < 0x80)
        return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
    return u_isWhitespace((UChar32)cp);
}

static inline bool java_is_letter(uint32_t cp)
{
    if (cp < 0x80)
        return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    return u_isalpha((UChar32)cp) != 0 &&
           assigned_by((UChar32)cp, JAVA_UNICODE_MAJOR, JAVA_UNICODE_MINOR);
}

/* Lucene CharTokenizer: a token is a run of token characters, cut after the character that
 * brings it to >= max_len UTF-16 units. */
static sc_status run_char_tokenizer(sc__tokenizer_kind kind, uint32_t max_len, sc_slice text,
                                    sc__raw_sink sink, void *ctx)
{
    const uint8_t *s = text.ptr;
    size_t n = text.len, p = 0, start = 0;
    uint32_t len = 0;
    bool valid = true;
    while (p < n) {
        size_t q = p;
        uint32_t cp;
        bool ok = true;
        if (s[p] < 0x80) {
            cp = s[p];
            q = p + 1;
        } else {
            cp = sc__utf8_next(s, n, &q);
            ok = !(cp == 0xFFFD &&
                   !(q - p == 3 && s[p] == 0xEF && s[p + 1] == 0xBF && s[p + 2] == 0xBD));
        }
        bool tok = kind == SC__TOK_LETTER ? java_is_letter(cp) : !java_is_whitespace(cp);
        if (tok) {
            if (len == 0) {
                start = p;
                valid = true;
            }
            valid = valid && ok;
            len += cp >= 0x10000 ? 2 : 1;
            p = q;
            if (len >= max_len) {
                SC_TRY(sink(ctx, start, p, valid, SC_TOKEN_WORD));
                len = 0;
            }
        } else {
            if (len > 0) {
                SC_TRY(sink(ctx, start, p, valid, SC_TOKEN_WORD));
                len = 0;
            }
            p = q;
        }
    }
    if (len > 0)
        SC_TRY(sink(ctx, start, n, valid, SC_TOKEN_WORD));
    return SC_OK;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t p = 0;
    while (p < n) {
        if (s[p] < 0x80) {
            p++;
            continue;
        }
        size_t q = p;
        uint32_t cp = sc__utf8_next(s, n, &q);
        if (cp == 0xFFFD && !(q - p == 3 && s[p] == 0xEF && s[p + 1] == 0xBF && s[p + 2] == 0xBD))
            return false;
        p = q;
    }
    return true;
}

sc_status sc__tokenize(sc__tokenizer_kind kind, uint32_t max_len, sc_slice text, sc__raw_sink sink,
                       void *ctx)
{
    if (max_len == 0)
        max_len = SC__TEXT_MAX_TOKEN_LEN;
    switch (kind) {
    case SC__TOK_STANDARD:
        return sc__tokenize_standard(max_len, text, sc__text_is_ascii(text.ptr, text.len), sink,
                                     ctx);
    case SC__TOK_LETTER:
    case SC__TOK_WHITESPACE: return run_char_tokenizer(kind, max_len, text, sink, ctx);
    case SC__TOK_KEYWORD:
        return sink(ctx, 0, text.len, utf8_valid(text.ptr, text.len), SC_TOKEN_WORD);
    case SC__TOK_NGRAM:
    case SC__TOK_EDGE_NGRAM: {
        sc__tokenizer_opts o = {max_len, 1, 2, 0};
        return sc__tokenize_ngram(kind, &o, text, sink, ctx);
    }
    }
    return SC_EINVAL;
}
