/* Repository files of fs snapshots (see snaprepo.h): the checksummed JSON documents (root and
 * manifests) with their structural checks, and the content-addressed blob store. */
#include "cluster/snaprepo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/file.h"

#define FOOTER_TAG "scry-checksum "
#define FOOTER_LEN (1 + 14 + 16 + 1) /* "\n" tag hex16 "\n" */

sc_status sc_snaprepo_encode(const json_t *v, char **out, size_t *len)
{
    *out = NULL;
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return SC_ENOMEM;
    size_t n = strlen(text);
    char *buf = malloc(n + FOOTER_LEN + 1);
    if (!buf) {
        free(text);
        return SC_ENOMEM;
    }
    memcpy(buf, text, n);
    snprintf(buf + n, FOOTER_LEN + 1, "\n" FOOTER_TAG "%016" PRIx64 "\n", sc_checksum(text, n));
    free(text);
    *out = buf;
    *len = n + FOOTER_LEN;
    return SC_OK;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Checks the footer and parses the JSON before it. */
static sc_status decode_file(const uint8_t *data, size_t len, json_t **out, const char **why)
{
    *out = NULL;
    if (len < FOOTER_LEN + 2) {
        *why = "file too short (truncated?)";
        return SC_ECORRUPT;
    }
    const uint8_t *f = data + len - FOOTER_LEN;
    if (f[0] != '\n' || memcmp(f + 1, FOOTER_TAG, 14) != 0 || f[FOOTER_LEN - 1] != '\n') {
        *why = "no checksum line at the end (truncated?)";
        return SC_ECORRUPT;
    }
    uint64_t want = 0;
    for (int i = 0; i < 16; i++) {
        int h = hexval(f[15 + i]);
        if (h < 0) {
            *why = "bad checksum line";
            return SC_ECORRUPT;
        }
        want = want << 4 | (uint64_t)h;
    }
    size_t body = len - FOOTER_LEN;
    if (sc_checksum(data, body) != want) {
        *why = "checksum mismatch";
        return SC_ECORRUPT;
    }
    json_error_t jerr;
    *out = json_loadb((const char *)data, body, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out) {
        *why = "not valid JSON";
        return SC_ECORRUPT;
    }
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        *why = "not a JSON object";
        return SC_ECORRUPT;
    }
    return SC_OK;
}

bool sc_snaprepo_uuid_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 23)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

bool sc_snaprepo_file_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 200 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

static bool hex_ok(const char *s)
{
    if (!s || strlen(s) != SC_SNAPREPO_BLOB_HEX)
        return false;
    for (size_t i = 0; i < SC_SNAPREPO_BLOB_HEX; i++)
        if (hexval((uint8_t)s[i]) < 0)
            return false;
    return true;
}

static bool int_ge0(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static bool state_ok(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "state"));
    return s && (!strcmp(s, "SUCCESS") || !strcmp(s, "PARTIAL") || !strcmp(s, "FAILED"));
}

static bool head_ok(const json_t *o, const char **why)
{
    const json_t *f = json_object_get(o, "format");
    if (!json_is_integer(f) || json_integer_value(f) != SC_SNAPREPO_FORMAT) {
        *why = "unknown format";
        return false;
    }
    return true;
}

/* number_of_shards of normalized settings {"index":{"number_of_shards":"N"}}; 0 when bad. */
static int64_t settings_shards(const json_t *meta)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(meta, "settings"), "index"),
                                      "number_of_shards");
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) > 6)
        return 0;
    int64_t n = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        n = n * 10 + (*p - '0');
    }
    return n;
}

