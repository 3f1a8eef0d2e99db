/* The streaming merge's doc values (merge_stream_impl.h): numeric doc values in three passes
 * over the inputs, sorted-set doc values through per-input ordinal maps built by a k-way walk
 * over the inputs' sorted dictionaries; both written straight to the file as bit-packed arrays
 * (util.c's layout). Split from merge_stream.c, which calls these per field. */
#include <stdlib.h>
#include <string.h>

#include "index/docvalues.h"
#include "index/internal.h"
#include "index/merge_stream_impl.h"
#include "index/segment_impl.h"

/* ---- a bit-packed array (util.c's layout) written straight to the file ---- */

typedef struct pkw {
    sc__out *o;
    unsigned bits;
    unsigned nacc;
    uint64_t acc;
} pkw;

static void pk_put(pkw *p, uint64_t v)
{
    if (p->bits == 0)
        return;
    if (p->bits < 64)
        v &= (UINT64_C(1) << p->bits) - 1;
    p->acc |= v << p->nacc;
    unsigned total = p->nacc + p->bits;
    if (total >= 64) {
        uint8_t b[8];
        sc__st64(b, p->acc);
        sc__out_write(p->o, b, 8);
        p->acc = p->nacc ? v >> (64 - p->nacc) : 0;
        p->nacc = total - 64;
    } else {
        p->nacc = total;
    }
}

static void pk_finish(pkw *p)
{
    uint8_t b[8 + SC__PACK_PAD] = {0};
    sc__st64(b, p->acc);
    sc__out_write(p->o, b, (p->nacc + 7) / 8);
    sc__out_write(p->o, b + 8, SC__PACK_PAD);
}

/* ---- numeric doc values: three passes over the inputs (stats, gcd, then the packed starts
 * and values straight to the file) ---- */

typedef struct dvn_in {
    sc_dv_numeric dv;
    bool open;
} dvn_in;

static sc_status merge_dvn(sctx *m, dvn_in *dv, uint64_t *off, uint64_t *len)
{
    uint64_t n = 0;
    bool single = true;
    int64_t min = 0, max = 0;
    for (size_t i = 0; i < m->n; i++) {
        uint32_t nd = sc_segment_n_docs(m->in[i].seg);
        for (uint32_t d = 0; d < nd; d++) {
            if (m->map[i][d] == UINT32_MAX)
                continue;
            uint32_t c = dv[i].open ? sc_dv_numeric_count(&dv[i].dv, d) : 0;
            single &= c == 1;
            if (!c)
                continue;
            SC_TRY(sc_vec_reserve(&m->vals, c));
            size_t got = sc_dv_numeric_get(&dv[i].dv, d, m->vals.ptr, c);
            for (size_t k = 0; k < got; k++) {
                int64_t v = m->vals.ptr[k];
                if (n == 0 || v < min)
                    min = v;
                if (n == 0 || v > max)
                    max = v;
                n++;
            }
            single &= got == 1;
            if (got)
                sc_bitset_set(&m->has, m->map[i][d]);
        }
    }
    uint64_t g = 0;
    for (size_t i = 0; i < m->n && g != 1; i++) {
        uint32_t nd = sc_segment_n_docs(m->in[i].seg);
        for (uint32_t d = 0; dv[i].open && d < nd && g != 1; d++) {
            if (m->map[i][d] == UINT32_MAX)
                continue;
            uint32_t c = sc_dv_numeric_count(&dv[i].dv, d);
            SC_TRY(sc_vec_reserve(&m->vals, c ? c : 1));
            size_t got = sc_dv_numeric_get(&dv[i].dv, d, m->vals.ptr, c);
            for (size_t k = 0; k < got; k++) {
                uint64_t a = (uint64_t)m->vals.ptr[k] - (uint64_t)min, b = g;
                while (b) {
                    uint64_t t = a % b;
                    a = b;
                    b = t;
                }
                g = a;
            }
        }
    }
    if (g == 0)
        g = 1;
    single &= n == m->n_docs;
    unsigned bits = sc__bits_for(n ? ((uint64_t)max - (uint64_t)min) / g : 0);
    unsigned off_bits = single ? 0 : sc__bits_for(n);
    *off = m->o->pos;
    uint8_t hdr[SC__DV_HEADER_BYTES] = {0};
    sc__st64(hdr, n);
    sc__st64(hdr + 8, (uint64_t)min);
    sc__st64(hdr + 16, g);
    hdr[24] = (uint8_t)bits;
    hdr[25] = (uint8_t)off_bits;
    hdr[26] = single ? SC__DV_SINGLE : SC__DV_MULTI;
    sc__out_write(m->o, hdr, sizeof(hdr));
    if (!single) {
        pkw pk = {.o = m->o, .bits = off_bits};
        uint64_t at = 0;
        for (size_t i = 0; i < m->n; i++) {
            uint32_t nd = sc_segment_n_docs(m->in[i].seg);
            for (uint32_t d = 0; d < nd; d++) {
                if (m->map[i][d] == UINT32_MAX)
                    continue;
                pk_put(&pk, at);
                if (dv[i].open) {
                    uint32_t c = sc_dv_numeric_count(&dv[i].dv, d);
                    SC_TRY(sc_vec_reserve(&m->vals, c ? c : 1));
                    at += sc_dv_numeric_get(&dv[i].dv, d, m->vals.ptr, c);
                }
            }
        }
        pk_put(&pk, at);
        pk_finish(&pk);
    }
    pkw pk = {.o = m->o, .bits = bits};
    for (size_t i = 0; i < m->n; i++) {
        uint32_t nd = sc_segment_n_docs(m->in[i].seg);
        for (uint32_t d = 0; dv[i].open && d < nd; d++) {
            if (m->map[i][d] == UINT32_MAX)
                continue;
            uint32_t c = sc_dv_numeric_count(&dv[i].dv, d);
            SC_TRY(sc_vec_reserve(&m->vals, c ? c : 1));
            size_t got = sc_dv_numeric_get(&dv[i].dv, d, m->vals.ptr, c);
            for (size_t k = 0; k < got; k++)
                pk_put(&pk, ((uint64_t)m->vals.ptr[k] - (uint64_t)min) / g);
        }
    }
    pk_finish(&pk);
    *len = m->o->pos - *off;
    return SC_OK;
}

