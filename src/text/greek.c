/* Greek analysis as Lucene 8.7's GreekAnalyzer does it:
 *   lowercase with language greek   GreekLowerCaseFilter: Java lowercasing per code point,
 *                                   final sigma -> sigma, tonos and dialytika removed
 *   stemmer greek                   GreekStemmer, G. Ntais' stemmer ("Development of a
 *                                   Stemmer for the Greek Language", 2006): 22 suffix rules
 *                                   with exception lists, on lowercased, unaccented words
 * The stemmer works on code points (Greek is in the BMP: equal to Lucene's UTF-16 units). */
#include <string.h>

#include "text/internal.h"

/* ---- lowercase ----------------------------------------------------------------------------- */

static uint32_t greek_fold(uint32_t c)
{
    switch (c) {
    case 0x03C2: return 0x03C3; /* final sigma */
    case 0x0386:
    case 0x03AC: return 0x03B1;
    case 0x0388:
    case 0x03AD: return 0x03B5;
    case 0x0389:
    case 0x03AE: return 0x03B7;
    case 0x038A:
    case 0x03AA:
    case 0x03AF:
    case 0x03CA:
    case 0x0390: return 0x03B9;
    case 0x038E:
    case 0x03AB:
    case 0x03CD:
    case 0x03CB:
    case 0x03B0: return 0x03C5;
    case 0x038C:
    case 0x03CC: return 0x03BF;
    case 0x038F:
    case 0x03CE: return 0x03C9;
    case 0x03A2: return 0x03C2; /* reserved code point: Lucene's old mapping */
    default: return c;
    }
}

void sc__greek_lowercase(sc__term *t)
{
    /* the special forms first (all 2 bytes -> 2 bytes), then Java lowercasing of the rest,
     * which leaves the folded letters alone */
    size_t i = 0;
    while (i < t->len) {
        size_t at = i;
        uint32_t c = sc__utf8_next(t->buf, t->len, &i);
        uint32_t f = greek_fold(c);
        if (f != c)
            (void)sc_utf8_put(t->buf + at, f);
    }
    size_t half = t->cap / 2;
    if (t->len > half || t->len * 3 / 2 + 4 > t->cap - half)
        return;
    memcpy(t->buf + half, t->buf, t->len);
    t->len = sc__lowercase(t->buf, t->buf + half, t->len);
}

/* ---- stemmer helpers ----------------------------------------------------------------------- */

typedef struct word {
    uint32_t *s;
    int32_t len;
} word;

static int32_t decode(const char *u8, uint32_t *out, int32_t cap)
{
    size_t n = strlen(u8), i = 0;
    int32_t k = 0;
    while (i < n && k < cap)
        out[k++] = sc__utf8_next((const uint8_t *)u8, n, &i);
    return k;
}

static bool ew(const uint32_t *s, int32_t len, const char *suffix)
{
    uint32_t c[16];
    int32_t k = decode(suffix, c, 16);
    if (k > len)
        return false;
    for (int32_t j = 0; j < k; j++)
        if (s[len - k + j] != c[j])
            return false;
    return true;
}

/* True when s ends with one of the NULL-terminated list. */
static bool ew_any(const uint32_t *s, int32_t len, const char *const *list)
{
    for (; *list; list++)
        if (ew(s, len, *list))
            return true;
    return false;
}

/* True when s[0..len) is one of the NULL-terminated list (Lucene's exception sets). */
static bool is_one_of(const uint32_t *s, int32_t len, const char *const *list)
{
    for (; *list; list++) {
        uint32_t c[24];
        int32_t k = decode(*list, c, 24);
        if (k == len && memcmp(c, s, (size_t)len * sizeof(uint32_t)) == 0)
            return true;
    }
    return false;
}

static bool vowel(const uint32_t *s, int32_t len)
{
    if (len == 0)
        return false;
    switch (s[len - 1]) {
    case 0x03B1: /* α ε η ι ο υ ω */
    case 0x03B5:
    case 0x03B7:
    case 0x03B9:
    case 0x03BF:
    case 0x03C5:
    case 0x03C9: return true;
    default: return false;
    }
}

static bool vowel_no_y(const uint32_t *s, int32_t len)
{
    return vowel(s, len) && s[len - 1] != 0x03C5;
}

