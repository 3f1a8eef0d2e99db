/* Tests for base/file: atomic write replaces contents and leaves no temp file, read_all round
 * trip (empty and large), checksum detects a flipped byte and streaming equals one-shot, mmap
 * of an empty and a non-empty file (its bytes unchanged after dropping its pages), missing files -> SC_ENOTFOUND, directory helpers, a file streamed in pieces (whole, in order, none larger than the chunk). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/scry-file-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return sc_dir_remove_all(dir) == SC_OK ? 0 : -1;
}

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static int count_entries(const char *d)
{
    DIR *dh = opendir(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dh)))
        if (e->d_name[0] != '.')
            n++;
    closedir(dh);
    return n;
}

static void test_atomic_write_and_read(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof(p), "manifest");
    uint8_t *data;
    size_t len;
    assert_int_equal(sc_file_read_all(p, &data, &len), SC_ENOTFOUND);
    assert_false(sc_path_exists(p));
    assert_int_equal(sc_file_write_atomic(p, "first", 5), SC_OK);
    assert_true(sc_path_exists(p));
    assert_int_equal(sc_file_write_atomic(p, "second!", 7), SC_OK);
    assert_int_equal(sc_file_read_all(p, &data, &len), SC_OK);
    assert_int_equal(len, 7);
    assert_memory_equal(data, "second!", 7);
    free(data);
    assert_int_equal(count_entries(dir), 1); /* no temp file left behind */
    /* Empty and large files. */
    assert_int_equal(sc_file_write_atomic(p, "", 0), SC_OK);
    assert_int_equal(sc_file_read_all(p, &data, &len), SC_OK);
    assert_int_equal(len, 0);
    free(data);
    size_t big = 3 * 1000 * 1000 + 7;
    uint8_t *src = malloc(big);
    for (size_t i = 0; i < big; i++)
        src[i] = (uint8_t)(i * 131 + (i >> 9));
    assert_int_equal(sc_file_write_atomic(p, src, big), SC_OK);
    assert_int_equal(sc_file_read_all(p, &data, &len), SC_OK);
    assert_int_equal(len, big);
    assert_memory_equal(data, src, big);
    free(data);
    free(src);
    /* A directory that does not exist. */
    char q[512];
    path_in(q, sizeof(q), "no/such/dir/file");
    assert_int_equal(sc_file_write_atomic(q, "x", 1), SC_ENOTFOUND);
}

static void test_checksum(void **state)
{
    (void)state;
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7);
    char p[512];
    path_in(p, sizeof(p), "seg");
    assert_int_equal(sc_file_write_atomic(p, buf, sizeof(buf)), SC_OK);
    uint64_t want = sc_checksum(buf, sizeof(buf));
    /* Flip one byte on disk: the checksum of what we read back differs. */
    FILE *f = fopen(p, "r+b");
    assert_non_null(f);
    fseek(f, 1234, SEEK_SET);
    fputc(buf[1234] ^ 0x10, f);
    fclose(f);
    uint8_t *data;
    size_t len;
    assert_int_equal(sc_file_read_all(p, &data, &len), SC_OK);
    assert_int_equal(len, sizeof(buf));
    assert_true(sc_checksum(data, len) != want);
    data[1234] ^= 0x10;
    assert_true(sc_checksum(data, len) == want);
    free(data);
    /* Streaming in uneven pieces equals one shot; empty input is well defined. */
    sc_checksum_state *st = sc_checksum_new();
    assert_non_null(st);
    size_t off = 0, step = 1;
    while (off < sizeof(buf)) {
        size_t n = step < sizeof(buf) - off ? step : sizeof(buf) - off;
        sc_checksum_update(st, buf + off, n);
        off += n;
        step = step * 3 + 1;
    }
    assert_true(sc_checksum_digest(st) == want);
    sc_checksum_free(st);
    sc_checksum_free(NULL);
    st = sc_checksum_new();
    assert_true(sc_checksum_digest(st) == sc_checksum("", 0));
    sc_checksum_free(st);
    assert_true(sc_checksum("a", 1) != sc_checksum("b", 1));
}

