/* The term suggester (Elasticsearch's `term` suggest, Lucene's DirectSpellChecker): for one
 * analyzed term, the field's indexed terms within max_edits (Damerau-Levenshtein on code
 * points, the first prefix_length code points equal), scored like Lucene's internal
 * Levenshtein similarity: 1 - edits / min(length of term, length of candidate). */
#ifndef SC_SEARCH_SUGGEST_H
#define SC_SEARCH_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/searcher.h"

typedef struct sc_suggest_candidate {
    sc_slice term; /* arena */
    float score;
    uint64_t freq; /* doc frequency over the searcher's segments (deleted docs included) */
} sc_suggest_candidate;

/* Candidates for `term` in `field` over every segment of s: within max_edits (1 or 2) with
 * prefix_length exact code points, score >= accuracy, doc freq >= min_doc_freq, the term itself
 * excluded. *out (arena) holds them in term order, merged across segments; *term_freq the
 * term's own doc frequency. SC_ENOMEM / SC_ELIMIT (arena), SC_ECORRUPT. O(matching terms). */
sc_status sc_suggest_term(const sc_searcher *s, sc_slice field, sc_slice term, uint32_t max_edits,
                          uint32_t prefix_length, float accuracy, uint64_t min_doc_freq,
                          sc_arena *a, sc_suggest_candidate **out, size_t *n_out,
                          uint64_t *term_freq) SC_MUST_USE;

#endif
