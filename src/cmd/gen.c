/* `scry gen`: argument parsing and dispatch to the corpus generators. */
#include "cmd/gen.h"

#include <stdio.h>

int sc_cmd_gen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "scry gen: not yet\n");
    return 1;
}
