/* Pattern -> byte DFA compilation (search/automaton.h): a byte NFA built Thompson-style from a
 * parsed pattern (code point ranges become UTF-8 byte paths), subset construction over byte
 * equivalence classes with a state limit, product/complement for `&` and `~`, and pruning of
 * states that cannot accept. Scratch memory is heap (freed before return); the result's
 * tables live in the caller's arena. Determinization is in automaton_det.c, the RegExp parser
 * in automaton_regexp.c. */
#include "search/automaton.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/vec.h"
#include "search/automaton_internal.h"
#include "search/query.h"

/* ---- NFA -------------------------------------------------------------------------------- */

void sc__am_set_err(sc_automaton_error *err, size_t off, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->offset = off;
}

uint32_t sc__am_new_state(nfa *n)
{
    if (n->n_states >= NFA_STATE_LIMIT && n->status == SC_OK) {
        n->status = SC_ELIMIT;
        sc__am_set_err(n->err, 0, "pattern too complex: the automaton exceeds %u NFA states",
                       NFA_STATE_LIMIT);
    }
    return n->n_states++;
}

void sc__am_add_edge(nfa *n, uint32_t from, uint32_t to, unsigned lo, unsigned hi)
{
    if (n->status != SC_OK)
        return;
    edge e = {from, to, (uint16_t)lo, (uint16_t)hi};
    if (sc_vec_push(&n->edges, e) != SC_OK)
        n->status = SC_ENOMEM;
}

void sc__am_add_eps(nfa *n, uint32_t from, uint32_t to)
{
    sc__am_add_edge(n, from, to, EPS, EPS);
}

static frag frag_new(nfa *n)
{
    frag f;
    f.start = sc__am_new_state(n);
    f.end = sc__am_new_state(n);
    return f;
}

static frag frag_empty_string(nfa *n)
{
    frag f = frag_new(n);
    sc__am_add_eps(n, f.start, f.end);
    return f;
}

/* Decodes one code point at s[*i]; invalid bytes decode as U+FFFD and advance by one. */
uint32_t sc__am_utf8_decode(sc_slice s, size_t *i)
{
    const uint8_t *p = s.ptr + *i;
    size_t left = s.len - *i;
    uint32_t c = p[0];
    int n = c < 0x80                ? 1
            : c >= 0xF0 && c < 0xF5 ? 4
            : c >= 0xE0             ? 3
            : c >= 0xC2 && c < 0xE0 ? 2
                                    : 0;
    if (n == 0 || (size_t)n > left) {
        *i += 1;
        return c < 0x80 ? c : 0xFFFD;
    }
    if (n == 1) {
        *i += 1;
        return c;
    }
    uint32_t cp = c & (0x3F >> (n - 1));
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *i += 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > MAX_CP || (cp >= 0xD800 && cp <= 0xDFFF)) {
        *i += 1;
        return 0xFFFD;
    }
    *i += (size_t)n;
    return cp;
}

size_t sc_automaton_cp_len(sc_slice s)
{
    size_t n = 0;
    for (size_t i = 0; i < s.len; n++)
        (void)sc__am_utf8_decode(s, &i);
    return n;
}

/* Adds byte paths from `from` to `to` for every code point in [lo, hi] of one UTF-8 length
 * (the RE2 splitting: ranges are cut until every byte position is an independent range). */
static void utf8_range_same_len(nfa *n, uint32_t from, uint32_t to, uint32_t lo, uint32_t hi)
{
    for (int i = 1; i < 4; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8_range_same_len(n, from, to, lo, lo | m);
                utf8_range_same_len(n, from, to, (lo | m) + 1, hi);
                return;
            }
            if ((hi & m) != m) {
                utf8_range_same_len(n, from, to, lo, (hi & ~m) - 1);
                utf8_range_same_len(n, from, to, hi & ~m, hi);
                return;
            }
        }
    }
    uint8_t a[4], b[4];
    int len = (int)sc_utf8_put(a, lo);
    (void)sc_utf8_put(b, hi);
    uint32_t cur = from;
    for (int k = 0; k < len; k++) {
        uint32_t nxt = k == len - 1 ? to : sc__am_new_state(n);
        sc__am_add_edge(n, cur, nxt, a[k], b[k]);
        cur = nxt;
    }
}

