/* The shard write-ahead log; format and contracts in translog.h. */
#include "shard/translog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/varint.h"
#include "base/vec.h"

#define TLOG_MAGIC "SCTLOG01"
#define HEADER_BYTES 16
#define ENTRY_HEAD_BYTES 12
#define MAX_PAYLOAD (256u * 1024 * 1024)

struct sc_translog {
    char *dir;
    uint64_t min_gen;
    uint64_t gen; /* appending generation */
    int fd;
    pthread_mutex_t mu;      /* buffer, counters */
    pthread_mutex_t sync_mu; /* serializes syncs (and roll) */
    sc_buf buf;              /* appended, not yet written */
    uint64_t appended;       /* total bytes ever appended (locations) */
    uint64_t synced;         /* appended bytes known durable */
    uint64_t kept_bytes;     /* bytes in files of kept generations */
    uint64_t replayed_bytes; /* during replay: bytes read so far (sc_translog_replayed_bytes) */
    uint64_t n_ops;
    sc_status sticky;
};

static void tlog_path(const sc_translog *t, uint64_t gen, char *out, size_t cap)
{
    snprintf(out, cap, "%s/translog-%" PRIu64 ".tlog", t->dir, gen);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static sc_status write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return SC_EIO;
        }
        p += w;
        n -= (size_t)w;
    }
    return SC_OK;
}

/* Creates generation gen with its header, fsynced, and makes it the appending file. */
static sc_status create_gen(sc_translog *t, uint64_t gen)
{
    char path[4096];
    tlog_path(t, gen, path, sizeof(path));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return SC_EIO;
    uint8_t h[HEADER_BYTES];
    memcpy(h, TLOG_MAGIC, 8);
    put_u64(h + 8, gen);
    if (write_all(fd, h, sizeof(h)) != SC_OK || fdatasync(fd) != 0) {
        close(fd);
        return SC_EIO;
    }
    if (sc_dir_fsync(t->dir) != SC_OK) {
        close(fd);
        return SC_EIO;
    }
    if (t->fd >= 0)
        close(t->fd);
    t->fd = fd;
    t->gen = gen;
    t->kept_bytes += HEADER_BYTES;
    return SC_OK;
}

sc_status sc_translog_open(const char *dir, uint64_t min_gen, sc_translog **out)
{
    *out = NULL;
    sc_translog *t = calloc(1, sizeof(*t));
    if (!t)
        return SC_ENOMEM;
    t->dir = strdup(dir);
    t->fd = -1;
    t->min_gen = min_gen ? min_gen : 1;
    t->gen = t->min_gen;
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->sync_mu, NULL);
    if (!t->dir) {
        sc_translog_close(t);
        return SC_ENOMEM;
    }
    *out = t;
    return SC_OK;
}

static sc_status decode_payload(const uint8_t *p, const uint8_t *end, sc_translog_op *op)
{
    if (p >= end)
        return SC_ECORRUPT;
    op->type = *p++;
    if (op->type != SC_TRANSLOG_INDEX && op->type != SC_TRANSLOG_DELETE)
        return SC_ECORRUPT;
    uint64_t v, n;
    SC_TRY(sc_varint_get(&p, end, &v));
    op->seq_no = sc_zigzag_decode(v);
    SC_TRY(sc_varint_get(&p, end, &v));
    op->primary_term = (int64_t)v;
    SC_TRY(sc_varint_get(&p, end, &v));
    op->version = (int64_t)v;
    SC_TRY(sc_varint_get(&p, end, &n));
    if (n > (uint64_t)(end - p))
        return SC_ECORRUPT;
    op->id = sc_slice_make(p, n);
    p += n;
    SC_TRY(sc_varint_get(&p, end, &n));
    if (n != (uint64_t)(end - p))
        return SC_ECORRUPT;
    op->source = sc_slice_make(p, n);
    return SC_OK;
}

/* Replays one generation file. *cut_at receives the offset of a torn/corrupt entry, or the
 * file size when the file is clean. */
static sc_status replay_file(sc_translog *t, uint64_t gen, const char *path,
                             sc_status (*fn)(void *, const sc_translog_op *), void *ctx,
                             uint64_t *n_ops, size_t *cut_at, size_t *file_len)
{
    uint8_t *data = NULL;
    size_t len = 0;
    SC_TRY(sc_file_read_all(path, &data, &len));
    *file_len = len;
    sc_status st = SC_OK;
    size_t off = HEADER_BYTES;
    if (len < HEADER_BYTES) {
        *cut_at = 0; /* crashed while creating: rewrite the header */
        free(data);
        return SC_OK;
    }
    if (memcmp(data, TLOG_MAGIC, 8) != 0 || get_u64(data + 8) != gen) {
        free(data);
        return SC_ECORRUPT;
    }
    while (off < len) {
        if (len - off < ENTRY_HEAD_BYTES)
            break;
        uint32_t plen = get_u32(data + off);
        uint64_t sum = get_u64(data + off + 4);
        if (plen > MAX_PAYLOAD || len - off - ENTRY_HEAD_BYTES < plen)
            break;
        const uint8_t *p = data + off + ENTRY_HEAD_BYTES;
        if (sc_checksum(p, plen) != sum)
            break;
        sc_translog_op op;
        if (decode_payload(p, p + plen, &op) != SC_OK)
            break;
        t->replayed_bytes = t->kept_bytes + off + ENTRY_HEAD_BYTES + plen;
        st = fn ? fn(ctx, &op) : SC_OK;
        if (st != SC_OK)
            break;
        (*n_ops)++;
        t->n_ops++;
        off += ENTRY_HEAD_BYTES + plen;
    }
    *cut_at = off;
    free(data);
    return st;
}

