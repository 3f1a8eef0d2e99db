/* Subcommands implemented in src/cmd: `scry serve` and `scry load`. */
#ifndef SC_CMD_SERVE_H
#define SC_CMD_SERVE_H

/* scry serve [--data DIR] [--port N] [--bind ADDR] [--threads N] [--config FILE] ... */
int sc_cmd_serve(int argc, char **argv);
/* scry load --index NAME FILE.ndjson[.gz|.zst] [--url URL] ... */
int sc_cmd_load(int argc, char **argv);
/* scry passwd NAME: reads a password from stdin, prints NAME:$6$... for a users file. */
int sc_cmd_passwd(int argc, char **argv);

#endif
