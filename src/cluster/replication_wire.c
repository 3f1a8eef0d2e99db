/* The encodings of the replication messages (replication.h): a batch of a primary's
 * operations and a peer-recovery request. Decoders are bounds-checked (a count larger than the
 * bytes left is refused before any allocation); fuzzed by tests/fuzz/repl_fuzz.c. */
#include <stdlib.h>
#include <string.h>

#include "cluster/allocation.h"
#include "cluster/replication.h"

void sc_repl_ops_put_header(sc_wire_buf *b, const char *index, uint32_t shard, int64_t term,
                            bool refresh, size_t n_ops)
{
    sc_wire_put_str(b, index);
    sc_wire_put_uvar(b, shard);
    sc_wire_put_uvar(b, (uint64_t)term);
    sc_wire_put_bool(b, refresh);
    sc_wire_put_uvar(b, n_ops);
}

void sc_repl_ops_put_op(sc_wire_buf *b, const sc_shard_op *op)
{
    sc_wire_put_bool(b, op->is_delete);
    sc_wire_put_svar(b, op->seq_no);
    sc_wire_put_uvar(b, (uint64_t)op->primary_term);
    sc_wire_put_uvar(b, (uint64_t)op->version);
    sc_wire_put_bytes(b, op->id.ptr, op->id.len);
    sc_wire_put_bytes(b, op->is_delete ? NULL : op->source.ptr, op->is_delete ? 0 : op->source.len);
}

sc_status sc_repl_ops_decode(const uint8_t *p, size_t n, sc_repl_ops *out)
{
    memset(out, 0, sizeof *out);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    out->index = sc_wire_get_bytes(&r);
    out->shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    out->term = (int64_t)sc_wire_get_uvar_max(&r, INT64_MAX);
    out->refresh = sc_wire_get_bool(&r);
    /* every op takes at least 6 bytes */
    uint64_t n_ops = sc_wire_get_uvar_max(&r, (uint64_t)(r.end - r.p) / 6);
    if (r.st != SC_OK)
        return r.st;
    if (out->index.len == 0 || out->index.len > 255)
        return SC_ECORRUPT;
    out->ops = calloc(n_ops ? n_ops : 1, sizeof *out->ops);
    if (!out->ops)
        return SC_ENOMEM;
    for (uint64_t i = 0; i < n_ops && r.st == SC_OK; i++) {
        sc_shard_op *op = &out->ops[i];
        op->is_delete = sc_wire_get_bool(&r);
        op->seq_no = sc_wire_get_svar(&r);
        op->primary_term = (int64_t)sc_wire_get_uvar_max(&r, INT64_MAX);
        op->version = (int64_t)sc_wire_get_uvar_max(&r, INT64_MAX);
        op->id = sc_wire_get_bytes(&r);
        op->source = sc_wire_get_bytes(&r);
        if (r.st == SC_OK && (op->seq_no < 0 || op->id.len == 0 || op->id.len > 512 ||
                              (op->is_delete && op->source.len)))
            r.st = SC_ECORRUPT;
    }
    out->n_ops = (size_t)n_ops;
    sc_status st = sc_wire_reader_finish(&r);
    if (st != SC_OK)
        sc_repl_ops_fini(out);
    return st;
}

void sc_repl_ops_fini(sc_repl_ops *o)
{
    if (!o)
        return;
    free(o->ops);
    memset(o, 0, sizeof *o);
}

void sc_repl_recover_encode(sc_wire_buf *b, const char *index, uint32_t shard, const char *alloc_id)
{
    sc_wire_put_str(b, index);
    sc_wire_put_uvar(b, shard);
    sc_wire_put_str(b, alloc_id);
}

sc_status sc_repl_recover_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                 sc_slice *alloc_id)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *index = sc_wire_get_bytes(&r);
    *shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    *alloc_id = sc_wire_get_bytes(&r);
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK &&
        (!index->len || index->len > 255 || !alloc_id->len || alloc_id->len >= SC_ALLOC_ID_MAX))
        st = SC_ECORRUPT;
    return st;
}

/* ---- file-based recovery ---- */

void sc_repl_files_start_encode(sc_wire_buf *b, const char *index, uint32_t shard,
                                const char *alloc_id, uint64_t copy_ids)
{
    sc_repl_recover_encode(b, index, shard, alloc_id);
    sc_wire_put_uvar(b, copy_ids);
}

sc_status sc_repl_files_start_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                     sc_slice *alloc_id, uint64_t *copy_ids)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *index = sc_wire_get_bytes(&r);
    *shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    *alloc_id = sc_wire_get_bytes(&r);
    *copy_ids = sc_wire_get_uvar(&r);
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK &&
        (!index->len || index->len > 255 || !alloc_id->len || alloc_id->len >= SC_ALLOC_ID_MAX))
        st = SC_ECORRUPT;
    return st;
}

