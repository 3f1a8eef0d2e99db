/* Tests for basic-auth users files (src/http/auth.c): hashing, loading, checking (with the
 * cache), malformed files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/auth.h"

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/scry-auth-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_hash_and_check(void **state)
{
    (void)state;
    char h1[128], h2[128];
    assert_int_equal(sc_http_auth_hash("pw one", h1, sizeof h1), SC_OK);
    assert_int_equal(sc_http_auth_hash("pw one", h2, sizeof h2), SC_OK);
    assert_memory_equal(h1, "$6$", 3);
    assert_string_not_equal(h1, h2); /* random salts */
    char small[16];
    assert_int_equal(sc_http_auth_hash("x", small, sizeof small), SC_EINVAL);

    char text[512];
    snprintf(text, sizeof text, "# users\n\n  alice:%s\nbob:%s\r\n", h1, h2);
    char *path = write_tmp(text);
    sc_http_auth *a;
    assert_int_equal(sc_http_auth_load(path, &a), SC_OK);
    unlink(path);
    for (int round = 0; round < 3; round++) { /* later rounds hit the cache */
        assert_true(sc_http_auth_check(a, "alice", "pw one"));
        assert_true(sc_http_auth_check(a, "bob", "pw one"));
        assert_false(sc_http_auth_check(a, "alice", "pw one "));
        assert_false(sc_http_auth_check(a, "alice", "pw on"));
        assert_false(sc_http_auth_check(a, "alice", ""));
        assert_false(sc_http_auth_check(a, "carol", "pw one"));
        assert_false(sc_http_auth_check(a, "", "pw one"));
    }
    /* More successful pairs than cache slots: all still verify. */
    for (int i = 0; i < 70; i++)
        assert_true(sc_http_auth_check(a, i % 2 ? "alice" : "bob", "pw one"));
    sc_http_auth_free(a);
    sc_http_auth_free(NULL);
}

static void test_bad_files(void **state)
{
    (void)state;
    sc_http_auth *a = (sc_http_auth *)1;
    assert_int_equal(sc_http_auth_load("/nonexistent/scry-users", &a), SC_EIO);
    assert_null(a);
    const char *bad[] = {"alice:plain\n", ":$6$abc$def\n", "alice\n", "# only comments\n\n",
                         "alice:$6$a$b:extra\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = write_tmp(bad[i]);
        assert_int_equal(sc_http_auth_load(path, &a), SC_EINVAL);
        assert_null(a);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_and_check),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
