/* Tests for src/shard: index/get/delete/update with versions, refresh visibility, version
 * conflicts, flush + reopen, recovery from the translog after an unclean stop (close without
 * flush, and a translog cut mid-entry), force merge with deletes, dynamic mapping updates, and
 * concurrent searchers while the writer refreshes (threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <dirent.h>

#include <cmocka.h>

#include "base/file.h"
#include "index/stored.h"
#include "shard/shard.h"

#include "shard_dir.h"

static int setup(void **state)
{
    (void)state;
    return shard_dir_setup("shard-test");
}

static sc_shard *open_shard(bool bg)
{
    return shard_dir_open(bg);
}

static sc_shard_result put(sc_shard *s, const char *id, const char *src)
{
    sc_shard_result r;
    sc_shard_error err;
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_status st = sc_shard_index(s, sc_slice_cstr(id), sc_slice_cstr(src), &o, &r, &err);
    if (st != SC_OK)
        fail_msg("index %s failed: %s %s", id, sc_status_str(st), err.reason);
    return r;
}

static void expect_doc(sc_shard *s, const char *id, const char *src, int64_t version)
{
    sc_shard_doc d;
    assert_int_equal(sc_shard_get(s, sc_slice_cstr(id), &d), SC_OK);
    if (!src) {
        assert_false(d.found);
        return;
    }
    if (!d.found)
        fail_msg("doc %s not found", id);
    assert_int_equal(d.source_len, strlen(src));
    assert_memory_equal(d.source, src, d.source_len);
    assert_int_equal(d.version, version);
    sc_shard_doc_fini(&d);
}

static uint64_t visible_docs(sc_shard *s)
{
    const sc_shard_snapshot *sn = sc_shard_searcher_acquire(s);
    uint64_t n = sn->n_docs;
    sc_shard_searcher_release(sn);
    return n;
}

static void test_crud(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    sc_shard_result r = put(s, "1", "{\"title\":\"one\",\"n\":1}");
    assert_true(r.created);
    assert_int_equal(r.version, 1);
    assert_int_equal(r.seq_no, 0);
    assert_int_equal(r.primary_term, 1);
    put(s, "2", "{\"title\":\"two\",\"n\":2}");
    put(s, "3", "{\"title\":\"three\",\"n\":3}");
    /* realtime get before refresh; search sees nothing yet */
    expect_doc(s, "2", "{\"title\":\"two\",\"n\":2}", 1);
    assert_int_equal(visible_docs(s), 0);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(visible_docs(s), 3);
    /* get from a segment */
    expect_doc(s, "3", "{\"title\":\"three\",\"n\":3}", 1);
    /* overwrite and delete */
    r = put(s, "1", "{\"title\":\"uno\",\"n\":1}");
    assert_false(r.created);
    assert_int_equal(r.version, 2);
    assert_int_equal(r.seq_no, 3);
    sc_shard_error err;
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("2"), NULL, &r, &err), SC_OK);
    assert_true(r.found);
    assert_int_equal(r.version, 2);
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("nope"), NULL, &r, &err), SC_OK);
    assert_false(r.found);
    assert_int_equal(r.version, 1);
    expect_doc(s, "1", "{\"title\":\"uno\",\"n\":1}", 2);
    expect_doc(s, "2", NULL, 0);
    assert_int_equal(visible_docs(s), 3); /* not refreshed yet */
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    const sc_shard_snapshot *sn = sc_shard_searcher_acquire(s);
    assert_int_equal(sn->n_docs, 2);
    assert_int_equal(sn->n_deleted, 2);
    assert_int_equal(sn->n_segments, 2);
    assert_int_equal(sn->max_doc, 4);
    assert_non_null(sn->segments[0].live);
    assert_int_equal(sn->segments[1].doc_base, 3);
    sc_shard_searcher_release(sn);
    /* re-create after delete continues the version */
    r = put(s, "2", "{\"title\":\"deux\"}");
    assert_true(r.created);
    assert_int_equal(r.version, 3);
    /* dynamic mapping was adopted */
    sc_mapping *m = sc_shard_mapping(s);
    assert_non_null(sc_mapping_find(m, sc_slice_cstr("title.keyword")));
    sc_mapping_unref(m);
    /* a bad document changes nothing */
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("4"), sc_slice_cstr("{\"n\":\"abc\"}"), NULL,
                                    &r, &err),
                     SC_EINVAL);
    assert_string_equal(err.type, "mapper_parsing_exception");
    expect_doc(s, "4", NULL, 0);
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(s, true, &st), SC_OK);
    assert_int_equal(st.n_segments, 2);
    assert_int_equal(st.buffered_docs, 1);
    assert_int_equal(st.max_seq_no, 6);
    assert_true(st.store_bytes > 0);
    assert_string_equal(st.segments[0].name, "seg00000000");
    assert_true(st.segments[0].searchable);
    assert_false(st.segments[0].committed);
    sc_shard_stats_fini(&st);
    sc_shard_close(s, true);
}

