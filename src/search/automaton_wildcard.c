/* Direct DFA construction for Lucene wildcards and prefixes (search/automaton.h), without the
 * NFA and subset construction of automaton.c (measured: "th*e" 10 us that way). A wildcard of
 * at most 63 tokens is determinized over code points as sets of pattern positions (one u64
 * each); every code point state is then expanded into UTF-8 byte states: a small trie for the
 * literal code points that lead elsewhere and shared "rest of any code point" chains for all
 * others. Same language and state limit as the NFA path (the unit tests compare the two), plus
 * the term dictionary hints of index/dfa.h: the literal tail as the required suffix, and tame
 * states (those holding a `*` position). Longer patterns take the NFA path. */
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/vec.h"
#include "search/automaton_internal.h"

#define WC_MAX_TOKENS 63

/* Byte state kinds: a code point state (MAIN), or partway through one code point's UTF-8
 * sequence: C1/C2/C3 = 1/2/3 continuation bytes (80-BF) to go; E0, ED, F0, F4 = just after
 * that lead byte, whose first continuation byte has a narrower range. */
enum {
    K_MAIN,
    K_C1,
    K_C2,
    K_C3,
    K_E0,
    K_ED,
    K_F0,
    K_F4,
    K_N
};

typedef struct bstate {
    uint8_t kind, accept, tame;
    uint64_t set;      /* MAIN: the pattern positions */
    uint32_t d;        /* the MAIN state any other code point leads to (SC_DFA_DEAD) */
    uint32_t ov;       /* override list head (index + 1; 0 = none) */
    uint32_t gad[K_N]; /* MAIN: gadget ids + 1 by kind: "rest of a code point, then here" */
} bstate;

typedef struct override {
    uint32_t target, next;
    uint8_t byte;
} override;

typedef struct wc {
    uint32_t m;         /* tokens; position m = the end */
    uint64_t star, any; /* positions holding `*` / `?` */
    uint32_t n_lits;    /* distinct literal code points */
    uint32_t lit_cp[WC_MAX_TOKENS];
    uint64_t lit_mask[WC_MAX_TOKENS];
    SC_VEC(bstate) st;
    SC_VEC(override) ov;
    SC_VEC(uint32_t) next; /* rows of n_classes, in state order */
    uint64_t *keys;        /* set -> MAIN id (open addressing; key 0 = empty) */
    uint32_t *vals;
    size_t cap;
    uint32_t nc;
    uint8_t classmap[256], rep[256];
    sc_status status; /* sticky */
} wc;

static uint64_t closure(const wc *w, uint64_t x)
{
    for (;;) {
        uint64_t y = x | ((x & w->star) << 1);
        if (y == x)
            return x;
        x = y;
    }
}

static uint32_t new_state(wc *w, uint8_t kind, uint32_t d, uint8_t tame)
{
    bstate b;
    memset(&b, 0, sizeof b);
    b.kind = kind;
    b.d = d;
    b.tame = tame;
    if (w->status == SC_OK && sc_vec_push(&w->st, b) != SC_OK)
        w->status = SC_ENOMEM;
    return w->status == SC_OK ? (uint32_t)w->st.len - 1 : SC_DFA_DEAD;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

/* The MAIN state of position set `set` (created on first sight); DEAD for the empty set. */
static uint32_t main_of(wc *w, uint64_t set)
{
    if (set == 0 || w->status != SC_OK)
        return SC_DFA_DEAD;
    if ((w->st.len + 1) * 2 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        uint64_t *k = calloc(cap, sizeof *k);
        uint32_t *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            w->status = SC_ENOMEM;
            return SC_DFA_DEAD;
        }
        for (size_t i = 0; i < w->cap; i++) {
            if (!w->keys[i])
                continue;
            size_t h = slot_of(w->keys[i], cap);
            while (k[h])
                h = (h + 1) & (cap - 1);
            k[h] = w->keys[i];
            v[h] = w->vals[i];
        }
        free(w->keys);
        free(w->vals);
        w->keys = k;
        w->vals = v;
        w->cap = cap;
    }
    size_t h = slot_of(set, w->cap);
    while (w->keys[h] && w->keys[h] != set)
        h = (h + 1) & (w->cap - 1);
    if (w->keys[h])
        return w->vals[h];
    uint32_t id = new_state(w, K_MAIN, SC_DFA_DEAD, (set & w->star) != 0);
    if (id == SC_DFA_DEAD)
        return id;
    w->st.ptr[id].set = set;
    w->st.ptr[id].accept = (uint8_t)((set >> w->m) & 1);
    w->keys[h] = set;
    w->vals[h] = id;
    return id;
}

