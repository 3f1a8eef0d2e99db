/* Replication and peer recovery (replication.h): the primary's fan-out of operations to the
 * other copies with in-sync removal before acknowledging, the replica's fenced apply, and the
 * ops-based peer recovery driven by a thread on the recovering copy's node. */
#include "cluster/replication.h"
#include "cluster/replication_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/log.h"
#include "cluster/membership.h"
#include "cluster/placement.h"
#include "cluster/wire.h"
#include "shard/shard.h"

#define OPS_TIMEOUT_MS 30000
#define RECOVER_TIMEOUT_MS 600000
#define RECOVERY_PAGE 256
#define MAX_MARKED 4096

/* A recovery the primary runs for a copy: writes to that copy that fail while it runs make it
 * fail (the copy missed an operation). */
typedef struct active_rec {
    char alloc_id[SC_ALLOC_ID_MAX];
    bool failed;
} active_rec;

struct sc_repl {
    sc_placement *p;
    /* Operation permits: a write counts itself in the slot of the current generation; a
     * recovery's drain bumps the generation and waits for the old slot to empty. New writes
     * never wait for a drain (a blocking lock could form a cycle across two nodes whose handler
     * pools are full of writes waiting on each other's replicas). */
    pthread_mutex_t permit_mu;
    pthread_cond_t permit_cv;
    pthread_mutex_t drain_mu; /* one drain at a time */
    uint64_t gen;
    uint64_t inflight[2];
    pthread_mutex_t mu; /* guards below */
    pthread_cond_t cv;
    bool stop, kick;
    pthread_t th;
    bool halted; /* the recovery thread is joined (sc__repl_halt) */
    active_rec recs[64];
    size_t n_recs;
    /* copies this primary added to the in-sync set, until its routing snapshot shows them */
    char marked[MAX_MARKED][SC_ALLOC_ID_MAX];
    size_t n_marked;
    /* the recovering side: copies recovered lately, not asked again until the routing shows
     * them in sync (or 10 s passed: the in-sync write may have failed) */
    struct {
        char alloc_id[SC_ALLOC_ID_MAX];
        uint64_t at_ns;
    } done[64];
    size_t n_done;
    sc_repl_files *files; /* the primary's pinned commits for file recoveries */
    _Atomic uint64_t hold_log_ns; /* when a held write was last logged (once a second) */
};

#define DONE_GRACE_NS 10000000000ull

static bool recently_done(sc_repl *r, const char *alloc_id)
{
    uint64_t now = sc_clock_now_ns();
    for (size_t i = 0; i < sizeof r->done / sizeof r->done[0]; i++)
        if (!strcmp(r->done[i].alloc_id, alloc_id) && now - r->done[i].at_ns < DONE_GRACE_NS)
            return true;
    return false;
}

/* ---- helpers ---- */

static sc_repl *repl_of(sc_index *ix)
{
    sc_placement *p = ix && ix->node ? sc_node_placement(ix->node) : NULL;
    return p ? sc_placement_repl(p) : NULL;
}

static bool is_marked(sc_repl *r, const char *alloc_id)
{
    bool found = false;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n_marked && !found; i++)
        found = !strcmp(r->marked[i], alloc_id);
    pthread_mutex_unlock(&r->mu);
    return found;
}

static bool in_sync(const sc_shard_routing *sh, const char *alloc_id)
{
    for (size_t i = 0; i < sh->n_in_sync; i++)
        if (!strcmp(sh->in_sync[i].alloc_id, alloc_id))
            return true;
    return false;
}

static void rec_fail(sc_repl *r, const char *alloc_id)
{
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n_recs; i++)
        if (!strcmp(r->recs[i].alloc_id, alloc_id))
            r->recs[i].failed = true;
    pthread_mutex_unlock(&r->mu);
}

static sc_shard *local_shard(sc_index *ix, uint32_t shard)
{
    if (!ix || shard >= ix->settings.number_of_shards || !ix->shards)
        return NULL;
    return ix->shards[shard];
}