static void test_conflicts(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    put(s, "a", "{\"x\":1}");
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_result r;
    sc_shard_error err;
    o.op_type = SC_SHARD_OP_CREATE;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{\"x\":2}"), &o, &r, &err),
                     SC_ECONFLICT);
    assert_string_equal(err.type, "version_conflict_engine_exception");
    assert_string_equal(err.reason, "[a]: version conflict, document already exists (current version [1])");
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("b"), sc_slice_cstr("{\"x\":2}"), &o, &r, &err),
                     SC_OK);
    o = sc_shard_write_defaults();
    o.if_seq_no = 5;
    o.if_primary_term = 1;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{\"x\":3}"), &o, &r, &err),
                     SC_ECONFLICT);
    assert_string_equal(err.reason, "[a]: version conflict, required seqNo [5], primary term [1]. "
                                    "current document has seqNo [0] and primary term [1]");
    o.if_seq_no = 0;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{\"x\":3}"), &o, &r, &err),
                     SC_OK);
    assert_int_equal(r.seq_no, 2);
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("a"), &o, &r, &err), SC_ECONFLICT);
    o.if_seq_no = 2;
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("a"), &o, &r, &err), SC_OK);
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), &o, &r, &err),
                     SC_ECONFLICT);
    assert_non_null(strstr(err.reason, "but no document was found"));
    assert_int_equal(sc_shard_index(s, sc_slice_cstr(""), sc_slice_cstr("{}"), NULL, &r, &err),
                     SC_EINVAL);
    sc_shard_close(s, false);
}

static void fill(sc_shard *s, int from, int to)
{
    for (int i = from; i < to; i++) {
        char id[32], src[128];
        snprintf(id, sizeof(id), "d%d", i);
        snprintf(src, sizeof(src), "{\"body\":\"word%d common\",\"n\":%d}", i % 10, i);
        put(s, id, src);
    }
}

static void check_range(sc_shard *s, int from, int to, int64_t version)
{
    for (int i = from; i < to; i++) {
        char id[32], src[128];
        snprintf(id, sizeof(id), "d%d", i);
        snprintf(src, sizeof(src), "{\"body\":\"word%d common\",\"n\":%d}", i % 10, i);
        expect_doc(s, id, src, version);
    }
}

static void test_reopen_and_recovery(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    fill(s, 0, 50);
    assert_int_equal(sc_shard_flush(s), SC_OK);
    fill(s, 50, 80);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    fill(s, 80, 100);
    sc_shard_error err;
    sc_shard_result r;
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("d10"), NULL, &r, &err), SC_OK);
    fill(s, 20, 21); /* d20 version 2 */
    sc_shard_close(s, false); /* unclean: no commit of the last 50 ops */
    s = open_shard(false);
    check_range(s, 0, 10, 1);
    expect_doc(s, "d10", NULL, 0);
    check_range(s, 11, 20, 1);
    check_range(s, 20, 21, 2);
    check_range(s, 21, 100, 1);
    assert_int_equal(visible_docs(s), 99);
    /* seq_no continues after recovery */
    r = put(s, "new", "{\"n\":1}");
    assert_int_equal(r.seq_no, 102);
    sc_shard_close(s, true);
    s = open_shard(false);
    assert_int_equal(visible_docs(s), 100);
    expect_doc(s, "new", "{\"n\":1}", 1);
    check_range(s, 21, 100, 1);
    /* now a torn translog tail: the last op is cut, the rest survives */
    fill(s, 100, 110);
    sc_shard_close(s, false);
    DIR *d = opendir(dir);
    struct dirent *de;
    char tl[512] = "";
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "translog-", 9) == 0)
            snprintf(tl, sizeof(tl), "%s/%s", dir, de->d_name);
    closedir(d);
    assert_true(tl[0]);
    struct stat sb;
    assert_int_equal(stat(tl, &sb), 0);
    assert_int_equal(truncate(tl, sb.st_size - 5), 0);
    s = open_shard(false);
    check_range(s, 100, 109, 1);
    expect_doc(s, "d109", NULL, 0);
    assert_int_equal(visible_docs(s), 109);
    sc_shard_close(s, false);
}

