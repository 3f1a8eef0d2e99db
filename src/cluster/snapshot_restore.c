/* Restoring indices from a snapshot (see snapshot.h): choosing and renaming the indices,
 * refusing to replace open ones, then per index building it from the snapshot's metadata,
 * copying (and verifying) every shard file from the blobs into a new index folder, and opening
 * and registering it. */
#include <fnmatch.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/snap_internal.h"
#include "cluster/snaprepo.h"

typedef struct restore_req {
    sc_node *node;
    const char *repo, *snap, *uuid;
    char loc[4096];
    bool include_aliases;
    bool has_rename;
    regex_t rename_re;
    const char *rename_to;
    char uuid_buf[24];
} restore_req;

/* Java's String.replaceAll(pattern, replacement) with $N group references (POSIX ERE). */
static bool rename_one(const restore_req *r, const char *name, char *out, size_t cap)
{
    size_t used = 0;
    const char *p = name;
    out[0] = '\0';
    regmatch_t m[10];
    bool any = false;
    while (*p || !any) {
        int eflags = p != name ? REG_NOTBOL : 0;
        if (regexec(&r->rename_re, p, 10, m, eflags) != 0)
            break;
        any = true;
        size_t pre = (size_t)m[0].rm_so;
        if (used + pre >= cap)
            return false;
        memcpy(out + used, p, pre);
        used += pre;
        for (const char *t = r->rename_to; *t; t++) {
            if ((*t == '$' && t[1] >= '0' && t[1] <= '9')) {
                int g = t[1] - '0';
                t++;
                if (m[g].rm_so < 0)
                    continue;
                size_t gl = (size_t)(m[g].rm_eo - m[g].rm_so);
                if (used + gl >= cap)
                    return false;
                memcpy(out + used, p + m[g].rm_so, gl);
                used += gl;
                continue;
            }
            if (*t == '\\' && t[1])
                t++;
            if (used + 1 >= cap)
                return false;
            out[used++] = *t;
        }
        if (m[0].rm_eo == m[0].rm_so) { /* empty match: copy one char and go on */
            if (!p[m[0].rm_eo])
                break;
            if (used + 1 >= cap)
                return false;
            out[used++] = p[m[0].rm_eo];
            p += m[0].rm_eo + 1;
        } else {
            p += m[0].rm_eo;
        }
    }
    size_t rest = strlen(p);
    if (used + rest >= cap)
        return false;
    memcpy(out + used, p, rest + 1);
    return true;
}

/* Java's class escapes (\d \w \s and their negations, outside brackets) in POSIX ERE. */
static bool java_to_ere(const char *in, char *out, size_t cap)
{
    size_t used = 0;
    for (const char *p = in; *p; p++) {
        const char *rep = NULL;
        char one[3] = {p[0], 0, 0};
        if (p[0] == '\\' && p[1]) {
            switch (p[1]) {
            case 'd': rep = "[0-9]"; break;
            case 'D': rep = "[^0-9]"; break;
            case 'w': rep = "[A-Za-z0-9_]"; break;
            case 'W': rep = "[^A-Za-z0-9_]"; break;
            case 's': rep = "[[:space:]]"; break;
            case 'S': rep = "[^[:space:]]"; break;
            default:
                one[1] = p[1];
                rep = one;
                break;
            }
            p++;
        } else {
            rep = one;
        }
        size_t n = strlen(rep);
        if (used + n >= cap)
            return false;
        memcpy(out + used, rep, n);
        used += n;
    }
    out[used] = '\0';
    return true;
}

static bool expr_has(const char *expr, const char *name, bool *excluded)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", expr);
    bool hit = false;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (t[0] == '-' && fnmatch(t + 1, name, 0) == 0)
            *excluded = true;
        else if (!strcmp(t, "_all") || fnmatch(t, name, 0) == 0)
            hit = true;
    }
    return hit;
}

