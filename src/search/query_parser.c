/* Lucene classic query syntax -> query tree (search/query_parser.h; simple_query_string is in
 * query_parser_simple.c, term analysis in query_parser_terms.c). A lexer that follows the
 * JavaCC token definitions of Lucene 8.7's QueryParser.jj (longest match, earlier definition
 * wins ties), then recursive descent with QueryParserBase.addClause's rules. */
#include "search/query_parser.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "search/qp_internal.h"

void sc__qp_perr(parser *p, sc_status st, size_t off, const char *fmt, ...)
{
    if (p->status != SC_OK)
        return;
    p->status = st;
    if (p->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
        va_end(ap);
        p->err->offset = off;
    }
}

/* ---- lexer ------------------------------------------------------------------------------ */

/* Length of the whitespace char at i (space, tab, CR, LF, U+3000), 0 if none. */
static size_t ws_len(sc_slice s, size_t i)
{
    uint8_t c = s.ptr[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        return 1;
    if (c == 0xE3 && i + 2 < s.len && s.ptr[i + 1] == 0x80 && s.ptr[i + 2] == 0x80)
        return 3;
    return 0;
}

/* Length of one UTF-8 char at i (1 for invalid bytes). */
static size_t char_len(sc_slice s, size_t i)
{
    uint8_t c = s.ptr[i];
    size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    return i + n <= s.len ? n : 1;
}

/* _TERM_START_CHAR at i: returns its length (2+ for an escape), 0 if not one. */
static size_t term_start_len(sc_slice s, size_t i)
{
    if (i >= s.len || ws_len(s, i))
        return 0;
    uint8_t c = s.ptr[i];
    if (c == '\\')
        return i + 1 < s.len ? 1 + char_len(s, i + 1) : 0;
    if (c < 0x80 && strchr("+-!():^[]\"{}~*?/", c))
        return 0;
    return char_len(s, i);
}

static size_t term_char_len(sc_slice s, size_t i)
{
    if (i < s.len && (s.ptr[i] == '-' || s.ptr[i] == '+'))
        return 1;
    return term_start_len(s, i);
}

static size_t term_run(sc_slice s, size_t i)
{
    size_t start = i, n;
    while ((n = term_char_len(s, i)) > 0)
        i += n;
    return i - start;
}

static bool lit(sc_slice s, size_t i, const char *w)
{
    size_t n = strlen(w);
    return i + n <= s.len && memcmp(s.ptr + i, w, n) == 0;
}

static size_t wild_run(sc_slice s, size_t i)
{
    size_t start = i, n;
    for (;;) {
        if (i < s.len && (s.ptr[i] == '*' || s.ptr[i] == '?'))
            n = 1;
        else
            n = term_char_len(s, i);
        if (!n)
            break;
        i += n;
    }
    return i - start;
}

/* Offers a token candidate: the longest wins, the first offered wins ties (the JavaCC order of
 * the token definitions). Used by the lexers below, which declare `best` and `bk`. */
#define CAND(kind, len)                                                                            \
    do {                                                                                           \
        size_t l_ = (len);                                                                         \
        if (l_ > best) {                                                                           \
            best = l_;                                                                             \
            bk = (kind);                                                                           \
        }                                                                                          \
    } while (0)

/* One token at i in the default state; sets *k and returns its length (0 = lexical error). */
static size_t lex_default(sc_slice s, size_t i, tok_kind *k)
{
    size_t best = 0;
    tok_kind bk = T_EOF;
    uint8_t c = s.ptr[i];
    if (lit(s, i, "AND"))
        CAND(T_AND, 3);
    if (lit(s, i, "&&"))
        CAND(T_AND, 2);
    if (lit(s, i, "OR"))
        CAND(T_OR, 2);
    if (lit(s, i, "||"))
        CAND(T_OR, 2);
    if (lit(s, i, "NOT"))
        CAND(T_NOT, 3);
    if (c == '!')
        CAND(T_NOT, 1);
    if (c == '+')
        CAND(T_PLUS, 1);
    if (c == '-')
        CAND(T_MINUS, 1);
    if ((c == '+' || c == '-' || c == '!') && i + 1 < s.len && ws_len(s, i + 1))
        CAND(T_BAREOPER, 1 + ws_len(s, i + 1));
    if (c == '(')
        CAND(T_LPAREN, 1);
    if (c == ')')
        CAND(T_RPAREN, 1);
    if (c == ':')
        CAND(T_COLON, 1);
    if (c == '*')
        CAND(T_STAR, 1);
    if (c == '^')
        CAND(T_CARAT, 1);
    if (c == '"') {
        size_t j = i + 1;
        while (j < s.len && s.ptr[j] != '"') {
            if (s.ptr[j] == '\\') {
                if (j + 1 >= s.len)
                    break;
                j += 1 + char_len(s, j + 1);
            } else {
                j += char_len(s, j);
            }
        }
        if (j < s.len && s.ptr[j] == '"')
            CAND(T_QUOTED, j + 1 - i);
    }
    size_t ts = term_start_len(s, i);
    if (ts)
        CAND(T_TERM, ts + term_run(s, i + ts));
    if (c == '~')
        CAND(T_FUZZY_SLOP, 1 + term_run(s, i + 1));
    if (c == '*')
        CAND(T_PREFIXTERM, 1);
    if (ts) {
        size_t tl = ts + term_run(s, i + ts);
        if (i + tl < s.len && s.ptr[i + tl] == '*')
            CAND(T_PREFIXTERM, tl + 1);
    }
    if (ts || c == '*' || c == '?') {
        size_t first = ts ? ts : 1;
        CAND(T_WILDTERM, first + wild_run(s, i + first));
    }
    if (c == '/') {
        size_t j = i + 1, end = 0;
        while (j < s.len) {
            if (s.ptr[j] == '\\' && j + 1 < s.len && s.ptr[j + 1] == '/') {
                end = j + 2; /* `\` as a char, then `/` closes: a candidate */
                j += 2;
                continue;
            }
            if (s.ptr[j] == '/') {
                end = j + 1;
                break;
            }
            j++;
        }
        if (end)
            CAND(T_REGEXPTERM, end - i);
    }
    if (c == '[')
        CAND(T_RANGEIN_START, 1);
    if (c == '{')
        CAND(T_RANGEEX_START, 1);
    *k = bk;
    return best;
}

/* The Range lexical state (between `[`/`{` and `]`/`}`): longest match, earlier definition
 * wins ties (RANGE_TO, RANGEIN_END, RANGEEX_END, RANGE_QUOTED, RANGE_GOOP). */
static size_t lex_range(sc_slice s, size_t i, tok_kind *k)
{
    size_t best = 0;
    tok_kind bk = T_EOF;
    uint8_t c = s.ptr[i];
    if (lit(s, i, "TO"))
        CAND(T_RANGE_TO, 2);
    if (c == ']')
        CAND(T_RANGEIN_END, 1);
    if (c == '}')
        CAND(T_RANGEEX_END, 1);
    if (c == '"') {
        size_t j = i + 1;
        while (j < s.len && s.ptr[j] != '"')
            j += s.ptr[j] == '\\' && j + 1 < s.len && s.ptr[j + 1] == '"' ? 2 : 1;
        if (j < s.len && j > i + 1)
            CAND(T_RANGE_QUOTED, j + 1 - i);
    }
    size_t j = i;
    while (j < s.len && s.ptr[j] != ' ' && s.ptr[j] != ']' && s.ptr[j] != '}')
        j++;
    if (j > i)
        CAND(T_RANGE_GOOP, j - i);
    *k = bk;
    return best;
}

static void lex(parser *p)
{
    sc_slice s = p->s;
    size_t i = 0;
    bool boost_state = false, range_state = false;
    while (p->status == SC_OK) {
        size_t w;
        while (i < s.len && (w = ws_len(s, i)) > 0)
            i += w;
        tok t = {T_EOF, i, 0};
        if (i >= s.len) {
            if (sc_vec_push(&p->toks, t) != SC_OK)
                p->status = SC_ENOMEM;
            return;
        }
        if (boost_state) {
            size_t j = i;
            while (j < s.len && s.ptr[j] >= '0' && s.ptr[j] <= '9')
                j++;
            if (j > i && j + 1 < s.len && s.ptr[j] == '.' && s.ptr[j + 1] >= '0' &&
                s.ptr[j + 1] <= '9') {
                j++;
                while (j < s.len && s.ptr[j] >= '0' && s.ptr[j] <= '9')
                    j++;
            }
            if (j == i) {
                sc__qp_perr(p, SC_EPARSE, i,
                            "Cannot parse: expected a number after '^' at offset %zu", i);
                return;
            }
            t.kind = T_NUMBER;
            t.len = j - i;
            boost_state = false;
        } else {
            t.len = range_state ? lex_range(s, i, &t.kind) : lex_default(s, i, &t.kind);
            if (t.len == 0) {
                sc__qp_perr(p, SC_EPARSE, i, "Cannot parse: lexical error at offset %zu", i);
                return;
            }
            boost_state = t.kind == T_CARAT;
            if (t.kind == T_RANGEIN_START || t.kind == T_RANGEEX_START)
                range_state = true;
            else if (t.kind == T_RANGEIN_END || t.kind == T_RANGEEX_END)
                range_state = false;
        }
        if (sc_vec_push(&p->toks, t) != SC_OK) {
            p->status = SC_ENOMEM;
            return;
        }
        i += t.len;
    }
}

/* ---- helpers ---------------------------------------------------------------------------- */

static const tok *peek(const parser *p)
{
    return &p->toks.ptr[p->i];
}

static const tok *peek2(const parser *p)
{
    return p->toks.ptr[p->i].kind == T_EOF ? &p->toks.ptr[p->i] : &p->toks.ptr[p->i + 1];
}

static const tok *take(parser *p)
{
    const tok *t = &p->toks.ptr[p->i];
    if (t->kind != T_EOF)
        p->i++;
    return t;
}

static int hexval(uint8_t c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Lucene's discardEscapeChar: `\x` -> x, `\uXXXX` -> the char; a trailing `\` is an error. */
static bool unescape(parser *p, size_t off, size_t len, sc_slice *out)
{
    char *o = sc_arena_alloc(p->a, len + 1);
    if (!o) {
        p->status = SC_ENOMEM;
        return false;
    }
    const uint8_t *s = p->s.ptr + off;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\') {
            o[n++] = (char)s[i];
            continue;
        }
        if (i + 1 >= len) {
            sc__qp_perr(p, SC_EPARSE, off + i, "Term can not end with escape character");
            return false;
        }
        if (s[i + 1] == 'u') {
            uint32_t cp = 0;
            if (i + 5 >= len) {
                sc__qp_perr(p, SC_EPARSE, off + i, "Truncated unicode escape sequence");
                return false;
            }
            for (int k = 0; k < 4; k++) {
                int h = hexval(s[i + 2 + k]);
                if (h < 0) {
                    sc__qp_perr(p, SC_EPARSE, off + i,
                                "Non-hex character in Unicode escape sequence");
                    return false;
                }
                cp = cp * 16 + (uint32_t)h;
            }
            n += sc__qp_put_utf8(cp, o + n);
            i += 5;
            continue;
        }
        o[n++] = (char)s[++i];
    }
    o[n] = 0;
    *out = sc_slice_make(o, n);
    return true;
}

