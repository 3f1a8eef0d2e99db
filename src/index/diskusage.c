/* Per-field disk usage of a segment (diskusage.h). The field data of the file is contiguous and
 * in field-table order (docs/format.md): for each field the postings and positions of its
 * terms, then its term index, term blocks, norms, doc values and points; then the stored
 * blocks, the stored-block index and the field table. A field's postings region is therefore
 * what lies between the end of the previous field's sections and its own first section. */
#include "index/diskusage.h"

#include <stdlib.h>
#include <string.h>

#include "index/internal.h"
#include "index/segment_impl.h"
#include "index/stored.h"
#include "index/terms.h"

#define HEADER_BYTES 16
#define FOOTER_BYTES 48

/* The smallest offset of the field's present sections, or UINT64_MAX when it has none; *end
 * receives the end of its last section (unchanged when none). */
static uint64_t first_section(const sc_field_info *f, uint64_t *end)
{
    const uint64_t sec[6][2] = {{f->tindex_off, f->tindex_len}, {f->tdata_off, f->tdata_len},
                                {f->norms_off, f->norms_len},   {f->dvn_off, f->dvn_len},
                                {f->dvs_off, f->dvs_len},       {f->points_off, f->points_len}};
    uint64_t first = UINT64_MAX;
    for (int i = 0; i < 6; i++) {
        if (!sec[i][1])
            continue;
        first = sec[i][0] < first ? sec[i][0] : first;
        if (sec[i][0] + sec[i][1] > *end)
            *end = sec[i][0] + sec[i][1];
    }
    return first;
}

/* Positions bytes of a field with positions: per term, from its positions offset to the next
 * term's postings offset (the writer emits postings then positions, term by term). */
static sc_status positions_of(const sc_segment *seg, const sc_field_info *f, uint64_t region_end,
                              uint64_t *out)
{
    sc_terms_iter it;
    SC_TRY(sc_terms_iter_init(&it, seg, f));
    uint64_t total = 0, pending = UINT64_MAX;
    bool has = true;
    sc_status st = SC_OK;
    while (st == SC_OK) {
        st = sc_terms_next(&it, &has);
        if (st != SC_OK || !has)
            break;
        const sc_term_info *ti = sc_terms_info(&it);
        if (pending != UINT64_MAX && ti->postings_off >= pending)
            total += ti->postings_off - pending;
        pending = ti->positions_off;
    }
    if (st == SC_OK && pending != UINT64_MAX && region_end >= pending)
        total += region_end - pending;
    sc_terms_iter_fini(&it);
    *out = total;
    return st;
}

/* Raw bytes of ids and of sources over every stored doc. */
static sc_status stored_split(const sc_segment *seg, uint64_t *id_raw, uint64_t *src_raw)
{
    sc_stored_reader r;
    sc_stored_reader_init(&r, seg);
    sc_status st = SC_OK;
    for (uint32_t d = 0; d < seg->n_docs && st == SC_OK; d++) {
        sc_slice id, src;
        st = sc_stored_get(&r, d, &id, &src);
        if (st == SC_OK) {
            *id_raw += id.len;
            *src_raw += src.len;
        }
    }
    sc_stored_reader_fini(&r);
    return st;
}

sc_status sc_segment_disk_usage_measure(const sc_segment *seg, sc_segment_disk_usage *out)
{
    memset(out, 0, sizeof *out);
    out->total_bytes = seg->bytes.len;
    out->n_fields = seg->n_fields;
    out->fields = calloc(seg->n_fields ? seg->n_fields : 1, sizeof *out->fields);
    if (!out->fields)
        return SC_ENOMEM;
    uint64_t run_end = HEADER_BYTES;
    sc_status st = SC_OK;
    for (size_t i = 0; i < seg->n_fields && st == SC_OK; i++) {
        const sc_field_info *f = &seg->fields[i];
        sc_field_disk_usage *u = &out->fields[i];
        uint64_t end = run_end;
        uint64_t first = first_section(f, &end);
        uint64_t inv = first != UINT64_MAX && first >= run_end ? first - run_end : 0;
        u->terms_bytes = f->tindex_len + f->tdata_len;
        u->norms_bytes = f->norms_len;
        u->doc_values_bytes = f->dvn_len + f->dvs_len;
        u->points_bytes = f->points_len;
        if (inv && f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_POSITIONS))
            st = positions_of(seg, f, first, &u->positions_bytes);
        u->postings_bytes = inv >= u->positions_bytes ? inv - u->positions_bytes : 0;
        run_end = end;
    }
    uint64_t comp = 0;
    for (uint32_t b = 0; b < seg->n_stored_blocks; b++)
        comp += sc__ld32(seg->stored_idx + (size_t)b * SC__STORED_ENTRY_BYTES + 16);
    comp += seg->stored_dict_len; /* the blocks' dictionary is part of the stored fields */
    uint64_t id_raw = 0, src_raw = 0;
    if (st == SC_OK)
        st = stored_split(seg, &id_raw, &src_raw);
    if (st != SC_OK) {
        sc_segment_disk_usage_fini(out);
        return st;
    }
    out->stored_id_bytes = id_raw + src_raw ? (uint64_t)((double)comp * (double)id_raw /
                                                         (double)(id_raw + src_raw))
                                            : 0;
    out->stored_source_bytes = comp - out->stored_id_bytes;
    uint64_t parts = comp;
    for (size_t i = 0; i < out->n_fields; i++) {
        const sc_field_disk_usage *u = &out->fields[i];
        parts += u->terms_bytes + u->postings_bytes + u->positions_bytes + u->norms_bytes +
                 u->doc_values_bytes + u->points_bytes;
    }
    out->overhead_bytes = out->total_bytes > parts ? out->total_bytes - parts : 0;
    return SC_OK;
}

void sc_segment_disk_usage_fini(sc_segment_disk_usage *u)
{
    free(u->fields);
    u->fields = NULL;
    u->n_fields = 0;
}
