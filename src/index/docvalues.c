/* Doc values readers (docvalues.h): O(1) views over the sections validated at open. */
#include "index/docvalues.h"

#include <string.h>

#include "index/internal.h"

sc_status sc_dv_numeric_open(const sc_segment *seg, const sc_field_info *f, sc_dv_numeric *out)
{
    memset(out, 0, sizeof(*out));
    if (!f || f->dvn_len == 0)
        return SC_ENOTFOUND;
    const uint8_t *p = sc__segment_bytes(seg).ptr + f->dvn_off;
    out->n_docs = sc_segment_n_docs(seg);
    out->n_values = sc__ld64(p);
    out->min = (int64_t)sc__ld64(p + 8);
    out->gcd = sc__ld64(p + 16);
    out->bits = p[24];
    out->off_bits = p[25];
    out->single = p[26] == SC__DV_SINGLE;
    out->offs = p + SC__DV_HEADER_BYTES;
    out->vals = out->single
                    ? out->offs
                    : out->offs + sc__packed_bytes((uint64_t)out->n_docs + 1, out->off_bits);
    return SC_OK;
}

uint32_t sc_dv_numeric_count(const sc_dv_numeric *dv, uint32_t doc)
{
    if (doc >= dv->n_docs)
        return 0;
    if (dv->single)
        return 1;
    return (uint32_t)(sc__packed_get(dv->offs, (uint64_t)doc + 1, dv->off_bits) -
                      sc__packed_get(dv->offs, doc, dv->off_bits));
}

size_t sc_dv_numeric_get(const sc_dv_numeric *dv, uint32_t doc, int64_t *out, size_t max)
{
    if (doc >= dv->n_docs || max == 0)
        return 0;
    if (dv->single) {
        out[0] = (int64_t)((uint64_t)dv->min + sc__packed_get(dv->vals, doc, dv->bits) * dv->gcd);
        return 1;
    }
    uint64_t s = sc__packed_get(dv->offs, doc, dv->off_bits);
    uint64_t e = sc__packed_get(dv->offs, (uint64_t)doc + 1, dv->off_bits);
    size_t n = 0;
    for (uint64_t i = s; i < e && n < max; i++)
        out[n++] = (int64_t)((uint64_t)dv->min + sc__packed_get(dv->vals, i, dv->bits) * dv->gcd);
    return n;
}

bool sc_dv_numeric_first(const sc_dv_numeric *dv, uint32_t doc, int64_t *out)
{
    return sc_dv_numeric_get(dv, doc, out, 1) == 1;
}

sc_status sc_dv_sorted_set_open(const sc_segment *seg, const sc_field_info *f,
                                sc_dv_sorted_set *out)
{
    memset(out, 0, sizeof(*out));
    if (!f || f->dvs_len == 0)
        return SC_ENOTFOUND;
    const uint8_t *p = sc__segment_bytes(seg).ptr + f->dvs_off;
    out->n_docs = sc_segment_n_docs(seg);
    out->n_ords = sc__ld64(p);
    out->n_values = sc__ld64(p + 8);
    out->ord_bits = p[16];
    out->off_bits = p[17];
    out->single = p[18] == SC__DV_SINGLE;
    uint64_t tb = sc__ld64(p + 24);
    if (sc__segment_version(seg) >= 11) {
        out->rel_bits = p[19];
        out->term_rel = p + SC__DV_HEADER_BYTES;
        out->term_base = out->term_rel + sc__packed_bytes(out->n_ords + 1, out->rel_bits);
        out->term_bytes = out->term_base + (out->n_ords / SC__DV_TERM_BLOCK + 1) * 4;
    } else {
        out->term_offs = p + SC__DV_HEADER_BYTES;
        out->term_bytes = out->term_offs + (out->n_ords + 1) * 4;
    }
    out->offs = out->term_bytes + tb;
    out->ords = out->single
                    ? out->offs
                    : out->offs + sc__packed_bytes((uint64_t)out->n_docs + 1, out->off_bits);
    return SC_OK;
}

