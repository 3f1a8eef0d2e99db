/* The cost of installing a small merge in a shard with a large id table (docs/benchmarks.md,
 * "The id table's slots grown by 1.5x, no doc maps"): N ids in one segment, then rounds of ten
 * small segments (S docs each, every 7th of their ids deleted) merged by the tiered policy
 * (sc_shard_maybe_merge). The install remapped the id table's entries under the writer lock: a
 * walk of the inputs' docs where the slots kept a doc -> entry map, two passes over all the
 * entries where they did not, so this was the worst case of the latter (since h-idseg2 the
 * table names no segment doc and a merge remaps nothing). Prints the process CPU
 * seconds of the N-id load and of the merges (median of the rounds' merge times too).
 *
 *   merge_remap_bench [N (2000000)] [S (1000)] [ROUNDS (5)] [DIR (/tmp/scry-merge-remap)] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "shard/shard.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void must(sc_status st, const char *what)
{
    if (st != SC_OK) {
        fprintf(stderr, "merge_remap_bench: %s: %s\n", what, sc_status_str(st));
        exit(1);
    }
}

static void index_range(sc_shard *s, uint64_t from, uint64_t to)
{
    sc_shard_write_opts o = sc_shard_write_defaults();
    sc_shard_error err;
    char id[32];
    for (uint64_t i = from; i < to; i++) {
        int n = snprintf(id, sizeof id, "id%011" PRIu64, i);
        must(sc_shard_index(s, sc_slice_make((const uint8_t *)id, (size_t)n),
                            sc_slice_cstr("{\"n\":1}"), &o, NULL, &err),
             "index");
    }
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    uint64_t small = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    const char *dir = argc > 4 ? argv[4] : "/tmp/scry-merge-remap";
    if (rounds < 1 || rounds > 100 || !small) {
        fprintf(stderr, "usage: merge_remap_bench [N] [S] [ROUNDS 1-100] [DIR]\n");
        return 2;
    }
    must(sc_dir_remove_all(dir), "remove the scratch folder");
    sc_shard_config cfg = {0};
    cfg.path = dir;
    cfg.no_background_thread = true;
    cfg.refresh_interval_ms = -1;
    cfg.durability_async = true;
    cfg.ram_buffer_bytes = (size_t)1 << 30; /* the N ids in one segment */
    sc_shard *s;
    sc_shard_error err;
    must(sc_shard_open(&cfg, &s, &err), "open");
    double t0 = cpu_s();
    index_range(s, 0, n);
    must(sc_shard_refresh(s), "refresh");
    double load = cpu_s() - t0;
    double merge_total = 0, times[100];
    uint64_t next = n;
    for (int r = 0; r < rounds; r++) {
        sc_shard_write_opts o = sc_shard_write_defaults();
        sc_shard_error e2;
        for (int k = 0; k < 10; k++) {
            index_range(s, next, next + small);
            for (uint64_t i = next; i < next + small; i += 7) {
                char id[32];
                int len = snprintf(id, sizeof id, "id%011" PRIu64, i);
                must(sc_shard_delete(s, sc_slice_make((const uint8_t *)id, (size_t)len), &o, NULL,
                                     &e2),
                     "delete");
            }
            next += small;
            must(sc_shard_refresh(s), "refresh");
        }
        sc_shard_stats b0, b1;
        must(sc_shard_stats_get(s, false, &b0), "stats");
        double m0 = cpu_s();
        must(sc_shard_maybe_merge(s), "merge");
        times[r] = cpu_s() - m0;
        must(sc_shard_stats_get(s, false, &b1), "stats");
        merge_total += times[r];
        printf("round %d: %" PRIu64 " merges, %.1f ms, %zu segments\n", r + 1,
               b1.n_merges - b0.n_merges, times[r] * 1e3, b1.n_segments);
        sc_shard_stats_fini(&b0);
        sc_shard_stats_fini(&b1);
    }
    sc_shard_stats st;
    must(sc_shard_stats_get(s, false, &st), "stats");
    qsort(times, (size_t)rounds, sizeof *times, cmp_double);
    printf("ids=%" PRIu64 " small=%" PRIu64 " rounds=%d load_cpu_s=%.2f merge_cpu_s=%.3f "
           "merge_median_ms=%.1f merges=%" PRIu64 " segments=%" PRIu64 "\n",
           next, small, rounds, load, merge_total, times[rounds / 2] * 1e3, st.n_merges,
           (uint64_t)st.n_segments);
    sc_shard_stats_fini(&st);
    sc_shard_close(s, false);
    must(sc_dir_remove_all(dir), "remove the scratch folder");
    return 0;
}
