/* Top-k of sum disjunctions of terms without exact totals (src/search/disj_terms.c, block-max
 * MaxScore over windows) against an exhaustive model: two segments of random docs whose terms
 * get random densities (0.02% to 95%, some dense in stretches of the segment and sparse
 * elsewhere, so block bounds vary), random frequencies (mostly small: many ties) and random
 * lengths (norms from a few tokens to thousands); queries of 2 to 6 terms with random boosts
 * (from 1e-7 to 2,000), sizes 1 to 40, totals not tracked, bounded at 100 and 10,000, and exact
 * (the windowed exhaustive collector, for reference). The hits must equal the model's bit for
 * bit: each doc's score the float of the double sum of its terms' BM25 in clause order, ties
 * by doc id as Lucene. Some clauses are on a keyword field with the same terms (no freqs, no
 * norms). With and without deletes. Seeded (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixture.h"
#include "search/bm25.h"
#include "search/query.h"

enum {
    N_SEG = 2,
    PER = 30000,
    T = 10,
    MAXQ = 6
};
static const char *names[T] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"};
static uint8_t freq[T][N_SEG * PER];
static sc_segment *segs[N_SEG];
static sc_bitset lives[N_SEG];
static bool live_of[N_SEG][PER];
static sc_searcher_segment ss[N_SEG];
static const sc_searcher searcher = {ss, N_SEG};
static char dir[96];

/* Per term: its density per 100,000 docs, and for "stretchy" terms a second density used in
 * every other stretch of 2,000 docs. */
static uint32_t dens[T], dens2[T];

static int setup(void **state)
{
    (void)state;
    if (fx_begin("disj_terms", dir, sizeof dir) != 0)
        return -1;
    static const uint32_t base[] = {95000, 60000, 30000, 10000, 3000, 800, 200, 50, 20};
    for (int t = 0; t < T; t++) {
        dens[t] = base[below(9)];
        dens2[t] = below(3) == 0 ? base[below(9)] : dens[t];
    }
    for (int s = 0; s < N_SEG; s++) {
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return -1;
        for (uint32_t i = 0; i < PER; i++) {
            uint32_t d = (uint32_t)s * PER + i;
            static sc_index_token toks[T * 40 + 4100];
            uint32_t n = 0;
            for (int t = 0; t < T; t++) {
                uint32_t p = (i / 2000) % 2 ? dens2[t] : dens[t];
                bool has = below(100000) < p;
                /* mostly 1-2, sometimes up to 8, rarely up to 40 */
                uint32_t f = below(20) == 0 ? 1 + below(40) : 1 + below(below(5) == 0 ? 8 : 2);
                freq[t][d] = has ? (uint8_t)f : 0;
                for (uint32_t k = 0; k < freq[t][d]; k++, n++)
                    toks[n] = (sc_index_token){sc_slice_cstr(names[t]), n};
            }
            /* filler: lengths from a few tokens to thousands (norm bytes across the range) */
            uint32_t fill = below(10) == 0 ? below(4000) : below(below(3) == 0 ? 200 : 20);
            for (uint32_t k = fill; k > 0; k--, n++)
                toks[n] = (sc_index_token){sc_slice_cstr("zz"), n};
            if (n == 0)
                toks[n++] = (sc_index_token){sc_slice_cstr("zz"), 0};
            sc_index_token ktoks[T];
            uint32_t nk = 0;
            for (int t = 0; t < T; t++)
                if (freq[t][d])
                    ktoks[nk++] = (sc_index_token){sc_slice_cstr(names[t]), 0};
            sc_index_field f[2] = {{.name = sc_slice_cstr("body"),
                                    .kind = SC_FIELD_TEXT,
                                    .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS,
                                    .tokens = toks,
                                    .n_tokens = n,
                                    .length = n},
                                   fx_keyword("tag", 0, ktoks, nk)};
            char id[16];
            snprintf(id, sizeof id, "%u", d);
            if (fx_add(b, id, f, 2) != 0)
                return -1;
        }
        if (fx_write(b, dir, s, &segs[s]) != 0)
            return -1;
        uint32_t deleted;
        if (fx_lives(&lives[s], PER, false, 5, live_of[s], &deleted) != 0)
            return -1;
        ss[s] = fx_searcher_segment(segs[s], &lives[s], 0); /* no deletes until asked */
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return fx_segs_end(segs, lives, N_SEG, dir);
}

static ref_hit ref[N_SEG * PER];

typedef struct shape {
    int t[MAXQ];
    float boost[MAXQ];
    bool tag[MAXQ]; /* the clause is on the keyword field "tag" */
    size_t n;
    size_t size;
} shape;

static const char *field_of(bool tag)
{
    return tag ? "tag" : "body";
}

static void init_bm25(sc_bm25 *bm, int t, float boost, bool tag)
{
    sc_bm25_field_stats fs = {0, 0};
    for (int s = 0; s < N_SEG; s++) {
        const sc_field_info *f = sc_segment_field(segs[s], sc_slice_cstr(field_of(tag)));
        fs.doc_count += f->doc_count;
        fs.sum_total_term_freq += f->sum_total_term_freq;
    }
    uint64_t df = 0;
    for (uint32_t d = 0; d < N_SEG * PER; d++)
        df += freq[t][d] > 0;
    sc_bm25_init(bm, boost, sc_bm25_idf(df, fs.doc_count), &fs);
}

/* Every matching live doc with its score (clause order, double sum, cast), best first. */
static size_t model(const shape *q)
{
    sc_bm25 bm[MAXQ];
    for (size_t i = 0; i < q->n; i++)
        init_bm25(&bm[i], q->t[i], q->boost[i], q->tag[i]);
    size_t n = 0;
    for (uint32_t d = 0; d < N_SEG * PER; d++) {
        uint32_t s = d / PER, local = d % PER;
        if (ss[s].live && ss[s].n_deleted && !live_of[s][local])
            continue;
        const uint8_t *norms =
            sc_segment_norms(segs[s], sc_segment_field(segs[s], sc_slice_cstr("body")));
        double sum = 0;
        bool on = false;
        for (size_t i = 0; i < q->n; i++)
            if (freq[q->t[i]][d]) {
                on = true;
                sum += q->tag[i] ? sc_bm25_score(&bm[i], 1.0f, 1)
                                 : sc_bm25_score(&bm[i], (float)freq[q->t[i]][d], norms[local]);
            }
        if (on)
            ref[n++] = (ref_hit){d, (float)sum};
    }
    qsort(ref, n, sizeof *ref, cmp_ref);
    return n;
}

static void describe(const shape *s, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "size %zu:", s->size);
    for (size_t i = 0; i < s->n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, " %s:%s(%u/%u)^%g", field_of(s->tag[i]),
                              names[s->t[i]], dens[s->t[i]], dens2[s->t[i]], (double)s->boost[i]);
}

