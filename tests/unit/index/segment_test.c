/* Segment round trips against a brute-force model: a random corpus is indexed, written and
 * reopened; field stats, term iteration and seeks, every postings operation in random
 * interleavings (next, advance, next_batch, into_bitset, run_end, freq, positions,
 * advance_shallow impacts), norms, doc values and stored fields must match the model. Seeds
 * are printed; SCRY_SEED=<n> replays one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <pthread.h>

#include "readall.h"
#include "verify.h"

static void roundtrip(uint32_t n_docs)
{
    t_corpus c;
    t_corpus_make(&c, n_docs);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < n_docs; d++)
        assert_int_equal(t_add_doc(b, &c, d), SC_OK);
    assert_int_equal(sc_segment_builder_n_docs(b), n_docs);
    assert_true(sc_segment_builder_ram_bytes(b) > 0);
    sc_segment_write_info info;
    assert_int_equal(sc_segment_builder_write(b, dir, "s1", &info), SC_OK);
    assert_int_equal(info.n_docs, n_docs);
    int64_t pool0 = sc_alloc_pool_bytes(&sc_pool_index_segments);
    sc_segment *seg;
    sc_index_error err;
    assert_int_equal(sc_segment_open_ex(dir, "s1", &seg, &err), SC_OK);
    assert_int_equal(sc_alloc_pool_bytes(&sc_pool_index_segments) - pool0,
                     (int64_t)info.size_bytes);
    assert_int_equal(sc_segment_checksum(seg), info.checksum);
    assert_int_equal(sc_segment_size_bytes(seg), info.size_bytes);
    verify_segment(seg, &c);
    if (n_docs == 0)
        assert_int_equal(sc_segment_n_fields(seg), 0);
    sc_segment_ref(seg);
    sc_segment_unref(seg);
    sc_segment_unref(seg);
    assert_int_equal(sc_alloc_pool_bytes(&sc_pool_index_segments), pool0);
    /* writing twice gives the same bytes; reset empties */
    uint64_t ck1 = info.checksum;
    assert_int_equal(sc_segment_builder_write(b, dir, "s2", &info), SC_OK);
    assert_int_equal(info.checksum, ck1);
    assert_int_equal(sc_segment_open(dir, "s2", &seg), SC_OK);
    verify_segment(seg, &c);
    sc_segment_unref(seg);
    /* trim empties and frees the buffers; the builder is then as good as new */
    size_t full = sc_segment_builder_ram_bytes(b);
    sc_segment_builder_trim(b);
    assert_int_equal(sc_segment_builder_n_docs(b), 0);
    if (n_docs > 100)
        assert_true(sc_segment_builder_ram_bytes(b) < full / 4);
    for (uint32_t d = 0; d < c.n_docs; d++)
        assert_int_equal(t_add_doc(b, &c, d), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, "s3", &info), SC_OK);
    assert_int_equal(info.checksum, ck1);
    sc_segment_builder_reset(b);
    assert_int_equal(sc_segment_builder_n_docs(b), 0);
    sc_segment_builder_free(b);
    t_corpus_free(&c);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_roundtrip_small(void **state)
{
    (void)state;
    t_seed("roundtrip_small");
    roundtrip(1);
    roundtrip(7);
    roundtrip(129);
}

static void test_roundtrip_large(void **state)
{
    (void)state;
    t_seed("roundtrip_large");
    roundtrip(5000);
}

static void test_empty(void **state)
{
    (void)state;
    t_seed("empty");
    roundtrip(0);
}

static void test_open_missing(void **state)
{
    (void)state;
    sc_segment *seg;
    sc_index_error err;
    assert_int_equal(sc_segment_open_ex("/nonexistent-dir", "x", &seg, &err), SC_ENOTFOUND);
}

