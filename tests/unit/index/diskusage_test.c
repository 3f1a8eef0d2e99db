/* Tests for src/index/diskusage.c: on a random corpus (common.h) every byte of the segment is
 * accounted for exactly once: the per-field parts, the stored blocks and the overhead sum to
 * the file size, and the overhead is exactly the header, field table, stored-block index and
 * footer (so the postings / positions regions tile the field data with no gap or overlap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/diskusage.h"
#include "index/segment.h"

static uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void test_every_byte_accounted(void **state)
{
    (void)state;
    t_seed("diskusage");
    t_corpus c;
    t_corpus_make(&c, 700);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < 700; d++)
        assert_int_equal(t_add_doc(b, &c, d), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, "du", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "du", &seg), SC_OK);
    sc_segment_disk_usage u;
    assert_int_equal(sc_segment_disk_usage_measure(seg, &u), SC_OK);
    assert_int_equal(u.total_bytes, sc_segment_size_bytes(seg));
    assert_int_equal(u.n_fields, sc_segment_n_fields(seg));
    uint64_t parts = u.stored_id_bytes + u.stored_source_bytes + u.overhead_bytes;
    bool saw_positions = false;
    for (size_t i = 0; i < u.n_fields; i++) {
        const sc_field_info *f = sc_segment_field_at(seg, i);
        const sc_field_disk_usage *x = &u.fields[i];
        parts += x->terms_bytes + x->postings_bytes + x->positions_bytes + x->norms_bytes +
                 x->doc_values_bytes + x->points_bytes;
        assert_int_equal(x->terms_bytes, f->tindex_len + f->tdata_len);
        assert_int_equal(x->norms_bytes, f->norms_len);
        assert_int_equal(x->doc_values_bytes, f->dvn_len + f->dvs_len);
        assert_int_equal(x->points_bytes, f->points_len);
        if (f->n_terms)
            assert_true(x->postings_bytes > 0);
        if (f->kind == SC_FIELD_TEXT && (f->flags & SC_FIELD_POSITIONS) && f->n_terms) {
            assert_true(x->positions_bytes > 0);
            saw_positions = true;
        } else {
            assert_int_equal(x->positions_bytes, 0);
        }
    }
    assert_true(saw_positions);
    assert_int_equal(parts, u.total_bytes);
    const uint8_t *foot = sc__segment_bytes(seg).ptr + u.total_bytes - 48;
    uint64_t fields_len = ld64(foot + 8), stored_idx_len = ld64(foot + 24);
    assert_int_equal(u.overhead_bytes, 16 + 48 + fields_len + stored_idx_len);
    assert_true(u.stored_id_bytes > 0 && u.stored_source_bytes > u.stored_id_bytes);
    sc_segment_disk_usage_fini(&u);
    sc_segment_unref(seg);
    t_corpus_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_accounted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
