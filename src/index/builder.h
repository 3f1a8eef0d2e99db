/* sc_segment_builder: the in-memory indexing buffer of a shard. It accepts analyzed documents
 * (sc_index_doc), assigns doc ids densely from 0, accumulates per-field term -> postings (doc,
 * freq, positions), norms, numeric and sorted-set doc values and the stored `_id`/`_source`,
 * reports its RAM use so the shard can flush at a threshold, and writes everything as one
 * immutable segment file (docs/format.md). Single writer: not thread-safe. */
#ifndef SC_INDEX_BUILDER_H
#define SC_INDEX_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "index/doc.h"

/* Longest term accepted (bytes), as Lucene. */
#define SC_TERM_MAX_BYTES 32766

typedef struct sc_segment_builder sc_segment_builder;

/* What a segment write produced. */
typedef struct sc_segment_write_info {
    uint32_t n_docs;
    uint64_t size_bytes; /* file size */
    uint64_t checksum;   /* footer checksum (for the manifest) */
} sc_segment_write_info;

/* Allocates an empty builder into *out; free with sc_segment_builder_free. SC_ENOMEM. */
sc_status sc_segment_builder_new(sc_segment_builder **out) SC_MUST_USE;
/* Frees the builder; NULL is a no-op. */
void sc_segment_builder_free(sc_segment_builder *b);

/* Adds one document (borrowed for the call) and returns its id in *doc_id (may be NULL).
 * Tokens of a TEXT field may come in any position order. Errors: SC_EINVAL (a field's
 * kind/flags differ from earlier docs in this buffer, the same field name twice in the doc, a
 * term longer than SC_TERM_MAX_BYTES, an empty field name) and SC_ELIMIT (too many docs):
 * checked before anything changes, so the doc is not added and the builder stays usable.
 * SC_ENOMEM/SC_ELIMIT in the middle of a doc: the builder becomes failed (sticky; every add
 * and write returns that status) until sc_segment_builder_reset. Amortized
 * O(tokens + values + source bytes). */
sc_status sc_segment_builder_add(sc_segment_builder *b, const sc_index_doc *doc, uint32_t *doc_id)
    SC_MUST_USE;

/* Documents buffered so far. */
uint32_t sc_segment_builder_n_docs(const sc_segment_builder *b);

/* Bytes of memory the buffer holds now (the flush threshold input). O(1). */
size_t sc_segment_builder_ram_bytes(const sc_segment_builder *b);

/* Writes the buffered docs as `<dir>/<name>.seg` (temp file, fsync, rename, dir fsync) and
 * fills *info (may be NULL). The buffer is unchanged; call reset to reuse it. Writing an empty
 * buffer produces a valid segment with 0 docs. Errors: SC_EIO, SC_ENOMEM, SC_EINVAL (name), the
 * sticky status of a failed builder. */
sc_status sc_segment_builder_write(sc_segment_builder *b, const char *dir, const char *name,
                                   sc_segment_write_info *info) SC_MUST_USE;

/* Drops every buffered doc; keeps allocations where cheap. */
void sc_segment_builder_reset(sc_segment_builder *b);

/* As sc_segment_builder_reset, and frees the buffers' capacity too (after a large buffer was
 * written, so an idle builder holds almost nothing). */
void sc_segment_builder_trim(sc_segment_builder *b);

#endif
