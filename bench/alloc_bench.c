/* Allocation benchmark (src/cluster/allocation.c, allocation_rebalance.c): the CPU cost of one
 * master computation when a node joins a cluster holding many shards, with rebalancing off
 * (the baseline, what the allocator did before rebalancing) and on (defaults: 2 moves; and
 * unbounded: up to 64 moves per computation). Usage:
 *   alloc_bench [INDICES [SHARDS [REPLICAS [NODES [ROUNDS]]]]]   default 2000 10 1 3 9
 * Every shard starts active (all copies in sync) on NODES nodes; the computation adds node
 * NODES+1. Runs alternate (none, all, unbounded) ROUNDS times; prints the median thread CPU
 * time of each and its ratio to the baseline. Numbers in docs/benchmarks.md (release build). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/allocation.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Marks every copy of every shard in sync. */
static void all_in_sync(sc_routing_table *t)
{
    for (size_t i = 0; i < t->n_indices; i++)
        for (uint32_t s = 0; s < t->indices[i].number_of_shards; s++) {
            sc_shard_routing *sh = &t->indices[i].shards[s];
            sc_in_sync *is = realloc(sh->in_sync, (sh->n_copies + 1) * sizeof *is);
            if (!is)
                exit(1);
            sh->in_sync = is;
            for (size_t k = 0; k < sh->n_copies; k++) {
                memcpy(is[k].alloc_id, sh->copies[k].alloc_id, SC_ALLOC_ID_MAX);
                memcpy(is[k].node, sh->copies[k].node, SC_ALLOC_NODE_MAX);
            }
            sh->n_in_sync = sh->n_copies;
        }
}

int main(int argc, char **argv)
{
    size_t n_ix = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    uint32_t shards = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10;
    uint32_t reps = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1;
    size_t nn = argc > 4 ? strtoul(argv[4], NULL, 10) : 3;
    int rounds = argc > 5 ? atoi(argv[5]) : 9;
    if (!n_ix || !shards || nn < 1 || nn > 60 || rounds < 1)
        return 2;
    char(*names)[16] = calloc(n_ix, sizeof *names);
    sc_alloc_index *ix = calloc(n_ix, sizeof *ix);
    char ids[64][8];
    const char *nodes[64];
    for (size_t i = 0; i <= nn; i++) {
        snprintf(ids[i], sizeof ids[i], "n%zu", i);
        nodes[i] = ids[i];
    }
    for (size_t i = 0; i < n_ix; i++) {
        snprintf(names[i], sizeof names[i], "ix%05zu", i);
        ix[i] = (sc_alloc_index){names[i], shards, reps};
    }
    sc_alloc_settings off = {SC_REBALANCE_NONE, 2, 1.0}, on, unbounded;
    sc_alloc_settings_default(&on);
    unbounded = on;
    unbounded.concurrent = -1;
    uint64_t rng = 1;
    sc_routing_table t;
    if (sc_allocation_compute(nodes, nn, ix, n_ix, NULL, &off, &rng, &t) != SC_OK)
        return 1;
    all_in_sync(&t);
    const sc_alloc_settings *sets[3] = {&off, &on, &unbounded};
    static const char *const label[3] = {"rebalance none", "rebalance all (2 moves)",
                                         "rebalance all (unbounded)"};
    double *ms[3];
    size_t moves[3] = {0};
    for (int k = 0; k < 3; k++)
        ms[k] = calloc((size_t)rounds, sizeof *ms[k]);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 3; k++) {
            sc_routing_table out;
            uint64_t g = 7;
            double t0 = cpu_ms();
            if (sc_allocation_compute(nodes, nn + 1, ix, n_ix, &t, sets[k], &g, &out) != SC_OK)
                return 1;
            ms[k][r] = cpu_ms() - t0;
            moves[k] = 0;
            for (size_t i = 0; i < out.n_indices; i++)
                for (uint32_t s = 0; s < out.indices[i].number_of_shards; s++)
                    moves[k] += sc_shard_n_relocating(&out.indices[i].shards[s]);
            sc_routing_table_fini(&out);
        }
    printf("%zu indices x %u shards x %u replicas on %zu nodes, node %zu joins; %d rounds\n", n_ix,
           shards, reps, nn, nn + 1, rounds);
    double base = 0;
    for (int k = 0; k < 3; k++) {
        qsort(ms[k], (size_t)rounds, sizeof *ms[k], cmp_double);
        double med = ms[k][rounds / 2];
        if (k == 0)
            base = med;
        printf("%-28s median %8.2f ms CPU  x%.2f  (%zu moves started)\n", label[k], med,
               base > 0 ? med / base : 0, moves[k]);
        free(ms[k]);
    }
    sc_routing_table_fini(&t);
    free(names);
    free(ix);
    return 0;
}