/* Code points [lo, hi] (surrogates excluded) from `from` to `to`. */
static void add_cp_range(nfa *n, uint32_t from, uint32_t to, uint32_t lo, uint32_t hi)
{
    static const uint32_t bounds[][2] = {
        {0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, MAX_CP}};
    if (hi > MAX_CP)
        hi = MAX_CP;
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        uint32_t l = lo > bounds[i][0] ? lo : bounds[i][0];
        uint32_t h = hi < bounds[i][1] ? hi : bounds[i][1];
        if (l <= h)
            utf8_range_same_len(n, from, to, l, h);
    }
}

static frag frag_cp_range(nfa *n, uint32_t lo, uint32_t hi)
{
    frag f = frag_new(n);
    add_cp_range(n, f.start, f.end, lo, hi);
    return f;
}

static frag frag_bytes(nfa *n, sc_slice s)
{
    frag f;
    f.start = sc__am_new_state(n);
    uint32_t cur = f.start;
    for (size_t i = 0; i < s.len; i++) {
        uint32_t nxt = sc__am_new_state(n);
        sc__am_add_edge(n, cur, nxt, s.ptr[i], s.ptr[i]);
        cur = nxt;
    }
    f.end = sc__am_new_state(n);
    sc__am_add_eps(n, cur, f.end);
    return f;
}

static frag frag_concat(nfa *n, frag a, frag b)
{
    sc__am_add_eps(n, a.end, b.start);
    frag f = {a.start, b.end};
    return f;
}

static frag frag_union(nfa *n, frag a, frag b)
{
    frag f = frag_new(n);
    sc__am_add_eps(n, f.start, a.start);
    sc__am_add_eps(n, f.start, b.start);
    sc__am_add_eps(n, a.end, f.end);
    sc__am_add_eps(n, b.end, f.end);
    return f;
}

static frag frag_star(nfa *n, frag a)
{
    frag f = frag_new(n);
    sc__am_add_eps(n, f.start, a.start);
    sc__am_add_eps(n, f.start, f.end);
    sc__am_add_eps(n, a.end, a.start);
    sc__am_add_eps(n, a.end, f.end);
    return f;
}

static frag frag_optional(nfa *n, frag a)
{
    frag f = frag_new(n);
    sc__am_add_eps(n, f.start, a.start);
    sc__am_add_eps(n, f.start, f.end);
    sc__am_add_eps(n, a.end, f.end);
    return f;
}

/* The empty language: start and end not connected. */
static frag frag_nothing(nfa *n)
{
    return frag_new(n);
}

frag sc__am_frag_any_string(nfa *n)
{
    return frag_star(n, frag_cp_range(n, 0, MAX_CP));
}

/* ---- regexp AST -> NFA ------------------------------------------------------------------ */

typedef struct builder {
    const sc__am_rparser *p;
    uint32_t max_states;
    sc_automaton_error *err;
} builder;

static frag build(builder *b, nfa *n, uint32_t id, int depth);

/* Digit strings of one length k between lo and hi (same length, inclusive). */
static frag digits_between(nfa *n, const char *lo, const char *hi, size_t k)
{
    if (k == 0)
        return frag_empty_string(n);
    if (lo[0] == hi[0])
        return frag_concat(n, frag_cp_range(n, (uint8_t)lo[0], (uint8_t)lo[0]),
                           digits_between(n, lo + 1, hi + 1, k - 1));
    char nines[16], zeros[16];
    memset(nines, '9', k - 1);
    memset(zeros, '0', k - 1);
    frag f = frag_concat(n, frag_cp_range(n, (uint8_t)lo[0], (uint8_t)lo[0]),
                         digits_between(n, lo + 1, nines, k - 1));
    if (hi[0] - lo[0] >= 2)
        f = frag_union(n, f,
                       frag_concat(n, frag_cp_range(n, (uint8_t)lo[0] + 1, (uint8_t)hi[0] - 1),
                                   digits_between(n, zeros, nines, k - 1)));
    return frag_union(n, f,
                      frag_concat(n, frag_cp_range(n, (uint8_t)hi[0], (uint8_t)hi[0]),
                                  digits_between(n, zeros, hi + 1, k - 1)));
}

