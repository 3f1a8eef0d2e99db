/* Writes a builder's buffered documents as one segment file (format in docs/format.md):
 * header, per field [postings+positions of every term, term index, term blocks, norms,
 * numeric doc values, sorted-set doc values], stored-field blocks, the field table, the stored
 * index and the footer with the checksum. Records are grouped by term with one counting sort. */
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "index/bitpack.h"
#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/builder_impl.h"
#include "index/postenc.h"
#include "index/postings.h"
#include "index/vecfield.h"

typedef struct wctx {
    sc_segment_builder *b;
    sc__out *o;
    uint32_t *order;  /* record indexes grouped by gid */
    uint64_t *starts; /* gid -> first index in order */
    sc__postenc enc;  /* one term's postings */
    sc__termdict td;  /* one field's term dictionary */
    sc_buf ft;
    SC_VEC(uint32_t) gids;
    sc_status st;
} wctx;

static int name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SC_SEGMENT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (name[i] == '/' || name[i] == '\0')
            return 0;
    return name[0] != '.';
}

/* Sort key of a term: its first 8 bytes big-endian (zero padded) and its gid; most
 * comparisons end on the prefix without touching the term entry or its bytes (the pointer
 * chase per comparison of the previous gid sort was ~5 % of the indexing CPU). */
typedef struct tkey {
    uint64_t pfx;
    uint32_t gid;
} tkey;

