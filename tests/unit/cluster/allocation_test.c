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

/* The hand-made and model cases of placement and promotion run with rebalancing off (they
 * check that copies stay put); the rebalancing cases below turn it on. */
static const sc_alloc_settings k_off = {SC_REBALANCE_NONE, 2, 1.0};

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
                assert_int_equal(sc_allocation_compute(k_names, nn, ix, 2, NULL, &k_off, &rng, &t),
                                 SC_OK);
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
    assert_int_equal(sc_allocation_compute(two, 2, &ix, 1, NULL, &k_off, &rng, &t1), SC_OK);
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
        assert_int_equal(sc_allocation_compute(rep_only, 1, &ix, 1, &t1, &k_off, &rng, &r), SC_OK);
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
    assert_int_equal(sc_allocation_compute(only_rep, 1, &ix, 1, &t1, &k_off, &rng, &t2), SC_OK);
    s = &t2.indices[0].shards[0];
    assert_int_equal(s->n_copies, 1);
    assert_true(s->copies[0].primary);
    assert_string_equal(s->copies[0].alloc_id, rep_id);
    assert_int_equal(s->primary_term, 2);
    /* the old primary's node returns: it gets a new replica copy, not in sync */
    const char *const both[] = {prim, rep};
    assert_int_equal(sc_allocation_compute(both, 2, &ix, 1, &t2, &k_off, &rng, &t3), SC_OK);
    s = &t3.indices[0].shards[0];
    assert_int_equal(s->n_copies, 2);
    assert_string_equal(s->copies[1].node, prim);
    assert_int_equal(s->n_in_sync, 1);
    assert_int_equal(s->primary_term, 2);
    /* the new primary (on `rep`) leaves while the copy on `prim` is not in sync: red, the
     * stale copy stays a replica, term kept */
    sc_routing_table t4;
    const char *const only_prim[] = {prim};
    assert_int_equal(sc_allocation_compute(only_prim, 1, &ix, 1, &t3, &k_off, &rng, &t4), SC_OK);
    s = &t4.indices[0].shards[0];
    assert_int_equal(s->n_copies, 1);
    assert_false(s->copies[0].primary);
    assert_int_equal(s->n_in_sync, 1); /* kept: the copy on `rep` holds every write */
    assert_string_equal(s->in_sync[0].node, rep);
    assert_int_equal(s->primary_term, 2);
    /* ... and stays red when more nodes come: a stale copy is never made primary */
    sc_routing_table t5;
    const char *const more[] = {prim, "n0", "n1", "n2"};
    assert_int_equal(sc_allocation_compute(more, 4, &ix, 1, &t4, &k_off, &rng, &t5), SC_OK);
    assert_int_equal(t5.indices[0].shards[0].n_copies, 1);
    assert_false(t5.indices[0].shards[0].copies[0].primary);
    /* `rep` comes back: its in-sync copy is primary again, under term 3 */
    sc_routing_table t6;
    const char *const back[] = {prim, "n0", "n1", "n2", rep};
    assert_int_equal(sc_allocation_compute(back, 5, &ix, 1, &t5, &k_off, &rng, &t6), SC_OK);
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
    assert_int_equal(sc_allocation_compute(k_names, 3, &ix, 1, NULL, &k_off, &rng, &t1), SC_OK);
    for (uint32_t s = 0; s < 4; s++) { /* every replica recovered and marked in sync */
        sc_shard_routing *sh = &t1.indices[0].shards[s];
        assert_int_equal(sh->n_in_sync, 1);
        sh->in_sync[1] = (sc_in_sync){{0}, {0}};
        memcpy(sh->in_sync[1].alloc_id, sh->copies[1].alloc_id, SC_ALLOC_ID_MAX);
        memcpy(sh->in_sync[1].node, sh->copies[1].node, SC_ALLOC_NODE_MAX);
        sh->n_in_sync = 2;
    }
    assert_int_equal(sc_allocation_compute(k_names, 0, &ix, 1, &t1, &k_off, &rng, &t2), SC_OK);
    for (uint32_t s = 0; s < 4; s++) {
        assert_int_equal(t2.indices[0].shards[s].n_copies, 0);
        assert_int_equal(t2.indices[0].shards[s].n_in_sync, 2);
    }
    assert_int_equal(sc_allocation_compute(k_names, 3, &ix, 1, &t2, &k_off, &rng, &t3), SC_OK);
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
    assert_int_equal(sc_allocation_compute(k_names, 4, &ix, 1, NULL, &k_off, &rng, &t), SC_OK);
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
            assert_int_equal(sc_allocation_compute(live, n, ix, n_ix, &t, &k_off, &rng, &next),
                             SC_OK);
            check(&t, &next, live, n, rs);
            /* idempotent: the same inputs again change nothing */
            sc_routing_table again;
            assert_int_equal(sc_allocation_compute(live, n, ix, n_ix, &next, &k_off, &rng, &again),
                             SC_OK);
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

