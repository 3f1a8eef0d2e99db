/* Stored-block compression shared by the segment writer (segwrite.c) and the streaming merge
 * (merge_stream.c): zstd at SC__STORED_LEVEL, against a dictionary trained on a sample of the
 * segment's own docs when it holds enough of them (format v10, docs/format.md). Small blocks
 * keep a single doc's fetch cheap; the dictionary gives them the shared vocabulary (JSON keys,
 * common words) that a small block alone cannot learn. */
#include <stdlib.h>
#include <zdict.h>
#include <zstd.h>

#include "index/internal.h"

uint32_t sc__stored_sample_step(uint64_t raw_bytes, uint32_t n_docs)
{
    if (raw_bytes < SC__STORED_DICT_MIN_RAW || n_docs < 64)
        return 0;
    uint64_t step = raw_bytes / SC__STORED_SAMPLE_BYTES;
    if (step < 1)
        step = 1;
    if (step > n_docs / 64) /* at least 64 samples */
        step = n_docs / 64 ? n_docs / 64 : 1;
    return (uint32_t)step;
}

/* Keeps the dictionary only when it pays for itself: the sample, cut in blocks as the writer
 * cuts them, compressed with and without it must save at least twice the dictionary's size
 * once scaled to the whole segment (on text whose vocabulary a 16 KiB block already holds,
 * a dictionary can make the blocks bigger). */
static sc_status keep_if_worth(sc__stored_comp *c, const uint8_t *samples, const size_t *sizes,
                               size_t n_samples, uint64_t raw_bytes)
{
    sc_buf out = {0};
    if (sc_vec_reserve(&out, ZSTD_compressBound(SC__STORED_MAX_RAW * 2)) != SC_OK)
        return SC_ENOMEM;
    uint64_t with = 0, alone = 0, total = 0;
    size_t cap = out.cap;
    for (size_t i = 0, off = 0; i < n_samples;) {
        size_t len = 0, n = 0;
        while (i + n < n_samples && n < SC__STORED_MAX_DOCS && (n == 0 || len < SC__STORED_MAX_RAW))
            len += sizes[i + n++];
        if (len > SC__STORED_MAX_RAW * 2) { /* one big doc: compressed alike either way */
            off += len;
            i += n;
            continue;
        }
        size_t a = ZSTD_compress_usingCDict(c->cctx, out.ptr, cap, samples + off, len, c->cdict);
        size_t b = ZSTD_compressCCtx(c->cctx, out.ptr, cap, samples + off, len, SC__STORED_LEVEL);
        if (ZSTD_isError(a) || ZSTD_isError(b)) {
            sc_vec_free(&out);
            return SC_ENOMEM;
        }
        with += a;
        alone += b;
        total += len;
        off += len;
        i += n;
    }
    sc_vec_free(&out);
    double saved =
        alone > with && total ? (double)(alone - with) * (double)raw_bytes / (double)total : 0.0;
    if (saved < 2.0 * (double)c->dict.len) {
        ZSTD_freeCDict(c->cdict);
        c->cdict = NULL;
        c->dict.len = 0;
    }
    return SC_OK;
}

sc_status sc__stored_comp_init(sc__stored_comp *c, const uint8_t *samples, const size_t *sizes,
                               size_t n_samples, uint64_t raw_bytes)
{
    memset(c, 0, sizeof *c);
    c->cctx = ZSTD_createCCtx();
    if (!c->cctx)
        return SC_ENOMEM;
    if (n_samples < 8)
        return SC_OK;
    /* a dictionary of about 1/32 of the raw bytes, at most SC__STORED_DICT_MAX */
    size_t cap = raw_bytes / 32 < SC__STORED_DICT_MAX ? (size_t)(raw_bytes / 32)
                                                      : (size_t)SC__STORED_DICT_MAX;
    if (cap < 1024)
        return SC_OK;
    if (sc_vec_reserve(&c->dict, cap) != SC_OK)
        return SC_ENOMEM;
    size_t got = ZDICT_trainFromBuffer(c->dict.ptr, cap, samples, sizes, (unsigned)n_samples);
    if (ZDICT_isError(got) || got == 0)
        return SC_OK; /* untrainable sample: blocks go without a dictionary */
    c->dict.len = got;
    c->cdict = ZSTD_createCDict(c->dict.ptr, c->dict.len, SC__STORED_LEVEL);
    if (!c->cdict) {
        c->dict.len = 0;
        return SC_ENOMEM;
    }
    return keep_if_worth(c, samples, sizes, n_samples, raw_bytes);
}

sc_status sc__stored_comp_block(sc__stored_comp *c, const uint8_t *raw, size_t len, sc_buf *out)
{
    if (len > UINT32_MAX)
        return SC_ELIMIT;
    size_t bound = ZSTD_compressBound(len);
    sc_vec_clear(out);
    SC_TRY(sc_vec_reserve(out, bound));
    size_t cl = c->cdict ? ZSTD_compress_usingCDict(c->cctx, out->ptr, bound, raw, len, c->cdict)
                         : ZSTD_compressCCtx(c->cctx, out->ptr, bound, raw, len, SC__STORED_LEVEL);
    if (ZSTD_isError(cl))
        return SC_ENOMEM;
    out->len = cl;
    return SC_OK;
}

void sc__stored_comp_trailer(const sc__stored_comp *c, sc_buf *idx, sc_status *st)
{
    sc__buf_u32(idx, (uint32_t)c->dict.len, st);
    sc__buf_put(idx, c->dict.ptr, c->dict.len, st);
}

void sc__stored_comp_fini(sc__stored_comp *c)
{
    ZSTD_freeCDict(c->cdict);
    ZSTD_freeCCtx(c->cctx);
    sc_vec_free(&c->dict);
    memset(c, 0, sizeof *c);
}
