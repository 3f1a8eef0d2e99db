/* libFuzzer target for the scanner that takes each hit's raw _source out of a search page's
 * text for the clustered reindex and by-query jobs (api/byquery_internal.h): the first byte is
 * the number of hits expected, the rest the text. It must never crash or read out of bounds;
 * an accepted text's spans lie inside it and each starts with '{', '[', '"' or a scalar byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/byquery_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n = data[0];
    /* a copy of exactly the text, so that a read past its end is seen by ASan */
    uint8_t *text = malloc(size - 1 ? size - 1 : 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    sc_slice spans[256];
    if (sc__byquery_source_spans(text, size - 1, spans, n)) {
        for (size_t i = 0; i < n; i++) {
            if (!spans[i].ptr)
                continue;
            if (spans[i].ptr < text || spans[i].ptr + spans[i].len > text + (size - 1) ||
                !spans[i].len)
                abort();
        }
    }
    free(text);
    return 0;
}