/* Copies one shard's files into dir. */
static sc_status restore_shard(const restore_req *r, const json_t *sh, const char *dir,
                               const char *index, uint32_t i, sc_cluster_error *err)
{
    if (sc_dir_make(dir) != SC_OK) {
        sc_cluster_error_set(err, 500, "snapshot_restore_exception", "cannot create [%s]", dir);
        return SC_EIO;
    }
    size_t k;
    const json_t *f;
    json_array_foreach (json_object_get(sh, "files"), k, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *blob = json_string_value(json_object_get(f, "blob"));
        uint64_t size = (uint64_t)json_integer_value(json_object_get(f, "size"));
        char dst[4400];
        snprintf(dst, sizeof dst, "%s/%s", dir, name);
        const char *why = NULL;
        sc_status st = sc_snaprepo_blob_get(r->loc, blob, size, dst, &why);
        if (st != SC_OK) {
            sc_cluster_error_set(err, 500, "snapshot_restore_exception",
                                 "[%s:%s/%s] shard [%s][%u] file [%s] (blob [%s]): %s", r->repo,
                                 r->snap, r->uuid, index, i, name, blob,
                                 why ? why : sc_status_str(st));
            return st;
        }
    }
    return sc_dir_fsync(dir);
}

/* settings as saved ({"index":{...}}) without the keys an index generates. */
static json_t *clean_settings(const json_t *settings)
{
    json_t *s2 = json_deep_copy(settings);
    json_t *ixs = json_object_get(s2, "index");
    if (json_is_object(ixs)) {
        json_object_del(ixs, "uuid");
        json_object_del(ixs, "provided_name");
        json_object_del(ixs, "creation_date");
        json_object_del(ixs, "version");
    }
    return s2;
}

static sc_status restore_index(const restore_req *r, const char *src, const json_t *ixj,
                               const char *target, sc_cluster_error *err)
{
    const json_t *meta = json_object_get(ixj, "meta");
    char uuid[24];
    sc__random_id(uuid);
    json_t *settings = clean_settings(json_object_get(meta, "settings"));
    sc_index *ix;
    sc_status st = sc__index_build(r->node, target, uuid, sc_clock_wall_ms(), settings,
                                   json_object_get(meta, "mappings"), &ix, err);
    json_decref(settings);
    if (st != SC_OK)
        return st;
    if (ix->settings.number_of_shards != json_array_size(json_object_get(ixj, "shards"))) {
        sc_cluster_error_set(err, 500, "snapshot_restore_exception",
                             "[%s:%s] index [%s]: shard count differs from its settings", r->repo,
                             r->snap, src);
        atomic_store(&ix->deleted, true);
        sc_index_unref(ix);
        return SC_ECORRUPT;
    }
    const json_t *rns = json_object_get(meta, "routing_num_shards");
    if (json_is_integer(rns) && json_integer_value(rns) >= ix->settings.number_of_shards &&
        json_integer_value(rns) % ix->settings.number_of_shards == 0 &&
        json_integer_value(rns) <= 1048576)
        ix->settings.routing_num_shards = (uint32_t)json_integer_value(rns);
    const json_t *aliases = json_object_get(meta, "aliases");
    if (r->include_aliases && json_is_object(aliases)) {
        json_t *keep = json_object();
        const char *a;
        json_t *v;
        json_object_foreach ((json_t *)aliases, a, v) {
            sc_index *clash = sc_node_index(r->node, a);
            if (clash)
                sc_index_unref(clash); /* an index has that name: the alias cannot come back */
            else
                json_object_set(keep, a, v);
        }
        json_decref(ix->aliases);
        ix->aliases = keep;
    }
    st = sc_dir_make(ix->dir);
    size_t i;
    const json_t *sh;
    json_array_foreach (json_object_get(ixj, "shards"), i, sh) {
        if (st != SC_OK)
            break;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%zu", ix->dir, i);
        st = restore_shard(r, sh, dir, src, (uint32_t)i, err);
    }
    /* Clustered, the metadata goes to etcd below with where its data comes from */
    bool clustered = sc_node_cluster(r->node) != NULL;
    if (st == SC_OK &&
        (clustered ? sc__index_write_meta_local(ix) : sc__index_write_meta(ix)) != SC_OK) {
        sc_cluster_error_set(err, 500, "exception", "cannot write index metadata in [%s]", ix->dir);
        st = SC_EIO;
    }
    if (st == SC_OK)
        st = sc__index_open_shards(r->node, ix, true, err);
    if (st == SC_OK) {
        st = sc__node_register(r->node, ix);
        if (st == SC_EEXIST)
            sc_cluster_error_set(err, 400, "resource_already_exists_exception",
                                 "index [%s] already exists", target);
    }
    if (st != SC_OK) {
        atomic_store(&ix->deleted, true); /* its folder goes with the last reference */
        sc_index_unref(ix);
        return st;
    }
    if (clustered) {
        /* every node that creates the index from the cluster's metadata fills its copies of
         * the shards from the repository before opening them (sc__snap_restore_dirs) */
        json_t *mj = sc__index_meta_json(ix);
        json_object_set_new(mj, "restore",
                            json_pack("{s:s,s:s,s:s}", "repository", r->repo, "snapshot_uuid",
                                      r->uuid, "index", src));
        char *text = json_dumps(mj, JSON_COMPACT);
        json_decref(mj);
        if (text)
            sc__node_meta_changed(r->node, ix->name, text);
        free(text);
    }
    sc_log(SC_LOG_INFO, "snapshot", "restored index [%s] as [%s] from [%s:%s]", src, target,
           r->repo, r->snap);
    return SC_OK;
}

