/* Private to the data-node search handlers (remote_search.c) and their reader contexts
 * (remote_ctx.c). */
#ifndef SC_API_REMOTE_INTERNAL_H
#define SC_API_REMOTE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "api/remote.h"
#include "shard/shard.h"

/* The snapshots a query-phase answer's hits refer to, by the coordinator's shard ordinal. */
typedef struct sc__remote_ctx {
    uint64_t id;
    uint64_t created_ns;
    size_t n;
    uint32_t *shard_ix;
    const sc_shard_snapshot **snapshots; /* one reference each */
    struct sc__remote_ctx *next;
} sc__remote_ctx;

struct sc_api_remote {
    sc_node *node;
    pthread_mutex_t mu;
    sc__remote_ctx *contexts;
    uint64_t next_id;
};

/* Registers c (taking it) and returns its new id; reaps expired contexts. */
uint64_t sc__remote_ctx_put(sc_api_remote *r, sc__remote_ctx *c);
/* Removes and returns the context with that id (the caller frees it), or NULL. */
sc__remote_ctx *sc__remote_ctx_take(sc_api_remote *r, uint64_t id);
/* Releases c's snapshots and frees it. NULL is a no-op. */
void sc__remote_ctx_free(sc__remote_ctx *c);
void sc__remote_ctx_free_all(sc_api_remote *r);

#endif
