/* Reads every structure of a segment through the public API (terms, postings with every
 * operation, positions, impacts, norms, doc values, 1-D and 2-D points, dense vectors (graph,
 * filtered and exact kNN), stored fields, DFA intersection) and returns the first error. Used by the corruption test and the segment
 * fuzzer: on any input it must return, never crash. */
#ifndef SC_TESTS_INDEX_READALL_H
#define SC_TESTS_INDEX_READALL_H

#include <stdlib.h>
#include <string.h>

#include "index/bkd.h"
#include "index/bkd2.h"
#include "index/docvalues.h"
#include "index/postings.h"
#include "index/segment.h"
#include "index/stored.h"
#include "index/terms.h"
#include "index/vecfield.h"

static inline sc_status t_read_postings(const sc_segment *seg, const sc_field_info *f,
                                        const sc_term_info *ti, sc_postings *p, sc_bitset *bs,
                                        uint64_t *acc)
{
    uint32_t pos[64], docs[200], freqs[200];
    sc_status st = sc_postings_reset(p, seg, f, ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS);
    if (st != SC_OK)
        return st;
    *acc += sc_postings_term_impact(p).max_freq;
    for (uint32_t d = sc_postings_next(p); d != SC_POSTINGS_END; d = sc_postings_next(p)) {
        *acc += d + sc_postings_freq(p) + sc_postings_run_end(p);
        size_t n = sc_postings_positions(p, pos, 64);
        for (size_t i = 0; i < n; i++)
            *acc += pos[i];
    }
    if (sc_postings_status(p) != SC_OK)
        return sc_postings_status(p);
    /* positions of every third doc only (a sparse reader takes a doc's deltas straight from a
     * packed group), some with less room than the freq */
    if (sc_postings_reset(p, seg, f, ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS) != SC_OK)
        return SC_ECORRUPT;
    uint32_t k = 0;
    for (uint32_t d = sc_postings_next(p); d != SC_POSTINGS_END; d = sc_postings_next(p), k++) {
        if (k % 3)
            continue;
        size_t n = sc_postings_positions(p, pos, k % 2 ? 64 : 3);
        for (size_t i = 0; i < n; i++)
            *acc += pos[i];
    }
    if (sc_postings_status(p) != SC_OK)
        return sc_postings_status(p);
    /* in place (a phrase's dense reader): decoded groups viewed without a copy */
    if (sc_postings_reset(p, seg, f, ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS) != SC_OK)
        return SC_ECORRUPT;
    for (uint32_t d = sc_postings_next(p); d != SC_POSTINGS_END; d = sc_postings_next(p)) {
        const uint32_t *sums;
        uint32_t adj;
        if (sc_postings_positions_view(p, &sums, &adj) ||
            (sc_postings_positions_prepare(p) && sc_postings_positions_view(p, &sums, &adj))) {
            uint32_t fq = sc_postings_freq(p);
            for (uint32_t i = 0; i < fq && i < 16; i++)
                *acc += sums[i] + adj;
        } else {
            size_t n = sc_postings_positions(p, pos, 64);
            for (size_t i = 0; i < n; i++)
                *acc += pos[i];
        }
    }
    if (sc_postings_status(p) != SC_OK)
        return sc_postings_status(p);
    /* bulk paths */
    if (sc_postings_reset(p, seg, f, ti, 0) != SC_OK)
        return SC_ECORRUPT;
    while (sc_postings_next_batch(p, docs, freqs, 200) > 0)
        *acc += docs[0];
    if (sc_postings_reset(p, seg, f, ti, 0) != SC_OK)
        return SC_ECORRUPT;
    uint32_t n_docs = sc_segment_n_docs(seg);
    sc_postings_into_bitset(p, n_docs / 2, bs, 0);
    uint32_t d = sc_postings_advance(p, n_docs / 2 + 3);
    if (d != SC_POSTINGS_END)
        sc_postings_into_bitset(p, n_docs, bs, 0);
    /* a conjunction's probes: every third doc, 100 at a time, with and without freqs, the
     * cursor positioned after each call or not (only_filter) */
    for (int mode = 0; mode < 4; mode++) {
        if (sc_postings_reset(p, seg, f, ti, 0) != SC_OK)
            return SC_ECORRUPT;
        uint32_t c = 0;
        while (c < n_docs) {
            uint32_t cand[100], keep[100], fr[100];
            size_t n = 0;
            for (; n < 100 && c < n_docs; c += 3)
                cand[n++] = c;
            size_t m = sc_postings_filter(p, cand, n, keep, mode & 1 ? fr : NULL, mode >= 2);
            for (size_t i = 0; i < m; i++)
                *acc += cand[keep[i]] + (mode & 1 ? fr[i] : 0);
        }
        if (sc_postings_status(p) != SC_OK)
            return sc_postings_status(p);
    }
    /* a disjunction's windows: shallow moves, then each window's docs (sc_postings_take_upto)
     * from an advance, with freqs */
    if (sc_postings_reset(p, seg, f, ti, SC_POSTINGS_FREQS) != SC_OK)
        return SC_ECORRUPT;
    for (uint32_t w = 0; w < n_docs;) {
        uint32_t end = sc_postings_advance_shallow(p, w);
        if (end == SC_POSTINGS_END)
            break;
        uint32_t upto = end - w > 300 ? w + 300 : end + 1;
        uint32_t at =
            p->started && !p->exhausted && p->doc >= w ? p->doc : sc_postings_advance(p, w);
        if (at == SC_POSTINGS_END)
            break;
        size_t n = sc_postings_take_upto(p, upto, docs, freqs, 100);
        for (size_t i = 0; i < n; i++)
            *acc += docs[i] + freqs[i];
        w = n == 100 ? docs[n - 1] + 1 : upto;
        if (sc_postings_status(p) != SC_OK)
            return sc_postings_status(p);
    }
    if (sc_postings_reset(p, seg, f, ti, 0) != SC_OK)
        return SC_ECORRUPT;
    for (uint32_t t = 0; t < n_docs; t += 97) {
        uint32_t up = sc_postings_advance_shallow(p, t);
        *acc += up + sc_postings_shallow_impact(p).max_freq;
        sc_postings_impact imps[SC_POSTINGS_BLOCK];
        size_t ni = sc_postings_shallow_impacts(p, imps, SC_POSTINGS_BLOCK);
        for (size_t i = 0; i < ni; i++)
            *acc += imps[i].max_freq + imps[i].min_norm;
        if (up == SC_POSTINGS_END)
            break;
    }
    return sc_postings_status(p);
}

