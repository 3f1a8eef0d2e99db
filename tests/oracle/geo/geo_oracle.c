/* Geo oracle, scry side (see scripts/test.d/35-geo-oracle.sh). `gen N Q SEED DIR` writes
 * DIR/points.tsv (doc lat lon; 1-2 points per doc: clusters with duplicates, the poles, the
 * dateline, the whole globe) and DIR/queries.tsv (box top bottom left right | dist lat lon
 * meters; dateline-crossing boxes, tiny to antipodal circles, centers on poles and the
 * dateline). `check DIR LUCENE_COUNTS` indexes the points in three real segments, runs every
 * query through the searcher and compares its count with Lucene's (one count per line, in
 * query order): they must be equal, except by at most the number of points within float
 * ambiguity of a circle's edge (Lucene's sloppy haversine). Exit status 1 on any difference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/bkd2.h"
#include "index/builder.h"
#include "index/segment.h"
#include "search/geo.h"
#include "search/searcher.h"

static uint64_t rng;
static double uni(double a, double b)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return a + (b - a) * (double)(rng >> 11) / 9007199254740992.0;
}

static void point(double *lat, double *lon)
{
    double k = uni(0, 1);
    if (k < 0.3) {
        *lat = 40.7 + (double)(int)uni(0, 200) * 1e-3;
        *lon = -74.0 + (double)(int)uni(0, 200) * 1e-3;
    } else if (k < 0.4) {
        *lat = uni(-60, 60);
        *lon = uni(0, 1) < 0.5 ? uni(179, 180) : uni(-180, -179);
    } else if (k < 0.5) {
        double e = uni(0, 1);
        *lat = e < 0.2 ? 90.0 : e < 0.4 ? -90.0 : (e < 0.7 ? uni(85, 90) : uni(-90, -85));
        *lon = e < 0.1 ? 180.0 : uni(-180, 180);
    } else {
        *lat = uni(-90, 90);
        *lon = uni(-180, 180);
    }
}

static int gen(int n, int q, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/points.tsv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    for (int d = 0; d < n; d++) {
        int np = uni(0, 1) < 0.15 ? 2 : 1;
        for (int i = 0; i < np; i++) {
            double lat, lon;
            point(&lat, &lon);
            fprintf(f, "%d\t%.17g\t%.17g\n", d, lat, lon);
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/queries.tsv", dir);
    f = fopen(path, "w");
    if (!f)
        return 1;
    static const double radii[] = {1, 100, 2e3, 50e3, 700e3, 5e6, 15e6, 19.9e6, 21e6};
    for (int i = 0; i < q; i++) {
        if (i % 2 == 0) {
            double a = uni(-90, 90), b = uni(-90, 90), left = uni(-180, 180), right;
            if (i % 10 == 0) { /* small boxes around the cluster */
                a = 40.7 + uni(0, 0.2), b = 40.7 + uni(0, 0.2);
                left = -74.0 + uni(0, 0.2);
                right = -74.0 + uni(0, 0.2);
            } else {
                right = i % 6 == 0 ? uni(-180, 180) : fmin(180, left + uni(0, 90));
            }
            if (i % 14 == 0)
                left = uni(150, 180), right = uni(-180, -150); /* dateline */
            fprintf(f, "box\t%.17g\t%.17g\t%.17g\t%.17g\n", fmax(a, b), fmin(a, b), left, right);
        } else {
            double lat, lon;
            point(&lat, &lon);
            double r = radii[(int)uni(0, 9)] * uni(0.5, 1.5);
            fprintf(f, "dist\t%.17g\t%.17g\t%.17g\n", lat, lon, r);
        }
    }
    fclose(f);
    return 0;
}

typedef struct pt {
    uint32_t doc;
    int64_t packed;
} pt;

