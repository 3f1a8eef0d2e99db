/* Tests for the doc-id iterators (src/search/iter*.c) over a real segment: every kind under
 * every wrapper (none, live docs, cancellation, profiling, and all three stacked) must give the
 * same docs and scores through next, advance, next_batch, into_bitset (aligned and unaligned
 * windows) and run_end as a brute-force model of the documents; and the bulk operations must
 * reach each kind's native implementation through the wrappers: the generic fallback counters
 * stay at zero for every op a kind implements natively. Random docs; the seed is printed
 * (SCRY_SEED replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/builder.h"
#include "index/postings.h"
#include "index/terms.h"
#include "search/iter.h"

#define N_DOCS 10000
#define N_TERMS 5
static const char *const TERMS[N_TERMS] = {"a", "b", "c", "d", "e"};

/* The model: per doc, per term, the positions (at most 8) */
typedef struct mdoc {
    uint8_t n_pos[N_TERMS];
    uint8_t pos[N_TERMS][8];
    uint32_t len;
} mdoc;

static mdoc *model;
static sc_segment *seg;
static sc_bitset live;
static char dir[64];
static unsigned seed;

static int setup(void **state)
{
    (void)state;
    seed = (unsigned)time(NULL);
    if (getenv("SCRY_SEED"))
        seed = (unsigned)strtoul(getenv("SCRY_SEED"), NULL, 10);
    printf("# iter_test seed %u (SCRY_SEED to replay)\n", seed);
    unsigned r = seed;
    model = calloc(N_DOCS, sizeof *model);
    snprintf(dir, sizeof dir, "/tmp/scry_iter_test_%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    if (system(cmd) != 0)
        return -1;
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    /* density per term: a dense, b medium, c sparse, d a long run, e rare */
    for (uint32_t d = 0; d < N_DOCS; d++) {
        sc_index_token toks[64];
        size_t nt = 0;
        uint32_t len = 1 + (uint32_t)(rand_r(&r) % 12);
        for (uint32_t p = 0; p < len && nt < 64; p++) {
            int t;
            int x = rand_r(&r) % 100;
            if (d >= 3000 && d < 5200 && p == 0)
                t = 3;
            else if (x < 45)
                t = 0;
            else if (x < 75)
                t = 1;
            else if (x < 80)
                t = 2;
            else if (x < 81)
                t = 4;
            else
                continue; /* a gap: position without a tracked term */
            if (model[d].n_pos[t] < 8) {
                model[d].pos[t][model[d].n_pos[t]++] = (uint8_t)p;
                toks[nt].term = sc_slice_cstr(TERMS[t]);
                toks[nt].position = p;
                nt++;
            }
        }
        model[d].len = len;
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        sc_index_token idt = {sc_slice_cstr(id), 0};
        sc_index_field f[2] = {
            {.name = sc_slice_cstr("_id"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED,
             .tokens = &idt,
             .n_tokens = 1},
            {.name = sc_slice_cstr("body"),
             .kind = SC_FIELD_TEXT,
             .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
             .tokens = toks,
             .n_tokens = nt,
             .length = len},
        };
        sc_index_doc doc = {sc_slice_cstr(id), sc_slice_cstr("{}"), f, 2, NULL, 0};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return -1;
    }
    if (sc_segment_builder_write(b, dir, "s0", NULL) != SC_OK)
        return -1;
    sc_segment_builder_free(b);
    if (sc_segment_open(dir, "s0", &seg) != SC_OK)
        return -1;
    if (sc_bitset_init(&live, N_DOCS) != SC_OK)
        return -1;
    for (uint32_t d = 0; d < N_DOCS; d++)
        if (rand_r(&r) % 10 != 0)
            sc_bitset_set(&live, d);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    sc_bitset_fini(&live);
    free(model);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static sc_bm25 bm25s[N_TERMS];

static sc_doc_iter *term(sc_arena *a, int t, bool scoring, unsigned flags)
{
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("body"));
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, f, sc_slice_cstr(TERMS[t]), &ti, &found), SC_OK);
    assert_true(found);
    sc_postings p;
    sc_postings_init(&p);
    assert_int_equal(sc_postings_reset(&p, seg, f, &ti, flags | SC_POSTINGS_FREQS), SC_OK);
    sc_bm25_field_stats fs = {f->doc_count, f->sum_total_term_freq};
    sc_bm25_init(&bm25s[t], 1.0f, sc_bm25_idf(ti.doc_freq, f->doc_count), &fs);
    return sc_iter_term(a, &p, scoring ? &bm25s[t] : NULL, sc_segment_norms(seg, f));
}

