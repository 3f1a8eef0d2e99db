/* `scry bench run`: loads a workload file, runs the validation pass (every request once, hit
 * counts recorded), then the grid: for each request class and each connection count a warm-up
 * and R measured repetitions of D seconds, and writes one JSON result file with the build,
 * machine, corpus, settings, per-cell numbers and per-query hit counts. `scry bench compare`
 * lives in bench_compare.c. */
#include "cmd/bench.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/jsonw.h"
#include "cmd/bench_internal.h"

typedef struct opts {
    const char *host;
    int port;
    const char *workload;
    const char *out;
    int conns[8];
    int n_conns;
    int threads;
    double warmup_s;
    int reps;
    double duration_s;
    int pid;
    const char *label;
    const char *build;
    const char *corpus;
    const char *only_class;
    bool no_validate;
    bool validate_only;
} opts;

typedef struct cls_list {
    char *name;
    SC_VEC(size_t) idx;
} cls_list;

typedef struct query_result {
    char *error_body; /* first bytes of an error response (owned), or NULL */
    int status;
    int64_t total; /* hits.total.value or count; -1 if absent */
    int64_t returned;
    bool error;
} query_result;

static void usage(FILE *f)
{
    fprintf(f, "usage: scry bench run --workload FILE [options]\n"
               "       scry bench compare A.json B.json\n"
               "\n"
               "run options:\n"
               "  --host H         server host (127.0.0.1)\n"
               "  --port P         server port (9200)\n"
               "  --workload FILE  requests, one per line: CLASS<TAB>METHOD<TAB>PATH<TAB>BODY\n"
               "  --conns LIST     connection counts of the grid, comma separated (1,8)\n"
               "  --threads T      client threads (min(conns, 2))\n"
               "  --warmup S       warm-up seconds per cell (2)\n"
               "  --reps R         measured repetitions per cell (3)\n"
               "  --duration S     seconds per repetition (5)\n"
               "  --pid PID        server process, for CPU time per request and peak RSS\n"
               "  --class NAME     run only this class\n"
               "  --out FILE       result JSON (bench-result.json)\n"
               "  --label TEXT --build TEXT --corpus TEXT   recorded in the result\n"
               "  --no-validate    skip the validation pass\n"
               "  --validate-only  only the validation pass\n");
}

static char *dupn(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

/* Parses the workload file into reqs; returns the count or -1. */
static long load_workload(const opts *o, bench_req **out)
{
    uint8_t *data;
    size_t len;
    if (sc_file_read_all(o->workload, &data, &len) != SC_OK) {
        fprintf(stderr, "scry bench: cannot read %s\n", o->workload);
        return -1;
    }
    SC_VEC(bench_req) v = {0};
    char *s = (char *)data, *end = s + len;
    long lineno = 0;
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        char *le = nl ? nl : end;
        lineno++;
        if (le > s && le[-1] == '\r')
            le--;
        if (le > s && *s != '#') {
            char *f[4];
            size_t fl[4];
            char *p = s;
            int k = 0;
            for (; k < 3; k++) {
                char *tab = memchr(p, '\t', (size_t)(le - p));
                if (!tab)
                    break;
                f[k] = p;
                fl[k] = (size_t)(tab - p);
                p = tab + 1;
            }
            if (k < 3) {
                fprintf(stderr, "scry bench: %s:%ld: expected CLASS\\tMETHOD\\tPATH\\tBODY\n",
                        o->workload, lineno);
                free(data);
                return -1;
            }
            f[3] = p;
            fl[3] = (size_t)(le - p);
            bench_req r = {dupn(f[0], fl[0]),
                           dupn(f[1], fl[1]),
                           dupn(f[2], fl[2]),
                           dupn(f[3], fl[3]),
                           NULL,
                           0};
            size_t cap = fl[1] + fl[2] + fl[3] + strlen(o->host) + 160;
            r.wire = malloc(cap);
            if (!r.cls || !r.method || !r.path || !r.body || !r.wire ||
                sc_vec_push(&v, r) != SC_OK) {
                free(data);
                return -1;
            }
            int n = snprintf(r.wire, cap,
                             "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\n\r\n%s",
                             r.method, r.path, o->host, o->port, fl[3], r.body);
            v.ptr[v.len - 1].wire_len = (size_t)n;
        }
        s = nl ? nl + 1 : end;
    }
    free(data);
    *out = v.ptr;
    return (long)v.len;
}

