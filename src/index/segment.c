/* Segment reader: maps `<name>.seg`, verifies header, checksum and every section's bounds and
 * the random-access structures (term index, doc values, stored index) once, so later reads
 * only need cheap local checks. Also Lucene's norm quantization (SmallFloat.intToByte4). */
#include "index/segment.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/internal.h"
#include "index/vecfield.h"
#include "index/segment_impl.h"

SC_ALLOC_POOL_DEFINE(sc_pool_index_segments, "index.segments");

/* ---- norms: Lucene SmallFloat.intToByte4 / byte4ToInt ---- */

static uint32_t long_to_int4(uint64_t i)
{
    unsigned nbits = i ? 64u - (unsigned)__builtin_clzll(i) : 0u;
    if (nbits < 4)
        return (uint32_t)i;
    unsigned shift = nbits - 4;
    uint32_t enc = (uint32_t)(i >> shift) & 0x07;
    return enc | ((shift + 1) << 3);
}

static uint64_t int4_to_long(uint32_t i)
{
    uint64_t bits = i & 0x07;
    int shift = (int)(i >> 3) - 1;
    return shift == -1 ? bits : (bits | 0x08) << shift;
}

/* MAX_INT4 = long_to_int4(INT32_MAX) = 231, NUM_FREE_VALUES = 255 - 231 = 24 */
#define NUM_FREE_VALUES 24u

uint8_t sc_norm_encode(uint32_t length)
{
    if (length > INT32_MAX)
        length = INT32_MAX;
    if (length < NUM_FREE_VALUES)
        return (uint8_t)length;
    return (uint8_t)(NUM_FREE_VALUES + long_to_int4(length - NUM_FREE_VALUES));
}

uint32_t sc_norm_decode(uint8_t norm)
{
    if (norm < NUM_FREE_VALUES)
        return norm;
    return (uint32_t)(NUM_FREE_VALUES + int4_to_long(norm - NUM_FREE_VALUES));
}

/* ---- open and validate ---- */

typedef struct rd {
    const uint8_t *p, *end;
    bool bad;
} rd;

static uint64_t rd_u(rd *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    uint64_t v = n == 1   ? r->p[0]
                 : n == 2 ? sc__ld16(r->p)
                 : n == 4 ? sc__ld32(r->p)
                          : sc__ld64(r->p);
    r->p += n;
    return v;
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
    return off >= lo && off <= hi && len <= hi - off;
}

#define FAIL(off, msg)                                                                             \
    do {                                                                                           \
        sc__set_error(err, seg->path, (off), (msg));                                               \
        return SC_ECORRUPT;                                                                        \
    } while (0)

static sc_status check_packed_offsets(const uint8_t *p, uint64_t n_docs, unsigned bits,
                                      uint64_t n_values)
{
    uint64_t prev = 0;
    for (uint64_t d = 0; d <= n_docs; d++) {
        uint64_t v = sc__packed_get(p, d, bits);
        if (v < prev || (d == 0 && v != 0))
            return SC_ECORRUPT;
        prev = v;
    }
    return prev == n_values ? SC_OK : SC_ECORRUPT;
}

static sc_status check_dvn(sc_segment *seg, const sc_field_info *f, sc_index_error *err)
{
    const uint8_t *p = seg->bytes.ptr + f->dvn_off;
    if (f->dvn_len < SC__DV_HEADER_BYTES)
        FAIL(f->dvn_off, "numeric doc values header truncated");
    uint64_t n = sc__ld64(p);
    unsigned bits = p[24], off_bits = p[25], mode = p[26];
    if (bits > 64 || off_bits > 64 || n > (UINT64_C(1) << 40) || mode > SC__DV_SINGLE ||
        (mode == SC__DV_SINGLE && (off_bits != 0 || n != seg->n_docs)))
        FAIL(f->dvn_off, "numeric doc values header invalid");
    uint64_t starts =
        mode == SC__DV_SINGLE ? 0 : sc__packed_bytes((uint64_t)seg->n_docs + 1, off_bits);
    uint64_t need = SC__DV_HEADER_BYTES + starts + sc__packed_bytes(n, bits);
    if (need != f->dvn_len)
        FAIL(f->dvn_off, "numeric doc values size mismatch");
    if (mode != SC__DV_SINGLE &&
        check_packed_offsets(p + SC__DV_HEADER_BYTES, seg->n_docs, off_bits, n) != SC_OK)
        FAIL(f->dvn_off, "numeric doc values offsets invalid");
    return SC_OK;
}

