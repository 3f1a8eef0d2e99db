/* Segment merge (merge.h): rebuilds the live documents of N segments, in input order, into a
 * builder (stored fields first, which fixes the new ids and fills the `_id` field's sorted-set
 * doc values; then per field norms, postings with positions, numeric and sorted-set doc values)
 * and writes it as one new segment. */
#include "index/merge.h"

#include <stdlib.h>
#include <string.h>

#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/builder_impl.h"
#include "index/docvalues.h"
#include "index/internal.h"
#include "index/merge_impl.h"
#include "index/postings.h"
#include "index/stored.h"
#include "index/terms.h"
#include "index/vecfield.h"

typedef struct mctx {
    sc_segment_builder *b;
    uint32_t *map; /* old doc -> new doc or UINT32_MAX, for the input being merged */
    SC_VEC(uint32_t) pos;
    SC_VEC(int64_t) vals;
    SC_VEC(uint64_t) ords;
    bool no_deletes;               /* the input being merged has no deleted docs */
    SC_VEC(sc_hnsw_graph *) seeds; /* graphs lent to the builder (freed after the write) */
} mctx;

static bool is_live(const sc_bitset *live, uint32_t d)
{
    return !live || (d < live->n_bits && sc_bitset_test(live, d));
}

static sc_status merge_postings(mctx *m, const sc_segment *seg, const sc_field_info *f,
                                sc__bfield *bf)
{
    sc_terms_iter it;
    memset(&it, 0, sizeof(it));
    sc_postings p;
    sc_postings_init(&p);
    sc_status st = sc_terms_iter_init(&it, seg, f);
    bool positions = f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_POSITIONS);
    while (st == SC_OK) {
        bool has;
        st = sc_terms_next(&it, &has);
        if (st != SC_OK || !has)
            break;
        st = sc_postings_reset(&p, seg, f, sc_terms_info(&it), SC_POSTINGS_FREQS);
        for (uint32_t d = sc_postings_next(&p); st == SC_OK && d != SC_POSTINGS_END;
             d = sc_postings_next(&p)) {
            uint32_t nd = m->map[d];
            if (nd == UINT32_MAX)
                continue;
            uint32_t freq = sc_postings_freq(&p);
            size_t np = 0;
            if (positions) {
                if (sc_vec_reserve(&m->pos, freq) != SC_OK) {
                    st = SC_ENOMEM;
                    break;
                }
                np = sc_postings_positions(&p, m->pos.ptr, freq);
            }
            st = sc__builder_posting(m->b, bf, sc_terms_term(&it), nd, freq, m->pos.ptr, np);
            if (st == SC_OK)
                st = sc__builder_mark_doc(m->b, bf, nd);
        }
        if (st == SC_OK)
            st = sc_postings_status(&p);
    }
    sc_terms_iter_fini(&it);
    return st;
}

static sc_status merge_points(mctx *m, const sc_segment *seg, const sc_field_info *f,
                              sc__bfield *bf)
{
    sc_bkd t;
    SC_TRY(sc_segment_points(seg, f, &t));
    uint32_t cap = t.leaf_size ? t.leaf_size : SC_BKD_LEAF_SIZE;
    uint32_t *docs = malloc(cap * sizeof(uint32_t));
    int64_t *vals = malloc(cap * sizeof(int64_t));
    sc_status st = docs && vals ? SC_OK : SC_ENOMEM;
    for (uint32_t leaf = 0; st == SC_OK && leaf < sc_bkd_n_leaves(&t); leaf++) {
        uint32_t n;
        uint8_t kind;
        st = sc_bkd_leaf_read(&t, leaf, docs, vals, &n, &kind);
        for (uint32_t i = 0; st == SC_OK && i < n; i++) {
            uint32_t nd = docs[i] < sc_segment_n_docs(seg) ? m->map[docs[i]] : UINT32_MAX;
            if (nd == UINT32_MAX)
                continue;
            st = sc__builder_point(m->b, bf, nd, vals[i]);
            if (st == SC_OK)
                st = sc__builder_mark_doc(m->b, bf, nd);
        }
    }
    free(docs);
    free(vals);
    return st;
}

/* Geo points: re-read every 2-D leaf and add the points back packed as the builder holds them
 * (doc.h, SC_FIELD_GEO). */
