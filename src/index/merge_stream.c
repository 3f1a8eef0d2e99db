/* Streaming segment merge (merge.h): writes the merged segment straight to its file, field by
 * field in name order, without rebuilding it in a builder. Terms come from a k-way merge of the
 * inputs' term dictionaries and each term's postings are remapped through per-input doc maps
 * into the streaming postings encoder (postenc.h); sorted-set doc values merge the inputs'
 * sorted dictionaries into per-input ordinal maps; norms, numeric doc values and points are
 * read from the inputs per field; dense vectors are written from the inputs' mappings and their
 * HNSW graph built over them in place (merge_vectors); stored-field blocks whose docs are all live
 * are copied compressed when no stored dictionary is involved (stored_comp.c), the rest
 * recompressed. Memory: O(n_docs) bytes per field (norms, doc values, points), the term dictionary
 * of one field and the encoded postings of one term; the last two are spilled to temporary files
 * (spill.h) when they outgrow their share of the memory limit (sc_merge_options), so they do not
 * grow with the index. The output is byte for byte the segment a builder would write from the
 * same live docs, except for the stored blocks' boundaries and dictionary, and does not depend
 * on the limit. */
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/docvalues.h"
#include "index/internal.h"
#include "index/merge.h"
#include "index/merge_impl.h"
#include "index/merge_stream_impl.h"
#include "index/postenc.h"
#include "index/postings.h"
#include "index/segment_impl.h"
#include "index/spill.h"
#include "index/stored.h"
#include "index/terms.h"
#include "index/vecfield.h"

/* The smallest share of a spillable buffer, whatever the limit: below it the spill files'
 * write calls would cost more than the memory saved. */
#define SPILL_MIN_PART ((uint64_t)1 << 10)

/* Spills one term's postings or positions when they pass their share. */
static void spill_postings(sctx *m)
{
    if (m->enc.blk.len > m->part) {
        m->enc.blk_base += m->enc.blk.len;
        sc__spill_buf(&m->sp_blk, &m->enc.blk);
    }
    if (m->enc.pos.len > m->part) {
        m->enc.pos_base += m->enc.pos.len;
        sc__spill_buf(&m->sp_pos, &m->enc.pos);
    }
}

void sc__ms_drop_input_pages(sctx *m, bool now)
{
    if (!now && m->o->pos - m->dropped_at < ((uint64_t)64 << 20))
        return;
    for (size_t i = 0; i < m->n; i++)
        sc_segment_drop_pages(m->in[i].seg);
    m->dropped_at = m->o->pos;
}

/* ---- the min-heap of input indexes (merge_stream_impl.h) ---- */

bool sc__ms_heap_less(const sc__ms_heap *q, uint32_t a, uint32_t b)
{
    int c = sc_slice_cmp(q->key[a], q->key[b]);
    return c < 0 || (c == 0 && a < b);
}

void sc__ms_heap_down(sc__ms_heap *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->len && sc__ms_heap_less(q, q->h[l], q->h[m]))
            m = l;
        if (r < q->len && sc__ms_heap_less(q, q->h[r], q->h[m]))
            m = r;
        if (m == i)
            return;
        uint32_t t = q->h[i];
        q->h[i] = q->h[m];
        q->h[m] = t;
        i = m;
    }
}

void sc__ms_heap_build(sc__ms_heap *q)
{
    for (size_t i = q->len / 2; i-- > 0;)
        sc__ms_heap_down(q, i);
}

static bool is_live(const sc_bitset *live, uint32_t d)
{
    return !live || (d < live->n_bits && sc_bitset_test(live, d));
}

/* ---- postings ---- */