static sc_doc_iter *phrase(sc_arena *a, int t0, int t1, uint32_t slop)
{
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("body"));
    sc_postings p[2];
    int ts[2] = {t0, t1};
    for (int i = 0; i < 2; i++) {
        sc_term_info ti;
        bool found;
        assert_int_equal(sc_terms_lookup(seg, f, sc_slice_cstr(TERMS[ts[i]]), &ti, &found), SC_OK);
        sc_postings_init(&p[i]);
        assert_int_equal(
            sc_postings_reset(&p[i], seg, f, &ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS),
            SC_OK);
    }
    uint32_t off[2] = {0, 1};
    return sc_iter_phrase(a, p, off, 2, slop, &bm25s[0], sc_segment_norms(seg, f));
}

/* Constant-score union (score 2.5) of the listed terms. */
static sc_doc_iter *term_union(sc_arena *a, const int *ts, size_t n)
{
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("body"));
    sc_term_info ti[32];
    for (size_t i = 0; i < n; i++) {
        bool found;
        assert_int_equal(sc_terms_lookup(seg, f, sc_slice_cstr(TERMS[ts[i]]), &ti[i], &found),
                         SC_OK);
        assert_true(found);
    }
    sc_doc_iter *it;
    assert_int_equal(sc_iter_term_union(a, seg, f, ti, n, 2.5f, &it), SC_OK);
    return it;
}

static sc_bitset evens;

enum {
    K_TERM,
    K_ALL,
    K_BITSET,
    K_CONST,
    K_CONJ,
    K_CONJ_DENSE,
    K_DISJ,
    K_DISJ_MSM,
    K_DISMAX,
    K_EXCL,
    K_REQOPT,
    K_BOOSTING,
    K_PHRASE,
    K_SLOPPY,
    K_UNION,
    K_UNION3,
    K_UNION_MANY,
    K_EXCL_PROBE,  /* a rare include, a dense exclusion: probed per included doc */
    K_CONJ_PHRASE, /* a two-phase phrase beside a term */
    K_DOCS,        /* a doc list with scores (a kNN query's neighbours) */
    K_COUNT
};
static const char *const KIND_NAMES[K_COUNT] = {
    "term",      "all",    "bitset",  "const",      "conj",       "conj_dense", "disj",
    "disj_msm2", "dismax", "excl",    "req_opt",    "boosting",   "phrase",     "sloppy_phrase",
    "union",     "union3", "union18", "excl_probe", "conj_phrase", "doc_list"};

static bool has(uint32_t d, int t)
{
    return model[d].n_pos[t] > 0;
}

/* Brute-force model of each kind; sloppy phrases are checked against Lucene by the oracle. */
static bool model_match(int kind, uint32_t d)
{
    switch (kind) {
    case K_TERM: return has(d, 0);
    case K_ALL: return true;
    case K_BITSET: return d % 2 == 0;
    case K_DOCS: return d % 3 == 0;
    case K_CONST: return has(d, 2);
    case K_CONJ:
    case K_CONJ_DENSE: return has(d, 0) && has(d, 1);
    case K_DISJ: return has(d, 2) || has(d, 3);
    case K_DISJ_MSM: return has(d, 0) + has(d, 1) + has(d, 2) >= 2;
    case K_DISMAX: return has(d, 1) || has(d, 4);
    case K_EXCL: return has(d, 0) && !has(d, 1);
    case K_UNION: return has(d, 2) || has(d, 4);
    case K_UNION3: return has(d, 0) || has(d, 3) || has(d, 4);
    case K_UNION_MANY: return has(d, 2) || has(d, 4);
    case K_REQOPT: return has(d, 3);
    case K_BOOSTING: return has(d, 1);
    case K_EXCL_PROBE: return has(d, 4) && !has(d, 0);
    case K_CONJ_PHRASE:
        if (!has(d, 2))
            return false;
        return model_match(K_PHRASE, d);
    case K_PHRASE:
        for (int i = 0; i < model[d].n_pos[0]; i++)
            for (int j = 0; j < model[d].n_pos[1]; j++)
                if (model[d].pos[1][j] == model[d].pos[0][i] + 1)
                    return true;
        return false;
    default: return true;
    }
}

