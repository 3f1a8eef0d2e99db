/* Tests for cluster/snaprepo.c: repository documents round-trip and every flipped or cut byte
 * is caught; structural checks refuse unsafe file names and inconsistent shard counts; blobs
 * are stored once, verified on the way out and collected when unreferenced; the root moves
 * generation by generation. Also shard/pin.c: a pinned commit survives a force merge. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "cluster/snaprepo.h"
#include "shard/shard.h"

static const char *MANIFEST =
    "{\"format\":1,\"snapshot\":\"s1\",\"uuid\":\"abcDEF_-12\",\"state\":\"SUCCESS\","
    "\"start_time_ms\":1,\"end_time_ms\":2,\"failures\":[],\"indices\":{\"ix\":{\"meta\":"
    "{\"settings\":{\"index\":{\"number_of_shards\":\"2\"}},\"mappings\":{}},\"shards\":["
    "{\"n_docs\":3,\"files\":[{\"name\":\"manifest\",\"blob\":"
    "\"0123456789abcdef0123456789abcdef\",\"size\":10}]},{\"n_docs\":0,\"files\":[]}]}}}";

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_manifest_round_trip_and_corruption(void **state)
{
    (void)state;
    json_t *m = json_loads(MANIFEST, 0, NULL);
    assert_non_null(m);
    char *enc;
    size_t len;
    assert_int_equal(sc_snaprepo_encode(m, &enc, &len), SC_OK);
    json_t *back = NULL;
    const char *why = NULL;
    assert_int_equal(sc_snaprepo_manifest_decode((uint8_t *)enc, len, &back, &why), SC_OK);
    assert_true(json_equal(m, back));
    json_decref(back);
    /* a root is not a manifest */
    assert_int_equal(sc_snaprepo_root_decode((uint8_t *)enc, len, &back, &why), SC_ECORRUPT);
    for (size_t i = 0; i < len; i++) {
        enc[i] ^= 0x20;
        why = NULL;
        assert_int_equal(sc_snaprepo_manifest_decode((uint8_t *)enc, len, &back, &why),
                         SC_ECORRUPT);
        assert_non_null(why);
        assert_null(back);
        enc[i] ^= 0x20;
    }
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(sc_snaprepo_manifest_decode((uint8_t *)enc, cut, &back, &why),
                         SC_ECORRUPT);
    free(enc);
    json_decref(m);
}

/* Encodes v (valid checksum) and expects the structural check to refuse it. */
static void expect_refused(const char *text, bool root)
{
    json_t *v = json_loads(text, 0, NULL);
    assert_non_null(v);
    char *enc;
    size_t len;
    assert_int_equal(sc_snaprepo_encode(v, &enc, &len), SC_OK);
    json_t *back = NULL;
    const char *why = NULL;
    sc_status st = root ? sc_snaprepo_root_decode((uint8_t *)enc, len, &back, &why)
                        : sc_snaprepo_manifest_decode((uint8_t *)enc, len, &back, &why);
    assert_int_equal(st, SC_ECORRUPT);
    assert_non_null(why);
    free(enc);
    json_decref(v);
}

static void test_structure_checks(void **state)
{
    (void)state;
    char buf[4096];
    /* unsafe file names, bad blob names, shard count mismatch, unknown format */
    const char *subst[][2] = {
        {"\"name\":\"manifest\"", "\"name\":\"../etc/passwd\""},
        {"\"name\":\"manifest\"", "\"name\":\".pin-x\""},
        {"\"name\":\"manifest\"", "\"name\":\"a/b\""},
        {"0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789abcdef"},
        {"0123456789abcdef0123456789abcdef", "0123"},
        {"\"number_of_shards\":\"2\"", "\"number_of_shards\":\"3\""},
        {"\"number_of_shards\":\"2\"", "\"number_of_shards\":\"x\""},
        {"\"format\":1", "\"format\":2"},
        {"\"state\":\"SUCCESS\"", "\"state\":\"DONE\""},
        {"\"uuid\":\"abcDEF_-12\"", "\"uuid\":\"a/b\""},
        {"\"size\":10", "\"size\":-1"},
    };
    for (size_t i = 0; i < sizeof subst / sizeof subst[0]; i++) {
        const char *at = strstr(MANIFEST, subst[i][0]);
        assert_non_null(at);
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - MANIFEST), MANIFEST, subst[i][1],
                 at + strlen(subst[i][0]));
        expect_refused(buf, false);
    }
    expect_refused("{\"format\":1,\"generation\":1,\"snapshots\":[{\"snapshot\":\"a\","
                   "\"uuid\":\"u1\",\"state\":\"SUCCESS\",\"start_time_ms\":1,"
                   "\"end_time_ms\":1,\"indices\":[],\"shards\":{\"total\":0,\"failed\":0,"
                   "\"successful\":0}},{\"snapshot\":\"a\",\"uuid\":\"u2\",\"state\":"
                   "\"SUCCESS\",\"start_time_ms\":1,\"end_time_ms\":1,\"indices\":[],"
                   "\"shards\":{\"total\":0,\"failed\":0,\"successful\":0}}]}",
                   true);
    expect_refused("[1,2]", true);
}

