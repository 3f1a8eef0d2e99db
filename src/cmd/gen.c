/* `scry gen`: argument parsing, the shared output helpers and dispatch to the corpus
 * generators (gen_wiki.c, gen_taxis.c, gen_logs.c). */
#include "cmd/gen.h"

#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/file.h"
#include "cmd/gen_internal.h"

void gen_printf(gen_out *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        gen_put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void gen_put_escaped(gen_out *o, const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\' || c < 0x20) {
            gen_put(o, s + start, i - start);
            char esc[8];
            if (c == '"' || c == '\\') {
                esc[0] = '\\';
                esc[1] = (char)c;
                gen_put(o, esc, 2);
            } else {
                snprintf(esc, sizeof(esc), "\\u%04x", c);
                gen_put(o, esc, 6);
            }
            start = i + 1;
        }
    }
    gen_put(o, s + start, n - start);
}

void gen_action(gen_out *o, const gen_opts *g)
{
    if (!g->bulk)
        return;
    gen_puts(o, "{\"index\":{\"_index\":\"");
    gen_puts(o, g->index);
    gen_puts(o, "\"}}\n");
}

/* The data folder: --data, else $SCRY_GEN_DATA, else bench/gen beside the source tree the
 * binary was built in (build/<x>/scry -> ../../bench/gen), else ./bench/gen. */
static const char *find_data_dir(const char *given)
{
    static char path[4096];
    if (given)
        return given;
    const char *env = getenv("SCRY_GEN_DATA");
    if (env)
        return env;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *dir = dirname(exe);
        for (int up = 0; up < 4; up++) {
            snprintf(path, sizeof(path), "%s/bench/gen/vocab.txt.gz", dir);
            if (sc_path_exists(path)) {
                snprintf(path, sizeof(path), "%s/bench/gen", dir);
                return path;
            }
            dir = dirname(dir);
        }
    }
    return "bench/gen";
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: scry gen wiki|taxis|logs|vectors [--seed S] [--docs N] [--bulk INDEX]\n"
            "                [--data DIR] [--dims D] [--clusters C] [--intrinsic-dims R]\n"
            "                [--fvecs]\n"
            "  streams N documents as NDJSON to stdout; the same seed gives the same bytes\n"
            "  --bulk INDEX  precede each document with a _bulk index action for INDEX\n"
            "  --data DIR    folder with vocab.txt.gz and terms.txt (wiki; default bench/gen)\n"
            "  vectors: Gaussian mixture, --dims (128) --clusters (64); --fvecs: binary fvecs;\n"
            "    --intrinsic-dims R: each cluster lies near an R-dimensional subspace (default 0:\n"
            "    isotropic clusters, intrinsic dimension = dims)\n");
}

int sc_cmd_gen(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *kind = argv[1];
    static const struct option lo[] = {{"seed", 1, 0, 's'}, {"docs", 1, 0, 'n'},
                                       {"bulk", 1, 0, 'b'}, {"data", 1, 0, 'd'},
                                       {"dims", 1, 0, 'D'}, {"clusters", 1, 0, 'C'},
                                       {"fvecs", 0, 0, 'F'}, {"intrinsic-dims", 1, 0, 'I'},
                                       {"help", 0, 0, '?'},
                                       {0, 0, 0, 0}};
    gen_opts g = {.seed = 1, .docs = 1000};
    const char *data = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc - 1, argv + 1, "", lo, NULL)) != -1) {
        switch (c) {
        case 's': g.seed = strtoull(optarg, NULL, 10); break;
        case 'n': g.docs = strtoull(optarg, NULL, 10); break;
        case 'b':
            g.bulk = true;
            g.index = optarg;
            break;
        case 'd': data = optarg; break;
        case 'D': g.dims = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'C': g.clusters = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'F': g.fvecs = true; break;
        case 'I': g.intrinsic = (uint32_t)strtoul(optarg, NULL, 10); break;
        default: usage(stderr); return 2;
        }
    }
    g.data_dir = find_data_dir(data);
    gen_out *o = calloc(1, sizeof(*o));
    if (!o)
        return 1;
    int rc;
    if (strcmp(kind, "wiki") == 0)
        rc = sc__gen_wiki(&g, o);
    else if (strcmp(kind, "taxis") == 0)
        rc = sc__gen_taxis(&g, o);
    else if (strcmp(kind, "logs") == 0)
        rc = sc__gen_logs(&g, o);
    else if (strcmp(kind, "vectors") == 0)
        rc = sc__gen_vectors(&g, o);
    else {
        fprintf(stderr, "scry gen: unknown corpus '%s'\n", kind);
        usage(stderr);
        free(o);
        return 2;
    }
    gen_flush(o);
    if (fflush(stdout) != 0 || o->failed)
        rc = rc ? rc : 1;
    free(o);
    return rc;
}
