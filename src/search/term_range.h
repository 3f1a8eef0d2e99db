/* The byte automaton of a term range (Lucene's TermRangeQuery, Automata.makeBinaryInterval):
 * accepts exactly the byte strings t with lo < t < hi in unsigned bytewise order (<= when
 * inclusive; a bound may be absent). The term dictionary intersects it like any other
 * automaton (index/dfa.h), seeking over the terms outside the range, so a range on a keyword
 * or ip field is planned as a constant-score multi-term query. */
#ifndef SC_SEARCH_TERM_RANGE_H
#define SC_SEARCH_TERM_RANGE_H

#include <stdbool.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/dfa.h"

/* Longest bound accepted (bytes); longer gives SC_EINVAL. Keeps the table at most about
 * (2 * 4096 + 3) states x (at most 256) byte classes. */
#define SC_TERM_RANGE_MAX_BOUND 4096

/* Builds the automaton in arena a. lo / hi NULL = unbounded. O((|lo| + |hi|) * classes).
 * SC_ENOMEM when the arena is exhausted, SC_EINVAL for a bound past the limit. */
sc_status sc_term_range_dfa(const sc_slice *lo, bool lo_incl, const sc_slice *hi, bool hi_incl,
                            sc_arena *a, sc_dfa *out) SC_MUST_USE;

#endif