/* ---- sorted-set doc values: the inputs' used ordinals merged by term into ordinal maps ---- */

typedef struct dvs_in {
    sc_dv_sorted_set dv;
    bool open;
    uint32_t *omap; /* old ord -> new ord; UINT32_MAX = used by no live doc */
    uint64_t next;  /* merge cursor: next ord to look at */
} dvs_in;

static uint64_t next_used(const dvs_in *s, uint64_t o)
{
    uint64_t n = sc_dv_sorted_set_n_ords(&s->dv);
    while (o < n && s->omap[o] == UINT32_MAX)
        o++;
    return o;
}

/* A k-way walk over the inputs' used ordinals in term order, one merged ordinal per step. */
typedef struct dvs_walk {
    sc__ms_heap q;
    sc_slice *key;
} dvs_walk;

static sc_status dvs_walk_start(sctx *m, dvs_in *dv, dvs_walk *w)
{
    if (!w->key) {
        w->key = calloc(m->n ? m->n : 1, sizeof(*w->key));
        w->q.h = malloc((m->n ? m->n : 1) * sizeof(uint32_t));
        w->q.key = w->key;
        if (!w->key || !w->q.h)
            return SC_ENOMEM;
    }
    w->q.len = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (!dv[i].open)
            continue;
        dv[i].next = next_used(&dv[i], 0);
        if (dv[i].next < sc_dv_sorted_set_n_ords(&dv[i].dv)) {
            w->key[i] = sc_dv_sorted_set_term(&dv[i].dv, dv[i].next);
            w->q.h[w->q.len++] = (uint32_t)i;
        }
    }
    sc__ms_heap_build(&w->q);
    return SC_OK;
}

/* The next merged ordinal's term into *term (false at the end); with assign, the inputs'
 * ordinals holding it map to `ord`. */
static bool dvs_walk_next(dvs_in *dv, dvs_walk *w, bool assign, uint32_t ord, sc_slice *term)
{
    if (!w->q.len)
        return false;
    *term = w->key[w->q.h[0]];
    while (w->q.len && sc_slice_eq(w->key[w->q.h[0]], *term)) {
        uint32_t i = w->q.h[0];
        if (assign)
            dv[i].omap[dv[i].next] = ord;
        dv[i].next = next_used(&dv[i], dv[i].next + 1);
        if (dv[i].next < sc_dv_sorted_set_n_ords(&dv[i].dv))
            w->key[i] = sc_dv_sorted_set_term(&dv[i].dv, dv[i].next);
        else
            w->q.h[0] = w->q.h[--w->q.len];
        sc__ms_heap_down(&w->q, 0);
    }
    return true;
}

