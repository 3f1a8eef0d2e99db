/* Shard allocation (see allocation.h): filter copies to live nodes, finish relocations whose
 * target is in sync, promote in-sync replicas, place missing copies on the least loaded nodes,
 * then rebalance (allocation_rebalance.c). Pure: no I/O, no globals. The JSON form of the
 * routing table is in routing_json.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/allocation_internal.h"

void sc_index_routing_fini(sc_index_routing *r)
{
    if (!r)
        return;
    for (uint32_t s = 0; r->shards && s < r->number_of_shards; s++) {
        free(r->shards[s].copies);
        free(r->shards[s].in_sync);
    }
    free(r->shards);
    free(r->index);
    memset(r, 0, sizeof *r);
}

void sc_routing_table_fini(sc_routing_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_indices; i++)
        sc_index_routing_fini(&t->indices[i]);
    free(t->indices);
    memset(t, 0, sizeof *t);
}

const sc_index_routing *sc_routing_table_find(const sc_routing_table *t, const char *index)
{
    for (size_t i = 0; t && i < t->n_indices; i++)
        if (!strcmp(t->indices[i].index, index))
            return &t->indices[i];
    return NULL;
}

static sc_status shard_copy(const sc_shard_routing *s, sc_shard_routing *o)
{
    memset(o, 0, sizeof *o);
    o->primary_term = s->primary_term;
    /* +1 slot each so the allocator can grow without realloc checks for a replica or two. */
    o->copies = calloc(s->n_copies + 1, sizeof *o->copies);
    o->in_sync = calloc(s->n_in_sync + 1, sizeof *o->in_sync);
    if (!o->copies || !o->in_sync) {
        free(o->copies);
        free(o->in_sync);
        memset(o, 0, sizeof *o);
        return SC_ENOMEM;
    }
    if (s->n_copies)
        memcpy(o->copies, s->copies, s->n_copies * sizeof *o->copies);
    if (s->n_in_sync)
        memcpy(o->in_sync, s->in_sync, s->n_in_sync * sizeof *o->in_sync);
    o->n_copies = s->n_copies;
    o->n_in_sync = s->n_in_sync;
    return SC_OK;
}

sc_status sc_index_routing_copy(const sc_index_routing *r, sc_index_routing *out)
{
    memset(out, 0, sizeof *out);
    out->index = strdup(r->index);
    out->shards = calloc(r->number_of_shards ? r->number_of_shards : 1, sizeof *out->shards);
    if (!out->index || !out->shards) {
        free(out->index);
        free(out->shards);
        return SC_ENOMEM;
    }
    out->number_of_shards = r->number_of_shards;
    out->number_of_replicas = r->number_of_replicas;
    for (uint32_t s = 0; s < r->number_of_shards; s++)
        if (shard_copy(&r->shards[s], &out->shards[s]) != SC_OK) {
            sc_index_routing_fini(out);
            return SC_ENOMEM;
        }
    return SC_OK;
}

/* ---- node bookkeeping ---- */

typedef sc__node_load node_load;
typedef sc__alloc_ctx alloc_ctx;

static int cmp_node_id(const void *a, const void *b)
{
    return strcmp(((const node_load *)a)->id, ((const node_load *)b)->id);
}

node_load *sc__alloc_find_node(alloc_ctx *c, const char *id)
{
    node_load key = {.id = id};
    return bsearch(&key, c->nodes, c->n_nodes, sizeof key, cmp_node_id);
}

#define find_node sc__alloc_find_node

/* splitmix64 */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sc__alloc_new_id(alloc_ctx *c, char out[SC_ALLOC_ID_MAX])
{
    snprintf(out, SC_ALLOC_ID_MAX, "%016llx", (unsigned long long)next_rand(c->rng));
}

static const sc_in_sync *in_sync_find(const sc_shard_routing *s, const char *id)
{
    for (size_t i = 0; i < s->n_in_sync; i++)
        if (!strcmp(s->in_sync[i].alloc_id, id))
            return &s->in_sync[i];
    return NULL;
}

bool sc__alloc_in_sync(const sc_shard_routing *s, const char *alloc_id)
{
    return in_sync_find(s, alloc_id) != NULL;
}

