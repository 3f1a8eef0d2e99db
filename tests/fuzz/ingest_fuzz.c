/* libFuzzer target for ingest pipeline definitions (src/api/ingest.c and the processors): the
 * input is parsed as JSON; an object is compiled as a pipeline (compiling must succeed or fail
 * cleanly, with a reason) and, when it compiles, run over a few documents (running must
 * succeed or fail with an error type and reason, and leave the source an object). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const docs[] = {
    "{}",
    "{\"message\":\"127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \\\"GET / HTTP/1.0\\\" 200 5\"}",
    "{\"a\":{\"b\":\"x\"},\"n\":\"42\",\"t\":[\"a\",\"B\"],\"ts\":\"2024-01-02T03:04:05Z\"}",
    "{\"a\":null,\"n\":1.5,\"flag\":true,\"m\":\"k=v x y\"}",
    "{\"m\":\"a=1 b=\\\"q\\\" a=2\",\"j\":\"{\\\"x\\\":[1,{\\\"y\\\":null}]}\"}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *def = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (!def)
        return 0;
    sc_pipeline *p = NULL;
    sc_ingest_error err;
    sc_status st = sc_pipeline_compile(def, &p, &err);
    if (st == SC_EINVAL && (!err.type || !err.reason[0]))
        abort(); /* a refusal always says why */
    if (st == SC_OK) {
        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
            sc_ingest_doc doc = {.source = json_loads(docs[i], 0, &jerr),
                                 .meta = json_pack("{s:s,s:s}", "_index", "i", "_id", "1")};
            st = sc_pipeline_run(p, &doc, &err);
            if (st != SC_OK && st != SC_EINVAL)
                abort();
            if (st == SC_EINVAL && (!err.type || !err.reason[0]))
                abort();
            if (!json_is_object(doc.source))
                abort();
            json_decref(doc.source);
            json_decref(doc.meta);
        }
        sc_pipeline_free(p);
    }
    json_decref(def);
    return 0;
}
