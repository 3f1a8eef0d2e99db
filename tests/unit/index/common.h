/* Shared helpers of the index unit tests: a seeded PRNG (seed printed, SCRY_SEED overrides), a
 * temporary directory, and a random corpus with its brute-force model. Header-only so each test
 * binary stays one file plus this. */
#ifndef SC_TESTS_INDEX_COMMON_H
#define SC_TESTS_INDEX_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "index/builder.h"
#include "index/doc.h"

static uint64_t t_rng_state;

static inline uint64_t t_rand(void)
{
    uint64_t x = t_rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t_rng_state = x;
    return x;
}

static inline uint32_t t_below(uint32_t n)
{
    return n ? (uint32_t)(t_rand() % n) : 0;
}

static inline uint64_t t_seed(const char *what)
{
    const char *env = getenv("SCRY_SEED");
    uint64_t seed =
        env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ (uint64_t)getpid() * 2654435761u);
    if (seed == 0)
        seed = 1;
    fprintf(stderr, "[%s] seed=%llu (rerun with SCRY_SEED=%llu)\n", what, (unsigned long long)seed,
            (unsigned long long)seed);
    t_rng_state = seed;
    return seed;
}

static inline void t_tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/scry_index_test_XXXXXX");
    if (!mkdtemp(out))
        abort();
}

/* ---- random corpus ---- */

#define T_VOCAB 400
#define T_MAX_TOK 40

typedef struct t_doc {
    uint32_t n_body;
    uint16_t body[T_MAX_TOK]; /* vocab ids; position = index * 1 (+ gap at 10) */
    uint32_t body_pos[T_MAX_TOK];
    uint32_t n_tags;
    uint16_t tags[4]; /* tag vocab ids, may repeat */
    uint32_t n_nums;
    int64_t nums[3];
    char id[24];
    char source[64];
    uint32_t source_len;
} t_doc;

typedef struct t_corpus {
    uint32_t n_docs;
    t_doc *docs;
    char vocab[T_VOCAB][8];
    char tagv[16][8];
} t_corpus;

/* Special vocab ids: 0 "every" (all docs), 1 "run" (a long range), 2 "dense" (~85%, bitset blocks).
 */
static inline void t_corpus_make(t_corpus *c, uint32_t n_docs)
{
    c->n_docs = n_docs;
    c->docs = calloc(n_docs ? n_docs : 1, sizeof(t_doc));
    strcpy(c->vocab[0], "every");
    strcpy(c->vocab[1], "run");
    strcpy(c->vocab[2], "dense");
    for (int v = 3; v < T_VOCAB; v++) {
        for (;;) {
            int len = 1 + (int)t_below(5);
            for (int i = 0; i < len; i++)
                c->vocab[v][i] = (char)('a' + t_below(4));
            c->vocab[v][len] = 0;
            int dup = 0;
            for (int u = 0; u < v && !dup; u++)
                dup = strcmp(c->vocab[u], c->vocab[v]) == 0;
            if (!dup)
                break;
        }
    }
    for (int t = 0; t < 16; t++)
        snprintf(c->tagv[t], sizeof(c->tagv[t]), "tag%02u", (unsigned)t & 15u);
    uint32_t run_lo = n_docs / 5, run_hi = run_lo + n_docs / 2;
    for (uint32_t d = 0; d < n_docs; d++) {
        t_doc *doc = &c->docs[d];
        uint32_t n = t_below(T_MAX_TOK - 3);
        uint32_t pos = 0;
        doc->body[doc->n_body] = 0, doc->body_pos[doc->n_body++] = pos++;
        if (d >= run_lo && d < run_hi)
            doc->body[doc->n_body] = 1, doc->body_pos[doc->n_body++] = pos++;
        if (t_below(100) < 85)
            doc->body[doc->n_body] = 2, doc->body_pos[doc->n_body++] = pos++;
        for (uint32_t i = 0; i < n; i++) {
            /* skewed: small ids are frequent */
            uint32_t r = t_below(T_VOCAB - 3);
            r = r * r / (T_VOCAB - 3);
            doc->body[doc->n_body] = (uint16_t)(3 + r);
            if (i == 10)
                pos += 5; /* a position gap, as between values */
            doc->body_pos[doc->n_body++] = pos++;
        }
        doc->n_tags = t_below(5);
        for (uint32_t i = 0; i < doc->n_tags; i++)
            doc->tags[i] = (uint16_t)t_below(16);
        doc->n_nums = t_below(4);
        for (uint32_t i = 0; i < doc->n_nums; i++)
            doc->nums[i] =
                (int64_t)(t_below(1000)) * 7 - 3000 + (t_below(50) == 0 ? INT64_MIN / 2 : 0);
        snprintf(doc->id, sizeof(doc->id), "id-%u", d);
        doc->source_len =
            (uint32_t)snprintf(doc->source, sizeof(doc->source), "{\"n\":%u,\"x\":\"%llx\"}", d,
                               (unsigned long long)t_rand());
    }
}