static void dvs_walk_fini(dvs_walk *w)
{
    free(w->key);
    free(w->q.h);
}

/* Marks the ordinals live docs use, counts the values, then numbers the used ordinals in term
 * order (omap). The merged terms are not kept: the writer walks the inputs again. */
static sc_status dvs_maps(sctx *m, dvs_in *dv, dvs_walk *w, uint64_t *n_ords, uint64_t *n_vals,
                          bool *single, uint64_t *term_bytes, unsigned *rel_bits)
{
    *single = true;
    *n_vals = 0;
    sc_status st = SC_OK;
    /* mark the ordinals live docs use (UINT32_MAX - 1), count values */
    for (size_t i = 0; st == SC_OK && i < m->n; i++) {
        if (!dv[i].open)
            continue;
        uint64_t no = sc_dv_sorted_set_n_ords(&dv[i].dv);
        if (no >= UINT32_MAX - 1) {
            st = SC_ELIMIT;
            break;
        }
        dv[i].omap = malloc((no ? no : 1) * sizeof(uint32_t));
        if (!dv[i].omap) {
            st = SC_ENOMEM;
            break;
        }
        for (uint64_t o = 0; o < no; o++)
            dv[i].omap[o] = UINT32_MAX;
        uint32_t nd = sc_segment_n_docs(m->in[i].seg);
        for (uint32_t d = 0; st == SC_OK && d < nd; d++) {
            if (m->map[i][d] == UINT32_MAX)
                continue;
            uint32_t c = sc_dv_sorted_set_count(&dv[i].dv, d);
            if (sc_vec_reserve(&m->ords, c ? c : 1) != SC_OK) {
                st = SC_ENOMEM;
                break;
            }
            size_t got = sc_dv_sorted_set_ords(&dv[i].dv, d, m->ords.ptr, c);
            for (size_t k = 0; k < got; k++) {
                if (m->ords.ptr[k] >= no)
                    st = SC_ECORRUPT;
                else
                    dv[i].omap[m->ords.ptr[k]] = UINT32_MAX - 1;
            }
            *n_vals += got;
            *single &= got <= 1;
            if (got)
                sc_bitset_set(&m->has, m->map[i][d]);
        }
    }
    if (st == SC_OK)
        st = dvs_walk_start(m, dv, w);
    uint64_t nn = 0, base = 0, max_rel = 0;
    *term_bytes = 0;
    sc_slice term;
    while (st == SC_OK && nn < UINT32_MAX - 1 && dvs_walk_next(dv, w, true, (uint32_t)nn, &term)) {
        if (nn % SC__DV_TERM_BLOCK == 0)
            base = *term_bytes;
        max_rel = *term_bytes - base > max_rel ? *term_bytes - base : max_rel;
        *term_bytes += term.len;
        nn++;
    }
    if (nn % SC__DV_TERM_BLOCK != 0) /* the end offset, in the last block */
        max_rel = *term_bytes - base > max_rel ? *term_bytes - base : max_rel;
    *rel_bits = sc__bits_for(max_rel);
    *n_ords = nn;
    if (st == SC_OK && (*term_bytes > UINT32_MAX || nn >= UINT32_MAX - 1))
        st = SC_ELIMIT;
    return st;
}

