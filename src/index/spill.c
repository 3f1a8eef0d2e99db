/* Spill files of the streaming merge (spill.h): plain append-only temporary files, read back
 * once in 1 MiB pieces. */
#include "index/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void sc__spill_init(sc__spill *s, const char *dir, const char *segment, const char *tag,
                    uint64_t *total)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->total = total;
    if ((size_t)snprintf(s->path, sizeof(s->path), "%s/.%s.%s.spill.tmp", dir, segment, tag) >=
        sizeof(s->path))
        s->st = SC_EINVAL;
}

static bool write_all(int fd, const uint8_t *p, size_t n, uint64_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
        at += (uint64_t)w;
    }
    return true;
}

void sc__spill_buf(sc__spill *s, sc_buf *b)
{
    if (s->st != SC_OK || !b->len)
        return;
    if (s->fd < 0) {
        s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (s->fd < 0) {
            s->st = SC_EIO;
            return;
        }
    }
    if (!write_all(s->fd, b->ptr, b->len, s->len)) {
        s->st = SC_EIO;
        return;
    }
    s->len += b->len;
    if (s->total)
        *s->total += b->len;
    sc_vec_clear(b);
}

void sc__spill_copy(sc__spill *s, sc__out *o)
{
    if (s->st != SC_OK) {
        o->st = o->st == SC_OK ? s->st : o->st;
        return;
    }
    if (!s->len)
        return;
    size_t cap = (size_t)1 << 20;
    uint8_t *piece = malloc(cap);
    if (!piece) {
        s->st = o->st = SC_ENOMEM;
        return;
    }
    for (uint64_t at = 0; at < s->len && o->st == SC_OK;) {
        size_t want = s->len - at < cap ? (size_t)(s->len - at) : cap;
        ssize_t r = pread(s->fd, piece, want, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            s->st = o->st = SC_EIO;
            break;
        }
        sc__out_write(o, piece, (size_t)r);
        at += (uint64_t)r;
    }
    free(piece);
    /* the file is reused for the next term or field: start it over, and drop its pages */
    if (s->st == SC_OK && ftruncate(s->fd, 0) != 0)
        s->st = SC_EIO;
    s->len = 0;
}

void sc__spill_fini(sc__spill *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        unlink(s->path);
    }
    s->fd = -1;
}
