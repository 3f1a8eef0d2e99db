/* Tests for src/shard/ids.c, the persisted id table: a shard's table survives a flush and a
 * reopen as a version-2 file (front-coded ids, delta seq_no/doc, zstd) with ids that share
 * prefixes, hold NUL bytes or are empty-suffixed, updated and deleted docs; a version-1 file as
 * older shards wrote it still decodes; every truncation and byte flip of a version-2 file is
 * SC_ECORRUPT, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/varint.h"
#include "shard/internal.h"
#include "shard/shard.h"

#include "shard_dir.h"

static int setup(void **state)
{
    (void)state;
    return shard_dir_setup("ids-test");
}

static sc_shard *open_shard(void)
{
    return shard_dir_open(false);
}

/* Id number i: runs of ids sharing long prefixes, some with a NUL byte, one the prefix of
 * the next ("k7" then "k7\0x"), so front coding meets every case. */
static sc_slice make_id(int i, char *buf)
{
    int n = snprintf(buf, 64, "k%d", i / 3);
    if (i % 3 == 1) {
        buf[n] = 0;
        buf[n + 1] = 'x';
        n += 2;
    } else if (i % 3 == 2) {
        n += snprintf(buf + n, 64 - (size_t)n, "-long-suffix-%d", i);
    }
    return sc_slice_make((const uint8_t *)buf, (size_t)n);
}

static void put(sc_shard *s, sc_slice id, int i)
{
    char src[64];
    snprintf(src, sizeof(src), "{\"n\":%d}", i);
    sc_shard_result r;
    sc_shard_error err;
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_status st = sc_shard_index(s, id, sc_slice_cstr(src), &o, &r, &err);
    if (st != SC_OK)
        fail_msg("index %d failed: %s %s", i, sc_status_str(st), err.reason);
}

enum {
    N_IDS = 3000
};

/* Doc i's expected state: deleted (i % 7 == 3), updated to version 2 (i % 5 == 0), else
 * version 1; the source holds the last value written. */
static void check_all(sc_shard *s, const int64_t *seq_nos)
{
    for (int i = 0; i < N_IDS; i++) {
        char b[64];
        sc_shard_doc d;
        assert_int_equal(sc_shard_get(s, make_id(i, b), &d), SC_OK);
        if (i % 7 == 3) {
            assert_false(d.found);
            continue;
        }
        if (!d.found)
            fail_msg("doc %d not found", i);
        char src[64];
        snprintf(src, sizeof(src), "{\"n\":%d}", i % 5 == 0 ? i + 1000000 : i);
        assert_int_equal(d.source_len, strlen(src));
        assert_memory_equal(d.source, src, d.source_len);
        assert_int_equal(d.version, i % 5 == 0 ? 2 : 1);
        assert_int_equal(d.seq_no, seq_nos[i]);
        sc_shard_doc_fini(&d);
    }
}

static void read_ids_file(uint8_t **data, size_t *len, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    path[0] = 0;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "ids-", 4) == 0)
            snprintf(path, cap, "%s/%s", dir, de->d_name);
    closedir(d);
    assert_true(path[0]);
    assert_int_equal(sc_file_read_all(path, data, len), SC_OK);
}

typedef struct counter {
    uint64_t n, id_bytes;
} counter;

static sc_status count_entry(void *ctx, const sc__ids_entry *e)
{
    counter *c = ctx;
    c->n++;
    c->id_bytes += e->id.len;
    return SC_OK;
}

static void test_roundtrip_v2(void **state)
{
    (void)state;
    static int64_t seq_nos[N_IDS];
    sc_shard *s = open_shard();
    for (int i = 0; i < N_IDS; i++) {
        char b[64];
        put(s, make_id(i, b), i);
        if (i % 1000 == 999)
            assert_int_equal(sc_shard_refresh(s), SC_OK); /* several segments */
    }
    for (int i = 0; i < N_IDS; i++) {
        char b[64];
        sc_shard_error err;
        sc_shard_result r;
        sc_shard_write_opts o = sc_shard_write_defaults();
        if (i % 7 == 3) {
            assert_int_equal(sc_shard_delete(s, make_id(i, b), &o, &r, &err), SC_OK);
        } else if (i % 5 == 0) {
            put(s, make_id(i, b), i + 1000000);
        }
    }
    for (int i = 0; i < N_IDS; i++) {
        char b[64];
        sc_shard_doc d;
        assert_int_equal(sc_shard_get(s, make_id(i, b), &d), SC_OK);
        seq_nos[i] = d.seq_no;
        sc_shard_doc_fini(&d);
    }
    sc_shard_close(s, true); /* flush: writes the id table */

    uint8_t *data;
    size_t len;
    char path[512];
    read_ids_file(&data, &len, path, sizeof(path));
    assert_memory_equal(data, "SCIDS002", 8);
    counter c = {0};
    assert_int_equal(sc__ids_decode(data, len, count_entry, &c), SC_OK);
    /* the deleted ids only: a live id's doc is found in its segment's `_id` terms */
    int n_deleted = 0;
    for (int i = 0; i < N_IDS; i++)
        n_deleted += i % 7 == 3;
    assert_int_equal(c.n, n_deleted);
    /* front coding + zstd: well under the id bytes alone (version 1 stored them whole) */
    assert_true(len < c.id_bytes / 2);
    free(data);

    s = open_shard();
    check_all(s, seq_nos);
    sc_shard_close(s, false);
}

