/* Decoders of etcd v3 JSON-gateway responses (see etcd_resp.h). Built on jansson; every field
 * is type-checked, so arbitrary bytes give SC_ECORRUPT or an empty result, never a crash. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "cluster/etcd_resp.h"

/* An int64 field that the gateway writes as a string (or a plain number); absent = 0. */
static bool get_i64(const json_t *obj, const char *name, int64_t *out)
{
    *out = 0;
    const json_t *v = json_object_get(obj, name);
    if (!v)
        return true;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    if (!*s)
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = (int64_t)x;
    return true;
}

static bool get_bool(const json_t *obj, const char *name)
{
    return json_is_true(json_object_get(obj, name));
}

/* Decodes a base64 string field into a NUL-terminated heap copy; absent = empty. */
static bool get_b64(const json_t *obj, const char *name, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    const json_t *v = json_object_get(obj, name);
    const char *s = "";
    size_t n = 0;
    if (v) {
        if (!json_is_string(v))
            return false;
        s = json_string_value(v);
        n = json_string_length(v);
    }
    char *buf = malloc(sc_base64_decoded_cap(n) + 1);
    if (!buf)
        return false;
    size_t len;
    if (sc_base64_decode(s, n, (uint8_t *)buf, &len) != SC_OK) {
        free(buf);
        return false;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return true;
}

void sc_etcd_kv_fini(sc_etcd_kv *kv)
{
    free(kv->key);
    free(kv->value);
    memset(kv, 0, sizeof *kv);
}

void sc_etcd_kvs_fini(sc_etcd_kvs *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->len; i++)
        sc_etcd_kv_fini(&r->kvs[i]);
    free(r->kvs);
    memset(r, 0, sizeof *r);
}

void sc_etcd_txn_result_fini(sc_etcd_txn_result *r)
{
    if (r)
        sc_etcd_kvs_fini(&r->range);
}

void sc_etcd_watch_msg_fini(sc_etcd_watch_msg *m)
{
    for (size_t i = 0; i < m->n_events; i++)
        sc_etcd_kv_fini(&m->events[i].kv);
    free(m->events);
    memset(m, 0, sizeof *m);
}

static bool decode_kv(const json_t *o, sc_etcd_kv *kv)
{
    memset(kv, 0, sizeof *kv);
    if (!json_is_object(o))
        return false;
    if (!get_b64(o, "key", &kv->key, &kv->key_len) ||
        !get_b64(o, "value", &kv->value, &kv->value_len) ||
        !get_i64(o, "create_revision", &kv->create_revision) ||
        !get_i64(o, "mod_revision", &kv->mod_revision) || !get_i64(o, "version", &kv->version) ||
        !get_i64(o, "lease", &kv->lease)) {
        sc_etcd_kv_fini(kv);
        return false;
    }
    return true;
}

static bool header_revision(const json_t *o, int64_t *rev)
{
    const json_t *h = json_object_get(o, "header");
    if (h && !json_is_object(h))
        return false;
    return get_i64(h, "revision", rev);
}

static json_t *load(const char *buf, size_t len)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root && !json_is_object(root)) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Fills out from a RangeResponse object. */
static bool range_of(const json_t *o, sc_etcd_kvs *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(o) || !header_revision(o, &out->revision))
        return false;
    out->more = get_bool(o, "more");
    const json_t *kvs = json_object_get(o, "kvs");
    if (!kvs)
        return true;
    if (!json_is_array(kvs))
        return false;
    size_t n = json_array_size(kvs);
    if (!n)
        return true;
    out->kvs = calloc(n, sizeof *out->kvs);
    if (!out->kvs)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!decode_kv(json_array_get(kvs, i), &out->kvs[i])) {
            sc_etcd_kvs_fini(out);
            return false;
        }
        out->len = i + 1;
    }
    return true;
}

sc_status sc_etcd_decode_error(long http_status, const char *buf, size_t len, sc_etcd_error *err)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->http_status = (int)http_status;
    }
    if (http_status == 200)
        return SC_OK;
    json_t *root = load(buf, len);
    int64_t code = 0;
    const char *msg = NULL;
    if (root) {
        (void)get_i64(root, "code", &code);
        msg = json_string_value(json_object_get(root, "message"));
        if (!msg)
            msg = json_string_value(json_object_get(root, "error"));
    }
    if (err) {
        err->code = (int)code;
        snprintf(err->message, sizeof err->message, "%s",
                 msg           ? msg
                 : http_status ? "unexpected HTTP status"
                               : "no response");
    }
    json_decref(root);
    if (code == 5 || http_status == 404)
        return SC_ENOTFOUND;
    if (code == 11)
        return SC_ELIMIT;
    if (code == 4)
        return SC_ETIMEOUT;
    if (http_status >= 400 && http_status < 500 && http_status != 429)
        return SC_EINVAL;
    return SC_EIO;
}

