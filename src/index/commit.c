/* Manifest (commit point) and live-docs files (commit.h). Both are small and written whole
 * with sc_file_write_atomic; both end with an xxh3 checksum of everything before it. */
#include "index/commit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/internal.h"

#define MAN_MAGIC "SCRYMAN"
#define DEL_MAGIC "SCRYDEL"
#define COMMIT_VERSION 1u

void sc_manifest_init(sc_manifest *m)
{
    memset(m, 0, sizeof(*m));
}

void sc_manifest_fini(sc_manifest *m)
{
    sc_vec_free(&m->segments);
    sc_vec_free(&m->user_data);
}

sc_status sc_manifest_write(const char *dir, const sc_manifest *m)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, SC_MANIFEST_FILE) >= sizeof(path))
        return SC_EINVAL;
    sc_buf b = {0};
    sc_status st = SC_OK;
    sc__buf_put(&b, MAN_MAGIC, 8, &st);
    sc__buf_u32(&b, COMMIT_VERSION, &st);
    sc__buf_u32(&b, 0, &st);
    sc__buf_u64(&b, m->generation, &st);
    if (m->segments.len > UINT32_MAX || m->user_data.len > UINT32_MAX)
        st = SC_EINVAL;
    sc__buf_u32(&b, (uint32_t)m->segments.len, &st);
    for (size_t i = 0; i < m->segments.len && st == SC_OK; i++) {
        const sc_manifest_segment *s = &m->segments.ptr[i];
        size_t nl = strnlen(s->name, sizeof(s->name));
        if (nl == 0 || nl > SC_SEGMENT_NAME_MAX) {
            st = SC_EINVAL;
            break;
        }
        sc__buf_u8(&b, (uint8_t)nl, &st);
        sc__buf_put(&b, s->name, nl, &st);
        sc__buf_u32(&b, s->n_docs, &st);
        sc__buf_u32(&b, s->n_deleted, &st);
        sc__buf_u64(&b, s->del_gen, &st);
        sc__buf_u64(&b, s->checksum, &st);
    }
    sc__buf_u32(&b, (uint32_t)m->user_data.len, &st);
    sc__buf_put(&b, m->user_data.ptr, m->user_data.len, &st);
    if (st == SC_OK)
        sc__buf_u64(&b, sc_checksum(b.ptr, b.len), &st);
    if (st == SC_OK)
        st = sc_file_write_atomic(path, b.ptr, b.len);
    sc_vec_free(&b);
    return st;
}

/* A segment name becomes a file name in the shard folder: no NUL (it would be cut), no '/'
 * and no leading '.' (it would leave the folder). */
static bool name_ok(const uint8_t *p, size_t n)
{
    if (p[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] == 0 || p[i] == '/')
            return false;
    return true;
}

sc_status sc_manifest_decode(const uint8_t *data, size_t len, sc_manifest *m, uint64_t *offset,
                             const char **why_out)
{
    sc_vec_clear(&m->segments);
    sc_vec_clear(&m->user_data);
    const uint8_t *p = data, *end = data + len;
    const char *why = NULL;
    if (len < 8 + 8 + 8 + 4 + 4 + 8 || memcmp(data, MAN_MAGIC, 8) != 0) {
        why = "bad magic or truncated";
    } else if (sc_checksum(data, len - 8) != sc__ld64(data + len - 8)) {
        why = "checksum mismatch";
    } else if (sc__ld32(data + 8) != COMMIT_VERSION) {
        why = "unsupported version";
    } else {
        end -= 8;
        p += 16;
        m->generation = sc__ld64(p);
        p += 8;
        uint32_t n = sc__ld32(p);
        p += 4;
        for (uint32_t i = 0; i < n && !why; i++) {
            if (end - p < 1 || end - p < 1 + p[0] + 24) {
                why = "segment entry truncated";
                break;
            }
            sc_manifest_segment s;
            memset(&s, 0, sizeof(s));
            uint8_t nl = *p++;
            if (nl == 0 || nl > SC_SEGMENT_NAME_MAX || !name_ok(p, nl)) {
                why = "segment name invalid";
                break;
            }
            memcpy(s.name, p, nl);
            p += nl;
            s.n_docs = sc__ld32(p);
            s.n_deleted = sc__ld32(p + 4);
            s.del_gen = sc__ld64(p + 8);
            s.checksum = sc__ld64(p + 16);
            p += 24;
            if (sc_vec_push(&m->segments, s) != SC_OK)
                return SC_ENOMEM;
        }
        if (!why) {
            if (end - p < 4) {
                why = "user data truncated";
            } else {
                uint32_t ul = sc__ld32(p);
                p += 4;
                if ((uint64_t)(end - p) != ul)
                    why = "user data size mismatch";
                else if (sc_vec_append(&m->user_data, p, ul) != SC_OK)
                    return SC_ENOMEM;
            }
        }
    }
    if (why) {
        *offset = (uint64_t)(p - data);
        *why_out = why;
        return SC_ECORRUPT;
    }
    return SC_OK;
}

