/* The term suggester's candidate search (suggest.h): a fuzzy automaton intersected with each
 * segment's term dictionary, candidates merged by term across segments. */
#include <string.h>

#include "index/terms.h"
#include "search/automaton.h"
#include "search/suggest.h"

typedef struct cands {
    sc_suggest_candidate *v;
    size_t n, cap;
} cands;

static sc_status add(cands *c, sc_arena *a, sc_slice term, float score, uint64_t freq)
{
    for (size_t i = 0; i < c->n; i++) /* segments are few; candidates per segment bounded */
        if (sc_slice_eq(c->v[i].term, term)) {
            c->v[i].freq += freq;
            return SC_OK;
        }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        sc_suggest_candidate *v = sc_arena_alloc(a, cap * sizeof *v);
        if (!v)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        if (c->n)
            memcpy(v, c->v, c->n * sizeof *v);
        c->v = v;
        c->cap = cap;
    }
    uint8_t *copy = sc_arena_alloc(a, term.len ? term.len : 1);
    if (!copy)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    memcpy(copy, term.ptr, term.len);
    c->v[c->n++] =
        (sc_suggest_candidate){.term = sc_slice_make(copy, term.len), .score = score, .freq = freq};
    return SC_OK;
}

static sc_status segment(const sc_segment *seg, sc_slice field, sc_slice term, const sc_dfa *dfa,
                         uint32_t max_edits, float accuracy, sc_arena *a, cands *c,
                         uint64_t *term_freq)
{
    const sc_field_info *fi = sc_segment_field(seg, field);
    if (!fi)
        return SC_OK;
    sc_terms_iter it;
    SC_TRY(sc_terms_iter_init(&it, seg, fi));
    sc_status st = sc_terms_intersect_start(&it, dfa);
    size_t qlen = sc_automaton_cp_len(term);
    bool has = false;
    while (st == SC_OK && (st = sc_terms_next_match(&it, &has)) == SC_OK && has) {
        sc_slice t = sc_terms_term(&it);
        uint64_t df = sc_terms_info(&it)->doc_freq;
        if (sc_slice_eq(t, term)) {
            *term_freq += df;
            continue;
        }
        size_t clen = sc_automaton_cp_len(t), minlen = clen < qlen ? clen : qlen;
        uint32_t ed = sc_automaton_edit_distance(term, t, true, max_edits);
        float score = minlen ? 1.0f - (float)ed / (float)minlen : 0;
        if (ed <= max_edits && score >= accuracy)
            st = add(c, a, t, score, df);
    }
    sc_terms_iter_fini(&it);
    return st;
}

sc_status sc_suggest_term(const sc_searcher *s, sc_slice field, sc_slice term, uint32_t max_edits,
                          uint32_t prefix_length, float accuracy, uint64_t min_doc_freq,
                          sc_arena *a, sc_suggest_candidate **out, size_t *n_out,
                          uint64_t *term_freq)
{
    *out = NULL;
    *n_out = 0;
    *term_freq = 0;
    sc_dfa dfa;
    SC_TRY(sc_automaton_fuzzy(term, max_edits, prefix_length, true, a, &dfa, NULL));
    cands c = {0};
    for (size_t i = 0; i < s->n_segs; i++)
        SC_TRY(segment(s->segs[i].seg, field, term, &dfa, max_edits, accuracy, a, &c, term_freq));
    size_t k = 0;
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i].freq >= min_doc_freq)
            c.v[k++] = c.v[i];
    *out = c.v;
    *n_out = k;
    return SC_OK;
}