static void check(const shape *s)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_query *q = sc_query_bool(&a);
    for (size_t i = 0; i < s->n; i++) {
        sc_query *t =
            sc_query_term(&a, sc_slice_cstr(field_of(s->tag[i])), sc_slice_cstr(names[s->t[i]]));
        if (s->boost[i] != 1.0f)
            t->boost = s->boost[i];
        assert_int_equal(sc_query_bool_add(&a, q, SC_OCCUR_SHOULD, t), SC_OK);
    }
    size_t n = model(s);
    size_t want = n < s->size ? n : s->size;
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = s->size;
    static const int64_t tracks[4] = {SC_TRACK_TOTAL_HITS_NONE, 100, 10000,
                                      SC_TRACK_TOTAL_HITS_ALL};
    char what[256];
    for (int mode = 0; mode < 4; mode++) {
        sc_search_result r;
        o.track_total_hits = tracks[mode];
        assert_int_equal(sc_search_execute(&searcher, q, &o, &a, &r), SC_OK);
        bool ok = r.n_hits == want;
        for (size_t k = 0; ok && k < r.n_hits; k++)
            ok = r.hits[k].global_doc == ref[k].doc && r.hits[k].score == ref[k].score;
        if (tracks[mode] > 0 && (uint64_t)tracks[mode] > n)
            ok = ok && r.total == n && !r.total_gte; /* counted them all */
        if (tracks[mode] > 0 && (uint64_t)tracks[mode] <= n)
            ok = ok && r.total == (uint64_t)tracks[mode];
        if (!ok) {
            describe(s, what, sizeof what);
            fprintf(stderr, "%s, track %lld: %zu hits (want %zu), total %llu (matches %zu)\n", what,
                    (long long)tracks[mode], r.n_hits, want, (unsigned long long)r.total, n);
            for (size_t k = 0; k < r.n_hits || k < want; k++)
                fprintf(stderr, "  %zu: %llu %.9g  want %llu %.9g\n", k,
                        k < r.n_hits ? (unsigned long long)r.hits[k].global_doc : 0ULL,
                        k < r.n_hits ? (double)r.hits[k].score : 0.0,
                        k < want ? (unsigned long long)ref[k].doc : 0ULL,
                        k < want ? (double)ref[k].score : 0.0);
        }
        assert_true(ok);
    }
    sc_arena_fini(&a);
}

static void check_all(int rounds)
{
    /* 1e-7 next to 2,000: double sums that round, so the clause order of the sum shows */
    static const float boosts[] = {1.0f, 1.0f, 1.0f, 0.5f, 3.0f, 0.001f, 40.0f, 1e-7f, 2000.0f};
    static const size_t sizes[] = {1, 3, 10, 10, 10, 25, 40};
    /* every pair of terms, plain (the luceneutil or_* shapes) */
    for (int i = 0; i < T; i++)
        for (int j = i + 1; j < T; j++) {
            shape s = {{i, j}, {1.0f, 1.0f}, {false, false}, 2, 10};
            check(&s);
        }
    /* random shapes: 2 to 6 distinct terms, boosts, sizes */
    for (int round = 0; round < rounds; round++) {
        shape s = {{0}, {0}, {false}, 2 + below(MAXQ - 1), sizes[below(7)]};
        int used[T] = {0};
        for (size_t i = 0; i < s.n; i++) {
            int t;
            do
                t = (int)below(T);
            while (used[t]);
            used[t] = 1;
            s.t[i] = t;
            s.boost[i] = boosts[below(9)];
            s.tag[i] = below(6) == 0;
        }
        check(&s);
    }
}

static void test_disj_terms(void **state)
{
    (void)state;
    check_all(150);
}

static void test_disj_terms_with_deletes(void **state)
{
    (void)state;
    for (int s = 0; s < N_SEG; s++) {
        uint32_t deleted = 0;
        for (uint32_t d = 0; d < PER; d++)
            deleted += !live_of[s][d];
        ss[s] = fx_searcher_segment(segs[s], &lives[s], deleted);
    }
    check_all(50);
    for (int s = 0; s < N_SEG; s++)
        ss[s] = fx_searcher_segment(segs[s], &lives[s], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disj_terms),
        cmocka_unit_test(test_disj_terms_with_deletes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