/* ---- rebalancing ---- */

/* Marks every live copy of every shard with a primary in sync (every recovery done). */
static void all_recovered(sc_routing_table *t)
{
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            sc_shard_routing *sh = &t->indices[i].shards[s];
            for (size_t k = 1; sh->n_copies && sh->copies[0].primary && k < sh->n_copies; k++)
                if (!has_id(sh, sh->copies[k].alloc_id)) {
                    sc_in_sync *ns = realloc(sh->in_sync, (sh->n_in_sync + 1) * sizeof *ns);
                    assert_non_null(ns);
                    sh->in_sync = ns;
                    sc_in_sync *is = &sh->in_sync[sh->n_in_sync++];
                    memcpy(is->alloc_id, sh->copies[k].alloc_id, SC_ALLOC_ID_MAX);
                    memcpy(is->node, sh->copies[k].node, SC_ALLOC_NODE_MAX);
                }
        }
}

static size_t n_targets(const sc_routing_table *t, size_t *primaries)
{
    size_t n = 0;
    if (primaries)
        *primaries = 0;
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            const sc_shard_routing *sh = &t->indices[i].shards[s];
            for (size_t k = 0; k < sh->n_copies; k++) {
                const sc_shard_copy *c = &sh->copies[k];
                if (!c->relocating_from[0])
                    continue;
                n++;
                const sc_shard_copy *src = copy_by_id(sh, c->relocating_from);
                assert_non_null(src);
                assert_false(c->primary);
                assert_ptr_equal(sc_shard_relocation_target(sh, src), c);
                if (primaries)
                    *primaries += src->primary;
            }
        }
    return n;
}

/* The invariants of a routing with relocations: live nodes, one copy per node, the primary
 * first and in sync, every wanted copy assigned (targets aside), in-sync entries live. */
static void check_moving(const sc_routing_table *t, const char *const *nodes, size_t n,
                         unsigned seed)
{
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            const sc_shard_routing *sh = &t->indices[i].shards[s];
            size_t reloc = sc_shard_n_relocating(sh);
            size_t want = 1 + t->indices[i].number_of_replicas;
            want = want < n ? want : n;
            if (reloc > 1 || sh->n_copies - reloc != want)
                fail_msg("seed %u: [%zu][%u] has %zu copies, %zu relocating", seed, i, s,
                         sh->n_copies, reloc);
            for (size_t k = 0; k < sh->n_copies; k++) {
                if (!is_live(sh->copies[k].node, nodes, n))
                    fail_msg("seed %u: copy on a dead node", seed);
                for (size_t j = 0; j < k; j++)
                    if (!strcmp(sh->copies[j].node, sh->copies[k].node))
                        fail_msg("seed %u: two copies on one node", seed);
                if (k && sh->copies[k].primary)
                    fail_msg("seed %u: primary not first", seed);
            }
            assert_true(sh->n_copies && sh->copies[0].primary);
            assert_true(has_id(sh, sh->copies[0].alloc_id));
            for (size_t k = 0; k < sh->n_in_sync; k++)
                assert_non_null(copy_by_id(sh, sh->in_sync[k].alloc_id));
        }
}