static inline void t_corpus_free(t_corpus *c)
{
    free(c->docs);
}

/* Adds doc d of the corpus to a builder. */
static inline sc_status t_add_doc(sc_segment_builder *b, const t_corpus *c, uint32_t d)
{
    const t_doc *doc = &c->docs[d];
    sc_index_token body[T_MAX_TOK], tags[4];
    for (uint32_t i = 0; i < doc->n_body; i++)
        body[i] = (sc_index_token){sc_slice_cstr(c->vocab[doc->body[i]]), doc->body_pos[i]};
    for (uint32_t i = 0; i < doc->n_tags; i++)
        tags[i] = (sc_index_token){sc_slice_cstr(c->tagv[doc->tags[i]]), i};
    sc_index_token idtok = {sc_slice_cstr(doc->id), 0};
    sc_index_field f[4] = {
        {.name = sc_slice_cstr("body"),
         .kind = SC_FIELD_TEXT,
         .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
         .tokens = body,
         .n_tokens = doc->n_body,
         .length = doc->n_body},
        {.name = sc_slice_cstr("tag"),
         .kind = SC_FIELD_KEYWORD,
         .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
         .tokens = tags,
         .n_tokens = doc->n_tags},
        {.name = sc_slice_cstr("num"),
         .kind = SC_FIELD_NUMERIC,
         .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
         .values = doc->nums,
         .n_values = doc->n_nums},
        {.name = sc_slice_cstr("_id"),
         .kind = SC_FIELD_KEYWORD,
         .flags = SC_FIELD_INDEXED,
         .tokens = &idtok,
         .n_tokens = 1},
    };
    sc_index_doc in = {.id = sc_slice_cstr(doc->id),
                       .source = sc_slice_make(doc->source, doc->source_len),
                       .fields = f,
                       .n_fields = 4};
    return sc_segment_builder_add(b, &in, NULL);
}

/* Model postings of a body term: docs, freqs, positions (flattened). */
typedef struct t_post {
    uint32_t n;
    uint32_t *docs, *freqs, *pos_start, *pos;
} t_post;

static inline void t_post_body(const t_corpus *c, uint16_t v, t_post *p)
{
    memset(p, 0, sizeof(*p));
    p->docs = malloc(sizeof(uint32_t) * (c->n_docs + 1));
    p->freqs = malloc(sizeof(uint32_t) * (c->n_docs + 1));
    p->pos_start = malloc(sizeof(uint32_t) * (c->n_docs + 2));
    p->pos = malloc(sizeof(uint32_t) * ((size_t)c->n_docs * T_MAX_TOK + 1));
    uint32_t np = 0;
    for (uint32_t d = 0; d < c->n_docs; d++) {
        const t_doc *doc = &c->docs[d];
        uint32_t f = 0, start = np;
        for (uint32_t i = 0; i < doc->n_body; i++)
            if (doc->body[i] == v)
                p->pos[np++] = doc->body_pos[i], f++;
        if (f) {
            p->docs[p->n] = d;
            p->freqs[p->n] = f;
            p->pos_start[p->n++] = start;
        }
    }
    p->pos_start[p->n] = np;
}

static inline void t_post_free(t_post *p)
{
    free(p->docs);
    free(p->freqs);
    free(p->pos_start);
    free(p->pos);
}

#endif