static sc_doc_iter *make(sc_arena *a, int kind, sc_iter_stats *stats)
{
    sc_doc_iter *c[3];
    sc_doc_iter *it = NULL;
    switch (kind) {
    case K_TERM: it = term(a, 0, true, 0); break;
    case K_ALL: it = sc_iter_all(a, N_DOCS, 1.5f); break;
    case K_BITSET: it = sc_iter_bitset(a, &evens, N_DOCS, 2.0f); break;
    case K_CONST: it = sc_iter_constant(a, term(a, 2, false, 0), 3.0f); break;
    case K_CONJ:
        c[0] = term(a, 0, true, 0), c[1] = term(a, 1, true, 0);
        it = sc_iter_conjunction(a, c, 2, 2);
        break;
    case K_CONJ_DENSE:
        c[0] = term(a, 0, true, 0), c[1] = term(a, 1, true, 0);
        it = sc_iter_conjunction(a, c, 2, 2);
        sc_iter_conjunction_set_dense(it, a, true);
        break;
    case K_DISJ:
        c[0] = term(a, 2, true, 0), c[1] = term(a, 3, true, 0);
        it = sc_iter_disjunction(a, c, 2, 1, SC_DISJ_SUM, 0);
        break;
    case K_DISJ_MSM:
        c[0] = term(a, 0, true, 0), c[1] = term(a, 1, true, 0), c[2] = term(a, 2, true, 0);
        it = sc_iter_disjunction(a, c, 3, 2, SC_DISJ_SUM, 0);
        break;
    case K_DISMAX:
        c[0] = term(a, 1, true, 0), c[1] = term(a, 4, true, 0);
        it = sc_iter_disjunction(a, c, 2, 1, SC_DISJ_MAX, 0.3f);
        break;
    case K_EXCL: it = sc_iter_exclusion(a, term(a, 0, true, 0), term(a, 1, false, 0)); break;
    case K_REQOPT: it = sc_iter_req_opt(a, term(a, 3, true, 0), term(a, 0, true, 0)); break;
    case K_EXCL_PROBE: it = sc_iter_exclusion(a, term(a, 4, true, 0), term(a, 0, false, 0)); break;
    case K_CONJ_PHRASE:
        c[0] = term(a, 2, true, 0), c[1] = phrase(a, 0, 1, 0);
        it = sc_iter_conjunction(a, c, 2, 2);
        break;
    case K_BOOSTING:
        it = sc_iter_boosting(a, term(a, 1, true, 0), term(a, 0, false, 0), 0.5f);
        break;
    case K_PHRASE: it = phrase(a, 0, 1, 0); break;
    case K_DOCS: {
        uint32_t *docs = sc_arena_alloc(a, (N_DOCS / 3 + 1) * sizeof *docs);
        float *scores = sc_arena_alloc(a, (N_DOCS / 3 + 1) * sizeof *scores);
        size_t n = 0;
        for (uint32_t d = 0; docs && scores && d < N_DOCS; d += 3, n++)
            docs[n] = d, scores[n] = 1.0f + (float)(d % 17) * 0.25f;
        it = docs && scores ? sc_iter_docs(a, docs, scores, n) : NULL;
        break;
    }
    case K_SLOPPY: it = phrase(a, 0, 1, 2); break;
    case K_UNION: it = term_union(a, (const int[]){2, 4}, 2); break;
    case K_UNION3: it = term_union(a, (const int[]){0, 3, 4}, 3); break;
    case K_UNION_MANY: /* past 16 terms: a jump sets the union up as one bitset */
        it = term_union(a, (const int[]){2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4}, 18);
        break;
    }
    assert_non_null(it);
    /* every iterator of the tree reports into stats (leaves were made without) */
    it->stats = stats;
    return it;
}

