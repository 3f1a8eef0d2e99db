/* The scry side of the search oracle (tests/oracle/search, run by
 * scripts/test.d/30-search-oracle.sh): indexes docs.tsv with the standard analyzer through the
 * index layer's segment builder (several segments, to exercise shard-level statistics), deletes
 * the docs whose id is a multiple of DEL_MOD, then answers every query of queries.txt with the
 * query_string parser and the searcher. Output lines match SearchOracle.java's:
 * "<query>\t<count>\t<total>\t<id>:<score> ..." (count from sc_search_count, total and the top
 * 10 from sc_search_execute with an exact total).
 * Usage: search_oracle DOCS QUERIES DEL_MOD WORK_DIR [DOCS_PER_SEGMENT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/query_parser.h"
#include "search/searcher.h"
#include "text/analyzer.h"

typedef struct toks {
    sc_index_token *t;
    size_t n, cap;
    char *bytes;
    size_t blen, bcap;
} toks;

static sc_status sink(void *ctx, const sc_token *tok)
{
    toks *k = ctx;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 256;
        k->t = realloc(k->t, k->cap * sizeof *k->t);
    }
    if (k->blen + tok->len > k->bcap) {
        k->bcap = (k->blen + tok->len) * 2 + 4096;
        k->bytes = realloc(k->bytes, k->bcap);
    }
    if (!k->t || !k->bytes)
        return SC_ENOMEM;
    memcpy(k->bytes + k->blen, tok->term, tok->len);
    /* store the offset for now; pointers are fixed up after the analysis (realloc moves) */
    k->t[k->n].term = sc_slice_make((const void *)(uintptr_t)k->blen, tok->len);
    k->t[k->n].position = tok->position;
    k->n++;
    k->blen += tok->len;
    return SC_OK;
}

