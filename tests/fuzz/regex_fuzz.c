/* libFuzzer target: Lucene RegExp and wildcard compilation (src/search/automaton*.c) on arbitrary
 * bytes with all flags, a small state limit and a short run of the DFA, plus a fuzzy automaton
 * of the first bytes. Must never crash, leak or hang (the state and work limits bound every
 * pattern). Corpus: tests/fuzz/corpus/regex. */
#include <stddef.h>
#include <stdint.h>

#include "search/automaton.h"
#include "search/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    sc_arena a;
    sc_arena_init(&a, 1u << 26);
    sc_dfa d;
    sc_slice in = sc_slice_make(data, size);
    if (sc_automaton_regexp(in, SC_REGEXP_ALL, 2000, &a, &d, NULL) == SC_OK)
        (void)sc_automaton_run(&d, sc_slice_cstr("abcabc"));
    if (sc_automaton_wildcard(in, 2000, &a, &d, NULL) == SC_OK)
        (void)sc_automaton_run(&d, in);
    sc_slice head = sc_slice_sub(in, 0, 12);
    if (sc_automaton_fuzzy(head, size % 3, size % 2, true, &a, &d, NULL) == SC_OK)
        (void)sc_automaton_run(&d, in);
    sc_arena_fini(&a);
    return 0;
}