/* Writes the UTF-8 letters at s[len - n .. len) (the caller restored len). */
static void put_tail(uint32_t *s, int32_t len, const char *letters)
{
    uint32_t c[8];
    int32_t k = decode(letters, c, 8);
    for (int32_t j = 0; j < k; j++)
        s[len - k + j] = c[j];
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- the rules ----------------------------------------------------------------------------- */

/* Irregular nouns and the -ολογια family: fixed cuts. */
static int32_t rule0(const uint32_t *s, int32_t len)
{
    const struct {
        int32_t min; /* the word must be longer than this */
        int32_t cut;
        const char *const *suffixes;
    } r[] = {
        {9, 4, L("καθεστωτοσ", "καθεστωτων")},
        {8, 4, L("γεγονοτοσ", "γεγονοτων")},
        {8, 3, L("καθεστωτα")},
        {7, 4, L("τατογιου", "τατογιων")},
        {7, 3, L("γεγονοτα")},
        {7, 2, L("καθεστωσ")},
    };
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        if (len > r[i].min && ew_any(s, len, r[i].suffixes))
            return len - r[i].cut;
    /* Lucene tests the length only for the first of these (operator precedence): kept */
    if ((len > 6 && ew(s, len, "σκαγιου")) ||
        ew_any(s, len,
               L("σκαγιων", "ολογιου", "ολογιων", "κρεατοσ", "κρεατων", "περατοσ", "περατων",
                 "τερατοσ", "τερατων")))
        return len - 4;
    const struct {
        int32_t min, cut;
        const char *const *suffixes;
    } r2[] = {
        {6, 3, L("τατογια")},
        {6, 2, L("γεγονοσ")},
        {5, 4, L("φαγιου", "φαγιων", "σογιου", "σογιων")},
        {5, 3, L("σκαγια", "ολογια", "κρεατα", "περατα", "τερατα")},
        {4, 3, L("φαγια", "σογια", "φωτοσ", "φωτων")},
        {4, 2, L("κρεασ", "περασ", "τερασ")},
        {3, 2, L("φωτα")},
        {2, 1, L("φωσ")},
    };
    for (size_t i = 0; i < sizeof(r2) / sizeof(r2[0]); i++)
        if (len > r2[i].min && ew_any(s, len, r2[i].suffixes))
            return len - r2[i].cut;
    return len;
}

static int32_t rule1(const uint32_t *s, int32_t len)
{
    if (len > 4 && ew_any(s, len, L("αδεσ", "αδων"))) {
        len -= 4;
        if (!ew_any(
                s, len,
                L("οκ", "μαμ", "μαν", "μπαμπ", "πατερ", "γιαγι", "νταντ", "κυρ", "θει", "πεθερ")))
            len += 2; /* keep -αδ */
    }
    return len;
}

static int32_t rule2(const uint32_t *s, int32_t len)
{
    if (len > 4 && ew_any(s, len, L("εδεσ", "εδων"))) {
        len -= 4;
        if (ew_any(s, len, L("οπ", "ιπ", "εμπ", "υπ", "γηπ", "δαπ", "κρασπ", "μιλ")))
            len += 2; /* keep -εδ */
    }
    return len;
}

static int32_t rule3(const uint32_t *s, int32_t len)
{
    if (len > 5 && ew_any(s, len, L("ουδεσ", "ουδων"))) {
        len -= 5;
        if (ew_any(s, len,
                   L("αρκ", "καλιακ", "πεταλ", "λιχ", "πλεξ", "σκ", "σ", "φλ", "φρ", "βελ", "λουλ",
                     "χν", "σπ", "τραγ", "φε")))
            len += 3; /* keep -ουδ */
    }
    return len;
}

static int32_t rule4(const uint32_t *s, int32_t len)
{
    if (len > 3 && ew_any(s, len, L("εωσ", "εων"))) {
        len -= 3;
        if (is_one_of(s, len, L("θ", "δ", "ελ", "γαλ", "ν", "π", "ιδ", "παρ")))
            len++; /* keep -ε */
    }
    return len;
}

static int32_t rule5(const uint32_t *s, int32_t len)
{
    if (len > 2 && ew(s, len, "ια")) {
        len -= 2;
        if (vowel(s, len))
            len++;
    } else if (len > 3 && ew_any(s, len, L("ιου", "ιων"))) {
        len -= 3;
        if (vowel(s, len))
            len++;
    }
    return len;
}

static int32_t rule6(const uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 3 && ew_any(s, len, L("ικα", "ικο"))) {
        len -= 3;
        removed = true;
    } else if (len > 4 && ew_any(s, len, L("ικου", "ικων"))) {
        len -= 4;
        removed = true;
    }
    if (removed &&
        (vowel(s, len) ||
         is_one_of(s, len,
                   L("αλ", "αδ", "ενδ", "αμαν", "αμμοχαλ", "ηθ", "ανηθ", "αντιδ", "φυσ", "βρωμ",
                     "γερ", "εξωδ", "καλπ", "καλλιν", "καταδ", "μουλ", "μπαν", "μπαγιατ", "μπολ",
                     "μποσ", "νιτ", "ξικ", "συνομηλ", "πετσ", "πιτσ", "πικαντ", "πλιατσ", "ποστελν",
                     "πρωτοδ", "σερτ", "συναδ", "τσαμ", "υποδ", "φιλον", "φυλοδ", "χασ"))))
        len += 2; /* keep -ικ */
    return len;
}

