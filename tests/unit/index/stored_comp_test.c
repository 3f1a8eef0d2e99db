/* Tests for src/index/stored_comp.c and the stored blocks of format v10: a segment with enough
 * stored bytes gets a zstd dictionary and every doc reads back exactly; the dictionary makes the
 * blocks smaller than the same blocks compressed alone, and is dropped where it would not; a bad
 * dictionary length or a damaged dictionary is refused (SC_ECORRUPT at open or at the read), never
 * a crash; a small segment has none; a segment of the previous format (v9, checked in under
 * tests/fixtures/segment) still opens and reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <zstd.h>

#include "common.h"
#include "index/internal.h"
#include "index/segment_impl.h"
#include "index/stored.h"
#include "readall.h"

/* A vocabulary of random words picked with a skew toward the first ones, as in text: more
 * words than one 16 KiB block holds, so a dictionary helps. */
#define N_WORDS 4000
static char words[N_WORDS][12];

static void make_words(void)
{
    for (uint32_t i = 0; i < N_WORDS; i++) {
        uint32_t len = 3 + t_below(8);
        for (uint32_t k = 0; k < len; k++)
            words[i][k] = (char)('a' + t_below(26));
        words[i][len] = '\0';
    }
}

static const char *word(bool skewed)
{
    return words[skewed ? t_below(1 + t_below(N_WORDS)) : t_below(32)];
}

/* n docs of JSON-like sources (words under fixed keys), about 300 bytes each; skewed: from the
 * whole vocabulary, else from 32 words only (which one block already learns). */
static char **make_sources(uint32_t n, size_t **lens, bool skewed)
{
    make_words();
    char **src = malloc(n * sizeof(char *));
    *lens = malloc(n * sizeof(size_t));
    for (uint32_t d = 0; d < n; d++) {
        char *s = malloc(1024);
        size_t p =
            (size_t)sprintf(s, "{\"title\":\"%s %s\",\"body\":\"", word(skewed), word(skewed));
        uint32_t nw = 20 + t_below(30);
        for (uint32_t i = 0; i < nw; i++)
            p += (size_t)sprintf(s + p, "%s%s", i ? " " : "", word(skewed));
        p += (size_t)sprintf(s + p, "\",\"size\":%u,\"kind\":\"%s\"}", t_below(100000),
                             t_below(2) ? "man" : "package");
        src[d] = s;
        (*lens)[d] = p;
    }
    return src;
}