static bool shard_ok(const json_t *sh, const char **why)
{
    const json_t *files = json_object_get(sh, "files");
    if (!json_is_object(sh) || !int_ge0(sh, "n_docs") || !json_is_array(files)) {
        *why = "bad shard entry";
        return false;
    }
    const json_t *fail = json_object_get(sh, "failure");
    if (fail && !json_is_string(fail)) {
        *why = "bad shard failure";
        return false;
    }
    size_t i;
    const json_t *f;
    json_array_foreach (files, i, f) {
        if (!json_is_object(f) ||
            !sc_snaprepo_file_name_ok(json_string_value(json_object_get(f, "name"))) ||
            !hex_ok(json_string_value(json_object_get(f, "blob"))) || !int_ge0(f, "size")) {
            *why = "bad file entry";
            return false;
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(files, k), "name")),
                        json_string_value(json_object_get(f, "name")))) {
                *why = "file listed twice";
                return false;
            }
    }
    return true;
}

static bool manifest_ok(const json_t *m, const char **why)
{
    if (!head_ok(m, why))
        return false;
    const json_t *indices = json_object_get(m, "indices");
    const json_t *failures = json_object_get(m, "failures");
    if (!json_is_string(json_object_get(m, "snapshot")) ||
        !sc_snaprepo_uuid_ok(json_string_value(json_object_get(m, "uuid"))) || !state_ok(m) ||
        !int_ge0(m, "start_time_ms") || !int_ge0(m, "end_time_ms") || !json_is_object(indices) ||
        (failures && !json_is_array(failures))) {
        *why = "bad snapshot header";
        return false;
    }
    const char *name;
    const json_t *ix;
    json_object_foreach ((json_t *)indices, name, ix) {
        const json_t *meta = json_object_get(ix, "meta");
        const json_t *shards = json_object_get(ix, "shards");
        if (!*name || strlen(name) > 255 || !json_is_object(meta) || !json_is_array(shards) ||
            !json_is_object(json_object_get(meta, "settings"))) {
            *why = "bad index entry";
            return false;
        }
        const json_t *mappings = json_object_get(meta, "mappings");
        const json_t *aliases = json_object_get(meta, "aliases");
        if ((mappings && !json_is_object(mappings)) || (aliases && !json_is_object(aliases))) {
            *why = "bad index metadata";
            return false;
        }
        int64_t ns = settings_shards(meta);
        if (ns < 1 || ns > 1024 || (size_t)ns != json_array_size(shards)) {
            *why = "shard count differs from the index settings";
            return false;
        }
        size_t i;
        const json_t *sh;
        json_array_foreach (shards, i, sh) {
            if (!shard_ok(sh, why))
                return false;
        }
    }
    return true;
}

static bool root_ok(const json_t *r, const char **why)
{
    if (!head_ok(r, why))
        return false;
    const json_t *snaps = json_object_get(r, "snapshots");
    if (!int_ge0(r, "generation") || !json_is_array(snaps)) {
        *why = "bad root header";
        return false;
    }
    size_t i;
    const json_t *s;
    json_array_foreach (snaps, i, s) {
        const json_t *indices = json_object_get(s, "indices");
        const json_t *shards = json_object_get(s, "shards");
        if (!json_is_object(s) || !json_is_string(json_object_get(s, "snapshot")) ||
            !sc_snaprepo_uuid_ok(json_string_value(json_object_get(s, "uuid"))) || !state_ok(s) ||
            !int_ge0(s, "start_time_ms") || !int_ge0(s, "end_time_ms") || !json_is_array(indices) ||
            !json_is_object(shards) || !int_ge0(shards, "total") || !int_ge0(shards, "failed") ||
            !int_ge0(shards, "successful")) {
            *why = "bad snapshot entry";
            return false;
        }
        size_t k;
        const json_t *nm;
        json_array_foreach (indices, k, nm) {
            if (!json_is_string(nm)) {
                *why = "bad index name";
                return false;
            }
        }
        for (k = 0; k < i; k++) {
            const json_t *o = json_array_get(snaps, k);
            if (!strcmp(json_string_value(json_object_get(o, "snapshot")),
                        json_string_value(json_object_get(s, "snapshot"))) ||
                !strcmp(json_string_value(json_object_get(o, "uuid")),
                        json_string_value(json_object_get(s, "uuid")))) {
                *why = "snapshot listed twice";
                return false;
            }
        }
    }
    return true;
}

