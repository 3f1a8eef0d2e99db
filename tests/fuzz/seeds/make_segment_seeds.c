/* Writes the seed corpus of segment_fuzz (tests/fuzz/corpus/segment/) at the current segment
 * format version: run scripts/fuzz_seeds.sh after changing the format (segment_test checks the
 * seeds open, so a stale corpus fails the unit tests).
 *   small.seg  : 40 docs; text with positions and norms, keyword with doc values (also _id),
 *                numeric with points and doc values (multi-valued), geo points
 *   vectors.seg: 200 docs; dense vectors: hnsw l2 (8 dims, m 4) on most docs, int8_hnsw
 *                cosine on every other doc
 *   blocks.seg : 4,200 docs (33 blocks); a term in every doc (run blocks), in every other doc,
 * every 7th, sparse terms: full blocks, the second skip level, short terms
 *   dict.seg   : 800 docs of ~250-byte sources, enough stored bytes for the stored blocks'
 *                zstd dictionary (format v10) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"

static const char *const WORDS[] = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"};

static int write_seg(const char *dir, const char *name, uint32_t n_docs, size_t n_fields)
{
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    for (uint32_t d = 0; d < n_docs; d++) {
        char id[16], src[64], w[4][16];
        snprintf(id, sizeof id, "%u", d);
        snprintf(src, sizeof src, "{\"n\":%u}", d);
        sc_index_token toks[8];
        size_t nt = 0;
        toks[nt++] = (sc_index_token){sc_slice_cstr("all"), 0};
        if (d % 2 == 0)
            toks[nt++] = (sc_index_token){sc_slice_cstr("even"), 1};
        if (d % 7 == 0)
            toks[nt++] = (sc_index_token){sc_slice_cstr("seventh"), 2};
        snprintf(w[0], sizeof w[0], "w%u", d % 97);
        if (n_fields > 1)
            toks[nt++] = (sc_index_token){sc_slice_cstr(w[0]), 3};
        snprintf(w[1], sizeof w[1], "u%u", d);
        if (d % 50 == 0 && n_fields > 1)
            toks[nt++] = (sc_index_token){sc_slice_cstr(w[1]), 4};
        toks[nt++] = (sc_index_token){sc_slice_cstr(WORDS[d % 7]), 6};
        toks[nt++] = (sc_index_token){sc_slice_cstr("all"), 7};
        sc_index_token kw = {sc_slice_cstr(WORDS[(d * 3) % 7]), 0};
        sc_index_token idt = {sc_slice_cstr(id), 0};
        int64_t nums[2] = {(int64_t)d * 37 - 1000, -(int64_t)d};
        int64_t geo = (int64_t)(((uint64_t)(uint32_t)(int32_t)(d * 100003) << 32) |
                                (uint32_t)(int32_t)(d * 7919 - 50000));
        sc_index_field f[5] = {
            {.name = sc_slice_cstr("_id"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .tokens = &idt,
             .n_tokens = 1},
            {.name = sc_slice_cstr("body"),
             .kind = SC_FIELD_TEXT,
             .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
             .tokens = toks,
             .n_tokens = nt,
             .length = 8},
            {.name = sc_slice_cstr("tag"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .tokens = &kw,
             .n_tokens = 1},
            {.name = sc_slice_cstr("n"),
             .kind = SC_FIELD_NUMERIC,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .values = nums,
             .n_values = d % 5 == 0 ? 2 : 1},
            {.name = sc_slice_cstr("loc"),
             .kind = SC_FIELD_NUMERIC,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO,
             .values = &geo,
             .n_values = 1},
        };
        sc_index_doc doc = {
            .id = sc_slice_cstr(id), .source = sc_slice_cstr(src), .fields = f, .n_fields = 5};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_status st = sc_segment_builder_write(b, dir, name, NULL);
    sc_segment_builder_free(b);
    return st != SC_OK;
}

static int write_vec_seg(const char *dir, const char *name, uint32_t n_docs)
{
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    const sc_vec_params pv = {8, SC_VEC_SIM_L2, SC_VEC_ELEM_FLOAT, SC_VEC_INDEX_HNSW, 4, 20};
    const sc_vec_params pq = {8, SC_VEC_SIM_COSINE, SC_VEC_ELEM_FLOAT, SC_VEC_INDEX_INT8_HNSW, 4,
                              20};
    uint64_t x = 42;
    for (uint32_t d = 0; d < n_docs; d++) {
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        float v[8], q[8], norm = 0;
        for (int i = 0; i < 8; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = (float)((x >> 40) % 2001) / 100.0f - 10.0f;
            q[i] = v[i] + (float)(i + 1);
            norm += q[i] * q[i];
        }
        for (int i = 0; i < 8; i++)
            q[i] /= sqrtf(norm);
        sc_index_token idt = {sc_slice_cstr(id), 0};
        sc_index_field f[3] = {
            {.name = sc_slice_cstr("_id"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .tokens = &idt,
             .n_tokens = 1},
            {.name = sc_slice_cstr("q"),
             .kind = SC_FIELD_VECTOR,
             .flags = SC_FIELD_INDEXED,
             .vector = q,
             .vparams = &pq},
            {.name = sc_slice_cstr("v"),
             .kind = SC_FIELD_VECTOR,
             .flags = SC_FIELD_INDEXED,
             .vector = v,
             .vparams = &pv},
        };
        size_t nf = 1;
        if (d % 2 == 0)
            f[nf++] = f[1];
        if (d % 9 != 0)
            f[nf++] = f[2];
        sc_index_doc doc = {.id = sc_slice_cstr(id), .source = sc_slice_cstr("{}"), .fields = f,
                            .n_fields = nf};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_status st = sc_segment_builder_write(b, dir, name, NULL);
    sc_segment_builder_free(b);
    return st != SC_OK;
}

/* Docs with sources of words, over SC__STORED_DICT_MIN_RAW raw bytes in all: the segment gets
 * a stored dictionary. */
