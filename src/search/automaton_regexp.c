/* Lucene RegExp syntax -> AST (search/automaton_internal.h): recursive descent following
 * org.apache.lucene.util.automaton.RegExp's grammar, nesting bounded by NEST_LIMIT. */
#include <string.h>

#include "search/automaton_internal.h"
#include "search/query.h"

/* ---- regexp parsing --------------------------------------------------------------------- */

static uint32_t rnew(sc__am_rparser *p, sc__am_rnode n)
{
    if (p->status == SC_OK && sc_vec_push(&p->nodes, n) != SC_OK)
        p->status = SC_ENOMEM;
    return p->status == SC_OK ? (uint32_t)p->nodes.len - 1 : 0;
}

static uint32_t rbin(sc__am_rparser *p, sc__am_rkind k, uint32_t a, uint32_t b)
{
    sc__am_rnode n = {k, a, b, 0, 0, 0};
    return rnew(p, n);
}

static bool more(const sc__am_rparser *p)
{
    return p->pos < p->s.len;
}

static bool peek_any(const sc__am_rparser *p, const char *chars)
{
    return more(p) && p->s.ptr[p->pos] < 0x80 && strchr(chars, p->s.ptr[p->pos]) != NULL;
}

static bool match(sc__am_rparser *p, char c)
{
    if (more(p) && p->s.ptr[p->pos] == (uint8_t)c) {
        p->pos++;
        return true;
    }
    return false;
}

static void perr(sc__am_rparser *p, sc_status st, const char *msg)
{
    if (p->status != SC_OK)
        return;
    p->status = st;
    sc__am_set_err(p->err, p->pos, "%s at position %zu", msg, p->pos);
}

static uint32_t next_cp(sc__am_rparser *p)
{
    if (!more(p)) {
        perr(p, SC_EPARSE, "unexpected end-of-string");
        return 0;
    }
    return sc__am_utf8_decode(p->s, &p->pos);
}

static uint32_t parse_char_exp(sc__am_rparser *p)
{
    (void)match(p, '\\');
    return next_cp(p);
}

static uint32_t parse_union(sc__am_rparser *p);

static uint32_t string_node(sc__am_rparser *p, const uint8_t *bytes, size_t len)
{
    size_t off = p->strbuf.len;
    if (len && sc_vec_append(&p->strbuf, bytes, len) != SC_OK)
        p->status = SC_ENOMEM;
    sc__am_rnode n = {R_STRING, (uint32_t)off, (uint32_t)len, 0, 0, 0};
    return rnew(p, n);
}

static uint32_t class_node(sc__am_rparser *p, size_t range_off, bool negate)
{
    sc__am_rnode n = {
        R_CLASS, (uint32_t)range_off, (uint32_t)((p->ranges.len - range_off) / 2), negate, 0, 0};
    return rnew(p, n);
}

static void push_range(sc__am_rparser *p, uint32_t lo, uint32_t hi)
{
    if (p->status == SC_OK &&
        (sc_vec_push(&p->ranges, lo) != SC_OK || sc_vec_push(&p->ranges, hi) != SC_OK))
        p->status = SC_ENOMEM;
}

