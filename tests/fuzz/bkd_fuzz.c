/* libFuzzer target: arbitrary bytes as (1) a whole BKD tree opened with sc_bkd_open and, if
 * accepted, intersected (bitset, count, estimate, early stop) and read leaf by leaf, and (2) a
 * single encoded leaf decoded by sc_bkd_leaf_decode. The first 16 bytes choose the query range.
 * Must never crash or read out of bounds; corrupt input gives SC_ECORRUPT. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/bkd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (size >= 16) {
        memcpy(&lo, data, 8);
        memcpy(&hi, data + 8, 8);
        data += 16;
        size -= 16;
    }
    sc_bkd t;
    if (sc_bkd_open(sc_slice_make(data, size), &t) == SC_OK && t.doc_bound <= (1u << 24) &&
        t.leaf_size <= 4096) {
        sc_bitset bs;
        if (sc_bitset_init(&bs, t.doc_bound ? t.doc_bound : 1) == SC_OK) {
            sc_bkd_stats st;
            (void)!sc_bkd_intersect(&t, lo, hi, &bs, 0, &st);
            (void)!sc_bkd_intersect(&t, INT64_MIN, INT64_MAX, &bs, 100, &st);
            uint64_t c;
            (void)!sc_bkd_count(&t, lo, hi, &c);
            (void)sc_bkd_estimate(&t, lo, hi);
            uint32_t *docs = malloc(sizeof(uint32_t) * t.leaf_size);
            int64_t *vals = malloc(sizeof(int64_t) * t.leaf_size);
            for (uint32_t j = 0; docs && vals && j < sc_bkd_n_leaves(&t) && j < 4096; j++) {
                uint32_t n;
                (void)!sc_bkd_leaf_read(&t, j, docs, vals, &n, NULL);
            }
            free(docs);
            free(vals);
            sc_bitset_fini(&bs);
        }
    }
    uint32_t docs[512];
    int64_t vals[512];
    uint32_t n;
    (void)!sc_bkd_leaf_decode(sc_slice_make(data, size), lo, 1u << 20, 512, docs, vals, &n, NULL);
    return 0;
}
