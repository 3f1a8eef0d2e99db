/* Cluster-wide index statistics (stats_remote.h): the requesting side groups the started copies
 * of the indices' shards by node (placement snapshot) and asks each other node once; the
 * handler answers from the copies it holds open. */
#include "cluster/stats_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/placement.h"
#include "cluster/stats_wire.h"

#define STATS_TIMEOUT_MS 10000

/* One copy's numbers if it is open here. */
static bool copy_stats(sc_index *ix, uint32_t shard, sc_stats_copy_resp *out)
{
    memset(out, 0, sizeof *out);
    if (!ix || shard >= ix->settings.number_of_shards || !ix->shards || !ix->shards[shard])
        return false;
    out->open = true;
    sc_index_shard_stats(ix, shard, &out->s);
    return true;
}

static sc_status h_stats(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t cap)
{
    sc_node *n = ctx;
    sc_arena a;
    sc_arena_init(&a, 16u << 20);
    sc_stats_copy *c = NULL;
    size_t cnt = 0;
    sc_status st = sc_stats_req_decode(body.ptr, body.len, &a, &c, &cnt);
    sc_stats_copy_resp *r = st == SC_OK ? sc_arena_calloc(&a, cnt ? cnt : 1, sizeof *r) : NULL;
    if (st == SC_OK && !r)
        st = SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < cnt; i++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)c[i].index.len, (const char *)c[i].index.ptr);
        sc_index *ix = sc_node_index(n, name);
        copy_stats(ix, c[i].shard, &r[i]);
        sc_index_unref(ix);
    }
    if (st == SC_OK)
        st = sc_stats_resp_encode(r, cnt, resp);
    else
        snprintf(errmsg, cap, "bad shard stats request: %s", sc_status_str(st));
    sc_arena_fini(&a);
    return st;
}

sc_status sc_stats_remote_start(sc_node *n, sc_transport *t)
{
    return sc_transport_register(t, SC_MSG_SHARD_STATS, h_stats, n);
}

/* One started copy to count: index list[ix], its shard, where it lives. */
typedef struct target {
    uint32_t ix, shard;
    bool primary;
    int node; /* index into the node table; -1 = this node */
} target;

typedef struct peer {
    char id[64];
    char host[128];
    uint16_t port;
} peer;

static void add(sc_cluster_stats *o, bool primary, const sc_stats_copy_resp *r)
{
    sc_index_stats_add(&o->total, &r->s);
    if (primary)
        sc_index_stats_add(&o->primaries, &r->s);
    o->n_answered++;
}

/* Asks peer p for the copies of targets t[] that live there and adds the answers. */
static void ask(sc_placement *pl, sc_index **list, const peer *p, int pi, const target *t,
                size_t nt, sc_cluster_stats *out)
{
    sc_arena a;
    sc_arena_init(&a, 16u << 20);
    sc_stats_copy *c = sc_arena_calloc(&a, nt ? nt : 1, sizeof *c);
    size_t *which = sc_arena_calloc(&a, nt ? nt : 1, sizeof *which);
    size_t m = 0;
    for (size_t i = 0; c && which && i < nt; i++)
        if (t[i].node == pi) {
            c[m] =
                (sc_stats_copy){.index = sc_slice_cstr(list[t[i].ix]->name), .shard = t[i].shard};
            which[m++] = i;
        }
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    uint8_t *resp = NULL;
    size_t resp_len = 0;
    sc_transport_error terr = {0};
    sc_status st = c && which ? sc_stats_req_encode(c, m, &b) : SC_ENOMEM;
    if (st == SC_OK)
        st = sc_transport_request(sc_placement_transport(pl), p->host, p->port, SC_MSG_SHARD_STATS,
                                  sc_slice_make(b.ptr, b.len), STATS_TIMEOUT_MS, &resp, &resp_len,
                                  &terr);
    sc_wire_buf_fini(&b);
    sc_stats_copy_resp *r = NULL;
    size_t nr = 0;
    if (st == SC_OK)
        st = sc_stats_resp_decode(resp, resp_len, &a, &r, &nr);
    if (st == SC_OK && nr != m)
        st = SC_ECORRUPT;
    if (st != SC_OK)
        sc_log(SC_LOG_WARN, "stats", "node [%s] did not give its shard stats: %s", p->id,
               terr.message[0] ? terr.message : sc_status_str(st));
    for (size_t k = 0; st == SC_OK && k < m; k++)
        if (r[k].open)
            add(&out[t[which[k]].ix], t[which[k]].primary, &r[k]);
    free(resp);
    sc_arena_fini(&a);
}

void sc_cluster_index_stats(sc_node *node, sc_index **list, size_t n, sc_cluster_stats *out)
{
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i].n_copies =
            list[i]->settings.number_of_shards * (1 + list[i]->settings.number_of_replicas);
    sc_placement *pl = sc_node_placement(node);
    if (!pl) {
        for (size_t i = 0; i < n; i++) {
            sc_index_collect_stats(list[i], &out[i].primaries);
            out[i].total = out[i].primaries;
            out[i].n_answered = list[i]->settings.number_of_shards;
        }
        return;
    }
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += out[i].n_copies;
    target *t = calloc(cap ? cap : 1, sizeof *t);
    peer *peers = calloc(cap ? cap : 1, sizeof *peers);
    if (!t || !peers) {
        free(t);
        free(peers);
        return;
    }
    size_t nt = 0, np = 0;
    sc_placement_snapshot *s = sc_placement_acquire(pl);
    for (size_t i = 0; i < n; i++)
        for (uint32_t sh = 0; sh < list[i]->settings.number_of_shards; sh++) {
            sc_shard_location pri, loc;
            sc_placement_primary(s, list[i]->name, sh, &pri);
            for (size_t c = 0; nt < cap && sc_placement_copy(s, list[i]->name, sh, c, &loc); c++) {
                target *x = &t[nt++];
                *x = (target){.ix = (uint32_t)i,
                              .shard = sh,
                              .primary = pri.assigned && !strcmp(pri.node_id, loc.node_id),
                              .node = -1};
                if (loc.local)
                    continue;
                int k = 0;
                while (k < (int)np && strcmp(peers[k].id, loc.node_id))
                    k++;
                if (k == (int)np) {
                    snprintf(peers[k].id, sizeof peers[k].id, "%s", loc.node_id);
                    if (!sc_placement_addr(s, loc.node_id, peers[k].host, sizeof peers[k].host,
                                           &peers[k].port))
                        peers[k].port = 0;
                    np++;
                }
                x->node = k;
            }
        }
    sc_placement_release(s);
    for (size_t i = 0; i < nt; i++) {
        sc_stats_copy_resp r;
        if (t[i].node < 0 && copy_stats(list[t[i].ix], t[i].shard, &r))
            add(&out[t[i].ix], t[i].primary, &r);
    }
    for (size_t k = 0; k < np; k++)
        if (peers[k].port)
            ask(pl, list, &peers[k], (int)k, t, nt, out);
    free(t);
    free(peers);
}
