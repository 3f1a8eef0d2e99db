/* Score explanations (Elasticsearch's `explain: true` and `_explain/{id}`): why one doc of a
 * shard scores what it does under a query, as a tree in Lucene's Explanation shape (value,
 * description, details). The query is planned exactly as sc_search_execute plans it (same
 * statistics, dfs included), and each node's value is the score its own iterator gives the
 * doc, so the root's value is the doc's _score bit for bit. BM25 terms are broken down into
 * boost, idf (n, N) and tf (freq, k1, b, dl, avgdl) as Lucene 8's BM25Similarity does; bools
 * show `sum of:`, dis_max `max of:` / `max plus t times others of:`, filters and constant
 * score nodes `ConstantScore(...)`; other scoring kinds (boosting, function_score, knn) get
 * a node `score of <kind> query` with their value and no breakdown. */
#ifndef SC_SEARCH_EXPLAIN_H
#define SC_SEARCH_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "search/query.h"
#include "search/searcher.h"

typedef struct sc_explanation sc_explanation;
struct sc_explanation {
    bool match;
    float value;
    const char *description; /* NUL-terminated, in the caller's arena */
    sc_explanation *details;
    size_t n_details;
};

/* Explains shard-global doc `global_doc` of `s` under `q` with the options' statistics (dfs);
 * *out (the caller's arena) has match false and value 0 when the doc does not match, is
 * deleted or does not exist. Errors as sc_search_execute (res->error says what). */
sc_status sc_search_explain(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            uint64_t global_doc, sc_arena *a, sc_search_result *res,
                            sc_explanation **out) SC_MUST_USE;

#endif