static int32_t rule7(const uint32_t *s, int32_t len)
{
    if (len == 5 && ew(s, len, "αγαμε"))
        return len - 1;
    if (len > 7 && ew(s, len, "ηθηκαμε"))
        len -= 7;
    else if (len > 6 && ew(s, len, "ουσαμε"))
        len -= 6;
    else if (len > 5 && ew_any(s, len, L("αγαμε", "ησαμε", "ηκαμε")))
        len -= 5;
    if (len > 3 && ew(s, len, "αμε")) {
        len -= 3;
        if (is_one_of(s, len,
                      L("αναπ", "αποθ", "αποκ", "αποστ", "βουβ", "ξεθ", "ουλ", "πεθ", "πικρ", "ποτ",
                        "σιχ", "χ")))
            len += 2; /* keep -αμ */
    }
    return len;
}

static const char *const exc8b[] = {
    "βετερ",       "βουλκ",       "βραχμ",     "γ",        "δραδουμ", "θ",        "καλπουζ",
    "καστελ",      "κορμορ",      "λαοπλ",     "μωαμεθ",   "μ",       "μουσουλμ", "ν",
    "ουλ",         "π",           "πελεκ",     "πλ",       "πολισ",   "πορτολ",   "σαρακατσ",
    "σουλτ",       "τσαρλατ",     "ορφ",       "τσιγγ",    "τσοπ",    "φωτοστεφ", "χ",
    "ψυχοπλ",      "αγ",          "γαλ",       "γερ",      "δεκ",     "διπλ",     "αμερικαν",
    "ουρ",         "πιθ",         "πουριτ",    "σ",        "ζωντ",    "ικ",       "καστ",
    "κοπ",         "λιχ",         "λουθηρ",    "μαιντ",    "μελ",     "σιγ",      "σπ",
    "στεγ",        "τραγ",        "τσαγ",      "φ",        "ερ",      "αδαπ",     "αθιγγ",
    "αμηχ",        "ανικ",        "ανοργ",     "απηγ",     "απιθ",    "ατσιγγ",   "βασ",
    "βασκ",        "βαθυγαλ",     "βιομηχ",    "βραχυκ",   "διατ",    "διαφ",     "ενοργ",
    "θυσ",         "καπνοβιομηχ", "καταγαλ",   "κλιβ",     "κοιλαρφ", "λιβ",      "μεγλοβιομηχ",
    "μικροβιομηχ", "νταβ",        "ξηροκλιβ",  "ολιγοδαμ", "ολογαλ",  "πενταρφ",  "περηφ",
    "περιτρ",      "πλατ",        "πολυδαπ",   "πολυμηχ",  "στεφ",    "ταβ",      "τετ",
    "υπερηφ",      "υποκοπ",      "χαμηλοδαπ", "ψηλοταβ",  NULL};

