/* Segment merging: N segments (with optional live-docs bitsets) become one new segment with
 * deleted docs dropped and ids remapped in input order; postings, positions, norms, doc values
 * and stored fields are kept for every live doc. Plus a merge policy behind a small
 * function-pointer interface (a tiered policy is provided) and force-merge planning. */
#ifndef SC_INDEX_MERGE_H
#define SC_INDEX_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/bitset.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/builder.h"
#include "index/segment.h"

typedef struct sc_merge_input {
    sc_segment *seg;       /* borrowed */
    const sc_bitset *live; /* NULL: every doc is live */
} sc_merge_input;

/* Merges inputs (in order) into `<dir>/<name>.seg`. Live doc j of input i gets the id
 * (live docs of inputs before i) + (rank of j among input i's live docs). Fills *info (may be
 * NULL). SC_EIO, SC_ENOMEM, SC_ECORRUPT (an input's data), SC_EINVAL (field kind clash).
 * Streams (merge_stream.c) when every input with docs has `_id` doc values: memory is then
 * O(n_docs) bytes for the field being merged (norms, doc values, points: at most ~30 bytes per
 * doc; dense vectors: 12 bytes per vector plus the HNSW graph being built, about 24 + 8 m
 * bytes per vector, the vectors themselves read in place from the inputs' mappings), its term
 * dictionary and one term's encoded postings (the last two spilled past the default limit, see
 * sc_merge_options), and the inputs' pages are dropped from RSS after each field. Otherwise
 * the merged segment is rebuilt in a builder (memory proportional to the merged segment). */
sc_status sc_segment_merge(const sc_merge_input *in, size_t n, const char *dir, const char *name,
                           sc_segment_write_info *info) SC_MUST_USE;

/* index.merge.memory's default: what a streaming merge may hold before it spills. */
#define SC_MERGE_MEMORY_DEFAULT ((uint64_t)256 << 20)

/* How a merge may use memory, and what it did. */
typedef struct sc_merge_options {
    /* The streaming merge's memory limit (index.merge.memory); 0 -> SC_MERGE_MEMORY_DEFAULT.
     * Per-doc tables stay in memory whatever the limit (the doc map, 4 bytes per input doc;
     * one field's norms, 1 byte per doc; the sorted-set ordinal maps, 4 bytes per input
     * ordinal; one numeric field's points, 12-16 bytes per point); what is left is shared by
     * the buffers that grow with the data (one field's term dictionary, one term's encoded
     * postings and positions), each spilled to a temporary file in `dir` when it passes its
     * share (at least 1 KiB). */
    uint64_t memory_bytes;
    uint64_t spilled_bytes; /* out: bytes written to spill files (0 when nothing spilled) */
} sc_merge_options;

/* sc_segment_merge with options (may be NULL: defaults). Spill files are
 * `<dir>/.<name>.<part>.spill.tmp`, removed before returning; only the streaming merge
 * spills (the rebuilding one ignores memory_bytes). */
sc_status sc_segment_merge_opts(const sc_merge_input *in, size_t n, const char *dir,
                                const char *name, sc_merge_options *opts,
                                sc_segment_write_info *info) SC_MUST_USE;

/* One segment as a merge policy sees it. */
typedef struct sc_merge_candidate {
    uint64_t size_bytes;
    uint32_t n_docs;
    uint32_t n_deleted;
    int merging; /* nonzero: already in a running merge, do not pick */
} sc_merge_candidate;

/* A set of merges: each is a list of candidate indexes. */
typedef struct sc_merge_spec {
    SC_VEC(size_t) idx;    /* all merges' indexes, concatenated */
    SC_VEC(size_t) starts; /* merge k is idx[starts[k] .. starts[k+1]) ; len = n_merges + 1 */
} sc_merge_spec;

void sc_merge_spec_init(sc_merge_spec *s);
void sc_merge_spec_fini(sc_merge_spec *s);
static inline size_t sc_merge_spec_n_merges(const sc_merge_spec *s)
{
    return s->starts.len ? s->starts.len - 1 : 0;
}

typedef struct sc_merge_policy sc_merge_policy;
struct sc_merge_policy {
    /* Fills out (initialized, empty) with the merges to run now over segs[0..n). Pre: no
     * index appears twice; post: merges are disjoint and skip `merging` candidates. */
    sc_status (*find_merges)(const sc_merge_policy *p, const sc_merge_candidate *segs, size_t n,
                             sc_merge_spec *out);
    void *ctx;
};

typedef struct sc_tiered_merge_config {
    uint32_t segs_per_tier;       /* default 10 */
    uint32_t max_merge_at_once;   /* default 10 */
    uint64_t max_segment_bytes;   /* default 5 GiB */
    uint64_t floor_segment_bytes; /* default 2 MiB */
    double deletes_pct_allowed;   /* default 33 */
} sc_tiered_merge_config;

/* Default tiered settings (as Elasticsearch's defaults). */
sc_tiered_merge_config sc_tiered_merge_defaults(void);

/* A tiered merge policy using *cfg (borrowed; must outlive the policy). */
sc_merge_policy sc_tiered_merge_policy(const sc_tiered_merge_config *cfg);

/* Plans a force-merge of the non-merging candidates down to at most max_segments (>= 1):
 * one merge of the smallest segments as needed (or all into one when max_segments == 1). */
sc_status sc_merge_find_forced(const sc_merge_candidate *segs, size_t n, size_t max_segments,
                               sc_merge_spec *out) SC_MUST_USE;

#endif