/* One step: t becomes the allocation of (nodes, ix) from t. */
static void step(const char *const *nodes, size_t nn, const sc_alloc_index *ix, size_t n_ix,
                 const sc_alloc_settings *set, uint64_t *rng, sc_routing_table *t)
{
    sc_routing_table next;
    assert_int_equal(sc_allocation_compute(nodes, nn, ix, n_ix, t, set, rng, &next), SC_OK);
    sc_routing_table_fini(t);
    *t = next;
}

/* Copies per node counting a relocating source on its target's node. */
static size_t balance_count(const sc_routing_table *t, const char *node, const char *index)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_indices; i++) {
        if (index && strcmp(t->indices[i].index, index))
            continue;
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            const sc_shard_routing *sh = &t->indices[i].shards[s];
            for (size_t k = 0; k < sh->n_copies; k++)
                n += !strcmp(sh->copies[k].node, node) &&
                     !sc_shard_relocation_target(sh, &sh->copies[k]);
        }
    }
    return n;
}

/* 2 nodes hold 6 shards x 1 replica; a third joins: at most 2 moves at a time, every move to
 * the new node, sources kept until their target is in sync, then 4/4/4; a moved primary hands
 * over under a new term. */
static void test_rebalance_join(void **state)
{
    (void)state;
    sc_alloc_index ix = {"logs", 6, 1};
    uint64_t rng = 3;
    sc_alloc_settings set;
    sc_alloc_settings_default(&set);
    sc_routing_table t = {0};
    step(k_names, 2, &ix, 1, &set, &rng, &t);
    all_recovered(&t);
    step(k_names, 2, &ix, 1, &set, &rng, &t);
    assert_int_equal(n_targets(&t, NULL), 0); /* 2 nodes, 2 copies per shard: nothing to do */
    sc_routing_table first;
    assert_int_equal(sc_allocation_compute(k_names, 2, &ix, 1, &t, &set, &rng, &first), SC_OK);
    for (uint32_t s = 0; s < 6; s++)
        assert_true(sc_index_routing_equal(&t.indices[0], &first.indices[0]));
    sc_routing_table_fini(&first);
    int64_t terms[6];
    for (uint32_t s = 0; s < 6; s++)
        terms[s] = t.indices[0].shards[s].primary_term;
    size_t rounds = 0, primary_moves = 0;
    for (;;) {
        step(k_names, 3, &ix, 1, &set, &rng, &t);
        check_moving(&t, k_names, 3, 0);
        size_t prim;
        size_t n = n_targets(&t, &prim);
        primary_moves += prim;
        assert_true(n <= 2);
        /* the same state again starts nothing more (idempotent) */
        sc_routing_table again;
        assert_int_equal(sc_allocation_compute(k_names, 3, &ix, 1, &t, &set, &rng, &again), SC_OK);
        assert_true(sc_index_routing_equal(&t.indices[0], &again.indices[0]));
        sc_routing_table_fini(&again);
        if (!n)
            break;
        for (uint32_t s = 0; s < 6; s++) {
            const sc_shard_routing *sh = &t.indices[0].shards[s];
            for (size_t k = 0; k < sh->n_copies; k++)
                if (sh->copies[k].relocating_from[0]) {
                    assert_string_equal(sh->copies[k].node, "n2");
                    assert_false(has_id(sh, sh->copies[k].alloc_id)); /* INITIALIZING */
                    assert_int_equal(sh->n_copies, 3);                /* source kept */
                }
        }
        all_recovered(&t);
        assert_true(++rounds < 10);
    }
    assert_int_equal(rounds, 2); /* 4 copies move to n2, 2 at a time */
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(copies_on(&t, k_names[i], false), 4);
    for (uint32_t s = 0; s < 6; s++) {
        const sc_shard_routing *sh = &t.indices[0].shards[s];
        assert_int_equal(sh->n_copies, 2);
        assert_int_equal(sh->n_in_sync, 2);
        assert_true(sh->copies[0].primary);
        assert_true(sh->primary_term == terms[s] || sh->primary_term == terms[s] + 1);
        primary_moves -= sh->primary_term == terms[s] + 1;
    }
    assert_int_equal(primary_moves, 0); /* a term went up exactly for each primary moved */
    sc_routing_table_fini(&t);
}

