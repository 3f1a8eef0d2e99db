/* Tests for the idle path of a shard (sc_shard_release_idle in src/shard/shard.c) and of the
 * scheduler's inactivity (src/shard/sched.c): a shard that went idle gave its indexing buffer
 * back, yet still returns every document with its version, takes writes (and conflicts) again,
 * and survives a restart without a flush; refresh-off buffers stay unsearchable; the scheduler
 * releases shards without writes for its inactive time, again after each new write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "shard/sched.h"
#include "shard/shard.h"
#include "shard_fixture.h"

static int setup(void **state)
{
    (void)state;
    return fx_root_setup("idle-test");
}

static int teardown(void **state)
{
    (void)state;
    return fx_root_teardown();
}

static sc_shard *open_at(const char *name, sc_shard_sched *sc, int32_t refresh_ms)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, name);
    sc_shard_config cfg = {0};
    cfg.path = path;
    cfg.refresh_interval_ms = refresh_ms;
    cfg.sched = sc;
    cfg.no_background_thread = sc == NULL;
    cfg.no_background_merges = sc == NULL;
    sc_shard *s = NULL;
    sc_shard_error err;
    sc_status st = sc_shard_open(&cfg, &s, &err);
    if (st != SC_OK)
        fail_msg("open %s failed: %s (%s)", name, sc_status_str(st), err.type ? err.reason : "");
    return s;
}

static void del(sc_shard *s, const char *id)
{
    sc_shard_error err;
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_status st = sc_shard_delete(s, sc_slice_cstr(id), &o, NULL, &err);
    if (st != SC_OK)
        fail_msg("delete %s failed: %s", id, sc_status_str(st));
}

static sc_shard_stats stats(sc_shard *s)
{
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
    return st;
}

/* The realtime GET of id: its source must be want (NULL: not found) at version ver. */
static void expect_doc(sc_shard *s, const char *id, const char *want, int64_t ver)
{
    sc_shard_doc d;
    assert_int_equal(sc_shard_get(s, sc_slice_cstr(id), &d), SC_OK);
    if (!want) {
        assert_false(d.found);
        return;
    }
    if (!d.found)
        fail_msg("%s not found", id);
    assert_int_equal(d.source_len, strlen(want));
    assert_memory_equal(d.source, want, d.source_len);
    assert_int_equal(d.version, ver);
    sc_shard_doc_fini(&d);
}

/* 40 documents, some refreshed into segments, some updated, one deleted, the rest buffered. */
static void fill(sc_shard *s)
{
    char id[32], src[64];
    for (int i = 0; i < 30; i++) {
        snprintf(id, sizeof id, "d%d", i);
        snprintf(src, sizeof src, "{\"f\":\"first %d\",\"n\":%d}", i, i);
        put(s, id, src);
    }
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    put(s, "d3", "{\"f\":\"second 3\"}");
    del(s, "d4");
    for (int i = 30; i < 40; i++) {
        snprintf(id, sizeof id, "d%d", i);
        snprintf(src, sizeof src, "{\"f\":\"first %d\",\"n\":%d}", i, i);
        put(s, id, src);
    }
}

/* Everything fill() wrote (and with late, "late", written after the idle release). */
static void expect_filled(sc_shard *s, bool late)
{
    char id[32], src[64];
    for (int i = 0; i < 40; i++) {
        if (i == 3 || i == 4)
            continue;
        snprintf(id, sizeof id, "d%d", i);
        snprintf(src, sizeof src, "{\"f\":\"first %d\",\"n\":%d}", i, i);
        expect_doc(s, id, src, 1);
    }
    expect_doc(s, "d3", "{\"f\":\"second 3\"}", 2);
    expect_doc(s, "d4", NULL, 0);
    if (late)
        expect_doc(s, "late", "{\"f\":\"after idle\"}", 1);
}

static void test_release_keeps_every_write(void **state)
{
    (void)state;
    sc_shard *s = open_at("a", NULL, 1000);
    /* A shard nobody wrote to holds no indexing buffer at all. */
    assert_int_equal(stats(s).indexing_buffer_bytes, 0);
    fill(s);
    sc_shard_stats st = stats(s);
    assert_int_equal(st.buffered_docs, 11);
    assert_true(st.indexing_buffer_bytes > 0);
    assert_int_equal(visible(s), 30);

    assert_int_equal(sc_shard_release_idle(s), SC_OK);
    st = stats(s);
    assert_int_equal(st.indexing_buffer_bytes, 0);
    assert_int_equal(st.buffered_docs, 0);
    assert_int_equal(st.translog_ops, 0); /* committed */
    assert_false(sc_shard_needs_flush(s));
    assert_int_equal(st.n_docs, 39);
    assert_int_equal(visible(s), 39);
    expect_filled(s, false);
    /* A second release with nothing new commits nothing. */
    uint64_t flushes = st.n_flushes;
    assert_int_equal(sc_shard_release_idle(s), SC_OK);
    assert_int_equal(stats(s).n_flushes, flushes);

    /* Writes again: versions continue, conflicts are still detected. */
    sc_shard_result r = put(s, "d3", "{\"f\":\"third 3\"}");
    assert_int_equal(r.version, 3);
    assert_true(stats(s).indexing_buffer_bytes > 0);
    sc_shard_error err;
    sc_shard_write_opts o = sc_shard_write_defaults();
    o.op_type = SC_SHARD_OP_CREATE;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("d0"), sc_slice_cstr("{}"), &o, NULL, &err),
                     SC_ECONFLICT);
    put(s, "d3", "{\"f\":\"second 3\"}");
    put(s, "late", "{\"f\":\"after idle\"}");
    expect_doc(s, "d3", "{\"f\":\"second 3\"}", 4);
    put(s, "d3x", "{}");
    del(s, "d3x");

    /* Closed without a flush (as a crash): the commit of the release plus the translog of the
     * writes after it give everything back. */
    sc_shard_close(s, false);
    s = open_at("a", NULL, 1000);
    assert_int_equal(visible(s), 40);
    char id[32], src[64];
    for (int i = 0; i < 40; i++) {
        if (i == 3 || i == 4)
            continue;
        snprintf(id, sizeof id, "d%d", i);
        snprintf(src, sizeof src, "{\"f\":\"first %d\",\"n\":%d}", i, i);
        expect_doc(s, id, src, 1);
    }
    expect_doc(s, "d3", "{\"f\":\"second 3\"}", 4);
    expect_doc(s, "late", "{\"f\":\"after idle\"}", 1);
    expect_doc(s, "d3x", NULL, 0);
    sc_shard_close(s, true);
}

