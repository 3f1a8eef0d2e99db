/* Stored fields reader (stored.h): binary search of the block index, one zstd decompression
 * per block (with the segment's dictionary when it has one) into the reader's buffer (cached
 * for the next doc), entries parsed with checks. */
#include "index/stored.h"

#include <string.h>
#include <zstd.h>

#include "base/varint.h"
#include "index/internal.h"
#include "index/segment_impl.h"

void sc_stored_reader_init(sc_stored_reader *r, const sc_segment *seg)
{
    memset(r, 0, sizeof(*r));
    r->seg = seg;
    r->cached_block = UINT64_MAX;
}

void sc_stored_reader_fini(sc_stored_reader *r)
{
    sc_vec_free(&r->raw);
    sc_vec_free(&r->doc_off);
    ZSTD_freeDCtx(r->dctx);
    r->dctx = NULL;
    r->cached_block = UINT64_MAX;
}

static sc_status load_block(sc_stored_reader *r, uint64_t k)
{
    const sc_segment *seg = r->seg;
    const uint8_t *e = seg->stored_idx + k * SC__STORED_ENTRY_BYTES;
    uint32_t first = sc__ld32(e), n = sc__ld32(e + 4);
    uint64_t off = sc__ld64(e + 8);
    uint32_t cl = sc__ld32(e + 16), raw = sc__ld32(e + 20);
    r->cached_block = UINT64_MAX;
    sc_vec_clear(&r->raw);
    SC_TRY(sc_vec_reserve(&r->raw, raw ? raw : 1));
    if (!r->dctx && !(r->dctx = ZSTD_createDCtx()))
        return SC_ENOMEM;
    const uint8_t *src = seg->bytes.ptr + off;
    size_t got = seg->stored_ddict ? ZSTD_decompress_usingDDict(r->dctx, r->raw.ptr, raw, src, cl,
                                                                seg->stored_ddict)
                                   : ZSTD_decompressDCtx(r->dctx, r->raw.ptr, raw, src, cl);
    if (ZSTD_isError(got) || got != raw)
        return SC_ECORRUPT;
    r->raw.len = raw;
    sc_vec_clear(&r->doc_off);
    SC_TRY(sc_vec_reserve(&r->doc_off, n));
    const uint8_t *p = r->raw.ptr, *end = p + raw;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t il, sl;
        r->doc_off.ptr[r->doc_off.len++] = (uint64_t)(p - r->raw.ptr);
        if (sc_varint_get(&p, end, &il) != SC_OK || sc_varint_get(&p, end, &sl) != SC_OK ||
            il > (uint64_t)(end - p) || sl > (uint64_t)(end - p) - il)
            return SC_ECORRUPT;
        p += il + sl;
    }
    if (p != end)
        return SC_ECORRUPT;
    r->cached_block = k;
    r->cached_first = first;
    r->cached_n = n;
    return SC_OK;
}

sc_status sc_stored_get(sc_stored_reader *r, uint32_t doc, sc_slice *id, sc_slice *source)
{
    const sc_segment *seg = r->seg;
    if (doc >= seg->n_docs)
        return SC_EINVAL;
    if (r->cached_block == UINT64_MAX || doc < r->cached_first ||
        doc - r->cached_first >= r->cached_n) {
        uint64_t lo = 0, hi = seg->n_stored_blocks;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (sc__ld32(seg->stored_idx + mid * SC__STORED_ENTRY_BYTES) <= doc)
                lo = mid;
            else
                hi = mid;
        }
        SC_TRY(load_block(r, lo));
    }
    const uint8_t *p = r->raw.ptr + r->doc_off.ptr[doc - r->cached_first];
    const uint8_t *end = r->raw.ptr + r->raw.len;
    uint64_t il, sl;
    if (sc_varint_get(&p, end, &il) != SC_OK || sc_varint_get(&p, end, &sl) != SC_OK)
        return SC_ECORRUPT;
    *id = sc_slice_make(p, (size_t)il);
    *source = sc_slice_make(p + il, (size_t)sl);
    return SC_OK;
}