/* rebalance.enable and cluster_concurrent_rebalance. */
static void test_rebalance_settings(void **state)
{
    (void)state;
    sc_alloc_index ix = {"logs", 6, 1};
    static const struct {
        sc_rebalance_enable enable;
        int32_t concurrent;
        size_t want; /* targets started on the join */
    } cases[] = {
        {SC_REBALANCE_NONE, 2, 0},      {SC_REBALANCE_ALL, 2, 2},  {SC_REBALANCE_ALL, 1, 1},
        {SC_REBALANCE_ALL, 0, 0},       {SC_REBALANCE_ALL, -1, 4}, {SC_REBALANCE_PRIMARIES, -1, 4},
        {SC_REBALANCE_REPLICAS, -1, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t rng = 7;
        sc_alloc_settings set = {cases[c].enable, cases[c].concurrent, 1.0};
        sc_routing_table t = {0};
        step(k_names, 2, &ix, 1, &set, &rng, &t);
        all_recovered(&t);
        step(k_names, 3, &ix, 1, &set, &rng, &t);
        size_t prim;
        size_t n = n_targets(&t, &prim);
        if (n != cases[c].want)
            fail_msg("case %zu: %zu moves, want %zu", c, n, cases[c].want);
        if (cases[c].enable == SC_REBALANCE_PRIMARIES)
            assert_int_equal(prim, n);
        if (cases[c].enable == SC_REBALANCE_REPLICAS || cases[c].enable == SC_REBALANCE_ALL)
            assert_int_equal(prim, 0); /* replicas first when both would do */
        sc_routing_table_fini(&t);
    }
    /* parsing: transient over persistent, Elasticsearch's names, bad values refused */
    json_t *pers = json_pack("{s:s,s:s}", "cluster.routing.rebalance.enable", "none",
                             "cluster.routing.allocation.cluster_concurrent_rebalance", "5");
    json_t *trans = json_pack("{s:s}", "cluster.routing.rebalance.enable", "Primaries");
    sc_alloc_settings s;
    char msg[256];
    assert_int_equal(sc_alloc_settings_from(pers, trans, &s, msg, sizeof msg), SC_OK);
    assert_int_equal(s.enable, SC_REBALANCE_PRIMARIES);
    assert_int_equal(s.concurrent, 5);
    assert_int_equal(sc_alloc_settings_from(NULL, NULL, &s, msg, sizeof msg), SC_OK);
    assert_int_equal(s.enable, SC_REBALANCE_ALL);
    assert_int_equal(s.concurrent, 2);
    static const char *const bad[][2] = {
        {"cluster.routing.rebalance.enable", "some"},
        {"cluster.routing.allocation.cluster_concurrent_rebalance", "-2"},
        {"cluster.routing.allocation.cluster_concurrent_rebalance", "2x"},
        {"cluster.routing.allocation.balance.threshold", "0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *b = json_pack("{s:s}", bad[i][0], bad[i][1]);
        msg[0] = 0;
        assert_int_equal(sc_alloc_settings_from(b, NULL, &s, msg, sizeof msg), SC_EINVAL);
        assert_non_null(strstr(msg, bad[i][0]));
        json_decref(b);
    }
    json_decref(pers);
    json_decref(trans);
}

/* A move whose target's node leaves is off (source kept); a move whose source's node leaves
 * leaves its target an ordinary recovering replica; a primary source that leaves before its
 * target is in sync is replaced by promoting an in-sync copy, never the target. */
static void test_relocation_node_leaves(void **state)
{
    (void)state;
    sc_alloc_index ix = {"i", 2, 1}; /* 2 copies on each of n0, n1; n2 joins: one move */
    sc_alloc_settings set;
    sc_alloc_settings_default(&set);
    for (int which = 0; which < 3; which++)
        for (int primary = 0; primary < 2; primary++) {
            uint64_t rng = 21;
            sc_alloc_settings only = set;
            only.enable = primary ? SC_REBALANCE_PRIMARIES : SC_REBALANCE_REPLICAS;
            sc_routing_table t = {0};
            step(k_names, 2, &ix, 1, &only, &rng, &t);
            all_recovered(&t);
            step(k_names, 3, &ix, 1, &only, &rng, &t);
            size_t prim;
            assert_int_equal(n_targets(&t, &prim), 1);
            assert_int_equal(prim, (size_t)primary);
            uint32_t s = t.indices[0].shards[0].n_copies == 3 ? 0 : 1;
            sc_shard_routing *sh = &t.indices[0].shards[s];
            assert_int_equal(sh->n_copies, 3);
            const sc_shard_copy *tg = &sh->copies[2];
            assert_string_equal(tg->node, "n2");
            char tid[SC_ALLOC_ID_MAX], src_node[SC_ALLOC_NODE_MAX];
            memcpy(tid, tg->alloc_id, sizeof tid);
            const sc_shard_copy *src = copy_by_id(sh, tg->relocating_from);
            memcpy(src_node, src->node, sizeof src_node);
            int64_t term = sh->primary_term;
            if (which == 0) { /* the target's node leaves */
                step(k_names, 2, &ix, 1, &only, &rng, &t);
                sh = &t.indices[0].shards[s];
                assert_int_equal(sh->n_copies, 2);
                assert_null(copy_by_id(sh, tid));
                assert_int_equal(n_targets(&t, NULL), 0);
                assert_int_equal(sh->n_in_sync, 2);
                assert_int_equal(sh->primary_term, term);
            } else { /* the source's node leaves (which == 2: then the other one too) */
                const char *live[2] = {"n2", !strcmp(src_node, "n0") ? "n1" : "n0"};
                step(live, 2, &ix, 1, &only, &rng, &t);
                sh = &t.indices[0].shards[s];
                const sc_shard_copy *now = copy_by_id(sh, tid);
                assert_non_null(now);
                assert_int_equal(now->relocating_from[0], '\0'); /* an ordinary replica */
                assert_false(now->primary);
                assert_false(has_id(sh, tid));
                assert_int_equal(sh->n_copies, 2);
                assert_true(sh->copies[0].primary);
                assert_string_equal(sh->copies[0].node, live[1]);
                assert_int_equal(sh->primary_term, term + primary);
                if (which == 2) { /* the promoted primary's node leaves: red, no promotion */
                    step(&live[0], 1, &ix, 1, &only, &rng, &t);
                    sh = &t.indices[0].shards[s];
                    assert_false(sh->n_copies && sh->copies[0].primary);
                }
            }
            sc_routing_table_fini(&t);
        }
}

/* Random joins, leaves and recoveries with rebalancing on: the allocation invariants hold at
 * every step (relocation targets aside), at most cluster_concurrent_rebalance moves are in
 * flight, and once the nodes stay put and every recovery completes, the moves stop in a
 * balanced state: no allowed move has a weight difference above the threshold, and with one
 * index the copies per node differ by at most one. */
static void test_random_rebalance(void **state)
{
    (void)state;
    unsigned seed = getenv("SCRY_TEST_SEED") ? (unsigned)strtoul(getenv("SCRY_TEST_SEED"), 0, 10)
                                             : (unsigned)time(NULL);
    printf("allocation_test rebalance: seed %u (SCRY_TEST_SEED=%u replays)\n", seed, seed);
    for (int run = 0; run < 150; run++) {
        unsigned rs = seed + (unsigned)run;
        size_t n_ix = 1 + rand_r(&rs) % 3;
        sc_alloc_index ix[3];
        char names[3][8];
        for (size_t i = 0; i < n_ix; i++) {
            snprintf(names[i], sizeof names[i], "ix%zu", i);
            ix[i] = (sc_alloc_index){names[i], 1 + rand_r(&rs) % 8, rand_r(&rs) % 3};
        }
        sc_alloc_settings set = {SC_REBALANCE_ALL, 1 + (int32_t)(rand_r(&rs) % 3), 1.0};
        sc_routing_table t = {0};
        uint64_t rng = rs;
        const char *live[10];
        size_t n = 0;
        for (int st = 0; st < 20; st++) {
            n = 0;
            for (size_t i = 0; i < 10; i++)
                if (rand_r(&rs) % 3)
                    live[n++] = k_names[i];
            step(live, n, ix, n_ix, &set, &rng, &t);
            for (size_t i = 0; i < t.n_indices; i++)
                for (uint32_t s = 0; s < t.indices[i].number_of_shards; s++) {
                    const sc_shard_routing *sh = &t.indices[i].shards[s];
                    size_t reloc = sc_shard_n_relocating(sh);
                    assert_true(reloc <= 1);
                    assert_true(sh->n_copies - reloc <= 1 + t.indices[i].number_of_replicas);
                    for (size_t k = 0; k < sh->n_copies; k++) {
                        if (!is_live(sh->copies[k].node, live, n))
                            fail_msg("seed %u: copy on a dead node", rs);
                        for (size_t j = 0; j < k; j++)
                            if (!strcmp(sh->copies[j].node, sh->copies[k].node))
                                fail_msg("seed %u: two copies on one node", rs);
                        if (k && sh->copies[k].primary)
                            fail_msg("seed %u: primary not first", rs);
                    }
                }
            if (n_targets(&t, NULL) > (size_t)set.concurrent)
                fail_msg("seed %u: %zu moves in flight", rs, n_targets(&t, NULL));
            random_recoveries(&t, &rs);
        }
        /* settle: every node comes back (so no shard stays red), recoveries complete */
        for (n = 0; n < 10; n++)
            live[n] = k_names[n];
        int rounds = 0;
        for (;; rounds++) {
            all_recovered(&t);
            step(live, n, ix, n_ix, &set, &rng, &t);
            if (!n_targets(&t, NULL)) {
                all_recovered(&t);
                step(live, n, ix, n_ix, &set, &rng, &t);
                if (!n_targets(&t, NULL))
                    break;
            }
            if (rounds > 400)
                fail_msg("seed %u: rebalancing does not settle", rs);
        }
        if (n)
            check_moving(&t, live, n, rs);
        /* no allowed move above the threshold */
        double total = 0, avg, w[10][3], iavg[3] = {0};
        for (size_t i = 0; i < t.n_indices; i++)
            for (size_t k = 0; k < n; k++) {
                double c = (double)balance_count(&t, live[k], t.indices[i].index);
                iavg[i] += c / (double)n;
                total += c;
            }
        avg = total / (double)n;
        for (size_t i = 0; i < t.n_indices; i++)
            for (size_t k = 0; k < n; k++)
                w[k][i] = 0.45 * ((double)balance_count(&t, live[k], NULL) - avg) +
                          0.55 * ((double)balance_count(&t, live[k], t.indices[i].index) - iavg[i]);
        for (size_t i = 0; i < t.n_indices; i++)
            for (uint32_t s = 0; s < t.indices[i].number_of_shards; s++) {
                const sc_shard_routing *sh = &t.indices[i].shards[s];
                for (size_t a = 0; a < n; a++)
                    for (size_t b = 0; b < n; b++) {
                        bool on_a = false, on_b = false;
                        for (size_t k = 0; k < sh->n_copies; k++) {
                            on_a |= !strcmp(sh->copies[k].node, live[a]);
                            on_b |= !strcmp(sh->copies[k].node, live[b]);
                        }
                        if (on_a && !on_b && w[a][i] - w[b][i] > 1.0 + 1e-6)
                            fail_msg("seed %u: [%s][%u] should move %s -> %s (%.2f)", rs,
                                     t.indices[i].index, s, live[a], live[b], w[a][i] - w[b][i]);
                    }
            }
        if (t.n_indices == 1 && n) {
            size_t lo = SIZE_MAX, hi = 0;
            for (size_t k = 0; k < n; k++) {
                size_t c = copies_on(&t, live[k], false);
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
            if (hi - lo > 1)
                fail_msg("seed %u: one index, copies per node %zu..%zu", rs, lo, hi);
        }
        sc_routing_table_fini(&t);
    }
}

/* A relocation target survives the JSON round trip; a target marked primary is refused. */
static void test_relocation_json(void **state)
{
    (void)state;
    sc_alloc_index ix = {"logs", 4, 0};
    uint64_t rng = 13;
    sc_alloc_settings set;
    sc_alloc_settings_default(&set);
    sc_routing_table t = {0};
    step(k_names, 1, &ix, 1, &set, &rng, &t);
    step(k_names, 2, &ix, 1, &set, &rng, &t);
    size_t prim;
    assert_int_equal(n_targets(&t, &prim), 2);
    assert_int_equal(prim, 2); /* 0 replicas: primaries move */
    json_t *j = sc_index_routing_to_json(&t.indices[0]);
    sc_index_routing back;
    assert_int_equal(sc_index_routing_from_json("logs", j, &back), SC_OK);
    assert_true(sc_index_routing_equal(&t.indices[0], &back));
    sc_index_routing_fini(&back);
    json_decref(j);
    json_t *b = json_loads("{\"number_of_shards\":1,\"number_of_replicas\":0,\"shards\":[{"
                           "\"primary_term\":1,\"in_sync\":[],\"copies\":[{\"node\":\"a\","
                           "\"alloc_id\":\"x\",\"primary\":true,\"relocating_from\":\"y\"}]}]}",
                           0, NULL);
    assert_int_equal(sc_index_routing_from_json("x", b, &back), SC_ECORRUPT);
    json_decref(b);
    /* primaries hand over: once the targets are in sync each moved shard has a new term */
    all_recovered(&t);
    step(k_names, 2, &ix, 1, &set, &rng, &t);
    size_t moved = 0;
    for (uint32_t s = 0; s < 4; s++) {
        const sc_shard_routing *sh = &t.indices[0].shards[s];
        assert_int_equal(sh->n_in_sync, 1);
        assert_true(sh->copies[0].primary);
        if (!strcmp(sh->copies[0].node, "n1")) {
            moved++;
            assert_int_equal(sh->primary_term, 2);
            assert_int_equal(sh->n_copies, 1);
            assert_string_equal(sh->in_sync[0].alloc_id, sh->copies[0].alloc_id);
        }
    }
    assert_int_equal(moved, 2);
    assert_int_equal(n_targets(&t, NULL), 0); /* 2/2: balanced */
    sc_routing_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_even),         cmocka_unit_test(test_promotion_and_stale),
        cmocka_unit_test(test_full_restart),       cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_random_model),       cmocka_unit_test(test_rebalance_join),
        cmocka_unit_test(test_rebalance_settings), cmocka_unit_test(test_relocation_node_leaves),
        cmocka_unit_test(test_random_rebalance),   cmocka_unit_test(test_relocation_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