static sc_status merge_points2(mctx *m, const sc_segment *seg, const sc_field_info *f,
                               sc__bfield *bf)
{
    sc_bkd2 t;
    SC_TRY(sc_segment_points2(seg, f, &t));
    uint32_t cap = t.leaf_size;
    uint32_t *docs = malloc(cap * sizeof(uint32_t));
    int32_t *lat = malloc(cap * sizeof(int32_t)), *lon = malloc(cap * sizeof(int32_t));
    sc_status st = docs && lat && lon ? SC_OK : SC_ENOMEM;
    for (uint32_t leaf = 0; st == SC_OK && leaf < sc_bkd2_n_leaves(&t); leaf++) {
        uint32_t n;
        st = sc_bkd2_leaf_read(&t, leaf, docs, lat, lon, &n);
        for (uint32_t i = 0; st == SC_OK && i < n; i++) {
            uint32_t nd = docs[i] < sc_segment_n_docs(seg) ? m->map[docs[i]] : UINT32_MAX;
            if (nd == UINT32_MAX)
                continue;
            int64_t v = (int64_t)(((uint64_t)(uint32_t)lat[i] << 32) | (uint32_t)lon[i]);
            st = sc__builder_point(m->b, bf, nd, v);
            if (st == SC_OK)
                st = sc__builder_mark_doc(m->b, bf, nd);
        }
    }
    free(docs);
    free(lat);
    free(lon);
    return st;
}

/* Vectors of the live docs in ordinal (= doc) order. The largest input graph without deletes
 * (same params) is lent to the builder as the seed: the write then inserts only the other
 * inputs' vectors into it (Lucene's IncrementalHnswGraphMerger). */
static sc_status merge_vectors(mctx *m, const sc_segment *seg, const sc_field_info *f,
                               sc__bfield *bf)
{
    sc_vec_field vf;
    SC_TRY(sc_segment_vectors(seg, f, &vf));
    uint32_t base = (uint32_t)bf->vdocs.len;
    bool params_same = bf->vp.dims == 0 || memcmp(&bf->vp, &vf.p, sizeof(vf.p)) == 0;
    for (uint32_t i = 0; i < vf.n; i++) {
        uint32_t nd = m->map[vf.docs[i]];
        if (nd != UINT32_MAX)
            SC_TRY(sc__builder_vector(m->b, bf, nd, &vf.p, vf.vecs + (size_t)i * vf.p.dims));
    }
    if (vf.has_graph && m->no_deletes && params_same && (!bf->seed || bf->seed->n < vf.n)) {
        sc_hnsw_graph *g = malloc(sizeof(*g));
        if (!g || sc_vec_push(&m->seeds, g) != SC_OK) {
            free(g);
            return SC_ENOMEM;
        }
        *g = vf.graph;
        bf->seed = g;
        bf->seed_base = base;
    }
    return SC_OK;
}

static bool is_id_field(const sc_field_info *f)
{
    return f->kind == SC_FIELD_KEYWORD && sc_slice_eq(f->name, sc_slice_cstr("_id"));
}

static sc_status merge_field(mctx *m, const sc_segment *seg, const sc_field_info *f)
{
    sc__bfield *bf;
    bool id = is_id_field(f);
    /* `_id` always gets doc values in a merged segment (filled from the stored ids in
     * merge_all), also when an input was written before `_id` had them. */
    uint32_t flags = (f->flags & 0xffu) | (id ? SC_FIELD_DOCVALUES : 0);
    SC_TRY(sc__builder_field(m->b, f->name, f->kind, flags, &bf));
    uint32_t n = sc_segment_n_docs(seg);
    const uint8_t *norms = sc_segment_norms(seg, f);
    if (norms)
        for (uint32_t d = 0; d < n; d++)
            if (m->map[d] != UINT32_MAX && norms[d])
                SC_TRY(sc__builder_norm(m->b, bf, m->map[d], norms[d]));
    if (f->n_terms)
        SC_TRY(merge_postings(m, seg, f, bf));
    sc_dv_numeric dvn;
    if (f->dvn_len && sc_dv_numeric_open(seg, f, &dvn) == SC_OK) {
        for (uint32_t d = 0; d < n; d++) {
            if (m->map[d] == UINT32_MAX)
                continue;
            uint32_t c = sc_dv_numeric_count(&dvn, d);
            SC_TRY(sc_vec_reserve(&m->vals, c));
            size_t got = sc_dv_numeric_get(&dvn, d, m->vals.ptr, c);
            for (size_t i = 0; i < got; i++)
                SC_TRY(sc__builder_numeric(m->b, bf, m->map[d], m->vals.ptr[i]));
            if (got)
                SC_TRY(sc__builder_mark_doc(m->b, bf, m->map[d]));
        }
    }
    if (f->kind == SC_FIELD_VECTOR) {
        if (f->points_len)
            SC_TRY(merge_vectors(m, seg, f, bf));
    } else if (f->points_len) {
        SC_TRY(f->flags & SC_FIELD_GEO ? merge_points2(m, seg, f, bf)
                                       : merge_points(m, seg, f, bf));
    }
    sc_dv_sorted_set dvs;
    if (!id && f->dvs_len && sc_dv_sorted_set_open(seg, f, &dvs) == SC_OK) {
        for (uint32_t d = 0; d < n; d++) {
            if (m->map[d] == UINT32_MAX)
                continue;
            uint32_t c = sc_dv_sorted_set_count(&dvs, d);
            SC_TRY(sc_vec_reserve(&m->ords, c));
            size_t got = sc_dv_sorted_set_ords(&dvs, d, m->ords.ptr, c);
            for (size_t i = 0; i < got; i++)
                SC_TRY(sc__builder_ord_term(m->b, bf, m->map[d],
                                            sc_dv_sorted_set_term(&dvs, m->ords.ptr[i])));
            if (got)
                SC_TRY(sc__builder_mark_doc(m->b, bf, m->map[d]));
        }
    }
    return SC_OK;
}

