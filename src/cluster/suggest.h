/* The term suggester across the shards of the target indices (search/suggest.h per shard):
 * each term's candidates with doc frequencies summed over the shards, and the term's own. */
#ifndef SC_CLUSTER_SUGGEST_H
#define SC_CLUSTER_SUGGEST_H

#include "base/arena.h"
#include "base/status.h"
#include "cluster/node.h"
#include "search/suggest.h"

typedef struct sc_suggest_term_request {
    sc_index **indices;
    size_t n_indices;
    sc_slice field;
    uint32_t max_edits, prefix_length;
    float accuracy;
    uint64_t min_doc_freq;
} sc_suggest_term_request;

/* Candidates for `term` (analyzed) over every open shard of req's indices, merged by term
 * (frequencies summed) into *out (arena); *term_freq its own doc frequency. Errors of
 * sc_suggest_term. Thread-safe. */
sc_status sc_suggest_run(const sc_suggest_term_request *req, sc_slice term, sc_arena *a,
                         sc_suggest_candidate **out, size_t *n_out, uint64_t *term_freq)
    SC_MUST_USE;

/* ---- the completion suggester ---- */

typedef struct sc_suggest_completion_option {
    sc_completion_option o; /* doc: shard-global within its shard */
    sc_index *index;
    sc_slice id, source; /* arena */
} sc_suggest_completion_option;

/* The completion suggestions for `key` (analyzed prefix) over every open shard of `indices`:
 * per shard sc_suggest_completion with its _id and _source fetched, then merged in
 * sc_completion_sort order, duplicates of text dropped when skip_duplicates, cut to size.
 * Errors of sc_suggest_completion. Thread-safe. */
sc_status sc_suggest_completion_run(sc_index **indices, size_t n_indices, sc_slice field,
                                    sc_slice key, const sc_completion_fuzzy *fuzzy,
                                    bool skip_duplicates, size_t size, sc_arena *a,
                                    sc_suggest_completion_option **out, size_t *n_out)
    SC_MUST_USE;

#endif