static int32_t rule8(uint32_t *s, int32_t len)
{
    bool removed = false;
    /* as in Lucene, the length test binds to the first suffix of each group only */
    if (len > 8 && ew(s, len, "ιουντανε")) {
        len -= 8;
        removed = true;
    } else if ((len > 7 && ew(s, len, "ιοντανε")) || ew_any(s, len, L("ουντανε", "ηθηκανε"))) {
        len -= 7;
        removed = true;
    } else if ((len > 6 && ew(s, len, "ιοτανε")) || ew_any(s, len, L("οντανε", "ουσανε"))) {
        len -= 6;
        removed = true;
    } else if ((len > 5 && ew(s, len, "αγανε")) || ew_any(s, len, L("ησανε", "οτανε", "ηκανε"))) {
        len -= 5;
        removed = true;
    }
    if (removed && is_one_of(s, len, L("τρ", "τσ"))) {
        len += 4; /* -αγαν (more than 4 letters were removed: the room is there) */
        put_tail(s, len, "αγαν");
    }
    if (len > 3 && ew(s, len, "ανε")) {
        len -= 3;
        if (vowel_no_y(s, len) || is_one_of(s, len, exc8b))
            len += 2; /* keep -αν */
    }
    return len;
}

static int32_t rule9(const uint32_t *s, int32_t len)
{
    if (len > 5 && ew(s, len, "ησετε"))
        len -= 5;
    if (len > 3 && ew(s, len, "ετε")) {
        len -= 3;
        if (is_one_of(s, len,
                      L("αβαρ", "βεν", "εναρ", "αβρ", "αδ", "αθ", "αν", "απλ", "βαρον", "ντρ", "σκ",
                        "κοπ", "μπορ", "νιφ", "παγ", "παρακαλ", "σερπ", "σκελ", "συρφ", "τοκ", "υ",
                        "δ", "εμ", "θαρρ", "θ")) ||
            vowel_no_y(s, len) ||
            ew_any(s, len,
                   L("οδ", "αιρ", "φορ", "ταθ", "διαθ", "σχ", "ενδ", "ευρ", "τιθ", "υπερθ", "ραθ",
                     "ενθ", "ροθ", "σθ", "πυρ", "αιν", "συνδ", "συν", "συνθ", "χωρ", "πον", "βρ",
                     "καθ", "ευθ", "εκθ", "νετ", "ρον", "αρκ", "βαρ", "βολ", "ωφελ")))
            len += 2; /* keep -ετ */
    }
    return len;
}

static int32_t rule10(uint32_t *s, int32_t len)
{
    if (len > 5 && ew_any(s, len, L("οντασ", "ωντασ"))) {
        len -= 5;
        if (len == 3 && ew(s, len, "αρχ")) {
            len += 3; /* -οντ */
            s[len - 3] = 0x03BF;
        }
        if (ew(s, len, "κρε")) {
            len += 3; /* -ωντ */
            s[len - 3] = 0x03C9;
        }
    }
    return len;
}

static int32_t rule11(uint32_t *s, int32_t len)
{
    if (len > 6 && ew(s, len, "ομαστε")) {
        len -= 6;
        if (len == 2 && ew(s, len, "ον"))
            len += 5; /* keep -ομαστ */
    } else if (len > 7 && ew(s, len, "ιομαστε")) {
        len -= 7;
        if (len == 2 && ew(s, len, "ον")) {
            len += 5;
            put_tail(s, len, "ομαστ");
        }
    }
    return len;
}

static int32_t rule12(const uint32_t *s, int32_t len)
{
    if (len > 5 && ew(s, len, "ιεστε")) {
        len -= 5;
        if (is_one_of(s, len, L("π", "απ", "συμπ", "ασυμπ", "ακαταπ", "αμεταμφ")))
            len += 4; /* keep -ιεστ */
    }
    if (len > 4 && ew(s, len, "εστε")) {
        len -= 4;
        if (is_one_of(s, len, L("αλ", "αρ", "εκτελ", "ζ", "μ", "ξ", "παρακαλ", "προ", "νισ")))
            len += 3; /* keep -εστ */
    }
    return len;
}