static int64_t json_int_at(json_t *root, const char *a, const char *b, const char *c)
{
    json_t *x = json_object_get(root, a);
    if (x && b)
        x = json_object_get(x, b);
    if (x && c && json_is_object(x))
        x = json_object_get(x, c);
    return json_is_integer(x) ? (int64_t)json_integer_value(x) : -1;
}

static void validate(const opts *o, const bench_req *reqs, size_t n, query_result *res)
{
    int fd = -1;
    sc_buf scratch = {0};
    size_t n_err = 0;
    for (size_t i = 0; i < n; i++) {
        bench_resp r = {0};
        query_result *q = &res[i];
        q->total = q->returned = -1;
        if (bench_roundtrip(o->host, o->port, &fd, &reqs[i], &scratch, &r) != 0) {
            q->error = true;
            n_err++;
            continue;
        }
        q->status = r.status;
        q->error = bench_is_error(&r);
        n_err += q->error;
        if (q->error)
            q->error_body = dupn(r.body, r.body_len < 300 ? r.body_len : 300);
        json_t *root = json_loadb(r.body, r.body_len, 0, NULL);
        if (root) {
            q->total = json_int_at(root, "hits", "total", "value");
            if (q->total < 0)
                q->total = json_int_at(root, "hits", "total", NULL);
            if (q->total < 0)
                q->total = json_int_at(root, "count", NULL, NULL);
            json_t *hits = json_object_get(json_object_get(root, "hits"), "hits");
            if (json_is_array(hits))
                q->returned = (int64_t)json_array_size(hits);
            json_decref(root);
        }
    }
    if (fd >= 0)
        close(fd);
    sc_vec_free(&scratch);
    fprintf(stderr, "validation: %zu requests, %zu errors\n", n, n_err);
}

/* /proc/PID/stat utime+stime in microseconds; 0 if unavailable. */
static uint64_t proc_cpu_us(int pid)
{
    if (pid <= 0)
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may contain spaces */
    if (!p)
        return 0;
    unsigned long long ut = 0, st = 0;
    /* fields after ")": state(3) ... utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    long hz = sysconf(_SC_CLK_TCK);
    return (ut + st) * 1000000ull / (unsigned long long)(hz > 0 ? hz : 100);
}

/* A "Key:   N kB" line of /proc/PID/status, in kB; 0 if unavailable. */
static uint64_t proc_status_kb(int pid, const char *key)
{
    if (pid <= 0)
        return 0;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    uint64_t v = 0;
    size_t kl = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':')
            v = strtoull(line + kl + 1, NULL, 10);
    fclose(f);
    return v;
}

static uint64_t meminfo_total_kb(void)
{
    char line[256];
    uint64_t v = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "MemTotal:", 9) == 0)
            v = strtoull(line + 9, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static void write_machine(sc_jsonw *w)
{
    char model[256] = "unknown", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                snprintf(model, sizeof(model), "%s", c + 2);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    }
    if (f)
        fclose(f);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    sc_jsonw_key(w, "machine");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "cpu", model);
    sc_jsonw_kv_int(w, "nproc", sysconf(_SC_NPROCESSORS_ONLN));
    sc_jsonw_kv_int(w, "mem_total_kb", (int64_t)meminfo_total_kb());
    sc_jsonw_kv_str(w, "hostname", host);
    sc_jsonw_obj_end(w);
}

