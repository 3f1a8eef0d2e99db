/* Tests for src/cluster/replication_wire.c: round trips of a batch of operations (index and
 * delete, empty and large sources) and of a recovery request; every truncation and a trailing
 * byte refused; bad fields refused (negative seq_no, empty id, a delete with a source, a count
 * larger than the bytes); the file recovery messages likewise. With SCRY_REPL_SEEDS_DIR set, the
 * encodings are written there as seeds of tests/fuzz/repl_fuzz.c (selector byte + body). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/replication.h"
#include "wire_check.h"

#define write_seed(name, selector, p, n)                                                           \
    wire_write_seed("SCRY_REPL_SEEDS_DIR", name, selector, p, n)

static void test_ops_round_trip(void **state)
{
    (void)state;
    static char big[70000];
    memset(big, 'x', sizeof big - 1);
    sc_shard_op ops[3] = {
        {false, 0, 1, 1, sc_slice_cstr("a"), sc_slice_cstr("{\"t\":\"x\"}")},
        {true, 77, 3, 9, sc_slice_cstr("gone"), {0}},
        {false, 1ll << 40, 2, 5, sc_slice_cstr("big"), sc_slice_cstr(big)},
    };
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_ops_put_header(&b, "logs", 5, 3, true, 3);
    for (int i = 0; i < 3; i++)
        sc_repl_ops_put_op(&b, &ops[i]);
    assert_int_equal(b.st, SC_OK);
    sc_repl_ops m;
    assert_int_equal(sc_repl_ops_decode(b.ptr, b.len, &m), SC_OK);
    assert_int_equal(m.index.len, 4);
    assert_memory_equal(m.index.ptr, "logs", 4);
    assert_int_equal(m.shard, 5);
    assert_int_equal(m.term, 3);
    assert_true(m.refresh);
    assert_int_equal(m.n_ops, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(m.ops[i].is_delete, ops[i].is_delete);
        assert_int_equal(m.ops[i].seq_no, ops[i].seq_no);
        assert_int_equal(m.ops[i].primary_term, ops[i].primary_term);
        assert_int_equal(m.ops[i].version, ops[i].version);
        assert_int_equal(m.ops[i].id.len, ops[i].id.len);
        assert_memory_equal(m.ops[i].id.ptr, ops[i].id.ptr, ops[i].id.len);
        assert_int_equal(m.ops[i].source.len, ops[i].source.len);
        if (ops[i].source.len)
            assert_memory_equal(m.ops[i].source.ptr, ops[i].source.ptr, ops[i].source.len);
    }
    sc_repl_ops_fini(&m);
    for (size_t cut = 0; cut < b.len; cut += cut < 64 ? 1 : 997) {
        assert_int_not_equal(sc_repl_ops_decode(b.ptr, cut, &m), SC_OK);
        sc_repl_ops_fini(&m);
    }
    uint8_t *more = malloc(b.len + 1);
    memcpy(more, b.ptr, b.len);
    more[b.len] = 0;
    assert_int_equal(sc_repl_ops_decode(more, b.len + 1, &m), SC_ECORRUPT);
    sc_repl_ops_fini(&m);
    free(more);
    sc_wire_buf_fini(&b);
    /* a small batch as the fuzz seed */
    sc_wire_buf_init(&b);
    sc_repl_ops_put_header(&b, "logs", 1, 2, false, 2);
    sc_repl_ops_put_op(&b, &ops[0]);
    sc_repl_ops_put_op(&b, &ops[1]);
    write_seed("ops", 0, b.ptr, b.len);
    sc_wire_buf_fini(&b);
}

static void test_ops_bad_fields(void **state)
{
    (void)state;
    sc_shard_op bad[] = {
        {false, -1, 1, 1, sc_slice_cstr("a"), sc_slice_cstr("{}")},
        {false, 1, 1, 1, sc_slice_cstr(""), sc_slice_cstr("{}")},
        {true, 1, 1, 1, sc_slice_cstr("a"), sc_slice_cstr("{}")},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sc_wire_buf b;
        sc_wire_buf_init(&b);
        sc_repl_ops_put_header(&b, "x", 0, 1, false, 1);
        /* written by hand: the encoder drops a delete's source */
        sc_wire_put_bool(&b, bad[i].is_delete);
        sc_wire_put_svar(&b, bad[i].seq_no);
        sc_wire_put_uvar(&b, 1);
        sc_wire_put_uvar(&b, 1);
        sc_wire_put_bytes(&b, bad[i].id.ptr, bad[i].id.len);
        sc_wire_put_bytes(&b, bad[i].source.ptr, bad[i].source.len);
        sc_repl_ops m;
        assert_int_equal(sc_repl_ops_decode(b.ptr, b.len, &m), SC_ECORRUPT);
        sc_repl_ops_fini(&m);
        sc_wire_buf_fini(&b);
    }
    /* a count far above what the bytes can hold is refused before allocating */
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_ops_put_header(&b, "x", 0, 1, false, 1u << 30);
    sc_repl_ops m;
    assert_int_equal(sc_repl_ops_decode(b.ptr, b.len, &m), SC_ECORRUPT);
    sc_repl_ops_fini(&m);
    sc_wire_buf_fini(&b);
}

