/* `scry load`: bulk-loads an NDJSON file (plain documents one per line, or _bulk format with
 * action lines) into a running server through the HTTP _bulk API with libcurl. Reads plain,
 * gzip (.gz) or zstd (.zst) files; shows a progress line (docs/s, MB/s, ETA); retries 429
 * rejections with backoff; prints a summary. With --conns N, N sender threads (one libcurl
 * handle each) keep N _bulk requests in flight while the reader cuts the next batches; the
 * batches then reach the server in no fixed order. */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "base/clock.h"
#include "base/vec.h"
#include "cmd/serve.h"

typedef struct reader {
    FILE *f;        /* zstd / raw position */
    gzFile gz;      /* plain and gzip */
    ZSTD_DCtx *zd;
    unsigned char *zin;
    size_t zin_cap;
    ZSTD_inBuffer in;
    bool eof;
} reader;

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static bool reader_open(reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    if (ends_with(path, ".zst") || ends_with(path, ".zstd")) {
        r->f = fopen(path, "rb");
        if (!r->f)
            return false;
        r->zd = ZSTD_createDCtx();
        r->zin_cap = ZSTD_DStreamInSize();
        r->zin = malloc(r->zin_cap);
        r->in.src = r->zin;
        return r->zd && r->zin;
    }
    r->gz = gzopen(path, "rb");
    if (r->gz)
        gzbuffer(r->gz, 1 << 20);
    return r->gz != NULL;
}

/* Reads up to cap bytes; 0 at end; -1 on error. */
static long reader_read(reader *r, unsigned char *buf, size_t cap)
{
    if (r->gz) {
        int n = gzread(r->gz, buf, (unsigned)cap);
        return n;
    }
    ZSTD_outBuffer out = {buf, cap, 0};
    while (out.pos == 0) {
        if (r->in.pos == r->in.size) {
            if (r->eof)
                return 0;
            size_t n = fread(r->zin, 1, r->zin_cap, r->f);
            if (n == 0) {
                r->eof = true;
                return 0;
            }
            r->in.size = n;
            r->in.pos = 0;
        }
        size_t rc = ZSTD_decompressStream(r->zd, &out, &r->in);
        if (ZSTD_isError(rc))
            return -1;
    }
    return (long)out.pos;
}

/* Compressed bytes consumed so far (for the ETA). */
static long long reader_pos(reader *r)
{
    if (r->gz)
        return (long long)gzoffset(r->gz);
    return r->f ? (long long)ftell(r->f) : 0;
}

static void reader_close(reader *r)
{
    if (r->gz)
        gzclose(r->gz);
    if (r->f)
        fclose(r->f);
    ZSTD_freeDCtx(r->zd);
    free(r->zin);
}

typedef struct load_state {
    CURL *curl;
    sc_buf resp;
    unsigned long long docs_sent, docs_failed, bytes_sent, retries, requests;
    char first_error[512];
} load_state;

/* Batches cut by the reader wait here for a sender; at most cap wait, so the reader stays at
 * most cap batches ahead of the senders. */
#define LOAD_MAX_CONNS 64
typedef struct batch {
    sc_buf body;
    size_t n_docs;
} batch;

typedef struct load_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv_item, cv_space;
    batch items[LOAD_MAX_CONNS];
    size_t head, len, cap;
    bool closed;      /* the reader is done: senders drain and exit */
    bool failed;      /* a sender met a fatal error: the reader stops */
    load_state total; /* the senders' counters, added after each request */
} load_queue;

typedef struct sender {
    pthread_t thread;
    load_queue *q;
    load_state s;
    struct curl_slist *hdrs;
    bool ok;
} sender;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    sc_buf *b = ud;
    size_t n = size * nmemb;
    if (sc_vec_append(b, (unsigned char *)ptr, n) != SC_OK)
        return 0;
    return n;
}