sc_status sc__snap_restore_dirs(sc_node *n, const json_t *restore, sc_index *ix,
                                sc_cluster_error *err)
{
    const char *repo = json_string_value(json_object_get(restore, "repository"));
    const char *uuid = json_string_value(json_object_get(restore, "snapshot_uuid"));
    const char *src = json_string_value(json_object_get(restore, "index"));
    if (!repo || !uuid || !src) {
        sc_cluster_error_set(err, 500, "snapshot_restore_exception",
                             "index [%s]: malformed restore source in its metadata", ix->name);
        return SC_ECORRUPT;
    }
    restore_req r = {.node = n, .repo = repo, .snap = uuid, .uuid = uuid};
    SC_TRY(sc__snap_repo_location(n, repo, r.loc, err));
    json_t *m = NULL;
    const char *why = NULL;
    sc_status st = sc_snaprepo_manifest_read(r.loc, uuid, &m, &why);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 500, "snapshot_exception",
                             "[%s/%s] cannot read the snapshot file: %s", repo, uuid,
                             why ? why : sc_status_str(st));
        return st;
    }
    const json_t *shards =
        json_object_get(json_object_get(json_object_get(m, "indices"), src), "shards");
    if (json_array_size(shards) != ix->settings.number_of_shards) {
        sc_cluster_error_set(err, 500, "snapshot_restore_exception",
                             "[%s/%s] index [%s]: not in the snapshot or another shard count", repo,
                             uuid, src);
        st = SC_ECORRUPT;
    }
    if (st == SC_OK)
        st = sc_dir_make(ix->dir);
    size_t i;
    const json_t *sh;
    json_array_foreach (shards, i, sh) {
        if (st != SC_OK)
            break;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%zu", ix->dir, i);
        st = restore_shard(&r, sh, dir, src, (uint32_t)i, err);
    }
    json_decref(m);
    if (st == SC_OK)
        sc_log(SC_LOG_INFO, "snapshot", "filled index [%s] from [%s/%s] index [%s]", ix->name, repo,
               uuid, src);
    return st;
}

