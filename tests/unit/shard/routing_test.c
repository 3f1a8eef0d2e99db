/* Tests for src/shard/routing.c. Expected hashes and shard numbers were computed with Lucene
 * 8.7's StringHelper.murmurhash3_x86_32 over the UTF-16LE code units (what Elasticsearch's
 * Murmur3HashFunction.hash(String) does) by a small Java program run against the Debian
 * lucene-core jar, for 5 shards with routing_num_shards 5 and 640 (the ES 7+ default). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shard/routing.h"

static void test_murmur_vectors(void **state)
{
    (void)state;
    assert_int_equal(sc_murmur3_32("", 0, 0), 0);
    assert_int_equal(sc_murmur3_32("", 0, 1), 0x514E28B7u);
    assert_int_equal(sc_murmur3_32("hello", 5, 0), 0x248bfa47u);
    assert_int_equal(sc_murmur3_32("The quick brown fox jumps over the lazy dog", 43, 0),
                     0x2e4ff723u);
}

static void test_es_routing(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        int32_t hash;
        uint32_t shard5, shard5_of_640;
    } cases[] = {
        {"", 0, 0, 0},
        {"1", -126235597, 3, 4},
        {"2", -303927213, 2, 3},
        {"hello", -675079799, 1, 4},
        {"doc-42", 1197355641, 1, 0},
        {"abcdefghijklmnop", 36478648, 3, 4},
        {"\xc3\xa9t\xc3\xa9", -1181403715, 0, 3},
        {"\xe6\x97\xa5\xe6\x9c\xac", -1532890893, 2, 4},
        {"\xf0\x9f\x98\x80x", -996154910, 0, 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sc_slice s = sc_slice_cstr(cases[i].id);
        assert_int_equal(sc_routing_hash(s), cases[i].hash);
        assert_int_equal(sc_routing_shard(s, 5, 0), cases[i].shard5);
        assert_int_equal(sc_routing_shard(s, 5, 640), cases[i].shard5_of_640);
        assert_int_equal(sc_routing_shard(s, 1, 1024), 0);
    }
    assert_int_equal(sc_routing_default_num_routing_shards(1), 1024);
    assert_int_equal(sc_routing_default_num_routing_shards(5), 640);
    assert_int_equal(sc_routing_default_num_routing_shards(3), 768);
    assert_int_equal(sc_routing_default_num_routing_shards(600), 1200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_murmur_vectors),
        cmocka_unit_test(test_es_routing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
