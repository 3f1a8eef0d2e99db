/* Tests for where the shard finds each _id and its versions (src/shard/idkeys.c sc__id_locate,
 * idfilter.c, shard.c): the id table holds only buffered ids and tombstones (a buffered doc's
 * versions are the buffer's, a tombstone's the tombstone table's), and a committed id is found
 * in the segments' `_id` terms behind each segment's filter, its versions in its doc's
 * _seq_no/_version/_primary_term doc values. A random model test runs index, create,
 * conditional index and delete, refresh, force merge, flush, a clean reopen and a reopen that
 * replays the translog (close without flush, as after a crash) against a plain model of every
 * id's versions; every get and every conflict must agree, and after every op the lookup of the
 * id written must agree with the model and the table's invariants (check_segment_lookup: a
 * filter that skipped a segment fails it). The model also merges down to 1-3 segments, lists
 * the ids as a peer recovery does, and sometimes makes the slots read their ids from stored
 * fields as a segment written before _id had doc values. Ids vary in length (up to ~200
 * bytes) and some hold a NUL byte. Some first writes of an id are append-only (a generated id's
 * first attempt: no lookup at all). The seed is printed and can be set with SCRY_ENTRY_SEED. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/hashmap.h"
#include "shard/internal.h"
#include "shard/shard.h"

#include "shard_dir.h"

static int setup(void **state)
{
    (void)state;
    return shard_dir_setup("entry-test");
}

static sc_shard *open_shard(void)
{
    return shard_dir_open(false);
}

#include "test_rng.h"

enum {
    N_IDS = 300,
    N_OPS = 6000
};

/* The model: every id's last operation. */
typedef struct model {
    bool known, exists;
    int64_t seq_no, term, version;
    int value;
} model;

/* Id i: "id-<i>", every fourth a long one, every fifth with a NUL byte inside (buf: 256). */
static sc_slice id_of(int i, char *buf)
{
    int n =
        i % 4 == 3 ? snprintf(buf, 256, "%0190d-long-%d", i, i) : snprintf(buf, 256, "id-%d", i);
    if (i % 5 == 2)
        buf[1] = 0;
    return sc_slice_make((const uint8_t *)buf, (size_t)n);
}

/* Where the shard finds id (sc__id_locate) agrees with the model and with the invariants of
 * the id table, which holds only the ids whose latest operation is buffered or a delete: a
 * known id is found; the table's entry has the id as its key and no segment has a live doc
 * of it (the segments' lookup, behind each segment's `_id` filter, finds nothing); an id
 * found in a segment has no table entry and is that doc's id. A filter that skipped a segment
 * holding the id, or a refresh or merge that lost one, fails here or in check_doc. */
static void check_segment_lookup(sc_shard *s, sc_slice id, bool known, unsigned long long seed)
{
    sc__id_loc loc;
    assert_int_equal(sc__id_locate(s, id, &loc), SC_OK);
    uint32_t doc = 0;
    sc__slot *sl = NULL;
    bool in_seg = false;
    assert_int_equal(sc__segments_find(s, id, sc_hashmap_hash(id), &sl, &doc, &in_seg), SC_OK);
    const char *bad = NULL;
    if (loc.known != known)
        bad = known ? "a known id is not found" : "an unknown id is found";
    else if (loc.known && loc.entry != SC__NO_ENTRY &&
             !sc_slice_eq(sc__entry_key(s, loc.entry), id))
        bad = "the table's entry has another key";
    else if (loc.known && loc.entry != SC__NO_ENTRY && in_seg)
        bad = "a buffered or deleted id has a live doc in a segment";
    else if (loc.known && loc.entry == SC__NO_ENTRY &&
             (!loc.slot || !sc_slice_eq(sc__slot_key(loc.slot, loc.at.doc), id)))
        bad = "the segment doc found has another id";
    else if (loc.known && loc.entry != SC__NO_ENTRY && loc.at.seg != SC__SEG_BUFFER &&
             loc.at.seg != SC__SEG_NONE)
        bad = "the table names a segment doc";
    if (bad)
        fail_msg("seed %llu: id %.*s: %s (entry %u, segment %u doc %u)", seed, (int)id.len,
                 (const char *)id.ptr, bad, loc.entry, loc.at.seg, loc.at.doc);
}