static int32_t rule13(const uint32_t *s, int32_t len)
{
    if (len > 6 && ew(s, len, "ηθηκεσ"))
        len -= 6;
    else if (len > 5 && ew_any(s, len, L("ηθηκα", "ηθηκε")))
        len -= 5;
    bool removed = false;
    if (len > 4 && ew(s, len, "ηκεσ")) {
        len -= 4;
        removed = true;
    } else if (len > 3 && ew_any(s, len, L("ηκα", "ηκε"))) {
        len -= 3;
        removed = true;
    }
    if (removed && (is_one_of(s, len, L("διαθ", "θ", "παρακαταθ", "προσθ", "συνθ")) ||
                    ew_any(s, len, L("σκωλ", "σκουλ", "ναρθ", "σφ", "οθ", "πιθ"))))
        len += 2; /* keep -ηκ */
    return len;
}

static int32_t rule14(const uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 5 && ew(s, len, "ουσεσ")) {
        len -= 5;
        removed = true;
    } else if (len > 4 && ew_any(s, len, L("ουσα", "ουσε"))) {
        len -= 4;
        removed = true;
    }
    if (removed &&
        (is_one_of(s, len,
                   L("φαρμακ", "χαδ", "αγκ", "αναρρ", "βρομ", "εκλιπ", "λαμπιδ", "λεχ", "μ", "πατ",
                     "ρ", "λ", "μεδ", "μεσαζ", "υποτειν", "αμ", "αιθ", "ανηκ", "δεσποζ", "ενδιαφερ",
                     "δε", "δευτερευ", "καθαρευ", "πλε", "τσα")) ||
         vowel(s, len) ||
         ew_any(s, len,
                L("ποδαρ", "βλεπ", "πανταχ", "φρυδ", "μαντιλ", "μαλλ", "κυματ", "λαχ", "ληγ", "φαγ",
                  "ομ", "πρωτ"))))
        len += 3; /* keep -ουσ */
    return len;
}

static int32_t rule15(const uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 4 && ew(s, len, "αγεσ")) {
        len -= 4;
        removed = true;
    } else if (len > 3 && ew_any(s, len, L("αγα", "αγε"))) {
        len -= 3;
        removed = true;
    }
    if (removed) {
        bool keep =
            is_one_of(s, len,
                      L("αβαστ", "πολυφ", "αδηφ", "παμφ", "ρ", "ασπ", "αφ", "αμαλ", "αμαλλι",
                        "ανυστ", "απερ", "ασπαρ", "αχαρ", "δερβεν", "δροσοπ", "ξεφ", "νεοπ",
                        "νομοτ", "ολοπ", "ομοτ", "προστ", "προσωποπ", "συμπ", "συντ", "τ", "υποτ",
                        "χαρ", "αειπ", "αιμοστ", "ανυπ", "αποτ", "αρτιπ", "διατ", "εν", "επιτ",
                        "κροκαλοπ", "σιδηροπ", "λ", "ναυ", "ουλαμ", "ουρ", "π", "τρ", "μ")) ||
            ew_any(s, len, L("οφ", "πελ", "χορτ", "λλ", "σφ", "ρπ", "φρ", "πρ", "λοχ", "σμην"));
        bool unless = is_one_of(s, len, L("ψοφ", "ναυλοχ")) || ew(s, len, "κολλ");
        if (keep && !unless)
            len += 2; /* keep -αγ */
    }
    return len;
}

static int32_t rule16(const uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 4 && ew(s, len, "ησου")) {
        len -= 4;
        removed = true;
    } else if (len > 3 && ew_any(s, len, L("ησε", "ησα"))) {
        len -= 3;
        removed = true;
    }
    if (removed && is_one_of(s, len, L("ν", "χερσον", "δωδεκαν", "ερημον", "μεγαλον", "επταν")))
        len += 2; /* keep -ησ */
    return len;
}

static int32_t rule17(const uint32_t *s, int32_t len)
{
    if (len > 4 && ew(s, len, "ηστε")) {
        len -= 4;
        if (is_one_of(
                s, len,
                L("ασβ", "σβ", "αχρ", "χρ", "απλ", "αειμν", "δυσχρ", "ευχρ", "κοινοχρ", "παλιμψ")))
            len += 3; /* keep -ηστ */
    }
    return len;
}