static sc_status check_dvs(sc_segment *seg, const sc_field_info *f, sc_index_error *err)
{
    const uint8_t *p = seg->bytes.ptr + f->dvs_off;
    if (f->dvs_len < SC__DV_HEADER_BYTES)
        FAIL(f->dvs_off, "sorted-set doc values header truncated");
    uint64_t n_ords = sc__ld64(p), n = sc__ld64(p + 8), tb = sc__ld64(p + 24);
    unsigned ord_bits = p[16], off_bits = p[17], mode = p[18];
    bool single = mode == SC__DV_SINGLE;
    if (ord_bits > 64 || off_bits > 64 || n > (UINT64_C(1) << 40) || n_ords > (UINT64_C(1) << 32) ||
        tb > f->dvs_len || mode > SC__DV_SINGLE || (single && (off_bits != 0 || n > seg->n_docs)))
        FAIL(f->dvs_off, "sorted-set doc values header invalid");
    bool blocked = seg->version >= 11; /* v11: term_rel + term_base, else u32 per ord */
    unsigned rel_bits = p[19];
    if (blocked && rel_bits > 32)
        FAIL(f->dvs_off, "sorted-set doc values header invalid");
    uint64_t toffs_len =
        blocked ? sc__packed_bytes(n_ords + 1, rel_bits) + (n_ords / SC__DV_TERM_BLOCK + 1) * 4
                : (n_ords + 1) * 4;
    uint64_t need = SC__DV_HEADER_BYTES + toffs_len + tb +
                    (single ? sc__packed_bytes(seg->n_docs, ord_bits)
                            : sc__packed_bytes((uint64_t)seg->n_docs + 1, off_bits) +
                                  sc__packed_bytes(n, ord_bits));
    if (need != f->dvs_len)
        FAIL(f->dvs_off, "sorted-set doc values size mismatch");
    const uint8_t *toffs = p + SC__DV_HEADER_BYTES;
    const uint8_t *tbase = toffs + sc__packed_bytes(n_ords + 1, rel_bits);
    uint64_t prev = 0;
    for (uint64_t i = 0; i <= n_ords; i++) {
        uint64_t v, rel = 0;
        if (blocked) {
            rel = sc__packed_get(toffs, i, rel_bits);
            v = sc__ld32(tbase + 4 * (i / SC__DV_TERM_BLOCK)) + rel;
        } else {
            v = sc__ld32(toffs + 4 * i);
        }
        if (v < prev || v > tb || (i == 0 && v != 0) || (i == n_ords && v != tb) ||
            (i % SC__DV_TERM_BLOCK == 0 && rel != 0))
            FAIL(f->dvs_off, "sorted-set term offsets invalid");
        prev = v;
    }
    const uint8_t *offs = toffs + toffs_len + tb;
    if (single) {
        /* per doc ord + 1, 0 = none; n docs have one */
        uint64_t have = 0;
        for (uint32_t d = 0; d < seg->n_docs; d++) {
            uint64_t v = sc__packed_get(offs, d, ord_bits);
            if (v > n_ords)
                FAIL(f->dvs_off, "sorted-set ord out of range");
            have += v != 0;
        }
        if (have != n)
            FAIL(f->dvs_off, "sorted-set value count mismatch");
        return SC_OK;
    }
    if (check_packed_offsets(offs, seg->n_docs, off_bits, n) != SC_OK)
        FAIL(f->dvs_off, "sorted-set doc values offsets invalid");
    const uint8_t *ords = offs + sc__packed_bytes((uint64_t)seg->n_docs + 1, off_bits);
    for (uint64_t i = 0; i < n; i++)
        if (sc__packed_get(ords, i, ord_bits) >= n_ords)
            FAIL(f->dvs_off, "sorted-set ord out of range");
    return SC_OK;
}

