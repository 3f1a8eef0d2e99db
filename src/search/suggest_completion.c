/* The completion suggester per shard (suggest.h): the completion field's terms under the
 * prefix (one range of each segment's terms dictionary, or a fuzzy walk), their live docs, the
 * best input per doc. */
#include <stdlib.h>
#include <string.h>

#include "index/postings.h"
#include "index/terms.h"
#include "search/automaton.h"
#include "search/suggest.h"

typedef struct opts {
    sc_completion_option *v;
    size_t n, cap;
} opts;

static sc_status push(opts *o, sc_arena *a, sc_slice text, uint32_t weight, uint32_t doc)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 32;
        sc_completion_option *v = sc_arena_alloc(a, cap * sizeof *v);
        if (!v)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        if (o->n)
            memcpy(v, o->v, o->n * sizeof *v);
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (sc_completion_option){text, weight, doc};
    return SC_OK;
}

bool sc_completion_decode(sc_slice term, sc_slice *key, uint32_t *weight, sc_slice *text)
{
    const uint8_t *z = term.len ? memchr(term.ptr, 0, term.len) : NULL;
    if (!z || (size_t)(term.ptr + term.len - z) < 5)
        return false;
    *key = sc_slice_make(term.ptr, (size_t)(z - term.ptr));
    *weight = (uint32_t)z[1] << 24 | (uint32_t)z[2] << 16 | (uint32_t)z[3] << 8 | z[4];
    *text = sc_slice_make(z + 5, (size_t)(term.ptr + term.len - z - 5));
    return true;
}

static int cmp_opt(const void *x, const void *y)
{
    const sc_completion_option *a = x, *b = y;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    int c = sc_slice_cmp(a->text, b->text);
    if (c)
        return c;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

void sc_completion_sort(sc_completion_option *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_opt);
}

size_t sc_completion_dedup(sc_completion_option *v, size_t n, bool by_doc, bool skip_duplicates,
                           size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < size; i++) {
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++) /* k <= size: small */
            dup = (by_doc && v[j].doc == v[i].doc) ||
                  (skip_duplicates && sc_slice_eq(v[j].text, v[i].text));
        if (!dup)
            v[k++] = v[i];
    }
    return k;
}

/* Whether some prefix of `key` is within f->max_edits of `q` (qcp code points). */
static bool fuzzy_prefix(sc_slice q, size_t qcp, sc_slice key, const sc_completion_fuzzy *f)
{
    size_t cp = 0;
    for (size_t i = 0; i <= key.len; i++) {
        if (i < key.len && (key.ptr[i] & 0xC0) == 0x80)
            continue;
        /* key[0, i) holds cp code points */
        if (cp + f->max_edits >= qcp &&
            sc_automaton_edit_distance(q, sc_slice_make(key.ptr, i), f->transpositions,
                                       f->max_edits) <= f->max_edits)
            return true;
        if (cp > qcp + f->max_edits)
            return false;
        cp++;
    }
    return false;
}

static sc_status postings(const sc_segment *seg, const sc_field_info *fi, const sc_term_info *ti,
                          const sc_bitset *live, uint32_t base, sc_slice text, uint32_t weight,
                          sc_arena *a, opts *o)
{
    sc_postings p;
    sc_postings_init(&p);
    SC_TRY(sc_postings_reset(&p, seg, fi, ti, 0));
    for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END; d = sc_postings_next(&p))
        if (!live || sc_bitset_test(live, d))
            SC_TRY(push(o, a, text, weight, base + d));
    return sc_postings_status(&p);
}

static sc_status segment(const sc_searcher_segment *ss, uint32_t base, sc_slice field, sc_slice key,
                         const sc_completion_fuzzy *fz, sc_arena *a, opts *o)
{
    const sc_field_info *fi = sc_segment_field(ss->seg, field);
    if (!fi)
        return SC_OK;
    /* the exact part: all of key, or its first prefix_length code points when fuzzy */
    size_t exact = key.len;
    if (fz) {
        size_t cp = 0;
        exact = 0;
        while (exact < key.len && cp <= fz->prefix_length) {
            if ((key.ptr[exact] & 0xC0) != 0x80 && cp++ == fz->prefix_length)
                break;
            exact++;
        }
    }
    size_t qcp = sc_automaton_cp_len(key);
    sc_terms_iter it;
    SC_TRY(sc_terms_iter_init(&it, ss->seg, fi));
    bool has = false;
    sc_status st = sc_terms_seek_ceil(&it, sc_slice_make(key.ptr, exact), &has, NULL);
    while (st == SC_OK && has) {
        sc_slice t = sc_terms_term(&it), k, text;
        uint32_t w;
        if (t.len < exact || memcmp(t.ptr, key.ptr, exact) != 0)
            break;
        if (sc_completion_decode(t, &k, &w, &text) &&
            (fz ? fuzzy_prefix(key, qcp, k, fz)
                : k.len >= key.len && memcmp(k.ptr, key.ptr, key.len) == 0)) {
            uint8_t *copy = sc_arena_alloc(a, text.len ? text.len : 1);
            if (!copy) {
                st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
                break;
            }
            memcpy(copy, text.ptr, text.len);
            st = postings(ss->seg, fi, sc_terms_info(&it), ss->live, base,
                          sc_slice_make(copy, text.len), w, a, o);
        }
        if (st == SC_OK)
            st = sc_terms_next(&it, &has);
    }
    sc_terms_iter_fini(&it);
    return st;
}

sc_status sc_suggest_completion(const sc_searcher *s, sc_slice field, sc_slice key,
                                const sc_completion_fuzzy *fuzzy, bool skip_duplicates, size_t size,
                                sc_arena *a, sc_completion_option **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    opts o = {0};
    uint32_t base = 0;
    for (size_t i = 0; i < s->n_segs; i++) {
        SC_TRY(segment(&s->segs[i], base, field, key, fuzzy, a, &o));
        base += sc_segment_n_docs(s->segs[i].seg);
    }
    sc_completion_sort(o.v, o.n);
    *out = o.v;
    *n_out = sc_completion_dedup(o.v, o.n, true, skip_duplicates, size);
    return SC_OK;
}
