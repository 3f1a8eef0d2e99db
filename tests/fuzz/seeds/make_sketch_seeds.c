/* Writes the seed inputs of the hll and tdigest fuzzers (tests/fuzz/corpus/hll/,
 * tests/fuzz/corpus/tdigest/) into the directory given as argv[1]: sketches in each mode at a few
 * precisions and compressions, encoded at the current format versions. Build and run by hand:
 *   cc -std=c11 -D_GNU_SOURCE -Isrc tests/fuzz/seeds/make_sketch_seeds.c src/search/hll.c \
 *      src/search/tdigest.c src/base/{varint,alloc,status,vec}.c -lm -o /tmp/mss && /tmp/mss DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search/hll.h"
#include "search/tdigest.h"

static void put(const char *dir, const char *name, const sc_buf *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->ptr, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void hll_seed(const char *dir, const char *name, uint32_t p, uint32_t n)
{
    sc_hll *h;
    sc_buf b = {0};
    if (sc_hll_new(p, NULL, NULL, &h) != SC_OK)
        exit(1);
    for (uint32_t i = 0; i < n; i++)
        if (sc_hll_add(h, sc_hll_hash_u64(i)) != SC_OK)
            exit(1);
    if (sc_hll_encode(h, &b) != SC_OK)
        exit(1);
    put(dir, name, &b);
    sc_vec_free(&b);
    sc_hll_free(h);
}

static void td_seed(const char *dir, const char *name, double compression, uint32_t n)
{
    sc_tdigest *t;
    sc_buf b = {0};
    if (sc_tdigest_new(compression, NULL, NULL, &t) != SC_OK)
        exit(1);
    for (uint32_t i = 0; i < n; i++)
        if (sc_tdigest_add(t, sin(i) * 100 + i % 7, 1 + i % 2) != SC_OK)
            exit(1);
    if (sc_tdigest_encode(t, &b) != SC_OK)
        exit(1);
    put(dir, name, &b);
    sc_vec_free(&b);
    sc_tdigest_free(t);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_sketch_seeds DIR\n");
        return 2;
    }
    hll_seed(argv[1], "hll_empty", 14, 0);
    hll_seed(argv[1], "hll_linear_p4", 4, 3);
    hll_seed(argv[1], "hll_linear_p10", 10, 150);
    hll_seed(argv[1], "hll_registers_p4", 4, 100);
    hll_seed(argv[1], "hll_registers_p8", 8, 5000);
    td_seed(argv[1], "td_empty", 100, 0);
    td_seed(argv[1], "td_one", 100, 1);
    td_seed(argv[1], "td_exact", 100, 60);
    td_seed(argv[1], "td_exact_c1", 1, 10);
    td_seed(argv[1], "td_digest_c5", 5, 400);
    td_seed(argv[1], "td_digest_c20", 20, 3000);
    return 0;
}