static sc_status check_terms(sc_segment *seg, const sc_field_info *f, sc_index_error *err)
{
    uint64_t n_blocks = (f->n_terms + SC__TERMS_PER_BLOCK - 1) / SC__TERMS_PER_BLOCK;
    if (f->tindex_len != n_blocks * 4)
        FAIL(f->tindex_off, "term index size mismatch");
    const uint8_t *ix = seg->bytes.ptr + f->tindex_off;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < n_blocks; i++) {
        uint64_t v = sc__ld32(ix + 4 * i);
        if ((i == 0 && v != 0) || (i > 0 && v <= prev) || v >= f->tdata_len)
            FAIL(f->tindex_off + 4 * i, "term index entry invalid");
        prev = v;
    }
    return SC_OK;
}

static sc_status parse_fields(sc_segment *seg, uint64_t ft_off, uint64_t ft_len, uint64_t body_end,
                              sc_index_error *err)
{
    rd r = {seg->bytes.ptr + ft_off, seg->bytes.ptr + ft_off + ft_len, false};
    uint64_t n = rd_u(&r, 4);
    if (r.bad || n > ft_len / 16)
        FAIL(ft_off, "field table truncated");
    seg->fields = calloc(n ? n : 1, sizeof(sc_field_info));
    if (!seg->fields)
        return SC_ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        sc_field_info *f = &seg->fields[i];
        uint64_t at = (uint64_t)(r.p - seg->bytes.ptr);
        uint64_t nl = rd_u(&r, 2);
        if (r.bad || nl == 0 || (uint64_t)(r.end - r.p) < nl)
            FAIL(at, "field name truncated");
        f->name = sc_slice_make(r.p, nl);
        r.p += nl;
        uint64_t kind = rd_u(&r, 1);
        (void)rd_u(&r, 1);
        f->flags = (uint32_t)rd_u(&r, 4);
        f->doc_count = (uint32_t)rd_u(&r, 4);
        f->sum_total_term_freq = rd_u(&r, 8);
        f->sum_doc_freq = rd_u(&r, 8);
        f->n_terms = rd_u(&r, 8);
        uint64_t sec[2 * SC__FIELD_SECTIONS];
        for (int k = 0; k < 2 * SC__FIELD_SECTIONS; k++)
            sec[k] = rd_u(&r, 8);
        if (r.bad)
            FAIL(at, "field entry truncated");
        if (kind > (seg->version >= 8 ? SC_FIELD_VECTOR : SC_FIELD_NUMERIC) ||
            f->doc_count > seg->n_docs)
            FAIL(at, "field kind or doc count invalid");
        f->kind = (sc_field_kind)kind;
        f->number = (uint32_t)i;
        if (i > 0 && sc_slice_cmp(seg->fields[i - 1].name, f->name) >= 0)
            FAIL(at, "fields not sorted");
        for (int k = 0; k < SC__FIELD_SECTIONS; k++) {
            if (sec[2 * k + 1] == 0)
                sec[2 * k] = SC__SEG_HEADER_BYTES; /* an absent section's offset is ignored */
            else if (!range_ok(sec[2 * k], sec[2 * k + 1], SC__SEG_HEADER_BYTES, body_end))
                FAIL(at, "field section out of bounds");
        }
        f->tindex_off = sec[0], f->tindex_len = sec[1];
        f->tdata_off = sec[2], f->tdata_len = sec[3];
        f->norms_off = sec[4], f->norms_len = sec[5];
        f->dvn_off = sec[6], f->dvn_len = sec[7];
        f->dvs_off = sec[8], f->dvs_len = sec[9];
        f->points_off = sec[10], f->points_len = sec[11];
        if (f->n_terms > f->tdata_len)
            FAIL(at, "term count exceeds term data");
        SC_TRY(check_terms(seg, f, err));
        if (f->norms_len && f->norms_len != seg->n_docs)
            FAIL(f->norms_off, "norms size mismatch");
        if (f->dvn_len)
            SC_TRY(check_dvn(seg, f, err));
        if (f->dvs_len)
            SC_TRY(check_dvs(seg, f, err));
        if (f->kind != SC_FIELD_NUMERIC && (f->flags & SC_FIELD_GEO))
            FAIL(at, "geo flag on a non-numeric field");
        if (f->kind == SC_FIELD_VECTOR && (f->points_len || f->doc_count)) {
            sc_vec_field vf;
            const char *why = "vector field without vectors";
            if (f->n_terms || f->norms_len || f->dvn_len || f->dvs_len || !f->points_len ||
                sc_vec_section_open(sc_slice_make(seg->bytes.ptr + f->points_off, f->points_len),
                                    seg->n_docs, &vf, &why) != SC_OK)
                FAIL(f->points_off, why);
            if (vf.n != f->doc_count)
                FAIL(f->points_off, "vector count mismatch");
        } else if (f->points_len) {
            sc_slice pb = sc_slice_make(seg->bytes.ptr + f->points_off, f->points_len);
            sc_bkd t;
            sc_bkd2 t2;
            bool ok = f->kind == SC_FIELD_NUMERIC;
            if (ok && (f->flags & SC_FIELD_GEO))
                ok = sc_bkd2_open(pb, &t2) == SC_OK && sc_bkd2_doc_bound(&t2) <= seg->n_docs;
            else if (ok)
                ok = sc_bkd_open(pb, &t) == SC_OK && sc_bkd_doc_bound(&t) <= seg->n_docs;
            if (!ok)
                FAIL(f->points_off, "points section invalid");
        }
    }
    if (r.p != r.end)
        FAIL((uint64_t)(r.p - seg->bytes.ptr), "field table has trailing bytes");
    seg->n_fields = (size_t)n;
    return SC_OK;
}

