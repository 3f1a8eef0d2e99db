/* Term dictionary hints (index/dfa.h) for DFAs built through subset construction (regexps):
 * the tame states, found as the pairs (state, place in a UTF-8 sequence) reachable from the
 * start from which no valid byte leads to SC_DFA_DEAD; and a suffix every accepted string
 * ends with, read backwards from the accepting states while every transition into the
 * current set carries one and the same byte (Lucene's common suffix, without determinizing
 * the reversed automaton). Small DFAs only: the walk is what they speed up (`.*0th` scans
 * every term), and the analysis must stay cheaper than the compile. */
#include <string.h>

#include "search/automaton_internal.h"

#define HINT_MAX_STATES 128
#define HINT_MAX_SUFFIX 16

/* Places in a UTF-8 sequence: 0 = between code points; then as automaton_wildcard.c's
 * kinds: 1/2/3 continuation bytes to go, or just after lead E0, ED, F0, F4. */
enum {
    P0,
    PC1,
    PC2,
    PC3,
    PE0,
    PED,
    PF0,
    PF4,
    P_N
};

typedef struct group {
    uint8_t lo, hi, next;
} group;

/* The valid bytes at each place, in groups with the place after them. */
static const group G0[] = {{0x00, 0x7F, P0},  {0xC2, 0xDF, PC1}, {0xE0, 0xE0, PE0},
                           {0xE1, 0xEC, PC2}, {0xED, 0xED, PED}, {0xEE, 0xEF, PC2},
                           {0xF0, 0xF0, PF0}, {0xF1, 0xF3, PC3}, {0xF4, 0xF4, PF4}};
static const group GC1[] = {{0x80, 0xBF, P0}}, GC2[] = {{0x80, 0xBF, PC1}},
                   GC3[] = {{0x80, 0xBF, PC2}}, GE0[] = {{0xA0, 0xBF, PC1}},
                   GED[] = {{0x80, 0x9F, PC1}}, GF0[] = {{0x90, 0xBF, PC2}},
                   GF4[] = {{0x80, 0x8F, PC2}};
static const group *const GROUPS[P_N] = {G0, GC1, GC2, GC3, GE0, GED, GF0, GF4};
static const uint8_t N_GROUPS[P_N] = {9, 1, 1, 1, 1, 1, 1, 1};

/* The classes of the bytes of every group: (place, group) -> classes, deduplicated. */
typedef struct class_lists {
    uint16_t off[P_N][10], len[P_N][10];
    uint8_t cls[512];
} class_lists;

static void make_lists(const sc_dfa *d, class_lists *cl)
{
    uint16_t n = 0;
    for (int u = 0; u < P_N; u++)
        for (int g = 0; g < N_GROUPS[u]; g++) {
            uint8_t seen[256] = {0};
            cl->off[u][g] = n;
            for (unsigned b = GROUPS[u][g].lo; b <= GROUPS[u][g].hi; b++) {
                uint8_t c = d->classmap[b];
                if (!seen[c] && n < sizeof cl->cls) {
                    seen[c] = 1;
                    cl->cls[n++] = c;
                }
            }
            cl->len[u][g] = (uint16_t)(n - cl->off[u][g]);
        }
}

/* tame[s] for every state (0 unless reached between code points with no way to die). False
 * when no state is tame. */
