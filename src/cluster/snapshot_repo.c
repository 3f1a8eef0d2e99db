/* Snapshot repositories (see snapshot.h): the node's snapshot state, registering fs
 * repositories confined to path.repo, listing, forgetting and verifying them, and the name
 * matching and root reading the snapshot operations (snapshot.c, snapshot_restore.c) share. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/meta_store.h"
#include "cluster/snap_internal.h"
#include "cluster/snaprepo.h"

sc_status sc__snaps_open(const char *path_repo, sc__snaps **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return SC_ENOMEM;
    pthread_mutex_init(&(*out)->write_mu, NULL);
    pthread_mutex_init(&(*out)->mu, NULL);
    if (path_repo && *path_repo) {
        if (sc_dir_make(path_repo) != SC_OK)
            sc_log(SC_LOG_WARN, "snapshot", "cannot create path.repo folder");
        (*out)->path_repo = realpath(path_repo, NULL);
        if (!(*out)->path_repo)
            sc_log(SC_LOG_WARN, "snapshot", "path.repo is not usable: snapshots are off");
    }
    return SC_OK;
}

void sc__snaps_close(sc__snaps *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->write_mu);
    pthread_mutex_destroy(&s->mu);
    free(s->path_repo);
    free(s);
}

/* ---- repositories ---- */

static bool has_dotdot(const char *p)
{
    for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2) {
        bool start = c == p || c[-1] == '/';
        bool end = c[2] == '\0' || c[2] == '/';
        if (start && end)
            return true;
    }
    return false;
}

static bool under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The absolute folder of `location` (created), checked to lie under path.repo. */
static sc_status resolve_location(sc__snaps *s, const char *repo, const char *location,
                                  char out[4096], sc_cluster_error *err)
{
    if (!s->path_repo) {
        sc_cluster_error_set(err, 400, "repository_exception",
                             "[%s] location [%s] doesn't match any of the locations specified by "
                             "path.repo because this setting is empty",
                             repo, location);
        return SC_EINVAL;
    }
    char want[4096];
    if (location[0] == '/')
        snprintf(want, sizeof want, "%s", location);
    else
        snprintf(want, sizeof want, "%s/%s", s->path_repo, location);
    if (!*location || has_dotdot(want) || !under(want, s->path_repo) || strlen(want) > 3000) {
        sc_cluster_error_set(err, 400, "repository_exception",
                             "[%s] location [%s] doesn't match any of the locations specified by "
                             "path.repo",
                             repo, location);
        return SC_EINVAL;
    }
    char *real = NULL;
    if (sc_dir_make(want) == SC_OK)
        real = realpath(want, NULL);
    if (!real) {
        sc_cluster_error_set(err, 500, "repository_exception",
                             "[%s] cannot create the location [%s]: %s", repo, location,
                             strerror(errno));
        return SC_EIO;
    }
    bool ok = under(real, s->path_repo);
    snprintf(out, 4096, "%s", real);
    free(real);
    if (!ok) {
        sc_cluster_error_set(err, 400, "repository_exception",
                             "[%s] location [%s] doesn't match any of the locations specified by "
                             "path.repo",
                             repo, location);
        return SC_EINVAL;
    }
    return SC_OK;
}

sc_status sc__snap_repo_location(sc_node *n, const char *repo, char loc[4096],
                                 sc_cluster_error *err)
{
    json_t *r = sc_meta_get(n, SC_META_REPOSITORY, repo);
    if (!r) {
        sc_cluster_error_set(err, 404, "repository_missing_exception", "[%s] missing", repo);
        return SC_ENOTFOUND;
    }
    const char *location =
        json_string_value(json_object_get(json_object_get(r, "settings"), "location"));
    sc_status st = resolve_location(sc__node_snaps(n), repo, location ? location : "", loc, err);
    json_decref(r);
    return st;
}

static bool repo_name_ok(const char *repo, sc_cluster_error *err)
{
    if (!*repo || repo[0] == '_' || strpbrk(repo, " ,\"*\\<|>/?#") || strlen(repo) > 200) {
        sc_cluster_error_set(err, 400, "invalid_argument_exception", "[%s] invalid repository name",
                             repo);
        err->type = "illegal_argument_exception";
        return false;
    }
    return true;
}

sc_status sc_snapshot_repo_put(sc_node *n, const char *repo, const json_t *body,
                               sc_cluster_error *err)
{
    if (!repo_name_ok(repo, err)) /* clustered: registered in etcd for every node */
        return SC_EINVAL;
    const char *type = json_string_value(json_object_get(body, "type"));
    const json_t *settings = json_object_get(body, "settings");
    if (!json_is_object(body) || !type) {
        sc_cluster_error_set(err, 400, "action_request_validation_exception",
                             "Validation Failed: 1: type is missing;");
        return SC_EINVAL;
    }
    if (strcmp(type, "fs") != 0) {
        sc_cluster_error_set(err, 400, "repository_exception",
                             "[%s] repository type [%s] does not exist", repo, type);
        return SC_EINVAL;
    }
    const char *location = json_string_value(json_object_get(settings, "location"));
    if (settings && !json_is_object(settings)) {
        sc_cluster_error_set(err, 400, "illegal_argument_exception",
                             "[settings] must be an object");
        return SC_EINVAL;
    }
    if (!location) {
        sc_cluster_error_set(err, 400, "repository_exception", "[%s] missing location", repo);
        return SC_EINVAL;
    }
    char loc[4096];
    SC_TRY(resolve_location(sc__node_snaps(n), repo, location, loc, err));
    /* The repository must be readable now (a corrupt root is reported at registration). */
    json_t *root;
    uint64_t gen;
    const char *why = NULL;
    char file[64];
    sc_status st = sc_snaprepo_root_read(loc, &root, &gen, &why, file);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 500, "repository_exception", "[%s] cannot read [%s]: %s", repo,
                             file, why ? why : sc_status_str(st));
        return st;
    }
    json_decref(root);
    json_t *v = json_pack("{s:s,s:O}", "type", "fs", "settings", settings);
    st = sc_meta_put(n, SC_META_REPOSITORY, repo, v);
    json_decref(v);
    if (st != SC_OK)
        sc_cluster_error_set(err, 500, "exception", "cannot persist the repository [%s]", repo);
    return st;
}