static uint32_t parse_interval(sc__am_rparser *p, size_t start, size_t end)
{
    const uint8_t *s = p->s.ptr + start;
    size_t len = end - start, dash = SIZE_MAX;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '-') {
            if (dash != SIZE_MAX) {
                dash = SIZE_MAX - 1;
                break;
            }
            dash = i;
        }
    if (dash == SIZE_MAX) {
        if (!(p->flags & SC_REGEXP_AUTOMATON))
            perr(p, SC_EPARSE, "interval syntax error");
        else
            perr(p, SC_EUNSUPPORTED, "named automata (<name>) are not supported");
        return 0;
    }
    if (!(p->flags & SC_REGEXP_INTERVAL) || dash == SIZE_MAX - 1 || dash == 0 || dash == len - 1) {
        perr(p, SC_EPARSE, "interval syntax error");
        return 0;
    }
    uint64_t v[2] = {0, 0};
    size_t lens[2] = {dash, len - dash - 1};
    const uint8_t *parts[2] = {s, s + dash + 1};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < lens[k]; i++) {
            uint8_t c = parts[k][i];
            /* Java's Integer.parseInt accepts a leading '+'. */
            if (i == 0 && c == '+' && lens[k] > 1)
                continue;
            if (c < '0' || c > '9' || (v[k] = v[k] * 10 + (c - '0')) > INT32_MAX) {
                perr(p, SC_EPARSE, "interval syntax error");
                return 0;
            }
        }
    uint32_t digits = lens[0] == lens[1] ? (uint32_t)lens[0] : 0;
    uint32_t lo = (uint32_t)(v[0] < v[1] ? v[0] : v[1]), hi = (uint32_t)(v[0] < v[1] ? v[1] : v[0]);
    sc__am_rnode n = {R_INTERVAL, 0, 0, lo, hi, digits};
    return rnew(p, n);
}

static uint32_t parse_simple(sc__am_rparser *p)
{
    if (match(p, '.')) {
        size_t off = p->ranges.len;
        push_range(p, 0, MAX_CP);
        return class_node(p, off, false);
    }
    if ((p->flags & SC_REGEXP_EMPTY) && match(p, '#')) {
        sc__am_rnode n = {R_EMPTY, 0, 0, 0, 0, 0};
        return rnew(p, n);
    }
    if ((p->flags & SC_REGEXP_ANYSTRING) && match(p, '@')) {
        sc__am_rnode n = {R_ANYSTRING, 0, 0, 0, 0, 0};
        return rnew(p, n);
    }
    if (match(p, '"')) {
        size_t start = p->pos;
        while (more(p) && p->s.ptr[p->pos] != '"')
            p->pos++;
        if (!match(p, '"')) {
            perr(p, SC_EPARSE, "expected '\"'");
            return 0;
        }
        return string_node(p, p->s.ptr + start, p->pos - 1 - start);
    }
    if (match(p, '(')) {
        if (match(p, ')'))
            return string_node(p, NULL, 0);
        uint32_t e = parse_union(p);
        if (!match(p, ')'))
            perr(p, SC_EPARSE, "expected ')'");
        return e;
    }
    if ((p->flags & (SC_REGEXP_AUTOMATON | SC_REGEXP_INTERVAL)) && match(p, '<')) {
        size_t start = p->pos;
        while (more(p) && p->s.ptr[p->pos] != '>')
            p->pos++;
        if (!match(p, '>')) {
            perr(p, SC_EPARSE, "expected '>'");
            return 0;
        }
        return parse_interval(p, start, p->pos - 1);
    }
    uint32_t c = parse_char_exp(p);
    size_t off = p->ranges.len;
    push_range(p, c, c);
    return class_node(p, off, false);
}

static uint32_t parse_char_class_exp(sc__am_rparser *p)
{
    if (!match(p, '['))
        return parse_simple(p);
    bool negate = match(p, '^');
    size_t off = p->ranges.len;
    /* charclasses: at least one charclass, then more until ']' */
    do {
        uint32_t lo = parse_char_exp(p), hi = lo;
        if (match(p, '-'))
            hi = parse_char_exp(p);
        if (p->status == SC_OK && lo > hi) {
            perr(p, SC_EPARSE, "invalid range: from cannot be > to");
            return 0;
        }
        push_range(p, lo, hi);
    } while (p->status == SC_OK && more(p) && !peek_any(p, "]"));
    if (!match(p, ']'))
        perr(p, SC_EPARSE, "expected ']'");
    return class_node(p, off, negate);
}

