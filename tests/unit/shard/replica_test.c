/* Tests for src/shard/replica.c: a primary's operations applied on a copy keep the primary's
 * seq_no, term and version; a stale, replayed or reordered operation is skipped (seq-no dedup,
 * a newer term wins); deletes leave tombstones that the id listing reports; applied operations
 * survive a crash (translog replay); and a random stream of primary writes, delivered to a copy
 * shuffled and twice, leaves the copy equal to the primary (the seed is printed;
 * SCRY_TEST_SEED=N replays). sc_shard_install_commit (file-based recovery): a copy holding
 * other documents (one the primary never had) takes a primary's pinned commit exactly, keeps
 * taking operations after it, and a reopen (translog replay) brings none of its former
 * operations back. */
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
#include "shard/shard.h"

static char dir_a[256], dir_b[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir_a, sizeof dir_a, "/tmp/scry-replica-test-%d-a", (int)getpid());
    snprintf(dir_b, sizeof dir_b, "/tmp/scry-replica-test-%d-b", (int)getpid());
    return sc_dir_remove_all(dir_a) == SC_OK && sc_dir_remove_all(dir_b) == SC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    return setup(state);
}

static sc_shard *open_at(const char *dir)
{
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    sc_shard *s = NULL;
    sc_shard_error err;
    memset(&err, 0, sizeof err);
    sc_status st = sc_shard_open(&cfg, &s, &err);
    if (st != SC_OK)
        fail_msg("open failed: %s (%s)", sc_status_str(st), err.reason);
    return s;
}

static bool apply(sc_shard *s, bool del, int64_t seq, int64_t term, int64_t version, const char *id,
                  const char *src)
{
    sc_shard_op op = {
        del, seq, term, version, sc_slice_cstr(id), del ? (sc_slice){0} : sc_slice_cstr(src)};
    bool applied = false;
    sc_shard_error err;
    memset(&err, 0, sizeof err);
    sc_status st = sc_shard_apply(s, &op, &applied, &err);
    if (st != SC_OK)
        fail_msg("apply %s failed: %s %s", id, sc_status_str(st), err.reason);
    return applied;
}

static void expect_doc(sc_shard *s, const char *id, const char *src, int64_t seq, int64_t term,
                       int64_t version)
{
    sc_shard_doc d;
    assert_int_equal(sc_shard_get(s, sc_slice_cstr(id), &d), SC_OK);
    if (!src) {
        assert_false(d.found);
        return;
    }
    assert_true(d.found);
    assert_int_equal(d.source_len, strlen(src));
    assert_memory_equal(d.source, src, d.source_len);
    assert_int_equal(d.seq_no, seq);
    assert_int_equal(d.primary_term, term);
    assert_int_equal(d.version, version);
    sc_shard_doc_fini(&d);
}

