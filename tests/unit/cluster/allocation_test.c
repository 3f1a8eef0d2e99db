/* Tests for cluster/allocation: hand-made cases (fresh spread, promotion with a term bump, a
 * stale copy never promoted, stability) and a randomized model check: random node sets joining
 * and leaving, random indices, random replicas marked in sync, and after every step the
 * invariants of allocation.h. The seed is printed; SCRY_TEST_SEED=N replays a run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cluster/allocation.h"

static const char *const k_names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"};

static size_t copies_on(const sc_routing_table *t, const char *node, bool primaries_only)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++)
            for (size_t k = 0; k < t->indices[i].shards[s].n_copies; k++) {
                const sc_shard_copy *c = &t->indices[i].shards[s].copies[k];
                n += !strcmp(c->node, node) && (!primaries_only || c->primary);
            }
    return n;
}

static bool is_live(const char *node, const char *const *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(node, nodes[i]))
            return true;
    return false;
}

static bool has_id(const sc_shard_routing *s, const char *id)
{
    for (size_t i = 0; i < s->n_in_sync; i++)
        if (!strcmp(s->in_sync[i].alloc_id, id))
            return true;
    return false;
}

static const sc_shard_copy *copy_by_id(const sc_shard_routing *s, const char *id)
{
    for (size_t i = 0; i < s->n_copies; i++)
        if (!strcmp(s->copies[i].alloc_id, id))
            return &s->copies[i];
    return NULL;
}

/* The invariants of one allocation step from `prev` to `t` on live nodes. */
static void check(const sc_routing_table *prev, const sc_routing_table *t, const char *const *nodes,
                  size_t n_nodes, unsigned seed)
{
    for (size_t i = 0; i < t->n_indices; i++) {
        const sc_index_routing *r = &t->indices[i];
        const sc_index_routing *pr = sc_routing_table_find(prev, r->index);
        if (pr && pr->number_of_shards != r->number_of_shards)
            pr = NULL;
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            size_t primaries = 0;
            for (size_t k = 0; k < sh->n_copies; k++) {
                if (!is_live(sh->copies[k].node, nodes, n_nodes))
                    fail_msg("seed %u: copy on dead node %s", seed, sh->copies[k].node);
                for (size_t j = 0; j < k; j++)
                    if (!strcmp(sh->copies[j].node, sh->copies[k].node))
                        fail_msg("seed %u: two copies of [%s][%u] on %s", seed, r->index, s,
                                 sh->copies[k].node);
                primaries += sh->copies[k].primary;
            }
            assert_true(primaries <= 1);
            if (primaries)
                assert_true(sh->copies[0].primary);
            assert_true(sh->n_copies <= 1 + r->number_of_replicas);
            size_t want = 1 + r->number_of_replicas < n_nodes ? 1 + r->number_of_replicas : n_nodes;
            if (primaries && sh->n_copies != want)
                fail_msg("seed %u: [%s][%u] has %zu copies, want %zu", seed, r->index, s,
                         sh->n_copies, want);
            /* with a primary, in-sync copies are live copies; without, the set is kept */
            for (size_t k = 0; primaries && k < sh->n_in_sync; k++)
                assert_non_null(copy_by_id(sh, sh->in_sync[k].alloc_id));
            if (primaries)
                assert_true(has_id(sh, sh->copies[0].alloc_id));
            if (!pr && primaries && sh->n_in_sync != 1) /* a fresh shard: the primary only */
                fail_msg("seed %u: fresh [%s][%u] has %zu in-sync copies", seed, r->index, s,
                         sh->n_in_sync);
            if (!pr)
                continue;
            const sc_shard_routing *ps = &pr->shards[s];
            /* stability: surviving copies stay where they were (unless replicas were trimmed) */
            for (size_t k = 0; k < ps->n_copies; k++) {
                const sc_shard_copy *old = &ps->copies[k];
                /* exempt: replicas trimmed, and stale copies of a red shard that gave way to
                 * returning in-sync copies */
                bool prev_red = !(ps->n_copies && ps->copies[0].primary);
                if (!is_live(old->node, nodes, n_nodes) ||
                    pr->number_of_replicas > r->number_of_replicas ||
                    (prev_red && !has_id(ps, old->alloc_id)))
                    continue;
                const sc_shard_copy *now = copy_by_id(sh, old->alloc_id);
                if (!now || strcmp(now->node, old->node))
                    fail_msg("seed %u: copy %s of [%s][%u] moved or vanished", seed, old->alloc_id,
                             r->index, s);
            }
            bool had_primary = ps->n_copies && ps->copies[0].primary;
            bool kept = had_primary && is_live(ps->copies[0].node, nodes, n_nodes);
            if (kept) {
                assert_string_equal(sh->copies[0].alloc_id, ps->copies[0].alloc_id);
                assert_int_equal(sh->primary_term, ps->primary_term);
            } else if (primaries && ps->primary_term > 0) {
                /* promoted: from the previous in-sync set, one term up */
                if (!has_id(ps, sh->copies[0].alloc_id))
                    fail_msg("seed %u: [%s][%u] promoted a stale copy", seed, r->index, s);
                assert_int_equal(sh->primary_term, ps->primary_term + 1);
            } else if (!primaries) {
                assert_int_equal(sh->primary_term, ps->primary_term);
            }
        }
    }
}

