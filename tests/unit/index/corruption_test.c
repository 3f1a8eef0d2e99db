/* Corrupt and truncated files: a small segment (and a manifest and a deletes file) is written,
 * then every byte is flipped (a dense sample for bigger files) and the file truncated at many
 * lengths. Opening must fail with SC_ECORRUPT and an error offset; with the checksum check
 * bypassed (sc_segment_open_bytes) the structural checks must still keep every read in bounds
 * (run under ASan), each read returning an error or data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/commit.h"
#include "readall.h"

static uint8_t *read_file(const char *path, size_t *len)
{
    uint8_t *data;
    assert_int_equal(sc_file_read_all(path, &data, len), SC_OK);
    return data;
}

static void write_file(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_segment_corruption(void **state)
{
    (void)state;
    t_seed("segment_corruption");
    t_corpus c;
    t_corpus_make(&c, 150);
    char dir[64], path[128];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < c.n_docs; d++)
        assert_int_equal(t_add_doc(b, &c, d), SC_OK);
    assert_int_equal(sc_segment_builder_write(b, dir, "s", NULL), SC_OK);
    sc_segment_builder_free(b);
    snprintf(path, sizeof(path), "%s/s.seg", dir);
    size_t len;
    uint8_t *orig = read_file(path, &len);
    uint8_t *buf = malloc(len);
    /* the intact file reads fully */
    sc_segment *seg;
    uint64_t acc0 = 0;
    assert_int_equal(sc_segment_open(dir, "s", &seg), SC_OK);
    assert_int_equal(t_read_all(seg, &acc0), SC_OK);
    sc_segment_unref(seg);
    /* every byte would take minutes under ASan; a random dense sample of ~3000 offsets */
    size_t stride = len > 3000 ? len / 3000 : 1;
    size_t structural_ok = 0, n_flips = 0;
    for (size_t off = t_below((uint32_t)stride); off < len; off += stride) {
        memcpy(buf, orig, len);
        buf[off] ^= (uint8_t)(1u << t_below(8));
        n_flips++;
        sc_index_error err;
        /* with the checksum: always rejected, with an offset inside the file */
        seg = NULL;
        assert_int_equal(sc_segment_open_bytes(sc_slice_make(buf, len), "flip", true, &seg, &err),
                         SC_ECORRUPT);
        assert_true(err.offset <= len);
        /* without it: structure checks and bounded reads */
        if (sc_segment_open_bytes(sc_slice_make(buf, len), "flip", false, &seg, &err) == SC_OK) {
            uint64_t acc = 0;
            (void)t_read_all(seg, &acc);
            sc_segment_unref(seg);
            structural_ok++;
        }
    }
    fprintf(stderr, "%zu bytes, %zu flips, %zu opened without checksum\n", len, n_flips,
            structural_ok);
    /* on disk, through the normal open */
    for (int k = 0; k < 50; k++) {
        memcpy(buf, orig, len);
        buf[t_below((uint32_t)len)] ^= 0x40;
        write_file(path, buf, len);
        sc_index_error err;
        assert_int_equal(sc_segment_open_ex(dir, "s", &seg, &err), SC_ECORRUPT);
        assert_true(strstr(err.file, "s.seg") != NULL);
    }
    /* truncations */
    for (size_t cut = 0; cut < len; cut += 1 + t_below(len > 4000 ? 64 : 4)) {
        write_file(path, orig, cut);
        sc_index_error err;
        assert_int_equal(sc_segment_open_ex(dir, "s", &seg, &err), SC_ECORRUPT);
        if (sc_segment_open_bytes(sc_slice_make(orig, cut), "cut", false, &seg, &err) == SC_OK) {
            uint64_t acc = 0;
            (void)t_read_all(seg, &acc);
            sc_segment_unref(seg);
        }
    }
    /* a wrong version is rejected as corrupt */
    memcpy(buf, orig, len);
    buf[8] = 99;
    assert_int_equal(sc_segment_open_bytes(sc_slice_make(buf, len), "v", false, &seg, NULL),
                     SC_ECORRUPT);
    free(buf);
    free(orig);
    t_corpus_free(&c);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_manifest_and_deletes(void **state)
{
    (void)state;
    t_seed("manifest");
    char dir[64], path[128];
    t_tmpdir(dir, sizeof(dir));
    sc_manifest m, back;
    sc_manifest_init(&m);
    sc_manifest_init(&back);
    assert_int_equal(sc_manifest_read(dir, &back, NULL), SC_ENOTFOUND);
    m.generation = 42;
    for (int i = 0; i < 5; i++) {
        sc_manifest_segment s;
        memset(&s, 0, sizeof(s));
        snprintf(s.name, sizeof(s.name), "seg_%d", i);
        s.n_docs = 100 + (uint32_t)i;
        s.n_deleted = (uint32_t)i;
        s.del_gen = (uint64_t)i;
        s.checksum = t_rand();
        assert_int_equal(sc_vec_push(&m.segments, s), SC_OK);
    }
    assert_int_equal(sc_vec_append(&m.user_data, (const unsigned char *)"translog=17", 11), SC_OK);
    assert_int_equal(sc_manifest_write(dir, &m), SC_OK);
    assert_int_equal(sc_manifest_read(dir, &back, NULL), SC_OK);
    assert_int_equal(back.generation, 42);
    assert_int_equal(back.segments.len, 5);
    for (int i = 0; i < 5; i++) {
        assert_string_equal(back.segments.ptr[i].name, m.segments.ptr[i].name);
        assert_int_equal(back.segments.ptr[i].n_docs, m.segments.ptr[i].n_docs);
        assert_int_equal(back.segments.ptr[i].n_deleted, m.segments.ptr[i].n_deleted);
        assert_int_equal(back.segments.ptr[i].del_gen, m.segments.ptr[i].del_gen);
        assert_int_equal(back.segments.ptr[i].checksum, m.segments.ptr[i].checksum);
    }
    assert_int_equal(back.user_data.len, 11);
    assert_memory_equal(back.user_data.ptr, "translog=17", 11);
    snprintf(path, sizeof(path), "%s/manifest", dir);
    size_t len;
    uint8_t *orig = read_file(path, &len);
    for (size_t off = 0; off < len; off++) {
        orig[off] ^= 1;
        write_file(path, orig, len);
        sc_index_error err;
        assert_int_equal(sc_manifest_read(dir, &back, &err), SC_ECORRUPT);
        orig[off] ^= 1;
    }
    for (size_t cut = 0; cut < len; cut++) {
        write_file(path, orig, cut);
        assert_int_equal(sc_manifest_read(dir, &back, NULL), SC_ECORRUPT);
    }
    free(orig);
    /* deletes */
    sc_bitset live, got;
    assert_int_equal(sc_bitset_init(&live, 1000), SC_OK);
    for (int i = 0; i < 1000; i++)
        if (t_below(3))
            sc_bitset_set(&live, (size_t)i);
    assert_int_equal(sc_live_docs_write(dir, "seg_1", 7, &live), SC_OK);
    assert_int_equal(sc_live_docs_read(dir, "seg_1", 7, 1000, &got, NULL), SC_OK);
    assert_memory_equal(got.words, live.words, sc_bitset_words_for(1000) * 8);
    sc_bitset_fini(&got);
    assert_int_equal(sc_live_docs_read(dir, "seg_1", 7, 999, &got, NULL), SC_ECORRUPT);
    assert_int_equal(sc_live_docs_read(dir, "seg_1", 8, 1000, &got, NULL), SC_ENOTFOUND);
    snprintf(path, sizeof(path), "%s/seg_1_7.del", dir);
    orig = read_file(path, &len);
    for (size_t off = 0; off < len; off++) {
        orig[off] ^= 0x10;
        write_file(path, orig, len);
        assert_int_equal(sc_live_docs_read(dir, "seg_1", 7, 1000, &got, NULL), SC_ECORRUPT);
        orig[off] ^= 0x10;
    }
    free(orig);
    sc_bitset_fini(&live);
    sc_manifest_fini(&m);
    sc_manifest_fini(&back);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

/* The dense-vector seed segment (tests/fuzz/corpus/segment/vectors.seg): every fifth byte of
 * the file flipped in turn and read back (checksum bypassed): the vector section's structure
 * checks (sizes, docs, codes, graph links and levels) keep every kNN search in bounds. */
static void test_vector_segment_corruption(void **state)
{
    (void)state;
    t_seed("vector_corruption");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/segment/vectors.seg", SCRY_SOURCE_DIR);
    size_t len;
    uint8_t *orig = read_file(path, &len);
    uint8_t *buf = malloc(len);
    size_t opened = 0;
    for (size_t off = 0; off < len; off += 5) {
        memcpy(buf, orig, len);
        buf[off] ^= (uint8_t)(1u << t_below(8));
        sc_segment *seg;
        sc_index_error err;
        if (sc_segment_open_bytes(sc_slice_make(buf, len), "v", false, &seg, &err) != SC_OK)
            continue;
        opened++;
        uint64_t acc = 0;
        (void)t_read_all(seg, &acc);
        sc_segment_unref(seg);
    }
    assert_true(opened > 0);
    free(buf);
    free(orig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_and_deletes),
        cmocka_unit_test(test_segment_corruption),
        cmocka_unit_test(test_vector_segment_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