sc_status sc_snaprepo_manifest_decode(const uint8_t *data, size_t len, json_t **out,
                                      const char **why)
{
    SC_TRY(decode_file(data, len, out, why));
    if (!manifest_ok(*out, why)) {
        json_decref(*out);
        *out = NULL;
        return SC_ECORRUPT;
    }
    return SC_OK;
}

sc_status sc_snaprepo_root_decode(const uint8_t *data, size_t len, json_t **out, const char **why)
{
    SC_TRY(decode_file(data, len, out, why));
    if (!root_ok(*out, why)) {
        json_decref(*out);
        *out = NULL;
        return SC_ECORRUPT;
    }
    return SC_OK;
}

/* ---- files ---- */

static sc_status write_doc(const char *path, const json_t *v)
{
    char *buf;
    size_t len;
    SC_TRY(sc_snaprepo_encode(v, &buf, &len));
    sc_status st = sc_file_write_atomic(path, buf, len);
    free(buf);
    return st;
}

sc_status sc_snaprepo_root_read(const char *loc, json_t **root, uint64_t *gen, const char **why,
                                char file[64])
{
    *root = NULL;
    *gen = 0;
    snprintf(file, 64, "index.latest");
    char path[4096];
    snprintf(path, sizeof path, "%s/index.latest", loc);
    uint8_t *data;
    size_t len;
    sc_status st = sc_file_read_all(path, &data, &len);
    if (st == SC_ENOTFOUND || (st == SC_EIO && errno == ENOENT)) {
        *root =
            json_pack("{s:i,s:i,s:[]}", "format", SC_SNAPREPO_FORMAT, "generation", 0, "snapshots");
        return *root ? SC_OK : SC_ENOMEM;
    }
    if (st != SC_OK)
        return st;
    uint64_t g = 0;
    bool ok = len > 0 && len <= 21;
    for (size_t i = 0; ok && i < len; i++) {
        if (data[i] == '\n' && i == len - 1)
            break;
        ok = data[i] >= '0' && data[i] <= '9';
        g = g * 10 + (uint64_t)(data[i] - '0');
    }
    free(data);
    if (!ok || g == 0) {
        *why = "bad generation number";
        return SC_ECORRUPT;
    }
    snprintf(file, 64, "index-%" PRIu64, g);
    snprintf(path, sizeof path, "%s/index-%" PRIu64, loc, g);
    st = sc_file_read_all(path, &data, &len);
    if (st != SC_OK) {
        *why = "the root file named by index.latest is missing";
        return SC_ECORRUPT;
    }
    st = sc_snaprepo_root_decode(data, len, root, why);
    free(data);
    if (st == SC_OK && (uint64_t)json_integer_value(json_object_get(*root, "generation")) != g) {
        json_decref(*root);
        *root = NULL;
        *why = "generation differs from its file name";
        return SC_ECORRUPT;
    }
    if (st == SC_OK)
        *gen = g;
    return st;
}

sc_status sc_snaprepo_root_write(const char *loc, json_t *root, uint64_t gen)
{
    json_object_set_new(root, "format", json_integer(SC_SNAPREPO_FORMAT));
    json_object_set_new(root, "generation", json_integer((json_int_t)gen));
    char path[4096], num[32];
    snprintf(path, sizeof path, "%s/index-%" PRIu64, loc, gen);
    SC_TRY(write_doc(path, root));
    int n = snprintf(num, sizeof num, "%" PRIu64 "\n", gen);
    snprintf(path, sizeof path, "%s/index.latest", loc);
    SC_TRY(sc_file_write_atomic(path, num, (size_t)n));
    if (gen > 1) {
        snprintf(path, sizeof path, "%s/index-%" PRIu64, loc, gen - 1);
        unlink(path);
    }
    return SC_OK;
}

sc_status sc_snaprepo_manifest_read(const char *loc, const char *uuid, json_t **out,
                                    const char **why)
{
    *out = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/snap-%s.dat", loc, uuid);
    uint8_t *data;
    size_t len;
    sc_status st = sc_file_read_all(path, &data, &len);
    if (st != SC_OK)
        return access(path, F_OK) != 0 ? SC_ENOTFOUND : st;
    st = sc_snaprepo_manifest_decode(data, len, out, why);
    free(data);
    return st;
}