sc_slice sc_dv_sorted_set_term(const sc_dv_sorted_set *dv, uint64_t ord)
{
    if (ord >= dv->n_ords)
        return sc_slice_make(NULL, 0);
    uint64_t s, e;
    if (dv->term_rel) {
        /* rel[ord] and rel[ord + 1] from one 8-byte load (+ the next byte): rel_bits <= 32, so
         * both fit in the 64 bits after the shift; the packed array's 8 pad bytes keep the
         * loads inside the section. rel[16 k] is 0 (checked at open), so an end at a block
         * start is that block's base. */
        unsigned bits = dv->rel_bits;
        uint64_t bitpos = ord * bits;
        const uint8_t *q = dv->term_rel + (bitpos >> 3);
        unsigned sh = (unsigned)(bitpos & 7);
        uint64_t v = sc__ld64(q) >> sh;
        if (sh)
            v |= (uint64_t)q[8] << (64 - sh);
        uint64_t mask = bits ? (UINT64_C(1) << bits) - 1 : 0;
        uint64_t base = sc__ld32(dv->term_base + 4 * (ord / SC__DV_TERM_BLOCK));
        s = base + (v & mask);
        e = (ord + 1) % SC__DV_TERM_BLOCK
                ? base + ((v >> bits) & mask)
                : sc__ld32(dv->term_base + 4 * ((ord + 1) / SC__DV_TERM_BLOCK));
    } else {
        s = sc__ld32(dv->term_offs + 4 * ord), e = sc__ld32(dv->term_offs + 4 * (ord + 1));
    }
    return sc_slice_make(dv->term_bytes + s, (size_t)(e - s));
}

void sc_dv_sorted_set_prefetch_doc(const sc_dv_sorted_set *dv, uint32_t doc)
{
    if (doc >= dv->n_docs)
        return;
    if (dv->single)
        __builtin_prefetch(dv->ords + (((uint64_t)doc * dv->ord_bits) >> 3));
    else
        __builtin_prefetch(dv->offs + (((uint64_t)doc * dv->off_bits) >> 3));
}

void sc_dv_sorted_set_prefetch_term(const sc_dv_sorted_set *dv, uint64_t ord)
{
    if (ord >= dv->n_ords)
        return;
    if (dv->term_rel) {
        __builtin_prefetch(dv->term_rel + ((ord * dv->rel_bits) >> 3));
        __builtin_prefetch(dv->term_base + 4 * (ord / SC__DV_TERM_BLOCK));
    } else {
        __builtin_prefetch(dv->term_offs + 4 * ord);
    }
}

bool sc_dv_sorted_set_lookup(const sc_dv_sorted_set *dv, sc_slice term, uint64_t *ord)
{
    uint64_t lo = 0, hi = dv->n_ords;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = sc_slice_cmp(sc_dv_sorted_set_term(dv, mid), term);
        if (c == 0) {
            *ord = mid;
            return true;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

uint32_t sc_dv_sorted_set_count(const sc_dv_sorted_set *dv, uint32_t doc)
{
    if (doc >= dv->n_docs)
        return 0;
    if (dv->single)
        return sc__packed_get(dv->ords, doc, dv->ord_bits) != 0;
    return (uint32_t)(sc__packed_get(dv->offs, (uint64_t)doc + 1, dv->off_bits) -
                      sc__packed_get(dv->offs, doc, dv->off_bits));
}

size_t sc_dv_sorted_set_ords(const sc_dv_sorted_set *dv, uint32_t doc, uint64_t *out, size_t max)
{
    if (doc >= dv->n_docs || max == 0)
        return 0;
    if (dv->single) {
        uint64_t v = sc__packed_get(dv->ords, doc, dv->ord_bits);
        out[0] = v - 1;
        return v != 0;
    }
    uint64_t s = sc__packed_get(dv->offs, doc, dv->off_bits);
    uint64_t e = sc__packed_get(dv->offs, (uint64_t)doc + 1, dv->off_bits);
    size_t n = 0;
    for (uint64_t i = s; i < e && n < max; i++)
        out[n++] = sc__packed_get(dv->ords, i, dv->ord_bits);
    return n;
}

bool sc_dv_numeric_range(const sc_dv_numeric *dv, int64_t *lo, uint64_t *span)
{
    uint64_t s;
    if (dv->bits >= 64 || __builtin_mul_overflow((UINT64_C(1) << dv->bits) - 1, dv->gcd, &s) ||
        s > (uint64_t)INT64_MAX - (uint64_t)(dv->min < 0 ? 0 : dv->min))
        return false;
    *lo = dv->min;
    *span = s;
    return true;
}

/* Values first .. first + n - 1 of a column packed `bits` wide (1 <= bits <= 56) into out, in
 * order: groups of 8 values start on a byte boundary, so with `bits` a constant (one copy per
 * width, see unpack_run) every shift and offset in a group is a constant too. The loads read
 * at most 8 bytes from a value's first byte, as sc__packed_get (the packed array's pad). */
static inline __attribute__((always_inline)) void unpack_run_w(const uint8_t *vals, uint64_t first,
                                                               size_t n, unsigned bits,
                                                               uint64_t min, uint64_t gcd,
                                                               int64_t *out)
{
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    size_t i = 0;
    for (; i < n && ((first + i) & 7); i++) {
        uint64_t bitpos = (first + i) * bits;
        out[i] = (int64_t)(min + ((sc__ld64(vals + (bitpos >> 3)) >> (bitpos & 7)) & mask) * gcd);
    }
    for (; i + 8 <= n; i += 8) {
        const uint8_t *p = vals + ((first + i) >> 3) * bits;
        for (unsigned j = 0; j < 8; j++)
            out[i + j] =
                (int64_t)(min +
                          ((sc__ld64(p + ((j * bits) >> 3)) >> ((j * bits) & 7)) & mask) * gcd);
    }
    for (; i < n; i++) {
        uint64_t bitpos = (first + i) * bits;
        out[i] = (int64_t)(min + ((sc__ld64(vals + (bitpos >> 3)) >> (bitpos & 7)) & mask) * gcd);
    }
}

static void unpack_run(const uint8_t *vals, uint64_t first, size_t n, unsigned bits, uint64_t min,
                       uint64_t gcd, int64_t *out)
{
    /* clang-format off */
    if (gcd == 1) { /* most columns: no multiply per value */
        switch (bits) {
#define W(b) case b: unpack_run_w(vals, first, n, b, min, 1, out); return;
        W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11) W(12) W(13) W(14) W(15) W(16)
        W(17) W(18) W(19) W(20) W(21) W(22) W(23) W(24) W(25) W(26) W(27) W(28) W(29) W(30)
        W(31) W(32)
#undef W
        default: break;
        }
    }
    switch (bits) {
#define W(b) case b: unpack_run_w(vals, first, n, b, min, gcd, out); return;
    W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11) W(12) W(13) W(14) W(15) W(16)
    W(17) W(18) W(19) W(20) W(21) W(22) W(23) W(24) W(25) W(26) W(27) W(28) W(29) W(30)
    W(31) W(32)
#undef W
    default: unpack_run_w(vals, first, n, bits, min, gcd, out); return;
    }
    /* clang-format on */
}

