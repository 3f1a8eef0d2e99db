/* File-based peer recovery (replication.h), Elasticsearch's phase 1 on scry's commits: the
 * primary pins a commit (sc_shard_commit_pin, as a snapshot does) and serves its files in
 * checksummed chunks; the copy pulls them into a staging folder inside its shard directory,
 * verifies every chunk and every whole file, installs them as its commit
 * (sc_shard_install_commit: whatever the copy held before, including operations the primary
 * never acknowledged, is gone) and asks the primary to finish: the primary releases the pin
 * and sends the operations after the commit (every id whose seq_no is above the commit's
 * max_seq_no, from its id table: the translog may have been trimmed since), then adds the
 * copy to the in-sync set. Writes continue all along: the copy is in the routing table, so
 * every write is also forwarded to it (as Elasticsearch does); what it applied before the
 * install is replaced, and the finishing step waits for the writes that started before it
 * (operation permits) and resends everything above the commit, so nothing falls between. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/replication_internal.h"
#include "shard/shard.h"

#define MAX_PINS 32
#define PIN_IDLE_NS (120ull * 1000000000) /* a pin nobody read for this long is released */
#define CHUNK_BYTES (512u * 1024)
#define CHUNK_TIMEOUT_MS 30000
#define START_TIMEOUT_MS 60000
#define FINISH_TIMEOUT_MS 600000
#define CHUNK_TRIES 3
/* An empty copy of a primary with fewer live documents than this is recovered by operations
 * (cheaper than a commit and a copy for a small shard). */
#define FILES_MIN_DOCS 1000

typedef struct pin {
    bool used;
    uint64_t id;
    char alloc_id[SC_ALLOC_ID_MAX];
    sc_shard_pinned pinned;
    sc_repl_file *files;
    size_t n_files;
    uint64_t last_ns;
    int busy; /* chunk requests reading it */
} pin;

struct sc_repl_files {
    sc_repl *r;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next_id;
    pin pins[MAX_PINS];
};

static sc_shard *local_shard(sc_index *ix, uint32_t shard)
{
    if (!ix || shard >= ix->settings.number_of_shards || !ix->shards)
        return NULL;
    return ix->shards[shard];
}

/* Releases p (mu held; waits for chunk readers). */
static void pin_drop(sc_repl_files *f, pin *p)
{
    while (p->busy)
        pthread_cond_wait(&f->cv, &f->mu);
    sc_shard_pinned_release(&p->pinned);
    free(p->files);
    memset(p, 0, sizeof *p);
}

static void checksum_piece(void *cs, const uint8_t *piece, size_t len)
{
    sc_checksum_update(cs, piece, len);
}

static sc_status file_checksum(const char *path, uint64_t *size, uint64_t *sum)
{
    sc_checksum_state *cs = sc_checksum_new();
    if (!cs)
        return SC_ENOMEM;
    sc_status st = sc_file_stream(path, 1 << 16, checksum_piece, cs, size);
    if (st == SC_OK)
        *sum = sc_checksum_digest(cs);
    sc_checksum_free(cs);
    return st;
}

/* ---- the primary's side ---- */