/* Counts the manifest files of the shard folder (one per commit kept). */
static int manifest_gen_files(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += strncmp(de->d_name, "manifest", 8) == 0;
    if (d)
        closedir(d);
    return n;
}

/* sc_shard_needs_flush: false for a fresh or just-flushed shard, true after a write, a delete
 * or a refresh without a commit; a clean close of an idle shard writes no new commit (the
 * folder's files are unchanged), and a close with changes commits them. */
static void test_needs_flush_and_idle_close(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    assert_false(sc_shard_needs_flush(s));
    fill(s, 0, 10);
    assert_true(sc_shard_needs_flush(s));
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_true(sc_shard_needs_flush(s)); /* a segment not in the manifest */
    assert_int_equal(sc_shard_flush(s), SC_OK);
    assert_false(sc_shard_needs_flush(s));
    sc_shard_error err;
    sc_shard_result r;
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("d3"), NULL, &r, &err), SC_OK);
    assert_true(sc_shard_needs_flush(s));
    sc_shard_close(s, true); /* commits the delete */
    s = open_shard(false);
    assert_false(sc_shard_needs_flush(s)); /* nothing after the commit to replay */
    expect_doc(s, "d3", NULL, 0);
    assert_int_equal(visible_docs(s), 9);
    struct stat before;
    char path[512];
    int manifests = manifest_gen_files();
    DIR *d = opendir(dir);
    struct dirent *de;
    path[0] = '\0';
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "manifest", 8) == 0)
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    closedir(d);
    assert_true(path[0]);
    assert_int_equal(stat(path, &before), 0);
    sc_shard_close(s, true); /* idle: no new commit */
    struct stat after;
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(manifest_gen_files(), manifests);
    assert_true(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                before.st_mtim.tv_nsec == after.st_mtim.tv_nsec && before.st_ino == after.st_ino);
    s = open_shard(false);
    assert_int_equal(visible_docs(s), 9);
    check_range(s, 4, 10, 1);
    sc_shard_close(s, false);
}

typedef struct progress_log {
    int calls;
    uint64_t last_ops, last_done, total;
    int cancel_after; /* calls; 0 = never */
} progress_log;

static bool on_progress(void *ctx, uint64_t ops, uint64_t done, uint64_t total)
{
    progress_log *p = ctx;
    p->calls++;
    assert_true(ops >= p->last_ops && done >= p->last_done && done <= total);
    p->last_ops = ops;
    p->last_done = done;
    p->total = total;
    return !(p->cancel_after && p->calls >= p->cancel_after);
}

/* The replay reports its progress (ops, bytes read of the total) and stops when asked; a
 * cancelled open loses nothing: the next open replays everything. */
static void test_recovery_progress_and_cancel(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    fill(s, 0, 3000);
    sc_shard_close(s, false);
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    cfg.on_recovery_progress = on_progress;
    progress_log p = {.cancel_after = 2};
    cfg.recovery_ctx = &p;
    sc_shard_error err;
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_ECANCELLED);
    assert_null(s);
    assert_int_equal(p.last_ops, 1024);
    assert_true(p.last_done > 0 && p.last_done < p.total);
    p = (progress_log){0};
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_OK);
    assert_int_equal(p.last_ops, 3000);
    assert_int_equal(p.last_done, p.total);
    assert_int_equal(p.calls, 1 + 2 + 1); /* start, every 1,024 ops, end */
    check_range(s, 0, 3000, 1);
    sc_shard_close(s, false);
}

/* index.translog.flush_threshold_size: past it a write refreshes and flushes (here inline, no
 * scheduler), so the translog stays bounded whatever the refresh policy. */
