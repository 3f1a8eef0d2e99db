/* File helpers: atomic writes, mmap, directory fsync, xxh3 checksums. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

uint64_t sc_checksum(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

struct sc_checksum_state {
    XXH3_state_t *st;
};

sc_checksum_state *sc_checksum_new(void)
{
    sc_checksum_state *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    s->st = XXH3_createState();
    if (!s->st) {
        free(s);
        return NULL;
    }
    XXH3_64bits_reset(s->st);
    return s;
}

void sc_checksum_update(sc_checksum_state *s, const void *data, size_t len)
{
    XXH3_64bits_update(s->st, data, len);
}

uint64_t sc_checksum_digest(const sc_checksum_state *s)
{
    return XXH3_64bits_digest(s->st);
}

void sc_checksum_free(sc_checksum_state *s)
{
    if (!s)
        return;
    XXH3_freeState(s->st);
    free(s);
}

static sc_status write_full(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return SC_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return SC_OK;
}

static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
    } else if (slash == path) {
        snprintf(dir, cap, "/");
    } else {
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    }
}

sc_status sc_dir_fsync(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? SC_OK : SC_EIO;
}

sc_status sc_file_write_atomic(const char *path, const void *data, size_t len)
{
    /* pid plus a per-process counter: two threads writing the same path must not share a
     * temp file. */
    static _Atomic unsigned long tmp_seq;
    char tmp[PATH_MAX], dir[PATH_MAX];
    unsigned long seq = atomic_fetch_add_explicit(&tmp_seq, 1, memory_order_relaxed);
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path, (long)getpid(), seq) >=
        (int)sizeof(tmp))
        return SC_EINVAL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    sc_status st = write_full(fd, data, len);
    if (st == SC_OK && fsync(fd) != 0)
        st = SC_EIO;
    if (close(fd) != 0 && st == SC_OK)
        st = SC_EIO;
    if (st == SC_OK && rename(tmp, path) != 0)
        st = SC_EIO;
    if (st != SC_OK) {
        unlink(tmp);
        return st;
    }
    dir_of(path, dir, sizeof(dir));
    return sc_dir_fsync(dir);
}

sc_status sc_file_stream(const char *path, size_t chunk,
                         void (*fn)(void *ctx, const uint8_t *piece, size_t len), void *ctx,
                         uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SC_EIO;
    uint8_t *buf = malloc(chunk ? chunk : 1);
    sc_status st = buf ? SC_OK : SC_ENOMEM;
    uint64_t total = 0;
    while (st == SC_OK) {
        ssize_t n = read(fd, buf, chunk ? chunk : 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            st = SC_EIO;
        if (n <= 0)
            break;
        fn(ctx, buf, (size_t)n);
        total += (uint64_t)n;
    }
    if (st == SC_OK)
        *size = total;
    free(buf);
    close(fd);
    return st;
}

sc_status sc_file_read_all(const char *path, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return SC_EIO;
    }
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return SC_ENOMEM;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return SC_ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            free(buf);
            close(fd);
            return SC_EIO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *out = buf;
    *len = n;
    return SC_OK;
}

sc_status sc_mmap_open(const char *path, sc_mmap *m)
{
    memset(m, 0, sizeof(*m));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return SC_EIO;
    }
    if (sb.st_size == 0) {
        close(fd);
        m->bytes = sc_slice_make("", 0);
        return SC_OK;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return SC_EIO;
    m->bytes = sc_slice_make(p, (size_t)sb.st_size);
    m->map_len = (size_t)sb.st_size;
    return SC_OK;
}

void sc_mmap_drop_pages(const sc_mmap *m)
{
    if (m->map_len)
        (void)madvise((void *)m->bytes.ptr, m->map_len, MADV_DONTNEED);
}

void sc_mmap_drop_range(const sc_mmap *m, size_t off, size_t len)
{
    if (off >= m->map_len)
        return;
    if (len > m->map_len - off)
        len = m->map_len - off;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)m->bytes.ptr + off) & ~(page - 1);
    uintptr_t e = (uintptr_t)m->bytes.ptr + off + len;
    (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

void sc_mmap_close(sc_mmap *m)
{
    if (m->map_len)
        munmap((void *)m->bytes.ptr, m->map_len);
    memset(m, 0, sizeof(*m));
}

sc_status sc_dir_make(const char *path)
{
    char buf[PATH_MAX];
    if (!path[0])
        return SC_EINVAL; /* the loop below would read past the terminator */
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return SC_EINVAL;
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return SC_EIO;
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return SC_EIO;
    return SC_OK;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

sc_status sc_dir_remove_all(const char *path)
{
    if (!sc_path_exists(path))
        return SC_OK;
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? SC_OK : SC_EIO;
}

int sc_path_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}