/* ---- grammar ---------------------------------------------------------------------------- */

enum {
    CONJ_NONE,
    CONJ_AND,
    CONJ_OR
};
enum {
    MOD_NONE,
    MOD_NOT,
    MOD_REQ
};

static sc_query *parse_query(parser *p, sc_slice field);
static sc_query *range_query(parser *p, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                             bool incl_lo, bool incl_hi, size_t off);

/* Java's Float.parseFloat on the text after `~`: false when it is not a number. */
static bool parse_float(const uint8_t *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (!isfinite(v)) /* "nan", "inf" and overflow are not numbers in the query syntax */
        return false;
    *out = v;
    return *end == 0 || ((*end == 'f' || *end == 'F' || *end == 'd' || *end == 'D') && !end[1]);
}

/* Optional `^boost` and `~slop` after a term, in either order; returns the boost (1 if none). */
static float term_suffixes(parser *p, const tok **slop)
{
    float boost = 1.0f;
    *slop = NULL;
    for (int round = 0; round < 2; round++) {
        if (peek(p)->kind == T_CARAT && boost == 1.0f) {
            take(p);
            const tok *n = take(p);
            if (n->kind != T_NUMBER) {
                sc__qp_perr(p, SC_EPARSE, n->off, "Cannot parse: expected a number after '^'");
                return boost;
            }
            double v = 0;
            (void)parse_float(p->s.ptr + n->off, n->len, &v);
            boost = (float)v;
        } else if (peek(p)->kind == T_FUZZY_SLOP && !*slop) {
            *slop = take(p);
        }
    }
    return boost;
}