/* A version-1 file (as shards wrote it before version 2): 4 entries "a", "a\0b", "b", "c". */
static const uint8_t v1_file[] = {0x53, 0x43, 0x49, 0x44, 0x53, 0x30, 0x30, 0x31, 0x04, 0x00, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x61, 0x00, 0x01, 0x01, 0x01,
                                  0x00, 0x03, 0x61, 0x00, 0x62, 0x02, 0x01, 0x01, 0x01, 0x01, 0x01,
                                  0x62, 0x08, 0x01, 0x02, 0x00, 0x00, 0x01, 0x63, 0x06, 0x01, 0x01,
                                  0x01, 0x03, 0x70, 0xb5, 0x76, 0x4d, 0x9c, 0x0d, 0xf7, 0x04};

typedef struct collected {
    int n;
    char ids[8][8];
    size_t lens[8];
    sc__ids_entry e[8];
} collected;

static sc_status collect(void *ctx, const sc__ids_entry *e)
{
    collected *c = ctx;
    if (c->n >= 8 || e->id.len > 8)
        return SC_ELIMIT;
    memcpy(c->ids[c->n], e->id.ptr, e->id.len);
    c->lens[c->n] = e->id.len;
    c->e[c->n++] = *e;
    return SC_OK;
}

static void test_v1_still_read(void **state)
{
    (void)state;
    collected c = {0};
    assert_int_equal(sc__ids_decode(v1_file, sizeof v1_file, collect, &c), SC_OK);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.lens[1], 3);
    assert_memory_equal(c.ids[1], "a\0b", 3);
    assert_memory_equal(c.ids[3], "c", 1);
    assert_int_equal(c.e[0].seq_no, 0);
    assert_int_equal(c.e[1].seq_no, 1);
    assert_int_equal(c.e[2].seq_no, 4);
    assert_int_equal(c.e[2].version, 2);
    assert_int_equal(c.e[2].segment, 0); /* a tombstone */
    assert_int_equal(c.e[3].segment, 1);
    assert_int_equal(c.e[3].doc, 3);
    /* the same bytes with one flipped: the checksum refuses them */
    uint8_t bad[sizeof v1_file];
    memcpy(bad, v1_file, sizeof bad);
    bad[20] ^= 1;
    c.n = 0;
    assert_int_equal(sc__ids_decode(bad, sizeof bad, collect, &c), SC_ECORRUPT);
}

/* A version-2 entry stream decoded directly: shared prefixes and deltas. */
static void test_v2_entries(void **state)
{
    (void)state;
    /* "ab" seq 5 doc 2 seg 1; "abc" (shared 2) seq 4 (delta -1) doc 3; "b" seq 6 tombstone */
    const uint8_t raw[] = {0, 2, 'a', 'b', 10, 1, 1, 1, 4, /* */
                           2, 1, 'c', 1,   1,  1, 1, 2,    /* */
                           0, 1, 'b', 4,   1,  3, 0, 5};
    collected c = {0};
    assert_int_equal(sc__ids_decode_entries(raw, sizeof raw, 3, collect, &c), SC_OK);
    assert_int_equal(c.n, 3);
    assert_memory_equal(c.ids[1], "abc", 3);
    assert_int_equal(c.e[0].seq_no, 5);
    assert_int_equal(c.e[1].seq_no, 4);
    assert_int_equal(c.e[1].doc, 3);
    assert_int_equal(c.e[2].seq_no, 6);
    assert_int_equal(c.e[2].version, 3);
    assert_int_equal(c.e[2].segment, 0);
    /* shared longer than the previous id, a count past the bytes, trailing bytes */
    const uint8_t over[] = {0, 1, 'a', 0, 1, 1, 1, 0, 2, 1, 'b', 0, 1, 1, 1, 0};
    c.n = 0;
    assert_int_equal(sc__ids_decode_entries(over, sizeof over, 2, collect, &c), SC_ECORRUPT);
    c.n = 0;
    assert_int_equal(sc__ids_decode_entries(raw, sizeof raw, 4, collect, &c), SC_ECORRUPT);
    c.n = 0;
    assert_int_equal(sc__ids_decode_entries(raw, sizeof raw, 2, collect, &c), SC_ECORRUPT);
    /* a negative doc */
    const uint8_t neg[] = {0, 1, 'a', 0, 1, 1, 1, 1};
    c.n = 0;
    assert_int_equal(sc__ids_decode_entries(neg, sizeof neg, 1, collect, &c), SC_ECORRUPT);
}