static sc_status h_start(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_repl_files *f = ctx;
    sc_slice name, aid;
    uint32_t shard;
    uint64_t copy_ids;
    if (sc_repl_files_start_decode(body.ptr, body.len, &name, &shard, &aid, &copy_ids) != SC_OK) {
        snprintf(errmsg, cap, "bad file recovery request");
        return SC_ECORRUPT;
    }
    char index[256], alloc_id[SC_ALLOC_ID_MAX], node[SC_ALLOC_NODE_MAX];
    snprintf(index, sizeof index, "%.*s", (int)name.len, (const char *)name.ptr);
    snprintf(alloc_id, sizeof alloc_id, "%.*s", (int)aid.len, (const char *)aid.ptr);
    int64_t term;
    sc_status st = sc__repl_wait_copy(f->r, index, shard, alloc_id, &term, node);
    if (st != SC_OK) {
        snprintf(errmsg, cap, "[%s][%u] is not primary here or copy %s is unknown", index, shard,
                 alloc_id);
        return st;
    }
    sc_index *ix = sc_node_index(sc_placement_node(sc__repl_placement(f->r)), index);
    sc_shard *sd = local_shard(ix, shard);
    if (!sd) {
        sc_index_unref(ix);
        snprintf(errmsg, cap, "[%s][%u] no open primary copy here", index, shard);
        return SC_ELIMIT;
    }
    sc_repl_files_plan plan = {0};
    if (copy_ids == 0) {
        sc_shard_stats ss;
        if (sc_shard_stats_get(sd, false, &ss) == SC_OK) {
            plan.by_files = ss.n_docs + ss.buffered_docs >= FILES_MIN_DOCS;
            sc_shard_stats_fini(&ss);
        }
    } else {
        plan.by_files = true; /* the copy may hold operations the primary never acknowledged */
    }
    if (!plan.by_files) {
        sc_index_unref(ix);
        sc_repl_files_plan_encode(out, &plan);
        return out->st;
    }
    uint64_t now = sc_clock_now_ns();
    pthread_mutex_lock(&f->mu);
    pin *slot = NULL;
    for (size_t i = 0; i < MAX_PINS; i++) {
        pin *p = &f->pins[i];
        /* a former attempt of this copy, or a pin left idle, goes */
        if (p->used && (!strcmp(p->alloc_id, alloc_id) || now - p->last_ns > PIN_IDLE_NS))
            pin_drop(f, p);
        if (!p->used && !slot)
            slot = p;
    }
    uint64_t id = ++f->next_id;
    if (slot) {
        slot->used = true;
        slot->id = id;
        slot->busy = 1; /* being filled */
        slot->last_ns = now;
        snprintf(slot->alloc_id, sizeof slot->alloc_id, "%s", alloc_id);
    }
    pthread_mutex_unlock(&f->mu);
    if (!slot) {
        sc_index_unref(ix);
        snprintf(errmsg, cap, "[%s][%u] too many file recoveries at once", index, shard);
        return SC_ELIMIT;
    }
    char pin_name[64];
    snprintf(pin_name, sizeof pin_name, "%srecovery-%" PRIu64, SC_SHARD_PIN_PREFIX, id);
    sc_shard_pinned pinned;
    st = sc_shard_commit_pin(sd, pin_name, &pinned);
    sc_repl_file *files = NULL;
    if (st == SC_OK) {
        files = calloc(pinned.n_files ? pinned.n_files : 1, sizeof *files);
        if (!files)
            st = SC_ENOMEM;
    }
    uint64_t bytes = 0;
    for (size_t i = 0; st == SC_OK && i < pinned.n_files; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", pinned.dir, pinned.files[i]);
        if (strlen(pinned.files[i]) >= SC_REPL_FILE_NAME_MAX)
            st = SC_ELIMIT;
        if (st == SC_OK) {
            snprintf(files[i].name, sizeof files[i].name, "%s", pinned.files[i]);
            st = file_checksum(path, &files[i].size, &files[i].checksum);
            bytes += files[i].size;
        }
    }
    sc_index_unref(ix);
    pthread_mutex_lock(&f->mu);
    slot->busy = 0;
    if (st == SC_OK) {
        slot->pinned = pinned;
        slot->files = files;
        slot->n_files = pinned.n_files;
        plan.rec_id = id;
        plan.max_seq_no = pinned.max_seq_no;
        plan.files = files;
        plan.n_files = pinned.n_files;
        sc_repl_files_plan_encode(out, &plan); /* under mu: a drop would free files */
    } else {
        sc_shard_pinned_release(&pinned);
        free(files);
        memset(slot, 0, sizeof *slot);
    }
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (st != SC_OK) {
        snprintf(errmsg, cap, "[%s][%u] cannot pin a commit: %s", index, shard, sc_status_str(st));
        return st;
    }
    sc_log(SC_LOG_INFO, "replication",
           "[%s][%u] file recovery %" PRIu64 " of copy %s on [%s]: commit up to seq_no %" PRId64
           ", %zu files, %.1f MB",
           index, shard, id, alloc_id, node, plan.max_seq_no, plan.n_files,
           (double)bytes / 1048576.0);
    return out->st;
}

