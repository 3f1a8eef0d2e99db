/* The `html_strip` char filter: Lucene 8.7 HTMLStripCharFilter's behaviour, written as a small
 * hand-made scanner over UTF-16 (charfilter.c runs it and maps offsets back):
 *   - tags are removed; inline elements (b, i, span, ...) leave nothing, every other element
 *     (p, div, br, td, unknown names...) leaves one newline; escaped_tags stay as they are;
 *   - comments, <!...> declarations, <?...?> instructions, and script/style bodies are removed
 *     (script and style leave one newline); CDATA sections keep their text;
 *   - character references (&amp; the 253 HTML 4 names and &apos;, AMP/COPY/GT/LT/QUOT/REG,
 *     &#nnn; &#xhh; and UTF-16 surrogate pairs written as two references) are decoded; the
 *     semicolon may be left out only at the end of the text;
 *   - anything that does not complete (a '<' with no tag after it, an unknown entity) stays.
 * Offset corrections are recorded exactly where Lucene records them, so token offsets equal
 * Lucene's. */
#include <string.h>
#include <strings.h>
#include <unicode/uchar.h>

#include "text/internal.h"

typedef struct entity {
    const char *name;
    uint16_t value;
} entity;

/* Sorted by name (byte order) for bsearch-free prefix scanning; HTML 4.01's entities. */
static const entity entities[] = {
    {"AElig", 0x00C6},    {"AMP", 0x0026},     {"Aacute", 0x00C1},  {"Acirc", 0x00C2},
    {"Agrave", 0x00C0},   {"Alpha", 0x0391},   {"Aring", 0x00C5},   {"Atilde", 0x00C3},
    {"Auml", 0x00C4},     {"Beta", 0x0392},    {"COPY", 0x00A9},    {"Ccedil", 0x00C7},
    {"Chi", 0x03A7},      {"Dagger", 0x2021},  {"Delta", 0x0394},   {"ETH", 0x00D0},
    {"Eacute", 0x00C9},   {"Ecirc", 0x00CA},   {"Egrave", 0x00C8},  {"Epsilon", 0x0395},
    {"Eta", 0x0397},      {"Euml", 0x00CB},    {"GT", 0x003E},      {"Gamma", 0x0393},
    {"Iacute", 0x00CD},   {"Icirc", 0x00CE},   {"Igrave", 0x00CC},  {"Iota", 0x0399},
    {"Iuml", 0x00CF},     {"Kappa", 0x039A},   {"LT", 0x003C},      {"Lambda", 0x039B},
    {"Mu", 0x039C},       {"Ntilde", 0x00D1},  {"Nu", 0x039D},      {"OElig", 0x0152},
    {"Oacute", 0x00D3},   {"Ocirc", 0x00D4},   {"Ograve", 0x00D2},  {"Omega", 0x03A9},
    {"Omicron", 0x039F},  {"Oslash", 0x00D8},  {"Otilde", 0x00D5},  {"Ouml", 0x00D6},
    {"Phi", 0x03A6},      {"Pi", 0x03A0},      {"Prime", 0x2033},   {"Psi", 0x03A8},
    {"QUOT", 0x0022},     {"REG", 0x00AE},     {"Rho", 0x03A1},     {"Scaron", 0x0160},
    {"Sigma", 0x03A3},    {"THORN", 0x00DE},   {"Tau", 0x03A4},     {"Theta", 0x0398},
    {"Uacute", 0x00DA},   {"Ucirc", 0x00DB},   {"Ugrave", 0x00D9},  {"Upsilon", 0x03A5},
    {"Uuml", 0x00DC},     {"Xi", 0x039E},      {"Yacute", 0x00DD},  {"Yuml", 0x0178},
    {"Zeta", 0x0396},     {"aacute", 0x00E1},  {"acirc", 0x00E2},   {"acute", 0x00B4},
    {"aelig", 0x00E6},    {"agrave", 0x00E0},  {"alefsym", 0x2135}, {"alpha", 0x03B1},
    {"amp", 0x0026},      {"and", 0x2227},     {"ang", 0x2220},     {"apos", 0x0027},
    {"aring", 0x00E5},    {"asymp", 0x2248},   {"atilde", 0x00E3},  {"auml", 0x00E4},
    {"bdquo", 0x201E},    {"beta", 0x03B2},    {"brvbar", 0x00A6},  {"bull", 0x2022},
    {"cap", 0x2229},      {"ccedil", 0x00E7},  {"cedil", 0x00B8},   {"cent", 0x00A2},
    {"chi", 0x03C7},      {"circ", 0x02C6},    {"clubs", 0x2663},   {"cong", 0x2245},
    {"copy", 0x00A9},     {"crarr", 0x21B5},   {"cup", 0x222A},     {"curren", 0x00A4},
    {"dArr", 0x21D3},     {"dagger", 0x2020},  {"darr", 0x2193},    {"deg", 0x00B0},
    {"delta", 0x03B4},    {"diams", 0x2666},   {"divide", 0x00F7},  {"eacute", 0x00E9},
    {"ecirc", 0x00EA},    {"egrave", 0x00E8},  {"empty", 0x2205},   {"emsp", 0x2003},
    {"ensp", 0x2002},     {"epsilon", 0x03B5}, {"equiv", 0x2261},   {"eta", 0x03B7},
    {"eth", 0x00F0},      {"euml", 0x00EB},    {"euro", 0x20AC},    {"exist", 0x2203},
    {"fnof", 0x0192},     {"forall", 0x2200},  {"frac12", 0x00BD},  {"frac14", 0x00BC},
    {"frac34", 0x00BE},   {"frasl", 0x2044},   {"gamma", 0x03B3},   {"ge", 0x2265},
    {"gt", 0x003E},       {"hArr", 0x21D4},    {"harr", 0x2194},    {"hearts", 0x2665},
    {"hellip", 0x2026},   {"iacute", 0x00ED},  {"icirc", 0x00EE},   {"iexcl", 0x00A1},
    {"igrave", 0x00EC},   {"image", 0x2111},   {"infin", 0x221E},   {"int", 0x222B},
    {"iota", 0x03B9},     {"iquest", 0x00BF},  {"isin", 0x2208},    {"iuml", 0x00EF},
    {"kappa", 0x03BA},    {"lArr", 0x21D0},    {"lambda", 0x03BB},  {"lang", 0x2329},
    {"laquo", 0x00AB},    {"larr", 0x2190},    {"lceil", 0x2308},   {"ldquo", 0x201C},
    {"le", 0x2264},       {"lfloor", 0x230A},  {"lowast", 0x2217},  {"loz", 0x25CA},
    {"lrm", 0x200E},      {"lsaquo", 0x2039},  {"lsquo", 0x2018},   {"lt", 0x003C},
    {"macr", 0x00AF},     {"mdash", 0x2014},   {"micro", 0x00B5},   {"middot", 0x00B7},
    {"minus", 0x2212},    {"mu", 0x03BC},      {"nabla", 0x2207},   {"nbsp", 0x0020},
    {"ndash", 0x2013},    {"ne", 0x2260},      {"ni", 0x220B},      {"not", 0x00AC},
    {"notin", 0x2209},    {"nsub", 0x2284},    {"ntilde", 0x00F1},  {"nu", 0x03BD},
    {"oacute", 0x00F3},   {"ocirc", 0x00F4},   {"oelig", 0x0153},   {"ograve", 0x00F2},
    {"oline", 0x203E},    {"omega", 0x03C9},   {"omicron", 0x03BF}, {"oplus", 0x2295},
    {"or", 0x2228},       {"ordf", 0x00AA},    {"ordm", 0x00BA},    {"oslash", 0x00F8},
    {"otilde", 0x00F5},   {"otimes", 0x2297},  {"ouml", 0x00F6},    {"para", 0x00B6},
    {"part", 0x2202},     {"permil", 0x2030},  {"perp", 0x22A5},    {"phi", 0x03C6},
    {"pi", 0x03C0},       {"piv", 0x03D6},     {"plusmn", 0x00B1},  {"pound", 0x00A3},
    {"prime", 0x2032},    {"prod", 0x220F},    {"prop", 0x221D},    {"psi", 0x03C8},
    {"quot", 0x0022},     {"rArr", 0x21D2},    {"radic", 0x221A},   {"rang", 0x232A},
    {"raquo", 0x00BB},    {"rarr", 0x2192},    {"rceil", 0x2309},   {"rdquo", 0x201D},
    {"real", 0x211C},     {"reg", 0x00AE},     {"rfloor", 0x230B},  {"rho", 0x03C1},
    {"rlm", 0x200F},      {"rsaquo", 0x203A},  {"rsquo", 0x2019},   {"sbquo", 0x201A},
    {"scaron", 0x0161},   {"sdot", 0x22C5},    {"sect", 0x00A7},    {"shy", 0x00AD},
    {"sigma", 0x03C3},    {"sigmaf", 0x03C2},  {"sim", 0x223C},     {"spades", 0x2660},
    {"sub", 0x2282},      {"sube", 0x2286},    {"sum", 0x2211},     {"sup", 0x2283},
    {"sup1", 0x00B9},     {"sup2", 0x00B2},    {"sup3", 0x00B3},    {"supe", 0x2287},
    {"szlig", 0x00DF},    {"tau", 0x03C4},     {"there4", 0x2234},  {"theta", 0x03B8},
    {"thetasym", 0x03D1}, {"thinsp", 0x2009},  {"thorn", 0x00FE},   {"tilde", 0x02DC},
    {"times", 0x00D7},    {"trade", 0x2122},   {"uArr", 0x21D1},    {"uacute", 0x00FA},
    {"uarr", 0x2191},     {"ucirc", 0x00FB},   {"ugrave", 0x00F9},  {"uml", 0x00A8},
    {"upsih", 0x03D2},    {"upsilon", 0x03C5}, {"uuml", 0x00FC},    {"weierp", 0x2118},
    {"xi", 0x03BE},       {"yacute", 0x00FD},  {"yen", 0x00A5},     {"yuml", 0x00FF},
    {"zeta", 0x03B6},     {"zwj", 0x200D},     {"zwnj", 0x200C},
};
#define N_ENTITIES (sizeof(entities) / sizeof(entities[0]))