static sc_status merge_terms(sctx *m, const sc_field_info *f0, const uint8_t *norms,
                             uint64_t sec[2 * SC__FIELD_SECTIONS], uint64_t *sum_df,
                             uint64_t *sum_ttf)
{
    size_t n = m->n;
    bool freqs = f0->kind == SC_FIELD_TEXT;
    bool with_pos = freqs && (f0->flags & SC_FIELD_POSITIONS);
    bool has_norms = freqs && (f0->flags & SC_FIELD_NORMS);
    sc_terms_iter *it = calloc(n, sizeof(*it));
    sc_slice *key = calloc(n, sizeof(*key));
    sc__ms_heap q = {.h = malloc(n * sizeof(uint32_t)), .key = key};
    sc_postings p;
    sc_postings_init(&p);
    sc_status st = it && key && q.h ? SC_OK : SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < n; i++) {
        if (!m->fi[i] || !m->fi[i]->n_terms)
            continue;
        bool has;
        st = sc_terms_iter_init(&it[i], m->in[i].seg, m->fi[i]);
        if (st == SC_OK)
            st = sc_terms_next(&it[i], &has);
        if (st == SC_OK && has) {
            key[i] = sc_terms_term(&it[i]);
            q.h[q.len++] = (uint32_t)i;
        }
    }
    sc__ms_heap_build(&q);
    sc__termdict_begin(&m->td, freqs, with_pos);
    uint32_t *group = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!group)
        st = SC_ENOMEM;
    while (st == SC_OK && q.len) {
        /* pop every input on the smallest term; heap order puts them in input order */
        size_t ng = 0;
        sc_slice term = key[q.h[0]];
        while (q.len && sc_slice_cmp(key[q.h[0]], term) == 0) {
            group[ng++] = q.h[0];
            q.h[0] = q.h[--q.len];
            sc__ms_heap_down(&q, 0);
        }
        /* ascending input order = ascending new doc ids */
        for (size_t a = 1; a < ng; a++)
            for (size_t b = a; b > 0 && group[b - 1] > group[b]; b--) {
                uint32_t t = group[b];
                group[b] = group[b - 1];
                group[b - 1] = t;
            }
        sc__postenc_begin(&m->enc, freqs, with_pos, has_norms, norms, m->n_docs);
        for (size_t g = 0; st == SC_OK && g < ng; g++) {
            uint32_t i = group[g];
            const uint32_t *map = m->map[i];
            uint32_t seg_docs = sc_segment_n_docs(m->in[i].seg);
            st = sc_postings_reset(&p, m->in[i].seg, m->fi[i], sc_terms_info(&it[i]),
                                   SC_POSTINGS_FREQS);
            for (uint32_t d = st == SC_OK ? sc_postings_next(&p) : SC_POSTINGS_END;
                 d != SC_POSTINGS_END; d = sc_postings_next(&p)) {
                uint32_t nd = d < seg_docs ? map[d] : UINT32_MAX;
                if (nd == UINT32_MAX)
                    continue;
                uint32_t freq = sc_postings_freq(&p);
                if (with_pos) {
                    if (sc_vec_reserve(&m->pos, freq) != SC_OK) {
                        st = SC_ENOMEM;
                        break;
                    }
                    if (sc_postings_positions(&p, m->pos.ptr, freq) != freq) {
                        st = SC_ECORRUPT;
                        break;
                    }
                }
                sc__postenc_add(&m->enc, nd, freq, m->pos.ptr);
                sc_bitset_set(&m->has, nd);
                spill_postings(m);
            }
            if (st == SC_OK)
                st = sc_postings_status(&p);
        }
        sc__postenc_finish(&m->enc);
        if (st == SC_OK)
            st = m->enc.st;
        if (st == SC_OK && m->enc.df) {
            /* skip ++ blk (spilled part first) ++ pos (likewise) */
            uint64_t post_off = m->o->pos;
            sc__out_write(m->o, m->enc.skip.ptr, m->enc.skip.len);
            sc__spill_copy(&m->sp_blk, m->o);
            sc__out_write(m->o, m->enc.blk.ptr, m->enc.blk.len);
            uint64_t pos_off = m->o->pos;
            sc__spill_copy(&m->sp_pos, m->o);
            sc__out_write(m->o, m->enc.pos.ptr, m->enc.pos.len);
            sc__termdict_add(&m->td, term, m->enc.df, m->enc.ttf, post_off, pos_off);
            if (m->td.tdata.len > m->part) {
                m->td.tdata_base += m->td.tdata.len;
                sc__spill_buf(&m->sp_td, &m->td.tdata);
            }
            *sum_df += m->enc.df;
            *sum_ttf += m->enc.ttf;
            sc__ms_drop_input_pages(m, false);
        }
        /* advance the group's iterators (the term slice is dead from here) */
        for (size_t g = 0; st == SC_OK && g < ng; g++) {
            uint32_t i = group[g];
            bool has;
            st = sc_terms_next(&it[i], &has);
            if (st == SC_OK && has) {
                key[i] = sc_terms_term(&it[i]);
                q.h[q.len++] = i;
                for (size_t c = q.len - 1; c > 0 && sc__ms_heap_less(&q, q.h[c], q.h[(c - 1) / 2]);
                     c = (c - 1) / 2) {
                    uint32_t t = q.h[c];
                    q.h[c] = q.h[(c - 1) / 2];
                    q.h[(c - 1) / 2] = t;
                }
            }
        }
    }
    if (st == SC_OK)
        st = m->td.st;
    if (st == SC_OK)
        st = m->sp_blk.st != SC_OK   ? m->sp_blk.st
             : m->sp_pos.st != SC_OK ? m->sp_pos.st
                                     : m->sp_td.st;
    sec[0] = m->o->pos;
    sec[1] = m->td.tindex.len;
    sc__out_write(m->o, m->td.tindex.ptr, m->td.tindex.len);
    sec[2] = m->o->pos;
    sec[3] = m->td.tdata_base + m->td.tdata.len;
    sc__spill_copy(&m->sp_td, m->o);
    sc__out_write(m->o, m->td.tdata.ptr, m->td.tdata.len);
    free(group);
    for (size_t i = 0; it && i < n; i++)
        sc_terms_iter_fini(&it[i]);
    free(it);
    free(key);
    free(q.h);
    return st;
}

