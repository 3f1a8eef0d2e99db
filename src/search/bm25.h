/* BM25 exactly as Lucene 8.7/8.8's BM25Similarity (k1 1.2, b 0.75): idf in double cast to
 * float, a 256-entry per-norm cache of 1 / (k1 * ((1 - b) + b * length / avgdl)) in float, and
 * score = weight - weight / (1 + freq * cache[norm]) with weight = boost * idf, all in float in
 * Lucene's order, so scores match Lucene's bit for bit (given the same statistics). */
#ifndef SC_SEARCH_BM25_H
#define SC_SEARCH_BM25_H

#include <stdint.h>

#define SC_BM25_K1 1.2f
#define SC_BM25_B 0.75f

/* Field-level statistics summed over a shard's segments (Lucene's CollectionStatistics). */
typedef struct sc_bm25_field_stats {
    uint64_t doc_count;           /* docs with the field */
    uint64_t sum_total_term_freq; /* tokens in the field */
} sc_bm25_field_stats;

/* A ready-to-score term (or phrase): weight and the norm cache. */
typedef struct sc_bm25 {
    float weight;     /* boost * idf */
    float cache[256]; /* by norm byte */
} sc_bm25;

/* log(1 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5)) as Lucene (double, then float). */
float sc_bm25_idf(uint64_t doc_freq, uint64_t doc_count);

/* Prepares a scorer for `idf` (a single term's, or the float of a double sum of a phrase's
 * terms' idfs, as Lucene) and `boost`. O(256). */
void sc_bm25_init(sc_bm25 *s, float boost, float idf, const sc_bm25_field_stats *fs);

/* The score of a doc with term frequency `freq` and norm byte `norm` (1 for no norms). */
static inline float sc_bm25_score(const sc_bm25 *s, float freq, uint8_t norm)
{
    float norm_inverse = s->cache[norm];
    return s->weight - s->weight / (1.0f + freq * norm_inverse);
}

#endif