/* Lucene's inline elements: their tags leave nothing (the others leave a newline). */
static const char *const inline_tags[] = {
    "a",      "abbr", "acronym", "b",        "basefont", "bdo",   "big",   "cite",
    "code",   "dfn",  "em",      "font",     "i",        "img",   "input", "kbd",
    "label",  "q",    "s",       "samp",     "select",   "small", "span",  "strike",
    "strong", "sub",  "sup",     "textarea", "tt",       "u",     "var",
};

/* Lucene's event attributes (on...="..."), whose quoted values may hold '<' and '>'. */
static const char *const event_suffixes[] = {
    "abort",     "blur",     "change", "click",  "dblclick",  "error",     "focus",
    "keydown",   "keypress", "keyup",  "load",   "mousedown", "mousemove", "mouseout",
    "mouseover", "mouseup",  "reset",  "select", "submit",    "unload",
};

typedef struct scan {
    const sc__html_opts *o;
    const uint16_t *in;
    int32_t n;
    sc__ubuf *out;
    struct sc__corr *c;
    int32_t cum; /* Lucene's cumulativeDiff */
    bool nomem;
} scan;

static bool is_ws(uint16_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B;
}

static uint16_t lower_ascii(uint16_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint16_t)(c | 0x20) : c;
}

/* in[p..) starts with the ASCII word w, ignoring case. */
static bool starts_ci(const scan *s, int32_t p, const char *w)
{
    for (int32_t k = 0; w[k]; k++)
        if (p + k >= s->n || lower_ascii(s->in[p + k]) != (uint16_t)w[k])
            return false;
    return true;
}

