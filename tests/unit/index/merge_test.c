/* Merges: three segments of a random corpus with random deletes are merged; the result must
 * hold exactly the live docs, renumbered in input order, with all their postings, positions,
 * norms, doc values and stored fields (checked with the same model as segment_test), and `_id`
 * doc values filled from the stored ids. Also the
 * tiered merge policy and force-merge planning. Seeds are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "index/commit.h"
#include "index/docvalues.h"
#include "index/merge.h"
#include "verify.h"

static void build_segment(const t_corpus *c, uint32_t lo, uint32_t hi, const char *dir,
                          const char *name)
{
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = lo; d < hi; d++)
        assert_int_equal(t_add_doc(b, c, d), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, name, NULL), SC_OK);
    sc_segment_builder_free(b);
}

/* A merged segment's `_id` field has sorted-set doc values holding each doc's id (the inputs
 * here were written without them, as before `_id` had doc values). */
static void check_id_docvalues(const sc_segment *seg, const t_corpus *kept)
{
    if (!kept->n_docs)
        return;
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr("_id"));
    assert_non_null(fi);
    assert_true(fi->flags & SC_FIELD_DOCVALUES);
    sc_dv_sorted_set dv;
    assert_int_equal(sc_dv_sorted_set_open(seg, fi, &dv), SC_OK);
    for (uint32_t d = 0; d < kept->n_docs; d++) {
        uint64_t ord;
        assert_int_equal(sc_dv_sorted_set_ords(&dv, d, &ord, 1), 1);
        assert_true(sc_slice_eq_cstr(sc_dv_sorted_set_term(&dv, ord), kept->docs[d].id));
    }
}

