/* Doc values readers over values computed in memory (docvalues.h): the same reader structs as
 * the mmapped sections, laid out with fixed widths (64-bit values, 32-bit offsets and ords) so
 * every reader function and batch loop works on them unchanged. Used by runtime fields. */
#include "index/docvalues.h"

#include <stdlib.h>
#include <string.h>

#include "index/internal.h"

void sc_dv_numeric_wrap(uint32_t n_docs, int64_t *vals, uint64_t n_values, uint32_t *offs,
                        sc_dv_numeric *out)
{
    memset(out, 0, sizeof *out);
    /* the packed layout is little-endian: a no-op store on little-endian hosts */
    for (uint64_t i = 0; i < n_values; i++)
        sc__st64((uint8_t *)&vals[i], (uint64_t)vals[i]);
    out->n_docs = n_docs;
    out->n_values = n_values;
    out->min = 0;
    out->gcd = 1;
    out->bits = 64;
    out->vals = (const uint8_t *)vals;
    out->single = offs == NULL;
    if (offs) {
        for (uint64_t d = 0; d <= n_docs; d++)
            sc__st32((uint8_t *)&offs[d], offs[d]);
        offs[n_docs + 1] = offs[n_docs + 2] = 0; /* the reader's 8-byte loads stay inside */
        out->off_bits = 32;
        out->offs = (const uint8_t *)offs;
    }
}

typedef struct term_ix {
    sc_slice t;
    uint32_t i; /* index into the caller's terms */
} term_ix;

static int term_ix_cmp(const void *x, const void *y)
{
    const term_ix *a = x, *b = y;
    int c = sc_slice_cmp(a->t, b->t);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

sc_status sc_dv_sorted_set_build(sc_arena *a, uint32_t n_docs, const sc_slice *terms,
                                 const uint32_t *offs, sc_dv_sorted_set *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n = offs[n_docs];
    term_ix *ix = sc_arena_alloc(a, (n ? n : 1) * sizeof *ix);
    uint32_t *ord_of = sc_arena_alloc(a, (n ? n : 1) * sizeof *ord_of);
    if (!ix || !ord_of)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (uint64_t i = 0; i < n; i++)
        ix[i] = (term_ix){terms[i], (uint32_t)i};
    qsort(ix, n, sizeof *ix, term_ix_cmp);
    /* distinct terms in order: the term table */
    uint64_t n_ords = 0, bytes = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i == 0 || sc_slice_cmp(ix[i - 1].t, ix[i].t) != 0) {
            n_ords++;
            bytes += ix[i].t.len;
        }
        ord_of[ix[i].i] = (uint32_t)(n_ords - 1);
    }
    if (bytes > UINT32_MAX)
        return SC_EINVAL;
    uint8_t *term_offs = sc_arena_alloc(a, (n_ords + 1) * 4);
    uint8_t *term_bytes = sc_arena_alloc(a, bytes + 8);
    /* per doc: ascending distinct ords; offsets and ords as 32-bit packed arrays + 8 pad bytes */
    uint32_t *doffs = sc_arena_alloc(a, ((size_t)n_docs + 3) * 4);
    uint32_t *dords = sc_arena_alloc(a, (n + 2) * 4);
    if (!term_offs || !term_bytes || !doffs || !dords)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    uint64_t pos = 0, k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i == 0 || sc_slice_cmp(ix[i - 1].t, ix[i].t) != 0) {
            sc__st32(term_offs + 4 * k++, (uint32_t)pos);
            if (ix[i].t.len)
                memcpy(term_bytes + pos, ix[i].t.ptr, ix[i].t.len);
            pos += ix[i].t.len;
        }
    }
    sc__st32(term_offs + 4 * n_ords, (uint32_t)pos);
    bool single = true;
    uint64_t nv = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        doffs[d] = (uint32_t)nv;
        uint64_t s = offs[d], e = offs[d + 1];
        for (uint64_t i = s; i < e; i++)
            dords[nv + (i - s)] = ord_of[i];
        qsort(dords + nv, e - s, sizeof *dords, u32_cmp);
        uint64_t m = 0;
        for (uint64_t i = 0; i < e - s; i++)
            if (m == 0 || dords[nv + m - 1] != dords[nv + i])
                dords[nv + m++] = dords[nv + i];
        nv += m;
        single &= m <= 1;
    }
    doffs[n_docs] = (uint32_t)nv;
    out->n_docs = n_docs;
    out->n_ords = n_ords;
    out->n_values = nv;
    out->term_offs = term_offs;
    out->term_bytes = term_bytes;
    out->ord_bits = 32;
    if (single) {
        /* ord + 1 per doc, 0 = none */
        uint32_t *o = sc_arena_alloc(a, ((size_t)n_docs + 2) * 4);
        if (!o)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        for (uint32_t d = 0; d < n_docs; d++)
            sc__st32((uint8_t *)&o[d], doffs[d + 1] > doffs[d] ? dords[doffs[d]] + 1 : 0);
        o[n_docs] = o[n_docs + 1] = 0;
        out->single = true;
        out->ords = (const uint8_t *)o;
        return SC_OK;
    }
    for (uint64_t i = 0; i < nv; i++)
        sc__st32((uint8_t *)&dords[i], dords[i]);
    dords[nv] = dords[nv + 1] = 0;
    for (uint32_t d = 0; d <= n_docs; d++)
        sc__st32((uint8_t *)&doffs[d], doffs[d]);
    doffs[n_docs + 1] = doffs[n_docs + 2] = 0;
    out->off_bits = 32;
    out->offs = (const uint8_t *)doffs;
    out->ords = (const uint8_t *)dords;
    return SC_OK;
}
