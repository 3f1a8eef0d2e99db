/* Completion field terms (mapping.h, "completion fields"): the analyzed key, the weight and the
 * input packed into one term. */
#include <string.h>

#include "mapping/mapping.h"
#include "search/suggest.h"

sc_status sc_mapping_completion_key(const sc_mapping_field *f, const sc_index_token *tokens,
                                    size_t n, sc_arena *arena, sc_slice *key)
{
    size_t len = 0;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        len += tokens[i].term.len + 1;
        if (f->preserve_position_increments && i && tokens[i].position > prev + 1)
            len += tokens[i].position - prev - 1;
        else if (f->preserve_position_increments && !i)
            len += tokens[i].position;
        prev = tokens[i].position;
    }
    uint8_t *p = sc_arena_alloc(arena, len ? len : 1);
    if (!p)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    size_t o = 0;
    prev = 0;
    for (size_t i = 0; i < n; i++) {
        /* separators between tokens; holes (removed stop words) add one each */
        uint32_t gap = 0;
        if (f->preserve_position_increments)
            gap = i ? (tokens[i].position > prev + 1 ? tokens[i].position - prev - 1 : 0)
                    : tokens[i].position;
        if (i && tokens[i].position == prev)
            continue; /* stacked token (synonym): the first one stands */
        if (f->preserve_separators) {
            if (i)
                p[o++] = SC_MAPPING_COMPLETION_SEP;
            for (uint32_t g = 0; g < gap; g++)
                p[o++] = SC_MAPPING_COMPLETION_SEP;
        }
        memcpy(p + o, tokens[i].term.ptr, tokens[i].term.len);
        o += tokens[i].term.len;
        prev = tokens[i].position;
    }
    *key = sc_slice_make(p, o);
    return SC_OK;
}

bool sc_mapping_completion_decode(sc_slice term, sc_slice *key, uint32_t *weight, sc_slice *text)
{
    return sc_completion_decode(term, key, weight, text);
}