static void test_flush_threshold(void **state)
{
    (void)state;
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    cfg.flush_threshold_bytes = 16 << 10;
    sc_shard *s = NULL;
    sc_shard_error err;
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_OK);
    fill(s, 0, 2000);
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
    assert_true(st.translog_bytes <= (16 << 10) + 1024);
    sc_shard_stats_fini(&st);
    sc_shard_set_flush_threshold(s, 1 << 30);
    fill(s, 2000, 3000);
    assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
    assert_true(st.translog_bytes > (16 << 10) + 1024);
    sc_shard_stats_fini(&st);
    sc_shard_close(s, false);
    s = open_shard(false);
    check_range(s, 0, 3000, 1);
    sc_shard_close(s, false);
}

/* The indexing buffer stays within ram_buffer_bytes as _stats reports it (builder plus the
 * buffered _source copies): the buffered sources once went uncounted, so a buffer of docs whose
 * _source is large next to what they index (dense vectors: ~3x the floats as JSON text) grew
 * to about twice the limit before it became a segment. */
static void test_buffer_bounded_with_sources(void **state)
{
    (void)state;
    const size_t limit = 6u << 20;
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    cfg.ram_buffer_bytes = limit;
    sc_shard *s = NULL;
    sc_shard_error err;
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_OK);
    /* a 3,200-character string beside one keyword: stored once by the builder, once in the
     * buffered sources, and indexed as a dozen tokens (the text field's 255-character cap) */
    static char src[8192];
    char id[32];
    size_t max_buf = 0;
    int n = 4000;
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)snprintf(src, sizeof src, "{\"k\":\"d%d\",\"pad\":\"", i);
        for (int j = 0; j < 400; j++)
            len += (size_t)snprintf(src + len, sizeof src - len, "%08x", (unsigned)(i * 7919 + j));
        snprintf(src + len, sizeof src - len, "\"}");
        snprintf(id, sizeof id, "%d", i);
        put(s, id, src);
        sc_shard_stats st;
        assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
        if (st.indexing_buffer_bytes > max_buf)
            max_buf = st.indexing_buffer_bytes;
        sc_shard_stats_fini(&st);
    }
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
    uint32_t segs = (uint32_t)st.n_segments;
    sc_shard_stats_fini(&st);
    /* ~13 MB of sources: the full buffer became segments at least once */
    assert_true(segs >= 1);
    if (max_buf > limit + (256u << 10))
        fail_msg("indexing buffer reached %zu bytes, limit %zu", max_buf, limit);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(visible_docs(s), (uint64_t)n);
    sc_shard_close(s, false);
}

static void test_force_merge(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    for (int k = 0; k < 5; k++) {
        fill(s, k * 20, k * 20 + 20);
        assert_int_equal(sc_shard_refresh(s), SC_OK);
    }
    sc_shard_error err;
    for (int i = 0; i < 100; i += 3) {
        char id[32];
        snprintf(id, sizeof(id), "d%d", i);
        assert_int_equal(sc_shard_delete(s, sc_slice_cstr(id), NULL, NULL, &err), SC_OK);
    }
    assert_int_equal(sc_shard_force_merge(s, 1), SC_OK);
    const sc_shard_snapshot *sn = sc_shard_searcher_acquire(s);
    assert_int_equal(sn->n_segments, 1);
    assert_int_equal(sn->n_docs, 66);
    assert_int_equal(sn->n_deleted, 0);
    sc_shard_searcher_release(sn);
    for (int i = 0; i < 100; i++) {
        char id[32], src[128];
        snprintf(id, sizeof(id), "d%d", i);
        snprintf(src, sizeof(src), "{\"body\":\"word%d common\",\"n\":%d}", i % 10, i);
        expect_doc(s, id, i % 3 == 0 ? NULL : src, 1);
    }
    sc_shard_close(s, false);
    s = open_shard(false);
    assert_int_equal(visible_docs(s), 66);
    check_range(s, 1, 3, 1);
    sc_shard_close(s, false);
}

