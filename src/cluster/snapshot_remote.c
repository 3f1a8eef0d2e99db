/* Snapshots of a cluster (`--cluster`): the node that receives PUT _snapshot/{repo}/{snap}
 * coordinates (snapshot.c) and asks the node holding each shard's primary to copy that shard's
 * commit into the repository, which every node reaches at the same path (a shared path.repo);
 * this file is both sides of that request (snapshot_wire.h). The coordinator writes the manifest
 * and the root once every shard answered. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/internal.h"
#include "cluster/snap_internal.h"
#include "cluster/snaprepo.h"
#include "cluster/snapshot_wire.h"
#include "cluster/transport.h"

/* A shard's copy can take long on a big shard: the coordinator waits this long for it. */
#define SHARD_TIMEOUT_MS (30u * 60u * 1000u)

static bool slice_str(sc_slice s, char *out, size_t cap)
{
    if (s.len >= cap || memchr(s.ptr, '\0', s.len))
        return false;
    memcpy(out, s.ptr, s.len);
    out[s.len] = '\0';
    return true;
}

/* The local shard `shard` of `index` (*ixp: a reference to its index, or NULL), waiting up to
 * 10 s for an index this node has not created yet or a shard still opening. */
static sc_shard *wait_shard(sc_node *n, const char *index, uint32_t shard, sc_index **ixp)
{
    uint64_t until = sc_clock_now_ns() + 10000ull * 1000000u;
    for (;;) {
        sc_index *ix = sc_node_index(n, index);
        sc_shard *sh = ix && shard < ix->settings.number_of_shards && !atomic_load(&ix->deleted)
                           ? atomic_load(&ix->shards[shard])
                           : NULL;
        if (sh || sc_clock_now_ns() >= until) {
            *ixp = ix;
            return sh;
        }
        sc_index_unref(ix);
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The repository's location: the registration of a repository comes to this node through its
 * watch and may be a moment behind the coordinator that registered it and asks now (a node that
 * has just joined): waits up to 10 s for it. */
static sc_status wait_repo(sc_node *n, const char *repo, char loc[4096], sc_cluster_error *err)
{
    uint64_t until = sc_clock_now_ns() + 10000ull * 1000000u;
    for (;;) {
        sc_status st = sc__snap_repo_location(n, repo, loc, err);
        if (st != SC_ENOTFOUND || sc_clock_now_ns() >= until)
            return st;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The answer from the shard's json ({n_docs, files: [{name, blob, size}]}). */
static sc_status encode_answer(const json_t *sj, sc_wire_buf *resp)
{
    const json_t *files = json_object_get(sj, "files");
    size_t n = json_array_size(files);
    sc_snap_shard_file *f = calloc(n ? n : 1, sizeof *f);
    if (!f)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(files, i);
        f[i].name = sc_slice_cstr(json_string_value(json_object_get(e, "name")));
        f[i].blob = sc_slice_cstr(json_string_value(json_object_get(e, "blob")));
        f[i].size = (uint64_t)json_integer_value(json_object_get(e, "size"));
    }
    sc_snap_shard_resp r = {.n_docs = (uint64_t)json_integer_value(json_object_get(sj, "n_docs")),
                            .files = f,
                            .n_files = n};
    sc_status st = sc_snap_shard_resp_encode(&r, resp);
    free(f);
    return st;
}

/* Data node: copies the local primary's commit of the asked shard into the repository. */
static sc_status h_shard(void *ctx, sc_slice body, sc_wire_buf *resp, char *errmsg, size_t errcap)
{
    sc_node *n = ctx;
    sc_snap_shard_req q;
    sc_status st = sc_snap_shard_req_decode(body.ptr, body.len, &q);
    char index[256];
    sc_snapshot_job *j = st == SC_OK ? calloc(1, sizeof *j) : NULL;
    if (st != SC_OK || !j) {
        snprintf(errmsg, errcap, "bad snapshot shard request");
        return st != SC_OK ? st : SC_ENOMEM;
    }
    j->node = n;
    j->s = sc__node_snaps(n);
    sc_cluster_error err = {0};
    if (!slice_str(q.repo, j->repo, sizeof j->repo) ||
        !slice_str(q.snapshot_uuid, j->uuid, sizeof j->uuid) ||
        !slice_str(q.index, index, sizeof index)) {
        free(j);
        snprintf(errmsg, errcap, "bad snapshot shard request");
        return SC_ECORRUPT;
    }
    st = wait_repo(n, j->repo, j->loc, &err);
    sc_index *ix = NULL;
    sc_shard *sh = st == SC_OK ? wait_shard(n, index, q.shard, &ix) : NULL;
    json_t *sj = json_pack("{s:i,s:[]}", "n_docs", 0, "files");
    const char *why = NULL;
    if (st != SC_OK) {
        snprintf(errmsg, errcap, "%s", err.reason);
    } else if (!sh) {
        snprintf(errmsg, errcap, "shard [%s][%u] is not available on this node", index, q.shard);
        st = SC_ENOTFOUND;
    } else if ((st = sc__snap_shard_copy(j, sh, sj, NULL, &why)) != SC_OK) {
        snprintf(errmsg, errcap, "%s", why ? why : "could not copy the shard");
    } else if ((st = sc_snaprepo_blobs_sync(j->loc, j->touched)) != SC_OK) {
        /* the coordinator's manifest must not name blobs whose renames are not durable */
        snprintf(errmsg, errcap, "could not sync the repository's blob folders");
    } else {
        st = encode_answer(sj, resp);
    }
    json_decref(sj);
    sc_index_unref(ix);
    free(j);
    return st;
}

sc_status sc_snapshot_remote_start(sc_node *n, sc_transport *t)
{
    return sc_transport_register(t, SC_MSG_SNAP_SHARD, h_shard, n);
}

sc_status sc__snap_shard_remote(sc_snapshot_job *j, const sc_shard_location *loc, const char *index,
                                uint32_t shard, json_t *sj, char *why, size_t cap)
{
    sc_placement *p = sc_node_placement(j->node);
    if (!p) {
        snprintf(why, cap, "the node is not part of a cluster");
        return SC_EINVAL;
    }
    sc_snap_shard_req q = {.repo = sc_slice_cstr(j->repo),
                           .snapshot_uuid = sc_slice_cstr(j->uuid),
                           .index = sc_slice_cstr(index),
                           .shard = shard};
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status st = sc_snap_shard_req_encode(&q, &b);
    uint8_t *out = NULL;
    size_t out_len = 0;
    sc_transport_error terr = {0};
    if (st == SC_OK)
        st = sc_transport_request(sc_placement_transport(p), loc->host, loc->port,
                                  SC_MSG_SNAP_SHARD, sc_slice_make(b.ptr, b.len), SHARD_TIMEOUT_MS,
                                  &out, &out_len, &terr);
    sc_wire_buf_fini(&b);
    if (st != SC_OK) {
        snprintf(why, cap, "node [%s] could not snapshot the shard: %s", loc->node_id,
                 terr.message[0] ? terr.message : sc_status_str(st));
        return st;
    }
    sc_arena a;
    sc_arena_init(&a, 64u << 20);
    sc_snap_shard_resp r;
    st = sc_snap_shard_resp_decode(out, out_len, &a, &r);
    if (st == SC_OK) {
        json_t *files = json_object_get(sj, "files");
        json_object_set_new(sj, "n_docs", json_integer((json_int_t)r.n_docs));
        for (size_t i = 0; i < r.n_files; i++)
            json_array_append_new(
                files, json_pack("{s:s%,s:s%,s:I}", "name", (const char *)r.files[i].name.ptr,
                                 r.files[i].name.len, "blob", (const char *)r.files[i].blob.ptr,
                                 r.files[i].blob.len, "size", (json_int_t)r.files[i].size));
        atomic_fetch_add(&j->files_total, r.n_files);
        atomic_fetch_add(&j->files_done, r.n_files);
    } else {
        snprintf(why, cap, "node [%s] answered a corrupt snapshot shard response", loc->node_id);
    }
    sc_arena_fini(&a);
    free(out);
    return st;
}