static bool starts(const scan *s, int32_t p, const char *w)
{
    for (int32_t k = 0; w[k]; k++)
        if (p + k >= s->n || s->in[p + k] != (uint16_t)w[k])
            return false;
    return true;
}

static int32_t skip_ws(const scan *s, int32_t p)
{
    while (p < s->n && is_ws(s->in[p]))
        p++;
    return p;
}

static void emit(scan *s, const uint16_t *u, int32_t n)
{
    if (!s->nomem && !sc__ubuf_put(s->out, u, n))
        s->nomem = true;
}

static void corr(scan *s, int32_t off)
{
    if (!s->nomem && !sc__corr_add(s->c, off, s->cum))
        s->nomem = true;
}

/* Drops in[from..to) entirely. */
static void drop(scan *s, int32_t from, int32_t to)
{
    s->cum += to - from;
    corr(s, s->out->len);
}

/* Replaces in[from..to) with the units u[0..k). */
static void substitute(scan *s, int32_t from, int32_t to, const uint16_t *u, int32_t k)
{
    s->cum += to - from - k;
    emit(s, u, k);
    corr(s, s->out->len);
}

static uint32_t code_point_at(const scan *s, int32_t p, int32_t *w)
{
    uint16_t c = s->in[p];
    *w = 1;
    if (c >= 0xD800 && c <= 0xDBFF && p + 1 < s->n && s->in[p + 1] >= 0xDC00 &&
        s->in[p + 1] <= 0xDFFF) {
        *w = 2;
        return 0x10000 + ((uint32_t)(c - 0xD800) << 10) + (uint32_t)(s->in[p + 1] - 0xDC00);
    }
    return c;
}