/* Every known id is found where its doc is, and no other. */
static void check_keys(sc_shard *s, const model *m, int n, unsigned long long seed)
{
    char b[256];
    for (int i = 0; i < n; i++)
        check_segment_lookup(s, id_of(i, b), m[i].known, seed);
    for (int i = n; i < n + 50; i++) /* never written */
        check_segment_lookup(s, id_of(i, b), false, seed);
}

/* The ids as a peer recovery lists them (sc_shard_list_ids): each known id once. */
typedef struct listed {
    const model *m;
    int n_seen, bad;
    bool seen[N_IDS];
} listed;

static void list_one(void *ctx, sc_slice id, bool deleted, int64_t seq_no, int64_t term,
                     int64_t version)
{
    listed *l = ctx;
    char b[256];
    (void)term;
    for (int i = 0; i < N_IDS; i++) {
        if (!sc_slice_eq(id, id_of(i, b)))
            continue;
        const model *x = &l->m[i];
        if (l->seen[i] || !x->known || deleted == x->exists || seq_no != x->seq_no ||
            version != x->version)
            l->bad++;
        l->seen[i] = true;
        l->n_seen++;
        return;
    }
    l->bad++;
}

static void check_list(sc_shard *s, const model *m, unsigned long long seed)
{
    static listed l;
    memset(&l, 0, sizeof l);
    l.m = m;
    uint64_t from = 0, next;
    for (;;) {
        sc_shard_list_ids(s, from, 64, list_one, &l, &next);
        if (next == from)
            break;
        from = next;
    }
    int known = 0;
    for (int i = 0; i < N_IDS; i++)
        known += m[i].known;
    if (l.bad || l.n_seen != known)
        fail_msg("seed %llu: listed %d ids (%d wrong), expected %d", seed, l.n_seen, l.bad, known);
}

/* Makes every slot read its ids from stored fields, as a segment written before _id had doc
 * values does. */
static void slots_without_id_dv(sc_shard *s)
{
    for (size_t i = 0; i < s->slots.len; i++)
        s->slots.ptr[i]->iddv_state = -1;
}

static void check_doc(sc_shard *s, int i, const model *m, unsigned long long seed)
{
    char b[256];
    sc_shard_doc d;
    assert_int_equal(sc_shard_get(s, id_of(i, b), &d), SC_OK);
    if (d.found != m->exists)
        fail_msg("seed %llu: doc %d found %d, expected %d", seed, i, d.found, m->exists);
    if (!d.found)
        return;
    char src[32];
    snprintf(src, sizeof(src), "{\"n\":%d}", m->value);
    if (d.seq_no != m->seq_no || d.version != m->version || d.primary_term != m->term ||
        d.source_len != strlen(src) || memcmp(d.source, src, d.source_len) != 0)
        fail_msg(
            "seed %llu: doc %d has seq_no %lld version %lld term %lld, expected %lld %lld %lld",
            seed, i, (long long)d.seq_no, (long long)d.version, (long long)d.primary_term,
            (long long)m->seq_no, (long long)m->version, (long long)m->term);
    sc_shard_doc_fini(&d);
}