static frag build_interval(nfa *n, uint32_t lo, uint32_t hi, uint32_t digits)
{
    char a[16], c[16];
    if (digits > 0) {
        int lh = snprintf(c, sizeof c, "%u", hi);
        if ((uint32_t)lh > digits || digits > 12)
            return frag_nothing(n);
        snprintf(a, sizeof a, "%0*u", (int)digits, lo);
        snprintf(c, sizeof c, "%0*u", (int)digits, hi);
        return digits_between(n, a, c, digits);
    }
    /* Any number of leading zeros, then the canonical decimal form. */
    frag zeros = frag_star(n, frag_cp_range(n, '0', '0'));
    frag alt = frag_nothing(n);
    uint64_t p10 = 1;
    for (uint32_t len = 1; len <= 10; len++, p10 *= 10) {
        uint64_t l = len == 1 ? 0 : p10, h = p10 * 10 - 1;
        if (l < lo)
            l = lo;
        if (h > hi)
            h = hi;
        if (l > h)
            continue;
        snprintf(a, sizeof a, "%llu", (unsigned long long)l);
        snprintf(c, sizeof c, "%llu", (unsigned long long)h);
        alt = frag_union(n, alt, digits_between(n, a, c, len));
    }
    return frag_concat(n, zeros, alt);
}

static frag build_class(builder *b, nfa *n, const sc__am_rnode *r)
{
    const uint32_t *rg = b->p->ranges.ptr + r->a;
    frag f = frag_new(n);
    if (!r->min) {
        for (uint32_t i = 0; i < r->b; i++)
            add_cp_range(n, f.start, f.end, rg[2 * i], rg[2 * i + 1]);
        return f;
    }
    /* Negated: sweep the code points not covered by any range. */
    uint32_t from = 0;
    for (;;) {
        /* smallest range start >= from that covers or follows `from` */
        bool covered = false;
        uint32_t next_start = MAX_CP + 1;
        for (uint32_t i = 0; i < r->b; i++) {
            if (rg[2 * i] <= from && from <= rg[2 * i + 1]) {
                covered = true;
                from = rg[2 * i + 1] + 1;
                break;
            }
            if (rg[2 * i] > from && rg[2 * i] < next_start)
                next_start = rg[2 * i];
        }
        if (from > MAX_CP)
            break;
        if (covered)
            continue;
        add_cp_range(n, f.start, f.end, from, next_start - 1);
        from = next_start;
        if (from > MAX_CP)
            break;
    }
    return f;
}

static frag build_repeat(builder *b, nfa *n, const sc__am_rnode *r, int depth)
{
    frag f = frag_empty_string(n);
    if (r->min > r->max)
        return frag_nothing(n);
    for (uint32_t i = 0; i < r->min && n->status == SC_OK; i++)
        f = frag_concat(n, f, build(b, n, r->a, depth + 1));
    if (r->max == UINT32_MAX)
        return frag_concat(n, f, frag_star(n, build(b, n, r->a, depth + 1)));
    /* (e(e(e)?)?)? for the optional copies */
    uint32_t extra = r->max - r->min;
    if (extra == 0)
        return f;
    frag tail = frag_optional(n, build(b, n, r->a, depth + 1));
    for (uint32_t i = 1; i < extra && n->status == SC_OK; i++)
        tail = frag_optional(n, frag_concat(n, build(b, n, r->a, depth + 1), tail));
    return frag_concat(n, f, tail);
}

/* Builds node `id` in its own NFA and determinizes it. */
static sc_status build_dfa(builder *b, uint32_t id, int depth, ddfa *out)
{
    nfa sub;
    memset(&sub, 0, sizeof sub);
    sub.err = b->err;
    frag f = build(b, &sub, id, depth + 1);
    sc_status st = sc__am_sub_determinize(&sub, f, b->max_states, b->err, out);
    sc_vec_free(&sub.edges);
    return st;
}

