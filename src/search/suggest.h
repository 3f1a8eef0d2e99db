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

/* ---- the completion suggester ---- */

/* One suggestion: a document's best input under the prefix. */
typedef struct sc_completion_option {
    sc_slice text;   /* the input as indexed (arena) */
    uint32_t weight; /* the input's weight (the option's _score) */
    uint32_t doc;    /* shard-global doc id (base of its segment + doc) */
} sc_completion_option;

typedef struct sc_completion_fuzzy {
    uint32_t max_edits;     /* 0..2 */
    uint32_t prefix_length; /* code points that must match exactly */
    bool transpositions;
} sc_completion_fuzzy;

/* Splits a completion field's indexed term (mapping.h: key, 0 byte, weight u32 big-endian,
 * input); false when it is not one. */
bool sc_completion_decode(sc_slice term, sc_slice *key, uint32_t *weight, sc_slice *text);

/* Sorts options by weight descending, then text, then doc (the completion suggester's order). */
void sc_completion_sort(sc_completion_option *v, size_t n);

/* The completion suggestions of completion field `field` for the analyzed prefix `key`
 * (mapping.h, sc_mapping_completion_key) over s's live docs: each doc once with its best
 * matching input, ordered by sc_completion_sort, inputs with equal text once when
 * skip_duplicates, at most `size`. fuzzy (NULL = exact prefix) lets a key prefix within
 * max_edits of `key` match. *out in the arena. SC_ENOMEM / SC_ELIMIT, SC_ECORRUPT.
 * O(matching terms + their postings) for a prefix; fuzzy walks every term after the exact
 * prefix_length part. */
sc_status sc_suggest_completion(const sc_searcher *s, sc_slice field, sc_slice key,
                                const sc_completion_fuzzy *fuzzy, bool skip_duplicates,
                                size_t size, sc_arena *a, sc_completion_option **out,
                                size_t *n_out) SC_MUST_USE;

/* Keeps the first option of each doc (when by_doc) and, with skip_duplicates, of each text, up
 * to size, in place (v sorted by sc_completion_sort); returns the count kept. */
size_t sc_completion_dedup(sc_completion_option *v, size_t n, bool by_doc, bool skip_duplicates,
                           size_t size);

#endif