static void test_fresh_even(void **state)
{
    (void)state;
    for (size_t nn = 1; nn <= 7; nn++)
        for (uint32_t shards = 1; shards <= 12; shards++)
            for (uint32_t reps = 0; reps <= 3; reps++) {
                sc_alloc_index ix[2] = {{"a", shards, reps}, {"b", shards + 1, reps}};
                uint64_t rng = 1;
                sc_routing_table t;
                assert_int_equal(sc_allocation_compute(k_names, nn, ix, 2, NULL, &rng, &t), SC_OK);
                check(&(sc_routing_table){0}, &t, k_names, nn, 0);
                size_t lo = SIZE_MAX, hi = 0;
                for (size_t i = 0; i < nn; i++) {
                    size_t c = copies_on(&t, k_names[i], false);
                    lo = c < lo ? c : lo;
                    hi = c > hi ? c : hi;
                }
                if (hi - lo > 1)
                    fail_msg("%zu nodes, %u shards, %u replicas: copies per node %zu..%zu", nn,
                             shards, reps, lo, hi);
                for (size_t i = 0; i < t.n_indices; i++)
                    for (uint32_t s = 0; s < t.indices[i].number_of_shards; s++) {
                        assert_int_equal(t.indices[i].shards[s].primary_term, 1);
                        assert_true(t.indices[i].shards[s].copies[0].primary);
                    }
                sc_routing_table_fini(&t);
            }
}

static void test_promotion_and_stale(void **state)
{
    (void)state;
    sc_alloc_index ix = {"i", 1, 1};
    uint64_t rng = 5;
    sc_routing_table t1, t2, t3;
    const char *const two[] = {"a", "b"};
    assert_int_equal(sc_allocation_compute(two, 2, &ix, 1, NULL, &rng, &t1), SC_OK);
    sc_shard_routing *s = &t1.indices[0].shards[0];
    assert_int_equal(s->n_copies, 2);
    /* only the primary starts in sync: the replica holds nothing before its recovery */
    assert_int_equal(s->n_in_sync, 1);
    assert_string_equal(s->in_sync[0].alloc_id, s->copies[0].alloc_id);
    const char *prim = s->copies[0].node, *rep = s->copies[1].node;
    char rep_id[SC_ALLOC_ID_MAX];
    memcpy(rep_id, s->copies[1].alloc_id, sizeof rep_id);
    {
        /* the primary's node leaves before the replica recovered: red, the empty replica is
         * not promoted (the old allocation promoted it and the shard's documents vanished) */
        sc_routing_table r;
        const char *const rep_only[] = {rep};
        assert_int_equal(sc_allocation_compute(rep_only, 1, &ix, 1, &t1, &rng, &r), SC_OK);
        const sc_shard_routing *rs = &r.indices[0].shards[0];
        assert_int_equal(rs->n_copies, 1);
        assert_false(rs->copies[0].primary);
        assert_string_equal(rs->copies[0].alloc_id, rep_id);
        assert_int_equal(rs->primary_term, 1);
        assert_int_equal(rs->n_in_sync, 1);
        assert_string_equal(rs->in_sync[0].node, prim);
        sc_routing_table_fini(&r);
    }
    /* the replica's recovery completes: the primary adds it to the in-sync set */
    memcpy(s->in_sync[1].alloc_id, rep_id, sizeof rep_id);
    snprintf(s->in_sync[1].node, sizeof s->in_sync[1].node, "%s", rep);
    s->n_in_sync = 2;
    /* the primary's node leaves: the in-sync replica is promoted, term 2 */
    const char *const only_rep[] = {rep};
    assert_int_equal(sc_allocation_compute(only_rep, 1, &ix, 1, &t1, &rng, &t2), SC_OK);
    s = &t2.indices[0].shards[0];
    assert_int_equal(s->n_copies, 1);
    assert_true(s->copies[0].primary);
    assert_string_equal(s->copies[0].alloc_id, rep_id);
    assert_int_equal(s->primary_term, 2);
    /* the old primary's node returns: it gets a new replica copy, not in sync */
    const char *const both[] = {prim, rep};
    assert_int_equal(sc_allocation_compute(both, 2, &ix, 1, &t2, &rng, &t3), SC_OK);
    s = &t3.indices[0].shards[0];
    assert_int_equal(s->n_copies, 2);
    assert_string_equal(s->copies[1].node, prim);
    assert_int_equal(s->n_in_sync, 1);
    assert_int_equal(s->primary_term, 2);
    /* the new primary (on `rep`) leaves while the copy on `prim` is not in sync: red, the
     * stale copy stays a replica, term kept */
    sc_routing_table t4;
    const char *const only_prim[] = {prim};
    assert_int_equal(sc_allocation_compute(only_prim, 1, &ix, 1, &t3, &rng, &t4), SC_OK);
    s = &t4.indices[0].shards[0];
    assert_int_equal(s->n_copies, 1);
    assert_false(s->copies[0].primary);
    assert_int_equal(s->n_in_sync, 1); /* kept: the copy on `rep` holds every write */
    assert_string_equal(s->in_sync[0].node, rep);
    assert_int_equal(s->primary_term, 2);
    /* ... and stays red when more nodes come: a stale copy is never made primary */
    sc_routing_table t5;
    const char *const more[] = {prim, "n0", "n1", "n2"};
    assert_int_equal(sc_allocation_compute(more, 4, &ix, 1, &t4, &rng, &t5), SC_OK);
    assert_int_equal(t5.indices[0].shards[0].n_copies, 1);
    assert_false(t5.indices[0].shards[0].copies[0].primary);
    /* `rep` comes back: its in-sync copy is primary again, under term 3 */
    sc_routing_table t6;
    const char *const back[] = {prim, "n0", "n1", "n2", rep};
    assert_int_equal(sc_allocation_compute(back, 5, &ix, 1, &t5, &rng, &t6), SC_OK);
    s = &t6.indices[0].shards[0];
    assert_true(s->copies[0].primary);
    assert_string_equal(s->copies[0].alloc_id, rep_id);
    assert_string_equal(s->copies[0].node, rep);
    assert_int_equal(s->primary_term, 3);
    assert_int_equal(s->n_copies, 2);
    sc_routing_table_fini(&t6);
    sc_routing_table_fini(&t1);
    sc_routing_table_fini(&t2);
    sc_routing_table_fini(&t3);
    sc_routing_table_fini(&t4);
    sc_routing_table_fini(&t5);
}

