/* Indexing throughput of the segment builder, single thread: synthetic docs (a text field of
 * ~100 Zipf-distributed tokens with positions and norms, a keyword with doc values, two
 * numerics, ~700-byte _source) are added, then written as one segment; prints docs/s and MB/s
 * of _source for add, write and both, plus RAM per doc and bytes on disk per doc.
 * Usage: index_bench [n_docs, default 200000]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "index/builder.h"
#include "index/segment.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define VOCAB 50000
#define TOKENS 100

int main(int argc, char **argv)
{
    uint32_t n_docs = argc > 1 ? (uint32_t)atoi(argv[1]) : 200000;
    static char words[VOCAB][12];
    static size_t wlen[VOCAB];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int v = 0; v < VOCAB; v++) {
        int len = 2 + v % 8;
        uint64_t y = (uint64_t)v * 2654435761u + 7;
        for (int i = 0; i < len; i++, y /= 26)
            words[v][i] = (char)('a' + y % 26);
        words[v][len] = 0;
        wlen[v] = (size_t)len;
    }
    /* Zipf(1) sampling table */
    double *cdf = malloc(sizeof(double) * VOCAB), sum = 0;
    for (int v = 0; v < VOCAB; v++)
        cdf[v] = (sum += 1.0 / (v + 1));
    uint16_t *pick = malloc(sizeof(uint16_t) * 65536);
    for (int i = 0, v = 0; i < 65536; i++) {
        double u = (i + 0.5) / 65536 * sum;
        while (v < VOCAB - 1 && cdf[v] < u)
            v++;
        pick[i] = (uint16_t)v;
    }
    char dir[] = "/tmp/scry_index_bench_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    sc_index_token toks[TOKENS];
    char src[2048], id[16];
    uint64_t src_bytes = 0;
    double t0, t_add = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        size_t sl = (size_t)snprintf(src, sizeof(src), "{\"title\":\"");
        for (int i = 0; i < TOKENS; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint16_t v = pick[x & 0xffff];
            const char *w = words[v];
            toks[i] = (sc_index_token){sc_slice_make(w, wlen[v]), (uint32_t)i};
            if (sl + 16 < sizeof(src))
                sl += (size_t)snprintf(src + sl, sizeof(src) - sl, "%s ", w);
        }
        sl += (size_t)snprintf(src + sl, sizeof(src) - sl, "\",\"n\":%u}", d);
        snprintf(id, sizeof(id), "%u", d);
        sc_index_token kw = {sc_slice_cstr(words[d % 100]), 0}, idt = {sc_slice_cstr(id), 0};
        int64_t nums[2] = {(int64_t)d * 1000, (int64_t)(x % 1000)};
        sc_index_field f[4] = {
            {.name = sc_slice_cstr("title"),
             .kind = SC_FIELD_TEXT,
             .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
             .tokens = toks,
             .n_tokens = TOKENS,
             .length = TOKENS},
            {.name = sc_slice_cstr("cat"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .tokens = &kw,
             .n_tokens = 1},
            {.name = sc_slice_cstr("ts"),
             .kind = SC_FIELD_NUMERIC,
             .flags = SC_FIELD_DOCVALUES,
             .values = nums,
             .n_values = 2},
            {.name = sc_slice_cstr("_id"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED,
             .tokens = &idt,
             .n_tokens = 1},
        };
        sc_index_doc doc = {
            .id = sc_slice_cstr(id), .source = sc_slice_make(src, sl), .fields = f, .n_fields = 4};
        /* only the add is timed: making the synthetic doc is not indexing work */
        t0 = now_s();
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 2;
        t_add += now_s() - t0;
        src_bytes += sl;
    }
    size_t ram = sc_segment_builder_ram_bytes(b);
    sc_segment_write_info info;
    t0 = now_s();
    if (sc_segment_builder_write(b, dir, "bench", &info) != SC_OK)
        return 3;
    double t_write = now_s() - t0;
    sc_segment_builder_free(b);
    double mb = (double)src_bytes / 1e6;
    printf("docs %u, _source %.1f MB, %d tokens/doc\n", n_docs, mb, TOKENS);
    printf("add:   %.3f s  %10.0f docs/s  %7.1f MB/s\n", t_add, n_docs / t_add, mb / t_add);
    printf("write: %.3f s  %10.0f docs/s  %7.1f MB/s\n", t_write, n_docs / t_write, mb / t_write);
    printf("total: %.3f s  %10.0f docs/s  %7.1f MB/s\n", t_add + t_write,
           n_docs / (t_add + t_write), mb / (t_add + t_write));
    printf("builder RAM %.1f bytes/doc, segment %.1f bytes/doc (%.1f MB)\n", (double)ram / n_docs,
           (double)info.size_bytes / n_docs, info.size_bytes / 1e6);
    free(cdf);
    free(pick);
    if (sc_dir_remove_all(dir) != SC_OK)
        fprintf(stderr, "cannot remove %s\n", dir);
    return 0;
}