typedef struct pieces {
    uint8_t got[10000];
    size_t len, calls, largest;
} pieces;

static void collect_piece(void *ctx, const uint8_t *piece, size_t len)
{
    pieces *p = ctx;
    assert_true(p->len + len <= sizeof p->got);
    memcpy(p->got + p->len, piece, len);
    p->len += len;
    p->calls++;
    if (len > p->largest)
        p->largest = len;
}

/* sc_file_stream hands over the whole file in order, in pieces no larger than the chunk. */
static void test_stream(void **state)
{
    (void)state;
    uint8_t buf[10000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 13 + (i >> 8));
    char p[512];
    path_in(p, sizeof p, "streamed");
    assert_int_equal(sc_file_write_atomic(p, buf, sizeof buf), SC_OK);
    static pieces got;
    memset(&got, 0, sizeof got);
    uint64_t size = 0;
    assert_int_equal(sc_file_stream(p, 4096, collect_piece, &got, &size), SC_OK);
    assert_int_equal(size, sizeof buf);
    assert_int_equal(got.len, sizeof buf);
    assert_memory_equal(got.got, buf, sizeof buf);
    assert_true(got.calls >= 3);
    assert_true(got.largest <= 4096);
    /* empty file: no piece, size 0 */
    path_in(p, sizeof p, "streamed-empty");
    assert_int_equal(sc_file_write_atomic(p, "", 0), SC_OK);
    memset(&got, 0, sizeof got);
    size = 7;
    assert_int_equal(sc_file_stream(p, 4096, collect_piece, &got, &size), SC_OK);
    assert_int_equal(size, 0);
    assert_int_equal(got.calls, 0);
    /* missing file: SC_EIO, size untouched */
    path_in(p, sizeof p, "not-there");
    size = 7;
    assert_int_equal(sc_file_stream(p, 4096, collect_piece, &got, &size), SC_EIO);
    assert_int_equal(size, 7);
}

static void test_mmap(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof(p), "empty");
    assert_int_equal(sc_file_write_atomic(p, "", 0), SC_OK);
    sc_mmap m;
    assert_int_equal(sc_mmap_open(p, &m), SC_OK);
    assert_int_equal(m.bytes.len, 0);
    assert_non_null(m.bytes.ptr);
    sc_mmap_close(&m);
    path_in(p, sizeof(p), "data");
    assert_int_equal(sc_file_write_atomic(p, "mapped bytes", 12), SC_OK);
    assert_int_equal(sc_mmap_open(p, &m), SC_OK);
    assert_int_equal(m.bytes.len, 12);
    assert_memory_equal(m.bytes.ptr, "mapped bytes", 12);
    /* dropping the resident pages keeps the bytes (read again from the file) */
    sc_mmap_drop_pages(&m);
    assert_memory_equal(m.bytes.ptr, "mapped bytes", 12);
    sc_mmap_close(&m);
    assert_null(m.bytes.ptr);
    path_in(p, sizeof(p), "missing");
    assert_int_equal(sc_mmap_open(p, &m), SC_ENOTFOUND);
}

static void test_dirs(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof(p), "a/b/c");
    assert_int_equal(sc_dir_make(p), SC_OK);
    assert_int_equal(sc_dir_make(p), SC_OK); /* existing is fine */
    assert_true(sc_path_exists(p));
    assert_int_equal(sc_dir_fsync(p), SC_OK);
    char f[600];
    snprintf(f, sizeof(f), "%s/file", p);
    assert_int_equal(sc_file_write_atomic(f, "x", 1), SC_OK);
    path_in(p, sizeof(p), "a");
    assert_int_equal(sc_dir_remove_all(p), SC_OK);
    assert_false(sc_path_exists(p));
    assert_int_equal(sc_dir_remove_all(p), SC_OK); /* missing is fine */
    assert_int_equal(sc_dir_fsync(p), SC_ENOTFOUND);
    assert_int_equal(sc_dir_make(""), SC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_write_and_read),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_mmap),
        cmocka_unit_test(test_dirs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
