/* `scry bench`: the closed-loop HTTP load driver and result comparison (docs/benchmarks.md).
 *
 *   scry bench run --workload FILE [--host H] [--port P] [--conns 1,8] [--threads T]
 *                  [--warmup S] [--reps R] [--duration S] [--pid PID] [--out FILE] ...
 *   scry bench compare A.json B.json
 */
#ifndef SC_CMD_BENCH_H
#define SC_CMD_BENCH_H

/* Entry point for `scry bench ...`; argv[0] is "bench". Returns the process exit status
 * (0 success, 1 failure, 2 usage error). */
int sc_cmd_bench(int argc, char **argv);

#endif
