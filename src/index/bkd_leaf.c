/* Shared BKD leaf pieces: doc-id blocks (choose, encode, decode, add to a bitset) and the
 * value-delta unpackers of the 1-D and 2-D trees. Layout: bkd.h; see bkd_leaf.h. */
#include "index/bkd_leaf.h"

#include <string.h>

#include "index/bkd.h"
#include "index/internal.h"

static inline uint32_t ld24(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

sc_status sc__bkd_docs_put(const uint32_t *docs, uint32_t n, uint8_t *kind_out, sc_buf *out)
{
    sc_status st = SC_OK;
    uint32_t first = docs[0], last = docs[n - 1];
    bool distinct = true;
    for (uint32_t i = 1; i < n; i++)
        if (docs[i] == docs[i - 1]) {
            distinct = false;
            break;
        }
    uint32_t span = last - first;
    uint8_t kind = SC_BKD_DOCS_D32;
    uint64_t best = (uint64_t)4 * n;
    if (span < (1u << 24) && 4 + (uint64_t)3 * n < best) {
        kind = SC_BKD_DOCS_D24;
        best = 4 + (uint64_t)3 * n;
    }
    if (span < (1u << 16) && 4 + (uint64_t)2 * n < best) {
        kind = SC_BKD_DOCS_D16;
        best = 4 + (uint64_t)2 * n;
    }
    uint32_t bbase = first & ~63u;
    uint64_t nwords = ((uint64_t)last - bbase) / 64 + 1;
    if (distinct && nwords <= UINT16_MAX && 6 + 8 * nwords < best)
        kind = SC_BKD_DOCS_BITSET;
    if (distinct && span == n - 1)
        kind = SC_BKD_DOCS_RUN;
    *kind_out = kind;
    switch (kind) {
    case SC_BKD_DOCS_RUN: sc__buf_u32(out, first, &st); break;
    case SC_BKD_DOCS_BITSET: {
        sc__buf_u32(out, bbase, &st);
        sc__buf_u16(out, (uint16_t)nwords, &st);
        if (st != SC_OK || sc_vec_reserve(out, nwords * 8) != SC_OK)
            return SC_ENOMEM;
        uint8_t *at = out->ptr + out->len;
        memset(at, 0, nwords * 8);
        out->len += nwords * 8;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t o = docs[i] - bbase;
            at[o / 8] |= (uint8_t)(1u << (o % 8));
        }
        break;
    }
    case SC_BKD_DOCS_D16:
        sc__buf_u32(out, first, &st);
        for (uint32_t i = 0; i < n; i++)
            sc__buf_u16(out, (uint16_t)(docs[i] - first), &st);
        break;
    case SC_BKD_DOCS_D24:
        sc__buf_u32(out, first, &st);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t o = docs[i] - first;
            uint8_t b[3] = {(uint8_t)o, (uint8_t)(o >> 8), (uint8_t)(o >> 16)};
            sc__buf_put(out, b, 3, &st);
        }
        break;
    default:
        for (uint32_t i = 0; i < n; i++)
            sc__buf_u32(out, docs[i], &st);
        break;
    }
    return st;
}

sc_status sc__bkd_docs_len(uint8_t kind, uint32_t n, const uint8_t *p, size_t avail, size_t *len)
{
    size_t l;
    switch (kind) {
    case SC_BKD_DOCS_RUN: l = 4; break;
    case SC_BKD_DOCS_BITSET:
        if (avail < 6)
            return SC_ECORRUPT;
        l = 6 + (size_t)8 * sc__ld16(p + 4);
        break;
    case SC_BKD_DOCS_D16: l = 4 + (size_t)2 * n; break;
    case SC_BKD_DOCS_D24: l = 4 + (size_t)3 * n; break;
    case SC_BKD_DOCS_D32: l = (size_t)4 * n; break;
    default: return SC_ECORRUPT;
    }
    if (l > avail)
        return SC_ECORRUPT;
    *len = l;
    return SC_OK;
}

