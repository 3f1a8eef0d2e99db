/* Private pieces shared by the index codec files: on-disk constants (docs/format.md),
 * little-endian load/store, a checksumming buffered file writer with a sticky status, packed
 * random-access integer arrays and the builder's internal entry points used by merge. */
#ifndef SC_INDEX_INTERNAL_H
#define SC_INDEX_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/builder.h"
#include "index/doc.h"
#include "index/segment.h"

#define SC__SEG_MAGIC "SCRYSEG" /* 8 bytes with the NUL */
#define SC__SEG_END_MAGIC "SCRYEND"
/* written (8: dense_vector fields; 9: per-dimension int8 ranges; 10: stored blocks with a
 * per-segment zstd dictionary) */
#define SC__SEG_VERSION 11u
#define SC__SEG_VERSION_MIN 7u /* oldest read (7 = 8 without vector fields) */
#define SC__SEG_HEADER_BYTES 16
#define SC__SEG_FOOTER_BYTES 48
#define SC__FIELD_SECTIONS 6 /* tindex, tdata, norms, dvn, dvs, points */
#define SC__TERMS_PER_BLOCK 32
#define SC__SKIP_BYTES 20
/* Terms with fewer than 128 docs (one varint tail block) have no skip table (format v4). */
static inline uint32_t sc__skip_entries(uint32_t doc_freq, uint32_t n_blocks)
{
    return doc_freq < 128 ? 0 : n_blocks;
}
/* Second skip level (format v6): one 12-byte entry (last doc, max freq, min norm) per 32 blocks,
 * present when a term has more than 32 blocks. */
#define SC__SKIP2_BYTES 12
#define SC__SKIP2_BLOCKS 32
static inline uint32_t sc__skip2_entries(uint32_t n_skip)
{
    return n_skip > SC__SKIP2_BLOCKS ? (n_skip + SC__SKIP2_BLOCKS - 1) / SC__SKIP2_BLOCKS : 0;
}
#define SC__STORED_ENTRY_BYTES 24
#define SC__STORED_MAX_DOCS 16
#define SC__STORED_MAX_RAW (16 * 1024)
/* Stored-block compression (stored_comp.c, format v10). A segment whose stored docs reach
 * SC__STORED_DICT_MIN_RAW raw bytes gets a zstd dictionary of at most SC__STORED_DICT_MAX bytes
 * trained on about SC__STORED_SAMPLE_BYTES of its docs (every step-th doc), kept after the
 * stored index; every block is compressed against it at SC__STORED_LEVEL. On the real-text
 * corpus of bench/index_size.sh (310k docs, 16-doc / 16 KiB blocks) the dictionary takes the
 * blocks from 70.6 to 63.1 MB at the same decompression time per block; level 3 would give
 * 60.1 MB at ~20 % more decompression time, 64 KiB blocks 56.3 MB at 2.4x (fetch cost). */
#define SC__STORED_LEVEL 1
#define SC__STORED_DICT_MIN_RAW (128 * 1024)
#define SC__STORED_DICT_MAX (32 * 1024)
#define SC__STORED_SAMPLE_BYTES (1024 * 1024)

/* One segment's stored-block compressor: a zstd context and, when trained, the dictionary. */
typedef struct sc__stored_comp {
    void *cctx;  /* ZSTD_CCtx */
    void *cdict; /* ZSTD_CDict, NULL without a dictionary */
    sc_buf dict; /* the dictionary bytes (empty: none) */
} sc__stored_comp;

/* Every how many docs a sample is taken for the dictionary of a segment of n_docs stored docs
 * holding raw_bytes raw block bytes; 0 when the segment gets no dictionary. */
uint32_t sc__stored_sample_step(uint64_t raw_bytes, uint32_t n_docs);
/* Creates the compressor; with samples (n_samples raw doc entries, concatenated in `samples`,
 * sizes in `sizes`) trains the dictionary, or goes without one when zstd cannot train on
 * them (too few or too uniform: not an error). SC_ENOMEM. Free with _fini (also on error). */
sc_status sc__stored_comp_init(sc__stored_comp *c, const uint8_t *samples, const size_t *sizes,
                               size_t n_samples, uint64_t raw_bytes) SC_MUST_USE;
/* Compresses one raw block into out (replacing its content). SC_ENOMEM, SC_ELIMIT. */
sc_status sc__stored_comp_block(sc__stored_comp *c, const uint8_t *raw, size_t len, sc_buf *out)
    SC_MUST_USE;
/* Appends the stored index's trailer (dict_len:u32 dict) to idx. */
void sc__stored_comp_trailer(const sc__stored_comp *c, sc_buf *idx, sc_status *st);
void sc__stored_comp_fini(sc__stored_comp *c);
#define SC__DV_HEADER_BYTES 32
/* Doc values layout (byte 26 of the numeric header, 18 of the sorted-set one; format v5):
 * MULTI has per-doc starts, SINGLE has none (numeric: exactly one value per doc; sorted set:
 * at most one, stored as ord + 1 with 0 = none). */
