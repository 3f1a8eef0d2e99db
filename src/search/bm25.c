/* BM25 as Lucene's BM25Similarity (search/bm25.h). */
#include "search/bm25.h"

#include <math.h>

#include "index/segment.h"

float sc_bm25_idf(uint64_t doc_freq, uint64_t doc_count)
{
    double df = (double)doc_freq;
    return (float)log(1.0 + ((double)((int64_t)doc_count - (int64_t)doc_freq) + 0.5) / (df + 0.5));
}

void sc_bm25_init(sc_bm25 *s, float boost, float idf, const sc_bm25_field_stats *fs)
{
    /* avgFieldLength: (float)(sumTotalTermFreq / (double)docCount) */
    float avgdl = fs->doc_count ? (float)((double)fs->sum_total_term_freq / (double)fs->doc_count)
                                : 1.0f;
    const float k1 = SC_BM25_K1, b = SC_BM25_B;
    for (int i = 0; i < 256; i++) {
        float len = (float)sc_norm_decode((uint8_t)i);
        float x = b * len;
        x = x / avgdl;
        x = (1.0f - b) + x;
        x = k1 * x;
        s->cache[i] = 1.0f / x;
    }
    s->weight = boost * idf;
}