static pin *pin_find(sc_repl_files *f, uint64_t id)
{
    for (size_t i = 0; i < MAX_PINS; i++)
        if (f->pins[i].used && f->pins[i].id == id && f->pins[i].files)
            return &f->pins[i];
    return NULL;
}

static sc_status h_chunk(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_repl_files *f = ctx;
    uint64_t id, offset;
    uint32_t file, max_len;
    if (sc_repl_chunk_req_decode(body.ptr, body.len, &id, &file, &offset, &max_len) != SC_OK) {
        snprintf(errmsg, cap, "bad file chunk request");
        return SC_ECORRUPT;
    }
    pthread_mutex_lock(&f->mu);
    pin *p = pin_find(f, id);
    char path[8192] = "";
    uint64_t size = 0;
    if (p && file < p->n_files) {
        p->busy++;
        p->last_ns = sc_clock_now_ns();
        snprintf(path, sizeof path, "%s/%s", p->pinned.dir, p->files[file].name);
        size = p->files[file].size;
    }
    pthread_mutex_unlock(&f->mu);
    if (!path[0]) {
        snprintf(errmsg, cap, "file recovery %" PRIu64 " or its file %u is unknown (released?)", id,
                 file);
        return SC_ENOTFOUND;
    }
    sc_status st = SC_OK;
    size_t want =
        offset >= size ? 0 : (size - offset < max_len ? (size_t)(size - offset) : max_len);
    uint8_t *buf = malloc(want ? want : 1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!buf)
        st = SC_ENOMEM;
    else if (fd < 0)
        st = SC_EIO;
    size_t got = 0;
    while (st == SC_OK && got < want) {
        ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            st = SC_EIO;
        else
            got += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    if (st == SC_OK)
        sc_repl_chunk_encode(out, buf, want, sc_checksum(buf, want));
    else
        snprintf(errmsg, cap, "cannot read %s: %s", path, sc_status_str(st));
    free(buf);
    pthread_mutex_lock(&f->mu);
    p->busy--;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return st == SC_OK ? out->st : st;
}

static sc_status h_finish(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_repl_files *f = ctx;
    sc_slice name, aid;
    uint32_t shard;
    uint64_t id;
    int64_t after;
    if (sc_repl_finish_decode(body.ptr, body.len, &name, &shard, &aid, &id, &after) != SC_OK) {
        snprintf(errmsg, cap, "bad file recovery finish request");
        return SC_ECORRUPT;
    }
    char index[256], alloc_id[SC_ALLOC_ID_MAX];
    snprintf(index, sizeof index, "%.*s", (int)name.len, (const char *)name.ptr);
    snprintf(alloc_id, sizeof alloc_id, "%.*s", (int)aid.len, (const char *)aid.ptr);
    pthread_mutex_lock(&f->mu);
    pin *p = pin_find(f, id);
    bool known = p && !strcmp(p->alloc_id, alloc_id);
    if (known)
        pin_drop(f, p);
    pthread_mutex_unlock(&f->mu);
    if (!known) {
        snprintf(errmsg, cap, "file recovery %" PRIu64 " of copy %s is unknown here", id, alloc_id);
        return SC_ENOTFOUND;
    }
    return sc__repl_recover_ops(f->r, index, shard, alloc_id, after, out, errmsg, cap);
}

sc_status sc__repl_files_start(sc_repl *r, sc_transport *t, sc_repl_files **out)
{
    sc_repl_files *f = calloc(1, sizeof *f);
    if (!f)
        return SC_ENOMEM;
    f->r = r;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    *out = f;
    sc_status st = sc_transport_register(t, SC_MSG_REPL_FILES_START, h_start, f);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_REPL_FILES_CHUNK, h_chunk, f);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_REPL_FILES_FINISH, h_finish, f);
    return st;
}

void sc__repl_files_free(sc_repl_files *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < MAX_PINS; i++)
        if (f->pins[i].used)
            pin_drop(f, &f->pins[i]);
    pthread_mutex_unlock(&f->mu);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}

