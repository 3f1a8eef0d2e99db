/* Tests for the sorted-set doc values' term offsets (src/index/docvalues.c, format v11: a u32
 * base per 16 ordinals and a bit-packed offset from it per ordinal): every term read back and
 * looked up at every block boundary (1 to 1,000 ordinals, lengths 1 to 300 bytes, multi- and
 * single-valued), the section smaller than the u32-per-ordinal layout of v10, and a v10
 * segment (checked-in fixture) still read with its terms. Random lengths print their seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/docvalues.h"
#include "index/internal.h"
#include "index/segment.h"
#include "readall.h"

static int cmp_str(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = strlen(x), ly = strlen(y);
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* A segment of n_docs docs whose keyword field "k" holds n_terms distinct random terms (doc d
 * has term d % n_terms, and term (d * 7) % n_terms too when multi); checks every term. */
static void check_case(uint32_t n_terms, bool multi)
{
    char dir[64];
    t_tmpdir(dir, sizeof dir);
    char **terms = calloc(n_terms, sizeof(char *));
    assert_non_null(terms);
    uint64_t term_bytes = 0;
    for (uint32_t i = 0; i < n_terms; i++) {
        size_t len = 1 + t_below(i % 5 == 0 ? 300 : 12);
        terms[i] = malloc(len + 16);
        int p = snprintf(terms[i], 16, "%u-", i); /* distinct */
        for (size_t j = (size_t)p; j < len + (size_t)p; j++)
            terms[i][j] = (char)('a' + t_below(26));
        terms[i][len + (size_t)p] = 0;
        term_bytes += len + (size_t)p;
    }
    uint32_t n_docs = n_terms + 5;
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < n_docs; d++) {
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        sc_index_token kw[2] = {{sc_slice_cstr(terms[d % n_terms]), 0},
                                {sc_slice_cstr(terms[(d * 7) % n_terms]), 0}};
        sc_index_field f = {.name = sc_slice_cstr("k"),
                            .kind = SC_FIELD_KEYWORD,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                            .tokens = kw,
                            .n_tokens = multi ? 2 : 1};
        sc_index_doc doc = {
            .id = sc_slice_cstr(id), .source = sc_slice_cstr("{}"), .fields = &f, .n_fields = 1};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "s", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "s", &seg), SC_OK);
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("k"));
    assert_non_null(fi);
    sc_dv_sorted_set dv;
    assert_int_equal(sc_dv_sorted_set_open(seg, fi, &dv), SC_OK);
    assert_int_equal(sc_dv_sorted_set_n_ords(&dv), n_terms);
    qsort(terms, n_terms, sizeof(char *), cmp_str);
    for (uint32_t o = 0; o < n_terms; o++) {
        sc_slice t = sc_dv_sorted_set_term(&dv, o);
        if (!sc_slice_eq(t, sc_slice_cstr(terms[o])))
            fail_msg("n_terms %u: ord %u reads back wrong", n_terms, o);
        uint64_t back;
        assert_true(sc_dv_sorted_set_lookup(&dv, t, &back));
        assert_int_equal(back, o);
    }
    assert_int_equal(sc_dv_sorted_set_term(&dv, n_terms).len, 0);
    if (!multi) { /* the batch read of ords (+ 1), runs of consecutive docs and not */
        uint32_t *bd = calloc(n_docs, sizeof *bd), *bo = calloc(n_docs, sizeof *bo);
        assert_non_null(bd);
        assert_non_null(bo);
        for (uint32_t start = 0; start < 9 && start < n_docs; start++)
            for (int rep = 0; rep < 2; rep++) {
                uint32_t n = n_docs - start;
                for (uint32_t i = 0; i < n; i++)
                    bd[i] = start + i;
                if (rep && n > 2)
                    bd[2] = bd[1]; /* the ends still n - 1 apart, not a run */
                sc_dv_sorted_set_single_batch(&dv, bd, n, bo);
                for (uint32_t i = 0; i < n; i++) {
                    uint64_t o;
                    assert_int_equal(sc_dv_sorted_set_ords(&dv, bd[i], &o, 1), 1);
                    if (bo[i] != o + 1)
                        fail_msg("n_terms %u: doc %u batch ord+1 %u, want %llu", n_terms, bd[i],
                                 bo[i], (unsigned long long)o + 1);
                }
            }
        free(bd);
        free(bo);
    }
    /* the section is exactly the v11 layout; its term offsets are smaller than v10's u32 per
     * ordinal + 1 from 32 ordinals on */
    const uint8_t *h = sc__segment_bytes(seg).ptr + fi->dvs_off;
    unsigned rel_bits = h[19], ord_bits = h[16], off_bits = h[17];
    uint64_t n_values = sc__ld64(h + 8);
    uint64_t offs = sc__packed_bytes((uint64_t)n_terms + 1, rel_bits) +
                    ((uint64_t)n_terms / SC__DV_TERM_BLOCK + 1) * 4;
    uint64_t docs = h[18] == SC__DV_MULTI ? sc__packed_bytes((uint64_t)n_docs + 1, off_bits) +
                                                sc__packed_bytes(n_values, ord_bits)
                                          : sc__packed_bytes(n_docs, ord_bits);
    assert_int_equal(fi->dvs_len, SC__DV_HEADER_BYTES + offs + term_bytes + docs);
    assert_true(rel_bits <= 32);
    if (n_terms >= 32)
        assert_true(offs < ((uint64_t)n_terms + 1) * 4);
    uint64_t acc = 0;
    assert_int_equal(t_read_all(seg, &acc), SC_OK);
    sc_segment_unref(seg);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
    for (uint32_t i = 0; i < n_terms; i++)
        free(terms[i]);
    free(terms);
}

