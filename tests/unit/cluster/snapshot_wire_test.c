/* Tests for cluster/snapshot_wire.c: round trips of the clustered snapshot's shard request and
 * answer, every truncation and a trailing byte refused, and the answer's file and blob names
 * checked (they become paths in the repository and the restored shard). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/snapshot_wire.h"
#include "wire_check.h"

/* With SCRY_SNAPWIRE_SEEDS_DIR set, each encoding is also written there as a seed of
 * tests/fuzz/snapwire_fuzz.c (selector byte + body): how tests/fuzz/corpus/snapwire/ was made. */
#define write_seed(name, selector, p, n)                                                           \
    wire_write_seed("SCRY_SNAPWIRE_SEEDS_DIR", name, selector, p, n)

static sc_status dec_req(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)a;
    (void)out;
    sc_snap_shard_req q;
    return sc_snap_shard_req_decode(p, n, &q);
}

static sc_status dec_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)out;
    sc_snap_shard_resp r;
    return sc_snap_shard_resp_decode(p, n, a, &r);
}

static void test_request(void **state)
{
    (void)state;
    sc_snap_shard_req q = {.repo = sc_slice_cstr("backups"),
                           .snapshot_uuid = sc_slice_cstr("u1u2u3"),
                           .index = sc_slice_cstr("logs-1"),
                           .shard = 70000};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_snap_shard_req_encode(&q, &b), SC_OK);
    sc_snap_shard_req d;
    assert_int_equal(sc_snap_shard_req_decode(b.ptr, b.len, &d), SC_OK);
    assert_true(sc_slice_eq(d.repo, q.repo));
    assert_true(sc_slice_eq(d.snapshot_uuid, q.snapshot_uuid));
    assert_true(sc_slice_eq(d.index, q.index));
    assert_int_equal(d.shard, 70000);
    wire_check_truncations(b.ptr, b.len, dec_req, NULL);
    write_seed("snap_shard", 0, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    /* an empty index name is corrupt */
    q.index = sc_slice_make(NULL, 0);
    sc_wire_buf_init(&b);
    assert_int_equal(sc_snap_shard_req_encode(&q, &b), SC_OK);
    assert_int_equal(sc_snap_shard_req_decode(b.ptr, b.len, &d), SC_ECORRUPT);
    sc_wire_buf_fini(&b);
}

static sc_status encode_one(const char *name, const char *blob, sc_wire_buf *b)
{
    sc_snap_shard_file f = {sc_slice_cstr(name), sc_slice_cstr(blob), 9};
    sc_snap_shard_resp r = {.n_docs = 1, .files = &f, .n_files = 1};
    sc_wire_buf_init(b);
    return sc_snap_shard_resp_encode(&r, b);
}

static void test_answer(void **state)
{
    (void)state;
    sc_snap_shard_file files[2] = {
        {sc_slice_cstr("seg_0.sst"), sc_slice_cstr("0123456789abcdef0123456789abcdef"), 4096},
        {sc_slice_cstr("manifest.1"), sc_slice_cstr("ffffffffffffffffffffffffffffffff"), 0},
    };
    sc_snap_shard_resp r = {.n_docs = 123456, .files = files, .n_files = 2};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_snap_shard_resp_encode(&r, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_snap_shard_resp d;
    assert_int_equal(sc_snap_shard_resp_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_int_equal(d.n_docs, 123456);
    assert_int_equal(d.n_files, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(sc_slice_eq(d.files[i].name, files[i].name));
        assert_true(sc_slice_eq(d.files[i].blob, files[i].blob));
        assert_int_equal(d.files[i].size, files[i].size);
    }
    sc_arena_fini(&a);
    wire_check_truncations(b.ptr, b.len, dec_resp, NULL);
    write_seed("snap_shard_resp", 1, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    /* names that are not plain file names, blobs that are not 32 lowercase hex digits */
    const char *bad[][2] = {
        {"../x", "0123456789abcdef0123456789abcdef"}, {"..", "0123456789abcdef0123456789abcdef"},
        {"", "0123456789abcdef0123456789abcdef"},     {"a", "0123456789ABCDEF0123456789abcdef"},
        {"a", "0123456789abcdef0123456789abcde"},     {"a", "../../../../../../../../../../.."},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(encode_one(bad[i][0], bad[i][1], &b), SC_OK);
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(sc_snap_shard_resp_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
        sc_arena_fini(&a);
        sc_wire_buf_fini(&b);
    }
    /* a file count larger than the bytes left is refused before any allocation */
    uint8_t huge[] = {0, 0xff, 0xff, 0xff, 0xff, 0x0f};
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(sc_snap_shard_resp_decode(huge, sizeof huge, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