/* ---- the copy's side ---- */

static sc_status request(sc_repl *r, const char *host, uint16_t port, uint16_t type,
                         const sc_wire_buf *b, uint32_t timeout_ms, uint8_t **raw, size_t *len,
                         char *why, size_t cap)
{
    *raw = NULL;
    *len = 0;
    if (b->st != SC_OK)
        return b->st;
    sc_transport_error err = {0};
    sc_status st =
        sc_transport_request(sc_placement_transport(sc__repl_placement(r)), host, port, type,
                             sc_slice_make(b->ptr, b->len), timeout_ms, raw, len, &err);
    if (st != SC_OK)
        snprintf(why, cap, "%s", err.message[0] ? err.message : sc_status_str(st));
    return st;
}

/* Fetches one file of the plan into dir/name, checking every chunk and the whole file. */
static sc_status fetch_file(sc_repl *r, const char *host, uint16_t port, uint64_t rec_id,
                            uint32_t idx, const sc_repl_file *file, const char *dir, char *why,
                            size_t cap)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file->name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(why, cap, "cannot create %s", path);
        return SC_EIO;
    }
    sc_checksum_state *cs = sc_checksum_new();
    sc_status st = cs ? SC_OK : SC_ENOMEM;
    uint64_t off = 0;
    while (st == SC_OK && off < file->size) {
        if (sc__repl_stopping(r)) {
            st = SC_ECANCELLED;
            snprintf(why, cap, "the node is stopping");
            break;
        }
        sc_wire_buf b;
        sc_wire_buf_init(&b);
        sc_repl_chunk_req_encode(&b, rec_id, idx, off, CHUNK_BYTES);
        uint8_t *raw = NULL;
        size_t len = 0;
        sc_slice data = {0};
        /* a failed or damaged chunk is asked again (a new connection each time) */
        for (int t = 0; t < CHUNK_TRIES; t++) {
            free(raw);
            st = request(r, host, port, SC_MSG_REPL_FILES_CHUNK, &b, CHUNK_TIMEOUT_MS, &raw, &len,
                         why, cap);
            if (st == SC_ENOTFOUND)
                break; /* the pin is gone: start over */
            uint64_t sum = 0;
            if (st == SC_OK)
                st = sc_repl_chunk_decode(raw, len, &data, &sum);
            if (st == SC_OK && (sc_checksum(data.ptr, data.len) != sum || !data.len ||
                                data.len > file->size - off)) {
                st = SC_ECORRUPT;
                snprintf(why, cap, "chunk of %s at %" PRIu64 " failed its checksum", file->name,
                         off);
            }
            if (st == SC_OK)
                break;
        }
        sc_wire_buf_fini(&b);
        size_t done = 0;
        while (st == SC_OK && done < data.len) {
            ssize_t n = write(fd, data.ptr + done, data.len - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                st = SC_EIO;
                snprintf(why, cap, "cannot write %s", path);
            } else {
                done += (size_t)n;
            }
        }
        if (st == SC_OK) {
            sc_checksum_update(cs, data.ptr, data.len);
            off += data.len;
        }
        free(raw);
    }
    if (st == SC_OK && sc_checksum_digest(cs) != file->checksum) {
        st = SC_ECORRUPT;
        snprintf(why, cap, "%s does not match its checksum", file->name);
    }
    if (st == SC_OK && fsync(fd) != 0) {
        st = SC_EIO;
        snprintf(why, cap, "cannot sync %s", path);
    }
    sc_checksum_free(cs);
    close(fd);
    return st;
}

static sc_status by_ops(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                        const char *host, uint16_t port, char *why, size_t cap)
{
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_recover_encode(&b, index, shard, alloc_id);
    uint8_t *raw;
    size_t len;
    sc_status st =
        request(r, host, port, SC_MSG_REPL_RECOVER, &b, FINISH_TIMEOUT_MS, &raw, &len, why, cap);
    free(raw);
    sc_wire_buf_fini(&b);
    return st;
}