static void test_builder_rejects(void **state)
{
    (void)state;
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    sc_index_token tok = {sc_slice_cstr("x"), 0};
    sc_index_field f = {.name = sc_slice_cstr("f"),
                        .kind = SC_FIELD_KEYWORD,
                        .flags = SC_FIELD_INDEXED,
                        .tokens = &tok,
                        .n_tokens = 1};
    sc_index_doc d = {.id = sc_slice_cstr("1"), .fields = &f, .n_fields = 1};
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_OK);
    f.kind = SC_FIELD_TEXT;
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_EINVAL);
    f.kind = SC_FIELD_KEYWORD;
    sc_index_field two[2] = {f, f};
    d.fields = two;
    d.n_fields = 2;
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_EINVAL);
    assert_int_equal(sc_segment_builder_n_docs(b), 1);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    assert_int_equal(sc_segment_builder_write(b, dir, "", NULL), SC_EINVAL);
    assert_int_equal(sc_segment_builder_write(b, dir, "a/b", NULL), SC_EINVAL);
    sc_segment_builder_free(b);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_norms_match_lucene(void **state)
{
    (void)state;
    /* values from Lucene's SmallFloat.intToByte4 */
    assert_int_equal(sc_norm_encode(0), 0);
    assert_int_equal(sc_norm_encode(23), 23);
    assert_int_equal(sc_norm_encode(24), 24);
    assert_int_equal(sc_norm_encode(25), 25);
    /* expected values printed by Lucene 8.7 (SmallFloat.intToByte4 / byte4ToInt) */
    assert_int_equal(sc_norm_encode(40), 40);
    assert_int_equal(sc_norm_encode(100), 57);
    assert_int_equal(sc_norm_decode(57), 96);
    assert_int_equal(sc_norm_encode(1000), 87);
    assert_int_equal(sc_norm_decode(87), 984);
    assert_int_equal(sc_norm_encode(10000), 113);
    assert_int_equal(sc_norm_decode(113), 9240);
    assert_int_equal(sc_norm_encode(100000), 140);
    assert_int_equal(sc_norm_decode(140), 98328);
    assert_int_equal(sc_norm_encode(INT32_MAX), 255);
    assert_int_equal(sc_norm_decode(255), 2013265944u);
    for (uint32_t i = 0; i < 100000; i++) {
        uint8_t b = sc_norm_encode(i);
        assert_true(sc_norm_decode(b) <= i);
        assert_int_equal(sc_norm_encode(sc_norm_decode(b)), b);
        if (i)
            assert_true(b >= sc_norm_encode(i - 1));
    }
}

/* Tokens given out of position order and repeated: freqs count them, positions come back
 * sorted; a field missing from later docs has norm 0 there. */
static void test_positions_out_of_order(void **state)
{
    (void)state;
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    sc_index_token toks[5] = {{sc_slice_cstr("b"), 9},
                              {sc_slice_cstr("a"), 4},
                              {sc_slice_cstr("b"), 2},
                              {sc_slice_cstr("b"), 7},
                              {sc_slice_cstr("a"), 1}};
    sc_index_field f = {.name = sc_slice_cstr("t"),
                        .kind = SC_FIELD_TEXT,
                        .flags = SC_FIELD_INDEXED | SC_FIELD_POSITIONS | SC_FIELD_NORMS,
                        .tokens = toks,
                        .n_tokens = 5,
                        .length = 5};
    sc_index_doc d = {.id = sc_slice_cstr("0"), .fields = &f, .n_fields = 1};
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_OK);
    d.n_fields = 0;
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, "p", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "p", &seg), SC_OK);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("t"));
    assert_non_null(fi);
    assert_int_equal(fi->doc_count, 1);
    assert_int_equal(sc_segment_norms(seg, fi)[0], 5);
    assert_int_equal(sc_segment_norms(seg, fi)[1], 0);
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, fi, sc_slice_cstr("b"), &ti, &found), SC_OK);
    assert_true(found);
    assert_int_equal(ti.total_term_freq, 3);
    sc_postings p;
    sc_postings_init(&p);
    assert_int_equal(sc_postings_reset(&p, seg, fi, &ti, SC_POSTINGS_POSITIONS), SC_OK);
    assert_int_equal(sc_postings_next(&p), 0);
    uint32_t pos[4];
    assert_int_equal(sc_postings_positions(&p, pos, 4), 3);
    assert_int_equal(pos[0], 2);
    assert_int_equal(pos[1], 7);
    assert_int_equal(pos[2], 9);
    assert_int_equal(sc_postings_next(&p), SC_POSTINGS_END);
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* Single-valued doc values are stored without per-doc starts (mode SINGLE): a keyword with at
 * most one value per doc and a numeric with exactly one read back as written, next to fields
 * that need the general layout (a missing numeric, a two-valued keyword). */
