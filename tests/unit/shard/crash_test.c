/* Crash test of the shard's durability: a child process indexes and deletes documents,
 * reporting each acknowledged operation to the parent through a pipe, while its background
 * thread refreshes, flushes (small translog threshold) and merges; the parent kills it with
 * SIGKILL at a random moment, reopens the shard (translog replay) and checks that every
 * acknowledged write is there and every acknowledged delete is gone. 20 kills; the seed is
 * printed and can be set with SCRY_CRASH_SEED. The HTTP-level crash test belongs with the
 * server (scripts/test.d). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "shard/shard.h"

#define ROUNDS 20
#define MAX_PER_ROUND 200000

static char dir[256];

typedef struct rec {
    uint32_t round;
    uint32_t i;
    uint32_t is_delete;
    uint32_t is_intent; /* written before the operation; the ack follows it */
} rec;

static void doc_id(char *buf, size_t cap, uint32_t round, uint32_t i)
{
    snprintf(buf, cap, "r%u-%u", round, i);
}

static void doc_src(char *buf, size_t cap, uint32_t round, uint32_t i)
{
    snprintf(buf, cap, "{\"round\":%u,\"i\":%u,\"body\":\"w%u common text %u\"}", round, i, i % 17,
             round);
}

static sc_shard *open_shard(bool bg)
{
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = !bg;
    cfg.refresh_interval_ms = 30;
    cfg.flush_threshold_bytes = 48 * 1024;
    cfg.ram_buffer_bytes = 256 * 1024;
    sc_shard *s = NULL;
    sc_shard_error err;
    memset(&err, 0, sizeof(err));
    sc_status st = sc_shard_open(&cfg, &s, &err);
    if (st != SC_OK) {
        fprintf(stderr, "open failed: %s %s\n", sc_status_str(st), err.type ? err.reason : "");
        return NULL;
    }
    return s;
}

/* Writes n records to the pipe or exits. */
static void send_recs(int fd, const rec *r, size_t n)
{
    if (write(fd, r, n * sizeof(*r)) != (ssize_t)(n * sizeof(*r)))
        _exit(6);
}

/* Even rounds acknowledge each operation after its own fsync; odd rounds work like a bulk
 * request: 16 operations with deferred sync, one sc_shard_sync, then 16 acknowledgements. */
static void child(int fd, uint32_t round, uint32_t seed)
{
    sc_shard *s = open_shard(true);
    if (!s)
        _exit(3);
    srand(seed);
    uint32_t batch = round % 2 ? 16 : 1;
    sc_shard_write_opts o = sc_shard_write_defaults();
    o.defer_sync = batch > 1;
    rec recs[16];
    for (uint32_t i = 0; i + batch <= MAX_PER_ROUND; i += batch) {
        for (uint32_t k = 0; k < batch; k++) {
            uint32_t n = i + k;
            rec r = {round, n, 0, 1};
            if (n > 10 && rand() % 5 == 0) {
                r.i = (uint32_t)rand() % n;
                r.is_delete = 1;
            }
            recs[k] = r;
        }
        send_recs(fd, recs, batch);
        for (uint32_t k = 0; k < batch; k++) {
            char id[64], src[256];
            doc_id(id, sizeof(id), round, recs[k].i);
            if (recs[k].is_delete) {
                if (sc_shard_delete(s, sc_slice_cstr(id), &o, NULL, NULL) != SC_OK)
                    _exit(4);
            } else {
                doc_src(src, sizeof(src), round, recs[k].i);
                if (sc_shard_index(s, sc_slice_cstr(id), sc_slice_cstr(src), &o, NULL, NULL) !=
                    SC_OK)
                    _exit(5);
            }
            recs[k].is_intent = 0;
        }
        if (batch > 1 && sc_shard_sync(s) != SC_OK)
            _exit(7);
        send_recs(fd, recs, batch);
    }
    _exit(0);
}