static inline sc_status t_read_field(const sc_segment *seg, const sc_field_info *f, sc_bitset *bs,
                                     uint64_t *acc)
{
    uint32_t n_docs = sc_segment_n_docs(seg);
    const uint8_t *norms = sc_segment_norms(seg, f);
    if (norms)
        for (uint32_t d = 0; d < n_docs; d++)
            *acc += norms[d];
    sc_terms_iter it;
    memset(&it, 0, sizeof(it));
    sc_postings p;
    sc_postings_init(&p);
    sc_status st = sc_terms_iter_init(&it, seg, f);
    while (st == SC_OK) {
        bool has;
        st = sc_terms_next(&it, &has);
        if (st != SC_OK || !has)
            break;
        sc_term_info ti;
        bool found;
        st = sc_terms_lookup(seg, f, sc_terms_term(&it), &ti, &found);
        if (st == SC_OK)
            st = t_read_postings(seg, f, sc_terms_info(&it), &p, bs, acc);
    }
    if (st == SC_OK) {
        /* accept-all DFA over classes: one class, one state */
        static const uint32_t next[1] = {0};
        static const uint8_t accept[1] = {1};
        sc_dfa dfa = {.n_states = 1, .start = 0, .n_classes = 1, .next = next, .accept = accept};
        memset(dfa.classmap, 0, sizeof(dfa.classmap));
        st = sc_terms_intersect_start(&it, &dfa);
        bool has = true;
        while (st == SC_OK && has)
            st = sc_terms_next_match(&it, &has);
        /* "?e*s" with the suffix hint: dead ranges (seeks) and lazily read statistics;
         * classes: 0 other, 1 'e', 2 's' */
        static const uint32_t next2[4 * 3] = {1, 1, 1, SC_DFA_DEAD, 2, SC_DFA_DEAD,
                                              2, 2, 3, 2,           2, 3};
        static const uint8_t accept2[4] = {0, 0, 0, 1}, tame2[4] = {0, 0, 1, 1};
        sc_dfa d2 = {.n_states = 4,
                     .start = 0,
                     .n_classes = 3,
                     .next = next2,
                     .accept = accept2,
                     .suffix = (const uint8_t *)"s",
                     .suffix_len = 1,
                     .tame = tame2};
        memset(d2.classmap, 0, sizeof(d2.classmap));
        d2.classmap['e'] = 1;
        d2.classmap['s'] = 2;
        if (st == SC_OK)
            st = sc_terms_intersect_start(&it, &d2);
        has = true;
        while (st == SC_OK && has) {
            st = sc_terms_next_match(&it, &has);
            if (st == SC_OK && has && sc_terms_info(&it)->doc_freq == 0)
                st = SC_ECORRUPT; /* never: matching terms carry their statistics */
        }
        /* "*s": a tame start, so the walk scans blocks for the suffix alone */
        static const uint32_t next3[2 * 3] = {0, 0, 1, 0, 0, 1};
        static const uint8_t accept3[2] = {0, 1}, tame3[2] = {1, 1};
        sc_dfa d3 = d2;
        d3.n_states = 2;
        d3.next = next3;
        d3.accept = accept3;
        d3.tame = tame3;
        if (st == SC_OK)
            st = sc_terms_intersect_start(&it, &d3);
        has = true;
        while (st == SC_OK && has)
            st = sc_terms_next_match(&it, &has);
        bool e;
        if (st == SC_OK)
            st = sc_terms_seek_ceil(&it, sc_slice_cstr("m"), &has, &e);
    }
    sc_terms_iter_fini(&it);
    if (st != SC_OK)
        return st;
    sc_bkd bkd;
    if (sc_segment_points(seg, f, &bkd) == SC_OK) {
        uint64_t cnt;
        if (sc_bkd_count(&bkd, -1000, 1000, &cnt) == SC_OK)
            *acc += cnt;
        if (sc_bkd_intersect(&bkd, INT64_MIN, 0, bs, 0, NULL) == SC_OK)
            *acc += 1;
    }
    sc_bkd2 bkd2;
    if (sc_segment_points2(seg, f, &bkd2) == SC_OK) {
        sc_bkd2_box box = {INT32_MIN / 2, INT32_MAX / 2, 1 << 30, -(1 << 30)}; /* dateline */
        sc_bkd2_shape shape = sc_bkd2_box_shape(&box);
        sc_bkd2_stats stats;
        if (sc_bkd2_intersect(&bkd2, &shape, bs, &stats) == SC_OK)
            *acc += stats.points;
    }
    sc_dv_numeric dvn;
    if (sc_dv_numeric_open(seg, f, &dvn) == SC_OK) {
        int64_t v[16];
        for (uint32_t d = 0; d < n_docs; d++) {
            size_t n = sc_dv_numeric_get(&dvn, d, v, 16);
            for (size_t i = 0; i < n; i++)
                *acc += (uint64_t)v[i];
        }
    }
    sc_dv_sorted_set dvs;
    if (sc_dv_sorted_set_open(seg, f, &dvs) == SC_OK) {
        uint64_t o[16];
        for (uint32_t d = 0; d < n_docs; d++) {
            size_t n = sc_dv_sorted_set_ords(&dvs, d, o, 16);
            for (size_t i = 0; i < n; i++) {
                sc_slice t = sc_dv_sorted_set_term(&dvs, o[i]);
                uint64_t back;
                *acc += t.len + sc_dv_sorted_set_lookup(&dvs, t, &back);
            }
        }
    }
    return SC_OK;
}

