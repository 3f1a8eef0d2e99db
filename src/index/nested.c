/* Block join support of a segment: the root-document bitset of a segment that holds nested
 * child documents (those with the SC_NESTED_PATH_FIELD keyword), computed once when the
 * segment is opened from that field's postings. Nothing is stored for it on disk, and a
 * segment without the field costs one field lookup. */
#include <stdlib.h>

#include "index/doc.h"
#include "index/postings.h"
#include "index/segment_impl.h"
#include "index/terms.h"

sc_status sc__segment_nested_init(sc_segment *seg)
{
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr(SC_NESTED_PATH_FIELD));
    if (!f || !f->n_terms || seg->n_docs == 0)
        return SC_OK;
    sc_bitset *bits = calloc(1, sizeof(*bits));
    sc_postings *p = malloc(sizeof(*p));
    sc_status st = bits && p ? sc_bitset_init(bits, seg->n_docs) : SC_ENOMEM;
    if (st != SC_OK) {
        free(bits);
        free(p);
        return st;
    }
    sc_bitset_set_range(bits, 0, seg->n_docs);
    sc_terms_iter it;
    st = sc_terms_iter_init(&it, seg, f);
    bool has = false;
    uint32_t n_children = 0;
    while (st == SC_OK && (st = sc_terms_next(&it, &has)) == SC_OK && has) {
        st = sc_postings_reset(p, seg, f, sc_terms_info(&it), 0);
        for (uint32_t d; st == SC_OK && (d = sc_postings_next(p)) != SC_POSTINGS_END;) {
            if (d >= seg->n_docs) {
                st = SC_ECORRUPT;
                break;
            }
            if (sc_bitset_test(bits, d)) {
                sc_bitset_clear(bits, d);
                n_children++;
            }
        }
        if (st == SC_OK)
            st = sc_postings_status(p);
    }
    sc_terms_iter_fini(&it);
    free(p);
    /* the last doc of a segment is always a root: a block never ends with a child */
    if (st == SC_OK && !sc_bitset_test(bits, seg->n_docs - 1))
        st = SC_ECORRUPT;
    if (st != SC_OK || n_children == 0) {
        sc_bitset_fini(bits);
        free(bits);
        return st;
    }
    seg->parents = bits;
    seg->n_children = n_children;
    return SC_OK;
}

void sc__segment_nested_fini(sc_segment *seg)
{
    if (seg->parents) {
        sc_bitset_fini(seg->parents);
        free(seg->parents);
        seg->parents = NULL;
    }
}

const sc_bitset *sc_segment_parents(const sc_segment *seg)
{
    return seg->parents;
}

uint32_t sc_segment_n_children(const sc_segment *seg)
{
    return seg->n_children;
}

uint32_t sc_segment_block_start(const sc_segment *seg, uint32_t doc)
{
    if (!seg->parents)
        return doc;
    while (doc > 0 && !sc_bitset_test(seg->parents, doc - 1))
        doc--;
    return doc;
}