static int check(const char *dir, const char *lucene)
{
    char path[512];
    snprintf(path, sizeof path, "%s/points.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 2;
    size_t n = 0, cap = 1 << 16;
    pt *pts = malloc(cap * sizeof *pts);
    unsigned d;
    double lat, lon;
    while (pts && fscanf(f, "%u\t%lf\t%lf", &d, &lat, &lon) == 3) {
        if (n == cap)
            pts = realloc(pts, (cap *= 2) * sizeof *pts);
        if (!pts)
            break;
        pts[n].doc = d;
        pts[n++].packed = (int64_t)(((uint64_t)(uint32_t)sc_geo_encode_lat(lat) << 32) |
                                    (uint32_t)sc_geo_encode_lon(lon));
    }
    fclose(f);
    if (!pts || n == 0)
        return 2;
    uint32_t n_docs = pts[n - 1].doc + 1;
    /* three segments of consecutive docs */
    snprintf(path, sizeof path, "%s/segs", dir);
    sc_segment *segs[3];
    sc_searcher_segment ss[3];
    size_t at = 0;
    for (int s = 0; s < 3; s++) {
        uint32_t end = (uint32_t)((uint64_t)n_docs * (uint64_t)(s + 1) / 3);
        sc_segment_builder *b;
        if (sc_segment_builder_new(&b) != SC_OK)
            return 2;
        while (at < n && pts[at].doc < end) {
            size_t k = at;
            int64_t v[2];
            size_t nv = 0;
            while (k < n && pts[k].doc == pts[at].doc && nv < 2)
                v[nv++] = pts[k++].packed;
            sc_index_field fl = {.name = sc_slice_cstr("g"),
                                 .kind = SC_FIELD_NUMERIC,
                                 .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO,
                                 .values = v,
                                 .n_values = nv};
            sc_index_doc doc = {.id = sc_slice_cstr("x"),
                                .source = sc_slice_cstr("{}"),
                                .fields = &fl,
                                .n_fields = 1};
            if (sc_segment_builder_add(b, &doc, NULL) != SC_OK)
                return 2;
            at = k;
        }
        char name[8];
        snprintf(name, sizeof name, "s%d", s);
        if (sc_segment_builder_write(b, dir, name, NULL) != SC_OK ||
            sc_segment_open(dir, name, &segs[s]) != SC_OK)
            return 2;
        sc_segment_builder_free(b);
        ss[s] = (sc_searcher_segment){segs[s], NULL, 0};
    }
    sc_searcher sr = {ss, 3};
    snprintf(path, sizeof path, "%s/queries.tsv", dir);
    f = fopen(path, "r");
    FILE *lc = fopen(lucene, "r");
    if (!f || !lc)
        return 2;
    char kind[8];
    int qn = 0, bad = 0;
    uint64_t max_diff = 0, diffs = 0;
    while (fscanf(f, "%7s", kind) == 1) {
        sc_geo_shape s;
        memset(&s, 0, sizeof s);
        if (strcmp(kind, "box") == 0) {
            s.kind = SC_GEO_BOX;
            if (fscanf(f, "%lf %lf %lf %lf", &s.top, &s.bottom, &s.left, &s.right) != 4)
                return 2;
        } else {
            s.kind = SC_GEO_DISTANCE;
            if (fscanf(f, "%lf %lf %lf", &s.lat, &s.lon, &s.radius_m) != 3)
                return 2;
        }
        unsigned long long want;
        if (fscanf(lc, "%llu", &want) != 1)
            return 2;
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_search_options o;
        sc_search_options_init(&o);
        o.track_total_hits = SC_TRACK_TOTAL_HITS_ALL;
        sc_search_result res;
        if (sc_search_count(&sr, sc_query_geo(&a, sc_slice_cstr("g"), &s), &o, &a, &res) != SC_OK)
            return 2;
        sc_arena_fini(&a);
        uint64_t edges = 0;
        if (s.kind == SC_GEO_DISTANCE)
            for (size_t i = 0; i < n; i++) {
                int32_t la = (int32_t)(uint32_t)((uint64_t)pts[i].packed >> 32);
                int32_t lo = (int32_t)(uint32_t)(uint64_t)pts[i].packed;
                double m = sc_geo_arc_distance_m(s.lat, s.lon, sc_geo_decode_lat(la),
                                                 sc_geo_decode_lon(lo));
                edges += fabs(m - s.radius_m) <= 1e-7 * s.radius_m + 1e-4;
            }
        uint64_t diff = res.total > want ? res.total - want : want - res.total;
        if (diff) {
            diffs++;
            max_diff = diff > max_diff ? diff : max_diff;
        }
        if (diff > edges) {
            fprintf(stderr, "query %d (%s): scry %llu, Lucene %llu\n", qn, kind,
                    (unsigned long long)res.total, want);
            bad++;
        }
        qn++;
    }
    fclose(f);
    fclose(lc);
    for (int s = 0; s < 3; s++)
        sc_segment_unref(segs[s]);
    free(pts);
    printf("geo oracle: %d queries over %u docs (%zu points): %llu differ from Lucene, %d of "
           "them beyond the edge tolerance (largest difference %llu)\n",
           qn, n_docs, n, (unsigned long long)diffs, bad, (unsigned long long)max_diff);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "gen") == 0) {
        rng = strtoull(argv[4], NULL, 0) | 1;
        return gen(atoi(argv[2]), atoi(argv[3]), argv[5]);
    }
    if (argc == 4 && strcmp(argv[1], "check") == 0)
        return check(argv[2], argv[3]);
    fprintf(stderr, "usage: geo_oracle gen N Q SEED DIR | check DIR LUCENE_COUNTS\n");
    return 2;
}
