/* Pattern -> byte DFA compilation (search/automaton.h): a byte NFA built Thompson-style from a
 * parsed pattern (code point ranges become UTF-8 byte paths), subset construction over byte
 * equivalence classes with a state limit, product/complement for `&` and `~`, and pruning of
 * states that cannot accept. Scratch memory is heap (freed before return); the result's
 * tables live in the caller's arena. */
#include "search/automaton.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "search/query.h"

#define NFA_STATE_LIMIT (1u << 20)
#define NEST_LIMIT 1000
/* Bound on subset-construction work (NFA states and edges visited): a pattern whose DFA stays
 * under max_states but whose sets are huge must still fail fast. 2^23 steps is ~0.2 s in a debug build. */
#define DET_WORK_LIMIT (1u << 23)
#define MAX_CP 0x10FFFFu

/* ---- NFA -------------------------------------------------------------------------------- */

typedef struct edge {
    uint32_t from, to;
    uint16_t lo, hi; /* byte range; lo == 256 marks an epsilon edge */
} edge;

#define EPS 256

typedef struct nfa {
    uint32_t n_states;
    SC_VEC(edge) edges;
    sc_status status; /* sticky */
    sc_automaton_error *err;
    uint32_t max_states; /* DFA limit for determinizations inside the build */
} nfa;

typedef struct frag {
    uint32_t start, end;
} frag;