sc_status sc_snaprepo_manifest_write(const char *loc, const char *uuid, const json_t *m)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/snap-%s.dat", loc, uuid);
    return write_doc(path, m);
}

/* ---- blobs ---- */

static void hex128(XXH128_hash_t h, char hex[SC_SNAPREPO_BLOB_HEX + 1])
{
    snprintf(hex, SC_SNAPREPO_BLOB_HEX + 1, "%016" PRIx64 "%016" PRIx64, (uint64_t)h.high64,
             (uint64_t)h.low64);
}

static void xxh128_piece(void *xs, const uint8_t *piece, size_t len)
{
    (void)XXH3_128bits_update(xs, piece, len);
}

sc_status sc_snaprepo_hash_file(const char *path, char hex[SC_SNAPREPO_BLOB_HEX + 1],
                                uint64_t *size)
{
    XXH3_state_t *xs = XXH3_createState();
    if (!xs)
        return SC_ENOMEM;
    XXH3_128bits_reset(xs);
    sc_status st = sc_file_stream(path, 1 << 20, xxh128_piece, xs, size);
    if (st == SC_OK)
        hex128(XXH3_128bits_digest(xs), hex);
    XXH3_freeState(xs);
    return st;
}

void sc_snaprepo_blob_path(const char *loc, const char *hex, char *out, size_t cap)
{
    snprintf(out, cap, "%s/blobs/%.2s/%s", loc, hex, hex);
}

/* Copies fd_in to fd_out, hashing; fails unless exactly `want` bytes. */
static sc_status copy_fd(int in, int out, uint64_t want, XXH3_state_t *xs, const char **why)
{
    uint8_t *buf = malloc(1 << 20);
    if (!buf)
        return SC_ENOMEM;
    uint64_t total = 0;
    sc_status st = SC_OK;
    for (;;) {
        ssize_t n = read(in, buf, 1 << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = SC_EIO;
            break;
        }
        if (n == 0)
            break;
        total += (uint64_t)n;
        if (total > want)
            break;
        XXH3_128bits_update(xs, buf, (size_t)n);
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                st = SC_EIO;
                break;
            }
            off += w;
        }
        if (st != SC_OK)
            break;
    }
    free(buf);
    if (st == SC_OK && total != want) {
        *why = total > want ? "blob is longer than recorded" : "blob is shorter than recorded";
        st = SC_ECORRUPT;
    }
    if (st == SC_OK && fsync(out) != 0)
        st = SC_EIO;
    return st;
}

sc_status sc_snaprepo_blob_put(const char *loc, const char *src, const char *hex, uint64_t size,
                               bool *copied)
{
    *copied = false;
    char dst[4096], dir[4096], tmp[4200];
    sc_snaprepo_blob_path(loc, hex, dst, sizeof dst);
    struct stat sb;
    if (stat(dst, &sb) == 0 && (uint64_t)sb.st_size == size)
        return SC_OK;
    snprintf(dir, sizeof dir, "%s/blobs/%.2s", loc, hex);
    SC_TRY(sc_dir_make(dir));
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, hex);
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return SC_EIO;
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return SC_EIO;
    }
    XXH3_state_t *xs = XXH3_createState();
    const char *why = NULL;
    sc_status st = xs ? SC_OK : SC_ENOMEM;
    if (st == SC_OK) {
        XXH3_128bits_reset(xs);
        st = copy_fd(in, out, size, xs, &why);
    }
    char got[SC_SNAPREPO_BLOB_HEX + 1];
    if (st == SC_OK) {
        hex128(XXH3_128bits_digest(xs), got);
        if (strcmp(got, hex) != 0)
            st = SC_ECORRUPT; /* the source changed under us: it is not immutable */
    }
    XXH3_freeState(xs);
    close(in);
    if (close(out) != 0 && st == SC_OK)
        st = SC_EIO;
    if (st == SC_OK && rename(tmp, dst) != 0)
        st = SC_EIO;
    if (st != SC_OK)
        unlink(tmp);
    *copied = st == SC_OK;
    return st;
}

