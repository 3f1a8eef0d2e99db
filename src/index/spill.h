/* Private: a temporary spill file of the streaming merge (merge_stream.c). A buffer that would
 * grow past the merge's memory limit is appended to a spill file in the shard folder and
 * emptied; at the end the file is copied into the segment being written. Spill files are named
 * `.<segment>.<tag>.spill.tmp`, so a crash's leftovers are removed at the next shard open with
 * the other temporary files (src/shard/shard.c). */
#ifndef SC_INDEX_SPILL_H
#define SC_INDEX_SPILL_H

#include "index/internal.h"

typedef struct sc__spill {
    int fd; /* -1 until the first spill */
    char path[1024];
    uint64_t len;    /* bytes in the file (since the last _copy) */
    uint64_t *total; /* every byte ever spilled is added here (may be NULL) */
    sc_status st;    /* sticky */
} sc__spill;

/* Names the file `<dir>/.<segment>.<tag>.spill.tmp`; creates nothing yet. total may be NULL. */
void sc__spill_init(sc__spill *s, const char *dir, const char *segment, const char *tag,
                    uint64_t *total);
/* Appends b's bytes to the file (created on first use) and empties b (keeping its capacity,
 * which the caller bounds by spilling before b outgrows its share). No-op after a failure. */
void sc__spill_buf(sc__spill *s, sc_buf *b);
/* Copies the file's bytes to o, then empties the file for reuse. SC_EIO on a read failure
 * (also left in o->st). */
void sc__spill_copy(sc__spill *s, sc__out *o);
/* Closes and removes the file. */
void sc__spill_fini(sc__spill *s);

#endif
