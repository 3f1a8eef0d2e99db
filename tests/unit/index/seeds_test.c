/* The segment fuzzer's seed corpus must be at the current format version, or the fuzzer only
 * exercises the version check: every seed opens (checksum verified) and reads completely.
 * Regenerate with scripts/fuzz_seeds.sh after a format change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/file.h"
#include "index/segment.h"
#include "readall.h"

static void test_seeds_open(void **state)
{
    (void)state;
    static const char *const seeds[] = {"small.seg", "blocks.seg", "skip2.seg", "vectors.seg",
                                        "dict.seg"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/segment/%s", SCRY_SOURCE_DIR, seeds[i]);
        uint8_t *bytes;
        size_t len;
        assert_int_equal(sc_file_read_all(path, &bytes, &len), SC_OK);
        sc_segment *seg;
        sc_index_error err;
        sc_status st = sc_segment_open_bytes(sc_slice_make(bytes, len), seeds[i], true, &seg, &err);
        if (st != SC_OK)
            fail_msg("%s does not open (%s): run scripts/fuzz_seeds.sh", seeds[i],
                     sc_status_str(st));
        uint64_t acc = 0;
        assert_int_equal(t_read_all(seg, &acc), SC_OK);
        assert_true(sc_segment_n_docs(seg) >= 40);
        sc_segment_unref(seg);
        free(bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_seeds_open)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