static void test_root_generations(void **state)
{
    (void)state;
    char dir[] = "/tmp/scry-snaprepo-XXXXXX";
    assert_non_null(mkdtemp(dir));
    json_t *root;
    uint64_t gen = 99;
    const char *why = NULL;
    char file[64];
    assert_int_equal(sc_snaprepo_root_read(dir, &root, &gen, &why, file), SC_OK);
    assert_int_equal(gen, 0);
    assert_int_equal(json_array_size(json_object_get(root, "snapshots")), 0);
    for (uint64_t g = 1; g <= 3; g++) {
        assert_int_equal(sc_snaprepo_root_write(dir, root, g), SC_OK);
        json_decref(root);
        assert_int_equal(sc_snaprepo_root_read(dir, &root, &gen, &why, file), SC_OK);
        assert_int_equal(gen, g);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/index-2", dir);
    assert_int_equal(access(path, F_OK), -1); /* older generations are removed */
    snprintf(path, sizeof path, "%s/index-3", dir);
    write_file(path, "{}", 2);
    json_decref(root);
    assert_int_equal(sc_snaprepo_root_read(dir, &root, &gen, &why, file), SC_ECORRUPT);
    assert_string_equal(file, "index-3");
    snprintf(path, sizeof path, "%s/index.latest", dir);
    write_file(path, "x\n", 2);
    assert_int_equal(sc_snaprepo_root_read(dir, &root, &gen, &why, file), SC_ECORRUPT);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_blobs_once_verified_and_collected(void **state)
{
    (void)state;
    char dir[] = "/tmp/scry-snaprepo-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char src[512], dst[512], hex[SC_SNAPREPO_BLOB_HEX + 1], path[512];
    snprintf(src, sizeof src, "%s/src", dir);
    write_file(src, "hello blobs", 11);
    uint64_t size;
    assert_int_equal(sc_snaprepo_hash_file(src, hex, &size), SC_OK);
    assert_int_equal(size, 11);
    bool copied;
    assert_int_equal(sc_snaprepo_blob_put(dir, src, hex, size, &copied), SC_OK);
    assert_true(copied);
    assert_int_equal(sc_snaprepo_blob_put(dir, src, hex, size, &copied), SC_OK);
    assert_false(copied);
    snprintf(dst, sizeof dst, "%s/out", dir);
    const char *why = NULL;
    assert_int_equal(sc_snaprepo_blob_get(dir, hex, size, dst, &why), SC_OK);
    uint8_t *data;
    size_t len;
    assert_int_equal(sc_file_read_all(dst, &data, &len), SC_OK);
    assert_int_equal(len, 11);
    assert_memory_equal(data, "hello blobs", 11);
    free(data);
    /* a flipped byte and a wrong size are caught, and the output is not left behind */
    sc_snaprepo_blob_path(dir, hex, path, sizeof path);
    write_file(path, "hello blobz", 11);
    assert_int_equal(sc_snaprepo_blob_get(dir, hex, size, dst, &why), SC_ECORRUPT);
    assert_int_equal(access(dst, F_OK), -1);
    assert_int_equal(sc_snaprepo_blob_get(dir, hex, 12, dst, &why), SC_ECORRUPT);
    assert_int_equal(sc_snaprepo_blob_get(dir, "00000000000000000000000000000000", 1, dst, &why),
                     SC_ENOTFOUND);
    /* a leftover temp file and an unreferenced blob are collected; referenced ones stay */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/blobs/%.2s/.x.tmp", dir, hex);
    write_file(tmp, "t", 1);
    char m[2048];
    snprintf(m, sizeof m, "[{\"indices\":{\"i\":{\"shards\":[{\"files\":[{\"blob\":\"%s\"}]}]}}}]",
             hex);
    json_t *keep = json_loads(m, 0, NULL);
    uint64_t removed;
    sc_snaprepo_gc(dir, keep, &removed);
    assert_int_equal(removed, 1);
    assert_int_equal(access(path, F_OK), 0);
    json_decref(keep);
    keep = json_array();
    sc_snaprepo_gc(dir, keep, &removed);
    assert_int_equal(removed, 1);
    assert_int_equal(access(path, F_OK), -1);
    json_decref(keep);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_pin_survives_merge(void **state)
{
    (void)state;
    char dir[] = "/tmp/scry-pin-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sc_shard_config cfg = {.path = dir, .no_background_thread = true};
    sc_shard *s;
    assert_int_equal(sc_shard_open(&cfg, &s, NULL), SC_OK);
    for (int seg = 0; seg < 3; seg++) {
        for (int i = 0; i < 10; i++) {
            char id[16], src[64];
            snprintf(id, sizeof id, "%d-%d", seg, i);
            snprintf(src, sizeof src, "{\"t\":\"doc %d %d\"}", seg, i);
            sc_shard_write_opts o = sc_shard_write_defaults();
            sc_shard_result r;
            assert_int_equal(sc_shard_index(s, sc_slice_cstr(id), sc_slice_cstr(src), &o, &r, NULL),
                             SC_OK);
        }
        assert_int_equal(sc_shard_refresh(s), SC_OK);
    }
    sc_shard_pinned pin;
    assert_int_equal(sc_shard_commit_pin(s, "bad-name", &pin), SC_EINVAL);
    assert_int_equal(sc_shard_commit_pin(s, SC_SHARD_PIN_PREFIX "t", &pin), SC_OK);
    assert_int_equal(pin.n_docs, 30);
    assert_true(pin.n_files >= 5); /* manifest, 3 segments, id table */
    assert_string_equal(pin.files[0], "manifest");
    assert_int_equal(sc_shard_force_merge(s, 1), SC_OK);
    for (size_t i = 0; i < pin.n_files; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", pin.dir, pin.files[i]);
        assert_int_equal(access(path, R_OK), 0);
    }
    /* the pinned files form an openable shard with the pinned documents */
    char copy[] = "/tmp/scry-pin-copy-XXXXXX";
    assert_non_null(mkdtemp(copy));
    for (size_t i = 0; i < pin.n_files; i++) {
        char from[8192], to[8192];
        snprintf(from, sizeof from, "%s/%s", pin.dir, pin.files[i]);
        snprintf(to, sizeof to, "%s/%s", copy, pin.files[i]);
        assert_int_equal(link(from, to), 0);
    }
    char left[8192];
    snprintf(left, sizeof left, "%s", pin.dir);
    sc_shard_close(s, false);
    /* a pin folder left behind (a killed copy) is removed when the shard opens */
    assert_int_equal(access(left, F_OK), 0);
    assert_int_equal(sc_shard_open(&cfg, &s, NULL), SC_OK);
    assert_int_equal(access(left, F_OK), -1);
    sc_shard_close(s, false);
    sc_shard_pinned_release(&pin);
    sc_shard_config c2 = {.path = copy, .no_background_thread = true};
    assert_int_equal(sc_shard_open(&c2, &s, NULL), SC_OK);
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(s);
    assert_int_equal(snap->n_docs, 30);
    sc_shard_searcher_release(snap);
    sc_shard_close(s, false);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
    assert_int_equal(sc_dir_remove_all(copy), SC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_round_trip_and_corruption),
        cmocka_unit_test(test_structure_checks),
        cmocka_unit_test(test_root_generations),
        cmocka_unit_test(test_blobs_once_verified_and_collected),
        cmocka_unit_test(test_pin_survives_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