static sc_query *bare_term(parser *p, sc_slice field, const tok *t, const tok *slop)
{
    sc_slice raw = sc_slice_make(p->s.ptr + t->off, t->len), text;
    const sc_query_parser_options *o = p->o;
    sc_query *q = NULL;
    if (t->kind == T_BAREOPER)
        raw.len = 1;
    if (t->kind == T_STAR || t->kind == T_WILDTERM) {
        if (sc_slice_eq_cstr(field, "*") && sc_slice_eq_cstr(raw, "*"))
            return sc_query_match_all(p->a);
        if (!o->allow_leading_wildcard && (raw.ptr[0] == '*' || raw.ptr[0] == '?')) {
            sc__qp_perr(p, SC_EPARSE, t->off,
                        "'*' or '?' not allowed as first character in WildcardQuery");
            return NULL;
        }
        /* Lowercase the chunks between wildcards and escapes (Lucene's analyzeWildcard). */
        char *buf = sc_arena_alloc(p->a, raw.len * 2 + 1);
        size_t n = 0;
        if (!buf) {
            p->status = SC_ENOMEM;
            return NULL;
        }
        for (size_t i = 0; i < raw.len;) {
            size_t j = i;
            while (j < raw.len && raw.ptr[j] != '\\' && raw.ptr[j] != '*' && raw.ptr[j] != '?')
                j++;
            sc_slice norm;
            if (!sc__qp_normalize(p, field, sc_slice_make(raw.ptr + i, j - i), &norm))
                return NULL;
            memcpy(buf + n, norm.ptr, norm.len);
            n += norm.len;
            if (j < raw.len) {
                size_t l = raw.ptr[j] == '\\' && j + 1 < raw.len ? 1 + char_len(raw, j + 1) : 1;
                memcpy(buf + n, raw.ptr + j, l);
                n += l;
                j += l;
            }
            i = j;
        }
        q = sc_query_wildcard(p->a, field, sc_slice_make(buf, n));
        if (q)
            q->u.wildcard.max_determinized_states = o->max_determinized_states;
    } else if (t->kind == T_PREFIXTERM) {
        if (!unescape(p, t->off, t->len - 1, &text) || !sc__qp_normalize(p, field, text, &text))
            return NULL;
        q = sc_query_prefix(p->a, field, text);
    } else if (t->kind == T_REGEXPTERM) {
        if (!sc__qp_normalize(p, field, sc_slice_make(raw.ptr + 1, raw.len - 2), &text))
            return NULL;
        q = sc_query_regexp(p->a, field, text, SC_REGEXP_ALL);
        if (q)
            q->u.regexp.max_determinized_states = o->max_determinized_states;
    } else if (slop) {
        if (!unescape(p, t->off, raw.len, &text) || !sc__qp_normalize(p, field, text, &text))
            return NULL;
        double fms = 2.0;
        (void)parse_float(p->s.ptr + slop->off + 1, slop->len - 1, &fms);
        if (fms < 0) {
            sc__qp_perr(p, SC_EPARSE, slop->off,
                        "Minimum similarity for a FuzzyQuery has to be between 0.0f and 1.0f !");
            return NULL;
        }
        if (fms >= 1.0 && (fms > 1e9 || fms != (double)(int64_t)fms)) {
            sc__qp_perr(p, SC_EPARSE, slop->off, "Fractional edit distances are not allowed!");
            return NULL;
        }
        /* FuzzyQuery.floatToEdits */
        uint32_t edits;
        if (fms >= 1.0)
            edits = fms > 2 ? 2 : (uint32_t)fms;
        else if (fms == 0.0)
            edits = 0;
        else {
            size_t cps = 0;
            for (size_t i = 0; i < text.len; i++)
                cps += (text.ptr[i] & 0xC0) != 0x80;
            edits = (uint32_t)((1.0 - (double)(float)fms) * (double)cps);
            if (edits > 2)
                edits = 2;
        }
        q = sc_query_fuzzy(p->a, field, text, edits, o->fuzzy_prefix_length,
                           o->fuzzy_max_expansions, o->fuzzy_transpositions);
    } else {
        if (!unescape(p, t->off, raw.len, &text))
            return NULL;
        if (sc_slice_eq_cstr(field, "_exists_"))
            return sc_query_exists(p->a, text);
        if (o->es_range_syntax && text.len >= 2 && (text.ptr[0] == '>' || text.ptr[0] == '<')) {
            /* Elasticsearch's `field:>x`, `>=x`, `<x`, `<=x` (one-sided ranges) */
            bool eq = text.len > 2 && text.ptr[1] == '=';
            sc_slice v = sc_slice_make(text.ptr + (eq ? 2 : 1), text.len - (eq ? 2 : 1));
            if (text.ptr[0] == '>')
                return range_query(p, field, &v, NULL, eq, true, t->off);
            return range_query(p, field, NULL, &v, true, eq, t->off);
        }
        return sc__qp_field_query(p, field, text, false, 0);
    }
    if (!q && p->status == SC_OK)
        p->status = SC_ENOMEM;
    return q;
}