/* One random write to id i, checked against the model and applied to it. */
static void random_write(sc_shard *s, int i, model *m, int value, unsigned long long seed)
{
    char b[256], src[32];
    snprintf(src, sizeof(src), "{\"n\":%d}", value);
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_result r;
    sc_shard_error err;
    int kind = (int)(next_rand() % 8);
    bool expect_conflict = false;
    if (kind == 1) { /* create */
        o.op_type = SC_SHARD_OP_CREATE;
        expect_conflict = m->exists;
    } else if (kind == 2 || kind == 3) { /* conditional, right or stale */
        o.if_seq_no = m->seq_no + (kind == 3);
        o.if_primary_term = m->known ? m->term : 1;
        expect_conflict = !m->exists || kind == 3;
    }
    bool del = kind >= 6;
    if (del)
        o.op_type = SC_SHARD_OP_INDEX;
    /* an id the shard never saw, created as a generated id's first attempt: no lookup, and
     * everything after (gets, conflicts, lookups, refresh, merges, replay) must agree */
    if (!m->known && kind <= 1 && next_rand() % 2) {
        o.op_type = SC_SHARD_OP_CREATE;
        o.append_only = true;
        kind = 8;
    }
    sc_status st = del ? sc_shard_delete(s, id_of(i, b), &o, &r, &err)
                       : sc_shard_index(s, id_of(i, b), sc_slice_cstr(src), &o, &r, &err);
    if (expect_conflict) {
        if (st != SC_ECONFLICT)
            fail_msg("seed %llu: op %d on doc %d answered %s, expected a conflict", seed, kind, i,
                     sc_status_str(st));
        return;
    }
    if (st != SC_OK)
        fail_msg("seed %llu: op %d on doc %d failed: %s", seed, kind, i, sc_status_str(st));
    if (r.version != (m->known ? m->version + 1 : 1) || r.found != m->exists)
        fail_msg("seed %llu: op %d on doc %d gave version %lld found %d", seed, kind, i,
                 (long long)r.version, r.found);
    m->known = true;
    m->exists = !del;
    m->seq_no = r.seq_no;
    m->term = r.primary_term;
    m->version = r.version;
    m->value = value;
}

static void test_model(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_ENTRY_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    printf("entry_versions_test seed %llu (SCRY_ENTRY_SEED)\n", seed);
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    static model m[N_IDS];
    memset(m, 0, sizeof m);
    char b[256];
    sc_shard *s = open_shard();
    for (int op = 0; op < N_OPS; op++) {
        int i = (int)(next_rand() % N_IDS);
        random_write(s, i, &m[i], op, seed);
        check_segment_lookup(s, id_of(i, b), m[i].known, seed);
        switch (next_rand() % 400) {
        case 0:
        case 1:
        case 2:
        case 3: assert_int_equal(sc_shard_refresh(s), SC_OK); break;
        case 4:
        case 8: /* down to 1-3 segments: entries move between segments */
            assert_int_equal(sc_shard_refresh(s), SC_OK);
            assert_int_equal(sc_shard_force_merge(s, 1 + (uint32_t)(next_rand() % 3)), SC_OK);
            break;
        case 9: slots_without_id_dv(s); break;
        case 5: assert_int_equal(sc_shard_flush(s), SC_OK); break;
        case 6: /* clean restart: versions from the id table file and the segments */
            sc_shard_close(s, true);
            s = open_shard();
            break;
        case 7: /* as after a crash: the translog replays what the last commit lacks */
            sc_shard_close(s, false);
            s = open_shard();
            break;
        default: break;
        }
        if (op % 500 == 499) {
            for (int k = 0; k < N_IDS; k++)
                check_doc(s, k, &m[k], seed);
            check_keys(s, m, N_IDS, seed);
            check_list(s, m, seed);
        }
    }
    check_keys(s, m, N_IDS, seed);
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    sc_shard_close(s, false);
    s = open_shard(); /* replay once more at the end */
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    sc_shard_close(s, true);
    s = open_shard();
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    sc_shard_close(s, false);
}

/* append_only is the caller's promise that the id is new: the write does not look it up at
 * all (so an id that was there after all is indexed again as created, version 1: what the
 * callers must never let happen, api/api_bulk.c and api_doc.c), and a write without it
 * finds the doc the append-only write buffered, by the table and after a refresh in the
 * segments. */
