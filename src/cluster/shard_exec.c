/* Shard-level query execution: the bridge to the search layer's searcher. */
#include "cluster/shard_exec.h"

#include <stdio.h>

sc_status sc__shard_exec(const sc__shard_exec_args *a, sc__shard_exec_result *r)
{
    (void)a;
    snprintf(r->error, sizeof r->error, "the search layer's searcher is not available yet");
    return SC_EUNSUPPORTED;
}
