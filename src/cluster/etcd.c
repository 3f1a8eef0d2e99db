/* The etcd v3 JSON-gateway client: endpoints and failover, one blocking POST per call, KV,
 * txn and leases (see etcd.h). The keepalive thread is here too; the watch stream is in
 * etcd_watch.c and the response decoders in etcd_resp.c. */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/clock.h"
#include "cluster/test_partition.h"
#include "cluster/etcd_internal.h"
#include "cluster/etcd_resp.h"

/* Responses above this are refused: cluster metadata is small (etcd itself caps a request at
 * 1.5 MiB; a range over many keys can be larger, hence the margin). */
#define MAX_RESPONSE_BYTES (64u << 20)

struct sc_etcd {
    char **eps;
    size_t n_eps;
    _Atomic size_t cur;
    int64_t timeout_ms;
    pthread_mutex_t mu;
    CURL *h;
};

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void sc__etcd_curl_init(void)
{
    pthread_once(&g_curl_once, curl_init_once);
}

sc_status sc_etcd_new(const char *endpoints, int64_t timeout_ms, sc_etcd **out)
{
    *out = NULL;
    if (!endpoints || !*endpoints)
        return SC_EINVAL;
    sc__etcd_curl_init();
    sc_etcd *e = calloc(1, sizeof *e);
    char *copy = strdup(endpoints);
    if (!e || !copy) {
        free(e);
        free(copy);
        return SC_ENOMEM;
    }
    e->timeout_ms = timeout_ms > 0 ? timeout_ms : 3000;
    pthread_mutex_init(&e->mu, NULL);
    sc_status st = SC_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && st == SC_OK;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t n = strlen(tok);
        while (n && (tok[n - 1] == '/' || tok[n - 1] == ' '))
            tok[--n] = '\0';
        if (!n)
            continue;
        if (strncmp(tok, "http://", 7) != 0 && strncmp(tok, "https://", 8) != 0) {
            st = SC_EINVAL;
            break;
        }
        char **eps = realloc(e->eps, (e->n_eps + 1) * sizeof *eps);
        char *dup = strdup(tok);
        if (!eps || !dup) {
            free(dup);
            if (eps)
                e->eps = eps;
            st = SC_ENOMEM;
            break;
        }
        e->eps = eps;
        e->eps[e->n_eps++] = dup;
    }
    free(copy);
    if (st == SC_OK && !e->n_eps)
        st = SC_EINVAL;
    if (st == SC_OK && !(e->h = curl_easy_init()))
        st = SC_ENOMEM;
    if (st != SC_OK) {
        sc_etcd_free(e);
        return st;
    }
    *out = e;
    return SC_OK;
}

sc_status sc_etcd_clone(const sc_etcd *e, sc_etcd **out)
{
    size_t cap = 1;
    for (size_t i = 0; i < e->n_eps; i++)
        cap += strlen(e->eps[i]) + 1;
    char *list = malloc(cap);
    if (!list)
        return SC_ENOMEM;
    list[0] = '\0';
    for (size_t i = 0; i < e->n_eps; i++) {
        if (i)
            strcat(list, ",");
        strcat(list, e->eps[i]);
    }
    sc_status st = sc_etcd_new(list, e->timeout_ms, out);
    free(list);
    if (st == SC_OK)
        atomic_store(&(*out)->cur, atomic_load(&((sc_etcd *)e)->cur));
    return st;
}