/* Whether name matches one of the comma-separated names / patterns of expr (NULL, "", "_all"
 * and "*" match all); *concrete_missing names the first plain name that matched nothing. */
bool sc__snap_expr_matches(const char *expr, const char *name)
{
    if (!expr || !*expr || !strcmp(expr, "_all"))
        return true;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", expr);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "_all") || fnmatch(t, name, 0) == 0)
            return true;
    return false;
}

/* The first plain (no wildcard) name of expr not in `names` (an object or array of strings,
 * or an array of objects with key "snapshot"), copied into out; false when all are there. */
bool sc__snap_missing_name(const char *expr, const json_t *names, char *out, size_t cap)
{
    if (!expr)
        return false;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", expr);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strpbrk(t, "*?[") || !strcmp(t, "_all") || !strcmp(t, "_current"))
            continue;
        bool found = false;
        if (json_is_object(names)) {
            found = json_object_get(names, t) != NULL;
        } else {
            size_t i;
            const json_t *v;
            json_array_foreach (names, i, v) {
                const char *s = json_is_string(v)
                                    ? json_string_value(v)
                                    : json_string_value(json_object_get(v, "snapshot"));
                if (s && !strcmp(s, t))
                    found = true;
            }
        }
        if (!found) {
            snprintf(out, cap, "%s", t);
            return true;
        }
    }
    return false;
}

sc_status sc_snapshot_repo_get(sc_node *n, const char *expr, json_t **out, sc_cluster_error *err)
{
    json_t *all = sc_meta_list(n, SC_META_REPOSITORY);
    if (!all)
        return SC_ENOMEM;
    char miss[256];
    if (sc__snap_missing_name(expr, all, miss, sizeof miss)) {
        json_decref(all);
        sc_cluster_error_set(err, 404, "repository_missing_exception", "[%s] missing", miss);
        return SC_ENOTFOUND;
    }
    json_t *res = json_object();
    const char *name;
    json_t *v;
    json_object_foreach (all, name, v) {
        if (sc__snap_expr_matches(expr, name))
            json_object_set(res, name, v);
    }
    json_decref(all);
    *out = res;
    return SC_OK;
}

sc_status sc_snapshot_repo_delete(sc_node *n, const char *repo, sc_cluster_error *err)
{
    sc__snaps *s = sc__node_snaps(n);
    pthread_mutex_lock(&s->mu);
    bool busy = false;
    for (sc_snapshot_job *j = s->running; j; j = j->next)
        busy = busy || !strcmp(j->repo, repo);
    pthread_mutex_unlock(&s->mu);
    if (busy) {
        sc_cluster_error_set(err, 400, "repository_conflict_exception",
                             "[%s] trying to modify or unregister repository that is currently "
                             "used",
                             repo);
        return SC_ECONFLICT;
    }
    sc_status st = sc_meta_put(n, SC_META_REPOSITORY, repo, NULL);
    if (st == SC_ENOTFOUND)
        sc_cluster_error_set(err, 404, "repository_missing_exception", "[%s] missing", repo);
    else if (st != SC_OK)
        sc_cluster_error_set(err, 500, "exception", "cannot persist the repositories");
    return st;
}

sc_status sc_snapshot_repo_verify(sc_node *n, const char *repo, json_t **out, sc_cluster_error *err)
{
    char loc[4096];
    SC_TRY(sc__snap_repo_location(n, repo, loc, err));
    char id[24], path[4200];
    sc__random_id(id);
    snprintf(path, sizeof path, "%s/tests-%s", loc, id);
    sc_status st = sc_file_write_atomic(path, id, strlen(id));
    uint8_t *back = NULL;
    size_t len = 0;
    if (st == SC_OK)
        st = sc_file_read_all(path, &back, &len);
    bool same = st == SC_OK && len == strlen(id) && memcmp(back, id, len) == 0;
    free(back);
    unlink(path);
    if (!same) {
        sc_cluster_error_set(err, 500, "repository_verification_exception",
                             "[%s] cannot write and read back a file in the location", repo);
        return SC_EIO;
    }
    json_t *root;
    uint64_t gen;
    const char *why = NULL;
    char file[64];
    st = sc_snaprepo_root_read(loc, &root, &gen, &why, file);
    if (st != SC_OK) {
        sc_cluster_error_set(err, 500, "repository_verification_exception",
                             "[%s] cannot read [%s]: %s", repo, file,
                             why ? why : sc_status_str(st));
        return st;
    }
    json_decref(root);
    *out = json_pack("{s:{s:{s:s}}}", "nodes", sc_node_id(n), "name", sc_node_name(n));
    return *out ? SC_OK : SC_ENOMEM;
}

/* ---- the root, read for a request ---- */

sc_status sc__snap_root_read(sc_node *n, const char *repo, const char *loc, json_t **root,
                             uint64_t *gen, sc_cluster_error *err)
{
    const char *why = NULL;
    char file[64];
    sc_status st = sc_snaprepo_root_read(loc, root, gen, &why, file);
    if (st != SC_OK)
        sc_cluster_error_set(err, 500, "repository_exception",
                             "[%s] could not read repository data from [%s]: %s", repo, file,
                             why ? why : sc_status_str(st));
    (void)n;
    return st;
}