/* ---- points: the live docs' points of every input, rebuilt into one tree ---- */

static sc_status merge_points(sctx *m, bool geo, uint64_t *off, uint64_t *len, bool *any)
{
    SC_VEC(int64_t) vals = {0};
    SC_VEC(int32_t) lat = {0}, lon = {0};
    SC_VEC(uint32_t) docs = {0};
    uint32_t *ld = NULL;
    int64_t *lv = NULL;
    int32_t *la = NULL, *lo = NULL;
    sc_status st = SC_OK;
    for (size_t i = 0; st == SC_OK && i < m->n; i++) {
        const sc_field_info *f = m->fi[i];
        if (!f || !f->points_len)
            continue;
        const sc_segment *seg = m->in[i].seg;
        sc_bkd t;
        sc_bkd2 t2;
        uint32_t cap, n_leaves;
        if (geo) {
            st = sc_segment_points2(seg, f, &t2);
            cap = t2.leaf_size;
            n_leaves = st == SC_OK ? sc_bkd2_n_leaves(&t2) : 0;
        } else {
            st = sc_segment_points(seg, f, &t);
            cap = t.leaf_size ? t.leaf_size : SC_BKD_LEAF_SIZE;
            n_leaves = st == SC_OK ? sc_bkd_n_leaves(&t) : 0;
        }
        if (st != SC_OK)
            break;
        free(ld);
        free(lv);
        free(la);
        free(lo);
        ld = malloc(cap * sizeof(uint32_t));
        lv = malloc(cap * sizeof(int64_t));
        la = malloc(cap * sizeof(int32_t));
        lo = malloc(cap * sizeof(int32_t));
        if (!ld || !lv || !la || !lo)
            st = SC_ENOMEM;
        for (uint32_t leaf = 0; st == SC_OK && leaf < n_leaves; leaf++) {
            uint32_t n;
            uint8_t kind;
            st = geo ? sc_bkd2_leaf_read(&t2, leaf, ld, la, lo, &n)
                     : sc_bkd_leaf_read(&t, leaf, ld, lv, &n, &kind);
            for (uint32_t k = 0; st == SC_OK && k < n; k++) {
                uint32_t nd = ld[k] < sc_segment_n_docs(seg) ? m->map[i][ld[k]] : UINT32_MAX;
                if (nd == UINT32_MAX)
                    continue;
                sc_bitset_set(&m->has, nd);
                if (sc_vec_push(&docs, nd) != SC_OK ||
                    (geo ? sc_vec_push(&lat, la[k]) != SC_OK || sc_vec_push(&lon, lo[k]) != SC_OK
                         : sc_vec_push(&vals, lv[k]) != SC_OK))
                    st = SC_ENOMEM;
            }
        }
    }
    free(ld);
    free(lv);
    free(la);
    free(lo);
    *any = docs.len > 0;
    if (st == SC_OK && docs.len) {
        sc_buf out = {0};
        st = geo ? sc_bkd2_write(lat.ptr, lon.ptr, docs.ptr, docs.len, m->n_docs, 0, &out)
                 : sc_bkd_write(vals.ptr, docs.ptr, docs.len, m->n_docs, 0, &out);
        sc_vec_free(&vals);
        sc_vec_free(&lat);
        sc_vec_free(&lon);
        sc_vec_free(&docs);
        if (st == SC_OK) {
            *off = m->o->pos;
            *len = out.len;
            sc__out_write(m->o, out.ptr, out.len);
        }
        sc_vec_free(&out);
    }
    sc_vec_free(&vals);
    sc_vec_free(&lat);
    sc_vec_free(&lon);
    sc_vec_free(&docs);
    return st;
}