sc_status sc_manifest_read(const char *dir, sc_manifest *m, sc_index_error *err)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, SC_MANIFEST_FILE) >= sizeof(path))
        return SC_EINVAL;
    uint8_t *data;
    size_t len;
    sc_status st = sc_file_read_all(path, &data, &len);
    if (st != SC_OK) {
        sc__set_error(err, path, 0, st == SC_ENOTFOUND ? "no manifest" : "cannot read");
        return st;
    }
    uint64_t off = 0;
    const char *why = NULL;
    st = sc_manifest_decode(data, len, m, &off, &why);
    if (st == SC_ECORRUPT)
        sc__set_error(err, path, off, why);
    free(data);
    return st;
}

static sc_status del_path(char *out, size_t cap, const char *dir, const char *seg, uint64_t gen)
{
    if (strlen(seg) > SC_SEGMENT_NAME_MAX || gen == 0)
        return SC_EINVAL;
    if ((size_t)snprintf(out, cap, "%s/%s_%llu.del", dir, seg, (unsigned long long)gen) >= cap)
        return SC_EINVAL;
    return SC_OK;
}

sc_status sc_live_docs_write(const char *dir, const char *seg_name, uint64_t gen,
                             const sc_bitset *live)
{
    char path[1024];
    SC_TRY(del_path(path, sizeof(path), dir, seg_name, gen));
    if (live->n_bits > UINT32_MAX)
        return SC_EINVAL;
    sc_buf b = {0};
    sc_status st = SC_OK;
    sc__buf_put(&b, DEL_MAGIC, 8, &st);
    sc__buf_u32(&b, COMMIT_VERSION, &st);
    sc__buf_u32(&b, (uint32_t)live->n_bits, &st);
    sc__buf_put(&b, live->words, sc_bitset_words_for(live->n_bits) * 8, &st);
    if (st == SC_OK)
        sc__buf_u64(&b, sc_checksum(b.ptr, b.len), &st);
    if (st == SC_OK)
        st = sc_file_write_atomic(path, b.ptr, b.len);
    sc_vec_free(&b);
    return st;
}

sc_status sc_live_docs_read(const char *dir, const char *seg_name, uint64_t gen, uint32_t n_docs,
                            sc_bitset *live, sc_index_error *err)
{
    char path[1024];
    SC_TRY(del_path(path, sizeof(path), dir, seg_name, gen));
    uint8_t *data;
    size_t len;
    sc_status st = sc_file_read_all(path, &data, &len);
    if (st != SC_OK) {
        sc__set_error(err, path, 0, st == SC_ENOTFOUND ? "no deletes file" : "cannot read");
        return st;
    }
    size_t words = sc_bitset_words_for(n_docs);
    const char *why = NULL;
    uint64_t at = 0;
    if (len != 16 + words * 8 + 8 || memcmp(data, DEL_MAGIC, 8) != 0)
        why = "bad magic or size";
    else if (sc_checksum(data, len - 8) != sc__ld64(data + len - 8))
        why = "checksum mismatch", at = len - 8;
    else if (sc__ld32(data + 8) != COMMIT_VERSION)
        why = "unsupported version", at = 8;
    else if (sc__ld32(data + 12) != n_docs)
        why = "doc count mismatch", at = 12;
    else if (n_docs % 64 && (sc__ld64(data + 16 + (words - 1) * 8) >> (n_docs % 64)))
        why = "bits set past the doc count", at = 16 + (words - 1) * 8;
    if (why) {
        sc__set_error(err, path, at, why);
        free(data);
        return SC_ECORRUPT;
    }
    st = sc_bitset_init(live, n_docs);
    if (st == SC_OK && words)
        memcpy(live->words, data + 16, words * 8);
    free(data);
    return st;
}