/* Every node leaves, then all come back: every primary returns to an in-sync copy. */
static void test_full_restart(void **state)
{
    (void)state;
    sc_alloc_index ix = {"i", 4, 1};
    uint64_t rng = 11;
    sc_routing_table t1, t2, t3;
    assert_int_equal(sc_allocation_compute(k_names, 3, &ix, 1, NULL, &rng, &t1), SC_OK);
    for (uint32_t s = 0; s < 4; s++) { /* every replica recovered and marked in sync */
        sc_shard_routing *sh = &t1.indices[0].shards[s];
        assert_int_equal(sh->n_in_sync, 1);
        sh->in_sync[1] = (sc_in_sync){{0}, {0}};
        memcpy(sh->in_sync[1].alloc_id, sh->copies[1].alloc_id, SC_ALLOC_ID_MAX);
        memcpy(sh->in_sync[1].node, sh->copies[1].node, SC_ALLOC_NODE_MAX);
        sh->n_in_sync = 2;
    }
    assert_int_equal(sc_allocation_compute(k_names, 0, &ix, 1, &t1, &rng, &t2), SC_OK);
    for (uint32_t s = 0; s < 4; s++) {
        assert_int_equal(t2.indices[0].shards[s].n_copies, 0);
        assert_int_equal(t2.indices[0].shards[s].n_in_sync, 2);
    }
    assert_int_equal(sc_allocation_compute(k_names, 3, &ix, 1, &t2, &rng, &t3), SC_OK);
    check(&t2, &t3, k_names, 3, 0);
    for (uint32_t s = 0; s < 4; s++) {
        const sc_shard_routing *a = &t1.indices[0].shards[s], *b = &t3.indices[0].shards[s];
        assert_true(b->copies[0].primary);
        assert_int_equal(b->primary_term, 2);
        assert_int_equal(b->n_copies, 2);
        assert_non_null(copy_by_id(a, b->copies[0].alloc_id));
        assert_non_null(copy_by_id(a, b->copies[1].alloc_id));
    }
    sc_routing_table_fini(&t1);
    sc_routing_table_fini(&t2);
    sc_routing_table_fini(&t3);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    sc_alloc_index ix = {"logs", 6, 2};
    uint64_t rng = 9;
    sc_routing_table t;
    assert_int_equal(sc_allocation_compute(k_names, 4, &ix, 1, NULL, &rng, &t), SC_OK);
    json_t *j = sc_index_routing_to_json(&t.indices[0]);
    sc_index_routing back;
    assert_int_equal(sc_index_routing_from_json("logs", j, &back), SC_OK);
    assert_true(sc_index_routing_equal(&t.indices[0], &back));
    json_decref(j);
    sc_index_routing_fini(&back);
    sc_routing_table_fini(&t);
    static const char *const bad[] = {
        "{}",
        "[]",
        "{\"number_of_shards\":1,\"number_of_replicas\":0,\"shards\":[]}",
        "{\"number_of_shards\":1,\"number_of_replicas\":0,\"shards\":[{\"primary_term\":1,"
        "\"in_sync\":[5],\"copies\":[]}]}",
        "{\"number_of_shards\":1,\"number_of_replicas\":0,\"shards\":[{\"primary_term\":1,"
        "\"in_sync\":[],\"copies\":[{\"node\":\"a\",\"alloc_id\":\"x\"},{\"node\":\"b\","
        "\"alloc_id\":\"y\",\"primary\":true}]}]}",
        "{\"number_of_shards\":99999,\"number_of_replicas\":0,\"shards\":[]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        assert_int_equal(sc_index_routing_from_json("x", b, &back), SC_ECORRUPT);
        json_decref(b);
    }
}