static bool find_tame(const sc_dfa *d, const class_lists *cl, uint8_t *tame)
{
    uint32_t ns = d->n_states, nc = d->n_classes;
    uint8_t reach[HINT_MAX_STATES * P_N] = {0}, bad[HINT_MAX_STATES * P_N] = {0};
    uint16_t order[HINT_MAX_STATES * P_N];
    size_t n = 0;
    reach[d->start * P_N + P0] = 1;
    order[n++] = (uint16_t)(d->start * P_N + P0);
    for (size_t i = 0; i < n; i++) { /* forward: the reachable pairs, BFS order */
        uint32_t s = order[i] / P_N, u = order[i] % P_N;
        for (int g = 0; g < N_GROUPS[u]; g++)
            for (int k = 0; k < cl->len[u][g]; k++) {
                uint32_t t = d->next[(size_t)s * nc + cl->cls[cl->off[u][g] + k]];
                if (t == SC_DFA_DEAD || t >= ns)
                    continue;
                size_t p = (size_t)t * P_N + GROUPS[u][g].next;
                if (!reach[p]) {
                    reach[p] = 1;
                    order[n++] = (uint16_t)p;
                }
            }
    }
    /* backward: a pair is bad when a valid byte dies or leads to a bad pair (least fixpoint;
     * reverse BFS order settles most pairs in a pass) */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = n; i-- > 0;) {
            if (bad[order[i]])
                continue;
            uint32_t s = order[i] / P_N, u = order[i] % P_N;
            bool b = false;
            for (int g = 0; g < N_GROUPS[u] && !b; g++)
                for (int k = 0; k < cl->len[u][g] && !b; k++) {
                    uint32_t t = d->next[(size_t)s * nc + cl->cls[cl->off[u][g] + k]];
                    b = t == SC_DFA_DEAD || t >= ns || bad[(size_t)t * P_N + GROUPS[u][g].next];
                }
            if (b) {
                bad[order[i]] = 1;
                changed = true;
            }
        }
    }
    bool any = false;
    for (uint32_t s = 0; s < ns; s++) {
        tame[s] = reach[s * P_N + P0] && !bad[s * P_N + P0];
        any |= tame[s];
    }
    return any;
}

/* The suffix read backwards from the accepting states; its length. */
static size_t find_suffix(const sc_dfa *d, uint8_t *out)
{
    uint32_t ns = d->n_states, nc = d->n_classes;
    int byte_of[256]; /* the one byte of a single-byte class, else -1 */
    uint16_t count[256] = {0};
    for (int b = 0; b < 256; b++)
        count[d->classmap[b]]++;
    for (int b = 0; b < 256; b++)
        byte_of[d->classmap[b]] = count[d->classmap[b]] == 1 ? b : -1;
    uint8_t in[HINT_MAX_STATES], prev[HINT_MAX_STATES];
    for (uint32_t s = 0; s < ns; s++)
        in[s] = d->accept[s] != 0;
    uint8_t rev[HINT_MAX_SUFFIX];
    size_t n = 0;
    while (n < HINT_MAX_SUFFIX && !in[d->start]) {
        int byte = -1;
        bool any = false, ok = true;
        memset(prev, 0, ns);
        for (uint32_t q = 0; q < ns && ok; q++)
            for (uint32_t c = 0; c < nc && ok; c++) {
                uint32_t t = d->next[(size_t)q * nc + c];
                if (t == SC_DFA_DEAD || t >= ns || !in[t])
                    continue;
                if (byte_of[c] < 0 || (any && byte_of[c] != byte))
                    ok = false;
                byte = byte_of[c];
                any = true;
                prev[q] = 1;
            }
        if (!ok || !any)
            break;
        rev[n++] = (uint8_t)byte;
        memcpy(in, prev, ns);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

void sc__am_hints(sc_dfa *d, sc_arena *a)
{
    if (d->n_states > HINT_MAX_STATES || d->tame || d->suffix_len)
        return;
    /* a tame state lives on every ASCII byte: most patterns have none, and stop here */
    uint8_t seen[256] = {0}, ascii[128];
    size_t na = 0;
    for (int b = 0; b < 128; b++)
        if (!seen[d->classmap[b]]) {
            seen[d->classmap[b]] = 1;
            ascii[na++] = d->classmap[b];
        }
    bool candidate = false;
    for (uint32_t s = 0; s < d->n_states && !candidate; s++) {
        size_t k = 0;
        while (k < na && d->next[(size_t)s * d->n_classes + ascii[k]] != SC_DFA_DEAD)
            k++;
        candidate = k == na;
    }
    if (!candidate)
        return;
    class_lists cl;
    make_lists(d, &cl);
    uint8_t tame[HINT_MAX_STATES], suffix[HINT_MAX_SUFFIX];
    if (!find_tame(d, &cl, tame))
        return;
    size_t n = find_suffix(d, suffix);
    if (n == 0)
        return;
    uint8_t *mem = sc_arena_alloc(a, d->n_states + n);
    if (!mem)
        return; /* hints are optional */
    memcpy(mem, tame, d->n_states);
    memcpy(mem + d->n_states, suffix, n);
    d->tame = mem;
    d->suffix = mem + d->n_states;
    d->suffix_len = (uint32_t)n;
}