/* The value of 57..64 bits at bit offset bitpos, masked: sc__packed_get without its branch,
 * the ninth byte always loaded (the pad allows it) and shifted out when the value ends in the
 * first eight (sh 0: (q[8] << 1) << 63 is 0). */
static inline uint64_t wide_at(const uint8_t *vals, uint64_t bitpos, uint64_t mask)
{
    const uint8_t *q = vals + (bitpos >> 3);
    unsigned sh = (unsigned)(bitpos & 7);
    return ((sc__ld64(q) >> sh) | (((uint64_t)q[8] << 1) << (63 - sh))) & mask;
}

/* unpack_run_w for widths 57..64 (doubles as sortable longs): a value may end in a ninth
 * byte, loaded always (the pad allows it) and shifted out when the value ends in the first
 * eight, as the per-doc wide read; with `bits` a constant every offset and shift of a group of
 * 8 values is a constant (the per-doc read multiplies and shifts by a variable per value). */
static inline __attribute__((always_inline)) void unpack_wide_w(const uint8_t *vals, uint64_t first,
                                                                size_t n, unsigned bits,
                                                                uint64_t min, uint64_t gcd,
                                                                int64_t *out)
{
    uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
    size_t i = 0;
    for (; i < n && ((first + i) & 7); i++)
        out[i] = (int64_t)(min + wide_at(vals, (first + i) * bits, mask) * gcd);
    for (; i + 8 <= n; i += 8) {
        const uint8_t *p = vals + ((first + i) >> 3) * bits;
        for (unsigned j = 0; j < 8; j++) /* j * bits: constants once bits is one */
            out[i + j] = (int64_t)(min + wide_at(p, (uint64_t)j * bits, mask) * gcd);
    }
    for (; i < n; i++)
        out[i] = (int64_t)(min + wide_at(vals, (first + i) * bits, mask) * gcd);
}

static void unpack_wide(const uint8_t *vals, uint64_t first, size_t n, unsigned bits, uint64_t min,
                        uint64_t gcd, int64_t *out)
{
    /* clang-format off */
    switch (bits) {
#define W(b) case b: unpack_wide_w(vals, first, n, b, min, gcd, out); return;
    W(57) W(58) W(59) W(60) W(61) W(62) W(63) W(64)
#undef W
    default: return;
    }
    /* clang-format on */
}

/* unpack_run_w for ordinals (min 0, gcd 1, bits <= 32) straight into 32-bit slots: no
 * multiply, add or staging buffer per value. */