static void die(const char *what, sc_status st)
{
    fprintf(stderr, "search_oracle: %s: %s\n", what, sc_status_name(st));
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s DOCS QUERIES DEL_MOD WORK_DIR [DOCS_PER_SEGMENT]\n", argv[0]);
        return 2;
    }
    uint32_t del_mod = (uint32_t)atoi(argv[3]);
    const char *dir = argv[4];
    uint32_t per_seg = argc > 5 ? (uint32_t)atoi(argv[5]) : 20000;
    sc_analyzer *an;
    sc_status st = sc_analyzer_builtin("standard", &an);
    if (st != SC_OK)
        die("analyzer", st);
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    sc_segment_builder *b;
    if ((st = sc_segment_builder_new(&b)) != SC_OK)
        die("builder", st);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    toks k = {0};
    uint32_t n_segs = 0, n_docs = 0;
    char names[64][32];
    uint64_t t0 = sc_clock_now_ns();
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = 0;
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = 0;
        const char *text = tab + 1;
        k.n = k.blen = 0;
        if ((st = sc_analyzer_analyze(an, sc_slice_cstr(text), sink, &k)) != SC_OK)
            die("analyze", st);
        for (size_t i = 0; i < k.n; i++)
            k.t[i].term.ptr = (const uint8_t *)k.bytes + (uintptr_t)k.t[i].term.ptr;
        sc_index_token idtok = {sc_slice_cstr(line), 0};
        sc_index_field fields[2] = {
            {.name = sc_slice_cstr("_id"), .kind = SC_FIELD_KEYWORD, .flags = SC_FIELD_INDEXED,
             .tokens = &idtok, .n_tokens = 1},
            {.name = sc_slice_cstr("body"), .kind = SC_FIELD_TEXT,
             .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS, .tokens = k.t,
             .n_tokens = k.n, .length = (uint32_t)k.n},
        };
        sc_index_doc doc = {sc_slice_cstr(line), sc_slice_cstr(text), fields, 2, NULL, 0};
        if ((st = sc_segment_builder_add(b, &doc, NULL)) != SC_OK)
            die("add", st);
        n_docs++;
        if (sc_segment_builder_n_docs(b) == per_seg) {
            snprintf(names[n_segs], sizeof names[0], "s%u", n_segs);
            if ((st = sc_segment_builder_write(b, dir, names[n_segs], NULL)) != SC_OK)
                die("write", st);
            n_segs++;
            sc_segment_builder_reset(b);
        }
    }
    if (sc_segment_builder_n_docs(b) > 0) {
        snprintf(names[n_segs], sizeof names[0], "s%u", n_segs);
        if ((st = sc_segment_builder_write(b, dir, names[n_segs], NULL)) != SC_OK)
            die("write", st);
        n_segs++;
    }
    sc_segment_builder_free(b);
    fclose(f);
    uint64_t t1 = sc_clock_now_ns();

    sc_searcher_segment segs[64];
    sc_bitset lives[64];
    uint32_t base = 0;
    for (uint32_t i = 0; i < n_segs; i++) {
        sc_segment *seg;
        if ((st = sc_segment_open(dir, names[i], &seg)) != SC_OK)
            die("open", st);
        uint32_t nd = sc_segment_n_docs(seg);
        segs[i].seg = seg;
        segs[i].live = NULL;
        segs[i].n_deleted = 0;
        if (del_mod) {
            if (sc_bitset_init(&lives[i], nd) != SC_OK)
                die("bitset", SC_ENOMEM);
            sc_bitset_set_range(&lives[i], 0, nd);
            for (uint32_t d = 0; d < nd; d++)
                if ((base + d) % del_mod == 0) {
                    sc_bitset_clear(&lives[i], d);
                    segs[i].n_deleted++;
                }
            segs[i].live = &lives[i];
        }
        base += nd;
    }
    sc_searcher s = {segs, n_segs};

    FILE *qf = fopen(argv[2], "r");
    if (!qf) {
        perror(argv[2]);
        return 2;
    }
    sc_query_parser_options po;
    sc_query_parser_options_init(&po);
    po.default_field = sc_slice_cstr("body");
    po.analyzer = an;
    po.fix_negative = false; /* Lucene's QueryParser semantics */
    sc_iter_stats stats = {0};
    uint64_t t2 = sc_clock_now_ns();
    size_t n_q = 0;
    while ((len = getline(&line, &cap, qf)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = 0;
        n_q++;
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_query *q;
        sc_query_parse_error perr = {{0}, 0};
        printf("%s\t", line);
        st = sc_query_string_parse(sc_slice_cstr(line), &po, &a, &q, &perr);
        if (st != SC_OK) {
            printf("ERROR %s %s\n", sc_status_name(st), perr.msg);
            sc_arena_fini(&a);
            continue;
        }
        sc_search_options o;
        sc_search_options_init(&o);
        o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        o.stats = &stats;
        sc_search_result cr, r;
        st = sc_search_count(&s, q, &o, &a, &cr);
        if (st == SC_OK)
            st = sc_search_execute(&s, q, &o, &a, &r);
        if (st != SC_OK) {
            printf("ERROR %s %s\n", sc_status_name(st), r.error[0] ? r.error : cr.error);
            sc_arena_fini(&a);
            continue;
        }
        /* Top-k with pruning (no exact total, and a total of at most 100) must equal the
         * exhaustive top-k exactly. */
        int64_t tracks[2] = {SC_TRACK_TOTAL_HITS_NONE, 100};
        bool same = true;
        for (int k = 0; k < 2 && same; k++) {
            sc_search_result pr;
            o.track_total_hits = tracks[k];
            if (sc_search_execute(&s, q, &o, &a, &pr) != SC_OK || pr.n_hits != r.n_hits)
                same = false;
            for (size_t i = 0; same && i < r.n_hits; i++)
                same = pr.hits[i].global_doc == r.hits[i].global_doc &&
                       pr.hits[i].score == r.hits[i].score;
            if (same && tracks[k] == 100)
                same = pr.total == (r.total < 100 ? r.total : 100) &&
                       pr.total_gte == (r.total > 100 || (pr.total_gte && r.total >= 100));
        }
        if (!same) {
            printf("ERROR pruned top-k differs from the exhaustive one\n");
            sc_arena_fini(&a);
            continue;
        }
        printf("%llu\t%llu", (unsigned long long)cr.total, (unsigned long long)r.total);
        for (size_t i = 0; i < r.n_hits; i++)
            printf("\t%llu:%.9g", (unsigned long long)r.hits[i].global_doc, (double)r.hits[i].score);
        printf("\n");
        sc_arena_fini(&a);
    }
    uint64_t t3 = sc_clock_now_ns();
    fprintf(stderr,
            "scry: %u docs in %u segments indexed in %.1f ms; %zu queries in %.1f ms; "
            "generic bulk fallbacks: into_bitset %llu, run_end %llu, next_batch %llu\n",
            n_docs, n_segs, (double)(t1 - t0) / 1e6, n_q, (double)(t3 - t2) / 1e6,
            (unsigned long long)stats.fallback_into_bitset,
            (unsigned long long)stats.fallback_run_end,
            (unsigned long long)stats.fallback_next_batch);
    fclose(qf);
    free(line);
    free(k.t);
    free(k.bytes);
    for (uint32_t i = 0; i < n_segs; i++) {
        sc_segment_unref((sc_segment *)segs[i].seg);
        if (del_mod)
            sc_bitset_fini(&lives[i]);
    }
    sc_analyzer_free(an);
    return 0;
}