/* A range query over field: the caller's range_query hook (numbers, dates) when it builds
 * one, else a term range over the field's (normalized) terms (QueryParserBase.getRangeQuery).
 * lo / hi NULL: open. */
static sc_query *range_query(parser *p, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                             bool incl_lo, bool incl_hi, size_t off)
{
    const sc_query_parser_options *o = p->o;
    sc_query *q = NULL;
    if (o->range_query) {
        char msg[160] = "";
        sc_status st =
            o->range_query(o->ctx, field, lo, hi, incl_lo, incl_hi, p->a, &q, msg, sizeof msg);
        if (st != SC_OK) {
            sc__qp_perr(p, st, off, "%s", msg[0] ? msg : "invalid range");
            return NULL;
        }
        if (q)
            return q;
    }
    sc_slice nlo, nhi;
    if ((lo && !sc__qp_normalize(p, field, *lo, &nlo)) ||
        (hi && !sc__qp_normalize(p, field, *hi, &nhi)))
        return NULL;
    q = sc_query_term_range(p->a, field, lo ? &nlo : NULL, hi ? &nhi : NULL, incl_lo, incl_hi);
    if (!q)
        p->status = SC_ENOMEM;
    return q;
}

/* One bound of `[a TO b]`: a quoted or bare value (`*` bare: open), unescaped. */
static bool range_bound(parser *p, const tok *g, sc_slice *out, bool *open)
{
    *open = false;
    if (g->kind == T_RANGE_QUOTED)
        return unescape(p, g->off + 1, g->len - 2, out);
    if (g->len == 1 && p->s.ptr[g->off] == '*') {
        *open = true;
        return true;
    }
    return unescape(p, g->off, g->len, out);
}