const sc_shard_copy *sc_shard_relocation_target(const sc_shard_routing *s, const sc_shard_copy *src)
{
    for (size_t i = 0; i < s->n_copies; i++)
        if (s->copies[i].relocating_from[0] && !strcmp(s->copies[i].relocating_from, src->alloc_id))
            return &s->copies[i];
    return NULL;
}

size_t sc_shard_n_relocating(const sc_shard_routing *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_copies; i++)
        n += s->copies[i].relocating_from[0] != '\0';
    return n;
}

static bool copy_live(const sc_shard_routing *s, const char *alloc_id)
{
    for (size_t j = 0; j < s->n_copies; j++)
        if (!strcmp(s->copies[j].alloc_id, alloc_id))
            return true;
    return false;
}

/* Keeps only the in-sync entries whose copy is live. */
static void drop_dead_in_sync(sc_shard_routing *s)
{
    size_t m = 0;
    for (size_t i = 0; i < s->n_in_sync; i++)
        if (copy_live(s, s->in_sync[i].alloc_id))
            s->in_sync[m++] = s->in_sync[i];
    s->n_in_sync = m;
}

/* Removes replicas beyond want (number_of_replicas went down, or in-sync copies came back):
 * first those not in sync, then the last ones; never the primary. */
static void trim_copies(alloc_ctx *c, sc_shard_routing *s, size_t want)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = s->n_copies; i-- > 0 && s->n_copies > want;)
            if (!s->copies[i].primary && (pass == 1 || !in_sync_find(s, s->copies[i].alloc_id))) {
                if (c) { /* already counted in the node's load */
                    find_node(c, s->copies[i].node)->copies--;
                    find_node(c, s->copies[i].node)->ix_copies--;
                }
                memmove(&s->copies[i], &s->copies[i + 1],
                        (s->n_copies - i - 1) * sizeof *s->copies);
                s->n_copies--;
            }
    if (s->n_copies && s->copies[0].primary)
        drop_dead_in_sync(s);
}

/* A relocation target whose source is gone (its node left, or it was trimmed) becomes an
 * ordinary replica; a second target of one source (never written, but the value comes from
 * etcd) too. */
static void fix_targets(sc_shard_routing *s)
{
    for (size_t i = 0; i < s->n_copies; i++) {
        sc_shard_copy *t = &s->copies[i];
        if (!t->relocating_from[0])
            continue;
        bool src = false;
        for (size_t j = 0; j < s->n_copies; j++)
            src |= j != i && !s->copies[j].relocating_from[0] &&
                   !strcmp(s->copies[j].alloc_id, t->relocating_from);
        for (size_t j = 0; j < i; j++)
            src &= strcmp(s->copies[j].relocating_from, t->relocating_from) != 0;
        if (!src)
            t->relocating_from[0] = '\0';
    }
}

/* Ends the relocations whose target is in sync: the source leaves; a primary source hands
 * over to its target, which becomes primary under a new term (fencing the old primary). */
static void finish_relocations(alloc_ctx *c, sc_shard_routing *s)
{
    for (size_t i = 0; i < s->n_copies; i++) {
        sc_shard_copy *t = &s->copies[i];
        if (!t->relocating_from[0] || !in_sync_find(s, t->alloc_id))
            continue;
        size_t src = 0;
        while (src < s->n_copies && strcmp(s->copies[src].alloc_id, t->relocating_from))
            src++;
        t->relocating_from[0] = '\0';
        if (src == s->n_copies)
            continue;
        sc_shard_copy old = s->copies[src];
        node_load *on = find_node(c, old.node);
        on->copies--;
        on->ix_copies--;
        memmove(&s->copies[src], &s->copies[src + 1], (s->n_copies - src - 1) * sizeof *s->copies);
        s->n_copies--;
        if (old.primary) {
            size_t k = i > src ? i - 1 : i; /* the target's index now */
            sc_shard_copy nt = s->copies[k];
            nt.primary = true;
            memmove(s->copies + 1, s->copies, k * sizeof *s->copies);
            s->copies[0] = nt;
            on->primaries--;
            find_node(c, nt.node)->primaries++;
            s->primary_term++;
        }
        drop_dead_in_sync(s);
        i = (size_t)-1; /* the array moved: start over */
    }
}

