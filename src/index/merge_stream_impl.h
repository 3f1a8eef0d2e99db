/* What the streaming merge's parts share (merge_stream.c: terms, points, vectors, the segment;
 * merge_docvalues.c: doc values; merge_stored.c: stored fields): the merge context. */
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

/* A binary min-heap of input indexes keyed by their current byte string (ties: input order). */
typedef struct sc__ms_heap {
    uint32_t *h;
    size_t len;
    const sc_slice *key; /* by input */
} sc__ms_heap;

bool sc__ms_heap_less(const sc__ms_heap *q, uint32_t a, uint32_t b);
/* Restores the heap order below position i. */
void sc__ms_heap_down(sc__ms_heap *q, size_t i);
void sc__ms_heap_build(sc__ms_heap *q);

/* Reading the inputs makes their pages resident: drops them every 64 MiB of output (at once
 * with now), so the merge's RSS does not grow with the index. */
void sc__ms_drop_input_pages(sctx *m, bool now);
/* The merged stored fields: blocks of live docs copied or recompressed (merge_stored.c); the
 * stored index's offset and length in the output. */
sc_status sc__ms_merge_stored(sctx *m, uint64_t *idx_off, uint64_t *idx_len);
/* The current field's (m->fi) merged numeric / sorted-set doc values (merge_docvalues.c): their
 * section's offset and length in the output. */
sc_status sc__ms_merge_dvn(sctx *m, uint64_t *off, uint64_t *len);
sc_status sc__ms_merge_dvs(sctx *m, uint64_t *off, uint64_t *len);

#endif
