/* `scry gen wiki|taxis|logs --seed S --docs N`: deterministic benchmark corpora streamed as
 * NDJSON to stdout (docs/benchmarks.md). The same seed and options give the same bytes. */
#ifndef SC_CMD_GEN_H
#define SC_CMD_GEN_H

/* Entry point for `scry gen ...`; argv[0] is "gen". Returns the exit status. */
int sc_cmd_gen(int argc, char **argv);

#endif