enum {
    W_NONE,
    W_LIVE,
    W_CANCEL,
    W_PROFILE,
    W_ALL3,
    W_TIMED,
    W_COUNT
};
static const char *const WRAP_NAMES[W_COUNT] = {"none",    "live",    "cancel",
                                                "profile", "stacked", "profile_timed"};

static sc_cancel_token token;
static uint64_t prof_counts[SC_PROF_COUNT_];
static uint64_t timed_counts[SC_PROF_COUNT_], timed_ns[SC_PROF_COUNT_];

static sc_doc_iter *wrap(sc_arena *a, sc_doc_iter *it, int w)
{
    if (w == W_LIVE || w == W_ALL3)
        it = sc_iter_live_docs(a, it, &live);
    if (w == W_CANCEL || w == W_ALL3)
        it = sc_iter_cancel(a, it, &token);
    if (w == W_PROFILE || w == W_ALL3)
        it = sc_iter_profile(a, it, prof_counts);
    if (w == W_TIMED)
        it = sc_iter_profile_timed(a, it, timed_counts, timed_ns);
    return it;
}

/* The expected docs and scores: the unwrapped kind through next(), checked against the model. */
typedef struct expect {
    uint32_t *docs;
    float *scores;
    size_t n;
    uint8_t *in; /* membership by doc */
} expect;

static void collect_expected(int kind, bool with_live, expect *e)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_doc_iter *it = make(&a, kind, NULL);
    e->n = 0;
    memset(e->in, 0, N_DOCS);
    for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END; d = sc_doc_iter_next(it)) {
        if (with_live && !sc_bitset_test(&live, d))
            continue;
        e->docs[e->n] = d;
        e->scores[e->n] = sc_doc_iter_score(it);
        e->in[d] = 1;
        e->n++;
    }
    sc_arena_fini(&a);
    if (kind == K_SLOPPY)
        return;
    for (uint32_t d = 0; d < N_DOCS; d++) {
        bool want = model_match(kind, d) && (!with_live || sc_bitset_test(&live, d));
        if (want != (bool)e->in[d])
            fail_msg("seed %u kind %s doc %u: model says %d, iterator %d", seed, KIND_NAMES[kind],
                     d, want, e->in[d]);
    }
}