static bool is_range_value(tok_kind k)
{
    return k == T_RANGE_GOOP || k == T_RANGE_QUOTED || k == T_RANGE_TO;
}

/* `[`/`{` goop1 [TO] goop2 `]`/`}` [^boost], the start token already taken. */
static sc_query *parse_range(parser *p, sc_slice field, const tok *start)
{
    const tok *g1 = take(p);
    if (!is_range_value(g1->kind)) {
        sc__qp_perr(p, SC_EPARSE, g1->off, "Cannot parse: expected a range bound at offset %zu",
                    g1->off);
        return NULL;
    }
    if (peek(p)->kind == T_RANGE_TO)
        take(p);
    const tok *g2 = take(p);
    const tok *end = take(p);
    if (!is_range_value(g2->kind) || (end->kind != T_RANGEIN_END && end->kind != T_RANGEEX_END)) {
        const tok *bad = is_range_value(g2->kind) ? end : g2;
        sc__qp_perr(p, SC_EPARSE, bad->off,
                    "Cannot parse: expected a range bound or ']' / '}' at offset %zu", bad->off);
        return NULL;
    }
    float boost = 1.0f;
    if (peek(p)->kind == T_CARAT) {
        take(p);
        const tok *n = take(p);
        double v = 1;
        if (n->kind != T_NUMBER || !parse_float(p->s.ptr + n->off, n->len, &v)) {
            sc__qp_perr(p, SC_EPARSE, n->off, "Cannot parse: expected a number after '^'");
            return NULL;
        }
        boost = (float)v;
    }
    sc_slice lo, hi;
    bool open_lo, open_hi;
    if (!range_bound(p, g1, &lo, &open_lo) || !range_bound(p, g2, &hi, &open_hi))
        return NULL;
    sc_query *q =
        range_query(p, field, open_lo ? NULL : &lo, open_hi ? NULL : &hi,
                    start->kind == T_RANGEIN_START, end->kind == T_RANGEIN_END, start->off);
    if (q)
        q->boost *= boost;
    return q;
}