static sc_status merge_dvs(sctx *m, dvs_in *dv, uint64_t *off, uint64_t *len)
{
    uint64_t n_ords, n, term_bytes;
    bool single;
    unsigned rel_bits;
    dvs_walk w = {0};
    sc_status st = dvs_maps(m, dv, &w, &n_ords, &n, &single, &term_bytes, &rel_bits);
    if (st != SC_OK) {
        dvs_walk_fini(&w);
        return st;
    }
    unsigned ord_bits = single ? sc__bits_for(n_ords) : sc__bits_for(n_ords ? n_ords - 1 : 0);
    unsigned off_bits = single ? 0 : sc__bits_for(n);
    *off = m->o->pos;
    uint8_t hdr[SC__DV_HEADER_BYTES] = {0};
    sc__st64(hdr, n_ords);
    sc__st64(hdr + 8, n);
    hdr[16] = (uint8_t)ord_bits;
    hdr[17] = (uint8_t)off_bits;
    hdr[18] = single ? SC__DV_SINGLE : SC__DV_MULTI;
    hdr[19] = (uint8_t)rel_bits;
    sc__st64(hdr + 24, term_bytes);
    sc__out_write(m->o, hdr, sizeof(hdr));
    /* the terms' start offsets (term_rel streamed, term_base kept: 4 bytes per 16 ordinals),
     * then their bytes: two more walks, so that no per-ordinal table of the merged dictionary
     * is held */
    SC_VEC(uint32_t) bases = {0};
    uint64_t acc = 0, o = 0;
    uint8_t b4[4];
    sc_slice t;
    pkw rk = {.o = m->o, .bits = rel_bits};
    st = dvs_walk_start(m, dv, &w);
    for (bool more = true; st == SC_OK && more; o++) {
        more = dvs_walk_next(dv, &w, false, 0, &t);
        if (o % SC__DV_TERM_BLOCK == 0 && sc_vec_push(&bases, (uint32_t)acc) != SC_OK)
            st = SC_ENOMEM;
        else
            pk_put(&rk, acc - bases.ptr[o / SC__DV_TERM_BLOCK]);
        if (more)
            acc += t.len;
    }
    pk_finish(&rk);
    for (size_t k = 0; st == SC_OK && k < bases.len; k++) {
        sc__st32(b4, bases.ptr[k]);
        sc__out_write(m->o, b4, 4);
    }
    sc_vec_free(&bases);
    if (st == SC_OK)
        st = dvs_walk_start(m, dv, &w);
    while (st == SC_OK && dvs_walk_next(dv, &w, false, 0, &t))
        sc__out_write(m->o, t.ptr, t.len);
    dvs_walk_fini(&w);
    SC_TRY(st);
    /* per doc: ord + 1 (single), or the starts then the ords */
    for (int pass = single ? 1 : 0; pass < 2; pass++) {
        pkw pk = {.o = m->o, .bits = pass == 0 ? off_bits : ord_bits};
        uint64_t at = 0;
        for (size_t i = 0; i < m->n; i++) {
            uint32_t nd = sc_segment_n_docs(m->in[i].seg);
            for (uint32_t d = 0; d < nd; d++) {
                if (m->map[i][d] == UINT32_MAX)
                    continue;
                size_t got = 0;
                if (dv[i].open) {
                    uint32_t c = sc_dv_sorted_set_count(&dv[i].dv, d);
                    SC_TRY(sc_vec_reserve(&m->ords, c ? c : 1));
                    got = sc_dv_sorted_set_ords(&dv[i].dv, d, m->ords.ptr, c);
                }
                if (pass == 0) {
                    pk_put(&pk, at);
                    at += got;
                } else if (single) {
                    pk_put(&pk, got ? (uint64_t)dv[i].omap[m->ords.ptr[0]] + 1 : 0);
                } else {
                    for (size_t k = 0; k < got; k++)
                        pk_put(&pk, dv[i].omap[m->ords.ptr[k]]);
                }
            }
        }
        if (pass == 0)
            pk_put(&pk, at);
        pk_finish(&pk);
    }
    *len = m->o->pos - *off;
    return SC_OK;
}

sc_status sc__ms_merge_dvn(sctx *m, uint64_t *off, uint64_t *len)
{
    dvn_in *dv = calloc(m->n ? m->n : 1, sizeof(*dv));
    if (!dv)
        return SC_ENOMEM;
    for (size_t i = 0; i < m->n; i++)
        dv[i].open = m->fi[i] && m->fi[i]->dvn_len &&
                     sc_dv_numeric_open(m->in[i].seg, m->fi[i], &dv[i].dv) == SC_OK;
    sc_status st = merge_dvn(m, dv, off, len);
    free(dv);
    return st;
}

sc_status sc__ms_merge_dvs(sctx *m, uint64_t *off, uint64_t *len)
{
    dvs_in *dv = calloc(m->n ? m->n : 1, sizeof(*dv));
    if (!dv)
        return SC_ENOMEM;
    for (size_t i = 0; i < m->n; i++)
        dv[i].open = m->fi[i] && m->fi[i]->dvs_len &&
                     sc_dv_sorted_set_open(m->in[i].seg, m->fi[i], &dv[i].dv) == SC_OK;
    sc_status st = merge_dvs(m, dv, off, len);
    for (size_t i = 0; i < m->n; i++)
        free(dv[i].omap);
    free(dv);
    return st;
}
