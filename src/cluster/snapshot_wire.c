/* Encoders and decoders of the clustered snapshot message (snapshot_wire.h). */
#include "cluster/snapshot_wire.h"

#include <stdbool.h>
#include <string.h>

#include "cluster/snaprepo.h"

sc_status sc_snap_shard_req_encode(const sc_snap_shard_req *q, sc_wire_buf *b)
{
    sc_wire_put_bytes(b, q->repo.ptr, q->repo.len);
    sc_wire_put_bytes(b, q->snapshot_uuid.ptr, q->snapshot_uuid.len);
    sc_wire_put_bytes(b, q->index.ptr, q->index.len);
    sc_wire_put_uvar(b, q->shard);
    return b->st;
}

sc_status sc_snap_shard_req_decode(const uint8_t *p, size_t n, sc_snap_shard_req *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    q->repo = sc_wire_get_bytes(&r);
    q->snapshot_uuid = sc_wire_get_bytes(&r);
    q->index = sc_wire_get_bytes(&r);
    q->shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    if (r.st == SC_OK && (!q->repo.len || !q->snapshot_uuid.len || !q->index.len))
        return SC_ECORRUPT;
    return sc_wire_reader_finish(&r);
}

/* A blob name: lowercase hex of the repository's length. */
static bool blob_ok(sc_slice s)
{
    if (s.len != SC_SNAPREPO_BLOB_HEX)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (!((s.ptr[i] >= '0' && s.ptr[i] <= '9') || (s.ptr[i] >= 'a' && s.ptr[i] <= 'f')))
            return false;
    return true;
}

/* A file name of a shard folder: no path separator, NUL, "." or "..". */
static bool file_name_ok(sc_slice s)
{
    if (!s.len || s.len > 255 || memchr(s.ptr, '/', s.len) || memchr(s.ptr, '\0', s.len))
        return false;
    return !(s.len == 1 && s.ptr[0] == '.') && !(s.len == 2 && !memcmp(s.ptr, "..", 2));
}

sc_status sc_snap_shard_resp_encode(const sc_snap_shard_resp *r, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, r->n_docs);
    sc_wire_put_uvar(b, r->n_files);
    for (size_t i = 0; i < r->n_files; i++) {
        sc_wire_put_bytes(b, r->files[i].name.ptr, r->files[i].name.len);
        sc_wire_put_bytes(b, r->files[i].blob.ptr, r->files[i].blob.len);
        sc_wire_put_uvar(b, r->files[i].size);
    }
    return b->st;
}

sc_status sc_snap_shard_resp_decode(const uint8_t *p, size_t n, sc_arena *a,
                                    sc_snap_shard_resp *out)
{
    memset(out, 0, sizeof *out);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    out->n_docs = sc_wire_get_uvar(&r);
    /* every file takes at least 3 bytes: a larger count is corrupt */
    out->n_files = (size_t)sc_wire_get_uvar_max(&r, (uint64_t)(r.end - r.p) / 3);
    if (r.st != SC_OK)
        return r.st;
    out->files = sc_arena_calloc(a, out->n_files ? out->n_files : 1, sizeof *out->files);
    if (!out->files)
        return SC_ENOMEM;
    for (size_t i = 0; i < out->n_files && r.st == SC_OK; i++) {
        sc_snap_shard_file *f = &out->files[i];
        f->name = sc_wire_get_bytes(&r);
        f->blob = sc_wire_get_bytes(&r);
        f->size = sc_wire_get_uvar(&r);
        if (r.st == SC_OK && (!file_name_ok(f->name) || !blob_ok(f->blob)))
            return SC_ECORRUPT;
    }
    return sc_wire_reader_finish(&r);
}
