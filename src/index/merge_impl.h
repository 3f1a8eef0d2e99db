/* Private: the two ways merge.c can merge, shared between merge.c and merge_stream.c. */
#ifndef SC_INDEX_MERGE_IMPL_H
#define SC_INDEX_MERGE_IMPL_H

#include "index/merge.h"

/* Whether the streaming merge handles these inputs: every input with docs has an `_id` keyword
 * field with doc values for all of them (older segments filled it only at merge time, which the
 * rebuilding merge does). */
bool sc__merge_can_stream(const sc_merge_input *in, size_t n);

/* The streaming merge (merge_stream.c); same contract as sc_segment_merge_opts (opts not
 * NULL). */
sc_status sc__segment_merge_stream(const sc_merge_input *in, size_t n, const char *dir,
                                   const char *name, sc_merge_options *opts,
                                   sc_segment_write_info *info) SC_MUST_USE;

/* The rebuilding merge (merge.c): the live docs re-added to a builder, which writes the
 * segment; for inputs the streaming merge does not handle, and for tests comparing the two. */
sc_status sc__segment_merge_rebuild(const sc_merge_input *in, size_t n, const char *dir,
                                    const char *name, sc_segment_write_info *info) SC_MUST_USE;

#endif