sc_status sc__bkd_docs_decode(uint8_t kind, const uint8_t *p, uint32_t n, uint32_t doc_bound,
                              uint32_t *docs)
{
    switch (kind) {
    case SC_BKD_DOCS_RUN: {
        uint32_t first = sc__ld32(p);
        if ((uint64_t)first + n > doc_bound)
            return SC_ECORRUPT;
        for (uint32_t i = 0; i < n; i++)
            docs[i] = first + i;
        return SC_OK;
    }
    case SC_BKD_DOCS_BITSET: {
        uint32_t base = sc__ld32(p), nw = sc__ld16(p + 4);
        if (base % 64 || (uint64_t)base + (uint64_t)nw * 64 > (uint64_t)doc_bound + 63)
            return SC_ECORRUPT;
        uint32_t k = 0;
        for (uint32_t w = 0; w < nw; w++) {
            uint64_t word = sc__ld64(p + 6 + 8 * (size_t)w);
            while (word) {
                uint32_t d = base + w * 64 + (uint32_t)__builtin_ctzll(word);
                word &= word - 1;
                if (k == n || d >= doc_bound)
                    return SC_ECORRUPT;
                docs[k++] = d;
            }
        }
        return k == n ? SC_OK : SC_ECORRUPT;
    }
    case SC_BKD_DOCS_D16: {
        uint32_t first = sc__ld32(p), mx = 0;
        const uint8_t *q = p + 4;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = sc__ld16(q + 2 * (size_t)i);
            docs[i] = first + d;
            mx = d > mx ? d : mx;
        }
        return (uint64_t)first + mx < doc_bound ? SC_OK : SC_ECORRUPT;
    }
    case SC_BKD_DOCS_D24: {
        uint32_t first = sc__ld32(p), mx = 0;
        const uint8_t *q = p + 4;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = ld24(q + 3 * (size_t)i);
            docs[i] = first + d;
            mx = d > mx ? d : mx;
        }
        return (uint64_t)first + mx < doc_bound ? SC_OK : SC_ECORRUPT;
    }
    case SC_BKD_DOCS_D32: {
        uint32_t mx = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = sc__ld32(p + 4 * (size_t)i);
            docs[i] = d;
            mx = d > mx ? d : mx;
        }
        return mx < doc_bound ? SC_OK : SC_ECORRUPT;
    }
    default: return SC_ECORRUPT;
    }
}

sc_status sc__bkd_docs_add(uint8_t kind, const uint8_t *p, uint32_t n, uint32_t doc_bound,
                           sc_bitset *bs, uint32_t *scratch)
{
    uint64_t *words = bs->words;
    switch (kind) {
    case SC_BKD_DOCS_RUN: {
        uint32_t first = sc__ld32(p);
        if ((uint64_t)first + n > doc_bound)
            return SC_ECORRUPT;
        sc_bitset_set_range(bs, first, (size_t)first + n);
        return SC_OK;
    }
    case SC_BKD_DOCS_BITSET: {
        uint32_t base = sc__ld32(p), nw = sc__ld16(p + 4);
        if (base % 64 || (uint64_t)base + (uint64_t)nw * 64 > (uint64_t)doc_bound + 63)
            return SC_ECORRUPT;
        uint64_t *dst = words + base / 64;
        const uint8_t *src = p + 6;
        for (uint32_t w = 0; w < nw; w++)
            dst[w] |= sc__ld64(src + 8 * (size_t)w);
        if (nw && base / 64 + nw == sc_bitset_words_for(doc_bound) && doc_bound % 64)
            dst[nw - 1] &= ((uint64_t)1 << (doc_bound % 64)) - 1; /* corrupt bits past the bound */
        return SC_OK;
    }
    case SC_BKD_DOCS_D16: {
        uint32_t first = sc__ld32(p), mx = 0;
        const uint8_t *q = p + 4;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = sc__ld16(q + 2 * (size_t)i);
            mx = d > mx ? d : mx;
        }
        if ((uint64_t)first + mx >= doc_bound)
            return SC_ECORRUPT;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = first + sc__ld16(q + 2 * (size_t)i);
            words[d >> 6] |= (uint64_t)1 << (d & 63);
        }
        return SC_OK;
    }
    default: {
        SC_TRY(sc__bkd_docs_decode(kind, p, n, doc_bound, scratch));
        for (uint32_t i = 0; i < n; i++)
            words[scratch[i] >> 6] |= (uint64_t)1 << (scratch[i] & 63);
        return SC_OK;
    }
    }
}

