/* Term dictionary of one field of a segment: exact and ceiling seeks, ordered iteration and
 * intersection with an sc_dfa that skips every range of terms whose prefix the automaton
 * rejects. Terms are sorted bytewise in front-coded blocks of 32 with a block index (binary
 * searched), see docs/format.md. The iterator is caller-owned; it allocates only to grow its
 * term buffer (reused across calls). Many iterators may run concurrently on one segment. */
#ifndef SC_INDEX_TERMS_H
#define SC_INDEX_TERMS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"
#include "index/dfa.h"
#include "index/segment.h"

/* Statistics and location of one term's postings. Pass it to sc_postings_reset. */
typedef struct sc_term_info {
    uint32_t doc_freq;        /* docs containing the term */
    uint64_t total_term_freq; /* occurrences (TEXT), = doc_freq for other kinds */
    uint64_t ord;             /* rank of the term within the field, 0-based */
    /* private */
    uint64_t postings_off;  /* absolute file offset of the term's skip table */
    uint64_t positions_off; /* absolute file offset of the term's positions, if any */
} sc_term_info;

typedef struct sc_terms_iter {
    /* private */
    const sc_segment *seg;
    const sc_field_info *field;
    const uint8_t *tdata; /* field's term blocks */
    uint64_t tdata_len;
    const uint8_t *tindex; /* n_blocks u32 */
    uint64_t n_blocks;
    uint64_t block;     /* current block */
    uint64_t pos;       /* offset of the next entry in tdata */
    uint64_t block_end; /* end offset of the current block */
    uint32_t in_block;  /* entries read in current block */
    bool positioned;    /* a current term exists */
    bool at_end;
    sc_buf term; /* current term bytes */
    sc_term_info info;
    sc_status status; /* sticky */
    /* DFA intersection state */
    const sc_dfa *dfa;
    SC_VEC(uint32_t) states; /* states[i] = state after term[0..i) */
    size_t valid_states;     /* states[0..valid_states] are valid for the current term */
    sc_buf seek;             /* scratch for the next seek target */
    /* entries [lazy_from, in_block) of the block were read by the intersection without their
     * statistics (lazy_off: where those start, from the block start); info folds them in
     * when a term matches */
    uint32_t lazy_from;
    uint32_t lazy_off[32];
} sc_terms_iter;

/* Prepares `it` over field `f` of `seg` (f from sc_segment_field). `it` may be uninitialized
 * memory; an iterator used before must be fini'd first (init does not free its buffers). To
 * walk another field or restart, prefer a seek or sc_terms_intersect_start on the same
 * iterator, which keep the buffers. Allocates nothing; the iterator is positioned before the
 * first term. Returns SC_OK (always, for symmetry). */
sc_status sc_terms_iter_init(sc_terms_iter *it, const sc_segment *seg, const sc_field_info *f)
    SC_MUST_USE;
/* Frees the iterator's buffers. Safe on a zeroed struct. */
void sc_terms_iter_fini(sc_terms_iter *it);

/* Moves to the next term in order (the first after init or a seek miss past the end). *has is
 * false at the end. SC_ECORRUPT on bad data. */
sc_status sc_terms_next(sc_terms_iter *it, bool *has) SC_MUST_USE;

/* Positions on `term` if present (*found true); otherwise *found false and the position is
 * unspecified (call a seek again before next). O(log blocks + 32). */
sc_status sc_terms_seek_exact(sc_terms_iter *it, sc_slice term, bool *found) SC_MUST_USE;

/* Positions on the smallest term >= `term`. *has false when there is none (at end).
 * *exact (may be NULL) tells whether it equals `term`. */
sc_status sc_terms_seek_ceil(sc_terms_iter *it, sc_slice term, bool *has, bool *exact) SC_MUST_USE;

/* The current term (valid until the next move) and its info. */
sc_slice sc_terms_term(const sc_terms_iter *it);
const sc_term_info *sc_terms_info(const sc_terms_iter *it);

/* Starts a DFA intersection: subsequent sc_terms_next_match calls return, in order, exactly the
 * terms the automaton accepts. Ranges of terms whose prefix reaches SC_DFA_DEAD are skipped by
 * seeking past them (O(log blocks) each), not scanned. `dfa` is borrowed until the next
 * intersect_start or fini. Allocates only to grow its state stack. */
sc_status sc_terms_intersect_start(sc_terms_iter *it, const sc_dfa *dfa) SC_MUST_USE;
sc_status sc_terms_next_match(sc_terms_iter *it, bool *has) SC_MUST_USE;

/* Stateless exact lookup (no allocation): *found and *out. Thread-safe. */
sc_status sc_terms_lookup(const sc_segment *seg, const sc_field_info *f, sc_slice term,
                          sc_term_info *out, bool *found) SC_MUST_USE;

#endif