static sc_query *parse_term(parser *p, sc_slice field)
{
    const tok *t = take(p);
    const tok *slop;
    sc_query *q = NULL;
    switch (t->kind) {
    case T_TERM:
    case T_STAR:
    case T_PREFIXTERM:
    case T_WILDTERM:
    case T_REGEXPTERM:
    case T_NUMBER:
    case T_BAREOPER: {
        float boost = term_suffixes(p, &slop);
        if (p->status == SC_OK)
            q = bare_term(p, field, t, slop);
        if (q)
            q->boost *= boost;
        return q;
    }
    case T_QUOTED: {
        float boost = term_suffixes(p, &slop);
        uint32_t s = p->o->phrase_slop;
        double v;
        if (slop && parse_float(p->s.ptr + slop->off + 1, slop->len - 1, &v))
            s = v < 0 ? 0 : v > (double)INT32_MAX ? (uint32_t)INT32_MAX : (uint32_t)v;
        sc_slice text;
        if (p->status != SC_OK || !unescape(p, t->off + 1, t->len - 2, &text))
            return NULL;
        q = sc__qp_field_query(p, field, text, true, s);
        if (q)
            q->boost *= boost;
        return q;
    }
    case T_RANGEIN_START:
    case T_RANGEEX_START: return parse_range(p, field, t);
    default:
        sc__qp_perr(p, SC_EPARSE, t->off, "Cannot parse: unexpected token at offset %zu", t->off);
        return NULL;
    }
}