#define SC__DV_MULTI 0u
#define SC__DV_SINGLE 1u
/* Sorted-set term offsets (format v11): a u32 base every SC__DV_TERM_BLOCK ordinals and a
 * bit-packed offset from it per ordinal (byte 19 of the header: its width); before v11 a u32
 * per ordinal. */
#define SC__DV_TERM_BLOCK 16u
#define SC__PACK_PAD 8

/* Block kinds in the top two bits of a full block's header byte; width in the low six. */
#define SC__BLOCK_PACKED 0u
#define SC__BLOCK_RUN 1u
#define SC__BLOCK_BITSET 2u

static inline uint16_t sc__ld16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline uint32_t sc__ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t sc__ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline void sc__st16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, 2);
}
static inline void sc__st32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static inline void sc__st64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* Appending to an sc_buf with a sticky status (the caller checks *st once). */
void sc__buf_put(sc_buf *b, const void *data, size_t len, sc_status *st);
void sc__buf_u8(sc_buf *b, uint8_t v, sc_status *st);
void sc__buf_u16(sc_buf *b, uint16_t v, sc_status *st);
void sc__buf_u32(sc_buf *b, uint32_t v, sc_status *st);
void sc__buf_u64(sc_buf *b, uint64_t v, sc_status *st);
void sc__buf_varint(sc_buf *b, uint64_t v, sc_status *st);

/* Bit-packed arrays of n values of `bits` (0..64) bits, LSB first, followed by SC__PACK_PAD
 * zero bytes so that a random-access read may load 9 bytes from any value's first byte. */
size_t sc__packed_bytes(uint64_t n, unsigned bits);
void sc__packed_put(sc_buf *b, const uint64_t *vals, uint64_t n, unsigned bits, sc_status *st);
static inline uint64_t sc__packed_get(const uint8_t *p, uint64_t i, unsigned bits)
{
    if (bits == 0)
        return 0;
    uint64_t bitpos = i * bits;
    const uint8_t *q = p + (bitpos >> 3);
    unsigned sh = (unsigned)(bitpos & 7);
    uint64_t v = sc__ld64(q) >> sh;
    if (sh + bits > 64)
        v |= (uint64_t)q[8] << (64 - sh);
    return bits == 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}
unsigned sc__bits_for(uint64_t max_value);

/* Buffered, checksumming writer of one new file (temp name, then renamed by _finish). */
typedef struct sc__out {
    FILE *f;
    char tmp_path[1024];
    char path[1024];
    uint64_t pos;
    sc_checksum_state *ck;
    sc_status st;
} sc__out;

sc_status sc__out_open(sc__out *o, const char *dir, const char *file_name) SC_MUST_USE;
void sc__out_write(sc__out *o, const void *data, size_t len);
/* Writes the checksum of everything written so far (8 bytes), fsyncs, renames into place and
 * fsyncs the directory. Returns the sticky status. *checksum gets the digest. */
sc_status sc__out_finish(sc__out *o, const char *dir, uint64_t *checksum) SC_MUST_USE;
/* Abandons the file (removes the temp). */
void sc__out_abort(sc__out *o);

/* Fills an sc_index_error. */
void sc__set_error(sc_index_error *err, const char *file, uint64_t offset, const char *msg);

/* Builder entry points for merge: add postings, values and stored docs directly. Fields are
 * declared first (kind and flags as in the source segment). Postings for one (field, term)
 * must be added in increasing doc order. */
typedef struct sc__bfield sc__bfield;
sc_status sc__builder_field(sc_segment_builder *b, sc_slice name, sc_field_kind kind,
                            uint32_t flags, sc__bfield **out) SC_MUST_USE;
sc_status sc__builder_posting(sc_segment_builder *b, sc__bfield *f, sc_slice term, uint32_t doc,
                              uint32_t freq, const uint32_t *positions, size_t n_positions)
    SC_MUST_USE;
sc_status sc__builder_norm(sc_segment_builder *b, sc__bfield *f, uint32_t doc, uint8_t norm)
    SC_MUST_USE;
sc_status sc__builder_numeric(sc_segment_builder *b, sc__bfield *f, uint32_t doc, int64_t value)
    SC_MUST_USE;
sc_status sc__builder_point(sc_segment_builder *b, sc__bfield *f, uint32_t doc, int64_t value)
    SC_MUST_USE;
sc_status sc__builder_ord_term(sc_segment_builder *b, sc__bfield *f, uint32_t doc, sc_slice term)
    SC_MUST_USE;
sc_status sc__builder_mark_doc(sc_segment_builder *b, sc__bfield *f, uint32_t doc) SC_MUST_USE;
/* Appends a stored doc; the doc id is the number of stored docs before it. */
/* Adds doc's vector (p->dims floats) to a VECTOR field; p must equal the field's earlier
 * vectors' params (SC_EINVAL). Docs must come in increasing order. */
sc_status sc__builder_vector(sc_segment_builder *b, sc__bfield *f, uint32_t doc,
                             const sc_vec_params *p, const float *v) SC_MUST_USE;
sc_status sc__builder_stored(sc_segment_builder *b, sc_slice id, sc_slice source) SC_MUST_USE;

/* Field lookup by number. */
const sc_field_info *sc__segment_fields(const sc_segment *seg);

#endif