/* XML Name at p (':' '_' ID_Start, then '-' '.' ':' '_' ID_Continue); returns its end (p when
 * there is none). */
static int32_t name_end(const scan *s, int32_t p)
{
    int32_t q = p;
    while (q < s->n) {
        int32_t w;
        uint32_t cp = code_point_at(s, q, &w);
        bool ok = q == p
                      ? cp == ':' || cp == '_' || u_hasBinaryProperty((UChar32)cp, UCHAR_ID_START)
                      : cp == '-' || cp == '.' || cp == ':' || cp == '_' ||
                            u_hasBinaryProperty((UChar32)cp, UCHAR_ID_CONTINUE);
        if (!ok)
            break;
        q += w;
    }
    return q;
}

static bool name_is(const scan *s, int32_t p, int32_t e, const char *w)
{
    return (int32_t)strlen(w) == e - p && starts_ci(s, p, w);
}

static bool is_inline(const scan *s, int32_t p, int32_t e)
{
    for (size_t i = 0; i < sizeof(inline_tags) / sizeof(inline_tags[0]); i++)
        if (name_is(s, p, e, inline_tags[i]))
            return true;
    return false;
}

static bool is_escaped(const scan *s, int32_t p, int32_t e)
{
    for (size_t i = 0; i < s->o->n_tags; i++) {
        if (s->o->tag_lens[i] != e - p)
            continue;
        int32_t k = 0;
        while (k < e - p && u_tolower(s->in[p + k]) == s->o->tags[i][k])
            k++;
        if (k == e - p)
            return true;
    }
    return false;
}

/* A quoted string at p (which holds the quote); backslash escapes the next unit. Returns the
 * index after the closing quote, or -1. */
static int32_t quoted_end(const scan *s, int32_t p)
{
    uint16_t q = s->in[p];
    for (int32_t k = p + 1; k < s->n; k++) {
        if (s->in[k] == '\\')
            k++;
        else if (s->in[k] == q)
            return k + 1;
    }
    return -1;
}

/* A server-side include "<!--#...-->" at p (quotes skipped); returns its end or -1. */
static int32_t ssi_end(const scan *s, int32_t p)
{
    for (int32_t k = p + 5; k < s->n;) {
        if (starts(s, k, "-->"))
            return k + 3;
        if (s->in[k] == '\'' || s->in[k] == '"') {
            int32_t e = quoted_end(s, k);
            if (e < 0)
                return -1;
            k = e;
        } else {
            k++;
        }
    }
    return -1;
}

/* An event attribute on<event> \s* = \s* "quoted" at p; returns its end or -1. */
static int32_t event_attr_end(const scan *s, int32_t p)
{
    if (!starts_ci(s, p, "on"))
        return -1;
    for (size_t i = 0; i < sizeof(event_suffixes) / sizeof(event_suffixes[0]); i++) {
        if (!starts_ci(s, p + 2, event_suffixes[i]))
            continue;
        int32_t q = skip_ws(s, p + 2 + (int32_t)strlen(event_suffixes[i]));
        if (q >= s->n || s->in[q] != '=')
            return -1;
        q = skip_ws(s, q + 1);
        if (q >= s->n || (s->in[q] != '"' && s->in[q] != '\''))
            return -1;
        return quoted_end(s, q);
    }
    return -1;
}