static int parse_conns(opts *o, const char *s)
{
    o->n_conns = 0;
    while (*s && o->n_conns < 8) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 1 || v > 4096)
            return -1;
        o->conns[o->n_conns++] = (int)v;
        s = *e == ',' ? e + 1 : e;
        if (*e && *e != ',')
            return -1;
    }
    return o->n_conns ? 0 : -1;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"host", 1, 0, 'h'},          {"port", 1, 0, 'p'},  {"workload", 1, 0, 'w'},
        {"out", 1, 0, 'o'},           {"conns", 1, 0, 'c'}, {"threads", 1, 0, 't'},
        {"warmup", 1, 0, 'W'},        {"reps", 1, 0, 'r'},  {"duration", 1, 0, 'd'},
        {"pid", 1, 0, 'P'},           {"label", 1, 0, 'l'}, {"build", 1, 0, 'b'},
        {"corpus", 1, 0, 'C'},        {"class", 1, 0, 'k'}, {"no-validate", 0, 0, 'n'},
        {"validate-only", 0, 0, 'v'}, {"help", 0, 0, '?'},  {0, 0, 0, 0}};
    *o = (opts){.host = "127.0.0.1",
                .port = 9200,
                .out = "bench-result.json",
                .conns = {1, 8},
                .n_conns = 2,
                .warmup_s = 2,
                .reps = 3,
                .duration_s = 5,
                .label = "",
                .build = "",
                .corpus = ""};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'h': o->host = optarg; break;
        case 'p': o->port = atoi(optarg); break;
        case 'w': o->workload = optarg; break;
        case 'o': o->out = optarg; break;
        case 'c':
            if (parse_conns(o, optarg) != 0) {
                fprintf(stderr, "scry bench: bad --conns '%s'\n", optarg);
                return -1;
            }
            break;
        case 't': o->threads = atoi(optarg); break;
        case 'W': o->warmup_s = atof(optarg); break;
        case 'r': o->reps = atoi(optarg); break;
        case 'd': o->duration_s = atof(optarg); break;
        case 'P': o->pid = atoi(optarg); break;
        case 'l': o->label = optarg; break;
        case 'b': o->build = optarg; break;
        case 'C': o->corpus = optarg; break;
        case 'k': o->only_class = optarg; break;
        case 'n': o->no_validate = true; break;
        case 'v': o->validate_only = true; break;
        default: return -1;
        }
    }
    if (!o->workload || o->reps < 1 || o->duration_s <= 0 || o->port <= 0) {
        fprintf(stderr, "scry bench: --workload is required; --reps, --duration, --port > 0\n");
        return -1;
    }
    return 0;
}

/* Groups requests by class, in order of first appearance. */
static size_t group_classes(const bench_req *reqs, size_t n, cls_list **out)
{
    SC_VEC(cls_list) v = {0};
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < v.len && strcmp(v.ptr[k].name, reqs[i].cls) != 0)
            k++;
        if (k == v.len) {
            cls_list c = {reqs[i].cls, {0}};
            if (sc_vec_push(&v, c) != SC_OK)
                break;
        }
        if (sc_vec_push(&v.ptr[k].idx, i) != SC_OK)
            break;
    }
    *out = v.ptr;
    return v.len;
}

typedef struct cell_rep {
    double qps;
    uint64_t n_ok, n_err;
    uint64_t cpu_us;
} cell_rep;

static void write_cell(sc_jsonw *w, const char *cls, int conns, int threads, const cell_rep *reps,
                       int n_reps, const bench_counts *tot, double dur, uint64_t hwm_kb,
                       uint64_t rss_kb, bool have_pid)
{
    double qps[64];
    uint64_t cpu = 0, n = tot->n_ok + tot->n_err;
    for (int r = 0; r < n_reps && r < 64; r++) {
        qps[r] = reps[r].qps;
        cpu += reps[r].cpu_us;
    }
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "class", cls);
    sc_jsonw_kv_int(w, "conns", conns);
    sc_jsonw_kv_int(w, "threads", threads);
    sc_jsonw_kv_double(w, "qps", sc_stats_median(qps, (size_t)n_reps));
    sc_jsonw_kv_double(w, "qps_mean", sc_stats_mean(qps, (size_t)n_reps));
    sc_jsonw_kv_double(w, "qps_stddev", sc_stats_stddev(qps, (size_t)n_reps));
    sc_jsonw_key(w, "qps_reps");
    sc_jsonw_arr_begin(w);
    for (int r = 0; r < n_reps; r++)
        sc_jsonw_double(w, reps[r].qps);
    sc_jsonw_arr_end(w);
    sc_jsonw_kv_int(w, "requests", (int64_t)n);
    sc_jsonw_kv_int(w, "errors", (int64_t)tot->n_err);
    sc_jsonw_kv_double(w, "error_rate", n ? (double)tot->n_err / (double)n : 0.0);
    sc_jsonw_key(w, "latency_us");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "p50", (int64_t)sc_histogram_percentile(tot->hist, 50));
    sc_jsonw_kv_int(w, "p90", (int64_t)sc_histogram_percentile(tot->hist, 90));
    sc_jsonw_kv_int(w, "p99", (int64_t)sc_histogram_percentile(tot->hist, 99));
    sc_jsonw_kv_int(w, "max", (int64_t)sc_histogram_percentile(tot->hist, 100));
    sc_jsonw_kv_double(w, "mean", sc_histogram_mean(tot->hist));
    sc_jsonw_obj_end(w);
    sc_jsonw_kv_int(w, "bytes_out", (int64_t)tot->bytes_out);
    sc_jsonw_kv_int(w, "bytes_in", (int64_t)tot->bytes_in);
    sc_jsonw_kv_double(w, "seconds", dur * n_reps);
    if (have_pid) {
        sc_jsonw_kv_double(w, "server_cpu_us_per_req", n ? (double)cpu / (double)n : 0.0);
        sc_jsonw_kv_int(w, "server_peak_rss_kb", (int64_t)hwm_kb);
        sc_jsonw_kv_int(w, "server_rss_kb", (int64_t)rss_kb);
    }
    sc_jsonw_obj_end(w);
}

