/* Tests for src/shard/sched.c: many shards share one scheduler's fixed threads; timed refresh
 * makes every shard's writes searchable; a full buffer is refreshed at once; merges run in the
 * background; async durability syncs on its timer; closing shards while their jobs run is
 * safe; and the process's thread count does not grow with the number of shards. */
#include <dirent.h>
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

#define N_SHARDS 300

static int setup(void **state)
{
    (void)state;
    return fx_root_setup("sched-test");
}

static int teardown(void **state)
{
    (void)state;
    return fx_root_teardown();
}

static size_t n_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    size_t n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static sc_shard *open_shard(sc_shard_sched *sc, int i, int32_t refresh_ms, bool async)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%d", root, i);
    sc_shard_config cfg = {0};
    cfg.path = path;
    cfg.refresh_interval_ms = refresh_ms;
    cfg.durability_async = async;
    cfg.sync_interval_ms = 20;
    cfg.sched = sc;
    sc_shard *s = NULL;
    sc_shard_error err;
    sc_status st = sc_shard_open(&cfg, &s, &err);
    if (st != SC_OK)
        fail_msg("open %d failed: %s (%s)", i, sc_status_str(st), err.type ? err.reason : "");
    return s;
}

/* The waits below are hang guards, not timing assertions: 300 shards' refreshes and merges on
 * 4 threads take a few seconds on a quiet machine, but more than 20 s under ASan beside other
 * tests on a loaded 2-core machine. */
#define WAIT_ROUNDS 2400 /* x 50 ms = 120 s */

/* Waits up to WAIT_ROUNDS x 50 ms for every shard to show `want` docs; returns how many do. */
static size_t wait_visible(sc_shard **shards, size_t n, uint64_t want)
{
    size_t ok = 0;
    for (int round = 0; round < WAIT_ROUNDS && ok < n; round++) {
        ok = 0;
        for (size_t i = 0; i < n; i++)
            ok += visible(shards[i]) == want;
        if (ok < n)
            sleep_ms(50);
    }
    return ok;
}

static void test_many_shards_fixed_threads(void **state)
{
    (void)state;
    sc_shard_sched *sc;
    assert_int_equal(sc_shard_sched_new(2, 1, &sc), SC_OK);
    assert_int_equal(sc_shard_sched_n_threads(sc), 4);
    size_t before = n_threads();
    sc_shard **shards = calloc(N_SHARDS, sizeof *shards);
    assert_non_null(shards);
    for (int i = 0; i < N_SHARDS; i++)
        shards[i] = open_shard(sc, i, 30, false);
    assert_int_equal(sc_shard_sched_n_shards(sc), N_SHARDS);
    /* Opening shards starts no thread of its own. */
    assert_int_equal(n_threads(), before);
    char id[32];
    for (int i = 0; i < N_SHARDS; i++) {
        snprintf(id, sizeof id, "d%d", i);
        put(shards[i], id, "{\"f\":\"hello world\"}");
    }
    /* Nobody calls refresh: the scheduler's timed refresh makes every write visible. */
    assert_int_equal(wait_visible(shards, N_SHARDS, 1), N_SHARDS);
    /* Several rounds of refreshes make segments; background merges keep their number low. */
    for (int round = 0; round < 25; round++) {
        for (int i = 0; i < 20; i++) {
            snprintf(id, sizeof id, "r%d", round);
            put(shards[i], id, "{\"f\":\"again\"}");
        }
        sleep_ms(60);
    }
    assert_int_equal(wait_visible(shards, 20, 26), 20);
    sc_shard_stats st;
    /* Nobody calls merge either: once writes stop, the background merges bring the shard to
     * the policy's segment count (10 per tier). */
    for (int round = 0; round < WAIT_ROUNDS; round++) {
        assert_int_equal(sc_shard_stats_get(shards[0], false, &st), SC_OK);
        if (st.n_merges > 0 && st.n_segments <= 10)
            break;
        sleep_ms(50);
    }
    if (st.n_merges == 0)
        fail_msg("no merge: %zu segments", (size_t)st.n_segments);
    assert_true(st.n_segments <= 10);
    assert_int_equal(n_threads(), before);
    for (int i = 0; i < N_SHARDS; i++)
        sc_shard_close(shards[i], i % 2 == 0);
    assert_int_equal(sc_shard_sched_n_shards(sc), 0);
    sc_shard_sched_free(sc);
    free(shards);
}

/* Closing shards while their refreshes are queued or running, over and over. */
static void test_close_while_busy(void **state)
{
    (void)state;
    sc_shard_sched *sc;
    assert_int_equal(sc_shard_sched_new(2, 1, &sc), SC_OK);
    char id[32];
    for (int round = 0; round < 20; round++) {
        sc_shard *s[8];
        for (int i = 0; i < 8; i++)
            s[i] = open_shard(sc, 1000 + round * 8 + i, 1, true);
        for (int k = 0; k < 30; k++)
            for (int i = 0; i < 8; i++) {
                snprintf(id, sizeof id, "k%d", k);
                put(s[i], id, "{\"f\":\"busy\"}");
            }
        for (int i = 0; i < 8; i++)
            sc_shard_close(s[i], round % 2 == 0);
    }
    assert_int_equal(sc_shard_sched_n_shards(sc), 0);
    sc_shard_sched_free(sc);
}

/* A shard with refresh off still refreshes when its buffer passes the limit: the write that
 * fills it wakes the scheduler. */
static void test_full_buffer_wakes(void **state)
{
    (void)state;
    sc_shard_sched *sc;
    assert_int_equal(sc_shard_sched_new(1, 1, &sc), SC_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/full", root);
    sc_shard_config cfg = {0};
    cfg.path = path;
    cfg.refresh_interval_ms = -1;
    cfg.ram_buffer_bytes = 64 << 10;
    cfg.sched = sc;
    sc_shard *s;
    sc_shard_error err;
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_OK);
    char id[32], src[256];
    for (int i = 0; i < 2000; i++) {
        snprintf(id, sizeof id, "%d", i);
        snprintf(src, sizeof src, "{\"f\":\"word%d other%d text%d\"}", i, i * 7, i * 13);
        put(s, id, src);
    }
    uint64_t seen = 0;
    for (int round = 0; round < 200 && seen == 0; round++) {
        seen = visible(s);
        if (!seen)
            sleep_ms(50);
    }
    /* Refresh is off, so only the full-buffer wake can have made anything visible. Whether the
     * refresh caught all 2000 docs or some depends on when the scheduler thread ran (under
     * ASan on a busy machine it can run after the last write), so only seen > 0 is asserted. */
    assert_true(seen > 0);
    assert_true(seen <= 2000);
    sc_shard_close(s, false);
    sc_shard_sched_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_shards_fixed_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_while_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_buffer_wakes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
