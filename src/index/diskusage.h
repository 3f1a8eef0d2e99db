/* Disk usage of one segment per field and per data structure (Elasticsearch's
 * `_disk_usage?run_expensive_tasks=true`): term dictionary, postings (doc ids, freqs, skip
 * data, impacts), positions, norms, doc values and points of each field, from the sections the
 * field table locates; stored fields split between `_id` and `_source`; and the segment's own
 * overhead (header, field table, stored-block index, footer). The parts sum to the file size. */
#ifndef SC_INDEX_DISKUSAGE_H
#define SC_INDEX_DISKUSAGE_H

#include <stdint.h>

#include "base/status.h"
#include "index/segment.h"

typedef struct sc_field_disk_usage {
    uint64_t terms_bytes;     /* term index + front-coded term blocks */
    uint64_t postings_bytes;  /* per term: skip tables, doc blocks, freqs, impacts */
    uint64_t positions_bytes; /* TEXT with positions: position gaps */
    uint64_t norms_bytes;
    uint64_t doc_values_bytes; /* numeric or sorted-set (term bytes + ords) */
    uint64_t points_bytes;     /* BKD tree */
} sc_field_disk_usage;

typedef struct sc_segment_disk_usage {
    size_t n_fields;
    sc_field_disk_usage *fields; /* indexed like sc_segment_field_at; malloc'd */
    uint64_t stored_id_bytes;     /* compressed stored blocks apportioned by raw bytes: ids */
    uint64_t stored_source_bytes; /* ... and sources (+ the per-doc length varints) */
    uint64_t overhead_bytes;      /* header, field table, stored-block index, footer */
    uint64_t total_bytes;         /* the file size */
} sc_segment_disk_usage;

/* Measures seg. Walks every term of every field with positions (to split postings from
 * positions) and decompresses every stored block (to split `_id` from `_source`): O(terms +
 * stored bytes). *out owns `fields` (sc_segment_disk_usage_fini). SC_ENOMEM, SC_ECORRUPT.
 * Thread-safe (reads only). */
sc_status sc_segment_disk_usage_measure(const sc_segment *seg, sc_segment_disk_usage *out)
    SC_MUST_USE;
void sc_segment_disk_usage_fini(sc_segment_disk_usage *u);

#endif
