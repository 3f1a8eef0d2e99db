/* Unit tests for cluster/ctx_wire.c: the clustered scroll / point-in-time messages, the
 * _terms_enum messages and the client-facing context id. Round trips with every field set,
 * every truncation and a trailing byte refused, bad versions and flags refused, counts larger
 * than the bytes left refused before allocating, unsorted terms refused, and ids that are not
 * URL-safe base64 of the grammar refused. With SCRY_WIRE_SEEDS_DIR set, each encoding is also
 * written there as a seed of tests/fuzz/ctxwire_fuzz.c (selector byte + body): how
 * tests/fuzz/corpus/ctxwire/ was made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/ctx_wire.h"
#include "wire_check.h"

/* Every proper prefix of an encoding is refused, as is a trailing byte and a wrong version. */
static void check_truncations(const uint8_t *p, size_t n, wire_decode_fn dec, void *out)
{
    wire_check_truncations(p, n, dec, out);
    uint8_t *q = malloc(n);
    memcpy(q, p, n);
    q[0] = SC_CTX_WIRE_VERSION + 1;
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    assert_int_equal(dec(q, n, &a, out), SC_ECORRUPT);
    sc_arena_fini(&a);
    free(q);
}

static sc_status dec_query(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_ctx_query_decode(p, n, a, out);
}
static sc_status dec_query_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    (void)a;
    return sc_ctx_query_resp_decode(p, n, out);
}
static sc_status dec_free(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_ctx_free_decode(p, n, a, out);
}
static sc_status dec_terms_req(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_terms_req_decode(p, n, a, out);
}
static sc_status dec_terms_resp(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_terms_resp_decode(p, n, a, out);
}
static sc_status dec_id(const uint8_t *p, size_t n, sc_arena *a, void *out)
{
    return sc_ctx_id_decode(p, n, a, out);
}

