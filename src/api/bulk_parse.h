/* The _bulk NDJSON parser: splitting the body into lines and reading one action/metadata line
 * ({"index":{"_index":..,"_id":..}}) into a typed sc_bulk_action. Separate from the handler
 * (api_bulk.c) so that the fuzz target and tests drive it without a node. Ids and routing
 * values are byte strings (they may hold NUL); index names and other strings may not. */
#ifndef SC_API_BULK_PARSE_H
#define SC_API_BULK_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"

typedef enum sc_bulk_op {
    SC_BULK_INDEX,
    SC_BULK_CREATE,
    SC_BULK_UPDATE,
    SC_BULK_DELETE,
} sc_bulk_op;

typedef struct sc_bulk_action {
    sc_bulk_op op;
    const char *op_name; /* the response key: "index", "create", "update", "delete" */
    const char *index;   /* "_index" (arena, NUL-free) or NULL when absent */
    sc_slice id;         /* "_id" (arena copy; integers as their decimal text); ptr NULL = none */
    sc_slice routing;    /* "routing" / "_routing" (arena copy), ptr NULL = none */
    const char *pipeline; /* "pipeline" (arena) or NULL */
    int64_t if_seq_no;    /* -2 when absent */
    int64_t if_primary_term;
    /* An error of this item alone (the rest of the request goes on): type and reason are
     * static or arena strings; NULL when the action is good. */
    const char *item_error_type;
    const char *item_error_reason;
    /* Keys beside the action object ({"index":{..},"attempts":0}): ignored with a deprecation
     * warning, as Elasticsearch 8 does. The first one's name (arena), NULL when none. */
    const char *extra_key;
} sc_bulk_action;

/* The next line of *rest (without its '\n'; trailing '\r' and spaces dropped); advances rest
 * past it. */
sc_slice sc_bulk_next_line(sc_slice *rest);

/* True when the line holds only blanks. */
bool sc_bulk_blank(sc_slice line);

/* Reads an action/metadata line (lineno is 1-based, for messages) into *out; strings are
 * copied into a. SC_EPARSE: the whole request must fail with 400 illegal_argument_exception
 * and the reason written into err (errcap bytes); SC_ENOMEM: the arena is over budget.
 * Problems of one item (an index name holding NUL, a bad op_type) are SC_OK with
 * out->item_error_type set. O(line length). Thread-safe. */
sc_status sc_bulk_parse_action(sc_slice line, size_t lineno, sc_arena *a, sc_bulk_action *out,
                               char *err, size_t errcap) SC_MUST_USE;

/* The deprecation warning for an action line with extra keys (for the Warning header). */
#define SC_BULK_EXTRA_KEYS_WARNING                                                                 \
    "A bulk action object contained multiple keys. Additional keys are currently ignored but "     \
    "will be rejected in a future version."

#endif
