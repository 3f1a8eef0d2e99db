/* Tests for the in-memory doc values readers (src/index/docvalues_mem.c, used by runtime
 * fields): random per-doc values (none, one or several, duplicates, unordered terms) read back
 * through every reader function and batch loop against the model. The seed is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/arena.h"
#include "index/docvalues.h"

static unsigned seed;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void numeric_case(uint32_t n_docs, bool single, uint64_t *s)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    int64_t *vals = sc_arena_alloc(&a, ((size_t)n_docs * 4 + 1) * sizeof *vals);
    uint32_t *offs = sc_arena_alloc(&a, ((size_t)n_docs + 3) * sizeof *offs);
    int64_t *model = malloc(((size_t)n_docs * 4 + 1) * sizeof *model);
    assert_non_null(vals);
    size_t n = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        offs[d] = (uint32_t)n;
        size_t k = single ? 1 : rnd(s) % 4;
        for (size_t i = 0; i < k; i++)
            vals[n + i] = (int64_t)rnd(s) >> (rnd(s) % 64);
        qsort(vals + n, k, sizeof *vals, cmp_i64);
        n += k;
    }
    offs[n_docs] = (uint32_t)n;
    memcpy(model, vals, n * sizeof *model);
    sc_dv_numeric dv;
    sc_dv_numeric_wrap(n_docs, vals, n, single ? NULL : offs, &dv);
    assert_int_equal(sc_dv_numeric_is_single(&dv), single);
    size_t at = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        int64_t got[8];
        uint32_t c = sc_dv_numeric_count(&dv, d);
        size_t k = sc_dv_numeric_get(&dv, d, got, 8);
        assert_int_equal(c, k);
        for (size_t i = 0; i < k; i++)
            assert_true(got[i] == model[at + i]);
        at += k;
    }
    assert_int_equal(at, n);
    if (single) {
        uint32_t docs[3] = {0, n_docs / 2, n_docs - 1};
        int64_t out[3];
        sc_dv_numeric_get_single_batch(&dv, docs, 3, out);
        for (int i = 0; i < 3; i++)
            assert_true(out[i] == model[docs[i]]);
    }
    free(model);
    sc_arena_fini(&a);
}

static void test_numeric(void **state)
{
    (void)state;
    uint64_t s = seed | 1;
    for (uint32_t n = 1; n < 300; n += 37) {
        numeric_case(n, true, &s);
        numeric_case(n, false, &s);
    }
}

static void sorted_case(uint32_t n_docs, uint32_t n_terms, uint64_t *s)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    static char names[64][8];
    for (uint32_t t = 0; t < n_terms; t++)
        snprintf(names[t], sizeof names[t], "t%02u", (unsigned)(n_terms - t)); /* unordered */
    sc_slice *terms = malloc(((size_t)n_docs * 4 + 1) * sizeof *terms);
    uint32_t *offs = malloc(((size_t)n_docs + 1) * sizeof *offs);
    bool *has = calloc((size_t)n_docs * 64, 1);
    size_t n = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        offs[d] = (uint32_t)n;
        size_t k = rnd(s) % 4;
        for (size_t i = 0; i < k; i++) {
            uint32_t t = (uint32_t)(rnd(s) % n_terms);
            terms[n++] = sc_slice_cstr(names[t]);
            has[(size_t)d * 64 + t] = true;
        }
    }
    offs[n_docs] = (uint32_t)n;
    sc_dv_sorted_set dv;
    assert_int_equal(sc_dv_sorted_set_build(&a, n_docs, terms, offs, &dv), SC_OK);
    /* the term table is sorted and distinct */
    for (uint64_t o = 1; o < sc_dv_sorted_set_n_ords(&dv); o++)
        assert_true(sc_slice_cmp(sc_dv_sorted_set_term(&dv, o - 1), sc_dv_sorted_set_term(&dv, o)) <
                    0);
    uint32_t *counts = calloc(sc_dv_sorted_set_n_ords(&dv) + 1, sizeof *counts);
    uint32_t *model = calloc(sc_dv_sorted_set_n_ords(&dv) + 1, sizeof *model);
    for (uint32_t d = 0; d < n_docs; d++) {
        uint64_t ords[64];
        size_t k = sc_dv_sorted_set_ords(&dv, d, ords, 64);
        assert_int_equal(k, sc_dv_sorted_set_count(&dv, d));
        size_t want = 0;
        for (uint32_t t = 0; t < n_terms; t++)
            want += has[(size_t)d * 64 + t];
        assert_int_equal(k, want);
        for (size_t i = 0; i < k; i++) {
            if (i)
                assert_true(ords[i - 1] < ords[i]);
            sc_slice term = sc_dv_sorted_set_term(&dv, ords[i]);
            uint64_t back;
            assert_true(sc_dv_sorted_set_lookup(&dv, term, &back));
            assert_true(back == ords[i]);
            assert_int_equal(term.len, 3);
            const uint8_t *tp = term.ptr;
            uint32_t t = n_terms - (uint32_t)((tp[1] - '0') * 10 + (tp[2] - '0'));
            assert_true(has[(size_t)d * 64 + t]);
            model[ords[i] + 1]++;
        }
        if (!k)
            model[0]++;
        sc_dv_sorted_set_count_batch(&dv, &d, 1, counts);
    }
    assert_memory_equal(counts, model, (sc_dv_sorted_set_n_ords(&dv) + 1) * sizeof *counts);
    free(counts);
    free(model);
    free(terms);
    free(offs);
    free(has);
    sc_arena_fini(&a);
}

static void test_sorted_set(void **state)
{
    (void)state;
    uint64_t s = seed | 1;
    for (uint32_t n = 1; n < 300; n += 41)
        for (uint32_t t = 1; t <= 40; t += 13)
            sorted_case(n, t, &s);
    /* single-valued: at most one term per doc */
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_slice terms[3] = {sc_slice_cstr("b"), sc_slice_cstr("a"), sc_slice_cstr("b")};
    uint32_t offs[5] = {0, 1, 1, 2, 3};
    sc_dv_sorted_set dv;
    assert_int_equal(sc_dv_sorted_set_build(&a, 4, terms, offs, &dv), SC_OK);
    assert_true(sc_dv_sorted_set_is_single(&dv));
    uint32_t docs[4] = {0, 1, 2, 3}, out[4];
    sc_dv_sorted_set_single_batch(&dv, docs, 4, out);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 1);
    assert_int_equal(out[3], 2);
    sc_arena_fini(&a);
}

int main(void)
{
    const char *e = getenv("DV_MEM_SEED");
    seed = e ? (unsigned)strtoul(e, NULL, 10) : (unsigned)time(NULL);
    printf("docvalues_mem seed %u (DV_MEM_SEED)\n", seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric),
        cmocka_unit_test(test_sorted_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
