/* Shared by the shard unit tests that open one shard in a scratch folder `dir`
 * (/tmp/scry-<tag>-<pid>, removed before and after each test) with refresh and the background
 * thread under the test's control. Include after <cmocka.h>. */
#ifndef SC_TEST_SHARD_DIR_H
#define SC_TEST_SHARD_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "base/file.h"
#include "shard/shard.h"

static char dir[256];

/* Names dir after tag and removes what a previous run left there. */
static inline int shard_dir_setup(const char *tag)
{
    snprintf(dir, sizeof(dir), "/tmp/scry-%s-%d", tag, (int)getpid());
    return sc_dir_remove_all(dir) == SC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return sc_dir_remove_all(dir) == SC_OK ? 0 : -1;
}

/* Opens the shard in dir: with bg, its background thread refreshes every 20 ms; without, no
 * background thread and no refresh but the test's own. The test fails when it cannot. */
static inline sc_shard *shard_dir_open(bool bg)
{
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = !bg;
    cfg.refresh_interval_ms = bg ? 20 : -1;
    sc_shard *s = NULL;
    sc_shard_error err;
    sc_status st = sc_shard_open(&cfg, &s, &err);
    if (st != SC_OK)
        fail_msg("open failed: %s (%s)", sc_status_str(st), err.type ? err.reason : "");
    return s;
}

#endif
