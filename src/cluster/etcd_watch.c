/* The watch thread of the etcd client (see sc_etcd_watch_start): list the prefix, then stream
 * POST /v3/watch from the next revision, one JSON object per line; on a broken stream resume
 * from the last revision + 1, on a compaction list again. Stopping is checked by curl's
 * progress callback (called at least once a second), so stop() returns within about a second. */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base64.h"
#include "cluster/test_partition.h"
#include "cluster/etcd_internal.h"
#include "cluster/etcd_resp.h"
#include "cluster/log.h"

/* A line longer than this breaks the stream (reconnect); etcd caps values at 1.5 MiB. */
#define MAX_LINE_BYTES (16u << 20)
/* A stream silent for this long is torn down and resumed (it costs one reconnect per idle
 * period and bounds how long a hung connection goes unnoticed). */
#define IDLE_RECONNECT_S 30L

struct sc_etcd_watch {
    sc_etcd *conn; /* own connection for the listing, and the endpoint list */
    char *prefix;
    sc_etcd_reset_fn reset;
    sc_etcd_events_fn events;
    void *ctx;
    pthread_t thread;
    _Atomic bool stop;
    _Atomic int64_t last_rev;
    bool need_list;
    sc__etcd_buf line; /* the unfinished line of the stream */
};

static void nap_ms(sc_etcd_watch *w, int64_t ms)
{
    for (int64_t t = 0; t < ms && !atomic_load(&w->stop); t += 50) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Handles one complete line; false to break the stream. */
static bool on_line(sc_etcd_watch *w, const char *p, size_t n)
{
    if (n == 0)
        return true;
    sc_etcd_watch_msg m;
    if (sc_etcd_decode_watch(p, n, &m) != SC_OK) {
        sc_log(SC_LOG_WARN, "etcd", "watch: undecodable message (%zu bytes); reconnecting", n);
        return false;
    }
    bool keep = true;
    if (m.error) {
        keep = false;
    } else if (m.created && m.revision > 0 && m.revision < atomic_load(&w->last_rev)) {
        /* The store is behind what we saw: etcd lost its data (a new cluster). */
        sc_log(SC_LOG_WARN, "etcd", "watch: store revision %lld is behind %lld; listing again",
               (long long)m.revision, (long long)atomic_load(&w->last_rev));
        w->need_list = true;
        keep = false;
    } else if (m.compact_revision > 0) {
        sc_log(SC_LOG_INFO, "etcd", "watch: revision compacted (%lld); listing again",
               (long long)m.compact_revision);
        w->need_list = true;
        keep = false;
    } else if (m.canceled) {
        keep = false;
    } else if (m.n_events) {
        w->events(w->ctx, m.events, m.n_events);
        int64_t last = atomic_load(&w->last_rev);
        for (size_t i = 0; i < m.n_events; i++)
            if (m.events[i].kv.mod_revision > last)
                last = m.events[i].kv.mod_revision;
        atomic_store(&w->last_rev, last);
    }
    sc_etcd_watch_msg_fini(&m);
    return keep;
}

static size_t on_stream(char *p, size_t size, size_t nmemb, void *ud)
{
    sc_etcd_watch *w = ud;
    size_t n = size * nmemb;
    for (size_t i = 0; i < n; i++) {
        sc__etcd_buf *b = &w->line;
        if (p[i] == '\n') {
            bool ok = on_line(w, b->data ? b->data : "", b->len);
            b->len = 0;
            if (!ok)
                return 0;
            continue;
        }
        if (!b->data || b->len + 2 > b->cap) {
            if (b->len + 2 > MAX_LINE_BYTES)
                return 0;
            size_t cap = b->cap ? b->cap * 2 : 4096;
            char *d = realloc(b->data, cap);
            if (!d)
                return 0;
            b->data = d;
            b->cap = cap;
        }
        b->data[b->len++] = p[i];
        b->data[b->len] = '\0';
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    sc_etcd_watch *w = ud;
    return atomic_load(&w->stop) || sc_test_partitioned() ? 1 : 0;
}

/* The create_request body for a watch from `from`. */
static char *watch_body(const sc_etcd_watch *w, int64_t from)
{
    size_t n = strlen(w->prefix);
    char *end = malloc(n + 1);
    char *k64 = malloc(sc_base64_encoded_len(n) + 1);
    char *e64 = malloc(sc_base64_encoded_len(n + 1) + 1);
    char *body = NULL;
    if (end && k64 && e64) {
        sc_base64_encode(w->prefix, n, k64);
        sc_base64_encode(end, sc_etcd_prefix_end(w->prefix, n, end), e64);
        json_t *cr = json_object();
        json_object_set_new(cr, "key", json_string(k64));
        json_object_set_new(cr, "range_end", json_string(e64));
        char rev[32];
        snprintf(rev, sizeof rev, "%lld", (long long)from);
        json_object_set_new(cr, "start_revision", json_string(rev));
        json_object_set_new(cr, "progress_notify", json_true());
        json_t *req = json_object();
        json_object_set_new(req, "create_request", cr);
        body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
    }
    free(end);
    free(k64);
    free(e64);
    return body;
}

/* One streaming request until it breaks or stop. */
static void stream_once(sc_etcd_watch *w, CURL *h)
{
    if (sc_test_partitioned())
        return;
    char *body = watch_body(w, atomic_load(&w->last_rev) + 1);
    if (!body)
        return;
    char url[1024];
    snprintf(url, sizeof url, "%s/v3/watch", sc_etcd_endpoint(w->conn));
    curl_easy_reset(h);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, IDLE_RECONNECT_S);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, w);
    w->line.len = 0;
    CURLcode rc = curl_easy_perform(h);
    long http = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    curl_slist_free_all(hdrs);
    free(body);
    if (!atomic_load(&w->stop) && !w->need_list)
        sc_log(SC_LOG_DEBUG, "etcd", "watch stream on %s ended: %s (HTTP %ld)",
               sc_etcd_endpoint(w->conn), curl_easy_strerror(rc), http);
    /* A refused connection or an error status: try the next member next time. */
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || (http && http != 200))
        sc__etcd_rotate(w->conn);
}