static void test_apply_dedup_and_terms(void **state)
{
    (void)state;
    sc_shard *s = open_at(dir_a);
    assert_true(apply(s, false, 5, 1, 3, "a", "{\"v\":\"5\"}"));
    expect_doc(s, "a", "{\"v\":\"5\"}", 5, 1, 3);
    /* an older op for the same id (reordered delivery) and the same op again: skipped */
    assert_false(apply(s, false, 4, 1, 2, "a", "{\"v\":\"4\"}"));
    assert_false(apply(s, false, 5, 1, 3, "a", "{\"v\":\"5\"}"));
    expect_doc(s, "a", "{\"v\":\"5\"}", 5, 1, 3);
    /* a new primary term wins even with a lower seq_no (an old primary's leftovers lose) */
    assert_true(apply(s, false, 2, 2, 4, "a", "{\"v\":\"t2\"}"));
    expect_doc(s, "a", "{\"v\":\"t2\"}", 2, 2, 4);
    assert_false(apply(s, false, 9, 1, 9, "a", "{\"v\":\"old\"}"));
    /* a delete leaves a tombstone; an older index op cannot resurrect the document */
    assert_true(apply(s, true, 3, 2, 5, "a", NULL));
    expect_doc(s, "a", NULL, 0, 0, 0);
    assert_false(apply(s, false, 2, 2, 4, "a", "{\"v\":\"t2\"}"));
    expect_doc(s, "a", NULL, 0, 0, 0);
    /* the copy's own writes get the term it is told (a promotion), never a lower one */
    sc_shard_set_primary_term(s, 3);
    sc_shard_set_primary_term(s, 2);
    assert_int_equal(sc_shard_primary_term(s), 3);
    sc_shard_result r;
    sc_shard_error err;
    sc_shard_write_opts o = sc_shard_write_defaults();
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("b"), sc_slice_cstr("{}"), &o, &r, &err),
                     SC_OK);
    assert_int_equal(r.primary_term, 3);
    assert_int_equal(r.seq_no, 6); /* after the highest seq_no applied (5) */
    /* an op that does not parse fails and leaves nothing in the translog */
    {
        sc_shard_op bad = {
            false, 8, 3, 1, sc_slice_cstr("bad"), sc_slice_cstr("{\"v\":{\"x\":1}}")};
        bool applied = true;
        sc_shard_error err2;
        memset(&err2, 0, sizeof err2);
        assert_int_not_equal(sc_shard_apply(s, &bad, &applied, &err2), SC_OK);
        assert_false(applied);
        expect_doc(s, "bad", NULL, 0, 0, 0);
    }
    /* applied ops survive a crash: close without flush replays the translog */
    assert_true(apply(s, false, 7, 3, 1, "c", "{\"c\":1}"));
    assert_int_equal(sc_shard_sync(s), SC_OK);
    sc_shard_close(s, false);
    s = open_at(dir_a);
    expect_doc(s, "c", "{\"c\":1}", 7, 3, 1);
    expect_doc(s, "a", NULL, 0, 0, 0);
    expect_doc(s, "b", "{}", 6, 3, 1);
    sc_shard_close(s, true);
}

typedef struct listed {
    char ids[64][16];
    bool deleted[64];
    int64_t seq[64];
    size_t n;
} listed;

static void on_id(void *ctx, sc_slice id, bool deleted, int64_t seq_no, int64_t term,
                  int64_t version)
{
    (void)term;
    (void)version;
    listed *l = ctx;
    assert_true(l->n < 64 && id.len < 16);
    memcpy(l->ids[l->n], id.ptr, id.len);
    l->ids[l->n][id.len] = 0;
    l->deleted[l->n] = deleted;
    l->seq[l->n] = seq_no;
    l->n++;
}

static void test_list_ids_pages(void **state)
{
    (void)state;
    sc_shard *s = open_at(dir_b);
    char id[16];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "d%d", i);
        assert_true(apply(s, false, i, 1, 1, id, "{}"));
    }
    assert_true(apply(s, true, 10, 1, 2, "d3", NULL));
    listed l = {0};
    uint64_t from = 0, next = 0;
    /* pages of at most 4 (the buffer's ids, then the tombstones), then again with d0..d4 in
     * a segment, d5..d9 in the buffer */
    for (int round = 0; round < 2; round++) {
        memset(&l, 0, sizeof l);
        from = 0;
        for (;;) {
            size_t before = l.n;
            sc_shard_list_ids(s, from, 4, on_id, &l, &next);
            assert_true(l.n - before <= 4);
            if (next == from)
                break;
            from = next;
        }
        assert_int_equal(l.n, 10);
        for (int i = 0; i < 10; i++) {
            snprintf(id, sizeof id, "d%d", i);
            size_t k = 0;
            while (k < l.n && strcmp(l.ids[k], id) != 0)
                k++;
            assert_true(k < l.n);
            assert_int_equal(l.deleted[k], i == 3);
            assert_int_equal(l.seq[k], i == 3 ? 10 : round && i >= 5 ? 20 + i : i);
        }
        if (round == 0) { /* d0..d9 into a segment; d5..d9 overwritten into the buffer */
            assert_int_equal(sc_shard_refresh(s), SC_OK);
            for (int i = 5; i < 10; i++) {
                snprintf(id, sizeof id, "d%d", i);
                assert_true(apply(s, false, 20 + i, 1, 2, id, "{}"));
            }
        }
    }
    sc_shard_close(s, false);
    assert_int_equal(sc_dir_remove_all(dir_b), SC_OK);
}

