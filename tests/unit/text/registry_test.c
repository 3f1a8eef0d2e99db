/* Tests for src/text/registry.c's shared built-ins: every index's registry holds the built-in
 * analyzers, but one set serves them all (a node with thousands of small indices paid ~180 KiB
 * per index for its own copy), freed with the last registry; custom analyzers stay per
 * registry. Other registry behaviour is tested in analyzer_test.c. */
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "text/analyzer.h"
#include "text/internal.h"

static void test_builtins_shared(void **state)
{
    (void)state;
    int64_t base = sc_alloc_pool_bytes(&sc__text_pool);
    sc_analyzer_registry *a, *b;
    sc_analysis_error err;
    assert_int_equal(sc_analyzer_registry_new(NULL, &a, &err), SC_OK);
    int64_t one = sc_alloc_pool_bytes(&sc__text_pool) - base;
    json_t *custom = json_loads("{\"analyzer\":{\"mine\":{\"type\":\"custom\","
                                "\"tokenizer\":\"whitespace\",\"filter\":[\"lowercase\"]}}}",
                                0, NULL);
    assert_non_null(custom);
    assert_int_equal(sc_analyzer_registry_new(custom, &b, &err), SC_OK);
    int64_t second = sc_alloc_pool_bytes(&sc__text_pool) - base - one;
    /* The second registry costs its custom analyzer (and its search_as_you_type variants),
     * not another set of built-ins. */
    assert_true(second * 20 < one);
    const char *names[] = {"standard", "english", "german",         "dutch",
                           "keyword",  "simple",  "standard#2gram", "english#prefix3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const sc_analyzer *x = sc_analyzer_registry_get(a, sc_slice_cstr(names[i]));
        assert_non_null(x);
        assert_ptr_equal(x, sc_analyzer_registry_get(b, sc_slice_cstr(names[i])));
    }
    assert_ptr_equal(sc_analyzer_registry_normalizer(a, sc_slice_cstr("lowercase")),
                     sc_analyzer_registry_normalizer(b, sc_slice_cstr("lowercase")));
    assert_null(sc_analyzer_registry_get(a, sc_slice_cstr("mine")));
    assert_non_null(sc_analyzer_registry_get(b, sc_slice_cstr("mine")));
    assert_non_null(sc_analyzer_registry_get(b, sc_slice_cstr("mine#3gram")));
    assert_null(sc_analyzer_registry_get(a, sc_slice_cstr("mine#3gram")));
    /* The shared set outlives the first registry and works for the second alone. */
    sc_analyzer_registry_free(a);
    const sc_analyzer *en = sc_analyzer_registry_get(b, sc_slice_cstr("english"));
    assert_non_null(en);
    assert_ptr_equal(sc_analyzer_registry_default(b),
                     sc_analyzer_registry_get(b, sc_slice_cstr("standard")));
    sc_analyzer_registry_free(b);
    /* Freed with the last registry; a new one builds it again. */
    assert_int_equal(sc_alloc_pool_bytes(&sc__text_pool), base);
    assert_int_equal(sc_analyzer_registry_new(NULL, &a, &err), SC_OK);
    assert_int_equal(sc_alloc_pool_bytes(&sc__text_pool) - base, one);
    sc_analyzer_registry_free(a);
    assert_int_equal(sc_alloc_pool_bytes(&sc__text_pool), base);
    json_decref(custom);
}

/* Registries made and freed from many threads at once share one set safely. */
static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        sc_analyzer_registry *r;
        sc_analysis_error err;
        if (sc_analyzer_registry_new(NULL, &r, &err) != SC_OK)
            return (void *)1;
        if (!sc_analyzer_registry_get(r, sc_slice_cstr("french")))
            return (void *)1;
        sc_analyzer_registry_free(r);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    int64_t base = sc_alloc_pool_bytes(&sc__text_pool);
    sc_analyzer_registry *keep;
    sc_analysis_error err;
    assert_int_equal(sc_analyzer_registry_new(NULL, &keep, &err), SC_OK);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *ret;
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    sc_analyzer_registry_free(keep);
    /* and without a registry kept alive, the set is built and freed over and over */
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *ret;
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    assert_int_equal(sc_alloc_pool_bytes(&sc__text_pool), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_shared),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
