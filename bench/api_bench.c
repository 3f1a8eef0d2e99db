/* In-process counterpart of `scry bench run` (bench/http_overhead.sh runs both on one data
 * folder): opens the data folder of a stopped `scry serve`, reads a workload file
 * (CLASS<TAB>METHOD<TAB>PATH<TAB>BODY, the _search requests of bench/workloads/) and, per class,
 * runs its requests round-robin on T threads for D seconds in one of two modes:
 *   engine  the request is parsed and its query trees built once, up front; timed is the
 *           coordinator call alone (sc_search_run: query phase on every shard, reduce, fetch
 *           with docvalue_fields) -- what an in-process user of the engine pays;
 *   api     timed is the whole REST handler through the router (query-string and JSON body
 *           parsing, query DSL, sc_search_run, JSON response writing) -- everything but sockets.
 * Each thread warms up for 1 s, then is measured for SECONDS. Prints
 * "class<TAB>mode<TAB>threads<TAB>qps<TAB>p50_us<TAB>p99_us<TAB>requests<TAB>cpu_us_per_request"
 * per class (CPU time of the worker threads over the measured window: unlike QPS, barely
 * affected by other processes competing for the cores).
 * Usage: api_bench DATA_DIR WORKLOAD MODE THREADS SECONDS [CLASS...] */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "api/search_internal.h"
#include "base/clock.h"
#include "base/histogram.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "http/router.h"

typedef struct wreq {
    char cls[64];
    char *path; /* with query string */
    char *body;
} wreq;

typedef struct shared {
    sc_node *node;
    wreq *reqs; /* of one class */
    size_t n;
    bool engine;
    double seconds;
    _Atomic uint64_t done;
    _Atomic uint64_t cpu_us; /* CPU time of the workers over their measured windows */
    pthread_mutex_t mu;
    sc_histogram hist;
} shared;

typedef struct prepared {
    sc_search_request sr;
    sc_index **list;
    size_t n_list;
    search_parse sp;
} prepared;

static void die(const char *what)
{
    fprintf(stderr, "api_bench: %s\n", what);
    exit(2);
}

/* Fills a request the way the HTTP layer would: path, query parameters, body. */
static void make_req(sc_rest_req *req, sc_node *node, sc_arena *a, const wreq *w)
{
    memset(req, 0, sizeof *req);
    req->method = SC_REST_POST;
    req->method_str = "POST";
    req->arena = a;
    req->node = node;
    req->client_fd = -1;
    const char *q = strchr(w->path, '?');
    req->path = q ? sc_arena_strndup(a, w->path, (size_t)(q - w->path)) : w->path;
    if (q)
        sc_router_parse_query(req, q + 1, strlen(q + 1));
    req->body = sc_slice_make(w->body, strlen(w->body));
    req->content_type = "application/json";
}

/* engine mode: the request's query trees, built once in the thread's arena `a`. */
static void prepare(shared *s, const wreq *w, sc_arena *a, prepared *p)
{
    sc_rest_req req;
    make_req(&req, s->node, a, w);
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    json_error_t jerr;
    json_t *body = json_loads(w->body, 0, &jerr);
    char index[256];
    const char *slash = strchr(w->path + 1, '/');
    snprintf(index, sizeof index, "%.*s", slash ? (int)(slash - w->path - 1) : 0, w->path + 1);
    sc_cluster_error err;
    if (!body || !sc__search_parse(&req, &resp, body, &p->sp, false) ||
        sc_node_resolve(s->node, index, &p->list, &p->n_list, &err) != SC_OK)
        die("cannot parse a request or resolve its index");
    sc_query **queries = sc_arena_calloc(a, p->n_list, sizeof *queries);
    if (!queries ||
        !sc__search_build_queries(&req, &resp, p->sp.query, p->list, p->n_list, queries))
        die("cannot build a query");
    sc__search_resolve_sort(&p->sp, p->list, p->n_list);
    p->sr = (sc_search_request){.indices = p->list,
                                .queries = queries,
                                .n_indices = p->n_list,
                                .from = (uint32_t)p->sp.from,
                                .size = (uint32_t)p->sp.size,
                                .track_total_hits = p->sp.track_total_hits,
                                .timeout_ms = p->sp.timeout_ms,
                                .fetch_source = p->sp.source,
                                .dv_fields = p->sp.dv_fields,
                                .n_dv_fields = p->sp.n_dv_fields,
                                .sort = p->sp.sort,
                                .n_sort = p->sp.n_sort};
    /* p->sp borrows from body for the bench's lifetime: body is deliberately kept. */
    sc_rest_resp_fini(&resp);
}

