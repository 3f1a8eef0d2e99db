/* libFuzzer target: arbitrary bytes as (1) a whole 1-D BKD tree opened with sc_bkd_open and,
 * if accepted, intersected (bitset, count, estimate, early stop) and read leaf by leaf, (2) a
 * single encoded 1-D leaf decoded by sc_bkd_leaf_decode, (3) a whole 2-D (geo) tree opened with
 * sc_bkd2_open, intersected with a box (dateline-crossing when the bytes say so) and read leaf
 * by leaf, and (4) a single 2-D leaf (sc_bkd2_leaf_decode). The first 16 bytes choose the query
 * range (1-D) and the box (2-D: min_lat, max_lat, min_lon, max_lon). Must never crash or read
 * out of bounds; corrupt input gives SC_ECORRUPT. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/bkd.h"
#include "index/bkd2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_2d(const uint8_t *data, size_t size, const sc_bkd2_box *box)
{
    sc_bkd2 t;
    if (sc_bkd2_open(sc_slice_make(data, size), &t) == SC_OK && t.doc_bound <= (1u << 24) &&
        t.leaf_size <= 4096) {
        sc_bitset bs;
        if (sc_bitset_init(&bs, t.doc_bound ? t.doc_bound : 1) == SC_OK) {
            sc_bkd2_shape s = sc_bkd2_box_shape(box);
            sc_bkd2_stats st;
            (void)!sc_bkd2_intersect(&t, &s, &bs, &st);
            uint32_t *docs = malloc(sizeof(uint32_t) * t.leaf_size);
            int32_t *lat = malloc(sizeof(int32_t) * t.leaf_size);
            int32_t *lon = malloc(sizeof(int32_t) * t.leaf_size);
            for (uint32_t j = 0; docs && lat && lon && j < sc_bkd2_n_leaves(&t) && j < 4096; j++) {
                uint32_t n;
                (void)!sc_bkd2_leaf_read(&t, j, docs, lat, lon, &n);
            }
            free(docs);
            free(lat);
            free(lon);
            sc_bitset_fini(&bs);
        }
    }
    uint32_t docs[512], n;
    int32_t lat[512], lon[512];
    (void)!sc_bkd2_leaf_decode(sc_slice_make(data, size), box->min_lat, box->min_lon, 1u << 20, 512,
                               docs, lat, lon, &n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    sc_bkd2_box box = {INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
    if (size >= 16) {
        memcpy(&lo, data, 8);
        memcpy(&hi, data + 8, 8);
        memcpy(&box, data, 16);
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
    fuzz_2d(data, size, &box);
    return 0;
}