static void merge_case(uint32_t n_docs, int delete_pct)
{
    t_corpus c;
    t_corpus_make(&c, n_docs);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    uint32_t cut[4] = {0, n_docs / 3, n_docs / 3 + n_docs / 2, n_docs};
    const char *names[3] = {"a", "b", "c"};
    sc_merge_input in[3];
    sc_bitset live[3];
    t_corpus kept = {.n_docs = 0, .docs = calloc(n_docs + 1, sizeof(t_doc))};
    memcpy(kept.vocab, c.vocab, sizeof(c.vocab));
    memcpy(kept.tagv, c.tagv, sizeof(c.tagv));
    for (int s = 0; s < 3; s++) {
        build_segment(&c, cut[s], cut[s + 1], dir, names[s]);
        assert_int_equal(sc_segment_open(dir, names[s], &in[s].seg), SC_OK);
        uint32_t n = cut[s + 1] - cut[s];
        assert_int_equal(sc_bitset_init(&live[s], n), SC_OK);
        for (uint32_t d = 0; d < n; d++) {
            bool keep = s == 1 || (int)t_below(100) >= delete_pct;
            if (keep) {
                sc_bitset_set(&live[s], d);
                kept.docs[kept.n_docs++] = c.docs[cut[s] + d];
            }
        }
        /* round trip the live docs through a deletes file */
        sc_bitset back;
        assert_int_equal(sc_live_docs_write(dir, names[s], 3, &live[s]), SC_OK);
        sc_index_error err;
        assert_int_equal(sc_live_docs_read(dir, names[s], 3, n, &back, &err), SC_OK);
        assert_int_equal(sc_bitset_count(&back), sc_bitset_count(&live[s]));
        if (n)
            assert_memory_equal(back.words, live[s].words, sc_bitset_words_for(n) * 8);
        sc_bitset_fini(&back);
        in[s].live = s == 1 ? NULL : &live[s];
    }
    sc_segment_write_info info;
    assert_int_equal(sc_segment_merge(in, 3, dir, "m", &info), SC_OK);
    assert_int_equal(info.n_docs, kept.n_docs);
    sc_segment *merged;
    assert_int_equal(sc_segment_open(dir, "m", &merged), SC_OK);
    verify_segment(merged, &kept);
    check_id_docvalues(merged, &kept);
    sc_segment_unref(merged);
    for (int s = 0; s < 3; s++) {
        sc_segment_unref(in[s].seg);
        sc_bitset_fini(&live[s]);
    }
    free(kept.docs);
    t_corpus_free(&c);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_merge_with_deletes(void **state)
{
    (void)state;
    t_seed("merge_with_deletes");
    merge_case(3000, 20);
    merge_case(400, 90);
    merge_case(10, 100);
}

static void check_disjoint(const sc_merge_spec *s, const sc_merge_candidate *segs, size_t n)
{
    bool *seen = calloc(n, sizeof(bool));
    for (size_t i = 0; i < s->idx.len; i++) {
        size_t k = s->idx.ptr[i];
        assert_true(k < n);
        assert_false(seen[k]);
        assert_false(segs[k].merging);
        seen[k] = true;
    }
    free(seen);
}

static void test_policies(void **state)
{
    (void)state;
    t_seed("policies");
    sc_merge_candidate segs[40];
    for (int i = 0; i < 40; i++)
        segs[i] = (sc_merge_candidate){.size_bytes = 1000000 + t_below(100000),
                                       .n_docs = 1000,
                                       .n_deleted = 0,
                                       .merging = i == 3};
    sc_tiered_merge_config cfg = sc_tiered_merge_defaults();
    sc_merge_policy p = sc_tiered_merge_policy(&cfg);
    sc_merge_spec spec;
    sc_merge_spec_init(&spec);
    assert_int_equal(p.find_merges(&p, segs, 40, &spec), SC_OK);
    assert_true(sc_merge_spec_n_merges(&spec) >= 1);
    check_disjoint(&spec, segs, 40);
    for (size_t k = 0; k < sc_merge_spec_n_merges(&spec); k++) {
        size_t len = spec.starts.ptr[k + 1] - spec.starts.ptr[k];
        assert_true(len >= 2 && len <= cfg.max_merge_at_once);
    }
    sc_merge_spec_fini(&spec);
    /* few segments: nothing to do */
    sc_merge_spec_init(&spec);
    assert_int_equal(p.find_merges(&p, segs, 5, &spec), SC_OK);
    assert_int_equal(sc_merge_spec_n_merges(&spec), 0);
    sc_merge_spec_fini(&spec);
    /* 11 or 12 tiny segments (below the floor) are more than a tier: one merge, as in Lucene
     * (the levels share the real bytes, not 11 floors) */
    for (size_t n = 11; n <= 12; n++) {
        sc_merge_candidate tiny[12];
        for (size_t i = 0; i < n; i++)
            tiny[i] = (sc_merge_candidate){.size_bytes = 4000 + 10 * i, .n_docs = 1};
        sc_merge_spec_init(&spec);
        assert_int_equal(p.find_merges(&p, tiny, n, &spec), SC_OK);
        assert_int_equal(sc_merge_spec_n_merges(&spec), 1);
        assert_true(n - (spec.idx.len - 1) <= cfg.segs_per_tier);
        sc_merge_spec_fini(&spec);
        /* and 10 are left alone */
        sc_merge_spec_init(&spec);
        assert_int_equal(p.find_merges(&p, tiny, 10, &spec), SC_OK);
        assert_int_equal(sc_merge_spec_n_merges(&spec), 0);
        sc_merge_spec_fini(&spec);
    }
    /* a segment with many deletes is reclaimed */
    segs[0].n_deleted = 600;
    sc_merge_spec_init(&spec);
    assert_int_equal(p.find_merges(&p, segs, 2, &spec), SC_OK);
    assert_int_equal(sc_merge_spec_n_merges(&spec), 1);
    sc_merge_spec_fini(&spec);
    /* forced */
    sc_merge_spec_init(&spec);
    assert_int_equal(sc_merge_find_forced(segs, 12, 5, &spec), SC_OK);
    assert_int_equal(sc_merge_spec_n_merges(&spec), 1);
    assert_int_equal(spec.idx.len, 12 - 1 - 5 + 1); /* one is merging */
    check_disjoint(&spec, segs, 12);
    sc_merge_spec_fini(&spec);
    sc_merge_spec_init(&spec);
    assert_int_equal(sc_merge_find_forced(segs, 12, 1, &spec), SC_OK);
    assert_int_equal(spec.idx.len, 11);
    sc_merge_spec_fini(&spec);
    sc_merge_spec_init(&spec);
    assert_int_equal(sc_merge_find_forced(segs + 5, 1, 1, &spec), SC_OK);
    assert_int_equal(sc_merge_spec_n_merges(&spec), 0);
    assert_int_equal(sc_merge_find_forced(segs, 1, 1, &spec), SC_OK); /* has deletes */
    assert_int_equal(sc_merge_spec_n_merges(&spec), 1);
    sc_merge_spec_fini(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_with_deletes),
        cmocka_unit_test(test_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
