/* Private to the phrase iterator: its state (iter_phrase.c: candidates, bounds, the iterator
 * contract) shared with the position matchers (phrase_match.c: exact and sloppy phrase
 * frequencies of the current doc from the loaded positions). */
#ifndef SC_SEARCH_PHRASE_INTERNAL_H
#define SC_SEARCH_PHRASE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "index/postings.h"
#include "search/bm25.h"
#include "search/iter.h"

/* One query term's positions in the current doc (Lucene's PhrasePositions). pos has room for
 * cap >= 16 entries once loaded (the matchers read 8 or 16 at a time). */
typedef struct sc__phrase_pp {
    uint32_t *pos; /* positions of the term in the current doc */
    uint32_t cap, n, idx;
    uint32_t offset;  /* the term's position in the query */
    int64_t position; /* pos[idx] - offset */
    uint32_t ord;
    int32_t rpt_group; /* sloppy: index of the group of pps with the same term, or -1 */
} sc__phrase_pp;

typedef struct sc__phrase_iter {
    sc_doc_iter base;
    sc_cancel_token *token; /* optional: checked every 256 candidate docs */
    uint32_t n_cand;
    sc_arena *a;
    sc_postings *p; /* n cursors, the lead (cheapest) first */
    sc__phrase_pp *pps;
    size_t n;
    uint32_t slop;
    const sc_bm25 *bm25;
    const uint8_t *norms;
    float freq; /* of the current doc */
    /* Two-phase (inside a conjunction): next/advance stop on the lead term's docs (the
     * approximation), and the other terms and positions are read only when the conjunction
     * confirms a doc all its clauses match (sc__iter_phrase_confirm): the outer leapfrog runs
     * over the cheapest cursors only, as Lucene's flattened approximations do */
    bool approx;
    /* Block-max bounds (bm25 only): the phrase's score bound over [.., shallow_end] (the
     * lead's block; see phrase_shallow_to), the bound over the whole postings, and the minimum
     * score a collector asked for (0: none; lead blocks that cannot beat it are skipped before
     * the other terms move, and candidates before their positions are read). */
    uint32_t shallow_end;
    float shallow_max;
    float max_all;
    float min_score;
    sc_postings_impact *imps; /* n * SC_POSTINGS_BLOCK scratch frontiers */
    /* The phrase freq bound of the non-lead terms over the shallow window (exact: the least of
     * their max freqs, sloppy: the sum), so a lead doc is judged from its own freq and norm
     * before the others move. need[v]: the least freq whose score with norm byte v beats
     * min_score, valid while need_at[v] == min_score (computed on first use). */
    uint64_t others_maxf;
    uint64_t need[256];
    float need_at[256];
    /* Sloppy phrases with a repeated term: groups of the pps sharing a term, each sorted by
     * query offset (Lucene's rptGroups) */
    sc__phrase_pp ***groups;
    size_t *group_len;
    size_t n_groups;
} sc__phrase_iter;

/* Exact phrase freq of the current doc (every term's positions loaded, n >= 1): how many
 * positions p of the lead have every term i at p - off_0 + off_i. Not scoring (bm25 NULL):
 * 1 as soon as one match is found. */
float sc__phrase_exact_freq(sc__phrase_iter *x);

/* Sloppy phrase freq of the current doc: Lucene's SloppyPhraseMatcher (repeat groups and
 * collision rule included), the sum of 1 / (1 + match length) over its matches. Not scoring:
 * > 0 as soon as one match is found. */
float sc__phrase_sloppy_freq(sc__phrase_iter *x);

#endif