/* Content of a start tag from p up to and including its '>': [^<>], event attributes and
 * server-side includes, the longest reading that ends at a '>' (as JFlex's longest match: a
 * quoted event attribute may hold '>' and '<', or end the tag at a '>' inside its quotes when
 * the longer reading fails). Returns the index after '>' or -1. Sweeps forward over the
 * positions some reading reaches, so the work is linear in the region the tag can span. */
static int32_t tag_content_end(const scan *s, int32_t p)
{
    uint8_t stack[256];
    uint8_t *reach = stack;
    int32_t cap = (int32_t)sizeof(stack), frontier = p, best = -1;
    memset(stack, 0, sizeof(stack));
    reach[0] = 1;
    for (int32_t q = p; q <= frontier && q < s->n; q++) {
        if (!reach[q - p])
            continue;
        int32_t next[3] = {-1, -1, -1};
        uint16_t c = s->in[q];
        if (c == '>')
            best = q + 1;
        else if (c != '<')
            next[0] = q + 1;
        if (c == '<' && starts(s, q, "<!--#"))
            next[1] = ssi_end(s, q);
        if (c == 'o' || c == 'O')
            next[2] = event_attr_end(s, q);
        for (int k = 0; k < 3; k++) {
            int32_t t = next[k];
            if (t < 0 || t > s->n)
                continue;
            if (t - p >= cap) {
                int32_t nc = cap;
                while (t - p >= nc)
                    nc *= 2;
                uint8_t *nr = sc_alloc_malloc(&sc__text_pool, (size_t)nc);
                if (!nr)
                    continue; /* out of memory: that reading is not followed */
                memcpy(nr, reach, (size_t)cap);
                memset(nr + cap, 0, (size_t)(nc - cap));
                if (reach != stack)
                    sc_alloc_free(&sc__text_pool, reach);
                reach = nr;
                cap = nc;
            }
            reach[t - p] = 1;
            if (t > frontier)
                frontier = t;
        }
    }
    if (reach != stack)
        sc_alloc_free(&sc__text_pool, reach);
    return best;
}

/* The tail of a start tag after its name: ( ("=" \s* | \s+) content )? \s* "/"? ">". */
static int32_t start_tail_end(const scan *s, int32_t e)
{
    if (e < s->n && (s->in[e] == '=' || is_ws(s->in[e])))
        return tag_content_end(s, skip_ws(s, e + 1));
    if (e < s->n && s->in[e] == '/')
        e++;
    return e < s->n && s->in[e] == '>' ? e + 1 : -1;
}

/* The tail of a script or style start tag: ( \s+ content )? \s* ">". */
static int32_t special_tail_end(const scan *s, int32_t e)
{
    if (e < s->n && is_ws(s->in[e]))
        return tag_content_end(s, e);
    return e < s->n && s->in[e] == '>' ? e + 1 : -1;
}

static const uint16_t NL = '\n';

/* Copies in[from..to) to the output unchanged. */
static void literal(scan *s, int32_t from, int32_t to)
{
    emit(s, s->in + from, to - from);
}

/* script or style body from p (after the start tag that began at start; escaped keeps both
 * tags): up to "</" \s* name \s* ">", skipping <!-- comments --> with their quoted strings. */