sc_status sc_etcd_decode_range(const char *buf, size_t len, sc_etcd_kvs *out)
{
    json_t *root = load(buf, len);
    bool ok = root && range_of(root, out);
    if (!root)
        memset(out, 0, sizeof *out);
    json_decref(root);
    return ok ? SC_OK : SC_ECORRUPT;
}

sc_status sc_etcd_decode_put(const char *buf, size_t len, int64_t *revision)
{
    json_t *root = load(buf, len);
    bool ok = root && header_revision(root, revision);
    json_decref(root);
    return ok ? SC_OK : SC_ECORRUPT;
}

sc_status sc_etcd_decode_delete(const char *buf, size_t len, int64_t *deleted)
{
    json_t *root = load(buf, len);
    bool ok = root && get_i64(root, "deleted", deleted);
    json_decref(root);
    return ok ? SC_OK : SC_ECORRUPT;
}

sc_status sc_etcd_decode_txn(const char *buf, size_t len, sc_etcd_txn_result *out)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(buf, len);
    if (!root || !header_revision(root, &out->revision)) {
        json_decref(root);
        return SC_ECORRUPT;
    }
    out->succeeded = get_bool(root, "succeeded");
    const json_t *rs = json_object_get(root, "responses");
    bool ok = !rs || json_is_array(rs);
    for (size_t i = 0; ok && i < json_array_size(rs); i++) {
        const json_t *r = json_object_get(json_array_get(rs, i), "response_range");
        if (r) {
            ok = range_of(r, &out->range);
            break;
        }
    }
    json_decref(root);
    return ok ? SC_OK : SC_ECORRUPT;
}

sc_status sc_etcd_decode_lease(const char *buf, size_t len, int64_t *id, int64_t *ttl_s)
{
    *id = 0;
    *ttl_s = 0;
    json_t *root = load(buf, len);
    if (!root)
        return SC_ECORRUPT;
    const json_t *o = root;
    const json_t *res = json_object_get(root, "result");
    if (res)
        o = res;
    bool ok = json_is_object(o) && get_i64(o, "ID", id) && get_i64(o, "TTL", ttl_s);
    json_decref(root);
    return ok ? SC_OK : SC_ECORRUPT;
}

static bool decode_events(const json_t *evs, sc_etcd_watch_msg *out)
{
    if (!evs)
        return true;
    if (!json_is_array(evs))
        return false;
    size_t n = json_array_size(evs);
    if (!n)
        return true;
    out->events = calloc(n, sizeof *out->events);
    if (!out->events)
        return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *ev = json_array_get(evs, i);
        const char *type = json_string_value(json_object_get(ev, "type"));
        sc_etcd_event *e = &out->events[i];
        if (!type || !strcmp(type, "PUT"))
            e->type = SC_ETCD_EVENT_PUT;
        else if (!strcmp(type, "DELETE"))
            e->type = SC_ETCD_EVENT_DELETE;
        else
            return false;
        if (!decode_kv(json_object_get(ev, "kv"), &e->kv))
            return false;
        out->n_events = i + 1;
    }
    return true;
}

sc_status sc_etcd_decode_watch(const char *buf, size_t len, sc_etcd_watch_msg *out)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(buf, len);
    if (!root)
        return SC_ECORRUPT;
    const json_t *res = json_object_get(root, "result");
    bool ok = true;
    if (!res) {
        out->error = true;
    } else if (!json_is_object(res)) {
        ok = false;
    } else {
        out->created = get_bool(res, "created");
        out->canceled = get_bool(res, "canceled");
        ok = header_revision(res, &out->revision) &&
             get_i64(res, "compact_revision", &out->compact_revision) &&
             decode_events(json_object_get(res, "events"), out);
    }
    json_decref(root);
    if (!ok)
        sc_etcd_watch_msg_fini(out);
    return ok ? SC_OK : SC_ECORRUPT;
}

size_t sc_etcd_prefix_end(const char *prefix, size_t len, char *out)
{
    memcpy(out, prefix, len);
    while (len > 0) {
        unsigned char c = (unsigned char)out[len - 1];
        if (c < 0xff) {
            out[len - 1] = (char)(c + 1);
            return len;
        }
        len--;
    }
    out[0] = '\0';
    return 1;
}
