/* The files of an `fs` snapshot repository (layout in docs/format.md, "Snapshot repository"):
 * content-addressed blobs holding copies of immutable shard files, one manifest per snapshot
 * and a generational root (index-N + index.latest) listing the snapshots. Every manifest and
 * root is JSON followed by a checksum line and is replaced atomically (temp, fsync, rename,
 * fsync dir). Decoders verify the checksum and the whole structure, so code reading a decoded
 * document may trust its types and names. Thread-safety: stateless; callers serialize writers
 * to one repository. */
#ifndef SC_CLUSTER_SNAPREPO_H
#define SC_CLUSTER_SNAPREPO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define SC_SNAPREPO_FORMAT 1
#define SC_SNAPREPO_BLOB_HEX 32 /* XXH3-128 of the contents, lowercase hex */

/* Encodes v (an object) as a repository file: compact JSON, "\n", "scry-checksum " + 16 hex
 * digits of xxh3-64 over the JSON bytes, "\n". *out malloc'd. SC_ENOMEM. */
sc_status sc_snaprepo_encode(const json_t *v, char **out, size_t *len) SC_MUST_USE;

/* Decodes a snapshot manifest (snap-<uuid>.dat) or a root (index-N): checksum line, JSON,
 * then the structure (see docs/format.md). *out: new reference. SC_ECORRUPT with *why (static
 * text) on anything else; SC_ENOMEM. Never reads outside data[0..len). O(len). */
sc_status sc_snaprepo_manifest_decode(const uint8_t *data, size_t len, json_t **out,
                                      const char **why) SC_MUST_USE;
sc_status sc_snaprepo_root_decode(const uint8_t *data, size_t len, json_t **out, const char **why)
    SC_MUST_USE;

/* Whether s is a valid snapshot uuid / shard file name as the repository stores them. */
bool sc_snaprepo_uuid_ok(const char *s);
bool sc_snaprepo_file_name_ok(const char *s);

/* Reads the root of the repository at loc: index.latest names generation N, index-N holds the
 * root. A repository without index.latest is empty: *root = {"format":1,"generation":0,
 * "snapshots":[]}, *gen = 0. SC_ECORRUPT (why filled; file names the file) or SC_EIO. */
sc_status sc_snaprepo_root_read(const char *loc, json_t **root, uint64_t *gen, const char **why,
                                char file[64]) SC_MUST_USE;
/* Writes root as index-<gen>, then index.latest = gen (both atomic), then removes the
 * previous generation's file. SC_EIO, SC_ENOMEM. */
sc_status sc_snaprepo_root_write(const char *loc, json_t *root, uint64_t gen) SC_MUST_USE;

/* Reads and decodes snap-<uuid>.dat. SC_ENOTFOUND, SC_ECORRUPT (why), SC_EIO. */
sc_status sc_snaprepo_manifest_read(const char *loc, const char *uuid, json_t **out,
                                    const char **why) SC_MUST_USE;
/* Writes snap-<uuid>.dat atomically. */
sc_status sc_snaprepo_manifest_write(const char *loc, const char *uuid, const json_t *m)
    SC_MUST_USE;

/* Content hash of a file (XXH3-128 hex) and its size. SC_EIO. O(file). */
sc_status sc_snaprepo_hash_file(const char *path, char hex[SC_SNAPREPO_BLOB_HEX + 1],
                                uint64_t *size) SC_MUST_USE;
/* Path of blob hex in the repository: <loc>/blobs/<hex[0..2)>/<hex>. */
void sc_snaprepo_blob_path(const char *loc, const char *hex, char *out, size_t cap);
/* Stores src as blob hex (size bytes) unless a blob of that name and size is there already
 * (*copied false). A new blob goes through a temp file, fsync and rename, so a blob under its
 * final name is always whole; the rename itself is durable once sc_snaprepo_blobs_sync has
 * run for it (callers sync before writing a manifest that references the blob). SC_EIO. */
sc_status sc_snaprepo_blob_put(const char *loc, const char *src, const char *hex, uint64_t size,
                               bool *copied) SC_MUST_USE;
/* fsyncs the blob folders of the given prefixes (touched[p] set for hex prefix p, 0..255),
 * the blobs folder and the location: the renames of sc_snaprepo_blob_put become durable.
 * SC_EIO. */
sc_status sc_snaprepo_blobs_sync(const char *loc, const uint8_t touched[256]) SC_MUST_USE;
/* The prefix index (0..255) of blob hex, for sc_snaprepo_blobs_sync. */
unsigned sc_snaprepo_blob_prefix(const char *hex);
/* Copies blob hex to dst (created, fsynced), checking its size and hash as it goes.
 * SC_ENOTFOUND (no blob), SC_ECORRUPT (size or hash mismatch: *why), SC_EIO. */
sc_status sc_snaprepo_blob_get(const char *loc, const char *hex, uint64_t size, const char *dst,
                               const char **why) SC_MUST_USE;

/* Removes blobs no manifest of `keep` (array of decoded manifests) references, and temp files
 * left by interrupted copies. *n_removed counts the files removed. Best effort. */
void sc_snaprepo_gc(const char *loc, const json_t *keep, uint64_t *n_removed);

#endif