/* Kind after a lead byte (K_MAIN = not a valid lead byte). */
static uint8_t lead_kind(unsigned b)
{
    if (b >= 0xC2 && b <= 0xDF)
        return K_C1;
    if (b == 0xE0)
        return K_E0;
    if (b == 0xED)
        return K_ED;
    if (b >= 0xE1 && b <= 0xEF)
        return K_C2;
    if (b == 0xF0)
        return K_F0;
    if (b >= 0xF1 && b <= 0xF3)
        return K_C3;
    if (b == 0xF4)
        return K_F4;
    return K_MAIN;
}

/* Whether continuation byte b is allowed in kind k, and the kind after it. */
static bool cont_ok(uint8_t k, unsigned b)
{
    switch (k) {
    case K_E0: return b >= 0xA0 && b <= 0xBF;
    case K_ED: return b >= 0x80 && b <= 0x9F;
    case K_F0: return b >= 0x90 && b <= 0xBF;
    case K_F4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
    }
}

static uint8_t after_kind(uint8_t k)
{
    return k == K_C3 || k == K_F0 || k == K_F4 ? K_C2 : K_C1;
}

/* The gadget of kind k leading to MAIN state d. */
static uint32_t gadget(wc *w, uint32_t d, uint8_t k)
{
    if (w->st.ptr[d].gad[k])
        return w->st.ptr[d].gad[k] - 1;
    uint32_t id = new_state(w, k, d, w->st.ptr[d].tame);
    if (id != SC_DFA_DEAD)
        w->st.ptr[d].gad[k] = id + 1;
    return id;
}

static uint32_t default_target(wc *w, uint32_t s, unsigned b)
{
    uint8_t k = w->st.ptr[s].kind;
    uint32_t d = w->st.ptr[s].d;
    if (d == SC_DFA_DEAD)
        return SC_DFA_DEAD;
    if (k == K_MAIN) {
        if (b < 0x80)
            return d;
        uint8_t nk = lead_kind(b);
        return nk == K_MAIN ? SC_DFA_DEAD : gadget(w, d, nk);
    }
    if (!cont_ok(k, b))
        return SC_DFA_DEAD;
    return k == K_C1 ? d : gadget(w, d, after_kind(k));
}

/* Override of state s on byte b: its target, or UINT32_MAX - 1 when none. */
#define NO_OVERRIDE (UINT32_MAX - 1)

static uint32_t find_override(const wc *w, uint32_t s, uint8_t b)
{
    for (uint32_t o = w->st.ptr[s].ov; o; o = w->ov.ptr[o - 1].next)
        if (w->ov.ptr[o - 1].byte == b)
            return w->ov.ptr[o - 1].target;
    return NO_OVERRIDE;
}

static void add_override(wc *w, uint32_t s, uint8_t b, uint32_t target)
{
    override o = {target, w->st.ptr[s].ov, b};
    if (w->status == SC_OK && sc_vec_push(&w->ov, o) != SC_OK)
        w->status = SC_ENOMEM;
    if (w->status == SC_OK)
        w->st.ptr[s].ov = (uint32_t)w->ov.len;
}

/* Routes code point cp from MAIN state s to t instead of s's default: a trie of byte states
 * that behave like the default chain except on cp's own bytes. */