static void test_single_valued_doc_values(void **state)
{
    (void)state;
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    enum {
        N = 300
    };
    for (uint32_t d = 0; d < N; d++) {
        char kv[16], k2[16];
        snprintf(kv, sizeof(kv), "v%03u", (d * 37) % 101);
        snprintf(k2, sizeof(k2), "w%u", d % 5);
        sc_index_token kt = {sc_slice_cstr(kv), 0};
        sc_index_token kk[2] = {{sc_slice_cstr(k2), 0}, {sc_slice_cstr("zz"), 1}};
        int64_t nv = -1000 + (int64_t)d * 30, mv = (int64_t)d;
        sc_index_field f[4] = {
            {.name = sc_slice_cstr("k"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
             .tokens = &kt,
             .n_tokens = d % 7 == 3 ? 0 : 1},
            {.name = sc_slice_cstr("n"),
             .kind = SC_FIELD_NUMERIC,
             .flags = SC_FIELD_DOCVALUES,
             .values = &nv,
             .n_values = 1},
            {.name = sc_slice_cstr("m"),
             .kind = SC_FIELD_NUMERIC,
             .flags = SC_FIELD_DOCVALUES,
             .values = &mv,
             .n_values = d == 5 ? 0 : 1},
            {.name = sc_slice_cstr("kk"),
             .kind = SC_FIELD_KEYWORD,
             .flags = SC_FIELD_DOCVALUES,
             .tokens = kk,
             .n_tokens = d == 10 ? 2 : 1},
        };
        char id[16];
        snprintf(id, sizeof(id), "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .fields = f, .n_fields = 4};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "dv", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "dv", &seg), SC_OK);
    sc_dv_sorted_set k, kk;
    sc_dv_numeric n, m;
    assert_int_equal(sc_dv_sorted_set_open(seg, sc_segment_field(seg, sc_slice_cstr("k")), &k),
                     SC_OK);
    assert_int_equal(sc_dv_sorted_set_open(seg, sc_segment_field(seg, sc_slice_cstr("kk")), &kk),
                     SC_OK);
    assert_int_equal(sc_dv_numeric_open(seg, sc_segment_field(seg, sc_slice_cstr("n")), &n), SC_OK);
    assert_int_equal(sc_dv_numeric_open(seg, sc_segment_field(seg, sc_slice_cstr("m")), &m), SC_OK);
    assert_true(k.single && n.single);
    assert_false(kk.single || m.single);
    assert_int_equal(sc_dv_sorted_set_n_ords(&k), 101);
    for (uint32_t d = 0; d < N; d++) {
        uint64_t ords[4];
        int64_t vals[4];
        char kv[16];
        snprintf(kv, sizeof(kv), "v%03u", (d * 37) % 101);
        size_t c = sc_dv_sorted_set_ords(&k, d, ords, 4);
        assert_int_equal(sc_dv_sorted_set_count(&k, d), d % 7 == 3 ? 0 : 1);
        assert_int_equal(c, d % 7 == 3 ? 0 : 1);
        if (c) {
            assert_true(sc_slice_eq(sc_dv_sorted_set_term(&k, ords[0]), sc_slice_cstr(kv)));
            uint64_t o;
            assert_true(sc_dv_sorted_set_lookup(&k, sc_slice_cstr(kv), &o));
            assert_int_equal(o, ords[0]);
        }
        assert_int_equal(sc_dv_numeric_count(&n, d), 1);
        assert_int_equal(sc_dv_numeric_get(&n, d, vals, 4), 1);
        assert_int_equal(vals[0], -1000 + (int64_t)d * 30);
        assert_int_equal(sc_dv_numeric_get(&m, d, vals, 4), d == 5 ? 0 : 1);
        if (d != 5)
            assert_int_equal(vals[0], d);
        assert_int_equal(sc_dv_sorted_set_ords(&kk, d, ords, 4), d == 10 ? 2 : 1);
    }
    assert_int_equal(sc_dv_numeric_get(&n, N, (int64_t[1]){0}, 1), 0);
    assert_int_equal(sc_dv_sorted_set_count(&k, N), 0);
    /* the bulk reads of aggregations agree with the per-doc ones (every third doc) */
    uint32_t docs[N];
    int64_t bv[N];
    uint32_t bo[N], counts[102] = {0}, kcounts[8] = {0};
    size_t nd = 0;
    for (uint32_t d = 0; d < N; d += 3)
        docs[nd++] = d;
    assert_true(sc_dv_numeric_is_single(&n) && sc_dv_sorted_set_is_single(&k));
    assert_false(sc_dv_sorted_set_is_single(&kk));
    sc_dv_numeric_get_single_batch(&n, docs, nd, bv);
    sc_dv_sorted_set_single_batch(&k, docs, nd, bo);
    sc_dv_sorted_set_count_batch(&k, docs, nd, counts);
    sc_dv_sorted_set_count_batch(&kk, docs, nd, kcounts);
    uint32_t expect[102] = {0}, kexpect[8] = {0};
    for (size_t i = 0; i < nd; i++) {
        uint64_t ords[4];
        assert_int_equal(bv[i], -1000 + (int64_t)docs[i] * 30);
        size_t c = sc_dv_sorted_set_ords(&k, docs[i], ords, 4);
        assert_int_equal(bo[i], c ? ords[0] + 1 : 0);
        expect[c ? ords[0] + 1 : 0]++;
        c = sc_dv_sorted_set_ords(&kk, docs[i], ords, 4);
        for (size_t j = 0; j < c; j++)
            kexpect[ords[j] + 1]++;
    }
    assert_memory_equal(counts, expect, sizeof counts);
    assert_memory_equal(kcounts, kexpect, sizeof kcounts);
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* Long postings (up to 40,000 docs: 312 blocks, 10 second-level groups): advance with short
 * and long jumps, advance_shallow and the window impact bound against a model. */
static void test_two_level_skips(void **state)
{
    (void)state;
    t_seed("two_level_skips");
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    enum {
        N = 40000,
        T = 4
    };
    static const char *names[T] = {"a", "b", "c", "d"};
    static uint8_t has[T][N], freq[T][N];
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < N; d++) {
        sc_index_token toks[4 * 8];
        uint32_t n = 0;
        for (int t = 0; t < T; t++) {
            /* a: every doc; b: every third; c: half at random; d: runs of 1000 docs */
            has[t][d] = t == 0 || (t == 1 && d % 3 == 0) || (t == 2 && t_below(2)) ||
                        (t == 3 && (d / 1000) % 2 == 0);
            freq[t][d] = has[t][d] ? (uint8_t)(1 + t_below(t_below(10) == 0 ? 8 : 2)) : 0;
            for (uint32_t k = 0; k < freq[t][d]; k++, n++)
                toks[n] = (sc_index_token){sc_slice_cstr(names[t]), n};
        }
        sc_index_field f = {.name = sc_slice_cstr("t"),
                            .kind = SC_FIELD_TEXT,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS,
                            .tokens = toks,
                            .n_tokens = n,
                            .length = n};
        char id[16];
        snprintf(id, sizeof(id), "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .fields = &f, .n_fields = 1};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "l", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "l", &seg), SC_OK);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("t"));
    const uint8_t *norms = sc_segment_norms(seg, fi);
    for (int t = 0; t < T; t++) {
        sc_term_info ti;
        bool found;
        assert_int_equal(sc_terms_lookup(seg, fi, sc_slice_cstr(names[t]), &ti, &found), SC_OK);
        assert_true(found);
        sc_postings p;
        sc_postings_init(&p);
        sc_postings_impact all = {0, 255};
        for (uint32_t d = 0; d < N; d++)
            if (has[t][d]) {
                if (freq[t][d] > all.max_freq)
                    all.max_freq = freq[t][d];
                if (norms[d] < all.min_norm)
                    all.min_norm = norms[d];
            }
        for (int round = 0; round < 20; round++) {
            assert_int_equal(sc_postings_reset(&p, seg, fi, &ti, SC_POSTINGS_FREQS), SC_OK);
            sc_postings_impact tim = sc_postings_term_impact(&p);
            assert_int_equal(tim.max_freq, all.max_freq);
            assert_int_equal(tim.min_norm, all.min_norm);
            uint32_t cur = 0;
            bool started = false;
            for (;;) {
                uint32_t span = t_below(3) == 0 ? 20000 : t_below(2) ? 5000 : 300;
                uint32_t target = (started ? cur + 1 : 0) + t_below(span);
                /* shallow first: the block end and the window bound up to a random upto */
                uint32_t up = sc_postings_advance_shallow(&p, target);
                uint32_t expect = target;
                while (expect < N && !has[t][expect])
                    expect++;
                if (expect >= N) {
                    assert_int_equal(up, SC_POSTINGS_END);
                } else {
                    assert_true(up >= expect && up < N && has[t][up]);
                    uint32_t upto = target + t_below(30000);
                    sc_postings_impact w = sc_postings_max_impact_upto(&p, upto);
                    for (uint32_t d = expect; d < N && d <= upto; d++)
                        if (has[t][d]) {
                            assert_true(w.max_freq >= freq[t][d]);
                            assert_true(w.min_norm <= norms[d]);
                        }
                }
                uint32_t got = sc_postings_advance(&p, target);
                assert_int_equal(got, expect < N ? expect : SC_POSTINGS_END);
                if (got == SC_POSTINGS_END)
                    break;
                assert_int_equal(sc_postings_freq(&p), freq[t][got]);
                cur = got;
                started = true;
            }
            assert_int_equal(sc_postings_status(&p), SC_OK);
        }
    }
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* Many threads read one segment at once, each with its own cursors; results equal the
 * single-threaded model (run under ASan/TSan-like conditions in the asan build). */
typedef struct reader_arg {
    const sc_segment *seg;
    uint64_t acc;
    sc_status st;
} reader_arg;

static void *reader_main(void *p)
{
    reader_arg *a = p;
    for (int r = 0; r < 3 && a->st == SC_OK; r++)
        a->st = t_read_all(a->seg, &a->acc);
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    t_seed("concurrent_readers");
    t_corpus c;
    t_corpus_make(&c, 2000);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < c.n_docs; d++)
        assert_int_equal(t_add_doc(b, &c, d), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, "c", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "c", &seg), SC_OK);
    reader_arg one = {seg, 0, SC_OK};
    reader_main(&one);
    assert_int_equal(one.st, SC_OK);
    pthread_t th[4];
    reader_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (reader_arg){seg, 0, SC_OK};
        sc_segment_ref(seg);
        assert_int_equal(pthread_create(&th[i], NULL, reader_main, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].st, SC_OK);
        assert_int_equal(args[i].acc, one.acc);
        sc_segment_unref(seg);
    }
    sc_segment_unref(seg);
    t_corpus_free(&c);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* Positions decoded from packed groups of 128 deltas: a term in 300 docs (three postings
 * blocks) with freqs from 1 to 300 (docs spanning several position groups and group
 * boundaries, a tail of varints), read back in random orders of docs (every doc, skips, the
 * same doc twice) with room for 8 or more and with less room than the freq; every other
 * round reads in place where it can (sc_postings_positions_prepare and _view). */
static void test_positions_across_groups(void **state)
{
    (void)state;
    t_seed("positions_across_groups");
    enum {
        N = 300,
        MAXF = 300
    };
    static uint32_t freq[N], pos[N][MAXF];
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    static sc_index_token toks[MAXF + 1];
    for (uint32_t d = 0; d < N; d++) {
        /* mostly short docs, some long ones (up to MAXF), gaps up to 1000 */
        freq[d] = t_below(10) == 0 ? 1 + t_below(MAXF) : 1 + t_below(8);
        uint32_t p = t_below(3);
        for (uint32_t k = 0; k < freq[d]; k++) {
            pos[d][k] = p;
            toks[k] = (sc_index_token){sc_slice_cstr("x"), p};
            p += 1 + (t_below(4) == 0 ? t_below(1000) : t_below(3));
        }
        toks[freq[d]] = (sc_index_token){sc_slice_cstr("y"), p};
        sc_index_field f = {.name = sc_slice_cstr("t"),
                            .kind = SC_FIELD_TEXT,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_POSITIONS | SC_FIELD_NORMS,
                            .tokens = toks,
                            .n_tokens = freq[d] + 1,
                            .length = freq[d] + 1};
        char id[16];
        snprintf(id, sizeof(id), "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .fields = &f, .n_fields = 1};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "g", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "g", &seg), SC_OK);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("t"));
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, fi, sc_slice_cstr("x"), &ti, &found), SC_OK);
    assert_true(found);
    static uint32_t out[MAXF + 8];
    size_t n_viewed = 0;
    for (int rep = 0; rep < 200; rep++) {
        sc_postings p;
        sc_postings_init(&p);
        assert_int_equal(sc_postings_reset(&p, seg, fi, &ti, SC_POSTINGS_POSITIONS), SC_OK);
        uint32_t skip = rep == 0 ? 0 : t_below(6); /* rep 0 reads every doc */
        for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END;
             d = skip && t_below(skip) ? sc_postings_advance(&p, d + 1 + t_below(skip))
                                       : sc_postings_next(&p)) {
            assert_true(d < N);
            assert_int_equal(sc_postings_freq(&p), freq[d]);
            if (t_below(3) == 0)
                continue; /* positions not read: later docs must still find theirs */
            const uint32_t *sums;
            uint32_t adj;
            if (rep % 2 && (sc_postings_positions_view(&p, &sums, &adj) ||
                            (sc_postings_positions_prepare(&p) &&
                             sc_postings_positions_view(&p, &sums, &adj)))) {
                /* in place (odd reps): decoded groups viewed without a copy */
                for (size_t k = 0; k < freq[d]; k++)
                    assert_int_equal(sums[k] + adj, pos[d][k]);
                n_viewed++;
                continue;
            }
            size_t room = t_below(4) == 0 ? t_below(freq[d] + 1) : MAXF + 8;
            size_t n = sc_postings_positions(&p, out, room);
            assert_int_equal(n, freq[d] < room ? freq[d] : room);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(out[k], pos[d][k]);
            if (t_below(4) == 0) { /* the same doc again */
                assert_int_equal(sc_postings_positions(&p, out, MAXF + 8), freq[d]);
                for (size_t k = 0; k < freq[d]; k++)
                    assert_int_equal(out[k], pos[d][k]);
            }
        }
        assert_int_equal(sc_postings_status(&p), SC_OK);
    }
    assert_true(n_viewed > 1000);
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* Dense terms with rare long gaps are stored as bitset blocks (smaller than packed gaps): every
 * doc comes back through next and advance, with the freqs. */
static void test_dense_bitset_blocks(void **state)
{
    (void)state;
    t_seed("dense_bitset_blocks");
    enum {
        N = 5000
    };
    static bool has[N];
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < N; d++) {
        /* runs of present docs with holes of 1..3 and now and then one of 20..60 */
        has[d] = t_below(8) != 0;
        if (t_below(100) == 0) {
            uint32_t hole = 20 + t_below(41);
            for (uint32_t k = 0; k < hole && d < N; k++, d++)
                has[d] = false;
            d--;
        }
    }
    for (uint32_t d = 0; d < N; d++) {
        sc_index_token toks[3] = {
            {sc_slice_cstr("z"), 0}, {sc_slice_cstr("d"), 1}, {sc_slice_cstr("d"), 2}};
        sc_index_field f = {.name = sc_slice_cstr("t"),
                            .kind = SC_FIELD_TEXT,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_POSITIONS | SC_FIELD_NORMS,
                            .tokens = toks,
                            .n_tokens = has[d] ? 1 + 1 + d % 2 : 1,
                            .length = 3};
        char id[16];
        snprintf(id, sizeof(id), "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .fields = &f, .n_fields = 1};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "b", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "b", &seg), SC_OK);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("t"));
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, fi, sc_slice_cstr("d"), &ti, &found), SC_OK);
    assert_true(found);
    for (int rep = 0; rep < 50; rep++) {
        sc_postings p;
        sc_postings_init(&p);
        assert_int_equal(sc_postings_reset(&p, seg, fi, &ti, SC_POSTINGS_FREQS), SC_OK);
        uint32_t want = 0;
        while (want < N && !has[want])
            want++;
        for (uint32_t d = sc_postings_next(&p); d != SC_POSTINGS_END;) {
            assert_int_equal(d, want);
            assert_int_equal(sc_postings_freq(&p), 1 + d % 2);
            uint32_t target = rep && t_below(3) == 0 ? d + 1 + t_below(300) : d + 1;
            want = target;
            while (want < N && !has[want])
                want++;
            d = target == d + 1 ? sc_postings_next(&p) : sc_postings_advance(&p, target);
        }
        assert_true(want >= N); /* every doc was seen */
        assert_int_equal(sc_postings_status(&p), SC_OK);
    }
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norms_match_lucene),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_open_missing),
        cmocka_unit_test(test_builder_rejects),
        cmocka_unit_test(test_roundtrip_small),
        cmocka_unit_test(test_roundtrip_large),
        cmocka_unit_test(test_positions_out_of_order),
        cmocka_unit_test(test_positions_across_groups),
        cmocka_unit_test(test_dense_bitset_blocks),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_single_valued_doc_values),
        cmocka_unit_test(test_two_level_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