/* The index names to restore (src[i] -> dst[i]); checks names and conflicts. */
static sc_status plan(restore_req *r, const json_t *m, const json_t *body, json_t *pairs,
                      sc_cluster_error *err)
{
    char expr[4096];
    if (!sc__snap_indices_expr(json_object_get(body, "indices"), expr, sizeof expr, err))
        return SC_EINVAL;
    bool ignore_unavailable = json_is_true(json_object_get(body, "ignore_unavailable"));
    const json_t *indices = json_object_get(m, "indices");
    if (expr[0] && !ignore_unavailable) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", expr);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (t[0] != '-' && !strpbrk(t, "*?[") && strcmp(t, "_all") &&
                !json_object_get(indices, t)) {
                sc_cluster_error_set(err, 404, "index_not_found_exception",
                                     "no such index [%s] in snapshot [%s:%s]", t, r->repo, r->snap);
                snprintf(err->index, sizeof err->index, "%s", t);
                return SC_ENOTFOUND;
            }
    }
    const char *name;
    const json_t *ixj;
    json_object_foreach ((json_t *)indices, name, ixj) {
        bool excluded = false;
        if (expr[0] && (!expr_has(expr, name, &excluded) || excluded))
            continue;
        char target[512];
        if (r->has_rename && !rename_one(r, name, target, sizeof target)) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "the renamed index name of [%s] is too long", name);
            return SC_EINVAL;
        }
        if (!r->has_rename)
            snprintf(target, sizeof target, "%s", name);
        if (!sc_index_name_valid(target, err))
            return SC_EINVAL;
        size_t k;
        const json_t *sh;
        json_array_foreach (json_object_get(ixj, "shards"), k, sh) {
            if (json_object_get(sh, "failure")) {
                sc_cluster_error_set(err, 400, "snapshot_restore_exception",
                                     "[%s:%s/%s] index [%s] wasn't fully snapshotted - cannot "
                                     "restore",
                                     r->repo, r->snap, r->uuid, name);
                return SC_EINVAL;
            }
        }
        if (json_object_get(pairs, target)) {
            sc_cluster_error_set(err, 400, "snapshot_restore_exception",
                                 "[%s:%s/%s] indices [%s] and [%s] are renamed into the same "
                                 "index [%s]",
                                 r->repo, r->snap, r->uuid,
                                 json_string_value(json_object_get(pairs, target)), name, target);
            return SC_EINVAL;
        }
        pthread_mutex_lock(sc__node_mu(r->node));
        bool is_alias = sc__alias_exists_locked(r->node, target);
        pthread_mutex_unlock(sc__node_mu(r->node));
        if (is_alias) {
            sc_cluster_error_set(err, 400, "invalid_index_name_exception",
                                 "Invalid index name [%s], already exists as alias", target);
            snprintf(err->index, sizeof err->index, "%s", target);
            return SC_EINVAL;
        }
        sc_index *cur = sc_node_index(r->node, target);
        bool open = cur && !atomic_load(&cur->closed);
        if (cur)
            sc_index_unref(cur);
        if (open) {
            sc_cluster_error_set(err, 400, "snapshot_restore_exception",
                                 "[%s:%s/%s] cannot restore index [%s] because an open index with "
                                 "same name already exists in the cluster. Either close or delete "
                                 "the existing index or restore the index under a different name "
                                 "by providing a rename pattern and replacement name",
                                 r->repo, r->snap, r->uuid, target);
            return SC_EEXIST;
        }
        json_object_set_new(pairs, target, json_string(name));
    }
    return SC_OK;
}

static sc_status restore_all(restore_req *r, const json_t *m, const json_t *pairs, json_t *names,
                             uint32_t *n_shards, sc_cluster_error *err)
{
    const char *target;
    const json_t *src;
    json_object_foreach ((json_t *)pairs, target, src) {
        const json_t *ixj = json_object_get(json_object_get(m, "indices"), json_string_value(src));
        sc_index *cur = sc_node_index(r->node, target);
        if (cur) { /* closed (plan refused open ones): replaced, as Elasticsearch does */
            sc_index_unref(cur);
            sc_cluster_error derr;
            if (sc_node_delete_index(r->node, target, &derr) != SC_OK) {
                *err = derr;
                return SC_EIO;
            }
        }
        SC_TRY(restore_index(r, json_string_value(src), ixj, target, err));
        json_array_append_new(names, json_string(target));
        *n_shards += (uint32_t)json_array_size(json_object_get(ixj, "shards"));
    }
    return SC_OK;
}