static int32_t rule18(uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 6 && ew_any(s, len, L("ησουνε", "ηθουνε"))) {
        len -= 6;
        removed = true;
    } else if (len > 4 && ew(s, len, "ουνε")) {
        len -= 4;
        removed = true;
    }
    if (removed && is_one_of(s, len, L("ν", "ρ", "σπι", "στραβομουτσ", "κακομουτσ", "εξων"))) {
        len += 3;
        put_tail(s, len, "ουν");
    }
    return len;
}

static int32_t rule19(uint32_t *s, int32_t len)
{
    bool removed = false;
    if (len > 6 && ew_any(s, len, L("ησουμε", "ηθουμε"))) {
        len -= 6;
        removed = true;
    } else if (len > 4 && ew(s, len, "ουμε")) {
        len -= 4;
        removed = true;
    }
    if (removed &&
        is_one_of(s, len, L("παρασουσ", "φ", "χ", "ωριοπλ", "αζ", "αλλοσουσ", "ασουσ"))) {
        len += 3;
        put_tail(s, len, "ουμ");
    }
    return len;
}

static int32_t rule20(const uint32_t *s, int32_t len)
{
    if (len > 5 && ew_any(s, len, L("ματων", "ματοσ")))
        len -= 3;
    else if (len > 4 && ew(s, len, "ματα"))
        len -= 2;
    return len;
}

/* The long list of inflectional endings, tried only when no rule above changed the word. */
static int32_t rule21(const uint32_t *s, int32_t len)
{
    const struct {
        int32_t n;
        const char *const *suffixes;
    } r[] = {
        {9, L("ιοντουσαν")},
        {8, L("ιομασταν", "ιοσασταν", "ιουμαστε", "οντουσαν")},
        {7, L("ιεμαστε", "ιεσαστε", "ιομουνα", "ιοσαστε", "ιοσουνα", "ιουνται", "ιουνταν",
              "ηθηκατε", "ομασταν", "οσασταν", "ουμαστε")},
        {6, L("ιομουν", "ιονταν", "ιοσουν", "ηθειτε", "ηθηκαν", "ομουνα", "οσαστε", "οσουνα",
              "ουνται", "ουνταν", "ουσατε")},
        {5, L("αγατε", "ιεμαι", "ιεται", "ιεσαι", "ιοταν", "ιουμα", "ηθεισ", "ηθουν", "ηκατε",
              "ησατε", "ησουν", "ομουν", "ονται", "ονταν", "οσουν", "ουμαι", "ουσαν")},
        {4, L("αγαν", "αμαι", "ασαι", "αται", "ειτε", "εσαι", "εται", "ηδεσ", "ηδων", "ηθει",
              "ηκαν", "ησαν", "ησει", "ησεσ", "ομαι", "οταν")},
        {3, L("αει", "εισ", "ηθω", "ησω", "ουν", "ουσ")},
        {2, L("αν", "ασ", "αω", "ει", "εσ", "ησ", "οι", "οσ", "ου", "υσ", "ων")},
    };
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        if (len > r[i].n && ew_any(s, len, r[i].suffixes))
            return len - r[i].n;
    if (len > 1 && vowel(s, len))
        return len - 1;
    return len;
}

/* Comparatives and superlatives. */
static int32_t rule22(const uint32_t *s, int32_t len)
{
    if (ew_any(s, len, L("εστερ", "εστατ")))
        return len - 5;
    if (ew_any(s, len, L("οτερ", "οτατ", "υτερ", "υτατ", "ωτερ", "ωτατ")))
        return len - 4;
    return len;
}

int32_t sc__greek_stem(uint32_t *s, int32_t len)
{
    if (len < 4)
        return len;
    int32_t orig = len;
    len = rule0(s, len);
    len = rule1(s, len);
    len = rule2(s, len);
    len = rule3(s, len);
    len = rule4(s, len);
    len = rule5(s, len);
    len = rule6(s, len);
    len = rule7(s, len);
    len = rule8(s, len);
    len = rule9(s, len);
    len = rule10(s, len);
    len = rule11(s, len);
    len = rule12(s, len);
    len = rule13(s, len);
    len = rule14(s, len);
    len = rule15(s, len);
    len = rule16(s, len);
    len = rule17(s, len);
    len = rule18(s, len);
    len = rule19(s, len);
    len = rule20(s, len);
    if (len == orig)
        len = rule21(s, len);
    return rule22(s, len);
}
