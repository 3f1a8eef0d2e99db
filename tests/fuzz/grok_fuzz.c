/* libFuzzer target for grok and dissect patterns (src/api/ingest_grok.c): the first line of the
 * input is a pattern, the rest the text to match. The pattern is compiled as a grok pattern
 * (references expanded, Oniguruma constructs translated to POSIX) and as a dissect pattern;
 * compiling must succeed or fail cleanly with a reason, and matching must not crash or write
 * anything but objects into the document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *nl = strchr(buf, '\n');
    const char *text = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    json_t *patterns = json_pack("[s]", buf);
    json_t *defs = json_pack("{s:s}", "CUSTOM", "[a-z]+\\d?");
    sc_ingest_error err = {0};
    if (patterns) {
        sc__grok *g = NULL;
        sc_status st = sc__grok_compile(patterns, defs, &g, &err);
        if (st == SC_EINVAL && (!err.type || !err.reason[0]))
            abort();
        if (st == SC_OK) {
            sc_ingest_doc doc = {.source = json_object(), .meta = json_object()};
            (void)sc__grok_match(g, text, &doc);
            if (!json_is_object(doc.source))
                abort();
            json_decref(doc.source);
            json_decref(doc.meta);
            sc__grok_free(g);
        }
    }
    sc__dissect *d = NULL;
    if (sc__dissect_compile(buf, ",", &d, &err) == SC_OK) {
        sc_ingest_doc doc = {.source = json_object(), .meta = json_object()};
        (void)sc__dissect_match(d, text, &doc);
        json_decref(doc.source);
        json_decref(doc.meta);
        sc__dissect_free(d);
    }
    json_decref(patterns);
    json_decref(defs);
    free(buf);
    return 0;
}