static uint32_t parse_compl(sc__am_rparser *p)
{
    if ((p->flags & SC_REGEXP_COMPLEMENT) && match(p, '~')) {
        if (++p->depth > NEST_LIMIT) {
            perr(p, SC_ELIMIT, "regular expression nested deeper than 1000 levels");
            return 0;
        }
        uint32_t e = parse_compl(p);
        p->depth--;
        sc__am_rnode n = {R_COMPLEMENT, e, 0, 0, 0, 0};
        return rnew(p, n);
    }
    return parse_char_class_exp(p);
}

static uint32_t parse_number(sc__am_rparser *p, bool *present)
{
    uint64_t v = 0;
    size_t start = p->pos;
    *present = false;
    while (peek_any(p, "0123456789")) {
        v = v * 10 + (p->s.ptr[p->pos++] - '0');
        if (v > INT32_MAX) {
            perr(p, SC_EPARSE, "repeat count too large");
            return 0;
        }
    }
    *present = p->pos != start;
    return (uint32_t)v;
}

static uint32_t parse_repeat(sc__am_rparser *p)
{
    uint32_t e = parse_compl(p);
    while (p->status == SC_OK && peek_any(p, "?*+{")) {
        sc__am_rnode n = {R_REPEAT, e, 0, 0, UINT32_MAX, 0};
        if (match(p, '?')) {
            n.kind = R_OPT;
        } else if (match(p, '*')) {
            n.min = 0;
        } else if (match(p, '+')) {
            n.min = 1;
        } else {
            (void)match(p, '{');
            bool has;
            n.min = parse_number(p, &has);
            if (!has) {
                perr(p, SC_EPARSE, "integer expected");
                return 0;
            }
            n.max = n.min;
            if (match(p, ',')) {
                uint32_t m = parse_number(p, &has);
                n.max = has ? m : UINT32_MAX;
            }
            if (!match(p, '}')) {
                perr(p, SC_EPARSE, "expected '}'");
                return 0;
            }
        }
        e = rnew(p, n);
    }
    return e;
}

static uint32_t parse_concat(sc__am_rparser *p)
{
    uint32_t e = parse_repeat(p);
    /* Iterative (right-nested like Lucene's recursion, but without deep recursion). */
    SC_VEC(uint32_t) parts;
    memset(&parts, 0, sizeof parts);
    if (sc_vec_push(&parts, e) != SC_OK)
        p->status = SC_ENOMEM;
    while (p->status == SC_OK && more(p) && !peek_any(p, ")|") &&
           !((p->flags & SC_REGEXP_INTERSECTION) && peek_any(p, "&"))) {
        uint32_t x = parse_repeat(p);
        if (sc_vec_push(&parts, x) != SC_OK)
            p->status = SC_ENOMEM;
    }
    e = parts.ptr ? parts.ptr[parts.len - 1] : 0;
    for (size_t i = parts.len; p->status == SC_OK && i-- > 1;)
        e = rbin(p, R_CONCAT, parts.ptr[i - 1], e);
    sc_vec_free(&parts);
    return e;
}

static uint32_t parse_inter(sc__am_rparser *p)
{
    uint32_t e = parse_concat(p);
    while (p->status == SC_OK && (p->flags & SC_REGEXP_INTERSECTION) && match(p, '&'))
        e = rbin(p, R_INTERSECT, e, parse_concat(p));
    return e;
}

static uint32_t parse_union(sc__am_rparser *p)
{
    if (++p->depth > NEST_LIMIT) {
        perr(p, SC_ELIMIT, "regular expression nested deeper than 1000 levels");
        return 0;
    }
    uint32_t e = parse_inter(p);
    while (p->status == SC_OK && match(p, '|'))
        e = rbin(p, R_UNION, e, parse_inter(p));
    p->depth--;
    return e;
}

uint32_t sc__am_regexp_parse(sc__am_rparser *p)
{
    uint32_t root;
    if (p->s.len == 0)
        return string_node(p, NULL, 0);
    root = parse_union(p);
    if (p->status == SC_OK && more(p))
        perr(p, SC_EPARSE, "end-of-string expected");
    return root;
}