/* Sends one _bulk body; counts failed items. Returns false on a fatal error. */
static bool send_bulk(load_state *s, const sc_buf *body, size_t n_docs)
{
    long status = 0;
    for (int attempt = 0;; attempt++) {
        sc_vec_clear(&s->resp);
        curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, body->ptr);
        curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
        CURLcode rc = curl_easy_perform(s->curl);
        s->requests++;
        if (rc != CURLE_OK) {
            if (attempt < 5) {
                s->retries++;
                usleep(200000u << attempt);
                continue;
            }
            fprintf(stderr, "\nscry load: request failed: %s\n", curl_easy_strerror(rc));
            return false;
        }
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status == 429 || status == 503) {
            s->retries++;
            usleep(100000u << (attempt < 6 ? attempt : 6));
            continue;
        }
        break;
    }
    s->docs_sent += n_docs;
    s->bytes_sent += body->len;
    if (status != 200) {
        s->docs_failed += n_docs;
        if (!s->first_error[0])
            snprintf(s->first_error, sizeof s->first_error, "HTTP %ld: %.*s", status,
                     (int)(s->resp.len < 400 ? s->resp.len : 400), (const char *)s->resp.ptr);
        return status < 500;
    }
    /* Quick check before parsing: only parse when errors is true. */
    if (s->resp.len && memmem(s->resp.ptr, s->resp.len < 64 ? s->resp.len : 64,
                              "\"errors\":true", 13)) {
        json_error_t jerr;
        json_t *r = json_loadb((const char *)s->resp.ptr, s->resp.len, 0, &jerr);
        json_t *items = json_object_get(r, "items");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            const char *k;
            json_t *v;
            json_object_foreach(it, k, v)
            {
                json_t *e = json_object_get(v, "error");
                if (e) {
                    s->docs_failed++;
                    if (!s->first_error[0]) {
                        char *txt = json_dumps(e, JSON_COMPACT);
                        snprintf(s->first_error, sizeof s->first_error, "%s", txt ? txt : "?");
                        free(txt);
                    }
                }
            }
        }
        json_decref(r);
    }
    return true;
}

/* Adds one sender's counters since the last call to the queue's totals. */
static void add_totals(load_queue *q, load_state *s, const load_state *before)
{
    pthread_mutex_lock(&q->mu);
    q->total.docs_sent += s->docs_sent - before->docs_sent;
    q->total.docs_failed += s->docs_failed - before->docs_failed;
    q->total.bytes_sent += s->bytes_sent - before->bytes_sent;
    q->total.retries += s->retries - before->retries;
    q->total.requests += s->requests - before->requests;
    if (!q->total.first_error[0] && s->first_error[0])
        memcpy(q->total.first_error, s->first_error, sizeof s->first_error);
    pthread_mutex_unlock(&q->mu);
}

static void *sender_main(void *arg)
{
    sender *w = arg;
    load_queue *q = w->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (q->len == 0 && !q->closed && !q->failed)
            pthread_cond_wait(&q->cv_item, &q->mu);
        if (q->len == 0 || q->failed) {
            pthread_mutex_unlock(&q->mu);
            break;
        }
        batch b = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        pthread_cond_signal(&q->cv_space);
        pthread_mutex_unlock(&q->mu);

        load_state before = w->s;
        bool ok = send_bulk(&w->s, &b.body, b.n_docs);
        sc_vec_free(&b.body);
        add_totals(q, &w->s, &before);
        if (!ok) {
            w->ok = false;
            pthread_mutex_lock(&q->mu);
            q->failed = true;
            pthread_cond_broadcast(&q->cv_space);
            pthread_cond_broadcast(&q->cv_item);
            pthread_mutex_unlock(&q->mu);
            break;
        }
    }
    return NULL;
}

/* Hands a batch to the senders (takes body's memory, leaves *body empty); false once a sender
 * has failed. */