static void test_v2_damage_is_corrupt(void **state)
{
    (void)state;
    sc_shard *s = open_shard();
    for (int i = 0; i < 200; i++) {
        char b[64];
        put(s, make_id(i, b), i);
    }
    for (int i = 0; i < 200; i += 3) { /* tombstones: the file's entries */
        char b[64];
        sc_shard_error err;
        sc_shard_result r;
        sc_shard_write_opts o = sc_shard_write_defaults();
        assert_int_equal(sc_shard_delete(s, make_id(i, b), &o, &r, &err), SC_OK);
    }
    sc_shard_close(s, true);
    uint8_t *data;
    size_t len;
    char path[512];
    read_ids_file(&data, &len, path, sizeof(path));
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (size_t cut = 0; cut < len; cut++) {
        counter c = {0};
        assert_int_equal(sc__ids_decode(data, cut, count_entry, &c), SC_ECORRUPT);
    }
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, data, len);
        copy[i] ^= 0x10;
        counter c = {0};
        assert_int_equal(sc__ids_decode(copy, len, count_entry, &c), SC_ECORRUPT);
    }
    /* a damaged file refuses the shard's open with a reason */
    memcpy(copy, data, len);
    copy[len / 2] ^= 0x41;
    assert_int_equal(sc_file_write_atomic(path, copy, len), SC_OK);
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    sc_shard_error err;
    memset(&err, 0, sizeof(err));
    s = NULL;
    assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_ECORRUPT);
    free(copy);
    free(data);
}

static void put_u64(sc_buf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        assert_int_equal(sc_vec_push(b, (uint8_t)(v >> (8 * i))), SC_OK);
}

static void put_var(sc_buf *b, uint64_t v)
{
    assert_int_equal(sc_vec_reserve(b, SC_VARINT_MAX_BYTES), SC_OK);
    b->len += sc_varint_put(b->ptr + b->len, v);
}

/* A shard whose id table file was written before the table kept only tombstones: a version-1
 * file listing every id, the live ones with their segment and doc. It opens with the segment
 * entries checked and dropped (the ids are found in the segment, versions from its doc
 * values), the tombstones kept; an entry naming a doc of another id refuses the open. */
static void test_old_file_with_segment_entries(void **state)
{
    (void)state;
    sc_shard *s = open_shard();
    enum {
        N = 40
    };
    char b[64];
    for (int i = 0; i < N; i++)
        put(s, make_id(i, b), i);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    sc_shard_error err;
    sc_shard_result r;
    sc_shard_write_opts o = sc_shard_write_defaults();
    assert_int_equal(sc_shard_delete(s, make_id(5, b), &o, &r, &err), SC_OK);
    sc_shard_close(s, true); /* one segment, doc i = id i, id 5 deleted with seq_no N */
    uint8_t *data;
    size_t len;
    char path[512];
    read_ids_file(&data, &len, path, sizeof(path));
    free(data);
    for (int bad = 0; bad < 2; bad++) {
        sc_buf f = {0};
        assert_int_equal(sc_vec_append(&f, (const uint8_t *)"SCIDS001", 8), SC_OK);
        put_u64(&f, N);
        for (int i = 0; i < N; i++) {
            sc_slice id = make_id(i, b);
            put_var(&f, id.len);
            assert_int_equal(sc_vec_append(&f, id.ptr, id.len), SC_OK);
            put_var(&f, sc_zigzag_encode(i == 5 ? N : i));
            put_var(&f, 1);
            put_var(&f, i == 5 ? 2 : 1);
            put_var(&f, i == 5 ? 0 : 1); /* segment 1 of the manifest, or a tombstone */
            put_var(&f, i == 5 ? 0 : (uint64_t)(bad && i == 7 ? 8 : i));
        }
        put_u64(&f, sc_checksum(f.ptr, f.len));
        assert_int_equal(sc_file_write_atomic(path, f.ptr, f.len), SC_OK);
        sc_vec_free(&f);
        if (bad) {
            sc_shard_config cfg = {.path = dir, .no_background_thread = true};
            s = NULL;
            assert_int_equal(sc_shard_open(&cfg, &s, &err), SC_ECORRUPT);
            break;
        }
        s = open_shard();
        assert_int_equal(s->ids.len, 1); /* the tombstone only */
        for (int i = 0; i < N; i++) {
            sc_shard_doc d;
            assert_int_equal(sc_shard_get(s, make_id(i, b), &d), SC_OK);
            assert_int_equal(d.found, i != 5);
            if (d.found)
                assert_int_equal(d.seq_no, i);
            sc_shard_doc_fini(&d);
        }
        /* the tombstone's version goes on; a live id's too */
        assert_int_equal(sc_shard_index(s, make_id(5, b), sc_slice_cstr("{}"), &o, &r, &err),
                         SC_OK);
        assert_int_equal(r.version, 3);
        assert_int_equal(sc_shard_index(s, make_id(6, b), sc_slice_cstr("{}"), &o, &r, &err),
                         SC_OK);
        assert_int_equal(r.version, 2);
        assert_false(r.created);
        sc_shard_close(s, false); /* the file stays as written above */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip_v2, setup, teardown),
        cmocka_unit_test(test_v1_still_read),
        cmocka_unit_test(test_v2_entries),
        cmocka_unit_test_setup_teardown(test_v2_damage_is_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_file_with_segment_entries, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
