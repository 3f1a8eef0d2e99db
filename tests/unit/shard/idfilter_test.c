/* Tests for src/shard/idfilter.c (a segment's `_id` membership filter and the lookup behind
 * it): every `_id` term of a segment is reported present (a false "absent" would lose an id's
 * versions and duplicate its doc), foreign ids are mostly reported absent (~1 %), and
 * sc__slot_find finds each id's live doc, skipping the deleted docs under the same term.
 * Seeded; the seed is printed (SCRY_SEED replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/hashmap.h"
#include "index/terms.h"
#include "mapping/mapping.h"
#include "shard/internal.h"
#include "shard/shard.h"

#include "shard_dir.h"

#include "test_rng.h"

static int setup(void **state)
{
    (void)state;
    return shard_dir_setup("idfilter-test");
}

/* Id i of the run: random bytes (NUL included) of 1..40 bytes, then i, unique per i. */
static sc_slice make_id(uint32_t i, uint64_t salt, char *buf)
{
    uint64_t r = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
    size_t n = r % 40;
    for (size_t k = 0; k < n; k++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        buf[k] = (char)(r >> 56);
    }
    n += (size_t)snprintf(buf + n, 32, "#%u", i);
    return sc_slice_make((const uint8_t *)buf, n);
}

enum {
    N = 20000
};

static void test_every_term_present(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    printf("idfilter_test seed %llu (SCRY_SEED)\n", seed);
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    uint64_t salt = next_rand();
    sc_shard_config cfg = {.path = dir,
                           .no_background_thread = true,
                           .refresh_interval_ms = -1,
                           .durability_async = true};
    sc_shard *s = NULL;
    assert_int_equal(sc_shard_open(&cfg, &s, NULL), SC_OK);
    char b[128];
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_result r;
    sc_shard_error err;
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(sc_shard_index(s, make_id(i, salt, b), sc_slice_cstr("{}"), &o, &r, &err),
                         SC_OK);
    /* every 3rd id overwritten in the same buffer: a term with a deleted and a live doc */
    for (uint32_t i = 0; i < N; i += 3)
        assert_int_equal(
            sc_shard_index(s, make_id(i, salt, b), sc_slice_cstr("{\"x\":1}"), &o, &r, &err),
            SC_OK);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(s->slots.len, 1);
    sc__slot *sl = s->slots.ptr[0];
    sc__idfilter f;
    assert_int_equal(sc__idfilter_build(sl->seg, &f), SC_OK);
    /* ~10 bits an id */
    assert_true(sc__idfilter_bytes(&f) * 8 >= (size_t)N * 10);
    assert_true(sc__idfilter_bytes(&f) * 8 < (size_t)N * 10 + 1024);
    /* every term of the segment, read from its term dictionary */
    const sc_field_info *fi = sc_segment_field(sl->seg, sc_slice_cstr("_id"));
    assert_non_null(fi);
    sc_terms_iter it;
    assert_int_equal(sc_terms_iter_init(&it, sl->seg, fi), SC_OK);
    uint64_t n_terms = 0;
    for (;;) {
        bool has;
        assert_int_equal(sc_terms_next(&it, &has), SC_OK);
        if (!has)
            break;
        if (!sc__idfilter_maybe(&f, sc_hashmap_hash(sc_terms_term(&it))))
            fail_msg("seed %llu: term %llu of the segment reported absent", seed,
                     (unsigned long long)n_terms);
        n_terms++;
    }
    sc_terms_iter_fini(&it);
    assert_int_equal(n_terms, N);
    /* foreign ids: about 1 % reported present */
    uint32_t fp = 0;
    for (uint32_t i = N; i < 11 * N; i++)
        fp += sc__idfilter_maybe(&f, sc_hashmap_hash(make_id(i, salt, b)));
    printf("idfilter_test: %u of %u foreign ids reported present (%.2f %%)\n", fp, 10 * N,
           100.0 * fp / (10.0 * N));
    assert_true(fp < 10 * N / 40); /* under 2.5 % */
    sc__idfilter_fini(&f);
    /* the lookup: each id at its live doc (the overwritten ones at the second, live doc) */
    for (uint32_t i = 0; i < N; i++) {
        sc_slice id = make_id(i, salt, b);
        uint32_t doc, want = i % 3 == 0 ? N + i / 3 : i;
        bool found;
        assert_int_equal(sc__slot_find(sl, id, sc_hashmap_hash(id), &doc, &found), SC_OK);
        if (!found || doc != want)
            fail_msg("seed %llu: id %u found %d at doc %u, expected doc %u", seed, i, found, doc,
                     want);
    }
    for (uint32_t i = N; i < N + 2000; i++) {
        sc_slice id = make_id(i, salt, b);
        uint32_t doc;
        bool found;
        assert_int_equal(sc__slot_find(sl, id, sc_hashmap_hash(id), &doc, &found), SC_OK);
        assert_false(found);
    }
    sc_shard_close(s, false);
}