static void test_kill9(void **state)
{
    (void)state;
    uint32_t seed = (uint32_t)time(NULL);
    const char *env = getenv("SCRY_CRASH_SEED");
    if (env)
        seed = (uint32_t)strtoul(env, NULL, 10);
    printf("crash test seed %u (SCRY_CRASH_SEED)\n", seed);
    srand(seed);
    snprintf(dir, sizeof(dir), "/tmp/scry-crash-test-%d", (int)getpid());
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
    /* state[round][i]: 0 unknown, 1 acked indexed, 2 acked deleted */
    uint8_t **state_of = calloc(ROUNDS, sizeof(*state_of));
    uint32_t *acked = calloc(ROUNDS, sizeof(uint32_t));
    uint64_t total_acked = 0, slack = 0;
    for (uint32_t round = 0; round < ROUNDS; round++) {
        state_of[round] = calloc(MAX_PER_ROUND, 1);
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child(p[1], round, seed + round);
        }
        close(p[1]);
        int ms = 20 + rand() % 150;
        struct timespec ts = {0, ms * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        rec r;
        ssize_t n;
        /* operations announced but not acknowledged may or may not have survived */
        uint32_t in_flight[16], n_in_flight = 0;
        while ((n = read(p[0], &r, sizeof(r))) == (ssize_t)sizeof(r)) {
            if (r.is_intent) {
                if (n_in_flight == 16)
                    n_in_flight = 0; /* cannot happen: acks follow every batch */
                in_flight[n_in_flight++] = r.i;
                continue;
            }
            n_in_flight = 0;
            state_of[r.round][r.i] = r.is_delete ? 2 : 1;
            acked[round]++;
        }
        for (uint32_t k = 0; k < n_in_flight; k++)
            state_of[round][in_flight[k]] = 3;
        slack += n_in_flight;
        close(p[0]);
        int status;
        waitpid(pid, &status, 0);
        assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
        total_acked += acked[round];
        /* verify every acknowledged operation of every round so far */
        sc_shard *s = open_shard(false);
        assert_non_null(s);
        uint64_t expect_live = 0;
        for (uint32_t rr = 0; rr <= round; rr++) {
            for (uint32_t i = 0; i < MAX_PER_ROUND; i++) {
                if (!state_of[rr][i] || state_of[rr][i] == 3)
                    continue;
                char id[64], src[256];
                doc_id(id, sizeof(id), rr, i);
                sc_shard_doc d;
                assert_int_equal(sc_shard_get(s, sc_slice_cstr(id), &d), SC_OK);
                if (state_of[rr][i] == 1) {
                    expect_live++;
                    if (!d.found)
                        fail_msg("round %u: acknowledged doc %s lost (seed %u)", round, id, seed);
                    doc_src(src, sizeof(src), rr, i);
                    assert_int_equal(d.source_len, strlen(src));
                    assert_memory_equal(d.source, src, d.source_len);
                } else if (d.found) {
                    fail_msg("round %u: acknowledged delete of %s undone (seed %u)", round, id,
                             seed);
                }
                sc_shard_doc_fini(&d);
            }
        }
        const sc_shard_snapshot *sn = sc_shard_searcher_acquire(s);
        /* unacknowledged operations may or may not be there */
        if (sn->n_docs + slack < expect_live || sn->n_docs > expect_live + slack)
            fail_msg("round %u: %llu live docs, expected about %llu (seed %u)", round,
                     (unsigned long long)sn->n_docs, (unsigned long long)expect_live, seed);
        sc_shard_searcher_release(sn);
        sc_shard_close(s, rand() % 2 == 0);
    }
    printf("crash test: %d kills, %llu acknowledged operations verified\n", ROUNDS,
           (unsigned long long)total_acked);
    for (uint32_t round = 0; round < ROUNDS; round++)
        free(state_of[round]);
    free(state_of);
    free(acked);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