static int32_t special_body(scan *s, int32_t start, int32_t p, const char *name, bool escaped)
{
    int32_t drop_from = escaped ? p : start;
    while (p < s->n) {
        if (starts(s, p, "<!--")) {
            int32_t k = p + 4;
            bool closed = false;
            while (k < s->n && !closed) {
                if (starts(s, k, "<!--#")) {
                    int32_t e = ssi_end(s, k);
                    k = e < 0 ? s->n : e;
                } else if (s->in[k] == '\'' || s->in[k] == '"') {
                    int32_t e = quoted_end(s, k);
                    k = e < 0 ? s->n : e;
                } else if (starts(s, k, "-->")) {
                    k += 3;
                    closed = true;
                } else {
                    k++;
                }
            }
            p = k;
            continue;
        }
        if (starts(s, p, "</")) {
            int32_t k = skip_ws(s, p + 2);
            if (starts_ci(s, k, name)) {
                k = skip_ws(s, k + (int32_t)strlen(name));
                if (k < s->n && s->in[k] == '>') {
                    if (escaped) {
                        drop(s, drop_from, p);
                        literal(s, p, k + 1);
                    } else {
                        substitute(s, drop_from, k + 1, &NL, 1);
                    }
                    return k + 1;
                }
            }
        }
        p++;
    }
    drop(s, drop_from, s->n);
    return s->n;
}

/* <!...>: comments, CDATA, declarations. p is after "<!". */
static int32_t bang(scan *s, int32_t start, int32_t p)
{
    while (p < s->n) {
        /* "--" (a comment) and "[CDATA[" count only right after "<!" (Lucene 8.7 checked on
         * "a<!x--y>z-->w", which keeps "z-->w") */
        if (p == start + 2 && starts(s, p, "--")) {
            for (int32_t k = p + 2; k < s->n;) {
                if (starts(s, k, "<!--#")) {
                    int32_t e = ssi_end(s, k);
                    k = e < 0 ? s->n : e;
                } else if (starts(s, k, "-->")) {
                    drop(s, start, k + 3);
                    return k + 3;
                } else {
                    k++;
                }
            }
            drop(s, start, s->n);
            return s->n;
        }
        if (s->in[p] == '>') {
            drop(s, start, p + 1);
            return p + 1;
        }
        if (p == start + 2 && starts(s, p, "[CDATA[")) {
            drop(s, start, p + 7);
            int32_t k = p + 7;
            while (k < s->n && !starts(s, k, "]]>"))
                k++;
            literal(s, p + 7, k);
            if (k < s->n)
                drop(s, k, k + 3);
            return k < s->n ? k + 3 : s->n;
        }
        p++;
    }
    literal(s, start, s->n); /* an unfinished declaration stays as it is */
    return s->n;
}

/* An end tag at start ("</" ws name ws ">"); p is after "</". */
static int32_t end_tag(scan *s, int32_t start, int32_t p)
{
    p = skip_ws(s, p);
    int32_t e = name_end(s, p);
    if (e == p) {
        literal(s, start, p);
        return p;
    }
    bool esc = is_escaped(s, p, e);
    if (e == s->n) { /* end of text right after the name: Lucene drops it unless escaped */
        if (esc)
            literal(s, start, e);
        else
            drop(s, start, e);
        return e;
    }
    int32_t k = skip_ws(s, e);
    if (k >= s->n || s->in[k] != '>') {
        literal(s, start, e);
        return e;
    }
    if (name_is(s, p, e, "br") ? s->o->br : esc)
        literal(s, start, k + 1);
    else if (is_inline(s, p, e))
        drop(s, start, k + 1);
    else
        substitute(s, start, k + 1, &NL, 1);
    return k + 1;
}

/* A start tag, comment, declaration or end tag at start (in[start] == '<'). Returns where
 * scanning resumes. */
