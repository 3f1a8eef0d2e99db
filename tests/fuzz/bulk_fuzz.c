/* libFuzzer target for the _bulk NDJSON parser (src/api/bulk_parse.c): the input is a bulk
 * body, split into lines as the handler does; every action line is parsed (ids and routing must
 * come back as whole byte strings, index names without NUL) and every source line is parsed as
 * JSON the way the handler validates documents. No node: nothing is written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/bulk_parse.h"
#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_arena arena;
    sc_arena_init(&arena, 16u << 20);
    sc_slice rest = sc_slice_make(data, size);
    size_t lineno = 0;
    char err[512];
    while (rest.len) {
        size_t before = rest.len;
        sc_slice line = sc_bulk_next_line(&rest);
        lineno++;
        if (rest.len >= before && before)
            abort(); /* no progress */
        if (line.len > before || (line.len && line.ptr < data) || line.ptr + line.len > data + size)
            abort();
        if (sc_bulk_blank(line))
            continue;
        sc_bulk_action a;
        sc_status st = sc_bulk_parse_action(line, lineno, &arena, &a, err, sizeof err);
        if (st == SC_EPARSE) {
            if (!memchr(err, '\0', sizeof err))
                abort();
            break; /* the whole request fails, as in the handler */
        }
        if (st != SC_OK)
            break;
        if (!a.op_name || a.op > SC_BULK_DELETE)
            abort();
        if (a.id.len && !a.id.ptr)
            abort();
        if (a.routing.len && !a.routing.ptr)
            abort();
        if (a.item_error_type && !a.item_error_reason)
            abort();
        if (a.op != SC_BULK_DELETE && rest.len) {
            sc_slice src = sc_bulk_next_line(&rest);
            lineno++;
            json_t *doc = NULL;
            sc_json_limits lim = {.max_bytes = src.len + 1, .max_depth = 512};
            if (sc_json_parse(src, &lim, &doc, NULL) == SC_OK)
                json_decref(doc);
        }
    }
    sc_arena_fini(&arena);
    return 0;
}
