/* Lucene classic query syntax -> query tree (search/query_parser.h). A lexer that follows the
 * JavaCC token definitions of Lucene 8.7's QueryParser.jj (longest match, earlier definition
 * wins ties), then recursive descent with QueryParserBase.addClause's rules. */
#include "search/query_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>

#include "base/vec.h"

typedef enum tok_kind {
    T_AND,
    T_OR,
    T_NOT,
    T_PLUS,
    T_MINUS,
    T_BAREOPER,
    T_LPAREN,
    T_RPAREN,
    T_COLON,
    T_STAR,
    T_CARAT,
    T_QUOTED,
    T_TERM,
    T_FUZZY_SLOP,
    T_PREFIXTERM,
    T_WILDTERM,
    T_REGEXPTERM,
    T_RANGEIN_START,
    T_RANGEEX_START,
    T_NUMBER,
    T_EOF,
} tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t off, len;
} tok;

typedef struct parser {
    sc_slice s;
    const sc_query_parser_options *o;
    sc_arena *a;
    SC_VEC(tok) toks;
    size_t i; /* next token */
    int depth;
    sc_status status;
    sc_query_parse_error *err;
} parser;

#define MAX_DEPTH 256

static void perr(parser *p, sc_status st, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void perr(parser *p, sc_status st, size_t off, const char *fmt, ...)
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

/* One token at i in the default state; sets *k and returns its length (0 = lexical error). */
static size_t lex_default(sc_slice s, size_t i, tok_kind *k)
{
    size_t best = 0;
    tok_kind bk = T_EOF;
#define CAND(kind, len)                                                                            \
    do {                                                                                           \
        size_t l_ = (len);                                                                         \
        if (l_ > best) {                                                                           \
            best = l_;                                                                             \
            bk = (kind);                                                                           \
        }                                                                                          \
    } while (0)
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
#undef CAND
    *k = bk;
    return best;
}

static void lex(parser *p)
{
    sc_slice s = p->s;
    size_t i = 0;
    bool boost_state = false;
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
                perr(p, SC_EPARSE, i, "Cannot parse: expected a number after '^' at offset %zu",
                     i);
                return;
            }
            t.kind = T_NUMBER;
            t.len = j - i;
            boost_state = false;
        } else {
            t.len = lex_default(s, i, &t.kind);
            if (t.len == 0) {
                perr(p, SC_EPARSE, i, "Cannot parse: lexical error at offset %zu", i);
                return;
            }
            boost_state = t.kind == T_CARAT;
        }
        if (sc_vec_push(&p->toks, t) != SC_OK) {
            p->status = SC_ENOMEM;
            return;
        }
        i += t.len;
        /* Ranges have their own lexical state; they are unsupported, so stop here and let
         * the parser report them. */
        if (t.kind == T_RANGEIN_START || t.kind == T_RANGEEX_START)
            i = s.len;
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
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                 : -1;
}

static size_t put_utf8(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
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
            perr(p, SC_EPARSE, off + i, "Term can not end with escape character");
            return false;
        }
        if (s[i + 1] == 'u') {
            uint32_t cp = 0;
            if (i + 5 >= len) {
                perr(p, SC_EPARSE, off + i, "Truncated unicode escape sequence");
                return false;
            }
            for (int k = 0; k < 4; k++) {
                int h = hexval(s[i + 2 + k]);
                if (h < 0) {
                    perr(p, SC_EPARSE, off + i, "Non-hex character in Unicode escape sequence");
                    return false;
                }
                cp = cp * 16 + (uint32_t)h;
            }
            n += put_utf8(cp, o + n);
            i += 5;
            continue;
        }
        o[n++] = (char)s[++i];
    }
    o[n] = 0;
    *out = sc_slice_make(o, n);
    return true;
}

static const sc_analyzer *analyzer_for(const parser *p, sc_slice field)
{
    if (p->o->analyzer_for)
        return p->o->analyzer_for(p->o->ctx, field);
    return p->o->analyzer;
}