static sc_segment *write_open(const char *dir, char **src, const size_t *lens, uint32_t n)
{
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    for (uint32_t d = 0; d < n; d++) {
        char id[16];
        snprintf(id, sizeof id, "%u", d);
        sc_index_doc doc = {.id = sc_slice_cstr(id), .source = sc_slice_make(src[d], lens[d])};
        assert_int_equal(sc_segment_builder_add(b, &doc, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "s", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "s", &seg), SC_OK);
    return seg;
}

static void check_docs(const sc_segment *seg, char **src, const size_t *lens, uint32_t n)
{
    sc_stored_reader r;
    sc_stored_reader_init(&r, seg);
    /* backwards then forwards: every block decompressed more than once */
    for (uint32_t k = 0; k < 2 * n; k++) {
        uint32_t d = k < n ? n - 1 - k : k - n;
        sc_slice id, s;
        assert_int_equal(sc_stored_get(&r, d, &id, &s), SC_OK);
        char want[16];
        snprintf(want, sizeof want, "%u", d);
        assert_true(sc_slice_eq(id, sc_slice_cstr(want)));
        assert_int_equal(s.len, lens[d]);
        assert_memory_equal(s.ptr, src[d], lens[d]);
    }
    sc_stored_reader_fini(&r);
}

static void free_sources(char **src, size_t *lens, uint32_t n)
{
    for (uint32_t d = 0; d < n; d++)
        free(src[d]);
    free(src);
    free(lens);
}

/* The segment's stored bytes (blocks + dictionary) and those of the same raw blocks
 * compressed alone at the same level. */
static void stored_sizes(const sc_segment *seg, uint64_t *out_with, uint64_t *out_alone)
{
    sc_stored_reader r;
    sc_stored_reader_init(&r, seg);
    uint64_t with_dict = seg->stored_dict_len, alone = 0;
    void *buf = malloc(ZSTD_compressBound(1 << 20));
    for (uint32_t k = 0; k < seg->n_stored_blocks; k++) {
        const uint8_t *e = seg->stored_idx + (size_t)k * SC__STORED_ENTRY_BYTES;
        sc_slice id, s;
        assert_int_equal(sc_stored_get(&r, sc__ld32(e), &id, &s), SC_OK);
        with_dict += sc__ld32(e + 16);
        size_t cl = ZSTD_compress(buf, ZSTD_compressBound(r.raw.len), r.raw.ptr, r.raw.len,
                                  SC__STORED_LEVEL);
        assert_false(ZSTD_isError(cl));
        alone += cl;
    }
    free(buf);
    sc_stored_reader_fini(&r);
    fprintf(stderr, "stored bytes: %llu with the dictionary, %llu without\n",
            (unsigned long long)with_dict, (unsigned long long)alone);
    *out_with = with_dict;
    *out_alone = alone;
}

static void test_dictionary_roundtrip_and_smaller(void **state)
{
    (void)state;
    t_seed("stored_comp_roundtrip");
    uint32_t n = 3000;
    size_t *lens;
    char **src = make_sources(n, &lens, true);
    char dir[64];
    t_tmpdir(dir, sizeof dir);
    sc_segment *seg = write_open(dir, src, lens, n);
    assert_true(seg->stored_dict_len > 0);
    assert_true(seg->stored_dict_len <= SC__STORED_DICT_MAX);
    check_docs(seg, src, lens, n);
    uint64_t with_dict, alone;
    stored_sizes(seg, &with_dict, &alone);
    assert_true(with_dict < alone);
    sc_segment_unref(seg);
    free_sources(src, lens, n);
}

/* On a small vocabulary that each block learns alone, the trained dictionary would cost more
 * than it saves: the writer drops it. */
static void test_dictionary_dropped_when_useless(void **state)
{
    (void)state;
    t_seed("stored_comp_useless");
    uint32_t n = 3000;
    size_t *lens;
    char **src = make_sources(n, &lens, false);
    char dir[64];
    t_tmpdir(dir, sizeof dir);
    sc_segment *seg = write_open(dir, src, lens, n);
    assert_int_equal(seg->stored_dict_len, 0);
    check_docs(seg, src, lens, n);
    uint64_t with_dict, alone;
    stored_sizes(seg, &with_dict, &alone);
    assert_true(with_dict == alone);
    sc_segment_unref(seg);
    free_sources(src, lens, n);
}

static void test_small_segment_has_none(void **state)
{
    (void)state;
    t_seed("stored_comp_small");
    uint32_t n = 40;
    size_t *lens;
    char **src = make_sources(n, &lens, true);
    char dir[64];
    t_tmpdir(dir, sizeof dir);
    sc_segment *seg = write_open(dir, src, lens, n);
    assert_int_equal(seg->stored_dict_len, 0);
    assert_null(seg->stored_ddict);
    check_docs(seg, src, lens, n);
    sc_segment_unref(seg);
    free_sources(src, lens, n);
}

/* The file's bytes and the offset of its stored index (from the footer). */
static uint8_t *file_bytes(const char *dir, size_t *len, uint64_t *st_off, uint64_t *st_len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/s.seg", dir);
    uint8_t *bytes;
    assert_int_equal(sc_file_read_all(path, &bytes, len), SC_OK);
    const uint8_t *ft = bytes + *len - SC__SEG_FOOTER_BYTES;
    *st_off = sc__ld64(ft + 16);
    *st_len = sc__ld64(ft + 24);
    return bytes;
}

static void test_bad_dictionary_refused(void **state)
{
    (void)state;
    t_seed("stored_comp_corrupt");
    uint32_t n = 2000;
    size_t *lens;
    char **src = make_sources(n, &lens, true);
    char dir[64];
    t_tmpdir(dir, sizeof dir);
    sc_segment *seg = write_open(dir, src, lens, n);
    uint32_t n_blocks = seg->n_stored_blocks, dict_len = seg->stored_dict_len;
    assert_true(dict_len > 8);
    sc_segment_unref(seg);
    size_t len;
    uint64_t st_off, st_len;
    uint8_t *orig = file_bytes(dir, &len, &st_off, &st_len);
    uint64_t dl_at = st_off + 4 + (uint64_t)n_blocks * SC__STORED_ENTRY_BYTES;
    assert_int_equal(sc__ld32(orig + dl_at), dict_len);
    assert_int_equal(st_len, 4 + (uint64_t)n_blocks * SC__STORED_ENTRY_BYTES + 4 + dict_len);
    uint8_t *buf = malloc(len);
    sc_index_error err;
    /* a dictionary length that does not fit the stored index */
    static const uint32_t bad_lens[] = {0, 1, 0x7fffffffu};
    for (size_t i = 0; i < sizeof bad_lens / sizeof bad_lens[0]; i++) {
        memcpy(buf, orig, len);
        sc__st32(buf + dl_at, bad_lens[i] ? bad_lens[i] : dict_len - 1);
        assert_int_equal(sc_segment_open_bytes(sc_slice_make(buf, len), "s", false, &seg, &err),
                         SC_ECORRUPT);
        assert_true(err.offset == st_off);
    }
    /* any flipped dictionary byte fails the checksum at a verified open */
    memcpy(buf, orig, len);
    buf[dl_at + 4 + t_below(dict_len)] ^= 0x20;
    assert_int_equal(sc_segment_open_bytes(sc_slice_make(buf, len), "s", true, &seg, &err),
                     SC_ECORRUPT);
    /* without the checksum, a dictionary whose magic is broken turns into a raw-content one
     * with another dictionary id: every block read fails, none crashes */
    memcpy(buf, orig, len);
    buf[dl_at + 4] ^= 0xff;
    sc_status st = sc_segment_open_bytes(sc_slice_make(buf, len), "s", false, &seg, &err);
    if (st == SC_OK) {
        sc_stored_reader r;
        sc_stored_reader_init(&r, seg);
        sc_slice id, s;
        assert_int_equal(sc_stored_get(&r, 0, &id, &s), SC_ECORRUPT);
        assert_int_equal(sc_stored_get(&r, n - 1, &id, &s), SC_ECORRUPT);
        sc_stored_reader_fini(&r);
        uint64_t acc = 0;
        (void)t_read_all(seg, &acc);
        sc_segment_unref(seg);
    } else {
        assert_int_equal(st, SC_ECORRUPT);
    }
    free(buf);
    free(orig);
    free_sources(src, lens, n);
}

static void test_reads_format_v9(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/segment/v9-blocks.seg", SCRY_SOURCE_DIR);
    uint8_t *bytes;
    size_t len;
    assert_int_equal(sc_file_read_all(path, &bytes, &len), SC_OK);
    assert_int_equal(sc__ld32(bytes + 8), 9);
    sc_segment *seg;
    sc_index_error err;
    assert_int_equal(sc_segment_open_bytes(sc_slice_make(bytes, len), "v9", true, &seg, &err),
                     SC_OK);
    assert_int_equal(seg->stored_dict_len, 0);
    sc_stored_reader r;
    sc_stored_reader_init(&r, seg);
    for (uint32_t d = 0; d < sc_segment_n_docs(seg); d++) {
        sc_slice id, s;
        assert_int_equal(sc_stored_get(&r, d, &id, &s), SC_OK);
        assert_true(id.len > 0);
    }
    sc_stored_reader_fini(&r);
    uint64_t acc = 0;
    assert_int_equal(t_read_all(seg, &acc), SC_OK);
    sc_segment_unref(seg);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dictionary_roundtrip_and_smaller),
        cmocka_unit_test(test_dictionary_dropped_when_useless),
        cmocka_unit_test(test_small_segment_has_none),
        cmocka_unit_test(test_bad_dictionary_refused),
        cmocka_unit_test(test_reads_format_v9),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