/* ---- one field ---- */

/* ---- dense vectors: read in place from the inputs' mappings ---- */

/* The live docs' vectors in merged order, written from the inputs' mapped sections (one
 * pointer per vector, not a copy), with the graph built for the merged segment: seeded with
 * the largest input graph whose input has no deletes (same parameters), as merge.c does, so
 * only the other inputs' vectors are inserted. Memory: 12 bytes per merged vector (new doc,
 * pointer) plus the graph being built (vecfield.h); the vectors stay in the page cache. */
static sc_status merge_vectors(sctx *m, uint64_t *off, uint64_t *len)
{
    const sc_vec_params *p = NULL;
    uint64_t total = 0;
    for (size_t i = 0; i < m->n; i++) {
        sc_vec_field vf;
        if (!m->fi[i] || !m->fi[i]->points_len)
            continue;
        SC_TRY(sc_segment_vectors(m->in[i].seg, m->fi[i], &vf));
        total += vf.n;
    }
    if (total == 0)
        return SC_OK;
    if (total >= UINT32_MAX)
        return SC_ELIMIT;
    uint32_t *docs = malloc(total * sizeof(uint32_t));
    const float **ptrs = malloc(total * sizeof(*ptrs));
    sc_vec_params vp;
    sc_hnsw_graph seed = {0};
    bool seeded = false;
    uint32_t seed_base = 0, n = 0;
    sc_status st = docs && ptrs ? SC_OK : SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < m->n; i++) {
        sc_vec_field vf;
        if (!m->fi[i] || !m->fi[i]->points_len)
            continue;
        st = sc_segment_vectors(m->in[i].seg, m->fi[i], &vf);
        if (st != SC_OK)
            break;
        if (p && memcmp(p, &vf.p, sizeof(vf.p)) != 0) {
            st = SC_EINVAL; /* as the builder refuses vectors of other parameters */
            break;
        }
        if (!p) {
            vp = vf.p;
            p = &vp;
        }
        uint32_t base = n, seg_docs = sc_segment_n_docs(m->in[i].seg);
        bool no_deletes = true;
        for (uint32_t d = 0; d < seg_docs; d++)
            no_deletes &= m->map[i][d] != UINT32_MAX;
        for (uint32_t k = 0; k < vf.n; k++) {
            uint32_t nd = vf.docs[k] < seg_docs ? m->map[i][vf.docs[k]] : UINT32_MAX;
            if (nd == UINT32_MAX)
                continue;
            docs[n] = nd;
            ptrs[n++] = vf.vecs + (size_t)k * vf.p.dims;
            sc_bitset_set(&m->has, nd);
        }
        if (vf.has_graph && no_deletes && (!seeded || seed.n < vf.n)) {
            seed = vf.graph;
            seed_base = base;
            seeded = true;
        }
    }
    if (st == SC_OK && n > 0) {
        static const uint8_t zeros[64] = {0};
        if (m->o->pos % 64)
            sc__out_write(m->o, zeros, 64 - m->o->pos % 64);
        *off = m->o->pos;
        st = sc__vec_section_stream(p, docs, NULL, ptrs, n, seeded ? &seed : NULL, seed_base, m->o,
                                    len);
    }
    free(docs);
    free(ptrs);
    return st;
}

