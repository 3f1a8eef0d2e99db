/* Scroll contexts: a search that pages through all its hits over a frozen point in time. A
 * context pins the current searcher snapshot of every target shard, so every page sees the
 * same documents in the same order; each page re-runs the query phase for `from + size` over
 * the pinned snapshots (deterministic: score, then shard, then doc). Contexts expire after
 * their keep-alive (renewed by every page) and are freed by DELETE _search/scroll. Thread-safe:
 * the registry is locked; a context in use is refcounted. */
#ifndef SC_CLUSTER_SCROLL_H
#define SC_CLUSTER_SCROLL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "cluster/node.h"
#include "shard/shard.h"

typedef struct sc_scroll {
    char id[64];
    sc_index **indices;                 /* references */
    size_t n_indices;
    const sc_shard_snapshot **pinned;   /* one per target shard (index order, then shard) */
    size_t n_pinned;
    char *body;                         /* the search body to re-run (JSON text, may be NULL) */
    json_t **filters;                   /* per index: alias filter or NULL (owned; NULL = none) */
    char *routing;                      /* the first page's ?routing and ?preference (NULL: */
    char *preference;                   /* none), applied to every later page */
    uint32_t size;
    uint64_t position;                  /* hits already returned */
    int64_t keep_alive_ms;
    uint64_t expires_ns;
    int refs;                           /* guarded by the registry lock */
    bool busy;                          /* a page is running (pages are sequential) */
    bool pit;                           /* a point in time (shared), not a scroll */
    uint64_t seq;                       /* the number that ends id */
    /* Clustered (search_ctx.c). A data node's context pins only the shards a coordinator
     * asked for (pinned[pin_ix], NULL elsewhere; n_shards of them). A coordinator's context
     * pins nothing here: shards[pin_ix] says where each shard's context lives; wire_id is the
     * id given to clients (ctx_wire.h), NULL until the contexts are open. */
    uint32_t n_shards;
    struct sc_scroll_shard *shards; /* n_pinned entries, or NULL */
    char *wire_id;
    struct sc_scroll *next;
} sc_scroll;

/* Where one shard's search context lives (a clustered coordinator's context). */
typedef struct sc_scroll_shard {
    bool opened;        /* a context was asked for (failed or not) */
    bool failed;        /* ... and could not be opened: every page reports the shard failed */
    char node[64];      /* the data node */
    uint64_t seq;       /* its context there */
    uint64_t consumed;  /* scroll: hits of this shard already returned */
    int fail_status;
    char fail_type[64];
    char fail_reason[256];
} sc_scroll_shard;

/* Opens a context pinning every shard of `indices` (references taken). body is copied.
 * routing / preference (may be NULL) are copied: later pages search the same shards.
 * The new context is returned acquired (release with sc_scroll_release). */
sc_status sc_scroll_open(sc_node *n, sc_index **indices, size_t n_indices, const char *body,
                         const char *routing, const char *preference, uint32_t size,
                         int64_t keep_alive_ms, sc_scroll **out) SC_MUST_USE;
/* As sc_scroll_open, but always pinning this node's own copies, clustered or not (NULL for a
 * shard not open here): work that runs on a node's own shards (the by-query APIs). */
sc_status sc_scroll_open_local(sc_node *n, sc_index **indices, size_t n_indices,
                               int64_t keep_alive_ms, sc_scroll **out) SC_MUST_USE;
/* Clustered data node: opens a context pinning the n_targets shards given by (index_i, shard,
 * pin_ix) of indices (references taken), returned acquired. pit: shared by searches. */
sc_status sc_scroll_open_shards(sc_node *n, sc_index **indices, size_t n_indices,
                                const uint32_t *index_i, const uint32_t *shard,
                                const uint32_t *pin_ix, size_t n_targets, bool pit,
                                int64_t keep_alive_ms, sc_scroll **out) SC_MUST_USE;
/* The id of this node's context number seq (cap >= 96). */
void sc_scroll_id_of(sc_node *n, uint64_t seq, char *buf, size_t cap);
/* Frees this node's contexts: by id, or (id NULL) every one when scrolls_only is false, every
 * scroll (not the points in time) when true. Returns how many; *n_shards (may be NULL) gets
 * the shards they pinned for a clustered data node's contexts. */
size_t sc_scroll_clear_ex(sc_node *n, const char *id, bool scrolls_only, size_t *n_shards);
/* Finds a live context by id, renews its keep-alive (when keep_alive_ms > 0) and acquires it
 * for one page; NULL when unknown, expired or (unless shared) busy. shared = a point in time,
 * which any number of searches may use at once. */
sc_scroll *sc_scroll_acquire(sc_node *n, const char *id, int64_t keep_alive_ms, bool shared);
void sc_scroll_release(sc_node *n, sc_scroll *s);
/* Frees a context by id (or all when id is NULL); returns how many were freed. */
size_t sc_scroll_clear(sc_node *n, const char *id);
/* Number of open contexts (not counting expired ones not yet reaped). */
size_t sc_scroll_count(sc_node *n);

#endif