static sc_query *parse_clause(parser *p, sc_slice field)
{
    if ((peek(p)->kind == T_TERM || peek(p)->kind == T_STAR) && peek2(p)->kind == T_COLON) {
        const tok *f = take(p);
        take(p);
        if (f->kind == T_STAR) {
            field = sc_slice_cstr("*");
            if (peek(p)->kind != T_STAR) {
                sc__qp_perr(p, SC_EUNSUPPORTED, f->off,
                            "the '*' field (all fields) is not supported");
                return NULL;
            }
        } else if (!unescape(p, f->off, f->len, &field)) {
            return NULL;
        }
    }
    if (peek(p)->kind != T_LPAREN)
        return parse_term(p, field);
    take(p);
    if (++p->depth > MAX_DEPTH) {
        sc__qp_perr(p, SC_ELIMIT, peek(p)->off, "query nested deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    sc_query *q = parse_query(p, field);
    p->depth--;
    if (p->status != SC_OK)
        return NULL;
    const tok *r = take(p);
    if (r->kind != T_RPAREN) {
        sc__qp_perr(p, SC_EPARSE, r->off, "Cannot parse: expected ')' at offset %zu", r->off);
        return NULL;
    }
    if (peek(p)->kind == T_CARAT) {
        take(p);
        const tok *n = take(p);
        double v = 1;
        if (n->kind != T_NUMBER || !parse_float(p->s.ptr + n->off, n->len, &v)) {
            sc__qp_perr(p, SC_EPARSE, n->off, "Cannot parse: expected a number after '^'");
            return NULL;
        }
        if (q)
            q->boost *= (float)v;
    }
    return q;
}

/* QueryParserBase.addClause over the growing bool `b`. */
static void add_clause(parser *p, sc_query *b, int conj, int mods, sc_query *q)
{
    size_t n = b->u.bool_.n_clauses;
    if (n > 0 && conj == CONJ_AND && b->u.bool_.clauses[n - 1].occur != SC_OCCUR_MUST_NOT)
        b->u.bool_.clauses[n - 1].occur = SC_OCCUR_MUST;
    if (n > 0 && p->o->default_operator == SC_OCCUR_MUST && conj == CONJ_OR &&
        b->u.bool_.clauses[n - 1].occur != SC_OCCUR_MUST_NOT)
        b->u.bool_.clauses[n - 1].occur = SC_OCCUR_SHOULD;
    if (!q)
        return;
    bool prohibited = mods == MOD_NOT, required;
    if (p->o->default_operator == SC_OCCUR_SHOULD)
        required = mods == MOD_REQ || (conj == CONJ_AND && !prohibited);
    else
        required = !prohibited && conj != CONJ_OR;
    sc_query_occur occ = prohibited ? SC_OCCUR_MUST_NOT
                         : required ? SC_OCCUR_MUST
                                    : SC_OCCUR_SHOULD;
    sc_status st = sc_query_bool_add(p->a, b, occ, q);
    if (st == SC_ELIMIT)
        sc__qp_perr(p, st, 0, "too many clauses: maxClauseCount is set to %u",
                    SC_QUERY_MAX_CLAUSE_COUNT);
    else if (st != SC_OK)
        p->status = st;
}

static bool starts_clause(tok_kind k)
{
    switch (k) {
    case T_AND:
    case T_OR:
    case T_NOT:
    case T_PLUS:
    case T_MINUS:
    case T_BAREOPER:
    case T_LPAREN:
    case T_STAR:
    case T_QUOTED:
    case T_TERM:
    case T_PREFIXTERM:
    case T_WILDTERM:
    case T_REGEXPTERM:
    case T_RANGEIN_START:
    case T_RANGEEX_START:
    case T_NUMBER: return true;
    default: return false;
    }
}

static int parse_mods(parser *p)
{
    tok_kind k = peek(p)->kind;
    if (k == T_PLUS) {
        take(p);
        return MOD_REQ;
    }
    if (k == T_MINUS || k == T_NOT) {
        take(p);
        return MOD_NOT;
    }
    return MOD_NONE;
}

static sc_query *parse_query(parser *p, sc_slice field)
{
    sc_query *b = sc_query_bool(p->a), *first = NULL;
    if (!b) {
        p->status = SC_ENOMEM;
        return NULL;
    }
    int mods = parse_mods(p);
    sc_query *q = parse_clause(p, field);
    add_clause(p, b, CONJ_NONE, mods, q);
    if (mods == MOD_NONE)
        first = q;
    size_t n_added = 1;
    while (p->status == SC_OK && starts_clause(peek(p)->kind)) {
        int conj = CONJ_NONE;
        if (peek(p)->kind == T_AND) {
            take(p);
            conj = CONJ_AND;
        } else if (peek(p)->kind == T_OR) {
            take(p);
            conj = CONJ_OR;
        }
        mods = parse_mods(p);
        q = parse_clause(p, field);
        add_clause(p, b, conj, mods, q);
        n_added++;
    }
    if (p->status != SC_OK)
        return NULL;
    if (n_added == 1 && first)
        return first;
    return b->u.bool_.n_clauses ? b : NULL;
}

/* ES's Queries.fixNegativeQueryIfNeeded, applied to every bool in the tree. */
static sc_status fix_negative(sc_arena *a, sc_query *q, int depth)
{
    if (!q || depth > MAX_DEPTH + 2)
        return SC_OK;
    if (q->kind != SC_QUERY_BOOL)
        return SC_OK;
    bool only_not = q->u.bool_.n_clauses > 0;
    for (size_t i = 0; i < q->u.bool_.n_clauses; i++) {
        if (q->u.bool_.clauses[i].occur != SC_OCCUR_MUST_NOT)
            only_not = false;
        SC_TRY(fix_negative(a, q->u.bool_.clauses[i].query, depth + 1));
    }
    if (only_not) {
        sc_query *all = sc_query_match_all(a);
        if (!all)
            return SC_ENOMEM;
        SC_TRY(sc_query_bool_add(a, q, SC_OCCUR_FILTER, all));
    }
    return SC_OK;
}

void sc_query_parser_options_init(sc_query_parser_options *o)
{
    memset(o, 0, sizeof *o);
    o->default_operator = SC_OCCUR_SHOULD;
    o->lowercase_expanded_terms = true;
    o->allow_leading_wildcard = true;
    o->fix_negative = true;
    o->fuzzy_max_expansions = SC_QUERY_FUZZY_MAX_EXPANSIONS;
    o->fuzzy_transpositions = true;
    o->max_determinized_states = SC_QUERY_MAX_DETERMINIZED_STATES;
    o->es_range_syntax = true;
}

sc_status sc_query_string_parse(sc_slice text, const sc_query_parser_options *o, sc_arena *a,
                                sc_query **out, sc_query_parse_error *err)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.o = o;
    p.a = a;
    p.err = err;
    *out = NULL;
    lex(&p);
    sc_query *q = NULL;
    if (p.status == SC_OK && p.toks.ptr[0].kind != T_EOF) {
        q = parse_query(&p, o->default_field);
        if (p.status == SC_OK && peek(&p)->kind != T_EOF)
            sc__qp_perr(&p, SC_EPARSE, peek(&p)->off,
                        "Cannot parse: unexpected token at offset %zu", peek(&p)->off);
    }
    if (p.status == SC_OK && o->fix_negative)
        p.status = fix_negative(a, q, 0);
    if (p.status == SC_OK && !q && !(q = sc_query_match_none(a)))
        p.status = SC_ENOMEM;
    sc_vec_free(&p.toks);
    if (p.status == SC_OK)
        *out = q;
    return p.status;
}
