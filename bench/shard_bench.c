/* Indexing throughput of the mapping and shard layers on an NDJSON file of documents (one
 * _source per line): (1) mapping parse + analysis alone, (2) plus the segment builder, (3) the
 * whole shard write path (translog, id table, buffer, fsync every BATCH docs), then the final
 * refresh, flush and a reopen.
 * Usage: shard_bench FILE.ndjson [MAPPINGS_JSON|-] [BATCH]
 *   scry gen taxis --docs 50000 > taxis.ndjson
 *   shard_bench taxis.ndjson "$(python3 -c 'import json;print(json.dumps(json.load(
 *       open("bench/workloads/taxis.index.json"))["mappings"]))')" 1000 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/file.h"
#include "index/builder.h"
#include "mapping/analysis.h"
#include "shard/shard.h"

#include "bench_shard.h"

/* Phase 1 and 2: parse (and optionally build) every document; returns the final mapping. */
static sc_mapping *parse_all(const bench_corpus *c, sc_mapping *m, const sc_mapping_analysis *an,
                             bool build)
{
    sc_segment_builder *b = NULL;
    if (build && sc_segment_builder_new(&b) != SC_OK)
        exit(1);
    sc_arena arena;
    sc_arena_init(&arena, 0);
    sc_mapping *cur = sc_mapping_ref(m);
    size_t off = 0, n = 0, bytes = 0, buffers = 0;
    sc_slice line;
    uint64_t t0 = sc_clock_now_ns();
    while (bench_corpus_next(c, &off, &line)) {
        char id[32];
        snprintf(id, sizeof(id), "%zu", n);
        sc_index_doc doc;
        sc_mapping *up = NULL;
        sc_mapping_error err;
        sc_arena_mark mk = sc_arena_mark_get(&arena);
        if (sc_mapping_parse_doc(cur, an, sc_slice_cstr(id), line, &arena, &doc, &up, &err) !=
            SC_OK) {
            fprintf(stderr, "doc %zu: %s\n", n, err.reason);
            exit(1);
        }
        if (up) {
            sc_mapping_unref(cur);
            cur = up;
        }
        if (b) {
            if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
                exit(1);
            if (sc_segment_builder_n_docs(b) >= 100000) {
                buffers++;
                sc_segment_builder_reset(b);
            }
        }
        sc_arena_rewind(&arena, mk);
        n++;
        bytes += line.len;
    }
    double s = secs_since(t0);
    printf("%s: %zu docs, %.1f MB in %.2fs = %.0f docs/s, %.1f MB/s\n",
           build ? "parse + analysis + segment builder" : "parse + analysis", n, bytes / 1e6, s,
           n / s, bytes / 1e6 / s);
    sc_segment_builder_free(b);
    sc_arena_fini(&arena);
    return cur;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shard_bench FILE.ndjson [MAPPINGS_JSON|-] [BATCH]\n");
        return 2;
    }
    bench_corpus c;
    if (sc_file_read_all(argv[1], &c.data, &c.len) != SC_OK) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    int batch = argc > 3 ? atoi(argv[3]) : 1000;
    json_t *mj = argc > 2 && strcmp(argv[2], "-") != 0 ? json_loads(argv[2], 0, NULL) : NULL;
    bench_mapping bm;
    if (bench_mapping_init(&bm, mj) != 0)
        return 1;
    json_decref(mj);
    sc_mapping_unref(parse_all(&c, bm.m, &bm.an, false));
    sc_mapping_unref(parse_all(&c, bm.m, &bm.an, true));

    char dir[64];
    sc_shard_config cfg;
    if (bench_shard_config("shard", dir, sizeof(dir), &bm, &cfg) != 0)
        return 1;
    sc_shard *sh;
    sc_shard_error se;
    if (sc_shard_open(&cfg, &sh, &se) != SC_OK)
        return 1;
    sc_shard_write_opts o = sc_shard_write_defaults();
    o.defer_sync = batch > 1;
    size_t n, bytes;
    uint64_t t0 = sc_clock_now_ns();
    if (bench_shard_index_all(sh, &c, &o, batch > 1 ? (size_t)batch : 0, &n, &bytes) != 0)
        return 1;
    if (sc_shard_sync(sh) != SC_OK)
        return 1;
    double si = secs_since(t0);
    t0 = sc_clock_now_ns();
    if (sc_shard_refresh(sh) != SC_OK)
        return 1;
    double sr = secs_since(t0);
    t0 = sc_clock_now_ns();
    if (sc_shard_flush(sh) != SC_OK)
        return 1;
    double sf = secs_since(t0);
    sc_shard_stats st;
    if (sc_shard_stats_get(sh, false, &st) != SC_OK)
        return 1;
    printf("shard index (fsync every %d docs): %zu docs in %.2fs = %.0f docs/s; final refresh "
           "%.2fs, flush %.2fs; %llu segments, %.1f MB\n",
           batch, n, si, n / si, sr, sf, (unsigned long long)st.n_segments, st.store_bytes / 1e6);
    sc_shard_close(sh, false);
    t0 = sc_clock_now_ns();
    if (sc_shard_open(&cfg, &sh, &se) != SC_OK)
        return 1;
    printf("reopen after the commit: %.3fs\n", secs_since(t0));
    sc_shard_close(sh, false);
    if (sc_dir_remove_all(dir) != SC_OK)
        return 1;
    bench_mapping_fini(&bm);
    free(c.data);
    return 0;
}