sc_status sc__repl_recover_copy(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                                const char *host, uint16_t port, char *why, size_t cap)
{
    sc_index *ix = sc_node_index(sc_placement_node(sc__repl_placement(r)), index);
    sc_shard *sd = local_shard(ix, shard);
    if (!sd) {
        sc_index_unref(ix);
        snprintf(why, cap, "the local copy is not open");
        return SC_ENOTFOUND;
    }
    sc_shard_stats ss;
    uint64_t copy_ids = 0;
    if (sc_shard_stats_get(sd, false, &ss) == SC_OK) {
        copy_ids = ss.max_seq_no >= 0 ? (uint64_t)ss.max_seq_no + 1 : 0;
        if (ss.n_docs + ss.n_deleted + ss.buffered_docs > copy_ids)
            copy_ids = ss.n_docs + ss.n_deleted + ss.buffered_docs;
        sc_shard_stats_fini(&ss);
    }
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_files_start_encode(&b, index, shard, alloc_id, copy_ids);
    uint8_t *raw;
    size_t len;
    sc_status st =
        request(r, host, port, SC_MSG_REPL_FILES_START, &b, START_TIMEOUT_MS, &raw, &len, why, cap);
    sc_wire_buf_fini(&b);
    sc_repl_files_plan plan = {0};
    if (st == SC_OK && (st = sc_repl_files_plan_decode(raw, len, &plan)) != SC_OK)
        snprintf(why, cap, "bad file recovery plan: %s", sc_status_str(st));
    free(raw);
    if (st != SC_OK || !plan.by_files) {
        sc_repl_files_plan_fini(&plan);
        sc_index_unref(ix);
        return st == SC_OK ? by_ops(r, index, shard, alloc_id, host, port, why, cap) : st;
    }
    uint64_t t0 = sc_clock_now_ns(), bytes = 0;
    char staging[8192];
    snprintf(staging, sizeof staging, "%s/%srecv", sc_shard_dir(sd), SC_SHARD_PIN_PREFIX);
    if (sc_dir_remove_all(staging) != SC_OK) { /* removed at the next open otherwise */
    }
    st = sc_dir_make(staging);
    if (st != SC_OK)
        snprintf(why, cap, "cannot create %s", staging);
    for (size_t i = 0; st == SC_OK && i < plan.n_files; i++) {
        st = fetch_file(r, host, port, plan.rec_id, (uint32_t)i, &plan.files[i], staging, why, cap);
        bytes += plan.files[i].size;
    }
    if (st == SC_OK)
        st = sc_dir_fsync(staging);
    if (st == SC_OK) {
        sc_shard_error err;
        st = sc_shard_install_commit(sd, staging, &err);
        if (st != SC_OK)
            snprintf(why, cap, "cannot install the commit: %s", err.reason);
    }
    if (sc_dir_remove_all(staging) != SC_OK) { /* removed at the next open otherwise */
    }
    uint64_t t1 = sc_clock_now_ns();
    if (st == SC_OK) {
        sc_wire_buf_init(&b);
        sc_repl_finish_encode(&b, index, shard, alloc_id, plan.rec_id, plan.max_seq_no);
        st = request(r, host, port, SC_MSG_REPL_FILES_FINISH, &b, FINISH_TIMEOUT_MS, &raw, &len,
                     why, cap);
        free(raw);
        sc_wire_buf_fini(&b);
    }
    sc_log(st == SC_OK ? SC_LOG_INFO : SC_LOG_WARN, "replication",
           "[%s][%u] copy %s recovered by files: %zu files, %.1f MB in %.2f s, then operations "
           "after seq_no %" PRId64 " in %.2f s%s%s",
           index, shard, alloc_id, plan.n_files, (double)bytes / 1048576.0, (double)(t1 - t0) / 1e9,
           plan.max_seq_no, (double)(sc_clock_now_ns() - t1) / 1e9,
           st == SC_OK ? "" : "; failed: ", st == SC_OK ? "" : why);
    sc_repl_files_plan_fini(&plan);
    sc_index_unref(ix);
    return st;
}