static frag build_bool_op(builder *b, nfa *n, const sc__am_rnode *r, int depth)
{
    ddfa x, y, z, any;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    memset(&z, 0, sizeof z);
    memset(&any, 0, sizeof any);
    sc_status st = build_dfa(b, r->a, depth, &x);
    if (st == SC_OK && r->kind == R_INTERSECT)
        st = build_dfa(b, r->b, depth, &y);
    if (st == SC_OK && r->kind == R_COMPLEMENT) {
        /* Complement over code point strings = valid UTF-8 strings minus L. */
        st = sc__am_ddfa_flip_total(&x);
        if (st == SC_OK)
            st = sc__am_any_utf8(b->max_states, b->err, &y);
    }
    if (st == SC_OK)
        st = sc__am_ddfa_intersect(&x, &y, b->max_states, b->err, &z);
    frag f = {0, 0};
    if (st == SC_OK)
        f = sc__am_embed(n, &z);
    else if (n->status == SC_OK)
        n->status = st;
    sc__am_ddfa_fini(&x);
    sc__am_ddfa_fini(&y);
    sc__am_ddfa_fini(&z);
    sc__am_ddfa_fini(&any);
    return st == SC_OK ? f : frag_nothing(n);
}

static frag build(builder *b, nfa *n, uint32_t id, int depth)
{
    if (n->status != SC_OK)
        return frag_nothing(n);
    if (depth > 4 * NEST_LIMIT) {
        n->status = SC_ELIMIT;
        sc__am_set_err(b->err, 0, "regular expression nested deeper than %d levels", NEST_LIMIT);
        return frag_nothing(n);
    }
    const sc__am_rnode *r = &b->p->nodes.ptr[id];
    switch (r->kind) {
    case R_UNION: {
        frag x = build(b, n, r->a, depth + 1);
        return frag_union(n, x, build(b, n, r->b, depth + 1));
    }
    case R_CONCAT: {
        frag x = build(b, n, r->a, depth + 1);
        return frag_concat(n, x, build(b, n, r->b, depth + 1));
    }
    case R_OPT: return frag_optional(n, build(b, n, r->a, depth + 1));
    case R_REPEAT: return build_repeat(b, n, r, depth);
    case R_INTERSECT:
    case R_COMPLEMENT: return build_bool_op(b, n, r, depth);
    case R_CLASS: return build_class(b, n, r);
    case R_EMPTY: return frag_nothing(n);
    case R_ANYSTRING: return sc__am_frag_any_string(n);
    case R_STRING:
        return frag_bytes(n, r->b ? sc_slice_make(b->p->strbuf.ptr + r->a, r->b)
                                  : sc_slice_make("", 0));
    case R_INTERVAL: return build_interval(n, r->min, r->max, r->digits);
    }
    return frag_nothing(n);
}

/* ---- finishing: prune and copy into the arena ------------------------------------------- */

/* Maps states that cannot reach acceptance to SC_DFA_DEAD, renumbers, copies into `a`. */
static sc_status finish(const ddfa *d, sc_arena *a, sc_dfa *out)
{
    memset(out, 0, sizeof *out);
    uint32_t ns = d->n_states, nc = d->n_classes;
    uint8_t *live = calloc(ns + 1, 1);
    uint32_t *remap = malloc((ns + 1) * sizeof *remap);
    if (!live || !remap) {
        free(live);
        free(remap);
        return SC_ENOMEM;
    }
    for (uint32_t s = 0; s < ns; s++)
        live[s] = d->accept[s];
    /* Fixpoint of backward reachability (the DFA is small: bounded by max_states); states are
     * numbered in discovery order, so a pass from the last one settles most in one go. */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t s = ns; s-- > 0;) {
            if (live[s])
                continue;
            for (uint32_t c = 0; c < nc; c++) {
                uint32_t t = d->next[(size_t)s * nc + c];
                if (t != SC_DFA_DEAD && live[t]) {
                    live[s] = 1;
                    changed = true;
                    break;
                }
            }
        }
    }
    uint32_t n_live = 0;
    for (uint32_t s = 0; s < ns; s++)
        remap[s] = live[s] ? n_live++ : SC_DFA_DEAD;
    sc_status st = SC_OK;
    uint32_t out_states = n_live ? n_live : 1; /* the empty language keeps one dead start */
    uint32_t *next = sc_arena_alloc(a, (size_t)out_states * nc * sizeof *next);
    uint8_t *acc = sc_arena_calloc(a, out_states, 1);
    if (!next || !acc) {
        st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    } else {
        for (size_t i = 0; i < (size_t)out_states * nc; i++)
            next[i] = SC_DFA_DEAD;
        for (uint32_t s = 0; s < ns; s++) {
            if (!live[s])
                continue;
            acc[remap[s]] = d->accept[s];
            for (uint32_t c = 0; c < nc; c++) {
                uint32_t t = d->next[(size_t)s * nc + c];
                next[(size_t)remap[s] * nc + c] = t == SC_DFA_DEAD ? SC_DFA_DEAD : remap[t];
            }
        }
        out->n_states = out_states;
        out->n_classes = nc;
        memcpy(out->classmap, d->classmap, 256);
        out->start = n_live ? remap[d->start] : 0;
        if (out->start == SC_DFA_DEAD) /* start cannot accept: the empty language */
            out->start = 0, acc[0] = 0, memset(next, 0xff, (size_t)nc * sizeof *next);
        out->next = next;
        out->accept = acc;
    }
    free(live);
    free(remap);
    return st;
}