/* Drops copies on dead nodes (and duplicates on one node), puts the primary first, trims
 * replicas beyond want (relocation targets come on top); while the primary is live, in-sync
 * entries of gone copies go too. */
static void prune_shard(alloc_ctx *c, sc_shard_routing *s, size_t want)
{
    size_t k = 0;
    bool primary = false;
    for (size_t i = 0; i < s->n_copies; i++) {
        sc_shard_copy *cp = &s->copies[i];
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup |= !strcmp(s->copies[j].node, cp->node);
        if (dup || !find_node(c, cp->node) || (cp->primary && primary))
            continue;
        primary |= cp->primary;
        s->copies[k++] = *cp;
    }
    s->n_copies = k;
    for (size_t i = 1; i < s->n_copies; i++)
        if (s->copies[i].primary) { /* primary first */
            sc_shard_copy tmp = s->copies[i];
            memmove(s->copies + 1, s->copies, i * sizeof *s->copies);
            s->copies[0] = tmp;
        }
    fix_targets(s);
    trim_copies(NULL, s, want + sc_shard_n_relocating(s)); /* loads are counted after pruning */
    fix_targets(s);
    if (primary)
        drop_dead_in_sync(s);
}

/* A shard without primary (term > 0): brings back in-sync copies held by live nodes that are
 * not in the copy list (a node that left and returned), so they can be promoted. */
static sc_status restore_in_sync(alloc_ctx *c, sc_shard_routing *s)
{
    for (size_t i = 0; i < s->n_in_sync; i++) {
        const sc_in_sync *is = &s->in_sync[i];
        if (copy_live(s, is->alloc_id) || !find_node(c, is->node))
            continue;
        bool node_has_copy = false;
        for (size_t j = 0; j < s->n_copies; j++)
            node_has_copy |= !strcmp(s->copies[j].node, is->node);
        if (node_has_copy)
            continue;
        sc_shard_copy *grown = realloc(s->copies, (s->n_copies + 2) * sizeof *grown);
        if (!grown)
            return SC_ENOMEM;
        s->copies = grown;
        sc_shard_copy *cp = &s->copies[s->n_copies++];
        memset(cp, 0, sizeof *cp);
        memcpy(cp->node, is->node, sizeof cp->node);
        memcpy(cp->alloc_id, is->alloc_id, sizeof cp->alloc_id);
        find_node(c, cp->node)->copies++;
        find_node(c, cp->node)->ix_copies++;
    }
    return SC_OK;
}

/* Promotes the live in-sync copy on the node with the fewest primaries (then the lowest id);
 * bumps the term and drops in-sync entries that are not live (they miss the new term's
 * writes). No candidate: the shard stays without primary and keeps its in-sync set. */
static void promote(alloc_ctx *c, sc_shard_routing *s)
{
    sc_shard_copy *best = NULL;
    node_load *best_n = NULL;
    for (size_t i = 0; i < s->n_copies; i++) {
        sc_shard_copy *cp = &s->copies[i];
        if (!in_sync_find(s, cp->alloc_id))
            continue;
        node_load *nl = find_node(c, cp->node);
        if (!best || nl->primaries < best_n->primaries ||
            (nl->primaries == best_n->primaries && strcmp(nl->id, best_n->id) < 0)) {
            best = cp;
            best_n = nl;
        }
    }
    if (!best)
        return;
    best->primary = true;
    best_n->primaries++;
    s->primary_term++;
    /* primary first */
    sc_shard_copy tmp = *best;
    memmove(s->copies + 1, s->copies, (size_t)(best - s->copies) * sizeof *s->copies);
    s->copies[0] = tmp;
    drop_dead_in_sync(s);
}

/* Orders candidate nodes: lowest balance weight for the index being placed (the rebalancer's,
 * allocation_rebalance.c: 0.45 x copies + 0.55 x copies of the index, so a new copy goes where
 * rebalancing would not move it away), then fewest primaries, then id. */
