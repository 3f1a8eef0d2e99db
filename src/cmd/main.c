/* scry command line: dispatches to the subcommands (serve, load, search, bench). */
#include <stdio.h>
#include <string.h>

#include "cmd/bench.h"
#include "cmd/gen.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: scry <command> [options]\n"
               "\n"
               "commands:\n"
               "  serve     run the search server (Elasticsearch REST API)\n"
               "  bench     load driver: run a workload, compare two result files\n"
               "  gen       generate a benchmark corpus (wiki, taxis, logs) as NDJSON\n"
               "  --version print the version and exit\n"
               "  --help    print this help and exit\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("scry %s\n", SCRY_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "bench") == 0)
        return sc_cmd_bench(argc - 1, argv + 1);
    if (strcmp(argv[1], "gen") == 0)
        return sc_cmd_gen(argc - 1, argv + 1);
    fprintf(stderr, "scry: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