static int run_cell(const opts *o, sc_jsonw *w, const bench_req *reqs, const cls_list *cl,
                    int conns)
{
    int threads = o->threads > 0 ? o->threads : (conns < 2 ? conns : 2);
    bench_pool *pool = bench_pool_new(o->host, o->port, conns, threads);
    bench_counts tot = {0};
    tot.hist = malloc(sizeof(sc_histogram));
    bench_counts rep = {0};
    rep.hist = malloc(sizeof(sc_histogram));
    cell_rep reps[64] = {{0}};
    int n_reps = o->reps < 64 ? o->reps : 64;
    int rc = 0;
    if (!pool || !tot.hist || !rep.hist) {
        rc = -1;
        goto done;
    }
    sc_histogram_init(tot.hist);
    if (o->warmup_s > 0 &&
        bench_pool_run(pool, reqs, cl->idx.ptr, cl->idx.len, o->warmup_s, NULL) != 0) {
        fprintf(stderr, "scry bench: cannot connect to %s:%d\n", o->host, o->port);
        rc = -1;
        goto done;
    }
    for (int r = 0; r < n_reps; r++) {
        rep.n_ok = rep.n_err = rep.bytes_in = rep.bytes_out = 0;
        sc_histogram_init(rep.hist);
        uint64_t cpu0 = proc_cpu_us(o->pid);
        if (bench_pool_run(pool, reqs, cl->idx.ptr, cl->idx.len, o->duration_s, &rep) != 0) {
            fprintf(stderr, "scry bench: connection failure in class %s\n", cl->name);
            rc = -1;
            goto done;
        }
        uint64_t cpu1 = proc_cpu_us(o->pid);
        reps[r].n_ok = rep.n_ok;
        reps[r].n_err = rep.n_err;
        reps[r].qps = (double)(rep.n_ok + rep.n_err) / o->duration_s;
        reps[r].cpu_us = cpu1 - cpu0;
        tot.n_ok += rep.n_ok;
        tot.n_err += rep.n_err;
        tot.bytes_in += rep.bytes_in;
        tot.bytes_out += rep.bytes_out;
        sc_histogram_merge(tot.hist, rep.hist);
    }
    write_cell(w, cl->name, conns, threads < conns ? threads : conns, reps, n_reps, &tot,
               o->duration_s, proc_status_kb(o->pid, "VmHWM"), proc_status_kb(o->pid, "VmRSS"),
               o->pid > 0);
    double q[64];
    for (int r = 0; r < n_reps; r++)
        q[r] = reps[r].qps;
    fprintf(stderr, "%-22s conns=%-3d qps=%10.1f p50=%8lluus p99=%8lluus errors=%llu\n", cl->name,
            conns, sc_stats_median(q, (size_t)n_reps),
            (unsigned long long)sc_histogram_percentile(tot.hist, 50),
            (unsigned long long)sc_histogram_percentile(tot.hist, 99),
            (unsigned long long)tot.n_err);
done:
    free(tot.hist);
    free(rep.hist);
    bench_pool_free(pool);
    return rc;
}