static void test_query(void **state)
{
    (void)state;
    uint64_t skip[3] = {0, 17, 123456};
    const char inner[] = "\x02inner node query";
    sc_ctx_query q = {.flags = SC_CTX_PIT,
                      .seq = 42,
                      .keep_alive_ms = 60000,
                      .page_size = 37,
                      .skip = skip,
                      .n_skip = 3,
                      .node_query = sc_slice_make(inner, sizeof inner - 1)};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_ctx_query_encode(&q, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "ctx_query", 0, b.ptr, b.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_ctx_query d;
    assert_int_equal(sc_ctx_query_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_int_equal(d.flags, SC_CTX_PIT);
    assert_int_equal(d.seq, 42);
    assert_int_equal(d.keep_alive_ms, 60000);
    assert_int_equal(d.page_size, 37);
    assert_int_equal(d.n_skip, 3);
    assert_int_equal(d.skip[1], 17);
    assert_int_equal(d.skip[2], 123456);
    assert_int_equal(d.node_query.len, sizeof inner - 1);
    assert_memory_equal(d.node_query.ptr, inner, sizeof inner - 1);
    check_truncations(b.ptr, b.len, dec_query, &d);
    /* unknown flag bits, and OPEN with a context number, are refused */
    b.ptr[1] = 0x80;
    assert_int_equal(sc_ctx_query_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
    b.ptr[1] = SC_CTX_OPEN;
    assert_int_equal(sc_ctx_query_decode(b.ptr, b.len, &a, &d), SC_ECORRUPT);
    /* a skip count larger than the bytes left, before any allocation */
    static const uint8_t huge[] = {SC_CTX_WIRE_VERSION, 0, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f};
    assert_int_equal(sc_ctx_query_decode(huge, sizeof huge, &a, &d), SC_ECORRUPT);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
}

static void test_query_resp_and_free(void **state)
{
    (void)state;
    sc_ctx_query_resp r = {.seq = 9, .n_shards = 4, .node_query_resp = sc_slice_cstr("xyz")};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_ctx_query_resp_encode(&r, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "ctx_query_resp", 1, b.ptr, b.len);
    sc_ctx_query_resp d;
    assert_int_equal(sc_ctx_query_resp_decode(b.ptr, b.len, &d), SC_OK);
    assert_int_equal(d.seq, 9);
    assert_int_equal(d.n_shards, 4);
    assert_int_equal(d.node_query_resp.len, 3);
    check_truncations(b.ptr, b.len, dec_query_resp, &d);
    sc_wire_buf_fini(&b);

    uint64_t seqs[2] = {5, UINT64_C(1) << 40};
    sc_ctx_free f = {.all_scrolls = false, .seq = seqs, .n = 2};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_ctx_free_encode(&f, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "ctx_free", 2, b.ptr, b.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_ctx_free df;
    assert_int_equal(sc_ctx_free_decode(b.ptr, b.len, &a, &df), SC_OK);
    assert_false(df.all_scrolls);
    assert_int_equal(df.n, 2);
    assert_int_equal(df.seq[1], UINT64_C(1) << 40);
    check_truncations(b.ptr, b.len, dec_free, &df);
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
}

static void test_terms(void **state)
{
    (void)state;
    uint32_t s1[] = {0, 3}, s2[] = {5};
    sc_terms_req_index ix[] = {{sc_slice_cstr("docs"), s1, 2}, {sc_slice_cstr("logs"), s2, 1}};
    sc_terms_req q = {.field = sc_slice_cstr("tag"),
                      .prefix = sc_slice_cstr("t1"),
                      .case_insensitive = true,
                      .size = 10,
                      .indices = ix,
                      .n_indices = 2};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_terms_req_encode(&q, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "terms_req", 3, b.ptr, b.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_terms_req d;
    assert_int_equal(sc_terms_req_decode(b.ptr, b.len, &a, &d), SC_OK);
    assert_int_equal(d.n_indices, 2);
    assert_true(d.case_insensitive);
    assert_int_equal(d.size, 10);
    assert_int_equal(d.indices[0].n_shards, 2);
    assert_int_equal(d.indices[0].shards[1], 3);
    assert_int_equal(d.indices[1].shards[0], 5);
    assert_memory_equal(d.indices[1].name.ptr, "logs", 4);
    check_truncations(b.ptr, b.len, dec_terms_req, &d);
    sc_wire_buf_fini(&b);

    sc_slice terms[] = {sc_slice_cstr("a"), sc_slice_cstr("ab"), sc_slice_cstr("b")};
    sc_terms_resp r = {.successful = 5, .failed = 1, .terms = terms, .n_terms = 3};
    sc_wire_buf_init(&b);
    assert_int_equal(sc_terms_resp_encode(&r, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "terms_resp", 4, b.ptr, b.len);
    sc_terms_resp dr;
    assert_int_equal(sc_terms_resp_decode(b.ptr, b.len, &a, &dr), SC_OK);
    assert_int_equal(dr.n_terms, 3);
    assert_int_equal(dr.successful, 5);
    assert_int_equal(dr.failed, 1);
    assert_memory_equal(dr.terms[1].ptr, "ab", 2);
    check_truncations(b.ptr, b.len, dec_terms_resp, &dr);
    sc_wire_buf_fini(&b);
    /* unsorted or duplicated terms are refused */
    sc_slice dup[] = {sc_slice_cstr("b"), sc_slice_cstr("a")};
    r.terms = dup;
    r.n_terms = 2;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_terms_resp_encode(&r, &b), SC_OK);
    assert_int_equal(sc_terms_resp_decode(b.ptr, b.len, &a, &dr), SC_ECORRUPT);
    sc_wire_buf_fini(&b);
    sc_arena_fini(&a);
}

static void test_id(void **state)
{
    (void)state;
    sc_ctx_id_entry e[] = {{sc_slice_cstr("node-a"), 3}, {sc_slice_cstr("node-b"), 77}};
    sc_ctx_id id = {.pit = true,
                    .coordinator = sc_slice_cstr("node-c"),
                    .coordinator_seq = 12,
                    .entries = e,
                    .n = 2};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    assert_int_equal(sc_ctx_id_encode(&id, &b), SC_OK);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "ctx_id", 5, b.ptr, b.len);
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_ctx_id d;
    check_truncations(b.ptr, b.len, dec_id, &d);
    sc_wire_buf_fini(&b);
    char *text = sc_ctx_id_text(&id);
    assert_non_null(text);
    wire_write_seed("SCRY_WIRE_SEEDS_DIR", "ctx_id_text", 6, (const uint8_t *)text, strlen(text));
    for (const char *c = text; *c; c++) /* usable in a URL path as it is */
        assert_true((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                    (*c >= '0' && *c <= '9') || *c == '-' || *c == '_');
    assert_int_equal(sc_ctx_id_parse(text, &a, &d), SC_OK);
    assert_true(d.pit);
    assert_int_equal(d.coordinator_seq, 12);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.entries[1].seq, 77);
    assert_memory_equal(d.coordinator.ptr, "node-c", 6);
    assert_memory_equal(d.entries[0].node.ptr, "node-a", 6);
    /* not ids: other alphabets, lengths, garbage, a single node's id, extra characters */
    const char *bad[] = {"", "AAAA", "not-a-scroll-id", "scry-scroll-abc-1", "a+b/", "A", "AA=="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sc_ctx_id_parse(bad[i], &a, &d), SC_EINVAL);
    size_t len = strlen(text);
    char *longer = malloc(len + 4);
    snprintf(longer, len + 4, "%sxxx", text);
    assert_int_equal(sc_ctx_id_parse(longer, &a, &d), SC_EINVAL);
    free(longer);
    /* an empty or oversized node name is refused */
    sc_ctx_id_entry empty[] = {{sc_slice_make("", 0), 1}};
    id.entries = empty;
    id.n = 1;
    char *t2 = sc_ctx_id_text(&id);
    assert_int_equal(sc_ctx_id_parse(t2, &a, &d), SC_EINVAL);
    free(t2);
    free(text);
    sc_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_query_resp_and_free),
        cmocka_unit_test(test_terms),
        cmocka_unit_test(test_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
