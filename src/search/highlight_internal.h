/* Private to the highlighter: one doc's matches as the matcher (highlight.c) hands them to the
 * passage builder and formatter (highlight_passage.c). */
#ifndef SC_SEARCH_HIGHLIGHT_INTERNAL_H
#define SC_SEARCH_HIGHLIGHT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search/highlight.h"

/* One marked token: byte offsets into the joined content and the id of its term. */
typedef struct sc__hl_match {
    uint32_t start, end;
    uint32_t term; /* index into sc__hl_doc.term_freq */
} sc__hl_match;

/* A doc's field content and its matches. */
typedef struct sc__hl_doc {
    sc_slice text;              /* the values joined with U+2029 */
    const uint32_t *value_ends; /* byte end of each value in text */
    size_t n_values;
    const sc__hl_match *m; /* ascending start (then end) */
    size_t n_m;
    const uint32_t *term_freq; /* per term id: its occurrences in the doc */
} sc__hl_doc;

/* Builds, scores, selects and formats the passages of d as o asks into *frags / *n_frags
 * (arena), with the break iterators of `scratch` (NULL: temporary ones). SC_ENOMEM /
 * SC_ELIMIT. */
sc_status sc__hl_snippets(const sc__hl_doc *d, const sc_hl_options *o, sc_hl_scratch *scratch,
                          sc_arena *a, sc_slice **frags, size_t *n_frags) SC_MUST_USE;

/* The sentence boundaries of ASCII text (0 and the length included, ascending) into *list
 * (arena), as ICU's root sentence iterator gives them (UAX #29 on the ASCII classes). False
 * when the text is not all ASCII (use ICU) or the arena is exhausted. O(length). */
bool sc__hl_ascii_sentences(sc_slice text, sc_arena *a, int32_t **list, size_t *n_list);

#endif