static sc_status parse_stored(sc_segment *seg, uint64_t off, uint64_t len, uint64_t body_end,
                              sc_index_error *err)
{
    if (len < 4)
        FAIL(off, "stored index truncated");
    const uint8_t *p = seg->bytes.ptr + off;
    uint64_t n = sc__ld32(p);
    uint64_t entries = 4 + n * SC__STORED_ENTRY_BYTES, dict_len = 0;
    if (seg->version >= 10) { /* the trailer: dict_len:u32 dict */
        if (len < entries + 4)
            FAIL(off, "stored index truncated");
        dict_len = sc__ld32(p + entries);
        if (len != entries + 4 + dict_len)
            FAIL(off, "stored index size mismatch");
    } else if (len != entries) {
        FAIL(off, "stored index size mismatch");
    }
    uint64_t next_doc = 0, dropped = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *e = p + 4 + i * SC__STORED_ENTRY_BYTES;
        /* each block's frame header is read, which touches nearly every page of the stored
         * blocks: drop them every 32 MiB so opening a large segment stays small in RSS */
        if (seg->mapped && sc__ld64(e + 8) >= dropped + ((uint64_t)32 << 20)) {
            sc_mmap_drop_range(&seg->map, dropped, sc__ld64(e + 8) - dropped);
            dropped = sc__ld64(e + 8);
        }
        uint64_t first = sc__ld32(e), cnt = sc__ld32(e + 4), bo = sc__ld64(e + 8);
        uint64_t cl = sc__ld32(e + 16), raw = sc__ld32(e + 20);
        if (first != next_doc || cnt == 0 || !range_ok(bo, cl, SC__SEG_HEADER_BYTES, body_end))
            FAIL(off + 4 + i * SC__STORED_ENTRY_BYTES, "stored index entry invalid");
        /* the frame must declare the raw size, and zstd cannot expand more than ~32768x (an
         * RLE block of 128 KiB takes 4 bytes): a bound on what a reader will allocate */
        if (raw > cl * 32768 + 1024 || ZSTD_getFrameContentSize(seg->bytes.ptr + bo, cl) != raw)
            FAIL(bo, "stored block size invalid");
        next_doc += cnt;
    }
    if (next_doc != seg->n_docs)
        FAIL(off, "stored index doc count mismatch");
    seg->stored_idx = p + 4;
    seg->n_stored_blocks = (uint32_t)n;
    if (dict_len) {
        seg->stored_ddict = ZSTD_createDDict(p + entries + 4, (size_t)dict_len);
        if (!seg->stored_ddict)
            FAIL(off + entries + 4, "stored dictionary invalid");
        seg->stored_dict_len = (uint32_t)dict_len;
    }
    return SC_OK;
}

/* The checksum of the first len bytes. A mapped file is read 32 MiB at a time and each
 * window's pages dropped after it, so opening a large segment (a force merge's output) does
 * not make the whole file resident in this process. */
