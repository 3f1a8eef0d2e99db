/* Shared fixture pieces of the search tests that build real segments: the seeded xorshift
 * generator (seed printed, SCRY_SEED reruns), a scratch directory under /tmp, index-field
 * constructors, writing and opening a segment, and random deletes; for the model tests
 * (geo_test, range_search_test) also the "_id" + "tag" fields of a document, ending a segment
 * (write, deletes, searcher view) and a query filtered by a tag. Header-only: each test is its
 * own binary, so the generator state is per test. */
#ifndef SC_TESTS_SEARCH_FIXTURE_H
#define SC_TESTS_SEARCH_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/bitset.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/query.h"
#include "search/searcher.h"

static uint64_t rng;

static inline uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Uniform-ish in [0, n); 0 when n is 0. */
static inline uint32_t below(uint32_t n)
{
    return n ? (uint32_t)(rnd() % n) : 0;
}

/* Seeds rng from SCRY_SEED (else time and pid), prints the seed as "[tag] seed=...", and
 * makes the empty directory /tmp/scry_<tag>_test_<pid> in dir. 0, or -1 when it cannot. */
static inline int fx_begin(const char *tag, char *dir, size_t dir_cap)
{
    const char *env = getenv("SCRY_SEED");
    rng = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20));
    if (!rng)
        rng = 1;
    fprintf(stderr, "[%s] seed=%llu (rerun with SCRY_SEED=%llu)\n", tag, (unsigned long long)rng,
            (unsigned long long)rng);
    snprintf(dir, dir_cap, "/tmp/scry_%s_test_%d", tag, (int)getpid());
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Removes the directory of fx_begin. 0, or -1 when it cannot. */
static inline int fx_end(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Ends a fixture of n segments with their live bitsets: unrefs and frees them and removes dir.
 * 0, or -1 when the directory cannot be removed. */
static inline int fx_segs_end(sc_segment **segs, sc_bitset *lives, int n, const char *dir)
{
    for (int s = 0; s < n; s++) {
        sc_segment_unref(segs[s]);
        sc_bitset_fini(&lives[s]);
    }
    return fx_end(dir);
}

/* A model's hit, and the order of top-k answers: score descending, then doc ascending. */
typedef struct ref_hit {
    uint64_t doc;
    float score;
} ref_hit;

static inline int cmp_ref(const void *a, const void *b)
{
    const ref_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* A keyword field (indexed, plus `flags`) of n tokens. */
static inline sc_index_field fx_keyword(const char *name, uint32_t flags,
                                        const sc_index_token *tokens, uint32_t n)
{
    return (sc_index_field){.name = sc_slice_cstr(name),
                            .kind = SC_FIELD_KEYWORD,
                            .flags = SC_FIELD_INDEXED | flags,
                            .tokens = tokens,
                            .n_tokens = n};
}

/* A numeric field of n values with the given flags (SC_FIELD_INDEXED for points, ...). */
static inline sc_index_field fx_numeric(const char *name, uint32_t flags, const int64_t *values,
                                        uint32_t n)
{
    return (sc_index_field){.name = sc_slice_cstr(name),
                            .kind = SC_FIELD_NUMERIC,
                            .flags = flags,
                            .values = values,
                            .n_values = n};
}

/* Adds a document with id and fields (source "{}"). 0, or -1 on failure. */
static inline int fx_add(sc_segment_builder *b, const char *id, const sc_index_field *f, size_t nf)
{
    sc_index_doc doc = {
        .id = sc_slice_cstr(id), .source = sc_slice_cstr("{}"), .fields = f, .n_fields = nf};
    return sc_segment_builder_add(b, &doc, NULL) == SC_OK ? 0 : -1;
}

/* Adds doc number d (its id the decimal of d) with one text field "body" of n positioned
 * tokens (indexed with norms and positions, length n). 0 or -1. */
static inline int fx_add_body(sc_segment_builder *b, uint32_t d, const sc_index_token *toks,
                              uint32_t n)
{
    sc_index_field f = {.name = sc_slice_cstr("body"),
                        .kind = SC_FIELD_TEXT,
                        .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
                        .tokens = toks,
                        .n_tokens = n,
                        .length = n};
    char id[16];
    snprintf(id, sizeof id, "%u", d);
    return fx_add(b, id, &f, 1);
}

/* Writes the builder as segment "s<s>" in dir, frees it and opens the segment. 0 or -1. */
static inline int fx_write(sc_segment_builder *b, const char *dir, int s, sc_segment **out)
{
    char name[8];
    snprintf(name, sizeof name, "s%d", s);
    sc_status st = sc_segment_builder_write(b, dir, name, NULL);
    sc_segment_builder_free(b);
    return st == SC_OK && sc_segment_open(dir, name, out) == SC_OK ? 0 : -1;
}

/* Initializes bs for n docs and marks them live: all when keep_all, else each but one in
 * one_in at random (one below() call a doc); live[d] says which. Sets *deleted. 0 or -1. */
static inline int fx_lives(sc_bitset *bs, uint32_t n, bool keep_all, uint32_t one_in, bool *live,
                           uint32_t *deleted)
{
    if (sc_bitset_init(bs, n) != SC_OK)
        return -1;
    *deleted = 0;
    for (uint32_t d = 0; d < n; d++) {
        live[d] = keep_all || below(one_in) != 0;
        if (live[d])
            sc_bitset_set(bs, d);
        else
            (*deleted)++;
    }
    return 0;
}

/* The searcher's view of a segment with the live set of fx_lives (none when nothing is
 * deleted). */
static inline sc_searcher_segment fx_searcher_segment(sc_segment *seg, const sc_bitset *live,
                                                      uint32_t deleted)
{
    sc_searcher_segment ss = {0};
    ss.seg = seg;
    ss.live = deleted ? live : NULL;
    ss.n_deleted = deleted;
    return ss;
}

/* The two keyword fields every document of the model tests (geo_test, range_search_test) has:
 * "_id" = "<seg>-<doc>" and "tag" = "t<tag>". The strings live in the struct. */
typedef struct fx_tagged {
    char id[16], tag[8];
    sc_index_token idt, tt;
} fx_tagged;

/* Fills k and writes the "_id" and "tag" fields to f[0] and f[1]; returns 2 (the fields
 * written). k->id is the document id to pass to fx_add. */
static inline size_t fx_tagged_fields(fx_tagged *k, int seg, uint32_t doc, uint32_t tag,
                                      sc_index_field *f)
{
    snprintf(k->id, sizeof k->id, "%d-%u", seg, doc);
    snprintf(k->tag, sizeof k->tag, "t%u", tag);
    k->idt = (sc_index_token){sc_slice_cstr(k->id), 0};
    k->tt = (sc_index_token){sc_slice_cstr(k->tag), 0};
    f[0] = fx_keyword("_id", 0, &k->idt, 1);
    f[1] = fx_keyword("tag", 0, &k->tt, 1);
    return 2;
}

/* Ends segment s of a model test: writes and opens it (fx_write), deletes about one document
 * in one_in unless keep_all (fx_lives into bs; live[d] says which) and sets its searcher view.
 * 0, or -1 on failure. */
static inline int fx_segment_finish(sc_segment_builder *b, const char *dir, int s, bool keep_all,
                                    uint32_t one_in, sc_segment **seg, sc_bitset *bs, bool *live,
                                    sc_searcher_segment *view)
{
    uint32_t deleted;
    if (fx_write(b, dir, s, seg) != 0 ||
        fx_lives(bs, sc_segment_n_docs(*seg), keep_all, one_in, live, &deleted) != 0)
        return -1;
    *view = fx_searcher_segment(*seg, bs, deleted);
    return 0;
}

/* bool { must: term tag = "t<tag>", <occur>: inner } in a; NULL when it cannot be built. */
static inline sc_query *fx_with_tag(sc_arena *a, sc_query *inner, uint32_t tag,
                                    sc_query_occur occur)
{
    char t[8];
    snprintf(t, sizeof t, "t%u", tag);
    sc_query *q = sc_query_bool(a);
    sc_query *term = sc_query_term(a, sc_slice_cstr("tag"), sc_slice_cstr(t));
    if (!q || !term || !inner || sc_query_bool_add(a, q, SC_OCCUR_MUST, term) != SC_OK ||
        sc_query_bool_add(a, q, occur, inner) != SC_OK)
        return NULL;
    return q;
}

#endif