static uint32_t lcg(uint32_t *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 8;
}

static int write_dict_seg(const char *dir, const char *name, uint32_t n_docs)
{
    /* a vocabulary larger than a block learns alone, picked with a skew as in text */
    static char vocab[2000][12];
    uint32_t x = 1;
    for (uint32_t i = 0; i < 2000; i++) {
        uint32_t len = 3 + lcg(&x) % 8;
        for (uint32_t k = 0; k < len; k++)
            vocab[i][k] = (char)('a' + lcg(&x) % 26);
        vocab[i][len] = '\0';
    }
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return 1;
    for (uint32_t d = 0; d < n_docs; d++) {
        char id[16], src[640];
        snprintf(id, sizeof id, "%u", d);
        size_t p = (size_t)snprintf(src, sizeof src, "{\"title\":\"%s\",\"body\":\"", WORDS[d % 7]);
        for (uint32_t i = 0; i < 30; i++)
            p += (size_t)snprintf(src + p, sizeof src - p, "%s ",
                                  vocab[lcg(&x) % (1 + lcg(&x) % 2000)]);
        snprintf(src + p, sizeof src - p, "\",\"n\":%u}", d * 7919u);
        sc_index_token idt = {sc_slice_cstr(id), 0};
        sc_index_field f = {.name = sc_slice_cstr("_id"),
                            .kind = SC_FIELD_KEYWORD,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                            .tokens = &idt,
                            .n_tokens = 1};
        sc_index_doc doc = {
            .id = sc_slice_cstr(id), .source = sc_slice_cstr(src), .fields = &f, .n_fields = 1};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return 1;
    }
    sc_status st = sc_segment_builder_write(b, dir, name, NULL);
    sc_segment_builder_free(b);
    return st != SC_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_segment_seeds DIR\n");
        return 2;
    }
    if (write_seg(argv[1], "small", 40, 5) || write_seg(argv[1], "blocks", 300, 5) ||
        write_seg(argv[1], "skip2", 4200, 1) || write_vec_seg(argv[1], "vectors", 200) ||
        write_dict_seg(argv[1], "dict", 800)) {
        fprintf(stderr, "make_segment_seeds: writing failed\n");
        return 1;
    }
    return 0;
}