uint64_t sc_translog_replayed_bytes(const sc_translog *t)
{
    return t->replayed_bytes;
}

uint64_t sc_translog_replay_bytes(sc_translog *t)
{
    uint64_t total = 0;
    char path[4096];
    for (uint64_t g = t->min_gen;; g++) {
        tlog_path(t, g, path, sizeof(path));
        struct stat stb;
        if (stat(path, &stb) != 0)
            break;
        total += (uint64_t)stb.st_size;
    }
    return total;
}

sc_status sc_translog_replay(sc_translog *t, sc_status (*fn)(void *ctx, const sc_translog_op *op),
                             void *ctx, uint64_t *n_ops, uint64_t *truncated_bytes)
{
    uint64_t ops = 0, cut_total = 0;
    uint64_t gen = t->min_gen;
    uint64_t last_existing = 0;
    char path[4096];
    /* Find the last existing generation so that we know which file may have a torn tail. */
    for (uint64_t g = t->min_gen;; g++) {
        tlog_path(t, g, path, sizeof(path));
        if (!sc_path_exists(path))
            break;
        last_existing = g;
    }
    t->kept_bytes = 0;
    for (gen = t->min_gen; last_existing && gen <= last_existing; gen++) {
        tlog_path(t, gen, path, sizeof(path));
        size_t cut_at = 0, flen = 0;
        SC_TRY(replay_file(t, gen, path, fn, ctx, &ops, &cut_at, &flen));
        if (cut_at < flen || cut_at == 0) {
            if (gen != last_existing)
                return SC_ECORRUPT;
            if (cut_at == 0) {
                SC_TRY(create_gen(t, gen));
                cut_total += flen;
                continue;
            }
            if (truncate(path, (off_t)cut_at) != 0)
                return SC_EIO;
            cut_total += flen - cut_at;
            flen = cut_at;
        }
        t->kept_bytes += flen;
    }
    if (!last_existing) {
        SC_TRY(create_gen(t, t->min_gen));
    } else if (t->fd < 0 || t->gen != last_existing) {
        tlog_path(t, last_existing, path, sizeof(path));
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
            return SC_EIO;
        if (fdatasync(fd) != 0) { /* the truncation must be durable before new appends */
            close(fd);
            return SC_EIO;
        }
        if (t->fd >= 0)
            close(t->fd);
        t->fd = fd;
        t->gen = last_existing;
    }
    if (n_ops)
        *n_ops = ops;
    if (truncated_bytes)
        *truncated_bytes = cut_total;
    return SC_OK;
}

sc_status sc_translog_append(sc_translog *t, const sc_translog_op *op, uint64_t *location)
{
    if (op->id.len > 1u << 20 || op->source.len > MAX_PAYLOAD - (2u << 20))
        return SC_EINVAL;
    uint8_t head[5 * SC_VARINT_MAX_BYTES + 1];
    size_t hn = 0;
    head[hn++] = op->type;
    hn += sc_varint_put(head + hn, sc_zigzag_encode(op->seq_no));
    hn += sc_varint_put(head + hn, (uint64_t)op->primary_term);
    hn += sc_varint_put(head + hn, (uint64_t)op->version);
    hn += sc_varint_put(head + hn, op->id.len);
    uint8_t mid[SC_VARINT_MAX_BYTES];
    size_t mn = sc_varint_put(mid, op->source.len);
    size_t plen = hn + op->id.len + mn + op->source.len;
    pthread_mutex_lock(&t->mu);
    sc_status st = t->sticky;
    if (st == SC_OK)
        st = sc_vec_reserve(&t->buf, ENTRY_HEAD_BYTES + plen);
    if (st != SC_OK) {
        pthread_mutex_unlock(&t->mu);
        return st;
    }
    uint8_t *e = t->buf.ptr + t->buf.len;
    uint8_t *p = e + ENTRY_HEAD_BYTES;
    memcpy(p, head, hn);
    if (op->id.len)
        memcpy(p + hn, op->id.ptr, op->id.len);
    memcpy(p + hn + op->id.len, mid, mn);
    if (op->source.len)
        memcpy(p + hn + op->id.len + mn, op->source.ptr, op->source.len);
    put_u32(e, (uint32_t)plen);
    put_u64(e + 4, sc_checksum(p, plen));
    t->buf.len += ENTRY_HEAD_BYTES + plen;
    t->appended += ENTRY_HEAD_BYTES + plen;
    t->n_ops++;
    if (location)
        *location = t->appended;
    pthread_mutex_unlock(&t->mu);
    return SC_OK;
}