static uint64_t checksum_of(const sc_segment *seg, uint64_t len)
{
    const size_t window = (size_t)32 << 20;
    sc_checksum_state *cs = seg->mapped && len > window ? sc_checksum_new() : NULL;
    if (!cs)
        return sc_checksum(seg->bytes.ptr, len);
    for (uint64_t off = 0; off < len; off += window) {
        size_t n = len - off < window ? (size_t)(len - off) : window;
        sc_checksum_update(cs, seg->bytes.ptr + off, n);
        sc_mmap_drop_range(&seg->map, off, n);
    }
    uint64_t ck = sc_checksum_digest(cs);
    sc_checksum_free(cs);
    return ck;
}

static sc_status parse(sc_segment *seg, bool verify, sc_index_error *err)
{
    const uint8_t *b = seg->bytes.ptr;
    uint64_t size = seg->bytes.len;
    if (size < SC__SEG_HEADER_BYTES + SC__SEG_FOOTER_BYTES)
        FAIL(size, "file truncated");
    if (memcmp(b, SC__SEG_MAGIC, 8) != 0)
        FAIL(0, "bad magic");
    if (sc__ld32(b + 8) < SC__SEG_VERSION_MIN || sc__ld32(b + 8) > SC__SEG_VERSION)
        FAIL(8, "unsupported format version");
    const uint8_t *ft = b + size - SC__SEG_FOOTER_BYTES;
    if (memcmp(ft + 32, SC__SEG_END_MAGIC, 8) != 0)
        FAIL(size - SC__SEG_FOOTER_BYTES + 32, "bad footer magic (truncated?)");
    seg->checksum = sc__ld64(ft + 40);
    if (verify && checksum_of(seg, size - 8) != seg->checksum)
        FAIL(size - 8, "footer checksum mismatch");
    seg->n_docs = sc__ld32(b + 12);
    seg->version = sc__ld32(b + 8);
    if (seg->n_docs == UINT32_MAX)
        FAIL(12, "doc count invalid");
    uint64_t body_end = size - SC__SEG_FOOTER_BYTES;
    uint64_t ft_off = sc__ld64(ft), ft_len = sc__ld64(ft + 8);
    uint64_t st_off = sc__ld64(ft + 16), st_len = sc__ld64(ft + 24);
    if (!range_ok(ft_off, ft_len, SC__SEG_HEADER_BYTES, body_end) ||
        !range_ok(st_off, st_len, SC__SEG_HEADER_BYTES, body_end))
        FAIL(size - SC__SEG_FOOTER_BYTES, "footer section out of bounds");
    SC_TRY(parse_stored(seg, st_off, st_len, body_end, err));
    return parse_fields(seg, ft_off, ft_len, body_end, err);
}

static void seg_free(sc_segment *seg)
{
    sc__segment_nested_fini(seg);
    free(seg->fields);
    ZSTD_freeDDict(seg->stored_ddict);
    free(seg->path);
    if (seg->mapped) {
        sc_mmap_close(&seg->map);
        if (seg->charged)
            sc_alloc_pool_add(&sc_pool_index_segments, -(int64_t)seg->bytes.len);
    }
    free(seg);
}

static sc_status open_common(sc_segment *seg, bool verify, sc_segment **out, sc_index_error *err)
{
    atomic_init(&seg->refs, 1);
    sc_status st = parse(seg, verify, err);
    if (st == SC_OK && (st = sc__segment_nested_init(seg)) == SC_ECORRUPT)
        sc__set_error(err, seg->path, 0, "nested documents: a block does not end with its root");
    if (st != SC_OK) {
        seg_free(seg);
        return st;
    }
    *out = seg;
    return SC_OK;
}

