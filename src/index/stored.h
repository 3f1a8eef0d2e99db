/* Stored fields reader: the `_id` and original `_source` bytes of a doc, kept in zstd
 * compressed blocks (up to 16 docs or 16 KiB of raw data per block; since format v10 against
 * the segment's dictionary when it has one). A caller-owned reader
 * caches the last decompressed block, so fetching docs in id order decompresses each block
 * once. Thread-safe across readers; one reader per thread. */
#ifndef SC_INDEX_STORED_H
#define SC_INDEX_STORED_H

#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/segment.h"

typedef struct sc_stored_reader {
    /* private */
    const sc_segment *seg;
    uint64_t cached_block;    /* UINT64_MAX: none */
    uint32_t cached_first;    /* first doc of the cached block */
    uint32_t cached_n;        /* docs in it */
    sc_buf raw;               /* decompressed block */
    SC_VEC(uint64_t) doc_off; /* offsets of each doc's entry in raw */
    void *dctx;               /* ZSTD_DCtx, made at the first block */
} sc_stored_reader;

/* Prepares a reader (no allocation until the first get). */
void sc_stored_reader_init(sc_stored_reader *r, const sc_segment *seg);
void sc_stored_reader_fini(sc_stored_reader *r);

/* The `_id` and `_source` of `doc`; both slices are valid until the next call on `r` or fini.
 * SC_EINVAL when doc >= n_docs, SC_ECORRUPT on bad data, SC_ENOMEM. */
sc_status sc_stored_get(sc_stored_reader *r, uint32_t doc, sc_slice *id, sc_slice *source)
    SC_MUST_USE;

#endif
