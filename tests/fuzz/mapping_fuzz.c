/* libFuzzer target for src/mapping: the first byte picks a mode.
 *  'M': the rest is a `mappings` JSON body: build it; if accepted, serialize it and build
 *       again from that JSON (must be accepted and serialize identically), and merge it into
 *       a fixed mapping (any result but a crash is fine).
 *  else: the rest is a document _source: parse it against a fixed mapping with many types
 *       (dynamic true); if a dynamic update comes back, parsing the same document with the
 *       updated mapping must succeed without another update. Also encodes the document's
 *       top-level values as query terms and ranges for every mapped field. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fixed_json =
    "{\"properties\":{\"t\":{\"type\":\"text\",\"fields\":{\"k\":{\"type\":\"keyword\","
    "\"ignore_above\":8}}},\"k\":{\"type\":\"keyword\",\"normalizer\":\"lowercase\","
    "\"null_value\":\"N\",\"copy_to\":\"t\"},\"l\":{\"type\":\"long\"},\"i\":{\"type\":"
    "\"integer\",\"ignore_malformed\":true},\"s\":{\"type\":\"short\"},\"b\":{\"type\":\"byte\"},"
    "\"d\":{\"type\":\"double\"},\"f\":{\"type\":\"float\"},\"h\":{\"type\":\"half_float\"},"
    "\"sf\":{\"type\":\"scaled_float\",\"scaling_factor\":100},\"u\":{\"type\":"
    "\"unsigned_long\"},\"bo\":{\"type\":\"boolean\"},\"dt\":{\"type\":\"date\",\"format\":"
    "\"yyyy-MM-dd HH:mm:ss||strict_date_optional_time||epoch_millis\"},\"ip\":{\"type\":\"ip\"},"
    "\"o\":{\"properties\":{\"x\":{\"type\":\"keyword\"},\"st\":{\"dynamic\":\"strict\","
    "\"properties\":{\"y\":{\"type\":\"long\"}}}}},\"off\":{\"enabled\":false},"
    "\"c\":{\"type\":\"completion\",\"max_input_length\":8,\"preserve_separators\":false},"
    "\"ns\":{\"type\":\"nested\",\"properties\":{\"a\":{\"type\":\"keyword\"},"
    "\"v\":{\"type\":\"long\"}}},"
    "\"rf\":{\"type\":\"rank_feature\"},\"rn\":{\"type\":\"rank_feature\","
    "\"positive_score_impact\":false},\"rs\":{\"type\":\"rank_features\"}}}";

static sc_mapping *fixed;

static void init(void)
{
    if (fixed)
        return;
    json_t *j = json_loads(fixed_json, 0, NULL);
    sc_mapping_error err;
    if (!j || sc_mapping_new(j, &fixed, &err) != SC_OK)
        abort();
    json_decref(j);
}

static void mapping_mode(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    if (!j)
        return;
    sc_mapping *m = NULL;
    sc_mapping_error err;
    if (sc_mapping_new(j, &m, &err) == SC_OK) {
        json_t *out = sc_mapping_to_json(m);
        sc_mapping *m2 = NULL;
        if (!out || sc_mapping_new(out, &m2, &err) != SC_OK)
            abort();
        json_t *out2 = sc_mapping_to_json(m2);
        if (!json_equal(out, out2))
            abort();
        sc_mapping *merged = NULL;
        if (sc_mapping_merge(fixed, j, &merged, &err) == SC_OK)
            sc_mapping_unref(merged);
        json_decref(out);
        json_decref(out2);
        sc_mapping_unref(m2);
        sc_mapping_unref(m);
    }
    json_decref(j);
}

static void doc_mode(const uint8_t *data, size_t size)
{
    sc_arena arena;
    sc_arena_init(&arena, 64u << 20);
    sc_index_doc doc;
    sc_mapping *up = NULL;
    sc_mapping_error err;
    sc_slice src = sc_slice_make(data, size);
    sc_status st = sc_mapping_parse_doc(fixed, NULL, sc_slice_cstr("id"), src, &arena, &doc, &up,
                                        &err);
    if (st == SC_OK) {
        for (size_t i = 0; i < doc.n_fields; i++) {
            const sc_index_field *f = &doc.fields[i];
            if (f->kind == SC_FIELD_TEXT && f->n_tokens > 1)
                for (size_t k = 1; k < f->n_tokens; k++)
                    if (f->tokens[k].position < f->tokens[k - 1].position)
                        abort();
        }
        if (up) {
            sc_mapping *up2 = NULL;
            sc_index_doc doc2;
            if (sc_mapping_parse_doc(up, NULL, sc_slice_cstr("id"), src, &arena, &doc2, &up2,
                                     &err) != SC_OK ||
                up2)
                abort();
            json_t *j = sc_mapping_to_json(up);
            sc_mapping *m3 = NULL;
            if (!j || sc_mapping_new(j, &m3, &err) != SC_OK)
                abort();
            json_decref(j);
            sc_mapping_unref(m3);
        }
    }
    /* query-side encoders on the document's values */
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            for (size_t o = 0; o < sc_mapping_n_fields(fixed); o++) {
                const sc_mapping_field *f = sc_mapping_field_at(fixed, (uint32_t)o);
                sc_mapping_value val;
                (void)sc_mapping_encode_value(f, v, NULL, 0, &arena, &val, &err);
                int64_t lo, hi;
                bool empty;
                if (sc_mapping_type_is_numeric(f->type))
                    (void)sc_mapping_encode_range(f, v, v, (k[0] & 1) != 0, (k[0] & 2) != 0, NULL,
                                                  0, 0, &lo, &hi, &empty, &err);
            }
        }
    }
    json_decref(j);
    sc_mapping_unref(up);
    sc_arena_fini(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size == 0)
        return 0;
    if (data[0] == 'M')
        mapping_mode(data + 1, size - 1);
    else
        doc_mode(data + 1, size - 1);
    return 0;
}