static void test_term_offsets_roundtrip(void **state)
{
    (void)state;
    t_seed("docvalues_test");
    const uint32_t sizes[] = {1, 2, 15, 16, 17, 31, 32, 33, 255, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_case(sizes[i], false);
        check_case(sizes[i], true);
    }
}

/* tests/fixtures/segment/v10-small.seg: make_segment_seeds' small.seg as format v10 wrote it
 * (u32 term offsets): 40 docs, `_id` = the doc number, `tag` = WORDS[(d * 3) % 7]. */
static void test_reads_format_v10(void **state)
{
    (void)state;
    static const char *const words[] = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"};
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/segment/v10-small.seg", SCRY_SOURCE_DIR);
    uint8_t *bytes;
    size_t len;
    assert_int_equal(sc_file_read_all(path, &bytes, &len), SC_OK);
    assert_int_equal(sc__ld32(bytes + 8), 10);
    sc_segment *seg;
    sc_index_error err;
    assert_int_equal(sc_segment_open_bytes(sc_slice_make(bytes, len), "v10", true, &seg, &err),
                     SC_OK);
    assert_int_equal(sc_segment_n_docs(seg), 40);
    sc_dv_sorted_set tag, id;
    assert_int_equal(sc_dv_sorted_set_open(seg, sc_segment_field(seg, sc_slice_cstr("tag")), &tag),
                     SC_OK);
    assert_int_equal(sc_dv_sorted_set_open(seg, sc_segment_field(seg, sc_slice_cstr("_id")), &id),
                     SC_OK);
    assert_int_equal(sc_dv_sorted_set_n_ords(&tag), 7);
    assert_int_equal(sc_dv_sorted_set_n_ords(&id), 40);
    for (uint32_t d = 0; d < 40; d++) {
        uint64_t o;
        char want[16];
        assert_int_equal(sc_dv_sorted_set_ords(&tag, d, &o, 1), 1);
        assert_true(sc_slice_eq(sc_dv_sorted_set_term(&tag, o), sc_slice_cstr(words[(d * 3) % 7])));
        assert_int_equal(sc_dv_sorted_set_ords(&id, d, &o, 1), 1);
        snprintf(want, sizeof want, "%u", d);
        assert_true(sc_slice_eq(sc_dv_sorted_set_term(&id, o), sc_slice_cstr(want)));
    }
    uint64_t acc = 0;
    assert_int_equal(t_read_all(seg, &acc), SC_OK);
    sc_segment_unref(seg);
    free(bytes);
}

/* Batch-reads docs[0..n) and checks every value against want (by doc). */
static void check_batch(const sc_dv_numeric *dv, const uint32_t *docs, size_t n,
                        const int64_t *want, unsigned w, const char *what)
{
    int64_t got[1024];
    assert_true(n <= 1024);
    sc_dv_numeric_get_single_batch(dv, docs, n, got);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[docs[i]])
            fail_msg("width %u, %s: doc %u batch %lld, want %lld", w, what, docs[i],
                     (long long)got[i], (long long)want[docs[i]]);
}

/* sc_dv_numeric_get_single_batch agrees with sc_dv_numeric_get at every packed width 1..64
 * (the run path's one copy per width up to 32, its general copy up to 56, the no-branch path
 * and the general one for 57..64), with and without a gcd, for a window of consecutive docs,
 * runs starting at every offset within a byte group with heads and tails, docs that look like
 * a run by their ends but repeat one, dense windows of several runs (with repeats), and
 * scattered docs in random order; and every value lies
 * in sc_dv_numeric_range's range. Random values print their seed (t_seed above). */