static void check_combo(int kind, int w, const expect *e)
{
    sc_iter_stats stats = {0};
    char what[64];
    snprintf(what, sizeof what, "%s/%s", KIND_NAMES[kind], WRAP_NAMES[w]);
    sc_arena a;
    sc_arena_init(&a, 0);

    /* next + score */
    sc_doc_iter *it = wrap(&a, make(&a, kind, &stats), w);
    size_t i = 0;
    for (uint32_t d = sc_doc_iter_next(it); d != SC_DOC_END; d = sc_doc_iter_next(it), i++) {
        if (i >= e->n || d != e->docs[i])
            fail_msg("seed %u %s next: #%zu got %u", seed, what, i, d);
        if (sc_doc_iter_score(it) != e->scores[i])
            fail_msg("seed %u %s score of %u differs", seed, what, d);
        /* run_end: every doc in [d, r) matches */
        uint32_t r = sc_doc_iter_run_end(it);
        if (r <= d)
            fail_msg("seed %u %s run_end %u <= doc %u", seed, what, r, d);
        for (uint32_t x = d; x < r && x < N_DOCS; x++)
            if (!e->in[x])
                fail_msg("seed %u %s run_end from %u claims %u", seed, what, d, x);
    }
    if (i != e->n)
        fail_msg("seed %u %s next: %zu docs, want %zu", seed, what, i, e->n);

    /* next_batch */
    it = wrap(&a, make(&a, kind, &stats), w);
    uint32_t docs[97], freqs[97];
    size_t n, k = 0;
    while ((n = sc_doc_iter_next_batch(it, docs, freqs, 97)) > 0)
        for (size_t j = 0; j < n; j++, k++)
            if (k >= e->n || docs[j] != e->docs[k])
                fail_msg("seed %u %s next_batch #%zu got %u", seed, what, k, docs[j]);
    if (k != e->n)
        fail_msg("seed %u %s next_batch: %zu docs, want %zu", seed, what, k, e->n);

    /* score_batch */
    it = wrap(&a, make(&a, kind, &stats), w);
    float sco[97];
    k = 0;
    while ((n = sc_doc_iter_score_batch(it, docs, sco, 97)) > 0)
        for (size_t j = 0; j < n; j++, k++)
            if (k >= e->n || docs[j] != e->docs[k] || sco[j] != e->scores[k])
                fail_msg("seed %u %s score_batch #%zu got %u", seed, what, k, docs[j]);
    if (k != e->n)
        fail_msg("seed %u %s score_batch: %zu docs, want %zu", seed, what, k, e->n);

    /* into_bitset: 4,096-doc windows from base 0, and unaligned windows */
    for (int mode = 0; mode < 2; mode++) {
        it = wrap(&a, make(&a, kind, &stats), w);
        sc_bitset bs;
        assert_int_equal(sc_bitset_init(&bs, N_DOCS + 64), SC_OK);
        uint32_t step = mode == 0 ? 4096 : 1000;
        uint32_t d = sc_doc_iter_next(it);
        while (d != SC_DOC_END) {
            uint32_t base = mode == 0 ? (d & ~4095u) : d - (d % 7); /* unaligned base */
            uint32_t upto = base + step;
            sc_bitset win;
            assert_int_equal(sc_bitset_init(&win, step + 64), SC_OK);
            sc_doc_iter_into_bitset(it, upto, &win, base);
            for (size_t b = sc_bitset_next_set(&win, 0); b < win.n_bits;
                 b = sc_bitset_next_set(&win, b + 1))
                sc_bitset_set(&bs, base + b);
            sc_bitset_fini(&win);
            if (it->doc != SC_DOC_END && it->doc < upto)
                fail_msg("seed %u %s into_bitset left doc %u < upto %u", seed, what, it->doc, upto);
            d = it->doc;
        }
        for (uint32_t x = 0; x < N_DOCS; x++)
            if (sc_bitset_test(&bs, x) != (bool)e->in[x])
                fail_msg("seed %u %s into_bitset mode %d doc %u", seed, what, mode, x);
        sc_bitset_fini(&bs);
    }

    /* advance to random targets */
    unsigned r = seed + (unsigned)kind * 31 + (unsigned)w;
    it = wrap(&a, make(&a, kind, &stats), w);
    uint32_t target = 0;
    size_t pos = 0;
    for (;;) {
        target += 1 + (uint32_t)(rand_r(&r) % 300);
        uint32_t got = sc_doc_iter_advance(it, target);
        while (pos < e->n && e->docs[pos] < target)
            pos++;
        uint32_t want = pos < e->n ? e->docs[pos] : SC_DOC_END;
        if (got != want)
            fail_msg("seed %u %s advance(%u) = %u want %u", seed, what, target, got, want);
        if (got == SC_DOC_END)
            break;
        if (sc_doc_iter_score(it) != e->scores[pos])
            fail_msg("seed %u %s score after advance to %u", seed, what, got);
        target = got;
    }

    /* Native bulk paths reached through every wrapper. */
    sc_doc_iter *probe = make(&a, kind, NULL);
    uint32_t native = probe->ops->native;
    if ((native & SC_ITER_NATIVE_INTO_BITSET) && stats.fallback_into_bitset)
        fail_msg("%s: into_bitset fell back to the generic path %llu times", what,
                 (unsigned long long)stats.fallback_into_bitset);
    if ((native & SC_ITER_NATIVE_RUN_END) && stats.fallback_run_end)
        fail_msg("%s: run_end fell back %llu times", what,
                 (unsigned long long)stats.fallback_run_end);
    if ((native & SC_ITER_NATIVE_NEXT_BATCH) && stats.fallback_next_batch)
        fail_msg("%s: next_batch fell back %llu times", what,
                 (unsigned long long)stats.fallback_next_batch);
    if ((native & SC_ITER_NATIVE_SCORE_BATCH) && stats.fallback_score_batch)
        fail_msg("%s: score_batch fell back %llu times", what,
                 (unsigned long long)stats.fallback_score_batch);
    if (!(native & SC_ITER_NATIVE_NEXT_BATCH) && e->n && !stats.fallback_next_batch)
        fail_msg("%s: next_batch is declared generic but the fallback was not counted", what);
    sc_arena_fini(&a);
}