static void route(wc *w, uint32_t s, uint32_t cp, uint32_t t)
{
    uint8_t bytes[4];
    size_t len = sc_utf8_put(bytes, cp);
    uint32_t cur = s;
    uint8_t kind = K_MAIN;
    for (size_t k = 0; k + 1 < len && w->status == SC_OK; k++) {
        uint8_t nk = k == 0 ? lead_kind(bytes[0]) : after_kind(kind);
        uint32_t child = find_override(w, cur, bytes[k]);
        if (child == NO_OVERRIDE) {
            child = new_state(w, nk, w->st.ptr[s].d, w->st.ptr[s].tame);
            if (child == SC_DFA_DEAD)
                return;
            add_override(w, cur, bytes[k], child);
        }
        cur = child;
        kind = nk;
    }
    add_override(w, cur, bytes[len - 1], t);
}

static void process(wc *w, uint32_t s)
{
    if (w->st.ptr[s].kind == K_MAIN) {
        uint64_t set = w->st.ptr[s].set;
        uint64_t base = (set & w->star) | ((set & w->any) << 1);
        uint64_t dset = closure(w, base);
        uint32_t d = main_of(w, dset);
        if (w->status != SC_OK)
            return;
        w->st.ptr[s].d = d;
        for (uint32_t j = 0; j < w->n_lits && w->status == SC_OK; j++) {
            uint64_t hit = set & w->lit_mask[j];
            if (!hit)
                continue;
            uint64_t tset = closure(w, base | (hit << 1));
            if (tset != dset)
                route(w, s, w->lit_cp[j], main_of(w, tset));
        }
    }
    for (uint32_t c = 0; c < w->nc && w->status == SC_OK; c++) {
        uint32_t t = find_override(w, s, w->rep[c]);
        if (t == NO_OVERRIDE)
            t = default_target(w, s, w->rep[c]);
        if (w->status == SC_OK && sc_vec_push(&w->next, t) != SC_OK)
            w->status = SC_ENOMEM;
    }
}

/* Byte classes: the UTF-8 structure's boundaries and every literal byte on its own. */
static void make_classes(wc *w, const uint8_t *lit_bytes, size_t n)
{
    static const uint8_t utf8_bounds[] = {0x80, 0x90, 0xA0, 0xC0, 0xC2, 0xE0, 0xE1,
                                          0xED, 0xEE, 0xF0, 0xF1, 0xF4, 0xF5};
    bool bnd[257] = {false};
    for (size_t i = 0; i < sizeof utf8_bounds; i++)
        bnd[utf8_bounds[i]] = true;
    for (size_t i = 0; i < n; i++)
        bnd[lit_bytes[i]] = bnd[lit_bytes[i] + 1] = true;
    uint32_t nc = 0;
    w->rep[0] = 0;
    for (int b = 0; b < 256; b++) {
        if (bnd[b] && b > 0)
            w->rep[++nc] = (uint8_t)b;
        w->classmap[b] = (uint8_t)nc;
    }
    w->nc = nc + 1;
}

static sc_status limit_error(sc_automaton_error *err, uint32_t max_states)
{
    sc__am_set_err(err, 0,
                   "determinizing the automaton would result in more than %u states "
                   "(max_determinized_states)",
                   max_states);
    return SC_ELIMIT;
}

static sc_status build_wildcard(wc *w, const uint8_t *lit_bytes, size_t n_lit_bytes,
                                const uint8_t *suffix, size_t suffix_len, uint32_t max_states,
                                sc_arena *a, sc_dfa *out, sc_automaton_error *err)
{
    make_classes(w, lit_bytes, n_lit_bytes);
    (void)main_of(w, closure(w, 1));
    for (size_t s = 0; s < w->st.len && w->status == SC_OK; s++) {
        process(w, (uint32_t)s);
        if (w->st.len > max_states)
            return limit_error(err, max_states);
    }
    if (w->status != SC_OK)
        return w->status;
    size_t ns = w->st.len;
    uint32_t *next = sc_arena_alloc(a, ns * w->nc * sizeof *next);
    uint8_t *acc = sc_arena_alloc(a, ns * 2 + suffix_len + 1);
    if (!next || !acc)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    memcpy(next, w->next.ptr, ns * w->nc * sizeof *next);
    uint8_t *tame = acc + ns, *suf = acc + 2 * ns;
    for (size_t s = 0; s < ns; s++) {
        acc[s] = w->st.ptr[s].accept;
        tame[s] = w->st.ptr[s].tame;
    }
    if (suffix_len)
        memcpy(suf, suffix, suffix_len);
    memset(out, 0, sizeof *out);
    out->n_states = (uint32_t)ns;
    out->start = 0;
    out->n_classes = w->nc;
    memcpy(out->classmap, w->classmap, 256);
    out->next = next;
    out->accept = acc;
    out->tame = tame;
    out->suffix = suf;
    out->suffix_len = (uint32_t)suffix_len;
    return SC_OK;
}