static int cmp_load(const void *a, const void *b)
{
    const node_load *x = *(node_load *const *)a, *y = *(node_load *const *)b;
    /* in hundredths, exact in integers */
    uint64_t wx = 45u * x->copies + 55u * x->ix_copies, wy = 45u * y->copies + 55u * y->ix_copies;
    if (wx != wy)
        return wx < wy ? -1 : 1;
    if (x->primaries != y->primaries)
        return x->primaries < y->primaries ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* Adds copies until the shard has `want`, on the least loaded nodes without a copy. A fresh
 * shard (term 0) gets its primary too (on the chosen node with the fewest primaries). Only the
 * primary of a fresh shard is in sync: a new replica holds nothing until a peer recovery from
 * the primary has copied the shard, and only then does the primary add it to the set
 * (sc_membership_set_in_sync). Marking it earlier let an empty replica be promoted. */
static sc_status fill_shard(alloc_ctx *c, sc_shard_routing *s, size_t want, node_load **cand)
{
    bool fresh = s->primary_term == 0 && s->n_copies == 0;
    if (!fresh && (s->n_copies == 0 || !s->copies[0].primary))
        return SC_OK; /* no primary (red): nothing to copy from */
    size_t have = s->n_copies - sc_shard_n_relocating(s);
    if (have >= want)
        return SC_OK;
    size_t n = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        bool has = false;
        for (size_t j = 0; j < s->n_copies; j++)
            has |= !strcmp(s->copies[j].node, c->nodes[i].id);
        if (!has)
            cand[n++] = &c->nodes[i];
    }
    qsort(cand, n, sizeof *cand, cmp_load);
    size_t add = want - have < n ? want - have : n;
    sc_shard_copy *copies = realloc(s->copies, (s->n_copies + add + 1) * sizeof *copies);
    sc_in_sync *sync = realloc(s->in_sync, (s->n_in_sync + add + 1) * sizeof *sync);
    if (copies)
        s->copies = copies;
    if (sync)
        s->in_sync = sync;
    if (!copies || !sync)
        return SC_ENOMEM;
    size_t prim = 0; /* among the chosen, the node with the fewest primaries */
    for (size_t i = 1; fresh && i < add; i++)
        if (cand[i]->primaries < cand[prim]->primaries)
            prim = i;
    for (size_t i = 0; i < add; i++) {
        sc_shard_copy *cp = &s->copies[s->n_copies];
        memset(cp, 0, sizeof *cp);
        snprintf(cp->node, sizeof cp->node, "%s", cand[i]->id);
        sc__alloc_new_id(c, cp->alloc_id);
        cand[i]->copies++;
        cand[i]->ix_copies++;
        if (fresh && i == prim) {
            cp->primary = true;
            cand[i]->primaries++;
            sc_in_sync *is = &s->in_sync[s->n_in_sync++];
            memcpy(is->alloc_id, cp->alloc_id, sizeof is->alloc_id);
            memcpy(is->node, cp->node, sizeof is->node);
        }
        s->n_copies++;
    }
    if (fresh && add) {
        s->primary_term = 1;
        for (size_t i = 0; i < s->n_copies; i++)
            if (s->copies[i].primary && i) {
                sc_shard_copy tmp = s->copies[i];
                memmove(s->copies + 1, s->copies, i * sizeof *s->copies);
                s->copies[0] = tmp;
            }
    }
    return SC_OK;
}

static int cmp_index_name(const void *a, const void *b)
{
    return strcmp(((const sc_index_routing *)a)->index, ((const sc_index_routing *)b)->index);
}

/* Starts out's entry for ix from the current routing (same shard count) or empty shards. */
static sc_status start_index(const sc_alloc_index *ix, const sc_routing_table *current,
                             sc_index_routing *o)
{
    const sc_index_routing *cur = sc_routing_table_find(current, ix->name);
    sc_status st;
    if (cur && cur->number_of_shards == ix->number_of_shards) {
        st = sc_index_routing_copy(cur, o);
        o->number_of_replicas = ix->number_of_replicas;
        return st;
    }
    memset(o, 0, sizeof *o);
    o->index = strdup(ix->name);
    o->shards = calloc(ix->number_of_shards ? ix->number_of_shards : 1, sizeof *o->shards);
    if (!o->index || !o->shards) {
        free(o->index);
        free(o->shards);
        memset(o, 0, sizeof *o);
        return SC_ENOMEM;
    }
    o->number_of_shards = ix->number_of_shards;
    o->number_of_replicas = ix->number_of_replicas;
    return SC_OK;
}

