/* Postings decode benchmark: bit-unpacking throughput (ints/s) of 128-value blocks for widths
 * 1..32 with the scalar, SSE4.1 and AVX2 kernels (plain and gap/prefix-sum variants), then
 * cursor throughput over real segment postings (next, next_batch, into_bitset, advance) for
 * sparse, medium and dense terms. Usage: postings_bench [seconds-per-case, default 0.2]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bitset.h"
#include "base/file.h"
#include "index/bitpack.h"
#include "index/builder.h"
#include "index/postings.h"
#include "index/segment.h"
#include "index/terms.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define N_BLOCKS 1024 /* 1024 blocks * up to 512 bytes = 512 KiB: stays in L2 */

static volatile uint32_t sink;

static double bench_unpack(sc_bitpack_impl impl, unsigned w, int gaps, double secs)
{
    uint8_t *in = malloc((size_t)N_BLOCKS * 16 * 32);
    uint32_t vals[SC_BITPACK_N], out[SC_BITPACK_N];
    uint64_t x = 88172645463325252ull;
    for (int b = 0; b < N_BLOCKS; b++) {
        for (int i = 0; i < SC_BITPACK_N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            vals[i] = w == 32 ? (uint32_t)x : (uint32_t)x & ((1u << w) - 1);
        }
        sc_bitpack_pack(vals, w, in + (size_t)b * 16 * w);
    }
    uint64_t ints = 0;
    double t0 = now_s(), t;
    do {
        for (int r = 0; r < 16; r++)
            for (int b = 0; b < N_BLOCKS; b++) {
                const uint8_t *src = in + (size_t)b * 16 * w;
                if (gaps)
                    sc_bitpack_unpack_gaps_with(impl, src, w, 0, out);
                else
                    sc_bitpack_unpack_with(impl, src, w, out);
                sink += out[127];
            }
        ints += (uint64_t)16 * N_BLOCKS * SC_BITPACK_N;
        t = now_s() - t0;
    } while (t < secs);
    free(in);
    return (double)ints / t;
}

static void bench_cursor(double secs)
{
    char dir[] = "/tmp/scry_postings_bench_XXXXXX";
    if (!mkdtemp(dir))
        return;
    const uint32_t n_docs = 1u << 20;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return;
    /* terms: d1 every doc, d2 every 2nd, d10 every 10th, r30 30% random, s1 1% random */
    uint64_t x = 12345;
    for (uint32_t d = 0; d < n_docs; d++) {
        sc_index_token tok[5];
        size_t n = 0;
        tok[n++] = (sc_index_token){sc_slice_cstr("d1"), 0};
        if (d % 2 == 0)
            tok[n++] = (sc_index_token){sc_slice_cstr("d2"), 1};
        if (d % 10 == 0)
            tok[n++] = (sc_index_token){sc_slice_cstr("d10"), 2};
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 100 < 30)
            tok[n++] = (sc_index_token){sc_slice_cstr("r30"), 3};
        if (x % 1000 < 10)
            tok[n++] = (sc_index_token){sc_slice_cstr("s1"), 4};
        sc_index_field f = {.name = sc_slice_cstr("body"),
                            .kind = SC_FIELD_TEXT,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS,
                            .tokens = tok,
                            .n_tokens = n,
                            .length = (uint32_t)n};
        sc_index_doc doc = {
            .id = sc_slice_cstr("x"), .source = sc_slice_cstr("{}"), .fields = &f, .n_fields = 1};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return;
    }
    if (sc_segment_builder_write(b, dir, "bench", NULL) != SC_OK)
        return;
    sc_segment_builder_free(b);
    sc_segment *seg;
    if (sc_segment_open(dir, "bench", &seg) != SC_OK)
        return;
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("body"));
    const char *terms[] = {"d1", "d2", "d10", "r30", "s1"};
    sc_postings p;
    sc_postings_init(&p);
    sc_bitset bs;
    if (sc_bitset_init(&bs, n_docs) != SC_OK)
        return;
    uint32_t docs[512], freqs[512];
    printf("\ncursor over %u docs (docs/s):\n%-6s %12s %12s %12s %12s %12s\n", n_docs, "term",
           "next", "next+freq", "next_batch", "into_bitset", "advance+7");
    for (size_t k = 0; k < sizeof(terms) / sizeof(terms[0]); k++) {
        sc_term_info ti;
        bool found;
        if (sc_terms_lookup(seg, f, sc_slice_cstr(terms[k]), &ti, &found) != SC_OK || !found)
            continue;
        double rates[5];
        for (int mode = 0; mode < 5; mode++) {
            uint64_t n = 0;
            double t0 = now_s(), t;
            do {
                if (sc_postings_reset(&p, seg, f, &ti, SC_POSTINGS_FREQS) != SC_OK)
                    return;
                uint32_t acc = 0;
                switch (mode) {
                case 0:
                    for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END;
                         d = sc_postings_next(&p))
                        acc += d;
                    n += ti.doc_freq;
                    break;
                case 1:
                    for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END;
                         d = sc_postings_next(&p))
                        acc += d + sc_postings_freq(&p);
                    n += ti.doc_freq;
                    break;
                case 2:
                    for (size_t got; (got = sc_postings_next_batch(&p, docs, NULL, 512)) > 0;)
                        acc += docs[got - 1];
                    n += ti.doc_freq;
                    break;
                case 3:
                    sc_postings_into_bitset(&p, n_docs, &bs, 0);
                    acc += (uint32_t)bs.words[7];
                    n += ti.doc_freq;
                    break;
                case 4: {
                    uint32_t visited = 0;
                    for (uint32_t d = sc_postings_advance(&p, 0); d != SC_POSTINGS_END;
                         d = sc_postings_advance(&p, d + 7))
                        visited++;
                    acc += visited;
                    n += visited;
                    break;
                }
                }
                sink += acc;
                t = now_s() - t0;
            } while (t < secs);
            rates[mode] = (double)n / t;
        }
        (void)freqs;
        printf("%-6s %12.3g %12.3g %12.3g %12.3g %12.3g\n", terms[k], rates[0], rates[1], rates[2],
               rates[3], rates[4]);
    }
    sc_bitset_fini(&bs);
    sc_segment_unref(seg);
    if (sc_dir_remove_all(dir) != SC_OK)
        fprintf(stderr, "cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.2;
    const sc_bitpack_impl impls[] = {SC_BITPACK_SCALAR, SC_BITPACK_SSE41, SC_BITPACK_AVX2};
    printf("bit-unpack throughput, 128-value blocks, billions of ints/s (plain | with gaps)\n");
    printf("%5s", "width");
    for (size_t k = 0; k < 3; k++)
        printf(" %17s", sc_bitpack_impl_name(impls[k]));
    printf("\n");
    for (unsigned w = 1; w <= 32; w++) {
        printf("%5u", w);
        for (size_t k = 0; k < 3; k++) {
            if (!sc_bitpack_supported(impls[k])) {
                printf(" %17s", "n/a");
                continue;
            }
            double a = bench_unpack(impls[k], w, 0, secs) / 1e9;
            double g = bench_unpack(impls[k], w, 1, secs) / 1e9;
            printf("   %6.2f | %6.2f", a, g);
        }
        printf("\n");
    }
    bench_cursor(secs);
    return 0;
}