static sc_status read_manifest(restore_req *r, json_t **m, sc_cluster_error *err)
{
    sc__snaps *s = sc__node_snaps(r->node);
    json_t *root;
    uint64_t gen;
    pthread_mutex_lock(&s->mu);
    sc_status st = sc__snap_root_read(r->node, r->repo, r->loc, &root, &gen, err);
    pthread_mutex_unlock(&s->mu);
    if (st != SC_OK)
        return st;
    const json_t *entry = NULL;
    size_t i;
    const json_t *e;
    json_array_foreach (json_object_get(root, "snapshots"), i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "snapshot")), r->snap))
            entry = e;
    }
    if (!entry) {
        json_decref(root);
        sc_cluster_error_set(err, 404, "snapshot_missing_exception", "[%s:%s] is missing", r->repo,
                             r->snap);
        return SC_ENOTFOUND;
    }
    char *uuid = r->uuid_buf;
    snprintf(r->uuid_buf, sizeof r->uuid_buf, "%s",
             json_string_value(json_object_get(entry, "uuid")));
    r->uuid = uuid;
    json_decref(root);
    const char *why = NULL;
    st = sc_snaprepo_manifest_read(r->loc, uuid, m, &why);
    if (st != SC_OK)
        sc_cluster_error_set(err, 500, "snapshot_exception",
                             "[%s:%s/%s] cannot read the snapshot file [snap-%s.dat]: %s", r->repo,
                             r->snap, uuid, uuid,
                             st == SC_ENOTFOUND ? "it is missing"
                             : why              ? why
                                                : sc_status_str(st));
    if (st == SC_OK && strcmp(json_string_value(json_object_get(*m, "state")), "FAILED") == 0) {
        sc_cluster_error_set(err, 400, "snapshot_restore_exception",
                             "[%s:%s/%s] unsupported snapshot state [FAILED]", r->repo, r->snap,
                             uuid);
        json_decref(*m);
        *m = NULL;
        st = SC_EINVAL;
    }
    return st;
}

sc_status sc_snapshot_restore(sc_node *n, const char *repo, const char *snap, const json_t *body,
                              json_t **out, sc_cluster_error *err)
{
    if (body && !json_is_object(body)) {
        sc_cluster_error_set(err, 400, "parse_exception", "request body must be an object");
        return SC_EINVAL;
    }
    restore_req r = {.node = n, .repo = repo, .snap = snap, .include_aliases = true};
    const json_t *ia = json_object_get(body, "include_aliases");
    if (json_is_boolean(ia))
        r.include_aliases = json_is_true(ia);
    const json_t *rp = json_object_get(body, "rename_pattern");
    const json_t *rr = json_object_get(body, "rename_replacement");
    if ((rp && !json_is_string(rp)) || (rr && !json_is_string(rr)) || (!rp != !rr)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "[rename_pattern] and [rename_replacement] go together and are "
                             "strings");
        return SC_EINVAL;
    }
    if (rp) {
        char ere[2048];
        if (!java_to_ere(json_string_value(rp), ere, sizeof ere) ||
            regcomp(&r.rename_re, ere, REG_EXTENDED) != 0) {
            sc_cluster_error_set(err, 400, "illegal_argument_exception",
                                 "[rename_pattern] is not a valid regular expression");
            return SC_EINVAL;
        }
        r.has_rename = true;
        r.rename_to = json_string_value(rr);
    }
    sc_status st = sc__snap_repo_location(n, repo, r.loc, err);
    sc__snaps *s = sc__node_snaps(n);
    json_t *m = NULL, *pairs = json_object(), *names = json_array();
    uint32_t n_shards = 0;
    if (st == SC_OK) {
        pthread_mutex_lock(&s->write_mu);
        st = read_manifest(&r, &m, err);
        if (st == SC_OK)
            st = plan(&r, m, body, pairs, err);
        if (st == SC_OK)
            st = restore_all(&r, m, pairs, names, &n_shards, err);
        pthread_mutex_unlock(&s->write_mu);
    }
    if (st == SC_OK)
        *out = json_pack("{s:{s:s,s:O,s:{s:i,s:i,s:i}}}", "snapshot", "snapshot", snap, "indices",
                         names, "shards", "total", (int)n_shards, "failed", 0, "successful",
                         (int)n_shards);
    if (r.has_rename)
        regfree(&r.rename_re);
    json_decref(m);
    json_decref(pairs);
    json_decref(names);
    return st;
}