/* kNN over a vector field: graph search, with a filter of every third doc, and exact. */
static inline sc_status t_read_vectors(const sc_segment *seg, const sc_field_info *f,
                                       uint64_t *acc)
{
    sc_vec_field vf;
    if (sc_segment_vectors(seg, f, &vf) != SC_OK)
        return SC_OK;
    uint32_t n_docs = sc_segment_n_docs(seg);
    float *q = calloc(vf.p.dims, sizeof(float));
    uint64_t *acc_bits = calloc((size_t)n_docs / 64 + 2, sizeof(uint64_t));
    sc_hnsw_hit hits[32];
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_status st = q && acc_bits ? SC_OK : SC_ENOMEM;
    for (uint32_t i = 0; q && i < vf.p.dims; i++)
        q[i] = (float)(i % 3) * 0.25f;
    for (uint32_t d = 0; acc_bits && d < n_docs; d += 3)
        acc_bits[d / 64] |= (uint64_t)1 << (d % 64);
    for (int pass = 0; pass < 3 && st == SC_OK; pass++) {
        sc_vec_knn_opts o = {.query = q, .k = 10, .num_candidates = 32,
                             .accept = pass == 1 ? acc_bits : NULL,
                             .n_accept = (n_docs + 2) / 3, .force_exact = pass == 2};
        size_t n = 0;
        bool exact;
        st = sc_vec_knn(&vf, &o, &a, hits, &n, &exact);
        for (size_t i = 0; i < n; i++)
            *acc += hits[i].ord + (uint64_t)(hits[i].score > 0);
    }
    sc_arena_fini(&a);
    free(q);
    free(acc_bits);
    return st;
}

static inline sc_status t_read_all(const sc_segment *seg, uint64_t *acc)
{
    uint32_t n_docs = sc_segment_n_docs(seg);
    sc_bitset bs;
    sc_status st = sc_bitset_init(&bs, (size_t)n_docs + 64);
    if (st != SC_OK)
        return st;
    for (size_t i = 0; i < sc_segment_n_fields(seg) && st == SC_OK; i++) {
        const sc_field_info *f = sc_segment_field_at(seg, i);
        st = f->kind == SC_FIELD_VECTOR ? t_read_vectors(seg, f, acc) : t_read_field(seg, f, &bs, acc);
    }
    *acc += sc_bitset_count(&bs);
    sc_bitset_fini(&bs);
    sc_stored_reader r;
    sc_stored_reader_init(&r, seg);
    for (uint32_t d = 0; d < n_docs && st == SC_OK; d++) {
        sc_slice id, src;
        st = sc_stored_get(&r, d, &id, &src);
        if (st == SC_OK)
            *acc += id.len + src.len;
    }
    sc_stored_reader_fini(&r);
    return st;
}

#endif