/* With refresh off, buffered documents stay unsearchable through an idle release (a flush
 * would publish them), and stay durable in the translog. */
static void test_refresh_off_keeps_buffer(void **state)
{
    (void)state;
    sc_shard *s = open_at("b", NULL, -1);
    put(s, "x", "{\"f\":\"one\"}");
    put(s, "y", "{\"f\":\"two\"}");
    assert_int_equal(visible(s), 0);
    assert_int_equal(sc_shard_release_idle(s), SC_OK);
    assert_int_equal(visible(s), 0);
    sc_shard_stats st = stats(s);
    assert_int_equal(st.buffered_docs, 2);
    assert_true(st.indexing_buffer_bytes > 0);
    expect_doc(s, "x", "{\"f\":\"one\"}", 1); /* realtime get still sees it */
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(visible(s), 2);
    assert_int_equal(sc_shard_release_idle(s), SC_OK);
    assert_int_equal(stats(s).indexing_buffer_bytes, 0);
    sc_shard_close(s, false);
    s = open_at("b", NULL, -1);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(visible(s), 2);
    sc_shard_close(s, false);
}

/* Waits up to 30 s until every shard is released (no buffer, nothing to commit); returns how
 * many are. */
static size_t wait_idle(sc_shard **s, size_t n)
{
    size_t ok = 0;
    for (int round = 0; round < 600 && ok < n; round++) {
        ok = 0;
        for (size_t i = 0; i < n; i++)
            ok += stats(s[i]).indexing_buffer_bytes == 0 && !sc_shard_needs_flush(s[i]);
        if (ok < n)
            sleep_ms(50);
    }
    return ok;
}

#define N_SHARDS 40

/* The scheduler releases shards without writes for its inactive time (no call from the test),
 * and again once they were written to and went quiet. */
static void test_scheduler_releases_inactive_shards(void **state)
{
    (void)state;
    sc_shard_sched *sc;
    assert_int_equal(sc_shard_sched_new(2, 1, &sc), SC_OK);
    sc_shard_sched_set_inactive_ms(sc, 150);
    sc_shard *s[N_SHARDS];
    char name[32], id[32];
    for (int i = 0; i < N_SHARDS; i++) {
        snprintf(name, sizeof name, "s%d", i);
        s[i] = open_at(name, sc, 50);
        for (int k = 0; k < 3; k++) {
            snprintf(id, sizeof id, "%d-%d", i, k);
            put(s[i], id, "{\"f\":\"small doc\"}");
        }
    }
    assert_int_equal(wait_idle(s, N_SHARDS), N_SHARDS);
    for (int i = 0; i < N_SHARDS; i++) {
        assert_int_equal(visible(s[i]), 3);
        assert_int_equal(stats(s[i]).translog_ops, 0);
    }
    /* Written again: a buffer, then released again after the next quiet period. */
    for (int i = 0; i < N_SHARDS; i += 2) {
        snprintf(id, sizeof id, "%d-again", i);
        put(s[i], id, "{\"f\":\"again\"}");
        assert_true(stats(s[i]).indexing_buffer_bytes > 0);
    }
    assert_int_equal(wait_idle(s, N_SHARDS), N_SHARDS);
    for (int i = 0; i < N_SHARDS; i++)
        assert_int_equal(visible(s[i]), i % 2 == 0 ? 4 : 3);
    for (int i = 0; i < N_SHARDS; i++)
        sc_shard_close(s[i], false);
    sc_shard_sched_free(sc);
    /* Reopened: everything is in the commits the releases made. */
    for (int i = 0; i < N_SHARDS; i++) {
        snprintf(name, sizeof name, "s%d", i);
        sc_shard *r = open_at(name, NULL, 1000);
        assert_int_equal(visible(r), i % 2 == 0 ? 4 : 3);
        assert_int_equal(stats(r).translog_ops, 0);
        sc_shard_close(r, false);
    }
}

/* Inactive time 0: the scheduler never releases anything. */
static void test_scheduler_never(void **state)
{
    (void)state;
    sc_shard_sched *sc;
    assert_int_equal(sc_shard_sched_new(1, 1, &sc), SC_OK);
    sc_shard_sched_set_inactive_ms(sc, 0);
    sc_shard *s = open_at("never", sc, 20);
    put(s, "a", "{\"f\":\"x\"}");
    for (int round = 0; round < 100 && visible(s) == 0; round++)
        sleep_ms(50);
    assert_int_equal(visible(s), 1);
    sleep_ms(500);
    sc_shard_stats st = stats(s);
    assert_true(st.indexing_buffer_bytes > 0);
    assert_int_equal(st.n_flushes, 0);
    sc_shard_close(s, false);
    sc_shard_sched_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_release_keeps_every_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refresh_off_keeps_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheduler_releases_inactive_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheduler_never, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
