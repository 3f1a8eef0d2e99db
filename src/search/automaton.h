/* Compiles multi-term query patterns into the byte DFA the term dictionary intersects
 * (index/dfa.h): Lucene RegExp syntax, Lucene wildcards, prefixes and Levenshtein automata for
 * fuzzy queries. Patterns are read as code points (UTF-8); the automata run over the UTF-8
 * bytes of terms, so code point classes are compiled to UTF-8 byte sequences. Construction is
 * a Thompson NFA, subset construction with a state limit (max_determinized_states, Lucene's
 * default 10,000: exceeding it is SC_ELIMIT, so a pathological pattern fails fast), and a
 * final pruning that maps every state that cannot reach acceptance to SC_DFA_DEAD, so the
 * term dictionary skips whole ranges. All functions are thread-safe (no shared state). */
#ifndef SC_SEARCH_AUTOMATON_H
#define SC_SEARCH_AUTOMATON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/dfa.h"

/* Why a pattern was rejected: a message (naming the limit for SC_ELIMIT) and the byte offset
 * in the pattern where the problem was found (0 when not positional). */
typedef struct sc_automaton_error {
    char msg[192];
    size_t offset;
} sc_automaton_error;

/* Compiles a Lucene RegExp (whole-term match) with SC_REGEXP_* flags (search/query.h) into
 * *out, whose tables are allocated in `a`. Syntax (Lucene 8.7 org.apache.lucene.util.automaton
 * .RegExp): `|` union, concatenation, `&` intersection, `*` `+` `?` `{n}` `{n,}` `{n,m}`, `~`
 * complement, `[...]` and `[^...]` classes with ranges, `.` any char, `#` empty language, `@`
 * any string, `"..."` literal, `()` empty string, `<n-m>` numeric interval, `\` escapes the
 * next char; any other char is literal. Errors: SC_EPARSE (syntax, err->offset set),
 * SC_EUNSUPPORTED (`<name>` named automata), SC_ELIMIT (more than max_states DFA states, or
 * an NFA past 1M states, or nesting past 1,000; the message names the limit), SC_ENOMEM.
 * err may be NULL. Worst case O(max_states * 256 * nfa size) time. */
sc_status sc_automaton_regexp(sc_slice pattern, uint32_t flags, uint32_t max_states, sc_arena *a,
                              sc_dfa *out, sc_automaton_error *err) SC_MUST_USE;

/* Lucene WildcardQuery: `*` any string, `?` any one code point, `\x` the literal x (a trailing
 * `\` is literal). Errors as sc_automaton_regexp. */
sc_status sc_automaton_wildcard(sc_slice pattern, uint32_t max_states, sc_arena *a, sc_dfa *out,
                                sc_automaton_error *err) SC_MUST_USE;

/* Terms between lo and hi in byte order (Lucene's TermRangeQuery): lo NULL = unbounded
 * below, hi NULL = unbounded above; incl_* include the bound itself. SC_ENOMEM only. */
sc_status sc_automaton_term_range(const sc_slice *lo, bool incl_lo, const sc_slice *hi,
                                  bool incl_hi, sc_arena *a, sc_dfa *out) SC_MUST_USE;

/* Terms starting with the bytes of `prefix`. SC_ENOMEM only. */
sc_status sc_automaton_prefix(sc_slice prefix, sc_arena *a, sc_dfa *out) SC_MUST_USE;

/* Terms within max_edits (0..2) Levenshtein edits of `term` counted in code points (insert,
 * delete, substitute, and with `transpositions` an adjacent swap as one edit: Lucene's
 * Damerau variant), whose first prefix_length code points equal term's exactly.
 * SC_EINVAL for max_edits > 2. Errors otherwise as sc_automaton_regexp. */
sc_status sc_automaton_fuzzy(sc_slice term, uint32_t max_edits, uint32_t prefix_length,
                             bool transpositions, sc_arena *a, sc_dfa *out, sc_automaton_error *err)
    SC_MUST_USE;

/* Runs the DFA over `s`: true when accepted. O(len). */
bool sc_automaton_run(const sc_dfa *d, sc_slice s);

/* The (restricted) Damerau-Levenshtein distance between a and b in code points, the measure
 * the fuzzy automaton accepts; stops early and returns limit+1 when it exceeds `limit`.
 * Strings longer than 255 code points return limit+1 unless equal. */
uint32_t sc_automaton_edit_distance(sc_slice a, sc_slice b, bool transpositions, uint32_t limit);

/* Number of code points in s (invalid bytes count one each). */
size_t sc_automaton_cp_len(sc_slice s);

#endif