/* Code-point lowercase (Lucene's LowerCaseFilter / Character.toLowerCase) into the arena. */
static bool normalize(parser *p, sc_slice field, sc_slice in, sc_slice *out)
{
    if (!p->o->lowercase_expanded_terms || !analyzer_for(p, field)) {
        *out = in;
        return true;
    }
    char *o = sc_arena_alloc(p->a, in.len * 2 + 4);
    if (!o) {
        p->status = SC_ENOMEM;
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < in.len;) {
        uint8_t c = in.ptr[i];
        size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (c >= 0x80 && c < 0xC0)
            l = 1;
        if (i + l > in.len)
            l = 1;
        uint32_t cp = l == 1 ? c : l == 2 ? c & 0x1F : l == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < l; k++)
            cp = (cp << 6) | (in.ptr[i + k] & 0x3F);
        if (l == 1 && c >= 0x80) {
            o[n++] = (char)c; /* invalid byte: keep */
        } else {
            n += put_utf8((uint32_t)u_tolower((UChar32)cp), o + n);
        }
        i += l;
    }
    *out = sc_slice_make(o, n);
    return true;
}

/* ---- analysis --------------------------------------------------------------------------- */

typedef struct tokens {
    sc_arena *a;
    SC_VEC(sc_slice) terms;
    SC_VEC(uint32_t) pos;
} tokens;

static sc_status collect(void *ctx, const sc_token *t)
{
    tokens *tk = ctx;
    char *c = sc_arena_strndup(tk->a, (const char *)t->term, t->len);
    if (!c)
        return SC_ENOMEM;
    SC_TRY(sc_vec_push(&tk->terms, sc_slice_make(c, t->len)));
    return sc_vec_push(&tk->pos, t->position);
}

/* Lucene's QueryBuilder.createFieldQuery (no graph tokens): NULL when nothing remains. */
static sc_query *field_query(parser *p, sc_slice field, sc_slice text, bool quoted, uint32_t slop)
{
    const sc_analyzer *an = analyzer_for(p, field);
    if (!an) {
        sc_query *q = sc_query_term(p->a, field, text);
        if (!q)
            p->status = SC_ENOMEM;
        return q;
    }
    tokens tk;
    memset(&tk, 0, sizeof tk);
    tk.a = p->a;
    sc_status st = sc_analyzer_analyze(an, text, collect, &tk);
    sc_query *q = NULL;
    size_t n = tk.terms.len;
    if (st != SC_OK) {
        perr(p, st, 0, "analysis of [%.*s] failed: %s", (int)(text.len > 60 ? 60 : text.len),
             (const char *)text.ptr, sc_status_str(st));
    } else if (n == 1) {
        q = sc_query_term(p->a, field, tk.terms.ptr[0]);
        if (!q)
            p->status = SC_ENOMEM;
    } else if (n > 1) {
        bool distinct = true;
        for (size_t i = 1; i < n; i++)
            if (tk.pos.ptr[i] == tk.pos.ptr[i - 1])
                distinct = false;
        if (quoted && distinct) {
            uint32_t first = tk.pos.ptr[0];
            for (size_t i = 0; i < n; i++)
                tk.pos.ptr[i] -= first;
            q = sc_query_phrase(p->a, field, tk.terms.ptr, tk.pos.ptr, n, slop);
            if (!q)
                p->status = SC_ENOMEM;
        } else if (quoted) {
            perr(p, SC_EUNSUPPORTED, 0,
                 "phrases with several terms at one position (multi-phrase) are not supported");
        } else {
            /* One clause per position (default operator); stacked terms become a SHOULD
             * group (Lucene would build a SynonymQuery). */
            q = sc_query_bool(p->a);
            bool all_same = true;
            for (size_t i = 1; i < n; i++)
                if (tk.pos.ptr[i] != tk.pos.ptr[0])
                    all_same = false;
            sc_query_occur occ = all_same ? SC_OCCUR_SHOULD : p->o->default_operator;
            for (size_t i = 0; q && i < n && p->status == SC_OK;) {
                size_t j = i + 1;
                while (j < n && tk.pos.ptr[j] == tk.pos.ptr[i])
                    j++;
                sc_query *c;
                if (j - i == 1 || all_same) {
                    c = sc_query_term(p->a, field, tk.terms.ptr[i]);
                    j = all_same ? i + 1 : j;
                } else {
                    c = sc_query_bool(p->a);
                    for (size_t k = i; c && k < j; k++) {
                        sc_query *t = sc_query_term(p->a, field, tk.terms.ptr[k]);
                        if (!t || sc_query_bool_add(p->a, c, SC_OCCUR_SHOULD, t) != SC_OK)
                            c = NULL;
                    }
                }
                sc_status s2 = c ? sc_query_bool_add(p->a, q, occ, c) : SC_ENOMEM;
                if (s2 != SC_OK)
                    perr(p, s2, 0, "too many clauses (max %u)", SC_QUERY_MAX_CLAUSE_COUNT);
                i = j;
            }
            if (!q)
                p->status = SC_ENOMEM;
        }
    }
    sc_vec_free(&tk.terms);
    sc_vec_free(&tk.pos);
    return p->status == SC_OK ? q : NULL;
}