static void test_recover_round_trip(void **state)
{
    (void)state;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_recover_encode(&b, "logs", 4, "0123456789abcdef");
    sc_slice ix, aid;
    uint32_t shard;
    assert_int_equal(sc_repl_recover_decode(b.ptr, b.len, &ix, &shard, &aid), SC_OK);
    assert_int_equal(ix.len, 4);
    assert_int_equal(shard, 4);
    assert_int_equal(aid.len, 16);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_equal(sc_repl_recover_decode(b.ptr, cut, &ix, &shard, &aid), SC_ECORRUPT);
    write_seed("recover", 1, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    sc_repl_recover_encode(&b, "logs", 4, "");
    assert_int_equal(sc_repl_recover_decode(b.ptr, b.len, &ix, &shard, &aid), SC_ECORRUPT);
    sc_wire_buf_fini(&b);
}

/* The file recovery messages: round trips, every truncation refused, bad names refused. */
static void test_file_recovery_messages(void **state)
{
    (void)state;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_repl_files_start_encode(&b, "logs", 2, "abc", 1234);
    sc_slice ix, aid;
    uint32_t shard;
    uint64_t n;
    assert_int_equal(sc_repl_files_start_decode(b.ptr, b.len, &ix, &shard, &aid, &n), SC_OK);
    assert_int_equal(shard, 2);
    assert_int_equal(n, 1234);
    assert_int_equal(aid.len, 3);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_not_equal(sc_repl_files_start_decode(b.ptr, cut, &ix, &shard, &aid, &n), SC_OK);
    write_seed("files_start", 2, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    sc_repl_file files[2] = {{"manifest", 300, 0xfeedfacecafebeefull}, {"_0.seg", 1 << 20, 7}};
    sc_repl_files_plan pl = {true, 9, 4411, files, 2}, got;
    sc_wire_buf_init(&b);
    sc_repl_files_plan_encode(&b, &pl);
    assert_int_equal(sc_repl_files_plan_decode(b.ptr, b.len, &got), SC_OK);
    assert_true(got.by_files);
    assert_int_equal(got.rec_id, 9);
    assert_int_equal(got.max_seq_no, 4411);
    assert_int_equal(got.n_files, 2);
    assert_string_equal(got.files[1].name, "_0.seg");
    assert_int_equal(got.files[1].size, 1 << 20);
    assert_int_equal(got.files[0].checksum, 0xfeedfacecafebeefull);
    sc_repl_files_plan_fini(&got);
    for (size_t cut = 0; cut < b.len; cut++) {
        assert_int_not_equal(sc_repl_files_plan_decode(b.ptr, cut, &got), SC_OK);
        sc_repl_files_plan_fini(&got);
    }
    write_seed("files_plan", 3, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    /* names that could leave the staging folder are refused */
    const char *bad[] = {"../manifest", ".hidden", "a/b", "sp ace", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(files[0].name, sizeof files[0].name, "%s", bad[i]);
        sc_wire_buf_init(&b);
        sc_repl_files_plan_encode(&b, &pl);
        assert_int_equal(sc_repl_files_plan_decode(b.ptr, b.len, &got), SC_ECORRUPT);
        sc_repl_files_plan_fini(&got);
        sc_wire_buf_fini(&b);
    }
    sc_repl_files_plan ops = {0};
    sc_wire_buf_init(&b);
    sc_repl_files_plan_encode(&b, &ops);
    assert_int_equal(sc_repl_files_plan_decode(b.ptr, b.len, &got), SC_OK);
    assert_false(got.by_files);
    sc_repl_files_plan_fini(&got);
    sc_wire_buf_fini(&b);

    sc_wire_buf_init(&b);
    sc_repl_chunk_req_encode(&b, 9, 1, 524288, 524288);
    uint64_t id, off;
    uint32_t file, max;
    assert_int_equal(sc_repl_chunk_req_decode(b.ptr, b.len, &id, &file, &off, &max), SC_OK);
    assert_true(id == 9 && file == 1 && off == 524288 && max == 524288);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_not_equal(sc_repl_chunk_req_decode(b.ptr, cut, &id, &file, &off, &max), SC_OK);
    write_seed("chunk_req", 4, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    sc_repl_chunk_req_encode(&b, 9, 1, 0, SC_REPL_CHUNK_MAX + 1);
    assert_int_not_equal(sc_repl_chunk_req_decode(b.ptr, b.len, &id, &file, &off, &max), SC_OK);
    sc_wire_buf_fini(&b);

    sc_wire_buf_init(&b);
    sc_repl_chunk_encode(&b, "hello", 5, 42);
    sc_slice data;
    uint64_t sum;
    assert_int_equal(sc_repl_chunk_decode(b.ptr, b.len, &data, &sum), SC_OK);
    assert_true(data.len == 5 && !memcmp(data.ptr, "hello", 5) && sum == 42);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_not_equal(sc_repl_chunk_decode(b.ptr, cut, &data, &sum), SC_OK);
    write_seed("chunk", 5, b.ptr, b.len);
    sc_wire_buf_fini(&b);

    sc_wire_buf_init(&b);
    sc_repl_finish_encode(&b, "logs", 2, "abc", 9, -1);
    int64_t after;
    assert_int_equal(sc_repl_finish_decode(b.ptr, b.len, &ix, &shard, &aid, &id, &after), SC_OK);
    assert_true(shard == 2 && id == 9 && after == -1);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_not_equal(sc_repl_finish_decode(b.ptr, cut, &ix, &shard, &aid, &id, &after),
                             SC_OK);
    write_seed("finish", 6, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    sc_wire_buf_init(&b);
    sc_repl_finish_encode(&b, "logs", 2, "abc", 9, -2);
    assert_int_equal(sc_repl_finish_decode(b.ptr, b.len, &ix, &shard, &aid, &id, &after),
                     SC_ECORRUPT);
    sc_wire_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_round_trip),
        cmocka_unit_test(test_ops_bad_fields),
        cmocka_unit_test(test_recover_round_trip),
        cmocka_unit_test(test_file_recovery_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