static sc_status merge_field(sctx *m, sc_slice name)
{
    const sc_field_info *f0 = NULL;
    for (size_t i = 0; i < m->n; i++) {
        m->fi[i] = sc_segment_field(m->in[i].seg, name);
        if (!m->fi[i])
            continue;
        if (!f0)
            f0 = m->fi[i];
        else if (m->fi[i]->kind != f0->kind || (m->fi[i]->flags & 0xffu) != (f0->flags & 0xffu))
            return SC_EINVAL;
    }
    if (!f0) /* the name came from an input's field table: cannot happen */
        return SC_EINVAL;
    sc_field_kind kind = f0->kind;
    uint32_t flags = f0->flags & 0xffu;
    sc_bitset_clear_all(&m->has);
    uint64_t sec[2 * SC__FIELD_SECTIONS] = {0};
    uint64_t sum_df = 0, sum_ttf = 0;
    uint8_t *norms = NULL;
    sc_status st = SC_OK;
    if (kind == SC_FIELD_TEXT && (flags & SC_FIELD_NORMS)) {
        norms = calloc(m->n_docs ? m->n_docs : 1, 1);
        if (!norms)
            return SC_ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
            const uint8_t *in = m->fi[i] ? sc_segment_norms(m->in[i].seg, m->fi[i]) : NULL;
            uint32_t nd = sc_segment_n_docs(m->in[i].seg);
            for (uint32_t d = 0; in && d < nd; d++)
                if (m->map[i][d] != UINT32_MAX)
                    norms[m->map[i][d]] = in[d];
        }
    }
    st = merge_terms(m, f0, norms, sec, &sum_df, &sum_ttf);
    if (st == SC_OK && norms) {
        sec[4] = m->o->pos;
        sec[5] = m->n_docs;
        sc__out_write(m->o, norms, m->n_docs);
    }
    free(norms);
    if (st == SC_OK && kind == SC_FIELD_NUMERIC && (flags & SC_FIELD_DOCVALUES))
        st = sc__ms_merge_dvn(m, &sec[6], &sec[7]);
    if (st == SC_OK && kind == SC_FIELD_KEYWORD && (flags & SC_FIELD_DOCVALUES))
        st = sc__ms_merge_dvs(m, &sec[8], &sec[9]);
    if (st == SC_OK && kind == SC_FIELD_VECTOR)
        st = merge_vectors(m, &sec[10], &sec[11]);
    if (st == SC_OK && kind == SC_FIELD_NUMERIC && (flags & SC_FIELD_INDEXED)) {
        bool any = false;
        st = merge_points(m, (flags & SC_FIELD_GEO) != 0, &sec[10], &sec[11], &any);
        if (any)
            flags |= SC_FIELD_POINTS;
    }
    SC_TRY(st);
    uint64_t doc_count = sc_bitset_count(&m->has);
    sc__buf_u16(&m->ft, (uint16_t)name.len, &m->st);
    sc__buf_put(&m->ft, name.ptr, name.len, &m->st);
    sc__buf_u8(&m->ft, (uint8_t)kind, &m->st);
    sc__buf_u8(&m->ft, 0, &m->st);
    sc__buf_u32(&m->ft, flags, &m->st);
    sc__buf_u32(&m->ft, (uint32_t)doc_count, &m->st);
    sc__buf_u64(&m->ft, kind == SC_FIELD_TEXT ? sum_ttf : sum_df, &m->st);
    sc__buf_u64(&m->ft, sum_df, &m->st);
    sc__buf_u64(&m->ft, m->td.count, &m->st);
    for (int i = 0; i < 2 * SC__FIELD_SECTIONS; i++)
        sc__buf_u64(&m->ft, sec[i], &m->st);
    m->n_fields++;
    return m->st;
}

