/* The corpus of the term-conjunction tests (conj_test, reqopt_test): two segments of random
 * docs with seven terms from 90% down to 0.3% of the docs (bitset, packed and tail blocks) in a
 * text field "body" (freqs 1-8, filler "zz" for varied norms) and the same terms in a keyword
 * field "tag" (no freqs, no norms); fx_lives marks about 1 doc in 7 deleted (used when a test
 * installs ss[s] with deletes). Define TERMS_CORPUS_TAG (the seed line's and directory's tag)
 * before including. The model's hit type and order are fixture.h's. */
#ifndef SC_TESTS_SEARCH_TERMS_CORPUS_H
#define SC_TESTS_SEARCH_TERMS_CORPUS_H

#include "fixture.h"

enum {
    N_SEG = 2,
    PER = 40000,
    T = 7
};
static const char *names[T] = {"d90", "d50", "d20", "d8", "d2", "d05", "d003"};
static const uint32_t per_10k[T] = {9000, 5000, 2000, 800, 200, 50, 3};
static uint8_t freq[T][N_SEG * PER];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static bool live_of[N_SEG][PER];
static sc_searcher_segment ss[N_SEG];
static const sc_searcher searcher = {ss, N_SEG};
static char dir[96];

static int setup(void **state)
{
    (void)state;
    if (fx_begin(TERMS_CORPUS_TAG, dir, sizeof dir) != 0)
        return -1;
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t i = 0; i < PER; i++) {
            uint32_t d = (uint32_t)s * PER + i;
            sc_index_token toks[T * 8 + 40];
            uint32_t n = 0;
            for (int t = 0; t < T; t++) {
                bool has = below(10000) < per_10k[t];
                freq[t][d] = has ? (uint8_t)(1 + below(below(6) == 0 ? 8 : 2)) : 0;
                for (uint32_t k = 0; k < freq[t][d]; k++, n++)
                    toks[n] = (sc_index_token){sc_slice_cstr(names[t]), n};
            }
            for (uint32_t k = below(40); k > 0; k--, n++) /* filler: lengths (norms) vary */
                toks[n] = (sc_index_token){sc_slice_cstr("zz"), n};
            if (n == 0)
                toks[n++] = (sc_index_token){sc_slice_cstr("zz"), 0};
            /* a keyword field with the same terms (no freqs, no norms) */
            sc_index_token ktoks[T];
            uint32_t nk = 0;
            for (int t = 0; t < T; t++)
                if (freq[t][d])
                    ktoks[nk++] = (sc_index_token){sc_slice_cstr(names[t]), 0};
            sc_index_field f[2] = {{.name = sc_slice_cstr("body"),
                                    .kind = SC_FIELD_TEXT,
                                    .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS,
                                    .tokens = toks,
                                    .n_tokens = n,
                                    .length = n},
                                   fx_keyword("tag", 0, ktoks, nk)};
            char id[16];
            snprintf(id, sizeof id, "%u", d);
            if (fx_add(b, id, f, 2) != 0)
                return -1;
        }
        if (fx_write(b, dir, s, &segs[s]) != 0)
            return -1;
        uint32_t deleted;
        if (fx_lives(&lives[s], PER, false, 7, live_of[s], &deleted) != 0)
            return -1;
        ss[s] = fx_searcher_segment(segs[s], &lives[s], 0); /* no deletes until asked */
        (void)deleted;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return fx_segs_end(segs, lives, N_SEG, dir);
}

static ref_hit ref[N_SEG * PER];

#endif