static void test_append_only(void **state)
{
    (void)state;
    sc_shard *s = open_shard();
    sc_shard_write_opts ao = sc_shard_write_defaults();
    ao.op_type = SC_SHARD_OP_CREATE;
    ao.append_only = true;
    sc_shard_result r;
    sc_shard_error err;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), &ao, &r, &err),
                     SC_OK);
    assert_true(r.created);
    assert_int_equal(r.version, 1);
    sc_shard_doc d;
    assert_int_equal(sc_shard_get(s, sc_slice_cstr("a"), &d), SC_OK);
    assert_true(d.found);
    sc_shard_doc_fini(&d);
    sc_shard_write_opts cr = sc_shard_write_defaults();
    cr.op_type = SC_SHARD_OP_CREATE;
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), &cr, &r, &err),
                     SC_ECONFLICT);
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), NULL, &r, &err),
                     SC_OK);
    assert_false(r.created);
    assert_int_equal(r.version, 2);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), &cr, &r, &err),
                     SC_ECONFLICT);
    /* the flag really skips the lookup: the committed "a" is not seen */
    assert_int_equal(sc_shard_index(s, sc_slice_cstr("a"), sc_slice_cstr("{}"), &ao, &r, &err),
                     SC_OK);
    assert_true(r.created);
    assert_int_equal(r.version, 1);
    sc_shard_close(s, false);
}

/* A deleted then re-created id reuses its tombstone's slot; a segment doc's versions are read
 * from its doc values after a refresh, a merge and a reopen. */
static void test_tombstones_and_segments(void **state)
{
    (void)state;
    sc_shard *s = open_shard();
    char b[256];
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_result r;
    sc_shard_error err;
    for (int i = 0; i < 50; i++)
        assert_int_equal(sc_shard_index(s, id_of(i, b), sc_slice_cstr("{\"n\":1}"), &o, &r, &err),
                         SC_OK);
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    for (int i = 0; i < 50; i += 2)
        assert_int_equal(sc_shard_delete(s, id_of(i, b), &o, &r, &err), SC_OK);
    size_t tombs = s->tombs.len;
    assert_int_equal(tombs, 25);
    assert_int_equal(s->ids.len, 25); /* the tombstones; the live ids are in the segment */
    for (int i = 0; i < 50; i += 2)
        assert_int_equal(sc_shard_index(s, id_of(i, b), sc_slice_cstr("{\"n\":2}"), &o, &r, &err),
                         SC_OK);
    assert_int_equal(s->tombs_free.len, 25);
    for (int i = 10; i < 20; i++)
        assert_int_equal(sc_shard_delete(s, id_of(i, b), &o, &r, &err), SC_OK);
    assert_int_equal(s->tombs.len, tombs); /* reused */
    assert_int_equal(sc_shard_refresh(s), SC_OK);
    assert_int_equal(sc_shard_force_merge(s, 1), SC_OK);
    /* only the tombstones' keys are in memory (a varint length and the bytes each); the live
     * docs' are the segment's _id doc values */
    size_t want = 0;
    for (int i = 10; i < 20; i++) {
        size_t len = id_of(i, b).len;
        want += (len < 128 ? 1 : 2) + len;
    }
    assert_int_equal(s->tomb_keys.len - s->tomb_keys_garbage, want);
    /* the table holds the tombstones only; the live ids are in the merged segment */
    assert_int_equal(s->ids.len, 10);
    for (int i = 0; i < 50; i++) {
        uint32_t ei;
        bool deleted = i >= 10 && i < 20;
        assert_int_equal(sc__entry_find(s, id_of(i, b), &ei), deleted);
        if (deleted) {
            assert_int_equal(s->entries.ptr[ei].seg, SC__SEG_NONE);
            assert_true(sc_slice_eq(sc__entry_key(s, ei), id_of(i, b)));
        }
        sc__id_loc loc;
        assert_int_equal(sc__id_locate(s, id_of(i, b), &loc), SC_OK);
        assert_true(loc.known);
        assert_int_equal(loc.slot != NULL, !deleted);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 50; i++) {
            sc_shard_doc d;
            assert_int_equal(sc_shard_get(s, id_of(i, b), &d), SC_OK);
            bool deleted = i >= 10 && i < 20;
            assert_int_equal(d.found, !deleted);
            int64_t version = (i % 2 == 0 ? 3 : 1) + (deleted && i % 2 == 1);
            if (deleted)
                continue;
            assert_int_equal(d.version, version);
            sc_shard_doc_fini(&d);
        }
        /* a delete's version follows its tombstone */
        assert_int_equal(sc_shard_index(s, id_of(11, b), sc_slice_cstr("{\"n\":3}"), &o, &r, &err),
                         SC_OK);
        assert_int_equal(r.version, 3 + 2 * pass);
        assert_int_equal(sc_shard_delete(s, id_of(11, b), &o, &r, &err), SC_OK);
        assert_int_equal(r.version, 4 + 2 * pass);
        sc_shard_close(s, true);
        s = open_shard();
        o.op_type = SC_SHARD_OP_CREATE;
        assert_int_equal(sc_shard_index(s, id_of(1, b), sc_slice_cstr("{}"), &o, &r, &err),
                         SC_ECONFLICT);
        o.op_type = SC_SHARD_OP_INDEX;
        sc_shard_doc d; /* the tombstone survived the reopen: the next pass goes on from it */
        assert_int_equal(sc_shard_get(s, id_of(11, b), &d), SC_OK);
        assert_false(d.found);
    }
    sc_shard_close(s, false);
}

