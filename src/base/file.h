/* Files: atomic replace (write temp, fsync, rename, fsync dir), read-only mmap, whole-file
 * reads, directory helpers and xxh3 checksums. Errors are SC_EIO (or SC_ENOTFOUND when the
 * file does not exist); errno is left for the caller's message. */
#ifndef SC_BASE_FILE_H
#define SC_BASE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"

/* xxh3-64 of the bytes. */
uint64_t sc_checksum(const void *data, size_t len);

/* Streaming checksum state for data written piecewise. */
typedef struct sc_checksum_state sc_checksum_state;
sc_checksum_state *sc_checksum_new(void);
void sc_checksum_update(sc_checksum_state *s, const void *data, size_t len);
uint64_t sc_checksum_digest(const sc_checksum_state *s);
void sc_checksum_free(sc_checksum_state *s);

/* Writes data to path atomically: a temp file in the same directory, fsync, rename over path,
 * fsync of the directory. After a crash the file is either the old or the new contents. */
sc_status sc_file_write_atomic(const char *path, const void *data, size_t len) SC_MUST_USE;

/* Reads the file at path from start to end in pieces of up to chunk bytes, handing each to
 * fn(ctx, piece, len) (for hashing a file without holding it); *size gets the bytes read.
 * SC_EIO when the file cannot be opened (a missing one too) or read, SC_ENOMEM. */
sc_status sc_file_stream(const char *path, size_t chunk,
                         void (*fn)(void *ctx, const uint8_t *piece, size_t len), void *ctx,
                         uint64_t *size) SC_MUST_USE;

/* Reads a whole file into a malloc'd buffer (*out, *len); caller frees with free(). */
sc_status sc_file_read_all(const char *path, uint8_t **out, size_t *len) SC_MUST_USE;

/* A read-only memory map of a whole file. An empty file maps to an empty slice. */
typedef struct sc_mmap {
    sc_slice bytes;
    size_t map_len;
} sc_mmap;

sc_status sc_mmap_open(const char *path, sc_mmap *m) SC_MUST_USE;
void sc_mmap_close(sc_mmap *m);
/* Drops this process's resident pages of the mapping (madvise MADV_DONTNEED): they leave the
 * process's RSS and are read again from the page cache on the next access. The contents are
 * unchanged (read-only shared mapping of a file). Thread-safe; a no-op on an empty map. */
void sc_mmap_drop_pages(const sc_mmap *m);
/* As sc_mmap_drop_pages for the pages overlapping bytes [off, off + len) of the mapping. */
void sc_mmap_drop_range(const sc_mmap *m, size_t off, size_t len);

/* fsyncs a directory so renames and creations in it are durable. */
sc_status sc_dir_fsync(const char *dir) SC_MUST_USE;

/* Creates a directory and its parents (mode 0755); existing is fine. SC_EINVAL for "". */
sc_status sc_dir_make(const char *path) SC_MUST_USE;

/* Removes a directory tree (like rm -rf). Missing is fine. */
sc_status sc_dir_remove_all(const char *path) SC_MUST_USE;

/* 1 if path exists, 0 if not. */
int sc_path_exists(const char *path);

#endif