static void test_every_kind_every_wrapper(void **state)
{
    (void)state;
    assert_int_equal(sc_bitset_init(&evens, N_DOCS), SC_OK);
    for (uint32_t d = 0; d < N_DOCS; d += 2)
        sc_bitset_set(&evens, d);
    expect e, el;
    e.docs = malloc(N_DOCS * sizeof(uint32_t));
    e.scores = malloc(N_DOCS * sizeof(float));
    e.in = malloc(N_DOCS);
    el.docs = malloc(N_DOCS * sizeof(uint32_t));
    el.scores = malloc(N_DOCS * sizeof(float));
    el.in = malloc(N_DOCS);
    sc_cancel_token_init(&token, 0);
    for (int k = 0; k < K_COUNT; k++) {
        collect_expected(k, false, &e);
        collect_expected(k, true, &el);
        for (int w = 0; w < W_COUNT; w++)
            check_combo(k, w, w == W_LIVE || w == W_ALL3 ? &el : &e);
        sc_arena a;
        sc_arena_init(&a, 0);
        uint32_t nat = make(&a, k, NULL)->ops->native;
        sc_arena_fini(&a);
        printf("# %-14s %5zu docs (%5zu live): same under %d wrappers; native:%s%s%s%s\n",
               KIND_NAMES[k], e.n, el.n, W_COUNT,
               nat & SC_ITER_NATIVE_INTO_BITSET ? " into_bitset" : "",
               nat & SC_ITER_NATIVE_RUN_END ? " run_end" : "",
               nat & SC_ITER_NATIVE_NEXT_BATCH ? " next_batch" : "",
               nat & SC_ITER_NATIVE_SCORE_BATCH ? " score_batch" : "");
    }
    assert_true(prof_counts[SC_PROF_INTO_BITSET] > 0 && prof_counts[SC_PROF_NEXT_BATCH] > 0);
    assert_true(timed_counts[SC_PROF_INTO_BITSET] > 0 && timed_counts[SC_PROF_NEXT_BATCH] > 0);
    free(e.docs), free(e.scores), free(e.in);
    free(el.docs), free(el.scores), free(el.in);
    sc_bitset_fini(&evens);
}

static void test_cancel_stops(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_cancel_token t;
    sc_cancel_token_init(&t, 0);
    sc_doc_iter *it = sc_iter_cancel(&a, sc_iter_all(&a, N_DOCS, 1.0f), &t);
    assert_int_equal(sc_doc_iter_next(it), 0);
    sc_cancel_token_cancel(&t);
    /* single-doc calls notice within CHECK_EVERY docs; bulk calls at once */
    uint32_t n = 0;
    while (sc_doc_iter_next(it) != SC_DOC_END)
        n++;
    assert_true(n < 4096);
    assert_int_equal(atomic_load(&t.fired), 1);
    sc_cancel_token t2;
    sc_cancel_token_init(&t2, 1); /* a deadline long past */
    uint32_t docs[10];
    it = sc_iter_cancel(&a, sc_iter_all(&a, N_DOCS, 1.0f), &t2);
    assert_int_equal(sc_doc_iter_next_batch(it, docs, NULL, 10), 0);
    assert_int_equal(atomic_load(&t2.fired), 2);
    /* a leaf checks the token itself, once per postings block */
    sc_cancel_token t3;
    sc_cancel_token_init(&t3, 0);
    sc_doc_iter *leaf = term(&a, 0, false, 0);
    sc_iter_leaf_set_cancel(leaf, &t3);
    assert_true(sc_doc_iter_next(leaf) != SC_DOC_END);
    sc_cancel_token_cancel(&t3);
    n = 0;
    while (sc_doc_iter_next(leaf) != SC_DOC_END)
        n++;
    assert_true(n < 128);
    assert_int_equal(atomic_load(&t3.fired), 1);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_every_wrapper),
        cmocka_unit_test(test_cancel_stops),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
