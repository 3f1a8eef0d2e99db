/* Pinning a commit for a copy (snapshots): under the writer's lock the shard commits, then
 * hard-links the manifest and every file it references into a folder inside the shard's
 * directory. Linked files outlive merges and later commits (the shard only unlinks its own
 * names), so a copy from the folder is the commit exactly, however long it takes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "shard/internal.h"

static sc_status push_name(sc_shard_pinned *p, const char *name)
{
    char **grown = realloc(p->files, (p->n_files + 1) * sizeof *grown);
    if (!grown)
        return SC_ENOMEM;
    p->files = grown;
    p->files[p->n_files] = strdup(name);
    if (!p->files[p->n_files])
        return SC_ENOMEM;
    p->n_files++;
    return SC_OK;
}

static sc_status link_one(sc_shard *s, const char *pin, const char *name, sc_shard_pinned *p)
{
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/%s", s->dir, name);
    snprintf(to, sizeof to, "%s/%s", pin, name);
    if (link(from, to) != 0 && errno != EEXIST)
        return SC_EIO;
    return push_name(p, name);
}

static int64_t ud_int(const sc_manifest *m, const char *key)
{
    json_t *ud = json_loadb((const char *)m->user_data.ptr, m->user_data.len, 0, NULL);
    const json_t *v = json_object_get(ud, key);
    int64_t out = json_is_integer(v) ? json_integer_value(v) : 0;
    json_decref(ud);
    return out;
}

/* Links the files of the manifest just written (wlock held). */
static sc_status pin_locked(sc_shard *s, const char *pin, sc_shard_pinned *p)
{
    sc_manifest m;
    sc_manifest_init(&m);
    sc_index_error ie;
    sc_status st = sc_manifest_read(s->dir, &m, &ie);
    if (st == SC_OK)
        st = link_one(s, pin, SC_MANIFEST_FILE, p);
    for (size_t i = 0; st == SC_OK && i < m.segments.len; i++) {
        const sc_manifest_segment *ms = &m.segments.ptr[i];
        char name[SC_SEGMENT_NAME_MAX + 32];
        snprintf(name, sizeof name, "%s.seg", ms->name);
        st = link_one(s, pin, name, p);
        if (st == SC_OK && ms->del_gen) {
            snprintf(name, sizeof name, "%s_%" PRIu64 ".del", ms->name, ms->del_gen);
            st = link_one(s, pin, name, p);
        }
        p->n_docs += ms->n_docs - ms->n_deleted;
    }
    int64_t ids_gen = st == SC_OK ? ud_int(&m, "ids_gen") : 0;
    if (st == SC_OK && ids_gen > 0) {
        char name[64];
        snprintf(name, sizeof name, "ids-%" PRId64 ".dat", ids_gen);
        st = link_one(s, pin, name, p);
    }
    if (st == SC_OK)
        p->max_seq_no = ud_int(&m, "max_seq_no");
    sc_manifest_fini(&m);
    return st;
}

static bool pin_name_ok(const char *pin_name)
{
    return strncmp(pin_name, SC_SHARD_PIN_PREFIX, strlen(SC_SHARD_PIN_PREFIX)) == 0 &&
           !strchr(pin_name, '/') && strlen(pin_name) < 200;
}

sc_status sc_shard_commit_pin(sc_shard *s, const char *pin_name, sc_shard_pinned *out)
{
    memset(out, 0, sizeof *out);
    if (!pin_name_ok(pin_name))
        return SC_EINVAL;
    snprintf(out->dir, sizeof out->dir, "%s/%s", s->dir, pin_name);
    sc__shard_ignore(sc_dir_remove_all(out->dir));
    SC_TRY(sc_dir_make(out->dir));
    pthread_mutex_lock(&s->wlock);
    sc_status st = sc__shard_flush_locked(s);
    if (st == SC_OK)
        st = pin_locked(s, out->dir, out);
    pthread_mutex_unlock(&s->wlock);
    if (st != SC_OK)
        sc_shard_pinned_release(out);
    return st;
}

void sc_shard_pinned_release(sc_shard_pinned *p)
{
    if (p->dir[0])
        sc__shard_ignore(sc_dir_remove_all(p->dir));
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i]);
    free(p->files);
    memset(p, 0, sizeof *p);
}
