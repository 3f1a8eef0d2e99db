/* Indexing throughput and index size through the real write path, single thread: every line of
 * an NDJSON file is indexed with sc_shard_index (mapping parse + analysis + translog + segment
 * buffer; the buffer becomes a segment every RAM_MB as in the server), then a refresh and a
 * flush (commit) end the timed part; a timed force merge to one segment follows. No merges run
 * while indexing (as LuceneIndexBench with NoMergePolicy). Prints docs/s, MB/s of raw JSON,
 * the index size before and after the merge, and where the merged segment's bytes go.
 * The translog is fsynced every BATCH docs (0: only at the commit, like durability async).
 * cpu_s is the process CPU time of the indexing part (robust on a busy machine), merge_cpu_s
 * that of the force merge.
 * Usage: index_bench FILE.ndjson MAPPINGS.json [RAM_MB (64)] [BATCH (0)] [MERGE (1); 0 skips it]
 * (bench/index_compare.sh runs it next to bench/LuceneIndexBench.java.) */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "index/segment.h"
#include "mapping/analysis.h"
#include "shard/shard.h"

#include "bench_shard.h"

/* CPU time of the process (all threads), seconds. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Bytes of the regular files in dir whose names do not start with `skip` (the translog). */
static uint64_t dir_bytes(const char *dir, const char *skip)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[1024];
        struct stat st;
        if (skip && strncmp(e->d_name, skip, strlen(skip)) == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            n += (uint64_t)st.st_size;
    }
    closedir(d);
    return n;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Where the bytes of each segment in dir go: terms, postings+positions (the rest of the field
 * data), norms, doc values, points, stored. */
static void breakdown(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, SC_SEGMENT_SUFFIX) != 0)
            continue;
        char name[SC_SEGMENT_NAME_MAX + 1];
        snprintf(name, sizeof(name), "%.*s", (int)(l - 4), e->d_name);
        /* opening verifies the whole-file checksum: time it with the file evicted from the
         * page cache (posix_fadvise DONTNEED after an fsync), then again warm */
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            (void)!fdatasync(fd);
            (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
        sc_segment *seg;
        uint64_t t0 = sc_clock_now_ns();
        if (sc_segment_open(dir, name, &seg) != SC_OK)
            continue;
        double cold_s = secs_since(t0);
        sc_segment_unref(seg);
        t0 = sc_clock_now_ns();
        if (sc_segment_open(dir, name, &seg) != SC_OK)
            continue;
        double open_s = secs_since(t0);
        uint64_t terms = 0, norms = 0, dv = 0, points = 0, field_data = 0;
        for (size_t i = 0; i < sc_segment_n_fields(seg); i++) {
            const sc_field_info *f = sc_segment_field_at(seg, i);
            terms += f->tindex_len + f->tdata_len;
            norms += f->norms_len;
            dv += f->dvn_len + f->dvs_len;
            points += f->points_len;
        }
        sc_slice b = sc__segment_bytes(seg);
        const uint8_t *foot = b.ptr + b.len - 48;
        uint64_t fields_off = le64(foot), sidx_off = le64(foot + 16), sidx_len = le64(foot + 24);
        uint64_t stored = 0;
        uint32_t nb;
        memcpy(&nb, b.ptr + sidx_off, 4);
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t comp;
            memcpy(&comp, b.ptr + sidx_off + 4 + (uint64_t)k * 24 + 16, 4);
            stored += comp;
        }
        field_data = fields_off - 16 - stored - sidx_len;
        uint64_t postings = field_data - terms - norms - dv - points;
        printf("segment %s: %.1f MB = postings+positions %.1f, terms %.1f, norms %.1f, doc "
               "values %.1f, points %.1f, stored %.1f (+ index %.2f) MB; open %.3f s cold, %.3f s "
               "warm\n",
               name, b.len / 1e6, postings / 1e6, terms / 1e6, norms / 1e6, dv / 1e6, points / 1e6,
               stored / 1e6, sidx_len / 1e6, cold_s, open_s);
        sc_segment_unref(seg);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: index_bench FILE.ndjson MAPPINGS.json [RAM_MB] [BATCH]\n");
        return 2;
    }
    bench_corpus c;
    uint8_t *mtext;
    size_t mlen;
    if (sc_file_read_all(argv[1], &c.data, &c.len) != SC_OK ||
        sc_file_read_all(argv[2], &mtext, &mlen) != SC_OK) {
        fprintf(stderr, "cannot read the inputs\n");
        return 1;
    }
    size_t ram_mb = argc > 3 ? (size_t)atoi(argv[3]) : 64;
    long batch = argc > 4 ? atol(argv[4]) : 0;
    bool merge = argc > 5 ? atoi(argv[5]) != 0 : true;
    json_t *root = json_loadb((const char *)mtext, mlen, 0, NULL);
    json_t *mj = json_object_get(root, "mappings");
    bench_mapping bm;
    if (bench_mapping_init(&bm, mj ? mj : root) != 0)
        return 1;
    json_decref(root);
    free(mtext);

    char dir[64];
    sc_shard_config cfg;
    if (bench_shard_config("index", dir, sizeof(dir), &bm, &cfg) != 0)
        return 1;
    cfg.ram_buffer_bytes = ram_mb << 20;
    cfg.durability_async = batch == 0;
    cfg.sync_interval_ms = 1u << 30; /* async: the commit syncs */
    sc_shard *sh;
    sc_shard_error se;
    if (sc_shard_open(&cfg, &sh, &se) != SC_OK)
        return 1;
    sc_shard_write_opts o = sc_shard_write_defaults();
    o.defer_sync = true;
    size_t n, bytes;
    double c0 = cpu_s();
    uint64_t t0 = sc_clock_now_ns();
    if (bench_shard_index_all(sh, &c, &o, batch > 0 ? (size_t)batch : 0, &n, &bytes) != 0)
        return 1;
    if (sc_shard_sync(sh) != SC_OK || sc_shard_refresh(sh) != SC_OK || sc_shard_flush(sh) != SC_OK)
        return 1;
    double si = secs_since(t0), ci = cpu_s() - c0;
    sc_shard_stats st;
    if (sc_shard_stats_get(sh, false, &st) != SC_OK)
        return 1;
    uint64_t size = dir_bytes(dir, "translog");
    t0 = sc_clock_now_ns();
    double cm0 = cpu_s();
    if (merge && sc_shard_force_merge(sh, 1) != SC_OK)
        return 1;
    double sm = secs_since(t0), cm = cpu_s() - cm0;
    sc_shard_close(sh, true);
    uint64_t merged = dir_bytes(dir, "translog");
    printf("docs=%zu bytes=%zu threads=1 index_s=%.2f cpu_s=%.2f docs_per_s=%.0f mb_per_s=%.2f "
           "segments=%llu size_bytes=%llu merge_s=%.2f merge_cpu_s=%.2f merged_bytes=%llu\n",
           n, bytes, si, ci, n / si, bytes / 1e6 / si, (unsigned long long)st.n_segments,
           (unsigned long long)size, sm, cm, (unsigned long long)merged);
    breakdown(dir);
    if (sc_dir_remove_all(dir) != SC_OK)
        return 1;
    bench_mapping_fini(&bm);
    free(c.data);
    return 0;
}