static void write_header(sc_jsonw *w, const opts *o, size_t n_reqs)
{
    char ts[64];
    time_t now = time(NULL);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    sc_jsonw_kv_int(w, "schema_version", 1);
    sc_jsonw_kv_str(w, "label", o->label);
    sc_jsonw_kv_str(w, "build", o->build);
    sc_jsonw_kv_str(w, "driver", "scry bench " SCRY_VERSION);
    sc_jsonw_kv_str(w, "started_at", ts);
    write_machine(w);
    sc_jsonw_kv_str(w, "corpus", o->corpus);
    sc_jsonw_key(w, "settings");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "host", o->host);
    sc_jsonw_kv_int(w, "port", o->port);
    sc_jsonw_kv_str(w, "workload", o->workload);
    sc_jsonw_kv_int(w, "requests_in_workload", (int64_t)n_reqs);
    sc_jsonw_key(w, "conns");
    sc_jsonw_arr_begin(w);
    for (int i = 0; i < o->n_conns; i++)
        sc_jsonw_int(w, o->conns[i]);
    sc_jsonw_arr_end(w);
    sc_jsonw_kv_int(w, "threads", o->threads);
    sc_jsonw_kv_double(w, "warmup_s", o->warmup_s);
    sc_jsonw_kv_int(w, "reps", o->reps);
    sc_jsonw_kv_double(w, "duration_s", o->duration_s);
    sc_jsonw_kv_bool(w, "pipelining", false);
    sc_jsonw_kv_int(w, "server_pid", o->pid);
    sc_jsonw_obj_end(w);
}

static int bench_run(int argc, char **argv)
{
    opts o;
    if (parse_opts(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    bench_req *reqs = NULL;
    long n = load_workload(&o, &reqs);
    if (n <= 0) {
        fprintf(stderr, "scry bench: no requests in %s\n", o.workload);
        return 1;
    }
    cls_list *cls = NULL;
    size_t n_cls = group_classes(reqs, (size_t)n, &cls);
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, true);
    sc_jsonw_obj_begin(&w);
    write_header(&w, &o, (size_t)n);
    int rc = 0;
    query_result *qr = calloc((size_t)n, sizeof(*qr));
    if (!qr)
        return 1;
    if (!o.no_validate) {
        validate(&o, reqs, (size_t)n, qr);
        sc_jsonw_key(&w, "validation");
        sc_jsonw_arr_begin(&w);
        for (long i = 0; i < n; i++) {
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "class", reqs[i].cls);
            sc_jsonw_kv_str(&w, "path", reqs[i].path);
            sc_jsonw_kv_str(&w, "body", reqs[i].body);
            sc_jsonw_kv_int(&w, "status", qr[i].status);
            sc_jsonw_kv_int(&w, "total", qr[i].total);
            sc_jsonw_kv_int(&w, "returned", qr[i].returned);
            sc_jsonw_kv_bool(&w, "error", qr[i].error);
            if (qr[i].error_body)
                sc_jsonw_kv_str(&w, "error_body", qr[i].error_body);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
    }
    sc_jsonw_key(&w, "cells");
    sc_jsonw_arr_begin(&w);
    uint64_t t0 = sc_clock_now_ns();
    for (size_t k = 0; k < n_cls && !o.validate_only && rc == 0; k++) {
        if (o.only_class && strcmp(o.only_class, cls[k].name) != 0)
            continue;
        for (int c = 0; c < o.n_conns && rc == 0; c++)
            rc = run_cell(&o, &w, reqs, &cls[k], o.conns[c]);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_kv_double(&w, "grid_seconds", (double)(sc_clock_now_ns() - t0) / 1e9);
    sc_jsonw_obj_end(&w);
    if (sc_jsonw_finish(&w) != SC_OK || sc_vec_push(&out, '\n') != SC_OK ||
        sc_file_write_atomic(o.out, out.ptr, out.len) != SC_OK) {
        fprintf(stderr, "scry bench: cannot write %s\n", o.out);
        rc = -1;
    } else {
        fprintf(stderr, "wrote %s\n", o.out);
    }
    sc_vec_free(&out);
    for (size_t k = 0; k < n_cls; k++)
        sc_vec_free(&cls[k].idx);
    free(cls);
    for (long i = 0; i < n; i++) {
        free(reqs[i].cls);
        free(reqs[i].method);
        free(reqs[i].path);
        free(reqs[i].body);
        free(reqs[i].wire);
    }
    free(reqs);
    for (long i = 0; i < n; i++)
        free(qr[i].error_body);
    free(qr);
    return rc == 0 ? 0 : 1;
}

int sc_cmd_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "compare") == 0)
        return bench_compare_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return bench_run(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        return bench_run(argc, argv);
    fprintf(stderr, "scry bench: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