sc_status sc_automaton_wildcard(sc_slice pattern, uint32_t max_states, sc_arena *a, sc_dfa *out,
                                sc_automaton_error *err)
{
    wc w;
    memset(&w, 0, sizeof w);
    uint8_t lit_bytes[4 * WC_MAX_TOKENS];
    size_t n_lit_bytes = 0, tail_off = 0; /* the literal tail starts at lit_bytes + tail_off */
    bool too_long = false;
    uint8_t prev = 0xff;
    for (size_t i = 0; i < pattern.len;) {
        uint32_t c = sc__am_utf8_decode(pattern, &i);
        uint8_t kind = c == '*' ? 1 : c == '?' ? 2 : 0;
        if (kind == 0 && c == '\\' && i < pattern.len)
            c = sc__am_utf8_decode(pattern, &i);
        if (kind == 1 && prev == 1)
            continue; /* `**` = `*` */
        if (w.m == WC_MAX_TOKENS) {
            too_long = true;
            break;
        }
        prev = kind;
        uint64_t bit = 1ull << w.m++;
        if (kind) {
            if (kind == 1)
                w.star |= bit;
            else
                w.any |= bit;
            tail_off = n_lit_bytes;
            continue;
        }
        n_lit_bytes += sc_utf8_put(lit_bytes + n_lit_bytes, c);
        uint32_t j = 0;
        while (j < w.n_lits && w.lit_cp[j] != c)
            j++;
        if (j == w.n_lits)
            w.lit_cp[w.n_lits++] = c;
        w.lit_mask[j] |= bit;
    }
    if (too_long)
        return sc__am_wildcard_nfa(pattern, max_states, a, out, err);
    sc_status st = build_wildcard(&w, lit_bytes, n_lit_bytes, lit_bytes + tail_off,
                                  n_lit_bytes - tail_off, max_states, a, out, err);
    sc_vec_free(&w.st);
    sc_vec_free(&w.ov);
    sc_vec_free(&w.next);
    free(w.keys);
    free(w.vals);
    return st;
}

sc_status sc_automaton_prefix(sc_slice prefix, sc_arena *a, sc_dfa *out)
{
    /* states 0..len: state i has matched i bytes; state len accepts and loops on every byte */
    memset(out, 0, sizeof *out);
    bool bnd[257] = {false};
    for (size_t i = 0; i < prefix.len; i++)
        bnd[prefix.ptr[i]] = bnd[prefix.ptr[i] + 1] = true;
    uint32_t nc = 0;
    for (int b = 0; b < 256; b++) {
        if (bnd[b] && b > 0)
            nc++;
        out->classmap[b] = (uint8_t)nc;
    }
    nc++;
    size_t ns = prefix.len + 1;
    uint32_t *next = sc_arena_alloc(a, ns * nc * sizeof *next);
    uint8_t *acc = sc_arena_calloc(a, ns * 2, 1);
    if (!next || !acc)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < ns * nc; i++)
        next[i] = SC_DFA_DEAD;
    for (size_t i = 0; i < prefix.len; i++)
        next[i * nc + out->classmap[prefix.ptr[i]]] = (uint32_t)i + 1;
    for (uint32_t c = 0; c < nc; c++)
        next[prefix.len * nc + c] = (uint32_t)prefix.len;
    acc[prefix.len] = 1;
    acc[ns + prefix.len] = 1; /* tame: nothing dies past the prefix */
    out->n_states = (uint32_t)ns;
    out->n_classes = nc;
    out->next = next;
    out->accept = acc;
    out->tame = acc + ns;
    return SC_OK;
}