/* ---- the whole segment ---- */

bool sc__merge_can_stream(const sc_merge_input *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const sc_segment *seg = in[i].seg;
        if (!sc_segment_n_docs(seg))
            continue;
        const sc_field_info *id = sc_segment_field(seg, sc_slice_cstr("_id"));
        if (!id || id->kind != SC_FIELD_KEYWORD || !(id->flags & SC_FIELD_DOCVALUES) ||
            !id->dvs_len || id->doc_count != sc_segment_n_docs(seg))
            return false;
    }
    return true;
}

static int cmp_slice(const void *a, const void *b)
{
    return sc_slice_cmp(*(const sc_slice *)a, *(const sc_slice *)b);
}

static sc_status stream_body(sctx *m, uint64_t foot[4])
{
    /* the union of the inputs' field names, in byte order */
    SC_VEC(sc_slice) names = {0};
    sc_status st = SC_OK;
    for (size_t i = 0; st == SC_OK && i < m->n; i++)
        for (size_t k = 0; st == SC_OK && k < sc_segment_n_fields(m->in[i].seg); k++)
            if (sc_vec_push(&names, sc_segment_field_at(m->in[i].seg, k)->name) != SC_OK)
                st = SC_ENOMEM;
    if (names.len > 1)
        qsort(names.ptr, names.len, sizeof(sc_slice), cmp_slice);
    sc__buf_u32(&m->ft, 0, &m->st);
    for (size_t k = 0; st == SC_OK && k < names.len; k++) {
        if (k > 0 && sc_slice_eq(names.ptr[k - 1], names.ptr[k]))
            continue;
        st = merge_field(m, names.ptr[k]);
        if (st == SC_OK)
            st = m->o->st;
        /* the field's input pages were read once: keep them out of the process's RSS */
        sc__ms_drop_input_pages(m, true);
    }
    sc_vec_free(&names);
    if (st == SC_OK)
        st = sc__ms_merge_stored(m, &foot[2], &foot[3]);
    if (st == SC_OK && m->st == SC_OK) {
        sc__st32(m->ft.ptr, m->n_fields);
        foot[0] = m->o->pos;
        foot[1] = m->ft.len;
        sc__out_write(m->o, m->ft.ptr, m->ft.len);
    }
    return st != SC_OK ? st : m->st;
}

/* A spillable buffer's share of the memory limit: what the per-doc tables leave, over 8 (three
 * buffers, each up to twice its share as it grows geometrically, and slack for the inputs'
 * cursors, the stored-field compressor and the output's buffer). */
static uint64_t part_bytes(const sc_merge_input *in, size_t n, uint64_t n_docs, uint64_t limit)
{
    uint64_t in_docs = 0;
    for (size_t i = 0; i < n; i++)
        in_docs += sc_segment_n_docs(in[i].seg) + 1;
    /* the doc map and one sorted-set field's ordinal maps (4 + 4 bytes per input doc, as for
     * `_id`), one field's norms and the docs-with-value bitset */
    uint64_t fixed = 8 * in_docs + n_docs + n_docs / 8;
    uint64_t part = limit > fixed ? (limit - fixed) / 8 : 0;
    return part < SPILL_MIN_PART ? SPILL_MIN_PART : part;
}

