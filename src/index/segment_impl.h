/* Private layout of sc_segment, shared by the reader files (segment.c, stored.c, ...). */
#ifndef SC_INDEX_SEGMENT_IMPL_H
#define SC_INDEX_SEGMENT_IMPL_H

#include <stdatomic.h>

#include "base/file.h"
#include "base/bitset.h"
#include "index/segment.h"

struct sc_segment {
    _Atomic int refs;
    sc_mmap map;
    bool mapped;
    bool charged;   /* file bytes charged to sc_pool_index_segments */
    sc_slice bytes; /* the whole file */
    char name[SC_SEGMENT_NAME_MAX + 1];
    char *path; /* the file, for error messages (malloc'd: 1 KiB inline was most of an idle
                 * small segment's memory) */
    uint32_t n_docs;
    uint32_t version; /* format version of the file (docs/format.md) */
    uint64_t checksum;
    sc_field_info *fields;
    size_t n_fields;
    const uint8_t *stored_idx; /* n_stored_blocks entries of SC__STORED_ENTRY_BYTES */
    uint32_t n_stored_blocks;
    /* nested.c: root docs when the segment holds nested children (else NULL) */
    sc_bitset *parents;
    uint32_t n_children;
    uint32_t stored_dict_len; /* bytes of the stored blocks' zstd dictionary (v10), 0: none */
    void *stored_ddict;       /* its ZSTD_DDict (a copy, made at open), NULL: none */
};

/* nested.c: computes parents / n_children at open; frees them. */
sc_status sc__segment_nested_init(sc_segment *seg) SC_MUST_USE;
void sc__segment_nested_fini(sc_segment *seg);

#endif