/* Nested children carry their root's `_id` term: the lookup must find the root (its versions,
 * its source), never a child, in a refreshed segment and after a merge, and an overwrite
 * deletes the whole block (the search sees one root per id). */
static void test_nested_children(void **state)
{
    (void)state;
    json_t *mj = json_loads("{\"properties\":{\"c\":{\"type\":\"nested\"}}}", 0, NULL);
    assert_non_null(mj);
    sc_mapping *m = NULL;
    sc_mapping_error merr;
    assert_int_equal(sc_mapping_new(mj, &m, &merr), SC_OK);
    json_decref(mj);
    sc_shard_config cfg = {.path = dir,
                           .no_background_thread = true,
                           .refresh_interval_ms = -1,
                           .durability_async = true,
                           .mapping = m};
    sc_shard *s = NULL;
    assert_int_equal(sc_shard_open(&cfg, &s, NULL), SC_OK);
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_result r;
    sc_shard_error err;
    char id[32], src[128];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 30; i++) {
            snprintf(id, sizeof id, "n%d", i);
            snprintf(src, sizeof src, "{\"r\":%d,\"c\":[{\"x\":1},{\"x\":2},{\"x\":%d}]}", round,
                     i);
            assert_int_equal(sc_shard_index(s, sc_slice_cstr(id), sc_slice_cstr(src), &o, &r, &err),
                             SC_OK);
            assert_int_equal(r.version, round + 1);
            assert_int_equal(r.created, round == 0);
        }
        assert_int_equal(sc_shard_refresh(s), SC_OK);
        if (round == 2)
            assert_int_equal(sc_shard_force_merge(s, 1), SC_OK);
        for (int i = 0; i < 30; i++) {
            snprintf(id, sizeof id, "n%d", i);
            sc_shard_doc d;
            assert_int_equal(sc_shard_get(s, sc_slice_cstr(id), &d), SC_OK);
            assert_true(d.found);
            assert_int_equal(d.version, round + 1);
            snprintf(src, sizeof src, "{\"r\":%d,", round);
            assert_memory_equal(d.source, src, strlen(src));
            sc_shard_doc_fini(&d);
        }
        const sc_shard_snapshot *snap = sc_shard_searcher_acquire(s);
        assert_int_equal(snap->n_docs, 30);
        sc_shard_searcher_release(snap);
    }
    sc_shard_close(s, false);
    sc_mapping_unref(m);
}

/* A segment with no ids (nested children only are impossible here: an empty refresh makes no
 * segment), and an empty filter, answer "absent". */
static void test_empty_filter(void **state)
{
    (void)state;
    sc__idfilter f = {0};
    assert_false(sc__idfilter_maybe(&f, 12345));
    sc__idfilter_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_term_present, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_children, setup, teardown),
        cmocka_unit_test(test_empty_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
