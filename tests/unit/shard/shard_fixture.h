/* Shared by the shard unit tests that open shards under a scratch folder: the folder's setup
 * and teardown, and writes that fail the test on error. Include after <cmocka.h>. */
#ifndef SC_TEST_SHARD_FIXTURE_H
#define SC_TEST_SHARD_FIXTURE_H

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "shard/shard.h"

static char root[256];

/* An empty folder /tmp/scry-<tag>-<pid> in root. */
static inline int fx_root_setup(const char *tag)
{
    snprintf(root, sizeof root, "/tmp/scry-%s-%d", tag, (int)getpid());
    if (sc_dir_remove_all(root) != SC_OK || sc_dir_make(root) != SC_OK)
        return -1;
    return 0;
}

static inline int fx_root_teardown(void)
{
    return sc_dir_remove_all(root) == SC_OK ? 0 : -1;
}

/* Indexes src under id with the default write options; the test fails on an error. */
static inline sc_shard_result put(sc_shard *s, const char *id, const char *src)
{
    sc_shard_error err;
    sc_shard_result r;
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_status st = sc_shard_index(s, sc_slice_cstr(id), sc_slice_cstr(src), &o, &r, &err);
    if (st != SC_OK)
        fail_msg("index %s failed: %s %s", id, sc_status_str(st), err.reason);
    return r;
}

/* How many docs a search of s sees now. */
static inline uint64_t visible(sc_shard *s)
{
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(s);
    uint64_t n = snap->n_docs;
    sc_shard_searcher_release(snap);
    return n;
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