/* Marks every copy of every shard with a primary in sync with probability 1/2 (a recovery). */
static void random_recoveries(sc_routing_table *t, unsigned *rs)
{
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            sc_shard_routing *sh = &t->indices[i].shards[s];
            for (size_t k = 1; sh->n_copies && sh->copies[0].primary && k < sh->n_copies; k++)
                if (!has_id(sh, sh->copies[k].alloc_id) && rand_r(rs) % 2) {
                    sc_in_sync *ns = realloc(sh->in_sync, (sh->n_in_sync + 1) * sizeof *ns);
                    assert_non_null(ns);
                    sh->in_sync = ns;
                    sc_in_sync *is = &sh->in_sync[sh->n_in_sync++];
                    memcpy(is->alloc_id, sh->copies[k].alloc_id, SC_ALLOC_ID_MAX);
                    memcpy(is->node, sh->copies[k].node, SC_ALLOC_NODE_MAX);
                }
        }
}

static void test_random_model(void **state)
{
    (void)state;
    unsigned seed = getenv("SCRY_TEST_SEED") ? (unsigned)strtoul(getenv("SCRY_TEST_SEED"), 0, 10)
                                             : (unsigned)time(NULL);
    printf("allocation_test: seed %u (SCRY_TEST_SEED=%u replays)\n", seed, seed);
    for (int run = 0; run < 300; run++) {
        unsigned rs = seed + (unsigned)run;
        size_t n_ix = 1 + rand_r(&rs) % 4;
        sc_alloc_index ix[4];
        char names[4][8];
        for (size_t i = 0; i < n_ix; i++) {
            snprintf(names[i], sizeof names[i], "ix%zu", i);
            ix[i] = (sc_alloc_index){names[i], 1 + rand_r(&rs) % 8, rand_r(&rs) % 4};
        }
        sc_routing_table t = {0};
        uint64_t rng = rs;
        for (int step = 0; step < 30; step++) {
            const char *live[10];
            size_t n = 0;
            for (size_t i = 0; i < 10; i++)
                if (rand_r(&rs) % 3)
                    live[n++] = k_names[i];
            if (rand_r(&rs) % 5 == 0) /* sometimes replicas change */
                ix[rand_r(&rs) % n_ix].number_of_replicas = rand_r(&rs) % 4;
            sc_routing_table next;
            assert_int_equal(sc_allocation_compute(live, n, ix, n_ix, &t, &rng, &next), SC_OK);
            check(&t, &next, live, n, rs);
            /* idempotent: the same inputs again change nothing */
            sc_routing_table again;
            assert_int_equal(sc_allocation_compute(live, n, ix, n_ix, &next, &rng, &again), SC_OK);
            for (size_t i = 0; i < next.n_indices; i++)
                assert_true(sc_index_routing_equal(&next.indices[i], &again.indices[i]));
            sc_routing_table_fini(&again);
            sc_routing_table_fini(&t);
            t = next;
            random_recoveries(&t, &rs);
        }
        sc_routing_table_fini(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_even),   cmocka_unit_test(test_promotion_and_stale),
        cmocka_unit_test(test_full_restart), cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_random_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
