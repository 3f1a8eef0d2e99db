/* What the streaming merge's parts share (merge_stream.c: terms, doc values, points, the
 * segment; merge_stored.c: stored fields): the merge context. */
#ifndef SC_INDEX_MERGE_STREAM_IMPL_H
#define SC_INDEX_MERGE_STREAM_IMPL_H

#include "base/bitset.h"
#include "index/internal.h"
#include "index/merge.h"
#include "index/merge_impl.h"
#include "index/postenc.h"
#include "index/spill.h"

typedef struct sctx {
    const sc_merge_input *in;
    size_t n;
    uint32_t n_docs; /* of the merged segment */
    uint32_t **map;  /* per input: old doc -> new doc or UINT32_MAX */
    sc__out *o;
    const sc_field_info **fi; /* per input: the current field or NULL */
    sc_bitset has;            /* docs with a value in the current field */
    sc_buf ft;                /* the field table */
    uint32_t n_fields;
    sc__postenc enc;
    sc__termdict td;
    SC_VEC(uint32_t) pos;
    SC_VEC(int64_t) vals;
    SC_VEC(uint64_t) ords;
    uint64_t dropped_at; /* output position when the inputs' pages were last dropped */
    uint64_t part;       /* a spillable buffer's share of the memory limit (bytes) */
    /* one term's postings and positions, the term dictionary */
    sc__spill sp_blk, sp_pos, sp_td;
    sc_status st;
} sctx;

/* Reading the inputs makes their pages resident: drops them every 64 MiB of output (at once
 * with now), so the merge's RSS does not grow with the index. */
void sc__ms_drop_input_pages(sctx *m, bool now);
/* The merged stored fields: blocks of live docs copied or recompressed (merge_stored.c); the
 * stored index's offset and length in the output. */
sc_status sc__ms_merge_stored(sctx *m, uint64_t *idx_off, uint64_t *idx_len);

#endif