/* user + system CPU time of the calling thread, microseconds */
static uint64_t thread_cpu_us(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void *worker(void *arg)
{
    shared *s = arg;
    sc_arena keep;
    sc_arena_init(&keep, 0);
    prepared *pre = NULL;
    if (s->engine) {
        pre = calloc(s->n, sizeof *pre);
        if (!pre)
            die("out of memory");
        for (size_t i = 0; i < s->n; i++)
            prepare(s, &s->reqs[i], &keep, &pre[i]);
    }
    sc_histogram h;
    sc_histogram_init(&h);
    static _Atomic size_t start_at;
    size_t i = atomic_fetch_add(&start_at, 7) % s->n;
    /* 1 s of warm-up (not recorded), then the measured window */
    uint64_t t_warm = sc_clock_now_ns() + 1000000000ull;
    uint64_t t_end = t_warm + (uint64_t)(s->seconds * 1e9);
    uint64_t n = 0;
    uint64_t cpu0 = 0;
    bool started = false;
    for (;;) {
        uint64_t t0 = sc_clock_now_ns();
        if (t0 >= t_end)
            break;
        bool record = t0 >= t_warm;
        if (record && !started) {
            cpu0 = thread_cpu_us();
            started = true;
        }
        sc_arena a;
        sc_arena_init(&a, 0);
        if (s->engine) {
            sc_search_response r;
            if (sc_search_run(s->node, &pre[i].sr, &a, &r) != SC_OK || r.shards_failed)
                die("a search failed (too many threads for the search pool's queue?)");
        } else {
            sc_rest_req req;
            make_req(&req, s->node, &a, &s->reqs[i]);
            sc_rest_resp resp;
            sc_rest_resp_init(&resp);
            /* as sc__http_exchange does: a response of up to 1 KiB never grows */
            if (sc_vec_reserve(&resp.body, 1024) != SC_OK)
                die("out of memory");
            sc_router_dispatch(&req, &resp);
            if (resp.status != 200) {
                fprintf(stderr, "api_bench: %s answered %d: %.*s\n", s->reqs[i].path, resp.status,
                        (int)(resp.body.len < 300 ? resp.body.len : 300),
                        (const char *)resp.body.ptr);
                exit(2);
            }
            sc_rest_resp_fini(&resp);
        }
        sc_arena_fini(&a);
        if (record) {
            sc_histogram_record(&h, (sc_clock_now_ns() - t0) / 1000);
            n++;
        }
        i = (i + 1) % s->n;
    }
    atomic_fetch_add(&s->done, n);
    if (started)
        atomic_fetch_add(&s->cpu_us, thread_cpu_us() - cpu0);
    pthread_mutex_lock(&s->mu);
    sc_histogram_merge(&s->hist, &h);
    pthread_mutex_unlock(&s->mu);
    if (pre)
        for (size_t k = 0; k < s->n; k++)
            sc_node_release(pre[k].list, pre[k].n_list);
    free(pre);
    sc_arena_fini(&keep);
    return NULL;
}

static size_t load_workload(const char *path, wreq **out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open the workload");
    size_t n = 0, cap = 0;
    wreq *v = NULL;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) > 0) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (line[len - 1] == '\n')
            line[len - 1] = '\0';
        char *cls = strtok(line, "\t"), *method = strtok(NULL, "\t"), *p = strtok(NULL, "\t"),
             *body = strtok(NULL, "");
        if (!cls || !method || !p || !body || strcmp(method, "POST") != 0 || !strstr(p, "/_search"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                die("out of memory");
        }
        snprintf(v[n].cls, sizeof v[n].cls, "%s", cls);
        v[n].path = strdup(p);
        v[n].body = strdup(body);
        n++;
    }
    free(line);
    fclose(f);
    *out = v;
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        die("usage: api_bench DATA_DIR WORKLOAD engine|api THREADS SECONDS [CLASS...]");
    sc_node_config nc = {.data_dir = argv[1]};
    sc_node *node;
    if (sc_node_open(&nc, &node) != SC_OK)
        die("cannot open the data folder");
    /* the shards recover in the background after the open: wait for them, as a client waits
     * for the health to leave red */
    for (int tries = 0;; tries++) {
        sc_index **list;
        size_t n_list;
        if (sc_node_resolve_ex(node, NULL, SC_NODE_RESOLVE_HIDDEN, &list, &n_list, NULL) != SC_OK)
            die("cannot list the indices");
        uint32_t init = 0;
        for (size_t i = 0; i < n_list; i++)
            init += sc_index_n_initializing_shards(list[i]);
        sc_node_release(list, n_list);
        if (!init)
            break;
        if (tries > 6000)
            die("shards still recovering after 10 minutes");
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    wreq *all;
    size_t n_all = load_workload(argv[2], &all);
    bool engine = strcmp(argv[3], "engine") == 0;
    int threads = atoi(argv[4]);
    double seconds = atof(argv[5]);
    if (threads < 1 || seconds <= 0)
        die("bad THREADS or SECONDS");
    for (size_t i = 0; i < n_all;) {
        size_t j = i;
        while (j < n_all && strcmp(all[j].cls, all[i].cls) == 0)
            j++;
        bool wanted = argc == 6;
        for (int a = 6; a < argc; a++)
            wanted |= strcmp(argv[a], all[i].cls) == 0;
        if (wanted) {
            shared s = {
                .node = node, .reqs = all + i, .n = j - i, .engine = engine, .seconds = seconds};
            pthread_mutex_init(&s.mu, NULL);
            sc_histogram_init(&s.hist);
            pthread_t *t = calloc((size_t)threads, sizeof *t);
            for (int k = 0; k < threads; k++)
                pthread_create(&t[k], NULL, worker, &s);
            for (int k = 0; k < threads; k++)
                pthread_join(t[k], NULL);
            free(t);
            printf("%s\t%s\t%d\t%.0f\t%llu\t%llu\t%llu\t%.1f\n", all[i].cls, argv[3], threads,
                   (double)s.done / seconds,
                   (unsigned long long)sc_histogram_percentile(&s.hist, 50),
                   (unsigned long long)sc_histogram_percentile(&s.hist, 99),
                   (unsigned long long)s.done, s.done ? (double)s.cpu_us / (double)s.done : 0.0);
            fflush(stdout);
            pthread_mutex_destroy(&s.mu);
        }
        i = j;
    }
    for (size_t i = 0; i < n_all; i++) {
        free(all[i].path);
        free(all[i].body);
    }
    free(all);
    sc_node_close(node);
    return 0;
}