static sc_status compile(nfa *n, frag f, uint32_t max_states, sc_automaton_error *err, sc_arena *a,
                         sc_dfa *out)
{
    if (n->status != SC_OK)
        return n->status;
    ddfa d;
    sc_status st = sc__am_determinize(n, f.start, f.end, max_states, err, &d);
    if (st == SC_OK)
        st = finish(&d, a, out);
    sc__am_ddfa_fini(&d);
    return st;
}

sc_status sc_automaton_regexp(sc_slice pattern, uint32_t flags, uint32_t max_states, sc_arena *a,
                              sc_dfa *out, sc_automaton_error *err)
{
    sc__am_rparser p;
    memset(&p, 0, sizeof p);
    p.s = pattern;
    p.flags = flags;
    p.err = err;
    uint32_t root = sc__am_regexp_parse(&p);
    sc_status st = p.status;
    if (st == SC_OK) {
        nfa n;
        memset(&n, 0, sizeof n);
        n.err = err;
        builder b = {&p, max_states, err};
        frag f = build(&b, &n, root, 0);
        st = compile(&n, f, max_states, err, a, out);
        if (st == SC_OK)
            sc__am_hints(out, a);
        sc_vec_free(&n.edges);
    }
    sc_vec_free(&p.nodes);
    sc_vec_free(&p.ranges);
    sc_vec_free(&p.strbuf);
    return st;
}

sc_status sc__am_wildcard_nfa(sc_slice pattern, uint32_t max_states, sc_arena *a, sc_dfa *out,
                              sc_automaton_error *err)
{
    nfa n;
    memset(&n, 0, sizeof n);
    n.err = err;
    frag f = frag_empty_string(&n);
    for (size_t i = 0; i < pattern.len && n.status == SC_OK;) {
        uint32_t c = sc__am_utf8_decode(pattern, &i);
        frag x;
        if (c == '*') {
            x = sc__am_frag_any_string(&n);
        } else if (c == '?') {
            x = frag_cp_range(&n, 0, MAX_CP);
        } else {
            if (c == '\\' && i < pattern.len)
                c = sc__am_utf8_decode(pattern, &i);
            x = frag_cp_range(&n, c, c);
        }
        f = frag_concat(&n, f, x);
    }
    sc_status st = compile(&n, f, max_states, err, a, out);
    sc_vec_free(&n.edges);
    return st;
}

/* Any byte string. */
static frag frag_any_bytes(nfa *n)
{
    frag any = frag_new(n);
    sc__am_add_edge(n, any.start, any.end, 0, 255);
    return frag_star(n, any);
}

/* Byte strings >= lo (> lo when !incl): lo's bytes one by one, leaving to "any suffix" on a
 * greater byte or past lo's end. */
