/* Private to the search encodings: search_wire.c's node query request and response call the
 * query-phase features codec (search_wire_fx.c) for the fields appended after their original
 * ones. */
#ifndef SC_CLUSTER_SEARCH_WIRE_INTERNAL_H
#define SC_CLUSTER_SEARCH_WIRE_INTERNAL_H

#include "cluster/search_wire.h"

/* Appends fx (nothing when it holds no feature). */
void sc__wire_put_features(sc_wire_buf *b, const sc_wire_query_features *fx);
/* Reads the features if any input is left (else all zero); errors go to r->st. */
void sc__wire_get_features(sc_wire_reader *r, sc_arena *a, sc_wire_query_features *fx);
/* The answer's collapse keys (q->collapse) and shard profiles, with search_wire.c's sort-key
 * codec; nothing when there are none. */
void sc__wire_put_resp_features(sc_wire_buf *b, const sc_wire_node_query_resp *q,
                                void (*put_key)(sc_wire_buf *, const sc_sort_key *));
void sc__wire_get_resp_features(sc_wire_reader *r, sc_arena *a, sc_wire_node_query_resp *q,
                                void (*get_key)(sc_wire_reader *, sc_sort_key *));

#endif