static void set_err(sc_automaton_error *err, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(sc_automaton_error *err, size_t off, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->offset = off;
}

static uint32_t new_state(nfa *n)
{
    if (n->n_states >= NFA_STATE_LIMIT && n->status == SC_OK) {
        n->status = SC_ELIMIT;
        set_err(n->err, 0, "pattern too complex: the automaton exceeds %u NFA states",
                NFA_STATE_LIMIT);
    }
    return n->n_states++;
}

static void add_edge(nfa *n, uint32_t from, uint32_t to, unsigned lo, unsigned hi)
{
    if (n->status != SC_OK)
        return;
    edge e = {from, to, (uint16_t)lo, (uint16_t)hi};
    if (sc_vec_push(&n->edges, e) != SC_OK)
        n->status = SC_ENOMEM;
}

static void add_eps(nfa *n, uint32_t from, uint32_t to)
{
    add_edge(n, from, to, EPS, EPS);
}

static frag frag_new(nfa *n)
{
    frag f;
    f.start = new_state(n);
    f.end = new_state(n);
    return f;
}

static frag frag_empty_string(nfa *n)
{
    frag f = frag_new(n);
    add_eps(n, f.start, f.end);
    return f;
}

/* Encodes a code point as UTF-8; returns the length. */
static int utf8_encode(uint32_t cp, uint8_t *b)
{
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (uint8_t)(0xF0 | (cp >> 18));
    b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes one code point at s[*i]; invalid bytes decode as U+FFFD and advance by one. */
static uint32_t utf8_decode(sc_slice s, size_t *i)
{
    const uint8_t *p = s.ptr + *i;
    size_t left = s.len - *i;
    uint32_t c = p[0];
    int n = c < 0x80 ? 1 : c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
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
        (void)utf8_decode(s, &i);
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
    int len = utf8_encode(lo, a);
    (void)utf8_encode(hi, b);
    uint32_t cur = from;
    for (int k = 0; k < len; k++) {
        uint32_t nxt = k == len - 1 ? to : new_state(n);
        add_edge(n, cur, nxt, a[k], b[k]);
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
    f.start = new_state(n);
    uint32_t cur = f.start;
    for (size_t i = 0; i < s.len; i++) {
        uint32_t nxt = new_state(n);
        add_edge(n, cur, nxt, s.ptr[i], s.ptr[i]);
        cur = nxt;
    }
    f.end = new_state(n);
    add_eps(n, cur, f.end);
    return f;
}

static frag frag_concat(nfa *n, frag a, frag b)
{
    add_eps(n, a.end, b.start);
    frag f = {a.start, b.end};
    return f;
}

static frag frag_union(nfa *n, frag a, frag b)
{
    frag f = frag_new(n);
    add_eps(n, f.start, a.start);
    add_eps(n, f.start, b.start);
    add_eps(n, a.end, f.end);
    add_eps(n, b.end, f.end);
    return f;
}

static frag frag_star(nfa *n, frag a)
{
    frag f = frag_new(n);
    add_eps(n, f.start, a.start);
    add_eps(n, f.start, f.end);
    add_eps(n, a.end, a.start);
    add_eps(n, a.end, f.end);
    return f;
}

static frag frag_optional(nfa *n, frag a)
{
    frag f = frag_new(n);
    add_eps(n, f.start, a.start);
    add_eps(n, f.start, f.end);
    add_eps(n, a.end, f.end);
    return f;
}

/* The empty language: start and end not connected. */
static frag frag_nothing(nfa *n)
{
    return frag_new(n);
}

static frag frag_any_string(nfa *n)
{
    return frag_star(n, frag_cp_range(n, 0, MAX_CP));
}

/* ---- DFA (scratch form) ----------------------------------------------------------------- */

typedef struct ddfa {
    uint32_t n_states, n_classes, start;
    uint8_t classmap[256];
    uint32_t *next;  /* heap, n_states * n_classes */
    uint8_t *accept; /* heap */
} ddfa;

static void ddfa_fini(ddfa *d)
{
    free(d->next);
    free(d->accept);
    memset(d, 0, sizeof *d);
}

/* An open-addressing map from state sets (or pairs) to DFA state ids. */
typedef struct setmap {
    uint32_t *slots; /* dfa id + 1, 0 = empty */
    size_t cap;
} setmap;

typedef struct det {
    /* CSR of the NFA */
    uint32_t *eps_off, *eps_to;
    uint32_t *tr_off;
    edge *tr;
    /* sets */
    SC_VEC(uint32_t) pool;    /* concatenated sorted sets */
    SC_VEC(uint32_t) set_off; /* set i = pool[set_off[i] .. set_off[i+1]) */
    setmap map;
    uint32_t *mark; /* per NFA state: stamp */
    uint32_t stamp;
    SC_VEC(uint32_t) stack;
    SC_VEC(uint32_t) tmp;
    size_t work; /* states and edges visited, against DET_WORK_LIMIT */
} det;

static uint64_t hash_u32s(const uint32_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Epsilon closure of the states in d->tmp, sorted, left in d->tmp. */
static sc_status closure(det *d)
{
    d->stamp++;
    d->stack.len = 0;
    for (size_t i = 0; i < d->tmp.len; i++) {
        uint32_t s = d->tmp.ptr[i];
        if (d->mark[s] != d->stamp) {
            d->mark[s] = d->stamp;
            SC_TRY(sc_vec_push(&d->stack, s));
        }
    }
    d->tmp.len = 0;
    while (d->stack.len) {
        uint32_t s = d->stack.ptr[--d->stack.len];
        SC_TRY(sc_vec_push(&d->tmp, s));
        d->work += 1 + d->eps_off[s + 1] - d->eps_off[s];
        for (uint32_t k = d->eps_off[s]; k < d->eps_off[s + 1]; k++) {
            uint32_t t = d->eps_to[k];
            if (d->mark[t] != d->stamp) {
                d->mark[t] = d->stamp;
                SC_TRY(sc_vec_push(&d->stack, t));
            }
        }
    }
    qsort(d->tmp.ptr, d->tmp.len, sizeof(uint32_t), cmp_u32);
    return SC_OK;
}

static sc_status map_grow(setmap *m, size_t n_used, det *d)
{
    if ((n_used + 1) * 2 < m->cap)
        return SC_OK;
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return SC_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        uint32_t id1 = m->slots[i];
        if (!id1)
            continue;
        const uint32_t *set = d->pool.ptr + d->set_off.ptr[id1 - 1];
        size_t len = d->set_off.ptr[id1] - d->set_off.ptr[id1 - 1];
        size_t h = hash_u32s(set, len) & (cap - 1);
        while (slots[h])
            h = (h + 1) & (cap - 1);
        slots[h] = id1;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return SC_OK;
}

/* Finds or adds the set in d->tmp; *id its DFA state; *added when new. */
static sc_status intern_set(det *d, uint32_t *id, bool *added)
{
    uint32_t n_sets = (uint32_t)(d->set_off.len - 1);
    SC_TRY(map_grow(&d->map, n_sets, d));
    size_t h = hash_u32s(d->tmp.ptr, d->tmp.len) & (d->map.cap - 1);
    for (;; h = (h + 1) & (d->map.cap - 1)) {
        uint32_t id1 = d->map.slots[h];
        if (!id1)
            break;
        size_t off = d->set_off.ptr[id1 - 1], len = d->set_off.ptr[id1] - off;
        if (len == d->tmp.len && memcmp(d->pool.ptr + off, d->tmp.ptr, len * 4) == 0) {
            *id = id1 - 1;
            *added = false;
            return SC_OK;
        }
    }
    SC_TRY(sc_vec_append(&d->pool, d->tmp.ptr, d->tmp.len));
    SC_TRY(sc_vec_push(&d->set_off, (uint32_t)d->pool.len));
    d->map.slots[h] = n_sets + 1;
    *id = n_sets;
    *added = true;
    return SC_OK;
}

static void det_fini(det *d)
{
    free(d->eps_off);
    free(d->eps_to);
    free(d->tr_off);
    free(d->tr);
    free(d->mark);
    free(d->map.slots);
    sc_vec_free(&d->pool);
    sc_vec_free(&d->set_off);
    sc_vec_free(&d->stack);
    sc_vec_free(&d->tmp);
}

static sc_status det_build_csr(det *d, const nfa *n)
{
    uint32_t ns = n->n_states;
    d->eps_off = calloc(ns + 2, sizeof(uint32_t));
    d->tr_off = calloc(ns + 2, sizeof(uint32_t));
    d->mark = calloc(ns + 1, sizeof(uint32_t));
    size_t n_eps = 0, n_tr = 0;
    for (size_t i = 0; i < n->edges.len; i++)
        n->edges.ptr[i].lo == EPS ? n_eps++ : n_tr++;
    d->eps_to = malloc((n_eps + 1) * sizeof(uint32_t));
    d->tr = malloc((n_tr + 1) * sizeof(edge));
    if (!d->eps_off || !d->tr_off || !d->mark || !d->eps_to || !d->tr)
        return SC_ENOMEM;
    for (size_t i = 0; i < n->edges.len; i++) {
        const edge *e = &n->edges.ptr[i];
        (e->lo == EPS ? d->eps_off : d->tr_off)[e->from + 1]++;
    }
    for (uint32_t s = 0; s < ns; s++) {
        d->eps_off[s + 1] += d->eps_off[s];
        d->tr_off[s + 1] += d->tr_off[s];
    }
    uint32_t *fe = malloc((ns + 1) * sizeof(uint32_t)), *ft = malloc((ns + 1) * sizeof(uint32_t));
    if (!fe || !ft) {
        free(fe);
        free(ft);
        return SC_ENOMEM;
    }
    memcpy(fe, d->eps_off, (ns + 1) * sizeof(uint32_t));
    memcpy(ft, d->tr_off, (ns + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n->edges.len; i++) {
        const edge *e = &n->edges.ptr[i];
        if (e->lo == EPS)
            d->eps_to[fe[e->from]++] = e->to;
        else
            d->tr[ft[e->from]++] = *e;
    }
    free(fe);
    free(ft);
    return SC_OK;
}

static sc_status limit_error(sc_automaton_error *err, uint32_t max_states)
{
    set_err(err, 0,
            "determinizing the automaton would result in more than %u states "
            "(max_determinized_states)",
            max_states);
    return SC_ELIMIT;
}

/* Subset construction of the NFA from `start`, accepting where the set holds `accept`. */
static sc_status determinize(const nfa *n, uint32_t start, uint32_t accept, uint32_t max_states,
                             sc_automaton_error *err, ddfa *out)
{
    memset(out, 0, sizeof *out);
    det d;
    memset(&d, 0, sizeof d);
    SC_VEC(uint32_t) buckets[256];
    memset(buckets, 0, sizeof buckets);
    SC_VEC(uint32_t) next;
    memset(&next, 0, sizeof next);
    SC_VEC(uint8_t) acc;
    memset(&acc, 0, sizeof acc);
    sc_status st = det_build_csr(&d, n);

    /* Byte classes: boundaries at every edge's lo and hi+1, numbered in byte order so a byte
     * range maps to a contiguous run of classes. */
    bool bnd[257] = {false};
    bnd[0] = true;
    for (size_t i = 0; i < n->edges.len; i++) {
        if (n->edges.ptr[i].lo == EPS)
            continue;
        bnd[n->edges.ptr[i].lo] = true;
        bnd[n->edges.ptr[i].hi + 1] = true;
    }
    uint32_t nc = 0;
    for (int b = 0; b < 256; b++) {
        if (bnd[b] && b > 0)
            nc++;
        out->classmap[b] = (uint8_t)nc;
    }
    nc++;
    out->n_classes = nc;

    if (st == SC_OK)
        st = sc_vec_push(&d.set_off, 0);
    if (st == SC_OK)
        st = sc_vec_push(&d.tmp, start);
    if (st == SC_OK)
        st = closure(&d);
    uint32_t id;
    bool added;
    if (st == SC_OK)
        st = intern_set(&d, &id, &added);
    for (uint32_t cur = 0; st == SC_OK && cur < d.set_off.len - 1; cur++) {
        size_t off = d.set_off.ptr[cur], end = d.set_off.ptr[cur + 1];
        bool is_acc = false;
        d.work += end - off;
        if (d.work > DET_WORK_LIMIT) {
            set_err(err, 0, "pattern too complex: determinizing it exceeds %u steps", DET_WORK_LIMIT);
            st = SC_ELIMIT;
            break;
        }
        for (size_t k = off; k < end && st == SC_OK; k++) {
            uint32_t s = d.pool.ptr[k];
            if (s == accept)
                is_acc = true;
            for (uint32_t t = d.tr_off[s]; t < d.tr_off[s + 1] && st == SC_OK; t++) {
                const edge *e = &d.tr[t];
                for (uint32_t c = out->classmap[e->lo]; c <= out->classmap[e->hi] && st == SC_OK;
                     c++)
                    st = sc_vec_push(&buckets[c], e->to);
            }
        }
        if (st == SC_OK)
            st = sc_vec_push(&acc, is_acc ? 1 : 0);
        for (uint32_t c = 0; c < nc && st == SC_OK; c++) {
            if (buckets[c].len == 0) {
                st = sc_vec_push(&next, SC_DFA_DEAD);
                continue;
            }
            d.tmp.len = 0;
            d.work += buckets[c].len;
            st = sc_vec_append(&d.tmp, buckets[c].ptr, buckets[c].len);
            buckets[c].len = 0;
            if (st == SC_OK)
                st = closure(&d);
            if (st == SC_OK)
                st = intern_set(&d, &id, &added);
            if (st == SC_OK && d.set_off.len - 1 > max_states)
                st = limit_error(err, max_states);
            if (st == SC_OK)
                st = sc_vec_push(&next, id);
        }
    }
    for (int c = 0; c < 256; c++)
        sc_vec_free(&buckets[c]);
    if (st == SC_OK) {
        out->n_states = (uint32_t)(d.set_off.len - 1);
        out->start = 0;
        out->next = next.ptr;
        out->accept = acc.ptr;
    } else {
        sc_vec_free(&next);
        sc_vec_free(&acc);
    }
    det_fini(&d);
    return st;
}

/* Makes every transition defined (adds a non-accepting sink) and flips acceptance. */
static sc_status ddfa_flip_total(ddfa *d)
{
    uint32_t ns = d->n_states + 1, nc = d->n_classes;
    uint32_t *next = realloc(d->next, (size_t)ns * nc * sizeof *next);
    if (!next)
        return SC_ENOMEM;
    d->next = next;
    uint8_t *acc = realloc(d->accept, ns);
    if (!acc)
        return SC_ENOMEM;
    d->accept = acc;
    uint32_t sink = ns - 1;
    for (uint32_t c = 0; c < nc; c++)
        next[(size_t)sink * nc + c] = sink;
    acc[sink] = 0;
    for (size_t i = 0; i < (size_t)ns * nc; i++)
        if (next[i] == SC_DFA_DEAD)
            next[i] = sink;
    for (uint32_t s = 0; s < ns; s++)
        acc[s] = !acc[s];
    d->n_states = ns;
    return SC_OK;
}

/* Product automaton accepting L(a) & L(b). */
static sc_status ddfa_intersect(const ddfa *a, const ddfa *b, uint32_t max_states,
                                sc_automaton_error *err, ddfa *out)
{
    memset(out, 0, sizeof *out);
    size_t pairs = (size_t)a->n_classes * b->n_classes;
    int32_t *pc = malloc(pairs * sizeof *pc);
    if (!pc)
        return SC_ENOMEM;
    for (size_t i = 0; i < pairs; i++)
        pc[i] = -1;
    uint32_t nc = 0;
    uint8_t ca[256], cb[256]; /* representative classes per new class */
    for (int x = 0; x < 256; x++) {
        size_t p = (size_t)a->classmap[x] * b->n_classes + b->classmap[x];
        if (pc[p] < 0) {
            ca[nc] = a->classmap[x];
            cb[nc] = b->classmap[x];
            pc[p] = (int32_t)nc++;
        }
        out->classmap[x] = (uint8_t)pc[p];
    }
    free(pc);
    out->n_classes = nc;
    /* BFS over reachable pairs; a hash map from pair to id. */
    SC_VEC(uint64_t) q;
    memset(&q, 0, sizeof q);
    SC_VEC(uint32_t) next;
    memset(&next, 0, sizeof next);
    SC_VEC(uint8_t) acc;
    memset(&acc, 0, sizeof acc);
    size_t cap = 1024;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    sc_status st = keys && vals ? SC_OK : SC_ENOMEM;
    if (st == SC_OK)
        memset(keys, 0xff, cap * sizeof *keys);
    uint64_t k0 = ((uint64_t)a->start << 32) | b->start;
#define PAIR_LOOKUP(key, idout)                                                                    \
    do {                                                                                           \
        if ((q.len + 1) * 2 >= cap) {                                                              \
            size_t nc2 = cap * 2;                                                                  \
            uint64_t *nk = malloc(nc2 * sizeof *nk);                                               \
            uint32_t *nv = malloc(nc2 * sizeof *nv);                                               \
            if (!nk || !nv) {                                                                      \
                free(nk), free(nv);                                                                \
                st = SC_ENOMEM;                                                                    \
                break;                                                                             \
            }                                                                                      \
            memset(nk, 0xff, nc2 * sizeof *nk);                                                    \
            for (size_t i_ = 0; i_ < cap; i_++)                                                    \
                if (keys[i_] != UINT64_MAX) {                                                      \
                    size_t h_ = (keys[i_] * 0x9E3779B97F4A7C15ull) >> 20 & (nc2 - 1);              \
                    while (nk[h_] != UINT64_MAX)                                                   \
                        h_ = (h_ + 1) & (nc2 - 1);                                                 \
                    nk[h_] = keys[i_], nv[h_] = vals[i_];                                          \
                }                                                                                  \
            free(keys), free(vals);                                                                \
            keys = nk, vals = nv, cap = nc2;                                                       \
        }                                                                                          \
        size_t h = ((key) * 0x9E3779B97F4A7C15ull) >> 20 & (cap - 1);                              \
        while (keys[h] != UINT64_MAX && keys[h] != (key))                                          \
            h = (h + 1) & (cap - 1);                                                               \
        if (keys[h] == (key)) {                                                                    \
            (idout) = vals[h];                                                                     \
        } else {                                                                                   \
            keys[h] = (key), vals[h] = (uint32_t)q.len, (idout) = (uint32_t)q.len;                 \
            st = sc_vec_push(&q, (key));                                                           \
            if (st == SC_OK && q.len > max_states)                                                 \
                st = limit_error(err, max_states);                                                 \
        }                                                                                          \
    } while (0)
    uint32_t id = 0;
    if (st == SC_OK)
        PAIR_LOOKUP(k0, id);
    for (size_t cur = 0; st == SC_OK && cur < q.len; cur++) {
        uint32_t sa = (uint32_t)(q.ptr[cur] >> 32), sb = (uint32_t)q.ptr[cur];
        st = sc_vec_push(&acc, a->accept[sa] && b->accept[sb] ? 1 : 0);
        for (uint32_t c = 0; c < nc && st == SC_OK; c++) {
            uint32_t ta = a->next[(size_t)sa * a->n_classes + ca[c]];
            uint32_t tb = b->next[(size_t)sb * b->n_classes + cb[c]];
            if (ta == SC_DFA_DEAD || tb == SC_DFA_DEAD) {
                st = sc_vec_push(&next, SC_DFA_DEAD);
                continue;
            }
            uint64_t key = ((uint64_t)ta << 32) | tb;
            PAIR_LOOKUP(key, id);
            if (st == SC_OK)
                st = sc_vec_push(&next, id);
        }
    }
#undef PAIR_LOOKUP
    free(keys);
    free(vals);
    sc_vec_free(&q);
    if (st != SC_OK) {
        sc_vec_free(&next);
        sc_vec_free(&acc);
        return st;
    }
    out->n_states = (uint32_t)acc.len;
    out->start = 0;
    out->next = next.ptr;
    out->accept = acc.ptr;
    return SC_OK;
}

/* Copies a DFA into the NFA as a fragment. */
static frag embed(nfa *n, const ddfa *d)
{
    frag f;
    uint32_t base = n->n_states;
    for (uint32_t s = 0; s < d->n_states; s++)
        (void)new_state(n);
    f.start = base + d->start;
    f.end = new_state(n);
    for (uint32_t s = 0; s < d->n_states && n->status == SC_OK; s++) {
        if (d->accept[s])
            add_eps(n, base + s, f.end);
        int b = 0;
        while (b < 256) {
            uint32_t t = d->next[(size_t)s * d->n_classes + d->classmap[b]];
            int e = b;
            while (e + 1 < 256 && d->next[(size_t)s * d->n_classes + d->classmap[e + 1]] == t)
                e++;
            if (t != SC_DFA_DEAD)
                add_edge(n, base + s, base + t, (unsigned)b, (unsigned)e);
            b = e + 1;
        }
    }
    return f;
}

/* Determinizes a sub-fragment built in its own NFA. */
static sc_status sub_determinize(nfa *sub, frag f, uint32_t max_states,
                                 sc_automaton_error *err, ddfa *out)
{
    if (sub->status != SC_OK)
        return sub->status;
    return determinize(sub, f.start, f.end, max_states, err, out);
}

/* The DFA of all valid UTF-8 strings. */
static sc_status any_utf8(uint32_t max_states, sc_automaton_error *err, ddfa *out)
{
    nfa sub;
    memset(&sub, 0, sizeof sub);
    sub.err = err;
    frag f = frag_any_string(&sub);
    sc_status st = sub_determinize(&sub, f, max_states, err, out);
    sc_vec_free(&sub.edges);
    return st;
}

/* ---- regexp parsing --------------------------------------------------------------------- */

typedef enum rkind {
    R_UNION,
    R_CONCAT,
    R_INTERSECT,
    R_OPT,
    R_REPEAT, /* min, max (max UINT32_MAX = unbounded) */
    R_COMPLEMENT,
    R_CLASS, /* ranges in class_off..class_off+n_ranges of the range pool */
    R_EMPTY, /* the empty language (#) */
    R_ANYSTRING,
    R_STRING, /* bytes [str_off, str_off + str_len) of the pattern, or the empty string */
    R_INTERVAL,
} rkind;

typedef struct rnode {
    rkind kind;
    uint32_t a, b;       /* children, or class offset/count, or string offset/len */
    uint32_t min, max;   /* repeat; interval min/max */
    uint32_t digits;     /* interval */
} rnode;

typedef struct rparser {
    sc_slice s;
    size_t pos;
    uint32_t flags;
    int depth;
    SC_VEC(rnode) nodes;
    SC_VEC(uint32_t) ranges; /* pairs lo, hi */
    SC_VEC(uint8_t) strbuf;  /* literal strings (UTF-8) */
    sc_status status;
    sc_automaton_error *err;
} rparser;

static uint32_t rnew(rparser *p, rnode n)
{
    if (p->status == SC_OK && sc_vec_push(&p->nodes, n) != SC_OK)
        p->status = SC_ENOMEM;
    return p->status == SC_OK ? (uint32_t)p->nodes.len - 1 : 0;
}

static uint32_t rbin(rparser *p, rkind k, uint32_t a, uint32_t b)
{
    rnode n = {k, a, b, 0, 0, 0};
    return rnew(p, n);
}

static bool more(const rparser *p)
{
    return p->pos < p->s.len;
}

static bool peek_any(const rparser *p, const char *chars)
{
    return more(p) && p->s.ptr[p->pos] < 0x80 && strchr(chars, p->s.ptr[p->pos]) != NULL;
}

static bool match(rparser *p, char c)
{
    if (more(p) && p->s.ptr[p->pos] == (uint8_t)c) {
        p->pos++;
        return true;
    }
    return false;
}

static void perr(rparser *p, sc_status st, const char *msg)
{
    if (p->status != SC_OK)
        return;
    p->status = st;
    set_err(p->err, p->pos, "%s at position %zu", msg, p->pos);
}

static uint32_t next_cp(rparser *p)
{
    if (!more(p)) {
        perr(p, SC_EPARSE, "unexpected end-of-string");
        return 0;
    }
    return utf8_decode(p->s, &p->pos);
}

static uint32_t parse_char_exp(rparser *p)
{
    (void)match(p, '\\');
    return next_cp(p);
}

static uint32_t parse_union(rparser *p);

static uint32_t string_node(rparser *p, const uint8_t *bytes, size_t len)
{
    size_t off = p->strbuf.len;
    if (len && sc_vec_append(&p->strbuf, bytes, len) != SC_OK)
        p->status = SC_ENOMEM;
    rnode n = {R_STRING, (uint32_t)off, (uint32_t)len, 0, 0, 0};
    return rnew(p, n);
}

static uint32_t class_node(rparser *p, size_t range_off, bool negate)
{
    rnode n = {R_CLASS, (uint32_t)range_off, (uint32_t)((p->ranges.len - range_off) / 2),
               negate, 0, 0};
    return rnew(p, n);
}

static void push_range(rparser *p, uint32_t lo, uint32_t hi)
{
    if (p->status == SC_OK &&
        (sc_vec_push(&p->ranges, lo) != SC_OK || sc_vec_push(&p->ranges, hi) != SC_OK))
        p->status = SC_ENOMEM;
}

static uint32_t parse_interval(rparser *p, size_t start, size_t end)
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
    rnode n = {R_INTERVAL, 0, 0, lo, hi, digits};
    return rnew(p, n);
}

static uint32_t parse_simple(rparser *p)
{
    if (match(p, '.')) {
        size_t off = p->ranges.len;
        push_range(p, 0, MAX_CP);
        return class_node(p, off, false);
    }
    if ((p->flags & SC_REGEXP_EMPTY) && match(p, '#')) {
        rnode n = {R_EMPTY, 0, 0, 0, 0, 0};
        return rnew(p, n);
    }
    if ((p->flags & SC_REGEXP_ANYSTRING) && match(p, '@')) {
        rnode n = {R_ANYSTRING, 0, 0, 0, 0, 0};
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

static uint32_t parse_char_class_exp(rparser *p)
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

static uint32_t parse_compl(rparser *p)
{
    if ((p->flags & SC_REGEXP_COMPLEMENT) && match(p, '~')) {
        if (++p->depth > NEST_LIMIT) {
            perr(p, SC_ELIMIT, "regular expression nested deeper than 1000 levels");
            return 0;
        }
        uint32_t e = parse_compl(p);
        p->depth--;
        rnode n = {R_COMPLEMENT, e, 0, 0, 0, 0};
        return rnew(p, n);
    }
    return parse_char_class_exp(p);
}

static uint32_t parse_number(rparser *p, bool *present)
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

static uint32_t parse_repeat(rparser *p)
{
    uint32_t e = parse_compl(p);
    while (p->status == SC_OK && peek_any(p, "?*+{")) {
        rnode n = {R_REPEAT, e, 0, 0, UINT32_MAX, 0};
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

static uint32_t parse_concat(rparser *p)
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

static uint32_t parse_inter(rparser *p)
{
    uint32_t e = parse_concat(p);
    while (p->status == SC_OK && (p->flags & SC_REGEXP_INTERSECTION) && match(p, '&'))
        e = rbin(p, R_INTERSECT, e, parse_concat(p));
    return e;
}

static uint32_t parse_union(rparser *p)
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

/* ---- regexp AST -> NFA ------------------------------------------------------------------ */

typedef struct builder {
    const rparser *p;
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

static frag build_class(builder *b, nfa *n, const rnode *r)
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

static frag build_repeat(builder *b, nfa *n, const rnode *r, int depth)
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
    sc_status st = sub_determinize(&sub, f, b->max_states, b->err, out);
    sc_vec_free(&sub.edges);
    return st;
}

static frag build_bool_op(builder *b, nfa *n, const rnode *r, int depth)
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
        st = ddfa_flip_total(&x);
        if (st == SC_OK)
            st = any_utf8(b->max_states, b->err, &y);
    }
    if (st == SC_OK)
        st = ddfa_intersect(&x, &y, b->max_states, b->err, &z);
    frag f = {0, 0};
    if (st == SC_OK)
        f = embed(n, &z);
    else if (n->status == SC_OK)
        n->status = st;
    ddfa_fini(&x);
    ddfa_fini(&y);
    ddfa_fini(&z);
    ddfa_fini(&any);
    return st == SC_OK ? f : frag_nothing(n);
}

static frag build(builder *b, nfa *n, uint32_t id, int depth)
{
    if (n->status != SC_OK)
        return frag_nothing(n);
    if (depth > 4 * NEST_LIMIT) {
        n->status = SC_ELIMIT;
        set_err(b->err, 0, "regular expression nested deeper than %d levels", NEST_LIMIT);
        return frag_nothing(n);
    }
    const rnode *r = &b->p->nodes.ptr[id];
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
    case R_ANYSTRING: return frag_any_string(n);
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
    /* Fixpoint of backward reachability (the DFA is small: bounded by max_states). */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t s = 0; s < ns; s++) {
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

static sc_status compile(nfa *n, frag f, uint32_t max_states, sc_automaton_error *err,
                         sc_arena *a, sc_dfa *out)
{
    if (n->status != SC_OK)
        return n->status;
    ddfa d;
    sc_status st = determinize(n, f.start, f.end, max_states, err, &d);
    if (st == SC_OK)
        st = finish(&d, a, out);
    ddfa_fini(&d);
    return st;
}

sc_status sc_automaton_regexp(sc_slice pattern, uint32_t flags, uint32_t max_states,
                              sc_arena *a, sc_dfa *out, sc_automaton_error *err)
{
    rparser p;
    memset(&p, 0, sizeof p);
    p.s = pattern;
    p.flags = flags;
    p.err = err;
    uint32_t root;
    if (pattern.len == 0) {
        root = string_node(&p, NULL, 0);
    } else {
        root = parse_union(&p);
        if (p.status == SC_OK && more(&p))
            perr(&p, SC_EPARSE, "end-of-string expected");
    }
    sc_status st = p.status;
    if (st == SC_OK) {
        nfa n;
        memset(&n, 0, sizeof n);
        n.err = err;
        builder b = {&p, max_states, err};
        frag f = build(&b, &n, root, 0);
        st = compile(&n, f, max_states, err, a, out);
        sc_vec_free(&n.edges);
    }
    sc_vec_free(&p.nodes);
    sc_vec_free(&p.ranges);
    sc_vec_free(&p.strbuf);
    return st;
}

sc_status sc_automaton_wildcard(sc_slice pattern, uint32_t max_states, sc_arena *a, sc_dfa *out,
                                sc_automaton_error *err)
{
    nfa n;
    memset(&n, 0, sizeof n);
    n.err = err;
    frag f = frag_empty_string(&n);
    for (size_t i = 0; i < pattern.len && n.status == SC_OK;) {
        uint32_t c = utf8_decode(pattern, &i);
        frag x;
        if (c == '*') {
            x = frag_any_string(&n);
        } else if (c == '?') {
            x = frag_cp_range(&n, 0, MAX_CP);
        } else {
            if (c == '\\' && i < pattern.len)
                c = utf8_decode(pattern, &i);
            x = frag_cp_range(&n, c, c);
        }
        f = frag_concat(&n, f, x);
    }
    sc_status st = compile(&n, f, max_states, err, a, out);
    sc_vec_free(&n.edges);
    return st;
}

sc_status sc_automaton_prefix(sc_slice prefix, sc_arena *a, sc_dfa *out)
{
    nfa n;
    memset(&n, 0, sizeof n);
    frag f = frag_bytes(&n, prefix);
    frag any = frag_new(&n);
    add_edge(&n, any.start, any.end, 0, 255);
    f = frag_concat(&n, f, frag_star(&n, any));
    sc_status st = compile(&n, f, UINT32_MAX, NULL, a, out);
    sc_vec_free(&n.edges);
    return st;
}

/* Levenshtein NFA over code points: state (i, e) = i code points of the word consumed with e
 * edits; T(i, e) = halfway through a transposition of w[i], w[i+1]. "Any code point into
 * state t" transitions share one UTF-8 gadget per target. */
sc_status sc_automaton_fuzzy(sc_slice term, uint32_t max_edits, uint32_t prefix_length,
                             bool transpositions, sc_arena *a, sc_dfa *out,
                             sc_automaton_error *err)
{
    if (max_edits > 2) {
        set_err(err, 0, "max_edits must be between 0 and 2, got %u", max_edits);
        return SC_EINVAL;
    }
    size_t ncp = sc_automaton_cp_len(term);
    uint32_t *w = malloc((ncp + 1) * sizeof *w);
    if (!w)
        return SC_ENOMEM;
    for (size_t i = 0, k = 0; i < term.len; k++)
        w[k] = utf8_decode(term, &i);
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
        (void)new_state(&n);
    uint32_t gadget0 = n.n_states;
    for (size_t s = 0; s < grid; s++) /* gadget entry for "any code point -> (i,e)" */
        (void)new_state(&n);
    uint32_t end = new_state(&n);
#define ST(i, e) (base + (uint32_t)((i) * (k + 1) + (e)))
#define GADGET(i, e) (gadget0 + (uint32_t)((i) * (k + 1) + (e)))
    for (size_t i = 0; i <= m; i++)
        for (uint32_t e = 0; e <= k; e++) {
            if (e >= 1)
                add_cp_range(&n, GADGET(i, e), ST(i, e), 0, MAX_CP);
            if (i == m)
                add_eps(&n, ST(i, e), end);
            if (i < m)
                add_cp_range(&n, ST(i, e), ST(i + 1, e), v[i], v[i]);
            if (e < k) {
                add_eps(&n, ST(i, e), GADGET(i, e + 1)); /* insertion */
                if (i < m) {
                    add_eps(&n, ST(i, e), GADGET(i + 1, e + 1)); /* substitution */
                    add_eps(&n, ST(i, e), ST(i + 1, e + 1));     /* deletion */
                }
                if (transpositions && i + 1 < m && v[i] != v[i + 1]) {
                    uint32_t t = new_state(&n);
                    add_cp_range(&n, ST(i, e), t, v[i + 1], v[i + 1]);
                    add_cp_range(&n, t, ST(i + 2, e + 1), v[i], v[i]);
                }
            }
        }
#undef ST
#undef GADGET
    add_eps(&n, f.end, base);
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
        x[n] = utf8_decode(a, &i);
    }
    for (size_t i = 0; i < b.len; m++) {
        if (m == 256)
            return limit + 1;
        y[m] = utf8_decode(b, &i);
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
            if (transpositions && i > 1 && j > 1 && x[i - 1] == y[j - 2] &&
                x[i - 2] == y[j - 1] && pp[j - 2] + 1 < v)
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