static frag range_ge(nfa *n, sc_slice lo, bool incl)
{
    frag f = {sc__am_new_state(n), sc__am_new_state(n)};
    uint32_t any = sc__am_new_state(n), s = f.start;
    sc__am_add_edge(n, any, any, 0, 255);
    sc__am_add_eps(n, any, f.end);
    for (size_t k = 0; k < lo.len; k++) {
        uint32_t t = sc__am_new_state(n);
        sc__am_add_edge(n, s, t, lo.ptr[k], lo.ptr[k]);
        if (lo.ptr[k] < 255)
            sc__am_add_edge(n, s, any, lo.ptr[k] + 1u, 255);
        s = t;
    }
    if (incl)
        sc__am_add_eps(n, s, f.end);
    sc__am_add_edge(n, s, any, 0, 255);
    return f;
}

/* Byte strings <= hi (< hi when !incl): hi's proper prefixes, and a smaller byte at any point
 * followed by any suffix. */
static frag range_le(nfa *n, sc_slice hi, bool incl)
{
    frag f = {sc__am_new_state(n), sc__am_new_state(n)};
    uint32_t any = sc__am_new_state(n), s = f.start;
    sc__am_add_edge(n, any, any, 0, 255);
    sc__am_add_eps(n, any, f.end);
    for (size_t k = 0; k < hi.len; k++) {
        uint32_t t = sc__am_new_state(n);
        sc__am_add_eps(n, s, f.end);
        sc__am_add_edge(n, s, t, hi.ptr[k], hi.ptr[k]);
        if (hi.ptr[k] > 0)
            sc__am_add_edge(n, s, any, 0, hi.ptr[k] - 1u);
        s = t;
    }
    if (incl)
        sc__am_add_eps(n, s, f.end);
    return f;
}

sc_status sc_automaton_term_range(const sc_slice *lo, bool incl_lo, const sc_slice *hi,
                                  bool incl_hi, sc_arena *a, sc_dfa *out)
{
    nfa n1, n2;
    memset(&n1, 0, sizeof n1);
    memset(&n2, 0, sizeof n2);
    frag f1 = lo ? range_ge(&n1, *lo, incl_lo) : frag_any_bytes(&n1);
    frag f2 = hi ? range_le(&n2, *hi, incl_hi) : frag_any_bytes(&n2);
    ddfa d1, d2, d;
    memset(&d1, 0, sizeof d1);
    memset(&d2, 0, sizeof d2);
    memset(&d, 0, sizeof d);
    sc_status st = n1.status != SC_OK ? n1.status : n2.status;
    if (st == SC_OK)
        st = sc__am_sub_determinize(&n1, f1, UINT32_MAX, NULL, &d1);
    if (st == SC_OK)
        st = sc__am_sub_determinize(&n2, f2, UINT32_MAX, NULL, &d2);
    if (st == SC_OK)
        st = sc__am_ddfa_intersect(&d1, &d2, UINT32_MAX, NULL, &d);
    if (st == SC_OK)
        st = finish(&d, a, out);
    sc__am_ddfa_fini(&d1);
    sc__am_ddfa_fini(&d2);
    sc__am_ddfa_fini(&d);
    sc_vec_free(&n1.edges);
    sc_vec_free(&n2.edges);
    return st;
}

/* Levenshtein NFA over code points: state (i, e) = i code points of the word consumed with e
 * edits; T(i, e) = halfway through a transposition of w[i], w[i+1]. "Any code point into
 * state t" transitions share one UTF-8 gadget per target. */