unsigned sc_snaprepo_blob_prefix(const char *hex)
{
    return (unsigned)(hexval((uint8_t)hex[0]) << 4 | hexval((uint8_t)hex[1])) & 255u;
}

sc_status sc_snaprepo_blobs_sync(const char *loc, const uint8_t touched[256])
{
    char dir[4200];
    for (unsigned p = 0; p < 256; p++) {
        if (!touched[p])
            continue;
        snprintf(dir, sizeof dir, "%s/blobs/%02x", loc, p);
        SC_TRY(sc_dir_fsync(dir));
    }
    snprintf(dir, sizeof dir, "%s/blobs", loc);
    if (sc_path_exists(dir))
        SC_TRY(sc_dir_fsync(dir));
    return sc_dir_fsync(loc);
}

sc_status sc_snaprepo_blob_get(const char *loc, const char *hex, uint64_t size, const char *dst,
                               const char **why)
{
    char src[4096];
    sc_snaprepo_blob_path(loc, hex, src, sizeof src);
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        *why = "blob is missing";
        return errno == ENOENT ? SC_ENOTFOUND : SC_EIO;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return SC_EIO;
    }
    XXH3_state_t *xs = XXH3_createState();
    sc_status st = xs ? SC_OK : SC_ENOMEM;
    if (st == SC_OK) {
        XXH3_128bits_reset(xs);
        st = copy_fd(in, out, size, xs, why);
    }
    if (st == SC_OK) {
        char got[SC_SNAPREPO_BLOB_HEX + 1];
        hex128(XXH3_128bits_digest(xs), got);
        if (strcmp(got, hex) != 0) {
            *why = "blob contents do not match their checksum";
            st = SC_ECORRUPT;
        }
    }
    XXH3_freeState(xs);
    close(in);
    if (close(out) != 0 && st == SC_OK)
        st = SC_EIO;
    if (st != SC_OK)
        unlink(dst);
    return st;
}

/* ---- garbage collection ---- */

static bool referenced(const json_t *keep, const char *hex)
{
    size_t i;
    const json_t *m;
    json_array_foreach (keep, i, m) {
        const char *name;
        const json_t *ix;
        json_object_foreach (json_object_get(m, "indices"), name, ix) {
            size_t k;
            const json_t *sh;
            json_array_foreach (json_object_get(ix, "shards"), k, sh) {
                size_t j;
                const json_t *f;
                json_array_foreach (json_object_get(sh, "files"), j, f) {
                    if (!strcmp(json_string_value(json_object_get(f, "blob")), hex))
                        return true;
                }
            }
        }
    }
    return false;
}

void sc_snaprepo_gc(const char *loc, const json_t *keep, uint64_t *n_removed)
{
    *n_removed = 0;
    char blobs[4096];
    snprintf(blobs, sizeof blobs, "%s/blobs", loc);
    DIR *top = opendir(blobs);
    if (!top)
        return;
    struct dirent *de;
    while ((de = readdir(top)) != NULL) {
        if (de->d_name[0] == '.' || strlen(de->d_name) != 2)
            continue;
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", blobs, de->d_name);
        DIR *d = opendir(sub);
        if (!d)
            continue;
        struct dirent *fe;
        while ((fe = readdir(d)) != NULL) {
            const char *nm = fe->d_name;
            if (!strcmp(nm, ".") || !strcmp(nm, ".."))
                continue;
            bool tmp = nm[0] == '.';
            if (!tmp && hex_ok(nm) && referenced(keep, nm))
                continue;
            if (!tmp && !hex_ok(nm))
                continue; /* not ours */
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", sub, nm);
            if (unlink(path) == 0)
                (*n_removed)++;
        }
        closedir(d);
        rmdir(sub); /* fails while it still holds blobs */
    }
    closedir(top);
}