/* A primary takes random writes; its operations reach a copy shuffled and each twice. */
static void test_random_stream_converges(void **state)
{
    (void)state;
    unsigned seed = getenv("SCRY_TEST_SEED") ? (unsigned)strtoul(getenv("SCRY_TEST_SEED"), 0, 10)
                                             : (unsigned)time(NULL);
    printf("replica_test: seed %u (SCRY_TEST_SEED=%u replays)\n", seed, seed);
    assert_int_equal(sc_dir_remove_all(dir_a), SC_OK);
    assert_int_equal(sc_dir_remove_all(dir_b), SC_OK);
    sc_shard *p = open_at(dir_a), *c = open_at(dir_b);
    enum {
        N = 600
    };
    static struct {
        bool del;
        char id[8], src[32];
        sc_shard_result r;
    } ops[2 * N];
    unsigned rs = seed;
    for (int i = 0; i < N; i++) {
        snprintf(ops[i].id, sizeof ops[i].id, "k%u", rand_r(&rs) % 50);
        ops[i].del = rand_r(&rs) % 4 == 0;
        snprintf(ops[i].src, sizeof ops[i].src, "{\"i\":%d}", i);
        sc_shard_error err;
        sc_shard_write_opts o = sc_shard_write_defaults();
        sc_status st = ops[i].del
                           ? sc_shard_delete(p, sc_slice_cstr(ops[i].id), &o, &ops[i].r, &err)
                           : sc_shard_index(p, sc_slice_cstr(ops[i].id), sc_slice_cstr(ops[i].src),
                                            &o, &ops[i].r, &err);
        assert_int_equal(st, SC_OK);
        ops[N + i] = ops[i];
    }
    for (int i = 2 * N - 1; i > 0; i--) { /* shuffle the doubled stream */
        int j = (int)(rand_r(&rs) % (unsigned)(i + 1));
        __typeof__(ops[0]) t = ops[i];
        ops[i] = ops[j];
        ops[j] = t;
    }
    for (int i = 0; i < 2 * N; i++)
        (void)apply(c, ops[i].del, ops[i].r.seq_no, ops[i].r.primary_term, ops[i].r.version,
                    ops[i].id, ops[i].src);
    for (int k = 0; k < 50; k++) {
        char id[8];
        snprintf(id, sizeof id, "k%d", k);
        sc_shard_doc a, b;
        assert_int_equal(sc_shard_get(p, sc_slice_cstr(id), &a), SC_OK);
        assert_int_equal(sc_shard_get(c, sc_slice_cstr(id), &b), SC_OK);
        if (a.found != b.found)
            fail_msg("seed %u: %s found %d on the primary, %d on the copy", seed, id, a.found,
                     b.found);
        if (a.found) {
            assert_int_equal(a.seq_no, b.seq_no);
            assert_int_equal(a.version, b.version);
            assert_int_equal(a.source_len, b.source_len);
            assert_memory_equal(a.source, b.source, a.source_len);
        }
        sc_shard_doc_fini(&a);
        sc_shard_doc_fini(&b);
    }
    sc_shard_close(p, false);
    sc_shard_close(c, false);
}

/* Copies the files of a pinned commit into dst (a new folder). */
static void copy_pin(const sc_shard_pinned *p, const char *dst)
{
    assert_int_equal(sc_dir_make(dst), SC_OK);
    for (size_t i = 0; i < p->n_files; i++) {
        char a[8192], b[8192];
        snprintf(a, sizeof a, "%s/%s", p->dir, p->files[i]);
        snprintf(b, sizeof b, "%s/%s", dst, p->files[i]);
        uint8_t *data;
        size_t len;
        assert_int_equal(sc_file_read_all(a, &data, &len), SC_OK);
        assert_int_equal(sc_file_write_atomic(b, data, len), SC_OK);
        free(data);
    }
}