static sc_status send_ops(sc_placement *p, const sc_placement_snapshot *s, const char *node,
                          const sc_wire_buf *b, char *why, size_t cap)
{
    char host[128];
    uint16_t port;
    if (!sc_placement_addr(s, node, host, sizeof host, &port)) {
        snprintf(why, cap, "no transport address for node [%s]", node);
        return SC_EIO;
    }
    uint8_t *raw = NULL;
    size_t len = 0;
    sc_transport_error err = {0};
    sc_status st =
        sc_transport_request(sc_placement_transport(p), host, port, SC_MSG_REPL_OPS,
                             sc_slice_make(b->ptr, b->len), OPS_TIMEOUT_MS, &raw, &len, &err);
    free(raw);
    if (st != SC_OK)
        snprintf(why, cap, "%s", err.message[0] ? err.message : sc_status_str(st));
    return st;
}

/* ---- the primary's write path ---- */

/* Whether this node holds shard's primary in s; sets the shard's term from the routing. */
static bool local_primary(const sc_placement_snapshot *s, sc_index *ix, uint32_t shard)
{
    const sc_shard_routing *sh = sc_placement_shard(s, ix->name, shard);
    sc_shard *sd = local_shard(ix, shard);
    if (!sh || !sd || !sh->n_copies || !sh->copies[0].primary ||
        strcmp(sh->copies[0].node, sc_placement_local_id(s)))
        return false;
    sc_shard_set_primary_term(sd, sh->primary_term);
    return true;
}

static uint64_t permit_take(sc_repl *r)
{
    pthread_mutex_lock(&r->permit_mu);
    uint64_t g = r->gen;
    r->inflight[g & 1]++;
    pthread_mutex_unlock(&r->permit_mu);
    return g;
}

static void permit_release(sc_repl *r, uint64_t g)
{
    pthread_mutex_lock(&r->permit_mu);
    if (--r->inflight[g & 1] == 0)
        pthread_cond_broadcast(&r->permit_cv);
    pthread_mutex_unlock(&r->permit_mu);
}

/* Waits until every write that took its permit before this call has finished. */
static void permits_drain(sc_repl *r)
{
    pthread_mutex_lock(&r->drain_mu);
    pthread_mutex_lock(&r->permit_mu);
    uint64_t old = r->gen++;
    while (r->inflight[old & 1])
        pthread_cond_wait(&r->permit_cv, &r->permit_mu);
    pthread_mutex_unlock(&r->permit_mu);
    pthread_mutex_unlock(&r->drain_mu);
}

uint64_t sc__repl_begin(sc_index *ix, bool *primary)
{
    uint32_t ns = ix->settings.number_of_shards;
    sc_repl *r = repl_of(ix);
    for (uint32_t i = 0; i < ns; i++)
        primary[i] = r == NULL;
    if (!r)
        return 0;
    uint64_t ticket = permit_take(r);
    sc_placement_snapshot *s = sc_placement_acquire(r->p);
    for (uint32_t i = 0; i < ns; i++)
        primary[i] = local_primary(s, ix, i);
    sc_placement_release(s);
    return ticket;
}