void sc__bkd_unpack64(const uint8_t *p, uint32_t n, unsigned bits, int64_t base, int64_t *out)
{
    if (bits == 0) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = base;
        return;
    }
    uint64_t mask = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    if (bits <= 56) {
        for (uint32_t i = 0; i < n; i++) {
            size_t bit = (size_t)i * bits;
            uint64_t w = sc__ld64(p + bit / 8) >> (bit % 8);
            out[i] = (int64_t)((uint64_t)base + (w & mask));
        }
    } else {
        for (uint32_t i = 0; i < n; i++) {
            size_t bit = (size_t)i * bits;
            unsigned sh = (unsigned)(bit % 8);
            uint64_t w = sc__ld64(p + bit / 8) >> sh;
            if (sh)
                w |= sc__ld64(p + bit / 8 + 8) << (64 - sh);
            out[i] = (int64_t)((uint64_t)base + (w & mask));
        }
    }
}

void sc__bkd_unpack32(const uint8_t *p, uint32_t n, unsigned bits, int32_t base, int32_t *out)
{
    if (bits == 0) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = base;
        return;
    }
    /* bits <= 32: a value starts in byte bit/8 at shift < 8, so one 8-byte load holds it */
    uint64_t mask = (((uint64_t)1 << bits) - 1);
    for (uint32_t i = 0; i < n; i++) {
        size_t bit = (size_t)i * bits;
        uint64_t w = sc__ld64(p + bit / 8) >> (bit % 8);
        out[i] = (int32_t)((uint32_t)base + (uint32_t)(w & mask));
    }
}

sc_status sc__bkd_count_docs(const uint32_t *docs, size_t n, uint32_t doc_bound, uint32_t *n_docs)
{
    *n_docs = 0;
    if (n == 0)
        return SC_OK;
    sc_bitset seen;
    SC_TRY(sc_bitset_init(&seen, doc_bound));
    for (size_t i = 0; i < n; i++)
        if (!sc_bitset_test(&seen, docs[i])) {
            sc_bitset_set(&seen, docs[i]);
            (*n_docs)++;
        }
    sc_bitset_fini(&seen);
    return SC_OK;
}

sc_status sc__bkd_layout_check(sc_slice bytes, size_t header, uint32_t leaf_size, uint32_t n_points,
                               uint32_t n_leaves, uint32_t doc_bound, uint32_t n_docs,
                               uint32_t n_nodes, const uint8_t **nodes, const uint8_t **leafdir)
{
    if (leaf_size == 0 || leaf_size > UINT16_MAX)
        return SC_ECORRUPT;
    if (n_leaves != (uint32_t)(((uint64_t)n_points + leaf_size - 1) / leaf_size))
        return SC_ECORRUPT;
    if (n_docs > n_points || n_docs > doc_bound || (n_points && n_docs == 0))
        return SC_ECORRUPT;
    uint32_t nn = n_nodes;
    if (nn == 0 || (nn & (nn - 1)) || nn < n_leaves || nn > (1u << 27))
        return SC_ECORRUPT;
    if (n_leaves && nn >= 2 * n_leaves && nn > 1)
        return SC_ECORRUPT; /* not the smallest power of two */
    uint64_t nodes_len = (uint64_t)nn * 32, dir_len = ((uint64_t)n_leaves + 1) * 8;
    if (header + nodes_len + dir_len > bytes.len)
        return SC_ECORRUPT;
    *nodes = bytes.ptr + header;
    *leafdir = *nodes + nodes_len;
    uint64_t prev = header + nodes_len + dir_len;
    for (uint32_t j = 0; j <= n_leaves; j++) {
        uint64_t off = sc__ld64(*leafdir + 8 * (size_t)j);
        if (off < prev || off > bytes.len)
            return SC_ECORRUPT;
        prev = off;
    }
    return SC_OK;
}
