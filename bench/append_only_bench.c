/* The id lookup's share of a write, in process: new documents indexed through a real shard
 * (sc_shard_index) with and without sc_shard_write_opts.append_only, in alternating blocks
 * (ABBA, so a trend of the shard's growth or of the machine hits both alike), timed by the
 * writing thread's CPU time. Half of the corpus is first indexed as SEGMENTS segments, so a
 * lookup of a new id probes the table and every segment's `_id` filter as it does in a
 * long-running shard; the buffer is refreshed every 20 blocks (not timed), adding segments.
 * The difference per document is what the append-only path saves a generated id's write
 * (docs/benchmarks.md, "One id lookup per write, none for generated ids").
 * Usage: append_only_bench FILE.ndjson [MAPPINGS_JSON|-] [SEGMENTS] [BLOCK]
 *   scry gen wiki --seed 1 --docs 200000 > wiki.ndjson
 *   append_only_bench wiki.ndjson "$(python3 -c 'import json;print(json.dumps(json.load(
 *       open("bench/workloads/wiki.index.json"))["mappings"]))')" 10 500 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "shard/shard.h"

#include "bench_shard.h"

static int index_one(sc_shard *sh, const char *prefix, size_t i, sc_slice src,
                     const sc_shard_write_opts *o)
{
    char id[32];
    snprintf(id, sizeof id, "%s%zu", prefix, i);
    sc_shard_error se;
    if (sc_shard_index(sh, sc_slice_cstr(id), src, o, NULL, &se) != SC_OK) {
        fprintf(stderr, "index %s: %s\n", id, se.reason);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: append_only_bench FILE.ndjson [MAPPINGS_JSON|-] [SEGMENTS] "
                        "[BLOCK]\n");
        return 2;
    }
    bench_corpus c;
    if (sc_file_read_all(argv[1], &c.data, &c.len) != SC_OK) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    json_t *mj = argc > 2 && strcmp(argv[2], "-") != 0 ? json_loads(argv[2], 0, NULL) : NULL;
    int segments = argc > 3 ? atoi(argv[3]) : 10;
    size_t block = argc > 4 ? (size_t)atol(argv[4]) : 500;
    if (segments < 1 || block < 1)
        return 2;
    size_t n = 0, cap = 1024, off = 0;
    sc_slice *lines = malloc(cap * sizeof *lines), line;
    while (lines && bench_corpus_next(&c, &off, &line)) {
        if (n == cap && !(lines = realloc(lines, (cap *= 2) * sizeof *lines)))
            return 1;
        lines[n++] = line;
    }
    bench_mapping bm;
    if (!lines || bench_mapping_init(&bm, mj) != 0)
        return 1;
    json_decref(mj);
    char dir[64];
    sc_shard_config cfg;
    if (bench_shard_config("append-only", dir, sizeof dir, &bm, &cfg) != 0)
        return 1;
    sc_shard *sh;
    sc_shard_error se;
    if (sc_shard_open(&cfg, &sh, &se) != SC_OK)
        return 1;
    sc_shard_write_opts look = sc_shard_write_defaults(), append = look;
    look.defer_sync = append.defer_sync = true;
    look.op_type = append.op_type = SC_SHARD_OP_CREATE;
    append.append_only = true;
    size_t half = n / 2;
    for (size_t i = 0; i < half; i++) {
        if (index_one(sh, "c", i, lines[i], &look) != 0)
            return 1;
        if ((i + 1) % (half / (size_t)segments + 1) == 0 && sc_shard_refresh(sh) != SC_OK)
            return 1;
    }
    if (sc_shard_refresh(sh) != SC_OK || sc_shard_sync(sh) != SC_OK)
        return 1;
    uint64_t ns[2] = {0, 0};
    size_t docs[2] = {0, 0}, blocks = 0;
    for (size_t i = half; i < n; blocks++) {
        /* A B B A A B B A ... within each 20 blocks between refreshes, the first block after a
         * refresh (an empty buffer) A and B in turn */
        int mode = (int)((blocks ^ (blocks >> 1) ^ (blocks / 20)) & 1);
        size_t start = i, end = i + block < n ? i + block : n;
        uint64_t t0 = sc_clock_thread_cpu_ns();
        for (; i < end; i++)
            if (index_one(sh, "n", i, lines[i], mode ? &append : &look) != 0)
                return 1;
        ns[mode] += sc_clock_thread_cpu_ns() - t0;
        docs[mode] += end - start;
        if (sc_shard_sync(sh) != SC_OK)
            return 1;
        if (blocks % 20 == 19 && sc_shard_refresh(sh) != SC_OK)
            return 1;
    }
    sc_shard_stats st;
    if (sc_shard_stats_get(sh, false, &st) != SC_OK)
        return 1;
    double a = (double)ns[0] / (double)docs[0], b = (double)ns[1] / (double)docs[1];
    printf("append_only_bench: %zu committed docs in %d segments first, %llu segments at the "
           "end; blocks of %zu new docs\n",
           half, segments, (unsigned long long)st.n_segments, block);
    printf("looked up: %zu docs, %.2f us/doc; append-only: %zu docs, %.2f us/doc; saved %.3f "
           "us/doc (%.2f%%), ratio %.4f\n",
           docs[0], a / 1e3, docs[1], b / 1e3, (a - b) / 1e3, 100 * (a - b) / a, b / a);
    sc_shard_close(sh, false);
    if (sc_dir_remove_all(dir) != SC_OK)
        return 1;
    bench_mapping_fini(&bm);
    free(lines);
    free(c.data);
    return 0;
}