void sc_repl_files_plan_encode(sc_wire_buf *b, const sc_repl_files_plan *pl)
{
    sc_wire_put_bool(b, pl->by_files);
    if (!pl->by_files)
        return;
    sc_wire_put_uvar(b, pl->rec_id);
    sc_wire_put_svar(b, pl->max_seq_no);
    sc_wire_put_uvar(b, pl->n_files);
    for (size_t i = 0; i < pl->n_files; i++) {
        sc_wire_put_str(b, pl->files[i].name);
        sc_wire_put_uvar(b, pl->files[i].size);
        sc_wire_put_uvar(b, pl->files[i].checksum);
    }
}

/* A file name of a commit: no path separator, no leading dot, printable. */
static bool file_name_ok(sc_slice s)
{
    if (!s.len || s.len >= SC_REPL_FILE_NAME_MAX || s.ptr[0] == '.')
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] == '/' || s.ptr[i] < 0x21 || s.ptr[i] > 0x7e)
            return false;
    return true;
}

sc_status sc_repl_files_plan_decode(const uint8_t *p, size_t n, sc_repl_files_plan *out)
{
    memset(out, 0, sizeof *out);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    out->by_files = sc_wire_get_bool(&r);
    if (out->by_files) {
        out->rec_id = sc_wire_get_uvar(&r);
        out->max_seq_no = sc_wire_get_svar(&r);
        /* every file takes at least 3 bytes */
        uint64_t nf = sc_wire_get_uvar_max(&r, (uint64_t)(r.end - r.p) / 3);
        if (r.st == SC_OK && (out->max_seq_no < -1 || nf > SC_REPL_FILES_MAX))
            r.st = SC_ECORRUPT;
        if (r.st != SC_OK)
            return r.st;
        out->files = calloc(nf ? nf : 1, sizeof *out->files);
        if (!out->files)
            return SC_ENOMEM;
        for (uint64_t i = 0; i < nf && r.st == SC_OK; i++) {
            sc_slice name = sc_wire_get_bytes(&r);
            out->files[i].size = sc_wire_get_uvar(&r);
            out->files[i].checksum = sc_wire_get_uvar(&r);
            if (r.st == SC_OK && !file_name_ok(name))
                r.st = SC_ECORRUPT;
            if (r.st == SC_OK)
                memcpy(out->files[i].name, name.ptr, name.len);
            out->n_files = (size_t)i + 1;
        }
    }
    sc_status st = sc_wire_reader_finish(&r);
    if (st != SC_OK)
        sc_repl_files_plan_fini(out);
    return st;
}

void sc_repl_files_plan_fini(sc_repl_files_plan *pl)
{
    if (!pl)
        return;
    free(pl->files);
    memset(pl, 0, sizeof *pl);
}

void sc_repl_chunk_req_encode(sc_wire_buf *b, uint64_t rec_id, uint32_t file, uint64_t offset,
                              uint32_t max_len)
{
    sc_wire_put_uvar(b, rec_id);
    sc_wire_put_uvar(b, file);
    sc_wire_put_uvar(b, offset);
    sc_wire_put_uvar(b, max_len);
}

sc_status sc_repl_chunk_req_decode(const uint8_t *p, size_t n, uint64_t *rec_id, uint32_t *file,
                                   uint64_t *offset, uint32_t *max_len)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *rec_id = sc_wire_get_uvar(&r);
    *file = (uint32_t)sc_wire_get_uvar_max(&r, SC_REPL_FILES_MAX);
    *offset = sc_wire_get_uvar_max(&r, INT64_MAX);
    *max_len = (uint32_t)sc_wire_get_uvar_max(&r, SC_REPL_CHUNK_MAX);
    return sc_wire_reader_finish(&r);
}

void sc_repl_chunk_encode(sc_wire_buf *b, const void *data, size_t len, uint64_t checksum)
{
    sc_wire_put_bytes(b, data, len);
    sc_wire_put_uvar(b, checksum);
}

sc_status sc_repl_chunk_decode(const uint8_t *p, size_t n, sc_slice *data, uint64_t *checksum)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *data = sc_wire_get_bytes(&r);
    *checksum = sc_wire_get_uvar(&r);
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK && data->len > SC_REPL_CHUNK_MAX)
        st = SC_ECORRUPT;
    return st;
}

void sc_repl_finish_encode(sc_wire_buf *b, const char *index, uint32_t shard, const char *alloc_id,
                           uint64_t rec_id, int64_t after_seq_no)
{
    sc_repl_recover_encode(b, index, shard, alloc_id);
    sc_wire_put_uvar(b, rec_id);
    sc_wire_put_svar(b, after_seq_no);
}

sc_status sc_repl_finish_decode(const uint8_t *p, size_t n, sc_slice *index, uint32_t *shard,
                                sc_slice *alloc_id, uint64_t *rec_id, int64_t *after_seq_no)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *index = sc_wire_get_bytes(&r);
    *shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    *alloc_id = sc_wire_get_bytes(&r);
    *rec_id = sc_wire_get_uvar(&r);
    *after_seq_no = sc_wire_get_svar(&r);
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK && (!index->len || index->len > 255 || !alloc_id->len ||
                        alloc_id->len >= SC_ALLOC_ID_MAX || *after_seq_no < -1))
        st = SC_ECORRUPT;
    return st;
}
