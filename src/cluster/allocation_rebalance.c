/* Rebalancing (see allocation.h): Elasticsearch's balanced allocator reduced to its weight
 * function. Once every shard is active, started copies move, one relocation target at a time
 * per shard and at most cluster_concurrent_rebalance in flight, from the node whose weight for
 * the copy's index is highest to a node without a copy of that shard whose weight is lowest,
 * while the difference is above the threshold. Also the allocation settings' parsing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/allocation_internal.h"

/* Elasticsearch's cluster.routing.allocation.balance.shard / .index defaults (sum 1, so a
 * move lowers the source's weight for the index by 1 and raises the target's by 1). */
#define THETA_SHARD 0.45
#define THETA_INDEX 0.55
/* New moves per computation when the concurrency is unbounded (-1): the routing write's echo
 * triggers the next computation, which starts more. Bounds one computation's CPU. */
#define MAX_MOVES_UNBOUNDED 64

void sc_alloc_settings_default(sc_alloc_settings *s)
{
    s->enable = SC_REBALANCE_ALL;
    s->concurrent = 2;
    s->threshold = 1.0;
}

/* The value of `name`: transient first, then persistent; NULL when unset (or null). */
static const char *get(const json_t *persistent, const json_t *transient, const char *name)
{
    const json_t *v = json_object_get(transient, name);
    if (!v || json_is_null(v))
        v = json_object_get(persistent, name);
    return json_string_value(v);
}

static bool eq_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

sc_status sc_alloc_settings_from(const json_t *persistent, const json_t *transient,
                                 sc_alloc_settings *s, char *msg, size_t cap)
{
    static const char *const k_enable = "cluster.routing.rebalance.enable";
    static const char *const k_conc = "cluster.routing.allocation.cluster_concurrent_rebalance";
    static const char *const k_thr = "cluster.routing.allocation.balance.threshold";
    static const char *const k_modes[] = {"all", "none", "primaries", "replicas"};
    sc_alloc_settings_default(s);
    sc_status st = SC_OK;
    const char *v = get(persistent, transient, k_enable);
    if (v) {
        size_t m = 0;
        while (m < 4 && !eq_nocase(v, k_modes[m]))
            m++;
        if (m < 4) {
            s->enable = (sc_rebalance_enable)m;
        } else {
            snprintf(msg, cap,
                     "illegal value [%.64s] for [%s]: expected all, none, primaries or "
                     "replicas",
                     v, k_enable);
            st = SC_EINVAL;
        }
    }
    if ((v = get(persistent, transient, k_conc))) {
        char *end;
        long x = strtol(v, &end, 10);
        if (end != v && !*end && x >= -1 && x <= 1000000) {
            s->concurrent = (int32_t)x;
        } else {
            snprintf(msg, cap,
                     "Failed to parse value [%.64s] for setting [%s]: must be an "
                     "integer >= -1",
                     v, k_conc);
            st = SC_EINVAL;
        }
    }
    if ((v = get(persistent, transient, k_thr))) {
        char *end;
        double x = strtod(v, &end);
        if (end != v && !*end && x > 0 && x < 1e6) {
            s->threshold = x;
        } else {
            snprintf(msg, cap,
                     "Failed to parse value [%.64s] for setting [%s]: must be a "
                     "number > 0",
                     v, k_thr);
            st = SC_EINVAL;
        }
    }
    return st;
}

/* Copy counts of one computation: per node, and per (index, node); a relocating source is
 * counted on its target's node (the move as if done). */
typedef struct balance {
    sc__alloc_ctx *c;
    sc_routing_table *t;
    size_t nn;
    double *cnt;  /* nn */
    double *icnt; /* n_indices x nn */
    double avg;
    double *iavg; /* n_indices */
} balance;

static size_t node_ix(balance *b, const char *id)
{
    return (size_t)(sc__alloc_find_node(b->c, id) - b->c->nodes);
}

static double weight(const balance *b, size_t i, size_t n)
{
    return THETA_SHARD * (b->cnt[n] - b->avg) + THETA_INDEX * (b->icnt[i * b->nn + n] - b->iavg[i]);
}

/* Whether every shard is active (primary, all wanted copies started): Elasticsearch's
 * cluster.routing.allocation.allow_rebalance default (indices_all_active). Counts the
 * relocations in flight into *in_flight. */
static bool all_active(const sc_routing_table *t, size_t n_nodes, size_t *in_flight)
{
    *in_flight = 0;
    for (size_t i = 0; i < t->n_indices; i++) {
        const sc_index_routing *r = &t->indices[i];
        size_t want = 1 + (size_t)r->number_of_replicas;
        want = want < n_nodes ? want : n_nodes;
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            size_t reloc = sc_shard_n_relocating(sh);
            *in_flight += reloc;
            if (!sh->n_copies || !sh->copies[0].primary || sh->n_copies - reloc < want)
                return false;
            for (size_t k = 0; k < sh->n_copies; k++)
                if (!sh->copies[k].relocating_from[0] &&
                    !sc__alloc_in_sync(sh, sh->copies[k].alloc_id))
                    return false;
        }
    }
    return true;
}