static bool queue_push(load_queue *q, sc_buf *body, size_t n_docs)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == q->cap && !q->failed)
        pthread_cond_wait(&q->cv_space, &q->mu);
    bool ok = !q->failed;
    if (ok) {
        q->items[(q->head + q->len) % q->cap] = (batch){*body, n_docs};
        q->len++;
        memset(body, 0, sizeof *body);
        pthread_cond_signal(&q->cv_item);
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

static void progress(load_state *s, uint64_t t0, long long pos, long long total, bool final)
{
    double secs = (double)(sc_clock_now_ns() - t0) / 1e9;
    if (secs <= 0)
        secs = 1e-9;
    double dps = (double)s->docs_sent / secs;
    double mbps = (double)s->bytes_sent / secs / (1024 * 1024);
    char eta[32] = "-";
    if (total > 0 && pos > 0 && !final) {
        double left = secs * (double)(total - pos) / (double)pos;
        snprintf(eta, sizeof eta, "%.0fs", left);
    }
    fprintf(stderr, "\r%llu docs  %.0f docs/s  %.1f MB  %.1f MB/s  ETA %s   ", s->docs_sent,
            dps, (double)s->bytes_sent / (1024 * 1024), mbps, eta);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

static void load_usage(FILE *f)
{
    fprintf(f, "usage: scry load --index NAME FILE.ndjson[.gz|.zst] [options]\n"
               "  --url URL          server (default http://127.0.0.1:9200)\n"
               "  --batch-docs N     documents per _bulk request (default 5000)\n"
               "  --batch-mb N       max MB per _bulk request (default 8)\n"
               "  --conns N          _bulk requests in flight (default 1; with more, batches\n"
               "                     reach the server in no fixed order)\n"
               "  --refresh          refresh the index at the end\n"
               "  --quiet            no progress line\n"
               "FILE holds either one JSON document per line or _bulk format (action lines).\n");
}

int sc_cmd_load(int argc, char **argv)
{
    const char *index = NULL, *file = NULL, *url = "http://127.0.0.1:9200";
    long batch_docs = 5000, batch_mb = 8, conns = 1;
    bool refresh = false, quiet = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            load_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--refresh")) {
            refresh = true;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else if (a[0] == '-' && a[1] == '-' && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(a, "--index"))
                index = v;
            else if (!strcmp(a, "--url"))
                url = v;
            else if (!strcmp(a, "--batch-docs"))
                batch_docs = strtol(v, NULL, 10);
            else if (!strcmp(a, "--batch-mb"))
                batch_mb = strtol(v, NULL, 10);
            else if (!strcmp(a, "--conns"))
                conns = strtol(v, NULL, 10);
            else {
                fprintf(stderr, "scry load: unknown option %s\n", a);
                load_usage(stderr);
                return 2;
            }
        } else if (a[0] != '-' && !file) {
            file = a;
        } else {
            fprintf(stderr, "scry load: unexpected argument %s\n", a);
            load_usage(stderr);
            return 2;
        }
    }
    if (!index || !file || batch_docs <= 0 || batch_mb <= 0 || conns <= 0 ||
        conns > LOAD_MAX_CONNS) {
        load_usage(stderr);
        return 2;
    }
    reader r;
    if (!reader_open(&r, file)) {
        fprintf(stderr, "scry load: cannot open %s: %s\n", file, strerror(errno));
        reader_close(&r);
        return 1;
    }
    struct stat stt;
    long long total = stat(file, &stt) == 0 ? (long long)stt.st_size : 0;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    char bulk_url[2048];
    snprintf(bulk_url, sizeof bulk_url, "%s/%s/_bulk", url, index);
    load_queue q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv_item, NULL);
    pthread_cond_init(&q.cv_space, NULL);
    q.cap = (size_t)conns;
    sender *senders = calloc((size_t)conns, sizeof *senders);
    long n_started = 0;
    for (long i = 0; senders && i < conns; i++) {
        sender *w = &senders[i];
        w->q = &q;
        w->ok = true;
        w->s.curl = curl_easy_init();
        w->hdrs = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
        w->hdrs = curl_slist_append(w->hdrs, "Expect:");
        if (!w->s.curl || !w->hdrs)
            break;
        curl_easy_setopt(w->s.curl, CURLOPT_URL, bulk_url);
        curl_easy_setopt(w->s.curl, CURLOPT_HTTPHEADER, w->hdrs);
        curl_easy_setopt(w->s.curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(w->s.curl, CURLOPT_WRITEDATA, &w->s.resp);
        curl_easy_setopt(w->s.curl, CURLOPT_TCP_KEEPALIVE, 1L);
        if (pthread_create(&w->thread, NULL, sender_main, w) != 0)
            break;
        n_started++;
    }

    sc_buf body = {0}, pending = {0};
    unsigned char *chunk = malloc(1 << 20);
    int format = -1; /* -1 unknown, 0 documents, 1 bulk */
    size_t batch_n = 0;
    bool ok = chunk != NULL && n_started == conns;
    uint64_t t0 = sc_clock_now_ns(), last = 0;
    static const char action[] = "{\"index\":{}}\n";
    while (ok) {
        long n = reader_read(&r, chunk, 1 << 20);
        if (n < 0) {
            fprintf(stderr, "\nscry load: cannot decompress %s\n", file);
            ok = false;
            break;
        }
        if (n > 0 && sc_vec_append(&pending, chunk, (size_t)n) != SC_OK) {
            ok = false;
            break;
        }
        size_t start = 0;
        for (;;) {
            unsigned char *nl = memchr(pending.ptr + start, '\n', pending.len - start);
            size_t end;
            if (nl)
                end = (size_t)(nl - pending.ptr);
            else if (n == 0 && start < pending.len)
                end = pending.len;
            else
                break;
            const unsigned char *line = pending.ptr + start;
            size_t len = end - start;
            start = end + (nl ? 1 : 0);
            while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
                len--;
            if (len == 0)
                continue;
            if (format < 0) {
                json_error_t jerr;
                json_t *v = json_loadb((const char *)line, len, 0, &jerr);
                format = 0;
                if (json_is_object(v) && json_object_size(v) == 1 &&
                    (json_object_get(v, "index") || json_object_get(v, "create") ||
                     json_object_get(v, "delete") || json_object_get(v, "update")))
                    format = 1;
                json_decref(v);
            }
            bool is_action = false;
            if (format == 1) {
                /* In bulk format, a batch may only be cut before an action line; count
                 * actions as documents. */
                is_action = len > 2 && line[0] == '{' &&
                            (memmem(line, len < 16 ? len : 16, "\"index\"", 7) ||
                             memmem(line, len < 16 ? len : 16, "\"create\"", 8) ||
                             memmem(line, len < 16 ? len : 16, "\"delete\"", 8) ||
                             memmem(line, len < 16 ? len : 16, "\"update\"", 8));
            }
            if ((format == 0 || is_action) &&
                (batch_n >= (size_t)batch_docs ||
                 body.len >= (size_t)batch_mb * 1024 * 1024)) {
                if (!queue_push(&q, &body, batch_n)) {
                    ok = false;
                    break;
                }
                sc_vec_clear(&body);
                batch_n = 0;
            }
            if (format == 0) {
                if (sc_vec_append(&body, (const unsigned char *)action, sizeof action - 1) !=
                    SC_OK) {
                    ok = false;
                    break;
                }
                batch_n++;
            } else if (is_action) {
                batch_n++;
            }
            if (sc_vec_append(&body, line, len) != SC_OK || sc_vec_push(&body, '\n') != SC_OK) {
                ok = false;
                break;
            }
            uint64_t now = sc_clock_now_ns();
            if (!quiet && now - last > 500000000ull) {
                pthread_mutex_lock(&q.mu);
                load_state snap = q.total;
                pthread_mutex_unlock(&q.mu);
                progress(&snap, t0, reader_pos(&r), total, false);
                last = now;
            }
        }
        memmove(pending.ptr, pending.ptr + start, pending.len - start);
        pending.len -= start;
        if (n == 0)
            break;
    }
    if (ok && batch_n)
        ok = queue_push(&q, &body, batch_n);
    pthread_mutex_lock(&q.mu);
    q.closed = true;
    pthread_cond_broadcast(&q.cv_item);
    pthread_mutex_unlock(&q.mu);
    for (long i = 0; i < n_started; i++) {
        pthread_join(senders[i].thread, NULL);
        ok = ok && senders[i].ok;
    }
    for (size_t i = 0; i < q.len; i++) /* left after a sender's failure */
        sc_vec_free(&q.items[(q.head + i) % q.cap].body);
    load_state s = q.total;
    if (ok && refresh && senders) {
        s.curl = senders[0].s.curl;
        char rurl[2100];
        snprintf(rurl, sizeof rurl, "%s/%s/_refresh", url, index);
        sc_buf resp = {0};
        curl_easy_setopt(s.curl, CURLOPT_WRITEDATA, &resp);
        curl_easy_setopt(s.curl, CURLOPT_URL, rurl);
        curl_easy_setopt(s.curl, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(s.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        curl_easy_perform(s.curl);
        sc_vec_free(&resp);
    }
    if (!quiet)
        progress(&s, t0, total, total, true);
    double secs = (double)(sc_clock_now_ns() - t0) / 1e9;
    fprintf(stderr,
            "loaded %llu documents (%llu failed) into [%s] in %.1fs: %.0f docs/s, %.1f MB/s, "
            "%llu requests, %llu retries\n",
            s.docs_sent - s.docs_failed, s.docs_failed, index, secs,
            secs > 0 ? (double)s.docs_sent / secs : 0,
            secs > 0 ? (double)s.bytes_sent / secs / (1024 * 1024) : 0, s.requests, s.retries);
    if (s.first_error[0])
        fprintf(stderr, "first error: %s\n", s.first_error);
    free(chunk);
    sc_vec_free(&body);
    sc_vec_free(&pending);
    for (long i = 0; senders && i < conns; i++) {
        sc_vec_free(&senders[i].s.resp);
        curl_slist_free_all(senders[i].hdrs);
        if (senders[i].s.curl)
            curl_easy_cleanup(senders[i].s.curl);
    }
    free(senders);
    pthread_cond_destroy(&q.cv_space);
    pthread_cond_destroy(&q.cv_item);
    pthread_mutex_destroy(&q.mu);
    curl_global_cleanup();
    reader_close(&r);
    return ok && s.docs_failed == 0 ? 0 : 1;
}