/* Writes out and fsyncs what is buffered. Caller holds sync_mu. */
static sc_status sync_locked(sc_translog *t)
{
    pthread_mutex_lock(&t->mu);
    sc_buf out = t->buf;
    uint64_t upto = t->appended;
    memset(&t->buf, 0, sizeof(t->buf));
    sc_status st = t->sticky;
    pthread_mutex_unlock(&t->mu);
    if (st == SC_OK && out.len)
        st = write_all(t->fd, out.ptr, out.len);
    if (st == SC_OK && upto != t->synced && fdatasync(t->fd) != 0)
        st = SC_EIO;
    pthread_mutex_lock(&t->mu);
    if (st == SC_OK) {
        t->synced = upto;
        t->kept_bytes += out.len;
    } else {
        t->sticky = st;
    }
    pthread_mutex_unlock(&t->mu);
    sc_vec_free(&out);
    return st;
}

sc_status sc_translog_sync_to(sc_translog *t, uint64_t location)
{
    pthread_mutex_lock(&t->sync_mu);
    sc_status st;
    pthread_mutex_lock(&t->mu);
    int done = t->synced >= location;
    st = t->sticky;
    pthread_mutex_unlock(&t->mu);
    if (!done && st == SC_OK)
        st = sync_locked(t);
    pthread_mutex_unlock(&t->sync_mu);
    return st;
}

sc_status sc_translog_sync(sc_translog *t)
{
    pthread_mutex_lock(&t->mu);
    uint64_t loc = t->appended;
    pthread_mutex_unlock(&t->mu);
    return sc_translog_sync_to(t, loc);
}

sc_status sc_translog_roll(sc_translog *t, uint64_t *new_gen)
{
    pthread_mutex_lock(&t->sync_mu);
    sc_status st = sync_locked(t);
    if (st == SC_OK)
        st = create_gen(t, t->gen + 1);
    if (st == SC_OK && new_gen)
        *new_gen = t->gen;
    pthread_mutex_unlock(&t->sync_mu);
    return st;
}

sc_status sc_translog_trim(sc_translog *t, uint64_t below_gen)
{
    char path[4096];
    sc_status st = SC_OK;
    pthread_mutex_lock(&t->sync_mu);
    DIR *d = opendir(t->dir);
    if (!d)
        st = SC_EIO;
    struct dirent *e;
    while (st == SC_OK && (e = readdir(d)) != NULL) {
        unsigned long long g;
        char tail[8];
        if (sscanf(e->d_name, "translog-%llu.%7s", &g, tail) != 2 || strcmp(tail, "tlog") != 0)
            continue;
        if (g >= below_gen || g >= t->gen)
            continue;
        tlog_path(t, g, path, sizeof(path));
        struct stat sb;
        if (stat(path, &sb) == 0) {
            if (unlink(path) != 0) {
                st = SC_EIO;
                break;
            }
            if (g >= t->min_gen) {
                pthread_mutex_lock(&t->mu);
                t->kept_bytes -= (uint64_t)sb.st_size < t->kept_bytes ? (uint64_t)sb.st_size
                                                                      : t->kept_bytes;
                pthread_mutex_unlock(&t->mu);
            }
        }
    }
    if (d)
        closedir(d);
    if (st == SC_OK && below_gen > t->min_gen)
        t->min_gen = below_gen < t->gen ? below_gen : t->gen;
    pthread_mutex_lock(&t->mu);
    t->n_ops = 0;
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_unlock(&t->sync_mu);
    if (st == SC_OK)
        st = sc_dir_fsync(t->dir);
    return st;
}

uint64_t sc_translog_generation(const sc_translog *t)
{
    return t->gen;
}

uint64_t sc_translog_size_bytes(sc_translog *t)
{
    pthread_mutex_lock(&t->mu);
    uint64_t n = t->kept_bytes + t->buf.len;
    pthread_mutex_unlock(&t->mu);
    return n;
}

uint64_t sc_translog_n_ops(sc_translog *t)
{
    pthread_mutex_lock(&t->mu);
    uint64_t n = t->n_ops;
    pthread_mutex_unlock(&t->mu);
    return n;
}

void sc_translog_close(sc_translog *t)
{
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    sc_vec_free(&t->buf);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->sync_mu);
    free(t->dir);
    free(t);
}
