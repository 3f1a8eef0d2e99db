/* scry command line: dispatches to the subcommands (serve, load, bench...). */
#include <stdio.h>
#include <string.h>

#include "cmd/bench.h"
#include "cmd/gen.h"
#include "cmd/serve.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: scry <command> [options]\n"
               "\n"
               "commands:\n"
               "  serve     run the search server (Elasticsearch REST API)\n"
               "  load      bulk-load an NDJSON file into a running server\n"
               "  bench     load driver: run a workload, compare two result files\n"
               "  passwd    print a users-file line for NAME (password on stdin)\n"
               "  gen       generate a benchmark corpus (wiki, taxis, logs) as NDJSON\n"
               "  --version print the version and exit\n"
               "  --help    print this help and exit\n"
               "\n"
               "`scry <command> --help` shows a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("scry %s\n", SCRY_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "serve") == 0)
        return sc_cmd_serve(argc, argv);
    if (strcmp(cmd, "passwd") == 0)
        return sc_cmd_passwd(argc, argv);
    if (strcmp(cmd, "load") == 0)
        return sc_cmd_load(argc, argv);
    if (strcmp(cmd, "bench") == 0)
        return sc_cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "gen") == 0)
        return sc_cmd_gen(argc - 1, argv + 1);
    fprintf(stderr, "scry: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