/* Lists the prefix and hands it to reset; false on failure. */
static bool list_all(sc_etcd_watch *w)
{
    sc_etcd_kvs all;
    sc_etcd_error err;
    sc_status st = sc_etcd_range_prefix(w->conn, w->prefix, &all, &err);
    if (st != SC_OK) {
        sc_log(SC_LOG_DEBUG, "etcd", "watch: listing %s failed: %s (%s)", w->prefix,
               sc_status_str(st), err.message);
        return false;
    }
    w->reset(w->ctx, &all);
    atomic_store(&w->last_rev, all.revision);
    sc_etcd_kvs_fini(&all);
    w->need_list = false;
    return true;
}

static void *watch_main(void *arg)
{
    sc_etcd_watch *w = arg;
    CURL *h = curl_easy_init();
    int64_t backoff_ms = 100;
    while (h && !atomic_load(&w->stop)) {
        if (w->need_list && !list_all(w)) {
            nap_ms(w, backoff_ms);
            backoff_ms = backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2;
            continue;
        }
        int64_t before = atomic_load(&w->last_rev);
        stream_once(w, h);
        if (atomic_load(&w->stop))
            break;
        if (atomic_load(&w->last_rev) != before)
            backoff_ms = 100;
        nap_ms(w, backoff_ms);
        backoff_ms = backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2;
    }
    if (h)
        curl_easy_cleanup(h);
    return NULL;
}

sc_status sc_etcd_watch_start(const sc_etcd *e, const char *prefix, sc_etcd_reset_fn reset,
                              sc_etcd_events_fn events, void *ctx, sc_etcd_watch **out)
{
    *out = NULL;
    sc_etcd_watch *w = calloc(1, sizeof *w);
    if (!w)
        return SC_ENOMEM;
    w->prefix = strdup(prefix);
    sc_status st = w->prefix ? sc_etcd_clone(e, &w->conn) : SC_ENOMEM;
    if (st != SC_OK) {
        free(w->prefix);
        free(w);
        return st;
    }
    w->reset = reset;
    w->events = events;
    w->ctx = ctx;
    w->need_list = true;
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        sc_etcd_free(w->conn);
        free(w->prefix);
        free(w);
        return SC_ENOMEM;
    }
    *out = w;
    return SC_OK;
}

int64_t sc_etcd_watch_revision(const sc_etcd_watch *w)
{
    return atomic_load(&((sc_etcd_watch *)w)->last_rev);
}

void sc_etcd_watch_stop(sc_etcd_watch *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, true);
    pthread_join(w->thread, NULL);
    sc_etcd_free(w->conn);
    free(w->line.data);
    free(w->prefix);
    free(w);
}