static int32_t angle(scan *s, int32_t start)
{
    int32_t p = start + 1;
    if (p >= s->n) {
        literal(s, start, p);
        return p;
    }
    if (s->in[p] == '!')
        return bang(s, start, p + 1);
    if (s->in[p] == '/')
        return end_tag(s, start, p + 1);
    if (s->in[p] == '?') {
        int32_t k = p + 1;
        while (k < s->n && s->in[k] != '>')
            k++;
        if (k < s->n && k - 1 > p && (s->in[k - 1] == '/' || s->in[k - 1] == '?')) {
            drop(s, start, k + 1);
            return k + 1;
        }
        literal(s, start, p);
        return p;
    }
    int32_t k = skip_ws(s, p);
    int32_t e = name_end(s, k);
    if (e == k) {
        literal(s, start, k);
        return k;
    }
    if (name_is(s, k, e, "br")) {
        int32_t m = start_tail_end(s, e);
        if (m > 0) {
            if (s->o->br)
                literal(s, start, m);
            else
                substitute(s, start, m, &NL, 1);
            return m;
        }
    }
    bool script = name_is(s, k, e, "script");
    if (script || name_is(s, k, e, "style")) {
        int32_t m = special_tail_end(s, e);
        if (m > 0) {
            bool esc = script ? s->o->script : s->o->style;
            if (esc)
                literal(s, start, m);
            return special_body(s, start, m, script ? "script" : "style", esc);
        }
    }
    bool esc = is_escaped(s, k, e);
    if (e == s->n) {
        if (esc)
            literal(s, start, e);
        else
            drop(s, start, e);
        return e;
    }
    int32_t m = start_tail_end(s, e);
    if (m < 0) {
        literal(s, start, e);
        return e;
    }
    if (esc)
        literal(s, start, m);
    else if (is_inline(s, k, e))
        drop(s, start, m);
    else
        substitute(s, start, m, &NL, 1);
    return m;
}

