/* Analysis throughput: MB/s of the `standard` analyzer (tokenize + lowercase, tokens handed to
 * a counting sink) on real English text cut into ~1 KiB field values, through the ASCII fast
 * path and through the general (ICU property) path, plus `english` and the tokenizer alone.
 * Usage: analysis_bench [file] [seconds-per-case] [case 1-7]; default input is the oracle
 * fixture text repeated; a case number runs only that case (for perf stat). Case 7 runs the
 * file's non-ASCII lines (accented Latin, Greek, Cyrillic, CJK, emoji in the fixture). The general
 * path is forced by giving each value one leading U+00E9. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/analyzer.h"
#include "text/internal.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the build machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static sc_status count_sink(void *ctx, const sc_token *t)
{
    size_t *n = ctx;
    *n += t->len ? 1 : 0;
    return SC_OK;
}

static sc_status raw_count(void *ctx, size_t start, size_t end, bool valid, sc_token_type type)
{
    (void)start;
    (void)end;
    (void)valid;
    (void)type;
    size_t *n = ctx;
    (*n)++;
    return SC_OK;
}

typedef struct corpus {
    char *buf;
    size_t len;
    size_t *cuts; /* value boundaries */
    size_t n_values;
} corpus;

static void make_values(corpus *c, size_t target)
{
    c->cuts = malloc((c->len / target + 2) * sizeof(size_t));
    size_t p = 0;
    c->n_values = 0;
    c->cuts[c->n_values++] = 0;
    while (p < c->len) {
        size_t e = p + target < c->len ? p + target : c->len;
        while (e < c->len && c->buf[e] != ' ' && c->buf[e] != '\n')
            e++;
        c->cuts[c->n_values++] = e;
        p = e;
    }
}

typedef enum {
    RUN_ANALYZER,
    RUN_TOKENIZER_ASCII,
    RUN_TOKENIZER_GENERAL
} mode;

static void bench(const char *label, const sc_analyzer *a, mode m, const corpus *c,
                  const char *prefix, double seconds)
{
    size_t plen = strlen(prefix), tokens = 0, bytes = 0;
    char *tmp = malloc(c->len + plen + 1);
    double t0 = now_s(), t;
    int rounds = 0;
    do {
        for (size_t v = 0; v + 1 < c->n_values; v++) {
            size_t s = c->cuts[v], e = c->cuts[v + 1];
            sc_slice text;
            if (plen) {
                memcpy(tmp, prefix, plen);
                memcpy(tmp + plen, c->buf + s, e - s);
                text = sc_slice_make(tmp, plen + e - s);
            } else {
                text = sc_slice_make(c->buf + s, e - s);
            }
            sc_status st = SC_OK;
            if (m == RUN_ANALYZER)
                st = sc_analyzer_analyze(a, text, count_sink, &tokens);
            else
                st = sc__tokenize_standard(255, text, m == RUN_TOKENIZER_ASCII, raw_count, &tokens);
            if (st != SC_OK) {
                fprintf(stderr, "analyze failed: %s\n", sc_status_str(st));
                exit(1);
            }
            bytes += text.len;
        }
        rounds++;
        t = now_s() - t0;
    } while (t < seconds);
    printf("%-34s %8.1f MB/s  %7.1f Mtokens/s  (%d rounds, %.1f MB)\n", label,
           (double)bytes / t / 1e6, (double)tokens / t / 1e6, rounds, (double)bytes / 1e6);
    free(tmp);
}

int main(int argc, char **argv)
{
    /* Default input: the oracle fixture, found next to this source file. */
    char defpath[4096];
    snprintf(defpath, sizeof(defpath), "%s", __FILE__);
    char *slash = strrchr(defpath, '/');
    if (slash)
        snprintf(slash, sizeof(defpath) - (size_t)(slash - defpath),
                 "/../tests/fixtures/text/sentences.txt");
    else
        snprintf(defpath, sizeof(defpath), "tests/fixtures/text/sentences.txt");
    const char *path = argc > 1 ? argv[1] : defpath;
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *raw = malloc(n);
    if (fread(raw, 1, n, f) != n)
        return 1;
    fclose(f);
    /* The ASCII lines, repeated to ~8 MB, so both paths see the same words; and the non-ASCII
     * lines likewise. */
    corpus c = {malloc(8u << 20), 0, NULL, 0}, u = {malloc(8u << 20), 0, NULL, 0};
    for (int want_ascii = 1; want_ascii >= 0; want_ascii--) {
        corpus *k = want_ascii ? &c : &u;
        while (k->len < (8u << 20) - 4096) {
            size_t before = k->len;
            for (size_t p = 0; p < n;) {
                char *nl = memchr(raw + p, '\n', n - p);
                size_t e = nl ? (size_t)(nl - raw) + 1 : n;
                if (sc__text_is_ascii((const uint8_t *)raw + p, e - p) == (bool)want_ascii &&
                    k->len + (e - p) < (8u << 20)) {
                    memcpy(k->buf + k->len, raw + p, e - p);
                    k->len += e - p;
                }
                p = e;
            }
            if (k->len == before)
                break;
        }
    }
    make_values(&c, 1024);
    make_values(&u, 1024);
    printf("input: %s, %.1f MB ASCII text in %zu values of ~1 KiB\n", path, (double)c.len / 1e6,
           c.n_values - 1);
    sc_analyzer *std, *en, *ws;
    if (sc_analyzer_builtin("standard", &std) != SC_OK ||
        sc_analyzer_builtin("english", &en) != SC_OK ||
        sc_analyzer_builtin("whitespace", &ws) != SC_OK)
        return 1;
    int only = argc > 3 ? atoi(argv[3]) : 0;
    if (!only || only == 1)
        bench("standard, ASCII fast path", std, RUN_ANALYZER, &c, "", seconds);
    if (!only || only == 2)
        bench("standard, general (ICU) path", std, RUN_ANALYZER, &c, "\xC3\xA9 ", seconds);
    if (!only || only == 3)
        bench("standard tokenizer only, ASCII", NULL, RUN_TOKENIZER_ASCII, &c, "", seconds);
    if (!only || only == 4)
        bench("standard tokenizer only, general", NULL, RUN_TOKENIZER_GENERAL, &c, "", seconds);
    if (!only || only == 5)
        bench("english, ASCII fast path", en, RUN_ANALYZER, &c, "", seconds);
    if (!only || only == 6)
        bench("whitespace", ws, RUN_ANALYZER, &c, "", seconds);
    if ((!only || only == 7) && u.len > 0)
        bench("standard, non-ASCII text", std, RUN_ANALYZER, &u, "", seconds);
    sc_analyzer_free(std);
    sc_analyzer_free(en);
    sc_analyzer_free(ws);
    free(c.cuts);
    free(c.buf);
    free(u.cuts);
    free(u.buf);
    free(raw);
    return 0;
}
