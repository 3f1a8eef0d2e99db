/* Term statistics of a query gathered over many shards (dfs_query_then_fetch): per field the
 * docs with the field and its total length, per term its doc freq and total term freq, so that
 * every shard scores with the same BM25 statistics as a single shard holding all the documents
 * would (Lucene's CollectionStatistics and TermStatistics). Built from one searcher with
 * sc_term_stats_collect, summed with sc_term_stats_add, read by the planner through
 * sc_search_options.dfs. */
#ifndef SC_SEARCH_TERM_STATS_H
#define SC_SEARCH_TERM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/bm25.h"
#include "search/query.h"

typedef struct sc_searcher sc_searcher;

typedef struct sc_field_stat {
    sc_slice field;
    uint64_t doc_count;           /* docs with the field */
    uint64_t sum_total_term_freq; /* tokens in the field */
} sc_field_stat;

typedef struct sc_term_stat {
    sc_slice field, term;
    uint64_t doc_freq;
    uint64_t total_term_freq;
} sc_term_stat;

typedef struct sc_term_stats {
    sc_field_stat *fields;
    size_t n_fields;
    sc_term_stat *terms;
    size_t n_terms;
} sc_term_stats;

/* The statistics of the terms q scores with (term and phrase queries, through bool, dis_max,
 * boosting, constant_score and function_score) and of their fields, summed over the searcher's
 * segments, into *out (arrays and bytes in `a`; *out is zeroed first). Multi-term queries
 * (prefix, wildcard, fuzzy...) keep their shard's own statistics. SC_ENOMEM / SC_ELIMIT from the
 * arena, SC_ECORRUPT from a term dictionary. O(terms x segments x log terms). */
sc_status sc_term_stats_collect(const sc_searcher *s, const sc_query *q, sc_arena *a,
                                sc_term_stats *out) SC_MUST_USE;

/* Adds `add` into *into (entries matched by field and term; new ones copied into `a`).
 * O(n x m): a query has few terms. */
sc_status sc_term_stats_add(sc_term_stats *into, const sc_term_stats *add, sc_arena *a) SC_MUST_USE;

/* Lookups for the planner: false when the statistics do not have the field / term. */
bool sc_term_stats_field(const sc_term_stats *ts, sc_slice field, sc_bm25_field_stats *out);
bool sc_term_stats_term(const sc_term_stats *ts, sc_slice field, sc_slice term, uint64_t *df);

#endif
