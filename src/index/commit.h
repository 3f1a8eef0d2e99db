/* The commit point of a shard and its per-segment deletes. The manifest (`<dir>/manifest`)
 * lists the live segments with their doc counts, deletes generation and file checksums, a
 * generation number and an opaque user-data blob (the shard stores its translog position
 * there); it is replaced atomically with sc_file_write_atomic. A deletes file
 * (`<dir>/<segment>_<gen>.del`) holds the live-docs bitset of one segment generation. Both
 * carry a header and a checksum footer; bad files give SC_ECORRUPT with the offset. */
#ifndef SC_INDEX_COMMIT_H
#define SC_INDEX_COMMIT_H

#include <stdint.h>

#include "base/bitset.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/segment.h"

#define SC_MANIFEST_FILE "manifest"

typedef struct sc_manifest_segment {
    char name[SC_SEGMENT_NAME_MAX + 1];
    uint32_t n_docs;
    uint32_t n_deleted; /* deleted docs in generation del_gen */
    uint64_t del_gen;   /* 0: no deletes file */
    uint64_t checksum;  /* sc_segment_checksum of the segment file */
} sc_manifest_segment;

typedef struct sc_manifest {
    uint64_t generation;
    SC_VEC(sc_manifest_segment) segments;
    sc_buf user_data; /* opaque to the index */
} sc_manifest;

/* Zeroes m (no allocation). */
void sc_manifest_init(sc_manifest *m);
/* Frees the vectors; m can be reused after init. */
void sc_manifest_fini(sc_manifest *m);

/* Writes m as `<dir>/manifest` atomically (write temp, fsync, rename, fsync dir). SC_EIO. */
sc_status sc_manifest_write(const char *dir, const sc_manifest *m) SC_MUST_USE;

/* Reads `<dir>/manifest` into m (initialized by the caller; its old contents are replaced).
 * SC_ENOTFOUND when there is none, SC_ECORRUPT (err filled, may be NULL), SC_EIO. */
sc_status sc_manifest_read(const char *dir, sc_manifest *m, sc_index_error *err) SC_MUST_USE;
/* Decodes manifest bytes (the whole file) into m (its previous contents replaced). SC_ECORRUPT
 * with *offset and *why (static text) set when the bytes are not a valid manifest; SC_ENOMEM.
 * Never reads outside data[0..len). O(len). */
sc_status sc_manifest_decode(const uint8_t *data, size_t len, sc_manifest *m, uint64_t *offset,
                             const char **why) SC_MUST_USE;

/* Writes the live docs of segment `seg_name`, generation `gen` (>= 1), as
 * `<dir>/<seg_name>_<gen>.del` atomically. live->n_bits is the segment's doc count. */
sc_status sc_live_docs_write(const char *dir, const char *seg_name, uint64_t gen,
                             const sc_bitset *live) SC_MUST_USE;

/* Reads the live docs of (seg_name, gen) into *live (allocated here, free with
 * sc_bitset_fini). Fails with SC_ECORRUPT unless the file holds exactly n_docs bits. */
sc_status sc_live_docs_read(const char *dir, const char *seg_name, uint64_t gen, uint32_t n_docs,
                            sc_bitset *live, sc_index_error *err) SC_MUST_USE;

#endif
