/* Helpers shared by the benchmark programs that index an NDJSON corpus through a real shard
 * (index_bench, shard_bench): the corpus lines, the default analyzers with a mapping, a shard
 * configuration in a scratch directory and the indexing loop. Header-only; each bench is its
 * own program. */
#ifndef SC_BENCH_SHARD_H
#define SC_BENCH_SHARD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "mapping/analysis.h"
#include "shard/shard.h"

/* Seconds since t0 (sc_clock_now_ns). */
static inline double secs_since(uint64_t t0)
{
    return (double)(sc_clock_now_ns() - t0) / 1e9;
}

/* An NDJSON file read whole: one _source per line. */
typedef struct bench_corpus {
    uint8_t *data;
    size_t len;
} bench_corpus;

/* Next line of the corpus at *off (without the newline; empty lines are skipped); false at the
 * end. */
static inline bool bench_corpus_next(const bench_corpus *c, size_t *off, sc_slice *line)
{
    while (*off < c->len && c->data[*off] == '\n')
        (*off)++;
    if (*off >= c->len)
        return false;
    const uint8_t *nl = memchr(c->data + *off, '\n', c->len - *off);
    size_t l = nl ? (size_t)(nl - c->data - *off) : c->len - *off;
    *line = sc_slice_make(c->data + *off, l);
    *off += l + 1;
    return true;
}

/* The default analyzers and a mapping built from JSON (NULL: an empty dynamic mapping). */
typedef struct bench_mapping {
    sc_analyzer_registry *reg;
    sc_mapping_analysis an;
    sc_mapping *m;
} bench_mapping;

/* 0, or -1 (a bad mapping is reported on stderr). */
static inline int bench_mapping_init(bench_mapping *bm, const json_t *mappings)
{
    sc_analysis_error ae;
    if (sc_analyzer_registry_new(NULL, &bm->reg, &ae) != SC_OK)
        return -1;
    sc_mapping_analysis_init(&bm->an, bm->reg);
    sc_mapping_error err;
    if (sc_mapping_new(mappings, &bm->m, &err) != SC_OK) {
        fprintf(stderr, "mapping: %s\n", err.reason);
        return -1;
    }
    return 0;
}

static inline void bench_mapping_fini(bench_mapping *bm)
{
    sc_mapping_unref(bm->m);
    sc_analyzer_registry_free(bm->reg);
}

/* A shard configuration over the empty directory /tmp/scry-<tag>-bench-<pid> (written to dir)
 * with bm's mapping, no timed refresh and no background merges. 0, or -1 when the directory
 * cannot be cleared. */
static inline int bench_shard_config(const char *tag, char *dir, size_t dir_cap, bench_mapping *bm,
                                     sc_shard_config *cfg)
{
    snprintf(dir, dir_cap, "/tmp/scry-%s-bench-%d", tag, (int)getpid());
    if (sc_dir_remove_all(dir) != SC_OK)
        return -1;
    memset(cfg, 0, sizeof(*cfg));
    cfg->path = dir;
    cfg->mapping = bm->m;
    cfg->analysis = &bm->an;
    cfg->refresh_interval_ms = -1;
    cfg->no_background_merges = true;
    return 0;
}

/* Indexes every line of c with the ids "0", "1", ... and sc_shard_sync every sync_every
 * documents (0: never). Counts documents and source bytes in *n and *bytes. 0, or -1 (a
 * refused document is reported on stderr). */
static inline int bench_shard_index_all(sc_shard *sh, const bench_corpus *c,
                                        const sc_shard_write_opts *o, size_t sync_every, size_t *n,
                                        size_t *bytes)
{
    size_t off = 0;
    sc_slice line;
    sc_shard_error se;
    *n = 0;
    *bytes = 0;
    while (bench_corpus_next(c, &off, &line)) {
        char id[32];
        snprintf(id, sizeof(id), "%zu", *n);
        if (sc_shard_index(sh, sc_slice_cstr(id), line, o, NULL, &se) != SC_OK) {
            fprintf(stderr, "index %zu: %s\n", *n, se.reason);
            return -1;
        }
        (*n)++;
        *bytes += line.len;
        if (sync_every > 0 && *n % sync_every == 0 && sc_shard_sync(sh) != SC_OK)
            return -1;
    }
    return 0;
}

#endif
