/* can_match: whether a query may match any document of a shard, decided from the shard's
 * per-segment field bounds alone (no postings read), so the coordinator's pre-filter can skip
 * shards that cannot contribute (Elasticsearch's can_match phase). Conservative: "false" is a
 * proof that nothing matches; anything not understood answers "may match". */
#ifndef SC_SEARCH_CAN_MATCH_H
#define SC_SEARCH_CAN_MATCH_H

#include <stdbool.h>

#include "search/query.h"
#include "search/searcher.h"

/* False when no document of the searcher can match q: a required numeric range (a range, or a
 * numeric term/terms) is disjoint from the field's [min, max] of every segment's points (a
 * segment without the field has no value for it; a shard with no segment holds no value),
 * through bool must / filter clauses, a bool whose required should clauses all cannot match,
 * constant_score and match_none. Doc-values-only fields and every other kind answer true.
 * O(required range clauses x segments); reads only the points' headers. Thread-safe. */
bool sc_query_can_match(const sc_searcher *s, const sc_query *q);

/* The bounds of a numeric field over the searcher's points: SC_OK with *min <= *max when some
 * doc has a value, SC_ENOTFOUND when no doc has one, SC_EUNSUPPORTED when a segment holds the
 * field without points (doc values only: not known). Reads only the points' headers.
 * O(segments). Thread-safe. */
sc_status sc_searcher_numeric_bounds(const sc_searcher *s, sc_slice field, int64_t *min,
                                     int64_t *max) SC_MUST_USE;

#endif