static sc_status count(balance *b)
{
    size_t ni = b->t->n_indices, nn = b->nn;
    b->cnt = calloc(nn, sizeof *b->cnt);
    b->icnt = calloc(ni * nn + 1, sizeof *b->icnt);
    b->iavg = calloc(ni + 1, sizeof *b->iavg);
    if (!b->cnt || !b->icnt || !b->iavg)
        return SC_ENOMEM;
    double total = 0;
    for (size_t i = 0; i < ni; i++) {
        const sc_index_routing *r = &b->t->indices[i];
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            for (size_t k = 0; k < sh->n_copies; k++) {
                if (sc_shard_relocation_target(sh, &sh->copies[k]))
                    continue; /* counted on its target's node */
                size_t n = node_ix(b, sh->copies[k].node);
                b->cnt[n] += 1;
                b->icnt[i * nn + n] += 1;
                b->iavg[i] += 1;
                total += 1;
            }
        }
        b->iavg[i] /= (double)nn;
    }
    b->avg = total / (double)nn;
    return SC_OK;
}

typedef struct move {
    size_t index, node; /* target node */
    uint32_t shard;
    size_t copy;
    double delta;
    bool primary;
    bool found;
} move;

static bool may_move(const sc_alloc_settings *set, bool primary)
{
    return set->enable == SC_REBALANCE_ALL ||
           (primary ? set->enable == SC_REBALANCE_PRIMARIES : set->enable == SC_REBALANCE_REPLICAS);
}

/* The best move: the largest weight difference above the threshold; on a tie a replica before
 * a primary (moving a primary fails the old primary's writes in flight at the switch). */
static move best_move(balance *b, const sc_alloc_settings *set)
{
    move best = {0};
    bool *has = calloc(b->nn + 1, sizeof *has);
    if (!has)
        return best;
    for (size_t i = 0; i < b->t->n_indices; i++) {
        const sc_index_routing *r = &b->t->indices[i];
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            const sc_shard_routing *sh = &r->shards[s];
            if (sc_shard_n_relocating(sh))
                continue; /* one move per shard at a time */
            memset(has, 0, b->nn * sizeof *has);
            for (size_t k = 0; k < sh->n_copies; k++)
                has[node_ix(b, sh->copies[k].node)] = true;
            for (size_t k = 0; k < sh->n_copies; k++) {
                const sc_shard_copy *cp = &sh->copies[k];
                if (!may_move(set, cp->primary))
                    continue;
                double wa = weight(b, i, node_ix(b, cp->node));
                for (size_t n = 0; n < b->nn; n++) {
                    if (has[n])
                        continue;
                    double d = wa - weight(b, i, n);
                    if (d <= set->threshold + 1e-9)
                        continue;
                    if (best.found && (d < best.delta - 1e-9 ||
                                       (d < best.delta + 1e-9 && (cp->primary || !best.primary))))
                        continue;
                    best = (move){i, n, s, k, d, cp->primary, true};
                }
            }
        }
    }
    free(has);
    return best;
}

/* Adds the relocation target of move m and moves the counts. */
static sc_status start(balance *b, const move *m)
{
    sc_shard_routing *sh = &b->t->indices[m->index].shards[m->shard];
    sc_shard_copy *grown = realloc(sh->copies, (sh->n_copies + 2) * sizeof *grown);
    if (!grown)
        return SC_ENOMEM;
    sh->copies = grown;
    const sc_shard_copy *src = &sh->copies[m->copy];
    sc_shard_copy *t = &sh->copies[sh->n_copies];
    memset(t, 0, sizeof *t);
    snprintf(t->node, sizeof t->node, "%s", b->c->nodes[m->node].id);
    sc__alloc_new_id(b->c, t->alloc_id);
    memcpy(t->relocating_from, src->alloc_id, sizeof t->relocating_from);
    size_t from = node_ix(b, src->node);
    sh->n_copies++;
    b->cnt[from] -= 1;
    b->cnt[m->node] += 1;
    b->icnt[m->index * b->nn + from] -= 1;
    b->icnt[m->index * b->nn + m->node] += 1;
    b->c->nodes[m->node].copies++;
    return SC_OK;
}

sc_status sc__alloc_rebalance(sc__alloc_ctx *c, sc_routing_table *t, const sc_alloc_settings *set)
{
    size_t in_flight;
    if (set->enable == SC_REBALANCE_NONE || c->n_nodes < 2 ||
        !all_active(t, c->n_nodes, &in_flight))
        return SC_OK;
    size_t budget = MAX_MOVES_UNBOUNDED;
    if (set->concurrent >= 0)
        budget = (size_t)set->concurrent > in_flight ? (size_t)set->concurrent - in_flight : 0;
    if (!budget)
        return SC_OK;
    balance b = {.c = c, .t = t, .nn = c->n_nodes};
    sc_status st = count(&b);
    for (; st == SC_OK && budget; budget--) {
        move m = best_move(&b, set);
        if (!m.found)
            break;
        st = start(&b, &m);
    }
    free(b.cnt);
    free(b.icnt);
    free(b.iavg);
    return st;
}
