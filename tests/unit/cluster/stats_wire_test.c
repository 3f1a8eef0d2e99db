/* Tests for cluster/stats_wire.c: round trips of the cluster-wide statistics request and
 * answer (open and absent copies, every counter of a copy), every truncation and a trailing byte refused, empty index
 * names and counts larger than the bytes left refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/stats_wire.h"
#include "wire_check.h"

/* With SCRY_STATSWIRE_SEEDS_DIR set, each encoding is also written there as a seed of
 * tests/fuzz/statswire_fuzz.c (selector byte + body): how tests/fuzz/corpus/statswire/ was
 * made. */
#define write_seed(name, selector, p, n)                                                           \
    wire_write_seed("SCRY_STATSWIRE_SEEDS_DIR", name, selector, p, n)

static sc_status dec_req(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)out;
    sc_stats_copy *c;
    size_t cnt;
    return sc_stats_req_decode(p, n, a, &c, &cnt);
}

static sc_status dec_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)out;
    sc_stats_copy_resp *r;
    size_t cnt;
    return sc_stats_resp_decode(p, n, a, &r, &cnt);
}

static void test_request(void **state)
{
    (void)state;
    sc_stats_copy c[3] = {{sc_slice_cstr("p1"), 0},
                          {sc_slice_cstr("p1"), 5},
                          {sc_slice_cstr("logs-2026.12.02"), 70000}};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_stats_req_encode(c, 3, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_stats_copy *d;
    size_t n;
    assert_int_equal(sc_stats_req_decode(b.ptr, b.len, &a, &d, &n), SC_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(sc_slice_eq(d[i].index, c[i].index));
        assert_int_equal(d[i].shard, c[i].shard);
    }
    wire_check_truncations(b.ptr, b.len, dec_req, NULL);
    write_seed("shard_stats", 0, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    /* an empty index name is corrupt */
    c[1].index = sc_slice_make(NULL, 0);
    sc_wire_buf_init(&b);
    assert_int_equal(sc_stats_req_encode(c, 3, &b), SC_OK);
    assert_int_equal(sc_stats_req_decode(b.ptr, b.len, &a, &d, &n), SC_ECORRUPT);
    sc_wire_buf_fini(&b);
    /* no copies is a valid (empty) request */
    sc_wire_buf_init(&b);
    assert_int_equal(sc_stats_req_encode(c, 0, &b), SC_OK);
    assert_int_equal(sc_stats_req_decode(b.ptr, b.len, &a, &d, &n), SC_OK);
    assert_int_equal(n, 0);
    sc_wire_buf_fini(&b);
    /* a count larger than the bytes left is refused before any allocation */
    uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'x', 0};
    assert_int_equal(sc_stats_req_decode(huge, sizeof huge, &a, &d, &n), SC_ECORRUPT);
    sc_arena_fini(&a);
}

static uint64_t *field(sc_index_stats *s, size_t f)
{
    return (uint64_t *)((char *)s + sc_index_stats_fields[f]);
}

static void test_answer(void **state)
{
    (void)state;
    /* every field of an open copy gets its own value (fields of 1 to 10 bytes on the wire) */
    sc_stats_copy_resp r[3] = {{.open = true}, {.open = false}, {.open = true}};
    for (size_t f = 0; f < SC_INDEX_STATS_N_FIELDS; f++) {
        *field(&r[0].s, f) = 1000 + f;
        *field(&r[2].s, f) = f == 0 ? UINT64_MAX : (1ull << (3 * f + 7)) + f;
    }
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_stats_resp_encode(r, 3, &b), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_stats_copy_resp *d;
    size_t n;
    assert_int_equal(sc_stats_resp_decode(b.ptr, b.len, &a, &d, &n), SC_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(d[i].open, r[i].open);
        for (size_t f = 0; f < SC_INDEX_STATS_N_FIELDS; f++)
            assert_true(*field(&d[i].s, f) == *field(&r[i].s, f));
    }
    wire_check_truncations(b.ptr, b.len, dec_resp, NULL);
    write_seed("shard_stats_resp", 1, b.ptr, b.len);
    sc_wire_buf_fini(&b);
    uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0};
    assert_int_equal(sc_stats_resp_decode(huge, sizeof huge, &a, &d, &n), SC_ECORRUPT);
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