void sc_etcd_free(sc_etcd *e)
{
    if (!e)
        return;
    if (e->h)
        curl_easy_cleanup(e->h);
    for (size_t i = 0; i < e->n_eps; i++)
        free(e->eps[i]);
    free(e->eps);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

const char *sc_etcd_endpoint(const sc_etcd *e)
{
    return e->eps[atomic_load(&((sc_etcd *)e)->cur) % e->n_eps];
}

size_t sc__etcd_n_endpoints(const sc_etcd *e)
{
    return e->n_eps;
}

void sc__etcd_rotate(sc_etcd *e)
{
    atomic_fetch_add(&e->cur, 1);
}

int64_t sc__etcd_timeout_ms(const sc_etcd *e)
{
    return e->timeout_ms;
}

void sc__etcd_set_timeout_ms(sc_etcd *e, int64_t ms)
{
    e->timeout_ms = ms > 0 ? ms : 1;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    sc__etcd_buf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n + 1 > MAX_RESPONSE_BYTES)
        return 0;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

/* One POST to one endpoint. SC_EIO/SC_ETIMEOUT: transport trouble (try another endpoint). */
static sc_status post_once(sc_etcd *e, const char *ep, const char *path, const char *body,
                           sc__etcd_buf *resp, long *http_status, sc_etcd_error *err)
{
    if (sc_test_partitioned()) {
        if (err) {
            memset(err, 0, sizeof *err);
            snprintf(err->message, sizeof err->message, "%s: cut off (test partition)", ep);
        }
        *http_status = 0;
        return SC_EIO;
    }
    char url[1024];
    snprintf(url, sizeof url, "%s%s", ep, path);
    CURL *h = e->h;
    curl_easy_reset(h);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(e->timeout_ms < 1000 ? e->timeout_ms : 1000));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
    resp->len = 0;
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    *http_status = 0;
    if (rc != CURLE_OK) {
        if (err) {
            memset(err, 0, sizeof *err);
            snprintf(err->message, sizeof err->message, "%s: %s", ep, curl_easy_strerror(rc));
        }
        return rc == CURLE_OPERATION_TIMEDOUT ? SC_ETIMEOUT : SC_EIO;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, http_status);
    return SC_OK;
}

sc_status sc__etcd_post(sc_etcd *e, const char *path, const char *body, sc__etcd_buf *resp,
                        sc_etcd_error *err)
{
    pthread_mutex_lock(&e->mu);
    sc_status st = SC_EIO;
    for (size_t attempt = 0; attempt < e->n_eps; attempt++) {
        size_t cur = atomic_load(&e->cur);
        long http = 0;
        st = post_once(e, e->eps[cur % e->n_eps], path, body, resp, &http, err);
        if (st == SC_OK) {
            st = sc_etcd_decode_error(http, resp->data ? resp->data : "", resp->len, err);
            /* 503 (no leader, unavailable): another member may answer. */
            if (http != 503)
                break;
        }
        atomic_compare_exchange_strong(&e->cur, &cur, cur + 1);
    }
    pthread_mutex_unlock(&e->mu);
    return st;
}

/* Adds the base64 of bytes to obj under name. */
static void set_b64(json_t *obj, const char *name, const void *bytes, size_t len)
{
    char *b = malloc(sc_base64_encoded_len(len) + 1);
    if (!b)
        return;
    sc_base64_encode(bytes, len, b);
    json_object_set_new(obj, name, json_string(b));
    free(b);
}

static void set_i64(json_t *obj, const char *name, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    json_object_set_new(obj, name, json_string(buf));
}

/* {"key": b64(key), "range_end": b64(end)} for a key or a prefix. */
static void set_key(json_t *obj, const char *key, bool prefix)
{
    size_t n = strlen(key);
    set_b64(obj, "key", key, n);
    if (prefix) {
        char *end = malloc(n + 1);
        if (!end)
            return;
        size_t en = sc_etcd_prefix_end(key, n, end);
        set_b64(obj, "range_end", end, en);
        free(end);
    }
}

/* POSTs a JSON object (consumed) and returns the response in resp (caller frees data). */
static sc_status call(sc_etcd *e, const char *path, json_t *req, sc__etcd_buf *resp,
                      sc_etcd_error *err)
{
    memset(resp, 0, sizeof *resp);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (!body)
        return SC_ENOMEM;
    sc_status st = sc__etcd_post(e, path, body, resp, err);
    free(body);
    return st;
}