/* Force merges run over and over in a second thread while the model's writes go on: the
 * merges' inputs have deletes at merge start (their docs are renumbered in the merged segment
 * by their rank among the live ones) and get more deletes and overwrites while they run
 * (carried over to the merged segment's live bits, which its lookups then read). Every id must
 * still be found at its own doc with its own versions and source. */
typedef struct merger {
    sc_shard *s;
    atomic_int stop;
    int merges, failures;
} merger;

static void *merge_loop(void *arg)
{
    merger *mg = arg;
    while (!atomic_load(&mg->stop)) {
        sc_status st = sc_shard_force_merge(mg->s, 1 + (uint32_t)(mg->merges % 2));
        if (st != SC_OK)
            mg->failures++;
        mg->merges++;
    }
    return NULL;
}

static void test_merges_during_writes(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_ENTRY_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    printf("entry_versions_test merges seed %llu (SCRY_ENTRY_SEED)\n", seed);
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    static model m[N_IDS];
    memset(m, 0, sizeof m);
    sc_shard *s = open_shard();
    merger mg = {.s = s};
    atomic_init(&mg.stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, merge_loop, &mg), 0);
    for (int op = 0; op < N_OPS; op++) {
        /* ids in load order first (segments of consecutive ids, then deletes among them) */
        int i = op < N_IDS ? op : (int)(next_rand() % N_IDS);
        random_write(s, i, &m[i], op, seed);
        if (op % 97 == 96)
            assert_int_equal(sc_shard_refresh(s), SC_OK);
    }
    atomic_store(&mg.stop, 1);
    pthread_join(th, NULL);
    uint64_t merged = atomic_load(&s->n_merges);
    printf("entry_versions_test: %d force merges, %llu merges beside the writes\n", mg.merges,
           (unsigned long long)merged);
    assert_int_equal(mg.failures, 0);
    assert_true(merged > 0);
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    check_keys(s, m, N_IDS, seed);
    check_list(s, m, seed);
    assert_int_equal(sc_shard_force_merge(s, 1), SC_OK);
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    sc_shard_close(s, true);
    s = open_shard();
    for (int k = 0; k < N_IDS; k++)
        check_doc(s, k, &m[k], seed);
    check_keys(s, m, N_IDS, seed);
    sc_shard_close(s, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tombstones_and_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merges_during_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
