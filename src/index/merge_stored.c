/* The streaming merge's stored fields (merge_stream_impl.h): blocks whose docs are all live are
 * copied compressed when no stored dictionary is involved (stored_comp.c); the rest are
 * re-packed and recompressed, with the merged segment's own dictionary when it has one. */
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "index/merge_stream_impl.h"
#include "index/segment_impl.h"
#include "index/stored.h"

typedef struct stw {
    sc__out *o;
    sc__stored_comp sc;
    sc_buf raw;     /* pending docs (re-packed) */
    uint32_t first; /* new id of the first pending doc */
    uint32_t n;     /* pending docs */
    sc_buf comp;
    sc_buf idx;
    uint32_t n_blocks;
    sc_status st;
} stw;

static void st_entry(stw *w, uint32_t first, uint32_t n, uint64_t off, uint32_t cl, uint32_t raw)
{
    sc__buf_u32(&w->idx, first, &w->st);
    sc__buf_u32(&w->idx, n, &w->st);
    sc__buf_u64(&w->idx, off, &w->st);
    sc__buf_u32(&w->idx, cl, &w->st);
    sc__buf_u32(&w->idx, raw, &w->st);
    w->n_blocks++;
}

static void st_flush(stw *w)
{
    if (!w->n || w->st != SC_OK)
        return;
    sc_status st = sc__stored_comp_block(&w->sc, w->raw.ptr, w->raw.len, &w->comp);
    if (st != SC_OK) {
        w->st = st;
        return;
    }
    st_entry(w, w->first, w->n, w->o->pos, (uint32_t)w->comp.len, (uint32_t)w->raw.len);
    sc__out_write(w->o, w->comp.ptr, w->comp.len);
    sc_vec_clear(&w->raw);
    w->n = 0;
}

/* The raw entry of a doc as a stored block holds it. */
static void st_pack(sc_buf *b, sc_slice id, sc_slice src, sc_status *st)
{
    sc__buf_varint(b, id.len, st);
    sc__buf_varint(b, src.len, st);
    sc__buf_put(b, id.ptr, id.len, st);
    sc__buf_put(b, src.ptr, src.len, st);
}

/* The merged segment's compressor: the raw size is estimated from the inputs' block index
 * (deleted docs included), the dictionary sample is every step-th doc of the output, as the
 * builder's writer takes it. */
static sc_status st_comp(sctx *m, sc__stored_comp *c)
{
    uint64_t raw = 0;
    for (size_t i = 0; i < m->n; i++) {
        const sc_segment *seg = m->in[i].seg;
        for (uint32_t k = 0; k < seg->n_stored_blocks; k++)
            raw += sc__ld32(seg->stored_idx + (size_t)k * SC__STORED_ENTRY_BYTES + 20);
    }
    uint32_t step = sc__stored_sample_step(raw, m->n_docs);
    if (!step)
        return sc__stored_comp_init(c, NULL, NULL, 0, raw);
    SC_VEC(size_t) sizes = {0};
    sc_buf samples = {0};
    sc_status st = SC_OK;
    for (size_t i = 0; i < m->n && st == SC_OK; i++) {
        const sc_segment *seg = m->in[i].seg;
        sc_stored_reader r;
        sc_stored_reader_init(&r, seg);
        for (uint32_t d = 0; d < seg->n_docs && st == SC_OK; d++) {
            uint32_t nd = m->map[i][d];
            if (nd == UINT32_MAX || nd % step)
                continue;
            sc_slice id, src;
            st = sc_stored_get(&r, d, &id, &src);
            size_t before = samples.len;
            if (st == SC_OK)
                st_pack(&samples, id, src, &st);
            if (st == SC_OK && sc_vec_push(&sizes, samples.len - before) != SC_OK)
                st = SC_ENOMEM;
        }
        sc_stored_reader_fini(&r);
        sc_segment_drop_pages(seg);
    }
    if (st == SC_OK)
        st = sc__stored_comp_init(c, samples.ptr, sizes.ptr, sizes.len, raw);
    sc_vec_free(&sizes);
    sc_vec_free(&samples);
    return st;
}

sc_status sc__ms_merge_stored(sctx *m, uint64_t *idx_off, uint64_t *idx_len)
{
    stw w = {.o = m->o};
    w.st = st_comp(m, &w.sc);
    sc__buf_u32(&w.idx, 0, &w.st);
    for (size_t i = 0; i < m->n && w.st == SC_OK; i++) {
        const sc_segment *seg = m->in[i].seg;
        const uint32_t *map = m->map[i];
        uint32_t nd = seg->n_docs;
        sc_stored_reader r;
        sc_stored_reader_init(&r, seg);
        for (uint32_t k = 0; k < seg->n_stored_blocks && w.st == SC_OK; k++) {
            const uint8_t *e = seg->stored_idx + (size_t)k * SC__STORED_ENTRY_BYTES;
            uint32_t first = sc__ld32(e), n = sc__ld32(e + 4);
            if (first > nd || n > nd - first) {
                w.st = SC_ECORRUPT;
                break;
            }
            bool all_live = n > 0;
            for (uint32_t d = first; all_live && d < first + n; d++)
                all_live = map[d] != UINT32_MAX;
            if (all_live && !w.sc.cdict && !seg->stored_dict_len) {
                /* the whole block survives and no dictionary is involved: copy it compressed */
                st_flush(&w);
                uint64_t off = sc__ld64(e + 8);
                uint32_t cl = sc__ld32(e + 16), raw = sc__ld32(e + 20);
                if (off > seg->bytes.len || cl > seg->bytes.len - off) {
                    w.st = SC_ECORRUPT;
                    break;
                }
                st_entry(&w, map[first], n, m->o->pos, cl, raw);
                sc__out_write(m->o, seg->bytes.ptr + off, cl);
                sc__ms_drop_input_pages(m, false);
                continue;
            }
            for (uint32_t d = first; d < first + n && w.st == SC_OK; d++) {
                if (map[d] == UINT32_MAX)
                    continue;
                sc_slice id, src;
                sc_status st = sc_stored_get(&r, d, &id, &src);
                if (st != SC_OK) {
                    w.st = st;
                    break;
                }
                /* the writer's block rule: at most 16 docs, a doc starts a block once the
                 * block holds 16 KiB */
                if (w.n == SC__STORED_MAX_DOCS || w.raw.len >= SC__STORED_MAX_RAW)
                    st_flush(&w);
                if (w.n == 0)
                    w.first = map[d];
                st_pack(&w.raw, id, src, &w.st);
                w.n++;
            }
            sc__ms_drop_input_pages(m, false);
        }
        sc_stored_reader_fini(&r);
        sc_segment_drop_pages(seg);
    }
    st_flush(&w);
    if (w.st == SC_OK) {
        sc__st32(w.idx.ptr, w.n_blocks);
        sc__stored_comp_trailer(&w.sc, &w.idx, &w.st);
        *idx_off = m->o->pos;
        *idx_len = w.idx.len;
        sc__out_write(m->o, w.idx.ptr, w.idx.len);
    }
    sc__stored_comp_fini(&w.sc);
    sc_vec_free(&w.raw);
    sc_vec_free(&w.comp);
    sc_vec_free(&w.idx);
    return w.st;
}