sc_status sc_etcd_put(sc_etcd *e, const char *key, const void *value, size_t value_len,
                      int64_t lease, int64_t *revision, sc_etcd_error *err)
{
    json_t *req = json_object();
    set_key(req, key, false);
    set_b64(req, "value", value, value_len);
    if (lease)
        set_i64(req, "lease", lease);
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/kv/put", req, &resp, err);
    int64_t rev = 0;
    if (st == SC_OK)
        st = sc_etcd_decode_put(resp.data, resp.len, &rev);
    if (revision)
        *revision = rev;
    free(resp.data);
    return st;
}

/* One range request; key/range_end given raw (for pagination). */
static sc_status range_raw(sc_etcd *e, const char *key, size_t key_len, const char *end,
                           size_t end_len, int64_t revision, sc_etcd_kvs *out, sc_etcd_error *err)
{
    json_t *req = json_object();
    set_b64(req, "key", key, key_len);
    if (end)
        set_b64(req, "range_end", end, end_len);
    if (revision)
        set_i64(req, "revision", revision);
    json_object_set_new(req, "limit", json_integer(1000));
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/kv/range", req, &resp, err);
    if (st == SC_OK)
        st = sc_etcd_decode_range(resp.data, resp.len, out);
    else
        memset(out, 0, sizeof *out);
    free(resp.data);
    return st;
}

sc_status sc_etcd_get(sc_etcd *e, const char *key, sc_etcd_kvs *out, sc_etcd_error *err)
{
    return range_raw(e, key, strlen(key), NULL, 0, 0, out, err);
}

/* Appends page's kvs (moved) to all. */
static sc_status append_kvs(sc_etcd_kvs *all, sc_etcd_kvs *page)
{
    if (!page->len)
        return SC_OK;
    sc_etcd_kv *kvs = realloc(all->kvs, (all->len + page->len + 1) * sizeof *kvs);
    if (!kvs)
        return SC_ENOMEM;
    memcpy(kvs + all->len, page->kvs, page->len * sizeof *kvs);
    all->kvs = kvs;
    all->len += page->len;
    free(page->kvs);
    page->kvs = NULL;
    page->len = 0;
    return SC_OK;
}

sc_status sc_etcd_range_prefix(sc_etcd *e, const char *prefix, sc_etcd_kvs *out, sc_etcd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(prefix);
    char *end = malloc(n + 1);
    if (!end)
        return SC_ENOMEM;
    size_t en = sc_etcd_prefix_end(prefix, n, end);
    char *from = strdup(prefix);
    size_t from_len = n;
    sc_status st = from ? SC_OK : SC_ENOMEM;
    /* Pages of 1,000 keys at the first page's revision: continue from last key + "\0". */
    while (st == SC_OK) {
        sc_etcd_kvs page;
        st = range_raw(e, from, from_len, end, en, out->revision, &page, err);
        if (st != SC_OK)
            break;
        if (!out->revision)
            out->revision = page.revision;
        bool more = page.more && page.len > 0;
        if (more) {
            const sc_etcd_kv *last = &page.kvs[page.len - 1];
            char *next = malloc(last->key_len + 1);
            if (!next) {
                sc_etcd_kvs_fini(&page);
                st = SC_ENOMEM;
                break;
            }
            memcpy(next, last->key, last->key_len);
            next[last->key_len] = '\0';
            free(from);
            from = next;
            from_len = last->key_len + 1;
        }
        st = append_kvs(out, &page);
        sc_etcd_kvs_fini(&page);
        if (!more)
            break;
    }
    free(from);
    free(end);
    if (st != SC_OK)
        sc_etcd_kvs_fini(out);
    return st;
}

sc_status sc_etcd_delete(sc_etcd *e, const char *key, bool prefix, int64_t *n_deleted,
                         sc_etcd_error *err)
{
    json_t *req = json_object();
    set_key(req, key, prefix);
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/kv/deleterange", req, &resp, err);
    int64_t d = 0;
    if (st == SC_OK)
        st = sc_etcd_decode_delete(resp.data, resp.len, &d);
    if (n_deleted)
        *n_deleted = d;
    free(resp.data);
    return st;
}