sc_status sc__segment_merge_stream(const sc_merge_input *in, size_t n, const char *dir,
                                   const char *name, sc_merge_options *opts,
                                   sc_segment_write_info *info)
{
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > SC_SEGMENT_NAME_MAX || name[0] == '.' || strchr(name, '/'))
        return SC_EINVAL;
    sctx m;
    memset(&m, 0, sizeof(m));
    m.in = in;
    m.n = n;
    m.map = calloc(n ? n : 1, sizeof(uint32_t *));
    m.fi = calloc(n ? n : 1, sizeof(*m.fi));
    sc_status st = m.map && m.fi ? SC_OK : SC_ENOMEM;
    uint64_t next = 0;
    for (size_t i = 0; st == SC_OK && i < n; i++) {
        uint32_t nd = sc_segment_n_docs(in[i].seg);
        m.map[i] = malloc(((size_t)nd + 1) * sizeof(uint32_t));
        if (!m.map[i]) {
            st = SC_ENOMEM;
            break;
        }
        for (uint32_t d = 0; d < nd; d++)
            m.map[i][d] = is_live(in[i].live, d) ? (uint32_t)next++ : UINT32_MAX;
    }
    if (st == SC_OK && next >= UINT32_MAX)
        st = SC_ELIMIT;
    m.n_docs = (uint32_t)next;
    uint64_t limit = opts->memory_bytes ? opts->memory_bytes : SC_MERGE_MEMORY_DEFAULT;
    m.part = part_bytes(in, n, next, limit);
    sc__spill_init(&m.sp_blk, dir, name, "postings", &opts->spilled_bytes);
    sc__spill_init(&m.sp_pos, dir, name, "positions", &opts->spilled_bytes);
    sc__spill_init(&m.sp_td, dir, name, "terms", &opts->spilled_bytes);
    if (st == SC_OK)
        st = sc_bitset_init(&m.has, m.n_docs);
    sc__out o;
    bool opened = false;
    if (st == SC_OK) {
        char file[SC_SEGMENT_NAME_MAX + 8];
        snprintf(file, sizeof(file), "%s%s", name, SC_SEGMENT_SUFFIX);
        st = sc__out_open(&o, dir, file);
        opened = st == SC_OK;
        m.o = &o;
    }
    uint64_t foot4[4] = {0};
    if (st == SC_OK) {
        uint8_t hdr[SC__SEG_HEADER_BYTES] = {0};
        memcpy(hdr, SC__SEG_MAGIC, 8);
        sc__st32(hdr + 8, SC__SEG_VERSION);
        sc__st32(hdr + 12, m.n_docs);
        sc__out_write(&o, hdr, sizeof(hdr));
        st = stream_body(&m, foot4);
    }
    if (st == SC_OK) {
        uint8_t foot[SC__SEG_FOOTER_BYTES - 8];
        for (int i = 0; i < 4; i++)
            sc__st64(foot + 8 * i, foot4[i]);
        memset(foot + 32, 0, 8);
        memcpy(foot + 32, SC__SEG_END_MAGIC, 8);
        sc__out_write(&o, foot, sizeof(foot));
    }
    for (size_t i = 0; m.map && i < n; i++)
        free(m.map[i]);
    free(m.map);
    free(m.fi);
    sc_bitset_fini(&m.has);
    sc__postenc_fini(&m.enc);
    sc__termdict_fini(&m.td);
    sc_vec_free(&m.pos);
    sc_vec_free(&m.vals);
    sc_vec_free(&m.ords);
    sc_vec_free(&m.ft);
    sc__spill_fini(&m.sp_blk);
    sc__spill_fini(&m.sp_pos);
    sc__spill_fini(&m.sp_td);
    if (!opened)
        return st;
    if (st != SC_OK) {
        sc__out_abort(&o);
        return st;
    }
    uint64_t size = o.pos + 8, ck = 0;
    SC_TRY(sc__out_finish(&o, dir, &ck));
    if (info) {
        info->n_docs = m.n_docs;
        info->size_bytes = size;
        info->checksum = ck;
    }
    return SC_OK;
}
