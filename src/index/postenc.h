/* Private streaming encoders of a term's postings (skip tables, doc/freq blocks, positions) and
 * of a field's term dictionary (term index + front-coded term blocks), shared by the segment
 * writer (segwrite.c, from the builder's records) and the streaming merge (merge.c, from the
 * input segments' postings). Formats in docs/format.md ("Terms", "Postings"). */
#ifndef SC_INDEX_POSTENC_H
#define SC_INDEX_POSTENC_H

#include "index/internal.h"
#include "index/postings.h"

/* One term's postings, fed doc by doc in increasing order. Memory: the term's encoded size. */
typedef struct sc__postenc {
    bool freqs, with_pos, norms;
    const uint8_t *norm; /* norm byte by doc (borrowed); docs at or past norm_len have 0 */
    size_t norm_len;
    sc_buf skip; /* after _finish: both skip levels (empty for a term below 128 docs) */
    sc_buf blk;  /* the blocks (impacts, docs, freqs) */
    sc_buf pos;  /* the positions */
    /* Bytes of blk / pos the caller has already taken out of the buffers (the streaming merge
     * spills them to a file, spill.h): offsets in the skip table count them. 0 after _begin. */
    uint64_t blk_base, pos_base;
    uint32_t docs[SC_POSTINGS_BLOCK], fr[SC_POSTINGS_BLOCK];
    uint32_t n;                          /* pending docs of the current block */
    uint32_t pvals[SC_POSTINGS_BLOCK];   /* pending position deltas of the current block */
    uint32_t pend;
    uint64_t pos_off;   /* pos.len at the current block's first doc */
    uint32_t prev_last; /* last doc of the previous block; UINT32_MAX before the first */
    uint32_t df;
    uint64_t ttf;
    sc_status st; /* sticky */
} sc__postenc;

void sc__postenc_init(sc__postenc *e);
void sc__postenc_fini(sc__postenc *e);
/* Starts a term (keeps the buffers' memory). freqs: TEXT; with_pos: TEXT with positions;
 * norms: TEXT with norms (the impacts then use norm[doc]). */
void sc__postenc_begin(sc__postenc *e, bool freqs, bool with_pos, bool norms,
                       const uint8_t *norm, size_t norm_len);
/* Adds doc (greater than the previous) with freq >= 1 and, when with_pos, its freq positions
 * ascending. */
void sc__postenc_add(sc__postenc *e, uint32_t doc, uint32_t freq, const uint32_t *positions);
/* Ends the term: flushes the last block and completes the skip tables. The postings are then
 * skip ++ blk, the positions pos. */
void sc__postenc_finish(sc__postenc *e);

/* A field's term dictionary, terms fed in increasing byte order. */
typedef struct sc__termdict {
    bool freqs, with_pos;
    sc_buf tindex, tdata;
    /* bytes of tdata the caller has taken out (spilled); 0 after _begin */
    uint64_t tdata_base;
    sc_buf prev; /* the previous term's bytes */
    uint64_t count, prev_post, prev_pos;
    sc_status st;
} sc__termdict;

void sc__termdict_init(sc__termdict *t);
void sc__termdict_fini(sc__termdict *t);
void sc__termdict_begin(sc__termdict *t, bool freqs, bool with_pos);
/* Appends a term with its stats and the absolute offsets of its postings and positions. */
void sc__termdict_add(sc__termdict *t, sc_slice term, uint32_t df, uint64_t ttf,
                      uint64_t post_off, uint64_t pos_off);

#endif