static json_t *op_json(const sc_etcd_op *op)
{
    json_t *inner = json_object();
    set_key(inner, op->key, op->kind != SC_ETCD_OP_PUT && op->prefix);
    const char *name = "request_range";
    if (op->kind == SC_ETCD_OP_PUT) {
        name = "request_put";
        set_b64(inner, "value", op->value ? op->value : "", op->value_len);
        if (op->lease)
            set_i64(inner, "lease", op->lease);
    } else if (op->kind == SC_ETCD_OP_DELETE) {
        name = "request_delete_range";
    }
    json_t *o = json_object();
    json_object_set_new(o, name, inner);
    return o;
}

static json_t *ops_json(const sc_etcd_op *ops, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, op_json(&ops[i]));
    return a;
}

sc_status sc_etcd_txn(sc_etcd *e, const sc_etcd_cmp *cmp, size_t n_cmp, const sc_etcd_op *success,
                      size_t n_success, const sc_etcd_op *failure, size_t n_failure,
                      sc_etcd_txn_result *out, sc_etcd_error *err)
{
    static const char *const targets[] = {"CREATE", "MOD", "VERSION"};
    static const char *const fields[] = {"create_revision", "mod_revision", "version"};
    static const char *const results[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
    memset(out, 0, sizeof *out);
    if (n_cmp + n_success + n_failure > 128)
        return SC_ELIMIT;
    json_t *req = json_object();
    json_t *ca = json_array();
    for (size_t i = 0; i < n_cmp; i++) {
        json_t *c = json_object();
        set_key(c, cmp[i].key, false);
        json_object_set_new(c, "target", json_string(targets[cmp[i].target]));
        json_object_set_new(c, "result", json_string(results[cmp[i].result]));
        set_i64(c, fields[cmp[i].target], cmp[i].value);
        json_array_append_new(ca, c);
    }
    json_object_set_new(req, "compare", ca);
    json_object_set_new(req, "success", ops_json(success, n_success));
    json_object_set_new(req, "failure", ops_json(failure, n_failure));
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/kv/txn", req, &resp, err);
    if (st == SC_OK)
        st = sc_etcd_decode_txn(resp.data, resp.len, out);
    free(resp.data);
    return st;
}

sc_status sc_etcd_lease_grant(sc_etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_ttl_s,
                              sc_etcd_error *err)
{
    json_t *req = json_object();
    set_i64(req, "TTL", ttl_s);
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/lease/grant", req, &resp, err);
    int64_t lid = 0, ttl = 0;
    if (st == SC_OK)
        st = sc_etcd_decode_lease(resp.data, resp.len, &lid, &ttl);
    if (st == SC_OK && (lid == 0 || ttl <= 0))
        st = SC_ECORRUPT;
    free(resp.data);
    *id = lid;
    if (granted_ttl_s)
        *granted_ttl_s = ttl;
    return st;
}

sc_status sc_etcd_lease_keepalive_once(sc_etcd *e, int64_t id, int64_t *ttl_s, sc_etcd_error *err)
{
    json_t *req = json_object();
    set_i64(req, "ID", id);
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/lease/keepalive", req, &resp, err);
    int64_t lid = 0, ttl = 0;
    if (st == SC_OK)
        st = sc_etcd_decode_lease(resp.data, resp.len, &lid, &ttl);
    free(resp.data);
    *ttl_s = ttl;
    if (st == SC_OK && ttl <= 0) {
        if (err)
            snprintf(err->message, sizeof err->message, "lease %llx is gone",
                     (unsigned long long)id);
        st = SC_ENOTFOUND;
    }
    return st;
}

sc_status sc_etcd_lease_revoke(sc_etcd *e, int64_t id, sc_etcd_error *err)
{
    json_t *req = json_object();
    set_i64(req, "ID", id);
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/lease/revoke", req, &resp, err);
    free(resp.data);
    return st;
}

sc_status sc_etcd_compact(sc_etcd *e, int64_t revision, sc_etcd_error *err)
{
    json_t *req = json_object();
    set_i64(req, "revision", revision);
    json_object_set_new(req, "physical", json_true());
    sc__etcd_buf resp;
    sc_status st = call(e, "/v3/kv/compaction", req, &resp, err);
    free(resp.data);
    return st;
}