static int hexval(uint16_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = lower_ascii(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A surrogate written as a reference at p (after "&#"): x + 4 hex digits or 5 decimal digits,
 * then ';'. Returns the value (0 when absent) and sets *end. */
static uint32_t surrogate_ref(const scan *s, int32_t p, bool high, int32_t *end)
{
    uint32_t v = 0;
    if (p < s->n && (s->in[p] == 'x' || s->in[p] == 'X')) {
        if (p + 5 >= s->n || lower_ascii(s->in[p + 1]) != 'd')
            return 0;
        for (int32_t k = 1; k <= 4; k++) {
            int h = hexval(s->in[p + k]);
            if (h < 0)
                return 0;
            v = v * 16 + (uint32_t)h;
        }
        p += 5;
        /* the grammar fixes the second hex digit's range: 8-b high, c-f low */
        if (high ? (v < 0xD800 || v > 0xDBFF) : (v < 0xDC00 || v > 0xDFFF))
            return 0;
    } else {
        if (p + 4 >= s->n || s->in[p] != '5')
            return 0;
        uint16_t d2 = s->in[p + 1];
        if (high ? (d2 != '5' && d2 != '6') : (d2 != '6' && d2 != '7'))
            return 0;
        for (int32_t k = 0; k < 5; k++) {
            if (s->in[p + k] < '0' || s->in[p + k] > '9')
                return 0;
            v = v * 10 + (uint32_t)(s->in[p + k] - '0');
        }
        p += 5;
        if (high ? (v < 0xD800 || v > 0xDBFF) : (v < 0xDC00 || v > 0xDFFF))
            return 0; /* Lucene checks Character.isHigh/LowSurrogate */
    }
    if (p >= s->n || s->in[p] != ';')
        return 0;
    *end = p + 1;
    return v;
}

/* Emits the decoded reference in[start..k) (k after the name or digits), which must be
 * followed by ';' unless the text ends there. Returns where scanning resumes. */
static int32_t finish_ref(scan *s, int32_t start, int32_t k, uint32_t cp)
{
    int32_t end;
    if (k < s->n && s->in[k] == ';')
        end = k + 1;
    else if (k == s->n)
        end = k;
    else {
        literal(s, start, k);
        return k;
    }
    uint16_t u[2];
    int32_t ul = 1;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        u[0] = 0xFFFD;
    else if (cp >= 0x10000) {
        u[0] = (uint16_t)(0xD7C0 + (cp >> 10));
        u[1] = (uint16_t)(0xDC00 | (cp & 0x3FF));
        ul = 2;
    } else
        u[0] = (uint16_t)cp;
    substitute(s, start, end, u, ul);
    return end;
}

/* A character reference at start (in[start] == '&'). */
static int32_t ampersand(scan *s, int32_t start)
{
    int32_t p = start + 1;
    if (p < s->n && s->in[p] == '#') {
        int32_t q = p + 1, e1 = 0, e2 = 0;
        uint32_t hi = surrogate_ref(s, q, true, &e1);
        if (hi && starts(s, e1, "&#")) {
            uint32_t lo = surrogate_ref(s, e1 + 2, false, &e2);
            if (lo) {
                uint16_t u[2] = {(uint16_t)hi, (uint16_t)lo};
                substitute(s, start, e2, u, 2);
                return e2;
            }
        }
        bool hex = q < s->n && (s->in[q] == 'x' || s->in[q] == 'X');
        int32_t k = hex ? q + 1 : q;
        uint64_t v = 0;
        while (k < s->n && (hex ? hexval(s->in[k]) >= 0 : s->in[k] >= '0' && s->in[k] <= '9')) {
            if (v <= 0x10FFFF)
                v = v * (hex ? 16 : 10) + (uint64_t)hexval(s->in[k]);
            k++;
        }
        if (k == (hex ? q + 1 : q)) { /* "&#" or "&#x" with no digits */
            literal(s, start, q);
            return q;
        }
        int32_t ndig = k - q; /* Lucene's match length: 'x' included */
        if (ndig > (hex ? 6 : 7) || v > 0x10FFFF) {
            literal(s, start, k);
            return k;
        }
        return finish_ref(s, start, k, (uint32_t)v);
    }
    /* the longest entity name at p */
    const entity *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < N_ENTITIES; i++) {
        size_t l = strlen(entities[i].name);
        if (l > best_len && starts(s, p, entities[i].name)) {
            best = &entities[i];
            best_len = l;
        }
    }
    if (!best) {
        literal(s, start, p);
        return p;
    }
    return finish_ref(s, start, p + (int32_t)best_len, best->value);
}

sc_status sc__html_strip(const sc__html_opts *o, const uint16_t *in, int32_t n, sc__ubuf *out,
                         struct sc__corr *c)
{
    scan s = {o, in, n, out, c, 0, false};
    int32_t p = 0;
    while (p < n && !s.nomem) {
        int32_t q = p;
        while (q < n && in[q] != '<' && in[q] != '&')
            q++;
        literal(&s, p, q);
        if (q >= n)
            break;
        p = in[q] == '<' ? angle(&s, q) : ampersand(&s, q);
    }
    return s.nomem ? SC_ENOMEM : SC_OK;
}

sc_status sc__html_opts_init(sc__html_opts *o, const char *const *escaped, size_t n)
{
    memset(o, 0, sizeof(*o));
    o->tags = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(uint16_t *));
    o->tag_lens = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(int32_t));
    if (!o->tags || !o->tag_lens)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *t = (const uint8_t *)escaped[i];
        size_t len = strlen(escaped[i]);
        if (len == 2 && (t[0] | 0x20) == 'b' && (t[1] | 0x20) == 'r') {
            o->br = true;
            continue;
        }
        if (len == 6 && (t[0] | 0x20) == 's' && strncasecmp(escaped[i], "script", 6) == 0) {
            o->script = true;
            continue;
        }
        if (len == 5 && strncasecmp(escaped[i], "style", 5) == 0) {
            o->style = true;
            continue;
        }
        uint16_t *u = sc_alloc_malloc(&sc__text_pool, (2 * len + 1) * sizeof(uint16_t));
        if (!u)
            return SC_ENOMEM;
        int32_t k = 0;
        size_t j = 0;
        while (j < len) {
            uint32_t cp = (uint32_t)u_tolower((UChar32)sc__utf8_next(t, len, &j));
            if (cp >= 0x10000) {
                u[k++] = (uint16_t)(0xD7C0 + (cp >> 10));
                u[k++] = (uint16_t)(0xDC00 | (cp & 0x3FF));
            } else {
                u[k++] = (uint16_t)cp;
            }
        }
        o->tags[o->n_tags] = u;
        o->tag_lens[o->n_tags++] = k;
    }
    return SC_OK;
}

void sc__html_opts_fini(sc__html_opts *o)
{
    for (size_t i = 0; i < o->n_tags; i++)
        sc_alloc_free(&sc__text_pool, o->tags[i]);
    sc_alloc_free(&sc__text_pool, o->tags);
    sc_alloc_free(&sc__text_pool, o->tag_lens);
    memset(o, 0, sizeof(*o));
}