static sc_status merge_all(mctx *m, const sc_merge_input *in, size_t n)
{
    /* stored fields first: they assign the new ids densely in input order; each doc's _id
     * also goes into the `_id` field's sorted-set doc values (fetch reads ids from there) */
    sc__bfield *idf = NULL;
    uint32_t new_doc = 0;
    for (size_t i = 0; i < n; i++) {
        sc_stored_reader r;
        sc_stored_reader_init(&r, in[i].seg);
        uint32_t nd = sc_segment_n_docs(in[i].seg);
        sc_status st = SC_OK;
        for (uint32_t d = 0; d < nd && st == SC_OK; d++) {
            if (!is_live(in[i].live, d))
                continue;
            sc_slice id, src;
            st = sc_stored_get(&r, d, &id, &src);
            if (st == SC_OK)
                st = sc__builder_stored(m->b, id, src);
            if (st == SC_OK && id.len && !idf)
                st = sc__builder_field(m->b, sc_slice_cstr("_id"), SC_FIELD_KEYWORD,
                                       SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, &idf);
            if (st == SC_OK && id.len)
                st = sc__builder_ord_term(m->b, idf, new_doc, id);
            if (st == SC_OK && id.len)
                st = sc__builder_mark_doc(m->b, idf, new_doc);
            new_doc++;
        }
        sc_stored_reader_fini(&r);
        SC_TRY(st);
    }
    uint32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t nd = sc_segment_n_docs(in[i].seg);
        free(m->map);
        m->map = malloc(((size_t)nd + 1) * sizeof(uint32_t));
        if (!m->map)
            return SC_ENOMEM;
        m->no_deletes = true;
        for (uint32_t d = 0; d < nd; d++) {
            m->map[d] = is_live(in[i].live, d) ? next++ : UINT32_MAX;
            m->no_deletes &= m->map[d] != UINT32_MAX;
        }
        for (size_t k = 0; k < sc_segment_n_fields(in[i].seg); k++)
            SC_TRY(merge_field(m, in[i].seg, sc_segment_field_at(in[i].seg, k)));
    }
    return SC_OK;
}

sc_status sc_segment_merge(const sc_merge_input *in, size_t n, const char *dir, const char *name,
                           sc_segment_write_info *info)
{
    return sc_segment_merge_opts(in, n, dir, name, NULL, info);
}

sc_status sc_segment_merge_opts(const sc_merge_input *in, size_t n, const char *dir,
                                const char *name, sc_merge_options *opts,
                                sc_segment_write_info *info)
{
    sc_merge_options dflt = {0};
    if (!opts)
        opts = &dflt;
    opts->spilled_bytes = 0;
    if (sc__merge_can_stream(in, n))
        return sc__segment_merge_stream(in, n, dir, name, opts, info);
    return sc__segment_merge_rebuild(in, n, dir, name, info);
}

sc_status sc__segment_merge_rebuild(const sc_merge_input *in, size_t n, const char *dir,
                                    const char *name, sc_segment_write_info *info)
{
    mctx m;
    memset(&m, 0, sizeof(m));
    SC_TRY(sc_segment_builder_new(&m.b));
    sc_status st = merge_all(&m, in, n);
    if (st == SC_OK)
        st = sc_segment_builder_write(m.b, dir, name, info);
    free(m.map);
    sc_vec_free(&m.pos);
    sc_vec_free(&m.vals);
    sc_vec_free(&m.ords);
    for (size_t i = 0; i < m.seeds.len; i++)
        free(m.seeds.ptr[i]);
    sc_vec_free(&m.seeds);
    sc_segment_builder_free(m.b);
    return st;
}