/* ---- grammar ---------------------------------------------------------------------------- */

enum { CONJ_NONE, CONJ_AND, CONJ_OR };
enum { MOD_NONE, MOD_NOT, MOD_REQ };

static sc_query *parse_query(parser *p, sc_slice field);

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
                perr(p, SC_EPARSE, n->off, "Cannot parse: expected a number after '^'");
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
            perr(p, SC_EPARSE, t->off, "'*' or '?' not allowed as first character in WildcardQuery");
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
            if (!normalize(p, field, sc_slice_make(raw.ptr + i, j - i), &norm))
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
        if (!unescape(p, t->off, t->len - 1, &text) || !normalize(p, field, text, &text))
            return NULL;
        q = sc_query_prefix(p->a, field, text);
    } else if (t->kind == T_REGEXPTERM) {
        if (!normalize(p, field, sc_slice_make(raw.ptr + 1, raw.len - 2), &text))
            return NULL;
        q = sc_query_regexp(p->a, field, text, SC_REGEXP_ALL);
        if (q)
            q->u.regexp.max_determinized_states = o->max_determinized_states;
    } else if (slop) {
        if (!unescape(p, t->off, raw.len, &text) || !normalize(p, field, text, &text))
            return NULL;
        double fms = 2.0;
        (void)parse_float(p->s.ptr + slop->off + 1, slop->len - 1, &fms);
        if (fms < 0) {
            perr(p, SC_EPARSE, slop->off,
                 "Minimum similarity for a FuzzyQuery has to be between 0.0f and 1.0f !");
            return NULL;
        }
        if (fms >= 1.0 && (fms > 1e9 || fms != (double)(int64_t)fms)) {
            perr(p, SC_EPARSE, slop->off, "Fractional edit distances are not allowed!");
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
        return field_query(p, field, text, false, 0);
    }
    if (!q && p->status == SC_OK)
        p->status = SC_ENOMEM;
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
        q = field_query(p, field, text, true, s);
        if (q)
            q->boost *= boost;
        return q;
    }
    case T_RANGEIN_START:
    case T_RANGEEX_START:
        perr(p, SC_EUNSUPPORTED, t->off, "range queries are not supported in query_string");
        return NULL;
    default:
        perr(p, SC_EPARSE, t->off, "Cannot parse: unexpected token at offset %zu", t->off);
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
                perr(p, SC_EUNSUPPORTED, f->off, "the '*' field (all fields) is not supported");
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
        perr(p, SC_ELIMIT, peek(p)->off, "query nested deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    sc_query *q = parse_query(p, field);
    p->depth--;
    if (p->status != SC_OK)
        return NULL;
    const tok *r = take(p);
    if (r->kind != T_RPAREN) {
        perr(p, SC_EPARSE, r->off, "Cannot parse: expected ')' at offset %zu", r->off);
        return NULL;
    }
    if (peek(p)->kind == T_CARAT) {
        take(p);
        const tok *n = take(p);
        double v = 1;
        if (n->kind != T_NUMBER || !parse_float(p->s.ptr + n->off, n->len, &v)) {
            perr(p, SC_EPARSE, n->off, "Cannot parse: expected a number after '^'");
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
    sc_query_occur occ = prohibited ? SC_OCCUR_MUST_NOT : required ? SC_OCCUR_MUST : SC_OCCUR_SHOULD;
    sc_status st = sc_query_bool_add(p->a, b, occ, q);
    if (st == SC_ELIMIT)
        perr(p, st, 0, "too many clauses: maxClauseCount is set to %u", SC_QUERY_MAX_CLAUSE_COUNT);
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
            perr(&p, SC_EPARSE, peek(&p)->off, "Cannot parse: unexpected token at offset %zu",
                 peek(&p)->off);
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

/* ---- simple_query_string (Lucene's SimpleQueryParser) ----------------------------------- */

typedef struct sstate {
    const uint8_t *data;
    size_t index, length;
    sc_query *top;
    int cur_op;  /* -1 none, else sc_query_occur */
    int prev_op; /* -1 none */
    int not_count;
} sstate;

static bool s_ws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool s_token_finished(const sstate *st)
{
    uint8_t c = st->data[st->index];
    return c == '"' || c == '|' || c == '+' || c == '(' || c == ')' || s_ws(c);
}

/* The per-field queries of one piece of text, ORed over the fields (SimpleQueryParser's
 * newDefaultQuery/newPhraseQuery/newPrefixQuery/newFuzzyQuery). kind: 0 term(s), 1 phrase,
 * 2 prefix, 3 fuzzy. */
static sc_query *s_fields_query(parser *p, sc_slice text, int kind, uint32_t n)
{
    const sc_query_parser_options *o = p->o;
    size_t nf = o->n_fields ? o->n_fields : 1;
    sc_query *bq = NULL, *single = NULL;
    size_t n_added = 0;
    for (size_t i = 0; i < nf && p->status == SC_OK; i++) {
        sc_slice field = o->n_fields ? o->fields[i] : o->default_field;
        sc_query *q = NULL;
        sc_slice norm;
        if (kind == 0) {
            q = field_query(p, field, text, false, 0);
        } else if (kind == 1) {
            q = field_query(p, field, text, true, n);
        } else if (normalize(p, field, text, &norm)) {
            q = kind == 2 ? sc_query_prefix(p->a, field, norm)
                          : sc_query_fuzzy(p->a, field, norm, n, o->fuzzy_prefix_length,
                                           o->fuzzy_max_expansions, o->fuzzy_transpositions);
            if (!q)
                p->status = SC_ENOMEM;
        }
        if (!q)
            continue;
        if (o->n_fields && o->field_boosts)
            q->boost *= o->field_boosts[i];
        if (!single) {
            single = q;
        } else {
            if (!bq) {
                if (!(bq = sc_query_bool(p->a)) ||
                    sc_query_bool_add(p->a, bq, SC_OCCUR_SHOULD, single) != SC_OK) {
                    p->status = SC_ENOMEM;
                    return NULL;
                }
            }
            if (sc_query_bool_add(p->a, bq, SC_OCCUR_SHOULD, q) != SC_OK)
                p->status = SC_ENOMEM;
        }
        n_added++;
    }
    return bq ? bq : single;
}

static void s_add(parser *p, sc_query *bq, sc_query_occur occ, sc_query *q)
{
    sc_status st = sc_query_bool_add(p->a, bq, occ, q);
    if (st == SC_ELIMIT)
        perr(p, st, 0, "too many clauses: maxClauseCount is set to %u", SC_QUERY_MAX_CLAUSE_COUNT);
    else if (st != SC_OK)
        p->status = st;
}

static void s_build_tree(parser *p, sstate *st, sc_query *branch)
{
    if (!branch || p->status != SC_OK)
        return;
    if (st->not_count % 2 == 1) {
        sc_query *nq = sc_query_bool(p->a), *all = sc_query_match_all(p->a);
        if (!nq || !all) {
            p->status = SC_ENOMEM;
            return;
        }
        s_add(p, nq, SC_OCCUR_MUST_NOT, branch);
        s_add(p, nq, SC_OCCUR_SHOULD, all);
        branch = nq;
    }
    if (!st->top) {
        st->top = branch;
    } else {
        if (st->cur_op < 0)
            st->cur_op = (int)p->o->default_operator;
        if (st->prev_op != st->cur_op) {
            sc_query *bq = sc_query_bool(p->a);
            if (!bq) {
                p->status = SC_ENOMEM;
                return;
            }
            s_add(p, bq, (sc_query_occur)st->cur_op, st->top);
            st->top = bq;
        }
        /* addClause copies the bool before adding: the tree is only ever extended here */
        s_add(p, st->top, (sc_query_occur)st->cur_op, branch);
        st->prev_op = st->cur_op;
    }
    st->cur_op = -1;
}

static uint32_t s_fuzziness(sstate *st)
{
    /* at '~': read until the token ends */
    size_t start = st->index + 1;
    st->index++;
    while (st->index < st->length && !s_token_finished(st))
        st->index++;
    size_t len = st->index - start;
    if (len == 0)
        return 2;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = st->data[start + i];
        if (i == 0 && (c == '-' || c == '+') && len > 1)
            continue;
        if (c < '0' || c > '9' || v > INT32_MAX)
            return 0; /* NumberFormatException is swallowed: 0 */
        v = v * 10 + (c - '0');
    }
    if (st->data[start] == '-')
        v = 0;
    return v > INT32_MAX ? 0 : (uint32_t)v;
}

static void s_parse(parser *p, sstate *st, int depth);

static void s_token(parser *p, sstate *st)
{
    char *buf = sc_arena_alloc(p->a, st->length - st->index + 1);
    if (!buf) {
        p->status = SC_ENOMEM;
        return;
    }
    size_t copied = 0;
    bool fuzzy = false;
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (c == '\\') {
            if (++st->index < st->length)
                buf[copied++] = (char)st->data[st->index++];
            continue;
        }
        if (s_token_finished(st))
            break;
        if (copied > 0 && c == '~') {
            fuzzy = true;
            break;
        }
        buf[copied++] = (char)c;
        st->index++;
    }
    if (copied == 0)
        return;
    sc_query *branch;
    if (fuzzy) {
        uint32_t f = s_fuzziness(st);
        if (f > 2)
            f = 2;
        branch = s_fields_query(p, sc_slice_make(buf, copied), f == 0 ? 0 : 3, f);
    } else if (buf[copied - 1] == '*') {
        branch = s_fields_query(p, sc_slice_make(buf, copied - 1), 2, 0);
    } else {
        branch = s_fields_query(p, sc_slice_make(buf, copied), 0, 0);
    }
    s_build_tree(p, st, branch);
}

static void s_phrase(parser *p, sstate *st)
{
    st->index++;
    size_t start = st->index, copied = 0;
    bool escaped = false, has_slop = false;
    char *buf = sc_arena_alloc(p->a, st->length - st->index + 1);
    if (!buf) {
        p->status = SC_ENOMEM;
        return;
    }
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (!escaped) {
            if (c == '\\') {
                escaped = true;
                st->index++;
                continue;
            }
            if (c == '"') {
                if (st->length > st->index + 1 && st->data[st->index + 1] == '~') {
                    st->index++;
                    if (st->length > st->index + 1)
                        has_slop = true;
                }
                break;
            }
        }
        escaped = false;
        buf[copied++] = (char)st->data[st->index++];
    }
    if (st->index == st->length) {
        st->index = start; /* never closed: read it as ordinary text */
        return;
    }
    uint32_t slop = 0;
    if (has_slop)
        slop = s_fuzziness(st);
    sc_query *branch = s_fields_query(p, sc_slice_make(buf, copied), 1, slop);
    s_build_tree(p, st, branch);
    st->index++;
}

