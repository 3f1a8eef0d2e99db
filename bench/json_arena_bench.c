/* The _search body parse with jansson's nodes in malloc (outside a scope) and in the request
 * arena (inside a base/json.h scope, as sc_api_search parses), alternated in one process so
 * that the machine's load hits both alike (docs/benchmarks.md, "jansson's nodes in the request
 * arena"). Reads a workload file (CLASS<TAB>METHOD<TAB>PATH<TAB>BODY); per class and round, each
 * way parses the class's bodies round-robin (duplicates refused, as the _search path does) and
 * releases the tree, for SECONDS of thread CPU; the arena way begins a scope on a long-lived
 * arena and rewinds it after each body, as a request's arena dies with the request.
 * Prints "class<TAB>round<TAB>malloc_ns<TAB>arena_ns" per body, then the medians and their ratio.
 * Usage: json_arena_bench WORKLOAD ROUNDS SECONDS CLASS... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/json.h"

typedef struct body {
    char *text;
    size_t len;
} body;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns of thread CPU per body, parsing bodies round-robin for `seconds`; a NULL arena opens no
 * scope (the malloc way). */
static double run(const body *b, size_t n, double seconds, sc_arena *a)
{
    sc_json_limits lim = {.reject_duplicates = true};
    sc_arena_mark m = {0};
    if (a)
        m = sc_arena_mark_get(a);
    double t0 = thread_cpu_ns(), t = t0;
    size_t done = 0;
    while (t - t0 < seconds * 1e9) {
        for (int k = 0; k < 64; k++, done++) {
            const body *x = &b[done % n];
            sc_json_arena_scope js;
            sc_json_arena_begin(&js, a);
            json_t *v = NULL;
            if (sc_json_parse(sc_slice_make(x->text, x->len), &lim, &v, NULL) != SC_OK) {
                fprintf(stderr, "parse failed\n");
                exit(1);
            }
            sc_json_arena_hold(&js);
            json_decref(v);
            sc_json_arena_end(&js);
            if (a)
                sc_arena_rewind(a, m);
        }
        t = thread_cpu_ns();
    }
    return (t - t0) / (double)done;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: json_arena_bench WORKLOAD ROUNDS SECONDS CLASS...\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    double seconds = atof(argv[3]);
    if (rounds < 1 || rounds > 100 || seconds <= 0)
        return 2;
    for (int c = 4; c < argc; c++) {
        FILE *f = fopen(argv[1], "r");
        if (!f)
            return 1;
        body *b = NULL;
        size_t n = 0, cap = 0, total = 0;
        char *line = NULL;
        size_t lcap = 0;
        ssize_t got;
        while ((got = getline(&line, &lcap, f)) > 0) {
            char *t1 = strchr(line, '\t'), *t3 = NULL;
            if (!t1 || (size_t)(t1 - line) != strlen(argv[c]) ||
                memcmp(line, argv[c], strlen(argv[c])) != 0)
                continue;
            char *t2 = strchr(t1 + 1, '\t');
            t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
            if (!t3)
                continue;
            size_t len = strcspn(t3 + 1, "\n");
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                b = realloc(b, cap * sizeof(*b));
                if (!b)
                    return 1;
            }
            b[n].text = strndup(t3 + 1, len);
            b[n].len = len;
            total += len;
            n++;
        }
        free(line);
        fclose(f);
        if (!n) {
            fprintf(stderr, "no bodies of class %s\n", argv[c]);
            continue;
        }
        sc_arena arena;
        sc_arena_init(&arena, 0);
        double ms[100], as[100];
        for (int r = 0; r < rounds; r++) {
            /* Alternate which way goes first. */
            if (r % 2 == 0) {
                ms[r] = run(b, n, seconds, NULL);
                as[r] = run(b, n, seconds, &arena);
            } else {
                as[r] = run(b, n, seconds, &arena);
                ms[r] = run(b, n, seconds, NULL);
            }
            printf("%s\t%d\t%.0f\t%.0f\n", argv[c], r + 1, ms[r], as[r]);
        }
        qsort(ms, (size_t)rounds, sizeof(double), cmp_double);
        qsort(as, (size_t)rounds, sizeof(double), cmp_double);
        double mm = ms[rounds / 2], am = as[rounds / 2];
        printf("# %s: %zu bodies of %zu bytes on average; median ns per body: malloc %.0f, "
               "arena %.0f, malloc/arena %.2fx\n",
               argv[c], n, total / n, mm, am, mm / am);
        sc_arena_fini(&arena);
        for (size_t i = 0; i < n; i++)
            free(b[i].text);
        free(b);
    }
    return 0;
}
