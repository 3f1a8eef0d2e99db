/* In-process kNN benchmark (not a test): builds one dense_vector section from a base fvecs
 * file exactly as a segment flush does (sc_vec_section_write: quantiles, int8 codes, HNSW
 * graph), opens it (sc_vec_section_open) and runs every query single-threaded for each
 * num_candidates (the HNSW beam, hnswlib/FAISS `ef`), reporting recall@10 against an exact
 * scan, QPS and build time in CPU seconds (the machine is shared), bytes per vector.
 * bench/knn_compare.py runs it beside hnswlib and FAISS on the same vectors. Usage: knn_bench
 * BASE.fvecs QUERY.fvecs [l2|cosine|dot] [hnsw|int8_hnsw] [m] [ef_construction]
 *        [num_candidates,...]
 * With "-" as the num_candidates list it reads one num_candidates per line from stdin and answers
 * each when it is read (bench/knn_compare.py interleaves the libraries' runs that way). A
 * num_candidates may carry ":W", the level-1 beam width (sc_vec_knn_opts.upper_beam: -1 the
 * greedy descent, 0 the default), reported as impl "scry-TYPE:W", and then "/OS", the int8
 * rescoring oversample (sc_vec_knn_opts.oversample, Elasticsearch's rescore_vector.oversample:
 * the best ceil(10 OS) candidates rescored; without it scry's default, a beam of at least 30
 * and every candidate rescored), reported as "scry-TYPE/OS".
 * Output: one TSV line per num_candidates: impl nc recall qps build_s bytes_per_vector
 * nodes_scored_per_query; "#" lines: build and graph shape (nodes and mean degree per level). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/vec.h"
#include "index/vecfield.h"

/* Process CPU time in ns: the machine is shared, so single-threaded throughput is measured
 * in CPU seconds (wall time would count other processes' time slices). */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static float *read_fvecs(const char *path, uint32_t *n, uint32_t *dims)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    int32_t d;
    if (fread(&d, 4, 1, f) != 1 || d <= 0 || d > SC_VEC_MAX_DIMS) {
        fclose(f);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t rec = 4 + (size_t)d * 4, cnt = (size_t)size / rec;
    float *v = malloc(cnt * (size_t)d * sizeof(float) + 1);
    for (size_t i = 0; v && i < cnt; i++) {
        int32_t dd;
        if (fread(&dd, 4, 1, f) != 1 || dd != d ||
            fread(v + i * (size_t)d, 4, (size_t)d, f) != (size_t)d) {
            free(v);
            v = NULL;
        }
    }
    fclose(f);
    *n = (uint32_t)cnt;
    *dims = (uint32_t)d;
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: knn_bench BASE.fvecs QUERY.fvecs [l2|cosine|dot] "
                        "[hnsw|int8_hnsw] [m] [ef_construction] [nc,nc,...]\n");
        return 2;
    }
    uint32_t n, dims, nq, qd;
    float *base = read_fvecs(argv[1], &n, &dims), *qs = read_fvecs(argv[2], &nq, &qd);
    if (!base || !qs || qd != dims) {
        fprintf(stderr, "knn_bench: cannot read the fvecs files\n");
        return 1;
    }
    const char *sim = argc > 3 ? argv[3] : "l2";
    const char *type = argc > 4 ? argv[4] : "hnsw";
    sc_vec_params p = {dims,
                       !strcmp(sim, "cosine") ? SC_VEC_SIM_COSINE
                       : !strcmp(sim, "dot")  ? SC_VEC_SIM_DOT
                                              : SC_VEC_SIM_L2,
                       SC_VEC_ELEM_FLOAT,
                       !strcmp(type, "int8_hnsw") ? SC_VEC_INDEX_INT8_HNSW : SC_VEC_INDEX_HNSW,
                       argc > 5 ? (uint32_t)atoi(argv[5]) : 16,
                       argc > 6 ? (uint32_t)atoi(argv[6]) : 100};
    const char *ncs = argc > 7 ? argv[7] : "10,20,40,60,100,150,200,300,500";
    uint32_t *docs = malloc((size_t)n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++)
        docs[i] = i;
    sc_buf sec = {0};
    uint64_t t0 = cpu_ns();
    if (sc_vec_section_write(&p, docs, base, n, NULL, 0, &sec) != SC_OK) {
        fprintf(stderr, "knn_bench: build failed\n");
        return 1;
    }
    double build_s = (double)(cpu_ns() - t0) / 1e9;
    /* the section as a segment maps it: page aligned */
    uint8_t *mem = aligned_alloc(4096, (sec.len + 4095) / 4096 * 4096);
    memcpy(mem, sec.ptr, sec.len);
    sc_vec_field vf;
    const char *why = "";
    if (sc_vec_section_open(sc_slice_make(mem, sec.len), n, &vf, &why) != SC_OK) {
        fprintf(stderr, "knn_bench: open failed: %s\n", why);
        return 1;
    }
    /* bytes a search touches per vector: codes (+ correction) for int8, else floats, plus the
     * graph; the raw floats stay on disk for rescoring and merges */
    double graph_b = (double)vf.graph.n * (1 + 2 * p.m) * 4 + (double)vf.graph.n_up * (1 + p.m) * 4;
    double search_b = (vf.codes ? (double)n * (dims + 4) : (double)n * dims * 4) + graph_b;
    double disk_b = (double)sec.len;
    sc_hnsw_hit *truth = malloc((size_t)nq * 10 * sizeof(*truth)), hits[10000];
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_arena_mark m0 = sc_arena_mark_get(&a);
    for (uint32_t q = 0; q < nq; q++) {
        sc_vec_knn_opts o = {
            .query = qs + (size_t)q * dims, .k = 10, .num_candidates = 10, .force_exact = true};
        size_t nh;
        bool ex;
        if (p.sim == SC_VEC_SIM_COSINE) {
            double nn = 0;
            for (uint32_t d = 0; d < dims; d++)
                nn += (double)o.query[d] * o.query[d];
            for (uint32_t d = 0; d < dims; d++)
                qs[(size_t)q * dims + d] = (float)(o.query[d] / sqrt(nn));
        }
        if (sc_vec_knn(&vf, &o, &a, truth + (size_t)q * 10, &nh, &ex) != SC_OK)
            return 1;
        sc_arena_rewind(&a, m0);
    }
    printf("# n %u dims %u sim %s type %s m %u ef_construction %u build_s %.2f search_bytes/vec "
           "%.0f disk_bytes/vec %.0f\n",
           n, dims, sim, type, p.m, p.ef_construction, build_s, search_b / n, disk_b / n);
    /* the graph's shape: nodes and mean out-degree per level */
    for (int lev = 0; lev <= vf.graph.max_level; lev++) {
        uint64_t nodes = 0, links = 0;
        for (uint32_t i = 0; i < vf.graph.n; i++) {
            if (vf.graph.levels[i] < lev)
                continue;
            uint32_t cnt;
            (void)sc_hnsw_links(&vf.graph, i, lev, &cnt);
            nodes++;
            links += cnt;
        }
        printf("# level %d nodes %llu mean degree %.2f\n", lev, (unsigned long long)nodes,
               nodes ? (double)links / (double)nodes : 0.0);
    }
    bool from_stdin = !strcmp(ncs, "-");
    if (from_stdin)
        printf("# ready\n");
    fflush(stdout);
    char line[64];
    for (const char *s = ncs; from_stdin || *s;) {
        uint32_t nc;
        long ub = 0;
        bool has_ub = false;
        const char *t;
        if (from_stdin) {
            if (!fgets(line, sizeof(line), stdin))
                break;
            nc = (uint32_t)strtoul(line, (char **)&t, 10);
            if (nc == 0)
                break;
        } else {
            nc = (uint32_t)strtoul(s, (char **)&t, 10);
        }
        if (*t == ':') {
            ub = strtol(t + 1, (char **)&t, 10);
            has_ub = true;
        }
        float os = 0;
        char os_txt[24] = "";
        if (*t == '/') {
            const char *o0 = t + 1;
            os = strtof(o0, (char **)&t);
            snprintf(os_txt, sizeof(os_txt), "/%.*s", (int)(t - o0), o0);
        }
        if (!from_stdin)
            s = *t == ',' ? t + 1 : t;
        double found = 0;
        uint64_t scored = 0;
        uint64_t t1 = cpu_ns();
        for (uint32_t q = 0; q < nq; q++) {
            sc_vec_knn_opts o = {.query = qs + (size_t)q * dims,
                                 .k = 10,
                                 .num_candidates = nc < 10 ? 10 : nc,
                                 .n_scored = &scored,
                                 .upper_beam = (int32_t)ub,
                                 .oversample = os};
            size_t nh;
            bool ex;
            if (sc_vec_knn(&vf, &o, &a, hits, &nh, &ex) != SC_OK)
                return 1;
            for (size_t i = 0; i < nh; i++)
                for (int j = 0; j < 10; j++)
                    found += hits[i].ord == truth[(size_t)q * 10 + j].ord;
            sc_arena_rewind(&a, m0);
        }
        double secs = (double)(cpu_ns() - t1) / 1e9;
        char impl[96], ub_txt[24] = "";
        if (has_ub)
            snprintf(ub_txt, sizeof(ub_txt), ":%ld", ub);
        snprintf(impl, sizeof(impl), "scry-%s%s%s", type, ub_txt, os_txt);
        printf("%s\t%u\t%.4f\t%.0f\t%.2f\t%.0f\t%.0f\n", impl, nc, found / (10.0 * nq), nq / secs,
               build_s, search_b / n, (double)scored / nq);
        fflush(stdout);
    }
    sc_arena_fini(&a);
    free(mem);
    sc_vec_free(&sec);
    free(base);
    free(qs);
    free(docs);
    free(truth);
    return 0;
}
