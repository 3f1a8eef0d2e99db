/* The by-query job (api_byquery.c) shared with its clustered runner (byquery_cluster_job.c):
 * the request's options, the progress counters GET /_tasks reports and, while sliced, the
 * slices. Private to src/api. */
#ifndef SC_API_BYQUERY_INTERNAL_H
#define SC_API_BYQUERY_INTERNAL_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/rest.h"
#include "base/slice.h"
#include "cluster/node.h"
#include "cluster/tasks.h"

typedef enum job_kind {
    JOB_REINDEX,
    JOB_DELETE,
    JOB_UPDATE
} job_kind;

typedef struct job {
    job_kind kind;
    sc_node *node;
    char *source;     /* index expression */
    json_t *query;    /* or NULL = match_all */
    int64_t max_docs; /* -1 = all */
    uint32_t batch;
    bool proceed; /* conflicts: proceed */
    char *dest;   /* reindex */
    bool dest_create;
    char *pipeline;
    json_t *source_fields; /* reindex source._source: the fields to copy (NULL = all) */
    bool refresh;
    double rps;    /* requests_per_second: documents per second, <= 0 = unthrottled */
    sc_task *task; /* while running */
    _Atomic int64_t total, created, updated, deleted, batches, conflicts, noops, throttled_ms;
    json_t *failures; /* array; guarded by being written only by the running thread */
    int64_t start_ms;
    /* Slicing. The request: n_slices (1 = none, 0 = auto) and, while sliced, the sub-jobs. */
    uint32_t n_slices;
    struct job *slices;
    _Atomic uint32_t n_sub; /* entries of slices */
    /* A slice: its number, the shards it reads (per source index, NULL = all) and the
     * documents it keeps (hash(_id) % hash_mod == hash_rem; hash_mod <= 1: all). */
    int slice_id;
    uint64_t **only_shards;
    uint32_t hash_mod, hash_rem;
} job;

/* Waits until `done` documents fit j's requests_per_second budget (api_byquery.c). */
void sc__byquery_throttle(job *j, uint64_t done);
/* Appends a failure of document `id` of `index` to j->failures, as Elasticsearch lists it. */
void sc__byquery_add_failure(job *j, const char *index, const char *id, int status,
                             const char *type, const char *reason);

/* Slice k of n of j: j's options (borrowed), max_docs and requests_per_second split, an
 * empty failures array. false on ENOMEM. */
bool sc__byquery_slice_init(job *sl, const job *j, uint32_t k, uint32_t n);

/* A search answer's text (as this node's search handler writes it): spans[i] = the raw
 * `_source` value of hit i of hits.hits (n hits; ptr NULL for a hit without one), borrowing
 * text. false when the text does not hold exactly n hits or is malformed; never reads past
 * text + len (byquery_cluster_job.c; fuzzed by tests/fuzz/srcspans_fuzz.c). */
bool sc__byquery_source_spans(const uint8_t *text, size_t len, sc_slice *spans, size_t n);

/* Clustered, not forwarded (byquery_cluster_job.c): runs j on this node through the cluster,
 * reading the source with a clustered scroll (sliced with j->n_slices != 1) and writing each
 * page with a _bulk request routed to the primaries, wherever they are; j->failures is an
 * empty array and j->start_ms set. Returns 1 when done (or cancelled), 0 when a failure stopped
 * it (listed in j->failures), -1 after writing an error found before any write into resp. */
int sc__byquery_run_cluster(job *j, sc_rest_req *req, sc_rest_resp *resp);

#endif