static uint64_t term_prefix(const uint8_t *k, uint32_t len)
{
    uint8_t b[8] = {0};
    memcpy(b, k, len < 8 ? len : 8);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static int cmp_tkey(const void *a, const void *b, void *ctx)
{
    const tkey *x = a, *y = b;
    if (x->pfx != y->pfx)
        return x->pfx < y->pfx ? -1 : 1;
    const sc__bterm *terms = ctx;
    const sc__bterm *s = &terms[x->gid], *t = &terms[y->gid];
    if (s->len <= 8 || t->len <= 8)
        return (s->len > t->len) - (s->len < t->len); /* equal padded prefixes */
    return sc_slice_cmp(sc_slice_make(s->key + 8, s->len - 8),
                        sc_slice_make(t->key + 8, t->len - 8));
}

static void write_section(wctx *w, const sc_buf *buf, uint64_t *off, uint64_t *len)
{
    *off = w->o->pos;
    *len = buf->len;
    sc__out_write(w->o, buf->ptr, buf->len);
}

static void write_terms(wctx *w, sc__bfield *f, uint64_t sec[2 * SC__FIELD_SECTIONS],
                        uint64_t *n_terms, uint64_t *sum_df)
{
    sc_segment_builder *b = w->b;
    bool freqs = f->kind == SC_FIELD_TEXT;
    bool with_pos = freqs && (f->flags & SC_FIELD_POSITIONS);
    bool norms = freqs && (f->flags & SC_FIELD_NORMS);
    sc__termdict_begin(&w->td, freqs, with_pos);
    for (size_t i = 0; i < w->gids.len && w->st == SC_OK; i++) {
        sc__bterm *t = &b->terms.ptr[w->gids.ptr[i]];
        if (t->df == 0)
            continue;
        sc__postenc_begin(&w->enc, freqs, with_pos, norms, f->norms.ptr, f->norms.len);
        /* the term's records are scattered: prefetch ahead */
        const uint32_t *ord = w->order + w->starts[w->gids.ptr[i]];
        for (uint32_t j = 0; j < t->df; j++) {
            if (j + 16 < t->df)
                __builtin_prefetch(&b->recs.ptr[ord[j + 16]]);
            const sc__brec *r = &b->recs.ptr[ord[j]];
            sc__postenc_add(&w->enc, r->doc, r->freq, b->positions.ptr + r->pos);
        }
        sc__postenc_finish(&w->enc);
        if (w->enc.st != SC_OK) {
            w->st = w->enc.st;
            break;
        }
        uint64_t post_off = w->o->pos;
        sc__out_write(w->o, w->enc.skip.ptr, w->enc.skip.len);
        sc__out_write(w->o, w->enc.blk.ptr, w->enc.blk.len);
        uint64_t pos_off = w->o->pos;
        sc__out_write(w->o, w->enc.pos.ptr, w->enc.pos.len);
        sc__termdict_add(&w->td, sc_slice_make(t->key, t->len), t->df, t->ttf, post_off, pos_off);
        *sum_df += t->df;
    }
    if (w->st == SC_OK)
        w->st = w->td.st;
    *n_terms = w->td.count;
    write_section(w, &w->td.tindex, &sec[0], &sec[1]);
    write_section(w, &w->td.tdata, &sec[2], &sec[3]);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void write_dvn(wctx *w, const sc__bfield *f, uint64_t *off, uint64_t *len)
{
    uint32_t n_docs = w->b->n_docs;
    sc_buf out = {0};
    uint64_t n = f->dvn.len;
    int64_t min = 0;
    uint64_t g = 0, maxd = 0;
    for (uint64_t i = 0; i < n; i++)
        if (i == 0 || f->dvn.ptr[i].value < min)
            min = f->dvn.ptr[i].value;
    for (uint64_t i = 0; i < n; i++)
        g = gcd64(g, (uint64_t)f->dvn.ptr[i].value - (uint64_t)min);
    if (g == 0)
        g = 1;
    uint64_t *tmp = malloc((n + n_docs + 1) * sizeof(uint64_t));
    if (!tmp) {
        w->st = SC_ENOMEM;
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        tmp[i] = ((uint64_t)f->dvn.ptr[i].value - (uint64_t)min) / g;
        if (tmp[i] > maxd)
            maxd = tmp[i];
    }
    uint64_t *offs = tmp + n;
    uint64_t j = 0;
    for (uint32_t d = 0; d <= n_docs; d++) {
        offs[d] = j;
        while (j < n && f->dvn.ptr[j].doc == d)
            j++;
    }
    /* every doc exactly one value (the common case): no starts, value i belongs to doc i */
    bool single = n == n_docs;
    for (uint32_t d = 0; single && d < n_docs; d++)
        single = offs[d + 1] - offs[d] == 1;
    unsigned bits = sc__bits_for(maxd), off_bits = single ? 0 : sc__bits_for(n);
    sc__buf_u64(&out, n, &w->st);
    sc__buf_u64(&out, (uint64_t)min, &w->st);
    sc__buf_u64(&out, g, &w->st);
    uint8_t hdr[8] = {(uint8_t)bits, (uint8_t)off_bits, single ? SC__DV_SINGLE : SC__DV_MULTI};
    sc__buf_put(&out, hdr, 8, &w->st);
    if (!single)
        sc__packed_put(&out, offs, (uint64_t)n_docs + 1, off_bits, &w->st);
    sc__packed_put(&out, tmp, n, bits, &w->st);
    free(tmp);
    write_section(w, &out, off, len);
    sc_vec_free(&out);
}

/* The points section: a 1-D tree of the values, or for SC_FIELD_GEO a 2-D tree of the
 * unpacked (lat, lon). */
static void write_points(wctx *w, const sc__bfield *f, uint64_t *off, uint64_t *len)
{
    size_t n = f->pts.len;
    bool geo = (f->flags & SC_FIELD_GEO) != 0;
    int64_t *vals = malloc((n ? n : 1) * sizeof(int64_t));
    uint32_t *docs = malloc((n ? n : 1) * sizeof(uint32_t));
    sc_buf out = {0};
    if (!vals || !docs) {
        w->st = SC_ENOMEM;
    } else {
        for (size_t i = 0; i < n; i++) {
            vals[i] = f->pts.ptr[i].value;
            docs[i] = f->pts.ptr[i].doc;
        }
        sc_status st;
        if (geo) {
            int32_t *lat = malloc((n ? n : 1) * sizeof(int32_t));
            int32_t *lon = malloc((n ? n : 1) * sizeof(int32_t));
            st = lat && lon ? SC_OK : SC_ENOMEM;
            for (size_t i = 0; st == SC_OK && i < n; i++) {
                lat[i] = (int32_t)(uint32_t)((uint64_t)vals[i] >> 32);
                lon[i] = (int32_t)(uint32_t)(uint64_t)vals[i];
            }
            if (st == SC_OK)
                st = sc_bkd2_write(lat, lon, docs, n, w->b->n_docs, 0, &out);
            free(lat);
            free(lon);
        } else {
            st = sc_bkd_write(vals, docs, n, w->b->n_docs, 0, &out);
        }
        if (st != SC_OK)
            w->st = st;
        else
            write_section(w, &out, off, len);
    }
    free(vals);
    free(docs);
    sc_vec_free(&out);
}

/* The vector section (vecfield.h), 64-byte aligned in the file so the reader can use its
 * float and u32 arrays in place (the mapping is page aligned). */
static void write_vectors(wctx *w, const sc__bfield *f, uint64_t *off, uint64_t *len)
{
    static const uint8_t zeros[64] = {0};
    if (w->o->pos % 64)
        sc__out_write(w->o, zeros, 64 - w->o->pos % 64);
    *off = w->o->pos;
    sc_status st = sc__vec_section_stream(&f->vp, f->vdocs.ptr, f->vecs.ptr, NULL,
                                          (uint32_t)f->vdocs.len, f->seed, f->seed_base, w->o, len);
    if (st != SC_OK)
        w->st = st;
}

static int cmp_dvs(const void *a, const void *b)
{
    const sc__dvs *x = a, *y = b;
    if (x->doc != y->doc)
        return x->doc < y->doc ? -1 : 1;
    return (x->gid > y->gid) - (x->gid < y->gid); /* gid holds the ord while sorting */
}

static void write_dvs(wctx *w, sc__bfield *f, uint64_t *off, uint64_t *len)
{
    sc_segment_builder *b = w->b;
    uint32_t n_docs = b->n_docs;
    sc_buf out = {0};
    uint64_t n_ords = 0, term_bytes = 0;
    for (size_t i = 0; i < w->gids.len; i++) {
        sc__bterm *t = &b->terms.ptr[w->gids.ptr[i]];
        if (t->in_dv) {
            t->rank = (uint32_t)n_ords++;
            term_bytes += t->len;
        }
    }
    uint64_t n = f->dvs.len;
    uint64_t *tmp = malloc((n + n_docs + 1) * sizeof(uint64_t));
    sc__dvs *recs = malloc((n ? n : 1) * sizeof(sc__dvs));
    if (!tmp || !recs || term_bytes > UINT32_MAX) {
        w->st = tmp && recs ? SC_ELIMIT : SC_ENOMEM;
        free(tmp);
        free(recs);
        return;
    }
    bool sorted = true;
    for (uint64_t i = 0; i < n; i++) {
        recs[i] = (sc__dvs){f->dvs.ptr[i].doc, b->terms.ptr[f->dvs.ptr[i].gid].rank};
        if (i > 0 && cmp_dvs(&recs[i - 1], &recs[i]) > 0)
            sorted = false;
    }
    if (!sorted) /* values arrive in doc order: only multi-valued docs need the sort */
        qsort(recs, n, sizeof(sc__dvs), cmp_dvs);
    for (uint64_t i = 0; i < n; i++)
        tmp[i] = recs[i].gid;
    uint64_t *offs = tmp + n;
    uint64_t j = 0;
    for (uint32_t d = 0; d <= n_docs; d++) {
        offs[d] = j;
        while (j < n && recs[j].doc == d)
            j++;
    }
    /* at most one value per doc (the common case): per doc ord + 1 (0 = none), no starts */
    bool single = true;
    for (uint32_t d = 0; single && d < n_docs; d++)
        single = offs[d + 1] - offs[d] <= 1;
    if (single) {
        for (uint32_t d = 0; d < n_docs; d++)
            offs[d] = offs[d + 1] > offs[d] ? recs[offs[d]].gid + 1 : 0;
    }
    free(recs);
    unsigned ord_bits = single ? sc__bits_for(n_ords) : sc__bits_for(n_ords ? n_ords - 1 : 0);
    unsigned off_bits = single ? 0 : sc__bits_for(n);
    /* the terms' start offsets: rel[o] = start(o) - base[o / 16] (the widest rel sets the
     * width), base[k] = start(16 k); recs is free again, tmp still holds the ords */
    uint64_t *rel = malloc((n_ords + 1) * sizeof(uint64_t));
    uint32_t *base = malloc((n_ords / SC__DV_TERM_BLOCK + 1) * sizeof(uint32_t));
    if (!rel || !base) {
        w->st = SC_ENOMEM;
        free(rel);
        free(base);
        free(tmp);
        return;
    }
    uint64_t acc = 0, o = 0, max_rel = 0;
    for (size_t i = 0; i <= w->gids.len; i++) {
        const sc__bterm *t = i < w->gids.len ? &b->terms.ptr[w->gids.ptr[i]] : NULL;
        if (t && !t->in_dv)
            continue;
        if (o % SC__DV_TERM_BLOCK == 0)
            base[o / SC__DV_TERM_BLOCK] = (uint32_t)acc;
        rel[o] = acc - base[o / SC__DV_TERM_BLOCK];
        max_rel = rel[o] > max_rel ? rel[o] : max_rel;
        o++;
        if (t)
            acc += t->len;
    }
    unsigned rel_bits = sc__bits_for(max_rel);
    sc__buf_u64(&out, n_ords, &w->st);
    sc__buf_u64(&out, n, &w->st);
    uint8_t hdr[8] = {(uint8_t)ord_bits, (uint8_t)off_bits, single ? SC__DV_SINGLE : SC__DV_MULTI,
                      (uint8_t)rel_bits};
    sc__buf_put(&out, hdr, 8, &w->st);
    sc__buf_u64(&out, term_bytes, &w->st);
    sc__packed_put(&out, rel, n_ords + 1, rel_bits, &w->st);
    for (uint64_t k = 0; k <= n_ords / SC__DV_TERM_BLOCK; k++)
        sc__buf_u32(&out, base[k], &w->st);
    free(rel);
    free(base);
    for (size_t i = 0; i < w->gids.len; i++) {
        const sc__bterm *t = &b->terms.ptr[w->gids.ptr[i]];
        if (t->in_dv)
            sc__buf_put(&out, t->key, t->len, &w->st);
    }
    if (single) {
        sc__packed_put(&out, offs, n_docs, ord_bits, &w->st);
    } else {
        sc__packed_put(&out, offs, (uint64_t)n_docs + 1, off_bits, &w->st);
        sc__packed_put(&out, tmp, n, ord_bits, &w->st);
    }
    free(tmp);
    write_section(w, &out, off, len);
    sc_vec_free(&out);
}

static void write_field(wctx *w, sc__bfield *f)
{
    sc_segment_builder *b = w->b;
    uint64_t sec[2 * SC__FIELD_SECTIONS] = {0};
    uint64_t n_terms = 0, sum_df = 0;
    sc_vec_clear(&w->gids);
    if (sc_vec_reserve(&w->gids, f->terms.len) != SC_OK) {
        w->st = SC_ENOMEM;
        return;
    }
    size_t n = f->terms.len;
    tkey *keys = malloc((n ? n : 1) * sizeof(tkey));
    if (!keys) {
        w->st = SC_ENOMEM;
        return;
    }
    n = 0;
    for (size_t i = 0; i < f->terms.cap; i++) {
        uint32_t g1 = f->terms.slots[i].gid1;
        if (g1) {
            const sc__bterm *t = &b->terms.ptr[g1 - 1];
            keys[n++] = (tkey){term_prefix(t->key, t->len), g1 - 1};
        }
    }
    if (n > 1)
        qsort_r(keys, n, sizeof(tkey), cmp_tkey, b->terms.ptr);
    for (size_t i = 0; i < n; i++)
        w->gids.ptr[w->gids.len++] = keys[i].gid;
    free(keys);
    write_terms(w, f, sec, &n_terms, &sum_df);
    if (f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_NORMS)) {
        sec[4] = w->o->pos;
        sec[5] = b->n_docs;
        size_t have = f->norms.len < b->n_docs ? f->norms.len : b->n_docs;
        sc__out_write(w->o, f->norms.ptr, have);
        uint8_t zeros[4096] = {0};
        for (size_t left = b->n_docs - have; left > 0;) {
            size_t k = left < sizeof(zeros) ? left : sizeof(zeros);
            sc__out_write(w->o, zeros, k);
            left -= k;
        }
    }
    if (f->kind == SC_FIELD_NUMERIC && (f->flags & SC_FIELD_DOCVALUES))
        write_dvn(w, f, &sec[6], &sec[7]);
    if (f->kind == SC_FIELD_KEYWORD && (f->flags & SC_FIELD_DOCVALUES))
        write_dvs(w, f, &sec[8], &sec[9]);
    uint32_t flags = f->flags;
    if (f->kind == SC_FIELD_VECTOR && f->vdocs.len)
        write_vectors(w, f, &sec[10], &sec[11]);
    if (f->kind == SC_FIELD_NUMERIC && (f->flags & SC_FIELD_INDEXED) && f->pts.len) {
        write_points(w, f, &sec[10], &sec[11]);
        flags |= SC_FIELD_POINTS;
    }
    uint64_t doc_count = 0;
    for (size_t i = 0; i < f->has.len; i++)
        doc_count += (uint64_t)__builtin_popcountll(f->has.ptr[i]);
    uint64_t sum_ttf = f->kind == SC_FIELD_TEXT ? f->sum_ttf : sum_df;
    sc__buf_u16(&w->ft, (uint16_t)f->name_len, &w->st);
    sc__buf_put(&w->ft, f->name, f->name_len, &w->st);
    sc__buf_u8(&w->ft, (uint8_t)f->kind, &w->st);
    sc__buf_u8(&w->ft, 0, &w->st);
    sc__buf_u32(&w->ft, flags, &w->st);
    sc__buf_u32(&w->ft, (uint32_t)doc_count, &w->st);
    sc__buf_u64(&w->ft, sum_ttf, &w->st);
    sc__buf_u64(&w->ft, sum_df, &w->st);
    sc__buf_u64(&w->ft, n_terms, &w->st);
    for (int i = 0; i < 2 * SC__FIELD_SECTIONS; i++)
        sc__buf_u64(&w->ft, sec[i], &w->st);
}

/* The compressor of the segment's stored blocks, its dictionary trained on every step-th doc
 * (sc__stored_sample_step) when the segment holds enough stored bytes. */
static sc_status stored_comp(const sc_segment_builder *b, sc__stored_comp *c)
{
    uint32_t step = sc__stored_sample_step(b->stored.len, b->n_docs);
    if (!step)
        return sc__stored_comp_init(c, NULL, NULL, 0, b->stored.len);
    size_t n = 0;
    size_t *sizes = malloc((b->n_docs / step + 1) * sizeof(size_t));
    sc_buf samples = {0};
    sc_status st = sizes ? SC_OK : SC_ENOMEM;
    for (uint32_t d = 0; st == SC_OK && d < b->n_docs; d += step) {
        uint64_t s = b->stored_off.ptr[d];
        uint64_t e = d + 1 < b->n_docs ? b->stored_off.ptr[d + 1] : b->stored.len;
        sc__buf_put(&samples, b->stored.ptr + s, (size_t)(e - s), &st);
        sizes[n++] = (size_t)(e - s);
    }
    if (st == SC_OK)
        st = sc__stored_comp_init(c, samples.ptr, sizes, n, b->stored.len);
    free(sizes);
    sc_vec_free(&samples);
    return st;
}

static void write_stored(wctx *w, uint64_t *idx_off, uint64_t *idx_len)
{
    sc_segment_builder *b = w->b;
    sc_buf idx = {0}, comp = {0};
    sc__stored_comp sc;
    sc_status cst = stored_comp(b, &sc);
    if (cst != SC_OK) {
        sc__stored_comp_fini(&sc);
        w->st = cst;
        return;
    }
    uint32_t n_blocks = 0;
    sc__buf_u32(&idx, 0, &w->st);
    for (uint32_t d = 0; d < b->n_docs && w->st == SC_OK;) {
        uint32_t e = d;
        uint64_t start = b->stored_off.ptr[d];
        while (e < b->n_docs && e - d < SC__STORED_MAX_DOCS &&
               (e == d || b->stored_off.ptr[e] - start < SC__STORED_MAX_RAW))
            e++;
        uint64_t end = e < b->n_docs ? b->stored_off.ptr[e] : b->stored.len;
        size_t raw = (size_t)(end - start);
        cst = sc__stored_comp_block(&sc, b->stored.ptr + start, raw, &comp);
        if (cst != SC_OK) {
            w->st = cst;
            break;
        }
        sc__buf_u32(&idx, d, &w->st);
        sc__buf_u32(&idx, e - d, &w->st);
        sc__buf_u64(&idx, w->o->pos, &w->st);
        sc__buf_u32(&idx, (uint32_t)comp.len, &w->st);
        sc__buf_u32(&idx, (uint32_t)raw, &w->st);
        sc__out_write(w->o, comp.ptr, comp.len);
        n_blocks++;
        d = e;
    }
    if (w->st == SC_OK)
        sc__st32(idx.ptr, n_blocks);
    sc__stored_comp_trailer(&sc, &idx, &w->st);
    sc__stored_comp_fini(&sc);
    write_section(w, &idx, idx_off, idx_len);
    sc_vec_free(&idx);
    sc_vec_free(&comp);
}

static int cmp_field_name(const void *a, const void *b)
{
    const sc__bfield *x = *(sc__bfield *const *)a, *y = *(sc__bfield *const *)b;
    return sc_slice_cmp(sc_slice_make(x->name, x->name_len), sc_slice_make(y->name, y->name_len));
}

sc_status sc_segment_builder_write(sc_segment_builder *b, const char *dir, const char *name,
                                   sc_segment_write_info *info)
{
    if (b->failed != SC_OK)
        return b->failed;
    if (!name_ok(name))
        return SC_EINVAL;
    char file[SC_SEGMENT_NAME_MAX + 8];
    snprintf(file, sizeof(file), "%s%s", name, SC_SEGMENT_SUFFIX);
    sc__out o;
    SC_TRY(sc__out_open(&o, dir, file));
    wctx w = {.b = b, .o = &o};
    size_t n_terms = b->terms.len;
    w.starts = calloc(n_terms + 1, sizeof(uint64_t));
    w.order = malloc((b->recs.len ? b->recs.len : 1) * sizeof(uint32_t));
    sc__bfield **fields = malloc((b->fields.len ? b->fields.len : 1) * sizeof(*fields));
    if (!w.starts || !w.order || !fields)
        w.st = SC_ENOMEM;
    if (w.st == SC_OK) {
        /* counting sort of records by term, stable so each term's docs stay ascending */
        for (size_t i = 0; i < b->recs.len; i++)
            w.starts[b->recs.ptr[i].gid + 1]++;
        for (size_t g = 0; g < n_terms; g++)
            w.starts[g + 1] += w.starts[g];
        uint64_t *fill = calloc(n_terms + 1, sizeof(uint64_t));
        if (!fill) {
            w.st = SC_ENOMEM;
        } else {
            for (size_t i = 0; i < b->recs.len; i++) {
                uint32_t g = b->recs.ptr[i].gid;
                w.order[w.starts[g] + fill[g]++] = (uint32_t)i;
            }
            free(fill);
        }
    }
    uint8_t hdr[SC__SEG_HEADER_BYTES] = {0};
    memcpy(hdr, SC__SEG_MAGIC, 8);
    sc__st32(hdr + 8, SC__SEG_VERSION);
    sc__st32(hdr + 12, b->n_docs);
    sc__out_write(&o, hdr, sizeof(hdr));
    if (w.st == SC_OK) {
        if (b->fields.len)
            memcpy(fields, b->fields.ptr, b->fields.len * sizeof(*fields));
        qsort(fields, b->fields.len, sizeof(*fields), cmp_field_name);
        sc__buf_u32(&w.ft, (uint32_t)b->fields.len, &w.st);
        for (size_t i = 0; i < b->fields.len && w.st == SC_OK && o.st == SC_OK; i++)
            write_field(&w, fields[i]);
    }
    uint64_t st_off = 0, st_len = 0, ft_off = 0, ft_len = 0;
    if (w.st == SC_OK)
        write_stored(&w, &st_off, &st_len);
    if (w.st == SC_OK)
        write_section(&w, &w.ft, &ft_off, &ft_len);
    uint8_t foot[SC__SEG_FOOTER_BYTES - 8];
    sc__st64(foot, ft_off);
    sc__st64(foot + 8, ft_len);
    sc__st64(foot + 16, st_off);
    sc__st64(foot + 24, st_len);
    memset(foot + 32, 0, 8);
    memcpy(foot + 32, SC__SEG_END_MAGIC, 8);
    sc__out_write(&o, foot, sizeof(foot));
    free(w.starts);
    free(w.order);
    free(fields);
    sc__postenc_fini(&w.enc);
    sc__termdict_fini(&w.td);
    sc_vec_free(&w.ft);
    sc_vec_free(&w.gids);
    if (w.st != SC_OK) {
        sc__out_abort(&o);
        return w.st;
    }
    uint64_t ck = 0;
    uint64_t size = o.pos + 8;
    SC_TRY(sc__out_finish(&o, dir, &ck));
    if (info) {
        info->n_docs = b->n_docs;
        info->size_bytes = size;
        info->checksum = ck;
    }
    return SC_OK;
}
