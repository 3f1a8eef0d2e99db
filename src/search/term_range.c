/* Term range -> DFA (see term_range.h). While reading a string the automaton knows whether
 * the prefix so far equals the lower bound's, the upper bound's, both, or neither (then the
 * string is strictly inside and anything may follow):
 *   BOTH(k): prefix == lo[0..k) == hi[0..k)     LO(k): prefix == lo[0..k), already < hi
 *   HI(k):   prefix == hi[0..k), already > lo   FREE: strictly between, accept anything
 * States are numbered FREE = 0, BOTH(k) = 1 + k, LO(k) = 2 + nb + k, HI(k) = 3 + nb + nl + k. */
#include "search/term_range.h"

#include <string.h>

enum {
    S_FREE,
    S_BOTH,
    S_LO,
    S_HI
};

typedef struct rctx {
    const uint8_t *lo, *hi;
    size_t nl, nh, nc; /* bound lengths; common prefix length */
    bool lo_incl, hi_incl, has_lo, has_hi;
    uint32_t base_both, base_lo, base_hi, n_states;
} rctx;

static uint32_t st_id(const rctx *r, int kind, size_t k)
{
    switch (kind) {
    case S_BOTH: return r->base_both + (uint32_t)k;
    case S_LO: return r->base_lo + (uint32_t)k;
    case S_HI: return r->base_hi + (uint32_t)k;
    default: return 0;
    }
}

/* Only the upper bound left, prefix == hi[0..k). */
static uint32_t step_hi(const rctx *r, size_t k, uint8_t b)
{
    if (k == r->nh || b > r->hi[k])
        return SC_DFA_DEAD;
    return b < r->hi[k] ? S_FREE : st_id(r, S_HI, k + 1);
}

/* Only the lower bound left, prefix == lo[0..k). */
static uint32_t step_lo(const rctx *r, size_t k, uint8_t b)
{
    if (k == r->nl || b > r->lo[k])
        return S_FREE; /* past lo (a longer string with lo as prefix is greater) */
    return b < r->lo[k] ? SC_DFA_DEAD : st_id(r, S_LO, k + 1);
}

static uint32_t step_both(const rctx *r, size_t k, uint8_t b)
{
    if (k < r->nc)
        return b == r->lo[k] ? st_id(r, S_BOTH, k + 1) : SC_DFA_DEAD;
    if (k == r->nl) /* prefix == lo: any byte makes it > lo */
        return step_hi(r, k, b);
    if (k == r->nh) /* hi is a proper prefix of lo: hi < lo, empty */
        return SC_DFA_DEAD;
    if (r->lo[k] > r->hi[k]) /* lo > hi: empty */
        return SC_DFA_DEAD;
    if (b == r->lo[k])
        return st_id(r, S_LO, k + 1);
    if (b == r->hi[k])
        return st_id(r, S_HI, k + 1);
    return b > r->lo[k] && b < r->hi[k] ? S_FREE : SC_DFA_DEAD;
}

static bool accepting(const rctx *r, uint32_t s)
{
    if (s == S_FREE)
        return true;
    if (s < r->base_lo) { /* BOTH(k) */
        size_t k = s - r->base_both;
        if (k < r->nl)
            return false;
        return k == r->nh ? r->lo_incl && r->hi_incl : r->lo_incl;
    }
    if (s < r->base_hi) /* LO(k): equal to lo, or a proper prefix of it (smaller) */
        return s - r->base_lo == r->nl && r->lo_incl;
    return s - r->base_hi == r->nh ? r->hi_incl : true; /* HI(k) */
}

sc_status sc_term_range_dfa(const sc_slice *lo, bool lo_incl, const sc_slice *hi, bool hi_incl,
                            sc_arena *a, sc_dfa *out)
{
    rctx r = {0};
    r.has_lo = lo != NULL;
    r.has_hi = hi != NULL;
    r.lo = lo ? lo->ptr : NULL;
    r.hi = hi ? hi->ptr : NULL;
    r.nl = lo ? lo->len : 0;
    r.nh = hi ? hi->len : 0;
    if (r.nl > SC_TERM_RANGE_MAX_BOUND || r.nh > SC_TERM_RANGE_MAX_BOUND)
        return SC_EINVAL;
    r.lo_incl = lo_incl;
    r.hi_incl = hi_incl;
    if (lo && hi)
        while (r.nc < r.nl && r.nc < r.nh && r.lo[r.nc] == r.hi[r.nc])
            r.nc++;
    size_t nb = lo && hi ? r.nc + 1 : 0;
    r.base_both = 1;
    r.base_lo = 1 + (uint32_t)nb;
    r.base_hi = r.base_lo + (uint32_t)(r.nl + 1);
    r.n_states = r.base_hi + (uint32_t)(r.nh + 1);
    /* byte classes: each byte of a bound on its own, the gaps between them shared */
    bool mark[257] = {false};
    for (size_t i = 0; i < r.nl; i++)
        mark[r.lo[i]] = mark[r.lo[i] + 1] = true;
    for (size_t i = 0; i < r.nh; i++)
        mark[r.hi[i]] = mark[r.hi[i] + 1] = true;
    uint8_t rep[256];
    uint32_t nclass = 0;
    for (int b = 0; b < 256; b++) {
        if (b == 0 || mark[b])
            rep[nclass++] = (uint8_t)b;
        out->classmap[b] = (uint8_t)(nclass - 1);
    }
    uint32_t *next = sc_arena_alloc(a, (size_t)r.n_states * nclass * sizeof(uint32_t));
    uint8_t *acc = sc_arena_alloc(a, r.n_states);
    if (!next || !acc)
        return SC_ENOMEM;
    for (uint32_t s = 0; s < r.n_states; s++) {
        acc[s] = accepting(&r, s);
        for (uint32_t c = 0; c < nclass; c++) {
            uint8_t b = rep[c];
            uint32_t t;
            if (s == S_FREE)
                t = S_FREE;
            else if (s < r.base_lo)
                t = step_both(&r, s - r.base_both, b);
            else if (s < r.base_hi)
                t = step_lo(&r, s - r.base_lo, b);
            else
                t = step_hi(&r, s - r.base_hi, b);
            next[(size_t)s * nclass + c] = t;
        }
    }
    out->n_states = r.n_states;
    out->n_classes = nclass;
    out->next = next;
    out->accept = acc;
    if (lo && hi)
        out->start = st_id(&r, S_BOTH, 0);
    else if (lo)
        out->start = st_id(&r, S_LO, 0);
    else if (hi)
        out->start = st_id(&r, S_HI, 0);
    else
        out->start = S_FREE;
    return SC_OK;
}
