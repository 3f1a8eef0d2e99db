/* Subset construction, product, complement and re-embedding of scratch DFAs for the pattern
 * compiler (search/automaton_internal.h). Scratch memory is heap, freed by the callers. */
#include <stdlib.h>
#include <string.h>

#include "search/automaton_internal.h"

/* ---- DFA (scratch form) ----------------------------------------------------------------- */

void sc__am_ddfa_fini(ddfa *d)
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

/* Appends without a call while there is room (the vectors below are reserved up front). */
#define PUSH(v, x)                                                                                 \
    ((v)->len < (v)->cap ? ((v)->ptr[(v)->len++] = (x), SC_OK) : sc_vec_push((v), (x)))

/* Epsilon closure of the n states at `in`, sorted, left in d->tmp (`in` may not be d->tmp). */
static sc_status closure(det *d, const uint32_t *in, size_t n)
{
    d->stamp++;
    d->stack.len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = in[i];
        if (d->mark[s] != d->stamp) {
            d->mark[s] = d->stamp;
            SC_TRY(PUSH(&d->stack, s));
        }
    }
    d->tmp.len = 0;
    while (d->stack.len) {
        uint32_t s = d->stack.ptr[--d->stack.len];
        SC_TRY(PUSH(&d->tmp, s));
        d->work += 1 + d->eps_off[s + 1] - d->eps_off[s];
        for (uint32_t k = d->eps_off[s]; k < d->eps_off[s + 1]; k++) {
            uint32_t t = d->eps_to[k];
            if (d->mark[t] != d->stamp) {
                d->mark[t] = d->stamp;
                SC_TRY(PUSH(&d->stack, t));
            }
        }
    }
    uint32_t *v = d->tmp.ptr;
    size_t len = d->tmp.len;
    if (len <= 24) { /* insertion sort: most sets are small (measured 2x faster than qsort) */
        for (size_t i = 1; i < len; i++) {
            uint32_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
    } else {
        qsort(v, len, sizeof(uint32_t), cmp_u32);
    }
    return SC_OK;
}

static sc_status map_grow(setmap *m, size_t n_used, det *d)
{
    if ((n_used + 1) * 2 < m->cap)
        return SC_OK;
    size_t cap = m->cap ? m->cap * 2 : 64;
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
    sc__am_set_err(err, 0,
                   "determinizing the automaton would result in more than %u states "
                   "(max_determinized_states)",
                   max_states);
    return SC_ELIMIT;
}

/* Subset construction of the NFA from `start`, accepting where the set holds `accept`. */
sc_status sc__am_determinize(const nfa *n, uint32_t start, uint32_t accept, uint32_t max_states,
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
    /* every set holds each NFA state at most once: room for all of them, pushes never grow */
    if (st == SC_OK)
        st = sc_vec_reserve(&d.stack, (size_t)n->n_states + 1);
    if (st == SC_OK)
        st = sc_vec_reserve(&d.tmp, (size_t)n->n_states + 1);
    if (st == SC_OK)
        st = closure(&d, &start, 1);
    uint32_t id;
    bool added;
    if (st == SC_OK)
        st = intern_set(&d, &id, &added);
    for (uint32_t cur = 0; st == SC_OK && cur < d.set_off.len - 1; cur++) {
        size_t off = d.set_off.ptr[cur], end = d.set_off.ptr[cur + 1];
        bool is_acc = false;
        d.work += end - off;
        if (d.work > DET_WORK_LIMIT) {
            sc__am_set_err(err, 0, "pattern too complex: determinizing it exceeds %u steps",
                           DET_WORK_LIMIT);
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
                    st = PUSH(&buckets[c], e->to);
            }
        }
        if (st == SC_OK)
            st = PUSH(&acc, is_acc ? 1 : 0);
        for (uint32_t c = 0; c < nc && st == SC_OK; c++) {
            if (buckets[c].len == 0) {
                st = PUSH(&next, SC_DFA_DEAD);
                continue;
            }
            d.work += buckets[c].len;
            st = closure(&d, buckets[c].ptr, buckets[c].len);
            buckets[c].len = 0;
            if (st == SC_OK)
                st = intern_set(&d, &id, &added);
            if (st == SC_OK && d.set_off.len - 1 > max_states)
                st = limit_error(err, max_states);
            if (st == SC_OK)
                st = PUSH(&next, id);
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
sc_status sc__am_ddfa_flip_total(ddfa *d)
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
sc_status sc__am_ddfa_intersect(const ddfa *a, const ddfa *b, uint32_t max_states,
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
        size_t h = ((key)*0x9E3779B97F4A7C15ull) >> 20 & (cap - 1);                                \
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
                st = PUSH(&next, id);
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
frag sc__am_embed(nfa *n, const ddfa *d)
{
    frag f;
    uint32_t base = n->n_states;
    for (uint32_t s = 0; s < d->n_states; s++)
        (void)sc__am_new_state(n);
    f.start = base + d->start;
    f.end = sc__am_new_state(n);
    for (uint32_t s = 0; s < d->n_states && n->status == SC_OK; s++) {
        if (d->accept[s])
            sc__am_add_eps(n, base + s, f.end);
        int b = 0;
        while (b < 256) {
            uint32_t t = d->next[(size_t)s * d->n_classes + d->classmap[b]];
            int e = b;
            while (e + 1 < 256 && d->next[(size_t)s * d->n_classes + d->classmap[e + 1]] == t)
                e++;
            if (t != SC_DFA_DEAD)
                sc__am_add_edge(n, base + s, base + t, (unsigned)b, (unsigned)e);
            b = e + 1;
        }
    }
    return f;
}

/* Determinizes a sub-fragment built in its own NFA. */
sc_status sc__am_sub_determinize(nfa *sub, frag f, uint32_t max_states, sc_automaton_error *err,
                                 ddfa *out)
{
    if (sub->status != SC_OK)
        return sub->status;
    return sc__am_determinize(sub, f.start, f.end, max_states, err, out);
}

/* The DFA of all valid UTF-8 strings. */
sc_status sc__am_any_utf8(uint32_t max_states, sc_automaton_error *err, ddfa *out)
{
    nfa sub;
    memset(&sub, 0, sizeof sub);
    sub.err = err;
    frag f = sc__am_frag_any_string(&sub);
    sc_status st = sc__am_sub_determinize(&sub, f, max_states, err, out);
    sc_vec_free(&sub.edges);
    return st;
}
