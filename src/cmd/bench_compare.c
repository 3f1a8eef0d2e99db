/* `scry bench compare A.json B.json`: per-cell ratios of two result files (QPS B/A, latency
 * B/A) and the queries whose validation hit counts differ, so two engines or two builds are
 * known to give equal answers before their speed is compared. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/histogram.h"
#include "cmd/bench_internal.h"

static json_t *load(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        fprintf(stderr, "scry bench compare: %s:%d: %s\n", path, err.line, err.text);
    return j;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static json_t *find_cell(json_t *cells, const char *cls, double conns)
{
    size_t i;
    json_t *c;
    json_array_foreach (cells, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "class")) ?: "", cls) == 0 &&
            num(c, "conns") == conns)
            return c;
    }
    return NULL;
}

/* Key of a validation row: class + path + body. */
static json_t *find_query(json_t *rows, json_t *q)
{
    const char *body = json_string_value(json_object_get(q, "body")) ?: "";
    const char *path = json_string_value(json_object_get(q, "path")) ?: "";
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "body")) ?: "", body) == 0 &&
            strcmp(json_string_value(json_object_get(r, "path")) ?: "", path) == 0)
            return r;
    }
    return NULL;
}

int bench_compare_main(int argc, char **argv)
{
    bool strict = false;
    const char *pa = NULL, *pb = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--strict") == 0)
            strict = true;
        else if (!pa)
            pa = argv[i];
        else if (!pb)
            pb = argv[i];
    }
    if (!pa || !pb) {
        fprintf(stderr, "usage: scry bench compare [--strict] A.json B.json\n"
                        "  prints B/A ratios per cell; --strict exits 3 if hit counts differ\n");
        return 2;
    }
    json_t *a = load(pa), *b = load(pb);
    if (!a || !b) {
        json_decref(a);
        json_decref(b);
        return 1;
    }
    printf("A = %s (%s)\nB = %s (%s)\n\n", pa, json_string_value(json_object_get(a, "label")) ?: "",
           pb, json_string_value(json_object_get(b, "label")) ?: "");
    printf("%-22s %5s %11s %11s %7s %9s %9s %7s %7s %s\n", "class", "conns", "qps A", "qps B",
           "B/A", "p50 A us", "p50 B us", "p50 B/A", "p99 B/A", "errors A/B");
    json_t *ca = json_object_get(a, "cells"), *cb = json_object_get(b, "cells");
    size_t i;
    json_t *c;
    double ratios[4096];
    size_t n_ratios = 0;
    json_array_foreach (cb, i, c) {
        const char *cls = json_string_value(json_object_get(c, "class")) ?: "";
        double conns = num(c, "conns");
        json_t *o = find_cell(ca, cls, conns);
        if (!o) {
            printf("%-22s %5.0f %11s %11.1f (only in B)\n", cls, conns, "-", num(c, "qps"));
            continue;
        }
        json_t *la = json_object_get(o, "latency_us"), *lb = json_object_get(c, "latency_us");
        double qa = num(o, "qps"), qb = num(c, "qps");
        double r = qa > 0 ? qb / qa : 0;
        if (r > 0 && n_ratios < 4096)
            ratios[n_ratios++] = r;
        printf("%-22s %5.0f %11.1f %11.1f %7.2f %9.0f %9.0f %7.2f %7.2f %.0f/%.0f\n", cls, conns,
               qa, qb, r, num(la, "p50"), num(lb, "p50"),
               num(la, "p50") > 0 ? num(lb, "p50") / num(la, "p50") : 0,
               num(la, "p99") > 0 ? num(lb, "p99") / num(la, "p99") : 0, num(o, "errors"),
               num(c, "errors"));
    }
    if (n_ratios)
        printf("\ngeometric mean of QPS ratios B/A over %zu cells: %.3f\n", n_ratios,
               sc_stats_geomean(ratios, n_ratios));
    size_t n_diff = 0, n_checked = 0;
    json_t *va = json_object_get(a, "validation"), *vb = json_object_get(b, "validation");
    json_array_foreach (vb, i, c) {
        json_t *o = find_query(va, c);
        if (!o)
            continue;
        n_checked++;
        double ta = num(o, "total"), tb = num(c, "total");
        if (ta != tb || num(o, "returned") != num(c, "returned")) {
            if (n_diff++ == 0)
                printf("\nqueries whose answers differ:\n");
            printf("  DIFF %-20s total A=%.0f B=%.0f returned A=%.0f B=%.0f  %s\n",
                   json_string_value(json_object_get(c, "class")) ?: "", ta, tb, num(o, "returned"),
                   num(c, "returned"), json_string_value(json_object_get(c, "body")) ?: "");
        }
    }
    printf("\nvalidation: %zu queries compared, %zu differ\n", n_checked, n_diff);
    json_decref(a);
    json_decref(b);
    return strict && n_diff ? 3 : 0;
}