static sc_status init_nodes(alloc_ctx *c, const char *const *nodes, size_t n_nodes)
{
    c->nodes = calloc(n_nodes + 1, sizeof *c->nodes);
    if (!c->nodes)
        return SC_ENOMEM;
    for (size_t i = 0; i < n_nodes; i++) {
        if (strlen(nodes[i]) >= SC_ALLOC_NODE_MAX)
            return SC_EINVAL;
        c->nodes[i].id = nodes[i];
    }
    c->n_nodes = n_nodes;
    qsort(c->nodes, n_nodes, sizeof *c->nodes, cmp_node_id);
    for (size_t i = 1; i < n_nodes; i++)
        if (!strcmp(c->nodes[i - 1].id, c->nodes[i].id))
            return SC_EINVAL;
    return SC_OK;
}

sc_status sc_allocation_compute(const char *const *nodes, size_t n_nodes,
                                const sc_alloc_index *indices, size_t n_indices,
                                const sc_routing_table *current, const sc_alloc_settings *settings,
                                uint64_t *rng, sc_routing_table *out)
{
    sc_alloc_settings dflt;
    sc_alloc_settings_default(&dflt);
    memset(out, 0, sizeof *out);
    alloc_ctx c = {.rng = rng};
    node_load **cand = calloc(n_nodes + 1, sizeof *cand);
    out->indices = calloc(n_indices + 1, sizeof *out->indices);
    sc_status st = cand && out->indices ? init_nodes(&c, nodes, n_nodes) : SC_ENOMEM;
    /* Pass 1: keep what is valid, count the load it puts on each node. */
    for (size_t i = 0; st == SC_OK && i < n_indices; i++) {
        st = start_index(&indices[i], current, &out->indices[i]);
        if (st != SC_OK)
            break;
        out->n_indices = i + 1;
        sc_index_routing *r = &out->indices[i];
        for (uint32_t s = 0; s < r->number_of_shards; s++) {
            prune_shard(&c, &r->shards[s], 1 + (size_t)r->number_of_replicas);
            for (size_t k = 0; k < r->shards[s].n_copies; k++) {
                node_load *nl = find_node(&c, r->shards[s].copies[k].node);
                nl->copies++;
                nl->primaries += r->shards[s].copies[k].primary;
            }
        }
    }
    if (st == SC_OK)
        qsort(out->indices, out->n_indices, sizeof *out->indices, cmp_index_name);
    /* Pass 2: finished relocations, promotions, then new copies. */
    for (size_t i = 0; st == SC_OK && i < out->n_indices; i++) {
        sc_index_routing *r = &out->indices[i];
        for (size_t n = 0; n < c.n_nodes; n++)
            c.nodes[n].ix_copies = 0;
        for (uint32_t s = 0; s < r->number_of_shards; s++)
            for (size_t k = 0; k < r->shards[s].n_copies; k++)
                find_node(&c, r->shards[s].copies[k].node)->ix_copies++;
        for (uint32_t s = 0; st == SC_OK && s < r->number_of_shards; s++) {
            sc_shard_routing *sh = &r->shards[s];
            finish_relocations(&c, sh);
            if (sh->primary_term > 0 && !(sh->n_copies && sh->copies[0].primary)) {
                st = restore_in_sync(&c, sh);
                if (st == SC_OK && sh->n_copies)
                    promote(&c, sh);
                trim_copies(&c, sh, 1 + (size_t)r->number_of_replicas + sc_shard_n_relocating(sh));
                fix_targets(sh);
            }
            if (st == SC_OK)
                st = fill_shard(&c, sh, 1 + (size_t)r->number_of_replicas, cand);
        }
    }
    /* Pass 3: move started copies towards balance. */
    if (st == SC_OK)
        st = sc__alloc_rebalance(&c, out, settings ? settings : &dflt);
    free(cand);
    free(c.nodes);
    if (st != SC_OK)
        sc_routing_table_fini(out);
    return st;
}
