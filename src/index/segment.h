/* sc_segment: an immutable, mmapped segment reader (one file `<name>.seg`, docs/format.md).
 * Opening verifies the header, the footer checksum over the whole file and the structure of
 * every section; afterwards every read is bounds-checked and corrupt data is reported as
 * SC_ECORRUPT, never a crash. Readers are refcounted and safe for concurrent use by many
 * threads: all per-reader state (terms iterators, postings cursors, stored-field buffers) lives
 * in caller-owned structs declared in terms.h, postings.h, stored.h and docvalues.h. */
#ifndef SC_INDEX_SEGMENT_H
#define SC_INDEX_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/bitset.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/doc.h"

/* File name suffix of a segment file in its directory: `<dir>/<name>.seg`. */
#define SC_SEGMENT_SUFFIX ".seg"
/* Longest segment name accepted (bytes, without suffix). */
#define SC_SEGMENT_NAME_MAX 64

/* Where and why a file was rejected. Filled by the *_ex functions on SC_ECORRUPT/SC_EIO. */
typedef struct sc_index_error {
    char file[512];  /* path of the offending file */
    uint64_t offset; /* byte offset of the problem within the file (best effort) */
    char msg[160];   /* short English reason, e.g. "footer checksum mismatch" */
} sc_index_error;

typedef struct sc_segment sc_segment;

/* Accounting pool "index.segments": bytes of segment files currently mapped by open readers
 * (charged at open, credited when the last reference goes). */
extern sc_alloc_pool sc_pool_index_segments;

/* Set in a field's stored flags when it has a points section (NUMERIC + INDEXED with at least
 * one value; 2-D when the field also has SC_FIELD_GEO). Does not clash with doc.h flags. */
#define SC_FIELD_POINTS (1u << 8)

/* Per-field metadata and statistics of one segment. Owned by the segment; valid while the
 * caller holds a reference. Fields after the marked line are private to src/index. */
typedef struct sc_field_info {
    sc_slice name;
    sc_field_kind kind;
    uint32_t flags;               /* SC_FIELD_* from doc.h (+ SC_FIELD_POINTS) */
    uint32_t number;              /* index of the field in this segment, 0..n_fields-1 */
    uint32_t doc_count;           /* docs with at least one token/value in this field */
    uint64_t sum_total_term_freq; /* TEXT: tokens in the field over all docs; else = sum_doc_freq */
    uint64_t sum_doc_freq;        /* sum over terms of doc_freq */
    uint64_t n_terms;             /* distinct terms */
    /* private: absolute file offsets and lengths of the field's sections */
    uint64_t tindex_off, tindex_len; /* u32 offsets of each 32-term block's start */
    uint64_t tdata_off, tdata_len;   /* front-coded term blocks */
    uint64_t norms_off, norms_len;   /* n_docs bytes, or len 0 */
    uint64_t dvn_off, dvn_len;       /* numeric doc values, or len 0 */
    uint64_t dvs_off, dvs_len;       /* sorted-set doc values, or len 0 */
    uint64_t points_off, points_len; /* reserved: points, len 0 */
} sc_field_info;

/* Opens `<dir>/<name>.seg`: mmaps it, verifies header, version, footer checksum and section
 * bounds. On success *out holds one reference (release with sc_segment_unref). Errors:
 * SC_ENOTFOUND (no file), SC_EIO, SC_ECORRUPT (bad magic, version, checksum, truncation, bad
 * structure), SC_ENOMEM, SC_EINVAL (name too long). O(file size) for the checksum. */
sc_status sc_segment_open(const char *dir, const char *name, sc_segment **out) SC_MUST_USE;

/* As sc_segment_open; on failure fills *err (may be NULL) with the file and offset. */
sc_status sc_segment_open_ex(const char *dir, const char *name, sc_segment **out,
                             sc_index_error *err) SC_MUST_USE;

/* As sc_segment_open_ex over bytes already in memory (not copied: they must outlive the
 * segment). `verify_checksum` false skips the footer checksum (fuzzing the structure checks).
 * The name is used for error messages only. */