static void test_tiered_merge(void **state)
{
    (void)state;
    sc_shard *s = open_shard(false);
    for (int k = 0; k < 14; k++) {
        fill(s, k * 10, k * 10 + 10);
        assert_int_equal(sc_shard_refresh(s), SC_OK);
    }
    sc_shard_error err;
    assert_int_equal(sc_shard_delete(s, sc_slice_cstr("d5"), NULL, NULL, &err), SC_OK);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(sc_shard_maybe_merge(s), SC_OK);
    sc_shard_stats st;
    assert_int_equal(sc_shard_stats_get(s, false, &st), SC_OK);
    assert_true(st.n_segments < 14);
    assert_int_equal(st.n_docs, 139);
    assert_true(st.n_merges >= 1);
    sc_shard_stats_fini(&st);
    check_range(s, 0, 5, 1);
    check_range(s, 6, 140, 1);
    expect_doc(s, "d5", NULL, 0);
    sc_shard_close(s, true);
    s = open_shard(false);
    assert_int_equal(visible_docs(s), 139);
    check_range(s, 130, 140, 1);
    sc_shard_close(s, false);
}

/* Flips one byte in the middle of the first file whose name starts with prefix. */
static void damage(const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[512] = "";
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
    closedir(d);
    assert_true(path[0]);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, sb.st_size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, sb.st_size / 2, SEEK_SET);
    fputc(c ^ 0x41, f);
    fclose(f);
}

static void test_corruption_is_an_error(void **state)
{
    (void)state;
    const char *files[] = {"ids-", "seg", "manifest"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sc_dir_remove_all(dir), SC_OK);
        sc_shard *s = open_shard(false);
        fill(s, 0, 30);
        sc_shard_close(s, true);
        damage(files[i]);
        sc_shard_config cfg = {0};
        cfg.path = dir;
        cfg.no_background_thread = true;
        sc_shard_error err;
        memset(&err, 0, sizeof(err));
        s = NULL;
        sc_status st = sc_shard_open(&cfg, &s, &err);
        if (st == SC_OK)
            fail_msg("opened a shard with a damaged %s file", files[i]);
        assert_true(st == SC_ECORRUPT || st == SC_EIO);
        assert_non_null(err.type);
        assert_true(err.reason[0] != 0);
    }
}

typedef struct reader_arg {
    sc_shard *s;
    volatile int *stop;
    int failures;
    uint64_t acquired;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *a = p;
    uint64_t last = 0;
    while (!*a->stop) {
        const sc_shard_snapshot *sn = sc_shard_searcher_acquire(a->s);
        uint64_t live = 0, max = 0;
        for (size_t i = 0; i < sn->n_segments; i++) {
            const sc_shard_segment_view *v = &sn->segments[i];
            if (v->doc_base != max || sc_segment_n_docs(v->seg) != v->n_docs)
                a->failures++;
            max += v->n_docs;
            live += v->n_docs - v->n_deleted;
            if (v->live && sc_bitset_count(v->live) != v->n_docs - v->n_deleted)
                a->failures++;
            /* read a stored doc to touch the mapped memory */
            if (v->n_docs) {
                sc_stored_reader rd;
                sc_stored_reader_init(&rd, v->seg);
                sc_slice id, src;
                if (sc_stored_get(&rd, v->n_docs - 1, &id, &src) != SC_OK)
                    a->failures++;
                sc_stored_reader_fini(&rd);
            }
        }
        if (live != sn->n_docs || max != sn->max_doc || sn->n_docs < last)
            a->failures++;
        last = sn->n_docs;
        a->acquired++;
        sc_shard_searcher_release(sn);
    }
    return NULL;
}

static void test_concurrent_searchers(void **state)
{
    (void)state;
    sc_shard *s = open_shard(true); /* background refresh every 20 ms plus merges */
    volatile int stop = 0;
    pthread_t th[3];
    reader_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (reader_arg){s, &stop, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    for (int round = 0; round < 20; round++) {
        fill(s, round * 25, round * 25 + 25);
        if (round % 4 == 0)
            assert_int_equal(sc_shard_refresh(s), SC_OK);
        if (round == 10)
            assert_int_equal(sc_shard_flush(s), SC_OK);
    }
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    stop = 1;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
        assert_true(args[i].acquired > 0);
    }
    assert_int_equal(visible_docs(s), 500);
    check_range(s, 0, 500, 1);
    sc_shard_close(s, true);
    s = open_shard(false);
    assert_int_equal(visible_docs(s), 500);
    sc_shard_close(s, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_and_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_needs_flush_and_idle_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_progress_and_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_threshold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiered_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_bounded_with_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corruption_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_searchers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