static inline __attribute__((always_inline)) void
unpack_ords_w(const uint8_t *vals, uint64_t first, size_t n, unsigned bits, uint32_t *out)
{
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    size_t i = 0;
    for (; i < n && ((first + i) & 7); i++) {
        uint64_t bitpos = (first + i) * bits;
        out[i] = (uint32_t)((sc__ld64(vals + (bitpos >> 3)) >> (bitpos & 7)) & mask);
    }
    for (; i + 8 <= n; i += 8) {
        const uint8_t *p = vals + ((first + i) >> 3) * bits;
        for (unsigned j = 0; j < 8; j++)
            out[i + j] = (uint32_t)((sc__ld64(p + ((j * bits) >> 3)) >> ((j * bits) & 7)) & mask);
    }
    for (; i < n; i++) {
        uint64_t bitpos = (first + i) * bits;
        out[i] = (uint32_t)((sc__ld64(vals + (bitpos >> 3)) >> (bitpos & 7)) & mask);
    }
}

static void unpack_ords(const uint8_t *vals, uint64_t first, size_t n, unsigned bits, uint32_t *out)
{
    /* clang-format off */
    switch (bits) {
#define W(b) case b: unpack_ords_w(vals, first, n, b, out); return;
    W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11) W(12) W(13) W(14) W(15) W(16)
#undef W
    default: unpack_ords_w(vals, first, n, bits, out); return;
    }
    /* clang-format on */
}

/* Whether docs[0..n) are consecutive (then their values are unpacked in order). */
static bool is_run(const uint32_t *docs, size_t n)
{
    if (n < 16 || docs[n - 1] - docs[0] != n - 1)
        return false;
    /* in full: docs may repeat. An OR of the differences, which the compiler vectorizes (the
     * loop over a bool it did not: with 4096 docs a window, that scalar check cost as much as
     * the unpacking, ~5 % of Rally's date_histogram_fixed_interval_with_metrics_agg) */
    uint32_t d0 = docs[0], diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= docs[i] ^ (d0 + (uint32_t)i);
    return diff == 0;
}

void sc_dv_numeric_get_single_batch(const sc_dv_numeric *dv, const uint32_t *docs, size_t n,
                                    int64_t *out)
{
    const uint8_t *vals = dv->vals;
    unsigned bits = dv->bits;
    uint64_t min = (uint64_t)dv->min, gcd = dv->gcd;
    if (bits && bits <= 56 && is_run(docs, n)) { /* match_all, dense windows */
        unpack_run(vals, docs[0], n, bits, min, gcd, out);
        return;
    }
    if (bits && bits <= 56) {
        /* sc__packed_get's read for widths whose value never crosses the 8 bytes it loads
         * (shift <= 7, so shift + bits <= 63): no branch, no width test per value */
        uint64_t mask = (UINT64_C(1) << bits) - 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t bitpos = (uint64_t)docs[i] * bits;
            uint64_t v = (sc__ld64(vals + (bitpos >> 3)) >> (bitpos & 7)) & mask;
            out[i] = (int64_t)(min + v * gcd);
        }
        return;
    }
    if (bits > 56 && bits <= 64 && is_run(docs, n)) {
        unpack_wide(vals, docs[0], n, bits, min, gcd, out);
        return;
    }
    if (bits > 56 && bits <= 64) {
        /* wide values (doubles as sortable longs: ~63 bits) */
        uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
        for (size_t i = 0; i < n; i++)
            out[i] = (int64_t)(min + wide_at(vals, (uint64_t)docs[i] * bits, mask) * gcd);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (int64_t)(min + sc__packed_get(vals, docs[i], bits) * gcd);
}

void sc_dv_sorted_set_single_batch(const sc_dv_sorted_set *dv, const uint32_t *docs, size_t n,
                                   uint32_t *out)
{
    const uint8_t *ords = dv->ords;
    unsigned bits = dv->ord_bits;
    if (bits && bits <= 32 && is_run(docs, n)) {
        unpack_ords(ords, docs[0], n, bits, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (uint32_t)sc__packed_get(ords, docs[i], bits);
}

void sc_dv_sorted_set_count_batch(const sc_dv_sorted_set *dv, const uint32_t *docs, size_t n,
                                  uint32_t *counts)
{
    const uint8_t *ords = dv->ords;
    unsigned bits = dv->ord_bits;
    if (dv->single) {
        if (bits == 0) {
            counts[0] += (uint32_t)n;
            return;
        }
        /* ord + 1 per doc, 0 = none: one packed read and one increment per doc */
        for (size_t i = 0; i < n; i++)
            counts[sc__packed_get(ords, docs[i], bits)]++;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t s = sc__packed_get(dv->offs, docs[i], dv->off_bits);
        uint64_t e = sc__packed_get(dv->offs, (uint64_t)docs[i] + 1, dv->off_bits);
        if (s == e)
            counts[0]++;
        for (uint64_t j = s; j < e; j++)
            counts[sc__packed_get(ords, j, bits) + 1]++;
    }
}