sc_status sc_segment_open_bytes(sc_slice bytes, const char *name, bool verify_checksum,
                                sc_segment **out, sc_index_error *err) SC_MUST_USE;

/* Block join (nested documents, index/nested.c): the segment's root documents as a bitset of
 * n_docs bits (set = root), or NULL when the segment holds no nested child documents (docs
 * with the SC_NESTED_PATH_FIELD keyword). A root's children are the docs immediately before
 * it up to the previous root. Computed at open from that field's postings; immutable. */
const sc_bitset *sc_segment_parents(const sc_segment *seg);
/* The number of child documents (deleted ones included); 0 without nested docs. */
uint32_t sc_segment_n_children(const sc_segment *seg);
/* The first doc of the block whose root is `doc`: doc minus its number of children (doc
 * itself without nested docs). O(children). */
uint32_t sc_segment_block_start(const sc_segment *seg, uint32_t doc);

/* Reference counting (atomic, thread-safe). unref of the last reference unmaps and frees.
 * sc_segment_unref(NULL) is a no-op. */
void sc_segment_ref(sc_segment *seg);
void sc_segment_unref(sc_segment *seg);

/* Number of documents (ids 0..n_docs-1, deleted ones included). */
uint32_t sc_segment_n_docs(const sc_segment *seg);

/* Drops the process's resident pages of a mapped segment (sc_mmap_drop_pages): the bytes
 * stay valid and are faulted in again from the page cache when read. Used after whole-file
 * reads (the checksum at open, a merge's pass over its inputs). Thread-safe. */
void sc_segment_drop_pages(const sc_segment *seg);

/* The segment's name (NUL-terminated, owned by the segment). */
const char *sc_segment_name(const sc_segment *seg);

/* The footer checksum of the file (what the manifest records) and the file size. */
uint64_t sc_segment_checksum(const sc_segment *seg);
uint64_t sc_segment_size_bytes(const sc_segment *seg);

/* Fields, sorted by name (bytewise). */
size_t sc_segment_n_fields(const sc_segment *seg);
const sc_field_info *sc_segment_field_at(const sc_segment *seg, size_t i);

/* The field named `name`, or NULL when the segment has no such field. O(log n_fields). */
const sc_field_info *sc_segment_field(const sc_segment *seg, sc_slice name);

/* The norms of a TEXT field with SC_FIELD_NORMS: a pointer to n_docs bytes (0 = the doc has no
 * value in the field), valid while the segment is referenced; NULL when the field has none. */
const uint8_t *sc_segment_norms(const sc_segment *seg, const sc_field_info *f);

/* The points (1-D BKD tree, index/bkd.h) of a NUMERIC field indexed with SC_FIELD_INDEXED:
 * fills *out, a view valid while the segment is referenced (validated at open). SC_ENOTFOUND
 * when the field has no points or its points are 2-D (SC_FIELD_GEO). Thread-safe. */
typedef struct sc_bkd sc_bkd;
sc_status sc_segment_points(const sc_segment *seg, const sc_field_info *f, sc_bkd *out) SC_MUST_USE;

/* The 2-D points (index/bkd2.h) of a geo field (SC_FIELD_GEO) with points, as above;
 * SC_ENOTFOUND when the field has none (not geo, no values, index: false, or a version 3
 * segment, whose geo fields have 1-D points). Thread-safe. */
typedef struct sc_bkd2 sc_bkd2;
sc_status sc_segment_points2(const sc_segment *seg, const sc_field_info *f, sc_bkd2 *out)
    SC_MUST_USE;

/* Lucene's SmallFloat.intToByte4 (the BM25 norm of a field of `length` tokens) and its exact
 * inverse byte4ToInt, so BM25 scores match Lucene's. */
uint8_t sc_norm_encode(uint32_t length);
uint32_t sc_norm_decode(uint8_t norm);

/* Internal: the whole mapped file. */
sc_slice sc__segment_bytes(const sc_segment *seg);
/* Internal: the file's format version (docs/format.md). */
uint32_t sc__segment_version(const sc_segment *seg);

#endif