static void s_subquery(parser *p, sstate *st, int depth)
{
    st->index++;
    size_t start = st->index;
    int precedence = 1;
    bool escaped = false;
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (!escaped) {
            if (c == '\\') {
                escaped = true;
                st->index++;
                continue;
            }
            if (c == '(')
                precedence++;
            else if (c == ')' && --precedence == 0)
                break;
        }
        escaped = false;
        st->index++;
    }
    if (st->index == st->length) {
        st->index = start; /* unclosed: the '(' is whitespace */
    } else if (st->index == start) {
        st->cur_op = -1;
        st->index++;
    } else {
        if (depth > MAX_DEPTH) {
            perr(p, SC_ELIMIT, start, "query nested deeper than %d levels", MAX_DEPTH);
            return;
        }
        sstate sub = {st->data, start, st->index, NULL, -1, -1, 0};
        s_parse(p, &sub, depth + 1);
        s_build_tree(p, st, sub.top);
        st->index++;
    }
}

static void s_parse(parser *p, sstate *st, int depth)
{
    while (st->index < st->length && p->status == SC_OK) {
        uint8_t c = st->data[st->index];
        if (c == '(') {
            s_subquery(p, st, depth);
        } else if (c == ')') {
            st->index++;
        } else if (c == '"') {
            s_phrase(p, st);
        } else if (c == '+') {
            if (st->cur_op < 0 && st->top)
                st->cur_op = SC_OCCUR_MUST;
            st->index++;
        } else if (c == '|') {
            if (st->cur_op < 0 && st->top)
                st->cur_op = SC_OCCUR_SHOULD;
            st->index++;
        } else if (c == '-') {
            st->not_count++;
            st->index++;
            continue;
        } else if (s_ws(c)) {
            st->index++;
        } else {
            s_token(p, st);
        }
        st->not_count = 0;
    }
}

sc_status sc_simple_query_string_parse(sc_slice text, const sc_query_parser_options *o,
                                       sc_arena *a, sc_query **out, sc_query_parse_error *err)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.o = o;
    p.a = a;
    p.err = err;
    *out = NULL;
    sstate st = {text.ptr, 0, text.len, NULL, -1, -1, 0};
    s_parse(&p, &st, 0);
    if (p.status == SC_OK && !st.top && !(st.top = sc_query_match_none(a)))
        p.status = SC_ENOMEM;
    if (p.status == SC_OK)
        *out = st.top;
    return p.status;
}
