/* Tests for the block join support of a segment (src/index/nested.c): random blocks (nested
 * children carrying the _nested_path keyword, then their root) written by the builder; the
 * root bitset computed at open, the child count and each root's block start must equal the
 * model; a merge of two such segments with whole blocks deleted keeps every surviving block
 * contiguous and in order; a segment without the field has no bitset; a segment whose last doc
 * is a child is corrupt. The seed is printed (SCRY_SEED replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common.h"
#include "index/merge.h"
#include "index/segment.h"

static char dir[64];

/* Adds one doc: a child of `path` (NULL: a root) with one keyword value `v`. */
static void add(sc_segment_builder *b, const char *path, const char *v)
{
    sc_index_token t[2] = {{sc_slice_cstr("id"), 0}, {sc_slice_cstr(v), 0}};
    sc_index_token p = {sc_slice_cstr(path ? path : ""), 0};
    sc_index_field f[3] = {
        {.name = sc_slice_cstr("_id"),
         .kind = SC_FIELD_KEYWORD,
         .flags = SC_FIELD_INDEXED,
         .tokens = &t[0],
         .n_tokens = 1},
        {.name = sc_slice_cstr("v"),
         .kind = SC_FIELD_KEYWORD,
         .flags = SC_FIELD_INDEXED,
         .tokens = &t[1],
         .n_tokens = 1},
        {.name = sc_slice_cstr(SC_NESTED_PATH_FIELD),
         .kind = SC_FIELD_KEYWORD,
         .flags = SC_FIELD_INDEXED,
         .tokens = &p,
         .n_tokens = 1},
    };
    sc_index_doc d = {.id = sc_slice_cstr("id"),
                      .source = sc_slice_cstr(path ? "" : "{}"),
                      .fields = f,
                      .n_fields = path ? 3 : 2};
    assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_OK);
}

/* Random blocks; root[d] says which docs are roots. Returns the doc count. */
static uint32_t build(sc_segment_builder *b, bool *root, uint32_t cap, uint32_t n_blocks)
{
    static const char *const paths[] = {"comments", "reviews"};
    uint32_t d = 0;
    for (uint32_t i = 0; i < n_blocks && d + 8 < cap; i++) {
        uint32_t k = t_below(6);
        for (uint32_t j = 0; j < k; j++, d++) {
            add(b, paths[t_below(2)], "c");
            root[d] = false;
        }
        add(b, NULL, "r");
        root[d++] = true;
    }
    return d;
}

static void check(const sc_segment *seg, const bool *root, uint32_t n)
{
    assert_int_equal(sc_segment_n_docs(seg), n);
    const sc_bitset *p = sc_segment_parents(seg);
    uint32_t kids = 0;
    for (uint32_t d = 0; d < n; d++)
        kids += !root[d];
    assert_int_equal(sc_segment_n_children(seg), kids);
    if (!kids) {
        assert_null(p);
        return;
    }
    assert_non_null(p);
    for (uint32_t d = 0; d < n; d++) {
        assert_int_equal(sc_bitset_test(p, d), root[d]);
        if (!root[d])
            continue;
        uint32_t start = d;
        while (start > 0 && !root[start - 1])
            start--;
        assert_int_equal(sc_segment_block_start(seg, d), start);
    }
}

static void test_blocks_and_merge(void **state)
{
    (void)state;
    enum {
        CAP = 3000
    };
    static bool root1[CAP], root2[CAP], merged[2 * CAP];
    sc_segment_builder *b;
    sc_segment *s1, *s2, *m;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    uint32_t n1 = build(b, root1, CAP, 1 + t_below(400));
    assert_int_equal(sc_segment_builder_write(b, dir, "n1", NULL), SC_OK);
    sc_segment_builder_free(b);
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    uint32_t n2 = build(b, root2, CAP, 1 + t_below(400));
    assert_int_equal(sc_segment_builder_write(b, dir, "n2", NULL), SC_OK);
    sc_segment_builder_free(b);
    assert_int_equal(sc_segment_open(dir, "n1", &s1), SC_OK);
    assert_int_equal(sc_segment_open(dir, "n2", &s2), SC_OK);
    check(s1, root1, n1);
    check(s2, root2, n2);
    /* delete about a third of the blocks of each (a delete always covers a whole block) */
    sc_bitset l1, l2;
    assert_int_equal(sc_bitset_init(&l1, n1), SC_OK);
    assert_int_equal(sc_bitset_init(&l2, n2), SC_OK);
    sc_bitset_set_range(&l1, 0, n1);
    sc_bitset_set_range(&l2, 0, n2);
    uint32_t nm = 0;
    for (int s = 0; s < 2; s++) {
        const bool *root = s ? root2 : root1;
        sc_bitset *l = s ? &l2 : &l1;
        uint32_t n = s ? n2 : n1, start = 0;
        for (uint32_t d = 0; d < n; d++) {
            if (!root[d])
                continue;
            bool del = t_below(3) == 0;
            for (uint32_t x = start; x <= d; x++) {
                if (del)
                    sc_bitset_clear(l, x);
                else
                    merged[nm++] = root[x];
            }
            start = d + 1;
        }
    }
    sc_merge_input in[2] = {{s1, &l1}, {s2, &l2}};
    assert_int_equal(sc_segment_merge(in, 2, dir, "nm", NULL), SC_OK);
    assert_int_equal(sc_segment_open(dir, "nm", &m), SC_OK);
    check(m, merged, nm);
    sc_segment_unref(m);
    sc_segment_unref(s1);
    sc_segment_unref(s2);
    sc_bitset_fini(&l1);
    sc_bitset_fini(&l2);
}

static void test_no_children_and_corrupt(void **state)
{
    (void)state;
    sc_segment_builder *b;
    sc_segment *s;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    add(b, NULL, "a");
    add(b, NULL, "b");
    assert_int_equal(sc_segment_builder_write(b, dir, "plain", NULL), SC_OK);
    sc_segment_builder_free(b);
    assert_int_equal(sc_segment_open(dir, "plain", &s), SC_OK);
    assert_null(sc_segment_parents(s));
    assert_int_equal(sc_segment_n_children(s), 0);
    assert_int_equal(sc_segment_block_start(s, 1), 1);
    sc_segment_unref(s);
    /* a block split at the end of a segment: refused at open, not a crash */
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    add(b, "comments", "c");
    add(b, NULL, "r");
    add(b, "comments", "c");
    assert_int_equal(sc_segment_builder_write(b, dir, "split", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_index_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(sc_segment_open_ex(dir, "split", &s, &e), SC_ECORRUPT);
}

int main(void)
{
    t_seed("nested_test");
    snprintf(dir, sizeof dir, "/tmp/scry-nested-test-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_and_merge),
        cmocka_unit_test(test_no_children_and_corrupt),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
