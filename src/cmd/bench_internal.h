/* Shared pieces of the load driver (bench.c, bench_http.c, bench_compare.c). Private to
 * src/cmd. */
#ifndef SC_CMD_BENCH_INTERNAL_H
#define SC_CMD_BENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"
#include "base/vec.h"

/* One request of a workload: "CLASS<TAB>METHOD<TAB>PATH<TAB>BODY" on a line. */
typedef struct bench_req {
    char *cls;
    char *method;
    char *path;
    char *body;
    char *wire; /* the whole HTTP/1.1 request */
    size_t wire_len;
} bench_req;

/* Counters of one measured phase (one thread, or merged). */
typedef struct bench_counts {
    uint64_t n_ok;
    uint64_t n_err;
    uint64_t bytes_out;
    uint64_t bytes_in;
    sc_histogram *hist; /* latency in microseconds of all completed requests (ok and errors) */
} bench_counts;

/* A parsed HTTP response (body de-chunked). */
typedef struct bench_resp {
    int status;
    const char *body;
    size_t body_len;
} bench_resp;

/* True if a response counts as an error: not 200, or the body lacks "timed_out":false or
 * "failed":0 (SearchBench's rule). */
bool bench_is_error(const bench_resp *r);

/* Connects to host:port (blocking connect, then non-blocking, TCP_NODELAY). Returns fd or -1. */
int bench_connect(const char *host, int port);

/* Sends one request and reads the response on a blocking socket `*fd` (reconnecting if the
 * server closed it). On success resp->body points into `scratch` (valid until the next
 * call). Returns 0 or -1 on a transport failure. */
int bench_roundtrip(const char *host, int port, int *fd, const bench_req *req, sc_buf *scratch,
                    bench_resp *resp);

/* Runs a closed loop: n_conns connections, spread over n_threads threads, each connection
 * sending the requests reqs[idx[0..n_idx)] in order starting at its own offset, for
 * duration_s seconds after which in-flight requests are drained and not counted. If `out`
 * is not NULL the completions inside the window are recorded into it. Connections persist in
 * `pool` between calls. Returns 0 or -1 when no connection could be opened. */
typedef struct bench_pool bench_pool;
bench_pool *bench_pool_new(const char *host, int port, int n_conns, int n_threads);
void bench_pool_free(bench_pool *p);
int bench_pool_run(bench_pool *p, const bench_req *reqs, const size_t *idx, size_t n_idx,
                   double duration_s, bench_counts *out);

/* `scry bench compare A B`. */
int bench_compare_main(int argc, char **argv);

#endif