bool sc__repl_wait_active(sc_index *ix, uint32_t shard, uint32_t need, uint64_t deadline_ns,
                          uint32_t *have)
{
    sc_repl *r = repl_of(ix);
    if (r) {
        /* Count on a routing snapshot at least as new as the membership view (what
         * _cluster/health reads): the placement publishes it a moment after the view. */
        int64_t view_rev = sc_membership_revision(sc_placement_membership(r->p));
        uint64_t now = sc_clock_now_ns();
        int64_t left_ms = now < deadline_ns ? (int64_t)((deadline_ns - now) / 1000000) : 0;
        (void)!sc_placement_wait(r->p, view_rev, left_ms < 1000 ? left_ms : 1000);
    }
    for (;;) {
        int64_t rev = 0;
        if (r) {
            sc_placement_snapshot *s = sc_placement_acquire(r->p);
            sc_shard_location loc;
            uint32_t n = 0;
            while (sc_placement_copy(s, ix->name, shard, n, &loc))
                n++;
            rev = sc_placement_revision(s);
            sc_placement_release(s);
            *have = n;
        } else {
            *have = local_shard(ix, shard) ? 1 : 0; /* a single node holds primaries only */
        }
        uint64_t now = sc_clock_now_ns();
        if (*have >= need || now >= deadline_ns)
            return *have >= need;
        uint64_t left_ms = (deadline_ns - now) / 1000000 + 1;
        if (r) {
            (void)!sc_placement_wait(r->p, rev + 1, left_ms < 500 ? (int64_t)left_ms : 500);
        } else {
            struct timespec ts = {0, (long)(left_ms < 100 ? left_ms : 100) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}

/* Whether this node's primary copy of sh is being handed over: a relocation target of it is in
 * the in-sync set, so the master's next computation makes the target the primary. */
static bool handing_off(const sc_placement_snapshot *s, const sc_shard_routing *sh)
{
    if (!sh || !sh->n_copies || !sh->copies[0].primary ||
        strcmp(sh->copies[0].node, sc_placement_local_id(s)) != 0)
        return false;
    for (size_t c = 1; c < sh->n_copies; c++)
        if (!strcmp(sh->copies[c].relocating_from, sh->copies[0].alloc_id) &&
            in_sync(sh, sh->copies[c].alloc_id))
            return true;
    return false;
}

void sc__repl_wait_handoff(sc_index *ix, const bool *touched, uint64_t deadline_ns)
{
    sc_repl *r = repl_of(ix);
    if (!r)
        return;
    uint32_t ns = ix->settings.number_of_shards;
    uint64_t t0 = sc_clock_now_ns();
    bool held = false;
    for (;;) {
        sc_placement_snapshot *s = sc_placement_acquire(r->p);
        int64_t rev = sc_placement_revision(s);
        bool busy = false;
        for (uint32_t i = 0; i < ns && !busy; i++)
            busy = touched[i] && handing_off(s, sc_placement_shard(s, ix->name, i));
        sc_placement_release(s);
        uint64_t now = sc_clock_now_ns();
        if (!busy || now >= deadline_ns) {
            uint64_t last = atomic_load(&r->hold_log_ns);
            if (held && now - last >= 1000000000ull &&
                atomic_compare_exchange_strong(&r->hold_log_ns, &last, now))
                sc_log(SC_LOG_INFO, "replication",
                       "[%s] a write waited %.2f s for a primary hand-over%s", ix->name,
                       (double)(now - t0) / 1e9, busy ? " and goes on here (timeout)" : "");
            return;
        }
        held = true;
        uint64_t left_ms = (deadline_ns - now) / 1000000 + 1;
        (void)!sc_placement_wait(r->p, rev + 1, left_ms < 500 ? (int64_t)left_ms : 500);
    }
}

bool sc__repl_wait_primary(sc_index *ix, uint32_t shard)
{
    sc_repl *r = repl_of(ix);
    if (!r)
        return true;
    /* The coordinator saw this node as primary in a newer routing than ours: catch up. */
    uint64_t until = sc_clock_now_ns() + 3000000000ull;
    for (;;) {
        sc_placement_snapshot *s = sc_placement_acquire(r->p);
        bool ok = local_primary(s, ix, shard);
        int64_t rev = sc_placement_revision(s);
        /* Deposed: another node is primary under a newer term than this copy's (a hand-over or
         * a promotion this node has seen); the coordinator's routing is older than ours, and
         * waiting cannot make this node primary again. */
        const sc_shard_routing *now = sc_placement_shard(s, ix->name, shard);
        sc_shard *sd = local_shard(ix, shard);
        bool deposed = !ok && now && sd && now->n_copies && now->copies[0].primary &&
                       sc_shard_primary_term(sd) > 0 &&
                       now->primary_term > sc_shard_primary_term(sd);
        sc_placement_release(s);
        if (deposed)
            return false;
        if (!ok && sc_clock_now_ns() >= until) {
            sc_placement_snapshot *s2 = sc_placement_acquire(r->p);
            const sc_shard_routing *sh = sc_placement_shard(s2, ix->name, shard);
            sc_log(SC_LOG_WARN, "replication",
                   "[%s][%u] a write came here but this node (%s) is not the primary (routing: "
                   "%s, term %lld; local copy %s)",
                   ix->name, shard, sc_placement_local_id(s2),
                   sh && sh->n_copies && sh->copies[0].primary ? sh->copies[0].node : "none",
                   sh ? (long long)sh->primary_term : -1LL,
                   local_shard(ix, shard) ? "open" : "absent");
            sc_placement_release(s2);
        }
        if (ok || sc_clock_now_ns() >= until)
            return ok;
        (void)!sc_placement_wait(r->p, rev + 1, 200);
    }
}

static void fail_shard_results(sc_index *ix, uint32_t shard, const sc_doc_write *w, size_t n,
                               sc_doc_result *res, int status, const char *type, const char *why)
{
    (void)w;
    for (size_t i = 0; i < n; i++)
        if (res[i].shard == shard && res[i].result) {
            res[i].result = NULL;
            res[i].status = status;
            sc_cluster_error_set(&res[i].err, status, type, "[%s][%u] %s", ix->name, shard, why);
        }
}

/* Replicates the successful results of one shard; fails them when they cannot be acked. */
static void replicate_shard(sc_repl *r, sc_index *ix, uint32_t shard, const sc_doc_write *w,
                            size_t n, sc_doc_result *res)
{
    sc_placement_snapshot *s = sc_placement_acquire(r->p);
    const sc_shard_routing *sh = sc_placement_shard(s, ix->name, shard);
    const char *me = sc_placement_local_id(s);
    sc_shard *sd = local_shard(ix, shard);
    int64_t my_term = sd ? sc_shard_primary_term(sd) : 0;
    if (!sh || !sh->n_copies || !sh->copies[0].primary || strcmp(sh->copies[0].node, me) ||
        sh->primary_term != my_term) {
        fail_shard_results(ix, shard, w, n, res, 503, "shard_not_primary_exception",
                           "this node is no longer the primary under its term; retry");
        sc_placement_release(s);
        return;
    }
    if (!sc_membership_lease_ok(sc_placement_membership(r->p))) {
        fail_shard_results(
            ix, shard, w, n, res, 503, "node_not_connected_exception",
            "the primary's lease on the cluster lapsed; the write is not acknowledged");
        sc_placement_release(s);
        return;
    }
    if (sh->n_copies < 2) {
        sc_placement_release(s);
        return;
    }
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    size_t n_ops = 0;
    bool refresh = false;
    for (size_t i = 0; i < n; i++)
        if (res[i].shard == shard && res[i].result) {
            n_ops++;
            refresh |= w[i].refresh;
        }
    sc_repl_ops_put_header(&b, ix->name, shard, my_term, refresh, n_ops);
    for (size_t i = 0; i < n; i++) {
        if (res[i].shard != shard || !res[i].result)
            continue;
        sc_shard_op op = {w[i].op == SC_DOC_DELETE,
                          res[i].seq_no,
                          res[i].primary_term,
                          res[i].version,
                          w[i].id,
                          w[i].op == SC_DOC_DELETE ? (sc_slice){0} : w[i].source};
        sc_repl_ops_put_op(&b, &op);
    }
    for (size_t c = 1; c < sh->n_copies && b.st == SC_OK; c++) {
        const sc_shard_copy *cp = &sh->copies[c];
        char why[300];
        if (send_ops(r->p, s, cp->node, &b, why, sizeof why) == SC_OK)
            continue;
        if (!in_sync(sh, cp->alloc_id) && !is_marked(r, cp->alloc_id)) {
            rec_fail(r, cp->alloc_id); /* a recovering copy: its recovery must start over */
            continue;
        }
        /* An in-sync copy missed the write: out of the in-sync set before the ack. */
        sc_status st = sc_membership_set_in_sync(sc_placement_membership(r->p), ix->name, shard,
                                                 cp->alloc_id, false, my_term);
        sc_log(st == SC_OK ? SC_LOG_WARN : SC_LOG_ERROR, "replication",
               "[%s][%u] replica %s on [%s] failed a write (%s): %s", ix->name, shard, cp->alloc_id,
               cp->node, why, st == SC_OK ? "removed from the in-sync set" : sc_status_str(st));
        pthread_mutex_lock(&r->mu);
        for (size_t k = 0; k < r->n_marked; k++)
            if (!strcmp(r->marked[k], cp->alloc_id))
                r->marked[k][0] = 0;
        pthread_mutex_unlock(&r->mu);
        if (st != SC_OK)
            fail_shard_results(ix, shard, w, n, res, 503, "replication_failed_exception",
                               "a replica failed the write and could not be removed from the "
                               "in-sync set; the write is not acknowledged");
    }
    if (b.st != SC_OK)
        fail_shard_results(ix, shard, w, n, res, 500, "exception", "cannot encode the operations");
    sc_wire_buf_fini(&b);
    sc_placement_release(s);
}

void sc__repl_end(sc_index *ix, uint64_t ticket, const sc_doc_write *writes, size_t n,
                  sc_doc_result *results)
{
    sc_repl *r = repl_of(ix);
    if (!r)
        return;
    uint32_t ns = ix->settings.number_of_shards;
    for (uint32_t sh = 0; sh < ns; sh++) {
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
            any = results[i].shard == sh && results[i].result;
        if (any)
            replicate_shard(r, ix, sh, writes, n, results);
    }
    permit_release(r, ticket);
}

/* ---- the replica's side ---- */

static sc_status h_ops(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_repl *r = ctx;
    (void)out;
    sc_repl_ops m;
    sc_status st = sc_repl_ops_decode(body.ptr, body.len, &m);
    if (st != SC_OK) {
        snprintf(errmsg, cap, "bad replication request: %s", sc_status_str(st));
        sc_repl_ops_fini(&m);
        return st;
    }
    char index[256];
    snprintf(index, sizeof index, "%.*s", (int)m.index.len, (const char *)m.index.ptr);
    sc_index *ix = sc_node_index(sc_placement_node(r->p), index);
    sc_shard *sd = local_shard(ix, m.shard);
    if (!sd) {
        snprintf(errmsg, cap, "[%s][%u] no such shard copy here", index, m.shard);
        sc_index_unref(ix);
        sc_repl_ops_fini(&m);
        return SC_ENOTFOUND;
    }
    sc_placement_snapshot *s = sc_placement_acquire(r->p);
    const sc_shard_routing *sh = sc_placement_shard(s, index, m.shard);
    int64_t current = sh ? sh->primary_term : 0;
    sc_placement_release(s);
    if (sc_shard_primary_term(sd) > current)
        current = sc_shard_primary_term(sd);
    /* fencing: operations from an older primary term are refused */
    if (m.term < current) {
        snprintf(errmsg, cap,
                 "[%s][%u] operation primary term [%" PRId64 "] is older than the current [%" PRId64
                 "]",
                 index, m.shard, m.term, current);
        sc_index_unref(ix);
        sc_repl_ops_fini(&m);
        return SC_ECONFLICT;
    }
    sc_shard_set_primary_term(sd, m.term);
    for (size_t i = 0; i < m.n_ops && st == SC_OK; i++) {
        bool applied;
        sc_shard_error err;
        memset(&err, 0, sizeof err);
        st = sc_shard_apply(sd, &m.ops[i], &applied, &err);
        if (st != SC_OK)
            snprintf(errmsg, cap, "[%s][%u] %s: %s", index, m.shard, err.type ? err.type : "error",
                     err.reason);
    }
    if (st == SC_OK)
        st = sc_shard_sync(sd);
    /* refresh=true / wait_for on the write: visible on this copy before the primary acks */
    if (st == SC_OK && m.refresh) {
        st = sc_shard_refresh(sd);
        if (st != SC_OK)
            snprintf(errmsg, cap, "[%s][%u] refresh failed: %s", index, m.shard, sc_status_str(st));
    }
    sc_index_unref(ix);
    sc_repl_ops_fini(&m);
    return st;
}

/* ---- peer recovery, the primary's side ---- */

typedef struct id_page {
    struct {
        char *id;
        size_t len;
        bool deleted;
        int64_t seq_no, term, version;
    } items[RECOVERY_PAGE];
    size_t n;
    int64_t after_seq_no;
} id_page;

static void collect_id(void *ctx, sc_slice id, bool deleted, int64_t seq_no, int64_t term,
                       int64_t version)
{
    id_page *pg = ctx;
    if (seq_no <= pg->after_seq_no)
        return; /* in the commit the copy installed */
    char *copy = malloc(id.len ? id.len : 1);
    if (!copy)
        return;
    memcpy(copy, id.ptr, id.len);
    pg->items[pg->n].id = copy;
    pg->items[pg->n].len = id.len;
    pg->items[pg->n].deleted = deleted;
    pg->items[pg->n].seq_no = seq_no;
    pg->items[pg->n].term = term;
    pg->items[pg->n].version = version;
    pg->n++;
}

/* Sends every id of sd whose seq_no is above after_seq_no to node as operations. *sent counts
 * them. */
static sc_status stream_shard(sc_repl *r, sc_index *ix, uint32_t shard, sc_shard *sd,
                              const char *node, int64_t term, int64_t after_seq_no, uint64_t *sent,
                              char *why, size_t cap)
{
    id_page *pg = calloc(1, sizeof *pg);
    if (!pg)
        return SC_ENOMEM;
    sc_status st = SC_OK;
    uint64_t from = 0, next = 0;
    pg->after_seq_no = after_seq_no;
    for (;;) {
        pg->n = 0;
        sc_shard_list_ids(sd, from, RECOVERY_PAGE, collect_id, pg, &next);
        if (next == from)
            break;
        from = next;
        if (!pg->n)
            continue;
        sc_wire_buf b;
        sc_wire_buf_init(&b);
        sc_repl_ops_put_header(&b, ix->name, shard, term, false, pg->n);
        for (size_t i = 0; i < pg->n && st == SC_OK; i++) {
            sc_shard_op op = {pg->items[i].deleted,
                              pg->items[i].seq_no,
                              pg->items[i].term,
                              pg->items[i].version,
                              sc_slice_make((const uint8_t *)pg->items[i].id, pg->items[i].len),
                              (sc_slice){0}};
            sc_shard_doc d = {0};
            if (!op.is_delete) {
                st = sc_shard_get(sd, op.id, &d);
                if (st == SC_OK && d.found) { /* the current state (maybe newer than listed) */
                    op.seq_no = d.seq_no;
                    op.primary_term = d.primary_term;
                    op.version = d.version;
                    op.source = sc_slice_make(d.source, d.source_len);
                } else if (st == SC_OK) {
                    /* deleted since it was listed: that delete goes to the copy as a write */
                    op.is_delete = true;
                }
            }
            if (st == SC_OK)
                sc_repl_ops_put_op(&b, &op);
            sc_shard_doc_fini(&d);
        }
        for (size_t i = 0; i < pg->n; i++)
            free(pg->items[i].id);
        if (st == SC_OK && b.st != SC_OK)
            st = b.st;
        if (st == SC_OK) {
            sc_placement_snapshot *s = sc_placement_acquire(r->p);
            st = send_ops(r->p, s, node, &b, why, cap);
            sc_placement_release(s);
        }
        sc_wire_buf_fini(&b);
        if (st != SC_OK)
            break;
        *sent += pg->n;
    }
    free(pg);
    return st;
}

/* Waits (up to 10 s) for this node's routing to show alloc_id as a copy of the shard with this
 * node as primary; fills *term and the copy's node. */
sc_status sc__repl_wait_copy(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                             int64_t *term, char node[SC_ALLOC_NODE_MAX])
{
    uint64_t until = sc_clock_now_ns() + 10000000000ull;
    for (;;) {
        sc_placement_snapshot *s = sc_placement_acquire(r->p);
        const sc_shard_routing *sh = sc_placement_shard(s, index, shard);
        int64_t rev = sc_placement_revision(s);
        bool primary = sh && sh->n_copies && sh->copies[0].primary &&
                       !strcmp(sh->copies[0].node, sc_placement_local_id(s));
        bool found = false;
        for (size_t c = 1; primary && c < sh->n_copies && !found; c++)
            if (!strcmp(sh->copies[c].alloc_id, alloc_id)) {
                found = true;
                snprintf(node, SC_ALLOC_NODE_MAX, "%s", sh->copies[c].node);
                *term = sh->primary_term;
            }
        sc_placement_release(s);
        if (found)
            return SC_OK;
        if (sc_clock_now_ns() >= until)
            return primary ? SC_ENOTFOUND : SC_ECONFLICT;
        (void)!sc_placement_wait(r->p, rev + 1, 200);
    }
}

sc_status sc__repl_recover_ops(sc_repl *r, const char *index, uint32_t shard, const char *alloc_id,
                               int64_t after_seq_no, sc_wire_buf *out, char *errmsg, size_t cap)
{
    char node[SC_ALLOC_NODE_MAX];
    int64_t term = 0;
    sc_status st = sc__repl_wait_copy(r, index, shard, alloc_id, &term, node);
    if (st != SC_OK) {
        snprintf(errmsg, cap, "[%s][%u] is not primary here or copy %s is unknown", index, shard,
                 alloc_id);
        return st;
    }
    sc_index *ix = sc_node_index(sc_placement_node(r->p), index);
    sc_shard *sd = local_shard(ix, shard);
    pthread_mutex_lock(&r->mu);
    bool room = r->n_recs < sizeof r->recs / sizeof r->recs[0];
    if (room) {
        snprintf(r->recs[r->n_recs].alloc_id, SC_ALLOC_ID_MAX, "%s", alloc_id);
        r->recs[r->n_recs++].failed = false;
    }
    pthread_mutex_unlock(&r->mu);
    if (!sd || !room) {
        sc_index_unref(ix);
        snprintf(errmsg, cap, "[%s][%u] cannot recover now", index, shard);
        if (room)
            rec_fail(r, alloc_id);
        st = SC_ELIMIT;
        goto done;
    }
    /* Every write that starts from now on sees the copy in the routing and sends it its ops;
     * drain those that started before. */
    permits_drain(r);
    uint64_t t0 = sc_clock_now_ns(), sent = 0;
    char why[300] = "";
    st = stream_shard(r, ix, shard, sd, node, term, after_seq_no, &sent, why, sizeof why);
    pthread_mutex_lock(&r->mu);
    bool failed = false;
    for (size_t i = 0; i < r->n_recs; i++)
        if (!strcmp(r->recs[i].alloc_id, alloc_id))
            failed |= r->recs[i].failed;
    pthread_mutex_unlock(&r->mu);
    if (st == SC_OK && failed) {
        st = SC_EIO;
        snprintf(why, sizeof why, "a write to the recovering copy failed");
    }
    /* Marked before the in-sync write lands: a write failing on it from now is an in-sync
     * failure (removal before ack), even before the routing snapshot shows the change. */
    if (st == SC_OK) {
        pthread_mutex_lock(&r->mu);
        size_t k = 0;
        while (k < r->n_marked && r->marked[k][0])
            k++;
        if (k < MAX_MARKED) {
            snprintf(r->marked[k], SC_ALLOC_ID_MAX, "%s", alloc_id);
            if (k == r->n_marked)
                r->n_marked++;
        }
        pthread_mutex_unlock(&r->mu);
        st = sc_membership_set_in_sync(sc_placement_membership(r->p), index, shard, alloc_id, true,
                                       term);
        if (st != SC_OK)
            snprintf(why, sizeof why, "cannot mark in sync: %s", sc_status_str(st));
    }
    sc_log(st == SC_OK ? SC_LOG_INFO : SC_LOG_WARN, "replication",
           "[%s][%u] peer recovery of copy %s on [%s]: %" PRIu64 " ops%s in %.2f s%s%s", index,
           shard, alloc_id, node, sent, after_seq_no >= 0 ? " after the copied commit" : "",
           (double)(sc_clock_now_ns() - t0) / 1e9,
           st == SC_OK ? ", in sync" : ", failed: ", st == SC_OK ? "" : why);
    if (st != SC_OK)
        snprintf(errmsg, cap, "[%s][%u] recovery failed: %s", index, shard, why);
    else
        sc_wire_put_uvar(out, sent);
    sc_index_unref(ix);
done:
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n_recs; i++)
        if (!strcmp(r->recs[i].alloc_id, alloc_id)) {
            r->recs[i] = r->recs[--r->n_recs];
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return st;
}

static sc_status h_recover(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_slice name, aid;
    uint32_t shard;
    if (sc_repl_recover_decode(body.ptr, body.len, &name, &shard, &aid) != SC_OK) {
        snprintf(errmsg, cap, "bad recovery request");
        return SC_ECORRUPT;
    }
    char index[256], alloc_id[SC_ALLOC_ID_MAX];
    snprintf(index, sizeof index, "%.*s", (int)name.len, (const char *)name.ptr);
    snprintf(alloc_id, sizeof alloc_id, "%.*s", (int)aid.len, (const char *)aid.ptr);
    return sc__repl_recover_ops(ctx, index, shard, alloc_id, -1, out, errmsg, cap);
}

sc_placement *sc__repl_placement(sc_repl *r)
{
    return r->p;
}

bool sc__repl_stopping(sc_repl *r)
{
    pthread_mutex_lock(&r->mu);
    bool stop = r->stop;
    pthread_mutex_unlock(&r->mu);
    return stop;
}

/* ---- peer recovery, the recovering copy's side ---- */

/* One pass: asks the primary of every local copy that is not in sync to recover it. */
static void recover_pass(sc_repl *r)
{
    sc_placement_snapshot *s = sc_placement_acquire(r->p);
    const sc_routing_table *t = sc_placement_routing(s);
    const char *me = sc_placement_local_id(s);
    for (size_t i = 0; t && i < t->n_indices; i++) {
        const sc_index_routing *ir = &t->indices[i];
        for (uint32_t sh = 0; sh < ir->number_of_shards; sh++) {
            const sc_shard_routing *x = &ir->shards[sh];
            if (!x->n_copies || !x->copies[0].primary)
                continue;
            for (size_t c = 1; c < x->n_copies; c++) {
                const sc_shard_copy *cp = &x->copies[c];
                if (strcmp(cp->node, me) || in_sync(x, cp->alloc_id) ||
                    recently_done(r, cp->alloc_id))
                    continue;
                sc_index *ix = sc_node_index(sc_placement_node(r->p), ir->index);
                bool ready = local_shard(ix, sh) != NULL;
                sc_index_unref(ix);
                char host[128];
                uint16_t port;
                if (!ready || !sc_placement_addr(s, x->copies[0].node, host, sizeof host, &port))
                    continue;
                char why[400] = "";
                sc_status st = sc__repl_recover_copy(r, ir->index, sh, cp->alloc_id, host, port,
                                                     why, sizeof why);
                if (st == SC_OK) {
                    /* show what was recovered now rather than at the next scheduled refresh:
                     * a relocation target may be the primary searches go to already */
                    ix = sc_node_index(sc_placement_node(r->p), ir->index);
                    sc_shard *sd = local_shard(ix, sh);
                    if (sd && sc_shard_refresh(sd) != SC_OK)
                        sc_log(SC_LOG_WARN, "replication", "[%s][%u] refresh after recovery failed",
                               ir->index, sh);
                    sc_index_unref(ix);
                    size_t k = r->n_done++ % (sizeof r->done / sizeof r->done[0]);
                    snprintf(r->done[k].alloc_id, SC_ALLOC_ID_MAX, "%s", cp->alloc_id);
                    r->done[k].at_ns = sc_clock_now_ns();
                }
                if (st != SC_OK)
                    sc_log(SC_LOG_WARN, "replication", "[%s][%u] recovery from [%s]: %s", ir->index,
                           sh, x->copies[0].node, why[0] ? why : sc_status_str(st));
                pthread_mutex_lock(&r->mu);
                bool stop = r->stop;
                pthread_mutex_unlock(&r->mu);
                if (stop)
                    goto out;
            }
        }
    }
out:
    sc_placement_release(s);
}

static void *recovery_main(void *arg)
{
    sc_repl *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        if (!r->kick) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        }
        if (r->stop)
            break;
        r->kick = false;
        pthread_mutex_unlock(&r->mu);
        recover_pass(r);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

void sc__repl_kick(sc_repl *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->kick = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

sc_status sc__repl_start(sc_placement *p, sc_repl **out)
{
    sc_repl *r = calloc(1, sizeof *r);
    if (!r)
        return SC_ENOMEM;
    r->p = p;
    pthread_mutex_init(&r->permit_mu, NULL);
    pthread_mutex_init(&r->drain_mu, NULL);
    pthread_cond_init(&r->permit_cv, NULL);
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    sc_transport *t = sc_placement_transport(p);
    sc_status st = sc_transport_register(t, SC_MSG_REPL_OPS, h_ops, r);
    if (st == SC_OK)
        st = sc_transport_register(t, SC_MSG_REPL_RECOVER, h_recover, r);
    if (st == SC_OK)
        st = sc__repl_files_start(r, t, &r->files);
    if (st == SC_OK && pthread_create(&r->th, NULL, recovery_main, r) != 0)
        st = SC_EIO;
    if (st != SC_OK) {
        sc__repl_files_free(r->files);
        free(r); /* handlers may be registered: the transport is closed before p goes */
        return st;
    }
    *out = r;
    return SC_OK;
}

void sc__repl_halt(sc_repl *r)
{
    if (!r || r->halted)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL);
    r->halted = true;
}

void sc__repl_stop(sc_repl *r)
{
    if (!r)
        return;
    sc__repl_halt(r);
    sc__repl_files_free(r->files);
    pthread_mutex_destroy(&r->permit_mu);
    pthread_mutex_destroy(&r->drain_mu);
    pthread_cond_destroy(&r->permit_cv);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
