/* `scry-bench`: the load driver and corpus generators alone (`scry-bench bench ...`,
 * `scry-bench gen ...`, same options as `scry bench` / `scry gen`), linked with the base layer
 * only, so benchmarks can be driven against any Elasticsearch-compatible server without
 * building the engine. */
#include <stdio.h>
#include <string.h>

#include "cmd/bench.h"
#include "cmd/gen.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return sc_cmd_bench(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "gen") == 0)
        return sc_cmd_gen(argc - 1, argv + 1);
    if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
        printf("scry-bench %s\n", SCRY_VERSION);
        return 0;
    }
    fprintf(argc > 1 && strcmp(argv[1], "--help") == 0 ? stdout : stderr,
            "usage: scry-bench bench|gen ...   (see `scry-bench bench --help`, "
            "`scry-bench gen --help`)\n");
    return argc > 1 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