sc_status sc_automaton_fuzzy(sc_slice term, uint32_t max_edits, uint32_t prefix_length,
                             bool transpositions, sc_arena *a, sc_dfa *out, sc_automaton_error *err)
{
    if (max_edits > 2) {
        sc__am_set_err(err, 0, "max_edits must be between 0 and 2, got %u", max_edits);
        return SC_EINVAL;
    }
    size_t ncp = sc_automaton_cp_len(term);
    uint32_t *w = malloc((ncp + 1) * sizeof *w);
    if (!w)
        return SC_ENOMEM;
    for (size_t i = 0, k = 0; i < term.len; k++)
        w[k] = sc__am_utf8_decode(term, &i);
    size_t p = prefix_length < ncp ? prefix_length : ncp;
    uint32_t k = max_edits;
    nfa n;
    memset(&n, 0, sizeof n);
    n.err = err;
    frag f = frag_empty_string(&n);
    for (size_t i = 0; i < p; i++)
        f = frag_concat(&n, f, frag_cp_range(&n, w[i], w[i]));
    size_t m = ncp - p; /* the part with edits: w[p..ncp) */
    const uint32_t *v = w + p;
    size_t grid = (m + 1) * (k + 1);
    uint32_t base = n.n_states;
    for (size_t s = 0; s < grid; s++)
        (void)sc__am_new_state(&n);
    uint32_t gadget0 = n.n_states;
    for (size_t s = 0; s < grid; s++) /* gadget entry for "any code point -> (i,e)" */
        (void)sc__am_new_state(&n);
    uint32_t end = sc__am_new_state(&n);
#define ST(i, e) (base + (uint32_t)((i) * (k + 1) + (e)))
#define GADGET(i, e) (gadget0 + (uint32_t)((i) * (k + 1) + (e)))
    for (size_t i = 0; i <= m; i++)
        for (uint32_t e = 0; e <= k; e++) {
            if (e >= 1)
                add_cp_range(&n, GADGET(i, e), ST(i, e), 0, MAX_CP);
            if (i == m)
                sc__am_add_eps(&n, ST(i, e), end);
            if (i < m)
                add_cp_range(&n, ST(i, e), ST(i + 1, e), v[i], v[i]);
            if (e < k) {
                sc__am_add_eps(&n, ST(i, e), GADGET(i, e + 1)); /* insertion */
                if (i < m) {
                    sc__am_add_eps(&n, ST(i, e), GADGET(i + 1, e + 1)); /* substitution */
                    sc__am_add_eps(&n, ST(i, e), ST(i + 1, e + 1));     /* deletion */
                }
                if (transpositions && i + 1 < m && v[i] != v[i + 1]) {
                    uint32_t t = sc__am_new_state(&n);
                    add_cp_range(&n, ST(i, e), t, v[i + 1], v[i + 1]);
                    add_cp_range(&n, t, ST(i + 2, e + 1), v[i], v[i]);
                }
            }
        }
#undef ST
#undef GADGET
    sc__am_add_eps(&n, f.end, base);
    f.end = end;
    free(w);
    sc_status st = compile(&n, f, SC_QUERY_MAX_DETERMINIZED_STATES * 10, err, a, out);
    sc_vec_free(&n.edges);
    return st;
}

bool sc_automaton_run(const sc_dfa *d, sc_slice s)
{
    uint32_t st = d->start;
    for (size_t i = 0; i < s.len && st != SC_DFA_DEAD; i++)
        st = sc_dfa_step(d, st, s.ptr[i]);
    return sc_dfa_accepts(d, st);
}

uint32_t sc_automaton_edit_distance(sc_slice a, sc_slice b, bool transpositions, uint32_t limit)
{
    if (sc_slice_eq(a, b))
        return 0;
    uint32_t x[256], y[256];
    size_t n = 0, m = 0;
    for (size_t i = 0; i < a.len; n++) {
        if (n == 256)
            return limit + 1;
        x[n] = sc__am_utf8_decode(a, &i);
    }
    for (size_t i = 0; i < b.len; m++) {
        if (m == 256)
            return limit + 1;
        y[m] = sc__am_utf8_decode(b, &i);
    }
    if ((n > m ? n - m : m - n) > limit)
        return limit + 1;
    /* Three rolling rows of the optimal-string-alignment DP. */
    uint32_t rows[3][257];
    uint32_t *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++)
        prev[j] = (uint32_t)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (uint32_t)i;
        uint32_t row_min = cur[0];
        for (size_t j = 1; j <= m; j++) {
            uint32_t cost = x[i - 1] != y[j - 1];
            uint32_t v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v)
                v = prev[j - 1] + cost;
            if (transpositions && i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < row_min)
                row_min = v;
        }
        if (row_min > limit + 1)
            return limit + 1;
        uint32_t *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[m] > limit ? limit + 1 : prev[m];
}
