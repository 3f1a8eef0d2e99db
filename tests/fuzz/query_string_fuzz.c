/* libFuzzer target: the query_string parser (src/search/query_parser*.c) on arbitrary bytes,
 * with the standard analyzer and both default operators; the tree it builds is printed.
 * Must never crash, leak or hang; errors are fine. Corpus: tests/fuzz/corpus/query_string. */
#include <stddef.h>
#include <stdint.h>

#include "search/query_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sc_analyzer *an;
    if (!an && sc_analyzer_builtin("standard", &an) != SC_OK)
        return 0;
    sc_query_parser_options o;
    sc_query_parser_options_init(&o);
    o.default_field = sc_slice_cstr("body");
    o.analyzer = an;
    o.default_operator = size && (data[0] & 1) ? SC_OCCUR_MUST : SC_OCCUR_SHOULD;
    sc_arena a;
    sc_arena_init(&a, 1u << 24);
    sc_query *q;
    sc_query_parse_error err;
    if (sc_query_string_parse(sc_slice_make(data, size), &o, &a, &q, &err) == SC_OK) {
        char buf[512];
        (void)sc_query_to_string(q, buf, sizeof buf);
    }
    sc_arena_fini(&a);
    return 0;
}