sc_status sc_segment_open_ex(const char *dir, const char *name, sc_segment **out,
                             sc_index_error *err)
{
    if (strlen(name) > SC_SEGMENT_NAME_MAX)
        return SC_EINVAL;
    sc_segment *seg = calloc(1, sizeof(*seg));
    if (!seg)
        return SC_ENOMEM;
    snprintf(seg->name, sizeof(seg->name), "%s", name);
    size_t plen = strlen(dir) + 1 + strlen(name) + strlen(SC_SEGMENT_SUFFIX) + 1;
    if (plen > 4096) {
        free(seg);
        return SC_EINVAL;
    }
    seg->path = malloc(plen);
    if (!seg->path) {
        free(seg);
        return SC_ENOMEM;
    }
    snprintf(seg->path, plen, "%s/%s%s", dir, name, SC_SEGMENT_SUFFIX);
    sc_status st = sc_mmap_open(seg->path, &seg->map);
    if (st != SC_OK) {
        sc__set_error(err, seg->path, 0, st == SC_ENOTFOUND ? "no such file" : "cannot map");
        free(seg->path);
        free(seg);
        return st;
    }
    seg->mapped = true;
    seg->bytes = seg->map.bytes;
    seg->charged = true;
    sc_alloc_pool_add(&sc_pool_index_segments, (int64_t)seg->bytes.len);
    st = open_common(seg, true, out, err);
    /* the checksum read every page: a new segment (a merge's output: the whole index) would
     * otherwise stay resident in this process until evicted */
    if (st == SC_OK)
        sc_segment_drop_pages(*out);
    return st;
}

void sc_segment_drop_pages(const sc_segment *seg)
{
    if (seg->mapped)
        sc_mmap_drop_pages(&seg->map);
}

sc_status sc_segment_open(const char *dir, const char *name, sc_segment **out)
{
    return sc_segment_open_ex(dir, name, out, NULL);
}

sc_status sc_segment_open_bytes(sc_slice bytes, const char *name, bool verify_checksum,
                                sc_segment **out, sc_index_error *err)
{
    sc_segment *seg = calloc(1, sizeof(*seg));
    if (!seg)
        return SC_ENOMEM;
    snprintf(seg->name, sizeof(seg->name), "%s", name ? name : "");
    seg->path = strdup(name ? name : "");
    if (!seg->path) {
        free(seg);
        return SC_ENOMEM;
    }
    seg->bytes = bytes;
    return open_common(seg, verify_checksum, out, err);
}

void sc_segment_ref(sc_segment *seg)
{
    atomic_fetch_add_explicit(&seg->refs, 1, memory_order_relaxed);
}

void sc_segment_unref(sc_segment *seg)
{
    if (!seg)
        return;
    if (atomic_fetch_sub_explicit(&seg->refs, 1, memory_order_acq_rel) == 1)
        seg_free(seg);
}

uint32_t sc_segment_n_docs(const sc_segment *seg)
{
    return seg->n_docs;
}

const char *sc_segment_name(const sc_segment *seg)
{
    return seg->name;
}

uint64_t sc_segment_checksum(const sc_segment *seg)
{
    return seg->checksum;
}

uint64_t sc_segment_size_bytes(const sc_segment *seg)
{
    return seg->bytes.len;
}

size_t sc_segment_n_fields(const sc_segment *seg)
{
    return seg->n_fields;
}

const sc_field_info *sc_segment_field_at(const sc_segment *seg, size_t i)
{
    return i < seg->n_fields ? &seg->fields[i] : NULL;
}

const sc_field_info *sc__segment_fields(const sc_segment *seg)
{
    return seg->fields;
}

const sc_field_info *sc_segment_field(const sc_segment *seg, sc_slice name)
{
    size_t lo = 0, hi = seg->n_fields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = sc_slice_cmp(seg->fields[mid].name, name);
        if (c == 0)
            return &seg->fields[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const uint8_t *sc_segment_norms(const sc_segment *seg, const sc_field_info *f)
{
    if (!f || f->norms_len == 0)
        return NULL;
    return seg->bytes.ptr + f->norms_off;
}

sc_status sc_segment_points(const sc_segment *seg, const sc_field_info *f, sc_bkd *out)
{
    if (!f || f->points_len == 0 || (f->flags & SC_FIELD_GEO))
        return SC_ENOTFOUND;
    return sc_bkd_open(sc_slice_make(seg->bytes.ptr + f->points_off, f->points_len), out);
}

sc_status sc_segment_points2(const sc_segment *seg, const sc_field_info *f, sc_bkd2 *out)
{
    if (!f || f->points_len == 0 || !(f->flags & SC_FIELD_GEO))
        return SC_ENOTFOUND;
    return sc_bkd2_open(sc_slice_make(seg->bytes.ptr + f->points_off, f->points_len), out);
}

sc_slice sc__segment_bytes(const sc_segment *seg)
{
    return seg->bytes;
}

uint32_t sc__segment_version(const sc_segment *seg)
{
    return seg->version;
}
