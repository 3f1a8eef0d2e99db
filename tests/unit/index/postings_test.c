/* Tests of the postings cursor's bulk paths (src/index/postings.c) against a brute-force model:
 * sc_postings_filter (a conjunction's probe: packed, bitset, run and tail blocks, with and
 * without frequencies, interleaved with advance or only_filter) and sc_postings_into_bitset over
 * random windows (aligned and unaligned bases, the byte-map path of dense blocks) and
 * sc_postings_take_upto (a window's docs, between advances and probes). Terms of
 * densities from 95% to 0.2% give every block kind; a seeded PRNG (seed printed, SCRY_SEED reruns).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/bitset.h"
#include "common.h"
#include "index/postings.h"
#include "index/segment.h"
#include "index/terms.h"

enum {
    N = 60000,
    T = 9
};
/* dense terms get bitset or width-1 packed blocks, mid ones packed, "run" run blocks, "few"
 * one tail block without a skip table, "x256" exactly two full blocks */
static const char *names[T] = {"d95", "d60", "d30", "d12", "d3", "d02", "run", "few", "x256"};
static uint8_t has[T][N], freq[T][N];
static sc_segment *seg;
static char dir[64];

static bool member(int t, uint32_t d)
{
    switch (t) {
    case 0: return t_below(100) < 95;
    case 1: return t_below(100) < 60;
    case 2: return t_below(100) < 30;
    case 3: return t_below(100) < 12;
    case 4: return t_below(1000) < 30;
    case 5: return t_below(1000) < 2;
    case 6: return (d / 700) % 3 == 0;
    case 7: return d % 1111 == 5 && d < 50 * 1111;
    default: return d % 200 == 7 && d < 256 * 200;
    }
}

static int setup(void **state)
{
    (void)state;
    t_seed("postings");
    t_tmpdir(dir, sizeof dir);
    sc_segment_builder *b;
    if (sc_segment_builder_new(&b) != SC_OK)
        return -1;
    for (uint32_t d = 0; d < N; d++) {
        sc_index_token toks[T * 8], ktoks[T];
        uint32_t n = 0, nk = 0;
        for (int t = 0; t < T; t++) {
            has[t][d] = member(t, d);
            freq[t][d] = has[t][d] ? (uint8_t)(1 + t_below(t_below(8) == 0 ? 8 : 2)) : 0;
            for (uint32_t k = 0; k < freq[t][d]; k++, n++)
                toks[n] = (sc_index_token){sc_slice_cstr(names[t]), n};
            if (has[t][d])
                ktoks[nk++] = (sc_index_token){sc_slice_cstr(names[t]), 0};
        }
        sc_index_field f[2] = {{.name = sc_slice_cstr("k"),
                                .kind = SC_FIELD_KEYWORD,
                                .flags = SC_FIELD_INDEXED,
                                .tokens = ktoks,
                                .n_tokens = nk},
                               {.name = sc_slice_cstr("t"),
                                .kind = SC_FIELD_TEXT,
                                .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS,
                                .tokens = toks,
                                .n_tokens = n,
                                .length = n}};
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .fields = f, .n_fields = 2};
        if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
            return -1;
    }
    if (sc_segment_builder_write(b, dir, "p", NULL) != SC_OK)
        return -1;
    sc_segment_builder_free(b);
    return sc_segment_open(dir, "p", &seg) == SC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sc_segment_unref(seg);
    return sc_dir_remove_all(dir) == SC_OK ? 0 : -1;
}

static void reset(sc_postings *p, const char *field, int t)
{
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr(field));
    assert_non_null(fi);
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, fi, sc_slice_cstr(names[t]), &ti, &found), SC_OK);
    assert_true(found);
    sc_postings_init(p);
    assert_int_equal(sc_postings_reset(p, seg, fi, &ti, SC_POSTINGS_FREQS), SC_OK);
}

/* First doc of term t at or after d (N if none). */
static uint32_t model_from(int t, uint32_t d)
{
    while (d < N && !has[t][d])
        d++;
    return d;
}

static void test_filter(void **state)
{
    (void)state;
    static const uint32_t per_mille[] = {500, 100, 20, 2};
    for (int field = 0; field < 2; field++) {
        bool text = field == 1;
        for (int t = 0; t < T; t++) {
            for (int round = 0; round < 12; round++) {
                sc_postings p;
                reset(&p, text ? "t" : "k", t);
                bool with_freqs = t_below(2);
                /* only filter calls: the cursor may end between blocks, no advance */
                bool only = t_below(3) == 0;
                uint32_t dens = per_mille[t_below(4)];
                uint32_t next = t_below(300); /* the smallest allowed candidate */
                uint32_t cand[128], keep[128], fr[128];
                for (;;) {
                    /* sometimes an advance between two probes */
                    if (!only && t_below(8) == 0 && next < N) {
                        uint32_t target = next + t_below(3000);
                        if (p.doc != SC_POSTINGS_END && target <= p.doc)
                            target = p.doc + 1; /* advance moves forward only */
                        uint32_t got = sc_postings_advance(&p, target);
                        uint32_t want = model_from(t, target);
                        assert_int_equal(got, want < N ? want : SC_POSTINGS_END);
                        if (got == SC_POSTINGS_END)
                            break;
                        next = target + 1;
                    }
                    size_t n = 0, max = 1 + t_below(128);
                    for (uint32_t d = next; d < N && n < max; d++)
                        if (t_below(1000) < dens)
                            cand[n++] = d;
                    if (n == 0)
                        break;
                    size_t m = sc_postings_filter(&p, cand, n, keep, with_freqs ? fr : NULL, only);
                    size_t k = 0;
                    for (size_t i = 0; i < n; i++) {
                        if (!has[t][cand[i]])
                            continue;
                        assert_true(k < m);
                        assert_int_equal(keep[k], i);
                        if (with_freqs)
                            assert_int_equal(fr[k], text ? freq[t][cand[i]] : 1);
                        k++;
                    }
                    assert_int_equal(k, m);
                    next = cand[n - 1] + 1;
                    if (only)
                        continue;
                    uint32_t want = model_from(t, cand[n - 1]);
                    assert_int_equal(p.doc, want < N ? want : SC_POSTINGS_END);
                    if (p.doc != SC_POSTINGS_END && text)
                        assert_int_equal(sc_postings_freq(&p), freq[t][p.doc]);
                }
                assert_int_equal(sc_postings_status(&p), SC_OK);
            }
        }
    }
}