static void test_install_commit(void **state)
{
    (void)state;
    sc_shard *a = open_at(dir_a), *b = open_at(dir_b);
    char id[32], src[64];
    /* the primary: 300 docs over two segments, some deleted; the copy: other docs, one
     * (ghost) the primary never had, and a stale version of doc 5, partly in its translog */
    for (int i = 0; i < 300; i++) {
        snprintf(id, sizeof id, "d%d", i);
        snprintf(src, sizeof src, "{\"n\":%d}", i);
        apply(a, false, i, 1, 1, id, src);
        if (i == 150)
            assert_int_equal(sc_shard_flush(a), SC_OK);
    }
    apply(a, true, 300, 1, 2, "d7", NULL);
    apply(b, false, 0, 1, 1, "d5", "{\"old\":true}");
    apply(b, false, 1, 1, 1, "x1", "{\"x\":1}");
    assert_int_equal(sc_shard_flush(b), SC_OK);
    apply(b, false, 999, 1, 1, "ghost", "{\"never\":\"acked\"}");
    assert_int_equal(sc_shard_sync(b), SC_OK);
    sc_shard_pinned pin;
    assert_int_equal(sc_shard_commit_pin(a, SC_SHARD_PIN_PREFIX "t", &pin), SC_OK);
    assert_int_equal(pin.max_seq_no, 300);
    char staging[600];
    snprintf(staging, sizeof staging, "%s/%srecv", dir_b, SC_SHARD_PIN_PREFIX);
    copy_pin(&pin, staging);
    sc_shard_pinned_release(&pin);
    sc_shard_error err;
    assert_int_equal(sc_shard_install_commit(b, staging, &err), SC_OK);
    expect_doc(b, "ghost", NULL, 0, 0, 0);
    expect_doc(b, "x1", NULL, 0, 0, 0);
    expect_doc(b, "d7", NULL, 0, 0, 0);
    expect_doc(b, "d5", "{\"n\":5}", 5, 1, 1);
    expect_doc(b, "d299", "{\"n\":299}", 299, 1, 1);
    /* operations after the commit keep coming */
    assert_true(apply(b, false, 301, 1, 1, "after", "{\"a\":1}"));
    assert_false(apply(b, false, 299, 1, 1, "d299", "{\"n\":299}")); /* already there */
    assert_int_equal(sc_shard_sync(b), SC_OK);
    assert_int_equal(sc_shard_refresh(b), SC_OK);
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(b, false, &st), SC_OK);
    assert_int_equal(st.n_docs, 300); /* 299 of the primary + after */
    assert_int_equal(st.max_seq_no, 301);
    sc_shard_stats_fini(&st);
    /* a crash now: the reopened copy is the installed commit + the later operation */
    sc_shard_close(b, false);
    b = open_at(dir_b);
    expect_doc(b, "ghost", NULL, 0, 0, 0);
    expect_doc(b, "x1", NULL, 0, 0, 0);
    expect_doc(b, "after", "{\"a\":1}", 301, 1, 1);
    expect_doc(b, "d150", "{\"n\":150}", 150, 1, 1);
    assert_int_equal(sc_shard_stats_get(b, false, &st), SC_OK);
    assert_int_equal(st.n_docs, 300);
    sc_shard_stats_fini(&st);
    assert_int_equal(access(staging, F_OK), -1); /* the staging folder went at open */
    sc_shard_close(b, false);
    sc_shard_close(a, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_dedup_and_terms),
        cmocka_unit_test(test_list_ids_pages),
        cmocka_unit_test(test_random_stream_converges),
        cmocka_unit_test_setup_teardown(test_install_commit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