static void test_numeric_batch_widths(void **state)
{
    (void)state;
    t_seed("docvalues_test batch");
    enum {
        N = 700
    };
    for (unsigned w = 1; w <= 64; w++) {
        for (int g = 0; g < 2; g++) {
            uint64_t gcd = g && w <= 56 ? 3 : 1;
            uint64_t top = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
            int64_t base = w == 64 ? INT64_MIN : -12345;
            char dir[64];
            t_tmpdir(dir, sizeof dir);
            sc_segment_builder *b;
            assert_int_equal(sc_segment_builder_new(&b), SC_OK);
            int64_t want[N];
            for (uint32_t d = 0; d < N; d++) {
                /* doc 0 at the top of the width, doc 1 at its bottom: exactly w bits */
                uint64_t r = d == 0 ? top : d == 1 ? 0 : t_rand() & top;
                want[d] = (int64_t)((uint64_t)base + r * gcd);
                char id[16];
                snprintf(id, sizeof id, "%u", d);
                sc_index_field f = {.name = sc_slice_cstr("n"),
                                    .kind = SC_FIELD_NUMERIC,
                                    .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                                    .values = &want[d],
                                    .n_values = 1};
                sc_index_doc doc = {.id = sc_slice_cstr(id),
                                    .source = sc_slice_cstr("{}"),
                                    .fields = &f,
                                    .n_fields = 1};
                assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
            }
            assert_int_equal(sc_segment_builder_write(b, dir, "s", NULL), SC_OK);
            sc_segment_builder_free(b);
            sc_segment *seg;
            assert_int_equal(sc_segment_open(dir, "s", &seg), SC_OK);
            sc_dv_numeric dv;
            assert_int_equal(
                sc_dv_numeric_open(seg, sc_segment_field(seg, sc_slice_cstr("n")), &dv), SC_OK);
            assert_true(sc_dv_numeric_is_single(&dv));
            assert_int_equal(dv.bits, w); /* the width this case is about */
            uint32_t docs[N];
            int64_t got[N];
            for (int order = 0; order < 2; order++) {
                for (uint32_t d = 0; d < N; d++)
                    docs[d] = d;
                for (uint32_t d = N - 1; order && d > 0; d--) { /* a shuffle */
                    uint32_t j = t_below(d + 1), t = docs[d];
                    docs[d] = docs[j];
                    docs[j] = t;
                }
                sc_dv_numeric_get_single_batch(&dv, docs, N, got);
                for (uint32_t i = 0; i < N; i++) {
                    int64_t one;
                    assert_int_equal(sc_dv_numeric_get(&dv, docs[i], &one, 1), 1);
                    assert_int_equal(one, want[docs[i]]);
                    if (got[i] != want[docs[i]])
                        fail_msg("width %u gcd %llu: doc %u batch %lld, want %lld", w,
                                 (unsigned long long)gcd, docs[i], (long long)got[i],
                                 (long long)want[docs[i]]);
                }
            }
            static const uint32_t starts[] = {0, 1, 3, 7, 8, 13, 250};
            static const uint32_t lens[] = {16, 17, 23, 64, 301};
            for (size_t si = 0; si < sizeof starts / sizeof *starts; si++)
                for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
                    uint32_t n = lens[li];
                    for (uint32_t i = 0; i < n; i++)
                        docs[i] = starts[si] + i;
                    check_batch(&dv, docs, n, want, w, "run");
                    docs[2] = docs[1]; /* first and last still n - 1 apart: not a run */
                    check_batch(&dv, docs, n, want, w, "run with a repeat");
                }
            /* dense windows of several runs (the runs of 64 or more unpacked one by one):
             * two long runs with a gap; a long run, a short one, a long one; short runs
             * only; a long run with a repeat inside it; a run whose binary search lands on
             * a doc that repeats */
            for (int shape = 0; shape < 5; shape++) {
                uint32_t n = 0, d = (uint32_t)shape;
                if (shape == 0) {
                    for (uint32_t i = 0; i < 150; i++)
                        docs[n++] = d++;
                    d += 20;
                    for (uint32_t i = 0; i < 200; i++)
                        docs[n++] = d++;
                } else if (shape == 1) {
                    for (uint32_t r = 0; r < 3; r++, d += 3)
                        for (uint32_t i = 0; i < (r == 1 ? 10u : 100u); i++)
                            docs[n++] = d++;
                } else if (shape == 2) {
                    for (uint32_t i = 0; i < 300; i++)
                        docs[n++] = d + i + i / 5; /* runs of 5 */
                } else {
                    for (uint32_t i = 0; i < 200; i++)
                        docs[n++] = d++;
                    docs[shape == 3 ? 100 : 127] = docs[shape == 3 ? 99 : 126];
                    d += 9;
                    for (uint32_t i = 0; i < 100; i++)
                        docs[n++] = d++;
                }
                check_batch(&dv, docs, n, want, w, "runs");
            }
            int64_t lo;
            uint64_t span;
            if (sc_dv_numeric_range(&dv, &lo, &span)) {
                for (uint32_t d = 0; d < N; d++)
                    assert_true((uint64_t)want[d] - (uint64_t)lo <= span);
            } else {
                assert_true(w > 50); /* fits in an int64 up to here */
            }
            sc_segment_unref(seg);
            assert_int_equal(sc_dir_remove_all(dir), SC_OK);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_term_offsets_roundtrip),
        cmocka_unit_test(test_reads_format_v10),
        cmocka_unit_test(test_numeric_batch_widths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