/* sc_postings_take_upto: from a positioned cursor, the docs below random window ends (at most
 * `max`), with freqs; the cursor then on the last doc written or on a later doc with none
 * between; windows start where the last one ended, reached by advance or by a probe. */
static void test_take_upto(void **state)
{
    (void)state;
    for (int field = 0; field < 2; field++) {
        bool text = field == 1;
        for (int t = 0; t < T; t++) {
            for (int round = 0; round < 8; round++) {
                sc_postings p;
                reset(&p, text ? "t" : "k", t);
                uint32_t floor = t_below(500), docs[128], fr[128];
                while (floor < N) {
                    uint32_t upto = floor + 1 + t_below(t_below(4) == 0 ? 5000 : 400);
                    /* position on the first doc >= floor, unless the cursor is there */
                    if (!p.started || (p.doc != SC_POSTINGS_END && p.doc < floor)) {
                        if (t_below(4) == 0) {
                            uint32_t c = floor, keep[1];
                            sc_postings_filter(&p, &c, 1, keep, NULL, false);
                        } else {
                            sc_postings_advance(&p, floor);
                        }
                    }
                    uint32_t want_first = model_from(t, floor);
                    assert_int_equal(p.doc, want_first < N ? want_first : SC_POSTINGS_END);
                    if (p.doc == SC_POSTINGS_END)
                        break;
                    size_t max = t_below(3) == 0 ? 1 + t_below(128) : 128;
                    bool with_freqs = t_below(2);
                    size_t n = sc_postings_take_upto(&p, upto, docs, with_freqs ? fr : NULL, max);
                    size_t k = 0;
                    uint32_t d = floor;
                    for (; d < upto && d < N && k < max; d++) {
                        if (!has[t][d])
                            continue;
                        assert_true(k < n);
                        assert_int_equal(docs[k], d);
                        if (with_freqs)
                            assert_int_equal(fr[k], text ? freq[t][d] : 1);
                        k++;
                    }
                    assert_int_equal(n, k);
                    if (n == 0) {
                        floor = upto;
                        continue;
                    }
                    /* the cursor: on the last doc written, or on a later doc, none between */
                    uint32_t last = docs[n - 1];
                    if (p.doc != last) {
                        uint32_t want = model_from(t, last + 1);
                        assert_int_equal(p.doc, want < N ? want : SC_POSTINGS_END);
                    }
                    if (p.doc != SC_POSTINGS_END && text)
                        assert_int_equal(sc_postings_freq(&p), freq[t][p.doc]);
                    floor = last + 1;
                }
                assert_int_equal(sc_postings_status(&p), SC_OK);
            }
        }
    }
}

static void test_into_bitset(void **state)
{
    (void)state;
    sc_bitset bs;
    assert_int_equal(sc_bitset_init(&bs, 20000 + 128), SC_OK);
    for (int t = 0; t < T; t++) {
        for (int round = 0; round < 10; round++) {
            sc_postings p;
            reset(&p, "t", t);
            uint32_t cur = sc_postings_next(&p);
            while (cur != SC_POSTINGS_END) {
                /* base at or below the current doc, aligned or not */
                uint32_t base = cur - (t_below(2) ? cur % 64 : t_below(cur < 500 ? cur + 1 : 500));
                uint32_t upto = base + 1 + t_below(t_below(3) == 0 ? 20000 : 4096);
                if (upto > N)
                    upto = N;
                sc_bitset_clear_all(&bs);
                sc_postings_into_bitset(&p, upto, &bs, base);
                for (uint32_t d = base; d < upto; d++)
                    assert_int_equal(sc_bitset_test(&bs, d - base), d >= cur && has[t][d]);
                for (uint32_t d = upto - base; d < upto - base + 64; d++)
                    assert_false(sc_bitset_test(&bs, d));
                /* a window ending before the current doc leaves the cursor there */
                uint32_t want = model_from(t, upto > cur ? upto : cur);
                cur = want < N ? want : SC_POSTINGS_END;
                assert_int_equal(p.doc, cur);
                if (cur == SC_POSTINGS_END)
                    break;
                assert_int_equal(sc_postings_freq(&p), freq[t][cur]);
                /* sometimes a few single steps in between */
                for (uint32_t s = t_below(3); s > 0 && cur != SC_POSTINGS_END; s--) {
                    uint32_t got = sc_postings_next(&p);
                    want = model_from(t, cur + 1);
                    cur = want < N ? want : SC_POSTINGS_END;
                    assert_int_equal(got, cur);
                }
            }
            assert_int_equal(sc_postings_status(&p), SC_OK);
        }
    }
    sc_bitset_fini(&bs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_into_bitset),
        cmocka_unit_test(test_take_upto),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
